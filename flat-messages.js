'use strict'
// The JS half of the transcript builders: messages read into a flat form
// (flatMessages), and the transcript put together from the recipe the
// native side returns (assembleTranscript). Neither decides anything.
//
// Messages for the transcript builders, read in one pass here, where a
// property read is JIT-compiled (about a nanosecond; from native code every
// read is an N-API call of 50 to 100 ns). Plain user, assistant and
// tool-result messages become codes in an Int32Array, the texts met (in
// order) and one string of the short ones (ids, names, argument keys and
// JSON, mime types) joined, each named in the codes by its length; the native side
// formats them (src/binding/flat.rs). Nothing is decided here: a message
// this pass does not recognise, down to a text that is not a string or an
// image with an odd mimeType, is left to the native reader ([NATIVE, i]), which converts it
// and reports errors as it always has. If reading throws (a getter, a
// revoked Proxy) or meets a message that is not an object, the whole call
// goes native, which throws the same way at the same point.

// Message codes. `string` is a text's index in the texts array; `id`,
// `name`, `key`, `json` and `mimeType` are lengths of short strings, taken
// in order from the joined string.
const NATIVE = 0 // [NATIVE, index]
const USER_TEXT = 1 // [USER_TEXT, string, length]
const USER_BLOCKS = 2 // [USER_BLOCKS, count, ...blocks]
const ASSISTANT = 3 // [ASSISTANT, count, ...blocks]
const TOOL_RESULT = 4 // [TOOL_RESULT, id, name, isError, count, ...blocks]
// Block codes.
const TEXT = 5 // [TEXT, string, length]
const THINKING = 6 // [THINKING, string, length, redacted]
const TOOL_CALL = 7 // [TOOL_CALL, id, name, n, (key, json or -1) x n]
const IMAGE = 8 // [IMAGE, mimeType or -1]

// Past this many messages the native reader takes the whole call: it stops
// at the first bad message, where this pass would walk them all.
const FLAT_MAX_MESSAGES = 2 ** 24

const isEnumerable = Object.prototype.propertyIsEnumerable

/** `[codes, texts, shorts]` for `messages`, or undefined to read them natively. */
function flatMessages(messages) {
  if (!Array.isArray(messages) || messages.length > FLAT_MAX_MESSAGES) return undefined
  try {
    return flatten(messages)
  } catch {
    return undefined
  }
}

function flatten(messages) {
  // A plain array while reading (pushes are what V8 optimizes best), an
  // Int32Array for the native side at the end.
  const codes = []
  const strings = []
  // Ids, names, argument keys and JSON, mime types: short strings the
  // native side copies, so they travel joined, each as its length. Joined
  // by `+` (a rope, flattened once when read): a message's own, then onto
  // the whole once the message is known to be flat.
  let shorts = ''
  let messageShorts = ''
  const short = (s) => {
    messageShorts += s
    return s.length
  }
  // The blocks of a content array; false where the native reader must look.
  // User and tool-result content keeps text and image blocks, assistant
  // content text, thinking and tool calls; other types are not shown, as in
  // the native reader.
  const blocks = (content, userLike) => {
    const head = codes.length
    codes.push(0)
    let count = 0
    for (let j = 0; j < content.length; j++) {
      const b = content[j]
      if (b === null || typeof b !== 'object') return false
      const type = b.type
      if (type === 'text') {
        const t = b.text
        if (typeof t !== 'string') return false
        codes.push(TEXT, strings.push(t) - 1, t.length)
      } else if (type === 'image') {
        if (!userLike) continue
        // The native reader takes an own enumerable string mimeType.
        const mimeType = b.mimeType
        if (typeof mimeType === 'string' && isEnumerable.call(b, 'mimeType')) {
          codes.push(IMAGE, short(mimeType))
        } else if (mimeType === undefined && !('mimeType' in b)) {
          codes.push(IMAGE, -1)
        } else {
          return false
        }
      } else if (userLike) {
        continue
      } else if (type === 'thinking') {
        const t = b.thinking
        if (typeof t !== 'string') return false
        codes.push(THINKING, strings.push(t) - 1, t.length, b.redacted ? 1 : 0)
      } else if (type === 'toolCall') {
        const id = b.id
        const name = b.name
        const args = b.arguments
        if (typeof id !== 'string' || typeof name !== 'string') return false
        if (args === null || args === undefined || typeof args === 'string') return false
        const entries = Object.entries(args)
        codes.push(TOOL_CALL, short(id), short(name), entries.length)
        for (let e = 0; e < entries.length; e++) {
          const json = JSON.stringify(entries[e][1])
          codes.push(short(entries[e][0]), json === undefined ? -1 : short(json))
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
        codes.push(USER_TEXT, strings.push(content) - 1, content.length)
        return true
      }
      if (!Array.isArray(content)) return false
      codes.push(USER_BLOCKS)
      return blocks(content, true)
    }
    if (role === 'assistant') {
      codes.push(ASSISTANT)
      if (typeof content === 'string') {
        // `for...of` over a string yields no blocks.
        codes.push(0)
        return true
      }
      return Array.isArray(content) && blocks(content, false)
    }
    if (role === 'toolResult') {
      const id = m.toolCallId
      const name = m.toolName
      if (typeof id !== 'string' || typeof name !== 'string' || !Array.isArray(content)) return false
      codes.push(TOOL_RESULT, short(id), short(name), m.isError ? 1 : 0)
      return blocks(content, true)
    }
    return false
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    if (m === null || typeof m !== 'object') return undefined
    const start = codes.length
    const held = strings.length
    messageShorts = ''
    if (message(m)) {
      shorts += messageShorts
    } else {
      codes.length = start
      strings.length = held
      codes.push(NATIVE, i)
    }
  }
  return [Int32Array.from(codes), strings, shorts]
}

/**
 * A transcript from the recipe the binding returns (src/binding/js_text.rs):
 * `[ops, bounds, labels, strings]`, where an op `i >= 0` is `strings[i]`,
 * `-1, i, n` is `strings[i].slice(0, n)` and `-2 - k` is label `k`, cut from
 * `labels` at the `k`-th pair of `bounds`. The pieces are joined once, so
 * every character is copied a single time.
 */
function assembleTranscript([ops, bounds, labels, strings]) {
  const shared = new Array(bounds.length >> 1)
  for (let k = 0; k < shared.length; k++) shared[k] = labels.slice(bounds[2 * k], bounds[2 * k + 1])
  const pieces = []
  for (let k = 0; k < ops.length; ) {
    const op = ops[k++]
    if (op >= 0) {
      pieces.push(strings[op])
    } else if (op === -1) {
      pieces.push(strings[ops[k]].slice(0, ops[k + 1]))
      k += 2
    } else {
      pieces.push(shared[-2 - op])
    }
  }
  return pieces.join('')
}

module.exports = { flatMessages, assembleTranscript, FLAT_MAX_MESSAGES }
