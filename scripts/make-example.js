#!/usr/bin/env node
'use strict'
// Writes examples/session.jsonl: a made-up but realistic pi session (format
// version 3) of an agent working on a small Rust project, "tally", a
// word-frequency command-line tool. A seeded generator, so the file is the
// same on every run: `node scripts/make-example.js [out.jsonl]`.
//
// It has what compaction cares about: user turns, assistant turns with
// thinking, text and tool calls (read, grep, edit, write, bash), tool
// results, a bash execution the user ran, a model change, and a previous
// compaction in the middle whose summary the next compaction must update.

const fs = require('node:fs')
const path = require('node:path')

const { mulberry32 } = require('./prng')

const FILES = {
  'Cargo.toml': `[package]
name = "tally"
version = "0.3.0"
edition = "2021"

[dependencies]
clap = { version = "4", features = ["derive"] }
unicode-segmentation = "1"

[dev-dependencies]
assert_cmd = "2"
`,
  'src/main.rs': `use clap::Parser;
use std::io::{self, Read};

mod count;
mod output;

/// Count word frequencies in text files or standard input.
#[derive(Parser)]
struct Args {
    /// Files to read; standard input when none.
    files: Vec<std::path::PathBuf>,
    /// Show only the N most frequent words.
    #[arg(short, long)]
    top: Option<usize>,
    /// Treat "Word" and "word" as the same word.
    #[arg(short, long)]
    ignore_case: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let mut counts = count::Counts::default();
    if args.files.is_empty() {
        let mut text = String::new();
        io::stdin().read_to_string(&mut text)?;
        counts.add_text(&text, args.ignore_case);
    }
    for file in &args.files {
        let text = std::fs::read_to_string(file)?;
        counts.add_text(&text, args.ignore_case);
    }
    let rows = counts.sorted(args.top);
    if args.json {
        output::json(&rows)
    } else {
        output::table(&rows)
    }
}
`,
  'src/count.rs': `use std::collections::HashMap;

#[derive(Default)]
pub struct Counts {
    words: HashMap<String, u64>,
}

impl Counts {
    pub fn add_text(&mut self, text: &str, ignore_case: bool) {
        for word in text.split_whitespace() {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric());
            if word.is_empty() {
                continue;
            }
            let key = if ignore_case { word.to_lowercase() } else { word.to_string() };
            *self.words.entry(key).or_insert(0) += 1;
        }
    }

    pub fn sorted(&self, top: Option<usize>) -> Vec<(&str, u64)> {
        let mut rows: Vec<_> = self.words.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1));
        if let Some(n) = top {
            rows.truncate(n);
        }
        rows
    }
}
`,
  'src/output.rs': `use std::io::{self, Write};

pub fn table(rows: &[(&str, u64)]) -> io::Result<()> {
    let width = rows.iter().map(|(w, _)| w.len()).max().unwrap_or(4);
    let mut out = io::stdout().lock();
    for (word, n) in rows {
        writeln!(out, "{word:<width$}  {n}")?;
    }
    Ok(())
}

pub fn json(rows: &[(&str, u64)]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "[")?;
    for (i, (word, n)) in rows.iter().enumerate() {
        if i > 0 {
            write!(out, ",")?;
        }
        write!(out, "{{\\"word\\":\\"{word}\\",\\"count\\":{n}}}")?;
    }
    writeln!(out, "]")
}
`,
  'tests/cli.rs': `use assert_cmd::Command;

#[test]
fn counts_words_from_stdin() {
    Command::cargo_bin("tally")
        .unwrap()
        .write_stdin("a b a")
        .assert()
        .success()
        .stdout("a  2\\nb  1\\n");
}
`,
  'README.md': `# tally

Counts word frequencies.

    tally [--top N] [--ignore-case] [--json] [FILE]...
`,
}

