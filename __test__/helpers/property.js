'use strict'
// Runs fast-check properties with a reported, replayable seed and prints a
// compact, runnable JavaScript literal of the (shrunk) counterexample.
//
// Environment:
//   PARITY_RUNS  number of generated cases per main property (default 2000)
//   PARITY_SEED  base seed (default: random, printed on failure)
//   PARITY_PATH  fast-check replay path (use together with PARITY_SEED and PARITY_ONLY)
//   PARITY_SHRINK_MS  time budget for shrinking a failure (default 8000)
//   PARITY_ONLY  the property PARITY_PATH replays: the one whose name contains this text
//                (the others run as usual; pick the test with Jest's -t, as a failure's
//                replay line does)

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const fc = require('fast-check')

// Time budget for shrinking one failing property (PARITY_SHRINK_MS, default 8 s; entry-array delta debugging gets half as much again).
const SHRINK_TIME_MS = Math.max(0, Number(process.env.PARITY_SHRINK_MS) || 8_000)

const NUM_RUNS = Math.max(1, Number(process.env.PARITY_RUNS) || 2000)
const BASE_SEED =
  process.env.PARITY_SEED !== undefined && process.env.PARITY_SEED !== ''
    ? Number(process.env.PARITY_SEED) | 0
    : (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0

// ---------------------------------------------------------------------------
// JS-literal printer (keeps undefined, NaN, -0, Sets, Dates, functions, lone surrogates, ...)
// ---------------------------------------------------------------------------

const MIN_RUN = 120

function stringSource(s) {
  if (s.length < MIN_RUN) return JSON.stringify(s)
  // Compress long periodic runs as "unit".repeat(k).
  const parts = []
  let literalStart = 0
  let i = 0
  while (i < s.length) {
    let best = null
    for (let p = 1; p <= 32 && i + p <= s.length; p++) {
      let j = i + p
      while (j < s.length && s.charCodeAt(j) === s.charCodeAt(j - p)) j++
      const reps = Math.floor((j - i) / p)
      if (reps * p >= MIN_RUN && (!best || reps * p > best.len)) best = { p, reps, len: reps * p }
    }
    if (best) {
      if (i > literalStart) parts.push(JSON.stringify(s.slice(literalStart, i)))
      parts.push(`${JSON.stringify(s.slice(i, i + best.p))}.repeat(${best.reps})`)
      i += best.len
      literalStart = i
    } else {
      i++
    }
  }
  if (literalStart < s.length) parts.push(JSON.stringify(s.slice(literalStart)))
  return parts.length === 1 ? parts[0] : `(${parts.join(' + ')})`
}

function numberSource(n) {
  if (Object.is(n, -0)) return '-0'
  if (Number.isNaN(n)) return 'NaN'
  if (n === Infinity) return 'Infinity'
  if (n === -Infinity) return '-Infinity'
  return String(n)
}

function keySource(k) {
  if (typeof k === 'symbol') return `[${symbolSource(k)}]`
  if (k === '__proto__') return '["__proto__"]'
  if (/^[A-Za-z_$][\w$]*$/.test(k)) return k
  return JSON.stringify(k)
}

function symbolSource(sym) {
  return sym.description === undefined ? 'Symbol()' : `Symbol(${JSON.stringify(sym.description)})`
}

function isObjectPrototype(proto) {
  return Object.getPrototypeOf(proto) === null && typeof proto.hasOwnProperty === 'function'
}

/** Source for a prototype object; getters are shown returning the value they give now. */
function protoSource(proto, indent, seen) {
  const parts = []
  for (const key of Reflect.ownKeys(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, key)
    if ('value' in d) parts.push(`${keySource(key)}: ${toSource(d.value, `${indent}  `, seen)}`)
    else if (d.get) {
      let shown
      try {
        shown = `get ${keySource(key)}() { return ${toSource(d.get.call(proto), `${indent}  `, seen)} }`
      } catch {
        shown = Function.prototype.toString.call(d.get)
      }
      parts.push(shown)
    }
  }
  const parent = Object.getPrototypeOf(proto)
  const body = `{ ${parts.join(', ')} }`
  if (parent && !isObjectPrototype(parent)) return `Object.assign(Object.create(${protoSource(parent, indent, seen)}), ${body})`
  return body
}

function toSource(value, indent = '', seen = new Set()) {
  switch (typeof value) {
    case 'undefined':
      return 'undefined'
    case 'string':
      return stringSource(value)
    case 'number':
      return numberSource(value)
    case 'boolean':
      return String(value)
    case 'bigint':
      return `${value}n`
    case 'symbol':
      return symbolSource(value)
    case 'function':
      return `(${Function.prototype.toString.call(value)})`
    default:
      break
  }
  if (value === null) return 'null'
  if (seen.has(value)) return '/* circular */ null'
  seen.add(value)
  try {
    const inner = `${indent}  `
    const tag = Object.prototype.toString.call(value).slice(8, -1)
    if (Array.isArray(value)) {
      if (value.length === 0) return '[]'
      const items = []
      for (let i = 0; i < value.length; i++) items.push(i in value ? toSource(value[i], inner, seen) : '')
      const oneLine = `[${items.join(', ')}]`
      if (oneLine.length < 100 && !oneLine.includes('\n')) return oneLine
      return `[\n${items.map((x) => inner + x).join(',\n')}${value.length > 0 && !(value.length - 1 in value) ? ',' : ''}\n${indent}]`
    }
    if (tag === 'Set') return `new Set(${toSource([...value], indent, seen)})`
    if (tag === 'Map') return `new Map(${toSource([...value], indent, seen)})`
    if (tag === 'Date') return `new Date(${numberSource(value.getTime())})`
    if (tag === 'Number' || tag === 'String' || tag === 'Boolean') return `new ${tag}(${toSource(value.valueOf(), indent, seen)})`
    if (ArrayBuffer.isView(value)) return `${tag}.from(${toSource([...value], indent, seen)})`
    const proto = Object.getPrototypeOf(value)
    const props = []
    for (const key of Reflect.ownKeys(value)) {
      const desc = Object.getOwnPropertyDescriptor(value, key)
      let text
      if ('value' in desc) text = `${keySource(key)}: ${toSource(desc.value, inner, seen)}`
      else text = desc.get ? Function.prototype.toString.call(desc.get) : `set ${keySource(key)}(_) {}`
      if (!desc.enumerable) text = `/* non-enumerable */ ${text}`
      props.push(text)
    }
    let body
    if (props.length === 0) body = '{}'
    else {
      const oneLine = `{ ${props.join(', ')} }`
      body = oneLine.length < 100 && !oneLine.includes('\n') ? oneLine : `{\n${props.map((x) => inner + x).join(',\n')}\n${indent}}`
    }
    if (proto === null) return `Object.assign(Object.create(null), ${body})`
    if (!isObjectPrototype(proto)) return `Object.assign(Object.create(${protoSource(proto, indent, seen)}), ${body})`
    return body
  } finally {
    seen.delete(value)
  }
}

// ---------------------------------------------------------------------------
// Property runner
// ---------------------------------------------------------------------------

function isSessionEntries(value) {
  return (
    Array.isArray(value) &&
    value.length > 1 &&
    value.every((e) => e && typeof e === 'object' && typeof e.type === 'string' && 'id' in e && 'parentId' in e)
  )
}

function relink(entries) {
  return entries.map((e, i) => {
    const parentId = i === 0 ? null : entries[i - 1].id
    // Keep the prototype: entries may inherit `type` from it.
    return e.parentId === parentId ? e : Object.assign(Object.create(Object.getPrototypeOf(e)), e, { parentId })
  })
}

/** A failure message with the incidental details (numbers, strings, values) blanked out. */
function failureSignature(err) {
  const msg = err && typeof err.message === 'string' ? err.message : String(err)
  return msg
    .split(', reference returned')[0]
    .split(', ours returned')[0]
    .replace(/"(?:[^"\\]|\\.)*"/g, 'S')
    .replace(/-?\d+(\.\d+)?(e[+-]?\d+)?/gi, 'N')
    .slice(0, 240)
}

