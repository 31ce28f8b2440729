/*
 * Public types of `prime-compaction/agent-0.78`.
 *
 * The shapes match the compaction module of `@earendil-works/pi-coding-agent`
 * 0.78.1 (and the message, model and session types it relies on) so that either
 * package can be used where the other is expected. Everything is declared here
 * structurally: nothing from `@earendil-works/*` needs to be installed.
 * `agent-1.6.d.ts` re-exports the declarations that 1.6 has unchanged.
 *
 * `AbortSignal` is the global one (from `@types/node` or the DOM lib).
 */

// ============================================================================
// LLM messages and content blocks
// ============================================================================

/** Plain text inside a message. */
export interface TextContent {
  type: 'text'
  text: string
  /** Provider-issued opaque signature for this text block, replayed verbatim. */
  textSignature?: string
}

/** Model reasoning emitted by an assistant turn. */
export interface ThinkingContent {
  type: 'thinking'
  thinking: string
  /** Provider-issued opaque signature, replayed verbatim on later requests. */
  thinkingSignature?: string
  /** Set when the provider withheld the reasoning text; the signature then carries the encrypted payload. */
  redacted?: boolean
}

/** An inline image, base64-encoded. */
export interface ImageContent {
  type: 'image'
  /** Base64 image bytes. */
  data: string
  mimeType: string
}

/** A tool invocation requested by the assistant. */
export interface ToolCall {
  type: 'toolCall'
  id: string
  name: string
  arguments: Record<string, any>
  /** Provider-issued opaque signature tied to this call. */
  thoughtSignature?: string
}

/** Token counts and cost reported for one LLM response. */
export interface Usage {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  totalTokens: number
  cost: {
    input: number
    output: number
    cacheRead: number
    cacheWrite: number
    total: number
  }
}

/** Why an assistant response ended. */
export type StopReason = 'stop' | 'length' | 'toolUse' | 'error' | 'aborted'

/** Wire protocols with built-in support. */
export type KnownApi =
  | 'openai-completions'
  | 'mistral-conversations'
  | 'openai-responses'
  | 'azure-openai-responses'
  | 'openai-codex-responses'
  | 'anthropic-messages'
  | 'bedrock-converse-stream'
  | 'google-generative-ai'
  | 'google-vertex'

/** Wire protocol of a model: a known one or any custom identifier. */
export type Api = KnownApi | (string & {})

/** Provider identifier, such as `"anthropic"` or `"openrouter"`. */
export type Provider = string

/** Error details captured in an assistant message diagnostic. */
export interface DiagnosticErrorInfo {
  name?: string
  message: string
  stack?: string
  code?: string | number
}

/** Side-channel record attached to an assistant message (for example a recovered provider error). */
export interface AssistantMessageDiagnostic {
  type: string
  timestamp: number
  error?: DiagnosticErrorInfo
  details?: Record<string, unknown>
}

