//! Transcript messages from `flat-messages.js`: one JIT-compiled pass in JS
//! reads the message objects (a property read there costs about a
//! nanosecond, an N-API read from here 50 to 100) and hands over an
//! `Int32Array` of codes, an array of the texts it met and a `Uint16Array`
//! of the short strings' units (ids, names, arguments) one after another.
//! Both typed arrays are read in place, and texts are named by index and
//! stay the caller's strings ([`JsText::Indexed`]). A message the pass does
//! not recognise as a plain user, assistant or tool-result message comes as
//! "read it yourself", and is read from the caller's object here as before,
//! so conversions and errors are this crate's own. The codes are documented
//! in `flat-messages.js`.

use std::ptr;

use napi::sys;

use crate::js::out::Raw;
use crate::js::text::{JsText, TextHints};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::capacity::reserve_for;
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::view::View;
use prime_compaction_core::transcript::llm_message::{
    from_agent_message_with, AssistantMessage, Block, Message, ReadLimits, ToolCall,
    ToolResultMessage, UserContent, UserMessage,
};
use prime_compaction_core::transcript::serialize::{
    push_assistant, push_message, push_tool_result_of, push_user, BlockRef, Parts, SerializeOptions,
};
use prime_compaction_core::transcript::text::{Sink, Text};

// The codes, documented in flat-messages.js (`CUT` is [`TextHints::CUT`]).
use crate::js::codes::flat::{
    ASSISTANT, BLANK, IMAGE, NATIVE, SPLITS_PAIR_AT_CUT, TEXT, THINKING, TOOL_CALL, TOOL_RESULT,
    USER_BLOCKS, USER_TEXT,
};

/// The flat form of a message list, as flat-messages.js made it.
pub struct Flat<'c> {
    /// The strings array, and the short strings (ids, names, argument keys
    /// and JSON, mime types) joined in the order the codes name them; the
    /// texts cut from them refer to it.
    texts: Texts<'c>,
    codes: &'c [i32],
    /// Position of the next code, and of the next short string.
    at: usize,
    short_at: usize,
    /// Each message's timestamp and whether it has one (a number), when
    /// the pass was asked for them.
    timestamps: Option<(&'c [f64], &'c [u8])>,
    /// Index in the caller's array of the next message [`Flat::message`] reads.
    index: usize,
}

/// The elements of one of flat-messages.js's typed arrays (`T` must match
/// `kind`), read in place for the rest of the call.
///
/// They stay valid that long: the arrays are that module's own and never
/// handed to anyone, so no code but the module's can detach or resize
/// their buffers, and it touches them only in the JS pass before this call
/// and in `releaseFlat` after it (a call made meanwhile, from a getter,
/// makes arrays of its own); the caller's arguments keep them alive, and
/// V8 never moves an array buffer's memory.
pub(crate) fn typed_array_slice<T: Copy>(
    cx: &Cx,
    array: Raw,
    kind: sys::napi_typedarray_type,
) -> Result<&[T]> {
    let mut found = 0;
    let mut length = 0usize;
    let mut data = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    let mut offset = 0usize;
    check(unsafe {
        sys::napi_get_typedarray_info(
            cx.env,
            array,
            &mut found,
            &mut length,
            &mut data,
            &mut buffer,
            &mut offset,
        )
    })
    .map_err(|_| malformed())?;
    if found != kind || (data.is_null() && length > 0) {
        return Err(malformed());
    }
    if length == 0 {
        return Ok(&[]);
    }
    // A typed array of this kind holds `length` aligned elements of `T` at
    // `data`, valid for the call (see above).
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<T>(), length) })
}

/// flat-messages.js and this reader disagree: a bug, never the caller's input.
fn malformed() -> Error {
    Error::invalid("prime-compaction internal error (a bug, please report it): bad flat messages")
}

/// Element `i` of the flat form's array.
pub(crate) fn flat_element(cx: &Cx, flat: Raw, i: u32) -> Result<Raw> {
    let mut out = ptr::null_mut();
    check(unsafe { sys::napi_get_element(cx.env, flat, i, &mut out) })?;
    Ok(out)
}

/// What the flat form's texts are made from: the strings array and the
/// short-string units.
#[derive(Clone, Copy)]
struct Texts<'c> {
    cx: &'c Cx,
    strings: Raw,
    /// How many strings the pass put in `strings`: an index past them is
    /// a malformed flat form.
    count: u32,
    shorts: &'c [u16],
}

