'use strict'
// prepareCompaction reads what its planner needs of each entry ahead in JS
// (lib/entry-facts.js: kinds, ids, content nullness, the tool calls' names
// and paths) and the native planner takes it from there. The plan, the
// error and its message must be those of the binding reading every entry
// itself, on both lines, for generated sessions and for entries with an odd
// type, message, role, id, parentId, content, content block, call name,
// arguments, path or nestedCalls, read through getters (throwing ones
// too), Proxies, frozen or sparse arrays, lone surrogates; whatever chunks
// the facts come in.

const path = require('node:path')
const fc = require('fast-check')
const gen = require('./helpers/generator.js')
const { platformSuffix, binaryName } = require('../platform.js')
const { readEntryFacts, readEntryKinds, readMessageFacts, readMeasureFacts, pushEntryFacts, pushMessageFacts } = require('../lib/entry-facts.js')
const { loadReference } = require('./helpers/reference')
const { findDifference } = require('./helpers/compare.js')
const { AGENT_LINES } = require('../lib/api.js')
const { BOUNDARY } = require('../lib/codes.js')

const binding = require(path.join(__dirname, '..', `${binaryName}.${platformSuffix()}.node`))

const RUNS = Number(process.env.ENTRY_FACTS_RUNS) || 200
const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 200 }

jest.setTimeout(120_000)

/** The pieces of `0..n` that end at `ends` (one piece by default). */
function pieces(n, ends = []) {
  const out = []
  let first = 0
  for (const end of [...ends.filter((e) => e >= 0 && e <= n).sort((a, b) => a - b), n]) {
    if (end < first) continue
    out.push([first, end])
    first = end
  }
  return out
}

/**
 * planCut as lib/api.js calls it, each ask for measures answered; with
 * `units`, the pass measures as many messages as come to that many units
 * instead of what was asked (0: one a time).
 */
function cut(entries, settings, line, facts, units) {
  let wanted
  while ((wanted = binding.planCut(entries, settings, line, facts))?.measure !== undefined) {
    facts.pushMeasures(readMeasureFacts(entries, wanted.measure, units ?? wanted.units))
  }
  return wanted
}

/**
 * The plan as lib/api.js makes it: the entries' facts, the cut (with the
 * measures it asks for), its messages' facts, the plan; each pass in the
 * chunks `ends` names, each chunk cut again where its text reaches
 * `maxUnits` (the default's 2 ** 27 when undefined), the measures read as
 * `units` says (see cut).
 */
function phased(entries, settings, line, ends, maxUnits, units) {
  const facts = new binding.EntryFacts()
  for (const [from, to] of pieces(entries.length, ends)) pushEntryFacts(facts, entries, from, to, maxUnits)
  const wanted = cut(entries, settings, line, facts, units)
  if (wanted === undefined) return undefined
  const strings = []
  for (const [from, to] of pieces(wanted.length, ends)) pushMessageFacts(facts, entries, wanted, from, to, maxUnits, undefined, strings)
  return withPaths(binding.planFinish(entries, line, facts, true), strings)
}

/** A plan made with `pathRefs`, each path named by number made the string it names. */
function withPaths(plan, strings) {
  if (plan === undefined) return plan
  for (const set of ['read', 'written', 'edited']) plan[set] = Array.from(plan[set], (f) => (typeof f === 'number' ? strings[f] : f))
  return plan
}

/** The plan (or the error) of `plan()`. */
function outcome(plan) {
  try {
    return { plan: plan() }
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message }
  }
}

function sameBothWays(entries, settings, line, ends, maxUnits, units) {
  const alone = outcome(() => binding.prepareCompaction(entries, settings, line))
  const ahead = outcome(() => phased(entries, settings, line, ends, maxUnits, units))
  expect(ahead).toEqual(alone)
  return alone
}

/** Values a field may oddly hold. */
const oddArb = fc.oneof(
  fc.constantFrom(undefined, null, 0, 1, true, '', 'message', 'compaction', 'custom_message', 'context_edit', 'user', 'assistant', 'toolResult', 'system', 'toolCall', 'read', 'write', 'edit', 'bash', 'a.txt', '\ud800', 'x\udc00y', 'message\u0000'),
  fc.constantFrom('object', 'array', 'function', 'symbol', 'string object', 'getter', 'throwing getter', 'proxy', 'frozen'),
)

function oddValue(kind, plain) {
  switch (kind) {
    case 'object':
      return { role: 'user', content: 'x', path: 'p.txt', calls: [] }
    case 'array':
      return []
    case 'function':
      return () => 'user'
    case 'symbol':
      return Symbol('user')
    case 'string object':
      // eslint-disable-next-line no-new-wrappers
      return new String(typeof plain === 'string' ? plain : 'read')
    default:
      return kind === 'getter' || kind === 'throwing getter' || kind === 'proxy' || kind === 'frozen' ? plain : kind
  }
}

function setOdd(target, key, odd, plain) {
  if (odd === 'getter') Object.defineProperty(target, key, { enumerable: true, configurable: true, get: () => plain })
  else if (odd === 'throwing getter')
    Object.defineProperty(target, key, {
      enumerable: true,
      configurable: true,
      get() {
        throw new Error(`${key} getter failed`)
      },
    })
  else target[key] = oddValue(odd, plain)
  if (odd === 'frozen') Object.freeze(target)
}

const FIELDS = ['type', 'message', 'role', 'id', 'parentId', 'content', 'block', 'blockType', 'text', 'thinking', 'name', 'arguments', 'path', 'nestedCalls', 'calls', 'record', 'recordName', 'recordArguments', 'recordPath']

