// Side-by-side timing of the summarizer transcript: ours
// (projectForSummary + serializeConversation, and serializeConversation
// alone) against the reference's serializeConversation(convertToLlm(messages)),
// on real-shaped messages first (benches/sessions.mjs), then generated ones;
// and of convertToLlm alone, ours against the reference's (the agent calls
// it before every model request).
// Usage: node benches/serialize.mjs [--line 0.78|1.6] [--phases] [--real-only | --generated-only] [sizes...]
//   (default: the 0.78 line, sizes 1000 10000 100000)
// --line picks the agent line: ours from its entry point, the reference from
// that agent's own module.
// --phases also times serializeConversation without its native part (the
// JS pass, and the assembly of a recipe made once beforehand): how fast the
// rest would be if the native part cost nothing.
// Prints a markdown table. The formats differ on purpose (see
// docs/serialization.md), so equality is asserted where they agree: the
// user/assistant-text subset of each session must serialize identically.

import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'

import { realSource, realMessages } from './sessions.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const lineAt = process.argv.indexOf('--line')
const line = lineAt >= 0 ? process.argv.splice(lineAt, 2)[1] : '0.78'
const AGENTS = { '0.78': ['@earendil-works', 'pi-coding-agent'], '1.6': ['pi-coding-agent-1.6'] }
if (!AGENTS[line]) throw new Error(`--line: one of ${Object.keys(AGENTS).join(', ')}`)
const ours = require(`../agent-${line}.js`)
const core = path.join(here, '..', 'node_modules', ...AGENTS[line], 'dist', 'core')
const { serializeConversation: refSerialize } = await import(pathToFileURL(path.join(core, 'compaction', 'index.js')).href)
const { convertToLlm } = await import(pathToFileURL(path.join(core, 'messages.js')).href)

const { mulberry32 } = require('../scripts/prng.js')

const WORDS = 'the a fix test build file read edit error function value type module import return async await const let config path'.split(' ')

function session(n, seed) {
  const rnd = mulberry32(seed)
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1))
  const text = (len) => {
    let s = ''
    while (s.length < len) s += WORDS[int(0, WORDS.length - 1)] + (rnd() < 0.1 ? '\n' : ' ')
    return s.slice(0, len)
  }
  const image = () => ({ type: 'image', data: 'iVBORw0KGgo'.repeat(int(50, 400)), mimeType: 'image/png' })
  const messages = []
  let t = 1_700_000_000_000
  let id = 0
  while (messages.length < n) {
    const content = [{ type: 'text', text: text(int(20, 400)) }]
    if (rnd() < 0.03) content.push(image())
    messages.push({ role: 'user', content, timestamp: t++ })
    const steps = int(1, 4)
    for (let s = 0; s < steps && messages.length < n; s++) {
      const calls = []
      for (let c = int(0, 3); c > 0; c--) {
        const name = ['read', 'bash', 'edit', 'write', 'grep'][int(0, 4)]
        calls.push({ type: 'toolCall', id: `toolu_${(id++).toString(36)}`, name, arguments: { path: `src/${text(8).trim()}.ts`, limit: int(1, 500) } })
      }
      messages.push({
        role: 'assistant',
        content: [{ type: 'thinking', thinking: text(int(50, 800)), thinkingSignature: 'sig' }, { type: 'text', text: text(int(10, 300)) }, ...calls],
        api: 'openai-responses',
        provider: 'openai',
        model: 'gpt-5',
        usage: { input: 100, output: 50, cacheRead: 0, cacheWrite: 0, totalTokens: 150, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: calls.length ? 'toolUse' : 'stop',
        timestamp: t++,
      })
      for (const c of calls) {
        const body = [{ type: 'text', text: text(int(200, 5000)) }]
        if (rnd() < 0.05) body.push(image())
        messages.push({ role: 'toolResult', toolCallId: c.id, toolName: c.name, content: body, isError: rnd() < 0.1, timestamp: t++ })
      }
    }
    if (rnd() < 0.02) messages.push({ role: 'bashExecution', command: 'ls', output: text(200), exitCode: 0, cancelled: false, truncated: false, timestamp: t++ })
  }
  return messages.slice(0, n)
}

