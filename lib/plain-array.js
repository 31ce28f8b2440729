'use strict'

/** Whether `value` is a Proxy (on a Node without util.types.isProxy, never). */
const isProxy = require('node:util').types?.isProxy ?? (() => false)

/**
 * A copy of the array `array` as it is now. A plain array is copied by the
 * engine's own `slice`, which runs no code of the caller's there; a Proxy,
 * a subclass or an array with its own `constructor` element by element,
 * each index read once in order. The engine's copy is the quicker of the
 * two by far on a process's first call, when a JS loop runs unoptimized.
 */
function plainCopy(array) {
  if (!isProxy(array) && Object.getPrototypeOf(array) === Array.prototype && !Object.hasOwn(array, 'constructor')) {
    return Array.prototype.slice.call(array)
  }
  const copy = new Array(array.length)
  for (let i = 0; i < copy.length; i++) copy[i] = array[i]
  return copy
}

module.exports = { isProxy, plainCopy }
