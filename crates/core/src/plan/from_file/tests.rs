#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use super::*;
use crate::js::json::parse;
use crate::session::tree::{branch_positions, Leaf};

fn values(lines: &[&str]) -> Vec<Value> {
    lines.iter().map(|l| parse(l).unwrap()).collect()
}

fn ids(entries: &[Value], positions: &[usize]) -> Vec<String> {
    positions
        .iter()
        .map(|&i| entries[i].get("id").unwrap().as_str().unwrap().to_string())
        .collect()
}

fn branch(entries: &[Value], leaf: Leaf<'_>) -> Result<Vec<String>> {
    Ok(ids(
        entries,
        &branch_positions(entries, leaf, |i| format!("line {}", i + 1))?,
    ))
}

const TREE: &[&str] = &[
    r#"{"type":"session","version":3,"id":"s"}"#,
    r#"{"type":"message","id":"a","parentId":null}"#,
    r#"{"type":"message","id":"b","parentId":"a"}"#,
    r#"{"type":"message","id":"c","parentId":"b"}"#,
    r#"{"type":"message","id":"d","parentId":"a"}"#,
    r#"{"type":"label","id":"e","parentId":"d"}"#,
];

#[test]
fn the_default_leaf_is_the_last_entry() {
    let e = values(TREE);
    assert_eq!(branch(&e, Leaf::Last).unwrap(), ["a", "d", "e"]);
}

#[test]
fn an_explicit_leaf_selects_its_branch() {
    let e = values(TREE);
    let c = JsStr::from_str("c");
    assert_eq!(branch(&e, Leaf::Id(&c)).unwrap(), ["a", "b", "c"]);
}

#[test]
fn unknown_or_empty_leaf_ids_give_an_empty_branch() {
    let e = values(TREE);
    for id in ["zz", "", "s"] {
        let id = JsStr::from_str(id);
        assert!(branch(&e, Leaf::Id(&id)).unwrap().is_empty());
    }
}

#[test]
fn a_dangling_parent_ends_the_branch() {
    let e = values(&[
        TREE[0],
        r#"{"type":"message","id":"a","parentId":null}"#,
        r#"{"type":"message","id":"b","parentId":"gone"}"#,
        r#"{"type":"message","id":"c","parentId":"b"}"#,
    ]);
    assert_eq!(branch(&e, Leaf::Last).unwrap(), ["b", "c"]);
}

