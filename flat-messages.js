'use strict'
// The JS half of the transcript builders: messages read into a flat form
// (flatMessages), and the transcript put together from the recipe the
// native side returns (assembleTranscript). Neither decides anything.
//
// Messages for the transcript builders, read in one pass here, where a
// property read is JIT-compiled (from native code every read is an N-API
// call, many times as costly; docs/serialization.md). Plain user, assistant and
// tool-result messages become codes in an Int32Array, the texts met (in
// order), and the UTF-16 units of the short strings (ids, names, argument
// keys and JSON, mime types) one after another in a Uint16Array, each named
// in the codes by its length; the native side formats them
// (crates/core/src/transcript/flat.rs decodes them). Nothing is decided here: a message this pass does
// not recognise, down to a text that is not a string or an image with an
// odd mimeType, is left to the native reader ([NATIVE, i]), which converts
// it and reports errors as it always has. A message that is not an object
// sends the whole call native, and so does a Proxy around the list. If
// reading throws (a getter), the exception is passed on where no message
// was left to the native reader before it: the native reader would read
// the same values in the same order and meet it again, and reading a
// getter twice runs the caller's code twice.

// (A runtime without util.types.isProxy reads a Proxy's elements here.)
const { isProxy } = require('./lib/plain-array.js')

// Message codes. `string` is a text's index in the texts array; `id`,
// `name`, `key`, `json` and `mimeType` are lengths of short strings, taken
// in order from the units. A tool-call argument's JSON is its length and
// where it is: -1 for the units, `string` when it is a text (JSON longer
// than LONG_JSON units), or -2 - `string` for a string value longer than
// that, whose JSON the native side writes (`length` is then the string's).
// An argument with no JSON (undefined, a function) is -1, -1.
const NATIVE = 0 // [NATIVE, index]
const USER_TEXT = 1 // [USER_TEXT, string, length]
const USER_BLOCKS = 2 // [USER_BLOCKS, count, ...blocks]
const ASSISTANT = 3 // [ASSISTANT, count, ...blocks]
const TOOL_RESULT = 4 // [TOOL_RESULT, id, name, isError, count, ...blocks]
// Block codes.
const TEXT = 5 // [TEXT, string, length, flags]: BLANK | SPLITS_PAIR_AT_CUT
const THINKING = 6 // [THINKING, string, length, redacted]
const TOOL_CALL = 7 // [TOOL_CALL, id, name, n, (key, json or -1, string or -1) x n]
const IMAGE = 8 // [IMAGE, mimeType or -1]

// Text flags. A tool result is cut at CUT units (TOOL_RESULT_MAX_CHARS in
// crates/core/src/transcript/serialize.rs), one fewer where that would split a surrogate
// pair: telling that here saves the native side a call into JS for every
// long tool result. The native side takes the flag to be about its own cut
// (TextHints::CUT), so the two numbers must agree; flat-read.test.js shows
// the flag is used at this one.
const BLANK = 1 // t.trim() === ''
const SPLITS_PAIR_AT_CUT = 2 // units CUT - 1 and CUT are a surrogate pair
const CUT = 2000

// A tool-call argument's JSON longer than this is not copied unit by unit
// into the short strings: a string value (a file's contents, as a rule) is
// passed as it is and escaped natively, faster than JSON.stringify here,
// and other JSON is passed as the string JSON.stringify made.
const LONG_JSON = 64

require('./lib/codes.js').checkCodes('flat', {
  NATIVE,
  USER_TEXT,
  USER_BLOCKS,
  ASSISTANT,
  TOOL_RESULT,
  TEXT,
  THINKING,
  TOOL_CALL,
  IMAGE,
  BLANK,
  SPLITS_PAIR_AT_CUT,
  CUT,
  LONG_JSON,
})

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
// resize them while the native side reads (src/js/flat.rs, which reads
// them in place, relies on that). Buffers past KEEP_MAX elements are left to the garbage collector.
let spareCodes = null
let spareUnits = null
const KEEP_MAX = 2 ** 21

/**
 * `{ codes, texts, shorts, longArguments, times, timed, codeBuffer,
 * unitBuffer }` for `messages`, or undefined to read them natively. `codes`
 * is an Int32Array, `shorts` a Uint16Array holding the short strings'
 * UTF-16 units one after another (both views of the whole buffers kept for
 * the next call); `longArguments` counts the string arguments passed as
 * they are (longer than LONG_JSON), whose JSON the native side writes.
 * With `timestamps` (a projection keeps them; a transcript does not show
 * them), message i's `timestamp` is `times[i]` (a Float64Array) where
 * `timed[i]` (a Uint8Array) is 1, that is where it is a number. Pass the
 * result to releaseFlat when the native side is done with it.
 */
