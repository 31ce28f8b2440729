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

impl AgentLine {
    /// `@earendil-works/pi-coding-agent` 0.78.x.
    pub const V0_78: AgentLine = AgentLine {
        name: "0.78",
        convert_keeps_system: false,
        summary_requests: SummaryRequests {
            max_tokens: true,
            transcript_context: false,
            compaction_options: &["maxTokens", "signal", "apiKey", "headers"],
            branch_options: &["maxTokens", "signal", "apiKey", "headers"],
            complete_summarization: None,
            complete_simple_from: "@earendil-works/pi-ai",
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
