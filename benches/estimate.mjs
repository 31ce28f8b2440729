// The context estimates the agent makes before every model request:
// estimateContextTokens (both lines) and 1.6's estimateProjectedContextTokens,
// ours against the reference in one process, on real-shaped sessions
// (benches/sessions.mjs): as recorded (a usage on the last assistant), and
// with every usage zeroed, as a provider that reports none leaves them (1.6
// passes over a zero usage, so the whole context is estimated; 0.78 counts
// it). Each result is checked equal to the reference's before any time.
//
// Usage: node benches/estimate.mjs [--line 0.78|1.6] [sizes...]   (default: both lines, 1000 10000)
// Prints a markdown table: medians of alternating batches of calls, about 1.5 s a side.

import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { realSource, realEntries } from './sessions.mjs'

const require = createRequire(import.meta.url)
const { loadReference } = require('../__test__/helpers/reference.js')
const { loadOurs } = require('../__test__/helpers/ours.js')

const args = process.argv.slice(2)
const lineAt = args.indexOf('--line')
const lines = lineAt >= 0 ? [args.splice(lineAt, 2)[1]] : ['0.78', '1.6']
const sizes = args.length > 0 ? args.map(Number) : [1_000, 10_000]

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}

/**
 * Medians (ms a call) of `a` and `b`, run in turn for about `budgetMs`
 * each; each sample is a batch of calls of about half a millisecond (a
 * call of a few microseconds is below what one timing tells apart).
 */
function timePair(a, b, budgetMs = 1_500) {
  let reps = 1
  for (let t = 0; t < 0.5; reps *= 2) {
    const t0 = performance.now()
    for (let i = 0; i < reps; i++) a(), b()
    t = performance.now() - t0
  }
  const batch = (f) => {
    const t0 = performance.now()
    for (let i = 0; i < reps; i++) f()
    return (performance.now() - t0) / reps
  }
  const as = []
  const bs = []
  const t0 = performance.now()
  while (as.length < 15 || (performance.now() - t0 < 2 * budgetMs && as.length < 2_000)) {
    if (as.length % 2) as.push(batch(a)), bs.push(batch(b))
    else bs.push(batch(b)), as.push(batch(a))
  }
  return [median(as), median(bs), as.length]
}

const fmt = (ms) => (ms >= 1 ? `${ms.toFixed(2)} ms` : ms >= 0.001 ? `${(ms * 1000).toFixed(1)} µs` : `${(ms * 1e6).toFixed(0)} ns`)

console.log(`Context estimates: node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${(await realSource()).label}`)
console.log('')
console.log('| line | function | usage | messages | reference | prime-compaction | ratio | rounds |')
console.log('|---|---|---|---:|---:|---:|---:|---:|')
for (const line of lines) {
  const ref = await loadReference(line)
  const ours = await loadOurs(line)
  for (const zeroed of [false, true]) {
    for (const n of sizes) {
      const entries = await realEntries(n)
      if (zeroed) {
        for (const e of entries) {
          if (e.type === 'message' && e.message.usage) e.message.usage = { ...e.message.usage, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }
        }
      }
      const messages = entries.filter((e) => e.type === 'message').map((e) => e.message)
      const cases = [['estimateContextTokens', (m) => m.estimateContextTokens(messages)]]
      if (line === '1.6') {
        const session = ref.SessionManager.inMemory()
        for (const message of messages) session.appendMessage(message)
        const projection = session.buildSessionProjection()
        const branch = session.getBranch()
        cases.push(['estimateProjectedContextTokens', (m) => m.estimateProjectedContextTokens(projection, branch)])
      }
      for (const [name, call] of cases) {
        assert.deepEqual(call(ours), call(ref), `${name} differs from the reference`)
        const [r, o, rounds] = timePair(() => call(ref), () => call(ours))
        console.log(`| ${line} | ${name} | ${zeroed ? 'zeroed' : 'as recorded'} | ${messages.length.toLocaleString('en-US')} | ${fmt(r)} | ${fmt(o)} | ${(o / r).toFixed(2)} | ${rounds} |`)
      }
    }
  }
}