/** Entry `e` with `field` set to `odd`, in the way `odd` names. */
function withOdd(e, field, odd) {
  const copy = { ...e }
  if (field === 'type' || field === 'id' || field === 'parentId' || field === 'message') {
    const plain = field === 'type' ? 'message' : field === 'message' ? { role: 'assistant', content: [] } : 'id-x'
    setOdd(copy, field, odd, plain)
    return odd === 'proxy' ? new Proxy(copy, {}) : copy
  }
  const message = (copy.message = { ...(typeof copy.message === 'object' && copy.message !== null ? copy.message : { role: 'assistant' }) })
  if (field === 'role' || field === 'content' || field === 'nestedCalls') {
    const plain = field === 'role' ? 'assistant' : field === 'content' ? [{ type: 'text', text: 'hi' }] : { calls: [] }
    setOdd(message, field, odd, plain)
    if (odd === 'proxy') copy.message = new Proxy(message, {})
    return copy
  }
  if (field.startsWith('record') || field === 'calls') {
    // A tool result whose nestedCalls hold a few calls, one of them odd.
    copy.message = { role: 'toolResult', toolCallId: 'call-x', toolName: 'code', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 }
    const calls = [
      { name: 'read', arguments: { path: 'n1.txt' } },
      { name: 'edit', arguments: { path: 'n2.txt' } },
      { name: 'write', arguments: { path: 'n1.txt' } },
    ]
    const nested = { calls }
    if (field === 'calls') setOdd(nested, 'calls', odd, calls)
    else if (field === 'record') setOdd(calls, 1, odd, { name: 'write', arguments: { path: 'n3.txt' } })
    else {
      const record = (calls[1] = { ...calls[1], arguments: { ...calls[1].arguments } })
      if (field === 'recordName') setOdd(record, 'name', odd, 'read')
      else if (field === 'recordArguments') setOdd(record, 'arguments', odd, { path: 'n4.txt' })
      else setOdd(record.arguments, 'path', odd, 'n5.txt')
      if (odd === 'proxy') calls[1] = new Proxy(record, {})
    }
    if (odd === 'proxy' && field === 'calls') nested.calls = new Proxy(calls, {})
    copy.message.nestedCalls = nested
    return copy
  }
  if (field === 'blockType' || field === 'text' || field === 'thinking') {
    // A text or thinking block of the message's content, added where there is none.
    const content = (message.content = Array.isArray(message.content) ? message.content.slice() : [])
    const type = field === 'thinking' ? 'thinking' : 'text'
    let at = content.findIndex((b) => b && b.type === type)
    if (at < 0) {
      content.push(type === 'text' ? { type, text: 'hi' } : { type, thinking: 'hm' })
      at = content.length - 1
    }
    const block = (content[at] = { ...content[at] })
    if (field === 'blockType') setOdd(block, 'type', odd, type)
    else setOdd(block, field, odd, 'some words')
    if (odd === 'proxy') content[at] = new Proxy(block, {})
    return copy
  }
  // A tool call of the message's content, added where there is none.
  const content = (message.content = Array.isArray(message.content) ? message.content.slice() : [])
  let at = content.findIndex((b) => b && b.type === 'toolCall')
  if (at < 0) {
    content.push({ type: 'toolCall', id: 'call-x', name: 'read', arguments: { path: 'a.txt' } })
    at = content.length - 1
  }
  if (field === 'block') {
    setOdd(content, at, odd, { type: 'toolCall', id: 'call-y', name: 'edit', arguments: { path: 'b.txt' } })
    if (odd === 'proxy') message.content = new Proxy(content, {})
    return copy
  }
  const block = (content[at] = { ...content[at] })
  if (field === 'name') setOdd(block, 'name', odd, 'write')
  else {
    const args = (block.arguments = { ...(block.arguments ?? {}) })
    if (field === 'arguments') setOdd(block, 'arguments', odd, { path: 'c.txt' })
    else setOdd(args, 'path', odd, 'd.txt')
  }
  if (odd === 'proxy') content[at] = new Proxy(block, {})
  return copy
}

/** `entries` with each message entry's `message` behind a getter that calls `onRead()` first. */
function messagesBehindGetters(entries, onRead) {
  return entries.map((e) => {
    if (e.type !== 'message') return e
    const copy = { ...e }
    Object.defineProperty(copy, 'message', {
      enumerable: true,
      get() {
        onRead()
        return e.message
      },
    })
    return copy
  })
}

