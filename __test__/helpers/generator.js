'use strict'
// Input generators for the parity / bad-input suites and the benchmark.
//
// fast-check arbitraries produce pi session *path entries* (SessionEntry[] in
// the v3 format: every entry has `type`, `id`, `parentId` = previous entry's id
// (null for the first) and an ISO-ish `timestamp`). Everything generated here
// conforms to the reference's TypeScript types (pi-coding-agent 0.78.1), while
// hitting as many edge cases as those types allow.
//
// buildLargeSession(n, seed) is a deterministic, fast, plain-loop builder for
// 1k / 10k / 100k-entry sessions that resemble real coding-agent sessions.

const fc = require('fast-check')
const { deepFreeze, snapshot, deepEqual, findDifference } = require('./compare')

// A marker for "leave this key out" in optional fields (distinct from a key
// that is present with the value `undefined`).
const ABSENT = Symbol('absent')

function obj(pairs) {
  const o = {}
  for (const [k, v] of pairs) if (v !== ABSENT) o[k] = v
  return o
}

/** absent / present-but-undefined / value */
function opt(arb, weights = {}) {
  const { absent = 3, undef = 1, value = 3 } = weights
  const parts = []
  if (absent) parts.push({ weight: absent, arbitrary: fc.constant(ABSENT) })
  if (undef) parts.push({ weight: undef, arbitrary: fc.constant(undefined) })
  if (value) parts.push({ weight: value, arbitrary: arb })
  return fc.oneof(...parts)
}

// ---------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------

const SPECIAL_CHARS = [
  '😀', // astral (surrogate pair)
  '𝄞',
  '你好',
  '日本語',
  '한',
  '\ud83d', // lone high surrogate
  '\ude00', // lone low surrogate
  '\u2028', // line separator
  '\u2029', // paragraph separator
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\n',
  '\r\n',
  '\t',
  '"',
  '\\',
  '/',
  '<',
  '>',
  '&',
  "'",
  '\u00e9', // é precomposed
  'e\u0301', // é decomposed
  '\ufeff', // BOM
  '\uffff',
  '\ufffd',
  '\uff01', // high BMP (sorts after surrogates in UTF-8, before in UTF-16)
  '\ue000', // private use
  '\u200b', // zero width space
  'İ',
  'ß',
  ' ',
]

const specialUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL_CHARS) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
)

function textArb(maxLength = 40) {
  return fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength }) },
    { weight: 4, arbitrary: fc.string({ unit: specialUnit, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength }) },
    { weight: 1, arbitrary: fc.constant('') },
  )
}

/** Text of widely varying length (cheap: a generated head plus a repeated filler). */
function bodyArb(maxPad = 2000) {
  return fc
    .tuple(textArb(60), fc.nat(maxPad), fc.constantFrom('x', ' lorem', '😀', 'ab\n', 'é'))
    .map(([head, n, filler]) => head + filler.repeat(Math.ceil(n / filler.length)))
}

// Huge strings, built once (100k+ UTF-16 code units).
const HUGE_STRINGS = [
  'a'.repeat(100_003),
  'tool output line\n'.repeat(7_000),
  '😀你好\u2028\u0001"\\'.repeat(16_000),
  `${'x'.repeat(60_000)}\ud83d${'y'.repeat(60_000)}`,
]
const hugeStringArb = fc.constantFrom(...HUGE_STRINGS)

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

const ODD_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  0.5,
  1.5,
  0.1 + 0.2,
  2.1e-5,
  1e-7,
  0.000001,
  5e-324,
  2.2250738585072014e-308,
  1e21,
  1e20,
  123456789012345680000,
  1e300,
  1.7976931348623157e308,
  -1e21,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  4.35,
  100,
  1e16,
  NaN,
  Infinity,
  -Infinity,
]
const oddNumberArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ODD_NUMBERS) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.maxSafeInteger() },
)

// ---------------------------------------------------------------------------
// File paths / tool calls
// ---------------------------------------------------------------------------

const COMMON_PATHS = [
  'src/index.ts',
  'src/core/compaction.ts',
  'src/core/utils.ts',
  'README.md',
  'package.json',
  '/abs/path/file.rs',
  './relative/file.js',
  '../up/one.txt',
  'a',
  'B',
  'b',
  'Z.ts',
  'é.txt',
  'e\u0301.txt',
  '😀.md',
  '\uff01.txt',
  '\ue000.txt',
  '你好/世界.ts',
  'dir with spaces/file name.txt',
  'line\nbreak.txt',
  'sep\u2028.txt',
  'ctrl\u0001.txt',
  'lone\ud83d.txt',
  'C:\\Windows\\path.txt',
  ' leading-space',
  'trailing-space ',
  '0',
  'null',
  'undefined',
]
const filePathArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...COMMON_PATHS) },
  { weight: 2, arbitrary: textArb(20).filter((s) => s.length > 0) },
  { weight: 1, arbitrary: fc.string({ unit: specialUnit, minLength: 1, maxLength: 6 }) },
)

const TOOL_NAMES_MAIN = ['read', 'write', 'edit', 'bash', 'ls', 'grep']
const TOOL_NAMES_OTHER = [
  'find',
  'Read',
  'WRITE',
  'Edit',
  'edit ',
  ' read',
  'multi_edit',
  'todo',
  '',
  'read\u0000',
  'web_fetch',
  'constructor',
  '__proto__',
]
const toolNameArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...TOOL_NAMES_MAIN) },
  { weight: 2, arbitrary: fc.constantFrom(...TOOL_NAMES_OTHER) },
  { weight: 1, arbitrary: textArb(10) },
)

// Exotic values whose JSON.stringify form is not obvious.
const exoticValueArb = fc.oneof(
  fc.constant(undefined),
  fc.oneof(textArb(10), oddNumberArb, fc.constant(undefined), fc.constant(null)).map((v) => ({ toJSON: () => v })),
  fc.constant({ toJSON: (key) => `key:${key}` }),
  fc.constant({ toJSON: () => ({ nested: { toJSON: () => 'inner' }, n: 1 }) }),
  fc.constant({ a: 1, toJSON: undefined }),
  fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms)),
  fc.constant(new Date(NaN)),
  fc.constant(function namedFn() {}),
  fc.constant(Symbol('sym')),
  fc.constant(new Map([['k', 'v']])),
  fc.constant(new Set([1, 2])),
  fc.constant(Uint8Array.from([1, 2, 3])),
  fc.constant(new Number(5)), // eslint-disable-line no-new-wrappers
  fc.constant(new String('boxed')), // eslint-disable-line no-new-wrappers
  fc.constant(new Boolean(false)), // eslint-disable-line no-new-wrappers
  fc.constant([1, , 3]), // eslint-disable-line no-sparse-arrays
  fc.constant([undefined, () => 1, Symbol('s')]),
  fc.constant(
    (() => {
      const o = { visible: 1 }
      Object.defineProperty(o, 'hidden', { value: 2, enumerable: false })
      o[Symbol('s')] = 3
      return o
    })(),
  ),
  fc.constant(
    (() => {
      const o = {}
      Object.defineProperty(o, '__proto__', { value: { x: 1 }, enumerable: true, writable: true, configurable: true })
      return o
    })(),
  ),
  fc.constant({ b: 1, 2: 'two', a: 2, 1: 'one', '-1': 'neg', 1.5: 'frac', 4294967295: 'big' }),
  fc.constant({ get getter() { return 'got' } }),
  fc.constant(Object.assign(Object.create(null), { nullProto: true })),
)

const argKeyArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('content', 'oldText', 'newText', 'offset', 'limit', 'command', 'pattern', 'timeout', 'edits', 'glob', 'x') },
  { weight: 2, arbitrary: textArb(8) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', '😀', '1', '0', '-0', '') },
)

const argValueArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: textArb(30) },
    { weight: 3, arbitrary: oddNumberArb },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: exoticValueArb },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 1, arbitrary: tie('object') },
  ),
  object: fc.array(fc.tuple(argKeyArb, tie('value')), { maxLength: 4 }).map(definePairs),
}))

function definePairs(pairs) {
  const o = {}
  for (const [k, v] of pairs) {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true })
  }
  return o
}

const nonStringPathArb = fc.oneof(
  oddNumberArb,
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.constant(['src/a.ts']),
  fc.constant({ path: 'src/a.ts' }),
  fc.constant(new String('src/boxed.ts')), // eslint-disable-line no-new-wrappers
  fc.constant({ toString: () => 'src/tostring.ts' }),
)

const pathArgArb = fc.oneof(
  { weight: 10, arbitrary: filePathArb },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constant(ABSENT) },
  { weight: 2, arbitrary: nonStringPathArb },
)

const toolArgumentsArb = fc
  .tuple(pathArgArb, fc.array(fc.tuple(argKeyArb, argValueArb.value), { maxLength: 3 }), fc.nat(3), bodyArb(400))
  .map(([pathArg, extra, variant, body]) => {
    const pairs = []
    if (variant === 0) pairs.push(['content', body])
    if (pathArg !== ABSENT) pairs.unshift(['path', pathArg])
    if (variant === 1) pairs.push(['oldText', body.slice(0, 20)], ['newText', body])
    for (const [k, v] of extra) if (k !== 'path') pairs.push([k, v])
    return definePairs(pairs)
  })

// Rarely: arguments that are an array, or an exotic object (all assignable to Record<string, any>).
const toolCallArgumentsArb = fc.oneof(
  { weight: 30, arbitrary: toolArgumentsArb },
  { weight: 1, arbitrary: fc.constant([]) },
  { weight: 1, arbitrary: fc.constant(['path', 'src/x.ts']) },
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constant({ path: 'src/date.ts', when: new Date(0) }) },
  { weight: 1, arbitrary: fc.constant({ path: 'src/tojson.ts', toJSON: () => ({ replaced: true }) }) },
  { weight: 1, arbitrary: fc.constant(Object.assign(Object.create(null), { path: 'src/nullproto.ts' })) },
)

// ---------------------------------------------------------------------------
// Content blocks
// ---------------------------------------------------------------------------

const base64Arb = fc.oneof(
  fc.base64String({ maxLength: 64 }),
  fc.constant('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='),
  fc.constant(''),
)
const imageBlockArb = fc
  .tuple(base64Arb, fc.constantFrom('image/png', 'image/jpeg', 'image/gif', 'image/webp', ''))
  .map(([data, mimeType]) => ({ type: 'image', data, mimeType }))

const textBlockArb = fc
  .tuple(fc.oneof({ weight: 8, arbitrary: bodyArb(600) }, { weight: 1, arbitrary: fc.constant('') }), opt(textArb(10), { absent: 6, undef: 1, value: 1 }))
  .map(([text, textSignature]) => obj([['type', 'text'], ['text', text], ['textSignature', textSignature]]))

const thinkingBlockArb = fc
  .tuple(bodyArb(800), opt(base64Arb, { absent: 3, undef: 1, value: 2 }), opt(fc.boolean(), { absent: 6, undef: 1, value: 1 }))
  .map(([thinking, thinkingSignature, redacted]) =>
    obj([['type', 'thinking'], ['thinking', thinking], ['thinkingSignature', thinkingSignature], ['redacted', redacted]]),
  )

const toolCallIdArb = fc.oneof(
  fc.stringMatching(/^toolu_[0-9a-zA-Z]{8}$/),
  fc.stringMatching(/^call_[0-9a-f]{6}$/),
  textArb(6),
)

const toolCallBlockArb = fc
  .tuple(toolCallIdArb, toolNameArb, toolCallArgumentsArb, opt(textArb(8), { absent: 6, undef: 1, value: 1 }))
  .map(([id, name, args, thoughtSignature]) =>
    obj([['type', 'toolCall'], ['id', id], ['name', name], ['arguments', args], ['thoughtSignature', thoughtSignature]]),
  )

const textOrImageBlocksArb = fc.array(
  fc.oneof({ weight: 5, arbitrary: textBlockArb }, { weight: 1, arbitrary: imageBlockArb }),
  { maxLength: 4 },
)

const userContentArb = fc.oneof(
  { weight: 3, arbitrary: bodyArb(1200) },
  { weight: 2, arbitrary: textOrImageBlocksArb },
)

const assistantContentArb = fc.array(
  fc.oneof({ weight: 3, arbitrary: textBlockArb }, { weight: 2, arbitrary: thinkingBlockArb }, { weight: 3, arbitrary: toolCallBlockArb }),
  { maxLength: 5 },
)

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

const msTimestampArb = fc.oneof(
  { weight: 10, arbitrary: fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -0, -1, 1.5, NaN, 8.64e15, 2 ** 53 + 2, Infinity) },
)

const usageNumberArb = fc.oneof(
  { weight: 8, arbitrary: fc.nat(200_000) },
  { weight: 1, arbitrary: fc.constantFrom(0, 0.5, 1e21, 2 ** 53 + 2, NaN, -0, 1e300) },
)
const costNumberArb = fc.oneof(fc.double({ min: 0, max: 10, noNaN: true }), fc.constant(0))

const usageArb = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.constant(null).map(() => ({
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    })),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        usageNumberArb,
        usageNumberArb,
        usageNumberArb,
        usageNumberArb,
        fc.constantFrom('sum', 'zero', 'other'),
        usageNumberArb,
        fc.tuple(costNumberArb, costNumberArb, costNumberArb, costNumberArb, costNumberArb),
      )
      .map(([input, output, cacheRead, cacheWrite, totalMode, other, cost]) => ({
        input,
        output,
        cacheRead,
        cacheWrite,
        totalTokens: totalMode === 'sum' ? input + output + cacheRead + cacheWrite : totalMode === 'zero' ? 0 : other,
        cost: { input: cost[0], output: cost[1], cacheRead: cost[2], cacheWrite: cost[3], total: cost[4] },
      })),
  },
)

const stopReasonArb = fc.constantFrom('stop', 'toolUse', 'length', 'aborted', 'error')
const providerArb = fc.constantFrom('anthropic', 'openai', 'google', 'openrouter', 'my-proxy', '')
const modelIdArb = fc.constantFrom('claude-sonnet-4-5', 'gpt-5', 'gemini-2.5-pro', 'o3', 'local/qwen', '')
const apiArb = fc.constantFrom('anthropic-messages', 'openai-responses', 'openai-completions', 'google-generative-ai')

