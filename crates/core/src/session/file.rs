//! Reading a pi session file (JSONL, version 3) into parsed entries.
//!
//! The file is streamed in chunks of a few MiB, each cut after its last
//! newline, and two threads parse the chunks' lines while the calling thread
//! reads on; chunks come back in order. At no point is the whole file held
//! next to the parsed values: only the chunks in flight are.
//!
//! Lines are what the reference's `parseSessionEntries` sees: the text split
//! on `\n` (a trailing `\r` is JSON whitespace, so CRLF files read the same),
//! decoded as UTF-8 the way `readFileSync(path, "utf8")` decodes it (bad bytes
//! become U+FFFD), blank lines (JS whitespace only) skipped. Unlike the
//! reference, a malformed line is an error naming its line number, never a
//! silently dropped entry, with one exception: a line that starts an object
//! and ends before the object does (`cut_short`). That is an append cut
//! short (the agent's `SessionManager` appends each entry with one
//! `appendFileSync`, which a SIGKILL can cut between pages), and it is left
//! out, as the reference leaves it out: at the file's end, or followed by a
//! newline and more entries, as 1.6's `SessionManager` leaves it when it
//! opens the file (it ends the line with a newline, then appends after it).
//! A cut line that a later append joined (0.78's `SessionManager` does not
//! end it) is mostly malformed where the next entry starts, and an error;
//! where the cut fell just where a value may begin, the joined line is
//! itself an object cut short, and left out, as the reference leaves it.

use std::borrow::Cow;
use std::fs::File;
use std::io::{ErrorKind as IoErrorKind, Read};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::error::{Error, Result};
use crate::js::json::{self, Value};
use crate::transcript::text::is_trim_space;

/// The session format version this crate reads (the reference's `CURRENT_SESSION_VERSION`).
pub const SESSION_VERSION: f64 = 3.0;

/// Bytes per parse chunk. Large enough that the per-chunk overhead vanishes,
/// small enough that the chunks in flight stay a small fraction of the file.
const CHUNK_BYTES: usize = 4 << 20;

/// The longest line a session file can hold, in bytes: the agent writes each
/// entry as one `JSON.stringify` string, at most 2**29 - 24 UTF-16 units
/// (V8's longest string), and a unit takes at most 3 bytes of UTF-8.
const MAX_LINE_BYTES: usize = 3 * ((1 << 29) - 24);

/// Chunks queued per parser thread beyond the one it is working on.
const QUEUE_DEPTH: usize = 1;

/// Parser threads.
const PARSERS: usize = 2;

/// A parsed session file: the header and every entry after it, in file order.
#[derive(Debug, Default)]
pub struct SessionFile {
    /// Every non-blank line's value, the header first.
    pub values: Vec<Value>,
    /// The 1-based line number of each value.
    pub lines: Vec<u32>,
}

/// A line that failed to parse, by its number within its chunk.
struct LineError {
    local_line: u32,
    message: String,
}

struct ChunkOut {
    /// Newlines in the chunk: the next chunk's first line number minus this one's.
    newlines: u32,
    values: Vec<Value>,
    /// Chunk-local 0-based line index of each value.
    local_lines: Vec<u32>,
    error: Option<LineError>,
}

/// Whether `c` is whitespace to JS's `String.prototype.trim` (all of it
/// lies in the BMP).
fn is_js_whitespace(c: char) -> bool {
    u16::try_from(u32::from(c)).is_ok_and(is_trim_space)
}

fn decode(line: &[u8]) -> Cow<'_, str> {
    // The strict SIMD check is faster on valid text than std's (see
    // docs/files.md); only bad bytes need the lossy walk.
    match simdutf8::basic::from_utf8(line) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// `!line.trim()`: the line holds nothing but JS whitespace.
fn is_blank(line: &[u8]) -> bool {
    // Every line of a real session starts with `{`; only others need a look.
    match line.first() {
        None => true,
        Some(b'{') => false,
        Some(_) => decode(line).chars().all(is_js_whitespace),
    }
}

/// Whether the line `line`, whose parse failed with `err`, is an entry cut
/// short: it starts a JSON object and ends before the object does, as an
/// append cut short leaves it. The session readers leave such a line out. An
/// entry is an object, so a line that starts any other way (`[`, a literal,
/// a number, a string) is malformed however it ends.
fn cut_short(line: &str, err: &json::ParseError) -> bool {
    err.input_ended(line)
        && line
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with('{')
}

/// `err` of the decoded line `text`, with its column in characters.
fn describe_parse_error(text: &str, err: &json::ParseError) -> String {
    let offset = err.offset.min(text.len());
    let column = text.char_indices().take_while(|(i, _)| *i < offset).count() + 1;
    format!("malformed JSON: {} at column {column}", err.message)
}

