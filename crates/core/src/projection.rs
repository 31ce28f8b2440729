//! The loss-bounded copy of a conversation that a summarization request
//! sees (the spec's "summary projection").
//!
//! It works on the owned [`Message`] model and never changes its input, so
//! compaction can project the same messages again, smaller, on each overflow
//! retry: fewer tool-result bodies, oldest rounds dropped, a bound on any one
//! oversized round.
//!
//! User rounds: a round opens at a user message and runs to the next one.
//! Messages before the first user message (the tail of a turn an earlier
//! compaction split) form a leading round of their own, the oldest one, and
//! so the first one a retry drops.

use std::ops::Range;

use crate::js::string::{is_high_surrogate, is_low_surrogate, JsStr, Utf16Builder};
use crate::transcript::llm_message::{
    AssistantMessage, Block, Message, ToolResultMessage, UserContent, UserMessage,
};
use crate::transcript::serialize::{
    push_assistant_message, push_message, push_tool_result, Parts, SerializeOptions,
};
use crate::transcript::text::{Sink, Text, TextKey};
use rustc_hash::FxHashSet;

/// How many of the newest valid tool-result bodies stay verbatim by default.
pub const DEFAULT_TOOL_RESULT_BODIES: usize = 3;
/// What an image block becomes.
pub const IMAGE_PLACEHOLDER: &str = "[image]";
/// What an older tool-result body becomes.
pub const TOOL_RESULT_PLACEHOLDER: &str = "[tool result]";
/// The label a user message's transcript part starts with.
const USER_LABEL: &str = "[User]: ";

/// How small to make the projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectOptions {
    /// Newest valid tool results whose bodies stay verbatim.
    pub tool_result_bodies: usize,
    /// Oldest rounds to drop; the newest round always stays.
    pub drop_oldest_rounds: usize,
    /// Longest transcript (UTF-16 units, after its leading `[User]: `) one
    /// round may have before its middle is cut out.
    pub round_bound: Option<usize>,
    /// Keep readable assistant reasoning.
    pub reasoning: bool,
}

impl Default for ProjectOptions {
    fn default() -> Self {
        ProjectOptions {
            tool_result_bodies: DEFAULT_TOOL_RESULT_BODIES,
            drop_oldest_rounds: 0,
            round_bound: None,
            reasoning: true,
        }
    }
}

impl ProjectOptions {
    /// The spec's schedule: the first attempt keeps three bodies; retry `n`
    /// (1 or 2) drops `n` oldest rounds, keeps `3 - 2n`-ish bodies (1, then
    /// 0) and bounds oversized rounds.
    pub fn for_attempt(attempt: usize, reasoning: bool, round_bound: usize) -> Self {
        match attempt {
            0 => ProjectOptions {
                reasoning,
                ..ProjectOptions::default()
            },
            n => ProjectOptions {
                tool_result_bodies: if n == 1 { 1 } else { 0 },
                drop_oldest_rounds: n.min(2),
                round_bound: Some(round_bound),
                reasoning,
            },
        }
    }
}

/// Whether a summarizer model belongs to the Claude family, which rejects
/// prior assistant reasoning replayed as transcript text.
pub fn is_claude_family(api: Option<&JsStr>, provider: Option<&JsStr>, id: Option<&JsStr>) -> bool {
    api.is_some_and(|a| a.eq_str("anthropic-messages"))
        || provider.is_some_and(|p| p.eq_str("anthropic"))
        || id.is_some_and(|i| i.to_string_lossy().to_lowercase().contains("claude"))
}

/// The rounds of `messages` as index ranges covering all of them, in order.
pub fn split_user_rounds<T>(messages: &[Message<T>]) -> Vec<Range<usize>> {
    round_ranges(messages.iter().map(Message::is_user), messages.len())
}

/// Round ranges from which positions open a round.
pub fn round_ranges(opens: impl Iterator<Item = bool>, len: usize) -> Vec<Range<usize>> {
    let mut starts: Vec<usize> = opens
        .enumerate()
        .filter_map(|(i, open)| open.then_some(i))
        .collect();
    if len > 0 && starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &s) in starts.iter().enumerate() {
        out.push(s..starts.get(k + 1).copied().unwrap_or(len));
    }
    out
}

