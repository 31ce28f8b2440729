'use strict'
// collectEntriesForBranchSummary reads the old branch ahead in JS
// (lib/entry-path.js) and the native walk takes its steps from there. The
// public function must give the same entries, ancestor and errors as the
// binding reading everything itself, and make the same calls into the
// session, in the same order: getEntry calls and every getter read.

const path = require('node:path')
const fc = require('fast-check')
const { platformSuffix, binaryName } = require('../platform.js')
const { readEntryPath, entriesOfPath, idBit } = require('../lib/entry-path.js')
const ours = require('../agent-0.78')

const binding = require(path.join(__dirname, '..', `${binaryName}.${platformSuffix()}.node`))

const RUNS = Number(process.env.ENTRY_PATH_RUNS) || 400

jest.setTimeout(60_000)

/** The result of `fn`, or the error it throws, as comparable data. */
function outcome(fn) {
  try {
    const r = fn()
    return { keys: Object.keys(r), entries: r.entries, commonAncestorId: r.commonAncestorId }
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message }
  }
}

/**
 * A session over `specs` (id -> entry spec) that logs every call and
 * getter read into `log`. A spec: `{ id, parentId }` values, `getters`
 * (read through logging getters), `wrap` ('plain', 'frozen', 'proxy',
 * 'array'), or `value` (what getEntry returns as it is).
 */
function loggingSession(specs, log, { throwAt = -1, sessionProxy = false } = {}) {
  const made = new Map()
  const entryOf = (key) => {
    if (made.has(key)) return made.get(key)
    const spec = specs[key]
    let entry
    if (spec === undefined) entry = undefined
    else if ('value' in spec) entry = spec.value
    else {
      entry = spec.wrap === 'array' ? [] : { type: 'message', message: { role: 'user', content: String(key) } }
      for (const field of ['id', 'parentId']) {
        if (!(field in spec)) continue
        if (spec.getters) {
          Object.defineProperty(entry, field, {
            enumerable: true,
            get() {
              log.push(`get ${String(key)}.${field}`)
              if (spec.throwing === field) throw new Error(`getter ${field} of ${String(key)} failed`)
              return spec[field]
            },
          })
        } else entry[field] = spec[field]
      }
      if (spec.wrap === 'frozen') Object.freeze(entry)
      if (spec.wrap === 'proxy') {
        entry = new Proxy(entry, {
          get(t, p, r) {
            log.push(`proxy ${String(key)}.${String(p)}`)
            return Reflect.get(t, p, r)
          },
        })
      }
    }
    made.set(key, entry)
    return entry
  }
  let calls = 0
  const session = {
    getLeafId() {
      log.push('getLeafId')
      return Object.keys(specs).at(-1)
    },
    getEntry(id) {
      log.push(`getEntry ${typeof id === 'string' ? JSON.stringify(id) : typeof id}`)
      if (calls++ === throwAt) throw new Error(`getEntry failed at call ${throwAt}`)
      return typeof id === 'string' && Object.hasOwn(specs, id) ? entryOf(id) : undefined
    },
  }
  if (!sessionProxy) return session
  return new Proxy(session, {
    get(t, p, r) {
      log.push(`session.${String(p)}`)
      return Reflect.get(t, p, r)
    },
  })
}

/** The binding reading everything itself, its target resolved as index.js resolves it. */
function nativeCollect(session, oldLeafId, targetId) {
  const target = oldLeafId && targetId == null ? session.getLeafId() : targetId
  return binding.collectEntriesForBranchSummary(session, oldLeafId, target)
}

/** The public function and the binding reading everything itself, on fresh sessions: same outcome, same log. */
function expectSame(specs, oldLeafId, targetId, options) {
  const logOurs = []
  const logNative = []
  const viaPath = outcome(() => ours.collectEntriesForBranchSummary(loggingSession(specs, logOurs, options), oldLeafId, targetId))
  const native = outcome(() => nativeCollect(loggingSession(specs, logNative, options), oldLeafId, targetId))
  // Entries are compared by what they are: both sessions make their own objects.
  const shape = (o) => (o.entries ? { ...o, entries: o.entries.map((e) => (e && typeof e === 'object' ? e.message?.content ?? '[object]' : e)) } : o)
  expect(shape(viaPath)).toEqual(shape(native))
  expect(logOurs).toEqual(logNative)
  return viaPath
}

