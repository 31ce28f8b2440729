//! Exact token counts of one message: the same fields `estimateTokens`
//! measures in characters (see [`super::tokens`]), counted with a real BPE
//! encoding instead of chars / 4. Each block is counted on its own, as a
//! provider sees it; an image counts what the estimate gives it
//! ([`super::tokens::IMAGE_CHARS`] / 4 = 1200 tokens).
//!
//! Type errors are those of `estimate_tokens`, at the same locations, so
//! switching between the two never changes which inputs are accepted.

use super::error::{Context, Error, Result};
use super::model::{require_object, role_of, Role};
use super::tokenizer::{count_tokens, Encoding};
use super::tokens::IMAGE_CHARS;
use super::view::{Key, Kind, View};

/// What an image counts for, in tokens.
pub const IMAGE_TOKENS: u64 = IMAGE_CHARS.div_ceil(4);

/// Tokens of the string at `value[key]`, which must be a string.
fn str_tokens<V: View>(value: &V, key: Key, encoding: Encoding) -> Result<u64> {
    let v = value.get(key)?;
    let text = v.string().ok_or_else(|| {
        Error::type_error(
            key.as_str(),
            format!("expected a string, got {}", v.kind().describe()),
        )
    })?;
    Ok(count_tokens(&text, encoding)? as u64)
}

