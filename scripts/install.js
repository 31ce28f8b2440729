'use strict'
// `npm install` hook: keeps a prebuilt binary when one loads, otherwise builds
// the addon from source with cargo (Rust must be installed).
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { platformSuffix, binaryName } = require('../platform.js')

const root = path.join(__dirname, '..')
const target = path.join(root, `${binaryName}.${platformSuffix()}.node`)

function loads() {
  try {
    require(path.join(root, 'index.js'))
    return true
  } catch {
    return false
  }
}

if (process.env.PRIME_COMPACTION_SKIP_BUILD) process.exit(0)
if (!process.env.PRIME_COMPACTION_FORCE_BUILD && loads()) process.exit(0)

const libFile = {
  linux: 'libprime_compaction.so',
  darwin: 'libprime_compaction.dylib',
  win32: 'prime_compaction.dll',
}[process.platform] || 'libprime_compaction.so'

console.error(`prime-compaction: no prebuilt binary for ${platformSuffix()}, building from source with cargo`)
try {
  execFileSync('cargo', ['build', '--release', '--lib'], { cwd: root, stdio: 'inherit' })
} catch (err) {
  console.error('prime-compaction: cargo build failed. Install Rust (https://rustup.rs) and run `npm rebuild prime-compaction`.')
  process.exit(1)
}
const targetDir = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
fs.copyFileSync(path.join(targetDir, 'release', libFile), target)
console.error(`prime-compaction: built ${path.basename(target)}`)
