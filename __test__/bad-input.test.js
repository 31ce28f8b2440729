'use strict'
// Bad input and input safety, prime-compaction only (the reference is used only
// to know which inputs it accepts).
//
// 1. prepareCompaction must reject malformed input with a TypeError whose message
//    names the offending entry index and field:
//      - pathEntries that is not an array,
//      - an entry that is null / not an object / lacks `type`,
//      - a `message` entry whose message lacks `role`,
//      - settings missing keepRecentTokens / reserveTokens.
// 2. No function may mutate its inputs: deep-frozen inputs never make ours throw
//    where the reference does not, and a full structural fingerprint (own keys of
//    any kind, attributes, extensibility, Set/Map contents) is unchanged after
//    every call on unfrozen inputs.
// 3. Malformed input never crashes the process: ours returns or throws an Error.

const { spawnSync } = require('node:child_process')
const gen = require('./helpers/generator')
const { fc, checkProperty, NUM_RUNS } = require('./helpers/property')
const { deepFreeze, fingerprint, findDifference, describeValue } = require('./helpers/compare')
const { loadReference } = require('./helpers/reference')
const { loadOurs, PACKAGE_DIR, LINES } = require('./helpers/ours')
const { MODULE_PATHS } = require('./helpers/reference')

jest.setTimeout(300_000)

const SETTINGS = Object.freeze({ enabled: true, reserveTokens: 16384, keepRecentTokens: 20 })
const runs = (fraction) => Math.max(20, Math.round(NUM_RUNS * fraction))

function isTypeError(err) {
  // Realm-independent: the addon may create errors in another realm than Jest's sandbox.
  return err !== null && typeof err === 'object' && (err instanceof TypeError || Object.prototype.toString.call(err) === '[object Error]') && err.name === 'TypeError'
}

function catchError(fn) {
  try {
    const value = fn()
    return { threw: false, value }
  } catch (error) {
    return { threw: true, error }
  }
}

/** Asserts fn throws a TypeError whose message matches every regex in `mentions`. */
function expectTypeError(label, fn, mentions) {
  const r = catchError(fn)
  if (!r.threw) throw new Error(`${label}: expected a TypeError, ours returned ${describeValue(r.value)}`)
  if (!isTypeError(r.error)) throw new Error(`${label}: expected a TypeError, ours threw ${r.error && r.error.name}: ${r.error && r.error.message}`)
  for (const re of mentions) {
    if (!re.test(r.error.message)) throw new Error(`${label}: TypeError message ${JSON.stringify(r.error.message)} does not mention ${re}`)
  }
}

const indexRe = (i) => new RegExp(`(^|[^0-9])${i}([^0-9]|$)`)

// A small valid session to corrupt.
function validSession(n = 6) {
  return gen.buildLargeSession(Math.max(n, 3), 7)
}

// ---------------------------------------------------------------------------
// 1. TypeErrors naming index and field
// ---------------------------------------------------------------------------

// The reference validates nothing: with PRIME_COMPACTION_UNDER_TEST=reference (harness
// self-check) these two blocks are skipped.
const describeValidation = process.env.PRIME_COMPACTION_UNDER_TEST === 'reference' ? describe.skip : describe

/**
 * Every exported function with the arguments derived from one generated
 * session (and its projection, for a line that estimates one).
 */
function callsFor(entries, settings, fileOps, projection) {
  const messages = entries.filter((e) => e && e.type === 'message').map((e) => e.message)
  const calls = [
    ['prepareCompaction', [entries, settings]],
    ['findCutPoint', [entries, 0, entries.length, settings.keepRecentTokens]],
    ['getLastAssistantUsage', [entries]],
    ['estimateContextTokens', [messages]],
    ['convertToLlm', [messages]],
    ['computeFileLists', [fileOps]],
    ['formatFileOperations', [[...fileOps.read], [...fileOps.edited]]],
    ['shouldCompact', [1000, 2000, settings]],
    ['prepareBranchEntries', [entries, settings.keepRecentTokens]],
  ]
  if (projection) calls.push(['estimateProjectedContextTokens', [projection, entries]])
  if (entries.length > 0) calls.push(['findTurnStartIndex', [entries, entries.length - 1, 0]])
  for (const m of messages.slice(0, 10)) {
    calls.push(['estimateTokens', [m]])
    calls.push(['extractFileOpsFromMessage', [m, { read: new Set(), written: new Set(), edited: new Set() }]])
    if (m.role === 'assistant') calls.push(['calculateContextTokens', [m.usage]])
  }
  return calls
}

const garbageArb = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(NaN),
  fc.constant(''),
  fc.constant(-1),
  fc.constant(1e300),
  fc.constant([]),
  fc.constant({}),
  fc.constant([null]),
  fc.constant({ type: 'text' }),
  fc.constant(Symbol('x')),
  fc.constant(() => 'fn'),
  fc.constant(10n),
  fc.constant('\ud800'),
)

/** Replaces one field somewhere inside a (copied) entry by garbage. */
function corrupt(entries, at, pathPick, garbage) {
  if (entries.length === 0) return entries
  const i = at % entries.length
  const copyDeep = (v) => (v && typeof v === 'object' ? (Array.isArray(v) ? v.map(copyDeep) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copyDeep(x)]))) : v)
  const entry = copyDeep(entries[i])
  // Walk down to an object, then overwrite one of its keys.
  let node = entry
  let steps = pathPick
  for (;;) {
    const keys = Object.keys(node)
    if (keys.length === 0) break
    const key = keys[steps % keys.length]
    steps = Math.floor(steps / keys.length)
    const child = node[key]
    if (steps % 3 !== 0 && child && typeof child === 'object' && Object.keys(child).length > 0) {
      node = child
      continue
    }
    node[key] = garbage
    break
  }
  const out = entries.slice()
  out[i] = entry
  return out
}

