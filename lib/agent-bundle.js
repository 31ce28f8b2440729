'use strict'
// The chunk of an agent bundle that holds the compaction module inlined
// (a row of lib/agent-swap.js's BUNDLES: the chunk known by its SHA-256),
// made to load this package's entry in the module's place. Each top-level
// declaration of a name the entry exports (`function NAME(`, or `NAME=` in
// a `var` list) is renamed out of the way, and an import of the entry binds
// NAME instead: every use of it in the chunk, and every other chunk's import
// of it, is then this package's, as in the unbundled build, whose files the
// hook's SHIM replaces. The chunk's own pi-ai `completeSimple` is handed to
// lib/host-pi-ai.js, so that a summary request without a streamFn goes
// where the agent's own module sends it.
//
// The row records each declaration's offset in the chunk's text, which its
// hash fixes: patching checks the hash and the name at each offset, and
// reads nothing else. `declarationsIn` finds them (for a new row:
// scripts/bundle-declarations.js; agent-swap.test.js checks the rows): a
// name declared once, never assigned again, and never also declared
// renamed (esbuild gives a second top-level declaration of a name a digit
// suffix, and the one left could then be another module's).

const { createHash } = require('node:crypto')

const PREFIX = '__primeCompactionAgent_'

/** Whether `bytes` (the chunk's file) are the row's. */
function isChunkOf(row, bytes) {
  return createHash('sha256').update(bytes).digest('hex') === row.sha256
}

/**
 * The chunk's text with the row's declarations bound to `entry` (a
 * specifier of this package's entry for the line) and its `completeSimple`
 * handed to `hostPiAi` (a specifier of lib/host-pi-ai.js); undefined where
 * `bytes` are not the row's chunk.
 */
function patchChunk(row, bytes, { entry, hostPiAi }) {
  if (!isChunkOf(row, bytes)) return undefined
  const text = bytes.toString('utf8')
  const declarations = Object.entries(row.declarations).sort((a, b) => a[1] - b[1])
  const parts = []
  let from = 0
  for (const [name, at] of declarations) {
    if (text.slice(at, at + name.length) !== name) return undefined
    parts.push(text.slice(from, at), PREFIX + name)
    from = at + name.length
  }
  parts.push(text.slice(from))
  const names = declarations.map(([name]) => name)
  return (
    `import { ${names.join(', ')} } from ${JSON.stringify(entry)};` +
    `import { useBundledCompleteSimple as ${PREFIX}useBundled } from ${JSON.stringify(hostPiAi)};` +
    parts.join('') +
    `\n;${PREFIX}useBundled(import.meta.url, ${row.completeSimple});\n`
  )
}

const literal = (name) => name.replace(/[$]/g, '\\$')

/**
 * Where `text` declares each of `names` that it declares: `{ declarations:
 * { NAME: offset } }`, or `{ reason }` where one of them cannot be bound.
 * (A scan of the whole text per name: for making and checking rows, not
 * for loading.)
 */
function declarationsIn(text, names) {
  if (text.startsWith('#!')) return { reason: 'it starts with a #! line' }
  const declarations = {}
  for (const name of names) {
    const id = literal(name)
    const functions = [...text.matchAll(new RegExp(`(?<![\\w$.])function ${id}\\(`, 'g'))]
    const assigned = [...text.matchAll(new RegExp(`(?<![\\w$.])${id}=(?![=>])`, 'g'))]
    if (new RegExp(`(?<![\\w$.])${id}(?:[-+*/%&|^<>?]+=|\\+\\+|--)|(?:\\+\\+|--)${id}(?![\\w$])`).test(text)) return { reason: `${name} is assigned again` }
    if (new RegExp(`(?<![\\w$.])(?:function |var |let |const |class |,)${id}\\d+(?:\\(|=)`).test(text)) return { reason: `${name} is also declared renamed` }
    if (functions.length + assigned.length === 0) continue
    if (functions.length + assigned.length > 1) return { reason: `${name} is declared or assigned ${functions.length + assigned.length} times` }
    if (functions.length === 1) {
      declarations[name] = functions[0].index + 'function '.length
    } else {
      const at = assigned[0].index
      // The first name of a `var` list, or a later one.
      if (!text.slice(0, at).endsWith('var ') && text[at - 1] !== ',') return { reason: `${name} is assigned where it is not declared` }
      declarations[name] = at
    }
  }
  if (Object.keys(declarations).length === 0) return { reason: 'it declares none of the names' }
  return { declarations }
}

module.exports = { declarationsIn, isChunkOf, patchChunk }
