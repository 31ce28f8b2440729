// Real-shaped sessions for every benchmark: a real pi session, cycled to the
// size wanted with fresh ids and a linear parent chain.
//
// The source is `../shared/samples/before-compaction.jsonl` beside the
// repository when it is there (an old-format session, loaded as the agent
// loads it: the reference's parseSessionEntries + migrateSessionEntries), and
// otherwise the sessions the project recorded from the real agent,
// `benches/fixtures/agent-0.78/*.jsonl` (real tool calls on this
// repository's own files, with their real contents and output). Either is
// what generated sessions are not: tool calls carrying whole files in their
// arguments, long tool results, long texts.
//
// PRIME_BENCH_SAMPLE=<file> names another sample (for a checkout that does
// not sit beside ../shared, such as a git worktree); PRIME_BENCH_SOURCE=fixtures
// uses the recorded fixtures even when a sample is there.
//
// Cycling: the source's entries, without its header and its compactions (a
// compaction would hide everything before it from the planners), repeated
// until there are enough. Every copy gets a fresh 8-hex-digit id (the
// agent's form), its parent is the entry before it, references to ids of
// the same copy (`fromId`, a compaction's `firstKeptEntryId`) follow them,
// and each copy's tool-call ids get a suffix of their own, so a tool
// result still answers the call of its copy. `realEntries(n, { compactions:
// true })` keeps the compactions, as a long real session has them: the
// planners then read everything but summarize only what the last one left.
// Each entry is made by JSON.parse of its line, as a session file gives it:
// every copy has objects and strings of its own.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
export const root = path.join(here, '..')
const require = createRequire(import.meta.url)

const SAMPLE = path.join(root, '..', 'shared', 'samples', 'before-compaction.jsonl')
const FIXTURES = path.join(here, 'fixtures', 'agent-0.78')
const sessionManagerPath = path.join(root, 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'core', 'session-manager.js')

let loaded = null

/** The agent's own loader (0.78.1): parseSessionEntries, migrateSessionEntries, buildSessionContext, SessionManager. */
export async function agentSessions() {
  return import(pathToFileURL(sessionManagerPath).href)
}

function sampleFile() {
  if (process.env.PRIME_BENCH_SOURCE === 'fixtures') return null
  const named = process.env.PRIME_BENCH_SAMPLE
  if (named) {
    if (!fs.existsSync(named)) throw new Error(`PRIME_BENCH_SAMPLE names no file: ${named}`)
    return path.resolve(named)
  }
  return fs.existsSync(SAMPLE) ? SAMPLE : null
}

/**
 * The source, loaded once: `{ kind, label, compactedLabel, header, entries, withCompactions, messages }`.
 * `entries` are the v3 entries one copy is made of (no header, no
 * compaction), `withCompactions` the same with the source's compactions,
 * `messages` the agent's context messages for `entries`
 * (buildSessionContext over the linear chain).
 */
export async function realSource() {
  if (loaded) return loaded
  const sm = await agentSessions()
  const sample = sampleFile()
  let header
  let entries = []
  let label
  let kind
  if (sample) {
    const all = sm.parseSessionEntries(fs.readFileSync(sample, 'utf8'))
    sm.migrateSessionEntries(all)
    header = all.find((e) => e.type === 'session')
    entries = all.filter((e) => e.type !== 'session')
    const shown = path.relative(root, sample).split(path.sep).join('/')
    kind = 'sample'
    label = `${shown} (a real pi session, loaded with the agent's parseSessionEntries + migrateSessionEntries)`
  } else {
    const files = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.jsonl')).sort()
    if (files.length === 0) throw new Error(`no real-shaped source: neither ${SAMPLE} nor ${FIXTURES}/*.jsonl`)
    for (const f of files) {
      const all = sm.parseSessionEntries(fs.readFileSync(path.join(FIXTURES, f), 'utf8'))
      sm.migrateSessionEntries(all)
      header ??= all.find((e) => e.type === 'session')
      for (const e of all) if (e.type !== 'session') entries.push(e)
    }
    kind = 'fixtures'
    label = `benches/fixtures/agent-0.78/*.jsonl (${files.length} sessions recorded from the real agent 0.78.1)`
  }
  const body = entries.filter((e) => e.type !== 'compaction')
  const context = sm.buildSessionContext(Array.from(chain(body), (line) => JSON.parse(line)))
  loaded = { kind, label: `${label}, ${body.length} entries a copy`, compactedLabel: `${label}, ${entries.length} entries a copy, ${entries.length - body.length} of them compactions`, header, entries: body, withCompactions: entries, messages: context.messages }
  return loaded
}

const hexId = (n) => n.toString(16).padStart(8, '0')

/** Tool-call ids of copy `r`: the originals for the first copy, then with a suffix. */
const callId = (id, r) => (r === 0 || typeof id !== 'string' ? id : `${id}_${r}`)

