// Checks that our declarations, as `import ... from 'prime-compaction/agent-0.78'` (this
// file) and as `require('prime-compaction/agent-0.78')` (drop-in-0.78.cts, which
// __test__/types.test.js writes from this file) see them, are interchangeable with
// the reference's (pi-coding-agent 0.78.1).

import * as Ours from 'prime-compaction/agent-0.78'
// The reference is ESM-only; TypeScript >= 5.8 accepts require() of ESM under `nodenext`
// (the CommonJS copy).
import * as Ref from '../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/index.js'
import * as RefMsg from '../../node_modules/@earendil-works/pi-coding-agent/dist/core/messages.js'
import type * as RefSession from '../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js'
// These packages export no CommonJS entry, so their types are looked up in ESM mode.
import type * as Core from '@earendil-works/pi-agent-core' with { 'resolution-mode': 'import' }
import type * as Ai from '@earendil-works/pi-ai' with { 'resolution-mode': 'import' }

/*
 * Nothing here runs: the file only has to type-check. `value<T>()` stands for
 * some value of type T; `mutual<A, B>` compiles only if A and B are assignable
 * to each other; `accepts<T>(v)` only if v can be used where T is expected.
 */
declare function value<T>(): T
declare function accepts<T>(v: T): void
declare function mutual<A, B>(toB: (a: A) => B, toA: (b: B) => A): void
declare function same<T>(x: T): T
/** Compiles only if T is not `any` (an unresolved type silently becomes `any`). */
declare function notAny<T>(check: 0 extends 1 & T ? never : true): void

// ---------------------------------------------------------------------------
// Guard against vacuous passes: with skipLibCheck, a type that fails to
// resolve becomes `any`, and `any` is assignable to everything.
// ---------------------------------------------------------------------------
notAny<Ours.AgentMessage>(true)
notAny<Ours.SessionEntry>(true)
notAny<Ours.Model>(true)
notAny<Ours.StreamFn>(true)
notAny<Ours.CompactionPreparation>(true)
notAny<typeof Ours.compact>(true)
notAny<Core.AgentMessage>(true)
notAny<Core.StreamFn>(true)
notAny<Ai.Message>(true)
notAny<Ai.Model<any>>(true)
notAny<Ai.Context>(true)
notAny<Ai.AssistantMessageEventStream>(true)
notAny<RefSession.SessionEntry>(true)
notAny<RefSession.ReadonlySessionManager>(true)
notAny<Ref.CompactionPreparation>(true)
notAny<typeof Ref.compact>(true)
notAny<typeof RefMsg.convertToLlm>(true)

// ---------------------------------------------------------------------------
// Every runtime export of the reference's compaction module and messages
// module is also exported by us.
// ---------------------------------------------------------------------------
accepts<(keyof typeof Ours)[]>(value<(keyof typeof Ref)[]>())
accepts<(keyof typeof Ours)[]>(value<(keyof typeof RefMsg)[]>())

