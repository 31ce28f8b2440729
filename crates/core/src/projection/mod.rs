//! The loss-bounded copy of a conversation that a summarization request
//! sees (the spec's "summary projection").
//!
//! It works on the owned [`Message`] model and never changes its input, so
//! compaction can project the same messages again, smaller, on each overflow
//! retry: fewer tool-result bodies ([`tool_results`]), oldest rounds dropped
//! ([`rounds`]), a bound on any one oversized round ([`round_bound`]); and
//! the plan the JS side builds the projected messages from ([`plan`]).

pub mod plan;
pub mod round_bound;
pub mod rounds;
pub mod tool_results;

use crate::js::string::JsStr;
use crate::transcript::llm_message::{
    AssistantMessage, Block, Message, ToolResultMessage, UserContent, UserMessage,
};
use crate::transcript::serialize::{
    push_assistant_message, push_message, push_tool_result, Parts, SerializeOptions,
};
use crate::transcript::text::{Sink, Text};

use round_bound::bound_rounds;
use rounds::first_kept;
use tool_results::{result_fates, ResultFate, DEFAULT_TOOL_RESULT_BODIES, TOOL_RESULT_PLACEHOLDER};

/// What an image block becomes.
pub const IMAGE_PLACEHOLDER: &str = "[image]";

/// How small to make the projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectOptions {
    /// Newest valid tool results whose bodies stay verbatim.
    pub tool_result_bodies: usize,
    /// Oldest rounds to drop; the newest round always stays.
    pub drop_oldest_rounds: usize,
    /// Longest transcript (UTF-16 units, after its leading `[User]: `) one
    /// round may have before its middle is cut out.
    pub round_bound: Option<usize>,
    /// Keep readable assistant reasoning.
    pub reasoning: bool,
}

impl Default for ProjectOptions {
    fn default() -> Self {
        ProjectOptions {
            tool_result_bodies: DEFAULT_TOOL_RESULT_BODIES,
            drop_oldest_rounds: 0,
            round_bound: None,
            reasoning: true,
        }
    }
}

/// Whether a summarizer model belongs to the Claude family, which rejects
/// prior assistant reasoning replayed as transcript text.
pub fn is_claude_family(api: Option<&JsStr>, provider: Option<&JsStr>, id: Option<&JsStr>) -> bool {
    api.is_some_and(|a| a.eq_str("anthropic-messages"))
        || provider.is_some_and(|p| p.eq_str("anthropic"))
        || id.is_some_and(|i| i.to_string_lossy().to_lowercase().contains("claude"))
}

fn project_blocks<T: Text>(blocks: &[Block<T>]) -> Vec<Block<T>> {
    blocks
        .iter()
        .map(|b| match b {
            Block::Image { .. } => Block::text(IMAGE_PLACEHOLDER),
            other => other.clone(),
        })
        .collect()
}

/// The decisions behind a projection: the first message kept (older rounds
/// are dropped) and the fate of each tool result from there, in order.
struct Plan {
    start: usize,
    results: Vec<ResultFate>,
}

fn plan<T: Text>(messages: &[Message<T>], options: &ProjectOptions) -> Plan {
    let start = first_kept(messages, options.drop_oldest_rounds);
    let results = result_fates(&messages[start..], options.tool_result_bodies);
    Plan { start, results }
}

/// An assistant message's blocks that the projection keeps (with reasoning
/// or without).
pub fn keeps_assistant_block<T: Text>(b: &Block<T>, reasoning: bool) -> bool {
    match b {
        Block::Thinking { thinking, redacted } => reasoning && !redacted && !thinking.is_empty(),
        Block::Image { .. } => false,
        _ => true,
    }
}

fn has_image<T>(blocks: &[Block<T>]) -> bool {
    blocks.iter().any(|b| matches!(b, Block::Image { .. }))
}

