'use strict'
// What prepareCompaction's planner needs of the entries, read ahead in JS
// (JS property reads are far cheaper than N-API's, one call each): first
// every entry's kind (`type`, and a message's `role`), `id` and
// `parentId` (as a code when it is the id of the entry before); then the
// sizes of the kept messages the cut's estimates ask for (planCut's
// `{ measure, units }`); then, for the messages the cut names, whether a
// message's `content` is nullish and the `name` and `arguments.path` of
// each tool call in it. Chunks of these facts go to the binding's
// EntryFacts (crates/core/src/session/facts.rs and measures.rs read them;
// the codes are crates/core/src/boundary_codes.rs's). Nothing is decided here: a value
// of a type the planner must judge (an id that is not a string, a null
// content block, a message that is not an object), or a read that throws,
// leaves the fact unread, and the native side reads and judges that entry
// itself, as without facts.

const native = require('../binding.js')
const { checkCodes } = require('./codes.js')
const { isProxy } = require('./plain-array.js')
const { grown, FRESH, SpareArray } = require('./typed-array.js')

// An entry's kind, by its type or its message's role: a switch over the
// names (typeKind, roleKind) is a few compares, where a lookup in a table
// keyed by the name was a dictionary probe for every entry.
const { NOT_READ, OTHER_TYPE, OTHER_ROLE, MESSAGE_TYPE, types: TYPES, roles: ROLES } = checkCodes('entryKinds', {
  NOT_READ: 0,
  OTHER_TYPE: 6,
  OTHER_ROLE: 24,
  MESSAGE_TYPE: 'message',
  types: { compaction: 2, branch_summary: 3, custom_message: 4, context_edit: 5 },
  roles: { user: 16, assistant: 17, toolResult: 18, bashExecution: 19, custom: 20, branchSummary: 21, compactionSummary: 22, system: 23 },
})

function typeKind(type) {
  switch (type) {
    // (first: a branch's entries are mostly messages, whose kind here is
    // another type's; callers that tell roles apart ask for those first)
    case MESSAGE_TYPE:
      return OTHER_TYPE
    case 'compaction':
      return TYPES.compaction
    case 'branch_summary':
      return TYPES.branch_summary
    case 'custom_message':
      return TYPES.custom_message
    case 'context_edit':
      return TYPES.context_edit
    default:
      return OTHER_TYPE
  }
}

function roleKind(role) {
  switch (role) {
    case 'user':
      return ROLES.user
    case 'assistant':
      return ROLES.assistant
    case 'toolResult':
      return ROLES.toolResult
    case 'bashExecution':
      return ROLES.bashExecution
    case 'custom':
      return ROLES.custom
    case 'branchSummary':
      return ROLES.branchSummary
    case 'compactionSummary':
      return ROLES.compactionSummary
    case 'system':
      return ROLES.system
    default:
      return OTHER_ROLE
  }
}

for (const [names, kindOf] of [
  [TYPES, typeKind],
  [ROLES, roleKind],
]) {
  for (const name of Object.keys(names)) {
    if (kindOf(name) !== names[name]) throw new Error(`prime-compaction internal error: ${kindOf.name} has no case for ${name}`)
  }
}

const { ID_ABSENT, ID_STRING, ID_PREVIOUS, PARENT_SHIFT, CONTENT_PRESENT, CONTENT_NULLISH, CALLS_READ, MEASURE_TEXT, MEASURE_BLOCKS, BLOCK_OTHER, BLOCK_TEXT, BLOCK_THINKING, BLOCK_TOOL_CALL, BLOCK_IMAGE } = checkCodes('entryFacts', {
  ID_NOT_READ: 0,
  ID_ABSENT: 1,
  ID_STRING: 2,
  ID_PREVIOUS: 3,
  ID_MASK: 3,
  PARENT_SHIFT: 2,
  CONTENT_NOT_READ: 0,
  CONTENT_PRESENT: 1,
  CONTENT_NULLISH: 2,
  CONTENT_MASK: 3,
  CALLS_READ: 4,
  MEASURE_NOT_READ: 0,
  MEASURE_TEXT: 1,
  MEASURE_BLOCKS: 2,
  BLOCK_OTHER: 0,
  BLOCK_TEXT: 1,
  BLOCK_THINKING: 2,
  BLOCK_TOOL_CALL: 3,
  BLOCK_IMAGE: 4,
})

