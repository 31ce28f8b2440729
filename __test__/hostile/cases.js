'use strict'
// Hostile-input cases, run by child.js in child processes. Each case passes
// when every call it makes either throws/rejects a clear error (an Error whose
// name is TypeError, RangeError or Error and whose message names the field or
// index, or the caller's own exception passed through unchanged) or returns
// the correct (or at least well-formed) result. A crash or a hang fails it in
// the parent.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const SETTINGS = Object.freeze({ enabled: true, reserveTokens: 16384, keepRecentTokens: 50 })
const MODEL = {
  id: 'fake-model',
  name: 'Fake',
  api: 'openai-completions',
  provider: 'fake',
  baseUrl: 'http://127.0.0.1:1',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 4096,
}
const BAD = {
  number: 5,
  boolean: true,
  object: { a: 1 },
  array: [1, 2],
  symbol: Symbol('s'),
  bigint: 10n,
  null: null,
  undefined: undefined,
  function: () => 1,
  nan: NaN,
  infinity: -Infinity,
}

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

const usage = (total) => ({ input: total - 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: total })

function userMsg(text, i = 0) {
  return { role: 'user', content: text, timestamp: 1000 + i }
}

function assistantMsg(text, i = 0) {
  return {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'hmm' },
      { type: 'text', text },
      { type: 'toolCall', id: `call${i}`, name: 'read', arguments: { path: `src/f${i}.rs` } },
    ],
    usage: usage(100 + i),
    stopReason: 'toolUse',
    timestamp: 1000 + i,
  }
}

function toolResultMsg(i = 0) {
  return { role: 'toolResult', toolCallId: `call${i}`, toolName: 'read', content: [{ type: 'text', text: `body ${i} `.repeat(20) }], isError: false, timestamp: 1000 + i }
}

/** A linear session of n entries: user, assistant, toolResult, repeating. */
function session(n) {
  const out = new Array(n)
  for (let i = 0; i < n; i++) {
    const k = i % 3
    const message = k === 0 ? userMsg(`question ${i} `.repeat(10), i) : k === 1 ? assistantMsg(`answer ${i} `.repeat(10), i) : toolResultMsg(i - 1)
    out[i] = { type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message }
  }
  return out
}

function messages(n) {
  return session(n).map((e) => e.message)
}

function deepFreeze(o) {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o)
    for (const v of Object.values(o)) deepFreeze(v)
  }
  return o
}

function nested(depth, make) {
  const root = make()
  let node = root
  for (let i = 0; i < depth; i++) {
    const next = make()
    if (Array.isArray(node)) node.push(next)
    else node.x = next
    node = next
  }
  return root
}

function fakeSession(entries) {
  const byId = new Map(entries.map((e) => [e.id, e]))
  return {
    getEntry: (id) => byId.get(id),
    getLeafId: () => entries[entries.length - 1].id,
    getBranch: () => entries,
  }
}

// Every file a case writes lies in a directory of its own under the run's
// (PC_HOSTILE_TMP, which hostile.test.js makes and checks is left empty),
// else under the system's; child.js removes a case's when it ends.
const TEMP_ROOT = process.env.PC_HOSTILE_TMP || os.tmpdir()
const made = []

function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(TEMP_ROOT, prefix))
  made.push(dir)
  return dir
}

