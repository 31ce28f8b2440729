'use strict'
// The worker-thread run, in a process of its own (workers.test.js starts it,
// so that a crash fails the test instead of taking Jest down):
//
//   node __test__/workers/run.js [--workers 8] [--rounds 3] [--terminations 8] [--seed 1]
//
// The main thread computes every job's result (jobs.js), then keeps
// `workers` worker threads busy with all jobs, interleaved. Now and then a
// worker is terminated while one of its long calls is under way (it said the
// call began and has not sent the result) and another takes its place. Every
// result a worker sends must equal the main thread's. At the end the main
// thread runs every job again. Prints one JSON line: the report.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { Worker } = require('node:worker_threads')
const { LINES } = require('../helpers/ours')
const { writeSessionFile } = require('../helpers/session-file')
const { mulberry32 } = require('../../scripts/prng')
const { jobList, runJob } = require('./jobs')

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    terminations: { type: 'string', default: '8' },
    seed: { type: 'string', default: '1' },
  },
})
const WORKERS = Number(values.workers)
const ROUNDS = Number(values.rounds)
const TERMINATIONS = Number(values.terminations)
const rand = mulberry32(Number(values.seed))

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-workers-'))
  const files = {}
  for (const seed of [11, 12]) {
    files[seed] = path.join(dir, `session-${seed}.jsonl`)
    writeSessionFile(files[seed], { seed, entries: 5000 })
  }
  const jobs = jobList(LINES, files)
  const byId = new Map(jobs.map((j) => [j.id, j]))
  const expected = new Map()
  for (const job of jobs) expected.set(job.id, await runJob(job))

  const report = { workers: WORKERS, jobs: jobs.length, started: 0, completed: 0, terminated: 0, terminatedInCall: {}, results: 0, mismatches: [], errors: [], checkedKinds: {}, checkedLines: {} }
  let terminationsLeft = TERMINATIONS
  const live = new Set()

  const start = (index) =>
    new Promise((resolve) => {
      report.started++
      const worker = new Worker(path.join(__dirname, 'worker.js'), { workerData: { jobs, rounds: ROUNDS, seed: Number(values.seed) * 1000 + index } })
      live.add(worker)
      let inCall = null
      let terminating = false
      worker.on('message', (msg) => {
        if (msg.type === 'begin') {
          inCall = msg.id
          const job = byId.get(msg.id)
          // Terminate this one inside a long call: synchronous and asynchronous ones in turn.
          const wanted = terminationsLeft % 2 === 0 ? 'sync' : 'async'
          if (job.long && (job.async ? 'async' : 'sync') === wanted && !terminating && terminationsLeft > 0 && rand() < 0.3) {
            terminationsLeft--
            terminating = true
            setTimeout(() => {
              if (inCall !== null) {
                const j = byId.get(inCall)
                report.terminatedInCall[j.kind] = (report.terminatedInCall[j.kind] || 0) + 1
                report.terminatedInCall[j.async ? 'async' : 'sync'] = (report.terminatedInCall[j.async ? 'async' : 'sync'] || 0) + 1
              }
              worker.terminate()
            }, Math.floor(rand() * 10))
          }
        } else if (msg.type === 'result') {
          inCall = null
          report.results++
          const job = byId.get(msg.id)
          report.checkedKinds[job.kind] = (report.checkedKinds[job.kind] || 0) + 1
          report.checkedLines[job.line] = (report.checkedLines[job.line] || 0) + 1
          if (msg.value !== expected.get(msg.id)) report.mismatches.push({ id: msg.id, worker: msg.value.slice(0, 300), main: expected.get(msg.id).slice(0, 300) })
        } else if (msg.type === 'done') {
          report.completed++
        }
      })
      worker.on('error', (err) => report.errors.push(String((err && err.stack) || err)))
      worker.on('exit', (code) => {
        live.delete(worker)
        if (terminating) {
          report.terminated++
          // Another worker takes the place of the one terminated.
          resolve(start(index))
        } else {
          if (code !== 0) report.errors.push(`worker ${index} exited with ${code}`)
          resolve()
        }
      })
    })

  await Promise.all(Array.from({ length: WORKERS }, (_, i) => start(i)))
  // The main thread's addon still answers, as before.
  report.mainAfter = 0
  for (const job of jobs) {
    if ((await runJob(job)) !== expected.get(job.id)) report.mismatches.push({ id: job.id, main: 'changed after the workers' })
    report.mainAfter++
  }
  fs.rmSync(dir, { recursive: true, force: true })
  process.stdout.write(`${JSON.stringify(report)}\n`)
}

main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ fatal: String((err && err.stack) || err) })}\n`)
  process.exitCode = 1
})
