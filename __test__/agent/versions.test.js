'use strict'
// The two versions of the 0.78 line that the real-agent suite runs
// (lines.js). The parity, spec and property suites run against 0.78.1's
// module alone; they hold for 0.78.0 as far as its module is the same, which
// is checked here file by file. Where it is not (generateBranchSummary's
// `streamFn` option, new in 0.78.1), 0.78.0's own tree navigation passes no
// streamFn, so both modules go through the host's completeSimple, and the
// suite's branch-summary flow compares them there.

const fs = require('node:fs')
const path = require('node:path')
const { LINES } = require('./lines.js')

const versions = Object.fromEntries(LINES.filter((l) => l.line === '0.78').map((l) => [l.version, l.packageDir]))
const MODULE_DIR = path.join('dist', 'core', 'compaction')
const BRANCH = path.join(MODULE_DIR, 'branch-summarization.js')
const read = (version, file) => fs.readFileSync(path.join(versions[version], file), 'utf8')

/** The module's JS files and messages.js, which our 0.78 entry stands in for. */
function moduleFiles(version) {
  const files = fs.readdirSync(path.join(versions[version], MODULE_DIR)).filter((f) => f.endsWith('.js'))
  return [...files.map((f) => path.join(MODULE_DIR, f)), path.join('dist', 'core', 'messages.js')].sort()
}

/** The file's text from `export async function generateBranchSummary` on, and before it. */
function splitAtBranchSummary(text) {
  const at = text.indexOf('export async function generateBranchSummary(')
  expect(at).toBeGreaterThan(0)
  return { before: text.slice(0, at), fn: text.slice(at) }
}

/** The string, template and number literals of a piece of code, each once, sorted. */
const literalsOf = (code) => [...new Set(code.match(/"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`|\b\d+\b/g))].sort()

/** The identifiers of a piece of code, comments left out, each once, sorted. */
const namesOf = (code) => [...new Set(code.replace(/\/\/.*$/gm, '').match(/[A-Za-z_$][\w$]*/g))].sort()

/** The options object of the agent session's generateBranchSummary call, as written. */
function branchSummaryCall(version) {
  const text = read(version, path.join('dist', 'core', 'agent-session.js'))
  const calls = text.split('generateBranchSummary(entriesToSummarize, {')
  expect(calls).toHaveLength(2)
  const end = calls[1].indexOf('});')
  expect(end).toBeGreaterThan(0)
  return calls[1].slice(0, end)
}

test('both versions are installed, at the versions lines.js names', () => {
  expect(Object.keys(versions).sort()).toEqual(['0.78.0', '0.78.1'])
  for (const [version, dir] of Object.entries(versions)) {
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version).toBe(version)
  }
})

test("0.78.0's compaction module and messages.js are 0.78.1's, file for file, but for branch-summarization.js", () => {
  const files = moduleFiles('0.78.1')
  expect(moduleFiles('0.78.0')).toEqual(files)
  expect(files.length).toBeGreaterThan(4)
  const differing = files.filter((f) => read('0.78.0', f) !== read('0.78.1', f))
  expect(differing).toEqual([BRANCH])
})

test('in branch-summarization.js only generateBranchSummary differs, the last declaration of both: 0.78.1 reads a streamFn option, 0.78.0 none; literals and other names are the same', () => {
  const old = splitAtBranchSummary(read('0.78.0', BRANCH))
  const now = splitAtBranchSummary(read('0.78.1', BRANCH))
  expect(old.before).toBe(now.before)
  for (const { fn } of [old, now]) {
    // Nothing is declared at the top level after it (its body is indented).
    expect(fn.split('\n').slice(1).filter((line) => /^(export|function|async|const|let|var|class)\b/.test(line))).toEqual([])
    expect(fn).toMatch(/\bcompleteSimple\(/)
  }
  expect(old.fn).not.toMatch(/streamFn/)
  expect(now.fn).toMatch(/\bstreamFn\b/)
  // The same literals (prompt texts, limits such as maxTokens), and the
  // same names but for the streamFn call's: nothing else changed with it.
  expect(literalsOf(now.fn)).toEqual(literalsOf(old.fn))
  expect(literalsOf(old.fn).length).toBeGreaterThan(5)
  const [oldNames, newNames] = [namesOf(old.fn), namesOf(now.fn)]
  expect(oldNames.filter((n) => !newNames.includes(n))).toEqual([])
  expect(newNames.filter((n) => !oldNames.includes(n))).toEqual(['context', 'requestOptions', 'result', 'streamFn'])
})

test("0.78.0's declarations are 0.78.1's but for generateBranchSummary's optional streamFn (types.test.js checks ours against 0.78.1's)", () => {
  const declarations = (version) =>
    moduleFiles(version).map((f) => f.replace(/\.js$/, '.d.ts'))
  const files = declarations('0.78.1')
  expect(declarations('0.78.0')).toEqual(files)
  const differing = files.filter((f) => read('0.78.0', f) !== read('0.78.1', f))
  expect(differing).toEqual([BRANCH.replace(/\.js$/, '.d.ts')])
  // The lines 0.78.1 has and 0.78.0 lacks, and none the other way: the option, and its type's import.
  const [old, now] = ['0.78.0', '0.78.1'].map((v) => read(v, differing[0]).split('\n'))
  const added = now.filter((l) => !old.includes(l))
  expect(old.filter((l) => !now.includes(l))).toHaveLength(1)
  expect(old.filter((l) => !now.includes(l))[0]).toMatch(/^import type \{ AgentMessage \} from "@earendil-works\/pi-agent-core";$/)
  expect(added.filter((l) => !/^\s*\/\*\*.*\*\/$/.test(l))).toEqual([
    'import type { AgentMessage, StreamFn } from "@earendil-works/pi-agent-core";',
    '    streamFn?: StreamFn;',
  ])
})

test("0.78.0's tree navigation passes generateBranchSummary no streamFn; 0.78.1's passes the agent's", () => {
  expect(branchSummaryCall('0.78.0')).not.toMatch(/streamFn/)
  expect(branchSummaryCall('0.78.1')).toMatch(/\bstreamFn: this\.agent\.streamFn\b/)
})