/** Removes the directories the cases made so far. */
function removeTemp() {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

function tmpFile(name, contents) {
  const file = path.join(tempDir('pc-hostile-'), name)
  fs.writeFileSync(file, contents)
  return file
}

const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/tmp' })

function sessionFileText(n) {
  return [HEADER, ...session(n).map((e) => JSON.stringify(e))].join('\n') + '\n'
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

const CLEAR = new Set(['TypeError', 'RangeError', 'Error'])
// (V8's wordings, then JavaScriptCore's, for Bun)
const JS_CONVERSION = /^(Cannot convert a (Symbol|BigInt) value to a (string|number)|Do not know how to serialize a BigInt|Cannot convert a symbol to a (string|number)|Conversion from 'BigInt' to 'number' is not allowed\.|JSON\.stringify cannot serialize BigInt\.)$/

function describe(v) {
  try {
    return typeof v === 'string' ? JSON.stringify(v.slice(0, 100)) : String(JSON.stringify(v)).slice(0, 200)
  } catch {
    return String(v)
  }
}

/** A clear error: a TypeError/RangeError/Error whose message matches `mentions` (or is the caller's own `own`). */
function assertClearError(label, err, mentions, own) {
  if (own && err === own) return
  if (!(err instanceof Error)) throw new Error(`${label}: threw a non-Error ${describe(err)}`)
  if (!CLEAR.has(err.name)) throw new Error(`${label}: threw ${err.name}: ${err.message}`)
  if (!err.message) throw new Error(`${label}: empty error message`)
  // JS's own conversion errors, exactly what the reference throws for a Symbol
  // or BigInt in a string or number field, or a BigInt under JSON.stringify.
  if (err.name === 'TypeError' && JS_CONVERSION.test(err.message)) return
  if (mentions && !mentions.test(err.message)) throw new Error(`${label}: message ${JSON.stringify(err.message)} does not match ${mentions}`)
}

/** Calls checked so far in this process. */
const stats = { calls: 0 }

/** Either a clear error matching `mentions`, or a result that `check` accepts. */
function errorOr(label, fn, mentions, check, own) {
  stats.calls++
  let value
  try {
    value = fn()
  } catch (err) {
    assertClearError(label, err, mentions, own)
    return { threw: err }
  }
  if (check) check(value, label)
  return { value }
}

async function rejectsOr(label, fn, mentions, check, own) {
  stats.calls++
  let value
  try {
    value = await fn()
  } catch (err) {
    assertClearError(label, err, mentions, own)
    return { threw: err }
  }
  if (check) check(value, label)
  return { value }
}

function mustThrow(label, fn, mentions, own) {
  const r = errorOr(label, fn, mentions, null, own)
  if (!r.threw) throw new Error(`${label}: expected an error, got ${describe(r.value)}`)
  return r.threw
}

function mustReturn(label, fn, check) {
  stats.calls++
  let value
  try {
    value = fn()
  } catch (err) {
    throw new Error(`${label}: expected a result, threw ${err && err.name}: ${err && err.message}`)
  }
  if (check) check(value, label)
  return value
}

function assert(cond, message) {
  if (!cond) throw new Error(message)
}

/** A plan prepareCompaction could have produced for `entries`. */
function wellFormedPlan(entries) {
  return (plan, label) => {
    if (plan === undefined) return
    const ids = new Set(entries.filter((e) => e && typeof e === 'object').map((e) => e.id))
    assert(ids.has(plan.firstKeptEntryId), `${label}: firstKeptEntryId ${describe(plan.firstKeptEntryId)} is no entry's id`)
    assert(Array.isArray(plan.messagesToSummarize) && Array.isArray(plan.turnPrefixMessages), `${label}: message lists`)
    assert(typeof plan.tokensBefore === 'number' && plan.tokensBefore >= 0, `${label}: tokensBefore ${plan.tokensBefore}`)
    assert(plan.fileOps.read instanceof Set && plan.fileOps.edited instanceof Set, `${label}: fileOps`)
  }
}

const isCount = (v, label) => assert(typeof v === 'number' && Number.isInteger(v) && v >= 0, `${label}: not a count: ${describe(v)}`)
const isString = (v, label) => assert(typeof v === 'string', `${label}: not a string: ${describe(v)}`)
const isArray = (v, label) => assert(Array.isArray(v), `${label}: not an array: ${describe(v)}`)

/** Normalized plan for equality: Sets as sorted arrays. */
function normal(v) {
  return JSON.stringify(v, (k, x) => (x instanceof Set ? [...x].sort() : typeof x === 'bigint' ? `${x}n` : x))
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

const cases = []
const add = (name, run, opts = {}) => cases.push({ name, run, ...opts })

// Wrong types in every field ------------------------------------------------

const ENTRY_FIELDS = ['type', 'id', 'parentId', 'message', 'timestamp']
const MESSAGE_FIELDS = ['role', 'content', 'usage', 'stopReason', 'timestamp', 'toolCallId', 'toolName', 'isError']
const BLOCK_FIELDS = ['type', 'text', 'thinking', 'name', 'id', 'arguments']

for (const field of ENTRY_FIELDS) {
  add(`wrong type: entry.${field}`, (m) => {
    for (const [kind, bad] of Object.entries(BAD)) {
      const entries = session(9)
      entries[4] = { ...entries[4], [field]: bad }
      const label = `prepareCompaction entry[4].${field} = ${kind}`
      errorOr(label, () => m.prepareCompaction(entries, SETTINGS), /pathEntries\[4\]/, wellFormedPlan(entries))
      errorOr(`prepareBranchEntries entry[4].${field} = ${kind}`, () => m.prepareBranchEntries(entries, 1000), /entries\[4\]/, (r) => isCount(r.totalTokens, label))
      errorOr(`findCutPoint entry[4].${field} = ${kind}`, () => m.findCutPoint(entries, 0, entries.length, 50), /entries\[4\]/, (r) => isCount(r.firstKeptEntryIndex, label))
      errorOr(`getLastAssistantUsage entry[4].${field} = ${kind}`, () => m.getLastAssistantUsage(entries), /entries\[4\]/)
    }
  })
}

for (const field of MESSAGE_FIELDS) {
  add(`wrong type: message.${field}`, (m) => {
    for (const [kind, bad] of Object.entries(BAD)) {
      for (const make of [userMsg, assistantMsg, toolResultMsg]) {
        const base = make('hello', 4)
        const message = { ...base, [field]: bad }
        const label = `${base.role} message.${field} = ${kind}`
        const named = new RegExp(`\\b${field}\\b|\\[0\\]|message`)
        errorOr(`estimateTokens ${label}`, () => m.estimateTokens(message), named, isCount)
        errorOr(`convertToLlm ${label}`, () => m.convertToLlm([message]), /messages\[0\]/, isArray)
        errorOr(`serializeConversation ${label}`, () => m.serializeConversation([message]), /messages\[0\]/, isString)
        errorOr(`projectForSummary ${label}`, () => m.projectForSummary([message]), /messages\[0\]/, isArray)
        errorOr(`splitUserRounds ${label}`, () => m.splitUserRounds([message]), /messages\[0\]/, isArray)
        // An unusable usage gives NaN, as the reference's arithmetic does.
        errorOr(`estimateContextTokens ${label}`, () => m.estimateContextTokens([message]), /messages\[0\]/, (r) => assert(typeof r.tokens === 'number', label))
        const entries = session(9)
        entries[4] = { ...entries[4], message }
        errorOr(`prepareCompaction ${label}`, () => m.prepareCompaction(entries, SETTINGS), /pathEntries\[4\]\.message/, wellFormedPlan(entries))
      }
    }
  })
}

add('wrong type: content blocks', (m) => {
  for (const field of BLOCK_FIELDS) {
    for (const [kind, bad] of Object.entries(BAD)) {
      for (const type of ['text', 'thinking', 'toolCall', 'image']) {
        const block = { type, text: 't', thinking: 'th', id: 'c1', name: 'read', arguments: { path: 'a' }, data: 'AA', mimeType: 'image/png', [field]: bad }
        const message = { role: 'assistant', content: [{ type: 'text', text: 'ok' }, block], usage: usage(50), stopReason: 'stop', timestamp: 1 }
        const label = `${type} block.${field} = ${kind}`
        errorOr(`estimateTokens ${label}`, () => m.estimateTokens(message), /content\[1\]/, isCount)
        errorOr(`serializeConversation ${label}`, () => m.serializeConversation([message]), /messages\[0\]\.content\[1\]/, isString)
        errorOr(`projectForSummary ${label}`, () => m.projectForSummary([message]), /messages\[0\]\.content\[1\]/, isArray)
        errorOr(`extractFileOpsFromMessage ${label}`, () => m.extractFileOpsFromMessage(message, m.createFileOps()), /content\[1\]/)
      }
    }
  }
})

add('wrong type: settings and arguments', (m) => {
  const entries = session(9)
  for (const [kind, bad] of Object.entries(BAD)) {
    errorOr(`prepareCompaction(settings = ${kind})`, () => m.prepareCompaction(entries, bad), /settings/, wellFormedPlan(entries))
    for (const field of ['enabled', 'reserveTokens', 'keepRecentTokens']) {
      errorOr(`prepareCompaction(settings.${field} = ${kind})`, () => m.prepareCompaction(entries, { ...SETTINGS, [field]: bad }), new RegExp(`settings\\.${field}`), wellFormedPlan(entries))
      errorOr(`shouldCompact(settings.${field} = ${kind})`, () => m.shouldCompact(1000, 2000, { ...SETTINGS, [field]: bad }), new RegExp(`settings`), (v) => assert(typeof v === 'boolean', 'boolean'))
    }
    errorOr(`prepareCompaction(pathEntries = ${kind})`, () => m.prepareCompaction(bad, SETTINGS), /pathEntries/)
    errorOr(`findCutPoint(entries = ${kind})`, () => m.findCutPoint(bad, 0, 1, 5), /entries/)
    errorOr(`findCutPoint(startIndex = ${kind})`, () => m.findCutPoint(entries, bad, 9, 5), /startIndex/)
    errorOr(`findCutPoint(endIndex = ${kind})`, () => m.findCutPoint(entries, 0, bad, 5), /endIndex/)
    errorOr(`findCutPoint(keepRecentTokens = ${kind})`, () => m.findCutPoint(entries, 0, 9, bad), /keepRecentTokens/, (r) => isCount(r.firstKeptEntryIndex, 'findCutPoint'))
    errorOr(`findTurnStartIndex(entryIndex = ${kind})`, () => m.findTurnStartIndex(entries, bad, 0), /entryIndex/)
    errorOr(`estimateTokens(${kind})`, () => m.estimateTokens(bad), /message/)
    errorOr(`convertToLlm(${kind})`, () => m.convertToLlm(bad), /messages/)
    errorOr(`serializeConversation(${kind})`, () => m.serializeConversation(bad), /messages/)
    errorOr(`serializeConversation(options = ${kind})`, () => m.serializeConversation(messages(3), bad), /options/, isString)
    errorOr(`projectForSummary(${kind})`, () => m.projectForSummary(bad), /messages/)
    for (const field of ['toolResultBodies', 'dropOldestRounds', 'roundBound', 'reasoning', 'model']) {
      errorOr(`projectForSummary(options.${field} = ${kind})`, () => m.projectForSummary(messages(9), { [field]: bad }), new RegExp(`options\\.${field}`), isArray)
    }
    errorOr(`prepareBranchEntries(${kind})`, () => m.prepareBranchEntries(bad), /entries/)
    errorOr(`prepareBranchEntries(tokenBudget = ${kind})`, () => m.prepareBranchEntries(entries, bad), /tokenBudget/, (r) => isCount(r.totalTokens, 'totalTokens'))
    errorOr(`countTokens(${kind})`, () => m.countTokens(bad), /text/, isCount)
    errorOr(`countTokens(encoding = ${kind})`, () => m.countTokens('hello', bad), /encoding/, isCount)
    errorOr(`collectEntriesForBranchSummary(session = ${kind})`, () => m.collectEntriesForBranchSummary(bad, 'e1', 'e2'), /session/)
    errorOr(`collectEntriesForBranchSummary(oldLeafId = ${kind})`, () => m.collectEntriesForBranchSummary(fakeSession(entries), bad, 'e2'), /oldLeafId|session|entry/, (r) => isArray(r.entries, 'entries'))
    errorOr(`formatFileOperations(${kind})`, () => m.formatFileOperations(bad, []), /readFiles/, isString)
    errorOr(`calculateContextTokens(${kind})`, () => m.calculateContextTokens(bad), /usage/, (v) => assert(typeof v === 'number', 'number'))
    errorOr(`prepareCompactionFromFileSync(${kind})`, () => m.prepareCompactionFromFileSync(bad), /path/)
    errorOr(`prepareCompactionFromFileSync(options = ${kind})`, () => m.prepareCompactionFromFileSync('/nonexistent', bad), /options|nonexistent/)
    errorOr(`serializeForSummaryFromFileSync(${kind})`, () => m.serializeForSummaryFromFileSync(bad), /path/)
  }
})

// Parent cycles and deep chains ---------------------------------------------

add('parent cycles', (m) => {
  const entries = session(9)
  entries[0] = { ...entries[0], parentId: 'e8' }
  errorOr('prepareCompaction, cycle through the root', () => m.prepareCompaction(entries, SETTINGS), /cycle|parentId/, wellFormedPlan(entries))
  const self = session(9)
  self[8] = { ...self[8], parentId: 'e8' }
  errorOr('prepareCompaction, self-parent leaf', () => m.prepareCompaction(self, SETTINGS), /cycle|parentId/, wellFormedPlan(self))
  // Branch collection walks getEntry: a cycle must end, not loop forever.
  const cyc = session(9)
  cyc[0] = { ...cyc[0], parentId: 'e8' }
  errorOr('collectEntriesForBranchSummary on a cycle', () => m.collectEntriesForBranchSummary(fakeSession(cyc), 'e8', 'e3'), /cycle|parentId|e\d/, (r) => isArray(r.entries, 'entries'))
  const two = session(4)
  two[1] = { ...two[1], parentId: 'e2' }
  two[2] = { ...two[2], parentId: 'e1' }
  errorOr('collectEntriesForBranchSummary on a 2-cycle', () => m.collectEntriesForBranchSummary(fakeSession(two), 'e3', 'e0'), /cycle|parentId|e\d/, (r) => isArray(r.entries, 'entries'))
})

add('100k-deep chains', (m) => {
  const entries = session(100_000)
  const plan = mustReturn('prepareCompaction on 100k entries', () => m.prepareCompaction(entries, SETTINGS), wellFormedPlan(entries))
  assert(plan.messagesToSummarize.length > 99_000, 'most of a 100k session is summarized')
  const r = mustReturn('collectEntriesForBranchSummary down a 100k chain', () => m.collectEntriesForBranchSummary(fakeSession(entries), 'e99999', 'e0'))
  assert(r.entries.length === 99_999 && r.commonAncestorId === 'e0', `collected ${r.entries.length}, ancestor ${r.commonAncestorId}`)
  const b = mustReturn('prepareBranchEntries on 100k', () => m.prepareBranchEntries(entries, 0))
  // Tool results are left out of branch summaries, as in the reference.
  assert(b.messages.length === 66_667, `prepareBranchEntries kept ${b.messages.length}`)
  isCount(m.estimateContextTokens(entries.map((e) => e.message)).tokens, 'estimateContextTokens')
})

add('100k-deep nesting', (m) => {
  for (const make of [() => ({}), () => []]) {
    const args = nested(100_000, make)
    const message = { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'read', arguments: args }], usage: usage(10), stopReason: 'stop', timestamp: 1 }
    // JSON.stringify itself throws RangeError this deep; ours may too, but must not crash.
    errorOr('estimateTokens', () => m.estimateTokens(message), /stack|deep|nest|arguments/, isCount)
    errorOr('serializeConversation', () => m.serializeConversation([message]), /stack|deep|nest|arguments/, isString)
    errorOr('projectForSummary', () => m.projectForSummary([message]), /stack|deep|nest|arguments/, isArray)
    errorOr('convertToLlm', () => m.convertToLlm([message]), /stack|deep|nest|arguments/, isArray)
    const entries = session(9)
    entries[4] = { ...entries[4], message }
    errorOr('prepareCompaction', () => m.prepareCompaction(entries, SETTINGS), /stack|deep|nest|arguments/, wellFormedPlan(entries))
  }
})

// Big strings and arrays -------------------------------------------------------

add(
  '100 MB strings',
  (m) => {
    const big = 'x'.repeat(100 * 1024 * 1024)
    const msg = userMsg(big)
    const tokens = mustReturn('estimateTokens', () => m.estimateTokens(msg))
    assert(tokens === Math.ceil(big.length / 4), `estimateTokens ${tokens}`)
    const text = mustReturn('serializeConversation', () => m.serializeConversation([msg]))
    assert(text.length === big.length + '[User]: '.length, `transcript length ${text.length}`)
    const entries = session(9)
    entries[3] = { ...entries[3], message: msg }
    mustReturn('prepareCompaction', () => m.prepareCompaction(entries, SETTINGS), wellFormedPlan(entries))
    const projected = mustReturn('projectForSummary with a round bound', () => m.projectForSummary([msg], { roundBound: 1000 }))
    assert(JSON.stringify(projected).length < 5000, 'bounded round is cut')
    const bigResult = { ...toolResultMsg(0), content: [{ type: 'text', text: big }] }
    const t = mustReturn('serializeConversation truncates a 100 MB tool result', () => m.serializeConversation([assistantMsg('x', 0), bigResult]))
    assert(t.length < 10_000, `tool result not truncated: ${t.length}`)
    const uni = '\u{1F600}'.repeat(2 * 1024 * 1024) + '\uD800'
    isCount(mustReturn('countTokens, 4M surrogate units and a lone one', () => m.countTokens(uni)), 'countTokens')
    mustReturn('formatFileOperations with a 100 MB path', () => m.formatFileOperations([big], []), isString)
  },
  { heavy: true },
)

add('huge and sparse arrays', (m) => {
  const huge = []
  huge.length = 2 ** 32 - 1
  const label = /\[0\]|\[4294967294\]/
  mustThrow('prepareCompaction', () => m.prepareCompaction(huge, SETTINGS), label)
  mustThrow('prepareBranchEntries', () => m.prepareBranchEntries(huge), label)
  mustThrow('findCutPoint', () => m.findCutPoint(huge, 0, 5, 10), label)
  // convertToLlm's map and filter pass over holes: nothing to convert.
  const empty = (v, l) => assert(Array.isArray(v) && v.length === 0, `${l}: expected [], got ${describe(v)}`)
  mustReturn('convertToLlm', () => m.convertToLlm(huge), empty)
  mustThrow('serializeConversation', () => m.serializeConversation(huge), label)
  mustReturn('projectForSummary', () => m.projectForSummary(huge), empty)
  mustThrow('splitUserRounds', () => m.splitUserRounds(huge), label)
  mustThrow('estimateContextTokens', () => m.estimateContextTokens(huge), label)
  mustThrow('getLastAssistantUsage', () => m.getLastAssistantUsage(huge), label)
  const bigContent = { role: 'assistant', content: huge, usage: usage(5), stopReason: 'stop', timestamp: 1 }
  errorOr('estimateTokens, content length 2^32-1', () => m.estimateTokens(bigContent), /content\[0\]/, isCount)
  mustThrow('serializeConversation, content length 2^32-1', () => m.serializeConversation([bigContent]), /content\[0\]/)
  // Holes inside otherwise valid arrays.
  const holey = session(9)
  delete holey[4]
  mustThrow('prepareCompaction with a hole', () => m.prepareCompaction(holey, SETTINGS), /pathEntries\[4\]/)
  const holeyMsgs = messages(6)
  delete holeyMsgs[2]
  mustThrow('serializeConversation with a hole', () => m.serializeConversation(holeyMsgs), /messages\[2\]/)
  mustReturn('convertToLlm with a hole', () => m.convertToLlm(holeyMsgs), (v, l) => assert(v.length === 5, `${l}: ${describe(v)}`))
  // A few elements far apart in a 2^32-1-long array, one of them inherited.
  const farApart = []
  farApart.length = 2 ** 32 - 1
  farApart[7] = holeyMsgs[0]
  farApart[2 ** 32 - 2] = holeyMsgs[1]
  Object.setPrototypeOf(farApart, Object.assign(Object.create(Array.prototype), { 70000: holeyMsgs[3] }))
  mustReturn('convertToLlm, three elements in 2^32-1', () => m.convertToLlm(farApart), (v, l) =>
    assert(v.length === 3 && v[0] === holeyMsgs[0] && v[1] === holeyMsgs[3] && v[2] === holeyMsgs[1], `${l}: ${describe(v)}`),
  )
  const holeyContent = assistantMsg('x', 1)
  holeyContent.content = [holeyContent.content[1], , holeyContent.content[2]] // eslint-disable-line no-sparse-arrays
  errorOr('estimateTokens with a hole in content', () => m.estimateTokens(holeyContent), /content\[1\]/, isCount)
  errorOr('serializeConversation with a hole in content', () => m.serializeConversation([holeyContent]), /content\[1\]/, isString)
  // A million real blocks.
  const many = { role: 'assistant', content: Array.from({ length: 1_000_000 }, () => ({ type: 'text', text: 'abcd' })), stopReason: 'stop', timestamp: 1 }
  assert(m.estimateTokens(many) === 1_000_000, 'a million 4-char blocks estimate as a million tokens')
  const paths = Array.from({ length: 200_000 }, (_, i) => `f${i}`)
  isString(m.formatFileOperations(paths, paths), 'formatFileOperations')
})

const longListsInMessages = async (m) => {
  const sparse = (at) => {
    const a = []
    a.length = 2 ** 32 - 1
    return Object.assign(a, at)
  }
  const started = Date.now()
  // A summarized assistant's calls, far apart: its file operations, as for...of finds them past the holes.
  const content = sparse({ 3: { type: 'toolCall', id: 'c', name: 'read', arguments: { path: 'near.ts' } }, [2 ** 32 - 2]: { type: 'toolCall', id: 'd', name: 'edit', arguments: { path: 'far.ts' } } })
  const entries = session(9)
  entries[1] = { ...entries[1], message: { ...entries[1].message, content } }
  const plan = mustReturn('prepareCompaction, summarized content 2^32-1 long', () => m.prepareCompaction(entries, SETTINGS), wellFormedPlan(entries))
  assert(plan.fileOps.read.has('near.ts') && plan.fileOps.edited.has('far.ts'), `the calls' files: ${describe([...plan.fileOps.read, ...plan.fileOps.edited])}`)
  const fileOps = { read: new Set(), written: new Set(), edited: new Set() }
  m.extractFileOpsFromMessage({ role: 'assistant', content }, fileOps)
  assert(fileOps.read.has('near.ts') && fileOps.edited.has('far.ts'), 'extractFileOpsFromMessage finds both calls')
  // A system message's tool lists, where a line reads them: `tool.name` of the first (a hole) throws. (1.6's
  // estimateTokens of such a toolsAdded is its JSON.stringify's, as in the reference: an engine's error, after
  // 16 s on JavaScriptCore.)
  for (const key of ['toolsAdded', 'toolsRemoved']) {
    const system = { role: 'system', content: 'You are pi.', [key]: sparse({}), timestamp: 1 }
    if (key === 'toolsRemoved') errorOr(`estimateTokens, ${key} 2^32-1 long`, () => m.estimateTokens(system), /toolsRemoved\[0\]/, isCount)
    const withSystem = session(9)
    withSystem[0] = { ...withSystem[0], message: system }
    errorOr(`prepareCompaction, ${key} 2^32-1 long`, () => m.prepareCompaction(withSystem, SETTINGS), new RegExp(`${key}\\[0\\]`), wellFormedPlan(withSystem))
  }
  // A summary answer's content with its text far along: the text, past the holes.
  const prep = m.prepareCompaction(session(30), { ...SETTINGS, keepRecentTokens: 200 })
  const answer = { ...OK, content: sparse({ [2 ** 32 - 2]: { type: 'text', text: 'FAR' } }) }
  const r = await m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(answer))
  assert(r.summary.includes('FAR'), `the summary: ${describe(r.summary)}`)
  assert(Date.now() - started < 10_000, `holes passed over, not walked: ${Date.now() - started} ms`)
}
add('2^32-1-long lists inside messages', longListsInMessages)
add('1.6: 2^32-1-long lists inside messages', longListsInMessages, { line: '1.6' })

