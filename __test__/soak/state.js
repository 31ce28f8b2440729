'use strict'
// The soak's checkpoint (SOAK_STATE): a run of many hours can be stopped
// and resumed as one run. After each chunk the file holds what the run has
// done (its chunks, tallies, failures, calls compared and time spent); a
// run started with the same file goes on from there. The file also holds
// the run's identity: its seed, size, lines, chunk size and a hash of the
// code it checks (the package, the harness, the references' versions, the
// SOAK_OURS module). A run whose identity differs is refused, so every
// session of the run was checked by the same code.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const REFERENCE_MANIFESTS = [
  path.join(ROOT, 'node_modules', '@earendil-works', 'pi-coding-agent', 'package.json'),
  path.join(ROOT, 'node_modules', 'pi-coding-agent-1.6', 'package.json'),
]

function filesUnder(dir, keep) {
  if (!fs.existsSync(dir)) return []
  const out = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(full, keep))
    else if (keep(entry.name)) out.push(full)
  }
  return out
}

/** A hash of every file the run's checks depend on, and the list it covers. */
function buildHash(oursModule) {
  const rootFiles = fs.readdirSync(ROOT).filter((name) => /\.(js|mjs|node)$/.test(name) || name === 'package.json').map((name) => path.join(ROOT, name))
  const files = [
    ...rootFiles,
    ...filesUnder(path.join(ROOT, 'lib'), (name) => name.endsWith('.js')),
    ...filesUnder(path.join(ROOT, '__test__', 'helpers'), (name) => name.endsWith('.js')),
    ...filesUnder(path.join(ROOT, '__test__', 'soak'), (name) => name.endsWith('.js')),
    ...REFERENCE_MANIFESTS.filter((file) => fs.existsSync(file)),
    ...(oursModule ? [path.resolve(oursModule)] : []),
  ].sort()
  const hash = crypto.createHash('sha256')
  for (const file of files) {
    hash.update(path.relative(ROOT, file))
    hash.update('\0')
    hash.update(fs.readFileSync(file))
    hash.update('\0')
  }
  return { hash: hash.digest('hex'), files: files.length }
}

/** The state a run with this identity starts from: the file's, or a fresh one. */
function loadState(file, identity) {
  const fresh = { identity, done: [], passed: 0, failed: 0, failures: [], counts: {}, elapsedMs: 0, resumes: 0 }
  if (!file || !fs.existsSync(file)) return { state: fresh, resumed: false }
  const state = JSON.parse(fs.readFileSync(file, 'utf8'))
  const differs = Object.keys(identity).filter((key) => JSON.stringify(state.identity && state.identity[key]) !== JSON.stringify(identity[key]))
  if (differs.length) {
    const what = differs.map((key) => `${key}: ${JSON.stringify(state.identity && state.identity[key])} in the file, ${JSON.stringify(identity[key])} now`).join('; ')
    throw new Error(`SOAK_STATE ${file} belongs to another run (${what}); remove it to start a new run`)
  }
  // A finished run started again only reports again.
  if (state.passed + state.failed < identity.sessions) state.resumes += 1
  return { state, resumed: true }
}

/** Writes the state whole or not at all (a kill mid-write leaves the last one). */
function saveState(file, state) {
  if (!file) return
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, JSON.stringify(state))
  fs.renameSync(tmp, file)
}

module.exports = { buildHash, loadState, saveState }
