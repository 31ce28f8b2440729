'use strict'
// `npm run faults`: every fault case (cases.js fullCases) in the real agent of
// every agent line of the real-agent suite (lines.js), with the agent's own compaction module and with
// ours (the two side by side), then the tallies. Exits 1 when any session
// was lost or corrupt or any check failed. An abort or a kill that came only
// after the call had ended is counted as missed, not as injected.
//
//   FAULTS_SEED   seed of the abort and kill moments (default 20260601)
//   FAULTS_CASES  'full' (default) or 'small' (the Jest subset)
//   FAULTS_ONLY   run only the cases whose name contains this text
//   FAULTS_KEEP   keep the run's folder (the session files) instead of removing it
//   FAULTS_BUN    run the agent's processes on Bun (the devDependency's) rather than the line's Node
//   FAULTS_BUNDLE load the agent from its bundle (dist/bundle/index.js), whose chunk holding the module the
//                 hook patches, rather than its unbundled build: the versions lib/agent-swap.js's BUNDLES knows

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LINES } = require('../lines.js')
const { unsupported } = require('../run.js')
const { runFaults, tally } = require('./run.js')
const { fullCases, smallCases, casesOf, casesOnBun } = require('./cases.js')
const { BUN } = require('../../helpers/bun.js')
const { BUNDLES } = require('../../../lib/agent-swap.js')

const SEED = process.env.FAULTS_SEED ? Number(process.env.FAULTS_SEED) | 0 : 20260601
const allCases = (process.env.FAULTS_CASES === 'small' ? smallCases(SEED) : fullCases(SEED)).filter((c) => !process.env.FAULTS_ONLY || c.name.includes(process.env.FAULTS_ONLY))
const log = (text) => process.stdout.write(`${text}\n`)

function line(r) {
  const how = r.reported === null ? `killed${r.killedDuringOperation ? ' during the call' : ' after the call'}` : r.reported
  const recovered = r.recovered === undefined ? '' : r.recovered ? ', then recovered' : ', NOT recovered'
  const flag = r.problems.length ? '  PROBLEM' : r.injected || r.kind === 'resume' ? '' : '  (fault missed)'
  return `${r.variant.padEnd(5)} ${r.kind.padEnd(13)} ${r.op.padEnd(7)} ${`${how}, ${r.state}${recovered}`.padEnd(42)} ${r.name}${flag}${r.problems.length ? `\n      ${r.problems.join('\n      ')}` : ''}`
}

async function main() {
  const started = Date.now()
  if (process.env.FAULTS_BUN && !BUN.bin) throw new Error(`FAULTS_BUN: ${BUN.reason}`)
  const runtime = process.env.FAULTS_BUN ? { name: `Bun ${BUN.version}`, execPath: BUN.bin } : undefined
  let failed = false
  const bundle = Boolean(process.env.FAULTS_BUNDLE)
  for (const agentLine of LINES) {
    const why = unsupported(agentLine) || (bundle && !BUNDLES.some((b) => b.version === agentLine.version) ? 'FAULTS_BUNDLE: no bundle of it is known' : undefined)
    if (why) {
      log(`faults ${agentLine.version}: not run: ${why}`)
      continue
    }
    const lineCases = casesOf(allCases, agentLine)
    const cases = runtime ? casesOnBun(lineCases) : lineCases
    if (cases.length < lineCases.length) log(`faults ${agentLine.version}: not run on ${runtime.name} (no HTTP idle timeout there): ${lineCases.filter((c) => !cases.includes(c)).map((c) => c.name).join(', ')}`)
    const base = fs.mkdtempSync(path.join(os.tmpdir(), `prime-compaction-faults-${agentLine.version}-`))
    log(`faults ${agentLine.version}${bundle ? ' (its bundle)' : ''}: ${cases.length} cases, with the agent's own module and with ours, on ${runtime?.name ?? "the line's Node"}, in ${base}`)
    const byVariant = {}
    await Promise.all(
      ['agent', 'ours'].map(async (variant) => {
        byVariant[variant] = await runFaults({ line: agentLine, variant, cases, base, log: (r) => log(line(r)), execPath: runtime?.execPath, bundle })
      }),
    )
    for (const variant of ['agent', 'ours']) {
      const results = byVariant[variant]
      const t = tally(results)
      log(`\nfaults ${agentLine.version} with the ${variant === 'agent' ? "agent's own module" : 'prime-compaction module'}:`)
      log('  kind           cases injected success failed aborted nothing killed | unchanged added lost/corrupt problems')
      for (const [kind, x] of Object.entries(t)) {
        log(`  ${kind.padEnd(14)} ${String(x.cases).padStart(5)} ${String(x.injected).padStart(8)} ${String(x.success).padStart(7)} ${String(x.failed).padStart(6)} ${String(x.aborted).padStart(7)} ${String(x['nothing to compact']).padStart(7)} ${String(x.killed).padStart(6)} | ${String(x.unchanged).padStart(9)} ${String(x.added).padStart(5)} ${String(x.lostOrCorrupt).padStart(12)} ${String(x.problems).padStart(8)}`)
      }
      log('  (nothing: a re-opened session with nothing to compact, as the agent\'s own module finds too)')
      const injected = results.filter((r) => r.injected).length
      const missed = results.filter((r) => r.kind !== 'resume' && !r.injected).length
      const checked = results.length + results.filter((r) => r.recovered !== undefined).length
      const lost = results.filter((r) => r.state === 'lost' || r.state === 'corrupt').length
      const problems = results.filter((r) => r.problems.length).length
      log(`  ${injected} faults injected (${missed} missed), ${checked} session files checked, ${lost} lost or corrupt, ${problems} with problems`)
      if (lost || problems) failed = true
    }
    if (!process.env.FAULTS_KEEP) fs.rmSync(base, { recursive: true, force: true })
  }
  log(`\nfaults: ${Math.round((Date.now() - started) / 1000)} s`)
  process.exitCode = failed ? 1 : 0
}

main()
