// Uses prime-compaction on its own, as a project without pi-coding-agent would.
// Checked by tsconfig.declarations.json together with the declaration files themselves.

import {
  type AgentMessage,
  type AssistantMessage,
  type CompactionResult,
  type FilePlan,
  type Message,
  type Model,
  type SessionEntry,
  type StreamFn,
  compact,
  convertToLlm,
  countTokens,
  DEFAULT_COMPACTION_SETTINGS,
  estimateTokens,
  generateBranchSummary,
  prepareCompaction,
  prepareCompactionFromFile,
  prepareCompactionFromFileSync,
  projectForSummary,
  serializeConversation,
  serializeForSummaryFromFile,
  splitUserRounds,
} from 'prime-compaction/agent-0.78'

// Apps register their own message kinds the same way as with pi-agent-core.
interface NoteMessage {
  role: 'note'
  text: string
  timestamp: number
}
declare module 'prime-compaction/agent-0.78' {
  interface CustomAgentMessages {
    note: NoteMessage
  }
}

function describe(message: AgentMessage): string {
  switch (message.role) {
    case 'user':
      return typeof message.content === 'string' ? message.content : `${message.content.length} blocks`
    case 'assistant':
      return message.stopReason
    case 'toolResult':
      return message.toolName
    case 'bashExecution':
      return message.command
    case 'custom':
      return message.customType
    case 'branchSummary':
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

const entries: SessionEntry[] = [
  {
    type: 'message',
    id: 'a1',
    parentId: null,
    timestamp: '2025-01-01T00:00:00.000Z',
    message: { role: 'user', content: 'hello', timestamp: 0 },
  },
  {
    type: 'compaction',
    id: 'c1',
    parentId: 'a1',
    timestamp: '2025-01-01T00:00:01.000Z',
    summary: 'earlier work',
    firstKeptEntryId: 'a1',
    tokensBefore: 1000,
    customInstructions: 'focus on the parser',
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
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200000,
  maxTokens: 64000,
  compat: { supportsTemperature: false },
}

const reply: AssistantMessage = {
  role: 'assistant',
  content: [{ type: 'text', text: '## Goal' }],
  api: model.api,
  provider: model.provider,
  model: model.id,
  usage: {
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  stopReason: 'stop',
  timestamp: 0,
}
// A stream function only has to hand back something with result().
const streamFn: StreamFn = async (_model, context, options) => {
  void context.systemPrompt
  void options?.signal
  return { result: async () => reply }
}

async function main(): Promise<void> {
  const note: AgentMessage = { role: 'note', text: 'remember this', timestamp: 1 }
  const n: number = estimateTokens(note) + countTokens(describe(note)) + countTokens('x', 'cl100k_base')
  const llm: Message[] = convertToLlm([note])
  const text: string = serializeConversation(projectForSummary(llm, { model, toolResultBodies: 3 }), { reasoning: false })
  const rounds: Message[][] = splitUserRounds(llm)

  const prep = prepareCompaction(entries, DEFAULT_COMPACTION_SETTINGS)
  if (prep) {
    const controller = new AbortController()
    const result = await compact(prep, model, undefined, undefined, 'focus', controller.signal, 'high', streamFn)
    if (!('aborted' in result)) {
      const stored: CompactionResult = result
      void stored.customInstructions
    }
  }
  const branch = await generateBranchSummary(entries, {
    model,
    apiKey: 'key',
    signal: new AbortController().signal,
    streamFn,
    thinkingLevel: 'off',
  })
  const plan: FilePlan | undefined = await prepareCompactionFromFile('/tmp/session.jsonl', { leafId: 'a1' })
  const same: FilePlan | undefined = prepareCompactionFromFileSync('/tmp/session.jsonl', { settings: DEFAULT_COMPACTION_SETTINGS })
  const transcript: string | undefined = (await serializeForSummaryFromFile('/tmp/session.jsonl', { reasoning: true }))?.conversation
  void [n, text, rounds, branch.summary, plan?.fileOps.read, same?.turnPrefixIds, transcript]
}
void main