// ---------------------------------------------------------------------------
// Every line's entry
// ---------------------------------------------------------------------------

describe.each(LINES)('agent line %s', (line) => {
  let ref
  let ours

  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  /** The reference's own projection of the session, where the line has one. */
  function projectionOf(entries) {
    if (!ref.buildSessionProjection) return undefined
    try {
      return ref.buildSessionProjection(entries)
    } catch {
      return undefined
    }
  }

  describeValidation('prepareCompaction rejects malformed pathEntries with a TypeError naming the index and field', () => {
    it.each([
      ['null', null],
      ['undefined', undefined],
      ['a plain object', { 0: { type: 'message' }, length: 1 }],
      ['a string', 'entries'],
      ['a number', 42],
      ['a Set', new Set()],
    ])('pathEntries is %s (not an array)', (_label, value) => {
      expectTypeError('prepareCompaction(non-array)', () => ours.prepareCompaction(value, SETTINGS), [/pathEntries|entries|array/i])
    })

    it('an entry that is null (at a random index)', () => {
      checkProperty(`${line} bad-input null entry`, [fc.integer({ min: 3, max: 40 }), fc.nat()], (n, k) => {
        const entries = validSession(n)
        const i = k % entries.length
        entries[i] = null
        deepFreeze(entries)
        expectTypeError(`prepareCompaction(entries with null at ${i})`, () => ours.prepareCompaction(entries, SETTINGS), [indexRe(i)])
      }, { numRuns: runs(0.02) })
    })

    it('an entry that is not an object (string, number, boolean, undefined, array)', () => {
      checkProperty(`${line} bad-input non-object entry`, [fc.integer({ min: 3, max: 40 }), fc.nat(), fc.constantFrom('message', 7, true, undefined, Symbol('e'), 10n)], (n, k, bad) => {
        const entries = validSession(n)
        const i = k % entries.length
        entries[i] = bad
        deepFreeze(entries)
        expectTypeError(`prepareCompaction(entries with ${String(bad)} at ${i})`, () => ours.prepareCompaction(entries, SETTINGS), [indexRe(i)])
      }, { numRuns: runs(0.02) })
    })

    it('an entry that lacks `type` (or has a non-string type)', () => {
      checkProperty(`${line} bad-input entry without type`, [fc.integer({ min: 3, max: 40 }), fc.nat(), fc.constantFrom('delete', undefined, null, 5, {})], (n, k, typeValue) => {
        const entries = validSession(n)
        const i = k % entries.length
        const copy = { ...entries[i] }
        if (typeValue === 'delete') delete copy.type
        else copy.type = typeValue
        entries[i] = copy
        deepFreeze(entries)
        expectTypeError(`prepareCompaction(entry ${i} type=${String(typeValue)})`, () => ours.prepareCompaction(entries, SETTINGS), [indexRe(i), /type/])
      }, { numRuns: runs(0.02) })
    })

    it('a message entry whose message lacks `role`', () => {
      checkProperty(`${line} bad-input message without role`, [fc.integer({ min: 3, max: 40 }), fc.nat()], (n, k) => {
        const entries = validSession(n)
        const messageIdx = entries.map((e, i) => (e.type === 'message' ? i : -1)).filter((i) => i >= 0)
        const i = messageIdx[k % messageIdx.length]
        const { role, ...rest } = entries[i].message // eslint-disable-line no-unused-vars
        entries[i] = { ...entries[i], message: rest }
        deepFreeze(entries)
        expectTypeError(`prepareCompaction(message entry ${i} without role)`, () => ours.prepareCompaction(entries, SETTINGS), [indexRe(i), /role/])
      }, { numRuns: runs(0.02) })
    })

    it('prepareBranchEntries and generateBranchSummary name the message of a message entry whose role is no string', async () => {
      const S = require('./helpers/summary')
      for (const role of [undefined, 42]) {
        const entries = [...S.branchEntries(), { type: 'message', id: 'b9', parentId: 'b1', timestamp: '2026-01-01T00:00:00.000Z', message: { role, content: 'x', timestamp: 3 } }]
        expectTypeError(`prepareBranchEntries(role ${role})`, () => ours.prepareBranchEntries(entries), [/^entries\[2\]\.message\.role: expected a string/])
        const streamFn = S.scripted([S.text('SUM')])
        await expect(ours.generateBranchSummary(entries, { model: S.MODEL, apiKey: 'k', streamFn })).rejects.toMatchObject({
          message: expect.stringMatching(/^entries\[2\]\.message\.role: expected a string/),
        })
        expect(streamFn.calls).toHaveLength(0)
      }
    })

    it('a message entry whose message is missing / null / not an object', () => {
      for (const bad of [undefined, null, 'text', 3]) {
        const entries = validSession(8)
        const i = entries.findIndex((e, idx) => idx > 2 && e.type === 'message')
        entries[i] = { ...entries[i], message: bad }
        deepFreeze(entries)
        expectTypeError(`prepareCompaction(message entry ${i} with message=${String(bad)})`, () => ours.prepareCompaction(entries, SETTINGS), [indexRe(i), /message/])
      }
    })
  })

  describeValidation('prepareCompaction rejects malformed settings with a TypeError naming the field', () => {
    const entries = deepFreeze(validSession(20))
    it('settings missing keepRecentTokens', () => {
      expectTypeError('prepareCompaction(settings without keepRecentTokens)', () => ours.prepareCompaction(entries, Object.freeze({ enabled: true, reserveTokens: 16384 })), [/keepRecentTokens/])
    })

    it.each([['a string that is no number', 'lots'], ['null', null], ['a boolean', true]])('settings.keepRecentTokens %s', (_label, keepRecentTokens) => {
      expectTypeError('prepareCompaction(settings.keepRecentTokens not a number)', () => ours.prepareCompaction(entries, Object.freeze({ enabled: true, reserveTokens: 16384, keepRecentTokens })), [/keepRecentTokens/])
    })

    it('enabled and reserveTokens are not read (nor by the agent): any or none plan as the reference does', () => {
      for (const settings of [{ keepRecentTokens: 50 }, { enabled: 'x', reserveTokens: null, keepRecentTokens: 50 }, { enabled: false, reserveTokens: 'lots', keepRecentTokens: 50 }]) {
        const prep = ours.prepareCompaction(entries, Object.freeze(settings))
        expect(prep).toEqual(ref.prepareCompaction(entries, settings))
        expect(prep.settings).toBe(settings)
      }
    })

    it.each([['undefined', undefined], ['null', null], ['a number', 5]])('settings is %s', (_label, settings) => {
      expectTypeError('prepareCompaction(bad settings)', () => ours.prepareCompaction(entries, settings), [/settings|keepRecentTokens|reserveTokens/])
    })

    it('the TypeError is thrown for an empty path too (settings are validated)', () => {
      expectTypeError('prepareCompaction([], {})', () => ours.prepareCompaction([], Object.freeze({ enabled: true })), [/keepRecentTokens|reserveTokens/])
    })
  })

  // ---------------------------------------------------------------------------
  // 2. Inputs are never mutated
  // ---------------------------------------------------------------------------

  describe('inputs are never mutated', () => {
    it('deep-frozen generated inputs: ours never throws where the reference does not', () => {
      checkProperty(`${line} bad-input frozen inputs`, [gen.pathEntriesArb({ line }), gen.compactionSettingsArb, gen.fileOpsArb], (entries, settings, fileOps) => {
        deepFreeze([entries, settings, fileOps])
        for (const [name, args] of callsFor(entries, settings, fileOps, projectionOf(entries))) {
          const r = catchError(() => ref[name](...args))
          if (r.threw) continue
          const o = catchError(() => ours[name](...args))
          if (o.threw) throw new Error(`${name} threw on deep-frozen input where the reference did not: ${o.error && o.error.name}: ${o.error && o.error.message}`)
        }
      }, { numRuns: runs(0.25) })
    })

    it('unfrozen generated inputs: structural fingerprint unchanged after every call (Sets, extensibility, hidden keys included)', () => {
      checkProperty(`${line} bad-input no mutation`, [gen.pathEntriesArb({ line }), gen.compactionSettingsArb, gen.fileOpsArb], (entries, settings, fileOps) => {
        // One fingerprint of everything up front; after each call, the call's own inputs are re-fingerprinted.
        const all = [entries, settings, fileOps]
        const before = fingerprint(all)
        const fnIds = new Map()
        const flat = (fp) => JSON.stringify(fp, (_k, v) => (typeof v === 'function' ? `fn#${fnIds.get(v) ?? fnIds.set(v, fnIds.size).get(v)}` : v))
        const beforeFlat = flat(before)
        const check = (what) => {
          const after = fingerprint(all)
          if (flat(after) === beforeFlat) return
          const d = findDifference(before, after, { labels: ['before', 'after'] })
          if (d) throw new Error(`${what} mutated its input: ${d}`)
        }
        for (const [name, args] of callsFor(entries, settings, fileOps, projectionOf(entries))) {
          catchError(() => ours[name](...args))
          // extractFileOpsFromMessage mutates its fileOps argument by design: only the message must be untouched.
          const guarded = name === 'extractFileOpsFromMessage' ? [args[0]] : args
          if (guarded.some((a) => a === entries || a === settings || a === fileOps || (Array.isArray(a) && a.length > 0 && a[0] && a[0].role))) check(name)
        }
        check('an estimateTokens / extractFileOpsFromMessage / calculateContextTokens / formatFileOperations call')
      }, { numRuns: runs(0.15) })
    })

    it('extractFileOpsFromMessage only adds to the given Sets (same Set objects, no other keys touched)', () => {
      const messageArb = line === '1.6' ? fc.oneof(gen.assistantMessageArb, gen.toolResult16Arb) : gen.assistantMessageArb
      checkProperty(`${line} bad-input extractFileOps in place`, [messageArb, gen.fileOpsArb], (message, initial) => {
        deepFreeze(message)
        const ops = { read: new Set(initial.read), written: new Set(initial.written), edited: new Set(initial.edited), extra: 'kept' }
        const sets = [ops.read, ops.written, ops.edited]
        const before = sets.map((s) => [...s])
        ours.extractFileOpsFromMessage(message, ops)
        if (ops.read !== sets[0] || ops.written !== sets[1] || ops.edited !== sets[2]) throw new Error('fileOps Sets were replaced')
        if (ops.extra !== 'kept' || Object.keys(ops).join() !== 'read,written,edited,extra') throw new Error(`fileOps keys changed: ${Object.keys(ops)}`)
        sets.forEach((s, i) => {
          const prefix = [...s].slice(0, before[i].length)
          if (findDifference(before[i], prefix)) throw new Error('existing Set entries were removed or reordered')
        })
      }, { numRuns: runs(0.1) })
    })
  })

  // ---------------------------------------------------------------------------
  // 3. Malformed input never crashes the process
  // ---------------------------------------------------------------------------

  describe('malformed input never crashes: ours returns or throws an Error', () => {
    it('generated sessions with one field anywhere replaced by garbage, every entry-taking function', () => {
      checkProperty(`${line} bad-input garbage fields`, [gen.pathEntriesArb({ line, maxEntries: 30 }), fc.nat(), fc.nat(), garbageArb], (entries, at, pathPick, garbage) => {
        const bad = deepFreeze(corrupt(entries, at, pathPick, garbage))
        const messages = bad.filter((e) => e && e.type === 'message').map((e) => e.message)
        const calls = [
          ['prepareCompaction', () => ours.prepareCompaction(bad, SETTINGS)],
          ['findCutPoint', () => ours.findCutPoint(bad, 0, bad.length, 10)],
          ['getLastAssistantUsage', () => ours.getLastAssistantUsage(bad)],
          ['estimateContextTokens', () => ours.estimateContextTokens(messages)],
          ['convertToLlm', () => ours.convertToLlm(messages)],
          ['prepareBranchEntries', () => ours.prepareBranchEntries(bad, 50)],
        ]
        for (const m of messages) {
          calls.push(['estimateTokens', () => ours.estimateTokens(m)])
          calls.push(['extractFileOpsFromMessage', () => ours.extractFileOpsFromMessage(m, ours.createFileOps())])
        }
        for (const [name, call] of calls) {
          const r = catchError(call)
          if (r.threw && !(r.error !== null && typeof r.error === 'object' && typeof r.error.message === 'string')) {
            throw new Error(`${name} threw a non-Error value: ${describeValue(r.error)}`)
          }
        }
      }, { numRuns: runs(0.25) })
    })

    it('findCutPoint / findTurnStartIndex with out-of-range or non-integer indices', () => {
      const entries = deepFreeze(validSession(30))
      const odd = [-1, entries.length + 5, 1.5, NaN, Infinity, -Infinity, 2 ** 32, '3', undefined, null]
      for (const a of odd) {
        for (const b of [0, entries.length, ...odd]) {
          for (const call of [() => ours.findCutPoint(entries, a, b, 100), () => ours.findTurnStartIndex(entries, a, b)]) {
            const r = catchError(call)
            if (r.threw && !(r.error && typeof r.error.message === 'string')) throw new Error(`threw a non-Error for (${String(a)}, ${String(b)})`)
          }
        }
      }
    })
  })

})

