//! Exports that plan from a session file: `prepareCompactionFromFile` (a
//! Promise; reading, parsing and planning run on the libuv pool) and its
//! synchronous twin. Only argument reading and building the small result
//! object happen on the JS thread.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::ptr;

use napi::bindgen_prelude::{AsyncTask, Unknown};
use napi::{sys, Env, Task};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::args::claude_summarizer;
use crate::js::errors::{error_value, run};
use crate::js::flat::typed_array_parts;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::json::Value;
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::view::{Kind, View};
use prime_compaction_core::plan::from_file::{
    branch_lines, prepare_compaction_from_bytes, prepare_compaction_from_file, FilePlan,
    PreviousSummary,
};
use prime_compaction_core::plan::settings::{read_budget, Budget, DEFAULT_SETTINGS};
use prime_compaction_core::transcript::from_file::{
    serialize_for_summary_from_file, FileTranscript,
};

/// What a file call was asked for, read on the JS thread.
pub struct FileRequest {
    pub path: PathBuf,
    pub leaf: Option<JsStr>,
    /// The kept budget and how tokens are counted (`settings.tokenizer`).
    pub budget: Budget,
    /// Keep readable assistant reasoning in transcripts: false for a
    /// Claude-family `options.model` or `options.reasoning === false`.
    pub reasoning: bool,
    /// The agent line whose rules the plan follows.
    pub line: &'static AgentLine,
}

fn string_of(v: &JsVal<'_>, name: &str) -> Result<JsStr> {
    v.string().ok_or_else(|| {
        Error::type_error(
            name,
            format!("expected a string, got {}", v.kind().describe()),
        )
    })
}

/// Reads `(path, options?, line)` with `options = { leafId?, settings?, model?, reasoning? }`;
/// `model` and `reasoning` only for a call that writes a transcript (the
/// planners' options have neither).
pub fn read_request(
    cx: &Cx,
    path: &Arg,
    options: &Arg,
    line: &Arg,
    transcript: bool,
) -> Result<FileRequest> {
    let line = line_arg(cx, line)?;
    let path = string_of(&cx.wrap(path.0)?, "path")?;
    // As Node's `fs` takes a path: none empty, none with a NUL in it.
    if path.is_empty() {
        return Err(Error::type_error(
            "path",
            "expected a file path, got an empty string",
        ));
    }
    if path.code_units().any(|u| u == 0) {
        return Err(Error::type_error(
            "path",
            "expected a file path without NUL characters",
        ));
    }
    let options = cx.wrap(options.0)?;
    let mut leaf = None;
    let mut budget = Budget::from(&DEFAULT_SETTINGS);
    let mut reasoning = true;
    match options.kind() {
        Kind::Undefined | Kind::Null => {}
        Kind::Object => {
            let leaf_id = options_field(cx, &options, c"leafId")?;
            if !matches!(leaf_id.kind(), Kind::Undefined | Kind::Null) {
                leaf = Some(string_of(&leaf_id, "options.leafId")?);
            }
            let given = options_field(cx, &options, c"settings")?;
            if !given.is_undefined() {
                budget = read_budget(&given).within("options.settings")?;
            }
            if transcript {
                let model = options_field(cx, &options, c"model")?;
                if claude_summarizer(&model, "options.model")?
                    || options_field(cx, &options, c"reasoning")?.boolean() == Some(false)
                {
                    reasoning = false;
                }
            }
        }
        other => {
            return Err(Error::type_error(
                "options",
                format!("expected an object, got {}", other.describe()),
            ))
        }
    }
    Ok(FileRequest {
        path: PathBuf::from(path.to_string_lossy().into_owned()),
        leaf,
        budget,
        reasoning,
        line,
    })
}

fn options_field<'c>(cx: &'c Cx, options: &JsVal<'c>, name: &std::ffi::CStr) -> Result<JsVal<'c>> {
    let mut out = ptr::null_mut();
    check(unsafe { sys::napi_get_named_property(cx.env, options.raw, name.as_ptr(), &mut out) })?;
    cx.wrap(out)
}

/// `JSON.parse(text)` on the JS side: rebuilds a parsed value exactly.
fn json_parse(cx: &Cx, text: &str) -> Result<Raw> {
    let mut global = ptr::null_mut();
    let mut json = ptr::null_mut();
    let mut parse = ptr::null_mut();
    let mut out = ptr::null_mut();
    let arg = cx.str(text)?;
    unsafe {
        check(sys::napi_get_global(cx.env, &mut global))?;
        check(sys::napi_get_named_property(
            cx.env,
            global,
            c"JSON".as_ptr(),
            &mut json,
        ))?;
        check(sys::napi_get_named_property(
            cx.env,
            json,
            c"parse".as_ptr(),
            &mut parse,
        ))?;
        check(sys::napi_call_function(
            cx.env, json, parse, 1, &arg, &mut out,
        ))?;
    }
    Ok(out)
}

