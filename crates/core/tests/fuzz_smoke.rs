//! CI smoke run of the fuzz targets on stable Rust: each target's body (the
//! same code libFuzzer runs, `fuzz/src/bodies.rs`) over a few thousand
//! generated inputs from a seeded generator that knows the session format,
//! plus byte-level mutations of them. `FUZZ_SMOKE_ITERS` sets the count;
//! `FUZZ_SEED_DIR=$PWD/fuzz/corpus` (an absolute path: the test runs in
//! `crates/core`) also writes the inputs out as a seed corpus.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../fuzz/src/bodies.rs"]
mod bodies;
mod number_corpus;

use prime_compaction_core::js::json::{stringify, Object, Value};
use prime_compaction_core::js::string::JsStr;

/// xorshift64*: small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const ENTRY_TYPES: &[&str] = &[
    "message",
    "message",
    "message",
    "compaction",
    "branch_summary",
    "custom_message",
    "custom",
    "model_change",
    "thinking_level_change",
    "label",
    "session",
    "context_edit",
    "usage",
];
const ROLES: &[&str] = &[
    "user",
    "assistant",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
    "system",
];
const BLOCKS: &[&str] = &["text", "thinking", "toolCall", "image", "redacted"];
const TOOLS: &[&str] = &["read", "write", "edit", "bash", "grep"];
const STOP: &[&str] = &["stop", "length", "toolUse", "error", "aborted"];
const TEXTS: &[&str] = &[
    "",
    "hello",
    "a\u{1F600}b",
    "line\nbreak\t\"q\"\\",
    "\u{7}\u{1f}",
    "1e21",
    "__proto__",
];
const NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e21,
    1e-7,
    123456789012345680000.0,
    f64::MAX,
    f64::MIN_POSITIVE,
    5e-324,
    4294967295.0,
    9007199254740993.0,
];

fn s(x: &str) -> Value {
    Value::String(JsStr::from_str(x))
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(Object::from_entries(
        pairs
            .into_iter()
            .map(|(k, v)| (JsStr::from_str(k), v))
            .collect(),
    ))
}

struct Gen {
    rng: Rng,
    /// How often (percent) a field is junk, chosen per input (`run_n`): with
    /// one rate for all, almost every list of a few messages held a junk
    /// field, and the bodies rejected it before their checks.
    junk_percent: usize,
}

impl Gen {
    /// Any JSON value, shallow; lone surrogates included.
    fn junk(&mut self, depth: usize) -> Value {
        match self.rng.below(if depth > 3 { 5 } else { 8 }) {
            0 => Value::Null,
            1 => Value::Bool(self.rng.chance(50)),
            2 => Value::Number(
                *self.rng.pick(NUMBERS) * if self.rng.chance(20) { -3.0 } else { 1.0 },
            ),
            3 => s(TEXTS[self.rng.below(TEXTS.len())]),
            4 => Value::String(JsStr::from_utf16(&[0xD83D, 0x41, 0xDE00])),
            5 => Value::Array(
                (0..self.rng.below(4))
                    .map(|_| self.junk(depth + 1))
                    .collect(),
            ),
            _ => obj(vec![
                ("type", self.junk(depth + 1)),
                ("text", self.junk(depth + 1)),
                ("0", self.junk(depth + 1)),
            ]),
        }
    }

    /// A plausible value for a field, or junk `junk_percent` of the time.
    fn or_junk(&mut self, v: Value) -> Value {
        if self.rng.chance(self.junk_percent) {
            self.junk(2)
        } else {
            v
        }
    }

    fn text(&mut self) -> Value {
        let base = *self.rng.pick(TEXTS);
        let v = if self.rng.chance(10) {
            s(&base.repeat(self.rng.below(3000)))
        } else {
            s(base)
        };
        self.or_junk(v)
    }

