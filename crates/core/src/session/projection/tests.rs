//! The session projection and the 1.6 planning rules over it, on sessions
//! written as JSON. Expected values are those 1.6.0 and 0.78.1 give (the
//! cases of the behavioural diff; `__test__/lines.test.js` runs them against
//! both modules).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::agent_line::AgentLine;
use crate::js::json::view::Val;
use crate::js::json::{parse, Value};
use crate::plan::cut_point::find_cut_point;
use crate::plan::prepare::prepare_compaction;
use crate::tokens::estimate::{estimate_context_tokens, estimate_tokens};
use crate::tokens::projected::{projected_context_tokens, MessageArray};

const V078: &AgentLine = &AgentLine::V0_78;
const V16: &AgentLine = &AgentLine::V1_6;

fn json(text: &str) -> Value {
    parse(text).unwrap_or_else(|e| panic!("bad test JSON: {e:?}\n{text}"))
}

fn x(n: usize) -> String {
    "x".repeat(n)
}

/// A chained session: each item is `(id, fields)`; `None` ids become `e<i>`.
fn session(items: &[(Option<&str>, String)]) -> Value {
    let mut out = Vec::new();
    let mut parent = "null".to_string();
    for (i, (id, item)) in items.iter().enumerate() {
        let id = id.map_or(format!("e{i}"), str::to_string);
        out.push(format!(
            "{{\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",{item}}}"
        ));
        parent = format!("\"{id}\"");
    }
    json(&format!("[{}]", out.join(",")))
}

fn u(n: usize) -> String {
    format!(
        "\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{}\",\"timestamp\":1}}",
        x(n)
    )
}

fn a_with(n: usize, input: u32, output: u32, stop: &str) -> String {
    format!(
        "\"type\":\"message\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}],\
         \"usage\":{{\"input\":{input},\"output\":{output},\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":{}}},\
         \"stopReason\":\"{stop}\",\"timestamp\":2}}",
        x(n),
        input + output
    )
}

fn a(n: usize) -> String {
    a_with(n, 0, 0, "stop")
}

fn edit(target: &str, replacement: &str) -> String {
    format!("\"type\":\"context_edit\",\"targetId\":\"{target}\",\"replacement\":{replacement}")
}

/// `(firstKeptEntryIndex, isSplitTurn, tokensBefore, summarized entries, prefix entries)`.
type Plan = (usize, bool, f64, Vec<u32>, Vec<u32>);

fn plan(line: &'static AgentLine, s: &Value, keep: f64) -> Option<Plan> {
    let view = Val::new(s);
    let entries = Entries::new(&view, "pathEntries", line).unwrap();
    let p = prepare_compaction(&entries, keep).unwrap()?;
    let at = |m: &[PlanMessage]| m.iter().map(|m| m.entry).collect();
    Some((
        p.first_kept_entry_index,
        p.is_split_turn,
        p.tokens_before,
        at(&p.summarize),
        at(&p.turn_prefix),
    ))
}

fn cut(line: &'static AgentLine, s: &Value, keep: f64) -> (usize, Option<usize>, bool) {
    let view = Val::new(s);
    let entries = Entries::new(&view, "entries", line).unwrap();
    let c = find_cut_point(&entries, 0, entries.len(), keep).unwrap();
    (
        c.first_kept_entry_index,
        c.turn_start_index,
        c.is_split_turn,
    )
}

fn projection(line: &'static AgentLine, s: &Value) -> Vec<(usize, Vec<MessageKind>)> {
    let view = Val::new(s);
    let entries = Entries::new(&view, "pathEntries", line).unwrap();
    let ids = Ids::read(&entries).unwrap();
    let p = project(&entries, &ids, &line.session).unwrap();
    (0..p.len())
        .map(|k| {
            (
                p.sources[k],
                p.messages_of(k).iter().map(|m| m.kind).collect(),
            )
        })
        .collect()
}

