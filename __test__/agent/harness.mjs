// Runs one flow in the real agent (its SDK, its tools, its SessionManager)
// against the scripted model, and returns what happened as plain JSON: the
// requests the model got, the session's events, each operation's outcome,
// the session file, the context it re-opens with, and the files the tools
// left behind. Runs under Node 22 (see run-flows.mjs); the module swap, if
// any, is registered before the agent is imported.

import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'

const require = createRequire(import.meta.url)
const { startServer } = require('../helpers/openai-server.js')
const { createScriptedModel, modelsJson } = require('./scripted-model.js')

/** The model the flows talk to: small enough that a few file reads fill it. */
export const MODEL = { provider: 'scripted', id: 'scripted-6k', contextWindow: 6000, maxTokens: 2000 }
export const COMPACTION = { enabled: true, reserveTokens: 1500, keepRecentTokens: 1500 }

/** The agent package's ESM entry, from its package.json. */
function agentEntryUrl(packageDir) {
  const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'))
  const entry = pkg.exports['.'].import
  return pathToFileURL(join(packageDir, entry)).href
}

/** What an event says, without the streaming deltas and the objects the session file already holds. */
function eventRecord(event) {
  switch (event.type) {
    case 'compaction_start':
      return { type: event.type, reason: event.reason }
    case 'compaction_end':
      return {
        type: event.type,
        reason: event.reason,
        aborted: event.aborted,
        willRetry: event.willRetry,
        errorMessage: event.errorMessage,
        result: event.result && {
          summary: event.result.summary,
          firstKeptEntryId: event.result.firstKeptEntryId,
          tokensBefore: event.result.tokensBefore,
          estimatedTokensAfter: event.result.estimatedTokensAfter,
          usage: event.result.usage,
          details: event.result.details,
        },
      }
    case 'summarization_retry_scheduled':
      return { type: event.type, attempt: event.attempt, maxAttempts: event.maxAttempts, delayMs: event.delayMs, errorMessage: event.errorMessage }
    case 'summarization_retry_attempt_start':
      return { type: event.type, source: event.source, reason: event.reason }
    case 'summarization_retry_finished':
      return { type: event.type }
    case 'entry_appended':
      return { type: event.type, entryType: event.entry.type }
    case 'message_end':
      return {
        type: event.type,
        role: event.message.role,
        stopReason: event.message.stopReason,
        errorMessage: event.message.errorMessage,
      }
    case 'tool_execution_end':
      return { type: event.type, toolName: event.toolName, isError: event.isError }
    case 'auto_retry_start':
    case 'auto_retry_end':
      return { type: event.type, attempt: event.attempt, errorMessage: event.errorMessage }
    case 'agent_start':
    case 'agent_end':
    case 'turn_start':
    case 'turn_end':
      return { type: event.type }
    default:
      return null
  }
}

/** A preparation as JSON: its file Sets as arrays. */
function describePreparation(p) {
  return {
    firstKeptEntryId: p.firstKeptEntryId,
    isSplitTurn: p.isSplitTurn,
    tokensBefore: p.tokensBefore,
    previousSummary: p.previousSummary,
    messagesToSummarize: p.messagesToSummarize,
    turnPrefixMessages: p.turnPrefixMessages,
    fileOps: { read: [...p.fileOps.read], written: [...p.fileOps.written], edited: [...p.fileOps.edited] },
    settings: p.settings,
  }
}

function errorRecord(err) {
  return { name: err && err.name, message: err && err.message }
}

function listFiles(dir) {
  const out = {}
  for (const name of readdirSync(dir, { recursive: true })) {
    const file = join(dir, name)
    try {
      out[relative(dir, file)] = readFileSync(file, 'utf8')
    } catch {
      // a directory
    }
  }
  return out
}

/**
 * From now on, every import of one of the agent line's swapped files loads
 * our entry instead: the hook `prime-compaction/register` registers
 * (lib/agent-hooks.mjs), as a user's `node --import` does. Call before the
 * agent is first imported.
 */
export async function swapInOurs() {
  const { registerAgentSwap } = await import('../../lib/agent-hooks.mjs')
  registerAgentSwap()
}

/**
 * The agent line's package (its ESM entry, or with `bundle` its bundled
 * SDK, `dist/bundle/index.js`), as the swap hook, if registered, resolves it.
 */
export function loadAgent(line, bundle = false) {
  return import(bundle ? pathToFileURL(join(line.packageDir, 'dist', 'bundle', 'index.js')).href : agentEntryUrl(line.packageDir))
}

/**
 * How each agent line's SDK is given the scripted model (lines.js `models`),
 * read from the agent folder's models.json: the createAgentSession options.
 */
const MODEL_ACCESS = {
  registry(agent, agentDir) {
    const authStorage = agent.AuthStorage.inMemory()
    const modelRegistry = agent.ModelRegistry.create(authStorage, join(agentDir, 'models.json'))
    return { authStorage, modelRegistry, model: modelRegistry.find(MODEL.provider, MODEL.id) }
  },
  async runtime(agent, agentDir) {
    const modelRuntime = await agent.ModelRuntime.create({ authPath: join(agentDir, 'auth.json'), modelsPath: join(agentDir, 'models.json') })
    return { modelRuntime, model: modelRuntime.getModel(MODEL.provider, MODEL.id) }
  },
}

/**
 * A session of the agent (`agent`, its package) on the scripted model at
 * `baseUrl`: its own SDK, tools, resource loader and SessionManager, working
 * in `work`. The session file is new in `sessionDir` (named by `sessionId`),
 * or `sessionFile` re-opened; `settings` go over the suite's defaults.
 */
