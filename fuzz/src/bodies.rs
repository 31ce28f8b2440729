//! The bodies of the fuzz targets: each takes arbitrary bytes, runs one part
//! of the core over them, and checks what must hold for every input. A
//! panic, an abort or a failed check is a finding.
//!
//! Shared by the libFuzzer targets (`fuzz/fuzz_targets/`) and by the core
//! crate's `tests/fuzz_smoke.rs`, which runs them over generated inputs on
//! stable Rust, so CI exercises the same checks without cargo-fuzz.

use std::io::Cursor;

use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::js::json::view::Val;
use prime_compaction_core::js::json::{self, number_to_js_string, stringify, stringify_len, Value};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::plan::branch_summary::prepare_branch_entries;
use prime_compaction_core::plan::cut_point::find_cut_point;
use prime_compaction_core::plan::prepare::prepare_compaction;
use prime_compaction_core::projection::{project, ProjectOptions};
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::file::parse_session_stream;
use prime_compaction_core::tokens::estimate::estimate_context_tokens;
use prime_compaction_core::transcript::llm_message::from_agent_messages;
use prime_compaction_core::transcript::serialize::{serialize, SerializeOptions};

/// `JSON.parse` then `JSON.stringify`: a parsed value prints to JSON that
/// parses back to a value printing the same (a fixed point after one round),
/// `stringify_len` agrees with the printed length, and a top-level number
/// parses to the same `f64` as Rust's own decimal parser gives.
pub fn json_roundtrip(data: &[u8]) {
    let Ok(value) = json::parse_bytes(data) else {
        return;
    };
    let printed = stringify(&value);
    assert_eq!(stringify_len(&value), printed.utf16_len(), "stringify_len");
    let text = printed.to_string_lossy();
    // Lone surrogates are printed as `\udxxx` escapes, so the output is always UTF-8.
    assert!(
        printed.as_str().is_some(),
        "stringify output is not well formed"
    );
    let reparsed = match json::parse(&text) {
        Ok(v) => v,
        Err(e) => panic!("stringify output does not parse ({e}): {text}"),
    };
    assert_eq!(stringify(&reparsed), printed, "not a fixed point");
    if let Value::Number(n) = value {
        let src = std::str::from_utf8(data).unwrap_or_default();
        let trimmed = src.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
        let expected: f64 = match trimmed.parse() {
            Ok(x) => x,
            Err(e) => panic!("JSON number {trimmed:?} rejected by Rust's parser: {e}"),
        };
        assert_eq!(n.to_bits(), expected.to_bits(), "number {trimmed:?}");
    }
}

/// The session-file reader over arbitrary bytes: never panics; what it
/// accepts is one object per non-blank line, the header first.
/// The planning parse accepts and rejects exactly what `JSON.parse` does,
/// with the same error, and builds the same tree but for long message texts:
/// where it holds `Measured(n)`, the full parse holds a string of `n` units,
/// and `n` is at least `MEASURED_MIN_UNITS`.
pub fn plan_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match (json::parse(text), json::parse_for_plan(text)) {
        (Ok(full), Ok(lean)) => {
            let mut todo = vec![(&full, &lean)];
            while let Some(pair) = todo.pop() {
                match pair {
                    (Value::String(s), Value::Measured(n)) => {
                        assert_eq!(s.utf16_len(), *n, "measured length");
                        assert!(*n >= json::MEASURED_MIN_UNITS, "measured a short text");
                    }
                    (Value::Array(a), Value::Array(b)) => {
                        assert_eq!(a.len(), b.len());
                        todo.extend(a.iter().zip(b));
                    }
                    (Value::Object(a), Value::Object(b)) => {
                        assert_eq!(a.len(), b.len());
                        for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
                            assert_eq!(ka, kb);
                            todo.push((va, vb));
                        }
                    }
                    (a, b) => assert_eq!(a, b),
                }
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "errors differ"),
        (a, b) => panic!("parse and parse_for_plan disagree: {a:?} vs {b:?}"),
    }
}

