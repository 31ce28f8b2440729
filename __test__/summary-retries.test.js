'use strict'
// Transient failures of summary requests in the 1.6 line, against 1.6.0's
// own module and pi-ai 1.6's classifier: the sequences of retries and
// callbacks (their arguments and order), exhaustion, aborts while waiting
// and while calling, and every message of a generated corpus classified as
// pi-ai classifies it. Retry delays are a few milliseconds.

const path = require('node:path')
const { pathToFileURL } = require('node:url')
const fc = require('fast-check')
const native = require('../binding.js')
const { loadReference, PKG_DIRS } = require('./helpers/reference')
const { loadOurs } = require('./helpers/ours')
const { MODEL, text, failure, scripted, recorder, plainPreparation, splitPreparation, branchEntries, sides } = require('./helpers/summary')

const policy = (maxRetries, baseDelayMs = 1) => ({ enabled: true, maxRetries, baseDelayMs })

let ref
let ours
let piAiRetry
beforeAll(async () => {
  ref = await loadReference('1.6')
  ours = await loadOurs('1.6')
  const retryJs = path.join(PKG_DIRS['1.6'], 'node_modules', '@earendil-works', 'pi-ai', 'dist', 'utils', 'retry.js')
  piAiRetry = await import(pathToFileURL(retryJs).href)
})

/** Each implementation's compact() outcome and callback log for the same script. */
async function both(run) {
  const out = {}
  for (const [name, impl] of sides(ref, ours)) {
    const callbacks = recorder()
    let outcome
    try {
      outcome = { resolved: await run(impl, callbacks) }
    } catch (err) {
      outcome = { rejected: err.message }
    }
    out[name] = { ...outcome, log: callbacks.log }
  }
  return out
}

function compactWith(script, retry, prep = plainPreparation, signal) {
  return async (impl, callbacks) => {
    const streamFn = scripted(script)
    const result = await impl.compact(prep(ref), MODEL, 'k', undefined, undefined, signal, undefined, streamFn, undefined, retry, callbacks)
    callbacks.log.push(['calls', streamFn.calls.length])
    return result
  }
}

/** recorder() whose onRetryScheduled, once it has recorded, calls `then()`. */
function recorderThen(then) {
  const callbacks = recorder()
  const scheduled = callbacks.onRetryScheduled
  callbacks.onRetryScheduled = async (...args) => {
    await scheduled(...args)
    then()
  }
  return callbacks
}

/**
 * Each side's callback log (and rejection, if any) for compact() whose one
 * request answers `answer`, each retry wait aborted as soon as it is
 * scheduled: only the delays are of interest.
 */
async function firstSchedules(answer, retry) {
  const out = {}
  for (const [name, impl] of sides(ref, ours)) {
    const controller = new AbortController()
    const callbacks = recorderThen(() => controller.abort())
    const result = await impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, controller.signal, undefined, scripted([answer]), undefined, retry, callbacks).catch((err) => ({ rejected: err.message }))
    out[name] = { log: callbacks.log, rejected: result.rejected }
  }
  return out
}

