'use strict'
// The parent side of a fault run (Node 20, in Jest or from faults.js): the
// scripted model's server, which injects each case's fault, the agent's
// processes (child.mjs under the line's Node 22, or Bun), the kills, and the
// verdict on every session file, read back with the agent's own
// SessionManager (never the swapped one).
//
// For every case the verdict requires:
//   - the file is whole: every line ends in a newline and parses, every
//     entry has the fields its type needs, ids are unique, parentId and
//     firstKeptEntryId name entries of the file;
//   - the file re-opens with SessionManager.open and buildSessionContext;
//   - either it is byte for byte the file the attempt found, and its context
//     is the one it had then; or it is that file plus exactly one new entry
//     of the operation's type (a compaction, a branch summary), holding the
//     summary the model gave, after the entry that was the leaf;
//   - it agrees with what the agent reported (an entry exactly when the
//     agent reported success) and, while the process lives, with the
//     session's own in-memory context;
//   - the fault was injected: the server sent it, the abort came while the
//     call was under way, the process died by SIGKILL.
// After a failed or cancelled attempt, the same call once more must succeed
// (the session is not stuck); a session a kill left behind is re-opened by
// a new agent process, which takes a turn and compacts.

const { fork } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { isDeepStrictEqual } = require('node:util')
const { pathToFileURL } = require('node:url')
const { startServer } = require('../../helpers/openai-server.js')
const { createScriptedModel, kindOf } = require('../scripted-model.js')
const { OPS, RESUME, COMPACTION } = require('./ops.js')

const CHILD = path.join(__dirname, 'child.mjs')
/** The harness's model's window and compaction settings (harness.mjs MODEL, COMPACTION). */
const CONTEXT_WINDOW = 6000
const COMPACTION_SETTINGS = { enabled: true, reserveTokens: 1500, keepRecentTokens: 1500 }
/** A case that takes longer than this has hung the agent. */
const CASE_TIMEOUT_MS = 60_000

// ---------------------------------------------------------------------------
// Reading a session file back
// ---------------------------------------------------------------------------

const REQUIRED = {
  message: (e) => e.message && typeof e.message === 'object' && typeof e.message.role === 'string',
  compaction: (e) => typeof e.summary === 'string' && typeof e.firstKeptEntryId === 'string' && Number.isFinite(e.tokensBefore),
  branch_summary: (e) => typeof e.summary === 'string' && typeof e.fromId === 'string',
  model_change: (e) => typeof e.provider === 'string' && typeof e.modelId === 'string',
  thinking_level_change: (e) => typeof e.thinkingLevel === 'string',
}

/**
 * `text` (a session file) read as the agent reads it: `{ problems, entries,
 * context }`, problems naming every line that is cut short, does not parse
 * or lacks what its type needs. `SessionManager` is the agent's own.
 */
function inspectText(text, SessionManager, scratch) {
  const problems = []
  if (text.length > 0 && !text.endsWith('\n')) problems.push('the last line is cut short (no newline)')
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  const entries = []
  lines.forEach((line, i) => {
    try {
      entries.push(JSON.parse(line))
    } catch (err) {
      problems.push(`line ${i + 1} does not parse: ${err.message}`)
    }
  })
  const ids = new Set()
  entries.forEach((e, i) => {
    const where = `line ${i + 1} (${e && e.type})`
    if (!e || typeof e !== 'object' || typeof e.type !== 'string') return problems.push(`${where}: not an entry`)
    if (i === 0) {
      if (e.type !== 'session' || typeof e.id !== 'string' || typeof e.cwd !== 'string') problems.push(`${where}: not a session header`)
      return undefined
    }
    if (typeof e.id !== 'string' || e.id === '') problems.push(`${where}: no id`)
    else if (ids.has(e.id)) problems.push(`${where}: duplicate id ${e.id}`)
    if (e.parentId !== null && !ids.has(e.parentId)) problems.push(`${where}: parentId ${JSON.stringify(e.parentId)} names no earlier entry`)
    if (typeof e.timestamp !== 'string') problems.push(`${where}: no timestamp`)
    if (REQUIRED[e.type] && !REQUIRED[e.type](e)) problems.push(`${where}: lacks the fields of its type`)
    ids.add(e.id)
    return undefined
  })
  for (const e of entries) {
    if (e && e.type === 'compaction' && !ids.has(e.firstKeptEntryId)) problems.push(`compaction ${e.id}: firstKeptEntryId ${e.firstKeptEntryId} names no entry`)
  }
  let context = null
  try {
    fs.writeFileSync(scratch, text)
    const sm = SessionManager.open(scratch, path.dirname(scratch))
    const built = sm.buildSessionContext()
    context = JSON.parse(JSON.stringify({ messages: built.messages, thinkingLevel: built.thinkingLevel, model: built.model }))
    if (sm.getEntries().length !== entries.length - 1) problems.push(`SessionManager.open read ${sm.getEntries().length} entries of ${entries.length - 1}`)
  } catch (err) {
    problems.push(`SessionManager.open / buildSessionContext failed: ${err.message}`)
  }
  return { problems, entries, context }
}

