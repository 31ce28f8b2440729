'use strict'
// The `prime-compaction` command line, run as a child process against a
// local OpenAI-compatible server on 127.0.0.1 (plain and streamed answers,
// errors, a context overflow, a hang), plus the --append kill test; and
// its event-stream reader in this process, fetch replaced, on chunks it is
// given.

const { execFileSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { startServer } = require('./helpers/openai-server.js')
const { writeSessionFile } = require('./helpers/session-file.js')

const ROOT = path.join(__dirname, '..')
const CLI = path.join(ROOT, 'cli', 'prime-compaction.js')
const EXAMPLE = path.join(ROOT, 'examples', 'session.jsonl')
const api = require(ROOT)

jest.setTimeout(60000)

function run(args, { env, cwd, onStderr, onSpawn } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    if (onSpawn) onSpawn(child)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d
      if (onStderr) onStderr(stderr, child)
    })
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

let dir
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-cli-'))
})
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

function copyExample(name) {
  const file = path.join(dir, name)
  fs.copyFileSync(EXAMPLE, file)
  return file
}

function branchOf(file) {
  const entries = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).filter((e) => e.type !== 'session')
  const byId = new Map(entries.map((e) => [e.id, e]))
  const branch = []
  for (let e = entries[entries.length - 1]; e; e = e.parentId ? byId.get(e.parentId) : undefined) branch.unshift(e)
  return branch
}

const OVERFLOW = "This model's maximum context length is 4096 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages."

describe('plan', () => {
  test('reports the plan of the shipped example', async () => {
    const r = await run(['plan', EXAMPLE])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/tokens before: +[\d,]+/)
    expect(r.stdout).toMatch(/cut: +keep from entry [0-9a-f]{8}/)
    expect(r.stdout).toMatch(/summarized: +\d+ entries, updating the previous compaction summary/)
    expect(r.stdout).toMatch(/split turn: +yes/)
    expect(r.stdout).toMatch(/files modified \(\d+\): /)
  })

  test('one entry is "1 entry": summarized, and the first of a split turn', async () => {
    const file = path.join(dir, 'one-each.jsonl')
    const at = '2026-01-01T00:00:00.000Z'
    const lines = [
      { type: 'session', version: 3, id: 's1', timestamp: at, cwd: '/tmp' },
      { type: 'message', id: 'a0000001', parentId: null, timestamp: at, message: { role: 'user', content: 'first question', timestamp: 1 } },
      { type: 'message', id: 'a0000002', parentId: 'a0000001', timestamp: at, message: { role: 'user', content: 'second question', timestamp: 2 } },
      { type: 'message', id: 'a0000003', parentId: 'a0000002', timestamp: at, message: { role: 'assistant', content: [{ type: 'text', text: 'y'.repeat(4000) }], stopReason: 'stop', timestamp: 3 } },
    ]
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
    const plan = api.prepareCompactionFromFileSync(file, { settings: { ...api.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 100 } })
    expect({ summarized: plan.messagesToSummarizeIds, prefix: plan.turnPrefixIds }).toEqual({ summarized: ['a0000001'], prefix: ['a0000002'] })
    const r = await run(['plan', file, '--keep-recent', '100'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/summarized: +1 entry\n/)
    expect(r.stdout).toMatch(/split turn: +yes, the cut falls inside a turn; its first entry gets its own summary\n/)
  })

  test('--json prints what prepareCompactionFromFile returns', async () => {
    const r = await run(['plan', EXAMPLE, '--json', '--keep-recent', '5000'])
    expect(r.code).toBe(0)
    const expected = api.prepareCompactionFromFileSync(EXAMPLE, { settings: { ...api.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 5000 } })
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(expected)))
  })

  test('--leaf plans another branch; an unknown leaf is an error', async () => {
    const branch = branchOf(EXAMPLE)
    const mid = branch[Math.floor(branch.length * 0.6)].id
    const r = await run(['plan', EXAMPLE, '--leaf', mid, '--json', '--keep-recent', '2000'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(api.prepareCompactionFromFileSync(EXAMPLE, { leafId: mid, settings: { ...api.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 2000 } }))))
    const bad = await run(['plan', EXAMPLE, '--leaf', 'nope'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('no entry has the id "nope"')
    const badCompact = await run(['compact', EXAMPLE, '--leaf', 'nope', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'])
    expect(badCompact.code).toBe(1)
    expect(badCompact.stderr).toContain('no entry has the id "nope"')
  })

  // A named pipe can be read only once: the command plans the bytes it read.
  ;(process.platform === 'win32' ? test.skip : test)('a session on a named pipe plans as the file does; an unknown leaf is an error', async () => {
    const text = fs.readFileSync(EXAMPLE)
    let pipes = 0
    const onPipe = async (args, bytes = text) => {
      const fifo = path.join(dir, `session-${++pipes}.fifo`)
      execFileSync('mkfifo', [fifo])
      // Opening the pipe to write waits for the command to open it to read.
      const writing = fs.promises.writeFile(fifo, bytes).catch(() => {})
      const r = await run(args.map((a) => (a === 'FIFO' ? fifo : a)))
      // A command that never opened it: open and close it, so the writer ends.
      fs.closeSync(fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK))
      await writing
      return { ...r, stderr: r.stderr.replaceAll(fifo, 'FIFO') }
    }
    const branch = branchOf(EXAMPLE)
    const settings = { ...api.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 2000 }
    for (const leaf of [undefined, branch[Math.floor(branch.length * 0.6)].id, branch[2].id]) {
      const r = await onPipe(['plan', 'FIFO', '--json', '--keep-recent', '2000', ...(leaf ? ['--leaf', leaf] : [])])
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
      expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(api.prepareCompactionFromFileSync(EXAMPLE, { leafId: leaf, settings }) ?? null)))
    }
    // Near the root there is nothing to compact: told apart from a leaf that is not there.
    const small = await onPipe(['plan', 'FIFO', '--leaf', branch[2].id])
    expect(small.code).toBe(0)
    expect(small.stdout).toContain('nothing to compact')
    const bad = await onPipe(['plan', 'FIFO', '--leaf', 'nope'])
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 1, stderr: 'prime-compaction: FIFO: no entry has the id "nope"\n' })
    const broken = await onPipe(['plan', 'FIFO'], Buffer.concat([text, Buffer.from('{"type":"message","id":"zz","parentId":"x","message":{"role":5}}\n')]))
    expect(broken.code).toBe(1)
    expect(broken.stderr).toMatch(/^prime-compaction: FIFO: line \d+: .*message\.role/)
  })

  test('--print-request shows the requests buildSummaryRequests builds', async () => {
    const r = await run(['plan', EXAMPLE, '--print-request', '--json', '--model', 'qwen', '--instructions', 'Mention the benchmark.'])
    expect(r.code).toBe(0)
    const bodies = JSON.parse(r.stdout)
    const prep = api.prepareCompaction(branchOf(EXAMPLE), api.DEFAULT_COMPACTION_SETTINGS)
    const expected = api.buildSummaryRequests(prep, { id: 'qwen', api: 'openai-completions', provider: 'openai-compatible', contextWindow: 128000 }, 'Mention the benchmark.')
    expect(bodies).toHaveLength(expected.length)
    expect(expected.length).toBe(2) // the example's cut splits a turn
    bodies.forEach((b, i) => {
      expect(b.model).toBe('qwen')
      expect(b.messages).toEqual([{ role: 'system', content: expected[i].systemPrompt }, { role: 'user', content: expected[i].prompt }])
      expect(b.max_tokens).toBe(expected[i].maxTokens)
    })
    expect(bodies[0].messages[1].content).toContain('<previous-summary>')
    expect(bodies[0].messages[1].content).toContain('Mention the benchmark.')
    const text = await run(['plan', EXAMPLE, '--print-request'])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('===== request 1 of 2: history')
    expect(text.stdout).toContain(api.SUMMARIZATION_SYSTEM_PROMPT)
  })
})