    fn block(&mut self) -> Value {
        let ty = *self.rng.pick(BLOCKS);
        let mut pairs = vec![("type", s(ty))];
        match ty {
            "text" => pairs.push(("text", self.text())),
            "thinking" => {
                pairs.push(("thinking", self.text()));
                if self.rng.chance(20) {
                    pairs.push(("redacted", Value::Bool(true)));
                }
            }
            "toolCall" => {
                let tool = *self.rng.pick(TOOLS);
                pairs.push(("id", s(&format!("call{}", self.rng.below(5)))));
                pairs.push(("name", s(tool)));
                let args = obj(vec![("path", self.text()), ("command", self.text())]);
                pairs.push(("arguments", self.or_junk(args)));
            }
            "image" => {
                pairs.push(("data", s("AAAA")));
                pairs.push(("mimeType", s("image/png")));
            }
            _ => {}
        }
        self.or_junk(obj(pairs))
    }

    fn content(&mut self) -> Value {
        if self.rng.chance(30) {
            self.text()
        } else {
            let blocks = (0..self.rng.below(4)).map(|_| self.block()).collect();
            self.or_junk(Value::Array(blocks))
        }
    }

    fn message(&mut self) -> Value {
        let role = *self.rng.pick(ROLES);
        let mut pairs = vec![("role", self.or_junk(s(role))), ("content", self.content())];
        match role {
            "assistant" => {
                let usage = obj(vec![
                    ("input", Value::Number(self.rng.below(5000) as f64)),
                    ("output", Value::Number(self.rng.below(500) as f64)),
                    ("cacheRead", Value::Number(0.0)),
                    ("cacheWrite", Value::Number(0.0)),
                    ("totalTokens", Value::Number(self.rng.below(6000) as f64)),
                ]);
                pairs.push(("usage", self.or_junk(usage)));
                pairs.push(("stopReason", s(STOP[self.rng.below(STOP.len())])));
            }
            "toolResult" => {
                pairs.push(("toolCallId", s(&format!("call{}", self.rng.below(5)))));
                pairs.push(("toolName", s(TOOLS[self.rng.below(TOOLS.len())])));
                pairs.push(("isError", Value::Bool(self.rng.chance(20))));
            }
            "bashExecution" => {
                pairs.push(("command", self.text()));
                pairs.push(("output", self.text()));
                pairs.push(("exitCode", self.or_junk(Value::Number(1.0))));
                pairs.push(("excludeFromContext", Value::Bool(self.rng.chance(20))));
            }
            "custom" => pairs.push(("customType", s("note"))),
            "branchSummary" | "compactionSummary" => pairs.push(("summary", self.text())),
            "system" => {
                let sections = obj(vec![("a", self.text()), ("b", Value::Null)]);
                pairs.push(("sections", self.or_junk(sections)));
                let tool = obj(vec![("name", s(TOOLS[self.rng.below(TOOLS.len())]))]);
                pairs.push(("toolsAdded", self.or_junk(Value::Array(vec![tool.clone()]))));
                pairs.push(("toolsRemoved", self.or_junk(Value::Array(vec![tool]))));
            }
            _ => {}
        }
        if role == "toolResult" && self.rng.chance(30) {
            let call = obj(vec![
                ("name", s(TOOLS[self.rng.below(TOOLS.len())])),
                ("arguments", obj(vec![("path", self.text())])),
                ("status", s("ok")),
            ]);
            let junk = self.junk(2);
            let calls = self.or_junk(Value::Array(vec![call, junk]));
            let nested = obj(vec![("calls", calls)]);
            pairs.push(("nestedCalls", self.or_junk(nested)));
        }
        pairs.push(("timestamp", self.or_junk(Value::Number(1.7e12))));
        self.or_junk(obj(pairs))
    }

