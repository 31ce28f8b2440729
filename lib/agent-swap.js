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

/**
 * Bundles known byte for byte: the chunk that holds the compaction module
 * inlined, by its SHA-256. Under the hook that chunk loads with each
 * declaration of a name this package's entry exports bound to the entry
 * instead (lib/agent-bundle.js; `declarations`: each one's offset in the
 * chunk's text, `completeSimple`: the chunk's name for pi-ai's), and the
 * bundled entries run as they are; any other bundle's entries run their
 * unbundled build (UNBUNDLED). `node scripts/bundle-declarations.js
 * <agent folder> <chunk>` writes a row.
 */
const BUNDLES = [
  {
    line: '1.6',
    version: '1.6.0',
    chunk: 'dist/bundle/chunks/chunk-KSDI5FD4.js',
    sha256: '5558c943edf1c00ca788788bc6b041d6a70a50ae7e646be2192ad399f1df7e34',
    completeSimple: 'completeSimple',
    declarations: {
      DEFAULT_COMPACTION_SETTINGS: 1561208,
      BRANCH_SUMMARY_PREFIX: 1490417,
      BRANCH_SUMMARY_SUFFIX: 1490531,
      COMPACTION_SUMMARY_PREFIX: 1490252,
      COMPACTION_SUMMARY_SUFFIX: 1490377,
      prepareCompaction: 1574114,
      collectEntriesForBranchSummary: 1579000,
      prepareBranchEntries: 1580226,
      generateBranchSummary: 1582079,
      compact: 1576532,
      generateSummary: 1570236,
      SUMMARIZATION_SYSTEM_PROMPT: 1560177,
      estimateTokens: 1564063,
      findCutPoint: 1566061,
      findTurnStartIndex: 1565913,
      shouldCompact: 1563632,
      calculateContextTokens: 1561299,
      getLastAssistantUsage: 1561684,
      estimateContextTokens: 1562032,
      createFileOps: 1557772,
      extractFileOpsFromMessage: 1557849,
      computeFileLists: 1558583,
      formatFileOperations: 1558817,
      convertToLlm: 1491468,
      serializeConversation: 1559372,
      bashExecutionToText: 1490575,
      createBranchSummaryMessage: 1490984,
      createCompactionSummaryMessage: 1491130,
      createCustomMessage: 1491296,
      completeSummarization: 1569875,
      estimateProjectedContextTokens: 1562568,
      generateSummaryWithUsage: 1570808,
      getSummarizationFailure: 1569355,
    },
  },
]

// A file of a package: its folder's URL, and the file's path in it.
const PACKAGE_FILE = /^(file:\/\/.*\/)(dist\/(?:core|bundle)\/[^?#]*\.js)$/

const known = (row) => `${row.line}.x`

/**
 * What a resolved module URL becomes with this package swapped in:
 * `{ url }` (this package's entry, or the unbundled build of a bundled
 * entry), `{ bundle }` (a bundled entry that runs as it is, the row of
 * BUNDLES its chunk is), `{ patch, entry }` (that chunk: the row, and the
 * entry its declarations bind to), `{ warning }` where an agent file cannot
 * be swapped (the module it resolved to stays), or undefined where the URL
 * is none of the agent's files this package stands in for.
 * - `packageOf(folderUrl)`: that folder's package.json, parsed, or
 *   undefined where there is none or it cannot be read;
 * - `exists(url)`: whether that file exists;
 * - `entryUrl(entry)`: the URL of this package's file `entry`;
 * - `isChunk(row, url)`: whether the file at `url` is the row's chunk,
 *   byte for byte.
 */
function swapOf(url, { packageOf, exists, entryUrl, isChunk }) {
  const match = PACKAGE_FILE.exec(url)
  if (match === null) return undefined
  const [, folder, file] = match
  const unbundled = Object.hasOwn(UNBUNDLED, file) ? UNBUNDLED[file] : undefined
  const chunkOf = BUNDLES.filter((b) => b.chunk === file)
  if (unbundled === undefined && chunkOf.length === 0 && !LINES.some((row) => row.files.includes(file))) return undefined
  const pkg = packageOf(folder)
  if (pkg === undefined || pkg === null || pkg.name !== AGENT_PACKAGE) return undefined
  const version = String(pkg.version)
  const row = LINES.find((r) => r.versions.test(version))
  if (chunkOf.length > 0) {
    const bundle = chunkOf.find((b) => b.version === version && row?.line === b.line && isChunk(b, url))
    return bundle === undefined ? undefined : { patch: bundle, entry: entryUrl(row.entry) }
  }
  if (row === undefined) {
    const named = pkg.version === undefined ? `${AGENT_PACKAGE} with no version in its package.json` : `${AGENT_PACKAGE} ${version}`
    return {
      warning: `${named} is none of the versions prime-compaction stands in for (${LINES.map(known).join(', ')}): the agent's own compaction module runs`,
    }
  }
  if (unbundled !== undefined) {
    const bundle = BUNDLES.find((b) => b.version === version && b.line === row.line && isChunk(b, folder + b.chunk))
    if (bundle !== undefined) return { bundle }
    const target = folder + unbundled.file
    if (exists(target)) return unbundled.compileCache ? { url: target, compileCache: true } : { url: target }
    return {
      warning: `${AGENT_PACKAGE} ${version}: ${file} holds the compaction module inlined, and ${unbundled.file}, which imports it, is missing: the agent's own compaction module runs`,
    }
  }
  return row.files.includes(file) ? { url: entryUrl(row.entry) } : undefined
}

module.exports = { AGENT_PACKAGE, BUNDLES, LINES, UNBUNDLED, swapOf }
