'use strict'
// The opt-in `tokenizer` setting: real BPE counts in prepareCompaction,
// findCutPoint and estimateTokens; without it, the reference's chars/4.

const ours = require('../agent-0.78')
const { loadReference } = require('./helpers/reference')

const cjk = '这是一个关于编译错误的长消息'.repeat(40) // 560 characters
const entries = [0, 1, 2, 3, 4, 5].map((i) => ({
  type: 'message',
  id: `m${i}`,
  parentId: i ? `m${i - 1}` : null,
  timestamp: '2026-01-01T00:00:00.000Z',
  message: i % 2
    ? { role: 'assistant', content: [{ type: 'text', text: cjk }], stopReason: 'stop', timestamp: i }
    : { role: 'user', content: cjk, timestamp: i },
}))
const base = { enabled: true, reserveTokens: 16384, keepRecentTokens: 400 }

test('estimateTokens counts exactly with options.tokenizer', () => {
  const message = entries[1].message
  expect(ours.estimateTokens(message)).toBe(Math.ceil(cjk.length / 4))
  expect(ours.estimateTokens(message, { tokenizer: 'o200k_base' })).toBe(ours.countTokens(cjk))
  expect(ours.estimateTokens(message, { tokenizer: 'cl100k_base' })).toBe(ours.countTokens(cjk, 'cl100k_base'))
})

test('prepareCompaction without tokenizer is the reference; with it, the cut and tokensBefore follow real counts', async () => {
  const ref = await loadReference()
  const plain = ours.prepareCompaction(entries, base)
  expect(plain).toEqual(ref.prepareCompaction(entries, base))
  const exact = ours.prepareCompaction(entries, { ...base, tokenizer: 'o200k_base' })
  const perMessage = ours.countTokens(cjk)
  // No usage on these messages: tokensBefore is the sum of the counts.
  expect(exact.tokensBefore).toBe(6 * perMessage)
  expect(plain.tokensBefore).toBe(6 * Math.ceil(cjk.length / 4))
  // Real counts reach 400 tokens in fewer messages, so more is summarized.
  expect(exact.messagesToSummarize.length).toBeGreaterThan(plain.messagesToSummarize.length)
  expect(ours.findCutPoint(entries, 0, entries.length, 400, { tokenizer: 'o200k_base' }).firstKeptEntryIndex).toBe(
    entries.findIndex((e) => e.id === exact.firstKeptEntryId),
  )
})

test('an options argument that is not an object is ignored, as the agent ignores an extra argument', async () => {
  const { LINES, loadOurs } = require('./helpers/ours')
  const messages = entries.map((e) => e.message)
  for (const line of LINES) {
    const [ref, mine] = [await loadReference(line), await loadOurs(line)]
    // Array.prototype.map passes the index (and the array) after the element.
    expect(messages.map(mine.estimateTokens)).toEqual(messages.map(ref.estimateTokens))
    expect([messages, messages.slice(2)].map(mine.serializeConversation)).toEqual([mine.serializeConversation(messages), mine.serializeConversation(messages.slice(2))])
    for (const extra of [null, 'o200k_base', 7, true]) {
      expect(mine.estimateTokens(messages[1], extra)).toBe(ref.estimateTokens(messages[1], extra))
      expect(mine.findCutPoint(entries, 0, entries.length, 400, extra)).toEqual(ref.findCutPoint(entries, 0, entries.length, 400, extra))
      expect(mine.serializeConversation(messages, extra)).toBe(mine.serializeConversation(messages))
    }
  }
})

test('an unknown tokenizer is a TypeError naming the field', () => {
  // Errors from the addon come from Node's realm, not Jest's sandbox: compare names, not constructors.
  const thrown = (f) => {
    try {
      f()
    } catch (err) {
      return { name: err.name, message: err.message }
    }
    return null
  }
  expect(thrown(() => ours.prepareCompaction(entries, { ...base, tokenizer: 'gpt2' }))).toEqual({
    name: 'TypeError',
    message: 'settings.tokenizer: expected "o200k_base" or "cl100k_base", got "gpt2"',
  })
  expect(thrown(() => ours.estimateTokens(entries[0].message, { tokenizer: 42 }))).toEqual({
    name: 'TypeError',
    message: 'options.tokenizer: expected "o200k_base" or "cl100k_base", got a number',
  })
})

test('the session-file functions honour the tokenizer setting the same way', () => {
  const fs = require('node:fs')
  const os = require('node:os')
  const path = require('node:path')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-tokenizer-'))
  const file = path.join(dir, 'session.jsonl')
  const header = { type: 'session', version: 3, id: 's1', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/tmp' }
  try {
    fs.writeFileSync(file, [header, ...entries].map((e) => JSON.stringify(e)).join('\n') + '\n')
    for (const settings of [base, { ...base, tokenizer: 'o200k_base' }]) {
      const fromFile = ours.prepareCompactionFromFileSync(file, { settings })
      const inMemory = ours.prepareCompaction(entries, settings)
      expect(fromFile.firstKeptEntryId).toBe(inMemory.firstKeptEntryId)
      expect(fromFile.tokensBefore).toBe(inMemory.tokensBefore)
      expect(fromFile.messagesToSummarizeIds).toHaveLength(inMemory.messagesToSummarize.length)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
