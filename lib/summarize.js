'use strict'
// The summarizing exports of one agent line: compact(), generateSummary(),
// generateSummaryWithUsage(), generateBranchSummary(), completeSummarization(),
// getSummarizationFailure() and buildSummaryRequests(). The native jobs
// decide each request, each retry and each failure by the line's rules (in
// the core); this file builds the context and options objects the line's
// agent sends, awaits the caller's streamFn (or the host's pi-ai), waits
// the delays a retry asks for, abortably, and calls the caller's callbacks.

const { callerFiles, completeSimpleOf } = require('./host-pi-ai.js')

/** Marks the AbortErrors this file raises itself, when it stops waiting for a call. */
const OWN_ABORT = Symbol('prime-compaction abort')

function abortError(signal) {
  const err = new Error('Compaction aborted')
  err.name = 'AbortError'
  if (signal && signal.reason !== undefined) err.cause = signal.reason
  Object.defineProperty(err, OWN_ABORT, { value: true })
  return err
}

const isOwnAbort = (err) => Boolean(err && err[OWN_ABORT])

/** The errors of a job's own verdict on an answer (not a failing streamFn's). */
const verdicts = new WeakSet()

/**
 * What `job.respond` threw: the job's verdict on the answer (the binding's
 * own Error, code `GenericFailure`) as an Error of its message, as the agents
 * raise theirs, whose `cause` is the overflow the streamFn threw where that
 * was the answer judged; anything else (a TypeError of bad input, or what a
 * getter of the answer threw) as it is, as the agents let it through.
 */
function judged(err, thrown) {
  let verdict
  try {
    if (typeof err !== 'object' || err === null || err.code !== 'GenericFailure') return err
    verdict = new Error(err.message, thrown === undefined ? undefined : { cause: thrown })
  } catch {
    return err
  }
  verdicts.add(verdict)
  return verdict
}

/**
 * Calls `onAbort` once `signal` aborts, and gives back how to stop
 * listening; null where the signal cannot be listened to. A signal-like
 * object without an EventTarget's methods, or whose methods throw, is only
 * asked `aborted`, as the agents ask it: it must not reject a call the
 * agents would finish, nor throw where no caller can catch it.
 */
function listen(signal, onAbort) {
  if (typeof signal.addEventListener !== 'function' || typeof signal.removeEventListener !== 'function') return null
  try {
    signal.addEventListener('abort', onAbort, { once: true })
  } catch {
    return null
  }
  return () => {
    try {
      signal.removeEventListener('abort', onAbort)
    } catch {
      // The caller's object: nothing of ours to undo.
    }
  }
}

/** Rejects as soon as `signal` aborts, whatever `promise` does. */
function unlessAborted(promise, signal) {
  if (!signal) return promise
  if (signal.aborted) {
    // Settled here or not, `promise` must not become an unhandled rejection.
    Promise.resolve(promise).catch(() => {})
    return Promise.reject(abortError(signal))
  }
  return new Promise((resolve, reject) => {
    const stop = listen(signal, () => reject(abortError(signal)))
    Promise.resolve(promise).then(
      (value) => {
        stop?.()
        resolve(value)
      },
      (err) => {
        stop?.()
        reject(err)
      },
    )
  })
}

/** Waits `ms`; false at once if `signal` is or becomes aborted first. */
function wait(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return resolve(false)
    const stop = signal
      ? listen(signal, () => {
          clearTimeout(timer)
          resolve(false)
        })
      : null
    const timer = setTimeout(() => {
      stop?.()
      // A signal only asked: aborted while we waited. What its getter
      // throws goes to the caller, not to the timer's.
      try {
        resolve(!(signal && signal.aborted))
      } catch (err) {
        reject(err)
      }
    }, ms)
  })
}

/**
 * Awaits what a callback returned: true once it settles (its rejection is
 * thrown), false if `signal` aborts first. Where the signal had aborted
 * before the call, the callback has until the next macrotask to settle.
 */