const userMessageArb = fc
  .tuple(userContentArb, msTimestampArb)
  .map(([content, timestamp]) => ({ role: 'user', content, timestamp }))

const assistantMessageArb = fc
  .tuple(
    assistantContentArb,
    apiArb,
    providerArb,
    modelIdArb,
    usageArb,
    stopReasonArb,
    opt(textArb(20), { absent: 5, undef: 1, value: 1 }),
    msTimestampArb,
    opt(fc.stringMatching(/^msg_[0-9a-z]{6}$/), { absent: 4, undef: 1, value: 1 }),
  )
  .map(([content, api, provider, model, usage, stopReason, errorMessage, timestamp, responseId]) =>
    obj([
      ['role', 'assistant'],
      ['content', content],
      ['api', api],
      ['provider', provider],
      ['model', model],
      ['responseId', responseId],
      ['usage', usage],
      ['stopReason', stopReason],
      ['errorMessage', errorMessage],
      ['timestamp', timestamp],
    ]),
  )

const toolResultMessageArb = fc
  .tuple(toolCallIdArb, toolNameArb, textOrImageBlocksArb, opt(argValueArb.value, { absent: 3, undef: 1, value: 1 }), fc.boolean(), msTimestampArb)
  .map(([toolCallId, toolName, content, details, isError, timestamp]) =>
    obj([
      ['role', 'toolResult'],
      ['toolCallId', toolCallId],
      ['toolName', toolName],
      ['content', content],
      ['details', details],
      ['isError', isError],
      ['timestamp', timestamp],
    ]),
  )

const bashExecutionMessageArb = fc
  .tuple(
    textArb(40),
    bodyArb(1500),
    fc.oneof(fc.constant(0), fc.constant(1), fc.constant(undefined), fc.constant(137), fc.constant(-1), fc.constant(null)),
    fc.boolean(),
    fc.boolean(),
    opt(fc.constantFrom('/tmp/out.txt', '', '/tmp/😀.log'), { absent: 3, undef: 1, value: 2 }),
    msTimestampArb,
    opt(fc.boolean(), { absent: 3, undef: 1, value: 3 }),
  )
  .map(([command, output, exitCode, cancelled, truncated, fullOutputPath, timestamp, excludeFromContext]) =>
    obj([
      ['role', 'bashExecution'],
      ['command', command],
      ['output', output],
      ['exitCode', exitCode === null ? undefined : exitCode],
      ['cancelled', cancelled],
      ['truncated', truncated],
      ['fullOutputPath', fullOutputPath],
      ['timestamp', timestamp],
      ['excludeFromContext', excludeFromContext],
    ]),
  )

const customTypeArb = fc.constantFrom('my-extension', 'todo', 'plan', '', '😀ext', 'reminder')

const customMessageArb = fc
  .tuple(customTypeArb, userContentArb, fc.boolean(), opt(argValueArb.value), msTimestampArb)
  .map(([customType, content, display, details, timestamp]) =>
    obj([
      ['role', 'custom'],
      ['customType', customType],
      ['content', content],
      ['display', display],
      ['details', details],
      ['timestamp', timestamp],
    ]),
  )

const branchSummaryMessageArb = fc
  .tuple(bodyArb(800), textArb(8), msTimestampArb)
  .map(([summary, fromId, timestamp]) => ({ role: 'branchSummary', summary, fromId, timestamp }))

const compactionSummaryMessageArb = fc
  .tuple(bodyArb(800), usageNumberArb, msTimestampArb)
  .map(([summary, tokensBefore, timestamp]) => ({ role: 'compactionSummary', summary, tokensBefore, timestamp }))

/** Any AgentMessage (every role). */
const agentMessageArb = fc.oneof(
  { weight: 4, arbitrary: userMessageArb },
  { weight: 6, arbitrary: assistantMessageArb },
  { weight: 4, arbitrary: toolResultMessageArb },
  { weight: 1, arbitrary: bashExecutionMessageArb },
  { weight: 1, arbitrary: customMessageArb },
  { weight: 1, arbitrary: branchSummaryMessageArb },
  { weight: 1, arbitrary: compactionSummaryMessageArb },
)

// ---------------------------------------------------------------------------
// What 1.6 sessions hold besides (pi-coding-agent 1.6.0 types)
// ---------------------------------------------------------------------------

const toolDefinitionArb = fc
  .tuple(
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom('read', 'write', 'edit', 'bash', 'grep', 'todo') }, { weight: 1, arbitrary: textArb(8) }),
    textArb(40),
    fc.constantFrom({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, { type: 'object' }, {}),
  )
  .map(([name, description, parameters]) => ({ name, description, parameters }))

/** A `role: "system"` message: the prompt, patched sections, tools added and removed. */
const systemMessageArb = fc
  .tuple(
    fc.oneof({ weight: 4, arbitrary: bodyArb(1200) }, { weight: 2, arbitrary: fc.constant('') }, { weight: 1, arbitrary: textOrImageBlocksArb }),
    opt(fc.dictionary(fc.constantFrom('project', 'env', 'skills', 'date', 'custom'), fc.oneof(bodyArb(300), fc.constant(null), fc.constant('')), { maxKeys: 4 }), { absent: 2, undef: 1, value: 3 }),
    opt(fc.array(toolDefinitionArb, { maxLength: 4 }), { absent: 2, undef: 1, value: 3 }),
    opt(fc.array(toolDefinitionArb.map((t) => ({ name: t.name })), { maxLength: 2 }), { absent: 4, undef: 1, value: 1 }),
    opt(msTimestampArb, { absent: 1, undef: 1, value: 6 }),
  )
  .map(([content, sections, toolsAdded, toolsRemoved, timestamp]) =>
    obj([
      ['role', 'system'],
      ['content', content],
      ['sections', sections],
      ['toolsAdded', toolsAdded],
      ['toolsRemoved', toolsRemoved],
      ['timestamp', timestamp],
    ]),
  )

/** One call a codemode script made, as its tool result records it. */
const nestedCallArb = fc
  .tuple(
    toolCallIdArb,
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom('read', 'write', 'edit') }, { weight: 2, arbitrary: toolNameArb }),
    opt(toolArgumentsArb, { absent: 1, undef: 0, value: 4 }),
    fc.constantFrom('ok', 'error', 'unfinished'),
    opt(fc.nat(100_000), { absent: 3, undef: 0, value: 1 }),
  )
  .map(([id, name, args, status, bytes]) => obj([['id', id], ['name', name], ['arguments', args], ['argumentsBytes', bytes], ['status', status]]))

const nestedCallsArb = fc.tuple(fc.array(nestedCallArb, { maxLength: 4 }), fc.boolean()).map(([calls, complete]) => ({ calls, complete }))

/** Tool results, some carrying `nestedCalls`. */
const toolResult16Arb = fc
  .tuple(toolResultMessageArb, opt(nestedCallsArb, { absent: 3, undef: 1, value: 3 }))
  .map(([m, nestedCalls]) => (nestedCalls === ABSENT ? m : { ...m, nestedCalls }))

