'use strict'
// What estimateContextTokens and 1.6's estimateProjectedContextTokens read
// of a context's messages, read ahead in JS when the native side asks for
// it: it reads the last few messages itself, and where the last usage is
// not among them (a provider that reports none, a run of messages without
// one), it answers `{ readFrom, readTo }` and is called again with the
// facts of those messages added. For each message, last first: its role
// (as an entry-kind code, lib/entry-facts.js's roleKind), an assistant's
// `stopReason` and the numbers of its `usage`, and its content's sizes
// (measureContent). The native side
// (crates/core/src/tokens/context_facts.rs has the form) decides from them,
// and reads itself whatever the pass did not take: a message that is not
// an object, a role that is not a string, a usage that is not nullish nor
// an object of numbers, a read that throws. getLastAssistantUsage asks the
// same of session entries: each entry's kind (typeKind, or its message's
// role) and its message's usage, with no measures.

const { isProxy } = require('./plain-array.js')
const { checkCodes } = require('./codes.js')
const { grown } = require('./typed-array.js')
const { roleKind, typeKind, NOT_READ, measuresChunk, measuresOf, measureContent } = require('./entry-facts.js')

const { STOP_OTHER, STOP_ABORTED, STOP_ERROR, USAGE_NULLISH, USAGE_NUMBERS } = checkCodes('contextFacts', {
  STOP_OTHER: 1,
  STOP_ABORTED: 2,
  STOP_ERROR: 3,
  STOP_MASK: 3,
  USAGE_NULLISH: 4,
  USAGE_NUMBERS: 8,
})

// Longer arrays are read natively (no dense array is this long).
const MAX_MESSAGES = 2 ** 23

/**
 * `call(facts)` until it gives its answer: first with none (the native
 * side reads the last messages itself), then, while it asks for more
 * (`{ readFrom, readTo }`), with the form of the array `listOf()` gives
 * (messages, or session entries where `entries`), or `false` where this
 * pass cannot read it (not an array, a Proxy, too long; the native side
 * then reads it all).
 */
function withContextFacts(listOf, call, entries = false) {
  let answer = call(undefined)
  if (answer?.readFrom === undefined) return answer
  const form = contextForm(listOf, entries)
  while (answer?.readFrom !== undefined) {
    if (form !== false) readContextFacts(form, answer.readFrom, answer.readTo)
    answer = call(form)
  }
  return answer
}

/** `{ list, entries, chunks }` for the array `listOf()` gives, or false. */
function contextForm(listOf, entries = false) {
  let list
  try {
    list = listOf()
  } catch {
    return false
  }
  if (!Array.isArray(list) || isProxy(list) || list.length > MAX_MESSAGES) return false
  return { list, entries, chunks: [] }
}

/** Adds to `form` the chunk of its list's `from..to`, last first. */
function readContextFacts(form, from, to) {
  const list = form.list
  const n = to - from
  const roles = new Uint8Array(n)
  const usages = new Uint8Array(n)
  // Five numbers a usage read as numbers, in order.
  const usage = { values: new Float64Array(5 * Math.min(n, 64)), count: 0 }
  // (entries are not measured)
  const measured = form.entries ? 0 : n
  const at = new Uint32Array(measured)
  const m = measuresChunk(measured)
  for (let j = 0; j < n; j++) {
    const k = to - 1 - j
    if (!form.entries) at[j] = k
    try {
      let message = list[k]
      if (typeof message !== 'object' || message === null) continue
      if (form.entries) {
        // An entry: its type's kind, or its message's role's.
        const type = message.type
        if (typeof type !== 'string') continue
        if (type !== 'message') {
          roles[j] = typeKind(type)
          continue
        }
        message = message.message
        if (typeof message !== 'object' || message === null) continue
      }
      const role = message.role
      if (typeof role !== 'string') continue
      roles[j] = roleKind(role)
      if (role === 'assistant') usages[j] = usageOf(message, usage)
      if (!form.entries) measureContent(m, j, message)
    } catch {
      // The native side reads this message, and throws there.
      if (usages[j] & USAGE_NUMBERS) usage.count--
      roles[j] = NOT_READ
      usages[j] = 0
    }
  }
  form.chunks.push({ to, roles, usages, values: usage.values.subarray(0, 5 * usage.count), at, ...measuresOf(m, measured) })
}

/** An assistant's usage code, its numbers added to `usage`'s; 0 where not read. */
function usageOf(message, usage) {
  const stop = message.stopReason
  const code = stop === 'aborted' ? STOP_ABORTED : stop === 'error' ? STOP_ERROR : STOP_OTHER
  const value = message.usage
  if (value === undefined || value === null) return code | USAGE_NULLISH
  if (typeof value !== 'object') return 0
  const total = value.totalTokens
  const input = value.input
  const output = value.output
  const cacheRead = value.cacheRead
  const cacheWrite = value.cacheWrite
  if (typeof total !== 'number' || typeof input !== 'number' || typeof output !== 'number' || typeof cacheRead !== 'number' || typeof cacheWrite !== 'number') return 0
  const v = 5 * usage.count
  if (v + 5 > usage.values.length) usage.values = grown(usage.values, v + 5)
  const values = usage.values
  values[v] = total
  values[v + 1] = input
  values[v + 2] = output
  values[v + 3] = cacheRead
  values[v + 4] = cacheWrite
  usage.count++
  return code | USAGE_NUMBERS
}

module.exports = { withContextFacts, readContextFacts, contextForm }
