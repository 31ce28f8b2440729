'use strict'
// serializeConversation in the spec's format: golden transcripts, a
// generated-input check against a plain-JS statement of the format, and
// parity with the reference where the two formats agree.

const fc = require('fast-check')
const gen = require('./helpers/generator')
const { deepFreeze, snapshot, deepEqual } = require('./helpers/compare')
const { loadReference } = require('./helpers/reference')
const { specSerialize } = require('./helpers/spec-serialize')
const ours = require('../agent-0.78')

jest.setTimeout(30_000)

let ref
beforeAll(async () => {
  ref = await loadReference()
})

const RUNS = Number(process.env.SERIALIZE_RUNS) || 300

describe('golden transcripts', () => {
  test('the spec example', () => {
    const messages = [
      { role: 'user', content: 'What they said', timestamp: 1 },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Readable reasoning for compatible summary models' },
          { type: 'text', text: 'Response text' },
          { type: 'toolCall', id: 'call-id', name: 'ipython', arguments: { code: "open('foo.ts').read()" } },
        ],
      },
      { role: 'toolResult', toolCallId: 'call-id', toolName: 'ipython', content: [{ type: 'text', text: 'Output from tool' }], isError: false },
    ]
    expect(ours.serializeConversation(messages)).toBe(
      [
        '[User]: What they said',
        '[Assistant reasoning]: Readable reasoning for compatible summary models',
        '[Assistant]: Response text',
        `[Assistant tool calls]: ipython#call-id(code="open('foo.ts').read()")`,
        '[Tool result ipython#call-id error=false]: Output from tool',
      ].join('\n\n'),
    )
  })

  test('reasoning: false drops reasoning lines; empty and redacted thinking never show', () => {
    const messages = [
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'a' },
          { type: 'thinking', thinking: '' },
          { type: 'thinking', thinking: 'hidden', redacted: true },
          { type: 'thinking', thinking: 'b' },
          { type: 'text', text: 'x' },
          { type: 'text', text: 'y' },
        ],
      },
    ]
    expect(ours.serializeConversation(messages)).toBe('[Assistant reasoning]: a\nb\n\n[Assistant]: x\ny')
    expect(ours.serializeConversation(messages, { reasoning: false })).toBe('[Assistant]: x\ny')
  })

  test('tool calls: several, undefined and function values, nested JSON', () => {
    const messages = [
      {
        role: 'assistant',
        content: [
          { type: 'toolCall', id: 'c1', name: 'edit', arguments: { path: 'a.ts', edits: [{ old: 'x', new: 'y' }], u: undefined, f() {} } },
          { type: 'toolCall', id: 'c2', name: 'ls', arguments: {} },
        ],
      },
    ]
    expect(ours.serializeConversation(messages)).toBe(
      '[Assistant tool calls]: edit#c1(path="a.ts", edits=[{"old":"x","new":"y"}], u=undefined, f=undefined); ls#c2()',
    )
  })

  test('tool results: error flag, joined text, images ignored, empty omitted, truncation marker', () => {
    const long = 'z'.repeat(2345)
    const messages = [
      { role: 'toolResult', toolCallId: 'a', toolName: 'bash', content: [{ type: 'text', text: 'x' }, { type: 'image', data: 'QUJD', mimeType: 'image/png' }, { type: 'text', text: 'y' }], isError: true },
      { role: 'toolResult', toolCallId: 'b', toolName: 'bash', content: [], isError: false },
      { role: 'toolResult', toolCallId: 'c', toolName: 'read', content: [{ type: 'text', text: long }], isError: false },
    ]
    expect(ours.serializeConversation(messages)).toBe(
      `[Tool result bash#a error=true]: xy\n\n[Tool result read#c error=false]: ${'z'.repeat(2000)}\n\n[... 345 more characters truncated]`,
    )
  })

  test('truncation backs off rather than split a surrogate pair', () => {
    const text = `${'a'.repeat(1999)}😀tail`
    const out = ours.serializeConversation([{ role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text }], isError: false }])
    expect(out).toBe(`[Tool result t#c error=false]: ${'a'.repeat(1999)}\n\n[... 6 more characters truncated]`)
    expect(out.isWellFormed()).toBe(true)
  })

  test('agent messages are converted first, like convertToLlm', () => {
    const messages = [
      { role: 'bashExecution', command: 'ls', output: 'a\nb', exitCode: 0, cancelled: false, truncated: false, timestamp: 1 },
      { role: 'bashExecution', command: 'secret', output: 'x', exitCode: 0, cancelled: false, truncated: false, excludeFromContext: true, timestamp: 2 },
      { role: 'custom', customType: 'note', content: 'remember', display: true, timestamp: 3 },
      { role: 'branchSummary', summary: 'went left', fromId: 'e1', timestamp: 4 },
    ]
    expect(ours.serializeConversation(messages)).toBe(ref.serializeConversation(ref.convertToLlm(messages)))
  })

  test('errors name the index and field; inputs are not changed', () => {
    const bad = () => ours.serializeConversation([{ role: 'user', content: 'ok' }, { role: 'assistant', content: 7 }])
    // Native errors come from Node's realm, not Jest's: compare names, not classes.
    expect(() => {
      try {
        bad()
      } catch (err) {
        throw new Error(err.name)
      }
    }).toThrow('TypeError')
    expect(bad).toThrow('messages[1].content: expected an array, got a number')
    expect(() => ours.serializeConversation('nope')).toThrow('messages: expected an array')
    // An options argument that is not an object is ignored (an index from Array.prototype.map); a bad field is not.
    expect(ours.serializeConversation([], 5)).toBe('')
    expect(() => ours.serializeConversation([], { get reasoning() { throw new Error('boom') } })).toThrow('boom')
  })
})

