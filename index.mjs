// ESM entry: the same exports as index.js.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const {
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
  prepareCompactionFromFile,
  prepareCompactionFromFileSync,
  serializeForSummaryFromFile,
  serializeForSummaryFromFileSync,
  estimateTokens,
  countTokens,
  findCutPoint,
  findTurnStartIndex,
  shouldCompact,
  calculateContextTokens,
  getLastAssistantUsage,
  estimateContextTokens,
  createFileOps,
  extractFileOpsFromMessage,
  computeFileLists,
  formatFileOperations,
  convertToLlm,
  serializeConversation,
  projectForSummary,
  serializeForSummary,
  splitUserRounds,
  bashExecutionToText,
  createBranchSummaryMessage,
  createCompactionSummaryMessage,
  createCustomMessage,
} = api
export default api
