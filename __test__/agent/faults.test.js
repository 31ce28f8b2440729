'use strict'
// Faults inside the real agent (a representative subset; `npm run faults`
// runs them all): the summarizer answers 500, 429 with retry-after, a
// context overflow, a malformed event stream, resets in mid-stream and
// stalls past the timeout; the user aborts; the agent's process is killed
// during a compaction and during a branch summary. Each case runs with the
// agent's own compaction module and with ours, so that whatever the agent
// itself does shows with its own module too. After each, the session file
// must re-open with the agent's own SessionManager, whole, to the context
// it had before the attempt or after the successful one (faults/run.js
// says exactly what is checked).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { LINES } = require('./lines.js')
const { unsupported } = require('./run.js')
const { PARITY_LINES } = require('../helpers/ours.js')
const { runFaults, judge, tally } = require('./faults/run.js')
const { smallCases } = require('./faults/cases.js')

jest.setTimeout(240_000)

const lines = LINES.filter((line) => PARITY_LINES.includes(line.name))

describe.each(lines.map((line) => [line.name, line]))('agent %s under faults', (name, line) => {
  const why = unsupported(line)
  if (why) {
    test.skip(`fault runs not run: ${why}`, () => {})
    return
  }

  const cases = smallCases()
  let base
  let byVariant
  beforeAll(async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), `prime-compaction-faults-${name}-`))
    const [agent, ours] = await Promise.all(['agent', 'ours'].map((variant) => runFaults({ line, variant, cases, base })))
    byVariant = { agent, ours }
    process.stdout.write(`faults ${name}: ${JSON.stringify({ agent: tally(agent), ours: tally(ours) })}\n`)
  })
  afterAll(() => {
    if (base) fs.rmSync(base, { recursive: true, force: true })
  })

  const faulted = (results) => results.filter((r) => r.kind !== 'resume')

  test.each(['agent', 'ours'])('with the %s module: every fault was injected', (variant) => {
    const results = faulted(byVariant[variant])
    expect(results.map((r) => r.name).sort()).toEqual(cases.map((c) => c.name).sort())
    expect(results.filter((r) => !r.injected).map((r) => r.name)).toEqual([])
  })

  test.each(['agent', 'ours'])('with the %s module: no session lost or corrupt, each as before the attempt or after the successful one', (variant) => {
    const results = byVariant[variant]
    expect(results.filter((r) => r.problems.length > 0).map((r) => ({ name: r.name, state: r.state, problems: r.problems }))).toEqual([])
    for (const r of results) expect({ name: r.name, state: r.state }).toEqual({ name: r.name, state: expect.stringMatching(/^(unchanged|added)$/) })
    // Both kinds of ending occur: failures leave the file as it was, successes add their entry.
    expect(results.filter((r) => r.state === 'unchanged').length).toBeGreaterThan(3)
    expect(results.filter((r) => r.state === 'added').length).toBeGreaterThan(1)
  })

  test.each(['agent', 'ours'])('with the %s module: the call after a failed or cancelled attempt succeeds, and killed sessions re-open and compact', (variant) => {
    const results = byVariant[variant]
    const failed = results.filter((r) => r.kind !== 'kill' && r.kind !== 'resume' && r.reported !== 'success')
    expect(failed.length).toBeGreaterThan(3)
    expect(failed.filter((r) => !r.recovered).map((r) => r.name)).toEqual([])
    const resumed = results.filter((r) => r.kind === 'resume')
    expect(resumed.length).toBe(cases.filter((c) => c.kind === 'kill').length)
    expect(resumed.filter((r) => r.reported !== 'success').map((r) => r.name)).toEqual([])
  })

  test('an overflow the summarizer reports once: ours retries smaller and compacts, the agent\'s own module fails', () => {
    const find = (variant) => byVariant[variant].find((r) => r.kind === 'overflow' && r.op === 'compact')
    expect({ reported: find('ours').reported, state: find('ours').state, requests: find('ours').requests }).toEqual({ reported: 'success', state: 'added', requests: 3 })
    expect({ reported: find('agent').reported, state: find('agent').state }).toEqual({ reported: 'failed', state: 'unchanged' })
  })

  test('the verdict itself catches a cut line, a changed line, a second entry, a dangling id and an entry the agent did not report', async () => {
    const { SessionManager } = await import(pathToFileURL(path.join(line.packageDir, 'dist', 'core', 'session-manager.js')).href)
    const dir = fs.mkdtempSync(path.join(base, 'verdict-'))
    const sm = SessionManager.create(dir, dir)
    sm.appendMessage({ role: 'user', content: 'hello', timestamp: 1 })
    sm.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'hi' }], api: 'openai-completions', provider: 'p', model: 'm', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: 2 })
    const firstId = sm.getEntries()[0].id
    const before = fs.readFileSync(sm.getSessionFile(), 'utf8')
    sm.appendCompaction('SUMMARY TEXT', firstId, 10)
    const good = fs.readFileSync(sm.getSessionFile(), 'utf8')
    const added = good.slice(before.length)
    const v = (afterText, reported = 'success') => judge({ op: 'compact', beforeText: before, afterText, reported, live: null, texts: ['SUMMARY TEXT'], SessionManager, scratch: path.join(dir, 'v') })

    expect(v(good)).toEqual({ state: 'added', problems: [] })
    expect(v(before, 'failed')).toEqual({ state: 'unchanged', problems: [] })
    expect(v(before + added.slice(0, 40)).state).toBe('corrupt')
    expect(v(good.slice(0, -1)).state).toBe('corrupt')
    expect(v(before.replace('hello', 'HELLO') + added).state).toBe('lost')
    expect(v(null).state).toBe('lost')
    expect(v(good + added.replace(/"id":"[^"]+"/, '"id":"other01"')).problems).toEqual([expect.stringMatching(/2 entries were written/)])
    expect(v(good.replace(`"firstKeptEntryId":"${firstId}"`, '"firstKeptEntryId":"nowhere"')).state).toBe('corrupt')
    expect(v(good, 'failed').problems).toEqual(['an entry was written, but the agent reported failed'])
    expect(v(before, 'success').problems).toEqual(['the agent reported success, but nothing was written'])
    expect(v(good.replace('SUMMARY TEXT', 'other text')).problems).toEqual(['the new entry holds none of the summaries the model gave'])
  })
})