// ---------------------------------------------------------------------------
// Functions and constants, both directions.
// ---------------------------------------------------------------------------
accepts<typeof Ref.calculateContextTokens>(Ours.calculateContextTokens)
accepts<typeof Ours.calculateContextTokens>(Ref.calculateContextTokens)
accepts<typeof Ref.getLastAssistantUsage>(Ours.getLastAssistantUsage)
accepts<typeof Ours.getLastAssistantUsage>(Ref.getLastAssistantUsage)
accepts<typeof Ref.estimateContextTokens>(Ours.estimateContextTokens)
accepts<typeof Ours.estimateContextTokens>(Ref.estimateContextTokens)
accepts<typeof Ref.shouldCompact>(Ours.shouldCompact)
accepts<typeof Ours.shouldCompact>(Ref.shouldCompact)
accepts<typeof Ref.estimateTokens>(Ours.estimateTokens)
accepts<typeof Ours.estimateTokens>(Ref.estimateTokens)
accepts<typeof Ref.findTurnStartIndex>(Ours.findTurnStartIndex)
accepts<typeof Ours.findTurnStartIndex>(Ref.findTurnStartIndex)
accepts<typeof Ref.findCutPoint>(Ours.findCutPoint)
accepts<typeof Ours.findCutPoint>(Ref.findCutPoint)
accepts<typeof Ref.prepareCompaction>(Ours.prepareCompaction)
accepts<typeof Ours.prepareCompaction>(Ref.prepareCompaction)
accepts<typeof Ref.collectEntriesForBranchSummary>(Ours.collectEntriesForBranchSummary)
accepts<typeof Ours.collectEntriesForBranchSummary>(Ref.collectEntriesForBranchSummary)
accepts<typeof Ref.prepareBranchEntries>(Ours.prepareBranchEntries)
accepts<typeof Ours.prepareBranchEntries>(Ref.prepareBranchEntries)
accepts<typeof Ref.createFileOps>(Ours.createFileOps)
accepts<typeof Ours.createFileOps>(Ref.createFileOps)
accepts<typeof Ref.extractFileOpsFromMessage>(Ours.extractFileOpsFromMessage)
accepts<typeof Ours.extractFileOpsFromMessage>(Ref.extractFileOpsFromMessage)
accepts<typeof Ref.computeFileLists>(Ours.computeFileLists)
accepts<typeof Ours.computeFileLists>(Ref.computeFileLists)
accepts<typeof Ref.formatFileOperations>(Ours.formatFileOperations)
accepts<typeof Ours.formatFileOperations>(Ref.formatFileOperations)
// Ours takes an extra optional `options` argument; a function with fewer
// parameters is still assignable to one with more, so this holds both ways.
accepts<typeof Ref.serializeConversation>(Ours.serializeConversation)
// @ts-expect-error ours also takes a summary projection's messages (ProjectedMessage:
// an assistant message there has only role, content and timestamp): one way only
accepts<typeof Ours.serializeConversation>(Ref.serializeConversation)
// @ts-expect-error the agent declares its own prompt text as a literal type; ours is
// another text (the spec's prompt), so it is declared a string: one way only
accepts<typeof Ref.SUMMARIZATION_SYSTEM_PROMPT>(Ours.SUMMARIZATION_SYSTEM_PROMPT)
accepts<typeof Ours.SUMMARIZATION_SYSTEM_PROMPT>(Ref.SUMMARIZATION_SYSTEM_PROMPT)
accepts<typeof Ref.DEFAULT_COMPACTION_SETTINGS>(Ours.DEFAULT_COMPACTION_SETTINGS)
accepts<typeof Ours.DEFAULT_COMPACTION_SETTINGS>(Ref.DEFAULT_COMPACTION_SETTINGS)

accepts<typeof RefMsg.convertToLlm>(Ours.convertToLlm)
accepts<typeof Ours.convertToLlm>(RefMsg.convertToLlm)
accepts<typeof RefMsg.COMPACTION_SUMMARY_PREFIX>(Ours.COMPACTION_SUMMARY_PREFIX)
accepts<typeof Ours.COMPACTION_SUMMARY_PREFIX>(RefMsg.COMPACTION_SUMMARY_PREFIX)
accepts<typeof RefMsg.COMPACTION_SUMMARY_SUFFIX>(Ours.COMPACTION_SUMMARY_SUFFIX)
accepts<typeof Ours.COMPACTION_SUMMARY_SUFFIX>(RefMsg.COMPACTION_SUMMARY_SUFFIX)
accepts<typeof RefMsg.BRANCH_SUMMARY_PREFIX>(Ours.BRANCH_SUMMARY_PREFIX)
accepts<typeof Ours.BRANCH_SUMMARY_PREFIX>(RefMsg.BRANCH_SUMMARY_PREFIX)
accepts<typeof RefMsg.BRANCH_SUMMARY_SUFFIX>(Ours.BRANCH_SUMMARY_SUFFIX)
accepts<typeof Ours.BRANCH_SUMMARY_SUFFIX>(RefMsg.BRANCH_SUMMARY_SUFFIX)
accepts<typeof RefMsg.bashExecutionToText>(Ours.bashExecutionToText)
accepts<typeof Ours.bashExecutionToText>(RefMsg.bashExecutionToText)
accepts<typeof RefMsg.createBranchSummaryMessage>(Ours.createBranchSummaryMessage)
accepts<typeof Ours.createBranchSummaryMessage>(RefMsg.createBranchSummaryMessage)
accepts<typeof RefMsg.createCompactionSummaryMessage>(Ours.createCompactionSummaryMessage)
accepts<typeof Ours.createCompactionSummaryMessage>(RefMsg.createCompactionSummaryMessage)
accepts<typeof RefMsg.createCustomMessage>(Ours.createCustomMessage)
accepts<typeof Ours.createCustomMessage>(RefMsg.createCustomMessage)