describe('bad input', () => {
  test('every command reads a session file by the rules prepareCompactionFromFile reads it by', async () => {
    const header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}'
    const user = (id, parentId) => JSON.stringify({ type: 'message', id, parentId, timestamp: '2025-01-01T00:00:00.000Z', message: { role: 'user', content: 'hi', timestamp: 1 } })
    const files = {
      'no-header-id': ['{"type":"session","version":3}', user('a', null)],
      'string-version': ['{"type":"session","version":"3","id":"s"}', user('a', null)],
      'v2': ['{"type":"session","version":2,"id":"s"}', user('a', null)],
      'header-later': [user('a', null), header],
      'array-entry': [header, user('a', null), '[1]'],
      'cycle': [header, user('a', 'b'), user('b', 'a')],
      'empty': [],
    }
    const expected = []
    const seen = []
    for (const [name, lines] of Object.entries(files)) {
      const file = path.join(dir, `${name}.jsonl`)
      fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(''))
      let message
      try {
        api.prepareCompactionFromFileSync(file)
      } catch (err) {
        message = err.message
      }
      expected.push({ name, message })
      for (const args of [['plan', file], ['plan', file, '--print-request'], ['compact', file, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm']]) {
        const r = await run(args)
        seen.push({ name, args: args.slice(0, 3), code: r.code, stderr: r.stderr })
      }
    }
    expect(expected.every((e) => typeof e.message === 'string' && e.message.startsWith(path.join(dir, `${e.name}.jsonl`)))).toBe(true)
    expect(seen).toEqual(expected.flatMap(({ name, message }) => [['plan'], ['plan', '--print-request'], ['compact', '--base-url']].map(([cmd, flag]) => ({
      name,
      args: [cmd, path.join(dir, `${name}.jsonl`), ...(flag ? [flag] : [])],
      code: 1,
      stderr: `prime-compaction: ${message}\n`,
    }))))
  })

  test('an entry the planner cannot read is named by its file line, in every command, with no stack trace', async () => {
    const header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}'
    const user = (id, parentId, more) => JSON.stringify({ type: 'message', id, parentId, timestamp: '2025-01-01T00:00:00.000Z', message: { role: 'user', content: 'hi', timestamp: 1 }, ...more })
    const files = {
      'number-id': [header, user('a', null), '', JSON.stringify({ type: 'message', id: 5, parentId: 'a', message: { role: 'user', content: 'x', timestamp: 1 } }), user('c', 5)],
      'no-message': [header, user('a', null), user('b', 'a', { message: undefined }), user('c', 'b')],
      'content-number': [header, user('a', null), user('b', 'a', { message: { role: 'user', content: 5, timestamp: 1 } }), user('c', 'b')],
    }
    for (const [name, lines] of Object.entries(files)) {
      const file = path.join(dir, `${name}.jsonl`)
      fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(''))
      const plain = await run(['plan', file, '--keep-recent', '1'])
      expect(plain.code).toBe(1)
      expect(plain.stderr).toMatch(new RegExp(`^prime-compaction: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line \\d: \\S.*\n$`))
      for (const args of [['plan', file, '--keep-recent', '1', '--print-request'], ['compact', file, '--keep-recent', '1', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm']]) {
        const r = await run(args)
        expect({ name, args, code: r.code, stderr: r.stderr }).toEqual({ name, args, code: 1, stderr: plain.stderr })
      }
    }
  })

  // (the assistant's usage spares the plan its estimate; its content holds no calls to read)
  test('a message the plan passes over but a summary cannot take is named by its file line in --print-request and compact', async () => {
    const header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}'
    const entry = (id, parentId, message) => JSON.stringify({ type: 'message', id, parentId, timestamp: '2025-01-01T00:00:00.000Z', message: { timestamp: 1, ...message } })
    const cases = {
      'content-object': [{ x: 1 }, 'message.content: expected an array, got an object'],
      'null-block': [[{ type: 'text', text: 'a' }, null], 'message.content[1]: expected a content block, got null'],
    }
    for (const [name, [content, said]] of Object.entries(cases)) {
      const file = path.join(dir, `${name}.jsonl`)
      const lines = [header, entry('a', null, { role: 'user', content: 'hi' }), entry('b', 'a', { role: 'assistant', content, stopReason: 'stop', usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 } }), entry('c', 'b', { role: 'user', content: 'again '.repeat(50) })]
      fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(''))
      expect((await run(['plan', file, '--keep-recent', '1'])).code).toBe(0)
      for (const args of [['plan', file, '--keep-recent', '1', '--print-request'], ['compact', file, '--keep-recent', '1', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm']]) {
        const r = await run(args)
        expect({ name, args, code: r.code, stderr: r.stderr }).toEqual({ name, args, code: 1, stderr: `prime-compaction: ${file}: line 3: ${said}\n` })
      }
    }
  })

  test('unreadable file, bad line, old version, bad options', async () => {
    const missing = await run(['plan', path.join(dir, 'missing.jsonl')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/missing\.jsonl.*(No such file|no such file)/)

    const broken = path.join(dir, 'broken.jsonl')
    const lines = fs.readFileSync(EXAMPLE, 'utf8').split('\n')
    // Malformed before its end (a line cut short is left out, as the agent leaves it).
    lines[41] = lines[41].replace('"parentId":', '"parentId"')
    fs.writeFileSync(broken, lines.join('\n'))
    for (const args of [['plan', broken], ['plan', broken, '--print-request'], ['compact', broken, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm']]) {
      const r = await run(args)
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/line 42: malformed JSON/)
    }

    const v2 = path.join(dir, 'v2.jsonl')
    fs.writeFileSync(v2, '{"type":"session","version":2,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n')
    const old = await run(['compact', v2, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'])
    expect(old.code).toBe(1)
    expect(old.stderr).toMatch(/version/)

    const usage = await run(['plan', EXAMPLE, '--keep-recent', 'lots'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--keep-recent expects a whole number')
    expect((await run(['compact', EXAMPLE])).code).toBe(2)
    expect((await run(['frobnicate'])).code).toBe(2)
    // Options that would do nothing, and sizes of 0, are refused rather than ignored.
    for (const [args, said] of [
      [['plan', EXAMPLE, '--model', 'm', '--context-window', '4096'], '--model, --context-window are for --print-request only'],
      [['plan', EXAMPLE, '--print-request', '--context-window', '0'], '--context-window must be at least 1'],
      [['compact', EXAMPLE, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--max-tokens', '0'], '--max-tokens must be at least 1'],
      [['compact', EXAMPLE, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--timeout', '0'], '--timeout must be at least 1'],
      [['compact', EXAMPLE, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--timeout', '3000000000'], '--timeout is at most 2147483647 ms (about 24 days)'],
    ]) {
      const r = await run(args)
      expect({ code: r.code, said: r.stderr.split('\n')[0] }).toEqual({ code: 2, said: `prime-compaction: ${said}` })
    }
    expect((await run(['plan', EXAMPLE, '--keep-recent', '0', '--reserve', '0'])).code).toBe(0)
    const help = await run(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage:')
    const none = await run([])
    expect({ code: none.code, said: none.stderr.split('\n')[0], usage: none.stderr.includes('Usage:') }).toEqual({ code: 2, said: 'prime-compaction: no command given', usage: true })
    expect(await run(['--version'])).toMatchObject({ code: 0, stdout: `${require('../package.json').version}\n` })
    for (const [args, said] of [
      [['compact', EXAMPLE, '--base-url', 'localhost:8080/v1', '--model', 'm'], '--base-url expects an http:// or https:// URL, got "localhost:8080/v1"'],
      [['compact', EXAMPLE, '--base-url', 'ftp://x/v1', '--model', 'm'], '--base-url expects an http:// or https:// URL, got "ftp://x/v1"'],
      [['plan', EXAMPLE, '--print-request', '--model', ''], '--model needs a value'],
      [['plan', EXAMPLE, '--leaf', ''], '--leaf needs a value'],
      [['compact', EXAMPLE, '--base-url', 'http://127.0.0.1:9/v1?x=1', '--model', 'm'], '--base-url takes no query or fragment, got "http://127.0.0.1:9/v1?x=1"'],
      [['compact', EXAMPLE, '--base-url', 'http://127.0.0.1:9/v1#f', '--model', 'm'], '--base-url takes no query or fragment, got "http://127.0.0.1:9/v1#f"'],
      // A value left out does not take the next option.
      [['compact', EXAMPLE, '--base-url', 'http://127.0.0.1:9/v1', '--model', '--append'], '--model needs a value, got the option --append (write --model=--append if that is the value)'],
      [['plan', EXAMPLE, '--leaf', '--quiet'], '--leaf needs a value, got the option --quiet (write --leaf=--quiet if that is the value)'],
      // A negative number is out of range for a number option, written either way.
      [['plan', EXAMPLE, '--keep-recent', '-5'], '--keep-recent expects a whole number, got "-5"'],
      [['plan', EXAMPLE, '--reserve=-1.5'], '--reserve expects a whole number, got "-1.5"'],
      [['plan', '-q'], 'unknown option -q (a file whose name starts with - goes after --)'],
      [['plan', EXAMPLE, '-hq'], 'unknown option -hq (a file whose name starts with - goes after --)'],
    ]) {
      const r = await run(args)
      expect({ code: r.code, said: r.stderr.split('\n')[0] }).toEqual({ code: 2, said: `prime-compaction: ${said}` })
    }
    // After --, every argument is a file name.
    fs.copyFileSync(EXAMPLE, path.join(dir, '--dashed.jsonl'))
    expect(await run(['plan', '--json', '--', '--dashed.jsonl'], { cwd: dir })).toMatchObject({ code: 0, stdout: expect.stringContaining('"firstKeptEntryId"') })
    const unknown = await run(['plan', '--json', '--dashed.jsonl'], { cwd: dir })
    expect({ code: unknown.code, said: unknown.stderr.split('\n')[0] }).toEqual({ code: 2, said: 'prime-compaction: unknown option --dashed.jsonl for plan' })
    const afterDashes = await run(['plan', '--', EXAMPLE, '--json'])
    expect({ code: afterDashes.code, said: afterDashes.stderr.split('\n')[0] }).toEqual({ code: 2, said: 'prime-compaction: one session file expected, got 2 arguments' })
    // No instructions is a choice.
    expect((await run(['plan', EXAMPLE, '--print-request', '--instructions', ''])).code).toBe(0)
  })
})

test('a line cut short (an interrupted append) is left out of the plan and the request, at the end or ended by a newline with entries after it; --append ends it first', async () => {
  const text = fs.readFileSync(EXAMPLE, 'utf8')
  expect(text.endsWith('\n')).toBe(true)
  const lines = text.slice(0, -1).split('\n')
  const [last, beforeLast] = [lines.at(-1), lines.at(-2)]
  const half = (line) => line.slice(0, Math.floor(line.length / 2))
  const write = (name, body) => {
    const file = path.join(dir, name)
    fs.writeFileSync(file, body)
    return file
  }
  const whole = write('whole.jsonl', text)
  // The last line cut short; and the line before it cut short, then ended by
  // a newline and followed by the last entry as an agent that opened the
  // file then appends it (1.6's SessionManager ends the cut line first): a
  // child of the entry before the cut one. Compared with the file without
  // the cut line.
  const cut = write('cut.jsonl', text + half(last))
  const head = `${lines.slice(0, -2).join('\n')}\n`
  const appended = JSON.stringify({ ...JSON.parse(last), parentId: JSON.parse(lines.at(-3)).id })
  const endedInside = write('ended-inside.jsonl', `${head}${half(beforeLast)}\n${appended}\n`)
  const withoutIt = write('without-it.jsonl', `${head}${appended}\n`)
  for (const [file, same] of [[cut, whole], [endedInside, withoutIt]]) {
    for (const args of [['plan'], ['plan', '--json'], ['plan', '--print-request']]) {
      const [a, b] = [await run([args[0], file, ...args.slice(1)]), await run([args[0], same, ...args.slice(1)])]
      expect({ file, args, code: a.code, stdout: a.stdout.replaceAll(file, same) }).toEqual({ file, args, code: 0, stdout: b.stdout })
    }
  }
  // Joined by a later append (0.78's SessionManager does not end it): malformed, named.
  const joined = write('joined.jsonl', `${head}${half(beforeLast)}${last}\n`)
  for (const args of [['plan'], ['plan', '--print-request']]) {
    const r = await run([args[0], joined, ...args.slice(1)])
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 1, stderr: expect.stringContaining(`line ${lines.length - 1}: malformed JSON`) })
  }
  // --append after a cut last line: a newline ends it, then the entry, a child of the leaf.
  const server = await startServer([{ text: 'History.' }, { text: 'Prefix.' }])
  try {
    const before = fs.readFileSync(cut)
    const r = await run(['compact', cut, '--base-url', server.baseUrl, '--model', 'm', '--append'])
    expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" })
    const after = fs.readFileSync(cut)
    expect(after.subarray(0, before.length).equals(before)).toBe(true)
    const added = after.subarray(before.length).toString('utf8')
    expect(added.startsWith('\n')).toBe(true)
    const entry = JSON.parse(added.slice(1))
    expect(added.slice(1)).toBe(`${JSON.stringify(entry)}\n`)
    expect(entry).toMatchObject({ type: 'compaction', parentId: JSON.parse(last).id })
    expect((await run(['plan', cut])).stdout).toContain('nothing to compact')
  } finally {
    await server.close()
  }
})

test('nothing to compact: a plain plan says so and exits 0 (--json: null); a request cannot be printed, and compact fails', async () => {
  const keepAll = ['--keep-recent', '999999']
  const plain = await run(['plan', EXAMPLE, ...keepAll])
  expect({ code: plain.code, stdout: plain.stdout }).toEqual({ code: 0, stdout: expect.stringContaining('nothing to compact') })
  const json = await run(['plan', EXAMPLE, ...keepAll, '--json'])
  expect({ code: json.code, stdout: json.stdout }).toEqual({ code: 0, stdout: 'null\n' })
  for (const args of [['plan', EXAMPLE, ...keepAll, '--print-request'], ['compact', EXAMPLE, ...keepAll, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm']]) {
    const r = await run(args)
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('nothing to compact') })
  }
})

describe('compact against a local OpenAI-compatible server', () => {
  let server
  afterEach(async () => {
    if (server) await server.close()
    server = undefined
  })

  test('plain JSON answers: sends exactly the printed requests, prints the summary', async () => {
    server = await startServer([{ text: 'History summary.' }, { text: 'Prefix summary.' }])
    const printed = JSON.parse((await run(['plan', EXAMPLE, '--print-request', '--json', '--model', 'llama'])).stdout)
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'llama', '--api-key-env', 'PC_TEST_KEY'], { env: { PC_TEST_KEY: 'sk-local' } })
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^History summary\.\n\n---\n\n\*\*Turn Context \(split turn\):\*\*\n\nPrefix summary\./)
    expect(r.stdout).toContain('<modified-files>')
    expect(server.requests.map((q) => q.body)).toEqual(printed)
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-local')
  })

  test('--tokenizer plans on exact counts, as the setting does, in plan and compact; an unknown encoding is a usage error', async () => {
    const settings = { ...api.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 5000 }
    const exact = api.prepareCompactionFromFileSync(EXAMPLE, { settings: { ...settings, tokenizer: 'o200k_base' } })
    // On this session the two counts cut in different places, so the flag is seen to count.
    expect(exact.firstKeptEntryId).not.toBe(api.prepareCompactionFromFileSync(EXAMPLE, { settings }).firstKeptEntryId)
    const json = await run(['plan', EXAMPLE, '--json', '--keep-recent', '5000', '--tokenizer', 'o200k_base'])
    expect({ code: json.code, plan: JSON.parse(json.stdout) }).toEqual({ code: 0, plan: JSON.parse(JSON.stringify(exact)) })
    const plain = await run(['plan', EXAMPLE, '--keep-recent', '5000', '--tokenizer=o200k_base'])
    expect(plain.stdout).toContain('(keep the last 5,000 counted with o200k_base, reserve 16,384)')
    expect(plain.stdout).toContain(`cut:            keep from entry ${exact.firstKeptEntryId}\n`)

    server = await startServer([{ text: 'History summary.' }, { text: 'Prefix summary.' }])
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--keep-recent', '5000', '--tokenizer', 'o200k_base', '--json'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).result.firstKeptEntryId).toBe(exact.firstKeptEntryId)

    for (const command of [['plan', EXAMPLE], ['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm']]) {
      const bad = await run([...command, '--tokenizer', 'p50k_base'])
      expect({ code: bad.code, said: bad.stderr.split('\n')[0] }).toEqual({ code: 2, said: 'prime-compaction: --tokenizer expects o200k_base or cl100k_base, got "p50k_base"' })
    }
  })

  test('streamed (SSE) answers are put together', async () => {
    server = await startServer([
      { sse: ['Hist', 'ory ', 'sum', 'mary.'], usage: { prompt_tokens: 700, completion_tokens: 70 } },
      { sse: ['Pre', 'fix.'], usage: { prompt_tokens: 30, completion_tokens: 3 } },
    ])
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--stream', '--json'])
    expect(r.code).toBe(0)
    const { result } = JSON.parse(r.stdout)
    expect(result.summary).toMatch(/^History summary\.\n\n---\n\n\*\*Turn Context \(split turn\):\*\*\n\nPrefix\./)
    expect(result.firstKeptEntryId).toMatch(/^[0-9a-f]{8}$/)
    expect(server.requests.every((q) => q.body.stream === true && q.body.stream_options.include_usage === true)).toBe(true)
    // The usage the server streams when asked, summed over the two requests.
    expect(result.usage).toMatchObject({ input: 730, output: 73, totalTokens: 803 })
  })

  test('a server that rejects stream_options is asked again without it, and not asked for it after', async () => {
    const rejection = { status: 400, error: "Unrecognized request argument supplied: stream_options" }
    server = await startServer([rejection, { sse: ['History.'] }, { sse: ['Prefix.'] }])
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--stream', '--json'])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(r.stdout).result.summary).toMatch(/^History\.\n\n---\n\n\*\*Turn Context \(split turn\):\*\*\n\nPrefix\./)
    expect(server.requests.map((q) => [q.body.stream, 'stream_options' in q.body])).toEqual([[true, true], [true, false], [true, false]])
    await server.close()
    // Any other 400 is the answer, as before.
    server = await startServer([{ status: 400, error: 'bad model' }])
    const bad = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--stream', '--quiet'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('400 bad model')
    expect(server.requests).toHaveLength(1)
  })

  test("the usage of cached and cache-written prompt tokens, in OpenAI's, DeepSeek's and Kimi's fields", async () => {
    for (const [history, prefix, expected] of [
      [{ prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 100 } }, { prompt_tokens_details: { cached_tokens: 0 } }, { input: 310, cacheRead: 600, cacheWrite: 100 }],
      [{ prompt_cache_hit_tokens: 600 }, { prompt_cache_hit_tokens: 5 }, { input: 405, cacheRead: 605, cacheWrite: 0 }],
      [{ cached_tokens: 600 }, {}, { input: 410, cacheRead: 600, cacheWrite: 0 }],
    ]) {
      server = await startServer([
        { text: 'History.', usage: { prompt_tokens: 1000, completion_tokens: 10, ...history } },
        { text: 'Prefix.', usage: { prompt_tokens: 10, completion_tokens: 1, ...prefix } },
      ])
      const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--json', '--quiet'])
      await server.close()
      server = undefined
      expect(r.code).toBe(0)
      const { usage } = JSON.parse(r.stdout).result
      expect(usage).toMatchObject({ ...expected, output: 11, totalTokens: expected.input + expected.cacheRead + expected.cacheWrite + 11 })
    }
  })

  test('a context overflow is retried with less, then succeeds', async () => {
    server = await startServer([{ status: 400, error: OVERFLOW }, { text: 'Short history.' }, { text: 'Prefix.' }])
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--context-window', '4096'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^Short history\./)
    expect(server.requests).toHaveLength(3)
    const [first, retry] = server.requests.map((q) => q.body.messages[1].content)
    expect(retry.length).toBeLessThan(first.length)
  })

  test("servers' own corners: llama.cpp's error: lines, a [DONE] with no finish_reason, lines ended by a lone CR, content as parts, other overflow wordings, a key a header cannot carry", async () => {
    const sse = (...events) => ({ raw: events.map((e) => `${e}\n\n`).join(''), contentType: 'text/event-stream' })
    const delta = (content, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}`
    const copy = path.join(dir, 'corners.jsonl')
    const compact = async (replies, ...more) => {
      fs.copyFileSync(EXAMPLE, copy)
      server = await startServer(replies)
      const r = await run(['compact', copy, '--base-url', server.baseUrl, '--model', 'm', '--quiet', '--append', ...more])
      const requests = server.requests.length
      await server.close()
      server = undefined
      return { ...r, requests, appended: fs.readFileSync(copy, 'utf8') !== fs.readFileSync(EXAMPLE, 'utf8') }
    }
    // An error mid-answer (llama.cpp writes `error:`, then [DONE]): the server's words, nothing appended.
    const midError = await compact([sse(delta('## Goal\nThe user asked to'), 'error: {"code":500,"message":"Input prompt is too big compared to KV size","type":"server_error"}', 'data: [DONE]')], '--stream')
    expect({ code: midError.code, appended: midError.appended }).toEqual({ code: 1, appended: false })
    expect(midError.stderr).toContain('Input prompt is too big compared to KV size')
    // The same line with llama.cpp's overflow: retried smaller, then appended.
    const overflowLine = 'error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}'
    const retried = await compact([sse(overflowLine, 'data: [DONE]'), sse(delta('Short history.', 'stop'), 'data: [DONE]'), sse(delta('Prefix.', 'stop'), 'data: [DONE]')], '--stream', '--context-window', '4096')
    expect({ code: retried.code, requests: retried.requests, appended: retried.appended }).toEqual({ code: 0, requests: 3, appended: true })
    // An event named error.
    const named = await compact([sse(delta('Half'), 'event: error\ndata: {"message":"engine died"}', 'data: [DONE]')], '--stream')
    expect({ code: named.code, appended: named.appended, said: named.stderr.includes('engine died') }).toEqual({ code: 1, appended: false, said: true })
    // Text, then [DONE] with no finish_reason: maybe cut short, so not stored.
    const unfinished = await compact([sse(delta('## Goal\nThe user asked to'), 'data: [DONE]')], '--stream')
    expect({ code: unfinished.code, appended: unfinished.appended }).toEqual({ code: 1, appended: false })
    expect(unfinished.stderr).toContain('with [DONE] but no finish_reason')
    // Lines ended by a lone CR, or CRLF, even where a chunk ends between the CR and its LF.
    const ended = (end, ...splits) => {
      const body = [delta('Bare ', null), delta('CR.', 'stop'), 'data: [DONE]'].map((e) => `${e}${end}${end}`).join('')
      const at = splits.map((s) => body.indexOf(s) + s.length)
      return { raw: [0, ...at].map((from, i) => body.slice(from, at[i])), contentType: 'text/event-stream' }
    }
    // An event of two data lines whose CRLF is split between chunks; a lone-CR stream left open after [DONE].
    const twoLines = delta('Two lines.', 'stop').replace('"choices"', '\r\ndata: "choices"')
    const split = { raw: [twoLines.slice(0, twoLines.indexOf('\n')), `${twoLines.slice(twoLines.indexOf('\n'))}\r\n\r\ndata: [DONE]\r\n\r\n`], contentType: 'text/event-stream' }
    const open = { ...ended('\r', '"Bare "'), open: true }
    for (const reply of [ended('\r', '"Bare "'), ended('\r', 'null}]}\r'), ended('\r\n', 'null}]}\r'), ended('\r\n', 'null}]}\r\n\r'), split, open]) {
      const run = await compact([reply], '--stream', '--json', '--timeout', '5000')
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' })
      expect(JSON.parse(run.stdout).result.summary).toMatch(reply === split ? /^Two lines\./ : /^Bare CR\./)
    }
    // Content as parts (Mistral's thinking and text): the text parts are the summary.
    const parts = (text) => ({ raw: JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'hmm' }] }, { type: 'text', text }] }, finish_reason: 'stop' }] }), contentType: 'application/json' })
    const partsRun = await compact([parts('History from parts.'), parts('Prefix from parts.')], '--json')
    expect(partsRun.code).toBe(0)
    expect(JSON.parse(partsRun.stdout).result.summary).toMatch(/^History from parts\.\n\n---\n\n\*\*Turn Context \(split turn\):\*\*\n\nPrefix from parts\./)
    // Overflow as LM Studio, vLLM's engine and TGI word it, and as OpenAI's code alone: retried smaller.
    for (const error of [
      'Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.',
      'The decoder prompt (length 9000) is longer than the maximum model length of 4096.',
      '`inputs` tokens + `max_new_tokens` must be <= 4096. Given: 9000 `inputs` tokens and 512 `max_new_tokens`',
    ]) {
      const r = await compact([{ status: 400, error }, { text: 'Short history.' }, { text: 'Prefix.' }], '--context-window', '4096')
      expect({ error, code: r.code, requests: r.requests }).toEqual({ error, code: 0, requests: 3 })
    }
    const coded = await compact([{ status: 400, error: 'Request too large.' }, { text: 'x' }], '--context-window', '4096')
    expect(coded.requests).toBe(1)
    const openAi = { raw: JSON.stringify({ error: { message: 'Request too large.', type: 'invalid_request_error', code: 'context_length_exceeded' } }), contentType: 'application/json' }
    const byCode = await compact([openAi, { text: 'Short history.' }, { text: 'Prefix.' }], '--context-window', '4096')
    expect({ code: byCode.code, requests: byCode.requests }).toEqual({ code: 0, requests: 3 })
    // A key with a line break: a clear error that does not show it.
    fs.copyFileSync(EXAMPLE, copy)
    server = await startServer([{ text: 'x' }])
    const key = await run(['compact', copy, '--base-url', server.baseUrl, '--model', 'm', '--quiet', '--api-key-env', 'CORNER_KEY'], { env: { CORNER_KEY: 'sk-secret\nrest' } })
    expect({ code: key.code, shown: key.stderr.includes('sk-secret') }).toEqual({ code: 1, shown: false })
    expect(key.stderr).toContain('a request header holds a character HTTP cannot carry')
    expect(server.requests).toHaveLength(0)
  })

  /**
   * The answer openAiStreamFn puts together from an event stream that comes
   * as `chunks` (byte arrays), each after a turn of the event loop, as a
   * socket's would (fetch replaced, so the chunks are these: over a socket
   * their sizes are the network's).
   */
  async function streamedAnswer(chunks) {
    const { openAiStreamFn } = require('../cli/openai.js')
    let next = 0
    const fetchBefore = globalThis.fetch
    globalThis.fetch = async () => {
      const body = new ReadableStream({
        async pull(controller) {
          await new Promise((resolve) => setImmediate(resolve))
          if (next >= chunks.length) controller.close()
          else controller.enqueue(chunks[next++])
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    }
    try {
      return await openAiStreamFn({ baseUrl: 'http://127.0.0.1:9', stream: true })({ id: 'm', maxTokens: 10 }, { systemPrompt: 's', messages: [{ role: 'user', content: 'u' }] }).result()
    } finally {
      globalThis.fetch = fetchBefore
    }
  }

  const deltaEvent = (content, finish = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}`

  test('an event line sent in thousands of chunks is put together once: a 32 MB answer in 8 KB chunks', async () => {
    // Before, each chunk copied the line so far: minutes here, which the
    // test's timeout ends.
    const text = 'word '.repeat((32 * 1024 * 1024) / 5)
    const bytes = new TextEncoder().encode(`${deltaEvent(text, 'stop')}\r\n\r\ndata: [DONE]\r\n\r\n`)
    const chunks = []
    for (let from = 0; from < bytes.length; from += 8 * 1024) chunks.push(bytes.subarray(from, from + 8 * 1024))
    expect(chunks.length).toBeGreaterThan(4000)
    const answer = await streamedAnswer(chunks)
    expect({ stopReason: answer.stopReason, length: answer.content[0].text.length }).toEqual({ stopReason: 'stop', length: text.length })
    expect(answer.content[0].text === text).toBe(true)
  }, 30000)

  test('an event stream cut into chunks anywhere (inside a line end, inside a character) gives the answer it gives whole', async () => {
    const fc = require('fast-check')
    const { NUM_RUNS, BASE_SEED } = require('./helpers/property')
    // Events of text (any characters, the multi-byte ones too), some as
    // two data lines (the JSON broken after its brace), with comments and
    // event names between, in one of the three line ends.
    const line = fc.oneof(
      { weight: 4, arbitrary: fc.record({ content: fc.string({ unit: 'binary', maxLength: 12 }), twoLines: fc.boolean() }) },
      { weight: 1, arbitrary: fc.constantFrom(': keep-alive', 'event: message', 'id: 7', 'retry: 100').map((field) => ({ field })) },
    )
    // The stream's end: [DONE] and a blank line, [DONE] with no line end,
    // or the last event's line with no line end (and no [DONE]).
    const tails = [(end) => `${end}${end}data: [DONE]${end}${end}`, (end) => `${end}${end}data: [DONE]`, () => '']
    const stream = fc.record({ lines: fc.array(line, { maxLength: 12 }), end: fc.constantFrom('\n', '\r', '\r\n'), tail: fc.constantFrom(...tails), cuts: fc.array(fc.nat(), { maxLength: 12 }) })
    await fc.assert(
      fc.asyncProperty(stream, async ({ lines, end, tail, cuts }) => {
        const data = (l) => (l.twoLines ? deltaEvent(l.content).replace('{', `{${end}data: `) : deltaEvent(l.content))
        const events = lines.map((l) => (l.field !== undefined ? `${l.field}${end}` : `${data(l)}${end}${end}`))
        const body = `${events.join('')}${deltaEvent('.', 'stop')}${tail(end)}`
        const bytes = new TextEncoder().encode(body)
        const at = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b)
        const chunks = [0, ...at].map((from, i) => bytes.subarray(from, i < at.length ? at[i] : bytes.length)).filter((c) => c.length > 0)
        const whole = await streamedAnswer([bytes])
        const cut = await streamedAnswer(chunks)
        const text = `${lines.map((l) => l.content ?? '').join('')}.`
        expect(whole.stopReason).toBe('stop')
        expect(whole.content[0].text).toBe(text)
        expect(cut).toEqual({ ...whole, timestamp: cut.timestamp })
      }),
      { numRuns: Math.min(NUM_RUNS, 300), seed: BASE_SEED },
    )
  })

  test('HTTP errors give the provider message and exit 1; an overflow that never fits gives up', async () => {
    server = await startServer([{ status: 500, error: 'model not loaded' }])
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retries', '0'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('Summarization failed: 500 model not loaded')
    expect(server.requests).toHaveLength(1)
    await server.close()
    server = await startServer([{ status: 400, error: OVERFLOW }])
    const o = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm'])
    expect(o.code).toBe(1)
    expect(o.stderr).toContain('still overflows')
    expect(o.stderr).toContain('maximum context length is 4096 tokens')
    const wrongPath = await run(['compact', EXAMPLE, '--base-url', server.baseUrl.replace('/v1', '/v2'), '--model', 'm'])
    expect(wrongPath.code).toBe(1)
    expect(wrongPath.stderr).toContain('404 no route POST /v2/chat/completions')
    // The URL asked, for a wrong --base-url.
    expect(wrongPath.stderr).toContain(`(POST ${server.baseUrl.replace('/v1', '/v2')}/chat/completions)`)
  })

  test('a transient failure is sent again, as pi does: --retries times, waiting --retry-delay and twice as long each time', async () => {
    // Two 503s, then the summaries: the compaction succeeds.
    server = await startServer([{ status: 503, error: 'Loading model' }, { status: 503, error: 'Loading model' }, { text: 'History.' }, { text: 'Prefix.' }])
    const started = Date.now()
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retry-delay', '300', '--json'])
    expect(r.code).toBe(0)
    expect(Date.now() - started).toBeGreaterThanOrEqual(900) // 300 + 600 ms of waiting
    expect(server.requests).toHaveLength(4)
    expect(JSON.parse(r.stdout).result.summary).toContain('History.')
    expect(r.stderr.split('\n').filter((l) => l.includes('retry'))).toEqual([
      'prime-compaction: retry 1 of 3 in 300 ms after: 503 Loading model',
      'prime-compaction: retry 2 of 3 in 600 ms after: 503 Loading model',
    ])
    await server.close()
    // Retries run out: the last failure is the command's.
    server = await startServer([{ status: 429, error: 'Too many requests' }])
    const out = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retries', '2', '--retry-delay', '0'])
    expect({ code: out.code, requests: server.requests.length }).toEqual({ code: 1, requests: 3 })
    expect(out.stderr).toContain(`Summarization failed: 429 Too many requests (POST ${server.baseUrl}/chat/completions)`)
    await server.close()
    // A proxy's HTML error page: one line a retry, the page once in the failure.
    const page = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>'
    server = await startServer([{ status: 502, body: page, contentType: 'text/html' }])
    const html = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retries', '1', '--retry-delay', '0'])
    expect(html.stderr.split('\n').filter((l) => l.includes('retry'))).toEqual(['prime-compaction: retry 1 of 1 in 0 ms after: 502 502 Bad Gateway'])
    expect(html.stderr).toContain(`Summarization failed: 502 502 Bad Gateway (POST ${server.baseUrl}/chat/completions)`)
    await server.close()
    // A connection the server drops (undici's "other side closed"), in the request and in a stream.
    server = await startServer([{ destroy: true }, { sse: ['Hist', 'ory', ' summary.'], chunkDelayMs: 200, resetAfterChunks: 2 }, { text: 'History.' }, { text: 'Prefix.' }])
    const dropped = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retry-delay', '0', '--stream'])
    expect({ code: dropped.code, requests: server.requests.length }).toEqual({ code: 0, requests: 4 })
    expect(dropped.stderr).toContain('failed: UND_ERR_SOCKET (other side closed)')
    expect(dropped.stderr).toContain('broke off: UND_ERR_SOCKET (other side closed)')
    await server.close()
    // The URL is named for a request that failed itself, not for a stream's error event after a 503 with the same last words.
    server = await startServer([{ status: 503, error: 'Loading model' }, { raw: ['data: {"error":{"message":"upstream said 503 Loading model"}}\n\n'] }])
    const later = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retries', '1', '--retry-delay', '0', '--stream'])
    expect(later.stderr.split('\n').filter((l) => l.includes('failed'))).toEqual(['prime-compaction: Summarization failed: upstream said 503 Loading model'])
    await server.close()
    // A failure that is not transient is not sent again, whatever words its URL holds.
    server = await startServer([{ status: 400, error: 'bad model' }], { anyPath: true })
    const bad = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retry-delay', '0'])
    expect({ code: bad.code, requests: server.requests.length }).toEqual({ code: 1, requests: 1 })
    const timeoutPath = await run(['compact', EXAMPLE, '--base-url', server.baseUrl.replace('/v1', '/timeout/503/v1'), '--model', 'm', '--retry-delay', '0'])
    expect({ code: timeoutPath.code, requests: server.requests.length }).toEqual({ code: 1, requests: 2 })
    expect(timeoutPath.stderr).toContain(`Summarization failed: 400 bad model (POST ${server.baseUrl.replace('/v1', '/timeout/503/v1')}/chat/completions)`)
  })

  test("a server's Retry-After is the wait before a retry (pi-ai's provider retries read it so); one over 60 s is not waited for", async () => {
    const later = (ms) => new Date(Date.now() + ms).toUTCString()
    server = await startServer([
      { status: 429, error: 'Too many requests', headers: { 'retry-after': '1' } },
      { status: 503, error: 'Loading model', headers: { 'retry-after-ms': '250', 'retry-after': '30' } },
      { text: 'History.' },
      { text: 'Prefix.' },
    ])
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retry-delay', '0', '--json'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).result.summary).toContain('History.')
    const at = server.requests.map((q) => q.at)
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(1000)
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(250)
    expect(at[2] - at[1]).toBeLessThan(30_000)
    expect(r.stderr.split('\n').filter((l) => l.includes('retry'))).toEqual([
      'prime-compaction: retry 1 of 3 in 1.0s after: 429 Too many requests',
      'prime-compaction: retry 2 of 3 in 250 ms after: 503 Loading model',
    ])
    await server.close()
    // Seconds or an HTTP date over 60 s (pi's cap): one request, and the failure says what the server asked.
    for (const [value, least, most] of [
      ['120', 120, 120],
      // A date an hour on, less the time until the command reads it (a date names whole seconds).
      [later(3_600_000), 3_500, 3_600],
    ]) {
      server = await startServer([{ status: 429, error: 'Too many requests', headers: { 'retry-after': value } }])
      const out = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retry-delay', '0'])
      expect({ code: out.code, requests: server.requests.length }).toEqual({ code: 1, requests: 1 })
      expect(out.stderr).toContain(`Summarization failed: 429 Too many requests (POST ${server.baseUrl}/chat/completions; the server asked to wait `)
      const said = Number(/the server asked to wait (\d+\.\d)s\)/.exec(out.stderr)?.[1])
      expect([value, said >= least && said <= most]).toEqual([value, true])
      await server.close()
    }
    // A value that is no delay: --retry-delay's.
    server = await startServer([{ status: 503, error: 'Loading model', headers: { 'retry-after': 'soon' } }])
    const soon = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retries', '1', '--retry-delay', '0'])
    expect(soon.stderr.split('\n').filter((l) => l.includes('retry'))).toEqual(['prime-compaction: retry 1 of 1 in 0 ms after: 503 Loading model'])
    expect(soon.stderr).toContain(`Summarization failed: 503 Loading model (POST ${server.baseUrl}/chat/completions)`)
  })

  test('a server that does not answer times out', async () => {
    server = await startServer([{ hang: true }])
    const started = Date.now()
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--timeout', '1500', '--retries', '0'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('within 1500 ms (--timeout)')
    expect(r.stderr).toContain('waiting for m at') // progress after about a second
    expect(r.stderr).not.toContain('done in')
    expect(Date.now() - started).toBeLessThan(15000)
    // A port nothing listens on any more.
    const closed = await startServer([])
    await closed.close()
    const refused = await run(['compact', EXAMPLE, '--base-url', closed.baseUrl, '--model', 'm', '--retries', '0'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`cannot reach the server: ECONNREFUSED (connect ECONNREFUSED`)
    expect(refused.stderr).toContain(`(POST ${closed.baseUrl}/chat/completions)`)
  })

  test('Ctrl-C during the request exits with "interrupted" and --append leaves the file as it was', async () => {
    server = await startServer([{ hang: true }])
    const file = copyExample('interrupted.jsonl')
    const before = fs.readFileSync(file)
    const r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--append'], {
      onStderr: (stderr, child) => {
        if (stderr.includes('waiting for m at') && !child.interrupted) {
          child.interrupted = true
          child.kill('SIGINT')
        }
      },
    })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('prime-compaction: interrupted')
    expect(fs.readFileSync(file).equals(before)).toBe(true)
    expect(server.requests).toHaveLength(1)
  })

  test('--append writes the entry the agent would, as a child of the leaf', async () => {
    server = await startServer([
      { text: 'History.', usage: { prompt_tokens: 900, completion_tokens: 100 } },
      { text: 'Prefix.', usage: { prompt_tokens: 50, completion_tokens: 5 } },
    ])
    const file = copyExample('append.jsonl')
    const before = fs.readFileSync(file)
    const leaf = branchOf(file).at(-1)
    const r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--append', '--instructions', 'Keep the numbers.', '--json'])
    expect(r.code).toBe(0)
    const after = fs.readFileSync(file)
    expect(after.subarray(0, before.length).equals(before)).toBe(true)
    const added = after.subarray(before.length).toString('utf8')
    expect(added.endsWith('\n')).toBe(true)
    expect(added.trimEnd().includes('\n')).toBe(false)
    const entry = JSON.parse(added)
    const { result } = JSON.parse(r.stdout)
    // 1.6's appendCompaction's fields in its order (no systemMessage: this session has no system message), then customInstructions.
    expect(Object.keys(entry)).toEqual(['type', 'id', 'parentId', 'timestamp', 'summary', 'firstKeptEntryId', 'tokensBefore', 'details', 'usage', 'fromHook', 'customInstructions'])
    expect(entry).toMatchObject({
      type: 'compaction', parentId: leaf.id, summary: result.summary, firstKeptEntryId: result.firstKeptEntryId,
      tokensBefore: result.tokensBefore, details: result.details, usage: result.usage, fromHook: false, customInstructions: 'Keep the numbers.',
    })
    // The server's usage of the two requests (a split turn), summed as 1.6's compact() sums them.
    expect(result.usage).toMatchObject({ input: 950, output: 105, cacheRead: 0, cacheWrite: 0, totalTokens: 1055 })
    expect(entry.id).toMatch(/^[0-9a-f]{8}$/)
    expect(branchOf(file).some((e) => e !== entry && e.id === entry.id && e.type !== 'compaction')).toBe(false)
    expect(Math.abs(Date.parse(entry.timestamp) - Date.now())).toBeLessThan(60000)
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
    const again = await run(['plan', file])
    expect(again.stdout).toContain('nothing to compact')
  })

  test('an answer with no text fails, and --append leaves the session as it was', async () => {
    for (const reply of [{ text: '' }, { text: undefined }, { text: ' \n ' }]) {
      server = await startServer([reply])
      const file = copyExample('empty-answer.jsonl')
      const before = fs.readFileSync(file)
      const r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--append'])
      await server.close()
      server = undefined
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: "prime-compaction: Summarization failed: the model's answer has no text\n" })
      expect(fs.readFileSync(file).equals(before)).toBe(true)
    }
  })

  test('a stream that breaks off is told apart from a server that cannot be reached', async () => {
    server = await startServer([{ sse: ['Hist', 'ory', ' summary.'], chunkDelayMs: 200, resetAfterChunks: 2 }])
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--stream', '--retries', '0'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('Summarization failed: the answer broke off: ')
    expect(r.stderr).toContain(`(POST ${server.baseUrl}/chat/completions)`)
    await server.close()
    // Closed before any response: reached, but no answer.
    server = await startServer([{ destroy: true }])
    const closed = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--retries', '0'])
    expect(closed.code).toBe(1)
    expect(closed.stderr).toContain('Summarization failed: the request failed: ')
    expect(closed.stderr).toContain(`(POST ${server.baseUrl}/chat/completions)`)
  })

  test('an answer that never ends fails past 64 M characters, long before --timeout', async () => {
    const event = `data: ${JSON.stringify({ choices: [{ delta: { content: 'a'.repeat(60_000) } }] })}\n\n`
    const endless = [
      { endless: 'a'.repeat(65_536) }, // no line end ever
      { endless: event }, // events that never finish
      { endless: 'a'.repeat(65_536), first: '{"choices":[{"message":{"content":"', contentType: 'application/json' },
    ]
    for (const reply of endless) {
      server = await startServer([reply])
      const started = Date.now()
      const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--stream', '--retries', '0', '--timeout', '120000'])
      await server.close()
      server = undefined
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: 'prime-compaction: Summarization failed: the answer went on past 64 M characters, far more than a summary holds: the server did not stop\n' })
      expect(Date.now() - started).toBeLessThan(60_000)
    }
  })

  test("an answer of the wrong shape is told as one, not as a stream that broke off", async () => {
    const cases = [
      [{ raw: 'data: null\n\n' }, 'malformed stream event: null'],
      [{ raw: `data: ${JSON.stringify({ choices: [{ delta: { content: 'A', tool_calls: [null] }, finish_reason: 'stop' }] })}\n\n` }, 'malformed stream event: {"choices"'],
      [{ raw: JSON.stringify({ choices: [{ message: { content: 'A', tool_calls: 'abc' }, finish_reason: 'stop' }] }), contentType: 'application/json' }, 'the response is malformed: '],
    ]
    for (const [reply, said] of cases) {
      server = await startServer([reply])
      const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm', '--stream', '--retries', '0'])
      await server.close()
      server = undefined
      expect({ code: r.code, said: r.stderr.includes(`Summarization failed: ${said}`), brokeOff: r.stderr.includes('broke off') }).toEqual({ code: 1, said: true, brokeOff: false })
    }
  })

  test('progress gives the time each step has taken', async () => {
    const replies = [{ text: 'History.' }, { text: 'Prefix.' }]
    server = await startServer((body, index) => new Promise((resolve) => setTimeout(() => resolve(replies[index]), 1600)))
    const r = await run(['compact', EXAMPLE, '--base-url', server.baseUrl, '--model', 'm'])
    expect(r.code).toBe(0)
    const waits = r.stderr.split('\n').filter((l) => l.includes('waiting for m at'))
    // About a second into each request (the command had run about 3 s by the second's line).
    const steps = waits.map((l) => l.match(/\(request (\d)\)\.\.\. (\d+)s$/).slice(1).map(Number))
    expect(steps.map(([request, seconds]) => [request, seconds <= 2])).toEqual([
      [1, true],
      [2, true],
    ])
  })

  ;(process.platform === 'linux' ? test : test.skip)('--append on a pipe is refused before any request', async () => {
    server = await startServer([{ text: 'History.' }, { text: 'Prefix.' }])
    const fifo = path.join(dir, 'append.fifo')
    execFileSync('mkfifo', [fifo])
    const r = await run(['compact', fifo, '--base-url', server.baseUrl, '--model', 'm', '--append'])
    expect({ code: r.code, said: r.stderr.split('\n')[0], requests: server.requests.length }).toEqual({
      code: 2,
      said: `prime-compaction: --append needs a regular session file, and ${fifo} is not one (a pipe or a device)`,
      requests: 0,
    })
  })

  test("--append keeps the session's mode, whatever the umask", async () => {
    for (const mode of [0o664, 0o666, 0o600]) {
      server = await startServer([{ text: 'History.' }, { text: 'Prefix.' }])
      const file = copyExample('mode.jsonl')
      fs.chmodSync(file, mode)
      const umask = process.umask(0o022)
      let r
      try {
        r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--append'])
      } finally {
        process.umask(umask)
      }
      await server.close()
      server = undefined
      expect({ code: r.code, mode: fs.statSync(file).mode & 0o7777 }).toEqual({ code: 0, mode })
    }
  })

  test('a summary that cannot be appended is still printed', async () => {
    const file = copyExample('changed-meanwhile.jsonl')
    const replies = [{ text: 'History.' }, { text: 'Prefix.' }]
    // The agent writes to the session while the summary is made.
    const changed = '{"type":"custom","id":"late0001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"x"}\n'
    server = await startServer((body, index) => {
      if (index === 0) fs.appendFileSync(file, changed)
      return replies[index]
    })
    const before = fs.readFileSync(file)
    const r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--append', '--quiet'])
    expect({ code: r.code, stdout: r.stdout.split('\n')[0], said: r.stderr }).toEqual({
      code: 1,
      stdout: 'History.',
      said: `prime-compaction: ${file} changed while the summary was being made; nothing was appended (run the command again)\n`,
    })
    expect(fs.readFileSync(file).equals(Buffer.concat([before, Buffer.from(changed)]))).toBe(true)
  })

  test('an append the agent makes while the new file is being written is kept: nothing is appended, the temporary file is removed', () => {
    const { appendEntryAtomically } = require('../cli/session-file.js')
    const file = copyExample('written-meanwhile.jsonl')
    const original = fs.readFileSync(file)
    const late = '{"type":"custom","id":"late0002","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"x"}\n'
    const entry = { type: 'compaction', id: 'c0ffee01', parentId: null, timestamp: '2026-01-01T00:00:01.000Z', summary: 'History.', firstKeptEntryId: 'x', tokensBefore: 1 }
    // Called once the session is found unchanged, before the new file is written.
    const agentAppends = () => fs.appendFileSync(file, late)
    expect(() => appendEntryAtomically(file, original, entry, agentAppends)).toThrow(/ changed while the new file was being written; nothing was appended \(run the command again\)$/)
    expect(fs.readFileSync(file).equals(Buffer.concat([original, Buffer.from(late)]))).toBe(true)
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('.written-meanwhile.jsonl.'))).toEqual([])
    // Left alone, the same call appends.
    const now = fs.readFileSync(file)
    appendEntryAtomically(file, now, entry)
    expect(fs.readFileSync(file, 'utf8')).toBe(`${now}${JSON.stringify(entry)}\n`)
  })

  test('--append through a symbolic link writes the file it points to; the link stays', async () => {
    server = await startServer([{ text: 'History.' }, { text: 'Prefix.' }])
    const target = copyExample('linked-target.jsonl')
    const link = path.join(dir, 'linked.jsonl')
    fs.symlinkSync(target, link)
    const before = fs.readFileSync(target)
    const r = await run(['compact', link, '--base-url', server.baseUrl, '--model', 'm', '--append', '--quiet'])
    expect(r.code).toBe(0)
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
    const after = fs.readFileSync(target)
    expect(after.length).toBeGreaterThan(before.length)
    expect(after.subarray(0, before.length).equals(before)).toBe(true)
    expect(JSON.parse(after.subarray(before.length).toString('utf8')).type).toBe('compaction')
  })
})

