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

/// The literal text of the agent's templates, each a [`Piece::Lit`]. The
/// binding hands JS the table ([`Literal::ALL`], by index) once, so a text
/// crosses as codes and the caller's own strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    Ran,
    RanEnd,
    OutputStart,
    OutputEnd,
    NoOutput,
    Cancelled,
    ExitCode,
    Truncated,
    TruncatedEnd,
    CompactionPrefix,
    CompactionSuffix,
    BranchPrefix,
    BranchSuffix,
}

impl Literal {
    /// Every literal, each at its own index.
    pub const ALL: [Literal; 13] = [
        Literal::Ran,
        Literal::RanEnd,
        Literal::OutputStart,
        Literal::OutputEnd,
        Literal::NoOutput,
        Literal::Cancelled,
        Literal::ExitCode,
        Literal::Truncated,
        Literal::TruncatedEnd,
        Literal::CompactionPrefix,
        Literal::CompactionSuffix,
        Literal::BranchPrefix,
        Literal::BranchSuffix,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Literal::Ran => "Ran `",
            Literal::RanEnd => "`\n",
            Literal::OutputStart => "```\n",
            Literal::OutputEnd => "\n```",
            Literal::NoOutput => "(no output)",
            Literal::Cancelled => "\n\n(command cancelled)",
            Literal::ExitCode => "\n\nCommand exited with code ",
            Literal::Truncated => "\n\n[Output truncated. Full output: ",
            Literal::TruncatedEnd => "]",
            Literal::CompactionPrefix => COMPACTION_SUMMARY_PREFIX,
            Literal::CompactionSuffix => COMPACTION_SUMMARY_SUFFIX,
            Literal::BranchPrefix => BRANCH_SUMMARY_PREFIX,
            Literal::BranchSuffix => BRANCH_SUMMARY_SUFFIX,
        }
    }

    /// Its index in [`Literal::ALL`].
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// A piece of a text the agent writes with a template literal: literal
/// text, or a value of the message shown as `String(value)`, converted where
/// the template converts it ([`View::string_value`], else copied out).
#[derive(Debug, Clone)]
pub enum Piece<V> {
    Lit(Literal),
    Str(JsStr),
    Value(V),
}

/// A text as [`Piece`]s, in order.
#[derive(Debug, Clone)]
pub struct Pieces<V>(pub Vec<Piece<V>>);

impl<V: View> Pieces<V> {
    fn lit(&mut self, text: Literal) {
        self.0.push(Piece::Lit(text));
    }

    /// `${value}`: converted now, as the template converts it.
    fn value(&mut self, value: &V) -> Result<()> {
        self.0.push(match value.string_value()? {
            Some(s) => Piece::Value(s),
            None => Piece::Str(value.to_js_string()?),
        });
        Ok(())
    }

    /// The text itself.
    pub fn text(&self) -> Result<JsStr> {
        let mut out = Utf16Builder::new();
        for piece in &self.0 {
            match piece {
                Piece::Lit(text) => out.push_str(text.as_str()),
                Piece::Str(s) => out.push_js(s),
                Piece::Value(v) => out.push_js(&v.to_js_string()?),
            }
        }
        Ok(out.finish())
    }
}

/// What becomes of one message.
#[derive(Debug, Clone)]
pub enum LlmMessage<V> {
    /// user, assistant and toolResult messages pass through as the same
    /// object; the role read says which.
    Same(Role),
    /// Not sent (unknown roles, bash runs excluded from context).
    Dropped,
    /// A user message with this single text block.
    UserText(Pieces<V>),
    /// A custom message whose string content becomes one text block.
    CustomText,
    /// A custom message whose content array is reused as is.
    CustomBlocks,
}

/// `bashExecutionToText`: how a `!command` run reads to the model.
pub fn bash_execution_text<V: View>(message: &V) -> Result<JsStr> {
    bash_execution_pieces(message)?.text()
}

