'use strict'
// The transcript builders read plain messages through flat-messages.js (one
// JS pass, codes and strings) and everything else natively. Both readers
// must give the same transcripts and the same errors: the public functions
// are checked against the native binding called without the flat form.

const path = require('node:path')
const util = require('node:util')
const fc = require('fast-check')
const gen = require('./helpers/generator')
const { platformSuffix, binaryName } = require('../platform.js')
const { flatMessages, assembleTranscript, projectionOfPlan, FLAT_MAX_MESSAGES, CUT } = require('../flat-messages.js')
const ours = require('../agent-0.78')

const binding = require(path.join(__dirname, '..', `${binaryName}.${platformSuffix()}.node`))
// The binding's transcript functions without the flat form: every message
// read natively; their recipes assembled as index.js does.
const native = {
  serializeConversation: (...args) => assembleTranscript(binding.serializeConversation(...args)),
  serializeForSummary: (...args) => assembleTranscript(binding.serializeForSummary(...args)),
  projectForSummary: (...args) => projectionOfPlan(binding.projectionPlan(...args), undefined),
}

jest.setTimeout(60_000)

const RUNS = Number(process.env.SERIALIZE_RUNS) || 300

// What index.js passes for tool-call arguments.
function argumentEntries(args) {
  const out = []
  for (const [k, v] of Object.entries(args)) out.push(k, JSON.stringify(v))
  return out
}

/**
 * Projected messages as data where everything counts: key order, keys
 * holding undefined, -0, NaN, prototypes.
 */
function exactly(messages) {
  return util.inspect(messages, { depth: Infinity, showHidden: true, maxArrayLength: Infinity, maxStringLength: Infinity, breakLength: Infinity })
}

/** The result of `fn`, or the error it throws, as comparable data. */
function outcome(fn) {
  try {
    return { value: fn() }
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message }
  }
}

const codesOf = (messages) => Array.from(flatMessages(messages).codes)

