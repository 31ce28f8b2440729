#!/usr/bin/env node
'use strict'
// The `prime-compaction` command: plan a session file's compaction, show the
// exact summarization request, or run the compaction against an
// OpenAI-compatible server and append the result to the session.

const fs = require('node:fs')
const { parseArgs: nodeParseArgs } = require('node:util')

let api
let sessionFile
try {
  api = require('../index.js')
  sessionFile = require('./session-file.js')
} catch (err) {
  // No binary for this platform: the loader's message says which and what to do.
  const message = String(err && err.message)
  process.stderr.write(`${message.startsWith('prime-compaction:') ? '' : 'prime-compaction: '}${message}\n`)
  process.exit(1)
}
const { CliError, readSessionBytes, planBytes, readBranch, entryError, messageError, branchSystemMessage, compactionEntry, appendEntryAtomically } = sessionFile
const { openAiStreamFn } = require('./openai.js')
const { version } = require('../package.json')

const USAGE = `Usage:
  prime-compaction plan <session.jsonl> [--leaf ID] [--keep-recent N] [--reserve N]
                        [--tokenizer ENC] [--json] [--print-request [--model ID]
                        [--instructions TEXT] [--context-window N] [--max-tokens N]]
  prime-compaction compact <session.jsonl> --base-url URL --model ID
                        [--api-key-env VAR] [--instructions TEXT] [--append] [--stream]
                        [--timeout MS] [--retries N] [--retry-delay MS]
                        [--context-window N] [--max-tokens N] [--leaf ID]
                        [--keep-recent N] [--reserve N] [--tokenizer ENC] [--json]
  prime-compaction --version

Common options:
  --leaf ID            plan the branch that ends at entry ID (default: the last entry)
  --keep-recent N      tokens of recent context to keep (default ${api.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens})
  --reserve N          tokens reserved for the answer (default ${api.DEFAULT_COMPACTION_SETTINGS.reserveTokens})
  --tokenizer ENC      count tokens exactly with o200k_base or cl100k_base
                       (default: the agent's estimate, characters / 4)
  --quiet              no progress messages on stderr
  -h, --help           this text

plan:
  --json               print the plan object (prepareCompactionFromFile) as JSON
  --print-request      print the summarization request(s) compact would send
                       (with --json: the chat-completions request bodies); --model,
                       --instructions, --context-window and --max-tokens shape them
                       as they do for compact

compact:
  --base-url URL       the server's OpenAI API root, e.g. http://127.0.0.1:8080/v1
  --model ID           the model name to send
  --api-key-env VAR    send the key in environment variable VAR as a Bearer token
  --instructions TEXT  extra instructions for the summary (customInstructions)
  --append             write the compaction entry into the session file
  --stream             ask for a streamed (server-sent events) response
  --timeout MS         give up on a request after MS milliseconds (default 600000)
  --retries N          send a request again up to N times after a transient failure
                       (a rate limit, a 5xx, an overloaded server, a dropped
                       connection, a timeout), as pi does (default 3; 0: never)
  --retry-delay MS     wait MS, then twice as long each time, before a retry
                       (default 2000; each wait at most 60000), or what the
                       server's Retry-After asks (over 60 s: no retry)
  --context-window N   the model's context window in tokens (default 128000)
  --max-tokens N       the model's output limit in tokens (caps the summary budget)
  --json               print the compaction result (and appended entry) as JSON
`

const FLAGS = {
  common: { leaf: 'string', 'keep-recent': 'count', reserve: 'count', tokenizer: 'encoding', json: 'bool', quiet: 'bool', help: 'bool' },
  plan: { 'print-request': 'bool', model: 'string', instructions: 'string', 'context-window': 'size', 'max-tokens': 'size' },
  compact: {
    'base-url': 'string', model: 'string', 'api-key-env': 'string', instructions: 'string', append: 'bool',
    stream: 'bool', timeout: 'size', retries: 'count', 'retry-delay': 'count', 'context-window': 'size', 'max-tokens': 'size',
  },
}

// plan's options that shape the printed requests, and nothing without them.
const REQUEST_OPTIONS = ['model', 'instructions', 'context-window', 'max-tokens']

class UsageError extends CliError {}

/** node:util parseArgs's options for a command's flags (counts are checked after). */
function parseArgsOptions(kinds) {
  const options = {}
  for (const [name, kind] of Object.entries(kinds)) {
    options[name] = { type: kind === 'bool' ? 'boolean' : 'string', ...(name === 'help' && { short: 'h' }) }
  }
  return options
}