// ---------------------------------------------------------------------------
// The functions that call a model take a `streamFn`. The reference's stream
// type (pi-ai's AssistantMessageEventStream) is a class with private fields,
// which TypeScript compares nominally: no independently declared type can be
// assigned to it. Ours is structural (`{ result(): Promise<AssistantMessage> }`),
// so every reference stream function fits ours, but ours does not fit the
// reference's. Hence:
//   - our functions are usable where the reference's are expected (they accept
//     every streamFn the reference accepts);
//   - the reference's functions are not usable where ours are expected, only
//     because ours would hand them a structurally typed streamFn;
//   - without the streamFn parameter, the signatures match both ways.
// ---------------------------------------------------------------------------
accepts<Ours.StreamFn>(value<Core.StreamFn>())
accepts<Ours.StreamFn>(value<typeof Ai.streamSimple>())
// @ts-expect-error our StreamFn returns a structural stream, not pi-ai's class
accepts<Core.StreamFn>(value<Ours.StreamFn>())

// @ts-expect-error an aborted compact() resolves with CompactionAborted, which is no CompactionResult (see below)
accepts<typeof Ref.compact>(Ours.compact)
accepts<typeof Ref.generateSummary>(Ours.generateSummary)
accepts<typeof Ref.generateBranchSummary>(Ours.generateBranchSummary)
// @ts-expect-error see above: our streamFn parameter is structural
accepts<typeof Ours.compact>(Ref.compact)
// @ts-expect-error see above: our streamFn parameter is structural
accepts<typeof Ours.generateSummary>(Ref.generateSummary)
// @ts-expect-error see above: our GenerateBranchSummaryOptions.streamFn is structural
accepts<typeof Ours.generateBranchSummary>(Ref.generateBranchSummary)

/** Parameter list with the stream function type removed from each slot. */
type NoStreamFn<P extends unknown[]> = { [K in keyof P]: Exclude<P[K], Core.StreamFn | Ours.StreamFn> }
mutual<NoStreamFn<Parameters<typeof Ours.compact>>, NoStreamFn<Parameters<typeof Ref.compact>>>(same, same)
// compact() resolves with `{ aborted: true }` where the reference resolves with
// the partial text of an aborted request as a CompactionResult: the
// reference's results are ours, and ours are the reference's once the
// aborted case is ruled out.
accepts<ReturnType<typeof Ours.compact>>(value<ReturnType<typeof Ref.compact>>())
// @ts-expect-error CompactionAborted is no CompactionResult
accepts<ReturnType<typeof Ref.compact>>(value<ReturnType<typeof Ours.compact>>())
mutual<Exclude<Awaited<ReturnType<typeof Ours.compact>>, Ours.CompactionAborted>, Awaited<ReturnType<typeof Ref.compact>>>(same, same)
mutual<NoStreamFn<Parameters<typeof Ours.generateSummary>>, NoStreamFn<Parameters<typeof Ref.generateSummary>>>(
  same,
  same,
)
mutual<ReturnType<typeof Ours.generateSummary>, ReturnType<typeof Ref.generateSummary>>(same, same)
mutual<ReturnType<typeof Ours.generateBranchSummary>, ReturnType<typeof Ref.generateBranchSummary>>(same, same)

// GenerateBranchSummaryOptions: ours adds an optional `thinkingLevel`, which is
// fine both ways; `streamFn` is the one-way field explained above.
accepts<Ours.GenerateBranchSummaryOptions>(value<Ref.GenerateBranchSummaryOptions>())
// @ts-expect-error see above: streamFn
accepts<Ref.GenerateBranchSummaryOptions>(value<Ours.GenerateBranchSummaryOptions>())
mutual<Omit<Ours.GenerateBranchSummaryOptions, 'streamFn'>, Omit<Ref.GenerateBranchSummaryOptions, 'streamFn'>>(
  same,
  same,
)

