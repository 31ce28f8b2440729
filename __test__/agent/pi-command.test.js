'use strict'
// The agent's own `pi` command (the file its package.json names as its
// bin, run by the line's Node 22), with prime-compaction/register imported
// first (`node --import`) as the README runs it, and without: in RPC mode, three prompts to
// the scripted model, then a manual compaction. With the hook the summary
// request is ours (this package's system prompt) and the session file holds
// the compaction it answered; without it, the agent's own. On 1.6 the bin is
// the bundled build, which the hook turns into the unbundled one. The same
// bin on Bun, with the hook preloaded (`bun --preload`), as the agent runs
// there too.

const { LINES } = require('./lines.js')
const { unsupported, notRun } = require('./run.js')
const { runPi, SUMMARY, PROMPTS } = require('./pi-rpc.js')
const { loadReference } = require('../helpers/reference.js')
const { REGISTER } = require('../helpers/fake-agent.js')
const { BUN, SKIP_BUN, bunBinary } = require('../helpers/bun.js')

jest.setTimeout(120_000)

describe.each(LINES.map((line) => [line.version, line]))('the `pi` command of agent %s', (name, line) => {
  if (unsupported(line)) {
    notRun(line, '`pi` command')
    return
  }
  let ours
  let own
  let onBun
  let prompts
  beforeAll(async () => {
    // As the README runs it: `node --import=…/register.mjs <the pi bin>` (NODE_OPTIONS: node-versions.test.js), and `bun --preload=…/register.mjs <the pi bin>`.
    const bun = SKIP_BUN ? undefined : Promise.resolve().then(() => runPi(line, {}, bunBinary(), [`--preload=${REGISTER}`]))
    bun?.catch(() => {})
    ;[ours, own] = await Promise.all([runPi(line, {}, line.node.binary, [`--import=${REGISTER}`]), runPi(line, {})])
    onBun = bun
    prompts = {
      ours: require(line.entry).SUMMARIZATION_SYSTEM_PROMPT,
      agent: (await loadReference(line.line)).SUMMARIZATION_SYSTEM_PROMPT,
    }
  })

  test('the two modules have different system prompts, so a request tells which one made it', () => {
    expect(typeof prompts.ours).toBe('string')
    expect(typeof prompts.agent).toBe('string')
    expect(prompts.ours).not.toBe(prompts.agent)
  })

  test.each([
    ['ours', '', () => ours],
    ['agent', '', () => own],
    ...(SKIP_BUN ? [] : [['ours', ', on Bun', () => onBun]]),
  ])('with %s%s: the compaction ran, its requests carried that module\'s prompt, and the session file holds it', async (whose, where, run) => {
    const { compacted, systemPrompts, compactions, agentTurns, stderr } = await run()
    expect(agentTurns).toBe(PROMPTS)
    expect({ success: compacted.success, error: compacted.error }).toEqual({ success: true, error: undefined })
    expect(compacted.data.summary.startsWith(SUMMARY)).toBe(true)
    expect(systemPrompts.length).toBeGreaterThan(0)
    expect(new Set(systemPrompts)).toEqual(new Set([prompts[whose]]))
    expect(compactions.map((e) => [e.summary, e.firstKeptEntryId])).toEqual([[compacted.data.summary, compacted.data.firstKeptEntryId]])
    expect(stderr).not.toMatch(/PRIME_COMPACTION/)
  })

  if (SKIP_BUN) test.skip(`with ours, on Bun (skipped: ${BUN.reason})`, () => {})

  // The agent does not validate a settings file's compaction.enabled, and
  // 0.78 no compaction setting at all: what a hand-written one gives reaches
  // shouldCompact (before every prompt) and prepareCompaction as it is.
  test('a hand-written settings file (enabled: 0; on 0.78 token settings as strings): every prompt answered and the same compaction as the agent\'s own module', async () => {
    const handWritten = { enabled: 0, ...(line.line === '0.78' ? { reserveTokens: '1000', keepRecentTokens: '100' } : {}) }
    const [withOurs, withOwn] = await Promise.all([runPi(line, {}, line.node.binary, [`--import=${REGISTER}`], handWritten), runPi(line, {}, line.node.binary, [], handWritten)])
    for (const run of [withOurs, withOwn]) {
      expect(run.agentTurns).toBe(PROMPTS)
      expect({ success: run.compacted.success, error: run.compacted.error }).toEqual({ success: true, error: undefined })
    }
    expect(new Set(withOurs.systemPrompts)).toEqual(new Set([prompts.ours]))
    // The cut keepRecentTokens gave, as a place in the session file (ids differ between runs).
    const cut = (run) => ({ at: run.compactions.map((c) => run.entries.findIndex((e) => e.id === c.firstKeptEntryId)), tokensBefore: run.compacted.data.tokensBefore })
    expect(cut(withOurs)).toEqual(cut(withOwn))
    expect(cut(withOurs).at).toHaveLength(1)
    expect(cut(withOurs).at[0]).toBeGreaterThan(0)
  })
})
