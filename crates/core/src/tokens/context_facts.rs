//! What a JS pass read ahead of a context's messages for its estimate
//! (`lib/context-facts.js`): `estimateContextTokens` and 1.6's
//! `estimateProjectedContextTokens` look for the last usage from the end,
//! and estimate every message after it. Where that usage is among the
//! last few messages, they read those natively; past them, each message
//! was a dozen N-API calls, and a context without usage (a provider that
//! reports none) is estimated whole. So the estimate asks for the facts
//! of the messages before the ones it has, a batch at a time from the end
//! ([`FactsList`] answers [`Error::facts_wanted`]), and takes from them
//! each message's role, what its usage is made of, and its content's
//! sizes ([`Measures`]). The rules (which usage counts, how sizes become
//! an estimate) stay in [`crate::tokens::estimate`]; these are values. A
//! message the pass could not read is read natively, as without facts.
//! `getLastAssistantUsage` looks for the same usage over session entries
//! ([`last_usage_entry`]): there the pass reads each entry's kind and its
//! message's usage, and measures nothing.
//!
//! A chunk ([`ContextChunk`]) holds the messages (or entries) `to - n..to`,
//! last first (`n` the length of `roles`; codes in
//! [`crate::boundary_codes::context_facts`]):
//! - `roles[j]`: message `to - 1 - j`'s role, as an entry-kind code
//!   ([`EntryKind::from_code`]; an entry's kind), or not read (0);
//! - `usages[j]`: for an assistant, its `stopReason` (`STOP_ABORTED`,
//!   `STOP_ERROR`, `STOP_OTHER`: any other value) plus its `usage`
//!   (`USAGE_NULLISH`, or `USAGE_NUMBERS`: an object whose `totalTokens`,
//!   `input`, `output`, `cacheRead` and `cacheWrite` are numbers, those
//!   five the next five of `values`); 0 where not read;
//! - `measures`: a measures chunk ([`MeasuresChunk`]) whose `at` are
//!   message indices.

use std::cell::Cell;

use crate::agent_line::TokenRules;
use crate::boundary_codes::context_facts as code;
use crate::error::{Context, Error, Result};
use crate::js::view::{Key, View};
use crate::session::entries::Entries;
use crate::session::measures::{Measures, MeasuresChunk};
use crate::session::model::{EntryKind, EntryType, Role};
use crate::session::projection::Msg;
use crate::tokens::estimate::{measured_chars, usage_tokens, valid_assistant_usage};
use crate::tokens::projected::ContextList;

/// A chunk as the JS pass sends it (see the module docs).
pub struct ContextChunk<'a> {
    pub to: usize,
    pub roles: &'a [u8],
    pub usages: &'a [u8],
    pub values: &'a [f64],
    pub measures: MeasuresChunk<'a>,
}

/// An assistant's usage as read: its stop reason and its usage's numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum UsageFact {
    NotRead,
    /// Passed over: `stopReason` is `"aborted"` or `"error"`, or `usage`
    /// is null or undefined.
    None,
    /// `totalTokens` and the four parts.
    Numbers(f64, [f64; 4]),
}

/// The facts of the messages `from..len`, as chunks gave them.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ContextFacts {
    len: usize,
    from: usize,
    /// Message (or entry) `len - 1 - j`'s kind at `j`, where read.
    kinds: Vec<Option<EntryKind>>,
    usages: Vec<UsageFact>,
    measures: Measures,
}

fn malformed(what: &str) -> Error {
    Error::internal(format!("malformed context facts: {what}"))
}

impl ContextFacts {
    /// No facts yet, for `len` messages.
    pub fn new(len: usize) -> ContextFacts {
        ContextFacts {
            len,
            from: len,
            ..ContextFacts::default()
        }
    }

    /// The first message the facts hold (`len` while they hold none).
    pub fn from(&self) -> usize {
        self.from
    }

