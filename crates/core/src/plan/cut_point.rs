//! Where compaction cuts: valid cut points, turn starts, and the walk that
//! keeps about `keepRecentTokens` of recent context.
//!
//! One walk ([`cut_point`]) over two views of the entries: the raw entries
//! (`findCutPoint`, both lines, and 0.78's planner) and a session
//! projection (1.6's planner, edits applied). The line's [`CutRules`] say
//! what counts where the lines differ.

use std::ops::Range;

use crate::agent_line::{CutRules, SessionRules, TokenRules};
use crate::error::{Error, Result};
use crate::js::json::number_to_js_string;
use crate::js::view::{Key, View};
use crate::session::context::Ids;
use crate::session::entries::Entries;
use crate::session::model::{EntryType, Role};
use crate::session::projection::{
    entry_messages, read_edit, role_hint, IdKey, ProjectedMessage, Projection,
};
use crate::tokens::projected::{msg_tokens, ProjectedMessages};

/// `CutPointResult`, with indices into the view the walk ran over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    pub first_kept_entry_index: usize,
    /// The entry that starts the split turn, when the cut splits one.
    pub turn_start_index: Option<usize>,
    pub is_split_turn: bool,
}

/// Roles of the context messages a cut may fall at (never a tool result:
/// it must follow its call).
const CUT_POINT_ROLES: [Role; 6] = [
    Role::User,
    Role::Assistant,
    Role::BashExecution,
    Role::Custom,
    Role::BranchSummary,
    Role::CompactionSummary,
];

/// Roles of the context messages that start a turn.
const TURN_START_ROLES: [Role; 5] = [
    Role::User,
    Role::BashExecution,
    Role::Custom,
    Role::BranchSummary,
    Role::CompactionSummary,
];

/// What the walk asks of entry `i` of the range it walks.
pub trait CutEntries {
    fn rules(&self) -> &CutRules;
    /// A valid place to cut.
    fn is_cut_point(&self, i: usize) -> Result<bool>;
    /// [`CutEntries::is_cut_point`] reads nothing not read before and
    /// cannot fail, so the walk asks it only where it needs an answer
    /// instead of listing every cut point first (which reads each entry, as
    /// the reference does).
    fn cut_points_on_demand(&self) -> bool {
        false
    }
    /// Starts a turn (`findTurnStartIndex`'s test).
    fn starts_turn(&self, i: usize) -> Result<bool>;
    /// A cut here keeps its turn whole.
    fn cut_keeps_turn(&self, i: usize) -> Result<bool>;
    /// What the entry adds to the kept tokens; `None`: the walk passes over it.
    fn budget_tokens(&self, i: usize) -> Result<Option<u64>>;
    /// The backward scan from the cut stops before this entry.
    fn stops_absorb(&self, i: usize) -> Result<bool>;
    /// Everything in `after..end` is a hidden failed attempt and its edits
    /// (see [`CutRules::recovery_omission_advance`]).
    fn is_recovery_omission(&self, _after: usize, _end: usize) -> Result<bool> {
        Ok(false)
    }
    /// Names entry `i` in errors.
    fn label(&self, i: usize) -> String;
}

/// `findTurnStartIndex`: the nearest entry at or before `entry_index` (and
/// not before `start_index`) that starts a turn.
pub fn turn_start_index<E: CutEntries>(
    entries: &E,
    entry_index: i64,
    start_index: i64,
) -> Result<Option<usize>> {
    let mut i = entry_index;
    while i >= start_index {
        let idx = usize::try_from(i)
            .map_err(|_| Error::range(entries.label(0), format!("index {i} is negative")))?;
        if entries.starts_turn(idx)? {
            return Ok(Some(idx));
        }
        i -= 1;
    }
    Ok(None)
}

/// `findCutPoint(entries, startIndex, endIndex, keepRecentTokens)` over a view.
pub fn cut_point<E: CutEntries>(
    entries: &E,
    start_index: usize,
    end_index: usize,
    keep_recent_tokens: f64,
) -> Result<CutPoint> {
    let mut walk = CutWalk::default();
    cut_point_from(
        entries,
        start_index,
        end_index,
        keep_recent_tokens,
        &mut walk,
    )
}

/// How far [`cut_point_from`] went: where an entry's tokens failed to
/// come (an error, or a stop to ask for facts), it goes on from there
/// when given the same walk and entries again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CutWalk {
    /// The valid cut points, once found.
    cut_points: Option<CutPoints>,
    /// The entries from here on are counted.
    next: usize,
    accumulated: u64,
    /// The entry at which the count reached `keepRecentTokens`.
    exceeded_at: Option<usize>,
}

