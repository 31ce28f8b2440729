'use strict'
// Wire constants the agent's LLM context depends on: byte for byte the reference's, on each line; and the spec's default settings.
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

  test("the default settings are the spec's, and compaction triggers only above the window less reserveTokens", () => {
    const ours = require(`../agent-${line}`)
    expect(ours.DEFAULT_COMPACTION_SETTINGS).toStrictEqual({ enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 })
    const settings = ours.DEFAULT_COMPACTION_SETTINGS
    // contextTokens > contextWindow - reserveTokens, strictly.
    expect(ours.shouldCompact(128000 - 16384, 128000, settings)).toBe(false)
    expect(ours.shouldCompact(128000 - 16384 + 1, 128000, settings)).toBe(true)
    expect(ours.shouldCompact(1e9, 128000, { ...settings, enabled: false })).toBe(false)
  })
})

test("each line's DEFAULT_COMPACTION_SETTINGS is its own object, as each agent's module has its own", async () => {
  const lines = Object.keys(PKG_DIRS)
  const refs = await Promise.all(lines.map((line) => import(pathToFileURL(path.join(PKG_DIRS[line], 'dist', 'core', 'compaction', 'index.js')).href)))
  const ours = lines.map((line) => require(`../agent-${line}`))
  expect(new Set(refs.map((r) => r.DEFAULT_COMPACTION_SETTINGS)).size).toBe(lines.length)
  expect(new Set(ours.map((o) => o.DEFAULT_COMPACTION_SETTINGS)).size).toBe(lines.length)
  // The package's main entry is its newest line, the very module.
  expect(require('..').DEFAULT_COMPACTION_SETTINGS).toBe(require('../agent-1.6').DEFAULT_COMPACTION_SETTINGS)
  const [first, ...others] = ours
  const before = others.map((o) => ({ ...o.DEFAULT_COMPACTION_SETTINGS }))
  const saved = first.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens
  try {
    first.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens = 150
    expect(others.map((o) => ({ ...o.DEFAULT_COMPACTION_SETTINGS }))).toEqual(before)
  } finally {
    first.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens = saved
  }
})
