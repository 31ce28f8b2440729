use super::*;
use std::collections::hash_map::DefaultHasher;

fn h(s: &JsStr) -> u64 {
    let mut st = DefaultHasher::new();
    s.hash(&mut st);
    st.finish()
}

#[test]
fn canonical_forms() {
    let a = JsStr::from_utf16(&[0x61, 0xD83D, 0xDE00]);
    assert!(matches!(a, JsStr::Utf8(_)));
    assert_eq!(a.as_str(), Some("a😀"));
    assert_eq!(a.utf16_len(), 3);
    let lone = JsStr::from_utf16(&[0x61, 0xD83D]);
    assert!(matches!(lone, JsStr::Wtf8(_)));
    assert_eq!(lone.utf16_len(), 2);
    assert_eq!(lone.as_str(), None);
    assert_eq!(lone.to_string_lossy(), "a\u{FFFD}");
    assert_eq!(lone.to_utf16(), vec![0x61, 0xD83D]);
    assert!(JsStr::from_utf16_vec(vec![0xDC00, 0xD800])
        .as_str()
        .is_none());
    assert!(JsStr::empty().is_empty());
}

#[test]
fn lengths() {
    assert_eq!(JsStr::from("").utf16_len(), 0);
    assert_eq!(JsStr::from("abc").utf16_len(), 3);
    assert_eq!(JsStr::from("é€😀").utf16_len(), 4);
    let long = "aé€😀".repeat(37);
    assert_eq!(utf16_len_of_str(&long), long.encode_utf16().count());
}

#[test]
fn equality_and_hash_across_representations() {
    let canonical = JsStr::from("a😀");
    let odd = JsStr::Wtf8(Box::from("a😀".as_bytes()));
    assert_eq!(canonical, odd);
    assert_eq!(h(&canonical), h(&odd));
    assert!(canonical.eq_str("a😀"));
    assert!(odd.eq_str("a😀"));
    assert!(!odd.eq_str("a"));
    let lone = JsStr::from_utf16(&[0xD83D]);
    assert_ne!(lone, JsStr::from("\u{FFFD}"));
}

#[test]
fn ordering_is_utf16_code_unit_order() {
    // U+FF5E (fullwidth tilde) sorts after U+1F600 in JS, before in UTF-8.
    let bmp_high = JsStr::from("\u{FF5E}");
    let astral = JsStr::from("😀");
    assert!(astral < bmp_high);
    assert!("\u{FF5E}" < "😀"); // Rust's own order differs.
    let (a, ab, b) = (JsStr::from("a"), JsStr::from("ab"), JsStr::from("b"));
    assert!(a < ab && ab < b);
    let d7ff = JsStr::from("\u{D7FF}");
    assert!(d7ff < astral);
    // Mixed representations.
    let lone = JsStr::from_utf16(&[0xD83D]); // lone high, sorts before the pair
    assert!(lone < astral);
    assert!(lone < bmp_high);
    assert!(d7ff < lone);
    let mut v: Vec<JsStr> = ["b", "\u{FF5E}", "😀", "a", "", "\u{E000}", "\u{10FFFF}"]
        .iter()
        .map(|s| JsStr::from(*s))
        .collect();
    v.sort();
    // Node: ["b","\uFF5E","😀","a","","\uE000","\u{10FFFF}"].sort()
    let expected = ["", "a", "b", "😀", "\u{10FFFF}", "\u{E000}", "\u{FF5E}"];
    let got: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, expected);
}

#[test]
fn truncation_never_splits_pairs() {
    let s = JsStr::from("ab😀c");
    assert_eq!(s.truncate_utf16(0), "");
    assert_eq!(s.truncate_utf16(2), "ab");
    assert_eq!(s.truncate_utf16(3), "ab");
    assert_eq!(s.truncate_utf16(4), "ab😀");
    assert_eq!(s.truncate_utf16(99), "ab😀c");
    let u = JsStr::from_utf16(&[0xDC00, 0x61, 0xD83D, 0xDE00]);
    assert_eq!(u.truncate_utf16(3).to_utf16(), vec![0xDC00, 0x61]);
    assert_eq!(u.truncate_utf16(1).to_utf16(), vec![0xDC00]);
    assert_eq!(u.truncate_utf16(4), u);
}

#[test]
fn slice_like_js() {
    let s = JsStr::from("ab😀c");
    assert_eq!(s.slice_utf16(1, Some(3)).to_utf16(), vec![0x62, 0xD83D]);
    assert_eq!(s.slice_utf16(3, None).to_utf16(), vec![0xDE00, 0x63]);
    assert_eq!(s.slice_utf16(-2, None).to_utf16(), vec![0xDE00, 0x63]);
    assert_eq!(s.slice_utf16(2, Some(4)), "😀");
    assert_eq!(s.slice_utf16(3, Some(3)), "");
    assert_eq!(s.slice_utf16(4, Some(1)), "");
    assert_eq!(s.slice_utf16(-100, Some(100)), s);
    assert_eq!(s.slice_utf16(0, Some(-1)), "ab😀");
    assert_eq!(s.slice_utf16(i64::MIN, Some(i64::MAX)), s);
    let u = JsStr::from_utf16(&[0xD83D, 0xDE00, 0xDC00]);
    assert_eq!(u.slice_utf16(0, Some(2)), "😀");
    assert_eq!(u.slice_utf16(1, None).to_utf16(), vec![0xDE00, 0xDC00]);
}

