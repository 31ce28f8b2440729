'use strict'
// Packaging: what the two tarballs of a release hold (scripts/pack-release.js,
// from the binary this checkout built), that the npm/ per-platform packages,
// napi's names for the targets and the loader (platform.js) agree, and that
// the loader's error, where no binary loads, says what to do. Installing the
// tarballs with npm, pnpm and bun is release.test.js.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')

const ROOT = path.join(__dirname, '..')
const pkg = require('../package.json')
const { platformSuffix, binaryName } = require('../platform.js')
const { targets, repositoryOf, releaseManifest, packMain, packPlatform, builtFromTheseSources } = require('../scripts/pack-release.js')

jest.setTimeout(60000)

/**
 * A tarball's entries (paths under `package/`), and the manifest it holds.
 * tar is given the file's name in its folder: GNU tar (Git Bash's, on
 * Windows) reads `C:` in a path as a host to connect to.
 */
function readTarball(file) {
  const options = { cwd: path.dirname(file), encoding: 'utf8' }
  const list = spawnSync('tar', ['-tzf', path.basename(file)], options)
  const manifest = spawnSync('tar', ['-xzOf', path.basename(file), 'package/package.json'], options)
  if (list.status !== 0 || manifest.status !== 0) throw new Error(`tar could not read ${file}: ${list.stderr}${manifest.stderr}`)
  return { files: list.stdout.trim().split('\n').map((f) => f.replace(/^package\//, '')).sort(), manifest: JSON.parse(manifest.stdout) }
}

describe('the release tarballs', () => {
  let dir
  let main
  let platform
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-pack-'))
    main = readTarball(await packMain(dir))
    platform = readTarball(packPlatform(platformSuffix(), dir))
  })
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  // No Rust sources and no build scripts: nothing builds at install time, and
  // a build from source starts from a checkout, where the workspace, the
  // lockfile and napi's CLI are.
  test('the main package holds the JS entry points, the types and the command, and no binary', () => {
    const cli = fs.readdirSync(path.join(ROOT, 'cli')).map((f) => `cli/${f}`)
    const entries = ['index', 'agent-0.78', 'agent-1.6'].flatMap((e) => [`${e}.js`, `${e}.mjs`, `${e}.d.ts`])
    const lib = fs.readdirSync(path.join(ROOT, 'lib')).map((f) => `lib/${f}`)
    const expected = ['README.md', 'LICENSE', 'package.json', ...entries, 'register.mjs', ...lib, 'binding.js', 'platform.js', 'flat-messages.js', ...cli]
    expect(main.files).toEqual(expected.sort())
  })

  test('its manifest lists every platform package at its own version and has no scripts', async () => {
    const m = main.manifest
    expect(m.optionalDependencies).toEqual(Object.fromEntries((await targets()).map((s) => [`${pkg.name}-${s}`, pkg.version])))
    expect(m).toEqual(await releaseManifest())
    for (const field of ['scripts', 'devDependencies', 'overrides', 'dependencies', 'napi']) expect(m[field]).toBeUndefined()
    expect(m.bin).toEqual({ 'prime-compaction': 'cli/prime-compaction.js' })
    const targetsOfExports = [m.main, m.types, ...Object.values(m.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)))].map((f) => f.replace(/^\.\//, ''))
    for (const f of [...targetsOfExports, m.bin['prime-compaction']]) expect(main.files).toContain(f)
  })

  test("the host's platform package holds only its binary, beside its readme and the license", () => {
    const suffix = platformSuffix()
    expect(platform.files).toEqual(['README.md', 'LICENSE', `${binaryName}.${suffix}.node`, 'package.json'].sort())
    expect(platform.manifest).toEqual(JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', suffix, 'package.json'), 'utf8')))
  })
})

describe('the release tarballs of a repository (PACK_REPOSITORY, as the release workflow packs them)', () => {
  const url = 'https://github.com/someone/prime-compaction'
  let dir
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-pack-repo-'))
  })
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  // npm's provenance requires `repository` to name the repository that publishes.
  test('both manifests name the repository; without it, neither does', async () => {
    const repository = { type: 'git', url: `git+${url}.git` }
    expect(repositoryOf(url)).toEqual(repository)
    expect(repositoryOf(`${url}.git`)).toEqual(repository)
    expect(repositoryOf('')).toBeUndefined()
    expect(repositoryOf(undefined)).toBeUndefined()
    const main = readTarball(await packMain(dir, repository))
    const platform = readTarball(packPlatform(platformSuffix(), dir, repository))
    expect(main.manifest).toEqual({ ...(await releaseManifest(pkg, undefined)), repository })
    const own = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', platformSuffix(), 'package.json'), 'utf8'))
    expect(platform.manifest).toEqual({ ...own, repository })
    expect(own.repository).toBeUndefined()
    expect((await releaseManifest(pkg, undefined)).repository).toBeUndefined()
  })
})

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
  let napi
  beforeAll(async () => {
    napi = await import('@napi-rs/cli')
  })

  test.each(pkg.napi.targets)('%s: napi, the package and the loader agree on its name', (triple) => {
    const target = napi.parseTriple(triple)
    const suffix = target.platformArchABI
    expect(loaderSuffix(target)).toBe(suffix)
    const sub = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', suffix, 'package.json'), 'utf8'))
    // binding.js loads `./${binaryName}.${suffix}.node`, then the package `${binaryName}-${suffix}`.
    expect(sub.name).toBe(`${binaryName}-${suffix}`)
    expect(sub.main).toBe(`${binaryName}.${suffix}.node`)
    expect(sub.files).toEqual([sub.main])
    expect(sub.version).toBe(pkg.version)
    expect(sub.os).toEqual([target.platform])
    expect(sub.cpu).toEqual([target.arch])
    if (target.platform === 'linux') expect(sub.libc).toEqual([target.abi === 'musl' ? 'musl' : 'glibc'])
    else expect(sub.libc).toBeUndefined()
    expect(Object.keys(sub.scripts || {})).toEqual([])
  })

  test('no npm/ package without a target', async () => {
    const dirs = fs.readdirSync(path.join(ROOT, 'npm')).filter((d) => fs.statSync(path.join(ROOT, 'npm', d)).isDirectory()).sort()
    expect(dirs).toEqual((await targets()).sort())
  })
})

