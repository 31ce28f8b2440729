//! The chars/4 token estimate (`estimateTokens`) and usage-based context
//! sizes (`calculateContextTokens`, `estimateContextTokens`).

use super::error::{Context, Error, Result};
use super::model::{require_object, role_of, str_len_of, Role};
use super::view::{Key, Kind, View};

/// What an image counts for in the estimate, in characters.
pub const IMAGE_CHARS: u64 = 4800;

/// `Math.ceil(chars / 4)`, exact for every integer below 2^53.
pub fn chars_to_tokens(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// Characters of a `string | (TextContent | ImageContent)[]` content value.
pub fn content_chars<V: View>(content: &V) -> Result<u64> {
    if let Some(len) = content.str_len() {
        return Ok(len as u64);
    }
    let Some(len) = content.array_len() else {
        return Err(Error::type_error(
            "",
            format!(
                "expected a string or an array, got {}",
                content.kind().describe()
            ),
        ));
    };
    let mut chars = 0u64;
    for i in 0..len {
        chars += text_image_block_chars(&content.at(i)?).within_with(|| format!("[{i}]"))?;
    }
    Ok(chars)
}

fn text_image_block_chars<V: View>(block: &V) -> Result<u64> {
    if matches!(block.kind(), Kind::Undefined | Kind::Null) {
        return Err(Error::type_error(
            "",
            "expected a content block, got nothing",
        ));
    }
    // One read of `type`, matched against both block kinds that count.
    match block.get(Key::Type)?.str_one_of(&["text", "image"]) {
        Some(0) => {
            let text = block.get(Key::Text)?;
            if !text.truthy() {
                return Ok(0);
            }
            text.str_len().map(|n| n as u64).ok_or_else(|| {
                let got = text.kind().describe();
                Error::type_error("text", format!("expected a string, got {got}"))
            })
        }
        Some(_) => Ok(IMAGE_CHARS),
        None => Ok(0),
    }
}

fn assistant_chars<V: View>(message: &V) -> Result<u64> {
    let content = message.get(Key::Content)?;
    let Some(len) = content.array_len() else {
        return Err(Error::type_error(
            "content",
            format!("expected an array, got {}", content.kind().describe()),
        ));
    };
    let mut chars = 0u64;
    for i in 0..len {
        chars += assistant_block_chars(&content.at(i)?).within_with(|| format!("content[{i}]"))?;
    }
    Ok(chars)
}

fn assistant_block_chars<V: View>(block: &V) -> Result<u64> {
    require_object(block)?;
    match block
        .get(Key::Type)?
        .str_one_of(&["text", "thinking", "toolCall"])
    {
        Some(0) => Ok(str_len_of(block, Key::Text)? as u64),
        Some(1) => Ok(str_len_of(block, Key::Thinking)? as u64),
        Some(_) => {
            let name = str_len_of(block, Key::Name)? as u64;
            let args = block.get(Key::Arguments)?;
            let json = args.json_len()?.ok_or_else(|| {
                let got = args.kind().describe();
                Error::type_error(
                    "arguments",
                    format!("JSON.stringify gives undefined for {got}"),
                )
            })?;
            Ok(name + json as u64)
        }
        None => Ok(0),
    }
}

/// `estimateTokens(message)`: a conservative chars/4 estimate of one message.
pub fn estimate_tokens<V: View>(message: &V) -> Result<u64> {
    let role = role_of(message)?;
    let chars = match role {
        Role::User | Role::Custom | Role::ToolResult => {
            content_chars(&message.get(Key::Content)?).within("content")?
        }
        Role::Assistant => assistant_chars(message)?,
        Role::BashExecution => {
            str_len_of(message, Key::Command)? as u64 + str_len_of(message, Key::Output)? as u64
        }
        Role::BranchSummary | Role::CompactionSummary => str_len_of(message, Key::Summary)? as u64,
        Role::Other => 0,
    };
    Ok(chars_to_tokens(chars))
}

/// The usage of an assistant message that counts for context size: not
/// aborted, not errored, and present. Returns `None` for every other message.
pub fn valid_usage<V: View>(message: &V) -> Result<Option<V>> {
    // `"usage" in message` is implied by the truthiness test on `usage` below.
    if role_of(message)? != Role::Assistant {
        return Ok(None);
    }
    let stop = message.get(Key::StopReason)?;
    if stop.str_is("aborted") || stop.str_is("error") {
        return Ok(None);
    }
    let usage = message.get(Key::Usage)?;
    Ok(if usage.truthy() { Some(usage) } else { None })
}

/// `calculateContextTokens(usage)`: `totalTokens` when truthy, else the sum of the parts.
pub fn context_tokens<V: View>(usage: &V) -> Result<f64> {
    require_object(usage)?;
    let total = usage.get(Key::TotalTokens)?;
    match total.kind() {
        Kind::Number | Kind::Undefined | Kind::Null => {}
        other => {
            return Err(Error::type_error(
                "totalTokens",
                format!("expected a number, got {}", other.describe()),
            ))
        }
    }
    if total.truthy() {
        return Ok(total.number().unwrap_or(f64::NAN));
    }
    let mut sum = super::model::number_or_nan(usage, Key::Input)?;
    for key in [Key::Output, Key::CacheRead, Key::CacheWrite] {
        sum += super::model::number_or_nan(usage, key)?;
    }
    Ok(sum)
}

/// The result of `estimateContextTokens`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextEstimate {
    pub tokens: f64,
    pub usage_tokens: f64,
    pub trailing_tokens: f64,
    pub last_usage_index: Option<usize>,
}

/// Context size from the last valid usage plus estimates of what follows it.
/// `usage_at(i)` gives message `i`'s valid usage tokens, `tokens_at(i)` its estimate.
pub fn estimate_context<U, T>(
    count: usize,
    mut usage_at: U,
    mut tokens_at: T,
) -> Result<ContextEstimate>
where
    U: FnMut(usize) -> Result<Option<f64>>,
    T: FnMut(usize) -> Result<u64>,
{
    let mut last = None;
    for i in (0..count).rev() {
        if let Some(tokens) = usage_at(i)? {
            last = Some((i, tokens));
            break;
        }
    }
    let (start, usage_tokens) = match last {
        Some((i, tokens)) => (i + 1, tokens),
        None => (0, 0.0),
    };
    let mut trailing = 0u64;
    for i in start..count {
        trailing += tokens_at(i)?;
    }
    let trailing = trailing as f64;
    Ok(ContextEstimate {
        tokens: usage_tokens + trailing,
        usage_tokens,
        trailing_tokens: trailing,
        last_usage_index: last.map(|(i, _)| i),
    })
}

/// `estimateContextTokens(messages)` over an array of messages.
pub fn estimate_context_tokens<V: View>(messages: &V) -> Result<ContextEstimate> {
    let Some(count) = messages.array_len() else {
        return Err(Error::type_error(
            "",
            format!("expected an array, got {}", messages.kind().describe()),
        ));
    };
    estimate_context(
        count,
        |i| {
            messages
                .scoped(|| {
                    let message = messages.at(i)?;
                    valid_usage(&message)?
                        .map(|u| context_tokens(&u).within("usage"))
                        .transpose()
                })
                .within_with(|| format!("[{i}]"))
        },
        |i| {
            messages
                .scoped(|| estimate_tokens(&messages.at(i)?))
                .within_with(|| format!("[{i}]"))
        },
    )
}
