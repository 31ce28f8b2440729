// prepareCompactionAsync against prepareCompaction (ours) and the reference's
// prepareCompaction, on each agent line, on sessions held in memory as a session file would give
// them (parsed JSON): real-shaped first (benches/sessions.mjs: a real session
// cycled to the size), then generated. Reports total time and the main
// thread's event-loop delay (monitorEventLoopDelay, 1 ms resolution) while
// each call runs. The plans must be equal first. Beside them, the same
// process idle for as long as the async call takes (the same entries
// held): the delay the process shows with no call at all.
//
//   node --expose-gc benches/async.mjs [--real-only | --generated-only] [sizes...]   (default 1000 10000 100000)

import { createRequire } from 'node:module'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const gen = require('../__test__/helpers/generator.js')
const { findDifference } = require('../__test__/helpers/compare.js')
const { loadReference } = require('../__test__/helpers/reference.js')
const LINES = { '0.78': require('../agent-0.78.js'), '1.6': require('../agent-1.6.js') }
const { realSource, realEntries } = await import('./sessions.mjs')

const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 }
const args = process.argv.slice(2)
const given = args.map(Number).filter(Boolean)
const sizes = given.length ? given : [1_000, 10_000, 100_000]

// How long each run waits after the forced collection before its window opens.
const SETTLE_MS = 300

/** Median time and worst event-loop delay over `runs` calls of `fn`. */
async function measure(fn, runs = 5) {
  await fn() // warm up
  const times = []
  let maxDelay = 0
  for (let i = 0; i < runs; i++) {
    // Each run starts from a collected heap (run with --expose-gc), so one
    // call's garbage is not collected inside the next one's window, and
    // after the collection has settled: 5 ms after gc(), calls and the
    // idle process alike stalled for 8-15 ms at 100k entries, which we
    // read as V8 still sweeping the collected heap (docs/boundary.md).
    globalThis.gc?.()
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
    const h = monitorEventLoopDelay({ resolution: 1 })
    const keepAlive = setInterval(() => {}, 1)
    h.enable()
    // The histogram counts from its second tick: let it start before the call.
    await new Promise((resolve) => setTimeout(resolve, 5))
    const t = performance.now()
    await fn()
    times.push(performance.now() - t)
    // Let the histogram see the turn after the call too.
    await new Promise((resolve) => setTimeout(resolve, 5))
    h.disable()
    clearInterval(keepAlive)
    maxDelay = Math.max(maxDelay, h.max / 1e6)
  }
  times.sort((a, b) => a - b)
  return { ms: times[Math.floor(times.length / 2)], maxDelay }
}

async function measureSet(make, line) {
  const ours = LINES[line]
  const ref = await loadReference(line)
  const rows = []
  for (const n of sizes) {
    const entries = await make(n)
    const want = ref.prepareCompaction(entries, settings)
    const got = await ours.prepareCompactionAsync(entries, settings)
    const diff = findDifference(want, got)
    if (diff) throw new Error(`prepareCompactionAsync differs from the reference at ${n}: ${diff}`)
    const reference = await measure(async () => ref.prepareCompaction(entries, settings))
    const sync = await measure(async () => ours.prepareCompaction(entries, settings))
    const async = await measure(() => ours.prepareCompactionAsync(entries, settings))
    const idle = await measure(() => new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.round(async.ms)))))
    rows.push({ n, reference, sync, async, idle })
  }
  return rows
}

const sets = []
if (!args.includes('--generated-only')) sets.push({ title: `Real-shaped: ${(await realSource()).label}`, make: realEntries })
if (!args.includes('--real-only')) sets.push({ title: 'Generated: buildLargeSession (__test__/helpers/generator.js)', make: async (n) => JSON.parse(JSON.stringify(gen.buildLargeSession(n, 11))) })

const f = (x) => x.toFixed(1)
console.log(`prepareCompactionAsync: node ${process.version}, ${new Date().toISOString().slice(0, 10)}`)
for (const line of Object.keys(LINES))
for (const { title, make } of sets) {
  const rows = await measureSet(make, line)
  console.log(`\n### ${line} line, ${title}\n`)
  console.log('| entries | reference prepareCompaction | ours prepareCompaction | ours prepareCompactionAsync | max event-loop delay: reference / sync / async | max delay idle as long |')
  console.log('|---:|---:|---:|---:|---:|---:|')
  for (const { n, reference, sync, async, idle } of rows) {
    console.log(
      `| ${n.toLocaleString('en-US')} | ${f(reference.ms)} ms | ${f(sync.ms)} ms | ${f(async.ms)} ms | ${f(reference.maxDelay)} / ${f(sync.maxDelay)} / ${f(async.maxDelay)} ms | ${f(idle.maxDelay)} ms |`,
    )
  }
}
