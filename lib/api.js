'use strict'
// prime-compaction's exports for one agent line: loads the native binding
// and adapts its results to the reference's shapes (Sets, the caller's own
// message objects). The work itself happens in Rust, and so does every
// difference between agent lines: an entry point names its line, and the
// exports pass it on.

const native = require('../binding.js')
const { flatMessages, releaseFlat, assembleTranscript, projectionOfPlan } = require('../flat-messages.js')
const { summarizing } = require('./summarize.js')
const { readEntryPath, releaseEntryPath, entriesOfPath } = require('./entry-path.js')
const { pushEntryFacts, pushMessageFacts, readMeasureFacts, readEntryKinds, MAX_ENTRIES: MAX_FACTS } = require('./entry-facts.js')
const { Scratch } = require('./typed-array.js')
const { readMessageRoles, messagesOfPlan, textAt } = require('./message-roles.js')
const { projectionSearches } = require('./projection-search.js')
const { withContextFacts } = require('./context-facts.js')
const { plainCopy } = require('./plain-array.js')

// The agent's context reads summaries between these exact strings.
const {
  compactionPrefix: COMPACTION_SUMMARY_PREFIX,
  compactionSuffix: COMPACTION_SUMMARY_SUFFIX,
  branchPrefix: BRANCH_SUMMARY_PREFIX,
  branchSuffix: BRANCH_SUMMARY_SUFFIX,
} = native.summaryWrappers()

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

/**
 * Calls under way whose passes read ahead in JS (prepareCompaction, the
 * transcripts, the projection). One made from a caller's getter during
 * another reads natively: a pass leaves a value whose getter throws to the
 * native side, which reads it again, so a getter that calls the package
 * again would be read twice at every level, over every level below it.
 */
let readingAhead = 0

/**
 * `read(flat)` with the messages read flat where they can be (not from
 * inside another call that reads ahead); `{ flat, result }`, the flat
 * form released (its texts stay readable).
 */
function withFlat(messages, timestamps, read) {
  let flat
  readingAhead++
  try {
    flat = readingAhead === 1 ? flatMessages(messages, timestamps) : undefined
    return { flat, result: read(flat) }
  } finally {
    readingAhead--
    releaseFlat(flat)
  }
}

