//! The merged system message on sessions written as JSON; expected values
//! are what 1.6.0's `appendCompaction` writes for them
//! (`__test__/compaction-entry.test.js` compares the two on generated sessions).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::agent_line::AgentLine;
use crate::js::json::view::Val;
use crate::js::json::{parse, stringify_to_string};

/// The entry's `systemMessage` as JSON, for a chain of messages.
fn merged(line: &'static AgentLine, messages: &[&str]) -> Option<String> {
    let entries: Vec<String> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let parent = if i == 0 { "null".to_string() } else { format!("\"e{}\"", i - 1) };
            format!(r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"t","message":{m}}}"#)
        })
        .collect();
    let value = parse(&format!("[{}]", entries.join(","))).unwrap();
    let view = Val::new(&value);
    let entries = Entries::new(&view, "pathEntries", line).unwrap();
    compaction_system_message(&entries, 7.0)
        .unwrap()
        .map(|m| stringify_to_string(&m))
}

#[test]
fn sections_and_tools_keep_map_order_and_content_joins_non_empty_texts() {
    let first = r#"{"role":"system","content":"base","sections":{"b":"B","a":"A","2":"two"},"toolsAdded":[{"name":"read"},{"name":"bash"}],"timestamp":1}"#;
    let user = r#"{"role":"user","content":"hi","timestamp":2}"#;
    // `a` deleted then set again goes last; `b` set again keeps its place;
    // `read` removed then added goes last; an empty content adds no text.
    let second = r#"{"role":"system","content":[{"type":"text","text":"more"},{"type":"image"},{"type":"text","text":"x"}],"sections":{"a":null,"b":"B2"},"toolsRemoved":[{"name":"read"}],"timestamp":3}"#;
    let third = r#"{"role":"system","content":"","sections":{"a":"A2"},"toolsAdded":[{"name":"read","description":"r"}]}"#;
    assert_eq!(
        merged(&AgentLine::V1_6, &[first, user, second, third]).as_deref(),
        Some(
            r#"{"role":"system","content":"base\n\nmore\nx","sections":{"2":"two","b":"B2","a":"A2"},"toolsAdded":[{"name":"bash"},{"name":"read","description":"r"}],"timestamp":7}"#
        )
    );
}

#[test]
fn none_without_system_messages_or_on_0_78() {
    let user = r#"{"role":"user","content":"hi","timestamp":2}"#;
    let system = r#"{"role":"system","content":"s","timestamp":1}"#;
    assert_eq!(merged(&AgentLine::V1_6, &[user]), None);
    assert_eq!(merged(&AgentLine::V0_78, &[system, user]), None);
    // Only tools, and no timestamp: still a message (with empty content).
    let tools = r#"{"role":"system","content":"","toolsAdded":[{"name":"read"}]}"#;
    assert_eq!(
        merged(&AgentLine::V1_6, &[tools]).as_deref(),
        Some(r#"{"role":"system","content":"","toolsAdded":[{"name":"read"}],"timestamp":7}"#)
    );
    let bare = r#"{"role":"system","content":"s"}"#;
    assert_eq!(merged(&AgentLine::V1_6, &[bare]), None);
}

#[test]
fn any_section_value_or_text_is_kept_as_pi_ai_keeps_it() {
    // What 1.6.0's appendCompaction writes for the same messages, where the
    // estimates would reject the values (a section not a string, a text not a string).
    let sections = r#"{"role":"system","content":"base","sections":{"a":5,"b":"B","c":false,"d":{"x":1},"e":"E"},"timestamp":1}"#;
    let removal = r#"{"role":"system","content":"x","sections":{"e":null},"timestamp":2}"#;
    assert_eq!(
        merged(&AgentLine::V1_6, &[sections, removal]).as_deref(),
        Some(
            r#"{"role":"system","content":"base\n\nx","sections":{"a":5,"b":"B","c":false,"d":{"x":1}},"timestamp":7}"#
        )
    );
    let texts = r#"{"role":"system","content":[{"type":"text","text":5},{"type":"text","text":null},{"type":"text","text":{"a":1}},{"type":"text"}],"timestamp":1}"#;
    assert_eq!(
        merged(&AgentLine::V1_6, &[texts]).as_deref(),
        Some(r#"{"role":"system","content":"5\n\n[object Object]\n","timestamp":7}"#)
    );
    // Object.entries of a string, a number, an array.
    for (sections, expected) in [
        (r#""ab""#, r#","sections":{"0":"a","1":"b"}"#),
        ("7", ""),
        (r#"["p",null,"q"]"#, r#","sections":{"0":"p","2":"q"}"#),
    ] {
        let message =
            format!(r#"{{"role":"system","content":"c","sections":{sections},"timestamp":1}}"#);
        assert_eq!(
            merged(&AgentLine::V1_6, &[&message]),
            Some(format!(
                r#"{{"role":"system","content":"c"{expected},"timestamp":7}}"#
            ))
        );
    }
}

#[test]
fn removals_by_a_name_that_is_not_a_string_match_no_tool() {
    // 1.6.0 writes the same for each: nothing removed but `read` where named.
    let added = r#"{"role":"system","content":"c","toolsAdded":[{"name":"read"},{"name":"bash"}],"timestamp":1}"#;
    let both = r#"{"role":"system","content":"c","toolsAdded":[{"name":"read"},{"name":"bash"}],"timestamp":7}"#;
    for removed in [r#"[5]"#, r#"[{"name":5}]"#, r#""ab""#] {
        let removal =
            format!(r#"{{"role":"system","content":"","toolsRemoved":{removed},"timestamp":2}}"#);
        assert_eq!(
            merged(&AgentLine::V1_6, &[added, &removal]).as_deref(),
            Some(both),
            "{removed}"
        );
    }
    let removal =
        r#"{"role":"system","content":"","toolsRemoved":[{"name":"read"},"x"],"timestamp":2}"#;
    assert_eq!(
        merged(&AgentLine::V1_6, &[added, removal]).as_deref(),
        Some(r#"{"role":"system","content":"c","toolsAdded":[{"name":"bash"}],"timestamp":7}"#)
    );
}
