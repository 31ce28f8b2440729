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
const { FLOWS } = require('./flows.js')
const ours = require('../../agent-0.78')

const MAX_TOTAL_BYTES = 3 * 1024 * 1024

describe.each(LINES.map((line) => [line.name, line]))('fixtures of agent %s', (name, line) => {
  const dir = path.join(root, 'benches', 'fixtures', `agent-${name}`)
  let SessionManager
  let tmp
  beforeAll(async () => {
    ;({ SessionManager } = await import(pathToFileURL(path.join(line.packageDir, 'dist', 'core', 'session-manager.js')).href))
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-fixtures-'))
  })
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  test('one session per flow, a few MB at most, no recording machine paths', () => {
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
    if (stored > 0) expect(context.messages[0].role).toBe('compactionSummary')

    // And they plan with ours as with the agent's own module.
    const plan = ours.prepareCompactionFromFileSync(file, { settings: { enabled: true, reserveTokens: 1500, keepRecentTokens: 1500 } })
    const last = entries[entries.length - 1]
    if (last.type === 'compaction') expect(plan).toBeUndefined()
    else expect(plan).toEqual(expect.objectContaining({ tokensBefore: expect.any(Number) }))
  })
})
