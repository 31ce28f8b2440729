//! JS Number-to-string against V8 itself: `tests/data/number_strings.txt`
//! holds V8's `String(x)` for edge values and random bit patterns
//! (`scripts/gen-number-strings.mjs`), an oracle that shares no code with
//! the formatter. Checked both directly and as `JSON.stringify` prints
//! numbers (`null` for NaN and the infinities).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod number_corpus;

use number_corpus::corpus;
use prime_compaction_core::js::json::{number_to_js_string, stringify, stringify_len, Value};

#[test]
fn number_to_string_is_v8s() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (x, js) in corpus() {
        checked += 1;
        let ours = number_to_js_string(x);
        if ours != js {
            wrong.push(format!("{:#018x}: V8 {js}, ours {ours}", x.to_bits()));
        }
    }
    assert!(checked > 5000, "the corpus holds {checked} values");
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn json_numbers_are_v8s() {
    for (x, js) in corpus() {
        let want = if x.is_finite() { js } else { "null" };
        let printed = stringify(&Value::Number(x)).to_string_lossy().into_owned();
        assert_eq!(printed, want, "bits {:#018x}", x.to_bits());
        assert_eq!(stringify_len(&Value::Number(x)), want.len());
    }
}
