//! `compact()` as a state machine with no I/O: it says which summarization
//! request to send next, reads each response, and decides to go on, retry
//! smaller, fail, or finish. The binding drives it with the caller's
//! `streamFn`; tests and the CLI drive it with any other [`Llm`].

use crate::error::{Error, Result};
use crate::js::string::{JsStr, Utf16Builder};
use crate::plan::file_ops::format_file_operations;
use crate::summary::overflow::is_context_overflow;
use crate::summary::prompts;

/// How much a request is shrunk; attempt 0 is the full request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shrink {
    /// Oldest complete user rounds to leave out (at least one round always stays).
    pub drop_rounds: usize,
    /// How many of the newest tool-result bodies keep their text.
    pub tool_result_bodies: usize,
    /// Head-and-tail bound, in UTF-16 units, on one oversized round.
    pub round_bound: Option<usize>,
}

/// What can be summarized: it renders itself at a given shrink level.
pub trait Transcript {
    fn render(&self, shrink: &Shrink) -> JsStr;
}

/// The model facts the request depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelLimits {
    /// `model.maxTokens`; not positive (or NaN) means no limit.
    pub max_tokens: f64,
    /// `model.contextWindow`; not positive (or NaN) means unknown.
    pub context_window: f64,
}

/// Retries after a context overflow, each with a smaller request.
pub const MAX_OVERFLOW_RETRIES: u8 = 2;

/// Which summary a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    History,
    TurnPrefix,
    /// The summary of a branch the user navigates away from.
    Branch,
}

/// One summarization request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub part: Part,
    /// 0 for the first try of this part, then 1 and 2 for overflow retries.
    pub attempt: u8,
    pub system_prompt: &'static str,
    pub prompt: JsStr,
    pub max_tokens: f64,
}

/// `AssistantMessage.stopReason`, as far as compaction cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Finished,
    Length,
    Error,
    Aborted,
}

/// What the model answered, reduced to what decides the next step.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub stop: Stop,
    pub error_message: Option<String>,
    /// The text blocks, in order.
    pub texts: Vec<JsStr>,
    pub has_tool_call: bool,
}

/// Everything `compact()` needs, taken from the preparation.
pub struct Job<T: Transcript> {
    history: T,
    /// Present for a split turn whose prefix holds messages.
    turn_prefix: Option<T>,
    history_is_empty: bool,
    previous_summary: Option<JsStr>,
    custom_instructions: Option<JsStr>,
    reserve_tokens: f64,
    limits: ModelLimits,
    read_files: Vec<JsStr>,
    modified_files: Vec<JsStr>,
    branch: Option<BranchOptions>,
    state: State,
}

/// A branch summary instead of a compaction: `customInstructions` may
/// replace the default instructions, and the summary opens with the
/// branch preamble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchOptions {
    pub replace_instructions: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Asking {
        part: Part,
        attempt: u8,
        history: Option<JsStr>,
    },
    Done(JsStr),
    Failed,
}

pub struct JobInput<T: Transcript> {
    pub history: T,
    pub history_is_empty: bool,
    pub turn_prefix: Option<T>,
    pub previous_summary: Option<JsStr>,
    pub custom_instructions: Option<JsStr>,
    pub reserve_tokens: f64,
    pub limits: ModelLimits,
    pub read_files: Vec<JsStr>,
    pub modified_files: Vec<JsStr>,
    /// `Some` for a branch summary.
    pub branch: Option<BranchOptions>,
}

fn shrink_for(attempt: u8, limits: &ModelLimits, max_tokens: f64) -> Shrink {
    if attempt == 0 {
        return Shrink {
            drop_rounds: 0,
            tool_result_bodies: 3,
            round_bound: None,
        };
    }
    // About four UTF-16 units a token; half, then a quarter, of what the
    // window leaves after the answer. Unknown windows count as 128k tokens.
    let window = if limits.context_window > 0.0 {
        limits.context_window
    } else {
        128_000.0
    };
    let room = (window
        - if max_tokens.is_finite() {
            max_tokens
        } else {
            0.0
        })
    .max(4096.0);
    let share = if attempt == 1 { 0.5 } else { 0.25 };
    Shrink {
        drop_rounds: attempt as usize,
        tool_result_bodies: if attempt == 1 { 1 } else { 0 },
        round_bound: Some((room * 4.0 * share) as usize),
    }
}