describe('the checkout', () => {
  test('has no install-time script; it builds its addon in prepare', () => {
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts[hook]).toBeUndefined()
    expect(pkg.scripts.prepare).toBe('npm run build')
    expect(pkg.optionalDependencies).toBeUndefined()
  })

  test('the suites run on a binary built from the Rust sources as they are (Jest\'s global setup builds a stale one)', () => {
    const binary = path.join(ROOT, `${binaryName}.${platformSuffix()}.node`)
    expect(require('../jest.config.js').globalSetup).toBe('<rootDir>/__test__/helpers/fresh-binary.js')
    // A binary built elsewhere (the release workflow's) is tested as it is.
    if (process.env.PRIME_PREBUILT) expect(fs.existsSync(binary)).toBe(true)
    else expect(builtFromTheseSources(binary)).toBe(true)
    expect(builtFromTheseSources(path.join(ROOT, 'no-such-binary.node'))).toBe(false)
  })

  test('npm run build writes napi-generated types to a file of their own', () => {
    expect(pkg.scripts.build).toMatch(/^napi build --platform --release --no-js --dts binding\.d\.ts$/)
    expect(fs.readFileSync(path.join(ROOT, 'binding.d.ts'), 'utf8').split('\n')[0]).toMatch(/auto-generated by NAPI-RS/)
    expect(fs.readFileSync(path.join(ROOT, 'lib', 'api.js'), 'utf8')).toContain("require('../binding.js')")
  })
})

describe('where no binary loads', () => {
  test('the error names the platform, the package it looked for and the command that builds one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-nobinary-'))
    try {
      for (const f of ['binding.js', 'platform.js', 'package.json']) fs.copyFileSync(path.join(ROOT, f), path.join(dir, f))
      const r = spawnSync(process.execPath, ['-e', "require('./binding.js')"], { cwd: dir, encoding: 'utf8' })
      expect(r.status).not.toBe(0)
      const suffix = platformSuffix()
      expect(r.stderr).toContain(`no native binary loads on ${suffix}`)
      expect(r.stderr).toContain(`the package ${binaryName}-${suffix}@${pkg.version}`)
      expect(r.stderr).toContain(`npm i ${binaryName}-${suffix}@${pkg.version}`)
      expect(r.stderr).toContain('`npm run build` in a checkout')
      // The command says the same, once, without a stack trace.
      for (const f of ['index.js', 'agent-1.6.js', 'flat-messages.js']) fs.copyFileSync(path.join(ROOT, f), path.join(dir, f))
      for (const d of ['lib', 'cli']) fs.cpSync(path.join(ROOT, d), path.join(dir, d), { recursive: true })
      const cli = spawnSync(process.execPath, [path.join(dir, 'cli', 'prime-compaction.js'), 'plan', 'x.jsonl'], { cwd: dir, encoding: 'utf8' })
      expect(cli.status).toBe(1)
      expect(cli.stderr.startsWith(`prime-compaction: no native binary loads on ${suffix}.\n`)).toBe(true)
      expect(cli.stderr).not.toMatch(/^\s+at /m)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
