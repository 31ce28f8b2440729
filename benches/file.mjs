// Planning a compaction straight from a session file: prime-compaction's
// prepareCompactionFromFile (async and sync) against the reference's way
// (readFileSync + parseSessionEntries + migrateSessionEntries, the branch as
// SessionManager.getBranch walks it, prepareCompaction). Real-shaped files
// first (benches/sessions.mjs: a real session cycled to the size, written
// as a v3 file), then generated v3 files of the same sizes. Asserts equal
// plans first; then reports times, the peak memory of ours (in a child
// process running only ours), and the main thread's event-loop delay while
// the async version works.
//
//   node benches/file.mjs [--real-only | --generated-only] [entries ...]   (default 1000 10000 100000)

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { isDeepStrictEqual } from 'node:util'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')
const require = createRequire(import.meta.url)
// Compared with the 0.78.1 reference: the 0.78 line's entry.
const entry = path.join(root, 'agent-0.78.js')
const ours = require(entry)
const { writeSessionFile, referencePlanFromFile } = require(path.join(root, '__test__', 'helpers', 'session-file.js'))
const { realSource, writeRealSessionFile } = await import('./sessions.mjs')

const core = path.join(root, 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'core')
const compaction = await import(pathToFileURL(path.join(core, 'compaction', 'index.js')).href)
const sessionManager = await import(pathToFileURL(path.join(core, 'session-manager.js')).href)
const ref = { ...compaction, parseSessionEntries: sessionManager.parseSessionEntries, migrateSessionEntries: sessionManager.migrateSessionEntries }

const args = process.argv.slice(2)
const given = args.map(Number).filter(Boolean)
const SIZES = given.length ? given : [1_000, 10_000, 100_000]
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-bench-'))
// The session files (up to a few hundred MB) go however the run ends.
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

async function time(runs, fn) {
  const out = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await fn()
    out.push(performance.now() - t)
  }
  return median(out)
}

/** Peak RSS growth of a fresh node process that only loads ours and plans `file`. */
function peakRss(file) {
  const script = `
    const ours = require(${JSON.stringify(entry)})
    const before = process.memoryUsage().rss
    ours.prepareCompactionFromFileSync(${JSON.stringify(file)})
    // VmHWM is this process image's own peak; ru_maxrss would carry over the
    // parent's size from before exec on Linux.
    let peak = process.resourceUsage().maxRSS * 1024
    try {
      const hwm = /VmHWM:\\s+(\\d+) kB/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))
      if (hwm) peak = Number(hwm[1]) * 1024
    } catch {}
    console.log(JSON.stringify({ before, peak }))`
  const { before, peak } = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))
  return peak - before
}

/**
 * Largest event-loop delay on the main thread while the async version plans
 * `file`, in a fresh process (so no garbage from the reference's run is
 * collected meanwhile). A 1 ms timer keeps the loop busy to be measured.
 */
function loopDelay(file) {
  const script = `
    const { monitorEventLoopDelay } = require('node:perf_hooks')
    const ours = require(${JSON.stringify(entry)})
    const h = monitorEventLoopDelay({ resolution: 1 })
    const tick = setInterval(() => {}, 1)
    h.enable()
    ours.prepareCompactionFromFile(${JSON.stringify(file)}).then(() => {
      h.disable()
      clearInterval(tick)
      console.log(JSON.stringify({ max: h.max / 1e6, p99: h.percentile(99) / 1e6 }))
    })`
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))
}

async function measure(label, file) {
  const size = fs.statSync(file).size
  const plain = (v) => JSON.parse(JSON.stringify(v ?? null))
  const want = referencePlanFromFile(ref, file).plan
  const sync = ours.prepareCompactionFromFileSync(file)
  const async_ = await ours.prepareCompactionFromFile(file)
  if (!isDeepStrictEqual(plain(sync), plain(want)) || !isDeepStrictEqual(plain(async_), plain(want))) {
    throw new Error(`${label}: plans differ from the reference`)
  }
  if (!want) throw new Error(`${label}: the file gives no plan; nothing to compare`)

  const reference = await time(3, () => referencePlanFromFile(ref, file))
  const oursAsync = await time(5, () => ours.prepareCompactionFromFile(file))
  const oursSync = await time(5, () => ours.prepareCompactionFromFileSync(file))
  const rss = peakRss(file)
  const delay = loopDelay(file)
  return { label, size, summarized: want.messagesToSummarizeIds.length, reference, oursAsync, oursSync, rss, delay }
}

const fmt = (n) => n.toLocaleString('en-US')
const results = []
if (!args.includes('--generated-only')) {
  const source = await realSource()
  console.log(`real-shaped source: ${source.label}`)
  for (const n of SIZES) {
    const file = await writeRealSessionFile(path.join(dir, `real-${n}.jsonl`), n)
    results.push(await measure(`real-shaped, ${fmt(n)} entries`, file))
  }
}
if (!args.includes('--real-only')) {
  for (const n of SIZES) {
    const file = path.join(dir, `generated-${n}.jsonl`)
    writeSessionFile(file, { seed: 42, entries: n, words: 126, branchChance: 0.001, compactionChance: 0.0002, danglingChance: 0 })
    results.push(await measure(`generated, ${fmt(n)} entries`, file))
  }
}

const mb = (b) => (b / 1e6).toFixed(0)
const ms = (x) => `${x.toFixed(x < 100 ? 1 : 0)} ms`
console.log(`\nprepareCompactionFromFile: ${os.cpus()[0].model}, ${os.cpus().length} CPUs, node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`)
console.log('| file | size | reference (readFileSync + JSON.parse + prepareCompaction) | ours, async | ours, sync | speed-up (async) | peak RSS growth (ours) | RSS / file size | max event-loop delay (async) |')
console.log('|---|---|---|---|---|---|---|---|---|')
for (const r of results) {
  console.log(
    `| ${r.label} | ${mb(r.size)} MB | ${ms(r.reference)} | ${ms(r.oursAsync)} | ${ms(r.oursSync)} | ` +
      `${(r.reference / r.oursAsync).toFixed(1)}x | ${mb(r.rss)} MB | ${(r.rss / r.size).toFixed(2)}x | ` +
      `${r.delay.max.toFixed(1)} ms (p99 ${r.delay.p99.toFixed(1)} ms) |`,
  )
}
console.log(`\nload average during the run: ${os.loadavg().map((l) => l.toFixed(1)).join(', ')}`)
