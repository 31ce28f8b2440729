'use strict'
// Loads the implementation under test ("ours"): the repository's index.js, i.e. require('..').
//
// Set PRIME_COMPACTION_UNDER_TEST=reference to point "ours" at the reference
// implementation instead. That is only useful to check the harness itself
// (every parity test must pass trivially in that mode).

const path = require('node:path')
const { loadReference } = require('./reference')

const PACKAGE_DIR = path.join(__dirname, '..', '..')

async function loadOurs() {
  if (process.env.PRIME_COMPACTION_UNDER_TEST === 'reference') return loadReference()
  try {
    return require(PACKAGE_DIR)
  } catch (err) {
    err.message = `could not load the implementation under test (${PACKAGE_DIR}/index.js): ${err.message}\n` +
      'Build it first (npm run build), or set PRIME_COMPACTION_UNDER_TEST=reference to self-check the harness.'
    throw err
  }
}

function underTestLabel() {
  return process.env.PRIME_COMPACTION_UNDER_TEST === 'reference' ? 'reference (harness self-check)' : 'prime-compaction'
}

module.exports = { loadOurs, underTestLabel, PACKAGE_DIR }
