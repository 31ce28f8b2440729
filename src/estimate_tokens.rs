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
use prime_compaction_core::error::{Context, Error, ErrorKind, Result};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::view::{Key, Kind, View};
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::measures::MeasuresChunk;
use prime_compaction_core::tokens::context_facts::{
    last_usage_entry, ContextChunk, ContextFacts, FactsList, LastUsage,
};
use prime_compaction_core::tokens::estimate::{context_tokens, ContextEstimate, Counter};
use prime_compaction_core::tokens::projected::{
    context_estimate, malformed_searches, projected_context_tokens, usage_is_current_in,
    ContextList, Found, Holding, MessageArray, ProjectionSearch, INVALIDATING_TYPES,
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

/// `lastAssistantUsageIndex(entries, line, contextFacts?)`: the index of
/// the entry whose message holds the last valid usage, or -1 (`lib/api.js`
/// returns that message's own `usage` object); or, where it asks for the
/// facts of entries (`contextFacts` as for the estimates, read of
/// entries), `{ readFrom, readTo }`.
#[napi(js_name = "lastAssistantUsageIndex")]
pub fn last_assistant_usage_index(
    env: Env,
    entries: Arg,
    line: Arg,
    context: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let array = arg(cx, &entries)?;
        let list = Entries::new(&array, "entries", line)?;
        let (facts, reads_from) = context_facts(cx, &context, &array, list.len())?;
        Ok(RawValue(
            match last_usage_entry(&list, &facts, reads_from, &line.tokens)? {
                LastUsage::At(i) => cx.number(i as f64)?,
                LastUsage::None => cx.number(-1.0)?,
                LastUsage::Wanted { k, to } => ask_object(cx, k, to, list.len())?,
            },
        ))
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

/// The last messages a context estimate reads natively before it asks
/// for the facts of the ones before (where its last usage is not among
/// them: a provider that reports none, or a run of messages without one).
const NATIVE_TAIL: usize = 16;

/// The fewest messages asked for at once; each ask is for at least three
/// times as many as the facts hold already (each call reads every chunk
/// given again), and for all of them down to the one wanted (all, where
/// 1.6's estimate of every message wants the first).
const FIRST_BATCH: usize = 256;

/// How an estimate reads `messages`, from its `contextFacts` argument:
/// `undefined`, natively, asking for facts past the last [`NATIVE_TAIL`]
/// messages; `false`, natively throughout (lib/api.js cannot read them);
/// or the form lib/context-facts.js made, `{ list, chunks }`, its
/// chunks' facts taken where `list` is the array read here, as long as it
/// was (and otherwise none, nothing asked for). Returns the facts
/// and the first message read without asking.
fn context_facts(
    cx: &Cx,
    form: &Option<Arg>,
    messages: &JsVal<'_>,
    len: usize,
) -> Result<(ContextFacts, usize)> {
    let mut facts = ContextFacts::new(len);
    let Some(form) = form else {
        return Ok((facts, len.saturating_sub(NATIVE_TAIL)));
    };
    let form = cx.wrap(form.0)?;
    if form.kind() != Kind::Object {
        return Ok((facts, 0));
    }
    if !cx
        .wrap(form_field(cx, form.raw, c"list")?)?
        .strict_equals(messages)?
    {
        return Ok((facts, 0));
    }
    let chunks = cx.wrap(form_field(cx, form.raw, c"chunks")?)?;
    let count = chunks.array_len().ok_or_else(context_malformed)?;
    for c in 0..count {
        let chunk = chunks.at(c)?.raw;
        let to = cx.wrap(form_field(cx, chunk, c"to")?)?.number();
        // The pass read a shorter or longer array (a getter changed it
        // since): its facts are for other messages.
        if c == 0 && to != Some(len as f64) {
            return Ok((ContextFacts::new(len), 0));
        }
        facts.push(&ContextChunk {
            to: to.filter(|n| *n >= 0.0).map_or(usize::MAX, |n| n as usize),
            roles: form_slice(
                cx,
                chunk,
                c"roles",
                sys::TypedarrayType::uint8_array,
                context_malformed,
            )?,
            usages: form_slice(
                cx,
                chunk,
                c"usages",
                sys::TypedarrayType::uint8_array,
                context_malformed,
            )?,
            values: form_slice(
                cx,
                chunk,
                c"values",
                sys::TypedarrayType::float64_array,
                context_malformed,
            )?,
            measures: MeasuresChunk {
                at: form_slice(
                    cx,
                    chunk,
                    c"at",
                    sys::TypedarrayType::uint32_array,
                    context_malformed,
                )?,
                forms: form_slice(
                    cx,
                    chunk,
                    c"forms",
                    sys::TypedarrayType::uint8_array,
                    context_malformed,
                )?,
                counts: form_slice(
                    cx,
                    chunk,
                    c"counts",
                    sys::TypedarrayType::uint32_array,
                    context_malformed,
                )?,
                blocks: form_slice(
                    cx,
                    chunk,
                    c"blocks",
                    sys::TypedarrayType::uint8_array,
                    context_malformed,
                )?,
                lengths: form_slice(
                    cx,
                    chunk,
                    c"lengths",
                    sys::TypedarrayType::uint32_array,
                    context_malformed,
                )?,
            },
        })?;
    }
    let from = facts.from();
    Ok((facts, from))
}

/// Field `name` of a form a JS pass made, a typed array of `kind`; any
/// other value is the form's internal error (`malformed`).
fn form_slice<'c, T: Copy + 'static>(
    cx: &'c Cx,
    form: Raw,
    name: &CStr,
    kind: sys::napi_typedarray_type,
    malformed: fn() -> Error,
) -> Result<&'c [T]> {
    typed_array_slice(cx, form_field(cx, form, name)?, kind).map_err(|_| malformed())
}

fn context_malformed() -> Error {
    Error::internal("malformed context facts")
}

/// An estimate, or where it stopped to ask for facts: `{ readFrom, readTo }`,
/// the messages lib/context-facts.js reads next.
fn estimate_or_ask<L: ContextList>(
    cx: &Cx,
    list: &FactsList<'_, L>,
    est: Result<ContextEstimate>,
) -> Result<Raw> {
    let err = match est {
        Ok(est) => return estimate_object(cx, &est),
        Err(err) => err,
    };
    let Some((k, to)) = list.wanted().filter(|_| err.kind == ErrorKind::FactsWanted) else {
        return Err(err);
    };
    ask_object(cx, k, to, list.len())
}

/// `{ readFrom, readTo }`: the facts of the `len` items' `from..to` are
/// wanted, down to item `k` at least.
fn ask_object(cx: &Cx, k: usize, to: usize, len: usize) -> Result<Raw> {
    let batch = FIRST_BATCH.max(3 * (len - to));
    let o = cx.object()?;
    let from = k.min(to.saturating_sub(batch));
    cx.set(o, c"readFrom", cx.number(from as f64)?)?;
    cx.set(o, c"readTo", cx.number(to as f64)?)?;
    Ok(o)
}

/// `estimateContextTokens(messages, line, contextFacts?)` as the agent
/// line counts it (`contextFacts`: see [`context_facts`]); or, where it
/// asks for facts, `{ readFrom, readTo }`.
#[napi(js_name = "estimateContextTokens")]
pub fn estimate_context_tokens_native(
    env: Env,
    messages: Arg,
    line: Arg,
    context: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let messages = arg(cx, &messages)?;
        let array = MessageArray::new(&messages).within("messages")?;
        let (facts, reads_from) = context_facts(cx, &context, &messages, array.len())?;
        let list = FactsList::new(array, &facts, reads_from);
        let est = context_estimate(&list, Counter::Estimate, &line.tokens).within("messages");
        Ok(RawValue(estimate_or_ask(cx, &list, est)?))
    })
}

