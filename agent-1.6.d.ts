/*
 * Public types of `prime-compaction/agent-1.6`, which is also the bare
 * `prime-compaction` (the newest line).
 *
 * The shapes match the compaction module of `@earendil-works/pi-coding-agent`
 * 1.6.0 and the pi-ai / pi-agent-core 1.6 types it relies on, so that either
 * package can be used where the other is expected. Everything is declared
 * structurally: nothing from `@earendil-works/*` needs to be installed.
 *
 * How this file is organised: what 1.6 has unchanged from 0.78 is re-exported
 * from `agent-0.78.d.ts` (the two lists right below), and written `V078.X`
 * where this file uses it. Everything declared in this file is what 1.6 adds
 * or changes; each doc comment says how. A few declarations have the same
 * fields as in 0.78 but hold 1.6's messages or entries, so they are declared
 * again here ("as in 0.78, over 1.6's ...").
 *
 * `AbortSignal` and `fetch` are the global ones (from `@types/node` or the DOM lib).
 */

// ============================================================================
// Unchanged from 0.78
// ============================================================================

export type {
  TextContent,
  ThinkingContent,
  ImageContent,
  Provider,
  DiagnosticErrorInfo,
  UserMessage,
  ThinkingBudgets,
  OpenRouterRouting,
  VercelGatewayRouting,
  ProviderResponse,
  BashExecutionMessage,
  CustomMessage,
  CompactionSummaryMessage,
  SessionHeader,
  SessionEntryBase,
  ThinkingLevelChangeEntry,
  ModelChangeEntry,
  CustomEntry,
  CustomMessageEntry,
  LabelEntry,
  SessionInfoEntry,
  CompactionDetails,
  CompactionSettings,
  TokenizerName,
  TokenCountOptions,
  ContextUsageEstimate,
  CutPointResult,
  BranchSummaryDetails,
  FileOperations,
  SerializeOptions,
  ProjectionOptions,
  PrepareFromFileOptions,
  FilePlan,
  SerializeFromFileOptions,
  FileTranscript,
} from './agent-0.78'

export {
  DEFAULT_COMPACTION_SETTINGS,
  shouldCompact,
  createFileOps,
  computeFileLists,
  formatFileOperations,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  bashExecutionToText,
  createCompactionSummaryMessage,
  createCustomMessage,
  countTokens,
  prepareCompactionFromFile,
  prepareCompactionFromFileSync,
  serializeForSummaryFromFile,
  serializeForSummaryFromFileSync,
} from './agent-0.78'

import type * as V078 from './agent-0.78'

// ============================================================================
// LLM messages and content blocks
// ============================================================================

/** Any value JSON can represent. New in 1.6: tool arguments and tool-result details are typed as JSON. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue }

/** A tool invocation requested by the assistant. 1.6: `arguments` is a JSON object; adds `namespace` and `argumentsError`. */
export interface ToolCall {
  type: 'toolCall'
  id: string
  name: string
  arguments: JsonObject
  /** Provider-issued opaque signature tied to this call. */
  thoughtSignature?: string
  /** Namespace of a dynamically loaded or namespaced tool (OpenAI Responses). */
  namespace?: string
  /** Set when the model's arguments were not a JSON object; `arguments` is then `{}`. */
  argumentsError?: string
}

/** Token counts and cost of one LLM response. 1.6 adds the optional `cacheWrite1h`, `reasoning` and `cost.totalFromProvider`. */
export interface Usage {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  /** Part of `cacheWrite` stored for one hour (reported by Anthropic only). */
  cacheWrite1h?: number
  /** Reasoning tokens, already included in `output`, when the provider reports them. */
  reasoning?: number
  totalTokens: number
  cost: {
    input: number
    output: number
    cacheRead: number
    cacheWrite: number
    total: number
    /** Whether `total` is what the provider billed rather than a catalog estimate. */
    totalFromProvider?: boolean
  }
}

/** Why an assistant response ended. 1.6 adds `"pending"` and `"deferred"`. */
export type StopReason = 'pending' | 'stop' | 'length' | 'toolUse' | 'error' | 'aborted' | 'deferred'

/** Wire protocols with built-in support. 1.6 adds `"pi-messages"`. */
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
  | 'pi-messages'

/** Wire protocol of a model: a known one or any custom identifier. */
export type Api = KnownApi | (string & {})

/** Side-channel record attached to an assistant message. 1.6: `details` is a JSON object. */
export interface AssistantMessageDiagnostic {
  type: string
  timestamp: number
  error?: V078.DiagnosticErrorInfo
  details?: JsonObject
}

/** Provider-side constrained sampling for a tool's arguments (new in 1.6). */
export type ConstrainedSamplingConfig =
  | { type: 'json_schema'; strict: 'prefer' | 'require' }
  | { type: 'grammar'; variants: Partial<Record<'openai_lark' | 'openai_regex', string>> }

/** A tool the model may call; `parameters` is the JSON schema of its arguments. 1.6 adds `constrainedSampling`. */
export interface Tool<TParameters extends object = object> {
  name: string
  description: string
  parameters: TParameters
  constrainedSampling?: false | ConstrainedSamplingConfig
}

/** Names a tool, for removing it (new in 1.6). */
export interface ToolReference {
  name: string
}