// Getters, Proxies, frozen objects -------------------------------------------------

add('getters that throw', (m) => {
  const boom = new Error('getter boom')
  const throwing = (o, key) => Object.defineProperty({ ...o }, key, { get() { throw boom }, enumerable: true })
  for (const key of ['type', 'id', 'parentId', 'message']) {
    const entries = session(9)
    entries[4] = throwing(entries[4], key)
    errorOr(`prepareCompaction, entry getter ${key}`, () => m.prepareCompaction(entries, SETTINGS), null, wellFormedPlan(entries), boom)
    errorOr(`prepareBranchEntries, entry getter ${key}`, () => m.prepareBranchEntries(entries), null, null, boom)
  }
  for (const key of ['role', 'content', 'usage', 'timestamp']) {
    const message = throwing(assistantMsg('x', 1), key)
    errorOr(`estimateTokens, message getter ${key}`, () => m.estimateTokens(message), null, isCount, boom)
    errorOr(`serializeConversation, message getter ${key}`, () => m.serializeConversation([message]), null, isString, boom)
    errorOr(`convertToLlm, message getter ${key}`, () => m.convertToLlm([message]), null, isArray, boom)
  }
  const arr = session(9)
  Object.defineProperty(arr, 3, { get() { throw boom } })
  mustThrow('prepareCompaction, array index getter', () => m.prepareCompaction(arr, SETTINGS), null, boom)
  const settings = Object.defineProperty({ ...SETTINGS }, 'keepRecentTokens', { get() { throw boom } })
  mustThrow('prepareCompaction, settings getter', () => m.prepareCompaction(session(9), settings), null, boom)
  const args = Object.defineProperty({}, 'path', { get() { throw boom }, enumerable: true })
  const msg = { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'read', arguments: args }], stopReason: 'stop', timestamp: 1 }
  errorOr('estimateTokens, argument getter', () => m.estimateTokens(msg), null, isCount, boom)
  errorOr('extractFileOpsFromMessage, argument getter', () => m.extractFileOpsFromMessage(msg, m.createFileOps()), null, null, boom)
  const session2 = { getEntry() { throw boom }, getLeafId: () => 'e1' }
  mustThrow('collectEntriesForBranchSummary, getEntry throws', () => m.collectEntriesForBranchSummary(session2, 'e1', 'e2'), null, boom)
})

