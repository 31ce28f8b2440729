//! The core's error type. The binding turns it into a JS `TypeError`/`Error`
//! in one place; messages name the entry index and field.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A value has the wrong type or is missing: becomes a JS `TypeError`.
    Type,
    /// An index or size is outside what the input allows: a JS `RangeError`.
    Range,
    /// Anything else the input makes impossible (parent cycles, unreadable files): a JS `Error`.
    Invalid,
    /// A JavaScript exception is pending (a getter or `toJSON` threw); the binding rethrows it as is.
    JsException,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// Where the bad value sits, outermost first, e.g. `["pathEntries[3]", "message", "role"]`.
    pub path: Vec<String>,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn type_error(field: &str, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Type,
            path: if field.is_empty() {
                Vec::new()
            } else {
                vec![field.to_string()]
            },
            message: message.into(),
        }
    }

    pub fn range(field: &str, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Range,
            ..Error::type_error(field, message)
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Invalid,
            path: Vec::new(),
            message: message.into(),
        }
    }

    pub fn js_exception() -> Self {
        Error {
            kind: ErrorKind::JsException,
            path: Vec::new(),
            message: "a JavaScript exception was thrown".into(),
        }
    }

    /// Prefixes the error's location with an outer segment (an argument name, `entries[4]`, a field).
    pub fn within(mut self, segment: impl Into<String>) -> Self {
        self.path.insert(0, segment.into());
        self
    }

    /// The dotted location, e.g. `pathEntries[3].message.role` (`[k]` segments attach without a dot).
    pub fn location(&self) -> String {
        let mut out = String::new();
        for seg in &self.path {
            if !out.is_empty() && !seg.starts_with('[') {
                out.push('.');
            }
            out.push_str(seg);
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loc = self.location();
        if loc.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{loc}: {}", self.message)
        }
    }
}

impl std::error::Error for Error {}

/// Adds location context to results as they bubble out of nested reads.
pub trait Context<T> {
    fn within(self, segment: impl Into<String>) -> Result<T>;
    fn within_with(self, segment: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for Result<T> {
    fn within(self, segment: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.within(segment))
    }
    fn within_with(self, segment: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| e.within(segment()))
    }
}

#[cfg(test)]
mod tests;