// Longer arrays are read natively (no dense array is this long).
const MAX_ENTRIES = 2 ** 23

// A chunk's joined text ends once it reaches this many units (a quarter of
// V8's longest string, so one more entry's strings still fit unless one
// alone is longer than that); the next chunk goes on from there.
const MAX_TEXT_UNITS = 2 ** 27

/**
 * The tool calls in an assistant's `content` array (`blocks`: its
 * `toolCall` blocks) or in a tool result's `nestedCalls.calls` (every
 * record) whose `name` is a string: each call's name and `arguments`
 * object added to `calls.list`, two elements a call (see readMessageFacts;
 * their `path` is read later); how many, or -1 (none added) where a block
 * or record or its arguments are null or undefined.
 */
function gatherCalls(list, calls, blocks) {
  const mark = calls.count
  for (let i = 0; i < list.length; i++) {
    const block = list[i]
    if (block === null || block === undefined) {
      calls.count = mark
      return -1
    }
    if (blocks && block.type !== 'toolCall') continue
    const name = block.name
    if (typeof name !== 'string') continue
    const args = block.arguments
    if (args === null || args === undefined) {
      calls.count = mark
      return -1
    }
    // (a message that gives up leaves its calls past `count`, overwritten by the next)
    const at = 2 * calls.count
    calls.list[at] = name
    calls.list[at + 1] = args
    if (at + 2 > calls.high) calls.high = at + 2
    calls.count++
  }
  return calls.count - mark
}

/**
 * Each gathered call's `arguments.path`, in place of its `arguments`
 * (THREW where the read throws): a loop of nothing else, whose reads the
 * processor overlaps.
 */
function readPaths(calls) {
  const list = calls.list
  for (let at = 1; at < 2 * calls.count; at += 2) {
    try {
      list[at] = list[at].path
    } catch {
      list[at] = THREW
    }
  }
}

const THREW = {}

// The array of the calls gathered by readMessageFacts, kept between calls
// (growing a new one was a tenth of a call at 1k entries, and a few per
// cent at 100k): up to 2 ** 17 elements (1 MB), a session of about 250k
// real-shaped entries.
const spareCalls = new SpareArray(2 ** 17)

/**
 * The gathered calls `from..to` (one message's), with their paths read
 * (readPaths), whose path is a string, each as two references
 * into the chunk's strings (`into`, see readMessageFacts); how many, or -1
 * where a path's read threw (the caller takes back what was added).
 */
function refCalls(calls, from, to, into) {
  const mark = into.refCount
  for (let c = from; c < to; c++) {
    const path = calls.list[2 * c + 1]
    if (typeof path !== 'string') {
      if (path === THREW) return -1
      continue
    }
    const name = calls.list[2 * c]
    if (into.refCount + 2 > into.refs.length) into.refs = grown(into.refs, into.refCount + 2)
    // Calls in a row mostly name the same tool, or the same file: a compare
    // costs less than a lookup.
    if (name !== into.lastName) {
      into.lastNameIndex = stringIndex(into, name)
      into.lastName = name
    }
    if (path !== into.lastPath) {
      into.lastPathIndex = stringIndex(into, path)
      into.lastPath = path
    }
    into.refs[into.refCount] = into.lastNameIndex
    into.refs[into.refCount + 1] = into.lastPathIndex
    into.refCount += 2
  }
  return (into.refCount - mark) / 2
}

/**
 * Where the string `s` is in the chunk's strings, added to them if it is
 * not there yet: a session names the same few tools and files over and
 * over, so each goes over once.
 */
