//! Core behaviour tests over sessions written as JSON. Expected values were
//! worked out from the reference's semantics (and checked against it once).

use crate::agent_line::AgentLine;
use crate::error::ErrorKind;
use crate::js::json::view::Val;
use crate::js::json::{parse, Value};
use crate::js::string::JsStr;
use crate::plan::cut_point::find_cut_point;
use crate::plan::file_ops::{
    compute_file_lists, extract_file_ops, format_file_operations, FileOps,
};
use crate::plan::prepare::prepare_compaction;
use crate::session::entries::Entries;
use crate::tokens::estimate::{context_tokens, estimate_context_tokens, estimate_tokens};

const V078: &AgentLine = &AgentLine::V0_78;

fn json(text: &str) -> Value {
    match parse(text) {
        Ok(v) => v,
        Err(e) => panic!("bad test JSON: {e:?}"),
    }
}

fn tokens(message: &str) -> u64 {
    let v = json(message);
    estimate_tokens(&Val::new(&v), &V078.tokens).unwrap_or_else(|e| panic!("{e}"))
}

/// A linear session: each item is `(type, extra fields)`; ids are e0, e1...
fn session(items: &[&str]) -> Value {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let parent = if i == 0 {
            "null".to_string()
        } else {
            format!("\"e{}\"", i - 1)
        };
        out.push(format!(
            "{{\"id\":\"e{i}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:00.000Z\",{item}}}"
        ));
    }
    json(&format!("[{}]", out.join(",")))
}

fn user(text: &str) -> String {
    format!("\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}")
}

fn assistant(text: &str, total_tokens: u32) -> String {
    format!(
        "\"type\":\"message\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\
         \"usage\":{{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":{total_tokens}}},\"stopReason\":\"stop\"}}"
    )
}