// A regular file is read by readFileSync, which refuses one over 2 GiB; a device is read up to as much.
;(fs.existsSync('/dev/zero') ? test : test.skip)('an endless input (/dev/zero) is an error once 2 GiB of it are read, not a process out of memory', async () => {
  const r = await run(['plan', '/dev/zero', '--quiet'])
  expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 1, stderr: 'prime-compaction: cannot read session file /dev/zero: more than 2 GiB\n', stdout: '' })
})

;(process.platform === 'linux' ? test : test.skip)('output that cannot be written (/dev/full) is an error, not a crash; a closed pipe ends the command quietly', async () => {
  const full = await new Promise((resolve) => {
    const out = fs.openSync('/dev/full', 'w')
    const child = spawn(process.execPath, [CLI, 'plan', EXAMPLE, '--print-request'], { stdio: ['ignore', out, 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    child.on('close', (code) => {
      fs.closeSync(out)
      resolve({ code, stderr })
    })
  })
  expect(full).toEqual({ code: 1, stderr: 'prime-compaction: cannot write the output: ENOSPC: no space left on device, write\n' })
  // Output well beyond a pipe's buffer (64 KB on Linux), so that writing it meets the closed pipe.
  const big = path.join(dir, 'big-output.jsonl')
  const long = 'x'.repeat(20000)
  const lines = ['{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}']
  for (let i = 0; i < 40; i++) {
    const message = { role: 'user', content: `${i} ${long}`, timestamp: 1 }
    lines.push(JSON.stringify({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: '2025-01-01T00:00:00.000Z', message }))
  }
  fs.writeFileSync(big, `${lines.join('\n')}\n`)
  const whole = await run(['plan', big, '--print-request', '--keep-recent', '1'])
  expect(whole.code).toBe(0)
  expect(whole.stdout.length).toBeGreaterThan(512 * 1024)
  const piped = await new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'plan', big, '--print-request', '--keep-recent', '1'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    child.stdout.once('data', () => child.stdout.destroy())
    child.on('close', (code) => resolve({ code, stderr }))
  })
  expect(piped).toEqual({ code: 0, stderr: '' })
})

// A 1.6 session keeps its system prompt in the session; after a compaction
// the agent restores it from the compaction entry alone.
// A recorded 1.6 session with a system message, 1.6.0's SessionManager, and
// `compact --append` on a file against a server that answers twice.
const SESSION_16 = path.join(ROOT, 'benches', 'fixtures', 'agent-1.6', 'abort-manual.jsonl')
const sessionManager16 = async () =>
  (await import(pathToFileURL(path.join(ROOT, 'node_modules', 'pi-coding-agent-1.6', 'dist', 'core', 'session-manager.js')).href)).SessionManager
async function compactAppend(file, { json = true } = {}) {
  const server = await startServer([{ text: 'History.' }, { text: 'Prefix.' }])
  try {
    const r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--keep-recent', '50', '--append', '--quiet', ...(json ? ['--json'] : [])])
    return { ...r, requests: server.requests.length }
  } finally {
    await server.close()
  }
}

test('--append on a 1.6 session keeps its system message: reopened, 1.6.0 rebuilds the context the agent\'s own appendCompaction gives', async () => {
  const SessionManager = await sessionManager16()
  const ours = path.join(dir, 'system-ours.jsonl')
  const theirs = path.join(dir, 'system-theirs.jsonl')
  fs.copyFileSync(SESSION_16, ours)
  fs.copyFileSync(SESSION_16, theirs)
  const r = await compactAppend(ours)
  expect(r.code).toBe(0)
  const { result, entry } = JSON.parse(r.stdout)
  // The agent's own entry after the same branch, with the same result.
  const manager = SessionManager.open(theirs, dir)
  manager.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, result.details, false, result.usage)
  const agentEntry = manager.getBranch().at(-1)
  expect(agentEntry.systemMessage.role).toBe('system')
  const timeless = ({ id, timestamp, systemMessage, ...rest }) => ({ ...rest, systemMessage: { ...systemMessage, timestamp: 0 } })
  expect(Object.keys(entry)).toEqual(Object.keys(agentEntry))
  expect(timeless(entry)).toEqual(timeless(agentEntry))
  expect(entry.systemMessage.timestamp).toBe(Date.parse(entry.timestamp))
  // Reopened, both files give the agent the same context: the system message first.
  const context = (file) => SessionManager.open(file, dir).buildSessionContext().messages.map((m) => (m.role === 'system' ? { ...m, timestamp: 0 } : m))
  const reopened = context(ours)
  expect(reopened[0].role).toBe('system')
  expect(reopened.map((m) => m.role)).toEqual(context(theirs).map((m) => m.role))
  expect(reopened.filter((m) => m.role !== 'compactionSummary')).toEqual(context(theirs).filter((m) => m.role !== 'compactionSummary'))
})