describe.each(AGENT_LINES.map((name) => [name, binding.agentLineIndex(name)]))('the %s line', (name, line) => {
  test('generated sessions: the same plan with the facts read ahead, in any chunks', () => {
    // Chunks also end where their text reaches a small limit, as they do at 2 ** 27 units.
    const unitsArb = fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined })
    // Measures one message a time, a few, or as many as asked.
    const measureArb = fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined })
    fc.assert(
      fc.property(gen.pathEntriesArb({ line: name }), gen.compactionSettingsArb, fc.array(fc.nat(), { maxLength: 4 }), unitsArb, measureArb, (entries, settings, cuts, maxUnits, units) => {
        const { plan } = sameBothWays(entries, settings, line, cuts.map((c) => c % (entries.length + 1)), maxUnits, units)
        return plan === undefined || typeof plan === 'object'
      }),
      { numRuns: RUNS, seed: 20261201 },
    )
  })

  test('an odd field anywhere: the same plan or the same error', () => {
    let errors = 0
    let plans = 0
    fc.assert(
      fc.property(gen.pathEntriesArb({ line: name, maxEntries: 20 }), fc.nat(), fc.constantFrom(...FIELDS), oddArb, (entries, at, field, odd) => {
        if (entries.length === 0) return
        const i = at % entries.length
        const bad = entries.slice()
        bad[i] = withOdd(entries[i], field, odd)
        const alone = sameBothWays(bad, SETTINGS, line)
        if (alone.error) errors++
        else if (alone.plan) plans++
      }),
      { numRuns: RUNS * 3, seed: 20261202 },
    )
    // Both outcomes were compared, not only one.
    expect(errors).toBeGreaterThan(0)
    expect(plans).toBeGreaterThan(0)
  })

  test('file operations from calls read ahead: the same Sets, in the same order', () => {
    // Without its compactions (relinked): most of it is summarized.
    const entries = gen
      .buildLargeSession(400, 5)
      .filter((e) => e.type !== 'compaction')
      .map((e, i, all) => ({ ...e, parentId: i === 0 ? null : all[i - 1].id }))
    const { plan } = sameBothWays(entries, { ...SETTINGS, keepRecentTokens: 2000 }, line, [7, 50, 51, 90])
    expect(plan.read.length + plan.written.length + plan.edited.length).toBeGreaterThan(0)
  })

  test('holes, non-object entries, a Proxy around the array, a frozen array', () => {
    const entries = gen.buildLargeSession(40, 7)
    const sparse = entries.slice()
    delete sparse[5]
    for (const input of [sparse, [...entries.slice(0, 3), 42, ...entries.slice(3)], [...entries, null], new Proxy(entries, {}), Object.freeze(entries.slice())]) {
      sameBothWays(input, SETTINGS, line)
    }
  })

  test('the cut counts each measured message as the estimate does, at every boundary', () => {
    // keepRecentTokens exactly the estimate of the last k messages, and one
    // more: the cut moves at each boundary, so a measure off by one unit
    // anywhere gives another plan.
    const entries = gen.buildLargeSession(50, 13)
    const extra = [
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'text', text: '' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm \ud83d' }, { type: 'text', text: '' }, { type: 'image' }, { type: 'toolCall', id: 'c', name: 'write', arguments: { path: 'a\u2028.txt', content: 'x"y\\z\u0001' } }, { type: 'other' }] },
      { role: 'toolResult', toolCallId: 'c', toolName: 'write', content: [{ type: 'thinking', thinking: 'not counted' }, { type: 'toolCall', name: 'x', arguments: {} }], isError: false },
      { role: 'custom', customType: 'note', content: 'a custom message', display: true },
      { role: 'user', content: 'plain text content' },
    ]
    let parent = entries[entries.length - 1].id
    for (const [k, message] of extra.entries()) {
      entries.push({ type: 'message', id: `extra-${k}`, parentId: parent, timestamp: '2026-01-01T00:00:00.000Z', message: { timestamp: 0, ...message } })
      parent = `extra-${k}`
    }
    const estimate = require(`../agent-${name}.js`).estimateTokens
    let keep = 0
    let boundaries = 0
    for (let i = entries.length - 1; i >= 0 && boundaries < 40; i--) {
      if (entries[i].type !== 'message') continue
      keep += estimate(entries[i].message)
      boundaries++
      for (const k of [keep, keep + 1]) {
        for (const units of [undefined, 0]) sameBothWays(entries, { ...SETTINGS, keepRecentTokens: k }, line, [], undefined, units)
      }
    }
    expect(boundaries).toBe(40)
  })

  test('a throwing read leaves that entry unread, and the native error is the one thrown', () => {
    const entries = gen.buildLargeSession(20, 3)
    const bad = entries.slice()
    bad[7] = withOdd(entries[7], 'type', 'throwing getter')
    const chunk = readEntryFacts(bad, 0, bad.length)
    expect(chunk.kinds[7]).toBe(BOUNDARY.entryKinds.NOT_READ)
    expect(chunk.ids[7]).toBe(0)
    expect(chunk.kinds[6]).not.toBe(BOUNDARY.entryKinds.NOT_READ)
    const odd = entries.slice()
    const at = odd.findIndex((e) => e.type === 'message')
    odd[at] = withOdd(entries[at], 'content', 'throwing getter')
    const messages = readMessageFacts(odd, new Uint32Array([at, at + 1]), 0, 2)
    expect(messages.contents[0]).toBe(0)
    expect(messages.contents[1]).not.toBe(0)
    const measures = readMeasureFacts(odd, new Uint32Array([at, at + 1]))
    expect(measures.forms[0]).toBe(BOUNDARY.entryFacts.MEASURE_NOT_READ)
    expect(measures.forms[1]).not.toBe(BOUNDARY.entryFacts.MEASURE_NOT_READ)
    const alone = sameBothWays(bad, SETTINGS, line)
    expect(alone.message).toMatch(/type getter failed/)
  })

  test('a prepareCompaction called from a getter in the middle of another gets facts of its own', () => {
    // lib/api.js keeps the facts object of one call for the next: a call
    // made while another reads its entries (here, from a getter the JS pass
    // and the native planner both read) must neither take nor disturb it.
    const ours = require(`../agent-${name}.js`)
    const entries = gen.buildLargeSession(40, 11)
    const inner = gen.buildLargeSession(30, 12)
    const innerPlan = ours.prepareCompaction(inner, SETTINGS)
    const plain = ours.prepareCompaction(entries, SETTINGS)
    expect(plain).toBeDefined()
    const innerPlans = []
    const outer = messagesBehindGetters(entries, () => innerPlans.push(ours.prepareCompaction(inner, SETTINGS)))
    expect(ours.prepareCompaction(outer, SETTINGS)).toEqual(plain)
    expect(innerPlans.length).toBeGreaterThan(entries.filter((e) => e.type === 'message').length)
    for (const p of innerPlans) expect(p).toEqual(innerPlan)
    // And the calls after it, on the facts object kept.
    expect(ours.prepareCompaction(entries, SETTINGS)).toEqual(plain)
    expect(ours.prepareCompaction(inner, SETTINGS)).toEqual(innerPlan)
  })

  test('facts released after a large session (emptied off the JS thread, their room kept) plan the next sessions as fresh ones do', async () => {
    const ours = require(`../agent-${name}.js`)
    const ref = await loadReference(name)
    // Past the size whose facts are emptied on a thread of their own, then smaller, larger, and the first again.
    const sessions = [[20_000, 1], [300, 2], [40_000, 3], [20_000, 1], [17_000, 4]].map(([n, seed]) => gen.buildLargeSession(n, seed))
    const expected = sessions.map((entries) => ref.prepareCompaction(entries, SETTINGS))
    expect(expected.every((p) => p !== undefined)).toBe(true)
    for (const wait of [0, 50]) {
      for (const [i, entries] of sessions.entries()) {
        // Each prepareCompaction releases its facts for the next call; with
        // no wait, the next may come before the thread has emptied them.
        if (wait) await new Promise((resolve) => setTimeout(resolve, wait))
        expect([wait, i, findDifference(expected[i], ours.prepareCompaction(entries, SETTINGS))]).toEqual([wait, i, null])
      }
    }
  })

  test('facts of another number of entries are not used', () => {
    const entries = gen.buildLargeSession(60, 9)
    const facts = new binding.EntryFacts()
    facts.pushEntries(readEntryFacts(entries, 0, 30))
    const plan = () => {
      const wanted = cut(entries, SETTINGS, line, facts)
      return wanted === undefined ? undefined : binding.planFinish(entries, line, facts)
    }
    expect(outcome(plan)).toEqual(outcome(() => binding.prepareCompaction(entries, SETTINGS, line)))
  })
})