/** A transcript builder's result. */
function transcript(build, messages, options) {
  const { result } = withFlat(messages, false, (flat) => build(messages, options, argumentEntries, flat))
  return assembleTranscript(result)
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

/**
 * How a plan's message is made from the caller's entries, by the shape the
 * native plan names (MessageShape in crates/core/src/session/projection.rs):
 * the caller's own object, or the new object or shallow copy the reference
 * makes there.
 */
const SHAPES = native.messageShapes()
const BUILDERS = []
BUILDERS[SHAPES.own] = (entries, i) => entries[i].message
BUILDERS[SHAPES.custom] = (entries, i) => customMessageOf(entries[i], entries[i].content)
BUILDERS[SHAPES.branchSummary] = (entries, i) => {
  const entry = entries[i]
  return createBranchSummaryMessage(entry.summary, entry.fromId, entry.timestamp)
}
BUILDERS[SHAPES.compactionSummary] = (entries, i) => {
  const entry = entries[i]
  return createCompactionSummaryMessage(entry.summary, entry.tokensBefore, entry.timestamp)
}
BUILDERS[SHAPES.emptyContent] = (entries, i) => ({ ...entries[i].message, content: [] })
BUILDERS[SHAPES.emptyText] = (entries, i) => ({ ...entries[i].message, content: '' })
BUILDERS[SHAPES.customEmpty] = (entries, i) => customMessageOf(entries[i], [])
BUILDERS[SHAPES.replaced] = (entries, i, e) => ({ ...entries[i].message, content: entries[e].replacement.content })
BUILDERS[SHAPES.replacedText] = (entries, i, e) => ({ ...entries[i].message, content: [{ type: 'text', text: entries[e].replacement.content }] })
BUILDERS[SHAPES.customReplaced] = (entries, i, e) => customMessageOf(entries[i], entries[e].replacement.content)
BUILDERS[SHAPES.systemMessage] = (entries, i) => entries[i].systemMessage

function customMessageOf(entry, content) {
  return createCustomMessage(entry.customType, content, entry.display, entry.details, entry.timestamp)
}

/** A plan's messages (`{ entries, shapes, edits }`) on the caller's entries. */
function messagesOf(entries, plan) {
  const out = new Array(plan.entries.length)
  putMessages(out, entries, plan, 0, out.length)
  return out
}

/** The plan's messages `from..to` into `out`. */
function putMessages(out, entries, plan, from, to) {
  const { entries: at, shapes, edits } = plan
  for (let i = from; i < to; i++) out[i] = BUILDERS[shapes[i]](entries, at[i], edits[i])
}

function createFileOps() {
  return { read: new Set(), written: new Set(), edited: new Set() }
}

/**
 * The file Sets of a plan: first the recorded files of the entries the plan
 * names (their `details` is typed `unknown`, so the values are copied as
 * they are), then the tool calls' paths, in the plan's order: each a
 * string, or the number of one of `strings` (planFinish's `pathRefs`).
 */
function fileOpsOfPlan(entries, detailsFrom, plan, strings) {
  const fileOps = createFileOps()
  for (const i of detailsFrom) {
    const details = entries[i].details
    if (Array.isArray(details.readFiles)) for (const f of details.readFiles) fileOps.read.add(f)
    if (Array.isArray(details.modifiedFiles)) for (const f of details.modifiedFiles) fileOps.edited.add(f)
  }
  for (const f of plan.read) fileOps.read.add(typeof f === 'number' ? strings[f] : f)
  for (const f of plan.written) fileOps.written.add(typeof f === 'number' ? strings[f] : f)
  for (const f of plan.edited) fileOps.edited.add(typeof f === 'number' ? strings[f] : f)
  return fileOps
}

// The facts object of the last synchronous prepareCompaction, released and
// kept for the next, with the typed arrays its passes used (taken while a
// call holds them, so a call made from a getter in the middle of another
// makes its own).
let spareFacts = null
let spareScratch = null

/**
 * prepareCompaction with the entries' facts read ahead in JS
 * (lib/entry-facts.js): every entry's, then the sizes of the kept messages
 * the cut asks for, then the cut's messages' (planCut names them), then
 * the plan from them (planFinish). Where no facts can be
 * read (not an array, an impossible length), the native side reads all.
 */
function prepareCompaction(pathEntries, settings, line) {
  if (!Array.isArray(pathEntries) || pathEntries.length > MAX_FACTS || readingAhead > 0) {
    return preparationOf(pathEntries, native.prepareCompaction(pathEntries, settings, line), settings)
  }
  const facts = spareFacts ?? new native.EntryFacts()
  const scratch = spareScratch ?? new Scratch()
  spareFacts = null
  spareScratch = null
  let plan
  const strings = []
  readingAhead++
  try {
    pushEntryFacts(facts, pathEntries, 0, pathEntries.length, undefined, scratch)
    let wanted
    // The cut asks for the measures of the messages it estimates, a batch at a time.
    while ((wanted = native.planCut(pathEntries, settings, line, facts))?.measure !== undefined) {
      facts.pushMeasures(readMeasureFacts(pathEntries, wanted.measure, wanted.units, scratch))
    }
    if (wanted === undefined) return undefined
    pushMessageFacts(facts, pathEntries, wanted, 0, wanted.length, undefined, scratch, strings)
    plan = native.planFinish(pathEntries, line, facts, true)
  } finally {
    readingAhead--
    // Kept for the next call, with the room its facts took.
    facts.release(true)
    spareFacts = facts
    spareScratch = scratch
  }
  return preparationOf(pathEntries, plan, settings, undefined, strings)
}

/** withEntryKinds' `to` for every entry (its length is read only once it is known to be an array). */
const ALL_ENTRIES = Symbol('all entries')

/**
 * `call(facts)` with the kinds of `entries[from..to)` read ahead into
 * `facts` (readEntryKinds), or `call(undefined)` where they cannot be (not
 * an array, an impossible length or range, or inside another call that
 * reads ahead).
 */
function withEntryKinds(entries, from, to, call) {
  if (!Array.isArray(entries) || entries.length > MAX_FACTS || readingAhead > 0) return call(undefined)
  if (to === ALL_ENTRIES) to = entries.length
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return call(undefined)
  const facts = spareFacts ?? new native.EntryFacts()
  const scratch = spareScratch ?? new Scratch()
  spareFacts = null
  spareScratch = null
  readingAhead++
  try {
    facts.pushEntries(readEntryKinds(entries, Math.max(0, from), Math.min(to, entries.length), scratch))
    return call(facts)
  } finally {
    readingAhead--
    facts.release(true)
    spareFacts = facts
    spareScratch = scratch
  }
}

/**
 * The preparation for a native plan (entry indices), on the caller's own
 * objects; `messages` are the summarized ones where already made, and
 * `strings` the ones the plan's file paths may name (fileOpsOfPlan).
 */
function preparationOf(pathEntries, plan, settings, messages, strings) {
  if (plan === undefined) return undefined
  const previous = plan.previousCompactionIndex
  return {
    firstKeptEntryId: pathEntries[plan.firstKeptEntryIndex].id,
    messagesToSummarize: messages ?? messagesOf(pathEntries, plan.summarize),
    turnPrefixMessages: messagesOf(pathEntries, plan.turnPrefix),
    isSplitTurn: plan.isSplitTurn,
    tokensBefore: plan.tokensBefore,
    previousSummary: previous >= 0 ? pathEntries[previous].summary : undefined,
    fileOps: fileOpsOfPlan(pathEntries, plan.detailsFrom >= 0 ? [plan.detailsFrom] : [], plan, strings),
    settings,
  }
}

/** How long one slice of prepareCompactionAsync's reading may hold the JS thread. */
const ASYNC_SLICE_MS = 2

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/**
 * prepareCompaction as a Promise: as the synchronous call, with each pass
 * of lib/entry-facts.js and the result's summarized messages in slices of
 * about ASYNC_SLICE_MS and the event loop running between them, and what
 * needs the facts only on the libuv pool. Each step of the cut (planCut)
 * and the plan from the facts (planFinish) run on the JS thread in one
 * piece each, a turn of the loop apart (the cut reads the last few
 * entries, whose tokens it counts). Do not change the entries until it
 * settles.
 */
async function prepareCompactionAsync(entries, settings, line) {
  if (!Array.isArray(entries) || entries.length > MAX_FACTS) return prepareCompaction(entries, settings, line)
  // The entries as they are now: a caller that changes its array before the
  // Promise settles changes nothing here (the entries are its own objects).
  const pathEntries = plainCopy(entries)
  // Bad settings reject before any entry is read, as the synchronous call throws.
  native.prepareCompaction([], settings, line)
  // Room for every entry's facts up front: the slices' pushes then never
  // move what earlier ones pushed.
  const facts = new native.EntryFacts(pathEntries.length)
  let plan
  const strings = []
  try {
    await inSlices(pathEntries.length, (from, to) => pushEntryFacts(facts, pathEntries, from, to))
    // What needs the facts only (the path through the ids) is done off the JS thread.
    await facts.finish()
    // That resolves in libuv's poll phase, which its check phase (where
    // setImmediate runs) follows with no timers between: without this
    // turn, the next two steps would run as one.
    await nextTurn()
    // The cut in steps, with a turn of the event loop after each.
    let wanted
    // (a step may stop to ask for the measures of the messages it estimates)
    while ((wanted = native.planCut(pathEntries, settings, line, facts, true)) === true || wanted?.measure !== undefined) {
      if (wanted !== true) facts.pushMeasures(readMeasureFacts(pathEntries, wanted.measure, wanted.units))
      await nextTurn()
    }
    if (wanted === undefined) return undefined
    await nextTurn()
    await inSlices(wanted.length, (from, to) => pushMessageFacts(facts, pathEntries, wanted, from, to, undefined, undefined, strings))
    plan = native.planFinish(pathEntries, line, facts, true)
  } finally {
    facts.release()
  }
  await nextTurn()
  const messages = new Array(plan.summarize.entries.length)
  await inSlices(messages.length, (from, to) => putMessages(messages, pathEntries, plan.summarize, from, to))
  return preparationOf(pathEntries, plan, settings, messages, strings)
}

/**
 * Calls `read(from, to)` over `0..n` in batches, yielding to the event loop
 * after each slice of about ASYNC_SLICE_MS.
 */
async function inSlices(n, read) {
  let batch = 256
  let i = 0
  while (i < n) {
    const sliceStart = performance.now()
    do {
      const start = performance.now()
      const end = Math.min(n, i + batch)
      read(i, end)
      i = end
      // Batches of about half a millisecond: big enough to be cheap, small
      // enough not to overrun the slice.
      const took = performance.now() - start
      if (took < 0.25) batch *= 2
      else if (took > 1 && batch > 1) batch = Math.ceil(batch / 2)
    } while (i < n && performance.now() - sliceStart < ASYNC_SLICE_MS)
    if (i < n) await nextTurn()
  }
}

/**
 * projectForSummary: the messages are read flat (with their timestamps),
 * the native side projects them and returns a plan, and the new message
 * objects are built from it in JS (projectionOfPlan), where making objects
 * is cheap.
 */
function projectForSummary(messages, options) {
  const { flat, result } = withFlat(messages, true, (flat) => native.projectionPlan(messages, options, argumentEntries, flat))
  return projectionOfPlan(result, flat)
}

function collectEntriesForBranchSummary(session, oldLeafId, targetId) {
  // getBranch(undefined) starts at the session's leaf; the walk itself needs only getEntry.
  const target = oldLeafId && targetId == null ? session.getLeafId() : targetId
  const path = readEntryPath(session, oldLeafId, target)
  try {
    const result = native.collectEntriesForBranchSummary(session, oldLeafId, target, path)
    if (result.entries !== undefined) return result
    return { entries: entriesOfPath(path, result.count), commonAncestorId: result.commonAncestorId }
  } finally {
    releaseEntryPath(path)
  }
}

function prepareBranchEntriesOf(entries, tokenBudget, line) {
  const { messages, fileOps, totalTokens } = branchPreparation(entries, tokenBudget, line)
  return { messages, fileOps, totalTokens }
}

/** prepareBranchEntries' result, with `plan`: how its messages were built from the entries. */
function branchPreparation(entries, tokenBudget, line) {
  const plan = withEntryKinds(entries, 0, ALL_ENTRIES, (facts) => native.prepareBranchEntries(entries, tokenBudget, line, facts))
  return {
    messages: messagesOf(entries, plan.messages),
    fileOps: fileOpsOfPlan(entries, plan.detailsFrom, plan),
    totalTokens: plan.totalTokens,
    plan: plan.messages,
  }
}

/**
 * estimateProjectedContextTokens with the projection's and branch's
 * searches (lib/projection-search.js), and its messages' facts where it asks
 * (lib/context-facts.js).
 */
function estimateProjectedContextTokens(projection, branchEntries, line) {
  readingAhead++
  try {
    const searches = readingAhead === 1 ? projectionSearches(projection, branchEntries) : undefined
    return withContextFacts(
      () => projection.messages,
      (context) => native.estimateProjectedContextTokens(projection, branchEntries, line, searches, context),
    )
  } finally {
    readingAhead--
  }
}

/** The messages convertToLlm's plan names: the caller's (as read) and the ones it made. */
function convertToLlm(messages, line) {
  let read
  let plan
  readingAhead++
  try {
    read = readingAhead === 1 ? readMessageRoles(messages) : undefined
    plan = native.convertToLlm(messages, line, read?.roles, read?.values)
  } finally {
    readingAhead--
  }
  return messagesOfPlan(plan, read?.values)
}

function getLastAssistantUsage(entries, line) {
  const index = withContextFacts(() => entries, (context) => native.lastAssistantUsageIndex(entries, line, context), true)
  return index < 0 ? undefined : entries[index].message.usage
}

const FILE_OP = require('./codes.js').checkCodes('fileOps', { READ: 0, WRITTEN: 1, EDITED: 2 })

function extractFileOpsFromMessage(message, fileOps, line) {
  const { kinds, paths } = native.fileOpsOfMessage(message, line)
  // Each Set named as the agents' code names it, so a caller's error reads the same.
  for (let i = 0; i < kinds.length; i++) {
    if (kinds[i] === FILE_OP.READ) fileOps.read.add(paths[i])
    else if (kinds[i] === FILE_OP.WRITTEN) fileOps.written.add(paths[i])
    else fileOps.edited.add(paths[i])
  }
}

function computeFileLists(fileOps) {
  // Read in the agents' order: edited, written, read.
  const edited = spreadNamed(fileOps.edited, 'fileOps.edited')
  const written = spreadNamed(fileOps.written, 'fileOps.written')
  const read = spreadNamed(fileOps.read, 'fileOps.read')
  return native.computeFileLists(read, written, edited)
}

/**
 * `[...value]`, or the TypeError V8 throws for it, which names `name`, on
 * every engine (JavaScriptCore's names nothing: "Spread syntax requires
 * ...iterable not be null or undefined").
 */
function spreadNamed(value, name) {
  if (value === null || value === undefined || typeof value[Symbol.iterator] !== 'function') throw new TypeError(`${name} is not iterable`)
  return [...value]
}

function splitUserRounds(messages) {
  const starts = native.userRoundStarts(messages)
  const rounds = new Array(starts.length)
  for (let i = 0; i < starts.length; i++) {
    rounds[i] = messages.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : messages.length)
  }
  return rounds
}

