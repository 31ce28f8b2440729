//! What a JS pass measured of message contents for the cut's estimates
//! (`lib/entry-facts.js`'s `readMeasureFacts`): the planner asks for the
//! message entries it is about to estimate, a batch at a time from the
//! end (`planCut` answers `{ measure }`), and takes their sizes from here
//! instead of reading every block through N-API. The rule that turns
//! sizes into an estimate stays in [`crate::tokens::estimate`]; these are
//! only the values: each block's type and the UTF-16 lengths of its
//! strings (and of its `arguments`' JSON). A message the pass could not
//! read (a value of a type the estimate must judge, a read that threw) is
//! not measured, and the planner reads it itself, as without facts.
//!
//! A measures chunk ([`MeasuresChunk`]), for the entries `at[k]`
//! (codes in [`crate::boundary_codes::entry_facts`]):
//! - `forms[k]`: `MEASURE_NOT_READ`, `MEASURE_TEXT` (a string `content`:
//!   one length) or `MEASURE_BLOCKS` (an array: `counts[k]` blocks);
//! - `blocks`: each block's type code, message after message
//!   (`BLOCK_TEXT` and `BLOCK_THINKING` with one length, their string
//!   `text` or `thinking`; `BLOCK_TOOL_CALL` with two, its string `name`
//!   and `JSON.stringify(arguments)`; `BLOCK_IMAGE` and `BLOCK_OTHER`, any
//!   other `type`, with none);
//! - `lengths`: those lengths in order.

use rustc_hash::FxHashMap;

use crate::boundary_codes::entry_facts as code;
use crate::error::{Error, Result};

/// One content block as measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockSize {
    /// A `text` block and its string `text`'s length.
    Text(u32),
    /// A `thinking` block and its string `thinking`'s length.
    Thinking(u32),
    /// A `toolCall` block: its string `name`'s length and the length of
    /// `JSON.stringify(arguments)`, a string.
    ToolCall {
        name: u32,
        json: u32,
    },
    Image,
    /// A block of any other `type`.
    Other,
}

/// A message's `content` as measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentSize<'a> {
    /// A string of this length.
    Text(u32),
    /// An array of these blocks.
    Blocks(&'a [BlockSize]),
}

/// Where a measured content is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    Text(u32),
    Blocks(u32, u32),
}

/// The measures pushed so far, by entry.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Measures {
    /// Each entry asked for or pushed; `None` where it was not measured.
    by_entry: FxHashMap<u32, Option<Stored>>,
    blocks: Vec<BlockSize>,
}

/// A measures chunk as the JS pass sends it (see the module docs).
pub struct MeasuresChunk<'a> {
    pub at: &'a [u32],
    pub forms: &'a [u8],
    pub counts: &'a [u32],
    pub blocks: &'a [u8],
    pub lengths: &'a [u32],
}

fn malformed(what: &str) -> Error {
    Error::internal(format!("malformed measures: {what}"))
}

