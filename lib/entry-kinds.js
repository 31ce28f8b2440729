'use strict'
// The kinds of prepareCompaction's entries, read ahead in one JS pass:
// for each entry, what `entry.type` (and, for a message entry,
// `entry.message.role`) reads as, one code per entry in a Uint8Array. The
// native planner (src/prepare_compaction.rs) takes an entry's kind from
// here instead of reading it through N-API (two to three property reads
// and string comparisons, each a call of its own, at every entry). The
// codes and the names they stand for are the core's
// (EntryKind::from_code), exported by the binding; nothing is decided
// here. An entry this pass cannot name a kind for (not an object, a
// `type` or `role` that is not a string, a message that is not an object)
// gets NOT_READ, and the native side reads and judges it as before. If a
// read throws (a getter, a revoked Proxy), the pass gives nothing, and
// the native side reads every entry itself and throws there.

const { BOUNDARY } = require('./codes.js')

const { NOT_READ, OTHER_TYPE, OTHER_ROLE, MESSAGE_TYPE } = BOUNDARY.entryKinds
const TYPES = new Map(Object.entries(BOUNDARY.entryKinds.types))
const ROLES = new Map(Object.entries(BOUNDARY.entryKinds.roles))

// Longer arrays are read natively (a kind cache that long is not kept there either).
const MAX_ENTRIES = 2 ** 23

/** The codes for `entries`, or undefined when the native side reads them all. */
function readEntryKinds(entries) {
  if (!Array.isArray(entries) || entries.length > MAX_ENTRIES) return undefined
  const n = entries.length
  const codes = new Uint8Array(n)
  try {
    for (let i = 0; i < n; i++) {
      const entry = entries[i]
      if (typeof entry !== 'object' || entry === null) continue
      const type = entry.type
      if (typeof type !== 'string') continue
      if (type !== MESSAGE_TYPE) {
        codes[i] = TYPES.get(type) ?? OTHER_TYPE
        continue
      }
      const message = entry.message
      if (typeof message !== 'object' || message === null) continue
      const role = message.role
      if (typeof role !== 'string') continue
      codes[i] = ROLES.get(role) ?? OTHER_ROLE
    }
  } catch {
    return undefined
  }
  return codes
}

module.exports = { readEntryKinds, NOT_READ }
