'use strict'
// Comparison helpers for the parity suite.
//
// - deepFreeze(obj): freezes an object graph (cycles and shared nodes are fine).
// - findDifference(reference, ours): first structural difference as a readable
//   string ("$.a[3].b: ..."), or null when deep-equal. Strict by design:
//     * primitives compare with Object.is (NaN equals NaN, -0 differs from 0),
//     * Sets and Maps compare by content AND insertion order,
//     * plain objects compare own enumerable keys in the same order, and a key
//       present with value `undefined` differs from an absent key,
//     * kinds are compared by their [[Class]] tag (not prototype identity), so
//       values coming from another realm (a native addon loaded outside Jest's
//       sandbox) compare equal to same-shaped values from this realm.
// - deepEqual(a, b): boolean form of findDifference.
// - snapshot(value): a JSON-friendly tree that keeps what JSON would lose
//   (Set/Map order, undefined, NaN, -0, functions) for printing in messages.
// - collectObjects(value): Set of every object reachable from value.
// - findIdentityDifference(reference, ours, inputObjects): where the reference
//   returned one of the caller's objects, ours must return the very same
//   object; where the reference built a new object, ours must not hand out an
//   input object.

function tagOf(value) {
  return Object.prototype.toString.call(value).slice(8, -1)
}

function isArrayBufferView(value) {
  return ArrayBuffer.isView(value)
}

function ownKeysForFreeze(obj) {
  return Reflect.ownKeys(obj)
}

/**
 * Objects deepFreeze froze with everything reachable from them, where that
 * held no Set, Map or typed array (which stay mutable when frozen): such a
 * graph cannot change again, so a later call skips it.
 */
const frozenGraphs = new WeakSet()

/** Recursively freezes obj (own string and symbol keys, accessors' values are not touched). */
function deepFreeze(obj) {
  const seen = new Set()
  const mutable = freezeGraph(obj, seen)
  if (!mutable) for (const o of seen) frozenGraphs.add(o)
  return obj
}

/** Freezes what obj reaches; true when that holds a Set, Map or typed array. */
function freezeGraph(obj, seen) {
  if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function')) return false
  if (seen.has(obj) || frozenGraphs.has(obj)) return false
  seen.add(obj)
  let mutable = false
  for (const key of ownKeysForFreeze(obj)) {
    const desc = Object.getOwnPropertyDescriptor(obj, key)
    if (desc && 'value' in desc) mutable = freezeGraph(desc.value, seen) || mutable
  }
  if (obj instanceof Set || tagOf(obj) === 'Set') {
    mutable = true
    for (const v of obj) freezeGraph(v, seen)
  } else if (obj instanceof Map || tagOf(obj) === 'Map') {
    mutable = true
    for (const [k, v] of obj) {
      freezeGraph(k, seen)
      freezeGraph(v, seen)
    }
  }
  if (isArrayBufferView(obj)) {
    // Typed arrays with elements cannot be frozen; prevent extensions at least.
    try {
      Object.preventExtensions(obj)
    } catch {
      /* ignore */
    }
    return true
  }
  Object.freeze(obj)
  return mutable
}

/** Every object (and function) reachable from value through own properties and Set/Map contents. */
function collectObjects(value, out = new Set()) {
  const stack = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) continue
    if (out.has(v)) continue
    out.add(v)
    for (const key of Reflect.ownKeys(v)) {
      const desc = Object.getOwnPropertyDescriptor(v, key)
      if (desc && 'value' in desc) stack.push(desc.value)
    }
    const tag = tagOf(v)
    if (tag === 'Set') for (const x of v) stack.push(x)
    else if (tag === 'Map') for (const [k, x] of v) stack.push(k, x)
  }
  return out
}

