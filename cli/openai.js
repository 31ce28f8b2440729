'use strict'
// A streamFn for compact() that talks to any OpenAI-compatible
// chat-completions endpoint (llama.cpp, vLLM, Ollama, ...), with plain JSON
// or server-sent-event responses. Every failure becomes an assistant message
// with stopReason 'error' and the provider's own words, so compact() can
// recognise a context overflow and retry with less.

function assistantMessage(model, text, stopReason, errorMessage, toolCalls = [], usage = undefined) {
  const message = {
    role: 'assistant',
    content: [{ type: 'text', text }, ...toolCalls],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: usageOf(usage),
    stopReason,
    timestamp: Date.now(),
  }
  if (errorMessage !== undefined) message.errorMessage = errorMessage
  return message
}

/**
 * The server's `usage` as an assistant message's usage: `prompt_tokens`, of
 * which some were read from its cache (`prompt_tokens_details.cached_tokens`;
 * DeepSeek's `prompt_cache_hit_tokens`, Kimi's top-level `cached_tokens`) or
 * written to it (`prompt_tokens_details.cache_write_tokens`), and
 * `completion_tokens`; zeros for what it does not report. No cost: the
 * server names no price.
 */
function usageOf(usage) {
  const count = (n) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0)
  const prompt = count(usage?.prompt_tokens)
  const cacheRead = count(usage?.prompt_tokens_details?.cached_tokens ?? usage?.prompt_cache_hit_tokens ?? usage?.cached_tokens)
  const cacheWrite = count(usage?.prompt_tokens_details?.cache_write_tokens)
  const input = Math.max(0, prompt - cacheRead - cacheWrite)
  const output = count(usage?.completion_tokens)
  const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 }
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost }
}

function stopReasonOf(finishReason) {
  if (finishReason === 'length') return 'length'
  if (finishReason === 'tool_calls' || finishReason === 'function_call') return 'toolUse'
  return 'stop'
}

/** The error text of an error body: `{ error: { message } }`, `{ error: "..." }`, `{ message }`, or the raw text. */
function errorText(body) {
  try {
    const value = JSON.parse(body)
    const error = value && value.error
    if (typeof error === 'string') return error
    // The code too, where the message leaves it out (OpenAI's context_length_exceeded).
    if (error && typeof error.message === 'string') return typeof error.code === 'string' && !error.message.includes(error.code) ? `${error.message} (${error.code})` : error.message
    if (value && typeof value.message === 'string') return value.message
    if (value && typeof value.detail === 'string') return value.detail
  } catch {
    // not JSON: the text as sent
  }
  // A proxy's HTML error page: its title.
  const title = /<title>([^<]*)<\/title>/i.exec(body)
  if (title && title[1].trim()) return title[1].trim()
  return body.trim() || '(empty response body)'
}

