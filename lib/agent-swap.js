'use strict'
// Which of the pi agent's own files this package stands in for, by the
// agent's version: the rows `prime-compaction/register` (its hooks,
// lib/agent-hooks.mjs) reads, and the real-agent suite's lines.

const AGENT_PACKAGE = '@earendil-works/pi-coding-agent'

/**
 * Per agent line: the versions it covers, this package's entry for it, and
 * the agent's files that load that entry instead (every file of its
 * compaction module that the rest of the agent imports, and messages.js;
 * the real-agent suite checks the list).
 */
const LINES = [
  {
    line: '0.78',
    versions: /^0\.78\.\d/,
    entry: 'agent-0.78.mjs',
    files: ['dist/core/compaction/index.js', 'dist/core/messages.js'],
  },
  {
    line: '1.6',
    versions: /^1\.6\.\d/,
    entry: 'agent-1.6.mjs',
    // bug-report.js imports compaction.js and utils.js, not index.js.
    files: ['dist/core/compaction/index.js', 'dist/core/compaction/compaction.js', 'dist/core/compaction/utils.js', 'dist/core/messages.js'],
  },
]

/**
 * The agent's bundled entries, which hold its compaction module inlined
 * (no hook reaches it there), each with the unbundled build of the same
 * entry, which the package ships too and which imports the module's files
 * (`file`); `compileCache` where the bundled entry turns Node's compile
 * cache on before it loads the rest (`module.enableCompileCache()`), which
 * the unbundled entry does not: the hook then does it in its place.
 */
const UNBUNDLED = {
  'dist/bundle/cli.js': { file: 'dist/cli.js', compileCache: true },
  'dist/bundle/rpc-entry.js': { file: 'dist/rpc-entry.js', compileCache: false },
}

// A file of a package: its folder's URL, and the file's path in it.
const PACKAGE_FILE = /^(file:\/\/.*\/)(dist\/(?:core|bundle)\/[^?#]*\.js)$/

const known = (row) => `${row.line}.x`

/**
 * What a resolved module URL becomes with this package swapped in:
 * `{ url }` (this package's entry, or the unbundled build of a bundled
 * entry), `{ warning }` where an agent file cannot be swapped (the module
 * it resolved to stays), or undefined where the URL is none of the agent's
 * files this package stands in for.
 * - `packageOf(folderUrl)`: that folder's package.json, parsed, or
 *   undefined where there is none or it cannot be read;
 * - `exists(url)`: whether that file exists;
 * - `entryUrl(entry)`: the URL of this package's file `entry`.
 */
function swapOf(url, { packageOf, exists, entryUrl }) {
  const match = PACKAGE_FILE.exec(url)
  if (match === null) return undefined
  const [, folder, file] = match
  const unbundled = Object.hasOwn(UNBUNDLED, file) ? UNBUNDLED[file] : undefined
  if (unbundled === undefined && !LINES.some((row) => row.files.includes(file))) return undefined
  const pkg = packageOf(folder)
  if (pkg === undefined || pkg === null || pkg.name !== AGENT_PACKAGE) return undefined
  const version = String(pkg.version)
  const row = LINES.find((r) => r.versions.test(version))
  if (row === undefined) {
    const named = pkg.version === undefined ? `${AGENT_PACKAGE} with no version in its package.json` : `${AGENT_PACKAGE} ${version}`
    return {
      warning: `${named} is none of the versions prime-compaction stands in for (${LINES.map(known).join(', ')}): the agent's own compaction module runs`,
    }
  }
  if (unbundled !== undefined) {
    const target = folder + unbundled.file
    if (exists(target)) return unbundled.compileCache ? { url: target, compileCache: true } : { url: target }
    return {
      warning: `${AGENT_PACKAGE} ${version}: ${file} holds the compaction module inlined, and ${unbundled.file}, which imports it, is missing: the agent's own compaction module runs`,
    }
  }
  return row.files.includes(file) ? { url: entryUrl(row.entry) } : undefined
}

module.exports = { AGENT_PACKAGE, LINES, UNBUNDLED, swapOf }
