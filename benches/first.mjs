// prepareCompaction as the agent makes it: the first call of its process.
// The other benchmarks time a call made again and again, whose JS is
// compiled by then; the agent compacts a few times a session, so its
// first call runs the JS of both implementations unoptimized (the
// package's passes over the entries, the reference's whole algorithm).
// Each timed call is made in a fresh process, which loads both
// implementations and builds the session (benches/sessions.mjs,
// real-shaped) before it times one implementation's first three calls;
// processes alternate between the two. Medians over the processes. Then
// one call more, after the process has made garbage enough for a dozen
// major collections (as an agent does between compactions, minutes apart):
// V8 then has flushed the bytecode of functions not run since, and the
// session has left the caches.
//
// Usage: node benches/first.mjs [--line 0.78|1.6] [--rounds=N] [sizes...]
//   (default: both lines, 15 processes each side, 1000 10000 100000)

import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { realSource, realEntries } from './sessions.mjs'

const require = createRequire(import.meta.url)
const CALLS = 3

if (process.argv[2] === '--child') {
  const [line, n, which] = process.argv.slice(3)
  const { loadReference } = require('../__test__/helpers/reference.js')
  const { loadOurs } = require('../__test__/helpers/ours.js')
  const impls = { reference: await loadReference(line), ours: await loadOurs(line) }
  const settings = { ...impls.reference.DEFAULT_COMPACTION_SETTINGS }
  const entries = await realEntries(Number(n))
  const times = []
  const call = () => {
    const t = performance.now()
    impls[which].prepareCompaction(entries, settings)
    times.push(performance.now() - t)
  }
  for (let c = 0; c < CALLS; c++) call()
  let garbage = []
  for (let r = 0; r < 60; r++) {
    for (let i = 0; i < 200_000; i++) garbage.push({ a: i, b: `x${i}` })
    garbage = []
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  call()
  process.stdout.write(JSON.stringify(times))
  process.exit(0)
}

const args = process.argv.slice(2)
const lineAt = args.indexOf('--line')
const lines = lineAt >= 0 ? [args.splice(lineAt, 2)[1]] : ['0.78', '1.6']
const roundsArg = args.findIndex((a) => a.startsWith('--rounds='))
const rounds = roundsArg >= 0 ? Number(args.splice(roundsArg, 1)[0].slice('--rounds='.length)) : 15
const sizes = args.length > 0 ? args.map(Number) : [1_000, 10_000, 100_000]

const self = fileURLToPath(import.meta.url)
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3))

function firstCalls(line, n, which) {
  const out = execFileSync(process.execPath, [self, '--child', line, String(n), which], { encoding: 'utf8', maxBuffer: 1 << 20 })
  return JSON.parse(out)
}

console.log(`prepareCompaction, the first calls of a process: node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${(await realSource()).label}, ${rounds} processes a side`)
console.log('')
console.log('| line | entries | call | reference ms | ours ms | ours / reference |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const line of lines) {
  for (const n of sizes) {
    const times = { reference: [], ours: [] }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ['reference', 'ours'] : ['ours', 'reference']
      for (const which of order) times[which].push(firstCalls(line, n, which))
    }
    for (let c = 0; c <= CALLS; c++) {
      const ref = median(times.reference.map((t) => t[c]))
      const ours = median(times.ours.map((t) => t[c]))
      console.log(`| ${line} | ${n.toLocaleString('en-US')} | ${c < CALLS ? c + 1 : 'after garbage'} | ${fmt(ref)} | ${fmt(ours)} | ${(ours / ref).toFixed(2)} |`)
    }
  }
}
