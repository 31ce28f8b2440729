'use strict'
// The addon in 8 worker threads at once (workers/run.js, in a process of its
// own so that a crash fails this test instead of stopping Jest), on both agent
// lines: planning, token counts, transcripts, projections, branch preparation
// and the branch walk, compact() on a scripted streamFn, and the file
// planners, interleaved; workers terminated
// inside synchronous calls and while asynchronous ones are under way
// (libuv pool tasks, pending model calls). No crash, and every result equals
// the main thread's. On this Node, and on Bun (its own workers and N-API).

const { execFile } = require('node:child_process')
const path = require('node:path')
const { KINDS } = require('./workers/jobs')
const { LINES } = require('./helpers/ours')
const { BUN, SKIP_BUN, bunBinary } = require('./helpers/bun.js')

jest.setTimeout(180_000)

/** Each runtime's name, its binary (where bun has none for a host it ships one for, an error), and its `test`. */
const RUNTIMES = [
  ['Node', () => process.execPath, test],
  [`Bun${SKIP_BUN ? ` (skipped: ${BUN.reason})` : ''}`, bunBinary, SKIP_BUN ? test.skip : test],
]

describe.each(RUNTIMES)('on %s', (runtime, binary, testHere) => testHere('8 worker threads, interleaved calls, workers terminated in mid-call: no crash, every result the main thread\'s', async () => {
  const { code, signal, report, stderr } = await new Promise((resolve) =>
    execFile(binary(), [path.join(__dirname, 'workers', 'run.js'), '--workers', '8', '--rounds', '2', '--terminations', '6'], { timeout: 150_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      let report = null
      try {
        report = JSON.parse(stdout.trim().split('\n').pop())
      } catch {
        report = { unreadable: stdout }
      }
      resolve({ code: err ? err.code : 0, signal: err ? err.signal : null, report, stderr })
    }),
  )
  process.stdout.write(`workers on ${runtime}: ${JSON.stringify(report)}\n`)
  expect({ code, signal, stderr: stderr.slice(0, 2000) }).toEqual({ code: 0, signal: null, stderr: '' })
  expect(report.fatal).toBeUndefined()
  expect(report.errors).toEqual([])
  expect(report.mismatches).toEqual([])
  // Eight ran to the end; six were terminated, each replaced.
  expect({ completed: report.completed, terminated: report.terminated, started: report.started }).toEqual({ completed: 8, terminated: 6, started: 14 })
  // The terminations landed inside calls, synchronous and asynchronous both.
  expect(report.terminatedInCall.sync).toBeGreaterThanOrEqual(2)
  expect(report.terminatedInCall.async).toBeGreaterThanOrEqual(1)
  // Every kind of call was checked in the workers, many times over, and again in the main thread after them.
  for (const kind of Object.keys(KINDS)) expect({ kind, n: report.checkedKinds[kind] >= 16 }).toEqual({ kind, n: true })
  // On both agent lines.
  for (const line of LINES) expect({ line, n: report.checkedLines[line] >= 100 }).toEqual({ line, n: true })
  expect(report.mainAfter).toBe(report.jobs)
}))
