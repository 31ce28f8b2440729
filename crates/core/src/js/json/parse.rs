//! `JSON.parse`: the full parse, and the planning parse that measures long
//! strings instead of keeping them.

use std::fmt;

use crate::js::string::{
    is_high_surrogate, is_low_surrogate, is_surrogate, push_surrogate_wtf8, utf16_len_of_utf8,
    JsStr,
};

use super::names::{known_index, Name, PropName};
use super::object::Object;
use super::value::Value;

/// Why and where parsing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset into the input.
    pub offset: usize,
    pub message: &'static str,
}

impl ParseError {
    /// Whether `input`, the text this error came from, ended before its
    /// JSON value did: it is the start of some JSON text, as a line cut
    /// short is. Every error raised because the input ran out is at the
    /// input's end, and no other error is.
    pub fn input_ended(&self, input: &str) -> bool {
        self.offset >= input.len()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// The deepest nesting of arrays and objects [`parse`] accepts. V8's
/// `JSON.parse` has no limit, but `JSON.stringify` throws `RangeError` past
/// about 4,000 levels (node 20, default stack), so no file node wrote can
/// come near this. The limit keeps the recursive `Drop`, `Clone`,
/// `PartialEq` and `Debug` of [`Value`] well within a 2 MiB thread stack.
pub const DEFAULT_MAX_DEPTH: usize = 5000;

/// `JSON.parse(text)`, nesting limited to [`DEFAULT_MAX_DEPTH`].
pub fn parse(text: &str) -> Result<Value, ParseError> {
    parse_with_max_depth(text, DEFAULT_MAX_DEPTH)
}

/// `JSON.parse` of UTF-8 bytes; invalid UTF-8 is an error (at the offset of
/// the first bad byte). Note: node's `readFileSync(f, "utf8")` would instead
/// decode bad bytes as U+FFFD; use `String::from_utf8_lossy` to mimic that.
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => Err(ParseError {
            offset: e.valid_up_to(),
            message: "invalid UTF-8",
        }),
    }
}

/// `JSON.parse(text)` with a custom nesting limit.
pub fn parse_with_max_depth(text: &str, max_depth: usize) -> Result<Value, ParseError> {
    Parser::new(text, false).parse(max_depth)
}

/// The shortest text, in UTF-16 units, that [`parse_for_plan`] measures
/// instead of keeping. Shorter ones cost little to keep, and every literal
/// the algorithms compare a string with is shorter.
pub const MEASURED_MIN_UNITS: usize = 256;

/// `JSON.parse` of one session entry (or an array of them) for planning:
/// accepts and rejects exactly what [`parse`] does, with the same errors,
/// but message texts (the `text` and `thinking` of content blocks, string
/// `content`, bash `command` and `output`, block signatures and partial
/// JSON, anything under a message's `details`) of [`MEASURED_MIN_UNITS`] or
/// more are kept as [`Value::Measured`]: a plan counts their length and
/// reads nothing else of them. Tool-call arguments, ids, summaries and entry
/// `details` are kept.
pub fn parse_for_plan(text: &str) -> Result<Value, ParseError> {
    Parser::new(text, true).parse(DEFAULT_MAX_DEPTH)
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    scratch: String,
    /// Measure long message texts (see [`parse_for_plan`]).
    plan: bool,
}

/// Where a container sits in a session entry, as far as [`parse_for_plan`]
/// cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A top-level array: entries, as prepareCompactionAsync sends them.
    Entries,
    /// An entry: the top-level object, or an element of `Entries`.
    Entry,
    /// `entry.message`.
    Message,
    /// A `content` array of the entry or its message.
    Blocks,
    /// One content block.
    Block,
    /// A message's `details`, which no plan reads, at any depth.
    Unread,
    /// Anything else (tool-call arguments, usage, entry details, ...).
    Other,
}

#[derive(Clone, Copy)]
enum Frame {
    /// Elements so far are `values[start..]`.
    Array { start: usize, place: Place },
    /// Members so far are `members[start..]`; the current key is on `keys`.
    Object { start: usize, place: Place },
}