#[test]
fn later_duplicates_win_and_a_falsy_last_id_gives_nothing() {
    let e = values(&[
        TREE[0],
        r#"{"type":"message","id":"a","parentId":null}"#,
        r#"{"type":"message","id":"a","parentId":null,"n":2}"#,
        r#"{"type":"message","id":"b","parentId":"a"}"#,
    ]);
    let p = branch_positions(&e, Leaf::Last, |_| String::new()).unwrap();
    assert_eq!(p, [2, 3]);
    let e = values(&[TREE[0], TREE[1], r#"{"type":"message","parentId":"a"}"#]);
    assert!(branch(&e, Leaf::Last).unwrap().is_empty());
}

#[test]
fn later_session_lines_are_not_entries() {
    let e = values(&[
        TREE[0],
        r#"{"type":"message","id":"a","parentId":null}"#,
        r#"{"type":"session","version":3,"id":"a2"}"#,
    ]);
    assert_eq!(branch(&e, Leaf::Last).unwrap(), ["a"]);
}

#[test]
fn cycles_are_errors() {
    let e = values(&[
        TREE[0],
        r#"{"type":"message","id":"a","parentId":"b"}"#,
        r#"{"type":"message","id":"b","parentId":"a"}"#,
    ]);
    let err = branch(&e, Leaf::Last).unwrap_err().to_string();
    assert!(err.contains("cycle"), "{err}");
}

/// A session file written for one test, in a directory of its own that
/// goes when it is dropped (tests run side by side in one process).
struct TestFile {
    dir: std::path::PathBuf,
    path: std::path::PathBuf,
}

impl std::ops::Deref for TestFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TestFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn write_file(name: &str, text: &str) -> TestFile {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("prime-compaction-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    TestFile { dir, path }
}

fn message(id: &str, parent: &str, role: &str, text: &str) -> String {
    let parent = if parent.is_empty() {
        "null".to_string()
    } else {
        format!("\"{parent}\"")
    };
    let content = if role == "assistant" {
        format!(
            r#"[{{"type":"text","text":"{text}"}},{{"type":"toolCall","id":"c{id}","name":"read","arguments":{{"path":"{id}.rs"}}}}]"#
        )
    } else {
        format!("\"{text}\"")
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"t","message":{{"role":"{role}","content":{content},"timestamp":1}}}}"#
    )
}

fn session(lines: &[String]) -> String {
    let mut text = format!("{}\n", TREE[0]);
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    text
}

/// Two turns of long messages: with 150 tokens kept, the first is summarized.
fn two_turns() -> Vec<String> {
    let long = "x".repeat(400);
    vec![
        message("u1", "", "user", &long),
        message("a1", "u1", "assistant", &long),
        message("u2", "a1", "user", &long),
        message("a2", "u2", "assistant", &long),
    ]
}

#[test]
fn plans_a_file_by_entry_id() {
    let lines = two_turns();
    let path = write_file("plan.jsonl", &session(&lines));
    let plan =
        prepare_compaction_from_file(&path, None, 150.0, &crate::agent_line::AgentLine::V0_78)
            .unwrap()
            .expect("a plan");
    assert_eq!(plan.first_kept_entry_id, JsStr::from_str("u2"));
    assert_eq!(
        plan.messages_to_summarize_ids,
        vec![Some(JsStr::from_str("u1")), Some(JsStr::from_str("a1"))]
    );
    assert!(!plan.is_split_turn);
    assert!(plan.turn_prefix_ids.is_empty());
    assert_eq!(
        plan.file_ops.read.iter().cloned().collect::<Vec<_>>(),
        vec![JsStr::from_str("a1.rs")]
    );
    assert_eq!(plan.previous_summary, None);
    // Branch selection: ending at a1, everything fits in the kept tail.
    let a1 = JsStr::from_str("a1");
    let plan = prepare_compaction_from_file(
        &path,
        Some(&a1),
        150.0,
        &crate::agent_line::AgentLine::V0_78,
    )
    .unwrap()
    .expect("a plan");
    assert_eq!(plan.first_kept_entry_id, JsStr::from_str("u1"));
    assert!(plan.messages_to_summarize_ids.is_empty());
    // Unknown leaf: an empty branch, no plan (as the reference).
    let zz = JsStr::from_str("zz");
    assert_eq!(
        prepare_compaction_from_file(
            &path,
            Some(&zz),
            150.0,
            &crate::agent_line::AgentLine::V0_78
        )
        .unwrap(),
        None
    );
}

#[test]
fn core_errors_name_the_file_line() {
    let lines = vec![
        message("u1", "", "user", "hi"),
        r#"{"type":"message","id":"u2","parentId":"u1","message":{"role":5}}"#.to_string(),
    ];
    let path = write_file("bad-role.jsonl", &session(&lines));
    let err = prepare_compaction_from_file(&path, None, 1.0, &crate::agent_line::AgentLine::V0_78)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad-role.jsonl: line 3: message.role"),
        "{err}"
    );
}

fn lines_of(text: &str, leaf: Option<&str>) -> Result<BranchLines> {
    let leaf = leaf.map(JsStr::from_str);
    branch_lines(text.as_bytes(), "s.jsonl", leaf.as_ref())
}

#[test]
fn branch_lines_count_every_line_of_the_file() {
    // Blank lines, a CRLF ending and an entry cut short keep their line numbers.
    let text = format!(
        "\u{feff}{}\n\n{}\r\n{}\n{}\n{{\"type\":\"message\",\"id\":\"x\n{}\n",
        TREE[0], TREE[1], TREE[2], TREE[3], TREE[4]
    );
    let found = lines_of(&text, None).unwrap();
    assert_eq!(found.lines, [3, 7]);
    let ids: Vec<String> = found
        .ids
        .iter()
        .map(|id| id.to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids, ["a", "b", "c", "d"]);
    assert_eq!(lines_of(&text, Some("c")).unwrap().lines, [3, 4, 5]);
}

#[test]
fn branch_lines_name_a_leaf_that_is_not_there() {
    let text = TREE.join("\n");
    for leaf in ["zz", "", "s"] {
        let err = lines_of(&text, Some(leaf)).unwrap_err().to_string();
        assert_eq!(err, format!("s.jsonl: no entry has the id \"{leaf}\""));
    }
}