/**
 * System prompt and tool set at one point of the transcript (new in 1.6).
 * The first one sets the prompt and tools; later ones add instructions
 * (`content`), replace or remove (`null`) named `sections`, and add or remove
 * tools. Compaction counts them in token estimates but never summarizes them.
 */
export interface SystemMessage {
  role: 'system'
  content: string | V078.TextContent[]
  /** Named prompt sections rendered after `content`; `null` removes a section. */
  sections?: Record<string, string | null>
  /** Tools available from this point on. */
  toolsAdded?: Tool[]
  /** Tools no longer available from this point on. */
  toolsRemoved?: ToolReference[]
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/** Thinking levels of the agent and of models, `"off"` meaning no reasoning. 1.6 adds `"max"`. */
export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max'

/** Handle of a response the provider finishes asynchronously (new in 1.6). */
export interface DeferredHandle {
  provider: string
  modelId: string
  api: string
  /** Provider token, such as a response id. */
  id: string
  expiresAt?: number
  pollAfterMs?: number
  /** Provider data needed to rebuild the final message. */
  data?: JsonValue
}

/** A model response, with the usage it cost. 1.6 adds several optional fields, none of which compaction reads. */
export interface AssistantMessage {
  role: 'assistant'
  content: (V078.TextContent | V078.ThinkingContent | ToolCall)[]
  api: Api
  provider: V078.Provider
  /** Model id the request was sent to. */
  model: string
  /** Model id the provider reports having answered with, when it differs. */
  responseModel?: string
  responseId?: string
  /** Provider-native effort level used for this response. */
  providerThinkingLevel?: string
  /** Thinking level the agent asked for. */
  thinkingLevel?: ThinkingLevel
  diagnostics?: AssistantMessageDiagnostic[]
  usage: Usage
  stopReason: StopReason
  /** Set when the provider continues the response asynchronously. */
  deferred?: DeferredHandle
  /** Set when `stopReason` is `"error"` or `"aborted"`. */
  errorMessage?: string
  /**
   * How long the server asks to be left alone before another request, in ms
   * (this package's, not pi-ai's: the CLI sets it from `Retry-After`). A retry
   * of this error waits that long instead; over the policy's cap, none is made.
   */
  retryAfterMs?: number
  /** The provider's own stop reason, kept for debugging. */
  rawStopReason?: string
  /** Whether the provider said the model ended its turn. */
  endTurn?: boolean
  /** Milliseconds since the Unix epoch at which the request started. */
  timestamp: number
  /** How long the response took, in milliseconds. */
  durationMs?: number
}

/** A call one tool made to another while it ran, e.g. from a codemode script (new in 1.6). */
export interface NestedToolCallRecord {
  id: string
  name: string
  /** Absent when too large; `argumentsBytes` then gives their size. */
  arguments?: JsonObject
  argumentsBytes?: number
  /** `"unfinished"`: still running when the calling tool finished. */
  status: 'ok' | 'error' | 'unfinished'
  durationMs?: number
  /** Error text, shortened. */
  error?: string
}

/** The nested calls a tool made (new in 1.6). */
export interface NestedToolCalls {
  calls: NestedToolCallRecord[]
  /** `false` when calls were dropped, arguments left out, or calls unfinished. */
  complete: boolean
}

/**
 * The output of a tool call, sent back to the model. 1.6: details default to
 * JSON, and the result gains `usage`, `nestedCalls` and `durationMs`.
 * (pi-ai 1.6 also rewrites `TDetails` to its JSON form and refuses types JSON
 * cannot hold; here `details` is `TDetails` as given, which is the same type
 * for JSON-shaped details.)
 */
export interface ToolResultMessage<TDetails = JsonValue> {
  role: 'toolResult'
  /** Id of the `ToolCall` this answers. */
  toolCallId: string
  toolName: string
  content: (V078.TextContent | V078.ImageContent)[]
  /** Tool-specific data kept for the UI; never sent to the model. */
  details?: TDetails
  /** Usage of the tool's own execution, if it called a model. */
  usage?: Usage
  /** Calls this tool made to other tools; compaction takes file operations from them. Never sent to the model. */
  nestedCalls?: NestedToolCalls
  isError: boolean
  /** Milliseconds since the Unix epoch. */
  timestamp: number
  durationMs?: number
}

/** A message an LLM understands. 1.6 adds `SystemMessage`. */
export type Message = SystemMessage | V078.UserMessage | AssistantMessage | ToolResultMessage

// ============================================================================
// Models
// ============================================================================

/** Provider-specific values for each thinking level; `null` marks a level the model cannot use. */
export type ThinkingLevelMap = Partial<Record<ThinkingLevel, string | null>>

/** Prices per million tokens. */
export interface ModelCostRates {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
}

/** Prices that apply above a prompt size (new in 1.6). */
export interface ModelCostTier extends ModelCostRates {
  inputTokensAbove: number
}

/** What a model costs. 1.6 adds price `tiers`. */
export interface ModelCost extends ModelCostRates {
  tiers?: ModelCostTier[]
}

/** Limits on what a request may carry (new in 1.6). */
export interface ModelInputLimits {
  maxRequestBytes?: number
  images?: {
    resize?: { maxWidth?: number; maxHeight?: number; maxBytes?: number; jpegQuality?: number }
    maxPerMessage?: number
    maxPerRequest?: number
  }
}

/** Prompt-cache lifetimes per retention tier (new in 1.6). */
export interface ModelPromptCache {
  short?: number
  long?: number
}

/** Extra request-body parameters merged as they are (new in 1.6). */
export type SamplingParams = Record<string, unknown>

/** A chat-template argument: a literal, or a reference to the request's thinking settings. */
export type ChatTemplateKwargValue =
  | string
  | number
  | boolean
  | { $var: 'thinking.budget' | 'thinking.effort' | 'thinking.enabled'; omitWhenOff?: boolean }
  | null

/** Overrides for OpenAI-compatible chat-completions endpoints. 1.6 adds many fields. */
export interface OpenAICompletionsCompat {
  supportsStore?: boolean
  supportsDeveloperRole?: boolean
  supportsReasoningEffort?: boolean
  supportsUsageInStreaming?: boolean
  supportsFinishReason?: boolean
  maxTokensField?: 'max_completion_tokens' | 'max_tokens'
  requiresToolResultName?: boolean
  requiresAssistantAfterToolResult?: boolean
  requiresNonNullAssistantContent?: boolean
  requiresToolsWithToolHistory?: boolean
  requiresThinkingAsText?: boolean
  requiresReasoningContentOnAssistantMessages?: boolean
  thinkingFormat?:
    | 'ant-ling'
    | 'baseten'
    | 'chat-template'
    | 'deepseek'
    | 'openai'
    | 'openrouter'
    | 'qwen'
    | 'qwen-chat-template'
    | 'string-thinking'
    | 'together'
    | 'zai'
  chatTemplateKwargs?: Record<string, ChatTemplateKwargValue>
  chatTemplateArgs?: Record<string, ChatTemplateKwargValue>
  openRouterRouting?: V078.OpenRouterRouting
  vercelGatewayRouting?: V078.VercelGatewayRouting
  zaiToolStream?: boolean
  thinkingTokenBudgetField?: 'thinking_budget' | 'thinking_budget_tokens' | 'thinking_token_budget'
  supportsThinkingTokenBudget?: boolean
  supportsOpenAIGrammarTools?: boolean
  supportsMidConvoSystemMessages?: boolean
  supportsMidConvoToolAdditions?: boolean
  supportsStrictMode?: boolean
  cacheControlFormat?: 'anthropic'
  sendSessionAffinityHeaders?: boolean
  sessionAffinityFormat?: 'openai' | 'openai-nosession' | 'openrouter'
  promptCacheKeyMode?: 'auto' | 'disabled' | 'enabled'
  supportsLongCacheRetention?: boolean
  vllmPriority?: number
}

/** Overrides for OpenAI Responses endpoints (also Azure and Codex). 1.6 adds many fields. */
export interface OpenAIResponsesCompat {
  supportsDeveloperRole?: boolean
  supportsMidConvoSystemMessages?: boolean
  sessionAffinityFormat?: 'openai' | 'openai-nosession' | 'openrouter'
  promptCacheKeyMode?: 'auto' | 'disabled' | 'enabled'
  supportsLongCacheRetention?: boolean
  supportsStrictMode?: boolean
  supportsOpenAIGrammarTools?: boolean
  supportsAdditionalTools?: boolean
  supportsToolSearch?: boolean
  supportsExplicitPromptCacheMode?: boolean
  supportsMidConvoEffort?: boolean
  supportsMaxOutputTokens?: boolean
}

/** A fallback model Anthropic may answer with, priced locally (new in 1.6). */
export interface AnthropicAllowedFallbackModel {
  provider: string
  model: string
  cost: ModelCost
}

/** Overrides for Anthropic Messages-compatible endpoints. 1.6 adds several fields. */
export interface AnthropicMessagesCompat {
  supportsEagerToolInputStreaming?: boolean
  supportsLongCacheRetention?: boolean
  sendSessionAffinityHeaders?: boolean
  sessionAffinityFormat?: 'openrouter'
  supportsCacheControlOnTools?: boolean
  supportsTemperature?: boolean
  forceAdaptiveThinking?: boolean
  allowEmptySignature?: boolean
  supportsStrictTools?: boolean
  supportsMidConvoEffort?: boolean
  supportsMidConvoSystemMessages?: boolean
  supportsMidConvoToolChanges?: boolean
  supportsMessageThreads?: boolean
  allowedFallbackModels?: AnthropicAllowedFallbackModel[]
}

/** Overrides for Amazon Bedrock models (new in 1.6). */
export interface BedrockCompat {
  supportsStrictMode?: boolean
}

/** Overrides for the Mistral chat API (new in 1.6). */
export interface MistralConversationsCompat {
  supportsMidConvoSystemMessages?: boolean
  supportsStrictMode?: boolean
}

/** The compatibility overrides that apply to a given wire protocol. 1.6 covers more protocols. */
export type ModelCompat<TApi extends Api> = TApi extends 'openai-completions'
  ? OpenAICompletionsCompat
  : TApi extends 'openai-responses' | 'azure-openai-responses' | 'openai-codex-responses'
    ? OpenAIResponsesCompat
    : TApi extends 'anthropic-messages'
      ? AnthropicMessagesCompat
      : TApi extends 'bedrock-converse-stream'
        ? BedrockCompat
        : TApi extends 'mistral-conversations'
          ? MistralConversationsCompat
          : never

/**
 * Description of a chat model: where to reach it, what it accepts and what it
 * costs. Compaction reads `contextWindow` and `reasoning`; the rest is passed
 * through to the stream function. 1.6 adds `type`, `inputLimits`,
 * `promptCache`, `samplingParams`, `samplingParamsByThinkingLevel` and cost tiers.
 */
export interface Model<TApi extends Api = Api> {
  id: string
  /** Human-readable name. */
  name: string
  api: TApi
  provider: V078.Provider
  baseUrl: string
  /** Input modalities the model accepts. */
  input: ('text' | 'image')[]
  inputLimits?: ModelInputLimits
  cost: ModelCost
  /** Extra HTTP headers sent with every request to this model. */
  headers?: Record<string, string>
  /** Absent or `"chat"`: a chat model. */
  type?: 'chat'
  /** Whether the model accepts a reasoning level. */
  reasoning: boolean
  thinkingLevelMap?: ThinkingLevelMap
  promptCache?: ModelPromptCache
  /** Total tokens the model can attend to. */
  contextWindow: number
  /** Largest response the model can produce, in tokens. */
  maxTokens: number
  samplingParams?: SamplingParams
  samplingParamsByThinkingLevel?: Partial<Record<ThinkingLevel, SamplingParams>>
  compat?: ModelCompat<TApi>
}

// ============================================================================
// Requests and streams
// ============================================================================

/** A value of a telemetry attribute. */
export type AttributeValue = string | number | boolean | readonly string[] | readonly number[] | readonly boolean[]

/** Telemetry attributes by name. */
export interface SpanAttributes {
  [name: string]: AttributeValue | undefined
}

/** Propagation data of a telemetry adapter. */
export type TelemetryCarrier = Record<string, string>

/** How a telemetry adapter carries context across processes. */
export interface TelemetryPropagation {
  inject(context: TelemetryContext): TelemetryCarrier | undefined
  extract(carrier: TelemetryCarrier | undefined): TelemetryContext
}

/** A link from one span to another. */
export interface SpanLink {
  context: TelemetryContext
  attributes?: SpanAttributes
}

/** What a new span is called and carries. */
export interface SpanOptions {
  name: string
  attributes?: SpanAttributes
  links?: readonly SpanLink[]
}

/** How a span ended. */
export type SpanStatus = { status: 'ok' } | { status: 'error'; error?: { name: string; message: string } }

/** Options of a metric instrument. */
export interface InstrumentOptions {
  description?: string
  unit?: string
}

/** Options of a histogram. */
export interface HistogramOptions extends InstrumentOptions {
  boundaries?: readonly number[]
}

/** A counter that only grows. */
export interface TelemetryCounter {
  add(value: number, attributes?: SpanAttributes): void
}

/** A counter that grows and shrinks. */
export interface TelemetryUpDownCounter {
  add(value: number, attributes?: SpanAttributes): void
}

/** A histogram of measurements. */
export interface TelemetryHistogram {
  record(value: number, attributes?: SpanAttributes, context?: TelemetryContext): void
}

/** Metric instruments of a telemetry adapter. */
export interface TelemetryMetrics {
  counter(name: string, options?: InstrumentOptions): TelemetryCounter
  upDownCounter(name: string, options?: InstrumentOptions): TelemetryUpDownCounter
  histogram(name: string, options?: HistogramOptions): TelemetryHistogram
}

/** Where new spans start (pi-telemetry). */
export interface TelemetryContext {
  readonly metrics?: TelemetryMetrics
  readonly propagation?: TelemetryPropagation
  startSpan<T>(options: SpanOptions, callback: (span: TelemetrySpan) => T | Promise<T>): Promise<T>
}

/** A telemetry span that a request's own spans become children of (new in 1.6; compaction passes it through). */
export interface TelemetrySpan extends TelemetryContext {
  addLink(link: SpanLink): void
  addEvent(name: string, attributes?: SpanAttributes): void
  setAttributes(attributes: SpanAttributes): void
  setStatus(status: SpanStatus): void
}

/** Who requests are attributed to. */
export interface ClientAttribution {
  name: string
  url: string
  categories?: string[]
}

/** How requests identify the calling app: its `User-Agent` and attribution headers (new in 1.6). */
export interface ClientIdentity {
  userAgent?: 'short' | 'detailed' | { custom: string }
  attribution?: ClientAttribution | null
  version?: string
}

/** Prompt-cache retention preference. */
export type CacheRetention = 'none' | 'short' | 'long'

/**
 * Per-request options understood by every provider. 1.6 adds `telemetry`,
 * `fetch`, `env`, `identity`, `onProviderStreamEvent`, `samplingParams` and
 * `disableContinuation`; a `null` header removes a default header.
 */
export interface StreamOptions {
  signal?: AbortSignal
  telemetry?: TelemetrySpan
  apiKey?: string
  /** HTTP client for provider requests (default: the global `fetch`). */
  fetch?: typeof globalThis.fetch
  /** Provider settings that take precedence over `process.env`. */
  env?: Record<string, string>
  /** Inspect or replace the provider payload before it is sent; return `undefined` to keep it. */
  onPayload?: (payload: unknown, model: Model<Api>) => unknown | undefined | Promise<unknown | undefined>
  /** Called once the HTTP response arrives, before its body is read. */
  onResponse?: (response: V078.ProviderResponse, model: Model<Api>) => void | Promise<void>
  headers?: Record<string, string | null>
  identity?: ClientIdentity
  timeoutMs?: number
  maxRetries?: number
  maxRetryDelayMs?: number
  /** Sees each raw provider stream event. */
  onProviderStreamEvent?: (data: unknown, model: Model<Api>) => void | Promise<void>
  temperature?: number
  samplingParams?: SamplingParams
  maxTokens?: number
  transport?: 'sse' | 'websocket' | 'websocket-cached' | 'auto'
  cacheRetention?: CacheRetention
  sessionId?: string
  /** Neither use nor record server-side continuation state. */
  disableContinuation?: boolean
  websocketConnectTimeoutMs?: number
  metadata?: Record<string, unknown>
}

/** Request options plus a provider-neutral reasoning level. 1.6 adds `toolChoice` and `deferred`. */
export interface SimpleStreamOptions extends StreamOptions {
  toolChoice?: 'auto' | 'none'
  reasoning?: Exclude<ThinkingLevel, 'off'>
  /** Ask the provider to finish the response asynchronously and return a handle. */
  deferred?: boolean | { window?: '15m' | '1h' | '24h' }
  thinkingBudgets?: V078.ThinkingBudgets
}

/**
 * What a summarization request sends (new in 1.6, replacing `Context`): the
 * system prompt travels as a leading `system` message. pi-ai brands its type
 * so that only its `normalizeContext()` makes one; this one is the plain shape,
 * which pi-ai's values fit.
 */
export interface TranscriptContext {
  messages: Message[]
}

/** Request input of pi-ai's public stream functions, where `systemPrompt` and `tools` stand for a leading system message. */
export interface Context {
  systemPrompt?: string
  messages: Message[]
  tools?: Tool[]
}

/** Incremental events of a streamed assistant response. 1.6: `done` may end with `"deferred"`. */
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
  | { type: 'done'; reason: 'stop' | 'length' | 'toolUse' | 'deferred'; message: AssistantMessage }
  | { type: 'error'; reason: 'aborted' | 'error'; error: AssistantMessage }

/**
 * The part of a response stream that compaction uses: the final message, as
 * in 0.78, over 1.6's messages.
 */
export interface AssistantMessageStreamLike {
  result(): Promise<AssistantMessage>
}

/** A full response stream: its events, then its final message. */
export interface AssistantMessageEventStream extends AssistantMessageStreamLike, AsyncIterable<AssistantMessageEvent> {}

/**
 * Sends one request to a model. 1.6: the request is a `TranscriptContext`.
 * Any stream function of pi-agent-core 1.6 (an agent's `streamFn`) fits: the
 * type is written as a method so that its `context` parameter is compared
 * both ways, which lets functions typed for pi-ai's branded
 * `TranscriptContext` in.
 */
export type StreamFn = {
  streamFn(
    model: Model<Api>,
    context: TranscriptContext,
    options?: SimpleStreamOptions,
  ): AssistantMessageStreamLike | Promise<AssistantMessageStreamLike>
}['streamFn']

/**
 * When summarization requests are retried (new in 1.6, from pi-ai): transient
 * failures only, up to `maxRetries` times, waiting `baseDelayMs * 2^(attempt-1)`
 * (at most `maxAgentDelayMs`, default 60 s) before each retry.
 */
export interface RetryPolicy {
  enabled: boolean
  /** Retries after the first attempt (0: none). */
  maxRetries: number
  baseDelayMs: number
  maxAgentDelayMs?: number
}

/**
 * Notifications around summarization retries (new in 1.6, from pi-ai). A
 * returned promise is awaited; compact(), generateSummary() and
 * generateBranchSummary() stop waiting for it once their signal aborts
 * (completeSummarization() waits, as pi-ai does).
 */
export interface RetryCallbacks {
  /** Before waiting for retry number `attempt` (from 1). */
  onRetryScheduled?: (attempt: number, maxAttempts: number, delayMs: number, errorMessage: string) => void | Promise<void>
  /** After the wait, just before the retried request. */
  onRetryAttemptStart?: () => void | Promise<void>
  /** Once, when retrying ends; `success` when a later attempt succeeded. */
  onRetryFinished?: (success: boolean, attempt: number, finalError?: string) => void | Promise<void>
}

// ============================================================================
// Agent messages: LLM messages plus the coding agent's own kinds
// ============================================================================

/** Stands in for a branch the user navigated away from. 1.6: `fromId` may be `null`. */
export interface BranchSummaryMessage {
  role: 'branchSummary'
  summary: string
  /** Entry id the summarized branch ended at, or `null`. */
  fromId: string | null
  /** Milliseconds since the Unix epoch. */
  timestamp: number
}

/**
 * Registry of non-LLM message kinds, keyed by role, as in 0.78 (1.6's
 * `BranchSummaryMessage`). Add your own kinds with declaration merging:
 *
 * ```ts
 * declare module 'prime-compaction/agent-1.6' {
 *   interface CustomAgentMessages { note: { role: 'note'; text: string; timestamp: number } }
 * }
 * ```
 *
 * (`declare module 'prime-compaction'` reaches the same registry.)
 */
export interface CustomAgentMessages {
  bashExecution: V078.BashExecutionMessage
  custom: V078.CustomMessage
  branchSummary: BranchSummaryMessage
  compactionSummary: V078.CompactionSummaryMessage
}

/** Any message an agent session holds; 1.6 includes system messages. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages]

// ============================================================================
// Session entries
// ============================================================================

/** An entry holding one agent message, as in 0.78, over 1.6's messages. */
export interface SessionMessageEntry extends V078.SessionEntryBase {
  type: 'message'
  message: AgentMessage
}

/** Usage of a model call outside the conversation, such as cache warming (new in 1.6; no part of the context). */
export interface UsageEntry extends V078.SessionEntryBase {
  type: 'usage'
  /** Category, such as `"cache_warm"`. */
  kind: string
  provider: string
  model: string
  usage: Usage
  note?: string
}

/** A compaction. 1.6 adds `usage` and `systemMessage`. */
export interface CompactionEntry<T = unknown> extends V078.CompactionEntry<T> {
  /** Usage of the summarization calls. */
  usage?: Usage
  /** The whole system prompt and tool state at the compaction, which the context starts from. */
  systemMessage?: SystemMessage
}

/** A summary of a branch the user left. 1.6 adds `usage`. */
export interface BranchSummaryEntry<T = unknown> extends V078.BranchSummaryEntry<T> {
  /** Usage of the summarization call. */
  usage?: Usage
}

/** Content a context edit can put in place of an entry's (new in 1.6). */
export type ContextEditableContent =
  | V078.UserMessage['content']
  | AssistantMessage['content']
  | ToolResultMessage['content']
  | V078.CustomMessage['content']

/**
 * Changes what an earlier entry contributes to the model's context (new in
 * 1.6): `null` hides it, otherwise its content is replaced. The latest edit of
 * an entry wins; compaction and branch summaries see the edited context.
 */
export interface ContextEditEntry extends V078.SessionEntryBase {
  type: 'context_edit'
  targetId: string
  replacement: { content: ContextEditableContent } | null
}

/** Any entry of a session after its header. 1.6 adds `UsageEntry` and `ContextEditEntry`. */
export type SessionEntry =
  | SessionMessageEntry
  | V078.ThinkingLevelChangeEntry
  | V078.ModelChangeEntry
  | UsageEntry
  | CompactionEntry
  | BranchSummaryEntry
  | V078.CustomEntry
  | V078.CustomMessageEntry
  | ContextEditEntry
  | V078.LabelEntry
  | V078.SessionInfoEntry

/** Any line of a session file. */
export type FileEntry = V078.SessionHeader | SessionEntry

/** A node of the session tree, as in 0.78, over 1.6's entries. */
export interface SessionTreeNode {
  entry: SessionEntry
  children: SessionTreeNode[]
  label?: string
  labelTimestamp?: string
}

/** What one entry contributes to the model's context after context edits (new in 1.6). */
export interface ProjectedSessionEntry {
  sourceEntry: SessionEntry
  /** Empty for entries that hold state only and for hidden ones. */
  messages: AgentMessage[]
}

/**
 * The model's view of a session path (new in 1.6): compaction-aware, context
 * edits applied, each message traced to its entry.
 */
export interface SessionProjection {
  entries: ProjectedSessionEntry[]
  messages: AgentMessage[]
  thinkingLevel: string
  model: { provider: string; modelId: string } | null
}

/**
 * The read-only part of a session manager (pi-coding-agent's `SessionManager`
 * satisfies it). 1.6 adds `buildContextEntries` and `buildSessionProjection`.
 * Branch collection only walks `getBranch` and `getEntry`.
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
  /** The compaction-aware entries of the current path. */
  buildContextEntries(): SessionEntry[]
  /** The projection of the current path. */
  buildSessionProjection(): SessionProjection
  getHeader(): V078.SessionHeader | null
  getEntries(): SessionEntry[]
  getTree(): SessionTreeNode[]
  getSessionName(): string | undefined
}