// ---------------------------------------------------------------------------
// Data types, both directions.
// ---------------------------------------------------------------------------
type Custom = { artifact: string[]; version: 2 }

// Compaction module.
mutual<Ours.CompactionSettings, Ref.CompactionSettings>(same, same)
mutual<Ours.CompactionDetails, Ref.CompactionDetails>(same, same)
// Ours adds an optional `customInstructions`: still assignable both ways.
mutual<Ours.CompactionResult, Ref.CompactionResult>(same, same)
mutual<Ours.CompactionResult<Custom>, Ref.CompactionResult<Custom>>(same, same)
mutual<Ours.CompactionPreparation, Ref.CompactionPreparation>(same, same)
mutual<Ours.CutPointResult, Ref.CutPointResult>(same, same)
mutual<Ours.ContextUsageEstimate, Ref.ContextUsageEstimate>(same, same)
mutual<Ours.FileOperations, Ref.FileOperations>(same, same)
mutual<Ours.BranchPreparation, Ref.BranchPreparation>(same, same)
mutual<Ours.BranchSummaryResult, Ref.BranchSummaryResult>(same, same)
mutual<Ours.BranchSummaryDetails, Ref.BranchSummaryDetails>(same, same)
mutual<Ours.CollectEntriesResult, Ref.CollectEntriesResult>(same, same)

// Agent messages.
mutual<Ours.BashExecutionMessage, RefMsg.BashExecutionMessage>(same, same)
mutual<Ours.CustomMessage, RefMsg.CustomMessage>(same, same)
mutual<Ours.CustomMessage<Custom>, RefMsg.CustomMessage<Custom>>(same, same)
mutual<Ours.BranchSummaryMessage, RefMsg.BranchSummaryMessage>(same, same)
mutual<Ours.CompactionSummaryMessage, RefMsg.CompactionSummaryMessage>(same, same)
mutual<Ours.AgentMessage, Core.AgentMessage>(same, same)
mutual<Ours.AgentMessage[], Core.AgentMessage[]>(same, same)
mutual<Ours.ThinkingLevel, Core.ThinkingLevel>(same, same)

// Session entries.
mutual<Ours.SessionHeader, RefSession.SessionHeader>(same, same)
mutual<Ours.SessionEntryBase, RefSession.SessionEntryBase>(same, same)
mutual<Ours.SessionMessageEntry, RefSession.SessionMessageEntry>(same, same)
mutual<Ours.ThinkingLevelChangeEntry, RefSession.ThinkingLevelChangeEntry>(same, same)
mutual<Ours.ModelChangeEntry, RefSession.ModelChangeEntry>(same, same)
// Ours adds an optional `customInstructions`: still assignable both ways.
mutual<Ours.CompactionEntry, RefSession.CompactionEntry>(same, same)
mutual<Ours.CompactionEntry<Custom>, RefSession.CompactionEntry<Custom>>(same, same)
mutual<Ours.BranchSummaryEntry, RefSession.BranchSummaryEntry>(same, same)
mutual<Ours.BranchSummaryEntry<Custom>, RefSession.BranchSummaryEntry<Custom>>(same, same)
mutual<Ours.CustomEntry, RefSession.CustomEntry>(same, same)
mutual<Ours.CustomEntry<Custom>, RefSession.CustomEntry<Custom>>(same, same)
mutual<Ours.CustomMessageEntry, RefSession.CustomMessageEntry>(same, same)
mutual<Ours.CustomMessageEntry<Custom>, RefSession.CustomMessageEntry<Custom>>(same, same)
mutual<Ours.LabelEntry, RefSession.LabelEntry>(same, same)
mutual<Ours.SessionInfoEntry, RefSession.SessionInfoEntry>(same, same)
mutual<Ours.SessionEntry, RefSession.SessionEntry>(same, same)
mutual<Ours.SessionEntry[], RefSession.SessionEntry[]>(same, same)
mutual<Ours.FileEntry, RefSession.FileEntry>(same, same)
mutual<Ours.SessionTreeNode, RefSession.SessionTreeNode>(same, same)
mutual<Ours.ReadonlySessionManager, RefSession.ReadonlySessionManager>(same, same)
// A real SessionManager (it has more methods, so this is one way by nature).
accepts<Ours.ReadonlySessionManager>(value<RefSession.SessionManager>())

