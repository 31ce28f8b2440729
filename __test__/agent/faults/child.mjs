// The agent side of a fault run, under the agent line's Node 22 binary (or Bun),
// forked by run.js with an IPC channel:
//   node child.mjs <job json>   job: { line, variant: 'agent' | 'ours', base, baseUrl, bundle }
// With 'ours', our entry is swapped in for the agent's compaction module
// before the agent loads; with `bundle`, the agent is its bundle (the
// chunk holding the module patched, with 'ours'). The parent sends cases one at a time; for each,
// the child builds a fresh session (the agent's own SDK, tools and
// SessionManager, a session file of its own), brings it to the operation,
// tells the parent (which then arms the fault), runs the operation, and
// reports how it ended together with the session's own in-memory context.
// The parent checks the file; it may ask for a recovery call, or kill the
// process.

import { cpSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createSession, loadAgent, swapInOurs } from '../harness.mjs'

const require = createRequire(import.meta.url)
const { LINES, root } = require('../lines.js')
const { TURNS } = require('../flows.js')
const { OPS, RECOVER, RESUME } = require('./ops.js')
const { BUNDLES } = require('../../../lib/agent-swap.js')

const job = JSON.parse(process.argv[2])
const line = LINES.find((l) => l.version === job.line)
if (!line) throw new Error(`no agent version ${job.line} in lines.js`)
if (job.variant === 'ours') await swapInOurs()

const agent = await loadAgent(line, job.bundle)
// Whether the swap took: run.js refuses a run whose variant it is not.
const compactIsOurs = agent.compact === (await import(import.meta.resolve(line.entry))).compact
// What the agent's command line sets up before a session: the HTTP client's
// idle timeouts (in a bundle, from the chunk that holds the module, as its `pi` entry imports it).
const httpDispatcher = job.bundle ? BUNDLES.find((b) => b.version === line.version).chunk : join('dist', 'core', 'http-dispatcher.js')
const { configureHttpDispatcher } = await import(pathToFileURL(join(line.packageDir, httpDispatcher)).href)
const DEFAULT_IDLE_TIMEOUT_MS = 300_000
const WORK_TREE = join(root, '__test__', 'agent', 'work-tree')

/** Messages from the parent, in order, awaited one at a time. */
const inbox = []
let waiting = null
process.on('message', (msg) => {
  if (waiting) {
    const w = waiting
    waiting = null
    w(msg)
  } else inbox.push(msg)
})
function receive() {
  return inbox.length ? Promise.resolve(inbox.shift()) : new Promise((resolve) => (waiting = resolve))
}
function send(msg) {
  return new Promise((resolve) => process.send(msg, resolve))
}

const errorText = (err) => String((err && err.message) || err)

/** The session's context as the agent itself builds it, as JSON. */
function liveState(sessionManager) {
  const context = sessionManager.buildSessionContext()
  return {
    context: JSON.parse(JSON.stringify({ messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model })),
    leafId: sessionManager.getLeafId(),
    entries: sessionManager.getEntries().length,
  }
}

async function openCase(c, index, sessionFile) {
  const dir = join(job.base, `${job.variant}-${index}`)
  const work = join(dir, 'work')
  const agentDir = join(dir, 'agent')
  const sessionDir = join(agentDir, 'sessions')
  mkdirSync(sessionDir, { recursive: true })
  for (const file of TURNS.FILES) {
    mkdirSync(dirname(join(work, file)), { recursive: true })
    cpSync(join(WORK_TREE, file), join(work, file))
  }
  const settings = c.settings || {}
  configureHttpDispatcher(settings.httpIdleTimeoutMs || DEFAULT_IDLE_TIMEOUT_MS)
  return createSession({ line, agent, baseUrl: job.baseUrl, work, agentDir, sessionDir, sessionId: `faults-${job.variant}-${index}`, sessionFile, settings })
}

/** The calls an operation makes, each recorded and never throwing. */
function helpers(session, sessionManager, events) {
  const record = async (name, call) => {
    const at = events.length
    try {
      const value = await call()
      return { op: name, value: value === undefined ? null : JSON.parse(JSON.stringify(value)), events: events.slice(at) }
    } catch (err) {
      return { op: name, error: errorText(err), events: events.slice(at) }
    }
  }
  return {
    session,
    prompt: (text) => record('prompt', () => session.prompt(text)),
    compact: (instructions) => record('compact', () => session.compact(instructions)),
    navigateTree: (targetId, options) => record('navigateTree', () => session.navigateTree(targetId, options)),
    lastUserEntryId(text) {
      const branch = sessionManager.getBranch()
      for (let i = branch.length - 1; i >= 0; i--) {
        const e = branch[i]
        if (e.type === 'message' && e.message.role === 'user' && e.message.content[0] && e.message.content[0].text === text) return e.id
      }
      throw new Error(`no user message ${JSON.stringify(text)} on the path`)
    },
  }
}

