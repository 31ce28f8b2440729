'use strict'
// prime-compaction's exports for one agent line: loads the native binding
// and adapts its results to the reference's shapes (Sets, the caller's own
// message objects). The work itself happens in Rust, and so does every
// difference between agent lines: an entry point names its line, and the
// exports pass it on.

const native = require('../binding.js')
const { flatMessages, releaseFlat, assembleTranscript, projectionOfPlan } = require('../flat-messages.js')

// The agent's context reads summaries between these exact strings.
const {
  compactionPrefix: COMPACTION_SUMMARY_PREFIX,
  compactionSuffix: COMPACTION_SUMMARY_SUFFIX,
  branchPrefix: BRANCH_SUMMARY_PREFIX,
  branchSuffix: BRANCH_SUMMARY_SUFFIX,
} = native.summaryWrappers()

const DEFAULT_COMPACTION_SETTINGS = native.defaultCompactionSettings()

/**
 * Passed to the transcript builders: the reference prints each tool-call
 * argument as `${k}=${JSON.stringify(v)}` over `Object.entries`, and one call
 * here per tool call is cheaper than one JSON.stringify call from Rust per argument.
 */
function argumentEntries(args) {
  const out = []
  for (const [k, v] of Object.entries(args)) out.push(k, JSON.stringify(v))
  return out
}

/** A transcript builder's result: messages read flat where they can be. */
function transcript(build, messages, options) {
  const flat = flatMessages(messages)
  let recipe
  try {
    recipe = build(messages, options, argumentEntries, flat)
  } finally {
    releaseFlat(flat)
  }
  return assembleTranscript(recipe)
}

function createCustomMessage(customType, content, display, details, timestamp) {
  return { role: 'custom', customType, content, display, details, timestamp: new Date(timestamp).getTime() }
}

function createBranchSummaryMessage(summary, fromId, timestamp) {
  return { role: 'branchSummary', summary, fromId, timestamp: new Date(timestamp).getTime() }
}

function createCompactionSummaryMessage(summary, tokensBefore, timestamp) {
  return { role: 'compactionSummary', summary, tokensBefore, timestamp: new Date(timestamp).getTime() }
}

/** The message an entry contributes to a summary: the caller's own object, or a new one where the reference builds one. */
function messageOfEntry(entry) {
  switch (entry.type) {
    case 'message':
      return entry.message
    case 'custom_message':
      return createCustomMessage(entry.customType, entry.content, entry.display, entry.details, entry.timestamp)
    case 'branch_summary':
      return createBranchSummaryMessage(entry.summary, entry.fromId, entry.timestamp)
    default:
      return createCompactionSummaryMessage(entry.summary, entry.tokensBefore, entry.timestamp)
  }
}

function messagesAt(entries, indices) {
  const out = new Array(indices.length)
  for (let i = 0; i < indices.length; i++) out[i] = messageOfEntry(entries[indices[i]])
  return out
}

function createFileOps() {
  return { read: new Set(), written: new Set(), edited: new Set() }
}

/**
 * The file Sets of a plan: first the recorded files of the entries the plan
 * names (their `details` is typed `unknown`, so the values are copied as
 * they are), then the tool calls' paths, in the plan's order.
 */
function fileOpsOfPlan(entries, detailsFrom, plan) {
  const fileOps = createFileOps()
  for (const i of detailsFrom) {
    const details = entries[i].details
    if (Array.isArray(details.readFiles)) for (const f of details.readFiles) fileOps.read.add(f)
    if (Array.isArray(details.modifiedFiles)) for (const f of details.modifiedFiles) fileOps.edited.add(f)
  }
  for (const f of plan.read) fileOps.read.add(f)
  for (const f of plan.written) fileOps.written.add(f)
  for (const f of plan.edited) fileOps.edited.add(f)
  return fileOps
}

function prepareCompaction(pathEntries, settings) {
  return preparationOf(pathEntries, native.prepareCompaction(pathEntries, settings), settings)
}

/** The preparation for a native plan (entry indices), on the caller's own objects. */
function preparationOf(pathEntries, plan, settings) {
  if (plan === undefined) return undefined
  const previous = plan.previousCompactionIndex
  return {
    firstKeptEntryId: pathEntries[plan.firstKeptEntryIndex].id,
    messagesToSummarize: messagesAt(pathEntries, plan.summarize),
    turnPrefixMessages: messagesAt(pathEntries, plan.turnPrefix),
    isSplitTurn: plan.isSplitTurn,
    tokensBefore: plan.tokensBefore,
    previousSummary: previous >= 0 ? pathEntries[previous].summary : undefined,
    fileOps: fileOpsOfPlan(pathEntries, plan.detailsFrom >= 0 ? [plan.detailsFrom] : [], plan),
    settings,
  }
}

