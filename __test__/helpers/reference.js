'use strict'
// Loads the reference implementation of an agent line, the agent's own
// compaction module: @earendil-works/pi-coding-agent@0.78.1 for "0.78", and
// 1.6.0 (the devDependency alias pi-coding-agent-1.6) for "1.6". Its internal
// ESM modules are imported by file URL: the packages' main entries do not
// load on Node 20, but these internal modules do.
//
// Dynamic import() of ESM from a CommonJS Jest test requires Node to be run
// with --experimental-vm-modules (see package.json "test:js").

const path = require('node:path')
const { pathToFileURL } = require('node:url')

const MODULES = path.join(__dirname, '..', '..', 'node_modules')
const PKG_DIRS = {
  '0.78': path.join(MODULES, '@earendil-works', 'pi-coding-agent'),
  '1.6': path.join(MODULES, 'pi-coding-agent-1.6'),
}
/** The 0.78.1 package (kept for the tests written before the 1.6 line). */
const PKG_DIR = PKG_DIRS['0.78']

function modulePaths(line) {
  const pkg = PKG_DIRS[line]
  if (!pkg) throw new TypeError(`no reference for agent line ${JSON.stringify(line)}`)
  const core = path.join(pkg, 'dist', 'core')
  return {
    compaction: path.join(core, 'compaction', 'index.js'),
    messages: path.join(core, 'messages.js'),
    sessionManager: path.join(core, 'session-manager.js'),
  }
}
const MODULE_PATHS = modulePaths('0.78')

const cached = new Map()

/**
 * Returns the reference compaction module of `line` (all its exports) merged
 * with `convertToLlm`, `bashExecutionToText` and the three `create*Message`
 * functions from messages.js and `{ SessionManager,
 * buildSessionContext, parseSessionEntries, migrateSessionEntries }` (1.6
 * also `buildSessionProjection`) from session-manager.js.
 */
async function loadReference(line = '0.78') {
  if (cached.has(line)) return cached.get(line)
  const paths = modulePaths(line)
  const loading = (async () => {
    // Sequential on purpose: Jest's ESM loader can fail ("request for X is
    // not in cache") when several graphs sharing dependencies load concurrently.
    const compaction = await import(pathToFileURL(paths.compaction).href)
    const messages = await import(pathToFileURL(paths.messages).href)
    const sessionManager = await import(pathToFileURL(paths.sessionManager).href)
    const merged = { ...compaction }
    merged.convertToLlm = messages.convertToLlm
    for (const name of ['bashExecutionToText', 'createBranchSummaryMessage', 'createCompactionSummaryMessage', 'createCustomMessage']) merged[name] = messages[name]
    merged.SessionManager = sessionManager.SessionManager
    merged.buildSessionContext = sessionManager.buildSessionContext
    merged.parseSessionEntries = sessionManager.parseSessionEntries
    merged.migrateSessionEntries = sessionManager.migrateSessionEntries
    if (sessionManager.buildSessionProjection) merged.buildSessionProjection = sessionManager.buildSessionProjection
    return Object.freeze(merged)
  })()
  cached.set(line, loading)
  try {
    return await loading
  } catch (err) {
    cached.delete(line)
    throw err
  }
}

module.exports = { loadReference, MODULE_PATHS, PKG_DIR, PKG_DIRS, modulePaths }
