//! The transcript a summarization request would carry for a session file:
//! the plan's summarized entries as agent messages, `convertToLlm`, the
//! summary projection (first attempt) and `serializeConversation`.

use std::path::Path;

use crate::agent_line::AgentLine;
use crate::error::{Error, Result};
use crate::js::json::view::Val;
use crate::js::json::{Object, Value};
use crate::js::string::JsStr;
use crate::plan::from_file::{load_branch, plan_branch, Branch, FilePlan};
use crate::projection::{project, ProjectOptions};
use crate::session::projection::{MessageShape, PlanMessage};
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

/// `{ ...message, content }`: a copy of a message object with its content replaced.
fn with_content(message: Option<&Value>, content: Value) -> Value {
    match message {
        Some(Value::Object(o)) => {
            let mut o = o.clone();
            o.insert("content", content);
            Value::Object(o)
        }
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

fn text_block(text: Value) -> Value {
    let mut block = Object::with_capacity(2);
    block.insert("type", Value::from("text"));
    block.insert("text", text);
    Value::Array(vec![Value::Object(block)])
}

/// The message a plan names, as the reference hands it to the summarizer
/// (the entry's own message, a copy with edited or normalised content, or
/// the message built for a custom message or summary entry).
fn plan_message(branch: &Branch, m: &PlanMessage) -> Option<Value> {
    let entry = branch.entry(m.entry as usize)?;
    let replacement = || {
        branch
            .entry(m.edit as usize)
            .and_then(|e| e.get("replacement"))
            .and_then(|r| r.get("content"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let custom = |content: Option<Value>| {
        let mut built = built_message(
            entry,
            "custom",
            &["customType", "content", "display", "details"],
        );
        if let (Value::Object(o), Some(c)) = (&mut built, content) {
            o.insert("content", c);
        }
        built
    };
    let message = entry.get("message");
    Some(match m.shape {
        MessageShape::Own => message?.clone(),
        MessageShape::EmptyContent => with_content(message, Value::Array(Vec::new())),
        MessageShape::EmptyText => with_content(message, Value::from("")),
        MessageShape::Replaced => with_content(message, replacement()),
        MessageShape::ReplacedText => with_content(message, text_block(replacement())),
        MessageShape::Custom => custom(None),
        MessageShape::CustomEmpty => custom(Some(Value::Array(Vec::new()))),
        MessageShape::CustomReplaced => custom(Some(replacement())),
        MessageShape::BranchSummary => {
            built_message(entry, "branchSummary", &["summary", "fromId"])
        }
        MessageShape::CompactionSummary => {
            built_message(entry, "compactionSummary", &["summary", "tokensBefore"])
        }
        MessageShape::SystemMessage => entry.get("systemMessage")?.clone(),
    })
}

/// The plan's messages + `convertToLlm` (summaries never hold system messages).
fn llm_messages(branch: &Branch, messages: &[PlanMessage]) -> Result<Vec<Message>> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let Some(message) = plan_message(branch, m) else {
            continue;
        };
        // Errors name where the value sits: the entry's message, its own
        // field, or the context edit whose content the message carries.
        let label = |k: u32| JsStr::from_string(format!("branch[{k}]"));
        let converted = from_agent_message(&Val::new(&message)).map_err(|e| Error {
            path: m.shape.source_path(label(m.entry), label(m.edit), &e.path),
            ..e
        });
        out.extend(converted.map_err(|e| branch.locate(e))?);
    }
    Ok(out)
}

fn transcript(messages: &[Message], reasoning: bool) -> JsStr {
    let options = ProjectOptions {
        reasoning,
        ..ProjectOptions::default()
    };
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
    line: &'static AgentLine,
) -> Result<Option<FileTranscript>> {
    let branch = load_branch(path, leaf)?;
    let Some((prep, plan)) = plan_branch(&branch, budget, line)? else {
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
