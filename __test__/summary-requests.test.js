'use strict'
// The requests each line's summarizers send, against the agent's own module
// of that line with the same preparation and scripted answers: the context
// shape, option keys in order and their values, maxTokens, reasoning,
// sessionId and cacheRetention, one request at a time, the same objects
// across retries. The request text is the spec's and not compared here.

const { loadReference } = require('./helpers/reference')
const { loadOurs, LINES } = require('./helpers/ours')
const { MODEL, UUID_V7, text, failure, scripted, splitPreparation, plainPreparation, branchEntries, sides } = require('./helpers/summary')

const HEADERS = { 'x-h': '1' }
const ENV = { PI_TEST: '1' }
const RETRY = { enabled: true, maxRetries: 3, baseDelayMs: 1 }

/** The shape of a context: its keys, and each message's keys and role (timestamps: 0 or a number). */
function shapeOf(context) {
  return {
    keys: Object.keys(context),
    messages: context.messages.map((m) => ({
      keys: Object.keys(m),
      role: m.role,
      timestamp: m.timestamp === 0 ? 0 : typeof m.timestamp,
      content: typeof m.content === 'string' ? 'string' : m.content.map((b) => Object.keys(b).join(',')),
    })),
  }
}

/** Options with the session id replaced by its form, to compare across implementations. */
function comparable(options) {
  const out = {}
  for (const [k, v] of Object.entries(options)) out[k] = k === 'sessionId' && typeof v === 'string' && UUID_V7.test(v) ? 'uuidv7' : v
  return out
}

