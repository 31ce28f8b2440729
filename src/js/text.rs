//! Texts of the caller's messages read in place ([`JsText`]), and
//! [`RecipeSink`], which writes a transcript as a recipe
//! ([`prime_compaction_core::transcript::recipe`]): which of the
//! caller's strings go where, and the labels between them.
//! `assembleTranscript` (flat-messages.js) follows the recipe and joins the
//! pieces once with `Array.prototype.join`, so each
//! character is copied a single time and none of the caller's texts is read
//! through N-API just to be placed.
//!
//! Borrowed texts are handles in the current call's handle scope: they are
//! read with no temporary scopes ([`TextOf::BORROWS`]) and must not outlive
//! the call.

use std::borrow::Cow;
use std::ptr;

use napi::sys;

use crate::js::out::{Arg, Raw};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::error::{Error, Result};
use prime_compaction_core::js::json::push_quoted_utf16;
use prime_compaction_core::js::string::{
    is_high_surrogate, is_low_surrogate, push_str_utf16, JsStr, Utf16Builder,
};
use prime_compaction_core::js::view::View;
use prime_compaction_core::prefault::Prefault;
use prime_compaction_core::transcript::recipe::{Labels, Recipe};
use prime_compaction_core::transcript::text::{
    is_trim_space, splits_pair_by_units, Sink, Text, TextHints, TextKey, TextOf, TextSize,
};

/// A JS string read in place, or text made here.
#[derive(Clone)]
pub enum JsText<'c> {
    Js {
        cx: &'c Cx,
        raw: Raw,
        /// UTF-16 length (a JS string has fewer than 2^30 units).
        len: u32,
    },
    /// Element `index` of a strings array of this call (flat-messages.js
    /// made it), fetched only if its characters are needed: placing it in a
    /// transcript needs only the index.
    Indexed {
        cx: &'c Cx,
        strings: Raw,
        index: u32,
        /// UTF-16 length, as the JS pass measured it.
        len: u32,
        hints: TextHints,
    },
    /// `JSON.stringify` of element `index` of a strings array of this call
    /// (a tool-call argument that is a long string, `len` units long),
    /// written here when it is placed: escaping it here costs less than V8's
    /// `JSON.stringify` in the JS pass.
    JsonOf {
        cx: &'c Cx,
        strings: Raw,
        index: u32,
        len: u32,
    },
    /// A short string of the flat form (an id, a name, an argument): units
    /// `start..start + len` of the flat form's short-string units.
    Short {
        units: &'c [u16],
        start: u32,
        len: u32,
    },
    Owned(JsStr),
}

impl<'c> JsText<'c> {
    /// The units of a short string; `None` for any other text.
    pub fn short_units(&self) -> Option<&[u16]> {
        match self {
            JsText::Short { units, start, len } => {
                units.get(*start as usize..(*start as usize + *len as usize))
            }
            _ => None,
        }
    }

    /// The JS string and its length; `None` for text made here.
    fn js(&self) -> Option<(&'c Cx, Raw, usize)> {
        match *self {
            JsText::Js { cx, raw, len } => Some((cx, raw, len as usize)),
            JsText::Indexed {
                cx,
                strings,
                index,
                len,
                ..
            } => {
                // The read fails only with an exception pending, which fails
                // the whole call when it returns.
                let raw = string_at(cx, strings, index).ok()?;
                Some((cx, raw, len as usize))
            }
            JsText::JsonOf { .. } | JsText::Short { .. } | JsText::Owned(_) => None,
        }
    }

    /// The text as a JS string: the caller's own where it is one.
    pub fn to_js_value(&self, cx: &Cx) -> Result<Raw> {
        match self {
            JsText::Js { raw, .. } => Ok(*raw),
            JsText::Indexed { strings, index, .. } => string_at(cx, *strings, *index),
            JsText::JsonOf { .. } => cx.utf16(&self.json_units()),
            JsText::Short { .. } => cx.utf16(self.short_units().unwrap_or_default()),
            JsText::Owned(s) => cx.js_str(s),
        }
    }