describe('compact(): the sequences pi-ai runs', () => {
  test('"terminated", then "socket hang up", then a summary', async () => {
    const out = await both(compactWith([failure('terminated'), failure('socket hang up'), text('OK')], policy(3, 5)))
    expect(out.ours.log).toStrictEqual([
      ['scheduled', 1, 3, 5, 'terminated'],
      ['attemptStart'],
      ['scheduled', 2, 3, 10, 'socket hang up'],
      ['attemptStart'],
      ['finished', true, 2],
      ['calls', 3],
    ])
    expect(out.ours.log).toStrictEqual(out.ref.log)
    expect(out.ours.resolved.summary).toBe(out.ref.resolved.summary)
    expect(out.ours.resolved.summary.startsWith('OK')).toBe(true)
  })

  test('"insufficient_quota 429": one call, no callbacks, the error', async () => {
    const out = await both(compactWith([failure('insufficient_quota 429'), text('never')], policy(3)))
    expect(out.ours).toStrictEqual({ rejected: 'Summarization failed: insufficient_quota 429', log: [] })
    expect(out.ref).toStrictEqual({ rejected: 'Summarization failed: insufficient_quota 429', log: [] })
  })

  test('exhaustion: "overloaded" every time with maxRetries 2', async () => {
    const out = await both(compactWith([failure('overloaded'), failure('overloaded'), failure('overloaded'), text('never')], policy(2, 5)))
    expect(out.ours.log).toStrictEqual([
      ['scheduled', 1, 2, 5, 'overloaded'],
      ['attemptStart'],
      ['scheduled', 2, 2, 10, 'overloaded'],
      ['attemptStart'],
      ['finished', false, 2, 'overloaded'],
    ])
    expect(out.ours).toStrictEqual(out.ref)
    expect(out.ours.rejected).toBe('Summarization failed: overloaded')
  })

  test('a different, deterministic error after a retry ends it with that error', async () => {
    const out = await both(compactWith([failure('terminated'), failure('Invalid API key'), text('never')], policy(3)))
    expect(out.ours.log).toStrictEqual([['scheduled', 1, 3, 1, 'terminated'], ['attemptStart'], ['finished', false, 1, 'Invalid API key']])
    expect(out.ours).toStrictEqual(out.ref)
  })

  test('a split turn retries each request on its own', async () => {
    const script = [failure('terminated'), text('H'), failure('502 Bad Gateway'), failure('fetch failed'), text('P')]
    const out = await both(compactWith(script, policy(3), splitPreparation))
    expect(out.ours.log).toStrictEqual([
      ['scheduled', 1, 3, 1, 'terminated'],
      ['attemptStart'],
      ['finished', true, 1],
      ['scheduled', 1, 3, 1, '502 Bad Gateway'],
      ['attemptStart'],
      ['scheduled', 2, 3, 2, 'fetch failed'],
      ['attemptStart'],
      ['finished', true, 2],
      ['calls', 5],
    ])
    expect(out.ours.log).toStrictEqual(out.ref.log)
    expect(out.ours.resolved.summary).toBe(out.ref.resolved.summary)
  })

  test('no policy, or a disabled one: the first error fails', async () => {
    for (const retry of [undefined, { enabled: false, maxRetries: 3, baseDelayMs: 1 }]) {
      const out = await both(compactWith([failure('terminated'), text('never')], retry))
      expect(out.ours).toStrictEqual({ rejected: 'Summarization failed: terminated', log: [] })
      expect(out.ours).toStrictEqual(out.ref)
    }
  })

  test('a throwing streamFn rejects with its own error and is not retried', async () => {
    const out = await both(compactWith([new Error('socket closed by the test'), text('never')], policy(3)))
    expect(out.ours).toStrictEqual({ rejected: 'socket closed by the test', log: [] })
    expect(out.ours).toStrictEqual(out.ref)
  })

  test('the delay: doubling, a product that is no safe integer counts as MAX_SAFE_INTEGER, then the cap', async () => {
    for (const retry of [policy(3, 2.5), { enabled: true, maxRetries: 3, baseDelayMs: 40, maxAgentDelayMs: 50 }, { enabled: true, maxRetries: 3 }]) {
      const delays = await firstSchedules(failure('overloaded'), retry)
      expect(delays.ours).toStrictEqual(delays.ref)
    }
  })
})