/// Parses chunk number `index`. `first_error` holds the lowest index of a
/// chunk that failed so far: chunks after it are skipped, since only the
/// first error in file order is reported.
fn parse_chunk(
    index: usize,
    chunk: &[u8],
    first_error: &AtomicUsize,
    parse_line: LineParser,
) -> ChunkOut {
    let mut out = ChunkOut {
        newlines: 0,
        values: Vec::new(),
        local_lines: Vec::new(),
        error: None,
    };
    if first_error.load(Ordering::Relaxed) < index {
        return out;
    }
    let mut rest = chunk;
    let mut local_line = 0u32;
    loop {
        let (line, next) = match memchr_newline(rest) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        if !is_blank(line) {
            let text = decode(line);
            match parse_line(&text) {
                Ok(value) => {
                    out.values.push(value);
                    out.local_lines.push(local_line);
                }
                // An append cut short, left out (see the module's docs).
                Err(err) if cut_short(&text, &err) => {}
                Err(err) => {
                    out.error = Some(LineError {
                        local_line,
                        message: describe_parse_error(&text, &err),
                    });
                    first_error.fetch_min(index, Ordering::Relaxed);
                    return out;
                }
            }
        }
        match next {
            Some(next) => {
                out.newlines += 1;
                local_line += 1;
                rest = next;
            }
            None => break,
        }
    }
    out
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

fn memrchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memrchr(b'\n', bytes)
}

/// Names the file in an error.
fn file_error(path: &str, message: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{path}: {message}"))
}

/// `{path}: {what}: {e}`, with the code Node's `fs` gives the reason where
/// it is one of these ([`ErrorKind::Os`](crate::error::ErrorKind::Os)).
fn io_error(path: &str, what: &str, e: &std::io::Error) -> Error {
    let message = format!("{path}: {what}: {e}");
    let code = match e.kind() {
        IoErrorKind::NotFound => "ENOENT",
        IoErrorKind::PermissionDenied => "EACCES",
        IoErrorKind::IsADirectory => "EISDIR",
        IoErrorKind::NotADirectory => "ENOTDIR",
        _ => return Error::invalid(message),
    };
    Error::os(code, message)
}

/// Reads `len` or more bytes (up to EOF) onto the end of `buf`.
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>, len: usize) -> std::io::Result<bool> {
    let target = buf.len() + len;
    while buf.len() < target {
        let start = buf.len();
        buf.resize(target, 0);
        match reader.read(&mut buf[start..]) {
            Ok(0) => {
                buf.truncate(start);
                return Ok(false);
            }
            Ok(n) => buf.truncate(start + n),
            Err(e) if e.kind() == IoErrorKind::Interrupted => buf.truncate(start),
            Err(e) => {
                buf.truncate(start);
                return Err(e);
            }
        }
    }
    Ok(true)
}

/// Splits the stream into chunks that end just after a newline (the last
/// one ends at EOF) and hands each to `send`, until `send` returns false.
/// `buffer(n)` gives an empty buffer with room for `n` bytes. A line longer
/// than `max_line` bytes is an error, found once that many bytes of it are
/// read: an endless one (a device, a pipe) would take all memory.
fn for_each_chunk(
    reader: &mut impl Read,
    chunk_bytes: usize,
    max_line: usize,
    mut buffer: impl FnMut(usize) -> Vec<u8>,
    mut send: impl FnMut(Vec<u8>) -> bool,
) -> std::io::Result<()> {
    let mut pending: Vec<u8> = buffer(chunk_bytes);
    let mut first = true;
    // Where `pending` starts in the stream.
    let mut offset = 0u64;
    loop {
        // `pending` holds no newline: only what this fill adds is searched.
        let searched = pending.len();
        let more = fill(reader, &mut pending, chunk_bytes)?;
        if first {
            first = false;
            // `content.trim()` drops a byte-order mark before the header.
            if pending.starts_with(b"\xEF\xBB\xBF") {
                pending.drain(..3);
                offset = 3;
            }
        }
        let cut = memrchr_newline(&pending[searched..]).map(|i| i + searched);
        let line_start = cut.map_or(0, |c| c + 1);
        if pending.len() - line_start > max_line {
            return Err(std::io::Error::new(
                IoErrorKind::InvalidData,
                format!(
                    "the line at byte {} is longer than {max_line} bytes, more than any session line holds",
                    offset + line_start as u64
                ),
            ));
        }
        if !more {
            if !pending.is_empty() {
                send(pending);
            }
            return Ok(());
        }
        // A line longer than a chunk: keep reading until it ends.
        let Some(cut) = cut else {
            continue;
        };
        let tail = pending.split_off(cut + 1);
        offset += (cut + 1) as u64;
        let mut next = buffer(tail.len() + chunk_bytes);
        next.extend_from_slice(&tail);
        if !send(std::mem::replace(&mut pending, next)) {
            return Ok(());
        }
    }
}

