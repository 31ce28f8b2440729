'use strict'
// What each line's summarizers resolve or reject with, against the agent's
// own module of that line: result keys in order, usage (the answer's own
// object, or combineUsage's sum of a split turn), no estimatedTokensAfter,
// failure messages (errors, length stops, tool calls, per part), the
// exports each line has, getSummarizationFailure.

const { pathToFileURL } = require('node:url')
const { loadReference, modulePaths } = require('./helpers/reference')
const { loadOurs, LINES } = require('./helpers/ours')
const { MODEL, usage, text, failure, scripted, splitPreparation, plainPreparation, branchEntries } = require('./helpers/summary')

/** Keys of an object and of its object values, recursively, in order. */
function keysOf(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return typeof value
  return Object.fromEntries(Object.keys(value).map((k) => [k, keysOf(value[k])]))
}

async function outcome(promise) {
  try {
    return { resolved: await promise }
  } catch (err) {
    return { rejected: err.message }
  }
}

const toolCall = { role: 'assistant', content: [{ type: 'toolCall', id: 't', name: 'read', arguments: {} }], stopReason: 'toolUse', usage: usage(1, 1) }
const lengthStop = text('half a summ', { stopReason: 'length' })

describe.each(LINES)('agent line %s: summary results', (line) => {
  let ref
  let ours
  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  const compactOf = (impl, answers, prep = plainPreparation) => impl.compact(prep(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted(answers))

  test('the result keys are the agent\'s, in its order; no estimatedTokensAfter', async () => {
    for (const prep of [plainPreparation, splitPreparation]) {
      const a = await compactOf(ref, [text('H'), text('P')], prep)
      const b = await compactOf(ours, [text('H'), text('P')], prep)
      expect(Object.keys(b)).toEqual(Object.keys(a))
      expect(Object.keys(b)).toEqual(line === '0.78' ? ['summary', 'firstKeptEntryId', 'tokensBefore', 'details'] : ['summary', 'firstKeptEntryId', 'tokensBefore', 'usage', 'details'])
      expect('estimatedTokensAfter' in b).toBe(false)
      expect(b).toEqual(a)
    }
  })

  test('a preparation without tokensBefore gives a result whose tokensBefore is undefined, as the agent\'s', async () => {
    const withoutTokens = (m) => {
      const { tokensBefore, ...rest } = plainPreparation(m)
      return rest
    }
    const a = await compactOf(ref, [text('H')], withoutTokens)
    const b = await compactOf(ours, [text('H')], withoutTokens)
    expect(Object.keys(b)).toEqual(Object.keys(a))
    expect([a.tokensBefore, b.tokensBefore]).toEqual([undefined, undefined])
  })

  test('branch summary results', async () => {
    const a = await ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([text('## Goal\nB')]) })
    const b = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([text('## Goal\nB')]) })
    expect(Object.keys(b)).toEqual(Object.keys(a))
    expect({ ...b, summary: undefined }).toEqual({ ...a, summary: undefined })
  })

  test.each([
    ['an error', [failure('Invalid API key')]],
    ['an error without a message', [{ ...failure(''), errorMessage: undefined }]],
    ['a turn-prefix error', [text('H'), failure('bad gateway')], splitPreparation],
    ['a turn-prefix error without a message', [text('H'), failure('')], splitPreparation],
    ['an error whose message is not a string', [{ ...failure(''), errorMessage: 503 }]],
    ['an error whose message is truthy but writes as ""', [{ ...failure(''), errorMessage: [] }]],
    ['a turn-prefix error whose message writes as ""', [text('H'), { ...failure(''), errorMessage: [] }], splitPreparation],
    ['an error whose message is 0n, falsy', [{ ...failure(''), errorMessage: 0n }]],
  ])('compact() rejects %s as the agent does', async (_, answers, prep = plainPreparation) => {
    const a = await outcome(compactOf(ref, [...answers], prep))
    const b = await outcome(compactOf(ours, [...answers], prep))
    expect(b.rejected).toEqual(expect.any(String))
    expect(b).toEqual(a)
  })

  test.each([
    ['an error', failure('quota exceeded')],
    ['an error without a message', { ...failure(''), errorMessage: undefined }],
    ['an aborted answer', { ...text(''), stopReason: 'aborted' }],
  ])('generateBranchSummary() resolves %s as the agent does', async (_, answer) => {
    const a = await ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
    const b = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
    expect(b).toEqual(a)
  })

  test('text blocks are joined as the agent joins them: a missing or null text is ""', async () => {
    const answer = (...texts) => ({ ...text(''), content: texts.map((t) => (t === 'none' ? { type: 'text' } : { type: 'text', text: t })) })
    for (const answers of [[answer('## Goal', null, 'B')], [answer('none', '## Goal')], [answer('## Goal', 42)]]) {
      const a = await compactOf(ref, answers)
      const b = await compactOf(ours, answers)
      expect(b.summary).toBe(a.summary)
      expect(b.summary).not.toMatch(/null|undefined/)
      const x = await ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted(answers) })
      const y = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted(answers) })
      expect(y.summary).toBe(x.summary)
    }
    // A null block: the agents throw reading its type; here a TypeError names it.
    const nullBlock = [{ ...text('## Goal'), content: [{ type: 'text', text: '## Goal' }, null] }]
    for (const impl of [ref, ours]) {
      const got = await compactOf(impl, nullBlock).then(() => 'resolved', (err) => err.name)
      expect(got).toBe('TypeError')
    }
    await expect(compactOf(ours, nullBlock)).rejects.toThrow('response.content[1]: expected a content block, got null')
    // The content of an error answer is not read (its message is the failure), and a hole is passed over.
    const failed = [{ ...failure('bad gateway'), content: [null] }]
    const holed = [{ ...text(''), content: [, { type: 'text', text: '## Goal' }] }] // eslint-disable-line no-sparse-arrays
    for (const answers of [failed, holed]) {
      expect(await outcome(compactOf(ours, answers))).toEqual(await outcome(compactOf(ref, answers)))
      const x = await ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted(answers) })
      const y = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted(answers) })
      expect(y).toEqual(x)
    }
    // What a getter of the answer throws comes through as it is, from both summarizers, as from the agent's.
    class Refused extends Error {}
    for (const thrown of [new Refused('no'), null, 'a string']) {
      const answers = () => [Object.defineProperty({ ...text('## Goal') }, 'content', { get: () => { throw thrown } })]
      const caught = (promise) => promise.then(() => 'resolved', (err) => err)
      for (const impl of [ref, ours]) {
        expect(await caught(compactOf(impl, answers()))).toBe(thrown)
        expect(await caught(impl.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted(answers()) }))).toBe(thrown)
      }
    }
    // errorMessage is read on an error answer only.
    const odd = [{ ...text('## Goal'), errorMessage: Symbol('not read') }]
    expect(await outcome(compactOf(ours, odd))).toEqual(await outcome(compactOf(ref, odd)))
    // Only missing texts: no text, which this package rejects (the empty-answer difference).
    await expect(compactOf(ours, [answer('none', null)])).rejects.toThrow("the model's answer has no text")
  })
})

