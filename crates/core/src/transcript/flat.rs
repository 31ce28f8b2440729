//! Decoding the flat form of a message list: `flat-messages.js` reads plain
//! user, assistant and tool-result messages in one JIT-compiled pass and
//! hands the binding an `Int32Array` of codes, an array of the texts it met
//! and the UTF-16 units of the short strings (ids, names, arguments, mime
//! types) one after another; this module turns the codes back into
//! messages, or writes their transcript parts straight from them. How a text
//! is made from a place in the texts array or the short units is the
//! caller's ([`FlatTexts`]): the binding's texts are the caller's JS strings,
//! a test's are its own.
//!
//! Codes that do not decode (an unknown kind, a count or length out of
//! range, a text index past the texts array, a native message out of place)
//! are an error, never a panic or a read of the wrong place. The codes are
//! documented in `flat-messages.js`:
//!
//! ```text
//! [NATIVE, index]            the caller's message `index`, read natively
//! [USER_TEXT, string, length]
//! [USER_BLOCKS, count, ...blocks]
//! [ASSISTANT, count, ...blocks]
//! [TOOL_RESULT, id, name, isError, count, ...blocks]
//! [TEXT, string, length, flags]         flags: BLANK | SPLITS_PAIR_AT_CUT
//! [THINKING, string, length, redacted]
//! [TOOL_CALL, id, name, n, (key, json or -1, string or -1) x n]
//! [IMAGE, mimeType or -1]
//! ```
//!
//! `string` is an index into the texts array; `id`, `name`, `key`, `json`
//! and `mimeType` are lengths of short strings, taken in order. A tool-call
//! argument's JSON is its length and where it is ([`FlatArgs`]): in the
//! short units (`json, -1`), the text `string` (`json, string`: JSON longer
//! than [`LONG_JSON`] units), or the JSON of the string value `string` of
//! the texts array (`length, -2 - string`, with the string's length), which
//! the reader writes; `-1, -1` is an argument with no JSON.

#[cfg(doc)]
use crate::boundary_codes::flat::LONG_JSON;
use crate::boundary_codes::flat::{
    ASSISTANT, BLANK, IMAGE, NATIVE, SPLITS_PAIR_AT_CUT, TEXT, THINKING, TOOL_CALL, TOOL_RESULT,
    USER_BLOCKS, USER_TEXT,
};
use crate::capacity::reserve_for;
use crate::error::{Error, Result};
use crate::transcript::llm_message::{
    AssistantMessage, Block, Message, ToolCall, ToolResultMessage, UserContent, UserMessage,
};
use crate::transcript::serialize::{
    push_assistant, push_tool_result_of, push_user, BlockRef, Parts, SerializeOptions,
};
use crate::transcript::text::{Sink, Text, TextHints};

/// A short string's length that names none (an image's mime type, an
/// argument's JSON), and an argument JSON's place that is the short units.
pub const NONE: i32 = -1;
/// An argument JSON's place `JSON_OF_BASE - string`: the JSON of the
/// string value `string` of the texts array.
pub const JSON_OF_BASE: i32 = -2;

/// The texts a flat form names: element `index` of its texts array, or
/// units of its short strings. Both are in range when asked for.
pub trait FlatTexts: Copy {
    type Text: Text + Clone;
    /// Elements in the texts array.
    fn strings_len(&self) -> u32;
    /// Short-string units.
    fn shorts_len(&self) -> usize;
    /// Element `index` (below [`FlatTexts::strings_len`]) of the texts
    /// array, `len` units long as the JS pass measured it.
    fn indexed(&self, index: u32, len: u32, hints: TextHints) -> Self::Text;
    /// Short units `start..start + len` (within [`FlatTexts::shorts_len`]).
    fn short(&self, start: u32, len: u32) -> Self::Text;
    /// `JSON.stringify` of element `index` (below
    /// [`FlatTexts::strings_len`]) of the texts array, a string `len`
    /// units long as the JS pass measured it.
    fn json_of(&self, index: u32, len: u32) -> Self::Text;
}

