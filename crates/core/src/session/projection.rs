//! The session projection: the messages a path of entries gives the model,
//! entry by entry (the agent's `buildSessionContext`, and 1.6's
//! `buildSessionProjection`).
//!
//! The path runs up the `parentId` chain from the last entry; entries off
//! it play no part. With a compaction on the path, the context is that
//! compaction, then the path from its `firstKeptEntryId` up to it, then the
//! path after it; an older compaction inside the kept range contributes
//! nothing. What 1.6 added is data ([`SessionRules`]): `context_edit`
//! entries hide or replace their target's content, null content is read as
//! empty, the compaction's `systemMessage` comes before its summary, and
//! system-role entries of the kept range are left out.
//!
//! Messages are described, not built: each names its entry and how it is
//! made from it ([`MessageKind`]); token estimates read the caller's values
//! through [`with_message`], and `lib/api.js` builds the few new objects
//! from a plan's [`MessageShape`]s.

use rustc_hash::FxHashMap;
use std::borrow::Cow;

use crate::agent_line::SessionRules;
use crate::error::{Context, Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::session::context::{read_id, Id, Ids};
use crate::session::entries::Entries;
use crate::session::facts::EntryFacts;
use crate::session::model::{EntryType, Role};
use crate::tokens::estimate::Content;

/// How a context message is made from its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A `message` entry's `message`.
    Message,
    /// A `message` entry's message with its `content` replaced by the
    /// `replacement.content` of the context edit at entry index `edit`.
    Replaced { edit: usize },
    /// The custom message a `custom_message` entry stands for.
    Custom,
    /// The same, with the content of the context edit at `edit`.
    CustomReplaced { edit: usize },
    /// The branch summary message of a `branch_summary` entry.
    BranchSummary,
    /// The compaction summary message of a `compaction` entry.
    CompactionSummary,
    /// A compaction entry's `systemMessage`, as it is.
    CompactionSystem,
}

/// One context message: its entry (an index into the entries) and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProjectedMessage {
    pub entry: usize,
    pub kind: MessageKind,
}

/// How a message in a plan is built from the caller's entries, for
/// `lib/api.js` (which reads the numbers from the binding's `messageShapes()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum MessageShape {
    /// The entry's own `message` object.
    Own = 0,
    /// `createCustomMessage(customType, content, display, details, timestamp)`.
    Custom = 1,
    /// `createBranchSummaryMessage(summary, fromId, timestamp)`.
    BranchSummary = 2,
    /// `createCompactionSummaryMessage(summary, tokensBefore, timestamp)`.
    CompactionSummary = 3,
    /// `{ ...message, content: [] }`.
    EmptyContent = 4,
    /// `{ ...message, content: "" }`.
    EmptyText = 5,
    /// A custom message with `content: []`.
    CustomEmpty = 6,
    /// `{ ...message, content: edit.replacement.content }`.
    Replaced = 7,
    /// `{ ...message, content: [{ type: "text", text: edit.replacement.content }] }`.
    ReplacedText = 8,
    /// A custom message with `content: edit.replacement.content`.
    CustomReplaced = 9,
    /// The compaction entry's own `systemMessage` object.
    SystemMessage = 10,
}

impl MessageShape {
    /// Every shape, with the name `lib/api.js` knows it by.
    pub const ALL: [(&'static std::ffi::CStr, MessageShape); 11] = [
        (c"own", MessageShape::Own),
        (c"custom", MessageShape::Custom),
        (c"branchSummary", MessageShape::BranchSummary),
        (c"compactionSummary", MessageShape::CompactionSummary),
        (c"emptyContent", MessageShape::EmptyContent),
        (c"emptyText", MessageShape::EmptyText),
        (c"customEmpty", MessageShape::CustomEmpty),
        (c"replaced", MessageShape::Replaced),
        (c"replacedText", MessageShape::ReplacedText),
        (c"customReplaced", MessageShape::CustomReplaced),
        (c"systemMessage", MessageShape::SystemMessage),
    ];
}

impl MessageShape {
    /// The shape `lib/api.js` knows by this number.
    pub fn from_code(code: u8) -> Option<MessageShape> {
        MessageShape::ALL
            .iter()
            .map(|&(_, shape)| shape)
            .find(|&shape| shape as u8 == code)
    }

