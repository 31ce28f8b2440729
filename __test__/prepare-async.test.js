'use strict'
// prepareCompactionAsync: the Promise twin of prepareCompaction. It reads
// entries as JSON (as a session file stores them), so on JSON data it must
// give exactly the synchronous result, on the caller's own objects.

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
    // What JSON cannot hold names the entry.
    const big = [{ type: 'custom', id: 'a', parentId: null, timestamp: 't', data: 1n }]
    expect(await reject(ours.prepareCompactionAsync(big, settings))).toBe(
      'TypeError: pathEntries[0]: cannot be read as JSON: Do not know how to serialize a BigInt',
    )
  })

  test('entries are read as JSON, as a session file holds them: NaN reads as null', async () => {
    const entries = asJson(gen.buildLargeSession(200, 3))
    const settings = { enabled: true, reserveTokens: 100, keepRecentTokens: 300 }
    const last = entries.findLastIndex((e) => e.type === 'message' && e.message.role === 'assistant')
    const odd = entries.map((e, i) => (i === last ? { ...e, message: { ...e.message, usage: { ...e.message.usage, totalTokens: NaN } } } : e))
    const viaJson = ours.prepareCompaction(asJson(odd), settings)
    const result = await ours.prepareCompactionAsync(odd, settings)
    expect(result.tokensBefore).toBe(viaJson.tokensBefore)
    expect(result.firstKeptEntryId).toBe(viaJson.firstKeptEntryId)
    expect(result.messagesToSummarize).toHaveLength(viaJson.messagesToSummarize.length)
    // The messages are still the caller's own objects.
    const own = new Set(odd.map((e) => e.message))
    expect(result.messagesToSummarize.filter((m) => own.has(m)).length).toBeGreaterThan(0)
  })
})
