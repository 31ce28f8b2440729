'use strict'
// The differential soak (`npm run soak`, __test__/soak/) checked on a few
// sessions: it ends with `N passed, M failed`, reaches every function shared
// with the reference, and an implementation that differs from the reference
// fails it, with each failing sample saved under its seed and replayable.
// The long runs are off CI; the figures are in docs/reliability.md.

const { execFile, spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LINES } = require('./helpers/ours')

jest.setTimeout(120_000)

const SOAK = path.join(__dirname, 'soak', 'soak.js')

function soak(env) {
  return new Promise((resolve) =>
    execFile(process.execPath, [SOAK], { env: { ...process.env, ...env }, timeout: 100_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr, last: stdout.trim().split('\n').pop() })
    }),
  )
}

let dir
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-soak-test-'))
})
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

test('40 sessions on every agent line: every shared function compared, "40 passed, 0 failed"', async () => {
  const run = await soak({ SOAK_SESSIONS: '40', SOAK_SEED: '7', SOAK_FAILURES: path.join(dir, 'clean') })
  expect({ code: run.code, stderr: run.stderr, last: run.last }).toEqual({ code: 0, stderr: '', last: '40 passed, 0 failed' })
  expect(run.stdout).not.toMatch(/not reached/)
  const added = { '0.78': [], '1.6': ['estimateProjectedContextTokens', 'generateSummaryWithUsage', 'completeSummarization', 'getSummarizationFailure'] }
  for (const line of LINES) {
    const counts = JSON.parse(new RegExp(`calls compared on ${line.replace('.', '\\.')}: (\\{.*\\})`).exec(run.stdout)[1])
    for (const name of ['prepareCompaction', 'findCutPoint', 'estimateTokens', 'convertToLlm', 'compact', 'generateSummary', 'generateBranchSummary', 'collectEntriesForBranchSummary', 'prepareBranchEntries', ...added[line]]) {
      expect({ line, name, calls: counts[name] > 0 }).toEqual({ line, name, calls: true })
    }
  }
})

test('an implementation that differs from the reference fails, each failure saved with its seed and replayable', async () => {
  // estimateTokens one token high on user messages: nearly every session has one.
  const impl = path.join(dir, 'off-by-one.js')
  fs.writeFileSync(
    impl,
    `const { loadOurs } = require(${JSON.stringify(path.join(__dirname, 'helpers', 'ours.js'))})
module.exports.loadOurs = async (line) => {
  const ours = await loadOurs(line)
  return { ...ours, estimateTokens: (m) => ours.estimateTokens(m) + (m && m.role === 'user' ? 1 : 0) }
}
`,
  )
  const failures = path.join(dir, 'failing')
  const run = await soak({ SOAK_SESSIONS: '20', SOAK_SEED: '7', SOAK_LINES: '0.78', SOAK_FAILURES: failures, SOAK_OURS: impl })
  expect(run.code).toBe(1)
  const [, passed, failed] = /^(\d+) passed, (\d+) failed$/.exec(run.last).map(Number)
  expect(passed + failed).toBe(20)
  expect(failed).toBeGreaterThan(10)
  expect(run.stdout).toMatch(/FAILED \d+ × 0\.78: estimateTokens\(user message\)/)
  const saved = fs.readdirSync(failures)
  expect(saved.length).toBe(failed)
  const seed = /^soak-(-?\d+)-0\.78\.js$/.exec(saved[0])[1]
  expect(fs.readFileSync(path.join(failures, saved[0]), 'utf8')).toContain(`replay: SOAK_SEED=${seed} SOAK_SESSIONS=1`)
  const replay = await soak({ SOAK_SESSIONS: '1', SOAK_SEED: seed, SOAK_LINES: '0.78', SOAK_WORKERS: '1', SOAK_FAILURES: path.join(dir, 'replay'), SOAK_OURS: impl })
  expect(replay.last).toBe('0 passed, 1 failed')
  const again = await soak({ SOAK_SESSIONS: '1', SOAK_SEED: seed, SOAK_LINES: '0.78', SOAK_WORKERS: '1', SOAK_FAILURES: path.join(dir, 'replay-real') })
  expect(again.last).toBe('1 passed, 0 failed')
})