function describe(value) {
  if (typeof value === 'string') {
    if (value.length > 80) return `${JSON.stringify(value.slice(0, 60))}… (string of length ${value.length})`
    return JSON.stringify(value)
  }
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'undefined') return 'undefined'
  if (typeof value === 'symbol') return value.toString()
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`
  if (value === null) return 'null'
  const tag = tagOf(value)
  if (tag === 'Array') return `Array(${value.length})`
  if (tag === 'Set') return `Set(${value.size})`
  if (tag === 'Map') return `Map(${value.size})`
  try {
    const s = JSON.stringify(snapshot(value))
    return s.length > 200 ? `${s.slice(0, 200)}…` : s
  } catch {
    return `[${tag}]`
  }
}

function propPath(path, key) {
  if (typeof key === 'symbol') return `${path}[${key.toString()}]`
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return `${path}.${key}`
  return `${path}[${JSON.stringify(key)}]`
}

function isPlainObjectProto(proto) {
  if (proto === null) return 'null-prototype'
  // An "Object" from any realm: its prototype's prototype is null and it has a constructor named Object.
  if (Object.getPrototypeOf(proto) === null && proto.constructor && proto.constructor.name === 'Object') return 'plain'
  return 'other'
}

/**
 * First difference between reference value `a` and ours `b`, as a string, or null.
 * options.keyOrder (default true): require own enumerable keys in the same order.
 * options.labels (default ['reference', 'ours']): names of the two sides in messages.
 */
function findDifference(a, b, options = {}, path = '$') {
  const keyOrder = options.keyOrder !== false
  const [A, B] = options.labels || ['reference', 'ours']
  const d = differenceAt(a, b, A, B, keyOrder, new Map())
  if (d === null) return null
  let at = path
  for (let i = d.steps.length - 1; i >= 0; i--) at = d.steps[i](at)
  return at + d.rest
}

const index = (i) => (path) => `${path}[${i}]`
const named = (key) => (path) => propPath(path, key)
const labelled = (label) => (path) => `${path}<${label}>`
const found = (rest, steps = []) => ({ steps, rest })
/** d found one level down, at step. */
function inner(d, step) {
  d.steps.push(step)
  return d
}

/**
 * The difference as { steps, rest }: the message is rest after the path,
 * and steps (innermost first) build the path from the root's. Nothing is
 * formatted where a and b agree.
 */
function differenceAt(a, b, A, B, keyOrder, seen) {
  if (Object.is(a, b)) return null
  const ta = typeof a
  const tb = typeof b
  if (ta !== tb || a === null || b === null || (ta !== 'object' && ta !== 'function')) {
    return found(`: ${A} ${describe(a)}, ${B} ${describe(b)}`)
  }
  if (ta === 'function') return found(`: different functions (${A} ${describe(a)}, ${B} ${describe(b)})`)

  // Cycle / shared-node guard.
  let seenFor = seen.get(a)
  if (seenFor && seenFor.has(b)) return null
  if (!seenFor) {
    seenFor = new Set()
    seen.set(a, seenFor)
  }
  seenFor.add(b)

  const tagA = tagOf(a)
  const tagB = tagOf(b)
  if (tagA !== tagB) return found(`: ${A} is ${tagA} ${describe(a)}, ${B} is ${tagB} ${describe(b)}`)

  if (tagA === 'Array') {
    if (a.length !== b.length) return found(`: array length: ${A} ${a.length}, ${B} ${b.length}`)
    for (let i = 0; i < a.length; i++) {
      const hasA = i in a
      const hasB = i in b
      if (hasA !== hasB) return found(`: hole in ${hasA ? B : A} only`, [index(i)])
      const d = differenceAt(a[i], b[i], A, B, keyOrder, seen)
      if (d) return inner(d, index(i))
    }
    return null
  }
  if (tagA === 'Set') {
    if (a.size !== b.size) {
      return found(`: Set size: ${A} ${a.size} ${describe([...a])}, ${B} ${b.size} ${describe([...b])}`)
    }
    const ea = [...a]
    const eb = [...b]
    for (let i = 0; i < ea.length; i++) {
      const d = differenceAt(ea[i], eb[i], A, B, keyOrder, seen)
      if (d) {
        d.rest += `\n  (Set contents/insertion order: ${A} ${describe(ea)}, ${B} ${describe(eb)})`
        return inner(d, labelled(`set #${i}`))
      }
    }
    return null
  }
  if (tagA === 'Map') {
    if (a.size !== b.size) return found(`: Map size: ${A} ${a.size}, ${B} ${b.size}`)
    const ea = [...a]
    const eb = [...b]
    for (let i = 0; i < ea.length; i++) {
      const dk = differenceAt(ea[i][0], eb[i][0], A, B, keyOrder, seen)
      if (dk) return inner(dk, labelled(`map key #${i}`))
      const dv = differenceAt(ea[i][1], eb[i][1], A, B, keyOrder, seen)
      if (dv) return inner(dv, labelled(`map value #${i}`))
    }
    return null
  }
  if (tagA === 'Date') {
    if (!Object.is(a.getTime(), b.getTime())) return found(`: Date: ${A} ${a.getTime()}, ${B} ${b.getTime()}`)
    return null
  }
  if (isArrayBufferView(a)) {
    if (a.length !== b.length) return found(': typed array length differs')
    for (let i = 0; i < a.length; i++) {
      if (!Object.is(a[i], b[i])) return found(`: ${A} ${a[i]}, ${B} ${b[i]}`, [index(i)])
    }
    return null
  }

  const kindA = isPlainObjectProto(Object.getPrototypeOf(a))
  const kindB = isPlainObjectProto(Object.getPrototypeOf(b))
  if (kindA !== kindB) return found(`: ${A} is a ${kindA} object, ${B} is a ${kindB} object`)
  if (kindA === 'other' && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) {
    const na = Object.getPrototypeOf(a).constructor?.name
    const nb = Object.getPrototypeOf(b).constructor?.name
    if (na !== nb) return found(`: prototype differs (${A} ${na}, ${B} ${nb})`)
  }

  const ka = Object.keys(a)
  const kb = Object.keys(b)
  let sameKeys = ka.length === kb.length
  for (let i = 0; sameKeys && i < ka.length; i++) sameKeys = ka[i] === kb[i]
  if (!sameKeys) {
    const setB = new Set(kb)
    const setA = new Set(ka)
    for (const k of ka) {
      if (!setB.has(k)) return found(`: key present in ${A} (value ${describe(a[k])}), missing in ${B}`, [named(k)])
    }
    for (const k of kb) {
      if (!setA.has(k)) return found(`: key present in ${B} (value ${describe(b[k])}), missing in ${A}`, [named(k)])
    }
  }
  for (const k of ka) {
    const d = differenceAt(a[k], b[k], A, B, keyOrder, seen)
    if (d) return inner(d, named(k))
  }
  if (keyOrder && !sameKeys) {
    for (let i = 0; i < ka.length; i++) {
      if (ka[i] !== kb[i]) {
        return found(`: same keys, different order: ${A} [${ka.join(', ')}], ${B} [${kb.join(', ')}]`)
      }
    }
  }
  return null
}

