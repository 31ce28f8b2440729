'use strict'
// Branch summarization parity: collectEntriesForBranchSummary and
// prepareBranchEntries against the reference (@earendil-works/pi-coding-agent
// 0.78.1), on trees built with the reference's own in-memory SessionManager,
// so both implementations read the very same objects. Results must be
// deep-equal, and hand back the caller's own entry and message objects. The
// last block does the same on the 1.6 line, with 1.6.0's SessionManager.
//
// BRANCH_RUNS (default 400) sets the number of generated trees; BRANCH_SEED
// (default 20250105) replays a run.

const fc = require('fast-check')

const ours = require('../agent-0.78')
const gen = require('./helpers/generator')
const { createChecks } = require('./helpers/parity-checks')
const { loadReference } = require('./helpers/reference')

const RUNS = Math.max(1, Number(process.env.BRANCH_RUNS) || 400)
const SEED = process.env.BRANCH_SEED ? Number(process.env.BRANCH_SEED) | 0 : 20250105

let ref
let SessionManager
/** The parity checks on 0.78 (helpers/parity-checks.js, which the soak runs too). */
let checks

beforeAll(async () => {
  ref = await loadReference('0.78')
  ;({ SessionManager } = ref)
  checks = createChecks(ref, ours)
})

jest.setTimeout(60_000)

// ---------------------------------------------------------------------------
// Comparison: the same entries, the caller's own objects (helpers/parity-checks.js)
// ---------------------------------------------------------------------------

const expectSameCollect = (session, oldLeafId, targetId, line = checks) => line.checkCollect(session, oldLeafId, targetId)
const expectSamePreparation = (entries, tokenBudget, line = checks) => line.checkBranchPreparation(entries, tokenBudget)

// ---------------------------------------------------------------------------
// Generated trees (helpers/generator.js, which the soak draws from too)
// ---------------------------------------------------------------------------

const buildSession = (ops, Manager = SessionManager) => gen.buildTree(Manager, ops)
const resolve = gen.resolveTreeId
const query = gen.treeQueryArb

describe('collectEntriesForBranchSummary and prepareBranchEntries match the reference', () => {
  test('generated trees with branches, compactions and branch summaries', () => {
    // What the generated cases reached, so a weak generator shows up as a failure.
    const seen = { sideBranch: 0, cut: 0, squeezed: 0 }
    fc.assert(
      fc.property(gen.treeOpsArbOf('0.78'), fc.array(query, { minLength: 1, maxLength: 6 }), (ops, queries) => {
        const { session, ids } = buildSession(ops)
        for (const q of queries) {
          const oldLeafId = resolve(q.old, ids)
          const entries = expectSameCollect(session, oldLeafId, resolve(q.target, ids))
          if (entries.length && entries[0].parentId) seen.sideBranch++
          for (const b of q.budgets) {
            const r = expectSamePreparation(entries, b)
            const all = ref.prepareBranchEntries(entries, 0)
            if (r.messages.length < all.messages.length) seen.cut++
            if (b > 0 && r.totalTokens > b) seen.squeezed++
          }
        }
        // The reference's own navigation case: the current leaf against every entry.
        const leaf = session.getLeafId()
        for (const id of ids.slice(0, 12)) expectSameCollect(session, leaf, id)
      }),
      { numRuns: RUNS, seed: SEED },
    )
    if (RUNS >= 100) {
      expect(seen.sideBranch).toBeGreaterThan(RUNS / 10)
      expect(seen.cut).toBeGreaterThan(RUNS / 10)
      expect(seen.squeezed).toBeGreaterThan(0)
    }
  })

  test('the examples from the spec: sibling branch, ancestor, same leaf, unknown ids', () => {
    const session = SessionManager.inMemory('/tmp')
    const a = session.appendMessage({ role: 'user', content: 'A', timestamp: 1 })
    const b = session.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'B' }], timestamp: 2 })
    const c = session.appendMessage({ role: 'user', content: 'C', timestamp: 3 })
    const d = session.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'D' }], timestamp: 4 })
    session.branch(a)
    session.appendMessage({ role: 'user', content: 'E', timestamp: 5 })
    const f = session.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'F' }], timestamp: 6 })

    expect(expectSameCollect(session, d, f).map((e) => e.id)).toEqual([b, c, d])
    expect(ours.collectEntriesForBranchSummary(session, d, f).commonAncestorId).toBe(a)
    expect(expectSameCollect(session, d, b).map((e) => e.id)).toEqual([c, d])
    expect(expectSameCollect(session, d, d)).toEqual([])
    expect(expectSameCollect(session, d, 'nope').map((e) => e.id)).toEqual([a, b, c, d])
    expect(expectSameCollect(session, 'nope', f)).toEqual([])
    expect(ours.collectEntriesForBranchSummary(session, null, f)).toEqual({ entries: [], commonAncestorId: null })
    expect(ours.collectEntriesForBranchSummary(session, '', f)).toEqual({ entries: [], commonAncestorId: null })
    // A nullish target is the session's current leaf (F), as getBranch(undefined) reads it.
    expect(expectSameCollect(session, d, undefined).map((e) => e.id)).toEqual([b, c, d])
    expect(expectSameCollect(session, d, null).map((e) => e.id)).toEqual([b, c, d])
    expect(expectSameCollect(session, d, '').map((e) => e.id)).toEqual([a, b, c, d])
  })

  test('prepareBranchEntries: budget edges and the default budget', () => {
    const { session, ids } = buildSession([
      { kind: 'user', text: 'x'.repeat(40) },
      { kind: 'assistant', text: 'y'.repeat(40), tools: [{ name: 'read', path: 'a.ts' }, { name: 'edit', path: 'b.ts' }] },
      { kind: 'toolResult', text: 'z'.repeat(400) },
      { kind: 'compaction', summary: 's'.repeat(80) },
      { kind: 'branchSummary', pick: 1, fromRoot: false, summary: 'q'.repeat(40), details: { readFiles: ['r.ts'], modifiedFiles: ['m.ts'] } },
      { kind: 'custom', text: 'c'.repeat(40), display: true },
      { kind: 'user', text: 'u'.repeat(40) },
    ])
    const entries = session.getBranch()
    expect(ids.length).toBe(7)
    const r = ref.prepareBranchEntries(entries)
    expect(ours.prepareBranchEntries(entries)).toStrictEqual(r)
    for (let b = -1; b <= r.totalTokens + 1; b++) expectSamePreparation(entries, b)
    for (const b of [NaN, null, Infinity, '25', 12.5]) expectSamePreparation(entries, b)
    expectSamePreparation([], 10)
  })
})