#[test]
fn only_the_chain_ending_at_the_last_entry_is_projected() {
    let s = json(
        r#"[{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"1"}},
            {"type":"message","id":"b","parentId":null,"message":{"role":"user","content":"2"}},
            {"type":"message","id":"c","parentId":"a","message":{"role":"user","content":"3"}}]"#,
    );
    let sources: Vec<usize> = projection(V16, &s).into_iter().map(|(i, _)| i).collect();
    assert_eq!(sources, [0, 2]);
}

#[test]
fn edits_hide_or_replace_and_the_latest_wins() {
    let s = session(&[
        (Some("U"), u(10)),
        (Some("A"), a(10)),
        (None, edit("A", "null")),
        (None, edit("U", "null")),
        (None, edit("U", r#"{"content":"new"}"#)),
    ]);
    let p = projection(V16, &s);
    assert_eq!(p[0].1, [MessageKind::Replaced { edit: 4 }]);
    assert!(p[1].1.is_empty());
    // 0.78 knows no edits.
    assert_eq!(projection(V078, &s)[1].1, [MessageKind::Message]);
}

#[test]
fn a_compaction_leads_with_its_system_message_and_drops_kept_system_entries() {
    let s = session(&[
        (
            Some("S"),
            r#""type":"message","message":{"role":"system","content":"sys","timestamp":0}"#.into(),
        ),
        (Some("K"), u(10)),
        (
            None,
            r#""type":"compaction","summary":"s","firstKeptEntryId":"S","tokensBefore":1,
               "systemMessage":{"role":"system","content":"sys","timestamp":5}"#
                .into(),
        ),
        (None, u(10)),
    ]);
    let p = projection(V16, &s);
    assert_eq!(
        p.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        [2, 1, 3],
        "the system entry of the kept range is left out"
    );
    assert_eq!(
        p[0].1,
        [
            MessageKind::CompactionSystem,
            MessageKind::CompactionSummary
        ]
    );
    let old = projection(V078, &s);
    assert_eq!(
        old.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        [2, 0, 1, 3]
    );
    assert_eq!(old[0].1, [MessageKind::CompactionSummary]);
}

#[test]
fn system_messages_are_estimated_in_1_6() {
    let m = json(
        r#"{"role":"system","content":"abcd","sections":{"a":"12345678","b":null},
            "toolsAdded":[{"name":"t","description":"d","parameters":{}}]}"#,
    );
    assert_eq!(estimate_tokens(&Val::new(&m), &V16.tokens).unwrap(), 15);
    assert_eq!(estimate_tokens(&Val::new(&m), &V078.tokens).unwrap(), 0);
    let empty = json(r#"{"role":"system","content":"","toolsAdded":[]}"#);
    assert_eq!(estimate_tokens(&Val::new(&empty), &V16.tokens).unwrap(), 1);
}

#[test]
fn zero_usage_is_passed_over_in_1_6() {
    let m = json(
        r#"[{"role":"user","content":"hi"},
            {"role":"assistant","content":[],"usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110},"stopReason":"stop"},
            {"role":"user","content":"q"},
            {"role":"assistant","content":[],"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0},"stopReason":"stop"}]"#,
    );
    let new = estimate_context_tokens(&Val::new(&m), &V16.tokens).unwrap();
    // 110 of usage, and "q" after it.
    assert_eq!((new.tokens, new.last_usage_index), (111.0, Some(1)));
    let old = estimate_context_tokens(&Val::new(&m), &V078.tokens).unwrap();
    assert_eq!((old.tokens, old.last_usage_index), (0.0, Some(3)));
}

#[test]
fn the_merged_system_message_is_estimated_once() {
    let m = json(
        r#"[{"role":"system","content":"aaaa","timestamp":1},{"role":"user","content":"uuuu"},
            {"role":"system","content":"bbbb","timestamp":2}]"#,
    );
    let view = Val::new(&m);
    let list = MessageArray::new(&view).unwrap();
    let est =
        projected_context_tokens(&list, Counter::Estimate, &V16.tokens, |_| Ok(false)).unwrap();
    // "aaaa\n\nbbbb" is 10 characters: 3 tokens, and the user's 1.
    assert_eq!(est.tokens, 4.0);
}

#[test]
fn a_null_timestamp_then_a_missing_one_gives_no_merged_system_message() {
    // pi-ai's `timestamp ??= message.timestamp`: null, then undefined, ends
    // undefined; with no tools there is no system message to count (the
    // figures are 1.6.0's estimateProjectedContextTokens on the same messages).
    let tokens = |m: &str| {
        let m = json(m);
        let view = Val::new(&m);
        let list = MessageArray::new(&view).unwrap();
        projected_context_tokens(&list, Counter::Estimate, &V16.tokens, |_| Ok(false))
            .unwrap()
            .tokens
    };
    let user = r#"{"role":"user","content":"uuuu","timestamp":1}"#;
    let system = |ts: &str| format!(r#"{{"role":"system","content":"aaaaaaaa"{ts}}}"#);
    let (null, none, five) = (
        system(r#","timestamp":null"#),
        system(""),
        system(r#","timestamp":5"#),
    );
    assert_eq!(tokens(&format!("[{null},{user},{none}]")), 1.0);
    assert_eq!(tokens(&format!("[{none},{user},{null}]")), 6.0);
    assert_eq!(tokens(&format!("[{null},{user},{five},{none}]")), 8.0);
    assert_eq!(tokens(&format!("[{none},{user},{none}]")), 1.0);
}

use crate::tokens::estimate::Counter;

#[test]
fn the_diff_cases_plan_as_each_line_does() {
    // §12.8: a custom_message before the cut.
    let s = session(&[
        (None, u(400)),
        (None, a(400)),
        (
            None,
            format!("\"type\":\"custom_message\",\"customType\":\"t\",\"content\":\"{}\",\"display\":true", x(40)),
        ),
        (None, a(800)),
    ]);
    assert_eq!(cut(V078, &s, 150.0), (2, Some(2), true));
    assert_eq!(cut(V16, &s, 150.0), (3, Some(2), true));

    // §12.12: nothing to summarize.
    let s = session(&[(None, u(40)), (None, a(40))]);
    assert!(plan(V078, &s, 20000.0).is_some());
    assert_eq!(plan(V16, &s, 20000.0), None);

    // §12.14: the recovery-omission advance, and §12.15 where a replacement stops it.
    let failed = r#""type":"message","message":{"role":"assistant","content":[],"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0},"stopReason":"error","timestamp":2}"#;
    let mut items = vec![
        (None, u(400)),
        (Some("A1"), a_with(400, 100, 10, "stop")),
        (Some("U2"), u(800)),
        (Some("A2"), failed.to_string()),
        (None, edit("A2", "null")),
    ];
    let s = session(&items);
    assert_eq!(
        plan(V078, &s, 150.0),
        Some((2, false, 310.0, vec![0, 1], vec![]))
    );
    assert_eq!(
        plan(V16, &s, 150.0),
        Some((3, true, 400.0, vec![0, 1], vec![2]))
    );
    items.push((
        None,
        edit("A1", r#"{"content":[{"type":"text","text":"short"}]}"#),
    ));
    let s = session(&items);
    assert_eq!(
        plan(V16, &s, 150.0),
        Some((2, false, 302.0, vec![0, 1], vec![]))
    );

    // §12.21: a hidden user message is not a turn start.
    let s = session(&[
        (None, u(400)),
        (None, a(400)),
        (Some("U2"), u(400)),
        (Some("A2"), a(800)),
        (None, edit("U2", "null")),
    ]);
    assert_eq!(
        plan(V078, &s, 100.0),
        Some((3, true, 0.0, vec![0, 1], vec![2]))
    );
    assert_eq!(
        plan(V16, &s, 100.0),
        Some((2, true, 400.0, vec![], vec![0, 1]))
    );

    // §12.27: keepRecentTokens 0 with a trailing 0-token assistant.
    let s = session(&[
        (None, u(40)),
        (None, a(40)),
        (
            None,
            r#""type":"message","message":{"role":"assistant","content":[]}"#.into(),
        ),
    ]);
    assert_eq!(cut(V078, &s, 0.0), (2, Some(0), true));
    assert_eq!(cut(V16, &s, 0.0), (1, Some(0), true));
}

#[test]
fn null_content_reads_as_empty_in_1_6_and_fails_in_0_78() {
    let s = session(&[
        (
            None,
            r#""type":"message","message":{"role":"user","content":null}"#.into(),
        ),
        (None, u(400)),
    ]);
    // The walk reaches the null content: 0 tokens in 1.6, a TypeError in 0.78.
    assert_eq!(cut(V16, &s, 200.0), (0, None, false));
    let view = Val::new(&s);
    let entries = Entries::new(&view, "entries", V078).unwrap();
    assert!(find_cut_point(&entries, 0, 2, 200.0).is_err());
}

#[test]
fn a_parent_cycle_is_an_error_naming_the_id() {
    let s = json(
        r#"[{"type":"message","id":"a","parentId":"b","message":{"role":"user","content":"1"}},
            {"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"2"}}]"#,
    );
    for line in AgentLine::ALL {
        let view = Val::new(&s);
        let entries = Entries::new(&view, "pathEntries", line).unwrap();
        let err = prepare_compaction(&entries, 1.0).unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
    }
}

#[test]
fn a_bad_value_in_a_context_edit_is_named_at_the_edit() {
    // The assistant message at 1 carries the content of the edit at 2.
    let edited = |replacement: &str| {
        session(&[
            (None, u(10)),
            (
                None,
                r#""type":"message","message":{"role":"assistant","content":[{"type":"text","text":"a"}]}"#
                    .into(),
            ),
            (
                None,
                format!(r#""type":"context_edit","targetId":"e1","replacement":{replacement}"#),
            ),
            (None, u(400)),
        ])
    };
    for (replacement, expected) in [
        (
            r#"{"content":[{"type":"text","text":5}]}"#,
            "pathEntries[2].replacement.content[0].text: expected a string, got a number",
        ),
        (
            "42",
            "pathEntries[2].replacement: expected an object with content, got a number",
        ),
    ] {
        let s = edited(replacement);
        let view = Val::new(&s);
        let entries = Entries::new(&view, "pathEntries", V16).unwrap();
        let err = prepare_compaction(&entries, 1.0).unwrap_err().to_string();
        assert_eq!(err, expected);
    }
}

#[test]
fn a_built_message_names_where_each_field_comes_from() {
    let (entry, edit): (JsStr, JsStr) = ("entries[3]".into(), "entries[5]".into());
    let path = |p: &[&str]| p.iter().map(|&s| JsStr::from(s)).collect::<Vec<_>>();
    let at = |shape: MessageShape, p: &[&str]| {
        let named = shape.source_path(entry.clone(), edit.clone(), &path(p));
        named
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("/")
    };
    assert_eq!(
        at(MessageShape::Own, &["content", "[0]", "text"]),
        "entries[3]/message/content/[0]/text"
    );
    assert_eq!(
        at(MessageShape::Replaced, &["content", "[0]", "text"]),
        "entries[5]/replacement/content/[0]/text"
    );
    assert_eq!(
        at(MessageShape::Replaced, &["role"]),
        "entries[3]/message/role"
    );
    assert_eq!(
        at(MessageShape::ReplacedText, &["content", "[0]", "text"]),
        "entries[5]/replacement/content"
    );
    assert_eq!(
        at(MessageShape::Custom, &["content", "[1]"]),
        "entries[3]/content/[1]"
    );
    assert_eq!(
        at(MessageShape::CustomReplaced, &["content", "[1]"]),
        "entries[5]/replacement/content/[1]"
    );
    assert_eq!(
        at(MessageShape::BranchSummary, &["summary"]),
        "entries[3]/summary"
    );
    assert_eq!(
        at(MessageShape::SystemMessage, &["content"]),
        "entries[3]/systemMessage/content"
    );
    for (_, shape) in MessageShape::ALL {
        assert_eq!(MessageShape::from_code(shape as u8), Some(shape));
    }
    assert_eq!(MessageShape::from_code(200), None);
}