#[test]
fn branch_lines_read_by_the_file_rules() {
    let v2 = r#"{"type":"session","version":2,"id":"s"}"#;
    let err = lines_of(&format!("{v2}\n{}", TREE[1]), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("s.jsonl: line 1: session version 2 is older than 3"),
        "{err}"
    );
    let err = lines_of(&format!("{}\n[1]", TREE[0]), None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "s.jsonl: line 2: expected a session entry object, got an array"
    );
    let cycle = [
        TREE[0],
        r#"{"type":"message","id":"a","parentId":"b"}"#,
        r#"{"type":"message","id":"b","parentId":"a"}"#,
    ];
    let err = lines_of(&cycle.join("\n"), None).unwrap_err().to_string();
    assert!(
        err.starts_with("s.jsonl: line ") && err.ends_with("parentId links form a cycle"),
        "{err}"
    );
}

#[test]
fn bytes_plan_as_the_file_does_and_name_an_unknown_leaf() {
    let mut lines = two_turns();
    lines.push(r#"{"type":"message","id":"u3","parentId":"u2","message":{"role":5}}"#.to_string());
    let text = session(&lines);
    let path = write_file("bytes.jsonl", &text);
    let name = path.display().to_string();
    for line in [&AgentLine::V0_78, &AgentLine::V1_6] {
        for leaf in [Some("a2"), Some("a1"), Some("u3"), None] {
            let leaf = leaf.map(JsStr::from_str);
            for keep in [1.0, 150.0, 1e9] {
                let from_file = prepare_compaction_from_file(&path, leaf.as_ref(), keep, line)
                    .map_err(|e| e.to_string());
                let from_bytes = prepare_compaction_from_bytes(
                    text.as_bytes(),
                    &name,
                    leaf.as_ref(),
                    keep,
                    line,
                )
                .map_err(|e| e.to_string());
                assert_eq!(from_bytes, from_file, "{leaf:?} {keep}");
            }
        }
    }
    // One with a plan and one with an error among them.
    let a2 = JsStr::from_str("a2");
    assert!(prepare_compaction_from_bytes(
        text.as_bytes(),
        &name,
        Some(&a2),
        150.0,
        &AgentLine::V1_6
    )
    .unwrap()
    .is_some());
    let err = prepare_compaction_from_bytes(text.as_bytes(), &name, None, 150.0, &AgentLine::V1_6)
        .unwrap_err()
        .to_string();
    assert!(err.contains("bytes.jsonl: line 6: message.role"), "{err}");
    // Where the file planner gives an empty branch, the bytes say why.
    let zz = JsStr::from_str("zz");
    assert_eq!(
        prepare_compaction_from_file(&path, Some(&zz), 150.0, &AgentLine::V1_6).unwrap(),
        None
    );
    let err =
        prepare_compaction_from_bytes(text.as_bytes(), &name, Some(&zz), 150.0, &AgentLine::V1_6)
            .unwrap_err()
            .to_string();
    assert_eq!(err, format!("{name}: no entry has the id \"zz\""));
}

#[test]
fn an_error_about_a_context_edit_names_the_edit_by_its_line() {
    // A context edit with no replacement, applied to the assistant message
    // on line 3: the edit's own line, 4.
    let mut lines = two_turns();
    lines.insert(
        2,
        r#"{"type":"context_edit","id":"e","parentId":"a1","targetId":"a1"}"#.to_string(),
    );
    lines[3] = lines[3].replace(r#""parentId":"a1""#, r#""parentId":"e""#);
    let path = write_file("edit.jsonl", &session(&lines));
    let err = prepare_compaction_from_file(&path, None, 50.0, &AgentLine::V1_6)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "edit.jsonl: line 4: replacement: expected an object with content, got undefined"
        ),
        "{err}"
    );
}

#[test]
fn a_transcript_error_in_a_context_edit_names_the_edit_by_its_line() {
    // The assistant message on line 3 carries the content of the edit on
    // line 4, whose tool call has null arguments: the planner takes them
    // (a bash call's are never read), the transcript does not.
    let mut lines = two_turns();
    lines.insert(
        2,
        r#"{"type":"context_edit","id":"e","parentId":"a1","targetId":"a1","replacement":{"content":[{"type":"toolCall","id":"c","name":"bash","arguments":null}]}}"#
            .to_string(),
    );
    lines[3] = lines[3].replace(r#""parentId":"a1""#, r#""parentId":"e""#);
    let path = write_file("edit-transcript.jsonl", &session(&lines));
    let err = crate::transcript::from_file::serialize_for_summary_from_file(
        &path,
        None,
        50.0,
        true,
        &AgentLine::V1_6,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "edit-transcript.jsonl: line 4: replacement.content[0].arguments: expected an object, got null"
        ),
        "{err}"
    );
}
