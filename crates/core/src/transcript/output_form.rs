//! Which form a summary transcript goes back to JS in: a recipe
//! ([`crate::transcript::recipe`]), which JS joins from the caller's own
//! strings and the strings made here, or one string written whole here.
//!
//! A recipe copies each of the caller's characters once, in the join, but
//! every long text made here (a tool call's argument as JSON, most of a
//! real session's summary transcript, whose tool results are elided) is a
//! JS string of its own first, which V8's young collections copy while
//! the call holds it. Written whole, the caller's texts are copied twice
//! (read here, then into the one string) and the made ones once. So a
//! transcript is written whole when the texts made here are at least as
//! long as the caller's it places, and all of them fit in one JS string
//! (docs/serialization.md has the figures). Only a transcript with long
//! texts written here is counted: without them, a recipe makes no long
//! strings, and the count would be a walk over every message for nothing.

use crate::js::string::MAX_STRING_UNITS;
use crate::transcript::llm_message::{Block, Message, UserContent};
use crate::transcript::text::{Text, TextSize};

/// Texts past this many UTF-16 units in all go back as a recipe: they
/// cannot be one string, and the recipe's join throws the `RangeError` the
/// reference's join throws.
pub const WHOLE_MAX_UNITS: usize = MAX_STRING_UNITS;

/// The sizes of a summary transcript of `messages` when it is to be
/// written whole, `None` for a recipe: a recipe unless texts written here
/// are long (`long_written`: the JS pass handed over string arguments whose
/// JSON is written here, as a recipe's strings of their own), and then as
/// [`TextSizes::fit_whole`] says. Without long written texts the messages
/// are not walked.
pub fn written_whole<T: Text>(messages: &[Message<T>], long_written: bool) -> Option<TextSizes> {
    if !long_written {
        return None;
    }
    Some(TextSizes::of(messages)).filter(|sizes| sizes.fit_whole())
}

/// The sizes of the texts a summary transcript shows, as
/// [`Text::transcript_size`] tells them: the caller's (placed) and the made
/// ones (written). Tool results are left out: the projection elides all
/// but a few of their bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextSizes {
    pub placed: usize,
    pub written: usize,
}

impl TextSizes {
    /// The sizes of `messages`' texts; the count stops once the two pass
    /// [`WHOLE_MAX_UNITS`] (the form is a recipe then).
    pub fn of<T: Text>(messages: &[Message<T>]) -> TextSizes {
        TextSizes::counted_within(messages, WHOLE_MAX_UNITS)
    }

    /// The sizes of `messages`' texts, the count stopping once the two pass
    /// `max`.
    fn counted_within<T: Text>(messages: &[Message<T>], max: usize) -> TextSizes {
        let mut sizes = TextSizes::default();
        for message in messages {
            sizes.add_message(message);
            if sizes.placed.saturating_add(sizes.written) > max {
                break;
            }
        }
        sizes
    }

    /// Counts one more message's texts.
    fn add_message<T: Text>(&mut self, message: &Message<T>) {
        match message {
            Message::User(user) => match &user.content {
                UserContent::Text(text) => self.add(text),
                UserContent::Blocks(blocks) => self.add_blocks(blocks),
            },
            Message::Assistant(assistant) => self.add_blocks(&assistant.content),
            Message::ToolResult(_) => {}
        }
    }

    fn add<T: Text>(&mut self, text: &T) {
        match text.transcript_size() {
            TextSize::Callers(n) => self.placed = self.placed.saturating_add(n),
            TextSize::Written(n) => self.written = self.written.saturating_add(n),
        }
    }

    fn add_blocks<T: Text>(&mut self, blocks: &[Block<T>]) {
        for block in blocks {
            match block {
                Block::Text(text) | Block::Thinking { thinking: text, .. } => self.add(text),
                Block::ToolCall(call) => {
                    for (key, value) in &call.args {
                        self.add(key);
                        if let Some(value) = value {
                            self.add(value);
                        }
                    }
                }
                Block::Image { .. } => {}
            }
        }
    }

    /// Whether texts of these sizes are written whole: the written ones at
    /// least as many as the placed ones, all of them within
    /// [`WHOLE_MAX_UNITS`].
    pub fn fit_whole(self) -> bool {
        self.fit_within(WHOLE_MAX_UNITS)
    }

    /// Whether the written texts are at least as many as the placed ones,
    /// all of them within `max` units.
    fn fit_within(self, max: usize) -> bool {
        self.written >= self.placed && self.written.saturating_add(self.placed) <= max
    }

    /// Room for the transcript written whole: the texts and an eighth more
    /// for its labels.
    pub fn capacity(self) -> usize {
        let texts = self.texts();
        texts.saturating_add(texts / 8)
    }

    /// The units of the texts alone, which the transcript holds at least.
    pub fn texts(self) -> usize {
        self.written.saturating_add(self.placed)
    }
}

#[cfg(test)]
mod tests;