function stringIndex(into, s) {
  let i = into.index.get(s)
  if (i !== undefined) return i
  i = into.stringCount
  if (i >= into.lengths.length) into.lengths = grown(into.lengths, i + 1)
  // The one step that can throw (past V8's longest string): before it, nothing is added.
  into.text += s
  into.lengths[i] = s.length
  into.stringCount = i + 1
  into.index.set(s, i)
  return i
}

/** An entry object's kind code, by its `type` and its message's `role` (NOT_READ where either is not a string, or the message not an object). */
function kindOf(entry) {
  const type = entry.type
  if (typeof type !== 'string') return NOT_READ
  if (type !== MESSAGE_TYPE) return typeKind(type)
  const message = entry.message
  if (typeof message !== 'object' || message === null) return NOT_READ
  const role = message.role
  return typeof role === 'string' ? roleKind(role) : NOT_READ
}

/**
 * An entries chunk for all of `entries` (EntryFacts.pushEntries) with the
 * kinds of `entries[from..to)` only, and no ids: for the calls that read
 * nothing else ahead (findCutPoint, prepareBranchEntries), and read no
 * entry outside their range.
 */
function readEntryKinds(entries, from, to, scratch = FRESH) {
  const count = entries.length
  const kinds = scratch.zeroed('kinds', Uint8Array, count)
  for (let i = from; i < to; i++) {
    try {
      const entry = entries[i]
      if (typeof entry === 'object' && entry !== null) kinds[i] = kindOf(entry)
    } catch {
      // The native side reads this entry, and throws there.
      kinds[i] = NOT_READ
    }
  }
  return { first: 0, kinds: kinds.subarray(0, count), ids: scratch.zeroed('ids', Uint8Array, count).subarray(0, count), lengths: NO_LENGTHS, text: '' }
}

const NO_LENGTHS = new Uint32Array(0)

/**
 * The facts of `entries[first..end)`, or of the first of them while their
 * text stays under `maxUnits` (MAX_TEXT_UNITS but in tests): an entries
 * chunk for EntryFacts.pushEntries (see facts.rs), `kinds.length` entries long.
 */
function readEntryFacts(entries, first, end, maxUnits = MAX_TEXT_UNITS, scratch = FRESH) {
  let count = end - first
  const kinds = scratch.zeroed('kinds', Uint8Array, count)
  const ids = scratch.zeroed('ids', Uint8Array, count)
  const lengths = scratch.any('idLengths', Uint32Array, 2 * count)
  let text = ''
  let n = 0
  // The string id of the entry before, when this chunk holds it: a
  // parentId equal to it (in a linear session, most) is sent as a code.
  let previousId
  for (let k = 0; k < count; k++) {
    if (text.length >= maxUnits) {
      count = k
      break
    }
    const mark = n
    const textMark = text
    const previous = previousId
    previousId = undefined
    try {
      const entry = entries[first + k]
      if (typeof entry !== 'object' || entry === null) continue
      kinds[k] = kindOf(entry)
      const id = entry.id
      let idCodes = 0
      if (typeof id === 'string') {
        text += id
        lengths[n++] = id.length
        idCodes = ID_STRING
      } else if (id === undefined) idCodes = ID_ABSENT
      const parent = entry.parentId
      if (typeof parent === 'string') {
        if (parent === previous) idCodes |= ID_PREVIOUS << PARENT_SHIFT
        else {
          text += parent
          lengths[n++] = parent.length
          idCodes |= ID_STRING << PARENT_SHIFT
        }
      } else if (parent === undefined || parent === null) idCodes |= ID_ABSENT << PARENT_SHIFT
      ids[k] = idCodes
      if (typeof id === 'string') previousId = id
    } catch {
      // The native side reads this entry, and throws there.
      n = mark
      text = textMark
      kinds[k] = NOT_READ
      ids[k] = 0
    }
  }
  return { first, kinds: kinds.subarray(0, count), ids: ids.subarray(0, count), lengths: lengths.subarray(0, n), text }
}

