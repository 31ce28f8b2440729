//! Entries handed over as JSON text, a slice at a time
//! (`prepareCompactionAsync`): index.js turns `pathEntries.slice(first,
//! first + count)` into JSON with V8's own `JSON.stringify`, and the
//! binding queues the text with the slice's place. The slices must come in
//! order, each an array of exactly `count` entries starting where the last
//! one ended; anything else is an error naming the slice, never entries in
//! the wrong place.

use crate::error::{Error, Result};
use crate::js::json::{parse, parse_for_plan, ParseError, Value};
use crate::tokens::estimate::Counter;

/// A slice of the entries as JSON: `JSON.stringify(pathEntries.slice(first,
/// first + count))`, as UTF-8.
pub struct Chunk {
    pub text: Vec<u8>,
    pub first: usize,
    pub count: usize,
}

/// Parses chunks as they come, in order, into the entries. With the chars/4
/// estimate a plan reads only the length of message texts, so long ones are
/// measured instead of kept (see `parse_for_plan`).
pub fn parse_chunks(chunks: impl Iterator<Item = Chunk>, counter: Counter) -> Result<Vec<Value>> {
    let parse: fn(&str) -> std::result::Result<Value, ParseError> = match counter {
        Counter::Estimate => parse_for_plan,
        Counter::Exact(_) => parse,
    };
    let mut entries = Vec::new();
    for chunk in chunks {
        let range = || {
            format!(
                "pathEntries[{}..{}]",
                chunk.first,
                chunk.first.saturating_add(chunk.count)
            )
        };
        let text = std::str::from_utf8(&chunk.text).map_err(|e| ParseError {
            offset: e.valid_up_to(),
            message: "invalid UTF-8",
        });
        let values = match text.and_then(parse) {
            Ok(Value::Array(values)) => values,
            Ok(_) => return Err(Error::invalid(format!("{}: not a JSON array", range()))),
            Err(e) => return Err(Error::invalid(format!("{}: {e}", range()))),
        };
        if values.len() != chunk.count || entries.len() != chunk.first {
            return Err(Error::invalid(format!(
                "{}: {} entries read back, out of order or short",
                range(),
                values.len()
            )));
        }
        entries.extend(values);
    }
    Ok(entries)
}
