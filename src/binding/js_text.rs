//! Transcripts without copying the caller's text: [`JsText`] refers to a JS
//! string in place, and [`PieceSink`] collects the transcript as pieces (the
//! caller's strings themselves, plus the labels between them) that V8 joins
//! once with `Array.prototype.join`, copying each character a single time.
//!
//! Borrowed texts are handles in the current call's handle scope: they are
//! read with no temporary scopes ([`TextOf::BORROWS`]) and must not outlive
//! the call.

use std::ptr;

use napi::sys;

use super::js::{check, Cx, JsVal};
use super::out::Raw;
use crate::core::error::{Error, Result};
use crate::core::jsstr::{is_high_surrogate, is_low_surrogate, JsStr, Utf16Builder};
use crate::core::text::{is_trim_space, Sink, Text, TextOf};
use crate::core::view::View;

/// A JS string read in place, or text made here.
#[derive(Clone)]
pub enum JsText<'c> {
    Js {
        cx: &'c Cx,
        raw: Raw,
        /// UTF-16 length.
        len: usize,
    },
    Owned(JsStr),
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
            JsText::Js { len, .. } => *len,
            JsText::Owned(s) => s.utf16_len(),
        }
    }

    fn is_blank(&self) -> bool {
        match self {
            JsText::Js { cx, raw, len } => {
                let probe = read_prefix(cx, *raw, BLANK_PROBE.min(*len));
                if !probe.iter().copied().all(is_trim_space) {
                    return false;
                }
                *len <= probe.len() || read_prefix(cx, *raw, *len).into_iter().all(is_trim_space)
            }
            JsText::Owned(s) => Text::is_blank(s),
        }
    }

    fn code_unit_at(&self, index: usize) -> Option<u16> {
        match self {
            JsText::Js { cx, raw, len } => {
                if index >= *len {
                    return None;
                }
                read_prefix(cx, *raw, index + 1).get(index).copied()
            }
            JsText::Owned(s) => s.code_unit_at(index),
        }
    }

    fn splits_pair_at(&self, index: usize) -> bool {
        match self {
            JsText::Js { cx, raw, len } => {
                if index == 0 || index >= *len {
                    return false;
                }
                match cx.code_point_at(*raw, index - 1) {
                    // A code point above the BMP starts there: a pair.
                    Some(cp) => cp > 65535.0,
                    None => {
                        let units = read_prefix(cx, *raw, index + 1);
                        units.len() == index + 1
                            && is_high_surrogate(units[index - 1])
                            && is_low_surrogate(units[index])
                    }
                }
            }
            JsText::Owned(s) => s.splits_pair_at(index),
        }
    }

    fn push_prefix_into(&self, units: usize, out: &mut Utf16Builder) {
        match self {
            JsText::Js { cx, raw, len } => out.push_units(&read_prefix(cx, *raw, units.min(*len))),
            JsText::Owned(s) => s.push_prefix_into(units, out),
        }
    }
}

impl<'c> TextOf<JsVal<'c>> for JsText<'c> {
    const BORROWS: bool = true;

    fn text_of(value: &JsVal<'c>) -> Option<Self> {
        let len = value.str_len()?;
        Some(JsText::Js {
            cx: value.cx,
            raw: value.raw,
            len,
        })
    }
}

/// Texts this short are copied into the label run around them rather than
/// kept as pieces of their own: the same one N-API call, one element fewer.
const COPY_BELOW: usize = 48;

/// Pieces handed to `pieces.push` per call: one call instead of one
/// `napi_set_element` per piece (each a trip through V8's runtime), and few
/// enough arguments for any stack.
const PUSH_BATCH: usize = 4096;

/// A transcript being built as JS string pieces.
pub struct PieceSink<'c> {
    cx: &'c Cx,
    pieces: Raw,
    /// `pieces.push`.
    push: Raw,
    /// Pieces not yet in `pieces`: handles of the current handle scope, so
    /// [`PieceSink::flush`] must run before that scope closes.
    pending: Vec<Raw>,
    count: u32,
    /// Labels and copied text since the last borrowed piece.
    run: Vec<u16>,
    /// The first failure; later writes are skipped and `finish` reports it.
    error: Option<Error>,
}

