//! The chars/4 token estimate (`estimateTokens`) and usage-based context
//! sizes (`calculateContextTokens`, `estimateContextTokens`).

use crate::agent_line::TokenRules;
use crate::error::{Context, Error, Result};
use crate::js::view::{Key, Kind, View};
use crate::session::measures::{BlockSize, ContentSize};
use crate::session::model::{require_object, role_of, Role};
use crate::tokens::system::measure_system;

/// What an image counts for in the estimate, in characters.
pub const IMAGE_CHARS: u64 = 4800;

/// `Math.ceil(chars / 4)`, exact for every integer below 2^53.
pub fn chars_to_tokens(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// How message text is measured: characters for the estimate, BPE tokens
/// for exact counts. One traversal serves both, so they accept the same
/// inputs and reject the same ones at the same places.
pub trait Measure {
    /// The measure of a string value; `None` when it is not a string.
    fn text<V: View>(&self, value: &V) -> Result<Option<u64>>;
    /// The measure of `JSON.stringify(value)`; `None` where that is `undefined`.
    fn json<V: View>(&self, value: &V) -> Result<Option<u64>>;
    /// What an image block counts for.
    fn image(&self) -> u64;
    /// The measure of a fixed text (a separator a join inserts).
    fn literal(&self, text: &str) -> Result<u64>;
}

/// UTF-16 length, read without copying the string.
pub struct Chars;

impl Measure for Chars {
    fn text<V: View>(&self, value: &V) -> Result<Option<u64>> {
        Ok(value.str_len().map(|n| n as u64))
    }
    fn json<V: View>(&self, value: &V) -> Result<Option<u64>> {
        Ok(value.json_len()?.map(|n| n as u64))
    }
    fn image(&self) -> u64 {
        IMAGE_CHARS
    }
    fn literal(&self, text: &str) -> Result<u64> {
        Ok(crate::js::string::utf16_len_of_str(text) as u64)
    }
}

/// A string field's measure; any other type is a `TypeError`.
pub fn field<V: View, M: Measure>(value: &V, key: Key, m: &M) -> Result<u64> {
    let v = value.get(key)?;
    m.text(&v)?.ok_or_else(|| {
        let got = v.kind().describe();
        Error::type_error(key.as_str(), format!("expected a string, got {got}"))
    })
}

/// A `string | (TextContent | ImageContent)[]` content value.
pub fn measure_content<V: View, M: Measure>(content: &V, m: &M) -> Result<u64> {
    if let Some(n) = m.text(content)? {
        return Ok(n);
    }
    let Some(len) = content.array_len() else {
        let got = content.kind().describe();
        return Err(Error::type_error(
            "",
            format!("expected a string or an array, got {got}"),
        ));
    };
    let mut total = 0u64;
    for i in 0..len {
        total += text_image_block(&content.at(i)?, m).within_with(|| format!("[{i}]"))?;
    }
    Ok(total)
}

/// Characters of a content value (`estimateTokens`' measure).
pub fn content_chars<V: View>(content: &V) -> Result<u64> {
    measure_content(content, &Chars)
}

fn text_image_block<V: View, M: Measure>(block: &V, m: &M) -> Result<u64> {
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
            m.text(&text)?.ok_or_else(|| {
                let got = text.kind().describe();
                Error::type_error("text", format!("expected a string, got {got}"))
            })
        }
        Some(_) => Ok(m.image()),
        None => Ok(0),
    }
}

fn assistant_block<V: View, M: Measure>(block: &V, m: &M) -> Result<u64> {
    require_object(block)?;
    match block
        .get(Key::Type)?
        .str_one_of(&["text", "thinking", "toolCall"])
    {
        Some(0) => field(block, Key::Text, m),
        Some(1) => field(block, Key::Thinking, m),
        Some(_) => {
            let name = field(block, Key::Name, m)?;
            let args = block.get(Key::Arguments)?;
            let json = m.json(&args)?.ok_or_else(|| {
                let got = args.kind().describe();
                Error::type_error(
                    "arguments",
                    format!("JSON.stringify gives undefined for {got}"),
                )
            })?;
            Ok(name + json)
        }
        None => Ok(0),
    }
}

/// Which content a message is measured with.
#[derive(Debug, Clone)]
pub enum Content<V> {
    /// Its own `content`.
    Own,
    /// Its own, a null or missing `content` read as empty (the session
    /// projection's normalisation).
    OwnOrEmpty,
    /// The `replacement.content` of a context edit; a string given to an
    /// assistant message stands for one text block.
    Replaced(V),
}

impl<V: View> Content<V> {
    /// The content value of `message` (of `role`) to read; `None` for empty.
    /// Only user, assistant, tool-result and system messages are normalised.
    pub fn of(self, message: &V, role: Role) -> Result<Option<V>> {
        Ok(match self {
            Content::Own => Some(message.get(Key::Content)?),
            Content::OwnOrEmpty => {
                let c = message.get(Key::Content)?;
                let normalised = matches!(
                    role,
                    Role::User | Role::Assistant | Role::ToolResult | Role::System
                );
                (!(normalised && matches!(c.kind(), Kind::Undefined | Kind::Null))).then_some(c)
            }
            Content::Replaced(c) => Some(c),
        })
    }
}

