//! The core's error type. The binding turns it into a JS `TypeError`,
//! `RangeError` or `Error` in one place; messages name the entry index and field.
//!
//! Messages and locations are JS strings ([`JsStr`]): the text a message
//! quotes from the caller (a model's `errorMessage`, an entry id) may hold
//! lone surrogates, and the JS error must carry it as it came.

use std::fmt;

use crate::js::string::{JsStr, Utf16Builder};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A value has the wrong type or is missing: becomes a JS `TypeError`.
    Type,
    /// An index or size is outside what the input allows: a JS `RangeError`.
    Range,
    /// Anything else the input makes impossible (parent cycles, unreadable files): a JS `Error`.
    Invalid,
    /// A file the system would not open or read, for a reason Node's `fs`
    /// names: a JS `Error` whose `code` is that name (`ENOENT`, `EACCES`, ...).
    Os(&'static str),
    /// A JavaScript exception is pending (a getter or `toJSON` threw); the binding rethrows it as is.
    JsException,
    /// The planner stopped to ask the JS pass for facts it can read
    /// faster (`Entries::wanted_measure` says which); `planCut` answers it
    /// with a request, and it never reaches JS as an error.
    FactsWanted,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// Where the bad value sits, outermost first, e.g. `["pathEntries[3]", "message", "role"]`.
    pub path: Vec<JsStr>,
    pub message: JsStr,
    /// `path` names the place from the top already (see [`Error::rooted_at`]):
    /// outer [`Error::within`]s leave it as it is.
    pub rooted: bool,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn type_error(field: impl Into<JsStr>, message: impl Into<JsStr>) -> Self {
        let field = field.into();
        Error {
            kind: ErrorKind::Type,
            path: if field.is_empty() {
                Vec::new()
            } else {
                vec![field]
            },
            message: message.into(),
            rooted: false,
        }
    }

    pub fn range(field: impl Into<JsStr>, message: impl Into<JsStr>) -> Self {
        Error {
            kind: ErrorKind::Range,
            ..Error::type_error(field, message)
        }
    }

    /// The `RangeError` JS throws for a string past V8's longest
    /// ([`crate::js::string::MAX_STRING_UNITS`]).
    pub fn string_too_long() -> Self {
        Error::range("", "Invalid string length")
    }

    pub fn invalid(message: impl Into<JsStr>) -> Self {
        Error {
            kind: ErrorKind::Invalid,
            path: Vec::new(),
            message: message.into(),
            rooted: false,
        }
    }

    /// An error the caller's input cannot cause (a bug of this package's):
    /// `what` after the words that ask for a report.
    pub fn internal(what: impl std::fmt::Display) -> Self {
        Error::invalid(format!(
            "prime-compaction internal error (a bug, please report it): {what}"
        ))
    }

    /// See [`ErrorKind::Os`].
    pub fn os(code: &'static str, message: impl Into<JsStr>) -> Self {
        Error {
            kind: ErrorKind::Os(code),
            ..Error::invalid(message)
        }
    }

    pub fn js_exception() -> Self {
        Error {
            kind: ErrorKind::JsException,
            path: Vec::new(),
            message: "a JavaScript exception was thrown".into(),
            rooted: false,
        }
    }

    /// See [`ErrorKind::FactsWanted`].
    pub fn facts_wanted() -> Self {
        Error {
            kind: ErrorKind::FactsWanted,
            ..Error::internal("facts wanted but not asked for")
        }
    }

    /// Prefixes the error's location with an outer segment (an argument name,
    /// `entries[4]`, a field), unless it is [`rooted`](Error::rooted_at).
    pub fn within(mut self, segment: impl Into<JsStr>) -> Self {
        if !self.rooted {
            self.path.insert(0, segment.into());
        }
        self
    }

    /// Names a value that sits elsewhere than the scope it is read in (a
    /// context edit's replacement, read as the content of the message it
    /// edits): `outer` then the path so far, left as it is by the scopes
    /// the error passes on its way out.
    pub fn rooted_at(mut self, outer: impl IntoIterator<Item = JsStr>) -> Self {
        let mut path: Vec<JsStr> = outer.into_iter().collect();
        path.append(&mut self.path);
        self.path = path;
        self.rooted = true;
        self
    }

    /// The dotted location, e.g. `pathEntries[3].message.role` (`[k]` segments attach without a dot).
    pub fn location(&self) -> JsStr {
        let mut out = Utf16Builder::new();
        self.push_location(&mut out);
        out.finish()
    }

    fn push_location(&self, out: &mut Utf16Builder) {
        for seg in &self.path {
            if !out.is_empty() && seg.code_unit_at(0) != Some(u16::from(b'[')) {
                out.push_str(".");
            }
            out.push_js(seg);
        }
    }

    /// The whole message the JS error carries, `location: message`, exactly
    /// (lone surrogates included).
    pub fn text(&self) -> JsStr {
        let mut out = Utf16Builder::new();
        self.push_location(&mut out);
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_js(&self.message);
        out.finish()
    }
}

