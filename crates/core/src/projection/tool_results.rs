//! Which tool results a projection shows, and which of their bodies it
//! drops: a result must have substance and answer a call made earlier in
//! the projected messages; of those, only the newest few keep their body,
//! and older ones show [`TOOL_RESULT_PLACEHOLDER`] instead.

use rustc_hash::FxHashSet;

use crate::transcript::llm_message::{Block, Message, ToolResultMessage};
use crate::transcript::text::{Text, TextKey};

/// How many of the newest valid tool-result bodies stay verbatim by default.
pub const DEFAULT_TOOL_RESULT_BODIES: usize = 3;
/// What an older tool-result body becomes.
pub const TOOL_RESULT_PLACEHOLDER: &str = "[tool result]";

/// A tool result is worth showing when it has an image or non-blank text.
fn has_substance<T: Text>(result: &ToolResultMessage<T>) -> bool {
    result.content.iter().any(|b| match b {
        Block::Text(t) => !t.is_blank(),
        Block::Image { .. } => true,
        _ => false,
    })
}

/// What the projection keeps of a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ResultFate {
    /// Empty, useless or orphaned: left out.
    Dropped,
    /// Kept, its body replaced by [`TOOL_RESULT_PLACEHOLDER`].
    Placeholder,
    /// Kept with its body (images as [`super::IMAGE_PLACEHOLDER`]).
    Body,
}

/// The fate of each tool result in `messages` (the projected ones), in
/// order: the newest `bodies` valid ones keep their body.
pub(super) fn result_fates<T: Text>(messages: &[Message<T>], bodies: usize) -> Vec<ResultFate> {
    // Validity of each tool result: it must have substance and answer a call
    // made earlier in the projected messages.
    let mut calls: FxHashSet<TextKey<'_>> = FxHashSet::default();
    let mut results = Vec::new();
    for m in messages {
        match m {
            Message::Assistant(a) => {
                for b in &a.content {
                    if let Block::ToolCall(c) = b {
                        calls.insert(c.id.as_key());
                    }
                }
            }
            Message::ToolResult(r) => {
                results.push(
                    if has_substance(r) && calls.contains(&r.tool_call_id.as_key()) {
                        ResultFate::Body
                    } else {
                        ResultFate::Dropped
                    },
                );
            }
            Message::User(_) => {}
        }
    }
    let total_valid = results.iter().filter(|&&f| f == ResultFate::Body).count();
    let mut older = total_valid.saturating_sub(bodies);
    for fate in &mut results {
        if older == 0 {
            break;
        }
        if *fate == ResultFate::Body {
            *fate = ResultFate::Placeholder;
            older -= 1;
        }
    }
    results
}
