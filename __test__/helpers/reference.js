'use strict'
// Loads the reference implementation (@earendil-works/pi-coding-agent@0.78.1)
// by importing its internal ESM modules by file URL. The package's main entry
// does not load on Node 20, but these internal modules do.
//
// Dynamic import() of ESM from a CommonJS Jest test requires Node to be run
// with --experimental-vm-modules (see package.json "test:js").

const path = require('node:path')
const { pathToFileURL } = require('node:url')

const PKG_DIR = path.join(__dirname, '..', '..', 'node_modules', '@earendil-works', 'pi-coding-agent')
const CORE_DIR = path.join(PKG_DIR, 'dist', 'core')

const MODULE_PATHS = {
  compaction: path.join(CORE_DIR, 'compaction', 'index.js'),
  messages: path.join(CORE_DIR, 'messages.js'),
  sessionManager: path.join(CORE_DIR, 'session-manager.js'),
}

let cached = null

/**
 * Returns the reference compaction module (all its exports) merged with
 * `convertToLlm` from messages.js and `{ SessionManager, buildSessionContext,
 * parseSessionEntries, migrateSessionEntries }` from session-manager.js.
 */
async function loadReference() {
  if (cached) return cached
  cached = (async () => {
    // Sequential on purpose: Jest's ESM loader can fail ("request for X is
    // not in cache") when several graphs sharing dependencies load concurrently.
    const compaction = await import(pathToFileURL(MODULE_PATHS.compaction).href)
    const messages = await import(pathToFileURL(MODULE_PATHS.messages).href)
    const sessionManager = await import(pathToFileURL(MODULE_PATHS.sessionManager).href)
    const merged = { ...compaction }
    merged.convertToLlm = messages.convertToLlm
    merged.SessionManager = sessionManager.SessionManager
    merged.buildSessionContext = sessionManager.buildSessionContext
    merged.parseSessionEntries = sessionManager.parseSessionEntries
    merged.migrateSessionEntries = sessionManager.migrateSessionEntries
    return Object.freeze(merged)
  })()
  try {
    return await cached
  } catch (err) {
    cached = null
    throw err
  }
}

module.exports = { loadReference, MODULE_PATHS, PKG_DIR }