function flatMessages(messages, timestamps = false) {
  // A Proxy's traps decide which elements are there (has) and what they
  // are: the native reader asks them as the agents do.
  if (!Array.isArray(messages) || messages.length > FLAT_MAX_MESSAGES || isProxy(messages)) return undefined
  const handedOver = { native: false }
  try {
    return flatten(messages, timestamps, handedOver)
  } catch (error) {
    // Before any message left to the native reader, it would read what the
    // pass read, in the same order, and meet the caller's exception where
    // the pass met it: passed on, the throwing getter runs once, as in the
    // agents. After one, that message may fail first natively.
    if (error === NO_ROOM || handedOver.native) return undefined
    throw error
  }
}

/** Gives a flat form's buffers back for the next call. */
function releaseFlat(flat) {
  if (flat === undefined) return
  const { codeBuffer: codes, unitBuffer: units } = flat
  if (codes.length <= KEEP_MAX && units.length <= KEEP_MAX) {
    spareCodes = codes
    spareUnits = units
  }
}

// The pass is one function, its state in locals: written as closures over
// shared counters (a helper per block kind), every counter and buffer
// access went through the closures' context, which measured slower.
function flatten(messages, timestamps, handedOver) {
  let codes = spareCodes ?? new Int32Array(4096)
  let units = spareUnits ?? new Uint16Array(16384)
  spareCodes = spareUnits = null
  let n = 0 // codes written
  let u = 0 // units written
  let longArguments = 0 // string arguments passed as they are
  const texts = []
  // The length as the call began, as the native reader (and the
  // reference's convertToLlm, a map) takes it: a getter that adds or
  // removes messages does not change which are read.
  const count = messages.length
  const times = timestamps ? new Float64Array(count) : undefined
  const timed = timestamps ? new Uint8Array(count) : undefined
  for (let i = 0; i < count; i++) {
    const m = messages[i]
    if (m === null || typeof m !== 'object') return undefined
    // Read first, as the native reader reads it.
    if (timestamps) {
      const t = m.timestamp
      if (typeof t === 'number') {
        times[i] = t
        timed[i] = 1
      }
    }
    const start = n
    const heldTexts = texts.length
    const heldUnits = u
    const heldLong = longArguments
    codes = withRoom(codes, n, 5)
    const role = m.role
    const content = m.content
    // User and tool-result content keeps text and image blocks, assistant
    // content text, thinking and tool calls; other types are not shown, as
    // in the native reader.
    let userLike = true
    let ok = true
    if (role === 'user') {
      if (typeof content === 'string') {
        codes[n] = USER_TEXT
        codes[n + 1] = texts.push(content) - 1
        codes[n + 2] = content.length
        n += 3
        continue
      }
      ok = Array.isArray(content)
      codes[n++] = USER_BLOCKS
    } else if (role === 'assistant') {
      userLike = false
      codes[n++] = ASSISTANT
      if (typeof content === 'string') {
        // `for...of` over a string yields no blocks.
        codes[n++] = 0
        continue
      }
      ok = Array.isArray(content)
    } else if (role === 'toolResult') {
      const id = m.toolCallId
      const name = m.toolName
      ok = typeof id === 'string' && typeof name === 'string' && Array.isArray(content)
      if (ok) {
        units = withRoom(units, u, id.length + name.length)
        codes[n] = TOOL_RESULT
        codes[n + 1] = id.length
        codes[n + 2] = name.length
        codes[n + 3] = m.isError ? 1 : 0
        n += 4
        u = putUnits(units, u, id)
        u = putUnits(units, u, name)
      }
    } else {
      ok = false
    }
    // The blocks, after their count; a block the native reader must see
    // sends the whole message there.
    const head = n++
    let count = 0
    for (let j = 0; ok && j < content.length; j++) {
      const b = content[j]
      if (b === null || typeof b !== 'object') {
        ok = false
        break
      }
      codes = withRoom(codes, n, 4)
      const type = b.type
      if (type === 'text') {
        const t = b.text
        if (typeof t !== 'string') {
          ok = false
          break
        }
        codes[n] = TEXT
        codes[n + 1] = texts.push(t) - 1
        codes[n + 2] = t.length
        codes[n + 3] = textFlags(t)
        n += 4
      } else if (type === 'image') {
        if (!userLike) continue
        // The native reader takes an own enumerable string mimeType.
        const mimeType = b.mimeType
        let len = -1
        if (typeof mimeType === 'string' && isEnumerable.call(b, 'mimeType')) {
          len = mimeType.length
          units = withRoom(units, u, len)
          u = putUnits(units, u, mimeType)
        } else if (mimeType !== undefined || 'mimeType' in b) {
          ok = false
          break
        }
        codes[n] = IMAGE
        codes[n + 1] = len
        n += 2
      } else if (userLike) {
        continue
      } else if (type === 'thinking') {
        const t = b.thinking
        if (typeof t !== 'string') {
          ok = false
          break
        }
        codes[n] = THINKING
        codes[n + 1] = texts.push(t) - 1
        codes[n + 2] = t.length
        codes[n + 3] = b.redacted ? 1 : 0
        n += 4
      } else if (type === 'toolCall') {
        const id = b.id
        const name = b.name
        const args = b.arguments
        if (typeof id !== 'string' || typeof name !== 'string' || args === null || args === undefined || typeof args === 'string') {
          ok = false
          break
        }
        // Object.entries(args), read as its keys and then its values: the
        // array of pairs was a large part of this pass. They pair up unless a
        // getter deleted or hid a later key, which Object.values then
        // skips, as Object.entries does: the lengths tell. (A Proxy's traps
        // run in another order here; its results are the same if they are
        // consistent.)
        const keys = Object.keys(args)
        const values = Object.values(args)
        if (keys.length !== values.length) {
          ok = false
          break
        }
        codes = withRoom(codes, n, 4 + 3 * keys.length)
        units = withRoom(units, u, id.length + name.length)
        codes[n] = TOOL_CALL
        codes[n + 1] = id.length
        codes[n + 2] = name.length
        codes[n + 3] = keys.length
        n += 4
        u = putUnits(units, u, id)
        u = putUnits(units, u, name)
        for (let e = 0; e < keys.length; e++) {
          const key = keys[e]
          const v = values[e]
          units = withRoom(units, u, key.length)
          u = putUnits(units, u, key)
          codes[n++] = key.length
          // JSON.stringify(v), written here for a finite number (as
          // String(v) prints it) and a short string with nothing to escape:
          // one JSON.stringify call per argument was a large part of this pass.
          if (typeof v === 'string') {
            if (v.length > LONG_JSON) {
              codes[n] = v.length
              codes[n + 1] = -2 - (texts.push(v) - 1)
              n += 2
              longArguments++
              continue
            }
            units = withRoom(units, u, v.length + 2)
            const end = putQuoted(units, u, v)
            if (end >= 0) {
              codes[n] = end - u
              codes[n + 1] = -1
              n += 2
              u = end
              continue
            }
          }
          const json = typeof v === 'number' && Number.isFinite(v) ? '' + v : JSON.stringify(v)
          if (json === undefined) {
            codes[n] = -1
            codes[n + 1] = -1
          } else if (json.length > LONG_JSON) {
            codes[n] = json.length
            codes[n + 1] = texts.push(json) - 1
          } else {
            units = withRoom(units, u, json.length)
            u = putUnits(units, u, json)
            codes[n] = json.length
            codes[n + 1] = -1
          }
          n += 2
        }
      } else {
        continue
      }
      count++
    }
    if (ok) {
      codes[head] = count
    } else {
      n = start
      u = heldUnits
      texts.length = heldTexts
      longArguments = heldLong
      codes[n++] = NATIVE
      codes[n++] = i
      handedOver.native = true
    }
  }
  return { codes: codes.subarray(0, n), texts, shorts: units.subarray(0, u), longArguments, times, timed, codeBuffer: codes, unitBuffer: units }
}