/// A tool result is worth showing when it has an image or non-blank text.
fn has_substance<T: Text>(result: &ToolResultMessage<T>) -> bool {
    result.content.iter().any(|b| match b {
        Block::Text(t) => !t.is_blank(),
        Block::Image { .. } => true,
        _ => false,
    })
}

fn project_blocks<T: Text>(blocks: &[Block<T>]) -> Vec<Block<T>> {
    blocks
        .iter()
        .map(|b| match b {
            Block::Image { .. } => Block::text(IMAGE_PLACEHOLDER),
            other => other.clone(),
        })
        .collect()
}

/// What the projection keeps of a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResultFate {
    /// Empty, useless or orphaned: left out.
    Dropped,
    /// Kept, its body replaced by [`TOOL_RESULT_PLACEHOLDER`].
    Placeholder,
    /// Kept with its body (images as [`IMAGE_PLACEHOLDER`]).
    Body,
}

/// The decisions behind a projection: the first message kept (older rounds
/// are dropped) and the fate of each tool result from there, in order.
struct Plan {
    start: usize,
    results: Vec<ResultFate>,
}

fn plan<T: Text>(messages: &[Message<T>], options: &ProjectOptions) -> Plan {
    let rounds = split_user_rounds(messages);
    let dropped = options
        .drop_oldest_rounds
        .min(rounds.len().saturating_sub(1));
    let start = rounds.get(dropped).map_or(0, |r| r.start);

    // Validity of each tool result: it must have substance and answer a call
    // made earlier in the projected messages.
    let mut calls: FxHashSet<TextKey<'_>> = FxHashSet::default();
    let mut results = Vec::new();
    for m in &messages[start..] {
        match m {
            Message::Assistant(a) => {
                for b in &a.content {
                    if let Block::ToolCall(c) = b {
                        calls.insert(c.id.as_key());
                    }
                }
            }
            Message::ToolResult(r) => {
                results.push(
                    if has_substance(r) && calls.contains(&r.tool_call_id.as_key()) {
                        ResultFate::Body
                    } else {
                        ResultFate::Dropped
                    },
                );
            }
            Message::User(_) => {}
        }
    }
    let total_valid = results.iter().filter(|&&f| f == ResultFate::Body).count();
    let mut older = total_valid.saturating_sub(options.tool_result_bodies);
    for fate in &mut results {
        if older == 0 {
            break;
        }
        if *fate == ResultFate::Body {
            *fate = ResultFate::Placeholder;
            older -= 1;
        }
    }
    Plan { start, results }
}

/// An assistant message's blocks that the projection keeps (with reasoning
/// or without).
pub fn keeps_assistant_block<T: Text>(b: &Block<T>, reasoning: bool) -> bool {
    match b {
        Block::Thinking { thinking, redacted } => reasoning && !redacted && !thinking.is_empty(),
        Block::Image { .. } => false,
        _ => true,
    }
}

fn has_image<T>(blocks: &[Block<T>]) -> bool {
    blocks.iter().any(|b| matches!(b, Block::Image { .. }))
}

/// A message of the projection, as [`project_each`] hands it over.
pub enum Projected<'m, T> {
    /// The input's message as it was.
    Kept(&'m Message<T>),
    /// A message made for the projection.
    Made(Message<T>),
    /// The input's assistant message, of whose blocks the projection keeps
    /// some (not all): those [`keeps_assistant_block`] keeps with `reasoning`.
    Filtered {
        message: &'m AssistantMessage<T>,
        reasoning: bool,
    },
    /// A tool result whose body is [`TOOL_RESULT_PLACEHOLDER`].
    BodyElided(&'m ToolResultMessage<T>),
}

impl<T: Text> Projected<'_, T> {
    pub fn into_message(self) -> Message<T> {
        match self {
            Projected::Kept(m) => m.clone(),
            Projected::Made(m) => m,
            Projected::Filtered { message, reasoning } => Message::Assistant(AssistantMessage {
                content: (message.content.iter())
                    .filter(|b| keeps_assistant_block(b, reasoning))
                    .cloned()
                    .collect(),
                timestamp: message.timestamp,
            }),
            Projected::BodyElided(r) => Message::ToolResult(ToolResultMessage {
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                is_error: r.is_error,
                content: vec![Block::text(TOOL_RESULT_PLACEHOLDER)],
                elided_units: 0,
                timestamp: r.timestamp,
            }),
        }
    }
}

