//! What a JS pass read ahead of the planner (`lib/entry-facts.js` writes
//! it, in chunks), so the planner takes it from here instead of reading it
//! through N-API, one call per property: first each entry's kind, `id` and
//! `parentId`; then the sizes of the kept messages the cut's estimates
//! ask for ([`crate::session::measures`]); then, for the message entries
//! the cut names ([`crate::plan::prepare::CutPlan::message_entries`]), whether a
//! message's content is nullish and the `name` and `arguments.path` of the
//! calls its file operations come from. A fact the pass could not read (a
//! value of an unexpected type, a read that threw) is absent, and the
//! planner reads and judges that entry itself, as without facts. The rules
//! (which calls are file operations, what an id must be) stay with the
//! planner; the facts are only values.
//!
//! The wire formats (codes in [`crate::boundary_codes::entry_facts`]). An
//! entries chunk ([`EntriesChunk`]), for entries `first..first + n`:
//! - `kinds[k]`: entry `first + k`'s kind code ([`EntryKind::from_code`]);
//! - `ids[k]`: bits 0–1 the `id` (`ID_NOT_READ`, `ID_ABSENT`: undefined,
//!   `ID_STRING`), bits 2–3 the `parentId` (the same codes, absent being
//!   undefined or null, or `ID_PREVIOUS`: the string `id` of the entry
//!   before, which the chunk holds; in a linear session, most are);
//! - `lengths`: the UTF-16 length of each string of `text` in order: per
//!   entry its string `id`, then its `ID_STRING` `parentId`.
//!
//! A messages chunk ([`MessagesChunk`]), for the entries `at[k]`:
//! - `contents[k]`: `CONTENT_PRESENT` or `CONTENT_NULLISH` (else not read),
//!   plus `CALLS_READ` when `calls[k]` is its calls' number: an assistant's
//!   `toolCall` blocks, or the records of a tool result's
//!   `nestedCalls.calls`, that have a string `name` and a string
//!   `arguments.path`; none for a tool result without such calls or a
//!   message of another role (kept as the file operations they are,
//!   [`file_tool_op`], [`insert_call_path`]);
//! - `refs`: for each listed call, in order, the index of its name and of
//!   its path among the chunk's strings;
//! - `lengths`, `text`: the chunk's strings, each once: the length of each,
//!   and their units one after another.
//!
//! The strings of every messages chunk, one chunk after another, are the
//! ones the JS pass keeps for the result: a path a chunk gave is named by
//! its place among them ([`EntryFacts::path_source`]).

use crate::boundary_codes::entry_facts as code;
use crate::error::{Error, Result};
use crate::js::string::{JsStr, Utf8Text};
use crate::plan::file_ops::{file_tool_op, insert_call_path, FileOpKind, PathSet};
use crate::session::context::{Id, Ids};
use crate::session::id_index::all_distinct;
use crate::session::measures::{Measures, MeasuresChunk};
use crate::session::model::EntryKind;
use crate::tokens::estimate::measured_by_content;

/// The most messages one ask for measures names.
pub const MEASURES_ASKED: usize = 256;

/// The most entries [`EntryFacts::with_capacity`] makes room for (the JS
/// pass reads arrays up to this long; a sparse one's `length` costs its
/// caller nothing).
pub const MAX_CAPACITY_HINT: usize = 1 << 23;

/// One message entry's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageFacts {
    /// `message.content` is undefined or null.
    pub content_nullish: bool,
    /// Where its file operations are in [`EntryFacts::file_ops`], when its
    /// calls were read.
    calls: Option<(u32, u32)>,
}

impl MessageFacts {
    /// Whether its calls were read.
    pub fn calls_read(&self) -> bool {
        self.calls.is_some()
    }
}

/// The facts of every entry pushed so far.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct EntryFacts {
    kinds: Vec<Option<EntryKind>>,
    /// Every entry's `id` and `parentId` (`None` where not read).
    ids: Ids,
    /// Whether entry `i`'s kind, `id` and `parentId` were all read.
    ids_read: Vec<bool>,
    /// How many entries have `ids_read` false.
    ids_unread: usize,
    messages: Vec<Option<MessageFacts>>,
    /// The file operations of the calls read, message after message, each
    /// path by its place in `paths`.
    file_ops: Vec<(FileOpKind, u32)>,
    /// Every path of `file_ops`, once.
    paths: PathSet,
    /// Where each of `paths` was first given: its place among the strings
    /// of every messages chunk pushed, in order (the JS pass keeps those
    /// strings, so a plan can name a path by it rather than make it again).
    path_sources: Vec<u32>,
    /// How many strings the messages chunks pushed so far held.
    strings_pushed: u32,
    /// The path to the last entry, once [`EntryFacts::finish`] found it.
    path: Option<Vec<usize>>,
    /// What the cut's estimates asked to be measured, and the measures.
    measures: Measures,
}

