//! Which entry an id names: the last entry with that id, as the
//! reference's `Map` from ids to entries answers (a later `set` wins).
//!
//! Every prepareCompaction walks the path from the last entry through the
//! ids of all of them. Where no two ids are equal ([`all_distinct`], which
//! compares only the few ids whose hashes share a bit of a small bitmap),
//! the walk finds each parent by comparing ids from the entry before back
//! (`Ids::path_to_last`), and needs no index. Otherwise, or for a parent it
//! does not find that way, it builds one ([`IdIndex`]). A hash map of 100k
//! ids, and a lookup in it per step, is a cache miss or two for each: most
//! of the cut's native time. So the index is first built as each id's hash
//! with its entry's index in the low bits, sorted by the hash (a radix
//! sort, which reads and writes in order; only as many of the hash's bits
//! as make a shared hash rare). When no two ids share a hash, no two ids
//! are equal either, and an id equal to a given entry's is that entry's: a
//! step checks the entry before the current one first (in a linear
//! session, its parent) and needs no search. Only when two hashes are
//! equal (a duplicate id, or a collision) is the hash map built, as before.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault};

use crate::js::string::JsStr;
use crate::plan::branch_summary::FxHasher;
use crate::session::context::Id;

type Hasher = BuildHasherDefault<FxHasher>;

/// Past this many index bits (entries), the hash map is used.
const MAX_INDEX_BITS: u32 = 32;

/// The entries' ids, indexed for lookups by id.
pub struct IdIndex<'a> {
    ids: &'a [Id],
    by: By<'a>,
}

enum By<'a> {
    /// Each id's hash (its `hash_bits(shift)` low bits) shifted left by
    /// `shift`, or'ed with its index, sorted; no two share the hash.
    Hash { keys: Vec<u64>, shift: u32 },
    /// Every id to the last index that has it.
    Map(HashMap<&'a JsStr, usize, Hasher>),
}