function settledBeforeAbort(value, signal) {
  return new Promise((resolve, reject) => {
    let stop = null
    let timer
    const end = () => {
      stop?.()
      if (timer !== undefined) clearImmediate(timer)
    }
    if (signal.aborted) timer = setImmediate(() => resolve(false))
    else
      stop = listen(signal, () => {
        end()
        resolve(false)
      })
    Promise.resolve(value).then(
      () => {
        end()
        resolve(true)
      },
      (err) => {
        end()
        reject(err)
      },
    )
  })
}

/**
 * One request and its retries, as pi-ai's retryAssistantCall makes them:
 * `retry` (a native SummaryRetry) names every step; the callbacks are
 * awaited with the arguments it gives. With `untilAborted`, a callback is
 * awaited only until `signal` aborts, as a call is (compaction stops
 * waiting then); the retry then ends as an abort at that step would end it.
 */
async function retrying(produce, retry, signal, callbacks, untilAborted = false) {
  const settled = untilAborted && signal ? (value) => settledBeforeAbort(value, signal) : async (value) => (await value, true)
  for (;;) {
    let response
    try {
      response = await produce()
    } catch (err) {
      // A call we stopped waiting for on abort: the retry it followed is over.
      const finished = isOwnAbort(err) ? retry.callAborted() : null
      if (finished) await settled(callbacks?.onRetryFinished?.(...finished))
      throw err
    }
    const step = retry.answer(response)
    if (step.finished && !(await settled(callbacks?.onRetryFinished?.(...step.finished)))) throw abortError(signal)
    if (!step.scheduled) return response
    if (!(await settled(callbacks?.onRetryScheduled?.(...step.scheduled))) || !(await wait(step.delayMs, signal))) {
      await settled(callbacks?.onRetryFinished?.(...retry.waitAborted(response)))
      const { errorMessage: _errorMessage, ...rest } = response
      return { ...rest, stopReason: 'aborted' }
    }
    if (!(await settled(callbacks?.onRetryAttemptStart?.()))) {
      const finished = retry.callAborted()
      if (finished) await settled(callbacks?.onRetryFinished?.(...finished))
      throw abortError(signal)
    }
  }
}

/**
 * The exports of agent line `line` (the native line index) that summarize.
 * `helpers` are the planning exports they build on.
 */
