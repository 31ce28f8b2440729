'use strict'
// projectForSummary and splitUserRounds: one golden test per projection
// rule, and properties over generated sessions.

const path = require('node:path')
const fc = require('fast-check')
const gen = require('./helpers/generator')
const { deepFreeze, snapshot, deepEqual } = require('./helpers/compare')
const ours = require('../agent-0.78')

jest.setTimeout(30_000)
const RUNS = Number(process.env.PROJECTION_RUNS) || 200

const call = (id, name = 'bash', args = { command: 'ls' }) => ({ type: 'toolCall', id, name, arguments: args })
const asst = (...content) => ({ role: 'assistant', content, timestamp: 2 })
const result = (id, text, extra = {}) => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 'bash',
  content: typeof text === 'string' ? [{ type: 'text', text }] : text,
  isError: false,
  timestamp: 3,
  ...extra,
})
const user = (content) => ({ role: 'user', content, timestamp: 1 })
// The projection's transcript, built both ways: projected objects then
// serialized, and serializeForSummary's one call; they must agree.
const transcript = (messages, options) => {
  const twoCalls = ours.serializeConversation(ours.projectForSummary(messages, options))
  expect(ours.serializeForSummary(messages, options)).toBe(twoCalls)
  return twoCalls
}

describe('projection rules', () => {
  test('images become [image] in user, custom and tool-result content', () => {
    const img = { type: 'image', data: 'SECRET_BYTES', mimeType: 'image/png' }
    const messages = [
      user([{ type: 'text', text: 'look: ' }, img]),
      { role: 'custom', customType: 'x', content: [img], display: true, timestamp: 1 },
      asst(call('s', 'screenshot', {})),
      result('s', [img], { toolName: 'screenshot' }),
    ]
    const projected = ours.projectForSummary(messages)
    expect(JSON.stringify(projected)).not.toContain('SECRET_BYTES')
    expect(projected[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'look: ' }, { type: 'text', text: '[image]' }], timestamp: 1 })
    expect(ours.serializeConversation(projected)).toBe(
      '[User]: look: [image]\n\n[User]: [image]\n\n[Assistant tool calls]: screenshot#s()\n\n[Tool result screenshot#s error=false]: [image]',
    )
  })

  test('empty, blank and orphaned tool results are dropped', () => {
    const messages = [
      result('a', 'result before its call'),
      asst(call('a')),
      result('a', []),
      result('a', '  \n'),
      result('zzz', 'nobody asked'),
      result('a', 'ok'),
    ]
    expect(transcript(messages)).toBe('[Assistant tool calls]: bash#a(command="ls")\n\n[Tool result bash#a error=false]: ok')
  })

  test('the newest three valid bodies stay; older ones become [tool result] with name, id and error flag', () => {
    const messages = []
    for (let i = 0; i < 5; i++) messages.push(asst(call(`c${i}`)), result(`c${i}`, `body${i}`, { isError: i === 0 }))
    const text = transcript(messages)
    expect(text).toContain('[Tool result bash#c0 error=true]: [tool result]')
    expect(text).toContain('[Tool result bash#c1 error=false]: [tool result]')
    for (const i of [2, 3, 4]) expect(text).toContain(`[Tool result bash#c${i} error=false]: body${i}`)
    expect(transcript(messages, { toolResultBodies: 1 })).not.toContain('body3')
    expect(transcript(messages, { toolResultBodies: 0 })).not.toMatch(/body\d/)
  })

  test('reasoning stays for compatible models and goes for the Claude family', () => {
    const messages = [asst({ type: 'thinking', thinking: 'because' }, { type: 'text', text: 'done' })]
    expect(transcript(messages, { model: { api: 'openai-responses', provider: 'openai', id: 'gpt-5' } })).toBe(
      '[Assistant reasoning]: because\n\n[Assistant]: done',
    )
    for (const model of [{ api: 'anthropic-messages' }, { provider: 'anthropic' }, { provider: 'openrouter', id: 'anthropic/CLAUDE-opus' }]) {
      expect(transcript(messages, { model })).toBe('[Assistant]: done')
    }
    expect(transcript(messages, { reasoning: false })).toBe('[Assistant]: done')
  })

  test('roundBound keeps head and tail of an oversized round, with a marker', () => {
    const long = 'h'.repeat(300) + 't'.repeat(300)
    const messages = [user('small'), user(long), asst({ type: 'text', text: 'END' })]
    const projected = ours.projectForSummary(messages, { roundBound: 100 })
    expect(projected).toHaveLength(2)
    const text = ours.serializeConversation(projected)
    // body: 600 + "\n\n[Assistant]: END" (18) = 618 units; 518 omitted.
    expect(text).toBe(
      `[User]: small\n\n[User]: ${'h'.repeat(50)}\n\n[... 518 characters of this round omitted ...]\n\n${'t'.repeat(32)}\n\n[Assistant]: END`,
    )
    expect(ours.projectForSummary(messages, { roundBound: 1000 })).toEqual(ours.projectForSummary(messages))
  })

  test("roundBound on the leading group (the rest of a split turn) makes an assistant's text: nothing of it reads as the user's", () => {
    const messages = [asst(call('c', 'read', { path: 'p'.repeat(200) })), result('c', 'r'.repeat(400)), asst({ type: 'text', text: 'done' })]
    const projected = ours.projectForSummary(messages, { roundBound: 100 })
    expect(projected).toHaveLength(1)
    expect(projected[0].role).toBe('assistant')
    const text = transcript(messages, { roundBound: 100 })
    expect(text).toMatch(/^\[Assistant\]: \[Assistant tool calls\]: read#c\(path="p+\n\n\[\.\.\. \d+ characters of this round omitted \.\.\.\]\n\n/)
    expect(text).not.toContain('[User]')
    expect(text.endsWith('r'.repeat(10) + '\n\n[Assistant]: done')).toBe(true)
    // A group that opens with the assistant's text keeps that one label.
    const spoken = transcript([asst({ type: 'text', text: 'z'.repeat(300) })], { roundBound: 40 })
    expect(spoken).toMatch(/^\[Assistant\]: z{20}\n\n\[\.\.\. 260 characters/)
  })

  test('dropOldestRounds drops whole user rounds, oldest first, keeping the newest; leading messages go with the oldest', () => {
    const messages = [asst({ type: 'text', text: 'lead' }), user('one'), user('two'), user('three')]
    expect(transcript(messages, { dropOldestRounds: 1 })).toBe('[User]: two\n\n[User]: three')
    expect(transcript(messages, { dropOldestRounds: 2 })).toBe('[User]: three')
    expect(transcript(messages, { dropOldestRounds: 5 })).toBe('[User]: three')
    // With one user round left, the leading messages go alone.
    expect(transcript(messages.slice(0, 2), { dropOldestRounds: 1 })).toBe('[User]: one')
    expect(transcript(messages.slice(1), { dropOldestRounds: 1 })).toBe('[User]: two\n\n[User]: three')
  })

  test('tool-call arguments are deep copies with every own key, __proto__ included', () => {
    const args = JSON.parse('{"path":"a","__proto__":"","nested":{"__proto__":[1]}}')
    const messages = [asst(call('c', 'read', args))]
    const copy = ours.projectForSummary(messages)[0].content[0].arguments
    expect(copy).not.toBe(args)
    expect(Object.keys(copy)).toEqual(['path', '__proto__', 'nested'])
    // Still a plain object (Object.prototype of the addon's realm, not Jest's).
    const proto = Object.getPrototypeOf(copy)
    expect(Object.getPrototypeOf(proto)).toBe(null)
    expect(typeof proto.hasOwnProperty).toBe('function')
    expect(JSON.stringify(copy)).toBe(JSON.stringify(args))
    expect(transcript(messages)).toBe('[Assistant tool calls]: read#c(path="a", __proto__="", nested={"__proto__":[1]})')
  })

  test('projected objects: key order, flags, undefined arguments and odd timestamps kept', () => {
    const messages = [
      user('plain string'),
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'why', redacted: true }, { type: 'text', text: 'ok' }, call('c', 'read', { path: 'a', fn: () => 1, n: -0 })], timestamp: NaN },
      result('c', 'body', { isError: 1, timestamp: -0 }),
      { role: 'bashExecution', command: 'ls', output: 'x', exitCode: 0, cancelled: false, truncated: false, timestamp: 4 },
    ]
    const [u, a, r, bash] = ours.projectForSummary(messages, { model: { id: 'gpt-5' } })
    expect(Object.keys(u)).toEqual(['role', 'content', 'timestamp'])
    expect(u.content).toBe('plain string')
    expect(Object.keys(a)).toEqual(['role', 'content', 'timestamp'])
    expect(a.timestamp).toBeNaN()
    // Redacted reasoning is not projected; the text and the call are.
    expect(a.content.map((b) => Object.keys(b))).toEqual([['type', 'text'], ['type', 'id', 'name', 'arguments']])
    const args = a.content[1].arguments
    expect(Object.keys(args)).toEqual(['path', 'fn', 'n'])
    expect(args.fn).toBeUndefined()
    expect(Object.is(args.n, 0)).toBe(true) // JSON.stringify(-0) is "0"
    expect(Object.keys(r)).toEqual(['role', 'toolCallId', 'toolName', 'content', 'isError', 'timestamp'])
    expect(r.isError).toBe(true)
    expect(Object.is(r.timestamp, -0)).toBe(true)
    expect(bash).toEqual({ role: 'user', content: [{ type: 'text', text: 'Ran `ls`\n```\nx\n```' }], timestamp: 4 })
    // Reasoning kept for a compatible model shows the flag only when set.
    const kept = ours.projectForSummary([{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] }])
    expect(kept[0]).toEqual({ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] })
    expect('timestamp' in kept[0]).toBe(false)
  })

  test('bad options name the field', () => {
    expect(() => ours.projectForSummary([], { toolResultBodies: 1.5 })).toThrow('options.toolResultBodies')
    expect(() => ours.projectForSummary([], { roundBound: 'x' })).toThrow('options.roundBound: expected a number')
    expect(() => ours.serializeForSummary([], { toolResultBodies: -1 })).toThrow('options.toolResultBodies')
    expect(() => ours.serializeForSummary([{ role: 'user', content: 5 }])).toThrow('messages[0].content')
    // A model that is no model object; none (undefined, null) keeps reasoning.
    for (const model of [5, 'claude-sonnet', true]) {
      expect(() => ours.projectForSummary([], { model })).toThrow(/^options\.model: expected a model object, got /)
      expect(() => ours.serializeForSummary([], { model })).toThrow(/^options\.model: expected a model object, got /)
    }
    const thinking = [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }], timestamp: 1 }]
    for (const model of [undefined, null]) expect(ours.serializeForSummary(thinking, { model })).toBe('[Assistant reasoning]: hm')
    expect(ours.serializeForSummary(thinking, { model: { id: 'claude-sonnet-4' } })).toBe('')
  })
})

