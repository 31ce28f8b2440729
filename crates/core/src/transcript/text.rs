//! Text in the message model, and where a transcript's text goes.
//!
//! The model ([`crate::transcript::llm_message::Message`]) is generic over its text type
//! so a transcript can be built without copying the caller's strings: the
//! binding's text type refers to the JS string itself, and its sink hands
//! those strings to V8 to join. Owned [`JsStr`] is the default everywhere
//! (files, `cargo test`, the compaction job that outlives the call).

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use crate::js::string::{is_high_surrogate, is_low_surrogate, JsStr, Utf16Builder};
use crate::js::view::View;

/// What the JS pass told of a text, so that its characters need not be read:
/// whether it is blank (`s.trim() === ""`), and whether a cut at
/// [`TextHints::CUT`] units splits a surrogate pair. One byte, as texts are
/// made and moved by the thousand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextHints(u8);

impl TextHints {
    /// The unit a pair hint is about (a tool result's cut).
    pub const CUT: usize = crate::transcript::serialize::TOOL_RESULT_MAX_CHARS;
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

    /// Whether the text is blank, if told.
    pub fn blank(self) -> Option<bool> {
        (self.0 & Self::TOLD != 0).then_some(self.0 & Self::BLANK != 0)
    }

    /// Whether a cut at `index` splits a pair, if told.
    pub fn splits_pair_at(self, index: usize) -> Option<bool> {
        (self.0 & Self::TOLD != 0 && index == Self::CUT)
            .then_some(self.0 & Self::SPLITS_PAIR_AT_CUT != 0)
    }
}

/// A piece of text in the message model.
pub trait Text: Clone {
    /// Text made here (labels, placeholders, converted messages).
    fn owned(s: JsStr) -> Self;
    /// Length in UTF-16 code units.
    fn utf16_len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.utf16_len() == 0
    }
    /// JS `s.trim() === ""`.
    fn is_blank(&self) -> bool;
    /// The code unit at `index`, if in range.
    fn code_unit_at(&self, index: usize) -> Option<u16>;
    /// Whether the units at `index - 1` and `index` form a surrogate pair
    /// (so a cut at `index` would split it).
    fn splits_pair_at(&self, index: usize) -> bool {
        splits_pair_by_units(self, index)
    }
    /// Appends the first `units` code units (all of it when shorter).
    fn push_prefix_into(&self, units: usize, out: &mut Utf16Builder);
    /// Appends the whole text.
    fn push_into(&self, out: &mut Utf16Builder) {
        self.push_prefix_into(usize::MAX, out);
    }
    /// The whole text as an owned string.
    fn to_js_str(&self) -> JsStr {
        let mut out = Utf16Builder::new();
        self.push_into(&mut out);
        out.finish()
    }
    /// The text as a key to compare and hash (tool-call ids), borrowed
    /// where the text has its string or its units at hand.
    fn as_key(&self) -> TextKey<'_> {
        TextKey::Str(Cow::Owned(self.to_js_str()))
    }
    /// About how many UTF-16 units a transcript gets of this text, and
    /// whether they are the caller's own string (which a recipe places
    /// without copying) rather than units written here. Read without
    /// reading the text: a string argument's JSON counts as its string and
    /// quotes.
    fn transcript_size(&self) -> TextSize {
        TextSize::Written(self.utf16_len())
    }
}

/// [`Text::transcript_size`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextSize {
    /// The caller's own string, this many units long.
    Callers(usize),
    /// About this many units written here.
    Written(usize),
}

/// A text compared and hashed as its UTF-16 code units, whichever way it
/// is held: a key made from a string equals one made from its units.
#[derive(Debug, Clone)]
pub enum TextKey<'a> {
    Str(Cow<'a, JsStr>),
    Units(&'a [u16]),
}

impl PartialEq for TextKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (TextKey::Str(a), TextKey::Str(b)) => a == b,
            (TextKey::Units(a), TextKey::Units(b)) => a == b,
            (TextKey::Str(s), TextKey::Units(u)) | (TextKey::Units(u), TextKey::Str(s)) => {
                s.code_units().eq(u.iter().copied())
            }
        }
    }
}

impl Eq for TextKey<'_> {}

impl Hash for TextKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut len = 0usize;
        let mut unit = |u: u16| {
            state.write_u16(u);
            len += 1;
        };
        match self {
            TextKey::Str(s) => s.code_units().for_each(&mut unit),
            TextKey::Units(u) => u.iter().copied().for_each(&mut unit),
        }
        state.write_usize(len);
    }
}

/// [`Text::splits_pair_at`] from [`Text::code_unit_at`], for texts whose
/// units are at hand.
pub fn splits_pair_by_units<T: Text>(text: &T, index: usize) -> bool {
    index > 0
        && text.code_unit_at(index - 1).is_some_and(is_high_surrogate)
        && text.code_unit_at(index).is_some_and(is_low_surrogate)
}

/// Whether a UTF-16 unit is whitespace to `String.prototype.trim`.
pub fn is_trim_space(u: u16) -> bool {
    matches!(
        u,
        0x09..=0x0D
            | 0x20
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            | 0xFEFF
    )
}

impl Text for JsStr {
    fn owned(s: JsStr) -> Self {
        s
    }
    fn utf16_len(&self) -> usize {
        JsStr::utf16_len(self)
    }
    fn is_empty(&self) -> bool {
        JsStr::is_empty(self)
    }
    fn is_blank(&self) -> bool {
        self.code_units().all(is_trim_space)
    }
    fn code_unit_at(&self, index: usize) -> Option<u16> {
        JsStr::code_unit_at(self, index)
    }
    fn push_prefix_into(&self, units: usize, out: &mut Utf16Builder) {
        if units >= self.stored_len() {
            // No string has more UTF-16 units than stored units or bytes.
            out.push_js(self);
        } else {
            out.push_js(&self.slice_utf16(0, Some(units as i64)));
        }
    }
    fn to_js_str(&self) -> JsStr {
        self.clone()
    }
    fn as_key(&self) -> TextKey<'_> {
        TextKey::Str(Cow::Borrowed(self))
    }
}

/// How a text type is read from a value of view `V`.
pub trait TextOf<V: View>: Text {
    /// Whether the texts read refer to `V`'s values rather than copy them,
    /// so the values must stay alive (no temporary scopes) while the texts
    /// are in use.
    const BORROWS: bool = false;
    /// The string, when the value is one.
    fn text_of(value: &V) -> Option<Self>;
}

impl<V: View> TextOf<V> for JsStr {
    fn text_of(value: &V) -> Option<Self> {
        value.string()
    }
}

/// Where a transcript is written: literal labels and the model's texts.
pub trait Sink<T: Text> {
    fn push_str(&mut self, s: &str);
    fn push_text(&mut self, text: &T);
    /// The first `units` code units of `text`.
    fn push_text_prefix(&mut self, text: &T, units: usize);
}

impl<T: Text> Sink<T> for Utf16Builder {
    fn push_str(&mut self, s: &str) {
        Utf16Builder::push_str(self, s)
    }
    fn push_text(&mut self, text: &T) {
        text.push_into(self)
    }
    fn push_text_prefix(&mut self, text: &T, units: usize) {
        text.push_prefix_into(units, self)
    }
}

#[cfg(test)]
mod tests;
