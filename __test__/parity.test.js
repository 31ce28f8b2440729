'use strict'
// Parity, per agent line: prime-compaction's entry for the line
// (require('../agent-0.78'), require('../agent-1.6')) against that line's
// reference compaction module (@earendil-works/pi-coding-agent 0.78.1, 1.6.0),
// on the same deep-frozen inputs, generated as that line's sessions are. Results must be deep-equal (strict: Sets and Maps by
// content AND insertion order, object keys in the same order, undefined-valued
// keys present in both or neither, NaN/-0 distinguished) and, for functions that
// hand back the caller's objects, identity-equal as well.
//
// PARITY_RUNS (default 2000) sets the number of generated sessions per main
// property; PARITY_SEED replays a run (the seed is printed on failure).

const gen = require('./helpers/generator')
const { fc, checkProperty, NUM_RUNS, BASE_SEED } = require('./helpers/property')
const { deepFreeze, collectObjects, findDifference, snapshot } = require('./helpers/compare')
const { createChecks, freezeInputs, expectUnchanged } = require('./helpers/parity-checks')
const { loadReference } = require('./helpers/reference')
const { loadOurs, underTestLabel, LINES } = require('./helpers/ours')

jest.setTimeout(300_000)

const runs = (fraction) => Math.max(20, Math.round(NUM_RUNS * fraction))

// Tool-call arguments on which JSON.stringify throws (the types allow any value):
// the reference throws exactly when it estimates that message, so ours must throw the
// same kind of error in the same situations, and return the same result otherwise.
function poisonValue(kind) {
  switch (kind) {
    case 'cycle': {
      const o = { path: 'src/cycle.ts' }
      o.self = o
      return o
    }
    case 'bigint':
      return { path: 'src/big.ts', n: 10n }
    case 'toJSON-throws':
      return { path: 'src/throws.ts', bad: { toJSON() { throw new RangeError('toJSON boom') } } }
    case 'getter-throws':
      return Object.defineProperty({ path: 'src/getter.ts' }, 'bad', { enumerable: true, get() { throw new SyntaxError('getter boom') } })
    default:
      throw new Error(kind)
  }
}

// ---------------------------------------------------------------------------
// Targeted cases (always run, independent of the seed)
// ---------------------------------------------------------------------------

function ts(i) {
  return new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString()
}

function chain(kinds) {
  return kinds.map((fields, i) => ({ ...fields, id: fields.id ?? `t${String(i).padStart(7, '0')}`, parentId: i === 0 ? null : (kinds[i - 1].id ?? `t${String(i - 1).padStart(7, '0')}`), timestamp: fields.timestamp ?? ts(i) }))
}

const ZERO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }
const user = (content) => ({ type: 'message', message: { role: 'user', content, timestamp: 1 } })
const assistant = (content, extra = {}) => ({ type: 'message', message: { role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'm', usage: { ...ZERO_USAGE, cost: { ...ZERO_USAGE.cost } }, stopReason: 'toolUse', timestamp: 2, ...extra } })
const toolCall = (name, args) => ({ type: 'toolCall', id: `call_${name}`, name, arguments: args })

