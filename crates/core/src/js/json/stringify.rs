//! `JSON.stringify`: the text, and its UTF-16 length without building it.

use crate::js::string::{utf16_len_of_str, JsStr, Wtf8Piece};

use super::names::PropName;
use super::parse::find_special;
use super::value::Value;

trait Sink {
    fn raw(&mut self, s: &str);
    fn string(&mut self, s: &JsStr);
    fn number(&mut self, n: f64) {
        if n.is_finite() {
            self.raw(ryu_js::Buffer::new().format_finite(n));
        } else {
            self.raw("null");
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The short escape of an ASCII byte, if it has one.
#[inline]
fn short_escape(c: u8) -> Option<&'static str> {
    match c {
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        0x08 => Some("\\b"),
        0x0C => Some("\\f"),
        b'\n' => Some("\\n"),
        b'\r' => Some("\\r"),
        b'\t' => Some("\\t"),
        _ => None,
    }
}

fn push_u_escape(out: &mut String, u: u16) {
    out.push_str("\\u");
    for shift in [12u16, 8, 4, 0] {
        out.push(char::from(HEX[usize::from((u >> shift) & 0xF)]));
    }
}

struct StringSink(String);

impl Sink for StringSink {
    #[inline]
    fn raw(&mut self, s: &str) {
        self.0.push_str(s);
    }

    fn string(&mut self, s: &JsStr) {
        let out = &mut self.0;
        out.push('"');
        match s {
            JsStr::Utf8(s) => push_escaped(out, s),
            JsStr::Wtf8(_) => {
                for piece in s.pieces() {
                    match piece {
                        Wtf8Piece::Str(s) => push_escaped(out, s),
                        // JSON.stringify escapes a lone surrogate.
                        Wtf8Piece::Unit(u) => push_u_escape(out, u),
                    }
                }
            }
        }
        out.push('"');
    }
}

/// Appends well-formed `s` as JSON.stringify writes it between quotes.
fn push_escaped(out: &mut String, s: &str) {
    let b = s.as_bytes();
    let mut run = 0;
    loop {
        let i = find_special(b, run);
        out.push_str(s.get(run..i).unwrap_or(""));
        let Some(&c) = b.get(i) else { break };
        match short_escape(c) {
            Some(e) => out.push_str(e),
            None => push_u_escape(out, u16::from(c)),
        }
        run = i + 1;
    }
}

struct LenSink(usize);

impl Sink for LenSink {
    #[inline]
    fn raw(&mut self, s: &str) {
        // Only ASCII (punctuation, literals, numbers) comes here.
        self.0 += s.len();
    }

    fn string(&mut self, s: &JsStr) {
        self.0 += quoted_len(s);
    }
}

/// The UTF-16 length of `JSON.stringify(s)` for a string `s`.
pub fn quoted_len(s: &JsStr) -> usize {
    match s {
        JsStr::Utf8(s) => 2 + escaped_len(s),
        JsStr::Wtf8(_) => {
            2 + s
                .pieces()
                .map(|piece| match piece {
                    Wtf8Piece::Str(s) => escaped_len(s),
                    Wtf8Piece::Unit(_) => 6,
                })
                .sum::<usize>()
        }
    }
}

/// The UTF-16 length of well-formed `s` as JSON.stringify escapes it.
fn escaped_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut n = utf16_len_of_str(s);
    let mut i = find_special(b, 0);
    while let Some(&c) = b.get(i) {
        n += if short_escape(c).is_some() { 1 } else { 5 };
        i = find_special(b, i + 1);
    }
    n
}

/// Whether `JSON.stringify` may write the UTF-16 unit `u` other than as it
/// is: a quote, a backslash, a control character, or a surrogate (kept
/// when it is half of a pair).
#[inline(always)]
fn special_unit(u: u16) -> bool {
    (u < 0x20) | (u == 0x22) | (u == 0x5c) | ((u & 0xf800) == 0xd800)
}

/// Units whose specials are found at once.
const SCAN_CHUNK: usize = 16;

/// Bit `k` set where unit `k` of `chunk` is special. Written by hand for
/// SSE2 (part of every x86-64 CPU): the portable loop below is not turned
/// into vector code, and finding the specials was most of the time of an
/// escape (a file's contents have one every dozen units or so).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn special_mask(chunk: &[u16; SCAN_CHUNK]) -> u32 {
    // SAFETY: SSE2 is in the x86-64 baseline, and the two unaligned loads
    // read the 32 bytes of `chunk`.
    unsafe { special_mask_sse2(chunk) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn special_mask_sse2(chunk: &[u16; SCAN_CHUNK]) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_packs_epi16, _mm_set1_epi16, _mm_setzero_si128, _mm_subs_epu16,
    };
    #[inline(always)]
    unsafe fn lanes(x: __m128i) -> __m128i {
        // `u < 0x20`: the saturating `u - 0x1f` is zero.
        let control = _mm_cmpeq_epi16(_mm_subs_epu16(x, _mm_set1_epi16(0x1f)), _mm_setzero_si128());
        let quote = _mm_cmpeq_epi16(x, _mm_set1_epi16(0x22));
        let backslash = _mm_cmpeq_epi16(x, _mm_set1_epi16(0x5c));
        let surrogate = _mm_cmpeq_epi16(
            _mm_and_si128(x, _mm_set1_epi16(0xf800u16 as i16)),
            _mm_set1_epi16(0xd800u16 as i16),
        );
        _mm_or_si128(
            _mm_or_si128(control, quote),
            _mm_or_si128(backslash, surrogate),
        )
    }
    let low = _mm_loadu_si128(chunk.as_ptr().cast());
    let high = _mm_loadu_si128(chunk.as_ptr().add(8).cast());
    // Each lane is all ones or zeros: packed to bytes, one bit a unit.
    _mm_movemask_epi8(_mm_packs_epi16(lanes(low), lanes(high))) as u32
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn special_mask(chunk: &[u16; SCAN_CHUNK]) -> u32 {
    special_mask_portable(chunk)
}

/// [`special_mask`] unit by unit (tested against the vector code).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn special_mask_portable(chunk: &[u16; SCAN_CHUNK]) -> u32 {
    let mut mask = 0;
    for (k, &u) in chunk.iter().enumerate() {
        mask |= u32::from(special_unit(u)) << k;
    }
    mask
}