#[test]
fn estimates_count_utf16_units_and_images() {
    assert_eq!(tokens(r#"{"role":"user","content":"abcde"}"#), 2);
    // An astral character is two UTF-16 units: 4 units -> 1 token, 5 -> 2.
    assert_eq!(tokens(r#"{"role":"user","content":"\ud83d\ude00ab"}"#), 1);
    assert_eq!(tokens(r#"{"role":"user","content":"\ud83d\ude00abc"}"#), 2);
    assert_eq!(
        tokens(
            r#"{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image","data":"x"}]}"#
        ),
        (4 + 4800) / 4
    );
    // A lone surrogate is one unit.
    assert_eq!(
        tokens(r#"{"role":"toolResult","content":[{"type":"text","text":"\ud83dxyz"}]}"#),
        1
    );
    assert_eq!(
        tokens(r#"{"role":"bashExecution","command":"ls","output":"abc"}"#),
        2
    );
    assert_eq!(
        tokens(r#"{"role":"compactionSummary","summary":"123456789"}"#),
        3
    );
    assert_eq!(
        tokens(r#"{"role":"somethingElse","content":"abcdefgh"}"#),
        0
    );
}

#[test]
fn assistant_estimate_counts_tool_call_json() {
    // name "read" (4) + JSON.stringify({"path":"a.ts","n":1e21}) = {"path":"a.ts","n":1e+21} (25)
    let t = tokens(
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},
        {"type":"toolCall","id":"1","name":"read","arguments":{"path":"a.ts","n":1e21}}]}"#,
    );
    assert_eq!(t, (3u64 + 4 + 25).div_ceil(4));
}

#[test]
fn bad_messages_name_the_field() {
    let v = json(r#"{"role":"assistant","content":[{"type":"text"}]}"#);
    let err = estimate_tokens(&Val::new(&v), &V078.tokens)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("content[0].text: expected a string, got undefined")
    );
    let v = json(r#"{"content":"x"}"#);
    let err = estimate_tokens(&Val::new(&v), &V078.tokens)
        .err()
        .map(|e| (e.kind, e.to_string()));
    assert_eq!(
        err,
        Some((
            ErrorKind::Type,
            "role: expected a string, got undefined".into()
        ))
    );
}

#[test]
fn usage_prefers_total_tokens_then_sums_parts() {
    let v = json(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":0}"#);
    assert_eq!(context_tokens(&Val::new(&v)).ok(), Some(10.0));
    let v = json(r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":99}"#);
    assert_eq!(context_tokens(&Val::new(&v)).ok(), Some(99.0));
    let v = json(r#"{"input":1,"output":2}"#);
    assert!(context_tokens(&Val::new(&v)).is_ok_and(f64::is_nan));
}

#[test]
fn context_estimate_skips_aborted_usage() {
    let v = json(
        r#"[{"role":"user","content":"12345678"},
            {"role":"assistant","content":[],"usage":{"totalTokens":50},"stopReason":"stop"},
            {"role":"user","content":"1234"},
            {"role":"assistant","content":[],"usage":{"totalTokens":500},"stopReason":"aborted"}]"#,
    );
    let est =
        estimate_context_tokens(&Val::new(&v), &V078.tokens).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (est.tokens, est.usage_tokens, est.trailing_tokens),
        (51.0, 50.0, 1.0)
    );
    assert_eq!(est.last_usage_index, Some(1));
}

fn ops_of(message: &str, ops: &mut FileOps) {
    let v = json(message);
    extract_file_ops(&Val::new(&v), &mut |k, p| ops.add(k, p), &V078.file_ops)
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn file_ops_follow_tool_names_and_string_paths() {
    let mut ops = FileOps::default();
    ops_of(
        r#"{"role":"assistant","content":[
          {"type":"toolCall","name":"read","arguments":{"path":"b.ts"}},
          {"type":"toolCall","name":"read","arguments":{"path":"a.ts"}},
          {"type":"toolCall","name":"edit","arguments":{"path":"b.ts"}},
          {"type":"toolCall","name":"write","arguments":{"path":"c.ts"}},
          {"type":"toolCall","name":"read","arguments":{"path":""}},
          {"type":"toolCall","name":"read","arguments":{"path":7}},
          {"type":"toolCall","name":"bash","arguments":{"path":"d.ts"}},
          null, "text", {"type":"text","text":"read"}]}"#,
        &mut ops,
    );
    ops_of(
        r#"{"role":"user","content":[{"type":"toolCall","name":"read","arguments":{"path":"u.ts"}}]}"#,
        &mut ops,
    );
    let names = |set: &crate::plan::file_ops::PathSet| {
        set.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(names(&ops.read), ["b.ts", "a.ts"]);
    assert_eq!(names(&ops.edited), ["b.ts"]);
    assert_eq!(names(&ops.written), ["c.ts"]);
    let (read, modified) = compute_file_lists(&ops);
    assert_eq!(
        read.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        ["a.ts"]
    );
    assert_eq!(
        modified.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        ["b.ts", "c.ts"]
    );
    let text = String::from_utf16_lossy(&format_file_operations(&read, &modified));
    assert_eq!(
        text,
        "\n\n<read-files>\na.ts\n</read-files>\n\n<modified-files>\nb.ts\nc.ts\n</modified-files>"
    );
    assert!(format_file_operations(&[], &[]).is_empty());
}

#[test]
fn file_lists_sort_by_utf16_units_like_js() {
    // U+FF61 sorts after an emoji's lead surrogate (0xD83D) in JS, though
    // before it in UTF-8 byte order.
    let mut ops = FileOps::default();
    ops.read.insert(JsStr::from_str("\u{FF61}"));
    ops.read.insert(JsStr::from_str("\u{1F600}"));
    ops.read.insert(JsStr::from_str("Z"));
    let (read, _) = compute_file_lists(&ops);
    let got: Vec<String> = read.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, ["Z", "\u{1F600}", "\u{FF61}"]);
}

#[test]
fn cut_point_keeps_recent_tokens_and_detects_split_turns() {
    let long = "x".repeat(400); // 100 tokens
    let s = session(&[
        &user("first"),
        &assistant(&long, 10),
        &user("second"),
        &assistant(&long, 20),
        &assistant(&long, 30),
    ]);
    let view = Val::new(&s);
    let entries = Entries::new(&view, "entries", V078).unwrap_or_else(|e| panic!("{e}"));
    // 150 tokens: the walk passes e4 (100) and stops at e3 (200): an assistant
    // message inside the turn that e2 starts.
    let cut = find_cut_point(&entries, 0, 5, 150.0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (
            cut.first_kept_entry_index,
            cut.turn_start_index,
            cut.is_split_turn
        ),
        (3, Some(2), true)
    );
    // 250 tokens: e4+e3+e2 = 202, then e1 reaches 302 -> cut at e1, split in e0's turn.
    let cut = find_cut_point(&entries, 0, 5, 250.0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((cut.first_kept_entry_index, cut.is_split_turn), (1, true));
    // Budget never reached: keep from the first cut point.
    let cut = find_cut_point(&entries, 0, 5, 1e9).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((cut.first_kept_entry_index, cut.is_split_turn), (0, false));
}

#[test]
fn prepare_uses_previous_compaction_boundary_and_details() {
    let long = "y".repeat(400);
    let s = session(&[
        &user("old"),
        &assistant(&long, 10),
        &user("kept"),
        "\"type\":\"compaction\",\"summary\":\"S\",\"firstKeptEntryId\":\"e2\",\"tokensBefore\":5,\
         \"details\":{\"readFiles\":[\"r.ts\"],\"modifiedFiles\":[\"m.ts\"]}",
        &assistant(&long, 40),
        &user("new"),
        &assistant(&long, 70),
    ]);
    let view = Val::new(&s);
    let entries = Entries::new(&view, "pathEntries", V078).unwrap_or_else(|e| panic!("{e}"));
    let plan = |keep: f64| {
        prepare_compaction(&entries, keep)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("expected a plan"))
    };
    // The walk starts at the previous kept boundary (e2): 150 tokens cut at
    // e4, an assistant message in the turn e2 starts, so e2 is the turn
    // prefix (the compaction entry contributes no message).
    let split = plan(150.0);
    assert_eq!(
        (split.first_kept_entry_index, split.is_split_turn),
        (4, true)
    );
    assert!(split.summarize.is_empty());
    let prefix: Vec<u32> = split.turn_prefix.iter().map(|m| m.entry).collect();
    assert_eq!(prefix, [2]);
    // 250 tokens reach back to e2 itself, a user message: nothing to summarize.
    let whole = plan(250.0);
    assert_eq!(
        (whole.first_kept_entry_index, whole.is_split_turn),
        (2, false)
    );
    assert!(whole.summarize.is_empty() && whole.turn_prefix.is_empty());
    let plan = split;
    assert_eq!(plan.previous_compaction, Some(3));
    // Last usage (70) plus nothing after it.
    assert_eq!(plan.tokens_before, 70.0);
    // The previous compaction's details seed the Sets (the caller copies them).
    assert_eq!(plan.details_from, Some(3));
    let ops = crate::plan::file_ops::seeded_file_ops(&entries, plan.details_from, &plan.file_ops)
        .unwrap_or_else(|e| panic!("{e}"));
    let read: Vec<String> = ops.read.iter().map(|s| s.to_string()).collect();
    let edited: Vec<String> = ops.edited.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        (read, edited),
        (vec!["r.ts".to_string()], vec!["m.ts".to_string()])
    );
}

#[test]
fn prepare_returns_none_after_a_compaction_or_without_ids() {
    let s = session(&[
        &user("a"),
        "\"type\":\"compaction\",\"summary\":\"S\",\"firstKeptEntryId\":\"e0\",\"tokensBefore\":1",
    ]);
    let view = Val::new(&s);
    let entries = Entries::new(&view, "pathEntries", V078).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(prepare_compaction(&entries, 1.0).ok(), Some(None));
    let old = json(r#"[{"type":"message","message":{"role":"user","content":"hi"}}]"#);
    let view = Val::new(&old);
    let entries = Entries::new(&view, "pathEntries", V078).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(prepare_compaction(&entries, 1.0).ok(), Some(None));
}

#[test]
fn parent_cycles_are_errors_not_hangs() {
    let s = json(
        r#"[{"type":"message","id":"a","parentId":"b","message":{"role":"user","content":"x"}},
            {"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"y"}}]"#,
    );
    let view = Val::new(&s);
    let entries = Entries::new(&view, "pathEntries", V078).unwrap_or_else(|e| panic!("{e}"));
    let err = prepare_compaction(&entries, 1.0).err();
    assert!(err
        .is_some_and(|e| e.kind == ErrorKind::Invalid && e.message.to_string().contains("cycle")));
}

/// Reading tool results only as far as a transcript shows them must give
/// exactly the transcript a full read gives.
#[test]
fn limited_tool_result_reads_serialize_identically() {
    use crate::projection::{project, ProjectOptions};
    use crate::transcript::llm_message::{from_agent_messages, transcript_messages};
    use crate::transcript::serialize::{serialize, SerializeOptions};

    let long = |n: usize, unit: &str| unit.repeat(n);
    let bodies = [
        format!("[{{\"type\":\"text\",\"text\":\"{}\"}}]", long(5000, "a")),
        // The cut at 2000 units falls inside a surrogate pair.
        format!("[{{\"type\":\"text\",\"text\":\"{}\\ud83d\\ude00{}\"}}]", long(1999, "b"), long(3000, "c")),
        // Split over blocks, with images before and after the limit.
        format!(
            "[{{\"type\":\"text\",\"text\":\"{}\"}},{{\"type\":\"image\",\"data\":\"xx\",\"mimeType\":\"image/png\"}},{{\"type\":\"text\",\"text\":\"{}\"}},{{\"type\":\"image\",\"data\":\"yy\"}},{{\"type\":\"text\",\"text\":\"{}\"}}]",
            long(1500, "d"),
            long(1500, "e"),
            long(700, "f")
        ),
        // A pair split across two blocks right at the limit.
        format!("[{{\"type\":\"text\",\"text\":\"{}\\ud83d\"}},{{\"type\":\"text\",\"text\":\"\\ude00{}\"}}]", long(2000, "g"), long(10, "h")),
        // Blank for longer than the limit, then text: still shown.
        format!("[{{\"type\":\"text\",\"text\":\"{}x\"}}]", long(3000, " ")),
        // Entirely blank: dropped by the projection either way.
        format!("[{{\"type\":\"text\",\"text\":\"{}\"}}]", long(3000, "\\n")),
        // Non-string text goes through String(value).
        "[{\"type\":\"text\",\"text\":12345},{\"type\":\"text\",\"text\":\"short\"}]".to_string(),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let messages = json(&format!(
            "[{{\"role\":\"user\",\"content\":\"go\"}},
              {{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"c{i}\",\"name\":\"read\",\"arguments\":{{\"path\":\"p\"}}}}]}},
              {{\"role\":\"toolResult\",\"toolCallId\":\"c{i}\",\"toolName\":\"read\",\"isError\":false,\"content\":{body}}}]"
        ));
        let view = Val::new(&messages);
        let full = from_agent_messages(&view).unwrap_or_else(|e| panic!("{e}"));
        let limited = transcript_messages(&view).unwrap_or_else(|e| panic!("{e}"));
        let options = SerializeOptions::default();
        assert_eq!(
            serialize(&limited, options),
            serialize(&full, options),
            "body {i}: plain transcript"
        );
        let projected = |m| serialize(&project(m, &ProjectOptions::default()), options);
        assert_eq!(
            projected(&limited),
            projected(&full),
            "body {i}: projected transcript"
        );
    }
}

/// With an exact counter, CJK text (about one token a character, where the
/// estimate assumes four characters a token) reaches the kept budget sooner.
#[test]
fn exact_counts_move_the_cut_on_cjk_text() {
    use crate::tokens::estimate::Counter;
    use crate::tokens::tokenizer::Encoding;
    let cjk = "这是一个关于编译错误的长消息".repeat(20); // 280 characters: 70 estimated tokens
    let s = session(&[&user(&cjk), &user(&cjk), &user(&cjk), &user(&cjk)]);
    let view = Val::new(&s);
    let plan = |counter| {
        let entries = Entries::new(&view, "pathEntries", V078)
            .unwrap_or_else(|e| panic!("{e}"))
            .with_counter(counter);
        prepare_compaction(&entries, 200.0)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("expected a plan"))
    };
    let estimate = plan(Counter::Estimate);
    let exact = plan(Counter::Exact(Encoding::O200kBase));
    // The estimate needs three messages for 200 tokens; real counts need fewer.
    assert_eq!(estimate.first_kept_entry_index, 1);
    assert!(exact.first_kept_entry_index > estimate.first_kept_entry_index);
    assert!(exact.tokens_before > 2.0 * estimate.tokens_before);
}

#[test]
fn a_call_read_ahead_finds_a_path_already_there_however_it_is_stored() {
    use crate::plan::file_ops::{file_tool_op, insert_call_path, FileOpKind, PathSet};
    let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    let long = "/home/someone/project/src/a/rather/long/path.ts";
    let lone = [0x61u16, 0xD800, 0x62];
    let mut paths = PathSet::default();
    // Present before: short (inline), long (boxed), non-ASCII, a lone surrogate.
    for p in ["a.ts", long, "dé.ts"] {
        paths.insert(JsStr::from_str(p));
    }
    paths.insert(JsStr::from_utf16(&lone));
    let mut scratch = Vec::new();
    let mut op = |name: &str, path: &[u16]| {
        let kind = file_tool_op(&units(name))?;
        Some((kind, insert_call_path(&mut paths, path, &mut scratch)?))
    };
    assert_eq!(op("read", &units("a.ts")), Some((FileOpKind::Read, 0)));
    assert_eq!(op("edit", &units(long)), Some((FileOpKind::Edited, 1)));
    assert_eq!(op("write", &units("dé.ts")), Some((FileOpKind::Written, 2)));
    assert_eq!(op("read", &lone), Some((FileOpKind::Read, 3)));
    // New paths go at the end, once.
    assert_eq!(op("read", &units("b.ts")), Some((FileOpKind::Read, 4)));
    assert_eq!(op("edit", &units("b.ts")), Some((FileOpKind::Edited, 4)));
    // Not a file tool, or no path: nothing added.
    assert_eq!(op("bash", &units("c.ts")), None);
    assert_eq!(op("read", &[]), None);
    assert_eq!(paths.len(), 5);
}

/// The kinds cache is made a page at a time: kinds read in any order, on
/// either side of a page's bounds, and read again from the cache, are the
/// entries' own.
#[test]
fn entry_kinds_are_the_same_read_in_any_order_across_cache_pages() {
    use crate::js::view::View;
    use crate::session::model::entry_kind;
    let items: Vec<String> = (0..700)
        .map(|i| match i % 5 {
            0 => user("u"),
            1 => assistant("a", 1),
            2 => "\"type\":\"compaction\",\"summary\":\"S\",\"firstKeptEntryId\":\"e0\",\"tokensBefore\":1".to_string(),
            3 => "\"type\":\"label\"".to_string(),
            _ => "\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"content\":[]}".to_string(),
        })
        .collect();
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    let s = session(&refs);
    let view = Val::new(&s);
    let entries = Entries::new(&view, "entries", V078).unwrap_or_else(|e| panic!("{e}"));
    let own = |i: usize| {
        let entry = view.at(i).unwrap_or_else(|e| panic!("{e}"));
        entry_kind(&entry).unwrap_or_else(|e| panic!("{e}"))
    };
    let order = [699, 0, 255, 256, 511, 512, 257, 1]
        .into_iter()
        .chain((0..700).map(|k| (k * 97) % 700));
    for i in order {
        assert_eq!(entries.kind(i).ok(), Some(own(i)), "entry {i}");
    }
    assert!(entries.kind(700).is_err());
}

/// find_last walks back across its chunks of 64, reads each entry once,
/// stops at the first match from the end, and names the entry an error is in.
#[test]
fn find_last_walks_back_across_chunks_and_names_the_failing_entry() {
    use crate::js::view::{Key, View};
    let items: Vec<String> = (0..150)
        .map(|i| {
            if i == 20 || i == 70 {
                assistant("a", 1)
            } else {
                user("u")
            }
        })
        .collect();
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    let s = session(&refs);
    let view = Val::new(&s);
    let entries = Entries::new(&view, "entries", V078).unwrap_or_else(|e| panic!("{e}"));
    let is_assistant =
        |_: usize, e: &Val| Ok(e.get(Key::Message)?.get(Key::Role)?.str_is("assistant"));
    let mut seen = Vec::new();
    let found = entries.find_last(|i, e| {
        seen.push(i);
        is_assistant(i, e)
    });
    assert_eq!(found.ok(), Some(Some(70)));
    assert_eq!(seen, (70..150).rev().collect::<Vec<_>>());
    assert_eq!(entries.find_last(|_, _| Ok(false)).ok(), Some(None));
    let err = entries
        .find_last(|i, _| {
            if i == 100 {
                Err(crate::error::Error::type_error("x", "bad"))
            } else {
                Ok(false)
            }
        })
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref()
            .is_some_and(|m| m.starts_with("entries[100].x")),
        "{err:?}"
    );
}