impl<'c> Texts<'c> {
    /// A text named by its place in the strings array, with the length the
    /// pass measured; its characters are read only if needed.
    fn indexed(&self, index: i32, len: i32, hints: TextHints) -> Option<JsText<'c>> {
        Some(JsText::Indexed {
            cx: self.cx,
            strings: self.strings,
            index: self.index(index)?,
            len: u32::try_from(len).ok()?,
            hints,
        })
    }

    /// `index` when it names one of the strings.
    fn index(&self, index: i32) -> Option<u32> {
        u32::try_from(index).ok().filter(|&i| i < self.count)
    }

    /// The JSON of the string at `index` in the strings array, `len` units
    /// long, made only when it is written.
    fn json_of(&self, index: i32, len: i32) -> Option<JsText<'c>> {
        Some(JsText::JsonOf {
            cx: self.cx,
            strings: self.strings,
            index: self.index(index)?,
            len: u32::try_from(len).ok()?,
        })
    }

    /// An argument's JSON, as the codes `(len, at)` name it: none (`-1,
    /// -1`), `len` short-string units at `*at` (`len, -1`; `*at` moves past
    /// them), the string at index `at` (`len, at`), or the JSON of the
    /// string at index `-2 - at` (`len, at` with `at <= -2`).
    fn json(&self, short_at: &mut usize, len: i32, at: i32) -> Option<Option<JsText<'c>>> {
        Some(match (len, at) {
            (-1, -1) => None,
            (len, -1) => Some(self.short(short_at, len)?),
            (len, at) if at >= 0 => Some(self.indexed(at, len, TextHints::default())?),
            (len, at) => Some(self.json_of(-2 - at, len)?),
        })
    }

    /// The short string of `len` units at `*at`, as a text that refers to
    /// them; `*at` moves past it.
    fn short(&self, at: &mut usize, len: i32) -> Option<JsText<'c>> {
        let start = *at;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        if end > self.shorts.len() {
            return None;
        }
        *at = end;
        Some(JsText::Short {
            units: self.shorts,
            start: u32::try_from(start).ok()?,
            len: u32::try_from(len).ok()?,
        })
    }
}

/// What is done with each block as it is decoded: it is handed over by
/// value, so it is built where it is kept (in a vector, as a rule) rather
/// than moved there through return values (blocks that came back as
/// `Option`s were copied several times; docs/serialization.md).
trait Visit<'c> {
    fn block(&mut self, block: BlockRef<JsText<'c>, FlatArgs<'c>>);
    /// An image (a transcript does not show it; a projection keeps it).
    fn image(&mut self, _mime_type: Option<JsText<'c>>) {}
}

/// A message's blocks in the flat form, decoded once. A malformed code
/// fails the decoding (an internal error).
struct FlatBlocks<'c> {
    texts: Texts<'c>,
    codes: &'c [i32],
    /// Position of the next block's code, and of its first short string.
    at: usize,
    short_at: usize,
    /// Blocks not yet read.
    left: usize,
}

impl<'c> FlatBlocks<'c> {
    fn code(&self, offset: usize) -> Option<i32> {
        self.codes.get(self.at + offset).copied()
    }