describe('pathological nesting never crashes the process (checked in a child process)', () => {
  // Tool-call arguments nested 200,000 levels deep: JSON.stringify in the reference
  // throws a RangeError; ours may throw any Error (or return), but must not abort,
  // overflow the native stack or hang.
  it('estimateTokens / prepareCompaction / extractFileOpsFromMessage on 200k-deep arguments', () => {
    const target = process.env.PRIME_COMPACTION_UNDER_TEST === 'reference' ? null : PACKAGE_DIR
    const script = `
      const { pathToFileURL } = require('node:url')
      ;(async () => {
        const m = ${target ? `require(${JSON.stringify(target)})` : `await import(pathToFileURL(${JSON.stringify(MODULE_PATHS.compaction)}).href)`}
        let deepA = []; for (let i = 0; i < 200000; i++) deepA = [deepA]
        let deepO = {}; for (let i = 0; i < 200000; i++) deepO = { c: deepO }
        const results = []
        for (const args of [{ path: 'a.ts', a: deepA }, { path: 'o.ts', o: deepO }]) {
          const msg = { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'edit', arguments: args }], api: 'x', provider: 'x', model: 'x', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: 1 }
          const entries = [
            { type: 'message', id: 'a', parentId: null, timestamp: '2024-01-01T00:00:00Z', message: { role: 'user', content: 'go', timestamp: 1 } },
            { type: 'message', id: 'b', parentId: 'a', timestamp: '2024-01-01T00:00:01Z', message: msg },
            { type: 'message', id: 'c', parentId: 'b', timestamp: '2024-01-01T00:00:02Z', message: { role: 'user', content: 'x'.repeat(100), timestamp: 2 } },
          ]
          const calls = {
            estimateTokens: () => m.estimateTokens(msg),
            prepareCompaction: () => m.prepareCompaction(entries, { enabled: true, reserveTokens: 1, keepRecentTokens: 1 }),
            extractFileOpsFromMessage: () => m.extractFileOpsFromMessage(msg, m.createFileOps()),
          }
          for (const [name, call] of Object.entries(calls)) {
            try { call(); results.push(name + ': returned') }
            catch (e) { results.push(name + ': ' + (e instanceof Error ? 'threw ' + e.name : 'threw a non-Error')) }
          }
        }
        console.log(JSON.stringify(results))
      })().catch((e) => { console.error(e); process.exit(3) })
    `
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120_000 })
    const detail = `status ${r.status}, signal ${r.signal}, stderr: ${(r.stderr || '').slice(0, 2000)}`
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null })
    const lines = (r.stdout || '').trim().split('\n')
    const results = JSON.parse(lines[lines.length - 1] || '[]')
    expect(results).toHaveLength(6)
    for (const line of results) expect(`${line} (${detail})`).not.toMatch(/non-Error/)
  })
})

