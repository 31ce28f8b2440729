//! Texts of the caller's messages read in place ([`JsText`]), and
//! [`RecipeSink`], which writes a transcript as a recipe: which of the
//! caller's strings go where, and the labels between them. index.js follows
//! the recipe and joins the pieces once with `Array.prototype.join`, so each
//! character is copied a single time and none of the caller's texts is read
//! through N-API just to be placed.
//!
//! Borrowed texts are handles in the current call's handle scope: they are
//! read with no temporary scopes ([`TextOf::BORROWS`]) and must not outlive
//! the call.

use std::borrow::Cow;
use std::ptr;

use napi::sys;
use rustc_hash::FxHashMap;

use crate::js::out::{Arg, Raw};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::error::{Error, Result};
use prime_compaction_core::js::json::push_quoted_utf16;
use prime_compaction_core::js::string::{is_high_surrogate, is_low_surrogate, JsStr, Utf16Builder};
use prime_compaction_core::js::view::View;
use prime_compaction_core::transcript::text::{
    is_trim_space, splits_pair_by_units, Sink, Text, TextKey, TextOf,
};

/// What the JS pass told of a text, so that its characters need not be read:
/// whether it is blank (`s.trim() === ""`), and whether a cut at
/// [`TextHints::CUT`] units splits a surrogate pair. One byte, as texts are
/// made and moved by the thousand.
#[derive(Clone, Copy, Default)]
pub struct TextHints(u8);

impl TextHints {
    /// The unit a pair hint is about (a tool result's cut).
    pub const CUT: usize = prime_compaction_core::transcript::serialize::TOOL_RESULT_MAX_CHARS;
    const TOLD: u8 = 1;
    const BLANK: u8 = 2;
    const SPLITS_PAIR_AT_CUT: u8 = 4;

    /// Both told.
    pub fn told(blank: bool, splits_pair_at_cut: bool) -> Self {
        let bit = |b: bool, flag: u8| if b { flag } else { 0 };
        TextHints(
            Self::TOLD
                | bit(blank, Self::BLANK)
                | bit(splits_pair_at_cut, Self::SPLITS_PAIR_AT_CUT),
        )
    }

    fn blank(self) -> Option<bool> {
        (self.0 & Self::TOLD != 0).then_some(self.0 & Self::BLANK != 0)
    }

    /// Whether a cut at `index` splits a pair, if told.
    fn splits_pair_at(self, index: usize) -> Option<bool> {
        (self.0 & Self::TOLD != 0 && index == Self::CUT)
            .then_some(self.0 & Self::SPLITS_PAIR_AT_CUT != 0)
    }
}

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
            // Grown, never cleared: zeroing it for every string cost a
            // tenth of an escape.
            let need = len as usize + 1;
            if read.len() < need {
                read.resize(need, 0);
            }
            // A failed read reads nothing: it fails only with an exception
            // pending, which fails the whole call when it returns.
            let written = string_at(cx, strings, index)
                .and_then(|raw| cx.copy_utf16(raw, &mut read[..need]))
                .unwrap_or(0);
            push_quoted_utf16(&read[..written.min(len as usize)], out);
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

/// Labels up to this long are shared: a transcript repeats a few dozen of
/// them ("\n\n[Assistant]: ") thousands of times. Longer ones hold ids
/// and arguments, and are rarely met twice.
const SHARED_LABEL_MAX: usize = 32;

/// Runs this long (a long tool-call argument's JSON, written here, as a
/// rule) become strings of their own rather than part of a labels string.
const OWN_STRING_MIN: usize = 512;

/// Units per labels string: 64 KB even as UTF-16, under V8's large-object
/// size (128 KB).
const LABELS_CHUNK: usize = 32 * 1024;

/// More strings than a recipe can name (2^31).
fn too_many_strings() -> Error {
    Error::range("messages", "too many strings for one transcript")
}

/// Recipe codes (index.js reads the same numbers): `i >= 0` is
/// `strings[i]`; [`OP_HEAD`] `i, n` is `strings[i].slice(0, n)`; `-2 - k` is
/// label `k`: with `(j, start, end)` the `k`-th triple of `bounds`, units
/// `start..end` of labels string `j`.
use crate::js::codes::recipe::{OP_HEAD, OP_LABEL_BASE};

