'use strict'
// Packaging: `npm pack` ships the right files; the tarball, installed into
// an empty project (offline, no install script, the locally built binary
// copied in instead of building from source), works from a CommonJS and an
// ESM consumer and as a command; the npm/ per-platform packages and the
// loader (platform.js) agree on names.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')

const ROOT = path.join(__dirname, '..')
const pkg = require('../package.json')
const { platformSuffix, binaryName } = require('../platform.js')
const EXAMPLE = path.join(ROOT, 'examples', 'session.jsonl')

jest.setTimeout(60000)

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } })

describe('npm pack', () => {
  let dir
  let packed
  let project
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-pack-'))
    const out = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], ROOT)
    packed = JSON.parse(out.slice(out.indexOf('[')))[0]
    project = path.join(dir, 'consumer')
    fs.mkdirSync(project)
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
    npm(['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', path.join(dir, packed.filename)], project)
    const installed = path.join(project, 'node_modules', 'prime-compaction')
    const binary = `${binaryName}.${platformSuffix()}.node`
    // A fresh name, then a rename: the binary is never rewritten in place.
    fs.copyFileSync(path.join(ROOT, binary), path.join(installed, `${binary}.tmp`))
    fs.renameSync(path.join(installed, `${binary}.tmp`), path.join(installed, binary))
    fs.copyFileSync(path.join(__dirname, 'helpers', 'exercise-exports.cjs'), path.join(project, 'exercise-exports.cjs'))
  })
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  test('the tarball holds the package files and nothing else', () => {
    const files = packed.files.map((f) => f.path).sort()
    for (const f of ['package.json', 'index.js', 'index.mjs', 'index.d.ts', 'binding.js', 'platform.js', 'flat-messages.js', 'scripts/install.js', 'cli/prime-compaction.js', 'cli/openai.js', 'cli/session-file.js', 'Cargo.toml', 'Cargo.lock', 'build.rs', 'src/lib.rs']) {
      expect(files).toContain(f)
    }
    expect(files.filter((f) => f.startsWith('src/')).length).toBeGreaterThan(10)
    const stray = files.filter((f) => /^(node_modules|target|__test__|benches|npm|examples|docs)\//.test(f) || f.endsWith('.node') || f.endsWith('.tgz'))
    expect(stray).toEqual([])
    expect(pkg.bin['prime-compaction']).toBe('cli/prime-compaction.js')
  })

  test('every export works from a CommonJS consumer', () => {
    fs.writeFileSync(path.join(project, 'consumer.cjs'), `'use strict'
const pc = require('prime-compaction')
require('./exercise-exports.cjs')(pc, process.argv[2]).then((names) => console.log(JSON.stringify(names)), (err) => { console.error(err); process.exit(1) })
`)
    const out = execFileSync(process.execPath, ['consumer.cjs', EXAMPLE], { cwd: project, encoding: 'utf8' })
    expect(JSON.parse(out.trim().split('\n').pop()).sort()).toEqual(Object.keys(require('..')).sort())
  })

  test('every export works from an ESM consumer, named and default', () => {
    fs.writeFileSync(path.join(project, 'consumer.mjs'), `import * as pc from 'prime-compaction'
import api from 'prime-compaction'
import { compact, prepareCompaction } from 'prime-compaction'
import exercise from './exercise-exports.cjs'
if (compact !== api.compact || prepareCompaction !== api.prepareCompaction) throw new Error('named and default exports differ')
const named = Object.keys(pc).filter((k) => k !== 'default').sort()
if (JSON.stringify(named) !== JSON.stringify(Object.keys(api).sort())) throw new Error('named exports: ' + named.join(','))
console.log(JSON.stringify(await exercise(pc, process.argv[2])))
`)
    const out = execFileSync(process.execPath, ['consumer.mjs', EXAMPLE], { cwd: project, encoding: 'utf8' })
    expect(JSON.parse(out.trim().split('\n').pop()).sort()).toEqual(Object.keys(require('..')).sort())
  })

  test('the installed command runs', () => {
    const out = execFileSync(path.join(project, 'node_modules', '.bin', 'prime-compaction'), ['plan', EXAMPLE], { encoding: 'utf8' })
    expect(out).toMatch(/tokens before: +[\d,]+/)
  })
})

/** What napi-rs names a target triple: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ... */
function napiTarget(triple) {
  const [archPart] = triple.split('-')
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }[archPart]
  const platform = triple.includes('linux') ? 'linux' : triple.includes('darwin') ? 'darwin' : triple.includes('windows') ? 'win32' : undefined
  const abi = triple.endsWith('-musl') ? 'musl' : triple.endsWith('-gnu') ? 'gnu' : triple.endsWith('-msvc') ? 'msvc' : undefined
  return { platform, arch, abi, suffix: [platform, arch, abi].filter(Boolean).join('-') }
}

/** platform.js's answer on another machine: its source run with a stand-in `process`. */
function loaderSuffix({ platform, arch, abi }) {
  const source = fs.readFileSync(path.join(ROOT, 'platform.js'), 'utf8')
  const module = { exports: {} }
  const fakeProcess = {
    platform,
    arch,
    report: { getReport: () => ({ header: abi === 'gnu' ? { glibcVersionRuntime: '2.35' } : {} }) },
  }
  vm.runInNewContext(source, { module, exports: module.exports, require, process: fakeProcess })
  return module.exports.platformSuffix()
}

describe('npm/ per-platform packages', () => {
  test.each(pkg.napi.targets)('%s: package, binary name and loader agree', (triple) => {
    const target = napiTarget(triple)
    expect(loaderSuffix(target)).toBe(target.suffix)
    const dir = path.join(ROOT, 'npm', target.suffix)
    const sub = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
    // binding.js loads `./${binaryName}.${suffix}.node`, then the package `${binaryName}-${suffix}`.
    expect(sub.name).toBe(`${binaryName}-${target.suffix}`)
    expect(sub.main).toBe(`${binaryName}.${target.suffix}.node`)
    expect(sub.files).toEqual([sub.main])
    expect(sub.version).toBe(pkg.version)
    expect(sub.os).toEqual([target.platform])
    expect(sub.cpu).toEqual([target.arch])
    if (target.platform === 'linux') expect(sub.libc).toEqual([target.abi === 'musl' ? 'musl' : 'glibc'])
    else expect(sub.libc).toBeUndefined()
  })

  test('no npm/ package without a target', () => {
    const dirs = fs.readdirSync(path.join(ROOT, 'npm')).filter((d) => fs.statSync(path.join(ROOT, 'npm', d)).isDirectory()).sort()
    expect(dirs).toEqual(pkg.napi.targets.map((t) => napiTarget(t).suffix).sort())
  })

  test('binding.js asks for the names the packages use', () => {
    const source = fs.readFileSync(path.join(ROOT, 'binding.js'), 'utf8')
    expect(source).toContain('`./${binaryName}.${suffix}.node`')
    expect(source).toContain('`${binaryName}-${suffix}`')
  })
})
