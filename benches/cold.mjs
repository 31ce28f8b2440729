// prepareCompaction on cold caches: the other benchmarks call the same
// session again and again, so its objects (and the package's code and
// buffers) stay cached; a compaction in the agent comes after other work.
// Here 64 MB of other memory is touched before each timed call, and then
// (a third mode) a call on a 40-entry session is made before the timed one,
// which warms the code and buffers of the implementation timed but not the
// session's objects. Real-shaped sessions (benches/sessions.mjs), ours
// beside the reference in one process, alternating; medians.
//
// Usage: node benches/cold.mjs [--line 0.78|1.6] [sizes...]   (default: both lines, 1000 10000)

import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { realSource, realEntries } from './sessions.mjs'

const require = createRequire(import.meta.url)
const { loadReference } = require('../__test__/helpers/reference.js')
const { loadOurs } = require('../__test__/helpers/ours.js')

const args = process.argv.slice(2)
const lineAt = args.indexOf('--line')
const lines = lineAt >= 0 ? [args.splice(lineAt, 2)[1]] : ['0.78', '1.6']
const sizes = args.length > 0 ? args.map(Number) : [1_000, 10_000]

const other = new Float64Array(8 << 20)
let sink = 0
/** Touches every cache line of 64 MB of other memory (`sink` keeps the reads from being dropped). */
function evict() {
  for (let i = 0; i < other.length; i += 8) other[i] += 1
  sink += other[5]
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const fmt = (ms) => (ms >= 1 ? ms.toFixed(2) : ms.toFixed(3))

console.log(`prepareCompaction on cold caches: node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${(await realSource()).label}`)
console.log('')
console.log('| line | entries | caches | reference ms | ours ms | ours / reference | rounds |')
console.log('|---|---:|---|---:|---:|---:|---:|')
const small = await realEntries(40)
for (const line of lines) {
  const ref = await loadReference(line)
  const ours = await loadOurs(line)
  const settings = { ...ref.DEFAULT_COMPACTION_SETTINGS }
  const impls = [(e) => ref.prepareCompaction(e, settings), (e) => ours.prepareCompaction(e, settings)]
  for (const n of sizes) {
    const entries = await realEntries(n)
    for (const f of impls) f(entries)
    const rounds = n >= 10_000 ? 60 : 200
    for (const mode of ['warm', 'cold', 'cold, code warm']) {
      const times = [[], []]
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < 2; k++) {
          const i = (k + r) % 2
          if (mode !== 'warm') evict()
          if (mode === 'cold, code warm') impls[i](small)
          const t = performance.now()
          impls[i](entries)
          times[i].push(performance.now() - t)
        }
      }
      const [r, o] = times.map(median)
      console.log(`| ${line} | ${n.toLocaleString('en-US')} | ${mode} | ${fmt(r)} | ${fmt(o)} | ${(o / r).toFixed(2)} | ${rounds} |`)
    }
  }
}
