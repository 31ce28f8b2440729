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
