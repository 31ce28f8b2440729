//! [`JsStr`]: a string exactly as JavaScript sees it.
//!
//! A JS string is a sequence of UTF-16 code units and may hold lone
//! surrogates, which a Rust `str` cannot. `JsStr` keeps the common,
//! well-formed case as UTF-8 (compact, and usable as `&str`) and uses WTF-8
//! (UTF-8 generalized to encode a lone surrogate as its own three-byte
//! sequence, `ED A0..BF 80..BF`) only for strings that really contain one.
//! WTF-8 keeps such strings as small as their UTF-8 twins: a session file
//! with a lone surrogate in most texts would double in memory as UTF-16.
//! Well-formed text of up to 22 bytes (ids, names, paths) is kept inline
//! ([`Utf8Text`]), not boxed: most strings the core reads are that short.
//!
//! The representation is canonical: every constructor in this module yields
//! [`JsStr::Utf8`] for a well-formed string and [`JsStr::Wtf8`] only when the
//! code units contain a lone surrogate, with every surrogate pair written as
//! the four-byte form of its character (so equal strings have equal bytes).
//! Equality, ordering and hashing do not rely on that (a hand-built `Wtf8`
//! holding a well-formed string still compares and hashes like its `Utf8`
//! twin), but it keeps them fast.
//!
//! Semantics follow JS: `len` is `.length` (UTF-16 code units), equality is
//! code-unit equality, and ordering is lexicographic by code unit, which is the
//! order `Array.prototype.sort()` and `<` use. That order differs from UTF-8
//! byte order (and from `char` order) in one place: characters
//! U+E000..=U+FFFF sort *after* astral characters (U+10000 and up), because
//! the latter start with a surrogate unit 0xD800..=0xDBFF.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

mod utf8_text;
pub use utf8_text::Utf8Text;

/// V8's longest string, in UTF-16 units (`String::kMaxLength` on 64-bit):
/// past it, building a string throws `RangeError: Invalid string length`.
pub const MAX_STRING_UNITS: usize = (1 << 29) - 24;

/// A JavaScript string value. See the module docs.
#[derive(Clone)]
pub enum JsStr {
    /// A well-formed string (no lone surrogates).
    Utf8(Utf8Text),
    /// Code units containing at least one lone surrogate, as WTF-8.
    Wtf8(Box<[u8]>),
}

/// Whether `u` is a UTF-16 high (leading) surrogate.
#[inline]
pub fn is_high_surrogate(u: u16) -> bool {
    (0xD800..=0xDBFF).contains(&u)
}

/// Whether `u` is a UTF-16 low (trailing) surrogate.
#[inline]
pub fn is_low_surrogate(u: u16) -> bool {
    (0xDC00..=0xDFFF).contains(&u)
}

/// Whether `u` is any surrogate code unit.
#[inline]
pub fn is_surrogate(u: u16) -> bool {
    (0xD800..=0xDFFF).contains(&u)
}

/// Appends the UTF-16 units of `s` to `out`. ASCII runs, most of any text
/// here, are widened in bulk; a char-by-char `extend(s.encode_utf16())`
/// pushed one unit at a time.
pub fn push_str_utf16(s: &str, out: &mut Vec<u16>) {
    out.reserve(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        out.extend(rest.as_bytes()[..ascii].iter().map(|&b| u16::from(b)));
        rest = &rest[ascii..];
        if let Some(c) = rest.chars().next() {
            out.extend_from_slice(c.encode_utf16(&mut [0; 2]));
            rest = &rest[c.len_utf8()..];
        }
    }
}

/// The UTF-16 length of a well-formed string: one unit per char, two for
/// astral chars. Counts bytes instead of decoding chars: every byte that is not
/// a continuation byte starts a char, and 4-byte leaders (0xF0..) add one more.
#[inline]
pub fn utf16_len_of_str(s: &str) -> usize {
    utf16_len_of_bytes(s.as_bytes())
}