// One task: what the user asks, what the agent looks at and changes, and how it ends.
const TASKS = [
  {
    ask: 'tally sorts words with the same count in a random order, so the output changes between runs. Can you make ties sort alphabetically?',
    reads: ['src/count.rs', 'src/main.rs'],
    greps: ['sort_by'],
    edits: [['src/count.rs', 'rows.sort_by(|a, b| b.1.cmp(&a.1));', 'rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));']],
    runs: ['cargo test', 'printf "b a c a b" | cargo run -q'],
    done: 'Ties now sort alphabetically: `sorted` breaks equal counts with the word itself, so the output is stable from run to run. `cargo test` passes.',
  },
  {
    ask: 'Add a test for the tie ordering, please. Use three words that all appear twice.',
    reads: ['tests/cli.rs'],
    greps: ['cargo_bin'],
    edits: [['tests/cli.rs', '#[test]\nfn counts_words_from_stdin() {', '#[test]\nfn ties_sort_alphabetically() {\n    Command::cargo_bin("tally").unwrap().write_stdin("c b a c b a").assert().success().stdout("a  2\\nb  2\\nc  2\\n");\n}\n\n#[test]\nfn counts_words_from_stdin() {']],
    runs: ['cargo test --test cli'],
    done: 'Added `ties_sort_alphabetically` to tests/cli.rs; both CLI tests pass.',
  },
  {
    ask: 'The JSON output breaks on words with quotes or backslashes. Fix the escaping.',
    reads: ['src/output.rs'],
    greps: ['write!(out'],
    writes: ['src/json_escape.rs'],
    edits: [['src/output.rs', 'pub fn json(', 'use crate::json_escape::escape;\n\npub fn json(']],
    runs: ['cargo build', 'echo \'say "hi" \\\\o/\' | cargo run -q -- --json'],
    done: 'Words are now escaped with a small `escape` helper (quotes, backslashes and control characters) in src/json_escape.rs, and `output::json` uses it.',
  },
  {
    ask: 'Why does `tally --ignore-case` count "Straße" and "STRASSE" as different words? Is that expected?',
    reads: ['src/count.rs'],
    greps: ['to_lowercase'],
    runs: ['printf "Straße STRASSE strasse" | cargo run -q -- --ignore-case'],
    done: '`to_lowercase` does not fold "ß" and "SS" together; that needs full Unicode case folding. I left the behaviour as is and noted it in the README under "Limitations"; say if you want a case-folding crate added.',
    edits: [['README.md', '    tally [--top N] [--ignore-case] [--json] [FILE]...', '    tally [--top N] [--ignore-case] [--json] [FILE]...\n\n## Limitations\n\n`--ignore-case` lowercases; it does not apply full case folding ("Straße" and "STRASSE" stay apart).']],
  },
  {
    ask: 'Reading big files is slow. Can you profile `tally` on a 200 MB file and see where the time goes?',
    reads: ['src/main.rs', 'src/count.rs'],
    runs: ['seq 1 5000000 | sed "s/$/ lorem ipsum dolor/" > /tmp/big.txt', 'cargo build --release', 'time ./target/release/tally --top 5 /tmp/big.txt', 'perf record -g ./target/release/tally --top 5 /tmp/big.txt', 'perf report --stdio | head -40'],
    done: 'Most of the time is hashing (SipHash) and allocating a `String` per word. Reading the whole file first is fine at this size. Two options: a faster hasher, and looking words up by `&str` before allocating.',
  },
  {
    ask: 'Do both: switch to a faster hasher and avoid the allocation when the word is already counted.',
    reads: ['src/count.rs', 'Cargo.toml'],
    greps: ['HashMap'],
    edits: [
      ['Cargo.toml', 'unicode-segmentation = "1"', 'unicode-segmentation = "1"\nrustc-hash = "2"'],
      ['src/count.rs', 'use std::collections::HashMap;', 'use rustc_hash::FxHashMap as HashMap;'],
      ['src/count.rs', '*self.words.entry(key).or_insert(0) += 1;', 'match self.words.get_mut(key.as_str()) {\n                Some(n) => *n += 1,\n                None => {\n                    self.words.insert(key, 1);\n                }\n            }'],
    ],
    runs: ['cargo build --release', 'time ./target/release/tally --top 5 /tmp/big.txt', 'cargo test'],
    done: 'With FxHashMap and a lookup before inserting, the 200 MB file takes 1.9 s instead of 4.6 s. Tests pass.',
  },
  {
    ask: 'The ignore-case path still allocates for every word. Can it use the same trick?',
    reads: ['src/count.rs'],
    edits: [['src/count.rs', 'let key = if ignore_case { word.to_lowercase() } else { word.to_string() };', 'let lowered;\n            let key = if ignore_case && word.chars().any(char::is_uppercase) {\n                lowered = word.to_lowercase();\n                lowered.as_str()\n            } else {\n                word\n            };']],
    runs: ['cargo build --release', 'time ./target/release/tally --ignore-case --top 5 /tmp/big.txt', 'cargo test'],
    done: 'Words that are already lowercase are no longer copied; only words with an uppercase letter are lowered. --ignore-case on the big file went from 2.8 s to 2.0 s.',
  },
  {
    ask: 'Add a `--min-count N` option that hides words seen fewer than N times.',
    reads: ['src/main.rs', 'src/count.rs'],
    greps: ['fn sorted'],
    edits: [
      ['src/main.rs', '    /// Print JSON instead of a table.', '    /// Hide words seen fewer than N times.\n    #[arg(long, default_value_t = 1)]\n    min_count: u64,\n    /// Print JSON instead of a table.'],
      ['src/main.rs', 'let rows = counts.sorted(args.top);', 'let rows = counts.sorted(args.top, args.min_count);'],
      ['src/count.rs', 'pub fn sorted(&self, top: Option<usize>)', 'pub fn sorted(&self, top: Option<usize>, min_count: u64)'],
    ],
    runs: ['cargo build', 'cargo test', 'printf "a a b" | cargo run -q -- --min-count 2'],
    done: '`--min-count N` filters rows before `--top` applies. The README lists the option.',
  },
  {
    ask: 'CI fails on Windows: the test expects "\\n" but gets "\\r\\n"? Look at the failing job log in ci.log.',
    reads: ['ci.log', 'tests/cli.rs', 'src/output.rs'],
    greps: ['writeln!'],
    runs: ['cargo test --test cli'],
    done: 'stdout on Windows is not translated, so the output really is "\\n"; the failure was the test reading a fixture file checked out with CRLF. I added a .gitattributes entry (`tests/fixtures/* text eol=lf`).',
    writes: ['.gitattributes'],
  },
  {
    ask: 'Words with apostrophes ("don\'t") are split in two by the trimming. Keep inner apostrophes and hyphens.',
    reads: ['src/count.rs'],
    greps: ['trim_matches'],
    edits: [['src/count.rs', "let word = word.trim_matches(|c: char| !c.is_alphanumeric());", "let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\\'' || c == '-'));\n            let word = word.trim_matches(|c: char| c == '\\'' || c == '-');"]],
    runs: ['printf "don\'t stop - well-known \'quoted\'" | cargo run -q', 'cargo test'],
    done: 'Inner apostrophes and hyphens now stay part of the word ("don\'t", "well-known"); leading and trailing ones are still trimmed, and a lone "-" is not counted.',
  },
  {
    ask: 'Can `tally` read from several files in parallel? Most of our inputs are dozens of log files.',
    reads: ['src/main.rs', 'Cargo.toml', 'src/count.rs'],
    greps: ['for file in'],
    edits: [
      ['Cargo.toml', 'rustc-hash = "2"', 'rustc-hash = "2"\nrayon = "1"'],
      ['src/count.rs', 'impl Counts {', 'impl Counts {\n    pub fn merge(&mut self, other: Counts) {\n        for (word, n) in other.words {\n            *self.words.entry(word).or_insert(0) += n;\n        }\n    }\n'],
      ['src/main.rs', '    for file in &args.files {', '    let per_file: Vec<io::Result<count::Counts>> = args.files.par_iter().map(|f| count_file(f, args.ignore_case)).collect();\n    for file in &args.files {'],
    ],
    runs: ['cargo build --release', 'time ./target/release/tally --top 5 /tmp/logs/*.log', 'cargo test'],
    done: 'Files are now counted in parallel with rayon (one `Counts` per file, merged at the end). On 48 log files (1.1 GB) the time went from 9.8 s to 3.1 s on 4 cores. Standard input is still read on the main thread.',
  },
  {
    ask: 'Add `--stopwords` to drop common English words (the, and, of, ...). A built-in list is fine, no extra crate.',
    reads: ['src/main.rs', 'src/count.rs'],
    writes: ['src/stopwords.rs'],
    edits: [
      ['src/main.rs', 'mod count;', 'mod count;\nmod stopwords;'],
      ['src/main.rs', '    /// Print JSON instead of a table.', '    /// Drop common English words.\n    #[arg(long)]\n    stopwords: bool,\n    /// Print JSON instead of a table.'],
      ['src/count.rs', '            if word.is_empty() {', '            if word.is_empty() || (self.skip_stopwords && crate::stopwords::is_stopword(word)) {'],
    ],
    runs: ['cargo build', 'cargo run -q -- --stopwords --top 10 README.md', 'cargo test'],
    done: '`--stopwords` drops 174 common English words (src/stopwords.rs, a sorted list searched with binary search, compared case-insensitively). It combines with --ignore-case and --min-count.',
  },
  {
    ask: 'Last thing: update the README with the new options and a short performance note.',
    reads: ['README.md', 'src/main.rs'],
    edits: [['README.md', '    tally [--top N] [--ignore-case] [--json] [FILE]...', '    tally [--top N] [--min-count N] [--ignore-case] [--json] [FILE]...\n\nOn a 200 MB file tally counts about 100 MB/s on one core.']],
    runs: ['cargo doc --no-deps'],
    done: 'README updated: usage line with --min-count, the limitation note, and the performance figure.',
  },
]

