//! A model of the messages a summarizer reads: what `convertToLlm` yields.
//!
//! Message texts are of a type `T` (see [`crate::transcript::text`]). With owned `JsStr`
//! (the default) they are copied out of the caller's values once: compaction
//! keeps these across its async model calls and retries (the JS objects
//! cannot be held there), and session files parse straight into them. A
//! transcript made within one call can instead refer to the caller's strings.
//! Only what serialization and projection read is kept: image bytes never
//! are, and tool-call arguments are kept as the text `JSON.stringify` gives
//! for each value, which is all the transcript prints.

use crate::error::{Context, Error, Result};
use crate::js::elements::Elements;
use crate::js::json::{stringify, Value};
use crate::js::string::JsStr;
use crate::js::view::{Kind, View};
use crate::session::model::Role;
use crate::transcript::convert_to_llm::{convert_message, LlmMessage};
use crate::transcript::text::{Text, TextOf};

/// One LLM message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message<T = JsStr> {
    User(UserMessage<T>),
    Assistant(AssistantMessage<T>),
    ToolResult(ToolResultMessage<T>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct UserMessage<T = JsStr> {
    pub content: UserContent<T>,
    /// The source message's `timestamp` when it is a number.
    pub timestamp: Option<f64>,
}

/// A user message's content: a plain string or content blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum UserContent<T = JsStr> {
    Text(T),
    Blocks(Vec<Block<T>>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct AssistantMessage<T = JsStr> {
    pub content: Vec<Block<T>>,
    pub timestamp: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultMessage<T = JsStr> {
    /// `String(toolCallId)`.
    pub tool_call_id: T,
    /// `String(toolName)`.
    pub tool_name: T,
    /// `Boolean(isError)`.
    pub is_error: bool,
    pub content: Vec<Block<T>>,
    /// UTF-16 units of text that follow `content`'s text but were not
    /// copied, because a transcript cuts tool results long before them
    /// (see [`ReadLimits`]). Zero when the whole body was read.
    pub elided_units: usize,
    pub timestamp: Option<f64>,
}

/// How much of each message to copy out of the caller's objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadLimits {
    /// Copy at most this many UTF-16 units of a tool result's text; the rest
    /// is only counted. `None` copies everything (needed when the messages
    /// themselves are handed back, as `projectForSummary` does).
    pub tool_result_units: Option<usize>,
    /// Leave `timestamp` unread (a transcript never shows it).
    pub skip_timestamps: bool,
}

impl ReadLimits {
    /// What a transcript needs: a tool result is cut at
    /// [`TOOL_RESULT_MAX_CHARS`](crate::transcript::serialize::TOOL_RESULT_MAX_CHARS)
    /// units, and one unit more tells whether that cut splits a surrogate pair.
    pub fn transcript() -> ReadLimits {
        ReadLimits {
            tool_result_units: Some(crate::transcript::serialize::TOOL_RESULT_MAX_CHARS + 1),
            skip_timestamps: false,
        }
    }

    /// What a transcript needs when texts are not copied: all of them, and
    /// no timestamps.
    pub fn borrowed_transcript() -> ReadLimits {
        ReadLimits {
            tool_result_units: None,
            skip_timestamps: true,
        }
    }
}

/// A content block. Block types a message of that role cannot show in a
/// transcript are not kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Block<T = JsStr> {
    Text(T),
    Thinking {
        thinking: T,
        redacted: bool,
    },
    ToolCall(ToolCall<T>),
    /// An image; its bytes are never copied.
    Image {
        mime_type: Option<JsStr>,
    },
}

/// A tool call. Its strings are of the model's text type too, so a reader
/// that holds them already (the binding's flat form) need not copy them.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall<T = JsStr> {
    /// `String(id)`.
    pub id: T,
    /// `String(name)`.
    pub name: T,
    /// `Object.entries(arguments)`, each value as `JSON.stringify(value)`;
    /// `None` where that is `undefined` (functions, symbols, `undefined`).
    pub args: Vec<(T, Option<T>)>,
}

impl<T> Message<T> {
    pub fn is_user(&self) -> bool {
        matches!(self, Message::User(_))
    }

