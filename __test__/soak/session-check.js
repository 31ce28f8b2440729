'use strict'
// One soak sample of an agent line: a generated session and tree of that
// line (1.6: system messages, context edits, nested calls, zero usage, null
// contents) and the other arguments, run through every function the
// implementation under test shares with that line's reference, with the
// parity suites' own comparisons (helpers/parity-checks.js) on the parity
// suites' own generators (helpers/generator.js).

const gen = require('../helpers/generator')
const { collectObjects } = require('../helpers/compare')
const { recorder, UUID_V7 } = require('../helpers/summary')
const { fc } = gen

/**
 * Functions both sides export that the soak does not compare, and why. Any
 * other shared function the sample does not reach is reported by the soak.
 */
const NOT_COMPARED = {
  serializeConversation: "the spec's transcript format, not the reference's (docs/serialization.md; serialize.test.js checks the format)",
}

/** The sessions of agent line `line`, as its agent writes them (1.6: system messages, context edits, nested calls, zero usage, null contents). */
function sessionArbOf(line) {
  return fc.oneof(
    { weight: 6, arbitrary: gen.pathEntriesArb({ line }) },
    { weight: 2, arbitrary: gen.pathEntriesArb({ line, maxEntries: 150, shape: 'turns' }) },
    { weight: 1, arbitrary: gen.pathEntriesArb({ line, oddFileEntries: true }) },
  )
}

/** Error texts pi-ai's retry loop retries (1.6 retries summary requests under a policy). */
const RETRYABLE_ERRORS = ['503 Service Unavailable', 'overloaded_error: Overloaded', 'terminated', 'fetch failed', 'rate limit exceeded']

/** The model's answers: 0.78's two kinds; 1.6 adds usage, length stops, tool calls and retryable errors. */
function answerArbOf(line) {
  // A finished answer has some text: one without is the empty-answer difference, not compared here.
  const stop = gen.textArb(80).map((text) => ({ role: 'assistant', content: [{ type: 'text', text: text.trim() === '' ? `${text}summary` : text }], stopReason: 'stop' }))
  const error = gen.textArb(30).map((errorMessage) => ({ role: 'assistant', content: [], stopReason: 'error', errorMessage: errorMessage || 'provider error' }))
  if (line !== '1.6') return fc.oneof({ weight: 8, arbitrary: stop }, { weight: 1, arbitrary: error })
  const answer = fc.oneof(
    { weight: 8, arbitrary: stop },
    { weight: 1, arbitrary: error },
    { weight: 1, arbitrary: fc.constantFrom(...RETRYABLE_ERRORS).map((errorMessage) => ({ role: 'assistant', content: [], stopReason: 'error', errorMessage })) },
    { weight: 1, arbitrary: gen.textArb(20).map((text) => ({ role: 'assistant', content: [{ type: 'text', text }], stopReason: 'length' })) },
    { weight: 1, arbitrary: fc.constant({ role: 'assistant', content: [{ type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'a.ts' } }], stopReason: 'toolUse' }) },
  )
  // A 1.6 answer always carries its usage (a split turn sums both). A length
  // stop with no output may fill the window, which this package takes for an
  // overflow and retries (the overflow-retries difference, not compared here):
  // its length stops have some output.
  return fc
    .tuple(answer, gen.usageArb)
    .map(([a, usage]) => ({ ...a, usage: a.stopReason === 'length' && usage.output === 0 ? { ...usage, output: 1 } : usage }))
}

const modelArb = fc.record({
  reasoning: fc.boolean(),
  maxTokens: fc.oneof(fc.constantFrom(4096, 32000), fc.integer({ min: 1, max: 64_000 })),
  contextWindow: fc.constantFrom(6000, 128_000, 200_000),
})

/** 1.6's retry policy for summary requests: none, off, or a few retries without delay. */
const retryArb = fc.oneof(
  fc.constant(undefined),
  fc.constant({ enabled: false }),
  fc.integer({ min: 0, max: 3 }).map((maxRetries) => ({ enabled: true, maxRetries, baseDelayMs: 0 })),
)