const THOUGHTS = [
  'Let me look at how the counting works before changing anything. The map is filled in `add_text` and read once in `sorted`, so any change to the key type shows up in both places, and the tests in tests/cli.rs only look at the printed table.',
  'I should check where this is called from, so the change does not break the other caller. `main` builds one `Counts` for all inputs; if I change the signature of `sorted`, main.rs is the only call site, but the JSON path goes through the same rows.',
  'The test output will tell me whether the ordering is deterministic now. HashMap iteration order changes between runs because of the random hasher seed, which is exactly why ties came out shuffled; sorting on the word as a second key removes that.',
  'This needs a build first; then I can run it on the sample input. A release build matters for the timing numbers, debug builds are ten times slower in the hashing loop and would make the comparison meaningless.',
  'Before editing, grep for other uses so I change them all. There may be a second place that formats words, and I would rather fix both than leave an inconsistency the user finds later.',
  'The numbers look plausible; let me double-check with a second run. The first run after a build pays for page-cache misses on the 200 MB input, so the second figure is the one to report.',
]

function makeSession(seed = 7) {
  const rng = mulberry32(seed)
  const int = (n) => Math.floor(rng() * n)
  const pick = (arr) => arr[int(arr.length)]
  const usedIds = new Set()
  const newId = () => {
    for (;;) {
      const id = Math.floor(rng() * 0x100000000).toString(16).padStart(8, '0')
      if (!usedIds.has(id)) {
        usedIds.add(id)
        return id
      }
    }
  }
  let clock = Date.UTC(2026, 2, 14, 9, 30, 0)
  const tick = (max = 20000) => (clock += 500 + int(max))
  const lines = []
  let leaf = null
  const emit = (entry) => {
    const full = { type: entry.type, id: newId(), parentId: leaf, timestamp: new Date(tick()).toISOString(), ...entry }
    delete full.type
    const ordered = { type: entry.type, ...full }
    lines.push(JSON.stringify(ordered))
    leaf = ordered.id
    return ordered
  }
  const usage = (input) => {
    const output = 80 + int(900)
    const cacheRead = Math.floor(input * 0.8)
    return {
      input: input - cacheRead, output, cacheRead, cacheWrite: int(2000), totalTokens: input + output,
      cost: { input: 0.001, output: 0.004, cacheRead: 0.0002, cacheWrite: 0.0005, total: 0.0057 },
    }
  }
  let context = 3000
  let callSeq = 0
  let model = { provider: 'anthropic', id: 'claude-sonnet-4-5' }
  const assistant = (content, stopReason) => {
    context += 150 + int(300)
    return emit({
      type: 'message',
      message: {
        role: 'assistant', content, api: 'anthropic-messages', provider: model.provider, model: model.id,
        usage: usage(context), stopReason, timestamp: clock,
      },
    })
  }
  const toolResult = (call, text, isError = false) => {
    context += Math.ceil(text.length / 4)
    return emit({
      type: 'message',
      message: { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text }], isError, timestamp: clock },
    })
  }
  const call = (name, args) => ({ type: 'toolCall', id: `toolu_${(++callSeq).toString().padStart(3, '0')}${newId()}`, name, arguments: args })
  const files = { ...FILES, 'ci.log': ciLog(), '.gitattributes': '' }
  const numbered = (text) => text.split('\n').map((l, i) => `${String(i + 1).padStart(4)}\t${l}`).join('\n')

  lines.push(JSON.stringify({ type: 'session', version: 3, id: 'c0ffee00-7a11-4b1d-9e55-0a1b2c3d4e5f', timestamp: new Date(clock).toISOString(), cwd: '/home/dev/tally' }))
  emit({ type: 'model_change', provider: model.provider, modelId: model.id })
  emit({ type: 'thinking_level_change', thinkingLevel: 'medium' })

  let compactAfter = 2
  let firstOfTask = []
  TASKS.forEach((task, t) => {
    if (t === compactAfter) {
      emit({
        type: 'compaction',
        summary: previousSummary(),
        firstKeptEntryId: firstOfTask[1],
        tokensBefore: context,
        details: { readFiles: ['src/main.rs'], modifiedFiles: ['src/count.rs', 'tests/cli.rs'] },
        fromHook: false,
      })
      context = 6000
    }
    if (t === 7) {
      model = { provider: 'openai', id: 'gpt-5.1' }
      emit({ type: 'model_change', provider: model.provider, modelId: model.id })
    }
    const first = emit({ type: 'message', message: { role: 'user', content: [{ type: 'text', text: task.ask }], timestamp: clock } })
    firstOfTask.push(first.id)
    const steps = []
    for (const f of task.reads || []) steps.push(['read', f])
    for (const g of task.greps || []) steps.push(['grep', g])
    for (const w of task.writes || []) steps.push(['write', w])
    for (const e of task.edits || []) steps.push(['edit', e])
    for (const e of task.edits || []) if (!steps.some(([k, a]) => k === 'reread' && a === e[0])) steps.push(['reread', e[0]])
    for (const r of task.runs || []) steps.push(['bash', r])
    if (task.edits) steps.push(['bash', 'cargo clippy --all-targets -- -D warnings'], ['bash', 'git diff --stat'])
    let i = 0
    while (i < steps.length) {
      const batch = steps.slice(i, i + 1 + (steps[i][0] === 'read' ? int(2) : 0))
      i += batch.length
      const content = []
      if (rng() < 0.6) content.push({ type: 'thinking', thinking: pick(THOUGHTS), thinkingSignature: `sig_${newId()}` })
      if (rng() < 0.5) {
        content.push({ type: 'text', text: pick([
          'Let me check the current code before changing it, so the edit fits what is there.',
          'Looking at the code first: the counting loop and the output functions are small enough to read in full.',
          'Running it now to see the actual behaviour rather than guessing from the source.',
          'Next, the edit. I will keep it minimal and run the tests right after.',
        ]) })
      }
      const calls = batch.map(([kind, arg]) => {
        if (kind === 'read' || kind === 'reread') return call('read', { path: arg })
        if (kind === 'grep') return call('grep', { pattern: arg, path: 'src' })
        if (kind === 'write') return call('write', { path: arg, content: writeContent(arg) })
        if (kind === 'edit') return call('edit', { path: arg[0], edits: [{ oldText: arg[1], newText: arg[2] }] })
        return call('bash', { command: arg })
      })
      content.push(...calls)
      assistant(content, 'toolUse')
      batch.forEach(([kind, arg], k) => {
        let text
        if (kind === 'read' || kind === 'reread') text = numbered(files[arg] || '')
        else if (kind === 'grep') text = grepOutput(files, arg)
        else if (kind === 'write') {
          files[arg] = writeContent(arg)
          text = `Wrote ${files[arg].length} bytes to ${arg}`
        } else if (kind === 'edit') {
          const [file, from, to] = arg
          files[file] = (files[file] || '').replace(from, to)
          text = `Successfully replaced 1 block in ${file}.`
        } else text = bashOutput(arg, rng)
        toolResult(calls[k], text, kind === 'bash' && arg === 'cargo test --test cli' && t === 8)
      })
    }
    if (t === 4) {
      emit({
        type: 'message',
        message: {
          role: 'bashExecution', command: 'du -h /tmp/big.txt', output: '203M\t/tmp/big.txt\n', exitCode: 0,
          cancelled: false, truncated: false, timestamp: clock,
        },
      })
    }
    assistant([{ type: 'text', text: task.done }], 'stop')
  })
  return lines
}

