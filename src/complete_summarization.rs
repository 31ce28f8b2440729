//! What `completeSummarization()` (and every summary request of a line that
//! makes them through it) needs from the core: the retry run of one request
//! ([`SummaryRetry`]), fresh session ids, `getSummarizationFailure()`, and
//! whether an error message says the context overflowed.

use napi::Env;
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::compact::{error_message_of, stop_of};
use crate::js::args::{primitive, property};
use crate::js::errors::run;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{Cx, JsVal};
use prime_compaction_core::error::{Context, Result};
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::summary::failure::summarization_failure;
use prime_compaction_core::summary::overflow::is_context_overflow;
use prime_compaction_core::summary::transient::{Finished, RetryPolicy, RetryRun, Step};

fn answer_arg<'c>(cx: &'c Cx, answer: &Arg) -> Result<JsVal<'c>> {
    let v = cx.wrap(answer.0)?;
    if !v.is_object_like() {
        return Err(prime_compaction_core::error::Error::type_error(
            "",
            format!("expected an assistant message, got {}", v.kind().describe()),
        ))
        .within("response");
    }
    Ok(v)
}

/// The retries of one summary request under the caller's `RetryPolicy`, as
/// pi-ai 1.6's `retryAssistantCall` makes them. Each step names the callback
/// to await and its arguments; the caller waits and calls.
#[napi]
pub struct SummaryRetry {
    run: RetryRun,
}

#[napi]
impl SummaryRetry {
    /// `policy` is the caller's `retry` (`undefined` or not `enabled`: no
    /// retries); with `overflowIsFinal`, a context overflow is never retried
    /// as it is (compaction sends a smaller request instead).
    #[napi(constructor)]
    pub fn new(env: Env, policy: Arg, overflow_is_final: bool) -> napi::Result<Self> {
        run(&env, |cx| {
            let p = cx.wrap(policy.0)?;
            let enabled = property(&p, c"enabled")?.truthy();
            // The fields are read only from an enabled policy, as pi-ai reads them.
            let policy = if enabled {
                Some(RetryPolicy::from_fields(
                    &primitive(&property(&p, c"maxRetries")?),
                    &primitive(&property(&p, c"baseDelayMs")?),
                    &primitive(&property(&p, c"maxAgentDelayMs")?),
                ))
            } else {
                None
            };
            Ok(SummaryRetry {
                run: RetryRun::new(policy, overflow_is_final),
            })
        })
    }

    /// The step after `answer`: `{ finished, scheduled, delayMs }`, where
    /// `finished` holds the arguments of `onRetryFinished` to await before
    /// returning the answer (or null), and `scheduled` those of
    /// `onRetryScheduled` when the request is to be sent again after
    /// `delayMs` (or null: return the answer). An error answer's
    /// `retryAfterMs`, a number, is the delay the server asks for.
    #[napi]
    pub fn answer(&mut self, env: Env, answer: Arg) -> napi::Result<RawValue> {
        run(&env, |cx| {
            let a = answer_arg(cx, &answer)?;
            let stop = stop_of(&a)?;
            let message = error_message_of(&a, stop)?;
            // Read only when a retry is due (see `RetryRun::on_answer_asked`).
            let asked = || Ok(property(&a, c"retryAfterMs")?.number());
            let step = self.run.on_answer_asked(stop, message.as_ref(), asked)?;
            let o = cx.object()?;
            match step {
                Step::Return(finished) => {
                    let finished = match finished {
                        Some(f) => finished_args(cx, f, &a)?,
                        None => cx.null()?,
                    };
                    cx.set(o, c"finished", finished)?;
                    cx.set(o, c"scheduled", cx.null()?)?;
                }
                Step::Retry(s) => {
                    cx.set(o, c"finished", cx.null()?)?;
                    let args = [
                        cx.number(s.attempt),
                        cx.number(s.max_attempts),
                        cx.number(s.delay_ms),
                        Ok(a.get(Key::ErrorMessage)?.raw),
                    ];
                    cx.set(o, c"scheduled", cx.array(args.into_iter())?)?;
                    cx.set(o, c"delayMs", cx.number(s.delay_ms)?)?;
                }
            }
            Ok(RawValue(o))
        })
    }

    /// The signal aborted the wait before a retry of `answer`: the arguments
    /// of the `onRetryFinished` to await before returning it as aborted.
    #[napi(js_name = "waitAborted")]
    pub fn wait_aborted(&self, env: Env, answer: Arg) -> napi::Result<RawValue> {
        run(&env, |cx| {
            let a = answer_arg(cx, &answer)?;
            Ok(RawValue(finished_args(cx, self.run.on_wait_aborted(), &a)?))
        })
    }

    /// The signal aborted a call before it answered: the arguments of the
    /// `onRetryFinished` its aborted answer would have brought, or null.
    #[napi(js_name = "callAborted")]
    pub fn call_aborted(&self, env: Env) -> napi::Result<RawValue> {
        run(&env, |cx| {
            Ok(RawValue(match self.run.on_call_aborted() {
                Some(Finished::Aborted { attempt }) => {
                    cx.array([cx.boolean(false), cx.number(attempt)].into_iter())?
                }
                _ => cx.null()?,
            }))
        })
    }
}

/// `onRetryFinished`'s arguments: `(true, n)`, `(false, n)`, or `(false, n,
/// answer.errorMessage)` with the message as it is.
fn finished_args(cx: &Cx, finished: Finished, answer: &JsVal<'_>) -> Result<Raw> {
    match finished {
        Finished::Succeeded { attempt } => {
            cx.array([cx.boolean(true), cx.number(attempt)].into_iter())
        }
        Finished::Aborted { attempt } => {
            cx.array([cx.boolean(false), cx.number(attempt)].into_iter())
        }
        Finished::Failed { attempt } => cx.array(
            [
                cx.boolean(false),
                cx.number(attempt),
                Ok(answer.get(Key::ErrorMessage)?.raw),
            ]
            .into_iter(),
        ),
    }
}

/// A fresh UUIDv7 (lower-case, time-ordered within the process), the
/// `sessionId` of a summary request whose caller gave none.
#[napi(js_name = "newSessionId")]
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Whether a provider's error message says the request overflowed the
/// model's context (the wordings compaction retries smaller).
#[napi(js_name = "isContextOverflow")]
pub fn is_context_overflow_message(message: String) -> bool {
    is_context_overflow(&message)
}

/// `getSummarizationFailure(response, label)` in agent line `line`: the
/// failure message of an error or `length` answer, `undefined` otherwise.
#[napi(js_name = "getSummarizationFailure")]
pub fn get_summarization_failure(
    env: Env,
    response: Arg,
    label: Arg,
    line: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let rules = &line_arg(cx, &line)?.summary_failures;
        let a = answer_arg(cx, &response)?;
        let label = cx.wrap(label.0)?.to_js_string().within("label")?;
        let stop = stop_of(&a)?;
        let message = error_message_of(&a, stop)?;
        Ok(RawValue(
            match summarization_failure(rules, stop, message.as_ref(), &label) {
                Some(text) => cx.js_str(&text)?,
                None => cx.undefined(),
            },
        ))
    })
}
