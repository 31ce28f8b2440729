'use strict'
// What 1.6's estimateProjectedContextTokens reads of the agent's session
// projection and branch, read ahead in JS: the agent calls it before every
// model request and on every render of its footer, and natively each
// element and property was an N-API call. For each projected entry, its
// `messages.length`; for each branch entry, its `type` as an entry-kind code
// (lib/entry-facts.js's typeKind) and its `id`, the ids joined in one string.
// The native side (usage_is_current_in in crates/core/src/tokens/projected.rs)
// decides from them, and reads itself whatever the pass did not take: an
// entry that is not an object, a `messages` that is not an array, a `type`
// or an `id` that is not a string, a read that throws.

const isProxy = require('node:util').types?.isProxy ?? (() => false)
const { typeKind, NOT_READ } = require('./entry-facts.js')
const { FRESH } = require('./typed-array.js')

// Longer lists are read natively (no dense array is this long).
const MAX_ENTRIES = 2 ** 23
// A projected entry's message count not read (crates/core/src/tokens/projected.rs NOT_READ_COUNT).
const NOT_READ_COUNT = 2 ** 32 - 1
// The joined ids end at this many units; the ids after are read natively.
const MAX_ID_UNITS = 2 ** 27

/**
 * `{ entries, counts, kinds, idLengths, ids }` for `projection` and
 * `branchEntries`, or undefined where the native side reads them all (not
 * arrays, Proxies, too long, `projection.entries` unreadable).
 */
function readProjectedFacts(projection, branchEntries, scratch = FRESH) {
  if (!Array.isArray(branchEntries) || isProxy(branchEntries) || branchEntries.length > MAX_ENTRIES) return undefined
  if (projection === null || typeof projection !== 'object') return undefined
  let entries
  try {
    entries = projection.entries
  } catch {
    return undefined
  }
  if (!Array.isArray(entries) || isProxy(entries) || entries.length > MAX_ENTRIES) return undefined
  const counts = scratch.any('counts', Uint32Array, entries.length).subarray(0, entries.length)
  for (let k = 0; k < entries.length; k++) {
    counts[k] = NOT_READ_COUNT
    try {
      const entry = entries[k]
      if (entry === null || typeof entry !== 'object') continue
      const messages = entry.messages
      if (Array.isArray(messages)) counts[k] = messages.length
    } catch {
      // Read again natively, and thrown there if it is needed.
    }
  }
  const n = branchEntries.length
  const kinds = scratch.zeroed('kinds', Uint8Array, n).subarray(0, n)
  const idLengths = scratch.any('idLengths', Int32Array, n).subarray(0, n)
  let ids = ''
  for (let i = 0; i < n; i++) {
    idLengths[i] = -1
    try {
      const entry = branchEntries[i]
      if (entry === null || typeof entry !== 'object') continue
      const type = entry.type
      // (A message's kind is an entry of another type here: only the type counts.)
      kinds[i] = typeof type === 'string' ? typeKind(type) : NOT_READ
      const id = entry.id
      if (typeof id === 'string' && ids.length < MAX_ID_UNITS) {
        ids += id
        idLengths[i] = id.length
      }
    } catch {
      // Read again natively, and thrown there if it is needed.
    }
  }
  return { entries, counts, kinds, idLengths, ids }
}

module.exports = { readProjectedFacts }
