#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::agent_line::AgentLine;
use crate::boundary_codes::entry_facts as measure;
use crate::error::ErrorKind;
use crate::js::json::view::Val;
use crate::js::json::{parse, Value};
use crate::js::view::View;
use crate::session::model::{KIND_OTHER_ROLE, KIND_ROLE_BASE, ROLE_NAMES};
use crate::tokens::estimate::{context_tokens, valid_assistant_usage, Counter};
use crate::tokens::projected::{context_estimate, MessageArray};

#[test]
fn usage_tokens_are_the_usage_the_estimate_reads() {
    let numbers = [0.0, -0.0, 1.0, -5.0, 120.5, f64::NAN, 1e300];
    for line in [AgentLine::V0_78, AgentLine::V1_6] {
        for &total in &numbers {
            for &input in &numbers {
                for &output in &[0.0, 20.0, f64::NAN] {
                    let json = |n: f64| {
                        if n.is_nan() {
                            "null".to_string()
                        } else {
                            format!("{n:?}")
                        }
                    };
                    // NaN is not JSON: a missing field reads as undefined, which sums to NaN too.
                    let field = |name: &str, n: f64| {
                        if n.is_nan() {
                            String::new()
                        } else {
                            format!(r#","{name}":{}"#, json(n))
                        }
                    };
                    let text = format!(
                        r#"{{"role":"assistant","stopReason":"stop","usage":{{"cacheRead":3,"cacheWrite":4{}{}{}}}}}"#,
                        field("totalTokens", total),
                        field("input", input),
                        field("output", output),
                    );
                    let message = parse(&text).unwrap();
                    let read = valid_assistant_usage(&Val::new(&message), &line.tokens)
                        .unwrap()
                        .map(|u| context_tokens(&u).unwrap());
                    let ahead = usage_tokens(total, [input, output, 3.0, 4.0], &line.tokens);
                    assert_eq!(
                        read.map(f64::to_bits),
                        ahead.map(f64::to_bits),
                        "{text} ({:?})",
                        line.tokens
                    );
                }
            }
        }
    }
}

/// The chunk lib/context-facts.js makes of `messages[from..to]` (its reads
/// of a JSON value: roles, usages of numbers, measures of contents).
struct Chunk {
    to: usize,
    roles: Vec<u8>,
    usages: Vec<u8>,
    values: Vec<f64>,
    at: Vec<u32>,
    forms: Vec<u8>,
    counts: Vec<u32>,
    blocks: Vec<u8>,
    lengths: Vec<u32>,
}

impl Chunk {
    fn read(messages: &Value, from: usize, to: usize) -> Chunk {
        let mut c = Chunk {
            to,
            roles: vec![],
            usages: vec![],
            values: vec![],
            at: vec![],
            forms: vec![],
            counts: vec![],
            blocks: vec![],
            lengths: vec![],
        };
        let len = |v: Option<&Value>| v.and_then(Value::as_js_str).map(|s| s.len() as u32);
        for k in (from..to).rev() {
            let m = messages.at(k).unwrap();
            let role = m.get("role").and_then(Value::as_str);
            c.roles.push(match role {
                Some(r) => ROLE_NAMES
                    .iter()
                    .position(|n| *n == r)
                    .map_or(KIND_OTHER_ROLE, |i| KIND_ROLE_BASE + i as u8),
                None => 0,
            });
            let mut usage = 0;
            let mut values = [0.0; 5];
            if role == Some("assistant") {
                let stop = match m.get("stopReason").and_then(Value::as_str) {
                    Some("aborted") => code::STOP_ABORTED,
                    Some("error") => code::STOP_ERROR,
                    _ => code::STOP_OTHER,
                };
                usage = match m.get("usage") {
                    None | Some(Value::Null) => stop | code::USAGE_NULLISH,
                    Some(u) => {
                        let keys = ["totalTokens", "input", "output", "cacheRead", "cacheWrite"];
                        let numbers: Vec<f64> = keys
                            .iter()
                            .filter_map(|k| u.get(k).and_then(Value::as_f64))
                            .collect();
                        if numbers.len() == 5 {
                            values.copy_from_slice(&numbers);
                            stop | code::USAGE_NUMBERS
                        } else {
                            0
                        }
                    }
                };
            }
            c.usages.push(usage);
            if usage & code::USAGE_NUMBERS != 0 {
                c.values.extend(values);
            }
            c.at.push(k as u32);
            let (form, count) = match m.get("content") {
                Some(Value::String(s)) => {
                    c.lengths.push(s.len() as u32);
                    (measure::MEASURE_TEXT, 0)
                }
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => {
                                c.blocks.push(measure::BLOCK_TEXT);
                                c.lengths.push(len(b.get("text")).unwrap());
                            }
                            Some("toolCall") => {
                                c.blocks.push(measure::BLOCK_TOOL_CALL);
                                c.lengths.push(len(b.get("name")).unwrap());
                                c.lengths
                                    .push(b.get("arguments").unwrap().json_len() as u32);
                            }
                            Some("image") => c.blocks.push(measure::BLOCK_IMAGE),
                            _ => c.blocks.push(measure::BLOCK_OTHER),
                        }
                    }
                    (measure::MEASURE_BLOCKS, blocks.len() as u32)
                }
                _ => (measure::MEASURE_NOT_READ, 0),
            };
            c.forms.push(form);
            c.counts.push(count);
        }
        c
    }

    fn view(&self) -> ContextChunk<'_> {
        ContextChunk {
            to: self.to,
            roles: &self.roles,
            usages: &self.usages,
            values: &self.values,
            measures: MeasuresChunk {
                at: &self.at,
                forms: &self.forms,
                counts: &self.counts,
                blocks: &self.blocks,
                lengths: &self.lengths,
            },
        }
    }
}

