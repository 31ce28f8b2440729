'use strict'
// prime-compaction/register: which of the agent's files load this package
// instead (lib/agent-swap.js), and the hook that does it
// (lib/agent-hooks.mjs), here on a stand-in agent package
// (helpers/fake-agent.js) in this Node and on Bun (its runtime plugin). The
// real agent's `pi` command with the hook: agent/pi-command.test.js; older
// and newer Node: node-versions.test.js.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { swapOf, BUNDLES, LINES, AGENT_PACKAGE } = require('../lib/agent-swap.js')
const { patchChunk } = require('../lib/agent-bundle.js')
const { declarationsIn } = require('../scripts/bundle-declarations.js')
const { fakeAgent, runEntry, registerOptions, bunRegisterOptions, FILES, SWAPPED_1_6 } = require('./helpers/fake-agent.js')
const { BUN, SKIP_BUN, bunBinary } = require('./helpers/bun.js')

const ROOT = path.join(__dirname, '..')
const FOLDER = 'file:///opt/n/node_modules/@earendil-works/pi-coding-agent/'

/** swapOf's io over a folder whose package.json is `pkg`, whose files are `files`, and whose files `chunks` are their BUNDLES rows' chunks. */
function io(pkg, files = [], chunks = []) {
  return {
    packageOf: (folder) => (folder === FOLDER ? pkg : undefined),
    exists: (url) => files.includes(url.slice(FOLDER.length)),
    entryUrl: (entry) => `file:///ours/${entry}`,
    isChunk: (row, url) => url === FOLDER + row.chunk && chunks.includes(row.chunk),
  }
}

