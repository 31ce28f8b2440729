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

const path = require('node:path')
const { pathToFileURL } = require('node:url')
const fc = require('fast-check')

const ours = require('../agent-0.78')
const { loadReference } = require('./helpers/reference')

const RUNS = Math.max(1, Number(process.env.BRANCH_RUNS) || 400)
const SEED = process.env.BRANCH_SEED ? Number(process.env.BRANCH_SEED) | 0 : 20250105

const CORE = path.join(__dirname, '..', 'node_modules/@earendil-works/pi-coding-agent/dist/core')

let ref
let SessionManager

beforeAll(async () => {
  ref = await import(pathToFileURL(path.join(CORE, 'compaction/index.js')).href)
  ;({ SessionManager } = await import(pathToFileURL(path.join(CORE, 'session-manager.js')).href))
})

jest.setTimeout(60_000)

// ---------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------

function describeId(id) {
  return id === undefined ? 'undefined' : JSON.stringify(id)
}

function expectSameCollect(session, oldLeafId, targetId, line = { ref, ours }) {
  const label = `collect(${describeId(oldLeafId)}, ${describeId(targetId)})`
  const r = line.ref.collectEntriesForBranchSummary(session, oldLeafId, targetId)
  const o = line.ours.collectEntriesForBranchSummary(session, oldLeafId, targetId)
  expect(Object.keys(o)).toEqual(Object.keys(r))
  if (o.commonAncestorId !== r.commonAncestorId) {
    throw new Error(`${label}: commonAncestorId ${describeId(o.commonAncestorId)}, reference ${describeId(r.commonAncestorId)}`)
  }
  if (o.entries.length !== r.entries.length) {
    throw new Error(`${label}: ${o.entries.length} entries, reference ${r.entries.length}`)
  }
  r.entries.forEach((entry, i) => {
    if (o.entries[i] !== entry) throw new Error(`${label}: entries[${i}] is not the session's own entry ${entry.id}`)
  })
  return r.entries
}

function expectSamePreparation(entries, tokenBudget, line = { ref, ours }) {
  const r = line.ref.prepareBranchEntries(entries, tokenBudget)
  const o = line.ours.prepareBranchEntries(entries, tokenBudget)
  expect(o).toStrictEqual(r)
  for (const kind of ['read', 'written', 'edited']) {
    expect([...o.fileOps[kind]]).toEqual([...r.fileOps[kind]])
  }
  const callerMessages = new Set(entries.map((e) => e.message).filter(Boolean))
  r.messages.forEach((message, i) => {
    const own = callerMessages.has(message)
    if ((o.messages[i] === message) !== own) {
      throw new Error(`budget ${tokenBudget}: messages[${i}] ${own ? 'is not the caller\'s object' : 'should be a new object'}`)
    }
  })
  return r
}

// ---------------------------------------------------------------------------
// Generated trees
// ---------------------------------------------------------------------------

const text = fc.string({ maxLength: 160 })
const filePath = fc.constantFrom('a.ts', 'b.ts', 'src/c.rs', 'README.md', '')
const toolCall = fc.record({
  name: fc.constantFrom('read', 'write', 'edit', 'bash'),
  path: filePath,
})

const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('user'), text }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('assistant'), text, tools: fc.array(toolCall, { maxLength: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('toolResult'), text }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('compaction'), summary: text }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('branchSummary'),
      pick: fc.nat(),
      fromRoot: fc.boolean(),
      summary: text,
      details: fc.option(
        fc.record({ readFiles: fc.array(filePath, { maxLength: 3 }), modifiedFiles: fc.array(filePath, { maxLength: 3 }) }),
      ),
      fromHook: fc.constantFrom(undefined, false, true),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('custom'), text, display: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('other'), which: fc.constantFrom('thinking', 'model', 'entry', 'info') }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('branch'), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset') }) },
)