function previousSummary() {
  return `## Goal
Improve the \`tally\` word-frequency CLI (Rust, clap): deterministic output, correct JSON, speed.

## Constraints & Preferences
- Keep dependencies small; ask before adding crates for Unicode case folding.

## Progress
### Done
- [x] Ties sort alphabetically (\`Counts::sorted\` breaks ties on the word).
- [x] Test \`ties_sort_alphabetically\` in tests/cli.rs.

### In Progress
- [ ] JSON output breaks on words with quotes or backslashes; an escaping helper is being added.

## Key Decisions
- **Stable order**: ties break on the word so that output is reproducible.

## Next Steps
1. Escape JSON strings properly (quotes, backslashes, control characters) and test it.

## Critical Context
- Tests: \`cargo test\`; CLI tests use assert_cmd in tests/cli.rs.`
}

const STOPWORDS = ('a about above after again against all am an and any are as at be because been before being below between both but by ' +
  'can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into ' +
  'is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some ' +
  'such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where ' +
  'which while who whom why will with would you your yours yourself yourselves').split(' ').sort()

function writeContent(file) {
  if (file === 'src/json_escape.rs') {
    return `/// Escapes a string for use inside a JSON string literal.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\\\\""),
            '\\\\' => out.push_str("\\\\\\\\"),
            '\\n' => out.push_str("\\\\n"),
            '\\r' => out.push_str("\\\\r"),
            '\\t' => out.push_str("\\\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_quotes_and_backslashes() {
        assert_eq!(escape(r#"a"b\\c"#), r#"a\\"b\\\\c"#);
    }
}
`
  }
  if (file === 'src/stopwords.rs') {
    return `/// Common English words dropped by --stopwords, sorted for binary search.
const STOPWORDS: &[&str] = &[
${STOPWORDS.map((w) => `    "${w}",`).join('\n')}
];

/// True for a stopword, compared case-insensitively.
pub fn is_stopword(word: &str) -> bool {
    let lower = word.to_lowercase();
    STOPWORDS.binary_search(&lower.as_str()).is_ok()
}
`
  }
  return 'tests/fixtures/* text eol=lf\n'
}

