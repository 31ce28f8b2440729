//! [`Object`]: JS key order (array indices first, in numeric order, then
//! insertion order) and `JSON.parse`'s handling of repeated keys.

use std::collections::HashMap;
use std::collections::HashSet;

use crate::js::string::JsStr;

use super::names::PropName;
use super::value::Value;

/// A JS object as `JSON.parse` builds it: own enumerable properties in JS
/// property order, no duplicate keys. Lookup is linear, which beats hashing
/// for the small objects this crate deals with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object {
    pub(super) entries: Vec<(PropName, Value)>,
}

/// The array index a key denotes (`"0"`..=`"4294967294"`, canonical decimal
/// form only), which JS orders before all other keys.
pub fn array_index(key: &JsStr) -> Option<u32> {
    let s = key.as_str()?.as_bytes();
    if s.is_empty() || s.len() > 10 || (s[0] == b'0' && s.len() > 1) {
        return None;
    }
    let mut n: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    if n <= 4_294_967_294 {
        u32::try_from(n).ok()
    } else {
        None
    }
}

fn starts_with_digit(key: &JsStr) -> bool {
    key.as_str()
        .is_some_and(|s| s.as_bytes().first().is_some_and(u8::is_ascii_digit))
}

impl Object {
    pub fn new() -> Object {
        Object::default()
    }

    pub fn with_capacity(n: usize) -> Object {
        Object {
            entries: Vec::with_capacity(n),
        }
    }

    /// Builds an object as if each pair were assigned in turn (`o[k] = v`):
    /// a repeated key keeps its first position and takes the last value, and
    /// array-index keys move to the front in numeric order.
    pub fn from_entries(entries: Vec<(JsStr, Value)>) -> Object {
        Object::from_props(
            entries
                .into_iter()
                .map(|(k, v)| (PropName::new(k), v))
                .collect(),
        )
    }

    pub(super) fn from_props(mut entries: Vec<(PropName, Value)>) -> Object {
        if has_duplicate_keys(&entries) {
            entries = merge_duplicates(entries);
        }
        if entries.iter().any(|(k, _)| starts_with_digit(k)) {
            let keys: Vec<Option<u32>> = entries.iter().map(|(k, _)| array_index(k)).collect();
            let in_order = keys.windows(2).all(|w| match (w[0], w[1]) {
                (Some(a), Some(b)) => a < b,
                (None, Some(_)) => false,
                _ => true,
            });
            if !in_order {
                let mut tagged: Vec<(Option<u32>, (PropName, Value))> =
                    keys.into_iter().zip(entries).collect();
                // Stable: non-index keys keep their insertion order.
                tagged.sort_by_key(|(idx, _)| match idx {
                    Some(i) => (0u8, *i),
                    None => (1u8, 0),
                });
                entries = tagged.into_iter().map(|(_, e)| e).collect();
            }
        }
        Object { entries }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `obj[key]` for an own property.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k.is(key)).map(|(_, v)| v)
    }

    /// Like [`Object::get`], for a key that may hold lone surrogates.
    pub fn get_js(&self, key: &JsStr) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| **k == *key)
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k.is(key))
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// JS assignment `obj[key] = value`: replaces the value of an existing key
    /// in place (returning the old one), else adds the key where JS would put
    /// it (array indices in numeric order at the front, others at the end).
    pub fn insert(&mut self, key: impl Into<JsStr>, value: Value) -> Option<Value> {
        let key = PropName::new(key.into());
        if let Some((_, v)) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            return Some(std::mem::replace(v, value));
        }
        match array_index(&key) {
            Some(n) => {
                let at = self
                    .entries
                    .iter()
                    .position(|(k, _)| array_index(k).is_none_or(|m| m > n))
                    .unwrap_or(self.entries.len());
                self.entries.insert(at, (key, value));
            }
            None => self.entries.push((key, value)),
        }
        None
    }

    /// JS `delete obj[key]`; the other keys keep their order.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let at = self.entries.iter().position(|(k, _)| k.is(key))?;
        Some(self.entries.remove(at).1)
    }

    /// The properties in JS order (`Object.keys` order).
    pub fn entries(&self) -> &[(PropName, Value)] {
        &self.entries
    }

    pub fn iter(&self) -> Iter<'_> {
        self.entries.iter().map(as_pair)
    }

    pub fn keys(&self) -> impl Iterator<Item = &JsStr> {
        self.entries.iter().map(|(k, _)| &**k)
    }

    pub fn into_entries(self) -> Vec<(JsStr, Value)> {
        self.entries
            .into_iter()
            .map(|(k, v)| (k.into_js(), v))
            .collect()
    }
}

fn as_pair((k, v): &(PropName, Value)) -> (&JsStr, &Value) {
    (k, v)
}

/// The properties of an [`Object`], as `(name, value)` pairs.
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (PropName, Value)>,
    fn(&(PropName, Value)) -> (&JsStr, &Value),
>;

impl<'a> IntoIterator for &'a Object {
    type Item = (&'a JsStr, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for Object {
    type Item = (JsStr, Value);
    type IntoIter = std::vec::IntoIter<(JsStr, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_entries().into_iter()
    }
}

impl<K: Into<JsStr>> FromIterator<(K, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Object {
        Object::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

fn has_duplicate_keys(entries: &[(PropName, Value)]) -> bool {
    let n = entries.len();
    if n < 2 {
        return false;
    }
    if n <= 16 {
        for i in 1..n {
            let k = &entries[i].0;
            if entries[..i].iter().any(|(prev, _)| prev == k) {
                return true;
            }
        }
        return false;
    }
    let mut seen: HashSet<&PropName> = HashSet::with_capacity(n);
    !entries.iter().all(|(k, _)| seen.insert(k))
}

/// First position, last value, for each repeated key.
fn merge_duplicates(entries: Vec<(PropName, Value)>) -> Vec<(PropName, Value)> {
    let mut out: Vec<(PropName, Value)> = Vec::with_capacity(entries.len());
    let mut at: HashMap<PropName, usize> = HashMap::with_capacity(entries.len());
    for (k, v) in entries {
        match at.get(&k) {
            Some(&i) => {
                if let Some(slot) = out.get_mut(i) {
                    slot.1 = v;
                }
            }
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    out
}