// findCutPoint and prepareBranchEntries read only the entries' kinds ahead
// (readEntryKinds), findCutPoint only those of its range: the result, the
// error and its message must be those of the binding reading every entry
// itself.
describe.each(AGENT_LINES.map((name) => [name, binding.agentLineIndex(name)]))('the %s line, with only the kinds read ahead', (name, line) => {
  function kinds(entries, from, to) {
    const facts = new binding.EntryFacts()
    facts.pushEntries(readEntryKinds(entries, from, to))
    return facts
  }

  /** findCutPoint's and prepareBranchEntries' outcomes, each the same both ways. */
  function sameBothWays(entries, start, end, keep, budget) {
    const cutAlone = outcome(() => binding.findCutPoint(entries, start, end, keep, line))
    const from = Math.max(0, start)
    const to = Math.min(end, entries.length)
    expect(outcome(() => binding.findCutPoint(entries, start, end, keep, line, undefined, kinds(entries, from, to)))).toEqual(cutAlone)
    const branchAlone = outcome(() => binding.prepareBranchEntries(entries, budget, line))
    expect(outcome(() => binding.prepareBranchEntries(entries, budget, line, kinds(entries, 0, entries.length)))).toEqual(branchAlone)
    return [cutAlone, branchAlone]
  }

  test('generated sessions, any range, any budget', () => {
    fc.assert(
      fc.property(gen.pathEntriesArb({ line: name }), fc.nat(), fc.nat(), fc.nat({ max: 5000 }), fc.nat({ max: 20000 }), (entries, a, b, keep, budget) => {
        const n = entries.length + 1
        const [start, end] = [a % n, b % n].sort((x, y) => x - y)
        sameBothWays(entries, start, end, keep, budget)
      }),
      { numRuns: RUNS, seed: 20261205 },
    )
  })

  test('an odd field anywhere: the same result or the same error', () => {
    let errors = 0
    let results = 0
    fc.assert(
      fc.property(gen.pathEntriesArb({ line: name, maxEntries: 20 }), fc.nat(), fc.constantFrom(...FIELDS), oddArb, fc.nat({ max: 400 }), (entries, at, field, odd, budget) => {
        if (entries.length === 0) return
        const i = at % entries.length
        const bad = entries.slice()
        bad[i] = withOdd(entries[i], field, odd)
        for (const o of sameBothWays(bad, 0, bad.length, 200, budget)) {
          if (o.error) errors++
          else results++
        }
      }),
      { numRuns: RUNS * 3, seed: 20261206 },
    )
    // Both outcomes were compared, not only one.
    expect(errors).toBeGreaterThan(0)
    expect(results).toBeGreaterThan(0)
  })

  test('holes, non-object entries, a Proxy around the array, a frozen array', () => {
    const entries = gen.buildLargeSession(40, 7)
    const sparse = entries.slice()
    delete sparse[5]
    for (const input of [sparse, [...entries.slice(0, 3), 42, ...entries.slice(3)], [...entries, null], new Proxy(entries, {}), Object.freeze(entries.slice())]) {
      sameBothWays(input, 0, input.length, 300, 300)
      sameBothWays(input, 10, 30, 300, 0)
    }
  })

  test('findCutPoint reads no entry outside its range, as the reference reads none', async () => {
    const ref = await loadReference(name)
    const ours = require(`../agent-${name}.js`)
    const entries = gen.buildLargeSession(60, 13)
    const [start, end] = [12, 48]
    const read = new Set()
    const guarded = new Proxy(entries, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) {
          const i = Number(key)
          if (i < start || i >= end) throw new Error(`entry ${i} read`)
          read.add(i)
        }
        return Reflect.get(target, key, receiver)
      },
    })
    const expected = ref.findCutPoint(guarded, start, end, 400)
    expect(ours.findCutPoint(guarded, start, end, 400)).toEqual(expected)
    expect(read.size).toBeGreaterThan(0)
    // Ranges past the ends, and numbers that are not indices: what the binding gives reading every entry itself.
    for (const [a, b] of [[-5, 30], [20, 1000], [2.5, 40], [NaN, 40], [10, Infinity], [30, 20]]) {
      expect(outcome(() => ours.findCutPoint(entries, a, b, 400))).toEqual(outcome(() => binding.findCutPoint(entries, a, b, 400, line)))
    }
  })

  test('what is not an array is the native side\'s to judge: its length is not read first', () => {
    const ours = require(`../agent-${name}.js`)
    const notArray = {
      get length() {
        throw new Error('length read')
      },
    }
    expect(outcome(() => ours.prepareBranchEntries(notArray, 100))).toEqual(outcome(() => binding.prepareBranchEntries(notArray, 100, line)))
    expect(outcome(() => ours.findCutPoint(notArray, 0, 3, 100))).toEqual(outcome(() => binding.findCutPoint(notArray, 0, 3, 100, line)))
    expect(outcome(() => ours.prepareBranchEntries(notArray, 100)).message).toMatch(/^entries: expected an array/)
  })

  test('a call from a getter in the middle of another gets facts of its own', () => {
    const ours = require(`../agent-${name}.js`)
    const entries = gen.buildLargeSession(40, 11)
    const inner = gen.buildLargeSession(30, 12)
    const innerCut = ours.findCutPoint(inner, 0, inner.length, 300)
    const innerBranch = ours.prepareBranchEntries(inner, 300)
    const seen = []
    const outer = messagesBehindGetters(entries, () => seen.push([ours.findCutPoint(inner, 0, inner.length, 300), ours.prepareBranchEntries(inner, 300)]))
    expect(ours.findCutPoint(outer, 0, outer.length, 300)).toEqual(ours.findCutPoint(entries, 0, entries.length, 300))
    expect(ours.prepareBranchEntries(outer, 300)).toEqual(ours.prepareBranchEntries(entries, 300))
    expect(seen.length).toBeGreaterThan(0)
    for (const [cut, branch] of seen) {
      expect(cut).toEqual(innerCut)
      expect(branch).toEqual(innerBranch)
    }
  })
})

test('a kinds chunk: the kinds of its range, every other entry and every id not read', () => {
  const { NOT_READ, OTHER_TYPE, types, roles } = BOUNDARY.entryKinds
  const entries = [
    { type: 'message', message: { role: 'user' } },
    { type: 'compaction' },
    { type: 'message', message: { role: 'assistant' } },
    { type: 'label' },
    { type: 'message', message: { role: 7 } },
    { type: 'message', message: { role: 'toolResult' } },
  ]
  const chunk = readEntryKinds(entries, 1, 5)
  expect(chunk.first).toBe(0)
  expect([...chunk.kinds]).toEqual([NOT_READ, types.compaction, roles.assistant, OTHER_TYPE, NOT_READ, NOT_READ])
  expect([...chunk.ids]).toEqual([0, 0, 0, 0, 0, 0])
  expect(chunk.lengths.length).toBe(0)
  expect(chunk.text).toBe('')
})

test('the kind codes are the core’s: every type and role name, and the others', () => {
  const { NOT_READ, OTHER_TYPE, OTHER_ROLE, MESSAGE_TYPE, types, roles } = BOUNDARY.entryKinds
  expect(MESSAGE_TYPE).toBe('message')
  expect(Object.keys(types)).toEqual(['compaction', 'branch_summary', 'custom_message', 'context_edit'])
  expect(Object.keys(roles)).toEqual(['user', 'assistant', 'toolResult', 'bashExecution', 'custom', 'branchSummary', 'compactionSummary', 'system'])
  const entries = [
    ...Object.keys(types).map((type) => ({ type })),
    { type: 'label' },
    ...Object.keys(roles).map((role) => ({ type: 'message', message: { role } })),
    { type: 'message', message: { role: 'narrator' } },
    // Names of Object.prototype's properties are names like any other.
    { type: '__proto__' },
    { type: 'constructor' },
    { type: 'message', message: { role: 'toString' } },
    { type: 'message', message: 'user' },
    { type: 7 },
    null,
  ]
  expect(Array.from(readEntryFacts(entries, 0, entries.length).kinds)).toEqual([...Object.values(types), OTHER_TYPE, ...Object.values(roles), OTHER_ROLE, OTHER_TYPE, OTHER_TYPE, OTHER_ROLE, NOT_READ, NOT_READ, NOT_READ])
})

