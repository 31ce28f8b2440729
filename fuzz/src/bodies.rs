//! The bodies of the fuzz targets: each takes arbitrary bytes, runs one part
//! of the core over them, and checks what must hold for every input. A
//! panic, an abort or a failed check is a finding.
//!
//! Shared by the libFuzzer targets (`fuzz/fuzz_targets/`) and by the core
//! crate's `tests/fuzz_smoke.rs`, which runs them over generated inputs on
//! stable Rust, so CI exercises the same checks without cargo-fuzz.

use std::io::Cursor;

use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::boundary_codes::flat as codes;
use prime_compaction_core::error::{Error, ErrorKind};
use prime_compaction_core::js::json::view::Val;
use prime_compaction_core::js::json::{self, number_to_js_string, stringify, stringify_len, Value};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::string::Utf16Builder;
use prime_compaction_core::plan::branch_summary::prepare_branch_entries;
use prime_compaction_core::plan::cut_point::find_cut_point;
use prime_compaction_core::plan::from_file::branch_lines;
use prime_compaction_core::plan::prepare::{find_cut, prepare_compaction, start_cut, CutSearch};
use prime_compaction_core::projection::plan::{
    PlanSource, PlanText, PlanValue, PlanValues, PlanWriter, PLAN_ASSISTANT, PLAN_IMAGE, PLAN_JSON,
    PLAN_NO_JSON, PLAN_PARSED_ARGS, PLAN_SHORT, PLAN_STRING_VALUE, PLAN_TEXT, PLAN_THINKING,
    PLAN_TOOL_CALL, PLAN_TOOL_RESULT, PLAN_USER, PLAN_USER_TEXT, PLAN_VALUE_BASE,
};
use prime_compaction_core::projection::project_each;
use prime_compaction_core::projection::serialize_projection;
use prime_compaction_core::projection::{project, ProjectOptions};
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::facts::{EntriesChunk, EntryFacts, MessagesChunk};
use prime_compaction_core::session::file::{
    parse_session_sequential, parse_session_stream, parse_session_stream_chunked, SessionFile,
};
use prime_compaction_core::session::measures::MeasuresChunk;
use prime_compaction_core::session::system_message::compaction_system_message;
use prime_compaction_core::session::tree::{branch_positions, is_header, Leaf};
use prime_compaction_core::tokens::context_facts::{ContextChunk, ContextFacts, FactsList};
use prime_compaction_core::tokens::estimate::{estimate_context_tokens, Counter};
use prime_compaction_core::tokens::projected::{
    context_estimate, projected_context_tokens, MessageArray,
};
use prime_compaction_core::transcript::flat::{self, FlatReader, FlatTexts, JSON_OF_BASE, NONE};
use prime_compaction_core::transcript::llm_message::{
    from_agent_messages, AssistantMessage, Block, Message, ToolCall, ToolResultMessage,
    UserContent, UserMessage,
};
use prime_compaction_core::transcript::recipe::{Recipe, OP_HEAD, OP_LABEL_BASE};
use prime_compaction_core::transcript::serialize::{
    push_message, serialize, serialize_into, Parts, SerializeOptions,
};
use prime_compaction_core::transcript::text::Sink;
use prime_compaction_core::transcript::text::{Text, TextHints, TextKey};

thread_local! {
    static CHECKED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Marks an input that got past a body's opening (it parsed, it converted)
/// to the checks; the smoke run counts them, so that a generator whose
/// inputs all fail to convert cannot pass for a fuzz run.
fn checked() {
    CHECKED.with(|c| c.set(c.get() + 1));
}

/// How many inputs reached a body's checks on this thread so far.
pub fn checked_count() -> u64 {
    CHECKED.with(std::cell::Cell::get)
}

/// The messages JSON text converts to as `convertToLlm` converts them;
/// `None` where it is not JSON or not messages.
fn messages_of_json(json: &[u8]) -> Option<Vec<Message>> {
    let value = json::parse_bytes(json).ok()?;
    from_agent_messages(&Val::new(&value)).ok()
}

/// A leading byte, then messages as JSON ([`messages_of_json`]).
fn byte_then_messages(data: &[u8]) -> Option<(u8, Vec<Message>)> {
    let (&byte, json) = data.split_first()?;
    Some((byte, messages_of_json(json)?))
}

/// `JSON.parse` then `JSON.stringify`: a parsed value prints to JSON that
/// parses back to a value printing the same (a fixed point after one round),
/// `stringify_len` agrees with the printed length, and a top-level number
/// parses to the same `f64` as Rust's own decimal parser gives.
pub fn json_roundtrip(data: &[u8]) {
    let Ok(value) = json::parse_bytes(data) else {
        return;
    };
    checked();
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
            if matches!(full, Value::Object(_) | Value::Array(_)) {
                cuts_end_early(text);
            }
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

/// A text cut short of a JSON object or array's end fails to parse because
/// its input ended, in both parses: the session readers leave such a line
/// out as an append cut short. Checked on texts up to 8 KiB, at every
/// character boundary of a short one, at 32 spread over a longer one.
fn cuts_end_early(text: &str) {
    let end = text.trim_end_matches([' ', '\t', '\n', '\r']).len();
    if end > 8192 {
        return;
    }
    let step = text[..end].chars().count().div_ceil(32).max(1);
    for (cut, _) in text[..end].char_indices().step_by(step) {
        let prefix = &text[..cut];
        for parse in [json::parse, json::parse_for_plan] {
            match parse(prefix) {
                Err(e) => assert!(e.input_ended(prefix), "{prefix:?}: {e}"),
                Ok(v) => panic!("{prefix:?}, cut short of {text:?}, parses: {v:?}"),
            }
        }
    }
}

/// The session-file reader over arbitrary bytes, on the calling thread (the
/// path the threaded reader is built on): never panics; the first byte
/// chooses a chunk size, and reading in chunks that small gives the same
/// entries, line numbers or error as reading in one chunk; what it accepts
/// is one object per non-blank line, the header first.
pub fn session_file(data: &[u8]) {
    let (chunk, body) = chunk_and_body(data);
    let path = "fuzz.jsonl";
    let whole = parse_session_sequential(&mut Cursor::new(body), path, body.len() + 1);
    let chunked = parse_session_sequential(&mut Cursor::new(body), path, chunk);
    same_reading(&whole, &chunked, chunk);
    let Ok(file) = whole else {
        return;
    };
    checked();
    assert_eq!(file.values.len(), file.lines.len());
    let lines = body.iter().filter(|&&b| b == b'\n').count() + 1;
    assert!(file.values.len() <= lines);
    assert!(file.lines.windows(2).all(|w| w[0] < w[1]), "line numbers");
    assert!(file.lines.iter().all(|&l| l >= 1 && l as usize <= lines));
    assert!(file.values.iter().all(|v| matches!(v, Value::Object(_))));
}

/// The threaded reader (two parser threads, chunks handed round-robin and
/// collected in order) gives what the single-threaded one gives, chunk
/// boundaries where the first byte puts them; a first byte of 0xff reads
/// through `parse_session_stream` itself, with its 4 MiB chunks. The CLI's
/// `branch_lines` (threaded too) reads the same file: the lines of the
/// branch `getBranch` walks over those values, and every entry's string id.
pub fn session_file_threaded(data: &[u8]) {
    let (chunk, body) = chunk_and_body(data);
    let path = "fuzz.jsonl";
    let threaded = if data.first() == Some(&0xff) {
        parse_session_stream(&mut Cursor::new(body), path)
    } else {
        parse_session_stream_chunked(&mut Cursor::new(body), path, chunk)
    };
    let sequential = parse_session_sequential(&mut Cursor::new(body), path, chunk);
    same_reading(&sequential, &threaded, chunk);
    same_branch_lines(&sequential, body, path);
}

/// `branch_lines` over `body` against `file`, its sequential reading: the
/// default leaf's branch, and the branch of the middle string id as a leaf.
fn same_branch_lines(file: &Result<SessionFile, Error>, body: &[u8], path: &str) {
    let found = branch_lines(body, path, None);
    let file = match (file, &found) {
        (Err(a), Err(b)) => return assert_eq!(a.to_string(), b.to_string(), "branch_lines' error"),
        (Err(a), Ok(_)) => panic!("branch_lines read a file the reader rejects: {a}"),
        (Ok(file), _) => file,
    };
    let line_of = |i: usize| format!("{path}: line {}", file.lines[i]);
    let lines =
        |positions: Vec<usize>| -> Vec<u32> { positions.iter().map(|&i| file.lines[i]).collect() };
    let expected = branch_positions(&file.values, Leaf::Last, line_of).map(lines);
    match (&expected, &found) {
        (Ok(want), Ok(got)) => assert_eq!(want, &got.lines, "the default branch's lines"),
        (Err(a), Err(b)) => return assert_eq!(a.to_string(), b.to_string(), "a cycle"),
        _ => panic!("branch_lines and the walk disagree: {expected:?} vs {found:?}"),
    }
    let Ok(found) = found else { return };
    checked();
    let ids: Vec<&JsStr> = file
        .values
        .iter()
        .filter(|v| !is_header(v))
        .filter_map(|v| v.get("id").and_then(Value::as_js_str))
        .collect();
    assert_eq!(found.ids.iter().collect::<Vec<_>>(), ids, "the ids");
    let Some(leaf) = ids.get(ids.len() / 2).copied() else {
        return;
    };
    let by_leaf = branch_lines(body, path, Some(leaf));
    let expected = branch_positions(&file.values, Leaf::Id(leaf), line_of).map(lines);
    match (expected, by_leaf) {
        (Ok(want), Ok(got)) if !leaf.is_empty() => assert_eq!(want, got.lines, "the leaf's branch"),
        // An empty id names no entry: the walk gives nothing, branch_lines an error.
        (Ok(want), Err(_)) if leaf.is_empty() => assert!(want.is_empty()),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "a cycle from the leaf"),
        (want, got) => {
            panic!("branch_lines from {leaf:?} and the walk disagree: {want:?} vs {got:?}")
        }
    }
}

/// The first byte chooses a chunk size of 1 to 64 bytes; the rest is the file.
fn chunk_and_body(data: &[u8]) -> (usize, &[u8]) {
    match data.split_first() {
        Some((&b, body)) => (1 + usize::from(b % 64), body),
        None => (1, data),
    }
}

fn same_reading(a: &Result<SessionFile, Error>, b: &Result<SessionFile, Error>, chunk: usize) {
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.lines, b.lines, "line numbers, chunk {chunk}");
            assert_eq!(a.values, b.values, "values, chunk {chunk}");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "errors, chunk {chunk}"),
        (a, b) => panic!("readings disagree at chunk {chunk}: {a:?} vs {b:?}"),
    }
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
    // The length alone (a tool call's arguments measured string by string),
    // and the UTF-16 writer the transcripts use, agree with it.
    let mut written = Vec::new();
    json::push_quoted_utf16(&units, &mut written);
    assert_eq!(written, printed.to_utf16(), "push_quoted_utf16");
    assert_eq!(
        json::quoted_len_utf16(&units),
        written.len(),
        "quoted_len_utf16"
    );
    match json::parse(&printed.to_string_lossy()) {
        Ok(Value::String(back)) => assert_eq!(back.to_utf16(), units, "string round trip"),
        other => panic!("quoted string parsed as {other:?}"),
    }
}

