// collectEntriesForBranchSummary: prime-compaction vs the reference, on the
// same in-memory SessionManager (the agent's own, 0.78.1). A chain of
// `depth` entries is the old branch; the target forks off its middle. Both
// results must be equal (same entry objects, same ancestor) before any time
// is reported. Real-shaped sessions first (benches/sessions.mjs: the chain's
// entries are a real session's, appended with the SessionManager's own
// methods), then generated ones (short user and assistant texts).
//
// Both agent lines run on real-shaped sessions (0.78.1 and 1.6.0, each on its
// own SessionManager); the generated set runs on the 0.78 line.
//
// Each line can run in a process of its own (`--line 0.78`, `--line 1.6`),
// as a user runs one agent: in one process both SessionManager classes pass
// through this package's call sites, and each reference only its own.
//
// Beside them, the floor: the getEntry calls for the entries returned and
// the array, the least any implementation does.
//
// Usage: node benches/branch.mjs [--line 0.78|1.6] [--real-only | --generated-only] [depth ...]   (default 1000 10000 100000)

import assert from 'node:assert/strict'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'
import { realSource, realBranchSession, agentSessions } from './sessions.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const { mulberry32 } = require('../scripts/prng.js')
const { loadReference } = require('../__test__/helpers/reference.js')
const { loadOurs } = require('../__test__/helpers/ours.js')

// Both agent lines, each on its own SessionManager and against its own entry.
const args = process.argv.slice(2)
const lineAt = args.indexOf('--line')
const only = lineAt >= 0 ? args.splice(lineAt, 2)[1] : undefined
const LINES = {}
for (const line of ['0.78', '1.6'].filter((l) => only === undefined || l === only)) {
  const ref = await loadReference(line)
  LINES[line] = { line, ref, ours: await loadOurs(line), SessionManager: ref.SessionManager }
}
const { SessionManager } = await agentSessions()

function generatedSession(depth) {
  const session = SessionManager.inMemory()
  const ids = []
  for (let i = 0; i < depth; i++) {
    const message =
      i % 2 === 0
        ? { role: 'user', content: `question ${i}`, timestamp: i }
        : { role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }], timestamp: i }
    ids.push(session.appendMessage(message))
  }
  const oldLeafId = ids[depth - 1]
  session.branch(ids[Math.floor(depth / 2)])
  const targetId = session.appendMessage({ role: 'user', content: 'elsewhere', timestamp: depth })
  session.branch(oldLeafId)
  return { session, oldLeafId, targetId }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/**
 * Median times of `a` and `b` and the median of their per-round ratio with
 * a 95% interval (order statistics that bracket the median whatever the
 * distribution), each round running both, in an order drawn afresh.
 */
function timePair(a, b, budgetMs) {
  a()
  b()
  const as = []
  const bs = []
  const rnd = mulberry32(20261201)
  const start = performance.now()
  while (as.length < 15 || (performance.now() - start < budgetMs && as.length < 400)) {
    const first = rnd() < 0.5
    for (const which of first ? [0, 1] : [1, 0]) {
      const t0 = performance.now()
      ;(which === 0 ? a : b)()
      ;(which === 0 ? as : bs).push(performance.now() - t0)
    }
  }
  const ratios = bs.map((t, k) => t / as[k]).sort((x, y) => x - y)
  const n = ratios.length
  const half = 0.98 * Math.sqrt(n)
  const lo = ratios[Math.max(0, Math.floor(n / 2 - half) - 1)]
  const hi = ratios[Math.min(n - 1, Math.ceil(n / 2 + half))]
  return { refMs: median(as), oursMs: median(bs), ratio: ratios[Math.floor(n / 2)], lo, hi, rounds: n }
}

/** The median time of `f` over about `budgetMs` (at least 15 runs). */
function timeOne(f, budgetMs) {
  f()
  const ts = []
  const start = performance.now()
  while (ts.length < 15 || (performance.now() - start < budgetMs && ts.length < 400)) {
    const t0 = performance.now()
    f()
    ts.push(performance.now() - t0)
  }
  return median(ts)
}

async function measure(make, depths, { ref, ours, SessionManager: manager }) {
  const rows = []
  for (const depth of depths) {
    const { session, oldLeafId, targetId } = await make(depth, manager)
    const r = ref.collectEntriesForBranchSummary(session, oldLeafId, targetId)
    const o = ours.collectEntriesForBranchSummary(session, oldLeafId, targetId)
    assert.equal(o.commonAncestorId, r.commonAncestorId)
    assert.equal(o.entries.length, r.entries.length)
    for (let i = 0; i < r.entries.length; i++) assert.equal(o.entries[i], r.entries[i], `entry ${i} differs`)
    const t = timePair(
      () => ref.collectEntriesForBranchSummary(session, oldLeafId, targetId),
      () => ours.collectEntriesForBranchSummary(session, oldLeafId, targetId),
      depth >= 100000 ? 8000 : 3000,
    )
    // The floor: the getEntry calls for the entries returned, and the
    // array, with the shared entry known beforehand (a lower bound).
    const floor = () => {
      const out = []
      for (let id = oldLeafId; id !== r.commonAncestorId; ) {
        const entry = session.getEntry(id)
        out.push(entry)
        id = entry.parentId
      }
      return out.reverse()
    }
    assert.equal(floor().length, r.entries.length)
    rows.push({ depth, collected: r.entries.length, ...t, floorMs: timeOne(floor, depth >= 100000 ? 3000 : 1000) })
  }
  return rows
}

const given = args.map(Number).filter(Boolean)
const depths = given.length ? given : [1000, 10000, 100000]
const sets = []
const real = `Real-shaped: ${(await realSource()).label}`
for (const line of Object.values(LINES)) {
  if (!args.includes('--generated-only')) sets.push({ title: `${line.line} line, ${real}`, make: realBranchSession, line })
}
if (!args.includes('--real-only') && LINES['0.78']) sets.push({ title: '0.78 line, generated (short user and assistant texts)', make: generatedSession, line: LINES['0.78'] })

console.log(`collectEntriesForBranchSummary on SessionManager.inMemory(), node ${process.version}, ${new Date().toISOString().slice(0, 10)}, median ms`)
for (const { title, make, line } of sets) {
  const rows = await measure(make, depths, line)
  console.log(`\n### ${title}\n`)
  console.log('| depth | entries collected | reference | prime-compaction | ratio of medians | per-round ratio [95% interval] (rounds) | floor (÷ reference) |')
  console.log('|---:|---:|---:|---:|---:|---:|---:|')
  for (const { depth, collected, refMs, oursMs, ratio, lo, hi, rounds, floorMs } of rows) {
    console.log(
      `| ${depth} | ${collected} | ${refMs.toFixed(3)} | ${oursMs.toFixed(3)} | ${(oursMs / refMs).toFixed(3)} | ${ratio.toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] (${rounds}) | ${floorMs.toFixed(3)} (${(floorMs / refMs).toFixed(3)}) |`,
    )
  }
}