/**
 * The message facts of the entries `at[from..to)` (the ones the cut names,
 * planCut), or of the first of them while their text stays under
 * `maxUnits`: a messages chunk for EntryFacts.pushMessages (see facts.rs),
 * `contents.length` messages long. Each call read is two elements of
 * `refs`, its name's and its path's index among the chunk's strings:
 * `lengths[i]` is string i's length, `text` all of them in order, and
 * `strings` (which the native side does not read) the strings themselves.
 *
 * Read in two passes: the messages, their blocks and each call's name and
 * `arguments` object first, then each call's `arguments.path`. The reads
 * are the same; the second pass's are independent of one another, so the
 * processor overlaps their cache misses (in real sessions an `arguments`
 * object lies past the file contents it holds), where one pass waited for
 * each in turn (docs/boundary.md).
 */
function readMessageFacts(entries, at, from, to, maxUnits = MAX_TEXT_UNITS, scratch = FRESH) {
  let count = to - from
  const contents = scratch.zeroed('contents', Uint8Array, count)
  // Until the second pass: how many calls each message gathered.
  const calls = scratch.zeroed('calls', Uint32Array, count)
  const gathered = { list: spareCalls.take(), count: 0, high: 0 }
  for (let k = 0; k < count; k++) {
    const mark = gathered.count
    try {
      const entry = entries[at[from + k]]
      if (typeof entry !== 'object' || entry === null) continue
      const message = entry.message
      if (typeof message !== 'object' || message === null) continue
      const role = message.role
      if (typeof role !== 'string') continue
      const content = message.content
      let code = content === undefined || content === null ? CONTENT_NULLISH : CONTENT_PRESENT
      if (role === 'assistant') {
        const n = Array.isArray(content) ? gatherCalls(content, gathered, true) : 0
        if (n >= 0) {
          code |= CALLS_READ
          calls[k] = n
        }
      } else if (role === 'toolResult') {
        const nested = message.nestedCalls
        // `nestedCalls?.calls`: no calls in a primitive, a string or none;
        // calls that are not an array are left to the native side's error.
        const list = (typeof nested !== 'object' && typeof nested !== 'function') || nested === null ? undefined : nested.calls
        const n = list === undefined || list === null || typeof list === 'string' ? 0 : Array.isArray(list) ? gatherCalls(list, gathered, false) : -1
        if (n >= 0) {
          code |= CALLS_READ
          calls[k] = n
        }
      } else code |= CALLS_READ
      contents[k] = code
    } catch {
      // The native side reads this message, and throws there.
      gathered.count = mark
      contents[k] = 0
      calls[k] = 0
    }
  }
  const into = { index: new Map(), lastName: null, lastNameIndex: 0, lastPath: null, lastPathIndex: 0, text: '', lengths: scratch.any('stringLengths', Uint32Array, 64), stringCount: 0, refs: scratch.any('refs', Uint32Array, 64), refCount: 0 }
  readPaths(gathered)
  let c = 0
  for (let k = 0; k < count; k++) {
    const n = calls[k]
    if (n === 0) continue
    // A message whose read threw, or whose strings would not fit in the
    // text (past V8's longest string), gives back its references and is
    // left to the native side; strings it added stay, named by none.
    const mark = into.refCount
    let refs
    try {
      refs = refCalls(gathered, c, c + n, into)
    } catch {
      refs = -1
    }
    if (refs < 0) {
      into.refCount = mark
      contents[k] = 0
      calls[k] = 0
    } else calls[k] = refs
    c += n
    if (into.text.length >= maxUnits) {
      count = k + 1
      break
    }
  }
  spareCalls.give(gathered.list, gathered.high)
  scratch.keep('stringLengths', into.lengths)
  scratch.keep('refs', into.refs)
  return {
    at: at.subarray(from, from + count),
    contents: contents.subarray(0, count),
    calls: calls.subarray(0, count),
    refs: into.refs.subarray(0, into.refCount),
    lengths: into.lengths.subarray(0, into.stringCount),
    text: into.text,
    // (the Map's keys, in the order of their indices)
    strings: Array.from(into.index.keys()),
  }
}

