'use strict'
// Wire constants the agent's LLM context depends on: byte for byte the reference's.
const ours = require('../agent-0.78')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { PKG_DIR } = require('./helpers/reference')

test('summary prefixes and suffixes, and the default settings, equal the reference', async () => {
  const messages = await import(pathToFileURL(path.join(PKG_DIR, 'dist', 'core', 'messages.js')).href)
  const compaction = await import(pathToFileURL(path.join(PKG_DIR, 'dist', 'core', 'compaction', 'index.js')).href)
  for (const name of ['COMPACTION_SUMMARY_PREFIX', 'COMPACTION_SUMMARY_SUFFIX', 'BRANCH_SUMMARY_PREFIX', 'BRANCH_SUMMARY_SUFFIX']) {
    expect([name, ours[name]]).toEqual([name, messages[name]])
  }
  expect(ours.DEFAULT_COMPACTION_SETTINGS).toEqual(compaction.DEFAULT_COMPACTION_SETTINGS)
})