describe('agent line 1.6: usage and failures of 1.6', () => {
  let ref
  let ours
  beforeAll(async () => {
    ref = await loadReference('1.6')
    ours = await loadOurs('1.6')
  })

  const compactOf = (impl, answers, prep) => impl.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, scripted(answers))

  test('one call: the answer\'s own usage object', async () => {
    const answer = text('S')
    const result = await compactOf(ours, [answer], plainPreparation(ref))
    expect(result.usage).toBe(answer.usage)
    const refResult = await compactOf(ref, [text('S')], plainPreparation(ref))
    expect(refResult.usage).toEqual(answer.usage)
  })

  test.each([
    ['plain usages', usage(10, 5), usage(1, 2)],
    ['cacheWrite1h on one side, reasoning on the other', usage(10, 5, { cacheWrite1h: 0 }), usage(1, 2, { reasoning: 7 })],
    ['null splits', usage(10, 5, { cacheWrite1h: null }), usage(1, 2)],
    ['both totals from the provider', usage(10, 5, { cost: { ...usage(10, 5).cost, totalFromProvider: true } }), usage(1, 2, { cost: { ...usage(1, 2).cost, totalFromProvider: true } })],
    ['one total from the provider', usage(10, 5, { cost: { ...usage(10, 5).cost, totalFromProvider: true } }), usage(1, 2)],
    ['missing numbers', { ...usage(10, 5), cacheRead: undefined }, usage(1, 2)],
    ['a history answer without usage', undefined, usage(1, 2)],
  ])('a split turn sums the two usages as combineUsage does: %s', async (_, first, second) => {
    const answers = () => [text('H', { usage: first }), text('P', { usage: second })]
    const a = await compactOf(ref, answers(), splitPreparation(ref))
    const b = await compactOf(ours, answers(), splitPreparation(ref))
    expect(b.usage).toStrictEqual(a.usage)
    expect(keysOf(b.usage)).toEqual(keysOf(a.usage))
  })

  test('a split turn with no history call reports the prefix answer\'s usage', async () => {
    const prep = { ...splitPreparation(ref), messagesToSummarize: [], previousSummary: 'EARLIER' }
    const answer = text('P')
    const b = await compactOf(ours, [answer], prep)
    const a = await compactOf(ref, [text('P')], prep)
    expect(b.usage).toBe(answer.usage)
    expect(b.summary).toBe(a.summary)
  })

  test('generateSummaryWithUsage: { text, usage }, the usage the answer\'s own', async () => {
    const messages = [{ role: 'user', content: 'hello', timestamp: 1 }]
    const answer = text('SUMMARY')
    const b = await ours.generateSummaryWithUsage(messages, MODEL, undefined, 'k', undefined, undefined, undefined, undefined, undefined, scripted([answer]))
    const a = await ref.generateSummaryWithUsage(messages, MODEL, undefined, 'k', undefined, undefined, undefined, undefined, undefined, scripted([text('SUMMARY')]))
    expect(b).toStrictEqual(a)
    expect(b.usage).toBe(answer.usage)
    expect(await ours.generateSummary(messages, MODEL, undefined, 'k', undefined, undefined, undefined, undefined, undefined, scripted([answer]))).toBe('SUMMARY')
  })

  test.each([
    ['a length stop', [lengthStop], plainPreparation],
    ['a tool call', [toolCall], plainPreparation],
    ['a tool call in a stop answer', [{ ...toolCall, stopReason: 'stop' }], plainPreparation],
    ['a turn-prefix length stop', [text('H'), lengthStop], splitPreparation],
    ['a turn-prefix tool call', [text('H'), toolCall], splitPreparation],
  ])('compact() rejects %s with 1.6\'s message', async (_, answers, prep) => {
    const a = await outcome(compactOf(ref, [...answers], prep(ref)))
    const b = await outcome(compactOf(ours, [...answers], prep(ref)))
    expect(b).toEqual(a)
    expect(b.rejected).toMatch(/^(Turn prefix s|S)ummarization (failed: generation hit the token cap|attempted to call a tool)/)
  })

  test.each([
    ['a length stop', lengthStop],
    ['a tool call', toolCall],
  ])('generateBranchSummary() resolves %s as { error } with 1.6\'s message', async (_, answer) => {
    const a = await ref.generateBranchSummary(branchEntries(), { model: MODEL, streamFn: scripted([answer]) })
    const b = await ours.generateBranchSummary(branchEntries(), { model: MODEL, streamFn: scripted([answer]) })
    expect(b).toEqual(a)
  })

  test('getSummarizationFailure', () => {
    const responses = [
      failure('boom'),
      failure(''),
      { ...failure(''), errorMessage: undefined },
      { ...failure(''), errorMessage: 503 },
      // Truthy, yet written as "", and falsy though no string.
      { ...failure(''), errorMessage: [] },
      { ...failure(''), errorMessage: 0n },
      { ...failure(''), errorMessage: { toString: () => '' } },
      lengthStop,
      { ...text(''), stopReason: 'aborted' },
      text('fine'),
      toolCall,
    ]
    for (const response of responses) {
      for (const label of ['Bug report summary', 'Summarization', 7, '😀\ud800']) {
        expect([response, label, ours.getSummarizationFailure(response, label)]).toEqual([response, label, ref.getSummarizationFailure(response, label)])
      }
    }
  })
})

