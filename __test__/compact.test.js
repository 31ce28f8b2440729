'use strict'
// compact() and generateSummary() against a scripted fake streamFn, in each
// agent line: every request is recorded, answers come from a script (text,
// errors, overflow, length stops, tool calls, delays). Also parity with the
// reference's compact() of the line on what the formats share: calls made,
// result fields, assembly.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { loadReference } = require('./helpers/reference')
const { LINES } = require('./helpers/ours')
const { promptOf, abortable, MODEL: SUMMARY_MODEL } = require('./helpers/summary')

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const OVERFLOW = 'prompt is too long: 213462 tokens > 200000 maximum'
// The summarizing suites' model, with a smaller output limit.
const MODEL = { ...SUMMARY_MODEL, maxTokens: 4096 }
const CLAUDE = { ...MODEL, id: 'claude-sonnet-4', api: 'anthropic-messages', provider: 'anthropic' }

const text = (t) => ({ role: 'assistant', content: [{ type: 'text', text: t }], stopReason: 'stop' })
const failure = (message) => ({ role: 'assistant', content: [], stopReason: 'error', errorMessage: message })

/** A streamFn that answers from `script` and records each call and the peak concurrency. */
function scripted(script, { delayMs = 0 } = {}) {
  const calls = []
  let active = 0
  const fn = async (model, context, options) => {
    calls.push({ model, context, options, prompt: promptOf(context) })
    active++
    fn.maxActive = Math.max(fn.maxActive, active)
    const step = script.shift()
    return {
      result: async () => {
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs))
        active--
        if (step === undefined) throw new Error('script ran out')
        if (step instanceof Error) throw step
        return typeof step === 'function' ? step(options) : step
      },
    }
  }
  fn.calls = calls
  fn.maxActive = 0
  return fn
}

let n = 0
const entry = (type, fields) => ({ type, id: `e${n}`, parentId: n ? `e${n - 1}` : null, timestamp: '2025-03-01T10:00:00.000Z', ...fields, _n: n++ })
const msg = (message) => entry('message', { message })
const user = (t) => msg({ role: 'user', content: t, timestamp: 1 })
const assistant = (t, total, extra = []) =>
  msg({
    role: 'assistant',
    content: [{ type: 'thinking', thinking: 'Considering the failing test' }, { type: 'text', text: t }, ...extra],
    usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: total },
    stopReason: 'toolUse',
    provider: 'openai',
    model: 'gpt-test',
  })
const toolResult = (id, name, body) => msg({ role: 'toolResult', toolCallId: id, toolName: name, content: [{ type: 'text', text: body }], isError: false, timestamp: 2 })

/** A session whose keepRecentTokens=150 cut splits the last turn; its history holds three user rounds. */
function splitSession() {
  n = 0
  const long = 'z'.repeat(400)
  const entries = [
    user('look at the repository'),
    assistant('z'.repeat(200), 50),
    user('and the failing test'),
    assistant('z'.repeat(200), 60),
    user('fix the parser'),
    assistant(long, 100, [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'src/parse.rs' } }]),
    toolResult('c1', 'read', 'fn parse() {}'),
    user('now the tests'),
    assistant(long, 200, [{ type: 'toolCall', id: 'c2', name: 'edit', arguments: { path: 'tests/a.rs' } }]),
    toolResult('c2', 'edit', 'ok'),
    assistant(long, 300),
  ]
  return entries.map(({ _n, ...e }) => e)
}

const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 150 }

