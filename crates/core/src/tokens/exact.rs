//! Exact token counts of one message: the same fields `estimateTokens`
//! measures in characters (see [`crate::tokens::estimate`]), counted with a real BPE
//! encoding instead of chars / 4. Each block is counted on its own, as a
//! provider sees it; an image counts what the estimate gives it
//! ([`crate::tokens::estimate::IMAGE_CHARS`] / 4 = 1200 tokens).
//!
//! Type errors are those of `estimate_tokens`, at the same locations, so
//! switching between the two never changes which inputs are accepted.

use crate::agent_line::TokenRules;
use crate::error::Result;
use crate::js::string::JsStr;
use crate::js::view::View;
use crate::tokens::estimate::{measure_message, Measure, IMAGE_CHARS};
use crate::tokens::tokenizer::{count_tokens, Encoding};

/// What an image counts for, in tokens.
pub const IMAGE_TOKENS: u64 = IMAGE_CHARS.div_ceil(4);

/// Real BPE tokens of each string, counted on its own.
pub struct Tokens(pub Encoding);

impl Measure for Tokens {
    fn text<V: View>(&self, value: &V) -> Result<Option<u64>> {
        match value.string() {
            Some(text) => Ok(Some(count_tokens(&text, self.0)? as u64)),
            None => Ok(None),
        }
    }
    fn json<V: View>(&self, value: &V) -> Result<Option<u64>> {
        match value.json_stringify()? {
            Some(json) => Ok(Some(count_tokens(&json, self.0)? as u64)),
            None => Ok(None),
        }
    }
    fn image(&self) -> u64 {
        IMAGE_TOKENS
    }
    fn literal(&self, text: &str) -> Result<u64> {
        Ok(count_tokens(&JsStr::from_str(text), self.0)? as u64)
    }
}

/// The exact-token counterpart of `estimate_tokens(message)`.
pub fn message_tokens_exact<V: View>(
    message: &V,
    encoding: Encoding,
    rules: &TokenRules,
) -> Result<u64> {
    measure_message(message, &Tokens(encoding), rules)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