const chain = (n, prefix = 'e') => {
  const specs = {}
  for (let i = 0; i < n; i++) specs[`${prefix}${i}`] = { id: `${prefix}${i}`, parentId: i === 0 ? null : `${prefix}${i - 1}` }
  return specs
}

describe('the read-ahead entry path', () => {
  test('a plain chain is read ahead whole, and the result is the session’s own entries', () => {
    const specs = chain(50)
    specs.t = { id: 't', parentId: 'e20' }
    const log = []
    const session = loggingSession(specs, log)
    const form = readEntryPath(session, 'e49', 't')
    expect(Object.keys(form)).toEqual(['getEntry', 'entries', 'others', 'codes', 'ids', 'targetSteps', 'oldSteps', 'codeBuffer'])
    expect(form.oldSteps).toBe(undefined)
    // The target's 22 steps (t, e20 … e0), then the old branch from e49 down to e20, where it meets them.
    expect([form.targetSteps, form.entries.length]).toEqual([22, 22 + 30])
    expect(Array.from(form.codes.subarray(0, 4))).toEqual([-3, 3, -3, 3]) // own id === the id looked up; parent "e20"
    expect(Array.from(form.codes.subarray(44, 48))).toEqual([-3, 3, -3, 3]) // e49, parent "e48"
    const r = ours.collectEntriesForBranchSummary(session, 'e49', 't')
    expect(r.commonAncestorId).toBe('e20')
    expect(r.entries.map((e) => e.id)).toEqual(Array.from({ length: 29 }, (_, i) => `e${i + 21}`))
    expect(r.entries[0]).toBe(session.getEntry('e21'))
    expectSame(specs, 'e49', 't')
    expectSame(specs, 'e49', 'e0')
    expectSame(specs, 'e0', 'e49')
    expectSame(specs, 'e49', 'e49')
    expectSame(specs, 'e49', null)
    expectSame(specs, 'e49', '')
  })

  test('ids the pass does not read: the native reader reads them, and reports them', () => {
    const specs = chain(5)
    // Rejected, or answered without the session: nothing is read ahead.
    for (const [old, target] of [[undefined, 'e1'], ['', 'e1'], [null, 'e1'], [0, 'e1'], [7, 'e1'], [{}, 'e1'], ['e4', 7], ['e4', {}]]) {
      expectSame(specs, old, target)
      const log = []
      expect(readEntryPath(loggingSession(specs, log), old, target)).toBeUndefined()
      expect(log).toEqual([])
    }
    // A falsy target, an unknown old leaf: read ahead as the walk reads them.
    for (const [old, target] of [['e4', 0], ['e4', false], ['nope', 'e1']]) {
      expectSame(specs, old, target)
      expect(readEntryPath(loggingSession(specs, []), old, target).entries.length).toBeGreaterThan(0)
    }
    for (const session of [null, undefined, 5, 'str', {}, { getEntry: 1 }, { getEntry: 'x' }, []]) {
      expect(outcome(() => ours.collectEntriesForBranchSummary(session, 'a', 'b'))).toEqual(
        outcome(() => nativeCollect(session, 'a', 'b')),
      )
    }
  })

  test('odd entries, ids and parents: the same answers and errors, the same reads', () => {
    const lone = '\ud800'
    const base = chain(4)
    const cases = [
      { e3: { id: 7, parentId: 'e2' } }, // an id that is not a string
      { e3: { value: null } },
      { e3: { value: 0 } },
      { e3: { value: '' } },
      { e3: { value: 'a string' } },
      { e3: { value: [] } },
      { e3: { value: Object.assign([, 'x'], { id: 'e3', parentId: 'e2' }) } }, // eslint-disable-line no-sparse-arrays
      { e3: { id: 'e3', parentId: 5 } }, // a truthy parentId that is not a string
      { e3: { id: 'e3', parentId: {} } },
      { e3: { id: 'e3', parentId: 0 } },
      { e3: { id: 'e3', parentId: '' } },
      { e3: { id: 'e3' } }, // no parentId
      { e3: { id: 'e3', parentId: 'gone' } }, // a parent getEntry does not resolve
      { e3: { id: 'bee', parentId: 'e2' } }, // an entry reached under another id
      { e3: { id: `lone${lone}`, parentId: 'e2' }, [`lone${lone}`]: { id: 'x', parentId: 'e1' } },
      { e3: { id: 'e3', parentId: 'a-long-id-past-the-inline-units' }, 'a-long-id-past-the-inline-units': { id: 'a-long-id-past-the-inline-units', parentId: 'e1' } },
      { e3: { id: 'e3', parentId: 'e3' } }, // a self-cycle
      { e1: { id: 'e1', parentId: 'e3' } }, // a cycle through the old leaf
      { e3: { id: 'e3', parentId: 'e2', getters: true } },
      { e3: { id: 'e3', parentId: 'e2', getters: true, throwing: 'id' } },
      { e3: { id: 'e3', parentId: 'e2', getters: true, throwing: 'parentId' } },
      { e2: { id: 'e2', parentId: 'e1', wrap: 'frozen' } },
      { e2: { id: 'e2', parentId: 'e1', wrap: 'proxy' } },
      { e2: { id: 'e2', parentId: 'e1', wrap: 'array' } },
    ]
    for (const extra of cases) {
      const specs = { ...base, ...extra, t: { id: 't', parentId: 'e1' } }
      for (const [old, target] of [['e3', 't'], ['e3', 'e0'], ['t', 'e3'], ['e3', 'e3']]) {
        expectSame(specs, old, target)
        expectSame(specs, old, target, { sessionProxy: true })
      }
    }
  })

  test('a getEntry that throws: thrown at the same call', () => {
    const specs = { ...chain(6), t: { id: 't', parentId: 'e2' } }
    for (let throwAt = 0; throwAt < 9; throwAt++) expectSame(specs, 'e5', 't', { throwAt })
  })

  test('a target further than its first steps: a throw or a cycle among them, held or thrown as the native walk does', () => {
    // e0 … e99, and a side branch s0 … s79 off e50: the target s79 is 80 steps from the fork.
    const specs = chain(100)
    for (let j = 0; j < 80; j++) specs[`s${j}`] = { id: `s${j}`, parentId: j === 0 ? 'e50' : `s${j - 1}` }
    for (const target of ['s79', 's10']) {
      for (const throwAt of [-1, 0, 1, 30, 63, 64, 65, 100, 120, 200]) {
        expectSame(specs, 'e99', target, { throwAt })
        expectSame(specs, 'e60', target, { throwAt })
      }
    }
    // s10's first steps reach e50 at the 12th call and go on to e0: a throw past the fork is
    // held and dropped once the old branch meets e50; one before the fork is thrown.
    expect(expectSame(specs, 'e99', 's10', { throwAt: 30 }).commonAncestorId).toBe('e50')
    expect(expectSame(specs, 'e99', 's10', { throwAt: 5 }).message).toBe('getEntry failed at call 5')
    // s79's first 64 steps stop at s16: the old branch is walked to its root, then the target's path goes on.
    expect(expectSame(specs, 'e99', 's79').entries.length).toBe(49)
    expect(expectSame(specs, 'e99', 's79', { throwAt: 100 }).message).toBe('getEntry failed at call 100')
    // A getter that throws among the target's first steps, and one past them.
    for (const at of ['s70', 's20', 'e55', 'e50', 'e20']) {
      const odd = { ...specs, [at]: { ...specs[at], getters: true, throwing: 'parentId' } }
      expectSame(odd, 'e99', 's79')
      expectSame(odd, 'e60', 's79')
      expectSame(odd, 'e99', 's10')
    }
    // A cycle among the target's first steps, and past them.
    for (const [at, to] of [['s30', 's35'], ['s5', 's60'], ['e40', 'e45']]) {
      const odd = { ...specs, [at]: { id: at, parentId: to } }
      expectSame(odd, 'e99', 's79')
      expectSame(odd, 'e45', 's79')
      expectSame(odd, 'e99', 's40')
    }
  })

  test('a target far below the old leaf, or forked near the root: its path is read on past its first steps until it meets the old branch', () => {
    // e0 … e199; the old leaf e10 lies 189 steps above the target e199.
    const specs = chain(200)
    const log = []
    const session = loggingSession(specs, log)
    const form = readEntryPath(session, 'e10', 'e199')
    // The target's 64 steps (e199 … e136), the old branch (e10 … e0), then the target's path on from e135 to e10.
    expect([form.targetSteps, form.oldSteps, form.entries.length]).toEqual([64, 11, 64 + 11 + 126])
    expect(form.entries.at(-1).id).toBe('e10')
    // The native walk takes every step from the form: it calls into the session no more.
    const calls = log.length
    expect(binding.collectEntriesForBranchSummary(session, 'e10', 'e199', form)).toEqual({ entries: [], commonAncestorId: 'e10' })
    expect(log.length).toBe(calls)
    // A form whose old branch would end past its codes is malformed (an
    // internal error, not room made for four billion steps).
    for (const oldSteps of [4e9, form.oldSteps + 127]) {
      expect(() => binding.collectEntriesForBranchSummary(session, 'e10', 'e199', { ...form, oldSteps })).toThrow(/bad read-ahead entry path/)
    }
    expect(binding.collectEntriesForBranchSummary(session, 'e10', 'e199', { ...form, oldSteps: form.oldSteps + 126 })).toEqual({ entries: [], commonAncestorId: 'e10' })
    const r = expectSame(specs, 'e10', 'e199')
    expect([r.entries, r.commonAncestorId]).toEqual([[], 'e10'])
    // Two branches off one root, each 150 long: the old branch is collected whole.
    const forked = { r: { id: 'r', parentId: null } }
    for (const side of ['a', 'b']) for (let j = 0; j < 150; j++) forked[`${side}${j}`] = { id: `${side}${j}`, parentId: j === 0 ? 'r' : `${side}${j - 1}` }
    const both = expectSame(forked, 'a149', 'b149')
    expect([both.entries.length, both.commonAncestorId]).toEqual([150, 'r'])
    expect(readEntryPath(loggingSession(forked, []), 'a149', 'b149').oldSteps).toBe(151)
    // No entry shared at all: the target's path is read to its own root.
    const apart = { ...chain(100, 'x'), ...chain(100, 'y') }
    expect(expectSame(apart, 'x99', 'y99').commonAncestorId).toBe(null)
    // What the native walk meets on the way is met at the same call: a throw, a getter, a cycle, a
    // dangling parent, an id that is no string, an entry looked up under another id.
    for (let throwAt = 60; throwAt < 100; throwAt += 3) expectSame(specs, 'e10', 'e199', { throwAt })
    for (const at of ['e120', 'e60', 'e11', 'e10']) {
      expectSame({ ...specs, [at]: { ...specs[at], getters: true } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { ...specs[at], getters: true, throwing: 'parentId' } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { ...specs[at], getters: true, throwing: 'id' } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { ...specs[at], wrap: 'proxy' } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { id: 7, parentId: specs[at].parentId } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { id: `${at}-other`, parentId: specs[at].parentId } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { id: at, parentId: 'gone' } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { id: at, parentId: 'e150' } }, 'e10', 'e199')
      expectSame({ ...specs, [at]: { id: at, parentId: {} } }, 'e10', 'e199')
    }
    // Past the pass's limit of units (the target's first steps and the old branch hold 278), the native walk reads on.
    for (const limit of [300, 500, 1000]) {
      const log = []
      const nativeLog = []
      const session = loggingSession(specs, log)
      const form = readEntryPath(session, 'e10', 'e199', limit)
      expect(form.entries.length < 201).toBe(limit < 1000)
      const r = binding.collectEntriesForBranchSummary(session, 'e10', 'e199', form)
      const native = binding.collectEntriesForBranchSummary(loggingSession(specs, nativeLog), 'e10', 'e199')
      expect([r.commonAncestorId, r.entries ?? entriesOfPath(form, r.count)]).toEqual([native.commonAncestorId, native.entries])
      expect(log).toEqual(nativeLog)
    }
  })

  test('long cycles and long chains', () => {
    const cycle = chain(300)
    cycle.e0 = { id: 'e0', parentId: 'e299' }
    expectSame(cycle, 'e299', 'e5')
    expectSame(cycle, 'e5', 'e299')
    const long = chain(5000)
    long.t = { id: 't', parentId: 'e10' }
    expectSame(long, 'e4999', 't')
  })

  test('ids past the pass’s limit of units: it stops, the native walk reads on, same answer and calls', () => {
    // The limit is 2 ** 27 units; here a few, so that the walk crosses it with short ids:
    // in the target's steps (28 units: its parents "entry-3" to "entry-0"), or past them on the old branch.
    const specs = { ...chain(12, 'entry-'), t: { id: 't', parentId: 'entry-3' } }
    const whole = readEntryPath(loggingSession(specs, []), 'entry-11', 't')
    // The target's 5 steps (t, entry-3 … entry-0), then the old branch from entry-11 until it meets entry-3.
    expect([whole.targetSteps, whole.entries.length]).toEqual([5, 14])
    for (const limit of [1, 7, 20, 28, 30, 40]) {
      const log = []
      const session = loggingSession(specs, log)
      const form = readEntryPath(session, 'entry-11', 't', limit)
      expect(form.entries.length).toBeLessThan(14) // the limit is reached: the native walk reads the rest
      expect(form.ids.length).toBeGreaterThanOrEqual(limit)
      expect(form.targetSteps).toBe(limit <= 28 ? Math.ceil(limit / 7) : 5)
      // As lib/api.js takes it: the entries, or how many of the form's.
      const viaForm = outcome(() => {
        const r = binding.collectEntriesForBranchSummary(session, 'entry-11', 't', form)
        return r.entries !== undefined ? r : { entries: entriesOfPath(form, r.count), commonAncestorId: r.commonAncestorId }
      })
      const nativeLog = []
      const native = outcome(() => binding.collectEntriesForBranchSummary(loggingSession(specs, nativeLog), 'entry-11', 't'))
      const contents = (o) => o.entries.map((e) => e.message.content)
      expect(viaForm.commonAncestorId).toBe('entry-3')
      expect(contents(viaForm)).toEqual(contents(native))
      expect(contents(viaForm)).toEqual(['entry-4', 'entry-5', 'entry-6', 'entry-7', 'entry-8', 'entry-9', 'entry-10', 'entry-11'])
      expect(log).toEqual(nativeLog)
    }
  })

  test('ids that share a bit of the pass’s quick check with the target’s, and are not among them', () => {
    // Seven look-alikes of the shared entry's id "s0": ids with its bit (idBit).
    const alike = []
    for (let k = 1; alike.length < 7; k++) if (idBit(`s${k}`) === idBit('s0')) alike.push(`s${k}`)
    const old = [...alike, 's0', 'r1', 'r0']
    const specs = {}
    old.forEach((id, i) => (specs[id] = { id, parentId: old[i + 1] ?? null }))
    specs.t = { id: 't', parentId: 's0' }
    const r = expectSame(specs, alike[0], 't')
    expect(r.commonAncestorId).toBe('s0')
    expect(r.entries.map((e) => e.message.content)).toEqual([...alike].reverse())
    // The pass read the old branch ahead down to the shared entry, not stopping at a look-alike.
    const form = readEntryPath(loggingSession(specs, []), alike[0], 't')
    expect([form.targetSteps, form.entries.length]).toEqual([4, 4 + 8])
    // No entry shared: the old branch is read to its root past every look-alike.
    specs.t = { id: 't', parentId: 'z' }
    specs.z = { id: 'z', parentId: null }
    expect(expectSame(specs, alike[0], 't').commonAncestorId).toBe(null)
  })

  test('generated sessions: same answers, same reads', () => {
    const idArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', '\ud800', 'a-long-id-past-the-inline-units')
    const valueArb = fc.oneof({ weight: 8, arbitrary: idArb }, { weight: 1, arbitrary: fc.constantFrom(null, undefined, '', 0, 5, {}, 'gone') })
    const specArb = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record(
          { id: valueArb, parentId: valueArb, getters: fc.boolean(), wrap: fc.constantFrom('plain', 'plain', 'frozen', 'proxy', 'array') },
          { requiredKeys: ['getters', 'wrap'] },
        ),
      },
      { weight: 1, arbitrary: fc.constantFrom(null, undefined, 0, '', 'str', []).map((value) => ({ value })) },
    )
    fc.assert(
      fc.property(fc.dictionary(idArb, specArb), valueArb, valueArb, fc.integer({ min: -1, max: 12 }), fc.boolean(), (specs, old, target, throwAt, sessionProxy) => {
        expectSame(specs, old, target, { throwAt, sessionProxy })
      }),
      { numRuns: RUNS },
    )
  })
})