describe('the exports each line has', () => {
  // What this package adds to an agent line's compaction API (README, "API").
  const ADDITIONS = [
    'buildSummaryRequests', 'countTokens', 'prepareCompactionAsync', 'prepareCompactionFromFile', 'prepareCompactionFromFileSync',
    'projectForSummary', 'serializeForSummary', 'serializeForSummaryFromFile', 'serializeForSummaryFromFileSync', 'splitUserRounds',
  ]

  test.each(LINES)('agent line %s: each summarizing function is there where the agent has it, and absent where it has none', async (line) => {
    const ref = await loadReference(line)
    const ours = await loadOurs(line)
    for (const name of ['completeSummarization', 'generateSummaryWithUsage', 'getSummarizationFailure', 'generateSummary', 'compact', 'generateBranchSummary']) {
      expect([name, typeof ours[name]]).toEqual([name, typeof ref[name]])
    }
  })

  test.each(LINES)("agent line %s: every export of the agent's compaction and messages modules, and besides them only this package's additions", async (line) => {
    const paths = modulePaths(line)
    const agent = new Set([...Object.keys(await import(pathToFileURL(paths.compaction).href)), ...Object.keys(await import(pathToFileURL(paths.messages).href))])
    expect(agent.size).toBeGreaterThan(20)
    const ours = await loadOurs(line)
    expect([...agent].filter((name) => !(name in ours))).toEqual([])
    expect(Object.keys(ours).filter((name) => !agent.has(name)).sort()).toEqual(ADDITIONS)
  })
})