    /// The next short string of length `len`.
    fn short(&mut self, len: i32) -> Option<JsText<'c>> {
        self.texts.short(&mut self.short_at, len)
    }

    /// Decodes every block into `visit`; then the next message's codes and
    /// short strings start at `at` and `short_at`.
    fn decode(&mut self, visit: &mut impl Visit<'c>) -> Result<()> {
        while self.left > 0 {
            self.next_block(visit).ok_or_else(malformed)?;
            self.left -= 1;
        }
        Ok(())
    }

    #[inline(always)]
    fn next_block(&mut self, visit: &mut impl Visit<'c>) -> Option<()> {
        match self.code(0)? {
            TEXT => {
                let flags = self.code(3)?;
                let hints = TextHints::told(flags & BLANK != 0, flags & SPLITS_PAIR_AT_CUT != 0);
                let text = self.texts.indexed(self.code(1)?, self.code(2)?, hints)?;
                self.at += 4;
                visit.block(BlockRef::Text(text));
            }
            THINKING => {
                let thinking =
                    (self.texts).indexed(self.code(1)?, self.code(2)?, TextHints::default())?;
                let redacted = self.code(3)? != 0;
                self.at += 4;
                visit.block(BlockRef::Thinking { thinking, redacted });
            }
            TOOL_CALL => {
                let (id_len, name_len) = (self.code(1)?, self.code(2)?);
                let n = usize::try_from(self.code(3)?).ok()?;
                let id = self.short(id_len)?;
                let name = self.short(name_len)?;
                let start = self.at + 4;
                let codes = self
                    .codes
                    .get(start..start.checked_add(n.checked_mul(3)?)?)?;
                let args = FlatArgs {
                    texts: self.texts,
                    codes,
                    short_at: self.short_at,
                };
                // Past the arguments' short strings, checking them once here.
                for arg in codes.chunks_exact(3) {
                    self.short(arg[0])?;
                    self.texts.json(&mut self.short_at, arg[1], arg[2])?;
                }
                self.at = start + codes.len();
                visit.block(BlockRef::ToolCall { id, name, args });
            }
            IMAGE => {
                let len = self.code(1)?;
                let mime_type = if len == -1 {
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
impl<'c> Visit<'c> for Vec<BlockRef<JsText<'c>, FlatArgs<'c>>> {
    fn block(&mut self, block: BlockRef<JsText<'c>, FlatArgs<'c>>) {
        self.push(block);
    }
}

/// Keeps the texts of text blocks, the empty ones too unless `non_empty`.
struct TextBlocks<'v, 'c> {
    out: &'v mut Vec<JsText<'c>>,
    non_empty: bool,
}

impl<'c> Visit<'c> for TextBlocks<'_, 'c> {
    fn block(&mut self, block: BlockRef<JsText<'c>, FlatArgs<'c>>) {
        if let BlockRef::Text(t) = block {
            if !self.non_empty || !t.is_empty() {
                self.out.push(t);
            }
        }
    }
}

/// Builds the model's blocks.
impl<'c> Visit<'c> for Vec<Block<JsText<'c>>> {
    fn block(&mut self, block: BlockRef<JsText<'c>, FlatArgs<'c>>) {
        self.push(match block {
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

    fn image(&mut self, mime_type: Option<JsText<'c>>) {
        self.push(Block::Image {
            mime_type: mime_type.map(|t| t.to_js_str()),
        });
    }
}

/// A tool call's arguments in the flat form (checked by [`FlatBlocks`]):
/// `(key, JSON or none)`.
#[derive(Clone)]
pub struct FlatArgs<'c> {
    texts: Texts<'c>,
    /// Triples: the key's length, then the JSON's length and where it is
    /// (see [`Texts::json`]).
    codes: &'c [i32],
    short_at: usize,
}

impl<'c> Iterator for FlatArgs<'c> {
    type Item = (JsText<'c>, Option<JsText<'c>>);

    fn next(&mut self) -> Option<Self::Item> {
        let (&[key_len, json_len, at], rest) = self.codes.split_first_chunk::<3>()?;
        self.codes = rest;
        let key = self.texts.short(&mut self.short_at, key_len)?;
        let json = self.texts.json(&mut self.short_at, json_len, at)?;
        Some((key, json))
    }
}

/// What the flat writer reuses from one message to the next: a message's
/// blocks, or its texts, each decoded once.
#[derive(Default)]
pub(crate) struct Scratch<'c> {
    blocks: Vec<BlockRef<JsText<'c>, FlatArgs<'c>>>,
    texts: Vec<JsText<'c>>,
}

impl<'c> Flat<'c> {
    /// Reads `[codes, texts, shortUnits, ...]`; codes and units are read
    /// in place ([`typed_array_slice`]).
    pub fn new(cx: &'c Cx, pair: Raw) -> Result<Flat<'c>> {
        let codes = flat_element(cx, pair, 0)?;
        let strings = flat_element(cx, pair, 1)?;
        let shorts = flat_element(cx, pair, 2)?;
        let shorts = typed_array_slice::<u16>(cx, shorts, sys::TypedarrayType::uint16_array)?;
        let codes = typed_array_slice::<i32>(cx, codes, sys::TypedarrayType::int32_array)?;
        let mut count = 0u32;
        check(unsafe { sys::napi_get_array_length(cx.env, strings, &mut count) })
            .map_err(|_| malformed())?;
        Ok(Flat {
            texts: Texts {
                cx,
                strings,
                count,
                shorts,
            },
            codes,
            at: 0,
            short_at: 0,
            timestamps: None,
            index: 0,
        })
    }

    /// [`Flat::new`] for a flat form made with timestamps (`[..., times,
    /// timed]`), which [`Flat::message`] then gives its messages.
    pub fn with_timestamps(cx: &'c Cx, pair: Raw) -> Result<Flat<'c>> {
        let mut flat = Flat::new(cx, pair)?;
        let times = flat_element(cx, pair, 5)?;
        let timed = flat_element(cx, pair, 6)?;
        let times = typed_array_slice::<f64>(cx, times, sys::TypedarrayType::float64_array)?;
        let timed = typed_array_slice::<u8>(cx, timed, sys::TypedarrayType::uint8_array)?;
        if times.len() != timed.len() {
            return Err(malformed());
        }
        flat.timestamps = Some((times, timed));
        Ok(flat)
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

    /// The strings array, which a transcript's recipe names.
    pub fn strings(&self) -> Raw {
        self.texts.strings
    }

    /// The next short string.
    fn short(&mut self) -> Result<JsText<'c>> {
        let len = self.next()?;
        (self.texts)
            .short(&mut self.short_at, len)
            .ok_or_else(malformed)
    }

    /// The next `[string, length]` text.
    fn text(&mut self) -> Result<JsText<'c>> {
        let (index, len) = (self.next()?, self.next()?);
        (self.texts)
            .indexed(index, len, TextHints::default())
            .ok_or_else(malformed)
    }

    /// Decodes the blocks that follow (a count, then the blocks) into
    /// `visit`, and moves past them.
    fn decode_blocks(&mut self, visit: &mut impl Visit<'c>) -> Result<()> {
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
    fn decode_texts(&mut self, out: &mut Vec<JsText<'c>>, non_empty: bool) -> Result<()> {
        out.clear();
        self.decode_blocks(&mut TextBlocks { out, non_empty })
    }

    /// The blocks that follow, as the model's blocks.
    fn model_blocks(&mut self) -> Result<Vec<Block<JsText<'c>>>> {
        let count = self.codes.get(self.at).copied().unwrap_or(0);
        let mut out = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(1024));
        self.decode_blocks(&mut out)?;
        Ok(out)
    }

    /// The next message, or `None` when it converts to nothing. `list` is
    /// the caller's array, for messages to be read natively.
    pub fn message(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
    ) -> Result<Option<Message<JsText<'c>>>> {
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
        Ok(Some(match self.next()? {
            NATIVE => {
                let i = self.count()?;
                if i != index {
                    return Err(malformed());
                }
                return native_message(list, i, limits);
            }
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
    /// message; one the pass left to the native reader is read and written
    /// as before.
    pub(crate) fn write_message<S: Sink<JsText<'c>>>(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
        parts: &mut Parts<'_, S>,
        options: SerializeOptions,
        scratch: &mut Scratch<'c>,
    ) -> Result<()> {
        match self.next()? {
            NATIVE => {
                let i = self.count()?;
                write_native(list, i, limits, parts, options)?;
            }
            USER_TEXT => {
                let text = self.text()?;
                push_user::<JsText<'c>, _, _>(parts, std::iter::once(&text));
            }
            USER_BLOCKS => {
                self.decode_texts(&mut scratch.texts, false)?;
                push_user::<JsText<'c>, _, _>(parts, scratch.texts.iter());
            }
            ASSISTANT => {
                scratch.blocks.clear();
                self.decode_blocks(&mut scratch.blocks)?;
                push_assistant::<JsText<'c>, _, _, _, _>(parts, scratch.blocks.iter(), options);
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
        Ok(())
    }

    /// Every message, for callers that keep them all.
    pub fn messages(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
    ) -> Result<Vec<Message<JsText<'c>>>> {
        // At most one message per element of the caller's array: grown
        // from empty, the vector was moved nine times at 1k messages.
        let len = list.array_len().unwrap_or(0);
        let mut out = Vec::with_capacity(reserve_for(len));
        while !self.is_done() {
            if let Some(m) = self.message(list, limits)? {
                out.push(m);
            }
        }
        Ok(out)
    }
}

/// Where a transcript's messages come from: the flat form, or the caller's
/// array read natively, one message after another.
pub enum MessageSource<'c> {
    Flat(Flat<'c>),
    Native { next: usize, len: usize },
}

impl<'c> MessageSource<'c> {
    pub fn is_done(&self) -> bool {
        match self {
            MessageSource::Flat(flat) => flat.is_done(),
            MessageSource::Native { next, len } => next >= len,
        }
    }

    /// Writes the next message's parts (see [`Flat::write_message`]).
    pub(crate) fn write<S: Sink<JsText<'c>>>(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
        parts: &mut Parts<'_, S>,
        options: SerializeOptions,
        scratch: &mut Scratch<'c>,
    ) -> Result<()> {
        match self {
            MessageSource::Flat(flat) => flat.write_message(list, limits, parts, options, scratch),
            MessageSource::Native { next, .. } => {
                let i = *next;
                *next += 1;
                write_native(list, i, limits, parts, options)
            }
        }
    }
}

/// Message `i` of the caller's array, read natively and written.
fn write_native<'c, S: Sink<JsText<'c>>>(
    list: &JsVal<'c>,
    i: usize,
    limits: ReadLimits,
    parts: &mut Parts<'_, S>,
    options: SerializeOptions,
) -> Result<()> {
    if let Some(m) = native_message(list, i, limits)? {
        push_message(parts, &m, options);
    }
    Ok(())
}

/// Message `i` of the caller's array, read natively.
fn native_message<'c>(
    list: &JsVal<'c>,
    i: usize,
    limits: ReadLimits,
) -> Result<Option<Message<JsText<'c>>>> {
    let message = list.at(i).within_with(|| format!("[{i}]"))?;
    from_agent_message_with(&message, limits).within_with(|| format!("[{i}]"))
}
