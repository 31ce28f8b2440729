'use strict'
// Differential soak: SOAK_SESSIONS generated sessions (and trees), each run
// through every function the package shares with the agent's own module,
// for every agent line (each with its own reference and its own kind of
// sessions), in worker processes. Off CI: the Jest
// parity suites run 2,000 sessions a run; this runs as many as asked.
//
//   SOAK_SESSIONS=1000000 npm run soak
//
// Environment:
//   SOAK_SESSIONS  sessions to run (default 10000)
//   SOAK_SEED      seed of the first session; session i uses SOAK_SEED + i (default: random)
//   SOAK_LINES     agent lines, comma-separated (default: every line, helpers/ours.js LINES)
//   SOAK_WORKERS   worker processes (default 2)
//   SOAK_FAILURES  folder for failing samples (default: a folder in the OS temp dir)
//   SOAK_OURS      a module whose loadOurs(line) replaces the package (to test the soak itself)
//   SOAK_STATE     a checkpoint file: the run saves its progress there after each chunk, and a
//                  run started with the same file and the same code goes on from it (state.js)
//
// Prints progress, then the calls made per function and line, and ends
// with the line `N passed, M failed` (sessions; a session fails when any
// line fails it). Exits 1 when any session failed.

const { fork } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LINES: ALL_LINES } = require('../helpers/ours')
const { failureSignature } = require('../helpers/property')
const { NOT_COMPARED } = require('./session-check')
const { buildHash, loadState, saveState } = require('./state')