/** Where two JSON values first differ, as `path: a / b`. */
function firstDifference(a, b, at = '$') {
  if (isDeepStrictEqual(a, b)) return null
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a) && a.length !== b.length) return `${at}.length: ${a.length} / ${b.length}`
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${at}.${k}`)
      if (d) return d
    }
  }
  return `${at}: ${JSON.stringify(a)} / ${JSON.stringify(b)}`.slice(0, 300)
}

/**
 * The verdict on one attempt: `{ state: 'unchanged' | 'added' | 'corrupt' |
 * 'lost', problems }`. `before` is the file the attempt found, `afterText`
 * the file now, `reported` what the agent said ('success', 'failed',
 * 'aborted', 'none', or null when the process was killed), `live` the
 * session's in-memory context (null when killed), `texts` the summaries the
 * model gave.
 */
function judge({ op, beforeText, afterText, reported, live, texts, SessionManager, scratch }) {
  const problems = []
  if (afterText === null) return { state: 'lost', problems: ['the session file is gone'] }
  let before = inspectText(beforeText, SessionManager, `${scratch}.before.jsonl`)
  if (before.problems.length) problems.push(...before.problems.map((p) => `before the attempt: ${p}`))
  const whole = inspectText(afterText, SessionManager, `${scratch}.after.jsonl`)
  if (whole.problems.length) return { state: 'corrupt', problems: [...problems, ...whole.problems] }
  // A compaction in the middle of a turn (1.6 compacts before each request of
  // a run, and tries again before the next one after a failure or an abort)
  // has the turn's messages around it: the attempt is judged on the file
  // without the messages the turn wrote after its own entry, against the file
  // with those the turn wrote before it.
  let after = whole
  if (OPS[op].continues && afterText.startsWith(beforeText)) {
    const added = whole.entries.slice(before.entries.length)
    const lines = afterText.split('\n')
    const text = (n) => `${lines.slice(0, n).join('\n')}\n`
    const own = added.findIndex((e) => e.type !== 'message')
    const turnBefore = own < 0 ? added.length : own
    const turnAfter = own < 0 ? 0 : trailingMessages(added.slice(own))
    if (turnBefore > 0) {
      beforeText = text(before.entries.length + turnBefore)
      before = inspectText(beforeText, SessionManager, `${scratch}.turn.jsonl`)
    }
    if (turnBefore + turnAfter > 0) {
      afterText = text(whole.entries.length - turnAfter)
      after = inspectText(afterText, SessionManager, `${scratch}.attempt.jsonl`)
    }
  }
  let state
  if (afterText === beforeText) {
    state = 'unchanged'
    if (!isDeepStrictEqual(after.context, before.context)) problems.push('the same file re-opens to a different context')
    if (reported === 'success') problems.push('the agent reported success, but nothing was written')
  } else if (afterText.startsWith(beforeText)) {
    state = 'added'
    const added = after.entries.slice(before.entries.length)
    const leaf = before.entries[before.entries.length - 1]
    const want = OPS[op].entryType
    if (added.length !== 1) problems.push(`${added.length} entries were written (${added.map((e) => e.type).join(', ')}), not one ${want}`)
    const entry = added[0]
    if (entry && entry.type !== want) problems.push(`a ${entry.type} entry was written, not a ${want}`)
    if (entry && want === COMPACTION && entry.parentId !== leaf.id) problems.push(`the compaction hangs off ${entry.parentId}, not the leaf ${leaf.id}`)
    if (entry && texts.length > 0 && !texts.some((t) => entry.summary.includes(t))) problems.push('the new entry holds none of the summaries the model gave')
    if (isDeepStrictEqual(after.context, before.context)) problems.push('the new entry did not change the context')
    if (reported !== null && reported !== 'success') problems.push(`an entry was written, but the agent reported ${reported}`)
  } else {
    return { state: 'lost', problems: [...problems, 'lines the attempt found were changed or removed'] }
  }
  // Parsed again here: the child's values come through IPC from another realm (prototypes differ under Jest).
  const held = live && JSON.parse(JSON.stringify(live.context))
  if (held && !isDeepStrictEqual(held, whole.context)) problems.push(`the file re-opens to another context than the agent's session holds (${firstDifference(whole.context, held)})`)
  return { state, problems }
}