/** What withRoom throws when the flat form cannot grow: the native reader reads the messages instead. */
const NO_ROOM = Symbol('no room for the flat form')

/** The typed array `array`, or a copy of its first `used` elements with room for `k` more. */
function withRoom(array, used, k) {
  if (used + k <= array.length) return array
  let bigger
  try {
    bigger = new array.constructor(Math.max(array.length * 2, used + k))
  } catch {
    throw NO_ROOM
  }
  bigger.set(array.subarray(0, used))
  return bigger
}

/**
 * Ids, names, argument keys and JSON, mime types: short strings the native
 * side writes into its labels, so their units are copied, one after
 * another, each named in the codes by its length. Writes `s` at `u`;
 * returns the end.
 */
function putUnits(units, u, s) {
  for (let k = 0; k < s.length; k++) units[u + k] = s.charCodeAt(k)
  return u + s.length
}

/**
 * JSON.stringify(s) written at `u` when it is `s` in quotes (nothing to
 * escape: no quote, backslash, control character or surrogate, which it
 * escapes when lone); returns the end, or -1 when it is not.
 */
function putQuoted(units, u, s) {
  units[u] = 0x22
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c & 0xf800) === 0xd800) return -1
    units[u + 1 + k] = c
  }
  units[u + 1 + s.length] = 0x22
  return u + s.length + 2
}

