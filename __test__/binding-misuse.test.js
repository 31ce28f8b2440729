'use strict'
// The binding's own exports (binding.js) take forms the package's JS passes
// make: typed arrays, chunks, an EntryFacts object. A caller who requires
// binding.js can hand them arrays of its own and detach, shrink or write
// them from a getter the native side runs, or call an EntryFacts object
// again from inside its own call. Each such call must end in a result or an
// Error: never a crash of the host or a hang. Each case runs in a child
// process (a crash there fails the case, not the suite), of Node and of Bun
// (JavaScriptCore, and Bun's own N-API).

const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { BUN, SKIP_BUN, bunBinary } = require('./helpers/bun.js')

const ROOT = path.join(__dirname, '..')

jest.setTimeout(120_000)

// Each runtime: its binary, and the arguments that run a script with a
// full collection as `gc()`.
const RUNTIMES = {
  Node: [() => process.execPath, ['--expose-gc', '-e']],
  Bun: [bunBinary, ['-e']],
}
const GC = { Node: '', Bun: 'globalThis.gc = () => Bun.gc(true);\n' }

/** Runs `body` in a child of `runtime` with `b` (binding.js) in scope; its stdout, stderr and status. */
function inChild(runtime, body) {
  const [binary, args] = RUNTIMES[runtime]
  const script = `${GC[runtime]}const b = require(${JSON.stringify(path.join(ROOT, 'binding.js'))});\n${body}`
  const r = spawnSync(binary(), [...args, script], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, PRIME_PREBUILT: '1' } })
  return { out: r.stdout.trim(), err: r.stderr, status: r.status, signal: r.signal }
}

// A buffer of 64 MiB is its own mapping: freed, its pages are unmapped, so
// a read of them after the detach faults rather than finds stale bytes.
const DETACH = (name) => `{ let moved = structuredClone(${name}.buffer, { transfer: [${name}.buffer] }); moved = null; gc(); gc() }`

