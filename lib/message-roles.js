'use strict'
// convertToLlm's messages, read ahead in JS: each message as the array
// gives it, and its `role` as the code of lib/entry-facts.js's roleKind;
// and its result, made from the binding's plan.
// The native side (src/convert_to_llm.rs) then reads only the messages it
// turns into others; the ones it passes through (most) it never reads. A
// message the pass does not take (not an object, a hole, a role that is
// not a string, a read that throws) is left unread (code NOT_READ): the
// native side reads and judges it, as without the pass.

const isProxy = require('node:util').types?.isProxy ?? (() => false)
const { roleKind, NOT_READ } = require('./entry-facts.js')

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
 * The messages of the binding's plan (src/convert_to_llm.rs): for `{ order,
 * made }`, `values[k]` for an index k, else a message it made; for `{
 * replaced, made }`, `values` itself (this call's own array) with the
 * messages made in the places it names. A message made is an object, or
 * `[timestamp, ...pieces]` for the user message of one text it names.
 */
function messagesOfPlan({ order, replaced, made }, values) {
  if (replaced !== undefined) {
    for (let j = 0; j < replaced.length; j++) values[replaced[j]] = messageMade(made[j])
    return values
  }
  const out = []
  for (let j = 0; j < order.length; j++) {
    const k = order[j]
    out.push(k >= 0 ? values[k] : messageMade(made[-1 - k]))
  }
  return out
}

function messageMade(m) {
  return Array.isArray(m) ? { role: 'user', content: [{ type: 'text', text: joined(m, 1) }], timestamp: m[0] } : m
}

/** The strings `parts[from..]` joined: each linked in with `+`, not copied. */
function joined(parts, from) {
  let text = ''
  for (let i = from; i < parts.length; i++) text += parts[i]
  return text
}

module.exports = { readMessageRoles, messagesOfPlan, joined }