const KEEP_RECENT: [f64; 4] = [0.0, 20.0, 20_000.0, f64::NAN];

/// Preparation over arbitrary entries, as every agent line plans: the input
/// is parsed as JSON; an array goes through `prepareCompaction`,
/// `findCutPoint`, `prepareBranchEntries` and `estimateContextTokens`, and
/// the system message a compaction entry would keep is built (a system
/// message object, or none). Errors are fine; panics and plans that point
/// outside the array are not.
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
        if prepare_as(&entries) && std::ptr::eq(line, AgentLine::ALL[0]) {
            checked();
        }
        if let Ok(Some(message)) = compaction_system_message(&entries, 7.0) {
            let printed = stringify(&message);
            let reparsed = json::parse(&printed.to_string_lossy()).expect("its JSON parses");
            assert_eq!(reparsed.get("role").and_then(Value::as_str), Some("system"));
            assert_eq!(reparsed.get("timestamp"), Some(&Value::Number(7.0)));
        }
    }
}

/// Whether some `keep` gave a plan (whose checks then ran).
fn prepare_as(entries: &Entries<'_, Val<'_>>) -> bool {
    let mut planned = false;
    let n = entries.len();
    let in_range = |m: &prime_compaction_core::session::projection::PlanMessage| {
        (m.entry as usize) < n && (m.edit as usize) < n.max(1)
    };
    for keep in KEEP_RECENT {
        if let Ok(Some(plan)) = prepare_compaction(entries, keep) {
            planned = true;
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
    planned
}

/// Conversion, projection and serialization: the input is parsed as JSON,
/// converted as `convertToLlm` would, then serialized whole and projected at
/// each retry level and serialized again. Projection must never add
/// messages, and it must not change its input.
pub fn project_serialize(data: &[u8]) {
    let Some(messages) = messages_of_json(data) else {
        return;
    };
    checked();
    let before = format!("{messages:?}");
    for reasoning in [true, false] {
        let _ = serialize(&messages, SerializeOptions { reasoning });
        for attempt in 0..3 {
            for bound in [0, 7, 2000] {
                let options = attempt_options(attempt, reasoning, bound);
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

/// The flat form's texts for the fuzz targets: the texts array and the
/// short units as owned strings. Asked only for what is in range (the
/// decoder checks first); with `exact`, the lengths and flags the codes
/// give must be the texts' own (true of a flat form [`encode_flat`] made).
#[derive(Clone, Copy)]
struct FuzzTexts<'a> {
    strings: &'a [JsStr],
    shorts: &'a [u16],
    exact: bool,
}

impl FlatTexts for FuzzTexts<'_> {
    type Text = JsStr;

    fn strings_len(&self) -> u32 {
        self.strings.len() as u32
    }

    fn shorts_len(&self) -> usize {
        self.shorts.len()
    }

    fn indexed(&self, index: u32, len: u32, hints: TextHints) -> JsStr {
        let s = &self.strings[index as usize];
        if self.exact {
            assert_eq!(len as usize, s.utf16_len(), "text {index}: length");
            if hints != TextHints::default() {
                let told = TextHints::told(Text::is_blank(s), s.splits_pair_at(TextHints::CUT));
                assert_eq!(hints, told, "text {index}: flags");
            }
        }
        s.clone()
    }

    fn short(&self, start: u32, len: u32) -> JsStr {
        let (start, len) = (start as usize, len as usize);
        assert!(
            start + len <= self.shorts.len(),
            "short string out of range"
        );
        JsStr::from_utf16(&self.shorts[start..start + len])
    }

    fn json_of(&self, index: u32, len: u32) -> JsStr {
        let s = &self.strings[index as usize];
        if self.exact {
            assert_eq!(len as usize, s.utf16_len(), "string value {index}: length");
        }
        stringify(&Value::String(s.clone()))
    }
}

/// Where a tool-call argument's JSON goes in a flat form.
pub enum JsonPlace {
    /// In the short units.
    Short,
    /// The JSON itself, a string of the texts array.
    Text,
    /// This string value, in the texts array, whose JSON the reader writes.
    JsonOf(JsStr),
}

/// Where flat-messages.js puts an argument's JSON: a string value longer
/// than `LONG_JSON` as itself, other JSON that long as a string of the
/// texts array, the rest in the short units.
pub fn js_json_place(json: &JsStr) -> JsonPlace {
    if let Some(Ok(Value::String(v))) = json.as_str().map(json::parse) {
        if v.utf16_len() > codes::LONG_JSON as usize {
            assert_eq!(
                &stringify(&Value::String(v.clone())),
                json,
                "a string's JSON"
            );
            return JsonPlace::JsonOf(v);
        }
    }
    if json.utf16_len() > codes::LONG_JSON as usize {
        JsonPlace::Text
    } else {
        JsonPlace::Short
    }
}

/// A flat form, as flat-messages.js makes it.
#[derive(Default)]
pub struct FlatForm {
    pub codes: Vec<i32>,
    pub strings: Vec<JsStr>,
    pub shorts: Vec<u16>,
    pub times: Vec<f64>,
    pub timed: Vec<u8>,
}

impl FlatForm {
    fn string(&mut self, s: &JsStr) {
        self.codes
            .extend([self.strings.len() as i32, s.utf16_len() as i32]);
        self.strings.push(s.clone());
    }

    fn short(&mut self, s: &JsStr) {
        let units = s.to_utf16();
        self.codes.push(units.len() as i32);
        self.shorts.extend(units);
    }

    fn blocks(&mut self, blocks: &[Block], place: fn(&JsStr) -> JsonPlace) {
        self.codes.push(blocks.len() as i32);
        for b in blocks {
            match b {
                Block::Text(t) => {
                    self.codes.push(codes::TEXT);
                    self.string(t);
                    let blank = if Text::is_blank(t) { codes::BLANK } else { 0 };
                    let splits = if t.splits_pair_at(TextHints::CUT) {
                        codes::SPLITS_PAIR_AT_CUT
                    } else {
                        0
                    };
                    self.codes.push(blank | splits);
                }
                Block::Thinking { thinking, redacted } => {
                    self.codes.push(codes::THINKING);
                    self.string(thinking);
                    self.codes.push(i32::from(*redacted));
                }
                Block::ToolCall(call) => {
                    let (id, name) = (call.id.to_utf16(), call.name.to_utf16());
                    self.codes.extend([
                        codes::TOOL_CALL,
                        id.len() as i32,
                        name.len() as i32,
                        call.args.len() as i32,
                    ]);
                    self.shorts.extend(id);
                    self.shorts.extend(name);
                    for (key, json) in &call.args {
                        self.short(key);
                        let Some(json) = json else {
                            self.codes.extend([NONE, NONE]);
                            continue;
                        };
                        match place(json) {
                            JsonPlace::Short => {
                                self.short(json);
                                self.codes.push(NONE);
                            }
                            JsonPlace::Text => {
                                let at = self.strings.len() as i32;
                                self.codes.extend([json.utf16_len() as i32, at]);
                                self.strings.push(json.clone());
                            }
                            JsonPlace::JsonOf(v) => {
                                let at = JSON_OF_BASE - self.strings.len() as i32;
                                self.codes.extend([v.utf16_len() as i32, at]);
                                self.strings.push(v);
                            }
                        }
                    }
                }
                Block::Image { mime_type } => {
                    self.codes.push(codes::IMAGE);
                    match mime_type {
                        Some(m) => self.short(m),
                        None => self.codes.push(NONE),
                    }
                }
            }
        }
    }
}

/// The flat form of `messages` (a port of flat-messages.js's pass over the
/// message model); message `i` is left to the native reader where
/// `native(i)`, and each argument's JSON goes where `place` says
/// ([`js_json_place`] as flat-messages.js puts it).
pub fn encode_flat(
    messages: &[Message],
    native: impl Fn(usize) -> bool,
    place: fn(&JsStr) -> JsonPlace,
) -> FlatForm {
    let mut f = FlatForm::default();
    for (i, m) in messages.iter().enumerate() {
        let timestamp = match m {
            Message::User(u) => u.timestamp,
            Message::Assistant(a) => a.timestamp,
            Message::ToolResult(r) => r.timestamp,
        };
        f.times.push(timestamp.unwrap_or(0.0));
        f.timed.push(u8::from(timestamp.is_some()));
        if native(i) {
            f.codes.extend([codes::NATIVE, i as i32]);
            continue;
        }
        match m {
            Message::User(u) => match &u.content {
                UserContent::Text(t) => {
                    f.codes.push(codes::USER_TEXT);
                    f.string(t);
                }
                UserContent::Blocks(b) => {
                    f.codes.push(codes::USER_BLOCKS);
                    f.blocks(b, place);
                }
            },
            Message::Assistant(a) => {
                f.codes.push(codes::ASSISTANT);
                f.blocks(&a.content, place);
            }
            Message::ToolResult(r) => {
                f.codes.push(codes::TOOL_RESULT);
                f.short(&r.tool_call_id);
                f.short(&r.tool_name);
                f.codes.push(i32::from(r.is_error));
                f.blocks(&r.content, place);
            }
        }
    }
    f
}

/// What decoding a flat form gave: the messages (read with timestamps)
/// and the transcript written straight from the codes, or the error each
/// way.
struct FlatReading {
    messages: Result<Vec<Message>, Error>,
    transcript: Result<JsStr, Error>,
}

fn read_flat(f: &FlatForm, exact: bool, native: &dyn Fn(usize) -> Option<Message>) -> FlatReading {
    let texts = FuzzTexts {
        strings: &f.strings,
        shorts: &f.shorts,
        exact,
    };
    let reader = || FlatReader::new(texts, &f.codes).with_timestamps(&f.times, &f.timed);
    let messages = reader().and_then(|mut r| r.messages(f.timed.len(), |i| Ok(native(i))));
    let transcript = reader().and_then(|mut r| {
        let mut out = Utf16Builder::new();
        let mut parts = Parts::new(&mut out);
        let mut scratch = flat::Scratch::default();
        let options = SerializeOptions { reasoning: true };
        while !r.is_done() {
            if let Some(i) = r.write_message(&mut parts, options, &mut scratch)? {
                if let Some(m) = native(i) {
                    push_message(&mut parts, &m, options);
                }
            }
        }
        Ok(out.finish())
    });
    FlatReading {
        messages,
        transcript,
    }
}

/// Without the part of a tool result that the flat form does not carry
/// (how much of its content a read elided: the flat path reads whole).
fn without_elided(mut messages: Vec<Message>) -> Vec<Message> {
    for m in &mut messages {
        if let Message::ToolResult(r) = m {
            r.elided_units = 0;
        }
    }
    messages
}

/// The flat form of messages (flat-messages.js's codes, decoded by
/// `transcript::flat`), both ways. The first byte picks the mode:
///
/// - even: the rest is JSON messages, converted as `convertToLlm` would,
///   encoded as flat-messages.js does (some left to the native reader, as
///   the second byte's bits say) and decoded: the same messages and
///   timestamps come back, every length and flag is the text's own, and
///   the transcript written from the codes equals `serialize` of the
///   messages.
/// - odd: the rest is arbitrary codes (mostly small numbers, so kinds,
///   counts and lengths are met), a texts array and short units: decoding
///   must fail or read only what is there; the two decoders (messages,
///   transcript) accept the same codes and agree on the transcript, and
///   what decodes encodes back to as many codes, the same short units and
///   the same messages.
pub fn flat_messages(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        flat_round_trip(rest);
    } else {
        flat_arbitrary(rest);
    }
}

fn flat_round_trip(data: &[u8]) {
    let Some((natives, messages)) = byte_then_messages(data) else {
        return;
    };
    checked();
    let messages = without_elided(messages);
    let native = |i: usize| natives != 0 && (natives >> (i % 8)) & 1 == 1;
    let f = encode_flat(&messages, native, js_json_place);
    let reading = read_flat(&f, true, &|i| Some(messages[i].clone()));
    let decoded = reading.messages.expect("a flat form encoded here decodes");
    assert_eq!(decoded, messages, "messages back");
    let transcript = reading.transcript.expect("and writes");
    let options = SerializeOptions { reasoning: true };
    assert_eq!(transcript, serialize(&messages, options), "transcript");
}

/// A code from the input: a byte as a small signed number, or (after a
/// byte of 0x7f) the next four bytes as any `i32`.
fn next_code(bytes: &mut std::slice::Iter<'_, u8>) -> Option<i32> {
    let b = *bytes.next()?;
    if b != 0x7f {
        return Some(i32::from(b as i8));
    }
    let mut word = [0u8; 4];
    for w in &mut word {
        *w = *bytes.next()?;
    }
    Some(i32::from_le_bytes(word))
}

fn flat_arbitrary(data: &[u8]) {
    let [strings, shorts, timestamps, rest @ ..] = data else {
        return;
    };
    let mut f = FlatForm {
        strings: (0..strings % 8)
            .map(|i| JsStr::from_str(&"T".repeat(usize::from(i) + 1)))
            .collect(),
        shorts: (0..u16::from(*shorts)).map(|u| 0x61 + u % 26).collect(),
        ..FlatForm::default()
    };
    let mut bytes = rest.iter();
    while let Some(c) = next_code(&mut bytes) {
        f.codes.push(c);
    }
    // Enough timestamps for every message (there are fewer messages than
    // codes), or as many as the byte says (too few is malformed).
    let messages = if timestamps & 0x80 == 0 {
        f.codes.len()
    } else {
        usize::from(timestamps & 0x7f)
    };
    f.times = (0..messages).map(|i| i as f64).collect();
    f.timed = (0..messages).map(|i| u8::from(i % 3 == 0)).collect();
    // Texts of the texts array are all "T"s (never empty), and short units
    // lowercase letters: a native message is told from the others by its
    // text, and an argument's JSON by where it came from.
    let placeholder = |i: usize| {
        Some(Message::User(UserMessage {
            content: UserContent::Text(JsStr::from_str(&format!("native {i}"))),
            timestamp: None,
        }))
    };
    let is_placeholder = |i: usize, m: &Message| placeholder(i).as_ref() == Some(m);
    let reading = read_flat(&f, false, &placeholder);
    let (messages, transcript) = match (reading.messages, reading.transcript) {
        (Ok(m), Ok(t)) => (m, t),
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "the decoders fail alike");
            return;
        }
        (a, b) => panic!("the decoders disagree: {a:?} vs {b:?}"),
    };
    let options = SerializeOptions { reasoning: true };
    assert_eq!(transcript, serialize(&messages, options), "transcript");
    // Encoded back (the native ones as native again), as many codes and the
    // same short units; decoded again, the same messages.
    let again = encode_flat(
        &messages,
        |i| is_placeholder(i, &messages[i]),
        json_place_as_decoded,
    );
    assert_eq!(again.codes.len(), f.codes.len(), "codes consumed");
    assert_eq!(
        again.shorts[..],
        f.shorts[..again.shorts.len()],
        "short units"
    );
    let reading = read_flat(&again, true, &placeholder);
    assert_eq!(reading.messages.ok(), Some(messages), "decoded again");
}

/// Where an argument's JSON decoded from [`flat_arbitrary`]'s codes came
/// from: the JSON of a string of "T"s, a string of "T"s, or short units.
fn json_place_as_decoded(json: &JsStr) -> JsonPlace {
    const QUOTE: u16 = b'"' as u16;
    let units = json.to_utf16();
    let all_t = |u: &[u16]| !u.is_empty() && u.iter().all(|&u| u == u16::from(b'T'));
    match units.as_slice() {
        [QUOTE, inner @ .., QUOTE] if all_t(inner) => JsonPlace::JsonOf(JsStr::from_utf16(inner)),
        u if all_t(u) => JsonPlace::Text,
        _ => JsonPlace::Short,
    }
}

/// The entry facts `lib/entry-facts.js` sends (`session::facts`): the
/// input is a mode byte, then chunks, each an op byte (bit 0: a messages
/// chunk; bit 1: `first` given, else made right; bit 2: codes masked to
/// known ones), a sizes byte (low half: how many lengths, high half: how
/// many text units) and its fields: `first` and the count, kinds, id
/// codes, positions, contents and call counts as bytes; lengths as bytes;
/// text as UTF-16 units from byte pairs. A chunk is
/// accepted or is an error that changes nothing. Then the facts are used
/// over entries of their length (from a template the mode byte picks) and
/// must not make the planner panic or name an entry out of range, on each
/// line, whatever they say.
pub fn entry_facts(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.iter().copied();
    let mut next = move || bytes.next();
    let mut facts = EntryFacts::new();
    while let Some(op) = next() {
        let mut take = |n: usize, mask: u8| -> Vec<u8> {
            (0..n)
                .map_while(|_| next().map(|b| if op & 4 != 0 { b & mask } else { b }))
                .collect()
        };
        let sizes = take(1, 0xff).first().copied().unwrap_or(0);
        let (n_lengths, n_units) = (usize::from(sizes & 0x0f), usize::from(sizes >> 4));
        let before = facts.clone();
        let pushed = if op & 8 != 0 {
            let count = usize::from(take(1, 0xff).first().copied().unwrap_or(0) % 9);
            let at: Vec<u32> = take(count, 0x3f).into_iter().map(u32::from).collect();
            let forms = take(count, 0x03);
            let counts: Vec<u32> = take(count, 0x03).into_iter().map(u32::from).collect();
            let n_blocks = usize::from(take(1, 0x0f).first().copied().unwrap_or(0));
            let blocks = take(n_blocks, 0x07);
            let lengths: Vec<u32> = take(n_lengths, 0x07).into_iter().map(u32::from).collect();
            facts.push_measures(&MeasuresChunk {
                at: &at,
                forms: &forms,
                counts: &counts,
                blocks: &blocks,
                lengths: &lengths,
            })
        } else if op & 1 == 0 {
            let head = take(2, 0xff);
            let first = match (op & 2 != 0, head.first()) {
                (true, Some(&f)) => usize::from(f),
                _ => facts.len(),
            };
            let count = usize::from(head.get(1).copied().unwrap_or(0) % 17);
            let kinds = take(count, 0x1f);
            let ids = take(count, 0x0f);
            let lengths: Vec<u32> = take(n_lengths, 0x07).into_iter().map(u32::from).collect();
            let text = units(&take(2 * n_units, 0xff));
            facts.push_entries(&EntriesChunk {
                first,
                kinds: &kinds,
                ids: &ids,
                lengths: &lengths,
                text: &text,
            })
        } else {
            let count = usize::from(take(1, 0xff).first().copied().unwrap_or(0) % 9);
            let at: Vec<u32> = take(count, 0x3f).into_iter().map(u32::from).collect();
            let contents = take(count, 0x07);
            let calls: Vec<u32> = take(count, 0x03).into_iter().map(u32::from).collect();
            let lengths: Vec<u32> = take(n_lengths, 0x07).into_iter().map(u32::from).collect();
            let n_refs = usize::from(take(1, 0x1f).first().copied().unwrap_or(0));
            let refs: Vec<u32> = take(n_refs, 0x0f).into_iter().map(u32::from).collect();
            let text = units(&take(2 * n_units, 0xff));
            facts.push_messages(&MessagesChunk {
                at: &at,
                contents: &contents,
                calls: &calls,
                refs: &refs,
                lengths: &lengths,
                text: &text,
            })
        };
        if pushed.is_err() {
            assert!(facts == before, "a malformed chunk changed the facts");
        }
    }
    facts.finish();
    if let Some(path) = facts.path() {
        assert!(path.iter().all(|&i| i < facts.len()), "path out of range");
    }
    let value = Value::Array((0..facts.len()).map(|i| facts_entry(mode, i)).collect());
    let array = Val::new(&value);
    let mut compared = false;
    for line in AgentLine::ALL {
        let Ok(entries) = Entries::new(&array, "pathEntries", line) else {
            break;
        };
        prepare_as(&entries.with_facts(&facts));
        for keep in KEEP_RECENT {
            compared |= cut_asking_for_measures(&array, line, &mut facts.clone(), keep);
        }
    }
    if compared {
        checked();
    }
}

/// The cut point as `planCut` finds it: stopping where an estimate asks
/// for measures, and going on with none pushed (so the planner reads the
/// message). Each stop asks for an entry not asked for before, so it ends;
/// and it finds the cut (or the error) the cut without asking finds.
/// Whether the two cuts were compared.
fn cut_asking_for_measures(
    array: &Val<'_>,
    line: &'static AgentLine,
    facts: &mut EntryFacts,
    keep: f64,
) -> bool {
    // A measure counts for its entry only where the entry's kind is known:
    // held by the facts, or read by the planner itself, which the walk
    // that asks (a new Entries after each stop) may not have done where
    // the walk that does not ask has. The JS pass measures what the
    // entries hold, so there both count the same; the measures here are
    // made up, so an input with one for an entry whose kind the facts lack
    // is not compared.
    let unknown_measured = (0..facts.len())
        .any(|i| facts.kind(i).is_none() && matches!(facts.measures().content(i), Some(Some(_))));
    if unknown_measured {
        return false;
    }
    let Ok(plain) = Entries::new(array, "pathEntries", line) else {
        return false;
    };
    let plain = plain.with_facts(facts);
    let Ok(Some(start)) = start_cut(&plain) else {
        return false;
    };
    let expected = find_cut(&plain, &start, keep, &mut CutSearch::default());
    let mut search = CutSearch::default();
    for _ in 0..=facts.len() {
        let Ok(entries) = Entries::new(array, "pathEntries", line) else {
            return false;
        };
        let entries = entries.with_facts(facts).asking_for_measures();
        let found = find_cut(&entries, &start, keep, &mut search);
        let wanted = entries.wanted_measure();
        match found {
            Err(err) if err.kind == ErrorKind::FactsWanted => {
                let from = wanted.expect("a stop names the entry");
                let asked = facts.ask_measures_from(from);
                assert_eq!(
                    asked.first(),
                    Some(&(from as u32)),
                    "the entry wanted is asked for first"
                );
            }
            found => {
                assert_eq!(found, expected, "asking for measures changed the cut");
                return true;
            }
        }
    }
    panic!("the cut asked for measures more often than there are entries");
}

/// UTF-16 units from byte pairs (lone surrogates included).
fn units(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect()
}

/// A JSON string.
fn json_text(s: &str) -> Value {
    Value::String(JsStr::from_str(s))
}

/// A JSON object of these members, in order.
fn json_object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (JsStr::from_str(k), v))
            .collect(),
    )
}

