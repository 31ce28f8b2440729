'use strict'
// Compares the records of one flow run with the agent's own compaction module
// and with ours (see harness.mjs), and lists every difference as
// { where, detail }: `where` names the kind of difference (what
// differences.js lists), `detail` the exact place and both values.
//
// Before comparing, entry ids become their position in the session file and
// timestamps and durations are dropped: the agent draws them anew on every run.

const { isDeepStrictEqual } = require('node:util')

/** Every place where `a` and `b` differ, as [path, a, b]. */
function deepDiff(a, b, path = '', out = []) {
  if (isDeepStrictEqual(a, b)) return out
  const bothObjects = a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)
  if (!bothObjects) {
    out.push([path, a, b])
    return out
  }
  if (Array.isArray(a)) {
    if (a.length !== b.length) out.push([`${path}.length`, a.length, b.length])
    for (let i = 0; i < Math.min(a.length, b.length); i++) deepDiff(a[i], b[i], `${path}[${i}]`, out)
    return out
  }
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) deepDiff(a[key], b[key], `${path}.${key}`, out)
  return out
}

/** Fields the agent fills from the clock: when an entry or message was made, how long a request or tool took (1.6). */
const CLOCK_FIELDS = new Set(['timestamp', 'durationMs'])

/** `value` with entry ids replaced by `#<line>` and the clock's fields left out. */
function normalize(value, ids) {
  if (typeof value === 'string') return ids.has(value) ? ids.get(value) : value
  if (Array.isArray(value)) return value.map((v) => normalize(v, ids))
  if (value === null || typeof value !== 'object') return value
  const out = {}
  for (const [key, v] of Object.entries(value)) if (!CLOCK_FIELDS.has(key)) out[key] = normalize(v, ids)
  return out
}

function entriesOf(record) {
  return record.sessionLines.map((line) => JSON.parse(line))
}

function idsOf(record) {
  const ids = new Map()
  entriesOf(record).forEach((entry, i) => {
    if (entry.type !== 'session') ids.set(entry.id, `#${i}`)
  })
  return ids
}

function entryLabel(entry) {
  return entry.type === 'message' ? `message/${entry.message.role}` : entry.type
}

/** The date the agent writes into its system prompt: the same run can straddle midnight. */
function withoutDate(raw) {
  return raw.replace(/Current date: \d{4}-\d{2}-\d{2}/g, 'Current date: (date)')
}

function textOf(content) {
  if (typeof content === 'string') return content
  return content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n')
}

/** What a summary request's output budget is shown as when it is the one its line's pi-ai derives from the input. */
const OUTPUT_BUDGET_MET = "(none set: pi-ai's clamp of model.maxTokens to the room the input leaves)"

/** A request body's messages as the TranscriptContext pi-ai estimated before sending them. */
function transcriptOf(body) {
  return {
    messages: body.messages.map((m) => {
      const text = textOf(m.content)
      return m.role === 'system' || m.role === 'developer' ? { role: 'system', content: text } : { role: m.role, content: [{ type: 'text', text }] }
    }),
  }
}

/**
 * The transcript a summary prompt carries: in <conversation> tags, or (1.6's
 * turn prefix) between "# Conversation" and "# Instructions" headings.
 */
function conversationOf(prompt) {
  const tagged = /<conversation>\n([\s\S]*)\n<\/conversation>/.exec(prompt)
  if (tagged) return tagged[1]
  const headed = /^# Conversation\n([\s\S]*)\n\n# Instructions\n/.exec(prompt)
  return headed ? headed[1] : undefined
}

/**
 * A summarization request by its structure: the request options, the
 * message roles, the previous summary it carries, whether the compaction's
 * custom instructions are in it, and what its transcript holds (messages by
 * kind, tool calls with their arguments, tool calls' ids left out): both
 * modules summarize the same messages, each in its own words and format.
 */
