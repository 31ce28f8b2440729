// countTokens (Rust, tiktoken ranks) against js-tiktoken (pure JS) on the same
// texts. Counts are asserted equal first; then throughput in MB/s (UTF-8
// bytes) and the ratio.
//
// Run: node benches/tokens.mjs  (after building the addon)
// Env: TOKENS_BENCH_MIN_MS (default 1500) minimum time per measurement.

import { createRequire } from 'node:module'
import { cpus } from 'node:os'
import { cjk, code, mixed, prose } from './corpus.mjs'

const require = createRequire(import.meta.url)
const { countTokens } = require('../index.js')
const { Tiktoken } = require('js-tiktoken/lite')

const MIN_MS = Number(process.env.TOKENS_BENCH_MIN_MS || 1500)

function time(f) {
  const t0 = process.hrtime.bigint()
  const r = f()
  return [r, Number(process.hrtime.bigint() - t0) / 1e6]
}

/** Seconds per call: repeat until MIN_MS has passed (at least twice). */
function measure(f) {
  f() // warm-up
  let calls = 0
  let ms = 0
  while (ms < MIN_MS || calls < 2) {
    ms += time(f)[1]
    calls++
  }
  return ms / calls / 1000
}

const [jsO200k, jsInitMs] = time(() => new Tiktoken(require('js-tiktoken/ranks/o200k_base')))
const [, oursInitMs] = time(() => countTokens('warm up', 'o200k_base'))
const jsCl100k = new Tiktoken(require('js-tiktoken/ranks/cl100k_base'))
countTokens('warm up', 'cl100k_base')
const js = { o200k_base: jsO200k, cl100k_base: jsCl100k }

const KB = 1024
const corpora = [
  ['English prose', prose(256 * KB)],
  ['code', code(256 * KB)],
  ['CJK', cjk(256 * KB)],
  ['mixed 1 MB', mixed(1024 * KB)],
]
// Many short texts: the per-call cost of crossing N-API shows here.
const messages = []
for (let i = 0; i < 2000; i++) messages.push(prose(100 + ((i * 37) % 900), i))

console.log(`machine: ${cpus()[0].model}, node ${process.version}`)
console.log(`init (o200k_base, first call): ours ${oursInitMs.toFixed(0)} ms, js-tiktoken ${jsInitMs.toFixed(0)} ms\n`)

const rows = []
for (const encoding of ['o200k_base', 'cl100k_base']) {
  const cases = corpora.map(([name, text]) => ({
    name,
    bytes: Buffer.byteLength(text),
    ours: () => countTokens(text, encoding),
    theirs: () => js[encoding].encode(text, [], []).length,
  }))
  cases.push({
    name: '2000 messages',
    bytes: messages.reduce((n, m) => n + Buffer.byteLength(m), 0),
    ours: () => messages.reduce((n, m) => n + countTokens(m, encoding), 0),
    theirs: () => messages.reduce((n, m) => n + js[encoding].encode(m, [], []).length, 0),
  })
  for (const c of cases) {
    const a = c.ours()
    const b = c.theirs()
    if (a !== b) throw new Error(`${encoding} ${c.name}: countTokens gives ${a}, js-tiktoken ${b}`)
    const oursS = measure(c.ours)
    const theirsS = measure(c.theirs)
    const mb = c.bytes / 1e6
    rows.push({
      encoding,
      text: c.name,
      'size (MB)': mb.toFixed(2),
      tokens: a,
      'ours (MB/s)': (mb / oursS).toFixed(1),
      'js-tiktoken (MB/s)': (mb / theirsS).toFixed(2),
      ratio: `${(theirsS / oursS).toFixed(1)}x`,
    })
  }
}
console.table(rows)