// ============================================================================
// Compaction
// ============================================================================

/** What `compact` produces. 1.6 adds `usage` and `estimatedTokensAfter`. */
export interface CompactionResult<T = unknown> extends V078.CompactionResult<T> {
  /**
   * Estimated context size after compaction. pi-coding-agent 1.6 fills it in
   * after storing the entry; `compact` leaves it unset.
   */
  estimatedTokensAfter?: number
  /** Usage of the summarization calls (the two of a split turn added up). */
  usage?: Usage
}

/** What `compact` resolves with when aborted, as in 0.78, with 1.6's new result fields absent too. */
export interface CompactionAborted extends V078.CompactionAborted {
  estimatedTokensAfter?: undefined
  usage?: undefined
}

/** Context size implied by a usage report: `totalTokens`, or the sum of its parts when that is 0. */
export declare function calculateContextTokens(usage: Usage): number

/** Usage of the newest assistant message that neither failed nor was aborted. 1.6 also skips usage that adds up to 0. */
export declare function getLastAssistantUsage(entries: SessionEntry[]): Usage | undefined

/**
 * Context size of `messages`: the last usable usage plus an estimate of what
 * follows it. 1.6 skips zero usage and counts system messages.
 */
export declare function estimateContextTokens(messages: AgentMessage[]): V078.ContextUsageEstimate

