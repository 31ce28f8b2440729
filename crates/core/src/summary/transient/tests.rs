use super::*;

fn retryable(message: &str) -> bool {
    is_retryable(Some(&JsStr::from_str(message)))
}

fn units(units: &[u16]) -> bool {
    is_retryable(Some(&JsStr::from_utf16(units)))
}

#[test]
fn every_alternative_compiles() {
    let p = patterns();
    assert!(p.non_retryable.is_some());
    assert!(p.retryable.is_some());
    for alternative in NON_RETRYABLE.iter().chain(RETRYABLE) {
        assert!(Regex::new(alternative).is_ok(), "{alternative}");
    }
}

#[test]
fn transient_errors_are_retried() {
    for message in [
        "terminated",
        "socket hang up",
        "Connection error.: other side closed (UND_ERR_SOCKET)",
        "Stream ended without finish_reason",
        "500: {\"message\":\"boom\"}",
        "429 Too Many Requests",
        "Overloaded",
        "RATE LIMIT reached",
        "The service is temporarily unavailable",
        "request to https://oauth2.googleapis.com/token failed, reason: ",
        "read ECONNRESET",
        "connect ETIMEDOUT 1.2.3.4:443",
        "HTTP/2 stream failed",
        "http2 stream failed",
        "Server requested 120s retry delay (max: 60s)",
        "request timed out",
        "time out",
        "Responses websocket connection limit reached",
    ] {
        assert!(retryable(message), "{message}");
    }
}

#[test]
fn deterministic_errors_are_not() {
    for message in [
        "",
        "Invalid API key",
        "insufficient_quota 429",
        "429 quota exceeded for this month",
        "billing hard limit: 503",
        "{\"code\": \"1308\", \"message\": \"timeout\"}",
        "{\"code\":1308,\"msg\":\"overloaded\"}",
        "prompt is too long: 213462 tokens > 200000 maximum",
        "Your input exceeds the context window of this model",
        // Status codes inside longer words or numbers.
        "request id a429b",
        "wrote 15003 bytes",
        "x500",
        "5000",
        "ECONNRESET_X",
        "xECONNRESET",
        "_EPIPE",
    ] {
        assert!(!retryable(message), "{message}");
    }
    // Not followed by a digit: code 1308 is then the plan limit.
    assert!(retryable("{\"code\":13080,\"msg\":\"overloaded\"}"));
    assert!(!is_retryable(None));
}

#[test]
fn lookarounds_see_neighbours_as_js_does() {
    assert!(retryable("(503)"));
    assert!(retryable("503"));
    assert!(retryable("status 503."));
    assert!(retryable("-ECONNREFUSED-"));
    // Case-insensitive classes: a letter next to the code blocks it either way.
    assert!(!retryable("A503"));
    assert!(!retryable("503Z"));
    assert!(!retryable("EPIPEs"));
    // A non-ASCII neighbour is no letter to JS.
    assert!(retryable("é503é"));
}

#[test]
fn unicode_is_read_as_js_reads_it_without_the_u_flag() {
    // `.` steps over one UTF-16 unit: an emoji is two.
    assert!(!retryable("rate😀limit"));
    assert!(retryable("rateélimit"));
    // `.` stops at line terminators, \r and U+2028 included.
    assert!(!retryable("rate\rlimit"));
    assert!(!retryable("rate\u{2028}limit"));
    assert!(!retryable("rate\nlimit"));
    assert!(retryable("rate\u{a0}limit"));
    // Long s and the Kelvin sign are not `s` and `k` to JS.
    assert!(!retryable("\u{17f}ocket hang up"));
    assert!(!retryable("networ\u{212a} error"));
    // `\S+` covers any non-space unit; `\s` covers JS's spaces outside ASCII.
    assert!(retryable("request to ☃.example failed, reason:"));
    assert!(!retryable("request to a\u{3000}b failed, reason:"));
    // U+FEFF is white space to JS, U+0085 is not.
    assert!(retryable("{\"code\"\u{feff}:\u{85}1308} overloaded"));
    assert!(!retryable("{\"code\"\u{feff}:\u{a0}1308} overloaded"));
    // Lone surrogates are units like any other.
    assert!(units(&[
        0xD800,
        b't' as u16,
        b'e' as u16,
        b'r' as u16,
        b'm' as u16,
        b'i' as u16,
        b'n' as u16,
        b'a' as u16,
        b't' as u16,
        b'e' as u16,
        b'd' as u16
    ]));
    assert!(!units(&[
        b'r' as u16,
        b'a' as u16,
        b't' as u16,
        b'e' as u16,
        0xD800,
        0xDC00,
        b'l' as u16,
        b'i' as u16,
        b'm' as u16,
        b'i' as u16,
        b't' as u16
    ]));
}