/// [`utf16_len_of_str`] for UTF-8 or WTF-8 bytes (a surrogate's three bytes
/// start one char, so they count one unit).
#[inline]
fn utf16_len_of_bytes(bytes: &[u8]) -> usize {
    let mut n = 0usize;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        if x & 0x8080_8080_8080_8080 == 0 {
            n += 8;
            continue;
        }
        for &b in chunk {
            n += usize::from((b as i8) >= -0x40) + usize::from(b >= 0xF0);
        }
    }
    for &b in chunks.remainder() {
        n += usize::from((b as i8) >= -0x40) + usize::from(b >= 0xF0);
    }
    n
}

/// [`utf16_len_of_str`] for bytes known to be UTF-8 (or WTF-8), written for
/// text with non-ASCII chars every few words, where the ASCII fast path of
/// [`utf16_len_of_str`] rarely applies: a branch-free count the compiler
/// vectorizes, summed in byte-sized lanes 127 bytes at a time.
pub fn utf16_len_of_utf8(bytes: &[u8]) -> usize {
    bytes
        .chunks(127)
        .map(|chunk| {
            let n = chunk.iter().fold(0u8, |n, &b| {
                n.wrapping_add(u8::from((b as i8) >= -0x40) + u8::from(b >= 0xF0))
            });
            usize::from(n)
        })
        .sum()
}

/// UTF-8 for well-formed UTF-16, in one pass (ASCII runs copied a chunk
/// at a time); `None` at the first lone surrogate.
fn utf16_to_utf8(units: &[u16]) -> Option<String> {
    // All ASCII (ids, paths, most text): one exact-size allocation, no
    // shrinking copy when the string is boxed.
    if units.iter().all(|&u| u < 0x80) {
        return String::from_utf8(units.iter().map(|&u| u as u8).collect()).ok();
    }
    let mut out: Vec<u8> = Vec::with_capacity(units.len() + units.len() / 2);
    let mut i = 0;
    while i < units.len() {
        // ASCII fast path: eight units at a time.
        while i + 8 <= units.len() && units[i..i + 8].iter().all(|&u| u < 0x80) {
            out.extend(units[i..i + 8].iter().map(|&u| u as u8));
            i += 8;
        }
        let Some(&u) = units.get(i) else { break };
        i += 1;
        let c = if u < 0x80 {
            out.push(u as u8);
            continue;
        } else if is_high_surrogate(u) {
            match units.get(i) {
                Some(&low) if is_low_surrogate(low) => {
                    i += 1;
                    0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
                }
                _ => return None,
            }
        } else if is_low_surrogate(u) {
            return None;
        } else {
            u32::from(u)
        };
        let ch = char::from_u32(c)?;
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }
    String::from_utf8(out).ok()
}

/// Whether the code units are well-formed UTF-16 (no lone surrogates).
pub fn is_well_formed_utf16(units: &[u16]) -> bool {
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        if is_high_surrogate(u) {
            match units.get(i + 1) {
                Some(&next) if is_low_surrogate(next) => i += 2,
                _ => return false,
            }
        } else if is_low_surrogate(u) {
            return false;
        } else {
            i += 1;
        }
    }
    true
}

/// Appends the three WTF-8 bytes of surrogate unit `u`.
#[inline]
pub fn push_surrogate_wtf8(out: &mut Vec<u8>, u: u16) {
    out.extend_from_slice(&[
        0xE0 | (u >> 12) as u8,
        0x80 | ((u >> 6) & 0x3F) as u8,
        0x80 | (u & 0x3F) as u8,
    ]);
}

/// Canonical WTF-8 for code units: pairs become four-byte chars, lone
/// surrogates three-byte sequences.
fn units_to_wtf8(units: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(units.len() + units.len() / 2);
    let mut buf = [0u8; 4];
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok(c) => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
            Err(e) => push_surrogate_wtf8(&mut out, e.unpaired_surrogate()),
        }
    }
    out
}

/// Whether `b` starts with the WTF-8 form of a surrogate.
#[inline]
fn starts_with_surrogate(b: &[u8]) -> bool {
    b.first() == Some(&0xED) && b.get(1).is_some_and(|&c| c >= 0xA0)
}

