//! The messages the agent would send for a path of entries
//! (`buildSessionContext(entries).messages`), reduced to what token
//! estimation needs: which entry each message comes from, and how.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::plan::branch_summary::FxHasher;

use crate::error::{Context, Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::session::entries::Entries;
use crate::session::model::{EntryType, Role};
use crate::tokens::estimate::{context_tokens, estimate_context, valid_usage, ContextEstimate};

/// One message of the rebuilt context, by the entry it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextMessage {
    /// `entry.message` of a `message` entry.
    Message(usize),
    /// The custom message made from a `custom_message` entry.
    Custom(usize),
    /// The branch summary message made from a `branch_summary` entry.
    BranchSummary(usize),
    /// The compaction summary message made from a `compaction` entry.
    CompactionSummary(usize),
}

/// An entry id: `None` stands for `undefined` (old sessions have no ids).
pub type Id = Option<JsStr>;

/// Reads `entry[key]` as an id: a string, or absent.
pub fn read_id<V: View>(entry: &V, key: Key, allow_null: bool) -> Result<Id> {
    let v = entry.get(key)?;
    if let Some(s) = v.string() {
        return Ok(Some(s));
    }
    match v.kind() {
        Kind::Undefined => Ok(None),
        Kind::Null if allow_null => Ok(None),
        other => Err(Error::type_error(
            key.as_str(),
            format!("expected a string id, got {}", other.describe()),
        )),
    }
}

/// Every entry's `id` and `parentId`, read once.
pub struct Ids {
    pub ids: Vec<Id>,
    pub parents: Vec<Id>,
}

impl Ids {
    pub fn read<V: View>(entries: &Entries<V>) -> Result<Ids> {
        let reserve = crate::capacity::reserve_for(entries.len());
        let mut ids = Vec::with_capacity(reserve);
        let mut parents = Vec::with_capacity(reserve);
        // One visit per entry reads its kind too, for the algorithms after.
        entries.visit(0..entries.len(), |i, entry| {
            entries.kind_of(i, entry)?;
            ids.push(read_id(entry, Key::Id, false)?);
            parents.push(read_id(entry, Key::ParentId, true)?);
            Ok(())
        })?;
        Ok(Ids { ids, parents })
    }

    /// The first index whose id equals `id` (`findIndex(e => e.id === id)`).
    pub fn position(&self, id: &Id) -> Option<usize> {
        self.ids.iter().position(|x| x == id)
    }

    /// The path from the last entry back to the root through `parentId`
    /// links, root first, the way `buildSessionContext` walks it. A cycle is
    /// an error (the reference would loop forever).
    pub fn path_to_last(&self) -> Result<Vec<usize>> {
        let Some(last) = self.ids.len().checked_sub(1) else {
            return Ok(Vec::new());
        };
        // Later entries win for duplicate ids, as with `Map.set`.
        let mut by_id: HashMap<&JsStr, usize, BuildHasherDefault<FxHasher>> =
            HashMap::with_capacity_and_hasher(
                crate::capacity::reserve_for(self.ids.len()),
                Default::default(),
            );
        for (i, id) in self.ids.iter().enumerate() {
            if let Some(id) = id {
                by_id.insert(id, i);
            }
        }
        let mut path = vec![last];
        let mut current = last;
        while let Some(parent) = self.parents[current].as_ref().filter(|p| !p.is_empty()) {
            let Some(&next) = by_id.get(parent) else {
                break;
            };
            if path.len() >= self.ids.len() {
                return Err(Error::invalid(format!(
                    "parentId links form a cycle through entry id {:?}",
                    parent.to_string_lossy()
                )));
            }
            path.push(next);
            current = next;
        }
        path.reverse();
        Ok(path)
    }
}

/// The context messages for the path ending at the last entry.
pub fn context_messages<V: View>(entries: &Entries<V>, ids: &Ids) -> Result<Vec<ContextMessage>> {
    let path = ids.path_to_last()?;
    let mut compaction = None;
    for &i in &path {
        if entries.kind(i)?.ty == EntryType::Compaction {
            compaction = Some(i);
        }
    }

    let mut out = Vec::new();
    if let Some(c) = compaction {
        out.push(ContextMessage::CompactionSummary(c));
    }
    let mut append = |i: usize| -> Result<()> {
        match entries.kind(i)?.ty {
            EntryType::Message => out.push(ContextMessage::Message(i)),
            EntryType::CustomMessage => out.push(ContextMessage::Custom(i)),
            EntryType::BranchSummary => {
                if entries.with_entry(i, |e| Ok(e.get(Key::Summary)?.truthy()))? {
                    out.push(ContextMessage::BranchSummary(i));
                }
            }
            EntryType::Compaction | EntryType::Other => {}
        }
        Ok(())
    };

    match compaction {
        None => {
            for &i in &path {
                append(i)?;
            }
        }
        Some(c) => {
            let id = &ids.ids[c];
            let first_kept = entries.with_entry(c, |e| read_id(e, Key::FirstKeptEntryId, false))?;
            // The first compaction on the path with this id: duplicates resolve as findIndex does.
            let mut at = path.len();
            for (p, &i) in path.iter().enumerate() {
                if entries.kind(i)?.ty == EntryType::Compaction && &ids.ids[i] == id {
                    at = p;
                    break;
                }
            }
            let mut found = false;
            for &i in &path[..at.min(path.len())] {
                if ids.ids[i] == first_kept {
                    found = true;
                }
                if found {
                    append(i)?;
                }
            }
            for &i in path.iter().skip(at + 1) {
                append(i)?;
            }
        }
    }
    Ok(out)
}

/// `estimateTokens` of one context message.
pub fn context_message_tokens<V: View>(
    entries: &Entries<V>,
    message: ContextMessage,
) -> Result<u64> {
    match message {
        ContextMessage::Message(i) => entries.message_tokens(i),
        ContextMessage::Custom(i) => entries.with_entry(i, |e| {
            entries
                .counter
                .content(&e.get(Key::Content)?)
                .within("content")
        }),
        ContextMessage::BranchSummary(i) | ContextMessage::CompactionSummary(i) => {
            entries.with_entry(i, |e| entries.counter.text_field(e, Key::Summary))
        }
    }
}

/// `estimateContextTokens(buildSessionContext(entries).messages)`.
pub fn estimate_session_tokens<V: View>(
    entries: &Entries<V>,
    ids: &Ids,
) -> Result<ContextEstimate> {
    let messages = context_messages(entries, ids)?;
    estimate_context(
        messages.len(),
        |k| match messages[k] {
            ContextMessage::Message(i) if entries.kind(i)?.has_role(Role::Assistant) => entries
                .with_entry(i, |e| {
                    let message = e.get(Key::Message)?;
                    valid_usage(&message)?
                        .map(|u| context_tokens(&u).within("usage"))
                        .transpose()
                        .within("message")
                }),
            _ => Ok(None),
        },
        |k| context_message_tokens(entries, messages[k]),
    )
}