fn fields(max_retries: Primitive, base: Primitive, cap: Primitive) -> RetryPolicy {
    RetryPolicy::from_fields(&max_retries, &base, &cap)
}

fn numbers(max_retries: f64, base: f64) -> RetryPolicy {
    fields(
        Primitive::Number(max_retries),
        Primitive::Number(base),
        Primitive::Undefined,
    )
}

fn policy(max_retries: f64, base: f64) -> Option<RetryPolicy> {
    Some(numbers(max_retries, base))
}

#[test]
fn delays_double_without_jitter_and_stop_at_the_cap() {
    let p = numbers(10.0, 2000.0);
    let delays: Vec<f64> = (1..=7).map(|a| p.delay_ms(f64::from(a))).collect();
    assert_eq!(
        delays,
        [2000.0, 4000.0, 8000.0, 16000.0, 32000.0, 60000.0, 60000.0]
    );
    // A product that is not a safe integer counts as the largest one, then the cap.
    assert_eq!(numbers(3.0, 2.5).delay_ms(1.0), 60000.0);
    assert_eq!(numbers(3.0, 1.0).delay_ms(2000.0), 60000.0);
    let three = || Primitive::Number(3.0);
    let missing_base = fields(three(), Primitive::Undefined, Primitive::Undefined);
    assert_eq!(missing_base.delay_ms(1.0), 60000.0);
    let capped = fields(three(), Primitive::Number(100.0), Primitive::Number(150.0));
    assert_eq!((capped.delay_ms(1.0), capped.delay_ms(2.0)), (100.0, 150.0));
    let nan_cap = fields(
        three(),
        Primitive::Number(100.0),
        Primitive::Number(f64::NAN),
    );
    assert!(nan_cap.delay_ms(1.0).is_nan());
    let null_cap = fields(three(), Primitive::Null, Primitive::Null);
    assert_eq!(null_cap.delay_ms(1.0), 0.0);
}

#[test]
fn policy_fields_read_as_js_arithmetic_reads_them() {
    let s = || Primitive::String(JsStr::from_str(" 5 "));
    let p = fields(s(), s(), Primitive::Undefined);
    assert_eq!((p.max_retries, p.base_delay_ms), (5.0, 5.0));
    let one = || Primitive::Number(1.0);
    assert_eq!(
        fields(Primitive::Null, one(), Primitive::Undefined).max_retries,
        0.0
    );
    // Where pi-ai would retry forever, the bound.
    for unbounded in [
        Primitive::Undefined,
        Primitive::Number(f64::NAN),
        Primitive::Number(f64::INFINITY),
        Primitive::String(JsStr::from_str("many")),
        Primitive::Other,
    ] {
        let p = fields(unbounded, one(), Primitive::Undefined);
        assert_eq!(p.max_retries, UNBOUNDED_RETRIES_BOUND);
    }
    let never = fields(
        Primitive::Number(f64::NEG_INFINITY),
        one(),
        Primitive::Undefined,
    );
    assert_eq!(never.max_retries, f64::NEG_INFINITY);
}

/// `on_answer_asked` for an answer that asks for no delay.
fn on_answer(r: &mut RetryRun, stop: Stop, message: Option<&JsStr>) -> Step {
    match r.on_answer_asked(stop, message, || Ok::<_, std::convert::Infallible>(None)) {
        Ok(step) => step,
        Err(never) => match never {},
    }
}

