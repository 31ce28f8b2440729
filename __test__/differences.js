'use strict'
// Where each agent line's entry departs from that version of the agent's own
// compaction module on purpose, per line: `id` (a test names it), `area`,
// `what` ours does, and `why`. The README's differences section is written
// from this list; every entry has a test that shows it (for the planning
// side: __test__/lines.test.js).

module.exports = {
  '0.78': [
    {
      id: 'parent-cycle',
      area: 'session path',
      what: 'prepareCompaction, prepareCompactionAsync and the file planners throw an Error naming the entry id when parentId links form a cycle',
      why: "0.78.1's buildSessionContext follows the links forever and never returns",
    },
  ],
  '1.6': [
    {
      id: 'parent-cycle',
      area: 'session projection',
      what: 'prepareCompaction, prepareCompactionAsync and the file planners throw an Error naming the entry id when parentId links form a cycle',
      why: "1.6.0's buildSessionPath follows the links forever and never returns",
    },
    {
      id: 'nested-calls-malformed',
      area: 'file operations',
      what: 'a tool result whose nestedCalls.calls is neither an array nor a string, or holds a null record, is a TypeError naming nestedCalls.calls (or the record)',
      why: "1.6.0 throws a TypeError that names no field for a value it cannot iterate, and iterates any iterable (a Set of records), where ours reads arrays only",
    },
    {
      id: 'system-message-fields',
      area: 'token estimates',
      what: 'a system message whose sections is not an object, whose section values are neither strings nor null, or whose tools have no string name, is a TypeError naming the field',
      why: '1.6.0 counts such values as NaN, by their string indices, or under an undefined name',
    },
    {
      id: 'inherited-message-fields',
      area: 'session projection',
      what: "the planner reads a message it copies for a context edit or a null content with the fields the message inherits from its prototype (a class instance's role, usage); the copy handed back is 1.6.0's, an object spread of its own fields",
      why: '1.6.0 plans with its copy, which has lost those fields; the messages the agent stores are plain objects, on which both agree',
    },
  ],
}
