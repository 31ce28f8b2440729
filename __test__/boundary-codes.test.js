'use strict'
// The codes the JS passes and the binding exchange come from one source
// (crates/core/src/boundary_codes.rs, exported as boundaryCodes()); every JS copy is checked
// against it when its file loads, and a copy that drifts fails there.
const native = require('../binding.js')
const { checkCodes, BOUNDARY } = require('../lib/codes.js')

// Loading these runs their checks.
require('../flat-messages.js')
require('../lib/entry-path.js')
require('../lib/entry-facts.js')
require('../lib/api.js')

test('the binding exports every group, each code a number', () => {
  expect(Object.keys(BOUNDARY).sort()).toEqual(['contextFacts', 'entryFacts', 'entryKinds', 'entryPath', 'fileOps', 'flat', 'plan', 'recipe'])
  // entryKinds (names and codes the JS pass takes as they are) is checked in entry-facts.test.js.
  for (const [group, codes] of Object.entries(BOUNDARY).filter(([g]) => g !== 'entryKinds')) {
    expect([group, Object.keys(codes).length > 0]).toEqual([group, true])
    for (const [name, value] of Object.entries(codes)) expect([group, name, Number.isInteger(value)]).toEqual([group, name, true])
  }
  expect(native.boundaryCodes()).toEqual(BOUNDARY)
})

test('the flat form, the recipe, the entry path, the entry facts, the context facts and the file operations keep the numbers they are documented with', () => {
  expect(BOUNDARY.flat).toEqual({
    NATIVE: 0,
    USER_TEXT: 1,
    USER_BLOCKS: 2,
    ASSISTANT: 3,
    TOOL_RESULT: 4,
    TEXT: 5,
    THINKING: 6,
    TOOL_CALL: 7,
    IMAGE: 8,
    BLANK: 1,
    SPLITS_PAIR_AT_CUT: 2,
    CUT: 2000,
    LONG_JSON: 64,
  })
  expect(BOUNDARY.recipe).toEqual({ OP_HEAD: -1, OP_LABEL_BASE: -2 })
  expect(BOUNDARY.entryPath).toEqual({ THREW: -4, SAME: -3, NOT_READ: -2, NOT_STRING: -1, TARGET_STEPS: 64 })
  expect(BOUNDARY.fileOps).toEqual({ READ: 0, WRITTEN: 1, EDITED: 2 })
  expect(BOUNDARY.contextFacts).toEqual({ STOP_OTHER: 1, STOP_ABORTED: 2, STOP_ERROR: 3, STOP_MASK: 3, USAGE_NULLISH: 4, USAGE_NUMBERS: 8 })
  expect(BOUNDARY.entryFacts).toEqual({
    ID_NOT_READ: 0,
    ID_ABSENT: 1,
    ID_STRING: 2,
    ID_PREVIOUS: 3,
    ID_MASK: 3,
    PARENT_SHIFT: 2,
    CONTENT_NOT_READ: 0,
    CONTENT_PRESENT: 1,
    CONTENT_NULLISH: 2,
    CONTENT_MASK: 3,
    CALLS_READ: 4,
    MEASURE_NOT_READ: 0,
    MEASURE_TEXT: 1,
    MEASURE_BLOCKS: 2,
    BLOCK_OTHER: 0,
    BLOCK_TEXT: 1,
    BLOCK_THINKING: 2,
    BLOCK_TOOL_CALL: 3,
    BLOCK_IMAGE: 4,
  })
})

test('a copy that differs, lacks a code or has one more fails, naming the code', () => {
  const good = { ...BOUNDARY.recipe }
  expect(checkCodes('recipe', good)).toBe(good)
  expect(() => checkCodes('recipe', { ...good, OP_HEAD: -5 })).toThrow(/recipe code OP_HEAD is -5 in JS and -1 in the binding/)
  expect(() => checkCodes('recipe', { OP_HEAD: -1 })).toThrow(/recipe code OP_LABEL_BASE is undefined in JS and -2/)
  expect(() => checkCodes('recipe', { ...good, EXTRA: 3 })).toThrow(/recipe code EXTRA is 3 in JS and undefined/)
  expect(() => checkCodes('nothing', {})).toThrow(/exports no nothing codes/)
  // A group of codes within a group (entryKinds' types and roles) is compared code by code.
  const kinds = structuredClone(BOUNDARY.entryKinds)
  expect(checkCodes('entryKinds', kinds)).toBe(kinds)
  expect(() => checkCodes('entryKinds', { ...kinds, roles: { ...kinds.roles, user: 99 } })).toThrow(/entryKinds\.roles code user is 99 in JS and 16 in the binding/)
  expect(() => checkCodes('entryKinds', { ...kinds, types: { ...kinds.types, label: 9 } })).toThrow(/entryKinds\.types code label is 9 in JS and undefined/)
  expect(() => checkCodes('entryKinds', { ...kinds, types: 2 })).toThrow(/entryKinds code types is 2 in JS and a group in the binding/)
  expect(() => checkCodes('entryKinds', { ...kinds, MESSAGE_TYPE: 'msg' })).toThrow(/entryKinds code MESSAGE_TYPE is "msg" in JS and "message"/)
})