/** Messages of old or hand-edited files: `content` null or missing (1.6 reads them as empty). */
const nullContentMessageArb = fc
  .tuple(fc.constantFrom('user', 'assistant', 'toolResult', 'system'), fc.constantFrom(null, ABSENT, undefined), msTimestampArb)
  .map(([role, content, timestamp]) => obj([['role', role], ['content', content], ['timestamp', timestamp], ...(role === 'assistant' ? [['stopReason', 'stop']] : [])]))

/** An assistant message whose usage is all zeros (1.6 passes it over for usage). */
const zeroUsageAssistantArb = assistantMessageArb.map((m) => ({
  ...m,
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
}))

/** Any AgentMessage a 1.6 session may hold. */
const agentMessage16Arb = fc.oneof(
  { weight: 4, arbitrary: userMessageArb },
  { weight: 5, arbitrary: assistantMessageArb },
  { weight: 1, arbitrary: zeroUsageAssistantArb },
  { weight: 4, arbitrary: toolResult16Arb },
  { weight: 1, arbitrary: bashExecutionMessageArb },
  { weight: 1, arbitrary: customMessageArb },
  { weight: 1, arbitrary: branchSummaryMessageArb },
  { weight: 1, arbitrary: compactionSummaryMessageArb },
  { weight: 2, arbitrary: systemMessageArb },
  { weight: 1, arbitrary: nullContentMessageArb },
)

/** What a context edit puts in place of its target's content (any editable kind). */
const replacementContentArb = fc.oneof(
  { weight: 3, arbitrary: bodyArb(400) },
  { weight: 2, arbitrary: textOrImageBlocksArb },
  { weight: 2, arbitrary: assistantContentArb },
)

// ---------------------------------------------------------------------------
// Entry timestamps (ISO strings)
// ---------------------------------------------------------------------------

// Parseable by Date but not canonical toISOString() output.
const ODD_PARSEABLE_TIMESTAMPS = [
  '2024-01-15T10:30:00Z',
  '2024-01-15T10:30:00.1Z',
  '2024-01-15T10:30:00.123456Z',
  '2024-01-15T10:30:00+02:00',
  '2024-01-15T10:30:00-0530',
  '2024-01-15T10:30:00', // local time
  '2024-01-15T10:30', // local time
  '2024-01-15', // UTC
  '2024-01', // UTC
  '2024',
  '2024-01-15 10:30:00', // legacy parser, local time
  '2024-01-15T10:30:00z',
  '+010000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '+275760-09-13T00:00:00.000Z', // max Date
  '1970-01-01T00:00:00.000Z',
  '1969-12-31T23:59:59.999Z',
  'Mon, 15 Jan 2024 10:30:00 GMT',
  'January 15, 2024 10:30:00',
  '2024/01/15',
  '1/15/2024',
  '2024-1-5',
  ' 2024-01-15T10:30:00Z ',
  '2024-01-15T24:00:00Z',
  'Tue Jan 16 2024 11:30:00 GMT+0100 (Central European Standard Time)',
]
// Date parses these to NaN.
const UNPARSEABLE_TIMESTAMPS = [
  '',
  'not a date',
  '2024-13-01T00:00:00Z',
  '2024-01-15T25:00:00Z',
  '+275760-09-13T00:00:00.001Z',
  '2024-01-15T10:30:00.Z',
  '😀',
  'NaN',
  '2024-01-32',
]

function isoFromMs(ms) {
  return new Date(ms).toISOString()
}

// ---------------------------------------------------------------------------
// Entries (specs resolved into path entries by buildPathEntries)
// ---------------------------------------------------------------------------

// A reference to another entry of the same path, resolved at build time.
const entryRefArb = fc.oneof(
  { weight: 6, arbitrary: fc.nat(40).map((n) => ({ ref: 'back', n })) },
  { weight: 2, arbitrary: fc.nat(200).map((n) => ({ ref: 'any', n })) },
  { weight: 2, arbitrary: fc.nat(99).map((n) => ({ ref: 'missing', n })) },
  { weight: 1, arbitrary: fc.constant({ ref: 'self' }) },
)

/**
 * Entry-spec arbitraries. oddFileEntries: compaction / branch_summary
 * `details.readFiles` / `details.modifiedFiles` arrays may also hold non-string
 * values (allowed by the types, where `details` is `unknown`; the reference
 * copies them into the fileOps Sets as they are).
 */
/** Entry specs only 1.6 sessions hold: context edits (of any entry, or of none) and usage entries. */
function line16EntrySpecs() {
  return [
    {
      weight: 3,
      arbitrary: fc
        .tuple(entryRefArb, fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: replacementContentArb.map((content) => ({ content })) }))
        .map(([target, replacement]) => ({ kind: 'context_edit', target, replacement })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom('compaction', 'branch_summary', 'bug_report'), providerArb, modelIdArb, usageArb).map(([usageKind, provider, model, usage]) => ({ kind: 'usage', usageKind, provider, model, usage })),
    },
  ]
}

