'use strict'

/** A typed array like `array` with its elements and room for at least `need`. */
function grown(array, need) {
  const bigger = new array.constructor(Math.max(array.length * 2, need))
  bigger.set(array)
  return bigger
}

module.exports = { grown }
