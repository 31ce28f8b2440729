//! Exports for branch summarization's pure parts: `collectEntriesForBranchSummary`
//! (walking the caller's session through its own `getEntry`) and
//! `prepareBranchEntries`.

use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use super::errors::run;
use super::js::{check, Cx, JsVal};
use super::out::{Arg, Raw, RawValue};
use crate::core::branch::{
    collect_entries_for_branch_summary, prepare_branch_entries, Collected, EntryLookup, Found,
    IdRef,
};
use crate::core::entries::Entries;
use crate::core::error::{Context, Error, Result};
use crate::core::view::{Key, Kind, View};

/// The caller's session, read through `session.getEntry`.
struct JsSession<'c> {
    cx: &'c Cx,
    session: Raw,
    get_entry: Raw,
}

/// A truthy id argument or `parentId` as an [`IdRef`]; `None` when falsy.
fn id_ref<'c>(v: &JsVal<'c>, name: &str) -> Result<Option<IdRef<Raw>>> {
    if let Some(text) = v.string() {
        return Ok((!text.is_empty()).then_some(IdRef {
            text,
            handle: v.raw,
        }));
    }
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
    type Handle = Raw;

    fn get_entry(&mut self, id: &IdRef<Raw>) -> Result<Option<Found<Raw, Raw>>> {
        let cx = self.cx;
        let mut out = ptr::null_mut();
        let argv = [id.handle];
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
        if !entry.truthy() {
            return Ok(None);
        }
        let read = || -> Result<Found<Raw, Raw>> {
            let own = entry.get(Key::Id)?;
            let own_id = own.string().ok_or_else(|| {
                Error::type_error(
                    "id",
                    format!("expected a string id, got {}", own.kind().describe()),
                )
            })?;
            let parent = id_ref(&entry.get(Key::ParentId)?, "parentId")?;
            Ok(Found {
                entry: entry.raw,
                id: own_id,
                parent,
            })
        };
        read()
            .within_with(|| format!("session.getEntry({:?})", id.text.to_string_lossy()))
            .map(Some)
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
        let old_leaf = id_ref(&cx.wrap(old_leaf_id.0)?, "oldLeafId")?;
        let collected = if old_leaf.is_some() {
            let target = id_ref(&cx.wrap(target_id.0)?, "targetId")?;
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
            Some(id) => cx.js_str(id)?,
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

/// The plan for `prepareBranchEntries`: message entry indices, file
/// operations and the token total; index.js maps indices to messages.
#[napi(js_name = "prepareBranchEntries")]
pub fn prepare_branch_entries_native(
    env: Env,
    entries: Arg,
    token_budget: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let budget = to_number(cx, &cx.wrap(token_budget.0)?).within("tokenBudget")?;
        let array = cx.wrap(entries.0)?;
        let list = Entries::new(&array, "entries")?;
        let plan = prepare_branch_entries(&list, budget)?;
        let o = cx.object()?;
        cx.set(o, c"messages", cx.u32_array(&plan.messages)?)?;
        cx.set(o, c"read", cx.strings(plan.file_ops.read.iter())?)?;
        cx.set(o, c"written", cx.strings(plan.file_ops.written.iter())?)?;
        cx.set(o, c"edited", cx.strings(plan.file_ops.edited.iter())?)?;
        cx.set(o, c"totalTokens", cx.number(plan.total_tokens as f64)?)?;
        Ok(RawValue(o))
    })
}
