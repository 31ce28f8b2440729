//! `findCutPoint` and `findTurnStartIndex`.

use napi::Env;
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::entry_facts::EntryFacts;
use crate::js::args::{arg, counter_option, number_arg};
use crate::js::errors::run;
use crate::js::out::{Arg, RawValue};
use prime_compaction_core::plan::cut_point::{find_cut_point_at, find_turn_start_index, CutAt};
use prime_compaction_core::session::entries::Entries;

/// `findCutPoint(entries, startIndex, endIndex, keepRecentTokens)` as the
/// agent line does it; with the entries' kinds read ahead in `facts`, when
/// given (lib/entry-facts.js's readEntryKinds).
#[napi(js_name = "findCutPoint")]
#[allow(clippy::too_many_arguments)]
pub fn find_cut_point_native(
    env: Env,
    entries: Arg,
    start: Arg,
    end: Arg,
    keep: Arg,
    line: Arg,
    options: Option<Arg>,
    facts: Option<&EntryFacts>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let counter = counter_option(cx, &options)?;
        let array = arg(cx, &entries)?;
        let state = facts.map(EntryFacts::lock).transpose()?;
        let mut list = Entries::new(&array, "entries", line)?.with_counter(counter);
        if let Some(state) = &state {
            list = list.with_facts(&state.facts);
        }
        let start = number_arg(cx, &start, "startIndex")?;
        let end = number_arg(cx, &end, "endIndex")?;
        let keep = number_arg(cx, &keep, "keepRecentTokens")?;
        let (first_kept, turn_start, split) = match find_cut_point_at(&list, start, end, keep)? {
            CutAt::Start(start) => (start, -1.0, false),
            CutAt::Cut(cut) => (
                cut.first_kept_entry_index as f64,
                cut.turn_start_index.map_or(-1.0, |t| t as f64),
                cut.is_split_turn,
            ),
        };
        let o = cx.object()?;
        cx.set(o, c"firstKeptEntryIndex", cx.number(first_kept)?)?;
        cx.set(o, c"turnStartIndex", cx.number(turn_start)?)?;
        cx.set(o, c"isSplitTurn", cx.boolean(split)?)?;
        Ok(RawValue(o))
    })
}

/// `findTurnStartIndex(entries, entryIndex, startIndex)` as the agent line does it.
#[napi(js_name = "findTurnStartIndex")]
pub fn find_turn_start_index_native(
    env: Env,
    entries: Arg,
    entry_index: Arg,
    start_index: Arg,
    line: Arg,
) -> napi::Result<f64> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let array = arg(cx, &entries)?;
        let list = Entries::new(&array, "entries", line)?;
        let entry_index = number_arg(cx, &entry_index, "entryIndex")?;
        let start_index = number_arg(cx, &start_index, "startIndex")?;
        find_turn_start_index(&list, entry_index, start_index)
    })
}
