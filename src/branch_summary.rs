//! Exports for branch summarization's pure parts: `collectEntriesForBranchSummary`
//! (walking the caller's session through its own `getEntry`) and
//! `prepareBranchEntries`.

use std::hash::{Hash, Hasher};
use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::errors::run;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{check, Cx, JsVal};
use crate::prepare_compaction::messages_object;
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::view::{Key, Kind, View};
use prime_compaction_core::plan::branch_summary::{
    collect_entries_for_branch_summary, prepare_branch_entries, Collected, EntryLookup, Found,
};
use prime_compaction_core::session::entries::Entries;

/// The caller's session, read through `session.getEntry`.
struct JsSession<'c> {
    cx: &'c Cx,
    session: Raw,
    get_entry: Raw,
}

/// Code units of an id: ids are short (8 hex digits from the agent), so
/// they are kept inline and reading one allocates nothing.
#[derive(Clone)]
enum Units {
    Inline { len: u8, buf: [u16; INLINE] },
    Heap(Box<[u16]>),
}

const INLINE: usize = 11;

impl Units {
    fn as_slice(&self) -> &[u16] {
        match self {
            Units::Inline { len, buf } => &buf[..usize::from(*len)],
            Units::Heap(units) => units,
        }
    }
}

/// A JS string id: its code units (compared and hashed) and the string
/// itself, handed back to `getEntry` and returned as is.
#[derive(Clone)]
struct JsId {
    units: Units,
    raw: Raw,
}

impl PartialEq for JsId {
    fn eq(&self, other: &Self) -> bool {
        self.units.as_slice() == other.units.as_slice()
    }
}

impl Eq for JsId {}

impl Hash for JsId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.units.as_slice().hash(state);
    }
}

/// Reads `raw` as a string id: `Ok(None)` when it is not a string.
fn read_units(cx: &Cx, raw: Raw) -> Result<Option<Units>> {
    let mut buf = [0u16; INLINE + 1];
    let mut written = 0usize;
    let status = unsafe {
        sys::napi_get_value_string_utf16(cx.env, raw, buf.as_mut_ptr(), buf.len(), &mut written)
    };
    if status == sys::Status::napi_string_expected {
        return Ok(None);
    }
    check(status)?;
    if written < INLINE {
        let mut inline = [0u16; INLINE];
        inline[..written].copy_from_slice(&buf[..written]);
        return Ok(Some(Units::Inline {
            len: written as u8,
            buf: inline,
        }));
    }
    let text = cx.read_string(raw)?;
    Ok(Some(Units::Heap(text.to_utf16().into_boxed_slice())))
}

/// A truthy id argument or `parentId`; `None` when falsy, as the
/// reference's `while (current)` and `parentId ? ... : undefined` read it.
fn js_id(cx: &Cx, raw: Raw, name: &str) -> Result<Option<JsId>> {
    if let Some(units) = read_units(cx, raw)? {
        return Ok((!units.as_slice().is_empty()).then_some(JsId { units, raw }));
    }
    let v = cx.wrap(raw)?;
    if !v.truthy() {
        return Ok(None);
    }
    Err(Error::type_error(
        name,
        format!("expected a string id, got {}", v.kind().describe()),
    ))
}

impl EntryLookup for JsSession<'_> {
    type Entry = Raw;
    type Id = JsId;

    fn get_entry(&mut self, id: &JsId) -> Result<Option<Found<Raw, JsId>>> {
        let cx = self.cx;
        let mut out = ptr::null_mut();
        let argv = [id.raw];
        check(unsafe {
            sys::napi_call_function(
                cx.env,
                self.session,
                self.get_entry,
                1,
                argv.as_ptr(),
                &mut out,
            )
        })?;
        let entry = cx.wrap(out)?;
        // `id` is read first: a missing entry reads as undefined, so the
        // common case costs no separate type check.
        let own = entry.get(Key::Id)?;
        let units = read_units(cx, own.raw)?;
        if units.is_none() && !entry.truthy() {
            return Ok(None);
        }
        let read = || -> Result<Found<Raw, JsId>> {
            let Some(units) = units else {
                return Err(Error::type_error(
                    "id",
                    format!("expected a string id, got {}", own.kind().describe()),
                ));
            };
            let parent = js_id(cx, entry.get(Key::ParentId)?.raw, "parentId")?;
            Ok(Found {
                entry: entry.raw,
                id: JsId {
                    units,
                    raw: own.raw,
                },
                parent,
            })
        };
        read()
            .within_with(|| format!("session.getEntry({:?})", self.describe(id)))
            .map(Some)
    }

    fn describe(&self, id: &JsId) -> String {
        String::from_utf16_lossy(id.units.as_slice())
    }
}