/// Tokens of a `string | (TextContent | ImageContent)[]` content value.
pub fn content_tokens<V: View>(content: &V, encoding: Encoding) -> Result<u64> {
    if let Some(text) = content.string() {
        return Ok(count_tokens(&text, encoding)? as u64);
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
    let mut tokens = 0u64;
    for i in 0..len {
        let block_tokens = content.scoped(|| -> Result<u64> {
            let block = content.at(i)?;
            if matches!(block.kind(), Kind::Undefined | Kind::Null) {
                return Err(Error::type_error(
                    "",
                    "expected a content block, got nothing",
                ));
            }
            let ty = block.get(Key::Type)?;
            if ty.str_is("text") {
                let text = block.get(Key::Text)?;
                if !text.truthy() {
                    return Ok(0);
                }
                let text = text.string().ok_or_else(|| {
                    Error::type_error(
                        "text",
                        format!("expected a string, got {}", text.kind().describe()),
                    )
                })?;
                Ok(count_tokens(&text, encoding)? as u64)
            } else if ty.str_is("image") {
                Ok(IMAGE_TOKENS)
            } else {
                Ok(0)
            }
        });
        tokens += block_tokens.within_with(|| format!("[{i}]"))?;
    }
    Ok(tokens)
}

fn assistant_tokens<V: View>(message: &V, encoding: Encoding) -> Result<u64> {
    let content = message.get(Key::Content)?;
    let Some(len) = content.array_len() else {
        return Err(Error::type_error(
            "content",
            format!("expected an array, got {}", content.kind().describe()),
        ));
    };
    let mut tokens = 0u64;
    for i in 0..len {
        let block_tokens = content.scoped(|| -> Result<u64> {
            let block = content.at(i)?;
            require_object(&block)?;
            let ty = block.get(Key::Type)?;
            if ty.str_is("text") {
                str_tokens(&block, Key::Text, encoding)
            } else if ty.str_is("thinking") {
                str_tokens(&block, Key::Thinking, encoding)
            } else if ty.str_is("toolCall") {
                let name = str_tokens(&block, Key::Name, encoding)?;
                let args = block.get(Key::Arguments)?;
                let json = args.json_stringify()?.ok_or_else(|| {
                    Error::type_error(
                        "arguments",
                        format!(
                            "JSON.stringify gives undefined for {}",
                            args.kind().describe()
                        ),
                    )
                })?;
                Ok(name + count_tokens(&json, encoding)? as u64)
            } else {
                Ok(0)
            }
        });
        tokens += block_tokens.within_with(|| format!("content[{i}]"))?;
    }
    Ok(tokens)
}

/// The exact-token counterpart of `estimate_tokens(message)`.
pub fn message_tokens_exact<V: View>(message: &V, encoding: Encoding) -> Result<u64> {
    Ok(match role_of(message)? {
        Role::User | Role::Custom | Role::ToolResult => {
            content_tokens(&message.get(Key::Content)?, encoding).within("content")?
        }
        Role::Assistant => assistant_tokens(message, encoding)?,
        Role::BashExecution => {
            str_tokens(message, Key::Command, encoding)?
                + str_tokens(message, Key::Output, encoding)?
        }
        Role::BranchSummary | Role::CompactionSummary => {
            str_tokens(message, Key::Summary, encoding)?
        }
        Role::Other => 0,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::core::json::{parse, Value};
    use crate::core::tokenizer::count_tokens_str;
    use crate::core::tokens::estimate_tokens;
    use crate::core::value_view::Val;

    fn json(text: &str) -> Value {
        parse(text).unwrap_or_else(|e| panic!("bad test JSON: {e:?}"))
    }

    fn exact(message: &str) -> Result<u64> {
        message_tokens_exact(&Val::new(&json(message)), Encoding::O200kBase)
    }

    fn o200k(text: &str) -> u64 {
        count_tokens_str(text, Encoding::O200kBase).unwrap() as u64
    }

    #[test]
    fn user_string_and_blocks() {
        assert_eq!(
            exact(r#"{"role":"user","content":"Hello, world!"}"#).unwrap(),
            4
        );
        let blocks = r#"{"role":"user","content":[
            {"type":"text","text":"Hello, world!"},
            {"type":"image","data":"AAAA","mimeType":"image/png"},
            {"type":"text","text":""},
            {"type":"other"}]}"#;
        assert_eq!(exact(blocks).unwrap(), 4 + IMAGE_TOKENS);
        // The estimate gives the image the same weight.
        let m = json(blocks);
        assert_eq!(
            estimate_tokens(&Val::new(&m)).unwrap(),
            (13 + 4800u64).div_ceil(4)
        );
    }

    #[test]
    fn assistant_blocks_count_separately() {
        let m = r#"{"role":"assistant","content":[
            {"type":"thinking","thinking":"Let me read the file."},
            {"type":"text","text":"Reading it now."},
            {"type":"toolCall","id":"c1","name":"read","arguments":{"path":"src/main.rs","limit":20}}]}"#;
        let expected = o200k("Let me read the file.")
            + o200k("Reading it now.")
            + o200k("read")
            + o200k(r#"{"path":"src/main.rs","limit":20}"#);
        assert_eq!(exact(m).unwrap(), expected);
    }

    #[test]
    fn bash_summaries_and_others() {
        let bash = r#"{"role":"bashExecution","command":"ls -la","output":"total 0\n"}"#;
        assert_eq!(exact(bash).unwrap(), o200k("ls -la") + o200k("total 0\n"));
        let summary =
            r#"{"role":"compactionSummary","summary":"We fixed the bug.","tokensBefore":10}"#;
        assert_eq!(exact(summary).unwrap(), o200k("We fixed the bug."));
        let branch = r#"{"role":"branchSummary","summary":"x","fromId":"a"}"#;
        assert_eq!(exact(branch).unwrap(), 1);
        assert_eq!(exact(r#"{"role":"somethingElse"}"#).unwrap(), 0);
        let tool = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"fn main() {}"}],"isError":false}"#;
        assert_eq!(exact(tool).unwrap(), o200k("fn main() {}"));
    }

    #[test]
    fn errors_match_the_estimate() {
        for bad in [
            r#"{"role":"user","content":5}"#,
            r#"{"role":"user","content":[null]}"#,
            r#"{"role":"user","content":[{"type":"text","text":5}]}"#,
            r#"{"role":"assistant","content":"text"}"#,
            r#"{"role":"assistant","content":[{"type":"text"}]}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","name":"x"}]}"#,
            r#"{"role":"bashExecution","command":"ls"}"#,
            r#"{"role":"branchSummary"}"#,
            r#"{"role":7}"#,
        ] {
            let v = json(bad);
            let ours = message_tokens_exact(&Val::new(&v), Encoding::O200kBase).unwrap_err();
            let theirs = estimate_tokens(&Val::new(&v)).unwrap_err();
            assert_eq!(ours, theirs, "{bad}");
        }
    }

    #[test]
    fn cl100k_differs_where_the_vocabularies_do() {
        let m = json(r#"{"role":"user","content":"你好，世界"}"#);
        assert_eq!(
            message_tokens_exact(&Val::new(&m), Encoding::O200kBase).unwrap(),
            3
        );
        assert_eq!(
            message_tokens_exact(&Val::new(&m), Encoding::Cl100kBase).unwrap(),
            6
        );
    }
}