describe.each(LINES.map((line) => [line, require(`../agent-${line}`)]))('agent line %s', (line, ours) => {
  const is078 = line === '0.78'

  function preparation(impl = ours, settings = SETTINGS) {
    const prep = impl.prepareCompaction(splitSession(), settings)
    if (!prep) throw new Error('expected a preparation')
    return prep
  }

  describe('compact(): requests', () => {
    test('a split turn asks for history then turn prefix, one at a time, and merges them', async () => {
      const prep = preparation()
      expect(prep.isSplitTurn).toBe(true)
      const streamFn = scripted([text('HISTORY SUMMARY'), text('PREFIX SUMMARY')], { delayMs: 5 })
      const result = await ours.compact(prep, MODEL, 'key', { 'x-h': '1' }, undefined, undefined, 'high', streamFn)
      expect(streamFn.calls).toHaveLength(2)
      expect(streamFn.maxActive).toBe(1)
      expect(result.summary).toBe(
        'HISTORY SUMMARY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX SUMMARY' +
          '\n\n<read-files>\nsrc/parse.rs\n</read-files>',
      )
      expect(result).toEqual({
        summary: expect.any(String),
        firstKeptEntryId: prep.firstKeptEntryId,
        tokensBefore: prep.tokensBefore,
        // The edit of tests/a.rs sits in the kept tail, so only the read is listed.
        details: { readFiles: ['src/parse.rs'], modifiedFiles: [] },
      })
      const [history, prefix] = streamFn.calls
      expect(history.prompt).toMatch(/^<conversation>\n\[User\]: look at the repository/)
      expect(history.prompt).toContain('[User]: fix the parser')
      expect(history.prompt).toContain('## Reasoning Digest')
      expect(history.prompt).toContain('[Assistant reasoning]: Considering the failing test')
      expect(history.prompt).toContain('[Assistant tool calls]: read#c1(path="src/parse.rs")')
      expect(history.prompt).toContain('[Tool result read#c1 error=false]: fn parse() {}')
      expect(prefix.prompt).toContain('## Original Request')
      expect(prefix.prompt).toContain('[User]: now the tests')
      if (is078) {
        expect(history.context.systemPrompt).toBe(ours.SUMMARIZATION_SYSTEM_PROMPT)
        // maxTokens: min(floor(0.8 * reserve), model.maxTokens) and min(floor(0.5 * reserve), ...)
        expect(history.options).toEqual({ maxTokens: 4096, signal: undefined, apiKey: 'key', headers: { 'x-h': '1' }, reasoning: 'high' })
        expect(prefix.options.maxTokens).toBe(4096)
      } else {
        expect(history.context.messages[0]).toEqual({ role: 'system', content: ours.SUMMARIZATION_SYSTEM_PROMPT, timestamp: 0 })
        // No maxTokens; completeSummarization's cacheRetention and a fresh session id per request.
        expect(history.options).toEqual({
          signal: undefined,
          apiKey: 'key',
          headers: { 'x-h': '1' },
          env: undefined,
          sessionId: expect.stringMatching(UUID_V7),
          reasoning: 'high',
          cacheRetention: 'none',
        })
        expect('maxTokens' in prefix.options).toBe(false)
        expect(prefix.options.sessionId).not.toBe(history.options.sessionId)
      }
    })

    test('maxTokens follows reserveTokens when the model allows more (0.78; 1.6 sends none); no reasoning option when off or unsupported', async () => {
      const prep = { ...preparation(), settings: { ...SETTINGS, reserveTokens: 1000 } }
      const streamFn = scripted([text('H'), text('P')])
      await ours.compact(prep, { ...MODEL, reasoning: false }, 'k', undefined, undefined, undefined, 'high', streamFn)
      expect(streamFn.calls.map((c) => c.options.maxTokens)).toEqual(is078 ? [800, 500] : [undefined, undefined])
      expect('reasoning' in streamFn.calls[0].options).toBe(false)
      const again = scripted([text('H'), text('P')])
      await ours.compact(prep, MODEL, 'k', undefined, undefined, undefined, 'off', again)
      expect('reasoning' in again.calls[0].options).toBe(false)
    })

    test('custom instructions reach every request and come back on the result', async () => {
      const streamFn = scripted([text('H'), text('P')])
      const result = await ours.compact(preparation(), MODEL, 'k', undefined, 'remember the migration command', undefined, undefined, streamFn)
      expect(streamFn.calls).toHaveLength(2)
      for (const call of streamFn.calls) expect(call.prompt).toContain('remember the migration command')
      expect(result.customInstructions).toBe('remember the migration command')
    })

    test('update mode carries the previous summary', async () => {
      const prep = { ...preparation(), isSplitTurn: false, turnPrefixMessages: [], previousSummary: '## Goal\nOld goal' }
      const streamFn = scripted([text('UPDATED')])
      const result = await ours.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      expect(streamFn.calls).toHaveLength(1)
      expect(streamFn.calls[0].prompt).toContain('<previous-summary>\n## Goal\nOld goal\n</previous-summary>')
      expect(result.summary.startsWith('UPDATED')).toBe(true)
    })

    test('a split turn with nothing before it uses the previous summary without a call', async () => {
      const prep = { ...preparation(), messagesToSummarize: [], previousSummary: 'EARLIER' }
      const streamFn = scripted([text('P')])
      const result = await ours.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      expect(streamFn.calls).toHaveLength(1)
      expect(result.summary.startsWith('EARLIER\n\n---\n\n**Turn Context (split turn):**\n\nP')).toBe(true)
    })

    test('works on a preparation whose message arrays an extension replaced', async () => {
      const prep = preparation()
      const replaced = {
        ...prep,
        messagesToSummarize: [{ role: 'user', content: 'projected by an extension', timestamp: 5 }],
        turnPrefixMessages: [{ role: 'user', content: 'prefix from the extension', timestamp: 6 }],
      }
      const streamFn = scripted([text('H'), text('P')])
      await ours.compact(replaced, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      expect(streamFn.calls[0].prompt).toContain('[User]: projected by an extension')
      expect(streamFn.calls[0].prompt).not.toContain('fix the parser')
      expect(streamFn.calls[1].prompt).toContain('[User]: prefix from the extension')
    })

    test('Claude-family summarizers get no reasoning lines', async () => {
      const streamFn = scripted([text('H'), text('P')])
      await ours.compact(preparation(), CLAUDE, 'k', undefined, undefined, undefined, undefined, streamFn)
      expect(streamFn.calls[0].prompt).not.toContain('[Assistant reasoning]')
      expect(streamFn.calls[0].prompt).toContain('[Assistant tool calls]')
    })

    test('never mutates the preparation', async () => {
      const prep = preparation()
      const before = JSON.stringify(prep, (k, v) => (v instanceof Set ? [...v] : v))
      await ours.compact(prep, MODEL, 'k', undefined, 'x', undefined, undefined, scripted([text('H'), text('P')]))
      expect(JSON.stringify(prep, (k, v) => (v instanceof Set ? [...v] : v))).toBe(before)
    })
  })

  describe('compact(): file operations that are none', () => {
    test('reject with a TypeError naming preparation.fileOps before any request, where the agents throw after their summaries', async () => {
      for (const fileOps of [null, undefined, 5, 'read']) {
        const streamFn = scripted([text('H'), text('P')])
        await expect(ours.compact({ ...preparation(), fileOps }, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toMatchObject({
          name: 'TypeError',
          message: expect.stringMatching(/^preparation\.fileOps: expected file operations \{ read, written, edited \}, got /),
        })
        expect(streamFn.calls).toHaveLength(0)
      }
      // An object without the sets: computeFileLists' own error, its first read the agents' (edited).
      const streamFn = scripted([text('H'), text('P')])
      await expect(ours.compact({ ...preparation(), fileOps: {} }, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toMatchObject({
        name: 'TypeError',
        message: expect.stringMatching(/fileOps\.edited is not iterable/),
      })
      expect(streamFn.calls).toHaveLength(0)
    })

    test('settings that are none: a TypeError naming preparation.settings before any request on 0.78 (the agent throws reading reserveTokens); unread on 1.6', async () => {
      for (const settings of [undefined, null]) {
        const streamFn = scripted([text('H'), text('P')])
        const run = ours.compact({ ...preparation(), settings }, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
        if (is078) {
          await expect(run).rejects.toMatchObject({ name: 'TypeError', message: expect.stringMatching(/^preparation\.settings: expected compaction settings, got /) })
          expect(streamFn.calls).toHaveLength(0)
        } else {
          await expect(run).resolves.toMatchObject({ summary: expect.any(String) })
          expect(streamFn.calls).toHaveLength(2)
        }
      }
      // Settings without reserveTokens (a primitive has none): the agent's budget, NaN.
      for (const settings of [{}, 5, 'lots']) {
        const streamFn = scripted([text('H'), text('P')])
        await ours.compact({ ...preparation(), settings }, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
        expect(streamFn.calls.map((c) => 'maxTokens' in c.options && Number.isNaN(c.options.maxTokens))).toEqual(is078 ? [true, true] : [false, false])
      }
    })

    test('a split turn whose turnPrefixMessages is not an array: a TypeError naming it before any request, where the agents throw reading its length or mapping it', async () => {
      for (const turnPrefixMessages of [undefined, null, 'text', { length: 2 }, { length: '1' }]) {
        const streamFn = scripted([text('H'), text('P')])
        await expect(ours.compact({ ...preparation(), isSplitTurn: true, turnPrefixMessages }, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toMatchObject({
          name: 'TypeError',
          message: expect.stringMatching(/^preparation\.turnPrefixMessages: expected an array, got /),
        })
        expect(streamFn.calls).toHaveLength(0)
      }
      // Not a split turn, or a prefix whose length is not above 0: one request, as in the agents.
      const unsplit = [undefined, ...[[], '', {}, { length: 0 }, 5].map((p) => ({ isSplitTurn: true, turnPrefixMessages: p }))]
      for (const prep of unsplit.map((p) => ({ ...preparation(), ...(p || { isSplitTurn: false, turnPrefixMessages: undefined }) }))) {
        const streamFn = scripted([text('H')])
        await ours.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
        expect(streamFn.calls).toHaveLength(1)
      }
    })

    test('buildSummaryRequests does not read them: its requests show no file lists', () => {
      const requests = ours.buildSummaryRequests({ ...preparation(), fileOps: undefined }, MODEL)
      expect(requests).toEqual(ours.buildSummaryRequests(preparation(), MODEL))
    })
  })

  describe('compact(): failures and overflow recovery', () => {
    const plain = () => ({ ...preparation(), isSplitTurn: false, turnPrefixMessages: [] })

    test('a provider error rejects with its message, without retry', async () => {
      const streamFn = scripted([failure('Invalid API key')])
      await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toThrow(
        'Summarization failed: Invalid API key',
      )
      expect(streamFn.calls).toHaveLength(1)
    })

    test('a length stop, a tool call and an aborted stop reject clearly', async () => {
      const cases = [
        [{ ...text('half a summ'), stopReason: 'length' }, /incomplete/],
        [{ role: 'assistant', content: [{ type: 'toolCall', id: 't', name: 'read', arguments: {} }], stopReason: 'toolUse' }, is078 ? /tool call/ : /attempted to call a tool/],
        [{ ...text(''), stopReason: 'aborted' }, /aborted/],
      ]
      for (const [answer, pattern] of cases) {
        await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([answer]))).rejects.toThrow(pattern)
      }
    })

    test('a throwing or rejecting streamFn rejects compact()', async () => {
      const throwing = () => {
        throw new Error('socket closed')
      }
      await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, throwing)).rejects.toThrow('socket closed')
      await expect(
        ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([new Error('stream broke')])),
      ).rejects.toThrow('stream broke')
    })

    test('overflow then success on retry 1 shrinks the request', async () => {
      const big = { ...plain(), messagesToSummarize: [...plain().messagesToSummarize, ...plain().messagesToSummarize] }
      const streamFn = scripted([failure(OVERFLOW), text('OK')])
      const result = await ours.compact(big, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      expect(streamFn.calls).toHaveLength(2)
      expect(streamFn.calls[1].prompt.length).toBeLessThan(streamFn.calls[0].prompt.length)
      expect(result.summary.startsWith('OK')).toBe(true)
    })

    test('each retry is the spec\'s: the oldest round dropped while another remains, exact tool-result bodies from three to one, then zero', async () => {
      const call = (id) => ({ role: 'assistant', content: [{ type: 'toolCall', id, name: 'read', arguments: { path: `${id}.ts` } }], stopReason: 'toolUse', timestamp: 2 })
      // Bodies longer than the placeholder that stands for them, so that leaving them out makes the request smaller.
      const result = (id) => ({ role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text: `BODY-${id} ${'b'.repeat(40)}` }], isError: false, timestamp: 3 })
      const round = (label, ids) => [{ role: 'user', content: `${label} question`, timestamp: 1 }, ...ids.flatMap((id) => [call(id), result(id)])]
      const messages = [...round('ROUND-ONE', ['c1', 'c2']), ...round('ROUND-TWO', ['c3', 'c4', 'c5']), { role: 'assistant', content: [{ type: 'text', text: 'done' }], stopReason: 'stop', timestamp: 4 }]
      const streamFn = scripted([failure(OVERFLOW), failure(OVERFLOW), text('OK')])
      await ours.compact({ ...plain(), messagesToSummarize: messages }, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      const bodies = (prompt) => ['c1', 'c2', 'c3', 'c4', 'c5'].filter((id) => prompt.includes(`BODY-${id}`))
      const [first, retry1, retry2] = streamFn.calls.map((c) => c.prompt)
      expect([first, retry1, retry2].map(bodies)).toEqual([['c3', 'c4', 'c5'], ['c5'], []])
      // The older round is dropped on the first retry; the second has no other round to drop.
      expect([first, retry1, retry2].map((p) => [p.includes('ROUND-ONE'), p.includes('ROUND-TWO')])).toEqual([
        [true, true],
        [false, true],
        [false, true],
      ])
      // A body left out still shows its call: name and id.
      expect(retry2).toContain('[Tool result read#c5 error=false]: [tool result]')
    })

    test('custom instructions stay in every smaller retry (the spec: in every request), of a compaction and of a branch summary', async () => {
      const instructions = 'remember the migration command'
      const big = { ...plain(), messagesToSummarize: [...plain().messagesToSummarize, ...plain().messagesToSummarize] }
      const streamFn = scripted([failure(OVERFLOW), failure(OVERFLOW), text('OK')])
      await ours.compact(big, MODEL, 'k', undefined, instructions, undefined, undefined, streamFn)
      expect(streamFn.calls).toHaveLength(3)
      for (const call of streamFn.calls) expect(call.prompt).toContain(instructions)
      // Three user rounds on a branch, so that each retry has one to leave out.
      const rounds = ['ONE', 'TWO', 'THREE'].flatMap((label) => [
        { role: 'user', content: `ROUND-${label} question`, timestamp: 1 },
        { role: 'assistant', content: [{ type: 'text', text: `answer ${label} ${'a'.repeat(200)}` }], stopReason: 'stop', timestamp: 2 },
      ])
      const entries = rounds.map((message, i) => ({ type: 'message', id: `r${i}`, parentId: i ? `r${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message }))
      const branch = scripted([failure(OVERFLOW), failure(OVERFLOW), text('## Goal\nOK')])
      const result = await ours.generateBranchSummary(entries, { model: MODEL, apiKey: 'k', streamFn: branch, customInstructions: instructions })
      expect(result.summary).toContain('OK')
      expect(branch.calls).toHaveLength(3)
      for (const call of branch.calls) expect(call.prompt).toContain(instructions)
      // (and each retry did leave a round out)
      expect(branch.calls.map((c) => c.prompt.includes('ROUND-ONE'))).toEqual([true, false, false])
    })

    test('a retry bounds one oversized round to its head and tail, so one long reasoning trace cannot block compaction', async () => {
      const trace = `TRACE-HEAD ${'x'.repeat(600_000)} TRACE-TAIL`
      const messages = [
        { role: 'user', content: 'why is it slow?', timestamp: 1 },
        { role: 'assistant', content: [{ type: 'thinking', thinking: trace }, { type: 'text', text: 'Found it.' }], stopReason: 'stop', timestamp: 2 },
      ]
      const streamFn = scripted([failure(OVERFLOW), failure(OVERFLOW), text('OK')])
      await ours.compact({ ...plain(), messagesToSummarize: messages }, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      const [first, retry1, retry2] = streamFn.calls.map((c) => c.prompt)
      expect(first).toContain(trace)
      for (const retry of [retry1, retry2]) {
        expect(retry).toContain('TRACE-HEAD')
        expect(retry).toContain('TRACE-TAIL')
        expect(retry).toMatch(/\[\.\.\. \d+ characters of this round omitted \.\.\.\]/)
      }
      // Within the model's window (128,000 tokens at 4 characters each), smaller each time.
      expect(retry1.length).toBeLessThan(128_000 * 4)
      expect(retry2.length).toBeLessThan(retry1.length)
    })

    test('overflow twice then success on retry 2', async () => {
      const streamFn = scripted([failure(OVERFLOW), failure('400 context_length_exceeded'), text('OK')])
      await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).resolves.toMatchObject({
        firstKeptEntryId: expect.any(String),
      })
      expect(streamFn.calls).toHaveLength(3)
    })

    test('overflow three times rejects after at most three calls', async () => {
      const streamFn = scripted([failure(OVERFLOW), failure(OVERFLOW), failure(OVERFLOW), text('never')])
      await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toThrow(/overflows/)
      expect(streamFn.calls).toHaveLength(3)
    })

    test('an overflow in the wordings 1.6\'s pi-ai takes for one (a message for each of its patterns) is retried smaller', async () => {
      const piAi = path.join(__dirname, '..', 'node_modules', 'pi-coding-agent-1.6', 'node_modules', '@earendil-works', 'pi-ai', 'dist', 'utils', 'overflow.js')
      const { isContextOverflow } = await import(require('node:url').pathToFileURL(piAi).href)
      const sent = [
        '{"code":"1261","message":"Prompt too long"}',
        'Prompt exceeds max length',
        'litellm.ContextWindowExceededError: Context window exceeded',
        'Range of input length should be [1, 30720]',
        'prompt has 40,000 tokens, but the configured context size is 32,768 tokens',
        'OpenAI API error (413): Payload Too Large',
        'Input exceeds the maximum context length (131072)',
        'the request exceeds the available context size, try increasing it',
        "This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens",
        'prompt is too long: 213462 tokens > 200000 maximum',
        '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
        'Input is too long for requested model.',
        'Your input exceeds the context window of this model.',
        'The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).',
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
        'Please reduce the length of the messages or completion.',
        'Input length 140000 exceeds the maximum allowed input length of 131072 tokens.',
        "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
        'prompt token count of 140000 exceeds the limit of 128000',
        'The number of tokens to keep from the initial prompt is greater than the context length.',
        'invalid params, context window exceeds limit (2013)',
        'Your request exceeded model token limit: 262144 (requested: 300000)',
        'Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length',
        'finish_reason: model_context_window_exceeded',
        'prompt too long; exceeded max context length by 1200 tokens',
        '400 context_length_exceeded',
        'Token limit exceeded for this request',
        'Too many tokens in request',
      ]
      for (const message of sent) {
        expect({ message, piAi: isContextOverflow({ stopReason: 'error', errorMessage: message }) }).toEqual({ message, piAi: true })
        const streamFn = scripted([failure(message), text('OK')])
        // Two user rounds: the retry leaves the older one out.
        const twoRounds = { ...plain(), messagesToSummarize: [...plain().messagesToSummarize, ...plain().messagesToSummarize] }
        await ours.compact(twoRounds, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
        expect({ message, calls: streamFn.calls.length }).toEqual({ message, calls: 2 })
        expect(streamFn.calls[1].prompt.length).toBeLessThan(streamFn.calls[0].prompt.length)
      }
      // 1.6's own pattern list: each matches a message above.
      const { getOverflowPatterns } = await import(require('node:url').pathToFileURL(piAi).href)
      expect(getOverflowPatterns().filter((p) => !sent.some((m) => p.test(m))).map(String)).toEqual([])
      // A length stop with no output and the window full (Xiaomi's MiMo), and one that is only cut short.
      for (const [usage, overflow] of [
        [{ input: 120_000, cacheRead: 7_000, output: 0 }, true],
        [{ input: 127_000, cacheRead: 0, output: 3 }, false],
        [{ input: 126_000, cacheRead: 0, output: 0 }, false],
      ]) {
        const answer = { role: 'assistant', content: [{ type: 'text', text: '' }], stopReason: 'length', usage: { ...usage, cacheWrite: 0, totalTokens: 0 } }
        expect(isContextOverflow(answer, MODEL.contextWindow)).toBe(overflow)
        const streamFn = scripted([answer, text('OK')])
        const outcome = await ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn).then(() => 'retried', (e) => e.message)
        expect(outcome).toEqual(overflow ? 'retried' : expect.stringContaining('incomplete'))
      }
      // Where ours parts from pi-ai: a rate limit or throttling, which a smaller request does not fix.
      for (const message of ['ThrottlingException: Too many tokens, please wait before trying again.', 'Request rate-limited: prompt is too long']) {
        expect(isContextOverflow({ stopReason: 'error', errorMessage: message })).toBe(true)
        const streamFn = scripted([failure(message), text('OK')])
        await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toThrow(message)
      }
    })

    test('only a length stop\'s usage is read to tell an overflow: an overflow error whose usage getter throws is still retried', async () => {
      const answer = { ...failure(OVERFLOW), get usage() { throw new Error('usage getter') } }
      const streamFn = scripted([answer, text('OK')])
      await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).resolves.toMatchObject({ summary: expect.stringMatching(/^OK/) })
      expect(streamFn.calls).toHaveLength(2)
    })

    test('rate limits are not taken for overflow', async () => {
      const streamFn = scripted([failure('ThrottlingException: Too many tokens, please wait before trying again.')])
      await expect(ours.compact(plain(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toThrow(/Throttling/)
      expect(streamFn.calls).toHaveLength(1)
    })
  })

  describe('compact(): abort', () => {
    /** What the agent (0.78.1, agent-session.js) does with compact() in an auto-compaction: its outcome. */
    async function agentAutoCompaction(compact, preparation, signal, streamFn) {
      try {
        const result = await compact(preparation, MODEL, 'k', undefined, undefined, signal, undefined, streamFn)
        const { summary, firstKeptEntryId, tokensBefore, details } = result
        if (signal.aborted) return { outcome: 'cancelled', result }
        return { outcome: 'stored', entry: { summary, firstKeptEntryId, tokensBefore, details } }
      } catch (err) {
        return { outcome: 'failed', message: err.message }
      }
    }

    test('an already aborted signal resolves at once with { aborted: true }, without calling streamFn', async () => {
      const controller = new AbortController()
      controller.abort()
      const streamFn = scripted([text('never')])
      await expect(ours.compact(preparation(), MODEL, 'k', undefined, undefined, controller.signal, undefined, streamFn)).resolves.toEqual({
        aborted: true,
      })
      expect(streamFn.calls).toHaveLength(0)
    })

    test('aborting during a call resolves promptly with { aborted: true }, and the signal reaches streamFn', async () => {
      const controller = new AbortController()
      let seenSignal
      const hanging = async (model, context, options) => {
        seenSignal = options.signal
        return { result: () => new Promise(() => {}) }
      }
      const started = Date.now()
      setTimeout(() => controller.abort(), 20)
      await expect(ours.compact(preparation(), MODEL, 'k', undefined, undefined, controller.signal, undefined, hanging)).resolves.toEqual({
        aborted: true,
      })
      expect(Date.now() - started).toBeLessThan(1000)
      expect(seenSignal).toBe(controller.signal)
    })

    test('a stream that ends "aborted" after the abort, as pi-ai\'s do, leaves no partial summary', async () => {
      const controller = new AbortController()
      const streamFn = abortable()
      setTimeout(() => controller.abort(), 10)
      const result = await ours.compact(preparation(), MODEL, 'k', undefined, undefined, controller.signal, undefined, streamFn)
      expect(result).toEqual({ aborted: true })
      // The split turn's second request is never sent.
      expect(streamFn.calls).toHaveLength(1)
    })

    test('a streamFn that throws once the signal aborted: { aborted: true }, not its error', async () => {
      const controller = new AbortController()
      const streamFn = async (model, context, options) => {
        controller.abort()
        throw new Error(`request cancelled (${options.signal.aborted})`)
      }
      await expect(ours.compact(preparation(), MODEL, 'k', undefined, undefined, controller.signal, undefined, streamFn)).resolves.toEqual({
        aborted: true,
      })
    })

    test('without an abort, an "aborted" stop still rejects, and so does bad input', async () => {
      await expect(
        ours.compact(preparation(), MODEL, 'k', undefined, undefined, new AbortController().signal, undefined, scripted([{ ...text(''), stopReason: 'aborted' }])),
      ).rejects.toThrow(/aborted/)
      const streamFn = abortable()
      const { firstKeptEntryId, ...unmigrated } = preparation()
      await expect(ours.compact(unmigrated, MODEL, 'k', undefined, undefined, new AbortController().signal, undefined, streamFn)).rejects.toThrow(
        /firstKeptEntryId|UUID|migration/,
      )
      expect(streamFn.calls).toHaveLength(0)
    })

    test('the agent reports an aborted auto-compaction as cancelled with either module, and stores nothing from ours', async () => {
      const ref = await loadReference(line)
      const outcomes = {}
      for (const [name, impl] of [
        ['reference', ref],
        ['ours', ours],
      ]) {
        const controller = new AbortController()
        setTimeout(() => controller.abort(), 10)
        outcomes[name] = await agentAutoCompaction(impl.compact, preparation(impl), controller.signal, abortable())
      }
      expect(outcomes.ours).toEqual({ outcome: 'cancelled', result: { aborted: true } })
      // The reference resolves too, with the aborted request's partial text as a
      // complete-looking result that only the signal tells apart.
      expect(outcomes.reference.outcome).toBe('cancelled')
      expect(outcomes.reference.result.summary).toContain('half a summ')
      expect(outcomes.reference.result.firstKeptEntryId).toEqual(expect.any(String))
    })
  })

  describe('compact(): a signal-like object', () => {
    test('without an EventTarget\'s methods is only asked `aborted`, as by the agent', async () => {
      for (const signal of [{ aborted: false }, { aborted: false, addEventListener() {} }]) {
        const streamFn = scripted([text('H'), text('P')])
        const result = await ours.compact(preparation(), MODEL, 'k', undefined, undefined, signal, undefined, streamFn)
        expect([typeof result.summary, streamFn.calls.length]).toEqual(['string', 2])
      }
      const streamFn = scripted([text('H'), text('P')])
      await expect(ours.compact(preparation(), MODEL, 'k', undefined, undefined, { aborted: true }, undefined, streamFn)).resolves.toEqual({ aborted: true })
      expect(streamFn.calls).toHaveLength(0)
    })
  })

  describe('generateSummary(): abort', () => {
    test('rejects with an AbortError: a string result could be taken for a summary', async () => {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 10)
      const messages = [{ role: 'user', content: 'hello', timestamp: 1 }]
      await expect(ours.generateSummary(messages, MODEL, 2000, 'k', undefined, controller.signal, undefined, undefined, undefined, abortable())).rejects.toMatchObject({
        name: 'AbortError',
      })
    })
  })

  describe('generateSummary()', () => {
    test('one request with the reference shape; returns the text alone', async () => {
      const messages = [{ role: 'user', content: 'hello', timestamp: 1 }]
      const streamFn = scripted([text('SUMMARY')])
      const summary = await ours.generateSummary(messages, MODEL, 2000, 'k', undefined, undefined, 'focus', 'PREV', undefined, streamFn)
      expect(summary).toBe('SUMMARY')
      expect(streamFn.calls[0].options.maxTokens).toBe(is078 ? 1600 : undefined)
      expect(streamFn.calls[0].prompt).toContain('<previous-summary>\nPREV\n</previous-summary>')
      expect(streamFn.calls[0].prompt).toContain('focus')
    })
  })

  describe('compact(): parity with the reference', () => {
    let ref
    beforeAll(async () => {
      ref = await loadReference(line)
    })

    // With keepRecentTokens 20000, 1.6 plans nothing to summarize (prepareCompaction returns undefined).
    for (const keep of is078 ? [150, 250, 20000] : [150, 250]) {
      test(`same calls, fields and assembly (keepRecentTokens ${keep})`, async () => {
        const settings = { ...SETTINGS, keepRecentTokens: keep }
        // The reference's plan for both: the plans are compared elsewhere.
        const prep = ref.prepareCompaction(splitSession(), settings)
        const run = async (impl) => {
          const streamFn = scripted([text('FIRST'), text('SECOND')])
          const result = await impl.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
          const sessionIds = streamFn.calls.map((c) => c.options.sessionId)
          return { result, calls: streamFn.calls.map((c) => ({ ...c.options, sessionId: c.options.sessionId && 'fresh' })), sessionIds }
        }
        const [a, b] = [await run(ref), await run(ours)]
        expect(b.calls).toEqual(a.calls)
        expect(b.result).toEqual(a.result)
        for (const id of b.sessionIds) expect(id === undefined || UUID_V7.test(id)).toBe(true)
      })
    }
  })
})

describe('without a streamFn', () => {
  test('rejects with a clear message when @earendil-works/pi-ai is not installed', () => {
    // A copy of the package with no node_modules beside it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-nopi-'))
    const root = path.join(__dirname, '..')
    for (const f of fs.readdirSync(root)) {
      if (/^(index|agent-[\d.]+)\.js$/.test(f) || ['binding.js', 'platform.js', 'flat-messages.js', 'package.json'].includes(f) || f.endsWith('.node')) fs.copyFileSync(path.join(root, f), path.join(dir, f))
    }
    fs.cpSync(path.join(root, 'lib'), path.join(dir, 'lib'), { recursive: true })
    const script = `
      const m = require(${JSON.stringify(path.join(dir, 'index.js'))})
      const prep = { firstKeptEntryId: 'a', messagesToSummarize: [], turnPrefixMessages: [], isSplitTurn: false,
        tokensBefore: 1, fileOps: m.createFileOps(), settings: m.DEFAULT_COMPACTION_SETTINGS }
      m.compact(prep, ${JSON.stringify(MODEL)}, 'k').then(() => console.log('resolved'), (e) => console.log(e.message))`
    const out = execFileSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' })
    fs.rmSync(dir, { recursive: true, force: true })
    expect(out).toMatch(/pass a streamFn/)
  })
})