describe("the server's asked delay (`retryAfterMs`, which the CLI's requests set from Retry-After): ours only", () => {
  /** firstSchedules of a 429 answer with these extra fields. */
  const firstStep = (extra, retry = policy(3, 7)) => firstSchedules(Object.defineProperties(failure('429 Too many requests'), Object.getOwnPropertyDescriptors(extra)), retry)

  test("a number is the wait; none, or not a number, leaves the policy's delay", async () => {
    const asked = await firstStep({ retryAfterMs: 20 })
    expect(asked.ours.log[0]).toStrictEqual(['scheduled', 1, 3, 20, '429 Too many requests'])
    // The agent's own module never reads it.
    expect(asked.ref.log[0]).toStrictEqual(['scheduled', 1, 3, 7, '429 Too many requests'])
    for (const retryAfterMs of [undefined, '20', NaN, Infinity, null]) {
      const out = await firstStep({ retryAfterMs })
      expect(out.ours.log).toStrictEqual(out.ref.log)
    }
    expect((await firstStep({ retryAfterMs: -3 })).ours.log[0]).toStrictEqual(['scheduled', 1, 3, 0, '429 Too many requests'])
  })

  test('over the cap (maxAgentDelayMs, 60 s unless given): no retry, the failure as it is', async () => {
    const out = await firstStep({ retryAfterMs: 60_001 })
    expect(out.ours).toStrictEqual({ log: [], rejected: 'Summarization failed: 429 Too many requests' })
    expect((await firstStep({ retryAfterMs: 60_000 })).ours.log[0]).toStrictEqual(['scheduled', 1, 3, 60_000, '429 Too many requests'])
    const capped = { enabled: true, maxRetries: 3, baseDelayMs: 7, maxAgentDelayMs: 50 }
    expect((await firstStep({ retryAfterMs: 51 }, capped)).ours.log).toStrictEqual([])
    expect((await firstStep({ retryAfterMs: 50 }, capped)).ours.log[0]).toStrictEqual(['scheduled', 1, 3, 50, '429 Too many requests'])
  })

  test("read only when a retry is due; what its getter throws is the call's error", async () => {
    const reads = []
    const getter = (value) => ({ get: () => (reads.push(value), value) })
    // A success, an error that is not retried, a policy with no retries: never read.
    for (const [answer, retry] of [
      [Object.defineProperty(text('OK'), 'retryAfterMs', getter('success')), policy(3)],
      [Object.defineProperty(failure('400 bad model'), 'retryAfterMs', getter('deterministic')), policy(3)],
      [Object.defineProperty(failure('overloaded'), 'retryAfterMs', getter('no retries')), policy(0)],
    ]) {
      await ours.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([answer, text('OK')]), undefined, retry).catch(() => {})
    }
    expect(reads).toStrictEqual([])
    const out = await firstStep({ get retryAfterMs() { throw new Error('retryAfterMs getter') } })
    expect(out.ours).toStrictEqual({ log: [], rejected: 'retryAfterMs getter' })
  })
})

describe('aborts', () => {
  test('during the wait: onRetryFinished(false, attempt, message); ours resolves { aborted: true }, 1.6 an empty summary', async () => {
    const out = {}
    for (const [name, impl] of sides(ref, ours)) {
      const c = new AbortController()
      const callbacks = recorderThen(() => setTimeout(() => c.abort(), 5))
      const started = Date.now()
      const result = await impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, c.signal, undefined, scripted([failure('terminated'), text('never')]), undefined, policy(3, 30_000), callbacks)
      out[name] = { result, log: callbacks.log, ms: Date.now() - started }
    }
    expect(out.ours.log).toStrictEqual([
      ['scheduled', 1, 3, 30_000, 'terminated'],
      ['finished', false, 1, 'terminated'],
    ])
    expect(out.ours.log).toStrictEqual(out.ref.log)
    expect(out.ours.result).toEqual({ aborted: true })
    expect(out.ref.result.summary).toBe('\n\n<read-files>\nsrc/parse.rs\n</read-files>')
    // Neither waited out the 30 s delay (nor would the test's timeout have let them).
    expect(out.ours.ms).toBeLessThan(15_000)
    expect(out.ref.ms).toBeLessThan(15_000)
  })

  test('during a retried call: onRetryFinished(false, attempt) as the aborted answer brings it, and ours does not wait for the call', async () => {
    const out = {}
    for (const [name, impl, hang] of [
      ['ref', ref, false],
      ['ours', ours, true],
    ]) {
      const c = new AbortController()
      const callbacks = recorder()
      let calls = 0
      // The retried call never answers by itself (ours) or answers "aborted" on abort, as pi-ai's streams do (the reference).
      const streamFn = async (model, context, options) => ({
        result: () => {
          calls++
          if (calls === 1) return Promise.resolve(failure('terminated'))
          setTimeout(() => c.abort(), 5)
          return new Promise((resolve) => {
            if (!hang) options.signal.addEventListener('abort', () => resolve({ ...text('half'), stopReason: 'aborted' }), { once: true })
          })
        },
      })
      const result = await impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, c.signal, undefined, streamFn, undefined, policy(3), callbacks)
      out[name] = { result, log: callbacks.log }
    }
    expect(out.ours.log).toStrictEqual([['scheduled', 1, 3, 1, 'terminated'], ['attemptStart'], ['finished', false, 1]])
    expect(out.ours.log).toStrictEqual(out.ref.log)
    expect(out.ours.result).toEqual({ aborted: true })
  })

  test('branch summaries: { aborted: true } from an abort while waiting, in both', async () => {
    const out = {}
    for (const [name, impl] of sides(ref, ours)) {
      const c = new AbortController()
      const callbacks = recorderThen(() => c.abort())
      const result = await impl.generateBranchSummary(branchEntries(), { model: MODEL, signal: c.signal, streamFn: scripted([failure('ECONNRESET'), text('never')]), retry: policy(2, 1000), callbacks })
      out[name] = { result, log: callbacks.log }
    }
    expect(out.ours).toStrictEqual({ result: { aborted: true }, log: [['scheduled', 1, 2, 1000, 'ECONNRESET'], ['finished', false, 1, 'ECONNRESET']] })
    expect(out.ours).toStrictEqual(out.ref)
  })
})

