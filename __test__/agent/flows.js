'use strict'
// The flows the real-agent suite drives, written once for every agent line.
// Each flow names the repository files its tools work on (kept as they were
// in work-tree/, copied into a temp folder), the scripted model's answers to the agent's own requests
// (see scripted-model.js), what it does with the session, and what must
// have happened for the flow to have tested anything (`expect`, checked by
// the suite for both modules). Sizes are chosen with room to spare against
// the 6k window (compaction above 4,500 tokens, keep about 1,500), so that
// ordinary edits of the files read do not move a flow off its scenario.

const read = (path, extra = {}) => ({ name: 'read', args: { path, ...extra } })
const bash = (command) => ({ name: 'bash', args: { command } })
const edit = (path, oldText, newText) => ({ name: 'edit', args: { path, edits: [{ oldText, newText }] } })
const write = (path, content) => ({ name: 'write', args: { path, content } })
const say = (text) => ({ text })
const call = (...tools) => ({ tools })
/** The provider answers the request with its context-overflow error (see scripted-model.js). */
const overflow = () => ({ overflow: true })

/** A user message with a pasted log: long enough to hold the cut point of the compaction that follows it. */
const PASTED_LOG = [
  'The build printed this before it stopped:',
  '```',
  ...Array.from(
    { length: 40 },
    (_, i) => `[build ${String(i + 1).padStart(2, '0')}] compiling prime-compaction (src/core/cut_point.rs) ... warning: keep_recent_tokens is read twice`,
  ),
  '```',
  'Which setting does the cut point read, and where is it checked?',
].join('\n')

const FILES = [
  'platform.js',
  'Cargo.toml',
  'jest.config.js',
  'src/core/settings.rs',
  'src/core/cut_point.rs',
  'src/core/model.rs',
  'src/core/overflow.rs',
  'src/core/text.rs',
]

/** Two ordinary turns (reads, a grep, answers): about 1,400 tokens of context. */
const WARM_UP = {
  prompts: ['How does platform.js tell musl from glibc?', 'Where are the compaction settings validated?'],
  replies: [
    call(read('platform.js')),
    say('isMusl() reads process.report: no glibcVersionRuntime in the report header means musl.'),
    call(bash('grep -n "fn " src/core/settings.rs')),
    call(read('src/core/settings.rs')),
    say('src/core/settings.rs reads enabled, reserveTokens and keepRecentTokens and rejects a missing field with a TypeError.'),
  ],
}

async function warmUp(h) {
  for (const text of WARM_UP.prompts) await h.prompt(text)
}

/** After the warm-up: a turn that ends above the threshold, its cut point on its own (long) user message. */
const LOG_TURN = {
  prompt: PASTED_LOG,
  replies: [
    call(read('src/core/cut_point.rs')),
    say('The cut point reads keepRecentTokens (src/core/cut_point.rs); settings.rs checks that it is present.'),
  ],
}

/** One long turn of reads and an edit: more than keepRecentTokens on its own, so its compaction splits it. */
const LONG_TURN = {
  prompt: 'Read the model and cut point code, then note in Cargo.toml which file chooses the cut point.',
  replies: [
    call(read('src/core/model.rs')),
    call(read('src/core/cut_point.rs', { limit: 40 })),
    call(bash('wc -l src/core/cut_point.rs src/core/model.rs')),
    call(edit('Cargo.toml', '[package]', '# the cut point: src/core/cut_point.rs\n[package]')),
    say('Done: model.rs holds the model limits, cut_point.rs chooses the cut, and Cargo.toml now says so.'),
  ],
}

/** A turn with one read of more than keepRecentTokens. */
const READ_TURN = {
  prompt: 'Read src/core/text.rs: where does it cut long texts?',
  replies: [call(read('src/core/text.rs')), say('text.rs cuts long texts at UTF-16 boundaries, never inside a surrogate pair.')],
}

/** A short turn: one small read and an answer. */
const SHORT_TURN = {
  prompt: 'How many Jest workers does jest.config.js allow?',
  replies: [call(read('jest.config.js')), say('maxWorkers is 2: the two CPU-bound suites run side by side.')],
}

