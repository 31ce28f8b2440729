'use strict'
// The planning side of each agent line, case by case: the edge cases where
// 0.78.1 and 1.6.0 differ (the behavioural diff's §12, and the examples of
// its §3, §6 and §10), each run on both lines against that line's reference
// and checked against the values that version gives; then the deliberate
// differences of __test__/differences.js, each shown.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { loadReference } = require('./helpers/reference')
const { loadOurs, LINES } = require('./helpers/ours')
const { deepFreeze, collectObjects, findDifference, findIdentityDifference, describeValue } = require('./helpers/compare')
const DIFFERENCES = require('./differences')

jest.setTimeout(120_000)

const refs = {}
const ours = {}
beforeAll(async () => {
  for (const line of LINES) {
    refs[line] = await loadReference(line)
    ours[line] = await loadOurs(line)
  }
})

// The diff's helpers: chained entries e<n> (or a given id), one timestamp,
// X(n) texts, user and assistant messages of n characters, zero usage.
const TS = '2026-01-01T00:00:00.000Z'
const X = (n) => 'x'.repeat(n)
const zero = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } })
const usage = (input, output) => ({ ...zero(), input, output, totalTokens: input + output })
const msg = (message, id) => ({ type: 'message', ...(id ? { id } : {}), message })
const u = (n, id) => msg({ role: 'user', content: typeof n === 'number' ? X(n) : n, timestamp: 1 }, id)
const assistant = (content, extra = {}) => ({ role: 'assistant', content, api: 'x', provider: 'p', model: 'm', usage: zero(), stopReason: 'stop', timestamp: 2, ...extra })
const a = (n, extra, id) => msg(assistant([{ type: 'text', text: typeof n === 'number' ? X(n) : n }], extra), id)
const edit = (targetId, replacement) => ({ type: 'context_edit', targetId, replacement })
const S = (keep) => ({ enabled: true, reserveTokens: 16384, keepRecentTokens: keep })

function chain(items) {
  let parent = null
  return deepFreeze(
    items.map((item, i) => {
      const entry = { ...item, id: item.id ?? `e${i}`, parentId: parent, timestamp: TS }
      parent = entry.id
      return entry
    }),
  )
}

const roles = (messages) => messages.map((m) => m.role)

/** A preparation in the diff's abbreviations. */
function abbreviated(p) {
  if (p === undefined) return undefined
  return {
    firstKept: p.firstKeptEntryId,
    isSplit: p.isSplitTurn,
    tb: p.tokensBefore,
    msgs: roles(p.messagesToSummarize),
    prefix: roles(p.turnPrefixMessages),
  }
}

const cut = (c) => [c.firstKeptEntryIndex, c.turnStartIndex, c.isSplitTurn]

/**
 * Runs `call(module)` on the line's reference and on ours: both must return
 * deep-equal values, ours the caller's objects where the reference does (and
 * new ones where it makes them), or both throw the same kind of error. Gives
 * ours' value (or error).
 */
function same(line, label, call, inputs) {
  const run = (m) => {
    try {
      return { value: call(m) }
    } catch (error) {
      return { error }
    }
  }
  const r = run(refs[line])
  const o = run(ours[line])
  if (r.error || o.error) {
    const name = (x) => x.error && x.error.name
    if (name(r) !== name(o)) throw new Error(`${line} ${label}: reference ${r.error ? r.error : describeValue(r.value)}, ours ${o.error ? o.error : describeValue(o.value)}`)
    return o
  }
  const d = findDifference(r.value, o.value)
  if (d) throw new Error(`${line} ${label}: ${d}`)
  if (inputs) {
    const id = findIdentityDifference(r.value, o.value, collectObjects(inputs))
    if (id) throw new Error(`${line} ${label}: identity: ${id}`)
  }
  return o
}

/** Both lines: the same as the reference, and the value that version gives (per line). */
function onBothLines(label, call, expected, inputs) {
  for (const line of LINES) {
    const got = same(line, label, call, inputs)
    expect([line, got.error ? `${got.error.name}` : got.value]).toEqual([line, expected[line]])
  }
}