/// `n` messages, the only usage that counts at `at`.
fn messages(n: usize, at: Option<usize>) -> Value {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(match i % 3 {
            0 => format!(r#"{{"role":"user","content":"question {i}"}}"#),
            1 => {
                let (stop, total) = if Some(i) == at { ("toolUse", 500 + i) } else { ("error", 0) };
                format!(
                    r#"{{"role":"assistant","stopReason":"{stop}","content":[{{"type":"text","text":"a{i}"}},{{"type":"toolCall","name":"read","arguments":{{"path":"f{i}"}}}}],"usage":{{"totalTokens":{total},"input":1,"output":2,"cacheRead":0,"cacheWrite":0}}}}"#
                )
            }
            _ => format!(r#"{{"role":"toolResult","content":[{{"type":"text","text":"r{i}"}},{{"type":"image"}}]}}"#),
        });
    }
    parse(&format!("[{}]", out.join(","))).unwrap()
}

/// The estimate with facts asked for and read as the JS pass reads them.
fn with_facts(
    value: &Value,
    line: &AgentLine,
) -> (crate::tokens::estimate::ContextEstimate, usize) {
    let val = Val::new(value);
    let len = val.array_len().unwrap();
    let mut facts = ContextFacts::new(len);
    let mut reads_from = len.saturating_sub(16);
    let mut asks = 0;
    loop {
        let list = FactsList::new(MessageArray::new(&val).unwrap(), &facts, reads_from);
        match context_estimate(&list, Counter::Estimate, &line.tokens) {
            Ok(est) => return (est, asks),
            Err(err) => {
                assert_eq!(err.kind, ErrorKind::FactsWanted);
                let (k, to) = list.wanted().unwrap();
                let from = k.min(to.saturating_sub(256.max(3 * (len - to))));
                asks += 1;
                facts.push(&Chunk::read(value, from, to).view()).unwrap();
                reads_from = facts.from();
            }
        }
    }
}

#[test]
fn an_estimate_with_facts_is_the_estimate_without() {
    for line in [AgentLine::V0_78, AgentLine::V1_6] {
        for (n, at, asks) in [
            (0, None, 0),
            (10, None, 0),
            (40, Some(37), 0),
            (40, Some(1), 1),
            (40, None, 1),
            (1000, None, 2),
            (1000, Some(4), 2),
            (1000, Some(700), 2),
            (1000, Some(760), 1),
        ] {
            let value = messages(n, at);
            let native = context_estimate(
                &MessageArray::new(&Val::new(&value)).unwrap(),
                Counter::Estimate,
                &line.tokens,
            )
            .unwrap();
            let (ahead, asked) = with_facts(&value, &line);
            assert_eq!(ahead, native, "{n} {at:?}");
            assert_eq!(asked, asks, "{n} {at:?}");
        }
    }
}

#[test]
fn a_malformed_chunk_adds_nothing() {
    let value = messages(30, None);
    let good = Chunk::read(&value, 10, 30);
    let mut facts = ContextFacts::new(30);
    let mut bad_role = Chunk::read(&value, 10, 30);
    bad_role.roles[3] = 15; // no kind's code
    let mut bad_usage = Chunk::read(&value, 10, 30);
    bad_usage.usages[1] = code::USAGE_NUMBERS; // numbers without a stop reason
    let mut short = Chunk::read(&value, 10, 30);
    short.values.pop();
    let mut long = Chunk::read(&value, 10, 30);
    long.values.extend([1.0; 5]);
    let mut measures = Chunk::read(&value, 10, 30);
    measures.at[0] = 3; // a message before the chunk
    for bad in [&bad_role, &bad_usage, &short, &long, &measures] {
        assert!(facts.push(&bad.view()).is_err());
        assert_eq!(facts, ContextFacts::new(30));
    }
    // Out of order: the chunk must end where the facts begin.
    assert!(facts.push(&Chunk::read(&value, 0, 10).view()).is_err());
    facts.push(&good.view()).unwrap();
    assert_eq!(facts.from(), 10);
    assert!(facts.push(&good.view()).is_err());
    facts.push(&Chunk::read(&value, 0, 10).view()).unwrap();
    assert_eq!(facts.from(), 0);
}