/** How long one slice of prepareCompactionAsync's reading may hold the JS thread. */
const ASYNC_SLICE_MS = 3

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/**
 * Longer arrays go to the synchronous call: no session held in memory is this
 * long, a huge sparse array is, and the synchronous call (which reads from
 * the end) answers it at once instead of writing billions of nulls.
 */
const ASYNC_MAX_ENTRIES = 2 ** 24

/** JSON.stringify(pathEntries.slice(first, end)); a failure names the entry. */
function entriesJson(pathEntries, first, end) {
  try {
    return JSON.stringify(pathEntries.slice(first, end))
  } catch (err) {
    for (let i = first; i < end; i++) {
      try {
        JSON.stringify(pathEntries[i])
      } catch (inner) {
        throw new TypeError(`pathEntries[${i}]: cannot be read as JSON: ${inner && inner.message}`, { cause: inner })
      }
    }
    throw err
  }
}

/**
 * prepareCompaction as a Promise. The entries are read on the JS thread in
 * slices of about ASYNC_SLICE_MS (as V8's JSON.stringify gives them, as a
 * session file stores them), with the event loop running between slices;
 * the native side parses each slice on a thread of its own as it arrives
 * and plans on the libuv pool. Do not change the entries until it settles.
 */
async function prepareCompactionAsync(pathEntries, settings) {
  // The same TypeErrors as the synchronous call for a non-array and for bad settings.
  if (!Array.isArray(pathEntries) || pathEntries.length > ASYNC_MAX_ENTRIES) return prepareCompaction(pathEntries, settings)
  const json = new native.EntriesJson(settings)
  const n = pathEntries.length
  let batch = 32
  let i = 0
  try {
    while (i < n) {
      const sliceStart = performance.now()
      do {
        const start = performance.now()
        const end = Math.min(n, i + batch)
        json.push(entriesJson(pathEntries, i, end), i, end - i)
        i = end
        // Batches of about a millisecond: big enough to be cheap, small
        // enough not to overrun the slice.
        const took = performance.now() - start
        if (took < 0.5) batch *= 2
        else if (took > 1.5 && batch > 1) batch = Math.ceil(batch / 2)
      } while (i < n && performance.now() - sliceStart < ASYNC_SLICE_MS)
      if (i < n) await nextTurn()
    }
  } catch (err) {
    // Let the parser thread finish and free what it holds now, not at GC.
    json.cancel()
    throw err
  }
  return preparationOf(pathEntries, await json.plan(), settings)
}

/**
 * projectForSummary: the messages are read flat (with their timestamps),
 * the native side projects them and returns a plan, and the new message
 * objects are built from it in JS (projectionOfPlan), where making objects
 * is cheap.
 */
function projectForSummary(messages, options) {
  const flat = flatMessages(messages, true)
  let plan
  try {
    plan = native.projectionPlan(messages, options, argumentEntries, flat)
  } finally {
    releaseFlat(flat)
  }
  return projectionOfPlan(plan, flat)
}

function collectEntriesForBranchSummary(session, oldLeafId, targetId) {
  // getBranch(undefined) starts at the session's leaf; the walk itself needs only getEntry.
  const target = oldLeafId && targetId == null ? session.getLeafId() : targetId
  return native.collectEntriesForBranchSummary(session, oldLeafId, target)
}

function prepareBranchEntries(entries, tokenBudget = 0) {
  const plan = native.prepareBranchEntries(entries, tokenBudget)
  return {
    messages: messagesAt(entries, plan.messages),
    fileOps: fileOpsOfPlan(entries, plan.detailsFrom, plan),
    totalTokens: plan.totalTokens,
  }
}

function getLastAssistantUsage(entries) {
  const index = native.lastAssistantUsageIndex(entries)
  return index < 0 ? undefined : entries[index].message.usage
}

const FILE_OP_SETS = ['read', 'written', 'edited']

function extractFileOpsFromMessage(message, fileOps) {
  const { kinds, paths } = native.fileOpsOfMessage(message)
  for (let i = 0; i < kinds.length; i++) fileOps[FILE_OP_SETS[kinds[i]]].add(paths[i])
}