/// UTF-16 units bound for a JS string (a transcript's labels, say), one
/// byte each while they all fit in one: V8 then copies them as they are,
/// and nothing is narrowed at the end.
pub(crate) enum Labels {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

impl Labels {
    pub(crate) fn new() -> Labels {
        Labels::Latin1(Vec::new())
    }

    /// Units `range` as a JS string.
    pub(crate) fn string(&self, cx: &Cx, range: std::ops::Range<usize>) -> Result<Raw> {
        match self {
            Labels::Latin1(bytes) => cx.latin1(&bytes[range]),
            Labels::Utf16(units) => cx.utf16(&units[range]),
        }
    }

    /// ASCII text, such as JSON punctuation.
    pub(crate) fn push_ascii(&mut self, s: &[u8]) {
        match self {
            Labels::Latin1(bytes) => bytes.extend_from_slice(s),
            Labels::Utf16(units) => units.extend(s.iter().map(|&b| u16::from(b))),
        }
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        match self {
            Labels::Latin1(bytes) => bytes.truncate(len),
            Labels::Utf16(units) => units.truncate(len),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Labels::Latin1(bytes) => bytes.len(),
            Labels::Utf16(units) => units.len(),
        }
    }

    pub(crate) fn extend(&mut self, units: &[u16]) {
        match self {
            // An OR over the run (vector code) tells whether it fits.
            Labels::Latin1(bytes) if units.iter().fold(0u16, |acc, &u| acc | u) < 0x100 => {
                bytes.extend(units.iter().map(|&u| u as u8));
            }
            Labels::Latin1(bytes) => {
                let mut wide: Vec<u16> = bytes.iter().map(|&b| u16::from(b)).collect();
                wide.extend_from_slice(units);
                *self = Labels::Utf16(wide);
            }
            Labels::Utf16(wide) => wide.extend_from_slice(units),
        }
    }
}

/// A transcript being built as a recipe over the call's strings array.
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
    ops: Vec<i32>,
    /// Every label's units, one after another, and where each one lies.
    labels: Labels,
    bounds: Vec<u32>,
    /// Where each labels string starts in `labels`. They are made in pieces
    /// of at most [`LABELS_CHUNK`] units (unless one label is longer),
    /// which V8 allocates in its young generation; one string of all of
    /// them went to its large-object space, on fresh pages, which cost
    /// much of the native time (docs/serialization.md).
    chunk_starts: Vec<usize>,
    shared: FxHashMap<Box<[u16]>, i32>,
    /// The last shared label met of each length, and its op: looked at
    /// before `shared`, as the few labels a transcript repeats ("\n\n[User]:
    /// ", "\n\n[Assistant]: ") mostly differ in length, and a compare costs
    /// less than a hash.
    last_of_len: [Option<(Box<[u16]>, i32)>; SHARED_LABEL_MAX + 1],
    /// Labels and copied text since the last string piece.
    run: Vec<u16>,
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
            ops: Vec::new(),
            labels: Labels::new(),
            bounds: Vec::new(),
            chunk_starts: vec![0],
            shared: FxHashMap::default(),
            last_of_len: std::array::from_fn(|_| None),
            run: Vec::new(),
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