test('the chunks as the core reads them: ids, then contents, calls and their strings', () => {
  const { ID_ABSENT, ID_STRING, ID_PREVIOUS, PARENT_SHIFT, CONTENT_PRESENT, CONTENT_NULLISH, CALLS_READ } = BOUNDARY.entryFacts
  const entries = [
    { type: 'message', id: 'a', parentId: null, message: { role: 'assistant', content: [{ type: 'text', text: 't' }, { type: 'toolCall', name: 'read', arguments: { path: 'x\ud800' } }, { type: 'toolCall', name: 'bash', arguments: { command: 'ls' } }] } },
    { type: 'message', id: 'b', parentId: 'a', message: { role: 'toolResult', content: null } },
    { type: 'message', id: 5, parentId: 'b', message: { role: 'toolResult', content: [], nestedCalls: { calls: [{ name: 'edit', arguments: { path: 'y' } }, { name: 'bash', arguments: {} }] } } },
    { type: 'message', id: 'c', parentId: 'a', message: { role: 'user', content: 'u' } },
  ]
  const chunk = readEntryFacts(entries, 0, 4)
  // The id before is a parent's code (whatever the entry's own id); after
  // an id that is not a string, a parent is sent whole.
  expect(Array.from(chunk.ids)).toEqual([ID_STRING | (ID_ABSENT << PARENT_SHIFT), ID_STRING | (ID_PREVIOUS << PARENT_SHIFT), ID_PREVIOUS << PARENT_SHIFT, ID_STRING | (ID_STRING << PARENT_SHIFT)])
  expect(chunk.text).toBe('abca')
  expect(Array.from(chunk.lengths)).toEqual([1, 1, 1, 1])
  // A chunk starting at the second entry sends its parent whole.
  const later = readEntryFacts(entries, 1, 2)
  expect([Array.from(later.ids), later.text]).toEqual([[ID_STRING | (ID_STRING << PARENT_SHIFT)], 'ba'])
  const facts = new binding.EntryFacts()
  facts.pushEntries(chunk)
  expect(() => facts.pushEntries({ first: 4, kinds: new Uint8Array(1), ids: new Uint8Array([ID_ABSENT | (ID_PREVIOUS << PARENT_SHIFT)]), lengths: new Uint32Array(0), text: '' })).toThrow(/malformed entry facts: a parent code naming no previous id/)
  facts.release()
  const messages = readMessageFacts(entries, new Uint32Array([2, 0, 1]), 0, 3)
  expect(Array.from(messages.at)).toEqual([2, 0, 1])
  expect(Array.from(messages.contents)).toEqual([CONTENT_PRESENT | CALLS_READ, CONTENT_PRESENT | CALLS_READ, CONTENT_NULLISH | CALLS_READ])
  expect(Array.from(messages.calls)).toEqual([1, 1, 0])
  expect(Array.from(messages.refs)).toEqual([0, 1, 2, 3])
  expect(messages.text).toBe('edityreadx\ud800')
  expect(Array.from(messages.lengths)).toEqual([4, 1, 4, 2])
  // Nested calls that are none (a string, null) are read as none; calls
  // that are not an array, or hold a null record, are left to the native side.
  const nested = [{ calls: 'abc' }, { calls: null }, { calls: { length: 1, 0: { name: 'read', arguments: { path: 'z' } } } }, { calls: [{ name: 'read', arguments: { path: 'z' } }, null] }, 7]
  const results = nested.map((nestedCalls, i) => ({ type: 'message', id: `r${i}`, parentId: null, message: { role: 'toolResult', content: [], nestedCalls } }))
  const read = readMessageFacts(results, new Uint32Array([0, 1, 2, 3, 4]), 0, 5)
  expect(Array.from(read.contents)).toEqual([CONTENT_PRESENT | CALLS_READ, CONTENT_PRESENT | CALLS_READ, CONTENT_PRESENT, CONTENT_PRESENT, CONTENT_PRESENT | CALLS_READ])
  expect([Array.from(read.calls), Array.from(read.refs)]).toEqual([[0, 0, 0, 0, 0], []])
})

test('chunks read with arrays kept from an earlier call are those read with new ones', () => {
  // The synchronous prepareCompaction lends its passes typed arrays kept
  // from its last call (lib/typed-array.js Scratch): whatever an earlier
  // call left in them must not show. Each pass runs on a busy session, then
  // on one whose facts are mostly left unread (zero), then the other way.
  const { Scratch } = require('../lib/typed-array.js')
  const chunkOf = (chunk) => Object.fromEntries(Object.entries(chunk).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v) : v]))
  const busy = gen.buildLargeSession(300, 21)
  const odd = [null, 7, { type: 'message', id: 3, message: null }, { type: 'message', message: { role: 'assistant', content: null } }, { type: 'message', message: { role: 'assistant', content: [null] } }, { type: 'message', message: { role: 'user', content: 5 } }]
  const sessions = [busy, odd, busy]
  const scratch = new Scratch()
  for (const entries of [...sessions, ...sessions.slice().reverse()]) {
    const at = Uint32Array.from(entries.keys())
    expect(chunkOf(readEntryFacts(entries, 0, entries.length, undefined, scratch))).toEqual(chunkOf(readEntryFacts(entries, 0, entries.length)))
    expect(chunkOf(readMessageFacts(entries, at, 0, at.length, undefined, scratch))).toEqual(chunkOf(readMessageFacts(entries, at, 0, at.length)))
    expect(chunkOf(readMeasureFacts(entries, at, Infinity, scratch))).toEqual(chunkOf(readMeasureFacts(entries, at)))
  }
})

test('a plan made with pathRefs names each path a chunk gave by its place among the chunks\' strings, the others as strings', () => {
  // Three messages chunks; the last message's calls are read natively (a
  // call with null arguments comes first, which the JS pass leaves to the
  // native side), so its path comes as a string.
  const call = (id, parentId, name, path) => ({ type: 'message', id, parentId, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'assistant', content: [{ type: 'toolCall', id: `c${id}`, name, arguments: { path } }], timestamp: 1 } })
  const native = call('n', 'd', 'write', 'native.txt')
  native.message.content.unshift({ type: 'toolCall', id: 'cz', name: 'read', arguments: null })
  const entries = [call('a', null, 'read', 'one.txt'), call('b', 'a', 'edit', 'two.txt'), call('c', 'b', 'read', 'one.txt'), call('d', 'c', 'read', 'three.txt'), native, { type: 'message', id: 'u', parentId: 'n', timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: 'x'.repeat(4000), timestamp: 2 } }]
  const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 10 }
  const facts = new binding.EntryFacts()
  pushEntryFacts(facts, entries, 0, entries.length)
  const wanted = cut(entries, settings, 0, facts)
  expect(Array.from(wanted)).toEqual([0, 1, 2, 3, 4])
  const strings = []
  for (const [from, to] of [[0, 2], [2, 3], [3, 5]]) pushMessageFacts(facts, entries, wanted, from, to, undefined, undefined, strings)
  expect(strings).toEqual(['read', 'one.txt', 'edit', 'two.txt', 'read', 'one.txt', 'read', 'three.txt'])
  const plan = binding.planFinish(entries, 0, facts, true)
  facts.release()
  // A list whose every path a chunk gave is a Uint32Array of their places.
  expect([plan.read, plan.written, plan.edited].map((list) => list.constructor.name)).toEqual(['Uint32Array', 'Array', 'Uint32Array'])
  expect([plan.read, plan.written, plan.edited].map((list) => Array.from(list))).toEqual([[1, 7], ['native.txt'], [3]])
  expect(withPaths(plan, strings)).toEqual(binding.prepareCompaction(entries, settings, 0))
})

