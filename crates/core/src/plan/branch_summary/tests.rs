use std::collections::HashMap;

use super::*;
use crate::error::ErrorKind;
use crate::js::json::view::Val;
use crate::js::json::{parse, Value};
use crate::js::string::JsStr;

/// A session as a map from id to parent id; entries are their own ids.
struct MapSession {
    parents: HashMap<String, Option<String>>,
    /// Lookup keys that resolve to an entry carrying another id.
    aliases: HashMap<String, String>,
    lookups: usize,
}

impl MapSession {
    fn new(links: &[(&str, Option<&str>)]) -> Self {
        MapSession {
            parents: links
                .iter()
                .map(|(id, p)| (id.to_string(), p.map(str::to_string)))
                .collect(),
            aliases: HashMap::new(),
            lookups: 0,
        }
    }
}

fn id(text: &str) -> String {
    text.to_string()
}

impl EntryLookup for MapSession {
    type Entry = String;
    type Id = String;

    fn get_entry(&mut self, key: &String) -> Result<Option<Found<String, String>>> {
        self.lookups += 1;
        let key = self.aliases.get(key).unwrap_or(key);
        Ok(self.parents.get(key).map(|parent| Found {
            entry: key.clone(),
            id: key.clone(),
            parent: parent.clone().filter(|p| !p.is_empty()),
        }))
    }

    fn describe(&self, id: &String) -> JsStr {
        JsStr::from_str(id)
    }
}

/// A ─┬─ B ─ C ─ D
///    └─ E ─ F
fn forked() -> MapSession {
    MapSession::new(&[
        ("A", None),
        ("B", Some("A")),
        ("C", Some("B")),
        ("D", Some("C")),
        ("E", Some("A")),
        ("F", Some("E")),
    ])
}

fn collect(
    session: &mut MapSession,
    old: Option<&str>,
    target: Option<&str>,
) -> (Vec<String>, Option<String>) {
    let out = collect_entries_for_branch_summary(session, old.map(id), target.map(id))
        .unwrap_or_else(|e| panic!("{e}"));
    (out.entries, out.common_ancestor_id)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn collects_the_abandoned_branch_up_to_the_common_ancestor() {
    let mut s = forked();
    assert_eq!(
        collect(&mut s, Some("D"), Some("F")),
        (strings(&["B", "C", "D"]), Some("A".into()))
    );
    // Back to an ancestor of the old leaf: only what lies below it.
    assert_eq!(
        collect(&mut s, Some("D"), Some("B")),
        (strings(&["C", "D"]), Some("B".into()))
    );
    // Staying put leaves nothing behind.
    assert_eq!(
        collect(&mut s, Some("D"), Some("D")),
        (vec![], Some("D".into()))
    );
    // Moving down from an ancestor leaves nothing behind either.
    assert_eq!(
        collect(&mut s, Some("B"), Some("D")),
        (vec![], Some("B".into()))
    );
}

#[test]
fn no_old_leaf_or_unknown_ids() {
    let mut s = forked();
    assert_eq!(collect(&mut s, None, Some("F")), (vec![], None));
    assert_eq!(s.lookups, 0);
    // An unknown target has an empty path: the whole old branch is collected.
    assert_eq!(
        collect(&mut s, Some("D"), Some("nope")),
        (strings(&["A", "B", "C", "D"]), None)
    );
    assert_eq!(
        collect(&mut s, Some("D"), None),
        (strings(&["A", "B", "C", "D"]), None)
    );
    assert_eq!(collect(&mut s, Some("nope"), Some("F")), (vec![], None));
    // An unknown old leaf needs nothing of the target's path, broken or not.
    let mut s = MapSession::new(&[("A", Some("gone")), ("B", Some("A")), ("C", Some("B"))]);
    assert_eq!(collect(&mut s, Some("nope"), Some("C")), (vec![], None));
    let mut s = MapSession::new(&[("A", Some("B")), ("B", Some("A"))]);
    assert_eq!(collect(&mut s, Some("nope"), Some("A")), (vec![], None));
}

#[test]
fn an_unresolved_parent_is_an_error_naming_both_ids() {
    let mut s = MapSession::new(&[
        ("A", None),
        ("B", Some("A")),
        ("C", Some("missing")),
        ("D", Some("C")),
    ]);
    let err =
        collect_entries_for_branch_summary(&mut s, Some("D".to_string()), Some("B".to_string()))
            .err()
            .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("entry \"C\" has parentId \"missing\", which getEntry does not resolve")
    );
}