/**
 * Measures of the messages of the entries `at`, in order, until the
 * lengths measured come to `units` (at least one message): a measures
 * chunk for EntryFacts.pushMeasures (crates/core/src/session/measures.rs),
 * `at.length` messages long. The cut's estimates ask for them (planCut's
 * `{ measure, units }`). A message's `content` as a string's length, or
 * as its blocks' types, each with the lengths of its strings: a text's
 * `text`, a thinking's `thinking`, a tool call's `name` and
 * `JSON.stringify(arguments)`. Whatever is not such a string (or throws)
 * leaves the message not measured, and the native side reads it.
 */
function readMeasureFacts(entries, at, units = Infinity, scratch = FRESH) {
  let count = at.length
  const m = measuresChunk(count, scratch)
  let measured = 0
  for (let k = 0; k < count; k++) {
    if (measured >= units && k > 0) {
      count = k
      break
    }
    try {
      const entry = entries[at[k]]
      if (typeof entry !== 'object' || entry === null) continue
      const message = entry.message
      if (typeof message !== 'object' || message === null) continue
      measured += measureContent(m, k, message)
    } catch {
      // The native side reads this message, and throws there.
    }
  }
  scratch.keep('blocks', m.blocks)
  scratch.keep('measureLengths', m.lengths)
  return { at: at.subarray(0, count), ...measuresOf(m, count) }
}

/** A measures chunk for `count` messages, being written (measureContent). */
function measuresChunk(count, scratch = FRESH) {
  return {
    forms: scratch.zeroed('forms', Uint8Array, count),
    counts: scratch.zeroed('counts', Uint32Array, count),
    blocks: scratch.any('blocks', Uint8Array, 64),
    lengths: scratch.any('measureLengths', Uint32Array, 128),
    b: 0,
    n: 0,
    // Long strings of tool calls' arguments whose JSON lengths are still
    // to be added, each to the length at its place in `longAt`.
    long: [],
    longAt: [],
    longCount: 0,
  }
}

/**
 * The arrays of a measures chunk written for its first `count` messages,
 * with its long strings' JSON lengths added (jsonStringLengths).
 */
function measuresOf(m, count) {
  if (m.longCount > 0) {
    const quoted = native.jsonStringLengths(m.longCount === m.long.length ? m.long : m.long.slice(0, m.longCount))
    for (let i = 0; i < quoted.length; i++) m.lengths[m.longAt[i]] += quoted[i]
  }
  return { forms: m.forms.subarray(0, count), counts: m.counts.subarray(0, count), blocks: m.blocks.subarray(0, m.b), lengths: m.lengths.subarray(0, m.n) }
}

// An argument string this long is quoted natively when its chunk is done
// (shorter ones here).
const LONG_STRING = 512

// V8's longest string: JSON longer than this is not a string (the
// reference's JSON.stringify throws).
const MAX_STRING_LENGTH = 2 ** 29 - 24

// A string that JSON.stringify writes other than as it is, quoted.
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/

/** The length of `JSON.stringify(s)` for a short string `s`. */
function quotedLength(s) {
  return ESCAPED.test(s) ? JSON.stringify(s).length : s.length + 2
}

// The engine's own functions, whatever a caller puts in their place
// later: the reference's JSON.stringify calls none of them.
const stringify = JSON.stringify
const { keys: ownKeys, getPrototypeOf, prototype: objectPrototype } = Object
const { isArray } = Array
const { isFinite } = Number

// How deep in a tool call's arguments values are measured here (a 1.6
// edit's `edits[i].oldText` is at 2); deeper ones as JSON.stringify writes them.
const MEASURED_DEPTH = 3

