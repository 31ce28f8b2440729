'use strict'
// Differences between the agent's own compaction module and ours that are
// deliberate, per agent line, as the real-agent suite (agent.test.js) finds
// them: `where` is the kind of difference (see compare.js), `flows` the flows
// it occurs in (exactly), `reason` why it is so. The suite fails on a
// difference this list lacks and on an entry that no longer occurs.

/** Flows in which the built-in summarizer sends requests (all but the extension's own compaction). */
const SUMMARIZING = [
  'threshold',
  'split-turn',
  'split-turn-resummarized',
  'overflow',
  'manual-instructions',
  'abort-manual',
  'abort-auto',
  'branch-summary',
  'extension-compact-call',
  'extension-preparation-changed',
]

/** The 1.6 flows whose summaries fail once and are retried (flows.js). */
const RETRYING = ['summary-retried', 'summary-stream-dropped']

module.exports = {
  '0.78': [
    {
      where: 'summary request: system prompt',
      flows: SUMMARIZING,
      reason: 'the summarization system prompt is written for this package, not copied from the agent',
    },
    {
      where: 'summary request: prompt text',
      flows: SUMMARIZING,
      reason:
        "the spec's request: its transcript format (call ids, tool names, error flags), the summary projection, the Reasoning Digest section, instructions marked as taking priority",
    },
    {
      where: 'summary request compact/turnPrefix: customInstructions',
      flows: ['manual-instructions', 'extension-compact-call'],
      reason: "the spec puts custom instructions in every request, the split turn's prefix request too; the 0.78 line sends them with the history request only",
    },
    {
      where: 'summary request navigateTree/history: options.max_completion_tokens',
      flows: ['branch-summary'],
      reason:
        "a branch summary may use min(0.8 × reserveTokens, model.maxTokens) output tokens (2,000 here) where the 0.78 line asks for a fixed 2,048, more than this model's maxTokens",
    },
  ],
  '1.6': [
    {
      where: 'summary request: system prompt',
      flows: [...SUMMARIZING, ...RETRYING],
      reason: 'the summarization system prompt is written for this package, not copied from the agent',
    },
    {
      where: 'summary request: prompt text',
      flows: [...SUMMARIZING, ...RETRYING, 'bug-report'],
      reason:
        "the spec's request: its transcript format (call ids, tool names, error flags), the summary projection, the Reasoning Digest section, instructions marked as taking priority, the turn prefix framed like the history (1.6.0: \"# Conversation\" / \"# Instructions\"); the agent's own bug-report prompt differs only in its transcript, which it writes with the module's serializeConversation (the spec's format, see the README's differences)",
    },
  ],
}
