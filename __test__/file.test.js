'use strict'
// prepareCompactionFromFile / serializeForSummaryFromFile (and their Sync
// twins) against the reference run on the same file: readFileSync +
// parseSessionEntries + migrateSessionEntries, the branch as
// SessionManager.getBranch takes it, then prepareCompaction. Session files
// come from a seeded generator (branches, compactions, tool calls, unicode and
// lone surrogates) written into a temporary directory.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { isDeepStrictEqual } = require('node:util')

const { writeSessionFile, referencePlanFromFile, referenceBranch, makeRng } = require('./helpers/session-file')
const gen = require('./helpers/generator')
const { loadReference } = require('./helpers/reference')

const ours = require('../agent-0.78')

const CORE_DIR = path.join(__dirname, '..', 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'core')
const CORE_DIR_16 = path.join(__dirname, '..', 'node_modules', 'pi-coding-agent-1.6', 'dist', 'core')

jest.setTimeout(120_000)

let ref
let dir

beforeAll(async () => {
  const compaction = await import(pathToFileURL(path.join(CORE_DIR, 'compaction', 'index.js')).href)
  const sessionManager = await import(pathToFileURL(path.join(CORE_DIR, 'session-manager.js')).href)
  ref = {
    ...compaction,
    parseSessionEntries: sessionManager.parseSessionEntries,
    migrateSessionEntries: sessionManager.migrateSessionEntries,
    SessionManager: sessionManager.SessionManager,
  }
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prime-compaction-file-'))
})

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

function file(name, text) {
  const p = path.join(dir, name)
  fs.writeFileSync(p, text)
  return p
}

function settingsFor(seed) {
  return { enabled: true, reserveTokens: 1000, keepRecentTokens: 50 + ((seed * 7919) % 4000) }
}

// The addon builds its objects in Node's main realm, not Jest's sandbox:
// rebuild them here so strict deep equality compares shapes, not prototypes.
function local(value) {
  if (Array.isArray(value)) return value.map(local)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, local(v)]))
  }
  return value
}

/** Message `i` of a short session the agent's SessionManager writes: a user question, then an answer. */
function agentMessage(i) {
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }
  return i % 2 === 0
    ? { role: 'user', content: `question ${i} `.repeat(20), timestamp: i }
    : { role: 'assistant', content: [{ type: 'text', text: `answer ${i} `.repeat(20) }], api: 'x', provider: 'p', model: 'm', usage, stopReason: 'stop', timestamp: i }
}

/**
 * A six-message session written by `SessionManager` (an agent version's
 * own), its last line cut short as a kill inside its appendFileSync leaves
 * it, then opened again and two more messages appended. Returns the file,
 * its folder, its lines, and the branch length on reopening the cut file.
 */
function cutThenAppend(SessionManager, prefix) {
  const base = fs.mkdtempSync(path.join(dir, prefix))
  const session = SessionManager.create(base, base)
  for (let i = 0; i < 6; i++) session.appendMessage(agentMessage(i))
  const p = session.getSessionFile()
  const text = fs.readFileSync(p, 'utf8')
  expect(text.split('\n')).toHaveLength(8)
  fs.writeFileSync(p, text.slice(0, text.length - 20))
  const reopened = SessionManager.open(p, base)
  const branchOnReopen = reopened.getBranch().length
  reopened.appendMessage(agentMessage(6))
  reopened.appendMessage(agentMessage(7))
  return { p, base, lines: fs.readFileSync(p, 'utf8').split('\n'), branchOnReopen }
}

async function expectSameAsReference(p, options) {
  const plan = local(referencePlanFromFile(ref, p, options).plan)
  const sync = local(ours.prepareCompactionFromFileSync(p, options))
  const async_ = local(await ours.prepareCompactionFromFile(p, options))
  if (!isDeepStrictEqual(sync, plan)) {
    // toStrictEqual prints the difference; the file and options say where.
    expect({ file: p, options, plan: sync }).toStrictEqual({ file: p, options, plan })
  }
  expect(async_).toStrictEqual(sync)
  return plan
}