impl<T: Transcript> Job<T> {
    pub fn new(input: JobInput<T>) -> Self {
        let mut job = Job {
            history: input.history,
            turn_prefix: input.turn_prefix,
            history_is_empty: input.history_is_empty,
            previous_summary: input.previous_summary.filter(|s| !s.is_empty()),
            custom_instructions: input.custom_instructions.filter(|s| !s.is_empty()),
            reserve_tokens: input.reserve_tokens,
            limits: input.limits,
            read_files: input.read_files,
            modified_files: input.modified_files,
            branch: input.branch,
            state: State::Failed,
        };
        job.state = if job.branch.is_some() {
            State::Asking {
                part: Part::Branch,
                attempt: 0,
                history: None,
            }
        } else if job.turn_prefix.is_some() && job.history_is_empty {
            // Nothing before the split turn: the previous summary (if any)
            // stands as the history part without a model call.
            let history = job
                .previous_summary
                .clone()
                .unwrap_or_else(|| JsStr::from_str(prompts::NO_PRIOR_HISTORY));
            State::Asking {
                part: Part::TurnPrefix,
                attempt: 0,
                history: Some(history),
            }
        } else {
            State::Asking {
                part: Part::History,
                attempt: 0,
                history: None,
            }
        };
        job
    }

    fn max_tokens(&self, part: Part) -> f64 {
        let share = if part == Part::TurnPrefix { 0.5 } else { 0.8 };
        let budget = (share * self.reserve_tokens).floor();
        if self.limits.max_tokens > 0.0 {
            budget.min(self.limits.max_tokens)
        } else {
            budget
        }
    }

    /// The request to send now, or `None` once the job has finished or failed.
    pub fn next_request(&self) -> Option<Request> {
        let State::Asking { part, attempt, .. } = &self.state else {
            return None;
        };
        let (part, attempt) = (*part, *attempt);
        let max_tokens = self.max_tokens(part);
        let shrink = shrink_for(attempt, &self.limits, max_tokens);
        let mut prompt = Utf16Builder::new();
        prompt.push_str("<conversation>\n");
        match part {
            Part::History | Part::Branch => prompt.push_js(&self.history.render(&shrink)),
            Part::TurnPrefix => {
                if let Some(prefix) = &self.turn_prefix {
                    prompt.push_js(&prefix.render(&shrink));
                }
            }
        }
        prompt.push_str("\n</conversation>\n\n");
        let instructions = match (part, &self.previous_summary) {
            (Part::History, Some(previous)) => {
                prompt.push_str("<previous-summary>\n");
                prompt.push_js(previous);
                prompt.push_str("\n</previous-summary>\n\n");
                prompts::update_instructions()
            }
            (Part::History, None) => prompts::initial_instructions(),
            (Part::TurnPrefix, _) => prompts::turn_prefix_instructions(),
            (Part::Branch, _) => prompts::branch_instructions(),
        };
        let replace = self.branch.is_some_and(|b| b.replace_instructions);
        match &self.custom_instructions {
            Some(custom) if replace => prompt.push_js(custom),
            Some(custom) => {
                prompt.push_str(&instructions);
                prompt.push_str(&prompts::custom_instructions_block(
                    &custom.to_string_lossy(),
                ));
            }
            None => prompt.push_str(&instructions),
        }
        Some(Request {
            part,
            attempt,
            system_prompt: prompts::SUMMARIZATION_SYSTEM_PROMPT,
            prompt: prompt.finish(),
            max_tokens,
        })
    }