/** How many of `entries` (those written since the attempt began), counted from the end, are messages. */
function trailingMessages(entries) {
  let n = 0
  while (n < entries.length && entries[entries.length - 1 - n].type === 'message') n++
  return n
}

// ---------------------------------------------------------------------------
// Running the cases
// ---------------------------------------------------------------------------

const clone = (x) => (Buffer.isBuffer(x) ? Buffer.from(x) : JSON.parse(JSON.stringify(x)))

function reply(x) {
  if (x && x.raw !== undefined && Buffer.isBuffer(x.raw)) return { ...x, raw: Buffer.from(x.raw) }
  return clone(x)
}

/** A summary streamed in `pieces` pieces, `chunkDelayMs` apart. */
function slowed(answer, slow) {
  const size = Math.ceil(answer.text.length / slow.pieces)
  const sse = []
  for (let i = 0; i < answer.text.length; i += size) sse.push(answer.text.slice(i, i + size))
  return { sse, usage: answer.usage, chunkDelayMs: slow.chunkDelayMs }
}

/** The state of the case the server is answering for; replaced for every case. */
function newCaseState(c) {
  const model = createScriptedModel({ contextWindow: CONTEXT_WINDOW, agentReplies: c.resume ? RESUME.replies : OPS[c.op].replies })
  return { c, model, armed: false, recovering: false, summaries: 0, injected: 0, texts: [], serverBefore: null, sessionFile: null, onFirstSummary: null }
}

function scriptFor(holder) {
  return (body) => {
    const st = holder.current
    if (!st) return { status: 500, error: 'no case is running' }
    if (kindOf(body) !== 'summary' || !st.armed) return st.model.script(body)
    const i = st.summaries++
    if (i === 0) {
      st.serverBefore = readOrNull(st.sessionFile)
      if (st.onFirstSummary) st.onFirstSummary()
    }
    const last = !st.recovering && st.onLastSummarySent && i === OPS[st.c.op].summaryRequests - 1 ? st.onLastSummarySent : undefined
    const { c } = st
    if (!st.recovering && c.reply && (c.persistent || c.on.includes(i))) {
      st.injected++
      return reply(c.reply)
    }
    const answer = st.model.script(body)
    if (answer.text !== undefined) st.texts.push(answer.text)
    if (c.reply && c.reply.sse) st.texts.push(c.reply.sse.join(''))
    const sent = c.slow && !st.recovering && answer.text !== undefined ? slowed(answer, c.slow) : answer
    return last ? { ...sent, onEnd: last } : sent
  }
}

function readOrNull(file) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return null
  }
}