// Long strings are read in place (handed to V8 to join, cut with slice and
// probed with codePointAt) and short ones copied: both must give the same text.
describe('texts read in place', () => {
  const toolResult = (content) => ({ role: 'toolResult', toolCallId: 'c', toolName: 't', content, isError: false })
  const header = '[Tool result t#c error=false]: '
  const text = (t) => ({ type: 'text', text: t })

  test('a cut next to surrogates: pair after the cut kept whole, lone surrogate before it kept', () => {
    const pairAfter = `${'a'.repeat(2000)}😀`
    expect(ours.serializeConversation([toolResult([text(pairAfter)])])).toBe(
      `${header}${'a'.repeat(2000)}\n\n[... 2 more characters truncated]`,
    )
    const loneBefore = `${'a'.repeat(1999)}\ud83dxyz`
    expect(ours.serializeConversation([toolResult([text(loneBefore)])])).toBe(
      `${header}${'a'.repeat(1999)}\ud83d\n\n[... 3 more characters truncated]`,
    )
  })

  test('a pair made across two blocks is not split; a cut inside the second block', () => {
    const across = [text(`${'a'.repeat(1999)}\ud83d`), text(`\ude00${'b'.repeat(10)}`)]
    expect(ours.serializeConversation([toolResult(across)])).toBe(`${header}${'a'.repeat(1999)}\n\n[... 12 more characters truncated]`)
    const inside = [text('x'.repeat(1500)), text(''), text('y'.repeat(600))]
    expect(ours.serializeConversation([toolResult(inside)])).toBe(
      `${header}${'x'.repeat(1500)}${'y'.repeat(500)}\n\n[... 100 more characters truncated]`,
    )
  })

  test('short and long texts mix; lone surrogates survive exactly', () => {
    const long = `\ud800${'z'.repeat(100)}\udfff`
    const messages = [
      { role: 'user', content: long },
      { role: 'assistant', content: [text('a'), text('b'.repeat(100)), { type: 'thinking', thinking: '\udc00' }, text('c')] },
    ]
    expect(ours.serializeConversation(messages)).toBe(
      `[User]: ${long}\n\n[Assistant reasoning]: \udc00\n\n[Assistant]: a\n${'b'.repeat(100)}\nc`,
    )
  })

  test('blankness is decided past the first few hundred units', () => {
    const call = { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 't', arguments: {} }] }
    const late = `${' '.repeat(300)}\n${'\u3000'.repeat(300)}x`
    const blank = `${' \t\n\u00a0\ufeff'.repeat(700)}`
    for (const [body, shown] of [
      [late, true],
      [blank, false],
    ]) {
      const out = ours.serializeForSummary([call, toolResult([text(body)])])
      expect(out.includes('[Tool result')).toBe(shown)
      expect(out).toBe(ours.serializeConversation(ours.projectForSummary([call, toolResult([text(body)])])))
    }
  })

  test('a long generated conversation in one call matches the spec statement', () => {
    const messages = fc.sample(gen.agentMessageArb, { numRuns: 4000, seed: 7 })
    let llm
    try {
      llm = ref.convertToLlm(messages)
      specSerialize(llm, { reasoning: true })
    } catch {
      llm = undefined
    }
    const usable = llm ? messages : messages.filter((m) => {
      try {
        specSerialize(ref.convertToLlm([m]), { reasoning: true })
        return true
      } catch {
        return false
      }
    })
    expect(usable.length).toBeGreaterThan(3000)
    expect(ours.serializeConversation(usable)).toBe(specSerialize(ref.convertToLlm(usable), { reasoning: true }))
  })
})

