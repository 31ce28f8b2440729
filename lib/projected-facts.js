'use strict'
// What 1.6's estimateProjectedContextTokens reads of the agent's session
// projection and branch, read ahead in JS: the agent calls it before every
// model request and on every render of its footer, and natively each
// element and property was an N-API call. For each projected entry, its
// `messages.length`; for each branch entry, its `type` as an entry-kind code
// (lib/entry-facts.js's typeKind) and its `id`: the string itself (in an
// array), its length and a hash of its last two units (idHash). The native
// side (usage_is_current_in in crates/core/src/tokens/projected.rs)
// decides from them: it looks for its id among the ids of its length and
// hash, and compares only those. It reads itself whatever the pass did not
// take: an entry that is not an object, a `messages` that is not an array,
// a `type` or an `id` that is not a string, a read that throws.

const isProxy = require('node:util').types?.isProxy ?? (() => false)
const { typeKind, NOT_READ } = require('./entry-facts.js')
const { FRESH, SpareArray } = require('./typed-array.js')

// Longer lists are read natively (no dense array is this long).
const MAX_ENTRIES = 2 ** 23
// The ids array, kept between calls.
const spareIds = new SpareArray(2 ** 20)

// A projected entry's message count not read (crates/core/src/tokens/projected.rs NOT_READ_COUNT).
const NOT_READ_COUNT = 2 ** 32 - 1

/**
 * `{ entries, counts, kinds, idLengths, idHashes, ids }` for `projection` and
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
  readCounts(entries, counts)
  const n = branchEntries.length
  const kinds = scratch.zeroed('kinds', Uint8Array, n).subarray(0, n)
  const idLengths = scratch.any('idLengths', Int32Array, n).subarray(0, n)
  const idHashes = scratch.any('idHashes', Int32Array, n).subarray(0, n)
  const ids = spareIds.take()
  while (ids.length < n) ids.push(undefined)
  readBranch(branchEntries, kinds, idLengths, idHashes, ids)
  return { entries, counts, kinds, idLengths, idHashes, ids }
}

/**
 * Each projected entry's `messages.length` into `counts` (NOT_READ_COUNT
 * where not read). One `try` around the loop, entered again past an entry
 * whose read throws: a `try` per entry measured slower.
 */
function readCounts(entries, counts) {
  let k = 0
  while (k < counts.length) {
    try {
      for (; k < counts.length; k++) {
        counts[k] = NOT_READ_COUNT
        const entry = entries[k]
        if (entry === null || typeof entry !== 'object') continue
        const messages = entry.messages
        if (Array.isArray(messages)) counts[k] = messages.length
      }
    } catch {
      // Read again natively, and thrown there if it is needed.
      k++
    }
  }
}

/**
 * Each branch entry's kind, and its id where it is a string (its length -1
 * where not), with one `try` as in readCounts.
 */
function readBranch(branchEntries, kinds, idLengths, idHashes, ids) {
  let i = 0
  while (i < kinds.length) {
    try {
      for (; i < kinds.length; i++) {
        idLengths[i] = -1
        const entry = branchEntries[i]
        if (entry === null || typeof entry !== 'object') continue
        const type = entry.type
        // (A message's kind is an entry of another type here: only the type counts.)
        kinds[i] = typeof type === 'string' ? typeKind(type) : NOT_READ
        const id = entry.id
        if (typeof id === 'string') {
          const length = id.length
          idLengths[i] = length
          idHashes[i] = idHash(id, length)
          ids[i] = id
        }
      }
    } catch {
      // Read again natively, and thrown there if it is needed.
      i++
    }
  }
}

/**
 * The last unit of `id` and, 16 bits up, the one before (each 0 where
 * there is none): `id_hash` in crates/core/src/tokens/projected.rs. The
 * last two units tell apart random ids and counted ones alike.
 */
function idHash(id, length) {
  return id.charCodeAt(length - 1) | (id.charCodeAt(length - 2) << 16)
}

/** Gives the facts' ids array back for the next call. */
function releaseProjectedFacts(facts) {
  if (facts !== undefined) spareIds.give(facts.ids, facts.idLengths.length)
}

module.exports = { readProjectedFacts, releaseProjectedFacts, idHash }