/// Writes the special unit at `i` as `JSON.stringify` does (a surrogate
/// pair as it is); returns the index after what it wrote.
#[inline(always)]
fn push_special(units: &[u16], i: usize, out: &mut Vec<u16>) -> usize {
    let u = units[i];
    if (u & 0xfc00) == 0xd800 {
        if let Some(&low) = units.get(i + 1).filter(|&&l| (l & 0xfc00) == 0xdc00) {
            out.extend_from_slice(&[u, low]);
            return i + 2;
        }
    }
    let short = match u {
        0x22 => Some(b'"'),
        0x5c => Some(b'\\'),
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        0x0a => Some(b'n'),
        0x0d => Some(b'r'),
        0x09 => Some(b't'),
        _ => None,
    };
    match short {
        Some(c) => out.extend_from_slice(&[u16::from(b'\\'), u16::from(c)]),
        None => {
            let hex = |shift: u16| u16::from(HEX[usize::from((u >> shift) & 0xF)]);
            out.extend_from_slice(&[
                u16::from(b'\\'),
                u16::from(b'u'),
                hex(12),
                hex(8),
                hex(4),
                hex(0),
            ]);
        }
    }
    i + 1
}

/// Appends `JSON.stringify(s)` for the string `s` whose UTF-16 units are
/// `units` (well-formed JSON: a lone surrogate becomes a `\uXXXX` escape).
pub fn push_quoted_utf16(units: &[u16], out: &mut Vec<u16>) {
    out.reserve(units.len() + 2);
    out.push(u16::from(b'"'));
    // Units before `done` are written.
    let mut done = 0;
    each_special(units, |i| {
        out.extend_from_slice(&units[done..i]);
        done = push_special(units, i, out);
        done
    });
    out.extend_from_slice(units.get(done..).unwrap_or_default());
    out.push(u16::from(b'"'));
}

/// The UTF-16 length of `JSON.stringify(s)` for the string `s` whose
/// UTF-16 units are `units`: what [`push_quoted_utf16`] writes.
pub fn quoted_len_utf16(units: &[u16]) -> usize {
    let mut len = units.len() + 2;
    each_special(units, |i| {
        let u = units[i];
        if (u & 0xfc00) == 0xd800 && units.get(i + 1).is_some_and(|&l| (l & 0xfc00) == 0xdc00) {
            // A surrogate pair, written as it is.
            return i + 2;
        }
        len += match u {
            0x22 | 0x5c | 0x08 | 0x0c | 0x0a | 0x0d | 0x09 => 1,
            _ => 5,
        };
        i + 1
    });
    len
}