/// One piece of a WTF-8 string: a run of well-formed text, or a single code
/// unit outside such runs (a lone surrogate; U+FFFD stands for a byte that is
/// not WTF-8, which no constructor here produces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wtf8Piece<'a> {
    Str(&'a str),
    Unit(u16),
}

/// The pieces of WTF-8 bytes, in order.
#[derive(Clone)]
pub struct Wtf8Pieces<'a> {
    rest: &'a [u8],
}

impl<'a> Wtf8Pieces<'a> {
    pub fn new(bytes: &'a [u8]) -> Wtf8Pieces<'a> {
        Wtf8Pieces { rest: bytes }
    }
}

impl<'a> Iterator for Wtf8Pieces<'a> {
    type Item = Wtf8Piece<'a>;

    fn next(&mut self) -> Option<Wtf8Piece<'a>> {
        let b = self.rest;
        if b.is_empty() {
            return None;
        }
        if starts_with_surrogate(b) {
            let u = (u16::from(b[0] & 0x0F) << 12)
                | (u16::from(b.get(1).copied().unwrap_or(0) & 0x3F) << 6)
                | u16::from(b.get(2).copied().unwrap_or(0) & 0x3F);
            self.rest = b.get(3..).unwrap_or(&[]);
            return Some(Wtf8Piece::Unit(u));
        }
        let mut end = b.len();
        let mut from = 1;
        while let Some(i) = b.get(from..).and_then(|t| memchr::memchr(0xED, t)) {
            if starts_with_surrogate(&b[from + i..]) {
                end = from + i;
                break;
            }
            from += i + 1;
        }
        let run = &b[..end];
        match std::str::from_utf8(run) {
            Ok(s) => {
                self.rest = &b[end..];
                Some(Wtf8Piece::Str(s))
            }
            Err(e) if e.valid_up_to() > 0 => {
                let (ok, tail) = b.split_at(e.valid_up_to());
                self.rest = tail;
                Some(Wtf8Piece::Str(std::str::from_utf8(ok).unwrap_or("")))
            }
            Err(e) => {
                self.rest = b.get(e.error_len().unwrap_or(1).max(1)..).unwrap_or(&[]);
                Some(Wtf8Piece::Unit(0xFFFD))
            }
        }
    }
}

/// Iterator over the UTF-16 code units of a [`JsStr`].
#[derive(Clone)]
pub enum CodeUnits<'a> {
    Utf8(std::str::EncodeUtf16<'a>),
    Wtf8 {
        pieces: Wtf8Pieces<'a>,
        run: std::str::EncodeUtf16<'a>,
    },
}

impl Iterator for CodeUnits<'_> {
    type Item = u16;

    #[inline]
    fn next(&mut self) -> Option<u16> {
        match self {
            CodeUnits::Utf8(it) => it.next(),
            CodeUnits::Wtf8 { pieces, run } => loop {
                if let Some(u) = run.next() {
                    return Some(u);
                }
                match pieces.next()? {
                    Wtf8Piece::Str(s) => *run = s.encode_utf16(),
                    Wtf8Piece::Unit(u) => return Some(u),
                }
            },
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            CodeUnits::Utf8(it) => it.size_hint(),
            CodeUnits::Wtf8 { pieces, .. } => (0, Some(pieces.rest.len() + 8)),
        }
    }
}

/// Sort key of a char that makes `char` order agree with UTF-16 code-unit
/// order at the first differing char: U+E000..=U+FFFF move above all astral
/// chars (whose first unit is a surrogate, 0xD800..=0xDBFF).
#[inline]
fn utf16_order_key(c: char) -> u32 {
    let c = c as u32;
    if (0xE000..=0xFFFF).contains(&c) {
        c + 0x20_0000
    } else {
        c
    }
}

