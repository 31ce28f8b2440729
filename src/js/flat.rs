//! Transcript messages from `flat-messages.js`: one JIT-compiled pass in JS
//! reads the message objects (a property read there is far cheaper than an
//! N-API read from here) and hands over an `Int32Array` of codes, an array
//! of the texts it met and a `Uint16Array` of the short strings' units (ids,
//! names, arguments) one after another. Both typed arrays are copied for the
//! call, and texts are named by index and stay the caller's strings
//! ([`JsText::Indexed`]; a long string argument of a tool call comes as
//! [`JsText::JsonOf`]). The codes are decoded
//! by the core ([`prime_compaction_core::transcript::flat`], where they are
//! documented, as in `flat-messages.js`); a message the pass does not
//! recognise as a plain user, assistant or tool-result message comes as
//! "read it yourself", and is read from the caller's object here as before,
//! so conversions and errors are this crate's own.

use std::ffi::CStr;
use std::ptr;

use napi::sys;

use crate::js::out::Raw;
use crate::js::text::JsText;
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::error::{Context, Result};
use prime_compaction_core::js::view::View;
use prime_compaction_core::transcript::flat::{malformed, FlatReader, FlatTexts};
use prime_compaction_core::transcript::llm_message::{
    from_agent_message_with, Message, ReadLimits,
};
use prime_compaction_core::transcript::serialize::{push_message, Parts, SerializeOptions};
use prime_compaction_core::transcript::text::{Sink, TextHints};

pub type Scratch<'c> = prime_compaction_core::transcript::flat::Scratch<'c, Texts<'c>>;

/// The flat form of a message list, as flat-messages.js made it.
pub struct Flat<'c> {
    reader: FlatReader<'c, Texts<'c>>,
    /// The strings array, which the texts cut from it refer to.
    strings: Raw,
}

/// A typed array's kind, its elements (`data`, `length`) and its buffer, as
/// N-API tells them; nothing is read from `data`.
pub(crate) struct TypedArrayParts {
    pub kind: sys::napi_typedarray_type,
    pub data: *const std::ffi::c_void,
    pub length: usize,
    pub buffer: Raw,
}

pub(crate) fn typed_array_parts(cx: &Cx, array: Raw) -> Result<TypedArrayParts> {
    let mut kind = 0;
    let mut length = 0usize;
    let mut data = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    let mut offset = 0usize;
    check(unsafe {
        sys::napi_get_typedarray_info(
            cx.env,
            array,
            &mut kind,
            &mut length,
            &mut data,
            &mut buffer,
            &mut offset,
        )
    })?;
    Ok(TypedArrayParts {
        kind,
        data: data.cast_const(),
        length,
        buffer,
    })
}

/// The elements of a typed array one of this package's JS passes made
/// (`T` must match `kind`), copied and kept for the rest of the call.
///
/// Not read in place: JS runs while they are used (the caller's getters,
/// `getEntry`, `JSON.stringify` of arguments), and though the package's own
/// arrays are never handed to anyone, a caller of the binding's exports
/// could pass arrays of its own and detach, resize or write them from such
/// code. A copy is memory the call owns.
pub(crate) fn typed_array_slice<T: Copy + 'static>(
    cx: &Cx,
    array: Raw,
    kind: sys::napi_typedarray_type,
) -> Result<&[T]> {
    let parts = typed_array_parts(cx, array).map_err(|_| malformed())?;
    if parts.kind != kind || (parts.data.is_null() && parts.length > 0) {
        return Err(malformed());
    }
    if parts.length == 0 {
        return Ok(&[]);
    }
    // A typed array of this kind holds `length` aligned elements of `T` at
    // `data`; no JS runs before they are copied here.
    let items: Box<[T]> =
        unsafe { std::slice::from_raw_parts(parts.data.cast::<T>(), parts.length) }.into();
    Ok(cx.keep(items))
}

/// Field `name` of a form JS made for this call (the flat form, the entry
/// path, an entry-facts chunk): named, as the JS that makes it names it.
pub(crate) fn form_field(cx: &Cx, form: Raw, name: &CStr) -> Result<Raw> {
    cx.named_property(form, name)
}