/// Entry `i` of [`entry_facts`]'s entries: a chain of user, assistant (a
/// read call) and tool-result messages, with a compaction or a branch
/// summary where the mode's bits say.
fn facts_entry(mode: u8, i: usize) -> Value {
    let (text, obj) = (json_text, json_object);
    let id = text(&format!("e{i}"));
    let parent = if i == 0 {
        Value::Null
    } else {
        text(&format!("e{}", i - 1))
    };
    let kind = if mode != 0 && i % usize::from(mode.max(2)) == 1 {
        3 + usize::from(mode) % 2
    } else {
        i % 3
    };
    let message = |role: &str, content: Value| {
        obj(vec![
            ("type", text("message")),
            ("id", id.clone()),
            ("parentId", parent.clone()),
            (
                "message",
                obj(vec![("role", text(role)), ("content", content)]),
            ),
        ])
    };
    match kind {
        0 => message("user", text("do it")),
        1 => message(
            "assistant",
            Value::Array(vec![obj(vec![
                ("type", text("toolCall")),
                ("name", text("read")),
                ("arguments", obj(vec![("path", text("a.txt"))])),
            ])]),
        ),
        2 => message(
            "toolResult",
            Value::Array(vec![obj(vec![
                ("type", text("text")),
                ("text", text("ok")),
            ])]),
        ),
        3 => obj(vec![
            ("type", text("compaction")),
            ("id", id.clone()),
            ("parentId", parent.clone()),
            ("summary", text("s")),
            ("firstKeptEntryId", text("e0")),
            ("tokensBefore", Value::Number(10.0)),
        ]),
        _ => obj(vec![
            ("type", text("branch_summary")),
            ("id", id.clone()),
            ("parentId", parent.clone()),
            ("summary", text("b")),
            ("fromId", text("e0")),
        ]),
    }
}

