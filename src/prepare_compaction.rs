//! `prepareCompaction`: the plan, as indices `lib/api.js` maps back onto
//! the caller's entries.

use napi::Env;
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::entry_facts::{EntryFacts, Stage, State};
use crate::js::args::arg;
use crate::js::errors::run;
use crate::js::out::{Arg, Raw, RawValue, Typed};
use crate::js::view::Cx;
use prime_compaction_core::error::{Context, Error, ErrorKind, Result};
use prime_compaction_core::js::view::View;
use prime_compaction_core::plan::file_ops::{FileOps, PathSet};
use prime_compaction_core::plan::prepare::{
    cut_lists, find_cut, finish_plan, prepare_compaction, start_cut, CutPlan, CutSearch,
    Preparation,
};
use prime_compaction_core::plan::settings::read_budget;
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::facts::EntryFacts as CoreFacts;
use prime_compaction_core::session::projection::{MessageShape, PlanMessage};

/// The plan for `prepareCompaction` as the agent line does it, every entry
/// read here; `lib/api.js` turns indices back into the caller's messages.
/// (With the entries' facts read ahead in JS, the plan is made in two
/// parts: [`plan_cut`], [`plan_finish`].)
#[napi(js_name = "prepareCompaction")]
pub fn prepare_compaction_native(
    env: Env,
    path_entries: Arg,
    settings: Arg,
    line: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let budget = read_budget(&arg(cx, &settings)?).within("settings")?;
        let array = arg(cx, &path_entries)?;
        let entries = Entries::new(&array, "pathEntries", line)?.with_counter(budget.counter);
        let plan = prepare_compaction(&entries, budget.keep_recent_tokens)?;
        Ok(RawValue(plan_object(cx, plan.as_ref(), None)?))
    })
}

/// The cut (as `prepareCompaction` makes it), with the entries' facts,
/// from where an earlier call left off (kept in `facts`): `undefined`
/// where the plan is `undefined`; else, the cut made and kept in `facts`,
/// the message entries whose facts `planFinish` reads (a `Uint32Array`),
/// which `lib/entry-facts.js` can read ahead. Where the walk for the cut
/// point stops to ask for the sizes of the messages it estimates, it gives
/// `{ measure, units }` (the entries, a `Uint32Array`, and about how many
/// characters to measure; see `EntryFacts::ask_measures_from`): the next
/// call, with them pushed (`pushMeasures`), goes on from there. With
/// `oneStep`, it makes one of the cut's steps (`start_cut`, `find_cut`,
/// `cut_lists`) and gives `true` while steps remain: a caller that must
/// not hold the JS thread long yields between them.
#[napi(js_name = "planCut")]
pub fn plan_cut(
    env: Env,
    path_entries: Arg,
    settings: Arg,
    line: Arg,
    facts: &EntryFacts,
    one_step: Option<bool>,
) -> napi::Result<RawValue> {
    let all = !one_step.unwrap_or(false);
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let budget = read_budget(&arg(cx, &settings)?).within("settings")?;
        let array = arg(cx, &path_entries)?;
        let mut state = facts.lock()?;
        let State { facts, stage, cut } = &mut *state;
        if matches!(stage, Stage::NotStarted) {
            *cut = None;
            facts.finish();
        }
        let entries = Entries::new(&array, "pathEntries", line)?
            .with_counter(budget.counter)
            .with_facts(facts)
            .asking_for_measures();
        let err = match cut_steps(&entries, stage, budget.keep_recent_tokens, all) {
            Ok(Step::Made(made)) => {
                let wanted = made.message_entries(&entries)?;
                *cut = Some((made, budget.counter));
                return Ok(RawValue(cx.u32_array(&wanted)?));
            }
            Ok(Step::Stepped) => return Ok(RawValue(cx.boolean(true)?)),
            Ok(Step::NoPlan) => return Ok(RawValue(cx.undefined())),
            Err(err) => err,
        };
        let wanted = entries.wanted_measure();
        let Some(from) = wanted.filter(|_| err.kind == ErrorKind::FactsWanted) else {
            return Err(err);
        };
        // The messages from the one wanted down, and the characters left
        // to count: the JS pass measures about that many.
        let asked = facts.ask_measures_from(from);
        let units = match stage {
            Stage::Started(_, search) => search.chars_left(budget.keep_recent_tokens),
            _ => f64::INFINITY,
        };
        let o = cx.object()?;
        cx.set(o, c"measure", cx.u32_array(&asked)?)?;
        cx.set(o, c"units", cx.number(units)?)?;
        Ok(RawValue(o))
    })
}

/// Where [`cut_steps`] stopped.
enum Step {
    /// The cut is made.
    Made(CutPlan),
    /// One step made, more to come.
    Stepped,
    /// There is no plan.
    NoPlan,
}

