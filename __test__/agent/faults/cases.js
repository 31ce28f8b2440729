'use strict'
// The faults the fault runs inject into the real agent, as data. A case is
// one operation (ops.js) with one fault:
//   - `reply`: what the scripted summarizer answers to the summary requests
//     numbered in `on` (0 is the operation's first), instead of a summary;
//     `persistent` answers every one of them so;
//   - `abortAfterMs`: the user aborts that long after the compaction started
//     (or the branch summary was asked for), the summary streaming slowly;
//   - `lines`: the agent lines the case runs on (all when absent);
//   - `killAfterMs`: the parent SIGKILLs the agent's process that long after
//     the first summary request arrived, the summary streaming slowly; with
//     `killAtEnd`, that long after the operation's last summary was sent,
//     while the agent turns it into an entry.
// `settings` go over the harness's (provider retries, timeouts).
//
// fullCases() is the `npm run faults` run; smallCases() the Jest subset.

const fs = require('node:fs')
const path = require('node:path')
const { mulberry32 } = require('../../../scripts/prng')

const ROOT = path.join(__dirname, '..', '..', '..')

/** How long a stalled request waits before the agent gives up (its HTTP idle timeout, as the CLI sets it). */
const STALL_TIMEOUT_MS = 1500
/** Slow summaries: this many pieces, this far apart, so aborts and kills land inside them. */
const SLOW = { pieces: 8, chunkDelayMs: 40 }

/**
 * Every provider's overflow message, from the table the core matches
 * (crates/core/src/summary/overflow.rs): `{ source, example }`.
 */