fn previous_summary_to_js(cx: &Cx, summary: &PreviousSummary) -> Result<Raw> {
    match summary {
        PreviousSummary::Primitive(Value::String(s)) => cx.js_str(s),
        PreviousSummary::Primitive(Value::Number(n)) => cx.number(*n),
        PreviousSummary::Primitive(Value::Bool(b)) => cx.boolean(*b),
        // (null: `PreviousSummary` holds no other primitive)
        PreviousSummary::Primitive(_) => cx.null(),
        PreviousSummary::Json(text) => json_parse(cx, text),
    }
}

fn ids_to_js(cx: &Cx, ids: &[Option<JsStr>]) -> Result<Raw> {
    cx.array(ids.iter().map(|id| match id {
        Some(id) => cx.js_str(id),
        None => Ok(cx.undefined()),
    }))
}

/// The plan object, or `undefined`.
pub fn plan_to_js(cx: &Cx, plan: Option<&FilePlan>) -> Result<Raw> {
    let Some(plan) = plan else {
        return Ok(cx.undefined());
    };
    let o = cx.object()?;
    cx.set(
        o,
        c"firstKeptEntryId",
        cx.js_str(&plan.first_kept_entry_id)?,
    )?;
    cx.set(o, c"tokensBefore", cx.number(plan.tokens_before)?)?;
    cx.set(o, c"isSplitTurn", cx.boolean(plan.is_split_turn)?)?;
    cx.set(
        o,
        c"messagesToSummarizeIds",
        ids_to_js(cx, &plan.messages_to_summarize_ids)?,
    )?;
    cx.set(o, c"turnPrefixIds", ids_to_js(cx, &plan.turn_prefix_ids)?)?;
    let ops = cx.object()?;
    cx.set(ops, c"read", cx.strings(plan.file_ops.read.iter())?)?;
    cx.set(ops, c"written", cx.strings(plan.file_ops.written.iter())?)?;
    cx.set(ops, c"edited", cx.strings(plan.file_ops.edited.iter())?)?;
    cx.set(o, c"fileOps", ops)?;
    let previous = match &plan.previous_summary {
        Some(v) => previous_summary_to_js(cx, v).within("previousSummary")?,
        None => cx.undefined(),
    };
    cx.set(o, c"previousSummary", previous)?;
    Ok(o)
}

/// The stack a synchronous file function's work gets (see [`on_own_stack`]).
const STACK_BYTES: usize = 16 << 20;

/// Runs a synchronous file function's work (`f`, which touches no JS value)
/// on a thread of its own with [`STACK_BYTES`] of stack, and waits for it.
/// A parsed line may be nested up to the parse's cap, and freeing it
/// recurses once per level; the calling JS thread may have little stack
/// left (a worker thread deep in its own recursion), where a stack
/// overflow would end the process. Where no thread can be started, `f`
/// runs here.
fn on_own_stack<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let mut work = Some(f);
    let mut run = || match work.take() {
        Some(f) => guarded(f),
        None => Err(Error::internal("file work run twice")),
    };
    let ran = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, &mut run)
            .ok()
            .map(|thread| thread.join())
    });
    match ran {
        Some(Ok(result)) => result,
        Some(Err(_)) => Err(off_thread_panic()),
        None => run(),
    }
}

/// Runs `f` off the JS thread, turning a panic into an error.
pub fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(off_thread_panic()))
}

fn off_thread_panic() -> Error {
    Error::internal("panic in work off the JS thread")
}

/// A core error as the value a Promise rejects with: a `TypeError`,
/// `RangeError` or `Error`, as the synchronous twin would throw.
pub fn rejection(env: &Env, err: Error) -> napi::Error {
    let raw = env.raw();
    let value = error_value(raw, &err);
    napi::Error::from_unknown_without_coercion(unsafe { Unknown::from_raw_unchecked(raw, value) })
}