const TARGETED = [
  ['empty path', []],
  ['single user message', chain([user('hello')])],
  ['compaction as the very last entry', chain([user('a'), assistant([{ type: 'text', text: 'b' }]), { type: 'compaction', summary: 's', firstKeptEntryId: 't0000001', tokensBefore: 5 }])],
  ['previous compaction whose firstKeptEntryId is missing', chain([user('a'.repeat(500)), { type: 'compaction', summary: 'prev', firstKeptEntryId: 'gone', tokensBefore: 5, details: { readFiles: ['r.ts'], modifiedFiles: ['m.ts'] } }, user('b'.repeat(500)), assistant([toolCall('read', { path: 'x.ts' })]), user('c'.repeat(500))])],
  ['previous compaction details with non-string file entries', chain([user('a'.repeat(500)), { type: 'compaction', summary: 'prev', firstKeptEntryId: 't0000000', tokensBefore: 5, details: { readFiles: ['r.ts', 1, null], modifiedFiles: [2, 'm.ts'] } }, user('b'.repeat(500)), user('c'.repeat(500))])],
  ['previous compaction fromHook: details ignored', chain([user('a'.repeat(500)), { type: 'compaction', summary: 'prev', firstKeptEntryId: 't0000000', tokensBefore: 5, details: { readFiles: ['r.ts'], modifiedFiles: ['m.ts'] }, fromHook: true }, user('b'.repeat(500)), user('c'.repeat(500))])],
  ['tool call arguments with odd numbers', chain([user('go'), assistant([toolCall('write', { path: 'n.ts', a: 1e21, b: -0, c: 0.1, d: 2.1e-5, e: 5e-324, f: 1e300, g: 2 ** 53 + 2, h: 123456789012345680000, i: NaN, j: Infinity, k: -1e-7 })]), user('x'.repeat(200))])],
  ['tool call arguments with undefined values, toJSON, Date, nested arrays', chain([user('go'), assistant([toolCall('edit', { path: 'e.ts', u: undefined, arr: [undefined, () => 1, 1], t: { toJSON: () => 'T' }, k: { toJSON: (key) => key }, d: new Date(0), bad: new Date(NaN), nested: { a: [{ b: { c: [] } }] } })]), user('x'.repeat(200))])],
  ['strings with emoji, CJK, lone surrogates, U+2028, control chars', chain([user('😀你好\ud83d\u2028\u0001'), assistant([{ type: 'thinking', thinking: '\udc00\u2029' }, toolCall('read', { path: 'lone\ud83d.ts', s: '\ud83d\u0000\u001f"\\\u2028' })]), user('x'.repeat(200))])],
  ['arguments.path: missing, empty, non-string', chain([user('go'), assistant([toolCall('read', {}), toolCall('read', { path: '' }), toolCall('write', { path: 42 }), toolCall('edit', { path: null }), toolCall('edit', { path: ['a'] }), toolCall('read', { path: new String('boxed') })]), user('x'.repeat(200))])], // eslint-disable-line no-new-wrappers
  ['file path sort order: UTF-16 code units (not UTF-8 bytes, not locale)', chain([user('go'), assistant([toolCall('read', { path: '\uff01' }), toolCall('read', { path: '😀' }), toolCall('read', { path: 'B' }), toolCall('read', { path: 'a' }), toolCall('read', { path: 'é' }), toolCall('read', { path: 'e\u0301' }), toolCall('edit', { path: '\ue000' }), toolCall('write', { path: '𝄞' })]), user('x'.repeat(200))])],
  ['custom_message and branch_summary with unparseable / odd timestamps', chain([{ type: 'custom_message', customType: 'c', content: 'hi', display: true, timestamp: 'garbage' }, { type: 'branch_summary', fromId: 'root', summary: 'sum', timestamp: '2024-01-15' }, { type: 'custom_message', customType: 'c', content: [{ type: 'text', text: 't' }], display: false, details: { x: 1 }, timestamp: '2024-01-15T10:30:00' }, { type: 'custom_message', customType: 'c', content: 'z', display: true, timestamp: '+275760-09-13T00:00:00.001Z' }, user('x'.repeat(400))])],
  ['all-zero usage and totalTokens 0', chain([user('a'), assistant([{ type: 'text', text: 'b' }], { stopReason: 'stop' }), user('c')])],
  ['aborted and error assistant messages skipped for usage', chain([user('a'), assistant([{ type: 'text', text: 'b' }], { stopReason: 'stop', usage: { ...ZERO_USAGE, input: 10, totalTokens: 0, cost: { ...ZERO_USAGE.cost } } }), assistant([], { stopReason: 'aborted', usage: { ...ZERO_USAGE, totalTokens: 99, cost: { ...ZERO_USAGE.cost } } }), assistant([], { stopReason: 'error', usage: { ...ZERO_USAGE, totalTokens: 77, cost: { ...ZERO_USAGE.cost } } })])],
  ['image blocks count 4800 chars', chain([user([{ type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'text', text: '' }]), { type: 'message', message: { role: 'toolResult', toolCallId: 'c', toolName: 'read', content: [{ type: 'image', data: '', mimeType: 'image/png' }], isError: false, timestamp: 3 } }, user('x')])],
  ['bashExecution with excludeFromContext', chain([{ type: 'message', message: { role: 'bashExecution', command: 'ls', output: 'a\nb', exitCode: 0, cancelled: false, truncated: false, timestamp: 1, excludeFromContext: true } }, { type: 'message', message: { role: 'bashExecution', command: 'false', output: '', exitCode: 1, cancelled: false, truncated: true, fullOutputPath: '/tmp/o', timestamp: -0 } }, user('x'.repeat(100))])],
  ['branch_summary with empty summary and details', chain([user('a'.repeat(100)), { type: 'branch_summary', fromId: 't0000000', summary: '', details: { readFiles: ['q.ts'] }, fromHook: false }, user('b'.repeat(100))])],
  ['duplicate ids are not generated, but a firstKeptEntryId equal to the compaction id is', chain([user('a'.repeat(300)), { type: 'compaction', id: 'selfref', summary: 's', firstKeptEntryId: 'selfref', tokensBefore: 1 }, user('b'.repeat(300)), user('c'.repeat(300))])],
  ['entry with empty id as cut point (reference returns undefined)', chain([user('a'.repeat(300)), { ...user('b'.repeat(300)), id: '' }, user('c')])],
]

// ---------------------------------------------------------------------------
// Every line: the same properties against that line's reference
// ---------------------------------------------------------------------------