const CUT_POINT_QUESTION = 'Read src/core/cut_point.rs and tell me which setting it reads.'

const BRANCH_TURN = {
  prompt: 'Note in platform.js where binaryName comes from.',
  replies: [call(edit('platform.js', "binaryName: 'prime-compaction'", "binaryName: 'prime-compaction' /* napi binaryName */")), say('platform.js now notes where binaryName comes from.')],
}

/** Summary retries as 1.6 reads settings.retry: two, 10 ms apart at first. */
const RETRIES = { enabled: true, maxRetries: 2, baseDelayMs: 10 }

const isUserMessage = (text) => (e) => e.type === 'message' && e.message.role === 'user' && e.message.content[0].text === text

const CONTINUE = { prompt: 'What did we establish so far?', reply: say('The settings, the cut point and the model limits are read; Cargo.toml has a note.') }

/** What the extensions below put in place of a bash tool result's output. */
const OMITTED = '[bash output omitted by the extension]'
const omitBashOutput = (message) => (message.role === 'toolResult' && message.toolName === 'bash' ? { ...message, content: [{ type: 'text', text: OMITTED }] } : message)

/** Each flow runs on every agent line unless it names its `lines`. */
const FLOWS = [
  {
    name: 'threshold',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies, CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      await h.prompt(LOG_TURN.prompt)
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'threshold', split: false }] },
  },
  {
    name: 'split-turn',
    files: FILES,
    replies: [...WARM_UP.replies, ...SHORT_TURN.replies, ...LONG_TURN.replies, CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      await h.prompt(SHORT_TURN.prompt)
      await h.prompt(LONG_TURN.prompt)
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'threshold', split: true, history: true }] },
  },
  {
    // The second compaction splits a turn whose one read is more than
    // keepRecentTokens, so the cut lies in that turn for both lines and the
    // log turn is history to fold into the previous summary. (1.6 compacts
    // the long turn before its second request, where the cut reaches back
    // into the log turn: with no history, the previous summary stands for it
    // and no request updates it.)
    name: 'split-turn-resummarized',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies, ...READ_TURN.replies, CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      await h.prompt(LOG_TURN.prompt)
      await h.prompt(READ_TURN.prompt)
      await h.prompt(CONTINUE.prompt)
    },
    expect: {
      compactions: [
        { reason: 'threshold', split: false },
        { reason: 'threshold', split: true, previousSummary: true },
      ],
    },
  },
  {
    // The provider counts more tokens than the agent estimates (its own
    // tokenizer): it rejects a request the agent thought fitting, which the
    // agent then compacts and sends again. (A request the agent itself
    // estimates above the window never goes out in 1.6: it compacts before
    // each request of a run once past the threshold.)
    name: 'overflow',
    files: FILES,
    replies: [
      ...WARM_UP.replies,
      call(read('src/core/overflow.rs', { limit: 80 })),
      call(read('src/core/text.rs', { limit: 80 })),
      overflow(),
      say('overflow.rs matches the providers\' overflow messages; text.rs cuts long texts at UTF-16 boundaries.'),
    ],
    async run(h) {
      await warmUp(h)
      await h.prompt('Read overflow.rs and text.rs: how are overflow errors recognised?')
    },
    expect: { overflow: true, compactions: [{ reason: 'overflow', willRetry: true }] },
  },
  {
    name: 'manual-instructions',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies.slice(0, 1), say('keepRecentTokens.'), CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      await h.prompt(CUT_POINT_QUESTION)
      await h.compact('Focus on the settings validation; keep the exact grep command that was run.')
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'manual', split: true, instructions: true }] },
  },
  {
    // With the warm-up alone there is nothing to cut for 1.6 (it keeps all of
    // it): one more turn gives both lines a compaction to abort.
    name: 'abort-manual',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies.slice(0, 1), say('keepRecentTokens.'), CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      await h.prompt(CUT_POINT_QUESTION)
      const held = h.model.holdNextSummary()
      const compaction = h.compact()
      // A compaction that ends without a summary request has nothing to abort: the expectations say so.
      await Promise.race([held, compaction])
      h.session.abortCompaction()
      await compaction
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'manual', aborted: true }] },
  },
  {
    name: 'abort-auto',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies, CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      const held = h.model.holdNextSummary()
      const turn = h.prompt(LOG_TURN.prompt)
      await Promise.race([held, turn])
      h.session.abortCompaction()
      await turn
      // Still above the threshold: the next prompt compacts first, this time to the end.
      await h.prompt(CONTINUE.prompt)
    },
    expect: {
      compactions: [
        { reason: 'threshold', aborted: true },
        { reason: 'threshold', split: false },
      ],
    },
  },
  {
    name: 'branch-summary',
    files: FILES,
    replies: [
      ...WARM_UP.replies,
      ...BRANCH_TURN.replies,
      call(write('NOTES.md', '# Notes\n\n- platform.js: isMusl() reads process.report.\n')),
      say('NOTES.md written.'),
      say('On this branch: the notes file and the platform.js comment.'),
    ],
    async run(h) {
      await warmUp(h)
      await h.prompt(BRANCH_TURN.prompt)
      const away = h.sessionManager.getLeafId()
      const secondQuestion = h.lastEntryId(isUserMessage(WARM_UP.prompts[1]))
      await h.navigateTree(secondQuestion, { summarize: true })
      await h.prompt('Instead, write a NOTES.md with what we learnt about platform.js.')
      await h.navigateTree(away, { summarize: true })
      await h.prompt('What is on this branch?')
    },
    expect: { branchSummaries: 2 },
  },
  {
    name: 'extension-compaction',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies, CONTINUE.reply],
    extension(pi, { record, describe }) {
      pi.on('session_before_compact', async (event) => {
        const { preparation } = event
        record.preparations = [...(record.preparations || []), describe(preparation)]
        return {
          compaction: {
            summary: `Extension summary of ${preparation.messagesToSummarize.length} messages; files read: ${[...preparation.fileOps.read].join(', ')}`,
            firstKeptEntryId: preparation.firstKeptEntryId,
            tokensBefore: preparation.tokensBefore,
            details: { source: 'extension', readFiles: [...preparation.fileOps.read] },
          },
        }
      })
    },
    async run(h) {
      await warmUp(h)
      await h.prompt(LOG_TURN.prompt)
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'threshold', fromExtension: true }] },
  },
  {
    // 0.78 has no preparation transforms (an extension can only cancel or
    // supply a compaction): this extension projects the preparation itself
    // and calls the module's compact() with it, without a streamFn.
    name: 'extension-compact-call',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies.slice(0, 1), say('keepRecentTokens.'), CONTINUE.reply],
    extension(pi, { agent, record, describe }) {
      pi.on('session_before_compact', async (event, ctx) => {
        const { preparation } = event
        record.preparations = [...(record.preparations || []), describe(preparation)]
        const projected = {
          ...preparation,
          messagesToSummarize: preparation.messagesToSummarize.map(omitBashOutput),
          turnPrefixMessages: preparation.turnPrefixMessages.map(omitBashOutput),
        }
        const auth = await ctx.modelRegistry.getApiKeyAndHeaders(ctx.model)
        const result = await agent.compact(projected, ctx.model, auth.apiKey, auth.headers, event.customInstructions, event.signal)
        return { compaction: { ...result, details: { ...result.details, projectedBy: 'extension' } } }
      })
    },
    async run(h) {
      await warmUp(h)
      await h.prompt(CUT_POINT_QUESTION)
      await h.compact('Keep the file names exact.')
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'manual', fromExtension: true, instructions: true }] },
  },
  {
    // The preparation an extension sees is the one the agent compacts next:
    // changed in place (and nothing returned), it is what the built-in
    // summarizer gets.
    name: 'extension-preparation-changed',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies.slice(0, 1), say('keepRecentTokens.'), CONTINUE.reply],
    extension(pi, { record, describe }) {
      pi.on('session_before_compact', async (event) => {
        const { preparation } = event
        preparation.messagesToSummarize = preparation.messagesToSummarize.map(omitBashOutput)
        preparation.turnPrefixMessages = preparation.turnPrefixMessages.map(omitBashOutput)
        record.preparations = [...(record.preparations || []), describe(preparation)]
      })
    },
    async run(h) {
      await warmUp(h)
      await h.prompt(CUT_POINT_QUESTION)
      await h.compact()
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'manual', split: true }], summaryRequestsInclude: OMITTED },
  },
  // 1.6 only: its summaries retry transient failures (pi-ai's retry policy,
  // settings.retry); 0.78 has no such retries, and its compactions fail.
  {
    name: 'summary-retried',
    lines: ['1.6'],
    files: FILES,
    settings: { retry: RETRIES },
    replies: [...WARM_UP.replies, ...LOG_TURN.replies.slice(0, 1), say('keepRecentTokens.'), ...BRANCH_TURN.replies, CONTINUE.reply],
    // The compaction's history request fails once (0; 1 is its retry, 2 the turn prefix), the branch summary's is rate limited once.
    summaryFaults: {
      0: { status: 500, error: 'The server had an error while processing your request.' },
      3: { status: 429, error: 'Rate limit reached for requests per minute. Please try again later.', headers: { 'retry-after': '1' } },
    },
    async run(h) {
      await warmUp(h)
      await h.prompt(CUT_POINT_QUESTION)
      await h.compact()
      await h.prompt(BRANCH_TURN.prompt)
      // Back to the compaction: the branch turn is summarized.
      await h.navigateTree(h.lastEntryId((e) => e.type === 'compaction'), { summarize: true })
      await h.prompt(CONTINUE.prompt)
    },
    expect: { branchSummaries: 1, compactions: [{ reason: 'manual', split: true }], summaryRetries: 2 },
  },
  {
    // The agent's bug-report summary goes through the module too
    // (completeSummarization, getSummarizationFailure, serializeConversation,
    // convertToLlm); its first request fails and is retried.
    name: 'bug-report',
    lines: ['1.6'],
    files: FILES,
    settings: { retry: RETRIES },
    replies: [...WARM_UP.replies, ...BRANCH_TURN.replies],
    summaryFaults: { 0: { status: 500, error: 'The server had an error while processing your request.' } },
    async run(h) {
      await warmUp(h)
      await h.prompt(BRANCH_TURN.prompt)
      await h.bugReport('The platform.js edit was not what I asked for.')
    },
    expect: { bugReports: 1 },
  },
  {
    name: 'summary-stream-dropped',
    lines: ['1.6'],
    files: FILES,
    settings: { retry: RETRIES },
    replies: [...WARM_UP.replies, ...LOG_TURN.replies, CONTINUE.reply],
    // The connection drops in mid-summary; the retry's stream ends without a finish reason; the next one is whole.
    summaryFaults: {
      0: { resetAfterChunks: 2, sse: ['## Goal\n', 'A summary cut short ', 'by the dropped connection.'] },
      1: { raw: 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"## Goal\\nA summary whose stream just stops."},"finish_reason":null}]}\n\ndata: [DONE]\n\n' },
    },
    async run(h) {
      await warmUp(h)
      await h.prompt(LOG_TURN.prompt)
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'threshold', split: false }], summaryRetries: 2 },
  },
]

/** The turns the flows are made of, for other drivers of the same scripted sessions (faults/ops.js). */
const TURNS = { FILES, WARM_UP, LOG_TURN, LONG_TURN, SHORT_TURN, BRANCH_TURN, CONTINUE, CUT_POINT_QUESTION, warmUp, say, call, read, edit }

/** The flows `line` (a row of lines.js) runs. */
const flowsOf = (line) => FLOWS.filter((f) => !f.lines || f.lines.includes(line.line))

module.exports = { FLOWS, TURNS, flowsOf }