/// The recipe a transcript goes back to JS as (`transcript::recipe`),
/// written for arbitrary messages (the input as JSON after a byte that
/// chooses which texts become pieces naming a string, as the caller's own
/// strings do, and which are copied into the labels, as text made here is).
/// Followed as `assembleTranscript` in flat-messages.js follows it, the
/// recipe must name only what is there and give exactly `serialize`'s
/// transcript; so must the projection's (`serialize_projection`) at each
/// retry level, against the projected messages serialized.
pub fn recipe(data: &[u8]) {
    let Some((seed, messages)) = byte_then_messages(data) else {
        return;
    };
    checked();
    for reasoning in [true, false] {
        let options = SerializeOptions { reasoning };
        let mut sink = RecipeWriter::new(seed);
        serialize_into(&messages, options, &mut sink);
        let expected = serialize(&messages, options);
        assert_eq!(sink.assemble(), expected.to_utf16(), "transcript");
        for attempt in 0..3 {
            let options = attempt_options(attempt, reasoning, 40);
            let mut sink = RecipeWriter::new(seed.rotate_left(attempt as u32));
            serialize_projection(&messages, &options, &mut sink);
            let projected = project(&messages, &options);
            let expected = serialize(&projected, SerializeOptions { reasoning });
            assert_eq!(sink.assemble(), expected.to_utf16(), "projection {attempt}");
        }
    }
}

