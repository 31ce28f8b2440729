//! Exports for `prepareCompaction` and its helpers (token estimates, cut
//! points, usage, file operations, `convertToLlm`).

use napi::Env;
use napi_derive::napi;

use crate::js::errors::run;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{Cx, JsVal};
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::plan::cut_point::{find_cut_point, find_turn_start_index};
use prime_compaction_core::plan::file_ops::{
    compute_file_lists_values, extract_file_ops, format_file_operations, join_element, FileOps,
};
use prime_compaction_core::plan::prepare::{prepare_compaction, Preparation};
use prime_compaction_core::plan::settings::{
    read_counter, read_settings, should_compact, DEFAULT_SETTINGS,
};
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::model::EntryType;
use prime_compaction_core::tokens::estimate::Counter;
use prime_compaction_core::tokens::estimate::{
    context_tokens, estimate_context_tokens, valid_usage,
};

fn arg<'c>(cx: &'c Cx, a: &Arg) -> Result<JsVal<'c>> {
    cx.wrap(a.0)
}

fn number_arg(cx: &Cx, a: &Arg, name: &str) -> Result<f64> {
    let v = arg(cx, a)?;
    v.number().ok_or_else(|| {
        Error::type_error(
            name,
            format!("expected a number, got {}", v.kind().describe()),
        )
    })
}

/// An index argument: an integer (negative allowed, as the reference loops allow it).
fn index_arg(cx: &Cx, a: &Arg, name: &str) -> Result<i64> {
    let n = number_arg(cx, a, name)?;
    if n.fract() != 0.0 || !n.is_finite() || n.abs() > 9.0e15 {
        return Err(Error::type_error(
            name,
            format!("expected an integer index, got {n}"),
        ));
    }
    Ok(n as i64)
}

/// The plan for `prepareCompaction`; index.js turns indices back into the caller's messages.
#[napi(js_name = "prepareCompaction")]
pub fn prepare_compaction_native(
    env: Env,
    path_entries: Arg,
    settings: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let settings = read_settings(&arg(cx, &settings)?).within("settings")?;
        let array = arg(cx, &path_entries)?;
        let entries = Entries::new(&array, "pathEntries")?.with_counter(settings.counter);
        let plan = prepare_compaction(&entries, settings.keep_recent_tokens)?;
        Ok(RawValue(plan_object(cx, plan.as_ref())?))
    })
}

/// The plan object index.js maps onto the caller's entries; `undefined`
/// where the reference returns `undefined`.
pub fn plan_object(cx: &Cx, plan: Option<&Preparation>) -> Result<Raw> {
    let Some(plan) = plan else {
        return Ok(cx.undefined());
    };
    let o = cx.object()?;
    cx.set(
        o,
        c"firstKeptEntryIndex",
        cx.number(plan.first_kept_entry_index as f64)?,
    )?;
    cx.set(o, c"isSplitTurn", cx.boolean(plan.is_split_turn)?)?;
    cx.set(o, c"tokensBefore", cx.number(plan.tokens_before)?)?;
    cx.set(o, c"summarize", cx.u32_array(&plan.summarize)?)?;
    cx.set(o, c"turnPrefix", cx.u32_array(&plan.turn_prefix)?)?;
    let previous = plan.previous_compaction.map_or(-1.0, |p| p as f64);
    let details_from = plan.details_from.map_or(-1.0, |p| p as f64);
    cx.set(o, c"detailsFrom", cx.number(details_from)?)?;
    cx.set(o, c"previousCompactionIndex", cx.number(previous)?)?;
    set_file_ops(cx, o, &plan.file_ops)?;
    Ok(o)
}

fn set_file_ops(cx: &Cx, o: Raw, ops: &FileOps) -> Result<()> {
    cx.set(o, c"read", cx.strings(ops.read.iter())?)?;
    cx.set(o, c"written", cx.strings(ops.written.iter())?)?;
    cx.set(o, c"edited", cx.strings(ops.edited.iter())?)
}

/// `estimateTokens(message)`.
#[napi(js_name = "estimateTokens")]
pub fn estimate_tokens_native(env: Env, message: Arg, options: Option<Arg>) -> napi::Result<f64> {
    run(&env, |cx| {
        let counter = counter_option(cx, &options)?;
        Ok(counter.message(&arg(cx, &message)?).within("message")? as f64)
    })
}

/// `options.tokenizer` of an optional options (or settings) argument.
fn counter_option(cx: &Cx, options: &Option<Arg>) -> Result<Counter> {
    match options {
        None => Ok(Counter::Estimate),
        Some(o) => {
            let v = arg(cx, o)?;
            if !v.is_object_like() {
                return Err(Error::type_error(
                    "options",
                    format!("expected an object, got {}", v.kind().describe()),
                ));
            }
            read_counter(&v).within("options")
        }
    }
}