/// flat-messages.js and this reader disagree: a bug, never the caller's input.
pub fn malformed() -> Error {
    Error::internal("bad flat messages")
}

/// Element `index` of the texts array, `len` units long; `None` when
/// either is negative or the index is past the array.
fn indexed<T: FlatTexts>(texts: &T, index: i32, len: i32, hints: TextHints) -> Option<T::Text> {
    let index = u32::try_from(index).ok()?;
    let len = u32::try_from(len).ok()?;
    (index < texts.strings_len()).then(|| texts.indexed(index, len, hints))
}

/// The JSON of element `index` of the texts array, a string `len` units
/// long; `None` as for [`indexed`].
fn json_of<T: FlatTexts>(texts: &T, index: i32, len: i32) -> Option<T::Text> {
    let index = u32::try_from(index).ok()?;
    let len = u32::try_from(len).ok()?;
    (index < texts.strings_len()).then(|| texts.json_of(index, len))
}

/// An argument's JSON, as the codes `(len, at)` name it (see the module
/// docs): none, `len` short-string units at `*at` (which moves past them),
/// the text at index `at`, or the JSON of the string at `JSON_OF_BASE - at`.
fn json<T: FlatTexts>(
    texts: &T,
    short_at: &mut usize,
    len: i32,
    at: i32,
) -> Option<Option<T::Text>> {
    Some(match (len, at) {
        (NONE, NONE) => None,
        (len, NONE) => Some(short(texts, short_at, len)?),
        (len, at) if at >= 0 => Some(indexed(texts, at, len, TextHints::default())?),
        (len, at) => Some(json_of(texts, JSON_OF_BASE - at, len)?),
    })
}

/// The short string of `len` units at `*at`; `*at` moves past it.
fn short<T: FlatTexts>(texts: &T, at: &mut usize, len: i32) -> Option<T::Text> {
    let start = *at;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    if end > texts.shorts_len() {
        return None;
    }
    let text = texts.short(u32::try_from(start).ok()?, u32::try_from(len).ok()?);
    *at = end;
    Some(text)
}

/// What is done with each block as it is decoded: it is handed over by
/// value, so it is built where it is kept (in a vector, as a rule) rather
/// than moved there through return values (blocks that came back as
/// `Option`s were copied several times; docs/serialization.md).
pub trait Visit<'c, T: FlatTexts> {
    fn block(&mut self, block: BlockRef<T::Text, FlatArgs<'c, T>>);
    /// An image (a transcript does not show it; a projection keeps it).
    fn image(&mut self, _mime_type: Option<T::Text>) {}
}

/// A message's blocks in the flat form, decoded once.
struct FlatBlocks<'c, T> {
    texts: T,
    codes: &'c [i32],
    /// Position of the next block's code, and of its first short string.
    at: usize,
    short_at: usize,
    /// Blocks not yet read.
    left: usize,
}

impl<'c, T: FlatTexts> FlatBlocks<'c, T> {
    fn code(&self, offset: usize) -> Option<i32> {
        self.codes.get(self.at.checked_add(offset)?).copied()
    }

    /// The next short string of length `len`.
    fn short(&mut self, len: i32) -> Option<T::Text> {
        short(&self.texts, &mut self.short_at, len)
    }

    /// Decodes every block into `visit`; then the next message's codes and
    /// short strings start at `at` and `short_at`.
    fn decode(&mut self, visit: &mut impl Visit<'c, T>) -> Result<()> {
        while self.left > 0 {
            self.next_block(visit).ok_or_else(malformed)?;
            self.left -= 1;
        }
        Ok(())
    }

