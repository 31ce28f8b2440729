//! Transient failures of a summary request, and when to try it again: the
//! policy pi-ai 1.6 applies to summaries (`retryAssistantCall`), as a state
//! machine. The binding feeds it each answer; JS only waits the delay it
//! names (abortably) and calls the caller's callbacks with the arguments it
//! gives.
//!
//! The classifier's alternatives are pi-ai's, byte for byte: they are
//! interface (they decide which provider errors the agent's users see
//! retried). pi-ai tests them as one case-insensitive JS `RegExp` without
//! the `u` flag; [`is_retryable`] runs them with `fancy-regex` (for the
//! lookarounds) over a stand-in of the message that makes Rust's Unicode
//! semantics coincide with that JS mode (see [`js_regex_subject`]).

use std::sync::OnceLock;

use fancy_regex::Regex;

use crate::js::math;
use crate::js::string::JsStr;
use crate::js::to_number::{to_number, Primitive};
use crate::summary::compact::Stop;
use crate::summary::overflow::is_context_overflow;

/// Quota, budget and plan limits: never retried, even when a retryable
/// alternative also matches (`insufficient_quota 429`).
pub const NON_RETRYABLE: &[&str] = &[
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
    "subscription_sharing_usage_limit_exceeded",
    "subscription_sharing_workplace_individual_usage_limit_exceeded",
    r#""code"\s*:\s*"?1308(?![0-9])"#,
];

/// Load, transport, gateway and premature-end failures: worth another try.
pub const RETRYABLE: &[&str] = &[
    "overloaded",
    "server_busy",
    "servers are currently busy",
    "currently experiencing high demand",
    "model is at capacity",
    "rate.?limit",
    "too many requests",
    "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
    "service.?(?:is.?)?(?:temporarily.?)?unavailable",
    "server.?error",
    "internal.?error",
    "provider.?returned.?(?:an.?)?error",
    "exceeded request buffer limit while retrying upstream",
    "unable to forward upstream",
    "upstream.?request.?failed",
    "upstream_stream_read_error",
    "stream was interrupted",
    "http/?2 stream failed",
    "network.?error",
    "connection.?error",
    "connection.?refused",
    "connection.?lost",
    "connection.?closed",
    "other side closed",
    "fetch failed",
    r"request to \S+ failed, reason:",
    "getaddrinfo",
    "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
    "connection reset by peer",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    "websocket.?closed",
    "websocket.?error",
    "websocket.?connection.?limit.?reached",
    "ended without",
    "stream ended before message_stop",
    "stream ended before a terminal response event",
    "http2 request did not get a response",
    "stream disconnected before completion",
    "cut short after the reply had begun",
    "pending stream has been canceled",
    "retry delay",
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
    "subscription_sharing_usage_unavailable",
    "subscription_sharing_user_unavailable",
];

struct Patterns {
    non_retryable: Option<Regex>,
    retryable: Option<Regex>,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let build =
            |alternatives: &[&str]| Regex::new(&format!("(?i){}", alternatives.join("|"))).ok();
        Patterns {
            non_retryable: build(NON_RETRYABLE),
            retryable: build(RETRYABLE),
        }
    })
}

/// `ECMAScript` white space and line terminators outside ASCII (what `\s`
/// matches there).
fn is_js_space(u: u16) -> bool {
    matches!(
        u,
        0xA0 | 0x1680 | 0x2000..=0x200A | 0x202F | 0x205F | 0x3000 | 0xFEFF
    )
}

/// The message as the alternatives should see it, one `char` per UTF-16
/// unit, so that `.` and `.?` step over units as JS does:
/// - ASCII stays itself, except `\r` (which JS's `.` does not match);
/// - line terminators (`\r`, U+2028, U+2029) become `\n`;
/// - other JS white space becomes U+3000, white space to `\s` and nothing else;
/// - every other unit (lone surrogates included) becomes U+4E00, which only
///   `.` and `\S` match.
///
/// Without the `u` flag JS never matches a non-ASCII character against an
/// ASCII letter, even case-insensitively, while Rust's `(?i)` matches `k` to
/// the Kelvin sign and `s` to `ſ`; after this mapping no such character is left.
pub fn js_regex_subject(message: &JsStr) -> String {
    message
        .code_units()
        .map(|u| match u {
            0x0D | 0x2028 | 0x2029 => '\n',
            0..=0x7F => char::from(u as u8),
            _ if is_js_space(u) => '\u{3000}',
            _ => '\u{4E00}',
        })
        .collect()
}

