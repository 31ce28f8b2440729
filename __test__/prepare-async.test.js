'use strict'
// prepareCompactionAsync: the Promise twin of prepareCompaction. It reads
// the caller's entries as the synchronous call does, in slices, so on any
// input it must give exactly the synchronous result (or error), on the
// caller's own objects.

const gen = require('./helpers/generator')
const { fc } = require('./helpers/property')
const { deepFreeze, snapshot, deepEqual, findDifference, findIdentityDifference, collectObjects } = require('./helpers/compare')
const { LINES } = require('./helpers/ours')
const ours = require('../agent-0.78')
const lines = { '0.78': ours, '1.6': require('../agent-1.6') }

jest.setTimeout(120_000)
const RUNS = Number(process.env.ASYNC_RUNS) || 150

/** The session as a session file holds it. */
const asJson = (entries) => JSON.parse(JSON.stringify(entries))

async function expectTwin(entries, settings, m = ours) {
  deepFreeze(entries)
  const before = snapshot(entries)
  let sync
  let syncError
  try {
    sync = m.prepareCompaction(entries, settings)
  } catch (err) {
    syncError = err
  }
  let async
  let asyncError
  try {
    async = await m.prepareCompactionAsync(entries, settings)
  } catch (err) {
    asyncError = err
  }
  if (syncError || asyncError) {
    expect(asyncError && `${asyncError.name}: ${asyncError.message}`).toBe(syncError && `${syncError.name}: ${syncError.message}`)
    return
  }
  expect(findDifference(sync, async)).toBeNull()
  expect(findIdentityDifference(sync, async, new Set(collectObjects(entries)))).toBeNull()
  expect(deepEqual(snapshot(entries), before)).toBe(true)
  return async
}

