'use strict'
// The calls the worker-thread test makes, the same in the main thread and in
// every worker: each job builds its input from its seed (cached per thread),
// calls one entry of the package and returns a digest of the result (JSON,
// long strings as length and SHA-256), so results made in different threads
// compare as strings.

const crypto = require('node:crypto')
const path = require('node:path')
const { buildLargeSession } = require('../helpers/generator')

const ROOT = path.join(__dirname, '..', '..')
const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 2000 }
const MODEL = { id: 'gpt-test', name: 'GPT test', api: 'openai-completions', provider: 'openai', baseUrl: 'http://127.0.0.1:1', reasoning: true, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096 }

function digest(value) {
  return JSON.stringify(value, (_key, v) => {
    if (v instanceof Set) return { set: [...v] }
    if (typeof v === 'string' && v.length > 200) return { length: v.length, sha256: crypto.createHash('sha256').update(v).digest('hex') }
    return v
  })
}

const entriesCache = new Map()
function session(seed, n) {
  const key = `${seed}/${n}`
  if (!entriesCache.has(key)) entriesCache.set(key, buildLargeSession(n, seed))
  return entriesCache.get(key)
}

const messagesOf = (entries) => entries.filter((e) => e.type === 'message').map((e) => e.message)

function planOf(p) {
  return p && { firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore, isSplitTurn: p.isSplitTurn, messages: p.messagesToSummarize.length, prefix: p.turnPrefixMessages.length, fileOps: p.fileOps, previousSummary: p.previousSummary }
}

/** A streamFn that answers after a few milliseconds, with a text that depends on the prompt. */
function streamFn(_model, context) {
  // 0.78 sends the prompt as a text block, 1.6 as a string.
  const content = context.messages[0].content
  const prompt = typeof content === 'string' ? content : content[0].text
  return new Promise((resolve) => {
    setTimeout(() => resolve({ result: async () => ({ role: 'assistant', content: [{ type: 'text', text: `## Goal\nsummary of ${prompt.length} chars ${crypto.createHash('sha256').update(prompt).digest('hex').slice(0, 16)}` }], stopReason: 'stop' }) }), 1 + (prompt.length % 3))
  })
}

/** A user's request and a write of a ~600k-unit file: Latin-1 for even seeds, with a snowman for odd ones. */
function longWrite(seed) {
  const content = (seed % 2 ? 'caf\u00e9 \u2603 "x"\n' : 'caf\u00e9 "x"\n').repeat(50_000)
  return [
    { role: 'user', content: `write ${seed}`, timestamp: 1 },
    { role: 'assistant', content: [{ type: 'toolCall', id: `w${seed}`, name: 'write', arguments: { path: 'a.ts', content } }], timestamp: 2 },
  ]
}

/**
 * The job kinds. `long` ones take tens of milliseconds, or (`async`) wait on
 * the libuv pool or on the streamFn's timers: the test terminates workers
 * inside them.
 */
const KINDS = {
  prepare: { long: false, run: (pc, j) => planOf(pc.prepareCompaction(session(j.seed, 1000), SETTINGS)) },
  prepareLong: { long: true, run: (pc, j) => planOf(pc.prepareCompaction(session(j.seed, 8000), SETTINGS)) },
  tokens: {
    long: false,
    run: (pc, j) => {
      const messages = messagesOf(session(j.seed, 1000))
      let sum = 0
      for (const m of messages) sum += pc.estimateTokens(m)
      return { sum, exact: pc.countTokens(messages.slice(0, 50).map((m) => JSON.stringify(m)).join('\n')), context: pc.estimateContextTokens(messages) }
    },
  },
  serialize: { long: false, run: (pc, j) => pc.serializeConversation(pc.convertToLlm(messagesOf(session(j.seed, 1000)))) },
  serializeForSummaryLong: { long: true, run: (pc, j) => pc.serializeForSummary(pc.convertToLlm(messagesOf(session(j.seed, 8000)))) },
  // Written whole (one buffer, then one string), and long: UTF-16 for one seed, Latin-1 for the other.
  transcriptWhole: { long: true, run: (pc, j) => pc.serializeForSummary(longWrite(j.seed)) },
  project: { long: false, run: (pc, j) => pc.projectForSummary(pc.convertToLlm(messagesOf(session(j.seed, 1000)))) },
  branch: { long: false, run: (pc, j) => pc.prepareBranchEntries(session(j.seed, 1000), 5000) },
  collect: {
    long: false,
    run: (pc, j) => {
      const entries = session(j.seed, 8000)
      const byId = new Map(entries.map((e) => [e.id, e]))
      const { entries: left, commonAncestorId } = pc.collectEntriesForBranchSummary({ getEntry: (id) => byId.get(id) }, entries.at(-1).id, entries[4000].id)
      return { ids: left.map((e) => e.id), commonAncestorId }
    },
  },
  compact: {
    long: true,
    async: true,
    run: async (pc, j) => pc.compact(pc.prepareCompaction(session(j.seed, 1000), { ...SETTINGS, keepRecentTokens: 300 }), MODEL, 'key', undefined, 'keep file names', undefined, undefined, streamFn),
  },
  fromFile: { long: true, async: true, run: (pc, j) => pc.prepareCompactionFromFile(j.file, { settings: SETTINGS }) },
  fromFileSync: { long: false, run: (pc, j) => pc.prepareCompactionFromFileSync(j.file, { settings: SETTINGS }) },
  transcriptFromFile: { long: true, async: true, run: (pc, j) => pc.serializeForSummaryFromFile(j.file, { settings: SETTINGS }) },
}

/** Every job: each kind on two seeds, for each agent line; `files` are the session files by seed. */
function jobList(lines, files) {
  const out = []
  for (const line of lines) {
    for (const [kind, spec] of Object.entries(KINDS)) {
      for (const seed of [11, 12]) out.push({ id: `${line}/${kind}/${seed}`, line, kind, seed, long: spec.long, async: Boolean(spec.async), file: files[seed] })
    }
  }
  return out
}

const loaded = new Map()
function packageFor(line) {
  if (!loaded.has(line)) loaded.set(line, require(path.join(ROOT, `agent-${line}.js`)))
  return loaded.get(line)
}

async function runJob(job) {
  return digest(await KINDS[job.kind].run(packageFor(job.line), job))
}

module.exports = { KINDS, jobList, runJob, digest }
