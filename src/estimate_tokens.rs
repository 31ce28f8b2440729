//! Token estimates: `estimateTokens`, `estimateContextTokens`,
//! `estimateProjectedContextTokens`, `calculateContextTokens`, and the index
//! behind `getLastAssistantUsage`.

use napi::{sys, Env};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::args::{arg, counter_option};
use crate::js::errors::run;
use crate::js::flat::{form_field, typed_array_slice};
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{Cx, JsVal};
use prime_compaction_core::error::{Context, Result};
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::model::Role;
use prime_compaction_core::tokens::estimate::{
    context_tokens, estimate_context_tokens, valid_assistant_usage, ContextEstimate, Counter,
};
use prime_compaction_core::tokens::projected::{
    projected_context_tokens, usage_is_current_in, MessageArray, ProjectedFacts,
};
use std::ffi::CStr;

/// `estimateTokens(message)` as the agent line counts it.
#[napi(js_name = "estimateTokens")]
pub fn estimate_tokens_native(
    env: Env,
    message: Arg,
    line: Arg,
    options: Option<Arg>,
) -> napi::Result<f64> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let counter = counter_option(cx, &options)?;
        Ok(counter
            .message(&arg(cx, &message)?, &line.tokens)
            .within("message")? as f64)
    })
}

/// The index of the entry whose message holds the last valid usage, or -1;
/// `lib/api.js` returns that message's own `usage` object.
#[napi(js_name = "lastAssistantUsageIndex")]
pub fn last_assistant_usage_index(env: Env, entries: Arg, line: Arg) -> napi::Result<f64> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let array = arg(cx, &entries)?;
        let list = Entries::new(&array, "entries", line)?;
        // Each entry read once: its kind (the role read there is not read
        // again), then an assistant's usage.
        let found = list.find_last(|i, e| {
            if list.kind_of(i, e)?.role != Some(Role::Assistant) {
                return Ok(false);
            }
            Ok(valid_assistant_usage(&e.get(Key::Message)?, &line.tokens)
                .within("message")?
                .is_some())
        })?;
        Ok(found.map_or(-1.0, |i| i as f64))
    })
}

/// `ContextUsageEstimate`, in the reference's key order.
fn estimate_object(cx: &Cx, est: &ContextEstimate) -> Result<Raw> {
    let o = cx.object()?;
    cx.set(o, c"tokens", cx.number(est.tokens)?)?;
    cx.set(o, c"usageTokens", cx.number(est.usage_tokens)?)?;
    cx.set(o, c"trailingTokens", cx.number(est.trailing_tokens)?)?;
    let last = match est.last_usage_index {
        Some(i) => cx.number(i as f64)?,
        None => cx.null()?,
    };
    cx.set(o, c"lastUsageIndex", last)?;
    Ok(o)
}

/// `estimateContextTokens(messages)` as the agent line counts it.
#[napi(js_name = "estimateContextTokens")]
pub fn estimate_context_tokens_native(
    env: Env,
    messages: Arg,
    line: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let est = estimate_context_tokens(&arg(cx, &messages)?, &line.tokens).within("messages")?;
        Ok(RawValue(estimate_object(cx, &est)?))
    })
}

/// `estimateProjectedContextTokens(projection, branchEntries, line,
/// facts?)`: the context size of the agent's `SessionProjection`, trusting
/// its last usage only when no `context_edit` or `compaction` among
/// `branchEntries` came after it. `facts` is what lib/projected-facts.js
/// read ahead: `{ entries, counts, kinds, idLengths, ids }`, `entries` being
/// `projection.entries` as it read it.
#[napi(js_name = "estimateProjectedContextTokens")]
pub fn estimate_projected_context_tokens(
    env: Env,
    projection: Arg,
    branch_entries: Arg,
    line: Arg,
    facts: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let projection = arg(cx, &projection)?;
        projection.expect_object("projection", "a session projection { messages, entries }")?;
        let branch = arg(cx, &branch_entries)?;
        let messages = projection.get(Key::Messages)?;
        let list = MessageArray::named(&messages, "projection.messages")?;
        let est =
            projected_context_tokens(
                &list,
                Counter::Estimate,
                &line.tokens,
                |index| match &facts {
                    Some(form) => {
                        let mut units = Vec::new();
                        let (entries, facts) = projected_facts(cx, form.0, &mut units)?;
                        usage_is_current_in(&entries, &branch, index, Some(&facts))
                    }
                    None => {
                        usage_is_current_in(&projection.get(Key::Entries)?, &branch, index, None)
                    }
                },
            )?;
        Ok(RawValue(estimate_object(cx, &est)?))
    })
}

/// lib/projected-facts.js's form: `projection.entries` as the pass read it,
/// and its facts, the joined ids copied into `units`. A field of the wrong
/// type is the facts' internal error, never the caller's.
fn projected_facts<'c>(
    cx: &'c Cx,
    form: Raw,
    units: &'c mut Vec<u16>,
) -> Result<(JsVal<'c>, ProjectedFacts<'c>)> {
    fn slice<'c, T: Copy>(
        cx: &'c Cx,
        form: Raw,
        name: &CStr,
        kind: sys::napi_typedarray_type,
    ) -> Result<&'c [T]> {
        typed_array_slice(cx, form_field(cx, form, name)?, kind)
            .map_err(|_| ProjectedFacts::malformed())
    }
    *units = cx
        .read_utf16(form_field(cx, form, c"ids")?)
        .map_err(|_| ProjectedFacts::malformed())?;
    let facts = ProjectedFacts {
        counts: slice(cx, form, c"counts", sys::TypedarrayType::uint32_array)?,
        kinds: slice(cx, form, c"kinds", sys::TypedarrayType::uint8_array)?,
        id_lengths: slice(cx, form, c"idLengths", sys::TypedarrayType::int32_array)?,
        ids: units,
    };
    Ok((cx.wrap(form_field(cx, form, c"entries")?)?, facts))
}

/// `calculateContextTokens(usage)`.
#[napi(js_name = "calculateContextTokens")]
pub fn calculate_context_tokens(env: Env, usage: Arg) -> napi::Result<f64> {
    run(&env, |cx| context_tokens(&arg(cx, &usage)?).within("usage"))
}