describe('arrays behind a Proxy', () => {
  let ref, ours
  beforeAll(async () => {
    ref = await loadReference()
    ours = await loadOurs()
  })

  test('a Proxy around the entries array plans like the array itself', () => {
    const entries = gen.buildLargeSession(300, 7)
    const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
    const viaProxy = ours.prepareCompaction(new Proxy(entries, {}), settings)
    const expected = ref.prepareCompaction(new Proxy(entries, {}), settings)
    expect(viaProxy.firstKeptEntryId).toBe(expected.firstKeptEntryId)
    expect(viaProxy.tokensBefore).toBe(expected.tokensBefore)
    expect(viaProxy.messagesToSummarize).toEqual(expected.messagesToSummarize)
    // The caller's own messages come back as themselves (custom_message entries are new objects on both sides).
    const own = new Set(entries.map((e) => e.message).filter(Boolean))
    viaProxy.messagesToSummarize.forEach((m, i) => {
      if (own.has(expected.messagesToSummarize[i])) expect(m).toBe(expected.messagesToSummarize[i])
    })
    const messages = entries.filter((e) => e.type === 'message').map((e) => e.message)
    expect(ours.estimateContextTokens(new Proxy(messages, {}))).toEqual(ref.estimateContextTokens(messages))
  })
})

