//! The bound on one oversized round: past it, the round's transcript keeps
//! its head and tail around a marker saying how much was cut out.

use crate::js::string::{is_high_surrogate, is_low_surrogate, JsStr, Utf16Builder};
use crate::transcript::llm_message::{Message, UserContent, UserMessage};
use crate::transcript::serialize::{push_message, Parts, SerializeOptions};
use crate::transcript::text::Text;

use super::rounds::split_user_rounds;

/// The label a user message's transcript part starts with.
const USER_LABEL: &str = "[User]: ";

/// The marker that stands for the cut-out middle of a round.
pub fn omission_marker(omitted: usize) -> String {
    format!("\n\n[... {omitted} characters of this round omitted ...]\n\n")
}

/// `text` with its middle cut so that at most `bound` units remain around
/// the marker; `None` when it already fits. Cuts never split a surrogate pair.
pub fn head_and_tail(text: &JsStr, bound: usize) -> Option<JsStr> {
    let len = text.utf16_len();
    if len <= bound {
        return None;
    }
    let head = text.truncate_utf16(bound / 2);
    let head_len = head.utf16_len();
    let mut tail_start = len - (bound - head_len);
    if tail_start > 0 && tail_start < len {
        let at = text.code_unit_at(tail_start).unwrap_or(0);
        let before = text.code_unit_at(tail_start - 1).unwrap_or(0);
        if is_low_surrogate(at) && is_high_surrogate(before) {
            tail_start += 1;
        }
    }
    let tail_start_i = i64::try_from(tail_start).unwrap_or(i64::MAX);
    let mut out = Utf16Builder::new();
    out.push_js(&head);
    out.push_str(&omission_marker(tail_start - head_len));
    out.push_js(&text.slice_utf16(tail_start_i, None));
    Some(out.finish())
}

/// Replaces each round whose transcript exceeds `bound` by one user message
/// holding its head and tail: read back, it gives the round's transcript with
/// the middle cut out, and it still opens exactly one round.
pub(super) fn bound_rounds<T: Text>(messages: Vec<Message<T>>, bound: usize) -> Vec<Message<T>> {
    let rounds = split_user_rounds(&messages);
    let mut out = Vec::with_capacity(messages.len());
    let mut messages = messages.into_iter();
    for round in rounds {
        let round_messages: Vec<Message<T>> = messages.by_ref().take(round.len()).collect();
        let mut text = Utf16Builder::new();
        let mut parts = Parts::new(&mut text);
        for m in &round_messages {
            push_message(&mut parts, m, SerializeOptions { reasoning: true });
        }
        let text = text.finish();
        let labelled = round_messages.first().is_some_and(Message::is_user)
            && text
                .code_units()
                .take(USER_LABEL.len())
                .eq(USER_LABEL.encode_utf16());
        let body = if labelled {
            text.slice_utf16(USER_LABEL.len() as i64, None)
        } else {
            text
        };
        match head_and_tail(&body, bound) {
            None => out.extend(round_messages),
            Some(excerpt) => out.push(Message::User(UserMessage {
                content: UserContent::Text(T::owned(excerpt)),
                timestamp: round_messages.first().and_then(Message::timestamp),
            })),
        }
    }
    out
}
