//! Entry types and message roles, read from values with the errors the
//! rest of the core relies on.

use crate::error::{Context, Error, Result};
use crate::js::view::{Key, Kind, View};

/// The entry types the algorithms distinguish; all others behave alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    Message,
    Compaction,
    BranchSummary,
    CustomMessage,
    /// 1.6's `context_edit`, which hides or replaces another entry's content.
    ContextEdit,
    Other,
}

/// Message roles (`AgentMessage["role"]`); unknown roles estimate as zero tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    BashExecution,
    Custom,
    BranchSummary,
    CompactionSummary,
    /// The agent's system prompt state (1.6 stores it in the session).
    System,
    Other,
}

/// What the cut-point and context logic need to know about one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryKind {
    pub ty: EntryType,
    /// The message's role for `message` entries, `None` otherwise.
    pub role: Option<Role>,
}

impl EntryKind {
    pub fn is_message(self) -> bool {
        self.ty == EntryType::Message
    }

    pub fn has_role(self, role: Role) -> bool {
        self.role == Some(role)
    }
}

pub fn require_object<V: View>(value: &V) -> Result<()> {
    let kind = value.kind();
    if kind.is_object_like() && kind != Kind::Function {
        Ok(())
    } else {
        Err(Error::type_error(
            "",
            format!("expected an object, got {}", kind.describe()),
        ))
    }
}

/// `message.role`, which must be a string (so `message` must be an object).
pub fn role_of<V: View>(message: &V) -> Result<Role> {
    let role = message.get(Key::Role)?;
    match role_from(&role) {
        Role::Other if role.kind() != Kind::String => {
            require_object(message)?;
            let got = role.kind().describe();
            Err(Error::type_error(
                "role",
                format!("expected a string, got {got}"),
            ))
        }
        known => Ok(known),
    }
}

fn role_from<V: View>(role: &V) -> Role {
    const ROLES: [(&str, Role); 8] = [
        ("user", Role::User),
        ("assistant", Role::Assistant),
        ("toolResult", Role::ToolResult),
        ("bashExecution", Role::BashExecution),
        ("custom", Role::Custom),
        ("branchSummary", Role::BranchSummary),
        ("compactionSummary", Role::CompactionSummary),
        ("system", Role::System),
    ];
    const NAMES: [&str; 8] = [
        ROLES[0].0, ROLES[1].0, ROLES[2].0, ROLES[3].0, ROLES[4].0, ROLES[5].0, ROLES[6].0,
        ROLES[7].0,
    ];
    role.str_one_of(&NAMES).map_or(Role::Other, |i| ROLES[i].1)
}

/// The entry types the algorithms tell apart, by their `type` string.
pub const ENTRY_TYPES: [(&str, EntryType); 5] = [
    ("message", EntryType::Message),
    ("compaction", EntryType::Compaction),
    ("branch_summary", EntryType::BranchSummary),
    ("custom_message", EntryType::CustomMessage),
    ("context_edit", EntryType::ContextEdit),
];

/// The names of [`ENTRY_TYPES`], for `str_one_of`.
pub const ENTRY_TYPE_NAMES: [&str; 5] = [
    ENTRY_TYPES[0].0,
    ENTRY_TYPES[1].0,
    ENTRY_TYPES[2].0,
    ENTRY_TYPES[3].0,
    ENTRY_TYPES[4].0,
];

/// Reads `entry.type` (and `entry.message.role` for message entries).
pub fn entry_kind<V: View>(entry: &V) -> Result<EntryKind> {
    let ty = entry.get(Key::Type)?;
    let ty = match ty.str_one_of(&ENTRY_TYPE_NAMES) {
        Some(i) => ENTRY_TYPES[i].1,
        None if ty.kind() != Kind::String => {
            require_object(entry)?;
            let got = ty.kind().describe();
            return Err(Error::type_error(
                "type",
                format!("expected a string, got {got}"),
            ));
        }
        // Only objects have a string `type`, so the entry is one.
        None => EntryType::Other,
    };
    let role = if ty == EntryType::Message {
        let message = entry.get(Key::Message)?;
        Some(role_of(&message).within("message")?)
    } else {
        None
    };
    Ok(EntryKind { ty, role })
}

/// A string field's UTF-16 length; any other type is a `TypeError`.
pub fn str_len_of<V: View>(value: &V, key: Key) -> Result<usize> {
    let v = value.get(key)?;
    v.str_len().ok_or_else(|| {
        Error::type_error(
            key.as_str(),
            format!("expected a string, got {}", v.kind().describe()),
        )
    })
}

/// A number field, with `undefined` read as NaN (what JS arithmetic does with it).
pub fn number_or_nan<V: View>(value: &V, key: Key) -> Result<f64> {
    let v = value.get(key)?;
    match v.kind() {
        Kind::Number => Ok(v.number().unwrap_or(f64::NAN)),
        Kind::Undefined => Ok(f64::NAN),
        other => Err(Error::type_error(
            key.as_str(),
            format!("expected a number, got {}", other.describe()),
        )),
    }
}
