// collectEntriesForBranchSummary: prime-compaction vs the reference, on the
// same in-memory SessionManager. A chain of `depth` entries is the old
// branch; the target forks off its middle. Both results must be equal
// (same entry objects, same ancestor) before any time is reported.
//
// Usage: node benches/branch.mjs [depth ...]   (default 1000 10000 100000)

import assert from 'node:assert/strict'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const ours = require('../agent-0.78.js')
const core = path.join(here, '..', 'node_modules/@earendil-works/pi-coding-agent/dist/core')
const ref = await import(pathToFileURL(path.join(core, 'compaction/index.js')).href)
const { SessionManager } = await import(pathToFileURL(path.join(core, 'session-manager.js')).href)

function buildSession(depth) {
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

/** Median times of `a` and `b`, run alternately so both see the same machine load. */
function timePair(a, b, budgetMs) {
  a()
  b()
  const as = []
  const bs = []
  const start = performance.now()
  while (as.length < 5 || (performance.now() - start < budgetMs && as.length < 200)) {
    let t0 = performance.now()
    a()
    as.push(performance.now() - t0)
    t0 = performance.now()
    b()
    bs.push(performance.now() - t0)
  }
  return [median(as), median(bs)]
}

const depths = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [1000, 10000, 100000]
const rows = []
for (const depth of depths) {
  const { session, oldLeafId, targetId } = buildSession(depth)
  const r = ref.collectEntriesForBranchSummary(session, oldLeafId, targetId)
  const o = ours.collectEntriesForBranchSummary(session, oldLeafId, targetId)
  assert.equal(o.commonAncestorId, r.commonAncestorId)
  assert.equal(o.entries.length, r.entries.length)
  for (let i = 0; i < r.entries.length; i++) assert.equal(o.entries[i], r.entries[i], `entry ${i} differs`)
  const [refMs, oursMs] = timePair(
    () => ref.collectEntriesForBranchSummary(session, oldLeafId, targetId),
    () => ours.collectEntriesForBranchSummary(session, oldLeafId, targetId),
    depth >= 100000 ? 8000 : 2000,
  )
  rows.push({ depth, collected: r.entries.length, refMs, oursMs })
}

console.log(`collectEntriesForBranchSummary, node ${process.version}, median ms\n`)
console.log('| depth | entries collected | reference | prime-compaction | ratio |')
console.log('|---:|---:|---:|---:|---:|')
for (const { depth, collected, refMs, oursMs } of rows) {
  console.log(
    `| ${depth} | ${collected} | ${refMs.toFixed(3)} | ${oursMs.toFixed(3)} | ${(oursMs / refMs).toFixed(3)} |`,
  )
}
