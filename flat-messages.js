'use strict'
// The JS half of the transcript builders: messages read into a flat form
// (flatMessages), and the transcript put together from the recipe the
// native side returns (assembleTranscript). Neither decides anything.
//
// Messages for the transcript builders, read in one pass here, where a
// property read is JIT-compiled (about a nanosecond; from native code every
// read is an N-API call of 50 to 100 ns). Plain user, assistant and
// tool-result messages become codes in an Int32Array, the texts met (in
// order), and the UTF-16 units of the short strings (ids, names, argument
// keys and JSON, mime types) one after another in a Uint16Array, each named
// in the codes by its length; the native side formats them
// (src/binding/flat.rs). Nothing is decided here: a message this pass does
// not recognise, down to a text that is not a string or an image with an
// odd mimeType, is left to the native reader ([NATIVE, i]), which converts
// it and reports errors as it always has. If reading throws (a getter, a
// revoked Proxy) or meets a message that is not an object, the whole call
// goes native, which throws the same way at the same point.

// Message codes. `string` is a text's index in the texts array; `id`,
// `name`, `key`, `json` and `mimeType` are lengths of short strings, taken
// in order from the units.
const NATIVE = 0 // [NATIVE, index]
const USER_TEXT = 1 // [USER_TEXT, string, length]
const USER_BLOCKS = 2 // [USER_BLOCKS, count, ...blocks]
const ASSISTANT = 3 // [ASSISTANT, count, ...blocks]
const TOOL_RESULT = 4 // [TOOL_RESULT, id, name, isError, count, ...blocks]
// Block codes.
const TEXT = 5 // [TEXT, string, length, flags]: BLANK | SPLITS_PAIR_AT_CUT
const THINKING = 6 // [THINKING, string, length, redacted]
const TOOL_CALL = 7 // [TOOL_CALL, id, name, n, (key, json or -1) x n]
const IMAGE = 8 // [IMAGE, mimeType or -1]

// Text flags. A tool result is cut at CUT units (TOOL_RESULT_MAX_CHARS in
// src/core/serialize.rs), one fewer where that would split a surrogate
// pair: telling that here saves the native side a call into JS for every
// long tool result. (Were the two numbers to differ, the hint would go
// unused, not wrong: it names the unit it was taken at.)
const BLANK = 1 // t.trim() === ''
const SPLITS_PAIR_AT_CUT = 2 // units CUT - 1 and CUT are a surrogate pair
const CUT = 2000

// Past this many messages the native reader takes the whole call: it stops
// at the first bad message, where this pass would walk them all.
const FLAT_MAX_MESSAGES = 2 ** 24

const isEnumerable = Object.prototype.propertyIsEnumerable

// Longest array `new Array(n)` makes with fast elements in V8 (2^25; a
// longer one is a dictionary, slow to fill and to join).
const FAST_ARRAY_MAX = 2 ** 25

/** A text block's flags (BLANK, SPLITS_PAIR_AT_CUT). */
function textFlags(t) {
  const len = t.length
  if (len === 0) return BLANK
  const c = t.charCodeAt(0)
  // Every character trim() removes is below 0x21 or at 0xA0 and above, so
  // only a string that starts with one needs trimming to tell.
  let flags = (c < 0x21 || c >= 0xa0) && t.trim() === '' ? BLANK : 0
  if (len > CUT && (t.charCodeAt(CUT - 1) & 0xfc00) === 0xd800 && (t.charCodeAt(CUT) & 0xfc00) === 0xdc00) {
    flags |= SPLITS_PAIR_AT_CUT
  }
  return flags
}

// The code and unit buffers of the last call, kept for the next: a warm
// call allocates nothing for them. A call takes them and gives them back
// (releaseFlat) once the native side is done reading them, in place; a
// call made in the meantime (from a getter, say) makes its own. They are
// never handed to anyone else, so nothing but this module can detach or
// resize them while the native side reads (src/binding/flat.rs relies on
// that). Buffers past KEEP_MAX elements are left to the garbage collector.
let spareCodes = null
let spareUnits = null
const KEEP_MAX = 2 ** 21

/**
 * `[codes, texts, shortUnits, ...]` for `messages`, or undefined to read them
 * natively. `codes` is an Int32Array, `shortUnits` a Uint16Array holding the
 * short strings' UTF-16 units one after another. Pass the result to
 * releaseFlat when the native side is done with it.
 */