    /// For [`JsText::JsonOf`], the index of the string whose JSON it is.
    pub fn json_of_index(&self) -> Option<u32> {
        match self {
            JsText::JsonOf { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// Appends the JSON of a [`JsText::JsonOf`] text to `out`, reading its
    /// string's units into `read` first; nothing for other texts.
    fn push_json_units(&self, read: &mut Vec<u16>, out: &mut Vec<u16>) {
        if let JsText::JsonOf {
            cx,
            strings,
            index,
            len,
        } = *self
        {
            // A failed read reads nothing: it fails only with an exception
            // pending, which fails the whole call when it returns.
            let Ok(raw) = string_at(cx, strings, index) else {
                push_quoted_utf16(&[], out);
                return;
            };
            let mut len = len as usize;
            // Grown, never cleared: zeroing it for every string cost a
            // tenth of an escape. Grown only as far as the string goes
            // (the form's length is trusted no further).
            if read.len() <= len {
                len = len.min(cx.string_len(raw).unwrap_or(0));
                if read.len() <= len {
                    read.resize(len + 1, 0);
                }
            }
            let written = cx.copy_utf16(raw, &mut read[..len + 1]).unwrap_or(0);
            push_quoted_utf16(&read[..written.min(len)], out);
        }
    }

    /// The units of a [`JsText::JsonOf`] text, made whole (for the rare
    /// reader that needs more than to place it).
    fn json_units(&self) -> Vec<u16> {
        let mut out = Vec::new();
        self.push_json_units(&mut Vec::new(), &mut out);
        out
    }
}

/// Element `index` of a strings array of this call (one flat-messages.js
/// made, holding a string there).
fn string_at(cx: &Cx, strings: Raw, index: u32) -> Result<Raw> {
    let mut raw = ptr::null_mut();
    check(unsafe { sys::napi_get_element(cx.env, strings, index, &mut raw) })?;
    if raw.is_null() {
        return Err(Error::invalid(
            "prime-compaction internal error: no string in the strings array",
        ));
    }
    Ok(raw)
}

/// Appends the first `n` units of a JS string (fewer if it is shorter).
fn copy_prefix(cx: &Cx, raw: Raw, n: usize, out: &mut Vec<u16>) {
    let start = out.len();
    out.resize(start + n.saturating_add(1), 0);
    // A failed read adds nothing: the string was checked when first read.
    let written = cx.copy_utf16(raw, &mut out[start..]).unwrap_or(0);
    out.truncate(start + written);
}

/// The first `n` units of a JS string (fewer if it is shorter).
fn read_prefix(cx: &Cx, raw: Raw, n: usize) -> Vec<u16> {
    let mut buf = Vec::new();
    copy_prefix(cx, raw, n, &mut buf);
    buf
}

/// Units read to decide blankness before reading the whole string.
const BLANK_PROBE: usize = 256;

impl Text for JsText<'_> {
    fn owned(s: JsStr) -> Self {
        JsText::Owned(s)
    }

    fn utf16_len(&self) -> usize {
        match self {
            JsText::Js { len, .. } | JsText::Indexed { len, .. } | JsText::Short { len, .. } => {
                *len as usize
            }
            JsText::JsonOf { .. } => self.json_units().len(),
            JsText::Owned(s) => s.utf16_len(),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            // At least its quotes.
            JsText::JsonOf { .. } => false,
            _ => self.utf16_len() == 0,
        }
    }

    fn is_blank(&self) -> bool {
        if let Some(units) = self.short_units() {
            return units.iter().copied().all(is_trim_space);
        }
        match self {
            JsText::Owned(s) => return Text::is_blank(s),
            JsText::JsonOf { .. } => return false,
            JsText::Indexed { hints, .. } => {
                if let Some(blank) = hints.blank() {
                    return blank;
                }
            }
            _ => {}
        }
        let Some((cx, raw, len)) = self.js() else {
            return self.utf16_len() == 0;
        };
        let probe = read_prefix(cx, raw, BLANK_PROBE.min(len));
        if !probe.iter().copied().all(is_trim_space) {
            return false;
        }
        len <= probe.len() || read_prefix(cx, raw, len).into_iter().all(is_trim_space)
    }

    fn code_unit_at(&self, index: usize) -> Option<u16> {
        if let JsText::Owned(s) = self {
            return s.code_unit_at(index);
        }
        if let JsText::JsonOf { .. } = self {
            return self.json_units().get(index).copied();
        }
        if let Some(units) = self.short_units() {
            return units.get(index).copied();
        }
        let (cx, raw, len) = self.js()?;
        if index >= len {
            return None;
        }
        read_prefix(cx, raw, index + 1).get(index).copied()
    }

    fn splits_pair_at(&self, index: usize) -> bool {
        match self {
            JsText::Owned(s) => return s.splits_pair_at(index),
            JsText::Indexed { hints, .. } => {
                if let Some(splits) = hints.splits_pair_at(index) {
                    return splits;
                }
            }
            JsText::Short { .. } => return splits_pair_by_units(self, index),
            JsText::JsonOf { .. } => {
                let units = self.json_units();
                return index > 0
                    && units.get(index - 1).copied().is_some_and(is_high_surrogate)
                    && units.get(index).copied().is_some_and(is_low_surrogate);
            }
            _ => {}
        }
        let Some((cx, raw, len)) = self.js() else {
            return false;
        };
        if index == 0 || index >= len {
            return false;
        }
        match cx.code_point_at(raw, index - 1) {
            // A code point above the BMP starts there: a pair.
            Some(cp) => cp > 65535.0,
            None => {
                let units = read_prefix(cx, raw, index + 1);
                units.len() == index + 1
                    && is_high_surrogate(units[index - 1])
                    && is_low_surrogate(units[index])
            }
        }
    }

    fn push_prefix_into(&self, units: usize, out: &mut Utf16Builder) {
        if let JsText::Owned(s) = self {
            return s.push_prefix_into(units, out);
        }
        if let Some(short) = self.short_units() {
            return out.push_units(&short[..units.min(short.len())]);
        }
        if let JsText::JsonOf { .. } = self {
            let json = self.json_units();
            return out.push_units(&json[..units.min(json.len())]);
        }
        if let Some((cx, raw, len)) = self.js() {
            out.push_units(&read_prefix(cx, raw, units.min(len)));
        }
    }

    fn to_js_str(&self) -> JsStr {
        match (self, self.short_units()) {
            (JsText::Owned(s), _) => s.clone(),
            // Whole, with the ASCII fast path (ids are looked up by this).
            (_, Some(units)) => JsStr::from_utf16(units),
            _ => {
                let mut out = Utf16Builder::new();
                self.push_into(&mut out);
                out.finish()
            }
        }
    }

    fn as_key(&self) -> TextKey<'_> {
        match (self, self.short_units()) {
            (JsText::Owned(s), _) => TextKey::Str(Cow::Borrowed(s)),
            (_, Some(units)) => TextKey::Units(units),
            _ => TextKey::Str(Cow::Owned(self.to_js_str())),
        }
    }

    fn transcript_size(&self) -> TextSize {
        match self {
            JsText::Js { len, .. } | JsText::Indexed { len, .. } => {
                TextSize::Callers(*len as usize)
            }
            JsText::JsonOf { len, .. } => TextSize::Written(*len as usize + 2),
            JsText::Short { len, .. } => TextSize::Written(*len as usize),
            JsText::Owned(s) => TextSize::Written(s.utf16_len()),
        }
    }
}

impl<'c> TextOf<JsVal<'c>> for JsText<'c> {
    const BORROWS: bool = true;

