'use strict'
// Loads this machine's native addon: the binary a checkout builds beside this
// file (`npm run build`), or else the one in the platform package that npm,
// pnpm or bun installs from the main package's optionalDependencies. Its
// exports are typed in binding.d.ts, which `npm run build` generates.

const { platformSuffix, binaryName } = require('./platform.js')
const { version } = require('./package.json')

function loadBinding() {
  const suffix = platformSuffix()
  const local = `./${binaryName}.${suffix}.node`
  const platformPackage = `${binaryName}-${suffix}`
  const errors = []
  for (const candidate of [local, platformPackage]) {
    try {
      return require(candidate)
    } catch (err) {
      errors.push(`${candidate}: ${err.message.split('\n')[0]}`)
    }
  }
  throw new Error(
    `prime-compaction: no native binary loads on ${suffix}.\n` +
      `It looked for the package ${platformPackage}@${version} (the prebuilt binary, an optional dependency ` +
      `that npm, pnpm and bun install unless optional dependencies are omitted) and for ${local} (a build from source):\n` +
      `  ${errors.join('\n  ')}\n` +
      `Install it with \`npm i ${platformPackage}@${version}\`, or build one from source with Rust: ` +
      '`npm run build` in a checkout of prime-compaction (README: "Building from source").',
  )
}

module.exports = loadBinding()
