// The hooks behind `prime-compaction/register` (register.mjs): every
// import that resolves to one of the pi agent's files this package stands
// in for (lib/agent-swap.js says which, by the agent's version) loads this
// package's entry for that line instead (`resolve`; `load` makes the module
// that carries the agent file's other exports too, see SHIM). An agent
// bundle's chunk that holds the module inlined, where lib/agent-swap.js
// knows it byte for byte, loads patched (`load`, lib/agent-bundle.js: the
// module's names bound to this package's entry); any other bundle's entries
// run their unbundled build, whose imports the hook sees. Where this
// package's binary does not load, nothing is swapped.
// Registered in the loading thread (module.registerHooks, Node 22.15 and
// later, which every agent version needs) or, on older Node, on the loader
// thread (module.register, which imports this file and calls the same hooks).
// Bun has neither (its module.register does nothing): there the same swaps
// are a runtime plugin (Bun.plugin, `bun --preload`), see registerBunPlugin.

import nodeModule from 'node:module'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { debuglog } from 'node:util'

const require = nodeModule.createRequire(import.meta.url)
const { swapOf, BUNDLES, LINES, UNBUNDLED } = require('./agent-swap.js')
const { isChunkOf, patchChunk } = require('./agent-bundle.js')

// package.json of each folder asked about, once.
const packages = new Map()
const warned = new Set()

function packageOf(folder) {
  if (!packages.has(folder)) {
    let pkg
    try {
      pkg = JSON.parse(readFileSync(new URL('package.json', folder), 'utf8'))
    } catch {
      pkg = undefined
    }
    packages.set(folder, pkg)
  }
  return packages.get(folder)
}

// Whether a file is a bundle's chunk (BUNDLES), by row and URL, once.
const chunks = new Map()

function isChunk(row, url) {
  const key = `${row.sha256} ${url}`
  if (!chunks.has(key)) {
    let is = false
    try {
      is = isChunkOf(row, readFileSync(fileURLToPath(url)))
    } catch {
      // No such file, or none that can be read: not the chunk.
    }
    chunks.set(key, is)
  }
  return chunks.get(key)
}

const io = {
  packageOf,
  exists: (url) => existsSync(fileURLToPath(url)),
  entryUrl: (entry) => new URL(`../${entry}`, import.meta.url).href,
  isChunk,
}

// NODE_DEBUG=prime-compaction: a line on stderr for each agent file
// swapped, once (an agent file is resolved once for each file importing it).
const debug = debuglog('prime-compaction')
const told = new Set()

/** This package's entry's name, `.mjs` dropped, for NODE_DEBUG's lines. */
const entryName = (entry) => entry.replace(/\.mjs$/, '')

/** Runs `say` the first time it is called for `url`. */
function tellOnce(url, say) {
  const file = fileURLToPath(url)
  if (told.has(file)) return
  told.add(file)
  say()
}

/** Says `url` loads `target` (this package's entry `entry`, or an agent file where `entry` is undefined). */
function tell(url, target, entry) {
  tellOnce(url, () => {
    if (entry !== undefined) debug('%s: swapped for prime-compaction/%s', fileURLToPath(url), entryName(entry))
    else debug('%s: runs %s in its place', fileURLToPath(url), fileURLToPath(target))
  })
}

function warn(warning) {
  if (warned.has(warning)) return
  warned.add(warning)
  process.emitWarning(warning, { code: 'PRIME_COMPACTION_NOT_SWAPPED' })
}

// Whether this package's binary loads here, asked at the first swap: where
// it does not, the agent starts with its own module, and a warning says
// why, rather than failing to start.
let loads
function binaryLoads() {
  if (loads === undefined) {
    try {
      require('../binding.js')
      loads = true
    } catch (err) {
      loads = false
      warn(`${String(err?.message).split('\n')[0]} The agent's own compaction module runs.`)
    }
  }
  return loads
}