    pub fn timestamp(&self) -> Option<f64> {
        match self {
            Message::User(m) => m.timestamp,
            Message::Assistant(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
        }
    }
}

impl<T: Text> Block<T> {
    pub fn text(s: impl Into<JsStr>) -> Block<T> {
        Block::Text(T::owned(s.into()))
    }
}

/// The text an array element contributes to `Array.prototype.join`: `""` for
/// null and undefined, `String(v)` otherwise.
fn join_text<V: View, T: TextOf<V>>(v: &V) -> Result<T> {
    // Most values are strings: one read, no typeof.
    if let Some(s) = T::text_of(v) {
        return Ok(s);
    }
    match v.kind() {
        Kind::Undefined | Kind::Null => Ok(T::owned(JsStr::empty())),
        _ => v.to_js_string().map(T::owned),
    }
}

/// `String(v)`, reading strings directly.
fn to_text<V: View>(v: &V) -> Result<JsStr> {
    match v.string() {
        Some(s) => Ok(s),
        None => v.to_js_string(),
    }
}

fn timestamp_of<V: View>(message: &V) -> Result<Option<f64>> {
    Ok(message.get(crate::js::view::Key::Timestamp)?.number())
}

fn field<V: View>(value: &V, key: crate::js::view::Key) -> Result<V> {
    value.get(key)
}

/// A block's `type`, or `None` for primitives other than null/undefined
/// (which JS reads as having no `type`). null and undefined throw in JS.
fn block_type<V: View>(block: &V) -> Result<Option<usize>> {
    const TYPES: [&str; 4] = ["text", "thinking", "toolCall", "image"];
    // Reading `type` first spares a typeof on every block; null and
    // undefined read as having none, and are told apart only then.
    let found = block
        .get(crate::js::view::Key::Type)
        .within("type")?
        .str_one_of(&TYPES);
    if found.is_none() && matches!(block.kind(), Kind::Undefined | Kind::Null) {
        return Err(Error::type_error(
            "",
            format!("expected a content block, got {}", block.kind().describe()),
        ));
    }
    Ok(found)
}

fn image_block<V: View, T>(block: &V) -> Result<Block<T>> {
    // No key for `mimeType` in the shared key set; images are rare, so a walk
    // over the block's own entries costs little.
    let mime_type = block
        .entries()?
        .into_iter()
        .find(|(k, _)| k.eq_str("mimeType"))
        .and_then(|(_, v)| v.string());
    Ok(Block::Image { mime_type })
}

/// Text and image blocks (user, custom and tool-result content).
fn text_image_blocks<V: View, T: TextOf<V>>(content: &V) -> Result<Vec<Block<T>>> {
    let len = content.expect_array("")?;
    let mut out = Vec::with_capacity(crate::capacity::reserve_for(len));
    for j in 0..len {
        let block = content.at(j).within_with(|| format!("[{j}]"))?;
        if let Some(b) = text_image_block(&block).within_with(|| format!("[{j}]"))? {
            out.push(b);
        }
    }
    Ok(out)
}

fn text_image_block<V: View, T: TextOf<V>>(block: &V) -> Result<Option<Block<T>>> {
    Ok(match block_type(block)? {
        Some(0) => Some(Block::Text(
            join_text(&field(block, crate::js::view::Key::Text)?).within("text")?,
        )),
        Some(3) => Some(image_block(block)?),
        _ => None,
    })
}

fn assistant_block<V: View, T: TextOf<V>>(block: &V) -> Result<Option<Block<T>>> {
    use crate::js::view::Key;
    Ok(match block_type(block)? {
        Some(0) => Some(Block::Text(
            join_text(&block.get(Key::Text)?).within("text")?,
        )),
        Some(1) => Some(Block::Thinking {
            thinking: join_text(&block.get(Key::Thinking)?).within("thinking")?,
            redacted: block.get(Key::Redacted)?.truthy(),
        }),
        Some(2) => Some(Block::ToolCall(ToolCall {
            id: T::owned(to_text(&block.get(Key::Id)?).within("id")?),
            name: T::owned(to_text(&block.get(Key::Name)?).within("name")?),
            args: arguments(&block.get(Key::Arguments)?)
                .within("arguments")?
                .into_iter()
                .map(|(k, v)| (T::owned(k), v.map(T::owned)))
                .collect(),
        })),
        _ => None,
    })
}

fn arguments<V: View>(args: &V) -> Result<Vec<(JsStr, Option<JsStr>)>> {
    match args.kind() {
        Kind::Undefined | Kind::Null => Err(Error::type_error(
            "",
            format!("expected an object, got {}", args.kind().describe()),
        )),
        // Object.entries of a string lists its code units.
        Kind::String => {
            let s = args.string().unwrap_or_default();
            Ok(s.code_units()
                .enumerate()
                .map(|(i, u)| {
                    let unit = Value::String(JsStr::from_utf16(&[u]));
                    (JsStr::from_string(i.to_string()), Some(stringify(&unit)))
                })
                .collect())
        }
        _ => {
            if let Some(pairs) = args.argument_entries()? {
                return Ok(pairs);
            }
            let entries = args.entries()?;
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let json = v.json_stringify().within_with(|| k.to_string())?;
                out.push((k, json));
            }
            Ok(out)
        }
    }
}

