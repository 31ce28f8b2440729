//! Recognising "the request was larger than the model's context" in a
//! provider's error message, so compaction can retry with less.

use std::sync::OnceLock;

use regex::Regex;

use crate::summary::compact::AnswerUsage;

/// One provider's overflow wording. `example` is a message it really sends;
/// the tests check that each pattern matches its example.
pub struct OverflowPattern {
    pub source: &'static str,
    pub pattern: &'static str,
    pub example: &'static str,
}

/// Overflow messages by provider, case-insensitive.
pub const OVERFLOW_PATTERNS: &[OverflowPattern] = &[
    OverflowPattern {
        source: "Anthropic (tokens)",
        pattern: r"prompt is too long",
        example: "prompt is too long: 213462 tokens > 200000 maximum",
    },
    OverflowPattern {
        source: "Anthropic (request bytes, HTTP 413)",
        pattern: r"request_too_large",
        example: r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
    },
    OverflowPattern {
        source: "Amazon Bedrock",
        pattern: r"input is too long for (the )?requested model",
        example: "ValidationException: Input is too long for requested model.",
    },
    OverflowPattern {
        source: "OpenAI",
        pattern: r"exceeds the context window",
        example: "Your input exceeds the context window of this model. Please adjust your input and try again.",
    },
    OverflowPattern {
        source: "OpenAI (legacy) and compatible proxies",
        pattern: r"maximum context length (is|of) [\d,]+ tokens",
        example: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.",
    },
    OverflowPattern {
        source: "OpenAI error code",
        pattern: r"context[_ ]length[_ ]exceeded",
        example: r#"400 {"error":{"code":"context_length_exceeded"}}"#,
    },
    OverflowPattern {
        source: "Google Gemini",
        pattern: r"input token count.*exceeds the maximum",
        example: "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    },
    OverflowPattern {
        source: "xAI",
        pattern: r"maximum prompt length is \d+",
        example: "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    },
    OverflowPattern {
        source: "Groq",
        pattern: r"reduce the length of the messages",
        example: "Please reduce the length of the messages or completion.",
    },
    OverflowPattern {
        source: "OpenRouter backends",
        pattern: r"maximum allowed input length of [\d,]+ tokens?",
        example: "Input length 140000 exceeds the maximum allowed input length of 131072 tokens.",
    },
    OverflowPattern {
        source: "Together AI",
        pattern: r"is longer than the model'?s context length",
        example: "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
    },
    OverflowPattern {
        source: "GitHub Copilot",
        pattern: r"prompt token count of \d+ exceeds the limit",
        example: "prompt token count of 140000 exceeds the limit of 128000",
    },
    OverflowPattern {
        source: "llama.cpp server",
        pattern: r"exceeds the available context size",
        example: "the request exceeds the available context size, try increasing it",
    },
    OverflowPattern {
        source: "LM Studio",
        pattern: r"greater than the context length",
        example: "The number of tokens to keep from the initial prompt is greater than the context length.",
    },
    OverflowPattern {
        source: "LM Studio (its usual wording)",
        pattern: r"trying to keep the first \d+ tokens when context (the )?overflows",
        example: "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.",
    },
    OverflowPattern {
        source: "vLLM",
        pattern: r"maximum model length is \d+",
        example: "This model's maximum model length is 32768 tokens. However, you requested 40000 tokens.",
    },
    OverflowPattern {
        source: "vLLM (its engine's check)",
        pattern: r"is longer than the maximum model length of \d+",
        example: "The decoder prompt (length 9000) is longer than the maximum model length of 4096.",
    },
    OverflowPattern {
        source: "Hugging Face TGI",
        pattern: r"`?inputs`? tokens \+ `?max_new_tokens`? must be <= \d+",
        example: "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: 9000 `inputs` tokens and 512 `max_new_tokens`",
    },
    OverflowPattern {
        source: "Ollama",
        pattern: r"prompt too long; exceeded (max )?context length",
        example: "prompt too long; exceeded max context length by 1200 tokens",
    },
    OverflowPattern {
        source: "Mistral",
        pattern: r"too large for model with \d+ maximum context length",
        example: "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
    },
    OverflowPattern {
        source: "MiniMax",
        pattern: r"context window exceeds limit",
        example: "invalid params, context window exceeds limit (2013)",
    },
    OverflowPattern {
        source: "Kimi",
        pattern: r"exceeded model token limit",
        example: "Your request exceeded model token limit: 262144 (requested: 300000)",
    },
    OverflowPattern {
        source: "z.ai finish reason",
        pattern: r"model_context_window_exceeded",
        example: "finish_reason: model_context_window_exceeded",
    },
    OverflowPattern {
        source: "Cerebras (status without a body)",
        pattern: r"^4(00|13)\s*(status code)?\s*\(no body\)",
        example: "413 status code (no body)",
    },
    OverflowPattern {
        source: "z.ai",
        pattern: r"prompt too long",
        example: r#"{"code":"1261","message":"Prompt too long"}"#,
    },
    OverflowPattern {
        source: "z.ai (CN endpoint)",
        pattern: r"prompt exceeds max length",
        example: r#"{"code":"1261","message":"Prompt exceeds max length"}"#,
    },
    OverflowPattern {
        source: "LiteLLM (its pre-call check)",
        pattern: r"context window exceeded",
        example: "litellm.ContextWindowExceededError: litellm.BadRequestError: Context Window exceeded for given call.",
    },
    OverflowPattern {
        source: "OpenAI-compatible proxies (LiteLLM, vLLM front ends)",
        pattern: r"exceeds (the )?(model'?s )?maximum context length( of [\d,]+ tokens?|\s*\([\d,]+\))",
        example: "Input length (265330) exceeds model's maximum context length (262144).",
    },
    OverflowPattern {
        source: "DS4 server",
        pattern: r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
        example: "Prompt has 40,000 tokens, but the configured context size is 32,768 tokens",
    },
    OverflowPattern {
        source: "DashScope (Qwen)",
        pattern: r"range of input length should be",
        example: "InvalidParameter: Range of input length should be [1, 30720]",
    },
    OverflowPattern {
        source: "GitHub Copilot (other wordings)",
        pattern: r"exceeds the limit of \d+",
        example: "the prompt exceeds the limit of 128000",
    },
    OverflowPattern {
        source: "HTTP 413 (the request is too large), as an SDK or pi-ai reports it",
        pattern: r"^([\w -]+ API error \(413\):|413(\s|:|$))",
        example: "OpenAI API error (413): Payload Too Large",
    },
    OverflowPattern {
        source: "generic",
        pattern: r"token limit exceeded|too many (input )?tokens",
        example: "Token limit exceeded for this request",
    },
];

/// Errors that mention tokens but are about rate limits or capacity, which
/// a smaller request would not fix.
pub const NOT_OVERFLOW_PATTERNS: &[&str] = &[
    r"rate.?limit",
    r"too many requests",
    r"^(throttling|throttlingexception|service unavailable)\b",
    r"please wait before trying again",
];

struct Compiled {
    overflow: Vec<Regex>,
    not_overflow: Vec<Regex>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let build = |p: &str| Regex::new(&format!("(?i){p}")).ok();
        Compiled {
            overflow: OVERFLOW_PATTERNS
                .iter()
                .filter_map(|p| build(p.pattern))
                .collect(),
            not_overflow: NOT_OVERFLOW_PATTERNS
                .iter()
                .filter_map(|p| build(p))
                .collect(),
        }
    })
}

/// Whether a `length` stop says the request overflowed: some providers
/// (Xiaomi's MiMo) cut an oversized input to the window and then stop with
/// no output at all, the input (read from the cache or not) filling 99% of
/// the window or more. `usage` counts missing where they are not numbers
/// (the sum is then no number, and no overflow); an unknown window tells nothing.
pub fn fills_the_window(usage: &AnswerUsage, context_window: f64) -> bool {
    let input = usage.input.unwrap_or(f64::NAN) + usage.cache_read.unwrap_or(f64::NAN);
    context_window > 0.0 && usage.output == Some(0.0) && input >= context_window * 0.99
}

/// Whether an error message says the request overflowed the context window.
pub fn is_context_overflow(error_message: &str) -> bool {
    let c = compiled();
    !c.not_overflow.iter().any(|r| r.is_match(error_message))
        && c.overflow.iter().any(|r| r.is_match(error_message))
}

#[cfg(test)]
mod tests;