    /// Where `path` (a field of a message of this shape, outermost first)
    /// sits among the caller's entries: `entry` names the message's entry,
    /// `edit` the context edit whose replacement content it carries.
    /// Messages built from an entry's own fields (custom and summary
    /// messages) take each field from the entry's field of that name.
    pub fn source_path(self, entry: JsStr, edit: JsStr, path: &[JsStr]) -> Vec<JsStr> {
        let in_content = path.first().is_some_and(|f| f.as_str() == Some("content"));
        let (mut out, rest) = match self {
            MessageShape::Replaced | MessageShape::CustomReplaced if in_content => {
                (vec![edit, "replacement".into()], path)
            }
            // The content is `[{ type: "text", text: replacement.content }]`.
            MessageShape::ReplacedText if in_content => {
                (vec![edit, "replacement".into()], &path[..1])
            }
            MessageShape::Own
            | MessageShape::EmptyContent
            | MessageShape::EmptyText
            | MessageShape::Replaced
            | MessageShape::ReplacedText => (vec![entry, "message".into()], path),
            MessageShape::SystemMessage => (vec![entry, "systemMessage".into()], path),
            MessageShape::Custom
            | MessageShape::CustomEmpty
            | MessageShape::CustomReplaced
            | MessageShape::BranchSummary
            | MessageShape::CompactionSummary => (vec![entry], path),
        };
        out.extend(rest.iter().cloned());
        out
    }
}

/// A message as a plan hands it back: the entry, how it is built, and the
/// context edit whose replacement it carries (0 when none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanMessage {
    pub entry: u32,
    pub shape: MessageShape,
    pub edit: u32,
}

/// A `Map` key as the projection's maps see ids: `targetId` and `id`
/// values compare as JS `Map` keys do (strings, `undefined` and `null`; a
/// value of any other type matches nothing, as entry ids are strings).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    Str(JsStr),
    Undefined,
    Null,
}

impl IdKey {
    pub fn of_id(id: &Id) -> IdKey {
        match id {
            Some(s) => IdKey::Str(s.clone()),
            None => IdKey::Undefined,
        }
    }

    /// Reads `value[key]` as a key; `None` for a value that matches nothing.
    pub fn read<V: View>(value: &V, key: Key) -> Result<Option<IdKey>> {
        let v = value.get(key)?;
        if let Some(s) = v.string() {
            return Ok(Some(IdKey::Str(s)));
        }
        Ok(match v.kind() {
            Kind::Undefined => Some(IdKey::Undefined),
            Kind::Null => Some(IdKey::Null),
            _ => None,
        })
    }
}

/// A `context_edit` entry, as far as the projection reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// `None` when no entry can be its target.
    pub target: Option<IdKey>,
    /// `replacement === null`: the target is hidden.
    pub hides: bool,
}

/// Reads a `context_edit` entry's target and whether it hides it.
pub fn read_edit<V: View>(entries: &Entries<V>, i: usize) -> Result<Edit> {
    entries.with_entry(i, |e| {
        Ok(Edit {
            target: IdKey::read(e, Key::TargetId)?,
            hides: e.get(Key::Replacement)?.kind() == Kind::Null,
        })
    })
}

/// The messages entry `i` contributes with no edit applied (the agent's
/// `sessionEntryToContextMessages`, the compaction's summary included).
pub fn entry_messages<V: View>(
    entries: &Entries<V>,
    i: usize,
    rules: &SessionRules,
    out: &mut Vec<ProjectedMessage>,
) -> Result<()> {
    let at = |kind| ProjectedMessage { entry: i, kind };
    match entries.kind(i)?.ty {
        EntryType::Message => out.push(at(MessageKind::Message)),
        EntryType::CustomMessage => out.push(at(MessageKind::Custom)),
        EntryType::BranchSummary => {
            if entries.with_entry(i, |e| Ok(e.get(Key::Summary)?.truthy()))? {
                out.push(at(MessageKind::BranchSummary));
            }
        }
        EntryType::Compaction => {
            if rules.compaction_system_message
                && entries.with_entry(i, |e| Ok(e.get(Key::SystemMessage)?.truthy()))?
            {
                out.push(at(MessageKind::CompactionSystem));
            }
            out.push(at(MessageKind::CompactionSummary));
        }
        EntryType::ContextEdit | EntryType::Other => {}
    }
    Ok(())
}

