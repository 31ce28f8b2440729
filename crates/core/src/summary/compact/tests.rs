use super::*;
use crate::agent_line::AgentLine;
use crate::js::json::parse;
use crate::js::json::view::Val;
use crate::summary::message_transcript::MessageTranscript;
use crate::transcript::llm_message::from_agent_messages;

/// Renders its shrink level, so tests can see what each retry asked for,
/// padded to a length per level (shorter at each by default).
struct Fake(&'static str, [usize; 3]);

const SHRINKING: [usize; 3] = [100, 50, 25];

impl Transcript for Fake {
    fn render(&self, s: &Shrink) -> JsStr {
        JsStr::from_string(format!(
            "{} drop={} bodies={} bound={:?}{}",
            self.0,
            s.drop_rounds,
            s.tool_result_bodies,
            s.round_bound.map(|_| "Some"),
            "#".repeat(self.1[s.drop_rounds.min(2)])
        ))
    }
}

/// Answers from a script and records every request.
struct Scripted {
    answers: Vec<Response>,
    seen: Vec<Request>,
}

impl Llm for Scripted {
    fn complete(&mut self, request: &Request) -> Result<Response> {
        self.seen.push(request.clone());
        if self.answers.is_empty() {
            return Err(Error::invalid("script ran out"));
        }
        Ok(self.answers.remove(0))
    }
}

fn text(t: &str) -> Response {
    Response {
        stop: Stop::Finished,
        error_message: None,
        texts: vec![JsStr::from_str(t)],
        has_tool_call: false,
        usage: AnswerUsage::default(),
    }
}

/// An error answer; "" stands for a falsy `errorMessage`.
fn error(message: &str) -> Response {
    Response {
        stop: Stop::Error,
        error_message: (!message.is_empty()).then(|| message.into()),
        texts: vec![],
        has_tool_call: false,
        usage: AnswerUsage::default(),
    }
}

fn input(split: bool, previous: Option<&str>, custom: Option<&str>) -> JobInput<Fake> {
    JobInput {
        line: &AgentLine::V0_78,
        wants_reasoning: false,
        history: Fake("HISTORY", SHRINKING),
        history_is_empty: false,
        turn_prefix: split.then_some(Fake("PREFIX", SHRINKING)),
        previous_summary: previous.map(JsStr::from_str),
        custom_instructions: custom.map(JsStr::from_str),
        reserve_tokens: 16384.0,
        limits: ModelLimits {
            max_tokens: 8192.0,
            context_window: 200_000.0,
        },
        read_files: vec![JsStr::from_str("a.ts")],
        modified_files: vec![],
        branch: None,
    }
}

/// Each request's part and shrink step.
fn levels(seen: &[Request]) -> Vec<(Part, u8)> {
    seen.iter().map(|r| (r.part, r.attempt)).collect()
}

/// The history's first try and a retry at `step`, then the prefix's first
/// try and its retry at step 2.
fn history_then_prefix(step: u8) -> [(Part, u8); 4] {
    [
        (Part::History, 0),
        (Part::History, step),
        (Part::TurnPrefix, 0),
        (Part::TurnPrefix, 2),
    ]
}

fn go(input: JobInput<Fake>, answers: Vec<Response>) -> (Result<JsStr>, Vec<Request>) {
    let mut job = Job::new(input);
    let mut llm = Scripted {
        answers,
        seen: vec![],
    };
    let out = run(&mut job, &mut llm);
    (out, llm.seen)
}

fn prompt(r: &Request) -> String {
    r.prompt.to_string()
}

#[test]
fn one_request_then_file_lists() {
    let (out, seen) = go(input(false, None, None), vec![text("## Goal\nx")]);
    assert_eq!(
        out.ok().map(|s| s.to_string()).as_deref(),
        Some("## Goal\nx\n\n<read-files>\na.ts\n</read-files>")
    );
    assert_eq!(seen.len(), 1);
    let p = prompt(&seen[0]);
    assert!(
        p.starts_with("<conversation>\nHISTORY drop=0 bodies=3 bound=None###")
            && p.contains("###\n</conversation>\n\n")
    );
    assert!(p.contains("## Reasoning Digest") && !p.contains("<previous-summary>"));
    // min(floor(0.8 * 16384), 8192)
    assert_eq!(seen[0].max_tokens, Some(8192.0));
    assert_eq!(
        seen[0].option_keys,
        ["maxTokens", "signal", "apiKey", "headers"]
    );
}

#[test]
fn update_mode_carries_the_previous_summary() {
    let (_, seen) = go(input(false, Some("OLD SUMMARY"), None), vec![text("new")]);
    let p = prompt(&seen[0]);
    assert!(
        p.contains("</conversation>\n\n<previous-summary>\nOLD SUMMARY\n</previous-summary>\n\n")
    );
    assert!(p.contains("NEW work"));
}

#[test]
fn split_turn_asks_twice_in_order_with_instructions_in_both() {
    let (out, seen) = go(
        input(true, None, Some("keep the migration command")),
        vec![text("H"), text("P")],
    );
    assert_eq!(
        seen.iter().map(|r| r.part).collect::<Vec<_>>(),
        [Part::History, Part::TurnPrefix]
    );
    assert!(seen
        .iter()
        .all(|r| prompt(r).contains("keep the migration command")));
    assert!(
        prompt(&seen[1]).contains("PREFIX") && prompt(&seen[1]).contains("## Original Request")
    );
    // floor(0.5 * 16384)
    assert_eq!(seen[1].max_tokens, Some(8192.0));
    let summary = out.ok().map(|s| s.to_string()).unwrap_or_default();
    assert!(summary.starts_with("H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>"));
}

#[test]
fn split_turn_without_history_uses_the_previous_summary() {
    let mut i = input(true, Some("EARLIER"), None);
    i.history_is_empty = true;
    let (out, seen) = go(i, vec![text("P")]);
    assert_eq!(seen.len(), 1);
    assert!(out.is_ok_and(|s| s.to_string().starts_with("EARLIER\n\n---\n\n")));
    let mut i = input(true, None, None);
    i.history_is_empty = true;
    let (out, _) = go(i, vec![text("P")]);
    assert!(out.is_ok_and(|s| s.to_string().starts_with("No prior history.\n\n---")));
}

#[test]
fn overflow_retries_shrink_and_stop_after_two() {
    let overflow = "prompt is too long: 250000 tokens > 200000 maximum";
    let (out, seen) = go(input(false, None, None), vec![error(overflow), text("ok")]);
    assert!(out.is_ok());
    assert!(prompt(&seen[1]).contains("drop=1 bodies=1 bound=Some(\"Some\")"));
    let (out, seen) = go(
        input(false, None, None),
        vec![error(overflow), error(overflow), text("ok")],
    );
    assert!(out.is_ok());
    assert!(prompt(&seen[2]).contains("drop=2 bodies=0 bound=Some(\"Some\")"));
    let (out, seen) = go(
        input(false, None, None),
        vec![
            error(overflow),
            error(overflow),
            error(overflow),
            text("never"),
        ],
    );
    assert_eq!(seen.len(), 3);
    assert!(out.is_err_and(|e| e.message.to_string().contains("after 2 smaller retries")));
}

#[test]
fn a_split_turn_shares_the_two_retries_between_its_requests() {
    let overflow = "prompt is too long: 250000 tokens > 200000 maximum";
    // The history needed one retry: the prefix starts whole, and has one
    // left, the compaction's second (the step after the history's).
    let (out, seen) = go(
        input(true, None, None),
        vec![error(overflow), text("H"), error(overflow), text("P")],
    );
    assert!(out.is_ok());
    assert_eq!(levels(&seen), history_then_prefix(1));
    assert!(prompt(&seen[3]).contains("PREFIX drop=2 bodies=0"));
    // No retry from the history: the prefix's retry is the compaction's first.
    let (_, seen) = go(
        input(true, None, None),
        vec![text("H"), error(overflow), text("P")],
    );
    assert_eq!((seen[2].part, seen[2].attempt), (Part::TurnPrefix, 1));
    let (out, seen) = go(
        input(true, None, None),
        vec![
            error(overflow),
            text("H"),
            error(overflow),
            error(overflow),
            text("never"),
        ],
    );
    assert_eq!(seen.len(), 4);
    assert!(out.is_err_and(|e| e.message.to_string().contains("after 2 smaller retries")));
    // Both retries spent on the history: the prefix's first overflow is final.
    let (out, seen) = go(
        input(true, None, None),
        vec![
            error(overflow),
            error(overflow),
            text("H"),
            error(overflow),
            text("never"),
        ],
    );
    assert_eq!(seen.len(), 4);
    assert_eq!((seen[3].part, seen[3].attempt), (Part::TurnPrefix, 0));
    assert!(out.is_err());
}

#[test]
fn a_length_stop_with_no_output_and_a_full_window_is_an_overflow() {
    // The model's window (input()'s limits) is 200,000 tokens.
    let full = |input: f64, cache_read: f64, output: f64| Response {
        stop: Stop::Length,
        usage: AnswerUsage {
            input: Some(input),
            cache_read: Some(cache_read),
            output: Some(output),
        },
        ..text("")
    };
    let (out, seen) = go(
        input(false, None, None),
        vec![full(150_000.0, 48_000.0, 0.0), text("ok")],
    );
    assert!(out.is_ok());
    assert_eq!(seen[1].attempt, 1);
    let (out, seen) = go(
        input(false, None, None),
        vec![
            full(198_000.0, 0.0, 0.0),
            full(199_000.0, 0.0, 0.0),
            full(200_000.0, 0.0, 0.0),
        ],
    );
    assert_eq!(seen.len(), 3);
    assert_eq!(
        out.err().map(|e| e.message.to_string()).as_deref(),
        Some("Summarization failed: the request still overflows the model's context after 2 smaller retries: the model stopped with no output, its context full (200000 of 200000 tokens)")
    );
    // Some output, or an input short of 99% of the window: a summary cut short.
    for answer in [full(199_000.0, 0.0, 1.0), full(197_999.0, 0.0, 0.0)] {
        let (out, seen) = go(input(false, None, None), vec![answer]);
        assert_eq!(seen.len(), 1);
        assert!(out.is_err_and(|e| e.message.to_string().contains("incomplete")));
    }
}

#[test]
fn other_failures_reject_without_retry() {
    let (out, seen) = go(input(false, None, None), vec![error("Invalid API key")]);
    assert_eq!(seen.len(), 1);
    assert_eq!(
        out.err().map(|e| e.message.to_string()).as_deref(),
        Some("Summarization failed: Invalid API key")
    );
    let length = Response {
        stop: Stop::Length,
        ..text("cut")
    };
    assert!(go(input(false, None, None), vec![length])
        .0
        .is_err_and(|e| e.message.to_string().contains("incomplete")));
    let tool = Response {
        has_tool_call: true,
        ..text("")
    };
    assert!(go(input(false, None, None), vec![tool])
        .0
        .is_err_and(|e| e.message.to_string().contains("tool call")));
    let aborted = Response {
        stop: Stop::Aborted,
        ..text("")
    };
    assert!(go(input(false, None, None), vec![aborted])
        .0
        .is_err_and(|e| e.message.to_string().contains("aborted")));
    let (out, _) = go(input(true, None, None), vec![text("H"), error("")]);
    assert_eq!(
        out.err().map(|e| e.message.to_string()).as_deref(),
        Some("Turn prefix summarization failed: Unknown error")
    );
}

#[test]
fn an_answer_without_text_rejects_each_part() {
    let none = Response {
        texts: vec![],
        ..text("")
    };
    let blank = Response {
        texts: vec![JsStr::from_str(" \n\u{a0}"), JsStr::from_str("\t\u{feff}")],
        ..text("")
    };
    for answer in [text(""), none, blank] {
        let (out, seen) = go(input(false, None, None), vec![answer.clone()]);
        assert_eq!(seen.len(), 1);
        assert_eq!(
            out.err().map(|e| e.message.to_string()).as_deref(),
            Some("Summarization failed: the model's answer has no text")
        );
        let (out, seen) = go(input(true, None, None), vec![text("H"), answer]);
        assert_eq!(seen.len(), 2);
        assert_eq!(
            out.err().map(|e| e.message.to_string()).as_deref(),
            Some("Turn prefix summarization failed: the model's answer has no text")
        );
    }
    // One character that is not whitespace is a summary.
    assert!(go(input(false, None, None), vec![text(" x ")]).0.is_ok());
}

#[test]
fn branch_summaries_open_with_the_preamble_and_may_replace_instructions() {
    let mut i = input(false, None, Some("ONLY THIS"));
    i.branch = Some(BranchOptions {
        replace_instructions: true,
    });
    let (out, seen) = go(i, vec![text("B")]);
    assert_eq!(seen[0].part, Part::Branch);
    assert!(prompt(&seen[0]).ends_with("</conversation>\n\nONLY THIS"));
    let summary = out.ok().map(|s| s.to_string()).unwrap_or_default();
    assert_eq!(
        summary,
        format!(
            "{}B\n\n<read-files>\na.ts\n</read-files>",
            prompts::BRANCH_SUMMARY_PREAMBLE
        )
    );
    let mut i = input(false, None, Some("ALSO THIS"));
    i.branch = Some(BranchOptions {
        replace_instructions: false,
    });
    let (_, seen) = go(i, vec![text("B")]);
    assert!(
        prompt(&seen[0]).contains("## Reasoning Digest") && prompt(&seen[0]).contains("ALSO THIS")
    );
    let (out, _) = go(input(true, None, None), vec![text("H"), error("")]);
    assert_eq!(
        out.err().map(|e| e.message.to_string()).as_deref(),
        Some("Turn prefix summarization failed: Unknown error")
    );
}

fn input_1_6(split: bool, previous: Option<&str>) -> JobInput<Fake> {
    JobInput {
        line: &AgentLine::V1_6,
        wants_reasoning: true,
        ..input(split, previous, None)
    }
}

#[test]
fn the_1_6_line_sends_no_max_tokens_and_its_own_option_keys() {
    let (_, seen) = go(input_1_6(true, None), vec![text("H"), text("P")]);
    for r in &seen {
        assert_eq!(r.max_tokens, None);
        assert_eq!(
            r.option_keys,
            [
                "signal",
                "apiKey",
                "headers",
                "env",
                "sessionId",
                "reasoning"
            ]
        );
    }
    let mut i = input_1_6(false, None);
    i.branch = Some(BranchOptions {
        replace_instructions: false,
    });
    let (_, seen) = go(i, vec![text("B")]);
    assert_eq!(
        seen[0].option_keys,
        ["apiKey", "headers", "env", "signal", "reasoning"]
    );
}

#[test]
fn the_1_6_line_words_failures_as_1_6_does() {
    let failure =
        |i: JobInput<Fake>, answers| go(i, answers).0.err().map(|e| e.message.to_string());
    let length = Response {
        stop: Stop::Length,
        ..text("cut")
    };
    assert_eq!(
        failure(input_1_6(false, None), vec![length]).as_deref(),
        Some("Summarization failed: generation hit the token cap and the summary is incomplete")
    );
    let tool = Response {
        has_tool_call: true,
        ..text("")
    };
    assert_eq!(
        failure(input_1_6(true, None), vec![text("H"), tool]).as_deref(),
        Some("Turn prefix summarization attempted to call a tool")
    );
    let mut branch = input_1_6(false, None);
    branch.branch = Some(BranchOptions {
        replace_instructions: false,
    });
    assert_eq!(
        failure(branch, vec![error("")]).as_deref(),
        Some("Branch summarization failed: Unknown error")
    );
}

#[test]
fn an_empty_previous_summary_stands_in_1_6_only() {
    for (line_1_6, want) in [(false, "No prior history.\n\n---"), (true, "\n\n---")] {
        let mut i = if line_1_6 {
            input_1_6(true, Some(""))
        } else {
            input(true, Some(""), None)
        };
        i.history_is_empty = true;
        let (out, seen) = go(i, vec![text("P")]);
        assert_eq!(seen.len(), 1);
        assert!(out.is_ok_and(|s| s.to_string().starts_with(want)));
    }
}

#[test]
fn accepted_answers_name_their_parts() {
    let overflow = "prompt is too long: 250000 tokens > 200000 maximum";
    let mut job = Job::new(input(true, None, None));
    assert_eq!(job.on_response(&error(overflow)).ok(), Some(false));
    assert_eq!(job.on_response(&text("H")).ok(), Some(true));
    assert_eq!(job.on_response(&text("P")).ok(), Some(true));
    assert_eq!(job.answered(), [Part::History, Part::TurnPrefix]);
}

#[test]
fn a_retry_is_sent_only_when_it_is_smaller() {
    let overflow = "prompt is too long: 250000 tokens > 200000 maximum";
    let with = |history: [usize; 3]| JobInput {
        history: Fake("HISTORY", history),
        ..input(false, None, None)
    };
    // Nothing can be left out: no retry, the overflow fails at once.
    let (out, seen) = go(with([40, 40, 40]), vec![error(overflow), text("never")]);
    assert_eq!(seen.len(), 1);
    let message = out.err().map(|e| e.message.to_string()).unwrap_or_default();
    assert!(
        message.contains(
            "overflows the model's context and cannot be made smaller: prompt is too long"
        ),
        "{message}"
    );
    // Retry 1 would be larger (placeholders longer than short bodies); retry 2 is smaller.
    let (out, seen) = go(with([40, 45, 30]), vec![error(overflow), text("ok")]);
    assert!(out.is_ok());
    assert_eq!(seen.iter().map(|r| r.attempt).collect::<Vec<_>>(), [0, 2]);
    let (out, seen) = go(
        with([40, 45, 30]),
        vec![error(overflow), error(overflow), text("never")],
    );
    assert_eq!(seen.len(), 2);
    let message = out.err().map(|e| e.message.to_string()).unwrap_or_default();
    assert!(
        message.contains("after 1 smaller retry, and cannot be made smaller: "),
        "{message}"
    );
    // Each retry smaller than the request before it, not only the first.
    let (_, seen) = go(
        with([40, 30, 30]),
        vec![error(overflow), error(overflow), text("never")],
    );
    assert_eq!(seen.iter().map(|r| r.attempt).collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn a_prefix_may_take_step_two_when_the_history_skipped_to_it() {
    let overflow = "prompt is too long: 250000 tokens > 200000 maximum";
    // The history's step 1 is no smaller: its one retry goes out at step 2.
    // The prefix (smaller at each step) still has the compaction's second.
    let split = || JobInput {
        history: Fake("HISTORY", [40, 45, 30]),
        ..input(true, None, None)
    };
    let (out, seen) = go(
        split(),
        vec![error(overflow), text("H"), error(overflow), text("P")],
    );
    assert!(out.is_ok());
    assert_eq!(levels(&seen), history_then_prefix(2));
    // The failures say whose retries they were.
    let message = |answers| {
        go(split(), answers)
            .0
            .err()
            .map(|e| e.message.to_string())
            .unwrap_or_default()
    };
    let m = message(vec![
        error(overflow),
        text("H"),
        error(overflow),
        error(overflow),
    ]);
    assert!(
        m.contains("still overflows the model's context after 2 smaller retries: "),
        "{m}"
    );
    let m = message(vec![error(overflow), error(overflow)]);
    assert!(m.contains("still overflows the model's context after 1 smaller retry, and cannot be made smaller: "), "{m}");
    let m = go(
        input(true, None, None),
        vec![error(overflow), error(overflow), text("H"), error(overflow)],
    )
    .0
    .err()
    .map(|e| e.message.to_string())
    .unwrap_or_default();
    assert!(m.starts_with("Turn prefix summarization failed: the request overflows the model's context, and the compaction's 2 smaller retries are spent: "), "{m}");
}

/// A transcript of the agent messages in `json`.
fn transcript_of(json: &str) -> MessageTranscript {
    let value = parse(json).unwrap();
    MessageTranscript {
        messages: from_agent_messages(&Val::new(&value)).unwrap(),
        reasoning: false,
    }
}

/// A user round of `n` units of `x`, answered.
fn long_round(n: usize) -> String {
    format!(
        r#"{{"role":"user","content":"{}"}},{{"role":"assistant","content":[{{"type":"text","text":"done"}}]}}"#,
        "x".repeat(n)
    )
}

/// A job on `history` (and `prefix`, a split turn's) under a 1M-token window.
fn job_1m(history: MessageTranscript, prefix: Option<MessageTranscript>) -> Job<MessageTranscript> {
    Job::new(JobInput {
        line: &AgentLine::V0_78,
        wants_reasoning: false,
        history,
        history_is_empty: false,
        turn_prefix: prefix,
        previous_summary: None,
        custom_instructions: None,
        reserve_tokens: 16384.0,
        limits: ModelLimits {
            max_tokens: 8192.0,
            context_window: 1_000_000.0,
        },
        read_files: vec![],
        modified_files: vec![],
        branch: None,
    })
}

const SERVER_OVERFLOW: &str = "the request exceeds the available context size, try increasing it";

#[test]
fn one_round_that_fits_the_declared_window_is_still_bounded_on_overflow() {
    // One user round of 400,000 units: under a 1M window's bound, but the
    // server (run with a smaller window) reports an overflow.
    let mut job = job_1m(transcript_of(&format!("[{}]", long_round(400_000))), None);
    let mut llm = Scripted {
        answers: vec![error(SERVER_OVERFLOW), error(SERVER_OVERFLOW), text("ok")],
        seen: vec![],
    };
    assert!(run(&mut job, &mut llm).is_ok());
    let lengths: Vec<usize> = llm.seen.iter().map(|r| r.prompt.utf16_len()).collect();
    // Half, then a quarter, of the round, each around the omission marker.
    assert_eq!(lengths.len(), 3);
    assert!(lengths[0] > 400_000, "{lengths:?}");
    assert!(
        (200_000..201_000).contains(&(lengths[1] - (lengths[0] - 400_000))),
        "{lengths:?}"
    );
    assert!(
        (100_000..101_000).contains(&(lengths[2] - (lengths[0] - 400_000))),
        "{lengths:?}"
    );
    assert!(prompt(&llm.seen[1]).contains(" characters of this round omitted ...]"));
}

#[test]
fn a_split_turns_prefix_is_bounded_by_its_own_whole_length() {
    // The history's three short rounds; the prefix, one long round: the
    // prefix's bound is a share of the prefix, not of the history.
    let history = [long_round(6_000), long_round(6_000), long_round(6_000)].join(",");
    let mut job = job_1m(
        transcript_of(&format!("[{history}]")),
        Some(transcript_of(&format!("[{}]", long_round(400_000)))),
    );
    // The history retried once (its length taken first), then the prefix at step 2.
    let mut llm = Scripted {
        answers: vec![
            error(SERVER_OVERFLOW),
            text("H"),
            error(SERVER_OVERFLOW),
            text("P"),
        ],
        seen: vec![],
    };
    assert!(run(&mut job, &mut llm).is_ok());
    assert_eq!(levels(&llm.seen), history_then_prefix(1));
    let prefix: Vec<usize> = (llm.seen.iter().skip(2))
        .map(|r| r.prompt.utf16_len())
        .collect();
    // A quarter of the prefix's round, not of the history's length.
    assert!(prefix[0] > 400_000, "{prefix:?}");
    assert!(
        (100_000..101_500).contains(&(prefix[1] - (prefix[0] - 400_000))),
        "{prefix:?}"
    );
}
