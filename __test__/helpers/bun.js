'use strict'
// bun's binary from the devDependency (the release test installs with it,
// node-versions.test.js runs the package on it).

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')

/** `{ bin, version }`: the installed binary, or the platform package's if bun's postinstall did not run; else `{ reason }`. */
function findBun() {
  const exe = process.platform === 'win32' ? 'bun.exe' : 'bun'
  const candidates = [path.join(ROOT, 'node_modules', 'bun', 'bin', 'bun.exe')]
  const oven = path.join(ROOT, 'node_modules', '@oven')
  if (fs.existsSync(oven)) for (const d of fs.readdirSync(oven)) candidates.push(path.join(oven, d, 'bin', exe))
  const failures = []
  for (const candidate of candidates.filter((c) => fs.existsSync(c))) {
    const r = spawnSync(candidate, ['--version'], { encoding: 'utf8', timeout: 20_000 })
    if (r.status === 0) return { bin: candidate, version: r.stdout.trim() }
    failures.push(`${path.relative(ROOT, candidate)}: ${r.error ? r.error.message : (r.stderr || r.stdout).trim().split('\n')[0]}`)
  }
  return { reason: failures.length ? `no bun binary runs on ${process.platform}-${process.arch} (${failures.join('; ')})` : `the bun devDependency installed no binary for ${process.platform}-${process.arch}` }
}

// bun's package ships a binary (an optional dependency) for these hosts: on
// them, none that runs is a broken install, and the bun tests fail rather
// than skip.
const BUN_HOSTS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64', 'freebsd-x64', 'freebsd-arm64']

const BUN = findBun()
const SKIP_BUN = !BUN.bin && !BUN_HOSTS.includes(`${process.platform}-${process.arch}`)

/** The bun binary, or an error saying why there is none (for a test that runs where SKIP_BUN is false). */
function bunBinary() {
  if (!BUN.bin) throw new Error(`${BUN.reason}: run npm install, with optional dependencies`)
  return BUN.bin
}

module.exports = { BUN, SKIP_BUN, bunBinary }