impl<'a> IdIndex<'a> {
    pub fn new(ids: &'a [Id]) -> IdIndex<'a> {
        let shift = u64::BITS - (ids.len() as u64).leading_zeros();
        if shift <= MAX_INDEX_BITS {
            let mut keys = Vec::with_capacity(crate::capacity::reserve_for(ids.len()));
            let mask = hash_mask(shift);
            for (i, id) in ids.iter().enumerate() {
                if let Some(id) = id {
                    keys.push(((hash(id) & mask) << shift) | i as u64);
                }
            }
            sort_from_bit(&mut keys, shift, mask.count_ones());
            if keys.windows(2).all(|w| w[0] >> shift != w[1] >> shift) {
                return IdIndex {
                    ids,
                    by: By::Hash { keys, shift },
                };
            }
        }
        let mut map = HashMap::with_capacity_and_hasher(
            crate::capacity::reserve_for(ids.len()),
            Hasher::default(),
        );
        for (i, id) in ids.iter().enumerate() {
            if let Some(id) = id {
                map.insert(id, i);
            }
        }
        IdIndex {
            ids,
            by: By::Map(map),
        }
    }

    /// The index of the last entry whose id is `id`; `likely` names the
    /// entry to try first (it need not be one).
    pub fn get(&self, id: &JsStr, likely: usize) -> Option<usize> {
        match &self.by {
            By::Map(map) => map.get(id).copied(),
            By::Hash { keys, shift } => {
                // Ids are unique here: an entry with this id is the one.
                if self.ids.get(likely).and_then(Option::as_ref) == Some(id) {
                    return Some(likely);
                }
                let wanted = hash(id) & hash_mask(*shift);
                let at = keys.partition_point(|k| k >> shift < wanted);
                let key = *keys.get(at).filter(|k| *k >> shift == wanted)?;
                let i = (key & ((1 << shift) - 1)) as usize;
                (self.ids[i].as_ref() == Some(id)).then_some(i)
            }
        }
    }
}

/// Whether no two of `ids` are equal (absent ones aside). Each id's hash
/// picks a bit of a bitmap sixteen bits per id wide (small enough to stay
/// in a core's cache); only ids whose bit an earlier id set are compared,
/// sorted by their hashes. Sorting every id instead (as [`IdIndex::new`]
/// does) was most of the time of a walk over a session's ids.
pub fn all_distinct(ids: &[Id]) -> bool {
    let hashes: Vec<u64> = ids.iter().flatten().map(hash).collect();
    let bits = (hashes.len().max(64).next_power_of_two() * 16).trailing_zeros();
    let bit = |h: u64| (h >> (u64::BITS - bits)) as usize;
    let mut seen = vec![0u64; (1 << bits) / 64];
    let mut again = vec![0u64; (1 << bits) / 64];
    let mut any_again = false;
    for &h in &hashes {
        let (word, mask) = (bit(h) / 64, 1u64 << (bit(h) % 64));
        if seen[word] & mask != 0 {
            again[word] |= mask;
            any_again = true;
        }
        seen[word] |= mask;
    }
    if !any_again {
        return true;
    }
    let mut suspects: Vec<(u64, &JsStr)> = (hashes.iter().zip(ids.iter().flatten()))
        .filter(|(&h, _)| again[bit(h) / 64] & (1 << (bit(h) % 64)) != 0)
        .map(|(&h, id)| (h, id))
        .collect();
    suspects.sort_unstable_by_key(|&(h, _)| h);
    // Equal ids have equal hashes: only a run of one hash can hold two.
    suspects.chunk_by(|a, b| a.0 == b.0).all(|run| {
        run.iter()
            .enumerate()
            .all(|(k, (_, id))| run[k + 1..].iter().all(|(_, other)| other != id))
    })
}

/// The hash bits kept beside `shift` index bits: twice as many as the
/// index and 12 more (so two of 2^shift ids share them about once in
/// 8,192 sessions, and the map is built then), or all that fit. Fewer
/// bits, fewer passes of the sort: 4 in place of 7 for 1k ids.
fn hash_mask(shift: u32) -> u64 {
    let bits = (2 * shift + 12).min(u64::BITS - shift);
    u64::MAX >> (u64::BITS - bits)
}

fn hash(id: &JsStr) -> u64 {
    Hasher::default().hash_one(id)
}

/// Sorts `keys` by their `bits` bits from `shift` up (the bits above are
/// zero: a least-significant-digit radix sort, a byte at a time; bytes
/// every key shares are skipped).
fn sort_from_bit(keys: &mut Vec<u64>, shift: u32, bits: u32) {
    let mut counts = [[0usize; 256]; 8];
    let digits = bits.min(u64::BITS - shift).div_ceil(8) as usize;
    for &k in keys.iter() {
        for (d, count) in counts.iter_mut().enumerate().take(digits) {
            count[((k >> (shift + 8 * d as u32)) & 0xFF) as usize] += 1;
        }
    }
    let mut other = vec![0u64; keys.len()];
    for (d, count) in counts.iter().enumerate().take(digits) {
        if count.contains(&keys.len()) {
            continue;
        }
        let mut starts = [0usize; 256];
        let mut at = 0;
        for (start, &c) in starts.iter_mut().zip(count) {
            *start = at;
            at += c;
        }
        let bit = shift + 8 * d as u32;
        for &k in keys.iter() {
            let b = ((k >> bit) & 0xFF) as usize;
            other[starts[b]] = k;
            starts[b] += 1;
        }
        std::mem::swap(keys, &mut other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the index must answer: the map of every id to its last index.
    fn expected(ids: &[Id], id: &JsStr) -> Option<usize> {
        ids.iter().rposition(|x| x.as_ref() == Some(id))
    }

    fn id(s: &str) -> Id {
        Some(JsStr::from(s))
    }

    #[test]
    fn sorts_by_the_bits_from_the_shift_up() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for (n, shift) in [(0, 1), (1, 1), (2, 2), (1000, 10), (70_000, 17), (5000, 32)] {
            let mut keys: Vec<u64> = (0..n)
                .map(|i| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state << shift) | i
                })
                .collect();
            let mut want = keys.clone();
            want.sort_unstable_by_key(|k| k >> shift);
            sort_from_bit(&mut keys, shift, u64::BITS - shift);
            let high = |v: &[u64]| v.iter().map(|k| k >> shift).collect::<Vec<_>>();
            assert_eq!(high(&keys), high(&want), "n {n}, shift {shift}");
            // A radix sort is stable: equal high bits keep the order they came in.
            let mut again = want.clone();
            again.sort_by_key(|k| k >> shift);
            sort_from_bit(&mut want, shift, u64::BITS - shift);
            assert_eq!(want, again);
        }
        // Keys that share every byte but one, and keys all equal.
        let mut keys: Vec<u64> = (0..300u64).rev().map(|i| (i << 40) | 7).collect();
        sort_from_bit(&mut keys, 3, 61);
        assert!(keys.windows(2).all(|w| w[0] <= w[1]));
        let mut keys = vec![5u64 << 8; 10];
        sort_from_bit(&mut keys, 8, 56);
        assert_eq!(keys, vec![5u64 << 8; 10]);
    }