/** Builds a session with the reference's own append methods; returns it and its ids. */
function buildSession(ops, Manager = SessionManager) {
  const session = Manager.inMemory('/tmp')
  const ids = []
  const pick = (n) => ids[n % ids.length]
  let t = 0
  for (const o of ops) {
    t++
    switch (o.kind) {
      case 'user':
        ids.push(session.appendMessage({ role: 'user', content: o.text, timestamp: t }))
        break
      case 'assistant':
        ids.push(
          session.appendMessage({
            role: 'assistant',
            content: [
              { type: 'text', text: o.text },
              ...o.tools.map((c, i) => ({ type: 'toolCall', id: `c${t}-${i}`, name: c.name, arguments: { path: c.path } })),
            ],
            stopReason: 'toolUse',
            timestamp: t,
          }),
        )
        break
      case 'toolResult':
        ids.push(
          session.appendMessage({
            role: 'toolResult',
            toolCallId: `c${t}`,
            toolName: 'read',
            content: [{ type: 'text', text: o.text }],
            isError: false,
            timestamp: t,
          }),
        )
        break
      case 'compaction':
        if (ids.length) ids.push(session.appendCompaction(o.summary, pick(t), 1000 + t))
        break
      case 'branchSummary': {
        const from = o.fromRoot || !ids.length ? null : pick(o.pick)
        ids.push(session.branchWithSummary(from, o.summary, o.details ?? undefined, o.fromHook))
        break
      }
      case 'custom':
        ids.push(session.appendCustomMessageEntry('note', o.text, o.display, { t }))
        break
      case 'other':
        if (o.which === 'thinking') ids.push(session.appendThinkingLevelChange('high'))
        else if (o.which === 'model') ids.push(session.appendModelChange('anthropic', 'claude'))
        else if (o.which === 'entry') ids.push(session.appendCustomEntry('state', { t }))
        else ids.push(session.appendSessionInfo('name'))
        break
      case 'branch':
        if (ids.length) session.branch(pick(o.pick))
        break
      case 'reset':
        session.resetLeaf()
        break
      case 'system':
        ids.push(session.appendMessage({ role: 'system', content: o.text, sections: { env: o.text }, toolsAdded: [{ name: 'read' }], timestamp: t }))
        break
      case 'edit':
        // The 1.6 manager refuses targets off the branch or without editable content.
        try {
          if (ids.length) ids.push(session.appendContextEdit(pick(o.pick), o.hide ? null : { content: o.text }))
        } catch {
          // not editable
        }
        break
    }
  }
  return { session, ids }
}

const idChoice = fc.oneof(
  { weight: 8, arbitrary: fc.nat().map((n) => ({ pick: n })) },
  { weight: 1, arbitrary: fc.constantFrom({ value: 'unknown-id' }, { value: '' }, { value: null }, { value: undefined }) },
)

const budget = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 }), fc.double({ min: 0, max: 300, noNaN: true }))

const query = fc.record({ old: idChoice, target: idChoice, budgets: fc.array(budget, { minLength: 1, maxLength: 3 }) })

function resolve(choice, ids) {
  if ('value' in choice) return choice.value
  return ids.length ? ids[choice.pick % ids.length] : 'no-entries'
}

describe('collectEntriesForBranchSummary and prepareBranchEntries match the reference', () => {
  test('generated trees with branches, compactions and branch summaries', () => {
    // What the generated cases reached, so a weak generator shows up as a failure.
    const seen = { sideBranch: 0, cut: 0, squeezed: 0 }
    fc.assert(
      fc.property(fc.array(op, { maxLength: 70 }), fc.array(query, { minLength: 1, maxLength: 6 }), (ops, queries) => {
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
  test('a parentId that does not resolve is an Error naming both ids (the reference cuts the path short)', () => {
    const session = mapSession([
      entry('a', null),
      entry('b', 'a'),
      entry('c', 'gone'),
      entry('d', 'c'),
      entry('e', 'b'),
    ])
    const message = 'entry "c" has parentId "gone", which getEntry does not resolve'
    for (const [from, to] of [['d', 'e'], ['e', 'd'], ['d', 'c']]) {
      // The reference returns a shortened path here without a word.
      expect(() => ref.collectEntriesForBranchSummary(session, from, to)).not.toThrow()
      expect(() => ours.collectEntriesForBranchSummary(session, from, to)).toThrow(message)
    }
    // Unknown starting ids still give the reference's empty answers.
    expect(expectSameCollect(session, 'nope', 'e').map((e) => e.id)).toEqual([])
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
    const session = mapSession(list)
    expect(() => ours.collectEntriesForBranchSummary(session, `n${DEPTH - 1}`, 'n5')).toThrow(/cycle through entry id "n\d+"/)
  })
})

describe('the 1.6 line (its SessionManager, system messages and context edits)', () => {
  const line = {}
  beforeAll(async () => {
    line.ref = await loadReference('1.6')
    line.ours = require('../agent-1.6')
  })

  const op16 = fc.oneof(
    { weight: 8, arbitrary: op },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('system'), text }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('edit'), pick: fc.nat(), hide: fc.boolean(), text }) },
  )

  test('generated trees: the same entries, and the same branch preparation on the caller\'s objects', () => {
    let edited = 0
    fc.assert(
      fc.property(fc.array(op16, { maxLength: 70 }), fc.array(query, { minLength: 1, maxLength: 6 }), (ops, queries) => {
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