describe.each(LINES)('agent line %s: summary requests', (line) => {
  let ref
  let ours
  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  async function runCompact(impl, args, answers = [text('H'), text('P')]) {
    const streamFn = scripted(answers)
    const [prep, model, apiKey, headers, custom, signal, thinking, ...rest] = args
    const result = await impl.compact(prep, model, apiKey, headers, custom, signal, thinking, streamFn, ...rest)
    return { result, calls: streamFn.calls }
  }

  test('a split turn: the same contexts and options as the agent, in order', async () => {
    const args = (impl) => [splitPreparation(ref), MODEL, 'key', HEADERS, undefined, undefined, 'high', ENV, undefined, undefined, undefined]
    const a = await runCompact(ref, args(ref))
    const b = await runCompact(ours, args(ours))
    expect(b.calls).toHaveLength(2)
    expect(b.calls.map((c) => shapeOf(c.context))).toEqual(a.calls.map((c) => shapeOf(c.context)))
    expect(b.calls.map((c) => Object.keys(c.options))).toEqual(a.calls.map((c) => Object.keys(c.options)))
    expect(b.calls.map((c) => comparable(c.options))).toEqual(a.calls.map((c) => comparable(c.options)))
    for (const { context } of b.calls) {
      const system = context.messages.find((m) => m.role === 'system')
      if (line === '0.78') {
        expect(system).toBeUndefined()
        expect(context.systemPrompt).toBe(ours.SUMMARIZATION_SYSTEM_PROMPT)
      } else {
        expect(system).toEqual({ role: 'system', content: ours.SUMMARIZATION_SYSTEM_PROMPT, timestamp: 0 })
        expect('systemPrompt' in context).toBe(false)
      }
    }
  })

  test('no maxTokens where the line sends none; reserveTokens only where it does', async () => {
    const prep = { ...splitPreparation(ref), settings: { enabled: true, reserveTokens: 1000, keepRecentTokens: 150 } }
    const a = await runCompact(ref, [prep, MODEL, 'k'])
    const b = await runCompact(ours, [prep, MODEL, 'k'])
    expect(b.calls.map((c) => c.options.maxTokens)).toEqual(a.calls.map((c) => c.options.maxTokens))
    expect(b.calls.map((c) => 'maxTokens' in c.options)).toEqual(line === '0.78' ? [true, true] : [false, false])
    if (line === '0.78') {
      expect(b.calls.map((c) => c.options.maxTokens)).toEqual([800, 500])
      // Math.min keeps a NaN budget (Rust's f64::min would take the model's maxTokens) and -0.
      for (const reserveTokens of [NaN, -0, Infinity, -10]) {
        const odd = { ...splitPreparation(ref), settings: { enabled: true, reserveTokens, keepRecentTokens: 150 } }
        const a2 = await runCompact(ref, [odd, MODEL, 'k'])
        const b2 = await runCompact(ours, [odd, MODEL, 'k'])
        const budgets = (r) => r.calls.map((c) => (Object.is(c.options.maxTokens, -0) ? '-0' : String(c.options.maxTokens)))
        expect(budgets(b2)).toEqual(budgets(a2))
        expect(budgets(b2)).toHaveLength(2)
      }
      // A settings file's string (0.78 does not validate them): Math.floor(0.8 * "1000").
      for (const reserveTokens of ['1000', ' 1e3\n', '0x3e8']) {
        const fromFile = { ...splitPreparation(ref), settings: { enabled: 'yes', reserveTokens, keepRecentTokens: '150' } }
        const a2 = await runCompact(ref, [fromFile, MODEL, 'k'])
        const b2 = await runCompact(ours, [fromFile, MODEL, 'k'])
        expect(b2.calls.map((c) => c.options.maxTokens)).toEqual(a2.calls.map((c) => c.options.maxTokens))
        expect(b2.calls.map((c) => c.options.maxTokens)).toEqual([800, 500])
      }
      const nan = await runCompact(ours, [{ ...splitPreparation(ref), settings: { enabled: true, reserveTokens: NaN, keepRecentTokens: 150 } }, MODEL, 'k'])
      expect(nan.calls.map((c) => c.options.maxTokens)).toEqual([NaN, NaN])
    } else {
      // 1.6 does not read the settings at all.
      for (const settings of [undefined, { reserveTokens: 'lots' }]) {
        const unread = { ...splitPreparation(ref), settings }
        const a2 = await runCompact(ref, [unread, MODEL, 'k'])
        const b2 = await runCompact(ours, [unread, MODEL, 'k'])
        expect(b2.result).toEqual(a2.result)
      }
    }
  })

  test("model fields read as the agent's arithmetic reads them (maxTokens null or '4000', contextWindow null or '200000', an odd id or provider)", async () => {
    const models = [
      { ...MODEL, maxTokens: null },
      { ...MODEL, maxTokens: '4000' },
      { ...MODEL, maxTokens: {} },
      { ...MODEL, contextWindow: null },
      { ...MODEL, contextWindow: '200000' },
      { ...MODEL, id: 42, provider: { name: 'x' }, api: null },
    ]
    for (const model of models) {
      const prep = { ...splitPreparation(ref), settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 150 } }
      const a = await runCompact(ref, [prep, model, 'k'])
      const b = await runCompact(ours, [prep, model, 'k'])
      expect(b.calls.map((c) => c.options.maxTokens)).toEqual(a.calls.map((c) => c.options.maxTokens))
      expect(b.calls.map((c) => c.model)).toEqual(a.calls.map((c) => c.model))
      expect(typeof b.result.summary).toBe('string')
    }
    if (line === '0.78') {
      const budgets = async (model) => (await runCompact(ours, [{ ...splitPreparation(ref), settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 150 } }, model, 'k'])).calls.map((c) => c.options.maxTokens)
      expect(await budgets(models[0])).toEqual([13107, 8192])
      expect(await budgets(models[1])).toEqual([4000, 4000])
    }
  })

  test.each([
    ['a reasoning model with a level', MODEL, 'high'],
    ['a reasoning model with "off"', MODEL, 'off'],
    ['a reasoning model with no level', MODEL, undefined],
    ['a model without reasoning', { ...MODEL, reasoning: false }, 'high'],
  ])('reasoning as the agent passes it: %s', async (_, model, level) => {
    const a = await runCompact(ref, [plainPreparation(ref), model, 'k', undefined, undefined, undefined, level], [text('S')])
    const b = await runCompact(ours, [plainPreparation(ref), model, 'k', undefined, undefined, undefined, level], [text('S')])
    expect(b.calls.map((c) => [Object.keys(c.options), c.options.reasoning])).toEqual(a.calls.map((c) => [Object.keys(c.options), c.options.reasoning]))
  })

  test('generateSummary: the same request options', async () => {
    const messages = [{ role: 'user', content: 'hello', timestamp: 1 }]
    const run = async (impl) => {
      const streamFn = scripted([text('SUMMARY')])
      const out = await impl.generateSummary(messages, MODEL, 2000, 'k', HEADERS, undefined, 'focus', 'PREV', 'medium', streamFn, ENV)
      return { out, calls: streamFn.calls }
    }
    const a = await run(ref)
    const b = await run(ours)
    expect(b.out).toBe('SUMMARY')
    expect(b.calls.map((c) => comparable(c.options))).toEqual(a.calls.map((c) => comparable(c.options)))
    expect(b.calls.map((c) => shapeOf(c.context))).toEqual(a.calls.map((c) => shapeOf(c.context)))
  })
})

