'use strict'
// `node scripts/bundle-declarations.js <agent folder> <chunk>`: the row of
// lib/agent-swap.js's BUNDLES for that installed agent's bundle chunk (the
// one holding its compaction module inlined): its hash, and the offset of
// each declaration of a name this package's entry for the agent's line
// exports (lib/agent-bundle.js). Prints it, or why the chunk cannot be
// patched (exit 1).

const fs = require('node:fs')
const path = require('node:path')
const { createHash } = require('node:crypto')
const { declarationsIn } = require('../lib/agent-bundle.js')
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
const sha256 = createHash('sha256').update(bytes).digest('hex')
console.log(JSON.stringify({ line: row.line, version, chunk, sha256, completeSimple: 'completeSimple', declarations: found.declarations }, null, 2))