/// A recipe sink as the binding's `RecipeSink` is, over owned texts: a text
/// becomes a piece naming a string (appended to `strings`) where the seed's
/// next bit says so, else label text.
struct RecipeWriter {
    recipe: Recipe,
    strings: Vec<JsStr>,
    bits: u64,
}

impl RecipeWriter {
    fn new(seed: u8) -> Self {
        RecipeWriter {
            recipe: Recipe::new(),
            strings: Vec::new(),
            bits: u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    fn as_piece(&mut self) -> bool {
        self.bits = self.bits.rotate_left(1) ^ (self.bits >> 3);
        self.bits & 1 == 1
    }

    fn string(&mut self, t: &JsStr) -> i32 {
        self.strings.push(t.clone());
        (self.strings.len() - 1) as i32
    }

    /// A long label becomes a string of its own, as in the binding, where
    /// the seed's next bit says so (else it stays a label); due before each
    /// piece and at the end.
    fn close_long_run(&mut self) {
        let Some(units) = self.recipe.long_run() else {
            return;
        };
        let run = JsStr::from_utf16(units);
        if self.as_piece() {
            let i = self.string(&run);
            self.recipe.end_run_as(Some(i));
        }
    }

    /// Follows the recipe as `assembleTranscript` does, checking that every
    /// op names something there.
    fn assemble(mut self) -> Vec<u16> {
        self.close_long_run();
        let parts = self.recipe.finish().expect("a recipe");
        let labels: Vec<Vec<u16>> = (parts.ranges.iter())
            .map(|&(a, b)| {
                assert!(a <= b && b <= parts.labels.len(), "labels range");
                parts.labels.units(a..b)
            })
            .collect();
        for &(a, b) in &parts.ranges {
            assert!(a < b || parts.labels.is_empty(), "an empty labels chunk");
        }
        assert_eq!(parts.bounds.len() % 3, 0, "bounds come in triples");
        let shared: Vec<&[u16]> = (parts.bounds.chunks_exact(3))
            .map(|b| {
                let chunk = &labels[b[0] as usize];
                assert!(b[1] <= b[2] && b[2] as usize <= chunk.len(), "label bounds");
                &chunk[b[1] as usize..b[2] as usize]
            })
            .collect();
        let string = |i: i32| -> Vec<u16> {
            let i = usize::try_from(i).expect("a string index");
            self.strings[i].to_utf16()
        };
        let mut out = Vec::new();
        let mut ops = parts.ops.iter().copied();
        while let Some(op) = ops.next() {
            if op >= 0 {
                out.extend(string(op));
            } else if op == OP_HEAD {
                let (i, n) = (
                    ops.next().expect("head index"),
                    ops.next().expect("head length"),
                );
                let s = string(i);
                let n = usize::try_from(n).expect("a head length");
                assert!(n < s.len(), "a head shorter than its string");
                out.extend(&s[..n]);
            } else {
                let k = usize::try_from(OP_LABEL_BASE - op).expect("a label");
                out.extend(shared[k]);
            }
        }
        out
    }
}

impl Sink<JsStr> for RecipeWriter {
    fn push_str(&mut self, s: &str) {
        self.recipe.push_str(s);
    }

    fn push_text(&mut self, text: &JsStr) {
        if self.as_piece() {
            let i = self.string(text);
            self.close_long_run();
            self.recipe.piece(i);
        } else {
            self.recipe.push_js_str(text);
        }
    }

    fn push_text_prefix(&mut self, text: &JsStr, units: usize) {
        if units >= text.utf16_len() {
            return self.push_text(text);
        }
        if self.as_piece() {
            let i = self.string(text);
            self.close_long_run();
            self.recipe.head(i, units as i32);
        } else {
            let mut b = Utf16Builder::new();
            text.push_prefix_into(units, &mut b);
            self.recipe.push_js_str(&b.finish());
        }
    }
}

/// A text of the projection plan target: a string of the flat form's texts
/// array, a short string, text made here, or the caller's own string read
/// natively, as the binding's texts are; each holds its characters.
#[derive(Clone, Debug)]
enum PlanFuzzText {
    Indexed(u32, JsStr),
    Short(JsStr, Vec<u16>),
    Made(JsStr),
    Caller(JsStr),
    /// The JSON of string `index` of the texts array (a long string
    /// argument), made where it is named.
    JsonOf(u32, JsStr),
}

impl PlanFuzzText {
    fn s(&self) -> &JsStr {
        match self {
            PlanFuzzText::Indexed(_, s)
            | PlanFuzzText::Short(s, _)
            | PlanFuzzText::Made(s)
            | PlanFuzzText::Caller(s)
            | PlanFuzzText::JsonOf(_, s) => s,
        }
    }
}

impl Text for PlanFuzzText {
    fn owned(s: JsStr) -> Self {
        PlanFuzzText::Made(s)
    }
    fn utf16_len(&self) -> usize {
        self.s().utf16_len()
    }
    fn is_blank(&self) -> bool {
        Text::is_blank(self.s())
    }
    fn code_unit_at(&self, index: usize) -> Option<u16> {
        Text::code_unit_at(self.s(), index)
    }
    fn splits_pair_at(&self, index: usize) -> bool {
        Text::splits_pair_at(self.s(), index)
    }
    fn push_prefix_into(&self, units: usize, out: &mut Utf16Builder) {
        Text::push_prefix_into(self.s(), units, out)
    }
    fn to_js_str(&self) -> JsStr {
        self.s().clone()
    }
    fn as_key(&self) -> TextKey<'_> {
        self.s().as_key()
    }
}

impl PlanText for PlanFuzzText {
    fn plan_source(&self) -> PlanSource<'_> {
        match self {
            PlanFuzzText::Indexed(i, _) => PlanSource::Indexed(*i),
            PlanFuzzText::Short(_, units) => PlanSource::Short(units),
            PlanFuzzText::Made(s) => PlanSource::Made(s),
            PlanFuzzText::Caller(_) | PlanFuzzText::JsonOf(..) => PlanSource::Caller,
        }
    }

    fn json_of_index(&self) -> Option<u32> {
        match self {
            PlanFuzzText::JsonOf(index, _) => Some(*index),
            _ => None,
        }
    }
}

/// The plan's values array, in order.
struct FuzzValues(Vec<JsStr>);

impl PlanValues<PlanFuzzText> for FuzzValues {
    fn set(&mut self, index: u32, value: PlanValue<'_, PlanFuzzText>) -> Result<(), Error> {
        assert_eq!(index as usize, self.0.len(), "values in order");
        self.0.push(match value {
            PlanValue::Str(s) => JsStr::from_str(s),
            PlanValue::JsStr(s) => s.clone(),
            PlanValue::Caller(t) => {
                assert!(matches!(t, PlanFuzzText::Caller(_)), "a caller's value");
                t.s().clone()
            }
        });
        Ok(())
    }
}

/// Gives each text of `messages` a source as the seed's bits say: the
/// texts array (`strings`), a short string (ids, names, arguments and mime
/// types only, as in the flat form), made here, or the caller's.
struct Sources<'a> {
    bits: u64,
    strings: &'a mut Vec<JsStr>,
}

