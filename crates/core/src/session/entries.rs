//! Lazy, cached access to a `SessionEntry[]`: each entry's kind is read once,
//! and only for the entries an algorithm actually visits. The entries carry
//! the agent line whose rules the algorithms over them follow.

use std::cell::{Cell, OnceCell};

use crate::agent_line::AgentLine;
use crate::error::{Context, Error, Result};
use crate::js::view::{Key, View};
use crate::session::facts::EntryFacts;
use crate::session::model::{entry_kind, EntryKind};
use crate::tokens::estimate::{chars_to_tokens, measured_by_content, measured_chars, Counter};

/// Longest array whose entry kinds are cached.
const MAX_CACHED: usize = 1 << 23;

/// The kinds cache's pages: entries a page, as a shift.
const PAGE_SHIFT: usize = 8;
const PAGE: usize = 1 << PAGE_SHIFT;

/// One page of the kinds cache.
type KindPage = [Cell<Option<EntryKind>>; PAGE];

pub struct Entries<'a, V: View> {
    array: &'a V,
    len: usize,
    /// The kinds read here (those read ahead are taken from the facts), in
    /// pages each made when a kind in it is first read: a call that reads
    /// a few entries of a long array makes one or two.
    kinds: OnceCell<Vec<OnceCell<Box<KindPage>>>>,
    facts: Option<&'a EntryFacts>,
    /// How errors name the array (`pathEntries`, `entries`).
    pub name: &'static str,
    /// How message tokens are counted.
    pub counter: Counter,
    /// The agent line the algorithms follow.
    pub line: &'static AgentLine,
    /// Whether an estimate stops to ask for a message's measures
    /// ([`Entries::asking_for_measures`]), and the entry it stopped at.
    ask: bool,
    wanted: Cell<Option<usize>>,
}

impl<'a, V: View> Entries<'a, V> {
    pub fn new(array: &'a V, name: &'static str, line: &'static AgentLine) -> Result<Self> {
        let len = array.array_len().ok_or_else(|| {
            Error::type_error(
                name,
                format!(
                    "expected an array of session entries, got {}",
                    array.kind().describe()
                ),
            )
        })?;
        Ok(Entries {
            array,
            len,
            kinds: OnceCell::new(),
            facts: None,
            name,
            counter: Counter::Estimate,
            line,
            ask: false,
            wanted: Cell::new(None),
        })
    }

    /// The same entries with what a JS pass read ahead of them
    /// ([`EntryFacts`]); an entry or field without a fact is read here when
    /// it is needed, as without them. Facts of another number of entries
    /// (the array changed since they were read) are not used.
    pub fn with_facts(mut self, facts: &'a EntryFacts) -> Self {
        if facts.len() == self.len {
            self.facts = Some(facts);
        }
        self
    }