describe('the flat form', () => {
  test('plain messages are read in JS, with their lengths and flags', () => {
    const messages = [
      { role: 'user', content: 'hi😀' },
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'thinking', thinking: 'not shown' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'why', redacted: 1 },
          { type: 'image', data: 'x' },
          { type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a', f: () => 1 } },
        ],
      },
      { role: 'toolResult', toolCallId: 'c1', toolName: 'read', isError: 'yes', content: [{ type: 'text', text: 'out' }, { type: 'text', text: ' \n\u3000' }] },
      { role: 'user', content: [{ type: 'image', data: 'x', mimeType: 'image/png' }, { type: 'image', data: 'y' }] },
    ]
    const { codes, texts, shorts: units } = flatMessages(messages)
    expect(Array.from(codes)).toEqual([
      1, 0, 4, // user text "hi😀" (4 units)
      2, 1, 5, 1, 1, 0, // user blocks: one text, not blank
      3, 2, 6, 2, 3, 1, 7, 2, 4, 2, 4, 3, -1, 1, -1, -1, // assistant: thinking (redacted), tool call c1 read (path="a", f undefined)
      4, 2, 4, 1, 2, 5, 3, 3, 0, 5, 4, 3, 1, // tool result c1 read, error, a text and a blank one (flag 1)
      2, 2, 8, 9, 8, -1, // user blocks: an image with a mimeType, one without
    ])
    expect(texts).toEqual(['hi😀', 'a', 'why', 'out', ' \n\u3000'])
    expect(String.fromCharCode(...units)).toBe('c1readpath"a"fc1readimage/png')
  })

  test('what the native reader must see goes native, by index', () => {
    const inherited = Object.create({ mimeType: 'image/png' })
    inherited.type = 'image'
    const hidden = { type: 'image' }
    Object.defineProperty(hidden, 'mimeType', { value: 'image/png', enumerable: false })
    const odd = [
      { role: 'user', content: [{ type: 'image', data: 'x', mimeType: 5 }] },
      { role: 'toolResult', toolCallId: 'c', toolName: 'n', content: [inherited] },
      { role: 'user', content: [hidden] },
      { role: 'user', content: [{ type: 'text', text: 5 }] },
      { role: 'user', content: 7 },
      { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'n', arguments: 'str' }] },
      { role: 'assistant', content: [{ type: 'toolCall', id: 1, name: 'n', arguments: {} }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }, null] },
      { role: 'toolResult', toolCallId: 'c', toolName: 'n', content: 'not an array' },
      { role: 'bashExecution', command: 'ls', output: '', exitCode: 0 },
      { role: 'custom', content: 'x' },
      { role: 'nobody' },
    ]
    expect(codesOf(odd)).toEqual(odd.flatMap((_, i) => [0, i]))
    // Not objects, a hole, too many: the whole call.
    expect(flatMessages([null])).toBeUndefined()
    expect(flatMessages([{ role: 'user', content: 'a' }, , { role: 'user', content: 'b' }])).toBeUndefined() // eslint-disable-line no-sparse-arrays
    expect(flatMessages('x')).toBeUndefined()
    const huge = []
    huge.length = FLAT_MAX_MESSAGES + 1
    expect(flatMessages(huge)).toBeUndefined()
    const throwing = {
      role: 'user',
      get content() {
        throw new Error('boom')
      },
    }
    // A throwing getter: its exception, passed on (the native reader would
    // meet it at the same point), the getter run once.
    let runs = 0
    const counted = {
      role: 'user',
      get content() {
        runs++
        throw new Error('boom')
      },
    }
    expect(() => flatMessages([throwing])).toThrow('boom')
    expect(() => ours.serializeConversation([counted])).toThrow('boom')
    expect(runs).toBe(1)
    // After a message left to the native reader, which may fail there
    // first: the whole call goes native, as without the pass.
    const before = [{ role: 'user', content: [null] }, throwing]
    expect(flatMessages(before)).toBeUndefined()
    expect(() => ours.serializeConversation(before)).toThrow(/^messages\[0\]\.content\[0\]/)
  })

  test('blankness told by the pass is what the native reader finds', () => {
    const texts = ['', ' ', '\t\n\v\f\r', '\u00a0', '\ufeff', '\u2028\u2029', '\u180e', '\u3000\u205f', ' x', '\u3000a', 'x ', '\ud800 ']
    for (const t of texts) {
      const messages = [
        { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'bash', arguments: {} }] },
        { role: 'toolResult', toolCallId: 'c', toolName: 'bash', content: [{ type: 'text', text: t }], isError: false },
      ]
      expect(ours.serializeForSummary(messages)).toBe(native.serializeForSummary(messages, undefined, argumentEntries))
      // A useless (blank) result is dropped from the projection.
      expect(ours.serializeForSummary(messages).includes('[Tool result')).toBe(t.trim() !== '')
    }
  })

  test('the pass tells where a tool result cut would split a surrogate pair', () => {
    const result = (text) => [
      { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'read', arguments: {} }] },
      { role: 'toolResult', toolCallId: 'c', toolName: 'read', content: [{ type: 'text', text }], isError: false },
    ]
    const textFlag = (messages) => {
      const codes = codesOf(messages)
      return codes[codes.length - 1]
    }
    // 😀 at units CUT - 1 and CUT, at CUT - 2 and CUT - 1, at CUT and CUT + 1.
    const straddling = 'a'.repeat(CUT - 1) + '😀' + 'b'.repeat(50)
    const before = 'a'.repeat(CUT - 2) + '😀' + 'b'.repeat(50)
    const after = 'a'.repeat(CUT) + '😀' + 'b'.repeat(50)
    expect([straddling, before, after, '😀'].map((t) => textFlag(result(t)))).toEqual([2, 0, 0, 0])
    expect(textFlag(result(' '.repeat(CUT - 1) + '😀'))).toBe(2) // not blank: flags add up
    for (const text of [straddling, before, after]) {
      const messages = result(text)
      expect(ours.serializeConversation(messages)).toBe(native.serializeConversation(messages, undefined, argumentEntries))
    }
    // Cut one unit early rather than through the pair.
    expect(ours.serializeConversation(result(straddling))).toContain(`]: ${'a'.repeat(CUT - 1)}\n\n[... 52 more characters truncated]`)
    // The native side takes the flag as told, for the same cut: a flag that
    // lies shows (so CUT here is the native side's cut too).
    const plain = result('x'.repeat(CUT + 10))
    const flat = flatMessages(plain)
    flat.codes[flat.codes.length - 1] = 2
    const told = assembleTranscript(binding.serializeConversation(plain, undefined, argumentEntries, flat))
    expect(told).toContain(`]: ${'x'.repeat(CUT - 1)}\n\n[... 11 more characters truncated]`)
    expect(ours.serializeConversation(plain)).toContain(`]: ${'x'.repeat(CUT)}\n\n[... 10 more characters truncated]`)
  })

  test('labels past Latin-1 after Latin-1 ones, and lone surrogates in ids, come out as given', () => {
    const call = (id, name, args) => ({ role: 'assistant', content: [{ type: 'toolCall', id, name, arguments: args }] })
    const result = (id, name) => ({ role: 'toolResult', toolCallId: id, toolName: name, content: [{ type: 'text', text: 'ok' }], isError: false })
    const messages = [
      call('c1', 'read', { path: 'é' }),
      result('c1', 'read'),
      call('c€', 'wr😀te', { x: 1 }),
      result('c€', 'wr😀te'),
      call('c\ud800', 'edit', { s: 'ÿ' }),
      result('c\ud800', 'edit'),
    ]
    const expected = [
      '[Assistant tool calls]: read#c1(path="é")',
      '[Tool result read#c1 error=false]: ok',
      '[Assistant tool calls]: wr😀te#c€(x=1)',
      '[Tool result wr😀te#c€ error=false]: ok',
      '[Assistant tool calls]: edit#c\ud800(s="ÿ")',
      '[Tool result edit#c\ud800 error=false]: ok',
    ].join('\n\n')
    expect(ours.serializeConversation(messages)).toBe(expected)
    expect(ours.serializeConversation(messages.slice(0, 2))).toBe(expected.split('\n\n').slice(0, 2).join('\n\n'))
    expect(ours.serializeForSummary(messages)).toBe(expected)
  })

  test('a tool result answers a call whichever reader read each: ids compared by their units', () => {
    // The projection keeps a tool result only if its id is that of an
    // earlier call. An id read natively and one read from the flat form are
    // held differently (a string, a run of units) and must still match, or
    // not, exactly as their UTF-16 units do.
    const inherited = Object.create({ mimeType: 'image/png' })
    inherited.type = 'image'
    const call = (id, args) => ({ role: 'assistant', content: [{ type: 'toolCall', id, name: 'read', arguments: args }] })
    const result = (id, ...extra) => ({ role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text: 'body' }, ...extra] })
    const ids = ['plain', 'é', '\u{1F642}', 'a\ud800b', '\udc00', 'x'.repeat(300)]
    const others = ['plaiN', 'e', '\u{1F643}', 'a\ud801b', '\udc01', 'x'.repeat(299)]
    for (const [k, id] of ids.entries()) {
      for (const answer of [id, others[k]]) {
        // Arguments that are a string send the call to the native reader; an
        // inherited mimeType sends the result.
        const nativeCall = [call(id, 'str'), result(answer)]
        const nativeResult = [call(id, {}), result(answer, inherited)]
        expect(codesOf(nativeCall).slice(0, 2)).toEqual([0, 0])
        expect(codesOf(nativeResult).slice(-2)).toEqual([0, 1])
        for (const messages of [nativeCall, nativeResult]) {
          const kept = ours.projectForSummary(messages).filter((m) => m.role === 'toolResult')
          expect(kept.map((m) => m.toolCallId)).toEqual(answer === id ? [id] : [])
          expect(ours.serializeForSummary(messages).includes('body')).toBe(answer === id)
        }
      }
    }
  })

  test('labels spread over several labels strings, and a long run as a string of its own', () => {
    // The native side makes its labels strings in pieces of at most 32k
    // units; a run of labels and text it wrote that is longer than a few
    // hundred units (here a 50,000-unit argument) is a string of its own.
    const messages = []
    const lines = []
    for (let i = 0; i < 1500; i++) {
      const id = `call_${i}_${'x'.repeat(i % 40)}`
      const args = i === 700 ? { content: 'y'.repeat(50_000) } : { path: `src/file${i}.ts` }
      messages.push({ role: 'assistant', content: [{ type: 'toolCall', id, name: 'write', arguments: args }] })
      lines.push(`[Assistant tool calls]: write#${id}(${Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')})`)
      messages.push({ role: 'toolResult', toolCallId: id, toolName: 'write', content: [{ type: 'text', text: `done ${i}` }], isError: i % 3 === 0 })
      lines.push(`[Tool result write#${id} error=${i % 3 === 0}]: done ${i}`)
    }
    const recipe = binding.serializeConversation(messages, undefined, argumentEntries)
    expect(Object.keys(recipe)).toEqual(['ops', 'bounds', 'labels', 'strings'])
    expect(recipe.labels.length).toBeGreaterThan(3) // several labels strings
    expect(Math.max(...recipe.labels.map((l) => l.length))).toBeLessThanOrEqual(32 * 1024)
    expect(recipe.strings.some((s) => s.length > 50_000 && s.includes('y'.repeat(50_000)))).toBe(true)
    expect(assembleTranscript(recipe)).toBe(lines.join('\n\n'))
    expect(ours.serializeConversation(messages)).toBe(lines.join('\n\n'))
  })

  test('a call made while another holds the buffers gets its own', () => {
    const inner = [{ role: 'assistant', content: [{ type: 'toolCall', id: 'in1', name: 'bash', arguments: { command: 'pwd' } }] }]
    let innerOut
    const options = {
      get reasoning() {
        innerOut = ours.serializeConversation(inner)
        return true
      },
    }
    const outer = [{ role: 'assistant', content: [{ type: 'toolCall', id: 'out1', name: 'read', arguments: { path: 'x' } }] }]
    expect(ours.serializeConversation(outer, options)).toBe('[Assistant tool calls]: read#out1(path="x")')
    expect(innerOut).toBe('[Assistant tool calls]: bash#in1(command="pwd")')
    // Warm buffers from a longer call leave nothing behind in a shorter one.
    expect(ours.serializeConversation(inner)).toBe(innerOut)
  })

  test('a call made in the middle of the native reading leaves the outer one its buffers', () => {
    // The native side reads the flat form's typed arrays in place: a call
    // made from a getter while it reads (here, of a message only the native
    // reader takes) must neither reuse nor disturb them.
    const call = (id, name, args) => ({ role: 'assistant', content: [{ type: 'toolCall', id, name, arguments: args }] })
    const inner = [call('inner1', 'bash', { command: 'ls -la' }), { role: 'user', content: 'inner text' }]
    const innerOuts = []
    let reads = 0
    const custom = {
      role: 'custom',
      customType: 'note',
      display: true,
      get content() {
        // Read once by the JS pass, then by the native reader.
        if (++reads === 2) {
          for (let i = 0; i < 3; i++) innerOuts.push(ours.serializeConversation(inner))
        }
        return 'from a getter'
      },
    }
    const outer = [call('out1', 'read', { path: 'a.ts' }), custom, call('out2', 'edit', { path: 'b.ts', old: 'x', new: 'y' }), { role: 'user', content: 'after' }]
    const expected = [
      '[Assistant tool calls]: read#out1(path="a.ts")',
      '[User]: from a getter',
      '[Assistant tool calls]: edit#out2(path="b.ts", old="x", new="y")',
      '[User]: after',
    ].join('\n\n')
    expect(ours.serializeConversation(outer)).toBe(expected)
    expect(reads).toBeGreaterThanOrEqual(2)
    expect(innerOuts).toEqual(Array(3).fill('[Assistant tool calls]: bash#inner1(command="ls -la")\n\n[User]: inner text'))
    expect(ours.serializeForSummary(outer)).toContain('edit#out2(path="b.ts", old="x", new="y")')
  })

  test('argument JSON written by the pass is what JSON.stringify prints', () => {
    const values = [
      'plain', '', 'say "hi"', 'back\\slash', 'line\nbreak\ttab\u0001\u001f', '\u007f\u2028\u2029', 'pair 😀', 'lone \ud83d', 'lone \ude00 end',
      0, -0, 1.5, -42, 1e21, 5e-7, 2 ** 53 + 2, NaN, Infinity, -Infinity, true, false, null, undefined,
      () => 1, Symbol('s'), [1, 'a', undefined], { nested: { toJSON: (k) => `key:${k}` } }, { toJSON: (k) => `top:${k}` }, new Date(0), new Number(3), // eslint-disable-line no-new-wrappers
    ]
    const args = Object.fromEntries(values.map((v, i) => [`k${i}`, v]))
    const arrayArgs = values.slice(0, 5)
    const messages = [
      { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'n', arguments: args }] },
      { role: 'assistant', content: [{ type: 'toolCall', id: 'd', name: 'n', arguments: arrayArgs }] },
    ]
    expect(codesOf(messages)[0]).not.toBe(0)
    const printed = (a) => Object.entries(a).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')
    const expected = `[Assistant tool calls]: n#c(${printed(args)})\n\n[Assistant tool calls]: n#d(${printed(arrayArgs)})`
    expect(ours.serializeConversation(messages)).toBe(expected)
    expect(native.serializeConversation(messages, undefined, argumentEntries)).toBe(expected)
  })

  test('a long argument value is handed over as it is, other long JSON as JSON.stringify made it', () => {
    const content = 'line "one"\n\tline two \\ \ud800 😀 '.repeat(8)
    const edits = [{ oldText: 'x'.repeat(70), newText: 'y' }]
    const args = { path: 'src/a.ts', content, edits, exact: 'z'.repeat(64), over: 'z'.repeat(65) }
    const messages = [{ role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'write', arguments: args }] }]
    const { codes, texts, longArguments } = flatMessages(messages)
    // The string values passed as they are: content and over.
    expect(longArguments).toBe(2)
    // A message that goes to the native reader takes its count back.
    const odd = { role: 'assistant', content: [{ type: 'toolCall', id: 'd', name: 'write', arguments: { content } }, { type: 'text', text: 5 }] }
    expect(flatMessages([...messages, odd]).longArguments).toBe(2)
    expect(flatMessages([odd, ...messages, ...messages]).longArguments).toBe(4)
    // [ASSISTANT, 1, TOOL_CALL, id, name, 5, then (key, json length, where) for each argument]
    expect(Array.from(codes)).toEqual([3, 1, 7, 1, 5, 5, 4, 10, -1, 7, content.length, -2, 5, JSON.stringify(edits).length, 1, 5, 66, -1, 4, 65, -4])
    expect(texts[0]).toBe(content) // the caller's own string
    expect(texts[1]).toBe(JSON.stringify(edits))
    expect(texts[2]).toBe(args.over)
    const shown = Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')
    expect(ours.serializeConversation(messages)).toBe(`[Assistant tool calls]: write#c(${shown})`)
    expect(native.serializeConversation(messages, undefined, argumentEntries)).toBe(`[Assistant tool calls]: write#c(${shown})`)
    // The projection's copy of a long string value is that string.
    const [projected] = ours.projectForSummary(messages)
    expect(projected.content[0].arguments).toEqual(JSON.parse(JSON.stringify(args)))
    expect(projected.content[0].arguments.content).toBe(content)
    expect(exactly(ours.projectForSummary(messages))).toBe(exactly(native.projectForSummary(messages, undefined, argumentEntries)))
    // A round bound cuts inside the JSON written natively, as it cuts any text.
    for (const roundBound of [10, 100, 333, 1000]) {
      expect(ours.serializeForSummary(messages, { roundBound })).toBe(native.serializeForSummary(messages, { roundBound }, argumentEntries))
      expect(exactly(ours.projectForSummary(messages, { roundBound }))).toBe(exactly(native.projectForSummary(messages, { roundBound }, argumentEntries)))
    }
  })

  test('arguments whose getters change later keys are read as Object.entries reads them', () => {
    const call = (args) => [{ role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'n', arguments: args }] }]
    const deleting = {
      get a() {
        delete this.b
        return 1
      },
      b: 2,
      c: 3,
    }
    const hiding = {
      get a() {
        Object.defineProperty(this, 'b', { enumerable: false })
        return 1
      },
      b: 2,
    }
    const adding = {
      get a() {
        this.z = 9
        return 1
      },
      b: 2,
    }
    const changing = {
      get a() {
        this.b = 'changed'
        return 1
      },
      b: 2,
    }
    const cases = [
      [() => deleting, 'a=1, c=3', true],
      [() => hiding, 'a=1', true],
      [() => adding, 'a=1, b=2', false],
      [() => changing, 'a=1, b="changed"', false],
    ]
    for (const [make, shown, goesNative] of cases) {
      // Fresh objects each time: the getters change them.
      const copy = () => Object.defineProperties({}, Object.getOwnPropertyDescriptors(make()))
      expect(codesOf(call(copy()))[0] === 0).toBe(goesNative)
      expect(ours.serializeConversation(call(copy()))).toBe(`[Assistant tool calls]: n#c(${shown})`)
      expect(native.serializeConversation(call(copy()), undefined, argumentEntries)).toBe(`[Assistant tool calls]: n#c(${shown})`)
    }
  })

  test('a flat form the reader cannot follow is an internal error, never a crash or a guess', () => {
    const messages = [
      { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'toolCall', id: 'c', name: 'n', arguments: { k: 1 } }] },
      { role: 'toolResult', toolCallId: 'c', toolName: 'n', content: [{ type: 'text', text: 'out' }], isError: false },
    ]
    const { codes, texts, shorts: units } = flatMessages(messages)
    const good = Array.from(codes)
    // [ASSISTANT, 2, TEXT, 0, 1, 0, TOOL_CALL, 1, 1, 1, 1, 1, -1, TOOL_RESULT, 1, 1, 0, 1, TEXT, 1, 3, 0]
    expect(good).toEqual([3, 2, 5, 0, 1, 0, 7, 1, 1, 1, 1, 1, -1, 4, 1, 1, 0, 1, 5, 1, 3, 0])
    const flatOf = (c, u = units) => ({ codes: Int32Array.from(c), texts, shorts: u })
    // As made, it reads.
    for (const fn of ['serializeConversation', 'serializeForSummary']) {
      expect(assembleTranscript(binding[fn](messages, undefined, argumentEntries, flatOf(good)))).toBe(ours[fn](messages))
    }
    const bad = [
      flatOf(good.slice(0, 7)), // cut inside the tool call
      flatOf(good.map((c, i) => (i === 1 ? 5 : c))), // more blocks than there are
      flatOf(good.map((c, i) => (i === 7 ? 99 : c))), // an id longer than the units
      flatOf(good.map((c, i) => (i === 9 ? 99 : c))), // more arguments than codes
      flatOf(good.map((c, i) => (i === 11 ? 40 : c))), // argument JSON past the units
      flatOf(good.map((c, i) => (i === 2 ? 42 : c))), // an unknown block code
      flatOf(good.map((c, i) => (i === 13 ? 42 : c))), // an unknown message code
      flatOf(good.map((c, i) => (i === 12 ? 5 : c))), // argument JSON at a string index past the texts
      flatOf(good.map((c, i) => (i === 12 ? -9 : c))), // the JSON of a string past the texts
      flatOf(good.map((c, i) => (i === 11 ? -3 : i === 12 ? 0 : c))), // a negative JSON length
      flatOf(good.map((c, i) => (i === 3 ? -7 : c))), // a negative string index
      flatOf(good, new Uint8Array(4)), // units of the wrong type
    ]
    for (const flat of bad) {
      for (const fn of ['serializeConversation', 'serializeForSummary']) {
        expect(() => binding[fn](messages, undefined, argumentEntries, flat)).toThrow(/internal error.*bad flat messages/)
      }
      // The projection's plan reads timestamps too.
      const timed = { ...flat, times: new Float64Array(2), timed: new Uint8Array(2) }
      expect(() => binding.projectionPlan(messages, undefined, argumentEntries, timed)).toThrow(/internal error.*bad flat messages/)
    }
    const timestamps = { times: new Float64Array([5, 6]), timed: new Uint8Array([1, 0]) }
    const plan = binding.projectionPlan(messages, undefined, argumentEntries, { ...flatOf(good), ...timestamps })
    expect(Object.keys(plan)).toEqual(['codes', 'values', 'shorts', 'args'])
    expect(projectionOfPlan(plan, flatOf(good))).toEqual([{ ...messages[0], timestamp: 5 }, messages[1]])
    const mistimed = [
      { ...flatOf(good), times: new Float64Array(1), timed: new Uint8Array(1) }, // fewer timestamps than messages
      { ...flatOf(good), times: new Float64Array(2), timed: new Uint8Array(3) }, // lengths that disagree
      { ...flatOf(good), times: new Uint8Array(2), timed: new Uint8Array(2) }, // times of the wrong type
      flatOf(good), // none
      { codes: Int32Array.of(0, 1, 0, 0), texts, shorts: units, ...timestamps }, // messages read natively in another order
    ]
    for (const flat of mistimed) {
      expect(() => binding.projectionPlan(messages, undefined, argumentEntries, flat)).toThrow(/internal error.*bad flat messages/)
    }
  })

  test('a getter that adds messages meanwhile: the messages the call began with are read, as natively', () => {
    const make = (mutate) => {
      const messages = [
        { role: 'user', content: 'a', timestamp: 1 },
        { role: 'user', content: 'b', timestamp: 2 },
      ]
      Object.defineProperty(messages[0], 'role', {
        enumerable: true,
        get() {
          mutate(messages)
          return 'user'
        },
      })
      return messages
    }
    const grow = (m) => m.push({ role: 'user', content: 'more', timestamp: 3 })
    const shrink = (m) => {
      m.length = 1
    }
    for (const fn of ['serializeConversation', 'serializeForSummary', 'projectForSummary']) {
      const flat = outcome(() => exactly(ours[fn](make(grow))))
      expect(flat).toEqual(outcome(() => exactly(native[fn](make(grow), undefined, argumentEntries))))
      // Removing sends the call native (messages[1] is gone), where the
      // getter runs again: the native reader then starts from one message.
      // Either way, never an internal error.
      expect(outcome(() => ours[fn](make(shrink))).message ?? '').not.toMatch(/internal error/)
    }
    expect(ours.serializeConversation(make(grow))).toBe('[User]: a\n\n[User]: b')
    expect(ours.projectForSummary(make(grow)).map((m) => m.timestamp)).toEqual([1, 2])
  })

  test('projected tool-call arguments: parsed at once where they can be, key by key where not, the same either way', () => {
    const lone = String.fromCharCode(0xd800)
    const withToJSON = { toJSON: () => ({ made: [1, 'x'] }) }
    const argsList = [
      { path: 'src/a.ts', limit: 5, neg: -0, big: 1e21, tiny: 5e-324, flag: true, none: null, list: [1, { a: 'b' }], text: 'say "hi"\n' },
      { 10: 'ten', 2: 'two', b: 'b', a: 'a' }, // integer keys first, then insertion order
      JSON.parse('{"__proto__":{"x":1},"ok":1}'), // an own __proto__ key
      { 'quote"key': 1, plain: 2 }, // a key JSON must escape: key by key
      { ['back\\slash']: 1 },
      { ['new\nline']: 1 },
      { [`lone${lone}`]: lone }, // lone surrogates, key and value
      { gone: undefined, fn: () => 1, sym: Symbol('s'), kept: 'k' }, // undefined JSON: the key stays, holding undefined
      { nan: NaN, inf: -Infinity, date: new Date(0), obj: withToJSON },
      {},
    ]
    const messages = [
      { role: 'user', content: 'go', timestamp: 1 },
      { role: 'assistant', content: argsList.map((args, k) => ({ type: 'toolCall', id: `c${k}`, name: 'n', arguments: args })), timestamp: 2 },
    ]
    const projected = ours.projectForSummary(messages)
    expect(exactly(projected)).toBe(exactly(native.projectForSummary(messages, undefined, argumentEntries)))
    const copies = projected[1].content.map((b) => b.arguments)
    argsList.forEach((args, k) => {
      const copy = copies[k]
      expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
      expect(Reflect.ownKeys(copy)).toEqual(Object.keys(args))
      for (const [key, v] of Object.entries(args)) {
        const json = JSON.stringify(v)
        expect(Object.getOwnPropertyDescriptor(copy, key)).toEqual({
          value: json === undefined ? undefined : JSON.parse(json),
          writable: true,
          enumerable: true,
          configurable: true,
        })
      }
    })
    expect(Object.is(copies[0].neg, 0)).toBe(true) // as JSON gives it
    // Both paths were taken: five parsed at once (0, 1, 2, 8, 9), the ones
    // with a key to escape or a value without JSON key by key.
    const { args: parsed } = binding.projectionPlan(messages, undefined, argumentEntries, flatMessages(messages, true))
    expect(JSON.parse(parsed)).toEqual([0, 1, 2, 8, 9].map((k) => JSON.parse(JSON.stringify(argsList[k]))))
  })

  test('a plain generated conversation goes through without native reads', () => {
    const messages = []
    for (let i = 0; i < 200; i++) {
      const image = i % 7 === 0 ? [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] : []
      messages.push({ role: 'user', content: [{ type: 'text', text: `ask ${i}` }, ...image] })
      messages.push({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'toolCall', id: `t${i}`, name: 'bash', arguments: { command: 'ls', n: i } },
        ],
      })
      messages.push({ role: 'toolResult', toolCallId: `t${i}`, toolName: 'bash', content: [{ type: 'text', text: 'x'.repeat(i * 20) }], isError: false })
    }
    const codes = codesOf(messages)
    // Message codes sit where each message starts; none is NATIVE.
    let natives = 0
    for (let p = 0; p < codes.length; ) {
      const code = codes[p]
      if (code === 0) natives++
      p += code === 1 ? 3 : code === 0 ? 2 : skipMessage(codes, p)
    }
    expect(natives).toBe(0)
    expect(ours.serializeConversation(messages)).toBe(native.serializeConversation(messages, undefined, argumentEntries))
    expect(ours.serializeForSummary(messages)).toBe(native.serializeForSummary(messages, undefined, argumentEntries))
  })
})