describe('completeSummarization(): retryAssistantCall itself', () => {
  const context = { messages: [{ role: 'user', content: [{ type: 'text', text: 'U' }], timestamp: 1 }] }

  async function complete(impl, script, retry, signal, onScheduled) {
    const callbacks = onScheduled ? recorderThen(onScheduled) : recorder()
    const streamFn = scripted(script)
    const response = await impl.completeSummarization(MODEL, context, { signal, sessionId: 'S' }, streamFn, retry, callbacks)
    return { response, log: callbacks.log, calls: streamFn.calls.length }
  }

  test.each([
    ['success after retries', [failure('terminated'), failure('overloaded'), text('OK')], policy(3)],
    ['exhaustion returns the last error answer', [failure('terminated'), failure('terminated')], policy(1)],
    ['a non-retryable error returns at once', [failure('billing: out of credit')], policy(3)],
    ['an aborted answer after a retry', [failure('terminated'), { ...text('half'), stopReason: 'aborted' }], policy(3)],
    ['a length stop is no error to the loop', [{ ...text('cut'), stopReason: 'length' }], policy(3)],
    ['an error without a message is not retried', [{ ...failure(''), errorMessage: undefined }], policy(3)],
  ])('%s', async (_, script, retry) => {
    const a = await complete(ref, [...script], retry)
    const b = await complete(ours, [...script], retry)
    expect(b).toStrictEqual(a)
  })

  test('an abort while waiting returns the answer as aborted, without its errorMessage', async () => {
    const run = async (impl) => {
      const c = new AbortController()
      return complete(impl, [failure('terminated', { extra: 1 })], policy(3, 1000), c.signal, () => c.abort())
    }
    const a = await run(ref)
    const b = await run(ours)
    expect(b).toStrictEqual(a)
    expect(b.response.stopReason).toBe('aborted')
    expect('errorMessage' in b.response).toBe(false)
    expect(Object.keys(b.response)).toEqual(['role', 'content', 'stopReason', 'usage', 'extra'])
  })

  test('a signal-like object without an EventTarget\'s methods is only asked `aborted`: nothing throws where no caller can catch it', async () => {
    for (const signal of [{ aborted: false }, { aborted: false, addEventListener() {} }, { aborted: false, addEventListener() {}, removeEventListener() { throw new Error('no') } }]) {
      const got = await complete(ours, [failure('terminated'), text('OK')], policy(3, 5), signal)
      expect([got.response.content[0].text, got.calls]).toEqual(['OK', 2])
    }
    // Aborted during the wait: seen when the wait ends.
    const polled = { aborted: false }
    const got = await complete(ours, [failure('terminated'), text('OK')], policy(3, 20), polled, () => {
      polled.aborted = true
    })
    expect([got.response.stopReason, got.calls]).toEqual(['aborted', 1])
    // Its `aborted` throwing when the wait ends: the caller's rejection, not the timer's.
    let asked = 0
    const throwing = {
      get aborted() {
        if (++asked > 1) throw new Error('asked once too often')
        return false
      },
    }
    await expect(complete(ours, [failure('terminated'), text('OK')], policy(3, 5), throwing)).rejects.toThrow('asked once too often')
  })

  test('resolves the AssistantMessage whatever it says, as bug-report.js expects', async () => {
    for (const answer of [failure('boom'), { ...text('x'), stopReason: 'length' }, { ...text(''), stopReason: 'aborted' }]) {
      const { response } = await complete(ours, [answer])
      expect(response).toBe(answer)
      expect(ours.getSummarizationFailure(response, 'Bug report summary')).toBe(ref.getSummarizationFailure(response, 'Bug report summary'))
    }
  })
})

