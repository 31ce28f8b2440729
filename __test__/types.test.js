'use strict'
// Type-checks index.d.ts: on its own (tsconfig.declarations.json) and against
// the reference's declarations (tsconfig.json). Both runs must report nothing.
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const root = path.join(__dirname, '..')
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')

describe.each(['tsconfig.declarations.json', 'tsconfig.json'])('tsc -p __test__/types/%s', (config) => {
  test('type-checks with no diagnostics', () => {
    const run = spawnSync(process.execPath, [tsc, '-p', path.join(__dirname, 'types', config), '--pretty', 'false'], {
      cwd: root,
      encoding: 'utf8',
    })
    // Comparing the output too puts tsc's diagnostics in the failure message.
    expect({ status: run.status, output: `${run.stdout}${run.stderr}`, error: run.error }).toEqual({
      status: 0,
      output: '',
      error: undefined,
    })
  }, 180_000)
})

test('agent-0.78.d.ts declares exactly the values agent-0.78.js and agent-0.78.mjs export', async () => {
  const fs = require('node:fs')
  const declared = [...fs.readFileSync(path.join(root, 'agent-0.78.d.ts'), 'utf8').matchAll(/^export declare (?:function|const) (\w+)/gm)]
    .map((m) => m[1])
    .sort()
  const cjs = Object.keys(require('../agent-0.78')).sort()
  const esm = Object.keys(await import(require('node:url').pathToFileURL(path.join(root, 'agent-0.78.mjs')).href))
    .filter((k) => k !== 'default')
    .sort()
  expect([...new Set(declared)]).toEqual(cjs)
  expect(esm).toEqual(cjs)
})
