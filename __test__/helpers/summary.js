'use strict'
// Shared pieces of the summarizing suites: a scripted streamFn that records
// every call (context, options, the objects themselves), recorded retry
// callbacks, a chained session whose cut splits a turn, and answers.

const X = (n) => 'x'.repeat(n)

const MODEL = {
  id: 'gpt-test',
  name: 'GPT test',
  api: 'openai-completions',
  provider: 'openai',
  baseUrl: 'http://127.0.0.1:1',
  reasoning: true,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 8000,
}

const usage = (input, output, extra = {}) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + output,
  cost: { input: input / 1000, output: output / 1000, cacheRead: 0, cacheWrite: 0, total: (input + output) / 1000 },
  ...extra,
})

const text = (t, extra = {}) => ({ role: 'assistant', content: [{ type: 'text', text: t }], stopReason: 'stop', usage: usage(10, 5), ...extra })
const failure = (message, extra = {}) => ({ role: 'assistant', content: [], stopReason: 'error', errorMessage: message, usage: usage(0, 0), ...extra })

/** The text of the request's user message, whichever context shape it has. */
function promptOf(context) {
  const user = context.messages.find((m) => m.role === 'user')
  return user.content[0].text
}

/**
 * A streamFn answering from `script` (answers, Errors to reject with, or
 * functions of the options); records `{ model, context, options }` per call.
 */
function scripted(script) {
  const steps = [...script]
  const fn = async (model, context, options) => {
    fn.calls.push({ model, context, options, prompt: promptOf(context) })
    const step = steps.shift()
    return {
      result: async () => {
        if (step === undefined) throw new Error('script ran out')
        if (step instanceof Error) throw step
        return typeof step === 'function' ? step(options) : step
      },
    }
  }
  fn.calls = []
  return fn
}

/** Retry callbacks that record each call as [name, ...args]; `log` is shared when given. */
function recorder(log = []) {
  return {
    log,
    onRetryScheduled: async (...args) => {
      log.push(['scheduled', ...args])
    },
    onRetryAttemptStart: async (...args) => {
      log.push(['attemptStart', ...args])
    },
    onRetryFinished: async (...args) => {
      log.push(['finished', ...args])
    },
  }
}

/**
 * A chained session whose keepRecentTokens = 150 cut splits the last turn, with thinking and file tool calls;
 * the history holds three user rounds, so that an overflow retry has a round to leave out.
 */
function splitSession() {
  let n = 0
  const entry = (message) => ({ type: 'message', id: `e${n}`, parentId: n ? `e${n - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message, _n: n++ })
  const assistant = (t, extra = []) => ({
    role: 'assistant',
    content: [{ type: 'thinking', thinking: 'Considering the failing test' }, { type: 'text', text: t }, ...extra],
    usage: usage(100, 10),
    stopReason: 'toolUse',
    provider: 'openai',
    model: 'gpt-test',
    timestamp: 2,
  })
  const entries = [
    entry({ role: 'user', content: 'look at the repository', timestamp: 1 }),
    entry({ ...assistant(X(200)), stopReason: 'stop' }),
    entry({ role: 'user', content: 'and the failing test', timestamp: 1 }),
    entry({ ...assistant(X(200)), stopReason: 'stop' }),
    entry({ role: 'user', content: 'fix the parser', timestamp: 1 }),
    entry(assistant(X(400), [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'src/parse.rs' } }])),
    entry({ role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'fn parse() {}' }], isError: false, timestamp: 3 }),
    entry({ role: 'user', content: 'now the tests', timestamp: 4 }),
    entry(assistant(X(400), [{ type: 'toolCall', id: 'c2', name: 'edit', arguments: { path: 'tests/a.rs' } }])),
    entry({ role: 'toolResult', toolCallId: 'c2', toolName: 'edit', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 5 }),
    entry(assistant(X(400))),
  ]
  return entries.map(({ _n, ...e }) => e)
}

const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 150 }

/** The reference's preparation of the split session: the same input for both implementations. */
function splitPreparation(ref) {
  const prep = ref.prepareCompaction(splitSession(), SETTINGS)
  if (!prep || !prep.isSplitTurn || prep.messagesToSummarize.length === 0) throw new Error('expected a split turn with history')
  return prep
}

/** The same preparation with no split: one request. */
function plainPreparation(ref) {
  return { ...splitPreparation(ref), isSplitTurn: false, turnPrefixMessages: [] }
}

/** Entries of a branch being left (for generateBranchSummary). */
function branchEntries() {
  return [
    { role: 'user', content: 'try the cache idea', timestamp: 1 },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'An LRU might do' },
        { type: 'text', text: 'Reading the cache module.' },
        { type: 'toolCall', id: 't1', name: 'read', arguments: { path: 'src/cache.ts' } },
      ],
      usage: usage(1, 1),
      stopReason: 'toolUse',
      timestamp: 2,
    },
  ].map((message, i) => ({ type: 'message', id: `b${i}`, parentId: i ? `b${i - 1}` : 'root', timestamp: '2026-01-01T00:00:00.000Z', message }))
}

/** [name, implementation] pairs: the reference first, then ours. */
const sides = (ref, ours) => [
  ['ref', ref],
  ['ours', ours],
]

/**
 * A streamFn that behaves like pi-ai's on abort: its result() waits until
 * the request's signal aborts and then resolves with what the request had
 * streamed so far, with stopReason "aborted", rather than rejecting.
 */
function abortable(partial = 'half a summ') {
  const fn = async (model, context, options) => {
    fn.calls.push(context)
    return {
      result: () =>
        new Promise((resolve) => {
          const done = () => resolve({ role: 'assistant', content: [{ type: 'text', text: partial }], stopReason: 'aborted' })
          if (options.signal.aborted) done()
          else options.signal.addEventListener('abort', done, { once: true })
        }),
    }
  }
  fn.calls = []
  return fn
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

module.exports = {
  X,
  MODEL,
  SETTINGS,
  UUID_V7,
  usage,
  text,
  failure,
  promptOf,
  scripted,
  recorder,
  sides,
  abortable,
  splitSession,
  splitPreparation,
  plainPreparation,
  branchEntries,
}