/**
 * The length of `JSON.stringify(args)`, or -1 where that is not a string,
 * for the measures chunk `m`, the length to be written at `at`. A tool
 * call's arguments are mostly plain objects and arrays of strings, and a
 * write's or an edit's hold whole files: their JSON is their strings
 * quoted, and a long string's quoted length is counted natively when the
 * chunk is done (measuresOf), in a fraction of the time JSON.stringify
 * takes to write the escaped copy. Each value is read once, in
 * JSON.stringify's order. Any other arguments (a Proxy, another
 * prototype, a `toJSON`, not an object) go to JSON.stringify whole.
 */
function argumentsLength(args, m, at) {
  // (a JSON.stringify the caller put in place is the one the reference calls)
  if (typeof args !== 'object' || args === null || JSON.stringify !== stringify || !isPlain(args) || getPrototypeOf(args) !== objectPrototype) {
    const json = JSON.stringify(args)
    return typeof json === 'string' ? json.length : -1
  }
  const longMark = m.longCount
  const length = objectLength(args, m, at, 0)
  tooLong(length + 6 * longUnitsSince(m, longMark))
  return length
}

/** The units of the long strings the chunk `m` took since `mark`, unquoted. */
function longUnitsSince(m, mark) {
  let units = 0
  for (let i = mark; i < m.longCount; i++) units += m.long[i].length
  return units
}

/** Whether JSON.stringify writes the object `value` as its own fields or elements. */
function isPlain(value) {
  return !isProxy(value) && !('toJSON' in value)
}

/**
 * JSON that may be longer than V8's longest string (a long string's unit
 * written as up to six) makes the reference's JSON.stringify throw: the
 * message is left to the native side, which measures it.
 */
function tooLong(length) {
  if (length >= MAX_STRING_LENGTH) throw new RangeError('arguments too long to measure here')
}

/** The length of the plain object `o`'s JSON (see argumentsLength). */
function objectLength(o, m, at, depth) {
  const keys = ownKeys(o)
  // The opening brace; the closing one and the commas when all are written.
  let length = 1
  let fields = 0
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    const value = valueLength(o[key], key, m, at, depth)
    if (value < 0) continue
    length += quotedLength(key) + 1 + value
    fields++
  }
  return length + Math.max(fields, 1)
}

/** The length of the plain array `a`'s JSON (see argumentsLength). */
function arrayLength(a, m, at, depth) {
  const count = a.length
  // The brackets and the commas.
  let length = Math.max(count + 1, 2)
  for (let i = 0; i < count; i++) {
    const value = valueLength(a[i], i, m, at, depth)
    length += value < 0 ? 4 : value
    // (2 ** 32 - 1 holes: give up where JSON.stringify would)
    tooLong(length)
  }
  return length
}

/**
 * The length of `value`'s JSON as the value of `key` in a plain object or
 * array, a long string's quoted length left to the chunk (0 here), or -1
 * where JSON.stringify writes nothing there (null in an array).
 */
function valueLength(value, key, m, at, depth) {
  switch (typeof value) {
    case 'string':
      if (value.length < LONG_STRING) return quotedLength(value)
      m.long[m.longCount] = value
      m.longAt[m.longCount++] = at
      return 0
    case 'number':
      return isFinite(value) ? ('' + value).length : 4
    case 'boolean':
      return value ? 4 : 5
    case 'undefined':
    case 'symbol':
      return -1
    case 'object':
      if (value === null) return 4
      if (depth < MEASURED_DEPTH && isPlain(value)) {
        if (isArray(value)) return arrayLength(value, m, at, depth + 1)
        if (getPrototypeOf(value) === objectPrototype) return objectLength(value, m, at, depth + 1)
      }
  }
  // As JSON.stringify writes it under its key (a `toJSON` called with it).
  const field = JSON.stringify({ [key]: value })
  return field.length === 2 ? -1 : field.length - 3 - quotedLength('' + key)
}

