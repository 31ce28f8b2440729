'use strict'
// Odd values for a field a JS pass reads ahead, by kind: each a maker given
// the field's plain value. setOdd puts one in place (a getter as an
// accessor, a hole by deleting the field).

const ODD = {
  null: () => null,
  undefined: () => undefined,
  number: () => 7,
  string: () => 'compaction',
  object: () => ({}),
  symbol: () => Symbol('s'),
  getter: (plain) => ({ get: () => plain }),
  throwing: () => ({
    get: () => {
      throw new Error('getter failed')
    },
  }),
}

// More of them: a hole, the plain value behind a Proxy or frozen, a lone surrogate.
const MORE_ODD = {
  ...ODD,
  hole: () => undefined,
  proxy: (plain) => (typeof plain === 'object' && plain !== null ? new Proxy(plain, {}) : plain),
  frozen: (plain) => (typeof plain === 'object' && plain !== null ? Object.freeze(plain) : plain),
  lone: () => 'a\ud800b',
}

function setOdd(target, key, kind, plain) {
  const v = MORE_ODD[kind](plain)
  if (kind === 'hole') delete target[key]
  else if (kind === 'getter' || kind === 'throwing') Object.defineProperty(target, key, { enumerable: true, configurable: true, ...v })
  else target[key] = v
}

module.exports = { ODD, MORE_ODD, setOdd }
