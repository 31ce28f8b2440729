'use strict'
// The README's "every export" block must run as written against the package.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')

const root = path.join(__dirname, '..')

test("the README's one-line example of every export runs", () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  const match = readme.match(/<!-- every-export:start -->\n```js\n([\s\S]*?)```\n<!-- every-export:end -->/)
  expect(match).not.toBeNull()
  // The newest line has every export of the older ones.
  const api = require('../index.js')
  // The block must use every export, each as a name of its own (not only
  // inside a longer one: prepareCompaction inside prepareCompactionAsync).
  const unused = Object.keys(api).filter((name) => !new RegExp(`(?<![\\w$])${name}(?![\\w$])`).test(match[1]))
  expect(unused).toEqual([])
  const script = [
    `import * as pc from ${JSON.stringify(pathToFileURL(path.join(root, 'index.mjs')).href)}`,
    `const { ${Object.keys(api).join(', ')} } = pc`,
    match[1],
    "console.log('ok')",
  ].join('\n')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-readme-'))
  const file = path.join(dir, 'examples.mjs')
  let run
  try {
    fs.writeFileSync(file, script)
    run = spawnSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  expect({ status: run.status, stderr: run.stderr, stdout: run.stdout.trim() }).toEqual({ status: 0, stderr: '', stdout: 'ok' })
})

/** The rows of the Markdown table between `<!-- name:start -->` and `<!-- name:end -->`, as cells. */
function tableRows(readme, name) {
  const match = readme.match(new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`))
  expect(match).not.toBeNull()
  return match[1]
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2) // the header and its delimiter row
    .map((line) => line.slice(1, -1).split(' | ').map((cell) => cell.trim()))
}

/** `{ key: [lines] }` from rows whose first cell is `` `key` `` and second the lines, comma-separated. */
function linesByKey(rows) {
  const byKey = {}
  for (const [key, lines] of rows) byKey[key.replace(/^`|`$/g, '')] = lines.split(',').map((l) => l.trim())
  return byKey
}

describe("the README's differences section", () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  // The lines' lists ({ id, area, what, why } each); SUMMARY_AREAS is not one.
  const byLine = Object.fromEntries(Object.entries(require('./differences.js')).filter(([key]) => key !== 'SUMMARY_AREAS'))
  const agentByLine = require('./agent/differences.js')

  test('lists every deliberate difference of every agent line, under that line, and nothing else', () => {
    const expected = {}
    for (const [line, entries] of Object.entries(byLine)) for (const { id } of entries) (expected[id] ??= []).push(line)
    expect(Object.keys(expected).length).toBeGreaterThan(0)
    const listed = linesByKey(tableRows(readme, 'differences'))
    for (const lines of Object.values(listed)) lines.sort()
    for (const lines of Object.values(expected)) lines.sort()
    expect(listed).toEqual(expected)
  })

  test('lists every difference the real-agent suite allows, per line, and nothing else', () => {
    const expected = {}
    for (const [line, entries] of Object.entries(agentByLine)) for (const { where } of entries) (expected[where] ??= []).push(line)
    expect(Object.keys(expected).length).toBeGreaterThan(0)
    const listed = linesByKey(tableRows(readme, 'agent-differences'))
    for (const lines of Object.values(listed)) lines.sort()
    for (const lines of Object.values(expected)) lines.sort()
    expect(listed).toEqual(expected)
  })
})

test('the README is a user document: at most 300 lines, no machine-specific paths', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  expect(readme.split('\n').length).toBeLessThanOrEqual(301) // 300 lines and the final newline
  expect(readme.match(/(^|[\s`'"(])\/(work|home|tmp|Users|root)\//gm)).toBeNull()
})

test("the README's example TypeError is the one a missing role gets", () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  const quoted = readme.match(/gets a `TypeError` naming the place \(`([^`]+)`\)/)
  expect(quoted).not.toBeNull()
  const { prepareCompaction, DEFAULT_COMPACTION_SETTINGS } = require('../index.js')
  const entries = [0, 1, 2, 3].map((i) => ({
    type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2026-01-01T00:00:00.000Z', message: { role: 'user', content: 'x', timestamp: i },
  }))
  delete entries[3].message.role
  let thrown
  try {
    prepareCompaction(entries, DEFAULT_COMPACTION_SETTINGS)
  } catch (err) {
    thrown = err
  }
  // (by name: the binding's TypeError is not of Jest's sandbox realm)
  expect({ name: thrown?.name, message: thrown?.message }).toEqual({ name: 'TypeError', message: quoted[1] })
})
