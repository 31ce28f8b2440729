//! How a failed summary answer is reported, per agent line
//! ([`SummaryFailures`]), and pi 1.6's `getSummarizationFailure`, which
//! names the failures any summary caller must not take for a summary.

use crate::agent_line::SummaryFailures;
use crate::js::string::{JsStr, Utf16Builder};
use crate::summary::compact::{Part, Stop};
use crate::summary::retry::MAX_OVERFLOW_RETRIES;

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
    /// `stopReason: "error"` with this message, `String()`-converted;
    /// `None` when it was falsy (a truthy one may still write as "").
    Error(Option<&'a JsStr>),
    /// `stopReason: "length"`; the output budget the request asked for, if any.
    Length(Option<f64>),
    /// A tool call instead of a summary.
    ToolCall,
    /// A finished answer with no text but whitespace.
    Empty,
    /// `stopReason: "aborted"` without the caller's signal aborting.
    Aborted,
    /// Still a context overflow after the spec's smaller retries, or no
    /// smaller request to send: `retries` the compaction's so far (a split
    /// turn's two requests share them), `retried` whether this request was
    /// one of them.
    Overflow {
        retries: u8,
        retried: bool,
        message: &'a JsStr,
    },
}

/// The message a failure of `part` is reported with in a line; the model's
/// own error message is kept exactly (lone surrogates included).
pub fn describe(rules: &SummaryFailures, part: Part, failure: Failure<'_>) -> JsStr {
    let mut detail = Utf16Builder::new();
    match failure {
        Failure::ToolCall if rules.tool_call_attempted => {
            return JsStr::from_string(format!("{} attempted to call a tool", label(part)));
        }
        Failure::ToolCall => {
            detail.push_str("the model answered with a tool call instead of a summary")
        }
        Failure::Error(None) if part == Part::Branch => detail.push_str(rules.branch_no_message),
        Failure::Error(None) => detail.push_str("Unknown error"),
        Failure::Error(Some(message)) => detail.push_js(message),
        Failure::Length(_) if rules.length.is_some() => {
            detail.push_str(rules.length.unwrap_or_default())
        }
        Failure::Length(Some(limit)) => detail.push_str(&format!(
            "the summary is incomplete (the model stopped at its output limit of {limit} tokens)"
        )),
        Failure::Length(None) => {
            detail.push_str("the summary is incomplete (the model stopped at its output limit)")
        }
        Failure::Aborted => detail.push_str("the request was aborted"),
        Failure::Empty => detail.push_str("the model's answer has no text"),
        Failure::Overflow {
            retries,
            retried,
            message,
        } => {
            let spent = retries >= MAX_OVERFLOW_RETRIES;
            let count = match retries {
                1 => "1 smaller retry".to_string(),
                n => format!("{n} smaller retries"),
            };
            detail.push_str(&match (retried, spent) {
                (true, true) => {
                    format!("the request still overflows the model's context after {count}: ")
                }
                (true, false) => format!(
                    "the request still overflows the model's context after {count}, and cannot be made smaller: "
                ),
                (false, true) => format!(
                    "the request overflows the model's context, and the compaction's {count} are spent: "
                ),
                (false, false) => {
                    "the request overflows the model's context and cannot be made smaller: ".to_string()
                }
            });
            detail.push_js(message);
        }
    }
    let detail = detail.finish();
    if part == Part::Branch && !rules.branch_labelled {
        detail
    } else {
        let mut out = Utf16Builder::new();
        out.push_str(label(part));
        out.push_str(" failed: ");
        out.push_js(&detail);
        out.finish()
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
            Some(message) => out.push_js(message),
            None => out.push_str("Unknown error"),
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
        let (bad, none) = (JsStr::from_str("bad"), JsStr::empty());
        let cases: &[(Part, Failure<'_>, &str, &str)] = &[
            (Part::History, Failure::Error(Some(&bad)), "Summarization failed: bad", "Summarization failed: bad"),
            (Part::Branch, Failure::Error(Some(&bad)), "bad", "Branch summarization failed: bad"),
            (Part::Branch, Failure::Error(None), "Summarization failed", "Branch summarization failed: Unknown error"),
            (Part::TurnPrefix, Failure::Error(None), "Turn prefix summarization failed: Unknown error", "Turn prefix summarization failed: Unknown error"),
            // A truthy message that writes as "" (`[]`) is written as "".
            (Part::History, Failure::Error(Some(&none)), "Summarization failed: ", "Summarization failed: "),
            (Part::Branch, Failure::Error(Some(&none)), "", "Branch summarization failed: "),
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
            (Part::Branch, Failure::Empty, "the model's answer has no text", "Branch summarization failed: the model's answer has no text"),
        ];
        for &(part, failure, want_old, want_new) in cases {
            assert_eq!(describe(old, part, failure), want_old);
            assert_eq!(describe(new, part, failure), want_new);
        }
    }

    #[test]
    fn a_model_message_with_lone_surrogates_is_kept_exactly() {
        // "a\u{D83D}b" and a lone low surrogate at the end.
        let message = JsStr::from_utf16(&[0x61, 0xD83D, 0x62, 0xDC00]);
        for line in [&AgentLine::V0_78, &AgentLine::V1_6] {
            let rules = &line.summary_failures;
            let text = describe(rules, Part::History, Failure::Error(Some(&message)));
            let mut want: Vec<u16> = "Summarization failed: ".encode_utf16().collect();
            want.extend([0x61, 0xD83D, 0x62, 0xDC00]);
            assert_eq!(text.to_utf16(), want);
            let overflow = describe(
                rules,
                Part::TurnPrefix,
                Failure::Overflow {
                    retries: 2,
                    retried: true,
                    message: &message,
                },
            );
            assert!(overflow
                .to_utf16()
                .ends_with(&[0x3A, 0x20, 0x61, 0xD83D, 0x62, 0xDC00]));
            let branch = describe(rules, Part::Branch, Failure::Error(Some(&message))).to_utf16();
            assert!(branch.ends_with(&[0x61, 0xD83D, 0x62, 0xDC00]));
        }
        // A high surrogate at the end of the label's text and a low one at the
        // start of the message join into a pair, as JS concatenation joins them.
        let rules = &AgentLine::V1_6.summary_failures;
        let label = JsStr::from_utf16(&[0x78, 0xD83D]);
        let low = JsStr::from_utf16(&[0xDE00]);
        let joined =
            summarization_failure(rules, Stop::Error, Some(&low), &label).map(|s| s.to_utf16());
        let mut want: Vec<u16> = vec![0x78, 0xD83D];
        want.extend(" failed: ".encode_utf16());
        want.push(0xDE00);
        assert_eq!(joined, Some(want));
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
            f(Stop::Error, Some(&JsStr::empty())).as_deref(),
            Some("Bug report summary failed: ")
        );
        assert_eq!(
            f(Stop::Length, Some(&msg)).as_deref(),
            Some("Bug report summary failed: generation hit the token cap and the summary is incomplete")
        );
        assert_eq!(f(Stop::Aborted, Some(&msg)), None);
        assert_eq!(f(Stop::Finished, None), None);
    }
}