/** `message` with the tool-call ids of copy `r` (a shallow copy where one changes). */
function withCallIds(message, r) {
  if (r === 0 || !message || typeof message !== 'object') return message
  if (message.role === 'toolResult') return { ...message, toolCallId: callId(message.toolCallId, r) }
  if (message.role === 'assistant' && Array.isArray(message.content)) {
    return { ...message, content: message.content.map((b) => (b && b.type === 'toolCall' ? { ...b, id: callId(b.id, r) } : b)) }
  }
  return message
}

/**
 * JSON lines of the first `n` entries of the cycled session: fresh ids
 * counted from 1, a linear parent chain from the first (a compaction that
 * would come last is left out, and the next entry comes in its place).
 */
function* chain(body, n = body.length) {
  let next = 1
  let parent = null
  let made = 0
  for (let r = 0; made < n; r++) {
    const ids = new Map()
    for (const e of body) if (typeof e.id === 'string') ids.set(e.id, hexId(next + ids.size))
    for (const e of body) {
      if (made >= n) break
      // (a session that ends in a compaction has nothing to compact; the
      // id it would have had stays unused, so the copy's others stand)
      if (e.type === 'compaction' && made === n - 1) {
        next++
        continue
      }
      const id = hexId(next++)
      const copy = { ...e, id, parentId: parent }
      if (e.type === 'message') copy.message = withCallIds(e.message, r)
      if (e.type === 'branch_summary' && ids.has(e.fromId)) copy.fromId = ids.get(e.fromId)
      if (e.type === 'compaction' && ids.has(e.firstKeptEntryId)) copy.firstKeptEntryId = ids.get(e.firstKeptEntryId)
      made++
      parent = id
      yield JSON.stringify(copy)
    }
  }
}

/**
 * `n` real-shaped path entries (v3, linear), each parsed from its own JSON
 * line; with `compactions`, the source's compactions kept in every copy.
 */
export async function realEntries(n, { compactions = false } = {}) {
  const { entries, withCompactions } = await realSource()
  return Array.from(chain(compactions ? withCompactions : entries, n), (line) => JSON.parse(line))
}

/** Writes a real-shaped session file of `n` entries after the source's header; returns its path. */
export async function writeRealSessionFile(file, n) {
  const { header, entries } = await realSource()
  const fd = fs.openSync(file, 'w')
  try {
    let buf = [JSON.stringify({ ...header, version: 3 })]
    let size = 0
    for (const line of chain(entries, n)) {
      buf.push(line)
      size += line.length
      if (size > 1 << 22) {
        fs.writeSync(fd, `${buf.join('\n')}\n`)
        buf = []
        size = 0
      }
    }
    if (buf.length) fs.writeSync(fd, `${buf.join('\n')}\n`)
  } finally {
    fs.closeSync(fd)
  }
  return file
}

/**
 * `n` real-shaped messages: the agent's context messages of the source,
 * cycled (each copy with its own tool-call ids), each parsed from JSON.
 */
export async function realMessages(n) {
  const { messages } = await realSource()
  const out = []
  for (let r = 0; out.length < n; r++) {
    for (const m of messages) {
      if (out.length >= n) break
      out.push(JSON.parse(JSON.stringify(withCallIds(m, r))))
    }
  }
  return out
}

/**
 * The branch benchmarks' tree on the agent's own in-memory SessionManager:
 * a linear chain of `depth` real-shaped entries (the old branch), appended
 * with the SessionManager's own methods, and a target that forks off its
 * middle. The session's leaf is the old leaf. `SessionManager` is 0.78.1's
 * unless another line's is given.
 */
export async function realBranchSession(depth, SessionManager) {
  SessionManager ??= (await agentSessions()).SessionManager
  const entries = await realEntries(depth)
  const session = SessionManager.inMemory()
  const ids = []
  for (const e of entries) ids.push(appendEntry(session, e))
  const oldLeafId = ids[depth - 1]
  session.branch(ids[Math.floor(depth / 2)])
  const targetId = session.appendMessage({ role: 'user', content: [{ type: 'text', text: 'Let us try the other approach.' }], timestamp: Date.now() })
  session.branch(oldLeafId)
  return { session, oldLeafId, targetId }
}

/** Appends `e` at the session's leaf with the method the agent uses for its type. */
function appendEntry(session, e) {
  switch (e.type) {
    case 'message':
      return session.appendMessage(e.message)
    case 'model_change':
      return session.appendModelChange(e.provider, e.modelId)
    case 'thinking_level_change':
      return session.appendThinkingLevelChange(e.thinkingLevel)
    case 'custom_message':
      return session.appendCustomMessageEntry(e.customType, e.content, e.display, e.details)
    case 'branch_summary':
      return session.branchWithSummary(session.getLeafId(), e.summary, e.details, e.fromHook)
    case 'custom':
      return session.appendCustomEntry(e.customType, e.data)
    default:
      throw new Error(`no SessionManager method appends a ${e.type} entry`)
  }
}

/** Sizes as the tables print them. */
export const fmtInt = (n) => n.toLocaleString('en-US')

export { require }