describe.each(LINES)('%s: arrays inside messages behind a Proxy', (line) => {
  let ref, ours
  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  test('content arrays behind a Proxy plan and cut as the reference does', () => {
    const entries = gen.buildLargeSession(300, 11).map((e) =>
      e.type === 'message' && Array.isArray(e.message.content) ? { ...e, message: { ...e.message, content: new Proxy([...e.message.content], {}) } } : e,
    )
    expect(entries.filter((e) => e.type === 'message' && typeof e.message.content === 'object').length).toBeGreaterThan(100)
    const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
    const mine = ours.prepareCompaction(entries, settings)
    const theirs = ref.prepareCompaction(entries, settings)
    expect([mine.firstKeptEntryId, mine.tokensBefore, mine.isSplitTurn]).toEqual([theirs.firstKeptEntryId, theirs.tokensBefore, theirs.isSplitTurn])
    expect(mine.messagesToSummarize.length).toBe(theirs.messagesToSummarize.length)
    expect([...mine.fileOps.read]).toEqual([...theirs.fileOps.read])
    expect(ours.findCutPoint(entries, 0, entries.length, 2000)).toEqual(ref.findCutPoint(entries, 0, entries.length, 2000))
  })

  test('a tool result\'s nested calls behind a Proxy are read as the reference reads them', () => {
    const message = {
      role: 'toolResult',
      toolCallId: 'x',
      toolName: 'code',
      content: [],
      nestedCalls: { calls: new Proxy([{ name: 'read', arguments: { path: 'a.ts' } }], {}) },
      isError: false,
      timestamp: 1,
    }
    const [mine, theirs] = [ours.createFileOps(), ref.createFileOps()]
    ours.extractFileOpsFromMessage(message, mine)
    ref.extractFileOpsFromMessage(message, theirs)
    expect([...mine.read]).toEqual([...theirs.read])
  })
})