/** One agent process (on `execPath`): its messages as a queue, its end as a promise. */
function spawnChild(line, variant, base, baseUrl, execPath, bundle) {
  const env = { ...process.env, HOME: base, PI_CODING_AGENT_DIR: path.join(base, 'home-agent-dir'), PI_OFFLINE: '1', NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' }
  const child = fork(CHILD, [JSON.stringify({ line: line.version, variant, base, baseUrl, bundle })], { execPath, execArgv: [], env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  let stderr = ''
  child.stdout.on('data', () => {})
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-8000)
  })
  const queue = []
  let waiting = null
  child.on('message', (msg) => {
    if (waiting) {
      const w = waiting
      waiting = null
      w(msg)
    } else queue.push(msg)
  })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  exited.then((how) => {
    if (waiting) {
      const w = waiting
      waiting = null
      w({ type: 'exited', ...how, stderr })
    }
  })
  let gone = null
  exited.then((how) => (gone = how))
  return {
    child,
    exited,
    stderr: () => stderr,
    send: (msg) => child.connected && child.send(msg),
    /** The next message, or `{ type: 'exited' }` once the process is gone, or `{ type: 'timeout' }`. */
    receive(timeoutMs = CASE_TIMEOUT_MS) {
      if (queue.length) return Promise.resolve(queue.shift())
      if (gone) return Promise.resolve({ type: 'exited', ...gone, stderr })
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting = null
          resolve({ type: 'timeout' })
        }, timeoutMs)
        waiting = (msg) => {
          clearTimeout(timer)
          resolve(msg)
        }
      })
    },
  }
}

async function expectMessage(proc, type) {
  const msg = await proc.receive()
  if (msg.type !== type) {
    const why = msg.type === 'case-error' ? msg.message : msg.type === 'exited' ? `the agent process exited (${msg.signal || msg.code}): ${msg.stderr}` : msg.type
    throw new Error(`expected ${type}: ${why}`)
  }
  return msg
}

/** The import last started by importInTurn. */
let lastImport = Promise.resolve()

/**
 * Imports `file` once the imports started before it have settled. Jest's
 * ESM loader fails ("request for './agent.js' is not in cache") when two
 * agent versions that share their dependencies (0.78.0 and 0.78.1) are
 * imported at the same time, as the runs of all lines start together.
 */
function importInTurn(file) {
  const next = lastImport.then(() => import(pathToFileURL(file).href))
  lastImport = next.catch(() => {})
  return next
}

/**
 * Runs `cases` in the real agent of `line` with the agent's own module
 * (variant 'agent') or ours ('ours'), in `base`; with `bundle`, the agent
 * loaded from its bundle (its SDK's `dist/bundle/index.js`). Returns one
 * result per case (and per re-opened killed session) with its verdict.
 */
