//! Branch summarization without the LLM call: which entries a `/tree`
//! navigation leaves behind (`collectEntriesForBranchSummary`) and which of
//! their messages fit a summary's token budget (`prepareBranchEntries`).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use rustc_hash::FxHashMap;

use crate::error::{join, quoted, Context, Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::plan::file_ops::{extract_tool_call_file_ops, FileOps};
use crate::session::entries::Entries;
use crate::session::model::{role_of, str_len_of, EntryType, Role, ENTRY_TYPES, ENTRY_TYPE_NAMES};
use crate::session::projection::{
    in_replacement, is_editable, nullish, replacement_content, IdKey, MessageShape, PlanMessage,
};
use crate::tokens::estimate::{
    chars_to_tokens, content_chars, measure_message_with, Chars, Content,
};

pub mod entry_path;

/// What `session.getEntry(id)` gave: the caller's entry, its `id`, and its
/// `parentId` when truthy.
pub struct Found<E, I> {
    pub entry: E,
    pub id: I,
    pub parent: Option<I>,
}

/// The one session method the walk needs.
pub trait EntryLookup {
    /// The caller's entry (a JS handle, or a name in tests).
    type Entry;
    /// A string id as the lookup reads it and takes it back; ids are equal
    /// when their strings are.
    type Id: Clone + Eq + Hash;
    /// `session.getEntry(id)`; `None` when it gives a falsy value.
    fn get_entry(&mut self, id: &Self::Id) -> Result<Option<Found<Self::Entry, Self::Id>>>;
    /// The id's text, for error messages (exactly, lone surrogates included).
    fn describe(&self, id: &Self::Id) -> JsStr;
    /// Keeps an error of the target's first steps, which is raised only if
    /// the answer turns out to need that part of its path (`raise`). A
    /// lookup whose errors live outside the `Error` (a JS exception pending
    /// in the engine) takes them out here.
    fn hold(&mut self, error: Error) -> Error {
        error
    }
    /// Raises an error `hold` kept.
    fn raise(&mut self, held: Error) -> Error {
        held
    }
    /// About how many entries the old branch's walk will meet, where the
    /// lookup knows (a path read ahead): room for them is made up front.
    fn steps_hint(&self) -> usize {
        0
    }
}

/// `CollectEntriesResult`: entries root-first, and the deepest shared entry.
pub struct Collected<E, I> {
    pub entries: Vec<E>,
    pub common_ancestor_id: Option<I>,
}

/// Brent's cycle detection over the ids a walk looks up: no memory beyond
/// one saved id, and a cycle is found within about twice its length.
struct CycleGuard<I> {
    saved: Option<I>,
    power: usize,
    steps: usize,
}

impl<I: Clone + Eq> CycleGuard<I> {
    fn new() -> Self {
        CycleGuard {
            saved: None,
            power: 1,
            steps: 0,
        }
    }

    /// False when `id` was seen before: the walk has entered a cycle.
    fn visit(&mut self, id: &I) -> bool {
        if self.saved.as_ref() == Some(id) {
            return false;
        }
        self.steps += 1;
        if self.steps == self.power {
            self.saved = Some(id.clone());
            self.power *= 2;
            self.steps = 0;
        }
        true
    }
}

/// A `parentId` that `getEntry` cannot resolve: the session is corrupt, and
/// a summary built from the part of the path above the gap would be wrong.
fn dangling_parent_error<L: EntryLookup>(session: &L, child: &L::Id, parent: &L::Id) -> Error {
    Error::invalid(join(&[
        &"entry ",
        &quoted(&session.describe(child)),
        &" has parentId ",
        &quoted(&session.describe(parent)),
        &", which getEntry does not resolve",
    ]))
}

/// A step of a walk: the id looked up, and the entry `getEntry` gave for
/// it with its own id (its parent is the walk's next id).
type Step<L> = (
    <L as EntryLookup>::Id,
    Stepped<<L as EntryLookup>::Entry, <L as EntryLookup>::Id>,
);

/// An entry a walk met, and its id.
struct Stepped<E, I> {
    entry: E,
    id: I,
}

/// A walk up parent links, one `session.getEntry` call a step. An unknown
/// starting id is an empty path, as in the reference; a cycle, or a parent
/// link into nothing, is an error.
struct Walk<I> {
    guard: CycleGuard<I>,
    child: Option<I>,
    next: Option<I>,
}

impl<I: Clone + Eq> Walk<I> {
    fn new(start: Option<I>) -> Self {
        Walk {
            guard: CycleGuard::new(),
            child: None,
            next: start,
        }
    }

    /// The next entry found, with the id it was looked up by; `None` once
    /// the path has ended (and after an error).
    #[inline(always)]
    fn step<L: EntryLookup<Id = I>>(&mut self, session: &mut L) -> Result<Option<Step<L>>> {
        let Some(id) = self.next.take() else {
            return Ok(None);
        };
        if !self.guard.visit(&id) {
            return Err(cycle_error(session, &id));
        }
        let Some(found) = session.get_entry(&id)? else {
            return match &self.child {
                Some(c) => Err(dangling_parent_error(session, c, &id)),
                None => Ok(None),
            };
        };
        let Found {
            entry,
            id: own,
            parent,
        } = found;
        // The same id as the one looked up in most steps: copied from that
        // one, as a copy of `own` just after `get_entry` wrote it stalled
        // on store forwarding (docs/boundary.md).
        self.child = Some(if own == id { id.clone() } else { own.clone() });
        self.next = parent;
        Ok(Some((id, Stepped { entry, id: own })))
    }
}

fn cycle_error<L: EntryLookup>(session: &L, id: &L::Id) -> Error {
    Error::invalid(join(&[
        &"parentId links form a cycle through entry id ",
        &quoted(&session.describe(id)),
    ]))
}

/// FxHash: ids are short and come from the caller's own session, so a fast
/// non-keyed hash is the right trade.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.add(u64::from_le_bytes(word));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    /// The state, mixed so that every output bit depends on every input
    /// bit (MurmurHash3's 64-bit finalizer). hashbrown picks buckets by the
    /// low bits, and the raw state's low bits depend only on an id's first
    /// bytes: the agent's ids (8 hex digits, counted up) differ in their
    /// last ones, so unmixed most of them fell into a few buckets and every
    /// lookup scanned long chains.
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The ids of the target's first steps, which every step of the old
/// branch is looked for among: a set, behind a filter of 4,096 bits (a
/// bit per id, from its hash's raw state), which tells most ids that are
/// not there without the set's lookup.
struct NearTarget<I> {
    set: HashSet<I, BuildHasherDefault<FxHasher>>,
    bits: [u64; 64],
}

impl<I> Default for NearTarget<I> {
    fn default() -> Self {
        NearTarget {
            set: HashSet::default(),
            bits: [0; 64],
        }
    }
}

impl<I: Eq + Hash> NearTarget<I> {
    fn bit(id: &I) -> usize {
        let mut h = FxHasher::default();
        id.hash(&mut h);
        // The top bits of the raw state depend on every unit written.
        (h.0 >> 52) as usize
    }

    fn insert(&mut self, id: I) {
        let bit = Self::bit(&id);
        self.bits[bit >> 6] |= 1 << (bit & 63);
        self.set.insert(id);
    }

    #[inline(always)]
    fn contains(&self, id: &I) -> bool {
        let bit = Self::bit(id);
        self.bits[bit >> 6] & (1 << (bit & 63)) != 0 && self.set.contains(id)
    }
}

/// How many steps of the target's path are walked before the old branch:
/// far enough for the usual navigation (back up the branch, or onto a
/// fork near it), few enough to cost nothing when the fork is further.
/// lib/entry-path.js reads as many (`TARGET_STEPS` of the entryPath codes).
pub const TARGET_STEPS: usize = 64;

/// `collectEntriesForBranchSummary(session, oldLeafId, targetId)`, with
/// `None` for a falsy id (for the target: `getBranch` of it is empty).
///
/// The reference builds both root paths with `getBranch` and then walks the
/// old one again up to their deepest shared entry. Here the target's first
/// [`TARGET_STEPS`] entries are looked up, then the old branch from its leaf
/// until it meets one of them: that entry is the deepest shared one (where
/// each id names one entry, as in every session the agent writes), and
/// nothing above it is read. Only when the old branch ends first does the
/// target's path go on, until it meets an id of the old branch, as the
/// reference's scan from the end of the target's path finds it.
///
/// Where the reference would loop forever (a parent cycle) this is an error,
/// and so is a `parentId` that does not resolve (the reference silently cuts
/// the path short there), each where the walk needs that part of a path: an
/// error among the target's first steps is raised only if the old branch
/// ends without meeting them, as it would have been had the target's path
/// been walked second.
pub fn collect_entries_for_branch_summary<L: EntryLookup>(
    session: &mut L,
    old_leaf: Option<L::Id>,
    target: Option<L::Id>,
) -> Result<Collected<L::Entry, L::Id>> {
    let Some(old_leaf) = old_leaf else {
        return Ok(Collected {
            entries: Vec::new(),
            common_ancestor_id: None,
        });
    };

    // The target's first steps: their ids, and an error that ended them.
    let mut to_target = Walk::new(target);
    let mut near_target = NearTarget::<L::Id>::default();
    let mut held = None;
    for _ in 0..TARGET_STEPS {
        match to_target.step(session) {
            Ok(Some((_, found))) => {
                near_target.insert(found.id);
            }
            Ok(None) => break,
            Err(error) => {
                held = Some(session.hold(error));
                break;
            }
        }
    }

    // The old path, leaf first: each entry and its id, plus the rare steps
    // where the id looked up is not the id the entry carries. It ends at the
    // first step the reference's second walk stops before: one looked up by
    // the shared entry's id (the entry met, unless it was looked up under
    // another id).
    let hint = session.steps_hint();
    let mut old_ids: Vec<L::Id> = Vec::with_capacity(hint);
    let mut looked_up_as: Vec<(usize, L::Id)> = Vec::new();
    let mut entries = Vec::with_capacity(hint);
    let mut common_ancestor_id: Option<L::Id> = None;
    // The step that met the shared entry.
    let mut met_at = None;
    let mut from_old = Walk::new(Some(old_leaf));
    while let Some((looked_up, found)) = from_old.step(session)? {
        let met = common_ancestor_id.is_none() && near_target.contains(&found.id);
        if met {
            common_ancestor_id = Some(found.id.clone());
            met_at = Some(old_ids.len());
        }
        let stop = match &common_ancestor_id {
            Some(ca) => looked_up == *ca || (met && looked_up_as.iter().any(|(_, id)| id == ca)),
            None => false,
        };
        if found.id != looked_up {
            looked_up_as.push((old_ids.len(), looked_up));
        }
        old_ids.push(found.id);
        entries.push(found.entry);
        if stop {
            break;
        }
    }

    // An old leaf getEntry does not resolve: no entry to collect, and none
    // the target's path could share, whatever that path holds.
    if old_ids.is_empty() {
        return Ok(Collected {
            entries,
            common_ancestor_id: None,
        });
    }

    if common_ancestor_id.is_none() {
        if let Some(error) = held {
            return Err(session.raise(error));
        }
        // The target's path beyond its first steps, none of which is on the
        // old one. It usually meets the old path within a few more steps:
        // scanning the ids is cheaper than hashing all of them, until it is not.
        const SCAN_STEPS: usize = 4;
        let mut on_old_path: Option<HashSet<&L::Id, BuildHasherDefault<FxHasher>>> = None;
        let mut steps = 0;
        while let Some((_, found)) = to_target.step(session)? {
            steps += 1;
            let shared = if steps <= SCAN_STEPS {
                old_ids.contains(&found.id)
            } else {
                on_old_path
                    .get_or_insert_with(|| old_ids.iter().collect())
                    .contains(&found.id)
            };
            if shared {
                common_ancestor_id = Some(found.id);
                break;
            }
        }
    }

    // The reference's second walk stops where the id it is about to look up
    // is the common ancestor's; that walk repeats the first one step for step.
    // Where every step's entry carries the id it was looked up by, that is
    // the step that met it: no step before it held an id of the target's.
    if let (Some(at), true) = (met_at, looked_up_as.is_empty()) {
        entries.truncate(at);
    } else if let Some(ca) = &common_ancestor_id {
        let mut odd = looked_up_as.iter().peekable();
        let stop =
            old_ids
                .iter()
                .enumerate()
                .position(|(k, own)| match odd.next_if(|(at, _)| *at == k) {
                    Some((_, looked_up)) => looked_up == ca,
                    None => own == ca,
                });
        if let Some(stop) = stop {
            entries.truncate(stop);
        }
    }
    entries.reverse();
    Ok(Collected {
        entries,
        common_ancestor_id,
    })
}

/// `BranchPreparation`, with messages named by entry and shape
/// (chronological): the binding maps them onto `entry.message` or builds
/// the message the reference builds.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchPreparation {
    pub messages: Vec<PlanMessage>,
    /// Entries whose `details` lists seed the file Sets, in order.
    pub details_from: Vec<usize>,
    /// File operations of the visited tool calls, after the seeds.
    pub file_ops: FileOps,
    pub total_tokens: u64,
}