/**
 * The arguments as node:util parseArgs tokenizes them, in this command's
 * conventions: an argument that does not start with `--` is a positional
 * one, except `-h`; after `--` every argument is (a file named `--x.jsonl`).
 */
function tokensOf(args, options) {
  const { tokens } = nodeParseArgs({ args, options, strict: false, allowPositionals: true, tokens: true })
  const out = []
  let shortAt = -1
  for (const token of tokens) {
    if (token.kind === 'option-terminator') {
      out.push(...args.slice(token.index + 1).map((value) => ({ kind: 'positional', value })))
      break
    }
    if (token.kind === 'option' && !token.rawName.startsWith('--')) {
      // One token per letter of `-abc`: the argument counts once.
      if (token.index === shortAt) continue
      shortAt = token.index
      if (args[token.index] !== '-h') throw new UsageError(`unknown option ${args[token.index]} (a file whose name starts with - goes after --)`)
      out.push(token)
      continue
    }
    out.push(token)
  }
  return out
}

function parseArgs(argv) {
  const [command, ...rest] = argv
  if (command === undefined) throw new UsageError('no command given')
  if (command === '-h' || command === '--help' || command === 'help') return { command: 'help' }
  if (command === '--version' || command === '-V') return { command: 'version' }
  if (!['plan', 'compact'].includes(command)) throw new UsageError(`unknown command ${JSON.stringify(command)}`)
  const kinds = { ...FLAGS.common, ...FLAGS[command] }
  const options = {}
  const positional = []
  for (const token of tokensOf(rest, parseArgsOptions(kinds))) {
    if (token.kind === 'positional') {
      positional.push(token.value)
      continue
    }
    // `--=x` is an option with no name.
    const name = token.name.split('=')[0]
    const kind = Object.hasOwn(kinds, name) ? kinds[name] : undefined
    if (!kind) throw new UsageError(`unknown option --${name} for ${command}`)
    if (kind === 'bool') {
      if (token.inlineValue) throw new UsageError(`--${name} takes no value`)
      options[name] = true
      continue
    }
    const value = token.value
    if (value === undefined) throw new UsageError(`--${name} needs a value`)
    // `--model --append` is a forgotten value, not a model named "--append".
    if (!token.inlineValue && value.startsWith('-') && value.length > 1) {
      // A negative number is a number out of range, not a forgotten value.
      if ((kind === 'count' || kind === 'size') && /^-[\d.]/.test(value)) throw new UsageError(`--${name} expects a whole number, got ${JSON.stringify(value)}`)
      throw new UsageError(`--${name} needs a value, got the option ${value} (write --${name}=${value} if that is the value)`)
    }
    if (kind === 'encoding') {
      // The encodings countTokens knows.
      try {
        api.countTokens('', value)
      } catch {
        throw new UsageError(`--${name} expects o200k_base or cl100k_base, got ${JSON.stringify(value)}`)
      }
      options[name] = value
    } else if (kind === 'count' || kind === 'size') {
      const n = Number(value)
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new UsageError(`--${name} expects a whole number, got ${JSON.stringify(value)}`)
      // A window, an output limit or a timeout of 0 leaves nothing to work with.
      if (kind === 'size' && n === 0) throw new UsageError(`--${name} must be at least 1`)
      // Node's timers take at most 2^31 - 1 ms; a longer one would fire at once.
      if (name === 'timeout' && n > 2 ** 31 - 1) throw new UsageError(`--timeout is at most ${2 ** 31 - 1} ms (about 24 days)`)
      options[name] = n
    } else {
      // An empty value would quietly mean the default, or nothing; only instructions may be none.
      if (value === '' && name !== 'instructions') throw new UsageError(`--${name} needs a value`)
      options[name] = value
    }
  }
  if (options.help) return { command: 'help' }
  const unused = command === 'plan' && !options['print-request'] ? REQUEST_OPTIONS.filter((name) => name in options) : []
  if (unused.length > 0) throw new UsageError(`${unused.map((name) => `--${name}`).join(', ')} ${unused.length === 1 ? 'is' : 'are'} for --print-request only`)
  if (positional.length !== 1) throw new UsageError(positional.length === 0 ? 'no session file given' : `one session file expected, got ${positional.length} arguments`)
  if (options['base-url'] !== undefined) {
    let url
    try {
      url = new URL(options['base-url'])
    } catch {}
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new UsageError(`--base-url expects an http:// or https:// URL, got ${JSON.stringify(options['base-url'])}`)
    }
    // Requests go to {base-url}/chat/completions: a query or a fragment would end up before that path.
    if (/[?#]/.test(options['base-url'])) {
      throw new UsageError(`--base-url takes no query or fragment, got ${JSON.stringify(options['base-url'])}`)
    }
  }
  return { command, file: positional[0], options }
}

