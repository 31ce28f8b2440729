'use strict'
// An extension of the real agent (a TypeScript file, loaded by the agent's
// own extension loader, as pi loads one) that imports the compaction
// functions from the agent's package, as a custom-compaction extension
// does: with prime-compaction/register it gets this package's functions,
// the very ones the agent runs; without it, the agent's own. On the line's
// Node 22 (`--import`) and on Bun (`--preload`; `--no-install`, so that Bun
// does not fetch the package for a file outside any project, which it
// otherwise does before pi's own resolution is asked).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { LINES, root } = require('./lines.js')
const { unsupported, notRun } = require('./run.js')
const { runEntry, registerOptions, bunRegisterOptions } = require('../helpers/fake-agent.js')
const { BUN, SKIP_BUN, bunBinary } = require('../helpers/bun.js')

jest.setTimeout(60_000)

/** What the extension imports from the agent's package. */
const ALL = ['compact', 'serializeConversation', 'estimateTokens']

const EXTENSION = `import { ${ALL.join(', ')} } from '@earendil-works/pi-coding-agent'
export default function (pi: unknown): void {
  ;(globalThis as any).__extensionSaw = { ${ALL.join(', ')} }
}
`

/** Loads `extension` with the agent's loader (`dist` its folder) and prints what it saw against the agent's and ours. */
const script = (dist, extension, entry) => `const agent = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'index.js')).href)})
const loader = await import(${JSON.stringify(pathToFileURL(path.join(dist, 'core', 'extensions', 'loader.js')).href)})
const ours = await import(${JSON.stringify(pathToFileURL(path.join(root, entry)).href)})
const loaded = await loader.loadExtensions([${JSON.stringify(extension)}], ${JSON.stringify(path.dirname(extension))}, undefined, loader.createExtensionRuntime())
const saw = globalThis.__extensionSaw ?? {}
const names = ${JSON.stringify(ALL)}
console.log(JSON.stringify({
  errors: loaded.errors.map((e) => String(e.error)),
  theAgents: names.filter((n) => typeof saw[n] === 'function' && saw[n] === agent[n]),
  ours: names.filter((n) => typeof saw[n] === 'function' && saw[n] === ours[n]),
}))
`

describe.each(LINES.map((line) => [line.version, line]))('an extension of agent %s importing the compaction functions from its package', (name, line) => {
  if (unsupported(line)) {
    notRun(line, 'extension import')
    return
  }
  let tmp
  let file
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), `prime-compaction-extension-${line.version}-`))
    const extension = path.join(tmp, 'compaction-extension.ts')
    fs.writeFileSync(extension, EXTENSION)
    file = path.join(tmp, 'load.mjs')
    fs.writeFileSync(file, script(path.join(line.packageDir, 'dist'), extension, `${line.entry.replace('prime-compaction/', '')}.mjs`))
  })
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  test('on Node, with the hook: gets ours, the functions the agent runs', async () => {
    expect(await runEntry(line.node.binary, file, registerOptions())).toEqual({ code: 0, out: { errors: [], theAgents: ALL, ours: ALL }, stderr: '' })
  })

  test("on Node, without it: gets the agent's own", async () => {
    expect(await runEntry(line.node.binary, file)).toEqual({ code: 0, out: { errors: [], theAgents: ALL, ours: [] }, stderr: '' })
  })

  ;(SKIP_BUN ? test.skip : test)(`on Bun, with the hook: gets ours, the functions the agent runs${SKIP_BUN ? ` (skipped: ${BUN.reason})` : ''}`, async () => {
    const { BUN_OPTIONS } = bunRegisterOptions()
    expect(await runEntry(bunBinary(), file, { BUN_OPTIONS: `--no-install ${BUN_OPTIONS}` })).toEqual({ code: 0, out: { errors: [], theAgents: ALL, ours: ALL }, stderr: '' })
  })
})
