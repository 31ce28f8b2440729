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
