use super::*;
use rustc_hash::FxHasher;

fn hash(key: &TextKey<'_>) -> u64 {
    let mut h = FxHasher::default();
    key.hash(&mut h);
    h.finish()
}

#[test]
fn keys_from_a_string_and_from_its_units_are_equal() {
    let samples: [&[u16]; 6] = [
        &[],
        &[0x61, 0x62],
        &[0xe9],
        &[0xd83d, 0xde42],
        &[0x61, 0xd800, 0x62],
        &[0xdc00],
    ];
    for (i, units) in samples.iter().enumerate() {
        let s = JsStr::from_utf16(units);
        let by_str = TextKey::Str(Cow::Borrowed(&s));
        let by_units = TextKey::Units(units);
        assert_eq!(by_str, by_units, "sample {i}");
        assert_eq!(by_units, by_str, "sample {i}");
        assert_eq!(hash(&by_str), hash(&by_units), "sample {i}");
        for (j, other) in samples.iter().enumerate().filter(|&(j, _)| j != i) {
            let o = JsStr::from_utf16(other);
            assert_ne!(by_units, TextKey::Str(Cow::Borrowed(&o)), "{i} vs {j}");
            assert_ne!(by_str, TextKey::Units(other), "{i} vs {j}");
        }
    }
}
