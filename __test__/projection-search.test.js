'use strict'
// 1.6's estimateProjectedContextTokens reads the projection's entries and
// the branch in JS, by searches the native side calls once it knows what
// it looks for (lib/projection-search.js), and decides natively. The public
// function must give what the binding gives reading everything itself: the
// same estimate and the same errors, for the reference's projections of
// generated sessions and for odd values in every field the searches read
// (holes, primitives, getters, throwing getters, Proxies, frozen objects,
// ids and types that are not strings), and for an id that more than one
// entry has; and it must read what the agent reads.

const path = require('node:path')
const util = require('node:util')
const fc = require('fast-check')
const gen = require('./helpers/generator')
const { platformSuffix, binaryName } = require('../platform.js')
const { projectionSearches, entryHolding, indexOfId, lastIndexOfType } = require('../lib/projection-search.js')
const { loadReference } = require('./helpers/reference')
const { ODD, setOdd } = require('./helpers/odd-values')

const binding = require(path.join(__dirname, '..', `${binaryName}.${platformSuffix()}.node`))
const ours = require('../agent-1.6.js')
const LINE = binding.agentLineIndex('1.6')
const RUNS = Number(process.env.PROJECTION_SEARCH_RUNS) || 200

jest.setTimeout(60_000)

let ref
beforeAll(async () => {
  ref = await loadReference('1.6')
})

function outcome(fn) {
  try {
    return { value: fn() }
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message }
  }
}

/** The public function and the binding alone, on inputs made afresh by `make`: the same outcome. */
function expectSame(make) {
  const viaFacts = outcome(() => ours.estimateProjectedContextTokens(...make()))
  // (no searches of the projection, no facts of its messages: `false`)
  const alone = outcome(() => binding.estimateProjectedContextTokens(...make(), LINE, undefined, false))
  expect(util.inspect(viaFacts)).toBe(util.inspect(alone))
  return viaFacts
}

const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120 }
const entryOf = (i, message, extra = {}) => ({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message, ...extra })

/** A branch of user and assistant messages (the last assistant with usage), with `at` replaced by `odd` where given. */
function session(n = 8) {
  const branch = []
  for (let i = 0; i < n; i++) {
    const message = i % 2 === 0 ? { role: 'user', content: `question ${i}`, timestamp: i } : { role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }], usage, stopReason: 'stop', timestamp: i }
    branch.push(entryOf(i, message))
  }
  return branch
}

function projectionOf(branch) {
  return { messages: branch.map((e) => e.message), entries: branch.map((e) => ({ sourceEntry: e, messages: [e.message] })) }
}

