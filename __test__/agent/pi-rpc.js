'use strict'
// The agent's own `pi` command in RPC mode against a scripted server: a few
// prompts, then a manual compaction (runPi). For agent/pi-command.test.js
// and node-versions.test.js.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startServer } = require('../helpers/openai-server.js')
const { kindOf, modelsJson } = require('./scripted-model.js')

const SUMMARY = '## Goal\nScripted summary of the questions so far.'
const PROMPTS = 3
/** A window the prompts never fill: the compaction is the RPC command's. */
const MODEL = { provider: 'scripted', id: 'm', name: 'M', contextWindow: 100000, maxTokens: 2000 }

/** The file the agent package's `pi` bin names. */
function piBin(line) {
  const pkg = JSON.parse(fs.readFileSync(path.join(line.packageDir, 'package.json'), 'utf8'))
  return path.join(line.packageDir, pkg.bin.pi)
}

/**
 * Runs `pi --mode rpc` (on `node` with `execArgv`, `env` over the run's own) against a scripted
 * server: PROMPTS prompts, then `{ type: 'compact' }`. `compaction` goes
 * over the settings file's compaction settings. Returns the compact
 * response, the summary requests' system prompts, the session file's
 * entries and its compaction entries, and stderr.
 */
async function runPi(line, env, node = line.node.binary, execArgv = [], compaction = {}) {
  let turn = 0
  const server = await startServer((body) => (kindOf(body) === 'agent' ? { text: `Answer ${++turn}: ${'word '.repeat(150)}` } : { text: SUMMARY }))
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `prime-compaction-pi-${line.version}-`))
  const agentDir = path.join(base, 'agent')
  const sessions = path.join(base, 'sessions')
  fs.mkdirSync(agentDir)
  fs.writeFileSync(path.join(agentDir, 'models.json'), modelsJson(server.baseUrl, MODEL))
  fs.writeFileSync(path.join(agentDir, 'settings.json'), JSON.stringify({ compaction: { enabled: false, reserveTokens: 1000, keepRecentTokens: 100, ...compaction }, retry: { enabled: false }, ...line.settings }))
  const child = spawn(node, [...execArgv, piBin(line), '--mode', 'rpc', '--model', `${MODEL.provider}/${MODEL.id}`, '--session-dir', sessions, '--no-extensions', '--no-skills', '--no-context-files'], {
    cwd: base,
    env: { ...process.env, NODE_OPTIONS: '', HOME: base, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: '1', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const records = []
  let wake = () => {}
  let pending = ''
  child.stdout.on('data', (d) => {
    pending += d
    const lines = pending.split('\n')
    pending = lines.pop()
    for (const text of lines) if (text.trim()) records.push(JSON.parse(text))
    wake()
  })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  /** The first record not taken yet that `test` accepts. */
  const next = async (test) => {
    for (;;) {
      const at = records.findIndex(test)
      if (at >= 0) return records.splice(at, 1)[0]
      const woken = new Promise((resolve) => (wake = resolve))
      const gone = await Promise.race([woken.then(() => false), exited.then(() => true)])
      if (gone && records.findIndex(test) < 0) throw new Error(`pi exited before a record came; stderr:\n${stderr}`)
    }
  }
  const send = (command) => child.stdin.write(`${JSON.stringify(command)}\n`)
  try {
    for (let k = 0; k < PROMPTS; k++) {
      send({ id: `p${k}`, type: 'prompt', message: `Question ${k}: ${'text '.repeat(100)}` })
      await next((r) => r.type === 'agent_end')
    }
    send({ id: 'c', type: 'compact' })
    const compacted = await next((r) => r.type === 'response' && r.command === 'compact')
    const [file] = fs.readdirSync(sessions, { recursive: true }).filter((f) => f.endsWith('.jsonl'))
    const entries = fs.readFileSync(path.join(sessions, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    return {
      compacted,
      systemPrompts: server.requests.filter((r) => kindOf(r.body) === 'summary').map((r) => r.body.messages[0].content),
      compactions: entries.filter((e) => e.type === 'compaction'),
      entries,
      agentTurns: turn,
      stderr,
    }
  } finally {
    child.kill()
    await exited
    await server.close()
    fs.rmSync(base, { recursive: true, force: true })
  }
}

module.exports = { runPi, SUMMARY, PROMPTS }
