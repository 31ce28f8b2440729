'use strict'
// What 1.6's estimateProjectedContextTokens reads of the agent's session
// projection and branch, read ahead in JS: the agent calls it before every
// model request and on every render of its footer, and natively each
// element and property was an N-API call. For each projected entry, its
// `messages.length`. The branch is not read ahead: the native side
// (usage_is_current_in in crates/core/src/tokens/projected.rs), once it
// knows what it looks for, calls `indexOfId` to find the usage's id among
// the branch entries and `lastIndexOfType` for the last entry of the types
// it names, making the reads the agent's findIndex and its loop back make,
// as far as they make them. It reads itself whatever the pass did not
// take: an entry that is not an object, a `messages` that is not an array,
// a read that throws.

const isProxy = require('node:util').types?.isProxy ?? (() => false)
const { FRESH } = require('./typed-array.js')

// Longer lists are read natively (no dense array is this long).
const MAX_ENTRIES = 2 ** 23

// A projected entry's message count not read (crates/core/src/tokens/projected.rs NOT_READ_COUNT).
const NOT_READ_COUNT = 2 ** 32 - 1

/**
 * `{ entries, counts, indexOfId, lastIndexOfType }` for `projection` and
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
  return { entries, counts, indexOfId, lastIndexOfType }
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
 * The first of `branchEntries[from..to)` whose `id` is `id` (`===`), read
 * in order as the agent's findIndex reads them: its index; -1 where there
 * is none; `-2 - i` where reading entry i's id throws (null or undefined
 * among them), for the native walk to read and throw.
 */
function indexOfId(branchEntries, id, from, to) {
  let i = from
  try {
    for (; i < to; i++) if (branchEntries[i].id === id) return i
  } catch {
    return -2 - i
  }
  return -1
}

/**
 * The last of `branchEntries[0..to)` whose `type` is `a` or `b` (`===`),
 * read from the end as the agent's loop reads them (each entry once, its
 * type for each compare): its index; -1 where there is none; `-2 - i`
 * where a read of entry i throws, for the native walk to read and throw.
 */
function lastIndexOfType(branchEntries, to, a, b) {
  let i = to - 1
  try {
    for (; i >= 0; i--) {
      const entry = branchEntries[i]
      if (entry.type === a || entry.type === b) return i
    }
  } catch {
    return -2 - i
  }
  return -1
}

module.exports = { readProjectedFacts, indexOfId, lastIndexOfType }