/// Whether a flat form's pass handed over string arguments whose JSON is
/// written here (its `longArguments`; none where not told).
pub fn has_long_arguments(cx: &Cx, form: Raw) -> Result<bool> {
    let count = cx.wrap(form_field(cx, form, c"longArguments")?)?;
    Ok(count.number().is_some_and(|n| n > 0.0))
}

/// What the flat form's texts are made from: the strings array (and its
/// length, read once) and the short-string units.
#[derive(Clone, Copy)]
pub struct Texts<'c> {
    cx: &'c Cx,
    strings: Raw,
    strings_len: u32,
    shorts: &'c [u16],
}

impl<'c> FlatTexts for Texts<'c> {
    type Text = JsText<'c>;

    fn strings_len(&self) -> u32 {
        self.strings_len
    }

    fn shorts_len(&self) -> usize {
        self.shorts.len()
    }

    /// A text named by its place in the strings array, with the length the
    /// pass measured; its characters are read only if needed.
    fn indexed(&self, index: u32, len: u32, hints: TextHints) -> JsText<'c> {
        JsText::Indexed {
            cx: self.cx,
            strings: self.strings,
            index,
            len,
            hints,
        }
    }

    /// Short units as a text that refers to them.
    fn short(&self, start: u32, len: u32) -> JsText<'c> {
        JsText::Short {
            units: self.shorts,
            start,
            len,
        }
    }

    /// The JSON of a string of the strings array, made only when it is
    /// written.
    fn json_of(&self, index: u32, len: u32) -> JsText<'c> {
        JsText::JsonOf {
            cx: self.cx,
            strings: self.strings,
            index,
            len,
        }
    }
}

impl<'c> Flat<'c> {
    /// Reads `{ codes, texts, shorts, ... }`; codes and units are copied
    /// ([`typed_array_slice`]).
    pub fn new(cx: &'c Cx, form: Raw) -> Result<Flat<'c>> {
        let codes = form_field(cx, form, c"codes")?;
        let strings = form_field(cx, form, c"texts")?;
        let shorts = form_field(cx, form, c"shorts")?;
        let shorts = typed_array_slice::<u16>(cx, shorts, sys::TypedarrayType::uint16_array)?;
        let codes = typed_array_slice::<i32>(cx, codes, sys::TypedarrayType::int32_array)?;
        let mut strings_len = 0u32;
        check(unsafe { sys::napi_get_array_length(cx.env, strings, &mut strings_len) })
            .map_err(|_| malformed())?;
        let texts = Texts {
            cx,
            strings,
            strings_len,
            shorts,
        };
        Ok(Flat {
            reader: FlatReader::new(texts, codes),
            strings,
        })
    }

    /// [`Flat::new`] for a flat form made with timestamps (`{ ..., times,
    /// timed }`), which [`Flat::messages`] then gives its messages.
    pub fn with_timestamps(cx: &'c Cx, form: Raw) -> Result<Flat<'c>> {
        let Flat { reader, strings } = Flat::new(cx, form)?;
        let times = form_field(cx, form, c"times")?;
        let timed = form_field(cx, form, c"timed")?;
        let times = typed_array_slice::<f64>(cx, times, sys::TypedarrayType::float64_array)?;
        let timed = typed_array_slice::<u8>(cx, timed, sys::TypedarrayType::uint8_array)?;
        Ok(Flat {
            reader: reader.with_timestamps(times, timed)?,
            strings,
        })
    }

    pub fn is_done(&self) -> bool {
        self.reader.is_done()
    }

    /// The strings array, which a transcript's recipe names.
    pub fn strings(&self) -> Raw {
        self.strings
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
        if let Some(i) = self.reader.write_message(parts, options, scratch)? {
            write_native(list, i, limits, parts, options)?;
        }
        Ok(())
    }

    /// Every message, for callers that keep them all. `list` is the
    /// caller's array, for messages to be read natively.
    pub fn messages(
        &mut self,
        list: &JsVal<'c>,
        limits: ReadLimits,
    ) -> Result<Vec<Message<JsText<'c>>>> {
        let len = list.array_len().unwrap_or(0);
        self.reader
            .messages(len, |i| native_message(list, i, limits))
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
