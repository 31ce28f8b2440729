'use strict'
// Where a summary request goes when the caller passes no streamFn: to
// `completeSimple` of the host agent's own pi-ai, from the module its agent
// line names (`@earendil-works/pi-ai` in 0.78, `@earendil-works/pi-ai/compat`
// in 1.6, whose root no longer exports it). The host is the agent package
// whose code called us (we are swapped in for its compaction module); its
// pi-ai can sit nested under it, away from ours. With no agent among the
// callers, the module is resolved from this package, as any import would be.

const fs = require('node:fs')
const path = require('node:path')
const { createRequire } = require('node:module')
const { fileURLToPath, pathToFileURL } = require('node:url')

const AGENT_PACKAGE = '@earendil-works/pi-coding-agent'
const OWN_DIR = path.join(__dirname, '..')
const OWN_DEPENDENCIES = path.join(OWN_DIR, 'node_modules')

/**
 * The files of the frames that called `below`, nearest first. Read from V8's
 * call sites, whatever format the host gives its stack traces.
 */
function callerFiles(below) {
  const { stackTraceLimit, prepareStackTrace } = Error
  let sites = []
  try {
    Error.stackTraceLimit = 64
    Error.prepareStackTrace = (_, callSites) => callSites
    const holder = {}
    Error.captureStackTrace(holder, below)
    sites = holder.stack
  } finally {
    Error.stackTraceLimit = stackTraceLimit
    Error.prepareStackTrace = prepareStackTrace
  }
  const files = []
  for (const site of Array.isArray(sites) ? sites : []) {
    const name = typeof site.getFileName === 'function' ? site.getFileName() : undefined
    if (typeof name === 'string' && !files.includes(name)) files.push(name)
  }
  return files
}

function pathOf(file) {
  if (file.startsWith('file:')) {
    try {
      return fileURLToPath(file)
    } catch {
      return undefined
    }
  }
  return path.isAbsolute(file) ? file : undefined
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

const namedPackageOfDir = new Map()

/** The nearest folder at or above `dir` whose package.json has a name, with that name. */
function packageOf(dir) {
  const seen = []
  let found = null
  for (let d = dir; ; d = path.dirname(d)) {
    if (namedPackageOfDir.has(d)) {
      found = namedPackageOfDir.get(d)
      break
    }
    seen.push(d)
    const pkg = readJson(path.join(d, 'package.json'))
    if (pkg && typeof pkg.name === 'string') {
      found = { dir: d, name: pkg.name }
      break
    }
    if (path.dirname(d) === d) break
  }
  for (const d of seen) namedPackageOfDir.set(d, found)
  return found
}

/** The folder of the agent package among `files`' packages, nearest caller first. */
function hostOf(files) {
  for (const file of files) {
    const p = pathOf(file)
    // Our own files, but not the packages installed beside them.
    if (p === undefined || (p.startsWith(OWN_DIR + path.sep) && !p.startsWith(OWN_DEPENDENCIES + path.sep))) continue
    const pkg = packageOf(path.dirname(p))
    if (pkg && pkg.name === AGENT_PACKAGE) return pkg.dir
  }
  return undefined
}

/** The file an `exports` entry points at under the conditions an `import` from Node uses. */
function conditionTarget(entry) {
  if (typeof entry === 'string') return entry
  if (Array.isArray(entry)) {
    for (const e of entry) {
      const t = conditionTarget(e)
      if (t !== undefined) return t
    }
    return undefined
  }
  if (entry && typeof entry === 'object') {
    for (const [condition, value] of Object.entries(entry)) {
      if (condition !== 'node' && condition !== 'import' && condition !== 'default') continue
      const t = conditionTarget(value)
      if (t !== undefined) return t
    }
  }
  return undefined
}

function exportTarget(pkg, subpath) {
  const { exports } = pkg
  if (exports === undefined) return subpath === '.' ? pkg.main || 'index.js' : subpath
  const sugar = typeof exports === 'string' || Array.isArray(exports) || !Object.keys(exports).some((k) => k.startsWith('.'))
  if (sugar) return subpath === '.' ? conditionTarget(exports) : undefined
  return conditionTarget(exports[subpath])
}

/**
 * The URL `specifier` (a package name with an optional subpath) resolves to
 * from inside `dir`, walking node_modules folders up from there as Node does;
 * undefined when no such package is installed there.
 */
function resolveFrom(dir, specifier) {
  const parts = specifier.split('/')
  const nameLength = specifier.startsWith('@') ? 2 : 1
  const name = parts.slice(0, nameLength).join('/')
  const subpath = parts.length > nameLength ? `./${parts.slice(nameLength).join('/')}` : '.'
  const bases = createRequire(path.join(dir, 'package.json')).resolve.paths(name) || []
  for (const base of bases) {
    const pkgDir = path.join(base, name)
    const pkg = readJson(path.join(pkgDir, 'package.json'))
    if (!pkg) continue
    const target = exportTarget(pkg, subpath)
    if (target === undefined) throw new Error(`${name} in ${pkgDir} does not export ${subpath}`)
    return pathToFileURL(path.join(pkgDir, target)).href
  }
  return undefined
}

// A bundled agent's own completeSimple, by the agent's folder: its pi-ai is
// inlined in the bundle, and the one installed beside it is another copy
// (with none of the providers registered at run time). lib/agent-bundle.js's
// patched chunk hands it over as it loads.
const bundled = new Map()

/** Takes the completeSimple of the bundle whose chunk is at `chunkUrl`. */
function useBundledCompleteSimple(chunkUrl, completeSimple) {
  const file = pathOf(chunkUrl)
  const pkg = file === undefined ? null : packageOf(path.dirname(file))
  if (pkg && pkg.name === AGENT_PACKAGE && typeof completeSimple === 'function') bundled.set(pkg.dir, completeSimple)
}

/**
 * `completeSimple` from `specifier`, resolved from the host among `callers`
 * (from callerFiles; a bundled host's own, where it handed it over) or else
 * from this package; a clear Error when there is none.
 */
async function completeSimpleOf(specifier, callers) {
  let where = 'this package'
  try {
    const host = hostOf(callers || [])
    if (bundled.has(host)) return bundled.get(host)
    const url = host === undefined ? undefined : resolveFrom(host, specifier)
    if (url !== undefined) where = `the agent in ${host}`
    const ai = await import(url === undefined ? specifier : url)
    if (typeof ai.completeSimple !== 'function') throw new Error(`${specifier} has no completeSimple export`)
    return ai.completeSimple
  } catch (err) {
    throw new Error(
      `prime-compaction: no streamFn was passed and completeSimple could not be loaded from ${specifier} ` +
        `(resolved from ${where}: ${err && err.message}); pass a streamFn(model, context, options), ` +
        `or install the @earendil-works/pi-ai whose ${specifier} exports it`,
      { cause: err },
    )
  }
}

module.exports = { callerFiles, completeSimpleOf, hostOf, resolveFrom, useBundledCompleteSimple }