    /// Takes the model's answer to the last request. An error here ends the job.
    pub fn on_response(&mut self, response: &Response) -> Result<()> {
        let State::Asking {
            part,
            attempt,
            history,
        } = self.state.clone()
        else {
            return Err(Error::invalid("compaction has already finished"));
        };
        // Branch summaries report the provider's words as they are (the
        // reference's `{ error }`); compaction names the failing part.
        let failed = |detail: &str| match part {
            Part::Branch => detail.to_string(),
            Part::History => format!("Summarization failed: {detail}"),
            Part::TurnPrefix => format!("Turn prefix summarization failed: {detail}"),
        };
        let fail = |job: &mut Self, message: String| {
            job.state = State::Failed;
            Err(Error::invalid(message))
        };
        match response.stop {
            Stop::Aborted => return fail(self, failed("the request was aborted")),
            Stop::Error => {
                let message = response.error_message.clone().unwrap_or_default();
                if is_context_overflow(&message) {
                    if attempt < MAX_OVERFLOW_RETRIES {
                        self.state = State::Asking {
                            part,
                            attempt: attempt + 1,
                            history,
                        };
                        return Ok(());
                    }
                    return fail(
                        self,
                        failed(&format!(
                            "the request still overflows the model's context after {MAX_OVERFLOW_RETRIES} smaller retries: {message}"
                        )),
                    );
                }
                let shown = match (message.is_empty(), part) {
                    (false, _) => message.as_str(),
                    (true, Part::Branch) => "Summarization failed",
                    (true, _) => "Unknown error",
                };
                return fail(self, failed(shown));
            }
            Stop::Length => {
                let limit = self.max_tokens(part);
                return fail(
                    self,
                    failed(&format!(
                        "the summary is incomplete (the model stopped at its output limit of {limit} tokens)"
                    )),
                );
            }
            Stop::Finished if response.has_tool_call => {
                return fail(
                    self,
                    failed("the model answered with a tool call instead of a summary"),
                )
            }
            Stop::Finished => {}
        }
        let mut text = Utf16Builder::new();
        for (i, t) in response.texts.iter().enumerate() {
            if i > 0 {
                text.push_str("\n");
            }
            text.push_js(t);
        }
        let text = text.finish();
        self.state = match (part, self.turn_prefix.is_some()) {
            (Part::History, true) => State::Asking {
                part: Part::TurnPrefix,
                attempt: 0,
                history: Some(text),
            },
            (Part::History, false) => State::Done(self.finish(text, None)),
            (Part::Branch, _) => {
                let mut with_preamble = Utf16Builder::new();
                with_preamble.push_str(prompts::BRANCH_SUMMARY_PREAMBLE);
                with_preamble.push_js(&text);
                State::Done(self.finish(with_preamble.finish(), None))
            }
            (Part::TurnPrefix, _) => {
                let history = history.unwrap_or_else(|| JsStr::from_str(prompts::NO_PRIOR_HISTORY));
                State::Done(self.finish(history, Some(text)))
            }
        };
        Ok(())
    }

    fn finish(&self, history: JsStr, prefix: Option<JsStr>) -> JsStr {
        let mut out = Utf16Builder::new();
        out.push_js(&history);
        if let Some(prefix) = prefix {
            out.push_str(prompts::SPLIT_TURN_SEPARATOR);
            out.push_js(&prefix);
        }
        out.push_units(&format_file_operations(
            &self.read_files,
            &self.modified_files,
        ));
        out.finish()
    }

    /// The finished summary (with the file lists appended), once done.
    pub fn summary(&self) -> Option<&JsStr> {
        match &self.state {
            State::Done(summary) => Some(summary),
            _ => None,
        }
    }
}

/// A model to run a [`Job`] against synchronously (tests, command line).
pub trait Llm {
    fn complete(&mut self, request: &Request) -> Result<Response>;
}