function overflowExamples() {
  const source = fs.readFileSync(path.join(ROOT, 'crates', 'core', 'src', 'summary', 'overflow.rs'), 'utf8')
  const table = source.slice(source.indexOf('pub const OVERFLOW_PATTERNS'), source.indexOf('pub const NOT_OVERFLOW_PATTERNS'))
  // A Rust string literal: r#"..."#, r"..." or "..." (three groups).
  const literal = String.raw`(?:r#"((?:[^"]|"(?!#))*)"#|r"([^"]*)"|"((?:[^"\\]|\\.)*)")`
  const entry = new RegExp(String.raw`OverflowPattern \{\s*source: ${literal},\s*pattern: ${literal},\s*example: ${literal},\s*\}`, 'g')
  const text = (m, i) => (m[i] !== undefined ? m[i] : m[i + 1] !== undefined ? m[i + 1] : JSON.parse(`"${m[i + 2]}"`))
  const out = [...table.matchAll(entry)].map((m) => ({ source: text(m, 1), example: text(m, 7) }))
  const declared = (table.match(/OverflowPattern \{/g) || []).length
  if (out.length === 0 || out.length !== declared) throw new Error(`overflow.rs: read ${out.length} of its ${declared} overflow patterns`)
  return out
}

const OPS = ['compact', 'auto', 'split', 'branch']

/** Malformed event streams: status 200, a body no provider should send. */
const MALFORMED = {
  'truncated-json': 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Par',
  'not-json': 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\ndata: this is not json\n\ndata: [DONE]\n\n',
  'no-data-field': '{"id":"c","choices":[{"index":0,"delta":{"content":"no field name"},"finish_reason":"stop"}]}\n\n',
  'done-first': 'data: [DONE]\n\n',
  'wrong-shape': 'data: {"id":"c","choices":"not an array"}\n\ndata: {"choices":[{"delta":42}]}\n\ndata: [DONE]\n\n',
  'invalid-utf8': Buffer.concat([
    Buffer.from('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"## Goal\\n'),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('"}}]}\n\ndata: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'),
  ]),
  'html-page': { raw: '<html><body><h1>502 Bad Gateway</h1></body></html>', contentType: 'text/html' },
}

function malformedReply(name) {
  const body = MALFORMED[name]
  return body && body.raw !== undefined ? { ...body } : { raw: body }
}

/** Resets: the connection dropped before the answer, or after its first k events. */
const RESETS = {
  'before-response': { destroy: true },
  'after-headers': { resetAfterChunks: 0 },
  'after-first-event': { resetAfterChunks: 1 },
  'mid-text': { resetAfterChunks: 2, sse: ['## Goal\n', 'Scripted summary cut ', 'short by the reset.'] },
  'before-done': { resetAfterChunks: 4, sse: ['## Goal\n', 'A summary whose stream loses only its last event.'] },
}

const STALLS = {
  'before-headers': { hang: true },
  'after-headers': { stallAfterChunks: 0 },
  'mid-stream': { stallAfterChunks: 2, sse: ['## Goal\n', 'A summary that stops ', 'and never resumes.'] },
}

/**
 * Finished answers with no text: the agent's own module stores one as the
 * summary; ours fails the attempt (the empty-answer difference).
 */
const EMPTY = {
  'empty text': { text: '' },
  whitespace: { text: ' \n\n ' },
  'no content': { sse: [] },
}

/** The agent's own retries (settings.retry): 1.6 retries a summary request that fails transiently, 0.78 never does. */
const SUMMARY_RETRIES = { enabled: true, maxRetries: 2, baseDelayMs: 10, provider: { maxRetries: 0 } }
/** A retry wait long enough for an abort to land in it. */
const RETRY_WAIT_MS = 1500

const SETTINGS = {
  noProviderRetries: { retry: { enabled: false, provider: { maxRetries: 0 } } },
  providerRetries: { retry: { enabled: false, provider: { maxRetries: 2, maxRetryDelayMs: 10_000 } } },
  stallTimeout: { retry: { enabled: false, provider: { maxRetries: 0 } }, httpIdleTimeoutMs: STALL_TIMEOUT_MS },
  summaryRetries: { retry: SUMMARY_RETRIES },
  summaryRetriesStallTimeout: { retry: SUMMARY_RETRIES, httpIdleTimeoutMs: STALL_TIMEOUT_MS },
  longRetryWait: { retry: { ...SUMMARY_RETRIES, baseDelayMs: RETRY_WAIT_MS } },
}

/** The summary request a fault hits: the turn prefix (the second) for split operations, so both parts get faults. */
const target = (op, n) => (op === 'split' || (op === 'compact' && n % 2 === 1) ? 1 : 0)

function httpCases() {
  const out = []
  OPS.forEach((op, n) => {
    out.push({ kind: 'http-500', name: `500/${op}`, op, on: [target(op, n)], reply: { status: 500, error: 'The server had an error while processing your request.' }, settings: SETTINGS.noProviderRetries })
  })
  const rateLimited = (headers) => ({ status: 429, error: 'Rate limit reached for requests per minute. Please try again later.', headers })
  OPS.forEach((op, n) => {
    out.push({ kind: 'http-429', name: `429 retry-after 1 s/${op}`, op, on: [target(op, n)], reply: rateLimited({ 'retry-after': '1' }), settings: SETTINGS.providerRetries })
    out.push({ kind: 'http-429', name: `429 retry-after-ms 50/${op}`, op, on: [target(op, n + 1)], reply: rateLimited({ 'retry-after-ms': '50' }), settings: SETTINGS.providerRetries })
    out.push({ kind: 'http-429', name: `429 retry-after 1 s, no provider retries/${op}`, op, on: [target(op, n)], reply: rateLimited({ 'retry-after': '1' }), settings: SETTINGS.noProviderRetries })
  })
  return out
}

function overflowCases() {
  const out = []
  overflowExamples().forEach(({ source, example }, i) => {
    // A status with no body is what the HTTP client itself words ("413 status code (no body)");
    // "X API error (413): ..." is how a client words a 413 answer, so the server answers 413.
    const bare = /^(\d{3}) status code \(no body\)$/.exec(example)
    const worded = /^[\w -]+ API error \((\d{3})\): (.*)$/.exec(example)
    const reply = bare ? { status: Number(bare[1]), noBody: true } : worded ? { status: Number(worded[1]), error: worded[2] } : { status: 400, error: example }
    for (const op of [OPS[i % 4], OPS[(i + 2) % 4]]) {
      out.push({ kind: 'overflow', name: `overflow ${source}/${op}`, op, on: [target(op, i)], reply, settings: SETTINGS.noProviderRetries })
    }
  })
  const persistent = 'This model\'s maximum context length is 6000 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.'
  for (const op of OPS) out.push({ kind: 'overflow', name: `overflow on every request/${op}`, op, on: [0], persistent: true, reply: { status: 400, error: persistent }, settings: SETTINGS.noProviderRetries })
  return out
}

function streamCases() {
  const out = []
  Object.keys(MALFORMED).forEach((name, i) => {
    for (const op of [OPS[i % 4], OPS[(i + 1) % 4]]) out.push({ kind: 'malformed-sse', name: `malformed SSE ${name}/${op}`, op, on: [target(op, i)], reply: malformedReply(name), settings: SETTINGS.noProviderRetries })
  })
  Object.entries(RESETS).forEach(([name, reply], i) => {
    for (const op of [OPS[i % 4], OPS[(i + 3) % 4]]) out.push({ kind: 'reset', name: `reset ${name}/${op}`, op, on: [target(op, i)], reply, settings: SETTINGS.noProviderRetries })
  })
  Object.entries(STALLS).forEach(([name, reply], i) => {
    for (const op of [OPS[i % 4], OPS[(i + 2) % 4]]) out.push({ kind: 'stall', name: `stall ${name}/${op}`, op, on: [target(op, i)], reply, settings: SETTINGS.stallTimeout })
  })
  return out
}

function emptyCases() {
  const out = []
  Object.entries(EMPTY).forEach(([name, reply], i) => {
    for (const op of [OPS[i % 4], OPS[(i + 1) % 4]]) out.push({ kind: 'empty-answer', name: `empty answer ${name}/${op}`, op, on: [target(op, i)], reply, settings: SETTINGS.noProviderRetries })
  })
  return out
}

/**
 * The same transient faults with the agent's own retries on: 1.6 sends the
 * request again and compacts, 0.78 fails as without them. And (1.6 only,
 * where a retry waits) the user aborting while the retry waits.
 */
function retriedCases() {
  const out = []
  const faults = {
    500: { reply: { status: 500, error: 'The server had an error while processing your request.' }, settings: SETTINGS.summaryRetries },
    '429 retry-after 1 s': { reply: { status: 429, error: 'Rate limit reached for requests per minute. Please try again later.', headers: { 'retry-after': '1' } }, settings: SETTINGS.summaryRetries },
    'reset mid-text': { reply: RESETS['mid-text'], settings: SETTINGS.summaryRetries },
    'malformed SSE done-first': { reply: malformedReply('done-first'), settings: SETTINGS.summaryRetries },
    'stall after-headers': { reply: STALLS['after-headers'], settings: SETTINGS.summaryRetriesStallTimeout },
  }
  Object.entries(faults).forEach(([name, { reply, settings }], i) => {
    for (const op of OPS) out.push({ kind: 'retried', name: `retried ${name}/${op}`, op, on: [target(op, i)], reply, settings })
  })
  for (const op of OPS) {
    out.push({
      kind: 'abort',
      name: `abort in the retry wait after a 500/${op}`,
      lines: ['1.6'],
      op,
      on: [target(op, 0)],
      reply: faults[500].reply,
      // The 500 comes back at once; the retry waits RETRY_WAIT_MS.
      abortAfterMs: 500,
      settings: SETTINGS.longRetryWait,
    })
  }
  return out
}

/** Aborts and kills at moments drawn from `seed`: `perOp` of each per operation. */
function timedCases(seed, perOp) {
  const rand = mulberry32(seed)
  const out = []
  for (const op of OPS) {
    for (let k = 0; k < perOp.abort; k++) {
      const ms = Math.floor(rand() * 450)
      out.push({ kind: 'abort', name: `abort after ${ms} ms/${op}`, op, abortAfterMs: ms, slow: SLOW, settings: SETTINGS.noProviderRetries })
    }
    for (let k = 0; k < perOp.kill; k++) {
      const ms = Math.floor(rand() * 350)
      out.push({ kind: 'kill', name: `SIGKILL ${ms} ms into the summary/${op}`, op, killAfterMs: ms, slow: SLOW, settings: SETTINGS.noProviderRetries })
    }
    for (let k = 0; k < perOp.killAtEnd; k++) {
      const ms = Math.floor(rand() * 6)
      out.push({ kind: 'kill', name: `SIGKILL ${ms} ms after the last summary/${op}`, op, killAfterMs: ms, killAtEnd: true, slow: SLOW, settings: SETTINGS.noProviderRetries })
    }
  }
  return out
}

/** The full run: every kind on every operation, each overflow message twice. */
function fullCases(seed = 20260601) {
  return [...httpCases(), ...overflowCases(), ...streamCases(), ...emptyCases(), ...retriedCases(), ...timedCases(seed, { abort: 6, kill: 5, killAtEnd: 3 })]
}

/** The cases of `cases` that `line` (a row of lines.js) runs: those that name no `lines`, and those that name it. */
const casesOf = (cases, line) => cases.filter((c) => !c.lines || c.lines.includes(line.line))

/**
 * The cases of `cases` that run on Bun: not those whose stall ends at the
 * agent's HTTP idle timeout, which the agent sets on undici's dispatcher
 * and Bun's fetch does not use (there the agent waits on a stalled stream,
 * with either module).
 */
const casesOnBun = (cases) => cases.filter((c) => c.settings?.httpIdleTimeoutMs === undefined)

/** The Jest subset: one case of each kind, the operations spread over them. */
function smallCases(seed = 20260601) {
  const all = fullCases(seed)
  const pick = (kind, op, match = '') => {
    const c = all.find((x) => x.kind === kind && x.op === op && x.name.includes(match))
    if (!c) throw new Error(`no ${kind} case on ${op} matching ${JSON.stringify(match)}`)
    return c
  }
  return [
    pick('http-500', 'compact'),
    pick('http-429', 'auto', 'retry-after-ms'),
    pick('overflow', 'compact', 'OpenAI'),
    pick('overflow', 'branch', 'every request'),
    pick('malformed-sse', 'branch'),
    pick('reset', 'split'),
    pick('stall', 'compact', 'mid-stream'),
    pick('empty-answer', 'compact'),
    pick('retried', 'split', 'reset'),
    pick('abort', 'auto', 'abort after'),
    pick('abort', 'branch', 'abort after'),
    pick('abort', 'compact', 'retry wait'),
    // Kills in the middle of a summary: one that lands as the entry is written
    // may come after the call by a millisecond, which would make the test flaky.
    pick('kill', 'compact', 'into'),
    pick('kill', 'branch', 'into'),
  ]
}

module.exports = { fullCases, smallCases, casesOf, casesOnBun, overflowExamples, STALL_TIMEOUT_MS, SLOW, OPS }