    fn entry(&mut self, i: usize) -> Value {
        let ty = *self.rng.pick(ENTRY_TYPES);
        let id = format!("e{i}");
        let parent = if i == 0 {
            Value::Null
        } else {
            s(&format!("e{}", self.rng.below(i + 1)))
        };
        let mut pairs = vec![
            ("type", self.or_junk(s(ty))),
            ("id", self.or_junk(s(&id))),
            ("parentId", self.or_junk(parent)),
            ("timestamp", s("2026-01-01T00:00:00.000Z")),
        ];
        match ty {
            "message" => pairs.push(("message", self.message())),
            "compaction" => {
                pairs.push(("summary", self.text()));
                pairs.push((
                    "firstKeptEntryId",
                    s(&format!("e{}", self.rng.below(i + 2))),
                ));
                pairs.push(("tokensBefore", Value::Number(1000.0)));
                let details = obj(vec![
                    ("readFiles", Value::Array(vec![s("a.rs"), self.junk(2)])),
                    ("modifiedFiles", Value::Array(vec![s("b.rs")])),
                ]);
                pairs.push(("details", self.or_junk(details)));
                pairs.push(("fromHook", Value::Bool(self.rng.chance(20))));
                if self.rng.chance(30) {
                    let system = obj(vec![
                        ("role", s("system")),
                        ("content", self.text()),
                        ("timestamp", Value::Number(0.0)),
                    ]);
                    pairs.push(("systemMessage", self.or_junk(system)));
                }
            }
            "context_edit" => {
                let target = s(&format!("e{}", self.rng.below(i + 1)));
                pairs.push(("targetId", self.or_junk(target)));
                let replacement = if self.rng.chance(40) {
                    Value::Null
                } else {
                    obj(vec![("content", self.content())])
                };
                pairs.push(("replacement", self.or_junk(replacement)));
            }
            "branch_summary" => {
                pairs.push(("summary", self.text()));
                pairs.push(("fromId", s("e0")));
            }
            "custom_message" => {
                pairs.push(("customType", s("note")));
                pairs.push(("content", self.content()));
                pairs.push(("display", Value::Bool(true)));
            }
            _ => {}
        }
        self.or_junk(obj(pairs))
    }

    fn entries(&mut self) -> Value {
        let n = self.rng.below(40);
        Value::Array((0..n).map(|i| self.entry(i)).collect())
    }

    fn messages(&mut self) -> Value {
        let n = self.rng.below(30);
        Value::Array((0..n).map(|_| self.message()).collect())
    }

