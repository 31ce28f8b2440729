'use strict'
// Without a streamFn, summary requests go to completeSimple of the host
// agent's own pi-ai: the root of @earendil-works/pi-ai in 0.78, its /compat
// module in 1.6 (installed here nested under pi-coding-agent-1.6). Each run
// is a child process talking to a local OpenAI-compatible server, with the
// real pi-ai packages doing the HTTP.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { PKG_DIRS } = require('./helpers/reference')
const { hostOf, resolveFrom } = require('../lib/host-pi-ai.js')

jest.setTimeout(60_000)

const ROOT = path.join(__dirname, '..')
const SERVER = path.join(__dirname, 'helpers', 'openai-server.js')
const AGENT_16 = PKG_DIRS['1.6']
const PI_AI_16 = path.join(AGENT_16, 'node_modules', '@earendil-works', 'pi-ai')
const PI_AI_078 = path.join(ROOT, 'node_modules', '@earendil-works', 'pi-ai')

let dir
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-fallback-'))
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const MODEL_SOURCE = `{ id: 'm1', name: 'M1', api: 'openai-completions', provider: 'scripted', baseUrl: server.baseUrl, reasoning: false,
  input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 6000, maxTokens: 1000 }`

/** Runs an ES module in a child; it prints one JSON line. */
function runModule(name, source, args = []) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, source)
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [file, ...args], { cwd: dir, timeout: 50_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`))
      else resolve(JSON.parse(stdout.trim().split('\n').pop()))
    }),
  )
}

/**
 * A script that serves one summary and calls `call` (an expression using
 * `m`, `model`, `prep`); `extra`, an expression evaluated after it, is
 * printed as `extra`.
 */
function script(importLine, call, extra) {
  return `
import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const { startServer } = require(${JSON.stringify(SERVER)})
${importLine}
const server = await startServer([{ text: 'Summary from the server.', usage: { prompt_tokens: 40, completion_tokens: 6 } }])
const model = ${MODEL_SOURCE}
const prep = { firstKeptEntryId: 'a', messagesToSummarize: [{ role: 'user', content: 'fix the parser', timestamp: 1 }], turnPrefixMessages: [],
  isSplitTurn: false, tokensBefore: 1, fileOps: { read: new Set(['src/a.ts']), written: new Set(), edited: new Set() }, settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 } }