const prepared = (entries, keep) => (m) => abbreviated(m.prepareCompaction(entries, S(keep)))
const cutOf = (entries, keep, start = 0, end = entries.length) => (m) => cut(m.findCutPoint(entries, start, end, keep))

describe('§12: where 0.78.1 and 1.6.0 differ, on both lines, against both references', () => {
  test('1. zero usage is passed over by getLastAssistantUsage and estimateContextTokens in 1.6', () => {
    const entries = chain([u('hi'), a('ok', { usage: usage(100, 10) }), u('q'), a('ok')])
    const messages = entries.map((e) => e.message)
    for (const line of LINES) expect(ours[line].getLastAssistantUsage(entries)).toBe(refs[line].getLastAssistantUsage(entries))
    expect(ours['0.78'].getLastAssistantUsage(entries)).toBe(entries[3].message.usage)
    expect(ours['1.6'].getLastAssistantUsage(entries)).toBe(entries[1].message.usage)
    onBothLines('estimateContextTokens', (m) => m.estimateContextTokens(messages), {
      '0.78': { tokens: 0, usageTokens: 0, trailingTokens: 0, lastUsageIndex: 3 },
      '1.6': { tokens: 112, usageTokens: 110, trailingTokens: 2, lastUsageIndex: 1 },
    })
  })

  test('2. estimateTokens counts system messages in 1.6', () => {
    const system = deepFreeze({ role: 'system', content: 'abcd', sections: { a: '12345678', b: null }, toolsAdded: [{ name: 't', description: 'd', parameters: {} }] })
    onBothLines('estimateTokens(system)', (m) => m.estimateTokens(system), { '0.78': 0, '1.6': 15 })
    const bare = deepFreeze({ role: 'system', content: '', toolsAdded: [] })
    onBothLines('estimateTokens(bare system)', (m) => m.estimateTokens(bare), { '0.78': 0, '1.6': 1 })
  })

  test('3. convertToLlm keeps system messages in 1.6, as the same object', () => {
    const system = deepFreeze({ role: 'system', content: 'You are pi.', timestamp: 0 })
    onBothLines('convertToLlm([system])', (m) => m.convertToLlm([system]).length, { '0.78': 0, '1.6': 1 })
    expect(ours['1.6'].convertToLlm([system])[0]).toBe(system)
  })

  test('7. the trailing tool result alone exceeds the budget', () => {
    const call = assistant([{ type: 'toolCall', id: 'c', name: 'read', arguments: { path: 'a.ts' } }], { stopReason: 'toolUse' })
    const entries = chain([u('q'), msg(call), msg({ role: 'toolResult', toolCallId: 'c', toolName: 'read', content: [{ type: 'text', text: X(4000) }], isError: false, timestamp: 3 })])
    onBothLines('findCutPoint', cutOf(entries, 100), { '0.78': [0, -1, false], '1.6': [1, 0, true] })
    onBothLines('prepareCompaction', prepared(entries, 100), {
      '0.78': { firstKept: 'e0', isSplit: false, tb: 1000, msgs: [], prefix: [] },
      '1.6': { firstKept: 'e1', isSplit: true, tb: 1006, msgs: [], prefix: ['user'] },
    }, entries)
  })

  test('8. a custom_message before the cut', () => {
    const entries = chain([u(400), a(400), { type: 'custom_message', customType: 't', content: X(40), display: true }, a(800)])
    onBothLines('findCutPoint', cutOf(entries, 150), { '0.78': [2, 2, true], '1.6': [3, 2, true] })
    onBothLines('prepareCompaction prefix', (m) => roles(m.prepareCompaction(entries, S(150)).turnPrefixMessages), { '0.78': [], '1.6': ['custom'] })
  })

  test('9. a cut at a bashExecution', () => {
    const entries = chain([u(400), a(400), msg({ role: 'bashExecution', command: 'ls', output: X(800), exitCode: 0, cancelled: false, truncated: false, timestamp: 3 })])
    onBothLines('findCutPoint', cutOf(entries, 150), { '0.78': [2, 2, true], '1.6': [2, -1, false] })
  })

  test('10. custom messages count toward keep-recent', () => {
    const entries = chain([u(400), a(400), u(40), { type: 'custom_message', customType: 't', content: X(800), display: true }, a(40)])
    onBothLines('findCutPoint', cutOf(entries, 150), { '0.78': [0, -1, false], '1.6': [3, -1, false] })
  })

  test('11. nestedCalls record file operations in 1.6', () => {
    const nestedCalls = {
      complete: true,
      calls: [
        { id: '1', name: 'read', arguments: { path: 'r.ts' }, status: 'ok' },
        { id: '2', name: 'write', arguments: { path: 'w.ts' }, status: 'error' },
        { id: '3', name: 'edit', argumentsBytes: 99, status: 'unfinished' },
      ],
    }
    const call = assistant([{ type: 'toolCall', id: 'c', name: 'code', arguments: { path: 'x' } }], { stopReason: 'toolUse' })
    const entries = chain([u(40), msg(call), msg({ role: 'toolResult', toolCallId: 'c', toolName: 'code', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 3, nestedCalls }), u(400), a(400)])
    const files = (m) => {
      const p = m.prepareCompaction(entries, S(150))
      return [p.firstKeptEntryId, [...p.fileOps.read], [...p.fileOps.written], [...p.fileOps.edited]]
    }
    onBothLines('prepareCompaction fileOps', files, { '0.78': ['e3', [], [], []], '1.6': ['e3', ['r.ts'], ['w.ts'], []] })
    const one = (m) => {
      const ops = m.createFileOps()
      m.extractFileOpsFromMessage(entries[2].message, ops)
      return [[...ops.read], [...ops.written], [...ops.edited]]
    }
    onBothLines('extractFileOpsFromMessage(toolResult)', one, { '0.78': [[], [], []], '1.6': [['r.ts'], ['w.ts'], []] })
  })

  test('12. nothing to summarize: undefined in 1.6', () => {
    const entries = chain([u(40), a(40)])
    onBothLines('prepareCompaction', prepared(entries, 20000), {
      '0.78': { firstKept: 'e0', isSplit: false, tb: 0, msgs: [], prefix: [] },
      '1.6': undefined,
    })
  })

  test('13. system messages in the session stay out of the summaries in 1.6, and count in tokensBefore', () => {
    const system = { role: 'system', content: `You are pi. ${X(400)}`, toolsAdded: [{ name: 'read', description: 'Read' }], timestamp: 0 }
    const entries = chain([msg(system), u(400), a(400), u(400), a(400)])
    onBothLines('prepareCompaction', (m) => {
      const p = m.prepareCompaction(entries, S(150))
      return [roles(p.messagesToSummarize), p.tokensBefore]
    }, { '0.78': [['system', 'user', 'assistant'], 0], '1.6': [['user', 'assistant'], 513] }, entries)
  })

  const failed = (id) => msg(assistant([], { stopReason: 'error' }), id)

  test('14. the recovery-omission advance', () => {
    const entries = chain([u(400), a(400, { usage: usage(100, 10) }), u(800, 'U2'), failed('A2'), edit('A2', null)])
    onBothLines('prepareCompaction', prepared(entries, 150), {
      '0.78': { firstKept: 'U2', isSplit: false, tb: 310, msgs: ['user', 'assistant'], prefix: [] },
      '1.6': { firstKept: 'A2', isSplit: true, tb: 400, msgs: ['user', 'assistant'], prefix: ['user'] },
    }, entries)
  })

  test('15. a replacement of an earlier entry stops the advance', () => {
    const entries = chain([u(400), a(400, { usage: usage(100, 10) }, 'A1'), u(800, 'U2'), failed('A2'), edit('A2', null), edit('A1', { content: 'short' })])
    onBothLines('prepareCompaction', prepared(entries, 150), {
      '0.78': { firstKept: 'U2', isSplit: false, tb: 310, msgs: ['user', 'assistant'], prefix: [] },
      '1.6': { firstKept: 'U2', isSplit: false, tb: 302, msgs: ['user', 'assistant'], prefix: [] },
    }, entries)
    // The replaced assistant is a copy with its string wrapped as a text block.
    const p = ours['1.6'].prepareCompaction(entries, S(150))
    expect(p.messagesToSummarize[1]).not.toBe(entries[1].message)
    expect(p.messagesToSummarize[1].content).toEqual([{ type: 'text', text: 'short' }])
    expect(p.messagesToSummarize[0]).toBe(entries[0].message)
  })

  test('16. a split turn with no history keeps the previous summary for compact()', () => {
    const entries = chain([u(400), a(400), u(400, 'K'), a(400), { type: 'compaction', summary: 'PREV', firstKeptEntryId: 'K', tokensBefore: 1 }, u(40)])
    onBothLines('prepareCompaction', (m) => {
      const p = m.prepareCompaction(entries, S(50))
      return [abbreviated(p).firstKept, p.isSplitTurn, roles(p.messagesToSummarize), roles(p.turnPrefixMessages), p.previousSummary]
    }, { '0.78': ['e3', true, [], ['user'], 'PREV'], '1.6': ['e3', true, [], ['user'], 'PREV'] })
  })

  test('17. tokensBefore after a compaction is all estimated in 1.6', () => {
    const entries = chain([u(400), a(400, { usage: usage(5000, 100) }), u(400, 'K'), a(400, { usage: usage(6000, 100) }), { type: 'compaction', summary: X(80), firstKeptEntryId: 'K', tokensBefore: 1 }, u(40)])
    onBothLines('tokensBefore', (m) => m.prepareCompaction(entries, S(50)).tokensBefore, { '0.78': 6110, '1.6': 230 })
  })

  test('18. usage captured before a context_edit is not trusted in 1.6', () => {
    const entries = chain([u(40), a(400, { usage: usage(9000, 10) }, 'A1'), u(400), a(400, { usage: usage(9500, 10) }), edit('A1', { content: 's' })])
    onBothLines('tokensBefore', (m) => m.prepareCompaction(entries, S(150)).tokensBefore, { '0.78': 9510, '1.6': 211 })
  })

  test('19. metadata just before the previous compaction is absorbed in 1.6', () => {
    const entries = chain([u(400), a(400), u(40, 'K'), a(40), { type: 'label', id: 'L', targetId: 'K', label: 'l' }, { type: 'compaction', summary: 'S', firstKeptEntryId: 'K', tokensBefore: 1 }, u(800), a(40)])
    onBothLines('prepareCompaction', prepared(entries, 150), {
      '0.78': { firstKept: 'e6', isSplit: false, tb: 0, msgs: ['user', 'assistant'], prefix: [] },
      '1.6': { firstKept: 'L', isSplit: true, tb: 231, msgs: [], prefix: ['user', 'assistant'] },
    }, entries)
  })

  test('20. hidden entries are absorbed', () => {
    const entries = chain([u(400), a(400, {}, 'A1'), u(400, 'U2'), a(40, {}, 'A2'), edit('A1', null)])
    onBothLines('prepareCompaction', prepared(entries, 100), {
      '0.78': { firstKept: 'U2', isSplit: false, tb: 0, msgs: ['user', 'assistant'], prefix: [] },
      '1.6': { firstKept: 'A1', isSplit: true, tb: 210, msgs: [], prefix: ['user'] },
    }, entries)
  })

  test('21. a hidden user message is not a turn start', () => {
    const entries = chain([u(400), a(400), u(400, 'U2'), a(800, {}, 'A2'), edit('U2', null)])
    onBothLines('prepareCompaction', prepared(entries, 100), {
      '0.78': { firstKept: 'A2', isSplit: true, tb: 0, msgs: ['user', 'assistant'], prefix: ['user'] },
      '1.6': { firstKept: 'U2', isSplit: true, tb: 400, msgs: [], prefix: ['user', 'assistant'] },
    }, entries)
  })

  test('22. an empty branch_summary', () => {
    const entries = chain([u(400), a(400), { type: 'branch_summary', fromId: 'e0', summary: '' }, a(800)])
    onBothLines('findCutPoint', cutOf(entries, 150), { '0.78': [2, 2, true], '1.6': [2, 0, true] })
    onBothLines('prepareCompaction', (m) => {
      const p = m.prepareCompaction(entries, S(150))
      return [roles(p.messagesToSummarize), roles(p.turnPrefixMessages)]
    }, { '0.78': [['user', 'assistant'], []], '1.6': [[], ['user', 'assistant']] })
  })

  test('23. a broken parent chain: 1.6 plans on the last entry alone', () => {
    const entries = deepFreeze([u(400), a(400), u(400), a(400)].map((e, i) => ({ ...e, id: `b${i}`, parentId: null, timestamp: TS })))
    onBothLines('prepareCompaction', (m) => {
      const p = m.prepareCompaction(entries, S(150))
      return p && [p.firstKeptEntryId, roles(p.messagesToSummarize)]
    }, { '0.78': ['b2', ['user', 'assistant']], '1.6': undefined })
  })

  test('24. a null content: a TypeError in 0.78, empty in 1.6', () => {
    const entries = chain([u(null), u(400), a(400)])
    onBothLines('findCutPoint', cutOf(entries, 1000), { '0.78': 'TypeError', '1.6': [0, -1, false] })
    // 1.6 summarizes a normalised copy.
    const p = ours['1.6'].prepareCompaction(entries, S(100))
    same('1.6', 'prepareCompaction(null content)', (m) => m.prepareCompaction(entries, S(100)), entries)
    expect(p.messagesToSummarize[0]).toEqual({ role: 'user', content: [], timestamp: 1 })
    expect(p.messagesToSummarize[0]).not.toBe(entries[0].message)
  })

  test('25. a raw compaction inside the findCutPoint range counts and is a barrier in 1.6', () => {
    const entries = chain([u(400), a(400), { type: 'compaction', summary: X(2000), firstKeptEntryId: 'e0', tokensBefore: 1 }, u(40), a(40)])
    onBothLines('findCutPoint', cutOf(entries, 150), { '0.78': [0, -1, false], '1.6': [3, -1, false] })
  })

  test('26. a custom-role message entry starts a turn in 1.6', () => {
    const entries = chain([u(40), a(40), msg({ role: 'custom', customType: 'c', content: X(40), display: true, timestamp: 3 }), a(800)])
    onBothLines('findTurnStartIndex', (m) => m.findTurnStartIndex(entries, 3, 0), { '0.78': 0, '1.6': 2 })
  })

  test('27. keepRecentTokens 0 with a trailing 0-token assistant', () => {
    const entries = chain([u(40), a(40), msg(assistant([]))])
    onBothLines('findCutPoint', cutOf(entries, 0), { '0.78': [2, 0, true], '1.6': [1, 0, true] })
  })
})

