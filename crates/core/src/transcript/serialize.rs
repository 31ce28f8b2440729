//! `serializeConversation`: the plain-text transcript a summarizer reads.
//!
//! The spec's format, which names tool calls and results by `name#callId`
//! and labels reasoning apart from replies, so a summary can tie each result
//! to its call. Joining, empty-content handling and tool-result truncation
//! follow the reference, except that a cut never splits a surrogate pair.

use std::borrow::Borrow;

use crate::js::json::decimal_digits;
use crate::js::string::{is_high_surrogate, is_low_surrogate, JsStr, Utf16Builder};
use crate::transcript::llm_message::{
    AssistantMessage, Block, Message, ToolResultMessage, UserContent,
};
use crate::transcript::text::{Sink, Text};

/// Longest tool-result text kept verbatim, in UTF-16 units.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// What goes into a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SerializeOptions {
    /// Include `[Assistant reasoning]` lines.
    pub reasoning: bool,
}

impl Default for SerializeOptions {
    fn default() -> Self {
        SerializeOptions { reasoning: true }
    }
}

/// Transcript parts, separated by a blank line.
pub struct Parts<'a, S> {
    out: &'a mut S,
    any: bool,
}

impl<'a, S> Parts<'a, S> {
    pub fn new(out: &'a mut S) -> Self {
        Parts { out, any: false }
    }

    /// The sink written to.
    pub fn sink(&mut self) -> &mut S {
        self.out
    }

    fn start<T: Text>(&mut self, label: &str) -> &mut S
    where
        S: Sink<T>,
    {
        if self.any {
            self.out.push_str("\n\n");
        }
        self.any = true;
        self.out.push_str(label);
        self.out
    }
}

/// A content block as the transcript writer reads it: texts as `H` (a text
/// or a reference to one) and a tool call's arguments, `(key, JSON or
/// none)`, as the iterator `A`. The model's blocks are read this way, and
/// so are the binding's flat codes, without building a model.
pub enum BlockRef<H, A> {
    Text(H),
    Thinking {
        thinking: H,
        redacted: bool,
    },
    ToolCall {
        id: H,
        name: H,
        args: A,
    },
    /// Blocks a transcript does not show (images).
    Other,
}

/// The model's arguments as [`BlockRef`] pairs.
type ArgRefs<'a, T> = std::iter::Map<
    std::slice::Iter<'a, (T, Option<T>)>,
    fn(&'a (T, Option<T>)) -> (&'a T, Option<&'a T>),
>;

fn arg_ref<T>(arg: &(T, Option<T>)) -> (&T, Option<&T>) {
    (&arg.0, arg.1.as_ref())
}

/// A model block as a [`BlockRef`].
pub fn block_ref<T>(block: &Block<T>) -> BlockRef<&T, ArgRefs<'_, T>> {
    match block {
        Block::Text(t) => BlockRef::Text(t),
        Block::Thinking { thinking, redacted } => BlockRef::Thinking {
            thinking,
            redacted: *redacted,
        },
        Block::ToolCall(c) => BlockRef::ToolCall {
            id: &c.id,
            name: &c.name,
            args: c
                .args
                .iter()
                .map(arg_ref as fn(&(T, Option<T>)) -> (&T, Option<&T>)),
        },
        Block::Image { .. } => BlockRef::Other,
    }
}

fn push_tool_call<T: Text, S: Sink<T>, H: Borrow<T>>(
    out: &mut S,
    id: &T,
    name: &T,
    args: impl Iterator<Item = (H, Option<H>)>,
) {
    out.push_text(name);
    out.push_str("#");
    out.push_text(id);
    out.push_str("(");
    for (i, (key, json)) in args.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_text(key.borrow());
        out.push_str("=");
        match json {
            Some(json) => out.push_text(json.borrow()),
            // `${JSON.stringify(undefined)}`
            None => out.push_str("undefined"),
        }
    }
    out.push_str(")");
}

fn texts<T>(blocks: &[Block<T>]) -> impl Iterator<Item = &T> + Clone {
    blocks.iter().filter_map(|b| match b {
        Block::Text(t) => Some(t),
        _ => None,
    })
}

/// Whether a cut at `index` of the texts joined with `""` splits a pair.
fn splits_joined_pair_at<T: Text, H: Borrow<T>>(texts: &[H], index: usize) -> bool {
    let mut start = 0usize;
    for t in texts {
        let t = t.borrow();
        let len = t.utf16_len();
        if index > start && index < start + len {
            // Inside one text: it can answer alone.
            return t.splits_pair_at(index - start);
        }
        start += len;
    }
    // At a boundary between two texts (or an end).
    index > 0
        && joined_unit_at::<T, H>(texts, index - 1).is_some_and(is_high_surrogate)
        && joined_unit_at::<T, H>(texts, index).is_some_and(is_low_surrogate)
}

