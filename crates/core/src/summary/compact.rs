//! `compact()` as a state machine with no I/O: it says which summarization
//! request to send next, reads each response, and decides to go on, retry
//! smaller, fail, or finish. The binding drives it with the caller's
//! `streamFn` (the CLI too, through `compact()`); the tests drive it with
//! a scripted [`Llm`].

use std::cell::OnceCell;

use crate::agent_line::AgentLine;
use crate::error::{Error, Result};
use crate::js::json::number_to_js_string;
use crate::js::math;
use crate::js::string::{JsStr, Utf16Builder};
use crate::plan::file_ops::format_file_operations;
use crate::summary::failure::{describe, Failure};
use crate::summary::overflow::{fills_the_window, is_context_overflow};
use crate::summary::prompts;
use crate::summary::retry::{shrink_for, Shrink, MAX_OVERFLOW_RETRIES};
use crate::transcript::text::is_trim_space;

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
    /// How much smaller than this part's first try the request is: the
    /// shrink step (`shrink_for`), 0 for the first try, then 1 or 2 after an
    /// overflow (a step whose request would be no smaller is skipped).
    pub attempt: u8,
    pub system_prompt: &'static str,
    pub prompt: JsStr,
    /// `None` in lines that send no `maxTokens`.
    pub max_tokens: Option<f64>,
    /// The request's option keys, in order (the line's, then `reasoning` when it applies).
    pub option_keys: Vec<&'static str>,
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
    /// `String(errorMessage)` of an error answer; `None` when it is falsy.
    pub error_message: Option<JsStr>,
    /// The text blocks, in order.
    pub texts: Vec<JsStr>,
    pub has_tool_call: bool,
    /// `usage.input`, `usage.cacheRead` and `usage.output` where they are
    /// numbers (a provider that fills the window reports overflow by them).
    pub usage: AnswerUsage,
}

/// The token counts of an answer's `usage` that tell an overflow.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AnswerUsage {
    pub input: Option<f64>,
    pub cache_read: Option<f64>,
    pub output: Option<f64>,
}

/// Everything `compact()` needs, taken from the preparation.
pub struct Job<T: Transcript> {
    line: &'static AgentLine,
    wants_reasoning: bool,
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
    /// The part each accepted answer finished, in order.
    answered: Vec<Part>,
    /// Smaller retries after an overflow sent so far: the spec's "at most
    /// two smaller retries" is the compaction's, so a split turn's two
    /// requests share them (each part starts from its first, whole request).
    overflow_retries: u8,
    /// The shrink level of the compaction's last retry (`shrink_for`): the
    /// next retry, of either part, shrinks further.
    shrink_level: u8,
    /// The length of each part's whole transcript, from its first request.
    history_units: OnceCell<usize>,
    turn_prefix_units: OnceCell<usize>,
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
        /// The shrink level of the request (`shrink_for`): 0 for a part's
        /// first, whole request.
        attempt: u8,
        history: Option<JsStr>,
    },
    Done(JsStr),
    Failed,
}