describe('the examples of §3.4, §6 and §10.2', () => {
  test('§3.4: estimateProjectedContextTokens estimates the merged system message once', () => {
    const entries = chain([msg({ role: 'system', content: 'aaaa', timestamp: 1 }), u('uuuu', 'U'), msg({ role: 'system', content: 'bbbb', timestamp: 2 }), edit('U', { content: 'uuuu' })])
    const projection = deepFreeze(refs['1.6'].buildSessionProjection(entries))
    const messages = projection.messages
    expect(same('1.6', 'estimateContextTokens', (m) => m.estimateContextTokens(messages)).value.tokens).toBe(3)
    expect(same('1.6', 'estimateProjectedContextTokens', (m) => m.estimateProjectedContextTokens(projection, entries)).value.tokens).toBe(4)
    // With usage after the last edit, the usage is kept.
    const withUsage = chain([...entries.map(({ id, parentId, timestamp, ...e }) => e), a('ok', { usage: usage(50, 5) }), u('more')])
    const p2 = deepFreeze(refs['1.6'].buildSessionProjection(withUsage))
    expect(same('1.6', 'estimateProjectedContextTokens(usage)', (m) => m.estimateProjectedContextTokens(p2, withUsage)).value).toEqual({ tokens: 56, usageTokens: 55, trailingTokens: 1, lastUsageIndex: 3 })
  })

  test('the merged system message takes pi-ai\'s `timestamp ??=`: a null timestamp, then a missing one, merge into none', () => {
    const system = (timestamp) => ({ role: 'system', content: 'aaaaaaaa', ...(timestamp === undefined ? {} : { timestamp }) })
    for (const [stamps, tokens] of [
      [[null, undefined], 1],
      [[undefined, null], 6],
      [[null, 5, undefined], 8],
    ]) {
      const entries = chain([msg(system(stamps[0])), u('uuuu'), ...stamps.slice(1).map((t) => msg(system(t)))])
      const projection = deepFreeze(refs['1.6'].buildSessionProjection(entries))
      expect(same('1.6', 'estimateProjectedContextTokens', (m) => m.estimateProjectedContextTokens(projection, entries)).value.tokens).toBe(tokens)
    }
  })

  test('§10.2: prepareBranchEntries applies context edits and counts system messages in 1.6', () => {
    const call = assistant([{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'ans' }, { type: 'toolCall', id: 'c', name: 'read', arguments: { path: 'a' } }], { stopReason: 'toolUse' })
    const nestedCalls = { complete: true, calls: [{ id: '1', name: 'edit', arguments: { path: 'n.ts' }, status: 'ok' }] }
    const entries = chain([
      msg({ role: 'system', content: X(600), timestamp: 0 }),
      u('hello'),
      msg(call),
      msg({ role: 'toolResult', toolCallId: 'c', toolName: 'code', content: [{ type: 'text', text: 'r' }], isError: false, timestamp: 3, nestedCalls }),
      u('secret', 'U2'),
      edit('U2', { content: 'redacted' }),
    ])
    const summary = (m) => {
      const p = m.prepareBranchEntries(entries)
      return [roles(p.messages), p.messages[p.messages.length - 1].content, p.totalTokens, [...p.fileOps.read], [...p.fileOps.edited]]
    }
    onBothLines('prepareBranchEntries', summary, {
      '0.78': [['system', 'user', 'assistant', 'user'], 'secret', 10, ['a'], []],
      '1.6': [['system', 'user', 'assistant', 'user'], 'redacted', 160, ['a'], []],
    })
    for (const line of LINES) same(line, 'prepareBranchEntries identity', (m) => m.prepareBranchEntries(entries), entries)
  })
})