/// Builds a JS result on the JS thread, after the work is done. (napi-rs
/// calls this from a C callback, where a panic would end the process: one
/// here is an error, as in `run`.)
pub fn resolve_with<T>(
    env: &Env,
    output: Result<T>,
    build: impl FnOnce(&Cx, T) -> Result<Raw>,
) -> napi::Result<RawValue> {
    let built = output.and_then(|value| {
        let cx = Cx::new(env.raw())?;
        catch_unwind(AssertUnwindSafe(|| build(&cx, value)))
            .unwrap_or_else(|_| Err(Error::internal("panic while building a result")))
    });
    built.map(RawValue).map_err(|e| rejection(env, e))
}

pub struct PrepareFromFile {
    request: FileRequest,
}

impl Task for PrepareFromFile {
    type Output = Result<Option<FilePlan>>;
    type JsValue = RawValue;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let r = &self.request;
        Ok(guarded(|| {
            prepare_compaction_from_file(&r.path, r.leaf.as_ref(), r.budget, r.line)
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<RawValue> {
        resolve_with(&env, output, |cx, plan| plan_to_js(cx, plan.as_ref()))
    }
}

/// `prepareCompactionFromFile(path, options?)`: reads a version-3 session
/// file, takes the branch ending at `options.leafId` (default: the last
/// entry) and plans its compaction as the agent line does, all on the libuv pool. Resolves to the
/// plan with entries named by id, or `undefined` where `prepareCompaction`
/// returns `undefined`.
#[napi(
    js_name = "prepareCompactionFromFile",
    ts_return_type = "Promise<unknown>"
)]
pub fn prepare_compaction_from_file_async(
    env: Env,
    path: Arg,
    options: Arg,
    line: Arg,
) -> napi::Result<AsyncTask<PrepareFromFile>> {
    run(&env, |cx| {
        let request = read_request(cx, &path, &options, &line, false)?;
        Ok(AsyncTask::new(PrepareFromFile { request }))
    })
}

/// `prepareCompactionFromFileSync(path, options?)`: the same plan, computed
/// on the calling thread.
#[napi(js_name = "prepareCompactionFromFileSync")]
pub fn prepare_compaction_from_file_sync(
    env: Env,
    path: Arg,
    options: Arg,
    line: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let r = read_request(cx, &path, &options, &line, false)?;
        let plan = on_own_stack(|| {
            prepare_compaction_from_file(&r.path, r.leaf.as_ref(), r.budget, r.line)
        })?;
        Ok(RawValue(plan_to_js(cx, plan.as_ref())?))
    })
}

/// The bytes of `bytes`, a `Uint8Array` (a `Buffer`), read after every
/// other argument, so no JS runs while they are used. Bytes over a
/// SharedArrayBuffer, which another thread may write meanwhile, are copied.
fn bytes_arg<'c>(cx: &'c Cx, bytes: &Arg) -> Result<Cow<'c, [u8]>> {
    let not_bytes = || Error::type_error("bytes", "expected a Uint8Array");
    let mut is_typed = false;
    check(unsafe { sys::napi_is_typedarray(cx.env, bytes.0, &mut is_typed) })?;
    if !is_typed {
        return Err(not_bytes());
    }
    let parts = typed_array_parts(cx, bytes.0)?;
    if parts.kind != sys::TypedarrayType::uint8_array || (parts.data.is_null() && parts.length > 0)
    {
        return Err(not_bytes());
    }
    if parts.length == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    let mut plain = false;
    check(unsafe { sys::napi_is_arraybuffer(cx.env, parts.buffer, &mut plain) })?;
    // SAFETY: a Uint8Array of `length` bytes at `data`. Its buffer stays
    // attached, and its memory in place, while no JS runs: the caller
    // parses them on this thread or waits for the thread that does.
    let view = unsafe { std::slice::from_raw_parts(parts.data.cast::<u8>(), parts.length) };
    Ok(if plain {
        Cow::Borrowed(view)
    } else {
        Cow::Owned(view.to_vec())
    })
}

/// `planSessionBytes(bytes, name, options?, line)`: the plan
/// `prepareCompactionFromFileSync(name, options?)` makes, from the file's
/// bytes as the caller read them (the CLI, which reads a pipe only once);
/// an `options.leafId` no entry has is an error here.
#[napi(
    js_name = "planSessionBytes",
    ts_args_type = "bytes: Uint8Array, name: string, options: unknown, line: number"
)]
pub fn plan_session_bytes(
    env: Env,
    bytes: Arg,
    name: Arg,
    options: Arg,
    line: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let r = read_request(cx, &name, &options, &line, false)?;
        let name = r.path.display().to_string();
        let bytes = bytes_arg(cx, &bytes)?;
        let bytes: &[u8] = &bytes;
        let plan = on_own_stack(|| {
            prepare_compaction_from_bytes(bytes, &name, r.leaf.as_ref(), r.budget, r.line)
        })?;
        Ok(RawValue(plan_to_js(cx, plan.as_ref())?))
    })
}