describe('prepareCompactionFromFile agrees with the reference', () => {
  test('generated sessions, default and chosen leaves', async () => {
    let planned = 0
    let split = 0
    for (let seed = 1; seed <= 120; seed++) {
      const p = path.join(dir, `gen-${seed}.jsonl`)
      const ids = writeSessionFile(p, {
        seed,
        entries: (seed * 37) % 400,
        words: 5 + (seed % 40),
        crlf: seed % 4 === 0,
        blankLines: seed % 3 === 0,
      })
      const rng = makeRng(seed)
      const settings = settingsFor(seed)
      const leaves = [undefined, ids.length ? rng.pick(ids) : undefined, 'no-such-id']
      for (const leafId of leaves) {
        const plan = await expectSameAsReference(p, { leafId, settings })
        if (plan) planned++
        if (plan && plan.isSplitTurn) split++
      }
    }
    // The corpus must exercise real plans, split turns included.
    expect(planned).toBeGreaterThan(150)
    expect(split).toBeGreaterThan(30)
  })

  test('default settings when none are given', async () => {
    const p = path.join(dir, 'defaults.jsonl')
    writeSessionFile(p, { seed: 7, entries: 600, words: 200 })
    const plan = await expectSameAsReference(p, undefined)
    expect(plan).toBeDefined()
  })

  test('the branch is the one SessionManager.getBranch walks', async () => {
    const p = path.join(dir, 'manager.jsonl')
    const ids = writeSessionFile(p, { seed: 99, entries: 300, words: 60, branchChance: 0.1 })
    const manager = ref.SessionManager.open(p, dir)
    const settings = settingsFor(3)
    for (const leafId of [ids[ids.length - 1], ids[100], ids[200]]) {
      const prep = ref.prepareCompaction(manager.getBranch(leafId), settings)
      const mine = ours.prepareCompactionFromFileSync(p, { leafId, settings })
      expect(mine && mine.firstKeptEntryId).toBe(prep && prep.firstKeptEntryId)
      expect(mine && mine.tokensBefore).toBe(prep && prep.tokensBefore)
    }
  })

  test('lone surrogates in ids, paths and texts keep their JS lengths', async () => {
    const lone = '\ud83d'
    const entries = [
      { type: 'session', version: 3, id: 's', timestamp: 't', cwd: '/' },
      { type: 'message', id: `u${lone}`, parentId: null, timestamp: 't', message: { role: 'user', content: `a${lone}`.repeat(300), timestamp: 1 } },
      {
        type: 'message', id: 'a1', parentId: `u${lone}`, timestamp: 't',
        message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: `p${lone}\udc00x` } }], timestamp: 2 },
      },
      { type: 'message', id: 'u2', parentId: 'a1', timestamp: 't', message: { role: 'user', content: 'b'.repeat(900), timestamp: 3 } },
    ]
    const text = entries.map((e) => JSON.stringify(e)).join('\n')
    expect(text).toContain('\\ud83d')
    const p = file('surrogates.jsonl', text)
    const plan = await expectSameAsReference(p, { settings: { enabled: true, reserveTokens: 1, keepRecentTokens: 100 } })
    expect(plan.messagesToSummarizeIds).toEqual([`u${lone}`, 'a1'])
    expect(plan.fileOps.read).toEqual([`p${lone}\udc00x`])
  })

  test('CRLF, blank and whitespace-only lines, a byte-order mark', async () => {
    const p = path.join(dir, 'base.jsonl')
    writeSessionFile(p, { seed: 5, entries: 200, words: 40 })
    const lines = fs.readFileSync(p, 'utf8').split('\n')
    const variants = {
      crlf: lines.join('\r\n'),
      blanks: lines.join('\n\n \t\u00a0\n'),
      bom: '\ufeff' + lines.join('\n'),
      trailing: lines.join('\n') + '\n\n\n',
    }
    const settings = settingsFor(11)
    const base = local(ours.prepareCompactionFromFileSync(p, { settings }))
    expect(base).toBeDefined()
    for (const [name, text] of Object.entries(variants)) {
      const q = file(`variant-${name}.jsonl`, text)
      expect(await expectSameAsReference(q, { settings })).toStrictEqual(base)
    }
  })

  test('a line cut short (an append a killed agent left half done) is left out at the end, ended by a newline, and with an entry after it, as the reference leaves it out', async () => {
    const p = path.join(dir, 'uncut.jsonl')
    writeSessionFile(p, { seed: 6, entries: 200, words: 40 })
    const text = fs.readFileSync(p, 'utf8').replace(/\n*$/, '\n')
    const lines = text.split('\n')
    const last = lines[lines.length - 2]
    const settings = settingsFor(12)
    const base = await expectSameAsReference(p, { settings })
    expect(base).toBeDefined()
    // Cut the last line short, as an interrupted appendFileSync leaves it.
    const cut = file('cut.jsonl', text.slice(0, text.length - 1 - Math.floor(last.length / 2)))
    const withoutLast = local(ours.prepareCompactionFromFileSync(file('without-last.jsonl', lines.slice(0, -2).join('\n') + '\n'), { settings }))
    expect(withoutLast).toBeDefined()
    expect(await expectSameAsReference(cut, { settings })).toStrictEqual(withoutLast)
    expect(typeof (await ours.serializeForSummaryFromFile(cut, { settings })).conversation).toBe('string')
    // Ended by a newline (as 1.6's SessionManager ends it when it opens the
    // file), and with an entry appended after that, a child of the entry
    // before it: left out all the same.
    const terminated = file('cut-terminated.jsonl', fs.readFileSync(cut, 'utf8') + '\n')
    expect(await expectSameAsReference(terminated, { settings })).toStrictEqual(withoutLast)
    const next = { ...JSON.parse(last), id: 'appended', parentId: JSON.parse(lines[lines.length - 3]).id }
    const appended = file('cut-appended.jsonl', `${fs.readFileSync(terminated, 'utf8')}${JSON.stringify(next)}\n`)
    const withNext = file('without-last-with-next.jsonl', `${lines.slice(0, -2).join('\n')}\n${JSON.stringify(next)}\n`)
    expect(await expectSameAsReference(appended, { settings })).toStrictEqual(local(ours.prepareCompactionFromFileSync(withNext, { settings })))
  })

  test("a cut last line that 0.78's SessionManager then appended to: the agent's branch starts after the joined line, ours names that line", async () => {
    // 0.78 does not end the cut line (1.6.0 appends a newline first): the next entry joins it.
    const { p, base, lines, branchOnReopen } = cutThenAppend(ref.SessionManager, 'joined-')
    expect(branchOnReopen).toBe(5)
    expect(lines).toHaveLength(9)
    expect(() => JSON.parse(lines[6])).toThrow()
    // The entry after the joined line names an entry no line holds now: the agent's branch is that entry alone.
    expect(ref.SessionManager.open(p, base).getBranch().map((e) => e.message.timestamp)).toEqual([7])
    expect(() => ours.prepareCompactionFromFileSync(p)).toThrow(/line 7: malformed JSON/)
    await expect(ours.prepareCompactionFromFile(p)).rejects.toThrow(/line 7: malformed JSON/)
  })

  test("the same with 1.6's SessionManager, which ends the cut line before it appends: the agent's branch and ours leave that line out", async () => {
    const { SessionManager } = await import(pathToFileURL(path.join(CORE_DIR_16, 'session-manager.js')).href)
    const ours16 = require('../agent-1.6')
    const { p, base, lines } = cutThenAppend(SessionManager, 'ended-')
    expect(lines).toHaveLength(10)
    expect(() => JSON.parse(lines[6])).toThrow()
    const branch = SessionManager.open(p, base).getBranch()
    expect(branch.map((e) => e.message.timestamp)).toEqual([0, 1, 2, 3, 4, 6, 7])
    const settings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 5 }
    const plan = local(ours16.prepareCompactionFromFileSync(p, { settings }))
    expect(plan).toBeDefined()
    const without = file('ended-without.jsonl', `${lines.filter((_, i) => i !== 6).join('\n')}`)
    expect(plan).toStrictEqual(local(ours16.prepareCompactionFromFileSync(without, { settings })))
    expect(local(await ours16.prepareCompactionFromFile(p, { settings }))).toStrictEqual(plan)
    expect([...plan.messagesToSummarizeIds, ...plan.turnPrefixIds].every((id) => branch.some((e) => e.id === id))).toBe(true)
  })

  ;(process.platform !== 'win32' ? test : test.skip)('a pipe (a FIFO a process writes the file into) plans as the file does, sync and async', async () => {
    const { spawn, execFileSync } = require('node:child_process')
    const p = path.join(dir, 'piped.jsonl')
    writeSessionFile(p, { seed: 77, entries: 3_000, words: 40, branchChance: 0.002, compactionChance: 0.001, danglingChance: 0 })
    const fifo = path.join(dir, 'piped.fifo')
    execFileSync('mkfifo', [fifo])
    const writer = () => {
      const child = spawn('sh', ['-c', 'cat "$0" > "$1"', p, fifo], { stdio: 'ignore' })
      return new Promise((resolve) => child.on('exit', resolve))
    }
    const expected = ours.prepareCompactionFromFileSync(p)
    expect(expected.messagesToSummarizeIds.length).toBeGreaterThan(10)
    let wrote = writer()
    expect(ours.prepareCompactionFromFileSync(fifo)).toEqual(expected)
    expect(await wrote).toBe(0)
    wrote = writer()
    expect(await ours.prepareCompactionFromFile(fifo)).toEqual(expected)
    expect(await wrote).toBe(0)
  })

  test('a 20k-entry file', async () => {
    const p = path.join(dir, 'large.jsonl')
    writeSessionFile(p, { seed: 2024, entries: 20_000, words: 40, branchChance: 0.002, compactionChance: 0.0005, danglingChance: 0 })
    const plan = await expectSameAsReference(p, undefined)
    expect(plan.messagesToSummarizeIds.length).toBeGreaterThan(100)
  })
})