function flatMessages(messages) {
  if (!Array.isArray(messages) || messages.length > FLAT_MAX_MESSAGES) return undefined
  try {
    return flatten(messages)
  } catch {
    return undefined
  }
}

/** Gives a flat form's buffers back for the next call. */
function releaseFlat(flat) {
  if (flat === undefined) return
  const [, , , codes, units] = flat
  if (codes.length <= KEEP_MAX && units.length <= KEEP_MAX) {
    spareCodes = codes
    spareUnits = units
  }
}

function flatten(messages) {
  let codes = spareCodes ?? new Int32Array(4096)
  let units = spareUnits ?? new Uint16Array(16384)
  spareCodes = spareUnits = null
  let n = 0 // codes written
  let u = 0 // units written
  // Makes room for `k` more codes.
  const room = (k) => {
    if (n + k > codes.length) {
      const bigger = new Int32Array(Math.max(codes.length * 2, n + k))
      bigger.set(codes.subarray(0, n))
      codes = bigger
    }
  }
  const texts = []
  // Ids, names, argument keys and JSON, mime types: short strings the
  // native side writes into its labels, so their units are copied here, one
  // after another, and each is named in the codes by its length.
  // Makes room for `k` more units.
  const unitRoom = (k) => {
    if (u + k > units.length) {
      const bigger = new Uint16Array(Math.max(units.length * 2, u + k))
      bigger.set(units.subarray(0, u))
      units = bigger
    }
  }
  const short = (s) => {
    const len = s.length
    unitRoom(len)
    for (let i = 0; i < len; i++) units[u + i] = s.charCodeAt(i)
    u += len
    return len
  }
  // JSON.stringify(v) as a short string (-1 for undefined). A finite number
  // prints as String(v) does, and a string with nothing to escape between
  // its quotes, so those are written here: one JSON.stringify call per
  // argument was a third of this pass.
  const json = (v) => {
    if (typeof v === 'string') return jsonString(v)
    const j = typeof v === 'number' && Number.isFinite(v) ? '' + v : JSON.stringify(v)
    return j === undefined ? -1 : short(j)
  }
  const jsonString = (s) => {
    const len = s.length
    unitRoom(len + 2)
    units[u] = 0x22
    for (let i = 0; i < len; i++) {
      const c = s.charCodeAt(i)
      // JSON.stringify escapes these, and a surrogate when it is lone.
      if (c < 0x20 || c === 0x22 || c === 0x5c || (c & 0xf800) === 0xd800) return short(JSON.stringify(s))
      units[u + 1 + i] = c
    }
    units[u + 1 + len] = 0x22
    u += len + 2
    return len + 2
  }
  const text = (t) => texts.push(t) - 1
  // [code, text, length, flag], the shape of TEXT and THINKING.
  const textCode = (code, t, flag) => {
    room(4)
    codes[n++] = code
    codes[n++] = text(t)
    codes[n++] = t.length
    codes[n++] = flag
  }
  // The blocks of a content array; false where the native reader must look.
  // User and tool-result content keeps text and image blocks, assistant
  // content text, thinking and tool calls; other types are not shown, as in
  // the native reader.
  const blocks = (content, userLike) => {
    room(1)
    const head = n++
    let count = 0
    for (let j = 0; j < content.length; j++) {
      const b = content[j]
      if (b === null || typeof b !== 'object') return false
      const type = b.type
      if (type === 'text') {
        const t = b.text
        if (typeof t !== 'string') return false
        textCode(TEXT, t, textFlags(t))
      } else if (type === 'image') {
        if (!userLike) continue
        // The native reader takes an own enumerable string mimeType.
        const mimeType = b.mimeType
        let len
        if (typeof mimeType === 'string' && isEnumerable.call(b, 'mimeType')) {
          len = short(mimeType)
        } else if (mimeType === undefined && !('mimeType' in b)) {
          len = -1
        } else {
          return false
        }
        room(2)
        codes[n++] = IMAGE
        codes[n++] = len
      } else if (userLike) {
        continue
      } else if (type === 'thinking') {
        const t = b.thinking
        if (typeof t !== 'string') return false
        textCode(THINKING, t, b.redacted ? 1 : 0)
      } else if (type === 'toolCall') {
        const id = b.id
        const name = b.name
        const args = b.arguments
        if (typeof id !== 'string' || typeof name !== 'string') return false
        if (args === null || args === undefined || typeof args === 'string') return false
        // Object.entries(args), read as its keys and then its values: an
        // array of pairs cost a third of this pass. They pair up unless a
        // getter deleted or hid a later key, which Object.values then skips,
        // as Object.entries does: the lengths tell. (A Proxy's traps run in
        // another order here; its results are the same if they are
        // consistent.)
        const keys = Object.keys(args)
        const values = Object.values(args)
        if (keys.length !== values.length) return false
        room(4 + 2 * keys.length)
        codes[n++] = TOOL_CALL
        codes[n++] = short(id)
        codes[n++] = short(name)
        codes[n++] = keys.length
        for (let e = 0; e < keys.length; e++) {
          codes[n++] = short(keys[e])
          codes[n++] = json(values[e])
        }
      } else {
        continue
      }
      count++
    }
    codes[head] = count
    return true
  }
  const message = (m) => {
    const role = m.role
    const content = m.content
    if (role === 'user') {
      if (typeof content === 'string') {
        room(3)
        codes[n++] = USER_TEXT
        codes[n++] = text(content)
        codes[n++] = content.length
        return true
      }
      if (!Array.isArray(content)) return false
      room(1)
      codes[n++] = USER_BLOCKS
      return blocks(content, true)
    }
    if (role === 'assistant') {
      room(2)
      codes[n++] = ASSISTANT
      if (typeof content === 'string') {
        // `for...of` over a string yields no blocks.
        codes[n++] = 0
        return true
      }
      return Array.isArray(content) && blocks(content, false)
    }
    if (role === 'toolResult') {
      const id = m.toolCallId
      const name = m.toolName
      if (typeof id !== 'string' || typeof name !== 'string' || !Array.isArray(content)) return false
      room(4)
      codes[n++] = TOOL_RESULT
      codes[n++] = short(id)
      codes[n++] = short(name)
      codes[n++] = m.isError ? 1 : 0
      return blocks(content, true)
    }
    return false
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    if (m === null || typeof m !== 'object') return undefined
    const start = n
    const heldTexts = texts.length
    const heldUnits = u
    if (!message(m)) {
      n = start
      u = heldUnits
      texts.length = heldTexts
      room(2)
      codes[n++] = NATIVE
      codes[n++] = i
    }
  }
  return [codes.subarray(0, n), texts, units.subarray(0, u), codes, units]
}

