//! The agent lines this package is a drop-in for, as data: every rule in
//! which one line of `@earendil-works/pi-coding-agent` behaves differently
//! from another is a field here, and the algorithms read the field instead
//! of knowing a version. Adding a line is adding a value.
//!
//! What the compaction spec decides (the transcript format, the summary
//! projection, the Reasoning Digest, overflow retries, custom instructions
//! in every request) is the same in every line and is not a field.

/// One agent line's rules.
#[derive(Debug, PartialEq, Eq)]
pub struct AgentLine {
    /// The line's name, as its entry point is named (`prime-compaction/agent-<name>`).
    pub name: &'static str,
    /// `convertToLlm` passes `role: "system"` messages through as they are
    /// (1.6 keeps the agent's system prompt in its transcript; 0.78 had no
    /// such messages and dropped unknown roles).
    pub convert_keeps_system: bool,
    /// How summary requests are made (compaction, `generateSummary`, branch summaries).
    pub summary_requests: SummaryRequests,
    /// How a failed summary answer is reported.
    pub summary_failures: SummaryFailures,
    /// What summary results carry.
    pub summary_results: SummaryResults,
    /// How the context of a path of entries is built (`buildSessionContext`,
    /// 1.6's `buildSessionProjection`).
    pub session: SessionRules,
    /// Where `findCutPoint` and the planner's cut point may fall.
    pub cut: CutRules,
    /// Token estimates and which usage counts.
    pub tokens: TokenRules,
    /// Which tool calls `extractFileOpsFromMessage` records.
    pub file_ops: FileOpRules,
    /// What `prepareCompaction` plans over and returns.
    pub plan: PlanRules,
    /// Exports this line has and older lines lack, named as the agent names them.
    pub added_exports: &'static [&'static str],
}

/// How a line makes its summary requests. Their text is the spec's in every
/// line (the projected transcript, the Reasoning Digest, custom instructions
/// in every request, overflow retries, one request at a time).
#[derive(Debug, PartialEq, Eq)]
pub struct SummaryRequests {
    /// Requests ask for at most `maxTokens` output tokens,
    /// `floor(0.8 × reserveTokens)` (half that for a turn prefix) capped by
    /// `model.maxTokens`. Without it (1.6) no `maxTokens` is sent and
    /// `reserveTokens` is not read.
    pub max_tokens: bool,
    /// The context is a `TranscriptContext`: the system prompt is a leading
    /// `{ role: "system", content, timestamp: 0 }` message and there is no
    /// `systemPrompt` key (1.6), instead of `{ systemPrompt, messages }`.
    pub transcript_context: bool,
    /// The option keys of a compaction or `generateSummary` request, in
    /// order; `reasoning` follows when the model reasons and a thinking
    /// level other than "off" is given.
    pub compaction_options: &'static [&'static str],
    /// The option keys of a branch-summary request, in order (`reasoning` as above).
    pub branch_options: &'static [&'static str],
    /// Every request goes through `completeSummarization`, which adds these
    /// options and retries transient failures under the caller's `retry`
    /// policy. `None`: the request goes to `streamFn` as it is, once.
    pub complete_summarization: Option<CompleteSummarization>,
    /// The module of the host agent's pi-ai that exports `completeSimple`,
    /// used when no `streamFn` is given.
    pub complete_simple_from: &'static str,
    /// The parameters `compact()` and `generateSummary()` declare after
    /// `streamFn`, in order (the functions' `length` counts them).
    pub call_parameters: &'static [&'static str],
}

/// What `completeSummarization` adds to a request's options: `cacheRetention`
/// (after the caller's keys), and a `sessionId` where the caller gave none (a
/// fresh UUIDv7 per call).
#[derive(Debug, PartialEq, Eq)]
pub struct CompleteSummarization {
    pub cache_retention: &'static str,
}

/// How a failed summary is reported. Compaction rejects with
/// `"<label> failed: <detail>"` (labels: "Summarization", "Turn prefix
/// summarization"); a branch summary resolves `{ error }`.
#[derive(Debug, PartialEq, Eq)]
pub struct SummaryFailures {
    /// A branch summary's `{ error }` is labelled like compaction's
    /// ("Branch summarization failed: …"); otherwise it is the detail alone,
    /// the provider's own words.
    pub branch_labelled: bool,
    /// The detail of a branch summary's error answer without a message
    /// (compaction's is "Unknown error" in every line).
    pub branch_no_message: &'static str,
    /// The detail of a `stopReason: "length"` answer; `None`: one naming the
    /// output limit the request asked for.
    pub length: Option<&'static str>,
    /// A tool call instead of a summary is reported as `"<label> attempted to
    /// call a tool"`; otherwise as a failure whose detail says so.
    pub tool_call_attempted: bool,
}