/// Compares two well-formed strings by UTF-16 code units.
pub fn cmp_str_utf16(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let Some(i) = ab.iter().zip(bb).position(|(x, y)| x != y) else {
        // One is a prefix of the other (in bytes, hence in chars and units).
        return ab.len().cmp(&bb.len());
    };
    // Back up to the start of the char that differs; the prefix before `i`
    // is identical, so it is a char boundary in both strings.
    let mut start = i;
    while start > 0 && !a.is_char_boundary(start) {
        start -= 1;
    }
    let ca = a.get(start..).and_then(|s| s.chars().next());
    let cb = b.get(start..).and_then(|s| s.chars().next());
    match (ca, cb) {
        (Some(x), Some(y)) => utf16_order_key(x).cmp(&utf16_order_key(y)),
        // Unreachable for valid strings; fall back to a safe answer.
        _ => ab.len().cmp(&bb.len()),
    }
}

impl JsStr {
    /// The empty string.
    pub fn empty() -> JsStr {
        JsStr::Utf8(Utf8Text::from(""))
    }

    /// A copy of a (necessarily well-formed) Rust string.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(s: &str) -> JsStr {
        JsStr::Utf8(Utf8Text::from(s))
    }

    /// Takes ownership of a Rust string.
    pub fn from_string(s: String) -> JsStr {
        JsStr::Utf8(Utf8Text::from(s))
    }

    /// From UTF-16 code units; UTF-8 when they are well-formed.
    pub fn from_utf16(units: &[u16]) -> JsStr {
        if let Some(text) = Utf8Text::inline_ascii(units) {
            return JsStr::Utf8(text);
        }
        match utf16_to_utf8(units) {
            Some(s) => JsStr::Utf8(Utf8Text::from(s)),
            None => JsStr::Wtf8(units_to_wtf8(units).into_boxed_slice()),
        }
    }

    /// From owned UTF-16 code units; UTF-8 when they are well-formed.
    pub fn from_utf16_vec(units: Vec<u16>) -> JsStr {
        JsStr::from_utf16(&units)
    }

    /// From canonical WTF-8 known to hold a lone surrogate (checked in debug
    /// builds): the JSON parser builds these directly.
    pub fn lone_surrogates_wtf8(bytes: Vec<u8>) -> JsStr {
        debug_assert!(std::str::from_utf8(&bytes).is_err());
        debug_assert_eq!(
            units_to_wtf8(&JsStr::Wtf8(Box::from(&bytes[..])).to_utf16()),
            bytes
        );
        JsStr::Wtf8(bytes.into_boxed_slice())
    }

    /// The size of the stored text (UTF-8 or WTF-8 bytes), in O(1): a
    /// capacity hint and an upper bound of the JS length, not the length.
    pub fn stored_len(&self) -> usize {
        match self {
            JsStr::Utf8(s) => s.len(),
            JsStr::Wtf8(b) => b.len(),
        }
    }

    /// The text in pieces: runs of well-formed text and lone surrogates.
    pub fn pieces(&self) -> Wtf8Pieces<'_> {
        match self {
            JsStr::Utf8(s) => Wtf8Pieces::new(s.as_bytes()),
            JsStr::Wtf8(b) => Wtf8Pieces::new(b),
        }
    }

    /// JS `.length`: the number of UTF-16 code units.
    #[inline]
    pub fn utf16_len(&self) -> usize {
        match self {
            JsStr::Utf8(s) => utf16_len_of_str(s),
            JsStr::Wtf8(b) => utf16_len_of_bytes(b),
        }
    }

    /// Alias of [`JsStr::utf16_len`].
    #[inline]
    pub fn len(&self) -> usize {
        self.utf16_len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        match self {
            JsStr::Utf8(s) => s.is_empty(),
            JsStr::Wtf8(b) => b.is_empty(),
        }
    }

    /// The string as `&str`, when it is well-formed (always, for canonical
    /// values holding no lone surrogate).
    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsStr::Utf8(s) => Some(s),
            JsStr::Wtf8(_) => None,
        }
    }

    /// Whether the string equals `s` (code-unit equality).
    #[inline]
    pub fn eq_str(&self, s: &str) -> bool {
        match self {
            JsStr::Utf8(a) => &**a == s,
            JsStr::Wtf8(_) => self.code_units().eq(s.encode_utf16()),
        }
    }

    /// The code units, one by one.
    pub fn code_units(&self) -> CodeUnits<'_> {
        match self {
            JsStr::Utf8(s) => CodeUnits::Utf8(s.encode_utf16()),
            JsStr::Wtf8(b) => CodeUnits::Wtf8 {
                pieces: Wtf8Pieces::new(b),
                run: "".encode_utf16(),
            },
        }
    }

    /// JS `charCodeAt(index)`, or `None` past the end. O(index) for UTF-8.
    pub fn code_unit_at(&self, index: usize) -> Option<u16> {
        self.code_units().nth(index)
    }

    /// The code units as a new vector.
    pub fn to_utf16(&self) -> Vec<u16> {
        let mut out = Vec::new();
        self.push_utf16_into(&mut out);
        out
    }

    /// Appends the code units to `out`.
    pub fn push_utf16_into(&self, out: &mut Vec<u16>) {
        match self {
            JsStr::Utf8(s) => push_str_utf16(s, out),
            JsStr::Wtf8(_) => out.extend(self.code_units()),
        }
    }

    /// The string with each lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        match self {
            JsStr::Utf8(s) => Cow::Borrowed(s),
            JsStr::Wtf8(b) => {
                let mut out = String::with_capacity(b.len());
                for piece in Wtf8Pieces::new(b) {
                    match piece {
                        Wtf8Piece::Str(s) => out.push_str(s),
                        Wtf8Piece::Unit(_) => out.push('\u{FFFD}'),
                    }
                }
                Cow::Owned(out)
            }
        }
    }

    /// The first `n` code units (the whole string when shorter), backing off
    /// one unit rather than cutting a surrogate pair in half. Never creates a
    /// lone surrogate (an existing one before the cut is kept).
    pub fn truncate_utf16(&self, n: usize) -> JsStr {
        match self {
            // A string has no more UTF-16 units than UTF-8 bytes.
            JsStr::Utf8(s) if s.len() <= n => self.clone(),
            // ASCII: one unit a byte, so the cut is a plain slice.
            JsStr::Utf8(s) if s.is_ascii() => JsStr::from_str(s.get(..n).unwrap_or(s)),
            JsStr::Utf8(s) => {
                let mut units = 0usize;
                for (i, c) in s.char_indices() {
                    let w = c.len_utf16();
                    if units + w > n {
                        return JsStr::from_str(s.get(..i).unwrap_or(""));
                    }
                    units += w;
                }
                self.clone()
            }
            JsStr::Wtf8(_) => {
                let u: Vec<u16> = self.code_units().take(n.saturating_add(1)).collect();
                if n >= u.len() {
                    return self.clone();
                }
                let mut end = n;
                if end > 0 && is_high_surrogate(u[end - 1]) && is_low_surrogate(u[end]) {
                    end -= 1;
                }
                JsStr::from_utf16(&u[..end])
            }
        }
    }

    /// JS `str.slice(start, end)`: negative indices count from the end, both
    /// are clamped to `0..=len`, `end = None` means the end, and an empty range
    /// gives `""`. Like JS, may cut a surrogate pair and so produce lone
    /// surrogates.
    pub fn slice_utf16(&self, start: i64, end: Option<i64>) -> JsStr {
        let len = self.utf16_len();
        let len_i = i64::try_from(len).unwrap_or(i64::MAX);
        let clamp = |i: i64| -> usize {
            let r = if i < 0 {
                len_i.saturating_add(i).max(0)
            } else {
                i.min(len_i)
            };
            usize::try_from(r).unwrap_or(0)
        };
        let from = clamp(start);
        let to = end.map_or(len, clamp);
        if from >= to {
            return JsStr::empty();
        }
        match self {
            JsStr::Utf8(s) => {
                // Walk chars, mapping unit offsets to byte offsets. A cut
                // inside an astral char yields a lone surrogate.
                let mut units = 0usize;
                let mut b = Utf16Builder::new();
                for c in s.chars() {
                    let w = c.len_utf16();
                    if units >= to {
                        break;
                    }
                    if units >= from && units + w <= to {
                        b.push_char(c);
                    } else if units + w > from && w == 2 {
                        // Partially inside: exactly one of the two units.
                        let mut pair = [0u16; 2];
                        c.encode_utf16(&mut pair);
                        if units >= from {
                            b.push_unit(pair[0]);
                        } else {
                            b.push_unit(pair[1]);
                        }
                    }
                    units += w;
                }
                b.finish()
            }
            JsStr::Wtf8(_) => {
                let u: Vec<u16> = self.code_units().take(to).collect();
                JsStr::from_utf16(u.get(from..).unwrap_or(&[]))
            }
        }
    }

    /// Concatenation, JS `a + b` (a lone high surrogate at the end of `self`
    /// and a lone low one at the start of `other` join into a pair).
    pub fn concat(&self, other: &JsStr) -> JsStr {
        match (self, other) {
            (JsStr::Utf8(a), JsStr::Utf8(b)) => {
                let mut s = String::with_capacity(a.len() + b.len());
                s.push_str(a);
                s.push_str(b);
                JsStr::from_string(s)
            }
            _ => {
                let mut b = Utf16Builder::new();
                b.push_js(self);
                b.push_js(other);
                b.finish()
            }
        }
    }
}

