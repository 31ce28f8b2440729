//! `prepareCompaction`: what to summarize, what to keep, and the context
//! size before compaction.
//!
//! One planner over the view of the entries the line plans on
//! ([`PlanRules::on_projection`]): the raw entries (0.78), where the range
//! starts at the previous compaction's `firstKeptEntryId` and that
//! compaction sits inside it; or the session projection (1.6), where the
//! range starts after the projected compaction, edits are applied and
//! system messages are left out of the summaries.

use std::borrow::Cow;
use std::ops::Range;

use crate::agent_line::PlanRules;
use crate::error::{Context, Result};
use crate::js::view::{Key, View};
use crate::plan::cut_point::{
    cut_point_from, CutEntries, CutPoint, CutWalk, ProjectedEntries, RawEntries,
};
use crate::plan::file_ops::{extract_nested_call_file_ops, extract_tool_call_file_ops, FileOps};
use crate::session::context::{read_id, Ids};
use crate::session::entries::Entries;
use crate::session::model::{EntryType, Role};
use crate::session::projection::{
    message_of, nullish, project, role_hint, shape_of, shape_reads, MessageKind, MessageShape, Msg,
    PlanMessage, ProjectedMessage, Projection,
};
use crate::tokens::projected::{
    context_estimate, last_invalidating, projected_context_tokens, ProjectedMessages,
};

/// The plan, with messages named by entry and shape: the binding hands
/// them back as the caller's own objects, or builds the copies the
/// reference builds.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    pub first_kept_entry_index: usize,
    pub is_split_turn: bool,
    pub tokens_before: f64,
    /// The messages summarized.
    pub summarize: Vec<PlanMessage>,
    /// The messages of the split turn's prefix.
    pub turn_prefix: Vec<PlanMessage>,
    pub previous_compaction: Option<usize>,
    /// The entry whose `details.readFiles` / `details.modifiedFiles` seed the
    /// file Sets before `file_ops` (the previous compaction, unless it came
    /// from a hook or has no details).
    pub details_from: Option<usize>,
    /// File operations of the summarized tool calls, in order.
    pub file_ops: FileOps,
}

/// What the planner asks of the view it plans on, beyond the cut point.
trait PlanView: CutEntries {
    fn len(&self) -> usize;
    /// The entry view index `k` stands for.
    fn source(&self, k: usize) -> usize;
    /// The previous compaction's entry, and where the range starts.
    fn previous_and_start(&self, ids: &Ids) -> Result<(Option<usize>, usize)>;
    /// The summarized messages of view entries `range`, in order.
    fn summarized(&self, range: Range<usize>, out: &mut Vec<ProjectedMessage>) -> Result<()>;
}

impl<V: View> PlanView for RawEntries<'_, '_, V> {
    fn len(&self) -> usize {
        self.entries.len()
    }

    fn source(&self, k: usize) -> usize {
        k
    }

    fn previous_and_start(&self, ids: &Ids) -> Result<(Option<usize>, usize)> {
        let entries = self.entries;
        for p in (0..entries.len()).rev() {
            if entries.kind(p)?.ty == EntryType::Compaction {
                let first_kept =
                    entries.with_entry(p, |e| read_id(e, Key::FirstKeptEntryId, false))?;
                return Ok((Some(p), ids.position(&first_kept).unwrap_or(p + 1)));
            }
        }
        Ok((None, 0))
    }

    /// Every message, custom_message and branch_summary entry (an empty
    /// summary too) gives its message.
    fn summarized(&self, range: Range<usize>, out: &mut Vec<ProjectedMessage>) -> Result<()> {
        for i in range {
            let kind = match self.entries.kind(i)?.ty {
                EntryType::Message => MessageKind::Message,
                EntryType::CustomMessage => MessageKind::Custom,
                EntryType::BranchSummary => MessageKind::BranchSummary,
                _ => continue,
            };
            out.push(ProjectedMessage { entry: i, kind });
        }
        Ok(())
    }
}