/// What a line's summary results carry.
#[derive(Debug, PartialEq, Eq)]
pub struct SummaryResults {
    /// `compact()`, `generateSummaryWithUsage()` and branch summaries report
    /// the answers' `usage` (a split turn's two added up).
    pub usage: bool,
    /// With nothing to summarize before a split turn, an empty
    /// `previousSummary` stands for the history part as it is; otherwise it
    /// counts as absent and "No prior history." stands.
    pub empty_previous_summary_stands: bool,
}

/// The context the agent rebuilds from a path of entries. Both lines walk
/// the `parentId` chain ending at the last entry and keep, after the last
/// compaction, its summary, the kept range from `firstKeptEntryId` and the
/// entries after it; these rules are what 1.6 added to that walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionRules {
    /// `context_edit` entries in the context hide their target (`replacement:
    /// null`) or replace its content; the latest edit of a target wins. Also
    /// read by `prepareBranchEntries`.
    pub context_edits: bool,
    /// A message whose `content` is null or missing reads as `[]` (`""` for a
    /// system message), as a shallow copy; a custom message's as `[]`.
    pub normalise_null_content: bool,
    /// A compaction contributes its `systemMessage` before its summary.
    pub compaction_system_message: bool,
    /// System-role message entries of the kept range before the compaction
    /// are left out (the compaction's `systemMessage` stands for them).
    pub kept_range_drops_system: bool,
}

/// The cut-point walk (`findCutPoint`, and the planner's own cut point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutRules {
    /// Cut points and turn starts are the entries whose context messages
    /// have a cut-point or turn-start role, and a cut at a turn start does
    /// not split a turn (1.6). Otherwise (0.78) they are decided by entry
    /// type and message role: every `custom_message` and `branch_summary`
    /// (an empty one too) is both, and only a cut at a user message is unsplit.
    pub by_context_messages: bool,
    /// The keep-recent walk counts every entry's context messages (custom
    /// messages, branch summaries, compactions in the range), not only
    /// `message` entries.
    pub budget_counts_context_messages: bool,
    /// Entries worth 0 tokens are passed over by the keep-recent walk
    /// (0.78 still checked the budget at a 0-token message).
    pub skip_zero_token_entries: bool,
    /// When no cut point lies at or after the entry that crossed the budget,
    /// the cut falls at the last cut point (0.78: at the first).
    pub fallback_to_last_cut_point: bool,
    /// The backward scan that pulls metadata entries into the kept side
    /// stops at any entry with context messages (0.78: at `message` entries).
    pub absorb_stops_at_context_entries: bool,
    /// The planner's cut moves one entry on when everything after it is a
    /// failed assistant attempt hidden by context edits (and the edits).
    pub recovery_omission_advance: bool,
}

/// Token estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRules {
    /// `estimateTokens` counts system messages: content, section texts and
    /// the JSON of `toolsAdded` (0.78: 0).
    pub estimate_system: bool,
    /// An assistant usage that totals 0 is passed over when looking for the
    /// last usage.
    pub skip_zero_usage: bool,
}

/// File operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileOpRules {
    /// A tool result's `nestedCalls.calls` (calls made from a script)
    /// count as tool calls.
    pub nested_calls: bool,
}

/// `prepareCompaction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanRules {
    /// Plans over the session projection (the path's context entries, edits
    /// applied): the range starts after the projected compaction, and the
    /// summarized messages are the projected ones without system messages.
    /// Otherwise (0.78) over the raw entries, from the raw position of the
    /// previous compaction's `firstKeptEntryId`.
    pub on_projection: bool,
    /// `tokensBefore` is `estimateProjectedContextTokens`: usage captured
    /// before the last `context_edit` or compaction is not trusted, and the
    /// system messages are estimated merged.
    pub tokens_before_projected: bool,
    /// `undefined` when nothing would be summarized (0.78 returned a plan
    /// with empty lists).
    pub undefined_when_nothing_to_summarize: bool,
}

