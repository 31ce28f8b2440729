//! Property names: the ones session entries use are interned, so parsed
//! objects hold them without an allocation of their own.

use std::fmt;
use std::sync::OnceLock;

use crate::js::string::JsStr;

/// The property names session entries and their messages use. Parsed objects
/// hold these without an allocation of their own: a session file has some
/// thirty of them an entry, and allocating and freeing each one was a large
/// part of reading a file.
pub(super) const KNOWN_NAMES: [&str; 64] = [
    "type",
    "timestamp",
    "id",
    "parentId",
    "content",
    "message",
    "role",
    "output",
    "input",
    "cacheRead",
    "cacheWrite",
    "text",
    "provider",
    "api",
    "model",
    "usage",
    "totalTokens",
    "cost",
    "total",
    "stopReason",
    "name",
    "arguments",
    "toolCallId",
    "toolName",
    "isError",
    "path",
    "command",
    "thinking",
    "details",
    "oldText",
    "newText",
    "diff",
    "offset",
    "limit",
    "summary",
    "fromId",
    "thinkingSignature",
    "customType",
    "display",
    "truncated",
    "exitCode",
    "cancelled",
    "fullOutputPath",
    "thinkingLevel",
    "redacted",
    "modelId",
    "errorMessage",
    "excludeFromContext",
    "partialJson",
    "responseId",
    "firstKeptEntryId",
    "tokensBefore",
    "fromHook",
    "readFiles",
    "modifiedFiles",
    "data",
    "mimeType",
    "label",
    "targetId",
    "version",
    "cwd",
    "textSignature",
    "edits",
    "file_path",
];

/// The known names as `JsStr`s, made once.
pub(super) fn known_names() -> &'static [JsStr] {
    static NAMES: OnceLock<Vec<JsStr>> = OnceLock::new();
    NAMES.get_or_init(|| KNOWN_NAMES.iter().map(|n| JsStr::from_str(n)).collect())
}

/// The index of a known name.
pub(super) fn known_index(name: &[u8]) -> Option<u8> {
    static INDEX: OnceLock<rustc_hash::FxHashMap<&'static [u8], u8>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            KNOWN_NAMES
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_bytes(), i as u8))
                .collect()
        })
        .get(name)
        .copied()
}

/// A property name: a known one (no allocation) or any other. Reads as the
/// `JsStr` it stands for.
#[derive(Clone)]
pub struct PropName(pub(super) Name);

#[derive(Clone)]
pub(super) enum Name {
    Known(u8),
    Other(JsStr),
}

impl PropName {
    pub(super) fn new(name: JsStr) -> PropName {
        match name.as_str().and_then(|s| known_index(s.as_bytes())) {
            Some(i) => PropName(Name::Known(i)),
            None => PropName(Name::Other(name)),
        }
    }

    /// The name as an owned `JsStr`.
    pub fn into_js(self) -> JsStr {
        match self.0 {
            Name::Known(_) => (*self).clone(),
            Name::Other(s) => s,
        }
    }

    /// Whether the name is `key`.
    #[inline]
    pub(super) fn is(&self, key: &str) -> bool {
        match &self.0 {
            Name::Known(i) => KNOWN_NAMES[usize::from(*i)] == key,
            Name::Other(s) => s.eq_str(key),
        }
    }
}

impl std::ops::Deref for PropName {
    type Target = JsStr;

    fn deref(&self) -> &JsStr {
        match &self.0 {
            Name::Known(i) => &known_names()[usize::from(*i)],
            Name::Other(s) => s,
        }
    }
}

impl Default for PropName {
    fn default() -> PropName {
        PropName(Name::Other(JsStr::empty()))
    }
}

impl PartialEq for PropName {
    fn eq(&self, other: &PropName) -> bool {
        match (&self.0, &other.0) {
            (Name::Known(a), Name::Known(b)) => a == b,
            // A known name is never stored as another.
            (Name::Known(_), Name::Other(_)) | (Name::Other(_), Name::Known(_)) => false,
            (Name::Other(a), Name::Other(b)) => a == b,
        }
    }
}

impl Eq for PropName {}

impl std::hash::Hash for PropName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl fmt::Debug for PropName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq<str> for PropName {
    fn eq(&self, other: &str) -> bool {
        self.is(other)
    }
}

impl PartialEq<&str> for PropName {
    fn eq(&self, other: &&str) -> bool {
        self.is(other)
    }
}
