'use strict'
// The committed benchmark fixtures (benches/fixtures/agent-<line>/, written by
// scripts/record-agent-fixtures.mjs) still load with each agent line's own
// SessionManager, hold what their flow did, and name no path of the machine
// that recorded them.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { LINES, root } = require('./lines.js')
const { flowsOf } = require('./flows.js')

const MAX_TOTAL_BYTES = 1024 * 1024
const SETTINGS = { enabled: true, reserveTokens: 1500, keepRecentTokens: 1500 }

describe.each(LINES.filter((line) => line.fixtures).map((line) => [line.version, line]))('fixtures of agent %s', (name, line) => {
  const dir = path.join(root, 'benches', 'fixtures', line.fixtures)
  const FLOWS = flowsOf(line)
  const ours = require(`../../agent-${line.line}.js`)
  let SessionManager
  let own
  let tmp
  beforeAll(async () => {
    ;({ SessionManager } = await import(pathToFileURL(path.join(line.packageDir, 'dist', 'core', 'session-manager.js')).href))
    own = await import(pathToFileURL(path.join(line.packageDir, line.moduleDir, 'index.js')).href)
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-fixtures-'))
  })
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  test('one session per flow, 1 MB at most, no recording machine paths', () => {
    const files = fs.readdirSync(dir).sort()
    expect(files).toEqual(FLOWS.map((f) => `${f.name}.jsonl`).sort())
    const texts = files.map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    expect(texts.reduce((n, t) => n + t.length, 0)).toBeLessThan(MAX_TOTAL_BYTES)
    for (const text of texts) {
      expect(text).not.toContain(os.tmpdir())
      expect(text).not.toContain(root)
    }
  })

  test.each(FLOWS.map((f) => [f.name, f]))('%s loads with the agent\'s SessionManager and holds what its flow did', (flowName, flow) => {
    // A copy: opening a file may migrate it in place.
    const file = path.join(tmp, `${flowName}.jsonl`)
    fs.copyFileSync(path.join(dir, `${flowName}.jsonl`), file)
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)
    const session = SessionManager.open(file, tmp)
    const entries = session.getEntries()
    expect(entries).toHaveLength(lines.length - 1)
    expect(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)).toEqual(lines)

    const context = session.buildSessionContext()
    expect(context.messages.length).toBeGreaterThan(1)
    const stored = (flow.expect.compactions || []).filter((c) => !c.aborted).length
    expect(entries.filter((e) => e.type === 'compaction')).toHaveLength(stored)
    expect(entries.filter((e) => e.type === 'branch_summary')).toHaveLength(flow.expect.branchSummaries || 0)
    // Real tool calls with real results.
    const results = entries.filter((e) => e.type === 'message' && e.message.role === 'toolResult')
    expect(results.length).toBeGreaterThan(1)
    expect(results.every((e) => e.message.isError === false)).toBe(true)
    // 1.6 puts the system message it kept with the compaction before the summary.
    if (stored > 0) expect(context.messages.find((m) => m.role !== 'system').role).toBe('compactionSummary')

    // And they plan with ours, in memory and from the file, as with the agent's own module.
    const branch = session.getBranch()
    const want = own.prepareCompaction(branch, SETTINGS)
    expect(ours.prepareCompaction(branch, SETTINGS)).toEqual(want)
    const plan = ours.prepareCompactionFromFileSync(file, { settings: SETTINGS })
    if (want === undefined) {
      expect(plan).toBeUndefined()
      return
    }
    const { firstKeptEntryId, tokensBefore, isSplitTurn, previousSummary, fileOps } = want
    expect(plan).toEqual(
      expect.objectContaining({ firstKeptEntryId, tokensBefore, isSplitTurn, previousSummary, fileOps: { read: [...fileOps.read], written: [...fileOps.written], edited: [...fileOps.edited] } }),
    )
    expect([plan.messagesToSummarizeIds.length, plan.turnPrefixIds.length]).toEqual([want.messagesToSummarize.length, want.turnPrefixMessages.length])
  })
})