describe.each(LINES)('agent line %s', (line) => {
  // The line's reference module and ours, loaded before its first test.
  let ref
  let ours

  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
    checks = createChecks(ref, ours)
    // eslint-disable-next-line no-console
    console.log(`parity ${line}: ${underTestLabel()} vs reference; PARITY_SEED=${BASE_SEED} PARITY_RUNS=${NUM_RUNS}`)
  })

  /** The messages a session of this line holds, standalone. */
  const agentMessageArb = line === '1.6' ? gen.agentMessage16Arb : gen.agentMessageArb

  // The comparisons, one copy shared with the soak (helpers/parity-checks.js):
  // same outcome, deep-equal values, identity of the caller's objects.
  let checks
  const expectSame = (...args) => checks.expectSame(...args)
  const checkPrepareCompaction = (...args) => checks.checkPrepareCompaction(...args)
  const messagesFor = (entries) => checks.messagesFor(entries)

  const sessionArb = gen.pathEntriesArb({ line })
  const nonEmptySessionArb = gen.pathEntriesArb({ line }).filter((e) => e.length > 0)

  // ---------------------------------------------------------------------------
  // Export surface
  // ---------------------------------------------------------------------------

  const REQUIRED_EXPORTS = [
    'prepareCompaction',
    'estimateTokens',
    'findCutPoint',
    'findTurnStartIndex',
    'getLastAssistantUsage',
    'estimateContextTokens',
    'calculateContextTokens',
    'shouldCompact',
    'convertToLlm',
    'createFileOps',
    'extractFileOpsFromMessage',
    'computeFileLists',
    'formatFileOperations',
    'DEFAULT_COMPACTION_SETTINGS',
    ...(line === '1.6' ? ['estimateProjectedContextTokens'] : []),
  ]

  describe('export surface', () => {
    it('exports every function and constant compared by this suite, with the reference types', () => {
      const problems = []
      for (const name of REQUIRED_EXPORTS) {
        if (!(name in ours)) problems.push(`${name}: missing`)
        else if (typeof ours[name] !== typeof ref[name]) problems.push(`${name}: ${typeof ours[name]} (reference ${typeof ref[name]})`)
      }
      expect(problems).toEqual([])
    })

    it("functions have the reference's name and length (declared parameters)", () => {
      const shared = Object.keys(ref).filter((name) => typeof ref[name] === 'function' && name in ours)
      expect(shared).toEqual(expect.arrayContaining(REQUIRED_EXPORTS.filter((name) => typeof ref[name] === 'function')))
      const shape = (api) => shared.map((name) => `${name}: ${api[name].name}/${api[name].length}`)
      expect(shape(ours)).toEqual(shape(ref))
    })

    it('DEFAULT_COMPACTION_SETTINGS deep-equals the reference (same keys, same order, same values)', () => {
      expect(findDifference(ref.DEFAULT_COMPACTION_SETTINGS, ours.DEFAULT_COMPACTION_SETTINGS)).toBeNull()
    })

    it('createFileOps() returns { read, written, edited } empty Sets, a fresh object each call', () => {
      expectSame('createFileOps()', () => ref.createFileOps(), () => ours.createFileOps())
      const a = ours.createFileOps()
      const b = ours.createFileOps()
      expect(a).not.toBe(b)
      expect(a.read).not.toBe(b.read)
      a.read.add('x')
      expect(b.read.size).toBe(0)
      expect(Object.prototype.toString.call(a.read)).toBe('[object Set]')
    })
  })

  // ---------------------------------------------------------------------------
  // prepareCompaction
  // ---------------------------------------------------------------------------

  describe('prepareCompaction(pathEntries, settings): deep-equal result and object identity vs reference', () => {
    it(`generated sessions × random settings (${NUM_RUNS} runs)`, () => {
      checkProperty(`${line} prepareCompaction random settings`, [sessionArb, gen.compactionSettingsArb], (entries, settings) => {
        checkPrepareCompaction(entries, settings)
      })
    })

    it('generated sessions × DEFAULT_COMPACTION_SETTINGS (keepRecentTokens 20000)', () => {
      checkProperty(`${line} prepareCompaction default settings`, [sessionArb], (entries) => {
        checkPrepareCompaction(entries, { ...ref.DEFAULT_COMPACTION_SETTINGS })
      }, { numRuns: runs(0.25) })
    })

    it('generated sessions × keepRecentTokens 0 and 1', () => {
      checkProperty(`${line} prepareCompaction keepRecentTokens 0/1`, [sessionArb, fc.constantFrom(0, 1), gen.reserveTokensArb], (entries, keep, reserve) => {
        checkPrepareCompaction(entries, { enabled: true, reserveTokens: reserve, keepRecentTokens: keep })
      }, { numRuns: runs(0.25) })
    })

    it('generated sessions × small keepRecentTokens (2..300)', () => {
      checkProperty(`${line} prepareCompaction small keep`, [sessionArb, fc.integer({ min: 2, max: 300 })], (entries, keep) => {
        checkPrepareCompaction(entries, { enabled: true, reserveTokens: 16384, keepRecentTokens: keep })
      }, { numRuns: runs(0.25) })
    })

    it('generated sessions × huge keepRecentTokens (1e9, MAX_SAFE_INTEGER, Infinity)', () => {
      checkProperty(`${line} prepareCompaction huge keep`, [sessionArb, fc.constantFrom(1e9, Number.MAX_SAFE_INTEGER, Infinity)], (entries, keep) => {
        checkPrepareCompaction(entries, { enabled: false, reserveTokens: 16384, keepRecentTokens: keep })
      }, { numRuns: runs(0.1) })
    })

    it('longer turn-shaped sessions (up to 150 entries)', () => {
      checkProperty(`${line} prepareCompaction turn-shaped`, [gen.pathEntriesArb({ line, maxEntries: 150, shape: 'turns' }), gen.compactionSettingsArb], (entries, settings) => {
        checkPrepareCompaction(entries, settings)
      }, { numRuns: runs(0.1) })
    })

    it('previous compaction / branch_summary details whose file lists hold non-strings (details is `unknown`)', () => {
      checkProperty(`${line} prepareCompaction non-string details files`, [gen.pathEntriesArb({ line, oddFileEntries: true }), gen.compactionSettingsArb], (entries, settings) => {
        checkPrepareCompaction(entries, settings)
      }, { numRuns: runs(0.25) })
    })

    it('settings object is returned as the caller\'s own object, extra settings keys survive', () => {
      const entries = gen.buildLargeSession(60, 3)
      const settings = { enabled: true, reserveTokens: 100, keepRecentTokens: 50, extra: 'kept' }
      const res = checkPrepareCompaction(entries, settings)
      expect(res.ours.settings).toBe(settings)
    })

    it('sessions built through the reference SessionManager (appends, branches, labels, compactions; 1.6: system messages, context edits, usage)', () => {
      const opArb = fc.oneof(
        { weight: 8, arbitrary: fc.oneof(gen.userMessageArb, gen.assistantMessageArb, gen.toolResultMessageArb, gen.bashExecutionMessageArb, gen.customMessageArb).map((m) => ({ op: 'message', m })) },
        { weight: 1, arbitrary: fc.constantFrom('off', 'low', 'high').map((l) => ({ op: 'thinking', l })) },
        { weight: 1, arbitrary: fc.constant({ op: 'model' }) },
        { weight: 2, arbitrary: fc.tuple(fc.nat(), gen.bodyArb(300), fc.boolean()).map(([n, s, hook]) => ({ op: 'compaction', n, s, hook })) },
        { weight: 1, arbitrary: fc.tuple(fc.nat(), gen.bodyArb(300)).map(([n, s]) => ({ op: 'branchWithSummary', n, s })) },
        { weight: 1, arbitrary: fc.nat().map((n) => ({ op: 'branch', n })) },
        { weight: 1, arbitrary: fc.tuple(fc.nat(), gen.textArb(8)).map(([n, l]) => ({ op: 'label', n, l })) },
        { weight: 1, arbitrary: gen.bodyArb(200).map((c) => ({ op: 'customMessage', c })) },
        { weight: 1, arbitrary: fc.constant({ op: 'customEntry' }) },
        { weight: 1, arbitrary: gen.textArb(10).map((name) => ({ op: 'info', name })) },
        // What the 1.6 agent appends besides: system prompt state, context edits, usage.
        ...(line === '1.6'
          ? [
              { weight: 2, arbitrary: gen.systemMessageArb.map((m) => ({ op: 'message', m })) },
              { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.option(gen.replacementContentArb, { nil: null })).map(([n, c]) => ({ op: 'contextEdit', n, replacement: c === null ? null : { content: c } })) },
              { weight: 1, arbitrary: gen.usageArb.map((usage) => ({ op: 'usage', usage })) },
            ]
          : []),
      )
      checkProperty(`${line} prepareCompaction SessionManager-built`, [fc.array(opArb, { maxLength: 50 }), gen.compactionSettingsArb], (ops, settings) => {
        const sm = ref.SessionManager.inMemory('/tmp/prime-compaction-parity')
        const ids = []
        for (const o of ops) {
          const pick = (n) => ids[n % ids.length]
          switch (o.op) {
            case 'message':
              ids.push(sm.appendMessage({ ...o.m }))
              break
            case 'thinking':
              ids.push(sm.appendThinkingLevelChange(o.l))
              break
            case 'model':
              ids.push(sm.appendModelChange('anthropic', 'claude-sonnet-4-5'))
              break
            case 'compaction':
              if (ids.length) ids.push(sm.appendCompaction(o.s, pick(o.n), 1234, { readFiles: ['a.ts'], modifiedFiles: ['b.ts'] }, o.hook ? true : undefined))
              break
            case 'branchWithSummary':
              if (ids.length) ids.push(sm.branchWithSummary(pick(o.n), o.s))
              break
            case 'branch':
              if (ids.length) sm.branch(pick(o.n))
              break
            case 'label':
              if (ids.length) ids.push(sm.appendLabelChange(pick(o.n), o.l))
              break
            case 'customMessage':
              ids.push(sm.appendCustomMessageEntry('ext', o.c, true, { any: 1 }))
              break
            case 'customEntry':
              ids.push(sm.appendCustomEntry('ext', { state: 1 }))
              break
            case 'info':
              ids.push(sm.appendSessionInfo(o.name))
              break
            case 'contextEdit':
              // The manager refuses targets off the branch or without editable content.
              try {
                if (ids.length) ids.push(sm.appendContextEdit(pick(o.n), o.replacement))
              } catch {
                // not editable
              }
              break
            case 'usage':
              ids.push(sm.appendUsage('compaction', 'anthropic', 'claude-sonnet-4-5', o.usage).id)
              break
            default:
              break
          }
        }
        checkPrepareCompaction(sm.getBranch(), settings)
      }, { numRuns: runs(0.15) })
    })

    it('v1 / v2 session files migrated with the reference parseSessionEntries + migrateSessionEntries', () => {
      // Non-finite numbers would come back from JSON as null, which the types do not allow: write 0 instead.
      const v1Line = (o) => JSON.stringify(o, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? 0 : v))
      checkProperty(`${line} prepareCompaction migrated v1/v2`, [fc.array(gen.agentMessageArb, { minLength: 1, maxLength: 30 }), fc.nat(), fc.constantFrom(1, 2), gen.compactionSettingsArb], (msgs, k, version, settings) => {
        const lines = [v1Line({ type: 'session', version: version === 1 ? undefined : 2, id: 'sess', timestamp: '2024-01-01T00:00:00.000Z', cwd: '/w' })]
        let n = 0
        for (const m of msgs) {
          lines.push(v1Line({ type: 'message', timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, ++n)).toISOString(), message: m.role === 'custom' && version === 2 ? { ...m, role: 'hookMessage' } : m }))
          if (version === 1 && n % 7 === 3) {
            lines.push(v1Line({ type: 'compaction', timestamp: '2024-01-01T01:00:00.000Z', summary: 'older work', firstKeptEntryIndex: 1 + (k % n), tokensBefore: 999 }))
          }
        }
        lines.push(v1Line({ type: 'message', timestamp: '2024-01-01T02:00:00.000Z', message: { role: 'user', content: 'continue', timestamp: 1 } }))
        const fileEntries = ref.parseSessionEntries(lines.join('\n'))
        ref.migrateSessionEntries(fileEntries)
        const entries = fileEntries.filter((e) => e.type !== 'session')
        checkPrepareCompaction(entries, settings)
      }, { numRuns: runs(0.1) })
    })
  })

  describe('prepareCompaction and friends with tool-call arguments that make JSON.stringify throw', () => {
    const poisonKindArb = fc.constantFrom('cycle', 'bigint', 'toJSON-throws', 'getter-throws')
    it('same throw / return behaviour as the reference (cycles, BigInt, throwing toJSON, throwing getter)', () => {
      checkProperty(`${line} poisoned tool-call arguments`, [gen.pathEntriesArb({ line, shape: 'turns' }), fc.nat(), poisonKindArb, gen.compactionSettingsArb], (entries, at, kind, settings) => {
        const assistants = entries.map((e, i) => (e.type === 'message' && e.message.role === 'assistant' && Array.isArray(e.message.content) ? i : -1)).filter((i) => i >= 0)
        if (assistants.length === 0) return
        const i = assistants[at % assistants.length]
        const poisoned = entries.slice()
        const message = poisoned[i].message
        // Copies that keep the prototype (generated entries may inherit `type` / `role`).
        const withOwn = (o, extra) => Object.assign(Object.create(Object.getPrototypeOf(o)), o, extra)
        poisoned[i] = withOwn(poisoned[i], { message: withOwn(message, { content: [...message.content, { type: 'toolCall', id: 'poison', name: 'read', arguments: poisonValue(kind) }] }) })
        const inputObjects = freezeInputs(poisoned, settings)
        expectSame(`prepareCompaction(poison ${kind} at ${i})`, () => ref.prepareCompaction(poisoned, settings), () => ours.prepareCompaction(poisoned, settings), inputObjects)
        expectSame(`findCutPoint(poison ${kind} at ${i})`, () => ref.findCutPoint(poisoned, 0, poisoned.length, settings.keepRecentTokens), () => ours.findCutPoint(poisoned, 0, poisoned.length, settings.keepRecentTokens))
        const messages = poisoned.filter((e) => e.type === 'message').map((e) => e.message)
        expectSame(`estimateContextTokens(poison ${kind})`, () => ref.estimateContextTokens(messages), () => ours.estimateContextTokens(messages))
        expectSame(`estimateTokens(poison ${kind})`, () => ref.estimateTokens(poisoned[i].message), () => ours.estimateTokens(poisoned[i].message))
        checks.checkExtractFileOps(poisoned[i].message)
      }, { numRuns: runs(0.1) })
    })

    it('deeply nested arguments (depth 2,000 arrays and objects) estimate like the reference', () => {
      let nestedArray = ['leaf']
      let nestedObject = { leaf: '😀' }
      for (let d = 0; d < 2000; d++) {
        nestedArray = [nestedArray, d]
        nestedObject = { d, child: nestedObject }
      }
      const entries = deepFreeze(chain([user('go'), assistant([toolCall('write', { path: 'deep.ts', a: nestedArray, o: nestedObject })]), user('x'.repeat(100))]))
      // Deep-frozen and free of Sets/Dates: skip the (recursive) snapshot comparison.
      for (const keep of [0, 1, 20000]) checkPrepareCompaction(entries, { enabled: true, reserveTokens: 1, keepRecentTokens: keep }, { checkMutation: false })
      expectSame('estimateTokens(deep)', () => ref.estimateTokens(entries[1].message), () => ours.estimateTokens(entries[1].message))
    })
  })

  describe('prepareCompaction: timestamps without an offset under non-UTC time zones', () => {
    const savedTz = process.env.TZ
    afterAll(() => {
      if (savedTz === undefined) delete process.env.TZ
      else process.env.TZ = savedTz
    })
    for (const tz of ['America/New_York', 'Asia/Kolkata']) {
      it(`TZ=${tz}: custom_message / branch_summary timestamps parsed like Date`, () => {
        process.env.TZ = tz
        const timestamps = fc.constantFrom(...gen.ODD_PARSEABLE_TIMESTAMPS, ...gen.UNPARSEABLE_TIMESTAMPS, '2024-07-01T12:00:00', '2024-03-10 02:30:00')
        const entryArb = fc.tuple(timestamps, fc.boolean(), gen.textArb(10)).map(([ts, isCustom, text]) => ({ ts, isCustom, text }))
        checkProperty(`${line} prepareCompaction TZ ${tz}`, [fc.array(entryArb, { minLength: 1, maxLength: 12 })], (specs) => {
          const entries = []
          specs.forEach((s, i) => {
            const base = { id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: s.ts }
            entries.push(s.isCustom
              ? { type: 'custom_message', ...base, customType: 'x', content: s.text, display: true }
              : { type: 'branch_summary', ...base, fromId: 'root', summary: s.text || 's' })
          })
          entries.push({ type: 'message', id: 'last', parentId: entries[entries.length - 1].id, timestamp: '2024-01-01T00:00:00Z', message: { role: 'user', content: 'x'.repeat(400), timestamp: 1 } })
          checkPrepareCompaction(entries, { enabled: true, reserveTokens: 1, keepRecentTokens: 1 })
        }, { numRuns: runs(0.1) })
      })
    }
  })

  // ---------------------------------------------------------------------------
  // Token estimation and cut points
  // ---------------------------------------------------------------------------

  describe('estimateTokens(message): same number as the reference', () => {
    it('every message of generated sessions (entry messages and buildSessionContext messages)', () => {
      checkProperty(`${line} estimateTokens session messages`, [sessionArb], (entries) => {
        deepFreeze(entries)
        for (const m of messagesFor(entries)) {
          expectSame(`estimateTokens(${m.role} message)`, () => ref.estimateTokens(m), () => ours.estimateTokens(m))
        }
      })
    })

    it('standalone messages of every role, including huge strings', () => {
      const msgArb = fc.oneof(
        { weight: 20, arbitrary: agentMessageArb },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...gen.HUGE_STRINGS), agentMessageArb).map(([h, m]) => ({ ...m, ...(m.role === 'user' ? { content: h } : {}), ...(m.role === 'bashExecution' ? { output: h } : {}), ...(m.role === 'branchSummary' || m.role === 'compactionSummary' ? { summary: h } : {}) })) },
      )
      checkProperty(`${line} estimateTokens standalone`, [msgArb], (m) => {
        deepFreeze(m)
        expectSame(`estimateTokens(${m.role} message)`, () => ref.estimateTokens(m), () => ours.estimateTokens(m))
      })
    })

    it('assistant tool calls with odd argument values (numbers, toJSON, Dates, undefined, surrogates)', () => {
      checkProperty(`${line} estimateTokens tool-call arguments`, [fc.array(gen.toolCallBlockArb, { minLength: 1, maxLength: 3 })], (blocks) => {
        const m = deepFreeze({ role: 'assistant', content: blocks, api: 'anthropic-messages', provider: 'anthropic', model: 'm', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'toolUse', timestamp: 1 })
        expectSame('estimateTokens(assistant with tool calls)', () => ref.estimateTokens(m), () => ours.estimateTokens(m))
      })
    })
  })

  describe('findCutPoint(entries, startIndex, endIndex, keepRecentTokens): same CutPointResult', () => {
    it('random valid ranges 0 <= start <= end <= length', () => {
      checkProperty(`${line} findCutPoint`, [sessionArb, fc.nat(), fc.nat(), gen.keepRecentTokensArb], (entries, a, b, keep) => {
        const inputObjects = freezeInputs(entries)
        const start = a % (entries.length + 1)
        const end = start + (b % (entries.length - start + 1))
        expectSame(`findCutPoint(entries[${entries.length}], ${start}, ${end}, ${keep})`, () => ref.findCutPoint(entries, start, end, keep), () => ours.findCutPoint(entries, start, end, keep), inputObjects)
      })
    })

    it('any numbers as indices: the same result wherever the reference returns one; where it throws, a RangeError', () => {
      const odd = fc.constantFrom(NaN, Infinity, -Infinity, 0.5, -1, -0, 2 ** 53)
      const indexArb = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 40 }) }, { weight: 1, arbitrary: odd })
      let echoed = 0
      checkProperty(`${line} findCutPoint any numbers`, [sessionArb, indexArb, indexArb], (entries, start, end) => {
        deepFreeze(entries)
        const label = `findCutPoint(entries[${entries.length}], ${start}, ${end}, 50)`
        let expected
        try {
          expected = ref.findCutPoint(entries, start, end, 50)
        } catch {
          let error
          try {
            ours.findCutPoint(entries, start, end, 50)
          } catch (e) {
            error = e.name
          }
          expect({ label, error }).toEqual({ label, error: 'RangeError' })
          return
        }
        if (!Number.isInteger(start)) echoed++
        const result = ours.findCutPoint(entries, start, end, 50)
        if (!(start < end)) {
          // Echoed as given: NaN, -0 and all.
          expect({ label, same: Object.is(result.firstKeptEntryIndex, start), result }).toEqual({ label, same: true, result: expected })
          return
        }
        // A cut computed from startIndex -0 is 0 here; the reference's index arithmetic can keep the -0.
        const zero = (r) => ({ ...r, firstKeptEntryIndex: r.firstKeptEntryIndex || 0, turnStartIndex: r.turnStartIndex || 0 })
        expect({ label, result: zero(result) }).toEqual({ label, result: zero(expected) })
      }, { numRuns: runs(0.5) })
      expect(echoed).toBeGreaterThan(0)
    })

    it('full range with keepRecentTokens 0, 1, 20000', () => {
      checkProperty(`${line} findCutPoint full range`, [sessionArb, fc.constantFrom(0, 1, 20000)], (entries, keep) => {
        deepFreeze(entries)
        expectSame(`findCutPoint(entries[${entries.length}], 0, ${entries.length}, ${keep})`, () => ref.findCutPoint(entries, 0, entries.length, keep), () => ours.findCutPoint(entries, 0, entries.length, keep))
      }, { numRuns: runs(0.25) })
    })
  })

  describe('findTurnStartIndex(entries, entryIndex, startIndex): same index', () => {
    it('random entryIndex in [0, length) and startIndex in [0, entryIndex + 1]', () => {
      checkProperty(`${line} findTurnStartIndex`, [nonEmptySessionArb, fc.nat(), fc.nat()], (entries, a, b) => {
        deepFreeze(entries)
        const entryIndex = a % entries.length
        const startIndex = b % (entryIndex + 2)
        expectSame(`findTurnStartIndex(entries[${entries.length}], ${entryIndex}, ${startIndex})`, () => ref.findTurnStartIndex(entries, entryIndex, startIndex), () => ours.findTurnStartIndex(entries, entryIndex, startIndex))
      }, { numRuns: runs(0.5) })
    })

    it('indices outside the entries: the same index wherever the reference finds one; where it throws, a RangeError', () => {
      let found = 0
      let threw = 0
      // Any number: integers near the entries, and NaN, ±Infinity, fractions, -0.
      const odd = fc.constantFrom(NaN, Infinity, -Infinity, 0.5, 1.5, -0.5, -0, 2 ** 53)
      const indexArb = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -4, max: 40 }) }, { weight: 1, arbitrary: odd })
      const startArb = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -40, max: 40 }) }, { weight: 1, arbitrary: odd })
      checkProperty(`${line} findTurnStartIndex outside`, [nonEmptySessionArb, indexArb, startArb], (entries, a, b) => {
        deepFreeze(entries)
        const entryIndex = Number.isInteger(a) && a > 0 ? a % (entries.length + 3) : a
        const startIndex = b
        const label = `findTurnStartIndex(entries[${entries.length}], ${entryIndex}, ${startIndex})`
        let expected
        try {
          expected = ref.findTurnStartIndex(entries, entryIndex, startIndex)
        } catch {
          // The reference read past the entries (a TypeError on undefined).
          threw++
          let error
          try {
            ours.findTurnStartIndex(entries, entryIndex, startIndex)
          } catch (e) {
            error = { name: e.name, message: e.message }
          }
          expect({ label, error }).toEqual({ label, error: { name: 'RangeError', message: `entryIndex ${entryIndex} and startIndex ${startIndex} must lie within entries (length ${entries.length})` } })
          return
        }
        if (expected >= 0 && startIndex < 0) found++
        // Object.is: -0 stays -0.
        const index = ours.findTurnStartIndex(entries, entryIndex, startIndex)
        expect({ label, same: Object.is(index, expected), index }).toEqual({ label, same: true, index: expected })
      }, { numRuns: runs(0.5) })
      // Both kinds came up: a turn start found above a negative startIndex, and a read past the entries.
      expect(found).toBeGreaterThan(0)
      expect(threw).toBeGreaterThan(0)
    })
  })

  // ---------------------------------------------------------------------------
  // Usage and context tokens
  // ---------------------------------------------------------------------------

  describe('getLastAssistantUsage(entries): returns the very same usage object as the reference', () => {
    it('generated sessions (toBe identity, or both undefined)', () => {
      checkProperty(`${line} getLastAssistantUsage`, [sessionArb], (entries) => {
        deepFreeze(entries)
        checks.checkLastAssistantUsage(entries)
      }, { numRuns: runs(0.5) })
    })
  })

  describe('estimateContextTokens(messages): same ContextUsageEstimate', () => {
    it('messages of generated sessions (entry messages + buildSessionContext messages)', () => {
      checkProperty(`${line} estimateContextTokens session`, [sessionArb], (entries) => {
        deepFreeze(entries)
        const messages = messagesFor(entries)
        expectSame('estimateContextTokens(session messages)', () => ref.estimateContextTokens(messages), () => ours.estimateContextTokens(messages), collectObjects(messages))
        const ctx = ref.buildSessionContext(entries).messages
        deepFreeze(ctx)
        expectSame('estimateContextTokens(buildSessionContext(entries).messages)', () => ref.estimateContextTokens(ctx), () => ours.estimateContextTokens(ctx))
      }, { numRuns: runs(0.5) })
    })

    it('arbitrary message arrays', () => {
      checkProperty(`${line} estimateContextTokens arrays`, [fc.array(agentMessageArb, { maxLength: 20 })], (messages) => {
        deepFreeze(messages)
        expectSame('estimateContextTokens(messages)', () => ref.estimateContextTokens(messages), () => ours.estimateContextTokens(messages))
      }, { numRuns: runs(0.5) })
    })
  })

  if (line === '1.6') {
    describe('estimateProjectedContextTokens(projection, branchEntries): same ContextUsageEstimate', () => {
      it('the reference buildSessionProjection of generated sessions, with the whole path or a part of it', () => {
        checkProperty(`${line} estimateProjectedContextTokens`, [sessionArb, fc.nat(), fc.boolean()], (entries, k, whole) => {
          checks.checkProjectedContextTokens(entries, k, whole)
        }, { numRuns: runs(0.5) })
      })
    })
  }

  describe('calculateContextTokens(usage) and shouldCompact(contextTokens, contextWindow, settings): same values', () => {
    it('calculateContextTokens on generated usage (zero, totalTokens 0, odd numbers)', () => {
      checkProperty(`${line} calculateContextTokens`, [gen.usageArb], (usage) => {
        deepFreeze(usage)
        expectSame('calculateContextTokens(usage)', () => ref.calculateContextTokens(usage), () => ours.calculateContextTokens(usage))
      })
    })

    it('shouldCompact on generated numbers and settings', () => {
      const num = fc.oneof(fc.nat(300_000), gen.oddNumberArb)
      checkProperty(`${line} shouldCompact`, [num, num, gen.compactionSettingsArb], (tokens, window, settings) => {
        deepFreeze(settings)
        expectSame(`shouldCompact(${tokens}, ${window}, ${JSON.stringify(settings)})`, () => ref.shouldCompact(tokens, window, settings), () => ours.shouldCompact(tokens, window, settings))
      })
    })

    // The agents do not validate settings files: `enabled` can be any JSON
    // value (read for its truthiness), and 0.78 passes token settings given
    // as strings on (read by arithmetic: `contextWindow - "16384"`).
    const enabledArb = fc.oneof(fc.boolean(), fc.constantFrom(0, 1, '', 'false', 'true', null, [], {}), fc.jsonValue({ maxDepth: 1 }))
    const numericStringArb = fc
      .tuple(fc.nat(300_000), fc.constantFrom('plain', 'spaced', 'exponent', 'hex', 'fraction'))
      .map(([n, form]) => ({ plain: String(n), spaced: ` ${n}\n`, exponent: n.toExponential(), hex: `0x${n.toString(16)}`, fraction: `${n}.50` })[form])
    const settingsFileArb = fc
      .tuple(enabledArb, fc.oneof(gen.reserveTokensArb, numericStringArb), fc.oneof(fc.constantFrom(0, 1, 50, 2000), numericStringArb))
      .map(([enabled, reserveTokens, keepRecentTokens]) => ({ enabled, reserveTokens, keepRecentTokens }))

    it('shouldCompact on settings as a settings file gives them: any enabled, numeric strings', () => {
      const num = fc.oneof(fc.nat(300_000), gen.oddNumberArb)
      checkProperty(`${line} shouldCompact settings file`, [num, num, settingsFileArb], (tokens, window, settings) => {
        deepFreeze(settings)
        expectSame(`shouldCompact(${tokens}, ${window}, ${JSON.stringify(settings)})`, () => ref.shouldCompact(tokens, window, settings), () => ours.shouldCompact(tokens, window, settings))
      })
    })

    it('shouldCompact reads reserveTokens only when enabled holds, and never keepRecentTokens', () => {
      checkProperty(`${line} shouldCompact unread settings`, [fc.nat(300_000), fc.nat(300_000), enabledArb, fc.option(fc.oneof(gen.reserveTokensArb, numericStringArb), { nil: undefined })], (tokens, window, enabled, reserveTokens) => {
        const settings = deepFreeze(reserveTokens === undefined ? { enabled } : { enabled, reserveTokens })
        if (reserveTokens === undefined && enabled) expect(() => ours.shouldCompact(tokens, window, settings)).toThrow(/settings\.reserveTokens: expected a number, got undefined/)
        else expectSame(`shouldCompact(${tokens}, ${window}, ${JSON.stringify(settings)})`, () => ref.shouldCompact(tokens, window, settings), () => ours.shouldCompact(tokens, window, settings))
      })
    })

    it('prepareCompaction on settings as a settings file gives them', () => {
      checkProperty(`${line} prepareCompaction settings file`, [sessionArb, settingsFileArb], (entries, settings) => {
        checkPrepareCompaction(entries, settings)
      }, { numRuns: runs(0.25) })
    })
  })

  // ---------------------------------------------------------------------------
  // Messages and file operations
  // ---------------------------------------------------------------------------

  describe('convertToLlm(messages): deep-equal, passes through the caller\'s user/assistant/toolResult objects', () => {
    it('messages of generated sessions', () => {
      checkProperty(`${line} convertToLlm session`, [sessionArb], (entries) => {
        deepFreeze(entries)
        const messages = messagesFor(entries)
        expectSame('convertToLlm(messages)', () => ref.convertToLlm(messages), () => ours.convertToLlm(messages), collectObjects(messages))
      }, { numRuns: runs(0.5) })
    })

    it('arbitrary message arrays of every role (bashExecution excludeFromContext, custom string/array content)', () => {
      checkProperty(`${line} convertToLlm arrays`, [fc.array(agentMessageArb, { maxLength: 15 })], (messages) => {
        const inputObjects = freezeInputs(messages)
        expectSame('convertToLlm(messages)', () => ref.convertToLlm(messages), () => ours.convertToLlm(messages), inputObjects)
      }, { numRuns: runs(0.5) })
    })
  })

  describe('extractFileOpsFromMessage(message, fileOps): same Sets (content and insertion order), mutated in place', () => {
    it('each message into a fresh createFileOps()', () => {
      checkProperty(`${line} extractFileOpsFromMessage fresh`, [sessionArb], (entries) => {
        deepFreeze(entries)
        for (const m of messagesFor(entries)) checks.checkExtractFileOps(m)
      }, { numRuns: runs(0.5) })
    })

    it('all messages of a session accumulated into one pre-populated fileOps built by the caller', () => {
      checkProperty(`${line} extractFileOpsFromMessage accumulate`, [sessionArb, gen.fileOpsArb], (entries, initial) => {
        deepFreeze(entries)
        checks.checkAccumulatedFileOps(messagesFor(entries), initial)
      }, { numRuns: runs(0.5) })
    })
  })

  describe('computeFileLists(fileOps) and formatFileOperations(readFiles, modifiedFiles): same output', () => {
    it('computeFileLists on generated Sets (unicode sort order, overlaps), inputs untouched', () => {
      checkProperty(`${line} computeFileLists`, [gen.fileOpsArb], (fileOps) => {
        const before = snapshot(fileOps)
        const inputObjects = freezeInputs(fileOps)
        expectSame('computeFileLists(fileOps)', () => ref.computeFileLists(fileOps), () => ours.computeFileLists(fileOps), inputObjects)
        expectUnchanged('computeFileLists', before, fileOps)
      })
    })

    it('formatFileOperations on generated path lists', () => {
      checkProperty(`${line} formatFileOperations`, [fc.array(gen.filePathArb, { maxLength: 8 }), fc.array(gen.filePathArb, { maxLength: 8 })], (readFiles, modifiedFiles) => {
        deepFreeze([readFiles, modifiedFiles])
        expectSame('formatFileOperations(readFiles, modifiedFiles)', () => ref.formatFileOperations(readFiles, modifiedFiles), () => ours.formatFileOperations(readFiles, modifiedFiles))
      })
    })

    it('computeFileLists → formatFileOperations pipeline on prepareCompaction fileOps', () => {
      checkProperty(`${line} file lists pipeline`, [sessionArb], (entries) => {
        deepFreeze(entries)
        const prep = ref.prepareCompaction(entries, { enabled: true, reserveTokens: 16384, keepRecentTokens: 50 })
        if (!prep) return
        checks.checkFileLists(prep.fileOps)
      }, { numRuns: runs(0.25) })
    })
  })

  // ---------------------------------------------------------------------------
  // Further exports of the reference compaction module, when ours provides them
  // ---------------------------------------------------------------------------

  // serializeConversation and SUMMARIZATION_SYSTEM_PROMPT are not compared: the project
  // specifies its own transcript format and prompt (docs/serialization.md).
  describe('prepareBranchEntries(entries, tokenBudget): same messages, file operations and total', () => {
    it('prepareBranchEntries(entries, tokenBudget)', () => {
      checkProperty(`${line} prepareBranchEntries`, [sessionArb, fc.oneof(fc.constant(0), fc.nat(5000))], (entries, budget) => {
        const inputObjects = freezeInputs(entries)
        expectSame(`prepareBranchEntries(entries, ${budget})`, () => ref.prepareBranchEntries(entries, budget), () => ours.prepareBranchEntries(entries, budget), inputObjects)
      }, { numRuns: runs(0.25) })
    })

    it('prepareBranchEntries with branch_summary details whose file lists hold non-strings', () => {
      checkProperty(`${line} prepareBranchEntries non-string details files`, [gen.pathEntriesArb({ line, oddFileEntries: true }), fc.oneof(fc.constant(0), fc.nat(5000))], (entries, budget) => {
        const inputObjects = freezeInputs(entries)
        expectSame(`prepareBranchEntries(entries, ${budget})`, () => ref.prepareBranchEntries(entries, budget), () => ours.prepareBranchEntries(entries, budget), inputObjects)
      }, { numRuns: runs(0.1) })
    })

  })

  describe('targeted cases: prepareCompaction, estimateTokens, findCutPoint, convertToLlm, getLastAssistantUsage', () => {
    for (const [name, entries] of TARGETED) {
      it(name, () => {
        for (const keep of [0, 1, 60, 20000]) checkPrepareCompaction(entries, { enabled: true, reserveTokens: 16384, keepRecentTokens: keep })
        const messages = messagesFor(entries)
        for (const m of messages) expectSame(`estimateTokens(${m.role})`, () => ref.estimateTokens(m), () => ours.estimateTokens(m))
        for (let s = 0; s <= entries.length; s++) {
          expectSame(`findCutPoint(entries, ${s}, ${entries.length}, 30)`, () => ref.findCutPoint(entries, s, entries.length, 30), () => ours.findCutPoint(entries, s, entries.length, 30))
        }
        expectSame('convertToLlm', () => ref.convertToLlm(messages), () => ours.convertToLlm(messages), collectObjects(messages))
        expect(ours.getLastAssistantUsage(entries)).toBe(ref.getLastAssistantUsage(entries))
        expectSame('estimateContextTokens', () => ref.estimateContextTokens(messages), () => ours.estimateContextTokens(messages))
      })
    }
  })

  // ---------------------------------------------------------------------------
  // Scale
  // ---------------------------------------------------------------------------

  describe('scale: prepareCompaction parity on large realistic sessions (buildLargeSession)', () => {
    for (const [n, seed] of [[10_000, 10], [100_000, 100]]) {
      it(`${n.toLocaleString('en-US')} entries, default settings and keepRecentTokens 2000`, () => {
        // Deep-frozen; buildLargeSession creates no Sets/Maps/Dates, so freezing alone guards against mutation.
        const entries = deepFreeze(gen.buildLargeSession(n, seed))
        const entryObjects = collectObjects(entries)
        for (const settings of [{ ...ref.DEFAULT_COMPACTION_SETTINGS }, { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }]) {
          const res = checkPrepareCompaction(entries, settings, { entryObjects, checkMutation: false })
          expect(res.ref).toBeDefined()
        }
      })
    }
  })
})