/** A message's or delta's `content`: a string, or parts whose `text` parts are the text (a `thinking` part is not). */
function contentText(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((part) => (part && part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('')
}

function toolCallsOf(calls) {
  return (calls || []).map((c, i) => ({
    type: 'toolCall',
    id: c.id || `call_${i}`,
    name: (c.function && c.function.name) || '',
    arguments: {},
  }))
}

function fromJson(model, value) {
  try {
    return answerOfJson(model, value)
  } catch (err) {
    // (a field of the wrong type: `tool_calls: "abc"`)
    return assistantMessage(model, '', 'error', `the response is malformed: ${err.message}`)
  }
}

function answerOfJson(model, value) {
  if (value && value.error) return assistantMessage(model, '', 'error', errorText(JSON.stringify(value)))
  const choice = value && Array.isArray(value.choices) ? value.choices[0] : undefined
  if (!choice) return assistantMessage(model, '', 'error', 'the response has no choices')
  const message = choice.message || {}
  const text = contentText(message.content)
  const calls = toolCallsOf(message.tool_calls)
  const stop = calls.length > 0 ? 'toolUse' : stopReasonOf(choice.finish_reason)
  // Some servers (Moonshot) put it in the choice.
  return assistantMessage(model, text, stop, undefined, calls, value.usage ?? choice.usage)
}

// The most an answer may hold, in UTF-16 units (its body, as text): a
// summary is far shorter, and a server that never stops would otherwise
// fill the memory long before --timeout ends the request.
const MAX_ANSWER_UNITS = 64 * 2 ** 20

const PAST_THE_CAP = `past ${MAX_ANSWER_UNITS / 2 ** 20} M characters`

function tooLong(model) {
  return assistantMessage(model, '', 'error', `the answer went on ${PAST_THE_CAP}, far more than a summary holds: the server did not stop`)
}

/** The body as text, as `response.text()` gives it, or undefined once it is past MAX_ANSWER_UNITS. */
async function cappedText(response) {
  if (response.body === null) return ''
  const decoder = new TextDecoder()
  const parts = []
  let received = 0
  for await (const chunk of response.body) {
    const text = decoder.decode(chunk, { stream: true })
    received += text.length
    if (received > MAX_ANSWER_UNITS) return undefined
    parts.push(text)
  }
  parts.push(decoder.decode())
  return parts.join('')
}

// A line end in an event stream: CRLF, LF or a lone CR (the SSE standard).
const LINE_END = /\r\n|\r|\n/
const ANY_LINE_END = /[\r\n]/

/**
 * Reads an SSE body: `data: {...}` events carrying `choices[0].delta`, ended
 * by `data: [DONE]`. An error is an event whose data has `error`, an event
 * named `error`, or (llama.cpp) an `error:` line; an answer that ends with
 * no `finish_reason`, `[DONE]` or not, is incomplete.
 */
async function fromEventStream(model, body, onText) {
  const decoder = new TextDecoder()
  let buffer = ''
  let text = ''
  let finishReason
  let usage
  let done = false
  const calls = []
  let data = []
  let eventName = ''
  // Set where a line ended at a CR that ended the buffer: an LF opening the
  // next chunk is that line end's.
  let endedAtCr = false
  // The next whole line taken from `buffer`.
  const takeLine = () => {
    if (endedAtCr && buffer.length > 0) {
      if (buffer.charCodeAt(0) === 10) buffer = buffer.slice(1)
      endedAtCr = false
    }
    const end = LINE_END.exec(buffer)
    if (end === null) return undefined
    const line = buffer.slice(0, end.index)
    buffer = buffer.slice(end.index + end[0].length)
    endedAtCr = end[0] === '\r' && buffer.length === 0
    return line
  }
  const dispatch = () => {
    const named = eventName
    eventName = ''
    if (data.length === 0) return undefined
    const payload = data.join('\n')
    data = []
    if (named === 'error') return assistantMessage(model, text, 'error', errorText(payload))
    if (payload.trim() === '[DONE]') {
      done = true
      return undefined
    }
    const malformed = () => assistantMessage(model, text, 'error', `malformed stream event: ${payload.slice(0, 200)}`)
    let event
    try {
      event = JSON.parse(payload)
    } catch {
      return malformed()
    }
    try {
      return takeEvent(event, payload)
    } catch {
      // (`data: null`, `tool_calls: [null]`: the answer's fault, not the connection's)
      return malformed()
    }
  }
  const takeEvent = (event, payload) => {
    if (event.error) return assistantMessage(model, text, 'error', errorText(payload))
    // Sent with the last chunk, or in one of its own with no choices (some servers: in the choice).
    if (event.usage) usage = event.usage
    const choice = Array.isArray(event.choices) ? event.choices[0] : undefined
    if (!choice) return undefined
    if (!event.usage && choice.usage) usage = choice.usage
    const delta = choice.delta || {}
    const part = contentText(delta.content)
    if (part.length > 0) {
      text += part
      if (onText) onText(text.length)
    }
    if (Array.isArray(delta.tool_calls)) calls.push(...delta.tool_calls.filter((c) => c.id || (c.function && c.function.name)))
    if (choice.finish_reason) finishReason = choice.finish_reason
    return undefined
  }
  // Each line's field; an error ends the read with it.
  const readLines = () => {
    let line
    while ((line = takeLine()) !== undefined) {
      if (line === '') {
        const failed = dispatch()
        if (failed) return failed
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''))
      } else if (line.startsWith('event:')) {
        eventName = line.slice(6).trim()
      } else if (line.startsWith('error:')) {
        // llama.cpp's own field for an error, outside the SSE standard.
        return assistantMessage(model, text, 'error', errorText(line.slice(6).trim()))
      }
    }
    return undefined
  }
  // Text with no line end in it waits here, to be joined once one comes: a
  // line sent in many chunks is then copied once, not once a chunk.
  let waiting = []
  let received = 0
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true })
    received += text.length
    if (received > MAX_ANSWER_UNITS) return tooLong(model)
    waiting.push(text)
    if (!ANY_LINE_END.test(text)) continue
    buffer += waiting.join('')
    waiting = []
    const failed = readLines()
    if (failed) return failed
    if (done) break
  }
  buffer += waiting.join('') + decoder.decode()
  const failedLast = readLines()
  if (failedLast) return failedLast
  // A last line with no line end still carries its data.
  if (buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, ''))
  const failed = dispatch()
  if (failed) return failed
  if (finishReason === undefined) {
    return assistantMessage(model, text, 'error', `the event stream ended ${done ? 'with [DONE] but no finish_reason' : 'before the answer was complete'}: the answer may be cut short`)
  }
  const toolCalls = toolCallsOf(calls)
  return assistantMessage(model, text, toolCalls.length > 0 ? 'toolUse' : stopReasonOf(finishReason), undefined, toolCalls, usage)
}