/// Runs a scripted sequence of error answers ("" for a success) and records the steps.
fn run(policy: Option<RetryPolicy>, answers: &[(Stop, &str)]) -> Vec<Step> {
    let mut r = RetryRun::new(policy, false);
    let mut steps = Vec::new();
    for &(stop, message) in answers {
        let message = JsStr::from_str(message);
        let step = on_answer(&mut r, stop, Some(&message).filter(|m| !m.is_empty()));
        steps.push(step);
        if let Step::Return(_) = step {
            break;
        }
    }
    steps
}

fn sched(attempt: f64, max_attempts: f64, delay_ms: f64) -> Step {
    Step::Retry(Scheduled {
        attempt,
        max_attempts,
        delay_ms,
    })
}

#[test]
fn the_sequences_pi_ai_runs() {
    let p = policy(3.0, 5.0);
    // terminated, socket hang up, then a summary.
    assert_eq!(
        run(
            p,
            &[
                (Stop::Error, "terminated"),
                (Stop::Error, "socket hang up"),
                (Stop::Finished, "")
            ]
        ),
        [
            sched(1.0, 3.0, 5.0),
            sched(2.0, 3.0, 10.0),
            Step::Return(Some(Finished::Succeeded { attempt: 2.0 }))
        ]
    );
    // The quota wins over the 429: one call, no callbacks.
    assert_eq!(
        run(p, &[(Stop::Error, "insufficient_quota 429")]),
        [Step::Return(None)]
    );
    // Exhaustion.
    assert_eq!(
        run(
            policy(2.0, 5.0),
            &[
                (Stop::Error, "overloaded"),
                (Stop::Error, "overloaded"),
                (Stop::Error, "overloaded")
            ]
        ),
        [
            sched(1.0, 2.0, 5.0),
            sched(2.0, 2.0, 10.0),
            Step::Return(Some(Finished::Failed { attempt: 2.0 }))
        ]
    );
    // A different, deterministic error after a retry ends it.
    assert_eq!(
        run(
            p,
            &[
                (Stop::Error, "terminated"),
                (Stop::Error, "Invalid API key")
            ]
        ),
        [
            sched(1.0, 3.0, 5.0),
            Step::Return(Some(Finished::Failed { attempt: 1.0 }))
        ]
    );
    // An aborted answer after a retry.
    assert_eq!(
        run(p, &[(Stop::Error, "terminated"), (Stop::Aborted, "")]),
        [
            sched(1.0, 3.0, 5.0),
            Step::Return(Some(Finished::Aborted { attempt: 1.0 }))
        ]
    );
    // A length stop is no error to the retry loop.
    assert_eq!(run(p, &[(Stop::Length, "")]), [Step::Return(None)]);
    // No policy, or a disabled one: the first answer, whatever it is.
    assert_eq!(
        run(None, &[(Stop::Error, "terminated")]),
        [Step::Return(None)]
    );
}

#[test]
fn aborts_while_waiting_or_calling() {
    let mut r = RetryRun::new(policy(3.0, 1000.0), false);
    assert_eq!(r.on_call_aborted(), None);
    let msg = JsStr::from_str("terminated");
    assert_eq!(
        on_answer(&mut r, Stop::Error, Some(&msg)),
        sched(1.0, 3.0, 1000.0)
    );
    assert_eq!(r.on_wait_aborted(), Finished::Failed { attempt: 1.0 });
    assert_eq!(
        r.on_call_aborted(),
        Some(Finished::Aborted { attempt: 1.0 })
    );
}