#[test]
fn builder() {
    let mut b = Utf16Builder::new();
    b.push_str("x");
    b.push_unit(0xD83D);
    assert_eq!(b.utf16_len(), 2);
    b.push_unit(0xDE00);
    b.push_char('é');
    let s = b.finish();
    assert_eq!(s.as_str(), Some("x😀é"));

    let mut b = Utf16Builder::new();
    b.push_unit(0xD83D);
    b.push_str("a");
    let s = b.finish();
    assert_eq!(s.to_utf16(), vec![0xD83D, 0x61]);

    let mut b = Utf16Builder::new();
    b.push_str("a");
    b.push_unit(0xD83D);
    let s = b.finish();
    assert_eq!(s.to_utf16(), vec![0x61, 0xD83D]);

    let mut b = Utf16Builder::new();
    b.push_js(&JsStr::from_utf16(&[0xDC00]));
    b.push_str("é");
    b.push_unit(0x41);
    assert_eq!(b.finish().to_utf16(), vec![0xDC00, 0xE9, 0x41]);

    // Halves of a pair from two JsStr values join, as in JS.
    let hi = JsStr::from_utf16(&[0xD83D]);
    let lo = JsStr::from_utf16(&[0xDE00]);
    assert_eq!(hi.concat(&lo), "😀");
    assert_eq!(JsStr::from("a").concat(&JsStr::from("b")), "ab");
}

/// Code-unit sequences from an alphabet with every kind of unit: ASCII,
/// two- and three-byte chars, pairs, lone highs and lows (adjacent ones
/// included, which must pair up).
fn unit_strings() -> Vec<Vec<u16>> {
    const ALPHABET: [u16; 9] = [
        0x61, 0x22, 0xE9, 0x65E5, 0xD83D, 0xDE00, 0xDBFF, 0xDC00, 0xFFFD,
    ];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..3000)
        .map(|_| {
            let len = (next() % 9) as usize;
            (0..len).map(|_| ALPHABET[(next() % 9) as usize]).collect()
        })
        .collect()
}

#[test]
fn wtf8_agrees_with_utf16_semantics() {
    let all = unit_strings();
    for u in &all {
        let s = JsStr::from_utf16(u);
        assert_eq!(s.to_utf16(), *u, "{u:x?}");
        assert_eq!(s.utf16_len(), u.len());
        assert_eq!(s.code_units().collect::<Vec<_>>(), *u);
        assert_eq!(matches!(s, JsStr::Wtf8(_)), !is_well_formed_utf16(u));
        assert_eq!(s.to_string_lossy(), String::from_utf16_lossy(u));
        for n in 0..=u.len() + 1 {
            let want = {
                let mut end = n.min(u.len());
                if end > 0
                    && end < u.len()
                    && is_high_surrogate(u[end - 1])
                    && is_low_surrogate(u[end])
                {
                    end -= 1;
                }
                u[..end].to_vec()
            };
            assert_eq!(s.truncate_utf16(n).to_utf16(), want, "{u:x?} cut at {n}");
            assert_eq!(s.code_unit_at(n), u.get(n).copied());
        }
        for from in 0..=u.len() {
            for to in from..=u.len() {
                let got = s.slice_utf16(from as i64, Some(to as i64));
                assert_eq!(got.to_utf16(), u[from..to].to_vec());
            }
        }
        // Two halves joined equal the whole, with the same hash, even
        // when the cut separates a pair.
        let mid = u.len() / 2;
        let joined = JsStr::from_utf16(&u[..mid]).concat(&JsStr::from_utf16(&u[mid..]));
        assert_eq!(joined, s);
        assert_eq!(h(&joined), h(&s));
        let mut b = Utf16Builder::new();
        b.push_js(&JsStr::from_utf16(&u[..mid]));
        b.push_js(&JsStr::from_utf16(&u[mid..]));
        assert_eq!(b.finish(), s);
    }
    for pair in all.windows(2) {
        let (a, b) = (JsStr::from_utf16(&pair[0]), JsStr::from_utf16(&pair[1]));
        assert_eq!(
            a.cmp(&b),
            pair[0].cmp(&pair[1]),
            "{:x?} vs {:x?}",
            pair[0],
            pair[1]
        );
        assert_eq!(a == b, pair[0] == pair[1]);
    }
}