// Recipe codes (crates/core/src/transcript/recipe.rs writes them): see assembleTranscript.
const OP_HEAD = -1
const OP_LABEL_BASE = -2
require('./lib/codes.js').checkCodes('recipe', { OP_HEAD, OP_LABEL_BASE })

/**
 * A transcript from what the binding returns: the transcript itself, written
 * whole (StringSink in src/js/text.rs; crates/core/src/transcript/output_form.rs
 * says when), or a recipe (RecipeSink, over crates/core/src/transcript/recipe.rs):
 * `{ ops, bounds, labels, strings }`, where an op `i >= 0` is `strings[i]`,
 * `-1, i, n` is `strings[i].slice(0, n)` and `-2 - k` is label `k`: with
 * `j, start, end` the `k`-th triple of `bounds`, `labels[j].slice(start,
 * end)`. The pieces are joined once, so every character is copied a single
 * time.
 */
function assembleTranscript(built) {
  if (typeof built === 'string') return built
  const { ops, bounds, labels, strings } = built
  const shared = new Array(bounds.length / 3)
  for (let k = 0; k < shared.length; k++) shared[k] = labels[bounds[3 * k]].slice(bounds[3 * k + 1], bounds[3 * k + 2])
  // One piece per op (a head op takes three numbers). The pieces array is
  // made at its size rather than grown, which is cheaper on long
  // transcripts; past the length V8 keeps as a fast array it is grown instead.
  let count = 0
  for (let k = 0; k < ops.length; k += ops[k] === OP_HEAD ? 3 : 1) count++
  const pieces = count <= FAST_ARRAY_MAX ? new Array(count) : []
  let i = 0
  for (let k = 0; k < ops.length; ) {
    const op = ops[k++]
    if (op >= 0) {
      pieces[i++] = strings[op]
    } else if (op === OP_HEAD) {
      pieces[i++] = strings[ops[k]].slice(0, ops[k + 1])
      k += 2
    } else {
      pieces[i++] = shared[OP_LABEL_BASE - op]
    }
  }
  return pieces.join('')
}

// Plan codes (crates/core/src/projection/plan.rs writes them): message kinds,
// block kinds, text references, how a tool call's arguments come and how
// an argument given key by key holds its value.
const PLAN_USER_TEXT = 1
const PLAN_USER = 2
const PLAN_ASSISTANT = 3
const PLAN_TOOL_RESULT = 4
const PLAN_TEXT = 1
const PLAN_THINKING = 2
const PLAN_TOOL_CALL = 3
const PLAN_IMAGE = 4
const PLAN_SHORT = -1
const PLAN_VALUE_BASE = -2
const PLAN_PARSED_ARGS = -1
const PLAN_NO_JSON = 0
const PLAN_JSON = 1
const PLAN_STRING_VALUE = 2
require('./lib/codes.js').checkCodes('plan', {
  USER_TEXT: PLAN_USER_TEXT,
  USER: PLAN_USER,
  ASSISTANT: PLAN_ASSISTANT,
  TOOL_RESULT: PLAN_TOOL_RESULT,
  TEXT: PLAN_TEXT,
  THINKING: PLAN_THINKING,
  TOOL_CALL: PLAN_TOOL_CALL,
  IMAGE: PLAN_IMAGE,
  SHORT: PLAN_SHORT,
  VALUE_BASE: PLAN_VALUE_BASE,
  PARSED_ARGS: PLAN_PARSED_ARGS,
  NO_JSON: PLAN_NO_JSON,
  JSON: PLAN_JSON,
  STRING_VALUE: PLAN_STRING_VALUE,
})

/**
 * The projected messages, new objects, from the plan the binding returns
 * for them (PlanWriter in crates/core/src/projection/plan.rs): `{ codes, values,
 * shorts, args }`, where a text is named by one code `r`: `r >= 0` is
 * `texts[r]` (the flat form's texts: the caller's own strings), `-1` is
 * `shorts.slice(start, end)` with the next two codes, and `r <= -2` is
 * `values[-2 - r]`. A tool call's arguments are either the next object of
 * `JSON.parse(args)` (-1) or given key by key (their count). `flat` is the
 * flat form the plan was made from, if any.
 */