/** A message written by the user. */
export interface UserMessage {
  role: 'user'
  content: string | (TextContent | ImageContent)[]
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/** A model response, with the usage it cost. */
export interface AssistantMessage {
  role: 'assistant'
  content: (TextContent | ThinkingContent | ToolCall)[]
  api: Api
  provider: Provider
  /** Model id the request was sent to. */
  model: string
  /** Model id the provider reports having answered with, when it differs. */
  responseModel?: string
  responseId?: string
  diagnostics?: AssistantMessageDiagnostic[]
  usage: Usage
  stopReason: StopReason
  /** Set when `stopReason` is `"error"` or `"aborted"`. */
  errorMessage?: string
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/** The output of a tool call, sent back to the model. */
export interface ToolResultMessage<TDetails = any> {
  role: 'toolResult'
  /** Id of the `ToolCall` this answers. */
  toolCallId: string
  toolName: string
  content: (TextContent | ImageContent)[]
  /** Tool-specific data kept for the UI; never sent to the model. */
  details?: TDetails
  isError: boolean
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/** A message an LLM understands. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage

// ============================================================================
// Models, requests and streams
// ============================================================================

/** Reasoning effort levels, `"off"` meaning no reasoning. */
export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh'

/** Provider-specific values for each thinking level; `null` marks a level the model cannot use. */
export type ThinkingLevelMap = Partial<Record<ThinkingLevel, string | null>>

/** Token budgets per reasoning level, for providers that take a budget instead of an effort. */
export interface ThinkingBudgets {
  minimal?: number
  low?: number
  medium?: number
  high?: number
}

/** Routing preferences understood by OpenRouter. */
export interface OpenRouterRouting {
  allow_fallbacks?: boolean
  require_parameters?: boolean
  data_collection?: 'deny' | 'allow'
  zdr?: boolean
  enforce_distillable_text?: boolean
  order?: string[]
  only?: string[]
  ignore?: string[]
  quantizations?: string[]
  sort?:
    | string
    | {
        by?: string
        partition?: string | null
      }
  max_price?: {
    prompt?: number | string
    completion?: number | string
    image?: number | string
    audio?: number | string
    request?: number | string
  }
  preferred_min_throughput?:
    | number
    | {
        p50?: number
        p75?: number
        p90?: number
        p99?: number
      }
  preferred_max_latency?:
    | number
    | {
        p50?: number
        p75?: number
        p90?: number
        p99?: number
      }
}

/** Routing preferences understood by the Vercel AI Gateway. */
export interface VercelGatewayRouting {
  only?: string[]
  order?: string[]
}

/** Overrides for OpenAI-compatible chat-completions endpoints (otherwise guessed from the base URL). */
export interface OpenAICompletionsCompat {
  supportsStore?: boolean
  supportsDeveloperRole?: boolean
  supportsReasoningEffort?: boolean
  supportsUsageInStreaming?: boolean
  maxTokensField?: 'max_completion_tokens' | 'max_tokens'
  requiresToolResultName?: boolean
  requiresAssistantAfterToolResult?: boolean
  requiresThinkingAsText?: boolean
  requiresReasoningContentOnAssistantMessages?: boolean
  thinkingFormat?:
    | 'openai'
    | 'openrouter'
    | 'deepseek'
    | 'together'
    | 'zai'
    | 'qwen'
    | 'qwen-chat-template'
    | 'string-thinking'
    | 'ant-ling'
  openRouterRouting?: OpenRouterRouting
  vercelGatewayRouting?: VercelGatewayRouting
  zaiToolStream?: boolean
  supportsStrictMode?: boolean
  cacheControlFormat?: 'anthropic'
  sendSessionAffinityHeaders?: boolean
  supportsLongCacheRetention?: boolean
}

/** Overrides for OpenAI Responses endpoints. */
export interface OpenAIResponsesCompat {
  sendSessionIdHeader?: boolean
  supportsLongCacheRetention?: boolean
}

/** Overrides for Anthropic Messages-compatible endpoints. */
export interface AnthropicMessagesCompat {
  supportsEagerToolInputStreaming?: boolean
  supportsLongCacheRetention?: boolean
  sendSessionAffinityHeaders?: boolean
  supportsCacheControlOnTools?: boolean
  supportsTemperature?: boolean
  forceAdaptiveThinking?: boolean
  allowEmptySignature?: boolean
}

/** The compatibility overrides that apply to a given wire protocol. */
export type ModelCompat<TApi extends Api> = TApi extends 'openai-completions'
  ? OpenAICompletionsCompat
  : TApi extends 'openai-responses'
    ? OpenAIResponsesCompat
    : TApi extends 'anthropic-messages'
      ? AnthropicMessagesCompat
      : never

/**
 * Description of an LLM: where to reach it, what it accepts and what it costs.
 * Compaction reads `maxTokens`, `contextWindow` and `reasoning`; the rest is
 * passed through to the stream function.
 */
export interface Model<TApi extends Api = Api> {
  id: string
  /** Human-readable name. */
  name: string
  api: TApi
  provider: Provider
  baseUrl: string
  /** Whether the model accepts a reasoning level. */
  reasoning: boolean
  thinkingLevelMap?: ThinkingLevelMap
  /** Input modalities the model accepts. */
  input: ('text' | 'image')[]
  /** Price per million tokens. */
  cost: {
    input: number
    output: number
    cacheRead: number
    cacheWrite: number
  }
  /** Total tokens the model can attend to. */
  contextWindow: number
  /** Largest response the model can produce, in tokens (0 or less: no limit known). */
  maxTokens: number
  /** Extra HTTP headers sent with every request to this model. */
  headers?: Record<string, string>
  compat?: ModelCompat<TApi>
}

/** A JSON schema describing tool parameters (any schema object). */
export interface ToolParametersSchema {}

/** A tool the model may call. */
export interface Tool<TParameters extends ToolParametersSchema = ToolParametersSchema> {
  name: string
  description: string
  parameters: TParameters
}

/** Everything sent to the model for one request. */
export interface Context {
  systemPrompt?: string
  messages: Message[]
  tools?: Tool[]
}

/** Status and headers of the provider's HTTP response. */
export interface ProviderResponse {
  status: number
  headers: Record<string, string>
}

/** Per-request options understood by every provider. */
export interface StreamOptions {
  temperature?: number
  maxTokens?: number
  signal?: AbortSignal
  apiKey?: string
  transport?: 'sse' | 'websocket' | 'websocket-cached' | 'auto'
  cacheRetention?: 'none' | 'short' | 'long'
  sessionId?: string
  /** Inspect or replace the provider payload before it is sent; return `undefined` to keep it. */
  onPayload?: (payload: unknown, model: Model<Api>) => unknown | undefined | Promise<unknown | undefined>
  /** Called once the HTTP response arrives, before its body is read. */
  onResponse?: (response: ProviderResponse, model: Model<Api>) => void | Promise<void>
  headers?: Record<string, string>
  timeoutMs?: number
  websocketConnectTimeoutMs?: number
  maxRetries?: number
  maxRetryDelayMs?: number
  metadata?: Record<string, unknown>
}

/** Request options plus a provider-neutral reasoning level. */
export interface SimpleStreamOptions extends StreamOptions {
  reasoning?: Exclude<ThinkingLevel, 'off'>
  thinkingBudgets?: ThinkingBudgets
}

/** Incremental events of a streamed assistant response. */
export type AssistantMessageEvent =
  | { type: 'start'; partial: AssistantMessage }
  | { type: 'text_start'; contentIndex: number; partial: AssistantMessage }
  | { type: 'text_delta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'text_end'; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: 'thinking_start'; contentIndex: number; partial: AssistantMessage }
  | { type: 'thinking_delta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'thinking_end'; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: 'toolcall_start'; contentIndex: number; partial: AssistantMessage }
  | { type: 'toolcall_delta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'toolcall_end'; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: 'done'; reason: 'stop' | 'length' | 'toolUse'; message: AssistantMessage }
  | { type: 'error'; reason: 'aborted' | 'error'; error: AssistantMessage }

/**
 * The part of a response stream that compaction uses: the final message.
 * Failures are expected to resolve to a message whose `stopReason` is
 * `"error"` or `"aborted"` rather than to reject.
 */
export interface AssistantMessageStreamLike {
  result(): Promise<AssistantMessage>
}

/** A full response stream: its events, then its final message. */
export interface AssistantMessageEventStream extends AssistantMessageStreamLike, AsyncIterable<AssistantMessageEvent> {}

/**
 * Sends one request to a model. Any stream function of pi-agent-core
 * (`streamSimple`, an agent's `streamFn`) fits this type.
 */
export type StreamFn = (
  model: Model<Api>,
  context: Context,
  options?: SimpleStreamOptions,
) => AssistantMessageStreamLike | Promise<AssistantMessageStreamLike>

// ============================================================================
// Agent messages: LLM messages plus the coding agent's own kinds
// ============================================================================

/** Output of a shell command the user ran directly (`!cmd`). */
export interface BashExecutionMessage {
  role: 'bashExecution'
  command: string
  output: string
  /** `undefined` when the process did not exit normally. */
  exitCode: number | undefined
  cancelled: boolean
  /** Whether `output` was shortened; the full text is then at `fullOutputPath`. */
  truncated: boolean
  fullOutputPath?: string
  /** Milliseconds since the Unix epoch. */
  timestamp: number
  /** Kept out of the model's context (`!!cmd`). */
  excludeFromContext?: boolean
}

/** A message injected by an extension. */
export interface CustomMessage<T = unknown> {
  role: 'custom'
  /** Identifies the extension (or purpose) that produced the message. */
  customType: string
  content: string | (TextContent | ImageContent)[]
  /** Whether the UI renders it. */
  display: boolean
  /** Extension data; never sent to the model. */
  details?: T
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/** Stands in for a branch the user navigated away from. */
export interface BranchSummaryMessage {
  role: 'branchSummary'
  summary: string
  /** Entry id the summarized branch ended at. */
  fromId: string
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/** Stands in for the history a compaction replaced. */
export interface CompactionSummaryMessage {
  role: 'compactionSummary'
  summary: string
  tokensBefore: number
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/**
 * Registry of non-LLM message kinds, keyed by role. Add your own kinds with
 * declaration merging:
 *
 * ```ts
 * declare module 'prime-compaction/agent-0.78' {
 *   interface CustomAgentMessages { note: { role: 'note'; text: string; timestamp: number } }
 * }
 * ```
 */
export interface CustomAgentMessages {
  bashExecution: BashExecutionMessage
  custom: CustomMessage
  branchSummary: BranchSummaryMessage
  compactionSummary: CompactionSummaryMessage
}

/** Any message an agent session holds. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages]

// ============================================================================
// Session entries (one JSON line each in a session file)
// ============================================================================

/** The first line of a session file. */
export interface SessionHeader {
  type: 'session'
  version?: number
  id: string
  /** ISO 8601 time. */
  timestamp: string
  cwd: string
  /** Path of the session this one was forked from. */
  parentSession?: string
}

/** Fields every entry has: entries form a tree through `parentId`. */
export interface SessionEntryBase {
  type: string
  id: string
  /** `null` for a root entry. */
  parentId: string | null
  /** ISO 8601 time. */
  timestamp: string
}

/** An entry holding one agent message. */
export interface SessionMessageEntry extends SessionEntryBase {
  type: 'message'
  message: AgentMessage
}

/** The user changed the reasoning level. */
export interface ThinkingLevelChangeEntry extends SessionEntryBase {
  type: 'thinking_level_change'
  thinkingLevel: string
}

/** The user switched models. */
export interface ModelChangeEntry extends SessionEntryBase {
  type: 'model_change'
  provider: string
  modelId: string
}

/** A compaction: the summary replaces everything on the path before `firstKeptEntryId`. */
export interface CompactionEntry<T = unknown> extends SessionEntryBase {
  type: 'compaction'
  summary: string
  firstKeptEntryId: string
  /** Estimated context size, in tokens, before this compaction. */
  tokensBefore: number
  /** Data of whoever produced the summary (built-in: `CompactionDetails`). */
  details?: T
  /** Set when an extension, not the built-in compactor, produced the summary. */
  fromHook?: boolean
  /** Focus instructions the user gave with `/compact`, kept for display. */
  customInstructions?: string
}

/** A summary of a branch the user left, placed where they navigated to. */
export interface BranchSummaryEntry<T = unknown> extends SessionEntryBase {
  type: 'branch_summary'
  /** Entry id the summarized branch ended at. */
  fromId: string
  summary: string
  /** Data of whoever produced the summary (built-in: `BranchSummaryDetails`); never sent to the model. */
  details?: T
  /** Set when an extension, not the built-in summarizer, produced the summary. */
  fromHook?: boolean
}

/** Extension state saved in the session; never part of the model's context. */
export interface CustomEntry<T = unknown> extends SessionEntryBase {
  type: 'custom'
  customType: string
  data?: T
}

/** An extension message that is part of the model's context (sent as user content). */
export interface CustomMessageEntry<T = unknown> extends SessionEntryBase {
  type: 'custom_message'
  customType: string
  content: string | (TextContent | ImageContent)[]
  /** Extension data; never sent to the model. */
  details?: T
  /** Whether the UI renders it. */
  display: boolean
}

/** Sets (or, with `undefined`, clears) a user bookmark on another entry. */
export interface LabelEntry extends SessionEntryBase {
  type: 'label'
  targetId: string
  label: string | undefined
}

/** Session metadata such as its display name. */
export interface SessionInfoEntry extends SessionEntryBase {
  type: 'session_info'
  name?: string
}

/** Any entry of a session after its header. */
export type SessionEntry =
  | SessionMessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry

/** Any line of a session file. */
export type FileEntry = SessionHeader | SessionEntry

/** A node of the session tree. */
export interface SessionTreeNode {
  entry: SessionEntry
  children: SessionTreeNode[]
  label?: string
  labelTimestamp?: string
}

/**
 * The read-only part of a session manager (pi-coding-agent's `SessionManager`
 * satisfies it). Branch collection only walks `getBranch` and `getEntry`.
 */
export interface ReadonlySessionManager {
  getCwd(): string
  getSessionDir(): string
  getSessionId(): string
  getSessionFile(): string | undefined
  getLeafId(): string | null
  getLeafEntry(): SessionEntry | undefined
  getEntry(id: string): SessionEntry | undefined
  getLabel(id: string): string | undefined
  /** Entries from the root down to `fromId` (default: the current leaf). */
  getBranch(fromId?: string): SessionEntry[]
  getHeader(): SessionHeader | null
  getEntries(): SessionEntry[]
  getTree(): SessionTreeNode[]
  getSessionName(): string | undefined
}

// ============================================================================
// Compaction
// ============================================================================

/** What the built-in compactor stores in `CompactionEntry.details`. */
export interface CompactionDetails {
  readFiles: string[]
  modifiedFiles: string[]
}

/** What `compact` produces; the caller turns it into a `CompactionEntry`. */
export interface CompactionResult<T = unknown> {
  summary: string
  firstKeptEntryId: string
  tokensBefore: number
  details?: T
  /** Focus instructions the summary was made with, to persist on the entry. */
  customInstructions?: string
}

/** When to compact and how much to keep. */
export interface CompactionSettings {
  enabled: boolean
  /** Tokens left free for the model's answer; compaction starts when the context would eat into them. */
  reserveTokens: number
  /** Approximate size, in tokens, of the recent tail kept verbatim. */
  keepRecentTokens: number
  /**
   * Prime-compaction addition: count tokens with this real encoding in
   * `prepareCompaction` and the session-file planners (cut point and
   * `tokensBefore`) instead of the reference's characters / 4. Unset: the
   * estimate, as in the reference.
   */
  tokenizer?: TokenizerName
}

/** The BPE encodings `countTokens` and the `tokenizer` setting know. */
export type TokenizerName = 'o200k_base' | 'cl100k_base'

/** Prime-compaction addition: options of `estimateTokens` and `findCutPoint`. */
export interface TokenCountOptions {
  /** Count with this encoding instead of characters / 4. */
  tokenizer?: TokenizerName
}

/** `{ enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 }`. */
export declare const DEFAULT_COMPACTION_SETTINGS: CompactionSettings

/** Context size implied by a usage report: `totalTokens`, or the sum of its parts when that is 0. */
export declare function calculateContextTokens(usage: Usage): number

/** Usage of the newest assistant message that neither failed nor was aborted. */
export declare function getLastAssistantUsage(entries: SessionEntry[]): Usage | undefined

/** Breakdown of a context-size estimate. */
export interface ContextUsageEstimate {
  /** `usageTokens + trailingTokens`. */
  tokens: number
  /** Tokens reported by the last usable assistant usage (0 if none). */
  usageTokens: number
  /** Estimated tokens of the messages after it. */
  trailingTokens: number
  /** Index of the message whose usage was used, or `null`. */
  lastUsageIndex: number | null
}

/** Context size of `messages`: the last reported usage plus an estimate of what follows it. */
export declare function estimateContextTokens(messages: AgentMessage[]): ContextUsageEstimate

/** Whether the context no longer leaves `settings.reserveTokens` free (always false when disabled). */
export declare function shouldCompact(contextTokens: number, contextWindow: number, settings: CompactionSettings): boolean

/**
 * Rough, deliberately high token count of one message (characters / 4,
 * images at a fixed size); with `options.tokenizer`, the exact count.
 */
export declare function estimateTokens(message: AgentMessage, options?: TokenCountOptions): number

/**
 * Index of the entry that opens the turn containing `entryIndex` (a user or
 * bash message, a branch summary or a custom message), searching back no
 * further than `startIndex`; -1 if there is none.
 */
export declare function findTurnStartIndex(entries: SessionEntry[], entryIndex: number, startIndex: number): number

/** Where compaction cuts. */
export interface CutPointResult {
  /** First entry kept verbatim. */
  firstKeptEntryIndex: number
  /** Start of the turn the cut falls inside, or -1. */
  turnStartIndex: number
  /** Whether the cut falls inside a turn rather than before a user message. */
  isSplitTurn: boolean
}

/**
 * Choose the cut in `entries[startIndex..endIndex)` that keeps about
 * `keepRecentTokens` of the newest messages. Tool results are never the first
 * kept entry.
 */
export declare function findCutPoint(
  entries: SessionEntry[],
  startIndex: number,
  endIndex: number,
  keepRecentTokens: number,
  options?: TokenCountOptions,
): CutPointResult

/**
 * Ask the model for a structured summary of `currentMessages`, updating
 * `previousSummary` when given. Resolves to the summary text; rejects when the
 * model answers with an error, is cut off, calls a tool or gives no text, and
 * with an `AbortError` when `signal` aborts (a string has no value that could
 * not be mistaken for a summary).
 */
export declare function generateSummary(
  currentMessages: AgentMessage[],
  model: Model<any>,
  reserveTokens: number,
  apiKey: string | undefined,
  headers?: Record<string, string>,
  signal?: AbortSignal,
  customInstructions?: string,
  previousSummary?: string,
  thinkingLevel?: ThinkingLevel,
  streamFn?: StreamFn,
): Promise<string>

/** Everything `compact` needs, computed without calling a model. */
export interface CompactionPreparation {
  /** Id of the first entry kept verbatim. */
  firstKeptEntryId: string
  /** Messages the summary replaces. */
  messagesToSummarize: AgentMessage[]
  /** Start of a turn that is cut in two, summarized separately. */
  turnPrefixMessages: AgentMessage[]
  isSplitTurn: boolean
  /** Estimated context size before compaction. */
  tokensBefore: number
  /** Summary of the previous compaction on this path, to be updated. */
  previousSummary?: string
  /** Files touched in the summarized span (and carried over from the previous compaction). */
  fileOps: FileOperations
  settings: CompactionSettings
}

/**
 * Plan a compaction of a session path (root first). Returns `undefined` when
 * there is nothing to do, e.g. when the path already ends with a compaction.
 */
export declare function prepareCompaction(
  pathEntries: SessionEntry[],
  settings: CompactionSettings,
): CompactionPreparation | undefined

/**
 * Prime-compaction addition. `prepareCompaction` as a Promise: the entries are
 * read as `prepareCompaction` reads them, in slices of a few milliseconds with
 * the event loop running between them (a message is counted whole within one:
 * with an exact `tokenizer`, a message of tens of MB holds the loop while it is
 * counted), so it gives exactly its result (on your own objects) or its error,
 * as a rejection (bad input too). It plans the
 * array as it was at the call: changing the array meanwhile changes nothing.
 * Do not change the entry objects until the Promise settles: that gives no
 * defined result.
 */
export declare function prepareCompactionAsync(
  pathEntries: SessionEntry[],
  settings: CompactionSettings,
): Promise<CompactionPreparation | undefined>

/**
 * Prime-compaction addition. What `compact` resolves with when its `signal`
 * aborts before the summary is complete: nothing to store, not even a partial
 * summary. (The reference resolves with whatever text the aborted request
 * left, as a `CompactionResult`.)
 */
export interface CompactionAborted {
  aborted: true
  summary?: undefined
  firstKeptEntryId?: undefined
  tokensBefore?: undefined
  details?: undefined
}

/**
 * Summarize a prepared compaction with the model (two summaries merged when a
 * turn is split) and append the file lists.
 *
 * Aborting `signal` (already aborted, or during a request) resolves the
 * promise at once with `{ aborted: true }` instead of a result, so check for
 * it (`'aborted' in result`, or `signal.aborted` as the agent does) before
 * storing anything. It resolves rather than rejects because the agent reports
 * a rejected auto-compaction as a failure and a resolved one whose signal
 * aborted as cancelled. Other failures reject.
 */
export declare function compact(
  preparation: CompactionPreparation,
  model: Model<any>,
  apiKey: string | undefined,
  headers?: Record<string, string>,
  customInstructions?: string,
  signal?: AbortSignal,
  thinkingLevel?: ThinkingLevel,
  streamFn?: StreamFn,
): Promise<CompactionResult | CompactionAborted>

/** One summarization request, as `compact` hands it to the model. */
export interface SummaryRequest {
  systemPrompt: string
  /** The user message's text. */
  prompt: string
  maxTokens: number
  /** `'turnPrefix'` for the second request of a split turn. */
  part: 'history' | 'turnPrefix'
}

/**
 * Prime-compaction addition. The requests `compact` would send for
 * `preparation` (first attempts, in order), built by the same code, without
 * calling a model.
 */
export declare function buildSummaryRequests(
  preparation: CompactionPreparation,
  model: Model<any>,
  customInstructions?: string,
): SummaryRequest[]

// ============================================================================
// Branch summarization
// ============================================================================

/** Outcome of `generateBranchSummary`. */
export interface BranchSummaryResult {
  summary?: string
  readFiles?: string[]
  modifiedFiles?: string[]
  /** Set when the request was aborted. */
  aborted?: boolean
  /** Set when the model answered with an error. */
  error?: string
}

/** What the built-in summarizer stores in `BranchSummaryEntry.details`. */
export interface BranchSummaryDetails {
  readFiles: string[]
  modifiedFiles: string[]
}

/** Messages of a branch selected to fit a token budget. */
export interface BranchPreparation {
  /** Oldest first. */
  messages: AgentMessage[]
  fileOps: FileOperations
  /** Estimated tokens of `messages`. */
  totalTokens: number
}

/** Entries abandoned by a navigation. */
export interface CollectEntriesResult {
  /** Oldest first. */
  entries: SessionEntry[]
  /** Deepest entry shared by both positions, or `null`. */
  commonAncestorId: string | null
}

/** Options of `generateBranchSummary`. */
export interface GenerateBranchSummaryOptions {
  model: Model<any>
  apiKey: string
  headers?: Record<string, string>
  signal: AbortSignal
  /** Extra focus for the summary. */
  customInstructions?: string
  /** Use `customInstructions` as the whole prompt instead of appending them. */
  replaceInstructions?: boolean
  /** Tokens kept free for prompt and answer when budgeting the branch (default 16384). */
  reserveTokens?: number
  /** Send the request through this function instead of the default client. */
  streamFn?: StreamFn
  /** Reasoning level for the summary request (ignored for models without reasoning). */
  thinkingLevel?: ThinkingLevel
}

/**
 * Entries between `oldLeafId` and the common ancestor with `targetId`, i.e.
 * what a jump from one to the other leaves behind.
 */
export declare function collectEntriesForBranchSummary(
  session: ReadonlySessionManager,
  oldLeafId: string | null,
  targetId: string,
): CollectEntriesResult

/**
 * Turn branch entries into messages, newest first until `tokenBudget` is used
 * (0: no limit), and gather file operations from all of them.
 */
export declare function prepareBranchEntries(entries: SessionEntry[], tokenBudget?: number): BranchPreparation

/**
 * Ask the model for a structured summary of abandoned branch entries; an
 * error, a cut-off answer, a tool call or an answer with no text resolves
 * `{ error }`; it resolves `{ aborted: true }` as soon as `signal` aborts.
 */
export declare function generateBranchSummary(
  entries: SessionEntry[],
  options: GenerateBranchSummaryOptions,
): Promise<BranchSummaryResult>

// ============================================================================
// File tracking and serialization
// ============================================================================

/** Paths touched by `read`, `write` and `edit` tool calls. */
export interface FileOperations {
  read: Set<string>
  written: Set<string>
  edited: Set<string>
}

/** Empty `FileOperations`. */
export declare function createFileOps(): FileOperations

/** Add the paths of an assistant message's `read`/`write`/`edit` tool calls to `fileOps`. */
export declare function extractFileOpsFromMessage(message: AgentMessage, fileOps: FileOperations): void

/** Sorted lists: files only read, and files written or edited. */
export declare function computeFileLists(fileOps: FileOperations): {
  readFiles: string[]
  modifiedFiles: string[]
}

/** The `<read-files>`/`<modified-files>` blocks appended to a summary ('' when both lists are empty). */
export declare function formatFileOperations(readFiles: string[], modifiedFiles: string[]): string

/** Options of `serializeConversation`. */
export interface SerializeOptions {
  /** Include assistant reasoning in the transcript. */
  reasoning?: boolean
}

/**
 * Render messages as a plain-text transcript for a summarizer, so that the
 * model reads it as material rather than a conversation to continue. Long tool
 * results are shortened. Run `convertToLlm` first for agent messages.
 */
export declare function serializeConversation(messages: (Message | ProjectedMessage)[], options?: SerializeOptions): string

/**
 * System prompt of every summarization request: the spec's, not the agent's
 * (whose text is a literal type in its own declarations), so a `string` here.
 */
export declare const SUMMARIZATION_SYSTEM_PROMPT: string

// ============================================================================
// Agent message helpers
// ============================================================================

/** Text placed before a compaction summary when it is shown to the model. */
export declare const COMPACTION_SUMMARY_PREFIX: 'The conversation history before this point was compacted into the following summary:\n\n<summary>\n'
/** Text placed after a compaction summary. */
export declare const COMPACTION_SUMMARY_SUFFIX: '\n</summary>'
/** Text placed before a branch summary when it is shown to the model. */
export declare const BRANCH_SUMMARY_PREFIX: 'The following is a summary of a branch that this conversation came back from:\n\n<summary>\n'
/** Text placed after a branch summary. */
export declare const BRANCH_SUMMARY_SUFFIX: '</summary>'

/** The user-message text a bash execution becomes in the model's context. */
export declare function bashExecutionToText(msg: BashExecutionMessage): string

/** Build a branch summary message; `timestamp` is an ISO 8601 string. */
export declare function createBranchSummaryMessage(summary: string, fromId: string, timestamp: string): BranchSummaryMessage

/** Build a compaction summary message; `timestamp` is an ISO 8601 string. */
export declare function createCompactionSummaryMessage(
  summary: string,
  tokensBefore: number,
  timestamp: string,
): CompactionSummaryMessage

/** Build the message of a `CustomMessageEntry`; `timestamp` is an ISO 8601 string. */
export declare function createCustomMessage(
  customType: string,
  content: string | (TextContent | ImageContent)[],
  display: boolean,
  details: unknown | undefined,
  timestamp: string,
): CustomMessage

/**
 * Map agent messages to LLM messages: the coding agent's own kinds become user
 * messages, messages excluded from context are dropped, LLM messages pass through.
 */
export declare function convertToLlm(messages: AgentMessage[]): Message[]

// ============================================================================
// prime-compaction additions (not in pi-coding-agent)
// ============================================================================

/** Options of `projectForSummary`. */
export interface ProjectionOptions {
  /** Summarizer model; decides whether assistant reasoning can be kept (Claude-family models: no). */
  model?: Pick<Model, 'api' | 'provider' | 'id'>
  /** How many of the newest valid tool-result bodies stay verbatim; older ones become a placeholder (default 3). */
  toolResultBodies?: number
  /** Size bound for a single oversized round: its middle is cut, head and tail kept. Unset: no bound. */
  roundBound?: number
  /** `false` drops assistant reasoning whatever the model (default: kept unless Claude-family). */
  reasoning?: boolean
  /** Oldest user rounds to leave out; the newest round always stays (default 0). */
  dropOldestRounds?: number
}

/**
 * Prime-compaction addition. Build the loss-bounded copy of `messages` that a
 * summarization request sees: image bytes replaced, empty and orphaned tool
 * results dropped, older tool-result bodies elided, reasoning kept only for
 * models that accept it. The input is not modified; the copies are new plain
 * objects. For the copy's transcript, `serializeForSummary` gives the same
 * text without building them (0.35 to 0.6 of the time of the two calls in
 * benches/serialize.mjs).
 */
export declare function projectForSummary(messages: Message[], options?: ProjectionOptions): ProjectedMessage[]

/**
 * A message of a summary projection (`projectForSummary`): a new object with
 * what a transcript reads; an assistant message keeps only its `role`,
 * `content` and `timestamp` (no `api`, `model`, `usage` or `stopReason`), a
 * tool result no `details`, a text or thinking block no signature, and an
 * image is a `[image]` text block.
 */
export type ProjectedMessage = Exclude<Message, AssistantMessage> | Pick<AssistantMessage, 'role' | 'content' | 'timestamp'>

/**
 * Prime-compaction addition. The transcript a summarization request carries:
 * the same text as `serializeConversation(projectForSummary(messages, options),
 * { reasoning })`, in one call that builds no projected message objects.
 * `reasoning` is false for Claude-family models or `options.reasoning: false`.
 */
export declare function serializeForSummary(messages: Message[], options?: ProjectionOptions): string

/**
 * Prime-compaction addition. Group messages into user rounds: a round opens
 * at a user message and runs until the next one. Rounds are the unit that
 * summarization retries drop, oldest first.
 */
export declare function splitUserRounds(messages: Message[]): Message[][]

/**
 * Prime-compaction addition. Exact token count of `text` under a tiktoken
 * encoding (default `o200k_base`), unlike the character-based `estimateTokens`.
 */
export declare function countTokens(text: string, encoding?: 'o200k_base' | 'cl100k_base'): number

/** Options for the file-based preparation functions. */
export interface PrepareFromFileOptions {
  /** Leaf whose path is compacted (default: the last entry of the file). */
  leafId?: string
  /** Default: `DEFAULT_COMPACTION_SETTINGS`. */
  settings?: CompactionSettings
}

/**
 * Prime-compaction addition. A compaction plan computed straight from a
 * session file, naming entries by id instead of copying messages.
 */
export interface FilePlan {
  firstKeptEntryId: string
  tokensBefore: number
  isSplitTurn: boolean
  /** Ids of the entries whose messages the summary replaces, oldest first. */
  messagesToSummarizeIds: string[]
  /** Ids of the entries of the split turn's prefix, oldest first. */
  turnPrefixIds: string[]
  /** Touched files, as arrays. */
  fileOps: { read: string[]; written: string[]; edited: string[] }
  /** The previous compaction's summary; `undefined` where there is none. */
  previousSummary: string | undefined
}

/**
 * Prime-compaction addition. Read and parse a session JSONL file natively
 * (off the JavaScript thread) and plan its compaction, without building the
 * entries in JavaScript. Resolves to `undefined` where `prepareCompaction`
 * would return `undefined`; rejects with an error naming the line for a
 * malformed line, a missing header or a session version below 3, and with
 * Node's `fs` code (`ENOENT`, `EACCES`, `EISDIR`, `ENOTDIR`) for a file the
 * system will not open or read. Bad arguments (a path that is no string,
 * empty or holding a NUL; options of the wrong types) throw a `TypeError` at
 * once, as the synchronous twin does, rather than reject.
 */
export declare function prepareCompactionFromFile(path: string, options?: PrepareFromFileOptions): Promise<FilePlan | undefined>

/** Prime-compaction addition. Synchronous twin of `prepareCompactionFromFile`. */
export declare function prepareCompactionFromFileSync(path: string, options?: PrepareFromFileOptions): FilePlan | undefined

/** Options of `serializeForSummaryFromFile`. */
export interface SerializeFromFileOptions extends PrepareFromFileOptions {
  /** The summarizer model: Claude-family models get no reasoning lines. */
  model?: Pick<Model, 'api' | 'provider' | 'id'>
  /** `false` leaves assistant reasoning out whatever the model. */
  reasoning?: boolean
}

/** What a compaction of a session file would send to the summarizer. */
export interface FileTranscript {
  plan: FilePlan
  /** The projected, serialized history transcript (first attempt). */
  conversation: string
  /** The split turn's prefix transcript, when the cut splits a turn; else `undefined`. */
  turnPrefix: string | undefined
}

/**
 * Prime-compaction addition. Plan a compaction of a session file and return
 * the projected, serialized transcripts its summarization request would
 * carry. Resolves to `undefined` where there is nothing to compact; fails as
 * `prepareCompactionFromFile` does (bad arguments throw at once).
 */
export declare function serializeForSummaryFromFile(
  path: string,
  options?: SerializeFromFileOptions,
): Promise<FileTranscript | undefined>

/** Prime-compaction addition. Synchronous twin of `serializeForSummaryFromFile`. */
export declare function serializeForSummaryFromFileSync(
  path: string,
  options?: SerializeFromFileOptions,
): FileTranscript | undefined