/// `entry.type`, read the way `getMessageFromEntry`'s switch reads it: any
/// unlisted value contributes nothing, only a missing entry throws.
fn entry_type<V: View>(entry: &V) -> Result<EntryType> {
    if matches!(entry.kind(), Kind::Undefined | Kind::Null) {
        return Err(Error::type_error(
            "",
            format!("expected a session entry, got {}", entry.kind().describe()),
        ));
    }
    Ok(entry
        .get(Key::Type)?
        .str_one_of(&ENTRY_TYPE_NAMES)
        .map_or(EntryType::Other, |i| ENTRY_TYPES[i].1))
}

/// The latest context edit of an entry: its entry index, and whether it hides.
type BranchEdit = (usize, bool);

/// What entry `i` gives the branch summary, and its tokens; `None` where
/// `getMessageFromEntry` gives nothing. Assistant tool calls go into `ops`.
fn branch_message<V: View>(
    entries: &Entries<V>,
    entry: &V,
    i: usize,
    ty: EntryType,
    edits: &FxHashMap<IdKey, BranchEdit>,
    ops: &mut FileOps,
) -> Result<Option<(PlanMessage, u64)>> {
    let line = entries.line;
    let plan = |shape, edit: usize| PlanMessage {
        entry: i as u32,
        shape,
        edit: edit as u32,
    };
    let edit = || -> Result<Option<BranchEdit>> {
        if edits.is_empty() {
            return Ok(None);
        }
        Ok(IdKey::read(entry, Key::Id)?.and_then(|id| edits.get(&id).copied()))
    };
    match ty {
        EntryType::Message => {
            let message = entry.get(Key::Message)?;
            if matches!(message.kind(), Kind::Undefined | Kind::Null) {
                return Err(Error::type_error(
                    "message",
                    format!("expected a message, got {}", message.kind().describe()),
                ));
            }
            // Tool results are left out: the assistant's tool call carries their context.
            if message.get(Key::Role)?.str_is("toolResult") || !message.truthy() {
                return Ok(None);
            }
            let (shape, content) = match edit()? {
                Some((_, true)) => return Ok(None),
                None => ((MessageShape::Own, 0), Content::Own),
                Some((e, false)) => {
                    let role = role_of(&message).within("message")?;
                    if is_editable(role) {
                        let content = replacement_content(entries, e)?;
                        let text = content.kind() == Kind::String
                            && matches!(role, Role::Assistant | Role::ToolResult);
                        let shape = if text {
                            MessageShape::ReplacedText
                        } else {
                            MessageShape::Replaced
                        };
                        ((shape, e), Content::Replaced(content))
                    } else {
                        // Not editable: the message as the projection normalises it.
                        let empty = line.session.normalise_null_content
                            && role == Role::System
                            && nullish(&message.get(Key::Content)?);
                        let shape = if empty {
                            MessageShape::EmptyText
                        } else {
                            MessageShape::Own
                        };
                        ((shape, 0), Content::OwnOrEmpty)
                    }
                }
            };
            // What goes wrong past here is the message's.
            let measure = || -> Result<u64> {
                let mut found = |kind, path| ops.add(kind, path);
                if message.is_object_like() && message.get(Key::Role)?.str_is("assistant") {
                    if let Some(c) = content.clone().of(&message, Role::Assistant)? {
                        extract_tool_call_file_ops(&c, &mut found).within("content")?;
                    }
                }
                Ok(chars_to_tokens(measure_message_with(
                    &message,
                    content,
                    &Chars,
                    &line.tokens,
                )?))
            };
            let replaced = matches!(shape.0, MessageShape::Replaced | MessageShape::ReplacedText);
            let tokens = measure()
                .map_err(|e| match replaced {
                    true => in_replacement(entries, shape.1, e),
                    false => e,
                })
                .within("message")?;
            Ok(Some((plan(shape.0, shape.1), tokens)))
        }
        EntryType::CustomMessage => {
            let (shape, content) = match edit()? {
                Some((_, true)) => return Ok(None),
                Some((e, false)) => {
                    let content = replacement_content(entries, e)?;
                    ((MessageShape::CustomReplaced, e), content)
                }
                None => ((MessageShape::Custom, 0), entry.get(Key::Content)?),
            };
            let chars = content_chars(&content)
                .within("content")
                .map_err(|e| match shape.0 {
                    MessageShape::CustomReplaced => in_replacement(entries, shape.1, e),
                    _ => e,
                })?;
            Ok(Some((plan(shape.0, shape.1), chars_to_tokens(chars))))
        }
        EntryType::BranchSummary => Ok(Some((
            plan(MessageShape::BranchSummary, 0),
            chars_to_tokens(str_len_of(entry, Key::Summary)? as u64),
        ))),
        EntryType::Compaction => Ok(Some((
            plan(MessageShape::CompactionSummary, 0),
            chars_to_tokens(str_len_of(entry, Key::Summary)? as u64),
        ))),
        EntryType::ContextEdit | EntryType::Other => Ok(None),
    }
}

