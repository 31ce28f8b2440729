'use strict'
// convertToLlm's messages, read ahead in JS: each message as the array
// gives it, and its `role` as the code of lib/entry-facts.js's roleKind;
// and its result, made from the binding's plan.
// The native side (src/convert_to_llm.rs) then reads only the messages it
// turns into others; the ones it passes through (most) it never reads. A
// message the pass does not take (not an object, a hole, a role that is
// not a string, a read that throws) is left unread (code NOT_READ): the
// native side reads and judges it, as without the pass.

const { isProxy } = require('./plain-array.js')
const native = require('../binding.js')
const { roleKind, NOT_READ } = require('./entry-facts.js')

// The literal pieces of the texts the binding makes, by code.
const LITERALS = native.textLiterals()

// Longer lists (sparse ones, in practice) are read natively.
const MAX_MESSAGES = 2 ** 23

/**
 * `{ roles, values }` for `messages`, or undefined where the native side
 * reads them all: not an array, a Proxy (its traps decide which elements
 * are there, as the agents ask them), or too long.
 */
function readMessageRoles(messages) {
  if (!Array.isArray(messages) || isProxy(messages) || messages.length > MAX_MESSAGES) return undefined
  // The length as the call began, as map takes it.
  const count = messages.length
  const roles = new Uint8Array(count)
  const values = new Array(count)
  for (let i = 0; i < count; i++) {
    const m = messages[i]
    values[i] = m
    if (m === null || typeof m !== 'object') continue
    let role
    try {
      role = m.role
    } catch {
      // Read again natively, and thrown there.
      continue
    }
    roles[i] = typeof role === 'string' ? roleKind(role) : NOT_READ
  }
  return { roles, values }
}

/**
 * The messages of the binding's plan (src/convert_to_llm.rs): for `order`,
 * `values[k]` for an index k, else a message it made; for `replaced`,
 * `values` itself (this call's own array) with the messages made in the
 * places it names.
 */
function messagesOfPlan(plan, values) {
  const { order, replaced, made } = plan
  if (replaced !== undefined) {
    for (let j = 0; j < replaced.length; j++) values[replaced[j]] = messageMade(plan, made[j])
    return values
  }
  const out = []
  for (let j = 0; j < order.length; j++) {
    const k = order[j]
    out.push(k >= 0 ? values[k] : messageMade(plan, made[-1 - k]))
  }
  return out
}

/** The message the plan's code `m` names: an object made, or a user message of one text. */
function messageMade({ objects, codes, strings }, m) {
  if (m < 0) return objects[-1 - m]
  return { role: 'user', content: [{ type: 'text', text: textAt(codes, strings, m + 1) }], timestamp: strings[-1 - codes[m]] }
}

/**
 * The text starting at `codes[at]` (its number of pieces, then each piece:
 * a literal's index, or `-1 - i` for `strings[i]`): the pieces joined, each
 * linked in with `+`, not copied.
 */
function textAt(codes, strings, at) {
  let text = ''
  const end = at + 1 + codes[at]
  for (let i = at + 1; i < end; i++) {
    const c = codes[i]
    text += c >= 0 ? LITERALS[c] : strings[-1 - c]
  }
  return text
}

module.exports = { readMessageRoles, messagesOfPlan, textAt }