    #[inline(always)]
    fn next_block(&mut self, visit: &mut impl Visit<'c, T>) -> Option<()> {
        match self.code(0)? {
            TEXT => {
                let flags = self.code(3)?;
                let hints = TextHints::told(flags & BLANK != 0, flags & SPLITS_PAIR_AT_CUT != 0);
                let text = indexed(&self.texts, self.code(1)?, self.code(2)?, hints)?;
                self.at += 4;
                visit.block(BlockRef::Text(text));
            }
            THINKING => {
                let thinking = indexed(
                    &self.texts,
                    self.code(1)?,
                    self.code(2)?,
                    TextHints::default(),
                )?;
                let redacted = self.code(3)? != 0;
                self.at += 4;
                visit.block(BlockRef::Thinking { thinking, redacted });
            }
            TOOL_CALL => {
                let (id_len, name_len) = (self.code(1)?, self.code(2)?);
                let n = usize::try_from(self.code(3)?).ok()?;
                let start = self.at.checked_add(4)?;
                let codes = self
                    .codes
                    .get(start..start.checked_add(n.checked_mul(3)?)?)?;
                let id = self.short(id_len)?;
                let name = self.short(name_len)?;
                let args = FlatArgs {
                    texts: self.texts,
                    codes,
                    short_at: self.short_at,
                };
                // Past the arguments' short strings, checking them once here.
                for arg in codes.chunks_exact(3) {
                    self.short(arg[0])?;
                    json(&self.texts, &mut self.short_at, arg[1], arg[2])?;
                }
                self.at = start + codes.len();
                visit.block(BlockRef::ToolCall { id, name, args });
            }
            IMAGE => {
                let len = self.code(1)?;
                let mime_type = if len == NONE {
                    None
                } else {
                    Some(self.short(len)?)
                };
                self.at += 2;
                visit.image(mime_type);
            }
            _ => return None,
        }
        Some(())
    }
}

/// Keeps every block a transcript shows.
impl<'c, T: FlatTexts> Visit<'c, T> for Vec<BlockRef<T::Text, FlatArgs<'c, T>>> {
    fn block(&mut self, block: BlockRef<T::Text, FlatArgs<'c, T>>) {
        self.push(block);
    }
}

/// Keeps the texts of text blocks, the empty ones too unless `non_empty`.
struct TextBlocks<'v, X> {
    out: &'v mut Vec<X>,
    non_empty: bool,
}

impl<'c, T: FlatTexts> Visit<'c, T> for TextBlocks<'_, T::Text> {
    fn block(&mut self, block: BlockRef<T::Text, FlatArgs<'c, T>>) {
        if let BlockRef::Text(t) = block {
            if !self.non_empty || !t.is_empty() {
                self.out.push(t);
            }
        }
    }
}

/// Builds the model's blocks.
struct ModelBlocks<X>(Vec<Block<X>>);

impl<'c, T: FlatTexts> Visit<'c, T> for ModelBlocks<T::Text> {
    fn block(&mut self, block: BlockRef<T::Text, FlatArgs<'c, T>>) {
        self.0.push(match block {
            BlockRef::Text(t) => Block::Text(t),
            BlockRef::Thinking { thinking, redacted } => Block::Thinking { thinking, redacted },
            BlockRef::ToolCall { id, name, args } => Block::ToolCall(ToolCall {
                id,
                name,
                args: args.collect(),
            }),
            BlockRef::Other => return,
        });
    }

    fn image(&mut self, mime_type: Option<T::Text>) {
        self.0.push(Block::Image {
            mime_type: mime_type.map(|t| t.to_js_str()),
        });
    }
}

/// A tool call's arguments in the flat form (checked as the block was
/// decoded): `(key, JSON or none)`.
#[derive(Clone)]
pub struct FlatArgs<'c, T> {
    texts: T,
    /// Triples: the key's length, then the JSON's length and where it is
    /// (see [`json`]).
    codes: &'c [i32],
    short_at: usize,
}

impl<T: FlatTexts> Iterator for FlatArgs<'_, T> {
    type Item = (T::Text, Option<T::Text>);

    fn next(&mut self) -> Option<Self::Item> {
        let (&[key_len, json_len, at], rest) = self.codes.split_first_chunk::<3>()?;
        self.codes = rest;
        let key = short(&self.texts, &mut self.short_at, key_len)?;
        let json = json(&self.texts, &mut self.short_at, json_len, at)?;
        Some((key, json))
    }
}