/// An entries chunk as the JS pass sends it (see the module docs).
pub struct EntriesChunk<'a> {
    pub first: usize,
    pub kinds: &'a [u8],
    pub ids: &'a [u8],
    pub lengths: &'a [u32],
    pub text: &'a [u16],
}

/// A messages chunk as the JS pass sends it (see the module docs).
pub struct MessagesChunk<'a> {
    pub at: &'a [u32],
    pub contents: &'a [u8],
    pub calls: &'a [u32],
    pub refs: &'a [u32],
    pub lengths: &'a [u32],
    pub text: &'a [u16],
}

fn malformed(what: &str) -> Error {
    Error::internal(format!("malformed entry facts: {what}"))
}

/// Takes the strings of `text` one length at a time.
struct Strings<'a> {
    lengths: std::slice::Iter<'a, u32>,
    text: &'a [u16],
}

impl<'a> Strings<'a> {
    fn next_units(&mut self) -> Result<&'a [u16]> {
        let n = *self
            .lengths
            .next()
            .ok_or_else(|| malformed("too few lengths"))? as usize;
        if n > self.text.len() {
            return Err(malformed("a length past the text"));
        }
        let (s, rest) = self.text.split_at(n);
        self.text = rest;
        Ok(s)
    }

    /// Every length and unit taken.
    fn done(mut self) -> Result<()> {
        if self.lengths.next().is_some() || !self.text.is_empty() {
            return Err(malformed("text left over"));
        }
        Ok(())
    }
}

/// `out.push(None)`, written in its slot: `push` built the `None` on the
/// stack and copied it in wider pieces than it was written in, stalling on
/// store forwarding, and `resize_with` was a call each.
#[inline]
fn push_none(out: &mut Vec<Id>) {
    out.reserve(1);
    let len = out.len();
    // SAFETY: the room was reserved above; the slot is written before the length covers it.
    unsafe {
        out.as_mut_ptr().add(len).write(None);
        out.set_len(len + 1);
    }
}

/// Pushes the id of code `code` onto `out` (`None` where absent or not
/// read); whether it was read. Written straight into `out`, and a short
/// ASCII id in its very slot: an id made elsewhere and moved in was copied
/// in wider pieces than it was written in, each copy stalling on store
/// forwarding (half of `pushEntries`).
fn push_id(out: &mut Vec<Id>, code: u8, strings: &mut Strings) -> Result<bool> {
    match code {
        code::ID_NOT_READ => push_none(out),
        code::ID_ABSENT => {
            push_none(out);
            return Ok(true);
        }
        code::ID_STRING => {
            let units = strings.next_units()?;
            // Most ids are short ASCII (the agent's are eight hex digits),
            // and those are written in their slot (fill_inline_ascii).
            out.push(Some(JsStr::Utf8(Utf8Text::EMPTY)));
            if let Some(slot) = out.last_mut() {
                let filled = match slot {
                    Some(JsStr::Utf8(text)) => text.fill_inline_ascii(units),
                    _ => false,
                };
                if !filled {
                    *slot = Some(JsStr::from_utf16(units));
                }
            }
            return Ok(true);
        }
        _ => return Err(malformed("an id code")),
    }
    Ok(false)
}

impl EntryFacts {
    pub fn new() -> EntryFacts {
        EntryFacts::default()
    }

    /// Room for the facts of `entries` entries, so pushing them in chunks
    /// (prepareCompactionAsync's slices) never moves what is already
    /// there into fresh pages, which a JS thread can stall on for
    /// milliseconds (docs/boundary.md). The capacity is only a hint: more
    /// entries can be pushed; a hint past [`MAX_CAPACITY_HINT`] counts as
    /// that, and one the allocator refuses reserves nothing.
    pub fn with_capacity(entries: usize) -> EntryFacts {
        let entries = entries.min(MAX_CAPACITY_HINT);
        let mut facts = EntryFacts::default();
        let reserved = facts.kinds.try_reserve_exact(entries).is_ok()
            && facts.ids.ids.try_reserve_exact(entries).is_ok()
            && facts.ids.parents.try_reserve_exact(entries).is_ok()
            && facts.ids.previous.try_reserve_exact(entries).is_ok()
            && facts.ids_read.try_reserve_exact(entries).is_ok()
            && facts.messages.try_reserve_exact(entries).is_ok();
        if reserved {
            facts
        } else {
            EntryFacts::default()
        }
    }