impl<V: View> PlanView for ProjectedEntries<'_, '_, '_, V> {
    fn len(&self) -> usize {
        self.projection.len()
    }

    fn source(&self, k: usize) -> usize {
        self.projection.sources[k]
    }

    /// The projected compaction leads the context when it shows.
    fn previous_and_start(&self, _ids: &Ids) -> Result<(Option<usize>, usize)> {
        if self.projection.is_empty() || self.projection.messages_of(0).is_empty() {
            return Ok((None, 0));
        }
        let first = self.projection.sources[0];
        Ok(if self.entries.kind(first)?.ty == EntryType::Compaction {
            (Some(first), 1)
        } else {
            (None, 0)
        })
    }

    /// The projected messages of every entry but compactions, system
    /// messages left out.
    fn summarized(&self, range: Range<usize>, out: &mut Vec<ProjectedMessage>) -> Result<()> {
        for k in range {
            if self.entries.kind(self.projection.sources[k])?.ty == EntryType::Compaction {
                continue;
            }
            for &m in self.projection.messages_of(k) {
                if role_hint(self.entries, m)? != Some(Role::System) {
                    out.push(m);
                }
            }
        }
        Ok(())
    }
}

/// `prepareCompaction(pathEntries, settings)` as the entries' line does it;
/// `None` where the reference returns `undefined` (nothing to do, or a
/// session that needs migration).
pub fn prepare_compaction<V: View>(
    entries: &Entries<V>,
    keep_recent_tokens: f64,
) -> Result<Option<Preparation>> {
    match prepare_cut(entries, keep_recent_tokens)? {
        Some(cut) => finish_plan(entries, &cut).map(Some),
        None => Ok(None),
    }
}

/// The first part of [`prepare_compaction`]: the plan up to reading the
/// messages it hands back ([`finish_plan`] does that).
pub fn prepare_cut<V: View>(
    entries: &Entries<V>,
    keep_recent_tokens: f64,
) -> Result<Option<CutPlan>> {
    match start_cut(entries)? {
        Some(start) => cut_from(entries, &start, keep_recent_tokens),
        None => Ok(None),
    }
}

/// What the cut starts from: the session's projection and the context size
/// before compaction. A caller that must not hold its thread for long can
/// make it, yield, then cut ([`cut_from`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CutStart {
    /// The ids, where they were read here rather than ahead (the facts
    /// still hold those when the cut is made).
    ids: Option<Ids>,
    projection: Projection,
    tokens_before: f64,
}

/// The first step of [`prepare_cut`]; `None` where the plan is `None`
/// (the session ends with a compaction).
pub fn start_cut<V: View>(entries: &Entries<V>) -> Result<Option<CutStart>> {
    let n = entries.len();
    if n > 0 && entries.kind(n - 1)?.ty == EntryType::Compaction {
        return Ok(None);
    }
    let line = entries.line;
    let ids = Ids::read(entries)?;
    let projection = project(entries, &ids, &line.session)?;
    let tokens_before = tokens_before(entries, &ids, &projection, &line.plan)?;
    Ok(Some(CutStart {
        ids: match ids {
            Cow::Borrowed(_) => None,
            Cow::Owned(ids) => Some(ids),
        },
        projection,
        tokens_before,
    }))
}

/// Runs `$body` with `$ids` and `$view` bound to the start's ids and the
/// view the line plans on: the projection (1.6) or the raw entries (0.78).
/// (A macro, so that each view's calls are static.)
macro_rules! on_view {
    ($entries:expr, $start:expr, |$ids:ident, $view:ident| $body:expr) => {{
        let entries = $entries;
        let start: &CutStart = $start;
        let ids = match &start.ids {
            Some(ids) => Cow::Borrowed(ids),
            None => Ids::read(entries)?,
        };
        let $ids: &Ids = &ids;
        if entries.line.plan.on_projection {
            let $view = &ProjectedEntries {
                entries,
                projection: &start.projection,
                ids: $ids,
            };
            $body
        } else {
            let $view = &RawEntries { entries };
            $body
        }
    }};
}

/// The rest of [`prepare_cut`], from its start (made by [`start_cut`] on
/// the same entries): [`find_cut`], then [`cut_lists`].
pub fn cut_from<V: View>(
    entries: &Entries<V>,
    start: &CutStart,
    keep_recent_tokens: f64,
) -> Result<Option<CutPlan>> {
    match find_cut(
        entries,
        start,
        keep_recent_tokens,
        &mut CutSearch::default(),
    )? {
        Some(found) => cut_lists(entries, start, &found),
        None => Ok(None),
    }
}

