//! How a failed summary answer is reported, per agent line
//! ([`SummaryFailures`]), and pi 1.6's `getSummarizationFailure`, which
//! names the failures any summary caller must not take for a summary.

use crate::agent_line::SummaryFailures;
use crate::js::string::{JsStr, Utf16Builder};
use crate::summary::compact::{Part, Stop};

/// The part a failure message names.
pub fn label(part: Part) -> &'static str {
    match part {
        Part::History => "Summarization",
        Part::TurnPrefix => "Turn prefix summarization",
        Part::Branch => "Branch summarization",
    }
}

/// Why an answer is no summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Failure<'a> {
    /// `stopReason: "error"` with this message (empty when there was none).
    Error(&'a str),
    /// `stopReason: "length"`; the output budget the request asked for, if any.
    Length(Option<f64>),
    /// A tool call instead of a summary.
    ToolCall,
    /// `stopReason: "aborted"` without the caller's signal aborting.
    Aborted,
    /// Still a context overflow after the spec's smaller retries.
    Overflow { retries: u8, message: &'a str },
}

/// The message a failure of `part` is reported with in a line.
pub fn describe(rules: &SummaryFailures, part: Part, failure: Failure<'_>) -> String {
    let detail = match failure {
        Failure::ToolCall if rules.tool_call_attempted => {
            return format!("{} attempted to call a tool", label(part));
        }
        Failure::ToolCall => "the model answered with a tool call instead of a summary".to_string(),
        Failure::Error("") if part == Part::Branch => rules.branch_no_message.to_string(),
        Failure::Error("") => "Unknown error".to_string(),
        Failure::Error(message) => message.to_string(),
        Failure::Length(_) if rules.length.is_some() => rules.length.unwrap_or_default().to_string(),
        Failure::Length(Some(limit)) => format!(
            "the summary is incomplete (the model stopped at its output limit of {limit} tokens)"
        ),
        Failure::Length(None) => "the summary is incomplete (the model stopped at its output limit)".to_string(),
        Failure::Aborted => "the request was aborted".to_string(),
        Failure::Overflow { retries, message } => format!(
            "the request still overflows the model's context after {retries} smaller retries: {message}"
        ),
    };
    if part == Part::Branch && !rules.branch_labelled {
        detail
    } else {
        format!("{} failed: {detail}", label(part))
    }
}

/// `getSummarizationFailure(response, label)`: `"<label> failed: <errorMessage
/// or 'Unknown error'>"` for an error answer, the line's length detail for a
/// `length` stop, `None` for anything else (an aborted answer included).
/// `label` and `error_message` come `String()`-converted; `error_message` is
/// `None` when it is falsy.
pub fn summarization_failure(
    rules: &SummaryFailures,
    stop: Stop,
    error_message: Option<&JsStr>,
    label: &JsStr,
) -> Option<JsStr> {
    let mut out = Utf16Builder::new();
    out.push_js(label);
    out.push_str(" failed: ");
    match stop {
        Stop::Error => match error_message {
            Some(message) if !message.is_empty() => out.push_js(message),
            _ => out.push_str("Unknown error"),
        },
        Stop::Length => out.push_str(rules.length?),
        Stop::Finished | Stop::Aborted => return None,
    }
    Some(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_line::AgentLine;

    #[test]
    fn each_line_words_failures_its_own_way() {
        let (old, new) = (
            &AgentLine::V0_78.summary_failures,
            &AgentLine::V1_6.summary_failures,
        );
        let cases: &[(Part, Failure<'_>, &str, &str)] = &[
            (Part::History, Failure::Error("bad"), "Summarization failed: bad", "Summarization failed: bad"),
            (Part::Branch, Failure::Error("bad"), "bad", "Branch summarization failed: bad"),
            (Part::Branch, Failure::Error(""), "Summarization failed", "Branch summarization failed: Unknown error"),
            (Part::TurnPrefix, Failure::Error(""), "Turn prefix summarization failed: Unknown error", "Turn prefix summarization failed: Unknown error"),
            (
                Part::History,
                Failure::Length(Some(4096.0)),
                "Summarization failed: the summary is incomplete (the model stopped at its output limit of 4096 tokens)",
                "Summarization failed: generation hit the token cap and the summary is incomplete",
            ),
            (
                Part::Branch,
                Failure::Length(None),
                "the summary is incomplete (the model stopped at its output limit)",
                "Branch summarization failed: generation hit the token cap and the summary is incomplete",
            ),
            (
                Part::TurnPrefix,
                Failure::ToolCall,
                "Turn prefix summarization failed: the model answered with a tool call instead of a summary",
                "Turn prefix summarization attempted to call a tool",
            ),
            (Part::Branch, Failure::ToolCall, "the model answered with a tool call instead of a summary", "Branch summarization attempted to call a tool"),
        ];
        for &(part, failure, want_old, want_new) in cases {
            assert_eq!(describe(old, part, failure), want_old);
            assert_eq!(describe(new, part, failure), want_new);
        }
    }

    #[test]
    fn get_summarization_failure() {
        let rules = &AgentLine::V1_6.summary_failures;
        let label = JsStr::from_str("Bug report summary");
        let msg = JsStr::from_str("boom");
        let f = |stop, m: Option<&JsStr>| {
            summarization_failure(rules, stop, m, &label).map(|s| s.to_string())
        };
        assert_eq!(
            f(Stop::Error, Some(&msg)).as_deref(),
            Some("Bug report summary failed: boom")
        );
        assert_eq!(
            f(Stop::Error, None).as_deref(),
            Some("Bug report summary failed: Unknown error")
        );
        assert_eq!(
            f(Stop::Length, Some(&msg)).as_deref(),
            Some("Bug report summary failed: generation hit the token cap and the summary is incomplete")
        );
        assert_eq!(f(Stop::Aborted, Some(&msg)), None);
        assert_eq!(f(Stop::Finished, None), None);
    }
}