#[test]
fn an_entry_found_under_another_id_is_collected_as_the_reference_does() {
    // C's parent is "bee", which getEntry resolves to B: the reference's
    // second walk compares "bee" with the ancestor "B" and walks past it.
    let mut s = MapSession::new(&[
        ("A", None),
        ("B", Some("A")),
        ("C", Some("bee")),
        ("D", Some("C")),
    ]);
    s.aliases.insert("bee".into(), "B".into());
    assert_eq!(
        collect(&mut s, Some("D"), Some("B")),
        (strings(&["A", "B", "C", "D"]), Some("B".into()))
    );
    assert_eq!(
        collect(&mut s, Some("D"), Some("C")),
        (strings(&["D"]), Some("C".into()))
    );
}

#[test]
fn walks_each_path_once() {
    let mut s = forked();
    collect(&mut s, Some("D"), Some("F"));
    // F, E and A on the target's path, then four on the old one (D to A, where they meet).
    assert_eq!(s.lookups, 7);
}

#[test]
fn a_parent_cycle_is_an_error_naming_an_id() {
    let mut s = MapSession::new(&[
        ("A", Some("C")),
        ("B", Some("A")),
        ("C", Some("B")),
        ("D", Some("C")),
        ("X", Some("Y")),
        ("Y", Some("X")),
        ("R", None),
    ]);
    // On the old branch, and among the target's first steps when the old
    // branch does not meet them.
    for (old, target) in [("D", "R"), ("R", "Y")] {
        let err = collect_entries_for_branch_summary(&mut s, Some(id(old)), Some(id(target)))
            .err()
            .unwrap_or_else(|| panic!("no error for {old} -> {target}"));
        assert_eq!(err.kind, ErrorKind::Invalid);
        assert!(
            err.message.to_string().contains("cycle through entry id"),
            "{err}"
        );
    }
    // A self-parent is the shortest cycle.
    let mut s = MapSession::new(&[("A", Some("A"))]);
    assert!(collect_entries_for_branch_summary(&mut s, Some(id("A")), None).is_err());
    // A cycle past the shared entry is never walked into from the old side:
    // staying put on B leaves nothing behind, as on any session.
    let mut s = MapSession::new(&[("A", Some("C")), ("B", Some("A")), ("C", Some("B"))]);
    assert_eq!(
        collect(&mut s, Some("B"), Some("B")),
        (vec![], Some("B".into()))
    );
}

/// A chain e0 ← e1 ← … ← e{n-1}, with `fork` a child of e{at}.
fn chain_with_fork(n: usize, at: usize) -> MapSession {
    let names: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    let mut links: Vec<(&str, Option<&str>)> = vec![(&names[0], None)];
    for i in 1..n {
        links.push((&names[i], Some(&names[i - 1])));
    }
    links.push(("fork", Some(&names[at])));
    MapSession::new(&links)
}