/// The valid cut points of a walk's range.
#[derive(Debug, Clone, PartialEq)]
enum CutPoints {
    /// Every one, ascending.
    Listed(Vec<usize>),
    /// The first and the last; the others are found when asked for
    /// ([`CutEntries::cut_points_on_demand`]).
    Ends { first: usize, last: usize },
    /// None.
    Empty,
}

impl CutPoints {
    fn find<E: CutEntries>(entries: &E, start: usize, end: usize) -> Result<Self> {
        if !entries.cut_points_on_demand() {
            let mut listed = Vec::new();
            for i in start..end {
                if entries.is_cut_point(i)? {
                    listed.push(i);
                }
            }
            return Ok(if listed.is_empty() {
                CutPoints::Empty
            } else {
                CutPoints::Listed(listed)
            });
        }
        let Some(first) = first_cut_point(entries, start..end)? else {
            return Ok(CutPoints::Empty);
        };
        let mut last = end - 1;
        while !entries.is_cut_point(last)? {
            last -= 1;
        }
        Ok(CutPoints::Ends { first, last })
    }

    fn first_and_last(&self) -> Option<(usize, usize)> {
        match self {
            CutPoints::Listed(listed) => Some((*listed.first()?, *listed.last()?)),
            CutPoints::Ends { first, last } => Some((*first, *last)),
            CutPoints::Empty => None,
        }
    }

    /// The first cut point at or after `i`.
    fn at_or_after<E: CutEntries>(&self, entries: &E, i: usize) -> Result<Option<usize>> {
        match self {
            CutPoints::Listed(listed) => {
                Ok(listed.get(listed.partition_point(|&c| c < i)).copied())
            }
            CutPoints::Ends { last, .. } => first_cut_point(entries, i..*last + 1),
            CutPoints::Empty => Ok(None),
        }
    }
}

