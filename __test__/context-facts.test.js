'use strict'
// estimateContextTokens and 1.6's estimateProjectedContextTokens read the
// last few messages natively and, where the last usage is not among them,
// ask for the facts of the messages before (lib/context-facts.js reads
// them; crates/core/src/tokens/context_facts.rs takes them);
// getLastAssistantUsage does the same over session entries. The public
// functions must give what the binding gives reading everything itself:
// the same estimate and the same errors, for generated contexts of every
// message kind and for odd values in every field the pass reads (holes,
// primitives, getters, throwing getters, Proxies, frozen objects, lone
// surrogates); and the reference's estimate where it gives one.

const path = require('node:path')
const util = require('node:util')
const fc = require('fast-check')
const gen = require('./helpers/generator')
const { platformSuffix, binaryName } = require('../platform.js')
const { loadReference } = require('./helpers/reference')
const { LINES } = require('./helpers/ours')
const { MORE_ODD, setOdd } = require('./helpers/odd-values')

const binding = require(path.join(__dirname, '..', `${binaryName}.${platformSuffix()}.node`))
const RUNS = Number(process.env.CONTEXT_FACTS_RUNS) || 100

jest.setTimeout(120_000)

const refs = {}
const ours = {}
beforeAll(async () => {
  for (const line of LINES) {
    refs[line] = await loadReference(line)
    ours[line] = require(`../agent-${line}.js`)
  }
})

function outcome(fn) {
  try {
    return { value: fn() }
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message }
  }
}

/** The public estimate and the binding's reading everything itself (`false`), on inputs made afresh by `make`. */
function expectSame(line, make) {
  const index = binding.agentLineIndex(line)
  const viaFacts = outcome(() => ours[line].estimateContextTokens(make()))
  const alone = outcome(() => binding.estimateContextTokens(make(), index, false))
  expect(util.inspect(viaFacts)).toBe(util.inspect(alone))
  return viaFacts
}

const usage = (n) => ({ input: n, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: n + 20, cost: { total: 0 } })
const zero = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 })

/** `n` messages: users, assistants with a text and a tool call, tool results; the only usage that counts at `at` (or none). */
function context(n, at = -1) {
  const out = []
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) out.push({ role: 'user', content: `question ${i} ${'x'.repeat(i)}`, timestamp: i })
    else if (i % 3 === 1) {
      out.push({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: `hmm ${i}` },
          { type: 'text', text: `answer ${i}` },
          { type: 'toolCall', id: `c${i}`, name: 'read', arguments: { path: `src/f${i}.rs`, limit: i } },
        ],
        // 0.78 counts a zero usage; it passes over an errored one.
        usage: i === at ? usage(1000 + i) : zero(),
        stopReason: i === at ? 'toolUse' : 'error',
        timestamp: i,
      })
    } else out.push({ role: 'toolResult', toolCallId: `c${i - 1}`, toolName: 'read', content: [{ type: 'text', text: `file ${i}` }, { type: 'image', data: 'AA', mimeType: 'image/png' }], isError: false, timestamp: i })
  }
  return out
}

test('the native side answers at once where the last usage is among the last messages, and asks past them', () => {
  const index = binding.agentLineIndex('1.6')
  const near = context(100, 97)
  expect(binding.estimateContextTokens(near, index)).toEqual(refs['1.6'].estimateContextTokens(near))
  expect(binding.estimateContextTokens(context(100, 40), index)).toEqual({ readFrom: 0, readTo: 100 })
  const many = context(1000)
  expect(binding.estimateContextTokens(many, index)).toEqual({ readFrom: 744, readTo: 1000 })
  for (const line of LINES) {
    for (const at of [-1, 0, 1, 40, 700, 997]) expect(ours[line].estimateContextTokens(context(1000, at))).toEqual(refs[line].estimateContextTokens(context(1000, at)))
  }
  // Facts for another array, or a chunk out of place: none taken, or an internal error.
  expect(binding.estimateContextTokens(many, index, { list: [], chunks: [] })).toEqual(refs['1.6'].estimateContextTokens(many))
  const chunk = { to: 10, roles: new Uint8Array(0), usages: new Uint8Array(0), values: new Float64Array(0), at: new Uint32Array(0), forms: new Uint8Array(0), counts: new Uint32Array(0), blocks: new Uint8Array(0), lengths: new Uint32Array(0) }
  // (a first chunk that does not end at the array's end is for an array a getter changed: none taken)
  expect(binding.estimateContextTokens(many, index, { list: many, chunks: [chunk] })).toEqual(refs['1.6'].estimateContextTokens(many))
  expect(() => binding.estimateContextTokens(many, index, { list: many, chunks: [{ ...chunk, to: 1000 }, chunk] })).toThrow(/internal error.*malformed context facts: a chunk out of order/)
})