/// The measure of everything `estimateTokens` looks at in a message.
pub fn measure_message<V: View, M: Measure>(message: &V, m: &M, rules: &TokenRules) -> Result<u64> {
    measure_message_with(message, Content::Own, m, rules)
}

/// [`measure_message`] with the content the session projection gives the message.
pub fn measure_message_with<V: View, M: Measure>(
    message: &V,
    content: Content<V>,
    m: &M,
    rules: &TokenRules,
) -> Result<u64> {
    measure_message_as(message, role_of(message)?, content, m, rules)
}

/// [`measure_message_with`] of a message whose role was read already (as
/// [`role_of`] reads it), so it is not read again.
pub fn measure_message_as<V: View, M: Measure>(
    message: &V,
    role: Role,
    content: Content<V>,
    m: &M,
    rules: &TokenRules,
) -> Result<u64> {
    Ok(match role {
        Role::User | Role::Custom | Role::ToolResult => match content.of(message, role)? {
            Some(c) => measure_content(&c, m).within("content")?,
            None => 0,
        },
        Role::Assistant => {
            let replaced_text =
                matches!(&content, Content::Replaced(c) if c.kind() == Kind::String);
            match content.of(message, role)? {
                Some(c) if replaced_text => m.text(&c)?.unwrap_or(0),
                Some(c) => assistant_content(&c, m).within("content")?,
                None => 0,
            }
        }
        Role::BashExecution => field(message, Key::Command, m)? + field(message, Key::Output, m)?,
        Role::BranchSummary | Role::CompactionSummary => field(message, Key::Summary, m)?,
        Role::System if rules.estimate_system => {
            measure_system(message, content.of(message, role)?.as_ref(), m)?
        }
        Role::System | Role::Other => 0,
    })
}

/// Whether a message of `role` is measured by its `content` alone (so a
/// JS pass's [`ContentSize`] stands for it, [`measured_chars`]).
pub fn measured_by_content(role: Role) -> bool {
    matches!(
        role,
        Role::User | Role::Custom | Role::ToolResult | Role::Assistant
    )
}