/** Progress on stderr for work that takes more than about a second. */
function progress(quiet) {
  const started = Date.now()
  // Each line gives the time its step has taken so far.
  let stepStarted = started
  let timer
  let label
  let detail = ''
  let shown = false
  const show = () => {
    shown = true
    process.stderr.write(`prime-compaction: ${label}${detail}... ${((Date.now() - stepStarted) / 1000).toFixed(0)}s\n`)
  }
  return {
    /** Says `text` now when `now`, otherwise only if the step is still running after a second (then every 10 s). */
    step(text, now = false) {
      clearInterval(timer)
      stepStarted = Date.now()
      label = text
      detail = ''
      if (quiet) return
      if (now) show()
      timer = setTimeout(() => {
        show()
        timer = setInterval(show, 10000)
        timer.unref()
      }, 1000)
      timer.unref()
    },
    detail(text) {
      detail = text
    },
    note(text) {
      if (!quiet) process.stderr.write(`prime-compaction: ${text}\n`)
    },
    /** Ends the step; `ok` says it succeeded, and only then is "done" said. */
    done(ok = true) {
      clearTimeout(timer)
      clearInterval(timer)
      if (ok && shown && !quiet) process.stderr.write(`prime-compaction: done in ${((Date.now() - started) / 1000).toFixed(1)}s\n`)
    },
  }
}

function settingsOf(options) {
  const settings = { ...api.DEFAULT_COMPACTION_SETTINGS }
  if (options['keep-recent'] !== undefined) settings.keepRecentTokens = options['keep-recent']
  if (options.reserve !== undefined) settings.reserveTokens = options.reserve
  if (options.tokenizer !== undefined) settings.tokenizer = options.tokenizer
  return settings
}

/** A server's error as one line of at most 200 characters (a proxy's HTML error page is many). */
function firstLine(message) {
  const line = String(message).trim().split(/\r?\n|\r/, 1)[0]
  if (line.length <= 200) return line
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(line[199]) ? 199 : 200
  return `${line.slice(0, end)}...`
}

/** compact()'s retry policy (1.6's `retry`) from --retries and --retry-delay; pi's own settings' defaults. */
function retryOf(options) {
  const maxRetries = options.retries ?? 3
  return { enabled: maxRetries > 0, maxRetries, baseDelayMs: options['retry-delay'] ?? 2000 }
}

function modelOf(options, baseUrl) {
  const id = options.model || 'local-model'
  const model = {
    id,
    name: id,
    api: 'openai-completions',
    provider: 'openai-compatible',
    baseUrl: baseUrl || '',
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: options['context-window'] ?? 128000,
  }
  if (options['max-tokens'] !== undefined) model.maxTokens = options['max-tokens']
  return model
}

/** False for a pipe, a device, or a path that cannot be read (the readers say why). */
function isRegularFile(file) {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return true
  }
}

