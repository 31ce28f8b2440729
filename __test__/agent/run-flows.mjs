// Child-process entry of the real-agent suite, run by the line's Node 22 binary:
//   node run-flows.mjs <job.json>
// job: { line, variant: 'agent' | 'ours', flows: [name], base, out }. With
// 'ours', the agent line's compaction files are swapped for our entry before
// the agent loads. The flows run one after the other, each in base/<flow>;
// their records (or how a flow failed) are written to `out` as JSON.

import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { runFlow, swapInOurs } from './harness.mjs'

const require = createRequire(import.meta.url)
const { LINES, root } = require('./lines.js')
const { FLOWS } = require('./flows.js')

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const line = LINES.find((l) => l.version === job.line)
if (!line) throw new Error(`no agent version ${job.line} in lines.js`)

if (job.variant === 'ours') await swapInOurs()
const records = {}
for (const name of job.flows) {
  const flow = FLOWS.find((f) => f.name === name)
  try {
    if (!flow) throw new Error(`no flow named ${name}`)
    records[name] = await runFlow({ line, variant: job.variant, flow, dir: join(job.base, name), repoRoot: join(root, '__test__', 'agent', 'work-tree') })
  } catch (err) {
    records[name] = { flow: name, variant: job.variant, failed: String((err && err.stack) || err) }
  }
}
writeFileSync(job.out, JSON.stringify(records))
