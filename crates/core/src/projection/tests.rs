use std::ops::Range;

use super::round_bound::{head_and_tail, omission_marker};
use super::rounds::split_user_rounds;
use super::*;
use crate::js::json::parse;
use crate::js::json::view::Val;
use crate::js::string::Utf16Builder;
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
    let starts_with_user = msgs(r#"[{"role":"user","content":"a"},{"role":"user","content":"b"}]"#);
    assert_eq!(split_user_rounds(&starts_with_user), vec![0..1, 1..2]);
}

/// The transcript of `input` with its `k` oldest rounds dropped.
fn dropped(input: &[Message], k: usize) -> String {
    transcript(&project(
        input,
        &ProjectOptions {
            drop_oldest_rounds: k,
            ..ProjectOptions::default()
        },
    ))
}

#[test]
fn dropping_rounds_keeps_the_newest() {
    let input = msgs(&format!(
        r#"[{},{{"role":"user","content":"a"}},{{"role":"user","content":"b"}}]"#,
        call("x")
    ));
    // The leading tool call is no complete user round: it goes with the
    // oldest one, or alone when only the newest would be left.
    assert!(dropped(&input, 0).starts_with("[Assistant tool calls]"));
    assert_eq!(dropped(&input, 1), "[User]: b");
    assert_eq!(dropped(&input, 2), "[User]: b");
    assert_eq!(dropped(&input, 9), "[User]: b");
    let one_round = msgs(&format!(
        r#"[{},{{"role":"user","content":"a"}}]"#,
        call("x")
    ));
    assert!(dropped(&one_round, 0).starts_with("[Assistant tool calls]"));
    assert_eq!(dropped(&one_round, 1), "[User]: a");
    let no_user = msgs(&format!("[{}]", call("x")));
    assert_eq!(first_kept(&no_user, 2), 0);
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
fn leading_round_without_user_is_bounded_as_the_assistants() {
    // The rest of a turn an earlier compaction split: nothing in it is the
    // user's, so its excerpt is an assistant's text (whose label is the
    // group's own when it opens with text).
    let bounded = |json: &str| {
        let out = project(
            &msgs(json),
            &ProjectOptions {
                round_bound: Some(40),
                ..ProjectOptions::default()
            },
        );
        assert!(matches!(out.as_slice(), [Message::Assistant(_)]), "{out:?}");
        transcript(&out)
    };
    let text = bounded(&format!(
        r#"[{{"role":"assistant","content":[{{"type":"text","text":"{}"}}]}}]"#,
        "z".repeat(300)
    ));
    assert!(text.starts_with("[Assistant]: zzz"), "{text}");
    assert!(text.len() <= "[Assistant]: ".len() + 40 + omission_marker(1000).len());
    let text = bounded(&format!(
        r#"[{{"role":"assistant","content":[{{"type":"toolCall","id":"c","name":"read","arguments":{{"path":"{}"}}}}]}},
            {{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{{"type":"text","text":"{}"}}],"isError":false}}]"#,
        "p".repeat(100),
        "r".repeat(300)
    ));
    assert!(
        text.starts_with("[Assistant]: [Assistant tool call"),
        "{text}"
    );
    assert!(!text.contains("[User]"), "{text}");
    assert!(text.ends_with("rrrr"), "{text}");
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
    let options = ProjectOptions {
        tool_result_bodies: 0,
        drop_oldest_rounds: 2,
        round_bound: Some(10),
        reasoning: false,
    };
    let a = project(&input, &options);
    let b = project(&input, &options);
    assert_eq!(a, b);
    assert_eq!(input, before);
}