function failsWith(predicate, args) {
  try {
    const r = predicate(...args)
    return r === false ? new Error('predicate returned false') : null
  } catch (err) {
    return err
  }
}

/**
 * Greedy delta debugging of SessionEntry[] arguments: removes chunks of entries
 * (re-linking parentId) while the predicate still fails the same way, within timeBudgetMs.
 */
function minimizeSessionArgs(args, predicate, timeBudgetMs) {
  const deadline = Date.now() + timeBudgetMs
  let current = args.slice()
  let error = null
  // Only keep reductions that fail the same way (do not drift to another failure).
  const original = failsWith(predicate, current)
  if (!original) return { changed: false, args, error: null, steps: 0 }
  const signature = failureSignature(original)
  let steps = 0
  let changed = false
  for (let a = 0; a < current.length; a++) {
    if (!isSessionEntries(current[a])) continue
    let entries = current[a]
    let chunk = Math.max(1, Math.floor(entries.length / 2))
    while (chunk >= 1 && Date.now() < deadline) {
      let progressed = false
      for (let start = 0; start < entries.length && Date.now() < deadline; ) {
        if (entries.length - chunk < 1) break
        const candidate = relink(entries.slice(0, start).concat(entries.slice(start + chunk)))
        const tryArgs = current.slice()
        tryArgs[a] = candidate
        const err = failsWith(predicate, tryArgs)
        if (err && failureSignature(err) === signature) {
          entries = candidate
          current = tryArgs
          error = err
          steps++
          changed = true
          progressed = true
        } else {
          start += chunk
        }
      }
      if (!progressed) chunk = Math.floor(chunk / 2)
    }
  }
  if (changed && !error) error = failsWith(predicate, current)
  return { changed, args: current, error, steps }
}