describe('errors', () => {
  const header = JSON.stringify({ type: 'session', version: 3, id: 's', timestamp: 't', cwd: '/' })
  const entry = JSON.stringify({ type: 'message', id: 'a', parentId: null, message: { role: 'user', content: 'x' } })

  async function expectBoth(p, options, ErrorType, pattern) {
    expect(() => ours.prepareCompactionFromFileSync(p, options)).toThrow(pattern)
    await expect(ours.prepareCompactionFromFile(p, options)).rejects.toThrow(pattern)
    await expect(ours.serializeForSummaryFromFile(p, options)).rejects.toThrow(pattern)
    let thrown
    try {
      ours.prepareCompactionFromFileSync(p, options)
    } catch (err) {
      thrown = err
    }
    // Jest's realm differs from the addon's: compare constructor names.
    expect(thrown.constructor.name).toBe(ErrorType.name)
    const rejected = await ours.prepareCompactionFromFile(p, options).catch((err) => err)
    expect(rejected.constructor.name).toBe(ErrorType.name)
  }

  test('a malformed line names its line number', async () => {
    // Malformed before its end (a line cut short is left out, as the agent leaves it).
    const p = file('malformed.jsonl', [header, entry, '', '{"type":"message",}', entry].join('\n'))
    await expectBoth(p, undefined, Error, /malformed\.jsonl: line 4: malformed JSON/)
  })

  test('a missing header, an old version, a non-object entry', async () => {
    await expectBoth(file('noheader.jsonl', entry), undefined, Error, /line 1: no session header/)
    await expectBoth(file('empty.jsonl', '\n\n'), undefined, Error, /no session header/)
    const v2 = JSON.stringify({ type: 'session', version: 2, id: 's' })
    await expectBoth(file('v2.jsonl', `${v2}\n${entry}`), undefined, Error, /line 1: session version 2 is older than 3/)
    const v1 = JSON.stringify({ type: 'session', id: 's' })
    await expectBoth(file('v1.jsonl', `${v1}\n${entry}`), undefined, Error, /session version 1/)
    await expectBoth(file('null.jsonl', `${header}\n\n${entry}\n[1]`), undefined, Error, /line 4: expected a session entry object, got an array/)
  })

  test('a missing file', async () => {
    await expectBoth(path.join(dir, 'nope.jsonl'), undefined, Error, /nope\.jsonl: cannot open/)
  })

  test("a file the system will not open or read carries the code Node's fs gives it", async () => {
    const codes = async (p) => {
      const out = []
      for (const f of ['prepareCompactionFromFileSync', 'serializeForSummaryFromFileSync']) {
        try {
          ours[f](p)
        } catch (err) {
          out.push(err.code)
        }
      }
      for (const f of ['prepareCompactionFromFile', 'serializeForSummaryFromFile']) out.push(await ours[f](p).catch((err) => err.code))
      return out
    }
    const nodeCode = (p) => {
      try {
        fs.readFileSync(p)
      } catch (err) {
        return err.code
      }
    }
    const missing = path.join(dir, 'nope.jsonl')
    const underFile = path.join(file('plain.jsonl', header), 'x.jsonl')
    for (const [p, code] of [[missing, 'ENOENT'], [dir, 'EISDIR'], [underFile, 'ENOTDIR']]) {
      expect(nodeCode(p)).toBe(code)
      expect(await codes(p)).toEqual(Array(4).fill(code))
    }
    // Any other reason is the package's own GenericFailure (a malformed line too).
    expect(await codes(file('bad.jsonl', '{'))).toEqual(Array(4).fill('GenericFailure'))
  })

  // In a child process: reading up to the limit takes about 1.6 GB for a moment.
  ;(fs.existsSync('/dev/zero') ? test : test.skip)('an endless line (/dev/zero) ends the read with an error at the longest line a session holds, in every file function', () => {
    const script = `
      const m = require(${JSON.stringify(path.join(__dirname, '..', 'agent-1.6.js'))})
      const out = []
      const note = (e) => out.push(e.constructor.name + ': ' + e.message)
      for (const f of ['prepareCompactionFromFileSync', 'serializeForSummaryFromFileSync']) {
        try { m[f]('/dev/zero'); out.push(f + ' returned') } catch (e) { note(e) }
      }
      ;(async () => {
        for (const f of ['prepareCompactionFromFile', 'serializeForSummaryFromFile']) {
          try { await m[f]('/dev/zero'); out.push(f + ' resolved') } catch (e) { note(e) }
        }
        console.log(JSON.stringify(out))
      })()`
    const { execFileSync } = require('node:child_process')
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { timeout: 100_000, encoding: 'utf8' }))
    expect(out).toEqual(Array(4).fill('Error: /dev/zero: cannot read: the line at byte 0 is longer than 1610612664 bytes, more than any session line holds'))
  })

  /**
   * Each synchronous file function of `entry` called on `file` from a
   * worker thread, at the deepest frame its JS reaches (where a RangeError
   * stops the recursion), in a child process: what `report` (the source of
   * a function of the result) says of each.
   */
  function fromDeepWorker(entry, file, options, report) {
    const worker = `
      const m = require(${JSON.stringify(path.join(__dirname, '..', entry))})
      const report = ${report}
      const out = []
      for (const f of ['prepareCompactionFromFileSync', 'serializeForSummaryFromFileSync']) {
        let done = false
        const g = () => {
          try { g() } catch {}
          if (done) return
          try { out.push(f + ' ' + report(m[f](${JSON.stringify(file)}, ${JSON.stringify(options)}))); done = true } catch (err) { if (!(err instanceof RangeError)) { out.push(f + ' threw ' + err.message); done = true } }
        }
        g()
      }
      require('node:worker_threads').parentPort.postMessage(out)`
    const script = `new (require('node:worker_threads').Worker)(${JSON.stringify(worker)}, { eval: true }).on('message', (m) => console.log(JSON.stringify(m)))`
    const { execFileSync } = require('node:child_process')
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { timeout: 60_000, encoding: 'utf8' }))
  }

  // Before, freeing a line nested near the parse's cap overflowed a worker
  // thread's stack when its JS was already deep (SIGSEGV).
  test('a line nested 4,900 deep, planned from a worker thread with almost no stack left, sync', () => {
    const p = path.join(dir, 'deep.jsonl')
    const d = 4_900
    fs.writeFileSync(p, `${header}\n{"type":"message","id":"e0","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1},"details":${'['.repeat(d)}${']'.repeat(d)}}\n`)
    expect(fromDeepWorker('agent-1.6.js', p, undefined, '(r) => typeof r')).toEqual(['prepareCompactionFromFileSync undefined', 'serializeForSummaryFromFileSync undefined'])
  })

  // The same for a previous compaction's summary nested near the cap (0.78
  // plans on with a summary of any type where a usage spares its estimate),
  // which the plan returns: before, it was made into JS and freed on that
  // thread (SIGSEGV from 4,000 levels on).
  test('a previous summary nested 4,900 deep, returned to a worker thread with almost no stack left, sync', () => {
    const p = path.join(dir, 'deep-summary.jsonl')
    const d = 4_900
    const message = (id, parentId, role, text) =>
      JSON.stringify({ type: 'message', id, parentId, timestamp: 't', message: role === 'user' ? { role, content: text, timestamp: 1 } : { role, content: [{ type: 'text', text }], usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: 'stop', timestamp: 1 } })
    const lines = [header, message('e0', null, 'user', 'a'.repeat(400)), message('e1', 'e0', 'assistant', 'b'.repeat(400))]
    lines.push(JSON.stringify({ type: 'compaction', id: 'c0', parentId: 'e1', timestamp: 't', summary: 'X', firstKeptEntryId: 'e0', tokensBefore: 10 }).replace('"X"', '['.repeat(d) + ']'.repeat(d)))
    for (let i = 2; i < 8; i++) lines.push(message(`e${i}`, i === 2 ? 'c0' : `e${i - 1}`, i % 2 ? 'assistant' : 'user', 'c'.repeat(4000)))
    fs.writeFileSync(p, lines.join('\n') + '\n')
    // How deep the returned summary goes.
    const depth = '(r) => { let v = (r.plan || r).previousSummary; let n = 0; while (Array.isArray(v)) { v = v[0]; n++ } return n }'
    expect(fromDeepWorker('agent-0.78.js', p, { settings: { keepRecentTokens: 1000 } }, depth)).toEqual([`prepareCompactionFromFileSync ${d}`, `serializeForSummaryFromFileSync ${d}`])
  })

  test('bad arguments are TypeErrors, thrown before any work', async () => {
    const p = file('ok.jsonl', `${header}\n${entry}`)
    expect(() => ours.prepareCompactionFromFile(42)).toThrow(/path: expected a string/)
    // As Node's fs refuses them: an empty path, a NUL in one.
    expect(() => ours.prepareCompactionFromFile('')).toThrow(/^path: expected a file path, got an empty string$/)
    expect(() => ours.serializeForSummaryFromFileSync(`${p}\0x`)).toThrow(/^path: expected a file path without NUL characters$/)
    expect(() => ours.prepareCompactionFromFile(p, 'x')).toThrow(/options: expected an object/)
    expect(() => ours.prepareCompactionFromFile(p, { leafId: 3 })).toThrow(/options\.leafId: expected a string/)
    expect(() => ours.prepareCompactionFromFileSync(p, { settings: { enabled: true } })).toThrow(/options\.settings\.keepRecentTokens/)
    expect(() => ours.serializeForSummaryFromFileSync(p, { settings: null })).toThrow(/options\.settings/)
    expect(() => ours.serializeForSummaryFromFileSync(p, { model: 'claude-sonnet' })).toThrow(/^options\.model: expected a model object, got a string$/)
    expect(() => ours.serializeForSummaryFromFile(p, { model: 5 })).toThrow(/^options\.model: expected a model object, got a number$/)
    // The planners take no model: theirs is not read.
    expect(ours.prepareCompactionFromFileSync(p, { model: 'claude-sonnet' })).toEqual(ours.prepareCompactionFromFileSync(p))
    let thrown
    try {
      ours.prepareCompactionFromFile(p, { leafId: 3 })
    } catch (err) {
      thrown = err
    }
    expect(thrown.constructor.name).toBe('TypeError')
  })

  test('an entry the planner cannot read names the file line', async () => {
    const bad = JSON.stringify({ type: 'message', id: 'b', parentId: 'a', message: { role: 7 } })
    const p = file('badrole.jsonl', `${header}\n${entry}\n${bad}`)
    await expectBoth(p, undefined, TypeError, /badrole\.jsonl: line 3: message\.role/)
  })
})