/// Runs a job to the end with `llm`.
pub fn run<T: Transcript>(job: &mut Job<T>, llm: &mut dyn Llm) -> Result<JsStr> {
    while let Some(request) = job.next_request() {
        let response = llm.complete(&request)?;
        job.on_response(&response)?;
    }
    job.summary()
        .cloned()
        .ok_or_else(|| Error::invalid("compaction ended without a summary"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders its shrink level, so tests can see what each retry asked for.
    struct Fake(&'static str);

    impl Transcript for Fake {
        fn render(&self, s: &Shrink) -> JsStr {
            JsStr::from_string(format!(
                "{} drop={} bodies={} bound={:?}",
                self.0, s.drop_rounds, s.tool_result_bodies, s.round_bound
            ))
        }
    }

    /// Answers from a script and records every request.
    struct Scripted {
        answers: Vec<Response>,
        seen: Vec<Request>,
    }

    impl Llm for Scripted {
        fn complete(&mut self, request: &Request) -> Result<Response> {
            self.seen.push(request.clone());
            if self.answers.is_empty() {
                return Err(Error::invalid("script ran out"));
            }
            Ok(self.answers.remove(0))
        }
    }

    fn text(t: &str) -> Response {
        Response {
            stop: Stop::Finished,
            error_message: None,
            texts: vec![JsStr::from_str(t)],
            has_tool_call: false,
        }
    }

    fn error(message: &str) -> Response {
        Response {
            stop: Stop::Error,
            error_message: Some(message.into()),
            texts: vec![],
            has_tool_call: false,
        }
    }

    fn input(split: bool, previous: Option<&str>, custom: Option<&str>) -> JobInput<Fake> {
        JobInput {
            history: Fake("HISTORY"),
            history_is_empty: false,
            turn_prefix: split.then_some(Fake("PREFIX")),
            previous_summary: previous.map(JsStr::from_str),
            custom_instructions: custom.map(JsStr::from_str),
            reserve_tokens: 16384.0,
            limits: ModelLimits {
                max_tokens: 8192.0,
                context_window: 200_000.0,
            },
            read_files: vec![JsStr::from_str("a.ts")],
            modified_files: vec![],
            branch: None,
        }
    }

    fn go(input: JobInput<Fake>, answers: Vec<Response>) -> (Result<JsStr>, Vec<Request>) {
        let mut job = Job::new(input);
        let mut llm = Scripted {
            answers,
            seen: vec![],
        };
        let out = run(&mut job, &mut llm);
        (out, llm.seen)
    }

    fn prompt(r: &Request) -> String {
        r.prompt.to_string()
    }

    #[test]
    fn one_request_then_file_lists() {
        let (out, seen) = go(input(false, None, None), vec![text("## Goal\nx")]);
        assert_eq!(
            out.ok().map(|s| s.to_string()).as_deref(),
            Some("## Goal\nx\n\n<read-files>\na.ts\n</read-files>")
        );
        assert_eq!(seen.len(), 1);
        let p = prompt(&seen[0]);
        assert!(p.starts_with(
            "<conversation>\nHISTORY drop=0 bodies=3 bound=None\n</conversation>\n\n"
        ));
        assert!(p.contains("## Reasoning Digest") && !p.contains("<previous-summary>"));
        // min(floor(0.8 * 16384), 8192)
        assert_eq!(seen[0].max_tokens, 8192.0);
    }

    #[test]
    fn update_mode_carries_the_previous_summary() {
        let (_, seen) = go(input(false, Some("OLD SUMMARY"), None), vec![text("new")]);
        let p = prompt(&seen[0]);
        assert!(p.contains(
            "</conversation>\n\n<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\n"
        ));
        assert!(p.contains("NEW work"));
    }

    #[test]
    fn split_turn_asks_twice_in_order_with_instructions_in_both() {
        let (out, seen) = go(
            input(true, None, Some("keep the migration command")),
            vec![text("H"), text("P")],
        );
        assert_eq!(
            seen.iter().map(|r| r.part).collect::<Vec<_>>(),
            [Part::History, Part::TurnPrefix]
        );
        assert!(seen
            .iter()
            .all(|r| prompt(r).contains("keep the migration command")));
        assert!(
            prompt(&seen[1]).contains("PREFIX") && prompt(&seen[1]).contains("## Original Request")
        );
        // floor(0.5 * 16384)
        assert_eq!(seen[1].max_tokens, 8192.0);
        let summary = out.ok().map(|s| s.to_string()).unwrap_or_default();
        assert!(
            summary.starts_with("H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>")
        );
    }

    #[test]
    fn split_turn_without_history_uses_the_previous_summary() {
        let mut i = input(true, Some("EARLIER"), None);
        i.history_is_empty = true;
        let (out, seen) = go(i, vec![text("P")]);
        assert_eq!(seen.len(), 1);
        assert!(out.is_ok_and(|s| s.to_string().starts_with("EARLIER\n\n---\n\n")));
        let mut i = input(true, None, None);
        i.history_is_empty = true;
        let (out, _) = go(i, vec![text("P")]);
        assert!(out.is_ok_and(|s| s.to_string().starts_with("No prior history.\n\n---")));
    }

    #[test]
    fn overflow_retries_shrink_and_stop_after_two() {
        let overflow = "prompt is too long: 250000 tokens > 200000 maximum";
        let (out, seen) = go(input(false, None, None), vec![error(overflow), text("ok")]);
        assert!(out.is_ok());
        assert!(prompt(&seen[1]).contains("drop=1 bodies=1 bound=Some("));
        let (out, seen) = go(
            input(false, None, None),
            vec![error(overflow), error(overflow), text("ok")],
        );
        assert!(out.is_ok());
        assert!(prompt(&seen[2]).contains("drop=2 bodies=0 bound=Some("));
        let (out, seen) = go(
            input(false, None, None),
            vec![
                error(overflow),
                error(overflow),
                error(overflow),
                text("never"),
            ],
        );
        assert_eq!(seen.len(), 3);
        assert!(out.is_err_and(|e| e.message.contains("after 2 smaller retries")));
    }

    #[test]
    fn other_failures_reject_without_retry() {
        let (out, seen) = go(input(false, None, None), vec![error("Invalid API key")]);
        assert_eq!(seen.len(), 1);
        assert_eq!(
            out.err().map(|e| e.message).as_deref(),
            Some("Summarization failed: Invalid API key")
        );
        let length = Response {
            stop: Stop::Length,
            ..text("cut")
        };
        assert!(go(input(false, None, None), vec![length])
            .0
            .is_err_and(|e| e.message.contains("incomplete")));
        let tool = Response {
            has_tool_call: true,
            ..text("")
        };
        assert!(go(input(false, None, None), vec![tool])
            .0
            .is_err_and(|e| e.message.contains("tool call")));
        let aborted = Response {
            stop: Stop::Aborted,
            ..text("")
        };
        assert!(go(input(false, None, None), vec![aborted])
            .0
            .is_err_and(|e| e.message.contains("aborted")));
        let (out, _) = go(input(true, None, None), vec![text("H"), error("")]);
        assert_eq!(
            out.err().map(|e| e.message).as_deref(),
            Some("Turn prefix summarization failed: Unknown error")
        );
    }

    #[test]
    fn branch_summaries_open_with_the_preamble_and_may_replace_instructions() {
        let mut i = input(false, None, Some("ONLY THIS"));
        i.branch = Some(BranchOptions {
            replace_instructions: true,
        });
        let (out, seen) = go(i, vec![text("B")]);
        assert_eq!(seen[0].part, Part::Branch);
        assert!(prompt(&seen[0]).ends_with("</conversation>\n\nONLY THIS"));
        let summary = out.ok().map(|s| s.to_string()).unwrap_or_default();
        assert_eq!(
            summary,
            format!(
                "{}B\n\n<read-files>\na.ts\n</read-files>",
                prompts::BRANCH_SUMMARY_PREAMBLE
            )
        );
        let mut i = input(false, None, Some("ALSO THIS"));
        i.branch = Some(BranchOptions {
            replace_instructions: false,
        });
        let (_, seen) = go(i, vec![text("B")]);
        assert!(
            prompt(&seen[0]).contains("## Reasoning Digest")
                && prompt(&seen[0]).contains("ALSO THIS")
        );
        let (out, _) = go(input(true, None, None), vec![text("H"), error("")]);
        assert_eq!(
            out.err().map(|e| e.message).as_deref(),
            Some("Turn prefix summarization failed: Unknown error")
        );
    }
}
