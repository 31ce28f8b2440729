'use strict'
// The scripted model behind the real-agent tests: an OpenAI-compatible
// server's script (see ../helpers/openai-server.js) with a small context
// window. Its answers depend only on what it is asked, so the same flow gets
// the same answers whichever compaction module the agent runs with:
//   - a request with tools is the agent's own turn: it gets the flow's next
//     scripted answer (text or tool calls);
//   - a request without tools is a summarization request: it gets a fixed
//     summary for its part (history or turn prefix, told apart by the
//     instructions after the transcript, in <conversation> tags or under a
//     "# Conversation" heading: every module's turn-prefix prompt,
//     and no other, asks for an "## Original Request" section), numbered per
//     part;
//   - any request larger than the window gets the provider's overflow error.
// Token counts of the agent's own turns are the request's JSON length / 4,
// the same for both modules whenever the requests are the same. A summary
// reports a fixed input count per part: the modules' prompts differ in
// length by design, and the usage an agent stores for a compaction is to
// show how the module passes usage on, not how long its prompt is.

/** Estimated tokens of a request or an answer: JSON characters / 4, rounded up. */
function estimate(value) {
  return Math.ceil(JSON.stringify(value).length / 4)
}

/** The input tokens a summary of each part reports. */
const SUMMARY_INPUT_TOKENS = { history: 1200, turnPrefix: 700 }

/** The text of a request's user messages. */
function userText(body) {
  return (body.messages || [])
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : (m.content || []).map((p) => p.text || '').join('\n')))
    .join('\n')
}

/** 'turnPrefix' or 'history', by what the instructions after the transcript ask for. */
function partOf(body) {
  const text = userText(body)
  const end = Math.max(text.lastIndexOf('</conversation>'), text.lastIndexOf('\n# Instructions\n'))
  return text.slice(end < 0 ? 0 : end).includes('## Original Request') ? 'turnPrefix' : 'history'
}

/** 'agent' for the agent's own turns (they carry tools), 'summary' for summarization requests. */
function kindOf(body) {
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'agent' : 'summary'
}

function summaryText(part, n) {
  if (part === 'turnPrefix') {
    return [
      '## Original Request',
      `Scripted turn-prefix summary ${n}: the user asked for the files to be read and explained.`,
      '',
      '## Early Progress',
      '- Read the first files of the turn.',
      '',
      '## Context for Suffix',
      '- The kept messages continue the same reading.',
    ].join('\n')
  }
  return [
    '## Goal',
    `Scripted summary ${n}: understand and adjust the files read in this session.`,
    '',
    '## Progress',
    '### Done',
    '- [x] Read the files listed below.',
    '',
    '## Next Steps',
    '1. Continue from the kept messages.',
  ].join('\n')
}

/** The provider's answer to a request over its window; `counted` is the size the provider saw. */
function overflowError(contextWindow, counted) {
  return {
    status: 400,
    error: `This model's maximum context length is ${contextWindow} tokens. However, your messages resulted in ${counted} tokens. Please reduce the length of the messages.`,
  }
}

/**
 * `agentReplies[k]` answers the k-th agent request that fits the window:
 * `{ text }` or `{ text?, tools: [{ name, args }] }`, `{ overflow: true }`
 * (the provider's overflow error, as a provider whose tokenizer counts more
 * than the agent estimates sends it), or a function of the request body
 * returning one. `summaryFaults[n]`, when given, answers the n-th summary
 * request (from 0, in the order they arrive) instead of a summary: a reply
 * of ../helpers/openai-server.js (an error status, a stream that drops).
 */
function createScriptedModel({ contextWindow, agentReplies, summaryFaults = {} }) {
  let agentTurn = 0
  let summaryRequests = 0
  const summaries = { history: 0, turnPrefix: 0 }
  let held = null
  const log = []

  function script(body) {
    const kind = kindOf(body)
    const tokens = estimate(body)
    const entry = { kind, tokens, operation: api.operation }
    if (kind === 'summary') entry.part = partOf(body)
    log.push(entry)
    if (tokens > contextWindow) {
      entry.answer = 'overflow'
      return overflowError(contextWindow, tokens)
    }
    if (kind === 'summary') {
      const n = summaryRequests++
      if (summaryFaults[n] !== undefined) {
        entry.answer = `fault ${n}`
        return JSON.parse(JSON.stringify(summaryFaults[n]))
      }
    }
    if (kind === 'summary' && held) {
      const { resolve } = held
      held = null
      entry.answer = 'held'
      resolve(entry)
      return { hang: true }
    }
    if (kind === 'summary') {
      const n = ++summaries[entry.part]
      const text = summaryText(entry.part, n)
      entry.answer = `${entry.part} ${n}`
      return { text, usage: { prompt_tokens: SUMMARY_INPUT_TOKENS[entry.part], completion_tokens: estimate(text) } }
    }
    const k = agentTurn++
    const planned = agentReplies[k]
    if (planned === undefined) {
      entry.answer = 'unscripted'
      // A 400, which the provider does not retry.
      return { status: 400, error: `the script has no answer for agent request ${k}` }
    }
    const reply = typeof planned === 'function' ? planned(body) : planned
    if (reply.overflow) {
      entry.answer = 'overflow'
      return overflowError(contextWindow, contextWindow + tokens)
    }
    entry.answer = `agent ${k}`
    const toolCalls = (reply.tools || []).map((call, i) => ({ id: `call_${k}_${i}`, name: call.name, arguments: JSON.stringify(call.args) }))
    return {
      text: reply.text,
      toolCalls,
      usage: { prompt_tokens: tokens, completion_tokens: estimate([reply.text || '', toolCalls]) },
    }
  }

  const api = {
    script,
    log,
    /** The session call under way (set by the harness), logged with each request. */
    operation: undefined,
    /** The next summarization request never gets an answer; resolves when it arrives. */
    holdNextSummary() {
      return new Promise((resolve) => {
        held = { resolve }
      })
    },
  }
  return api
}

/**
 * The agent folder's models.json for one model of the scripted provider
 * at `baseUrl`: `{ provider, id, name, contextWindow, maxTokens }`.
 */
function modelsJson(baseUrl, { provider, id, name, contextWindow, maxTokens }) {
  return JSON.stringify({
    providers: {
      [provider]: {
        baseUrl,
        api: 'openai-completions',
        apiKey: 'scripted-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id, name, reasoning: false, input: ['text'], contextWindow, maxTokens, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
      },
    },
  })
}

module.exports = { createScriptedModel, kindOf, partOf, modelsJson }