/// Whether a context edit's replacement replaces a message's content (the
/// other roles pass through unchanged).
pub fn is_editable(role: Role) -> bool {
    matches!(
        role,
        Role::User | Role::Assistant | Role::ToolResult | Role::Custom
    )
}

/// The messages entry `i` contributes under `edit` (the context edit at
/// entry index `edit.0`), as 1.6's `projectContextEntry` gives them: none
/// when it hides the entry; otherwise user, assistant, tool-result and
/// custom messages take the replacement content, and the rest stay.
fn edited_messages<V: View>(
    entries: &Entries<V>,
    i: usize,
    edit: (usize, &Edit),
    rules: &SessionRules,
    out: &mut Vec<ProjectedMessage>,
) -> Result<()> {
    if edit.1.hides {
        return Ok(());
    }
    let start = out.len();
    entry_messages(entries, i, rules, out)?;
    for m in &mut out[start..] {
        m.kind = match m.kind {
            MessageKind::Message => {
                if entries.kind(i)?.role.is_some_and(is_editable) {
                    MessageKind::Replaced { edit: edit.0 }
                } else {
                    MessageKind::Message
                }
            }
            MessageKind::Custom => MessageKind::CustomReplaced { edit: edit.0 },
            other => other,
        };
    }
    Ok(())
}

/// The projection of the path ending at the last entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Projection {
    /// The entry each projected entry comes from, in context order.
    pub sources: Vec<usize>,
    /// Projected entry `k`'s messages are `messages[starts[k]..starts[k + 1]]`.
    starts: Vec<usize>,
    pub messages: Vec<ProjectedMessage>,
}

impl Projection {
    /// Projected entries.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The messages of projected entry `k`.
    pub fn messages_of(&self, k: usize) -> &[ProjectedMessage] {
        &self.messages[self.starts[k]..self.starts[k + 1]]
    }

    /// The projected entry that holds message `m`.
    pub fn entry_of_message(&self, m: usize) -> usize {
        self.starts.partition_point(|&s| s <= m).saturating_sub(1)
    }
}

/// Builds the projection of the path that ends at the last entry.
pub fn project<V: View>(
    entries: &Entries<V>,
    ids: &Ids,
    rules: &SessionRules,
) -> Result<Projection> {
    let (path, kinds_known) = match entries.facts().and_then(EntryFacts::path) {
        Some(path) => (Cow::Borrowed(path), true),
        None => (Cow::Owned(ids.path_to_last()?), false),
    };
    let mut compaction_at = None;
    if kinds_known {
        // The facts walked the path and hold every entry's kind, so no read
        // can fail: the last compaction is looked for from the end.
        for (p, &i) in path.iter().enumerate().rev() {
            if entries.kind(i)?.ty == EntryType::Compaction {
                compaction_at = Some(p);
                break;
            }
        }
    } else {
        for (p, &i) in path.iter().enumerate() {
            if entries.kind(i)?.ty == EntryType::Compaction {
                compaction_at = Some(p);
            }
        }
    }

    // Ids are unique along a path (the walk goes through the id map, and a
    // repeat is a cycle), so the compaction's position is where its id is.
    let context: Vec<usize> = match compaction_at {
        None => path.into_owned(),
        Some(at) => {
            let c = path[at];
            let first_kept = entries.with_entry(c, |e| read_id(e, Key::FirstKeptEntryId, false))?;
            let mut out = Vec::with_capacity(path.len() - at);
            out.push(c);
            // (looked for from the compaction back, where the kept entry lies)
            if let Some(from) = path[..at].iter().rposition(|&i| ids.ids[i] == first_kept) {
                for &i in &path[from..at] {
                    if rules.kept_range_drops_system && entries.kind(i)?.has_role(Role::System) {
                        continue;
                    }
                    out.push(i);
                }
            }
            out.extend_from_slice(&path[at + 1..]);
            out
        }
    };

    // The latest edit of each target among the context entries.
    let mut edits: FxHashMap<IdKey, (usize, Edit)> = FxHashMap::default();
    if rules.context_edits {
        for &i in &context {
            if entries.kind(i)?.ty == EntryType::ContextEdit {
                let edit = read_edit(entries, i)?;
                if let Some(target) = edit.target.clone() {
                    edits.insert(target, (i, edit));
                }
            }
        }
    }

    let mut starts = Vec::with_capacity(context.len() + 1);
    let mut messages = Vec::with_capacity(context.len() + 1);
    starts.push(0);
    for (k, &i) in context.iter().enumerate() {
        let ty = entries.kind(i)?.ty;
        let may_be_edited =
            !edits.is_empty() && !matches!(ty, EntryType::ContextEdit | EntryType::Other);
        if ty == EntryType::Compaction && k > 0 {
            // An older compaction kept in the newest one's range.
        } else if let Some((e, edit)) = may_be_edited
            .then(|| edits.get(&IdKey::of_id(&ids.ids[i])))
            .flatten()
        {
            edited_messages(entries, i, (*e, edit), rules, &mut messages)?;
        } else {
            entry_messages(entries, i, rules, &mut messages)?;
        }
        starts.push(messages.len());
    }
    Ok(Projection {
        sources: context,
        starts,
        messages,
    })
}

