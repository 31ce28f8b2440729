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
  // The block must use every export.
  for (const name of Object.keys(api)) expect(match[1]).toContain(name)
  const script = [
    `import * as pc from ${JSON.stringify(pathToFileURL(path.join(root, 'index.mjs')).href)}`,
    `const { ${Object.keys(api).join(', ')} } = pc`,
    match[1],
    "console.log('ok')",
  ].join('\n')
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'prime-readme-')), 'examples.mjs')
  fs.writeFileSync(file, script)
  const run = spawnSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  expect({ status: run.status, stderr: run.stderr, stdout: run.stdout.trim() }).toEqual({ status: 0, stderr: '', stdout: 'ok' })
})