    /// Flips, inserts or deletes a few bytes.
    fn mutate(&mut self, mut bytes: Vec<u8>) -> Vec<u8> {
        for _ in 0..1 + self.rng.below(4) {
            let at = self.rng.below(bytes.len() + 1);
            match self.rng.below(3) {
                0 if at < bytes.len() => bytes[at] = self.rng.next() as u8,
                1 => bytes.insert(at, *self.rng.pick(b"{}[]\",:0-e.\\\n\r ")),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        bytes
    }

    /// `v` as JSON, a quarter of it with bytes mutated (none in a clean input).
    fn json(&mut self, v: &Value) -> Vec<u8> {
        let bytes = stringify(v).to_string_lossy().into_owned().into_bytes();
        if self.junk_percent > 0 && self.rng.chance(25) {
            self.mutate(bytes)
        } else {
            bytes
        }
    }

    fn session_file(&mut self) -> Vec<u8> {
        let header = obj(vec![
            ("type", s("session")),
            ("version", self.or_junk(Value::Number(3.0))),
            ("id", s("sess")),
            ("timestamp", s("2026-01-01T00:00:00.000Z")),
            ("cwd", s("/tmp")),
        ]);
        let mut out = self.json(&header);
        let entries = self.entries();
        for e in entries.as_array().into_iter().flatten() {
            out.extend_from_slice(if self.rng.chance(10) { b"\r\n" } else { b"\n" });
            if self.rng.chance(5) {
                out.extend_from_slice(b" \t\n");
            }
            if self.junk_percent > 0 && self.rng.chance(3) {
                out.extend_from_slice(&[0xff, 0xfe]);
            }
            let line = self.json(e);
            out.extend_from_slice(&line);
        }
        out
    }

    /// A chunk-size byte, then a session file.
    fn chunked_session_file(&mut self) -> Vec<u8> {
        let mut out = vec![self.rng.next() as u8];
        out.extend(self.session_file());
        out
    }

    /// Arbitrary flat codes (`bodies::flat_messages`' odd mode): message
    /// and block kinds with counts and lengths near the texts there are,
    /// now and then a wrong one or a whole `i32`.
    fn flat_codes(&mut self) -> Vec<u8> {
        let mut out = vec![
            1 + 2 * self.rng.below(128) as u8,
            self.rng.below(8) as u8,
            self.rng.below(64) as u8,
            if self.rng.chance(90) {
                0
            } else {
                0x80 | self.rng.below(8) as u8
            },
        ];
        let small = |g: &mut Gen| -> u8 {
            if g.rng.chance(5) {
                (g.rng.below(256)) as u8
            } else {
                g.rng.below(6) as u8
            }
        };
        for i in 0..self.rng.below(8) {
            match self.rng.below(6) {
                0 => out.extend([0, i as u8]),
                1 => out.extend([1, small(self), small(self)]),
                k => {
                    out.push(k as u8);
                    if k == 4 {
                        out.extend([small(self), small(self), small(self)]);
                    }
                    let n = self.rng.below(4);
                    out.push(n as u8);
                    for _ in 0..n {
                        match 5 + self.rng.below(4) {
                            7 => {
                                let args = self.rng.below(3);
                                out.extend([7, small(self), small(self), args as u8]);
                                // Key, JSON length (or none) and where the
                                // JSON is: the short units, a text, or the
                                // JSON of a text (-2 - index).
                                for _ in 0..args {
                                    out.extend([
                                        small(self),
                                        if self.rng.chance(30) {
                                            0xff
                                        } else {
                                            small(self)
                                        },
                                        match self.rng.below(5) {
                                            0 => small(self),
                                            1 => (-2 - self.rng.below(8) as i8) as u8,
                                            _ => 0xff,
                                        },
                                    ]);
                                }
                            }
                            8 => out.extend([
                                8,
                                if self.rng.chance(30) {
                                    0xff
                                } else {
                                    small(self)
                                },
                            ]),
                            b => out.extend([b as u8, small(self), small(self), small(self)]),
                        }
                    }
                }
            }
        }
        if self.rng.chance(10) {
            out.extend([0x7f, 0xff, 0xff, 0xff, 0x7f]);
        }
        if self.rng.chance(20) {
            out = self.mutate(out);
        }
        out
    }

    fn number_input(&mut self) -> Vec<u8> {
        let x = match self.rng.below(4) {
            0 => f64::from_bits(self.rng.next()),
            1 => *self.rng.pick(NUMBERS),
            2 => (self.rng.next() % 10_000_000) as f64 / [1.0, 10.0, 1e3, 1e7][self.rng.below(4)],
            _ => 10f64.powi(self.rng.below(640) as i32 - 330) * (1 + self.rng.below(9)) as f64,
        };
        let mut out = x.to_bits().to_le_bytes().to_vec();
        for _ in 0..self.rng.below(12) {
            let unit: u16 = match self.rng.below(4) {
                0 => self.rng.below(0x20) as u16,
                1 => 0xD800 + self.rng.below(0x800) as u16,
                2 => *self.rng.pick(&[0x22, 0x5C, 0x2F, 0x7F, 0x2028, 0xFEFF]),
                _ => self.rng.next() as u16,
            };
            out.extend_from_slice(&unit.to_le_bytes());
        }
        out
    }
}

fn iterations() -> usize {
    std::env::var("FUZZ_SMOKE_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

fn run(target: &str, seed: u64, make: impl Fn(&mut Gen) -> Vec<u8>, body: fn(&[u8])) {
    run_n(target, seed, iterations(), make, body);
}

/// Junk rates an input is generated with: clean, now and then, often.
const JUNK_PERCENTS: [usize; 4] = [0, 0, 2, 15];

fn run_n(
    target: &str,
    seed: u64,
    count: usize,
    make: impl Fn(&mut Gen) -> Vec<u8>,
    body: fn(&[u8]),
) {
    let mut gen = Gen {
        rng: Rng(seed),
        junk_percent: 0,
    };
    let checked_before = bodies::checked_count();
    let dir = std::env::var("FUZZ_SEED_DIR")
        .ok()
        .map(|d| std::path::Path::new(&d).join(target));
    if let Some(dir) = &dir {
        std::fs::create_dir_all(dir).unwrap();
    }
    for i in 0..count {
        gen.junk_percent = *gen.rng.pick(&JUNK_PERCENTS);
        let input = make(&mut gen);
        if let Some(dir) = &dir {
            if i % 10 == 0 {
                std::fs::write(dir.join(format!("smoke-{seed:x}-{i}")), &input).unwrap();
            }
        }
        let outcome = std::panic::catch_unwind(|| body(&input));
        if outcome.is_err() {
            let path = std::env::temp_dir().join(format!("fuzz-smoke-{target}-{i}"));
            std::fs::write(&path, &input).unwrap();
            panic!("{target}: input {i} failed; saved to {}", path.display());
        }
    }
    let checked = bodies::checked_count() - checked_before;
    eprintln!("{target}: {checked} of {count} inputs reached the checks");
    let floor = count * checked_floor_percent(target) / 100;
    assert!(
        checked >= floor as u64,
        "{target}: {checked} of {count} inputs reached the checks, fewer than {floor}"
    );
}

/// The share of inputs (percent) that must get past a body's opening to its
/// checks (`bodies::checked`): about half of what the generator gives (at
/// 3,000 inputs: 42% for the message bodies, 21% for flat_messages, whose
/// other half reads arbitrary codes, 24% planned for prepare, 56% of files
/// read for session_file, 30-33% of files whose branch session_file_threaded
/// compares; 90% of JSON texts parsed for json_roundtrip, 97% of fact
/// sets whose cut entry_facts compares both ways). The bodies that check
/// every input, or check their errors too, have none.
fn checked_floor_percent(target: &str) -> usize {
    match target {
        "json_roundtrip" | "entry_facts" => 45,
        "project_serialize" | "recipe" | "projection_plan" | "compact_job" => 20,
        "flat_messages" | "prepare" => 10,
        "session_file_threaded" => 15,
        "session_file" => 25,
        _ => 0,
    }
}

#[test]
fn json_roundtrip() {
    run(
        "json_roundtrip",
        0x1234,
        |g| {
            let v = if g.rng.chance(50) {
                g.entries()
            } else {
                g.junk(0)
            };
            g.json(&v)
        },
        bodies::json_roundtrip,
    );
}

#[test]
fn session_file() {
    // A third as many: each input is read twice, once in chunks of as
    // little as a byte, which an unoptimized build pays for.
    run_n(
        "session_file",
        0x5e55,
        iterations().div_ceil(3),
        |g| g.chunked_session_file(),
        bodies::session_file,
    );
}

#[test]
fn session_file_threaded() {
    // A tenth as many: each read starts two parser threads (and one in 256
    // sets up the reader's 4 MiB chunk buffer), which an unoptimized build
    // pays dearly for.
    run_n(
        "session_file_threaded",
        0x7e55,
        iterations().div_ceil(10),
        |g| g.chunked_session_file(),
        bodies::session_file_threaded,
    );
}

#[test]
fn plan_parse() {
    run(
        "plan_parse",
        0x91a4,
        |g| {
            // A file's line, or prepareCompactionAsync's array of entries.
            let v = if g.rng.chance(50) {
                let i = g.rng.below(50);
                g.entry(i)
            } else {
                g.entries()
            };
            g.json(&v)
        },
        bodies::plan_parse,
    );
}

#[test]
fn js_format() {
    run("js_format", 0xf0f0, |g| g.number_input(), bodies::js_format);
}

#[test]
fn prepare() {
    run(
        "prepare",
        0x9e9,
        |g| {
            let v = g.entries();
            g.json(&v)
        },
        bodies::prepare,
    );
}

#[test]
fn project_serialize() {
    run(
        "project_serialize",
        0x5e1,
        |g| {
            let v = g.messages();
            g.json(&v)
        },
        bodies::project_serialize,
    );
}

#[test]
fn compact_job() {
    run(
        "compact_job",
        0xc0b,
        |g| {
            // The job's flags and split point, then answers: mostly
            // overflows and summaries, so retries meet split turns.
            let mut out: Vec<u8> = (0..2).map(|_| g.rng.next() as u8).collect();
            for _ in 0..6 {
                let answer = match g.rng.below(20) {
                    0..=9 => 0,
                    10..=16 => 2,
                    _ => g.rng.next() as u8,
                };
                out.push(answer);
            }
            let v = g.messages();
            out.extend(g.json(&v));
            out
        },
        bodies::compact_job,
    );
}

#[test]
fn flat_messages() {
    run(
        "flat_messages",
        0xf1a7,
        |g| {
            if g.rng.chance(50) {
                // Round trip: messages encoded as flat-messages.js does.
                let mut out = vec![2 * g.rng.below(128) as u8, g.rng.next() as u8];
                let v = g.messages();
                out.extend(g.json(&v));
                out
            } else {
                g.flat_codes()
            }
        },
        bodies::flat_messages,
    );
}

#[test]
fn entry_facts() {
    run(
        "entry_facts",
        0xe175,
        |g| {
            // lib/entry-facts.js's chunks: entries chunks made right (most
            // of the time) and messages chunks for entries pushed, with
            // strings whose lengths add up (most of the time).
            let mut out = vec![g.rng.below(8) as u8];
            let mut len = 0usize;
            for _ in 0..g.rng.below(6) {
                // Strings of one unit each ("r"), their number right most of the time.
                let strings = g.rng.below(4);
                let units = if g.rng.chance(80) {
                    strings
                } else {
                    g.rng.below(6)
                };
                let entries = g.rng.chance(60) || len == 0;
                let measures = !entries && g.rng.chance(40);
                let mut op = 4u8 | u8::from(!entries) | if measures { 8 } else { 0 };
                if g.rng.chance(10) {
                    op |= 2;
                }
                out.extend([op, (units as u8) << 4 | strings as u8]);
                let count = 1 + g.rng.below(6);
                if measures {
                    // A measures chunk: forms, blocks and lengths that add
                    // up most of the time (the strings' lengths stand for them).
                    out.push(count as u8);
                    out.extend((0..count).map(|_| g.rng.below(len) as u8));
                    out.extend((0..count).map(|_| g.rng.below(3) as u8));
                    out.extend((0..count).map(|_| g.rng.below(3) as u8));
                    let blocks = g.rng.below(8);
                    out.push(blocks as u8);
                    out.extend((0..blocks).map(|_| g.rng.below(5) as u8));
                } else if entries {
                    out.extend([len as u8, count as u8]);
                    out.extend((0..count).map(|_| g.rng.below(24) as u8));
                    out.extend((0..count).map(|_| g.rng.below(11) as u8));
                    len += count;
                } else {
                    out.push(count as u8);
                    out.extend((0..count).map(|_| g.rng.below(len) as u8));
                    out.extend((0..count).map(|_| g.rng.below(8) as u8));
                    out.extend((0..count).map(|_| g.rng.below(2) as u8));
                }
                out.extend((0..strings).map(|_| 1u8));
                for _ in 0..units {
                    out.extend([b'r', 0]);
                }
            }
            out
        },
        bodies::entry_facts,
    );
}

#[test]
fn context_facts() {
    run(
        "context_facts",
        0xc0fa,
        |g| {
            // lib/context-facts.js's chunks, last first from the context's
            // end: roles, usages and values, and measures whose blocks and
            // lengths add up most of the time.
            let n = g.rng.below(64);
            let mut out = vec![(n as u8) | if g.rng.chance(50) { 0x40 } else { 0 }];
            let mut to = n;
            for _ in 0..g.rng.below(5) {
                let count = g.rng.below(to.min(31) + 1);
                let explicit = g.rng.chance(10);
                out.push(count as u8 | if explicit { 0x80 } else { 0 });
                if explicit {
                    out.push(g.rng.below(70) as u8);
                }
                let role = |i: usize| match i % 3 {
                    0 => 16u8,
                    1 => 17,
                    _ => 18,
                };
                out.extend((0..count).map(|j| {
                    if g.rng.chance(90) {
                        role(to - 1 - j)
                    } else {
                        0
                    }
                }));
                let usages: Vec<u8> = (0..count)
                    .map(|_| *g.rng.pick(&[0u8, 5, 9, 6, 10, 11]))
                    .collect();
                out.extend(&usages);
                // Five numbers for each usage of numbers, their count right most of the time.
                let mut numbers = usages.iter().filter(|&&u| u & 8 != 0).count();
                if g.rng.chance(10) {
                    numbers = g.rng.below(count + 1);
                }
                out.push(numbers as u8);
                out.extend((0..5 * numbers).map(|_| {
                    if g.rng.chance(5) {
                        0xff
                    } else {
                        g.rng.below(40) as u8
                    }
                }));
                out.extend((0..count).map(|j| (to - 1 - j) as u8));
                let forms: Vec<u8> = (0..count).map(|_| g.rng.below(3) as u8).collect();
                let counts: Vec<u8> = forms
                    .iter()
                    .map(|&f| if f == 2 { g.rng.below(3) as u8 } else { 0 })
                    .collect();
                out.extend(&forms);
                out.extend(&counts);
                let blocks: usize = counts.iter().map(|&c| usize::from(c)).sum();
                out.push(blocks.min(15) as u8);
                out.extend((0..blocks.min(15)).map(|_| g.rng.below(5) as u8));
                let lengths = forms.iter().filter(|&&f| f == 1).count() + 2 * blocks.min(15);
                out.push(lengths.min(31) as u8);
                out.extend((0..lengths.min(31)).map(|_| g.rng.below(40) as u8));
                to -= count;
            }
            out
        },
        bodies::context_facts,
    );
}

#[test]
fn entry_path() {
    run(
        "entry_path",
        0xe9a7,
        |g| {
            // lib/entry-path.js's codes as the body reads bytes: 1 SAME,
            // 0 THREW, 2 NOT_READ, 3 NOT_STRING, (len << 3) | 5 a length;
            // steps made right most of the time, the run's length right
            // most of the time.
            let len = |n: usize| ((n as u8) << 3) | 5;
            let mut codes = Vec::new();
            let mut units = 0usize;
            for _ in 0..g.rng.below(12) {
                let (a, b) = match g.rng.below(20) {
                    0..=10 => {
                        let p = g.rng.below(12);
                        units += p;
                        (1, len(p))
                    }
                    11..=13 => {
                        let (i, p) = (g.rng.below(12), g.rng.below(12));
                        units += i + p;
                        (len(i), len(p))
                    }
                    14 | 15 => (3, 2),
                    16 => (0, 2),
                    17 => (1, 3),
                    _ => (g.rng.next() as u8, g.rng.next() as u8),
                };
                codes.extend([a, b]);
            }
            if g.rng.chance(10) {
                codes.push(g.rng.next() as u8);
            }
            let units = if g.rng.chance(85) {
                units.min(255)
            } else {
                g.rng.below(256)
            };
            let mut out = vec![units as u8];
            out.extend(codes);
            out
        },
        bodies::entry_path,
    );
}

#[test]
fn recipe() {
    run(
        "recipe",
        0x2ec1,
        |g| {
            let mut out = vec![g.rng.next() as u8];
            let v = g.messages();
            out.extend(g.json(&v));
            out
        },
        bodies::recipe,
    );
}

#[test]
fn projection_plan() {
    run(
        "projection_plan",
        0x91a7,
        |g| {
            let mut out = vec![g.rng.next() as u8];
            let v = g.messages();
            out.extend(g.json(&v));
            out
        },
        bodies::projection_plan,
    );
}

#[test]
fn number_formatting_matches_spec_examples() {
    let cases: &[(f64, &str)] = &[
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (123456789012345680000.0, "123456789012345680000"),
        (-0.0, "0"),
        (5e-324, "5e-324"),
        (1.5, "1.5"),
    ];
    for &(x, js) in cases {
        assert_eq!(bodies::reference_number_to_string(x), js);
    }
}

#[test]
fn number_formatting_breaks_ties_to_even() {
    // Exactly midway between ...151.12 and ...151.13: V8 prints the even one.
    let x = f64::from_bits(0xc2ea_4395_c9d2_cde4);
    assert_eq!(bodies::reference_number_to_string(x), "-231020625303151.12");
    bodies::js_format(&x.to_bits().to_le_bytes());
}

#[test]
fn js_format_over_the_v8_corpus() {
    // The fuzz oracle agrees with V8 itself on every value of the corpus,
    // and the target's checks hold there.
    for (x, js) in number_corpus::corpus() {
        assert_eq!(
            bodies::reference_number_to_string(x),
            js,
            "bits {:#018x}",
            x.to_bits()
        );
        bodies::js_format(&x.to_bits().to_le_bytes());
    }
}