function computeFileLists(fileOps) {
  const read = [...fileOps.read]
  const written = [...fileOps.written]
  const edited = [...fileOps.edited]
  const lists = native.computeFileLists(read, written, edited)
  // Indices into [...read, ...edited, ...written]: the values themselves come back.
  const all = read.concat(edited, written)
  return {
    readFiles: Array.from(lists.readFiles, (i) => all[i]),
    modifiedFiles: Array.from(lists.modifiedFiles, (i) => all[i]),
  }
}

function splitUserRounds(messages) {
  const starts = native.userRoundStarts(messages)
  const rounds = new Array(starts.length)
  for (let i = 0; i < starts.length; i++) {
    rounds[i] = messages.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : messages.length)
  }
  return rounds
}

const SUMMARIZATION_SYSTEM_PROMPT = native.summarizationSystemPrompt()

function abortError(signal) {
  const err = new Error('Compaction aborted')
  err.name = 'AbortError'
  if (signal && signal.reason !== undefined) err.cause = signal.reason
  return err
}

/** Rejects as soon as `signal` aborts, whatever `promise` does. */
function unlessAborted(promise, signal) {
  if (!signal) return promise
  if (signal.aborted) {
    // Settled here or not, `promise` must not become an unhandled rejection.
    Promise.resolve(promise).catch(() => {})
    return Promise.reject(abortError(signal))
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal))
    signal.addEventListener('abort', onAbort, { once: true })
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (err) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}

async function defaultComplete(model, context, options) {
  let ai
  try {
    ai = await import('@earendil-works/pi-ai')
  } catch {
    throw new Error(
      'prime-compaction: no streamFn was passed and @earendil-works/pi-ai is not installed; ' +
        'pass a streamFn(model, context, options) or install @earendil-works/pi-ai',
    )
  }
  return ai.completeSimple(model, context, options)
}

/** One model call, the way the reference makes it: through streamFn when given. */
async function callModel(model, context, options, streamFn, signal) {
  if (!streamFn) return unlessAborted(defaultComplete(model, context, options), signal)
  const stream = await unlessAborted(streamFn(model, context, options), signal)
  return unlessAborted(stream.result(), signal)
}

/** Runs a native summarization job: each request goes out in turn, never in parallel. */
async function drive(job, model, apiKey, headers, signal, thinkingLevel, streamFn, inspect) {
  for (let request = job.next(); request !== null; request = job.next()) {
    if (signal && signal.aborted) throw abortError(signal)
    const context = {
      systemPrompt: request.systemPrompt,
      messages: [{ role: 'user', content: [{ type: 'text', text: request.prompt }], timestamp: Date.now() }],
    }
    const options = { maxTokens: request.maxTokens, signal, apiKey, headers }
    if (model.reasoning && thinkingLevel && thinkingLevel !== 'off') options.reasoning = thinkingLevel
    const response = await callModel(model, context, options, streamFn, signal)
    if (inspect) inspect(response)
    try {
      job.respond(response)
    } catch (err) {
      // The job's own verdict on the answer, as opposed to a failing streamFn.
      if (err && !(err instanceof TypeError)) err.summarizationFailure = true
      throw err
    }
  }
}

/** The native job for `preparation`, with its file lists computed as computeFileLists does. */
function startCompactionJob(preparation, model, customInstructions) {
  const lists = computeFileLists((preparation && preparation.fileOps) || createFileOps())
  const job = native.startCompaction(preparation, lists, model, customInstructions, argumentEntries)
  return { job, lists }
}

/**
 * What compact() resolves with once its signal has aborted: no summary, no
 * cut, nothing a caller could store. The agent reads the result's fields
 * and then checks the signal, as it does for the reference's compact() (which
 * resolves with whatever text the aborted request left); a rejection it
 * would report as a failure.
 */
function abortedCompaction() {
  return { aborted: true }
}

async function compact(preparation, model, apiKey, headers, customInstructions, signal, thinkingLevel, streamFn) {
  if (signal && signal.aborted) return abortedCompaction()
  const { job, lists } = startCompactionJob(preparation, model, customInstructions)
  try {
    try {
      await drive(job, model, apiKey, headers, signal, thinkingLevel, streamFn)
    } catch (err) {
      if (signal && signal.aborted) return abortedCompaction()
      throw err
    }
    const result = job.result()
    // The lists' own values: details are `unknown`, so not always strings.
    result.details = lists
    return result
  } finally {
    job.release()
  }
}