    fn text_of(value: &JsVal<'c>) -> Option<Self> {
        let len = u32::try_from(value.str_len()?).ok()?;
        Some(JsText::Js {
            cx: value.cx,
            raw: value.raw,
            len,
        })
    }
}

/// Strings handed to `strings.push` per call: one call instead of one
/// `napi_set_element` per string (each a trip through V8's runtime), and
/// few enough arguments for any stack.
const PUSH_BATCH: usize = 4096;

/// More strings than a recipe can name (2^31).
fn too_many_strings() -> Error {
    Error::range("messages", "too many strings for one transcript")
}

/// Units `range` of `labels` as a JS string.
pub(crate) fn labels_string(
    cx: &Cx,
    labels: &Labels,
    range: std::ops::Range<usize>,
) -> Result<Raw> {
    match labels {
        Labels::Latin1(bytes) => cx.latin1(&bytes[range]),
        Labels::Utf16(units) => cx.utf16(&units[range]),
    }
}

/// A transcript being built as a recipe ([`Recipe`]) over the call's
/// strings array.
pub struct RecipeSink<'c> {
    cx: &'c Cx,
    /// The strings the recipe names: flat-messages.js's array, or one made
    /// here; texts read natively are appended to it.
    strings: Raw,
    /// `strings.push`.
    push: Raw,
    /// Index the next appended string gets.
    next_index: u32,
    /// Strings not yet in `strings`: handles of the current handle scope,
    /// so [`RecipeSink::flush`] must run before that scope closes.
    pending: Vec<Raw>,
    recipe: Recipe,
    /// The units of a string whose JSON is being written, read here first.
    read: Vec<u16>,
    /// The first failure; later writes are skipped and `finish` reports it.
    error: Option<Error>,
}

