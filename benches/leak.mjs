// Resident memory under long use: after a warm-up, RSS must stay flat, or
// the binding leaks (handles, strings, caches, jobs).
//
//   node --expose-gc [--min-semi-space-size=16] benches/leak.mjs [--mode prepare] [--calls N] [--entries N] [--warmup N] [--yield-every N] [--bound-mb N]
//
// Modes:
//   prepare    prepareCompaction on a session of --entries entries (default 10,000 entries, 10,000 calls)
//   compact    compact() on a scripted streamFn that answers at once, the
//              preparation of a session of --entries entries whose cut
//              splits a turn, so each call makes two requests (default
//              200 entries, 100,000 calls)
//   serialize  serializeForSummary on --entries messages (default 10,000 messages, 10,000 calls)
//
// Every --yield-every calls (default 1,000; 0 never) the loop gives the event
// loop a turn, as a caller whose streamFn talks to a model does on every
// call: Node runs the finalizers of native objects (the wrappers of
// compact()'s jobs) only then.
//
// Prints one JSON line: RSS (MB) at start, after warm-up, at the end, once
// the event loop has turned (`afterIdle`: the growth is measured there), and
// samples along the way; the same for what is retained (RSS less V8's empty
// heap space). Exits 1 when the retained growth after warm-up exceeds the
// bound. Why 16 MB: for prepare, a leak of even 2 bytes per entry per call
// would add 20 KB a call, 200 MB over 10,000 calls (20 MB over 1,000); for
// compact, 160 bytes a call (less than one request's prompt) is 16 MB over
// 100,000 calls; for serialize, one call's transcript is more than 1 MB;
// allocator and V8 heap noise after a full GC stays within a few MB.

import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'

const require = createRequire(import.meta.url)
const ours = require('../index.js')

const DEFAULTS = {
  prepare: { calls: 10_000, entries: 10_000, warmup: 500 },
  compact: { calls: 100_000, entries: 200, warmup: 2_000 },
  serialize: { calls: 10_000, entries: 10_000, warmup: 50 },
}

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'prepare' },
    calls: { type: 'string' },
    entries: { type: 'string' },
    warmup: { type: 'string' },
    'yield-every': { type: 'string', default: '1000' },
    'bound-mb': { type: 'string', default: '16' },
  },
})
const MODE = values.mode
if (!DEFAULTS[MODE]) throw new Error(`--mode: one of ${Object.keys(DEFAULTS).join(', ')}`)
const CALLS = Number(values.calls ?? DEFAULTS[MODE].calls)
const ENTRIES = Number(values.entries ?? DEFAULTS[MODE].entries)
const WARMUP = Number(values.warmup ?? DEFAULTS[MODE].warmup)
const BOUND_MB = Number(values['bound-mb'])
const YIELD_EVERY = Number(values['yield-every'])
const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20_000 }
const MODEL = { id: 'leak-model', name: 'Leak', api: 'openai-completions', provider: 'openai', baseUrl: 'http://127.0.0.1:1', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128_000, maxTokens: 4096 }

function message(i) {
  const k = i % 3
  return k === 0
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
}

function session(n) {
  const out = new Array(n)
  for (let i = 0; i < n; i++) out[i] = { type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message: message(i) }
  return out
}

/** The call each mode repeats; returns a number folded into `check`, so that no result goes unused. */
function makeCall() {
  if (MODE === 'prepare') {
    const entries = session(ENTRIES)
    return () => ours.prepareCompaction(entries, SETTINGS).messagesToSummarize.length
  }
  if (MODE === 'serialize') {
    const messages = Array.from({ length: ENTRIES }, (_, i) => message(i))
    return () => ours.serializeForSummary(messages).length
  }
  // Ordinary turns, then one long turn of tool calls, so the cut splits it.
  const entries = session(ENTRIES).map((e, i) =>
    i > ENTRIES / 3 && e.message.role === 'user' ? { ...e, message: { ...message(i + 1), content: [{ type: 'text', text: `step ${i} `.repeat(8) }] } } : e,
  )
  const prep = ours.prepareCompaction(entries, { ...SETTINGS, keepRecentTokens: 600 })
  if (!prep || !prep.isSplitTurn) throw new Error('compact mode: the preparation should split a turn')
  const answer = { role: 'assistant', content: [{ type: 'text', text: '## Goal\nA scripted summary.' }], stopReason: 'stop' }
  const streamFn = async () => ({ result: async () => answer })
  return async () => (await ours.compact(prep, MODEL, 'key', undefined, undefined, undefined, undefined, streamFn)).summary.length
}

/**
 * After a full collection: RSS, and what is retained, RSS less the part of
 * V8's heap that holds nothing (heapTotal − heapUsed): V8 grows its young
 * generation with the allocation rate, which RSS shows as growth although
 * no object is kept.
 */
const sample = () => {
  if (global.gc) global.gc()
  const { rss, heapTotal, heapUsed } = process.memoryUsage()
  const r = (bytes) => Math.round((bytes / 1048576) * 10) / 10
  return { rss: r(rss), retained: r(rss - (heapTotal - heapUsed)) }
}

const call = makeCall()
const start = sample()
let check = 0
const t0 = performance.now()
for (let i = 0; i < WARMUP; i++) check += await call()
const afterWarmup = sample()
const samples = []
const every = Math.max(1, Math.floor(CALLS / 10))
const turn = () => new Promise((resolve) => setImmediate(resolve))
for (let i = 1; i <= CALLS; i++) {
  check += await call()
  if (YIELD_EVERY > 0 && i % YIELD_EVERY === 0) await turn()
  if (i % every === 0) samples.push(sample())
}
const end = sample()
const seconds = (performance.now() - t0) / 1000
// Once the event loop has had a few turns, whatever --yield-every was:
for (let i = 0; i < 20; i++) await turn()
const afterIdle = sample()
const series = (key) => ({
  start: start[key],
  afterWarmup: afterWarmup[key],
  end: end[key],
  afterIdle: afterIdle[key],
  growth: Math.round((afterIdle[key] - afterWarmup[key]) * 10) / 10,
  samples: samples.map((s) => s[key]),
})
const report = {
  mode: MODE,
  entries: ENTRIES,
  warmup: WARMUP,
  calls: CALLS,
  seconds: Math.round(seconds * 10) / 10,
  msPerCall: Math.round(((seconds * 1000) / (WARMUP + CALLS)) * 100) / 100,
  rssMb: series('rss'),
  retainedMb: series('retained'),
  yieldEvery: YIELD_EVERY,
  boundMb: BOUND_MB,
  gc: Boolean(global.gc),
  check,
}
const growth = report.retainedMb.growth
console.log(JSON.stringify(report))
if (growth > BOUND_MB) process.exit(1)