// Node's compile cache, turned on as the agent's bundled `pi` entry turns
// it on before loading the rest (in Node's own place, or NODE_COMPILE_CACHE's;
// NODE_DISABLE_COMPILE_CACHE keeps it off), on a Node that has it (22.1 on;
// Bun 1.4 has it too): without it, the unbundled build's many files are
// compiled anew each start.
function enableCompileCache() {
  if (typeof nodeModule.enableCompileCache !== 'function') return
  try {
    nodeModule.enableCompileCache()
  } catch {
    // The cache only saves time: the agent starts without it.
  }
}

// An agent file swapped for one of this package's entries loads a module
// made here (`load`): every export of the agent's own file, with this
// package's taking the place of those of the same name. So an export a
// later release of the line adds, which this package lacks, is still
// there for the agent's other files to import, where importing this
// package's entry alone would stop the agent at its start. The agent's
// file is imported with ORIGINAL in its query, which no swap matches.
// The module's URL is a path of its own under SHIM (no file is there):
// `SHIM<entry>/<the agent file's URL, base64url>.mjs`. A query would not
// do: `require()` of an ES module keys it by its path, which would make
// the module made here the entry itself, importing itself.
const SHIM = new URL('./agent-file/', import.meta.url).href
const ORIGINAL = '?prime-compaction-original'

// A bundle's chunk to load patched (lib/agent-bundle.js), by its URL: its
// row of BUNDLES, and the URL of the entry its declarations bind to.
const patches = new Map()

/**
 * What the module at `url` becomes: undefined where it stays (a bundle's
 * chunk that loads patched is put in `patches`), else `{ url, entry }`,
 * `entry` the name of this package's entry for an agent file it stands in
 * for (undefined for a bundled entry's unbundled build, the agent's own
 * file, run as it is, with the compile cache its bundled entry turns on).
 */
function swapTarget(url) {
  const swap = swapOf(url, io)
  if (swap === undefined) return undefined
  if (swap.warning !== undefined) {
    warn(swap.warning)
    return undefined
  }
  if (!binaryLoads()) return undefined
  if (swap.bundle !== undefined) {
    tellOnce(url, () => debug('%s: runs as it is; %s loads with prime-compaction/%s in its compaction module\'s place', fileURLToPath(url), swap.bundle.chunk, entryName(lineEntry(swap.bundle.line))))
    return undefined
  }
  if (swap.patch !== undefined) {
    patches.set(url, { row: swap.patch, entry: swap.entry })
    return undefined
  }
  if (swap.compileCache) enableCompileCache()
  const entry = ENTRIES.get(swap.url)
  tell(url, swap.url, entry)
  return { url: swap.url, entry }
}

function swapped(resolved) {
  const target = swapTarget(resolved.url)
  if (target === undefined) return resolved
  if (target.entry !== undefined) return { ...resolved, url: `${SHIM}${target.entry}/${Buffer.from(resolved.url).toString('base64url')}.mjs`, format: 'module' }
  return { ...resolved, url: target.url, format: 'module' }
}

// This package's entries, one per line: each one's file name by its URL.
const ENTRIES = new Map(LINES.map((row) => [io.entryUrl(row.entry), row.entry]))
const ENTRY_URLS = new Map(LINES.map((row) => [row.entry, io.entryUrl(row.entry)]))
const lineEntry = (line) => LINES.find((row) => row.line === line).entry

// lib/host-pi-ai.js, which a patched chunk hands its pi-ai's completeSimple.
const HOST_PI_AI = new URL('./host-pi-ai.js', import.meta.url).href

/**
 * A patched chunk's text (lib/agent-bundle.js), the imports it adds named
 * by `specifier(url)`; undefined where the file is no longer the chunk (it
 * then loads as it is, with a warning).
 */
function patchedText(url, specifier) {
  const { row, entry } = patches.get(url)
  const text = patchChunk(row, readFileSync(fileURLToPath(url)), { entry: specifier(entry), hostPiAi: specifier(HOST_PI_AI) })
  if (text === undefined) {
    warn(`${fileURLToPath(url)} changed while it loaded: the agent's own compaction module runs`)
    return undefined
  }
  tellOnce(url, () => debug('%s: its compaction module\'s %d declarations bound to prime-compaction/%s', fileURLToPath(url), Object.keys(row.declarations).length, entryName(ENTRIES.get(entry))))
  return text
}

// The names each entry of this package exports, once.
const entryNames = new Map()

