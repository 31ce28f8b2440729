//! Entry ids and the path they link: every entry's `id` and `parentId`,
//! and the `parentId` chain that ends at the last entry (the path the
//! session projection, [`crate::session::projection`], is built from).

use std::borrow::Cow;

use crate::error::{join, quoted, Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::session::entries::Entries;
use crate::session::facts::EntryFacts;
use crate::session::id_index::{all_distinct, IdIndex};

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
    /// For each entry, whether its `parentId` is the `id` of the entry
    /// before (read ahead as such: `parents` holds `None` there, and
    /// [`Ids::parent`] gives that id); it may be empty where no entry's is.
    pub previous: Vec<bool>,
    /// Whether no two string ids are equal, where known (found where the
    /// path is walked ahead, `EntryFacts::finish`; `None` until then, and
    /// again wherever the ids change).
    pub distinct: Option<bool>,
}

impl Ids {
    /// Entry `i`'s `parentId`.
    #[inline]
    pub fn parent(&self, i: usize) -> &Id {
        if self.is_previous(i) {
            &self.ids[i - 1]
        } else {
            &self.parents[i]
        }
    }

    /// Whether entry `i`'s `parentId` is the id of the entry before (never
    /// for the first entry).
    #[inline]
    fn is_previous(&self, i: usize) -> bool {
        i > 0 && self.previous.get(i).copied().unwrap_or(false)
    }

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
        Ok(Cow::Owned(Ids {
            ids,
            parents,
            previous: Vec::new(),
            distinct: None,
        }))
    }

    /// The first index whose id equals `id` (`findIndex(e => e.id === id)`).
    /// Among distinct ids a string id is the only one equal to it, looked
    /// for from the end, where the ids asked for (a compaction's kept
    /// entry, the last usage's) lie.
    pub fn position(&self, id: &Id) -> Option<usize> {
        if self.distinct == Some(true) && id.is_some() {
            return self.ids.iter().rposition(|x| x == id);
        }
        self.ids.iter().position(|x| x == id)
    }

    /// The path from the last entry back to the root through `parentId`
    /// links, root first, the way `buildSessionContext` walks it. A cycle is
    /// an error (the reference would loop forever).
    pub fn path_to_last(&self) -> Result<Vec<usize>> {
        let Some(last) = self.ids.len().checked_sub(1) else {
            return Ok(Vec::new());
        };
        // Later entries win for duplicate ids, as with `Map.set`. Where no
        // two ids are equal, a parent is the entry with its id, looked for
        // from the entry before back (mostly the entry before is the
        // parent); the index is built only for a parent not found that way.
        let mut by_id = None;
        let distinct = self.distinct.unwrap_or_else(|| all_distinct(&self.ids));
        let mut scan = distinct.then(|| Scan::new(&self.ids));
        let mut path = Vec::with_capacity(crate::capacity::reserve_for(self.ids.len()));
        path.push(last);
        let mut current = last;
        while let Some(parent) = self.parent(current).as_ref().filter(|p| !p.is_empty()) {
            // Among distinct ids, a parent read as the id of the entry
            // before is that entry, with nothing to compare.
            let found = if distinct && self.is_previous(current) {
                Some(current - 1)
            } else {
                scan.as_mut()
                    .and_then(|scan| scan.back_from(current, parent))
            };
            let next = match found {
                Some(next) => Some(next),
                None => {
                    scan = None;
                    by_id
                        .get_or_insert_with(|| IdIndex::new(&self.ids))
                        .get(parent, current.wrapping_sub(1))
                }
            };
            let Some(next) = next else {
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

/// Looks for ids among distinct ones from an entry back, comparing, at
/// most as many compares in all as there are ids: a path whose parents come
/// before their children compares each id once at most.
struct Scan<'a> {
    ids: &'a [Id],
    left: usize,
}

impl<'a> Scan<'a> {
    fn new(ids: &'a [Id]) -> Scan<'a> {
        Scan {
            ids,
            left: ids.len(),
        }
    }

    /// The entry before `current` whose id is `id`, the nearest first;
    /// `None` once it is not among them or the compares are spent.
    fn back_from(&mut self, current: usize, id: &JsStr) -> Option<usize> {
        for j in (0..current.min(self.ids.len())).rev() {
            if self.left == 0 {
                return None;
            }
            self.left -= 1;
            if self.ids[j].as_ref() == Some(id) {
                return Some(j);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The walk as the reference makes it over `ids` and their `parents`
    /// as read: a map of every id to its last entry, then parents from the
    /// last entry (`None` for a cycle).
    fn naive(ids: &[Id], parents: &[Id]) -> Option<Vec<usize>> {
        let by_id: HashMap<&JsStr, usize> = (ids.iter().enumerate())
            .filter_map(|(i, id)| id.as_ref().map(|id| (id, i)))
            .collect();
        let Some(mut current) = ids.len().checked_sub(1) else {
            return Some(Vec::new());
        };
        let mut path = vec![current];
        while let Some(parent) = parents[current].as_ref().filter(|p| !p.is_empty()) {
            let Some(&next) = by_id.get(parent) else {
                break;
            };
            if path.len() >= ids.len() {
                return None;
            }
            path.push(next);
            current = next;
        }
        path.reverse();
        Some(path)
    }

    #[test]
    fn walks_as_a_map_of_ids_to_their_last_entry() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n.max(1)
        };
        let mut seen = [0; 4];
        let mut held = 0;
        for round in 0..400 {
            let n = 1 + next(if round % 10 == 0 { 3000 } else { 40 }) as usize;
            let ids: Vec<Id> = (0..n)
                .map(|i| match next(40) {
                    // Now and then an absent id, an empty one, or one met before.
                    0 => None,
                    2 => Some(JsStr::from("")),
                    1 if i > 0 => Some(JsStr::from(format!("e{}", next(i as u64)).as_str())),
                    _ => Some(JsStr::from(format!("e{i}").as_str())),
                })
                .collect();
            let parents: Vec<Id> = (0..n)
                .map(|i| match next(12) {
                    // The root, a branch back, a later entry (a cycle, or
                    // a parent after its child), a parent not there.
                    0 => None,
                    1 => Some(JsStr::from(format!("e{}", next(i as u64)).as_str())),
                    2 => Some(JsStr::from(format!("e{}", next(n as u64)).as_str())),
                    3 => Some(JsStr::from("gone")),
                    4 => Some(JsStr::from("")),
                    _ if i > 0 => ids[i - 1].clone(),
                    _ => None,
                })
                .collect();
            // Now and then (every other round) parents equal to the id
            // before are held as that, as the facts read ahead hold them.
            let read = parents.clone();
            let mut parents = parents;
            let mut previous = Vec::new();
            if round % 2 == 1 {
                previous = (0..n)
                    .map(|i| {
                        i > 0 && ids[i - 1].is_some() && parents[i] == ids[i - 1] && next(4) > 0
                    })
                    .collect();
                for (parent, &p) in parents.iter_mut().zip(&previous) {
                    if p {
                        *parent = None;
                    }
                }
            }
            let expected = naive(&ids, &read);
            let ids = Ids {
                ids,
                parents,
                previous,
                distinct: None,
            };
            held += ids.previous.iter().filter(|&&p| p).count();
            assert!((0..n).all(|i| ids.parent(i) == &read[i]), "round {round}");
            let walked = ids.path_to_last().ok();
            assert_eq!(walked, expected, "round {round}: {ids:?}");
            let distinct = all_distinct(&ids.ids);
            seen[usize::from(distinct) * 2 + usize::from(walked.is_some())] += 1;
            // Known distinct (as `EntryFacts::finish` marks them): the same
            // path, and every id (an absent one too, and one not there)
            // found where `findIndex` finds it.
            let mut known = ids.clone();
            known.distinct = Some(distinct);
            assert_eq!(known.path_to_last().ok(), walked, "round {round}");
            let asked = (known.ids.iter().cloned()).chain([None, Some(JsStr::from("gone"))]);
            for id in asked {
                let first = known.ids.iter().position(|x| x == &id);
                assert_eq!(known.position(&id), first, "round {round}: {id:?}");
            }
        }
        // Distinct ids and not, each with paths walked and cycles found.
        assert!(seen.iter().all(|&k| k > 0), "{seen:?}");
        assert!(held > 0);
    }
}