function deepEqual(a, b, options) {
  return findDifference(a, b, options) === null
}

/** JSON-friendly tree keeping Set/Map order, undefined, NaN, ±Infinity, -0 and functions visible. */
function snapshot(value, seen = new Map()) {
  if (value === undefined) return { $undefined: true }
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return { $number: 'NaN' }
    if (Object.is(value, -0)) return { $number: '-0' }
    if (!Number.isFinite(value)) return { $number: String(value) }
    return value
  }
  if (typeof value === 'bigint') return { $bigint: String(value) }
  if (typeof value === 'symbol') return { $symbol: value.toString() }
  if (typeof value === 'function') return { $function: value.name || 'anonymous' }
  if (value === null || typeof value !== 'object') return value
  if (seen.has(value)) return { $ref: seen.get(value) }
  seen.set(value, seen.size)
  const tag = tagOf(value)
  if (tag === 'Array') {
    const out = []
    for (let i = 0; i < value.length; i++) out.push(i in value ? snapshot(value[i], seen) : { $hole: true })
    return out
  }
  if (tag === 'Set') return { $set: [...value].map((v) => snapshot(v, seen)) }
  if (tag === 'Map') return { $map: [...value].map(([k, v]) => [snapshot(k, seen), snapshot(v, seen)]) }
  if (tag === 'Date') return { $date: snapshot(value.getTime(), seen) }
  const out = {}
  for (const k of Object.keys(value)) {
    // Read through descriptors: never run getters (they may throw or have effects).
    const d = Object.getOwnPropertyDescriptor(value, k)
    out[k] = d && 'value' in d ? snapshot(d.value, seen) : { $accessor: true }
  }
  if (typeof value.toJSON === 'function' && !Object.prototype.hasOwnProperty.call(value, 'toJSON')) {
    out.$class = tag
  }
  return out
}

