'use strict'
// A soak worker process (forked by soak.js): loads the reference and the
// implementation under test for each agent line, then runs the chunks of
// seeds it is sent. Each seed gives one sample per line (session-check.js,
// drawn as that line's sessions are) checked on that line; a sample that fails on a line is written to the failures
// folder as a JavaScript literal with its seed.

const fs = require('node:fs')
const path = require('node:path')
const { loadReference } = require('../helpers/reference')
const { loadOurs } = require('../helpers/ours')
const { createChecks } = require('../helpers/parity-checks')
const { toSource } = require('../helpers/property')
const { sampleOf, checkSample } = require('./session-check')

const { lines, failuresDir } = JSON.parse(process.argv[2])

/** SOAK_OURS names a module whose loadOurs(line) gives the implementation to soak instead of the package's. */
const load = process.env.SOAK_OURS ? require(path.resolve(process.env.SOAK_OURS)).loadOurs : loadOurs

let current = null
/** Calls compared per line and function in the current chunk (sent with its result). */
let counts = {}

function recordFailure(failures, seed, line, error, sample) {
  const message = String((error && error.message) || error).slice(0, 4000)
  failures.push({ seed, line, message: message.slice(0, 400) })
  const file = path.join(failuresDir, `soak-${seed}-${line}.js`)
  const replay = `SOAK_SEED=${seed} SOAK_SESSIONS=1 SOAK_LINES=${line} npm run soak`
  const comment = message.split('\n').map((l) => `// ${l}`).join('\n')
  fs.writeFileSync(file, `// soak failure on agent line ${line}, seed ${seed}\n// replay: ${replay}\n${comment}\nmodule.exports = ${sample === undefined ? 'undefined' : toSource(sample)}\n`)
}

async function main() {
  fs.mkdirSync(failuresDir, { recursive: true })
  const byLine = []
  const shared = {}
  for (const line of lines) {
    const ref = await loadReference(line)
    const ours = await load(line)
    byLine.push({ line, checks: createChecks(ref, ours) })
    shared[line] = Object.keys(ref).filter((k) => typeof ref[k] === 'function' && typeof ours[k] === 'function').sort()
    counts[line] = {}
  }
  process.on('unhandledRejection', (reason) => {
    // A promise either side left behind: the session it came from fails.
    if (current) current.lateError = current.lateError || reason
  })
  process.send({ type: 'ready', shared })
  process.on('message', async (msg) => {
    if (msg.type === 'stop') {
      process.exit(0)
      return
    }
    const failures = []
    let passed = 0
    for (let i = 0; i < msg.count; i++) {
      const seed = (msg.start + i) | 0
      let ok = true
      for (const { line, checks } of byLine) {
        // Each line's sample holds what that line's sessions hold.
        let sample
        try {
          sample = sampleOf(seed, line)
        } catch (error) {
          ok = false
          recordFailure(failures, seed, `${line}-generator`, error, undefined)
          continue
        }
        current = { seed, line }
        const count = (name) => {
          counts[line][name] = (counts[line][name] || 0) + 1
        }
        try {
          await checkSample(checks, sample, count, line)
          // Let a stray rejection of this session surface before the next one starts.
          await new Promise((resolve) => setImmediate(resolve))
          if (current.lateError) throw current.lateError
        } catch (error) {
          ok = false
          recordFailure(failures, seed, line, error, sample)
        }
        current = null
      }
      if (ok) passed++
    }
    process.send({ type: 'done', id: msg.id, passed, failures, counts, rssMb: Math.round(process.memoryUsage().rss / 1048576) })
    counts = Object.fromEntries(lines.map((line) => [line, {}]))
  })
}

main().catch((error) => {
  process.send({ type: 'fatal', message: String((error && error.stack) || error) }, () => process.exit(2))
})
