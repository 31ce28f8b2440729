//! Entry ids and the path they link: every entry's `id` and `parentId`,
//! and the `parentId` chain that ends at the last entry (the path the
//! session projection, [`crate::session::projection`], is built from).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::plan::branch_summary::FxHasher;

use crate::error::{Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::session::entries::Entries;

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
