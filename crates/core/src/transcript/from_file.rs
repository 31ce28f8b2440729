//! The transcript a summarization request would carry for a session file:
//! the plan's summarized entries as agent messages, `convertToLlm`, the
//! summary projection (first attempt) and `serializeConversation`.

use std::path::Path;

use crate::error::{Context, Result};
use crate::js::json::view::Val;
use crate::js::json::{Object, Value};
use crate::js::string::JsStr;
use crate::plan::from_file::{load_branch, plan_branch, Branch, FilePlan};
use crate::projection::{project, ProjectOptions};
use crate::transcript::llm_message::{from_agent_message, Message};
use crate::transcript::serialize::{serialize, SerializeOptions};

/// The two transcripts of a compaction: the history to summarize, and the
/// prefix of a split turn (summarized apart, when there is one).
#[derive(Debug, Clone, PartialEq)]
pub struct FileTranscript {
    pub plan: FilePlan,
    pub conversation: JsStr,
    /// `Some` when the turn is split and its prefix yields messages.
    pub turn_prefix: Option<JsStr>,
}

/// `{ role, <field>: entry[field]... }`: the message the reference builds for
/// a `custom_message` or `branch_summary` entry, reduced to the fields
/// `convertToLlm` reads (timestamps never reach the transcript).
fn built_message(entry: &Value, role: &str, fields: &[&str]) -> Value {
    let mut o = Object::with_capacity(fields.len() + 1);
    o.insert("role", Value::from(role));
    for &f in fields {
        if let Some(v) = entry.get(f) {
            o.insert(f, v.clone());
        }
    }
    Value::Object(o)
}

/// `getMessageFromEntryForCompaction` + `convertToLlm` for branch entries `indices`.
fn llm_messages(branch: &Branch, indices: &[u32]) -> Result<Vec<Message>> {
    let mut out = Vec::with_capacity(indices.len());
    for &i in indices {
        let i = i as usize;
        let converted = (|| {
            let Some(entry) = branch.entry(i) else {
                return Ok(None);
            };
            match entry.get("type").and_then(Value::as_str) {
                Some("message") => {
                    let message = entry.get("message").map_or(Val::Undefined, Val::new);
                    from_agent_message(&message).within("message")
                }
                Some("custom_message") => from_agent_message(&Val::new(&built_message(
                    entry,
                    "custom",
                    &["customType", "content", "display", "details"],
                ))),
                Some("branch_summary") => from_agent_message(&Val::new(&built_message(
                    entry,
                    "branchSummary",
                    &["summary", "fromId"],
                ))),
                _ => Ok(None),
            }
        })()
        .within_with(|| format!("branch[{i}]"))
        .map_err(|e| branch.locate(e))?;
        out.extend(converted);
    }
    Ok(out)
}

fn transcript(messages: &[Message], reasoning: bool) -> JsStr {
    let options = ProjectOptions::for_attempt(0, reasoning, usize::MAX);
    serialize(&project(messages, &options), SerializeOptions { reasoning })
}

/// Reads the file, plans the branch ending at `leaf`, and serializes what
/// would be summarized. `reasoning`: keep readable assistant reasoning (false
/// for Claude-family summarizers).
pub fn serialize_for_summary_from_file(
    path: &Path,
    leaf: Option<&JsStr>,
    budget: impl Into<crate::plan::settings::Budget>,
    reasoning: bool,
) -> Result<Option<FileTranscript>> {
    let branch = load_branch(path, leaf)?;
    let Some((prep, plan)) = plan_branch(&branch, budget)? else {
        return Ok(None);
    };
    let conversation = transcript(&llm_messages(&branch, &prep.summarize)?, reasoning);
    let turn_prefix = if prep.is_split_turn && !prep.turn_prefix.is_empty() {
        Some(transcript(
            &llm_messages(&branch, &prep.turn_prefix)?,
            reasoning,
        ))
    } else {
        None
    };
    Ok(Some(FileTranscript {
        plan,
        conversation,
        turn_prefix,
    }))
}