test('the searches, and what they leave to the native side', () => {
  const branch = session(4)
  const projection = projectionOf(session(3))
  const searches = projectionSearches(projection, branch)
  expect(Object.keys(searches).sort()).toEqual(['entries', 'entryHolding', 'indexOfId', 'lastIndexOfType', 'start'])
  expect(searches.entries).toBe(projection.entries)
  expect([searches.entryHolding, searches.indexOfId, searches.lastIndexOfType]).toEqual([entryHolding, indexOfId, lastIndexOfType])
  // The projected entries' search: the entry whose messages hold the message, none, or the entry it leaves (with where its messages start).
  const at = new Float64Array(1)
  const entries = [2, 1, 3].map((n) => ({ messages: new Array(n).fill({ role: 'user' }) }))
  expect([0, 1, 2, 3, 5].map((index) => entryHolding(entries, index, 0, 3, 0, at))).toEqual([0, 0, 1, 2, 2])
  expect(entryHolding(entries, 6, 0, 3, 0, at)).toBe(-1)
  expect(entryHolding(entries, 3, 1, 3, 2, at)).toBe(2)
  expect(entryHolding(entries, 3, 1, 2, 2, at)).toBe(-1)
  const odd = [entries[0], { messages: 'none' }, entries[2]]
  expect(entryHolding(odd, 4, 0, 3, 0, at)).toBe(-2 - 1)
  expect(at[0]).toBe(2)
  at[0] = 0
  expect(entryHolding([entries[0], null, entries[2]], 8, 0, 3, 5, at)).toBe(-2 - 1)
  expect(at[0]).toBe(7)
  // The id search: the first equal id in the range, none, or the entry it leaves to the native walk.
  const ids = ['a', 'b', 'a', 'c'].map((id) => ({ type: 'message', id }))
  expect(indexOfId(ids, 'a', 0, 4)).toBe(0)
  expect(indexOfId(ids, 'a', 1, 4)).toBe(2)
  expect(indexOfId(ids, 'a', 1, 2)).toBe(-1)
  expect(indexOfId(ids, 'x', 0, 4)).toBe(-1)
  expect(indexOfId(ids, 'b', 2, 4)).toBe(-1)
  const throwing = (key) => Object.defineProperty({ type: 'message', id: 'x' }, key, { get: () => { throw new Error(`${key} getter failed`) } })
  expect(indexOfId([ids[1], throwing('id'), ids[0]], 'a', 0, 3)).toBe(-2 - 1)
  expect(indexOfId([ids[1], null, ids[0]], 'a', 0, 3)).toBe(-2 - 1)
  // A primitive entry is read as the agent reads it: it has no id.
  expect(indexOfId([ids[1], 7, ids[0]], 'a', 0, 3)).toBe(2)
  expect(indexOfId([ids[1], null, ids[0]], 'b', 0, 3)).toBe(0)
  // The type search: the last of either type before `to`, none, or the entry it leaves.
  const types = ['message', 'compaction', 'message', 'context_edit', 'message'].map((type, i) => ({ type, id: `t${i}` }))
  expect(lastIndexOfType(types, 5, 'context_edit', 'compaction')).toBe(3)
  expect(lastIndexOfType(types, 3, 'context_edit', 'compaction')).toBe(1)
  expect(lastIndexOfType(types, 1, 'context_edit', 'compaction')).toBe(-1)
  expect(lastIndexOfType(types, 0, 'context_edit', 'compaction')).toBe(-1)
  expect(lastIndexOfType([types[1], throwing('type'), types[0]], 3, 'context_edit', 'compaction')).toBe(-2 - 1)
  expect(lastIndexOfType([types[1], undefined, types[0]], 3, 'context_edit', 'compaction')).toBe(-2 - 1)
  expect(lastIndexOfType([types[1], 'compaction', types[0]], 3, 'context_edit', 'compaction')).toBe(0)
  expect(projectionSearches(projection, new Proxy(branch, {}))).toBe(undefined)
  expect(projectionSearches({ entries: new Proxy([], {}) }, branch)).toBe(undefined)
  expect(projectionSearches(null, branch)).toBe(undefined)
})

