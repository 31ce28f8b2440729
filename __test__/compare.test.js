'use strict'
// The harness's own comparisons (helpers/compare.js), which every parity
// check, the soak and the hostile suite rest on: the first difference is
// named by its full path, and deepFreeze freezes what is reachable each
// time, including what was added to a Set or Map after an earlier call.

const { deepFreeze, findDifference } = require('./helpers/compare')

test('findDifference names the first difference by its whole path, and null when deep-equal', () => {
  const a = { entries: [{ id: 'x', 'odd key': [1, 2, { deep: 'a' }] }], set: new Set([1, { s: 1 }]), map: new Map([['k', { v: 1 }]]) }
  const same = { entries: [{ id: 'x', 'odd key': [1, 2, { deep: 'a' }] }], set: new Set([1, { s: 1 }]), map: new Map([['k', { v: 1 }]]) }
  expect(findDifference(a, same)).toBeNull()
  const b = structuredClone(a)
  b.entries[0]['odd key'][2].deep = 'b'
  expect(findDifference(a, b)).toBe('$.entries[0]["odd key"][2].deep: reference "a", ours "b"')
  const c = structuredClone(a)
  ;[...c.set][1].s = 2
  expect(findDifference(a, c, { labels: ['before', 'after'] })).toBe('$.set<set #1>.s: before 1, after 2\n  (Set contents/insertion order: before Array(2), after Array(2))')
  const d = structuredClone(a)
  d.map.get('k').w = 1
  expect(findDifference(a, d)).toBe('$.map<map value #0>.w: key present in ours (value 1), missing in reference')
  const e = structuredClone(a)
  delete e.entries[0]['odd key'][1]
  expect(findDifference(a, e)).toBe('$.entries[0]["odd key"][1]: hole in ours only')
  expect(findDifference({ p: 1, q: 2 }, { q: 2, p: 1 })).toBe('$: same keys, different order: reference [p, q], ours [q, p]')
  expect(findDifference({ p: 1, q: 2 }, { q: 2, p: 1 }, { keyOrder: false })).toBeNull()
  expect(findDifference([new Uint8Array([1, 2])], [new Uint8Array([1, 3])])).toBe('$[0][1]: reference 2, ours 3')
})

test('deepFreeze freezes the whole graph each call, with what a Set or Map gained since the last', () => {
  const inner = { a: [1, { b: 2 }] }
  const set = new Set()
  const graph = { inner, set, map: new Map() }
  deepFreeze(graph)
  expect([Object.isFrozen(graph), Object.isFrozen(inner), Object.isFrozen(inner.a), Object.isFrozen(inner.a[1])]).toEqual([true, true, true, true])
  const added = { c: { d: 1 } }
  const key = { k: 1 }
  set.add(added)
  graph.map.set(key, added.c)
  deepFreeze(graph)
  expect([Object.isFrozen(added), Object.isFrozen(added.c), Object.isFrozen(key)]).toEqual([true, true, true])
  // A graph frozen before, reached again inside a new one, stays frozen.
  const outer = deepFreeze({ again: inner, fresh: { e: 1 } })
  expect([Object.isFrozen(outer), Object.isFrozen(outer.fresh), Object.isFrozen(inner.a[1])]).toEqual([true, true, true])
})