function summaryRequestView(request, instructions, outputBudget) {
  const body = JSON.parse(request.raw)
  const { messages, ...options } = body
  // Where the module sets no maxTokens, pi-ai asks for what the request's own input leaves of the window.
  if (outputBudget && options.max_completion_tokens === outputBudget(body)) options.max_completion_tokens = OUTPUT_BUDGET_MET
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content))
  const prompt = messages
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n')
  const conversation = conversationOf(prompt)
  const previous = /<previous-summary>\n([\s\S]*?)\n<\/previous-summary>/.exec(prompt)
  const count = (re) => (conversation === undefined ? 0 : (conversation.match(re) || []).length)
  const toolCalls = []
  for (const m of (conversation || '').matchAll(/^\[Assistant tool calls\]: (.*)$/gm)) toolCalls.push(m[1].replace(/#[^(]*\(/g, '('))
  return {
    options,
    roles: messages.map((m) => m.role),
    systemPrompt: system.join('\n'),
    prompt,
    structure: {
      conversation: conversation !== undefined,
      userMessages: count(/^\[User\]: /gm),
      assistantMessages: count(/^\[Assistant\]: /gm),
      toolResults: count(/^\[Tool result[^\]]*\]: /gm),
      toolCalls,
      previousSummary: previous ? previous[1] : null,
      customInstructions: instructions.length > 0 && instructions.some((text) => prompt.includes(text)),
    },
  }
}

function summaryRequestsByPart(record, outputBudget) {
  const instructions = record.operations.filter((o) => o.op === 'compact' && o.args[0]).map((o) => o.args[0])
  const groups = new Map()
  for (const request of record.requests) {
    if (request.kind !== 'summary') continue
    const key = `${request.operation}/${request.part}`
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(summaryRequestView(request, instructions, outputBudget))
  }
  return groups
}

/**
 * Every difference between the two records of a flow. `outputBudget(body)`,
 * for a line whose summary requests set no maxTokens, is the output budget
 * the line's pi-ai asks for with that body's input.
 */