pub fn session_file(data: &[u8]) {
    let Ok(file) = parse_session_stream(&mut Cursor::new(data), "fuzz.jsonl") else {
        return;
    };
    assert_eq!(file.values.len(), file.lines.len());
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    assert!(file.values.len() <= lines);
    assert!(file.lines.windows(2).all(|w| w[0] < w[1]), "line numbers");
    assert!(file.values.iter().all(|v| matches!(v, Value::Object(_))));
}

/// ECMA-262 `Number::toString(10)` built independently on Rust's shortest
/// round-trip digits (`{:e}`), to check `number_to_js_string` (ryu-js)
/// against. The core's tests check this oracle itself against V8's own
/// `String(x)` (`crates/core/tests/data/number_strings.txt`).
pub fn reference_number_to_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    if let Some(even) = even_neighbour_at_tie(x.abs(), &digits, exp) {
        digits = even;
    }
    let k = digits.len() as i64;
    let n = exp + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let e = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        if k == 1 {
            format!("{digits}e{e}")
        } else {
            format!("{}.{}e{e}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// Rust's shortest digits break an exact tie upwards; the spec wants the
/// even candidate. Returns it when `x` lies exactly midway between `digits`
/// and a same-length neighbour, judged on `x`'s exact decimal expansion
/// (`{:.800e}` prints every digit of any `f64`).
fn even_neighbour_at_tie(x: f64, digits: &str, exp: i64) -> Option<String> {
    let d: u64 = digits.parse().ok()?;
    if d.is_multiple_of(2) || digits.len() > 18 {
        return None;
    }
    let exact = format!("{x:.800e}");
    let (m, e) = exact.split_once('e')?;
    let exact_digits: String = m.chars().filter(char::is_ascii_digit).collect();
    let exact_digits = exact_digits.trim_end_matches('0');
    let exact_exp: i64 = e.parse().ok()?;
    for other in [d - 1, d + 1] {
        let text = other.to_string();
        if text.len() != digits.len() || text.ends_with('0') {
            continue;
        }
        let midpoint = format!("{}5", d.min(other));
        if exact_digits != midpoint || exact_exp != exp {
            continue;
        }
        let back: f64 = format!("{text}e{}", exp - (digits.len() as i64 - 1))
            .parse()
            .ok()?;
        if back == x {
            return Some(text);
        }
    }
    None
}

/// ECMA-262 `QuoteJSONString`, written from the spec's table.
pub fn reference_quote(units: &[u16]) -> String {
    let mut out = String::from("\"");
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\u{8}') => out.push_str("\\b"),
            Ok('\u{c}') => out.push_str("\\f"),
            Ok('\n') => out.push_str("\\n"),
            Ok('\r') => out.push_str("\\r"),
            Ok('\t') => out.push_str("\\t"),
            Ok(c) if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            Ok(c) => out.push(c),
            Err(e) => out.push_str(&format!("\\u{:04x}", e.unpaired_surrogate())),
        }
    }
    out.push('"');
    out
}

/// JS number and string formatting, differential: the first 8 bytes (if
/// any) are an `f64`'s bits, checked against the spec-built formatter and
/// for a bit-exact round trip; the rest, as UTF-16 code units, are a string
/// whose `JSON.stringify` is checked against the spec's quoting.
pub fn js_format(data: &[u8]) {
    if let Some(head) = data.get(..8) {
        let mut bits = [0u8; 8];
        bits.copy_from_slice(head);
        let x = f64::from_bits(u64::from_le_bytes(bits));
        let ours = number_to_js_string(x);
        assert_eq!(
            ours,
            reference_number_to_string(x),
            "bits {:#018x}",
            x.to_bits()
        );
        let back: f64 = ours.parse().unwrap_or(f64::NAN);
        if x.is_nan() {
            assert!(back.is_nan());
        } else if x == 0.0 {
            assert_eq!(back.to_bits(), 0, "-0 and 0 both print as 0");
        } else {
            assert_eq!(back.to_bits(), x.to_bits(), "{ours} does not round-trip");
        }
        if x.is_finite() {
            // As a JSON value, too: stringify then parse gives the same bits (but -0 → 0).
            let printed = stringify(&Value::Number(x)).to_string_lossy().into_owned();
            match json::parse(&printed) {
                Ok(Value::Number(y)) => assert!(y == x, "{printed}"),
                other => panic!("{printed} parsed as {other:?}"),
            }
        }
    }
    let rest = data.get(8..).unwrap_or_default();
    let units: Vec<u16> = rest
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let s = JsStr::from_utf16(&units);
    assert_eq!(s.to_utf16(), units, "JsStr keeps code units");
    let printed = stringify(&Value::String(s));
    assert_eq!(printed.to_string_lossy(), reference_quote(&units));
    match json::parse(&printed.to_string_lossy()) {
        Ok(Value::String(back)) => assert_eq!(back.to_utf16(), units, "string round trip"),
        other => panic!("quoted string parsed as {other:?}"),
    }
}

