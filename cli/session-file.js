'use strict'
// Session files on the command line's side: reading one into entries the JS
// API takes, taking a branch, and appending a compaction entry so that the
// file is always either the old or the new complete session.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { sessionLineCutShort, compactionSystemMessage, agentLineIndex, agentLines } = require('../binding.js')

// The command plans as the newest agent line does (index.js), and writes its
// compaction entry as that line's agent writes one.
const LINE = agentLineIndex(agentLines().at(-1))

class CliError extends Error {}

/** The file's bytes, or a CliError saying why they can't be read. */
function readSessionBytes(file) {
  try {
    return fs.readFileSync(file)
  } catch (err) {
    const why = { ENOENT: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' }[err.code]
    throw new CliError(`cannot read session file ${file}: ${why || err.message}`)
  }
}

/**
 * Parses JSONL the way the agent's reader does (split on "\n", blank lines
 * skipped, a leading BOM ignored) but strictly: a malformed line, a
 * non-object entry, a missing header or a header older than version 3 is an
 * error naming the line. Except a line that starts an object and ends before it does (the
 * core's rule, crates/core/src/session/file.rs): an append cut short, left
 * out as the agent leaves it out.
 */
function parseSession(text, file) {
  const lines = text.split('\n')
  if (lines.length > 0 && lines[0].charCodeAt(0) === 0xfeff) lines[0] = lines[0].slice(1)
  let header
  const entries = []
  const lineOf = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (line.trim() === '') continue
    let value
    try {
      value = JSON.parse(line)
    } catch (err) {
      if (sessionLineCutShort(line)) continue
      throw new CliError(`${file}: line ${i + 1}: malformed JSON: ${err.message}`)
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new CliError(`${file}: line ${i + 1}: an entry must be a JSON object`)
    }
    if (header === undefined) {
      if (value.type !== 'session') throw new CliError(`${file}: line ${i + 1}: expected the session header ("type":"session") first`)
      if (!(value.version >= 3)) {
        throw new CliError(`${file}: line ${i + 1}: session version ${value.version ?? 1} is older than 3; open it once in the agent to migrate it`)
      }
      header = value
      continue
    }
    if (value.type === 'session') continue
    entries.push(value)
    lineOf.push(i + 1)
  }
  if (header === undefined) throw new CliError(`${file}: empty file, no session header`)
  return { header, entries, lineOf }
}

/**
 * The branch ending at `leafId` (default: the last entry), root first, the
 * way SessionManager.getBranch walks it. An unknown leaf id is an error.
 */
function takeBranch(session, leafId, file) {
  const byId = new Map()
  for (const entry of session.entries) byId.set(entry.id, entry)
  let leaf
  if (leafId !== undefined) {
    leaf = byId.get(leafId)
    if (!leaf) throw new CliError(`${file}: no entry has the id ${JSON.stringify(leafId)} (--leaf)`)
  } else {
    leaf = session.entries[session.entries.length - 1]
  }
  const branch = []
  const seen = new Set()
  for (let current = leaf; current; current = current.parentId ? byId.get(current.parentId) : undefined) {
    if (seen.has(current)) throw new CliError(`${file}: the parentId chain from ${JSON.stringify(leaf.id)} loops at ${JSON.stringify(current.id)}`)
    seen.add(current)
    branch.push(current)
  }
  branch.reverse()
  return { branch, leaf }
}

/** A fresh 8-hex-digit id that no entry has, as the agent makes them. */
function generateId(ids) {
  for (let i = 0; i < 100; i++) {
    const id = crypto.randomUUID().slice(0, 8)
    if (!ids.has(id)) return id
  }
  return crypto.randomUUID()
}

/**
 * The system message the session's context holds after the last of
 * `branch` (null for none), which a compaction entry keeps and the agent
 * restores from the entry alone. Made before the summary is asked for, so
 * that a session it cannot be made from costs no request.
 */
function branchSystemMessage(branch, file) {
  let json
  try {
    json = compactionSystemMessage(branch, 0, LINE)
  } catch (err) {
    throw new CliError(`${file}: the session's system message cannot be kept in a compaction entry: ${err.message}`)
  }
  return json === null ? null : JSON.parse(json)
}

/**
 * The compaction entry the agent's SessionManager.appendCompaction writes
 * as a child of `parentId` (its `usage`, and `systemMessage`, from
 * branchSystemMessage, stamped with the entry's time), plus customInstructions.
 */
function compactionEntry(result, session, parentId, systemMessage, now = new Date()) {
  const ids = new Set(session.entries.map((e) => e.id))
  const entry = {
    type: 'compaction',
    id: generateId(ids),
    parentId,
    timestamp: now.toISOString(),
    summary: result.summary,
    firstKeptEntryId: result.firstKeptEntryId,
    tokensBefore: result.tokensBefore,
    details: result.details,
    usage: result.usage,
    fromHook: false,
  }
  if (systemMessage !== null) entry.systemMessage = { ...systemMessage, timestamp: now.getTime() }
  if (result.customInstructions !== undefined) entry.customInstructions = result.customInstructions
  return entry
}

function fsyncDirectory(dir) {
  let fd
  try {
    fd = fs.openSync(dir, 'r')
    fs.fsyncSync(fd)
  } catch {
    // Some platforms (Windows) cannot open or sync a directory; the rename stands.
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * Appends `entry` as one JSONL line. A plain append can be cut short by a
 * kill or a full disk and leave half a line, so the new file is written
 * beside the old one, synced, and renamed over it: a reader (or a crash) sees
 * the old session or the new one, never a mix. `original` is the content the
 * entry was made from; if the file no longer holds exactly that (the agent
 * wrote to it meanwhile), nothing is written.
 */
function appendEntryAtomically(file, original, entry, onWriting) {
  const current = readSessionBytes(file)
  if (!current.equals(original)) {
    throw new CliError(`${file} changed while the summary was being made; nothing was appended (run the command again)`)
  }
  const mode = fs.statSync(file).mode & 0o7777
  const dir = path.dirname(file)
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`)
  const line = Buffer.from(`${JSON.stringify(entry)}\n`)
  const needsNewline = original.length > 0 && original[original.length - 1] !== 0x0a
  if (onWriting) onWriting(tmp, original.length + line.length)
  const fd = fs.openSync(tmp, 'wx', mode)
  try {
    writeAll(fd, original)
    if (needsNewline) writeAll(fd, Buffer.from('\n'))
    writeAll(fd, line)
    fs.fsyncSync(fd)
  } catch (err) {
    fs.closeSync(fd)
    fs.rmSync(tmp, { force: true })
    throw new CliError(`cannot write ${tmp}: ${err.message}`)
  }
  fs.closeSync(fd)
  try {
    fs.renameSync(tmp, file)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw new CliError(`cannot replace ${file}: ${err.message}`)
  }
  fsyncDirectory(dir)
}

function writeAll(fd, buffer) {
  const CHUNK = 1 << 20
  for (let offset = 0; offset < buffer.length; ) {
    offset += fs.writeSync(fd, buffer, offset, Math.min(CHUNK, buffer.length - offset))
  }
}

module.exports = { CliError, readSessionBytes, parseSession, takeBranch, branchSystemMessage, compactionEntry, appendEntryAtomically, generateId }
