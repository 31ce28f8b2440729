//! V8's `String(x)` for edge values and random bit patterns
//! (`tests/data/number_strings.txt`, written by
//! `scripts/gen-number-strings.mjs`): the oracle for JS Number-to-string.

const CORPUS: &str = include_str!("../data/number_strings.txt");

/// Each value of the corpus with V8's text for it.
pub fn corpus() -> impl Iterator<Item = (f64, &'static str)> {
    CORPUS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (bits, js) = l.split_once(' ').expect("a line is bits, space, text");
            let bits = u64::from_str_radix(bits.trim_start_matches("0x"), 16).expect("hex bits");
            (f64::from_bits(bits), js)
        })
}