fn assistant_blocks<V: View, T: TextOf<V>>(content: &V) -> Result<Vec<Block<T>>> {
    // Arrays first: one read for the usual case.
    let len = match content.array_len() {
        Some(len) => len,
        // `for...of` over a string yields characters: none is a block.
        None if content.kind() == Kind::String => 0,
        None => {
            let other = content.kind();
            return Err(Error::type_error(
                "",
                format!("expected an array, got {}", other.describe()),
            ));
        }
    };
    let mut out = Vec::with_capacity(crate::capacity::reserve_for(len));
    for j in 0..len {
        let block = content.at(j).within_with(|| format!("[{j}]"))?;
        if let Some(b) = assistant_block(&block).within_with(|| format!("[{j}]"))? {
            out.push(b);
        }
    }
    Ok(out)
}

fn user_content<V: View, T: TextOf<V>>(content: &V) -> Result<UserContent<T>> {
    match T::text_of(content) {
        Some(s) => Ok(UserContent::Text(s)),
        None => Ok(UserContent::Blocks(text_image_blocks(content)?)),
    }
}

/// A tool result's blocks, copying text only up to `limit` units and
/// counting the rest. A body whose copied text is all blank is read whole,
/// since whether it is blank decides whether the result is shown at all.
fn tool_result_blocks<V: View, T: TextOf<V>>(
    content: &V,
    limit: Option<usize>,
) -> Result<(Vec<Block<T>>, usize)> {
    let Some(limit) = limit else {
        return Ok((text_image_blocks(content)?, 0));
    };
    let Some(len) = content.array_len() else {
        return Ok((text_image_blocks(content)?, 0));
    };
    let mut out = Vec::with_capacity(crate::capacity::reserve_for(len));
    let (mut copied, mut elided) = (0usize, 0usize);
    for j in 0..len {
        let block = content.at(j).within_with(|| format!("[{j}]"))?;
        if block_type(&block).within_with(|| format!("[{j}]"))? != Some(0) {
            if let Some(b) = text_image_block(&block).within_with(|| format!("[{j}]"))? {
                out.push(b);
            }
            continue;
        }
        let text = block.get(crate::js::view::Key::Text)?;
        let Some(units) = text.str_len() else {
            // String(value) of a non-string: read as usual.
            if let Some(b) = text_image_block::<V, T>(&block).within_with(|| format!("[{j}]"))? {
                copied += match &b {
                    Block::Text(t) => t.utf16_len(),
                    _ => 0,
                };
                out.push(b);
            }
            continue;
        };
        let room = limit.saturating_sub(copied);
        if units <= room {
            out.push(Block::Text(
                T::text_of(&text).unwrap_or_else(|| T::owned(JsStr::empty())),
            ));
            copied += units;
        } else {
            if room > 0 {
                out.push(Block::Text(T::owned(
                    text.string_prefix(room).unwrap_or_default(),
                )));
                copied += room;
            }
            elided += units - room;
        }
    }
    let all_blank = out.iter().all(|b| match b {
        Block::Text(t) => t.is_blank(),
        _ => false,
    });
    if elided > 0 && all_blank {
        return Ok((text_image_blocks(content)?, 0));
    }
    Ok((out, elided))
}

/// One agent message as the model sees it after `convertToLlm`, or `None`
/// when it is not sent.
pub fn from_agent_message<V: View>(message: &V) -> Result<Option<Message>> {
    from_agent_message_with::<V, JsStr>(message, ReadLimits::default())
}

