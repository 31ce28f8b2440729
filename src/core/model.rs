//! Entry types and message roles, read from values with the errors the
//! rest of the core relies on.

use super::error::{Context, Error, Result};
use super::view::{Key, Kind, View};

/// The entry types the algorithms distinguish; all others behave alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    Message,
    Compaction,
    BranchSummary,
    CustomMessage,
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

/// `message.role`, which must be a string.
pub fn role_of<V: View>(message: &V) -> Result<Role> {
    require_object(message)?;
    let role = message.get(Key::Role)?;
    if role.kind() != Kind::String {
        return Err(Error::type_error(
            "role",
            format!("expected a string, got {}", role.kind().describe()),
        ));
    }
    Ok(role_from(&role))
}

fn role_from<V: View>(role: &V) -> Role {
    const ROLES: [(&str, Role); 7] = [
        ("user", Role::User),
        ("assistant", Role::Assistant),
        ("toolResult", Role::ToolResult),
        ("bashExecution", Role::BashExecution),
        ("custom", Role::Custom),
        ("branchSummary", Role::BranchSummary),
        ("compactionSummary", Role::CompactionSummary),
    ];
    ROLES
        .iter()
        .find(|(name, _)| role.str_is(name))
        .map_or(Role::Other, |&(_, r)| r)
}

/// Reads `entry.type` (and `entry.message.role` for message entries).
pub fn entry_kind<V: View>(entry: &V) -> Result<EntryKind> {
    require_object(entry)?;
    let ty = entry.get(Key::Type)?;
    if ty.kind() != Kind::String {
        return Err(Error::type_error(
            "type",
            format!("expected a string, got {}", ty.kind().describe()),
        ));
    }
    const TYPES: [(&str, EntryType); 4] = [
        ("message", EntryType::Message),
        ("compaction", EntryType::Compaction),
        ("branch_summary", EntryType::BranchSummary),
        ("custom_message", EntryType::CustomMessage),
    ];
    let ty = TYPES
        .iter()
        .find(|(name, _)| ty.str_is(name))
        .map_or(EntryType::Other, |&(_, t)| t);
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