impl Default for JsStr {
    fn default() -> JsStr {
        JsStr::empty()
    }
}

impl From<&str> for JsStr {
    fn from(s: &str) -> JsStr {
        JsStr::from_str(s)
    }
}

impl From<String> for JsStr {
    fn from(s: String) -> JsStr {
        JsStr::from_string(s)
    }
}

impl From<&String> for JsStr {
    fn from(s: &String) -> JsStr {
        JsStr::from_str(s)
    }
}

impl From<&JsStr> for JsStr {
    fn from(s: &JsStr) -> JsStr {
        s.clone()
    }
}

impl From<Box<str>> for JsStr {
    fn from(s: Box<str>) -> JsStr {
        JsStr::Utf8(Utf8Text::from(s))
    }
}

impl PartialEq for JsStr {
    fn eq(&self, other: &JsStr) -> bool {
        match (self, other) {
            (JsStr::Utf8(a), JsStr::Utf8(b)) => a == b,
            (JsStr::Wtf8(a), JsStr::Wtf8(b)) => a == b,
            _ => self.code_units().eq(other.code_units()),
        }
    }
}

impl Eq for JsStr {}

impl PartialEq<str> for JsStr {
    fn eq(&self, other: &str) -> bool {
        self.eq_str(other)
    }
}

