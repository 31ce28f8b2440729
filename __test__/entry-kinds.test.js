'use strict'
// prepareCompaction reads its entries' kinds ahead in JS (lib/entry-kinds.js)
// and the native planner takes them from there. The plan, the error and
// its message must be those of the binding reading every entry itself, on
// both lines, for generated sessions and for entries whose type, message
// or role is odd, read through getters (throwing ones too), Proxies, frozen
// or sparse arrays.

const path = require('node:path')
const fc = require('fast-check')
const gen = require('./helpers/generator.js')
const { platformSuffix, binaryName } = require('../platform.js')
const { readEntryKinds } = require('../lib/entry-kinds.js')
const { AGENT_LINES } = require('../lib/api.js')
const { BOUNDARY } = require('../lib/codes.js')

const binding = require(path.join(__dirname, '..', `${binaryName}.${platformSuffix()}.node`))

const RUNS = Number(process.env.ENTRY_KINDS_RUNS) || 200
const SETTINGS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 200 }

jest.setTimeout(120_000)

/** The plan (or the error) of the binding, with the kinds read ahead or not. */
function outcome(entries, settings, line, kinds) {
  try {
    return { plan: binding.prepareCompaction(entries, settings, line, kinds) }
  } catch (e) {
    return { error: e?.constructor?.name, message: e?.message }
  }
}

function sameBothWays(entries, settings, line) {
  const alone = outcome(entries, settings, line, undefined)
  const ahead = outcome(entries, settings, line, readEntryKinds(entries))
  expect(ahead).toEqual(alone)
  return alone
}

/** Values an entry's type, message or role may oddly hold. */
const oddArb = fc.oneof(
  fc.constantFrom(undefined, null, 0, 1, true, '', 'message', 'compaction', 'branch_summary', 'custom_message', 'context_edit', 'label', 'user', 'assistant', 'toolResult', 'system', 'narrator', '\ud800', 'message\u0000'),
  fc.constantFrom('object', 'array', 'function', 'symbol', 'getter', 'throwing getter', 'proxy', 'frozen'),
)

function oddValue(kind, inner) {
  switch (kind) {
    case 'object':
      return { role: 'user', content: 'x' }
    case 'array':
      return []
    case 'function':
      return () => 'user'
    case 'symbol':
      return Symbol('user')
    default:
      return kind === 'getter' || kind === 'throwing getter' || kind === 'proxy' || kind === 'frozen' ? inner : kind
  }
}

/** Entry `e` with `field` (type, message, or message.role) set to `odd`, in the way `odd` names. */
function withOdd(e, field, odd) {
  const copy = { ...e }
  const target = field === 'role' ? (copy.message = { ...(copy.message ?? {}) }) : copy
  const key = field === 'role' ? 'role' : field
  const plain = field === 'role' ? 'assistant' : field === 'type' ? 'message' : { role: 'user', content: 'hi' }
  if (odd === 'getter') Object.defineProperty(target, key, { enumerable: true, get: () => plain })
  else if (odd === 'throwing getter')
    Object.defineProperty(target, key, {
      enumerable: true,
      get() {
        throw new Error(`${key} getter failed`)
      },
    })
  else target[key] = oddValue(odd, plain)
  if (odd === 'frozen') Object.freeze(target)
  return odd === 'proxy' ? new Proxy(copy, {}) : copy
}

describe.each(AGENT_LINES.map((name) => [name, binding.agentLineIndex(name)]))('the %s line', (name, line) => {
  test('generated sessions: the same plan with the kinds read ahead', () => {
    fc.assert(
      fc.property(gen.pathEntriesArb({ line: name }), gen.compactionSettingsArb, (entries, settings) => {
        sameBothWays(entries, settings, line)
      }),
      { numRuns: RUNS, seed: 20261201 },
    )
  })

  test('an odd type, message or role anywhere: the same plan or the same error', () => {
    fc.assert(
      fc.property(gen.pathEntriesArb({ line: name, maxEntries: 20 }), fc.nat(), fc.constantFrom('type', 'message', 'role'), oddArb, (entries, at, field, odd) => {
        if (entries.length === 0) return
        const i = at % entries.length
        const bad = entries.slice()
        bad[i] = withOdd(entries[i], field, odd)
        sameBothWays(bad, SETTINGS, line)
      }),
      { numRuns: RUNS, seed: 20261202 },
    )
  })

  test('holes, non-object entries, a Proxy around the array, a frozen array', () => {
    const entries = gen.buildLargeSession(40, 7)
    const sparse = entries.slice()
    delete sparse[5]
    for (const input of [sparse, [...entries.slice(0, 3), 42, ...entries.slice(3)], [...entries, null], new Proxy(entries, {}), Object.freeze(entries.slice())]) {
      sameBothWays(input, SETTINGS, line)
    }
  })

  test('a throwing read gives no kinds, and the native error is the one thrown', () => {
    const entries = gen.buildLargeSession(20, 3)
    const bad = entries.slice()
    bad[7] = withOdd(entries[7], 'type', 'throwing getter')
    expect(readEntryKinds(bad)).toBeUndefined()
    const alone = sameBothWays(bad, SETTINGS, line)
    expect(alone.message).toMatch(/type getter failed/)
  })
})

test('the codes are the core’s: every type and role name, and the others', () => {
  const { NOT_READ, OTHER_TYPE, OTHER_ROLE, MESSAGE_TYPE, types, roles } = BOUNDARY.entryKinds
  expect(MESSAGE_TYPE).toBe('message')
  expect(Object.keys(types)).toEqual(['compaction', 'branch_summary', 'custom_message', 'context_edit'])
  expect(Object.keys(roles)).toEqual(['user', 'assistant', 'toolResult', 'bashExecution', 'custom', 'branchSummary', 'compactionSummary', 'system'])
  const entries = [
    ...Object.keys(types).map((type) => ({ type })),
    { type: 'label' },
    ...Object.keys(roles).map((role) => ({ type: 'message', message: { role } })),
    { type: 'message', message: { role: 'narrator' } },
    { type: 'message', message: 'user' },
    { type: 7 },
    null,
  ]
  expect(Array.from(readEntryKinds(entries))).toEqual([...Object.values(types), OTHER_TYPE, ...Object.values(roles), OTHER_ROLE, NOT_READ, NOT_READ, NOT_READ])
  expect(readEntryKinds('not an array')).toBeUndefined()
})
