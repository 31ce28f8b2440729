'use strict'
// Runs the named hostile-input cases in this process, one JSON line per
// finished case on stdout. The parent (hostile.test.js) treats a case that
// never reports, because the process died by a signal or hung past its
// timeout, as a failure of that case.

const { cases, stats, removeTemp } = require('./cases')
// Cases run on the 0.78 line unless they name another.
const lines = { '0.78': require('../../agent-0.78'), '1.6': require('../../agent-1.6') }

async function main() {
  const byName = new Map(cases.map((c) => [c.name, c]))
  for (const name of process.argv.slice(2)) {
    const c = byName.get(name)
    process.stdout.write(JSON.stringify({ start: name }) + '\n')
    let outcome
    const before = stats.calls
    const t0 = Date.now()
    try {
      if (!c) throw new Error(`no such case: ${name}`)
      await c.run(lines[c.line || '0.78'])
      outcome = { name, ok: true, calls: stats.calls - before, ms: Date.now() - t0 }
    } catch (err) {
      outcome = { name, ok: false, error: String((err && err.stack) || err).slice(0, 2000) }
    }
    try {
      removeTemp()
    } catch (err) {
      outcome = { name, ok: false, error: `its temporary files were not removed: ${String((err && err.stack) || err).slice(0, 2000)}` }
    }
    process.stdout.write(JSON.stringify(outcome) + '\n')
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(String(err && err.stack) + '\n')
    process.exit(1)
  },
)