/// How far [`find_cut`] went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CutSearch {
    /// The previous compaction and where the entries to plan start.
    bounds: Option<(Option<usize>, usize)>,
    walk: CutWalk,
}

impl CutSearch {
    /// About how many characters of messages the walk has yet to count
    /// to keep `keep_recent_tokens` (the estimate counts a token for 4).
    pub fn chars_left(&self, keep_recent_tokens: f64) -> f64 {
        (keep_recent_tokens - self.walk.counted() as f64) * 4.0
    }
}

/// Where the plan cuts, before its lists of messages are made
/// ([`find_cut`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundCut {
    previous: Option<usize>,
    boundary_start: usize,
    cut: CutPoint,
    first_kept: usize,
}

/// The second step of [`prepare_cut`]: the cut point, from the start;
/// `None` where the plan is `None` (no entry with an id to keep). Where it
/// fails (or stops to ask for facts), how far it went is kept in `search`,
/// and a call with it goes on from there.
pub fn find_cut<V: View>(
    entries: &Entries<V>,
    start: &CutStart,
    keep_recent_tokens: f64,
    search: &mut CutSearch,
) -> Result<Option<FoundCut>> {
    on_view!(entries, start, |ids, view| {
        let (previous, boundary_start) = match search.bounds {
            Some(bounds) => bounds,
            None => *search.bounds.insert(view.previous_and_start(ids)?),
        };
        let cut = cut_point_from(
            view,
            boundary_start,
            view.len(),
            keep_recent_tokens,
            &mut search.walk,
        )?;
        let first_kept = (cut.first_kept_entry_index < view.len())
            .then(|| view.source(cut.first_kept_entry_index));
        let Some(first_kept) = first_kept else {
            return Ok(None);
        };
        match &ids.ids[first_kept] {
            Some(id) if !id.is_empty() => {}
            _ => return Ok(None),
        }
        Ok(Some(FoundCut {
            previous,
            boundary_start,
            cut,
            first_kept,
        }))
    })
}

/// The last step of [`prepare_cut`]: the messages summarized and those of
/// the split turn's prefix, from the cut [`find_cut`] found; `None` where
/// the line gives `undefined` for nothing to summarize.
pub fn cut_lists<V: View>(
    entries: &Entries<V>,
    start: &CutStart,
    found: &FoundCut,
) -> Result<Option<CutPlan>> {
    let FoundCut {
        previous,
        boundary_start,
        cut,
        first_kept,
    } = *found;
    let line = entries.line;
    let (summarize, turn_prefix) = on_view!(entries, start, |_ids, view| {
        let history_end = match (cut.is_split_turn, cut.turn_start_index) {
            (true, Some(start)) => start,
            _ => cut.first_kept_entry_index,
        };
        // Room for a message an entry up front (the entries are there: no
        // claimed length), so that a long history is not copied as it grows.
        let mut summarize = Vec::with_capacity(history_end.saturating_sub(boundary_start));
        view.summarized(boundary_start..history_end, &mut summarize)?;
        let mut turn_prefix = Vec::new();
        if cut.is_split_turn {
            view.summarized(history_end..cut.first_kept_entry_index, &mut turn_prefix)?;
        }
        (summarize, turn_prefix)
    });
    if line.plan.undefined_when_nothing_to_summarize
        && summarize.is_empty()
        && turn_prefix.is_empty()
    {
        return Ok(None);
    }

    // The previous compaction's recorded files come first in the Sets. Its
    // `details` is typed `unknown`, so its lists may hold any JS values: the
    // plan only says which entry seeds the Sets, and the caller copies them.
    let details_from = match previous {
        Some(p) => entries.with_entry(p, |e| {
            Ok((!e.get(Key::FromHook)?.truthy() && e.get(Key::Details)?.truthy()).then_some(p))
        })?,
        None => None,
    };
    Ok(Some(CutPlan {
        first_kept_entry_index: first_kept,
        is_split_turn: cut.is_split_turn,
        tokens_before: start.tokens_before,
        summarize,
        turn_prefix,
        previous_compaction: previous,
        details_from,
    }))
}

