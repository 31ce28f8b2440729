'use strict'
// `PACK_DIR=<dir> npm run pack:release`: builds this machine's binary (unless
// the one in the repository root is newer than every source) and
// writes the two tarballs a release publishes from it into <dir>: the
// platform package (npm/<platform>, holding only the binary and the
// license) and the main package. The main package's manifest is the
// repository's, plus an optionalDependencies entry per napi target at its
// own version, minus what only a checkout uses (scripts, devDependencies,
// overrides, the napi block): a checkout builds its own binary, so its
// package.json names no platform package and its lockfile never depends on
// what the registry holds. With PACK_REPOSITORY=<url>, both manifests name
// that repository.
//
// `npm run pack:release -- --all-targets` (the release workflow): builds
// nothing; every target's binary must already be in the repository root, and
// each gets its platform tarball.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { platformSuffix, binaryName } = require('../platform.js')

const ROOT = path.join(__dirname, '..')

function readManifest() {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
}

/** The napi targets, named as napi names them (`linux-x64-gnu`, ...). */
async function targets(pkg = readManifest()) {
  const { parseTriple } = await import('@napi-rs/cli')
  return pkg.napi.targets.map((triple) => parseTriple(triple).platformArchABI)
}

/**
 * The `repository` field of the published manifests, from PACK_REPOSITORY
 * (the release workflow sets it to its repository's URL; npm's provenance
 * requires the field to name the repository that publishes), or undefined.
 */
function repositoryOf(url = process.env.PACK_REPOSITORY) {
  if (!url) return undefined
  return { type: 'git', url: `git+${url.replace(/\.git$/, '')}.git` }
}

/** The package.json the main package is published with. */
async function releaseManifest(pkg = readManifest(), repository = repositoryOf()) {
  const { scripts, devDependencies, overrides, napi, ...published } = pkg
  published.optionalDependencies = Object.fromEntries((await targets(pkg)).map((suffix) => [`${pkg.name}-${suffix}`, pkg.version]))
  if (repository) published.repository = repository
  return published
}

/**
 * Runs npm (the one running this script when there is one, else the one on
 * PATH) and returns its stdout; `quiet` keeps its notices off the terminal
 * unless it fails.
 */
function npm(args, cwd, { quiet = true } = {}) {
  const cli = process.env.npm_execpath
  const [file, argv, shell] = cli && /npm-cli\.js$/.test(cli) ? [process.execPath, [cli, ...args], false] : ['npm', args, process.platform === 'win32']
  try {
    return execFileSync(file, argv, { cwd, encoding: 'utf8', shell, stdio: ['ignore', quiet ? 'pipe' : 2, quiet ? 'pipe' : 2] })
  } catch (err) {
    throw new Error(`npm ${args.join(' ')} failed${err.stderr ? `:\n${err.stderr}` : ''}`)
  }
}

/** `npm pack` of a directory into `dest`; returns the tarball's path. */
function packDirectory(dir, dest) {
  const out = npm(['pack', dir, '--json', '--ignore-scripts', '--pack-destination', dest], ROOT)
  const [{ filename }] = JSON.parse(out.slice(out.indexOf('[')))
  return path.join(dest, filename)
}

function withStaging(fn) {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-pack-'))
  try {
    return fn(staging)
  } finally {
    fs.rmSync(staging, { recursive: true, force: true })
  }
}

/** The main package: the files npm would pack from the checkout, with the release manifest. */
async function packMain(dest, repository = repositoryOf()) {
  const manifest = await releaseManifest(readManifest(), repository)
  const out = npm(['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT)
  const [{ files }] = JSON.parse(out.slice(out.indexOf('[')))
  return withStaging((staging) => {
    for (const { path: file } of files) {
      if (file === 'package.json') continue
      fs.mkdirSync(path.dirname(path.join(staging, file)), { recursive: true })
      fs.copyFileSync(path.join(ROOT, file), path.join(staging, file))
    }
    fs.writeFileSync(path.join(staging, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    return packDirectory(staging, dest)
  })
}

/** The platform package for `suffix`: npm/<suffix>, the binary from the repository root and the license. */
function packPlatform(suffix, dest, repository = repositoryOf()) {
  const dir = path.join(ROOT, 'npm', suffix)
  const sub = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
  const { version } = readManifest()
  if (sub.version !== version) throw new Error(`npm/${suffix}/package.json is at ${sub.version}, the package at ${version}: run \`npx napi version\``)
  const binary = path.join(ROOT, `${binaryName}.${suffix}.node`)
  if (!fs.existsSync(binary)) throw new Error(`no ${path.basename(binary)} in the repository root: build it (\`npm run build\`) or download the release artifact`)
  return withStaging((staging) => {
    for (const file of fs.readdirSync(dir)) fs.copyFileSync(path.join(dir, file), path.join(staging, file))
    if (repository) fs.writeFileSync(path.join(staging, 'package.json'), `${JSON.stringify({ ...sub, repository }, null, 2)}\n`)
    fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(staging, 'LICENSE'))
    fs.copyFileSync(binary, path.join(staging, path.basename(binary)))
    return packDirectory(staging, dest)
  })
}

/** The files a build of the addon reads. */
const SOURCES = ['Cargo.toml', 'Cargo.lock', 'build.rs', 'src', 'crates/core/Cargo.toml', 'crates/core/src']

function newestSource(file) {
  const stat = fs.statSync(path.join(ROOT, file))
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...fs.readdirSync(path.join(ROOT, file)).map((f) => newestSource(path.join(file, f))))
}

/**
 * Whether `binary` is newer than every source of the addon. napi's CLI
 * relinks on every `npm run build` (it sets a fresh NAPI_FORCE_BUILD_*
 * variable each time), so a checkout that has just built, as CI has, would
 * otherwise link the same binary again here.
 */
function builtFromTheseSources(binary) {
  if (!fs.existsSync(binary)) return false
  return fs.statSync(binary).mtimeMs > Math.max(...SOURCES.map(newestSource))
}

/** Builds this machine's binary in the checkout (`npm run build`) unless it is newer than every source. */
function buildIfStale() {
  const binary = path.join(ROOT, `${binaryName}.${platformSuffix()}.node`)
  if (!builtFromTheseSources(binary)) npm(['run', 'build'], ROOT, { quiet: false })
}

async function main() {
  const dest = process.env.PACK_DIR
  if (!dest) throw new Error('set PACK_DIR to the directory the tarballs go to')
  fs.mkdirSync(dest, { recursive: true })
  let suffixes
  const all = await targets()
  if (process.argv.includes('--all-targets')) {
    suffixes = all
  } else {
    const host = platformSuffix()
    if (!all.includes(host)) throw new Error(`this machine (${host}) is not one of the napi targets in package.json`)
    buildIfStale()
    suffixes = [host]
  }
  const tarballs = suffixes.map((suffix) => packPlatform(suffix, path.resolve(dest)))
  tarballs.push(await packMain(path.resolve(dest)))
  for (const tarball of tarballs) console.log(tarball)
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`pack:release: ${err.message}`)
    process.exit(1)
  })
}

module.exports = { targets, repositoryOf, releaseManifest, packMain, packPlatform, buildIfStale, builtFromTheseSources }