/// A context message's value, as the token estimates and file operations
/// read it.
pub enum Msg<V> {
    /// A message object, with the content it is read with.
    Message(V, Content<V>),
    /// A custom message's content (`None`: empty).
    Custom(Option<V>),
    /// An entry whose `summary` the message carries.
    Summary(V),
}

/// `v == null`.
pub fn nullish<V: View>(v: &V) -> bool {
    matches!(v.kind(), Kind::Undefined | Kind::Null)
}

/// Where errors name the context edit at entry index `edit`: the edit
/// entry's own `replacement`, whatever entry's scope they surface in.
fn replacement_root<V: View>(entries: &Entries<V>, edit: usize) -> [JsStr; 2] {
    [
        JsStr::from_string(entries.label(edit)),
        "replacement".into(),
    ]
}

/// The `replacement.content` of the context edit at entry index `edit`.
pub fn replacement_content<V: View>(entries: &Entries<V>, edit: usize) -> Result<V> {
    let replacement = entries.array().at(edit)?.get(Key::Replacement)?;
    replacement
        .expect_object("", "an object with content")
        .map_err(|e| e.rooted_at(replacement_root(entries, edit)))?;
    replacement.get(Key::Content)
}

/// An error from reading a message that carries the content of the context
/// edit at `edit`: one about its `content` is named at the edit's
/// replacement, where that content sits.
pub fn in_replacement<V: View>(entries: &Entries<V>, edit: usize, err: Error) -> Error {
    let about_content = !err.rooted
        && err
            .path
            .first()
            .is_some_and(|seg| seg.as_str() == Some("content"));
    if about_content {
        err.rooted_at(replacement_root(entries, edit))
    } else {
        err
    }
}

/// Runs `f` on message `m`'s value, inside its entry's scope. Errors name the
/// entry (and the edit, for replaced content).
pub fn with_message<V: View, R>(
    entries: &Entries<V>,
    m: ProjectedMessage,
    rules: &SessionRules,
    f: impl FnOnce(Msg<V>) -> Result<R>,
) -> Result<R> {
    entries.with_entry(m.entry, |e| message_of(entries, e, m, rules, f))
}

/// [`with_message`] with message `m`'s entry already read (`entry`), in
/// the scope the caller opened.
pub fn message_of<V: View, R>(
    entries: &Entries<V>,
    entry: &V,
    m: ProjectedMessage,
    rules: &SessionRules,
    f: impl FnOnce(Msg<V>) -> Result<R>,
) -> Result<R> {
    let own = if rules.normalise_null_content {
        Content::OwnOrEmpty
    } else {
        Content::Own
    };
    match m.kind {
        MessageKind::Message => {
            let message = entry.get(Key::Message)?;
            f(Msg::Message(message, own)).within("message")
        }
        MessageKind::CompactionSystem => {
            let message = entry.get(Key::SystemMessage)?;
            f(Msg::Message(message, Content::Own)).within("systemMessage")
        }
        MessageKind::Custom => {
            let content = entry.get(Key::Content)?;
            let content = if rules.normalise_null_content && nullish(&content) {
                None
            } else {
                Some(content)
            };
            f(Msg::Custom(content))
        }
        MessageKind::BranchSummary | MessageKind::CompactionSummary => {
            f(Msg::Summary(entry.clone()))
        }
        MessageKind::Replaced { edit } | MessageKind::CustomReplaced { edit } => {
            // The message is the entry's; its content is the edit's.
            let content = replacement_content(entries, edit)?;
            match m.kind {
                MessageKind::Replaced { .. } => {
                    let message = entry.get(Key::Message)?;
                    f(Msg::Message(message, Content::Replaced(content)))
                        .map_err(|e| in_replacement(entries, edit, e))
                        .within("message")
                }
                _ => f(Msg::Custom(Some(content))).map_err(|e| in_replacement(entries, edit, e)),
            }
        }
    }
}

