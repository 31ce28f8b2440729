'use strict'
// The two paths of collectEntriesForBranchSummary, read ahead in one JS
// pass (readEntryPath): the target's first TARGET_STEPS entries, then the
// old branch from oldLeafId. A step is `session.getEntry(id)`, then that
// entry's `id` and `parentId`, then the parent's entry, and so on, making
// the very calls and reads the native walk makes, in its order. From native
// code, the call into getEntry and each property read would be an N-API
// call of its own; here they are JIT-compiled. The native walk
// (src/branch_summary.rs, the rules in crates/core/src/plan/branch_summary.rs)
// takes each step from this form while it follows the same path, and reads
// on natively where the pass stopped, so every rule (which ids end a path,
// which entry is shared, what is an error, cycles) stays there.
//
// A path's reading stops at the first step the pass cannot hand over as a
// string: an entry whose `id` is not a string (its entry and id are handed
// over, for the native side to judge), or a `parentId` that is not a
// non-empty string (handed over too). It also stops before an id it has
// looked up already (Brent's check, as the native walk keeps it), so a
// cycle is left for the native walk to find. The target's path stops after
// TARGET_STEPS steps, and a step of it that throws is handed over (THREW)
// rather than thrown: the native walk throws it only if the old branch
// never meets the target's steps. The old branch stops where the native
// walk stops it: at the first step looked up by the id of the entry it
// shares with the target's steps. When it ends at its root without
// meeting them, the target's path is read on past its first steps, as the
// native walk then follows it, until an entry whose id is on the old
// branch. A call on the old branch or past the target's first steps that
// throws throws here, at the same call the native walk would have made.
// The pass ends after MAX_STEPS steps, and once the ids read reach
// MAX_ID_UNITS (a quarter of V8's longest string: the next step's two ids
// still fit unless one alone is longer than that); the native walk reads
// on from there.
//
// The form is `{ getEntry, entries, others, codes, ids, targetSteps,
// oldSteps }`: `getEntry` as read from the session (the native side reads
// it no more), `entries[k]` what step k's getEntry call gave (the target's
// `targetSteps` steps first, then the old branch's; with `oldSteps`, the
// old branch's are that many and the target's path read on follows), two
// codes per step, and `ids`, the ids read as one string (joined, which is
// far cheaper here than copying their units one by one; the native side
// reads it in one call). The first code is
// about the entry's id: SAME when it is the id looked up (`===`),
// NOT_STRING when it is not a string (then it is the next element of
// `others`), THREW (what was thrown is the next element of `others`), or
// its length in UTF-16 units (its units come next in `ids`). The second is
// about its parentId: NOT_STRING (it is the next element of `others`),
// NOT_READ (the id was not a string, or the step threw), or its length, its
// units next in `ids`.

const THREW = -4
const SAME = -3
const NOT_READ = -2
const NOT_STRING = -1
const TARGET_STEPS = 64
require('./codes.js').checkCodes('entryPath', { THREW, SAME, NOT_READ, NOT_STRING, TARGET_STEPS })
const { grown, SpareArray } = require('./typed-array.js')

// Past this many steps, or this many units of ids, the native walk reads on alone.
const MAX_STEPS = 2 ** 24
const MAX_ID_UNITS = 2 ** 27