add('Proxies', (m) => {
  const entries = session(12)
  const plain = m.prepareCompaction(entries, SETTINGS)
  const proxied = entries.map((e) => new Proxy({ ...e, message: new Proxy(e.message, {}) }, {}))
  const viaProxy = mustReturn('prepareCompaction over proxied entries', () => m.prepareCompaction(proxied, SETTINGS))
  assert(normal(viaProxy) === normal(plain), 'proxied entries plan like plain ones')
  // A Proxy around the array itself is not an array to N-API: a clear TypeError, or the same plan.
  errorOr('prepareCompaction over a proxied array', () => m.prepareCompaction(new Proxy(entries, {}), SETTINGS), /pathEntries/, (r) => assert(normal(r) === normal(plain), 'same plan'))
  const boom = new Error('trap boom')
  const trap = new Proxy(entries[4], { get() { throw boom }, has() { throw boom }, ownKeys() { throw boom } })
  const withTrap = entries.slice()
  withTrap[4] = trap
  mustThrow('prepareCompaction, throwing get trap', () => m.prepareCompaction(withTrap, SETTINGS), null, boom)
  const argTrap = new Proxy({ path: 'a' }, { ownKeys() { throw boom } })
  const msg = { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'read', arguments: argTrap }], stopReason: 'stop', timestamp: 1 }
  errorOr('serializeConversation, ownKeys trap', () => m.serializeConversation([msg]), null, isString, boom)
  errorOr('estimateTokens, ownKeys trap', () => m.estimateTokens(msg), null, isCount, boom)
  const revocable = Proxy.revocable({ ...entries[4] }, {})
  revocable.revoke()
  const revoked = entries.slice()
  revoked[4] = revocable.proxy
  errorOr('prepareCompaction, revoked proxy', () => m.prepareCompaction(revoked, SETTINGS), /revoked|pathEntries\[4\]/)
})