#[test]
fn a_delay_the_server_asks_for_is_waited_instead_up_to_the_cap() {
    let msg = JsStr::from_str("429 Too many requests");
    let asked = |ms: Option<f64>| move || Ok::<_, ()>(ms);
    let mut r = RetryRun::new(policy(3.0, 2000.0), false);
    // Shorter or longer than the policy's delay, 0, or negative (past): as asked, at least 0.
    assert_eq!(
        r.on_answer_asked(Stop::Error, Some(&msg), asked(Some(20_000.0))),
        Ok(sched(1.0, 3.0, 20_000.0))
    );
    assert_eq!(
        r.on_answer_asked(Stop::Error, Some(&msg), asked(Some(-5.0))),
        Ok(sched(2.0, 3.0, 0.0))
    );
    // None, NaN or an infinity: the policy's own delay for that attempt.
    assert_eq!(
        r.on_answer_asked(Stop::Error, Some(&msg), asked(Some(f64::NAN))),
        Ok(sched(3.0, 3.0, 8000.0))
    );
    // Retries spent: not asked at all.
    let never = || -> Result<Option<f64>, ()> { panic!("asked with no retry due") };
    assert_eq!(
        r.on_answer_asked(Stop::Error, Some(&msg), never),
        Ok(Step::Return(Some(Finished::Failed { attempt: 3.0 })))
    );
    // Nor for a success, an abort or an error that is not retried.
    let mut plain = RetryRun::new(policy(3.0, 1.0), false);
    let bad = JsStr::from_str("400 bad model");
    for (stop, m) in [
        (Stop::Finished, None),
        (Stop::Aborted, None),
        (Stop::Error, Some(&bad)),
    ] {
        assert_eq!(
            plain.on_answer_asked(stop, m, never),
            Ok(Step::Return(None))
        );
    }
    // Over the cap (60 s by default): no retry, as the first answer or after one.
    let mut first = RetryRun::new(policy(3.0, 1.0), false);
    assert_eq!(
        first.on_answer_asked(Stop::Error, Some(&msg), asked(Some(60_001.0))),
        Ok(Step::Return(None))
    );
    let mut later = RetryRun::new(policy(3.0, 1.0), false);
    assert_eq!(
        later.on_answer_asked(Stop::Error, Some(&msg), asked(Some(60_000.0))),
        Ok(sched(1.0, 3.0, 60_000.0))
    );
    assert_eq!(
        later.on_answer_asked(Stop::Error, Some(&msg), asked(Some(f64::INFINITY))),
        Ok(sched(2.0, 3.0, 2.0))
    );
    assert_eq!(
        later.on_answer_asked(Stop::Error, Some(&msg), asked(Some(1e9))),
        Ok(Step::Return(Some(Finished::Failed { attempt: 2.0 })))
    );
    // A cap of 0 or less caps nothing the server asks for, up to the
    // longest wait a JS timer makes.
    let uncapped = Some(fields(
        Primitive::Number(3.0),
        Primitive::Number(1.0),
        Primitive::Number(0.0),
    ));
    let mut r = RetryRun::new(uncapped, false);
    assert_eq!(
        r.on_answer_asked(Stop::Error, Some(&msg), asked(Some(MAX_TIMER_MS))),
        Ok(sched(1.0, 3.0, MAX_TIMER_MS))
    );
    assert_eq!(
        r.on_answer_asked(Stop::Error, Some(&msg), asked(Some(MAX_TIMER_MS + 1.0))),
        Ok(Step::Return(Some(Finished::Failed { attempt: 1.0 })))
    );
    // What reading it throws goes to the caller, and no retry is counted.
    let mut r = RetryRun::new(policy(3.0, 1.0), false);
    assert_eq!(
        r.on_answer_asked(Stop::Error, Some(&msg), || Err("getter")),
        Err("getter")
    );
    assert_eq!(r.on_call_aborted(), None);
}

#[test]
fn an_overflow_ends_a_compaction_run_at_once() {
    // Retryable words in an overflow message: pi-ai would send the same request again.
    let message = JsStr::from_str("This model's maximum context length is 500 tokens. However, your messages resulted in 900 tokens.");
    assert!(is_retryable(Some(&message)));
    let mut plain = RetryRun::new(policy(3.0, 1.0), false);
    assert_eq!(
        on_answer(&mut plain, Stop::Error, Some(&message)),
        sched(1.0, 3.0, 1.0)
    );
    let mut compaction = RetryRun::new(policy(3.0, 1.0), true);
    assert_eq!(
        on_answer(&mut compaction, Stop::Error, Some(&message)),
        Step::Return(None)
    );
}

#[test]
fn the_subject_keeps_one_char_per_unit() {
    let s = JsStr::from_utf16(&[b'a' as u16, 0x0D, 0xE9, 0xD83D, 0xDE00, 0xA0, 0x2029]);
    assert_eq!(
        js_regex_subject(&s),
        "a\n\u{4e00}\u{4e00}\u{4e00}\u{3000}\n"
    );
}