test('--append keeps a system message with any section value, as 1.6.0 does; one it cannot keep fails before any request', async () => {
  const SessionManager = await sessionManager16()
  const lines = fs.readFileSync(SESSION_16, 'utf8').split('\n')
  const at = lines.findIndex((l) => l.includes('"role":"system"'))
  const withSystem = (change) => {
    const entry = JSON.parse(lines[at])
    change(entry.message)
    return [...lines.slice(0, at), JSON.stringify(entry), ...lines.slice(at + 1)].join('\n')
  }
  const odd = path.join(dir, 'system-odd.jsonl')
  fs.writeFileSync(odd, withSystem((m) => (m.sections = { ...m.sections, extra: 5 })))
  const theirs = path.join(dir, 'system-odd-theirs.jsonl')
  fs.copyFileSync(odd, theirs)
  let r = await compactAppend(odd)
  expect(r.code).toBe(0)
  const manager = SessionManager.open(theirs, dir)
  manager.appendCompaction('S', JSON.parse(r.stdout).result.firstKeptEntryId, 1, undefined, false, undefined)
  const written = JSON.parse(r.stdout).entry.systemMessage
  expect(written.sections.extra).toBe(5)
  expect({ ...written, timestamp: 0 }).toEqual({ ...manager.getBranch().at(-1).systemMessage, timestamp: 0 })

  const bad = path.join(dir, 'system-bad.jsonl')
  fs.writeFileSync(bad, withSystem((m) => (m.toolsAdded = [{ name: 5 }])))
  const before = fs.readFileSync(bad)
  r = await compactAppend(bad, { json: false })
  expect(r.requests).toBe(0)
  expect(r.code).toBe(1)
  const line = fs.readFileSync(bad, 'utf8').split('\n').findIndex((l) => l.includes('"toolsAdded":[{"name":5}]')) + 1
  expect(line).toBeGreaterThan(1)
  expect(r.stderr).toMatch(new RegExp(`system-bad\\.jsonl: line ${line}: the session's system message cannot be kept in a compaction entry: message\\.toolsAdded\\[0\\]\\.name: `))
  expect(r.stderr).not.toMatch(/\n\s+at /)
  expect(fs.readFileSync(bad).equals(before)).toBe(true)
})