impl Sources<'_> {
    fn pick(&mut self) -> u64 {
        self.bits = self.bits.rotate_left(2) ^ (self.bits >> 5) ^ 0x2545_F491;
        self.bits & 3
    }

    fn text(&mut self, s: &JsStr) -> PlanFuzzText {
        match self.pick() {
            0 | 1 => {
                self.strings.push(s.clone());
                PlanFuzzText::Indexed((self.strings.len() - 1) as u32, s.clone())
            }
            2 => PlanFuzzText::Made(s.clone()),
            _ => PlanFuzzText::Caller(s.clone()),
        }
    }

    fn short(&mut self, s: &JsStr) -> PlanFuzzText {
        match self.pick() {
            0 | 1 => PlanFuzzText::Short(s.clone(), s.to_utf16()),
            _ => self.text(s),
        }
    }

    /// An argument's JSON: that of a string value is, now and then, that
    /// string of the texts array, as the flat form passes a long one.
    fn json(&mut self, json: &JsStr) -> PlanFuzzText {
        if let Some(Ok(Value::String(v))) = json.as_str().map(json::parse) {
            if self.pick() < 2 {
                self.strings.push(v);
                return PlanFuzzText::JsonOf((self.strings.len() - 1) as u32, json.clone());
            }
        }
        self.short(json)
    }

    fn blocks(&mut self, blocks: &[Block]) -> Vec<Block<PlanFuzzText>> {
        (blocks.iter())
            .map(|b| match b {
                Block::Text(t) => Block::Text(self.text(t)),
                Block::Thinking { thinking, redacted } => Block::Thinking {
                    thinking: self.text(thinking),
                    redacted: *redacted,
                },
                Block::ToolCall(c) => Block::ToolCall(ToolCall {
                    id: self.short(&c.id),
                    name: self.short(&c.name),
                    args: (c.args.iter())
                        .map(|(k, j)| (self.short(k), j.as_ref().map(|j| self.json(j))))
                        .collect(),
                }),
                Block::Image { mime_type } => Block::Image {
                    mime_type: mime_type.clone(),
                },
            })
            .collect()
    }

    fn message(&mut self, m: &Message) -> Message<PlanFuzzText> {
        match m {
            Message::User(u) => Message::User(UserMessage {
                content: match &u.content {
                    UserContent::Text(t) => UserContent::Text(self.text(t)),
                    UserContent::Blocks(b) => UserContent::Blocks(self.blocks(b)),
                },
                timestamp: u.timestamp,
            }),
            Message::Assistant(a) => Message::Assistant(AssistantMessage {
                content: self.blocks(&a.content),
                timestamp: a.timestamp,
            }),
            Message::ToolResult(r) => Message::ToolResult(ToolResultMessage {
                tool_call_id: self.short(&r.tool_call_id),
                tool_name: self.short(&r.tool_name),
                is_error: r.is_error,
                content: self.blocks(&r.content),
                elided_units: r.elided_units,
                timestamp: r.timestamp,
            }),
        }
    }
}

/// Reads a plan as `projectionOfPlan` in flat-messages.js does, checking
/// that every code names something there.
struct PlanReader<'a> {
    codes: &'a [f64],
    at: usize,
    strings: &'a [JsStr],
    values: &'a [JsStr],
    shorts: Vec<u16>,
    args: Vec<Value>,
    next_args: usize,
}

impl PlanReader<'_> {
    fn code(&mut self) -> f64 {
        let c = *self.codes.get(self.at).expect("a code past the end");
        self.at += 1;
        c
    }

    fn index(&mut self) -> usize {
        let c = self.code();
        assert!(c >= 0.0 && c.fract() == 0.0, "an index: {c}");
        c as usize
    }

    fn text(&mut self) -> JsStr {
        let r = self.code();
        if r >= 0.0 {
            assert_eq!(r.fract(), 0.0);
            return self.strings.get(r as usize).expect("a string").clone();
        }
        if r == PLAN_SHORT {
            let (start, end) = (self.index(), self.index());
            assert!(start <= end && end <= self.shorts.len(), "short bounds");
            return JsStr::from_utf16(&self.shorts[start..end]);
        }
        let k = PLAN_VALUE_BASE - r;
        assert!(k >= 0.0 && k.fract() == 0.0, "a value code: {r}");
        self.values.get(k as usize).expect("a value").clone()
    }

    fn flag(&mut self) -> bool {
        let c = self.code();
        assert!(c == 0.0 || c == 1.0, "a flag: {c}");
        c == 1.0
    }

    fn blocks(&mut self) -> Vec<Block> {
        let n = self.index();
        let mut out = Vec::new();
        for _ in 0..n {
            let kind = self.code();
            out.push(if kind == PLAN_TEXT {
                Block::Text(self.text())
            } else if kind == PLAN_THINKING {
                let thinking = self.text();
                Block::Thinking {
                    thinking,
                    redacted: self.flag(),
                }
            } else if kind == PLAN_TOOL_CALL {
                let (id, name) = (self.text(), self.text());
                let n = self.code();
                let args = if n == PLAN_PARSED_ARGS {
                    let object = self.args.get(self.next_args).expect("parsed arguments");
                    self.next_args += 1;
                    let object = object.as_object().expect("an arguments object");
                    (object.iter())
                        .map(|(k, v)| (k.clone(), Some(stringify(v))))
                        .collect()
                } else {
                    assert!(n >= 0.0 && n.fract() == 0.0, "an argument count: {n}");
                    (0..n as usize)
                        .map(|_| {
                            let key = self.text();
                            let held = self.code();
                            let json = if held == PLAN_NO_JSON {
                                None
                            } else if held == PLAN_JSON {
                                Some(self.text())
                            } else {
                                assert_eq!(held, PLAN_STRING_VALUE, "how a value is held");
                                let i = self.index();
                                let v = self.strings.get(i).expect("a string value");
                                Some(stringify(&Value::String(v.clone())))
                            };
                            (key, json)
                        })
                        .collect()
                };
                Block::ToolCall(ToolCall { id, name, args })
            } else {
                assert_eq!(kind, PLAN_IMAGE, "a block kind");
                Block::Image {
                    mime_type: self.flag().then(|| self.text()),
                }
            });
        }
        out
    }

    fn messages(mut self) -> Vec<Message> {
        let mut out = Vec::new();
        while self.at < self.codes.len() {
            let kind = self.code();
            let timestamp = self.flag().then_some(0.0);
            let t = self.code();
            let timestamp = timestamp.map(|_| t);
            out.push(if kind == PLAN_USER_TEXT {
                Message::User(UserMessage {
                    content: UserContent::Text(self.text()),
                    timestamp,
                })
            } else if kind == PLAN_USER {
                Message::User(UserMessage {
                    content: UserContent::Blocks(self.blocks()),
                    timestamp,
                })
            } else if kind == PLAN_ASSISTANT {
                Message::Assistant(AssistantMessage {
                    content: self.blocks(),
                    timestamp,
                })
            } else {
                assert_eq!(kind, PLAN_TOOL_RESULT, "a message kind");
                let (tool_call_id, tool_name) = (self.text(), self.text());
                let is_error = self.flag();
                Message::ToolResult(ToolResultMessage {
                    tool_call_id,
                    tool_name,
                    is_error,
                    content: self.blocks(),
                    elided_units: 0,
                    timestamp,
                })
            });
        }
        assert_eq!(
            self.next_args,
            self.args.len(),
            "every parsed argument used"
        );
        out
    }
}

/// The projection plan (`projection::plan`), which `projectForSummary`
/// hands to flat-messages.js to build the projected messages from: the
/// input's first byte chooses where each text comes from (the flat form's
/// texts, short strings, made here, the caller's) and the retry level, the
/// rest is JSON messages as `convertToLlm` converts them. Read back as
/// `projectionOfPlan` reads it, the plan must name only what is there and
/// give exactly the messages `project` gives.
pub fn projection_plan(data: &[u8]) {
    let Some((seed, messages)) = byte_then_messages(data) else {
        return;
    };
    checked();
    let mut strings = Vec::new();
    let mut sources = Sources {
        bits: u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        strings: &mut strings,
    };
    let sourced: Vec<_> = messages.iter().map(|m| sources.message(m)).collect();
    let attempt = usize::from(seed % 3);
    let bound = [0, 40, 2000][usize::from(seed / 3 % 3)];
    let options = attempt_options(attempt, seed & 0x40 != 0, bound);
    let mut plan = PlanWriter::new(FuzzValues(Vec::new()), sourced.len());
    project_each(&sourced, &options, |m| {
        plan.projected(m).expect("values are taken");
    });
    let parts = plan.finish();
    let args = match &parts.args {
        None => Vec::new(),
        Some(a) => {
            let text = String::from_utf16(&a.units(0..a.len())).expect("arguments JSON is text");
            match json::parse(&text) {
                Ok(Value::Array(a)) => a,
                other => panic!("arguments JSON {text:?} parsed as {other:?}"),
            }
        }
    };
    let reader = PlanReader {
        codes: &parts.codes,
        at: 0,
        strings: &strings,
        values: &parts.values.0,
        shorts: parts.shorts.units(0..parts.shorts.len()),
        args,
        next_args: 0,
    };
    let read = reader.messages();
    let expected = without_elided(project(&messages, &options));
    assert_eq!(read, expected, "the projected messages");
}

