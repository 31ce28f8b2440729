use super::*;
use crate::js::json::parse;
use crate::js::json::view::Val;
use crate::transcript::llm_message::{from_agent_messages, ToolCall};

fn ser_with(text: &str, reasoning: bool) -> String {
    let v = parse(text).unwrap();
    let messages = from_agent_messages(&Val::new(&v)).unwrap();
    serialize(&messages, SerializeOptions { reasoning }).to_string()
}

fn ser(text: &str) -> String {
    ser_with(text, true)
}

#[test]
fn spec_example_lines() {
    let got = ser(r#"[
            {"role":"user","content":"What they said"},
            {"role":"assistant","content":[
                {"type":"thinking","thinking":"Readable reasoning for compatible summary models"},
                {"type":"text","text":"Response text"},
                {"type":"toolCall","id":"call-id","name":"ipython","arguments":{"code":"open('foo.ts').read()"}}]},
            {"role":"toolResult","toolCallId":"call-id","toolName":"ipython","content":[{"type":"text","text":"Output from tool"}],"isError":false}
        ]"#);
    assert_eq!(
        got,
        "[User]: What they said\n\n\
             [Assistant reasoning]: Readable reasoning for compatible summary models\n\n\
             [Assistant]: Response text\n\n\
             [Assistant tool calls]: ipython#call-id(code=\"open('foo.ts').read()\")\n\n\
             [Tool result ipython#call-id error=false]: Output from tool"
    );
}

#[test]
fn user_text_blocks_join_without_separator_and_skip_images() {
    let got = ser(
        r#"[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"QUJD","mimeType":"image/png"},{"type":"text","text":"b"}]}]"#,
    );
    assert_eq!(got, "[User]: ab");
}

#[test]
fn empty_user_content_is_omitted() {
    let got = ser(
        r#"[{"role":"user","content":""},{"role":"user","content":[]},{"role":"user","content":[{"type":"text","text":""}]},{"role":"user","content":"x"}]"#,
    );
    assert_eq!(got, "[User]: x");
}

#[test]
fn assistant_text_parts_join_with_newline_even_when_empty() {
    let got = ser(
        r#"[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":""},{"type":"text","text":"b"}]}]"#,
    );
    assert_eq!(got, "[Assistant]: a\n\nb");
    let got = ser(r#"[{"role":"assistant","content":[{"type":"text","text":""}]}]"#);
    assert_eq!(got, "[Assistant]: ");
    assert_eq!(ser(r#"[{"role":"assistant","content":[]}]"#), "");
}

#[test]
fn reasoning_joins_with_newline_and_skips_empty_and_redacted() {
    let msgs = r#"[{"role":"assistant","content":[
            {"type":"thinking","thinking":"one"},
            {"type":"thinking","thinking":""},
            {"type":"thinking","thinking":"secret","redacted":true},
            {"type":"thinking","thinking":"two"},
            {"type":"text","text":"done"}]}]"#;
    assert_eq!(
        ser(msgs),
        "[Assistant reasoning]: one\ntwo\n\n[Assistant]: done"
    );
    assert_eq!(ser_with(msgs, false), "[Assistant]: done");
    let only_redacted =
        r#"[{"role":"assistant","content":[{"type":"thinking","thinking":"x","redacted":true}]}]"#;
    assert_eq!(ser(only_redacted), "");
}

#[test]
fn tool_calls_print_name_id_and_json_arguments() {
    let got = ser(r#"[{"role":"assistant","content":[
            {"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.ts","limit":10}},
            {"type":"toolCall","id":"c2","name":"ls","arguments":{}},
            {"type":"toolCall","id":"c3","name":"edit","arguments":{"o":{"a":[1,null]},"s":"q\"\n"}}]}]"#);
    assert_eq!(
            got,
            "[Assistant tool calls]: read#c1(path=\"a.ts\", limit=10); ls#c2(); edit#c3(o={\"a\":[1,null]}, s=\"q\\\"\\n\")"
        );
}

