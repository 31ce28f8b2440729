// Uses the 1.6 line on its own, as a project without pi-coding-agent would,
// including what 1.6 adds: system messages, context edits, nested tool calls,
// usage on results, retries. Checked by tsconfig.declarations.json together with
// the declaration files themselves.

import {
  type AgentMessage,
  type AssistantMessage,
  type CompactionResult,
  type ContextUsageEstimate,
  type Message,
  type Model,
  type RetryCallbacks,
  type RetryPolicy,
  type SessionEntry,
  type SessionProjection,
  type StreamFn,
  type SystemMessage,
  type TranscriptContext,
  type Usage,
  compact,
  completeSummarization,
  convertToLlm,
  countTokens,
  DEFAULT_COMPACTION_SETTINGS,
  estimateProjectedContextTokens,
  estimateTokens,
  extractFileOpsFromMessage,
  createFileOps,
  generateBranchSummary,
  generateSummaryWithUsage,
  getSummarizationFailure,
  prepareCompaction,
  prepareCompactionAsync,
  projectForSummary,
  serializeConversation,
  splitUserRounds,
} from 'prime-compaction/agent-1.6'
import { createBranchSummaryMessage, SUMMARIZATION_SYSTEM_PROMPT } from 'prime-compaction'

// The bare package is the 1.6 line, so registering a message kind on it
// registers it on prime-compaction/agent-1.6 too.
interface NoteMessage {
  role: 'note'
  text: string
  timestamp: number
}
declare module 'prime-compaction' {
  interface CustomAgentMessages {
    note: NoteMessage
  }
}

function describe(message: AgentMessage): string {
  switch (message.role) {
    case 'system':
      return typeof message.content === 'string' ? message.content : `${message.content.length} blocks`
    case 'user':
      return typeof message.content === 'string' ? message.content : `${message.content.length} blocks`
    case 'assistant':
      return message.stopReason
    case 'toolResult':
      return `${message.toolName}: ${message.nestedCalls?.calls.length ?? 0} nested`
    case 'bashExecution':
      return message.command
    case 'custom':
      return message.customType
    case 'branchSummary':
      return message.fromId ?? message.summary
    case 'compactionSummary':
      return message.summary
    case 'note':
      return message.text
    default: {
      const unreachable: never = message
      return unreachable
    }
  }
}

const usage: Usage = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  cacheWrite1h: 0,
  totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, totalFromProvider: false },
}

const system: SystemMessage = {
  role: 'system',
  content: 'You are a coding agent.',
  sections: { rules: '<rules>be brief</rules>', old: null },
  toolsAdded: [{ name: 'read', description: 'Read a file', parameters: { type: 'object' } }],
  toolsRemoved: [{ name: 'bash' }],
  timestamp: 0,
}

const entries: SessionEntry[] = [
  { type: 'message', id: 's1', parentId: null, timestamp: '2025-01-01T00:00:00.000Z', message: system },
  {
    type: 'message',
    id: 'a1',
    parentId: 's1',
    timestamp: '2025-01-01T00:00:01.000Z',
    message: { role: 'user', content: 'hello', timestamp: 1 },
  },
  {
    type: 'message',
    id: 't1',
    parentId: 'a1',
    timestamp: '2025-01-01T00:00:02.000Z',
    message: {
      role: 'toolResult',
      toolCallId: 'c1',
      toolName: 'codemode',
      content: [{ type: 'text', text: 'done' }],
      details: { exitCode: 0 },
      nestedCalls: {
        calls: [{ id: 'n1', name: 'read', arguments: { path: 'src/a.ts' }, status: 'ok' }],
        complete: true,
      },
      isError: false,
      timestamp: 2,
    },
  },
  {
    type: 'context_edit',
    id: 'e1',
    parentId: 't1',
    timestamp: '2025-01-01T00:00:03.000Z',
    targetId: 'a1',
    replacement: { content: 'hello (edited)' },
  },
  {
    type: 'usage',
    id: 'u1',
    parentId: 'e1',
    timestamp: '2025-01-01T00:00:04.000Z',
    kind: 'cache_warm',
    provider: 'anthropic',
    model: 'claude-x',
    usage,
  },
  {
    type: 'compaction',
    id: 'c1',
    parentId: 'u1',
    timestamp: '2025-01-01T00:00:05.000Z',
    summary: 'earlier work',
    firstKeptEntryId: 'a1',
    tokensBefore: 1000,
    usage,
    systemMessage: { ...system, timestamp: 5 },
  },
  {
    type: 'branch_summary',
    id: 'b1',
    parentId: 'c1',
    timestamp: '2025-01-01T00:00:06.000Z',
    fromId: 'a1',
    summary: 'a branch',
    usage,
  },
]

