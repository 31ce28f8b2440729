'use strict'
// Loads the implementation under test ("ours"): the package's entry for an
// agent line (`agent-0.78.js`, `agent-1.6.js`), 0.78 unless a line is named.
//
// Set PRIME_COMPACTION_UNDER_TEST=reference to point "ours" at the reference
// implementation of the same line instead. That is only useful to check the
// harness itself (every parity test must pass trivially in that mode).

const path = require('node:path')
const { loadReference } = require('./reference')

const PACKAGE_DIR = path.join(__dirname, '..', '..')

/** The agent lines the package follows, oldest first (the names of its entries). */
const LINES = ['0.78', '1.6']

async function loadOurs(line = '0.78') {
  if (process.env.PRIME_COMPACTION_UNDER_TEST === 'reference') return loadReference(line)
  const entry = path.join(PACKAGE_DIR, `agent-${line}.js`)
  try {
    return require(entry)
  } catch (err) {
    err.message = `could not load the implementation under test (${entry}): ${err.message}\n` +
      'Build it first (npm run build), or set PRIME_COMPACTION_UNDER_TEST=reference to self-check the harness.'
    throw err
  }
}

function underTestLabel() {
  return process.env.PRIME_COMPACTION_UNDER_TEST === 'reference' ? 'reference (harness self-check)' : 'prime-compaction'
}

module.exports = { loadOurs, underTestLabel, PACKAGE_DIR, LINES }
