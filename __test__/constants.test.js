'use strict'
// Wire constants the agent's LLM context depends on: byte for byte the reference's, on each line.
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { PKG_DIRS } = require('./helpers/reference')

describe.each(Object.keys(PKG_DIRS))('agent line %s', (line) => {
  test('summary prefixes and suffixes, and the default settings, equal the reference', async () => {
    const ours = require(`../agent-${line}`)
    const messages = await import(pathToFileURL(path.join(PKG_DIRS[line], 'dist', 'core', 'messages.js')).href)
    const compaction = await import(pathToFileURL(path.join(PKG_DIRS[line], 'dist', 'core', 'compaction', 'index.js')).href)
    for (const name of ['COMPACTION_SUMMARY_PREFIX', 'COMPACTION_SUMMARY_SUFFIX', 'BRANCH_SUMMARY_PREFIX', 'BRANCH_SUMMARY_SUFFIX']) {
      expect([name, ours[name]]).toEqual([name, messages[name]])
    }
    expect(ours.DEFAULT_COMPACTION_SETTINGS).toEqual(compaction.DEFAULT_COMPACTION_SETTINGS)
  })
})