/// Reads and parses every line of `reader`, named `path` in errors.
pub fn parse_session_stream(reader: &mut (impl Read + Send), path: &str) -> Result<SessionFile> {
    parse_with_chunk_size(reader, path, CHUNK_BYTES, json::parse)
}

/// The session file `bytes`, read as [`parse_session_stream`] reads it,
/// each line parsed by `parse_line`; a file smaller than a chunk is one
/// chunk of its own size (no 4 MiB buffer for a small file).
pub fn parse_session_bytes(
    bytes: &[u8],
    path: &str,
    parse_line: LineParser,
) -> Result<SessionFile> {
    let chunk_bytes = bytes.len().saturating_add(1).min(CHUNK_BYTES);
    parse_with_chunk_size(&mut &bytes[..], path, chunk_bytes, parse_line)
}

/// How each line becomes a value: [`json::parse`], or
/// [`json::parse_for_plan`] when only a plan will read the entries.
pub type LineParser = fn(&str) -> std::result::Result<Value, json::ParseError>;

fn parse_with_chunk_size(
    reader: &mut (impl Read + Send),
    path: &str,
    chunk_bytes: usize,
    parse_line: LineParser,
) -> Result<SessionFile> {
    let first_error = AtomicUsize::new(usize::MAX);
    let mut chunks: Vec<ChunkOut> = Vec::new();
    let read_result = std::thread::scope(|scope| {
        let mut senders = Vec::with_capacity(PARSERS);
        let mut receivers = Vec::with_capacity(PARSERS);
        // Parsed chunks' buffers come back to be read into again: a fresh
        // buffer costs a page fault every 4 KiB.
        let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
        for _ in 0..PARSERS {
            let (tx, rx) = mpsc::sync_channel::<(usize, Vec<u8>)>(QUEUE_DEPTH);
            let (out_tx, out_rx) = mpsc::channel::<ChunkOut>();
            let first_error = &first_error;
            let recycle = recycle_tx.clone();
            scope.spawn(move || {
                for (index, mut chunk) in rx {
                    let out = parse_chunk(index, &chunk, first_error, parse_line);
                    chunk.clear();
                    // The reader may be gone already; the buffer is then freed.
                    let _ = recycle.send(chunk);
                    if out_tx.send(out).is_err() {
                        return;
                    }
                }
            });
            senders.push(tx);
            receivers.push(out_rx);
        }
        drop(recycle_tx);
        let buffer = |n: usize| match recycle_rx.try_recv() {
            Ok(mut b) => {
                b.clear();
                b.reserve(n);
                b
            }
            Err(_) => Vec::with_capacity(n),
        };
        let mut sent = 0usize;
        let result = for_each_chunk(reader, chunk_bytes, MAX_LINE_BYTES, buffer, |chunk| {
            if first_error.load(Ordering::Relaxed) != usize::MAX {
                return false;
            }
            let ok = senders[sent % PARSERS].send((sent, chunk)).is_ok();
            sent += 1;
            ok
        });
        drop(senders);
        // Round-robin in, round-robin out: the chunks come back in file order.
        for i in 0..sent {
            match receivers[i % PARSERS].recv() {
                Ok(out) => chunks.push(out),
                Err(_) => break,
            }
        }
        result
    });
    read_result.map_err(|e| io_error(path, "cannot read", &e))?;
    assemble(chunks, path)
}

/// [`parse_session_stream`] on the calling thread alone, in chunks of
/// `chunk_bytes`: the same chunks parsed one after another, and the same
/// result (entries, line numbers or error) as the threaded reader gives for
/// any chunk size. Small chunks put many chunk boundaries in a short input,
/// which is what the fuzz targets use it for.
pub fn parse_session_sequential(
    reader: &mut impl Read,
    path: &str,
    chunk_bytes: usize,
) -> Result<SessionFile> {
    let first_error = AtomicUsize::new(usize::MAX);
    let mut chunks: Vec<ChunkOut> = Vec::new();
    let read_result = for_each_chunk(
        reader,
        chunk_bytes.max(1),
        MAX_LINE_BYTES,
        Vec::with_capacity,
        |chunk| {
            let out = parse_chunk(chunks.len(), &chunk, &first_error, json::parse);
            let failed = out.error.is_some();
            chunks.push(out);
            !failed
        },
    );
    read_result.map_err(|e| io_error(path, "cannot read", &e))?;
    assemble(chunks, path)
}

/// [`parse_session_stream`] in chunks of `chunk_bytes` (the threaded
/// reader, as it runs on a file, but with chunk boundaries where a test
/// wants them).
pub fn parse_session_stream_chunked(
    reader: &mut (impl Read + Send),
    path: &str,
    chunk_bytes: usize,
) -> Result<SessionFile> {
    parse_with_chunk_size(reader, path, chunk_bytes.max(1), json::parse)
}

