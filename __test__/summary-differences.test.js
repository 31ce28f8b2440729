'use strict'
// Each summary difference listed in differences.js, shown: the same input
// to the line's reference and to ours, and each side's behaviour as the
// entry describes it. An entry of a summary area without a demonstration
// here fails the suite, and so does a demonstration without an entry.

const differences = require('./differences')
const { loadReference } = require('./helpers/reference')
const { loadOurs, LINES } = require('./helpers/ours')
const { MODEL, usage, text, failure, scripted, recorder, splitPreparation, plainPreparation, branchEntries, sides, abortable } = require('./helpers/summary')

const OVERFLOW = 'prompt is too long: 213462 tokens > 200000 maximum'

async function outcome(promise) {
  try {
    return { resolved: await promise }
  } catch (err) {
    return { rejected: err.message, name: err.name, type: err.constructor.name }
  }
}

// The spec's structured summary format: its headings, in order.
const SPEC_HEADINGS = ['## Goal', '## Constraints & Preferences', '## Progress', '### Done', '### In Progress', '### Blocked', '## Key Decisions', '## Reasoning Digest', '## Next Steps', '## Critical Context']

/** The headings of a request's instructions (what follows its transcript and previous summary). */
function headingsOf(prompt) {
  const after = Math.max(prompt.lastIndexOf('</conversation>'), prompt.lastIndexOf('</previous-summary>'))
  expect(after).toBeGreaterThan(0)
  return prompt.slice(after).split('\n').filter((l) => /^#{2,3} /.test(l))
}

/** Each demonstration gets the line, the line's reference and ours. */
const DEMOS = {
  async 'summary-text'(line, ref, ours) {
    const prompts = {}
    for (const [name, impl] of sides(ref, ours)) {
      const streamFn = scripted([text('H'), text('P')])
      await impl.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      prompts[name] = streamFn.calls.map((c) => c.prompt)
    }
    const [history, prefix] = prompts.ours
    expect(history).toContain('[Assistant reasoning]: Considering the failing test')
    expect(history).toContain('[Assistant tool calls]: read#c1(path="src/parse.rs")')
    expect(history).toContain('[Tool result read#c1 error=false]: fn parse() {}')
    expect(history).toContain('## Reasoning Digest')
    expect(prefix.startsWith('<conversation>\n')).toBe(true)
    expect(ours.SUMMARIZATION_SYSTEM_PROMPT).not.toBe(ref.SUMMARIZATION_SYSTEM_PROMPT)
    // Every summary asks for the spec's format: a first one, an update of a
    // previous summary, a branch summary.
    expect(headingsOf(history)).toEqual(SPEC_HEADINGS)
    const update = scripted([text('U')])
    await ours.compact({ ...plainPreparation(ref), previousSummary: 'earlier work' }, MODEL, 'k', undefined, undefined, undefined, undefined, update)
    expect(update.calls[0].prompt).toContain('earlier work')
    expect(headingsOf(update.calls[0].prompt)).toEqual(SPEC_HEADINGS)
    const branch = scripted([text('B')])
    await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: branch })
    expect(headingsOf(branch.calls[0].prompt)).toEqual(SPEC_HEADINGS)
    // The digest keeps conclusions and outcomes, not the reasoning word for word (the spec), in each.
    for (const prompt of [history, update.calls[0].prompt, branch.calls[0].prompt]) {
      expect(prompt).toContain('In the Reasoning Digest, keep conclusions and the evidence behind them (approaches tried, why they failed or won) rather than copying reasoning word for word.')
    }
    const [refHistory, refPrefix] = prompts.ref
    expect(refHistory).not.toContain('Reasoning Digest')
    if (line === '0.78') {
      expect(refHistory).toContain('[Assistant thinking]: Considering the failing test')
      expect(refHistory).toContain('[Assistant tool calls]: read(path="src/parse.rs")')
    } else {
      expect(refHistory).not.toContain('Considering the failing test')
      expect(refPrefix.startsWith('# Conversation\n')).toBe(true)
    }
  },

  async 'custom-instructions'(line, ref, ours) {
    const runs = {}
    for (const [name, impl] of sides(ref, ours)) {
      const streamFn = scripted([text('H'), text('P')])
      const result = await impl.compact(splitPreparation(ref), MODEL, 'k', undefined, 'keep the migration command', undefined, undefined, streamFn)
      runs[name] = { result, prompts: streamFn.calls.map((c) => c.prompt) }
    }
    for (const p of runs.ours.prompts) {
      expect(p).toContain('<user-instructions priority="high">')
      expect(p).toContain('keep the migration command')
    }
    expect(runs.ours.result.customInstructions).toBe('keep the migration command')
    expect('customInstructions' in runs.ref.result).toBe(false)
    expect(runs.ref.prompts[0]).toContain('Additional focus: keep the migration command')
    expect(runs.ref.prompts[1].includes('keep the migration command')).toBe(line === '1.6')
  },

  async 'overflow-retries'(line, ref, ours) {
    // Two user rounds: a retry can leave the older one out.
    const twoRounds = () => {
      const prep = plainPreparation(ref)
      return { ...prep, messagesToSummarize: [...prep.messagesToSummarize, ...prep.messagesToSummarize] }
    }
    const oursRun = scripted([failure(OVERFLOW), text('OK')])
    const result = await ours.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, oursRun)
    expect(result.summary.startsWith('OK')).toBe(true)
    expect(oursRun.calls).toHaveLength(2)
    expect(oursRun.calls[1].prompt.length).toBeLessThan(oursRun.calls[0].prompt.length)
    const refRun = scripted([failure(OVERFLOW), text('OK')])
    await expect(ref.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, refRun)).rejects.toThrow(`Summarization failed: ${OVERFLOW}`)
    expect(refRun.calls).toHaveLength(1)
    const exhausted = scripted([failure(OVERFLOW), failure(OVERFLOW), failure(OVERFLOW)])
    await expect(ours.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, exhausted)).rejects.toThrow(
      "Summarization failed: the request still overflows the model's context after 2 smaller retries: " + OVERFLOW,
    )
    // An overflow the streamFn throws (rather than answers) is retried the same way; any other
    // thrown error rejects as it is, at once.
    const thrown = scripted([new Error(OVERFLOW), text('OK')])
    expect((await ours.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, thrown)).summary.startsWith('OK')).toBe(true)
    expect(thrown.calls).toHaveLength(2)
    expect(thrown.calls[1].prompt.length).toBeLessThan(thrown.calls[0].prompt.length)
    const refThrown = scripted([new Error(OVERFLOW), text('OK')])
    await expect(ref.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, refThrown)).rejects.toThrow(OVERFLOW)
    expect(refThrown.calls).toHaveLength(1)
    const lastThrown = Object.assign(new Error(OVERFLOW), { status: 400, code: 'context_length_exceeded' })
    const thrownThrice = scripted([new Error(OVERFLOW), new Error(OVERFLOW), lastThrown])
    const spentThrown = await ours.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, thrownThrice).catch((err) => err)
    expect(spentThrown.message).toBe("Summarization failed: the request still overflows the model's context after 2 smaller retries: " + OVERFLOW)
    // A plain Error as the agents raise theirs, the error thrown last as its cause; an answered failure has none.
    expect([spentThrown.constructor.name, Object.keys(spentThrown), spentThrown.cause]).toEqual(['Error', [], lastThrown])
    const answeredSpent = await ours.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([failure(OVERFLOW)])).catch((err) => err)
    expect([answeredSpent.constructor.name, Object.keys(answeredSpent), 'cause' in answeredSpent]).toEqual(['Error', [], false])
    const other = new Error('socket hang up')
    const otherRun = scripted([other, text('never')])
    await expect(ours.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, otherRun)).rejects.toBe(other)
    expect(otherRun.calls).toHaveLength(1)
    // A branch summary's thrown overflow ends as its answered one does (this branch, one round, cannot shrink).
    const branchOutcome = async (first) => {
      const run = scripted([first, text('B')])
      return { result: await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: run }), calls: run.calls.length }
    }
    const answeredBranch = await branchOutcome(failure(OVERFLOW))
    expect(answeredBranch.result.error).toMatch(/overflows the model's context/)
    expect(await branchOutcome(new Error(OVERFLOW))).toEqual(answeredBranch)
    // A split turn's two requests share the two retries. This prefix is one short user message:
    // no retry of it would be smaller than it, so its overflow fails at once.
    const shared = scripted([failure(OVERFLOW), text('H'), failure(OVERFLOW), text('never')])
    await expect(ours.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, shared)).rejects.toThrow(
      "Turn prefix summarization failed: the request overflows the model's context and cannot be made smaller: " + OVERFLOW,
    )
    expect(shared.calls).toHaveLength(3)
    // With long bodies in the prefix, its retry is the compaction's second: no exact body left.
    const longCalls = ['q1', 'q2', 'q3'].flatMap((id) => [
      { role: 'assistant', content: [{ type: 'toolCall', id, name: 'read', arguments: { path: `${id}.rs` } }], stopReason: 'toolUse', timestamp: 6 },
      { role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text: `LONG-${id} ${'y'.repeat(300)}` }], isError: false, timestamp: 7 },
    ])
    const withLong = () => {
      const prep = splitPreparation(ref)
      return { ...prep, turnPrefixMessages: [...prep.turnPrefixMessages, ...longCalls] }
    }
    const second = scripted([failure(OVERFLOW), text('H'), failure(OVERFLOW), text('P')])
    expect((await ours.compact(withLong(), MODEL, 'k', undefined, undefined, undefined, undefined, second)).summary).toContain('P')
    const bodies = (prompt) => ['q1', 'q2', 'q3'].filter((id) => prompt.includes(`LONG-${id}`))
    expect(second.calls.map((c) => bodies(c.prompt))).toEqual([[], [], ['q1', 'q2', 'q3'], []])
    const spent = scripted([failure(OVERFLOW), text('H'), failure(OVERFLOW), failure(OVERFLOW), text('never')])
    await expect(ours.compact(withLong(), MODEL, 'k', undefined, undefined, undefined, undefined, spent)).rejects.toThrow(
      "Turn prefix summarization failed: the request still overflows the model's context after 2 smaller retries: " + OVERFLOW,
    )
    expect(spent.calls).toHaveLength(4)
    // Nothing to leave out at all: the first overflow fails, with no retry.
    const single = () => ({ ...plainPreparation(ref), messagesToSummarize: plainPreparation(ref).messagesToSummarize.slice(-3) })
    const once = scripted([failure(OVERFLOW), text('never')])
    await expect(ours.compact(single(), MODEL, 'k', undefined, undefined, undefined, undefined, once)).rejects.toThrow(
      "Summarization failed: the request overflows the model's context and cannot be made smaller: " + OVERFLOW,
    )
    expect(once.calls).toHaveLength(1)
    // After a history retry, the prefix is still asked for whole first: all three of its tool-result bodies.
    const calls = ['p1', 'p2', 'p3'].flatMap((id) => [
      { role: 'assistant', content: [{ type: 'toolCall', id, name: 'read', arguments: { path: `${id}.rs` } }], stopReason: 'toolUse', timestamp: 6 },
      { role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text: `BODY-${id}` }], isError: false, timestamp: 7 },
    ])
    const withBodies = () => {
      const prep = splitPreparation(ref)
      return { ...prep, turnPrefixMessages: [...prep.turnPrefixMessages, ...calls] }
    }
    const fits = scripted([failure(OVERFLOW), text('H'), text('P')])
    const split = await ours.compact(withBodies(), MODEL, 'k', undefined, undefined, undefined, undefined, fits)
    expect(split.summary).toContain('P')
    const fresh = scripted([text('H'), text('P')])
    await ours.compact(withBodies(), MODEL, 'k', undefined, undefined, undefined, undefined, fresh)
    expect(fits.calls[2].prompt).toBe(fresh.calls[1].prompt)
    expect(['p1', 'p2', 'p3'].filter((id) => fits.calls[2].prompt.includes(`BODY-${id}`))).toEqual(['p1', 'p2', 'p3'])
    // One round that fits the model's declared window (1M tokens) overflows a server run with less:
    // its retries keep half, then a quarter, of it, head and tail.
    const long = { role: 'user', content: `HEAD ${'x'.repeat(400_000)} TAIL`, timestamp: 1 }
    const oneLongRound = () => ({ ...plainPreparation(ref), messagesToSummarize: [long], previousSummary: undefined })
    const bounded = scripted([failure(OVERFLOW), failure(OVERFLOW), text('OK')])
    expect((await ours.compact(oneLongRound(), { ...MODEL, contextWindow: 1_000_000 }, 'k', undefined, undefined, undefined, undefined, bounded)).summary).toMatch(/^OK/)
    const lengths = bounded.calls.map((c) => c.prompt.length)
    expect([lengths[1] - lengths[0], lengths[2] - lengths[0]].map((d) => Math.round((d + 400_000) / 1000))).toEqual([200, 100])
    expect(bounded.calls.slice(1).every((c) => /HEAD x+\n\n\[\.\.\. \d+ characters of this round omitted \.\.\.\]\n\nx+ TAIL/.test(c.prompt))).toBe(true)
    if (line === '1.6') {
      // An overflow that holds a retryable word ("500"), under a retry policy.
      const worded = "This model's maximum context length is 500 tokens. However, your messages resulted in 900 tokens."
      const runs = {}
      for (const [name, impl] of sides(ref, ours)) {
        const streamFn = scripted([failure(worded), text('OK')])
        const callbacks = recorder()
        await impl.compact(twoRounds(), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn, undefined, { enabled: true, maxRetries: 3, baseDelayMs: 1 }, callbacks)
        runs[name] = { calls: streamFn.calls, log: callbacks.log }
      }
      expect(runs.ours.log).toEqual([])
      expect(runs.ours.calls[1].prompt.length).toBeLessThan(runs.ours.calls[0].prompt.length)
      expect(runs.ref.log[0]).toEqual(['scheduled', 1, 3, 1, worded])
      expect(runs.ref.calls[1].context).toBe(runs.ref.calls[0].context)
    }
  },

  async 'retry-after'(line, ref, ours) {
    const runs = {}
    for (const retryAfterMs of [25, 60_001]) {
      for (const [name, impl] of [
        ['ref', ref],
        ['ours', ours],
      ]) {
        const callbacks = recorder()
        const streamFn = scripted([failure('429 Too many requests', { retryAfterMs }), text('OK')])
        const outcome = await impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn, undefined, { enabled: true, maxRetries: 3, baseDelayMs: 1 }, callbacks).then(
          () => 'resolved',
          (err) => err.message,
        )
        runs[`${name} ${retryAfterMs}`] = { outcome, log: callbacks.log.filter(([event]) => event === 'scheduled') }
      }
    }
    expect(runs).toEqual({
      'ref 25': { outcome: 'resolved', log: [['scheduled', 1, 3, 1, '429 Too many requests']] },
      'ours 25': { outcome: 'resolved', log: [['scheduled', 1, 3, 25, '429 Too many requests']] },
      'ref 60001': { outcome: 'resolved', log: [['scheduled', 1, 3, 1, '429 Too many requests']] },
      'ours 60001': { outcome: 'Summarization failed: 429 Too many requests', log: [] },
    })
  },

  async 'unbounded-retries'(line, ref, ours) {
    const errors = () => [...Array.from({ length: 8 }, () => failure('overloaded')), text('OK')]
    const retry = { enabled: true, baseDelayMs: 1 }
    // Missing, NaN, Infinity, a non-numeric string: 3 retries each.
    for (const maxRetries of [undefined, NaN, Infinity, 'lots']) {
      const oursCallbacks = recorder()
      const oursRun = scripted(errors())
      const policy = maxRetries === undefined ? retry : { ...retry, maxRetries }
      await expect(ours.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, oursRun, undefined, policy, oursCallbacks)).rejects.toThrow(
        'Summarization failed: overloaded',
      )
      expect([maxRetries, oursRun.calls.length]).toEqual([maxRetries, 4])
      expect(oursCallbacks.log.filter(([name]) => name === 'scheduled').map((entry) => entry.slice(1, 3))).toEqual([
        [1, 3],
        [2, 3],
        [3, 3],
      ])
      expect(oursCallbacks.log.at(-1)).toEqual(['finished', false, 3, 'overloaded'])
    }
    // The agent goes on past any bound: here until the script's success.
    const refRun = scripted(errors())
    const refResult = await ref.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, refRun, undefined, retry)
    expect(refRun.calls).toHaveLength(9)
    expect(refResult.summary.startsWith('OK')).toBe(true)
    // A numeric string: the same retries, maxAttempts as a number here and as given in 1.6.0.
    const maxAttempts = {}
    for (const [name, impl] of sides(ref, ours)) {
      const callbacks = recorder()
      await impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([failure('terminated'), text('OK')]), undefined, { enabled: true, maxRetries: '5', baseDelayMs: 1 }, callbacks)
      maxAttempts[name] = callbacks.log[0][2]
    }
    expect(maxAttempts).toEqual({ ref: '5', ours: 5 })
  },

  async 'aborted-compaction'(line, ref, ours) {
    const results = {}
    for (const [name, impl] of sides(ref, ours)) {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 10)
      results[name] = await impl.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, controller.signal, undefined, abortable())
    }
    expect(results.ours).toEqual({ aborted: true })
    expect(results.ref.summary).toContain('half a summ')
    // A branch summary too: the agent waits, and takes what a stream that ignored the abort gives.
    const branch = {}
    for (const [name, impl] of sides(ref, ours)) {
      const c = new AbortController()
      setTimeout(() => c.abort(), 10)
      const late = async () => ({ result: () => new Promise((resolve) => setTimeout(() => resolve(text('## Goal\nlate')), 50)) })
      branch[name] = await impl.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal: c.signal, streamFn: late })
    }
    expect(branch.ours).toEqual({ aborted: true })
    expect(branch.ref.summary).toContain('late')
    // Not waiting for a stream that never ends.
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 10)
    const hanging = async () => ({ result: () => new Promise(() => {}) })
    await expect(ours.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, controller.signal, undefined, hanging)).resolves.toEqual({ aborted: true })
    if (line === '1.6') {
      const waits = {}
      for (const [name, impl] of sides(ref, ours)) {
        const c = new AbortController()
        const callbacks = recorder()
        callbacks.onRetryScheduled = async () => c.abort()
        waits[name] = await impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, c.signal, undefined, scripted([failure('terminated')]), undefined, { enabled: true, maxRetries: 3, baseDelayMs: 1000 }, callbacks)
      }
      expect(waits.ours).toEqual({ aborted: true })
      expect(waits.ref.summary).toBe('\n\n<read-files>\nsrc/parse.rs\n</read-files>')
      // A callback that never settles: ours stops waiting for it on the abort, the agent waits on.
      const PENDING = Symbol('pending')
      const within = (promise, ms) => Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(PENDING), ms))])
      /** recorder() whose callback `name` records, aborts `c` 5 ms later, and never settles. */
      const stuckAt = (name, c) => {
        const callbacks = recorder()
        const record = callbacks[name]
        callbacks[name] = (...args) => {
          record(...args)
          setTimeout(() => c.abort(), 5)
          return new Promise(() => {})
        }
        return callbacks
      }
      const stuck = {}
      const logs = {}
      for (const [name, impl] of sides(ref, ours)) {
        const c = new AbortController()
        const callbacks = stuckAt('onRetryScheduled', c)
        stuck[name] = await within(impl.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, c.signal, undefined, scripted([failure('terminated'), text('never')]), undefined, { enabled: true, maxRetries: 3, baseDelayMs: 1 }, callbacks), 200)
        logs[name] = callbacks.log
      }
      expect(stuck.ours).toEqual({ aborted: true })
      expect(stuck.ref).toBe(PENDING)
      // As an abort during the wait that follows.
      expect(logs.ours).toStrictEqual([
        ['scheduled', 1, 3, 1, 'terminated'],
        ['finished', false, 1, 'terminated'],
      ])
      expect(logs.ref).toStrictEqual([['scheduled', 1, 3, 1, 'terminated']])
      const stuckBranch = {}
      for (const [name, impl] of sides(ref, ours)) {
        const c = new AbortController()
        const callbacks = stuckAt('onRetryAttemptStart', c)
        const streamFn = scripted([failure('terminated'), text('never')])
        const options = { model: MODEL, apiKey: 'k', signal: c.signal, streamFn, retry: { enabled: true, maxRetries: 3, baseDelayMs: 1 }, callbacks }
        stuckBranch[name] = await within(impl.generateBranchSummary(branchEntries(), options), 200)
        logs[name] = [...callbacks.log, ['calls', streamFn.calls.length]]
      }
      expect(stuckBranch.ours).toEqual({ aborted: true })
      expect(stuckBranch.ref).toBe(PENDING)
      // As an abort during the retried call, which is not made.
      expect(logs.ours).toStrictEqual([['scheduled', 1, 3, 1, 'terminated'], ['attemptStart'], ['finished', false, 1], ['calls', 1]])
      expect(logs.ref).toStrictEqual([['scheduled', 1, 3, 1, 'terminated'], ['attemptStart'], ['calls', 1]])
      const summaries = {}
      for (const [name, impl] of sides(ref, ours)) {
        const c = new AbortController()
        const callbacks = { onRetryScheduled: () => (setTimeout(() => c.abort(), 5), new Promise(() => {})) }
        const summary = impl.generateSummary([{ role: 'user', content: 'hello', timestamp: 1 }], MODEL, 2000, 'k', undefined, c.signal, undefined, undefined, undefined, scripted([failure('terminated'), text('never')]), undefined, { enabled: true, maxRetries: 3, baseDelayMs: 1 }, callbacks)
        summaries[name] = await within(summary.catch((err) => ({ rejected: err.name })), 200)
      }
      expect(summaries.ours).toEqual({ rejected: 'AbortError' })
      expect(summaries.ref).toBe(PENDING)
    }
  },

  async 'aborted-answer'(line, ref, ours) {
    const answer = () => [{ ...text('partial'), stopReason: 'aborted' }]
    const a = await outcome(ref.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted(answer())))
    const b = await outcome(ours.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted(answer())))
    expect(b.rejected).toBe('Summarization failed: the request was aborted')
    expect(a.resolved.summary.startsWith('partial')).toBe(true)
  },

  async 'empty-answer'(line, ref, ours) {
    const none = { role: 'assistant', content: [], stopReason: 'stop' }
    for (const answer of [text(''), text(' \n\t'), none]) {
      const a = await outcome(ref.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([answer])))
      const b = await outcome(ours.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([answer])))
      expect(b.rejected).toBe("Summarization failed: the model's answer has no text")
      expect(a.resolved.summary.trim().startsWith('<read-files>') || a.resolved.summary.trim() === '').toBe(true)
      const summaries = {}
      for (const [name, impl] of sides(ref, ours)) {
        summaries[name] = await outcome(impl.generateSummary([{ role: 'user', content: 'hello', timestamp: 1 }], MODEL, 2000, 'k', undefined, undefined, undefined, undefined, undefined, scripted([answer])))
      }
      expect(summaries.ours.rejected).toBe("Summarization failed: the model's answer has no text")
      expect(summaries.ref.resolved.trim()).toBe('')
      const refBranch = await ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
      const oursBranch = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
      expect(oursBranch).toEqual({ error: line === '1.6' ? "Branch summarization failed: the model's answer has no text" : "the model's answer has no text" })
      expect(typeof refBranch.summary).toBe('string')
    }
  },

  async 'summary-abort'(line, ref, ours) {
    const messages = [{ role: 'user', content: 'hello', timestamp: 1 }]
    const names = line === '1.6' ? ['generateSummary', 'generateSummaryWithUsage'] : ['generateSummary']
    for (const fn of names) {
      const results = {}
      for (const [name, impl] of sides(ref, ours)) {
        const controller = new AbortController()
        setTimeout(() => controller.abort(), 10)
        results[name] = await outcome(impl[fn](messages, MODEL, 2000, 'k', undefined, controller.signal, undefined, undefined, undefined, abortable()))
      }
      expect(results.ours).toMatchObject({ name: 'AbortError' })
      const text = fn === 'generateSummary' ? results.ref.resolved : results.ref.resolved.text
      expect(text).toBe('half a summ')
    }
  },

  async 'first-kept-entry'(line, ref, ours) {
    const { firstKeptEntryId, ...unmigrated } = plainPreparation(ref)
    const calls = {}
    for (const [name, impl] of sides(ref, ours)) {
      const streamFn = scripted([text('S')])
      await expect(impl.compact(unmigrated, MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)).rejects.toThrow(
        'First kept entry has no UUID - session may need migration',
      )
      calls[name] = streamFn.calls.length
    }
    expect(calls).toEqual({ ref: 1, ours: 0 })
  },

  async 'split-turn-usage'(line, ref, ours) {
    const cases = [
      [text('H'), text('P', { usage: undefined })],
      [text('H', { usage: { ...usage(10, 5), cost: undefined } }), text('P', { usage: usage(1, 2) })],
    ]
    const [first, second] = cases
    const b1 = await ours.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted(first))
    expect(b1.usage).toBe(first[0].usage)
    const b2 = await ours.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted(second))
    expect(b2.usage).toEqual({ ...usage(11, 7), cost: { ...usage(1, 2).cost, totalFromProvider: false } })
    for (const answers of cases) {
      const a = await outcome(ref.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted(answers)))
      expect(a.type).toBe('TypeError')
    }
  },

  async 'sequential-split-turn'(line, ref, ours) {
    const peaks = {}
    for (const [name, impl] of sides(ref, ours)) {
      let active = 0
      let peak = 0
      const streamFn = async () => {
        active++
        peak = Math.max(peak, active)
        return {
          result: async () => {
            await new Promise((r) => setTimeout(r, 10))
            active--
            return text('S')
          },
        }
      }
      await impl.compact(splitPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, streamFn)
      peaks[name] = peak
    }
    expect(peaks).toEqual({ ref: 2, ours: 1 })
  },

  async 'previous-summary-split-turn'(line, ref, ours) {
    const prep = { ...splitPreparation(ref), messagesToSummarize: [], previousSummary: 'EARLIER' }
    const a = await ref.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, scripted([text('P')]))
    const b = await ours.compact(prep, MODEL, 'k', undefined, undefined, undefined, undefined, scripted([text('P')]))
    expect(b.summary.startsWith('EARLIER\n\n---\n\n')).toBe(true)
    expect(a.summary.startsWith('No prior history.\n\n---\n\n')).toBe(true)
  },

  async 'incomplete-answers'(line, ref, ours) {
    const toolCall = { role: 'assistant', content: [{ type: 'text', text: 'let me look' }, { type: 'toolCall', id: 't', name: 'read', arguments: {} }], stopReason: 'toolUse' }
    for (const answer of [text('half a summ', { stopReason: 'length' }), toolCall]) {
      const a = await outcome(ref.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([answer])))
      const b = await outcome(ours.compact(plainPreparation(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted([answer])))
      expect(b.rejected).toMatch(/^Summarization failed: the (summary is incomplete|model answered with a tool call)/)
      expect(typeof a.resolved.summary).toBe('string')
      const refBranch = await ref.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
      const oursBranch = await ours.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([answer]) })
      expect(Object.keys(oursBranch)).toEqual(['error'])
      expect(typeof refBranch.summary).toBe('string')
    }
  },

  async 'branch-output-budget'(line, ref, ours) {
    const options = {}
    for (const [name, impl] of sides(ref, ours)) {
      const streamFn = scripted([text('B')])
      await impl.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', headers: undefined, signal: undefined, streamFn })
      options[name] = streamFn.calls[0].options
    }
    expect(Object.keys(options.ours)).toEqual(Object.keys(options.ref))
    expect(options.ours.maxTokens).toBe(Math.min(Math.floor(0.8 * 16384), MODEL.maxTokens))
    expect(options.ref.maxTokens).toBe(2048)
  },

  async 'branch-reasoning'(line, ref, ours) {
    const options = {}
    for (const [name, impl] of sides(ref, ours)) {
      const streamFn = scripted([text('B')])
      await impl.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', signal: undefined, thinkingLevel: 'low', streamFn })
      options[name] = streamFn.calls[0].options
    }
    expect(options.ours.reasoning).toBe('low')
    expect('reasoning' in options.ref).toBe(false)
  },
}

const summaryEntries = (line) => differences[line].filter((d) => differences.SUMMARY_AREAS.includes(d.area))

describe.each(LINES)('agent line %s: summary differences', (line) => {
  let ref
  let ours
  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  test('every entry is well formed and has a demonstration', () => {
    const ids = summaryEntries(line).map((d) => d.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const d of differences[line]) {
      expect(Object.keys(d).sort()).toEqual(['area', 'id', 'what', 'why'])
      for (const k of ['area', 'id', 'what', 'why']) expect(typeof d[k]).toBe('string')
    }
    expect(ids.filter((id) => !(id in DEMOS))).toEqual([])
  })

  for (const d of summaryEntries(line)) {
    test(`${d.id}: ${d.what.slice(0, 80)}…`, async () => {
      await DEMOS[d.id](line, ref, ours)
    })
  }
})

test('every demonstration belongs to an entry of some line', () => {
  const listed = new Set(LINES.flatMap((line) => summaryEntries(line).map((d) => d.id)))
  expect(Object.keys(DEMOS).filter((id) => !listed.has(id))).toEqual([])
})