#[test]
fn nothing_above_the_shared_entry_is_read() {
    // The target's first steps reach the root (e0..e10 and the fork), then
    // the old branch goes from e99 down to e10 and stops there.
    let mut s = chain_with_fork(100, 10);
    let (entries, ca) = collect(&mut s, Some("e99"), Some("fork"));
    assert_eq!((entries.len(), ca.as_deref()), (89, Some("e10")));
    assert_eq!(s.lookups, 12 + 90);
    // A fork far from the root: the target's walk stops after its first
    // TARGET_STEPS steps, and the old branch stops at the fork's parent.
    let mut s = chain_with_fork(1000, 500);
    let (entries, ca) = collect(&mut s, Some("e999"), Some("fork"));
    assert_eq!((entries.len(), ca.as_deref()), (499, Some("e500")));
    assert_eq!(s.lookups, TARGET_STEPS + 500);
    // Back up the same branch: the target itself is the shared entry.
    let mut s = chain_with_fork(1000, 500);
    let (entries, ca) = collect(&mut s, Some("e999"), Some("e990"));
    assert_eq!((entries.len(), ca.as_deref()), (9, Some("e990")));
    assert_eq!(s.lookups, TARGET_STEPS + 10);
}

#[test]
fn a_fork_beyond_the_targets_first_steps_is_found_going_on_from_there() {
    // The fork is TARGET_STEPS + 5 steps below the target: the old branch
    // is walked to its root, then the target's path goes on until it meets it.
    let n = 1000;
    let mut links: Vec<(String, Option<String>)> = (0..n)
        .map(|i| (format!("e{i}"), (i > 0).then(|| format!("e{}", i - 1))))
        .collect();
    let side = TARGET_STEPS + 5;
    for j in 0..side {
        let parent = if j == 0 {
            "e400".to_string()
        } else {
            format!("s{}", j - 1)
        };
        links.push((format!("s{j}"), Some(parent)));
    }
    let borrowed: Vec<(&str, Option<&str>)> = links
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_deref()))
        .collect();
    let mut s = MapSession::new(&borrowed);
    let target = format!("s{}", side - 1);
    let (entries, ca) = collect(&mut s, Some("e999"), Some(&target));
    assert_eq!((entries.len(), ca.as_deref()), (599, Some("e400")));
    assert_eq!(s.lookups, side + 1 + n);
}

#[test]
fn an_error_past_the_shared_entry_is_not_read() {
    // A parent that does not resolve above the fork, on both paths.
    let mut s = MapSession::new(&[
        ("A", Some("missing")),
        ("B", Some("A")),
        ("C", Some("B")),
        ("D", Some("B")),
    ]);
    assert_eq!(
        collect(&mut s, Some("C"), Some("D")),
        (strings(&["C"]), Some("B".into()))
    );
    // The target's own path breaks below the fork: the old branch is walked
    // whole without meeting it, and the target's error is the answer.
    let mut s = MapSession::new(&[
        ("A", None),
        ("B", Some("A")),
        ("C", Some("B")),
        ("X", Some("missing")),
        ("D", Some("X")),
    ]);
    let err = collect_entries_for_branch_summary(&mut s, Some(id("C")), Some(id("D")))
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("entry \"X\" has parentId \"missing\", which getEntry does not resolve")
    );
    assert_eq!(s.lookups, 3 + 3);
}

#[test]
fn deep_chains_do_not_recurse() {
    let n = 200_000;
    let names: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    let mut links: Vec<(&str, Option<&str>)> = vec![(&names[0], None)];
    for i in 1..n {
        links.push((&names[i], Some(&names[i - 1])));
    }
    let mut s = MapSession::new(&links);
    let (entries, ca) = collect(&mut s, Some(&names[n - 1]), Some(&names[10]));
    assert_eq!(entries.len(), n - 11);
    assert_eq!(entries.first(), Some(&names[11]));
    assert_eq!(ca.as_deref(), Some("e10"));
}

fn json(text: &str) -> Value {
    parse(text).unwrap_or_else(|e| panic!("bad test JSON: {e:?}"))
}

/// The entries of a preparation's messages.
fn at(p: &BranchPreparation) -> Vec<u32> {
    p.messages.iter().map(|m| m.entry).collect()
}

fn prepare(entries: &str, budget: f64) -> BranchPreparation {
    let v = json(entries);
    let view = Val::new(&v);
    let list = Entries::new(&view, "entries", &crate::agent_line::AgentLine::V0_78)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut p = prepare_branch_entries(&list, budget).unwrap_or_else(|e| panic!("{e}"));
    // The Sets as JS ends up with them: seeded from details, then tool calls.
    p.file_ops = crate::plan::file_ops::seeded_file_ops(&list, p.details_from.clone(), &p.file_ops)
        .unwrap_or_else(|e| panic!("{e}"));
    p
}

