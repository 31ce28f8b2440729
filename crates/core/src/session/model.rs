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
    // (typeof alone: an array is as good as an object here)
    if value.is_object_or_array() {
        Ok(())
    } else {
        Err(Error::type_error(
            "",
            format!("expected an object, got {}", value.kind().describe()),
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
    role.str_one_of(&ROLE_NAMES)
        .map_or(Role::Other, |i| ROLES_IN_ORDER[i])
}

/// The roles [`role_of`] tells apart, in the order of their read-ahead
/// codes ([`EntryKind::from_code`]).
pub const ROLE_NAMES: [&str; 8] = [
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
    "system",
];

const ROLES_IN_ORDER: [Role; 8] = [
    Role::User,
    Role::Assistant,
    Role::ToolResult,
    Role::BashExecution,
    Role::Custom,
    Role::BranchSummary,
    Role::CompactionSummary,
    Role::System,
];

/// Read-ahead codes of an entry's kind (a JS pass writes them, see
/// `lib/entry-kinds.js`): [`KIND_NOT_READ`]; `KIND_TYPE_BASE + i` for an
/// entry whose `type` is [`ENTRY_TYPE_NAMES`]`[i]` (not a message), or
/// [`KIND_OTHER_TYPE`] for any other string; `KIND_ROLE_BASE + i` for a
/// message entry whose `message.role` is [`ROLE_NAMES`]`[i]`, or
/// [`KIND_OTHER_ROLE`] for any other string.
pub const KIND_NOT_READ: u8 = 0;
pub const KIND_TYPE_BASE: u8 = 1;
pub const KIND_OTHER_TYPE: u8 = KIND_TYPE_BASE + ENTRY_TYPES.len() as u8;
pub const KIND_ROLE_BASE: u8 = 16;
pub const KIND_OTHER_ROLE: u8 = KIND_ROLE_BASE + ROLE_NAMES.len() as u8;

impl EntryKind {
    /// The kind a read-ahead code names; `None` for [`KIND_NOT_READ`] and
    /// any code that names nothing (the entry is then read here).
    pub fn from_code(code: u8) -> Option<EntryKind> {
        let ty = |ty| Some(EntryKind { ty, role: None });
        match code {
            KIND_OTHER_TYPE => ty(EntryType::Other),
            KIND_OTHER_ROLE => Some(EntryKind {
                ty: EntryType::Message,
                role: Some(Role::Other),
            }),
            c if (KIND_TYPE_BASE..KIND_OTHER_TYPE).contains(&c) => {
                match ENTRY_TYPES[usize::from(c - KIND_TYPE_BASE)].1 {
                    // A message's code names its role.
                    EntryType::Message => None,
                    other => ty(other),
                }
            }
            c if (KIND_ROLE_BASE..KIND_OTHER_ROLE).contains(&c) => Some(EntryKind {
                ty: EntryType::Message,
                role: Some(ROLES_IN_ORDER[usize::from(c - KIND_ROLE_BASE)]),
            }),
            _ => None,
        }
    }
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
    // A number is asked for first: one read where it is one.
    if let Some(n) = v.number() {
        return Ok(n);
    }
    match v.kind() {
        Kind::Number => Ok(f64::NAN),
        Kind::Undefined => Ok(f64::NAN),
        other => Err(Error::type_error(
            key.as_str(),
            format!("expected a number, got {}", other.describe()),
        )),
    }
}

#[cfg(test)]
mod kind_code_tests {
    use super::*;
    use crate::js::json::parse;
    use crate::js::json::view::Val;

    fn kind_of_json(json: &str) -> EntryKind {
        let v = parse(json).unwrap_or_else(|e| panic!("{json}: {e:?}"));
        entry_kind(&Val::new(&v)).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    #[test]
    fn every_code_names_the_kind_the_entry_reads_as() {
        for (i, (name, ty)) in ENTRY_TYPES.iter().enumerate() {
            let code = KIND_TYPE_BASE + i as u8;
            if *ty == EntryType::Message {
                assert_eq!(
                    EntryKind::from_code(code),
                    None,
                    "a message's code names its role"
                );
                continue;
            }
            let read = kind_of_json(&format!(r#"{{"type":"{name}"}}"#));
            assert_eq!(EntryKind::from_code(code), Some(read), "{name}");
        }
        let other = kind_of_json(r#"{"type":"label"}"#);
        assert_eq!(EntryKind::from_code(KIND_OTHER_TYPE), Some(other));
        for (i, role) in ROLE_NAMES.iter().enumerate() {
            let read = kind_of_json(&format!(
                r#"{{"type":"message","message":{{"role":"{role}"}}}}"#
            ));
            assert_eq!(
                EntryKind::from_code(KIND_ROLE_BASE + i as u8),
                Some(read),
                "{role}"
            );
        }
        let other = kind_of_json(r#"{"type":"message","message":{"role":"narrator"}}"#);
        assert_eq!(EntryKind::from_code(KIND_OTHER_ROLE), Some(other));
        for code in [
            KIND_NOT_READ,
            KIND_OTHER_TYPE + 1,
            KIND_ROLE_BASE - 1,
            KIND_OTHER_ROLE + 1,
            255,
        ] {
            assert_eq!(EntryKind::from_code(code), None, "{code}");
        }
    }
}