/** Everything one soak session of agent line `line` needs, drawn from one seed. */
function sampleArbOf(line) {
  const common = {
    entries: sessionArbOf(line),
    settings: gen.compactionSettingsArb,
    smallKeep: fc.integer({ min: 2, max: 300 }),
    range: fc.tuple(fc.nat(), fc.nat()),
    cutKeep: gen.keepRecentTokensArb,
    turn: fc.tuple(fc.nat(), fc.nat()),
    window: fc.oneof(fc.nat(300_000), gen.oddNumberArb),
    budget: fc.oneof(fc.constant(0), fc.nat(5000)),
    fileOps: gen.fileOpsArb,
    model: modelArb,
    thinkingLevel: fc.constantFrom(undefined, 'off', 'low', 'high'),
    customInstructions: fc.option(gen.textArb(40), { nil: undefined }),
    previousSummary: fc.option(gen.textArb(40), { nil: undefined }),
    answers: fc.array(answerArbOf(line), { minLength: 2, maxLength: 2 }),
    tree: gen.treeOpsArbOf(line),
    queries: fc.array(gen.treeQueryArb, { minLength: 1, maxLength: 3 }),
  }
  if (line !== '1.6') return fc.record(common)
  return fc.record({
    ...common,
    projectionCut: fc.tuple(fc.nat(), fc.boolean()),
    sessionId: fc.option(fc.constantFrom('soak-session', ''), { nil: undefined }),
    retry: retryArb,
    label: fc.oneof(fc.constantFrom('Summarization', 'Branch summarization'), gen.textArb(12)),
  })
}

const SAMPLE_ARBS = { '0.78': sampleArbOf('0.78'), '1.6': sampleArbOf('1.6') }

/** The sample of `seed` on agent line `line`: the same value on every run and in every process. */
function sampleOf(seed, line = '0.78') {
  const arb = SAMPLE_ARBS[line]
  if (!arb) throw new TypeError(`no soak sample for agent line ${JSON.stringify(line)}`)
  return fc.sample(arb, { seed, numRuns: 1 })[0]
}

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }

function modelOf(m) {
  return { id: 'soak-model', name: 'Soak', api: 'openai-completions', provider: 'openai', baseUrl: 'http://127.0.0.1:1', reasoning: m.reasoning, input: ['text'], cost: ZERO_COST, contextWindow: m.contextWindow, maxTokens: m.maxTokens }
}

/**
 * A streamFn answering `answers` in turn, recording each call's options (a
 * fresh session id as the marker "fresh UUIDv7", since each side makes its own).
 */
function scriptedStream(answers) {
  const calls = []
  const fn = async (_model, _context, options) => {
    const { signal, ...rest } = options || {}
    if (typeof rest.sessionId === 'string' && UUID_V7.test(rest.sessionId)) rest.sessionId = 'fresh UUIDv7'
    calls.push({ ...rest, signal: signal === undefined ? 'none' : 'given' })
    const answer = answers[(calls.length - 1) % answers.length]
    return { result: async () => answer }
  }
  fn.calls = calls
  return fn
}

/**
 * compact()'s result carries the custom instructions it was given (a
 * documented difference, README "Differences from the reference"): they must
 * be the ones given (none for an empty string), and are then left out of
 * the comparison.
 */
function withoutEchoedInstructions(result, customInstructions) {
  if (!result || typeof result !== 'object') return result
  const { customInstructions: echoed, ...rest } = result
  const has = Object.prototype.hasOwnProperty.call(result, 'customInstructions')
  // An empty string is no instructions, as for the reference's prompt.
  if (!customInstructions ? has : echoed !== customInstructions) {
    throw new Error(`compact(): result.customInstructions ${JSON.stringify(echoed)}, given ${JSON.stringify(customInstructions)}`)
  }
  return rest
}

/**
 * A split turn with no history before it keeps the previous summary where
 * 0.78's reference writes "No prior history." (documented, as above): there,
 * ours must read as the reference's with that part replaced.
 */
function keptPreviousSummaryAsReference(result, prep) {
  if (!result || typeof result.summary !== 'string') return result
  if (!prep.isSplitTurn || prep.messagesToSummarize.length > 0 || !prep.previousSummary) return result
  const kept = `${prep.previousSummary}\n\n---\n\n**Turn Context (split turn):**`
  if (!result.summary.startsWith(kept)) return result
  return { ...result, summary: `No prior history.${result.summary.slice(prep.previousSummary.length)}` }
}

/**
 * Runs `sample` (sampleOf(seed, line)) through `checks` (createChecks(ref,
 * ours) of that line); throws on the first difference. `count(name)` is told
 * each function compared.
 */
