'use strict'
// The release, end to end on this machine: `npm run pack:release` builds the
// host's binary and packs the main and the platform package; both are
// published to a local registry (verdaccio on 127.0.0.1, proxying nothing)
// by the script of release.yml's publish step;
// then in empty projects, with no Rust on PATH and a HOME of their own (cold
// caches), npm, pnpm, bun and yarn 1 install `prime-compaction`, and each
// install is required, imported, run as a command and registered as the
// agent swap on a stand-in agent (on bun, with Bun too). Each install must take
// under 10 s, compile nothing, and leave our packages under 15 MB. yarn 1
// resolves every optional dependency, whatever its platform: before it runs,
// the other platforms' packages are published too, as their manifests alone
// (the release workflow publishes them with their binaries); yarn 4
// installs then too, with Plug'n'Play (the stand-in agent zipped in its cache).

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startRegistry, request } = require('./helpers/local-registry')
const { BUN, SKIP_BUN, bunBinary } = require('./helpers/bun.js')
const { platformSuffix } = require('../platform.js')
const { targets } = require('../scripts/pack-release.js')

const ROOT = path.join(__dirname, '..')
const pkg = require('../package.json')
const EXAMPLE = path.join(ROOT, 'examples', 'session.jsonl')
const HOST_PACKAGE = `${pkg.name}-${platformSuffix()}`
const INSTALL_LIMIT_MS = 10_000
const SIZE_LIMIT_BYTES = 15 * 1024 * 1024

jest.setTimeout(180_000)

/** npm's own CLI when npm runs the tests (a path to run with node), else `npm` from PATH. */
const NPM = process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ['npm']

function run(argv, options) {
  const started = Date.now()
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 120_000, ...options })
  const ms = Date.now() - started
  if (r.error || r.status !== 0) {
    throw new Error(`${argv.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`}):\n${r.stdout}\n${r.stderr}`)
  }
  return { stdout: r.stdout, ms }
}

/**
 * The script of release.yml's publish step, as a file: it publishes the
 * tarballs in `dist/` under its working directory, each version npm does
 * not have yet, the platform packages first.
 */
function workflowPublishScript(file) {
  const lines = fs.readFileSync(path.join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8').split('\n')
  const step = lines.indexOf('      - name: Publish the platform packages, then the main package')
  const start = lines.indexOf('        run: |', step) + 1
  if (step < 0 || start === 0) throw new Error("release.yml: no publish step with a 'run: |' script")
  let end = start
  while (end < lines.length && (lines[end] === '' || lines[end].startsWith(' '.repeat(10)))) end++
  fs.writeFileSync(file, lines.slice(start, end).map((l) => l.slice(10)).join('\n'))
  return file
}

/** PATH without any directory that holds cargo or rustc, behind a directory whose cargo and rustc only record that they were called. */
function pathWithoutRust(trapDir, trapLog) {
  fs.mkdirSync(trapDir, { recursive: true })
  for (const tool of ['cargo', 'rustc']) {
    fs.writeFileSync(path.join(trapDir, tool), `#!/bin/sh\necho "${tool} $*" >> "${trapLog}"\nexit 127\n`, { mode: 0o755 })
  }
  const holdsRust = (dir) => ['cargo', 'rustc', 'cargo.exe', 'rustc.exe'].some((t) => fs.existsSync(path.join(dir, t)))
  return [trapDir, ...(process.env.PATH || '').split(path.delimiter).filter((d) => d && !holdsRust(d))].join(path.delimiter)
}

function treeBytes(dir) {
  let total = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) total += treeBytes(p)
    else if (entry.isFile()) total += fs.statSync(p).size
  }
  return total
}

function directoriesNamed(dir, name, found = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const p = path.join(dir, entry.name)
    if (entry.name === name) found.push(p)
    directoriesNamed(p, name, found)
  }
  return found
}

const CONSUMER_CJS = `'use strict'
const pc = require('prime-compaction')
const natives = Object.keys(require.cache).filter((f) => f.endsWith('.node'))
require('./exercise-exports.cjs')(pc, process.argv[2]).then(
  (names) => console.log(JSON.stringify({ names, natives })),
  (err) => { console.error(err); process.exit(1) },
)
`
const CONSUMER_ESM = `import * as pc from 'prime-compaction'
import api, { compact } from 'prime-compaction'
import exercise from './exercise-exports.cjs'
if (compact !== api.compact) throw new Error('the named and the default export differ')
console.log(JSON.stringify({ names: await exercise(pc, process.argv[2]) }))
`