async function runFaults({ line, variant, cases, base, log = () => {}, execPath = line.node.binary, bundle = false }) {
  const { SessionManager } = await importInTurn(path.join(line.packageDir, 'dist', 'core', 'session-manager.js'))
  const own = await importInTurn(path.join(line.packageDir, line.moduleDir, 'index.js'))
  /** The agent's own module's plan for a session file's branch, with the harness's settings. */
  const ownPlan = async (file) => own.prepareCompaction(SessionManager.open(file, path.dirname(file)).getBranch(), COMPACTION_SETTINGS)
  const holder = { current: null }
  const server = await startServer(scriptFor(holder))
  const scratchDir = path.join(base, `scratch-${variant}`)
  fs.mkdirSync(scratchDir, { recursive: true })
  const results = []
  let proc = null
  const startProc = async () => {
    proc = spawnChild(line, variant, base, server.baseUrl, execPath, bundle)
    const { compactIsOurs } = await expectMessage(proc, 'ready')
    if (compactIsOurs !== (variant === 'ours')) {
      throw new Error(`the agent runs ${compactIsOurs ? 'our' : 'its own'} compaction module in the '${variant}' run: the module swap ${compactIsOurs ? 'took where it should not' : 'did not take'}`)
    }
  }
  const stopProc = async () => {
    if (!proc) return
    proc.send({ type: 'exit' })
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000)
    await proc.exited
    clearTimeout(timer)
    proc = null
  }
  try {
    let index = 0
    // Kills first, each in a process of its own; then the rest and the re-opened sessions share one.
    const ordered = [...cases.filter((c) => c.kind === 'kill'), ...cases.filter((c) => c.kind !== 'kill')]
    for (const c of ordered) {
      index++
      const result = { variant, kind: c.kind, op: c.op, name: c.name }
      results.push(result)
      const t0 = Date.now()
      try {
        if (c.kind === 'kill') {
          await startProc()
          await runKill(c, index, result)
          proc = null
        } else {
          if (!proc) await startProc()
          await runOne(c, index, result)
        }
      } catch (err) {
        result.problems = [...(result.problems || []), `the case did not run: ${err.message}`]
        result.state = result.state || 'error'
        if (proc) {
          proc.child.kill('SIGKILL')
          await proc.exited
          proc = null
        }
      }
      result.ms = Date.now() - t0
      log(result)
    }
    // Sessions a kill left behind: a new agent process takes them up.
    const killed = results.filter((r) => r.kind === 'kill' && r.sessionFile && (r.state === 'unchanged' || r.state === 'added'))
    if (killed.length) {
      if (!proc) await startProc()
      for (const k of killed) {
        index++
        const result = { variant, kind: 'resume', op: 'compact', name: `re-open after ${k.name}` }
        results.push(result)
        try {
          await runResume({ name: result.name, resume: true, op: 'compact', sessionFile: k.sessionFile, settings: {} }, index, result)
        } catch (err) {
          result.problems = [...(result.problems || []), `the case did not run: ${err.message}`]
          result.state = result.state || 'error'
        }
        log(result)
      }
    }
    await stopProc()
  } finally {
    if (proc) proc.child.kill('SIGKILL')
    await server.close()
  }
  return results

  async function start(c, index, type) {
    const st = newCaseState(c)
    holder.current = st
    proc.send({ type, case: c, index })
    const started = await expectMessage(proc, 'op-start')
    st.sessionFile = started.sessionFile
    if (started.compactionsBefore) throw new Error(`the session compacted ${started.compactionsBefore} time(s) before the operation`)
    st.armed = true
    return st
  }

  function verdict(st, c, beforeText, reported, live, scratch) {
    return judge({ op: c.op, beforeText, afterText: readOrNull(st.sessionFile), reported, live, texts: st.texts, SessionManager, scratch: path.join(scratchDir, scratch) })
  }

  async function runOne(c, index, result) {
    const st = await start(c, index, 'case')
    proc.send({ type: 'go' })
    const end = await expectMessage(proc, 'op-end')
    const { outcome, live } = end
    Object.assign(result, { reported: outcome.reported, detail: outcome.detail, requests: st.summaries, injectedReplies: st.injected })
    result.injected = c.kind === 'abort' ? outcome.abort.inFlight : st.injected > 0
    const problems = []
    if (c.kind === 'abort' && !outcome.abort.called) problems.push('the abort never fired')
    if (outcome.before === null) problems.push(`the operation never started (${outcome.detail}): nothing was attempted`)
    if (outcome.before !== null && st.serverBefore !== null && st.serverBefore !== outcome.before) problems.push('the file changed between the start of the attempt and its first summary request')
    if (outcome.before !== null) {
      const v = verdict(st, c, outcome.before, outcome.reported, live, `${variant}-${index}`)
      result.state = v.state
      problems.push(...v.problems)
    }
    if (outcome.reported !== 'success') {
      // Not stuck: the same call again, with the model answering.
      const afterFault = readOrNull(st.sessionFile)
      st.recovering = true
      st.texts = []
      proc.send({ type: 'recover' })
      const again = await expectMessage(proc, 'recover-end')
      const v = judge({ op: c.op, beforeText: afterFault, afterText: readOrNull(st.sessionFile), reported: again.outcome.reported, live: again.live, texts: st.texts, SessionManager, scratch: path.join(scratchDir, `${variant}-${index}-again`) })
      result.recovered = again.outcome.reported === 'success' && v.state === 'added' && v.problems.length === 0
      if (!result.recovered) problems.push(`the call after the fault did not succeed: ${again.outcome.reported} (${again.outcome.detail}); ${v.state}; ${v.problems.join('; ')}`)
    }
    proc.send({ type: 'next' })
    holder.current = null
    result.problems = problems
  }

  async function runKill(c, index, result) {
    const st = await start(c, index, 'case')
    let opEnded = false
    const killedAt = new Promise((resolve) => {
      const kill = () => {
        setTimeout(() => {
          result.killedDuringOperation = !opEnded
          proc.child.kill('SIGKILL')
          resolve()
        }, c.killAfterMs)
      }
      if (c.killAtEnd) st.onLastSummarySent = kill
      else st.onFirstSummary = kill
    })
    proc.send({ type: 'go' })
    const msg = await proc.receive()
    if (msg.type === 'op-end') opEnded = true
    else if (msg.type !== 'exited') throw new Error(`expected the kill, got ${msg.type}${msg.message ? `: ${msg.message}` : ''}`)
    let timer
    const noRequest = new Promise((resolve) => (timer = setTimeout(resolve, 10_000, 'no summary request')))
    const first = await Promise.race([killedAt, noRequest])
    clearTimeout(timer)
    if (first === 'no summary request') {
      proc.child.kill('SIGKILL')
      throw new Error(`the operation ended without a summary request to kill it in (${msg.outcome ? msg.outcome.detail : msg.type})`)
    }
    const how = await proc.exited
    Object.assign(result, { reported: null, requests: st.summaries, signal: how.signal, sessionFile: st.sessionFile })
    result.injected = how.signal === 'SIGKILL' && result.killedDuringOperation === true
    const problems = []
    if (how.signal !== 'SIGKILL') problems.push(`the agent process ended by ${how.signal || `exit ${how.code}`}, not by the kill`)
    if (st.serverBefore === null) problems.push('no summary request arrived before the kill')
    else {
      const v = verdict(st, c, st.serverBefore, null, null, `${variant}-${index}`)
      result.state = v.state
      problems.push(...v.problems)
    }
    holder.current = null
    result.problems = problems
  }

  async function runResume(c, index, result) {
    const st = await start(c, index, 'resume')
    proc.send({ type: 'go' })
    const { outcome, live } = await expectMessage(proc, 'op-end')
    Object.assign(result, { reported: outcome.reported, detail: outcome.detail, injected: false })
    const problems = []
    if (outcome.turn.error) problems.push(`the re-opened session could not take a turn: ${outcome.turn.error}`)
    if (outcome.reported !== 'success') {
      // 1.6 keeps the whole of a session that has no more than keepRecentTokens since its last compaction (the
      // turn may have compacted it): true when the agent's own module, unswapped, finds nothing to compact either.
      const nothing = /^(Nothing to compact|Already compacted)/.test(outcome.detail) && (await ownPlan(st.sessionFile)) === undefined
      if (nothing) result.reported = 'nothing to compact'
      else problems.push(`the re-opened session did not compact: ${outcome.detail}`)
    }
    const v = verdict(st, c, outcome.before, outcome.reported, live, `${variant}-${index}`)
    result.state = v.state
    problems.push(...v.problems)
    proc.send({ type: 'next' })
    holder.current = null
    result.problems = problems
  }
}

/** Tallies of results: per kind, how many were injected, and how the agent and the file ended. */
function tally(results) {
  const out = {}
  for (const r of results) {
    const t = (out[r.kind] = out[r.kind] || { cases: 0, injected: 0, success: 0, failed: 0, aborted: 0, 'nothing to compact': 0, killed: 0, unchanged: 0, added: 0, lostOrCorrupt: 0, problems: 0 })
    t.cases++
    if (r.injected) t.injected++
    if (r.reported === null) t.killed++
    else if (r.reported) t[r.reported] = (t[r.reported] || 0) + 1
    if (r.state === 'unchanged' || r.state === 'added') t[r.state]++
    if (r.state === 'lost' || r.state === 'corrupt') t.lostOrCorrupt++
    if (r.problems && r.problems.length) t.problems++
  }
  return out
}

module.exports = { runFaults, judge, inspectText, tally }