impl PartialEq<&str> for JsStr {
    fn eq(&self, other: &&str) -> bool {
        self.eq_str(other)
    }
}

impl Ord for JsStr {
    fn cmp(&self, other: &JsStr) -> Ordering {
        match (self, other) {
            (JsStr::Utf8(a), JsStr::Utf8(b)) => cmp_str_utf16(a, b),
            _ => self.code_units().cmp(other.code_units()),
        }
    }
}

impl PartialOrd for JsStr {
    fn partial_cmp(&self, other: &JsStr) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hash for JsStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            JsStr::Utf8(s) => s.hash(state),
            JsStr::Wtf8(b) => match std::str::from_utf8(b) {
                // Non-canonical value: hash like its UTF-8 twin.
                Ok(s) => s.hash(state),
                Err(_) => {
                    // Cannot equal any Utf8 value, and canonical WTF-8 is
                    // unique: hashing the bytes is consistent with `eq`.
                    state.write_u8(0xFE);
                    b.hash(state);
                }
            },
        }
    }
}

impl fmt::Display for JsStr {
    /// Lossy: lone surrogates show as U+FFFD.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl fmt::Debug for JsStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsStr::Utf8(s) => fmt::Debug::fmt(&**s, f),
            JsStr::Wtf8(_) => {
                f.write_str("\"")?;
                for r in char::decode_utf16(self.code_units()) {
                    match r {
                        Ok(c) => write!(f, "{}", c.escape_debug())?,
                        Err(e) => write!(f, "\\u{{{:x}}}", e.unpaired_surrogate())?,
                    }
                }
                f.write_str("\"")
            }
        }
    }
}