    /// Empties the facts, keeping the room they took for the next
    /// session's.
    pub fn clear(&mut self) {
        self.kinds.clear();
        self.ids.ids.clear();
        self.ids.parents.clear();
        self.ids.previous.clear();
        self.ids_read.clear();
        self.ids_unread = 0;
        self.messages.clear();
        self.file_ops.clear();
        self.paths.clear();
        self.path_sources.clear();
        self.strings_pushed = 0;
        self.path = None;
        self.ids.distinct = None;
        self.measures.clear();
    }

    /// For how many entries' facts there is room without allocating.
    pub fn room(&self) -> usize {
        self.kinds.capacity()
    }

    /// How many entries have facts (pushed in order from entry 0).
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Adds an entries chunk; it must start where the last one ended. A
    /// malformed chunk is an error and adds nothing.
    pub fn push_entries(&mut self, chunk: &EntriesChunk) -> Result<()> {
        let count = chunk.kinds.len();
        if chunk.first != self.len() {
            return Err(malformed("a chunk out of order"));
        }
        if chunk.ids.len() != count {
            return Err(malformed("arrays of different lengths"));
        }
        let before = self.len();
        let read = self.read_entries(chunk);
        if read.is_err() {
            self.kinds.truncate(before);
            self.ids.ids.truncate(before);
            self.ids.parents.truncate(before);
            self.ids.previous.truncate(before);
            self.ids_read.truncate(before);
            return read;
        }
        self.ids_unread += self.ids_read[before..]
            .iter()
            .filter(|&&read| !read)
            .count();
        self.path = None;
        self.ids.distinct = None;
        Ok(())
    }

    /// Pushes a chunk's facts onto the vectors, which the caller truncates
    /// back where this fails.
    fn read_entries(&mut self, chunk: &EntriesChunk) -> Result<()> {
        let count = chunk.kinds.len();
        let mut strings = Strings {
            lengths: chunk.lengths.iter(),
            text: chunk.text,
        };
        self.kinds.reserve(count);
        self.ids.ids.reserve(count);
        self.ids.parents.reserve(count);
        self.ids.previous.reserve(count);
        self.ids_read.reserve(count);
        // Whether the chunk's entry before has a string id.
        let mut before_is_string = false;
        for k in 0..count {
            let kind = EntryKind::from_code(chunk.kinds[k]);
            self.kinds.push(kind);
            let id_codes = chunk.ids[k];
            if id_codes >> 4 != 0 {
                return Err(malformed("an id code"));
            }
            let id_code = id_codes & code::ID_MASK;
            let id_read = push_id(&mut self.ids.ids, id_code, &mut strings)?;
            let parent_code = id_codes >> code::PARENT_SHIFT & code::ID_MASK;
            let is_previous = parent_code == code::ID_PREVIOUS;
            let parent_read = if is_previous {
                // The previous entry's id, which `Ids::parent` gives.
                if !before_is_string {
                    return Err(malformed("a parent code naming no previous id"));
                }
                push_none(&mut self.ids.parents);
                true
            } else {
                push_id(&mut self.ids.parents, parent_code, &mut strings)?
            };
            self.ids.previous.push(is_previous);
            before_is_string = id_code == code::ID_STRING;
            self.ids_read.push(kind.is_some() && id_read && parent_read);
        }
        strings.done()
    }

    /// Adds a messages chunk, for entries already pushed. A malformed chunk
    /// is an error and adds nothing.
    pub fn push_messages(&mut self, chunk: &MessagesChunk) -> Result<()> {
        // An entry past the facts: the array grew while it was read (a
        // getter added entries), so the cut read the array itself
        // ([`Entries::with_facts`] takes only facts of its length), and
        // so will the plan. The chunk's strings are counted all the same.
        let grown = chunk.at.iter().any(|&entry| entry as usize >= self.len());
        if !grown {
            let (ops_before, paths_before) = (self.file_ops.len(), self.paths.len());
            match self.read_messages(chunk) {
                Ok(read) => {
                    if self.messages.len() < self.len() {
                        self.messages.resize(self.len(), None);
                    }
                    for (i, facts) in read {
                        self.messages[i] = facts;
                    }
                }
                Err(err) => {
                    self.file_ops.truncate(ops_before);
                    self.paths.truncate(paths_before);
                    self.path_sources.truncate(paths_before);
                    return Err(err);
                }
            }
        }
        self.strings_pushed = self
            .strings_pushed
            .saturating_add(chunk.lengths.len() as u32);
        Ok(())
    }