add('frozen, sealed and null-prototype objects', (m) => {
  const entries = session(12)
  const plain = normal(m.prepareCompaction(entries, SETTINGS))
  const frozen = deepFreeze(session(12))
  assert(normal(m.prepareCompaction(frozen, Object.freeze({ ...SETTINGS }))) === plain, 'frozen plans like plain')
  const sealed = session(12).map((e) => Object.seal(e))
  assert(normal(m.prepareCompaction(sealed, SETTINGS)) === plain, 'sealed plans like plain')
  const nullProto = session(12).map((e) => Object.assign(Object.create(null), e, { message: Object.assign(Object.create(null), e.message) }))
  assert(normal(m.prepareCompaction(nullProto, SETTINGS)) === plain, 'null-prototype objects plan like plain')
  const msgs = deepFreeze(messages(9))
  isString(m.serializeConversation(msgs), 'serializeConversation frozen')
  isArray(m.projectForSummary(msgs), 'projectForSummary frozen')
  // Inherited fields count, as property reads do in JS.
  const inherited = session(12).map((e) => Object.create(e))
  assert(normal(m.prepareCompaction(inherited, SETTINGS)) === plain, 'inherited fields plan like own ones')
})

add('NaN and Infinity', (m) => {
  for (const x of [NaN, Infinity, -Infinity, -0, 1e308, Number.MAX_SAFE_INTEGER + 2]) {
    const entries = session(12)
    entries[4] = { ...entries[4], message: { ...entries[4].message, usage: usage(x), timestamp: x } }
    mustReturn(`prepareCompaction with usage ${x}`, () => m.prepareCompaction(entries, SETTINGS), wellFormedPlan(entries))
    mustReturn(`prepareCompaction keepRecentTokens ${x}`, () => m.prepareCompaction(session(12), { ...SETTINGS, keepRecentTokens: x }), wellFormedPlan(session(12)))
    errorOr(`prepareBranchEntries budget ${x}`, () => m.prepareBranchEntries(session(12), x), /tokenBudget/, (r) => isCount(r.totalTokens, 'totalTokens'))
    errorOr(`findCutPoint keep ${x}`, () => m.findCutPoint(session(12), 0, 12, x), /keepRecentTokens/, (r) => isCount(r.firstKeptEntryIndex, 'index'))
    // A startIndex the reference never reads with (NaN, or not below endIndex) comes back as given, as there.
    errorOr(`findCutPoint startIndex ${x}`, () => m.findCutPoint(session(12), x, 12, 10), /startIndex/, (r) => (x < 12 ? isCount(r.firstKeptEntryIndex, 'index') : assert(Object.is(r.firstKeptEntryIndex, x), 'startIndex echoed')))
    const c = m.calculateContextTokens(usage(x))
    assert(typeof c === 'number', 'calculateContextTokens')
    assert(typeof m.shouldCompact(x, x, SETTINGS) === 'boolean', 'shouldCompact')
    const est = m.estimateContextTokens(entries.map((e) => e.message))
    assert(typeof est.tokens === 'number', 'estimateContextTokens')
    isString(m.serializeConversation([{ ...userMsg('x'), timestamp: x }]), 'serialize')
    errorOr(`projectForSummary roundBound ${x}`, () => m.projectForSummary(messages(9), { roundBound: x }), /roundBound/, isArray)
    errorOr(`toolCall arguments ${x}`, () => m.serializeConversation([{ role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'n', arguments: { x } }], timestamp: 1 }]), null, (t) => assert(t === `[Assistant tool calls]: n#c(x=${JSON.stringify(x)})`, 'serialized as JSON.stringify writes the number'))
  }
})

add('toJSON that throws, BigInt, symbols', (m) => {
  const boom = new Error('toJSON boom')
  const variants = {
    'toJSON throws': { toJSON() { throw boom } },
    'nested toJSON throws': { a: [1, { toJSON() { throw boom } }] },
    'toJSON returns undefined': { toJSON() { return undefined } },
    'BigInt value': { n: 10n },
    'symbol value': { s: Symbol('x') },
    'function value': { f() {} },
    'cyclic object': (() => { const o = { a: 1 }; o.self = o; return o })(),
  }
  for (const [label, args] of Object.entries(variants)) {
    const msg = { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'bash', arguments: args }], usage: usage(10), stopReason: 'stop', timestamp: 1 }
    const mentions = /toJSON|BigInt|circular|cyclic|arguments/i
    errorOr(`estimateTokens: ${label}`, () => m.estimateTokens(msg), mentions, isCount, boom)
    errorOr(`serializeConversation: ${label}`, () => m.serializeConversation([msg]), mentions, isString, boom)
    errorOr(`projectForSummary: ${label}`, () => m.projectForSummary([msg]), mentions, isArray, boom)
    const entries = session(9)
    entries[4] = { ...entries[4], message: msg }
    errorOr(`prepareCompaction: ${label}`, () => m.prepareCompaction(entries, SETTINGS), mentions, wellFormedPlan(entries), boom)
    const custom = { role: 'custom', customType: 'x', content: 'c', display: true, details: args, timestamp: 1 }
    errorOr(`estimateTokens custom details: ${label}`, () => m.estimateTokens(custom), mentions, isCount, boom)
  }
})

// compact() with a fake streamFn ------------------------------------------------