describe.each(LINES)('%s: holes in a list of agent messages', (line) => {
  const S = require('./helpers/summary')
  /** The same messages with a hole before each and one after the last. */
  const holey = (list) => {
    const out = []
    list.forEach((m, i) => {
      out[2 * i + 1] = m
    })
    out.length = 2 * list.length + 2
    return out
  }
  let ref, ours
  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  test('convertToLlm passes over them, as its map and filter do; serializeConversation throws as a for...of does', () => {
    const messages = S.splitPreparation(ref).messagesToSummarize
    expect(ours.convertToLlm(holey(messages))).toEqual(ref.convertToLlm(holey(messages)))
    expect(ours.convertToLlm(holey(messages))).toEqual(ours.convertToLlm(messages))
    expect(() => ref.serializeConversation(holey(messages))).toThrow(TypeError)
    expectTypeError('serializeConversation with a hole', () => ours.serializeConversation(holey(messages)), [/messages\[0\]/])
    // An explicit undefined is no hole: both throw.
    expect(() => ref.convertToLlm([undefined])).toThrow(TypeError)
    expectTypeError('convertToLlm([undefined])', () => ours.convertToLlm([undefined]), [/messages\[0\]/])
  })

  test('a Proxy around the list is asked whether an element is there before it is read, as map asks', () => {
    const [a, b, c] = S.splitPreparation(ref).messagesToSummarize
    const hides = { has: (t, k) => k !== '1' && Reflect.has(t, k) }
    const fills = { get: (t, k) => (k === '1' ? b : Reflect.get(t, k)) }
    const throws = { has: () => { throw new Error('has trap') } }
    const cases = [
      [[a, b, c], hides], // [1] is there, has() says not
      [[a, , c], fills], // eslint-disable-line no-sparse-arrays -- get() gives [1], has() says not
      [[a, b, c], throws],
    ]
    for (const [list, handler] of cases) {
      const run = (impl) => {
        try {
          return impl.convertToLlm(new Proxy(list, handler)).map((m) => [a, b, c].indexOf(m))
        } catch (err) {
          return err.message
        }
      }
      expect(run(ours)).toEqual(run(ref))
    }
    expect(ours.convertToLlm(new Proxy([a, , c], fills))).toEqual([a, c]) // eslint-disable-line no-sparse-arrays
    // The transcripts of what convertToLlm keeps.
    for (const name of ['serializeForSummary', 'projectForSummary']) {
      expect(ours[name](new Proxy([a, b, c], hides))).toEqual(ours[name]([a, c]))
    }
  })

  test('generateSummary and compact send what they send without the holes, where the reference accepts them too', async () => {
    const prep = S.splitPreparation(ref)
    const holed = { ...prep, messagesToSummarize: holey(prep.messagesToSummarize), turnPrefixMessages: holey(prep.turnPrefixMessages) }
    const prompts = async (impl, p) => {
      const streamFn = S.scripted([S.text('A'), S.text('B')])
      const result = await impl.compact(p, S.MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      return [result.summary, streamFn.calls.map((c) => c.prompt)]
    }
    const [dense, holed2] = [await prompts(ours, prep), await prompts(ours, holed)]
    expect(holed2).toEqual(dense)
    expect(dense[1]).toHaveLength(2)
    await expect(prompts(ref, holed)).resolves.toEqual(await prompts(ref, prep))
    const summaryPrompt = async (impl, messages) => {
      const streamFn = S.scripted([S.text('A')])
      await impl.generateSummary(messages, S.MODEL, 2000, 'k', undefined, undefined, undefined, undefined, undefined, streamFn)
      return streamFn.calls[0].prompt
    }
    expect(await summaryPrompt(ours, holey(prep.messagesToSummarize))).toBe(await summaryPrompt(ours, prep.messagesToSummarize))
    expect(await summaryPrompt(ref, holey(prep.messagesToSummarize))).toBe(await summaryPrompt(ref, prep.messagesToSummarize))
  })
})

describe.each(LINES)('%s: bashExecutionToText with what is not a message', (line) => {
  test('throws a TypeError where the agent throws, and reads any other value as it does', async () => {
    const [ref, ours] = [await loadReference(line), await loadOurs(line)]
    for (const value of [null, undefined]) {
      expect(() => ref.bashExecutionToText(value)).toThrow(TypeError)
      expectTypeError(`bashExecutionToText(${value})`, () => ours.bashExecutionToText(value), [/^msg: /, new RegExp(String(value))])
    }
    for (const value of [5, 'text', true, {}, [], { command: 'ls', output: 'a' }]) {
      expect(ours.bashExecutionToText(value)).toBe(ref.bashExecutionToText(value))
    }
  })
})

describe('globals as they are at the call (checked in a child process)', () => {
  // Jest runs each file in a realm of its own, whose globals the addon does not see.
  test('JSON.stringify replaced for a call is the one used, as by the reference', () => {
    const script = `
      const { loadReference } = require(${JSON.stringify(require.resolve('./helpers/reference'))})
      const { loadOurs } = require(${JSON.stringify(require.resolve('./helpers/ours'))})
      const gen = require(${JSON.stringify(require.resolve('./helpers/generator'))})
      ;(async () => {
        const [ref, ours] = [await loadReference(), await loadOurs()]
        const message = { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'write', arguments: { path: 'a.ts', content: 'x'.repeat(40) } }], timestamp: 1 }
        // Behind a Proxy, so the native side asks Array.isArray.
        const entries = new Proxy(gen.buildLargeSession(120, 3), {})
        const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 4000 }
        const run = () => [ours.estimateTokens(message), ref.estimateTokens(message), ours.prepareCompaction(entries, settings).firstKeptEntryId, ref.prepareCompaction(entries, settings).firstKeptEntryId]
        const out = { plain: run() }
        const { stringify } = JSON
        let calls = 0
        // Every object's JSON 4,000 characters long.
        JSON.stringify = (v, ...rest) => (typeof v === 'object' && v !== null ? (calls++, 'x'.repeat(4000)) : stringify(v, ...rest))
        out.stringified = [ours.estimateTokens(message), calls, ref.estimateTokens(message), calls]
        out.planned = [ours.prepareCompaction(entries, settings).firstKeptEntryId, ref.prepareCompaction(entries, settings).firstKeptEntryId]
        // Past the last few messages, whose sizes are read in JS, and with a file's contents in the arguments.
        const writes = Array.from({ length: 40 }, (_, i) => ({ role: 'assistant', content: [{ type: 'toolCall', id: 'w' + i, name: 'write', arguments: i % 2 ? { path: 'b.ts', content: 'y'.repeat(3000) } : { path: 'b.ts', edits: [{ oldText: 'z'.repeat(700) }] } }], timestamp: i }))
        out.estimated = [ours.estimateContextTokens(writes).tokens, ref.estimateContextTokens(writes).tokens]
        JSON.stringify = stringify
        out.estimated.push(ours.estimateContextTokens(writes).tokens)
        out.after = run()
        console.log(JSON.stringify(out))
      })().catch((e) => { console.error(e); process.exit(3) })
    `
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 120_000, cwd: PACKAGE_DIR })
    expect({ status: r.status, signal: r.signal, stderr: (r.stderr || '').slice(0, 2000) }).toEqual({ status: 0, signal: null, stderr: '' })
    const out = JSON.parse(r.stdout.trim().split('\n').pop())
    const [mine, theirs] = [out.plain[0], out.plain[1]]
    expect(mine).toBe(theirs)
    expect(out.plain[2]).toBe(out.plain[3])
    // Ours called the replaced JSON.stringify once, as the reference did, and counted what it gave.
    expect(out.stringified).toEqual([out.stringified[2], 1, out.stringified[2], 2])
    expect(out.stringified[0]).toBeGreaterThan(mine)
    // The cut's estimates counted it too: the cut moved, to where the reference's did.
    expect(out.planned[0]).toBe(out.planned[1])
    expect(out.planned[0]).not.toBe(out.plain[2])
    expect(out.after).toEqual(out.plain)
    // The context estimate measures what the replaced one gives, long strings or not.
    expect(out.estimated[0]).toBe(out.estimated[1])
    expect(out.estimated[0]).not.toBe(out.estimated[2])
  })
})

