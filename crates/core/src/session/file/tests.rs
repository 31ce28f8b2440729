#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

/// Whether a line that does not parse is an entry cut short.
fn is_cut_short(line: &str) -> bool {
    matches!(json::parse(line), Err(err) if cut_short(line, &err))
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/"}"#;

fn parse_text(text: &str, chunk: usize) -> Result<SessionFile> {
    parse_with_chunk_size(&mut text.as_bytes(), "test.jsonl", chunk, json::parse)
}

fn parse_ok(text: &str) -> SessionFile {
    parse_text(text, CHUNK_BYTES).expect("parses")
}

fn err_of(text: &str) -> String {
    parse_text(text, CHUNK_BYTES)
        .expect_err("fails")
        .to_string()
}

fn entry(id: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"message":{{"role":"user","content":"x"}}}}"#
    )
}

#[test]
fn reads_header_and_entries_with_line_numbers() {
    let text = format!("{HEADER}\n\n{}\n  \t\n{}\n", entry("a"), entry("b"));
    let file = parse_ok(&text);
    assert_eq!(file.values.len(), 3);
    assert_eq!(file.lines, vec![1, 3, 5]);
    assert_eq!(file.values[2].get("id").and_then(Value::as_str), Some("b"));
}

#[test]
fn small_chunks_give_the_same_entries_in_order() {
    let mut text = format!("{HEADER}\n");
    for i in 0..500 {
        text.push_str(&entry(&format!("e{i}")));
        text.push('\n');
        if i % 7 == 0 {
            text.push('\n');
        }
    }
    let whole = parse_ok(&text);
    // Chunks smaller than a line exercise the long-line path too.
    for chunk in [1, 13, 64, 1000, 4096] {
        let file = parse_text(&text, chunk).unwrap();
        assert_eq!(file.lines, whole.lines, "chunk {chunk}");
        assert_eq!(file.values, whole.values, "chunk {chunk}");
    }
}

#[test]
fn crlf_line_endings_read_like_lf() {
    let lf = format!("{HEADER}\n{}\n{}", entry("a"), entry("b"));
    let crlf = lf.replace('\n', "\r\n") + "\r\n\r\n";
    assert_eq!(parse_ok(&lf).values, parse_ok(&crlf).values);
}

#[test]
fn a_leading_byte_order_mark_is_dropped() {
    let text = format!("\u{feff}{HEADER}\n{}\n", entry("a"));
    assert_eq!(parse_ok(&text).values.len(), 2);
}

#[test]
fn unicode_whitespace_lines_are_blank() {
    let text = format!("{HEADER}\n\u{a0}\u{2028}\u{3000}\n{}\n", entry("a"));
    assert_eq!(parse_ok(&text).lines, vec![1, 3]);
}

#[test]
fn malformed_lines_are_errors_naming_the_line() {
    let text = format!(
        "{HEADER}\n{}\n\n{{\"type\":\"message\",}}\n{}\n",
        entry("a"),
        entry("b")
    );
    let e = err_of(&text);
    assert!(e.starts_with("test.jsonl: line 4: malformed JSON"), "{e}");
    // The first bad line in file order is reported, whichever chunk fails first.
    let mut text = format!("{HEADER}\n");
    for i in 0..300 {
        text.push_str(if i == 40 || i == 250 { "nope" } else { "{}" });
        text.push('\n');
    }
    for chunk in [16, 64, 1 << 20] {
        let e = parse_text(&text, chunk).unwrap_err().to_string();
        assert!(e.contains("line 42: malformed JSON"), "chunk {chunk}: {e}");
    }
}