/**
 * Why a request failed: before the response (`answered` false) or while its
 * body came. No URL in it: compact()'s retry rules read the whole message,
 * and a URL's words (a path with "timeout" in it) are no failure of the
 * request; the command names the URL when it reports the failure.
 */
function describeFetchError(err, answered) {
  const cause = err && err.cause
  const code = (cause && (cause.code || cause.message)) || (err && (err.code || err.message)) || err
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return "no response headers within 300 s (the limit of Node's fetch, whatever --timeout says); with --stream, a server that streams sends them with its first words"
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return "nothing more of the answer for 300 s (the limit of Node's fetch between parts of an answer, whatever --timeout says)"
  }
  // The cause's words too (undici's "other side closed" for UND_ERR_SOCKET):
  // compact()'s retry rules read them.
  const words = cause && typeof cause.message === 'string' && cause.message !== '' && cause.message !== code ? ` (${cause.message})` : ''
  if (answered) return `the answer broke off: ${code}${words}`
  if (UNREACHABLE.has(code)) return `cannot reach the server: ${code}${words}`
  return `the request failed: ${code}${words}`
}

/**
 * How long the server asks to be left alone before another request, in ms,
 * as pi-ai's provider retries read it: `retry-after-ms`, else `retry-after`
 * in seconds or as an HTTP date; undefined where it names none.
 */
function retryAfterMsOf(headers) {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms)) return ms
  const after = headers.get('retry-after')
  if (!after) return undefined
  const seconds = Number.parseFloat(after)
  const delay = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000
  return Number.isFinite(delay) ? delay : undefined
}

/** A 400 or 422 whose message names the `stream_options` field. */
function rejectsStreamOptions(status, text) {
  return (status === 400 || status === 422) && /stream_options/.test(text)
}

// Errors of a connection that never came about.
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT'])

/**
 * `streamFn(model, context, options)` for compact(): one POST to
 * `{baseUrl}/chat/completions` per request. `timeoutMs` bounds each request
 * (headers and body); `onEvent` hears about progress, and of each failure
 * of the request itself (`{ type: 'failed', url, message }`: an HTTP error,
 * no connection, a timeout, a broken answer), whose message leaves out the URL.
 */