    fn read_messages(
        &mut self,
        chunk: &MessagesChunk,
    ) -> Result<Vec<(usize, Option<MessageFacts>)>> {
        let count = chunk.at.len();
        if chunk.contents.len() != count || chunk.calls.len() != count {
            return Err(malformed("arrays of different lengths"));
        }
        let mut strings = Strings {
            lengths: chunk.lengths.iter(),
            text: chunk.text,
        };
        let table = (0..chunk.lengths.len())
            .map(|_| strings.next_units())
            .collect::<Result<Vec<_>>>()?;
        strings.done()?;
        // What each string is as a tool's name and as a path, worked out
        // the first time a call names it so.
        let mut ops: Vec<Option<Option<FileOpKind>>> = vec![None; table.len()];
        let mut places: Vec<Option<Option<u32>>> = vec![None; table.len()];
        let mut refs = chunk.refs.chunks_exact(2);
        if !refs.remainder().is_empty() {
            return Err(malformed("an odd number of refs"));
        }
        let mut out = Vec::with_capacity(count);
        let mut scratch = Vec::new();
        for k in 0..count {
            let entry = chunk.at[k] as usize;
            let content = chunk.contents[k];
            if content & !(code::CONTENT_MASK | code::CALLS_READ) != 0 {
                return Err(malformed("a content code"));
            }
            let nullish = match content & code::CONTENT_MASK {
                code::CONTENT_NOT_READ => None,
                code::CONTENT_PRESENT => Some(false),
                code::CONTENT_NULLISH => Some(true),
                _ => return Err(malformed("a content code")),
            };
            let listed = chunk.calls[k] as usize;
            let calls = if content & code::CALLS_READ != 0 {
                let start = self.file_ops.len();
                for _ in 0..listed {
                    let pair = refs.next().ok_or_else(|| malformed("too few refs"))?;
                    let (name, path) = (pair[0] as usize, pair[1] as usize);
                    if name >= table.len() || path >= table.len() {
                        return Err(malformed("a ref past the strings"));
                    }
                    let Some(kind) = *ops[name].get_or_insert_with(|| file_tool_op(table[name]))
                    else {
                        continue;
                    };
                    let place = places[path].get_or_insert_with(|| {
                        let at = insert_call_path(&mut self.paths, table[path], &mut scratch)?;
                        if at == self.path_sources.len() {
                            self.path_sources
                                .push(self.strings_pushed.saturating_add(path as u32));
                        }
                        Some(at as u32)
                    });
                    let Some(at) = *place else {
                        continue;
                    };
                    self.file_ops.push((kind, at));
                }
                Some((start as u32, self.file_ops.len() as u32))
            } else if listed != 0 {
                return Err(malformed("calls listed but not read"));
            } else {
                None
            };
            out.push((
                entry,
                match (nullish, calls) {
                    (Some(content_nullish), calls) => Some(MessageFacts {
                        content_nullish,
                        calls,
                    }),
                    (None, None) => None,
                    (None, Some(_)) => return Err(malformed("calls without content")),
                },
            ));
        }
        if refs.next().is_some() {
            return Err(malformed("refs left over"));
        }
        Ok(out)
    }

    /// Does what needs the entries' facts only, not the entries, ahead of
    /// the plan (so `prepareCompactionAsync` can do it off the JS thread):
    /// the path to the last entry, when every id was read and the path has
    /// no cycle (else the planner finds the path, or the error, itself).
    pub fn finish(&mut self) {
        if self.path.is_none() && self.ids_unread == 0 {
            self.ids.distinct = Some(all_distinct(&self.ids.ids));
            self.path = self.ids.path_to_last().ok();
        }
    }

    /// Every entry's `id` and `parentId`, when all of them (and every kind)
    /// were read.
    pub fn ids(&self) -> Option<&Ids> {
        (self.ids_unread == 0).then_some(&self.ids)
    }

