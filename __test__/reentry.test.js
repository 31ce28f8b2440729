'use strict'
// User code that calls the package again from inside a call: a getter on
// the input that runs serializeConversation or prepareCompaction itself,
// throwing some levels down, or never ending; a getter that adds entries
// to the array being planned.

const gen = require('./helpers/generator')
const { loadReference } = require('./helpers/reference')
const { loadOurs, LINES } = require('./helpers/ours')

const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 1 }

/** `call(input)` on an input whose getter calls it again, `depth` levels deep at most (Infinity: no end). */
function reentering(impl, name, depth) {
  let runs = 0
  let level = 0
  const again = () => {
    runs++
    if (level >= depth) throw new Error('deep enough')
    level++
    try {
      call()
    } finally {
      level--
    }
  }
  const message = { role: 'user', timestamp: 1, get content() { again(); return 'hello' } }
  const entries = [
    { type: 'message', id: 'a', parentId: null, timestamp: 't', message: { role: 'user', content: 'x', timestamp: 1 } },
    { type: 'message', id: 'b', parentId: 'a', timestamp: 't', get message() { again(); return { role: 'user', content: 'y', timestamp: 2 } } },
  ]
  const call = {
    serializeConversation: () => impl.serializeConversation([message]),
    serializeForSummary: () => impl.serializeForSummary([message]),
    projectForSummary: () => impl.projectForSummary([message]),
    // A message the pass leaves to the native reader comes first.
    'serializeConversation after a custom message': () => impl.serializeConversation([{ role: 'custom', customType: 'x', content: 'c', display: true }, message]),
    prepareCompaction: () => impl.prepareCompaction(entries, SETTINGS),
  }[name]
  let error
  const started = Date.now()
  try {
    call()
  } catch (err) {
    error = err
  }
  return { runs, error, ms: Date.now() - started }
}

describe.each(LINES)('agent line %s', (line) => {
  let ref, ours
  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  test.each(['serializeConversation', 'serializeForSummary', 'projectForSummary'])(
    '%s: a getter that calls it again and throws six levels down runs once a level, and its exception passes',
    (name) => {
      const got = reentering(ours, name, 6)
      expect([got.runs, got.error && got.error.message]).toEqual([7, 'deep enough'])
      if (ref[name]) expect(reentering(ref, name, 6).runs).toBe(7)
    },
  )

  test('serializeConversation after a message left to the native reader: a getter that calls it again and throws six levels down runs twice a level, not 2^depth times', () => {
    // The outer call goes native after its pass met the exception; the calls made from the getter read natively.
    const got = reentering(ours, 'serializeConversation after a custom message', 6)
    expect([got.runs, got.error && got.error.message]).toEqual([14, 'deep enough'])
  })

  test('prepareCompaction: a getter that calls it again and throws six levels down runs twice a level, not 2^depth times', async () => {
    // prepareCompactionAsync calls before must leave no count behind.
    for (let i = 0; i < 3; i++) await ours.prepareCompactionAsync(gen.buildLargeSession(50, i), SETTINGS)
    // The outer call's entries pass leaves the throwing entry to the native
    // side, which reads it again; the calls made from the getter read natively.
    const got = reentering(ours, 'prepareCompaction', 6)
    expect([got.runs, got.error && got.error.message]).toEqual([14, 'deep enough'])
    expect(reentering(ref, 'prepareCompaction', 6).runs).toBe(7)
  })

  test('prepareCompaction: a call made from a getter, and the call it is made in, plan as ordinary calls', () => {
    const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
    const plain = gen.buildLargeSession(300, 5)
    const inner = []
    const entries = plain.map((e, i) => (i === 40 ? Object.defineProperty({ ...e }, 'message', { enumerable: true, get: () => (inner.push(ours.prepareCompaction(plain, settings)), e.message) }) : e))
    const outer = ours.prepareCompaction(entries, settings)
    const ordinary = ours.prepareCompaction(plain, settings)
    expect(inner.length).toBeGreaterThan(0)
    for (const got of [outer, ...inner]) {
      expect([got.firstKeptEntryId, got.tokensBefore, got.messagesToSummarize.length, [...got.fileOps.read]]).toEqual([ordinary.firstKeptEntryId, ordinary.tokensBefore, ordinary.messagesToSummarize.length, [...ordinary.fileOps.read]])
    }
  })

  test.each(['serializeConversation', 'prepareCompaction'])('%s: a getter that calls it again without end ends in a RangeError at once, as in the agent', (name) => {
    const got = reentering(ours, name, Infinity)
    expect(got.error).toBeDefined()
    expect(got.error.name).toBe('RangeError')
    expect(got.ms).toBeLessThan(2000)
    expect(reentering(ref, name, Infinity).error.name).toBe('RangeError')
  })

  test('an exception whose own properties throw when read comes through as it is', () => {
    const odd = new Error('odd')
    Object.defineProperty(odd, Symbol.toStringTag, { get: () => { throw new Error('read') } })
    Object.defineProperty(odd, 'name', { get: () => { throw new Error('read') } })
    const entries = [{ type: 'message', id: 'a', parentId: null, timestamp: 't', get message() { throw odd } }]
    const message = { role: 'user', timestamp: 1, get content() { throw odd } }
    for (const call of [() => ours.prepareCompaction(entries, SETTINGS), () => ours.serializeConversation([message])]) {
      let thrown
      try {
        call()
      } catch (err) {
        thrown = err
      }
      expect(thrown).toBe(odd)
    }
  })

  test('prepareCompaction: entries a getter adds while the call reads them are planned, as the agent plans them', () => {
    const session = () => {
      const entries = []
      for (let i = 0; i < 40; i++) {
        const message =
          i % 2 === 0
            ? { role: 'user', content: `question ${i}`, timestamp: i }
            : { role: 'assistant', content: [{ type: 'text', text: 'answer '.repeat(50) }], stopReason: 'stop', usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20 * i }, timestamp: i }
        entries.push({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message })
      }
      let added = false
      Object.defineProperty(entries[39], 'type', {
        enumerable: true,
        get() {
          if (!added) {
            added = true
            for (let k = 0; k < 3; k++) {
              const p = entries[entries.length - 1]
              entries.push({ type: 'message', id: `late${k}`, parentId: p.id, timestamp: p.timestamp, message: { role: 'user', content: 'x'.repeat(9000), timestamp: 99 } })
            }
          }
          return 'message'
        },
      })
      return entries
    }
    const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
    const [mine, theirs] = [ours.prepareCompaction(session(), settings), ref.prepareCompaction(session(), settings)]
    expect(mine.firstKeptEntryId).toBe('late2')
    expect([mine.firstKeptEntryId, mine.messagesToSummarize.length, mine.tokensBefore]).toEqual([theirs.firstKeptEntryId, theirs.messagesToSummarize.length, theirs.tokensBefore])
  })
})