function openAiStreamFn({ baseUrl, stream = false, timeoutMs, onEvent = () => {} }) {
  const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`
  // Cleared once the server rejects the field: it then streams no usage.
  let askUsage = stream
  return (model, context, options = {}) => {
    const result = (async () => {
      // Either context shape: { systemPrompt, messages } or a transcript whose first message is the system prompt.
      const system = context.messages.find((m) => m.role === 'system')
      const user = context.messages.find((m) => m.role === 'user')
      const body = {
        model: model.id,
        messages: [
          { role: 'system', content: system ? contentText(system.content) : context.systemPrompt },
          { role: 'user', content: contentText(user.content) },
        ],
        // Lines that send no maxTokens leave the cap to the model, as pi-ai does.
        max_tokens: options.maxTokens ?? model.maxTokens,
      }
      if (stream) body.stream = true
      // Without it, OpenAI-style servers report no usage in a stream.
      if (askUsage) body.stream_options = { include_usage: true }
      const headers = { 'content-type': 'application/json', ...(options.headers || {}) }
      if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`
      try {
        new Headers(headers)
      } catch {
        // fetch's own error would quote the key.
        return assistantMessage(model, '', 'error', 'a request header holds a character HTTP cannot carry (a line break in the API key?); the value is not shown here')
      }
      const signals = []
      if (options.signal) signals.push(options.signal)
      const timeout = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined
      if (timeout) signals.push(timeout)
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
      onEvent({ type: 'request', url, body })
      // A failure of the request itself, whose words leave out the URL:
      // `onEvent` hears which. An HTTP error's Retry-After goes with it
      // (`retryAfterMs`: compact() waits that long before a retry).
      const failed = (message, retryAfterMs) => {
        const trimmed = message.trim()
        onEvent({ type: 'failed', url, message: trimmed, retryAfterMs })
        const answer = assistantMessage(model, '', 'error', trimmed)
        if (retryAfterMs !== undefined) answer.retryAfterMs = retryAfterMs
        return answer
      }
      let answered = false
      try {
        let response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal })
        answered = true
        if (!response.ok) {
          let text = await cappedText(response)
          if (body.stream_options && text !== undefined && rejectsStreamOptions(response.status, text)) {
            // A server that takes no stream_options: once more without it, and from now on.
            askUsage = false
            const { stream_options: _rejected, ...again } = body
            onEvent({ type: 'request', url, body: again, note: 'again, without stream_options' })
            answered = false
            // Within the same --timeout as the first attempt.
            response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(again), signal })
            answered = true
            if (!response.ok) text = await cappedText(response)
          }
          if (!response.ok) {
            if (text === undefined) return failed(`${response.status}, with an answer ${PAST_THE_CAP}`)
            return failed(`${response.status} ${errorText(text)}`, retryAfterMsOf(response.headers))
          }
        }
        const type = (response.headers.get('content-type') || '').toLowerCase()
        if (type.includes('text/event-stream')) {
          return await fromEventStream(model, response.body, (chars) => onEvent({ type: 'text', chars }))
        }
        const text = await cappedText(response)
        if (text === undefined) return tooLong(model)
        let value
        try {
          value = JSON.parse(text)
        } catch {
          // An event stream sent under another type.
          if (stream && text.trimStart().startsWith('data:')) return await fromEventStream(model, [new TextEncoder().encode(text)])
          return assistantMessage(model, '', 'error', text.trim() === '' ? 'the response is empty' : `the response is not JSON: ${text.slice(0, 200)}`)
        }
        return fromJson(model, value)
      } catch (err) {
        if (timeout && timeout.aborted && !(options.signal && options.signal.aborted)) {
          return failed(`no complete answer within ${timeoutMs} ms (--timeout)`)
        }
        if (options.signal && options.signal.aborted) return assistantMessage(model, '', 'aborted', 'aborted')
        return failed(describeFetchError(err, answered))
      }
    })()
    return { result: () => result }
  }
}

module.exports = { openAiStreamFn }