function sizeOf(bytes) {
  return bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`
}

// JSON.parse runs at very roughly 100 MB/s: above this, reading takes a second or more.
const SLOW_READ_BYTES = 64 << 20

/** Reads the file and parses its branch into objects: a preparation with message objects needs them. */
function loadBranch(file, options, say) {
  const bytes = readSessionBytes(file)
  if (bytes.length >= SLOW_READ_BYTES) say.step(`reading ${file} (${sizeOf(bytes.length)})`, true)
  return { bytes, ...readBranch(bytes, file, options.leaf) }
}

/** prepareCompaction over the loaded branch; an entry it cannot read is named by its file line. */
function prepare(file, { branch, lines }, options) {
  try {
    return api.prepareCompaction(branch, settingsOf(options))
  } catch (err) {
    throw entryError(err, file, lines)
  }
}

function filesLine(label, files) {
  if (files.length === 0) return `${label}: none`
  const shown = files.slice(0, 8).join(', ')
  return `${label} (${files.length}): ${shown}${files.length > 8 ? ', ...' : ''}`
}

function report(file, plan, options) {
  const settings = settingsOf(options)
  const { readFiles, modifiedFiles } = api.computeFileLists({
    read: new Set(plan.fileOps.read),
    written: new Set(plan.fileOps.written),
    edited: new Set(plan.fileOps.edited),
  })
  const lines = [
    `session:        ${file}${options.leaf ? ` (branch ending at ${options.leaf})` : ''}`,
    `tokens before:  ${plan.tokensBefore.toLocaleString('en-US')} (keep the last ${settings.keepRecentTokens.toLocaleString('en-US')}${settings.tokenizer ? ` counted with ${settings.tokenizer}` : ''}, reserve ${settings.reserveTokens.toLocaleString('en-US')})`,
    `cut:            keep from entry ${plan.firstKeptEntryId}`,
    `summarized:     ${entries(plan.messagesToSummarizeIds.length)}${plan.previousSummary !== undefined ? ', updating the previous compaction summary' : ''}`,
    plan.isSplitTurn && plan.turnPrefixIds.length > 0
      ? `split turn:     yes, the cut falls inside a turn; ${plan.turnPrefixIds.length === 1 ? 'its first entry gets its own summary' : `its first ${plan.turnPrefixIds.length} entries get their own summary`}`
      : 'split turn:     no',
    filesLine('files read', readFiles),
    filesLine('files modified', modifiedFiles),
  ]
  return `${lines.join('\n')}\n`
}

/** `n` entries, as a count reads: "1 entry", "2 entries". */
function entries(n) {
  return n === 1 ? '1 entry' : `${n} entries`
}

function printRequests(requests, model, options) {
  if (options.json) {
    const bodies = requests.map((r) => ({
      model: model.id,
      messages: [
        { role: 'system', content: r.systemPrompt },
        { role: 'user', content: r.prompt },
      ],
      max_tokens: r.maxTokens ?? model.maxTokens,
    }))
    process.stdout.write(`${JSON.stringify(bodies, null, 2)}\n`)
    return
  }
  const out = []
  requests.forEach((r, i) => {
    const maxTokens = r.maxTokens ?? model.maxTokens
    const budget = maxTokens === undefined ? '' : `, max_tokens ${maxTokens}`
    out.push(`===== request ${i + 1} of ${requests.length}: ${r.part === 'turnPrefix' ? 'turn prefix' : 'history'}${budget} =====`)
    out.push('----- system -----', r.systemPrompt, '----- user -----', r.prompt)
  })
  process.stdout.write(`${out.join('\n')}\n`)
}

async function planCommand(file, options) {
  const say = progress(options.quiet)
  if (options['print-request']) {
    const loaded = loadBranch(file, options, say)
    say.step('planning')
    const preparation = prepare(file, loaded, options)
    say.done()
    if (!preparation) throw new CliError(`${file}: nothing to compact (the branch is too small or already ends with a compaction)`)
    const model = modelOf(options)
    let requests
    try {
      requests = api.buildSummaryRequests(preparation, model, options.instructions)
    } catch (err) {
      throw messageError(err, file, loaded, preparation) ?? new CliError(`${file}: ${err.message}`)
    }
    printRequests(requests, model, options)
    return 0
  }
  say.step(`planning ${file}`)
  const request = { leafId: options.leaf, settings: settingsOf(options) }
  let plan
  if (isRegularFile(file)) {
    try {
      plan = await api.prepareCompactionFromFile(file, request)
    } catch (err) {
      throw new CliError(err.message)
    }
    if (plan === undefined && options.leaf !== undefined) {
      // The file planner plans an unknown leaf as an empty branch; tell the two apart.
      readBranch(readSessionBytes(file), file, options.leaf)
    }
  } else {
    // A pipe or a device can be read only once: its bytes are planned here,
    // an unknown leaf an error.
    plan = planBytes(readSessionBytes(file), file, request)
  }
  say.done()
  if (options.json) {
    process.stdout.write(`${JSON.stringify(plan ?? null, null, 2)}\n`)
    return 0
  }
  if (plan === undefined) {
    process.stdout.write(`session:        ${file}\nnothing to compact (the branch is too small or already ends with a compaction)\n`)
    return 0
  }
  process.stdout.write(report(file, plan, options))
  return 0
}

async function compactCommand(file, options) {
  for (const required of ['base-url', 'model']) {
    if (!options[required]) throw new UsageError(`compact needs --${required}`)
  }
  // The entry is written back beside the file: a pipe or a device read once has no file to append to.
  if (options.append) {
    let stat
    try {
      stat = fs.statSync(file)
    } catch {}
    if (stat !== undefined && !stat.isFile()) throw new UsageError(`--append needs a regular session file, and ${file} is not one (a pipe or a device)`)
  }
  let apiKey
  if (options['api-key-env']) {
    apiKey = process.env[options['api-key-env']]
    if (!apiKey) throw new CliError(`environment variable ${options['api-key-env']} (--api-key-env) is not set`)
  }
  const say = progress(options.quiet)
  const loaded = loadBranch(file, options, say)
  const { bytes, ids, branch, leaf } = loaded
  say.step('planning')
  const preparation = prepare(file, loaded, options)
  if (!preparation) throw new CliError(`${file}: nothing to compact (the branch is too small or already ends with a compaction)`)
  const systemMessage = options.append ? branchSystemMessage(loaded, file) : null
  const model = modelOf(options, options['base-url'])
  const controller = new AbortController()
  const onSignal = () => controller.abort()
  process.once('SIGINT', onSignal)
  let requests = 0
  // The last request's failure, if it failed itself (its words leave out the URL).
  let failure
  const streamFn = openAiStreamFn({
    baseUrl: options['base-url'],
    stream: Boolean(options.stream),
    timeoutMs: options.timeout ?? 600000,
    onEvent(event) {
      if (event.type === 'request') {
        failure = undefined
        requests++
        say.step(`waiting for ${model.id} at ${event.url} (request ${requests}${event.note ? `, ${event.note}` : ''})`)
      } else if (event.type === 'text') {
        say.detail(`, ${event.chars} characters so far`)
      } else if (event.type === 'failed') {
        failure = event
      }
    },
  })
  let result
  let ok = false
  try {
    result = await api.compact(preparation, model, apiKey, undefined, options.instructions, controller.signal, undefined, streamFn, undefined, retryOf(options), {
      onRetryScheduled(attempt, maxAttempts, delayMs, errorMessage) {
        const wait = waitText(delayMs)
        say.note(`retry ${attempt} of ${maxAttempts} in ${wait} after: ${firstLine(errorMessage)}`)
        say.step(`waiting ${wait} to send request ${requests + 1}`)
      },
    })
    ok = !result.aborted
  } catch (err) {
    // A message of the session it cannot summarize, by its file line.
    const named = messageError(err, file, loaded, preparation)
    if (named) throw named
    // The URL the failure came from, where its words leave it out.
    const where = failure && err.message.endsWith(failure.message) ? ` (POST ${failure.url}${askedWait(failure.retryAfterMs)})` : ''
    throw new CliError(`${err.message}${where}`)
  } finally {
    process.removeListener('SIGINT', onSignal)
    say.done(ok)
  }
  // An interrupted compaction resolves with { aborted: true }: nothing to print or append.
  if (result.aborted) throw new CliError('interrupted')
  let entry
  if (options.append) {
    entry = compactionEntry(result, ids, leaf.id, systemMessage)
    let written
    try {
      written = appendEntryAtomically(file, bytes, entry, (tmp, size) => {
        if (size >= 8 << 20) say.note(`writing ${file} (${sizeOf(size)}) through ${tmp}`)
      })
    } catch (err) {
      // The summary was paid for: it is printed even though it could not be stored.
      printResult({ result }, options)
      throw err
    }
    say.note(`appended compaction entry ${entry.id} to ${written}${written === file ? '' : ` (${file})`}`)
  }
  printResult(entry ? { result, entry } : { result }, options)
  return 0
}

/** A wait as the command's lines name it: `300 ms`, `2.0s` (a wait past due as 0 ms). */
function waitText(ms) {
  return ms < 1000 ? `${Math.max(0, ms)} ms` : `${(ms / 1000).toFixed(1)}s`
}

/** The wait a failed request's server asked for, as the failure's report names it. */
function askedWait(ms) {
  return ms === undefined ? '' : `; the server asked to wait ${waitText(ms)}`
}

/** compact's output: the summary, or with --json the result (and the entry appended). */
function printResult(output, options) {
  if (options.json) {
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`)
  } else {
    const { summary } = output.result
    process.stdout.write(summary.endsWith('\n') ? summary : `${summary}\n`)
  }
}

async function main(argv) {
  let parsed
  try {
    parsed = parseArgs(argv)
    if (parsed.command === 'help') {
      process.stdout.write(USAGE)
      return 0
    }
    if (parsed.command === 'version') {
      process.stdout.write(`${version}\n`)
      return 0
    }
    return await (parsed.command === 'plan' ? planCommand : compactCommand)(parsed.file, parsed.options)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`prime-compaction: ${err.message}\n\n${USAGE}`)
      return 2
    }
    process.stderr.write(`prime-compaction: ${err instanceof CliError ? err.message : (err && err.stack) || err}\n`)
    return 1
  }
}

// Output that cannot be written (a full disk, a closed pipe) ends the command.
process.stdout.on('error', (err) => {
  // A reader that stopped early (`| head`) wanted no more.
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0)
  process.stderr.write(`prime-compaction: cannot write the output: ${err.message}\n`)
  process.exit(1)
})

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