impl<'c> PieceSink<'c> {
    pub fn new(cx: &'c Cx) -> Result<Self> {
        let mut pieces = ptr::null_mut();
        check(unsafe { sys::napi_create_array(cx.env, &mut pieces) })?;
        let mut push = ptr::null_mut();
        check(unsafe {
            sys::napi_get_named_property(cx.env, pieces, c"push".as_ptr(), &mut push)
        })?;
        Ok(PieceSink {
            cx,
            pieces,
            push,
            pending: Vec::new(),
            count: 0,
            run: Vec::new(),
            error: None,
        })
    }

    fn append(&mut self, piece: Raw) {
        if self.error.is_some() {
            return;
        }
        self.pending.push(piece);
        self.count += 1;
        if self.pending.len() >= PUSH_BATCH {
            self.push_pending();
        }
    }

    /// Moves the pending pieces into `pieces`.
    fn push_pending(&mut self) {
        if self.pending.is_empty() || self.error.is_some() {
            self.pending.clear();
            return;
        }
        let mut out = ptr::null_mut();
        let status = unsafe {
            sys::napi_call_function(
                self.cx.env,
                self.pieces,
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

    /// Hands every piece made so far to the pieces array, so the handle
    /// scope they were made in may close. Text not yet made into a piece
    /// stays here.
    pub fn flush(&mut self) {
        self.push_pending();
    }

    fn flush_run(&mut self) {
        if self.run.is_empty() || self.error.is_some() {
            return;
        }
        match self.cx.utf16(&self.run) {
            Ok(s) => self.append(s),
            Err(e) => self.error = Some(e),
        }
        self.run.clear();
    }

    /// The transcript as one JS string.
    pub fn finish(mut self) -> Result<Raw> {
        self.flush_run();
        if self.count == 1 && self.error.is_none() {
            if let Some(&only) = self.pending.first() {
                return Ok(only);
            }
        }
        self.push_pending();
        if let Some(e) = self.error {
            return Err(e);
        }
        let cx = self.cx;
        let mut out = ptr::null_mut();
        match self.count {
            0 => return cx.utf16(&[]),
            1 => check(unsafe { sys::napi_get_element(cx.env, self.pieces, 0, &mut out) })?,
            _ => {
                let mut join = ptr::null_mut();
                check(unsafe {
                    sys::napi_get_named_property(cx.env, self.pieces, c"join".as_ptr(), &mut join)
                })?;
                let argv = [cx.utf16(&[])?];
                check(unsafe {
                    sys::napi_call_function(cx.env, self.pieces, join, 1, argv.as_ptr(), &mut out)
                })?;
            }
        }
        Ok(out)
    }
}

impl<'c> Sink<JsText<'c>> for PieceSink<'c> {
    fn push_str(&mut self, s: &str) {
        // Labels, ids and names are ASCII as a rule: widen the bytes.
        if s.is_ascii() {
            self.run.extend(s.bytes().map(u16::from));
        } else {
            self.run.extend(s.encode_utf16());
        }
    }

    fn push_text(&mut self, text: &JsText<'c>) {
        match text {
            JsText::Js { raw, len, .. } if *len >= COPY_BELOW => {
                self.flush_run();
                self.append(*raw);
            }
            JsText::Js { cx, raw, len } => copy_prefix(cx, *raw, *len, &mut self.run),
            JsText::Owned(s) => s.push_utf16_into(&mut self.run),
        }
    }

    fn push_text_prefix(&mut self, text: &JsText<'c>, units: usize) {
        match text {
            JsText::Js { len, .. } if units >= *len => self.push_text(text),
            JsText::Js { cx, raw, .. } => match cx.string_head(*raw, units) {
                // A slice shares the caller's characters: nothing copied.
                Some(head) if units >= COPY_BELOW => {
                    self.flush_run();
                    self.append(head);
                }
                _ => copy_prefix(cx, *raw, units, &mut self.run),
            },
            JsText::Owned(s) => {
                let mut b = Utf16Builder::new();
                s.push_prefix_into(units, &mut b);
                b.finish().push_utf16_into(&mut self.run);
            }
        }
    }
}