#[test]
fn undefined_json_prints_undefined() {
    let messages = vec![Message::Assistant(
        crate::transcript::llm_message::AssistantMessage {
            content: vec![Block::ToolCall(ToolCall {
                id: "c".into(),
                name: "f".into(),
                args: vec![("fn".into(), None), ("x".into(), Some("1".into()))],
            })],
            timestamp: None,
        },
    )];
    assert_eq!(
        serialize(&messages, SerializeOptions::default()).to_string(),
        "[Assistant tool calls]: f#c(fn=undefined, x=1)"
    );
}

#[test]
fn tool_results_name_call_and_error_flag() {
    let got = ser(r#"[
            {"role":"toolResult","toolCallId":"c9","toolName":"bash","content":[{"type":"text","text":"boom"},{"type":"text","text":"!"}],"isError":true},
            {"role":"toolResult","toolCallId":"c8","toolName":"bash","content":[],"isError":false},
            {"role":"toolResult","toolCallId":"c7","toolName":"bash","content":[{"type":"image","data":"QQ==","mimeType":"image/png"}],"isError":false}
        ]"#);
    assert_eq!(got, "[Tool result bash#c9 error=true]: boom!");
}

#[test]
fn tool_results_truncate_at_2000_units() {
    let body = "x".repeat(2500);
    let got = ser(&format!(
        r#"[{{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{{"type":"text","text":"{body}"}}],"isError":false}}]"#
    ));
    let expected = format!(
        "[Tool result t#c error=false]: {}\n\n[... 500 more characters truncated]",
        "x".repeat(2000)
    );
    assert_eq!(got, expected);
    let exact = "y".repeat(2000);
    let got = ser(&format!(
        r#"[{{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{{"type":"text","text":"{exact}"}}],"isError":false}}]"#
    ));
    assert_eq!(got, format!("[Tool result t#c error=false]: {exact}"));
}

/// `push_truncated` over `texts` at 2000 units: (kept, units cut).
fn cut(texts: &[JsStr]) -> (JsStr, usize) {
    let refs: Vec<&JsStr> = texts.iter().collect();
    let mut out = Utf16Builder::new();
    let n = push_truncated::<JsStr, _, _>(&mut out, &refs, TOOL_RESULT_MAX_CHARS);
    (out.finish(), n)
}

fn units(parts: &[(u16, usize)]) -> JsStr {
    let v: Vec<u16> = parts
        .iter()
        .flat_map(|&(u, n)| std::iter::repeat_n(u, n))
        .collect();
    JsStr::from_utf16(&v)
}

#[test]
fn truncation_never_splits_a_surrogate_pair() {
    // 1999 ASCII units, then an emoji occupying units 1999 and 2000.
    let text = JsStr::from_string(format!("{}😀{}", "a".repeat(1999), "b".repeat(10)));
    let (kept, n) = cut(&[text]);
    assert_eq!((kept.utf16_len(), n), (1999, 12));
    assert!(kept.as_str().is_some());
    // The same pair made by two texts meeting at the cut.
    let (a, b, hi, lo) = (u16::from(b'a'), u16::from(b'b'), 0xD83D, 0xDE00);
    let (kept, n) = cut(&[units(&[(a, 1999), (hi, 1)]), units(&[(lo, 1), (b, 10)])]);
    assert_eq!((kept.utf16_len(), n), (1999, 12));
    // A lone surrogate before the cut is kept as is.
    let (kept, n) = cut(&[units(&[(0xD800, 1), (u16::from(b'z'), 2100)])]);
    assert_eq!((kept.utf16_len(), n), (2000, 101));
    // A cut inside the second of two texts.
    let (kept, n) = cut(&[units(&[(a, 1500)]), units(&[(b, 600)])]);
    assert_eq!(
        kept.to_string(),
        format!("{}{}", "a".repeat(1500), "b".repeat(500))
    );
    assert_eq!(n, 100);
}

#[test]
fn agent_messages_convert_first() {
    let got = ser(r#"[
            {"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false},
            {"role":"custom","customType":"x","content":"hello","display":false},
            {"role":"compactionSummary","summary":"S","tokensBefore":1}
        ]"#);
    assert_eq!(
            got,
            "[User]: Ran `ls`\n(no output)\n\n[User]: hello\n\n[User]: The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>"
        );
}