/// `findCutPoint(entries, startIndex, endIndex, keepRecentTokens)`.
#[napi(js_name = "findCutPoint")]
pub fn find_cut_point_native(
    env: Env,
    entries: Arg,
    start: Arg,
    end: Arg,
    keep: Arg,
    options: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let counter = counter_option(cx, &options)?;
        let array = arg(cx, &entries)?;
        let list = Entries::new(&array, "entries")?.with_counter(counter);
        let start = index_arg(cx, &start, "startIndex")?;
        let end = index_arg(cx, &end, "endIndex")?;
        let keep = number_arg(cx, &keep, "keepRecentTokens")?;
        let o = cx.object()?;
        if start >= end {
            // The reference reads nothing here and echoes startIndex.
            cx.set(o, c"firstKeptEntryIndex", cx.number(start as f64)?)?;
            cx.set(o, c"turnStartIndex", cx.number(-1.0)?)?;
            cx.set(o, c"isSplitTurn", cx.boolean(false)?)?;
            return Ok(RawValue(o));
        }
        if start < 0 || end as usize > list.len() {
            return Err(Error::range(
                "",
                format!(
                    "startIndex {start} and endIndex {end} must lie within entries (length {})",
                    list.len()
                ),
            ));
        }
        let cut = find_cut_point(&list, start as usize, end as usize, keep)?;
        cx.set(
            o,
            c"firstKeptEntryIndex",
            cx.number(cut.first_kept_entry_index as f64)?,
        )?;
        let turn = cut.turn_start_index.map_or(-1.0, |t| t as f64);
        cx.set(o, c"turnStartIndex", cx.number(turn)?)?;
        cx.set(o, c"isSplitTurn", cx.boolean(cut.is_split_turn)?)?;
        Ok(RawValue(o))
    })
}

/// `findTurnStartIndex(entries, entryIndex, startIndex)`.
#[napi(js_name = "findTurnStartIndex")]
pub fn find_turn_start_index_native(
    env: Env,
    entries: Arg,
    entry_index: Arg,
    start_index: Arg,
) -> napi::Result<f64> {
    run(&env, |cx| {
        let array = arg(cx, &entries)?;
        let list = Entries::new(&array, "entries")?;
        let entry_index = index_arg(cx, &entry_index, "entryIndex")?;
        let start_index = index_arg(cx, &start_index, "startIndex")?;
        if entry_index >= start_index && (start_index < 0 || entry_index as usize >= list.len()) {
            return Err(Error::range(
                "",
                format!(
                    "entryIndex {entry_index} and startIndex {start_index} must lie within entries (length {})",
                    list.len()
                ),
            ));
        }
        let found = find_turn_start_index(&list, entry_index, start_index)?;
        Ok(found.map_or(-1.0, |i| i as f64))
    })
}

/// The index of the entry whose message holds the last valid usage, or -1;
/// index.js returns that message's own `usage` object.
#[napi(js_name = "lastAssistantUsageIndex")]
pub fn last_assistant_usage_index(env: Env, entries: Arg) -> napi::Result<f64> {
    run(&env, |cx| {
        let array = arg(cx, &entries)?;
        let list = Entries::new(&array, "entries")?;
        for i in (0..list.len()).rev() {
            if list.kind(i)?.ty != EntryType::Message {
                continue;
            }
            let valid = list.with_entry(i, |e| {
                Ok(valid_usage(&e.get(Key::Message)?)
                    .within("message")?
                    .is_some())
            })?;
            if valid {
                return Ok(i as f64);
            }
        }
        Ok(-1.0)
    })
}

/// `estimateContextTokens(messages)`.
#[napi(js_name = "estimateContextTokens")]
pub fn estimate_context_tokens_native(env: Env, messages: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let est = estimate_context_tokens(&arg(cx, &messages)?).within("messages")?;
        let o = cx.object()?;
        cx.set(o, c"tokens", cx.number(est.tokens)?)?;
        cx.set(o, c"usageTokens", cx.number(est.usage_tokens)?)?;
        cx.set(o, c"trailingTokens", cx.number(est.trailing_tokens)?)?;
        let last = match est.last_usage_index {
            Some(i) => cx.number(i as f64)?,
            None => cx.null()?,
        };
        cx.set(o, c"lastUsageIndex", last)?;
        Ok(RawValue(o))
    })
}

/// `calculateContextTokens(usage)`.
#[napi(js_name = "calculateContextTokens")]
pub fn calculate_context_tokens(env: Env, usage: Arg) -> napi::Result<f64> {
    run(&env, |cx| context_tokens(&arg(cx, &usage)?).within("usage"))
}