const cases = {
  'planSessionBytes: the bytes detached by a getter of options': [
    `const line = '{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/"}\\n'
     const bytes = new Uint8Array(64 << 20); bytes.fill(0x20); bytes.set(Buffer.from(line))
     const options = { get leafId() { ${DETACH('bytes')}; return undefined } }
     try { b.planSessionBytes(bytes, 'x.jsonl', options, 1); console.log('returned') } catch (e) { console.log('threw ' + e.constructor.name) }`,
    /^(returned|threw Error)$/,
  ],
  'EntryFacts.pushMessages: one array detached by the getter of another': [
    `const f = new b.EntryFacts(); const at = new Uint32Array(16 << 20)
     const chunk = { text: '', at, get contents() { ${DETACH('at')}; return new Uint8Array(16 << 20) }, calls: new Uint32Array(16 << 20), refs: new Uint32Array(0), lengths: new Uint32Array(0) }
     try { f.pushMessages(chunk); console.log('returned') } catch (e) { console.log('threw ' + e.constructor.name) }`,
    /^(returned|threw Error)$/,
  ],
  'EntryFacts.pushMessages: a resizable buffer shrunk by a getter': [
    `const f = new b.EntryFacts(); const ab = new ArrayBuffer(64 << 20, { maxByteLength: 64 << 20 }); const at = new Uint32Array(ab)
     const chunk = { text: '', at, get contents() { ab.resize(0); gc(); return new Uint8Array(16 << 20) }, calls: new Uint32Array(16 << 20), refs: new Uint32Array(0), lengths: new Uint32Array(0) }
     try { f.pushMessages(chunk); console.log('returned') } catch (e) { console.log('threw ' + e.constructor.name) }`,
    /^(returned|threw Error)$/,
  ],
  'serializeConversation: the flat codes detached by a message the native side reads': [
    `const { flatMessages } = require(${JSON.stringify(path.join(ROOT, 'flat-messages.js'))})
     const plain = [{ role: 'custom', customType: 'x', content: 'hello', display: true, timestamp: 1 }, { role: 'user', content: 'hi there', timestamp: 2 }]
     const f = flatMessages(plain, false); const codes = new Int32Array(16 << 20); codes.set(f.codes.subarray(0, 5))
     const flat = { codes, texts: f.texts, shorts: f.shorts, longArguments: 0 }
     const messages = [{ get role() { ${DETACH('codes')}; return 'custom' }, customType: 'x', content: 'hello', display: true, timestamp: 1 }, plain[1]]
     try { b.serializeConversation(messages, undefined, undefined, flat); console.log('returned') } catch (e) { console.log('threw ' + e.constructor.name) }`,
    /^(returned|threw Error)$/,
  ],
  'planCut: a getter of the entries calls the EntryFacts object it holds': [
    `const facts = new b.EntryFacts()
     const entry = (i) => ({ type: 'message', id: 'e' + i, parentId: i ? 'e' + (i - 1) : null, timestamp: '2024-01-01T00:00:00.000Z', message: { role: 'user', content: 'x', timestamp: 1 } })
     const entries = [entry(0), entry(1), entry(2)]
     const seen = []
     Object.defineProperty(entries[1], 'type', { get() {
       facts.release(); seen.push('release returned')
       try { facts.pushEntries({ first: 0, kinds: new Uint8Array(0), ids: new Uint8Array(0), lengths: new Uint32Array(0), text: '' }); seen.push('push returned') } catch (e) { seen.push(e.message) }
       return 'message' } })
     try { b.planCut(entries, { enabled: true, reserveTokens: 16384, keepRecentTokens: 1 }, 1, facts); seen.push('planCut returned') } catch (e) { seen.push('planCut threw') }
     console.log(seen.join('; '))`,
    /^release returned; the entry facts are in use by another call(; release returned; the entry facts are in use by another call)*; planCut (returned|threw)$/,
  ],
  // Lengths the native side once made room for, or walked, as given.
  'serializeConversation: an argumentEntries helper that answers a list 2^32-1 long': [
    `const msgs = [{ role: 'assistant', content: [{ type: 'toolCall', id: 'x', name: 'f', arguments: { a: 1 } }], timestamp: 1 }]
     const sparse = () => { const a = []; a.length = 2 ** 32 - 1; return a }
     const proxied = () => new Proxy([], { get: (t, k) => (k === 'length' ? 2 ** 32 - 1 : t[k]) })
     for (const helper of [sparse, proxied]) {
       try { b.serializeConversation(msgs, undefined, helper); console.log('returned') } catch (e) { console.log('threw ' + e.constructor.name) }
     }`,
    /^threw Error\nthrew Error$/,
  ],
  'serializeConversation: a flat form whose JSON text claims 2^31-1 units': [
    `const shorts = Uint16Array.from('ink', (c) => c.charCodeAt(0))
     const flat = { codes: Int32Array.from([3, 1, 7, 1, 1, 1, 1, 2 ** 31 - 1, -2]), texts: ['x'], shorts, longArguments: 1 }
     try { b.serializeConversation([{ role: 'user', content: 'x' }], undefined, undefined, flat); console.log('returned') } catch (e) { console.log('threw ' + e.constructor.name) }
     console.log(process.memoryUsage().rss < 1e9 ? 'small' : 'rss ' + process.memoryUsage().rss)`,
    /^(returned|threw Error)\nsmall$/,
  ],
  'computeFileLists and startCompaction: lists 2^32-1 long with a few paths in them': [
    `const big = []; big.length = 2 ** 32 - 1; big[5] = 'a.ts'; big[2 ** 32 - 2] = 'b.ts'
     console.log(JSON.stringify(b.computeFileLists(big, [], [])))
     const model = { id: 'x', name: 'x', api: 'openai-completions', provider: 'x', reasoning: false, contextWindow: 100000, maxTokens: 1000 }
     const prep = { firstKeptEntryId: 'e1', messagesToSummarize: [{ role: 'user', content: 'hi', timestamp: 1 }], turnPrefixMessages: [], isSplitTurn: false, tokensBefore: 10, fileOps: { read: new Set(), written: new Set(), edited: new Set() }, settings: { enabled: true, reserveTokens: 100, keepRecentTokens: 1 } }
     try { b.startCompaction(prep, () => ({ readFiles: big, modifiedFiles: [] }), model, undefined, 1, undefined); console.log('started') } catch (e) { console.log('threw ' + e.constructor.name) }`,
    /^\{"readFiles":\["a\.ts","b\.ts"\],"modifiedFiles":\[\]\}\n(started|threw Error)$/,
  ],
  'sessionFileBranch: bytes over a SharedArrayBuffer give what the same bytes give': [
    `const text = require('node:fs').readFileSync(${JSON.stringify(path.join(ROOT, 'examples', 'session.jsonl'))})
     const shared = new Uint8Array(new SharedArrayBuffer(text.length)); shared.set(text)
     const a = JSON.stringify(b.sessionFileBranch(text, 'x.jsonl')); const s = JSON.stringify(b.sessionFileBranch(shared, 'x.jsonl'))
     console.log(a === s && a.length > 100 ? 'same' : 'different')`,
    /^same$/,
  ],
}

if (SKIP_BUN) test.skip(`the binding's exports, misused, on Bun (skipped: ${BUN.reason})`, () => {})

describe.each(Object.keys(RUNTIMES).filter((r) => r === 'Node' || !SKIP_BUN))("the binding's exports, misused, on %s: a result or an Error, never a crash or a hang", (runtime) => {
  test.each(Object.keys(cases))('%s', (name) => {
    const [body, expected] = cases[name]
    const r = inChild(runtime, body)
    expect({ status: r.status, signal: r.signal, err: r.status === 0 ? '' : r.err.slice(-400) }).toEqual({ status: 0, signal: null, err: '' })
    expect(r.out).toMatch(expected)
  })
})
