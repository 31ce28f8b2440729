//! Entry ids and the path they link: every entry's `id` and `parentId`,
//! and the `parentId` chain that ends at the last entry (the path the
//! session projection, [`crate::session::projection`], is built from).

use std::borrow::Cow;

use crate::error::{join, quoted, Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::session::entries::Entries;
use crate::session::facts::EntryFacts;
use crate::session::id_index::IdIndex;

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
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ids {
    pub ids: Vec<Id>,
    pub parents: Vec<Id>,
}

impl Ids {
    /// The ids as the facts read ahead hold them, when they hold all;
    /// else read here (from the facts where they have them).
    pub fn read<'a, V: View>(entries: &Entries<'a, V>) -> Result<Cow<'a, Ids>> {
        if let Some(ids) = entries.facts().and_then(EntryFacts::ids) {
            return Ok(Cow::Borrowed(ids));
        }
        let reserve = crate::capacity::reserve_for(entries.len());
        let mut ids = Vec::with_capacity(reserve);
        let mut parents = Vec::with_capacity(reserve);
        // Entries whose kind and ids were read ahead are not visited (so no
        // error can come from them here, and the others fail in order); one
        // visit per other entry reads its kind too, for the algorithms after.
        let facts = entries.facts();
        let ahead = |i: usize| {
            facts
                .filter(|f| f.kind(i).is_some())
                .and_then(|f| f.id_and_parent(i))
        };
        let mut from = 0;
        while from < entries.len() {
            let to = (from..entries.len())
                .find(|&i| ahead(i).is_some())
                .unwrap_or(entries.len());
            entries.visit(from..to, |i, entry| {
                entries.kind_of(i, entry)?;
                ids.push(read_id(entry, Key::Id, false)?);
                parents.push(read_id(entry, Key::ParentId, true)?);
                Ok(())
            })?;
            from = to;
            while let Some((id, parent)) = (from < entries.len()).then(|| ahead(from)).flatten() {
                ids.push(id.clone());
                parents.push(parent.clone());
                from += 1;
            }
        }
        Ok(Cow::Owned(Ids { ids, parents }))
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
        let by_id = IdIndex::new(&self.ids);
        let mut path = Vec::with_capacity(crate::capacity::reserve_for(self.ids.len()));
        path.push(last);
        let mut current = last;
        while let Some(parent) = self.parents[current].as_ref().filter(|p| !p.is_empty()) {
            // Mostly the entry before is the parent.
            let Some(next) = by_id.get(parent, current.wrapping_sub(1)) else {
                break;
            };
            if path.len() >= self.ids.len() {
                return Err(Error::invalid(join(&[
                    &"parentId links form a cycle through entry id ",
                    &quoted(parent),
                ])));
            }
            path.push(next);
            current = next;
        }
        path.reverse();
        Ok(path)
    }
}