test('measures as the core reads them: a content string, blocks and their lengths, until the units asked; anything odd not measured', () => {
  const { MEASURE_NOT_READ, MEASURE_TEXT, MEASURE_BLOCKS, BLOCK_OTHER, BLOCK_TEXT, BLOCK_THINKING, BLOCK_TOOL_CALL, BLOCK_IMAGE } = BOUNDARY.entryFacts
  const args = { path: 'a\ud800', n: 1 }
  const throwing = { get type() { throw new Error('boom') } }
  const entries = [
    { message: { role: 'user', content: 'hello' } },
    { message: { role: 'assistant', content: [{ type: 'text', text: 'ab' }, { type: 'thinking', thinking: 'xyz' }, { type: 'toolCall', name: 'read', arguments: args }, { type: 'image' }, { type: 'other' }, { text: 7 }] } },
    { message: { role: 'assistant', content: [{ type: 'text', text: 5 }] } },
    { message: { role: 'toolResult', content: null } },
    { message: { role: 'assistant', content: [{ type: 'toolCall', name: 'f', arguments: undefined }] } },
    { message: { role: 'user', content: [{ type: 'text', text: 'ok' }, throwing] } },
    { message: { role: 'user', content: [null] } },
    null,
  ]
  const at = Uint32Array.from(entries.keys())
  const chunk = readMeasureFacts(entries, at)
  expect(Array.from(chunk.at)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  expect(Array.from(chunk.forms)).toEqual([MEASURE_TEXT, MEASURE_BLOCKS, MEASURE_NOT_READ, MEASURE_NOT_READ, MEASURE_NOT_READ, MEASURE_NOT_READ, MEASURE_NOT_READ, MEASURE_NOT_READ])
  expect(Array.from(chunk.counts)).toEqual([0, 6, 0, 0, 0, 0, 0, 0])
  expect(Array.from(chunk.blocks)).toEqual([BLOCK_TEXT, BLOCK_THINKING, BLOCK_TOOL_CALL, BLOCK_IMAGE, BLOCK_OTHER, BLOCK_OTHER])
  expect(Array.from(chunk.lengths)).toEqual([5, 2, 3, 4, JSON.stringify(args).length])
  // Until the lengths come to the units asked: 5, then 5 + 21; at least one message.
  expect(Array.from(readMeasureFacts(entries, at, 6).at)).toEqual([0, 1])
  expect(Array.from(readMeasureFacts(entries, at, 5).at)).toEqual([0])
  expect(Array.from(readMeasureFacts(entries, at, 0).at)).toEqual([0])
  const facts = new binding.EntryFacts()
  facts.pushEntries(readEntryFacts(entries, 0, entries.length))
  facts.pushMeasures(chunk)
  const bad = (change) => () => facts.pushMeasures({ ...chunk, ...change })
  expect(bad({ forms: chunk.forms.subarray(1) })).toThrow(/malformed measures: arrays of different lengths/)
  expect(bad({ at: new Uint32Array(8).fill(8) })).toThrow(/malformed measures: a message of no entry/)
  expect(bad({ forms: new Uint8Array(8).fill(7) })).toThrow(/malformed measures: a form code/)
  expect(bad({ blocks: chunk.blocks.map(() => 9) })).toThrow(/malformed measures: a block code/)
  expect(bad({ blocks: chunk.blocks.subarray(1) })).toThrow(/malformed measures: too few blocks/)
  expect(bad({ lengths: chunk.lengths.subarray(1) })).toThrow(/malformed measures: too few lengths/)
  expect(bad({ lengths: new Uint32Array([...chunk.lengths, 1]) })).toThrow(/malformed measures: blocks or lengths left over/)
  expect(bad({ counts: new Uint32Array([0, 6, 1, 0, 0, 0, 0, 0]) })).toThrow(/malformed measures: blocks of a message not measured/)
  facts.release()
})

test('a tool call\'s arguments measure as long as JSON.stringify makes them, long strings counted natively', () => {
  // Strings of every kind of unit, short and past the native side's 64, in
  // plain objects and in the other values JSON.stringify takes its own way.
  const unitArb = fc.oneof(
    fc.constantFrom('a', ' ', '"', '\\', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', '中', '\ud83d\ude00', '\ud800', '\udc00', '\u2028'),
    fc.string({ maxLength: 3 }),
  )
  const stringArb = fc.oneof(fc.array(unitArb, { maxLength: 8 }), fc.array(unitArb, { minLength: 20, maxLength: 200 })).map((parts) => parts.join(''))
  // Values nested past the depth measured in JS too (a 1.6 edit's
  // `edits: [{ oldText, newText }]` is two levels down), with holes,
  // elements JSON.stringify writes as null, and toJSON given its key.
  const { value: valueArb } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 8, arbitrary: stringArb },
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constantFrom(null, undefined, () => 1, Symbol('s'), NaN, Infinity, -0, 1e21, 1e-7, 10n),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.sparseArray(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.oneof(stringArb, fc.constantFrom('oldText', 'newText', '1')), tie('value'), { maxKeys: 3 }),
      stringArb.map((x) => ({ toJSON: (key) => (key.length % 2 ? undefined : { key, x }) })),
      tie('value').map((v) => Object.freeze([v])),
      tie('value').map((v) => new Proxy({ v }, {})),
    ),
  }))
  const argsArb = fc.oneof(
    { weight: 4, arbitrary: fc.dictionary(fc.oneof(stringArb, fc.constantFrom('0', '10', '2', 'path', 'content')), valueArb, { maxKeys: 4 }) },
    fc.dictionary(stringArb, stringArb, { maxKeys: 3 }).map((o) => Object.assign(Object.create(null), o)),
    fc.dictionary(stringArb, stringArb, { maxKeys: 3 }).map((o) => new Proxy(o, {})),
    fc.dictionary(stringArb, stringArb, { maxKeys: 3 }).map((o) => ({ ...o, toJSON: () => ({ replaced: Object.keys(o).length }) })),
    fc.dictionary(stringArb, stringArb, { maxKeys: 3 }).map((o) => Object.defineProperty(o, 'got', { enumerable: true, get: () => 'a "getter"\n'.repeat(10) })),
    fc.constantFrom(undefined, 'text', 7, null, []),
  )
  fc.assert(
    fc.property(fc.array(argsArb, { minLength: 1, maxLength: 6 }), (list) => {
      const entries = list.map((args) => ({ message: { role: 'assistant', content: [{ type: 'toolCall', name: 'write', arguments: args }] } }))
      const chunk = readMeasureFacts(entries, Uint32Array.from(entries.keys()))
      // (arguments JSON.stringify throws on, a BigInt's, are not measured either)
      const stringified = (args) => {
        try {
          return JSON.stringify(args)
        } catch {
          return undefined
        }
      }
      const measured = list.map(stringified).filter((json) => typeof json === 'string')
      expect(Array.from(chunk.lengths)).toEqual(measured.flatMap((json) => [5, json.length]))
    }),
    { numRuns: RUNS * 5 },
  )
  // A message whose later block is odd takes back its long strings: the
  // next message's lengths are its own.
  const long = 'x\n'.repeat(100)
  const entries = [
    { message: { role: 'assistant', content: [{ type: 'toolCall', name: 'w', arguments: { content: long } }, null] } },
    { message: { role: 'assistant', content: [{ type: 'toolCall', name: 'w', arguments: { path: 'p', content: long + long } }] } },
  ]
  const chunk = readMeasureFacts(entries, Uint32Array.from([0, 1]))
  expect(Array.from(chunk.lengths)).toEqual([1, JSON.stringify(entries[1].message.content[0].arguments).length])
  // A getter that measures other arguments meanwhile: each gets its own lengths.
  const inner = [{ message: { role: 'assistant', content: [{ type: 'toolCall', name: 'w', arguments: { content: 'y"'.repeat(400), path: 'q' } }] } }]
  let innerLengths
  const outerArgs = {
    path: 'p',
    get content() {
      innerLengths = Array.from(readMeasureFacts(inner, Uint32Array.from([0])).lengths)
      return 'z\n'.repeat(300)
    },
  }
  const outer = [{ message: { role: 'assistant', content: [{ type: 'toolCall', name: 'w', arguments: outerArgs }] } }]
  expect(Array.from(readMeasureFacts(outer, Uint32Array.from([0])).lengths)).toEqual([1, JSON.stringify(outerArgs).length])
  expect(innerLengths).toEqual([1, JSON.stringify(inner[0].message.content[0].arguments).length])
  expect(() => binding.jsonStringLengths(['a', 7])).toThrow(/^strings\[1\]: expected a string, got a number$/)
})