impl AgentLine {
    /// `@earendil-works/pi-coding-agent` 0.78.x.
    pub const V0_78: AgentLine = AgentLine {
        name: "0.78",
        convert_keeps_system: false,
        summary_requests: SummaryRequests {
            max_tokens: true,
            transcript_context: false,
            compaction_options: &["maxTokens", "signal", "apiKey", "headers"],
            branch_options: &["apiKey", "headers", "signal", "maxTokens"],
            complete_summarization: None,
            complete_simple_from: "@earendil-works/pi-ai",
            call_parameters: &[],
        },
        summary_failures: SummaryFailures {
            branch_labelled: false,
            branch_no_message: "Summarization failed",
            length: None,
            tool_call_attempted: false,
        },
        summary_results: SummaryResults {
            usage: false,
            empty_previous_summary_stands: false,
        },
        session: SessionRules {
            context_edits: false,
            normalise_null_content: false,
            compaction_system_message: false,
            kept_range_drops_system: false,
        },
        cut: CutRules {
            by_context_messages: false,
            budget_counts_context_messages: false,
            skip_zero_token_entries: false,
            fallback_to_last_cut_point: false,
            absorb_stops_at_context_entries: false,
            recovery_omission_advance: false,
        },
        tokens: TokenRules {
            estimate_system: false,
            skip_zero_usage: false,
        },
        file_ops: FileOpRules {
            nested_calls: false,
        },
        plan: PlanRules {
            on_projection: false,
            tokens_before_projected: false,
            undefined_when_nothing_to_summarize: false,
        },
        added_exports: &[],
    };

    /// `@earendil-works/pi-coding-agent` 1.6.x.
    pub const V1_6: AgentLine = AgentLine {
        name: "1.6",
        convert_keeps_system: true,
        summary_requests: SummaryRequests {
            max_tokens: false,
            transcript_context: true,
            compaction_options: &["signal", "apiKey", "headers", "env", "sessionId"],
            branch_options: &["apiKey", "headers", "env", "signal"],
            complete_summarization: Some(CompleteSummarization {
                cache_retention: "none",
            }),
            complete_simple_from: "@earendil-works/pi-ai/compat",
            call_parameters: &["env", "retry", "callbacks", "sessionId"],
        },
        summary_failures: SummaryFailures {
            branch_labelled: true,
            branch_no_message: "Unknown error",
            length: Some("generation hit the token cap and the summary is incomplete"),
            tool_call_attempted: true,
        },
        summary_results: SummaryResults {
            usage: true,
            empty_previous_summary_stands: true,
        },
        session: SessionRules {
            context_edits: true,
            normalise_null_content: true,
            compaction_system_message: true,
            kept_range_drops_system: true,
        },
        cut: CutRules {
            by_context_messages: true,
            budget_counts_context_messages: true,
            skip_zero_token_entries: true,
            fallback_to_last_cut_point: true,
            absorb_stops_at_context_entries: true,
            recovery_omission_advance: true,
        },
        tokens: TokenRules {
            estimate_system: true,
            skip_zero_usage: true,
        },
        file_ops: FileOpRules { nested_calls: true },
        plan: PlanRules {
            on_projection: true,
            tokens_before_projected: true,
            undefined_when_nothing_to_summarize: true,
        },
        added_exports: &[
            "completeSummarization",
            "estimateProjectedContextTokens",
            "generateSummaryWithUsage",
            "getSummarizationFailure",
        ],
    };

    /// Every supported line, oldest first; a line's index here is how the
    /// binding names it.
    pub const ALL: [&'static AgentLine; 2] = [&Self::V0_78, &Self::V1_6];

    /// The newest line: what the bare package entry follows.
    pub fn newest() -> &'static AgentLine {
        Self::ALL[Self::ALL.len() - 1]
    }

    pub fn by_name(name: &str) -> Option<&'static AgentLine> {
        Self::ALL.iter().copied().find(|line| line.name == name)
    }

    pub fn by_index(index: usize) -> Option<&'static AgentLine> {
        Self::ALL.get(index).copied()
    }

    pub fn index(&self) -> usize {
        Self::ALL
            .iter()
            .position(|line| line.name == self.name)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::AgentLine;

    #[test]
    fn lines_are_found_by_name_and_index() {
        for (i, line) in AgentLine::ALL.iter().enumerate() {
            assert_eq!(AgentLine::by_name(line.name), Some(*line));
            assert_eq!(AgentLine::by_index(i), Some(*line));
            assert_eq!(line.index(), i);
        }
        assert_eq!(AgentLine::by_name("0.79"), None);
        assert_eq!(AgentLine::by_index(AgentLine::ALL.len()), None);
        assert_eq!(AgentLine::newest().name, "1.6");
    }
}