/// pi-ai 1.6's `isRetryableAssistantError` for an error answer with this
/// `errorMessage` (already `String()`-converted; `None` when it is falsy).
pub fn is_retryable(error_message: Option<&JsStr>) -> bool {
    let Some(message) = error_message.filter(|m| !m.is_empty()) else {
        return false;
    };
    let subject = js_regex_subject(message);
    let p = patterns();
    let matches = |r: &Option<Regex>| {
        r.as_ref()
            .is_some_and(|r| r.is_match(&subject).unwrap_or(false))
    };
    !matches(&p.non_retryable) && matches(&p.retryable)
}

/// How many retries stand in where 1.6 would never stop: pi's own default
/// for `retry.maxRetries`.
pub const UNBOUNDED_RETRIES_BOUND: f64 = 3.0;

/// The longest wait a JS timer makes (2^31 − 1 ms, about 24.8 days).
pub const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// `DEFAULT_MAX_AGENT_RETRY_DELAY_MS`: the delay cap when the policy names none.
pub const DEFAULT_MAX_DELAY_MS: f64 = 60_000.0;

/// The caller's `RetryPolicy` (`{ enabled, maxRetries, baseDelayMs, maxAgentDelayMs }`),
/// read as JS arithmetic reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first call: the answer loop stops once `attempt >= max_retries`.
    pub max_retries: f64,
    pub base_delay_ms: f64,
    pub max_delay_ms: f64,
}

impl RetryPolicy {
    /// An enabled policy's fields (a disabled one, or none, means no
    /// retries: `RetryRun::new(None, ..)`), through `ToNumber` as pi-ai's
    /// `>=` and `*` put them; a `maxRetries` that leaves the count unbounded (missing,
    /// NaN, `Infinity`, a non-numeric string) becomes [`UNBOUNDED_RETRIES_BOUND`].
    pub fn from_fields(
        max_retries: &Primitive,
        base_delay_ms: &Primitive,
        max_agent_delay_ms: &Primitive,
    ) -> RetryPolicy {
        let max = to_number(max_retries);
        let max_retries = if max.is_nan() || max == f64::INFINITY {
            UNBOUNDED_RETRIES_BOUND
        } else {
            max
        };
        let max_delay_ms = match max_agent_delay_ms {
            Primitive::Undefined | Primitive::Null => DEFAULT_MAX_DELAY_MS,
            other => to_number(other),
        };
        RetryPolicy {
            max_retries,
            base_delay_ms: to_number(base_delay_ms),
            max_delay_ms,
        }
    }

    /// `retryDelayMs`: `baseDelayMs × 2^(attempt-1)`, a product that is not a
    /// safe integer taken as `Number.MAX_SAFE_INTEGER`, then capped (`Math.min`).
    /// No jitter.
    pub fn delay_ms(&self, attempt: f64) -> f64 {
        let delay = self.base_delay_ms * power_of_two((attempt - 1.0).max(0.0));
        let safe = if is_safe_integer(delay) {
            delay
        } else {
            MAX_SAFE_INTEGER
        };
        math::min(safe, self.max_delay_ms)
    }
}

const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn is_safe_integer(n: f64) -> bool {
    n.is_finite() && n.trunc() == n && n.abs() <= MAX_SAFE_INTEGER
}

/// `2 ** e` for a whole `e >= 0`, exactly.
fn power_of_two(e: f64) -> f64 {
    if e > 1023.0 {
        f64::INFINITY
    } else {
        f64::from_bits(((e as u64) + 1023) << 52)
    }
}