fn set(items: &[&str]) -> crate::plan::file_ops::PathSet {
    items.iter().map(|s| JsStr::from_str(s)).collect()
}

/// 40 chars of text: 10 tokens.
const TEXT40: &str = "0123456789012345678901234567890123456789";

fn session_text() -> String {
    format!(
        r#"[
  {{"type":"branch_summary","id":"s","summary":"{TEXT40}","fromId":"x","timestamp":"2025-01-01T00:00:00Z",
    "details":{{"readFiles":["old.txt","b.txt"],"modifiedFiles":["m.txt"]}}}},
  {{"type":"branch_summary","id":"h","summary":"hook","fromId":"x","fromHook":true,"timestamp":"2025-01-01T00:00:00Z",
    "details":{{"readFiles":["hook.txt"]}}}},
  {{"type":"model_change","id":"mc"}},
  {{"type":"message","id":"u","message":{{"role":"user","content":"{TEXT40}"}}}},
  {{"type":"message","id":"a","message":{{"role":"assistant","content":[
    {{"type":"toolCall","name":"read","arguments":{{"path":"a.txt"}}}},
    {{"type":"toolCall","name":"edit","arguments":{{"path":"b.txt"}}}}]}}}},
  {{"type":"message","id":"t","message":{{"role":"toolResult","content":"{TEXT40}{TEXT40}"}}}},
  {{"type":"custom_message","id":"c","customType":"k","content":"{TEXT40}","display":true}},
  {{"type":"message","id":"w","message":{{"role":"assistant","content":[
    {{"type":"toolCall","name":"write","arguments":{{"path":"w.txt"}}}}]}}}}
]"#
    )
}

#[test]
fn without_a_budget_every_message_but_tool_results() {
    let p = prepare(&session_text(), 0.0);
    assert_eq!(at(&p), vec![0, 1, 3, 4, 6, 7]);
    // Details first (entry order), then tool calls newest first.
    assert_eq!(p.file_ops.read, set(&["old.txt", "b.txt", "a.txt"]));
    assert_eq!(p.file_ops.edited, set(&["m.txt", "b.txt"]));
    assert_eq!(p.file_ops.written, set(&["w.txt"]));
    let a = "read".len() + r#"{"path":"a.txt"}"#.len() + "edit".len() + r#"{"path":"b.txt"}"#.len();
    let a = a.div_ceil(4) as u64;
    let w = ("write".len() + r#"{"path":"w.txt"}"#.len()).div_ceil(4) as u64;
    assert_eq!(p.total_tokens, 10 + 1 + 10 + a + 10 + w);
    assert_eq!(
        p.total_tokens,
        prepare(&session_text(), f64::NAN).total_tokens
    );
}

#[test]
fn the_budget_keeps_the_newest_and_reads_the_message_that_breaks_it() {
    // w (6) + c (10) = 16 fit in 20; a (9) breaks it but its files count.
    let p = prepare(&session_text(), 20.0);
    assert_eq!(at(&p), vec![6, 7]);
    assert_eq!(p.total_tokens, 16);
    assert_eq!(p.file_ops.read, set(&["old.txt", "b.txt", "a.txt"]));
    assert_eq!(p.file_ops.edited, set(&["m.txt", "b.txt"]));
}

#[test]
fn summaries_squeeze_in_under_ninety_percent() {
    let entries = format!(
        r#"[
  {{"type":"compaction","id":"k","summary":"{TEXT40}{TEXT40}","tokensBefore":5,"timestamp":"2025-01-01T00:00:00Z"}},
  {{"type":"message","id":"u","message":{{"role":"user","content":"{TEXT40}"}}}}
]"#
    );
    // 10 + 20 > 25 but 10 < 22.5: the compaction goes in over the budget.
    let p = prepare(&entries, 25.0);
    assert_eq!((at(&p), p.total_tokens), (vec![0, 1], 30));
    // 10 is not under 9: it stays out.
    let p = prepare(&entries, 10.0);
    assert_eq!((at(&p), p.total_tokens), (vec![1], 10));
}

