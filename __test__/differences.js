'use strict'
// Every way each agent line of this package departs from that version of
// the agent's own compaction module, on purpose: where the compaction spec
// wins, and where the agent would hang, crash or store a broken summary.
// Entries are { id, area, what, why }; the README's differences section is
// written from this list, and a test shows each entry's behaviour
// (summary-differences.test.js for the summary areas, lines.test.js for the
// planning ones).

/** The summary areas: requests, retries, results, aborts. */
const SUMMARY_AREAS = ['summary request', 'summary retries', 'summary result', 'aborts']

const summaryText = (agent) => ({
  id: 'summary-text',
  area: 'summary request',
  what:
    "The request text is the spec's: the summarized messages go through the summary projection (images as [image], empty or orphaned " +
    'tool results dropped, only the newest three tool-result bodies kept) into the transcript format with call ids, tool names and error ' +
    `flags, readable reasoning kept as [Assistant reasoning] for summarizers other than Claude-family ones, and the requested format has a Reasoning Digest. The prompts and SUMMARIZATION_SYSTEM_PROMPT are this package's own; the turn prefix is framed like the history. ${agent}`,
  why: "The compaction spec's transcript format, summary projection with readable reasoning, and Reasoning Digest.",
})

const overflowRetries = (agent) => ({
  id: 'overflow-retries',
  area: 'summary retries',
  what:
    'A context-overflow answer is retried at most twice, each time smaller (the oldest complete user round dropped, fewer exact ' +
    "tool-result bodies, an oversized round bounded to its head and tail), and only then rejects (\"... still overflows the model's context after 2 smaller retries: ...\"); " +
    'a retry step that would be no smaller is skipped for the next, and when none is smaller the overflow rejects at once, saying so. A split turn\'s two requests share the two retries, each starting ' +
    'from its whole request, the second request\'s retry taking the step after the first\'s. An overflow is an error in ' +
    "the wordings 1.6's pi-ai takes for one (not a rate limit or throttling), in an error answer or in an error streamFn throws (then the rejection's cause), or a `length` stop with no output and the window full. " +
    agent,
  why: "The compaction spec's overflow retries.",
})

const abortedAnswer = {
  id: 'aborted-answer',
  area: 'summary result',
  what:
    "An answer with stopReason \"aborted\" while the caller's signal has not aborted rejects compact() (\"Summarization failed: the request was aborted\"); the agent takes its partial text for the summary.",
  why: 'A partial summary would be stored as a complete one.',
}

const emptyAnswer = {
  id: 'empty-answer',
  area: 'summary result',
  what:
    'A finished answer with no text, or only whitespace, rejects compact() and generateSummary() ("Summarization failed: the model\'s answer has no text") and is { error } from generateBranchSummary(); the agent stores the empty summary, with the file lists after it.',
  why: 'An empty summary would stand for the history it replaces, and the previous summary with it.',
}

const summaryAbort = {
  id: 'summary-abort',
  area: 'aborts',
  what: 'generateSummary() (and, in 1.6, generateSummaryWithUsage()) rejects with an AbortError once its signal aborts; the agent resolves whatever text the aborted request left.',
  why: 'A string result could be taken for a summary.',
}

const firstKeptEntry = {
  id: 'first-kept-entry',
  area: 'summary request',
  what: 'A preparation without firstKeptEntryId rejects ("First kept entry has no UUID - session may need migration") before any request is sent; the agent sends its requests first and rejects after.',
  why: 'No tokens are spent on a compaction that cannot be stored.',
}

