'use strict'
// One soak sample: a generated session, a generated tree and the other
// arguments, run through every function the implementation under test
// shares with its reference, with the parity suites' own comparisons
// (helpers/parity-checks.js) on the parity suites' own generators
// (helpers/generator.js).

const gen = require('../helpers/generator')
const { collectObjects } = require('../helpers/compare')
const { fc } = gen

/**
 * Functions both sides export that the soak does not compare, and why. Any
 * other shared function the sample does not reach is reported by the soak.
 */
const NOT_COMPARED = {
  serializeConversation: "the spec's transcript format, not the reference's (docs/serialization.md; serialize.test.js checks the format)",
}

const sessionArb = fc.oneof(
  { weight: 6, arbitrary: gen.pathEntriesArb() },
  { weight: 2, arbitrary: gen.pathEntriesArb({ maxEntries: 150, shape: 'turns' }) },
  { weight: 1, arbitrary: gen.pathEntriesArb({ oddFileEntries: true }) },
)

const answerArb = fc.oneof(
  { weight: 8, arbitrary: gen.textArb(80).map((text) => ({ role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop' })) },
  { weight: 1, arbitrary: gen.textArb(30).map((errorMessage) => ({ role: 'assistant', content: [], stopReason: 'error', errorMessage: errorMessage || 'provider error' })) },
)

const modelArb = fc.record({
  reasoning: fc.boolean(),
  maxTokens: fc.oneof(fc.constantFrom(4096, 32000), fc.integer({ min: 1, max: 64_000 })),
  contextWindow: fc.constantFrom(6000, 128_000, 200_000),
})

/** Everything one soak session needs, drawn from one seed. */
const sampleArb = fc.record({
  entries: sessionArb,
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
  answers: fc.array(answerArb, { minLength: 2, maxLength: 2 }),
  tree: gen.treeOpsArb,
  queries: fc.array(gen.treeQueryArb, { minLength: 1, maxLength: 3 }),
})

/** The sample of `seed`: the same value on every run and in every process. */
function sampleOf(seed) {
  return fc.sample(sampleArb, { seed, numRuns: 1 })[0]
}

const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }

function modelOf(m) {
  return { id: 'soak-model', name: 'Soak', api: 'openai-completions', provider: 'openai', baseUrl: 'http://127.0.0.1:1', reasoning: m.reasoning, input: ['text'], cost: ZERO_COST, contextWindow: m.contextWindow, maxTokens: m.maxTokens }
}

/** A streamFn answering `answers` in turn, recording each call's options. */
function scriptedStream(answers) {
  const calls = []
  const fn = async (_model, _context, options) => {
    const { signal, ...rest } = options || {}
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
 * the reference writes "No prior history." (documented, as above): there,
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
 * Runs `sample` through `checks` (createChecks(ref, ours)); throws on the
 * first difference. `count(name)` is told each function compared.
 */
async function checkSample(checks, sample, count) {
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
  const copy = (ops) => ({ read: new Set(ops.read), written: new Set(ops.written), edited: new Set(ops.edited) })
  const rOps = copy(sample.fileOps)
  const oOps = copy(sample.fileOps)
  for (const m of messages) {
    ref.extractFileOpsFromMessage(m, rOps)
    ours.extractFileOpsFromMessage(m, oOps)
  }
  expectSame('accumulated fileOps', () => rOps, () => oOps)
  count('computeFileLists')
  count('formatFileOperations')
  for (const ops of prep.ref ? [rOps, prep.ref.fileOps] : [rOps]) {
    const lists = expectSame('computeFileLists(fileOps)', () => ref.computeFileLists(ops), () => ours.computeFileLists(ops))
    expectSame('formatFileOperations(lists)', () => ref.formatFileOperations(lists.ref.readFiles, lists.ref.modifiedFiles), () => ours.formatFileOperations(lists.ref.readFiles, lists.ref.modifiedFiles))
  }

  // Summaries, on a scripted streamFn: the same answers give the same results and the same request options.
  const model = modelOf(sample.model)
  if (prep.ref) {
    count('compact')
    const run = async (impl) => {
      const p = impl.prepareCompaction(entries, settings)
      const streamFn = scriptedStream(sample.answers)
      const result = await impl.compact(p, model, 'soak-key', undefined, sample.customInstructions, undefined, sample.thinkingLevel, streamFn)
      if (impl === ours) return { result: keptPreviousSummaryAsReference(withoutEchoedInstructions(result, sample.customInstructions), p), calls: streamFn.calls }
      return { result, calls: streamFn.calls }
    }
    await expectSameAsync('compact(preparation)', () => run(ref), () => run(ours))
    count('generateSummary')
    const summarize = async (impl) => {
      const streamFn = scriptedStream(sample.answers)
      const text = await impl.generateSummary(prep.ref.messagesToSummarize, model, settings.reserveTokens, 'soak-key', undefined, undefined, sample.customInstructions, sample.previousSummary, sample.thinkingLevel, streamFn)
      return { text, calls: streamFn.calls }
    }
    await expectSameAsync('generateSummary(messagesToSummarize)', () => summarize(ref), () => summarize(ours))
  }

  // Branches: the path itself, and a tree built with the reference's SessionManager.
  count('prepareBranchEntries')
  checks.checkBranchPreparation(entries, sample.budget)
  const { session, ids } = gen.buildTree(ref.SessionManager, sample.tree)
  count('collectEntriesForBranchSummary')
  for (const q of sample.queries) {
    const collected = checks.checkCollect(session, gen.resolveTreeId(q.old, ids), gen.resolveTreeId(q.target, ids))
    for (const b of q.budgets) checks.checkBranchPreparation(collected, b)
    if (collected.length > 0) {
      count('generateBranchSummary')
      const branch = (impl) => impl.generateBranchSummary(collected, { model, apiKey: 'soak-key', signal: undefined, customInstructions: sample.customInstructions, streamFn: scriptedStream(sample.answers) })
      await expectSameAsync('generateBranchSummary(collected)', () => branch(ref), () => branch(ours))
    }
  }
}

module.exports = { sampleArb, sampleOf, checkSample, NOT_COMPARED }