/**
 * Measures `message`'s `content` as message `k` of the chunk `m` (see
 * readMeasureFacts); the units measured. Whatever is not such a string (or
 * throws) leaves it not measured.
 */
function measureContent(m, k, message) {
  const longMark = m.longCount
  const measured = measureContentOf(m, k, message)
  // Not measured: its long strings are not counted either.
  if (m.forms[k] === 0) {
    m.longCount = longMark
    return 0
  }
  // (a long string counts its own length until its quoted one is added)
  return measured + longUnitsSince(m, longMark)
}

/** measureContent but for its long strings. */
function measureContentOf(m, k, message) {
  // The chunk's positions move only once the message is read whole.
  let b = m.b
  let n = m.n
  const lengthMark = n
  try {
    const content = message.content
    if (typeof content === 'string') {
      if (n + 1 > m.lengths.length) m.lengths = grown(m.lengths, n + 1)
      m.lengths[n] = content.length
      m.n = n + 1
      m.forms[k] = MEASURE_TEXT
      return content.length
    }
    if (!Array.isArray(content)) return 0
    const count = content.length
    if (b + count > m.blocks.length) m.blocks = grown(m.blocks, b + count)
    if (n + 2 * count > m.lengths.length) m.lengths = grown(m.lengths, n + 2 * count)
    const blocks = m.blocks
    const lengths = m.lengths
    for (let i = 0; i < count; i++) {
      const block = content[i]
      if (typeof block !== 'object' || block === null) return 0
      const type = block.type
      if (type === 'text') {
        const text = block.text
        if (typeof text !== 'string') return 0
        blocks[b++] = BLOCK_TEXT
        lengths[n++] = text.length
      } else if (type === 'toolCall') {
        const name = block.name
        if (typeof name !== 'string') return 0
        const json = argumentsLength(block.arguments, m, n + 1)
        if (json < 0) return 0
        blocks[b++] = BLOCK_TOOL_CALL
        lengths[n++] = name.length
        lengths[n++] = json
      } else if (type === 'thinking') {
        const thinking = block.thinking
        if (typeof thinking !== 'string') return 0
        blocks[b++] = BLOCK_THINKING
        lengths[n++] = thinking.length
      } else blocks[b++] = type === 'image' ? BLOCK_IMAGE : BLOCK_OTHER
    }
    m.forms[k] = MEASURE_BLOCKS
    m.counts[k] = count
    m.b = b
    m.n = n
    let measured = 0
    for (let j = lengthMark; j < n; j++) measured += lengths[j]
    return measured
  } catch {
    // The native side reads this message, and throws there (its form is
    // set only once it is read whole).
    return 0
  }
}

/** Pushes the facts of `entries[from..to)` into `facts`, chunk by chunk (see readEntryFacts). */
function pushEntryFacts(facts, entries, from, to, maxUnits, scratch) {
  while (from < to) {
    const chunk = readEntryFacts(entries, from, to, maxUnits, scratch)
    facts.pushEntries(chunk)
    from += chunk.kinds.length
  }
}

/**
 * Pushes the message facts of `at[from..to)` into `facts`, chunk by chunk
 * (see readMessageFacts), and each chunk's strings onto `strings`, where a
 * plan made with `pathRefs` (planFinish) names the paths they give.
 */
function pushMessageFacts(facts, entries, at, from, to, maxUnits, scratch, strings = []) {
  while (from < to) {
    const chunk = readMessageFacts(entries, at, from, to, maxUnits, scratch)
    facts.pushMessages(chunk)
    for (const s of chunk.strings) strings.push(s)
    from += chunk.contents.length
  }
}

module.exports = { readEntryFacts, readEntryKinds, readMessageFacts, readMeasureFacts, measuresChunk, measuresOf, measureContent, pushEntryFacts, pushMessageFacts, MAX_ENTRIES, typeKind, roleKind, NOT_READ }