async function checkSample(checks, sample, count, line = '0.78') {
  const line16 = line === '1.6'
  const { ref, ours, expectSame, expectSameAsync } = checks
  const { entries, settings } = sample

  // Planning.
  count('prepareCompaction')
  const prep = checks.checkPrepareCompaction(entries, settings)
  checks.checkPrepareCompaction(entries, { ...ref.DEFAULT_COMPACTION_SETTINGS })
  checks.checkPrepareCompaction(entries, { enabled: true, reserveTokens: 16384, keepRecentTokens: sample.smallKeep })

  count('findCutPoint')
  const start = sample.range[0] % (entries.length + 1)
  const end = start + (sample.range[1] % (entries.length - start + 1))
  expectSame(`findCutPoint(entries[${entries.length}], ${start}, ${end}, ${sample.cutKeep})`, () => ref.findCutPoint(entries, start, end, sample.cutKeep), () => ours.findCutPoint(entries, start, end, sample.cutKeep))
  expectSame(`findCutPoint(entries[${entries.length}], 0, ${entries.length}, ${sample.cutKeep})`, () => ref.findCutPoint(entries, 0, entries.length, sample.cutKeep), () => ours.findCutPoint(entries, 0, entries.length, sample.cutKeep))

  if (entries.length > 0) {
    count('findTurnStartIndex')
    const entryIndex = sample.turn[0] % entries.length
    const startIndex = sample.turn[1] % (entryIndex + 2)
    expectSame(`findTurnStartIndex(entries[${entries.length}], ${entryIndex}, ${startIndex})`, () => ref.findTurnStartIndex(entries, entryIndex, startIndex), () => ours.findTurnStartIndex(entries, entryIndex, startIndex))
  }

  // Tokens and usage.
  count('getLastAssistantUsage')
  checks.checkLastAssistantUsage(entries)
  const messages = checks.messagesFor(entries)
  count('estimateTokens')
  for (const m of messages) expectSame(`estimateTokens(${m.role} message)`, () => ref.estimateTokens(m), () => ours.estimateTokens(m))
  count('estimateContextTokens')
  expectSame('estimateContextTokens(session messages)', () => ref.estimateContextTokens(messages), () => ours.estimateContextTokens(messages))
  if (line16) {
    count('estimateProjectedContextTokens')
    checks.checkProjectedContextTokens(entries, ...sample.projectionCut)
  }
  count('calculateContextTokens')
  count('shouldCompact')
  for (const e of entries) {
    const usage = e.type === 'message' && e.message.role === 'assistant' ? e.message.usage : undefined
    if (!usage) continue
    const tokens = expectSame('calculateContextTokens(usage)', () => ref.calculateContextTokens(usage), () => ours.calculateContextTokens(usage)).ref
    expectSame(`shouldCompact(${tokens}, ${sample.window}, settings)`, () => ref.shouldCompact(tokens, sample.window, settings), () => ours.shouldCompact(tokens, sample.window, settings))
  }
  expectSame(`shouldCompact(${sample.budget}, ${sample.window}, settings)`, () => ref.shouldCompact(sample.budget, sample.window, settings), () => ours.shouldCompact(sample.budget, sample.window, settings))

  // Messages.
  count('convertToLlm')
  expectSame('convertToLlm(messages)', () => ref.convertToLlm(messages), () => ours.convertToLlm(messages), collectObjects(messages))
  for (const m of messages) {
    if (m.role !== 'bashExecution') continue
    count('bashExecutionToText')
    expectSame('bashExecutionToText(message)', () => ref.bashExecutionToText(m), () => ours.bashExecutionToText(m))
  }
  for (const e of entries) {
    if (e.type === 'compaction') {
      count('createCompactionSummaryMessage')
      expectSame('createCompactionSummaryMessage(entry)', () => ref.createCompactionSummaryMessage(e.summary, e.tokensBefore, e.timestamp), () => ours.createCompactionSummaryMessage(e.summary, e.tokensBefore, e.timestamp))
    } else if (e.type === 'branch_summary') {
      count('createBranchSummaryMessage')
      expectSame('createBranchSummaryMessage(entry)', () => ref.createBranchSummaryMessage(e.summary, e.fromId, e.timestamp), () => ours.createBranchSummaryMessage(e.summary, e.fromId, e.timestamp))
    } else if (e.type === 'custom_message') {
      count('createCustomMessage')
      expectSame('createCustomMessage(entry)', () => ref.createCustomMessage(e.customType, e.content, e.display, e.details, e.timestamp), () => ours.createCustomMessage(e.customType, e.content, e.display, e.details, e.timestamp))
    }
  }

  // File operations.
  count('createFileOps')
  count('extractFileOpsFromMessage')
  for (const m of messages) checks.checkExtractFileOps(m)
  const rOps = checks.checkAccumulatedFileOps(messages, sample.fileOps)
  count('computeFileLists')
  count('formatFileOperations')
  for (const ops of prep.ref ? [rOps, prep.ref.fileOps] : [rOps]) checks.checkFileLists(ops)

  // Summaries, on a scripted streamFn: the same answers give the same results and the same request options.
  // 1.6 also takes env, a retry policy, its callbacks and a session id.
  const model = modelOf(sample.model)
  const extra = (callbacks) => (line16 ? [undefined, sample.retry, callbacks, sample.sessionId] : [])
  if (prep.ref) {
    count('compact')
    const run = async (impl) => {
      const p = impl.prepareCompaction(entries, settings)
      const streamFn = scriptedStream(sample.answers)
      const callbacks = recorder()
      const result = await impl.compact(p, model, 'soak-key', undefined, sample.customInstructions, undefined, sample.thinkingLevel, streamFn, ...extra(callbacks))
      if (impl === ours) {
        const asGiven = withoutEchoedInstructions(result, sample.customInstructions)
        // 1.6 keeps the previous summary there too: only 0.78 differs.
        return { result: line16 ? asGiven : keptPreviousSummaryAsReference(asGiven, p), calls: streamFn.calls, retries: callbacks.log }
      }
      return { result, calls: streamFn.calls, retries: callbacks.log }
    }
    await expectSameAsync('compact(preparation)', () => run(ref), () => run(ours))
    const summarizers = line16 ? ['generateSummary', 'generateSummaryWithUsage'] : ['generateSummary']
    for (const name of summarizers) {
      count(name)
      const summarize = async (impl) => {
        const streamFn = scriptedStream(sample.answers)
        const callbacks = recorder()
        const value = await impl[name](prep.ref.messagesToSummarize, model, settings.reserveTokens, 'soak-key', undefined, undefined, sample.customInstructions, sample.previousSummary, sample.thinkingLevel, streamFn, ...extra(callbacks))
        return { value, calls: streamFn.calls, retries: callbacks.log }
      }
      await expectSameAsync(`${name}(messagesToSummarize)`, () => summarize(ref), () => summarize(ours))
    }
  }
  if (line16) {
    // The request itself: the caller's context and options, the line's additions, the retries.
    count('completeSummarization')
    const context = { systemPrompt: 'soak system prompt', messages: messages.filter((m) => m.role === 'user').slice(0, 2) }
    const complete = async (impl) => {
      const streamFn = scriptedStream(sample.answers)
      const callbacks = recorder()
      const options = sample.sessionId === undefined ? { apiKey: 'soak-key' } : { apiKey: 'soak-key', sessionId: sample.sessionId }
      const value = await impl.completeSummarization(model, context, options, streamFn, sample.retry, callbacks)
      return { value, calls: streamFn.calls, retries: callbacks.log }
    }
    await expectSameAsync('completeSummarization(context)', () => complete(ref), () => complete(ours))
    count('getSummarizationFailure')
    for (const answer of sample.answers) {
      expectSame(`getSummarizationFailure(${answer.stopReason} answer, label)`, () => ref.getSummarizationFailure(answer, sample.label), () => ours.getSummarizationFailure(answer, sample.label))
    }
  }

  // Branches: the path itself, and a tree built with the reference's SessionManager.
  count('prepareBranchEntries')
  checks.checkBranchPreparation(entries, sample.budget)
  // (A 1.6 tree also holds system messages and context edits.)
  const { session, ids } = gen.buildTree(ref.SessionManager, sample.tree)
  count('collectEntriesForBranchSummary')
  for (const q of sample.queries) {
    const collected = checks.checkCollect(session, gen.resolveTreeId(q.old, ids), gen.resolveTreeId(q.target, ids))
    for (const b of q.budgets) checks.checkBranchPreparation(collected, b)
    if (collected.length > 0) {
      count('generateBranchSummary')
      const branch = async (impl) => {
        const streamFn = scriptedStream(sample.answers)
        const callbacks = recorder()
        const more = line16 ? { retry: sample.retry, callbacks } : {}
        const value = await impl.generateBranchSummary(collected, { model, apiKey: 'soak-key', signal: undefined, customInstructions: sample.customInstructions, streamFn, ...more })
        // 0.78's branch request options differ by design (README, differences.js "branch-output-budget").
        return line16 ? { value, calls: streamFn.calls, retries: callbacks.log } : value
      }
      await expectSameAsync('generateBranchSummary(collected)', () => branch(ref), () => branch(ours))
    }
  }
}

module.exports = { sampleArbOf, sampleOf, checkSample, NOT_COMPARED }