/**
 * Median times of each function, and its paired ratio to the first
 * (pairedRatio), each round running every one once, in an order drawn
 * afresh (seeded), so every one meets the same machine load and follows
 * every other one about equally often; rounds for about 6 s, at least 15
 * and at most 200.
 *
 * A fixed rotation (each round starting one further along) lets each
 * function follow only one or two others, and its period can lock onto
 * the garbage collector's, so a function's time depends on which one ran
 * before it (docs/serialization.md, "How it is measured").
 */
// Fewer rounds leave the interval of a paired ratio (see pairedRatio)
// too wide to tell anything: with 9 it spans the smallest ratio to the
// largest.
const MIN_ROUNDS = 15

function timeAlternating(fns) {
  const outs = fns.map((fn) => fn()) // warm up
  const runs = fns.map(() => [])
  const deadline = performance.now() + 6000
  const rnd = mulberry32(20261130)
  const order = fns.map((_, k) => k)
  do {
    for (let k = order.length - 1; k > 0; k--) {
      const j = Math.floor(rnd() * (k + 1))
      ;[order[k], order[j]] = [order[j], order[k]]
    }
    for (const i of order) {
      const t0 = performance.now()
      fns[i]()
      runs[i].push(performance.now() - t0)
    }
  } while ((performance.now() < deadline || runs[0].length < MIN_ROUNDS) && runs[0].length < 200)
  return runs.map((r, i) => {
    const paired = pairedRatio(r, runs[0])
    const sorted = [...r].sort((x, y) => x - y)
    return { ms: sorted[Math.floor(sorted.length / 2)], out: outs[i], paired }
  })
}

/**
 * The median of `times[k] / base[k]` (the two measured in the same
 * round) and a 95% confidence interval for it: the order statistics that
 * bracket the median with at least 95% probability whatever the
 * distribution (binomial, normal approximation). A ratio's median over
 * paired rounds shrugs off what drifts from round to round (the
 * machine, the heap); its interval says whether a difference is more
 * than noise.
 */
function pairedRatio(times, base) {
  const r = times.map((t, k) => t / base[k]).sort((x, y) => x - y)
  const n = r.length
  const half = 0.98 * Math.sqrt(n)
  const lo = Math.max(0, Math.floor(n / 2 - half) - 1)
  const hi = Math.min(n - 1, Math.ceil(n / 2 + half))
  return { median: r[Math.floor(n / 2)], lo: r[lo], hi: r[hi], rounds: n }
}

const phases = process.argv.includes('--phases')
const { flatMessages, releaseFlat, assembleTranscript } = require('../flat-messages.js')
const { platformSuffix, binaryName } = require('../platform.js')
const binding = phases ? require(`../${binaryName}.${platformSuffix()}.node`) : null

const sizes = process.argv.slice(2).map(Number).filter(Boolean)
const sets = []
if (!process.argv.includes('--generated-only')) {
  const source = await realSource()
  sets.push({ title: `Real-shaped: ${source.label}`, make: realMessages })
}
if (!process.argv.includes('--real-only')) {
  // As the agent holds them: parsed from the session file, so every string
  // is flat. (Strings built with += are ropes, which the first reader of
  // their characters, on either side, has to flatten.)
  sets.push({ title: 'Generated (seeded, in this file)', make: async (n) => JSON.parse(JSON.stringify(session(n, 42 + n))) })
}

