'use strict'
// prime-compaction: loads the native binding and adapts its results to the
// reference's shapes (Sets, the caller's own message objects). The work
// itself happens in Rust.

const { platformSuffix, binaryName } = require('./platform.js')

function loadBinding() {
  const suffix = platformSuffix()
  const candidates = [`./${binaryName}.${suffix}.node`, `${binaryName}-${suffix}`]
  const errors = []
  for (const candidate of candidates) {
    try {
      return require(candidate)
    } catch (err) {
      errors.push(`${candidate}: ${err.message.split('\n')[0]}`)
    }
  }
  throw new Error(
    `prime-compaction: no native binary loads on ${process.platform}-${process.arch} (${suffix}).\n` +
      `Tried:\n  ${errors.join('\n  ')}\n` +
      'Build it from source with Rust installed: `npm rebuild prime-compaction` ' +
      '(or, in a checkout, `npm run build`).',
  )
}

const native = loadBinding()

const BRANCH_SUMMARY_PREFIX = `The following is a summary of a branch that this conversation came back from:

<summary>
`
const BRANCH_SUMMARY_SUFFIX = `</summary>`
const COMPACTION_SUMMARY_PREFIX = `The conversation history before this point was compacted into the following summary:

<summary>
`
const COMPACTION_SUMMARY_SUFFIX = `
</summary>`

const DEFAULT_COMPACTION_SETTINGS = native.defaultCompactionSettings()

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

function prepareCompaction(pathEntries, settings) {
  const plan = native.prepareCompaction(pathEntries, settings)
  if (plan === undefined) return undefined
  const previous = plan.previousCompactionIndex
  return {
    firstKeptEntryId: pathEntries[plan.firstKeptEntryIndex].id,
    messagesToSummarize: messagesAt(pathEntries, plan.summarize),
    turnPrefixMessages: messagesAt(pathEntries, plan.turnPrefix),
    isSplitTurn: plan.isSplitTurn,
    tokensBefore: plan.tokensBefore,
    previousSummary: previous >= 0 ? pathEntries[previous].summary : undefined,
    fileOps: { read: new Set(plan.read), written: new Set(plan.written), edited: new Set(plan.edited) },
    settings,
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
  return native.computeFileLists([...fileOps.read], [...fileOps.written], [...fileOps.edited])
}

function splitUserRounds(messages) {
  const starts = native.userRoundStarts(messages)
  const rounds = new Array(starts.length)
  for (let i = 0; i < starts.length; i++) {
    rounds[i] = messages.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : messages.length)
  }
  return rounds
}

module.exports = {
  DEFAULT_COMPACTION_SETTINGS,
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  prepareCompaction,
  estimateTokens: native.estimateTokens,
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
  convertToLlm: native.convertToLlm,
  serializeConversation: native.serializeConversation,
  projectForSummary: native.projectForSummary,
  splitUserRounds,
  bashExecutionToText: native.bashExecutionToText,
  createBranchSummaryMessage,
  createCompactionSummaryMessage,
  createCustomMessage,
}