describe('splitUserRounds', () => {
  test('rounds start at user messages; leading messages form their own round; identity is kept', () => {
    const messages = [asst({ type: 'text', text: 'x' }), user('a'), asst(call('c')), result('c', 'r'), user('b')]
    const rounds = ours.splitUserRounds(messages)
    expect(rounds.map((r) => r.length)).toEqual([1, 3, 1])
    expect(rounds.flat().every((m, i) => m === messages[i])).toBe(true)
    expect(ours.splitUserRounds([])).toEqual([])
    const only = [user('only')]
    expect(ours.splitUserRounds(only)[0][0]).toBe(only[0])
  })
})

// ---------------------------------------------------------------------------
// Properties over generated sessions
// ---------------------------------------------------------------------------

/** Sessions with tagged image bytes and tool-result bodies, so leaks are visible. */
const sessionArb = fc
  .array(
    fc.record({
      userText: fc.string({ maxLength: 60 }),
      userImage: fc.boolean(),
      steps: fc.array(
        fc.record({
          thinking: fc.string({ maxLength: 80 }),
          redacted: fc.boolean(),
          text: fc.string({ maxLength: 80 }),
          calls: fc.array(
            fc.record({
              name: fc.constantFrom('read', 'bash', 'edit', 'w😀'),
              kind: fc.constantFrom('ok', 'ok', 'ok', 'empty', 'image', 'orphan', 'none'),
              size: fc.nat(3000),
              isError: fc.boolean(),
              arg: fc.string({ maxLength: 20 }),
            }),
            { maxLength: 3 },
          ),
        }),
        { maxLength: 3 },
      ),
    }),
    { maxLength: 6 },
  )
  .map((rounds) => {
    let n = 0
    const messages = []
    for (const r of rounds) {
      const content = [{ type: 'text', text: r.userText }]
      if (r.userImage) content.push({ type: 'image', data: `IMGDATA${n++}`, mimeType: 'image/png' })
      messages.push({ role: 'user', content, timestamp: n })
      for (const s of r.steps) {
        const ids = s.calls.map(() => `call_${n++}`)
        messages.push({
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: s.thinking, redacted: s.redacted },
            { type: 'text', text: s.text },
            ...s.calls.map((c, i) => call(ids[i], c.name, { path: c.arg, n: i })),
          ],
          timestamp: n,
        })
        s.calls.forEach((c, i) => {
          if (c.kind === 'none') return
          const id = c.kind === 'orphan' ? `orphan_${n++}` : ids[i]
          const body =
            c.kind === 'empty'
              ? []
              : c.kind === 'image'
                ? [{ type: 'image', data: `IMGDATA${n++}`, mimeType: 'image/png' }]
                : [{ type: 'text', text: `BODY${n++}:` + 'x'.repeat(c.size) }]
          messages.push({ role: 'toolResult', toolCallId: id, toolName: c.name, content: body, isError: c.isError, timestamp: n })
        })
      }
    }
    return messages
  })

