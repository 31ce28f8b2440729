'use strict'
// A local stand-in for an OpenAI-compatible chat-completions server, on
// 127.0.0.1 and a random port, for the CLI tests. Each POST to
// /v1/chat/completions is answered by the next scripted reply:
//   { text, finish }                  plain JSON completion
//   { sse: ['chunk', ...], finish }   server-sent events, one delta per chunk, then [DONE]
//   { status, error }                 an error body { error: { message } }
//   { hang: true }                    never answers (for timeouts)
// The last reply repeats once the script runs out. Requests are recorded.

const http = require('node:http')

function completion(text, finish = 'stop') {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1,
    model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }
}

function chunk(delta, finish = null) {
  return { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model: 'test-model', choices: [{ index: 0, delta, finish_reason: finish }] }
}

async function startServer(script) {
  const requests = []
  const hanging = new Set()
  let n = 0
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      let parsed
      try {
        parsed = JSON.parse(body)
      } catch {
        parsed = body
      }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body: parsed })
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }))
        return
      }
      const reply = typeof script === 'function' ? script(parsed, n) : script[Math.min(n, script.length - 1)]
      n++
      if (reply.hang) {
        hanging.add(res)
        return
      }
      if (reply.status) {
        res.writeHead(reply.status, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: reply.error, type: 'invalid_request_error' } }))
        return
      }
      if (reply.sse) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
        res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }))}\n\n`)
        for (const piece of reply.sse) res.write(`data: ${JSON.stringify(chunk({ content: piece }))}\n\n`)
        res.write(`data: ${JSON.stringify(chunk({}, reply.finish || 'stop'))}\n\n`)
        res.end('data: [DONE]\n\n')
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(completion(reply.text, reply.finish)))
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

module.exports = { startServer }
