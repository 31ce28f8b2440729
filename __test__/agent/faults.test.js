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
// says exactly what is checked). The same on Bun, the agent's processes
// run there (ours swapped in by prime-compaction/register's Bun plugin),
// but the stall, which Bun's fetch never times out (cases.js casesOnBun).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { LINES } = require('./lines.js')
const { unsupported, notRun } = require('./run.js')
const { runFaults, judge, tally } = require('./faults/run.js')
const { smallCases, casesOf, casesOnBun } = require('./faults/cases.js')
const { BUN, SKIP_BUN, bunBinary } = require('../helpers/bun.js')

jest.setTimeout(240_000)

/** Where the agent's processes run: the line's Node, and Bun (where bun has a binary for the host). */
const RUNTIMES = [
  { name: 'Node', execPath: (line) => line.node.binary, cases: (cases) => cases },
  { name: 'Bun', execPath: bunBinary, cases: casesOnBun },
].filter((runtime) => runtime.name !== 'Bun' || !SKIP_BUN)

/** The small cases `line` runs on `runtime`. */
const casesFor = (line, runtime) => runtime.cases(casesOf(smallCases(), line))

/**
 * The runs of every line on every runtime, started together (they mostly
 * wait on the scripted model's timers): per line and runtime (`version on
 * runtime`), its folder and a promise of the results, `{ base, run }`.
 */
const runs = {}
beforeAll(() => {
  for (const line of LINES) {
    if (unsupported(line)) continue
    for (const runtime of RUNTIMES) {
      const key = `${line.version} on ${runtime.name}`
      const base = fs.mkdtempSync(path.join(os.tmpdir(), `prime-compaction-faults-${line.version}-${runtime.name}-`))
      const run = Promise.resolve()
        .then(() => runtime.execPath(line))
        .then((execPath) => Promise.all(['agent', 'ours'].map((variant) => runFaults({ line, variant, cases: casesFor(line, runtime), base, execPath }))))
        .then(([agent, ours]) => {
          process.stdout.write(`faults ${key}: ${JSON.stringify({ agent: tally(agent), ours: tally(ours) })}\n`)
          return { agent, ours }
        })
      // Awaited by the line's own tests; until then, a failure must not count as unhandled.
      run.catch(() => {})
      runs[key] = { base, run }
    }
  }
})
afterAll(() => {
  for (const { base } of Object.values(runs)) fs.rmSync(base, { recursive: true, force: true })
})

if (SKIP_BUN) test.skip(`the fault runs on Bun (skipped: ${BUN.reason})`, () => {})

describe.each(LINES.flatMap((line) => RUNTIMES.map((runtime) => [line.version, runtime.name, line, runtime])))('agent %s under faults, on %s', (version, runtimeName, line, runtime) => {
  if (unsupported(line)) {
    notRun(line, 'fault runs')
    return
  }

  const cases = casesFor(line, runtime)
  let base
  let byVariant
  beforeAll(async () => {
    base = runs[`${version} on ${runtimeName}`].base
    byVariant = await runs[`${version} on ${runtimeName}`].run
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
    // Or, when the session has no more to compact than it keeps (1.6), as the agent's own module finds too.
    expect(resumed.filter((r) => r.reported !== 'success' && r.reported !== 'nothing to compact').map((r) => r.name)).toEqual([])
  })

  test('an overflow the summarizer reports once: ours retries smaller and compacts, the agent\'s own module fails', () => {
    const find = (variant) => byVariant[variant].find((r) => r.kind === 'overflow' && r.op === 'compact')
    expect({ reported: find('ours').reported, state: find('ours').state, requests: find('ours').requests }).toEqual({ reported: 'success', state: 'added', requests: 3 })
    expect({ reported: find('agent').reported, state: find('agent').state }).toEqual({ reported: 'failed', state: 'unchanged' })
  })

  test("an answer with no text: ours fails and leaves the session as it was; the agent's own module stores it as the summary", () => {
    const find = (variant) => byVariant[variant].find((r) => r.kind === 'empty-answer')
    expect({ reported: find('ours').reported, state: find('ours').state }).toEqual({ reported: 'failed', state: 'unchanged' })
    expect({ reported: find('agent').reported, state: find('agent').state }).toEqual({ reported: 'success', state: 'added' })
  })

  test(`a reset summary stream with the agent's retries on: ${line.summaryRetries ? 'both modules send it again and compact' : 'both modules fail, as the agent has no summary retries'}`, () => {
    for (const variant of ['agent', 'ours']) {
      const r = byVariant[variant].find((x) => x.kind === 'retried')
      const want = line.summaryRetries ? { reported: 'success', state: 'added' } : { reported: 'failed', state: 'unchanged' }
      expect({ variant, reported: r.reported, state: r.state }).toEqual({ variant, ...want })
    }
  })

  // (the verdict is the parent's, in this Node, whatever runs the agent)
  if (runtimeName === 'Node') test('the verdict itself catches a cut line, a changed line, a second entry, a dangling id and an entry the agent did not report, and tells a turn\'s messages from the attempt\'s entry', async () => {
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

    // A compaction in a turn ('auto'): the turn's messages before and after it are the turn's, not the attempt's.
    const message = (from, id, text) =>
      `${JSON.stringify({ type: 'message', id, parentId: from, timestamp: new Date(3).toISOString(), message: { role: 'user', content: text, timestamp: 3 } })}\n`
    const leafId = JSON.parse(before.trim().split('\n').pop()).id
    const compactionId = JSON.parse(added).id
    const inTurn = (afterText, reported = 'success') => judge({ op: 'auto', beforeText: before, afterText, reported, live: null, texts: ['SUMMARY TEXT'], SessionManager, scratch: path.join(dir, 't') })
    expect(inTurn(good + message(compactionId, 'later01', 'go on'))).toEqual({ state: 'added', problems: [] })
    expect(inTurn(before + message(leafId, 'later01', 'go on'), 'failed')).toEqual({ state: 'unchanged', problems: [] })
    const turnFirst = before + message(leafId, 'early01', 'first') + added.replace(`"parentId":"${leafId}"`, '"parentId":"early01"')
    expect(inTurn(turnFirst + message(compactionId, 'later01', 'go on'))).toEqual({ state: 'added', problems: [] })
    expect(inTurn(good + message(compactionId, 'later01', 'go on') + added.replace(/"id":"[^"]+"/, '"id":"other01"').replace(`"parentId":"${leafId}"`, '"parentId":"later01"')).problems).toEqual([
      expect.stringMatching(/3 entries were written/),
    ])
    expect(inTurn(good + message(compactionId, 'later01', 'go on'), 'failed').problems).toEqual(['an entry was written, but the agent reported failed'])
    // Under a compaction that is not in a turn, a message after it is an entry the attempt wrote.
    expect(v(good + message(compactionId, 'later01', 'go on')).problems).toEqual([expect.stringMatching(/2 entries were written/)])
  })
})