/// `shouldCompact(contextTokens, contextWindow, settings)`.
#[napi(js_name = "shouldCompact")]
pub fn should_compact_native(
    env: Env,
    context_tokens: Arg,
    context_window: Arg,
    settings: Arg,
) -> napi::Result<bool> {
    run(&env, |cx| {
        let settings = read_settings(&arg(cx, &settings)?).within("settings")?;
        let tokens = number_arg(cx, &context_tokens, "contextTokens")?;
        let window = number_arg(cx, &context_window, "contextWindow")?;
        Ok(should_compact(tokens, window, &settings))
    })
}

/// `DEFAULT_COMPACTION_SETTINGS`, as a fresh object.
#[napi(js_name = "defaultCompactionSettings")]
pub fn default_compaction_settings(env: Env) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let o = cx.object()?;
        cx.set(o, c"enabled", cx.boolean(DEFAULT_SETTINGS.enabled)?)?;
        cx.set(
            o,
            c"reserveTokens",
            cx.number(DEFAULT_SETTINGS.reserve_tokens)?,
        )?;
        cx.set(
            o,
            c"keepRecentTokens",
            cx.number(DEFAULT_SETTINGS.keep_recent_tokens)?,
        )?;
        Ok(RawValue(o))
    })
}

/// The file operations of one message, in order: `{ kinds, paths }` with
/// kinds 0 = read, 1 = written, 2 = edited. index.js adds them to the caller's Sets.
#[napi(js_name = "fileOpsOfMessage")]
pub fn file_ops_of_message(env: Env, message: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let mut kinds = Vec::new();
        let mut paths = Vec::new();
        extract_file_ops(&arg(cx, &message)?, &mut |kind, path| {
            kinds.push(kind.index());
            paths.push(path);
        })
        .within("message")?;
        let o = cx.object()?;
        cx.set(o, c"kinds", cx.u8_array(&kinds)?)?;
        cx.set(o, c"paths", cx.strings(paths.iter())?)?;
        Ok(RawValue(o))
    })
}

/// `computeFileLists` over the three Sets, passed as arrays in insertion
/// order. Returns indices into `[...read, ...edited, ...written]`, which
/// index.js maps back onto the caller's values (they need not be strings).
#[napi(js_name = "computeFileLists")]
pub fn compute_file_lists_native(
    env: Env,
    read: Arg,
    written: Arg,
    edited: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let mut values = Vec::new();
        for (a, name) in [
            (&read, "fileOps.read"),
            (&edited, "fileOps.edited"),
            (&written, "fileOps.written"),
        ] {
            let list = arg(cx, a)?;
            let len = list.expect_array(name)?;
            for i in 0..len {
                values.push(list.at(i)?);
            }
        }
        let read_len = arg(cx, &read)?.array_len().unwrap_or(0);
        let (read_files, modified_files) = compute_file_lists_values(&values, read_len)?;
        let as_u32 = |v: Vec<usize>| v.into_iter().map(|i| i as u32).collect::<Vec<u32>>();
        let o = cx.object()?;
        cx.set(o, c"readFiles", cx.u32_array(&as_u32(read_files))?)?;
        cx.set(o, c"modifiedFiles", cx.u32_array(&as_u32(modified_files))?)?;
        Ok(RawValue(o))
    })
}

/// The elements of a list as `join` shows them.
pub(crate) fn joined_elements(v: &JsVal<'_>, name: &str) -> Result<Vec<JsStr>> {
    let len = v.expect_array(name)?;
    (0..len)
        .map(|i| join_element(&v.at(i)?).within_with(|| format!("{name}[{i}]")))
        .collect()
}

/// V8's longest string, in UTF-16 units (`String::kMaxLength` on 64-bit).
const V8_MAX_STRING_LENGTH: usize = (1 << 29) - 24;

/// `formatFileOperations(readFiles, modifiedFiles)`.
#[napi(js_name = "formatFileOperations")]
pub fn format_file_operations_native(
    env: Env,
    read_files: Arg,
    modified_files: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let (read_arg, modified_arg) = (arg(cx, &read_files)?, arg(cx, &modified_files)?);
        // JS's `join` gives up at once when the separators alone pass V8's
        // longest string; reading every index of such a (sparse) array first
        // would take minutes.
        let elements = read_arg.array_len().unwrap_or(0) + modified_arg.array_len().unwrap_or(0);
        if elements > V8_MAX_STRING_LENGTH {
            return Err(Error::range("", "Invalid string length"));
        }
        let read = joined_elements(&read_arg, "readFiles")?;
        let modified = joined_elements(&modified_arg, "modifiedFiles")?;
        Ok(RawValue(
            cx.utf16(&format_file_operations(&read, &modified))?,
        ))
    })
}