/**
 * New in 1.6. Context size of a session projection, trusting the last usage
 * only if no compaction or context edit in `branchEntries` comes after the
 * entry it was reported on; otherwise everything is estimated, the system
 * messages merged into one.
 */
export declare function estimateProjectedContextTokens(
  projection: SessionProjection,
  branchEntries: SessionEntry[],
): V078.ContextUsageEstimate

/**
 * Rough, deliberately high token count of one message (characters / 4,
 * images at a fixed size); with `options.tokenizer`, the exact count. 1.6
 * counts system messages: content, sections and added tools.
 */
export declare function estimateTokens(message: AgentMessage, options?: V078.TokenCountOptions): number

/**
 * Index of the entry that opens the turn containing `entryIndex`, searching
 * back no further than `startIndex`; -1 if there is none. 1.6: an entry opens
 * a turn when its context messages include a user, bash, custom or summary
 * message (a branch summary with an empty summary does not).
 */
export declare function findTurnStartIndex(entries: SessionEntry[], entryIndex: number, startIndex: number): number

/**
 * Choose the cut in `entries[startIndex..endIndex)` that keeps about
 * `keepRecentTokens` of the newest messages, with 1.6's rules (any
 * context-visible entry counts; the fallback is the last valid cut point).
 * Tool results are never the first kept entry.
 */
