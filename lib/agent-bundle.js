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
// reads nothing else. scripts/bundle-declarations.js finds them from the
// chunk's parsed scopes (each a function or `var` of the module's own
// scope, never assigned again), and agent-swap.test.js checks each row
// with it.

const { createHash } = require('node:crypto')

const PREFIX = '__primeCompactionAgent_'

/** A chunk's SHA-256, as a row records it. */
function chunkHash(bytes) {
  return createHash('sha256').update(bytes).digest('hex')
}

/** Whether `bytes` (the chunk's file) are the row's. */
function isChunkOf(row, bytes) {
  return chunkHash(bytes) === row.sha256
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

module.exports = { chunkHash, isChunkOf, patchChunk }