// SIGKILL at random moments while --append rewrites a large session: the
// file must always be the old session or the old one plus one whole line.
describe('--append survives SIGKILL', () => {
  const RUNS = Number(process.env.PRIME_COMPACTION_KILL_RUNS || 12)
  let server
  let original
  let source
  let writeMs = 100 // until the first test measures it
  beforeAll(async () => {
    server = await startServer(() => ({ text: 'Killed-run summary.' }))
    source = path.join(dir, 'large-source.jsonl')
    writeSessionFile(source, { seed: 11, entries: 12000, words: 80, branchChance: 0, danglingChance: 0, compactionChance: 0 })
    original = fs.readFileSync(source)
  })
  afterAll(async () => {
    await server.close()
  })

  // First, so the kills below can land within the time a write takes.
  test('an unkilled run appends; how long the write takes', async () => {
    const file = path.join(dir, 'large-ok.jsonl')
    fs.writeFileSync(file, original)
    let marked
    const r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--append'], {
      onStderr(stderr) {
        if (marked === undefined && stderr.includes('prime-compaction: writing ')) marked = Date.now()
      },
    })
    writeMs = Date.now() - marked
    process.stderr.write(`--append: ${writeMs} ms from "writing" to exit\n`)
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('prime-compaction: writing ')
    expect(fs.statSync(file).size).toBeGreaterThan(original.length)
  })

  test(`${RUNS} kills during the write`, async () => {
    const outcomes = { old: 0, oldTempLeft: 0, new: 0 }
    const killed = { whileWriting: 0, anywhere: 0 }
    const killDir = fs.mkdtempSync(path.join(dir, 'kill-'))
    const file = path.join(killDir, 'session.jsonl')
    for (let i = 0; i < RUNS; i++) {
      fs.writeFileSync(file, original)
      // Half the kills land at a random moment within three quarters of a
      // write's time after the write starts (a write may be quicker than
      // the one measured), half anywhere in the run.
      const afterMarker = i % 2 === 0
      const delay = Math.random() * (afterMarker ? writeMs * 0.75 : 1500)
      let timer
      const r = await run(['compact', file, '--base-url', server.baseUrl, '--model', 'm', '--append'], {
        onSpawn(child) {
          if (!afterMarker) timer = setTimeout(() => child.kill('SIGKILL'), delay)
        },
        onStderr(stderr, child) {
          if (afterMarker && timer === undefined && stderr.includes('prime-compaction: writing ')) {
            timer = setTimeout(() => child.kill('SIGKILL'), delay)
          }
        },
      })
      clearTimeout(timer)
      const temps = fs.readdirSync(killDir).filter((f) => f.endsWith('.tmp'))
      const now = fs.readFileSync(file)
      if (now.equals(original)) {
        outcomes[temps.length > 0 ? 'oldTempLeft' : 'old']++
      } else {
        expect(now.length).toBeGreaterThan(original.length)
        expect(now.subarray(0, original.length).equals(original)).toBe(true)
        const tail = now.subarray(original.length).toString('utf8')
        expect(tail.endsWith('\n')).toBe(true)
        expect(JSON.parse(tail).type).toBe('compaction')
        outcomes.new++
      }
      if (r.signal === 'SIGKILL') killed[afterMarker ? 'whileWriting' : 'anywhere']++
      else expect(r.code).toBe(0)
      for (const t of temps) fs.rmSync(path.join(killDir, t))
    }
    process.stderr.write(`--append kill test: ${JSON.stringify({ ...outcomes, killed })} over ${RUNS} runs (${(original.length / 1e6).toFixed(1)} MB session)\n`)
    // Most kills after the marker land while the file is being written.
    expect(killed.whileWriting).toBeGreaterThan(0)
  }, 20000 + RUNS * 4000)

})