export declare function findCutPoint(
  entries: SessionEntry[],
  startIndex: number,
  endIndex: number,
  keepRecentTokens: number,
  options?: V078.TokenCountOptions,
): V078.CutPointResult

/**
 * New in 1.6. Why a summarization response cannot be stored, or `undefined`:
 * `"<label> failed: ..."` for an error, or for a response cut off at the
 * token limit.
 */
export declare function getSummarizationFailure(response: AssistantMessage, label: string): string | undefined

/**
 * New in 1.6. Make one summarization call: through `streamFn` when given
 * (otherwise the host's pi-ai), with `cacheRetention: "none"` and a session id
 * (the caller's, or a fresh one), retrying transient failures under `retry`.
 * Resolves with the final response, failed or not.
 */
export declare function completeSummarization(
  model: Model<any>,
  context: TranscriptContext,
  options: SimpleStreamOptions,
  streamFn?: StreamFn,
  retry?: RetryPolicy,
  callbacks?: RetryCallbacks,
): Promise<AssistantMessage>

/**
 * Ask the model for a structured summary of `currentMessages`, updating
 * `previousSummary` when given. Resolves to the summary text; rejects when the
 * model answers with an error, is cut off, calls a tool or gives no text, and
 * with an `AbortError` when `signal` aborts. 1.6: `reserveTokens` is ignored and may
 * be `undefined`; adds `env`, `retry`, `callbacks` and `sessionId`.
 */