/// The code unit at `index` of the texts joined with `""`.
fn joined_unit_at<T: Text, H: Borrow<T>>(texts: &[H], mut index: usize) -> Option<u16> {
    for t in texts {
        let t = t.borrow();
        let len = t.utf16_len();
        if index < len {
            return t.code_unit_at(index);
        }
        index -= len;
    }
    None
}

/// Writes a tool result's text blocks joined with `""`, cut at `max` units
/// (one fewer rather than half a surrogate pair); returns the units cut.
fn push_truncated<T: Text, S: Sink<T>, H: Borrow<T>>(
    out: &mut S,
    texts: &[H],
    max: usize,
) -> usize {
    let len: usize = texts.iter().map(|t| t.borrow().utf16_len()).sum();
    if len <= max {
        for t in texts {
            out.push_text(t.borrow());
        }
        return 0;
    }
    let mut end = max;
    if splits_joined_pair_at::<T, H>(texts, end) {
        end -= 1;
    }
    let mut room = end;
    for t in texts {
        let t = t.borrow();
        if room == 0 {
            break;
        }
        let n = t.utf16_len();
        if n <= room {
            out.push_text(t);
            room -= n;
        } else {
            out.push_text_prefix(t, room);
            room = 0;
        }
    }
    len - end
}

/// Appends one message's parts.
pub fn push_message<T: Text, S: Sink<T>>(
    parts: &mut Parts<'_, S>,
    message: &Message<T>,
    options: SerializeOptions,
) {
    match message {
        Message::User(m) => match &m.content {
            UserContent::Text(t) => push_user::<T, _, _>(parts, std::iter::once(t)),
            UserContent::Blocks(blocks) => push_user::<T, _, _>(parts, texts(blocks)),
        },
        Message::Assistant(m) => push_assistant_message(parts, m, options),
        Message::ToolResult(m) => {
            let content: Vec<&T> = texts(&m.content).filter(|t| !t.is_empty()).collect();
            push_tool_result(parts, m, &content, m.elided_units);
        }
    }
}