impl<'c> RecipeSink<'c> {
    /// A sink naming `strings` (an array of this call's own making), or a
    /// new array when there is none.
    pub fn new(cx: &'c Cx, strings: Option<Raw>) -> Result<Self> {
        let strings = match strings {
            Some(s) => s,
            None => {
                let mut a = ptr::null_mut();
                check(unsafe { sys::napi_create_array(cx.env, &mut a) })?;
                a
            }
        };
        let mut next_index = 0u32;
        check(unsafe { sys::napi_get_array_length(cx.env, strings, &mut next_index) })?;
        let mut push = ptr::null_mut();
        check(unsafe {
            sys::napi_get_named_property(cx.env, strings, c"push".as_ptr(), &mut push)
        })?;
        Ok(RecipeSink {
            cx,
            strings,
            push,
            next_index,
            pending: Vec::new(),
            recipe: Recipe::new(),
            read: Vec::new(),
            error: None,
        })
    }

    /// The recipe index of a JS string handle: appended to `strings`.
    fn append(&mut self, s: Raw) -> Option<i32> {
        if self.error.is_some() {
            return None;
        }
        let Ok(index) = i32::try_from(self.next_index) else {
            self.error = Some(too_many_strings());
            return None;
        };
        self.pending.push(s);
        self.next_index += 1;
        if self.pending.len() >= PUSH_BATCH {
            self.push_pending();
        }
        Some(index)
    }

    /// Moves the pending strings into `strings`.
    fn push_pending(&mut self) {
        if self.pending.is_empty() || self.error.is_some() {
            self.pending.clear();
            return;
        }
        let mut out = ptr::null_mut();
        let status = unsafe {
            sys::napi_call_function(
                self.cx.env,
                self.strings,
                self.push,
                self.pending.len(),
                self.pending.as_ptr(),
                &mut out,
            )
        };
        if let Err(e) = check(status) {
            self.error = Some(e);
        }
        self.pending.clear();
    }

    /// Hands every string appended so far to the strings array, so the
    /// handle scope they were read in may close.
    pub fn flush(&mut self) {
        self.push_pending();
    }

    /// Ends the label being written as a string of its own when it is long
    /// ([`Recipe::long_run`]); due before each piece and at the end.
    fn close_long_run(&mut self) {
        let cx = self.cx;
        let Some(made) = self.recipe.long_run().map(|units| cx.utf16(units)) else {
            return;
        };
        let index = match made {
            Ok(s) => self.append(s),
            Err(e) => {
                self.error = Some(e);
                None
            }
        };
        self.recipe.end_run_as(index);
    }

    /// A piece naming string `index`.
    fn piece(&mut self, index: i32) {
        self.close_long_run();
        self.recipe.piece(index);
    }

    /// The recipe index of a JS text (appended to `strings` when read
    /// natively); `None` for text made here, or after a failure.
    fn index_of(&mut self, text: &JsText<'_>) -> Option<i32> {
        match text {
            JsText::Indexed { index, .. } => {
                let i = i32::try_from(*index).ok();
                if i.is_none() {
                    self.error = Some(too_many_strings());
                }
                i
            }
            JsText::Js { raw, .. } => self.append(*raw),
            JsText::JsonOf { .. } | JsText::Short { .. } | JsText::Owned(_) => None,
        }
    }

    /// `{ ops, bounds, labels, strings }`, the recipe flat-messages.js follows.
    pub fn finish(mut self) -> Result<Raw> {
        self.close_long_run();
        self.push_pending();
        if let Some(e) = self.error {
            return Err(e);
        }
        let cx = self.cx;
        let parts = self.recipe.finish()?;
        let ops = cx.i32_array(&parts.ops)?;
        let bounds = cx.u32_array(&parts.bounds)?;
        let labels =
            cx.array((parts.ranges.iter()).map(|&(a, b)| labels_string(cx, &parts.labels, a..b)))?;
        cx.record(&[
            (c"ops", ops),
            (c"bounds", bounds),
            (c"labels", labels),
            (c"strings", self.strings),
        ])
    }
}

impl<'c> Sink<JsText<'c>> for RecipeSink<'c> {
    fn push_str(&mut self, s: &str) {
        self.recipe.push_str(s);
    }

    fn push_text(&mut self, text: &JsText<'c>) {
        if let JsText::Owned(s) = text {
            return self.recipe.push_js_str(s);
        }
        if let Some(units) = text.short_units() {
            return self.recipe.push_units(units);
        }
        if let JsText::JsonOf { .. } = text {
            return text.push_json_units(&mut self.read, self.recipe.run_mut());
        }
        if let Some(i) = self.index_of(text) {
            self.piece(i);
        }
    }

    fn push_text_prefix(&mut self, text: &JsText<'c>, units: usize) {
        if let JsText::Owned(s) = text {
            let mut b = Utf16Builder::new();
            s.push_prefix_into(units, &mut b);
            return self.recipe.push_js_str(&b.finish());
        }
        if let Some(short) = text.short_units() {
            return self.recipe.push_units(&short[..units.min(short.len())]);
        }
        if let JsText::JsonOf { .. } = text {
            let json = text.json_units();
            return self.recipe.push_units(&json[..units.min(json.len())]);
        }
        if units >= text.utf16_len() {
            return self.push_text(text);
        }
        // Shorter than the text, so within a JS string's length.
        let n = units as i32;
        if let Some(i) = self.index_of(text) {
            self.close_long_run();
            self.recipe.head(i, n);
        }
    }
}