/// [`from_agent_message`], copying no more than `limits` allow.
pub fn from_agent_message_with<V: View, T: TextOf<V>>(
    message: &V,
    limits: ReadLimits,
) -> Result<Option<Message<T>>> {
    use crate::js::view::Key;
    let timestamp = if limits.skip_timestamps {
        None
    } else {
        timestamp_of(message)?
    };
    let user = |content| Some(Message::User(UserMessage { content, timestamp }));
    let text_block = |text: JsStr| UserContent::Blocks(vec![Block::Text(T::owned(text))]);
    Ok(match convert_message(message)? {
        LlmMessage::Dropped => None,
        LlmMessage::UserText(pieces) => user(text_block(pieces.text()?)),
        LlmMessage::CustomText => {
            let content = message.get(Key::Content)?;
            user(UserContent::Blocks(vec![Block::Text(
                T::text_of(&content).unwrap_or_else(|| T::owned(JsStr::empty())),
            )]))
        }
        LlmMessage::CustomBlocks => user(UserContent::Blocks(
            text_image_blocks(&message.get(Key::Content)?).within("content")?,
        )),
        LlmMessage::Same(role) => match role {
            Role::User => user(user_content(&message.get(Key::Content)?).within("content")?),
            Role::Assistant => Some(Message::Assistant(AssistantMessage {
                content: assistant_blocks(&message.get(Key::Content)?).within("content")?,
                timestamp,
            })),
            _ => Some(Message::ToolResult(ToolResultMessage {
                tool_call_id: T::owned(
                    to_text(&message.get(Key::ToolCallId)?).within("toolCallId")?,
                ),
                tool_name: T::owned(to_text(&message.get(Key::ToolName)?).within("toolName")?),
                is_error: message.get(Key::IsError)?.truthy(),
                content: Vec::new(),
                elided_units: 0,
                timestamp,
            }))
            .map(|mut m| -> Result<Message<T>> {
                if let Message::ToolResult(r) = &mut m {
                    let (content, elided) =
                        tool_result_blocks(&message.get(Key::Content)?, limits.tool_result_units)
                            .within("content")?;
                    r.content = content;
                    r.elided_units = elided;
                }
                Ok(m)
            })
            .transpose()?,
        },
    })
}

/// `convertToLlm(messages)` into the owned model: holes are passed over, as
/// its `map` and `filter` do. Errors name the index (`[3].content[1].text`);
/// callers prefix the argument name.
pub fn from_agent_messages<V: View>(messages: &V) -> Result<Vec<Message>> {
    from_agent_messages_with(messages, ReadLimits::default())
}

/// [`from_agent_messages`] for a transcript: long tool results are copied
/// only as far as the transcript shows them.
pub fn transcript_messages<V: View>(messages: &V) -> Result<Vec<Message>> {
    from_agent_messages_with(messages, ReadLimits::transcript())
}

/// `convertToLlm(messages)` as texts of type `T`, which may refer to the
/// caller's strings instead of copying them (see [`TextOf::BORROWS`]).
pub fn from_agent_messages_with<V: View, T: TextOf<V>>(
    messages: &V,
    limits: ReadLimits,
) -> Result<Vec<Message<T>>> {
    let len = messages.expect_array("")?;
    let mut out = Vec::with_capacity(crate::capacity::reserve_for(len));
    let mut elements = Elements::new(messages, len);
    while let Some(i) = elements.next_index(messages)? {
        let mut read = || -> Result<()> {
            let Some(message) = elements.read(messages, i)? else {
                return Ok(());
            };
            if let Some(m) = from_agent_message_with(&message, limits)? {
                out.push(m);
            }
            Ok(())
        };
        // Borrowed texts must outlive the read, so no temporary scope then.
        if T::BORROWS {
            read()
        } else {
            messages.scoped(read)
        }
        .within_with(|| format!("[{i}]"))?;
    }
    Ok(out)
}

/// Whether an agent message is one `convertToLlm` turns into a user message:
/// the messages that open a user round.
pub fn opens_round<V: View>(message: &V) -> Result<bool> {
    Ok(match convert_message(message)? {
        LlmMessage::Dropped => false,
        LlmMessage::Same(role) => role == Role::User,
        LlmMessage::UserText(_) | LlmMessage::CustomText | LlmMessage::CustomBlocks => true,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
