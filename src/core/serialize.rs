//! `serializeConversation`: the plain-text transcript a summarizer reads.
//!
//! The spec's format, which names tool calls and results by `name#callId`
//! and labels reasoning apart from replies, so a summary can tie each result
//! to its call. Joining, empty-content handling and tool-result truncation
//! follow the reference, except that a cut never splits a surrogate pair.

use super::jsstr::{JsStr, Utf16Builder};
use super::llm_message::{Block, Message, ToolCall, UserContent};

/// Longest tool-result text kept verbatim, in UTF-16 units.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// What goes into a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SerializeOptions {
    /// Include `[Assistant reasoning]` lines.
    pub reasoning: bool,
}

impl Default for SerializeOptions {
    fn default() -> Self {
        SerializeOptions { reasoning: true }
    }
}

/// Keeps at most `max` units of `text` (fewer rather than half a surrogate
/// pair) and says how many were cut.
pub fn truncate_for_summary(text: &JsStr, max: usize) -> (JsStr, usize) {
    let len = text.utf16_len();
    if len <= max {
        return (text.clone(), 0);
    }
    let kept = text.truncate_utf16(max);
    let cut = len - kept.utf16_len();
    (kept, cut)
}

/// Transcript parts, separated by a blank line.
pub(crate) struct Parts<'a> {
    out: &'a mut Utf16Builder,
    any: bool,
}

impl<'a> Parts<'a> {
    pub(crate) fn new(out: &'a mut Utf16Builder) -> Self {
        Parts { out, any: false }
    }

    fn start(&mut self, label: &str) -> &mut Utf16Builder {
        if self.any {
            self.out.push_str("\n\n");
        }
        self.any = true;
        self.out.push_str(label);
        self.out
    }
}

fn push_tool_call(out: &mut Utf16Builder, call: &ToolCall) {
    out.push_js(&call.name);
    out.push_str("#");
    out.push_js(&call.id);
    out.push_str("(");
    for (i, (key, json)) in call.args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_js(key);
        out.push_str("=");
        match json {
            Some(json) => out.push_js(json),
            // `${JSON.stringify(undefined)}`
            None => out.push_str("undefined"),
        }
    }
    out.push_str(")");
}

fn texts(blocks: &[Block]) -> impl Iterator<Item = &JsStr> {
    blocks.iter().filter_map(|b| match b {
        Block::Text(t) => Some(t),
        _ => None,
    })
}

/// The text blocks joined with `""`, as the reference reads user and
/// tool-result content.
pub(crate) fn joined_text(blocks: &[Block]) -> JsStr {
    let mut it = texts(blocks).filter(|t| !t.is_empty());
    let Some(first) = it.next() else {
        return JsStr::empty();
    };
    match it.next() {
        None => first.clone(),
        Some(second) => {
            let mut b = Utf16Builder::new();
            b.push_js(first);
            b.push_js(second);
            for t in it {
                b.push_js(t);
            }
            b.finish()
        }
    }
}