/// `estimateProjectedContextTokens(projection, branchEntries, line,
/// searches?, context?)`: the context size of the agent's
/// `SessionProjection`, trusting its last usage only when no
/// `context_edit` or `compaction` among `branchEntries` came after it.
/// `searches` is what lib/projection-search.js made: `{ entries, start,
/// entryHolding, indexOfId, lastIndexOfType }`, `entries` being
/// `projection.entries` as it read it.
#[napi(js_name = "estimateProjectedContextTokens")]
pub fn estimate_projected_context_tokens(
    env: Env,
    projection: Arg,
    branch_entries: Arg,
    line: Arg,
    searches: Option<Arg>,
    context: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let projection = arg(cx, &projection)?;
        projection.expect_object("projection", "a session projection { messages, entries }")?;
        let branch = arg(cx, &branch_entries)?;
        let messages = projection.get(Key::Messages)?;
        let array = MessageArray::named(&messages, "projection.messages")?;
        let (context_facts, reads_from) = context_facts(cx, &context, &messages, array.len())?;
        let list = FactsList::new(array, &context_facts, reads_from);
        let est =
            projected_context_tokens(
                &list,
                Counter::Estimate,
                &line.tokens,
                |index| match &searches {
                    Some(form) => {
                        let form = ProjectedForm::read(cx, form.0, branch.raw)?;
                        usage_is_current_in(&form.entries, &branch, index, Some(&form.search))
                    }
                    None => {
                        usage_is_current_in(&projection.get(Key::Entries)?, &branch, index, None)
                    }
                },
            );
        Ok(RawValue(estimate_or_ask(cx, &list, est)?))
    })
}

