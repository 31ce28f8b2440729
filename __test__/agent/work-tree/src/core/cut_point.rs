//! Where compaction cuts: valid cut points, turn starts, and the walk that
//! keeps about `keepRecentTokens` of recent context.

use super::entries::Entries;
use super::error::Result;
use super::model::{EntryType, Role};
use super::view::View;

/// `CutPointResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    pub first_kept_entry_index: usize,
    /// The entry that starts the split turn, when the cut splits one.
    pub turn_start_index: Option<usize>,
    pub is_split_turn: bool,
}

fn is_cut_point<V: View>(entries: &Entries<V>, i: usize) -> Result<bool> {
    let kind = entries.kind(i)?;
    Ok(match kind.ty {
        EntryType::Message => kind
            .role
            .is_some_and(|r| !matches!(r, Role::ToolResult | Role::Other)),
        EntryType::BranchSummary | EntryType::CustomMessage => true,
        EntryType::Compaction | EntryType::Other => false,
    })
}

/// `findTurnStartIndex`: the nearest entry at or before `entry_index` (and
/// not before `start_index`) that starts a turn.
pub fn find_turn_start_index<V: View>(
    entries: &Entries<V>,
    entry_index: i64,
    start_index: i64,
) -> Result<Option<usize>> {
    let mut i = entry_index;
    while i >= start_index {
        let idx = usize::try_from(i).map_err(|_| {
            super::error::Error::range(&entries.label(0), format!("index {i} is negative"))
        })?;
        let kind = entries.kind(idx)?;
        match kind.ty {
            EntryType::BranchSummary | EntryType::CustomMessage => return Ok(Some(idx)),
            EntryType::Message if matches!(kind.role, Some(Role::User | Role::BashExecution)) => {
                return Ok(Some(idx))
            }
            _ => {}
        }
        i -= 1;
    }
    Ok(None)
}

/// `findCutPoint(entries, startIndex, endIndex, keepRecentTokens)`.
pub fn find_cut_point<V: View>(
    entries: &Entries<V>,
    start_index: usize,
    end_index: usize,
    keep_recent_tokens: f64,
) -> Result<CutPoint> {
    let mut cut_points = Vec::new();
    for i in start_index..end_index {
        if is_cut_point(entries, i)? {
            cut_points.push(i);
        }
    }
    let Some(&first) = cut_points.first() else {
        return Ok(CutPoint {
            first_kept_entry_index: start_index,
            turn_start_index: None,
            is_split_turn: false,
        });
    };

    let mut cut_index = first;
    let mut accumulated = 0u64;
    for i in (start_index..end_index).rev() {
        if !entries.kind(i)?.is_message() {
            continue;
        }
        accumulated += entries.message_tokens(i)?;
        if accumulated as f64 >= keep_recent_tokens {
            // cut_points is ascending: the first one at or after i.
            let at = cut_points.partition_point(|&c| c < i);
            if let Some(&c) = cut_points.get(at) {
                cut_index = c;
            }
            break;
        }
    }

    // Pull in the non-message entries (model changes, labels...) just before the cut.
    while cut_index > start_index {
        let prev = entries.kind(cut_index - 1)?;
        if matches!(prev.ty, EntryType::Compaction | EntryType::Message) {
            break;
        }
        cut_index -= 1;
    }

    let cut = entries.kind(cut_index)?;
    let is_user = cut.is_message() && cut.has_role(Role::User);
    let turn_start = if is_user {
        None
    } else {
        find_turn_start_index(entries, cut_index as i64, start_index as i64)?
    };
    Ok(CutPoint {
        first_kept_entry_index: cut_index,
        turn_start_index: turn_start,
        is_split_turn: !is_user && turn_start.is_some(),
    })
}
