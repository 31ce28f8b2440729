'use strict'
// The old branch of collectEntriesForBranchSummary, read ahead in one JS
// pass (readEntryPath): from oldLeafId, `session.getEntry(id)`, then that
// entry's `id` and `parentId`, then the parent's entry, and so on, making
// the very calls and reads the native walk makes, in its order. A call from
// native code into getEntry and each property read there is an N-API call
// of 50 to 100 ns; here they are JIT-compiled. The native walk
// (src/branch_summary.rs) takes each step from this form while it follows
// the same path, and reads on natively where the pass stopped, so every
// rule (which ids end the path, what is an error, cycles) stays there.
//
// The pass stops at the first step it cannot hand over as a string: an
// entry whose `id` is not a string (its entry and id are handed over, for
// the native side to judge), or a `parentId` that is not a non-empty
// string (handed over too). It also stops before an id it has looked up
// already (Brent's check, as the native walk keeps it), so a cycle is left
// for the native walk to find, after MAX_STEPS steps, and once the ids read
// reach MAX_ID_UNITS (a quarter of V8's longest string: the next step's
// two ids still fit unless one alone is longer than that). A call that
// throws throws here, at the same call the native walk would have made.
//
// The form is `{ getEntry, entries, others, codes, ids }`: `getEntry` as
// read from the session (the native side reads it no more), `entries[k]`
// what step k's getEntry call gave, two codes per step, and `ids`, the ids
// read as one string (joined, which is far cheaper here than copying their
// units one by one; the native side reads it in one call). The first code
// is about the entry's id: SAME when it is the id looked up (`===`),
// NOT_STRING when it is not a string (then it is the next element of
// `others`), or its length in UTF-16 units (its units come next in `ids`).
// The second is about its parentId: NOT_STRING (it is the next element of
// `others`), NOT_READ (the id was not a string), or its length, its units
// next in `ids`.

const SAME = -3
const NOT_READ = -2
const NOT_STRING = -1
require('./codes.js').checkCodes('entryPath', { SAME, NOT_READ, NOT_STRING })

// Past this many steps, or this many units of ids, the native walk reads on alone.
const MAX_STEPS = 2 ** 24
const MAX_ID_UNITS = 2 ** 27

// The code buffer of the last call, kept for the next (as in
// flat-messages.js: never handed to anyone else, so nothing can detach or
// resize it while the native side reads it in place).
let spareCodes = null
const KEEP_MAX = 2 ** 21

/**
 * The form above for `collectEntriesForBranchSummary(session, oldLeafId,
 * targetId)`, or undefined when the native side must read everything
 * itself: ids it rejects or answers without the session, a session that is
 * not an object. Give it back with releaseEntryPath when the call is done.
 * `maxIdUnits` is MAX_ID_UNITS but in tests, which cross it with short ids.
 */
function readEntryPath(session, oldLeafId, targetId, maxIdUnits = MAX_ID_UNITS) {
  if (typeof oldLeafId !== 'string' || oldLeafId === '') return undefined
  if (typeof targetId !== 'string' && targetId) return undefined
  if (session === null || (typeof session !== 'object' && typeof session !== 'function')) return undefined
  const getEntry = session.getEntry
  if (typeof getEntry !== 'function') return { getEntry }
  let codes = spareCodes ?? new Int32Array(4096)
  spareCodes = null
  const entries = []
  const others = []
  let ids = ''
  let n = 0
  let id = oldLeafId
  // Brent's cycle check over the ids looked up.
  let saved = null
  let power = 1
  let steps = 0
  for (let k = 0; k < MAX_STEPS && id !== saved && ids.length < maxIdUnits; k++) {
    if (++steps === power) {
      saved = id
      power *= 2
      steps = 0
    }
    const entry = Reflect.apply(getEntry, session, [id])
    const own = entry === null || entry === undefined ? undefined : entry.id
    entries.push(entry)
    if (n + 2 > codes.length) codes = grown(codes, n + 2)
    if (typeof own !== 'string') {
      others.push(own)
      codes[n] = NOT_STRING
      codes[n + 1] = NOT_READ
      n += 2
      break
    }
    if (own === id) {
      codes[n] = SAME
    } else {
      codes[n] = own.length
      ids += own
    }
    const parent = entry.parentId
    if (typeof parent !== 'string') {
      others.push(parent)
      codes[n + 1] = NOT_STRING
      n += 2
      break
    }
    codes[n + 1] = parent.length
    n += 2
    ids += parent
    if (parent === '') break
    id = parent
  }
  return { getEntry, entries, others, codes: codes.subarray(0, n), ids, codeBuffer: codes }
}

/** A typed array like `array` with its elements and room for at least `need`. */
function grown(array, need) {
  const bigger = new array.constructor(Math.max(array.length * 2, need))
  bigger.set(array)
  return bigger
}

/** Gives a form's code buffer back for the next call. */
function releaseEntryPath(path) {
  const codes = path?.codeBuffer
  if (codes === undefined) return
  if (codes.length <= KEEP_MAX) spareCodes = codes
}

/** The first `count` entries the pass met, root-first. */
function entriesOfPath(path, count) {
  return path.entries.slice(0, count).reverse()
}

module.exports = { readEntryPath, releaseEntryPath, entriesOfPath }