function makeEntryArbs(oddFileEntries, line16 = false) {
  const filesListArb = fc.array(
    fc.oneof(
      { weight: 10, arbitrary: filePathArb },
      { weight: 1, arbitrary: fc.constant('') },
      ...(oddFileEntries ? [{ weight: 2, arbitrary: fc.constantFrom(1, null, undefined, { p: 1 }, ['x'], NaN) }] : []),
    ),
    { maxLength: 6 },
  )

  const detailsArb = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(filesListArb, filesListArb).map(([readFiles, modifiedFiles]) => ({ readFiles, modifiedFiles })) },
    { weight: 1, arbitrary: filesListArb.map((readFiles) => ({ readFiles })) },
    { weight: 1, arbitrary: filesListArb.map((modifiedFiles) => ({ modifiedFiles, extra: true })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        null,
        0,
        '',
        'details',
        [],
        {},
        { readFiles: 'src/a.ts', modifiedFiles: { 0: 'x', length: 1 } },
        { readFiles: new Set(['src/set.ts']) },
      ),
    },
    { weight: 1, arbitrary: argValueArb.value },
  )

  const messageEntrySpecArb = (line16 ? agentMessage16Arb : agentMessageArb).map((message) => ({ kind: 'message', message }))

  const entrySpecArb = fc.oneof(
    { weight: 30, arbitrary: messageEntrySpecArb },
    {
      weight: 2,
      arbitrary: fc.constantFrom('off', 'minimal', 'low', 'medium', 'high', 'xhigh', '').map((thinkingLevel) => ({ kind: 'thinking_level_change', thinkingLevel })),
    },
    { weight: 2, arbitrary: fc.tuple(providerArb, modelIdArb).map(([provider, modelId]) => ({ kind: 'model_change', provider, modelId })) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          bodyArb(600),
          entryRefArb,
          usageNumberArb,
          opt(detailsArb, { absent: 2, undef: 1, value: 6 }),
          opt(fc.boolean(), { absent: 3, undef: 1, value: 2 }),
          line16 ? opt(systemMessageArb, { absent: 2, undef: 1, value: 3 }) : fc.constant(ABSENT),
        )
        .map(([summary, firstKept, tokensBefore, details, fromHook, systemMessage]) => ({ kind: 'compaction', summary, firstKept, tokensBefore, details, fromHook, systemMessage })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.oneof({ weight: 5, arbitrary: bodyArb(600) }, { weight: 1, arbitrary: fc.constant('') }),
          fc.oneof(entryRefArb, fc.constant({ ref: 'root' })),
          opt(detailsArb, { absent: 2, undef: 1, value: 4 }),
          opt(fc.boolean(), { absent: 3, undef: 1, value: 2 }),
        )
        .map(([summary, from, details, fromHook]) => ({ kind: 'branch_summary', summary, from, details, fromHook })),
    },
    { weight: 1, arbitrary: fc.tuple(customTypeArb, opt(argValueArb.value)).map(([customType, data]) => ({ kind: 'custom', customType, data })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(customTypeArb, line16 ? fc.oneof({ weight: 12, arbitrary: userContentArb }, { weight: 1, arbitrary: fc.constantFrom(null, undefined) }) : userContentArb, fc.boolean(), opt(argValueArb.value))
        .map(([customType, content, display, details]) => ({ kind: 'custom_message', customType, content, display, details })),
    },
    { weight: 1, arbitrary: fc.tuple(entryRefArb, opt(textArb(12), { absent: 0, undef: 1, value: 4 })).map(([target, label]) => ({ kind: 'label', target, label })) },
    { weight: 1, arbitrary: opt(textArb(20), { absent: 1, undef: 1, value: 4 }).map((name) => ({ kind: 'session_info', name })) },
    ...(line16 ? line16EntrySpecs() : []),
  )

  // "Turn-shaped" sequences: a user-ish start, then assistant/tool-result steps.
  const turnStartSpecArb = fc.oneof(
    { weight: 8, arbitrary: userMessageArb.map((message) => ({ kind: 'message', message })) },
    { weight: 1, arbitrary: bashExecutionMessageArb.map((message) => ({ kind: 'message', message })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(customTypeArb, userContentArb, fc.boolean(), opt(argValueArb.value))
        .map(([customType, content, display, details]) => ({ kind: 'custom_message', customType, content, display, details })),
    },
  )
  const stepSpecArb = fc
    .tuple(
      assistantMessageArb,
      fc.array(textOrImageBlocksArb, { maxLength: 3 }),
      fc.array(entrySpecArb, { maxLength: 1 }),
      line16 ? opt(nestedCallsArb, { absent: 3, undef: 0, value: 1 }) : fc.constant(ABSENT),
      line16 ? fc.oneof({ weight: 16, arbitrary: fc.constant(ABSENT) }, { weight: 2, arbitrary: fc.constant('omit') }, { weight: 1, arbitrary: replacementContentArb }) : fc.constant(ABSENT),
    )
    .map(([assistant, results, meta, nestedCalls, recovery]) => {
      const specs = [{ kind: 'message', message: assistant }]
      const calls = assistant.content.filter((b) => b.type === 'toolCall')
      results.forEach((content, i) => {
        const call = calls[i]
        specs.push({
          kind: 'message',
          message: {
            role: 'toolResult',
            toolCallId: call ? call.id : `orphan_${i}`,
            toolName: call ? call.name : 'read',
            content,
            isError: false,
            timestamp: assistant.timestamp,
            ...(nestedCalls === ABSENT ? {} : { nestedCalls }),
          },
        })
      })
      // A failed attempt the agent hid (or shortened) with edits of the assistant and its results.
      if (recovery !== ABSENT) {
        const replacement = recovery === 'omit' ? null : { content: recovery }
        // Edit j comes m entries after step entry j: each reaches back the same distance.
        const m = specs.length
        for (let j = 0; j < m; j++) specs.push({ kind: 'context_edit', target: { ref: 'back', n: m - 1 }, replacement })
      }
      return specs.concat(meta)
    })
  const turnSpecArb = fc
    .tuple(turnStartSpecArb, fc.array(stepSpecArb, { maxLength: 4 }))
    .map(([start, steps]) => [start, ...steps.flat()])

  return { entrySpecArb, turnSpecArb }
}

const STANDARD_ENTRY_ARBS = makeEntryArbs(false)
const LINE16_ENTRY_ARBS = makeEntryArbs(false, true)
const LINE16_ODD_FILE_ENTRY_ARBS = makeEntryArbs(true, true)
const ODD_FILE_ENTRY_ARBS = makeEntryArbs(true)
const { entrySpecArb } = STANDARD_ENTRY_ARBS

const sessionStyleArb = fc.record({
  salt: fc.nat(),
  idStyle: fc.oneof({ weight: 12, arbitrary: fc.constant('hex') }, { weight: 1, arbitrary: fc.constant('uuid') }, { weight: 1, arbitrary: fc.constant('mixed') }),
  startMs: fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
  stepMs: fc.integer({ min: 0, max: 120_000 }),
  // per-entry timestamp oddities: [index, kind, pick]
  oddTimestamps: fc.array(fc.tuple(fc.nat(80), fc.constantFrom('odd', 'bad'), fc.nat()), { maxLength: 3 }),
  huge: fc.oneof({ weight: 30, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(fc.nat(80), hugeStringArb) }),
  timestampMode: fc.oneof({ weight: 17, arbitrary: fc.constant('iso') }, { weight: 2, arbitrary: fc.constant('odd') }, { weight: 1, arbitrary: fc.constant('bad') }),
  // Structurally typed objects need not be plain: 'proto' puts `type` / `role` on the
  // prototype, 'getter' exposes them through prototype getters (class-like objects).
  inherit: fc.oneof({ weight: 30, arbitrary: fc.constant('none') }, { weight: 1, arbitrary: fc.constant('proto') }, { weight: 1, arbitrary: fc.constant('getter') }),
  endWithCompaction: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
})

/** 1.6 sessions are also generated as trees: [index, parent pick] pairs where an entry forks off an earlier one. */
const session16StyleArb = fc
  .tuple(sessionStyleArb, fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(fc.nat(80), fc.nat()), { minLength: 1, maxLength: 4 }) }))
  .map(([style, forks]) => ({ ...style, forks, line16: true }))

function hex8(n) {
  return (n >>> 0).toString(16).padStart(8, '0')
}

function makeIds(count, style) {
  const ids = []
  const used = new Set()
  for (let i = 0; i < count; i++) {
    // Multiplying by an odd constant is a bijection mod 2^32: ids are unique.
    const h = hex8(Math.imul(i + 1, 0x9e3779b1) ^ style.salt)
    let id = h
    if (style.idStyle === 'uuid') id = `${h}-${h.slice(0, 4)}-4${h.slice(1, 4)}-8${h.slice(5, 8)}-${h}${h.slice(0, 4)}`
    if (style.idStyle === 'mixed') {
      const pick = (style.salt + i) % 7
      if (pick === 0 && !used.has('')) id = ''
      else if (pick === 1) id = `😀${i}`
      else if (pick === 2) id = `${h}${h}${h}${h}${h}`
      else if (pick === 3) id = `ID-${i}`
    }
    if (used.has(id)) id = `${h}-${i}`
    used.add(id)
    ids.push(id)
  }
  return ids
}