const model: Model<'anthropic-messages'> = {
  id: 'claude-x',
  name: 'Claude X',
  api: 'anthropic-messages',
  provider: 'anthropic',
  baseUrl: 'https://example.invalid',
  reasoning: true,
  input: ['text', 'image'],
  cost: {
    input: 3,
    output: 15,
    cacheRead: 0.3,
    cacheWrite: 3.75,
    tiers: [{ input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5, inputTokensAbove: 200000 }],
  },
  contextWindow: 200000,
  maxTokens: 64000,
  thinkingLevelMap: { max: 'max', off: null },
  compat: { supportsTemperature: false, supportsMidConvoSystemMessages: true },
}

const reply: AssistantMessage = {
  role: 'assistant',
  content: [{ type: 'text', text: '## Goal' }],
  api: model.api,
  provider: model.provider,
  model: model.id,
  usage,
  stopReason: 'stop',
  timestamp: 0,
}
// A stream function only has to hand back something with result(); its
// request is a transcript whose first message carries the system prompt.
const streamFn: StreamFn = async (_model, context, options) => {
  void context.messages[0]?.role
  void options?.sessionId
  void options?.cacheRetention
  return { result: async () => reply }
}
const retry: RetryPolicy = { enabled: true, maxRetries: 3, baseDelayMs: 500 }
const callbacks: RetryCallbacks = {
  onRetryScheduled: (attempt, maxAttempts, delayMs, errorMessage) => void [attempt, maxAttempts, delayMs, errorMessage],
  onRetryFinished: (success) => void success,
}

async function main(): Promise<void> {
  const note: AgentMessage = { role: 'note', text: 'remember this', timestamp: 1 }
  const n: number = estimateTokens(system) + estimateTokens(note) + countTokens(describe(note))
  const llm: Message[] = convertToLlm([system, note])
  const text: string = serializeConversation(projectForSummary(llm, { model }), { reasoning: false })
  const rounds: Message[][] = splitUserRounds(llm)
  const fileOps = createFileOps()
  for (const entry of entries) if (entry.type === 'message') extractFileOpsFromMessage(entry.message, fileOps)

  const projection: SessionProjection = {
    entries: entries.map((entry) => ({ sourceEntry: entry, messages: entry.type === 'message' ? [entry.message] : [] })),
    messages: [system],
    thinkingLevel: 'max',
    model: { provider: 'anthropic', modelId: 'claude-x' },
  }
  const estimate: ContextUsageEstimate = estimateProjectedContextTokens(projection, entries)

  const prep =
    prepareCompaction(entries, DEFAULT_COMPACTION_SETTINGS) ?? (await prepareCompactionAsync(entries, DEFAULT_COMPACTION_SETTINGS))
  if (prep) {
    const controller = new AbortController()
    const env = { AWS_REGION: 'eu-west-1' }
    const result = await compact(prep, model, undefined, undefined, 'focus', controller.signal, 'max', streamFn, env, retry, callbacks, 's1')
    if (!('aborted' in result)) {
      const stored: CompactionResult = result
      const spent: number | undefined = stored.usage?.totalTokens
      void [spent, stored.estimatedTokensAfter, stored.customInstructions]
    }
  }
  const context: TranscriptContext = {
    messages: [
      { role: 'system', content: SUMMARIZATION_SYSTEM_PROMPT, timestamp: 0 },
      { role: 'user', content: [{ type: 'text', text: 'summarize' }], timestamp: Date.now() },
    ],
  }
  const options = { sessionId: 's', headers: { 'x-drop': null } }
  const response = await completeSummarization(model, context, options, streamFn, retry, callbacks)
  const failure: string | undefined = getSummarizationFailure(response, 'Summarization')
  const summary: { text: string; usage: Usage } = await generateSummaryWithUsage(llm, model, undefined, 'key')
  const branch = await generateBranchSummary(entries, {
    model,
    signal: new AbortController().signal,
    env: { AWS_REGION: 'eu-west-1' },
    streamFn,
    thinkingLevel: 'max',
    retry,
    callbacks,
  })
  const left = createBranchSummaryMessage('left', 'b1', '2025-01-01T00:00:07.000Z')
  const fromId: string | null = left.fromId
  void [n, text, rounds, estimate, failure, summary.usage, branch.usage, fromId]
}
void main