/// The place of a container opened inside `parent` (under `key` when the
/// parent is an object).
fn place_of(parent: Option<&Frame>, key: Option<&PropName>, object: bool) -> Place {
    let is = |name: &str| key.is_some_and(|k| k.is(name));
    match parent {
        None if object => Place::Entry,
        None => Place::Entries,
        Some(Frame::Object { place, .. }) => match place {
            Place::Entry if object && is("message") => Place::Message,
            Place::Entry | Place::Message if !object && is("content") => Place::Blocks,
            Place::Message if is("details") => Place::Unread,
            Place::Unread => Place::Unread,
            _ => Place::Other,
        },
        Some(Frame::Array { place, .. }) => match place {
            Place::Entries if object => Place::Entry,
            Place::Blocks if object => Place::Block,
            Place::Unread => Place::Unread,
            _ => Place::Other,
        },
    }
}

/// Whether a string value inside `parent` (under `key`) is a text a plan
/// only measures.
fn measurable(parent: Option<&Frame>, key: Option<&PropName>) -> bool {
    let is_one_of = |names: &[&str]| key.is_some_and(|k| names.iter().any(|n| k.is(n)));
    match parent {
        Some(Frame::Object { place, .. }) => match place {
            Place::Entry => is_one_of(&["content"]),
            Place::Message => is_one_of(&["content", "output", "command"]),
            Place::Block => is_one_of(&[
                "text",
                "thinking",
                "thinkingSignature",
                "textSignature",
                "partialJson",
            ]),
            Place::Unread => true,
            _ => false,
        },
        Some(Frame::Array { place, .. }) => *place == Place::Unread,
        None => false,
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The index of the first byte at or after `i` that is `"`, `\` or a control
/// character (< 0x20), or `b.len()`. These are exactly the bytes that end a
/// plain run inside a JSON string, and the bytes `JSON.stringify` escapes.
#[inline]
pub(super) fn find_special(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        let q = x ^ (LO * u64::from(b'"'));
        let s = x ^ (LO * u64::from(b'\\'));
        // Per byte: high bit set where the byte is zero (q, s) or below 0x20
        // (x). Only bytes above a true hit can be false positives, so the
        // lowest flagged byte is exact.
        let t = ((q.wrapping_sub(LO) & !q)
            | (s.wrapping_sub(LO) & !s)
            | (x.wrapping_sub(LO * 0x20) & !x))
            & HI;
        if t != 0 {
            return i + (t.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return i;
        }
        i += 1;
    }
    i
}

#[inline]
fn hex_val(c: u8) -> Option<u16> {
    match c {
        b'0'..=b'9' => Some(u16::from(c - b'0')),
        b'a'..=b'f' => Some(u16::from(c - b'a' + 10)),
        b'A'..=b'F' => Some(u16::from(c - b'A' + 10)),
        _ => None,
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, plan: bool) -> Parser<'a> {
        Parser {
            src: text,
            b: text.as_bytes(),
            pos: 0,
            scratch: String::new(),
            plan,
        }
    }

    #[inline]
    fn err<T>(&self, offset: usize, message: &'static str) -> Result<T, ParseError> {
        Err(ParseError { offset, message })
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn unexpected<T>(&self) -> Result<T, ParseError> {
        match self.peek() {
            None => self.err(self.pos, "unexpected end of JSON input"),
            Some(_) => self.err(self.pos, "unexpected character"),
        }
    }

    fn parse(mut self, max_depth: usize) -> Result<Value, ParseError> {
        let mut frames: Vec<Frame> = Vec::new();
        let mut values: Vec<Value> = Vec::new();
        let mut members: Vec<(PropName, Value)> = Vec::new();
        let mut keys: Vec<PropName> = Vec::new();

        'value: loop {
            self.skip_ws();
            let Some(c) = self.peek() else {
                return self.unexpected();
            };
            let mut val = match c {
                b'"' => {
                    self.pos += 1;
                    if self.plan && measurable(frames.last(), keys.last()) {
                        self.parse_or_measure_string()?
                    } else {
                        Value::String(self.parse_string()?)
                    }
                }
                b'-' | b'0'..=b'9' => Value::Number(self.parse_number()?),
                b'{' => {
                    if frames.len() >= max_depth {
                        return self.err(self.pos, "too deeply nested");
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Object(Object::new())
                    } else {
                        let place = if self.plan {
                            place_of(frames.last(), keys.last(), true)
                        } else {
                            Place::Other
                        };
                        keys.push(self.parse_key()?);
                        frames.push(Frame::Object {
                            start: members.len(),
                            place,
                        });
                        continue 'value;
                    }
                }
                b'[' => {
                    if frames.len() >= max_depth {
                        return self.err(self.pos, "too deeply nested");
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Value::Array(Vec::new())
                    } else {
                        let place = if self.plan {
                            place_of(frames.last(), keys.last(), false)
                        } else {
                            Place::Other
                        };
                        frames.push(Frame::Array {
                            start: values.len(),
                            place,
                        });
                        continue 'value;
                    }
                }
                b't' => self.literal(b"true", Value::Bool(true))?,
                b'f' => self.literal(b"false", Value::Bool(false))?,
                b'n' => self.literal(b"null", Value::Null)?,
                _ => return self.unexpected(),
            };

            // A value is complete: add it to its container, closing
            // containers as long as their closing bracket follows.
            loop {
                let Some(&frame) = frames.last() else {
                    self.skip_ws();
                    if self.pos < self.b.len() {
                        return self
                            .err(self.pos, "unexpected non-whitespace character after JSON");
                    }
                    return Ok(val);
                };
                match frame {
                    Frame::Array { start, .. } => {
                        values.push(val);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                frames.pop();
                                val = Value::Array(values.drain(start..).collect());
                            }
                            None => return self.unexpected(),
                            Some(_) => return self.err(self.pos, "expected ',' or ']'"),
                        }
                    }
                    Frame::Object { start, .. } => {
                        let key = keys.pop().unwrap_or_default();
                        members.push((key, val));
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                keys.push(self.parse_key()?);
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                frames.pop();
                                let entries: Vec<(PropName, Value)> =
                                    members.drain(start..).collect();
                                val = Value::Object(Object::from_props(entries));
                            }
                            None => return self.unexpected(),
                            Some(_) => return self.err(self.pos, "expected ',' or '}'"),
                        }
                    }
                }
            }
        }
    }

    /// `"key"` then `:`, with whitespace around.
    fn parse_key(&mut self) -> Result<PropName, ParseError> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.pos += 1,
            None => return self.unexpected(),
            Some(_) => return self.err(self.pos, "expected a property name"),
        }
        // A known name without escapes is taken without allocating.
        let start = self.pos;
        let end = find_special(self.b, start);
        let known = match self.b.get(end) {
            Some(b'"') => self.b.get(start..end).and_then(known_index),
            _ => None,
        };
        let key = match known {
            Some(i) => {
                self.pos = end + 1;
                PropName(Name::Known(i))
            }
            None => PropName::new(self.parse_string()?),
        };
        self.skip_ws();
        match self.peek() {
            Some(b':') => self.pos += 1,
            None => return self.unexpected(),
            Some(_) => return self.err(self.pos, "expected ':'"),
        }
        Ok(key)
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, ParseError> {
        for (i, &w) in word.iter().enumerate() {
            if self.b.get(self.pos + i) != Some(&w) {
                self.pos += i;
                return self.unexpected();
            }
        }
        self.pos += word.len();
        Ok(v)
    }

    fn parse_number(&mut self) -> Result<f64, ParseError> {
        let start = self.pos;
        let neg = self.peek() == Some(b'-');
        if neg {
            self.pos += 1;
        }
        let mut mantissa: u64 = 0;
        let mut int_digits = 0usize;
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                int_digits = 1;
            }
            Some(b'1'..=b'9') => {
                while let Some(&c) = self.b.get(self.pos) {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    if int_digits < 19 {
                        mantissa = mantissa * 10 + u64::from(c - b'0');
                    }
                    int_digits += 1;
                    self.pos += 1;
                }
            }
            None => return self.unexpected(),
            Some(_) => return self.err(self.pos, "no number after minus sign"),
        }
        let mut plain_int = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            plain_int = false;
            self.digits("unterminated fractional number")?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            plain_int = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits("exponent part is missing a number")?;
        }
        if plain_int && int_digits <= 15 {
            // Exact: below 2^53. `-0` stays negative zero.
            let v = mantissa as f64;
            return Ok(if neg { -v } else { v });
        }
        // The grammar was checked above, and Rust's float parser rounds
        // correctly (to nearest, ties to even; overflow gives infinity)
        // for any number of digits, as JS requires.
        match self.src.get(start..self.pos).map(str::parse::<f64>) {
            Some(Ok(v)) => Ok(v),
            _ => self.err(start, "invalid number"),
        }
    }

    /// One or more ASCII digits.
    fn digits(&mut self, message: &'static str) -> Result<(), ParseError> {
        let first = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == first {
            if self.pos >= self.b.len() {
                return self.unexpected();
            }
            return self.err(self.pos, message);
        }
        Ok(())
    }

    /// The error for a `\u` escape at `i` without four hex digits: the
    /// input ran out, when the digits it has reach its end.
    fn bad_unicode_escape<T>(&self, i: usize) -> Result<T, ParseError> {
        let rest = self.b.get(i + 2..).unwrap_or(&[]);
        if rest.len() < 4 && rest.iter().all(|&c| hex_val(c).is_some()) {
            return self.err(self.b.len(), "unterminated string");
        }
        self.err(i, "bad Unicode escape")
    }

    /// Four hex digits at `at`.
    #[inline]
    fn hex4(&self, at: usize) -> Option<u16> {
        let h = self.b.get(at..at + 4)?;
        let mut v = 0u16;
        for &c in h {
            v = (v << 4) | hex_val(c)?;
        }
        Some(v)
    }

    /// A string value the plan only measures, after its opening quote:
    /// [`Value::Measured`] when it is long, else the string itself.
    fn parse_or_measure_string(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let units = self.measure_string()?;
        if units >= MEASURED_MIN_UNITS {
            return Ok(Value::Measured(units));
        }
        self.pos = start;
        Ok(Value::String(self.parse_string()?))
    }

    /// The UTF-16 length of a string body, after its opening quote, checked
    /// as [`Parser::parse_string`] checks it (same errors) without building
    /// it. The units of the raw span are counted in one pass at the end; each
    /// escape is one unit, so it counts its length in bytes less one (an
    /// escaped pair is two escapes).
    fn measure_string(&mut self) -> Result<usize, ParseError> {
        let start = self.pos;
        let mut escape_extra = 0usize;
        let mut i = find_special(self.b, start);
        loop {
            match self.b.get(i) {
                None => return self.err(i, "unterminated string"),
                Some(b'"') => break,
                Some(b'\\') => match self.b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                        escape_extra += 1;
                        i += 2;
                    }
                    Some(b'u') => {
                        if self.hex4(i + 2).is_none() {
                            return self.bad_unicode_escape(i);
                        }
                        escape_extra += 5;
                        i += 6;
                    }
                    None => return self.err(i + 1, "unterminated string"),
                    Some(_) => return self.err(i + 1, "bad escaped character"),
                },
                Some(_) => return self.err(i, "bad control character in string literal"),
            }
            i = find_special(self.b, i);
        }
        self.pos = i + 1;
        let span = self.b.get(start..i).unwrap_or(&[]);
        Ok(utf16_len_of_utf8(span) - escape_extra)
    }

    /// The body of a string, after its opening quote.
    #[inline]
    fn parse_string(&mut self) -> Result<JsStr, ParseError> {
        let start = self.pos;
        let end = find_special(self.b, start);
        if self.b.get(end) == Some(&b'"') {
            self.pos = end + 1;
            return match self.src.get(start..end) {
                Some(s) => Ok(JsStr::from_str(s)),
                None => self.err(start, "invalid string"),
            };
        }
        self.parse_string_escaped(start, end)
    }

    /// A string with escapes (or an error) from `i` on; `src[start..i]` is
    /// plain text. Builds UTF-8 until a lone surrogate shows up.
    fn parse_string_escaped(&mut self, start: usize, mut i: usize) -> Result<JsStr, ParseError> {
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mut run = start;
        loop {
            match self.src.get(run..i) {
                Some(s) => out.push_str(s),
                None => return self.err(run, "invalid string"),
            }
            match self.b.get(i) {
                None => return self.err(i, "unterminated string"),
                Some(b'"') => {
                    self.pos = i + 1;
                    let s = JsStr::from_str(&out);
                    self.scratch = out;
                    return Ok(s);
                }
                Some(b'\\') => {
                    let simple = match self.b.get(i + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let Some(u) = self.hex4(i + 2) else {
                                return self.bad_unicode_escape(i);
                            };
                            i += 6;
                            if is_high_surrogate(u) {
                                let lo = if self.b.get(i) == Some(&b'\\')
                                    && self.b.get(i + 1) == Some(&b'u')
                                {
                                    self.hex4(i + 2).filter(|&l| is_low_surrogate(l))
                                } else {
                                    None
                                };
                                match lo {
                                    Some(lo) => {
                                        let cp = 0x10000
                                            + ((u32::from(u) - 0xD800) << 10)
                                            + (u32::from(lo) - 0xDC00);
                                        out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                                        i += 6;
                                    }
                                    None => return self.parse_string_wtf8(&out, u, i),
                                }
                            } else if is_low_surrogate(u) {
                                return self.parse_string_wtf8(&out, u, i);
                            } else {
                                out.push(char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}'));
                            }
                            run = i;
                            i = find_special(self.b, i);
                            continue;
                        }
                        None => return self.err(i + 1, "unterminated string"),
                        Some(_) => return self.err(i + 1, "bad escaped character"),
                    };
                    out.push(simple);
                    i += 2;
                }
                Some(_) => return self.err(i, "bad control character in string literal"),
            }
            run = i;
            i = find_special(self.b, i);
        }
    }

    /// The rare path: the string holds a lone surrogate `unit`; `prefix` is
    /// the text before it and `i` the position after its escape. Builds
    /// canonical WTF-8: plain runs are copied as they are, and an escaped
    /// pair still becomes one four-byte char.
    fn parse_string_wtf8(
        &mut self,
        prefix: &str,
        unit: u16,
        mut i: usize,
    ) -> Result<JsStr, ParseError> {
        let mut out: Vec<u8> = Vec::with_capacity(prefix.len() + 64);
        out.extend_from_slice(prefix.as_bytes());
        push_surrogate_wtf8(&mut out, unit);
        let mut buf = [0u8; 4];
        loop {
            let next = find_special(self.b, i);
            match self.b.get(i..next) {
                Some(run) => out.extend_from_slice(run),
                None => return self.err(i, "invalid string"),
            }
            i = next;
            match self.b.get(i) {
                None => return self.err(i, "unterminated string"),
                Some(b'"') => {
                    self.pos = i + 1;
                    // Only a lone surrogate escape leads here, and it stays
                    // lone: the result is not well-formed, so no UTF-8 try.
                    return Ok(JsStr::lone_surrogates_wtf8(out));
                }
                Some(b'\\') => {
                    let c = match self.b.get(i + 1) {
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        Some(b'/') => b'/',
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0C,
                        Some(b'n') => b'\n',
                        Some(b'r') => b'\r',
                        Some(b't') => b'\t',
                        Some(b'u') => {
                            let Some(u) = self.hex4(i + 2) else {
                                return self.bad_unicode_escape(i);
                            };
                            i += 6;
                            let low = if is_high_surrogate(u)
                                && self.b.get(i) == Some(&b'\\')
                                && self.b.get(i + 1) == Some(&b'u')
                            {
                                self.hex4(i + 2).filter(|&l| is_low_surrogate(l))
                            } else {
                                None
                            };
                            if let Some(lo) = low {
                                let cp = 0x10000
                                    + ((u32::from(u) - 0xD800) << 10)
                                    + (u32::from(lo) - 0xDC00);
                                let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                                i += 6;
                            } else if is_surrogate(u) {
                                push_surrogate_wtf8(&mut out, u);
                            } else {
                                let ch = char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}');
                                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            }
                            continue;
                        }
                        None => return self.err(i + 1, "unterminated string"),
                        Some(_) => return self.err(i + 1, "bad escaped character"),
                    };
                    out.push(c);
                    i += 2;
                }
                Some(_) => return self.err(i, "bad control character in string literal"),
            }
        }
    }
}