#[test]
fn a_line_cut_short_is_left_out_wherever_it_is() {
    let whole = format!("{HEADER}\n{}\n{}\n", entry("a"), entry("b"));
    let cut_at = whole.len() - 1 - entry("b").len() / 2;
    let cut = &whole[..cut_at];
    // At the end without its newline (a killed append), ended by a newline
    // (as 1.6's SessionManager ends it on opening the file), and with
    // entries appended after that.
    let ended = format!("{cut}\n");
    let appended = format!("{cut}\n{}\n\n{}\n", entry("c"), entry("d"));
    for (text, lines, last) in [
        (cut, vec![1, 2], "a"),
        (ended.as_str(), vec![1, 2], "a"),
        (appended.as_str(), vec![1, 2, 4, 6], "d"),
    ] {
        let threaded: Vec<_> = [1, 13, 64, CHUNK_BYTES]
            .iter()
            .map(|&chunk| parse_text(text, chunk).expect("a cut line is left out"))
            .collect();
        let sequential = parse_session_sequential(&mut text.as_bytes(), "test.jsonl", 7)
            .expect("the same, sequential");
        for file in threaded.iter().chain([&sequential]) {
            assert_eq!(file.lines, lines, "{text}");
            let id = file
                .values
                .last()
                .and_then(|v| v.get("id"))
                .and_then(Value::as_str);
            assert_eq!(id, Some(last));
        }
    }
    // Joined by a later append (0.78's SessionManager does not end it): an
    // error where the next entry starts; but a cut where a value may begin
    // makes a joined line that is itself an object cut short, left out.
    assert!(err_of(&format!("{cut}{}\n", entry("c"))).contains("line 3: malformed JSON"));
    let at_value = &whole[..whole.find(r#""message":"#).unwrap() + r#""message":"#.len()];
    let at_value = &at_value[at_value.rfind('\n').unwrap() + 1..];
    assert!(is_cut_short(&format!("{at_value}{}", entry("c"))));
    let joined = format!("{HEADER}\n{at_value}{}\n{}\n", entry("c"), entry("d"));
    assert_eq!(parse_ok(&joined).lines, vec![1, 3]);
    // A whole last line without its newline is read.
    assert_eq!(parse_ok(&whole[..whole.len() - 1]).lines, vec![1, 2, 3]);
    // A header cut short leaves no header.
    assert!(err_of(&HEADER[..20]).contains("no session header"));
    assert!(err_of(&format!("{}\n{}\n", &HEADER[..20], entry("a")))
        .contains("line 2: no session header"));
    // A last line that is malformed before its end is an error, newline or not.
    for end in ["", "\n"] {
        let text = format!("{HEADER}\n{}\n{{\"id\":x{end}", entry("a"));
        assert!(err_of(&text).contains("line 3: malformed JSON"), "{end:?}");
    }
    // Entries are objects: a line that starts anything else is malformed, cut short or not.
    for line in ["[", "[{\"a\":1}", "\"abc", "t", "nul", "-", "1.", " [1,"] {
        assert!(!is_cut_short(line), "{line}");
        let text = format!("{HEADER}\n{line}\n{}\n", entry("a"));
        assert!(err_of(&text).contains("line 2: malformed JSON"), "{line}");
    }
    assert!(is_cut_short(" {\"type\":\"mess"));
}

#[test]
fn trailing_garbage_and_js_only_whitespace_are_malformed() {
    assert!(err_of(&format!("{HEADER}\n{{}} x\n")).contains("line 2"));
    // JSON.parse rejects a no-break space around a value.
    assert!(err_of(&format!("{HEADER}\n{{}}\u{a0}\n")).contains("line 2"));
}

#[test]
fn header_problems_are_named() {
    assert!(err_of("").contains("no session header"));
    assert!(err_of("\n \n").contains("no session header"));
    let e = err_of(&format!("\n{}\n", entry("a")));
    assert!(e.contains("line 2: no session header"), "{e}");
    // A line before the header that is no object says what it is.
    let e = err_of(&format!("null\n{HEADER}\n"));
    assert!(
        e.contains("line 1: no session header: expected the session header object, got null"),
        "{e}"
    );
    let e = err_of(r#"{"type":"session","version":2,"id":"s"}"#);
    assert!(
        e.contains("line 1: session version 2 is older than 3"),
        "{e}"
    );
    let e = err_of(r#"{"type":"session","id":"s"}"#);
    assert!(e.contains("session version 1"), "{e}");
    let e = err_of(r#"{"type":"session","version":"3","id":"s"}"#);
    assert!(e.contains("version must be a number"), "{e}");
    let e = err_of(r#"{"type":"session","version":3}"#);
    assert!(e.contains("no string id"), "{e}");
    // Newer versions read as they are.
    assert_eq!(
        parse_ok(r#"{"type":"session","version":4,"id":"s"}"#)
            .values
            .len(),
        1
    );
}

#[test]
fn non_object_entries_are_errors() {
    let e = err_of(&format!("{HEADER}\n{}\nnull\n", entry("a")));
    assert!(
        e.contains("line 3: expected a session entry object, got null"),
        "{e}"
    );
}

#[test]
fn lone_surrogate_escapes_keep_their_js_length() {
    let text = format!(
        "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\\ud83d\",\"text\":\"x\\ude00y\\ud83d\\ude00\"}}\n"
    );
    let file = parse_ok(&text);
    let id = file.values[1].get("id").and_then(Value::as_js_str).unwrap();
    assert_eq!(id.utf16_len(), 2);
    assert_eq!(id.to_utf16(), vec![u16::from(b'a'), 0xd83d]);
    let t = file.values[1]
        .get("text")
        .and_then(Value::as_js_str)
        .unwrap();
    assert_eq!(t.utf16_len(), 5);
}

#[test]
fn invalid_utf8_decodes_to_replacement_characters() {
    let mut bytes = format!("{HEADER}\n{{\"text\":\"").into_bytes();
    bytes.extend_from_slice(b"\xed\xa0\xbd\xff");
    bytes.extend_from_slice(b"\"}\n");
    let file = parse_with_chunk_size(&mut bytes.as_slice(), "t", CHUNK_BYTES, json::parse).unwrap();
    let t = file.values[1].get("text").and_then(Value::as_str).unwrap();
    assert_eq!(t, "\u{fffd}\u{fffd}\u{fffd}\u{fffd}");
}

#[test]
fn missing_files_are_errors_naming_the_path() {
    let e = read_session_file(Path::new("/nonexistent/x.jsonl"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/x.jsonl: cannot open"), "{e}");
}

/// An endless stream of `byte`, counting what is read from it.
struct Endless {
    byte: u8,
    read: usize,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        buf.fill(self.byte);
        self.read += buf.len();
        Ok(buf.len())
    }
}

#[test]
fn a_line_longer_than_any_session_line_ends_the_read() {
    let mut endless = Endless { byte: 0, read: 0 };
    let mut sent = 0;
    let err = for_each_chunk(&mut endless, 64, 1000, Vec::with_capacity, |_| {
        sent += 1;
        true
    })
    .expect_err("an endless line is an error");
    assert_eq!(
        err.to_string(),
        "the line at byte 0 is longer than 1000 bytes, more than any session line holds"
    );
    assert_eq!(sent, 0);
    assert!(endless.read <= 1000 + 64, "read {} bytes", endless.read);

    // After complete lines, the long one is named by where it starts.
    let text = format!("{HEADER}\n{}\n{}", entry("a"), "x".repeat(5000));
    let start = HEADER.len() + entry("a").len() + 2;
    let mut sent = Vec::new();
    let err = for_each_chunk(&mut text.as_bytes(), 64, 1000, Vec::with_capacity, |c| {
        sent.push(c);
        true
    })
    .expect_err("a long line is an error");
    assert_eq!(
        err.to_string(),
        format!(
            "the line at byte {start} is longer than 1000 bytes, more than any session line holds"
        )
    );
    assert_eq!(sent.concat(), text.as_bytes()[..start]);

    // A line of exactly the limit is read; the file functions' limit is the
    // agent's: 3 bytes for each of a JS string's 2**29 - 24 units.
    let line = "y".repeat(1000);
    let mut sent = Vec::new();
    for_each_chunk(&mut line.as_bytes(), 64, 1000, Vec::with_capacity, |c| {
        sent.push(c);
        true
    })
    .expect("a line of the limit is read");
    assert_eq!(sent.concat(), line.as_bytes());
    assert_eq!(MAX_LINE_BYTES, 3 * 536_870_888);
}

/// Endless lines of a session: its header, then one entry after another.
struct EndlessLines {
    text: Vec<u8>,
    at: usize,
    read: u64,
}

impl Read for EndlessLines {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.text.len() - self.at);
        buf[..n].copy_from_slice(&self.text[self.at..self.at + n]);
        // After the header, the entry line over and over.
        self.at = if self.at + n == self.text.len() {
            HEADER.len() + 1
        } else {
            self.at + n
        };
        self.read += n as u64;
        Ok(n)
    }
}

#[test]
fn a_stream_is_read_up_to_its_cap() {
    let text = format!("{HEADER}\n{}\n", entry("a")).into_bytes();
    // Endless short lines, which no line limit ends.
    let mut endless = Capped::new(
        EndlessLines {
            text: text.clone(),
            at: 0,
            read: 0,
        },
        100_000,
    );
    let err = parse_with_chunk_size(&mut endless, "pipe", 4096, json::parse)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "pipe: cannot read: more than 100000 bytes, the most read from a pipe or a device"
    );
    assert!(
        endless.inner.read <= 100_001,
        "read {} bytes",
        endless.inner.read
    );
    // A stream of exactly the cap is read whole.
    let mut whole = Capped::new(&text[..], text.len() as u64);
    let file = parse_with_chunk_size(&mut whole, "pipe", 4096, json::parse).unwrap();
    assert_eq!(file.values.len(), 2);
}