#[test]
fn wtf8_pieces() {
    let s = JsStr::from_utf16(&[0x61, 0xD83D, 0xD83D, 0xDE00, 0xDC00, 0x62]);
    let pieces: Vec<Wtf8Piece<'_>> = s.pieces().collect();
    assert_eq!(
        pieces,
        [
            Wtf8Piece::Str("a"),
            Wtf8Piece::Unit(0xD83D),
            Wtf8Piece::Str("😀"),
            Wtf8Piece::Unit(0xDC00),
            Wtf8Piece::Str("b"),
        ]
    );
    // A lone surrogate costs three bytes, as U+FFFD would in UTF-8.
    assert_eq!(s.stored_len(), 1 + 3 + 4 + 3 + 1);
    // Bytes no constructor makes still decode without a panic.
    let odd = JsStr::Wtf8(Box::from(&[0x61, 0xFF, 0xED][..]));
    assert_eq!(odd.to_utf16(), vec![0x61, 0xFFFD, 0xFFFD]);
}

#[test]
fn debug_and_display() {
    let u = JsStr::from_utf16(&[0x61, 0xD800]);
    assert_eq!(format!("{u:?}"), "\"a\\u{d800}\"");
    assert_eq!(format!("{u}"), "a\u{FFFD}");
    assert_eq!(format!("{:?}", JsStr::from("q\"")), "\"q\\\"\"");
}

#[test]
fn short_text_is_inline_and_no_larger_than_a_box() {
    assert_eq!(
        std::mem::size_of::<JsStr>(),
        std::mem::size_of::<Box<str>>() + 8
    );
    for s in [
        "",
        "a",
        "0123abcd",
        "é",
        "22 bytes exactly: 1234",
        "one byte more: 12345678",
    ] {
        let from_units = JsStr::from_utf16(&s.encode_utf16().collect::<Vec<_>>());
        let boxed = JsStr::from(Box::<str>::from(s));
        for v in [
            JsStr::from_str(s),
            JsStr::from_string(s.to_string()),
            from_units,
            boxed,
        ] {
            let JsStr::Utf8(text) = &v else {
                panic!("{s:?} is well-formed")
            };
            assert_eq!(matches!(text, Utf8Text::Inline(_)), s.len() <= 22, "{s:?}");
            assert_eq!(v.as_str(), Some(s));
            assert_eq!(v, JsStr::from_str(s));
            let hash = |x: &JsStr| {
                use std::hash::{BuildHasher, BuildHasherDefault};
                BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
                    .hash_one(x)
            };
            assert_eq!(hash(&v), hash(&JsStr::Utf8(Utf8Text::Boxed(Box::from(s)))));
        }
    }
}

#[test]
fn an_empty_inline_text_is_filled_in_place_with_short_ascii_only() {
    let units = |s: &str| s.encode_utf16().collect::<Vec<_>>();
    for s in ["", "a", "0123abcd", "22 bytes exactly: 1234"] {
        let mut text = Utf8Text::EMPTY;
        assert!(text.fill_inline_ascii(&units(s)), "{s:?}");
        assert_eq!(JsStr::Utf8(text), JsStr::from_str(s), "{s:?}");
    }
    // Too long, not ASCII (at the start, in the middle, at the end, a lone
    // surrogate), or not empty: false, and the text is as it was.
    for s in ["one byte more: 12345678", "é", "abé", "abcdefgh\u{80}"] {
        let mut text = Utf8Text::EMPTY;
        assert!(!text.fill_inline_ascii(&units(s)), "{s:?}");
        assert_eq!(JsStr::Utf8(text), JsStr::from_str(""), "{s:?}");
    }
    let mut text = Utf8Text::EMPTY;
    assert!(!text.fill_inline_ascii(&[0x61, 0xD800]));
    assert_eq!(JsStr::Utf8(text), JsStr::from_str(""));
    let mut text = Utf8Text::from("ab");
    assert!(!text.fill_inline_ascii(&units("cd")));
    assert_eq!(JsStr::Utf8(text), JsStr::from_str("ab"));
    let mut text = Utf8Text::from("a string too long to be inline");
    assert!(!text.fill_inline_ascii(&units("cd")));
    assert_eq!(&*text, "a string too long to be inline");
}

#[test]
fn push_str_utf16_writes_what_encode_utf16_gives() {
    let mut cases: Vec<String> = [
        "",
        "plain ascii",
        "é",
        "café au lait",
        "😀",
        "a😀b",
        "😀😀x",
        "x€",
        "日本語のテキスト and ascii",
        "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Every mix of ASCII runs and chars of each UTF-8 width, up to five pieces.
    let pieces = ["ab", "é", "€", "😀", "x"];
    for n in 0..pieces.len().pow(5) {
        let (mut k, mut s) = (n, String::new());
        for _ in 0..5 {
            s.push_str(pieces[k % pieces.len()]);
            k /= pieces.len();
        }
        cases.push(s);
    }
    for s in &cases {
        let mut out = vec![7u16];
        push_str_utf16(s, &mut out);
        let want: Vec<u16> = std::iter::once(7).chain(s.encode_utf16()).collect();
        assert_eq!(out, want, "{s:?}");
        let mut via = vec![7u16];
        JsStr::from_str(s).push_utf16_into(&mut via);
        assert_eq!(via, want, "{s:?}");
    }
}