describe('serializeForSummaryFromFile', () => {
  function expected(p, options, model) {
    const { prep } = referencePlanFromFile(ref, p, options)
    if (!prep) return undefined
    const projectOptions = model ? { model } : undefined
    const text = (messages) => ours.serializeConversation(ours.projectForSummary(messages, projectOptions), {
      reasoning: !(model && /claude/i.test(model.id)),
    })
    return {
      conversation: text(prep.messagesToSummarize),
      turnPrefix: prep.isSplitTurn && prep.turnPrefixMessages.length > 0 ? text(prep.turnPrefixMessages) : undefined,
    }
  }

  test('matches projecting and serializing the reference plan in JS', async () => {
    let compared = 0
    for (let seed = 201; seed <= 240; seed++) {
      const p = path.join(dir, `ser-${seed}.jsonl`)
      writeSessionFile(p, { seed, entries: 30 + ((seed * 13) % 250), words: 10 + (seed % 30) })
      const settings = settingsFor(seed)
      for (const model of [undefined, { api: 'openai-responses', provider: 'openai', id: 'gpt-x' }, { api: 'x', provider: 'y', id: 'Claude-z' }]) {
        const want = expected(p, { settings }, model)
        const sync = local(ours.serializeForSummaryFromFileSync(p, { settings, model }))
        const async_ = local(await ours.serializeForSummaryFromFile(p, { settings, model }))
        expect(async_).toStrictEqual(sync)
        if (want === undefined) {
          expect(sync).toBeUndefined()
          continue
        }
        compared++
        expect(sync.plan).toStrictEqual(local(ours.prepareCompactionFromFileSync(p, { settings })))
        expect(sync.conversation).toBe(want.conversation)
        expect(sync.turnPrefix).toBe(want.turnPrefix)
      }
    }
    expect(compared).toBeGreaterThan(60)
  })

  test('reasoning: false drops assistant reasoning', () => {
    const p = path.join(dir, 'reasoning.jsonl')
    writeSessionFile(p, { seed: 77, entries: 200, words: 20, compactionChance: 0, danglingChance: 0, branchChance: 0 })
    const settings = { enabled: true, reserveTokens: 1000, keepRecentTokens: 300 }
    const withR = ours.serializeForSummaryFromFileSync(p, { settings })
    const without = ours.serializeForSummaryFromFileSync(p, { settings, reasoning: false })
    expect(withR.conversation).toContain('[Assistant reasoning]')
    expect(without.conversation).not.toContain('[Assistant reasoning]')
  })
})

