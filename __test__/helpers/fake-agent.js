'use strict'
// A stand-in for the pi agent's package: its name, a version, the files
// `prime-compaction/register` may swap, a bundled entry and its unbundled
// build. Each entry reports which entry ran and, for each of those files,
// whose module an import of it gave. It lets the hook be checked on any
// Node version and on Bun, without the agent itself (which needs Node 22.19).

const { execFile } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const ROOT = path.join(__dirname, '..', '..')
const REGISTER = path.join(ROOT, 'register.mjs')
const FILES = ['compaction/index.js', 'compaction/compaction.js', 'compaction/utils.js', 'compaction/branch-summarization.js', 'messages.js']

// What a 1.6 entry reports with the hook: every file ours but
// branch-summarization.js, which only the agent's index.js imports.
const SWAPPED_1_6 = Object.fromEntries(FILES.map((f) => [f, f === 'compaction/branch-summarization.js' ? 'agent' : 'ours']))

/** An entry that imports each file (by URL, from `core`, relative to it) and prints what it got. */
function reporter(entry, core) {
  return `const out = { entry: ${JSON.stringify(entry)}, files: {} }
for (const file of ${JSON.stringify(FILES)}) {
  const m = await import(new URL(${JSON.stringify(core)} + file, import.meta.url))
  out.files[file] = typeof m.prepareCompaction === 'function' || typeof m.convertToLlm === 'function' ? 'ours' : 'own' in m ? 'agent' : 'neither'
}
console.log(JSON.stringify(out))
`
}

/**
 * Writes the package into `dir`/node_modules/`name` and returns its
 * folder. `unbundled: false` leaves out the bundled entry's unbundled build.
 */
function fakeAgent(dir, version, { name = '@earendil-works/pi-coding-agent', unbundled = true } = {}) {
  const pkg = path.join(dir, 'node_modules', ...name.split('/'))
  const write = (file, text) => {
    fs.mkdirSync(path.dirname(path.join(pkg, file)), { recursive: true })
    fs.writeFileSync(path.join(pkg, file), text)
  }
  write('package.json', JSON.stringify({ name, version, type: 'module', bin: { pi: 'dist/bundle/cli.js' } }))
  for (const file of FILES) write(`dist/core/${file}`, `export const own = ${JSON.stringify(file)}\n`)
  write('dist/bundle/cli.js', reporter('bundle', '../core/'))
  if (unbundled) write('dist/cli.js', reporter('unbundled', './core/'))
  return pkg
}

/** Runs `node` (or bun) on `script` with `env` over this process's: `{ code, out (the report, parsed), stderr }`. */
function runEntry(node, script, env = {}) {
  return new Promise((resolve) =>
    execFile(node, [script], { cwd: path.dirname(script), env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      let out
      try {
        out = JSON.parse(stdout.trim().split('\n').pop())
      } catch {
        out = stdout
      }
      resolve({ code: err ? (err.code ?? err.signal) : 0, out, stderr })
    }),
  )
}

/** NODE_OPTIONS that register the hook (`register`, the package's by default), as a user sets them for the `pi` command. */
const registerOptions = (register = REGISTER) => ({ NODE_OPTIONS: `--import=${pathToFileURL(register).href}` })

/** The same on Bun: BUN_OPTIONS, with `--preload`. */
const bunRegisterOptions = (register = REGISTER) => ({ BUN_OPTIONS: `--preload=${register}` })

module.exports = { fakeAgent, runEntry, registerOptions, bunRegisterOptions, FILES, SWAPPED_1_6, REGISTER }