/** The BODY tags of valid text tool results, oldest first (the spec's validity rule). */
function validBodies(messages) {
  const calls = new Set()
  const out = []
  for (const m of messages) {
    if (m.role === 'assistant') for (const b of m.content) if (b.type === 'toolCall') calls.add(b.id)
    if (m.role === 'toolResult' && calls.has(m.toolCallId)) {
      // Image-only results are valid too (they read as "[image]") and take a body slot.
      const t = m.content.find((b) => b.type === 'text' && b.text.trim())
      if (t) out.push(t.text.slice(0, t.text.indexOf(':') + 1))
      else if (m.content.some((b) => b.type === 'image')) out.push(null)
    }
  }
  return out
}

const optionsArb = fc.record({
  toolResultBodies: fc.constantFrom(0, 1, 3, 5),
  reasoning: fc.boolean(),
  model: fc.constantFrom(undefined, { provider: 'anthropic' }, { api: 'openai-responses', id: 'gpt-5' }),
})

describe('generated sessions', () => {
  test('no image data, no old bodies, newest bodies kept, inputs unchanged, every call named', () => {
    fc.assert(
      fc.property(sessionArb, optionsArb, (messages, options) => {
        deepFreeze(messages)
        const before = snapshot(messages)
        const projected = ours.projectForSummary(messages, options)
        const text = ours.serializeConversation(projected)
        expect(ours.serializeForSummary(messages, options)).toBe(text)
        expect(deepEqual(snapshot(messages), before)).toBe(true)
        expect(JSON.stringify(projected)).not.toContain('IMGDATA')
        expect(text).not.toContain('IMGDATA')
        const bodies = validBodies(messages)
        const keep = options.toolResultBodies
        const old = bodies.slice(0, Math.max(0, bodies.length - keep))
        for (const tag of old) if (tag) expect(text).not.toContain(tag)
        for (const tag of bodies.slice(old.length)) if (tag) expect(text).toContain(tag)
        for (const m of messages) {
          if (m.role !== 'assistant') continue
          for (const b of m.content) if (b.type === 'toolCall') expect(text).toContain(`${b.name}#${b.id}(`)
        }
      }),
      { numRuns: RUNS },
    )
  })

  test('each round is at most the bound plus its marker and label', () => {
    fc.assert(
      fc.property(sessionArb, fc.integer({ min: 0, max: 3000 }), fc.nat(3), (messages, roundBound, drop) => {
        deepFreeze(messages)
        const options = { roundBound, dropOldestRounds: drop, toolResultBodies: 3 }
        const projected = ours.projectForSummary(messages, options)
        expect(ours.serializeForSummary(messages, options)).toBe(ours.serializeConversation(projected))
        // Placeholders can make the projection longer than the raw transcript.
        const total = ours.serializeConversation(ours.projectForSummary(messages)).length
        const marker = `\n\n[... ${total} characters of this round omitted ...]\n\n`.length
        for (const round of ours.splitUserRounds(projected)) {
          const text = ours.serializeConversation(round)
          // A round's excerpt is a user message; the leading group's, an assistant's text.
          expect(text.length).toBeLessThanOrEqual(roundBound + marker + '[Assistant]: '.length)
          expect(text.isWellFormed()).toBe(true)
        }
        // What opens no round unbounded (the leading group) opens none bounded.
        const opensRound = (m) => m !== undefined && ours.convertToLlm([m])[0]?.role === 'user'
        const unbounded = ours.projectForSummary(messages, { ...options, roundBound: undefined })
        if (unbounded.length > 0 && !opensRound(unbounded[0])) expect(opensRound(projected[0])).toBe(false)
      }),
      { numRuns: RUNS },
    )
  })

  test('arbitrary agent messages: projection never throws where serialization does not, never mutates', () => {
    fc.assert(
      fc.property(fc.array(gen.agentMessageArb, { maxLength: 10 }), optionsArb, (messages, options) => {
        deepFreeze(messages)
        const before = snapshot(messages)
        let plain
        try {
          plain = ours.serializeConversation(messages)
        } catch {
          return
        }
        const text = ours.serializeConversation(ours.projectForSummary(messages, options))
        expect(ours.serializeForSummary(messages, options)).toBe(text)
        expect(text.length).toBeLessThanOrEqual(plain.length + 1000)
        expect(deepEqual(snapshot(messages), before)).toBe(true)
      }),
      { numRuns: RUNS },
    )
  })
})