/// [`measure_message_as`] with [`Chars`] and the message's own content,
/// from the sizes a JS pass measured (`crate::session::measures`): the
/// same rule on lengths instead of values. `None` where the sizes do not
/// settle it (a role measured by more than its content, a string content
/// of an assistant, which the estimate rejects): the message is then read.
pub fn measured_chars(role: Role, content: ContentSize) -> Option<u64> {
    if !measured_by_content(role) {
        return None;
    }
    let assistant = role == Role::Assistant;
    let blocks = match content {
        ContentSize::Text(n) => return (!assistant).then_some(u64::from(n)),
        ContentSize::Blocks(blocks) => blocks,
    };
    Some(
        blocks
            .iter()
            .map(|block| match (*block, assistant) {
                (BlockSize::Text(n), _) | (BlockSize::Thinking(n), true) => u64::from(n),
                (BlockSize::ToolCall { name, json }, true) => u64::from(name) + u64::from(json),
                (BlockSize::Image, false) => IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
    )
}

fn assistant_content<V: View, M: Measure>(content: &V, m: &M) -> Result<u64> {
    let len = content.expect_array("")?;
    let mut total = 0u64;
    for i in 0..len {
        total += assistant_block(&content.at(i)?, m).within_with(|| format!("[{i}]"))?;
    }
    Ok(total)
}

/// `estimateTokens(message)`: a conservative chars/4 estimate of one message.
pub fn estimate_tokens<V: View>(message: &V, rules: &TokenRules) -> Result<u64> {
    Ok(chars_to_tokens(measure_message(message, &Chars, rules)?))
}

/// How the algorithms count a message's tokens: the reference's chars/4
/// estimate (the default, for parity), or a real BPE encoding (opt-in with
/// the `tokenizer` setting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Counter {
    #[default]
    Estimate,
    Exact(crate::tokens::tokenizer::Encoding),
}

impl Counter {
    /// The tokens of one message (`estimateTokens`, or its exact counterpart).
    pub fn message<V: View>(self, message: &V, rules: &TokenRules) -> Result<u64> {
        self.message_with(message, Content::Own, rules)
    }

    /// [`Counter::message`] of a message whose role was read already.
    pub fn message_as<V: View>(self, message: &V, role: Role, rules: &TokenRules) -> Result<u64> {
        let measure = self.measure(
            |m| measure_message_as(message, role, Content::Own, m, rules),
            |m| measure_message_as(message, role, Content::Own, m, rules),
        )?;
        Ok(self.to_tokens(measure))
    }

    /// The tokens of one message with the content the projection gives it.
    pub fn message_with<V: View>(
        self,
        message: &V,
        content: Content<V>,
        rules: &TokenRules,
    ) -> Result<u64> {
        match self {
            Counter::Estimate => Ok(chars_to_tokens(measure_message_with(
                message, content, &Chars, rules,
            )?)),
            Counter::Exact(encoding) => measure_message_with(
                message,
                content,
                &crate::tokens::exact::Tokens(encoding),
                rules,
            ),
        }
    }

    /// Tokens from a measure taken in characters or in tokens, whichever
    /// this counter measures with.
    pub fn measure<T>(
        self,
        chars: impl FnOnce(&Chars) -> Result<T>,
        tokens: impl FnOnce(&crate::tokens::exact::Tokens) -> Result<T>,
    ) -> Result<T> {
        match self {
            Counter::Estimate => chars(&Chars),
            Counter::Exact(encoding) => tokens(&crate::tokens::exact::Tokens(encoding)),
        }
    }

    /// A measure taken with this counter's [`Measure`], as tokens.
    pub fn to_tokens(self, measure: u64) -> u64 {
        match self {
            Counter::Estimate => chars_to_tokens(measure),
            Counter::Exact(_) => measure,
        }
    }

    /// The tokens of a content value (a custom message's).
    pub fn content<V: View>(self, content: &V) -> Result<u64> {
        match self {
            Counter::Estimate => Ok(chars_to_tokens(content_chars(content)?)),
            Counter::Exact(encoding) => {
                measure_content(content, &crate::tokens::exact::Tokens(encoding))
            }
        }
    }

    /// The tokens of a string field (a summary's).
    pub fn text_field<V: View>(self, value: &V, key: Key) -> Result<u64> {
        match self {
            Counter::Estimate => Ok(chars_to_tokens(field(value, key, &Chars)?)),
            Counter::Exact(encoding) => field(value, key, &crate::tokens::exact::Tokens(encoding)),
        }
    }
}

/// The usage of an assistant message that counts for context size: not
/// aborted, not errored, present and (where the line says so) not totalling
/// 0. Returns `None` for every other message.
pub fn valid_usage<V: View>(message: &V, rules: &TokenRules) -> Result<Option<V>> {
    if role_of(message)? != Role::Assistant {
        return Ok(None);
    }
    valid_assistant_usage(message, rules)
}

/// [`valid_usage`] of a message whose role was read already, and is `assistant`.
pub fn valid_assistant_usage<V: View>(message: &V, rules: &TokenRules) -> Result<Option<V>> {
    // `"usage" in message` is implied by the truthiness test on `usage` below.
    let stop = message.get(Key::StopReason)?;
    if stop.str_one_of(&["aborted", "error"]).is_some() {
        return Ok(None);
    }
    let usage = message.get(Key::Usage)?;
    if !usage.truthy() {
        return Ok(None);
    }
    if rules.skip_zero_usage && !usage_counts(context_tokens(&usage).within("usage")?, rules) {
        return Ok(None);
    }
    Ok(Some(usage))
}

/// Whether a usage of `tokens` counts: 1.6 passes over one whose
/// `calculateContextTokens(usage) > 0` fails (NaN and 0 alike).
fn usage_counts(tokens: f64, rules: &TokenRules) -> bool {
    !rules.skip_zero_usage || tokens > 0.0
}

/// [`valid_assistant_usage`] and [`context_tokens`] on an assistant's
/// usage read ahead as numbers (not aborted, not errored, an object): the
/// tokens it counts for, or `None` where it is passed over.
pub fn usage_tokens(total: f64, parts: [f64; 4], rules: &TokenRules) -> Option<f64> {
    let tokens = if total != 0.0 && !total.is_nan() {
        total
    } else {
        parts[0] + parts[1] + parts[2] + parts[3]
    };
    usage_counts(tokens, rules).then_some(tokens)
}

/// `calculateContextTokens(usage)`: `totalTokens` when truthy, else the sum of the parts.
pub fn context_tokens<V: View>(usage: &V) -> Result<f64> {
    require_object(usage)?;
    let total = usage.get(Key::TotalTokens)?;
    // A number is asked for first: one read where it is one.
    match total.number() {
        Some(n) if n != 0.0 && !n.is_nan() => return Ok(n),
        Some(_) => {}
        None => match total.kind() {
            Kind::Number | Kind::Undefined | Kind::Null => {}
            other => {
                return Err(Error::type_error(
                    "totalTokens",
                    format!("expected a number, got {}", other.describe()),
                ))
            }
        },
    }
    let mut sum = crate::session::model::number_or_nan(usage, Key::Input)?;
    for key in [Key::Output, Key::CacheRead, Key::CacheWrite] {
        sum += crate::session::model::number_or_nan(usage, key)?;
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
pub fn estimate_context_tokens<V: View>(
    messages: &V,
    rules: &TokenRules,
) -> Result<ContextEstimate> {
    use crate::tokens::projected::{context_estimate, MessageArray};
    context_estimate(&MessageArray::new(messages)?, Counter::Estimate, rules)
}