/// Calls `special(i)` for each special unit `i` of `units` (in order, from
/// where the call before said it had gone: the low half of a pair is
/// skipped so); `special` returns the index after what it took.
#[inline(always)]
fn each_special(units: &[u16], mut special: impl FnMut(usize) -> usize) {
    // Units before `done` are taken; chunks are scanned from `at`.
    let mut done = 0;
    let mut at = 0;
    while let Some(chunk) = units.get(at..at + SCAN_CHUNK) {
        let Ok(chunk) = <&[u16; SCAN_CHUNK]>::try_from(chunk) else {
            break;
        };
        let mut mask = special_mask(chunk);
        while mask != 0 {
            let i = at + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if i >= done {
                done = special(i);
            }
        }
        at += SCAN_CHUNK;
    }
    for (i, &u) in units.iter().enumerate().skip(at) {
        if i >= done && special_unit(u) {
            done = special(i);
        }
    }
}

#[cfg(test)]
pub(super) fn special_masks_agree(chunk: &[u16; SCAN_CHUNK]) -> bool {
    special_mask(chunk) == special_mask_portable(chunk)
}

enum WalkFrame<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(std::slice::Iter<'a, (PropName, Value)>),
}

/// Emits `v` depth-first with an explicit stack.
fn walk<S: Sink>(v: &Value, sink: &mut S) {
    let mut stack: Vec<WalkFrame<'_>> = Vec::new();
    let mut cur = v;
    loop {
        match cur {
            Value::Null => sink.raw("null"),
            Value::Bool(true) => sink.raw("true"),
            Value::Bool(false) => sink.raw("false"),
            Value::Number(n) => sink.number(*n),
            Value::String(s) => sink.string(s),
            Value::Measured(_) => {
                // Only texts of planning trees are measured, and a plan
                // stringifies tool-call arguments alone (tested).
                debug_assert!(false, "JSON.stringify of a measured text");
                sink.raw("null");
            }
            Value::Array(items) => {
                sink.raw("[");
                let mut it = items.iter();
                if let Some(first) = it.next() {
                    stack.push(WalkFrame::Array(it));
                    cur = first;
                    continue;
                }
                sink.raw("]");
            }
            Value::Object(o) => {
                sink.raw("{");
                let mut it = o.entries.iter();
                if let Some((k, first)) = it.next() {
                    sink.string(k);
                    sink.raw(":");
                    stack.push(WalkFrame::Object(it));
                    cur = first;
                    continue;
                }
                sink.raw("}");
            }
        }
        // `cur` is done: move to the next sibling, closing finished containers.
        loop {
            match stack.last_mut() {
                None => return,
                Some(WalkFrame::Array(it)) => match it.next() {
                    Some(next) => {
                        sink.raw(",");
                        cur = next;
                        break;
                    }
                    None => {
                        sink.raw("]");
                        stack.pop();
                    }
                },
                Some(WalkFrame::Object(it)) => match it.next() {
                    Some((k, next)) => {
                        sink.raw(",");
                        sink.string(k);
                        sink.raw(":");
                        cur = next;
                        break;
                    }
                    None => {
                        sink.raw("}");
                        stack.pop();
                    }
                },
            }
        }
    }
}

/// `JSON.stringify(v)`. The result is always well-formed (so always
/// [`JsStr::Utf8`]).
pub fn stringify(v: &Value) -> JsStr {
    JsStr::from_string(stringify_to_string(v))
}

/// `JSON.stringify(v)` as a Rust string.
pub fn stringify_to_string(v: &Value) -> String {
    let mut out = String::new();
    stringify_into(v, &mut out);
    out
}

/// Appends `JSON.stringify(v)` to `out`.
pub fn stringify_into(v: &Value, out: &mut String) {
    let mut sink = StringSink(std::mem::take(out));
    walk(v, &mut sink);
    *out = sink.0;
}

/// `JSON.stringify(v).length` (UTF-16 code units), without building it.
pub fn stringify_len(v: &Value) -> usize {
    let mut sink = LenSink(0);
    walk(v, &mut sink);
    sink.0
}
