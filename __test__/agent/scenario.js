'use strict'
// What a flow's record must show for the flow to have tested its scenario
// (the flow's `expect`, see flows.js): which compactions ran and how, an
// overflow, branch summaries, summary retries, the faults it planned. A flow that no longer reaches its scenario
// (say, a file it reads grew) fails here, by name, instead of passing on a
// session that never compacted.

const { entriesOf } = require('./compare.js')

/** Marker the agent's summary format puts between the history and the turn-prefix summary. */
const SPLIT_MARKER = '**Turn Context (split turn):**'

/** The compactions a record shows, in order, as the expectations name them. */
function compactionsOf(record) {
  const entries = entriesOf(record).filter((e) => e.type === 'compaction')
  const summaries = record.requests.filter((r) => r.kind === 'summary')
  const instructions = record.operations.filter((o) => o.op === 'compact').map((o) => Boolean(o.args[0]))
  const out = []
  let stored = 0
  let manual = 0
  for (const event of record.events) {
    if (event.type !== 'compaction_end') continue
    const c = { reason: event.reason, aborted: event.aborted, willRetry: event.willRetry, error: event.errorMessage }
    if (event.reason === 'manual') c.instructions = instructions[manual++] || false
    if (event.result) {
      const entry = entries[stored++]
      c.split = entry.summary.includes(SPLIT_MARKER)
      c.fromExtension = entry.fromHook === true
      c.tokensBefore = entry.tokensBefore
    }
    out.push(c)
  }
  return { compactions: out, summaries }
}

/** Every way `record` misses its flow's expectations, as sentences (none when it meets them). */
function missedExpectations(record) {
  const expect = record.expect || {}
  const missed = []
  const { compactions } = compactionsOf(record)
  if (expect.compactions) {
    if (compactions.length !== expect.compactions.length) {
      missed.push(`expected ${expect.compactions.length} compaction(s), saw ${compactions.length}: ${JSON.stringify(compactions)}`)
    }
    expect.compactions.forEach((want, i) => {
      const got = compactions[i]
      if (!got) return
      const full = { aborted: false, error: undefined, ...want }
      for (const [key, value] of Object.entries(full)) {
        if (key === 'history' || key === 'previousSummary') continue
        if (got[key] !== value) missed.push(`compaction ${i + 1}: expected ${key} ${JSON.stringify(value)}, saw ${JSON.stringify(got[key])}`)
      }
    })
  }
  const summaryRequests = record.requests.filter((r) => r.kind === 'summary' && r.answer !== 'held')
  const prompts = summaryRequests.map((r) => JSON.stringify(JSON.parse(r.raw).messages))
  for (const want of expect.compactions || []) {
    if (want.history && !summaryRequests.some((r) => r.part === 'history')) missed.push('expected a history summary request beside the turn prefix')
    if (want.previousSummary && !prompts.some((p) => p.includes('<previous-summary>'))) missed.push('expected a summary request updating a previous summary')
  }
  if (expect.overflow && !record.requests.some((r) => r.answer === 'overflow')) missed.push('expected the model to answer a request with a context overflow')
  if (expect.branchSummaries !== undefined) {
    const n = entriesOf(record).filter((e) => e.type === 'branch_summary').length
    if (n !== expect.branchSummaries) missed.push(`expected ${expect.branchSummaries} branch summaries, saw ${n}`)
  }
  if (expect.bugReports !== undefined) {
    const reports = record.operations.filter((o) => o.op === 'bugReport' && typeof o.result === 'string' && o.result.startsWith('## Goal'))
    if (reports.length !== expect.bugReports) missed.push(`expected ${expect.bugReports} bug report(s) holding the model's text, saw ${reports.length}`)
  }
  if (expect.summaryRequestsInclude !== undefined && !summaryRequests.some((r) => r.raw.includes(expect.summaryRequestsInclude))) {
    missed.push(`expected a summary request to include ${JSON.stringify(expect.summaryRequestsInclude)}`)
  }
  if (expect.summaryRetries !== undefined) {
    const n = record.events.filter((e) => e.type === 'summarization_retry_scheduled').length
    if (n !== expect.summaryRetries) missed.push(`expected ${expect.summaryRetries} summary retries, saw ${n}`)
  }
  const faults = record.requests.filter((r) => /^fault /.test(r.answer)).length
  const planned = Object.keys(record.summaryFaults || {}).length
  if (faults !== planned) missed.push(`expected ${planned} summary request(s) to get the flow's faults, saw ${faults}`)
  if (record.requests.some((r) => r.answer === 'unscripted')) missed.push('the agent sent more requests than the flow scripted')
  for (const op of record.operations) {
    if (op.error && !(op.op === 'compact' && expect.compactions && expect.compactions.some((c) => c.aborted))) {
      missed.push(`${op.op} failed: ${op.error.message}`)
    }
  }
  return missed
}

module.exports = { missedExpectations, compactionsOf }