describe('agent line 1.6: what completeSummarization adds', () => {
  let ref
  let ours
  beforeAll(async () => {
    ref = await loadReference('1.6')
    ours = await loadOurs('1.6')
  })

  test('a fresh time-ordered UUIDv7 per request, and cacheRetention "none"', async () => {
    const { calls } = await (async () => {
      const streamFn = scripted([text('H'), text('P')])
      await ours.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      return streamFn
    })()
    const ids = calls.map((c) => c.options.sessionId)
    for (const id of ids) expect(id).toMatch(UUID_V7)
    expect(ids[0]).not.toBe(ids[1])
    expect(ids[0] < ids[1]).toBe(true)
    expect(calls.map((c) => c.options.cacheRetention)).toEqual(['none', 'none'])
  })

  test("the caller's sessionId is kept, in its place", async () => {
    for (const impl of [ref, ours]) {
      const streamFn = scripted([text('H'), text('P')])
      await impl.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn, undefined, undefined, undefined, 'SID')
      expect(streamFn.calls.map((c) => c.options.sessionId)).toEqual(['SID', 'SID'])
      expect(Object.keys(streamFn.calls[0].options)).toEqual(['signal', 'apiKey', 'headers', 'env', 'sessionId', 'cacheRetention'])
    }
  })

  test('transient retries send the very same context and options objects again', async () => {
    const results = {}
    for (const [name, impl] of sides(ref, ours)) {
      const streamFn = scripted([failure('terminated'), failure('socket hang up'), text('OK')])
      await impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn, undefined, RETRY)
      const [first, ...rest] = streamFn.calls
      results[name] = rest.map((c) => [c.context === first.context, c.options === first.options])
    }
    expect(results.ours).toEqual([
      [true, true],
      [true, true],
    ])
    expect(results.ours).toEqual(results.ref)
  })

  test('completeSummarization passes the caller\'s context and options on, adding only cacheRetention and sessionId', async () => {
    const context = { messages: [{ role: 'system', content: 'S', timestamp: 0 }, { role: 'user', content: [{ type: 'text', text: 'U' }], timestamp: 1 }] }
    const signal = new AbortController().signal
    const runs = {}
    for (const [name, impl] of sides(ref, ours)) {
      const streamFn = scripted([text('OK')])
      const options = { maxTokens: 4096, signal, apiKey: 'k', headers: HEADERS, env: ENV, sessionId: 'S1', reasoning: 'low' }
      const response = await impl.completeSummarization(MODEL, context, options, streamFn)
      runs[name] = { response, call: streamFn.calls[0], options }
    }
    expect(runs.ours.call.context).toBe(context)
    expect(runs.ours.call.options).not.toBe(runs.ours.options)
    expect(runs.ours.call.options).toEqual(runs.ref.call.options)
    expect(Object.keys(runs.ours.call.options)).toEqual(Object.keys(runs.ref.call.options))
    expect(runs.ours.response).toEqual(runs.ref.response)
    // Without a sessionId, one is added at the end.
    const streamFn = scripted([text('OK')])
    await ours.completeSummarization(MODEL, context, { apiKey: 'k' }, streamFn)
    expect(Object.keys(streamFn.calls[0].options)).toEqual(['apiKey', 'cacheRetention', 'sessionId'])
    expect(streamFn.calls[0].options.sessionId).toMatch(UUID_V7)
  })

  test('branch summaries: options as the agent sends them, reasoning included', async () => {
    for (const [level, model] of [
      ['low', MODEL],
      ['off', MODEL],
      ['low', { ...MODEL, reasoning: false }],
      [undefined, MODEL],
    ]) {
      const runs = {}
      // One signal for both sides: the caller's own object goes on (two
      // signals would be compared by their internals, which Node 26's Jest cannot).
      const signal = new AbortController().signal
      for (const [name, impl] of sides(ref, ours)) {
        const streamFn = scripted([text('B')])
        await impl.generateBranchSummary(branchEntries(), { model, signal, thinkingLevel: level, streamFn, env: ENV })
        runs[name] = streamFn.calls[0]
      }
      expect(runs.ours.options.signal).toBe(signal)
      expect(runs.ref.options.signal).toBe(signal)
      expect(Object.keys(runs.ours.options)).toEqual(Object.keys(runs.ref.options))
      expect(comparable(runs.ours.options)).toEqual(comparable(runs.ref.options))
      expect(shapeOf(runs.ours.context)).toEqual(shapeOf(runs.ref.context))
    }
  })
})