function summarizing(native, line, { argumentEntries, computeFileLists, branchPreparation }) {
  const rules = native.summaryRules(line)
  const SUMMARIZATION_SYSTEM_PROMPT = native.summarizationSystemPrompt()

  /** The model call's context, in the shape the line's agent sends. */
  function contextOf(request) {
    const user = { role: 'user', content: [{ type: 'text', text: request.prompt }], timestamp: Date.now() }
    return rules.transcriptContext
      ? { messages: [{ role: 'system', content: request.systemPrompt, timestamp: 0 }, user] }
      : { systemPrompt: request.systemPrompt, messages: [user] }
  }

  /** The request's options: the keys the job names, in its order. */
  function optionsOf(request, values) {
    const options = {}
    for (const key of request.optionKeys) options[key] = key === 'maxTokens' ? request.maxTokens : values[key]
    return options
  }

  /** What completeSummarization sends: the caller's options, then the line's additions. */
  function requestOptionsOf(options) {
    return { ...options, ...rules.completeSummarization, sessionId: options.sessionId ?? native.newSessionId() }
  }

  /** One model call: through streamFn when given, else the host's completeSimple. */
  async function produce(model, context, options, streamFn, callers) {
    if (streamFn) return (await streamFn(model, context, options)).result()
    const completeSimple = await completeSimpleOf(rules.completeSimpleFrom, callers)
    return completeSimple(model, context, options)
  }

  /** A call compaction stops waiting for once `signal` aborts. */
  async function callModel(model, context, options, streamFn, signal, callers) {
    if (!streamFn) return unlessAborted(produce(model, context, options, undefined, callers), signal)
    const stream = await unlessAborted(streamFn(model, context, options), signal)
    return unlessAborted(stream.result(), signal)
  }

  async function completeSummarization(model, context, options, streamFn, retry, callbacks) {
    const callers = streamFn ? undefined : callerFiles(completeSummarization)
    const requestOptions = requestOptionsOf(options)
    const once = () => produce(model, context, requestOptions, streamFn, callers)
    return retrying(once, new native.SummaryRetry(retry, false), requestOptions.signal, callbacks)
  }

  function getSummarizationFailure(response, label) {
    return native.getSummarizationFailure(response, label, line)
  }

  /**
   * The error answer a thrown `err` stands for when its message says the
   * request overflowed the model's context; undefined for any other.
   */
  function thrownOverflow(err) {
    let message
    try {
      message = typeof err === 'object' && err !== null ? err.message : undefined
    } catch {
      return undefined
    }
    if (typeof message !== 'string' || !native.isContextOverflow(message)) return undefined
    return { role: 'assistant', content: [], stopReason: 'error', errorMessage: message }
  }

  /**
   * Runs a native summarization job: each request goes out in turn, never
   * in parallel. Resolves with the usage of each answer the job accepted.
   */
  async function drive(job, call, inspect) {
    const { model, signal, streamFn, retry, callbacks, callers } = call
    const usages = []
    for (let request = job.next(); request !== null; request = job.next()) {
      if (signal && signal.aborted) throw abortError(signal)
      const context = contextOf(request)
      const options = optionsOf(request, call)
      let response
      // An overflow the streamFn threw, standing as the answer.
      let thrown
      try {
        if (rules.completeSummarization) {
          const requestOptions = requestOptionsOf(options)
          const once = () => callModel(model, context, requestOptions, streamFn, signal, callers)
          response = await retrying(once, new native.SummaryRetry(retry, true), signal, callbacks, true)
        } else {
          response = await callModel(model, context, options, streamFn, signal, callers)
        }
      } catch (err) {
        // An overflow thrown rather than answered: the job retries it
        // smaller, as it would the answer (the spec).
        response = signal && signal.aborted ? undefined : thrownOverflow(err)
        if (response === undefined) throw err
        thrown = err
      }
      if (inspect) inspect(response)
      let accepted
      try {
        accepted = job.respond(response)
      } catch (err) {
        throw judged(err, thrown)
      }
      if (accepted) usages.push(response.usage)
    }
    return usages
  }

  /**
   * The native job for `preparation`, and the file lists computeFileLists
   * made of its fileOps for it; without `files` (requests only, which show
   * no file lists), fileOps are not read.
   */
  function startCompactionJob(preparation, model, customInstructions, thinkingLevel, files = true) {
    let lists
    const listsOf = files ? (fileOps) => (lists = computeFileLists(fileOps)) : undefined
    const job = native.startCompaction(preparation, listsOf, model, customInstructions, line, thinkingLevel, argumentEntries)
    return { job, lists }
  }

  /**
   * What compact() resolves with once its signal has aborted: no summary, no
   * cut, nothing a caller could store. The agent reads the result's fields
   * and then checks the signal, as it does for the reference's compact() (which
   * resolves with whatever text the aborted request left); a rejection 0.78
   * would report as a failure.
   */
  function abortedCompaction() {
    return { aborted: true }
  }

  async function compact(
    preparation,
    model,
    apiKey,
    headers,
    customInstructions,
    signal,
    thinkingLevel,
    streamFn,
    env,
    retry,
    callbacks,
    sessionId,
  ) {
    if (signal && signal.aborted) return abortedCompaction()
    const callers = streamFn ? undefined : callerFiles(compact)
    const { job, lists } = startCompactionJob(preparation, model, customInstructions, thinkingLevel)
    const call = { model, apiKey, headers, env, signal, sessionId, reasoning: thinkingLevel, streamFn, retry, callbacks, callers }
    try {
      let usages
      try {
        usages = await drive(job, call)
      } catch (err) {
        if (signal && signal.aborted) return abortedCompaction()
        throw err
      }
      const result = job.result(usages)
      // The lists' own values: details are `unknown`, so not always strings.
      result.details = lists
      return result
    } finally {
      job.release()
    }
  }

  /**
   * The requests compact() would send for `preparation`, built by the same job,
   * without calling a model: the first attempt of each part (history, then the
   * turn prefix of a split turn). The turn-prefix prompt does not depend on the
   * history's answer, so a placeholder answer stands in for it.
   */
  function buildSummaryRequests(preparation, model, customInstructions) {
    const { job } = startCompactionJob(preparation, model, customInstructions, undefined, false)
    const requests = []
    try {
      for (let request = job.next(); request !== null; request = job.next()) {
        const { systemPrompt, prompt, part } = request
        requests.push('maxTokens' in request ? { systemPrompt, prompt, maxTokens: request.maxTokens, part } : { systemPrompt, prompt, part })
        job.respond({ role: 'assistant', content: [{ type: 'text', text: '-' }], stopReason: 'stop' })
      }
    } finally {
      job.release()
    }
    return requests
  }

  /** Runs a generateSummary job; `outcome(job, usages)` reads its result before the job is freed. */
  async function summarize(args, caller, outcome) {
    const [currentMessages, model, reserveTokens, apiKey, headers, signal, customInstructions, previousSummary, thinkingLevel, streamFn, env, retry, callbacks, sessionId] = args
    if (signal && signal.aborted) throw abortError(signal)
    const callers = streamFn ? undefined : callerFiles(caller)
    const job = native.startSummary(currentMessages, model, reserveTokens, customInstructions, previousSummary, line, thinkingLevel, argumentEntries)
    const call = { model, apiKey, headers, env, signal, sessionId, reasoning: thinkingLevel, streamFn, retry, callbacks, callers }
    try {
      return outcome(job, await drive(job, call))
    } catch (err) {
      // A string result could be taken for a summary: an abort rejects, however it ended.
      if (signal && signal.aborted && !isOwnAbort(err)) throw abortError(signal)
      throw err
    } finally {
      job.release()
    }
  }

  async function generateSummary(...args) {
    return summarize(args, generateSummary, (job) => job.summary())
  }

  async function generateSummaryWithUsage(...args) {
    return summarize(args, generateSummaryWithUsage, (job, usages) => job.summaryWithUsage(usages))
  }

  async function generateBranchSummary(entries, options) {
    const {
      model,
      apiKey,
      headers,
      env,
      signal,
      thinkingLevel,
      customInstructions,
      replaceInstructions,
      reserveTokens = 16384,
      streamFn,
      retry,
      callbacks,
    } = options
    const callers = streamFn ? undefined : callerFiles(generateBranchSummary)
    const contextWindow = model.contextWindow || 128000
    const { messages, fileOps, plan } = branchPreparation(entries, contextWindow - reserveTokens)
    // As the agent's: nothing to summarize needs no request, aborted or not.
    if (messages.length === 0) return { summary: 'No content to summarize' }
    if (signal && signal.aborted) return { aborted: true }
    const lists = computeFileLists(fileOps)
    const job = native.startBranchSummary(messages, plan, lists, model, reserveTokens, customInstructions, replaceInstructions, line, thinkingLevel, argumentEntries)
    const call = { model, apiKey, headers, env, signal, reasoning: thinkingLevel, streamFn, retry, callbacks, callers }
    try {
      let usages
      try {
        usages = await drive(job, call, (response) => {
          if (response && response.stopReason === 'aborted') throw abortError(signal)
        })
      } catch (err) {
        // Aborted: by the caller's signal, or an answer that says so (not
        // an error the streamFn threw that merely calls itself AbortError).
        if (isOwnAbort(err) || (signal && signal.aborted)) return { aborted: true }
        if (verdicts.has(err)) return { error: err.message }
        throw err
      }
      const result = job.branchResult(usages)
      result.readFiles = lists.readFiles
      result.modifiedFiles = lists.modifiedFiles
      return result
    } finally {
      job.release()
    }
  }

  // Declared as the line's agent declares them: the parameters up to
  // streamFn, then the line's own (their `length` counts them all).
  for (const [fn, upToStreamFn] of [
    [compact, 8],
    [generateSummary, 10],
    [generateSummaryWithUsage, 10],
  ]) {
    Object.defineProperty(fn, 'length', { value: upToStreamFn + rules.callParameters.length })
  }

  return {
    generateBranchSummary,
    compact,
    buildSummaryRequests,
    generateSummary,
    SUMMARIZATION_SYSTEM_PROMPT,
    // Exports some lines add; createApi keeps those the line lists.
    added: { generateSummaryWithUsage, completeSummarization, getSummarizationFailure },
  }
}

module.exports = { summarizing }