function fakeStream(answer) {
  return async () => ({ result: async () => (typeof answer === 'function' ? answer() : answer) })
}
const OK = { role: 'assistant', content: [{ type: 'text', text: 'SUMMARY' }], stopReason: 'stop' }

add('prepareCompactionAsync with hostile entries', async (m) => {
  const huge = []
  huge.length = 2 ** 32 - 1
  await rejectsOr('prepareCompactionAsync, length 2^32-1', () => m.prepareCompactionAsync(huge, SETTINGS), /\[4294967294\]/)
  const holey = session(9)
  delete holey[4]
  await rejectsOr('prepareCompactionAsync with a hole', () => m.prepareCompactionAsync(holey, SETTINGS), /pathEntries\[4\]/)
  const boom = new Error('getter boom')
  const getter = session(9)
  getter[4] = Object.defineProperty({ ...getter[4] }, 'message', { get() { throw boom }, enumerable: true })
  // The getter's own error, as the synchronous call throws it.
  mustThrow('prepareCompaction, throwing getter', () => m.prepareCompaction(getter, SETTINGS), /getter boom/, boom)
  const thrown = await rejectsOr('prepareCompactionAsync, throwing getter', () => m.prepareCompactionAsync(getter, SETTINGS), /getter boom/, null, boom)
  assert(thrown.threw === boom, 'prepareCompactionAsync, throwing getter: rejects with the getter\'s error')
  // Entries are read as the synchronous call reads them, not as JSON: a cycle where no field is read is no error.
  const cyclic = session(9)
  cyclic[3] = { ...cyclic[3] }
  cyclic[3].self = cyclic[3]
  await rejectsOr('prepareCompactionAsync, a cycle', () => m.prepareCompactionAsync(cyclic, SETTINGS), null, wellFormedPlan(cyclic))
  const revocable = Proxy.revocable({}, {})
  revocable.revoke()
  const revoked = session(9)
  revoked[4] = revocable.proxy
  // JS's own TypeError, as the synchronous call throws it.
  const syncRevoked = mustThrow('prepareCompaction, revoked proxy', () => m.prepareCompaction(revoked, SETTINGS), /revoked/)
  const asyncRevoked = await rejectsOr('prepareCompactionAsync, revoked proxy', () => m.prepareCompactionAsync(revoked, SETTINGS), /revoked/)
  assert(asyncRevoked.threw && asyncRevoked.threw.message === syncRevoked.message, 'prepareCompactionAsync, revoked proxy: the synchronous error')
  const proxied = new Proxy(session(9), {})
  await rejectsOr('prepareCompactionAsync, a Proxy around the entries', () => m.prepareCompactionAsync(proxied, SETTINGS), null, wellFormedPlan(session(9)))
  for (const bad of [null, 5, 'x', { length: 3 }]) {
    await rejectsOr(`prepareCompactionAsync(${describe(bad)})`, () => m.prepareCompactionAsync(bad, SETTINGS), /pathEntries/)
  }
  await rejectsOr('prepareCompactionAsync, bad settings', () => m.prepareCompactionAsync(session(9), { enabled: 1 }), /settings/)
})

add('compact with hostile inputs and streams', async (m) => {
  const prep = m.prepareCompaction(session(30), { ...SETTINGS, keepRecentTokens: 200 })
  const r = await m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(OK))
  assert(typeof r.summary === 'string' && r.summary.includes('SUMMARY'), 'baseline compact')
  for (const [kind, bad] of Object.entries(BAD)) {
    await rejectsOr(`compact(preparation = ${kind})`, () => m.compact(bad, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(OK)), /preparation|UUID|migration/)
    await rejectsOr(`compact(model = ${kind})`, () => m.compact(prep, bad, 'k', undefined, undefined, undefined, undefined, fakeStream(OK)), /model/, (v) => isString(v.summary, 'summary'))
    for (const field of ['messagesToSummarize', 'turnPrefixMessages', 'firstKeptEntryId', 'tokensBefore', 'previousSummary', 'fileOps', 'isSplitTurn']) {
      await rejectsOr(`compact(preparation.${field} = ${kind})`, () => m.compact({ ...prep, [field]: bad }, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(OK)), new RegExp(`preparation|${field}|fileOps|UUID|migration`), (v) => isString(v.summary, 'summary'))
    }
    await rejectsOr(`compact(customInstructions = ${kind})`, () => m.compact(prep, MODEL, 'k', undefined, bad, undefined, undefined, fakeStream(OK)), /customInstructions/, (v) => isString(v.summary, 'summary'))
    await rejectsOr(`compact, streamFn answers ${kind}`, () => m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(bad)), /response|content|stopReason|summar/i, (v) => isString(v.summary, 'summary'))
    await rejectsOr(`compact, answer content = ${kind}`, () => m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream({ ...OK, content: bad })), /content|summar/i, (v) => isString(v.summary, 'summary'))
    await rejectsOr(`compact, answer stopReason = ${kind}`, () => m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream({ ...OK, stopReason: bad })), /stopReason|summar/i, (v) => isString(v.summary, 'summary'))
  }
  const boom = new Error('stream boom')
  await rejectsOr('compact, streamFn throws', () => m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, () => { throw boom }), null, null, boom)
  await rejectsOr('compact, result() rejects', () => m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(() => { throw boom })), null, null, boom)
  const getterAnswer = Object.defineProperty({ ...OK }, 'content', { get() { throw boom } })
  await rejectsOr('compact, answer getter throws', () => m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(getterAnswer)), null, null, boom)
  await rejectsOr('compact, answer is a Proxy', () => m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(new Proxy(OK, {}))), null, (v) => isString(v.summary, 'summary'))
  const huge = { ...OK, content: [{ type: 'text', text: 'S'.repeat(20 * 1024 * 1024) }] }
  const big = await m.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(huge))
  assert(big.summary.length >= 20 * 1024 * 1024, 'a 20 MB summary comes back whole')
  const frozenPrep = deepFreeze(m.prepareCompaction(session(30), { ...SETTINGS, keepRecentTokens: 200 }))
  isString((await m.compact(frozenPrep, MODEL, 'k', undefined, undefined, undefined, undefined, fakeStream(OK))).summary, 'frozen preparation')
})

// Files ------------------------------------------------------------------------