module.exports = {
  SUMMARY_AREAS,
  '0.78': [
    summaryText('0.78.1 writes thinking as [Assistant thinking], tool calls without ids, results without names, and its own prompts.'),
    {
      id: 'custom-instructions',
      area: 'summary request',
      what:
        'Custom instructions go into every request, the turn prefix of a split turn included, in a block that says they take priority over the defaults, and compact() returns them as customInstructions; 0.78.1 appends them as "Additional focus" to the history request only and returns none.',
      why: 'The spec: instructions are passed to the summarization prompt with high priority and persisted on the compaction entry.',
    },
    overflowRetries('0.78.1 rejects the first overflow.'),
    {
      id: 'sequential-split-turn',
      area: 'summary request',
      what: "A split turn's history and turn-prefix requests are sent one after the other; 0.78.1 sends them in parallel.",
      why: 'Single-slot local servers reject a second concurrent request (the spec sets no order; the history goes first).',
    },
    {
      id: 'previous-summary-split-turn',
      area: 'summary result',
      what: 'With nothing to summarize before a split turn, the previous summary stands for the history part; 0.78.1 writes "No prior history." and drops it.',
      why: 'The spec passes the previous summary on as iterative context (1.6 does the same).',
    },
    {
      id: 'incomplete-answers',
      area: 'summary result',
      what:
        'A stopReason "length" answer or a tool call instead of a summary rejects compact() and generateSummary() and is { error } from generateBranchSummary(); 0.78.1 accepts the partial text.',
      why: 'A cut-off or empty summary would be stored as complete (1.6 rejects both too).',
    },
    abortedAnswer,
    emptyAnswer,
    {
      id: 'aborted-compaction',
      area: 'aborts',
      what: 'compact() resolves { aborted: true } at once when its signal aborts, without waiting for streamFn; 0.78.1 waits for the stream and resolves the partial text. generateBranchSummary() too (with something to summarize): 0.78.1 waits and resolves whatever the stream then gives, a whole summary if it ignored the abort.',
      why: 'Nothing storable comes back, and 0.78.1 reports an aborted auto-compaction as cancelled only when compact() resolves.',
    },
    summaryAbort,
    {
      id: 'branch-output-budget',
      area: 'summary request',
      what:
        'A branch summary asks for min(floor(0.8 × reserveTokens), model.maxTokens) output tokens; 0.78.1 asks for a fixed 2,048 (the same option keys, in the same order).',
      why: "Long branches are not cut short, and 2,048 can exceed a small model's maxTokens.",
    },
    {
      id: 'branch-reasoning',
      area: 'summary request',
      what: 'generateBranchSummary() takes thinkingLevel and passes it on as reasoning to reasoning models, as compaction does; 0.78.1 has no such option and never sends reasoning.',
      why: "One way to make every summary request; the caller chooses the summarizer's reasoning level (1.6 does the same).",
    },
    firstKeptEntry,
    {
      id: 'parent-cycle',
      area: 'session path',
      what: 'prepareCompaction, prepareCompactionAsync and the file planners throw an Error naming the entry id when parentId links form a cycle; so does collectEntriesForBranchSummary on the part of a path its answer needs, where a parentId that getEntry does not resolve is an Error too',
      why: "0.78.1's buildSessionContext and getBranch follow the links forever and never return; its getBranch cuts a path short at a parent it cannot find, and the entries collected with it",
    },
  ],
  '1.6': [
    summaryText('1.6.0 drops all thinking from the transcript and frames the turn prefix as "# Conversation" / "# Instructions".'),
    {
      id: 'custom-instructions',
      area: 'summary request',
      what:
        'Custom instructions go into every request in a block that says they take priority over the defaults, and compact() returns them as customInstructions; 1.6.0 appends them as "Additional focus" (to both requests too) and returns none.',
      why: 'The spec: instructions are passed to the summarization prompt with high priority and persisted on the compaction entry.',
    },
    overflowRetries(
      'Under a retry policy, an overflowing request is never sent again as it is, even when its message holds a retryable word (a standalone 500, "timeout"). 1.6.0 rejects the first overflow ("Summarization failed: <message>"), or resends the same request when such a word appears.',
    ),
    {
      id: 'unbounded-retries',
      area: 'summary retries',
      what:
        'retry.enabled with a maxRetries that never ends the loop (missing, NaN, Infinity, a non-numeric string) gives 3 retries, pi\'s default, and onRetryScheduled sees maxAttempts 3; 1.6.0 retries retryable errors forever. Other values are read as numbers, as 1.6.0\'s comparison reads them, and passed to onRetryScheduled as numbers where 1.6.0 passes the value as given ("5").',
      why: 'A summary request must not retry forever; the bound is the agent\'s own default.',
    },
    {
      id: 'retry-after',
      area: 'summary retries',
      what:
        "An error answer's retryAfterMs (a number: how long the server asks to be left alone; the CLI's requests set it from Retry-After) is the wait before its retry, at least 0, instead of the policy's delay; one over the policy's cap (maxAgentDelayMs, 60 s by default, where above 0), or over 2^31 − 1 ms (the longest a JS timer waits), is not retried. It is read only when a retry is due. 1.6.0 never reads it.",
      why: "pi-ai's provider retries wait what the server asks and refuse an ask over 60 s, but are off unless retry.provider.maxRetries is set; the CLI has one retry loop, which honours it.",
    },
    {
      id: 'aborted-compaction',
      area: 'aborts',
      what:
        'compact() resolves { aborted: true } as soon as its signal aborts: before a request, during one without waiting for streamFn, or during a retry wait, or while a retry callback it awaits has not settled (1.6.0 waits on such a callback for ever; generateSummary() rejects then, generateBranchSummary() resolves { aborted: true }). 1.6.0 waits for the stream and resolves a result built from whatever text the aborted request left (after an abort in a retry wait, an empty summary with the file lists). When compact() stops waiting for a retried call, it calls onRetryFinished(false, attempt) then, where 1.6.0 calls it once the aborted answer arrives. generateBranchSummary() (with something to summarize) resolves { aborted: true } the same way, where 1.6.0 waits and resolves whatever the stream then gives, a whole summary if it ignored the abort.',
      why: 'Nothing storable comes back. The 1.6 agent decides on signal.aborted alone and 0.78 needs the resolve, so both report a cancel; one behaviour for both lines.',
    },
    abortedAnswer,
    emptyAnswer,
    summaryAbort,
    firstKeptEntry,
    {
      id: 'split-turn-usage',
      area: 'summary result',
      what:
        "A split turn whose history answer carries a usage object and whose turn-prefix answer carries none reports the history's usage; a usage without cost adds a zero cost to the sum. 1.6.0 throws a TypeError from combineUsage after both summaries were made.",
      why: 'A missing usage field must not lose a finished compaction.',
    },
    {
      id: 'parent-cycle',
      area: 'session projection',
      what: 'prepareCompaction, prepareCompactionAsync and the file planners throw an Error naming the entry id when parentId links form a cycle; so does collectEntriesForBranchSummary on the part of a path its answer needs, where a parentId that getEntry does not resolve is an Error too',
      why: "1.6.0's buildSessionPath and getBranch follow the links forever and never return; its getBranch cuts a path short at a parent it cannot find, and the entries collected with it",
    },
    {
      id: 'nested-calls-malformed',
      area: 'file operations',
      what: 'a tool result whose nestedCalls.calls is neither an array nor a string, or holds a null record, is a TypeError naming nestedCalls.calls (or the record)',
      why: "1.6.0 throws a TypeError that names no field for a value it cannot iterate, and iterates any iterable (a Set of records), where ours reads arrays only",
    },
    {
      id: 'system-message-fields',
      area: 'token estimates',
      what: 'a system message whose sections is not an object, whose section values are neither strings nor null, or whose tools have no string name, is a TypeError naming the field',
      why: '1.6.0 counts such values as NaN, by their string indices, or under an undefined name',
    },
    {
      id: 'inherited-message-fields',
      area: 'session projection',
      what: "the planner reads a message it copies for a context edit or a null content with the fields the message inherits from its prototype (a class instance's role, usage); the copy handed back is 1.6.0's, an object spread of its own fields",
      why: '1.6.0 plans with its copy, which has lost those fields; the messages the agent stores are plain objects, on which both agree',
    },
  ],
}