function projectionOfPlan(plan, flat) {
  const { codes, values, shorts, args: argsJson } = plan
  const texts = flat === undefined ? undefined : flat.texts
  // Every tool call's arguments that could be, parsed at once: a key named
  // __proto__ stays a key, as in JSON.parse.
  const parsedArgs = argsJson === undefined ? undefined : JSON.parse(argsJson)
  let a = 0
  // As in flatten, one function with its state in locals; a text is taken
  // with textAt and passed with `i += codes[i] === PLAN_SHORT ? 3 : 1`.
  let i = 0
  const out = []
  while (i < codes.length) {
    const kind = codes[i]
    const hasTimestamp = codes[i + 1]
    const timestamp = codes[i + 2]
    i += 3
    let m
    if (kind === PLAN_USER_TEXT) {
      m = { role: 'user', content: textAt(codes, i, texts, shorts, values) }
      i += codes[i] === PLAN_SHORT ? 3 : 1
    } else {
      let id, name, isError
      if (kind === PLAN_TOOL_RESULT) {
        id = textAt(codes, i, texts, shorts, values)
        i += codes[i] === PLAN_SHORT ? 3 : 1
        name = textAt(codes, i, texts, shorts, values)
        i += codes[i] === PLAN_SHORT ? 3 : 1
        isError = codes[i++] === 1
      }
      const content = new Array(codes[i++])
      for (let k = 0; k < content.length; k++) {
        const type = codes[i++]
        let b
        if (type === PLAN_TEXT) {
          b = { type: 'text', text: textAt(codes, i, texts, shorts, values) }
          i += codes[i] === PLAN_SHORT ? 3 : 1
        } else if (type === PLAN_THINKING) {
          b = { type: 'thinking', thinking: textAt(codes, i, texts, shorts, values) }
          i += codes[i] === PLAN_SHORT ? 3 : 1
          if (codes[i++]) b.redacted = true
        } else if (type === PLAN_TOOL_CALL) {
          const callId = textAt(codes, i, texts, shorts, values)
          i += codes[i] === PLAN_SHORT ? 3 : 1
          const callName = textAt(codes, i, texts, shorts, values)
          i += codes[i] === PLAN_SHORT ? 3 : 1
          b = { type: 'toolCall', id: callId, name: callName, arguments: undefined }
          const n = codes[i++]
          if (n === PLAN_PARSED_ARGS) {
            b.arguments = parsedArgs[a++]
          } else {
            const at = { i }
            b.arguments = argumentsByKey(codes, at, n, texts, shorts, values)
            i = at.i
          }
        } else {
          b = { type: 'image' }
          if (codes[i++]) {
            b.mimeType = textAt(codes, i, texts, shorts, values)
            i += codes[i] === PLAN_SHORT ? 3 : 1
          }
        }
        content[k] = b
      }
      if (kind === PLAN_USER) m = { role: 'user', content }
      else if (kind === PLAN_ASSISTANT) m = { role: 'assistant', content }
      else m = { role: 'toolResult', toolCallId: id, toolName: name, content, isError }
    }
    if (hasTimestamp) m.timestamp = timestamp
    out.push(m)
  }
  return out
}

/** The text a plan names at `codes[i]` (see projectionOfPlan). */
function textAt(codes, i, texts, shorts, values) {
  const r = codes[i]
  if (r >= 0) return texts[r]
  if (r === PLAN_SHORT) return shorts.slice(codes[i + 1], codes[i + 2])
  return values[PLAN_VALUE_BASE - r]
}

/** A tool call's `n` arguments given key by key from `at.i` on (which moves past them). */
function argumentsByKey(codes, at, n, texts, shorts, values) {
  const args = {}
  let i = at.i
  for (; n > 0; n--) {
    const key = textAt(codes, i, texts, shorts, values)
    i += codes[i] === PLAN_SHORT ? 3 : 1
    let value
    // 0: `JSON.stringify` of the value gave undefined, and so does the copy;
    // 1: the copy is the parse of the JSON that follows; 2: the value is a
    // string, and the copy is that string.
    const held = codes[i++]
    if (held === PLAN_JSON) {
      value = JSON.parse(textAt(codes, i, texts, shorts, values))
      i += codes[i] === PLAN_SHORT ? 3 : 1
    } else if (held === PLAN_STRING_VALUE) {
      value = textAt(codes, i, texts, shorts, values)
      i += 1
    }
    // Defined, not assigned: a key named __proto__ stays a key, as in JSON.parse.
    Object.defineProperty(args, key, { value, writable: true, enumerable: true, configurable: true })
  }
  at.i = i
  return args
}

module.exports = { flatMessages, releaseFlat, assembleTranscript, projectionOfPlan, FLAT_MAX_MESSAGES, CUT }