test('a tool call\'s arguments are read once each, in JSON.stringify\'s order, as long as JSON.stringify makes them', () => {
  // Each field behind a getter that logs its read and gives a longer string
  // each time; an object value logs its toJSON call and the key it gets.
  const fieldSets = [
    ['path', 'command'],
    ['path', 'content'],
    ['path', 'n', 'opts', 'gone', 'content', 'list'],
    ['opts', 'n'],
    ['path', 'edits', 'n'],
  ]
  const argsOf = (names, log) => {
    const args = {}
    let reads = 0
    const values = {
      path: () => 'src/a.ts',
      command: () => 'ls "x"\n'.repeat(1 + reads),
      content: () => 'y\n'.repeat(300 + reads),
      n: () => 7,
      gone: () => undefined,
      list: () => ['x', { y: 1 }],
      // A 1.6 edit's: getters two levels down, read in their turn.
      edits: () =>
        [0, 1].map((e) => {
          const edit = {}
          for (const field of ['oldText', 'newText']) {
            Object.defineProperty(edit, field, {
              enumerable: true,
              get() {
                log.push(`get edits[${e}].${field}`)
                return `${field} ${reads}\n`.repeat(e === 0 ? 100 : 2)
              },
            })
          }
          return edit
        }),
      opts: () => ({
        toJSON(key) {
          log.push(`toJSON ${key}`)
          return { key, reads }
        },
      }),
    }
    for (const name of names) {
      Object.defineProperty(args, name, {
        enumerable: true,
        get() {
          log.push(`get ${name}`)
          reads++
          return values[name]()
        },
      })
    }
    return args
  }
  for (const names of fieldSets) {
    const ours = []
    const theirs = []
    const entries = [{ message: { role: 'assistant', content: [{ type: 'toolCall', name: 'w', arguments: argsOf(names, ours) }] } }]
    const lengths = Array.from(readMeasureFacts(entries, Uint32Array.from([0])).lengths)
    const json = JSON.stringify(argsOf(names, theirs))
    expect({ names, log: ours, lengths }).toEqual({ names, log: theirs, lengths: [1, json.length] })
  }
  // An own `__proto__` key (JSON.parse makes one) is a field like any other.
  for (const text of ['{"__proto__":{"a":1},"path":"p"}', `{"__proto__":"${'z'.repeat(600)}","n":[1]}`]) {
    const args = JSON.parse(text)
    const entries = [{ message: { role: 'assistant', content: [{ type: 'toolCall', name: 'w', arguments: args }] } }]
    expect(Array.from(readMeasureFacts(entries, Uint32Array.from([0])).lengths)).toEqual([1, text.length])
  }
})

test('each name and path goes over once; a message that throws takes back its calls but not the strings it added', () => {
  const call = (name, path) => ({ type: 'toolCall', name, arguments: { path } })
  const throwing = { get type() { throw new Error('boom') } }
  const entries = [
    { message: { role: 'assistant', content: [call('read', 'a.ts'), call('read', 'a.ts')] } },
    { message: { role: 'assistant', content: [call('edit', 'b.ts'), throwing] } },
    { message: { role: 'assistant', content: [call('edit', 'b.ts'), call('read', 'a.ts'), call('write', 'c.ts')] } },
  ]
  const messages = readMessageFacts(entries, new Uint32Array([0, 1, 2]), 0, 3)
  const { CONTENT_PRESENT, CALLS_READ } = BOUNDARY.entryFacts
  expect(Array.from(messages.contents)).toEqual([CONTENT_PRESENT | CALLS_READ, 0, CONTENT_PRESENT | CALLS_READ])
  expect(Array.from(messages.calls)).toEqual([2, 0, 3])
  // 'edit' and 'b.ts' came with the message that threw; the third names them.
  expect(messages.text).toBe('reada.tseditb.tswritec.ts')
  expect(Array.from(messages.lengths)).toEqual([4, 4, 4, 4, 5, 4])
  expect(Array.from(messages.refs)).toEqual([0, 1, 0, 1, 2, 3, 0, 1, 4, 5])
  const facts = new binding.EntryFacts()
  facts.pushEntries(readEntryFacts(entries, 0, 3))
  facts.pushMessages(messages)
  expect(() => facts.pushMessages({ ...messages, refs: messages.refs.subarray(1) })).toThrow(/malformed entry facts: an odd number of refs/)
  expect(() => facts.pushMessages({ ...messages, refs: messages.refs.subarray(2) })).toThrow(/malformed entry facts: too few refs/)
  expect(() => facts.pushMessages({ ...messages, refs: messages.refs.map((r) => r + 6) })).toThrow(/malformed entry facts: a ref past the strings/)
  facts.release()
})