/// `prepareBranchEntries(entries, tokenBudget)`: the newest messages that fit
/// the budget (a budget of 0, negative or NaN means no limit), with summary
/// entries squeezed in while under 90% of it, and the file operations of
/// every branch summary plus those of each message visited. Where the line
/// applies context edits, the latest edit of an entry hides it or replaces
/// its content (branch and compaction summaries stay as they are).
pub fn prepare_branch_entries<V: View>(
    entries: &Entries<V>,
    token_budget: f64,
) -> Result<BranchPreparation> {
    let n = entries.len();
    let line = entries.line;
    let mut file_ops = FileOps::default();

    // Summaries' recorded files count even when their entry falls outside
    // the budget. `details` is typed `unknown`: the plan names the entries
    // whose lists seed the Sets, and the caller copies the values.
    let mut details_from = Vec::new();
    let mut types = Vec::with_capacity(crate::capacity::reserve_for(n));
    let mut edits: FxHashMap<IdKey, BranchEdit> = FxHashMap::default();
    let facts = entries.facts();
    for i in 0..n {
        // A kind read ahead names the type; only a branch summary or a
        // context edit is read for more.
        if let Some(kind) = facts.and_then(|f| f.kind(i)) {
            if !matches!(kind.ty, EntryType::BranchSummary | EntryType::ContextEdit) {
                types.push(kind.ty);
                continue;
            }
        }
        types.push(entries.with_entry(i, |e| {
            let ty = entry_type(e)?;
            if ty == EntryType::BranchSummary
                && !e.get(Key::FromHook)?.truthy()
                && e.get(Key::Details)?.truthy()
            {
                details_from.push(i);
            }
            if ty == EntryType::ContextEdit && line.session.context_edits {
                if let Some(target) = IdKey::read(e, Key::TargetId)? {
                    edits.insert(target, (i, e.get(Key::Replacement)?.kind() == Kind::Null));
                }
            }
            Ok(ty)
        })?);
    }

    let limited = token_budget > 0.0;
    let mut newest_first = Vec::new();
    let mut total: u64 = 0;
    for i in (0..n).rev() {
        let ty = types[i];
        if matches!(ty, EntryType::Other | EntryType::ContextEdit) {
            continue;
        }
        let found = entries.with_entry(i, |e| {
            branch_message(entries, e, i, ty, &edits, &mut file_ops)
        })?;
        let Some((message, tokens)) = found else {
            continue;
        };
        if limited && (total + tokens) as f64 > token_budget {
            let is_summary = matches!(ty, EntryType::Compaction | EntryType::BranchSummary);
            if is_summary && (total as f64) < token_budget * 0.9 {
                newest_first.push(message);
                total += tokens;
            }
            break;
        }
        newest_first.push(message);
        total += tokens;
    }
    newest_first.reverse();
    Ok(BranchPreparation {
        details_from,
        messages: newest_first,
        file_ops,
        total_tokens: total,
    })
}

#[cfg(test)]
mod tests;
