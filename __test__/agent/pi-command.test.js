'use strict'
// The agent's own `pi` command (the file its package.json names as its
// bin, run by the line's Node 22), with prime-compaction/register imported
// first (`node --import`) as the README runs it, and without: in RPC mode, three prompts to
// the scripted model, then a manual compaction. With the hook the summary
// request is ours (this package's system prompt) and the session file holds
// the compaction it answered; without it, the agent's own. On 1.6 the bin is
// the bundled build, whose chunk holding the module the hook patches. The same
// bin on Bun, with the hook preloaded (`bun --preload`), as the agent runs
// there too.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { LINES } = require('./lines.js')
const { unsupported, notRun } = require('./run.js')
const { runPi, SUMMARY, PROMPTS } = require('./pi-rpc.js')
const { loadReference } = require('../helpers/reference.js')
const { REGISTER } = require('../helpers/fake-agent.js')
const { BUN, SKIP_BUN, bunBinary } = require('../helpers/bun.js')

jest.setTimeout(120_000)

describe.each(LINES.map((line) => [line.version, line]))('the `pi` command of agent %s', (name, line) => {
  if (unsupported(line)) {
    notRun(line, '`pi` command')
    return
  }
  let ours
  let own
  let onBun
  let prompts
  beforeAll(async () => {
    // As the README runs it: `node --import=…/register.mjs <the pi bin>` (NODE_OPTIONS: node-versions.test.js), and `bun --preload=…/register.mjs <the pi bin>`.
    // (with ours, NODE_DEBUG: the hook says what it swapped)
    const debug = { NODE_DEBUG: 'prime-compaction' }
    const bun = SKIP_BUN ? undefined : Promise.resolve().then(() => runPi(line, debug, bunBinary(), [`--preload=${REGISTER}`]))
    bun?.catch(() => {})
    ;[ours, own] = await Promise.all([runPi(line, debug, line.node.binary, [`--import=${REGISTER}`]), runPi(line, {})])
    onBun = bun
    prompts = {
      ours: require(line.entry).SUMMARIZATION_SYSTEM_PROMPT,
      agent: (await loadReference(line.line)).SUMMARIZATION_SYSTEM_PROMPT,
    }
  })

  test('the two modules have different system prompts, so a request tells which one made it', () => {
    expect(typeof prompts.ours).toBe('string')
    expect(typeof prompts.agent).toBe('string')
    expect(prompts.ours).not.toBe(prompts.agent)
  })

  test.each([
    ['ours', '', () => ours],
    ['agent', '', () => own],
    ...(SKIP_BUN ? [] : [['ours', ', on Bun', () => onBun]]),
  ])('with %s%s: the compaction ran, its requests carried that module\'s prompt, and the session file holds it', async (whose, where, run) => {
    const { compacted, systemPrompts, compactions, agentTurns, stderr } = await run()
    expect(agentTurns).toBe(PROMPTS)
    expect({ success: compacted.success, error: compacted.error }).toEqual({ success: true, error: undefined })
    expect(compacted.data.summary.startsWith(SUMMARY)).toBe(true)
    expect(systemPrompts.length).toBeGreaterThan(0)
    expect(new Set(systemPrompts)).toEqual(new Set([prompts[whose]]))
    expect(compactions.map((e) => [e.summary, e.firstKeptEntryId])).toEqual([[compacted.data.summary, compacted.data.firstKeptEntryId]])
    expect(stderr).not.toMatch(/PRIME_COMPACTION/)
  })

  if (SKIP_BUN) test.skip(`with ours, on Bun (skipped: ${BUN.reason})`, () => {})

  // 1.6.0's bin is a bundle, its compaction module inlined in one chunk,
  // which lib/agent-swap.js knows by its hash: it runs as it is, that chunk
  // patched (lib/agent-bundle.js), not the unbundled build.
  test.each([['', () => ours], ...(SKIP_BUN ? [] : [[', on Bun', () => onBun]])])("with ours%s, the hook names what it swapped: on 1.6 the bundle's chunk, on 0.78 the module's files", async (where, run) => {
    const { stderr } = await run()
    const said = stderr.split('\n').filter((l) => l.startsWith('PRIME-COMPACTION ')).map((l) => l.replace(/^PRIME-COMPACTION \d+: /, '').replace(fs.realpathSync(line.packageDir) + path.sep, ''))
    if (line.line === '1.6') {
      expect(said).toEqual([
        expect.stringMatching(/^dist\/bundle\/cli\.js: runs as it is; dist\/bundle\/chunks\/chunk-\w+\.js loads with prime-compaction\/agent-1\.6 in its compaction module's place$/),
        expect.stringMatching(/^dist\/bundle\/chunks\/chunk-\w+\.js: its compaction module's 33 declarations bound to prime-compaction\/agent-1\.6$/),
      ])
    } else {
      expect(said.sort()).toEqual(['dist/core/compaction/index.js: swapped for prime-compaction/agent-0.78', 'dist/core/messages.js: swapped for prime-compaction/agent-0.78'])
    }
  })

  // The patched chunk hands over its own pi-ai's completeSimple (the one
  // installed beside the bundle is another copy): a summary request made
  // without a streamFn, as 1.6's bug report may make it, goes there.
  if (line.line === '1.6') {
    test.each([['', () => [line.node.binary, `--import=${REGISTER}`]], ...(SKIP_BUN ? [] : [[', on Bun', () => [bunBinary(), `--preload=${REGISTER}`]]])])("with ours%s, a request without a streamFn goes to the bundle's own pi-ai", (where, runtime) => {
      const { BUNDLES } = require('../../lib/agent-swap.js')
      const chunks = path.join(line.packageDir, 'dist', 'bundle', 'chunks')
      const row = BUNDLES.find((b) => b.version === line.version)
      // The chunk that exports the bundle's pi-ai, by what the patched one imports completeSimple from.
      const piAi = /import\{[^}]*\bcompleteSimple\b[^}]*\}from"\.\/(chunk-\w+\.js)"/.exec(fs.readFileSync(path.join(line.packageDir, row.chunk), 'utf8'))[1]
      const script = `import { createRequire } from 'node:module'
        const require = createRequire(import.meta.url)
        await import(${JSON.stringify(pathToFileURL(path.join(line.packageDir, row.chunk)).href)})
        const { completeSimple } = await import(${JSON.stringify(pathToFileURL(path.join(chunks, piAi)).href)})
        const { completeSimpleOf } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'host-pi-ai.js'))})
        const got = await completeSimpleOf('@earendil-works/pi-ai/compat', [${JSON.stringify(path.join(line.packageDir, row.chunk))}])
        console.log(typeof completeSimple, got === completeSimple)
        process.exit(0)`
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-handover-'))
      try {
        fs.writeFileSync(path.join(dir, 'handover.mjs'), script)
        const [binary, hook] = runtime()
        const r = spawnSync(binary, [hook, path.join(dir, 'handover.mjs')], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } })
        expect({ status: r.status, out: r.stdout.trim(), err: r.status === 0 ? '' : r.stderr.slice(-600) }).toEqual({ status: 0, out: 'function true', err: '' })
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  }

  // The agent does not validate a settings file's compaction.enabled, and
  // 0.78 no compaction setting at all: what a hand-written one gives reaches
  // shouldCompact (before every prompt) and prepareCompaction as it is.
  test('a hand-written settings file (enabled: 0; on 0.78 token settings as strings): every prompt answered and the same compaction as the agent\'s own module', async () => {
    const handWritten = { enabled: 0, ...(line.line === '0.78' ? { reserveTokens: '1000', keepRecentTokens: '100' } : {}) }
    const [withOurs, withOwn] = await Promise.all([runPi(line, {}, line.node.binary, [`--import=${REGISTER}`], handWritten), runPi(line, {}, line.node.binary, [], handWritten)])
    for (const run of [withOurs, withOwn]) {
      expect(run.agentTurns).toBe(PROMPTS)
      expect({ success: run.compacted.success, error: run.compacted.error }).toEqual({ success: true, error: undefined })
    }
    expect(new Set(withOurs.systemPrompts)).toEqual(new Set([prompts.ours]))
    // The cut keepRecentTokens gave, as a place in the session file (ids differ between runs).
    const cut = (run) => ({ at: run.compactions.map((c) => run.entries.findIndex((e) => e.id === c.firstKeptEntryId)), tokensBefore: run.compacted.data.tokensBefore })
    expect(cut(withOurs)).toEqual(cut(withOwn))
    expect(cut(withOurs).at).toHaveLength(1)
    expect(cut(withOurs).at[0]).toBeGreaterThan(0)
  })
})