/// The cut's steps from `stage`, all of them or one; a step that fails
/// (or stops to ask for measures) leaves `stage` as it was, to be made
/// again.
fn cut_steps<V: View>(
    entries: &Entries<V>,
    stage: &mut Stage,
    keep_recent_tokens: f64,
    all: bool,
) -> Result<Step> {
    loop {
        *stage = match std::mem::take(stage) {
            Stage::NotStarted => match start_cut(entries)? {
                Some(start) => Stage::Started(start, CutSearch::default()),
                None => return Ok(Step::NoPlan),
            },
            Stage::Started(start, mut search) => {
                match find_cut(entries, &start, keep_recent_tokens, &mut search) {
                    Ok(Some(found)) => Stage::Found(start, found),
                    Ok(None) => return Ok(Step::NoPlan),
                    Err(err) => {
                        *stage = Stage::Started(start, search);
                        return Err(err);
                    }
                }
            }
            Stage::Found(start, found) => match cut_lists(entries, &start, &found) {
                Ok(made) => return Ok(made.map_or(Step::NoPlan, Step::Made)),
                Err(err) => {
                    *stage = Stage::Found(start, found);
                    return Err(err);
                }
            },
        };
        if !all {
            return Ok(Step::Stepped);
        }
    }
}

/// The plan from the cut `planCut` kept in `facts`, with the message
/// facts pushed since. With `pathRefs`, a file path that a messages chunk
/// gave is named by its place among the strings of every chunk pushed
/// (which the JS pass kept) instead of made again as a string.
#[napi(js_name = "planFinish")]
pub fn plan_finish(
    env: Env,
    path_entries: Arg,
    line: Arg,
    facts: &EntryFacts,
    path_refs: Option<bool>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let array = arg(cx, &path_entries)?;
        let mut state = facts.lock()?;
        let Some((cut, counter)) = state.cut.take() else {
            return Err(Error::internal("planFinish without planCut"));
        };
        let entries = Entries::new(&array, "pathEntries", line)?
            .with_counter(counter)
            .with_facts(&state.facts);
        let plan = finish_plan(&entries, &cut)?;
        let sources = path_refs.unwrap_or(false).then_some(&state.facts);
        Ok(RawValue(plan_object(cx, Some(&plan), sources)?))
    })
}

/// The plan object `lib/api.js` maps onto the caller's entries; `undefined`
/// where the reference returns `undefined`. The file paths are strings,
/// or numbers for those `sources` gave (see [`plan_finish`]).
pub fn plan_object(
    cx: &Cx,
    plan: Option<&Preparation>,
    sources: Option<&CoreFacts>,
) -> Result<Raw> {
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
    cx.set(o, c"summarize", messages_object(cx, &plan.summarize)?)?;
    cx.set(o, c"turnPrefix", messages_object(cx, &plan.turn_prefix)?)?;
    let previous = plan.previous_compaction.map_or(-1.0, |p| p as f64);
    let details_from = plan.details_from.map_or(-1.0, |p| p as f64);
    cx.set(o, c"detailsFrom", cx.number(details_from)?)?;
    cx.set(o, c"previousCompactionIndex", cx.number(previous)?)?;
    set_file_ops(cx, o, &plan.file_ops, sources)?;
    Ok(o)
}

/// How a plan's messages are built (`{ own: 0, custom: 1, ... }`): the one
/// source of the numbers in a plan's `shapes`, for `lib/api.js`.
#[napi(js_name = "messageShapes")]
pub fn message_shapes(env: Env) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let o = cx.object()?;
        for (name, shape) in MessageShape::ALL {
            cx.set(o, name, cx.number(shape as u8 as f64)?)?;
        }
        Ok(RawValue(o))
    })
}

/// A plan's messages: `{ entries, shapes, edits }`, typed arrays of equal
/// length (entry index, `MessageShape`, the context edit's entry index).
pub fn messages_object(cx: &Cx, messages: &[PlanMessage]) -> Result<Raw> {
    let entries: Vec<u32> = messages.iter().map(|m| m.entry).collect();
    let shapes: Vec<u8> = messages.iter().map(|m| m.shape as u8).collect();
    let edits: Vec<u32> = messages.iter().map(|m| m.edit).collect();
    // One buffer for the three: each buffer N-API makes is an allocation
    // and a finalizer of its own.
    let [entries, edits, shapes] =
        cx.typed_arrays([Typed::U32(&entries), Typed::U32(&edits), Typed::U8(&shapes)])?;
    let o = cx.object()?;
    cx.set(o, c"entries", entries)?;
    cx.set(o, c"shapes", shapes)?;
    cx.set(o, c"edits", edits)?;
    Ok(o)
}

fn set_file_ops(cx: &Cx, o: Raw, ops: &FileOps, sources: Option<&CoreFacts>) -> Result<()> {
    let paths = |set: &PathSet| {
        // Every path given by a chunk: one Uint32Array of their places
        // (a session with many files names hundreds of thousands).
        if let Some(facts) = sources {
            let at: Option<Vec<u32>> = set.iter().map(|path| facts.path_source(path)).collect();
            if let Some(at) = at {
                return cx.u32_array(&at);
            }
        }
        cx.array(set.iter().map(
            |path| match sources.and_then(|facts| facts.path_source(path)) {
                Some(at) => cx.number(f64::from(at)),
                None => cx.js_str(path),
            },
        ))
    };
    cx.set(o, c"read", paths(&ops.read)?)?;
    cx.set(o, c"written", paths(&ops.written)?)?;
    cx.set(o, c"edited", paths(&ops.edited)?)
}