test('the projection and the branch are read as far as the agent reads them, in its order', () => {
  // Each branch entry's id and type read recorded.
  const counted = (reads) => (e) => {
    const o = { ...e }
    for (const key of ['id', 'type']) {
      Object.defineProperty(o, key, {
        enumerable: true,
        get() {
          reads.push(`${key} ${e.id}`)
          return e[key]
        },
      })
    }
    return o
  }
  const readsOf = (estimate, edited) => {
    const reads = []
    // The last usage on entry 7; entry 8 a user message after it; with
    // `edited`, entry 2 a compaction, before it.
    const plain = session(9)
    if (edited) plain[2] = { ...plain[2], type: 'compaction' }
    const branch = plain.map(counted(reads))
    // Each projected entry's `messages` read recorded too.
    const projection = projectionOf(session(9))
    projection.entries = projection.entries.map((e, k) => {
      const o = { ...e }
      Object.defineProperty(o, 'messages', {
        enumerable: true,
        get() {
          reads.push(`messages ${k}`)
          return e.messages
        },
      })
      return o
    })
    estimate(projection, branch)
    return reads
  }
  for (const edited of [false, true]) {
    const theirs = readsOf((p, b) => ref.estimateProjectedContextTokens(p, b), edited)
    // The projected entries' messages up to the usage's entry; the ids up
    // to the usage's; each type twice (one read a compare) from the end,
    // down to the compaction where there is one.
    expect(theirs.slice(0, 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((k) => `messages ${k}`))
    expect(theirs.slice(8, 16)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7'].map((id) => `id ${id}`))
    expect(theirs.slice(16, 18)).toEqual(['type e8', 'type e8'])
    expect(theirs.length).toBe(edited ? 16 + 2 * 7 : 16 + 2 * 9)
    expect(readsOf((p, b) => ours.estimateProjectedContextTokens(p, b), edited)).toEqual(theirs)
    // And so does the binding reading everything itself.
    expect(readsOf((p, b) => binding.estimateProjectedContextTokens(p, b, LINE, undefined, false), edited)).toEqual(theirs)
  }
})

test('odd values in every field the searches read: the same estimate or the same error', () => {
  const fields = ['branch entry', 'branch type', 'branch id', 'projected entry', 'projected messages', 'projection entries']
  let errors = 0
  let estimates = 0
  for (const field of fields) {
    for (const kind of Object.keys(ODD)) {
      for (const at of [0, 3, 6, 7]) {
        const make = () => {
          const branch = session(8)
          const projection = projectionOf(branch)
          if (field === 'branch entry') setOdd(branch, at, kind, branch[at])
          else if (field === 'branch type') setOdd((branch[at] = { ...branch[at] }), 'type', kind, 'message')
          else if (field === 'branch id') setOdd((branch[at] = { ...branch[at] }), 'id', kind, `e${at}`)
          else if (field === 'projected entry') setOdd(projection.entries, at, kind, projection.entries[at])
          else if (field === 'projected messages') setOdd((projection.entries[at] = { ...projection.entries[at] }), 'messages', kind, [branch[at].message])
          else setOdd(projection, 'entries', kind, projection.entries)
          return [projection, branch]
        }
        const r = expectSame(make)
        if (r.error) errors++
        else estimates++
      }
    }
  }
  // Both outcomes were compared.
  expect(errors).toBeGreaterThan(0)
  expect(estimates).toBeGreaterThan(0)
  // A compaction after the usage, a context edit, frozen and Proxy entries.
  const branch = session(8)
  expectSame(() => [projectionOf(session(8)), [...session(8), { type: 'compaction', id: 'c', parentId: 'e7', summary: 's', firstKeptEntryId: 'e5', tokensBefore: 1 }]])
  expectSame(() => [projectionOf(branch), [...branch.slice(0, 6), { type: 'context_edit', id: 'x', targetId: 'e1' }, ...branch.slice(6)]])
  expectSame(() => [projectionOf(branch), branch.map((e) => Object.freeze({ ...e }))])
  expectSame(() => [projectionOf(branch), branch.map((e) => new Proxy(e, {}))])
})

test('an id on more than one entry: the first equal one found', () => {
  const shaped = (ids, editAt) => {
    const branch = session(ids.length).map((e, i) => ({ ...e, id: ids[i], parentId: i ? ids[i - 1] : null }))
    const projection = projectionOf(branch)
    branch.splice(editAt, 0, { type: 'context_edit', id: 'edit', parentId: ids[editAt - 1], targetId: ids[0] })
    return [projection, branch]
  }
  const ids = ['p0xy', 'p1xy', 'p2xy', 'p3xy', 'p4xy', 'p5xy', 'p6xy', 'p7xy']
  const cases = [
    // The usage's entry (the last) after the edit: its usage counts.
    [ids, 3],
    // Its id also on an entry before the edit: the first one is its index, and the usage does not count.
    [ids.map((id, i) => (i === 1 ? 'p7xy' : id)), 3],
    // The same after the edit: it counts again.
    [ids.map((id, i) => (i === 5 ? 'p7xy' : id)), 3],
  ]
  const outcomes = cases.map(([caseIds, editAt]) => {
    const r = expectSame(() => shaped(caseIds, editAt))
    expect(r.value).toEqual(ref.estimateProjectedContextTokens(...shaped(caseIds, editAt)))
    return r.value.lastUsageIndex
  })
  // The usage counted, not counted, counted.
  expect(outcomes.map((index) => index !== null)).toEqual([true, false, true])
})

test("the reference's projections of generated 1.6 sessions: the same estimate either way, and the reference's", () => {
  fc.assert(
    fc.property(gen.pathEntriesArb({ line: '1.6' }), fc.nat(), fc.boolean(), (entries, k, whole) => {
      const projection = ref.buildSessionProjection(entries)
      const branch = whole ? entries : entries.slice(k % (entries.length + 1))
      const r = expectSame(() => [projection, branch])
      const theirs = outcome(() => ref.estimateProjectedContextTokens(projection, branch))
      if (!theirs.error && !r.error) expect(r.value).toEqual(theirs.value)
    }),
    { numRuns: RUNS },
  )
})
