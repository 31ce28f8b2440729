'use strict'
// Calls every export of an installed prime-compaction once, with small real
// arguments, and checks the kind of answer. Used by pack.test.js from a
// CommonJS and an ESM consumer; it needs nothing but node: modules, because
// it runs inside an empty project where only the tarball is installed.
//
// Prints the list of names it exercised as JSON on the last line.

const assert = require('node:assert/strict')
const fs = require('node:fs')

async function exercise(pc, examplePath) {
  const lines = fs.readFileSync(examplePath, 'utf8').split('\n').filter((l) => l.trim())
  const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.type !== 'session')
  const byId = new Map(entries.map((e) => [e.id, e]))
  const branch = []
  for (let e = entries[entries.length - 1]; e; e = e.parentId ? byId.get(e.parentId) : undefined) branch.unshift(e)
  const session = {
    getEntry: (id) => byId.get(id),
    getLeafId: () => branch[branch.length - 1].id,
    getBranch: () => branch,
    getEntries: () => entries,
  }
  const messages = branch.filter((e) => e.type === 'message').map((e) => e.message)
  const assistant = messages.find((m) => m.role === 'assistant' && m.content.some((b) => b.type === 'toolCall'))
  const bash = messages.find((m) => m.role === 'bashExecution')
  const model = { id: 'test', name: 'test', api: 'openai-completions', provider: 'local', baseUrl: '', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 8192 }
  const streamFn = () => ({ result: async () => ({ role: 'assistant', content: [{ type: 'text', text: 'A summary.' }], stopReason: 'stop', timestamp: 0 }) })
  const settings = pc.DEFAULT_COMPACTION_SETTINGS
  const prep = pc.prepareCompaction(branch, settings)

  const calls = {
    DEFAULT_COMPACTION_SETTINGS: () => assert.equal(typeof settings.keepRecentTokens, 'number'),
    BRANCH_SUMMARY_PREFIX: () => assert.match(pc.BRANCH_SUMMARY_PREFIX, /<summary>/),
    BRANCH_SUMMARY_SUFFIX: () => assert.equal(pc.BRANCH_SUMMARY_SUFFIX, '</summary>'),
    COMPACTION_SUMMARY_PREFIX: () => assert.match(pc.COMPACTION_SUMMARY_PREFIX, /compacted/),
    COMPACTION_SUMMARY_SUFFIX: () => assert.match(pc.COMPACTION_SUMMARY_SUFFIX, /<\/summary>/),
    SUMMARIZATION_SYSTEM_PROMPT: () => assert.ok(pc.SUMMARIZATION_SYSTEM_PROMPT.length > 50),
    prepareCompaction: () => assert.ok(prep.messagesToSummarize.length > 0 && prep.fileOps.read instanceof Set),
    prepareCompactionAsync: async () => {
      const p = await pc.prepareCompactionAsync(branch, settings)
      assert.strictEqual(p.messagesToSummarize[0], prep.messagesToSummarize[0])
    },
    collectEntriesForBranchSummary: () => {
      const r = pc.collectEntriesForBranchSummary(session, branch[branch.length - 1].id, branch[10].id)
      assert.ok(Array.isArray(r.entries) && r.entries.length > 0)
    },
    prepareBranchEntries: () => assert.ok(pc.prepareBranchEntries(branch.slice(-20), 0).messages.length > 0),
    generateBranchSummary: async () => {
      const r = await pc.generateBranchSummary(branch.slice(-20), { model, streamFn })
      assert.match(r.summary, /A summary\./)
    },
    compact: async () => {
      const r = await pc.compact(prep, model, undefined, undefined, undefined, undefined, undefined, streamFn)
      assert.equal(r.firstKeptEntryId, prep.firstKeptEntryId)
    },
    buildSummaryRequests: () => assert.ok(pc.buildSummaryRequests(prep, model).length >= 1),
    generateSummaryWithUsage: async () => {
      const r = await pc.generateSummaryWithUsage(messages.slice(0, 10), model, undefined, undefined, undefined, undefined, undefined, undefined, undefined, streamFn)
      assert.equal(r.text, 'A summary.')
    },
    completeSummarization: async () => {
      const context = { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 1 }] }
      const r = await pc.completeSummarization(model, context, {}, streamFn, { enabled: true, maxRetries: 1, baseDelayMs: 1 })
      assert.equal(r.stopReason, 'stop')
    },
    getSummarizationFailure: () => assert.equal(pc.getSummarizationFailure({ role: 'assistant', content: [], stopReason: 'error' }, 'Test'), 'Test failed: Unknown error'),
    generateSummary: async () => {
      const s = await pc.generateSummary(messages.slice(0, 10), model, 16384, undefined, undefined, undefined, undefined, undefined, undefined, streamFn)
      assert.equal(s, 'A summary.')
    },
    prepareCompactionFromFile: async () => assert.equal((await pc.prepareCompactionFromFile(examplePath)).firstKeptEntryId, prep.firstKeptEntryId),
    prepareCompactionFromFileSync: () => assert.equal(pc.prepareCompactionFromFileSync(examplePath).tokensBefore, prep.tokensBefore),
    serializeForSummaryFromFile: async () => assert.ok((await pc.serializeForSummaryFromFile(examplePath)).conversation.length > 0),
    serializeForSummaryFromFileSync: () => assert.ok(pc.serializeForSummaryFromFileSync(examplePath).conversation.length > 0),
    estimateTokens: () => assert.ok(pc.estimateTokens(messages[0]) > 0),
    countTokens: () => assert.equal(pc.countTokens('hello world'), 2),
    findCutPoint: () => assert.equal(typeof pc.findCutPoint(branch, 0, branch.length, 2000).firstKeptEntryIndex, 'number'),
    findTurnStartIndex: () => assert.equal(typeof pc.findTurnStartIndex(branch, branch.length - 1, 0), 'number'),
    shouldCompact: () => assert.equal(pc.shouldCompact(127000, 128000, settings), true),
    calculateContextTokens: () => assert.ok(pc.calculateContextTokens(assistant.usage) > 0),
    getLastAssistantUsage: () => assert.ok(pc.getLastAssistantUsage(branch).totalTokens > 0),
    estimateContextTokens: () => assert.ok(pc.estimateContextTokens(messages).tokens > 0),
    estimateProjectedContextTokens: () => {
      const projection = { entries: branch.map((e) => ({ sourceEntry: e, messages: e.type === 'message' ? [e.message] : [] })), messages, thinkingLevel: 'off', model: null }
      assert.ok(pc.estimateProjectedContextTokens(projection, branch).tokens > 0)
    },
    createFileOps: () => assert.ok(pc.createFileOps().edited instanceof Set),
    extractFileOpsFromMessage: () => {
      const ops = pc.createFileOps()
      pc.extractFileOpsFromMessage(assistant, ops)
      assert.ok(ops.read.size + ops.written.size + ops.edited.size > 0)
    },
    computeFileLists: () => assert.deepEqual(pc.computeFileLists({ read: new Set(['a', 'b']), written: new Set(['b']), edited: new Set() }), { readFiles: ['a'], modifiedFiles: ['b'] }),
    formatFileOperations: () => assert.match(pc.formatFileOperations(['a'], ['b']), /<read-files>/),
    convertToLlm: () => assert.ok(pc.convertToLlm(messages).length > 0),
    serializeConversation: () => assert.match(pc.serializeConversation(pc.convertToLlm(messages.slice(0, 5))), /\[User\]/),
    projectForSummary: () => assert.ok(Array.isArray(pc.projectForSummary(pc.convertToLlm(messages)))),
    serializeForSummary: () => assert.strictEqual(typeof pc.serializeForSummary(pc.convertToLlm(messages)), 'string'),
    splitUserRounds: () => assert.ok(pc.splitUserRounds(pc.convertToLlm(messages)).length > 1),
    bashExecutionToText: () => assert.match(pc.bashExecutionToText(bash), /du -h/),
    createBranchSummaryMessage: () => assert.equal(pc.createBranchSummaryMessage('s', 'x', '2026-01-01T00:00:00.000Z').role, 'branchSummary'),
    createCompactionSummaryMessage: () => assert.equal(pc.createCompactionSummaryMessage('s', 5, '2026-01-01T00:00:00.000Z').tokensBefore, 5),
    createCustomMessage: () => assert.equal(pc.createCustomMessage('t', 'c', true, undefined, '2026-01-01T00:00:00.000Z').role, 'custom'),
  }
  const exported = Object.keys(pc).filter((k) => k !== 'default' && k !== '__esModule')
  const missing = exported.filter((k) => !(k in calls))
  assert.deepEqual(missing, [], `exports without a call in exercise-exports.cjs: ${missing.join(', ')}`)
  for (const name of exported) {
    try {
      await calls[name]()
    } catch (err) {
      err.message = `${name}: ${err.message}`
      throw err
    }
  }
  return exported
}

module.exports = exercise