describe('release: pack, publish to a local registry, install with npm, pnpm, bun and yarn 1 and 4', () => {
  let tmp
  let registry
  let tarballs
  let env
  let trapLog
  let publish
  let workflowPublish
  let firstPublish
  const measured = {}

  /** The other targets' platform packages, their manifests without a binary, published (for yarn 1). */
  async function publishForeignManifests() {
    const foreign = (await targets()).filter((suffix) => suffix !== platformSuffix())
    const dest = path.join(tmp, 'foreign')
    fs.mkdirSync(dest)
    for (const suffix of foreign) {
      const staging = path.join(dest, suffix)
      fs.cpSync(path.join(ROOT, 'npm', suffix), staging, { recursive: true })
      const packed = run([...NPM, 'pack', '--pack-destination', dest, '--ignore-scripts'], { cwd: staging, env: cleanEnv({ HOME: path.join(tmp, 'publisher') }) })
      publish(path.join(dest, packed.stdout.trim().split('\n').pop()))
    }
    return foreign
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-release-'))
    // (in dist/, where the workflow packs them)
    const packDir = path.join(tmp, 'dist')
    const out = run([...NPM, 'run', '--silent', 'pack:release'], { cwd: ROOT, env: { ...process.env, PACK_DIR: packDir } })
    tarballs = out.stdout.trim().split('\n').filter((l) => l.endsWith('.tgz'))
    measured.packMs = out.ms

    fs.mkdirSync(path.join(tmp, 'registry'))
    registry = await startRegistry(path.join(tmp, 'registry'))
    const host = new URL(registry.url).host
    const publishrc = path.join(tmp, 'publish.npmrc')
    fs.writeFileSync(publishrc, `registry=${registry.url}\n//${host}/:_authToken=${registry.token}\n`)
    publish = (tarball) => run([...NPM, 'publish', tarball, '--userconfig', publishrc, '--registry', registry.url, '--ignore-scripts'], { cwd: tmp, env: cleanEnv({ HOME: path.join(tmp, 'publisher') }) })
    // Published as the release workflow publishes them: its step's own
    // script, with npm and node on PATH, in bash as GitHub runs a step.
    const tools = path.join(tmp, 'publish-tools')
    fs.mkdirSync(tools)
    // (npm's own CLI where npm runs the tests, else the npm on PATH)
    if (NPM.length > 1) fs.writeFileSync(path.join(tools, 'npm'), `#!/bin/sh\nexec ${NPM.map((a) => JSON.stringify(a)).join(' ')} "$@"\n`, { mode: 0o755 })
    fs.symlinkSync(process.execPath, path.join(tools, 'node'))
    const script = workflowPublishScript(path.join(tmp, 'publish.sh'))
    const publishEnv = cleanEnv({ HOME: path.join(tmp, 'publisher'), PATH: `${tools}${path.delimiter}${process.env.PATH}`, npm_config_userconfig: publishrc, npm_config_registry: registry.url })
    workflowPublish = () => run(['bash', '--noprofile', '--norc', '-eo', 'pipefail', script], { cwd: tmp, env: publishEnv })
    firstPublish = workflowPublish().stdout

    // What a user's shell has: no npm_* variables from `npm test`, no Rust.
    const home = path.join(tmp, 'home')
    fs.mkdirSync(home)
    fs.writeFileSync(path.join(home, '.npmrc'), `registry=${registry.url}\n`)
    trapLog = path.join(tmp, 'rust-calls.log')
    env = cleanEnv({ HOME: home, USERPROFILE: home, PATH: pathWithoutRust(path.join(tmp, 'rust-trap'), trapLog), npm_config_update_notifier: 'false' })
  })

  afterAll(async () => {
    if (registry) await registry.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
    process.stdout.write(`release: ${JSON.stringify(measured)}\n`)
  })

  /** process.env without npm's, pnpm's, Rust's and XDG variables, plus `extra`. */
  function cleanEnv(extra) {
    const out = {}
    for (const [k, v] of Object.entries(process.env)) {
      if (!/^(npm_|pnpm_|PNPM_|BUN_|CARGO|RUSTUP|RUSTC|XDG_)/i.test(k)) out[k] = v
    }
    return { ...out, ...extra }
  }

  test('pack:release writes the main and the host platform tarball', () => {
    expect(tarballs.map((t) => path.basename(t)).sort()).toEqual([`${HOST_PACKAGE}-${pkg.version}.tgz`, `${pkg.name}-${pkg.version}.tgz`].sort())
  })

  test("release.yml's publish step published both; run again, it publishes nothing and succeeds", () => {
    expect(firstPublish).not.toMatch(/published already/)
    const again = workflowPublish().stdout
    expect(again.trim().split('\n')).toEqual([`${HOST_PACKAGE}@${pkg.version}: published already`, `${pkg.name}@${pkg.version}: published already`])
  })

  test('the installs run with no Rust: cargo and rustc on their PATH are traps', () => {
    const r = spawnSync('sh', ['-c', 'command -v cargo; command -v rustc'], { encoding: 'utf8', env })
    expect(r.stdout.trim().split('\n')).toEqual([path.join(tmp, 'rust-trap', 'cargo'), path.join(tmp, 'rust-trap', 'rustc')])
  })

  test('the registry serves what was published and proxies nothing', async () => {
    const main = await request(`${registry.url}${pkg.name}`)
    expect(main.status).toBe(200)
    const manifest = main.body.versions[pkg.version]
    expect(manifest.optionalDependencies).toEqual(Object.fromEntries((await targets()).map((s) => [`${pkg.name}-${s}`, pkg.version])))
    expect(manifest.scripts || {}).toEqual({})
    expect(manifest.hasInstallScript).toBeFalsy()
    expect((await request(`${registry.url}${HOST_PACKAGE}`)).status).toBe(200)
    const unpublished = Object.keys(manifest.optionalDependencies).find((n) => n !== HOST_PACKAGE)
    expect((await request(`${registry.url}${unpublished}`)).status).toBe(404)
    expect((await request(`${registry.url}jest`)).status).toBe(404)
  })

  const managers = [
    ['npm', () => [...NPM, 'install', pkg.name, '--no-audit', '--no-fund']],
    ['pnpm', () => [process.execPath, require.resolve('pnpm/bin/pnpm.mjs'), 'add', pkg.name, '--registry', registry.url]],
    ['bun', () => [bunBinary(), 'add', pkg.name, '--registry', registry.url]],
  ]

  describe.each(managers)('%s', installs)

  // (after the others, which install from the host's platform package alone)
  test('the other platforms\' packages published as their manifests, for yarn 1', async () => {
    expect(Object.keys(measured)).toEqual(expect.arrayContaining(['npm', 'pnpm']))
    const foreign = await publishForeignManifests()
    expect(foreign.length).toBe((await targets()).length - 1)
    for (const suffix of foreign) expect((await request(`${registry.url}${pkg.name}-${suffix}`)).status).toBe(200)
  })

  describe('yarn 1', () => installs('yarn 1', () => [process.execPath, require.resolve('yarn/bin/yarn.js'), 'add', pkg.name, '--registry', registry.url, '--non-interactive']))

  /** An empty project for `manager`'s install, with the export-exercising script beside it. */
  function newProject(manager) {
    const name = `consumer-${manager.replace(' ', '-')}`
    const project = path.join(tmp, name)
    fs.mkdirSync(project)
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }))
    fs.copyFileSync(path.join(__dirname, 'helpers', 'exercise-exports.cjs'), path.join(project, 'exercise-exports.cjs'))
    return project
  }

  // Yarn 4's Plug'n'Play: no node_modules; packages stay zipped in
  // .yarn/cache but for those it unplugs (ours with the binary), and code
  // runs through its loader (`yarn node`).
  describe('yarn 4, Plug\'n\'Play', () => {
    let project
    const yarn = (args) => run([process.execPath, require.resolve('@yarnpkg/cli-dist/bin/yarn.js'), ...args], { cwd: project, env })
    // (a name in the cache or unplugged, without its version and hashes)
    const packageOf = (file) => file.replace(/-npm-.*$/, '')

    test('installs in under 10 s without compiling: our package and the host\'s platform package, that one unplugged', () => {
      project = newProject('yarn 4')
      const settings = {
        npmRegistryServer: registry.url,
        unsafeHttpWhitelist: [new URL(registry.url).hostname],
        // The registry's versions are minutes old, which yarn holds back by default.
        npmMinimalAgeGate: 0,
        enableGlobalCache: false,
        enableTelemetry: false,
        pnpEnableEsmLoader: true,
      }
      fs.writeFileSync(path.join(project, '.yarnrc.yml'), Object.entries(settings).map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`).join(''))
      const { ms } = yarn(['add', pkg.name])
      const cache = fs.readdirSync(path.join(project, '.yarn', 'cache')).filter((f) => f.endsWith('.zip'))
      const unplugged = fs.readdirSync(path.join(project, '.yarn', 'unplugged'))
      measured['yarn 4'] = { installMs: ms, dotYarnMb: +(treeBytes(path.join(project, '.yarn')) / 1024 / 1024).toFixed(2) }

      expect(ms).toBeLessThan(INSTALL_LIMIT_MS)
      expect(fs.existsSync(trapLog) ? fs.readFileSync(trapLog, 'utf8') : '').toBe('')
      expect(fs.existsSync(path.join(project, 'node_modules'))).toBe(false)
      expect(cache.map(packageOf).sort()).toEqual([pkg.name, HOST_PACKAGE].sort())
      expect(unplugged.map(packageOf)).toEqual([HOST_PACKAGE])
    })

    test('require() and import work through its loader and load the unplugged binary', () => {
      fs.writeFileSync(path.join(project, 'consumer.cjs'), CONSUMER_CJS)
      fs.writeFileSync(path.join(project, 'consumer.mjs'), CONSUMER_ESM)
      const exports = Object.keys(require('..')).sort()
      const cjs = JSON.parse(yarn(['node', 'consumer.cjs', EXAMPLE]).stdout.trim().split('\n').pop())
      expect(cjs.names.sort()).toEqual(exports)
      expect(cjs.natives.map((f) => path.relative(path.join(project, '.yarn', 'unplugged'), f).split(path.sep)[0]).map(packageOf)).toEqual([HOST_PACKAGE])
      const esm = JSON.parse(yarn(['node', 'consumer.mjs', EXAMPLE]).stdout.trim().split('\n').pop())
      expect(esm.names.sort()).toEqual(exports)
    })

    test('the prime-compaction command runs', () => {
      expect(yarn([pkg.name, 'plan', EXAMPLE]).stdout).toMatch(/tokens before: +[\d,]+/)
    })

    test('`yarn node --import prime-compaction/register` swaps the compaction module of an agent kept zipped in the cache (a stand-in agent 1.6.0)', () => {
      const { fakeAgent, SWAPPED_1_6 } = require('./helpers/fake-agent.js')
      const standIn = path.join(project, 'stand-in')
      fs.renameSync(fakeAgent(path.join(project, 'made'), '1.6.0'), standIn)
      fs.rmSync(path.join(project, 'made'), { recursive: true })
      yarn(['add', '@earendil-works/pi-coding-agent@file:./stand-in'])
      expect(fs.readdirSync(path.join(project, '.yarn', 'cache')).filter((f) => f.startsWith('@earendil-works-pi-coding-agent-file-') && f.endsWith('.zip'))).toHaveLength(1)
      fs.rmSync(standIn, { recursive: true })
      fs.writeFileSync(path.join(project, 'agent-entry.mjs'), "await import('@earendil-works/pi-coding-agent/dist/bundle/cli.js')\n")
      const { stdout } = yarn(['node', '--import', 'prime-compaction/register', 'agent-entry.mjs'])
      expect(JSON.parse(stdout.trim().split('\n').pop())).toEqual({ entry: 'unbundled', files: SWAPPED_1_6 })
      // Without the hook, the agent's own.
      expect(JSON.parse(yarn(['node', 'agent-entry.mjs']).stdout.trim().split('\n').pop()).entry).toBe('bundle')
    })
  })

  function installs(manager, command) {
    const testIf = manager === 'bun' && SKIP_BUN ? test.skip : test
    const skipNote = manager === 'bun' && SKIP_BUN ? ` (skipped: ${BUN.reason})` : ''
    let project

    testIf(`installs in under ${INSTALL_LIMIT_MS / 1000} s without compiling, under 15 MB${skipNote}`, () => {
      project = newProject(manager)
      const { ms } = run(command(), { cwd: project, env })

      const modules = path.join(project, 'node_modules')
      const main = fs.realpathSync(path.join(modules, pkg.name))
      const platform = path.dirname(require.resolve(`${HOST_PACKAGE}/package.json`, { paths: [main] }))
      const bytes = treeBytes(main) + treeBytes(platform)
      measured[manager] = { installMs: ms, ourPackagesMb: +(bytes / 1024 / 1024).toFixed(2), ...(manager === 'bun' ? { bun: BUN.version } : {}) }

      expect(ms).toBeLessThan(INSTALL_LIMIT_MS)
      expect(bytes).toBeLessThan(SIZE_LIMIT_BYTES)
      expect(fs.existsSync(trapLog) ? fs.readFileSync(trapLog, 'utf8') : '').toBe('')
      expect(directoriesNamed(modules, 'target')).toEqual([])
      expect(fs.readdirSync(main).filter((f) => f.endsWith('.node'))).toEqual([])
      expect(fs.readdirSync(platform).sort()).toEqual(['LICENSE', 'README.md', 'package.json', `${pkg.name}.${platformSuffix()}.node`])
    })

    testIf(`require() and import work and use the platform package's binary${skipNote}`, () => {
      fs.writeFileSync(path.join(project, 'consumer.cjs'), CONSUMER_CJS)
      fs.writeFileSync(path.join(project, 'consumer.mjs'), CONSUMER_ESM)
      const exports = Object.keys(require('..')).sort()
      const cjs = JSON.parse(run([process.execPath, 'consumer.cjs', EXAMPLE], { cwd: project, env }).stdout.trim().split('\n').pop())
      expect(cjs.names.sort()).toEqual(exports)
      expect(cjs.natives.map((f) => path.basename(path.dirname(f)))).toEqual([HOST_PACKAGE])
      const esm = JSON.parse(run([process.execPath, 'consumer.mjs', EXAMPLE], { cwd: project, env }).stdout.trim().split('\n').pop())
      expect(esm.names.sort()).toEqual(exports)
    })

    testIf(`node --import prime-compaction/register swaps an agent's compaction module (a stand-in agent 1.6.0)${skipNote}`, () => {
      const { fakeAgent, SWAPPED_1_6 } = require('./helpers/fake-agent.js')
      const agent = fakeAgent(project, '1.6.0')
      const { stdout } = run([process.execPath, '--import', 'prime-compaction/register', path.join(agent, 'dist', 'bundle', 'cli.js')], { cwd: project, env })
      expect(JSON.parse(stdout.trim().split('\n').pop())).toEqual({ entry: 'unbundled', files: SWAPPED_1_6 })
    })

    if (manager === 'bun') {
      testIf(`bun --preload prime-compaction/register swaps an agent's compaction module (a stand-in agent 1.6.0)${skipNote}`, () => {
        const { fakeAgent, SWAPPED_1_6 } = require('./helpers/fake-agent.js')
        const agent = path.join(project, 'node_modules', '@earendil-works', 'pi-coding-agent')
        if (!fs.existsSync(agent)) fakeAgent(project, '1.6.0')
        const { stdout } = run([bunBinary(), '--preload', 'prime-compaction/register', path.join(agent, 'dist', 'bundle', 'cli.js')], { cwd: project, env })
        expect(JSON.parse(stdout.trim().split('\n').pop())).toEqual({ entry: 'unbundled', files: SWAPPED_1_6 })
      })
    }

    testIf(`the prime-compaction command runs${skipNote}`, () => {
      const bin = path.join(project, 'node_modules', '.bin', process.platform === 'win32' ? `${pkg.name}.cmd` : pkg.name)
      const { stdout } = run([bin, 'plan', EXAMPLE], { cwd: project, env, shell: process.platform === 'win32' })
      expect(stdout).toMatch(/tokens before: +[\d,]+/)
    })
  }
})