/// What the flat writer reuses from one message to the next: a message's
/// blocks, or its texts, each decoded once.
pub struct Scratch<'c, T: FlatTexts> {
    blocks: Vec<BlockRef<T::Text, FlatArgs<'c, T>>>,
    texts: Vec<T::Text>,
}

impl<T: FlatTexts> Default for Scratch<'_, T> {
    fn default() -> Self {
        Scratch {
            blocks: Vec::new(),
            texts: Vec::new(),
        }
    }
}

/// A decoded message, or the caller's message to read natively (the pass
/// did not recognise it), by its index.
pub enum Decoded<M> {
    Message(M),
    Native(usize),
}

/// The flat form of a message list, read from its first code on.
pub struct FlatReader<'c, T> {
    texts: T,
    codes: &'c [i32],
    /// Position of the next code, and of the next short string.
    at: usize,
    short_at: usize,
    /// Each message's timestamp and whether it has one (a number), when
    /// the pass was asked for them.
    timestamps: Option<(&'c [f64], &'c [u8])>,
    /// Index in the caller's array of the next message.
    index: usize,
}

impl<'c, T: FlatTexts> FlatReader<'c, T> {
    pub fn new(texts: T, codes: &'c [i32]) -> Self {
        FlatReader {
            texts,
            codes,
            at: 0,
            short_at: 0,
            timestamps: None,
            index: 0,
        }
    }

    /// Message `i`'s timestamp is `times[i]` where `timed[i]` is 1.
    pub fn with_timestamps(mut self, times: &'c [f64], timed: &'c [u8]) -> Result<Self> {
        if times.len() != timed.len() {
            return Err(malformed());
        }
        self.timestamps = Some((times, timed));
        Ok(self)
    }

    pub fn is_done(&self) -> bool {
        self.at >= self.codes.len()
    }

    fn next(&mut self) -> Result<i32> {
        let c = self.codes.get(self.at).copied().ok_or_else(malformed)?;
        self.at += 1;
        Ok(c)
    }

    fn count(&mut self) -> Result<usize> {
        usize::try_from(self.next()?).map_err(|_| malformed())
    }

    /// The next short string.
    fn short(&mut self) -> Result<T::Text> {
        let len = self.next()?;
        short(&self.texts, &mut self.short_at, len).ok_or_else(malformed)
    }

    /// The next `[string, length]` text.
    fn text(&mut self) -> Result<T::Text> {
        let (index, len) = (self.next()?, self.next()?);
        indexed(&self.texts, index, len, TextHints::default()).ok_or_else(malformed)
    }

    /// Decodes the blocks that follow (a count, then the blocks) into
    /// `visit`, and moves past them.
    fn decode_blocks(&mut self, visit: &mut impl Visit<'c, T>) -> Result<()> {
        let left = self.count()?;
        let mut blocks = FlatBlocks {
            texts: self.texts,
            codes: self.codes,
            at: self.at,
            short_at: self.short_at,
            left,
        };
        blocks.decode(visit)?;
        (self.at, self.short_at) = (blocks.at, blocks.short_at);
        Ok(())
    }

    /// The texts of the text blocks that follow, into `out` (emptied first).
    fn decode_texts(&mut self, out: &mut Vec<T::Text>, non_empty: bool) -> Result<()> {
        out.clear();
        self.decode_blocks(&mut TextBlocks { out, non_empty })
    }

    /// The blocks that follow, as the model's blocks.
    fn model_blocks(&mut self) -> Result<Vec<Block<T::Text>>> {
        let count = self.codes.get(self.at).copied().unwrap_or(0);
        let mut out = ModelBlocks(Vec::with_capacity(
            usize::try_from(count).unwrap_or(0).min(1024),
        ));
        self.decode_blocks(&mut out)?;
        Ok(out.0)
    }

