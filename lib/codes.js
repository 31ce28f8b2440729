'use strict'
// The numbers the JS passes and the binding exchange (flat-messages.js,
// lib/entry-path.js) have one source: crates/core/src/boundary_codes.rs, which the binding
// exports as `boundaryCodes()`. Each JS file keeps its codes as literals
// (its hot loops read them as constants) and hands them to checkCodes when
// it loads, so a code changed on one side only fails at the first require.

const native = require('../binding.js')

const BOUNDARY = native.boundaryCodes()

/**
 * Throws unless `local` holds exactly the codes of `group` in
 * crates/core/src/boundary_codes.rs, with the same values (a group of
 * codes within it compared the same way); returns `local`.
 */
function checkCodes(group, local) {
  const source = BOUNDARY[group]
  if (source === undefined) throw new Error(`prime-compaction internal error: the binding exports no ${group} codes`)
  compareCodes(group, local, source)
  return local
}

function compareCodes(group, local, source) {
  const names = new Set([...Object.keys(source), ...Object.keys(local)])
  for (const name of names) {
    const [mine, theirs] = [local[name], source[name]]
    if (isGroup(mine) && isGroup(theirs)) compareCodes(`${group}.${name}`, mine, theirs)
    else if (mine !== theirs) {
      throw new Error(
        `prime-compaction internal error: ${group} code ${name} is ${show(mine)} in JS and ${show(theirs)} in the binding (crates/core/src/boundary_codes.rs); rebuild the addon or fix the code`,
      )
    }
  }
}

const isGroup = (v) => typeof v === 'object' && v !== null
const show = (v) => (isGroup(v) ? 'a group' : typeof v === 'string' ? JSON.stringify(v) : String(v))

module.exports = { checkCodes, BOUNDARY }