async function measureSet(make) {
  const rows = []
  for (const n of sizes.length ? sizes : [1000, 10000, 100000]) {
    const messages = await make(n)
    // Where the formats agree: user text and assistant text lines.
    const textOnly = messages
      .filter((m) => m.role === 'user' || m.role === 'assistant')
      .map((m) => (m.role === 'assistant' ? { ...m, content: m.content.filter((b) => b.type === 'text') } : m))
    if (ours.serializeConversation(textOnly) !== refSerialize(convertToLlm(textOnly))) {
      throw new Error(`outputs differ on the shared subset (n=${n})`)
    }
    const fns = [
      () => refSerialize(convertToLlm(messages)),
      () => ours.serializeConversation(messages),
      () => ours.serializeForSummary(messages),
      () => ours.serializeConversation(ours.projectForSummary(messages)),
    ]
    if (phases) {
      const flat = flatMessages(messages)
      const recipe = binding.serializeConversation(messages, undefined, undefined, flat)
      releaseFlat(flat)
      fns.push(() => {
        releaseFlat(flatMessages(messages))
        return assembleTranscript(recipe)
      })
    }
    const [ref, ser, fused, proj, noNative] = timeAlternating(fns)
    if (fused.out !== proj.out) throw new Error(`serializeForSummary differs from serializeConversation(projectForSummary()) (n=${n})`)
    if (phases && noNative.out !== ser.out) throw new Error(`the recipe made beforehand gives another transcript (n=${n})`)
    const [refConvert, convert] = timeAlternating([() => convertToLlm(messages), () => ours.convertToLlm(messages)])
    if (JSON.stringify(convert.out) !== JSON.stringify(refConvert.out)) throw new Error(`convertToLlm differs (n=${n})`)
    rows.push({ n, ref, ser, fused, proj, noNative, refConvert, convert })
  }
  return rows
}

const f = (ms) => ms.toFixed(1)
const kb = (s) => `${(s.length / 1024).toFixed(0)} KiB`
const ratio = (ours, ref) => `${(ours.ms / ref.ms).toFixed(2)}`
const p = ({ paired: { median, lo, hi } }) => `${median.toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}]`

console.log(`serializeConversation / serializeForSummary, the ${line} line: node ${process.version}, ${new Date().toISOString().slice(0, 10)}`)
for (const { title, make } of sets) {
  const rows = await measureSet(make)
  console.log(`\n### ${title}\n`)
  console.log('| messages | reference: convertToLlm + serialize | ours: serializeConversation | ours: serializeForSummary | ours: serializeConversation(projectForSummary()) | time ours/reference: serialize, serializeForSummary, two calls |')
  console.log('|---:|---:|---:|---:|---:|---:|')
  for (const { n, ref, ser, fused, proj } of rows) {
    console.log(
      `| ${n} | ${f(ref.ms)} ms (${kb(ref.out)}) | ${f(ser.ms)} ms (${kb(ser.out)}) | ${f(fused.ms)} ms (${kb(fused.out)}) | ${f(proj.ms)} ms | ${ratio(ser, ref)}, ${ratio(fused, ref)}, ${ratio(proj, ref)} |`,
    )
  }
  console.log('\nPer-round ratios ours/reference (median [95% interval], rounds):\n')
  console.log('| messages | serializeConversation | serializeForSummary | two calls |')
  console.log('|---:|---:|---:|---:|')
  for (const { n, ser, fused, proj } of rows) console.log(`| ${n} | ${p(ser)} | ${p(fused)} | ${p(proj)} (${ser.paired.rounds}) |`)
  console.log('\nconvertToLlm alone, ours against the reference\'s:\n')
  console.log('| messages | reference | ours | time ours/reference | per-round ratio (rounds) |')
  console.log('|---:|---:|---:|---:|---:|')
  for (const { n, refConvert, convert } of rows) {
    console.log(`| ${n} | ${refConvert.ms.toFixed(3)} ms | ${convert.ms.toFixed(3)} ms | ${ratio(convert, refConvert)} | ${p(convert)} (${convert.paired.rounds}) |`)
  }
  if (phases) {
    console.log('\n| messages | serializeConversation without its native part | time ours/reference |')
    console.log('|---:|---:|---:|')
    for (const { n, ref, noNative } of rows) console.log(`| ${n} | ${f(noNative.ms)} ms | ${ratio(noNative, ref)} |`)
  }
}
