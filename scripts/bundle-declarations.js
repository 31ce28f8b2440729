'use strict'
// `node scripts/bundle-declarations.js <agent folder> <chunk>`: the row of
// lib/agent-swap.js's BUNDLES for that installed agent's bundle chunk (the
// one holding its compaction module inlined): its hash, its name for pi-ai's
// completeSimple, and the offset of the declaration of each name this
// package's entry for the agent's line exports that the chunk declares
// (lib/agent-bundle.js binds those to the entry). Prints it, or why the
// chunk cannot be patched (exit 1). agent-swap.test.js checks each row with
// `declarationsIn`.
//
// The chunk is parsed (Babel) and its scopes read: each name must be a
// binding of the module's own scope, a function or `var` declared once and
// never assigned again (an import's binding cannot be), and only the
// declaration's identifier is renamed. `completeSimple` must be one of the
// chunk's imports.

const fs = require('node:fs')
const path = require('node:path')
const { parse } = require('@babel/parser')
const traverse = require('@babel/traverse').default
const { chunkHash } = require('../lib/agent-bundle.js')

/**
 * Where the module `text` declares each of `names` it declares: `{
 * declarations: { NAME: offset } }`, or `{ reason }` where one cannot be
 * bound; `completeSimple` (the name to hand over) must be an import of it.
 */
function declarationsIn(text, names, completeSimple = 'completeSimple') {
  let scope
  traverse(parse(text, { sourceType: 'module' }), {
    Program(p) {
      scope = p.scope
      p.stop()
    },
  })
  const declarations = {}
  for (const name of names) {
    const binding = scope.getOwnBinding(name)
    if (binding === undefined) continue
    if (binding.kind !== 'hoisted' && binding.kind !== 'var') return { reason: `${name} is a ${binding.kind} binding` }
    if (binding.constantViolations.length > 0) return { reason: `${name} is assigned again` }
    if (binding.kind === 'var' && !binding.path.isVariableDeclarator()) return { reason: `${name} is not declared by a declarator` }
    declarations[name] = binding.identifier.start
  }
  const hand = scope.getOwnBinding(completeSimple)
  if (hand === undefined || hand.kind !== 'module') return { reason: `${completeSimple} is none of its imports` }
  if (Object.keys(declarations).length === 0) return { reason: 'it declares none of the names' }
  return { declarations }
}

if (require.main === module) {
  const { LINES } = require('../lib/agent-swap.js')
  const [folder, chunk] = process.argv.slice(2)
  if (!folder || !chunk) {
    console.error('usage: node scripts/bundle-declarations.js <agent folder> <chunk, e.g. dist/bundle/chunks/chunk-X.js>')
    process.exit(2)
  }
  const { version } = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'))
  const row = LINES.find((r) => r.versions.test(version))
  if (row === undefined) throw new Error(`no line for version ${version}`)
  const bytes = fs.readFileSync(path.join(folder, chunk))
  const names = Object.keys(require(path.join('..', row.entry.replace(/\.mjs$/, '.js'))))
  const found = declarationsIn(bytes.toString('utf8'), names)
  if (found.reason !== undefined) {
    console.error(`${chunk}: ${found.reason}`)
    process.exit(1)
  }
  console.log(JSON.stringify({ line: row.line, version, chunk, sha256: chunkHash(bytes), completeSimple: 'completeSimple', declarations: found.declarations }, null, 2))
}

module.exports = { declarationsIn }