/// The first cut point in `range`.
fn first_cut_point<E: CutEntries>(entries: &E, range: Range<usize>) -> Result<Option<usize>> {
    for i in range {
        if entries.is_cut_point(i)? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

impl CutWalk {
    /// The tokens counted so far.
    pub fn counted(&self) -> u64 {
        self.accumulated
    }
}

/// [`cut_point`], going on from `walk`.
pub fn cut_point_from<E: CutEntries>(
    entries: &E,
    start_index: usize,
    end_index: usize,
    keep_recent_tokens: f64,
    walk: &mut CutWalk,
) -> Result<CutPoint> {
    let rules = entries.rules();
    if walk.cut_points.is_none() {
        walk.cut_points = Some(CutPoints::find(entries, start_index, end_index)?);
        walk.next = end_index;
        walk.accumulated = 0;
        walk.exceeded_at = None;
    }
    let cut_points = walk.cut_points.as_ref().unwrap_or(&CutPoints::Empty);
    let Some((first, last)) = cut_points.first_and_last() else {
        return Ok(CutPoint {
            first_kept_entry_index: start_index,
            turn_start_index: None,
            is_split_turn: false,
        });
    };

    while walk.exceeded_at.is_none() && walk.next > start_index {
        let i = walk.next - 1;
        let tokens = entries.budget_tokens(i)?;
        walk.next = i;
        let Some(tokens) = tokens else {
            continue;
        };
        if tokens == 0 && rules.skip_zero_token_entries {
            continue;
        }
        walk.accumulated += tokens;
        if walk.accumulated as f64 >= keep_recent_tokens {
            walk.exceeded_at = Some(i);
        }
    }
    let exceeded = walk.exceeded_at.is_some();
    let mut cut_index = match walk.exceeded_at {
        Some(i) => match cut_points.at_or_after(entries, i)? {
            Some(c) => c,
            None if rules.fallback_to_last_cut_point => last,
            None => first,
        },
        None => first,
    };

    if rules.recovery_omission_advance
        && exceeded
        && entries.is_recovery_omission(cut_index + 1, end_index)?
    {
        cut_index += 1;
    }

    // Pull in the entries just before the cut that add nothing to the context.
    while cut_index > start_index {
        if entries.stops_absorb(cut_index - 1)? {
            break;
        }
        cut_index -= 1;
    }

    let keeps_turn = entries.cut_keeps_turn(cut_index)?;
    let turn_start = if keeps_turn {
        None
    } else {
        turn_start_index(entries, cut_index as i64, start_index as i64)?
    };
    Ok(CutPoint {
        first_kept_entry_index: cut_index,
        turn_start_index: turn_start,
        is_split_turn: !keeps_turn && turn_start.is_some(),
    })
}

/// The raw entries, each with the messages it contributes on its own
/// (`findCutPoint`'s view in both lines; 0.78's planner's).
pub struct RawEntries<'e, 'a, V: View> {
    pub entries: &'e Entries<'a, V>,
}

impl<V: View> RawEntries<'_, '_, V> {
    fn session(&self) -> &SessionRules {
        &self.entries.line.session
    }

    fn tokens(&self) -> &TokenRules {
        &self.entries.line.tokens
    }

    fn messages(&self, i: usize) -> Result<Vec<ProjectedMessage>> {
        let mut out = Vec::new();
        entry_messages(self.entries, i, self.session(), &mut out)?;
        Ok(out)
    }

    /// The role of entry `i`'s message (entries other than compactions give
    /// one at most); `None` for a compaction, which is never a cut point nor
    /// a turn start.
    fn role(&self, i: usize) -> Result<Option<Role>> {
        let kind = self.entries.kind(i)?;
        Ok(match kind.ty {
            EntryType::Message => kind.role,
            EntryType::CustomMessage => Some(Role::Custom),
            EntryType::BranchSummary => self
                .entries
                .with_entry(i, |e| Ok(e.get(Key::Summary)?.truthy()))?
                .then_some(Role::BranchSummary),
            EntryType::Compaction | EntryType::ContextEdit | EntryType::Other => None,
        })
    }
}

impl<V: View> CutEntries for RawEntries<'_, '_, V> {
    fn rules(&self) -> &CutRules {
        &self.entries.line.cut
    }

    fn is_cut_point(&self, i: usize) -> Result<bool> {
        if self.rules().by_context_messages {
            return Ok(self.role(i)?.is_some_and(|r| CUT_POINT_ROLES.contains(&r)));
        }
        let kind = self.entries.kind(i)?;
        Ok(match kind.ty {
            EntryType::Message => kind.role.is_some_and(|r| CUT_POINT_ROLES.contains(&r)),
            EntryType::BranchSummary | EntryType::CustomMessage => true,
            EntryType::Compaction | EntryType::ContextEdit | EntryType::Other => false,
        })
    }

    fn starts_turn(&self, i: usize) -> Result<bool> {
        if self.rules().by_context_messages {
            return Ok(self.role(i)?.is_some_and(|r| TURN_START_ROLES.contains(&r)));
        }
        let kind = self.entries.kind(i)?;
        Ok(match kind.ty {
            EntryType::BranchSummary | EntryType::CustomMessage => true,
            EntryType::Message => matches!(kind.role, Some(Role::User | Role::BashExecution)),
            _ => false,
        })
    }

    fn cut_keeps_turn(&self, i: usize) -> Result<bool> {
        if self.rules().by_context_messages {
            return self.starts_turn(i);
        }
        let kind = self.entries.kind(i)?;
        Ok(kind.is_message() && kind.has_role(Role::User))
    }

    fn budget_tokens(&self, i: usize) -> Result<Option<u64>> {
        if !self.rules().budget_counts_context_messages {
            return Ok(if self.entries.kind(i)?.is_message() {
                Some(self.entries.message_tokens(i)?)
            } else {
                None
            });
        }
        let messages = self.messages(i)?;
        let list = ProjectedMessages {
            entries: self.entries,
            messages: &messages,
            rules: self.session(),
            measured: true,
        };
        let mut total = 0u64;
        for k in 0..messages.len() {
            total += msg_tokens(&list, k, self.entries.counter, self.tokens())?;
        }
        Ok(Some(total))
    }

    fn stops_absorb(&self, i: usize) -> Result<bool> {
        let kind = self.entries.kind(i)?;
        if kind.ty == EntryType::Compaction {
            return Ok(true);
        }
        if self.rules().absorb_stops_at_context_entries {
            return Ok(!self.messages(i)?.is_empty());
        }
        Ok(kind.is_message())
    }

    fn label(&self, i: usize) -> String {
        self.entries.label(i)
    }
}

/// `findCutPoint` over the raw entries, as the entries' line does it.
pub fn find_cut_point<V: View>(
    entries: &Entries<V>,
    start_index: usize,
    end_index: usize,
    keep_recent_tokens: f64,
) -> Result<CutPoint> {
    cut_point(
        &RawEntries { entries },
        start_index,
        end_index,
        keep_recent_tokens,
    )
}

/// The `RangeError` of two index arguments, where the reference would read
/// an entry that is not there.
fn outside_entries((a, a_value): (&str, f64), (b, b_value): (&str, f64), len: usize) -> Error {
    Error::range(
        "",
        format!(
            "{a} {} and {b} {} must lie within entries (length {len})",
            number_to_js_string(a_value),
            number_to_js_string(b_value),
        ),
    )
}

/// What `findCutPoint` gives for indices as JS numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum CutAt {
    /// No cut point was found, or the reference's loops never ran:
    /// `startIndex` comes back as it was given (NaN included), with no turn
    /// start. (A 0 computed from a `startIndex` of -0, through a cut, is 0
    /// here, where the reference's arithmetic can keep the -0.)
    Start(f64),
    Cut(CutPoint),
}

/// `findCutPoint` with the indices as JS numbers. The reference first reads
/// `entries[i]` for `i = startIndex; i < endIndex; i++` to list the cut
/// points, and with none returns `startIndex`; with some it walks back from
/// `endIndex - 1`. So indices it never reads (`NaN`, `startIndex >=
/// endIndex`) echo `startIndex`, and an index that is not one of the
/// entries', where the reference reads it, is a `RangeError`: a fractional
/// `endIndex` only when there is a cut point before it and the walk back
/// starts at or after `startIndex`.
pub fn find_cut_point_at<V: View>(
    entries: &Entries<V>,
    start_index: f64,
    end_index: f64,
    keep_recent_tokens: f64,
) -> Result<CutAt> {
    if start_index
        .partial_cmp(&end_index)
        .is_none_or(|o| o.is_ge())
    {
        return Ok(CutAt::Start(start_index));
    }
    let len = entries.len() as f64;
    // The last index the scan for cut points reads, plus one.
    let scanned = end_index.ceil();
    if start_index.fract() != 0.0 || start_index < 0.0 || scanned > len {
        return Err(outside_entries(
            ("startIndex", start_index),
            ("endIndex", end_index),
            entries.len(),
        ));
    }
    let (start, scanned) = (start_index as usize, scanned as usize);
    // Its walk back reads `entries[endIndex - 1]` first, unless that lies
    // before startIndex: then a fractional endIndex reads as the next integer.
    if end_index.fract() != 0.0 && end_index - 1.0 >= start_index {
        let raw = RawEntries { entries };
        for i in start..scanned {
            if raw.is_cut_point(i)? {
                return Err(Error::range(
                    "",
                    format!(
                        "endIndex {} must be an index of entries: entries[{i}] is a cut point",
                        number_to_js_string(end_index)
                    ),
                ));
            }
        }
        return Ok(CutAt::Start(start_index));
    }
    Ok(CutAt::Cut(find_cut_point(
        entries,
        start,
        scanned,
        keep_recent_tokens,
    )?))
}

/// `findTurnStartIndex` over the raw entries, with the indices as JS numbers.
/// The reference walks `for (i = entryIndex; i >= startIndex; i--)` and
/// returns the first `i` whose entry starts a turn, so a walk that does not
/// run (`NaN`, or `entryIndex < startIndex`) is -1, and an index outside the
/// entries is an error only where that walk reads it: a first index that is
/// not one of the entries', or a walk that reaches below 0 without finding a
/// turn start.
pub fn find_turn_start_index<V: View>(
    entries: &Entries<V>,
    entry_index: f64,
    start_index: f64,
) -> Result<f64> {
    let outside = || {
        outside_entries(
            ("entryIndex", entry_index),
            ("startIndex", start_index),
            entries.len(),
        )
    };
    // The walk does not run: NaN, or entryIndex below startIndex.
    if entry_index
        .partial_cmp(&start_index)
        .is_none_or(|o| o.is_lt())
    {
        return Ok(-1.0);
    }
    if entry_index.fract() != 0.0 || !(0.0..entries.len() as f64).contains(&entry_index) {
        return Err(outside());
    }
    // The lowest index the walk reads, at most entry_index.
    let lowest = start_index.ceil();
    let found = turn_start_index(
        &RawEntries { entries },
        entry_index as i64,
        lowest.max(0.0) as i64,
    )?;
    match found {
        // `i` itself, which is -0 where entryIndex was.
        Some(i) if i as f64 == entry_index => Ok(entry_index),
        Some(i) => Ok(i as f64),
        None if lowest < 0.0 => Err(outside()),
        None => Ok(-1.0),
    }
}

/// A session projection's entries (1.6's planner): each projected entry is
/// seen through its messages, edits applied.
pub struct ProjectedEntries<'p, 'e, 'a, V: View> {
    pub entries: &'e Entries<'a, V>,
    pub projection: &'p Projection,
    pub ids: &'p Ids,
}