/// Builds a [`JsStr`] piece by piece; stays UTF-8 unless a lone surrogate
/// ends up in the result. A high surrogate pushed as a code unit waits for
/// the next push: a low surrogate joins it into a pair.
#[derive(Debug, Clone, Default)]
pub struct Utf16Builder {
    utf8: String,
    /// A high surrogate pushed last, not yet known to be lone (UTF-8 mode).
    pending_high: Option<u16>,
    /// Set once a lone surrogate is certain; then all text lives here.
    utf16: Option<Vec<u16>>,
}

impl Utf16Builder {
    pub fn new() -> Utf16Builder {
        Utf16Builder::default()
    }

    /// With room for `bytes` bytes of UTF-8.
    pub fn with_capacity(bytes: usize) -> Utf16Builder {
        Utf16Builder {
            utf8: String::with_capacity(bytes),
            ..Utf16Builder::default()
        }
    }

    /// Switches to UTF-16 storage (a lone surrogate is certain).
    fn units(&mut self) -> &mut Vec<u16> {
        let utf8 = &mut self.utf8;
        let pending = &mut self.pending_high;
        self.utf16.get_or_insert_with(|| {
            let mut v: Vec<u16> = utf8.encode_utf16().collect();
            utf8.clear();
            if let Some(h) = pending.take() {
                v.push(h);
            }
            v
        })
    }

    /// Resolves a pending high surrogate before text that does not start with
    /// a low surrogate: it is lone.
    fn flush_pending(&mut self) {
        if self.pending_high.is_some() {
            self.units();
        }
    }

    pub fn push_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        self.flush_pending();
        match &mut self.utf16 {
            Some(v) => v.extend(s.encode_utf16()),
            None => self.utf8.push_str(s),
        }
    }

    pub fn push_char(&mut self, c: char) {
        self.flush_pending();
        match &mut self.utf16 {
            Some(v) => {
                let mut buf = [0u16; 2];
                v.extend_from_slice(c.encode_utf16(&mut buf));
            }
            None => self.utf8.push(c),
        }
    }

    /// Pushes one code unit, possibly a surrogate.
    pub fn push_unit(&mut self, u: u16) {
        if let Some(v) = &mut self.utf16 {
            v.push(u);
            return;
        }
        if let Some(h) = self.pending_high {
            if is_low_surrogate(u) {
                self.pending_high = None;
                let cp = 0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(u) - 0xDC00);
                self.utf8.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                return;
            }
            self.units().push(u);
            return;
        }
        if is_high_surrogate(u) {
            self.pending_high = Some(u);
        } else if is_low_surrogate(u) {
            self.units().push(u);
        } else {
            self.utf8
                .push(char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}'));
        }
    }

    pub fn push_units(&mut self, units: &[u16]) {
        for &u in units {
            self.push_unit(u);
        }
    }

    pub fn push_js(&mut self, s: &JsStr) {
        match s {
            JsStr::Utf8(s) => self.push_str(s),
            JsStr::Wtf8(b) => {
                for piece in Wtf8Pieces::new(b) {
                    match piece {
                        Wtf8Piece::Str(s) => self.push_str(s),
                        Wtf8Piece::Unit(u) => self.push_unit(u),
                    }
                }
            }
        }
    }

    /// The UTF-16 length so far.
    pub fn utf16_len(&self) -> usize {
        match &self.utf16 {
            Some(v) => v.len(),
            None => utf16_len_of_str(&self.utf8) + usize::from(self.pending_high.is_some()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.utf16_len() == 0
    }

    pub fn finish(mut self) -> JsStr {
        if self.pending_high.is_some() {
            self.units();
        }
        match self.utf16 {
            Some(v) => JsStr::from_utf16_vec(v),
            None => JsStr::from_string(self.utf8),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