add('malformed session files', async (m) => {
  const files = {
    empty: '',
    'only blank lines': '\n \n\t\n',
    'binary garbage': Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)),
    'no header': session(3).map((e) => JSON.stringify(e)).join('\n'),
    'version 1': JSON.stringify({ type: 'session', id: 's' }) + '\n' + JSON.stringify(session(1)[0]),
    'version is a string': JSON.stringify({ type: 'session', id: 's', version: '3' }),
    'entry is an array': HEADER + '\n[1,2,3]\n',
    'truncated line': sessionFileText(6).slice(0, -40),
    'NUL bytes': HEADER + '\n\0\0\0\n',
    'invalid UTF-8 in a string': Buffer.concat([Buffer.from(HEADER + '\n{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}\n')]),
    '100k-deep nesting': HEADER + '\n' + '['.repeat(100_000) + ']'.repeat(100_000) + '\n',
    '100k-deep object': HEADER + '\n' + '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) + '\n',
    'duplicate ids': HEADER + '\n' + session(4).map((e) => JSON.stringify({ ...e, id: 'same' })).join('\n'),
    'parent cycle': HEADER + '\n' + session(6).map((e, i) => JSON.stringify(i === 0 ? { ...e, parentId: 'e5' } : e)).join('\n'),
    'wrong types': HEADER + '\n' + session(6).map((e, i) => JSON.stringify(i === 3 ? { ...e, message: { ...e.message, content: 5, role: [] } } : e)).join('\n'),
    'valid, CRLF': sessionFileText(30).replace(/\n/g, '\r\n'),
    'lone surrogate escape': HEADER + '\n' + JSON.stringify({ ...session(1)[0], message: userMsg('x') }).replace('"x"', '"\\ud800"') + '\n',
  }
  const mentions = /line \d+|session|header|version|entry|cycle|UTF|parse|expected|nest|deep|leaf|no entries|e\d|same/i
  for (const [label, contents] of Object.entries(files)) {
    const file = tmpFile('s.jsonl', contents)
    errorOr(`prepareCompactionFromFileSync: ${label}`, () => m.prepareCompactionFromFileSync(file), mentions)
    errorOr(`serializeForSummaryFromFileSync: ${label}`, () => m.serializeForSummaryFromFileSync(file), mentions)
    await rejectsOr(`prepareCompactionFromFile: ${label}`, () => m.prepareCompactionFromFile(file), mentions)
    await rejectsOr(`serializeForSummaryFromFile: ${label}`, () => m.serializeForSummaryFromFile(file), mentions)
    errorOr(`prepareCompactionFromFileSync with an unknown leaf: ${label}`, () => m.prepareCompactionFromFileSync(file, { leafId: 'nope' }), /nope|leaf|line|session|header|version|entry|parse|expected/i)
  }
  const dir = tempDir('pc-hostile-dir-')
  mustThrow('a directory', () => m.prepareCompactionFromFileSync(dir), new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
  await rejectsOr('a missing file (async)', () => m.prepareCompactionFromFile(path.join(dir, 'missing.jsonl')), /missing\.jsonl/)
  const plan = m.prepareCompactionFromFileSync(tmpFile('ok.jsonl', sessionFileText(30)), { keepRecentTokens: 100 })
  assert(plan && typeof plan.firstKeptEntryId === 'string', 'a valid file still plans')
})

add(
  'a 100 MB session line',
  async (m) => {
    // Twelve entries (lines 2 to 13), then the 100 MB one (line 14).
    const before = sessionFileText(12)
    const big = { ...session(13)[12], message: userMsg('y'.repeat(100 * 1024 * 1024)) }
    const file = tmpFile('big.jsonl', before + JSON.stringify(big) + '\n')
    const plan = await m.prepareCompactionFromFile(file, { keepRecentTokens: 10 })
    assert(plan === undefined || typeof plan.tokensBefore === 'number', 'plan')
    // Cut short, as a kill inside its append leaves it: left out, as the agent leaves it.
    const bytes = fs.readFileSync(file)
    const cut = file + '.cut'
    fs.writeFileSync(cut, bytes.subarray(0, 60 * 1024 * 1024))
    const expected = JSON.stringify(m.prepareCompactionFromFileSync(tmpFile('big-without.jsonl', before), { keepRecentTokens: 10 }))
    assert(expected !== undefined, 'the entries before it plan')
    const left = await rejectsOr('a 100 MB line cut short', () => m.prepareCompactionFromFile(cut, { keepRecentTokens: 10 }))
    assert(!left.threw && JSON.stringify(left.value) === expected, 'a line cut short is left out')
    // Malformed before its end (a control character inside the string): an error naming the line.
    const broken = file + '.broken'
    bytes[bytes.length - 50 * 1024 * 1024] = 0x01
    fs.writeFileSync(broken, bytes)
    const r = await rejectsOr('a 100 MB line with a control character', () => m.prepareCompactionFromFile(broken, { keepRecentTokens: 10 }), /line 14: malformed JSON/)
    assert(r.threw, 'a malformed 100 MB line is an error')
  },
  { heavy: true },
)

// The 1.6 line: what its sessions hold besides ----------------------------------

const line16 = { line: '1.6' }

/** session(9) with a 1.6 entry or message put in at index 4 (chained like the rest). */
function with16(entry) {
  const entries = session(9)
  entries[4] = { ...entry, id: 'e4', parentId: 'e3', timestamp: '2026-01-01T00:00:00.000Z' }
  return entries
}

/** The entry-taking calls of the 1.6 line, each a clear error naming the place or a well-formed result. */
function entryCalls16(m, label, entries, mentions) {
  errorOr(`prepareCompaction ${label}`, () => m.prepareCompaction(entries, SETTINGS), mentions, wellFormedPlan(entries))
  errorOr(`prepareBranchEntries ${label}`, () => m.prepareBranchEntries(entries, 1000), mentions, (r) => isCount(r.totalTokens, label))
  errorOr(`findCutPoint ${label}`, () => m.findCutPoint(entries, 0, entries.length, 50), mentions, (r) => isCount(r.firstKeptEntryIndex, label))
  errorOr(`findTurnStartIndex ${label}`, () => m.findTurnStartIndex(entries, entries.length - 1, 0), mentions, (r) => assert(Number.isInteger(r), label))
  errorOr(`getLastAssistantUsage ${label}`, () => m.getLastAssistantUsage(entries), mentions)
}

for (const field of ['targetId', 'replacement', 'replacement.content']) {
  add(`1.6: wrong type: context_edit.${field}`, (m) => {
    for (const [kind, bad] of Object.entries(BAD)) {
      for (const target of ['e1', 'e2', 'e3']) {
        const edit = { type: 'context_edit', targetId: target, replacement: { content: 'new' } }
        if (field === 'replacement.content') edit.replacement = { content: bad }
        else edit[field] = bad
        // The edit last, and inside the path before later entries.
        const last = session(9).concat([{ ...edit, id: 'e9', parentId: 'e8', timestamp: '2026-01-01T00:00:00.000Z' }])
        entryCalls16(m, `edit of ${target} ${field} = ${kind} (last)`, last, /pathEntries\[\d+\]|entries\[\d+\]/)
        entryCalls16(m, `edit of ${target} ${field} = ${kind} (inside)`, with16(edit), /pathEntries\[\d+\]|entries\[\d+\]/)
      }
    }
  }, line16)
}

for (const field of ['content', 'sections', 'toolsAdded', 'toolsRemoved', 'timestamp']) {
  add(`1.6: wrong type: system message.${field}`, (m) => {
    for (const [kind, bad] of Object.entries(BAD)) {
      const system = { role: 'system', content: 'You are pi.', sections: { a: 'x', b: null }, toolsAdded: [{ name: 'read' }], toolsRemoved: [{ name: 'bash' }], timestamp: 1, [field]: bad }
      const label = `system.${field} = ${kind}`
      const named = new RegExp(`\\b${field}\\b|\\[\\d+\\]|message`)
      errorOr(`estimateTokens ${label}`, () => m.estimateTokens(system), named, isCount)
      errorOr(`estimateContextTokens ${label}`, () => m.estimateContextTokens([system, userMsg('u')]), /messages\[0\]/, (r) => assert(typeof r.tokens === 'number', label))
      errorOr(`convertToLlm ${label}`, () => m.convertToLlm([system]), /messages\[0\]/, isArray)
      entryCalls16(m, `message ${label}`, with16({ type: 'message', message: system }), /pathEntries\[4\]|entries\[4\]/)
      const compaction = { type: 'compaction', summary: 's', firstKeptEntryId: 'e2', tokensBefore: 1, systemMessage: system }
      entryCalls16(m, `compaction systemMessage ${label}`, with16(compaction), /pathEntries\[4\]|entries\[4\]/)
      const projection = { entries: [{ sourceEntry: { type: 'message', id: 'a' }, messages: [system] }], messages: [system, userMsg('u')] }
      errorOr(`estimateProjectedContextTokens ${label}`, () => m.estimateProjectedContextTokens(projection, [{ type: 'context_edit', id: 'x' }]), /projection\.messages\[0\]/, (r) => isCount(r.tokens, label))
    }
  }, line16)
}

