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

/** A short turn: one small read and an answer. */
const SHORT_TURN = {
  prompt: 'How many Jest workers does jest.config.js allow?',
  replies: [call(read('jest.config.js')), say('maxWorkers is 2: the two CPU-bound suites run side by side.')],
}

const CONTINUE = { prompt: 'What did we establish so far?', reply: say('The settings, the cut point and the model limits are read; Cargo.toml has a note.') }

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
    name: 'split-turn-resummarized',
    files: FILES,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies, ...LONG_TURN.replies, CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      await h.prompt(LOG_TURN.prompt)
      await h.prompt(LONG_TURN.prompt)
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
    name: 'overflow',
    files: FILES,
    replies: [
      ...WARM_UP.replies,
      call(read('src/core/overflow.rs')),
      call(read('src/core/text.rs')),
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
      await h.prompt('Read src/core/cut_point.rs and tell me which setting it reads.')
      await h.compact('Focus on the settings validation; keep the exact grep command that was run.')
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'manual', split: true, instructions: true }] },
  },
  {
    name: 'abort-manual',
    files: FILES,
    replies: [...WARM_UP.replies, CONTINUE.reply],
    async run(h) {
      await warmUp(h)
      const held = h.model.holdNextSummary()
      const compaction = h.compact()
      await held
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
      await held
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
      call(edit('platform.js', "binaryName: 'prime-compaction'", "binaryName: 'prime-compaction' /* napi binaryName */")),
      say('platform.js now notes where binaryName comes from.'),
      call(write('NOTES.md', '# Notes\n\n- platform.js: isMusl() reads process.report.\n')),
      say('NOTES.md written.'),
      say('On this branch: the notes file and the platform.js comment.'),
    ],
    async run(h) {
      await warmUp(h)
      await h.prompt('Note in platform.js where binaryName comes from.')
      const away = h.sessionManager.getLeafId()
      const secondQuestion = h.lastEntryId((e) => e.type === 'message' && e.message.role === 'user' && e.message.content[0].text === WARM_UP.prompts[1])
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
        const shorten = (message) =>
          message.role === 'toolResult' && message.toolName === 'bash'
            ? { ...message, content: [{ type: 'text', text: '[bash output omitted by the extension]' }] }
            : message
        const projected = {
          ...preparation,
          messagesToSummarize: preparation.messagesToSummarize.map(shorten),
          turnPrefixMessages: preparation.turnPrefixMessages.map(shorten),
        }
        const auth = await ctx.modelRegistry.getApiKeyAndHeaders(ctx.model)
        const result = await agent.compact(projected, ctx.model, auth.apiKey, auth.headers, event.customInstructions, event.signal)
        return { compaction: { ...result, details: { ...result.details, projectedBy: 'extension' } } }
      })
    },
    async run(h) {
      await warmUp(h)
      await h.prompt('Read src/core/cut_point.rs and tell me which setting it reads.')
      await h.compact('Keep the file names exact.')
      await h.prompt(CONTINUE.prompt)
    },
    expect: { compactions: [{ reason: 'manual', fromExtension: true, instructions: true }] },
  },
]

/** The turns the flows are made of, for other drivers of the same scripted sessions (faults/ops.js). */
const TURNS = { FILES, WARM_UP, LOG_TURN, LONG_TURN, SHORT_TURN, CONTINUE, warmUp, say, call, read, edit }

module.exports = { FLOWS, TURNS }