/// Builds the projection of `messages`. The input is only read.
pub fn project<T: Text>(messages: &[Message<T>], options: &ProjectOptions) -> Vec<Message<T>> {
    let mut out = Vec::with_capacity(messages.len());
    project_unbounded(messages, options, |m| out.push(m.into_message()));
    match options.round_bound {
        Some(bound) => bound_rounds(out, bound),
        None => out,
    }
}

/// Hands each message of the projection, in order, to `emit`. Without a
/// round bound (which needs them all made) nothing is copied that the
/// projection leaves as it was.
pub fn project_each<T: Text>(
    messages: &[Message<T>],
    options: &ProjectOptions,
    mut emit: impl FnMut(Projected<'_, T>),
) {
    if options.round_bound.is_some() {
        for m in project(messages, options) {
            emit(Projected::Made(m));
        }
    } else {
        project_unbounded(messages, options, emit);
    }
}

/// The projection before any round bound.
fn project_unbounded<'m, T: Text>(
    messages: &'m [Message<T>],
    options: &ProjectOptions,
    mut emit: impl FnMut(Projected<'m, T>),
) {
    let Plan { start, results } = plan(messages, options);
    let mut fates = results.into_iter();
    for m in &messages[start..] {
        match m {
            Message::User(UserMessage {
                content: UserContent::Blocks(blocks),
                timestamp,
            }) if has_image(blocks) => emit(Projected::Made(Message::User(UserMessage {
                content: UserContent::Blocks(project_blocks(blocks)),
                timestamp: *timestamp,
            }))),
            Message::User(_) => emit(Projected::Kept(m)),
            Message::Assistant(a) => {
                let reasoning = options.reasoning;
                let kept = (a.content.iter())
                    .filter(|b| keeps_assistant_block(b, reasoning))
                    .count();
                if kept == a.content.len() {
                    emit(Projected::Kept(m));
                } else if kept > 0 {
                    emit(Projected::Filtered {
                        message: a,
                        reasoning,
                    });
                }
            }
            Message::ToolResult(r) => match fates.next() {
                Some(ResultFate::Body) if has_image(&r.content) => {
                    emit(Projected::Made(Message::ToolResult(ToolResultMessage {
                        tool_call_id: r.tool_call_id.clone(),
                        tool_name: r.tool_name.clone(),
                        is_error: r.is_error,
                        content: project_blocks(&r.content),
                        elided_units: r.elided_units,
                        timestamp: r.timestamp,
                    })))
                }
                Some(ResultFate::Body) => emit(Projected::Kept(m)),
                Some(ResultFate::Placeholder) => emit(Projected::BodyElided(r)),
                _ => {}
            },
        }
    }
}

/// Writes the transcript of `project(messages, options)` serialized with
/// `reasoning: options.reasoning` to `out`, building no projected messages
/// where it can: what the projection leaves out, the serializer would not
/// write either, except images (shown as `[image]`) and older tool-result
/// bodies (`[tool result]`).
pub fn serialize_projection<T: Text, S: Sink<T>>(
    messages: &[Message<T>],
    options: &ProjectOptions,
    out: &mut S,
) {
    let serialize_options = SerializeOptions {
        reasoning: options.reasoning,
    };
    let placeholder = T::owned(JsStr::from_str(TOOL_RESULT_PLACEHOLDER));
    let mut parts = Parts::new(out);
    project_each(messages, options, |m| match m {
        Projected::Kept(m) => push_message(&mut parts, m, serialize_options),
        Projected::Made(m) => push_message(&mut parts, &m, serialize_options),
        // The serializer leaves out what the projection does.
        Projected::Filtered { message, .. } => {
            push_assistant_message(&mut parts, message, serialize_options)
        }
        Projected::BodyElided(r) => push_tool_result(&mut parts, r, &[&placeholder], 0),
    });
}

/// The marker that stands for the cut-out middle of a round.
pub fn omission_marker(omitted: usize) -> String {
    format!("\n\n[... {omitted} characters of this round omitted ...]\n\n")
}

/// `text` with its middle cut so that at most `bound` units remain around
/// the marker; `None` when it already fits. Cuts never split a surrogate pair.
pub fn head_and_tail(text: &JsStr, bound: usize) -> Option<JsStr> {
    let len = text.utf16_len();
    if len <= bound {
        return None;
    }
    let head = text.truncate_utf16(bound / 2);
    let head_len = head.utf16_len();
    let mut tail_start = len - (bound - head_len);
    if tail_start > 0 && tail_start < len {
        let at = text.code_unit_at(tail_start).unwrap_or(0);
        let before = text.code_unit_at(tail_start - 1).unwrap_or(0);
        if is_low_surrogate(at) && is_high_surrogate(before) {
            tail_start += 1;
        }
    }
    let tail_start_i = i64::try_from(tail_start).unwrap_or(i64::MAX);
    let mut out = Utf16Builder::new();
    out.push_js(&head);
    out.push_str(&omission_marker(tail_start - head_len));
    out.push_js(&text.slice_utf16(tail_start_i, None));
    Some(out.finish())
}

/// Replaces each round whose transcript exceeds `bound` by one user message
/// holding its head and tail: read back, it gives the round's transcript with
/// the middle cut out, and it still opens exactly one round.
fn bound_rounds<T: Text>(messages: Vec<Message<T>>, bound: usize) -> Vec<Message<T>> {
    let rounds = split_user_rounds(&messages);
    let mut out = Vec::with_capacity(messages.len());
    let mut messages = messages.into_iter();
    for round in rounds {
        let round_messages: Vec<Message<T>> = messages.by_ref().take(round.len()).collect();
        let mut text = Utf16Builder::new();
        let mut parts = Parts::new(&mut text);
        for m in &round_messages {
            push_message(&mut parts, m, SerializeOptions { reasoning: true });
        }
        let text = text.finish();
        let labelled = round_messages.first().is_some_and(Message::is_user)
            && text
                .code_units()
                .take(USER_LABEL.len())
                .eq(USER_LABEL.encode_utf16());
        let body = if labelled {
            text.slice_utf16(USER_LABEL.len() as i64, None)
        } else {
            text
        };
        match head_and_tail(&body, bound) {
            None => out.extend(round_messages),
            Some(excerpt) => out.push(Message::User(UserMessage {
                content: UserContent::Text(T::owned(excerpt)),
                timestamp: round_messages.first().and_then(Message::timestamp),
            })),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::js::json::parse;
    use crate::js::json::view::Val;
    use crate::transcript::llm_message::from_agent_messages;
    use crate::transcript::serialize::serialize;

    fn msgs(text: &str) -> Vec<Message> {
        let v = parse(text).unwrap();
        from_agent_messages(&Val::new(&v)).unwrap()
    }

    fn transcript(messages: &[Message]) -> String {
        serialize(messages, SerializeOptions::default()).to_string()
    }

    fn call(id: &str) -> String {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"{id}","name":"bash","arguments":{{"command":"ls"}}}}]}}"#
        )
    }

    fn result(id: &str, text: &str) -> String {
        format!(
            r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"bash","content":[{{"type":"text","text":"{text}"}}],"isError":false}}"#
        )
    }

    #[test]
    fn images_become_placeholders_everywhere() {
        let input = msgs(
            r#"[
            {"role":"user","content":[{"type":"text","text":"see "},{"type":"image","data":"SECRETBYTES","mimeType":"image/png"}]},
            {"role":"custom","customType":"c","content":[{"type":"image","data":"SECRETBYTES","mimeType":"image/png"}],"display":true},
            {"role":"assistant","content":[{"type":"toolCall","id":"s","name":"screenshot","arguments":{}}]},
            {"role":"toolResult","toolCallId":"s","toolName":"screenshot","content":[{"type":"image","data":"SECRETBYTES","mimeType":"image/png"}],"isError":false}
        ]"#,
        );
        let out = project(&input, &ProjectOptions::default());
        let text = transcript(&out);
        assert!(!text.contains("SECRETBYTES"));
        assert_eq!(
            text,
            "[User]: see [image]\n\n[User]: [image]\n\n[Assistant tool calls]: screenshot#s()\n\n[Tool result screenshot#s error=false]: [image]"
        );
        // Input untouched.
        assert!(
            matches!(&input[0], Message::User(u) if matches!(&u.content, UserContent::Blocks(b) if matches!(b[1], Block::Image{..})))
        );
    }

    #[test]
    fn empty_and_blank_tool_results_are_dropped() {
        let input = msgs(&format!(
            "[{},{},{},{}]",
            call("a"),
            result("a", ""),
            result("a", " \\n\\t"),
            r#"{"role":"toolResult","toolCallId":"a","toolName":"bash","content":[],"isError":true}"#
        ));
        let out = project(&input, &ProjectOptions::default());
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn orphaned_tool_results_are_dropped() {
        let input = msgs(&format!(
            "[{},{},{},{}]",
            result("early", "before its call"),
            call("early"),
            result("nobody", "no such call"),
            result("early", "ok")
        ));
        let out = project(&input, &ProjectOptions::default());
        assert_eq!(
            transcript(&out),
            "[Assistant tool calls]: bash#early(command=\"ls\")\n\n[Tool result bash#early error=false]: ok"
        );
    }

    #[test]
    fn results_whose_call_was_in_a_dropped_round_become_orphans() {
        let input = msgs(&format!(
            r#"[{{"role":"user","content":"one"}},{},{{"role":"user","content":"two"}},{}]"#,
            call("a"),
            result("a", "late")
        ));
        let out = project(
            &input,
            &ProjectOptions {
                drop_oldest_rounds: 1,
                ..ProjectOptions::default()
            },
        );
        assert_eq!(transcript(&out), "[User]: two");
    }

    #[test]
    fn only_the_newest_bodies_stay() {
        let mut items = vec![];
        for i in 0..5 {
            items.push(call(&format!("c{i}")));
            items.push(result(&format!("c{i}"), &format!("body{i}")));
        }
        // An invalid result does not use up a body slot.
        items.push(result("nobody", "orphan"));
        let input = msgs(&format!("[{}]", items.join(",")));
        let text = transcript(&project(&input, &ProjectOptions::default()));
        for i in 0..2 {
            assert!(!text.contains(&format!("body{i}")));
            assert!(text.contains(&format!(
                "[Tool result bash#c{i} error=false]: [tool result]"
            )));
        }
        for i in 2..5 {
            assert!(text.contains(&format!("[Tool result bash#c{i} error=false]: body{i}")));
        }
        for bodies in [1usize, 0] {
            let text = transcript(&project(
                &input,
                &ProjectOptions {
                    tool_result_bodies: bodies,
                    ..ProjectOptions::default()
                },
            ));
            let kept = (0..5)
                .filter(|i| text.contains(&format!("body{i}")))
                .count();
            assert_eq!(kept, bodies);
            assert_eq!(text.matches("[tool result]").count(), 5 - bodies);
        }
    }

    #[test]
    fn error_flags_survive_placeholders() {
        let input = msgs(&format!(
            r#"[{},{{"role":"toolResult","toolCallId":"x","toolName":"bash","content":[{{"type":"text","text":"fail"}}],"isError":true}}]"#,
            call("x")
        ));
        let out = project(
            &input,
            &ProjectOptions {
                tool_result_bodies: 0,
                ..ProjectOptions::default()
            },
        );
        assert!(transcript(&out).ends_with("[Tool result bash#x error=true]: [tool result]"));
    }

    #[test]
    fn reasoning_kept_or_dropped() {
        let input = msgs(
            r#"[{"role":"assistant","content":[{"type":"thinking","thinking":"why"},{"type":"thinking","thinking":"x","redacted":true},{"type":"text","text":"what"}]},
               {"role":"assistant","content":[{"type":"thinking","thinking":"only"}]}]"#,
        );
        let kept = project(&input, &ProjectOptions::default());
        assert_eq!(
            transcript(&kept),
            "[Assistant reasoning]: why\n\n[Assistant]: what\n\n[Assistant reasoning]: only"
        );
        let dropped = project(
            &input,
            &ProjectOptions {
                reasoning: false,
                ..ProjectOptions::default()
            },
        );
        assert_eq!(dropped.len(), 1);
        assert_eq!(transcript(&dropped), "[Assistant]: what");
    }

    #[test]
    fn project_each_borrows_what_it_keeps_and_makes_the_same_projection() {
        let input = msgs(&format!(
            r#"[{{"role":"user","content":"plain"}},
               {{"role":"user","content":[{{"type":"image","data":"B","mimeType":"image/png"}}]}},
               {{"role":"assistant","content":[{{"type":"thinking","thinking":"why"}},{{"type":"text","text":"all kept"}}]}},
               {{"role":"assistant","content":[{{"type":"thinking","thinking":"x","redacted":true}},{{"type":"text","text":"some"}}]}},
               {},{},{},{}]"#,
            call("a"),
            result("a", "old"),
            call("b"),
            result("b", "new")
        ));
        for reasoning in [true, false] {
            let options = ProjectOptions {
                tool_result_bodies: 1,
                reasoning,
                ..ProjectOptions::default()
            };
            let mut kinds = String::new();
            let mut messages = Vec::new();
            project_each(&input, &options, |m| {
                kinds.push(match m {
                    Projected::Kept(_) => 'k',
                    Projected::Made(_) => 'm',
                    Projected::Filtered { .. } => 'f',
                    Projected::BodyElided(_) => 'e',
                });
                messages.push(m.into_message());
            });
            assert_eq!(messages, project(&input, &options));
            // Without reasoning the first assistant message loses its thinking.
            assert_eq!(kinds, if reasoning { "kmkfkekk" } else { "kmffkekk" });
        }
        // A round bound needs the projection made: every message is.
        let bounded = ProjectOptions {
            round_bound: Some(5),
            ..ProjectOptions::default()
        };
        let mut messages = Vec::new();
        project_each(&input, &bounded, |m| {
            assert!(matches!(m, Projected::Made(_)));
            messages.push(m.into_message());
        });
        assert_eq!(messages, project(&input, &bounded));
    }

    #[test]
    fn claude_family_detection() {
        let s = |x: &str| Some(JsStr::from_str(x));
        assert!(is_claude_family(
            s("anthropic-messages").as_ref(),
            None,
            None
        ));
        assert!(is_claude_family(None, s("anthropic").as_ref(), None));
        assert!(is_claude_family(
            None,
            s("openrouter").as_ref(),
            s("anthropic/Claude-Sonnet-4").as_ref()
        ));
        assert!(!is_claude_family(
            s("openai-responses").as_ref(),
            s("openai").as_ref(),
            s("gpt-5").as_ref()
        ));
        assert!(!is_claude_family(None, None, None));
    }

    #[test]
    fn rounds_split_at_user_messages_with_a_leading_round() {
        let input = msgs(&format!(
            r#"[{},{{"role":"user","content":"a"}},{},{{"role":"bashExecution","command":"ls","output":"","exitCode":0}},{{"role":"user","content":"b"}}]"#,
            call("x"),
            call("y")
        ));
        assert_eq!(split_user_rounds(&input), vec![0..1, 1..3, 3..4, 4..5]);
        assert_eq!(split_user_rounds::<JsStr>(&[]), Vec::<Range<usize>>::new());
        let starts_with_user =
            msgs(r#"[{"role":"user","content":"a"},{"role":"user","content":"b"}]"#);
        assert_eq!(split_user_rounds(&starts_with_user), vec![0..1, 1..2]);
    }

    #[test]
    fn dropping_rounds_keeps_the_newest() {
        let input = msgs(&format!(
            r#"[{},{{"role":"user","content":"a"}},{{"role":"user","content":"b"}}]"#,
            call("x")
        ));
        let drop = |k| {
            transcript(&project(
                &input,
                &ProjectOptions {
                    drop_oldest_rounds: k,
                    ..ProjectOptions::default()
                },
            ))
        };
        assert!(drop(0).starts_with("[Assistant tool calls]"));
        assert_eq!(drop(1), "[User]: a\n\n[User]: b");
        assert_eq!(drop(2), "[User]: b");
        assert_eq!(drop(9), "[User]: b");
    }

    #[test]
    fn oversized_rounds_keep_head_and_tail() {
        let long = format!("{}{}", "h".repeat(500), "t".repeat(500));
        let input = msgs(&format!(
            r#"[{{"role":"user","content":"short"}},{{"role":"user","content":"{long}"}},{{"role":"assistant","content":[{{"type":"text","text":"END"}}]}}]"#
        ));
        let out = project(
            &input,
            &ProjectOptions {
                round_bound: Some(100),
                ..ProjectOptions::default()
            },
        );
        assert_eq!(out.len(), 2);
        let text = transcript(&out);
        // Round body: 1000 units of text, then "\n\n[Assistant]: END" (18).
        let omitted = 1018 - 100;
        let expected = format!(
            "[User]: short\n\n[User]: {}{}{}\n\n[Assistant]: END",
            "h".repeat(50),
            omission_marker(omitted),
            "t".repeat(32)
        );
        assert_eq!(text, expected);
        // Unbounded rounds and small ones are untouched.
        let same = project(
            &input,
            &ProjectOptions {
                round_bound: Some(5000),
                ..ProjectOptions::default()
            },
        );
        assert_eq!(same, project(&input, &ProjectOptions::default()));
    }

    #[test]
    fn head_and_tail_never_split_pairs() {
        let text = JsStr::from_string(format!("{}😀😀{}", "a".repeat(9), "b".repeat(9)));
        // len = 9 + 4 + 9 = 22; bound 20: head 10 would split the first emoji.
        let out = head_and_tail(&text, 20).unwrap();
        assert!(out.as_str().is_some(), "no lone surrogate");
        let s = out.to_string();
        assert!(s.starts_with(&"a".repeat(9)));
        assert!(s.contains("[... 2 characters"), "{s}");
        assert!(s.ends_with(&format!("😀{}", "b".repeat(9))));
        // Tail side: a cut inside the pair moves forward.
        let text = JsStr::from_string(format!("{}😀{}", "a".repeat(10), "b".repeat(9)));
        // len 21, bound 20: head 10, tail 10 starts at unit 11, inside the emoji.
        let out = head_and_tail(&text, 20).unwrap().to_string();
        assert!(out.contains("[... 2 characters"), "{out}");
        assert!(out.ends_with(&"b".repeat(9)));
        assert!(head_and_tail(&text, 21).is_none());
    }

    #[test]
    fn leading_round_without_user_is_bounded_too() {
        let input = msgs(&format!(
            r#"[{{"role":"assistant","content":[{{"type":"text","text":"{}"}}]}}]"#,
            "z".repeat(300)
        ));
        let out = project(
            &input,
            &ProjectOptions {
                round_bound: Some(40),
                ..ProjectOptions::default()
            },
        );
        let text = transcript(&out);
        assert!(text.starts_with("[User]: [Assistant]: zzz"));
        assert!(text.len() <= 8 + 40 + omission_marker(1000).len());
    }

    #[test]
    fn serialize_projection_writes_the_projection_transcript() {
        let input = msgs(&format!(
            r#"[{},{},
            {{"role":"user","content":[{{"type":"text","text":"see "}},{{"type":"image","data":"B","mimeType":"image/png"}}]}},
            {{"role":"assistant","content":[{{"type":"thinking","thinking":"why"}},{{"type":"thinking","thinking":""}},{{"type":"thinking","thinking":"x","redacted":true}},{{"type":"text","text":"what"}},{{"type":"toolCall","id":"b","name":"read","arguments":{{"path":"p","n":1}}}}]}},
            {{"role":"assistant","content":[{{"type":"thinking","thinking":"only"}}]}},
            {{"role":"assistant","content":[{{"type":"thinking","thinking":"gone","redacted":true}}]}},
            {},{},{},
            {{"role":"toolResult","toolCallId":"b","toolName":"read","content":[{{"type":"image","data":"B"}},{{"type":"text","text":"{}"}}],"isError":true}},
            {{"role":"user","content":"next"}},{},{},{}]"#,
            call("a"),
            result("a", "first"),
            result("b", " \\n "),
            result("nobody", "orphan"),
            result("b", "second"),
            "z".repeat(2500),
            call("c"),
            result("c", "third"),
            result("a", "answers a call in an older round"),
        ));
        for bodies in [0, 1, 2, 3, 9] {
            for drop_oldest_rounds in [0, 1, 2] {
                for reasoning in [true, false] {
                    for round_bound in [None, Some(60)] {
                        let options = ProjectOptions {
                            tool_result_bodies: bodies,
                            drop_oldest_rounds,
                            round_bound,
                            reasoning,
                        };
                        let mut out = Utf16Builder::new();
                        serialize_projection(&input, &options, &mut out);
                        assert_eq!(
                            out.finish().to_string(),
                            serialize(&project(&input, &options), SerializeOptions { reasoning })
                                .to_string(),
                            "{options:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn projection_is_repeatable_and_does_not_change_input() {
        let input = msgs(&format!("[{},{}]", call("a"), result("a", "x")));
        let before = input.clone();
        let a = project(&input, &ProjectOptions::for_attempt(2, false, 10));
        let b = project(&input, &ProjectOptions::for_attempt(2, false, 10));
        assert_eq!(a, b);
        assert_eq!(input, before);
        assert_eq!(
            ProjectOptions::for_attempt(1, true, 7).tool_result_bodies,
            1
        );
        assert_eq!(
            ProjectOptions::for_attempt(2, true, 7).drop_oldest_rounds,
            2
        );
        assert_eq!(ProjectOptions::for_attempt(0, true, 7).round_bound, None);
    }
}