    /// Ends the current label, if any.
    fn close_run(&mut self) {
        if self.run.is_empty() {
            return;
        }
        if self.run.len() >= OWN_STRING_MIN {
            // Made a string at once: copied into the labels, it was
            // copied twice more (into them, then into their string).
            match self.cx.utf16(&self.run) {
                Ok(s) => {
                    if let Some(i) = self.append(s) {
                        self.ops.push(i);
                    }
                }
                Err(e) => self.error = Some(e),
            }
            self.run.clear();
            return;
        }
        let shared = self.run.len() <= SHARED_LABEL_MAX;
        if shared {
            if let Some((units, op)) = &self.last_of_len[self.run.len()] {
                if **units == self.run[..] {
                    self.ops.push(*op);
                    self.run.clear();
                    return;
                }
            }
            if let Some(&op) = self.shared.get(&self.run[..]) {
                self.last_of_len[self.run.len()] = Some((self.run.as_slice().into(), op));
                self.ops.push(op);
                self.run.clear();
                return;
            }
        }
        let k = (self.bounds.len() / 3) as i32;
        let op = OP_LABEL_BASE - k;
        let mut chunk = self.chunk_starts.last().copied().unwrap_or(0);
        if self.labels.len() > chunk && self.labels.len() - chunk + self.run.len() > LABELS_CHUNK {
            chunk = self.labels.len();
            self.chunk_starts.push(chunk);
        }
        let start = self.labels.len() - chunk;
        self.labels.extend(&self.run);
        // Offsets within one chunk: a chunk is one run or a few of at most
        // LABELS_CHUNK units together, and a JS string is under 2^30 units.
        self.bounds.extend([
            (self.chunk_starts.len() - 1) as u32,
            start as u32,
            (self.labels.len() - chunk) as u32,
        ]);
        if shared {
            self.shared.insert(self.run.as_slice().into(), op);
            self.last_of_len[self.run.len()] = Some((self.run.as_slice().into(), op));
        }
        self.ops.push(op);
        self.run.clear();
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

    /// A piece naming string `index`.
    fn piece(&mut self, index: i32) {
        self.close_run();
        self.ops.push(index);
    }

    /// `[ops, bounds, labels, strings]`, the recipe index.js follows.
    pub fn finish(mut self) -> Result<Raw> {
        self.close_run();
        self.push_pending();
        if let Some(e) = self.error {
            return Err(e);
        }
        let cx = self.cx;
        if self.labels.len() > u32::MAX as usize {
            return Err(Error::range("messages", "transcript labels too long"));
        }
        let ops = cx.i32_array(&self.ops)?;
        let bounds = cx.u32_array(&self.bounds)?;
        let ends = self.chunk_starts.iter().skip(1).copied();
        let ranges: Vec<(usize, usize)> = (self.chunk_starts.iter().copied())
            .zip(ends.chain([self.labels.len()]))
            .collect();
        let labels = cx.array(ranges.iter().map(|&(a, b)| self.labels.string(cx, a..b)))?;
        cx.array([Ok(ops), Ok(bounds), Ok(labels), Ok(self.strings)].into_iter())
    }
}

impl<'c> Sink<JsText<'c>> for RecipeSink<'c> {
    fn push_str(&mut self, s: &str) {
        // Labels, ids and names are ASCII as a rule: widen the bytes.
        if s.is_ascii() {
            self.run.extend(s.bytes().map(u16::from));
        } else {
            self.run.extend(s.encode_utf16());
        }
    }

    fn push_text(&mut self, text: &JsText<'c>) {
        if let JsText::Owned(s) = text {
            return s.push_utf16_into(&mut self.run);
        }
        if let Some(units) = text.short_units() {
            return self.run.extend_from_slice(units);
        }
        if let JsText::JsonOf { .. } = text {
            return text.push_json_units(&mut self.read, &mut self.run);
        }
        if let Some(i) = self.index_of(text) {
            self.piece(i);
        }
    }

    fn push_text_prefix(&mut self, text: &JsText<'c>, units: usize) {
        if let JsText::Owned(s) = text {
            let mut b = Utf16Builder::new();
            s.push_prefix_into(units, &mut b);
            return b.finish().push_utf16_into(&mut self.run);
        }
        if let Some(short) = text.short_units() {
            return self.run.extend_from_slice(&short[..units.min(short.len())]);
        }
        if let JsText::JsonOf { .. } = text {
            let json = text.json_units();
            return self.run.extend_from_slice(&json[..units.min(json.len())]);
        }
        if units >= text.utf16_len() {
            return self.push_text(text);
        }
        // Shorter than the text, so within a JS string's length.
        let n = units as i32;
        if let Some(i) = self.index_of(text) {
            self.close_run();
            self.ops.extend([OP_HEAD, i, n]);
        }
    }
}

/// What reading texts in place needs, set up in the call's outermost scope:
/// index.js's argument-entries helper and the string methods.
pub fn use_transcript_helpers(cx: &Cx, argument_entries: &Option<Arg>) -> Result<()> {
    cx.use_argument_entries(argument_entries)?;
    cx.use_string_methods()
}
