use super::*;

#[test]
fn every_pattern_compiles_and_matches_its_example() {
    assert_eq!(compiled().overflow.len(), OVERFLOW_PATTERNS.len());
    for p in OVERFLOW_PATTERNS {
        assert!(
            is_context_overflow(p.example),
            "{} does not match its example",
            p.source
        );
        assert!(
            is_context_overflow(&p.example.to_uppercase()),
            "{} is case-sensitive",
            p.source
        );
    }
}

#[test]
fn rate_limits_and_other_errors_are_not_overflow() {
    for msg in [
        "ThrottlingException: Too many tokens, please wait before trying again.",
        "429 Too Many Requests",
        "Rate limit reached for requests: too many tokens per minute",
        "Invalid API key",
        "500 Internal Server Error",
        "",
    ] {
        assert!(!is_context_overflow(msg), "{msg:?} taken for overflow");
    }
}

#[test]
fn the_wordings_1_6_pi_ai_takes_for_overflow_are_overflow() {
    // Messages 1.6.0's pi-ai (isContextOverflow) takes for an overflow;
    // each went unrecognised here before (a spec audit sent them through compact()).
    for msg in [
        r#"{"code":"1261","message":"Prompt too long"}"#,
        "Prompt exceeds max length",
        "litellm.ContextWindowExceededError: Context window exceeded",
        "Range of input length should be [1, 30720]",
        "prompt has 40,000 tokens, but the configured context size is 32,768 tokens",
        "OpenAI API error (413): Payload Too Large",
        "413 Request Entity Too Large",
        "Input exceeds the maximum context length (131072)",
        "Requested token count exceeds the model's maximum context length of 131072 tokens",
        "Input length 2 exceeds the maximum allowed input length of 1 token.",
        "the_prompt too long",
    ] {
        assert!(is_context_overflow(msg), "{msg:?} not taken for overflow");
    }
    // A status in the body is no 413 response.
    assert!(!is_context_overflow("500 upstream said 413 somewhere"));
}