test('paths are read after every message\'s blocks, once each: a path that throws takes back its message\'s calls, not the others\'', () => {
  const reads = []
  const args = (path, i) => ({
    get path() {
      reads.push(i)
      if (path instanceof Error) throw path
      return path
    },
  })
  const call = (name, path, i) => ({ type: 'toolCall', name, arguments: args(path, i) })
  const entries = [
    { message: { role: 'assistant', content: [call('read', 'a.ts', 0), { type: 'text', text: 't' }, call('bash', undefined, 1)] } },
    { message: { role: 'assistant', content: [call('edit', 'b.ts', 2), call('write', new Error('boom'), 3), call('read', 'c.ts', 4)] } },
    { message: { role: 'toolResult', content: [], nestedCalls: { calls: [{ name: 'write', arguments: args('d.ts', 5) }] } } },
    { message: { role: 'assistant', content: [call('read', 'a.ts', 6), null] } },
  ]
  const messages = readMessageFacts(entries, new Uint32Array([0, 1, 2, 3]), 0, 4)
  const { CONTENT_PRESENT, CALLS_READ } = BOUNDARY.entryFacts
  // The last message's null block leaves its calls to the native side before any path is read.
  expect(reads).toEqual([0, 1, 2, 3, 4, 5])
  expect(Array.from(messages.contents)).toEqual([CONTENT_PRESENT | CALLS_READ, 0, CONTENT_PRESENT | CALLS_READ, CONTENT_PRESENT])
  expect(Array.from(messages.calls)).toEqual([1, 0, 1, 0])
  // 'edit' and 'b.ts' came with the message that threw, and stay, named by none.
  expect(messages.text).toBe('reada.tseditb.tswrited.ts')
  expect(Array.from(messages.refs)).toEqual([0, 1, 4, 5])
  const facts = new binding.EntryFacts()
  facts.pushEntries(readEntryFacts(entries, 0, 4))
  facts.pushMessages(messages)
  facts.release()
  // A read of the same facts from a path's getter, in the middle of the
  // pass: each gets its own, the same as read alone.
  const chunkOf = (chunk) => Object.fromEntries(Object.entries(chunk).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v) : v]))
  const plain = [{ message: { role: 'assistant', content: [call('read', 'a.ts', 7), call('edit', 'b.ts', 8)] } }]
  const alone = chunkOf(readMessageFacts(plain, new Uint32Array([0]), 0, 1))
  let inner
  const outer = [
    { message: { role: 'assistant', content: [call('write', 'x.ts', 9), { type: 'toolCall', name: 'read', arguments: { get path() { inner = chunkOf(readMessageFacts(plain, new Uint32Array([0]), 0, 1)); return 'y.ts' } } }] } },
    { message: { role: 'assistant', content: [call('edit', 'z.ts', 10)] } },
  ]
  const both = chunkOf(readMessageFacts(outer, new Uint32Array([0, 1]), 0, 2))
  expect(inner).toEqual(alone)
  expect(both.text).toBe('writex.tsready.tseditz.ts')
  expect(both.calls).toEqual([2, 1])
})

test('a chunk ends once its text reaches the limit, and the next goes on from there', () => {
  // A chunk's first entry adds 16 units (an 8-unit id and parent), each
  // next one 8 (its parent is the id before it); a limit of 30 is reached
  // after the third entry, so chunks are 3 entries long.
  const id = (i) => `id${String(i).padStart(6, '0')}`
  const entries = Array.from({ length: 8 }, (_, i) => ({ type: 'message', id: id(i + 1), parentId: id(i), message: { role: 'assistant', content: [{ type: 'toolCall', name: 'read', arguments: { path: `f${i}.ts` } }] } }))
  const chunk = readEntryFacts(entries, 0, 8, 30)
  expect(chunk.kinds.length).toBe(3)
  expect(chunk.text).toBe(id(1) + id(0) + id(2) + id(3))
  expect(Array.from(chunk.lengths)).toEqual([8, 8, 8, 8])
  const next = readEntryFacts(entries, 3, 8, 30)
  expect([next.first, next.kinds.length, next.text]).toEqual([3, 3, id(4) + id(3) + id(5) + id(6)])
  const facts = new binding.EntryFacts()
  const sizes = []
  const push = facts.pushEntries.bind(facts)
  facts.pushEntries = (c) => (sizes.push(c.kinds.length), push(c))
  pushEntryFacts(facts, entries, 0, 8, 30)
  expect(sizes).toEqual([3, 3, 2])
  // Messages: the first adds 4 + 5 units (name and path), each next one 5
  // (its path; the name is there already); a limit of 10 is reached after the second.
  const at = Uint32Array.from(entries.keys())
  const messages = readMessageFacts(entries, at, 0, 8, 10)
  expect(Array.from(messages.at)).toEqual([0, 1])
  expect(messages.text).toBe('readf0.tsf1.ts')
  expect(Array.from(messages.lengths)).toEqual([4, 5, 5])
  expect(Array.from(messages.refs)).toEqual([0, 1, 0, 2])
  const counts = []
  const pushMessages = facts.pushMessages.bind(facts)
  facts.pushMessages = (c) => (counts.push(c.contents.length), pushMessages(c))
  pushMessageFacts(facts, entries, at, 0, 8, 10)
  expect(counts).toEqual([2, 2, 2, 2])
  facts.release()
})

test('malformed chunks are errors that name the problem, and add nothing; a message past the entries pushed is no error', () => {
  const entries = gen.buildLargeSession(10, 1)
  const facts = new binding.EntryFacts()
  const good = readEntryFacts(entries, 0, 5)
  expect(() => facts.pushEntries({ ...good, first: 3 })).toThrow(/malformed entry facts: a chunk out of order/)
  expect(() => facts.pushEntries({ ...good, lengths: good.lengths.subarray(1) })).toThrow(/malformed entry facts/)
  expect(() => facts.pushEntries({ ...good, kinds: new Uint8Array(2) })).toThrow(/malformed entry facts: arrays of different lengths/)
  expect(() => facts.pushEntries({ ...good, text: 5 })).toThrow()
  expect(() => facts.pushEntries({ ...good, ids: new Uint32Array(5) })).toThrow()
  facts.pushEntries(good)
  facts.pushEntries(readEntryFacts(entries, 5, 10))
  const all = new Uint32Array(entries.map((_, i) => i))
  const messages = readMessageFacts(entries, all, 0, 10)
  // A message past the entries pushed (the array grew while it was read):
  // no error (that it adds nothing, facts.rs's tests show), and the plan
  // below is still the native one.
  expect(() => facts.pushMessages({ ...messages, at: Uint32Array.from(messages.at, (e, i) => (i === 9 ? 10 : e)) })).not.toThrow()
  expect(() => facts.pushMessages({ ...messages, contents: new Uint8Array(10).fill(9) })).toThrow(/malformed entry facts: a content code/)
  expect(() => binding.planFinish(entries, 0, facts)).toThrow(/planFinish without planCut/)
  facts.pushMessages(messages)
  const wanted = cut(entries, SETTINGS, 0, facts)
  expect(wanted === undefined ? undefined : binding.planFinish(entries, 0, facts)).toEqual(binding.prepareCompaction(entries, SETTINGS, 0))
})