    /// The path to the last entry, when [`EntryFacts::finish`] found it.
    pub fn path(&self) -> Option<&[usize]> {
        self.path.as_deref()
    }

    /// Entry `i`'s kind, when it was read.
    pub fn kind(&self, i: usize) -> Option<EntryKind> {
        self.kinds.get(i).copied().flatten()
    }

    /// Entry `i`'s `id` and `parentId`, when they and its kind were read.
    pub fn id_and_parent(&self, i: usize) -> Option<(&Id, &Id)> {
        (*self.ids_read.get(i)?).then(|| (&self.ids.ids[i], self.ids.parent(i)))
    }

    /// Entry `i`'s message facts, when they were read.
    pub fn message(&self, i: usize) -> Option<&MessageFacts> {
        self.messages.get(i).and_then(Option::as_ref)
    }

    /// The message contents measured for the cut's estimates.
    pub fn measures(&self) -> &Measures {
        &self.measures
    }

    /// What to ask the JS pass to measure, an estimate having stopped at
    /// entry `from` ([`crate::session::entries::Entries::wanted_measure`]):
    /// `from`, then the message entries below it whose estimate a measure
    /// can stand for ([`measured_by_content`]) and not asked for yet, at
    /// most [`MEASURES_ASKED`] in all. `from` is recorded as asked: where
    /// the pass does not measure it, the planner reads it.
    pub fn ask_measures_from(&mut self, from: usize) -> Vec<u32> {
        let mut out = vec![from as u32];
        self.measures.ask(from as u32);
        for i in (0..from).rev() {
            if out.len() == MEASURES_ASKED {
                break;
            }
            let role = self.kind(i).and_then(|k| k.role);
            if role.is_some_and(measured_by_content) && self.measures.content(i).is_none() {
                out.push(i as u32);
            }
        }
        out
    }

    /// Adds a measures chunk ([`Measures::push`]) for entries already pushed.
    pub fn push_measures(&mut self, chunk: &MeasuresChunk) -> Result<()> {
        self.measures.push(chunk, self.len())
    }

    /// How many distinct paths the file operations name.
    pub fn path_count(&self) -> usize {
        self.paths.len()
    }

    /// Path `at` of the file operations.
    pub fn path_at(&self, at: u32) -> &JsStr {
        &self.paths[at as usize]
    }

    /// Where `path` was first given among the strings of the messages
    /// chunks, if a chunk gave it.
    pub fn path_source(&self, path: &JsStr) -> Option<u32> {
        let at = self.paths.get_index_of(path)?;
        self.path_sources.get(at).copied()
    }

    /// The file operations of a message's calls, in order (none when its
    /// calls were not read).
    pub fn file_ops_of(&self, message: &MessageFacts) -> &[(FileOpKind, u32)] {
        message
            .calls
            .and_then(|(a, b)| self.file_ops.get(a as usize..b as usize))
            .unwrap_or(&[])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]
mod tests {
    use super::*;
    use crate::session::model::{EntryType, Role, KIND_ROLE_BASE};

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn room_made_up_front_is_only_a_hint() {
        let chunk = |first: usize, n: usize, text: &[u16]| {
            let ids = vec![code::ID_STRING | code::ID_ABSENT << code::PARENT_SHIFT; n];
            let mut facts_text = Vec::new();
            for _ in 0..n {
                facts_text.extend_from_slice(text);
            }
            (first, ids, vec![text.len() as u32; n], facts_text)
        };
        let id = units("a1");
        let mut facts = EntryFacts::with_capacity(4);
        assert!(facts.kinds.capacity() >= 4 && facts.ids.ids.capacity() >= 4);
        let before = facts.ids.ids.as_ptr();
        // Pushed in chunks within the hint, nothing moves; past it, it grows.
        for (first, n) in [(0, 2), (2, 2), (4, 3)] {
            let (first, ids, lengths, text) = chunk(first, n, &id);
            facts
                .push_entries(&EntriesChunk {
                    first,
                    kinds: &vec![0; n],
                    ids: &ids,
                    lengths: &lengths,
                    text: &text,
                })
                .unwrap();
            if first < 4 {
                assert_eq!(facts.ids.ids.as_ptr(), before);
            }
        }
        assert_eq!(facts.len(), 7);
        // A hint no allocator gives, or past the cap, neither aborts nor reserves past the cap.
        let huge = EntryFacts::with_capacity(usize::MAX);
        assert!(huge.kinds.capacity() <= MAX_CAPACITY_HINT);
        assert_eq!(huge.len(), 0);
    }