function grepOutput(files, pattern) {
  const hits = []
  for (const [file, text] of Object.entries(files)) {
    if (!file.startsWith('src/') && !file.startsWith('tests/')) continue
    text.split('\n').forEach((line, i) => {
      if (line.includes(pattern)) hits.push(`${file}:${i + 1}:${line}`)
    })
  }
  return hits.length ? hits.join('\n') : 'No matches found'
}

const DEPS = ['proc-macro2 v1.0.89', 'unicode-ident v1.0.13', 'utf8parse v0.2.2', 'anstyle v1.0.10', 'colorchoice v1.0.3',
  'anstyle-query v1.1.2', 'is_terminal_polyfill v1.70.1', 'strsim v0.11.1', 'heck v0.5.0', 'clap_lex v0.7.2',
  'anstyle-parse v0.2.6', 'anstream v0.6.18', 'quote v1.0.37', 'syn v2.0.87', 'clap_builder v4.5.20',
  'clap_derive v4.5.18', 'clap v4.5.20', 'unicode-segmentation v1.12.0', 'rustc-hash v2.0.0', 'crossbeam-utils v0.8.20',
  'either v1.13.0', 'crossbeam-epoch v0.9.18', 'crossbeam-deque v0.8.5', 'rayon-core v1.12.1', 'rayon v1.10.0']