describe('swapOf', () => {
  const v16 = io({ name: AGENT_PACKAGE, version: '1.6.0' }, ['dist/cli.js', 'dist/rpc-entry.js'])
  const v078 = io({ name: AGENT_PACKAGE, version: '0.78.1' })

  test("each line's files load that line's entry; other files and other lines' files stay", () => {
    for (const file of ['dist/core/compaction/index.js', 'dist/core/compaction/compaction.js', 'dist/core/compaction/utils.js', 'dist/core/messages.js']) {
      expect(swapOf(FOLDER + file, v16)).toEqual({ url: 'file:///ours/agent-1.6.mjs' })
    }
    expect(swapOf(FOLDER + 'dist/core/compaction/index.js', v078)).toEqual({ url: 'file:///ours/agent-0.78.mjs' })
    expect(swapOf(FOLDER + 'dist/core/messages.js', v078)).toEqual({ url: 'file:///ours/agent-0.78.mjs' })
    // 0.78's other compaction files are imported by its index.js alone (agent.test.js checks it).
    expect(swapOf(FOLDER + 'dist/core/compaction/utils.js', v078)).toBeUndefined()
    for (const file of ['dist/core/compaction/branch-summarization.js', 'dist/core/agent-session.js', 'dist/index.js', 'dist/core/messages.js.map']) {
      expect(swapOf(FOLDER + file, v16)).toBeUndefined()
    }
    expect(LINES.map((row) => row.line)).toEqual(['0.78', '1.6'])
  })

  test('a bundled entry runs its unbundled build, or warns where there is none', () => {
    // (the bundled `pi` entry turns Node's compile cache on first: the hook then does it for the unbundled one)
    expect(swapOf(FOLDER + 'dist/bundle/cli.js', v16)).toEqual({ url: FOLDER + 'dist/cli.js', compileCache: true })
    expect(swapOf(FOLDER + 'dist/bundle/rpc-entry.js', v16)).toEqual({ url: FOLDER + 'dist/rpc-entry.js' })
    expect(swapOf(FOLDER + 'dist/bundle/index.js', v16)).toBeUndefined()
    expect(swapOf(FOLDER + 'dist/bundle/cli.js', io({ name: AGENT_PACKAGE, version: '1.6.2' }))).toEqual({
      warning: `${AGENT_PACKAGE} 1.6.2: dist/bundle/cli.js holds the compaction module inlined, and dist/cli.js, which imports it, is missing: the agent's own compaction module runs`,
    })
  })

  test("a bundle known byte for byte runs as it is, its chunk patched; another bundle of the version runs the unbundled build", () => {
    const [row] = BUNDLES
    expect(row).toMatchObject({ line: '1.6', version: '1.6.0', chunk: expect.stringMatching(/^dist\/bundle\/chunks\/chunk-\w+\.js$/) })
    const known = io({ name: AGENT_PACKAGE, version: '1.6.0' }, ['dist/cli.js', 'dist/rpc-entry.js'], [row.chunk])
    expect(swapOf(FOLDER + 'dist/bundle/cli.js', known)).toEqual({ bundle: row })
    expect(swapOf(FOLDER + 'dist/bundle/rpc-entry.js', known)).toEqual({ bundle: row })
    expect(swapOf(FOLDER + row.chunk, known)).toEqual({ patch: row, entry: 'file:///ours/agent-1.6.mjs' })
    // The chunk changed (or none): the unbundled build, and the chunk, if anything imports it, as it is.
    expect(swapOf(FOLDER + 'dist/bundle/cli.js', v16)).toEqual({ url: FOLDER + 'dist/cli.js', compileCache: true })
    expect(swapOf(FOLDER + row.chunk, v16)).toBeUndefined()
    // Another version with the same chunk's bytes (or another package's) is not the row's.
    const other = io({ name: AGENT_PACKAGE, version: '1.6.1' }, ['dist/cli.js'], [row.chunk])
    expect(swapOf(FOLDER + 'dist/bundle/cli.js', other)).toEqual({ url: FOLDER + 'dist/cli.js', compileCache: true })
    expect(swapOf(FOLDER + row.chunk, other)).toBeUndefined()
    expect(swapOf(FOLDER + row.chunk, io({ name: 'some-other-agent', version: '1.6.0' }, [], [row.chunk]))).toBeUndefined()
  })

  test('another version of the agent is left alone, with a warning naming it', () => {
    const warning = `${AGENT_PACKAGE} 1.7.0 is none of the versions prime-compaction stands in for (0.78.x, 1.6.x): the agent's own compaction module runs`
    const v17 = io({ name: AGENT_PACKAGE, version: '1.7.0' }, ['dist/cli.js'])
    expect(swapOf(FOLDER + 'dist/core/compaction/index.js', v17)).toEqual({ warning })
    expect(swapOf(FOLDER + 'dist/bundle/cli.js', v17)).toEqual({ warning })
    for (const version of ['0.7.8', '1.60.0', '0.78', '10.78.1', '1.6']) {
      expect(swapOf(FOLDER + 'dist/core/messages.js', io({ name: AGENT_PACKAGE, version }))).toHaveProperty('warning')
    }
    expect(swapOf(FOLDER + 'dist/core/messages.js', io({ name: AGENT_PACKAGE }))).toEqual({
      warning: `${AGENT_PACKAGE} with no version in its package.json is none of the versions prime-compaction stands in for (0.78.x, 1.6.x): the agent's own compaction module runs`,
    })
    expect(swapOf(FOLDER + 'dist/core/messages.js', io({ name: AGENT_PACKAGE, version: '1.6.1-beta.2' }))).toEqual({ url: 'file:///ours/agent-1.6.mjs' })
  })

  test('files of other packages, or of none, are left alone without a warning', () => {
    expect(swapOf(FOLDER + 'dist/core/messages.js', io({ name: 'some-other-agent', version: '1.6.0' }))).toBeUndefined()
    expect(swapOf(FOLDER + 'dist/core/messages.js', io(undefined))).toBeUndefined()
    expect(swapOf(FOLDER + 'dist/core/messages.js', io(null))).toBeUndefined()
    expect(swapOf(FOLDER + 'dist/core/messages.js?x=1', v16)).toBeUndefined()
    expect(swapOf('node:fs', v16)).toBeUndefined()
    expect(swapOf('https://example.com/dist/core/messages.js', v16)).toBeUndefined()
  })
})

