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
 * crates/core/src/boundary_codes.rs, with the same values; returns `local`.
 */
function checkCodes(group, local) {
  const source = BOUNDARY[group]
  if (source === undefined) throw new Error(`prime-compaction internal error: the binding exports no ${group} codes`)
  const names = new Set([...Object.keys(source), ...Object.keys(local)])
  for (const name of names) {
    if (source[name] !== local[name]) {
      throw new Error(
        `prime-compaction internal error: ${group} code ${name} is ${local[name]} in JS and ${source[name]} in the binding (crates/core/src/boundary_codes.rs); rebuild the addon or fix the code`,
      )
    }
  }
  return local
}

module.exports = { checkCodes, BOUNDARY }