impl<V: View> ProjectedEntries<'_, '_, '_, V> {
    fn source_type(&self, k: usize) -> Result<EntryType> {
        Ok(self.entries.kind(self.projection.sources[k])?.ty)
    }

    /// Whether projected entry `k`'s messages have a role of `set` (never for
    /// a compaction).
    fn has_role_in(&self, k: usize, set: &[Role]) -> Result<bool> {
        if self.source_type(k)? == EntryType::Compaction {
            return Ok(false);
        }
        for &m in self.projection.messages_of(k) {
            if role_hint(self.entries, m)?.is_some_and(|r| set.contains(&r)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Contributes messages when no edit applies (`context_edit` entries never do).
    fn intrinsically_visible(&self, k: usize) -> Result<bool> {
        let i = self.projection.sources[k];
        if self.entries.kind(i)?.ty == EntryType::ContextEdit {
            return Ok(false);
        }
        let mut out = Vec::new();
        entry_messages(self.entries, i, &self.entries.line.session, &mut out)?;
        Ok(!out.is_empty())
    }

    /// Visible on its own, but hidden in the projection.
    fn omitted(&self, k: usize) -> Result<bool> {
        Ok(self.projection.messages_of(k).is_empty() && self.intrinsically_visible(k)?)
    }
}

impl<V: View> CutEntries for ProjectedEntries<'_, '_, '_, V> {
    fn rules(&self) -> &CutRules {
        &self.entries.line.cut
    }

    fn is_cut_point(&self, k: usize) -> Result<bool> {
        self.has_role_in(k, &CUT_POINT_ROLES)
    }

    /// The projection read every kind and role this asks for.
    fn cut_points_on_demand(&self) -> bool {
        true
    }

    fn starts_turn(&self, k: usize) -> Result<bool> {
        self.has_role_in(k, &TURN_START_ROLES)
    }

    fn cut_keeps_turn(&self, k: usize) -> Result<bool> {
        self.starts_turn(k)
    }

    fn budget_tokens(&self, k: usize) -> Result<Option<u64>> {
        let messages = self.projection.messages_of(k);
        let list = ProjectedMessages {
            entries: self.entries,
            messages,
            rules: &self.entries.line.session,
            measured: true,
        };
        let mut total = 0u64;
        for m in 0..messages.len() {
            total += msg_tokens(&list, m, self.entries.counter, &self.entries.line.tokens)?;
        }
        Ok(Some(total))
    }

    fn stops_absorb(&self, k: usize) -> Result<bool> {
        Ok(self.source_type(k)? == EntryType::Compaction
            || !self.projection.messages_of(k).is_empty())
    }

    fn is_recovery_omission(&self, after: usize, end: usize) -> Result<bool> {
        let suffix = after..end.max(after);
        let mut omitted_ids = Vec::new();
        let mut omitted_assistant = false;
        for k in suffix.clone() {
            let i = self.projection.sources[k];
            let kind = self.entries.kind(i)?;
            if kind.ty == EntryType::Compaction {
                return Ok(false);
            }
            if !self.intrinsically_visible(k)? {
                continue;
            }
            if !self.omitted(k)? {
                return Ok(false);
            }
            omitted_ids.push(IdKey::of_id(&self.ids.ids[i]));
            omitted_assistant |= kind.is_message() && kind.has_role(Role::Assistant);
        }
        if !omitted_assistant {
            return Ok(false);
        }
        for k in suffix {
            let i = self.projection.sources[k];
            if self.entries.kind(i)?.ty != EntryType::ContextEdit {
                continue;
            }
            let edit = read_edit(self.entries, i)?;
            let omitted_target = edit.target.is_some_and(|t| omitted_ids.contains(&t));
            if !edit.hides && !omitted_target {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn label(&self, k: usize) -> String {
        self.entries.label(self.projection.sources[k])
    }
}

#[cfg(test)]
mod tests;