    /// The index of the message about to be read, checked against the
    /// timestamps; the index moves on.
    fn start_message(&mut self) -> Result<(usize, Option<f64>)> {
        let index = self.index;
        self.index += 1;
        let timestamp = match self.timestamps {
            Some((times, timed)) => match timed.get(index) {
                Some(&1) => times.get(index).copied(),
                Some(_) => None,
                None => return Err(malformed()),
            },
            None => None,
        };
        Ok((index, timestamp))
    }

    /// After `[NATIVE`: the index, which must be the message's own.
    fn native_index(&mut self, index: usize) -> Result<usize> {
        let i = self.count()?;
        if i != index {
            return Err(malformed());
        }
        Ok(i)
    }

    /// The next message, or the index of the caller's message to read
    /// natively in its place.
    pub fn message(&mut self) -> Result<Decoded<Message<T::Text>>> {
        let (index, timestamp) = self.start_message()?;
        Ok(Decoded::Message(match self.next()? {
            NATIVE => return Ok(Decoded::Native(self.native_index(index)?)),
            USER_TEXT => Message::User(UserMessage {
                content: UserContent::Text(self.text()?),
                timestamp,
            }),
            USER_BLOCKS => Message::User(UserMessage {
                content: UserContent::Blocks(self.model_blocks()?),
                timestamp,
            }),
            ASSISTANT => Message::Assistant(AssistantMessage {
                content: self.model_blocks()?,
                timestamp,
            }),
            TOOL_RESULT => Message::ToolResult(ToolResultMessage {
                tool_call_id: self.short()?,
                tool_name: self.short()?,
                is_error: self.next()? != 0,
                content: self.model_blocks()?,
                elided_units: 0,
                timestamp,
            }),
            _ => return Err(malformed()),
        }))
    }

    /// Writes the next message's parts straight from the codes, building no
    /// message; for one the pass left to the native reader, gives its index
    /// and writes nothing.
    pub fn write_message<S: Sink<T::Text>>(
        &mut self,
        parts: &mut Parts<'_, S>,
        options: SerializeOptions,
        scratch: &mut Scratch<'c, T>,
    ) -> Result<Option<usize>> {
        let (index, _) = self.start_message()?;
        match self.next()? {
            NATIVE => return Ok(Some(self.native_index(index)?)),
            USER_TEXT => {
                let text = self.text()?;
                push_user::<T::Text, _, _>(parts, std::iter::once(&text));
            }
            USER_BLOCKS => {
                self.decode_texts(&mut scratch.texts, false)?;
                push_user::<T::Text, _, _>(parts, scratch.texts.iter());
            }
            ASSISTANT => {
                scratch.blocks.clear();
                self.decode_blocks(&mut scratch.blocks)?;
                push_assistant::<T::Text, _, _, _, _>(parts, scratch.blocks.iter(), options);
            }
            TOOL_RESULT => {
                let id = self.short()?;
                let name = self.short()?;
                let is_error = self.next()? != 0;
                self.decode_texts(&mut scratch.texts, true)?;
                push_tool_result_of(parts, &name, &id, is_error, &scratch.texts, 0);
            }
            _ => return Err(malformed()),
        }
        Ok(None)
    }

    /// Every message, those read natively by `native(i)`, for callers that
    /// keep them all; `len` is the caller's array's length.
    pub fn messages(
        &mut self,
        len: usize,
        mut native: impl FnMut(usize) -> Result<Option<Message<T::Text>>>,
    ) -> Result<Vec<Message<T::Text>>> {
        // At most one message per element of the caller's array: grown
        // from empty, the vector was moved nine times at 1k messages.
        let mut out = Vec::with_capacity(reserve_for(len));
        while !self.is_done() {
            match self.message()? {
                Decoded::Message(m) => out.push(m),
                Decoded::Native(i) => out.extend(native(i)?),
            }
        }
        Ok(out)
    }
}