function resolveRef(ref, index, ids, salt) {
  if (!ref) return ids[index]
  switch (ref.ref) {
    case 'back':
      return index === 0 ? `missing${ref.n}` : ids[index - 1 - (ref.n % index)]
    case 'any':
      return ids[ref.n % ids.length]
    case 'self':
      return ids[index]
    case 'root':
      return 'root'
    case 'missing':
    default:
      return `nf${hex8(salt ^ 0x5bd1e995).slice(0, 4)}${ref.n}`.slice(0, 8)
  }
}

function applyHuge(entry, huge) {
  const e = entry
  switch (e.type) {
    case 'message': {
      const m = e.message
      // 1.6 sessions hold messages with a null content: those stay as they are.
      const parts = Array.isArray(m.content) ? m.content : []
      if (m.role === 'user' || m.role === 'custom') m.content = typeof m.content === 'string' ? huge : [{ type: 'text', text: huge }, ...parts]
      else if (m.role === 'assistant') m.content = [{ type: 'text', text: huge }, ...parts]
      else if (m.role === 'toolResult') m.content = [{ type: 'text', text: huge }, ...parts]
      else if (m.role === 'bashExecution') m.output = huge
      else m.summary = huge
      break
    }
    case 'compaction':
    case 'branch_summary':
      e.summary = huge
      break
    case 'custom_message':
      e.content = huge
      break
    default:
      break
  }
}

/** The previous entry; in a tree-shaped session, now and then an earlier one (a branch). */
function parentOf(index, ids, style) {
  if (index === 0) return null
  const fork = style.forks && style.forks.find(([at]) => at % ids.length === index)
  return fork ? ids[fork[1] % index] : ids[index - 1]
}

function buildEntry(spec, index, ids, style, timestamp) {
  const head = [
    ['type', spec.kind],
    ['id', ids[index]],
    ['parentId', parentOf(index, ids, style)],
    ['timestamp', timestamp],
  ]
  switch (spec.kind) {
    case 'message':
      // Shallow-copy the message so a generated message object is never shared between entries.
      return obj([...head, ['message', { ...spec.message }]])
    case 'thinking_level_change':
      return obj([...head, ['thinkingLevel', spec.thinkingLevel]])
    case 'model_change':
      return obj([...head, ['provider', spec.provider], ['modelId', spec.modelId]])
    case 'compaction':
      return obj([
        ...head,
        ['summary', spec.summary],
        ['firstKeptEntryId', resolveRef(spec.firstKept, index, ids, style.salt)],
        ['tokensBefore', spec.tokensBefore],
        ['details', spec.details],
        ['fromHook', spec.fromHook],
        ['systemMessage', spec.systemMessage ?? ABSENT],
      ])
    case 'context_edit':
      return obj([...head, ['targetId', resolveRef(spec.target, index, ids, style.salt)], ['replacement', spec.replacement]])
    case 'usage':
      return obj([...head, ['kind', spec.usageKind], ['provider', spec.provider], ['model', spec.model], ['usage', spec.usage]])
    case 'branch_summary':
      return obj([
        ...head,
        ['fromId', resolveRef(spec.from, index, ids, style.salt)],
        ['summary', spec.summary],
        ['details', spec.details],
        ['fromHook', spec.fromHook],
      ])
    case 'custom':
      return obj([...head, ['customType', spec.customType], ['data', spec.data]])
    case 'custom_message':
      return obj([
        ...head,
        ['customType', spec.customType],
        ['content', spec.content],
        ['display', spec.display],
        ['details', spec.details],
      ])
    case 'label':
      return obj([...head, ['targetId', resolveRef(spec.target, index, ids, style.salt)], ['label', spec.label]])
    case 'session_info':
      return obj([...head, ['name', spec.name]])
    default:
      throw new Error(`unknown spec kind ${spec.kind}`)
  }
}

/** Moves `key` of a plain object onto its prototype (as a value or a getter). */
function inheritKey(o, key, mode) {
  if (!o || typeof o !== 'object' || !(key in o)) return o
  const value = o[key]
  const proto = mode === 'getter' ? Object.defineProperty({}, key, { get() { return value }, enumerable: false, configurable: true }) : { [key]: value }
  const out = Object.create(proto)
  for (const k of Object.keys(o)) if (k !== key) out[k] = o[k]
  return out
}

/** Turns entry specs + a session style into SessionEntry[] (v3 path entries). */
function buildPathEntries(specs, style) {
  const list = specs.slice()
  if (style.endWithCompaction) {
    list.push({ kind: 'compaction', summary: 'final compaction', firstKept: { ref: 'back', n: 3 }, tokensBefore: 1234, details: ABSENT, fromHook: ABSENT })
  }
  const ids = makeIds(list.length, style)
  const odd = new Map()
  for (const [i, kind, pick] of style.oddTimestamps) {
    odd.set(i % Math.max(1, list.length), kind === 'odd' ? ODD_PARSEABLE_TIMESTAMPS[pick % ODD_PARSEABLE_TIMESTAMPS.length] : UNPARSEABLE_TIMESTAMPS[pick % UNPARSEABLE_TIMESTAMPS.length])
  }
  const entries = list.map((spec, i) => {
    let ts = odd.has(i) ? odd.get(i) : isoFromMs(style.startMs + i * style.stepMs)
    if (style.timestampMode === 'odd') ts = ODD_PARSEABLE_TIMESTAMPS[(style.salt + i) % ODD_PARSEABLE_TIMESTAMPS.length]
    else if (style.timestampMode === 'bad') ts = UNPARSEABLE_TIMESTAMPS[(style.salt + i) % UNPARSEABLE_TIMESTAMPS.length]
    return buildEntry(spec, i, ids, style, ts)
  })
  if (style.huge && entries.length > 0) {
    const [at, huge] = style.huge
    applyHuge(entries[at % entries.length], huge)
  }
  if (style.inherit && style.inherit !== 'none') {
    for (let i = 0; i < entries.length; i++) {
      let e = entries[i]
      // 1.6 copies the messages it edits or normalises with a spread, which drops a role
      // held by a prototype (a difference listed in __test__/differences.js): its sessions
      // inherit only the entries' types.
      if (e.type === 'message' && !style.line16) e = { ...e, message: inheritKey(e.message, 'role', style.inherit) }
      entries[i] = inheritKey(e, 'type', style.inherit)
    }
  }
  return entries
}

/**
 * Arbitrary of SessionEntry[] path entries.
 * options.maxEntries (default 60) is the size knob; options.shape: 'mixed' | 'soup' | 'turns';
 * options.oddFileEntries (default false): details file lists may hold non-strings.
 * options.line ('0.78' by default, or '1.6'): what that agent line's sessions hold; 1.6 adds
 * system messages, context_edit and usage entries, nestedCalls, zero usage, null content,
 * compactions with a systemMessage, hidden failed attempts, and tree-shaped sessions.
 */