    #[test]
    fn reads_entries_then_messages() {
        let text = units("a1b1");
        let mut facts = EntryFacts::new();
        facts
            .push_entries(&EntriesChunk {
                first: 0,
                kinds: &[KIND_ROLE_BASE + 1],
                ids: &[code::ID_STRING | code::ID_STRING << code::PARENT_SHIFT],
                lengths: &[2, 2],
                text: &text,
            })
            .unwrap();
        facts
            .push_entries(&EntriesChunk {
                first: 1,
                kinds: &[0],
                ids: &[code::ID_ABSENT | code::ID_NOT_READ << code::PARENT_SHIFT],
                lengths: &[],
                text: &[],
            })
            .unwrap();
        assert_eq!(facts.len(), 2);
        assert_eq!(
            facts.kind(0),
            Some(EntryKind {
                ty: EntryType::Message,
                role: Some(Role::Assistant)
            })
        );
        let (id, parent) = facts.id_and_parent(0).unwrap();
        assert_eq!(id.as_ref().unwrap().as_str(), Some("a1"));
        assert_eq!(parent.as_ref().unwrap().as_str(), Some("b1"));
        assert_eq!(facts.kind(1), None);
        assert!(facts.id_and_parent(1).is_none());
        assert!(facts.ids().is_none());

        let text = units("readsrc/x.rsbashls");
        facts
            .push_messages(&MessagesChunk {
                at: &[0],
                contents: &[code::CONTENT_PRESENT | code::CALLS_READ],
                calls: &[2],
                refs: &[0, 1, 2, 3],
                lengths: &[4, 8, 4, 2],
                text: &text,
            })
            .unwrap();
        let m = facts.message(0).unwrap();
        assert!(!m.content_nullish);
        assert!(m.calls_read());
        // The bash call is no file operation.
        let ops = facts.file_ops_of(m);
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].0, FileOpKind::Read);
        assert_eq!(facts.path_at(ops[0].1).as_str(), Some("src/x.rs"));
        assert!(facts.message(1).is_none());

        // Strings named by several calls, as names and as paths: each call
        // is still the operation its own name and path make.
        let text = units("editsrc/x.rsread");
        facts
            .push_messages(&MessagesChunk {
                at: &[1],
                contents: &[code::CONTENT_PRESENT | code::CALLS_READ],
                calls: &[4],
                refs: &[0, 1, 2, 1, 1, 1, 2, 1],
                lengths: &[4, 8, 4],
                text: &text,
            })
            .unwrap();
        let m = facts.message(1).unwrap();
        let ops: Vec<_> = (facts.file_ops_of(m).iter())
            .map(|&(kind, at)| (kind, facts.path_at(at).as_str().unwrap().to_owned()))
            .collect();
        let x = || "src/x.rs".to_owned();
        assert_eq!(
            ops,
            [
                (FileOpKind::Edited, x()),
                (FileOpKind::Read, x()),
                (FileOpKind::Read, x())
            ]
        );
        assert_eq!(facts.path_count(), 1);