/// The codes of the paths read ahead for collectEntriesForBranchSummary
/// (`plan::branch_summary::entry_path`), from arbitrary bytes: the first
/// byte is the length of the ids' run, each later byte a code (the four
/// kinds, lengths short and long, junk negatives, the i32 extremes).
/// **Differential**: [`PathCodes`] accepts a step exactly when a plain
/// reading of lib/entry-path.js's rules does, with the same units; what it
/// accepts tiles the run from its start, in order, and encodes back to the
/// very codes read; after a malformed step it reads nothing more.
pub fn entry_path(data: &[u8]) {
    use prime_compaction_core::boundary_codes::entry_path::{NOT_READ, NOT_STRING, SAME, THREW};
    use prime_compaction_core::plan::branch_summary::entry_path::{
        encode, PathCodes, PathStep, StepId, StepParent,
    };
    let Some((&units, rest)) = data.split_first() else {
        return;
    };
    let units = usize::from(units);
    let codes: Vec<i32> = rest
        .iter()
        .map(|&b| match b {
            0xff => i32::MAX,
            0xfe => i32::MIN,
            _ => match b % 8 {
                0 => THREW,
                1 => SAME,
                2 => NOT_READ,
                3 => NOT_STRING,
                4 => -5 - i32::from(b >> 3),
                5 => i32::from(b >> 3),
                _ => i32::from(b >> 3) % 9,
            },
        })
        .collect();
    // The rules as lib/entry-path.js writes steps: the units a step takes
    // from the run, or None for codes no writer makes.
    let expected = |id: i32, parent: i32| -> Option<usize> {
        let len = |code: i32| usize::try_from(code).ok();
        match id {
            THREW | NOT_STRING => (parent == NOT_READ).then_some(0),
            _ => {
                let own = if id == SAME { 0 } else { len(id)? };
                let parent = if parent == NOT_STRING {
                    0
                } else {
                    len(parent)?
                };
                own.checked_add(parent)
            }
        }
    };
    let mut reader = PathCodes::new(&codes, units);
    let mut steps: Vec<PathStep> = Vec::new();
    let mut unit_at = 0usize;
    loop {
        let at = 2 * steps.len();
        match reader.next_step() {
            Ok(None) => {
                assert_eq!(at, codes.len(), "the reader stopped before the codes' end");
                break;
            }
            Ok(Some(step)) => {
                let (id, parent) = (codes[at], codes[at + 1]);
                let taken = expected(id, parent).expect("a step no writer makes was read");
                let mut next = unit_at;
                for range in [
                    match &step.id {
                        StepId::Units(r) => Some(r.clone()),
                        _ => None,
                    },
                    match &step.parent {
                        StepParent::Units(r) => Some(r.clone()),
                        _ => None,
                    },
                ]
                .into_iter()
                .flatten()
                {
                    assert_eq!(
                        range.start, next,
                        "an id's units do not follow the last one's"
                    );
                    assert!(range.end <= units, "an id's units past the run");
                    next = range.end;
                }
                assert_eq!(next - unit_at, taken, "units taken differ from the rules'");
                unit_at = next;
                steps.push(step);
            }
            Err(_) => {
                let fits = codes.get(at..at + 2).and_then(|c| expected(c[0], c[1]));
                assert!(
                    fits.is_none_or(|taken| unit_at + taken > units),
                    "a step the rules allow was malformed"
                );
                assert!(reader.next_step().is_err(), "read on past a malformed step");
                break;
            }
        }
    }
    assert_eq!(
        encode(&steps),
        codes[..2 * steps.len()],
        "decoded steps encode back differently"
    );
}

/// The compaction job (`summary::compact::Job`) over messages from JSON,
/// driven by a scripted model. The first byte chooses the job (agent line,
/// split turn, branch summary, custom instructions, previous summary,
/// reasoning, window), the second where the messages split into history
/// and turn prefix, the next six the model's answers in turn (overflow by
/// message or by a full window, a summary, an empty one, another error, an
/// abort, a tool call, a stop at the output limit); the rest is the
/// messages as JSON.
///
/// What must hold: the job asks at most one whole request per part plus
/// the compaction's two smaller retries; a retry asks the same part again
/// at a later shrink step with a prompt shorter than the one that
/// overflowed; a finished part hands on to the next part's whole request;
/// every request carries the custom instructions; a failure or a summary
/// ends the job, and a summary holds the last answer (after the branch
/// preamble for a branch summary).
pub fn compact_job(data: &[u8]) {
    use prime_compaction_core::summary::compact::{
        AnswerUsage, BranchOptions, Job, JobInput, ModelLimits, Part, Response, Stop, Transcript,
    };
    use prime_compaction_core::summary::message_transcript::MessageTranscript;
    use prime_compaction_core::summary::prompts::BRANCH_SUMMARY_PREAMBLE;
    use prime_compaction_core::summary::retry::{shrink_for, MAX_OVERFLOW_RETRIES};

    const CUSTOM: &str = "Keep every file path.";
    const SUMMARY: &str = "## Goal\nThe summary.";
    if data.len() < 8 {
        return;
    }
    let (control, json) = data.split_at(8);
    let Some(mut messages) = messages_of_json(json) else {
        return;
    };
    checked();
    let flags = control[0];
    let line = if flags & 1 == 0 {
        &AgentLine::V0_78
    } else {
        &AgentLine::V1_6
    };
    let branch = flags & 4 != 0;
    let split = !branch && flags & 2 != 0;
    let reasoning = flags & 32 != 0;
    let context_window = match control[1] % 3 {
        0 => 0.0,
        1 => 4_096.0,
        _ => 200_000.0,
    };
    let prefix = if split {
        let at = usize::from(control[1] / 3) % (messages.len() + 1);
        Some(messages.split_off(at))
    } else {
        None
    };
    let history_is_empty = messages.is_empty();
    let history_messages = messages.clone();
    let prefix_messages = prefix.clone().unwrap_or_default();
    let limits = ModelLimits {
        max_tokens: 8_192.0,
        context_window,
    };
    let custom = flags & 8 != 0;
    let input = JobInput {
        line,
        wants_reasoning: reasoning,
        history: MessageTranscript {
            messages,
            reasoning,
        },
        history_is_empty,
        turn_prefix: prefix.map(|messages| MessageTranscript {
            messages,
            reasoning,
        }),
        previous_summary: (flags & 16 != 0).then(|| JsStr::from_str("Earlier work.")),
        custom_instructions: custom.then(|| JsStr::from_str(CUSTOM)),
        reserve_tokens: 16_384.0,
        limits,
        read_files: vec![JsStr::from_str("a.ts")],
        modified_files: vec![],
        branch: branch.then_some(BranchOptions {
            replace_instructions: flags & 128 != 0,
        }),
    };
    let answer = |code: u8| {
        let (stop, error, texts, tool): (Stop, Option<&str>, &[&str], bool) = match code % 8 {
            0 => (
                Stop::Error,
                Some("prompt is too long: 213462 tokens > 200000 maximum"),
                &[],
                false,
            ),
            1 | 7 => (Stop::Length, None, &[], false),
            2 => (Stop::Finished, None, &[SUMMARY], false),
            3 => (Stop::Finished, None, &[" ", "\n"], false),
            4 => (Stop::Error, Some("internal server error"), &[], false),
            5 => (Stop::Aborted, None, &[], false),
            _ => (Stop::Finished, None, &[SUMMARY], true),
        };
        Response {
            stop,
            error_message: error.map(JsStr::from_str),
            texts: texts.iter().map(|t| JsStr::from_str(t)).collect(),
            has_tool_call: tool,
            // Code 1: the input filled a known window and nothing came out.
            usage: AnswerUsage {
                input: Some(if code % 8 == 1 { context_window } else { 10.0 }),
                cache_read: Some(0.0),
                output: Some(0.0),
            },
        }
    };
    let mut job = Job::new(input);
    let mut answers = control[2..].iter().copied();
    let mut requests = 0;
    let mut retries = 0;
    let mut last: Option<(Part, u8, usize)> = None;
    let mut retrying = false;
    let mut last_retry = 0;
    while let Some(request) = job.next_request() {
        requests += 1;
        let units = request.prompt.utf16_len();
        assert!(
            request.attempt <= MAX_OVERFLOW_RETRIES,
            "shrink step past the last"
        );
        assert!(
            request
                .prompt
                .to_string_lossy()
                .starts_with("<conversation>\n"),
            "a request opens with its conversation"
        );
        if custom {
            assert!(
                request.prompt.to_string_lossy().contains(CUSTOM),
                "a request without the custom instructions"
            );
        }
        if let Some((part, attempt, sent)) = last {
            if retrying {
                assert_eq!(request.part, part, "a retry asks for another part");
                assert!(request.attempt > attempt, "a retry at no later shrink step");
                assert!(units < sent, "a retry no shorter ({units} >= {sent} units)");
                // The steps are the compaction's: a split turn's prefix goes
                // on past the history's last retry (to the last step at least).
                assert!(
                    request.attempt >= (last_retry + 1).min(MAX_OVERFLOW_RETRIES),
                    "a retry at step {} after one at step {last_retry}",
                    request.attempt
                );
                last_retry = request.attempt;
            } else {
                assert_eq!(
                    (part, request.part, request.attempt),
                    (Part::History, Part::TurnPrefix, 0),
                    "after a finished part, only the turn prefix's whole request"
                );
            }
        }
        let response = answer(answers.next().unwrap_or(2));
        let overflow = response
            .error_message
            .as_ref()
            .is_some_and(|m| m.utf16_len() > 40)
            || (response.stop == Stop::Length
                && context_window > 0.0
                && response.usage.input == Some(context_window));
        match job.on_response(&response) {
            Ok(true) => {
                assert!(
                    response.stop == Stop::Finished && !response.has_tool_call,
                    "a part finished by {response:?}"
                );
                retrying = false;
            }
            Ok(false) => {
                assert!(overflow, "a retry after {response:?}");
                retrying = true;
                retries += 1;
            }
            Err(_) => {
                if overflow && retries < MAX_OVERFLOW_RETRIES {
                    // Rejected with retries left: no step was smaller, the
                    // last one included (every part may go on to it).
                    let transcript = MessageTranscript {
                        messages: match request.part {
                            Part::TurnPrefix => prefix_messages.clone(),
                            _ => history_messages.clone(),
                        },
                        reasoning,
                    };
                    // The answer's room is 8,192 tokens in every request here.
                    let whole = transcript
                        .render(&shrink_for(0, &limits, 8_192.0, 0))
                        .utf16_len();
                    let units = |step| {
                        transcript
                            .render(&shrink_for(step, &limits, 8_192.0, whole))
                            .utf16_len()
                    };
                    assert!(
                        units(MAX_OVERFLOW_RETRIES) >= units(request.attempt),
                        "an overflow rejected with a smaller step left"
                    );
                }
                assert!(job.next_request().is_none(), "a failed job asks again");
                assert!(job.summary().is_none(), "a failed job has a summary");
                break;
            }
        }
        last = Some((request.part, request.attempt, units));
    }
    let parts = if split && !history_is_empty { 2 } else { 1 };
    assert!(retries <= MAX_OVERFLOW_RETRIES, "{retries} smaller retries");
    assert!(
        requests <= parts + usize::from(MAX_OVERFLOW_RETRIES),
        "{requests} requests for {parts} parts"
    );
    if let Some(summary) = job.summary() {
        assert!(!retrying, "a summary after an overflow");
        let summary = summary.to_string_lossy();
        let expected = if branch {
            format!("{BRANCH_SUMMARY_PREAMBLE}{SUMMARY}")
        } else {
            SUMMARY.to_string()
        };
        assert!(
            summary.starts_with(&expected) || (split && summary.contains(SUMMARY)),
            "the summary does not hold the answer: {summary:?}"
        );
        assert!(summary.ends_with("</read-files>"), "no file lists");
        assert_eq!(job.answered().len(), requests - retries as usize);
    }
}

