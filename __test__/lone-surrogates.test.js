'use strict'
// Error and failure messages that carry the caller's text keep it exactly,
// lone surrogates included: a model's errorMessage in compact()'s rejection
// and generateBranchSummary()'s { error } (as the agent's own module words
// them), the spec's overflow failure, custom instructions in the request's
// prompt, and the entry ids, keys and names
// TypeErrors and Errors quote. (A JS string may hold a lone surrogate; a
// message built as UTF-8 on the way out would turn it into U+FFFD.)

const { loadReference } = require('./helpers/reference')
const { loadOurs, LINES } = require('./helpers/ours')
const { MODEL, text, failure, scripted, splitPreparation, plainPreparation, branchEntries } = require('./helpers/summary')

/** Lone surrogates at the start, inside and at the end, and a pair beside one. */
const LONE = '\udc00bad \ud83d gateway \ud83d\ude00\ud800'
const OVERFLOW = `prompt is too long: ${LONE}`

async function rejection(promise) {
  try {
    await promise
  } catch (err) {
    return { name: err.name, message: err.message }
  }
  throw new Error('expected a rejection')
}

function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return { name: err.name, message: err.message }
  }
  throw new Error('expected a throw')
}

/** The string's code units, so a difference shows which unit was lost. */
const units = (s) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i).toString(16))

describe.each(LINES)('agent line %s: summary failures keep the model\'s errorMessage exactly', (line) => {
  let ref
  let ours
  beforeAll(async () => {
    ref = await loadReference(line)
    ours = await loadOurs(line)
  })

  const compactOf = (impl, answers, prep) => impl.compact(prep(ref), MODEL, 'k', undefined, undefined, undefined, undefined, scripted(answers))

  test.each([
    ['the history', [failure(LONE)], plainPreparation, 'Summarization failed: '],
    ['the turn prefix', [text('H'), failure(LONE)], splitPreparation, 'Turn prefix summarization failed: '],
  ])('compact() rejects an error answer for %s with the text as it came', async (_, answers, prep, prefix) => {
    const a = await rejection(compactOf(ref, [...answers], prep))
    const b = await rejection(compactOf(ours, [...answers], prep))
    expect(units(b.message)).toEqual(units(prefix + LONE))
    expect(b).toEqual(a)
  })

  test('generateSummary() rejects with the text as it came', async () => {
    const messages = plainPreparation(ref).messagesToSummarize
    const run = (impl) => rejection(impl.generateSummary(messages, MODEL, 2000, 'k', undefined, undefined, undefined, undefined, undefined, scripted([failure(LONE)])))
    const [a, b] = [await run(ref), await run(ours)]
    expect(units(b.message)).toEqual(units(`Summarization failed: ${LONE}`))
    expect(b).toEqual(a)
  })

  test('generateBranchSummary() resolves { error } with the text as it came', async () => {
    const run = (impl) => impl.generateBranchSummary(branchEntries(), { model: MODEL, apiKey: 'k', streamFn: scripted([failure(LONE)]) })
    const [a, b] = [await run(ref), await run(ours)]
    expect(units(b.error)).toEqual(units(line === '0.78' ? LONE : `Branch summarization failed: ${LONE}`))
    expect(b).toEqual(a)
  })

  test('the spec\'s overflow failure, after its smaller retries, ends with the text as it came', async () => {
    const answers = [failure(OVERFLOW), failure(OVERFLOW), failure(OVERFLOW)]
    const b = await rejection(compactOf(ours, answers, plainPreparation))
    expect(units(b.message)).toEqual(units(`Summarization failed: the request still overflows the model's context after 2 smaller retries: ${OVERFLOW}`))
  })

  test('custom instructions reach the request as they came', () => {
    for (const request of ours.buildSummaryRequests(splitPreparation(ref), MODEL, `focus ${LONE}`)) {
      expect(request.prompt.includes(`focus ${LONE}\n`)).toBe(true)
    }
  })

  if (line === '1.6') {
    test('getSummarizationFailure keeps the label and the message as they came', () => {
      const got = ours.getSummarizationFailure(failure(LONE), 'Label\ud800')
      expect(units(got)).toEqual(units(`Label\ud800 failed: ${LONE}`))
      expect(got).toBe(ref.getSummarizationFailure(failure(LONE), 'Label\ud800'))
    })

    test('generateSummaryWithUsage() rejects with the text as it came', async () => {
      const messages = plainPreparation(ref).messagesToSummarize
      const run = (impl) => rejection(impl.generateSummaryWithUsage(messages, MODEL, 2000, 'k', undefined, undefined, undefined, undefined, undefined, scripted([failure(LONE)])))
      const [a, b] = [await run(ref), await run(ours)]
      expect(units(b.message)).toEqual(units(`Summarization failed: ${LONE}`))
      expect(b).toEqual(a)
    })
  }
})