/** The module's text for a swapped agent file's URL (see SHIM), or undefined for any other URL. */
function shimSource(url) {
  if (!url.startsWith(SHIM)) return undefined
  const [name, file, ...rest] = url.slice(SHIM.length).split('/')
  const entry = ENTRY_URLS.get(name)
  if (entry === undefined || rest.length > 0 || !file?.endsWith('.mjs')) return undefined
  return shimText(Buffer.from(file.slice(0, -'.mjs'.length), 'base64url').toString(), entry)
}

/** A swapped agent file's module: the agent file's exports (`agentFile` as imported, ORIGINAL added), `entry`'s over them. */
function shimText(agentFile, entry) {
  if (!entryNames.has(entry)) entryNames.set(entry, Object.keys(require(fileURLToPath(entry).replace(/\.mjs$/, '.js'))))
  return `export * from ${JSON.stringify(agentFile + ORIGINAL)}\nexport { ${entryNames.get(entry).join(', ')} } from ${JSON.stringify(entry)}\n`
}

/** The hook: the next hook's resolution, or this package's file in its place. */
export function resolve(specifier, context, nextResolve) {
  const resolved = nextResolve(specifier, context)
  return typeof resolved?.then === 'function' ? resolved.then(swapped) : swapped(resolved)
}

/** The hook: a swapped agent file's module (see SHIM), a bundle's chunk patched, or the next hook's load. */
export function load(url, context, nextLoad) {
  const source = patches.has(url) ? patchedText(url, (u) => u) : shimSource(url)
  if (source === undefined) return nextLoad(url, context)
  return { format: 'module', source, shortCircuit: true }
}

// Bun: the files a swap can start from (each line's files, the bundled
// entries and the known bundles' chunks), by the end of their path, as
// imported or with ORIGINAL.
const BUN_FILES = new RegExp(
  `[\\\\/](?:${[...new Set([...LINES.flatMap((row) => row.files), ...Object.keys(UNBUNDLED), ...BUNDLES.map((b) => b.chunk)])].map((file) => file.replaceAll('.', '\\.').replaceAll('/', '[\\\\/]')).join('|')})(?:${ORIGINAL.replace('?', '\\?')})?$`,
)

/**
 * Bun: a file of BUN_FILES (by path) as the hooks above make it. Its
 * plugin loads the file in place, so each swap is the module's text at the
 * agent file's own path: SHIM's text for an agent file this package stands
 * in for (the file itself imported with ORIGINAL), a known bundle's chunk
 * patched, an import of the unbundled build for another bundle's entry,
 * else the file's own text (a plugin's load cannot hand a file back to Bun).
 */
function bunModule(file) {
  const own = (path) => ({ loader: 'js', contents: readFileSync(path, 'utf8') })
  if (file.endsWith(ORIGINAL)) return own(file.slice(0, -ORIGINAL.length))
  const url = pathToFileURL(file).href
  const target = swapTarget(url)
  if (target === undefined) {
    const patched = patches.has(url) ? patchedText(url, (u) => fileURLToPath(u)) : undefined
    return patched === undefined ? own(file) : { loader: 'js', contents: patched }
  }
  if (target.entry !== undefined) return { loader: 'js', contents: shimText(file, target.url) }
  return { loader: 'js', contents: `import ${JSON.stringify(fileURLToPath(target.url))}\n` }
}

/** Bun: the swaps as a runtime plugin, for every module loaded from now on. */
function registerBunPlugin() {
  globalThis.Bun.plugin({ name: 'prime-compaction/register', setup: (build) => build.onLoad({ filter: BUN_FILES }, ({ path }) => bunModule(path)) })
}

/** Registers the hook for every import from now on (see the top of this file). */
export function registerAgentSwap() {
  if (typeof globalThis.Bun?.plugin === 'function') registerBunPlugin()
  else if (typeof nodeModule.registerHooks === 'function') nodeModule.registerHooks({ resolve, load })
  else if (typeof nodeModule.register === 'function') nodeModule.register(import.meta.url)
  else throw new Error(`prime-compaction/register needs Node 20.6 or later (module.register), and this is Node ${process.versions.node}`)
}