// ---------------------------------------------------------------------------
// Hand-made sessions: broken links and cycles
// ---------------------------------------------------------------------------

/** A session over a Map with the reference SessionManager's getBranch walk (bounded, for safety). */
function mapSession(entries, leafId = null, aliases = {}) {
  const byId = new Map(entries.map((e) => [e.id, e]))
  for (const [alias, id] of Object.entries(aliases)) byId.set(alias, byId.get(id))
  return {
    getEntry: (id) => byId.get(id),
    getLeafId: () => leafId,
    getBranch(fromId) {
      const path = []
      const startId = fromId ?? leafId
      let current = startId ? byId.get(startId) : undefined
      while (current) {
        if (path.length > byId.size) throw new Error('the reference would loop forever here')
        path.unshift(current)
        current = current.parentId ? byId.get(current.parentId) : undefined
      }
      return path
    },
  }
}

function thrown(fn) {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

const entry = (id, parentId) => ({
  type: 'message',
  id,
  parentId,
  timestamp: '2025-01-01T00:00:00.000Z',
  message: { role: 'user', content: id, timestamp: 0 },
})

describe('broken sessions', () => {
  test('a parentId that does not resolve is an Error naming both ids where the answer needs the path past it (the reference cuts the path short)', () => {
    const session = mapSession([
      entry('a', null),
      entry('b', 'a'),
      entry('c', 'gone'),
      entry('d', 'c'),
      entry('e', 'b'),
    ])
    const message = 'entry "c" has parentId "gone", which getEntry does not resolve'
    for (const [from, to] of [['d', 'e'], ['e', 'd']]) {
      // The reference returns a shortened path here without a word.
      expect(() => ref.collectEntriesForBranchSummary(session, from, to)).not.toThrow()
      expect(() => ours.collectEntriesForBranchSummary(session, from, to)).toThrow(message)
    }
    // Past the shared entry c, nothing is read: the reference's answer.
    expect(expectSameCollect(session, 'd', 'c').map((e) => e.id)).toEqual(['d'])
    // Unknown starting ids still give the reference's empty answers.
    expect(expectSameCollect(session, 'nope', 'e').map((e) => e.id)).toEqual([])
    // An unknown old leaf needs nothing of the target's path, broken as it is.
    expect(expectSameCollect(session, 'nope', 'd').map((e) => e.id)).toEqual([])
    expect(ours.collectEntriesForBranchSummary(session, 'nope', 'd').commonAncestorId).toBeNull()
  })

  test('an entry reached under another id (getEntry("bee") gives entry "b")', () => {
    const session = mapSession([entry('a', null), entry('b', 'a'), entry('c', 'bee'), entry('d', 'c')], null, { bee: 'b' })
    expect(expectSameCollect(session, 'd', 'b').map((e) => e.id)).toEqual(['a', 'b', 'c', 'd'])
    expect(expectSameCollect(session, 'd', 'c').map((e) => e.id)).toEqual(['d'])
    expect(expectSameCollect(session, 'd', 'bee').map((e) => e.id)).toEqual(['a', 'b', 'c', 'd'])
  })

  test('a parent cycle is an Error naming an id of the cycle (the reference loops forever)', () => {
    const session = mapSession([
      entry('root', null),
      entry('x', 'z'),
      entry('y', 'x'),
      entry('z', 'y'),
      entry('leaf', 'z'),
      entry('self', 'self'),
    ])
    const cycle = /parentId links form a cycle through entry id "(x|y|z)"/
    expect(() => ours.collectEntriesForBranchSummary(session, 'leaf', 'root')).toThrow(cycle)
    // A cycle on the target's path, away from the old branch.
    expect(() => ours.collectEntriesForBranchSummary(session, 'root', 'leaf')).toThrow(cycle)
    expect(() => ours.collectEntriesForBranchSummary(session, 'self', 'root')).toThrow(/"self"/)
    // Not where the answer needs no path: an old leaf that is not there.
    expect(ours.collectEntriesForBranchSummary(session, 'nope', 'leaf')).toEqual({ entries: [], commonAncestorId: null })
    // A plain Error (thrown from the addon's realm, so compared by name).
    expect(thrown(() => ours.collectEntriesForBranchSummary(session, 'leaf', 'root')).name).toBe('Error')
  })

  test('errors name the session call and the field', () => {
    expect(() => ours.collectEntriesForBranchSummary({ getEntry: () => ({ id: 7 }) }, 'a', 'b')).toThrow(
      /session\.getEntry\("a"\)\.id: expected a string id, got a number/,
    )
    expect(thrown(() => ours.collectEntriesForBranchSummary({ getEntry: 1 }, 'a', 'b')).name).toBe('TypeError')
    expect(thrown(() => ours.prepareBranchEntries([null])).name).toBe('TypeError')
    expect(() => ours.prepareBranchEntries([{ type: 'message' }])).toThrow(/entries\[0\]\.message/)
  })
})

// ---------------------------------------------------------------------------
// Depth
// ---------------------------------------------------------------------------

describe('deep trees', () => {
  const DEPTH = 100_000

  test(`a ${DEPTH}-deep SessionManager chain: same result, no stack overflow`, () => {
    const session = SessionManager.inMemory('/tmp')
    const ids = []
    for (let i = 0; i < DEPTH; i++) ids.push(session.appendMessage({ role: 'user', content: `m${i}`, timestamp: i }))
    session.branch(ids[10])
    const target = session.appendMessage({ role: 'user', content: 'elsewhere', timestamp: DEPTH })
    const entries = expectSameCollect(session, ids[DEPTH - 1], target)
    expect(entries.length).toBe(DEPTH - 11)
    expectSamePreparation(entries, 0)
    expectSamePreparation(entries, 5000)
    // Back to the root: everything below it.
    expect(ours.collectEntriesForBranchSummary(session, ids[DEPTH - 1], ids[0]).entries.length).toBe(DEPTH - 1)
  })

  test(`a ${DEPTH}-long cycle is found`, () => {
    const list = []
    for (let i = 0; i < DEPTH; i++) list.push(entry(`n${i}`, i === 0 ? `n${DEPTH - 1}` : `n${i - 1}`))
    list.push(entry('r', null))
    const session = mapSession(list)
    // From the cycle to an entry off it, and back: each walk goes round it.
    expect(() => ours.collectEntriesForBranchSummary(session, `n${DEPTH - 1}`, 'r')).toThrow(/cycle through entry id "n\d+"/)
    expect(() => ours.collectEntriesForBranchSummary(session, 'r', `n${DEPTH - 1}`)).toThrow(/cycle through entry id "n\d+"/)
    // Between two entries of it, the old branch meets the target's first steps before going round.
    expect(ours.collectEntriesForBranchSummary(session, 'n20', 'n5')).toEqual({ entries: list.slice(6, 21), commonAncestorId: 'n5' })
  })
})

describe('the 1.6 line (its SessionManager, system messages and context edits)', () => {
  let line
  beforeAll(async () => {
    line = createChecks(await loadReference('1.6'), require('../agent-1.6'))
  })

  test('generated trees: the same entries, and the same branch preparation on the caller\'s objects', () => {
    let edited = 0
    fc.assert(
      fc.property(gen.treeOpsArbOf('1.6'), fc.array(query, { minLength: 1, maxLength: 6 }), (ops, queries) => {
        const { session, ids } = buildSession(ops, line.ref.SessionManager)
        for (const q of queries) {
          const entries = expectSameCollect(session, resolve(q.old, ids), resolve(q.target, ids), line)
          if (entries.some((e) => e.type === 'context_edit')) edited++
          for (const b of q.budgets) expectSamePreparation(entries, b, line)
        }
      }),
      { numRuns: Math.max(1, Math.round(RUNS / 4)), seed: SEED },
    )
    expect(edited).toBeGreaterThan(0)
  })
})