export declare function generateSummary(
  currentMessages: AgentMessage[],
  model: Model<any>,
  reserveTokens: number | undefined,
  apiKey: string | undefined,
  headers?: Record<string, string>,
  signal?: AbortSignal,
  customInstructions?: string,
  previousSummary?: string,
  thinkingLevel?: ThinkingLevel,
  streamFn?: StreamFn,
  env?: Record<string, string>,
  retry?: RetryPolicy,
  callbacks?: RetryCallbacks,
  sessionId?: string,
): Promise<string>

/** New in 1.6. `generateSummary`, resolving to the text and the usage of the call. */
export declare function generateSummaryWithUsage(
  ...args: Parameters<typeof generateSummary>
): Promise<{ text: string; usage: Usage }>

/** Everything `compact` needs, computed without calling a model: as in 0.78, with 1.6's messages. */
export interface CompactionPreparation
  extends Omit<V078.CompactionPreparation, 'messagesToSummarize' | 'turnPrefixMessages'> {
  /** Messages the summary replaces. */
  messagesToSummarize: AgentMessage[]
  /** Start of a turn that is cut in two, summarized separately. */
  turnPrefixMessages: AgentMessage[]
}

/**
 * Plan a compaction of a session path (root first). 1.6 plans on the session
 * projection (entries off the leaf's parent chain ignored, context edits
 * applied, system messages kept out of the summaries) and takes
 * `tokensBefore` from `estimateProjectedContextTokens`. Returns `undefined`
 * when there is nothing to summarize.
 */
