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

use super::js::{check, Cx, JsVal};
use super::js_text::{JsText, TextHints};
use super::out::Raw;
use crate::core::error::{Context, Error, Result};
use crate::core::jsstr::JsStr;
use crate::core::llm_message::{
    from_agent_message_with, AssistantMessage, Block, Message, ReadLimits, ToolCall,
    ToolResultMessage, UserContent, UserMessage,
};
use crate::core::serialize::TOOL_RESULT_MAX_CHARS;
use crate::core::text::Text;
use crate::core::view::View;

const NATIVE: i32 = 0;
const USER_TEXT: i32 = 1;
const USER_BLOCKS: i32 = 2;
const ASSISTANT: i32 = 3;
const TOOL_RESULT: i32 = 4;
const TEXT: i32 = 5;
const THINKING: i32 = 6;
const TOOL_CALL: i32 = 7;
const IMAGE: i32 = 8;

/// Text-block flags, and the cut `SPLITS_PAIR_AT_CUT` is taken at (the
/// same numbers as in flat-messages.js).
const BLANK: i32 = 1;
const SPLITS_PAIR_AT_CUT: i32 = 2;
const CUT: usize = TOOL_RESULT_MAX_CHARS;

/// The flat form of a message list, as flat-messages.js made it.
pub struct Flat<'c> {
    cx: &'c Cx,
    codes: &'c [i32],
    strings: Raw,
    /// The short strings (ids, names, argument keys and JSON, mime types),
    /// joined in the order the codes name them; the texts cut from them
    /// refer to it.
    shorts: &'c [u16],
    /// Position of the next code, and of the next short string.
    at: usize,
    short_at: usize,
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
fn typed_array_slice<T: Copy>(
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

impl<'c> Flat<'c> {
    /// Reads `[codes, texts, shortUnits, ...]`; codes and units are read
    /// in place ([`typed_array_slice`]).
    pub fn new(cx: &'c Cx, pair: Raw) -> Result<Flat<'c>> {
        let element = |i: u32| -> Result<Raw> {
            let mut out = ptr::null_mut();
            check(unsafe { sys::napi_get_element(cx.env, pair, i, &mut out) })?;
            Ok(out)
        };
        let codes = element(0)?;
        let strings = element(1)?;
        let shorts = typed_array_slice::<u16>(cx, element(2)?, sys::TypedarrayType::uint16_array)?;
        let codes = typed_array_slice::<i32>(cx, codes, sys::TypedarrayType::int32_array)?;
        Ok(Flat {
            cx,
            codes,
            strings,
            shorts,
            at: 0,
            short_at: 0,
        })
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

    fn string_index(&mut self) -> Result<u32> {
        u32::try_from(self.next()?).map_err(|_| malformed())
    }

    /// A text named by its place in the strings array, with the length the
    /// pass measured; its characters are read only if needed.
    fn text(&mut self) -> Result<JsText<'c>> {
        let (index, len) = (self.string_index()?, self.count()?);
        Ok(self.indexed(index, len, TextHints::default()))
    }

    /// A text block's text: the pass also tells whether it is blank and
    /// whether a cut at [`CUT`] would split a surrogate pair.
    fn block_text(&mut self) -> Result<JsText<'c>> {
        let (index, len) = (self.string_index()?, self.count()?);
        let flags = self.next()?;
        let hints = TextHints {
            blank: Some(flags & BLANK != 0),
            pair_at: Some((CUT, flags & SPLITS_PAIR_AT_CUT != 0)),
        };
        Ok(self.indexed(index, len, hints))
    }

    fn indexed(&self, index: u32, len: usize, hints: TextHints) -> JsText<'c> {
        JsText::Indexed {
            cx: self.cx,
            strings: self.strings,
            index,
            len,
            hints,
        }
    }

    /// The strings array, which a transcript's recipe names.
    pub fn strings(&self) -> Raw {
        self.strings
    }

    /// The next short string, as a text that refers to its units.
    fn short(&mut self) -> Result<JsText<'c>> {
        let (start, len) = (self.short_at, self.count()?);
        let end = start.checked_add(len).ok_or_else(malformed)?;
        if end > self.shorts.len() {
            return Err(malformed());
        }
        self.short_at = end;
        Ok(JsText::Short {
            units: self.shorts,
            start,
            len,
        })
    }

    /// Whether the next code is -1 (no short string there), which it skips.
    fn absent(&mut self) -> bool {
        let absent = self.codes.get(self.at) == Some(&-1);
        if absent {
            self.at += 1;
        }
        absent
    }

    /// The next short string or none, as a text.
    fn optional_short(&mut self) -> Result<Option<JsText<'c>>> {
        if self.absent() {
            return Ok(None);
        }
        self.short().map(Some)
    }

    /// The next short string or none, as an owned string (mime types).
    fn optional_js_str(&mut self) -> Result<Option<JsStr>> {
        Ok(self.optional_short()?.map(|t| t.to_js_str()))
    }

    fn blocks(&mut self) -> Result<Vec<Block<JsText<'c>>>> {
        let count = self.count()?;
        let mut out = Vec::with_capacity(count.min(1024));
        for _ in 0..count {
            out.push(match self.next()? {
                TEXT => Block::Text(self.block_text()?),
                THINKING => Block::Thinking {
                    thinking: self.text()?,
                    redacted: self.next()? != 0,
                },
                TOOL_CALL => {
                    let id = self.short()?;
                    let name = self.short()?;
                    let n = self.count()?;
                    let mut args = Vec::with_capacity(n.min(1024));
                    for _ in 0..n {
                        args.push((self.short()?, self.optional_short()?));
                    }
                    Block::ToolCall(ToolCall { id, name, args })
                }
                IMAGE => Block::Image {
                    mime_type: self.optional_js_str()?,
                },
                _ => return Err(malformed()),
            });
        }
        Ok(out)
    }

    /// The next message, or `None` when it converts to nothing. `list` is
    /// the caller's array, for messages to be read natively.
    pub fn message(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
    ) -> Result<Option<Message<JsText<'c>>>> {
        Ok(Some(match self.next()? {
            NATIVE => {
                let i = self.count()?;
                return native_message(list, i, limits);
            }
            USER_TEXT => Message::User(UserMessage {
                content: UserContent::Text(self.text()?),
                timestamp: None,
            }),
            USER_BLOCKS => Message::User(UserMessage {
                content: UserContent::Blocks(self.blocks()?),
                timestamp: None,
            }),
            ASSISTANT => Message::Assistant(AssistantMessage {
                content: self.blocks()?,
                timestamp: None,
            }),
            TOOL_RESULT => Message::ToolResult(ToolResultMessage {
                tool_call_id: self.short()?,
                tool_name: self.short()?,
                is_error: self.next()? != 0,
                content: self.blocks()?,
                elided_units: 0,
                timestamp: None,
            }),
            _ => return Err(malformed()),
        }))
    }

    /// Every message, for callers that keep them all.
    pub fn messages(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
    ) -> Result<Vec<Message<JsText<'c>>>> {
        let mut out = Vec::new();
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

    /// The next message, or `None` when it converts to nothing.
    pub fn next(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
    ) -> Result<Option<Message<JsText<'c>>>> {
        match self {
            MessageSource::Flat(flat) => flat.message(list, limits),
            MessageSource::Native { next, .. } => {
                let i = *next;
                *next += 1;
                native_message(list, i, limits)
            }
        }
    }
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
