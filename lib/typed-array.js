'use strict'

/** A typed array like `array` with its elements and room for at least `need`. */
function grown(array, need) {
  const bigger = new array.constructor(Math.max(array.length * 2, need))
  bigger.set(array)
  return bigger
}

// Arrays longer than this are not kept between calls.
const SCRATCH_MAX = 2 ** 16

/**
 * Typed arrays lent to the passes of one synchronous call and kept for the
 * next, by name. Each new ArrayBuffer is an allocation, a zeroing and a
 * sweep of its own: prepareCompaction's passes made about a dozen a call.
 * A chunk's arrays are views of these, so the caller hands each chunk over
 * before taking the next.
 */
class Scratch {
  constructor() {
    this.kept = new Map()
  }

  /** An array of `Type` with at least `length` elements, the first `length` zero. */
  zeroed(name, Type, length) {
    return this.any(name, Type, length).fill(0, 0, length)
  }

  /** An array of `Type` with at least `length` elements, of any values. */
  any(name, Type, length) {
    const kept = this.kept.get(name)
    if (kept !== undefined && kept.length >= length) return kept
    const fresh = new Type(length)
    if (length <= SCRATCH_MAX) this.kept.set(name, fresh)
    return fresh
  }

  /** Keeps `array` (grown during a pass) under `name` for the next call. */
  keep(name, array) {
    if (array.length <= SCRATCH_MAX) this.kept.set(name, array)
  }
}

/** No arrays kept: each is new (what a pass without scratch uses). */
const FRESH = {
  zeroed: (name, Type, length) => new Type(length),
  any: (name, Type, length) => new Type(length),
  keep() {},
}

/**
 * A plain array lent to one pass at a time and kept for the next. It holds
 * the caller's values, so it is emptied when given back (none is kept
 * alive); one longer than `max` is not kept. A pass that finds it lent
 * (a call made from a getter during another) takes a new one.
 */
class SpareArray {
  constructor(max) {
    this.max = max
    this.kept = null
  }

  take() {
    const list = this.kept ?? []
    this.kept = null
    return list
  }

  /** Gives `list` back, its first `used` elements emptied (the rest are already). */
  give(list, used) {
    if (list.length > this.max) return
    list.fill(undefined, 0, used)
    this.kept = list
  }
}

module.exports = { grown, Scratch, FRESH, SpareArray }