describe('the 1.6 line: a file of a 1.6 session plans as 1.6.0 plans its branch', () => {
  const ours16 = require('../agent-1.6')
  const header = JSON.stringify({ type: 'session', version: 3, id: 's', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/w' })
  let ref16
  beforeAll(async () => {
    ref16 = await loadReference('1.6')
  })

  /** The role the message an entry contributes has. */
  const roleOf = (entry) => (entry.type === 'message' ? entry.message.role : entry.type === 'custom_message' ? 'custom' : entry.type === 'branch_summary' ? 'branchSummary' : entry.type)

  test('generated 1.6 sessions (system messages, context edits, nested calls, trees), sync and async, plan and transcript', async () => {
    const sessions = gen.fc.sample(gen.pathEntriesArb({ line: '1.6' }), { numRuns: 150, seed: 20261201 })
    let planned = 0
    let copies = 0
    for (const [k, generated] of sessions.entries()) {
      // Generated entries may inherit their type, which JSON would drop: a file holds it. Non-finite
      // numbers would come back from JSON as null, which the types do not allow: 0 instead.
      const line = (e) => JSON.stringify({ type: e.type, ...e }, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? 0 : v))
      const p = file(`g16-${k}.jsonl`, [header, ...generated.map(line)].join('\n'))
      const settings = settingsFor(k)
      const entries = ref16.parseSessionEntries(fs.readFileSync(p, 'utf8'))
      ref16.migrateSessionEntries(entries)
      const branch = referenceBranch(entries)
      const prep = ref16.prepareCompaction(branch, settings)
      const mine = local(ours16.prepareCompactionFromFileSync(p, { settings }))
      expect(local(await ours16.prepareCompactionFromFile(p, { settings }))).toStrictEqual(mine)
      if (prep === undefined) {
        expect(mine).toBeUndefined()
        continue
      }
      planned++
      const want = {
        firstKeptEntryId: prep.firstKeptEntryId,
        tokensBefore: prep.tokensBefore,
        isSplitTurn: prep.isSplitTurn,
        fileOps: { read: [...prep.fileOps.read], written: [...prep.fileOps.written], edited: [...prep.fileOps.edited] },
        previousSummary: prep.previousSummary,
      }
      const got = { firstKeptEntryId: mine.firstKeptEntryId, tokensBefore: mine.tokensBefore, isSplitTurn: mine.isSplitTurn, fileOps: mine.fileOps, previousSummary: mine.previousSummary }
      expect({ file: p, plan: got }).toStrictEqual({ file: p, plan: local(want) })
      // Each message is named by the branch entry it comes from, in branch order.
      const byId = new Map(branch.map((e, i) => [e.id, i]))
      for (const [ids, messages] of [[mine.messagesToSummarizeIds, prep.messagesToSummarize], [mine.turnPrefixIds, prep.turnPrefixMessages]]) {
        expect(ids.map((id) => roleOf(branch[byId.get(id)]))).toEqual(messages.map((m) => m.role))
        const at = ids.map((id) => byId.get(id))
        expect(at).toEqual([...at].sort((x, y) => x - y))
        copies += messages.filter((m, i) => branch[at[i]].message !== m).length
      }
      // The transcript is the one built from 1.6.0's own messages (edited copies included).
      const text = (messages) => ours16.serializeConversation(ours16.projectForSummary(messages))
      const transcript = ours16.serializeForSummaryFromFileSync(p, { settings })
      expect(transcript.conversation).toBe(text(prep.messagesToSummarize))
      expect(transcript.turnPrefix).toBe(prep.isSplitTurn && prep.turnPrefixMessages.length > 0 ? text(prep.turnPrefixMessages) : undefined)
    }
    // Real plans, and messages 1.6 makes anew (custom messages, edited and normalised copies).
    expect(planned).toBeGreaterThan(50)
    expect(copies).toBeGreaterThan(20)
  })
})