const SESSIONS = Math.max(1, Number(process.env.SOAK_SESSIONS) || 10_000)
const SEED = process.env.SOAK_SEED !== undefined && process.env.SOAK_SEED !== '' ? Number(process.env.SOAK_SEED) | 0 : (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0
const LINES = process.env.SOAK_LINES ? process.env.SOAK_LINES.split(',').map((s) => s.trim()) : ALL_LINES
const WORKERS = Math.max(1, Number(process.env.SOAK_WORKERS) || 2)
const FAILURES = process.env.SOAK_FAILURES || path.join(os.tmpdir(), `prime-compaction-soak-${SEED >>> 0}`)
const STATE_FILE = process.env.SOAK_STATE ? path.resolve(process.env.SOAK_STATE) : null
/** A chunk that takes this long means a hang: its worker is killed and the chunk fails. */
const CHUNK_TIMEOUT_MS = 10 * 60_000
const PROGRESS_MS = 30_000
/** Failures kept with their messages (the rest are counted): the checkpoint stays small. */
const FAILURES_LISTED = 10_000

const started = Date.now()
const build = buildHash(process.env.SOAK_OURS)
const { state, resumed } = (() => {
  try {
    return loadState(STATE_FILE, { seed: SEED, sessions: SESSIONS, lines: LINES, build: build.hash })
  } catch (error) {
    process.stderr.write(`soak: ${error.message}\n`)
    process.exit(2)
  }
})()
state.chunk = state.chunk || Math.max(1, Math.min(200, Math.ceil(SESSIONS / (WORKERS * 4))))
const CHUNK = state.chunk
/** Offsets of the chunks a previous part of this run finished. */
const finished = new Set(state.done)
const sessionsBefore = state.passed + state.failed
let next = 0
const rss = new Map()
let shared = null

const fmt = (n) => n.toLocaleString('en-US')
const log = (text) => process.stdout.write(`${text}\n`)

function elapsed() {
  const s = Math.round((state.elapsedMs + Date.now() - started) / 1000)
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m${String(s % 60).padStart(2, '0')}s`
}

function progress() {
  const done = state.passed + state.failed
  const rate = (done - sessionsBefore) / Math.max(1, (Date.now() - started) / 1000)
  const eta = rate > 0 ? Math.round((SESSIONS - done) / rate / 60) : '?'
  log(`soak: ${fmt(done)} / ${fmt(SESSIONS)} sessions (${((100 * done) / SESSIONS).toFixed(1)}%), ${fmt(state.failed)} failed, ${rate.toFixed(0)}/s, ${elapsed()}, eta ${eta} min, worker RSS ${[...rss.values()].join('/')} MB`)
}

function takeChunk() {
  while (next < SESSIONS && finished.has(next)) next += CHUNK
  if (next >= SESSIONS) return null
  const count = Math.min(CHUNK, SESSIONS - next)
  const chunk = { id: next, start: (SEED + next) | 0, count }
  next += count
  return chunk
}

function addCounts(workerCounts) {
  for (const [line, byName] of Object.entries(workerCounts)) {
    state.counts[line] = state.counts[line] || {}
    for (const [name, n] of Object.entries(byName)) state.counts[line][name] = (state.counts[line][name] || 0) + n
  }
}

/** A chunk is over (run, or failed whole): it counts, and the checkpoint says so. */
function finishChunk(chunk, passedInChunk, chunkFailures, chunkCounts) {
  state.passed += passedInChunk
  state.failed += chunk.count - passedInChunk
  state.failures.push(...chunkFailures.slice(0, Math.max(0, FAILURES_LISTED - state.failures.length)))
  if (chunkCounts) addCounts(chunkCounts)
  state.done.push(chunk.id)
  finished.add(chunk.id)
  saveState(STATE_FILE, { ...state, elapsedMs: state.elapsedMs + Date.now() - started })
}

function startWorker(index) {
  return new Promise((resolve) => {
    const child = fork(path.join(__dirname, 'worker.js'), [JSON.stringify({ lines: LINES, failuresDir: FAILURES })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let chunk = null
    let timer = null
    let stopping = false
    const send = () => {
      chunk = takeChunk()
      if (!chunk) {
        stopping = true
        child.send({ type: 'stop' })
        return
      }
      timer = setTimeout(() => child.kill('SIGKILL'), CHUNK_TIMEOUT_MS)
      child.send({ type: 'chunk', ...chunk })
    }
    child.on('message', (msg) => {
      if (msg.type === 'ready') {
        shared = shared || msg.shared
        send()
      } else if (msg.type === 'done') {
        clearTimeout(timer)
        finishChunk(chunk, msg.passed, msg.failures, msg.counts)
        rss.set(index, msg.rssMb)
        chunk = null
        send()
      } else if (msg.type === 'fatal') {
        log(`soak: worker ${index} could not start: ${msg.message}`)
      }
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (chunk) {
        // The worker died or hung inside a chunk: every session of it counts as failed.
        finishChunk(chunk, 0, [{ seed: chunk.start, line: '*', message: `worker ${index} ${signal ? `killed by ${signal}` : `exited with ${code}`} in sessions ${chunk.start}..${(chunk.start + chunk.count - 1) | 0}` }])
        chunk = null
        if (next < SESSIONS) return resolve(startWorker(index))
      } else if (!stopping) {
        // Died before its first chunk (a load error): nothing was run by it.
        log(`soak: worker ${index} ${signal ? `killed by ${signal}` : `exited with ${code}`} before running anything`)
      }
      resolve()
    })
  })
}

/** Removes `dir` where it is an empty folder (the workers make the failures' folder up front). */
function removeIfEmpty(dir) {
  try {
    fs.rmdirSync(dir)
  } catch {
    // Not there, or not empty: left as it is.
  }
}

async function main() {
  // Samples a previous run with the same seed left behind would read as this run's
  // (a resumed run keeps its own).
  if (!resumed && fs.existsSync(FAILURES)) for (const name of fs.readdirSync(FAILURES)) if (/^soak-.*\.js$/.test(name)) fs.rmSync(path.join(FAILURES, name))
  log(`soak: ${fmt(SESSIONS)} sessions from seed ${SEED} on agent line(s) ${LINES.join(', ')}, ${WORKERS} worker(s); failing samples go to ${FAILURES}`)
  log(`soak: code checked: sha256 ${build.hash} over ${build.files} files`)
  if (resumed) log(`soak: resumed from ${STATE_FILE} (resume ${state.resumes}): ${fmt(state.passed + state.failed)} sessions done in ${elapsed()}`)
  else if (STATE_FILE) saveState(STATE_FILE, state)
  const timer = setInterval(progress, PROGRESS_MS)
  await Promise.all(Array.from({ length: WORKERS }, (_, i) => startWorker(i)))
  clearInterval(timer)
  progress()
  const unrun = SESSIONS - state.passed - state.failed
  let { passed, failed } = state
  const { failures, counts } = state
  if (unrun > 0) failed += unrun
  for (const line of LINES) {
    log(`soak: calls compared on ${line}: ${JSON.stringify(counts[line] || {})}`)
    if (shared && shared[line]) {
      const notReached = shared[line].filter((name) => !(counts[line] && counts[line][name]) && !(name in NOT_COMPARED))
      for (const [name, why] of Object.entries(NOT_COMPARED)) if (shared[line].includes(name)) log(`soak: not compared on ${line}: ${name} (${why})`)
      if (notReached.length) log(`soak: shared with the reference on ${line} but not reached: ${notReached.join(', ')}`)
    }
  }
  const kinds = new Map()
  for (const f of failures) {
    // The call and the place of the difference, without the values.
    const head = f.message.split('\n')[0].split(' reference ')[0]
    const kind = `${f.line}: ${failureSignature({ message: head })}`
    kinds.set(kind, [...(kinds.get(kind) || []), f.seed])
  }
  for (const [kind, seeds] of [...kinds].sort((a, b) => b[1].length - a[1].length)) {
    log(`soak: FAILED ${fmt(seeds.length)} × ${kind} (seeds ${seeds.slice(0, 5).join(', ')}${seeds.length > 5 ? ', ...' : ''})`)
  }
  if (failures.length) log(`soak: failing samples, with the command to replay each: ${FAILURES}`)
  else if (!process.env.SOAK_FAILURES) removeIfEmpty(FAILURES)
  if (failures.length === FAILURES_LISTED) log(`soak: only the first ${fmt(FAILURES_LISTED)} failures are listed above`)
  if (unrun > 0) log(`soak: ${fmt(unrun)} sessions were not run (a worker could not start), counted as failed`)
  log(`soak: ${elapsed()}${state.resumes ? `, in ${state.resumes + 1} parts (resumed from ${STATE_FILE})` : ''}`)
  log(`${passed} passed, ${failed} failed`)
  process.exitCode = failed > 0 ? 1 : 0
}

main()
