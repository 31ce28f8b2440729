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
//!
//! A chunk ([`ContextChunk`]) holds the messages `to - n..to`, last first
//! (`n` the length of `roles`; codes in
//! [`crate::boundary_codes::context_facts`]):
//! - `roles[j]`: message `to - 1 - j`'s role, as an entry-kind code
//!   ([`EntryKind::from_code`], a message's), or not read (0);
//! - `usages[j]`: for an assistant, its `stopReason` (`STOP_ABORTED`,
//!   `STOP_ERROR`, `STOP_OTHER`: any other value) plus its `usage`
//!   (`USAGE_NULLISH`, or `USAGE_NUMBERS`: an object whose `totalTokens`,
//!   `input`, `output`, `cacheRead` and `cacheWrite` are numbers, those
//!   five in `values[5j..5j + 5]`); 0 where not read;
//! - `measures`: a measures chunk ([`MeasuresChunk`]) whose `at` are
//!   message indices.

use std::cell::Cell;

use crate::agent_line::TokenRules;
use crate::boundary_codes::context_facts as code;
use crate::error::{Error, Result};
use crate::session::measures::{Measures, MeasuresChunk};
use crate::session::model::{EntryKind, EntryType, Role};
use crate::session::projection::Msg;
use crate::tokens::estimate::{measured_chars, usage_tokens};
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
    /// Message `len - 1 - j`'s role at `j`, where read.
    roles: Vec<Option<Role>>,
    usages: Vec<UsageFact>,
    measures: Measures,
}

fn malformed(what: &str) -> Error {
    Error::invalid(format!(
        "prime-compaction internal error (a bug, please report it): malformed context facts: {what}"
    ))
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
        if chunk.usages.len() != n || chunk.values.len() != 5 * n {
            return Err(malformed("arrays of different lengths"));
        }
        let from = self.from - n;
        if chunk.measures.at.iter().any(|&i| (i as usize) < from) {
            return Err(malformed("measures of a message not in the chunk"));
        }
        let mut roles = Vec::with_capacity(n);
        let mut usages = Vec::with_capacity(n);
        for j in 0..n {
            roles.push(match chunk.roles[j] {
                0 => None,
                c => match EntryKind::from_code(c) {
                    Some(EntryKind {
                        ty: EntryType::Message,
                        role: Some(role),
                    }) => Some(role),
                    _ => return Err(malformed("a role code")),
                },
            });
            let v = &chunk.values[5 * j..5 * j + 5];
            usages.push(
                match (
                    chunk.usages[j] & code::STOP_MASK,
                    chunk.usages[j] & !code::STOP_MASK,
                ) {
                    (0, 0) => UsageFact::NotRead,
                    (
                        code::STOP_ABORTED | code::STOP_ERROR,
                        code::USAGE_NULLISH | code::USAGE_NUMBERS,
                    )
                    | (code::STOP_OTHER, code::USAGE_NULLISH) => UsageFact::None,
                    (code::STOP_OTHER, code::USAGE_NUMBERS) => {
                        UsageFact::Numbers(v[0], [v[1], v[2], v[3], v[4]])
                    }
                    _ => return Err(malformed("a usage code")),
                },
            );
        }
        self.measures.push(&chunk.measures, self.from)?;
        self.roles.extend(roles);
        self.usages.extend(usages);
        self.from = from;
        Ok(())
    }

    /// Where message `k`'s facts are, when the facts hold it.
    fn slot(&self, k: usize) -> Option<usize> {
        (self.from..self.len).contains(&k).then(|| self.len - 1 - k)
    }

    fn role(&self, k: usize) -> Option<Role> {
        self.roles[self.slot(k)?]
    }
}

/// A list of context messages with the facts of its last ones (none at
/// first): messages before those are asked for ([`Error::facts_wanted`],
/// [`FactsList::wanted`]) once the list may ask, and read natively
/// otherwise (and where the facts hold no role).
pub struct FactsList<'f, L> {
    list: L,
    facts: &'f ContextFacts,
    /// The first message given without asking: the facts' first, or some
    /// of the last messages read natively before any facts.
    reads_from: usize,
    wanted: Cell<Option<usize>>,
}

impl<'f, L: ContextList> FactsList<'f, L> {
    /// `list` with `facts`; with none yet, its messages from `reads_from`
    /// on are read natively and the ones before asked for.
    pub fn new(list: L, facts: &'f ContextFacts, reads_from: usize) -> Self {
        let reads_from = if facts.from < facts.len {
            facts.from
        } else {
            reads_from.min(list.len())
        };
        FactsList {
            list,
            facts,
            reads_from,
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
        let Some(j) = self.facts.slot(k) else {
            return Ok(None);
        };
        Ok(match (self.facts.roles[j], self.facts.usages[j]) {
            (None, _) => None,
            (Some(role), _) if role != Role::Assistant => Some(None),
            (_, UsageFact::NotRead) => None,
            (_, UsageFact::None) => Some(None),
            (_, UsageFact::Numbers(total, parts)) => Some(usage_tokens(total, parts, rules)),
        })
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