describe('formatFileOperations on odd arrays', () => {
  test('joins like the reference, and gives up on an impossible length at once', async () => {
    const ref = await loadReference()
    const ours = await loadOurs()
    const odd = ['a', undefined, null, 3, 'b']
    expect(ours.formatFileOperations(odd, ['m'])).toBe(ref.formatFileOperations(odd, ['m']))
    const huge = []
    huge.length = 2 ** 32 - 1
    const started = Date.now()
    let error
    try {
      ours.formatFileOperations(huge, [])
    } catch (err) {
      error = err
    }
    expect({ name: error && error.name, message: error && error.message }).toEqual({ name: 'RangeError', message: 'Invalid string length' })
    expect(Date.now() - started).toBeLessThan(1000)
  })

  test('a list met inside itself shows as "", as JS join shows it', async () => {
    const ref = await loadReference()
    const ours = await loadOurs()
    const self = ['x']
    self.push(self, 'y')
    const deep = ['x']
    deep.push(['y', deep])
    const [c, d] = [['m'], ['n']]
    c.push(d)
    d.push(c)
    for (const [read, modified] of [[self, []], [deep, deep], [[c], [d]], [['p', ['q', ['r']]], ['s']]]) {
      expect(ours.formatFileOperations(read, modified)).toBe(ref.formatFileOperations(read, modified))
    }
    expect(ours.formatFileOperations(self, [])).toBe('\n\n<read-files>\nx\n\ny\n</read-files>')
  })

  test("each list is joined by its own join, its elements read once", async () => {
    const ref = await loadReference()
    const ours = await loadOurs()
    const own = Object.assign(['a'], { join: () => 'CUSTOM' })
    class Paths extends Array {
      join() {
        return 'SUBCLASS'
      }
    }
    const proxied = new Proxy(['a'], { get: (t, k) => (k === 'join' ? () => 'PROXY' : Reflect.get(t, k)) })
    for (const list of [own, Paths.from(['a', 'b']), proxied]) {
      expect(ours.formatFileOperations(list, ['m'])).toBe(ref.formatFileOperations(list, ['m']))
    }
    let reads = 0
    const counted = ['a', 'b', ['nested']]
    Object.defineProperty(counted, 0, { get: () => `read${++reads}` })
    expect(ours.formatFileOperations(counted, [])).toBe('\n\n<read-files>\nread1\nb\nnested\n</read-files>')
    expect(reads).toBe(1)
    const notCallable = Object.assign(['a'], { join: 5 })
    expect(() => ref.formatFileOperations(notCallable, [])).toThrow(TypeError)
    expectTypeError('formatFileOperations with join 5', () => ours.formatFileOperations(notCallable, []), [/^readFiles\.join: expected a function, got a number$/])
  })
})

describe.each(LINES)('%s: computeFileLists on odd values', (line) => {
  test('a lone value is not converted (sort has nothing to compare it with), and -0 comes out of the modified Set as 0', async () => {
    const [ref, ours] = [await loadReference(line), await loadOurs(line)]
    const ops = (read, written, edited = []) => ({ read: new Set(read), written: new Set(written), edited: new Set(edited) })
    const boom = { toString: () => { throw new Error('no string') } }
    const s = Symbol('s')
    for (const fileOps of [ops([s], []), ops([], [s]), ops([s], [s]), ops([s, undefined], []), ops([boom], []), ops([-0, 'a'], []), ops([], [-0]), ops(['x'], ['y'], [-0])]) {
      const [mine, theirs] = [ours.computeFileLists(fileOps), ref.computeFileLists(fileOps)]
      expect(mine).toEqual(theirs)
      for (const key of ['readFiles', 'modifiedFiles']) expect(mine[key].map((v) => Object.is(v, -0))).toEqual(theirs[key].map((v) => Object.is(v, -0)))
    }
  })
})

describe.each(LINES)('%s: errors name what the caller passed', (line) => {
  test("extractFileOpsFromMessage: a Set that is not one fails as the agent's own code does", async () => {
    const [ref, ours] = [await loadReference(line), await loadOurs(line)]
    const message = { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'read', arguments: { path: 'a.ts' } }, { type: 'toolCall', id: 'd', name: 'write', arguments: { path: 'b.ts' } }, { type: 'toolCall', id: 'e', name: 'edit', arguments: { path: 'c.ts' } }], timestamp: 1 }
    for (const key of ['read', 'written', 'edited']) {
      const run = (m) => {
        try {
          m.extractFileOpsFromMessage(message, { ...m.createFileOps(), [key]: 42 })
        } catch (err) {
          return `${err.name}: ${err.message}`
        }
      }
      expect(run(ours)).toBe(`TypeError: fileOps.${key}.add is not a function`)
      expect(run(ours)).toBe(run(ref))
    }
  })
})

describe.each(LINES)('%s: generateBranchSummary names a bad value where it sits among the entries', (line) => {
  const { scripted, text, MODEL } = require('./helpers/summary')
  const T = '2026-01-01T00:00:00.000Z'
  const entry = (i, fields) => ({ id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: T, ...fields })
  const user = entry(0, { type: 'message', message: { role: 'user', content: 'hi', timestamp: 1 } })
  const assistant = (content) => ({ role: 'assistant', content, stopReason: 'stop', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, timestamp: 2 })
  const cases = [
    // The toolResult at 1 is left out of the messages: the index is the caller's.
    ['entries[2].message.content[0].arguments: expected an object, got null', [user, entry(1, { type: 'message', message: { role: 'toolResult', toolCallId: 'c0', toolName: 'read', content: [], isError: false, timestamp: 2 } }), entry(2, { type: 'message', message: assistant([{ type: 'toolCall', id: 'c', name: 'read', arguments: null }]) })]],
    ['entries[1].content[0].text: expected a string, got a number', [user, entry(1, { type: 'custom_message', customType: 'x', content: [{ type: 'text', text: 5 }], display: true })]],
    ['entries[1].summary: expected a string, got a number', [user, entry(1, { type: 'branch_summary', fromId: 'e0', summary: 5 })]],
  ]
  if (line === '1.6') {
    cases.push(
      ['entries[2].replacement.content[0].text: expected a string, got a number', [user, entry(1, { type: 'message', message: assistant([{ type: 'text', text: 'a' }]) }), entry(2, { type: 'context_edit', targetId: 'e1', replacement: { content: [{ type: 'text', text: 7 }] } })]],
      ['entries[2].replacement.content[0].text: expected a string, got a number', [user, entry(1, { type: 'custom_message', customType: 'x', content: 'a', display: true }), entry(2, { type: 'context_edit', targetId: 'e1', replacement: { content: [{ type: 'text', text: 9 }] } })]],
      ['entries[2].replacement: expected an object with content, got a number', [user, entry(1, { type: 'message', message: assistant([{ type: 'text', text: 'a' }]) }), entry(2, { type: 'context_edit', targetId: 'e1', replacement: 42 })]],
    )
  }
  test.each(cases)('%s', async (message, entries) => {
    const ours = await loadOurs(line)
    const streamFn = scripted([text('S')])
    await expect(ours.generateBranchSummary(entries, { model: MODEL, apiKey: 'k', streamFn })).rejects.toMatchObject({ name: 'TypeError', message })
    expect(streamFn.calls).toHaveLength(0)
  })

  test('a model that is not one is named as the option it is', async () => {
    const ours = await loadOurs(line)
    await expect(ours.generateBranchSummary([user], { model: 42, apiKey: 'k', streamFn: scripted([text('S')]) })).rejects.toMatchObject({ name: 'TypeError', message: 'options.model: expected an object, got a number' })
  })
})