#[test]
fn a_user_message_over_the_budget_ends_the_walk() {
    let entries = format!(
        r#"[
  {{"type":"message","id":"u1","message":{{"role":"user","content":"x"}}}},
  {{"type":"message","id":"u2","message":{{"role":"user","content":"{TEXT40}"}}}}
]"#
    );
    let p = prepare(&entries, 5.0);
    assert_eq!((at(&p), p.total_tokens), (vec![], 0));
}

#[test]
fn missing_entries_and_messages_are_type_errors() {
    let v = json(r#"[{"type":"message","id":"u"}]"#);
    let view = Val::new(&v);
    let list = Entries::new(&view, "entries", &crate::agent_line::AgentLine::V0_78)
        .unwrap_or_else(|e| panic!("{e}"));
    let err = prepare_branch_entries(&list, 0.0)
        .err()
        .unwrap_or_else(|| panic!("no error"));
    assert_eq!(err.kind, ErrorKind::Type);
    assert!(err.to_string().starts_with("entries[0].message:"), "{err}");

    let v = json(r#"[null]"#);
    let view = Val::new(&v);
    let list = Entries::new(&view, "entries", &crate::agent_line::AgentLine::V0_78)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(prepare_branch_entries(&list, 0.0).is_err());
    // Unknown entry types contribute nothing, as in the reference's switch.
    let p = prepare(r#"[{"type":7},{"type":"label"},"text"]"#, 0.0);
    assert_eq!(at(&p), Vec::<u32>::new());
}

/// The agent's ids (8 hex digits, counted up in the real-shaped
/// benchmarks) spread over the low bits hashbrown picks buckets by, as a
/// uniform hash would (unmixed, 100k of them gave few low-bit patterns).
#[test]
fn hex_ids_spread_over_the_low_bits() {
    use std::hash::{Hash, Hasher};
    let n = 100_000u32;
    let mut low = std::collections::HashSet::new();
    for i in 1..=n {
        let id = JsStr::from(format!("{i:08x}").as_str());
        let mut h = FxHasher::default();
        id.hash(&mut h);
        low.insert(h.finish() & 0xffff);
    }
    // 65,536 patterns are possible; a uniform hash fills about 54,000.
    assert!(
        low.len() > 40_000,
        "{} distinct low 16-bit patterns",
        low.len()
    );
}

/// The filter before the target's ids lets few others through to the set
/// (a uniform bit per id: 64 of 4,096 bits set lets about 1.6% through),
/// on the agent's ids counted up as on random ones, and never turns away
/// an id the set holds. The ids as the binding's walk hashes them: their
/// UTF-16 units.
#[test]
fn the_near_target_filter_passes_few_other_ids() {
    for (name, make) in [
        (
            "counted",
            (|i: u32| format!("{i:08x}")) as fn(u32) -> String,
        ),
        ("scattered", |i: u32| {
            format!("{:08x}", i.wrapping_mul(0x9e37_79b9).rotate_left(13))
        }),
    ] {
        let mut near = NearTarget::default();
        for i in 0..TARGET_STEPS as u32 {
            near.insert(units(&make(1_000_000 + i)));
        }
        for i in 0..TARGET_STEPS as u32 {
            assert!(near.contains(&units(&make(1_000_000 + i))));
        }
        let passed = (0..100_000u32)
            .filter(|&i| {
                let bit = NearTarget::bit(&units(&make(i)));
                near.bits[bit >> 6] & (1 << (bit & 63)) != 0
            })
            .count();
        assert!(
            passed < 4_000,
            "{name}: {passed} of 100,000 passed the filter"
        );
    }
}

fn units(text: &str) -> Vec<u16> {
    text.encode_utf16().collect()
}
