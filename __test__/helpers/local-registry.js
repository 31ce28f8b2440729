'use strict'
// A throwaway npm registry for the release test: verdaccio on 127.0.0.1 with
// its storage in `dir`, no uplinks (it proxies nothing, so a name it was not
// given is a 404, never a download), and one user whose token may publish.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')

const VERDACCIO = require.resolve('verdaccio/bin/verdaccio')

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * One HTTP request on a connection of its own (no keep-alive: a pooled
 * connection the registry has since closed fails the next request), resolving
 * to `{ status, body }` with the body parsed as JSON where it is JSON.
 */
function request(url, { method = 'GET', json } = {}) {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? undefined : JSON.stringify(json)
    const req = http.request(url, { method, agent: false, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed = text
        try {
          parsed = JSON.parse(text)
        } catch {
          // not JSON: kept as text
        }
        resolve({ status: res.statusCode, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function waitFor(url, child, output, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode}:\n${output.join('')}`)
    try {
      if ((await request(url)).status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`verdaccio did not answer ${url} within ${timeoutMs} ms:\n${output.join('')}`)
}

/** Starts the registry; resolves to `{ url, token, stop }`. */
async function startRegistry(dir) {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/`
  const config = path.join(dir, 'config.yaml')
  fs.writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(path.join(dir, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(path.join(dir, 'htpasswd'))}`,
      '    max_users: 1',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'web:',
      '  enable: false',
      'log: { type: stdout, format: json, level: warn }',
      '',
    ].join('\n'),
  )
  const output = []
  const child = spawn(process.execPath, [VERDACCIO, '--config', config, '--listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.on('data', (d) => output.push(String(d)))
  child.stderr.on('data', (d) => output.push(String(d)))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }
  try {
    await waitFor(`${url}-/ping`, child, output, 30_000)
    const user = 'release-test'
    const { status, body } = await request(`${url}-/user/org.couchdb.user:${user}`, { method: 'PUT', json: { name: user, password: 'release-test-password' } })
    if (status !== 201 || !body.token) throw new Error(`could not add a registry user: ${status} ${JSON.stringify(body)}`)
    return { url, token: body.token, stop, output }
  } catch (err) {
    await stop()
    throw err
  }
}

module.exports = { startRegistry, request }