// The code buffer of the last call, kept for the next (as in
// flat-messages.js: never handed to anyone else, so nothing can detach or
// resize it while the native side reads it in place).
let spareCodes = null
const KEEP_MAX = 2 ** 21
// The entries array likewise (its elements emptied when given back): grown
// anew each call, a long branch's was a chain of fresh large arrays.
const spareEntries = new SpareArray(2 ** 18)

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
  const form = { getEntry, entries: spareEntries.take(), others: [], codes: null, ids: '', targetSteps: 0, oldSteps: undefined, codeBuffer: null }
  let codes = spareCodes ?? new Int32Array(4096)
  spareCodes = null
  let n = 0
  const entries = form.entries
  const others = form.others
  let ids = ''
  // The target's first steps, and the ids of their entries.
  const nearTarget = new Set()
  // A bit per id of nearTarget (idBit): an id whose bit is clear is not
  // there, told by three character reads instead of a Set lookup.
  const nearBits = new Int32Array(128)
  const near = (id) => {
    nearTarget.add(id)
    const bit = idBit(id)
    nearBits[bit >> 5] |= 1 << (bit & 31)
  }
  const isNear = (id) => {
    const bit = idBit(id)
    return (nearBits[bit >> 5] & (1 << (bit & 31))) !== 0 && nearTarget.has(id)
  }
  let whole = true
  // The target's walk (its Brent state too), for reading on past its first steps.
  let targetNext = null
  let targetSaved = null
  let targetPower = 1
  let targetSteps = 0
  if (targetId) {
    let id = targetId
    let saved = null
    let power = 1
    let steps = 0
    whole = false
    for (let k = 0; k < TARGET_STEPS; k++) {
      if (id === saved) {
        whole = true
        break
      }
      if (ids.length >= maxIdUnits) break
      if (++steps === power) {
        saved = id
        power *= 2
        steps = 0
      }
      if (n + 2 > codes.length) codes = grown(codes, n + 2)
      let entry
      let own
      let parent
      let threw = false
      try {
        entry = Reflect.apply(getEntry, session, [id])
        own = entry === null || entry === undefined ? undefined : entry.id
        if (typeof own === 'string') parent = entry.parentId
      } catch (error) {
        // Handed over in place of the id, and the walk ends here either way.
        entry = undefined
        own = error
        threw = true
      }
      entries[n >> 1] = entry
      if (threw || typeof own !== 'string') {
        others.push(own)
        codes[n] = threw ? THREW : NOT_STRING
        codes[n + 1] = NOT_READ
        n += 2
        whole = true
        break
      }
      if (own === id) {
        codes[n] = SAME
      } else {
        codes[n] = own.length
        ids += own
      }
      if (typeof parent !== 'string') {
        others.push(parent)
        codes[n + 1] = NOT_STRING
        n += 2
        // A truthy parentId that is not a string is the step's error: its id is not counted.
        if (!parent) near(own)
        whole = true
        break
      }
      near(own)
      codes[n + 1] = parent.length
      n += 2
      ids += parent
      if (parent === '') {
        whole = true
        break
      }
      id = parent
      if (k === TARGET_STEPS - 1) {
        whole = true
        targetNext = id
        targetSaved = saved
        targetPower = power
        targetSteps = steps
      }
    }
    form.targetSteps = n / 2
  }
  // The old branch, unless the target's steps were cut short by the limit:
  // the native walk reads on from there.
  let id = whole ? oldLeafId : null
  let shared = null
  const lookedUpAs = []
  // Brent's cycle check over the ids looked up, each compared with the
  // saved one only when their last units agree (the ids here are never
  // empty: the old leaf's is not, and an empty parentId ends the walk).
  let saved = null
  let savedLast = -1
  let power = 1
  let steps = 0
  // Whether the old branch ended at its root: a parentId null, undefined or empty.
  let rooted = false
  for (let k = form.targetSteps; k < MAX_STEPS && id !== null && (id.charCodeAt(id.length - 1) !== savedLast || id !== saved) && ids.length < maxIdUnits; k++) {
    if (++steps === power) {
      saved = id
      savedLast = id.charCodeAt(id.length - 1)
      power *= 2
      steps = 0
    }
    const entry = Reflect.apply(getEntry, session, [id])
    const own = entry === null || entry === undefined ? undefined : entry.id
    entries[n >> 1] = entry
    if (n + 2 > codes.length) codes = grown(codes, n + 2)
    if (typeof own !== 'string') {
      others.push(own)
      codes[n] = NOT_STRING
      codes[n + 1] = NOT_READ
      n += 2
      break
    }
    // The walk's stop (crates/core/src/plan/branch_summary.rs): the first
    // entry of the target's steps met is the shared one; the walk ends at
    // the first step looked up by its id.
    const met = shared === null && isNear(own)
    if (met) shared = own
    const stop = shared !== null && (id === shared || (met && lookedUpAs.includes(shared)))
    if (own === id) {
      codes[n] = SAME
    } else {
      codes[n] = own.length
      ids += own
      lookedUpAs.push(id)
    }
    const parent = entry.parentId
    if (typeof parent !== 'string') {
      others.push(parent)
      codes[n + 1] = NOT_STRING
      n += 2
      rooted = parent === null || parent === undefined
      break
    }
    codes[n + 1] = parent.length
    n += 2
    ids += parent
    if (parent === '' || stop) {
      rooted = parent === ''
      break
    }
    id = parent
  }
  // The old branch met none of the target's first steps: the native walk
  // follows the target's path on until an entry whose id is on the old
  // branch (when the target lies far below the old leaf, or the two fork
  // near the root). Read ahead too, with that stop.
  if (rooted && shared === null && targetNext !== null) {
    form.oldSteps = n / 2 - form.targetSteps
    const walk = { id: targetNext, saved: targetSaved, power: targetPower, steps: targetSteps }
    n = readTargetOn(session, oldLeafId, form, codes, n, ids, walk, maxIdUnits)
    codes = form.codeBuffer
    ids = form.ids
  }
  form.codes = codes.subarray(0, n)
  form.ids = ids
  form.codeBuffer = codes
  // One entry a step (the kept array may be longer from an earlier call).
  entries.length = n >> 1
  return form
}