// The real agent's bundle (the devDependency's): each BUNDLES row against
// the chunk it names, as lib/agent-bundle.js patches it.
describe.each(BUNDLES.map((row) => [row.version, row]))("the bundle of agent %s, patched", (version, row) => {
  const line = LINES.find((l) => l.line === row.line)
  // (the devDependency alias of the line, as __test__/agent/lines.js names it)
  const folder = path.join(ROOT, 'node_modules', `pi-coding-agent-${row.line}`)
  const bytes = fs.readFileSync(path.join(folder, row.chunk))
  const ours = Object.keys(require(path.join(ROOT, line.entry.replace(/\.mjs$/, '.js'))))

  test('the installed agent is that version, its chunk those bytes', () => {
    expect(require(path.join(folder, 'package.json')).version).toBe(version)
    expect(require('node:crypto').createHash('sha256').update(bytes).digest('hex')).toBe(row.sha256)
  })

  test("the row's declarations are those the chunk holds of our entry's names: each a function or var of the module's own scope, never assigned again; completeSimple one of its imports", () => {
    expect(declarationsIn(bytes.toString('utf8'), ours, row.completeSimple)).toEqual({ declarations: row.declarations })
  })

  test('the check refuses what an import could not replace: a name assigned again, a let, a completeSimple that is no import', () => {
    const text = "import { completeSimple } from './x.js';function a(){}var b=1,c=2;let d=3;function e(){c=4}export{a,b,c,d}"
    expect(declarationsIn(text, ['a', 'b', 'zz'])).toEqual({ declarations: { a: text.indexOf('a(){}'), b: text.indexOf('b=1') } })
    expect(declarationsIn(text, ['c'])).toEqual({ reason: 'c is assigned again' })
    expect(declarationsIn(text, ['d'])).toEqual({ reason: 'd is a let binding' })
    expect(declarationsIn(text, ['a'], 'a')).toEqual({ reason: 'a is none of its imports' })
  })

  test("they are the names of the files the unbundled build swaps (what its SHIM binds to ours), and the chunk's completeSimple is pi-ai's", async () => {
    const exported = new Set()
    for (const file of line.files) for (const name of Object.keys(await import(pathToFileURL(path.join(folder, file)).href))) exported.add(name)
    expect(Object.keys(row.declarations).sort()).toEqual(ours.filter((name) => exported.has(name)).sort())
    expect(bytes.toString('utf8')).toMatch(new RegExp(`import\\{[^}]*\\b${row.completeSimple}\\b[^}]*\\}from"\\./chunk-\\w+\\.js"`))
  })

  test('patched, it is a module that imports each name from our entry and renames its own declaration, byte for byte the rest', () => {
    const text = patchChunk(row, bytes, { entry: 'file:///ours/entry.mjs', hostPiAi: 'file:///ours/host.js' })
    const { SourceTextModule } = require('node:vm')
    const module = new SourceTextModule(text)
    expect(module.dependencySpecifiers).toEqual(expect.arrayContaining(['file:///ours/entry.mjs', 'file:///ours/host.js']))
    const names = Object.keys(row.declarations)
    expect(text.split('__primeCompactionAgent_').length - 1).toBe(names.length + 2)
    let back = text.slice(text.indexOf(';', text.indexOf('file:///ours/host.js')) + 1, text.lastIndexOf('\n;'))
    for (const name of names) back = back.replace(`__primeCompactionAgent_${name}`, name)
    expect(back).toBe(bytes.toString('utf8'))
  })

  test('a chunk of other bytes is not patched', () => {
    const changed = Buffer.from(bytes)
    changed[changed.length - 2] ^= 1
    expect(patchChunk(row, changed, { entry: 'e', hostPiAi: 'h' })).toBeUndefined()
  })
})

// Each runtime as a user starts an agent on it with the hook: Node with
// `--import` (in NODE_OPTIONS), Bun with `--preload` (in BUN_OPTIONS).
const RUNTIMES = [
  { name: 'Node', bin: () => process.execPath, register: registerOptions, testHere: test, note: '' },
  {
    name: 'Bun',
    bin: bunBinary,
    register: bunRegisterOptions,
    testHere: SKIP_BUN ? test.skip : test,
    note: SKIP_BUN ? ` (skipped: ${BUN.reason})` : '',
  },
]

