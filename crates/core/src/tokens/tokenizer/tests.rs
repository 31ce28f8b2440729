use super::*;

fn counts(text: &str) -> (usize, usize) {
    (
        count_tokens_str(text, Encoding::O200kBase).unwrap(),
        count_tokens_str(text, Encoding::Cl100kBase).unwrap(),
    )
}

/// Every ordinary token of each encoding, and no special one: the rank
/// files hold ranks 0..=199997 and 0..=100255.
#[test]
fn rank_tables_hold_every_ordinary_token() {
    for (encoding, tokens) in [
        (Encoding::O200kBase, 199_998),
        (Encoding::Cl100kBase, 100_256),
    ] {
        let ranks = ranks(encoding).unwrap();
        assert_eq!(ranks.map.len(), tokens, "{}", encoding.name());
        assert!(!ranks.map.contains_key(b"<|endoftext|>".as_slice()));
        assert!(ranks.map.values().all(|&r| (r as usize) < tokens));
    }
}

/// Expected values from js-tiktoken 1.0.21, `encode(text, [], []).length`.
#[test]
fn known_counts() {
    let cases: &[(&str, usize, usize)] = &[
        ("", 0, 0),
        ("Hello, world!", 4, 4),
        ("你好，世界", 3, 6),
        ("The quick brown fox jumps over the lazy dog.", 10, 10),
        ("fn main() {\n    println!(\"hi\");\n}\n", 10, 10),
        ("<|endoftext|>", 7, 7),
        ("\u{1F600}", 1, 2),
        ("    \n\n\t  x  ", 4, 4),
        ("I'M won't they'LL", 6, 7),
        ("\u{17F}'\u{17F} '\u{17F}", 5, 8),
        ("1234567", 3, 3),
        ("x\u{85}y\u{FEFF}z", 6, 6),
        ("\u{A0}\u{A0}a", 3, 3),
        (&"a".repeat(87), 12, 12),
        ("\u{1C5}ungla \u{1C4}", 7, 7),
    ];
    for &(text, o200k, cl100k) in cases {
        assert_eq!(counts(text), (o200k, cl100k), "{text:?}");
    }
}

#[test]
fn lone_surrogates_count_as_replacement_chars() {
    let lone = |units: &[u16]| JsStr::from_utf16(units);
    let o200k = |s: &JsStr| count_tokens(s, Encoding::O200kBase).unwrap();
    // "a\uD83Db", "\uDE00\uD83D": 3 and 1 in js-tiktoken.
    assert_eq!(o200k(&lone(&[0x61, 0xD83D, 0x62])), 3);
    assert_eq!(o200k(&lone(&[0xDE00, 0xD83D])), 1);
    assert_eq!(
        o200k(&lone(&[0x61, 0xD83D, 0x62])),
        count_tokens_str("a\u{FFFD}b", Encoding::O200kBase).unwrap()
    );
    // A well-formed pair is one astral char, not two replacements.
    assert_eq!(o200k(&lone(&[0xD83D, 0xDE00])), 1);
}

#[test]
fn splits_like_the_js_patterns() {
    assert_eq!(
        split("    \n\n\t  x  ", Encoding::O200kBase).unwrap(),
        ["    \n\n", "\t ", " x", "  "]
    );
    assert_eq!(
        split(
            "fn main() {\n    println!(\"hi\");\n}\n",
            Encoding::O200kBase
        )
        .unwrap(),
        ["fn", " main", "()", " {\n", "   ", " println", "!(\"", "hi", "\");\n", "}\n"]
    );
    // o200k keeps case runs apart and attaches ASCII contractions only.
    assert_eq!(
        split("HTTPServer don't \u{17F}'\u{17F}", Encoding::O200kBase).unwrap(),
        ["HTTPServer", " don't", " \u{17F}", "'\u{17F}"]
    );
    assert_eq!(
        split("they'LL 12345 a//b\r\n", Encoding::Cl100kBase).unwrap(),
        ["they", "'LL", " ", "123", "45", " a", "//", "b", "\r\n"]
    );
}

#[test]
fn encodings_load_once_and_are_shared_across_threads() {
    let first = ranks(Encoding::Cl100kBase).unwrap() as *const Ranks as usize;
    assert!(is_loaded(Encoding::Cl100kBase));
    let others: Vec<usize> = (0..4)
        .map(|_| {
            std::thread::spawn(|| ranks(Encoding::Cl100kBase).unwrap() as *const Ranks as usize)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    assert!(others.iter().all(|&p| p == first));
    assert_eq!(Encoding::from_name("o200k_base"), Some(Encoding::O200kBase));
    assert_eq!(Encoding::from_name("gpt2"), None);
}

#[test]
fn long_pieces_merge_the_same_through_the_heap() {
    let ranks = ranks(Encoding::O200kBase).unwrap();
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let cjk = "日本語の文章を数える".as_bytes();
    let alphabets: [&[u8]; 5] = [
        b"ab",
        b"etaoinshrdlu",
        b"abcdefghijklmnopqrstuvwxyz",
        cjk,
        b" \t\n{}();=.,abcxyz0123",
    ];
    // One scratch for every piece, as a text's pieces share one.
    let mut scratch = MergeScratch::default();
    for round in 0..400 {
        let alphabet = alphabets[round % alphabets.len()];
        let len = 2 + next() % 2000;
        let piece: Vec<u8> = (0..len)
            .map(|_| alphabet[next() % alphabet.len()])
            .collect();
        assert_eq!(
            ranks.merge_count(&piece),
            ranks.merge_count_long(&piece, &mut scratch).unwrap(),
            "{}",
            String::from_utf8_lossy(&piece)
        );
    }
    // A piece whose pair positions memory cannot hold is an error, not an abort.
    let err = buffer::<u32>(usize::MAX / 2).unwrap_err().to_string();
    assert!(
        err.starts_with("not enough memory to count the tokens of a text"),
        "{err}"
    );
    // One 1 MB piece finishes (the scan would need ~10^11 steps).
    let text = "ab".repeat(500_000);
    assert_eq!(split(&text, Encoding::O200kBase).unwrap().len(), 1);
    assert!(count_tokens_str(&text, Encoding::O200kBase).unwrap() > 0);
}

#[test]
fn class_table_is_sorted_and_disjoint() {
    for w in RANGES.windows(2) {
        assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0);
    }
    assert_eq!(range_of(0x4E2D).map(|r| r.2), Some(Class::LetterBoth));
    assert_eq!(range_of(0x0301).map(|r| r.2), Some(Class::Mark));
    assert_eq!(range_of(0x0085), None);
    assert_eq!(range_of(0xFEFF).map(|r| r.2), Some(Class::Space));
}
