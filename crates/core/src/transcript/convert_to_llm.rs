//! `convertToLlm`: which agent messages reach the model, and as what.

use crate::agent_line::AgentLine;
use crate::error::{Error, Result};
use crate::js::string::{JsStr, Utf16Builder};
use crate::js::view::{Key, Kind, View};
use crate::session::model::{role_of, Role};

/// Wire text around a compaction summary in the agent's context. Interface, not prose:
/// the agent's prompts depend on these bytes.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// What becomes of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmMessage {
    /// user, assistant and toolResult messages pass through as the same
    /// object; the role read says which.
    Same(Role),
    /// Not sent (unknown roles, bash runs excluded from context).
    Dropped,
    /// A user message with this single text block.
    UserText(JsStr),
    /// A custom message whose string content becomes one text block.
    CustomText,
    /// A custom message whose content array is reused as is.
    CustomBlocks,
}

/// `bashExecutionToText`: how a `!command` run reads to the model.
pub fn bash_execution_text<V: View>(message: &V) -> Result<JsStr> {
    // As in the agents, whose `msg.command` throws only for these.
    if let kind @ (Kind::Null | Kind::Undefined) = message.kind() {
        return Err(Error::type_error(
            "",
            format!("expected a bashExecution message, got {}", kind.describe()),
        ));
    }
    let mut out = Utf16Builder::new();
    out.push_str("Ran `");
    out.push_js(&message.get(Key::Command)?.to_js_string()?);
    out.push_str("`\n");
    let output = message.get(Key::Output)?;
    if output.truthy() {
        out.push_str("```\n");
        out.push_js(&output.to_js_string()?);
        out.push_str("\n```");
    } else {
        out.push_str("(no output)");
    }
    let exit = message.get(Key::ExitCode)?;
    if message.get(Key::Cancelled)?.truthy() {
        out.push_str("\n\n(command cancelled)");
    } else if !matches!(exit.kind(), Kind::Null | Kind::Undefined) && exit.number() != Some(0.0) {
        out.push_str("\n\nCommand exited with code ");
        out.push_js(&exit.to_js_string()?);
    }
    let full = message.get(Key::FullOutputPath)?;
    if message.get(Key::Truncated)?.truthy() && full.truthy() {
        out.push_str("\n\n[Output truncated. Full output: ");
        out.push_js(&full.to_js_string()?);
        out.push_str("]");
    }
    Ok(out.finish())
}

fn wrap_summary<V: View>(message: &V, prefix: &str, suffix: &str) -> Result<JsStr> {
    let mut out = Utf16Builder::new();
    out.push_str(prefix);
    out.push_js(&message.get(Key::Summary)?.to_js_string()?);
    out.push_str(suffix);
    Ok(out.finish())
}

/// Decides one message of `convertToLlm`.
pub fn convert_message<V: View>(message: &V) -> Result<LlmMessage> {
    convert_as(message, role_of(message)?, false)
}

/// Decides one message of `convertToLlm` whose `role` was read as `role`
/// (the message's other fields are read here); `keeps_system` passes a
/// system message through, as a line may.
pub fn convert_as<V: View>(message: &V, role: Role, keeps_system: bool) -> Result<LlmMessage> {
    Ok(match role {
        role @ (Role::User | Role::Assistant | Role::ToolResult) => LlmMessage::Same(role),
        Role::System if keeps_system => LlmMessage::Same(Role::System),
        Role::BashExecution => {
            if message.get(Key::ExcludeFromContext)?.truthy() {
                LlmMessage::Dropped
            } else {
                LlmMessage::UserText(bash_execution_text(message)?)
            }
        }
        Role::Custom => {
            if message.get(Key::Content)?.kind() == Kind::String {
                LlmMessage::CustomText
            } else {
                LlmMessage::CustomBlocks
            }
        }
        Role::BranchSummary => LlmMessage::UserText(wrap_summary(
            message,
            BRANCH_SUMMARY_PREFIX,
            BRANCH_SUMMARY_SUFFIX,
        )?),
        Role::CompactionSummary => LlmMessage::UserText(wrap_summary(
            message,
            COMPACTION_SUMMARY_PREFIX,
            COMPACTION_SUMMARY_SUFFIX,
        )?),
        Role::System | Role::Other => LlmMessage::Dropped,
    })
}

/// Decides one message of `convertToLlm` as `line` does: [`convert_message`],
/// except that a line may pass system messages through. Transcripts never
/// show them, so the message model reads [`convert_message`] itself.
pub fn convert_message_for<V: View>(line: &AgentLine, message: &V) -> Result<LlmMessage> {
    convert_as(message, role_of(message)?, line.convert_keeps_system)
}