/** Reference behaviour decides whether a generated list is valid input. */
function referenceOrThrow(messages) {
  try {
    return { llm: ref.convertToLlm(messages) }
  } catch (err) {
    return { err }
  }
}

describe('generated messages', () => {
  test('matches the spec statement, never throws where the reference does not, never mutates', () => {
    fc.assert(
      fc.property(fc.array(gen.agentMessageArb, { maxLength: 12 }), fc.boolean(), (messages, reasoning) => {
        deepFreeze(messages)
        const before = snapshot(messages)
        const { llm } = referenceOrThrow(messages)
        let expected
        try {
          expected = specSerialize(llm, { reasoning })
          ref.serializeConversation(llm)
        } catch {
          return // the reference throws too (e.g. null arguments)
        }
        expect(ours.serializeConversation(messages, { reasoning })).toBe(expected)
        expect(deepEqual(snapshot(messages), before)).toBe(true)
      }),
      { numRuns: RUNS },
    )
  })

  test('parity with the reference on user text and assistant text lines', () => {
    const textOnly = fc.oneof(
      gen.userMessageArb,
      gen.assistantMessageArb.map((m) => ({ ...m, content: m.content.filter((b) => b.type === 'text') })),
      gen.bashExecutionMessageArb,
      gen.customMessageArb,
      gen.branchSummaryMessageArb,
      gen.compactionSummaryMessageArb,
    )
    fc.assert(
      fc.property(fc.array(textOnly, { maxLength: 10 }), (messages) => {
        deepFreeze(messages)
        const { llm } = referenceOrThrow(messages)
        if (!llm) return
        let expected
        try {
          expected = ref.serializeConversation(llm)
        } catch {
          return
        }
        expect(ours.serializeConversation(messages)).toBe(expected)
      }),
      { numRuns: RUNS },
    )
  })

  test('parity with the reference on tool-result bodies and truncation (no pair at the cut)', () => {
    const body = fc.tuple(fc.nat(5000), fc.string({ maxLength: 8 })).map(([n, s]) => 'q'.repeat(n) + s)
    fc.assert(
      fc.property(body, fc.boolean(), (text, isError) => {
        const message = { role: 'toolResult', toolCallId: 'id1', toolName: 'bash', content: [{ type: 'text', text }], isError }
        const theirs = ref.serializeConversation([message])
        const mine = ours.serializeConversation([message])
        const header = `[Tool result bash#id1 error=${isError}]: `
        if (theirs === '') return expect(mine).toBe('')
        expect(mine.startsWith(header)).toBe(true)
        expect(mine.slice(header.length)).toBe(theirs.slice('[Tool result]: '.length))
      }),
      { numRuns: RUNS },
    )
  })
})
