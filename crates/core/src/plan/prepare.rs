//! `prepareCompaction`: what to summarize, what to keep, and the context
//! size before compaction.

use crate::error::{Context, Result};
use crate::js::view::{Key, View};
use crate::plan::cut_point::find_cut_point;
use crate::plan::file_ops::{extract_assistant_file_ops, FileOps};
use crate::session::context::{estimate_session_tokens, read_id, Ids};
use crate::session::entries::Entries;
use crate::session::model::{EntryType, Role};

/// The plan, with messages given as entry indices: the binding maps them
/// back onto the caller's own objects (or builds the few the reference builds).
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    pub first_kept_entry_index: usize,
    pub is_split_turn: bool,
    pub tokens_before: f64,
    /// Entries whose messages are summarized (message, custom_message and branch_summary entries).
    pub summarize: Vec<u32>,
    /// Entries of the split turn's prefix.
    pub turn_prefix: Vec<u32>,
    pub previous_compaction: Option<usize>,
    /// The entry whose `details.readFiles` / `details.modifiedFiles` seed the
    /// file Sets before `file_ops` (the previous compaction, unless it came
    /// from a hook or has no details).
    pub details_from: Option<usize>,
    /// File operations of the summarized tool calls, in order.
    pub file_ops: FileOps,
}

fn yields_message(ty: EntryType) -> bool {
    matches!(
        ty,
        EntryType::Message | EntryType::CustomMessage | EntryType::BranchSummary
    )
}

/// `prepareCompaction(pathEntries, settings)`; `None` where the reference
/// returns `undefined` (nothing to do, or a session that needs migration).
pub fn prepare_compaction<V: View>(
    entries: &Entries<V>,
    keep_recent_tokens: f64,
) -> Result<Option<Preparation>> {
    let n = entries.len();
    if n > 0 && entries.kind(n - 1)?.ty == EntryType::Compaction {
        return Ok(None);
    }
    let mut previous = None;
    for i in (0..n).rev() {
        if entries.kind(i)?.ty == EntryType::Compaction {
            previous = Some(i);
            break;
        }
    }

    let ids = Ids::read(entries)?;
    let boundary_start = match previous {
        None => 0,
        Some(p) => {
            let first_kept = entries.with_entry(p, |e| read_id(e, Key::FirstKeptEntryId, false))?;
            ids.position(&first_kept).unwrap_or(p + 1)
        }
    };

    let tokens_before = estimate_session_tokens(entries, &ids)?.tokens;
    let cut = find_cut_point(entries, boundary_start, n, keep_recent_tokens)?;

    match ids.ids.get(cut.first_kept_entry_index) {
        Some(Some(id)) if !id.is_empty() => {}
        _ => return Ok(None),
    }

    let history_end = match (cut.is_split_turn, cut.turn_start_index) {
        (true, Some(start)) => start,
        _ => cut.first_kept_entry_index,
    };
    let collect = |range: std::ops::Range<usize>| -> Result<Vec<u32>> {
        let mut out = Vec::new();
        for i in range {
            if yields_message(entries.kind(i)?.ty) {
                out.push(i as u32);
            }
        }
        Ok(out)
    };
    let summarize = collect(boundary_start..history_end)?;
    let turn_prefix = if cut.is_split_turn {
        collect(history_end..cut.first_kept_entry_index)?
    } else {
        Vec::new()
    };

    // The previous compaction's recorded files come first in the Sets. Its
    // `details` is typed `unknown`, so its lists may hold any JS values: the
    // plan only says which entry seeds the Sets, and the caller copies them.
    let details_from = match previous {
        Some(p) => entries.with_entry(p, |e| {
            Ok((!e.get(Key::FromHook)?.truthy() && e.get(Key::Details)?.truthy()).then_some(p))
        })?,
        None => None,
    };
    let mut file_ops = FileOps::default();
    let mut assistants = Vec::new();
    for &i in summarize.iter().chain(turn_prefix.iter()) {
        if entries.kind(i as usize)?.has_role(Role::Assistant) {
            assistants.push(i as usize);
        }
    }
    entries.visit(assistants, |_, e| {
        let message = e.get(Key::Message)?;
        extract_assistant_file_ops(&message, &mut |kind, path| file_ops.add(kind, path))
            .within("message")
    })?;

    Ok(Some(Preparation {
        first_kept_entry_index: cut.first_kept_entry_index,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        summarize,
        turn_prefix,
        previous_compaction: previous,
        details_from,
        file_ops,
    }))
}