// Each field the pass reads, as a path from a message (an assistant's, a user's or a tool result's).
const FIELDS = [
  ['message', []],
  ['role', ['role']],
  ['stopReason', ['stopReason']],
  ['usage', ['usage']],
  ['totalTokens', ['usage', 'totalTokens']],
  ['input', ['usage', 'input']],
  ['cacheWrite', ['usage', 'cacheWrite']],
  ['content', ['content']],
  ['block', ['content', 1]],
  ['text', ['content', 1, 'text']],
  ['thinking', ['content', 0, 'thinking']],
  ['block type', ['content', 2, 'type']],
  ['tool name', ['content', 2, 'name']],
  ['arguments', ['content', 2, 'arguments']],
]

test('odd values in every field the pass reads: the same estimate or the same error', () => {
  let errors = 0
  let estimates = 0
  for (const line of LINES) {
    for (const [, keys] of FIELDS) {
      for (const kind of Object.keys(MORE_ODD)) {
        // An assistant, a user and a tool result, all before the last 16 messages (so the pass reads them).
        for (const at of [4, 6, 8]) {
          const r = expectSame(line, () => {
            const messages = context(40, 1)
            if (keys.length === 0) {
              setOdd(messages, at, kind, messages[at])
              return messages
            }
            let target = messages
            let key = at
            for (const k of keys) {
              const next = target[key]
              if (typeof next !== 'object' || next === null) return messages
              target[key] = Array.isArray(next) ? [...next] : { ...next }
              target = target[key]
              key = k
            }
            setOdd(target, key, kind, target[key])
            return messages
          })
          if (r.error) errors++
          else estimates++
        }
      }
    }
  }
  // Both outcomes were compared.
  expect(errors).toBeGreaterThan(0)
  expect(estimates).toBeGreaterThan(0)
  // The array itself: sparse, a Proxy, frozen.
  for (const line of LINES) {
    expectSame(line, () => {
      const m = context(40)
      delete m[5]
      return m
    })
    expectSame(line, () => new Proxy(context(40), {}))
    expectSame(line, () => Object.freeze(context(40)))
    expectSame(line, () => context(40).map((m) => new Proxy(m, {})))
  }
})

test('a getter that lengthens the array while the pass reads it: the facts are not taken, and the estimate is of the array as it is', () => {
  for (const line of LINES) {
    const messages = context(40)
    let added = 0
    const plain = messages[5]
    Object.defineProperty(messages, 5, {
      enumerable: true,
      get() {
        if (added++ === 0) messages.push({ role: 'user', content: 'one more', timestamp: 99 })
        return plain
      },
    })
    const r = ours[line].estimateContextTokens(messages)
    expect(messages.length).toBe(41)
    // The native side read the array again whole, the getter once more (adding nothing).
    const after = [...messages.slice(0, 5), plain, ...messages.slice(6)]
    expect(r).toEqual(refs[line].estimateContextTokens(after))
  }
})

/** A context of generated messages, most without a usage that counts. */
const contextArb = (line) =>
  fc.array(
    fc.oneof(
      { weight: 3, arbitrary: line === '1.6' ? gen.agentMessage16Arb : gen.agentMessageArb },
      // (1.6 passes over a zero usage; 0.78 over none)
      { weight: 6, arbitrary: gen.assistantMessageArb.map((m) => ({ ...m, usage: line === '1.6' ? zero() : undefined })) },
      { weight: 1, arbitrary: gen.assistantMessageArb.map((m) => ({ ...m, stopReason: 'aborted' })) },
    ),
    { minLength: 17, maxLength: 80 },
  )

test.each(LINES)('generated contexts (%s): the same estimate either way, and the reference\'s', (line) => {
  let asked = 0
  fc.assert(
    fc.property(contextArb(line), (messages) => {
      if (outcome(() => binding.estimateContextTokens(messages, binding.agentLineIndex(line))).value?.readFrom !== undefined) asked++
      const r = expectSame(line, () => messages)
      const theirs = outcome(() => refs[line].estimateContextTokens(messages))
      if (!theirs.error && !r.error) expect(r.value).toEqual(theirs.value)
    }),
    { numRuns: RUNS },
  )
  // The facts were read in a good share of them.
  expect(asked).toBeGreaterThan(RUNS / 10)
})