/** The length in codes of the message starting at `p` (codes 2-4). */
function skipMessage(codes, p) {
  let q = p + (codes[p] === 4 ? 4 : 1)
  let count = codes[q++]
  while (count-- > 0) {
    const block = codes[q]
    if (block === 5) q += 4
    else if (block === 6) q += 4
    else if (block === 8) q += 2
    else q += 4 + 3 * codes[q + 3]
  }
  return q - p
}

describe('both readers agree', () => {
  const messagesArb = fc.array(fc.oneof({ weight: 6, arbitrary: gen.agentMessageArb }, { weight: 1, arbitrary: fc.anything() }), {
    maxLength: 14,
  })
  const projectionArb = fc.record(
    {
      toolResultBodies: fc.nat(4),
      dropOldestRounds: fc.nat(2),
      roundBound: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 400 })),
      model: fc.constantFrom(undefined, { api: 'anthropic-messages', provider: 'anthropic', id: 'claude-x' }, { api: 'openai', provider: 'openai', id: 'gpt' }),
      reasoning: fc.constantFrom(undefined, true, false),
    },
    { requiredKeys: [] },
  )

  // Tool calls whose arguments hold long values (a file's contents, as a
  // rule): a long string is handed over as it is and its JSON written
  // natively, other long JSON as JSON.stringify made it.
  const LONG = 64
  const unitArb = fc.constantFrom('a', 'b', ' ', '"', '\\', '\n', '\t', '\r', '\b', '\f', '\u0000', '\u001f', '\u007f', '\ud800', '\udbff', '\udc00', '\udfff', '😀', 'é', 'ÿ', '中', '\u2028', '\ufeff', '/')
  const longStringArb = fc.oneof(
    fc.array(unitArb, { minLength: LONG - 3, maxLength: LONG * 4 }).map((units) => units.join('')),
    fc.integer({ min: LONG - 2, max: LONG + 2 }).map((n) => 'x'.repeat(n)),
  )
  const longValueArb = fc.oneof(
    { weight: 5, arbitrary: longStringArb },
    { weight: 1, arbitrary: fc.array(longStringArb, { maxLength: 2 }) },
    { weight: 1, arbitrary: fc.record({ oldText: longStringArb, newText: longStringArb }) },
    { weight: 1, arbitrary: longStringArb.map((s) => [, s]) }, // eslint-disable-line no-sparse-arrays
    { weight: 1, arbitrary: fc.constantFrom(1, 'short', undefined, null) },
  )
  const argumentsArb = fc
    .tuple(fc.dictionary(fc.constantFrom('path', 'content', 'oldText', 'newText', 'edits', 'command', '__proto__'), longValueArb, { maxKeys: 4 }), fc.constantFrom('plain', 'frozen', 'getter', 'proxy', 'throwing'))
    .map(([dict, how]) => {
      const args = {}
      for (const [k, v] of Object.entries(dict)) Object.defineProperty(args, k, { value: v, writable: true, enumerable: true, configurable: true })
      if (how === 'frozen') return Object.freeze(args)
      if (how === 'getter') {
        const value = Object.values(args)[0] ?? 'g'.repeat(LONG + 1)
        return Object.defineProperty(args, 'got', { get: () => value, enumerable: true })
      }
      if (how === 'proxy') return new Proxy(args, {})
      if (how === 'throwing') {
        return Object.defineProperty(args, 'boom', {
          get() {
            throw new Error('argument getter failed')
          },
          enumerable: true,
        })
      }
      return args
    })
  const longCallsArb = fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.tuple(fc.nat(3), argumentsArb).map(([k, args]) => ({ role: 'assistant', content: [{ type: 'text', text: 'doing it' }, { type: 'toolCall', id: `c${k}`, name: 'write', arguments: args }], timestamp: k })) },
      { weight: 2, arbitrary: fc.tuple(fc.nat(3), longStringArb).map(([k, text]) => ({ role: 'toolResult', toolCallId: `c${k}`, toolName: 'write', content: [{ type: 'text', text }], isError: false, timestamp: k })) },
      { weight: 2, arbitrary: gen.agentMessageArb },
    ),
    { maxLength: 8 },
  )

  test('long tool-call arguments: same transcripts, projections and errors from both readers', () => {
    fc.assert(
      fc.property(longCallsArb, projectionArb, (messages, options) => {
        expect(outcome(() => ours.serializeConversation(messages))).toEqual(outcome(() => native.serializeConversation(messages, undefined, argumentEntries)))
        expect(outcome(() => ours.serializeForSummary(messages, options))).toEqual(outcome(() => native.serializeForSummary(messages, options, argumentEntries)))
        expect(outcome(() => exactly(ours.projectForSummary(messages, options)))).toEqual(
          outcome(() => exactly(native.projectForSummary(messages, options, argumentEntries))),
        )
      }),
      { numRuns: RUNS },
    )
  })

  test('serializeConversation: same transcripts, same errors', () => {
    fc.assert(
      fc.property(messagesArb, fc.constantFrom(undefined, { reasoning: false }, { reasoning: 'x' }), (messages, options) => {
        expect(outcome(() => ours.serializeConversation(messages, options))).toEqual(
          outcome(() => native.serializeConversation(messages, options, argumentEntries)),
        )
      }),
      { numRuns: RUNS },
    )
  })

  test('projectForSummary: same messages, same errors', () => {
    fc.assert(
      fc.property(messagesArb, projectionArb, (messages, options) => {
        const viaFlat = outcome(() => exactly(ours.projectForSummary(messages, options)))
        expect(viaFlat).toEqual(outcome(() => exactly(native.projectForSummary(messages, options, argumentEntries))))
      }),
      { numRuns: RUNS },
    )
  })

  test('serializeForSummary: same transcripts, same errors', () => {
    fc.assert(
      fc.property(messagesArb, projectionArb, (messages, options) => {
        expect(outcome(() => ours.serializeForSummary(messages, options))).toEqual(
          outcome(() => native.serializeForSummary(messages, options, argumentEntries)),
        )
      }),
      { numRuns: RUNS },
    )
  })
})