/**
 * Identity parity. Walks the reference result and ours in parallel (call after
 * findDifference returned null). For every object node of the reference result:
 *   - if it is one of the caller's objects (in inputObjects), ours must return the same object;
 *   - otherwise ours must not return one of the caller's objects there.
 * Returns a description of the first violation, or null.
 */
function findIdentityDifference(a, b, inputObjects, path = '$', seen = new Set()) {
  if (a === null || (typeof a !== 'object' && typeof a !== 'function')) return null
  if (b === null || (typeof b !== 'object' && typeof b !== 'function')) return null
  if (inputObjects.has(a)) {
    if (a !== b) {
      return `${path}: reference returns the caller's own object, ours returns ${
        inputObjects.has(b) ? 'a different caller object' : 'a copy'
      } (${describe(a)})`
    }
    return null
  }
  if (inputObjects.has(b)) {
    return `${path}: reference returns a new object, ours returns one of the caller's objects (${describe(b)})`
  }
  if (seen.has(a)) return null
  seen.add(a)
  const tag = tagOf(a)
  if (tag === 'Array') {
    for (let i = 0; i < a.length; i++) {
      const d = findIdentityDifference(a[i], b[i], inputObjects, `${path}[${i}]`, seen)
      if (d) return d
    }
    return null
  }
  if (tag === 'Set' || tag === 'Map') {
    const ea = [...a]
    const eb = [...b]
    for (let i = 0; i < ea.length; i++) {
      const d = findIdentityDifference(ea[i], eb[i], inputObjects, `${path}<#${i}>`, seen)
      if (d) return d
    }
    return null
  }
  for (const k of Object.keys(a)) {
    const d = findIdentityDifference(a[k], b[k], inputObjects, propPath(path, k), seen)
    if (d) return d
  }
  return null
}

/**
 * A structural fingerprint of everything reachable from value: every own key
 * (string and symbol, enumerable or not) with its attributes, extensibility,
 * frozen state, Set/Map contents in order and Date time values. Comparing
 * fingerprints taken before and after a call detects any mutation of the inputs.
 */
function fingerprint(value) {
  const ids = new Map()
  const enc = (v) => {
    if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : Object.is(v, -0) ? '-0' : v
    if (typeof v === 'symbol') return { symbol: v.toString() }
    if (typeof v === 'undefined') return { undefined: true }
    if (typeof v === 'bigint') return { bigint: String(v) }
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return v
    if (ids.has(v)) return { ref: ids.get(v) }
    const id = ids.size
    ids.set(v, id)
    const node = { id, tag: tagOf(v), extensible: Object.isExtensible(v), frozen: Object.isFrozen(v), proto: Object.getPrototypeOf(v) === null ? 'null' : 'object', props: {} }
    if (typeof v === 'function') node.fn = v
    for (const key of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, key)
      const k = typeof key === 'symbol' ? `@@${key.toString()}` : key
      const attrs = `${d.enumerable ? 'e' : '-'}${'value' in d ? (d.writable ? 'w' : '-') : 'a'}${d.configurable ? 'c' : '-'}`
      Object.defineProperty(node.props, k, {
        value: 'value' in d ? { attrs, v: enc(d.value) } : { attrs, get: d.get || null, set: d.set || null },
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    if (node.tag === 'Set') node.set = [...v].map(enc)
    if (node.tag === 'Map') node.map = [...v].map(([a, b]) => [enc(a), enc(b)])
    if (node.tag === 'Date') node.date = enc(v.getTime())
    return node
  }
  return enc(value)
}

module.exports = {
  fingerprint,
  deepFreeze,
  collectObjects,
  findDifference,
  deepEqual,
  snapshot,
  findIdentityDifference,
  describeValue: describe,
  tagOf,
}