function bashOutput(command, rng) {
  const ms = (n) => (n + rng() * n).toFixed(2)
  if (command.startsWith('cargo test')) {
    return `   Compiling tally v0.3.0 (/home/dev/tally)
    Finished \`test\` profile [unoptimized + debuginfo] target(s) in ${ms(2)}s
     Running unittests src/main.rs (target/debug/deps/tally-3f2a9c1e)

running 1 test
test json_escape::tests::escapes_quotes_and_backslashes ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/cli.rs (target/debug/deps/cli-9b1d4e07)

running 2 tests
test counts_words_from_stdin ... ok
test ties_sort_alphabetically ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in ${ms(0.1)}s`
  }
  if (command.startsWith('cargo build') || command.startsWith('cargo doc')) {
    return `${DEPS.map((d) => `   Compiling ${d}`).join('\n')}\n   Compiling tally v0.3.0 (/home/dev/tally)\n    Finished \`${command.includes('release') ? 'release' : 'dev'}\` profile target(s) in ${ms(3)}s`
  }
  if (command.startsWith('time')) {
    return `the          5000000\nlorem        5000000\nipsum        5000000\ndolor        5000000\n1            1\n\nreal\t0m${ms(2)}s\nuser\t0m${ms(1.8)}s\nsys\t0m0.21s`
  }
  if (command.startsWith('perf report')) {
    const rows = [
      ['31.4%', 'core::hash::sip::Hasher::write'],
      ['22.8%', 'alloc::string::String::from'],
      ['14.1%', 'hashbrown::map::HashMap::entry'],
      ['9.7%', 'core::str::trim_matches'],
      ['6.2%', 'core::str::SplitWhitespace::next'],
      ['4.9%', '__memcpy_avx_unaligned_erms'],
    ]
    return `# Samples: 18K of event 'cycles'\n# Overhead  Symbol\n${rows.map(([p, s]) => `    ${p.padStart(6)}  ${s}`).join('\n')}\n...`
  }
  if (command.startsWith('cargo clippy')) return `    Checking tally v0.3.0 (/home/dev/tally)\n    Finished \`dev\` profile [unoptimized + debuginfo] target(s) in ${ms(1)}s`
  if (command.startsWith('git diff')) return ` src/count.rs | ${2 + Math.floor(rng() * 9)} ++++--\n 1 file changed, ${1 + Math.floor(rng() * 6)} insertions(+), ${1 + Math.floor(rng() * 3)} deletions(-)`
  if (command.startsWith('perf record')) return '[ perf record: Woken up 3 times to write data ]\n[ perf record: Captured and wrote 0.812 MB perf.data (18113 samples) ]'
  if (command.startsWith('seq')) return ''
  if (command.includes('--json')) return '[{"word":"say","count":1},{"word":"\\"hi\\"","count":1},{"word":"\\\\o/","count":1}]'
  if (command.includes('Straße')) return 'straße   1\nstrasse  2'
  if (command.includes('--min-count')) return 'a  2'
  if (command.includes('cargo run')) return 'a  2\nb  2\nc  1'
  return ''
}

function ciLog() {
  const out = []
  for (let i = 0; i < 40; i++) out.push(`2026-03-14T08:${String(10 + Math.floor(i / 4)).padStart(2, '0')}:0${i % 10}Z   Compiling dependency-${i} v1.${i}.0`)
  out.push('test counts_words_from_stdin ... FAILED', '', 'failures:', '', "---- counts_words_from_stdin stdout ----", "thread 'counts_words_from_stdin' panicked at tests/cli.rs:9:10:", 'Unexpected stdout, failed diff original var', '├── original: a  2\\nb  1\\n', '├── diff: a  2\\r\\nb  1\\r\\n', '└── var as str: a  2\\r\\nb  1\\r\\n', '', 'test result: FAILED. 0 passed; 1 failed', 'Error: Process completed with exit code 101.')
  return out.join('\n')
}

if (require.main === module) {
  const out = process.argv[2] || path.join(__dirname, '..', 'examples', 'session.jsonl')
  fs.mkdirSync(path.dirname(out), { recursive: true })
  const lines = makeSession()
  fs.writeFileSync(out, `${lines.join('\n')}\n`)
  console.error(`wrote ${out}: ${lines.length - 1} entries, ${fs.statSync(out).size} bytes`)
}

module.exports = { makeSession }
