//! The bound on one oversized round: past it, the round's transcript keeps
//! its head and tail around a marker saying how much was cut out.

use crate::js::string::{is_high_surrogate, is_low_surrogate, JsStr, Utf16Builder};
use crate::transcript::llm_message::{AssistantMessage, Block, Message, UserContent, UserMessage};
use crate::transcript::serialize::{push_message, Parts, SerializeOptions};
use crate::transcript::text::Text;

use super::rounds::split_user_rounds;

/// The label a user message's transcript part starts with.
const USER_LABEL: &str = "[User]: ";
/// The label an assistant text's transcript part starts with.
const ASSISTANT_LABEL: &str = "[Assistant]: ";

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

/// Replaces each round whose transcript exceeds `bound` by one message
/// holding its head and tail: read back, it gives the round's transcript with
/// the middle cut out, and it still opens exactly one round. A round is
/// replaced by a user message; the leading group (the rest of a turn an
/// earlier compaction split: the assistant's messages and its tools'
/// results) by an assistant's text, so that none of it reads as the user's.
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
        let user = round_messages.first().is_some_and(Message::is_user);
        let label = if user { USER_LABEL } else { ASSISTANT_LABEL };
        let labelled = text.code_units().take(label.len()).eq(label.encode_utf16());
        let body = if labelled {
            text.slice_utf16(label.len() as i64, None)
        } else {
            text
        };
        let timestamp = round_messages.first().and_then(Message::timestamp);
        match head_and_tail(&body, bound) {
            None => out.extend(round_messages),
            Some(excerpt) if user => out.push(Message::User(UserMessage {
                content: UserContent::Text(T::owned(excerpt)),
                timestamp,
            })),
            Some(excerpt) => out.push(Message::Assistant(AssistantMessage {
                content: vec![Block::Text(T::owned(excerpt))],
                timestamp,
            })),
        }
    }
    out
}