    #[test]
    fn answers_as_the_map_of_ids_to_their_last_entry() {
        let unique: Vec<Id> = (0..5000)
            .map(|i| id(&format!("{:08x}", i * 7919)))
            .collect();
        let mut duplicated = unique.clone();
        duplicated[4000] = duplicated[10].clone();
        let mut sparse = unique.clone();
        for i in (0..5000).step_by(3) {
            sparse[i] = None;
        }
        let odd: Vec<Id> = vec![
            id("é"),
            Some(JsStr::from_utf16(&[0xD800, 0x61])),
            id(""),
            None,
            id("a"),
            Some(JsStr::from_utf16(&[0x61])),
            id("a long id that does not fit inline at all"),
        ];
        let mut probes: Vec<JsStr> = ["absent", "", "a", "é", "00000000", "0000ab0c"]
            .iter()
            .map(|s| JsStr::from(*s))
            .collect();
        probes.push(JsStr::from_utf16(&[0xD800, 0x61]));
        probes.push(JsStr::from_utf16(&[0xD800]));
        for ids in [&unique, &duplicated, &sparse, &odd, &Vec::new()] {
            let index = IdIndex::new(ids);
            let all: Vec<JsStr> = ids
                .iter()
                .flatten()
                .cloned()
                .chain(probes.iter().cloned())
                .collect();
            for probe in &all {
                for likely in [0, 1, 9, 10, 4000, 4999, 5000, usize::MAX] {
                    assert_eq!(
                        index.get(probe, likely),
                        expected(ids, probe),
                        "{probe:?} from {likely}"
                    );
                }
            }
        }
        assert!(matches!(IdIndex::new(&unique).by, By::Hash { .. }));
        assert!(matches!(IdIndex::new(&duplicated).by, By::Map(_)));
        // "a" twice (once made from UTF-16): equal ids, so the map.
        assert!(matches!(IdIndex::new(&odd).by, By::Map(_)));
    }

    #[test]
    fn tells_whether_any_two_ids_are_equal() {
        let naive = |ids: &[Id]| {
            let present: Vec<&JsStr> = ids.iter().flatten().collect();
            (0..present.len()).all(|i| present[i + 1..].iter().all(|o| *o != present[i]))
        };
        // Enough ids that many share their bitmap bit, so the compares run.
        let unique: Vec<Id> = (0..5_000)
            .map(|i| id(&format!("{:08x}", i * 7919)))
            .collect();
        let mut cases = vec![unique.clone(), Vec::new(), vec![None, None], vec![id("")]];
        for (a, b) in [(0, 4_999), (10, 11), (3000, 17)] {
            let mut duplicated = unique.clone();
            duplicated[b] = duplicated[a].clone();
            cases.push(duplicated);
        }
        let mut sparse = unique.clone();
        for i in (0..sparse.len()).step_by(3) {
            sparse[i] = None;
        }
        cases.push(sparse);
        // The same id stored two ways, and ids that differ only past what fits inline.
        cases.push(vec![id("a"), Some(JsStr::from_utf16(&[0x61]))]);
        cases.push(vec![
            Some(JsStr::from_utf16(&[0xD800, 0x61])),
            Some(JsStr::from_utf16(&[0xD800, 0x62])),
            id("a long id that does not fit inline, one"),
            id("a long id that does not fit inline, two"),
        ]);
        for (k, ids) in cases.iter().enumerate() {
            assert_eq!(all_distinct(ids), naive(ids), "case {k}");
        }
        assert!(all_distinct(&cases[0]));
        assert!(!all_distinct(&cases[4]));
    }
}