impl Measures {
    /// Entry `i`'s content size: `None` where it was never asked for,
    /// `Some(None)` where it was but is not measured.
    pub fn content(&self, i: usize) -> Option<Option<ContentSize<'_>>> {
        let stored = *self.by_entry.get(&u32::try_from(i).ok()?)?;
        Some(stored.and_then(|s| {
            match s {
                Stored::Text(n) => Some(ContentSize::Text(n)),
                Stored::Blocks(a, b) => self
                    .blocks
                    .get(a as usize..b as usize)
                    .map(ContentSize::Blocks),
            }
        }))
    }

    /// Empties them, keeping their room.
    pub fn clear(&mut self) {
        self.by_entry.clear();
        self.blocks.clear();
    }

    /// Records entry `i` as asked for: it is then measured by a push, or
    /// read by the planner, and never asked for again.
    pub fn ask(&mut self, i: u32) {
        self.by_entry.entry(i).or_insert(None);
    }

    /// Adds a measures chunk for entries below `len`. A malformed chunk is
    /// an error and adds nothing.
    pub fn push(&mut self, chunk: &MeasuresChunk, len: usize) -> Result<()> {
        let blocks_before = self.blocks.len();
        match self.read(chunk, len) {
            Ok(read) => {
                for (i, stored) in read {
                    self.by_entry.insert(i, stored);
                }
                Ok(())
            }
            Err(err) => {
                self.blocks.truncate(blocks_before);
                Err(err)
            }
        }
    }

    fn read(&mut self, chunk: &MeasuresChunk, len: usize) -> Result<Vec<(u32, Option<Stored>)>> {
        let count = chunk.at.len();
        if chunk.forms.len() != count || chunk.counts.len() != count {
            return Err(malformed("arrays of different lengths"));
        }
        let mut types = chunk.blocks.iter();
        let mut lengths = chunk.lengths.iter();
        let mut length = || {
            lengths
                .next()
                .copied()
                .ok_or_else(|| malformed("too few lengths"))
        };
        let mut out = Vec::with_capacity(count);
        for k in 0..count {
            let entry = chunk.at[k];
            if entry as usize >= len {
                return Err(malformed("a message of no entry"));
            }
            let stored = match chunk.forms[k] {
                code::MEASURE_NOT_READ => None,
                code::MEASURE_TEXT => Some(Stored::Text(length()?)),
                code::MEASURE_BLOCKS => {
                    let start = self.blocks.len();
                    for _ in 0..chunk.counts[k] {
                        let ty = *types.next().ok_or_else(|| malformed("too few blocks"))?;
                        self.blocks.push(match ty {
                            code::BLOCK_TEXT => BlockSize::Text(length()?),
                            code::BLOCK_THINKING => BlockSize::Thinking(length()?),
                            code::BLOCK_TOOL_CALL => BlockSize::ToolCall {
                                name: length()?,
                                json: length()?,
                            },
                            code::BLOCK_IMAGE => BlockSize::Image,
                            code::BLOCK_OTHER => BlockSize::Other,
                            _ => return Err(malformed("a block code")),
                        });
                    }
                    Some(Stored::Blocks(start as u32, self.blocks.len() as u32))
                }
                _ => return Err(malformed("a form code")),
            };
            if stored.is_none() && chunk.counts[k] != 0 {
                return Err(malformed("blocks of a message not measured"));
            }
            out.push((entry, stored));
        }
        if types.next().is_some() || length().is_ok() {
            return Err(malformed("blocks or lengths left over"));
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::agent_line::AgentLine;
    use crate::js::json::view::Val;
    use crate::js::json::{parse, Value};
    use crate::session::model::Role;
    use crate::tokens::estimate::{measure_message_as, measured_chars, Chars, Content};

    /// A content's sizes as `lib/entry-facts.js` measures them (`None`
    /// where it leaves the message not measured).
    fn sizes(content: &Value) -> Option<(Option<u32>, Vec<BlockSize>)> {
        let len = |v: &Value| v.as_js_str().map(|s| s.len() as u32);
        if let Some(n) = len(content) {
            return Some((Some(n), Vec::new()));
        }
        let mut out = Vec::new();
        for block in content.as_array()? {
            block.as_object()?;
            out.push(match block.get("type").and_then(Value::as_str) {
                Some("text") => BlockSize::Text(len(block.get("text")?)?),
                Some("thinking") => BlockSize::Thinking(len(block.get("thinking")?)?),
                Some("toolCall") => BlockSize::ToolCall {
                    name: len(block.get("name")?)?,
                    json: block.get("arguments")?.json_len() as u32,
                },
                Some("image") => BlockSize::Image,
                _ => BlockSize::Other,
            });
        }
        Some((None, out))
    }

    #[test]
    fn measured_chars_are_the_estimates_measure_wherever_they_settle_it() {
        let contents = [
            r#""hello""#,
            r#""""#,
            r#"[]"#,
            r#"[{"type":"text","text":"ab"},{"type":"text","text":""}]"#,
            r#"[{"type":"image","data":"x"},{"type":"text","text":"\ud800z"}]"#,
            r#"[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"ok"}]"#,
            r#"[{"type":"toolCall","name":"read","arguments":{"path":"a\"b\\c\u0001"}}]"#,
            r#"[{"type":"toolCall","name":"x","arguments":[1,"\u2028",null]},{"type":"other"},{"text":"t"}]"#,
            r#"[{"type":"image"},{"type":"thinking","thinking":""},{"type":"toolCall","name":"","arguments":"s"}]"#,
        ];
        let rules = &AgentLine::V0_78.tokens;
        let mut settled = 0;
        for content in contents {
            let value = parse(content).unwrap();
            let (text, blocks) = sizes(&value).expect("every content here is measured");
            let size = match text {
                Some(n) => ContentSize::Text(n),
                None => ContentSize::Blocks(&blocks),
            };
            for role in [
                Role::User,
                Role::Custom,
                Role::ToolResult,
                Role::Assistant,
                Role::BashExecution,
                Role::System,
            ] {
                let message = parse(&format!(r#"{{"content":{content}}}"#)).unwrap();
                let read =
                    measure_message_as(&Val::new(&message), role, Content::Own, &Chars, rules);
                match measured_chars(role, size) {
                    Some(chars) => {
                        assert_eq!(Ok(chars), read, "{role:?} {content}");
                        settled += 1;
                    }
                    // Unsettled: another role's rule, or an assistant's string content (rejected).
                    None => assert!(
                        !matches!(
                            role,
                            Role::User | Role::Custom | Role::ToolResult | Role::Assistant
                        ) || (role == Role::Assistant && text.is_some()),
                        "{role:?} {content}"
                    ),
                }
            }
        }
        assert_eq!(settled, 2 * 3 + 7 * 4);
    }

    #[test]
    fn a_malformed_chunk_adds_nothing() {
        let mut measures = Measures::default();
        let good = MeasuresChunk {
            at: &[1, 0],
            forms: &[code::MEASURE_BLOCKS, code::MEASURE_TEXT],
            counts: &[2, 0],
            blocks: &[code::BLOCK_TOOL_CALL, code::BLOCK_IMAGE],
            lengths: &[4, 10, 7],
        };
        let bad = MeasuresChunk {
            lengths: &[4, 10],
            ..good
        };
        assert!(measures.push(&bad, 2).is_err());
        assert_eq!(measures, Measures::default());
        measures.push(&good, 2).unwrap();
        assert_eq!(
            measures.content(1),
            Some(Some(ContentSize::Blocks(&[
                BlockSize::ToolCall { name: 4, json: 10 },
                BlockSize::Image
            ])))
        );
        assert_eq!(measures.content(0), Some(Some(ContentSize::Text(7))));
        assert_eq!(measures.content(2), None);
        measures.ask(2);
        assert_eq!(measures.content(2), Some(None));
        assert!(measures.push(&good, 1).is_err());
    }
}