// LLM messages, models and requests.
mutual<Ours.TextContent, Ai.TextContent>(same, same)
mutual<Ours.ImageContent, Ai.ImageContent>(same, same)
mutual<Ours.ThinkingContent, Ai.ThinkingContent>(same, same)
mutual<Ours.ToolCall, Ai.ToolCall>(same, same)
mutual<Ours.Usage, Ai.Usage>(same, same)
mutual<Ours.StopReason, Ai.StopReason>(same, same)
mutual<Ours.UserMessage, Ai.UserMessage>(same, same)
mutual<Ours.AssistantMessage, Ai.AssistantMessage>(same, same)
mutual<Ours.ToolResultMessage, Ai.ToolResultMessage>(same, same)
mutual<Ours.ToolResultMessage<Custom>, Ai.ToolResultMessage<Custom>>(same, same)
mutual<Ours.Message, Ai.Message>(same, same)
mutual<Ours.Message[], Ai.Message[]>(same, same)
mutual<Ours.Api, Ai.Api>(same, same)
mutual<Ours.KnownApi, Ai.KnownApi>(same, same)
mutual<Ours.Model<any>, Ai.Model<any>>(same, same)
mutual<Ours.Model<Ours.Api>, Ai.Model<Ai.Api>>(same, same)
mutual<Ours.Model<'openai-completions'>, Ai.Model<'openai-completions'>>(same, same)
mutual<Ours.Model<'openai-responses'>, Ai.Model<'openai-responses'>>(same, same)
mutual<Ours.Model<'anthropic-messages'>, Ai.Model<'anthropic-messages'>>(same, same)
mutual<Ours.Model<'google-vertex'>, Ai.Model<'google-vertex'>>(same, same)
mutual<Ours.Tool, Ai.Tool>(same, same)
mutual<Ours.Context, Ai.Context>(same, same)
mutual<Ours.StreamOptions, Ai.StreamOptions>(same, same)
mutual<Ours.SimpleStreamOptions, Ai.SimpleStreamOptions>(same, same)
mutual<Exclude<Ours.ThinkingLevel, 'off'>, Ai.ThinkingLevel>(same, same)
mutual<Ours.ThinkingLevelMap, Ai.ThinkingLevelMap>(same, same)
mutual<Ours.ThinkingBudgets, Ai.ThinkingBudgets>(same, same)
mutual<Ours.AssistantMessageEvent, Ai.AssistantMessageEvent>(same, same)
// pi-ai's stream class fits our structural stream types (not the reverse: see above).
accepts<Ours.AssistantMessageEventStream>(value<Ai.AssistantMessageEventStream>())
accepts<Ours.AssistantMessageStreamLike>(value<Ai.AssistantMessageEventStream>())

// ---------------------------------------------------------------------------
// Our additions accept the reference's data.
// ---------------------------------------------------------------------------
accepts<Parameters<typeof Ours.projectForSummary>[0]>(value<Ai.Message[]>())
accepts<Parameters<typeof Ours.projectForSummary>[1]>({ model: value<Ai.Model<any>>(), toolResultBodies: 1 })
// The file functions' results always carry previousSummary and turnPrefix (undefined where there is none).
accepts<{ previousSummary: string | undefined }>(value<Ours.FilePlan>())
accepts<{ turnPrefix: string | undefined }>(value<Ours.FileTranscript>())
// A projection's messages go to serializeConversation; its assistant messages
// carry only role, content and timestamp, so they are no reference Message.
accepts<Parameters<typeof Ours.serializeConversation>[0]>(Ours.projectForSummary(value<Ai.Message[]>()))
// @ts-expect-error no api, provider, model, usage or stopReason on a projected assistant message
accepts<Ai.Message[]>(Ours.projectForSummary(value<Ai.Message[]>()))
accepts<Ai.Message[][]>(Ours.splitUserRounds(value<Ai.Message[]>()))
accepts<Ours.GenerateBranchSummaryOptions>({
  model: value<Ai.Model<any>>(),
  apiKey: 'k',
  signal: new AbortController().signal,
  streamFn: value<typeof Ai.streamSimple>(),
  thinkingLevel: value<Core.ThinkingLevel>(),
})