/// Appends one message's parts.
pub(crate) fn push_message(parts: &mut Parts<'_>, message: &Message, options: SerializeOptions) {
    match message {
        Message::User(m) => match &m.content {
            UserContent::Text(t) => {
                if !t.is_empty() {
                    parts.start("[User]: ").push_js(t);
                }
            }
            UserContent::Blocks(blocks) => {
                if texts(blocks).any(|t| !t.is_empty()) {
                    let out = parts.start("[User]: ");
                    for t in texts(blocks) {
                        out.push_js(t);
                    }
                }
            }
        },
        Message::Assistant(m) => {
            let reasoning = |b: &&Block| matches!(b, Block::Thinking { thinking, redacted: false } if !thinking.is_empty());
            if options.reasoning && m.content.iter().any(|b| reasoning(&b)) {
                let out = parts.start("[Assistant reasoning]: ");
                for (i, b) in m.content.iter().filter(reasoning).enumerate() {
                    if i > 0 {
                        out.push_str("\n");
                    }
                    if let Block::Thinking { thinking, .. } = b {
                        out.push_js(thinking);
                    }
                }
            }
            if m.content.iter().any(|b| matches!(b, Block::Text(_))) {
                let out = parts.start("[Assistant]: ");
                for (i, t) in texts(&m.content).enumerate() {
                    if i > 0 {
                        out.push_str("\n");
                    }
                    out.push_js(t);
                }
            }
            if m.content.iter().any(|b| matches!(b, Block::ToolCall(_))) {
                let out = parts.start("[Assistant tool calls]: ");
                let calls = m.content.iter().filter_map(|b| match b {
                    Block::ToolCall(c) => Some(c),
                    _ => None,
                });
                for (i, call) in calls.enumerate() {
                    if i > 0 {
                        out.push_str("; ");
                    }
                    push_tool_call(out, call);
                }
            }
        }
        Message::ToolResult(m) => {
            let content = joined_text(&m.content);
            if content.is_empty() && m.elided_units == 0 {
                return;
            }
            let out = parts.start("[Tool result ");
            out.push_js(&m.tool_name);
            out.push_str("#");
            out.push_js(&m.tool_call_id);
            out.push_str(if m.is_error {
                " error=true]: "
            } else {
                " error=false]: "
            });
            let (kept, mut cut) = truncate_for_summary(&content, TOOL_RESULT_MAX_CHARS);
            // Text never copied (see ReadLimits) lies past the cut as well.
            cut += m.elided_units;
            out.push_js(&kept);
            if cut > 0 {
                out.push_str(&format!("\n\n[... {cut} more characters truncated]"));
            }
        }
    }
}

/// About the transcript's length in bytes (text plus labels; tool results
/// count at most their cut length).
fn size_hint(messages: &[Message]) -> usize {
    let text = |blocks: &[Block]| -> usize {
        blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => t.stored_len(),
                Block::Thinking { thinking, .. } => thinking.stored_len(),
                Block::ToolCall(c) => {
                    32 + c
                        .args
                        .iter()
                        .map(|(k, v)| k.stored_len() + v.as_ref().map_or(9, |v| v.stored_len()) + 3)
                        .sum::<usize>()
                }
                Block::Image { .. } => 0,
            })
            .sum()
    };
    messages
        .iter()
        .map(|m| {
            40 + match m {
                Message::User(u) => match &u.content {
                    UserContent::Text(t) => t.stored_len(),
                    UserContent::Blocks(b) => text(b),
                },
                Message::Assistant(a) => text(&a.content),
                Message::ToolResult(r) => text(&r.content).min(TOOL_RESULT_MAX_CHARS * 3) + 64,
            }
        })
        .sum()
}

/// Appends the transcript of `messages` to `out`.
pub fn serialize_into(messages: &[Message], options: SerializeOptions, out: &mut Utf16Builder) {
    let mut parts = Parts::new(out);
    for m in messages {
        push_message(&mut parts, m, options);
    }
}

/// `serializeConversation(messages, options)`.
pub fn serialize(messages: &[Message], options: SerializeOptions) -> JsStr {
    // Sized up front: regrowing a transcript of many megabytes costs copies
    // and page faults that showed as a third of the time.
    let mut out = Utf16Builder::with_capacity(size_hint(messages));
    serialize_into(messages, options, &mut out);
    out.finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::core::json::parse;
    use crate::core::llm_message::from_agent_messages;
    use crate::core::value_view::Val;

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
        let only_redacted = r#"[{"role":"assistant","content":[{"type":"thinking","thinking":"x","redacted":true}]}]"#;
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
            crate::core::llm_message::AssistantMessage {
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

    #[test]
    fn truncation_never_splits_a_surrogate_pair() {
        // 1999 ASCII units, then an emoji occupying units 1999 and 2000.
        let text = JsStr::from_string(format!("{}😀{}", "a".repeat(1999), "b".repeat(10)));
        let (kept, cut) = truncate_for_summary(&text, 2000);
        assert_eq!(kept.utf16_len(), 1999);
        assert_eq!(cut, 12);
        assert!(kept.as_str().is_some());
        // A lone surrogate before the cut is kept as is.
        let mut units: Vec<u16> = vec![0xD800];
        units.extend(std::iter::repeat_n(u16::from(b'z'), 2100));
        let (kept, cut) = truncate_for_summary(&JsStr::from_utf16(&units), 2000);
        assert_eq!((kept.utf16_len(), cut), (2000, 101));
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
}