describe('agent line 0.78: requests as ours made them before the 1.6 line', () => {
  let ours
  beforeAll(async () => {
    ours = await loadOurs('0.78')
  })

  test('branch summaries keep their own output budget and pass reasoning on', async () => {
    const streamFn = scripted([text('B')])
    await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal: undefined, thinkingLevel: 'low', streamFn })
    expect(streamFn.calls[0].options).toEqual({ maxTokens: 8000, signal: undefined, apiKey: 'k', headers: undefined, reasoning: 'low' })
    expect(Object.keys(streamFn.calls[0].context)).toEqual(['systemPrompt', 'messages'])
  })

  test("a branch summary's own budget with a NaN reserveTokens leaves the model's maxTokens (compaction keeps the agent's NaN)", async () => {
    const streamFn = scripted([text('B')])
    await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', reserveTokens: NaN, streamFn })
    expect(streamFn.calls[0].options.maxTokens).toBe(MODEL.maxTokens)
    // Without a model limit either: the agent's fixed 2,048, never NaN.
    for (const maxTokens of [0, undefined, NaN]) {
      const unlimited = scripted([text('B')])
      await ours.generateBranchSummary(branchEntries(), { model: { ...MODEL, maxTokens }, apiKey: 'k', reserveTokens: NaN, streamFn: unlimited })
      expect(unlimited.calls[0].options.maxTokens).toBe(2048)
    }
  })

  test("a settings file's reserveTokens given as a string is read as its number, as the agent's arithmetic reads it", async () => {
    const requests = []
    for (const reserveTokens of [2000, '2000', ' 2e3 ']) {
      const streamFn = scripted([text('B')])
      await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', reserveTokens, streamFn })
      requests.push({ maxTokens: streamFn.calls[0].options.maxTokens, prompt: streamFn.calls[0].prompt })
    }
    expect(requests[0].maxTokens).toBe(1600)
    expect(requests[1]).toEqual(requests[0])
    expect(requests[2]).toEqual(requests[0])
    await expect(ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', reserveTokens: 'lots', streamFn: scripted([text('B')]) })).rejects.toThrow(
      /options\.reserveTokens: expected a number, got a string that is no number, "lots"/,
    )
  })

  test("branch summaries' option keys come in the agent's order, reasoning after them", async () => {
    const ref = await loadReference('0.78')
    const keys = async (impl, extra = {}) => {
      const streamFn = scripted([text('B')])
      await impl.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', headers: HEADERS, signal: new AbortController().signal, streamFn, ...extra })
      return Object.keys(streamFn.calls[0].options)
    }
    expect(await keys(ours)).toEqual(await keys(ref))
    expect(await keys(ours)).toEqual(['apiKey', 'headers', 'signal', 'maxTokens'])
    expect(await keys(ours, { thinkingLevel: 'low' })).toEqual(['apiKey', 'headers', 'signal', 'maxTokens', 'reasoning'])
  })

  test('a retry policy passed anyway retries nothing: every error fails on the first call', async () => {
    const ref = await loadReference('0.78')
    for (const impl of [ref, ours]) {
      const streamFn = scripted([failure('terminated'), text('never')])
      await expect(
        impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn, undefined, RETRY),
      ).rejects.toThrow('Summarization failed: terminated')
      expect(streamFn.calls).toHaveLength(1)
    }
  })
})