/**
 * The target's path past its first steps, until the first entry whose id is
 * one of the old branch's (read from the form's codes and ids): each step's
 * entry and codes added to the form as the old branch's are, `form.ids` and
 * `form.codeBuffer` its ids and codes so far. Returns the codes' count.
 * (A loop of its own: the old branch's loop, which a step here repeats but
 * for its stop, is the one the common case runs, and sharing it slowed it.)
 */
function readTargetOn(session, oldLeafId, form, codes, n, ids, walk, maxIdUnits) {
  const { getEntry, entries, others } = form
  const onOld = oldBranchIds(oldLeafId, form.targetSteps, codes, n, ids)
  let { id, saved, power, steps } = walk
  for (let k = 0; k < MAX_STEPS && id !== saved && ids.length < maxIdUnits; k++) {
    if (++steps === power) {
      saved = id
      power *= 2
      steps = 0
    }
    const entry = Reflect.apply(getEntry, session, [id])
    const own = entry === null || entry === undefined ? undefined : entry.id
    entries[n >> 1] = entry
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
    if (parent === '' || onOld.has(own)) break
    id = parent
  }
  form.codeBuffer = codes
  form.ids = ids
  return n
}

/** The ids of the old branch's entries, from the form's codes and ids so far. */
function oldBranchIds(oldLeafId, targetSteps, codes, n, ids) {
  const out = new Set()
  // Where the old branch's ids begin: after the target's steps' own ids and parents.
  let u = 0
  for (let c = 0; c < targetSteps * 2; c++) if (codes[c] >= 0) u += codes[c]
  let looked = oldLeafId
  for (let c = targetSteps * 2; c < n; c += 2) {
    let own = looked
    if (codes[c] >= 0) {
      own = ids.slice(u, u + codes[c])
      u += codes[c]
    }
    if (codes[c] === NOT_STRING || codes[c] === THREW) break
    out.add(own)
    if (codes[c + 1] < 0) break
    looked = ids.slice(u, u + codes[c + 1])
    u += codes[c + 1]
  }
  return out
}

/** One of 4,096 bits for an id, from three of its characters (0 for ''). */
function idBit(id) {
  const n = id.length
  return (id.charCodeAt(n - 1) * 961 + id.charCodeAt(n >> 1) * 31 + id.charCodeAt(n >> 2)) & 4095
}

/** Gives a form's code buffer back for the next call. */
function releaseEntryPath(path) {
  const codes = path?.codeBuffer
  if (codes === undefined) return
  if (codes.length <= KEEP_MAX) spareCodes = codes
  spareEntries.give(path.entries, path.entries.length)
}

/**
 * The first `count` entries the pass met on the old branch, root-first, in
 * an array of their own (the form's is given back for the next call).
 */
function entriesOfPath(path, count) {
  const from = path.targetSteps
  return path.entries.slice(from, from + Math.min(path.entries.length - from, count)).reverse()
}

module.exports = { readEntryPath, releaseEntryPath, entriesOfPath, idBit }