/// lib/projection-search.js's form: `projection.entries` as the pass read it,
/// and its searches.
struct ProjectedForm<'c> {
    entries: JsVal<'c>,
    search: JsSearch<'c>,
}

impl<'c> ProjectedForm<'c> {
    /// The form `form`, its searches over its entries and `branch`. A field
    /// of the wrong type is the facts' internal error, never the caller's.
    fn read(cx: &'c Cx, form: Raw, branch: Raw) -> Result<ProjectedForm<'c>> {
        let function = |name| -> Result<Raw> {
            let f = form_field(cx, form, name)?;
            match cx.wrap(f)?.kind() {
                Kind::Function => Ok(f),
                _ => Err(malformed_searches()),
            }
        };
        let entries = form_field(cx, form, c"entries")?;
        Ok(ProjectedForm {
            entries: cx.wrap(entries)?,
            search: JsSearch {
                cx,
                entries,
                branch,
                start: form_field(cx, form, c"start")?,
                entry_holding: function(c"entryHolding")?,
                index_of_id: function(c"indexOfId")?,
                last_index_of_type: function(c"lastIndexOfType")?,
            },
        })
    }
}

/// lib/projection-search.js's searches, for the native walk:
/// `entryHolding(entries, index, from, to, start, at)`, `indexOfId(branch,
/// id, from, to)` and `lastIndexOfType(branch, to, a, b)`. Each answers
/// the index found, -1 for none, or `-2 - i` for an entry i it left to the
/// walk (`entryHolding` then puts where its messages start in `at[0]`,
/// the form's `start`, a `Float64Array`).
struct JsSearch<'c> {
    cx: &'c Cx,
    entries: Raw,
    branch: Raw,
    start: Raw,
    entry_holding: Raw,
    index_of_id: Raw,
    last_index_of_type: Raw,
}

impl JsSearch<'_> {
    /// Calls `f` with `args`; its answer (an index out of the range
    /// searched is the walk's to reject, `in_range`).
    fn ask(&self, f: Raw, args: &[Raw]) -> Result<Found> {
        let cx = self.cx;
        let out = cx.call_with(cx.undefined(), f, args)?;
        let n = cx.wrap(out)?.number().ok_or_else(malformed_searches)?;
        // (NaN and the infinities have no zero fraction; `as usize` saturates.)
        if n.fract() != 0.0 {
            return Err(malformed_searches());
        }
        Ok(match n {
            n if n >= 0.0 => Found::At(n as usize),
            -1.0 => Found::None,
            n => Found::Unread((-2.0 - n) as usize),
        })
    }
}

impl ProjectionSearch for JsSearch<'_> {
    fn entry_holding(&self, index: usize, from: usize, to: usize, start: usize) -> Result<Holding> {
        let cx = self.cx;
        let args = [
            self.entries,
            cx.number(index as f64)?,
            cx.number(from as f64)?,
            cx.number(to as f64)?,
            cx.number(start as f64)?,
            self.start,
        ];
        let found = self.ask(self.entry_holding, &args)?;
        if !matches!(found, Found::Unread(_)) {
            return Ok((found, 0));
        }
        // Read after the call, which wrote it.
        let at = typed_array_slice::<f64>(cx, self.start, sys::TypedarrayType::float64_array)
            .ok()
            .and_then(|at| at.first().copied())
            .filter(|&n| n >= start as f64 && n.fract() == 0.0 && n < 2f64.powi(53))
            .ok_or_else(malformed_searches)?;
        Ok((found, at as usize))
    }

    fn first_id(&self, id: &JsStr, from: usize, to: usize) -> Result<Found> {
        let cx = self.cx;
        let args = [
            self.branch,
            cx.js_str(id)?,
            cx.number(from as f64)?,
            cx.number(to as f64)?,
        ];
        self.ask(self.index_of_id, &args)
    }

    fn last_invalidating(&self, to: usize) -> Result<Found> {
        let cx = self.cx;
        let [a, b] = INVALIDATING_TYPES;
        let args = [self.branch, cx.number(to as f64)?, cx.str(a)?, cx.str(b)?];
        self.ask(self.last_index_of_type, &args)
    }
}

/// `calculateContextTokens(usage)`.
#[napi(js_name = "calculateContextTokens")]
pub fn calculate_context_tokens(env: Env, usage: Arg) -> napi::Result<f64> {
    run(&env, |cx| context_tokens(&arg(cx, &usage)?).within("usage"))
}
