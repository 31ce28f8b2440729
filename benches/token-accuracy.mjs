// How far is the chars/4 estimate (estimateTokens) from the real o200k_base
// count? Per message: ratio = estimate / real (above 1: overestimate, below 1:
// underestimate). Prints median, p10 and p90 of that ratio per corpus, and the
// totals. The real count takes the same fields the estimate measures (text,
// thinking, tool name + JSON.stringify(arguments), bash command + output,
// summaries), each counted on its own; images count 1200 on both sides.
//
// Run: node benches/token-accuracy.mjs  (after building the addon)
// Env: ACCURACY_ENTRIES (default 3000) entries per generated session.

import { createRequire } from 'node:module'
import { cpus } from 'node:os'
import { cjk, code, prng, prose } from './corpus.mjs'

const require = createRequire(import.meta.url)
const { estimateTokens, countTokens } = require('../index.js')
const { buildLargeSession } = require('../__test__/helpers/generator.js')

const ENCODING = 'o200k_base'
const IMAGE_TOKENS = 1200
const count = (s) => countTokens(s, ENCODING)

/** The real-token counterpart of estimateTokens (core::exact_tokens in Rust). */
function realTokens(m) {
  const content = (c) =>
    typeof c === 'string'
      ? count(c)
      : c.reduce((n, b) => n + (b.type === 'text' && b.text ? count(b.text) : b.type === 'image' ? IMAGE_TOKENS : 0), 0)
  switch (m.role) {
    case 'user':
    case 'custom':
    case 'toolResult':
      return content(m.content)
    case 'assistant':
      return m.content.reduce((n, b) => {
        if (b.type === 'text') return n + count(b.text)
        if (b.type === 'thinking') return n + count(b.thinking)
        if (b.type === 'toolCall') return n + count(b.name) + count(JSON.stringify(b.arguments))
        return n
      }, 0)
    case 'bashExecution':
      return count(m.command) + count(m.output)
    case 'branchSummary':
    case 'compactionSummary':
      return count(m.summary)
    default:
      return 0
  }
}

/** The messages of a generated session's entries, as the estimate sees them. */
function sessionMessages(entries) {
  const out = []
  for (const e of entries) {
    if (e.type === 'message') out.push(e.message)
    else if (e.type === 'custom_message') out.push({ role: 'custom', customType: e.customType, content: e.content })
    else if (e.type === 'compaction') out.push({ role: 'compactionSummary', summary: e.summary })
    else if (e.type === 'branch_summary') out.push({ role: 'branchSummary', summary: e.summary })
  }
  return out
}

/** A code-heavy session: reads and writes of real source, bash output, short prose. */
function codeMessages(n, seed) {
  const rnd = prng(seed)
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1))
  const out = []
  for (let i = 0; i < n; i++) {
    const r = rnd()
    if (r < 0.45) {
      out.push({ role: 'toolResult', toolCallId: `t${i}`, toolName: 'read', content: [{ type: 'text', text: code(int(300, 6000), seed + i) }], isError: false })
    } else if (r < 0.7) {
      out.push({
        role: 'assistant',
        content: [
          { type: 'text', text: prose(int(40, 300), seed + i) },
          { type: 'toolCall', id: `t${i}`, name: rnd() < 0.5 ? 'write' : 'edit', arguments: { path: `src/core/file_${i}.rs`, content: code(int(200, 4000), seed + 7 * i) } },
        ],
      })
    } else if (r < 0.85) {
      out.push({ role: 'bashExecution', command: 'cargo test --release 2>&1 | tail -50', output: code(int(200, 3000), seed + 3 * i) })
    } else {
      out.push({ role: 'user', content: prose(int(30, 500), seed + i) })
    }
  }
  return out
}

/** CJK conversation: user questions and assistant answers in Chinese, Japanese, Korean. */
function cjkMessages(n, seed) {
  const rnd = prng(seed)
  const out = []
  for (let i = 0; i < n; i++) {
    const bytes = 60 + Math.floor(rnd() * 3000)
    out.push(
      i % 2 === 0
        ? { role: 'user', content: cjk(bytes, seed + i) }
        : { role: 'assistant', content: [{ type: 'thinking', thinking: cjk(bytes, seed + 2 * i) }, { type: 'text', text: cjk(bytes / 2, seed + 3 * i) }] },
    )
  }
  return out
}

function proseMessages(n, seed) {
  const rnd = prng(seed)
  return Array.from({ length: n }, (_, i) => ({ role: 'user', content: prose(40 + Math.floor(rnd() * 3000), seed + i) }))
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

function row(name, messages) {
  const ratios = []
  let est = 0
  let real = 0
  for (const m of messages) {
    const e = estimateTokens(m)
    const r = realTokens(m)
    est += e
    real += r
    if (r > 0) ratios.push(e / r)
  }
  ratios.sort((a, b) => a - b)
  return {
    corpus: name,
    messages: ratios.length,
    'median est/real': quantile(ratios, 0.5).toFixed(2),
    'p10 est/real': quantile(ratios, 0.1).toFixed(2),
    'p90 est/real': quantile(ratios, 0.9).toFixed(2),
    'total est': est,
    'total real': real,
    'total est/real': (est / real).toFixed(2),
  }
}

const n = Number(process.env.ACCURACY_ENTRIES || 3000)
const rows = [
  row(`generated sessions (buildLargeSession ${n} x 3 seeds)`, [1, 2, 3].flatMap((seed) => sessionMessages(buildLargeSession(n, seed)))),
  row('code-heavy session', codeMessages(1500, 11)),
  row('English prose', proseMessages(1000, 12)),
  row('CJK conversation', cjkMessages(1000, 13)),
]
console.log(`machine: ${cpus()[0].model}, node ${process.version}, ${new Date().toISOString().slice(0, 10)}, encoding ${ENCODING}`)
console.table(rows)
