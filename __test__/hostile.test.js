'use strict'
// Hostile input through every export: wrong types in every field, parent
// cycles, 100k-deep chains and nesting, 100 MB strings, 2^32-1-long sparse
// arrays, throwing getters, Proxies, frozen objects, NaN and Infinity,
// throwing toJSON, compact() with broken streams, malformed session files.
//
// The cases (hostile/cases.js) run in child processes, a batch per child, so
// that a crash (a signal, an abort) or a hang (the timeout) fails the case that
// was running instead of taking the test run down with it: children of this
// Node, and of Bun (JavaScriptCore, and Bun's own N-API).

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { cases } = require('./hostile/cases')
const { BUN, SKIP_BUN, bunBinary } = require('./helpers/bun.js')

const CHILD = path.join(__dirname, 'hostile', 'child.js')
const BATCH_TIMEOUT_MS = 120_000
const PARALLEL = 2

jest.setTimeout(600_000)

/** Light cases in batches of a few; each heavy (100 MB) case alone. */
function batches() {
  const out = []
  const light = cases.filter((c) => !c.heavy).map((c) => c.name)
  for (let i = 0; i < light.length; i += 6) out.push(light.slice(i, i + 6))
  for (const c of cases.filter((c) => c.heavy)) out.push([c.name])
  return out
}

// The directory the children write the cases' files under (cases.js):
// each case's are removed when it ends, so it is left empty.
const tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-hostile-run-'))

/** The batch `names` in a child of `runtime` (a binary): one report per case. */
function runBatch(runtime, names) {
  return new Promise((resolve) => {
    const options = { timeout: BATCH_TIMEOUT_MS, maxBuffer: 16 << 20, env: { ...process.env, PC_HOSTILE_TMP: tempRoot } }
    execFile(runtime, [CHILD, ...names], options, (err, stdout, stderr) => {
      const reported = new Map()
      let running = null
      for (const line of stdout.split('\n')) {
        if (!line.trim()) continue
        const msg = JSON.parse(line)
        if (msg.start) running = msg.start
        else {
          reported.set(msg.name, msg)
          running = null
        }
      }
      const how = err ? (err.killed ? `hung (killed after ${BATCH_TIMEOUT_MS} ms)` : err.signal ? `died by ${err.signal}` : `exited with ${err.code}`) : 'exited'
      for (const name of names) {
        if (reported.has(name)) continue
        const why = name === running ? `the child ${how} while running it` : `never ran: the child ${how} earlier`
        reported.set(name, { name, ok: false, error: `${why}\n${stderr.slice(-2000)}` })
      }
      resolve(names.map((n) => reported.get(n)))
    })
  })
}

// Each runtime's children, by name: Node's, and Bun's where bun has a binary for the host.
const RUNTIMES = [['Node', () => process.execPath], ...(SKIP_BUN ? [] : [['Bun', bunBinary]])]

/** Per runtime, the reports by case name. */
const results = {}

beforeAll(async () => {
  const queue = RUNTIMES.flatMap(([name, binary]) => batches().map((batch) => [name, binary, batch]))
  const out = Object.fromEntries(RUNTIMES.map(([name]) => [name, []]))
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (queue.length) {
        const [name, binary, batch] = queue.shift()
        let runtime
        try {
          runtime = binary()
        } catch (err) {
          out[name].push(...batch.map((c) => ({ name: c, ok: false, error: err.message })))
          continue
        }
        out[name].push(...(await runBatch(runtime, batch)))
      }
    }),
  )
  for (const [name] of RUNTIMES) results[name] = new Map(out[name].map((r) => [r.name, r]))
})

if (SKIP_BUN) test.skip(`hostile input on Bun (skipped: ${BUN.reason})`, () => {})

describe.each(RUNTIMES.map(([name]) => [name]))('hostile input never crashes, hangs or misleads, on %s', (runtime) => {
  it.each(cases.map((c) => [c.name]))('%s', (name) => {
    const r = results[runtime].get(name)
    if (!r.ok) throw new Error(r.error)
  })
})

describe('the hostile cases', () => {
  it('leave no files behind', () => {
    expect(fs.readdirSync(tempRoot)).toEqual([])
  })

  afterAll(() => {
    fs.rmSync(tempRoot, { recursive: true, force: true })
    for (const [runtime, reports] of Object.entries(results)) {
      const calls = [...reports.values()].reduce((n, r) => n + (r.calls || 0), 0)
      // One line for docs/reliability.md.
      process.stdout.write(`hostile on ${runtime}: ${reports.size} cases, ${calls} checked calls\n`)
    }
  })
})