/// `onRetryFinished(success, attempt, finalError?)`, to be awaited before the
/// answer is returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Finished {
    /// `(true, attempt)`: a retry succeeded.
    Succeeded { attempt: f64 },
    /// `(false, attempt)`: the request was aborted after a retry was scheduled.
    Aborted { attempt: f64 },
    /// `(false, attempt, errorMessage)`: the last answer's error message (as it is).
    Failed { attempt: f64 },
}

/// `onRetryScheduled(attempt, maxAttempts, delayMs, errorMessage)`, then a
/// wait of `delay_ms`, then `onRetryAttemptStart()` and the same request again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scheduled {
    pub attempt: f64,
    pub max_attempts: f64,
    pub delay_ms: f64,
}

/// What to do with an answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Return the answer as it is, after the callback, if any.
    Return(Option<Finished>),
    Retry(Scheduled),
}

/// One request's retries.
#[derive(Debug, Clone)]
pub struct RetryRun {
    policy: Option<RetryPolicy>,
    /// A context overflow ends the run at once, whatever words it holds:
    /// compaction answers it with a smaller request (the spec's overflow
    /// retries), not with the same one again.
    overflow_is_final: bool,
    attempt: f64,
    retried: bool,
}

impl RetryRun {
    pub fn new(policy: Option<RetryPolicy>, overflow_is_final: bool) -> RetryRun {
        RetryRun {
            policy,
            overflow_is_final,
            attempt: 0.0,
            retried: false,
        }
    }

    /// The step after an answer with this `stopReason` and `errorMessage`
    /// (`String()`-converted; `None` when falsy), which may say how long the
    /// server asks to be left alone (`asked`, in ms: a `Retry-After`, read
    /// only when a retry is due). A retry waits that long instead of the
    /// policy's delay; one the server asks for after more than the policy's
    /// cap (where that is above 0) is not made, as pi-ai's provider retries
    /// refuse it, nor one after longer than a JS timer waits
    /// ([`MAX_TIMER_MS`]; a longer `setTimeout` fires at once).
    pub fn on_answer_asked<E>(
        &mut self,
        stop: Stop,
        error_message: Option<&JsStr>,
        asked: impl FnOnce() -> Result<Option<f64>, E>,
    ) -> Result<Step, E> {
        let retried = self.retried;
        let finished = |f: Finished| Ok(Step::Return(retried.then_some(f)));
        let attempt = self.attempt;
        match stop {
            Stop::Aborted => return finished(Finished::Aborted { attempt }),
            Stop::Error => {}
            Stop::Finished | Stop::Length => return finished(Finished::Succeeded { attempt }),
        }
        let max_attempts = self.policy.map_or(0.0, |p| p.max_retries);
        let overflow = self.overflow_is_final
            && error_message.is_some_and(|m| is_context_overflow(&m.to_string_lossy()));
        let Some(policy) = self.policy else {
            return finished(Finished::Failed { attempt });
        };
        if attempt >= max_attempts || overflow || !is_retryable(error_message) {
            return finished(Finished::Failed { attempt });
        }
        let delay_ms = match asked()?.filter(|ms| ms.is_finite()) {
            Some(ms)
                if (policy.max_delay_ms > 0.0 && ms > policy.max_delay_ms) || ms > MAX_TIMER_MS =>
            {
                return finished(Finished::Failed { attempt });
            }
            Some(ms) => ms.max(0.0),
            None => policy.delay_ms(attempt + 1.0),
        };
        self.attempt += 1.0;
        self.retried = true;
        Ok(Step::Retry(Scheduled {
            attempt: self.attempt,
            max_attempts,
            delay_ms,
        }))
    }

    /// The signal aborted the wait before a retry: `(false, attempt,
    /// errorMessage)` of the answer that was to be retried, and that answer
    /// is returned as aborted, without its `errorMessage`.
    pub fn on_wait_aborted(&self) -> Finished {
        Finished::Failed {
            attempt: self.attempt,
        }
    }

    /// The signal aborted a call before it answered (compaction stops
    /// waiting for such calls): the callback the aborted answer would have
    /// brought, if a retry was scheduled.
    pub fn on_call_aborted(&self) -> Option<Finished> {
        self.retried.then_some(Finished::Aborted {
            attempt: self.attempt,
        })
    }
}

#[cfg(test)]
mod tests;