/// A message of the projection, as [`project_each`] hands it over.
pub enum Projected<'m, T> {
    /// The input's message as it was.
    Kept(&'m Message<T>),
    /// A message made for the projection.
    Made(Message<T>),
    /// The input's assistant message, of whose blocks the projection keeps
    /// some (not all): those [`keeps_assistant_block`] keeps with `reasoning`.
    Filtered {
        message: &'m AssistantMessage<T>,
        reasoning: bool,
    },
    /// A tool result whose body is [`TOOL_RESULT_PLACEHOLDER`].
    BodyElided(&'m ToolResultMessage<T>),
}

impl<T: Text> Projected<'_, T> {
    pub fn into_message(self) -> Message<T> {
        match self {
            Projected::Kept(m) => m.clone(),
            Projected::Made(m) => m,
            Projected::Filtered { message, reasoning } => Message::Assistant(AssistantMessage {
                content: (message.content.iter())
                    .filter(|b| keeps_assistant_block(b, reasoning))
                    .cloned()
                    .collect(),
                timestamp: message.timestamp,
            }),
            Projected::BodyElided(r) => Message::ToolResult(ToolResultMessage {
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                is_error: r.is_error,
                content: vec![Block::text(TOOL_RESULT_PLACEHOLDER)],
                elided_units: 0,
                timestamp: r.timestamp,
            }),
        }
    }
}

/// Builds the projection of `messages`. The input is only read.
pub fn project<T: Text>(messages: &[Message<T>], options: &ProjectOptions) -> Vec<Message<T>> {
    let mut out = Vec::with_capacity(messages.len());
    project_unbounded(messages, options, |m| out.push(m.into_message()));
    match options.round_bound {
        Some(bound) => bound_rounds(out, bound),
        None => out,
    }
}

/// Hands each message of the projection, in order, to `emit`. Without a
/// round bound (which needs them all made) nothing is copied that the
/// projection leaves as it was.
pub fn project_each<T: Text>(
    messages: &[Message<T>],
    options: &ProjectOptions,
    mut emit: impl FnMut(Projected<'_, T>),
) {
    if options.round_bound.is_some() {
        for m in project(messages, options) {
            emit(Projected::Made(m));
        }
    } else {
        project_unbounded(messages, options, emit);
    }
}

/// The projection before any round bound.
fn project_unbounded<'m, T: Text>(
    messages: &'m [Message<T>],
    options: &ProjectOptions,
    mut emit: impl FnMut(Projected<'m, T>),
) {
    let Plan { start, results } = plan(messages, options);
    let mut fates = results.into_iter();
    for m in &messages[start..] {
        match m {
            Message::User(UserMessage {
                content: UserContent::Blocks(blocks),
                timestamp,
            }) if has_image(blocks) => emit(Projected::Made(Message::User(UserMessage {
                content: UserContent::Blocks(project_blocks(blocks)),
                timestamp: *timestamp,
            }))),
            Message::User(_) => emit(Projected::Kept(m)),
            Message::Assistant(a) => {
                let reasoning = options.reasoning;
                let kept = (a.content.iter())
                    .filter(|b| keeps_assistant_block(b, reasoning))
                    .count();
                if kept == a.content.len() {
                    emit(Projected::Kept(m));
                } else if kept > 0 {
                    emit(Projected::Filtered {
                        message: a,
                        reasoning,
                    });
                }
            }
            Message::ToolResult(r) => match fates.next() {
                Some(ResultFate::Body) if has_image(&r.content) => {
                    emit(Projected::Made(Message::ToolResult(ToolResultMessage {
                        tool_call_id: r.tool_call_id.clone(),
                        tool_name: r.tool_name.clone(),
                        is_error: r.is_error,
                        content: project_blocks(&r.content),
                        elided_units: r.elided_units,
                        timestamp: r.timestamp,
                    })))
                }
                Some(ResultFate::Body) => emit(Projected::Kept(m)),
                Some(ResultFate::Placeholder) => emit(Projected::BodyElided(r)),
                _ => {}
            },
        }
    }
}

/// Writes the transcript of `project(messages, options)` serialized with
/// `reasoning: options.reasoning` to `out`, building no projected messages
/// where it can: what the projection leaves out, the serializer would not
/// write either, except images (shown as `[image]`) and older tool-result
/// bodies (`[tool result]`).
pub fn serialize_projection<T: Text, S: Sink<T>>(
    messages: &[Message<T>],
    options: &ProjectOptions,
    out: &mut S,
) {
    let serialize_options = SerializeOptions {
        reasoning: options.reasoning,
    };
    let placeholder = T::owned(JsStr::from_str(TOOL_RESULT_PLACEHOLDER));
    let mut parts = Parts::new(out);
    project_each(messages, options, |m| match m {
        Projected::Kept(m) => push_message(&mut parts, m, serialize_options),
        Projected::Made(m) => push_message(&mut parts, &m, serialize_options),
        // The serializer leaves out what the projection does.
        Projected::Filtered { message, .. } => {
            push_assistant_message(&mut parts, message, serialize_options)
        }
        Projected::BodyElided(r) => push_tool_result(&mut parts, r, &[&placeholder], 0),
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