    /// Adds a chunk of the messages just before the ones held. A
    /// malformed chunk is an error and adds nothing.
    pub fn push(&mut self, chunk: &ContextChunk) -> Result<()> {
        let n = chunk.roles.len();
        if chunk.to != self.from || n > self.from {
            return Err(malformed("a chunk out of order"));
        }
        if chunk.usages.len() != n {
            return Err(malformed("arrays of different lengths"));
        }
        let from = self.from - n;
        if chunk.measures.at.iter().any(|&i| (i as usize) < from) {
            return Err(malformed("measures of a message not in the chunk"));
        }
        let mut kinds = Vec::with_capacity(n);
        let mut usages = Vec::with_capacity(n);
        let mut values = chunk.values.chunks_exact(5);
        if !values.remainder().is_empty() {
            return Err(malformed("a usage of fewer than five numbers"));
        }
        for j in 0..n {
            kinds.push(match chunk.roles[j] {
                0 => None,
                c => Some(EntryKind::from_code(c).ok_or_else(|| malformed("a kind code"))?),
            });
            let (stop, usage) = (
                chunk.usages[j] & code::STOP_MASK,
                chunk.usages[j] & !code::STOP_MASK,
            );
            // Each usage of numbers takes the next five (an aborted or
            // errored one's too, which then count for nothing).
            let numbers = if usage == code::USAGE_NUMBERS {
                let v = values
                    .next()
                    .ok_or_else(|| malformed("too few usage numbers"))?;
                Some((v[0], [v[1], v[2], v[3], v[4]]))
            } else {
                None
            };
            usages.push(match (stop, usage, numbers) {
                (0, 0, _) => UsageFact::NotRead,
                (
                    code::STOP_ABORTED | code::STOP_ERROR,
                    code::USAGE_NULLISH | code::USAGE_NUMBERS,
                    _,
                )
                | (code::STOP_OTHER, code::USAGE_NULLISH, _) => UsageFact::None,
                (code::STOP_OTHER, code::USAGE_NUMBERS, Some((total, parts))) => {
                    UsageFact::Numbers(total, parts)
                }
                _ => return Err(malformed("a usage code")),
            });
        }
        if values.next().is_some() {
            return Err(malformed("usage numbers left over"));
        }
        self.measures.push(&chunk.measures, self.from)?;
        self.kinds.extend(kinds);
        self.usages.extend(usages);
        self.from = from;
        Ok(())
    }

    /// The first item a walk takes without asking, for a walk that would
    /// read natively from `given` on: none of those the facts hold is
    /// asked for.
    fn first_unasked(&self, given: usize) -> usize {
        given.min(self.from)
    }

    /// Where message `k`'s facts are, when the facts hold it.
    fn slot(&self, k: usize) -> Option<usize> {
        (self.from..self.len).contains(&k).then(|| self.len - 1 - k)
    }

    /// Message `k`'s role (an entry's kind where it is not a message's: none).
    fn role(&self, k: usize) -> Option<Role> {
        self.kinds[self.slot(k)?].and_then(|kind| kind.role)
    }

    /// Message or entry `k`'s usage in tokens (`Some(None)`: none that
    /// counts), where the facts settle it.
    fn usage(&self, k: usize, rules: &TokenRules) -> Option<Option<f64>> {
        let j = self.slot(k)?;
        let kind = self.kinds[j]?;
        if kind.ty != EntryType::Message || kind.role != Some(Role::Assistant) {
            return Some(None);
        }
        match self.usages[j] {
            UsageFact::NotRead => None,
            UsageFact::None => Some(None),
            UsageFact::Numbers(total, parts) => Some(usage_tokens(total, parts, rules)),
        }
    }
}

/// Where [`last_usage_entry`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastUsage {
    /// The entry whose message holds the last usage that counts.
    At(usize),
    None,
    /// It asks for the facts of the entries before `to` (the first the
    /// facts hold, or the list's end), down to entry `k` at least.
    Wanted {
        k: usize,
        to: usize,
    },
}