/// A transcript written whole here, every text copied into one buffer,
/// and returned as one JS string
/// ([`prime_compaction_core::transcript::output_form`] says when).
pub struct StringSink<'c> {
    cx: &'c Cx,
    /// `out`'s pages faulted in ahead of the writes (prefault.rs in the
    /// core); declared before `out`, so it is stopped before `out` is freed,
    /// and stopped before a write that could outgrow `out`'s room (grown,
    /// `out` moves, and is no longer the range the helper names).
    prefault: Prefault,
    out: Vec<u16>,
    /// The units of a string whose JSON is being written, read here first.
    read: Vec<u16>,
}

impl<'c> StringSink<'c> {
    /// With room for `units` units, of which at least `sure` will be
    /// written; `None` where the allocator refuses them (the transcript
    /// then goes back as a recipe).
    pub fn with_capacity(cx: &'c Cx, units: usize, sure: usize) -> Option<Self> {
        let mut out = Vec::new();
        out.try_reserve_exact(units).ok()?;
        let prefault = Prefault::start(&mut out, sure);
        Some(StringSink {
            cx,
            prefault,
            out,
            read: Vec::new(),
        })
    }

    /// The transcript, as a JS string.
    pub fn finish(self) -> Result<Raw> {
        let StringSink {
            cx, out, prefault, ..
        } = self;
        drop(prefault);
        cx.utf16(&out)
    }
}

impl StringSink<'_> {
    /// Stops the helper before a write of at most `units` units that does
    /// not fit in `out`'s room.
    fn before_write(&mut self, units: usize) {
        if self.out.len().saturating_add(units) > self.out.capacity() {
            self.prefault = Prefault::default();
        }
    }
}

impl<'c> Sink<JsText<'c>> for StringSink<'c> {
    fn push_str(&mut self, s: &str) {
        // A str has no more UTF-16 units than UTF-8 bytes.
        self.before_write(s.len());
        push_str_utf16(s, &mut self.out);
    }

    fn push_text(&mut self, text: &JsText<'c>) {
        self.push_text_prefix(text, usize::MAX);
    }

    fn push_text_prefix(&mut self, text: &JsText<'c>, units: usize) {
        // At most what this write adds: a prefix of an owned text reserves
        // room by the text's UTF-8 (or WTF-8) bytes, no fewer than its
        // units; JSON is written whole before it is cut, at most six units
        // a unit and two quotes; a JS string is copied with room for one
        // unit more.
        self.before_write(match *text {
            JsText::Owned(ref s) => s.stored_len(),
            JsText::JsonOf { len, .. } => (len as usize).saturating_mul(6).saturating_add(2),
            JsText::Short { len, .. } | JsText::Js { len, .. } | JsText::Indexed { len, .. } => {
                (len as usize).min(units).saturating_add(1)
            }
        });
        match text {
            JsText::Owned(s) if units >= s.utf16_len() => s.push_utf16_into(&mut self.out),
            JsText::Owned(s) => s
                .slice_utf16(0, Some(units as i64))
                .push_utf16_into(&mut self.out),
            JsText::Short { .. } => {
                let short = text.short_units().unwrap_or_default();
                self.out.extend_from_slice(&short[..units.min(short.len())]);
            }
            JsText::JsonOf { .. } => {
                let start = self.out.len();
                text.push_json_units(&mut self.read, &mut self.out);
                self.out.truncate(start.saturating_add(units));
            }
            JsText::Js { .. } | JsText::Indexed { .. } => {
                if let Some((cx, raw, len)) = text.js() {
                    copy_prefix(cx, raw, units.min(len), &mut self.out);
                }
            }
        }
    }
}

/// What reading texts in place needs, set up in the call's outermost scope:
/// lib/api.js's argument-entries helper and the string methods.
pub fn use_transcript_helpers(cx: &Cx, argument_entries: &Option<Arg>) -> Result<()> {
    cx.use_argument_entries(argument_entries)?;
    cx.use_string_methods()
}