pub struct JobInput<T: Transcript> {
    pub line: &'static AgentLine,
    /// `model.reasoning` is truthy and a thinking level other than "off" was
    /// given: requests pass it on as `reasoning`.
    pub wants_reasoning: bool,
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

/// The output budget the agents ask for in every branch summary.
const AGENT_BRANCH_MAX_TOKENS: f64 = 2048.0;

impl<T: Transcript> Job<T> {
    pub fn new(input: JobInput<T>) -> Self {
        // What stands for the history of a split turn with nothing before it.
        let standing_history = if input.line.summary_results.empty_previous_summary_stands {
            input.previous_summary.clone()
        } else {
            input.previous_summary.clone().filter(|s| !s.is_empty())
        };
        let mut job = Job {
            line: input.line,
            wants_reasoning: input.wants_reasoning,
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
            answered: Vec::new(),
            overflow_retries: 0,
            shrink_level: 0,
            history_units: OnceCell::new(),
            turn_prefix_units: OnceCell::new(),
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
            let history =
                standing_history.unwrap_or_else(|| JsStr::from_str(prompts::NO_PRIOR_HISTORY));
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

    /// The output budget a request of `part` asks for, in lines that send one.
    fn max_tokens(&self, part: Part) -> f64 {
        let share = if part == Part::TurnPrefix { 0.5 } else { 0.8 };
        let budget = (share * self.reserve_tokens).floor();
        let cap = self.limits.max_tokens;
        let capped = !cap.is_nan() && cap > 0.0;
        if part == Part::Branch {
            // This package's own budget, where the agents ask for a fixed
            // 2,048: a NaN one leaves the model's limit, or else theirs.
            let budget = if capped { budget.min(cap) } else { budget };
            if budget.is_nan() {
                AGENT_BRANCH_MAX_TOKENS
            } else {
                budget
            }
        } else if capped {
            // The agents' `Math.min`, which keeps a NaN budget.
            math::min(budget, cap)
        } else {
            budget
        }
    }

    /// The transcript a request of `part` carries at shrink level `level`.
    fn conversation(&self, part: Part, level: u8) -> Option<JsStr> {
        let max_tokens = self
            .line
            .summary_requests
            .max_tokens
            .then(|| self.max_tokens(part));
        // Room for the answer when shrinking: the budget asked for, or else
        // what the model may write.
        let answer_room = max_tokens.unwrap_or(self.limits.max_tokens);
        let (transcript, units) = match part {
            Part::History | Part::Branch => (&self.history, &self.history_units),
            Part::TurnPrefix => (self.turn_prefix.as_ref()?, &self.turn_prefix_units),
        };
        if level == 0 {
            let whole = transcript.render(&shrink_for(0, &self.limits, answer_room, 0));
            // Its length bounds a retry's rounds (shrink_for): kept from the first request.
            units.get_or_init(|| whole.utf16_len());
            return Some(whole);
        }
        let whole_units = match units.get() {
            Some(&n) => n,
            None => self.conversation(part, 0)?.utf16_len(),
        };
        Some(transcript.render(&shrink_for(level, &self.limits, answer_room, whole_units)))
    }

    /// The shrink level of the compaction's next retry after `part`
    /// overflowed at `level`: the first past the levels sent before whose
    /// transcript is smaller than the one that overflowed (a level that
    /// drops nothing, or puts a placeholder in place of a shorter body,
    /// would send it again as it is, or larger). `None`: none is.
    fn smaller_level(&self, part: Part, level: u8) -> Option<u8> {
        let units = |level| self.conversation(part, level).map_or(0, |c| c.utf16_len());
        let sent = units(level);
        // Past this part's own step, and past the compaction's last one where
        // a step is left above it (a split turn's prefix may take step 2 when
        // the history's one retry skipped to it).
        let first = (level + 1).max((self.shrink_level + 1).min(MAX_OVERFLOW_RETRIES));
        (first..=MAX_OVERFLOW_RETRIES).find(|&next| units(next) < sent)
    }

    /// The request to send now, or `None` once the job has finished or failed.
    pub fn next_request(&self) -> Option<Request> {
        let State::Asking { part, attempt, .. } = &self.state else {
            return None;
        };
        let (part, attempt) = (*part, *attempt);
        let requests = &self.line.summary_requests;
        let max_tokens = requests.max_tokens.then(|| self.max_tokens(part));
        let mut prompt = Utf16Builder::new();
        prompt.push_str("<conversation>\n");
        if let Some(conversation) = self.conversation(part, attempt) {
            prompt.push_js(&conversation);
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
                prompt.push_js(&prompts::custom_instructions_block(custom));
            }
            None => prompt.push_str(&instructions),
        }
        let mut option_keys = if part == Part::Branch {
            requests.branch_options.to_vec()
        } else {
            requests.compaction_options.to_vec()
        };
        if self.wants_reasoning {
            option_keys.push("reasoning");
        }
        Some(Request {
            part,
            attempt,
            system_prompt: prompts::SUMMARIZATION_SYSTEM_PROMPT,
            prompt: prompt.finish(),
            max_tokens,
            option_keys,
        })
    }

    /// Takes the model's answer to the last request: `true` when it finished
    /// a part (its usage is then the part's), `false` when the part is asked
    /// again, smaller. An error here ends the job.
    pub fn on_response(&mut self, response: &Response) -> Result<bool> {
        let State::Asking {
            part,
            attempt,
            history,
        } = self.state.clone()
        else {
            return Err(Error::invalid("compaction has already finished"));
        };
        let fail = |job: &mut Self, failure: Failure<'_>| {
            job.state = State::Failed;
            Err(Error::invalid(describe(
                &job.line.summary_failures,
                part,
                failure,
            )))
        };
        // The request overflowed (`message` says how): smaller while retries
        // are left, then a failure.
        let overflowed = |job: &mut Self, message: &JsStr| {
            let next = (job.overflow_retries < MAX_OVERFLOW_RETRIES)
                .then(|| job.smaller_level(part, attempt))
                .flatten();
            if let Some(level) = next {
                job.overflow_retries += 1;
                job.shrink_level = level;
                job.state = State::Asking {
                    part,
                    attempt: level,
                    history: history.clone(),
                };
                return Ok(false);
            }
            let retries = job.overflow_retries;
            let retried = attempt > 0;
            fail(
                job,
                Failure::Overflow {
                    retries,
                    retried,
                    message,
                },
            )
        };
        match response.stop {
            Stop::Aborted => return fail(self, Failure::Aborted),
            Stop::Error => {
                let message = response.error_message.clone();
                if let Some(overflow) = message
                    .as_ref()
                    .filter(|m| is_context_overflow(&m.to_string_lossy()))
                {
                    return overflowed(self, overflow);
                }
                return fail(self, Failure::Error(message.as_ref()));
            }
            Stop::Length if fills_the_window(&response.usage, self.limits.context_window) => {
                let message = JsStr::from_string(format!(
                    "the model stopped with no output, its context full ({} of {} tokens)",
                    number_to_js_string(
                        response.usage.input.unwrap_or(0.0)
                            + response.usage.cache_read.unwrap_or(0.0)
                    ),
                    number_to_js_string(self.limits.context_window),
                ));
                return overflowed(self, &message);
            }
            Stop::Length => {
                let limit = self
                    .line
                    .summary_requests
                    .max_tokens
                    .then(|| self.max_tokens(part));
                return fail(self, Failure::Length(limit));
            }
            Stop::Finished if response.has_tool_call => return fail(self, Failure::ToolCall),
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
        // An empty summary would stand in for the history it was to keep.
        if text.code_units().all(is_trim_space) {
            return fail(self, Failure::Empty);
        }
        self.answered.push(part);
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
        Ok(true)
    }

    /// The parts whose answers were accepted, in order: a split turn with a
    /// history call has two.
    pub fn answered(&self) -> &[Part] {
        &self.answered
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
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
