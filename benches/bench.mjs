// Benchmark: prime-compaction's agent lines (agent-0.78, agent-1.6) against
// the agent's own modules of that line (@earendil-works/pi-coding-agent 0.78.1
// and 1.6.0), in the same process, on real-shaped sessions first
// (benches/sessions.mjs: a real session cycled to the size) and then on
// deterministic generated ones from buildLargeSession (1k / 10k / 100k entries).
//
// For every case: both implementations run once and their results must be
// deep-equal (Sets by content and order); then warm-up, then the median of N
// alternating timed runs, N adapted to a per-case time budget.
//
// Usage: node benches/bench.mjs [--sections=name,...] [--sizes=1000,10000] [--budget-ms=4000]
//   PRIME_COMPACTION_UNDER_TEST=reference benchmarks the reference against itself (harness check).
//
// Adding a benchmark: append an object to SECTIONS below:
//   { name, title, line ('0.78' or '1.6'), columns (the label's column names),
//     source() -> a description of the sessions (or a Promise of it),
//     cases: ({ ref, ours, sizes }) => [{ label (one cell per column), setup() -> input (or a Promise of it), reference(input), ours(input) }] }
// Each case is checked for deep-equal results, then timed.

import os from 'node:os'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const gen = require('../__test__/helpers/generator.js')
const { findDifference } = require('../__test__/helpers/compare.js')
const { loadReference } = require('../__test__/helpers/reference.js')
const { loadOurs, underTestLabel } = require('../__test__/helpers/ours.js')
const { realSource, realEntries } = await import('./sessions.mjs')

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

function parseArgs(argv) {
  const opts = { sections: null, sizes: [1_000, 10_000, 100_000], budgetMs: 4_000, minRuns: 5, maxRuns: 200, warmup: 3 }
  for (const arg of argv) {
    const [k, v] = arg.replace(/^--/, '').split('=')
    if (k === 'sections') opts.sections = v.split(',')
    else if (k === 'sizes') opts.sizes = v.split(',').map(Number)
    else if (k === 'budget-ms') opts.budgetMs = Number(v)
    else if (k === 'min-runs') opts.minRuns = Number(v)
    else if (k === 'max-runs') opts.maxRuns = Number(v)
    else if (k === 'warmup') opts.warmup = Number(v)
    else if (k === 'help' || k === 'h') {
      console.log('node benches/bench.mjs [--sections=a,b] [--sizes=1000,10000,100000] [--budget-ms=4000] [--min-runs=5] [--max-runs=200] [--warmup=3]')
      process.exit(0)
    } else throw new Error(`unknown option ${arg}`)
  }
  return opts
}

// ---------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------

const fmtInt = (n) => n.toLocaleString('en-US')

/**
 * The prepareCompaction sections of an agent line: real-shaped (without
 * compactions, so everything before the cut is summarized), real-shaped
 * with the source's compactions kept (as a long session has them), then
 * generated.
 */
function prepareSections(line) {
  const suffix = line === '0.78' ? '' : `-${line}`
  const title = `prepareCompaction(pathEntries, DEFAULT_COMPACTION_SETTINGS), ${line} line`
  const real = (name, shape, options) => ({
    name: `${name}${suffix}`,
    title: `${title}, ${shape}`,
    line,
    source: async () => (await realSource())[options?.compactions ? 'compactedLabel' : 'label'],
    columns: ['entries'],
    cases: ({ ref, ours, sizes }) =>
      sizes.map((n) => ({
        label: [fmtInt(n)],
        setup: async () => ({ entries: await realEntries(n, options), settings: { ...ref.DEFAULT_COMPACTION_SETTINGS } }),
        reference: ({ entries, settings }) => ref.prepareCompaction(entries, settings),
        ours: ({ entries, settings }) => ours.prepareCompaction(entries, settings),
      })),
  })
  return [
    real('prepareCompaction-real', 'real-shaped'),
    real('prepareCompaction-compacted', 'real-shaped with its compactions', { compactions: true }),
    {
      name: `prepareCompaction${suffix}`,
      title: `${title}, generated`,
      line,
      source: async () => 'buildLargeSession (__test__/helpers/generator.js)',
      columns: ['entries'],
      cases: ({ ref, ours, sizes }) =>
        sizes.map((n) => ({
          label: [fmtInt(n)],
          setup: () => ({ entries: gen.buildLargeSession(n, 1000 + n), settings: { ...ref.DEFAULT_COMPACTION_SETTINGS } }),
          reference: ({ entries, settings }) => ref.prepareCompaction(entries, settings),
          ours: ({ entries, settings }) => ours.prepareCompaction(entries, settings),
        })),
    },
  ]
}

