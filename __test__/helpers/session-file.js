'use strict'
// Session files for the file-reading tests and benchmark: a small seeded
// generator of pi v3 JSONL (header, then entries with id/parentId), with
// branches (an entry now and then continues from an older one), compactions,
// branch summaries, custom messages, tool calls and results, bash runs, and
// unicode including lone surrogates (JSON.stringify writes them as \udxxx
// escapes, which strict JSON parsers reject but JSON.parse accepts).
//
// Also the reference side of the comparison: the file read the way the agent
// reads it (parseSessionEntries + migrateSessionEntries), the branch taken
// the way SessionManager.getBranch takes it, and the reference's
// prepareCompaction result reduced to the shape prepareCompactionFromFile returns.

const fs = require('node:fs')

const { mulberry32 } = require('../../scripts/prng')

const WORDS = ['the', 'file', 'function', 'returns', 'error', 'test', 'build', 'cargo', 'node', 'fix', 'value', 'line',
  'héllo', 'naïve', '日本語', '你好', '한국어', 'emoji😀', '𝄞clef', 'tab\there', 'quote"d', 'back\\slash', 'nl\nline',
  'crlf\r\nline', '\u2028sep', 'nul\u0000', 'lone\ud83d', 'low\ude00', 'pair\ud83d\ude00']
const PATHS = ['src/main.rs', 'src/lib.rs', 'README.md', 'docs/日本.md', 'a b/c.txt', 'src/😀.ts', 'x/lone\udc00.js', 'package.json']

function makeRng(seed) {
  const next = mulberry32(seed)
  const r = {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
    text(words) {
      const out = []
      for (let i = 0; i < words; i++) out.push(r.pick(WORDS))
      return out.join(' ')
    },
  }
  return r
}

/**
 * Generates a session as an array of JSON lines (no newlines).
 * options: seed, entries (count, after the header), words (mean words per text),
 * branchChance, compactionChance, danglingChance (a parentId that names no entry).
 */
function generateSessionLines(options = {}) {
  const lines = []
  writeSession(options, (line) => lines.push(line))
  return lines
}