function slug(s) {
  return s.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').slice(0, 60)
}

/** The Jest arguments that run just the current test: its file and `-t` its name. */
function replayFilter() {
  const { testPath, currentTestName } = expect.getState()
  const file = path.relative(path.join(__dirname, '..', '..'), testPath)
  const exact = `^${currentTestName.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}$`
  return `${file} -t ${JSON.stringify(exact)}`
}

/**
 * Runs `predicate(...values)` (throw or return false to fail) over `arbitraries`.
 * On failure, throws an Error with the seed, replay path, the difference reported
 * by the predicate and the shrunk counterexample as a JavaScript literal.
 */
function checkProperty(name, arbitraries, predicate, options = {}) {
  const numRuns = options.numRuns ?? NUM_RUNS
  const property = fc.property(...arbitraries, predicate)
  // Phase 1: find a failure without shrinking.
  const params = {
    numRuns,
    seed: BASE_SEED,
    endOnFailure: true,
    interruptAfterTimeLimit: options.timeLimitMs ?? 240_000,
  }
  if (process.env.PARITY_PATH && process.env.PARITY_ONLY && name.includes(process.env.PARITY_ONLY)) params.path = process.env.PARITY_PATH
  let out = fc.check(property, params)
  if (out.interrupted && !out.failed) {
    // Fewer cases than the test claims is no pass.
    throw new Error(`Property "${name}" ran out of time after ${out.numRuns} of ${numRuns} runs (limit ${params.interruptAfterTimeLimit} ms; PARITY_RUNS sets fewer)`)
  }
  if (!out.failed) return out
  // Phase 2: replay the failure and shrink it, within a time budget (shrinking deeply
  // nested sessions can otherwise take minutes); the smallest failure found so far wins.
  const firstFailure = out
  const shrunk = fc.check(property, {
    seed: out.seed,
    path: out.counterexamplePath,
    numRuns: 1,
    interruptAfterTimeLimit: SHRINK_TIME_MS,
  })
  if (shrunk.failed) out = shrunk
  out = { ...out, numRuns: firstFailure.numRuns }
  // Phase 3: delta-debug session entry arrays (drop entries, re-link parentId).
  if (out.counterexample) {
    const min = minimizeSessionArgs(out.counterexample, predicate, SHRINK_TIME_MS / 2)
    if (min.changed) out = { ...out, counterexample: min.args, errorInstance: min.error, numShrinks: out.numShrinks + min.steps }
  }
  const ce = out.counterexample
  const source = ce ? (ce.length === 1 ? toSource(ce[0]) : toSource(ce)) : '(none)'
  const file = path.join(os.tmpdir(), `prime-compaction-counterexample-${slug(name)}-${out.seed}.js`)
  try {
    fs.writeFileSync(file, `// ${name}\n// seed ${out.seed} path ${out.counterexamplePath}\nmodule.exports = ${source}\n`)
  } catch {
    /* ignore */
  }
  const reason = out.errorInstance ? out.errorInstance.message || String(out.errorInstance) : 'predicate returned false'
  const shown = source.length > 6000 ? `${source.slice(0, 6000)}\n… (${source.length} chars, see file)` : source
  const msg = [
    `Property "${name}" failed after ${out.numRuns} run(s) and ${out.numShrinks} shrink(s).`,
    `Seed: ${out.seed}  path: ${out.counterexamplePath}`,
    `Replay: PARITY_SEED=${out.seed} PARITY_ONLY=${JSON.stringify(name)} PARITY_PATH=${JSON.stringify(out.counterexamplePath)} npm run test:js -- ${replayFilter()}`,
    `Difference: ${reason}`,
    `Counterexample (also written to ${file}):`,
    shown,
  ].join('\n')
  const err = new Error(msg)
  err.counterexample = ce
  throw err
}

module.exports = { fc, NUM_RUNS, BASE_SEED, SHRINK_TIME_MS, checkProperty, toSource, failureSignature }