// Both agent lines: 0.78.1 and 1.6.0, each against its own entry.
const SECTIONS = [...prepareSections('0.78'), ...prepareSections('1.6')
]

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function timeOnce(fn, input) {
  const t0 = performance.now()
  const result = fn(input)
  const dt = performance.now() - t0
  return { dt, result }
}

async function benchCase(c, opts) {
  const input = await c.setup()
  // Correctness first: both must give deep-equal results.
  const refResult = c.reference(input)
  const oursResult = c.ours(input)
  const diff = findDifference(refResult, oursResult)
  if (diff) return { mismatch: diff }

  // Warm-up (also measures a rough per-run time for each side).
  let refWarm = Infinity
  let oursWarm = Infinity
  for (let i = 0; i < opts.warmup; i++) {
    refWarm = Math.min(refWarm, timeOnce(c.reference, input).dt)
    oursWarm = Math.min(oursWarm, timeOnce(c.ours, input).dt)
  }
  const perPair = Math.max(refWarm + oursWarm, 0.001)
  const runs = Math.max(opts.minRuns, Math.min(opts.maxRuns, Math.floor(opts.budgetMs / perPair)))

  // Alternate the two sides so drift (GC, thermal, other load) hits both alike.
  const refTimes = []
  const oursTimes = []
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      refTimes.push(timeOnce(c.reference, input).dt)
      oursTimes.push(timeOnce(c.ours, input).dt)
    } else {
      oursTimes.push(timeOnce(c.ours, input).dt)
      refTimes.push(timeOnce(c.reference, input).dt)
    }
  }
  return { runs, refMs: median(refTimes), oursMs: median(oursTimes) }
}

const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3))

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  const refs = { '0.78': await loadReference('0.78'), '1.6': await loadReference('1.6') }
  const ourLines = { '0.78': await loadOurs('0.78'), '1.6': await loadOurs('1.6') }
  const cpus = os.cpus()

  const out = []
  out.push('# prime-compaction benchmark')
  out.push('')
  out.push(`- date: ${new Date().toISOString()}`)
  out.push(`- cpu: ${cpus.length ? cpus[0].model.trim() : 'unknown'} × ${cpus.length} (os.cpus())`)
  out.push(`- memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`)
  out.push(`- node: ${process.version} (${process.platform}-${process.arch}), V8 ${process.versions.v8}`)
  out.push(`- ours: ${underTestLabel()}; reference: @earendil-works/pi-coding-agent@0.78.1 (0.78 line), @1.6.0 (1.6 line)`)
  out.push(`- method: deep-equal check, ${opts.warmup} warm-up runs, then median of N alternating runs (N from a ${opts.budgetMs} ms budget per case, ${opts.minRuns}..${opts.maxRuns})`)
  console.log(out.join('\n'))

  let failed = false
  const sections = opts.sections ? SECTIONS.filter((s) => opts.sections.includes(s.name)) : SECTIONS
  for (const section of sections) {
    const lines = ['', `## ${section.title}`, '', `source: ${await section.source()}`, '', `| ${section.columns.join(' | ')} | reference ms | ours ms | ratio (ours/reference) | runs |`, `|${section.columns.map(() => '---:').join('|')}|---:|---:|---:|---:|`]
    console.log(lines.join('\n'))
    for (const c of section.cases({ ref: refs[section.line], ours: ourLines[section.line], sizes: opts.sizes })) {
      let r
      try {
        r = await benchCase(c, opts)
      } catch (err) {
        r = { error: err }
      }
      if (r.mismatch || r.error) {
        failed = true
        console.log(`| ${c.label.join(' | ')} | – | – | ${r.mismatch ? 'RESULTS DIFFER' : 'ERROR'} | – |`)
        console.error(`  ${section.name} ${c.label.join(' ')}: ${r.mismatch ? `results differ: ${r.mismatch}` : r.error.stack}`)
        continue
      }
      console.log(`| ${c.label.join(' | ')} | ${fmtMs(r.refMs)} | ${fmtMs(r.oursMs)} | ${(r.oursMs / r.refMs).toFixed(3)} | ${r.runs} |`)
    }
  }
  if (failed) process.exitCode = 1
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