/// The context size before compaction: `estimateContextTokens` of the
/// context, or 1.6's `estimateProjectedContextTokens`.
fn tokens_before<V: View>(
    entries: &Entries<V>,
    ids: &Ids,
    projection: &Projection,
    rules: &PlanRules,
) -> Result<f64> {
    let list = ProjectedMessages {
        entries,
        messages: &projection.messages,
        rules: &entries.line.session,
        measured: false,
    };
    let tokens = &entries.line.tokens;
    if !rules.tokens_before_projected {
        return Ok(context_estimate(&list, entries.counter, tokens)?.tokens);
    }
    let estimate = projected_context_tokens(&list, entries.counter, tokens, |index| {
        let source = projection.sources[projection.entry_of_message(index)];
        let usage_entry = match &ids.ids[source] {
            Some(id) if !id.is_empty() => ids.position(&Some(id.clone())),
            _ => None,
        };
        let stale_from = last_invalidating(entries)?;
        Ok(usage_entry.map_or(-1, |i| i as i64) > stale_from.map_or(-1, |i| i as i64))
    })?;
    Ok(estimate.tokens)
}

/// The plan before its messages are read: where it cuts, and which
/// messages it hands back ([`prepare_cut`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CutPlan {
    first_kept_entry_index: usize,
    is_split_turn: bool,
    tokens_before: f64,
    summarize: Vec<ProjectedMessage>,
    turn_prefix: Vec<ProjectedMessage>,
    previous_compaction: Option<usize>,
    details_from: Option<usize>,
}

impl CutPlan {
    /// The message entries whose facts [`finish_plan`] reads (their
    /// content, for the shape, or their calls, for the file operations), in
    /// the order it reads them; a JS pass can read them ahead
    /// ([`crate::session::facts`]).
    pub fn message_entries<V: View>(&self, entries: &Entries<V>) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        for &m in self.summarize.iter().chain(&self.turn_prefix) {
            if m.kind == MessageKind::Message {
                let (ops, shape) = reads(entries, m)?;
                if ops || shape {
                    out.push(m.entry as u32);
                }
            }
        }
        Ok(out)
    }
}

/// The plan from its cut: the messages' shapes and file operations.
pub fn finish_plan<V: View>(entries: &Entries<V>, cut: &CutPlan) -> Result<Preparation> {
    let mut file_ops = FileOps::default();
    let summarize = plan_messages(entries, &cut.summarize, &mut file_ops)?;
    let turn_prefix = plan_messages(entries, &cut.turn_prefix, &mut file_ops)?;
    Ok(Preparation {
        first_kept_entry_index: cut.first_kept_entry_index,
        is_split_turn: cut.is_split_turn,
        tokens_before: cut.tokens_before,
        summarize,
        turn_prefix,
        previous_compaction: cut.previous_compaction,
        details_from: cut.details_from,
        file_ops,
    })
}

/// Whether [`plan_messages`] reads message `m`'s file operations, and its
/// shape.
fn reads<V: View>(entries: &Entries<V>, m: ProjectedMessage) -> Result<(bool, bool)> {
    let line = entries.line;
    let ops = match m.kind {
        MessageKind::Message | MessageKind::Replaced { .. } => match role_hint(entries, m)? {
            Some(Role::Assistant) => true,
            Some(Role::ToolResult) => line.file_ops.nested_calls,
            _ => false,
        },
        _ => false,
    };
    Ok((ops, shape_reads(entries, m, &line.session)?))
}

/// A message's own shape, or the copy the projection makes of it when its
/// `content` is null (its role is one the projection normalises).
fn empty_content_shape(
    m: ProjectedMessage,
    role: Option<Role>,
    content_nullish: bool,
) -> PlanMessage {
    let shape = match (content_nullish, role) {
        (false, _) => MessageShape::Own,
        (true, Some(Role::System)) => MessageShape::EmptyText,
        (true, _) => MessageShape::EmptyContent,
    };
    PlanMessage {
        entry: m.entry as u32,
        shape,
        edit: 0,
    }
}