/**
 * The requests compact() would send for `preparation`, built by the same job,
 * without calling a model: the first attempt of each part (history, then the
 * turn prefix of a split turn). The turn-prefix prompt does not depend on the
 * history's answer, so a blank answer stands in for it.
 */
function buildSummaryRequests(preparation, model, customInstructions) {
  const { job } = startCompactionJob(preparation, model, customInstructions)
  const requests = []
  try {
    for (let request = job.next(); request !== null; request = job.next()) {
      const { systemPrompt, prompt, maxTokens, part } = request
      requests.push({ systemPrompt, prompt, maxTokens, part })
      job.respond({ role: 'assistant', content: [{ type: 'text', text: '' }], stopReason: 'stop' })
    }
  } finally {
    job.release()
  }
  return requests
}

async function generateSummary(
  currentMessages,
  model,
  reserveTokens,
  apiKey,
  headers,
  signal,
  customInstructions,
  previousSummary,
  thinkingLevel,
  streamFn,
) {
  if (signal && signal.aborted) throw abortError(signal)
  const job = native.startSummary(currentMessages, model, reserveTokens, customInstructions, previousSummary, argumentEntries)
  try {
    await drive(job, model, apiKey, headers, signal, thinkingLevel, streamFn)
    return job.summary()
  } finally {
    job.release()
  }
}

async function generateBranchSummary(entries, options) {
  const {
    model,
    apiKey,
    headers,
    signal,
    customInstructions,
    replaceInstructions,
    reserveTokens = 16384,
    streamFn,
    thinkingLevel,
  } = options
  if (signal && signal.aborted) return { aborted: true }
  const contextWindow = model.contextWindow || 128000
  const { messages, fileOps } = prepareBranchEntries(entries, contextWindow - reserveTokens)
  if (messages.length === 0) return { summary: 'No content to summarize' }
  const lists = computeFileLists(fileOps)
  const job = native.startBranchSummary(messages, lists, model, reserveTokens, customInstructions, replaceInstructions, argumentEntries)
  try {
    try {
      await drive(job, model, apiKey, headers, signal, thinkingLevel, streamFn, (response) => {
        if (response && response.stopReason === 'aborted') throw abortError(signal)
      })
    } catch (err) {
      if (err && err.name === 'AbortError') return { aborted: true }
      if (err && err.summarizationFailure) return { error: err.message }
      throw err
    }
    const result = job.branchResult()
    result.readFiles = lists.readFiles
    result.modifiedFiles = lists.modifiedFiles
    return result
  } finally {
    job.release()
  }
}

/** The names of the agent lines, oldest first; the last is the newest. */
const AGENT_LINES = native.agentLines()

/**
 * The package's exports as the agent line `lineName` ("0.78", "1.6")
 * behaves; an unknown name is a TypeError. The line is looked up once and
 * passed to each export whose result depends on it.
 */
function createApi(lineName) {
  const line = native.agentLineIndex(lineName)
  return {
    DEFAULT_COMPACTION_SETTINGS,
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    prepareCompaction,
    prepareCompactionAsync,
    collectEntriesForBranchSummary,
    prepareBranchEntries,
    generateBranchSummary,
    compact,
    buildSummaryRequests,
    generateSummary,
    SUMMARIZATION_SYSTEM_PROMPT,
    prepareCompactionFromFile: native.prepareCompactionFromFile,
    prepareCompactionFromFileSync: native.prepareCompactionFromFileSync,
    serializeForSummaryFromFile: native.serializeForSummaryFromFile,
    serializeForSummaryFromFileSync: native.serializeForSummaryFromFileSync,
    estimateTokens: native.estimateTokens,
    countTokens: native.countTokens,
    findCutPoint: native.findCutPoint,
    findTurnStartIndex: native.findTurnStartIndex,
    shouldCompact: native.shouldCompact,
    calculateContextTokens: native.calculateContextTokens,
    getLastAssistantUsage,
    estimateContextTokens: native.estimateContextTokens,
    createFileOps,
    extractFileOpsFromMessage,
    computeFileLists,
    formatFileOperations: native.formatFileOperations,
    convertToLlm: (messages) => native.convertToLlm(messages, line),
    serializeConversation: (messages, options) => transcript(native.serializeConversation, messages, options),
    projectForSummary,
    serializeForSummary: (messages, options) => transcript(native.serializeForSummary, messages, options),
    splitUserRounds,
    bashExecutionToText: native.bashExecutionToText,
    createBranchSummaryMessage,
    createCompactionSummaryMessage,
    createCustomMessage,
  }
}

module.exports = { createApi, AGENT_LINES }
