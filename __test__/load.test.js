'use strict'
// Load: 200 concurrent compact() calls against one fake streamFn with random
// delays and failures, a random third of them aborted, in each agent line. Every call must settle
// with its own result: the summary or error it gets names its own call id,
// which is embedded in its messages and so in every prompt it sends.
// Memory: repeated prepareCompaction calls on a 10k-entry session, compact()
// calls on a scripted streamFn and serializeForSummary calls on 10k messages
// keep RSS flat (shorter runs of benches/leak.mjs, in a child for a clean RSS).

const { execFile } = require('node:child_process')
const path = require('node:path')
const { loadOurs, LINES } = require('./helpers/ours')
const { promptOf } = require('./helpers/summary')

jest.setTimeout(300_000)

const CALLS = 200
const MODEL = {
  id: 'fake-model',
  name: 'Fake',
  api: 'openai-completions',
  provider: 'fake',
  baseUrl: 'http://127.0.0.1:1',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 4096,
}
const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 150 }

const { mulberry32 } = require('../scripts/prng')

/** A session whose every message names call `id`; some turns are long enough to split. */
function sessionFor(id, rand) {
  const out = []
  const turns = 3 + Math.floor(rand() * 6)
  for (let t = 0; t < turns; t++) {
    const push = (message) => out.push({ type: 'message', id: `${id}-e${out.length}`, parentId: out.length ? `${id}-e${out.length - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message })
    push({ role: 'user', content: `[${id}] question ${t} `.repeat(10), timestamp: t })
    const steps = 1 + Math.floor(rand() * 4)
    for (let s = 0; s < steps; s++) {
      push({ role: 'assistant', content: [{ type: 'text', text: `[${id}] step ${s} `.repeat(10) }, { type: 'toolCall', id: `${id}-c${t}-${s}`, name: 'read', arguments: { path: `${id}/f${s}.rs` } }], usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110 }, stopReason: 'toolUse', timestamp: t })
      push({ role: 'toolResult', toolCallId: `${id}-c${t}-${s}`, toolName: 'read', content: [{ type: 'text', text: `[${id}] body `.repeat(10) }], isError: false, timestamp: t })
    }
  }
  return out
}

const idsIn = (text) => new Set(text.match(/CALL\d+/g) || [])

describe('load', () => {
  it.each(LINES)(`agent line %s: ${CALLS} concurrent compact() calls each get their own result; a third aborted`, async (line) => {
    const ours = await loadOurs(line)
    const rand = mulberry32(20260101)
    const plans = []
    for (let i = 0; i < CALLS; i++) {
      const id = `CALL${i}`
      const prep = ours.prepareCompaction(sessionFor(id, rand), SETTINGS)
      expect(prep).toBeDefined()
      const r = rand()
      plans.push({ id, prep, fail: r < 0.15 ? 'throw' : r < 0.3 ? 'error' : null, abortAfterMs: rand() < 1 / 3 ? Math.floor(rand() * 30) : null })
    }
    const byId = new Map(plans.map((p) => [p.id, p]))
    let active = 0
    let peak = 0
    const requests = new Map()

    // One streamFn shared by every call, as an app would share its provider.
    const streamFn = async (model, context, options) => {
      const prompt = promptOf(context)
      const ids = idsIn(prompt)
      expect(ids.size).toBe(1)
      const [id] = ids
      requests.set(id, (requests.get(id) || 0) + 1)
      const plan = byId.get(id)
      active++
      peak = Math.max(peak, active)
      await new Promise((r) => setTimeout(r, Math.floor(rand() * 25)))
      active--
      if (options.signal && options.signal.aborted) throw new Error(`${id}: aborted by signal`)
      return {
        result: async () => {
          await new Promise((r) => setTimeout(r, Math.floor(rand() * 10)))
          if (plan.fail === 'throw') throw new Error(`network failure for ${id}`)
          if (plan.fail === 'error') return { role: 'assistant', content: [], stopReason: 'error', errorMessage: `provider error for ${id}` }
          return { role: 'assistant', content: [{ type: 'text', text: `## Goal\nsummary for ${id}` }], stopReason: 'stop' }
        },
      }
    }

    const settled = await Promise.allSettled(
      plans.map((p) => {
        const controller = p.abortAfterMs === null ? null : new AbortController()
        if (controller) setTimeout(() => controller.abort(new Error(`abort ${p.id}`)), p.abortAfterMs)
        return ours.compact(p.prep, MODEL, 'key', undefined, undefined, controller ? controller.signal : undefined, undefined, streamFn)
      }),
    )

    const tally = { resolved: 0, failed: 0, aborted: 0 }
    settled.forEach((s, i) => {
      const p = plans[i]
      if (s.status === 'fulfilled' && s.value.aborted) {
        // An aborted call resolves with nothing to store.
        expect(p.abortAfterMs).not.toBeNull()
        expect(s.value).toEqual({ aborted: true })
        tally.aborted++
      } else if (s.status === 'fulfilled') {
        // Only calls that were meant to succeed may resolve, each with its own summary.
        expect(p.fail).toBeNull()
        expect([...idsIn(s.value.summary)]).toEqual([p.id])
        expect(s.value.firstKeptEntryId.startsWith(`${p.id}-`)).toBe(true)
        tally.resolved++
      } else {
        const ids = [...idsIn(String(s.reason && s.reason.message))]
        expect(ids).toEqual([p.id])
        expect(p.fail !== null || p.abortAfterMs !== null).toBe(true)
        tally.failed++
      }
    })
    expect(tally.aborted).toBeGreaterThan(CALLS / 6)
    expect(tally.resolved).toBeGreaterThan(CALLS / 4)
    expect(peak).toBeGreaterThan(50)
    process.stdout.write(`load ${line}: ${JSON.stringify({ ...tally, peakConcurrentRequests: peak, requests: [...requests.values()].reduce((a, b) => a + b, 0) })}\n`)
  })

  /**
   * benches/leak.mjs in a child (a clean RSS), with `args`; its report. The
   * child's young generation starts at its largest size (16 MB semi-spaces,
   * V8's default ceiling): V8 otherwise grows it once, at a point that moves
   * with how much a call allocates, and that one step (about 20 MB of RSS)
   * could fall after the warm-up and read as a leak.
   */
  function leak(args) {
    const script = path.join(__dirname, '..', 'benches', 'leak.mjs')
    return new Promise((resolve, reject) =>
      execFile(process.execPath, ['--expose-gc', '--min-semi-space-size=16', script, ...args, '--bound-mb', '16'], { timeout: 240_000 }, (err, stdout, stderr) => {
        if (err && err.code !== 1) reject(new Error(`${err.message}\n${stderr}`))
        else resolve(JSON.parse(stdout))
      }),
    )
  }

  it('repeated prepareCompaction on a 10k-entry session keeps RSS flat', async () => {
    const out = await leak(['--calls', '1000', '--warmup', '200'])
    process.stdout.write(`leak: ${JSON.stringify(out.rssMb)}\n`)
    expect(out.rssMb.growth).toBeLessThan(16)
  })

  it('5,000 compact() calls on a streamFn that answers at once, never yielding, keep RSS flat', async () => {
    // No turn of the event loop, so no finalizer runs: what each job holds
    // must go when its call ends (about 70 KB a call here, 350 MB in all, if it did not).
    const out = await leak(['--mode', 'compact', '--calls', '5000', '--warmup', '500', '--yield-every', '0'])
    process.stdout.write(`leak compact: ${JSON.stringify(out.rssMb)}\n`)
    expect(out.calls).toBe(5000)
    expect(out.rssMb.growth).toBeLessThan(16)
  })

  it('100 serializeForSummary calls on 10k messages keep RSS flat', async () => {
    // Each call's transcript is over 1 MB: one kept per call would add 100 MB.
    const out = await leak(['--mode', 'serialize', '--calls', '100', '--warmup', '20'])
    process.stdout.write(`leak serialize: ${JSON.stringify(out.rssMb)}\n`)
    expect(out.check).toBeGreaterThan(100 * 1_000_000)
    expect(out.rssMb.growth).toBeLessThan(16)
  })
})