function compareRecords(agent, ours, { outputBudget } = {}) {
  const out = []
  const add = (where, detail) => out.push({ where, detail })
  const agentIds = idsOf(agent)
  const oursIds = idsOf(ours)
  const a = (v) => normalize(v, agentIds)
  const o = (v) => normalize(v, oursIds)
  const each = (where, path, x, y) => {
    for (const [p, vx, vy] of deepDiff(x, y)) add(where, { path: `${path}${p}`, agent: vx, ours: vy })
  }

  // The session file, entry by entry.
  const agentEntries = a(entriesOf(agent))
  const oursEntries = o(entriesOf(ours))
  if (agentEntries.length !== oursEntries.length) {
    add('session: entries', { agent: agentEntries.map(entryLabel), ours: oursEntries.map(entryLabel) })
  }
  for (let i = 0; i < Math.min(agentEntries.length, oursEntries.length); i++) {
    for (const [p, vx, vy] of deepDiff(agentEntries[i], oursEntries[i])) {
      add(`session ${entryLabel(agentEntries[i])}: ${p.replace(/\[\d+\]/g, '[]').slice(1)}`, { path: `entries[${i}]${p}`, agent: vx, ours: vy })
    }
  }

  // Events, operations, the context the file re-opens with, the files the tools left.
  const agentEvents = a(agent.events)
  const oursEvents = o(ours.events)
  if (agentEvents.length !== oursEvents.length || agentEvents.some((e, i) => e.type !== oursEvents[i].type)) {
    add('events: sequence', { agent: agentEvents.map((e) => e.type), ours: oursEvents.map((e) => e.type) })
  } else {
    agentEvents.forEach((e, i) => each(`event ${e.type}`, `events[${i}]`, e, oursEvents[i]))
  }
  const agentOps = a(agent.operations)
  const oursOps = o(ours.operations)
  agentOps.forEach((op, i) => each(`operation ${op.op}`, `operations[${i}]`, op, oursOps[i]))
  if (agentOps.length !== oursOps.length) add('operations: count', { agent: agentOps.length, ours: oursOps.length })
  each('context after re-opening', 'reopened', a(agent.reopened), o(ours.reopened))
  for (const [p, vx, vy] of deepDiff(a(agent.stats), o(ours.stats))) add(`session stats: ${p.slice(1)}`, { path: `stats${p}`, agent: vx, ours: vy })
  each('work files', 'files', agent.files, ours.files)
  each('extension preparation', 'preparations', a(agent.preparations), o(ours.preparations))

  // The agent's own requests: byte for byte.
  const agentTurns = agent.requests.filter((r) => r.kind === 'agent')
  const oursTurns = ours.requests.filter((r) => r.kind === 'agent')
  if (agentTurns.length !== oursTurns.length) add('agent requests: count', { agent: agentTurns.length, ours: oursTurns.length })
  for (let i = 0; i < Math.min(agentTurns.length, oursTurns.length); i++) {
    if (withoutDate(agentTurns[i].raw) !== withoutDate(oursTurns[i].raw)) {
      const [first] = deepDiff(JSON.parse(agentTurns[i].raw), JSON.parse(oursTurns[i].raw))
      add('agent request: body', { request: i, path: first && first[0], agent: first && first[1], ours: first && first[2] })
    }
  }
  // What the model answered, request by request, and the order of kinds.
  // (A split turn's two summary requests may arrive in either order when sent in parallel.)
  const sequence = (r) => {
    const out = []
    for (const q of r.requests) {
      const item = `${q.kind}:${q.answer}`
      if (q.kind === 'summary' && Array.isArray(out[out.length - 1])) out[out.length - 1] = [...out[out.length - 1], item].sort()
      else out.push(q.kind === 'summary' ? [item] : item)
    }
    return out
  }
  if (!isDeepStrictEqual(sequence(agent), sequence(ours))) {
    add('requests: sequence', { agent: sequence(agent), ours: sequence(ours) })
  }

  // Summarization requests: by structure, per session call and part.
  const agentSummaries = summaryRequestsByPart(agent, outputBudget)
  const oursSummaries = summaryRequestsByPart(ours, outputBudget)
  for (const key of new Set([...agentSummaries.keys(), ...oursSummaries.keys()])) {
    const x = agentSummaries.get(key) || []
    const y = oursSummaries.get(key) || []
    if (x.length !== y.length) add(`summary requests ${key}: count`, { agent: x.length, ours: y.length })
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i].systemPrompt !== y[i].systemPrompt) add('summary request: system prompt', { request: `${key}[${i}]` })
      if (x[i].prompt !== y[i].prompt) add('summary request: prompt text', { request: `${key}[${i}]` })
      for (const [p, vx, vy] of deepDiff(x[i].options, y[i].options)) {
        add(`summary request ${key}: options${/^\.[^.[]+/.exec(p)[0]}`, { path: `${key}[${i}].options${p}`, agent: vx, ours: vy })
      }
      each(`summary request ${key}: roles`, `${key}[${i}].roles`, x[i].roles, y[i].roles)
      for (const [field, vx] of Object.entries(x[i].structure)) {
        if (!isDeepStrictEqual(vx, y[i].structure[field])) add(`summary request ${key}: ${field}`, { request: `${key}[${i}]`, agent: vx, ours: y[i].structure[field] })
      }
    }
  }
  return out
}

/**
 * Matches the differences found in each flow against a line's list
 * (differences.js). Returns the differences no entry lists and the entries
 * whose flows are not exactly the flows where they occur.
 */
function checkAgainstList(found, list) {
  const byWhere = new Map()
  for (const [flow, differences] of Object.entries(found)) {
    for (const d of differences) {
      if (!byWhere.has(d.where)) byWhere.set(d.where, new Map())
      const flows = byWhere.get(d.where)
      if (!flows.has(flow)) flows.set(flow, [])
      flows.get(flow).push(d.detail)
    }
  }
  const listed = new Map(list.map((entry) => [entry.where, entry]))
  const unlisted = []
  for (const [where, flows] of byWhere) {
    const entry = listed.get(where)
    for (const [flow, details] of flows) {
      if (!entry || !entry.flows.includes(flow)) unlisted.push({ where, flow, details: details.slice(0, 3) })
    }
  }
  const stale = []
  for (const entry of list) {
    const seen = byWhere.get(entry.where) || new Map()
    const missing = entry.flows.filter((flow) => !seen.has(flow) && flow in found)
    if (missing.length > 0) stale.push({ where: entry.where, flowsWhereItNoLongerOccurs: missing })
  }
  return { unlisted, stale }
}

module.exports = { compareRecords, checkAgainstList, entriesOf, idsOf, normalize, transcriptOf, OUTPUT_BUDGET_MET }