/** The names of the agent lines, oldest first; the last is the newest. */
const AGENT_LINES = native.agentLines()

/**
 * The package's exports as the agent line `lineName` ("0.78", "1.6")
 * behaves; an unknown name is a TypeError. The line is looked up once and
 * passed to each export whose result depends on it. Exports a line added
 * (the native line lists them) come last.
 */
function createApi(lineName) {
  const line = native.agentLineIndex(lineName)
  const prepareBranchEntries = (entries, tokenBudget = 0) => prepareBranchEntriesOf(entries, tokenBudget, line)
  const { added: summarizingAdded, ...summarize } = summarizing(native, line, {
    argumentEntries,
    computeFileLists,
    branchPreparation: (entries, tokenBudget) => branchPreparation(entries, tokenBudget, line),
  })
  const added = {
    ...summarizingAdded,
    estimateProjectedContextTokens: (projection, branchEntries) => estimateProjectedContextTokens(projection, branchEntries, line),
  }
  const api = {
    // Each line's own object, as each agent's module has its own.
    DEFAULT_COMPACTION_SETTINGS: native.defaultCompactionSettings(),
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    prepareCompaction: (pathEntries, settings) => prepareCompaction(pathEntries, settings, line),
    prepareCompactionAsync: (pathEntries, settings) => prepareCompactionAsync(pathEntries, settings, line),
    collectEntriesForBranchSummary,
    prepareBranchEntries,
    ...summarize,
    prepareCompactionFromFile: (path, options) => native.prepareCompactionFromFile(path, options, line),
    prepareCompactionFromFileSync: (path, options) => native.prepareCompactionFromFileSync(path, options, line),
    serializeForSummaryFromFile: (path, options) => native.serializeForSummaryFromFile(path, options, line),
    serializeForSummaryFromFileSync: (path, options) => native.serializeForSummaryFromFileSync(path, options, line),
    estimateTokens: (message, options = undefined) => native.estimateTokens(message, line, options),
    countTokens: native.countTokens,
    findCutPoint: (entries, startIndex, endIndex, keepRecentTokens, options = undefined) =>
      withEntryKinds(entries, startIndex, endIndex, (facts) => native.findCutPoint(entries, startIndex, endIndex, keepRecentTokens, line, options, facts)),
    findTurnStartIndex: (entries, entryIndex, startIndex) => native.findTurnStartIndex(entries, entryIndex, startIndex, line),
    shouldCompact: (contextTokens, contextWindow, settings) => native.shouldCompact(contextTokens, contextWindow, settings),
    calculateContextTokens: (usage) => native.calculateContextTokens(usage),
    getLastAssistantUsage: (entries) => getLastAssistantUsage(entries, line),
    estimateContextTokens: (messages) => withContextFacts(() => messages, (context) => native.estimateContextTokens(messages, line, context)),
    createFileOps,
    extractFileOpsFromMessage: (message, fileOps) => extractFileOpsFromMessage(message, fileOps, line),
    computeFileLists,
    formatFileOperations: (readFiles, modifiedFiles) => native.formatFileOperations(readFiles, modifiedFiles),
    convertToLlm: (messages) => convertToLlm(messages, line),
    serializeConversation: (messages, options = undefined) => transcript(native.serializeConversation, messages, options),
    projectForSummary,
    serializeForSummary: (messages, options) => transcript(native.serializeForSummary, messages, options),
    splitUserRounds,
    bashExecutionToText: (msg) => {
      const { codes, strings } = native.bashExecutionToText(msg)
      return textAt(codes, strings, 0)
    },
    createBranchSummaryMessage,
    createCompactionSummaryMessage,
    createCustomMessage,
  }
  for (const name of native.agentLineAddedExports(line)) {
    if (!(name in added)) throw new Error(`prime-compaction: agent line ${lineName} adds ${name}, which lib/api.js lacks`)
    api[name] = added[name]
  }
  return api
}

module.exports = { createApi, AGENT_LINES }