/// `getLastAssistantUsage(entries)`: the last entry, from the end, whose
/// message is an assistant's with a usage that counts
/// ([`crate::tokens::estimate::valid_assistant_usage`]), taken from
/// `facts` (of entries: each one's kind and usage; no measures) where they
/// settle it and read otherwise; the entries before `reads_from` that the
/// facts do not hold are asked for.
pub fn last_usage_entry<V: View>(
    entries: &Entries<'_, V>,
    facts: &ContextFacts,
    reads_from: usize,
    rules: &TokenRules,
) -> Result<LastUsage> {
    let reads_from = facts.first_unasked(reads_from);
    for i in (0..entries.len()).rev() {
        if i < reads_from {
            return Ok(LastUsage::Wanted {
                k: i,
                to: facts.from,
            });
        }
        let counts = match facts.usage(i, rules) {
            Some(usage) => usage.is_some(),
            None => entries.with_entry(i, |entry| {
                if entries.kind_of(i, entry)?.role != Some(Role::Assistant) {
                    return Ok(false);
                }
                Ok(valid_assistant_usage(&entry.get(Key::Message)?, rules)
                    .within("message")?
                    .is_some())
            })?,
        };
        if counts {
            return Ok(LastUsage::At(i));
        }
    }
    Ok(LastUsage::None)
}

/// A list of context messages with the facts of its last ones (none at
/// first): messages before those are asked for ([`Error::facts_wanted`],
/// [`FactsList::wanted`]) once the list may ask, and read natively
/// otherwise (and where the facts hold no role).
pub struct FactsList<'f, L> {
    list: L,
    facts: &'f ContextFacts,
    /// The first message given without asking (see [`FactsList::new`]).
    reads_from: usize,
    wanted: Cell<Option<usize>>,
}

impl<'f, L: ContextList> FactsList<'f, L> {
    /// `list` with `facts`: its messages from `reads_from` on are read
    /// natively where the facts do not hold them, and the ones before that
    /// the facts do not hold asked for.
    pub fn new(list: L, facts: &'f ContextFacts, reads_from: usize) -> Self {
        FactsList {
            list,
            facts,
            reads_from: facts.first_unasked(reads_from),
            wanted: Cell::new(None),
        }
    }

    /// What the last error asked for: `Some((k, to))`, the facts of the
    /// messages before `to` (the first the facts hold, or the list's end)
    /// down to message `k` at least.
    pub fn wanted(&self) -> Option<(usize, usize)> {
        self.wanted.get().map(|k| (k, self.facts.from))
    }

    fn ask(&self, k: usize) -> Result<()> {
        if k < self.reads_from {
            self.wanted.set(Some(k));
            return Err(Error::facts_wanted());
        }
        Ok(())
    }
}

impl<L: ContextList> ContextList for FactsList<'_, L> {
    type V = L::V;

    fn len(&self) -> usize {
        self.list.len()
    }

    fn role_hint(&self, k: usize) -> Result<Option<Role>> {
        self.ask(k)?;
        match self.facts.role(k) {
            Some(role) => Ok(Some(role)),
            None => self.list.role_hint(k),
        }
    }

    fn with<R>(&self, k: usize, f: impl FnOnce(Msg<Self::V>) -> Result<R>) -> Result<R> {
        self.ask(k)?;
        self.list.with(k, f)
    }

    fn usage_ahead(&self, k: usize, rules: &TokenRules) -> Result<Option<Option<f64>>> {
        self.ask(k)?;
        // (a kind that is not a message's is read here, as is a message not read)
        Ok(self.facts.role(k).and(self.facts.usage(k, rules)))
    }

    fn chars_ahead(&self, k: usize) -> Result<Option<u64>> {
        self.ask(k)?;
        let Some(role) = self.facts.role(k) else {
            return Ok(None);
        };
        Ok(match self.facts.measures.content(k) {
            Some(Some(size)) => measured_chars(role, size),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests;
