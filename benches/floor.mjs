// How far prepareCompaction is from its floor: the reads any implementation
// must make, timed beside the reference and ours in one process, on
// real-shaped sessions (benches/sessions.mjs).
//
// The floor is a plain JS pass that reads what the call cannot skip and
// computes nothing else:
// - every entry's `type`, `id` and `parentId`, and a message entry's
//   `message` and `role` (the path, the last compaction and the kinds);
// - for the summarized messages (from the previous compaction's kept entry
//   to the cut): each tool call's `name` and `arguments.path` (the paths
//   read after the messages, whose reads then overlap), put in the file
//   Sets, and the message put in the result's array; on the 1.6 line
//   also each message's `content` (the projection copies a message whose
//   content is null) and a tool result's `nestedCalls`;
// - for the kept messages (the cut to the end): the lengths the estimate
//   counts, with `JSON.stringify` of each tool call's arguments.
// The cut is ours (its entry is read from our result beforehand), so the
// floor does not search for it: that makes it a lower bound.
//
// Usage: node benches/floor.mjs [--line 0.78|1.6] [--compactions] [sizes...]   (default: both lines, 1000 10000 100000)
// --compactions: the real-shaped sessions with the source's compactions kept.
// Prints a markdown table: medians of alternating runs, each side ~3 s.

import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { realSource, realEntries } from './sessions.mjs'

const require = createRequire(import.meta.url)
const { loadReference } = require('../__test__/helpers/reference.js')
const { loadOurs } = require('../__test__/helpers/ours.js')

const args = process.argv.slice(2)
const lineAt = args.indexOf('--line')
const lines = lineAt >= 0 ? [args.splice(lineAt, 2)[1]] : ['0.78', '1.6']
const compactionsAt = args.indexOf('--compactions')
const compactions = compactionsAt >= 0
if (compactions) args.splice(compactionsAt, 1)
const sizes = args.length > 0 ? args.map(Number) : [1_000, 10_000, 100_000]

/** The characters the estimate counts in a kept message (read, not judged). */
function keptReads(message) {
  const content = message.content
  if (typeof content === 'string') return content.length
  let n = 0
  if (Array.isArray(content)) {
    for (const block of content) {
      const type = block.type
      if (type === 'text') n += block.text.length
      else if (type === 'thinking') n += block.thinking.length
      else if (type === 'toolCall') n += block.name.length + JSON.stringify(block.arguments).length
    }
  }
  if (typeof message.summary === 'string') n += message.summary.length
  if (typeof message.output === 'string') n += message.output.length
  return n
}

/** The floor pass over `entries`, with the cut at `cut` (an index). */
function floor(entries, cut, line16) {
  let last = -1
  let kinds = 0
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]
    const type = entry.type
    if (typeof entry.id === 'string' && (typeof entry.parentId === 'string' || entry.parentId === null)) kinds++
    if (type === 'message') {
      if (typeof entry.message.role === 'string') kinds++
    } else if (type === 'compaction') last = i
  }
  let start = 0
  if (last >= 0) {
    const kept = entries[last].firstKeptEntryId
    start = entries.findIndex((e) => e.id === kept)
  }
  const summarize = []
  const read = new Set()
  const touched = new Set()
  // (the calls' paths read after the messages, as ours reads them: see lib/entry-facts.js)
  const names = []
  const args = []
  for (let i = start; i < cut; i++) {
    const entry = entries[i]
    if (entry.type !== 'message') continue
    const message = entry.message
    summarize.push(message)
    const content = message.content
    if (message.role === 'assistant' && Array.isArray(content)) {
      for (const block of content) {
        if (block.type !== 'toolCall') continue
        names.push(block.name)
        args.push(block.arguments)
      }
    } else if (line16 && (content === null || content === undefined || (message.role === 'toolResult' && message.nestedCalls))) kinds++
  }
  for (let c = 0; c < args.length; c++) args[c] = args[c].path
  for (let c = 0; c < args.length; c++) {
    const path = args[c]
    if (typeof path !== 'string') continue
    if (names[c] === 'read') read.add(path)
    else touched.add(path)
  }
  let chars = 0
  for (let i = cut; i < entries.length; i++) {
    const entry = entries[i]
    if (entry.type === 'message') chars += keptReads(entry.message)
  }
  return kinds + summarize.length + read.size + touched.size + chars
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}

/** Medians (ms) of `fns`, run in turn for about `budgetMs` each. */
function time(fns, budgetMs = 3_000) {
  for (const fn of fns) fn()
  const times = fns.map(() => [])
  const t0 = performance.now()
  let round = 0
  while ((performance.now() - t0 < budgetMs * fns.length || round < 5) && round < 500) {
    for (let k = 0; k < fns.length; k++) {
      const f = (k + round) % fns.length
      const a = performance.now()
      fns[f]()
      times[f].push(performance.now() - a)
    }
    round++
  }
  return { ms: times.map(median), rounds: round }
}

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3))

const source = await realSource()
console.log(`prepareCompaction against its floor: node ${process.version}, ${new Date().toISOString().slice(0, 10)}, ${compactions ? source.compactedLabel : source.label}`)
console.log('')
console.log('| line | entries | reference ms | ours ms | floor ms | ours / reference | floor / reference | ours / floor | rounds |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const line of lines) {
  const ref = await loadReference(line)
  const ours = await loadOurs(line)
  for (const n of sizes) {
    const entries = await realEntries(n, { compactions })
    const settings = { ...ref.DEFAULT_COMPACTION_SETTINGS }
    const preparation = ours.prepareCompaction(entries, settings)
    const cut = entries.findIndex((e) => e.id === preparation.firstKeptEntryId)
    if (cut < 0) throw new Error(`no cut at ${n} entries`)
    const line16 = line === '1.6'
    const { ms, rounds } = time([() => ref.prepareCompaction(entries, settings), () => ours.prepareCompaction(entries, settings), () => floor(entries, cut, line16)])
    const [r, o, f] = ms
    console.log(`| ${line} | ${n.toLocaleString('en-US')} | ${fmt(r)} | ${fmt(o)} | ${fmt(f)} | ${(o / r).toFixed(2)} | ${(f / r).toFixed(3)} | ${(o / f).toFixed(1)} | ${rounds} |`)
  }
}
