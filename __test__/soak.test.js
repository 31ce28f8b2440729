'use strict'
// The differential soak (`npm run soak`, __test__/soak/) checked on a few
// sessions: it ends with `N passed, M failed`, reaches every function shared
// with the reference, and an implementation that differs from the reference
// fails it, with each failing sample saved under its seed and replayable.
// The long runs are off CI; the figures are in docs/reliability.md.

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PARITY_LINES } = require('./helpers/ours')

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

test('40 sessions on the parity lines: every shared function compared, "40 passed, 0 failed"', async () => {
  const run = await soak({ SOAK_SESSIONS: '40', SOAK_SEED: '7', SOAK_FAILURES: path.join(dir, 'clean') })
  expect({ code: run.code, stderr: run.stderr, last: run.last }).toEqual({ code: 0, stderr: '', last: '40 passed, 0 failed' })
  expect(run.stdout).not.toMatch(/not reached/)
  for (const line of PARITY_LINES) expect(run.stdout).toContain(`calls compared on ${line}: `)
  const counts = JSON.parse(new RegExp(`calls compared on ${PARITY_LINES[0].replace('.', '\\.')}: (\\{.*\\})`).exec(run.stdout)[1])
  for (const name of ['prepareCompaction', 'findCutPoint', 'estimateTokens', 'convertToLlm', 'compact', 'generateSummary', 'generateBranchSummary', 'collectEntriesForBranchSummary', 'prepareBranchEntries']) {
    expect({ name, calls: counts[name] > 0 }).toEqual({ name, calls: true })
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
  const run = await soak({ SOAK_SESSIONS: '20', SOAK_SEED: '7', SOAK_FAILURES: failures, SOAK_OURS: impl })
  expect(run.code).toBe(1)
  const [, passed, failed] = /^(\d+) passed, (\d+) failed$/.exec(run.last).map(Number)
  expect(passed + failed).toBe(20)
  expect(failed).toBeGreaterThan(10)
  expect(run.stdout).toMatch(/FAILED \d+ × 0\.78: estimateTokens\(user message\)/)
  const saved = fs.readdirSync(failures)
  expect(saved.length).toBe(failed)
  const seed = /^soak-(-?\d+)-0\.78\.js$/.exec(saved[0])[1]
  expect(fs.readFileSync(path.join(failures, saved[0]), 'utf8')).toContain(`replay: SOAK_SEED=${seed} SOAK_SESSIONS=1`)
  const replay = await soak({ SOAK_SESSIONS: '1', SOAK_SEED: seed, SOAK_WORKERS: '1', SOAK_FAILURES: path.join(dir, 'replay'), SOAK_OURS: impl })
  expect(replay.last).toBe('0 passed, 1 failed')
  const again = await soak({ SOAK_SESSIONS: '1', SOAK_SEED: seed, SOAK_WORKERS: '1', SOAK_FAILURES: path.join(dir, 'replay-real') })
  expect(again.last).toBe('1 passed, 0 failed')
})