/// `collectEntriesForBranchSummary(session, oldLeafId, targetId)`: the
/// caller's own entry objects, root-first. index.js resolves a nullish
/// target to the session's leaf, as `getBranch(undefined)` does.
#[napi(js_name = "collectEntriesForBranchSummary")]
pub fn collect_entries_for_branch_summary_native(
    env: Env,
    session: Arg,
    old_leaf_id: Arg,
    target_id: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let old_leaf = js_id(cx, old_leaf_id.0, "oldLeafId")?;
        let collected = if old_leaf.is_some() {
            let target = js_id(cx, target_id.0, "targetId")?;
            let s = cx.wrap(session.0)?;
            let mut lookup = JsSession {
                cx,
                session: s.raw,
                get_entry: session_method(cx, &s)?,
            };
            collect_entries_for_branch_summary(&mut lookup, old_leaf, target)?
        } else {
            Collected {
                entries: Vec::new(),
                common_ancestor_id: None,
            }
        };
        let o = cx.object()?;
        cx.set(
            o,
            c"entries",
            cx.array(collected.entries.into_iter().map(Ok))?,
        )?;
        let ancestor = match &collected.common_ancestor_id {
            Some(id) => id.raw,
            None => cx.null()?,
        };
        cx.set(o, c"commonAncestorId", ancestor)?;
        Ok(RawValue(o))
    })
}

fn session_method(cx: &Cx, session: &JsVal<'_>) -> Result<Raw> {
    if !session.is_object_like() {
        return Err(Error::type_error(
            "session",
            format!(
                "expected a session manager, got {}",
                session.kind().describe()
            ),
        ));
    }
    let mut f = ptr::null_mut();
    check(unsafe {
        sys::napi_get_named_property(cx.env, session.raw, c"getEntry".as_ptr(), &mut f)
    })?;
    let method = cx.wrap(f)?;
    if method.kind() != Kind::Function {
        return Err(Error::type_error(
            "session.getEntry",
            format!("expected a function, got {}", method.kind().describe()),
        ));
    }
    Ok(f)
}

/// `Number(v)`, as the reference's comparisons with the budget coerce it.
fn to_number(cx: &Cx, v: &JsVal<'_>) -> Result<f64> {
    if let Some(n) = v.number() {
        return Ok(n);
    }
    let mut out = ptr::null_mut();
    check(unsafe { sys::napi_coerce_to_number(cx.env, v.raw, &mut out) })?;
    Ok(cx.wrap(out)?.number().unwrap_or(f64::NAN))
}

/// The plan for `prepareBranchEntries` as the agent line does it: the
/// messages (entries and shapes), file operations and the token total;
/// `lib/api.js` maps them to messages.
#[napi(js_name = "prepareBranchEntries")]
pub fn prepare_branch_entries_native(
    env: Env,
    entries: Arg,
    token_budget: Arg,
    line: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let budget = to_number(cx, &cx.wrap(token_budget.0)?).within("tokenBudget")?;
        let array = cx.wrap(entries.0)?;
        let list = Entries::new(&array, "entries", line)?;
        let plan = prepare_branch_entries(&list, budget)?;
        let o = cx.object()?;
        cx.set(o, c"messages", messages_object(cx, &plan.messages)?)?;
        let seeds: Vec<u32> = plan.details_from.iter().map(|&i| i as u32).collect();
        cx.set(o, c"detailsFrom", cx.u32_array(&seeds)?)?;
        cx.set(o, c"read", cx.strings(plan.file_ops.read.iter())?)?;
        cx.set(o, c"written", cx.strings(plan.file_ops.written.iter())?)?;
        cx.set(o, c"edited", cx.strings(plan.file_ops.edited.iter())?)?;
        cx.set(o, c"totalTokens", cx.number(plan.total_tokens as f64)?)?;
        Ok(RawValue(o))
    })
}