describe('prepareCompactionAsync', () => {
  test.each(LINES)(`%s: generated sessions (as JSON) × random settings: the synchronous result, same objects (${RUNS} runs)`, async (line) => {
    const cases = fc.sample(fc.tuple(gen.pathEntriesArb({ line }), gen.compactionSettingsArb), { numRuns: RUNS, seed: 20261130 })
    let planned = 0
    for (const [entries, settings] of cases) {
      const result = await expectTwin(asJson(entries), settings, lines[line])
      if (result) planned++
    }
    // Not a vacuous run: most sessions give a plan.
    expect(planned).toBeGreaterThan(RUNS / 3)
  })

  test('a large session: same plan, and the event loop runs while it works', async () => {
    const entries = asJson(gen.buildLargeSession(20_000, 7))
    const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 }
    let turns = 0
    let stop = false
    const tick = () => {
      if (stop) return
      turns++
      setImmediate(tick)
    }
    setImmediate(tick)
    const result = await expectTwin(entries, settings)
    stop = true
    expect(result).toBeDefined()
    expect(result.messagesToSummarize.length).toBeGreaterThan(0)
    // Reading 20k entries takes several slices, each followed by a turn of the loop.
    expect(turns).toBeGreaterThan(1)
  })

  test.each(LINES)('%s: timers run between the native steps of the plan, and after the last before it resolves', async (line) => {
    // Each step schedules a timer and holds the thread past its due time:
    // the next step must find it run (a step that follows one in the same
    // turn of the loop, as after a libuv pool task resolves, would not).
    const native = require('../binding.js')
    const steps = ['planCut', 'planFinish']
    const saved = steps.map((name) => native[name])
    const seen = []
    let asks = 0
    let due = null
    const hold = () => {
      const until = performance.now() + 3
      while (performance.now() < until);
    }
    steps.forEach((name, k) => {
      native[name] = function (...args) {
        if (due) seen.push(`${due.name} ${due.fired ? 'then a timer' : 'with no timer between'}`)
        const result = saved[k].apply(this, args)
        if (result?.measure !== undefined) asks++
        const step = { name, fired: false }
        setTimeout(() => (step.fired = true), 0)
        due = step
        hold()
        return result
      }
    })
    try {
      const entries = asJson(gen.buildLargeSession(3_000, 11))
      const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
      const result = await lines[line].prepareCompactionAsync(entries, settings)
      expect(result.messagesToSummarize.length).toBeGreaterThan(0)
      seen.push(`${due.name} ${due.fired ? 'then a timer' : 'with no timer between'}`)
    } finally {
      steps.forEach((name, k) => (native[name] = saved[k]))
    }
    // The cut's three steps (the projection, the cut point, the lists),
    // one more for each ask for measures (the cut point's walk), then the plan.
    expect(asks).toBeGreaterThan(0)
    expect(seen).toEqual([...Array(3 + asks).fill('planCut then a timer'), 'planFinish then a timer'])
  })

  test.each(LINES)('%s: an array changed while the call is pending changes nothing: the plan of the entries at the call', async (line) => {
    const m = lines[line]
    const S = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
    const plain = (plan) => JSON.stringify(plan, (_k, v) => (v instanceof Set ? [...v] : v))
    const changes = {
      splice: (e) => e.splice(300, 1),
      push: (e) => e.push(...Array.from({ length: 200 }, (_, i) => ({ ...e[5], id: `x${i}` }))),
      reverse: (e) => e.reverse(),
      null: (e) => {
        e[995] = null
      },
      empty: (e) => {
        e.length = 0
      },
    }
    let turns = 0
    for (const [name, change] of Object.entries(changes)) {
      for (const wait of [0, 1, 3, 5, 6, 7, 10, 30]) {
        const entries = gen.buildLargeSession(1000, 3)
        const expected = m.prepareCompaction(entries, S)
        const pending = m.prepareCompactionAsync(entries, S)
        for (let i = 0; i < wait; i++) await new Promise((resolve) => setImmediate(resolve))
        change(entries)
        const got = await pending.then(plain, (err) => `rejected: ${err.message}`)
        expect({ name, wait, got }).toEqual({ name, wait, got: plain(expected) })
        turns++
      }
    }
    expect(turns).toBe(40)
  })

  test.each(LINES)('%s: the entries are copied at the call without running caller code: a subclass, an own constructor, a Proxy', async (line) => {
    const m = lines[line]
    const S = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
    const entries = gen.buildLargeSession(1000, 3)
    const expected = m.prepareCompaction(entries, S)
    let constructed = 0
    class Entries extends Array {
      constructor(...args) {
        super(...args)
        constructed++
      }
    }
    const subclass = Entries.from(entries)
    constructed = 0
    const ownConstructor = [...entries]
    let constructorReads = 0
    Object.defineProperty(ownConstructor, 'constructor', { get: () => (constructorReads++, Array) })
    for (const input of [subclass, ownConstructor]) {
      const pending = m.prepareCompactionAsync(input, S)
      input.reverse() // a change after the call: the copy is made at the call
      const got = await pending
      input.reverse()
      expect(findDifference(expected, got)).toBeNull()
    }
    expect({ constructed, constructorReads }).toEqual({ constructed: 0, constructorReads: 0 })
    // A Proxy: its length and each index read once, in order, at the call; nothing else.
    const reads = []
    const traps = new Proxy(
      {},
      {
        get: (_t, trap) =>
          trap === 'get'
            ? (target, key, receiver) => (reads.push(key), Reflect.get(target, key, receiver))
            : (...args) => (reads.push(`trap ${trap}`), Reflect[trap](...args)),
      },
    )
    const pending = m.prepareCompactionAsync(new Proxy(entries, traps), S)
    const atCall = reads.length
    expect(findDifference(expected, await pending)).toBeNull()
    expect(reads.length).toBe(atCall)
    const indices = reads.filter((key) => key !== 'length')
    expect(indices).toEqual(entries.map((_e, i) => String(i)))
  })

  test('nothing to do and empty sessions resolve to undefined, as the synchronous call returns', async () => {
    const settings = { enabled: true, reserveTokens: 100, keepRecentTokens: 100 }
    await expect(ours.prepareCompactionAsync([], settings)).resolves.toBeUndefined()
    expect(ours.prepareCompaction([], settings)).toBeUndefined()
  })

  test('bad input rejects with the errors of the synchronous call', async () => {
    const settings = { enabled: true, reserveTokens: 100, keepRecentTokens: 100 }
    const reject = (p) =>
      p.then(
        () => 'resolved',
        (err) => `${err.name}: ${err.message}`,
      )
    const sync = (fn) => {
      try {
        fn()
        return 'returned'
      } catch (err) {
        return `${err.name}: ${err.message}`
      }
    }
    expect(await reject(ours.prepareCompactionAsync('nope', settings))).toBe(sync(() => ours.prepareCompaction('nope', settings)))
    expect(await reject(ours.prepareCompactionAsync([], { enabled: 'yes' }))).toBe(sync(() => ours.prepareCompaction([], { enabled: 'yes' })))
    const bad = [{ type: 'message', id: 'a', parentId: null, timestamp: 't', message: { role: 'user', content: 5 } }]
    expect(await reject(ours.prepareCompactionAsync(bad, settings))).toBe(sync(() => ours.prepareCompaction(bad, settings)))
    const throwing = asJson(gen.buildLargeSession(200, 4))
    Object.defineProperty(throwing[150], 'id', {
      get() {
        throw new Error('id getter failed')
      },
    })
    expect(await reject(ours.prepareCompactionAsync(throwing, settings))).toBe(sync(() => ours.prepareCompaction(throwing, settings)))
    expect(await reject(ours.prepareCompactionAsync(throwing, settings))).toMatch(/id getter failed/)
  })

  test('entries that are not JSON give the synchronous result too: NaN, BigInt, getters, a Proxy', async () => {
    const entries = asJson(gen.buildLargeSession(300, 3))
    const settings = { enabled: true, reserveTokens: 100, keepRecentTokens: 300 }
    const last = entries.findLastIndex((e) => e.type === 'message' && e.message.role === 'assistant')
    const odd = entries.map((e, i) => (i === last ? { ...e, message: { ...e.message, usage: { ...e.message.usage, totalTokens: NaN } } } : e))
    odd.splice(5, 0, { type: 'custom', id: 'big', parentId: odd[4].id, timestamp: 't', data: 1n })
    odd[6] = { ...odd[6], parentId: 'big' }
    const withGetter = { ...odd[10] }
    const { message } = withGetter
    Object.defineProperty(withGetter, 'message', { enumerable: true, get: () => message })
    odd[10] = withGetter
    for (const input of [odd, new Proxy(odd, {})]) {
      const want = ours.prepareCompaction(input, settings)
      const got = await ours.prepareCompactionAsync(input, settings)
      expect(want).toBeDefined()
      expect(findDifference(want, got)).toBeNull()
      expect(findIdentityDifference(want, got, new Set(collectObjects(odd)))).toBeNull()
    }
  })
})