describe('the classifier is pi-ai 1.6\'s', () => {
  /** Whether ours would retry an error answer with this message. */
  function oursRetries(message) {
    const retry = new native.SummaryRetry({ enabled: true, maxRetries: 1, baseDelayMs: 0 }, false)
    return retry.answer({ role: 'assistant', content: [], stopReason: 'error', errorMessage: message }).scheduled !== null
  }
  const piAiRetries = (message) => piAiRetry.isRetryableAssistantError({ role: 'assistant', content: [], stopReason: 'error', errorMessage: message })

  const FRAGMENTS = [
    'overloaded', 'server_busy', 'rate limit', 'rate-limit', 'ratelimit', 'too many requests', '429', '500', '502', '503', '504', '520', '524',
    'service temporarily unavailable', 'service is unavailable', 'server error', 'internal_error', 'provider returned an error',
    'unable to forward upstream', 'upstream request failed', 'upstream_stream_read_error', 'http/2 stream failed', 'http2 stream failed',
    'network error', 'connection refused', 'connection lost', 'connection closed', 'other side closed', 'fetch failed',
    'request to https://x.test/a failed, reason:', 'getaddrinfo', 'ECONNRESET', 'ECONNABORTED', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE',
    'connection reset by peer', 'ENOTFOUND', 'EAI_AGAIN', 'upstream connect', 'reset before headers', 'socket hang up',
    'socket connection was closed', 'timed out', 'time out', 'timeout', 'terminated', 'websocket closed', 'websocket error',
    'websocket connection limit reached', 'ended without', 'stream ended before message_stop', 'stream disconnected before completion',
    'cut short after the reply had begun', 'pending stream has been canceled', 'retry delay', 'you can retry your request',
    'try your request again', 'please retry your request', 'ResourceExhausted', 'subscription_sharing_usage_unavailable',
    'subscription_sharing_user_unavailable', 'GoUsageLimitError', 'FreeUsageLimitError', 'Monthly usage limit reached',
    'available balance', 'insufficient_quota', 'out of budget', 'quota exceeded', 'billing', '"code": 1308', '"code":"1308"', '"code" : 13081',
    'subscription_sharing_usage_limit_exceeded', 'prompt is too long', 'Invalid API key',
  ]
  const NEIGHBOURS = ['', ' ', 'a', 'Z', '0', '9', '_', '-', '.', ':', '"', 'é', '\u212a', '\u017f', '\u0131', '😀', '\ud800', '\udc00', '\r', '\n', '\u2028', '\u00a0', '\ufeff', '\u0085', '\u3000', '\t']

  test('every fragment, its case flipped and its spaces replaced, with every neighbour before, after and around it', () => {
    const mismatches = []
    const seen = { true: 0, false: 0 }
    for (const f of FRAGMENTS) {
      for (const variant of [f, f.toUpperCase(), f.toLowerCase(), f.replace(/ /g, '\u00a0'), f.replace(/ /g, '\r'), f.replace(/ /g, '😀'), f.replace(/s/g, '\u017f'), f.replace(/k/g, '\u212a')]) {
        for (const n of NEIGHBOURS) {
          for (const m of [n + variant, variant + n, n + variant + n]) {
            const verdict = piAiRetries(m)
            seen[verdict]++
            if (oursRetries(m) !== verdict) mismatches.push(m)
          }
        }
      }
    }
    expect(mismatches).toEqual([])
    // Both verdicts are well represented.
    expect(Math.min(seen.true, seen.false)).toBeGreaterThan(3000)
  })

  test('generated messages: fragments and arbitrary text mixed', () => {
    const piece = fc.oneof(
      fc.constantFrom(...FRAGMENTS),
      fc.constantFrom(...NEIGHBOURS),
      fc.string({ maxLength: 6 }),
      fc.string({ unit: 'binary', maxLength: 4 }),
      fc.string({ unit: 'grapheme-composite', maxLength: 3 }),
    )
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const m = pieces.join('')
        expect([m, oursRetries(m)]).toEqual([m, piAiRetries(m)])
      }),
      { numRuns: 3000, seed: 20261201 },
    )
  })

  test('non-string messages are read as String() reads them', () => {
    for (const m of [503, 429.5, true, { toString: () => 'overloaded' }, ['socket hang up']]) {
      expect([m, oursRetries(m)]).toEqual([m, piAiRetries(m)])
    }
  })
})