function pathEntriesArb(options = {}) {
  const maxEntries = options.maxEntries ?? 60
  const shape = options.shape ?? 'mixed'
  const line16 = options.line === '1.6'
  const arbs = line16 ? (options.oddFileEntries ? LINE16_ODD_FILE_ENTRY_ARBS : LINE16_ENTRY_ARBS) : options.oddFileEntries ? ODD_FILE_ENTRY_ARBS : STANDARD_ENTRY_ARBS
  const { entrySpecArb, turnSpecArb } = arbs
  const soup = fc.array(entrySpecArb, { maxLength: maxEntries })
  const turns = fc
    .array(turnSpecArb, { maxLength: Math.max(1, Math.ceil(maxEntries / 6)) })
    .map((ts) => ts.flat().slice(0, maxEntries))
  const specsArb = shape === 'soup' ? soup : shape === 'turns' ? turns : fc.oneof(soup, turns)
  return fc.tuple(specsArb, line16 ? session16StyleArb : sessionStyleArb).map(([specs, style]) => buildPathEntries(specs, style))
}

// ---------------------------------------------------------------------------
// Settings and other inputs
// ---------------------------------------------------------------------------

const keepRecentTokensArb = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(0, 1, 20000) },
  { weight: 6, arbitrary: fc.integer({ min: 2, max: 3000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 3000, max: 100_000 }) },
  { weight: 1, arbitrary: fc.constantFrom(1e9, Number.MAX_SAFE_INTEGER, 2 ** 31, 2 ** 32, 0.5, 1e21, Infinity) },
)
const reserveTokensArb = fc.oneof(fc.constantFrom(16384, 0, 1), fc.nat(200_000))

const compactionSettingsArb = fc
  .tuple(fc.boolean(), reserveTokensArb, keepRecentTokensArb)
  .map(([enabled, reserveTokens, keepRecentTokens]) => ({ enabled, reserveTokens, keepRecentTokens }))

const fileOpsArb = fc
  .tuple(fc.array(filePathArb, { maxLength: 8 }), fc.array(filePathArb, { maxLength: 8 }), fc.array(filePathArb, { maxLength: 8 }))
  .map(([read, written, edited]) => ({ read: new Set(read), written: new Set(written), edited: new Set(edited) }))

// ---------------------------------------------------------------------------
// Session trees (built with a SessionManager's own append methods)
// ---------------------------------------------------------------------------

const treeTextArb = fc.string({ maxLength: 160 })
const treeFilePathArb = fc.constantFrom('a.ts', 'b.ts', 'src/c.rs', 'README.md', '')
const treeToolCallArb = fc.record({
  name: fc.constantFrom('read', 'write', 'edit', 'bash'),
  path: treeFilePathArb,
})

/** One step of building a tree: an append, a branch from an earlier entry, or a reset of the leaf. */
const treeOpArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('user'), text: treeTextArb }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('assistant'), text: treeTextArb, tools: fc.array(treeToolCallArb, { maxLength: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('toolResult'), text: treeTextArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('compaction'), summary: treeTextArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('branchSummary'),
      pick: fc.nat(),
      fromRoot: fc.boolean(),
      summary: treeTextArb,
      details: fc.option(
        fc.record({ readFiles: fc.array(treeFilePathArb, { maxLength: 3 }), modifiedFiles: fc.array(treeFilePathArb, { maxLength: 3 }) }),
      ),
      fromHook: fc.constantFrom(undefined, false, true),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('custom'), text: treeTextArb, display: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('other'), which: fc.constantFrom('thinking', 'model', 'entry', 'info') }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('branch'), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset') }) },
)

/** The steps of one tree (up to 70). */
const treeOpsArb = fc.array(treeOpArb, { maxLength: 70 })

/** An entry id to ask about: mostly one of the tree's, sometimes one no tree has. */
const treeIdChoiceArb = fc.oneof(
  { weight: 8, arbitrary: fc.nat().map((n) => ({ pick: n })) },
  { weight: 1, arbitrary: fc.constantFrom({ value: 'unknown-id' }, { value: '' }, { value: null }, { value: undefined }) },
)

const branchBudgetArb = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 400 }), fc.double({ min: 0, max: 300, noNaN: true }))

/** A branch-summary question: from which leaf, to which target, with which token budgets. */
const treeQueryArb = fc.record({ old: treeIdChoiceArb, target: treeIdChoiceArb, budgets: fc.array(branchBudgetArb, { minLength: 1, maxLength: 3 }) })

/** Builds a session with `SessionManager`'s own append methods (in memory); returns it and its ids. */
function buildTree(SessionManager, ops) {
  const session = SessionManager.inMemory('/tmp')
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
    }
  }
  return { session, ids }
}

/** The id a treeIdChoiceArb value names in a tree with `ids`. */
function resolveTreeId(choice, ids) {
  if ('value' in choice) return choice.value
  return ids.length ? ids[choice.pick % ids.length] : 'no-entries'
}

// ---------------------------------------------------------------------------
// Deterministic large sessions (no fast-check)
// ---------------------------------------------------------------------------

const { mulberry32 } = require('../../scripts/prng')

const WORDS = (
  'the function returns a value when called with the file path and config options but the test fails ' +
  'because of an unexpected token in JSON at position error while parsing module resolution cache ' +
  'refactor compaction logic keep recent tokens summary branch session entry message assistant user ' +
  'tool result bash command output exit code stack trace at Object.<anonymous> src/index.ts:42:13 ' +
  'const let var import export default async await Promise resolve reject fixture snapshot mock 你好 😀'
).split(' ')

let corpusCache = null
function corpus() {
  if (corpusCache) return corpusCache
  const rnd = mulberry32(0xc0ffee)
  const parts = []
  let len = 0
  while (len < 200_000) {
    const w = WORDS[Math.floor(rnd() * WORDS.length)]
    parts.push(w)
    len += w.length + 1
    if (rnd() < 0.08) parts.push('\n')
  }
  corpusCache = parts.join(' ')
  return corpusCache
}

/**
 * Deterministic session resembling a real coding-agent session, `n` path entries.
 * User turns, assistant messages with thinking + tool calls (read/edit/write/bash/grep/ls
 * with paths), tool results of a few hundred to a few thousand characters, usage on
 * every assistant message, occasional compactions (firstKeptEntryId ~20 entries back),
 * model changes, labels, custom messages and bash executions. Never ends with a compaction.
 */
