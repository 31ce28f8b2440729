//! `SessionManager.getBranch` over the entries of a parsed session file.
//!
//! The reference indexes every non-header entry by `id` in a `Map` (a later
//! entry with the same id replaces an earlier one), takes the last entry as
//! the leaf, and walks `parentId` links up to the root: a falsy or unknown
//! `parentId` ends the walk, and an unknown or empty leaf id gives an empty
//! branch. The same happens here; a cycle, on which the reference would loop
//! forever, is an error.

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::js::json::Value;
use crate::js::string::JsStr;

/// Where the branch ends.
#[derive(Debug, Clone, Copy)]
pub enum Leaf<'a> {
    /// The last entry in the file, as `SessionManager` picks it on load.
    Last,
    /// The entry with this id.
    Id(&'a JsStr),
}

/// A `Map` key that a lookup can find: lookups only happen with truthy keys,
/// and objects are never identical to another line's value.
#[derive(Debug, PartialEq, Eq, Hash)]
enum IdKey<'a> {
    Str(&'a JsStr),
    /// A truthy number's bits (never 0, -0 or NaN).
    Num(u64),
    True,
}

fn key_of(value: &Value) -> Option<IdKey<'_>> {
    match value {
        Value::String(s) if !s.is_empty() => Some(IdKey::Str(s)),
        Value::Number(n) if *n != 0.0 && !n.is_nan() => Some(IdKey::Num(n.to_bits())),
        Value::Bool(true) => Some(IdKey::True),
        _ => None,
    }
}

fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Number(n)) => *n != 0.0 && !n.is_nan(),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// Whether `entry` is a session header (`"type":"session"`), which no branch holds.
pub fn is_header(entry: &Value) -> bool {
    entry.get("type").and_then(Value::as_str) == Some("session")
}

/// The positions in `entries` of the branch ending at `leaf`, root first.
/// `line_of(i)` names entry `i` in a cycle error.
pub fn branch_positions(
    entries: &[Value],
    leaf: Leaf<'_>,
    line_of: impl Fn(usize) -> String,
) -> Result<Vec<usize>> {
    let mut by_id: FxHashMap<IdKey<'_>, usize> =
        FxHashMap::with_capacity_and_hasher(entries.len(), Default::default());
    let mut last = None;
    for (i, entry) in entries.iter().enumerate() {
        if is_header(entry) {
            continue;
        }
        last = Some(i);
        if let Some(key) = entry.get("id").and_then(key_of) {
            by_id.insert(key, i);
        }
    }
    let start = match leaf {
        // `getBranch()` looks the leaf's own id up, which finds that very entry.
        Leaf::Last => last.filter(|&i| truthy(entries[i].get("id"))),
        Leaf::Id(id) if id.is_empty() => None,
        Leaf::Id(id) => by_id.get(&IdKey::Str(id)).copied(),
    };
    let Some(start) = start else {
        return Ok(Vec::new());
    };
    let mut path = vec![start];
    let mut current = start;
    while let Some(&parent) = entries[current]
        .get("parentId")
        .and_then(key_of)
        .and_then(|key| by_id.get(&key))
    {
        if path.len() >= entries.len() {
            return Err(Error::invalid(format!(
                "{}: parentId links form a cycle",
                line_of(parent)
            )));
        }
        path.push(parent);
        current = parent;
    }
    path.reverse();
    Ok(path)
}