/// Past this many UTF-16 units, [`quoted`] shows only the start of a string.
const QUOTED_MAX_UNITS: usize = 256;
/// How much of a longer string [`quoted`] shows.
const QUOTED_START_UNITS: usize = 200;

/// `"` + `s` + `"`, for naming a caller's string (an id, a key) in a
/// message: `"` and `\` and control characters escaped as `JSON.stringify`
/// escapes them, everything else, lone surrogates included, as it is. A
/// string longer than `QUOTED_MAX_UNITS` shows its start and its length, so
/// a message never echoes a megabyte of input.
pub fn quoted(s: &JsStr) -> JsStr {
    let len = s.utf16_len();
    let shown = if len > QUOTED_MAX_UNITS {
        QUOTED_START_UNITS
    } else {
        len
    };
    let mut out = Utf16Builder::new();
    out.push_str("\"");
    for u in s.code_units().take(shown) {
        match u {
            0x22 => out.push_str("\\\""),
            0x5C => out.push_str("\\\\"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            0x09 => out.push_str("\\t"),
            u if u < 0x20 => out.push_str(&format!("\\u{u:04x}")),
            u => out.push_unit(u),
        }
    }
    if shown < len {
        out.push_str(&format!("…\" (a string of {len} characters)"));
    } else {
        out.push_str("\"");
    }
    out.finish()
}

/// Rust and JS text joined into one message; JS text kept exactly.
pub fn join(parts: &[&dyn AsMessagePart]) -> JsStr {
    let mut out = Utf16Builder::new();
    for p in parts {
        p.push_into(&mut out);
    }
    out.finish()
}

/// A piece of an error message: Rust text or a JS string.
pub trait AsMessagePart {
    fn push_into(&self, out: &mut Utf16Builder);
}

impl AsMessagePart for str {
    fn push_into(&self, out: &mut Utf16Builder) {
        out.push_str(self);
    }
}

impl AsMessagePart for &str {
    fn push_into(&self, out: &mut Utf16Builder) {
        out.push_str(self);
    }
}

impl AsMessagePart for String {
    fn push_into(&self, out: &mut Utf16Builder) {
        out.push_str(self);
    }
}

impl AsMessagePart for JsStr {
    fn push_into(&self, out: &mut Utf16Builder) {
        out.push_js(self);
    }
}

/// Lossy (a lone surrogate shows as U+FFFD): for logs and Rust-side tests.
/// The binding builds the JS error from [`Error::text`].
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text().to_string_lossy())
    }
}

impl std::error::Error for Error {}

/// Adds location context to results as they bubble out of nested reads.
pub trait Context<T> {
    fn within(self, segment: impl Into<JsStr>) -> Result<T>;
    fn within_with<S: Into<JsStr>>(self, segment: impl FnOnce() -> S) -> Result<T>;
}

impl<T> Context<T> for Result<T> {
    fn within(self, segment: impl Into<JsStr>) -> Result<T> {
        self.map_err(|e| e.within(segment))
    }
    fn within_with<S: Into<JsStr>>(self, segment: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| e.within(segment()))
    }
}

#[cfg(test)]
mod tests;
