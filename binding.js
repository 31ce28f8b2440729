'use strict'
// Loads this machine's native addon: the binary a checkout builds beside this
// file (`npm run build`), or else the one in the platform package
// `prime-compaction-<platform>`. Its exports are typed in binding.d.ts, which
// `npm run build` generates.

const { platformSuffix, binaryName } = require('./platform.js')

function loadBinding() {
  const suffix = platformSuffix()
  const candidates = [`./${binaryName}.${suffix}.node`, `${binaryName}-${suffix}`]
  const errors = []
  for (const candidate of candidates) {
    try {
      return require(candidate)
    } catch (err) {
      errors.push(`${candidate}: ${err.message.split('\n')[0]}`)
    }
  }
  throw new Error(
    `prime-compaction: no native binary loads on ${process.platform}-${process.arch} (${suffix}).\n` +
      `Tried:\n  ${errors.join('\n  ')}\n` +
      'Build it from source with Rust installed: `npm rebuild prime-compaction` ' +
      '(or, in a checkout, `npm run build`).',
  )
}

module.exports = loadBinding()