    /// The facts read ahead, if any.
    pub fn facts(&self) -> Option<&'a EntryFacts> {
        self.facts
    }

    /// The same entries, whose estimates, where the facts hold no measures
    /// of the message and could ([`measured_by_content`]), stop with
    /// [`Error::facts_wanted`] instead of reading it:
    /// [`Entries::wanted_measure`] then names the entry.
    pub fn asking_for_measures(mut self) -> Self {
        self.ask = self.facts.is_some();
        self
    }

    /// The entry an estimate last stopped at to ask for its measures.
    pub fn wanted_measure(&self) -> Option<usize> {
        self.wanted.get()
    }

    /// The same entries, counted with `counter` instead of the estimate.
    pub fn with_counter(mut self, counter: Counter) -> Self {
        self.counter = counter;
        self
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn array(&self) -> &'a V {
        self.array
    }

    /// Names entry `i` in errors: `pathEntries[i]`.
    pub fn label(&self, i: usize) -> String {
        format!("{}[{i}]", self.name)
    }

    /// Entry `i`'s kind where it is known already (read ahead, or read here before).
    #[inline]
    fn known_kind(&self, i: usize) -> Option<EntryKind> {
        if let Some(kind) = self.facts.and_then(|f| f.kind(i)) {
            return Some(kind);
        }
        self.kinds.get()?.get(i >> PAGE_SHIFT)?.get()?[i & (PAGE - 1)].get()
    }

    /// The cache's cell for entry `i`, its page made if need be. No cache
    /// for a length no dense array has (`length = 2 ** 32 - 1`): kinds are
    /// then read uncached, and the first hole fails anyway.
    fn kind_cell(&self, i: usize) -> Option<&Cell<Option<EntryKind>>> {
        let pages = self.kinds.get_or_init(|| {
            if self.len <= MAX_CACHED {
                (0..self.len.div_ceil(PAGE))
                    .map(|_| OnceCell::new())
                    .collect()
            } else {
                Vec::new()
            }
        });
        let page = pages
            .get(i >> PAGE_SHIFT)?
            .get_or_init(|| Box::new(std::array::from_fn(|_| Cell::new(None))));
        Some(&page[i & (PAGE - 1)])
    }

    #[inline]
    pub fn kind(&self, i: usize) -> Result<EntryKind> {
        match self.known_kind(i) {
            Some(kind) => Ok(kind),
            None => self.read_kind(i),
        }
    }

    /// [`Entries::kind`] of an entry whose kind is not known yet.
    #[cold]
    fn read_kind(&self, i: usize) -> Result<EntryKind> {
        if i >= self.len {
            return Err(Error::range(
                self.label(i),
                format!("index out of range (length {})", self.len),
            ));
        }
        self.with_entry(i, |entry| self.kind_of(i, entry))
    }

    /// Entry `i`'s kind from its already-read value (so one visit can read
    /// the kind and other fields together).
    pub fn kind_of(&self, i: usize, entry: &V) -> Result<EntryKind> {
        if let Some(kind) = self.known_kind(i) {
            return Ok(kind);
        }
        let kind = entry_kind(entry)?;
        if let Some(cell) = self.kind_cell(i) {
            cell.set(Some(kind));
        }
        Ok(kind)
    }

    /// Runs `f` on entry `i` inside its own scope, naming the entry in errors.
    pub fn with_entry<R>(&self, i: usize, f: impl FnOnce(&V) -> Result<R>) -> Result<R> {
        self.array
            .scoped(|| f(&self.array.at(i)?))
            .within_with(|| self.label(i))
    }

    /// Visits `indices` in order, one handle scope per chunk of entries
    /// rather than per entry (opening a scope is an N-API call of its own).
    pub fn visit(
        &self,
        indices: impl IntoIterator<Item = usize>,
        mut f: impl FnMut(usize, &V) -> Result<()>,
    ) -> Result<()> {
        const CHUNK: usize = 64;
        let mut indices = indices.into_iter().peekable();
        while indices.peek().is_some() {
            self.array.scoped(|| -> Result<()> {
                for i in indices.by_ref().take(CHUNK) {
                    let entry = self.array.at(i).within_with(|| self.label(i))?;
                    f(i, &entry).within_with(|| self.label(i))?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// The last entry, walking back from the end, for which `f` is true:
    /// each entry read once, one handle scope per chunk of entries (as
    /// [`Entries::visit`]).
    pub fn find_last(&self, mut f: impl FnMut(usize, &V) -> Result<bool>) -> Result<Option<usize>> {
        const CHUNK: usize = 64;
        let mut end = self.len;
        while end > 0 {
            let start = end.saturating_sub(CHUNK);
            let found = self.array.scoped(|| -> Result<Option<usize>> {
                for i in (start..end).rev() {
                    let entry = self.array.at(i).within_with(|| self.label(i))?;
                    if f(i, &entry).within_with(|| self.label(i))? {
                        return Ok(Some(i));
                    }
                }
                Ok(None)
            })?;
            if found.is_some() {
                return Ok(found);
            }
            end = start;
        }
        Ok(None)
    }

    /// The estimated characters of entry `i`'s message (its own content)
    /// where the measures read ahead settle them; with no measure of it
    /// and entries asking for them ([`Entries::asking_for_measures`]),
    /// [`Error::facts_wanted`], naming the entry.
    pub fn measured_chars(&self, i: usize) -> Result<Option<u64>> {
        let role = self.known_kind(i).and_then(|k| k.role);
        if let (Some(role), Some(facts), Counter::Estimate) = (role, self.facts, self.counter) {
            match facts.measures().content(i) {
                Some(Some(size)) => return Ok(measured_chars(role, size)),
                None if self.ask && measured_by_content(role) => {
                    self.wanted.set(Some(i));
                    return Err(Error::facts_wanted());
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// `estimateTokens(entries[i].message)` (or the exact count); the role
    /// is not read again where the entry's kind is known.
    pub fn message_tokens(&self, i: usize) -> Result<u64> {
        if let Some(chars) = self.measured_chars(i)? {
            return Ok(chars_to_tokens(chars));
        }
        let role = self.known_kind(i).and_then(|k| k.role);
        self.with_entry(i, |entry| {
            let message = entry.get(Key::Message)?;
            match role {
                Some(role) => self.counter.message_as(&message, role, &self.line.tokens),
                None => self.counter.message(&message, &self.line.tokens),
            }
            .within("message")
        })
    }
}