/// `{ plan, conversation, turnPrefix }`, or `undefined`.
pub fn transcript_to_js(cx: &Cx, transcript: Option<&FileTranscript>) -> Result<Raw> {
    let Some(t) = transcript else {
        return Ok(cx.undefined());
    };
    let o = cx.object()?;
    cx.set(o, c"plan", plan_to_js(cx, Some(&t.plan))?)?;
    cx.set(
        o,
        c"conversation",
        cx.js_str(&t.conversation).within("conversation")?,
    )?;
    let prefix = match &t.turn_prefix {
        Some(p) => cx.js_str(p).within("turnPrefix")?,
        None => cx.undefined(),
    };
    cx.set(o, c"turnPrefix", prefix)?;
    Ok(o)
}

fn transcript_of(r: &FileRequest) -> Result<Option<FileTranscript>> {
    serialize_for_summary_from_file(&r.path, r.leaf.as_ref(), r.budget, r.reasoning, r.line)
}

pub struct SerializeFromFile {
    request: FileRequest,
}

impl Task for SerializeFromFile {
    type Output = Result<Option<FileTranscript>>;
    type JsValue = RawValue;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(guarded(|| transcript_of(&self.request)))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<RawValue> {
        resolve_with(&env, output, |cx, t| transcript_to_js(cx, t.as_ref()))
    }
}

/// `serializeForSummaryFromFile(path, options?)`: the projected, serialized
/// transcripts the summarization requests for the file's compaction would
/// carry (`conversation`, and `turnPrefix` for a split turn), with the plan;
/// `undefined` where there is nothing to compact. Runs on the libuv pool.
#[napi(
    js_name = "serializeForSummaryFromFile",
    ts_return_type = "Promise<unknown>"
)]
pub fn serialize_for_summary_from_file_async(
    env: Env,
    path: Arg,
    options: Arg,
    line: Arg,
) -> napi::Result<AsyncTask<SerializeFromFile>> {
    run(&env, |cx| {
        let request = read_request(cx, &path, &options, &line, true)?;
        Ok(AsyncTask::new(SerializeFromFile { request }))
    })
}

/// `serializeForSummaryFromFileSync(path, options?)`: the same, on the calling thread.
#[napi(js_name = "serializeForSummaryFromFileSync")]
pub fn serialize_for_summary_from_file_sync(
    env: Env,
    path: Arg,
    options: Arg,
    line: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let request = read_request(cx, &path, &options, &line, true)?;
        let transcript = on_own_stack(|| transcript_of(&request))?;
        Ok(RawValue(transcript_to_js(cx, transcript.as_ref())?))
    })
}

/// `sessionFileBranch(bytes, name, leafId?)`: where the branch ending at
/// `leafId` (default: the last entry) lies in the session file `bytes`,
/// read by the file functions' rules (`branch_lines`,
/// crates/core/src/plan/from_file.rs), as `{ lines, ids }`: the 1-based
/// line of each of its entries, root first, and every entry's string id.
/// The CLI parses those lines itself and keeps the bytes to write back.
#[napi(
    js_name = "sessionFileBranch",
    ts_args_type = "bytes: Uint8Array, name: string, leafId?: string",
    ts_return_type = "{ lines: number[], ids: string[] }"
)]
pub fn session_file_branch(env: Env, bytes: Arg, name: Arg, leaf: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let name = string_of(&cx.wrap(name.0)?, "name")?;
        let leaf = cx.wrap(leaf.0)?;
        let leaf = match leaf.kind() {
            Kind::Undefined => None,
            _ => Some(string_of(&leaf, "leafId")?),
        };
        let bytes = bytes_arg(cx, &bytes)?;
        let bytes: &[u8] = &bytes;
        let found = on_own_stack(|| branch_lines(bytes, &name.to_string_lossy(), leaf.as_ref()))?;
        let o = cx.object()?;
        cx.set(
            o,
            c"lines",
            cx.array(found.lines.iter().map(|&line| cx.number(f64::from(line))))?,
        )?;
        cx.set(
            o,
            c"ids",
            cx.array(found.ids.iter().map(|id| cx.js_str(id)))?,
        )?;
        Ok(RawValue(o))
    })
}
