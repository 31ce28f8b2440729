'use strict'
// A local stand-in for an OpenAI-compatible chat-completions server, on
// 127.0.0.1 and a random port, for the CLI tests and the real-agent tests.
// Each POST to /v1/chat/completions is answered by the next scripted reply:
//   { text, finish }                  plain JSON completion (server-sent events when the request streams)
//   { sse: ['chunk', ...], finish }   server-sent events, one delta per chunk, then [DONE]
//   { ..., toolCalls: [{ id, name, arguments }] }   tool calls after the text (arguments: a JSON string)
//   { ..., usage: { prompt_tokens, completion_tokens, ...more } }   the usage reported (a final chunk when streaming)
//   { status, error, headers }        an error body { error: { message } }, with extra response headers
//   { status, noBody: true }          an error status with an empty body
//   { hang: true }                    never answers (for timeouts and aborts)
// and, for fault injection:
//   { ..., chunkDelayMs }             server-sent events, each written chunkDelayMs after the one before
//   { ..., onEnd }                    server-sent events; onEnd() is called once the last one is sent
//   { ..., resetAfterChunks: k }      server-sent events, the socket destroyed after the first k chunks
//   { ..., stallAfterChunks: k }      server-sent events, nothing more after the first k chunks
//   { raw, contentType }              status 200 and `raw` (a string or Buffer) as the whole body;
//                                     an array of them is written a part at a time, 20 ms apart
//   { raw: [...], open: true }        the same, the response then left open
//   { destroy: true }                 the socket destroyed before any response
// A reply may also be a Promise of one. The last reply repeats once the
// script runs out. Requests are recorded, with the body as parsed and as sent (`raw`),
// and when each came (`at`, Date.now()).

const http = require('node:http')

const DEFAULT_USAGE = { prompt_tokens: 1, completion_tokens: 1 }

function usageOf(reply) {
  const { prompt_tokens, completion_tokens, ...more } = reply.usage || DEFAULT_USAGE
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens, ...more }
}

function toolCallsOf(reply) {
  return (reply.toolCalls || []).map((call, index) => ({
    index,
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }))
}

function completion(reply) {
  const toolCalls = toolCallsOf(reply)
  const message = { role: 'assistant', content: reply.text === undefined ? null : reply.text }
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map(({ index, ...call }) => call)
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, message, finish_reason: reply.finish || (toolCalls.length > 0 ? 'tool_calls' : 'stop') }],
    usage: usageOf(reply),
  }
}

function chunk(delta, finish = null) {
  return { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model: 'test-model', choices: [{ index: 0, delta, finish_reason: finish }] }
}

/** The server-sent events of `reply`, each a complete `data:` line with its blank line. */
function eventsOf(reply, includeUsage) {
  const pieces = reply.sse || (reply.text === undefined ? [] : [reply.text])
  const toolCalls = toolCallsOf(reply)
  const events = [`data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }))}\n\n`]
  for (const piece of pieces) events.push(`data: ${JSON.stringify(chunk({ content: piece }))}\n\n`)
  for (const call of toolCalls) events.push(`data: ${JSON.stringify(chunk({ tool_calls: [call] }))}\n\n`)
  const finish = reply.finish || (toolCalls.length > 0 ? 'tool_calls' : 'stop')
  events.push(`data: ${JSON.stringify(chunk({}, finish))}\n\n`)
  if (includeUsage) events.push(`data: ${JSON.stringify({ ...chunk({}), choices: [], usage: usageOf(reply) })}\n\n`)
  events.push('data: [DONE]\n\n')
  return events
}

async function writeEvents(res, reply, includeUsage, hanging) {
  const events = eventsOf(reply, includeUsage)
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (let i = 0; i < events.length; i++) {
    if (reply.resetAfterChunks === i) {
      res.socket.destroy()
      return
    }
    if (reply.stallAfterChunks === i) {
      // Headers flushed, the rest never comes.
      res.flushHeaders()
      hanging.add(res)
      res.on('close', () => hanging.delete(res))
      return
    }
    if (i > 0 && reply.chunkDelayMs) {
      await new Promise((resolve) => setTimeout(resolve, reply.chunkDelayMs))
      if (res.destroyed) return
    }
    if (i === events.length - 1) res.end(events[i], reply.onEnd)
    else res.write(events[i])
  }
}

async function startServer(script, { anyPath = false } = {}) {
  const requests = []
  const hanging = new Set()
  let n = 0
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d) => (body += d))
    req.on('end', async () => {
      let parsed
      try {
        parsed = JSON.parse(body)
      } catch {
        parsed = body
      }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body: parsed, raw: body, at: Date.now() })
      if (req.method !== 'POST' || !(req.url === '/v1/chat/completions' || (anyPath && req.url.endsWith('/chat/completions')))) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }))
        return
      }
      const index = n++
      const reply = await (typeof script === 'function' ? script(parsed, index) : script[Math.min(index, script.length - 1)])
      if (reply.hang) {
        hanging.add(res)
        res.on('close', () => hanging.delete(res))
        return
      }
      if (reply.destroy) {
        req.socket.destroy()
        return
      }
      if (reply.status && reply.noBody) {
        res.writeHead(reply.status, reply.headers || {})
        res.end()
        return
      }
      if (reply.status && reply.body !== undefined) {
        res.writeHead(reply.status, { 'content-type': reply.contentType || 'text/plain', ...(reply.headers || {}) })
        res.end(reply.body)
        return
      }
      if (reply.status) {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers || {}) })
        res.end(JSON.stringify({ error: { message: reply.error, type: 'invalid_request_error' } }))
        return
      }
      if (reply.endless !== undefined) {
        // The same chunk again and again, as fast as the client reads, until it hangs up.
        res.writeHead(200, { 'content-type': reply.contentType || 'text/event-stream' })
        if (reply.first) res.write(reply.first)
        let open = true
        res.on('close', () => (open = false))
        while (open) {
          if (!res.write(reply.endless)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve))
        }
        return
      }
      if (reply.raw !== undefined) {
        res.writeHead(200, { 'content-type': reply.contentType || 'text/event-stream', 'cache-control': 'no-cache' })
        for (const part of Array.isArray(reply.raw) ? reply.raw.slice(0, -1) : []) {
          res.write(part)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        const last = Array.isArray(reply.raw) ? reply.raw[reply.raw.length - 1] : reply.raw
        if (reply.open) {
          res.write(last)
          hanging.add(res)
          res.on('close', () => hanging.delete(res))
        } else res.end(last)
        return
      }
      if (reply.sse || (parsed && parsed.stream === true)) {
        await writeEvents(res, reply, Boolean(parsed && parsed.stream_options && parsed.stream_options.include_usage), hanging)
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(completion(reply)))
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy()
        server.closeAllConnections()
        server.close(resolve)
      }),
  }
}

module.exports = { startServer, eventsOf }