test('a run killed with SIGKILL and resumed from SOAK_STATE ends as one run, with the tallies and calls of an unbroken run; another run cannot resume it', async () => {
  const env = { SOAK_SESSIONS: '200', SOAK_SEED: '11' }
  const callsOf = (stdout) => LINES.map((line) => new RegExp(`calls compared on ${line.replace('.', '\\.')}: (\\{.*\\})`).exec(stdout)[1]).map((text) => JSON.parse(text))
  const unbroken = await soak({ ...env, SOAK_FAILURES: path.join(dir, 'unbroken') })
  expect(unbroken.last).toBe('200 passed, 0 failed')

  const stateFile = path.join(dir, 'state.json')
  const stateEnv = { ...env, SOAK_STATE: stateFile, SOAK_FAILURES: path.join(dir, 'resumed') }
  const child = spawn(process.execPath, [SOAK], { env: { ...process.env, ...stateEnv }, detached: true, stdio: 'ignore' })
  const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })))
  // Killed, with its workers, once the checkpoint holds two of its eight chunks.
  const chunksAtKill = await new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      let state
      try {
        state = JSON.parse(fs.readFileSync(stateFile, 'utf8'))
      } catch {
        return
      }
      if (state.done.length >= 2) {
        clearInterval(poll)
        process.kill(-child.pid, 'SIGKILL')
        resolve(state.done.length)
      }
    }, 5)
    closed.then(() => {
      clearInterval(poll)
      reject(new Error('the soak ended before it was killed'))
    })
  })
  expect(await closed).toEqual({ code: null, signal: 'SIGKILL' })
  expect(chunksAtKill).toBeLessThan(8)
  const atKill = JSON.parse(fs.readFileSync(stateFile, 'utf8'))
  expect(atKill.passed + atKill.failed).toBeLessThan(200)

  const resumed = await soak(stateEnv)
  expect({ code: resumed.code, stderr: resumed.stderr, last: resumed.last }).toEqual({ code: 0, stderr: '', last: '200 passed, 0 failed' })
  expect(resumed.stdout).toContain(`soak: resumed from ${stateFile} (resume 1): ${atKill.passed + atKill.failed} sessions done`)
  expect(resumed.stdout).toMatch(/in 2 parts/)
  expect(callsOf(resumed.stdout)).toEqual(callsOf(unbroken.stdout))
  const finished = JSON.parse(fs.readFileSync(stateFile, 'utf8'))
  expect([...finished.done].sort((a, b) => a - b)).toEqual([0, 25, 50, 75, 100, 125, 150, 175])

  // A finished run started again reports again, as the same two parts.
  const again = await soak(stateEnv)
  expect({ code: again.code, last: again.last }).toEqual({ code: 0, last: '200 passed, 0 failed' })
  expect(again.stdout).toMatch(/in 2 parts/)
  expect(JSON.parse(fs.readFileSync(stateFile, 'utf8'))).toEqual(finished)

  // Another size, or other code under test, is another run.
  const otherSize = await soak({ ...stateEnv, SOAK_SESSIONS: '100' })
  expect({ code: otherSize.code, last: otherSize.last }).toEqual({ code: 2, last: '' })
  expect(otherSize.stderr).toMatch(/belongs to another run \(sessions: 200 in the file, 100 now\)/)
  const impl = path.join(dir, 'same-as-package.js')
  fs.writeFileSync(impl, `module.exports = require(${JSON.stringify(path.join(__dirname, 'helpers', 'ours.js'))})\n`)
  const otherCode = await soak({ ...stateEnv, SOAK_OURS: impl })
  expect(otherCode.code).toBe(2)
  expect(otherCode.stderr).toMatch(/belongs to another run \(build: "[0-9a-f]{64}" in the file, "[0-9a-f]{64}" now\)/)
  expect(JSON.parse(fs.readFileSync(stateFile, 'utf8'))).toEqual(finished)
})