function buildLargeSession(n, seed = 1) {
  const rnd = mulberry32(seed)
  const text = corpus()
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1))
  const slice = (lo, hi) => {
    const len = int(lo, hi)
    const start = int(0, text.length - len - 1)
    return text.slice(start, start + len)
  }
  const files = []
  for (let i = 0; i < 300; i++) {
    const dir = ['src', 'src/core', 'src/utils', 'test', 'docs', 'scripts'][i % 6]
    files.push(`${dir}/${WORDS[i % WORDS.length].replace(/[^a-z]/gi, '') || 'file'}_${i}.${['ts', 'rs', 'md', 'json'][i % 4]}`)
  }
  const entries = []
  let t = Date.UTC(2025, 0, 1, 9, 0, 0)
  let counter = seed >>> 0
  let tokens = 2000
  let lastCompactionAt = -1000
  const nextId = () => {
    counter = (counter + 1) >>> 0
    return hex8(Math.imul(counter, 0x9e3779b1) ^ 0x1234567)
  }
  const push = (type, fields) => {
    t += int(200, 30_000)
    const e = { type, id: nextId(), parentId: entries.length ? entries[entries.length - 1].id : null, timestamp: new Date(t).toISOString(), ...fields }
    entries.push(e)
    return e
  }
  const usage = (out) => {
    const input = int(5, 3000)
    const cacheRead = tokens
    const cacheWrite = int(0, 2000)
    tokens += input + out
    const total = input + out + cacheRead + cacheWrite
    return {
      input,
      output: out,
      cacheRead,
      cacheWrite,
      totalTokens: total,
      cost: { input: input * 3e-6, output: out * 1.5e-5, cacheRead: cacheRead * 3e-7, cacheWrite: cacheWrite * 3.75e-6, total: total * 2e-6 },
    }
  }

  push('model_change', { provider: 'anthropic', modelId: 'claude-sonnet-4-5' })
  push('thinking_level_change', { thinkingLevel: 'medium' })

  while (entries.length < n) {
    // user turn
    const r = rnd()
    if (r < 0.04) {
      push('message', {
        message: { role: 'bashExecution', command: `npm test -- ${files[int(0, files.length - 1)]}`, output: slice(100, 3000), exitCode: int(0, 1), cancelled: false, truncated: false, timestamp: t, excludeFromContext: rnd() < 0.2 ? true : undefined },
      })
    } else if (r < 0.07) {
      push('custom_message', { customType: 'reminder', content: slice(50, 400), display: rnd() < 0.5, details: undefined })
    } else {
      const content = rnd() < 0.05 ? [{ type: 'text', text: slice(50, 500) }, { type: 'image', data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', mimeType: 'image/png' }] : slice(20, 600)
      push('message', { message: { role: 'user', content, timestamp: t } })
    }
    const steps = int(1, 8)
    for (let s = 0; s < steps && entries.length < n; s++) {
      const last = s === steps - 1
      const content = [{ type: 'thinking', thinking: slice(100, 800), thinkingSignature: 'sig' }]
      if (rnd() < 0.4 || last) content.push({ type: 'text', text: slice(30, 600) })
      const calls = []
      if (!last) {
        const k = int(1, 3)
        for (let c = 0; c < k; c++) {
          const tool = ['read', 'read', 'read', 'edit', 'write', 'bash', 'grep', 'ls'][int(0, 7)]
          const path = files[int(0, files.length - 1)]
          let args
          if (tool === 'read') args = { path, offset: rnd() < 0.3 ? int(1, 500) : undefined, limit: rnd() < 0.3 ? 200 : undefined }
          else if (tool === 'edit') args = { path, oldText: slice(10, 200), newText: slice(10, 300) }
          else if (tool === 'write') args = { path, content: slice(200, 3000) }
          else if (tool === 'bash') args = { command: `cd ${path.split('/')[0]} && cargo test 2>&1 | tail -50`, timeout: 120 }
          else if (tool === 'grep') args = { pattern: WORDS[int(0, WORDS.length - 1)], path: path.split('/')[0] }
          else args = { path: path.split('/')[0] }
          const call = { type: 'toolCall', id: `toolu_${nextId()}${nextId()}`, name: tool, arguments: args }
          content.push(call)
          calls.push(call)
        }
      }
      push('message', {
        message: {
          role: 'assistant',
          content,
          api: 'anthropic-messages',
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          usage: usage(int(50, 2000)),
          stopReason: last ? 'stop' : rnd() < 0.01 ? 'aborted' : 'toolUse',
          timestamp: t,
        },
      })
      for (const call of calls) {
        if (entries.length >= n) break
        push('message', {
          message: { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: slice(200, 4000) }], isError: rnd() < 0.05, timestamp: t },
        })
      }
    }
    // occasional meta entries
    if (entries.length < n - 1 && rnd() < 0.03) push('label', { targetId: entries[int(Math.max(0, entries.length - 30), entries.length - 1)].id, label: rnd() < 0.8 ? `checkpoint ${entries.length}` : undefined })
    if (entries.length < n - 1 && rnd() < 0.01) push('model_change', { provider: rnd() < 0.5 ? 'openai' : 'anthropic', modelId: rnd() < 0.5 ? 'gpt-5' : 'claude-sonnet-4-5' })
    if (entries.length < n - 1 && rnd() < 0.005) push('branch_summary', { fromId: entries[entries.length - 5]?.id ?? 'root', summary: slice(200, 1500), details: { readFiles: [files[int(0, 299)]], modifiedFiles: [] }, fromHook: undefined })
    if (entries.length < n - 2 && entries.length - lastCompactionAt > 150 && rnd() < 0.06) {
      const target = entries[Math.max(0, entries.length - 20)]
      const readFiles = []
      const modifiedFiles = []
      for (let i = 0; i < int(0, 12); i++) readFiles.push(files[int(0, 299)])
      for (let i = 0; i < int(0, 6); i++) modifiedFiles.push(files[int(0, 299)])
      push('compaction', { summary: slice(1000, 6000), firstKeptEntryId: target.id, tokensBefore: tokens, details: { readFiles, modifiedFiles }, fromHook: undefined })
      lastCompactionAt = entries.length
      tokens = 8000
    }
  }
  entries.length = n
  if (entries[n - 1] && entries[n - 1].type === 'compaction') {
    entries[n - 1] = { type: 'label', id: entries[n - 1].id, parentId: entries[n - 1].parentId, timestamp: entries[n - 1].timestamp, targetId: entries[0].id, label: 'end' }
  }
  return entries
}

module.exports = {
  fc,
  ABSENT,
  // strings / numbers
  SPECIAL_CHARS,
  ODD_NUMBERS,
  ODD_PARSEABLE_TIMESTAMPS,
  UNPARSEABLE_TIMESTAMPS,
  HUGE_STRINGS,
  textArb,
  bodyArb,
  oddNumberArb,
  filePathArb,
  // blocks / messages
  toolCallBlockArb,
  toolCallArgumentsArb,
  argValueArb: argValueArb.value,
  usageArb,
  userMessageArb,
  assistantMessageArb,
  toolResultMessageArb,
  bashExecutionMessageArb,
  customMessageArb,
  branchSummaryMessageArb,
  compactionSummaryMessageArb,
  agentMessageArb,
  systemMessageArb,
  nestedCallsArb,
  toolResult16Arb,
  agentMessage16Arb,
  replacementContentArb,
  // sessions
  entrySpecArb,
  pathEntriesArb,
  buildPathEntries,
  compactionSettingsArb,
  keepRecentTokensArb,
  reserveTokensArb,
  fileOpsArb,
  // trees
  treeOpArb,
  treeOpsArb,
  treeQueryArb,
  branchBudgetArb,
  buildTree,
  resolveTreeId,
  buildLargeSession,
  mulberry32,
  // comparison helpers (re-exported from ./compare)
  deepFreeze,
  snapshot,
  deepEqual,
  findDifference,
}