/// The chunks' values in file order with their line numbers, or the first
/// chunk's error; then the header check.
fn assemble(chunks: Vec<ChunkOut>, path: &str) -> Result<SessionFile> {
    let total: usize = chunks.iter().map(|c| c.values.len()).sum();
    let mut file = SessionFile {
        values: Vec::with_capacity(total),
        lines: Vec::with_capacity(total),
    };
    let mut base = 1u32;
    for chunk in chunks {
        if let Some(err) = chunk.error {
            return Err(file_error(
                path,
                format!("line {}: {}", base + err.local_line, err.message),
            ));
        }
        file.lines
            .extend(chunk.local_lines.iter().map(|&l| base + l));
        file.values.extend(chunk.values);
        base += chunk.newlines;
    }
    check_header(&file, path)?;
    Ok(file)
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) | Value::Measured(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first entry must be a version-3 session header, and every entry an object.
fn check_header(file: &SessionFile, path: &str) -> Result<()> {
    let Some(header) = file.values.first() else {
        return Err(file_error(
            path,
            "no session header: the file has no entries",
        ));
    };
    let line = file.lines.first().copied().unwrap_or(1);
    let at = |message: String| file_error(path, format!("line {line}: {message}"));
    if !matches!(header, Value::Object(_)) {
        return Err(at(format!(
            "no session header: expected the session header object, got {}",
            type_of(header)
        )));
    }
    if header.get("type").and_then(Value::as_str) != Some("session") {
        return Err(at(
            "no session header: the first entry is not {\"type\":\"session\",...}".to_string(),
        ));
    }
    if header.get("id").and_then(Value::as_js_str).is_none() {
        return Err(at("session header has no string id".to_string()));
    }
    // The reference treats a missing version as version 1.
    match header.get("version") {
        None | Some(Value::Null) => {
            return Err(at(format!(
                "session version 1 (no version field) is older than {SESSION_VERSION}: \
                 open the session once in pi to migrate it"
            )))
        }
        Some(Value::Number(v)) if *v >= SESSION_VERSION => {}
        Some(Value::Number(v)) => {
            return Err(at(format!(
                "session version {} is older than {SESSION_VERSION}: \
                 open the session once in pi to migrate it",
                json::number_to_js_string(*v)
            )))
        }
        Some(other) => {
            return Err(at(format!(
                "session header version must be a number, got {}",
                type_of(other)
            )))
        }
    }
    for (value, line) in file.values.iter().zip(&file.lines) {
        if !matches!(value, Value::Object(_)) {
            return Err(file_error(
                path,
                format!(
                    "line {line}: expected a session entry object, got {}",
                    type_of(value)
                ),
            ));
        }
    }
    Ok(())
}

/// Opens and parses the session file at `path`.
pub fn read_session_file(path: &Path) -> Result<SessionFile> {
    read_session_file_with(path, json::parse)
}

/// [`read_session_file`], each line parsed by `parse_line`. A file that is
/// not a regular one (a pipe, a device) is read up to [`MAX_STREAM_BYTES`]:
/// an endless stream of short lines would otherwise take all memory.
pub fn read_session_file_with(path: &Path, parse_line: LineParser) -> Result<SessionFile> {
    let name = path.display().to_string();
    let mut file = File::open(path).map_err(|e| io_error(&name, "cannot open", &e))?;
    if file.metadata().is_ok_and(|m| m.is_file()) {
        return parse_with_chunk_size(&mut file, &name, CHUNK_BYTES, parse_line);
    }
    let mut capped = Capped::new(file, MAX_STREAM_BYTES);
    parse_with_chunk_size(&mut capped, &name, CHUNK_BYTES, parse_line)
}

/// The most read from a pipe or a device: 2 GiB, the most `readFileSync`
/// reads of a regular file (the CLI reads a pipe up to as much).
pub const MAX_STREAM_BYTES: u64 = (1 << 31) - 1;

/// A reader that fails once more than `cap` bytes have come from it.
struct Capped<R> {
    inner: R,
    cap: u64,
    left: u64,
}

impl<R> Capped<R> {
    fn new(inner: R, cap: u64) -> Self {
        Capped {
            inner,
            cap,
            left: cap,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // One byte past the cap tells a stream that goes on from one that ends there.
        let room = usize::try_from(self.left.saturating_add(1)).unwrap_or(usize::MAX);
        let n = buf.len().min(room);
        let got = self.inner.read(&mut buf[..n])?;
        if got as u64 > self.left {
            return Err(std::io::Error::new(
                IoErrorKind::InvalidData,
                format!(
                    "more than {} bytes, the most read from a pipe or a device",
                    self.cap
                ),
            ));
        }
        self.left -= got as u64;
        Ok(got)
    }
}

#[cfg(test)]
mod tests;
