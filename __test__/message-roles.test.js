'use strict'
// convertToLlm reads its messages' roles ahead in JS (lib/message-roles.js)
// and the native side reads only the messages it turns into others. The
// public function must give what the binding gives reading every message
// itself: the same messages (the caller's own objects where they pass
// through), the same errors, on both lines, for generated lists and for odd
// ones (holes, primitives, Proxies, getters, throwing getters, frozen
// messages, roles that are not strings).

const path = require('node:path')
const util = require('node:util')
const fc = require('fast-check')
const gen = require('./helpers/generator')
const { platformSuffix, binaryName } = require('../platform.js')
const { readMessageRoles, messagesOfPlan } = require('../lib/message-roles.js')
const { AGENT_LINES } = require('../lib/api.js')
const { loadReference } = require('./helpers/reference')

const binding = require(path.join(__dirname, '..', `${binaryName}.${platformSuffix()}.node`))

const RUNS = Number(process.env.MESSAGE_ROLES_RUNS) || 300

jest.setTimeout(60_000)

/** The binding reading every message itself, its plan assembled. */
function nativeConvert(messages, line) {
  const plan = binding.convertToLlm(messages, line)
  expect(Array.from(plan.order).every((k) => k < 0)).toBe(true)
  return messagesOfPlan(plan, undefined)
}

/** The result of `fn`, or the error it throws, as comparable data. */
function outcome(fn) {
  try {
    return { value: fn() }
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message }
  }
}

const exactly = (v) => util.inspect(v, { depth: Infinity, showHidden: true, breakLength: Infinity })

/** Same messages (the same objects where the reference passes them on) and the same errors. */
function expectSame(ours, line, make) {
  const viaPass = outcome(() => ours.convertToLlm(make()))
  const alone = outcome(() => nativeConvert(make(), binding.agentLineIndex(line)))
  expect(exactly(viaPass)).toBe(exactly(alone))
  const messages = make()
  const r = outcome(() => ours.convertToLlm(messages))
  if (r.value) {
    // A message passed through is the caller's object itself, as in the agents.
    for (const m of r.value) if (messages.includes(m)) expect(['user', 'assistant', 'toolResult', 'system']).toContain(m.role)
  }
  return viaPass
}

const user = { role: 'user', content: 'hi', timestamp: 1 }
const assistant = { role: 'assistant', content: [{ type: 'text', text: 'ok' }], timestamp: 2 }
const bash = { role: 'bashExecution', command: 'ls', output: 'a\nb', exitCode: 1, cancelled: false, truncated: false, timestamp: 3 }
const custom = { role: 'custom', customType: 'note', content: 'a note', display: true, timestamp: 4 }
const summary = { role: 'compactionSummary', summary: 'before', tokensBefore: 10, timestamp: 5 }
const system = { role: 'system', sections: { a: 'b' }, timestamp: 6 }

