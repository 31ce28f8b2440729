'use strict'
// The session operations the fault runs interrupt, written once for both
// sides of a run: the scripted model's answers to the agent's own turns (the
// parent's server) and what the agent is asked to do (the child, through `h`,
// see child.mjs). Each builds on the flows' turns (../flows.js), so its
// compaction or branch summary happens where the flows show it does.

const { TURNS } = require('../flows.js')

const { WARM_UP, LOG_TURN, LONG_TURN, SHORT_TURN, BRANCH_TURN, CUT_POINT_QUESTION, warmUp, say, call, read } = TURNS

/** The entry a compaction writes, and the one a branch summary writes. */
const COMPACTION = 'compaction'
const BRANCH_SUMMARY = 'branch_summary'

const OPS = {
  compact: {
    what: 'a manual compaction (history and turn prefix)',
    entryType: COMPACTION,
    summaryRequests: 2,
    replies: [...WARM_UP.replies, call(read('src/core/cut_point.rs')), say('keepRecentTokens.')],
    async prepare(h) {
      await warmUp(h)
      await h.prompt(CUT_POINT_QUESTION)
    },
    run: (h) => h.compact(),
  },
  auto: {
    what: 'an auto compaction at the threshold, in a turn (1.6: before its last request) or after it (0.78)',
    entryType: COMPACTION,
    /** The turn may go on after its compaction: later messages follow the attempt's entry. */
    continues: true,
    summaryRequests: 1,
    replies: [...WARM_UP.replies, ...LOG_TURN.replies],
    prepare: (h) => warmUp(h),
    run: (h) => h.prompt(LOG_TURN.prompt),
  },
  split: {
    what: 'an auto compaction that splits the turn (history and turn prefix)',
    entryType: COMPACTION,
    continues: true,
    summaryRequests: 2,
    replies: [...WARM_UP.replies, ...SHORT_TURN.replies, ...LONG_TURN.replies],
    async prepare(h) {
      await warmUp(h)
      await h.prompt(SHORT_TURN.prompt)
    },
    run: (h) => h.prompt(LONG_TURN.prompt),
  },
  branch: {
    what: 'a branch summary (navigateTree back to the second question, summarized)',
    entryType: BRANCH_SUMMARY,
    summaryRequests: 1,
    replies: [...WARM_UP.replies, ...BRANCH_TURN.replies],
    async prepare(h) {
      await warmUp(h)
      await h.prompt(BRANCH_TURN.prompt)
    },
    run: (h) => h.navigateTree(h.lastUserEntryId(WARM_UP.prompts[1]), { summarize: true }),
  },
}

/** After a failed or cancelled attempt: the same kind of call once more, with the model answering. */
const RECOVER = {
  compact: (h) => h.compact(),
  auto: (h) => h.compact(),
  split: (h) => h.compact(),
  branch: (h) => h.navigateTree(h.lastUserEntryId(WARM_UP.prompts[1]), { summarize: true }),
}

/**
 * Re-opening a session a kill left behind: one more turn, then a
 * compaction. The turn reads a little, so that 1.6, which keeps the whole of
 * a session shorter than keepRecentTokens, has something to compact after a
 * branch summary.
 */
const RESUME = {
  replies: [call(read('src/core/model.rs', { limit: 50 })), say('We were reading the compaction settings and the cut point.')],
  prompt: 'Where were we?',
}

module.exports = { OPS, RECOVER, RESUME, COMPACTION, BRANCH_SUMMARY }