// serializeForSummary's transcript comes back from the binding written whole
// where the JS pass handed over long string arguments (whose JSON is written
// natively) and the texts written natively are at least as long as the
// caller's texts placed, and as a recipe elsewhere
// (crates/core/src/transcript/output_form.rs); the transcript is the same.
describe('the form a summary transcript comes back in', () => {
  const native = require('../binding.js')
  const { flatMessages, releaseFlat, assembleTranscript } = require('../flat-messages.js')
  const argumentEntries = (args) => Object.entries(args).flatMap(([k, v]) => [k, JSON.stringify(v)])
  // What the binding returns, from the flat form and read natively: each
  // form, and the transcript.
  const built = (messages, options) => {
    const flat = flatMessages(messages)
    try {
      const viaFlat = native.serializeForSummary(messages, options, argumentEntries, flat)
      const read = native.serializeForSummary(messages, options, argumentEntries)
      return [viaFlat, read].map((b) => ({ form: typeof b === 'string' ? 'whole' : Object.keys(b).join(), text: assembleTranscript(b) }))
    } finally {
      releaseFlat(flat)
    }
  }
  const forms = (messages, options) => built(messages, options).map((b) => b.form)
  const RECIPE = 'ops,bounds,labels,strings'

  test('a file written by a tool call: whole; a long user text: a recipe; the same transcript as two calls', () => {
    const file = 'line "one"\n\tline two \u2603 \ud83d\ude00 \ud800 end\n'.repeat(200)
    const writes = [user('write it'), asst({ type: 'text', text: 'ok' }, call('w', 'write', { path: 'a.ts', content: file })), result('w', 'done')]
    // Read natively, every argument's JSON is the caller's string (made by
    // index.js's argumentEntries): a recipe.
    expect(forms(writes)).toEqual(['whole', RECIPE])
    expect(transcript(writes)).toContain(JSON.stringify(file))
    const talks = [user('x'.repeat(5000)), asst({ type: 'text', text: 'ok' }, call('w', 'write', { path: 'a.ts', content: file.slice(0, 100) })), result('w', 'done')]
    expect(forms(talks)).toEqual([RECIPE, RECIPE])
    expect(transcript(talks)).toContain('x'.repeat(5000))
    // Equal sizes go whole (written: the key, and the value's JSON with its
    // quotes); short arguments only, or none, a recipe.
    const even = 'y'.repeat(1 + 98 + 2)
    expect(forms([user(even), asst(call('c', 'n', { k: 'x'.repeat(98) }))])).toEqual(['whole', RECIPE])
    expect(forms([user(even + 'y'), asst(call('c', 'n', { k: 'x'.repeat(98) }))])).toEqual([RECIPE, RECIPE])
    expect(forms([user('ab'), asst(call('c', 'n', { k: 'x' }))])).toEqual([RECIPE, RECIPE])
    expect(forms([])).toEqual([RECIPE, RECIPE])
    expect(ours.serializeForSummary([])).toBe('')
  })

  test('a transcript past 2^24 units goes whole too (up to V8\'s longest string)', () => {
    const file = 'line "one"\n'.repeat(2 ** 24 / 11 + 1) // 16.8M units, 21.4M as JSON
    const writes = [user('write it'), asst(call('w', 'write', { path: 'a.ts', content: file })), result('w', 'done')]
    const [viaFlat] = built(writes)
    expect(viaFlat.form).toBe('whole')
    expect(viaFlat.text.length).toBeGreaterThan(2 ** 24)
    expect(viaFlat.text).toBe(transcript(writes))
  })

  // Long transcripts written whole, whose units V8 stores as Latin-1 or as
  // UTF-16: each is the two-call transcript.
  test.each([
    ['ASCII', 'line "one"\n'],
    ['Latin-1 past ASCII', 'caf\u00e9 \u00ff\u0080\n'],
    ['one unit past Latin-1, at the end', 'caf\u00e9\n', '\u0100'],
    ['astral, lone surrogates', 'line \u2603 \ud83d\ude00 \ud800 \udc00 end\n'],
  ])('a long transcript written whole: %s', (_, line, last = '') => {
    const file = line.repeat(Math.ceil(200_000 / line.length)) + last
    const writes = [user('write it'), asst(call('w', 'write', { path: 'a.ts', content: file })), result('w', 'done')]
    const [viaFlat] = built(writes)
    expect(viaFlat.form).toBe('whole')
    expect(viaFlat.text.length).toBeGreaterThan(200_000)
    expect(viaFlat.text).toBe(transcript(writes))
    expect(viaFlat.text).toContain(JSON.stringify(file))
  })

  test('long transcripts written whole are freed once collected', () => {
    // A child with --expose-gc: 40 transcripts of ~24 MB each (UTF-16 and
    // Latin-1 in turn), each dropped and collected; its resident memory
    // grows by far less than the ~680 MB they would hold if never freed.
    const script = `
      const ours = require(${JSON.stringify(path.join(__dirname, '..', 'agent-1.6.js'))})
      const call = (content) => ({ role: 'assistant', content: [{ type: 'toolCall', id: 'w', name: 'write', arguments: { path: 'a.ts', content } }], timestamp: 1 })
      const files = ['x'.repeat(12e6), '\u2603'.repeat(12e6)]
      let len = 0
      const rss = () => process.memoryUsage().rss
      global.gc()
      let first
      for (let i = 0; i < 40; i++) {
        len += ours.serializeForSummary([{ role: 'user', content: 'w', timestamp: 1 }, call(files[i % 2])]).length
        global.gc()
        if (i === 1) first = rss()
      }
      console.log(JSON.stringify({ len, grown: rss() - first }))
    `
    const r = require('node:child_process').spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 120_000 })
    expect(r.stderr).toBe('')
    const { len, grown } = JSON.parse(r.stdout)
    expect(len).toBeGreaterThan(40 * 12e6)
    expect(grown).toBeLessThan(200 * 2 ** 20)
  })

  test('generated sessions take both forms (read flat), each the two-call transcript, read flat or natively', () => {
    const seen = new Set()
    // Texts and arguments each repeated 0, 1 or 50 times: either can outweigh the other.
    const times = fc.constantFrom(0, 1, 50)
    const turn = fc.record({
      text: fc.string({ minLength: 1, maxLength: 20 }),
      textTimes: times,
      arg: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
      argTimes: times,
      body: fc.string({ maxLength: 300 }),
    })
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 6 }), optionsArb, (turns, options) => {
        const messages = turns.flatMap(({ text, textTimes, arg, argTimes, body }, i) => [
          user(text.repeat(textTimes)),
          asst({ type: 'text', text: text.repeat(textTimes) }, call(`c${i}`, 'write', { path: `f${i}`, content: arg.repeat(argTimes) })),
          result(`c${i}`, body),
        ])
        deepFreeze(messages)
        const [viaFlat, read] = built(messages, options)
        seen.add(viaFlat.form)
        const text = transcript(messages, options)
        expect(viaFlat.text).toBe(text)
        expect(read.text).toBe(text)
      }),
      { numRuns: RUNS },
    )
    expect([...seen].sort()).toEqual([RECIPE, 'whole'].sort())
  })
})