/// [`bash_execution_text`] as its pieces.
pub fn bash_execution_pieces<V: View>(message: &V) -> Result<Pieces<V>> {
    // As in the agents, whose `msg.command` throws only for these.
    if let kind @ (Kind::Null | Kind::Undefined) = message.kind() {
        return Err(Error::type_error(
            "",
            format!("expected a bashExecution message, got {}", kind.describe()),
        ));
    }
    // Each field read as often, and in the order, the agents' template and
    // conditions read it (a getter runs as many times).
    let mut out = Pieces(Vec::with_capacity(8));
    out.lit(Literal::Ran);
    out.value(&message.get(Key::Command)?)?;
    out.lit(Literal::RanEnd);
    if message.get(Key::Output)?.truthy() {
        out.lit(Literal::OutputStart);
        out.value(&message.get(Key::Output)?)?;
        out.lit(Literal::OutputEnd);
    } else {
        out.lit(Literal::NoOutput);
    }
    if message.get(Key::Cancelled)?.truthy() {
        out.lit(Literal::Cancelled);
    } else if message.get(Key::ExitCode)?.kind() != Kind::Null
        && message.get(Key::ExitCode)?.kind() != Kind::Undefined
        && message.get(Key::ExitCode)?.number() != Some(0.0)
    {
        out.lit(Literal::ExitCode);
        out.value(&message.get(Key::ExitCode)?)?;
    }
    if message.get(Key::Truncated)?.truthy() && message.get(Key::FullOutputPath)?.truthy() {
        out.lit(Literal::Truncated);
        out.value(&message.get(Key::FullOutputPath)?)?;
        out.lit(Literal::TruncatedEnd);
    }
    Ok(out)
}

fn wrap_summary<V: View>(message: &V, prefix: Literal, suffix: Literal) -> Result<Pieces<V>> {
    let mut out = Pieces(Vec::with_capacity(3));
    out.lit(prefix);
    out.value(&message.get(Key::Summary)?)?;
    out.lit(suffix);
    Ok(out)
}

/// Whether `convertToLlm` passes a message of `role` on as it is, unread
/// but for its role.
pub fn passes_through(role: Role, keeps_system: bool) -> bool {
    matches!(role, Role::User | Role::Assistant | Role::ToolResult)
        || (keeps_system && role == Role::System)
}

/// Decides one message of `convertToLlm`.
pub fn convert_message<V: View>(message: &V) -> Result<LlmMessage<V>> {
    convert_as(message, role_of(message)?, false)
}

/// Decides one message of `convertToLlm` whose `role` was read as `role`
/// (the message's other fields are read here); `keeps_system` passes a
/// system message through, as a line may.
pub fn convert_as<V: View>(message: &V, role: Role, keeps_system: bool) -> Result<LlmMessage<V>> {
    if passes_through(role, keeps_system) {
        return Ok(LlmMessage::Same(role));
    }
    Ok(match role {
        Role::User | Role::Assistant | Role::ToolResult => LlmMessage::Same(role),
        Role::BashExecution => {
            if message.get(Key::ExcludeFromContext)?.truthy() {
                LlmMessage::Dropped
            } else {
                LlmMessage::UserText(bash_execution_pieces(message)?)
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
            Literal::BranchPrefix,
            Literal::BranchSuffix,
        )?),
        Role::CompactionSummary => LlmMessage::UserText(wrap_summary(
            message,
            Literal::CompactionPrefix,
            Literal::CompactionSuffix,
        )?),
        Role::System | Role::Other => LlmMessage::Dropped,
    })
}

/// Decides one message of `convertToLlm` as `line` does: [`convert_message`],
/// except that a line may pass system messages through. Transcripts never
/// show them, so the message model reads [`convert_message`] itself.
pub fn convert_message_for<V: View>(line: &AgentLine, message: &V) -> Result<LlmMessage<V>> {
    convert_as(message, role_of(message)?, line.convert_keeps_system)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_literal_is_at_its_code() {
        for (i, literal) in Literal::ALL.iter().enumerate() {
            assert_eq!(literal.code(), i as i32);
        }
        let texts: std::collections::HashSet<_> = Literal::ALL.iter().map(|l| l.as_str()).collect();
        assert_eq!(texts.len(), Literal::ALL.len());
        assert_eq!(Literal::BranchSuffix.as_str(), BRANCH_SUMMARY_SUFFIX);
    }
}