for (const field of ['nestedCalls', 'nestedCalls.calls', 'nestedCalls.calls[0]', 'nestedCalls.calls[0].name', 'nestedCalls.calls[0].arguments']) {
  add(`1.6: wrong type: toolResult.${field}`, (m) => {
    for (const [kind, bad] of Object.entries(BAD)) {
      const call = { id: 'n', name: 'read', arguments: { path: 'a.ts' }, status: 'ok' }
      const nested = { calls: [call], complete: true }
      if (field === 'nestedCalls.calls') nested.calls = bad
      else if (field === 'nestedCalls.calls[0]') nested.calls = [bad]
      else if (field !== 'nestedCalls') call[field.split('.').pop()] = bad
      const message = { ...toolResultMsg(3), nestedCalls: field === 'nestedCalls' ? bad : nested }
      const label = `${field} = ${kind}`
      errorOr(`extractFileOpsFromMessage ${label}`, () => m.extractFileOpsFromMessage(message, m.createFileOps()), /nestedCalls|message/)
      // Summarized: the tool result falls before the cut.
      const entries = session(30)
      entries[5] = { ...entries[5], message }
      errorOr(`prepareCompaction ${label}`, () => m.prepareCompaction(entries, SETTINGS), /pathEntries\[5\]\.message\.nestedCalls/, wellFormedPlan(entries))
    }
  }, line16)
}

add('1.6: wrong type: estimateProjectedContextTokens arguments', (m) => {
  const projection = () => ({ entries: [{ sourceEntry: { type: 'message', id: 'e1' }, messages: [assistantMsg('a', 1)] }], messages: [assistantMsg('a', 1)] })
  const branch = session(3)
  for (const [kind, bad] of Object.entries(BAD)) {
    const check = (r, label) => isCount(r.tokens, label)
    errorOr(`projection = ${kind}`, () => m.estimateProjectedContextTokens(bad, branch), /projection/, check)
    errorOr(`branchEntries = ${kind}`, () => m.estimateProjectedContextTokens(projection(), bad), /branchEntries/, check)
    for (const [field, set] of [
      ['projection.messages', (p) => (p.messages = bad)],
      ['projection.entries', (p) => (p.entries = bad)],
      ['projection.entries[0]', (p) => (p.entries[0] = bad)],
      ['projection.entries[0].messages', (p) => (p.entries[0].messages = bad)],
      ['projection.entries[0].sourceEntry', (p) => (p.entries[0].sourceEntry = bad)],
      ['projection.entries[0].sourceEntry.id', (p) => (p.entries[0].sourceEntry.id = bad)],
    ]) {
      const p = projection()
      set(p)
      errorOr(`${field} = ${kind}`, () => m.estimateProjectedContextTokens(p, branch), /projection/, check)
    }
    const odd = session(3)
    odd[1] = bad
    errorOr(`branchEntries[1] = ${kind}`, () => m.estimateProjectedContextTokens(projection(), odd), /branchEntries\[\d\]/, check)
  }
}, line16)

add('1.6: parent cycles and null content', (m) => {
  const entries = session(9)
  entries[0] = { ...entries[0], parentId: 'e8' }
  mustThrow('prepareCompaction, cycle through the root', () => m.prepareCompaction(entries, SETTINGS), /cycle/)
  const self = session(9)
  self[8] = { ...self[8], parentId: 'e8' }
  mustThrow('prepareCompaction, self-parent leaf', () => m.prepareCompaction(self, SETTINGS), /cycle/)
  for (const content of [null, undefined]) {
    for (const i of [0, 1, 2, 3]) {
      const nulls = session(9)
      nulls[i] = { ...nulls[i], message: { ...nulls[i].message, content } }
      mustReturn(`prepareCompaction with a ${String(content)} content at ${i}`, () => m.prepareCompaction(nulls, SETTINGS), wellFormedPlan(nulls))
    }
  }
}, line16)

add('a tool call whose arguments are a 300k-character string is projected in linear time', (m) => {
  // A string's arguments are its characters, key by key, each key a new short text.
  const text = 'x'.repeat(300_000)
  const messages = [userMsg('q'), { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'bash', arguments: text }], stopReason: 'toolUse', timestamp: 2 }]
  const started = Date.now()
  const projected = mustReturn('projectForSummary', () => m.projectForSummary(messages, {}))
  assert(Object.keys(projected[1].content[0].arguments).length === text.length, 'every character a key')
  mustReturn('serializeForSummary', () => m.serializeForSummary(messages, {}), (t) => assert(t.includes('299999="x"'), 'the last key'))
  assert(Date.now() - started < 10_000, `linear, not quadratic: ${Date.now() - started} ms`)
})

add('four million null or missing blocks are skipped in linear time', (m) => {
  // Each read of a property of null or undefined costs V8 a TypeError with its stack.
  const started = Date.now()
  for (const content of [new Array(4_000_000).fill(null), new Array(4_000_000)]) {
    const fileOps = m.createFileOps()
    mustReturn('extractFileOpsFromMessage', () => m.extractFileOpsFromMessage({ role: 'assistant', content, timestamp: 1 }, fileOps))
    assert(fileOps.read.size === 0, 'no file')
    const entries = session(9)
    entries[4] = { ...entries[4], message: { ...entries[4].message, content } }
    mustReturn('prepareCompaction', () => m.prepareCompaction(entries, SETTINGS), wellFormedPlan(entries))
  }
  assert(Date.now() - started < 10_000, `linear in the blocks: ${Date.now() - started} ms`)
})

add('1.6: 100k entries with edits, system messages and nested calls', (m) => {
  const entries = session(100_000)
  // Every 99th entry from 2 is a tool result (user, assistant, tool result repeat).
  for (let i = 2; i < entries.length; i += 99) {
    entries[i] = { ...entries[i], message: { ...entries[i].message, nestedCalls: { calls: [{ id: 'n', name: 'edit', arguments: { path: `n${i}.ts` }, status: 'ok' }], complete: true } } }
  }
  entries[0] = { ...entries[0], message: { role: 'system', content: 'You are pi. '.repeat(100), toolsAdded: [{ name: 'read' }], timestamp: 0 } }
  const edits = []
  for (let i = 1; i < entries.length; i += 1000) edits.push({ type: 'context_edit', targetId: `e${i}`, replacement: i % 2000 === 1 ? null : { content: 'short' } })
  let parent = entries[entries.length - 1].id
  edits.forEach((e, k) => {
    entries.push({ ...e, id: `x${k}`, parentId: parent, timestamp: '2026-01-01T00:00:00.000Z' })
    parent = `x${k}`
  })
  const started = Date.now()
  const plan = mustReturn('prepareCompaction', () => m.prepareCompaction(entries, SETTINGS), wellFormedPlan(entries))
  assert(plan.messagesToSummarize.length > 99_000, `summarized ${plan.messagesToSummarize.length}`)
  assert(plan.fileOps.edited.size > 900, `edited ${plan.fileOps.edited.size}`)
  assert(Date.now() - started < 30_000, 'linear, not quadratic')
  mustReturn('prepareBranchEntries', () => m.prepareBranchEntries(entries, 0), (r) => isCount(r.totalTokens, 'totalTokens'))
}, line16)

module.exports = { cases, stats, removeTemp }