        // Each path by where a chunk first gave it among all chunks'
        // strings (4, then 3 strings before this chunk's); a chunk that
        // fails adds none.
        let source = |facts: &EntryFacts, path: &str| facts.path_source(&JsStr::from_str(path));
        assert_eq!(source(&facts, "src/x.rs"), Some(1));
        let (bad, good) = (units("zreadb.rs"), units("readb.rs"));
        let chunk = |calls, refs, lengths, text| MessagesChunk {
            at: &[0],
            contents: &[code::CONTENT_PRESENT | code::CALLS_READ],
            calls,
            refs,
            lengths,
            text,
        };
        // (too few refs for two calls, found after the first added its path)
        assert!(facts
            .push_messages(&chunk(&[2], &[1, 2], &[1, 4, 4], &bad))
            .is_err());
        assert_eq!(source(&facts, "b.rs"), None);
        facts
            .push_messages(&chunk(&[1], &[0, 1], &[4, 4], &good))
            .unwrap();
        assert_eq!(source(&facts, "b.rs"), Some(8));
        assert_eq!(source(&facts, "src/x.rs"), Some(1));
        assert_eq!(source(&facts, "c.rs"), None);
    }

    #[test]
    fn ids_of_every_shape_read_as_they_are() {
        // Short ASCII ids are written in their slot; the rest are made
        // whole. Each must read back as the string it was.
        let ids: Vec<Vec<u16>> = vec![
            units("0123abcd"),
            units(""),
            units("22 bytes exactly: 1234"),
            units("one byte more: 12345678"),
            units("é"),
            units("abcdefgh\u{7f}\u{80}"),
            vec![0x61, 0xD800],
            vec![0xDC00],
        ];
        let text: Vec<u16> = ids.concat();
        let lengths: Vec<u32> = ids.iter().map(|id| id.len() as u32).collect();
        let mut facts = EntryFacts::new();
        facts
            .push_entries(&EntriesChunk {
                first: 0,
                kinds: &vec![0; ids.len()],
                ids: &vec![code::ID_STRING | code::ID_ABSENT << code::PARENT_SHIFT; ids.len()],
                lengths: &lengths,
                text: &text,
            })
            .unwrap();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(facts.ids.ids[i], Some(JsStr::from_utf16(id)), "id {i}");
            assert_eq!(facts.ids.parents[i], None, "parent {i}");
        }
    }

    #[test]
    fn a_parent_code_takes_the_id_before_it_in_the_chunk() {
        let previous = code::ID_PREVIOUS << code::PARENT_SHIFT;
        let text = units("a1b2c3");
        let mut facts = EntryFacts::new();
        facts
            .push_entries(&EntriesChunk {
                first: 0,
                kinds: &[KIND_ROLE_BASE; 3],
                ids: &[
                    code::ID_STRING | code::ID_ABSENT << code::PARENT_SHIFT,
                    code::ID_STRING | previous,
                    code::ID_STRING | previous,
                ],
                lengths: &[2, 2, 2],
                text: &text,
            })
            .unwrap();
        let parents: Vec<_> = (0..3)
            .map(|i| {
                facts
                    .id_and_parent(i)
                    .unwrap()
                    .1
                    .as_ref()
                    .and_then(JsStr::as_str)
            })
            .collect();
        assert_eq!(parents, [None, Some("a1"), Some("b2")]);
        assert_eq!(facts.ids.path_to_last().unwrap(), [0, 1, 2]);
        // Not across chunks, nor after an id that is not a string: the chunk adds nothing.
        let pushed = facts.clone();
        let d = units("d4");
        for (kinds, ids, lengths, text) in [
            (
                &[0u8][..],
                &[code::ID_STRING | previous][..],
                &[2u32][..],
                &d[..],
            ),
            (
                &[0, 0],
                &[code::ID_ABSENT, code::ID_STRING | previous],
                &[2],
                &d,
            ),
            (
                &[0, 0],
                &[code::ID_NOT_READ, code::ID_STRING | previous],
                &[2],
                &d,
            ),
        ] {
            let chunk = EntriesChunk {
                first: 3,
                kinds,
                ids,
                lengths,
                text,
            };
            let err = facts.push_entries(&chunk).unwrap_err();
            assert!(err
                .message
                .to_string()
                .contains("a parent code naming no previous id"));
            assert_eq!(facts, pushed);
        }
        // Ids that are not short ASCII (boxed, WTF-8) are the parent's too.
        let long = "x".repeat(40);
        let odd: Vec<Vec<u16>> = vec![units("é1"), units(&long), vec![0xD800, 0x61]];
        let mut text = Vec::new();
        let mut ids = Vec::new();
        for id in &odd {
            text.extend_from_slice(id);
            ids.push(code::ID_STRING | previous);
        }
        let lengths: Vec<u32> = odd.iter().map(|id| id.len() as u32).collect();
        ids[0] = code::ID_STRING | code::ID_ABSENT << code::PARENT_SHIFT;
        facts
            .push_entries(&EntriesChunk {
                first: 3,
                kinds: &[KIND_ROLE_BASE; 3],
                ids: &ids,
                lengths: &lengths,
                text: &text,
            })
            .unwrap();
        for i in 4..6 {
            let (_, parent) = facts.id_and_parent(i).unwrap();
            assert_eq!(parent, &Some(JsStr::from_utf16(&odd[i - 4])), "parent {i}");
        }
    }

    #[test]
    fn ids_known_distinct_until_more_are_pushed() {
        let ids = [code::ID_STRING | code::ID_ABSENT << code::PARENT_SHIFT; 2];
        let (first, again) = (units("a1b2"), units("b2c3"));
        let chunk = |first: usize, text| EntriesChunk {
            first,
            kinds: &[KIND_ROLE_BASE; 2],
            ids: &ids,
            lengths: &[2, 2],
            text,
        };
        let mut facts = EntryFacts::new();
        facts.push_entries(&chunk(0, &first)).unwrap();
        assert_eq!(facts.ids.distinct, None);
        facts.finish();
        assert_eq!(facts.ids.distinct, Some(true));
        // "b2" again: the first is still the one found.
        facts.push_entries(&chunk(2, &again)).unwrap();
        assert_eq!(facts.ids.distinct, None);
        let b2 = Some(JsStr::from("b2"));
        assert_eq!(facts.ids.position(&b2), Some(1));
        facts.finish();
        assert_eq!(facts.ids.distinct, Some(false));
        assert_eq!(facts.ids.position(&b2), Some(1));
        facts.clear();
        assert_eq!(facts.ids.distinct, None);
    }

    #[test]
    fn a_malformed_chunk_is_an_error_and_adds_nothing() {
        let mut facts = EntryFacts::new();
        let text = units("abc");
        let entries: [(usize, &[u8], &[u8], &[u32], &[u16]); 4] = [
            (5, &[0], &[0], &[], &[]),
            (0, &[0], &[code::ID_STRING], &[9], &text),
            (0, &[0], &[0], &[], &text),
            (0, &[0], &[3], &[], &[]),
        ];
        for (first, kinds, ids, lengths, text) in entries {
            let chunk = EntriesChunk {
                first,
                kinds,
                ids,
                lengths,
                text,
            };
            assert!(facts.push_entries(&chunk).is_err());
            assert!(facts.is_empty());
            assert_eq!(facts, EntryFacts::new());
        }
        facts
            .push_entries(&EntriesChunk {
                first: 0,
                kinds: &[0],
                ids: &[0],
                lengths: &[],
                text: &[],
            })
            .unwrap();
        // Failing after some of its entries were read, a chunk still adds none.
        let pushed = facts.clone();
        let ab = units("ab");
        let partly = EntriesChunk {
            first: 1,
            kinds: &[0, 0],
            ids: &[code::ID_STRING | code::ID_STRING << code::PARENT_SHIFT, 3],
            lengths: &[1, 1],
            text: &ab,
        };
        assert!(facts.push_entries(&partly).is_err());
        assert_eq!(facts, pushed);
        let read = units("readabc");
        let listed = [code::CONTENT_PRESENT | code::CALLS_READ];
        type Chunk<'a> = (
            &'a [u32],
            &'a [u8],
            &'a [u32],
            &'a [u32],
            &'a [u32],
            &'a [u16],
        );
        // A message past the entries pushed (the array grew while read)
        // is no error, and adds nothing.
        let past = MessagesChunk {
            at: &[0, 1],
            contents: &[code::CONTENT_PRESENT, code::CONTENT_PRESENT],
            calls: &[0, 0],
            refs: &[],
            lengths: &[],
            text: &[],
        };
        assert!(facts.push_messages(&past).is_ok());
        assert!(facts.message(0).is_none());
        let messages: [Chunk; 9] = [
            (&[0], &[code::CONTENT_PRESENT], &[1], &[], &[], &[]),
            (&[0], &[code::CALLS_READ], &[0], &[], &[], &[]),
            // A length past the text, and text left over.
            (&[0], &listed, &[1], &[0, 1], &[4, 9], &read),
            (&[0], &listed, &[1], &[0, 1], &[4], &read),
            (&[0], &[8], &[0], &[], &[], &[]),
            // Refs: too few, an odd number, past the strings, left over.
            (&[0], &listed, &[1], &[0], &[4, 3], &read),
            (&[0], &listed, &[1], &[0, 1, 1], &[4, 3], &read),
            (&[0], &listed, &[1], &[0, 2], &[4, 3], &read),
            (&[0], &listed, &[1], &[0, 1, 0, 1], &[4, 3], &read),
        ];
        for (at, contents, calls, refs, lengths, text) in messages {
            let chunk = MessagesChunk {
                at,
                contents,
                calls,
                refs,
                lengths,
                text,
            };
            assert!(facts.push_messages(&chunk).is_err());
            assert!(facts.message(0).is_none());
            assert_eq!(facts.path_count(), 0);
        }
    }
}