/**
 * A transcript from the recipe the binding returns (src/binding/js_text.rs):
 * `[ops, bounds, labels, strings]`, where an op `i >= 0` is `strings[i]`,
 * `-1, i, n` is `strings[i].slice(0, n)` and `-2 - k` is label `k`: with
 * `j, start, end` the `k`-th triple of `bounds`, `labels[j].slice(start,
 * end)`. The pieces are joined once, so every character is copied a single
 * time.
 */
function assembleTranscript([ops, bounds, labels, strings]) {
  const shared = new Array(bounds.length / 3)
  for (let k = 0; k < shared.length; k++) shared[k] = labels[bounds[3 * k]].slice(bounds[3 * k + 1], bounds[3 * k + 2])
  // One piece per op (a head op takes three numbers). The pieces array is
  // made at its size rather than grown, which at 100k messages (270k
  // pieces) saved a third of this loop; past the length V8 keeps as a fast
  // array it is grown instead.
  let count = 0
  for (let k = 0; k < ops.length; k += ops[k] === -1 ? 3 : 1) count++
  const pieces = count <= FAST_ARRAY_MAX ? new Array(count) : []
  let i = 0
  for (let k = 0; k < ops.length; ) {
    const op = ops[k++]
    if (op >= 0) {
      pieces[i++] = strings[op]
    } else if (op === -1) {
      pieces[i++] = strings[ops[k]].slice(0, ops[k + 1])
      k += 2
    } else {
      pieces[i++] = shared[-2 - op]
    }
  }
  return pieces.join('')
}

module.exports = { flatMessages, releaseFlat, assembleTranscript, FLAT_MAX_MESSAGES, CUT }