/** What the agent reported for a call: 'success', 'failed', 'aborted', or 'none' (it did not try). */
function reported(call, opName) {
  const ends = call.events.filter((e) => e.type === 'compaction_end')
  if (opName === 'branch' || call.op === 'navigateTree') {
    if (call.error !== undefined) return { reported: 'failed', detail: call.error }
    if (call.value && call.value.aborted) return { reported: 'aborted', detail: 'navigateTree: aborted' }
    if (call.value && call.value.summaryEntry) return { reported: 'success', detail: 'navigateTree: summaryEntry' }
    return { reported: 'none', detail: JSON.stringify(call.value) }
  }
  const end = ends[ends.length - 1]
  if (call.op === 'compact') {
    if (call.error === undefined) return { reported: 'success', detail: 'compact() resolved' }
    return { reported: end && end.aborted ? 'aborted' : 'failed', detail: call.error }
  }
  if (!end) return { reported: 'none', detail: call.error || 'no compaction_end' }
  if (end.aborted) return { reported: 'aborted', detail: 'compaction_end aborted' }
  if (end.hasResult) return { reported: 'success', detail: 'compaction_end with a result' }
  return { reported: 'failed', detail: end.errorMessage || 'compaction_end without a result' }
}

async function runCase(c, index) {
  const { session, sessionManager } = await openCase(c, index)
  const events = []
  let settled = false
  const abort = { called: false, inFlight: false }
  const abortNow = () => {
    abort.called = true
    abort.inFlight = !settled
    if (c.op === 'branch') session.abortBranchSummary()
    else session.abortCompaction()
  }
  let armed = false
  // The session file as the attempt found it: read when the compaction starts (a branch summary writes nothing before its request).
  let before = null
  const snapshot = () => {
    if (before === null) before = readFileSync(sessionManager.getSessionFile(), 'utf8')
  }
  session.subscribe((event) => {
    if (event.type === 'compaction_start') {
      events.push({ type: event.type, reason: event.reason })
      if (armed) snapshot()
      if (armed && c.abortAfterMs !== undefined && c.op !== 'branch' && !abort.called) setTimeout(abortNow, c.abortAfterMs)
    } else if (event.type === 'compaction_end') {
      events.push({ type: event.type, reason: event.reason, aborted: event.aborted, errorMessage: event.errorMessage, hasResult: Boolean(event.result) })
    }
  })
  const h = helpers(session, sessionManager, events)
  const op = OPS[c.op]
  await op.prepare(h)
  const prepared = events.filter((e) => e.type === 'compaction_end').length
  await send({ type: 'op-start', sessionFile: sessionManager.getSessionFile(), compactionsBefore: prepared })
  const go = await receive()
  if (go.type !== 'go') throw new Error(`expected go, got ${go.type}`)
  armed = true
  if (c.op === 'branch') snapshot()
  if (c.abortAfterMs !== undefined && c.op === 'branch') setTimeout(abortNow, c.abortAfterMs)
  const call = await op.run(h)
  settled = true
  const outcome = { ...reported(call, c.op), call: { op: call.op, error: call.error, events: call.events }, abort, before }
  await send({ type: 'op-end', outcome, live: liveState(sessionManager) })
  const next = await receive()
  if (next.type === 'recover') {
    const again = await RECOVER[c.op](h)
    await send({ type: 'recover-end', outcome: { ...reported(again, c.op), call: { op: again.op, error: again.error, events: again.events } }, live: liveState(sessionManager) })
    await receive()
  }
  session.dispose()
}

async function resumeCase(c, index) {
  const { session, sessionManager } = await openCase(c, index, c.sessionFile)
  const events = []
  session.subscribe((event) => {
    if (event.type === 'compaction_end') events.push({ type: event.type, aborted: event.aborted, errorMessage: event.errorMessage, hasResult: Boolean(event.result) })
  })
  const h = helpers(session, sessionManager, events)
  await send({ type: 'op-start', sessionFile: sessionManager.getSessionFile(), compactionsBefore: 0 })
  await receive()
  const turn = await h.prompt(RESUME.prompt)
  const before = readFileSync(sessionManager.getSessionFile(), 'utf8')
  const compaction = await h.compact()
  await send({ type: 'op-end', outcome: { ...reported(compaction, 'compact'), turn: { error: turn.error }, call: { op: 'compact', error: compaction.error, events: compaction.events }, before }, live: liveState(sessionManager) })
  await receive()
  session.dispose()
}

await send({ type: 'ready', compactIsOurs })
for (;;) {
  const msg = await receive()
  if (msg.type === 'exit') break
  try {
    if (msg.type === 'case') await runCase(msg.case, msg.index)
    else if (msg.type === 'resume') await resumeCase(msg.case, msg.index)
    else throw new Error(`unknown message ${msg.type}`)
  } catch (err) {
    await send({ type: 'case-error', message: String((err && err.stack) || err) })
  }
}
process.exit(0)