const KEEP_RECENT: [f64; 4] = [0.0, 20.0, 20_000.0, f64::NAN];

/// Preparation over arbitrary entries, as every agent line plans: the input
/// is parsed as JSON; an array goes through `prepareCompaction`,
/// `findCutPoint`, `prepareBranchEntries` and `estimateContextTokens`.
/// Errors are fine; panics and plans that point outside the array are not.
pub fn prepare(data: &[u8]) {
    let Ok(value) = json::parse_bytes(data) else {
        return;
    };
    let array = Val::new(&value);
    for line in AgentLine::ALL {
        let _ = estimate_context_tokens(&array, &line.tokens);
        let Ok(entries) = Entries::new(&array, "pathEntries", line) else {
            return;
        };
        prepare_as(&entries);
    }
}

fn prepare_as(entries: &Entries<'_, Val<'_>>) {
    let n = entries.len();
    let in_range = |m: &prime_compaction_core::session::projection::PlanMessage| {
        (m.entry as usize) < n && (m.edit as usize) < n.max(1)
    };
    for keep in KEEP_RECENT {
        if let Ok(Some(plan)) = prepare_compaction(entries, keep) {
            assert!(plan.first_kept_entry_index < n, "firstKept out of range");
            let all = plan.summarize.iter().chain(&plan.turn_prefix);
            assert!(all.clone().all(in_range), "index out of range");
            if !entries.line.plan.on_projection {
                // Raw entries are planned in array order.
                assert!(plan.summarize.windows(2).all(|w| w[0].entry < w[1].entry));
                assert!(plan.turn_prefix.windows(2).all(|w| w[0].entry < w[1].entry));
                assert!(plan
                    .turn_prefix
                    .iter()
                    .all(|m| (m.entry as usize) < plan.first_kept_entry_index));
            }
            assert!(plan.tokens_before >= 0.0 || plan.tokens_before.is_nan());
            if let Some(p) = plan.previous_compaction {
                assert!(p < n);
            }
        }
        if let Ok(cut) = find_cut_point(entries, 0, n, keep) {
            assert!(cut.first_kept_entry_index <= n.max(1));
            if let Some(start) = cut.turn_start_index {
                assert!(start <= cut.first_kept_entry_index);
            }
        }
        if let Ok(branch) = prepare_branch_entries(entries, keep) {
            assert!(branch.messages.iter().all(in_range));
        }
    }
}

/// Conversion, projection and serialization: the input is parsed as JSON,
/// converted as `convertToLlm` would, then serialized whole and projected at
/// each retry level and serialized again. Projection must never add
/// messages, and it must not change its input.
pub fn project_serialize(data: &[u8]) {
    let Ok(value) = json::parse_bytes(data) else {
        return;
    };
    let Ok(messages) = from_agent_messages(&Val::new(&value)) else {
        return;
    };
    let before = format!("{messages:?}");
    for reasoning in [true, false] {
        let _ = serialize(&messages, SerializeOptions { reasoning });
        for attempt in 0..3 {
            for bound in [0, 7, 2000] {
                let options = ProjectOptions::for_attempt(attempt, reasoning, bound);
                let projected = project(&messages, &options);
                assert!(projected.len() <= messages.len(), "projection grew");
                let _ = serialize(&projected, SerializeOptions { reasoning });
            }
        }
    }
    assert_eq!(
        format!("{messages:?}"),
        before,
        "projection changed its input"
    );
}
