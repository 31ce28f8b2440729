// Resident memory under repeated prepareCompaction calls: after a warm-up,
// RSS must stay flat, or the binding leaks (handles, strings, caches).
//
//   node --expose-gc benches/leak.mjs [--calls 10000] [--entries 10000] [--warmup 500] [--bound-mb 16]
//
// Prints one JSON line: RSS (MB) at start, after warm-up and at the end, and
// samples along the way. Exits 1 when the growth after warm-up exceeds the
// bound. Why 16 MB: a leak of even 2 bytes per entry per call would add 20 KB
// a call, 200 MB over 10,000 calls (20 MB over 1,000); allocator and V8 heap
// noise after a full GC stays within a few MB.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const ours = require('../index.js')

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}

const CALLS = arg('calls', 10_000)
const ENTRIES = arg('entries', 10_000)
const WARMUP = arg('warmup', 500)
const BOUND_MB = arg('bound-mb', 16)
const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20_000 }

function session(n) {
  const out = new Array(n)
  for (let i = 0; i < n; i++) {
    const k = i % 3
    const message =
      k === 0
        ? { role: 'user', content: `question ${i} `.repeat(8), timestamp: i }
        : k === 1
          ? {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: `thinking ${i}` },
                { type: 'text', text: `answer ${i} `.repeat(8) },
                { type: 'toolCall', id: `c${i}`, name: i % 2 ? 'read' : 'edit', arguments: { path: `src/f${i % 97}.rs` } },
              ],
              usage: { input: 100 + i, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110 + i },
              stopReason: 'toolUse',
              timestamp: i,
            }
          : { role: 'toolResult', toolCallId: `c${i - 1}`, toolName: 'read', content: [{ type: 'text', text: `body ${i}` }], isError: false, timestamp: i }
    out[i] = { type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message }
  }
  return out
}

const mb = () => {
  if (global.gc) global.gc()
  return Math.round((process.memoryUsage().rss / 1048576) * 10) / 10
}

const entries = session(ENTRIES)
const start = mb()
let check = 0
const t0 = performance.now()
for (let i = 0; i < WARMUP; i++) check += ours.prepareCompaction(entries, SETTINGS).messagesToSummarize.length
const afterWarmup = mb()
const samples = []
const every = Math.max(1, Math.floor(CALLS / 10))
for (let i = 1; i <= CALLS; i++) {
  check += ours.prepareCompaction(entries, SETTINGS).messagesToSummarize.length
  if (i % every === 0) samples.push(mb())
}
const end = mb()
const seconds = (performance.now() - t0) / 1000
const growth = Math.round((end - afterWarmup) * 10) / 10
const report = {
  entries: ENTRIES,
  warmup: WARMUP,
  calls: CALLS,
  seconds: Math.round(seconds * 10) / 10,
  msPerCall: Math.round(((seconds * 1000) / (WARMUP + CALLS)) * 100) / 100,
  rssMb: { start, afterWarmup, end, growth, samples },
  boundMb: BOUND_MB,
  gc: Boolean(global.gc),
  check,
}
console.log(JSON.stringify(report))
if (growth > BOUND_MB) process.exit(1)