describe.each(RUNTIMES.map((runtime) => [runtime.name, runtime]))('the hook on %s, on a stand-in agent package', (runtimeName, { bin, register, testHere: test, note }) => {
  let tmp
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-swap-'))
  })
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  const all = (whose) => Object.fromEntries(FILES.map((f) => [f, whose]))
  const run = (name, version, entry, options) => runEntry(bin(), path.join(fakeAgent(path.join(tmp, name), version, options), entry), register())

  test("1.6: its bundled `pi` entry runs the unbundled build, whose compaction files are ours (but branch-summarization.js, which only index.js imports)" + note, async () => {
    expect(await run('a', '1.6.0', 'dist/bundle/cli.js')).toEqual({
      code: 0,
      out: { entry: 'unbundled', files: SWAPPED_1_6 },
      stderr: '',
    })
  })

  test('run through a symlink with no extension, as a global install\'s `pi` is, the bundled entry is swapped the same' + note, async () => {
    const agent = fakeAgent(path.join(tmp, 'j'), '1.6.0')
    const link = path.join(tmp, 'j', 'bin', 'pi')
    fs.mkdirSync(path.dirname(link))
    fs.symlinkSync(path.join(agent, 'dist', 'bundle', 'cli.js'), link)
    expect(await runEntry(bin(), link, register())).toEqual({ code: 0, out: { entry: 'unbundled', files: SWAPPED_1_6 }, stderr: '' })
  })

  test("0.78: compaction/index.js and messages.js are ours, the files only index.js imports the agent's" + note, async () => {
    expect(await run('b', '0.78.0', 'dist/cli.js')).toEqual({
      code: 0,
      out: { entry: 'unbundled', files: { ...all('agent'), 'compaction/index.js': 'ours', 'messages.js': 'ours' } },
      stderr: '',
    })
  })

  test('with NODE_DEBUG=prime-compaction, stderr names each file swapped, once, and what loads in its place' + note, async () => {
    const agent = fakeAgent(path.join(tmp, 'k'), '1.6.0')
    const r = await runEntry(bin(), path.join(agent, 'dist', 'bundle', 'cli.js'), { ...register(), NODE_DEBUG: 'prime-compaction' })
    expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: { entry: 'unbundled', files: SWAPPED_1_6 } })
    const real = fs.realpathSync(agent)
    const file = (name) => path.join(real, 'dist', ...name.split('/'))
    const told = Object.keys(SWAPPED_1_6)
      .filter((f) => SWAPPED_1_6[f] === 'ours')
      .map((f) => `${file(`core/${f}`)}: swapped for prime-compaction/agent-1.6`)
    expect(r.stderr.trim().split('\n').map((l) => l.replace(/^PRIME-COMPACTION \d+: /, ''))).toEqual([
      `${file('bundle/cli.js')}: runs ${file('cli.js')} in its place`,
      ...told,
    ])
  })

  test('another version runs as it is, with one warning' + note, async () => {
    const r = await run('c', '1.7.0', 'dist/bundle/cli.js')
    expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: { entry: 'bundle', files: all('agent') } })
    expect(r.stderr.match(/PRIME_COMPACTION_NOT_SWAPPED/g)).toHaveLength(1)
    expect(r.stderr).toContain(`${AGENT_PACKAGE} 1.7.0 is none of the versions prime-compaction stands in for (0.78.x, 1.6.x)`)
  })

  test("1.6's `pi` entry under the hook turns the compile cache on before its unbundled build loads, as the bundled entry does; the rpc entry, which does not, leaves it off" + note, async () => {
    const agent = fakeAgent(path.join(tmp, 'h'), '1.6.0')
    // The cache's folder (Node keeps a folder of its own version in it), or null where the cache is off.
    const report = (entry) => `import nodeModule from 'node:module'\nimport path from 'node:path'\nconst dir = nodeModule.getCompileCacheDir?.()\nconsole.log(JSON.stringify({ entry: ${JSON.stringify(entry)}, cache: dir ? path.dirname(dir) : null }))\n`
    fs.writeFileSync(path.join(agent, 'dist', 'cli.js'), report('unbundled'))
    fs.writeFileSync(path.join(agent, 'dist', 'bundle', 'rpc-entry.js'), report('rpc bundle'))
    fs.writeFileSync(path.join(agent, 'dist', 'rpc-entry.js'), report('rpc unbundled'))
    // Node's own place for the cache, under this test's temporary folder.
    const tmpdir = path.join(tmp, 'h-tmp')
    fs.mkdirSync(tmpdir)
    const env = { TMPDIR: tmpdir, TMP: tmpdir, TEMP: tmpdir }
    const cache = typeof require('node:module').enableCompileCache === 'function' ? path.join(tmpdir, 'node-compile-cache') : null
    const entry = (file, hooked) => runEntry(bin(), path.join(agent, ...file.split('/')), { ...env, ...(hooked ? register() : {}) })
    expect(await entry('dist/bundle/cli.js', true)).toEqual({ code: 0, out: { entry: 'unbundled', cache }, stderr: '' })
    expect((await entry('dist/cli.js', false)).out).toEqual({ entry: 'unbundled', cache: null })
    expect(await entry('dist/bundle/rpc-entry.js', true)).toEqual({ code: 0, out: { entry: 'rpc unbundled', cache: null }, stderr: '' })
  })

  test('a bundled entry without its unbundled build runs as it is, with a warning; the files it imports are still ours' + note, async () => {
    const r = await run('d', '1.6.0', 'dist/bundle/cli.js', { unbundled: false })
    expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: { entry: 'bundle', files: SWAPPED_1_6 } })
    expect(r.stderr).toContain('dist/cli.js, which imports it, is missing')
  })

  test('where our binary does not load, the agent runs as it is, with a warning saying why' + note, async () => {
    // The package's files as published, with no binary beside them and no platform package to find.
    const copy = path.join(tmp, 'no-binary', 'prime-compaction')
    for (const file of [...require('../package.json').files, 'package.json']) fs.cpSync(path.join(ROOT, file), path.join(copy, file), { recursive: true })
    const agent = fakeAgent(path.join(tmp, 'no-binary'), '1.6.0')
    const r = await runEntry(bin(), path.join(agent, 'dist', 'bundle', 'cli.js'), register(path.join(copy, 'register.mjs')))
    expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: { entry: 'bundle', files: all('agent') } })
    expect(r.stderr.match(/PRIME_COMPACTION_NOT_SWAPPED/g)).toHaveLength(1)
    expect(r.stderr).toMatch(/prime-compaction: no native binary loads on [\w-]+\. The agent's own compaction module runs\./)
  })

  test('a release of the line that adds an export ours lacks still starts: the swapped file has the agent\'s exports too, ours in place of those of the same names' + note, async () => {
    const agent = fakeAgent(path.join(tmp, 'g'), '1.6.3')
    fs.writeFileSync(path.join(agent, 'dist', 'core', 'compaction', 'index.js'), `export const own = 'compaction/index.js'\nexport const addedLater = () => "the agent's"\nexport const prepareCompaction = () => 'agent'\n`)
    const script = path.join(agent, 'dist', 'named.js')
    fs.writeFileSync(script, `import { addedLater, prepareCompaction } from './core/compaction/index.js'\nimport * as m from './core/compaction/index.js'\nconsole.log(JSON.stringify({ added: addedLater(), own: m.own, ours: typeof m.countTokens === 'function', prepareCompaction: prepareCompaction === m.prepareCompaction && prepareCompaction.length === 2 }))\n`)
    expect(await runEntry(bin(), script, register())).toEqual({ code: 0, out: { added: "the agent's", own: 'compaction/index.js', ours: true, prepareCompaction: true }, stderr: '' })
    // Without the hook, the agent's own.
    expect((await runEntry(bin(), script)).out).toEqual({ added: "the agent's", own: 'compaction/index.js', ours: false, prepareCompaction: false })
  })

  // require() of an ES module (Node 22.12 and later, unflagged) keys it by
  // its path: the swapped file must be a module of its own there too. (On
  // Node without module.registerHooks, the hook runs on the loader thread,
  // which require() never asks: there this case is reported skipped. Bun's
  // child is Bun whatever Node runs the tests.)
  const requireSwapped = runtimeName === 'Bun' || typeof require('node:module').registerHooks === 'function'
  const requireNote = requireSwapped ? note : ` (skipped: Node ${process.version} has no module.registerHooks)`
  ;(requireSwapped ? test : test.skip)('required from CommonJS, each swapped file is ours, and the very module an import gives' + requireNote, async () => {
    for (const [name, version] of [['h', '1.6.0'], ['i', '0.78.1']]) {
      const agent = fakeAgent(path.join(tmp, name), version)
      const script = path.join(tmp, `${name}.cjs`)
      const files = ['compaction/index.js', 'messages.js'].map((f) => path.join(agent, 'dist', 'core', f))
      fs.writeFileSync(
        script,
        `const { pathToFileURL } = require('node:url')\nconst files = ${JSON.stringify(files)}\n` +
          `const required = files.map((f) => require(f))\n` +
          `Promise.all(files.map((f) => import(pathToFileURL(f).href))).then((imported) => console.log(JSON.stringify(required.map((m, k) => ({ own: m.own, ours: typeof m.countTokens === 'function', same: m === imported[k] })))))\n`,
      )
      const own = ['compaction/index.js', 'messages.js'].map((f) => ({ own: f, ours: true, same: true }))
      expect(await runEntry(bin(), script, register())).toEqual({ code: 0, out: own, stderr: '' })
    }
  })

  test("another package's files of the same names are left alone" + note, async () => {
    expect(await run('e', '1.6.0', 'dist/bundle/cli.js', { name: '@someone/pi-coding-agent' })).toEqual({ code: 0, out: { entry: 'bundle', files: all('agent') }, stderr: '' })
  })

  test(`imported by its package name, as \`${runtimeName === 'Node' ? 'node --import' : 'bun --preload'} prime-compaction/register\` does${note}`, async () => {
    fs.mkdirSync(path.join(tmp, 'node_modules'), { recursive: true })
    fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'prime-compaction'), 'junction')
    const index = pathToFileURL(path.join(fakeAgent(path.join(tmp, 'f'), '1.6.0'), 'dist', 'core', 'compaction', 'index.js')).href
    const script = path.join(tmp, 'by-name.mjs')
    fs.writeFileSync(script, `await import('prime-compaction/register')\nconst m = await import(${JSON.stringify(index)})\nconsole.log(JSON.stringify({ ours: typeof m.prepareCompaction === 'function' }))\n`)
    expect(await runEntry(bin(), script)).toEqual({ code: 0, out: { ours: true }, stderr: '' })
  })
})
