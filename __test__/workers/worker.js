'use strict'
// One worker thread of the worker-thread test: runs every job, `rounds`
// times, in an order of its own (seeded), telling the main thread when each
// call begins and what it gave.

const { parentPort, workerData } = require('node:worker_threads')
const { mulberry32 } = require('../../scripts/prng')
const { runJob } = require('./jobs')

async function main() {
  const { jobs, rounds, seed } = workerData
  const rand = mulberry32(seed)
  for (let round = 0; round < rounds; round++) {
    const order = jobs.slice()
    for (let i = order.length - 1; i > 0; i--) {
      const k = Math.floor(rand() * (i + 1))
      ;[order[i], order[k]] = [order[k], order[i]]
    }
    for (const job of order) {
      parentPort.postMessage({ type: 'begin', id: job.id })
      const value = await runJob(job)
      parentPort.postMessage({ type: 'result', id: job.id, value })
      // Let the other threads' calls and the main thread's messages in between.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  parentPort.postMessage({ type: 'done' })
}

main()