export declare function prepareCompaction(
  pathEntries: SessionEntry[],
  settings: V078.CompactionSettings,
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
  settings: V078.CompactionSettings,
): Promise<CompactionPreparation | undefined>

/**
 * Summarize a prepared compaction with the model and append the file lists.
 * 1.6: the two requests of a split turn go one after the other, transient
 * failures are retried under `retry`, and the result carries `usage`; adds
 * `env`, `retry`, `callbacks` and `sessionId`.
 *
 * Aborting `signal` resolves the promise at once with `{ aborted: true }`
 * instead of a result, so check for it (`'aborted' in result`, or
 * `signal.aborted` as the agent does) before storing anything. Other failures
 * reject.
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
  env?: Record<string, string>,
  retry?: RetryPolicy,
  callbacks?: RetryCallbacks,
  sessionId?: string,
): Promise<CompactionResult | CompactionAborted>

/** One summarization request, as `compact` hands it to the model. */
export interface SummaryRequest {
  systemPrompt: string
  /** The user message's text. */
  prompt: string
  /** The response cap the request sets. 1.6 sets none, so it is absent. */
  maxTokens?: number
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

/** Outcome of `generateBranchSummary`. 1.6 adds `usage`. */
export interface BranchSummaryResult extends V078.BranchSummaryResult {
  /** Usage of the summarization call. */
  usage?: Usage
}

/** Messages of a branch selected to fit a token budget, as in 0.78, over 1.6's messages. */
export interface BranchPreparation {
  /** Oldest first. */
  messages: AgentMessage[]
  fileOps: V078.FileOperations
  /** Estimated tokens of `messages`. */
  totalTokens: number
}

/** Entries abandoned by a navigation, as in 0.78, over 1.6's entries. */
export interface CollectEntriesResult {
  /** Oldest first. */
  entries: SessionEntry[]
  /** Deepest entry shared by both positions, or `null`. */
  commonAncestorId: string | null
}

/** Options of `generateBranchSummary`. 1.6: `apiKey` is optional; adds `env`, `retry` and `callbacks`. */
export interface GenerateBranchSummaryOptions {
  model: Model<any>
  apiKey?: string
  headers?: Record<string, string>
  /** Provider settings that take precedence over `process.env`. */
  env?: Record<string, string>
  signal: AbortSignal
  /** Reasoning level for the summary request (ignored for models without reasoning). */
  thinkingLevel?: ThinkingLevel
  /** Extra focus for the summary. */
  customInstructions?: string
  /** Use `customInstructions` as the whole prompt instead of appending them. */
  replaceInstructions?: boolean
  /** Tokens kept free for prompt and answer when budgeting the branch (default 16384). */
  reserveTokens?: number
  /** Send the request through this function instead of the default client. */
  streamFn?: StreamFn
  /** When to retry a transient failure of the request. */
  retry?: RetryPolicy
  callbacks?: RetryCallbacks
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
 * (0: no limit), and gather file operations from all of them. 1.6 applies the
 * branch's context edits.
 */
export declare function prepareBranchEntries(entries: SessionEntry[], tokenBudget?: number): BranchPreparation

/**
 * Ask the model for a structured summary of abandoned branch entries. 1.6:
 * sends the reasoning level, retries transient failures, treats a cut-off
 * answer, a tool call or an answer with no text as an error, and reports
 * `usage`. Resolves `{ aborted: true }` as soon as `signal` aborts.
 */
export declare function generateBranchSummary(
  entries: SessionEntry[],
  options: GenerateBranchSummaryOptions,
): Promise<BranchSummaryResult>

// ============================================================================
// File tracking and serialization
// ============================================================================

/**
 * Add the paths of an assistant message's `read`/`write`/`edit` tool calls to
 * `fileOps`; 1.6 also takes them from a tool result's `nestedCalls`.
 */
export declare function extractFileOpsFromMessage(message: AgentMessage, fileOps: V078.FileOperations): void

/**
 * Render messages as a plain-text transcript for a summarizer, so that the
 * model reads it as material rather than a conversation to continue. Long tool
 * results are shortened; system messages are left out (1.6 accepts string
 * tool-result content). `options.reasoning` decides whether assistant
 * reasoning is written. Run `convertToLlm` first for agent messages.
 */
export declare function serializeConversation(messages: (Message | ProjectedMessage)[], options?: V078.SerializeOptions): string

/**
 * System prompt of every summarization request: the spec's, not the agent's
 * (whose text is a literal type in its own declarations), so a `string` here.
 */
export declare const SUMMARIZATION_SYSTEM_PROMPT: string

// ============================================================================
// Agent message helpers
// ============================================================================

/** Build a branch summary message; `timestamp` is an ISO 8601 string. */
export declare function createBranchSummaryMessage(summary: string, fromId: string, timestamp: string): BranchSummaryMessage

/**
 * Map agent messages to LLM messages: the coding agent's own kinds become user
 * messages, messages excluded from context are dropped, LLM messages pass
 * through. 1.6 keeps system messages.
 */
export declare function convertToLlm(messages: AgentMessage[]): Message[]

// ============================================================================
// prime-compaction additions over 1.6's messages (not in pi-coding-agent)
// ============================================================================

/**
 * Prime-compaction addition. Build the loss-bounded copy of `messages` that a
 * summarization request sees: image bytes replaced, empty and orphaned tool
 * results dropped, older tool-result bodies elided, reasoning kept only for
 * models that accept it. The input is not modified; the copies are new plain
 * objects. `serializeForSummary` gives their transcript without building them.
 */
export declare function projectForSummary(messages: Message[], options?: V078.ProjectionOptions): ProjectedMessage[]

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
 */
export declare function serializeForSummary(messages: Message[], options?: V078.ProjectionOptions): string

/**
 * Prime-compaction addition. Group messages into user rounds: a round opens
 * at a user message and runs until the next one. Rounds are the unit that
 * summarization retries drop, oldest first.
 */
export declare function splitUserRounds(messages: Message[]): Message[][]