export async function createSession({ line, agent, baseUrl, work, agentDir, sessionDir, sessionId, sessionFile, settings = {}, extensionFactories = [] }) {
  writeFileSync(join(agentDir, 'models.json'), modelsJson(baseUrl, { ...MODEL, name: 'Scripted 6k' }))
  const models = await MODEL_ACCESS[line.models](agent, agentDir)
  const settingsManager = agent.SettingsManager.inMemory({
    compaction: COMPACTION,
    retry: { enabled: false },
    ...line.settings,
    ...settings,
  })
  const resourceLoader = new agent.DefaultResourceLoader({ cwd: work, agentDir, settingsManager, extensionFactories })
  await resourceLoader.reload()
  const sessionManager = sessionFile ? agent.SessionManager.open(sessionFile, sessionDir) : agent.SessionManager.create(work, sessionDir, { id: sessionId })
  const { session } = await agent.createAgentSession({
    cwd: work,
    agentDir,
    ...models,
    thinkingLevel: 'off',
    resourceLoader,
    sessionManager,
    settingsManager,
  })
  return { session, sessionManager, settingsManager }
}

/**
 * Runs `flow` and returns its record. `dir` is the flow's own folder: the
 * work tree the tools see is `dir/work` (the same path for both modules, so
 * that the agent's requests, which name it, can be compared byte for byte).
 */
export async function runFlow({ line, variant, flow, dir, repoRoot }) {
  const work = join(dir, 'work')
  const agentDir = join(dir, `agent-${variant}`)
  const sessionDir = join(agentDir, 'sessions')
  rmSync(work, { recursive: true, force: true })
  rmSync(agentDir, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  mkdirSync(sessionDir, { recursive: true })
  for (const file of flow.files) {
    mkdirSync(dirname(join(work, file)), { recursive: true })
    cpSync(join(repoRoot, file), join(work, file))
  }

  const model = createScriptedModel({ contextWindow: MODEL.contextWindow, agentReplies: flow.replies, summaryFaults: flow.summaryFaults })
  const server = await startServer(model.script)
  const record = { flow: flow.name, variant, model: MODEL, expect: flow.expect, summaryFaults: flow.summaryFaults, operations: [], events: [] }
  try {
    const agent = await loadAgent(line)
    const ours = await import(import.meta.resolve(line.entry))
    // What the agent gets from each swapped file: its own exports, or ours.
    record.exports = {}
    for (const file of line.swap) record.exports[file] = Object.keys(await import(pathToFileURL(join(line.packageDir, file)).href)).sort()
    // The swap is in place exactly when the agent's exports are ours.
    record.modules = { compactIsOurs: agent.compact === ours.compact, convertToLlmIsOurs: agent.convertToLlm === ours.convertToLlm }

    const extensionFactories = flow.extension ? [(pi) => flow.extension(pi, { agent, record, describe: describePreparation })] : []
    const { session, sessionManager } = await createSession({
      line,
      agent,
      baseUrl: server.baseUrl,
      work,
      agentDir,
      sessionDir,
      sessionId: `agent-tests-${flow.name}`,
      settings: flow.settings,
      extensionFactories,
    })
    session.subscribe((event) => {
      const r = eventRecord(event)
      if (r) record.events.push(r)
    })

    /** Runs one session call and records how it ended. */
    async function op(name, args, call) {
      const entry = { op: name, args }
      record.operations.push(entry)
      model.operation = name
      try {
        const value = await call()
        entry.result = value === undefined ? null : value
      } catch (err) {
        entry.error = errorRecord(err)
      } finally {
        model.operation = undefined
      }
      return entry
    }

    const h = {
      session,
      sessionManager,
      model,
      agent,
      prompt: (text) => op('prompt', [text], () => session.prompt(text)),
      compact: (instructions) => op('compact', [instructions], () => session.compact(instructions)),
      navigateTree: (targetId, options) => op('navigateTree', [targetId, options], () => session.navigateTree(targetId, options)),
      /** 1.6's /bug-report summary of the session (through the module's completeSummarization and serializeConversation). */
      bugReport: (hint) => op('bugReport', [hint], () => session.summarizeForBugReport({ hint, signal: new AbortController().signal })),
      /** Id of the last entry on the current path that `predicate` accepts. */
      lastEntryId(predicate) {
        const branch = sessionManager.getBranch()
        for (let i = branch.length - 1; i >= 0; i--) if (predicate(branch[i])) return branch[i].id
        throw new Error(`flow ${flow.name}: no such entry on the path`)
      },
    }
    await flow.run(h)
    // The session's totals (1.6 counts the usage of compactions and branch summaries), without the file's path.
    const { sessionFile: _, ...stats } = session.getSessionStats()
    record.stats = JSON.parse(JSON.stringify(stats))
    session.dispose()

    const sessionFile = sessionManager.getSessionFile()
    record.sessionFile = sessionFile
    record.sessionLines = readFileSync(sessionFile, 'utf8').split('\n').filter(Boolean)
    const reopened = agent.SessionManager.open(sessionFile, sessionDir)
    const context = reopened.buildSessionContext()
    record.reopened = { leafId: reopened.getLeafId(), messages: context.messages, model: context.model, thinkingLevel: context.thinkingLevel }
    record.files = listFiles(work)
  } finally {
    await server.close()
  }
  record.requests = server.requests.map((request, i) => ({ ...model.log[i], raw: request.raw }))
  return record
}
