'use strict'
// A throwaway npm registry for the release test: verdaccio on 127.0.0.1 with
// its storage in `dir`, no uplinks (it proxies nothing, so a name it was not
// given is a 404, never a download), and one user whose token may publish.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
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

async function waitFor(url, child, output, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode}:\n${output.join('')}`)
    try {
      if ((await fetch(url)).ok) return
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
    const res = await fetch(`${url}-/user/org.couchdb.user:${user}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: user, password: 'release-test-password' }),
    })
    const body = await res.json()
    if (!res.ok || !body.token) throw new Error(`could not add a registry user: ${res.status} ${JSON.stringify(body)}`)
    return { url, token: body.token, stop, output }
  } catch (err) {
    await stop()
    throw err
  }
}

module.exports = { startRegistry }
