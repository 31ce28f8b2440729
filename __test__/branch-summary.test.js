'use strict'
// generateBranchSummary() with a scripted fake streamFn, in each agent line:
// prompt contents, replaceInstructions, errors, abort, and parity with the
// line's reference on the result's assembly (preamble, file lists, usage)
// for the same answers.

const { loadReference } = require('./helpers/reference')
const { LINES } = require('./helpers/ours')
const { promptOf } = require('./helpers/summary')

const MODEL = {
  id: 'gpt-test',
  api: 'openai-completions',
  provider: 'openai',
  reasoning: false,
  contextWindow: 64000,
  maxTokens: 32000,
}

const text = (t) => ({ role: 'assistant', content: [{ type: 'text', text: t }], stopReason: 'stop' })

function scripted(script) {
  const calls = []
  const fn = async (model, context, options) => {
    calls.push({ context, options, prompt: promptOf(context) })
    const step = script.shift()
    return { result: async () => step }
  }
  fn.calls = calls
  return fn
}

function branchEntries() {
  const base = { timestamp: '2025-03-01T10:00:00.000Z' }
  const list = [
    { type: 'message', message: { role: 'user', content: 'try the cache idea', timestamp: 1 } },
    {
      type: 'message',
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading the cache module.' },
          { type: 'toolCall', id: 't1', name: 'read', arguments: { path: 'src/cache.ts' } },
          { type: 'toolCall', id: 't2', name: 'write', arguments: { path: 'src/lru.ts', content: 'x' } },
        ],
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
        stopReason: 'toolUse',
      },
    },
    { type: 'message', message: { role: 'toolResult', toolCallId: 't1', toolName: 'read', content: [{ type: 'text', text: 'export {}' }], isError: false, timestamp: 2 } },
    { type: 'branch_summary', fromId: 'zz', summary: 'an older branch', details: { readFiles: ['README.md'], modifiedFiles: [] } },
  ]
  return list.map((e, i) => ({ ...base, id: `b${i}`, parentId: i ? `b${i - 1}` : 'root', ...e }))
}

describe.each(LINES.map((line) => [line, require(`../agent-${line}`)]))('agent line %s: generateBranchSummary()', (line, ours) => {
  const is078 = line === '0.78'

  test('asks once with the structured format and assembles preamble, text and file lists', async () => {
    const streamFn = scripted([text('## Goal\nCache')])
    const result = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal: undefined, streamFn })
    expect(streamFn.calls).toHaveLength(1)
    const { prompt, options } = streamFn.calls[0]
    expect(prompt).toContain('[User]: try the cache idea')
    expect(prompt).toContain('[Assistant tool calls]: read#t1(path="src/cache.ts"); write#t2(path="src/lru.ts", content="x")')
    expect(prompt).toContain('## Reasoning Digest')
    // 0.78: the output budget follows the reserve and the model, never a fixed 2048; 1.6 sends none.
    expect(options.maxTokens).toBe(is078 ? Math.floor(0.8 * 16384) : undefined)
    expect(result).toEqual({
      summary:
        'The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n## Goal\nCache' +
        '\n\n<read-files>\nREADME.md\nsrc/cache.ts\n</read-files>\n\n<modified-files>\nsrc/lru.ts\n</modified-files>',
      readFiles: ['README.md', 'src/cache.ts'],
      modifiedFiles: ['src/lru.ts'],
    })
    // 1.6 reports the answer's usage (here none) under its own key.
    expect('usage' in result).toBe(!is078)
  })

  test('customInstructions add to the prompt, or replace it with replaceInstructions', async () => {
    const add = scripted([text('S')])
    await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal: undefined, streamFn: add, customInstructions: 'FOCUS' })
    expect(add.calls[0].prompt).toContain('## Goal')
    expect(add.calls[0].prompt).toContain('FOCUS')
    const replace = scripted([text('S')])
    await ours.generateBranchSummary(branchEntries(), {
      model: MODEL,
      apiKey: 'k',
      signal: undefined,
      streamFn: replace,
      customInstructions: 'ONLY THIS',
      replaceInstructions: true,
    })
    expect(replace.calls[0].prompt.endsWith('</conversation>\n\nONLY THIS')).toBe(true)
  })

  test('errors and aborts come back as { error } and { aborted: true }', async () => {
    const failing = scripted([{ role: 'assistant', content: [], stopReason: 'error', errorMessage: 'quota exceeded' }])
    await expect(ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: failing })).resolves.toEqual({
      error: is078 ? 'quota exceeded' : 'Branch summarization failed: quota exceeded',
    })
    const aborted = scripted([{ role: 'assistant', content: [], stopReason: 'aborted' }])
    await expect(ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: aborted })).resolves.toEqual({
      aborted: true,
    })
    const controller = new AbortController()
    const hanging = async () => ({ result: () => new Promise(() => {}) })
    setTimeout(() => controller.abort(), 10)
    await expect(
      ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal: controller.signal, streamFn: hanging }),
    ).resolves.toEqual({ aborted: true })
  })

  test('an error the streamFn throws that is named AbortError, the signal not aborted, rejects as the agent\'s does: it is no abort', async () => {
    const ref = await loadReference(line)
    const named = () => {
      const err = new Error('socket timeout')
      err.name = 'AbortError'
      return err
    }
    const cases = [
      ['result() rejects', (err) => async () => ({ result: async () => Promise.reject(err) })],
      ['streamFn rejects', (err) => async () => Promise.reject(err)],
      ['a DOMException', () => async () => ({ result: async () => Promise.reject(new DOMException('socket timeout', 'AbortError')) })],
    ]
    for (const [, make] of cases) {
      for (const signal of [undefined, new AbortController().signal]) {
        const err = named()
        await expect(ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal, streamFn: make(err) })).rejects.toThrow('socket timeout')
        await expect(ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal, streamFn: make(named()) })).rejects.toThrow('socket timeout')
      }
    }
    const err = named()
    await expect(ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: cases[0][1](err) })).rejects.toBe(err)
  })

  test('nothing to summarize makes no call', async () => {
    const streamFn = scripted([])
    await expect(ours.generateBranchSummary([], { model: MODEL, apiKey: 'k', streamFn })).resolves.toEqual({ summary: 'No content to summarize' })
    expect(streamFn.calls).toHaveLength(0)
    // Even with the signal aborted already, as the agent answers.
    const ref = await loadReference(line)
    const signal = AbortSignal.abort()
    for (const impl of [ref, ours]) {
      await expect(impl.generateBranchSummary([], { model: MODEL, apiKey: 'k', signal, streamFn })).resolves.toEqual({ summary: 'No content to summarize' })
    }
    expect(streamFn.calls).toHaveLength(0)
  })

  test('the same answers assemble the same results as the reference', async () => {
    const ref = await loadReference(line)
    const usage = { input: 3, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 5, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }
    for (const answer of [text('## Goal\nX'), { ...text('## Goal\nY'), usage }, { role: 'assistant', content: [], stopReason: 'error', errorMessage: 'boom' }]) {
      const a = await ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
      const b = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
      expect(b).toEqual(a)
    }
  })
})