/// Whether [`shape_of`] reads message `m`'s entry (to see a null content,
/// or a replacement's type); otherwise the shape follows from the kind.
pub fn shape_reads<V: View>(
    entries: &Entries<V>,
    m: ProjectedMessage,
    rules: &SessionRules,
) -> Result<bool> {
    Ok(match m.kind {
        MessageKind::Message => {
            rules.normalise_null_content && entries.kind(m.entry)?.role.is_some_and(is_normalised)
        }
        MessageKind::Custom => rules.normalise_null_content,
        MessageKind::Replaced { .. } | MessageKind::CustomReplaced { .. } => true,
        _ => false,
    })
}

/// The roles whose null content the projection reads as empty.
fn is_normalised(role: Role) -> bool {
    matches!(
        role,
        Role::User | Role::Assistant | Role::ToolResult | Role::System
    )
}

/// How a plan hands message `m` back. `entry` is `m`'s entry, read in the
/// caller's scope, where [`shape_reads`] says it is needed.
pub fn shape_of<V: View>(
    entries: &Entries<V>,
    entry: &V,
    m: ProjectedMessage,
    rules: &SessionRules,
) -> Result<PlanMessage> {
    let plan = |shape, edit: usize| PlanMessage {
        entry: m.entry as u32,
        shape,
        edit: edit as u32,
    };
    Ok(match m.kind {
        MessageKind::Message => {
            let role = entries.kind(m.entry)?.role;
            let empty = rules.normalise_null_content
                && role.is_some_and(is_normalised)
                && nullish(&entry.get(Key::Message)?.get(Key::Content)?);
            match (empty, role) {
                (false, _) => plan(MessageShape::Own, 0),
                (true, Some(Role::System)) => plan(MessageShape::EmptyText, 0),
                (true, _) => plan(MessageShape::EmptyContent, 0),
            }
        }
        MessageKind::Custom => {
            let empty = rules.normalise_null_content && nullish(&entry.get(Key::Content)?);
            plan(
                if empty {
                    MessageShape::CustomEmpty
                } else {
                    MessageShape::Custom
                },
                0,
            )
        }
        MessageKind::Replaced { edit } => {
            // Read whatever the role: the copy is made of what is there.
            let string = replacement_content(entries, edit)?.kind() == Kind::String;
            let wraps = string
                && matches!(
                    entries.kind(m.entry)?.role,
                    Some(Role::Assistant | Role::ToolResult)
                );
            plan(
                if wraps {
                    MessageShape::ReplacedText
                } else {
                    MessageShape::Replaced
                },
                edit,
            )
        }
        MessageKind::CustomReplaced { edit } => {
            replacement_content(entries, edit)?;
            plan(MessageShape::CustomReplaced, edit)
        }
        MessageKind::BranchSummary => plan(MessageShape::BranchSummary, 0),
        MessageKind::CompactionSummary => plan(MessageShape::CompactionSummary, 0),
        MessageKind::CompactionSystem => plan(MessageShape::SystemMessage, 0),
    })
}

/// The role of message `m`, where it is known without reading (a
/// compaction's `systemMessage` has whatever role its object says).
pub fn role_hint<V: View>(entries: &Entries<V>, m: ProjectedMessage) -> Result<Option<Role>> {
    Ok(match m.kind {
        MessageKind::Message | MessageKind::Replaced { .. } => entries.kind(m.entry)?.role,
        MessageKind::Custom | MessageKind::CustomReplaced { .. } => Some(Role::Custom),
        MessageKind::BranchSummary => Some(Role::BranchSummary),
        MessageKind::CompactionSummary => Some(Role::CompactionSummary),
        MessageKind::CompactionSystem => None,
    })
}

#[cfg(test)]
mod tests;