/// Appends an assistant message's parts.
pub fn push_assistant_message<T: Text, S: Sink<T>>(
    parts: &mut Parts<'_, S>,
    message: &AssistantMessage<T>,
    options: SerializeOptions,
) {
    push_assistant::<T, _, _, _, _>(
        parts,
        (message.content.iter()).map(block_ref as fn(&Block<T>) -> BlockRef<&T, ArgRefs<'_, T>>),
        options,
    )
}

/// Appends a user message's part, given its texts: none when they are all
/// empty.
pub fn push_user<T: Text, S: Sink<T>, H: Borrow<T>>(
    parts: &mut Parts<'_, S>,
    texts: impl Iterator<Item = H> + Clone,
) {
    if texts.clone().any(|t| !t.borrow().is_empty()) {
        let out = parts.start("[User]: ");
        for t in texts {
            out.push_text(t.borrow());
        }
    }
}

/// Appends an assistant message's parts, given its blocks (read up to
/// four times, so they should be cheap to read: references, or the model's
/// blocks adapted): reasoning, then replies, then tool calls.
pub fn push_assistant<T, S, H, A, B>(
    parts: &mut Parts<'_, S>,
    blocks: impl Iterator<Item = B> + Clone,
    options: SerializeOptions,
) where
    T: Text,
    S: Sink<T>,
    H: Borrow<T>,
    A: Iterator<Item = (H, Option<H>)> + Clone,
    B: Borrow<BlockRef<H, A>>,
{
    let reasoning = |b: &B| -> bool {
        matches!(b.borrow(), BlockRef::Thinking { thinking, redacted: false } if !thinking.borrow().is_empty())
    };
    // Which parts there are, in one pass.
    let (mut has_reasoning, mut has_text, mut has_calls) = (false, false, false);
    for b in blocks.clone() {
        has_reasoning |= reasoning(&b);
        has_text |= matches!(b.borrow(), BlockRef::Text(_));
        has_calls |= matches!(b.borrow(), BlockRef::ToolCall { .. });
    }
    if options.reasoning && has_reasoning {
        let out = parts.start("[Assistant reasoning]: ");
        for (i, b) in blocks.clone().filter(reasoning).enumerate() {
            if i > 0 {
                out.push_str("\n");
            }
            if let BlockRef::Thinking { thinking, .. } = b.borrow() {
                out.push_text(thinking.borrow());
            }
        }
    }
    if has_text {
        let out = parts.start("[Assistant]: ");
        let mut first = true;
        for b in blocks.clone() {
            if let BlockRef::Text(t) = b.borrow() {
                if !first {
                    out.push_str("\n");
                }
                first = false;
                out.push_text(t.borrow());
            }
        }
    }
    if has_calls {
        let out = parts.start("[Assistant tool calls]: ");
        let mut first = true;
        for b in blocks {
            if let BlockRef::ToolCall { id, name, args } = b.borrow() {
                if !first {
                    out.push_str("; ");
                }
                first = false;
                push_tool_call(out, id.borrow(), name.borrow(), args.clone());
            }
        }
    }
}

/// Appends a tool result's part: `m`'s name, id and flag, with `content` (its
/// non-empty texts, or what stands for them) as the body, and
/// `elided_units` more units (see `ReadLimits`) past its end.
pub fn push_tool_result<T: Text, S: Sink<T>, H: Borrow<T>>(
    parts: &mut Parts<'_, S>,
    m: &ToolResultMessage<T>,
    content: &[H],
    elided_units: usize,
) {
    push_tool_result_of(
        parts,
        &m.tool_name,
        &m.tool_call_id,
        m.is_error,
        content,
        elided_units,
    )
}

/// [`push_tool_result`] given the result's name, call id and flag.
pub fn push_tool_result_of<T: Text, S: Sink<T>, H: Borrow<T>>(
    parts: &mut Parts<'_, S>,
    name: &T,
    id: &T,
    is_error: bool,
    content: &[H],
    elided_units: usize,
) {
    if content.is_empty() && elided_units == 0 {
        return;
    }
    let out = parts.start("[Tool result ");
    out.push_text(name);
    out.push_str("#");
    out.push_text(id);
    out.push_str(if is_error {
        " error=true]: "
    } else {
        " error=false]: "
    });
    // Text never copied (see ReadLimits) lies past the cut as well.
    let cut = push_truncated::<T, S, H>(out, content, TOOL_RESULT_MAX_CHARS) + elided_units;
    if cut > 0 {
        out.push_str("\n\n[... ");
        out.push_str(decimal(cut, &mut [0; 20]));
        out.push_str(" more characters truncated]");
    }
}

/// `n` in decimal (no allocation: a third of the tool results in a long
/// session are cut and print this).
fn decimal(n: usize, buf: &mut [u8; 20]) -> &str {
    let digits = decimal_digits(n as u64, buf);
    std::str::from_utf8(digits).unwrap_or_default()
}

/// About the transcript's length in bytes (text plus labels; tool results
/// count at most their cut length).
fn size_hint(messages: &[Message]) -> usize {
    let text = |blocks: &[Block]| -> usize {
        blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => t.stored_len(),
                Block::Thinking { thinking, .. } => thinking.stored_len(),
                Block::ToolCall(c) => {
                    32 + c
                        .args
                        .iter()
                        .map(|(k, v)| k.stored_len() + v.as_ref().map_or(9, |v| v.stored_len()) + 3)
                        .sum::<usize>()
                }
                Block::Image { .. } => 0,
            })
            .sum()
    };
    messages
        .iter()
        .map(|m| {
            40 + match m {
                Message::User(u) => match &u.content {
                    UserContent::Text(t) => t.stored_len(),
                    UserContent::Blocks(b) => text(b),
                },
                Message::Assistant(a) => text(&a.content),
                Message::ToolResult(r) => text(&r.content).min(TOOL_RESULT_MAX_CHARS * 3) + 64,
            }
        })
        .sum()
}

/// Writes the transcript of `messages` to `out`.
pub fn serialize_into<T: Text, S: Sink<T>>(
    messages: &[Message<T>],
    options: SerializeOptions,
    out: &mut S,
) {
    let mut parts = Parts::new(out);
    for m in messages {
        push_message(&mut parts, m, options);
    }
}

/// `serializeConversation(messages, options)`.
pub fn serialize(messages: &[Message], options: SerializeOptions) -> JsStr {
    // Sized up front: regrowing a transcript of many megabytes costs copies
    // and page faults that showed up in profiles.
    let mut out = Utf16Builder::with_capacity(size_hint(messages));
    serialize_into(messages, options, &mut out);
    out.finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
