//! `prepareCompactionAsync`: the Promise twin of `prepareCompaction`.
//!
//! Reading the caller's objects must happen on the JS thread. index.js does
//! it in slices of a few milliseconds, between which the event loop runs:
//! each slice turns entries into JSON text with V8's own `JSON.stringify`
//! and hands it to [`EntriesJson::push`]. Parsing that text and planning run
//! on the libuv pool ([`PlanFromJson`]); the plan comes back as indices that
//! index.js maps onto the caller's own entries, as for the synchronous call.

use std::ptr;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::{self, JoinHandle};

use napi::bindgen_prelude::AsyncTask;
use napi::{sys, Env, Task};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::from_file::{guarded, resolve_with};
use crate::js::errors::run;
use crate::js::out::{Arg, RawValue};
use crate::js::view::check;
use crate::prepare_compaction::plan_object;
use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::json::view::Val;
use prime_compaction_core::js::json::Value;
use prime_compaction_core::plan::entries_json::{parse_chunks, Chunk};
use prime_compaction_core::plan::prepare::{prepare_compaction, Preparation};
use prime_compaction_core::plan::settings::{read_settings, Settings};
use prime_compaction_core::session::entries::Entries;

/// Chunks waiting for the parser thread; a full queue makes `push` wait,
/// which bounds the memory held.
const QUEUE: usize = 8;

/// Entries arriving as JSON text, parsed on a thread of their own while
/// index.js reads the next slice; planned off the JS thread.
#[napi]
pub struct EntriesJson {
    settings: Settings,
    line: &'static AgentLine,
    sender: Option<SyncSender<Chunk>>,
    parser: Option<JoinHandle<Result<Vec<Value>>>>,
}

#[napi]
impl EntriesJson {
    /// Checks `settings` at once, so bad settings fail before any work;
    /// plans as the agent line `line` does.
    #[napi(constructor)]
    pub fn new(env: Env, settings: Arg, line: Arg) -> napi::Result<Self> {
        let (settings, line) = run(&env, |cx| {
            let line = line_arg(cx, &line)?;
            Ok((
                read_settings(&cx.wrap(settings.0)?).within("settings")?,
                line,
            ))
        })?;
        let counter = settings.counter;
        let (sender, receiver) = sync_channel::<Chunk>(QUEUE);
        let parser = thread::Builder::new()
            .name("prime-compaction-entries".into())
            .spawn(move || guarded(|| parse_chunks(receiver.into_iter(), counter)))
            .map_err(|e| napi::Error::from_reason(format!("cannot start a thread: {e}")))?;
        Ok(EntriesJson {
            settings,
            line,
            sender: Some(sender),
            parser: Some(parser),
        })
    }

    /// Adds `JSON.stringify(pathEntries.slice(first, first + count))`.
    #[napi]
    pub fn push(&mut self, env: Env, json: Arg, first: u32, count: u32) -> napi::Result<()> {
        let text = run(&env, |cx| utf8_of(cx.env, json.0))?;
        if let Some(sender) = &self.sender {
            // A closed channel means the parser stopped on an error, which
            // `plan` reports.
            let _ = sender.send(Chunk {
                text,
                first: first as usize,
                count: count as usize,
            });
        }
        Ok(())
    }

    /// Stops early (the caller failed while reading): the parser thread
    /// ends once it has parsed what was queued, and frees it.
    #[napi]
    pub fn cancel(&mut self) {
        self.sender = None;
        self.parser = None;
    }

    /// Finishes parsing and plans on the libuv pool; resolves to the plan
    /// object (entry indices) or `undefined`.
    #[napi(ts_return_type = "Promise<unknown>")]
    pub fn plan(&mut self) -> AsyncTask<PlanFromJson> {
        self.sender = None;
        AsyncTask::new(PlanFromJson {
            settings: self.settings,
            line: self.line,
            parser: self.parser.take(),
        })
    }
}

/// A JS string as UTF-8 in one pass: sized for the worst case (three bytes
/// a UTF-16 unit) and cut to what V8 wrote. `JSON.stringify` escapes lone
/// surrogates, so its output converts exactly.
fn utf8_of(env: sys::napi_env, value: sys::napi_value) -> Result<Vec<u8>> {
    let mut units = 0usize;
    check(unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut units) })?;
    let mut buf = vec![0u8; units * 3 + 1];
    let mut written = 0usize;
    check(unsafe {
        sys::napi_get_value_string_utf8(
            env,
            value,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut written,
        )
    })?;
    buf.truncate(written);
    // Queued chunks should hold their text, not three times its room.
    buf.shrink_to_fit();
    Ok(buf)
}

pub struct PlanFromJson {
    settings: Settings,
    line: &'static AgentLine,
    parser: Option<JoinHandle<Result<Vec<Value>>>>,
}

fn plan_entries(
    settings: Settings,
    line: &'static AgentLine,
    entries: Vec<Value>,
) -> Result<Option<Preparation>> {
    let entries = Value::Array(entries);
    let array = Val::new(&entries);
    let entries = Entries::new(&array, "pathEntries", line)?.with_counter(settings.counter);
    prepare_compaction(&entries, settings.keep_recent_tokens)
}

impl Task for PlanFromJson {
    type Output = Result<Option<Preparation>>;
    type JsValue = RawValue;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let Some(parser) = self.parser.take() else {
            return Ok(Err(Error::invalid(
                "prepareCompactionAsync: plan() called twice",
            )));
        };
        let entries = parser.join().unwrap_or_else(|_| {
            Err(Error::invalid(
                "prime-compaction internal error (a bug, please report it): the entry parser stopped",
            ))
        });
        let (settings, line) = (self.settings, self.line);
        Ok(entries.and_then(|entries| guarded(|| plan_entries(settings, line, entries))))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<RawValue> {
        resolve_with(&env, output, |cx, plan| plan_object(cx, plan.as_ref()))
    }
}
