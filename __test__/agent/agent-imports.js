'use strict'
// Which files of an agent line's compaction module the rest of the agent
// imports, read from the agent's compiled JavaScript: each of them must be
// swapped, or the agent would run its own code beside ours.

const fs = require('node:fs')
const path = require('node:path')

const SPECIFIER = /(?:\bimport|\bexport)\s*(?:[^'"`;]*?\sfrom\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g

function jsFiles(dir) {
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((name) => name.endsWith('.js'))
    .map((name) => path.join(dir, name))
}

/**
 * `{ file, imports }` for every import by a file outside `moduleDir` of a
 * file inside it (paths relative to the package folder).
 */
function importsIntoModule(packageDir, moduleDir) {
  const moduleRoot = path.join(packageDir, moduleDir) + path.sep
  const out = []
  for (const file of jsFiles(path.join(packageDir, 'dist'))) {
    if (file.startsWith(moduleRoot)) continue
    const source = fs.readFileSync(file, 'utf8')
    for (const m of source.matchAll(SPECIFIER)) {
      const specifier = m[1] || m[2]
      if (!specifier.startsWith('.')) continue
      const target = path.resolve(path.dirname(file), specifier)
      if (target.startsWith(moduleRoot)) out.push({ file: path.relative(packageDir, file), imports: path.relative(packageDir, target) })
    }
  }
  return out
}

module.exports = { importsIntoModule }