describe.each(LINES)('agent line %s: errors quote the caller\'s ids, keys and names exactly', (line) => {
  let ours
  beforeAll(async () => {
    ours = await loadOurs(line)
  })

  const entry = (id, parentId) => ({ type: 'message', id, parentId, timestamp: '2025-01-01T00:00:00.000Z', message: { role: 'user', content: id, timestamp: 0 } })
  const mapSession = (entries) => {
    const byId = new Map(entries.map((e) => [e.id, e]))
    return { getEntry: (id) => byId.get(id), getLeafId: () => null, getBranch: () => [] }
  }

  test('collectEntriesForBranchSummary: the id getEntry was asked for, a parentId that does not resolve, a cycle', () => {
    expect(thrown(() => ours.collectEntriesForBranchSummary({ getEntry: () => ({ id: 7 }) }, 'a\ud800', 'b'))).toEqual({
      name: 'TypeError',
      message: 'session.getEntry("a\ud800").id: expected a string id, got a number',
    })
    const dangling = mapSession([entry('\udc00root', null), entry('c\ud83d', 'gone\udfff'), entry('d', 'c\ud83d')])
    expect(thrown(() => ours.collectEntriesForBranchSummary(dangling, 'd', '\udc00root'))).toEqual({
      name: 'Error',
      message: 'entry "c\ud83d" has parentId "gone\udfff", which getEntry does not resolve',
    })
    const cycle = mapSession([entry('x\ud800', 'x\ud800'), entry('r', null)])
    expect(thrown(() => ours.collectEntriesForBranchSummary(cycle, 'x\ud800', 'r'))).toEqual({
      name: 'Error',
      message: 'parentId links form a cycle through entry id "x\ud800"',
    })
  })

  test('a tokenizer setting, thrown and as a rejection, and a countTokens encoding', async () => {
    const settings = { enabled: true, reserveTokens: 1, keepRecentTokens: 1, tokenizer: 'o200k\ud800' }
    const want = { name: 'TypeError', message: 'settings.tokenizer: expected "o200k_base" or "cl100k_base", got "o200k\ud800"' }
    expect(thrown(() => ours.prepareCompaction([], settings))).toEqual(want)
    expect(await rejection(ours.prepareCompactionAsync([], settings))).toEqual(want)
    expect(thrown(() => ours.countTokens('x', '\udc00cl100k'))).toEqual({
      name: 'TypeError',
      message: 'encoding: unknown encoding "\udc00cl100k"; expected one of o200k_base, cl100k_base',
    })
  })

  if (line === '1.6') {
    test('a system message\'s section key', () => {
      expect(thrown(() => ours.estimateTokens({ role: 'system', content: 'x', sections: { 'env\ud800': 5 }, timestamp: 1 }))).toEqual({
        name: 'TypeError',
        message: 'message.sections["env\ud800"]: expected a string or null, got a number',
      })
    })
  }
})
