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
// an object of numbers, a read that throws.

const isProxy = require('node:util').types?.isProxy ?? (() => false)
const { checkCodes } = require('./codes.js')
const { roleKind, NOT_READ, measuresChunk, measuresOf, measureContent } = require('./entry-facts.js')

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
 * `call(facts)` until it gives an estimate: first with none (the native
 * side reads the last messages itself), then, while it asks for more, with
 * the form of the messages `messagesOf()` gives, or `false` where this
 * pass cannot read them (not an array, a Proxy, too long; the native side
 * then reads them all).
 */
function withContextFacts(messagesOf, call) {
  let answer = call(undefined)
  if (answer.readFrom === undefined) return answer
  const form = contextForm(messagesOf)
  while (answer.readFrom !== undefined) {
    if (form !== false) readContextFacts(form, answer.readFrom, answer.readTo)
    answer = call(form)
  }
  return answer
}

/** `{ messages, chunks }` for the messages `messagesOf()` gives, or false. */
function contextForm(messagesOf) {
  let messages
  try {
    messages = messagesOf()
  } catch {
    return false
  }
  if (!Array.isArray(messages) || isProxy(messages) || messages.length > MAX_MESSAGES) return false
  return { messages, chunks: [] }
}

/** Adds to `form` the chunk of its messages `from..to`, last first. */
function readContextFacts(form, from, to) {
  const messages = form.messages
  const n = to - from
  const roles = new Uint8Array(n)
  const usages = new Uint8Array(n)
  const values = new Float64Array(5 * n)
  const at = new Uint32Array(n)
  const m = measuresChunk(n)
  for (let j = 0; j < n; j++) {
    const k = to - 1 - j
    at[j] = k
    try {
      const message = messages[k]
      if (typeof message !== 'object' || message === null) continue
      const role = message.role
      if (typeof role !== 'string') continue
      roles[j] = roleKind(role)
      if (role === 'assistant') usages[j] = usageOf(message, values, 5 * j)
      measureContent(m, j, message)
    } catch {
      // The native side reads this message, and throws there.
      roles[j] = NOT_READ
      usages[j] = 0
    }
  }
  form.chunks.push({ to, roles, usages, values, at, ...measuresOf(m, n) })
}

/** An assistant's usage code, its numbers put in `values` from `v`; 0 where not read. */
function usageOf(message, values, v) {
  const stop = message.stopReason
  const code = stop === 'aborted' ? STOP_ABORTED : stop === 'error' ? STOP_ERROR : STOP_OTHER
  const usage = message.usage
  if (usage === undefined || usage === null) return code | USAGE_NULLISH
  if (typeof usage !== 'object') return 0
  const total = usage.totalTokens
  const input = usage.input
  const output = usage.output
  const cacheRead = usage.cacheRead
  const cacheWrite = usage.cacheWrite
  if (typeof total !== 'number' || typeof input !== 'number' || typeof output !== 'number' || typeof cacheRead !== 'number' || typeof cacheWrite !== 'number') return 0
  values[v] = total
  values[v + 1] = input
  values[v + 2] = output
  values[v + 3] = cacheRead
  values[v + 4] = cacheWrite
  return code | USAGE_NUMBERS
}

module.exports = { withContextFacts, readContextFacts, contextForm }
