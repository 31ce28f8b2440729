'use strict'
// Session files on the command line's side: reading one into entries the JS
// API takes, taking a branch, and appending a compaction entry so that the
// file is always either the old or the new complete session.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { sessionFileBranch, planSessionBytes, compactionSystemMessage, agentLineIndex, agentLines } = require('../binding.js')

// The command plans as the newest agent line does (index.js), and writes its
// compaction entry as that line's agent writes one.
const LINE = agentLineIndex(agentLines().at(-1))

class CliError extends Error {}

// The most readFileSync reads of a regular file (2 GiB): a pipe or a device
// is read up to as much, so an endless one (/dev/zero) is an error too.
const MAX_FILE_BYTES = 2 ** 31 - 1

/** The file's bytes, or a CliError saying why they can't be read. */
function readSessionBytes(file) {
  let fd
  try {
    fd = fs.openSync(file, 'r')
    return fs.fstatSync(fd).isFile() ? fs.readFileSync(fd) : readToEnd(fd, file)
  } catch (err) {
    if (err instanceof CliError) throw err
    const why = { ENOENT: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' }[err.code]
    throw new CliError(`cannot read session file ${file}: ${why || err.message}`)
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** What a pipe or a device gives until its end, at most MAX_FILE_BYTES. */
function readToEnd(fd, file) {
  const parts = []
  let total = 0
  for (;;) {
    const part = Buffer.allocUnsafe(1 << 20)
    const n = fs.readSync(fd, part, 0, part.length, null)
    if (n === 0) return Buffer.concat(parts, total)
    total += n
    if (total > MAX_FILE_BYTES) throw new CliError(`cannot read session file ${file}: more than 2 GiB`)
    parts.push(part.subarray(0, n))
  }
}

/**
 * prepareCompactionFromFile's plan of the session file `bytes` (as the file
 * `file` gave them), where a `leafId` no entry has is an error.
 */
function planBytes(bytes, file, options) {
  try {
    return planSessionBytes(bytes, file, options, LINE)
  } catch (err) {
    throw new CliError(err.message)
  }
}

/**
 * The branch of the session file `bytes` ending at `leafId` (default: the
 * last entry), root first, with every entry's id and the file line of each
 * of the branch's entries. The core reads the file by the rules
 * prepareCompactionFromFile reads it by (a malformed line, a missing or old
 * header, a non-object entry, a cycle or an unknown leaf is an error naming
 * the file and line; an append cut short is left out) and says which lines
 * the branch is; only those lines are decoded and parsed here, into the
 * objects the JS API takes.
 */
function readBranch(bytes, file, leafId) {
  let found
  try {
    found = sessionFileBranch(bytes, file, leafId)
  } catch (err) {
    throw new CliError(err.message)
  }
  const branch = new Array(found.lines.length)
  // Lines are found in file order; a branch's entries mostly come in it too.
  const order = found.lines.map((_, i) => i).sort((a, b) => found.lines[a] - found.lines[b])
  let line = 1
  let start = 0
  for (const i of order) {
    for (; line < found.lines[i]; line++) start = bytes.indexOf(0x0a, start) + 1
    const end = bytes.indexOf(0x0a, start)
    const text = bytes.toString('utf8', start, end === -1 ? bytes.length : end)
    // Line 1 may open with a byte-order mark, which the core reads past.
    branch[i] = JSON.parse(line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  }
  return { branch, leaf: branch.at(-1), ids: new Set(found.ids), lines: found.lines }
}

/**
 * `err`, thrown by the JS API for `branch`, as a CliError: a message naming
 * one of the branch's entries (`pathEntries[3].message.role: ...`) names
 * its file line instead, as prepareCompactionFromFile's messages do.
 * `what` (if given) says what failed, after the place.
 */
function entryError(err, file, lines, what = '') {
  const message = err && typeof err.message === 'string' ? err.message : String(err)
  const named = /^pathEntries\[(\d+)\](?:\.|: )?/.exec(message)
  const line = named ? lines[Number(named[1])] : undefined
  if (line === undefined) return new CliError(`${file}: ${what}${message}`)
  return new CliError(`${file}: line ${line}: ${what}${message.slice(named[0].length)}`)
}

/**
 * `err`, thrown by compact() or buildSummaryRequests() for `preparation`
 * (planned on `branch`), as a CliError: a message naming one of its
 * messages (`preparation.messagesToSummarize[1].content: ...`) names the
 * file line of the entry that holds it instead, as the planner's do.
 */
function messageError(err, file, { branch, lines }, preparation) {
  const message = err && typeof err.message === 'string' ? err.message : String(err)
  const named = /^preparation\.(messagesToSummarize|turnPrefixMessages)\[(\d+)\](\.|: )?/.exec(message)
  const held = named ? preparation[named[1]][Number(named[2])] : undefined
  const at = held === undefined ? -1 : branch.findIndex((e) => e !== null && typeof e === 'object' && e.message === held)
  if (at < 0 || lines[at] === undefined) return undefined
  return new CliError(`${file}: line ${lines[at]}: message${named[3] === '.' ? '.' : ': '}${message.slice(named[0].length)}`)
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
function branchSystemMessage({ branch, lines }, file) {
  let json
  try {
    json = compactionSystemMessage(branch, 0, LINE)
  } catch (err) {
    throw entryError(err, file, lines, "the session's system message cannot be kept in a compaction entry: ")
  }
  return json === null ? null : JSON.parse(json)
}

/**
 * The compaction entry the agent's SessionManager.appendCompaction writes
 * as a child of `parentId` (its `usage`, and `systemMessage`, from
 * branchSystemMessage, stamped with the entry's time), plus customInstructions.
 */
function compactionEntry(result, ids, parentId, systemMessage, now = new Date()) {
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
 * wrote to it meanwhile), nothing is written, and if its size, time or inode
 * changed while the new file was written, that file is removed. Returns the
 * file written (a symbolic link's target).
 */
function appendEntryAtomically(link, original, entry, onWriting) {
  // A symbolic link stays one: the file it points to gets the new content.
  let file
  try {
    file = fs.realpathSync(link)
  } catch (err) {
    throw new CliError(`cannot read session file ${link}: ${err.message}`)
  }
  const current = readSessionBytes(file)
  if (!current.equals(original)) {
    throw new CliError(`${file} changed while the summary was being made; nothing was appended (run the command again)`)
  }
  const stat = fs.statSync(file)
  const mode = stat.mode & 0o7777
  const dir = path.dirname(file)
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`)
  const line = Buffer.from(`${JSON.stringify(entry)}\n`)
  const needsNewline = original.length > 0 && original[original.length - 1] !== 0x0a
  if (onWriting) onWriting(tmp, original.length + line.length)
  let fd
  try {
    fd = fs.openSync(tmp, 'wx', mode)
  } catch (err) {
    throw new CliError(`cannot write ${tmp}: ${err.message}`)
  }
  try {
    // The new file keeps the old one's owner where this process may give it (as root).
    if (stat.uid !== process.getuid?.() || stat.gid !== process.getgid?.()) {
      try {
        fs.fchownSync(fd, stat.uid, stat.gid)
      } catch {}
    }
    // The mode as it was: open's is masked by the umask (and a chown clears set-id bits).
    fs.fchmodSync(fd, mode)
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
  // Writing a large session takes a while: the agent may have appended
  // meanwhile, which the rename would drop. Looked at again just before it.
  let now
  try {
    now = fs.statSync(file)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw new CliError(`cannot read session file ${file}: ${err.message}`)
  }
  if (now.size !== original.length || now.mtimeMs !== stat.mtimeMs || now.ino !== stat.ino) {
    fs.rmSync(tmp, { force: true })
    throw new CliError(`${file} changed while the new file was being written; nothing was appended (run the command again)`)
  }
  try {
    fs.renameSync(tmp, file)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw new CliError(`cannot replace ${file}: ${err.message}`)
  }
  fsyncDirectory(dir)
  return file
}

function writeAll(fd, buffer) {
  const CHUNK = 1 << 20
  for (let offset = 0; offset < buffer.length; ) {
    offset += fs.writeSync(fd, buffer, offset, Math.min(CHUNK, buffer.length - offset))
  }
}

module.exports = { CliError, readSessionBytes, planBytes, readBranch, entryError, messageError, branchSystemMessage, compactionEntry, appendEntryAtomically }
