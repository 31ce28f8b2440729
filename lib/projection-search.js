'use strict'
// What 1.6's estimateProjectedContextTokens reads of the agent's session
// projection and branch, in JS: the agent calls it before every model
// request and on every render of its footer, and natively each element and
// property was an N-API call. Nothing is read ahead: the native side
// (usage_is_current_in in crates/core/src/tokens/projected.rs), once it
// knows what it looks for, calls these searches, which make the reads the
// agent's code makes, in its order and as far as it makes them:
// `entryHolding` for the projected entry that holds the last usage's
// message (its loop over `entry.messages.length`), `indexOfId` for the
// first branch entry with that entry's id (its findIndex), and
// `lastIndexOfType` for the last `context_edit` or compaction (its loop
// back). Each leaves to the native side an entry it does not read (a read
// that throws, or `messages` that is not an array).

const { isProxy } = require('./plain-array.js')

// Longer lists are read natively (no dense array is this long).
const MAX_ENTRIES = 2 ** 23

// Where entryHolding puts the start of the messages of an entry it leaves
// to the native side, which reads it right after the call.
const START = new Float64Array(1)

/**
 * `{ entries, start, entryHolding, indexOfId, lastIndexOfType }` for
 * `projection` and `branchEntries` (`entries` the projection's, as read
 * here once), or undefined where the native side reads them all (not
 * arrays, Proxies, too long, `projection.entries` unreadable).
 */
function projectionSearches(projection, branchEntries) {
  if (!Array.isArray(branchEntries) || isProxy(branchEntries) || branchEntries.length > MAX_ENTRIES) return undefined
  if (projection === null || typeof projection !== 'object') return undefined
  let entries
  try {
    entries = projection.entries
  } catch {
    return undefined
  }
  if (!Array.isArray(entries) || isProxy(entries) || entries.length > MAX_ENTRIES) return undefined
  return { entries, start: START, entryHolding, indexOfId, lastIndexOfType }
}

/**
 * Of `entries[from..to)`, whose messages start at message `start`, the
 * first whose messages hold message `index`, `messages.length` read in
 * order as the agent's loop reads it: its index; -1 where none does; `-2 -
 * k` where entry k's `messages` is not an array or a read throws, for the
 * native walk to read, with where its messages start in `at[0]`.
 */
function entryHolding(entries, index, from, to, start, at) {
  let k = from
  try {
    for (; k < to; k++) {
      const messages = entries[k].messages
      if (!Array.isArray(messages)) break
      start += messages.length
      if (index < start) return k
    }
  } catch {
    // Read again natively, and thrown there.
  }
  if (k === to) return -1
  at[0] = start
  return -2 - k
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

module.exports = { projectionSearches, entryHolding, indexOfId, lastIndexOfType }