/// The messages as the plan hands them back, and their file operations
/// added to `file_ops` in order (`extractFileOpsFromMessage`: assistants'
/// tool calls, and tool results' nested calls where the line records them).
/// Only the entries that either needs are read, in chunks of one scope.
fn plan_messages<V: View>(
    entries: &Entries<V>,
    messages: &[ProjectedMessage],
    file_ops: &mut FileOps,
) -> Result<Vec<PlanMessage>> {
    let line = entries.line;
    let rules = &line.session;
    let mut out = Vec::with_capacity(messages.len());
    let mut read = Vec::with_capacity(messages.len());
    for (k, &m) in messages.iter().enumerate() {
        let (ops, shape) = reads(entries, m)?;
        if ops || shape {
            read.push((k, ops, shape));
        }
        // The shape of a message that is not read follows from its kind.
        out.push(PlanMessage {
            entry: m.entry as u32,
            shape: match m.kind {
                MessageKind::Custom => MessageShape::Custom,
                MessageKind::BranchSummary => MessageShape::BranchSummary,
                MessageKind::CompactionSummary => MessageShape::CompactionSummary,
                MessageKind::CompactionSystem => MessageShape::SystemMessage,
                _ => MessageShape::Own,
            },
            edit: 0,
        });
    }
    // Messages whose facts were read ahead take them from there; the others
    // are read in runs, in order, so their file operations keep it.
    let facts_of = |&(k, ops, _): &(usize, bool, bool)| {
        let m: ProjectedMessage = messages[k];
        let facts = entries.facts()?.message(m.entry)?;
        (m.kind == MessageKind::Message && (!ops || facts.calls_read())).then_some(facts)
    };
    let mut seen = Vec::new();
    let mut at = 0;
    while at < read.len() {
        if let Some(facts) = facts_of(&read[at]) {
            let (k, ops, shape) = read[at];
            let m = messages[k];
            if shape {
                let role = role_hint(entries, m)?;
                out[k] = empty_content_shape(m, role, facts.content_nullish);
            }
            if let Some(all) = entries.facts().filter(|_| ops) {
                // A path is added the first time it shows (a set of paths
                // already in the Sets by their place, no hashing).
                if seen.is_empty() {
                    seen = vec![0u8; all.path_count()];
                }
                for &(kind, path) in all.file_ops_of(facts) {
                    let bit = 1 << kind.index();
                    if seen[path as usize] & bit == 0 {
                        seen[path as usize] |= bit;
                        file_ops.add_ref(kind, all.path_at(path));
                    }
                }
            }
            at += 1;
            continue;
        }
        let run = at..(at..read.len())
            .find(|&i| facts_of(&read[i]).is_some())
            .unwrap_or(read.len());
        at = run.end;
        let run = &read[run];
        let mut next = run.iter();
        entries.visit(run.iter().map(|&(k, _, _)| messages[k].entry), |_, e| {
            let Some(&(k, ops, shape)) = next.next() else {
                return Ok(());
            };
            let m = messages[k];
            if m.kind == MessageKind::Message {
                // The common case, each field read once: the shape needs the
                // content's nullness, the file operations the content or the
                // nested calls.
                let role = role_hint(entries, m)?;
                return (|| {
                    let message = e.get(Key::Message)?;
                    let content = if shape || role == Some(Role::Assistant) {
                        Some(message.get(Key::Content)?)
                    } else {
                        None
                    };
                    if let Some(c) = content.as_ref().filter(|_| shape) {
                        out[k] = empty_content_shape(m, role, nullish(c));
                    }
                    if !ops {
                        return Ok(());
                    }
                    let found = &mut |kind, path| file_ops.add(kind, path);
                    match (role, content) {
                        (Some(Role::Assistant), Some(c)) => {
                            extract_tool_call_file_ops(&c, found).within("content")
                        }
                        _ => extract_nested_call_file_ops(&message, found),
                    }
                })()
                .within("message");
            }
            if shape {
                out[k] = shape_of(entries, e, m, rules)?;
            }
            if !ops {
                return Ok(());
            }
            message_of(entries, e, m, rules, |msg| {
                let Msg::Message(message, content) = msg else {
                    return Ok(());
                };
                let found = &mut |kind, path| file_ops.add(kind, path);
                if role_hint(entries, m)? == Some(Role::Assistant) {
                    if let Some(c) = content.of(&message, Role::Assistant)? {
                        extract_tool_call_file_ops(&c, found).within("content")?;
                    }
                    return Ok(());
                }
                extract_nested_call_file_ops(&message, found)
            })
        })?;
    }
    Ok(out)
}