test('estimateProjectedContextTokens: the same estimate with facts of its messages, and none taken from another array', () => {
  const index = binding.agentLineIndex('1.6')
  const messages = context(300)
  const branch = messages.map((message, i) => ({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message }))
  const projection = { messages, entries: branch.map((e) => ({ sourceEntry: e, messages: [e.message] })) }
  const expected = refs['1.6'].estimateProjectedContextTokens(projection, branch)
  expect(ours['1.6'].estimateProjectedContextTokens(projection, branch)).toEqual(expected)
  expect(binding.estimateProjectedContextTokens(projection, branch, index)).toEqual({ readFrom: 44, readTo: 300 })
  // A usage at the end, and a compaction after it on the branch: every message estimated, all asked for at once.
  const used = context(300, 298)
  const usedBranch = used.map((message, i) => ({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message }))
  usedBranch.push({ type: 'compaction', id: 'c', parentId: 'e299', timestamp: '2026-01-01T00:00:00.000Z', summary: 's', firstKeptEntryId: 'e290', tokensBefore: 1 })
  const usedProjection = { messages: used, entries: usedBranch.slice(0, 300).map((e) => ({ sourceEntry: e, messages: [e.message] })) }
  expect(binding.estimateProjectedContextTokens(usedProjection, usedBranch, index)).toEqual({ readFrom: 0, readTo: 300 })
  const whole = refs['1.6'].estimateProjectedContextTokens(usedProjection, usedBranch)
  expect(whole.lastUsageIndex).toBe(null)
  expect(ours['1.6'].estimateProjectedContextTokens(usedProjection, usedBranch)).toEqual(whole)
  // A getter that gives a new array each time: the pass's facts are not for the array read natively.
  const fresh = { get messages() { return context(300) }, entries: projection.entries }
  expect(ours['1.6'].estimateProjectedContextTokens(fresh, branch)).toEqual(expected)
  // A getter that throws when the pass reads it: the native side reads all (and throws where it reads it again).
  let reads = 0
  const throwsOnce = {
    get messages() {
      if (++reads === 2) throw new Error('read twice')
      return messages
    },
    entries: projection.entries,
  }
  expect(ours['1.6'].estimateProjectedContextTokens(throwsOnce, branch)).toEqual(expected)
})

/** Session entries for `messages`, with a compaction and a label among them. */
function entriesOf(messages) {
  const out = []
  messages.forEach((message, i) => {
    out.push({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message })
    if (i === 20) out.push({ type: 'compaction', id: 'c', parentId: `e${i}`, timestamp: '2026-01-01T00:00:00.000Z', summary: 's', firstKeptEntryId: 'e10', tokensBefore: 1 })
    if (i === 30) out.push({ type: 'label', id: 'l', parentId: `e${i}`, timestamp: '2026-01-01T00:00:00.000Z', targetId: 'e3', label: 'x' })
  })
  return out
}

/** The public getLastAssistantUsage and the binding's reading every entry itself, on entries made afresh by `make`. */
function expectSameUsage(line, make) {
  const index = binding.agentLineIndex(line)
  const viaFacts = outcome(() => ours[line].getLastAssistantUsage(make()))
  const alone = outcome(() => {
    const entries = make()
    const i = binding.lastAssistantUsageIndex(entries, index, false)
    return i < 0 ? undefined : entries[i].message.usage
  })
  expect(util.inspect(viaFacts)).toBe(util.inspect(alone))
  return viaFacts
}

test('getLastAssistantUsage asks for the facts of entries past the last 16, and finds what the agent finds', () => {
  const index = binding.agentLineIndex('1.6')
  expect(binding.lastAssistantUsageIndex(entriesOf(context(100, 97)), index)).toBe(99)
  expect(binding.lastAssistantUsageIndex(entriesOf(context(100)), index)).toEqual({ readFrom: 0, readTo: 102 })
  for (const line of LINES) {
    for (const at of [-1, 1, 40, 97]) {
      const entries = entriesOf(context(300, at))
      const theirs = refs[line].getLastAssistantUsage(entries)
      expect(ours[line].getLastAssistantUsage(entries)).toBe(theirs)
      expect(expectSameUsage(line, () => entries).value).toBe(theirs)
    }
  }
})

test('getLastAssistantUsage: odd values in every field its pass reads, the same usage or the same error', () => {
  let errors = 0
  let found = 0
  const fields = [[], ['type'], ['message'], ['message', 'role'], ['message', 'stopReason'], ['message', 'usage'], ['message', 'usage', 'totalTokens'], ['message', 'usage', 'cacheRead']]
  for (const line of LINES) {
    for (const keys of fields) {
      for (const kind of Object.keys(MORE_ODD)) {
        // An assistant (the only usage that counts), a user, a tool result: all before the last 16 entries.
        for (const at of [4, 6, 8]) {
          const r = expectSameUsage(line, () => {
            const entries = entriesOf(context(40, 4))
            let target = entries
            let key = at
            for (const k of keys) {
              const next = target[key]
              if (typeof next !== 'object' || next === null) return entries
              target[key] = { ...next }
              target = target[key]
              key = k
            }
            setOdd(target, key, kind, target[key])
            return entries
          })
          if (r.error) errors++
          else if (r.value !== undefined) found++
        }
      }
    }
  }
  expect(errors).toBeGreaterThan(0)
  expect(found).toBeGreaterThan(0)
  for (const line of LINES) {
    expectSameUsage(line, () => new Proxy(entriesOf(context(40, 4)), {}))
    expectSameUsage(line, () => entriesOf(context(40, 4)).map((e) => Object.freeze(e)))
  }
})

test.each(LINES)("getLastAssistantUsage on generated sessions (%s): the same usage either way, and the reference's", (line) => {
  fc.assert(
    fc.property(fc.array(contextArb(line).map(entriesOf), { minLength: 1, maxLength: 1 }), ([entries]) => {
      const r = expectSameUsage(line, () => entries)
      const theirs = outcome(() => refs[line].getLastAssistantUsage(entries))
      if (!theirs.error && !r.error) expect(r.value).toBe(theirs.value)
    }),
    { numRuns: RUNS },
  )
})