function writeSession(options, emit) {
  const { seed = 1, entries = 100, words = 30, branchChance = 0.03, compactionChance = 0.02, danglingChance = 0.002 } = options
  const rng = makeRng(seed)
  let t = Date.UTC(2025, 0, 1)
  const stamp = () => new Date((t += 1000 + rng.int(60000))).toISOString()
  emit(JSON.stringify({ type: 'session', version: 3, id: `sess-${seed}`, timestamp: stamp(), cwd: '/home/dev/π' }))
  const ids = []
  let leaf = null
  let callSeq = 0
  const pendingCalls = []
  for (let n = 0; n < entries; n++) {
    const id = `e${seed.toString(36)}-${n.toString(36)}${rng.chance(0.01) ? '\ud800' : ''}`
    let parentId = leaf
    if (ids.length > 3 && rng.chance(branchChance)) parentId = rng.pick(ids)
    if (ids.length > 0 && rng.chance(danglingChance)) parentId = 'dangling-parent'
    const base = { id, parentId, timestamp: stamp() }
    const roll = rng.next()
    let entry
    if (roll < compactionChance && ids.length > 2) {
      entry = {
        type: 'compaction', ...base,
        summary: rng.chance(0.9) ? `Summary: ${rng.text(words)}` : undefined,
        firstKeptEntryId: rng.chance(0.8) ? rng.pick(ids) : 'missing-id',
        tokensBefore: rng.int(100000),
        details: rng.chance(0.7) ? { readFiles: [rng.pick(PATHS)], modifiedFiles: [rng.pick(PATHS)] } : undefined,
        fromHook: rng.chance(0.1) ? true : undefined,
      }
    } else if (roll < 0.05) {
      entry = { type: 'branch_summary', ...base, fromId: rng.pick(ids.length ? ids : ['root']), summary: rng.text(words) }
    } else if (roll < 0.08) {
      entry = {
        type: 'custom_message', ...base, customType: 'note',
        content: rng.chance(0.5) ? rng.text(words) : [{ type: 'text', text: rng.text(words) }],
        display: rng.chance(0.5), details: rng.chance(0.3) ? { k: 1 } : undefined,
      }
    } else if (roll < 0.1) {
      entry = rng.chance(0.5)
        ? { type: 'model_change', ...base, provider: 'anthropic', modelId: 'claude-x' }
        : { type: 'thinking_level_change', ...base, thinkingLevel: 'high' }
    } else if (roll < 0.12) {
      entry = {
        type: 'message', ...base,
        message: {
          role: 'bashExecution', command: `ls ${rng.pick(PATHS)}`, output: rng.text(words), exitCode: rng.int(3),
          cancelled: false, truncated: rng.chance(0.2), fullOutputPath: '/tmp/out.txt', timestamp: t,
          excludeFromContext: rng.chance(0.2) || undefined,
        },
      }
    } else if (roll < 0.35) {
      entry = { type: 'message', ...base, message: { role: 'user', content: rng.chance(0.5) ? rng.text(words) : [{ type: 'text', text: rng.text(words) }], timestamp: t } }
    } else if (roll < 0.7 || pendingCalls.length === 0) {
      const content = []
      if (rng.chance(0.4)) content.push({ type: 'thinking', thinking: rng.text(words), ...(rng.chance(0.1) ? { redacted: true } : {}) })
      if (rng.chance(0.7)) content.push({ type: 'text', text: rng.text(words) })
      const calls = rng.int(3)
      for (let c = 0; c < calls; c++) {
        const name = rng.pick(['read', 'write', 'edit', 'bash', 'grep'])
        const callId = `call_${++callSeq}`
        pendingCalls.push({ callId, name })
        content.push({
          type: 'toolCall', id: callId, name,
          arguments: name === 'bash' ? { command: rng.text(3) } : { path: rng.pick(PATHS), ...(name === 'write' ? { content: rng.text(words) } : {}) },
        })
      }
      entry = {
        type: 'message', ...base,
        message: {
          role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'claude-x',
          usage: { input: rng.int(50000), output: rng.int(2000), cacheRead: rng.int(1000), cacheWrite: 0, totalTokens: rng.int(60000), cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
          stopReason: calls > 0 ? 'toolUse' : rng.pick(['stop', 'stop', 'error', 'aborted']),
          timestamp: t,
        },
      }
    } else {
      const call = pendingCalls.shift()
      entry = {
        type: 'message', ...base,
        message: {
          role: 'toolResult', toolCallId: call.callId, toolName: call.name,
          content: [{ type: 'text', text: rng.text(words * 2) }], isError: rng.chance(0.1), timestamp: t,
        },
      }
    }
    emit(JSON.stringify(entry))
    ids.push(id)
    leaf = id
  }
  return ids
}

/** Writes a generated session to `path` (streamed, so 100k entries stay cheap). */
function writeSessionFile(path, options = {}) {
  const { crlf = false, blankLines = false } = options
  const fd = fs.openSync(path, 'w')
  let buf = []
  let size = 0
  const eol = crlf ? '\r\n' : '\n'
  const flush = () => {
    fs.writeSync(fd, buf.join(''))
    buf = []
    size = 0
  }
  let ids
  try {
    ids = writeSession(options, (line) => {
      buf.push(line, eol)
      if (blankLines && line.length % 7 === 0) buf.push(eol, '  \t', eol)
      size += line.length
      if (size > 1 << 22) flush()
    })
    flush()
  } finally {
    fs.closeSync(fd)
  }
  return ids
}

/** `SessionManager.getBranch(leafId)` over `parseSessionEntries` output. */
function referenceBranch(fileEntries, leafId) {
  const byId = new Map()
  let last = null
  for (const entry of fileEntries) {
    if (entry.type === 'session') continue
    byId.set(entry.id, entry)
    last = entry.id
  }
  const path = []
  const startId = leafId ?? last
  let current = startId ? byId.get(startId) : undefined
  while (current) {
    path.unshift(current)
    current = current.parentId ? byId.get(current.parentId) : undefined
  }
  return path
}

function matches(entry, msg) {
  switch (entry.type) {
    case 'message':
      return entry.message === msg
    case 'custom_message':
      return msg.role === 'custom' && msg.content === entry.content && msg.customType === entry.customType
    case 'branch_summary':
      return msg.role === 'branchSummary' && msg.summary === entry.summary && msg.fromId === entry.fromId
    default:
      return false
  }
}

/** The ids of the consecutive message-yielding branch entries that produced `messages`, from `from` on. */
function idsOfMessages(branch, messages, from = 0) {
  if (messages.length === 0) return { ids: [], end: from }
  const yielding = []
  for (let i = 0; i < branch.length; i++) {
    if (['message', 'custom_message', 'branch_summary'].includes(branch[i].type)) yielding.push(i)
  }
  for (let p = 0; p + messages.length <= yielding.length; p++) {
    if (yielding[p] < from) continue
    if (messages.every((m, k) => matches(branch[yielding[p + k]], m))) {
      return { ids: messages.map((_, k) => branch[yielding[p + k]].id), end: yielding[p + messages.length - 1] + 1 }
    }
  }
  throw new Error('could not map the reference messages back onto branch entries')
}

/** The reference's plan for a file, in prepareCompactionFromFile's shape. */
function referencePlanFromFile(ref, path, { leafId, settings = ref.DEFAULT_COMPACTION_SETTINGS } = {}) {
  const entries = ref.parseSessionEntries(fs.readFileSync(path, 'utf8'))
  ref.migrateSessionEntries(entries)
  const branch = referenceBranch(entries, leafId)
  const prep = ref.prepareCompaction(branch, settings)
  if (prep === undefined) return { plan: undefined, prep, branch }
  const summarized = idsOfMessages(branch, prep.messagesToSummarize)
  const prefix = idsOfMessages(branch, prep.turnPrefixMessages, summarized.end)
  const plan = {
    firstKeptEntryId: prep.firstKeptEntryId,
    tokensBefore: prep.tokensBefore,
    isSplitTurn: prep.isSplitTurn,
    messagesToSummarizeIds: summarized.ids,
    turnPrefixIds: prefix.ids,
    fileOps: { read: [...prep.fileOps.read], written: [...prep.fileOps.written], edited: [...prep.fileOps.edited] },
    previousSummary: prep.previousSummary,
  }
  return { plan, prep, branch }
}

module.exports = { generateSessionLines, writeSessionFile, referenceBranch, referencePlanFromFile, makeRng }