describe.each(AGENT_LINES.map((name) => [name]))('the %s line', (line) => {
  const ours = require(`../agent-${line}.js`)

  test('the pass reads each role once, and leaves what it cannot take to the native side', () => {
    const read = readMessageRoles([user, bash, null, 7, { role: 5 }, system])
    expect(Array.from(read.roles)).toEqual([16, 19, 0, 0, 0, 23])
    expect(read.values[1]).toBe(bash)
    expect(readMessageRoles(new Proxy([user], {}))).toBe(undefined)
    expect(readMessageRoles('user')).toBe(undefined)
    const r = ours.convertToLlm([user, bash, assistant, summary, custom])
    expect(r[0]).toBe(user)
    expect(r[2]).toBe(assistant)
    expect(r[1]).toEqual({ role: 'user', content: [{ type: 'text', text: ours.bashExecutionToText(bash) }], timestamp: 3 })
    expect(r.length).toBe(5)
  })

  test("one message for each: the plan names the places of those made, and the pass's own array is the result", () => {
    const index = binding.agentLineIndex(line)
    const list = [user, bash, assistant, custom]
    const read = readMessageRoles(list)
    const plan = binding.convertToLlm(list, index, read.roles, read.values)
    expect(plan.order).toBe(undefined)
    expect(Array.from(plan.replaced)).toEqual([1, 3])
    const r = messagesOfPlan(plan, read.values)
    expect(r).toBe(read.values)
    expect(r).not.toBe(list)
    expect([r[0], r[2]]).toEqual([user, assistant])
    expect(r[0]).toBe(user)
    // The bash run's message crosses as its text's codes: the timestamp, then
    // the pieces, a literal by its index in textLiterals(), the caller's
    // strings as themselves (the exit code as its string).
    const literals = binding.textLiterals()
    const [m, c] = plan.made
    expect(m).toBeGreaterThanOrEqual(0)
    expect(plan.strings[-1 - plan.codes[m]]).toBe(bash.timestamp)
    const codes = Array.from(plan.codes.subarray(m + 2, m + 2 + plan.codes[m + 1]))
    const pieces = codes.map((k) => (k >= 0 ? literals[k] : plan.strings[-1 - k]))
    expect(pieces).toEqual(['Ran `', 'ls', '`\n', '```\n', 'a\nb', '\n```', '\n\nCommand exited with code ', '1'])
    expect(codes.filter((k) => k >= 0).length).toBe(5)
    expect(r[1].content[0].text).toBe(pieces.join(''))
    // The custom message's is an object made.
    expect(c).toBeLessThan(0)
    expect(plan.objects[-1 - c]).toBe(r[3])
    expect(r[3]).toEqual({ role: 'user', content: [{ type: 'text', text: 'a note' }], timestamp: 4 })
    // A message left out: the plan is the order of every message kept.
    const dropped = [user, { ...bash, excludeFromContext: true }, assistant]
    const readDropped = readMessageRoles(dropped)
    const planDropped = binding.convertToLlm(dropped, index, readDropped.roles, readDropped.values)
    expect(planDropped.replaced).toBe(undefined)
    expect(Array.from(planDropped.order)).toEqual([0, 2])
    // Each call gives an array of its own.
    const [a, b] = [ours.convertToLlm(list), ours.convertToLlm(list)]
    expect(a).not.toBe(b)
    expect(a).toEqual(b)
  })

  test('odd lists: the same messages and the same errors as the native reader alone', () => {
    const throwing = () => Object.defineProperty({ content: 'x' }, 'role', { enumerable: true, get: () => { throw new Error('role getter failed') } })
    const getter = (role) => Object.defineProperty({ content: 'x', timestamp: 1 }, 'role', { enumerable: true, get: () => role })
    const sparse = () => {
      const list = [user, bash]
      list[5] = assistant
      return list
    }
    const cases = [
      () => [],
      () => [user, assistant, bash, custom, summary, system],
      () => [{ ...bash, excludeFromContext: true }, { ...custom, content: [{ type: 'text', text: 'blocks' }] }, { role: 'branchSummary', summary: 's', fromId: 'x', timestamp: 7 }],
      sparse,
      () => [user, null],
      () => [bash, undefined, user],
      () => [7, user],
      () => [user, { role: 5 }],
      () => [user, { role: 'narrator' }],
      () => [throwing(), bash],
      () => [bash, throwing()],
      () => [{ ...bash, get command() { throw new Error('command getter failed') } }, throwing()],
      () => [getter('user'), getter('bashExecution'), getter('custom'), getter(undefined)],
      () => [Object.freeze({ ...bash }), Object.freeze({ ...user })],
      () => [new Proxy({ ...bash }, {}), new Proxy({ ...user }, {})],
      () => new Proxy([user, bash], {}),
      () => [{ ...bash, command: Symbol('c') }],
      () => [{ ...summary, summary: 10n }],
      () => Object.assign([user, bash], { 1: custom }),
    ]
    for (const make of cases) expectSame(ours, line, make)
  })

  test("a bash run's fields are read as often, and in the order, the agent's bashExecutionToText reads them, in both functions", async () => {
    const ref = await loadReference(line)
    const fields = ['command', 'output', 'exitCode', 'cancelled', 'truncated', 'fullOutputPath', 'excludeFromContext', 'timestamp']
    const runs = [
      { command: 'ls', output: 'o', exitCode: 2, cancelled: false, truncated: true, fullOutputPath: '/f' },
      { command: 'ls', output: '', exitCode: 0, cancelled: true, truncated: false },
      { command: 'ls', output: 'o', exitCode: null, cancelled: false, truncated: true },
      { command: 'ls', output: 'x', exitCode: undefined, cancelled: 0, truncated: 1, fullOutputPath: '' },
      { command: 1, output: { toString: () => 'an object' }, exitCode: -0, cancelled: false },
      { command: 'a', exitCode: '0' },
    ]
    for (const run of runs) {
      const logged = (log) => {
        const m = { role: 'bashExecution' }
        for (const f of fields) Object.defineProperty(m, f, { enumerable: true, get: () => (log.push(f), run[f]) })
        return m
      }
      for (const call of [(api, m) => api.bashExecutionToText(m), (api, m) => api.convertToLlm([m])]) {
        const [theirs, mine] = [[], []]
        expect(call(ours, logged(mine))).toEqual(call(ref, logged(theirs)))
        expect(mine).toEqual(theirs)
      }
    }
  })

  test('a getter that grows or shrinks the list while it is read: the messages of the length the call began with, as the agent reads them', async () => {
    const ref = await loadReference(line)
    const make = (change) => {
      const list = [{ role: 'user', content: 'a', timestamp: 1 }, null, { role: 'user', content: 'c', timestamp: 3 }]
      Object.defineProperty(list, 1, { enumerable: true, configurable: true, get: () => (change(list), { role: 'custom', customType: 'n', content: 'b', display: true, timestamp: 2 }) })
      return list
    }
    for (const change of [(l) => l.push({ role: 'user', content: 'pushed', timestamp: 4 }), (l) => (l.length = 2), (l) => l.unshift({ role: 'user', content: 'first', timestamp: 0 })]) {
      expect(outcome(() => ours.convertToLlm(make(change)))).toEqual(outcome(() => ref.convertToLlm(make(change))))
    }
  })

  test("messages made after the call's first handle scopes (many dropped or read natively before them): the reference's messages, plain and behind a Proxy", async () => {
    // Each message the native side reads is read in a handle scope of its
    // own, but for the first few; a result array first made in one of those
    // was a dead handle once it closed (a V8 fatal error from 17 dropped
    // bash runs then a made message, 16 behind a Proxy).
    const ref = await loadReference(line)
    const excluded = (i) => ({ ...bash, excludeFromContext: true, timestamp: 100 + i })
    const made = [custom, { ...custom, content: [{ type: 'text', text: 'blocks' }] }, summary, { role: 'branchSummary', summary: 's', fromId: 'x', timestamp: 7 }, bash, user]
    let compared = 0
    for (const before of [15, 16, 17, 20, 40, 300]) {
      const lists = [
        [...Array.from({ length: before }, (_, i) => excluded(i)), ...made],
        // Made messages all along: each text and object pushed from its own scope.
        Array.from({ length: before }, (_, i) => ({ ...made[i % made.length], timestamp: i })),
      ]
      for (const list of lists) {
        for (const input of [list, new Proxy(list, {})]) {
          const want = ref.convertToLlm(list)
          const got = ours.convertToLlm(input)
          expect(exactly(got)).toBe(exactly(want))
          compared++
        }
      }
    }
    expect(compared).toBe(24)
  })

  test('generated messages: the same messages either way', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof({ weight: 8, arbitrary: gen.agentMessageArb }, { weight: 1, arbitrary: gen.systemMessageArb }), { maxLength: 30 }), (messages) => {
        expectSame(ours, line, () => messages)
      }),
      { numRuns: RUNS },
    )
  })
})
