//! [`Utf8Text`]: the UTF-8 of a well-formed [`JsStr`](super::JsStr), kept
//! inline when it is short.
//!
//! Most strings the core reads are short: entry ids (eight hex digits from
//! the agent), parent ids, tool names, paths, roles. Boxed, each was an
//! allocation and a free; at 1k entries, `malloc` and `free` were about a
//! quarter of `prepareCompaction`'s native time. Up to [`INLINE`] bytes live
//! in the value itself, which is no larger than the box it replaces.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Bytes kept inline: the most that fit beside the length in the size of a
/// boxed `str` plus the enum's tag.
pub const INLINE: usize = 22;

/// A well-formed string's UTF-8: inline up to [`INLINE`] bytes, else boxed.
/// Equal, ordered and hashed as the `str` it holds, wherever it lives.
/// Inline, the bytes past `len` are zero (every constructor writes them so,
/// and nothing changes them), which equality relies on.
#[derive(Clone)]
pub enum Utf8Text {
    Inline(Inline),
    Boxed(Box<str>),
}

/// An inline text's bytes: private, so only this module's constructors,
/// which write UTF-8 (or ASCII) and zeros past `len`, make one.
#[derive(Clone)]
pub struct Inline {
    len: u8,
    bytes: [u8; INLINE],
}

impl Utf8Text {
    /// ASCII code units, all below 0x80, as text; `None` when they do not
    /// fit inline (nothing allocated either way).
    pub fn inline_ascii(units: &[u16]) -> Option<Utf8Text> {
        if units.len() > INLINE {
            return None;
        }
        let mut bytes = [0u8; INLINE];
        for (b, &u) in bytes.iter_mut().zip(units) {
            if u >= 0x80 {
                return None;
            }
            *b = u as u8;
        }
        Some(Utf8Text::Inline(Inline {
            len: units.len() as u8,
            bytes,
        }))
    }

    /// The empty inline text.
    pub const EMPTY: Utf8Text = Utf8Text::Inline(Inline {
        len: 0,
        bytes: [0; INLINE],
    });

    /// Makes this text, when it is empty and inline (as [`Utf8Text::EMPTY`]),
    /// the ASCII code units `units`, in place; false, changing nothing, when
    /// it is not empty or they do not fit inline or are not all ASCII (all
    /// checked first, so the narrowing is one loop without a branch). For
    /// texts in a vector: written where it lies, a text is not read back in
    /// wider pieces right after, which stalls on store forwarding when one
    /// is made and then moved into place.
    pub fn fill_inline_ascii(&mut self, units: &[u16]) -> bool {
        let Utf8Text::Inline(Inline { len, bytes }) = self else {
            return false;
        };
        if units.len() > INLINE || *len != 0 || units.iter().fold(0, |all, &u| all | u) >= 0x80 {
            return false;
        }
        for (b, &u) in bytes.iter_mut().zip(units) {
            *b = u as u8;
        }
        *len = units.len() as u8;
        true
    }

    pub fn as_str(&self) -> &str {
        match self {
            Utf8Text::Inline(Inline { len, bytes }) => {
                let bytes = &bytes[..usize::from(*len)];
                // SAFETY: every constructor fills `bytes[..len]` from a
                // `str` or from ASCII units, so it is valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Utf8Text::Boxed(s) => s,
        }
    }
}

impl Deref for Utf8Text {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Utf8Text {
    fn from(s: &str) -> Utf8Text {
        if s.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            return Utf8Text::Inline(Inline {
                len: s.len() as u8,
                bytes,
            });
        }
        Utf8Text::Boxed(Box::from(s))
    }
}

impl From<String> for Utf8Text {
    fn from(s: String) -> Utf8Text {
        if s.len() <= INLINE {
            return Utf8Text::from(s.as_str());
        }
        Utf8Text::Boxed(s.into_boxed_str())
    }
}

impl From<Box<str>> for Utf8Text {
    fn from(s: Box<str>) -> Utf8Text {
        if s.len() <= INLINE {
            return Utf8Text::from(&*s);
        }
        Utf8Text::Boxed(s)
    }
}

impl PartialEq for Utf8Text {
    /// Two inline texts compare as their fixed-size arrays, without a call
    /// into `memcmp` (the bytes past `len` are always zero): ids are looked
    /// up by linear scans (`findIndex` in the reference) over every entry.
    #[inline]
    fn eq(&self, other: &Utf8Text) -> bool {
        match (self, other) {
            (
                Utf8Text::Inline(Inline { len: a, bytes: x }),
                Utf8Text::Inline(Inline { len: b, bytes: y }),
            ) => a == b && x == y,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for Utf8Text {}

impl Hash for Utf8Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Utf8Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