describe('1.6: prepareCompaction names a bad value of a context edit at the edit', () => {
  test('its replacement, or a field of its content', async () => {
    const ours = await loadOurs('1.6')
    const T = '2026-01-01T00:00:00.000Z'
    const entry = (i, fields) => ({ id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: T, ...fields })
    const path = (replacement) => [
      entry(0, { type: 'message', message: { role: 'user', content: 'x'.repeat(400), timestamp: 1 } }),
      entry(1, { type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'a' }], api: 'x', stopReason: 'stop', timestamp: 2 } }),
      entry(2, { type: 'context_edit', targetId: 'e1', replacement }),
      entry(3, { type: 'message', message: { role: 'user', content: 'y'.repeat(4000), timestamp: 3 } }),
    ]
    const settings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 10 }
    for (const [replacement, message] of [
      [42, 'pathEntries[2].replacement: expected an object with content, got a number'],
      [{ content: null }, 'pathEntries[2].replacement.content: expected an array, got null'],
      [{ content: [{ type: 'text', text: 5 }] }, 'pathEntries[2].replacement.content[0].text: expected a string, got a number'],
    ]) {
      expect(() => ours.prepareCompaction(path(replacement), settings)).toThrow(message)
      await expect(ours.prepareCompactionAsync(path(replacement), settings)).rejects.toThrow(message)
    }
  })
})

describe('1.6: estimateProjectedContextTokens names a projection that is not one', () => {
  test('the projection, or one of its entries', async () => {
    const ours = await loadOurs('1.6')
    for (const projection of [null, 42, 'p']) {
      expectTypeError('estimateProjectedContextTokens', () => ours.estimateProjectedContextTokens(projection, []), [/^projection: expected a session projection \{ messages, entries \}, got /])
    }
    const user = { role: 'user', content: 'hi', timestamp: 1 }
    const assistant = { role: 'assistant', content: [{ type: 'text', text: 'yo' }], usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: 'stop', timestamp: 1 }
    const projection = { messages: [user, assistant], entries: [null, { sourceEntry: { id: 'b' }, messages: [assistant] }] }
    expectTypeError('estimateProjectedContextTokens', () => ours.estimateProjectedContextTokens(projection, []), [/^projection\.entries\[0\]: expected a projected entry \{ sourceEntry, messages \}, got null$/])
  })
})

describe.each(LINES)('%s: calculateContextTokens, each field of each type', (line) => {
  let ours
  beforeAll(async () => {
    ours = await loadOurs(line)
  })
  const parts = { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 }

  test('a truthy totalTokens is the count; 0, -0, NaN, null or none sum the parts', () => {
    expect(ours.calculateContextTokens({ ...parts, totalTokens: 7 })).toBe(7)
    expect(ours.calculateContextTokens({ ...parts, totalTokens: -5 })).toBe(-5)
    for (const totalTokens of [0, -0, NaN, null, undefined]) expect(ours.calculateContextTokens({ ...parts, totalTokens })).toBe(10)
    expect(ours.calculateContextTokens({ ...parts })).toBe(10)
    // A part missing sums to NaN, as `undefined + 1` does.
    expect(ours.calculateContextTokens({ input: 1, totalTokens: 0 })).toBeNaN()
    expect(ours.calculateContextTokens([])).toBeNaN()
  })

  test('a field of another type is a TypeError naming it', () => {
    for (const [totalTokens, got] of [['7', 'a string'], [new Number(7), 'an object'], [7n, 'a symbol or bigint'], [true, 'a boolean']]) {
      expectTypeError(`totalTokens ${got}`, () => ours.calculateContextTokens({ ...parts, totalTokens }), [new RegExp(`^usage\\.totalTokens: expected a number, got ${got}$`)])
    }
    for (const [key, value, got] of [['output', '2', 'a string'], ['output', null, 'null'], ['cacheRead', new Number(3), 'an object'], ['cacheWrite', false, 'a boolean']]) {
      expectTypeError(`${key} ${got}`, () => ours.calculateContextTokens({ ...parts, [key]: value, totalTokens: 0 }), [new RegExp(`^usage\\.${key}: expected a number, got ${got}$`)])
    }
    for (const [usage, got] of [[null, 'null'], [5, 'a number'], [() => 1, 'a function'], [undefined, 'undefined']]) {
      expectTypeError(`usage ${got}`, () => ours.calculateContextTokens(usage), [new RegExp(`^usage: expected an object, got ${got}$`)])
    }
  })
})