/// lib/context-facts.js's chunks for a context of messages the first
/// byte's bits choose ([`context_message`]), pushed as the bytes give
/// them (a malformed one changes nothing), then both context estimates
/// over the facts held, read natively from each place a call can start
/// from, and asking: an ask names messages the facts do not hold, and
/// without facts and asking nothing the estimate is the plain one.
pub fn context_facts(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(mode & 0x3f);
    let value = Value::Array((0..n).map(|i| context_message(mode, i)).collect());
    let val = Val::new(&value);
    let mut facts = ContextFacts::new(n);
    let mut bytes = rest.iter().copied();
    let mut next = move || bytes.next();
    while let Some(op) = next() {
        let mut take = |count: usize, mask: u8| -> Vec<u8> {
            (0..count).map_while(|_| next().map(|b| b & mask)).collect()
        };
        let count = usize::from(op & 0x1f);
        // The chunk ends where the facts begin, unless the op's top bit says otherwise.
        let to = if op & 0x80 != 0 {
            usize::from(take(1, 0x7f).first().copied().unwrap_or(0))
        } else {
            facts.from()
        };
        let roles = take(count, 0x1f);
        let usages = take(count, 0x0f);
        let numbers = usize::from(take(1, 0x1f).first().copied().unwrap_or(0));
        let values: Vec<f64> = take(5 * numbers, 0xff)
            .into_iter()
            .map(|b| {
                if b == 0xff {
                    f64::NAN
                } else {
                    f64::from(b) - 8.0
                }
            })
            .collect();
        let at: Vec<u32> = take(count, 0x7f).into_iter().map(u32::from).collect();
        let forms = take(count, 0x03);
        let counts: Vec<u32> = take(count, 0x03).into_iter().map(u32::from).collect();
        let n_blocks = usize::from(take(1, 0x0f).first().copied().unwrap_or(0));
        let blocks = take(n_blocks, 0x07);
        let n_lengths = usize::from(take(1, 0x1f).first().copied().unwrap_or(0));
        let lengths: Vec<u32> = take(n_lengths, 0x3f).into_iter().map(u32::from).collect();
        let before = facts.clone();
        let pushed = facts.push(&ContextChunk {
            to,
            roles: &roles,
            usages: &usages,
            values: &values,
            measures: MeasuresChunk {
                at: &at,
                forms: &forms,
                counts: &counts,
                blocks: &blocks,
                lengths: &lengths,
            },
        });
        // (Debug: the usage numbers may be NaN, which no facts equal)
        if pushed.is_err() {
            assert_eq!(
                format!("{facts:?}"),
                format!("{before:?}"),
                "a malformed chunk changed the facts"
            );
        }
    }
    checked();
    let none = ContextFacts::new(n);
    for line in AgentLine::ALL {
        let plain =
            MessageArray::new(&val).map(|a| context_estimate(&a, Counter::Estimate, &line.tokens));
        let Ok(plain) = plain else {
            return;
        };
        let without = FactsList::new(MessageArray::new(&val).unwrap(), &none, 0);
        assert_eq!(
            context_estimate(&without, Counter::Estimate, &line.tokens),
            plain,
            "no facts and no asks changed the estimate"
        );
        for held in [&none, &facts] {
            for reads_from in [0, n.saturating_sub(16), n] {
                let list = FactsList::new(MessageArray::new(&val).unwrap(), held, reads_from);
                let estimates = [
                    context_estimate(&list, Counter::Estimate, &line.tokens),
                    projected_context_tokens(&list, Counter::Estimate, &line.tokens, |i| {
                        Ok(i % 2 == 0)
                    }),
                ];
                for estimate in estimates {
                    if let Err(err) = estimate {
                        if err.kind == ErrorKind::FactsWanted {
                            let (k, to) = list.wanted().expect("an ask names what it wants");
                            assert!(k < to && to == held.from(), "an ask for messages held");
                        }
                    }
                }
            }
        }
    }
}

/// Message `i` of [`context_facts`]'s contexts: users, assistants (a text
/// and a read call; a usage, zero or not, as the mode's bits say) and tool
/// results.
fn context_message(mode: u8, i: usize) -> Value {
    let (text, obj) = (json_text, json_object);
    let block = |ty: &str, pairs: Vec<(&str, Value)>| {
        let mut all = vec![("type", text(ty))];
        all.extend(pairs);
        obj(all)
    };
    match i % 3 {
        0 => obj(vec![("role", text("user")), ("content", text("do it"))]),
        1 => {
            let tokens = if mode & 0x40 != 0 && i % 7 == 1 {
                100.0 + i as f64
            } else {
                0.0
            };
            let usage = obj(
                ["totalTokens", "input", "output", "cacheRead", "cacheWrite"]
                    .iter()
                    .map(|k| {
                        (
                            *k,
                            Value::Number(if *k == "totalTokens" { tokens } else { 0.0 }),
                        )
                    })
                    .collect(),
            );
            obj(vec![
                ("role", text("assistant")),
                (
                    "stopReason",
                    text(if i % 5 == 1 { "error" } else { "stop" }),
                ),
                ("usage", usage),
                (
                    "content",
                    Value::Array(vec![
                        block("text", vec![("text", text("ok"))]),
                        block(
                            "toolCall",
                            vec![
                                ("name", text("read")),
                                ("arguments", obj(vec![("path", text("a.txt"))])),
                            ],
                        ),
                    ]),
                ),
            ])
        }
        _ => obj(vec![
            ("role", text("toolResult")),
            (
                "content",
                Value::Array(vec![
                    block("text", vec![("text", text("r"))]),
                    block("image", vec![]),
                ]),
            ),
        ]),
    }
}

/// Projection options like those of overflow retry `attempt` (0 to 2), with
/// `bound` on a round from the first retry on.
fn attempt_options(attempt: usize, reasoning: bool, bound: usize) -> ProjectOptions {
    ProjectOptions {
        tool_result_bodies: [3, 1, 0][attempt.min(2)],
        drop_oldest_rounds: attempt,
        round_bound: (attempt > 0).then_some(bound),
        reasoning,
    }
}
