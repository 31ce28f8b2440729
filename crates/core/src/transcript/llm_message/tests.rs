use super::*;
use crate::js::json::parse;
use crate::js::json::view::Val;

fn convert(text: &str) -> Result<Vec<Message>> {
    let v = parse(text).unwrap();
    from_agent_messages(&Val::new(&v))
}

#[test]
fn agent_kinds_become_user_messages() {
    let got = convert(
            r#"[
            {"role":"bashExecution","command":"ls","output":"a","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1},
            {"role":"bashExecution","command":"x","output":"","excludeFromContext":true,"timestamp":2},
            {"role":"custom","customType":"n","content":"note","display":true,"timestamp":3},
            {"role":"custom","customType":"n","content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"display":true,"timestamp":4},
            {"role":"branchSummary","summary":"S","fromId":"x","timestamp":5},
            {"role":"compactionSummary","summary":"C","tokensBefore":1,"timestamp":6},
            {"role":"weird"}
        ]"#,
        )
        .unwrap();
    assert_eq!(got.len(), 5);
    assert!(got.iter().all(Message::is_user));
    let Message::User(u) = &got[0] else { panic!() };
    assert_eq!(
        u.content,
        UserContent::Blocks(vec![Block::text("Ran `ls`\n```\na\n```")])
    );
    assert_eq!(u.timestamp, Some(1.0));
    let Message::User(u) = &got[2] else { panic!() };
    assert_eq!(
        u.content,
        UserContent::Blocks(vec![Block::Image {
            mime_type: Some("image/png".into())
        }])
    );
}

#[test]
fn assistant_blocks_keep_what_a_transcript_shows() {
    let got = convert(
            r#"[{"role":"assistant","content":[
                {"type":"thinking","thinking":"hmm","redacted":true},
                {"type":"text","text":null},
                {"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a","n":1,"o":{"x":[1]}}},
                {"type":"other"}
            ],"timestamp":7}]"#,
        )
        .unwrap();
    let Message::Assistant(a) = &got[0] else {
        panic!()
    };
    assert_eq!(
        a.content,
        vec![
            Block::Thinking {
                thinking: "hmm".into(),
                redacted: true
            },
            Block::text(""),
            Block::ToolCall(ToolCall {
                id: "c1".into(),
                name: "read".into(),
                args: vec![
                    ("path".into(), Some("\"a\"".into())),
                    ("n".into(), Some("1".into())),
                    ("o".into(), Some("{\"x\":[1]}".into())),
                ],
            }),
        ]
    );
}

#[test]
fn string_arguments_list_code_units() {
    let got = convert(
            r#"[{"role":"assistant","content":[{"type":"toolCall","id":1,"name":"t","arguments":"ab"}]}]"#,
        )
        .unwrap();
    let Message::Assistant(a) = &got[0] else {
        panic!()
    };
    let Block::ToolCall(call) = &a.content[0] else {
        panic!()
    };
    assert_eq!(call.id, "1");
    assert_eq!(
        call.args,
        vec![
            ("0".into(), Some("\"a\"".into())),
            ("1".into(), Some("\"b\"".into()))
        ]
    );
}

#[test]
fn errors_name_index_and_field() {
    let e = convert(r#"[{"role":"user","content":"x"},{"role":"toolResult","toolCallId":"a","toolName":"b","content":null}]"#)
            .unwrap_err();
    assert_eq!(e.location(), "[1].content");
    let e = convert(r#"[{"role":"assistant","content":[null]}]"#).unwrap_err();
    assert_eq!(e.location(), "[0].content[0]");
    let e =
        convert(r#"[{"role":"assistant","content":[{"type":"toolCall","id":"x","name":"y"}]}]"#)
            .unwrap_err();
    assert_eq!(e.location(), "[0].content[0].arguments");
    let e = convert(r#"[{"role":1}]"#).unwrap_err();
    assert_eq!(e.location(), "[0].role");
}

#[test]
fn tool_results_normalize_ids_and_flags() {
    let got = convert(
            r#"[{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"ok"},{"type":"image","data":"x","mimeType":"image/png"}],"isError":1}]"#,
        )
        .unwrap();
    let Message::ToolResult(t) = &got[0] else {
        panic!()
    };
    assert!(t.is_error);
    assert_eq!(t.content.len(), 2);
}