// ---------------------------------------------------------------------------
// The deliberate differences, each shown
// ---------------------------------------------------------------------------

const shown = new Set()
const show = (line, id, fn) => {
  test(`${line} ${id}: ${DIFFERENCES[line].find((d) => d.id === id).what}`, async () => {
    await fn()
    shown.add(`${line} ${id}`)
  })
}

function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return err
  }
  return undefined
}

async function rejected(promise) {
  try {
    await promise
  } catch (err) {
    return err
  }
  return undefined
}

describe('differences', () => {
  const cycle = deepFreeze([
    { type: 'message', id: 'a', parentId: 'b', timestamp: TS, message: { role: 'user', content: 'one', timestamp: 1 } },
    { type: 'message', id: 'b', parentId: 'a', timestamp: TS, message: { role: 'user', content: 'two', timestamp: 2 } },
  ])
  let dir
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-lines-'))
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  for (const line of LINES) {
    show(line, 'parent-cycle', async () => {
      const m = ours[line]
      const named = (err) => [err && err.name, err && /cycle/.test(err.message) && /"[ab]"/.test(err.message)]
      expect(named(thrown(() => m.prepareCompaction(cycle, S(10))))).toEqual(['Error', true])
      expect(named(await rejected(m.prepareCompactionAsync(cycle, S(10))))).toEqual(['Error', true])
      const file = path.join(dir, `cycle-${line}.jsonl`)
      fs.writeFileSync(file, [{ type: 'session', version: 3, id: 's', timestamp: TS, cwd: '/w' }, ...cycle].map((e) => JSON.stringify(e)).join('\n'))
      for (const err of [thrown(() => m.prepareCompactionFromFileSync(file)), await rejected(m.prepareCompactionFromFile(file)), thrown(() => m.serializeForSummaryFromFileSync(file))]) {
        expect([err && err.name, err && /cycle/.test(err.message)]).toEqual(['Error', true])
      }
    })
  }

  show('1.6', 'nested-calls-malformed', () => {
    const result = (calls) => deepFreeze({ role: 'toolResult', toolCallId: 'c', toolName: 'code', content: [], isError: false, timestamp: 1, nestedCalls: { calls, complete: true } })
    const run = (m, message) => {
      const ops = m.createFileOps()
      m.extractFileOpsFromMessage(message, ops)
      return [...ops.read]
    }
    // Not iterable: both throw a TypeError, ours naming the field.
    for (const calls of [{ 0: { name: 'read', arguments: { path: 'a' } } }, 5, [null]]) {
      const message = result(calls)
      expect(thrown(() => run(refs['1.6'], message)).name).toBe('TypeError')
      const err = thrown(() => run(ours['1.6'], message))
      expect([err.name, /nestedCalls\.calls/.test(err.message)]).toEqual(['TypeError', true])
    }
    // A Set of records: 1.6 iterates it, ours reads arrays only.
    const set = result(new Set([{ name: 'read', arguments: { path: 'a.ts' }, status: 'ok' }]))
    expect(run(refs['1.6'], set)).toEqual(['a.ts'])
    expect(thrown(() => run(ours['1.6'], set)).name).toBe('TypeError')
    // A string is iterated to nothing by both.
    expect(run(ours['1.6'], result('read'))).toEqual(run(refs['1.6'], result('read')))
  })

  show('1.6', 'system-message-fields', () => {
    const cases = [
      { role: 'system', content: '', sections: 'abcd' },
      { role: 'system', content: '', sections: { a: 42 } },
    ]
    for (const message of cases.map((m) => deepFreeze(m))) {
      expect(typeof refs['1.6'].estimateTokens(message)).toBe('number')
      const err = thrown(() => ours['1.6'].estimateTokens(message))
      expect([err.name, /sections/.test(err.message)]).toEqual(['TypeError', true])
    }
    const nameless = deepFreeze([{ role: 'system', content: 'a', toolsAdded: [{ description: 'no name' }], timestamp: 1 }, { role: 'user', content: 'u' }])
    const projection = { entries: [], messages: nameless }
    expect(typeof refs['1.6'].estimateProjectedContextTokens(projection, []).tokens).toBe('number')
    const err = thrown(() => ours['1.6'].estimateProjectedContextTokens(projection, []))
    expect([err.name, /toolsAdded\[0\]\.name/.test(err.message)]).toEqual(['TypeError', true])
  })

  show('1.6', 'inherited-message-fields', () => {
    class Message {
      get role() {
        return 'user'
      }
    }
    const inherited = Object.assign(new Message(), { content: X(800), timestamp: 1 })
    const entries = chain([u(400), a(400), msg(inherited, 'U'), a(40), edit('U', { content: X(400) })])
    const ref = refs['1.6'].prepareCompaction(entries, S(50))
    const ourPlan = ours['1.6'].prepareCompaction(entries, S(50))
    // To 1.6, the edited copy has no role: no cut point, no tokens; ours counts it as the user message it is.
    expect(abbreviated(ref)).toEqual({ firstKept: 'e1', isSplit: true, tb: 210, msgs: [], prefix: ['user'] })
    expect(abbreviated(ourPlan)).toEqual({ firstKept: 'U', isSplit: false, tb: 310, msgs: ['user', 'assistant'], prefix: [] })
  })

  test('every difference listed for a line is shown by a test above', () => {
    const listed = LINES.flatMap((line) =>
      DIFFERENCES[line].filter((d) => !DIFFERENCES.SUMMARY_AREAS.includes(d.area)).map((d) => `${line} ${d.id}`),
    )
    expect([...shown].sort()).toEqual(listed.sort())
  })
})
