// Child-process entry of the real-agent suite, run by the Node 22 binary:
//   node run-flow.mjs <job.json>
// job: { line, variant: 'agent' | 'ours', flow, dir, out }. With 'ours', the
// agent line's compaction files are swapped for our entry before the agent
// loads; the flow's record is written to `out` as JSON.

import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const require = createRequire(import.meta.url)
const { LINES, root } = require('./lines.js')

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const line = LINES.find((l) => l.name === job.line)
if (!line) throw new Error(`no agent line named ${job.line}`)

if (job.variant === 'ours') {
  const target = import.meta.resolve(line.entry)
  const swaps = Object.fromEntries(line.swap.map((file) => [pathToFileURL(join(line.packageDir, file)).href, target]))
  register('./swap-hooks.mjs', import.meta.url, { data: { swaps } })
}

const { FLOWS } = require('./flows.js')
const { runFlow } = await import('./harness.mjs')
const flow = FLOWS.find((f) => f.name === job.flow)
if (!flow) throw new Error(`no flow named ${job.flow}`)
const record = await runFlow({ line, variant: job.variant, flow, dir: job.dir, repoRoot: root })
writeFileSync(job.out, JSON.stringify(record))
