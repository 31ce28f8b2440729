use super::*;
use crate::js::string::{JsStr, Utf16Builder};
use crate::transcript::llm_message::{AssistantMessage, ToolCall, ToolResultMessage, UserMessage};

/// A text that is the caller's own string (`true`) or made here.
#[derive(Clone, Debug, PartialEq)]
struct Callers(JsStr, bool);

impl Text for Callers {
    fn owned(s: JsStr) -> Self {
        Callers(s, false)
    }
    fn utf16_len(&self) -> usize {
        self.0.utf16_len()
    }
    fn is_blank(&self) -> bool {
        Text::is_blank(&self.0)
    }
    fn code_unit_at(&self, index: usize) -> Option<u16> {
        self.0.code_unit_at(index)
    }
    fn push_prefix_into(&self, units: usize, out: &mut Utf16Builder) {
        self.0.push_prefix_into(units, out)
    }
    fn transcript_size(&self) -> TextSize {
        match self.1 {
            true => TextSize::Callers(self.0.utf16_len()),
            false => TextSize::Written(self.0.utf16_len()),
        }
    }
}

fn callers(s: &str) -> Callers {
    Callers(JsStr::from(s), true)
}

fn user(text: &str) -> Message<Callers> {
    Message::User(UserMessage {
        content: UserContent::Text(callers(text)),
        timestamp: None,
    })
}

/// An assistant message: a text, a thinking block, and a call whose one
/// argument's value is `written` (its JSON, made here).
fn assistant(text: &str, thinking: &str, key: &str, written: &str) -> Message<Callers> {
    Message::Assistant(AssistantMessage {
        content: vec![
            Block::Text(callers(text)),
            Block::Thinking {
                thinking: callers(thinking),
                redacted: false,
            },
            Block::ToolCall(ToolCall {
                id: callers("call_1"),
                name: callers("write"),
                args: vec![
                    (
                        Callers::owned(JsStr::from(key)),
                        Some(Callers::owned(JsStr::from(written))),
                    ),
                    (Callers::owned(JsStr::from("gone")), None),
                ],
            }),
            Block::Image { mime_type: None },
        ],
        timestamp: None,
    })
}

fn tool_result(body: &str) -> Message<Callers> {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: callers("call_1"),
        tool_name: callers("write"),
        is_error: false,
        content: vec![Block::Text(callers(body))],
        elided_units: 0,
        timestamp: None,
    })
}

#[test]
fn sizes_count_texts_and_arguments_not_tool_results() {
    let messages = vec![
        user("hello"),
        assistant("ok", "think", "path", &"x".repeat(100)),
        tool_result(&"y".repeat(10_000)),
    ];
    let sizes = TextSizes::of(&messages);
    // "hello", "ok", "think"; the call's id and name are labels.
    assert_eq!(sizes.placed, 5 + 2 + 5);
    // "path", the value, "gone".
    assert_eq!(sizes.written, 4 + 100 + 4);
    assert_eq!(sizes.capacity(), (12 + 108) + (12 + 108) / 8);
}

#[test]
fn written_whole_when_made_text_is_at_least_the_callers() {
    let sizes = |placed, written| TextSizes { placed, written };
    assert!(sizes(0, 0).fit_whole());
    assert!(sizes(100, 100).fit_whole());
    assert!(!sizes(100, 99).fit_whole());
    assert!(sizes(1, WHOLE_MAX_UNITS - 1).fit_whole());
    assert!(!sizes(1, WHOLE_MAX_UNITS).fit_whole());
    assert!(!sizes(usize::MAX, usize::MAX).fit_whole());
    assert_eq!(sizes(0, usize::MAX).capacity(), usize::MAX);
}

#[test]
fn owned_texts_are_written() {
    let messages: Vec<Message<JsStr>> = vec![Message::User(UserMessage {
        content: UserContent::Text(JsStr::from("héllo")),
        timestamp: None,
    })];
    assert_eq!(
        TextSizes::of(&messages),
        TextSizes {
            placed: 0,
            written: 5
        }
    );
}

#[test]
fn the_count_stops_past_the_most_written_whole() {
    // The same count as `TextSizes::of`, within 100 units, not V8's longest
    // string.
    let big = "x".repeat(51);
    let messages = vec![user(&big), user(&big), user("never counted")];
    let sizes = TextSizes::counted_within(&messages, 100);
    assert_eq!(sizes.placed, 2 * big.len());
    assert!(!sizes.fit_within(100));
}

#[test]
fn without_long_written_texts_a_recipe_and_no_count() {
    let messages = vec![assistant("", "", "k", &"x".repeat(100))];
    assert_eq!(written_whole(&messages, false), None);
    assert_eq!(
        written_whole(&messages, true),
        Some(TextSizes::of(&messages))
    );
    // Long written texts, but more of the caller's: a recipe.
    let mut talky = messages.clone();
    talky.push(user(&"y".repeat(200)));
    assert_eq!(written_whole(&talky, true), None);
}