let out
try {
  out = { resolved: await ${call} }
} catch (err) {
  out = { rejected: err.message }
}
${extra === undefined ? '' : `out.extra = ${extra}`}
out.requests = server.requests.map((r) => ({ roles: r.body.messages.map((msg) => msg.role), system: r.body.messages[0].content, auth: r.headers.authorization }))
await server.close()
console.log(JSON.stringify(out))
`
}

/** A folder that looks like an agent package with its own (linked) pi-ai, and a module in it that calls ours. */
function fakeHost(name, piAiDir, line) {
  const host = path.join(dir, name, 'node_modules', '@earendil-works', 'pi-coding-agent')
  fs.mkdirSync(path.join(host, 'dist'), { recursive: true })
  fs.mkdirSync(path.join(host, 'node_modules', '@earendil-works'), { recursive: true })
  fs.writeFileSync(path.join(host, 'package.json'), JSON.stringify({ name: '@earendil-works/pi-coding-agent', version: line === '1.6' ? '1.6.0' : '0.78.1', type: 'module' }))
  fs.symlinkSync(piAiDir, path.join(host, 'node_modules', '@earendil-works', 'pi-ai'), 'dir')
  const caller = path.join(host, 'dist', 'caller.js')
  fs.writeFileSync(caller, `export function compactFor(m, ...args) { return m.compact(...args) }\n`)
  return { host, caller }
}

describe.each([
  ['0.78', PI_AI_078],
  ['1.6', PI_AI_16],
])('agent line %s', (line, piAi) => {
  test("called from inside an agent: that agent's pi-ai summarizes, through the local server", async () => {
    const { caller } = fakeHost(`host-${line}`, piAi, line)
    const entry = path.join(ROOT, `agent-${line}.js`)
    const out = await runModule(
      `host-${line}.mjs`,
      script(
        `const m = require(${JSON.stringify(entry)})\nconst { compactFor } = await import(${JSON.stringify(pathToFileURL(caller).href)})`,
        `compactFor(m, prep, model, 'sk-test')`,
      ),
    )
    expect(out.resolved.summary).toBe('Summary from the server.\n\n<read-files>\nsrc/a.ts\n</read-files>')
    if (line === '1.6') expect(out.resolved.usage).toMatchObject({ input: 40, output: 6 })
    else expect('usage' in out.resolved).toBe(false)
    expect(out.requests).toHaveLength(1)
    expect(out.requests[0].roles).toEqual(['system', 'user'])
    expect(out.requests[0].system).toBe(require(entry).SUMMARIZATION_SYSTEM_PROMPT)
    expect(out.requests[0].auth).toBe('Bearer sk-test')
  })
})

test('0.78 line called directly: the pi-ai this package resolves summarizes', async () => {
  const entry = path.join(ROOT, 'agent-0.78.js')
  const out = await runModule('direct-0.78.mjs', script(`const m = require(${JSON.stringify(entry)})`, `m.compact(prep, model, 'sk-test')`))
  expect(out.resolved.summary.startsWith('Summary from the server.')).toBe(true)
})

test('1.6 line called directly where only a 0.78 pi-ai resolves: a clear error naming /compat', async () => {
  const entry = path.join(ROOT, 'agent-1.6.js')
  const out = await runModule('direct-1.6.mjs', script(`const m = require(${JSON.stringify(entry)})`, `m.compact(prep, model, 'sk-test')`))
  expect(out.rejected).toMatch(/no streamFn was passed and completeSimple could not be loaded from @earendil-works\/pi-ai\/compat/)
  expect(out.rejected).toMatch(/pass a streamFn/)
  expect(out.requests).toHaveLength(0)
})

test("the real 1.6.0 agent's bug report (completeSummarization without a streamFn) with ours swapped in", async () => {
  // prime-compaction/register's hook, as a user's `node --import` registers it.
  const hooks = pathToFileURL(path.join(ROOT, 'lib', 'agent-hooks.mjs')).href
  const bugReport = pathToFileURL(path.join(AGENT_16, 'dist', 'core', 'bug-report.js')).href
  // The module bug-report.js imports completeSummarization from: ours has
  // serializeForSummary, which the agent's has not.
  const itsCompaction = pathToFileURL(path.join(AGENT_16, 'dist', 'core', 'compaction', 'compaction.js')).href
  const source = script(
    `if (process.argv[2] === 'ours') (await import(${JSON.stringify(hooks)})).registerAgentSwap()\n` +
      `const { generateBugReportSummary } = await import(${JSON.stringify(bugReport)})`,
    `generateBugReportSummary({ messages: [{ role: 'user', content: 'it crashed', timestamp: 1 }], model, apiKey: 'sk-test', signal: new AbortController().signal, sessionId: 'S', retry: { enabled: true, maxRetries: 1, baseDelayMs: 1 } })`,
    `{ compactionIsOurs: typeof (await import(${JSON.stringify(itsCompaction)})).serializeForSummary === 'function' }`,
  )
  const { extra: ownModule, ...own } = await runModule('bug-report.mjs', source, ['own'])
  const { extra: swappedModule, ...swapped } = await runModule('bug-report.mjs', source, ['ours'])
  expect(ownModule).toEqual({ compactionIsOurs: false })
  expect(swappedModule).toEqual({ compactionIsOurs: true })
  expect(own.resolved).toBe('Summary from the server.')
  expect(swapped).toEqual(own)
})

describe('finding the host and its pi-ai', () => {
  test('the agent package among the callers, nearest first; our own files are skipped', () => {
    const file = path.join(AGENT_16, 'dist', 'core', 'bug-report.js')
    expect(hostOf([path.join(ROOT, 'lib', 'summarize.js'), pathToFileURL(file).href])).toBe(AGENT_16)
    expect(hostOf([path.join(ROOT, 'lib', 'summarize.js'), __filename])).toBeUndefined()
    expect(hostOf(['node:internal/process/task_queues', 'evalmachine.<anonymous>'])).toBeUndefined()
  })

  test("a bundled agent's own completeSimple, handed over by its patched chunk (lib/agent-bundle.js), is its callers'; another host resolves its own", async () => {
    // (a module of its own: what is handed over stays for the module's life)
    let completeSimpleOf
    let useBundledCompleteSimple
    jest.isolateModules(() => ({ completeSimpleOf, useBundledCompleteSimple } = require('../lib/host-pi-ai.js')))
    const chunk = (name) => path.join(AGENT_16, 'dist', 'bundle', 'chunks', name)
    const bundled = async () => 'the bundle\'s own'
    useBundledCompleteSimple(pathToFileURL(chunk('chunk-A.js')).href, bundled)
    expect(await completeSimpleOf('@earendil-works/pi-ai/compat', [path.join(ROOT, 'lib', 'summarize.js'), chunk('chunk-B.js')])).toBe(bundled)
    const installed = await import(resolveFrom(PKG_DIRS['0.78'], '@earendil-works/pi-ai'))
    expect(await completeSimpleOf('@earendil-works/pi-ai', [path.join(PKG_DIRS['0.78'], 'dist', 'core', 'agent-session.js')])).toBe(installed.completeSimple)
    // A chunk of no agent package, or no function, hands nothing over.
    useBundledCompleteSimple(pathToFileURL(path.join(dir, 'chunk.js')).href, bundled)
    useBundledCompleteSimple(pathToFileURL(chunk('chunk-C.js')).href, 'not a function')
    expect(await completeSimpleOf('@earendil-works/pi-ai/compat', [chunk('chunk-B.js')])).toBe(bundled)
  })

  test("each line's module resolves from its agent to that agent's pi-ai", () => {
    // (resolved as require.resolve does: by the real path)
    const real = (file) => pathToFileURL(fs.realpathSync(file)).href
    expect(resolveFrom(AGENT_16, '@earendil-works/pi-ai/compat')).toBe(real(path.join(PI_AI_16, 'dist', 'compat.js')))
    expect(resolveFrom(PKG_DIRS['0.78'], '@earendil-works/pi-ai')).toBe(real(path.join(PI_AI_078, 'dist', 'index.js')))
    expect(() => resolveFrom(PKG_DIRS['0.78'], '@earendil-works/pi-ai/compat')).toThrow(/does not export \.\/compat/)
    expect(resolveFrom(dir, '@earendil-works/no-such-package')).toBeUndefined()
  })
})
