use super::names::{known_index, known_names, KNOWN_NAMES};
use super::*;
use crate::js::json::view::Val;
use crate::js::string::JsStr;
use crate::js::view::View;

#[test]
fn known_property_names_behave_like_any_other() {
    // Known names, escaped spellings of them, and unknown names mix.
    let v = parse(r#"{"type":1,"zz":2,"typ\u0065":3,"id":"a","\u0069d":"b"}"#).unwrap();
    let Value::Object(o) = &v else { panic!() };
    // JSON.parse: a repeated key keeps its first place and its last value.
    assert_eq!(stringify_to_string(&v), r#"{"type":3,"zz":2,"id":"b"}"#);
    assert_eq!(o.get("type"), Some(&Value::Number(3.0)));
    assert_eq!(o.get_js(&JsStr::from_str("zz")), Some(&Value::Number(2.0)));
    assert_eq!(
        o.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
        ["type", "zz", "id"]
    );
    assert_eq!(
        format!("{v:?}"),
        r#"Object({"type": Number(3.0), "zz": Number(2.0), "id": String("a")})"#
            .replace("\"a\"", "\"b\"")
    );
    // Built objects and parsed ones compare equal whatever the spelling.
    let built: Object = [
        ("type", Value::Number(3.0)),
        ("zz", Value::Number(2.0)),
        ("id", Value::String("b".into())),
    ]
    .into_iter()
    .collect();
    assert_eq!(v, Value::Object(built.clone()));
    let mut edited = built;
    assert_eq!(edited.insert("type", Value::Null), Some(Value::Number(3.0)));
    assert_eq!(edited.remove("id"), Some(Value::String("b".into())));
    assert_eq!(
        stringify_to_string(&Value::Object(edited.clone())),
        r#"{"type":null,"zz":2}"#
    );
    assert_eq!(
        edited
            .into_entries()
            .into_iter()
            .map(|(k, _)| k)
            .collect::<Vec<_>>(),
        [JsStr::from_str("type"), JsStr::from_str("zz")]
    );
    // Every known name is found as itself and only as itself.
    for (i, name) in KNOWN_NAMES.iter().enumerate() {
        assert_eq!(known_index(name.as_bytes()), Some(i as u8));
        assert!(known_names()[i].eq_str(name));
    }
    assert_eq!(known_index(b"types"), None);
}

fn rt(text: &str) -> String {
    match parse(text) {
        Ok(v) => {
            let s = stringify_to_string(&v);
            assert_eq!(stringify_len(&v), s.encode_utf16().count(), "len of {s}");
            s
        }
        Err(e) => format!("ERR {e}"),
    }
}

#[test]
fn basics() {
    assert_eq!(
        rt(" {\"a\" : [1, 2.5, true, false, null, \"x\"]}\n"),
        r#"{"a":[1,2.5,true,false,null,"x"]}"#
    );
    assert_eq!(rt("[]"), "[]");
    assert_eq!(rt("{}"), "{}");
    assert_eq!(rt("[[],{},[{}]]"), "[[],{},[{}]]");
    assert_eq!(rt("\"\""), "\"\"");
    assert_eq!(rt("0"), "0");
    assert_eq!(rt("-0"), "0");
    assert!(parse("-0")
        .ok()
        .and_then(|v| v.as_f64())
        .is_some_and(|n| n == 0.0 && n.is_sign_negative()));
}

// Generated from node v20.20.2: [input, JSON.stringify(JSON.parse(input)) or None if it throws].
const PARSE_CASES: &[(&str, Option<&str>)] = &[
        ("{\"a\":1,\"b\":2,\"a\":3}", Some("{\"a\":3,\"b\":2}")),
        ("{\"b\":1,\"2\":2,\"1\":3,\"a\":4,\"1\":5}", Some("{\"1\":5,\"2\":2,\"b\":1,\"a\":4}")),
        ("{\"4294967294\":1,\"4294967295\":2,\"01\":3,\"0\":4,\"-0\":5,\"1.0\":6,\"10\":7,\"9\":8}", Some("{\"0\":4,\"9\":8,\"10\":7,\"4294967294\":1,\"4294967295\":2,\"01\":3,\"-0\":5,\"1.0\":6}")),
        ("{\"__proto__\":1,\"constructor\":2,\"\":3}", Some("{\"__proto__\":1,\"constructor\":2,\"\":3}")),
        ("{\"a\":{\"x\":1,\"x\":{\"y\":2}},\"a\":[1]}", Some("{\"a\":[1]}")),
        ("\"\\ud83d\"", Some("\"\\ud83d\"")),
        ("\"\\uD83D\\uDE00\"", Some("\"\u{1f600}\"")),
        ("\"\\uDE00\\uD83D\"", Some("\"\\ude00\\ud83d\"")),
        ("\"\\ud83dx\"", Some("\"\\ud83dx\"")),
        ("\"\\ud83d\\u0041\"", Some("\"\\ud83dA\"")),
        ("\"\\ud83d\\ud83d\\ude00\"", Some("\"\\ud83d\u{1f600}\"")),
        ("\"a\\udc00\"", Some("\"a\\udc00\"")),
        ("\"\\uDBFF\\uDFFF\"", Some("\"\u{10ffff}\"")),
        ("\"\\ud800\\\\\"", Some("\"\\ud800\\\\\"")),
        ("\"\\u2028\\u2029\\u007f\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\u0001\\\"\\\\\"", Some("\"\u{2028}\u{2029}\u{7f}/\\b\\f\\n\\r\\t\\u0000\\u001f\\u0001\\\"\\\\\"")),
        ("\"\\u00e9\\u00E9\u{e9}\u{1f600}\u{2028}\u{ad}\u{feff}\"", Some("\"\u{e9}\u{e9}\u{e9}\u{1f600}\u{2028}\u{ad}\u{feff}\"")),
        ("\"\\u0041\\u00410\"", Some("\"AA0\"")),
        ("1e400", Some("null")),
        ("-1e400", Some("null")),
        ("-0", Some("0")),
        ("-0.0e-5", Some("0")),
        ("0.1", Some("0.1")),
        ("1e21", Some("1e+21")),
        ("1e20", Some("100000000000000000000")),
        ("1e-7", Some("1e-7")),
        ("1e-6", Some("0.000001")),
        ("123456789012345678901", Some("123456789012345680000")),
        ("123456789012345680000", Some("123456789012345680000")),
        ("5e-324", Some("5e-324")),
        ("2.4703282292062327e-324", Some("0")),
        ("2.4703282292062328e-324", Some("5e-324")),
        ("1.7976931348623157e308", Some("1.7976931348623157e+308")),
        ("1.7976931348623158e308", Some("1.7976931348623157e+308")),
        ("1.7976931348623159e308", Some("null")),
        ("0.000001", Some("0.000001")),
        ("0.0000001", Some("1e-7")),
        ("123e-20", Some("1.23e-18")),
        ("1E+2", Some("100")),
        ("1e0", Some("1")),
        ("4.35", Some("4.35")),
        ("0.1e1", Some("1")),
        ("100", Some("100")),
        ("-1.5E-7", Some("-1.5e-7")),
        ("9007199254740993", Some("9007199254740992")),
        ("9007199254740995", Some("9007199254740996")),
        ("18446744073709551616", Some("18446744073709552000")),
        ("1234567890123456789", Some("1234567890123456800")),
        ("0.30000000000000004", Some("0.30000000000000004")),
        ("2.1e-5", Some("0.000021")),
        ("746117772767320.25", Some("746117772767320.2")),
        ("88095065791704.625", Some("88095065791704.62")),
        ("1.5e300", Some("1.5e+300")),
        ("-1e-7", Some("-1e-7")),
        ("999999999999999999999", Some("1e+21")),
        ("1e+21", Some("1e+21")),
        ("12345678901234567e5", Some("1.2345678901234568e+21")),
        ("", None),
        (" ", None),
        ("01", None),
        ("-", None),
        ("--1", None),
        ("1.", None),
        (".5", None),
        ("+1", None),
        ("1e", None),
        ("1e+", None),
        ("1.e5", None),
        ("NaN", None),
        ("Infinity", None),
        ("-Infinity", None),
        ("tru", None),
        ("nulll", None),
        ("True", None),
        ("[1,]", None),
        ("[,1]", None),
        ("{\"a\":1,}", None),
        ("{,}", None),
        ("[1 2]", None),
        ("{\"a\" 1}", None),
        ("{a:1}", None),
        ("'a'", None),
        ("\"\\x\"", None),
        ("\"\\u12\"", None),
        ("\"\\u12\"x", None),
        ("\"\u{9}\"", None),
        ("\"a", None),
        ("\"\\", None),
        ("[", None),
        ("{", None),
        ("{\"a\"", None),
        ("{\"a\":", None),
        ("\u{a0}1", None),
        ("\u{feff}1", None),
        ("1 2", None),
        ("{\"a\":1}}", None),
        ("\"\\uZZZZ\"", None),
        ("[1]\u{2028}", None),
        ("\u{b}1", None),
        ("\u{c}1", None),
        ("[1]\u{0}", None),
        ("\"\u{7f}\"", Some("\"\u{7f}\"")),
        ("\"\\U0041\"", None),
        ("\"\\/\"", Some("\"/\"")),
        (" \u{9}\u{d}\u{a}[ 1 , 2 ,{ \"a\" : [ ] } ] \u{a}", Some("[1,2,{\"a\":[]}]")),
        ("[[],[[]],{},{\"\":{}}]", Some("[[],[[]],{},{\"\":{}}]")),
        ("true", Some("true")),
        ("false", Some("false")),
        ("null", Some("null")),
        ("[true,false,null]", Some("[true,false,null]")),
    ];
// Generated from node: [f64 bits, String(x)].
const NUMBER_CASES: &[(u64, &str)] = &[
    (0x00000000_00000000, "0"),
    (0x80000000_00000000, "0"),
    (0x7ff80000_00000000, "NaN"),
    (0x7ff00000_00000000, "Infinity"),
    (0xfff00000_00000000, "-Infinity"),
    (0x3ff00000_00000000, "1"),
    (0xbff00000_00000000, "-1"),
    (0x3fb99999_9999999a, "0.1"),
    (0x3fd33333_33333334, "0.30000000000000004"),
    (0x444b1ae4_d6e2ef50, "1e+21"),
    (0x4415af1d_78b58c40, "100000000000000000000"),
    (0x441ac53a_7e04bcda, "123456789012345680000"),
    (0x3e7ad7f2_9abcaf48, "1e-7"),
    (0x3eb0c6f7_a0b5ed8d, "0.000001"),
    (0x3e8421f5_f40d8376, "1.5e-7"),
    (0x3ef60525_02eec7c9, "0.000021"),
    (0x00000000_00000001, "5e-324"),
    (0x80000000_00000001, "-5e-324"),
    (0x00100000_00000000, "2.2250738585072014e-308"),
    (0x7fefffff_ffffffff, "1.7976931348623157e+308"),
    (0x43400000_00000000, "9007199254740992"),
    (0x433fffff_ffffffff, "9007199254740991"),
    (0x43400000_00000001, "9007199254740994"),
    (0x43f00000_00000000, "18446744073709552000"),
    (0x44500000_00000000, "1.1805916207174113e+21"),
    (0x40116666_66666666, "4.35"),
    (0x3eb0c6f7_a0b5ed8d, "0.000001"),
    (0x54b249ad_2594c37d, "1e+100"),
    (0x2b30cc4f_55eecfea, "1.2e-100"),
    (0x430534b8_a67382c2, "746117772767320.2"),
    (0x42d407ce_c6973628, "88095065791704.62"),
    (0x4316d873_b98ffa99, "1607610258423462.2"),
    (0x3fe00000_00000000, "0.5"),
    (0x40040000_00000000, "2.5"),
    (0x430c6bf5_26340002, "1000000000000000.2"),
    (0x405edd2f_1a9fbe77, "123.456"),
    (0xc1cd6f34_58900000, "-987654321.125"),
    (0x3fd55555_55555555, "0.3333333333333333"),
    (0x3fe55555_55555555, "0.6666666666666666"),
    (0x400921fb_54442d18, "3.141592653589793"),
    (0x4005bf0a_8b145769, "2.718281828459045"),
    (0x043c7ad3_05391c44, "2.922407875466816e-288"),
    (0xa289127d_8b0c4216, "-2.5700702264691628e-142"),
    (0x1cca49b7_e8f7b1b8, "5.441885314923243e-170"),
    (0x8c609701_7ef29baa, "-4.634218299048455e-249"),
    (0xc89034db_989a046c, "-3.529457878180234e+41"),
    (0xbe69c1c5_0a33e47e, "-4.7975988759796946e-8"),
    (0x12dbe03f_f73f4860, "7.896838032215279e-218"),
    (0x75d5d6c9_b3197092, "4.197293416361744e+259"),
    (0xf5a32fe3_657ff194, "-4.609510478695963e+258"),
    (0xf3e85a0d_67f7d3e6, "-2.1793997409746303e+250"),
    (0xa9e847c7_fe61b408, "-8.270795884884237e-107"),
    (0x7ffb0f91_6c42e27a, "NaN"),
    (0x6c5d8beb_498b83bc, "9.946810591687933e+213"),
    (0x27c1fb55_ace1b04e, "3.5653673242685946e-117"),
    (0xda49a04f_16b994b0, "-8.67346276445751e+126"),
    (0x01cf6159_4fc29162, "5.8572126860834134e-300"),
    (0x4aab68f3_76715ae4, "5.1276427068167376e+51"),
    (0xf657c59d_92af19b6, "-1.1696092397070362e+262"),
    (0xc79e09d7_03f58a58, "-9.981982894253659e+36"),
    (0x5235ec21_4d601d4a, "1.0902510538955631e+88"),
    (0x8bfce6fb_f47a170c, "-6.3074782187651754e-251"),
    (0xa82ed8e5_aad1b01e, "-3.9144268810263544e-115"),
    (0x2947a45f_9f983500, "7.864612861047797e-110"),
    (0xc475cfe9_edd72632, "-6.437814283066237e+21"),
    (0xb9c62603_75025834, "-2.184009758551456e-30"),
    (0xb670552d_54ef1386, "-1.7880484061902492e-46"),
    (0xc2ec8fe7_937834a8, "-251235128820133.25"),
    (0x34ba2cb1_71574c1a, "1.0674820033458821e-54"),
    (0xabff460b_74fabe5c, "-9.150808207537867e-97"),
    (0xdf695a75_8560e3ee, "-4.1495718259828804e+151"),
    (0xecf6ec6f_64402950, "-7.902404167368642e+216"),
    (0x24922279_be042f02, "1.5968038715082207e-132"),
    (0x59a46713_af67e984, "6.743644837975347e+123"),
    (0xcb0b08bd_5bb4c156, "-3.236695159903791e+53"),
    (0x2d14d9f7_cbeeb2f8, "1.5994008550031384e-91"),
    (0x6770d141_1e756eea, "1.8732516681200314e+190"),
    (0xb935a91b_dfe279ac, "-4.1716762681367726e-33"),
    (0x3f6a8005_892c4bbe, "0.0032348735925409036"),
    (0xdeb8787f_645671a0, "-1.955618637861919e+148"),
    (0x5f2d5909_d036abd2, "3.0020885152720095e+150"),
    (0x430aa2e1_da9626e5, "937180039136476.6"),
    (0x42bca81c_09b433c0, "31508350481459.75"),
    (0x429891e1_6eb220b6, "6753707863176.178"),
    (0x42a8b110_2b9e10e0, "13574379785992.438"),
    (0x425cc00d_f0942d48, "493924893264.7075"),
    (0x42479073_9946c4c8, "202415485581.53735"),
    (0x432760a7_1ecc0d5b, "3290097678419629.5"),
    (0x42c20dae_85f866a4, "39699943780557.28"),
    (0x4288cf65_8996f84f, "3409880101599.0386"),
    (0x42b79c96_e4baf43f, "25961313909492.246"),
    (0x428b5000_b973a238, "3753802935924.2773"),
    (0x427a3f21_21d6e500, "1803652570478.3125"),
    (0x430fff64_bd001e4a, "1125816551343049.2"),
    (0x4266745b_c5685880, "771531615042.7656"),
    (0x42e05b37_65dd31f9, "143871659927951.78"),
    (0x42837d2d_2bd5bc36, "2678543710903.5264"),
    (0x430ce5fe_d885ea92, "1016772758125906.2"),
    (0x42f347e7_dfad6e5e, "339192860825317.9"),
    (0x42ef46f0_4558a6e9, "275116313986359.28"),
    (0x430ccad7_56deadfc, "1013040696513983.5"),
];

#[test]
fn parse_and_stringify_match_node() {
    for &(input, want) in PARSE_CASES {
        match (parse(input), want) {
            (Ok(v), Some(want)) => {
                let got = stringify_to_string(&v);
                assert_eq!(got, want, "input {input:?}");
                assert_eq!(stringify(&v).as_str(), Some(want));
                assert_eq!(
                    stringify_len(&v),
                    want.encode_utf16().count(),
                    "len for {input:?}"
                );
                // Node's output parses back to itself.
                assert_eq!(rt(want), want);
            }
            (Err(_), None) => {}
            (Ok(v), None) => panic!("accepted {input:?} as {}", stringify_to_string(&v)),
            (Err(e), Some(_)) => panic!("rejected {input:?}: {e}"),
        }
    }
}

#[test]
fn number_to_string_matches_node() {
    for &(bits, want) in NUMBER_CASES {
        let x = f64::from_bits(bits);
        assert_eq!(number_to_js_string(x), want, "bits {bits:#x}");
        if x.is_finite() && x != 0.0 {
            // String(x) parses back to x.
            assert_eq!(
                parse(want).ok().and_then(|v| v.as_f64()).map(f64::to_bits),
                Some(bits)
            );
        }
    }
    assert_eq!(number_to_js_string(-0.0), "0");
    assert_eq!(number_to_js_string(f64::NAN), "NaN");
    assert_eq!(number_to_js_string(f64::NEG_INFINITY), "-Infinity");
    assert_eq!(number_to_js_string(1e21), "1e+21");
    assert_eq!(number_to_js_string(-1e-7), "-1e-7");
}

#[test]
fn stringify_constructed_values() {
    let mut o = Object::new();
    o.insert("nan", Value::Number(f64::NAN));
    o.insert("inf", Value::Number(f64::INFINITY));
    o.insert("negzero", Value::Number(-0.0));
    o.insert(JsStr::from_utf16(&[0xD800]), Value::from("\u{1}\u{2028}/"));
    o.insert(
        "arr",
        Value::Array(vec![
            Value::Null,
            true.into(),
            1.5.into(),
            Value::Array(vec![]),
        ]),
    );
    o.insert("emptyobj", Value::Object(Object::new()));
    let v = Value::Object(o);
    // Node: JSON.stringify({nan:NaN,inf:Infinity,negzero:-0,"\ud800":"\x01\u2028/",arr:[null,true,1.5,[]],emptyobj:{}})
    let want = "{\"nan\":null,\"inf\":null,\"negzero\":0,\"\\ud800\":\"\\u0001\u{2028}/\",\"arr\":[null,true,1.5,[]],\"emptyobj\":{}}";
    assert_eq!(stringify_to_string(&v), want);
    assert_eq!(stringify_len(&v), want.encode_utf16().count());
    assert_eq!(v.json_len(), 94); // node: .length
    assert_eq!(stringify_len(&Value::from("😀")), 4);
    assert_eq!(
        stringify_len(&Value::String(JsStr::from_utf16(&[0xDE00, 0x22]))),
        10
    );
    let mut s = String::from("x=");
    stringify_into(&Value::Bool(false), &mut s);
    assert_eq!(s, "x=false");
}

#[test]
fn lone_surrogates_survive_parse() {
    let v = parse(r#"{"k\ud83d":"\udc00a\ud83d\ude00"}"#).expect("valid");
    let o = v.as_object().expect("object");
    let (k, val) = &o.entries()[0];
    assert_eq!(k.to_utf16(), vec![0x6B, 0xD83D]);
    let s = val.as_js_str().expect("string");
    assert!(matches!(s, JsStr::Wtf8(_)));
    assert_eq!(s.to_utf16(), vec![0xDC00, 0x61, 0xD83D, 0xDE00]);
    assert_eq!(s.utf16_len(), 4);
    assert!(o.get_js(k).is_some());
    assert!(val.as_str().is_none());
    // Escaped pairs become plain UTF-8.
    let v = parse(r#""\ud83d\ude00\u0041""#).expect("valid");
    assert_eq!(v.as_str(), Some("😀A"));
}

#[test]
fn lone_surrogate_strings_parse_to_canonical_wtf8() {
    // After a lone surrogate, escaped pairs still join, runs are copied,
    // and the result equals the same units built any other way.
    let cases: [(&str, &[u16]); 5] = [
        (
            r#""\ud83dx\ud83d\ude00y""#,
            &[0xD83D, 0x78, 0xD83D, 0xDE00, 0x79],
        ),
        (
            r#""é\udc00日\n\u0041\"""#,
            &[0xE9, 0xDC00, 0x65E5, 0x0A, 0x41, 0x22],
        ),
        (r#""\ud83d\ud83d\ude00""#, &[0xD83D, 0xD83D, 0xDE00]),
        (r#""\ude00\ud83d""#, &[0xDE00, 0xD83D]),
        (r#""a😀\udbff""#, &[0x61, 0xD83D, 0xDE00, 0xDBFF]),
    ];
    for (text, units) in cases {
        let v = parse(text).expect("valid");
        let s = v.as_js_str().expect("string");
        assert_eq!(s.to_utf16(), units, "{text}");
        assert_eq!(*s, JsStr::from_utf16(units));
        // Round trip through stringify, and the length it predicts.
        let out = stringify(&v);
        assert_eq!(parse(out.as_str().expect("well-formed")).expect("valid"), v);
        assert_eq!(stringify_len(&v), out.utf16_len(), "{text}");
    }
    assert_eq!(
        stringify(&parse(r#""\ud83dé""#).expect("valid")),
        r#""\ud83dé""#
    );
}

#[test]
fn the_planning_parse_measures_long_message_texts_only() {
    let long = "é".repeat(300);
    let short = "x".repeat(MEASURED_MIN_UNITS - 1);
    let line = format!(
        r#"{{"type":"message","id":"{long}","content":"{long}","summary":"{long}",
            "details":{{"diff":"{long}"}},
            "message":{{"role":"user","content":"{long}","output":"{long}","command":"{short}",
              "errorMessage":"{long}","details":{{"diff":["{long}"],"n":{{"x":"{long}"}}}},
              "blocks":[{{"text":"{long}"}}]}},
            "more":{{"content":[{{"text":"{long}"}}]}}}}"#
    );
    let v = parse_for_plan(&line).expect("valid");
    let at = |path: &[&str]| -> &Value {
        path.iter().fold(&v, |v, k| match k.parse::<usize>() {
            Ok(i) => v.at(i).expect("element"),
            Err(_) => v.get(k).expect("member"),
        })
    };
    // Two measured texts are never equal (their content is unknown).
    let measured = |v: &Value| matches!(v, Value::Measured(300));
    assert!(measured(at(&["content"])));
    assert!(measured(at(&["message", "content"])));
    assert!(measured(at(&["message", "output"])));
    assert!(measured(at(&["message", "details", "diff", "0"])));
    assert!(measured(at(&["message", "details", "n", "x"])));
    // Kept: ids, summaries, entry details, short texts, error messages,
    // and anything outside the known places.
    let kept = Value::String(JsStr::from_str(&long));
    for path in [
        &["id"][..],
        &["summary"],
        &["details", "diff"],
        &["message", "errorMessage"],
        &["message", "blocks", "0", "text"],
        &["more", "content", "0", "text"],
    ] {
        assert_eq!(at(path), &kept, "{path:?}");
    }
    assert_eq!(
        at(&["message", "command"]),
        &Value::String(JsStr::from_str(&short))
    );
    // Content blocks, and tool-call arguments kept whole.
    let blocks = format!(
        r#"{{"message":{{"content":[{{"type":"thinking","thinking":"{long}","thinkingSignature":"{long}"}},
            {{"type":"toolCall","arguments":{{"content":"{long}","text":"{long}"}},"partialJson":"{long}"}}]}}}}"#
    );
    let v = parse_for_plan(&blocks).expect("valid");
    let block = |i: usize, k: &str| {
        v.get("message")
            .and_then(|m| m.get("content"))
            .and_then(|c| c.at(i))
            .and_then(|b| b.get(k))
            .cloned()
    };
    assert!(block(0, "thinking").is_some_and(|v| measured(&v)));
    assert!(block(0, "thinkingSignature").is_some_and(|v| measured(&v)));
    assert!(block(1, "partialJson").is_some_and(|v| measured(&v)));
    let args = block(1, "arguments").expect("arguments");
    assert_eq!(args.get("content"), Some(&kept));
    assert_eq!(args.get("text"), Some(&kept));
    // prepareCompactionAsync's slices: arrays of entries.
    let array = format!(r#"[{{"content":"{long}"}},{{"message":{{"output":"{long}"}}}}]"#);
    let v = parse_for_plan(&array).expect("valid");
    assert!(v.at(0).and_then(|e| e.get("content")).is_some_and(measured));
    assert!(v
        .at(1)
        .and_then(|e| e.get("message"))
        .and_then(|m| m.get("output"))
        .is_some_and(measured));
    // Escapes are one unit each, a pair two; the length is the JS length.
    let escaped = format!(
        r#"{{"content":"{}\n\u0041\ud83d\ude00\ud83d"}}"#,
        "a".repeat(300)
    );
    let v = parse_for_plan(&escaped).expect("valid");
    assert!(matches!(v.get("content"), Some(Value::Measured(305))));
    // The same errors as the full parse, at the same offsets.
    for bad in [
        r#"{"content":"abc\x"}"#,
        r#"{"content":"ab\u12G4"}"#,
        "{\"content\":\"a\u{1}\"}",
        r#"{"content":"abc"#,
    ] {
        let bad = bad.replace("abc", &"abc".repeat(100));
        assert_eq!(
            parse_for_plan(&bad).unwrap_err(),
            parse(&bad).unwrap_err(),
            "{bad}"
        );
    }
}

#[test]
fn object_semantics() {
    let v = parse(r#"{"b":1,"a":2,"b":3,"1":4,"0":5}"#).expect("valid");
    let o = v.as_object().expect("object");
    let keys: Vec<String> = o.keys().map(|k| k.to_string()).collect();
    assert_eq!(keys, ["0", "1", "b", "a"]);
    assert_eq!(o.get("b"), Some(&Value::Number(3.0)));
    assert_eq!(v.get("a").and_then(Value::as_f64), Some(2.0));
    assert_eq!(v.get("zz"), None);
    assert_eq!(v.at(0), None);

    let mut o = Object::new();
    o.insert("x", 1.into());
    o.insert("5", 2.into());
    o.insert("y", 3.into());
    o.insert("2", 4.into());
    o.insert("4294967295", 5.into());
    assert_eq!(o.insert("x", 6.into()), Some(Value::Number(1.0)));
    let keys: Vec<String> = o.keys().map(|k| k.to_string()).collect();
    assert_eq!(keys, ["2", "5", "x", "y", "4294967295"]);
    assert_eq!(o.remove("5"), Some(Value::Number(2.0)));
    assert_eq!(o.remove("5"), None);
    assert_eq!(o.len(), 4);
    assert!(o.contains_key("y"));
    if let Some(v) = o.get_mut("y") {
        *v = Value::Null;
    }
    assert_eq!(
        stringify_to_string(&Value::Object(o)),
        r#"{"2":4,"x":6,"y":null,"4294967295":5}"#
    );

    // Many keys take the hashed duplicate check.
    let mut text = String::from("{");
    for i in 0..40 {
        text.push_str(&format!("\"k{}\":{i},", i % 30));
    }
    text.push_str("\"z\":0}");
    let v = parse(&text).expect("valid");
    let o = v.as_object().expect("object");
    assert_eq!(o.len(), 31);
    assert_eq!(o.get("k5").and_then(Value::as_f64), Some(35.0));
    assert_eq!(o.entries()[5].0, "k5");

    let collected: Object = vec![("b", Value::Null), ("0", Value::Null), ("b", true.into())]
        .into_iter()
        .collect();
    assert_eq!(
        stringify_to_string(&Value::Object(collected)),
        r#"{"0":null,"b":true}"#
    );
}

#[test]
fn errors_carry_offsets() {
    let e = parse("[1, 2,]").expect_err("trailing comma");
    assert_eq!(e.offset, 6);
    let e = parse("{\"a\":1} x").expect_err("trailing text");
    assert_eq!(e.offset, 8);
    let e = parse("\"abc").expect_err("unterminated");
    assert_eq!(e.offset, 4);
    let e = parse("\"a\\u0001\x01\"").expect_err("raw control");
    assert_eq!(e.offset, 8);
    assert_eq!(
        e.to_string(),
        "bad control character in string literal at byte 8"
    );
    let e = parse_bytes(b"[\"\xff\"]").expect_err("bad utf-8");
    assert_eq!((e.offset, e.message), (2, "invalid UTF-8"));
    assert_eq!(
        parse_bytes(b" [1] ").ok(),
        Some(Value::Array(vec![Value::Number(1.0)]))
    );
}

#[test]
fn garbage_never_panics() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let pieces: [&[u8]; 20] = [
        b"[",
        b"]",
        b"{",
        b"}",
        b":",
        b",",
        b"\"",
        b"\\",
        b"\\u",
        b"d83d",
        b"0",
        b"-",
        b".",
        b"e",
        b"1",
        b"true",
        b" ",
        b"\xff",
        b"\xf0\x9f\x98\x80",
        b"\x01",
    ];
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut buf = Vec::new();
        let mut y = x;
        for _ in 0..(x % 24) {
            buf.extend_from_slice(pieces[(y % 20) as usize]);
            y /= 20;
            if y == 0 {
                y = x.rotate_left(17);
            }
        }
        if let Ok(v) = parse_bytes(&buf) {
            let s = stringify_to_string(&v);
            assert_eq!(stringify_len(&v), s.encode_utf16().count());
        }
    }
}

#[test]
fn deep_nesting_limit_is_stack_safe() {
    // The recursive `Drop` of a value at the depth limit needs about
    // 1.25 MiB in a debug build; give it the stack node's threads have.
    let t = std::thread::Builder::new()
        .stack_size(4 << 20)
        .spawn(deep_nesting_body)
        .expect("spawn");
    assert!(t.join().is_ok());
}

fn deep_nesting_body() {
    let d = DEFAULT_MAX_DEPTH;
    let arr = format!("{}{}", "[".repeat(d), "]".repeat(d));
    let v = parse(&arr).expect("depth at the limit parses");
    let obj = format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d));
    let o = parse(&obj).expect("depth at the limit parses");
    // Recursive derived impls must survive the deepest accepted value
    // on a test thread's 2 MiB stack (debug build).
    let v2 = v.clone();
    assert!(v == v2);
    assert!(o.clone() == o);
    assert!(format!("{v:?}").len() > d);
    assert_eq!(stringify_to_string(&v), arr);
    assert_eq!(stringify_to_string(&o), obj);
    assert_eq!(stringify_len(&o), obj.len());
    drop(v2);
    drop(o);
    let too_deep = format!("{}{}", "[".repeat(d + 1), "]".repeat(d + 1));
    assert!(matches!(parse(&too_deep), Err(e) if e.message == "too deeply nested"));
    assert!(parse_with_max_depth(&too_deep, d + 1).is_ok());
    // Unclosed, very deep: an error, not a crash.
    assert!(parse(&"[".repeat(1_000_000)).is_err());
    assert!(parse(&"{\"a\":".repeat(1_000_000)).is_err());
}

#[test]
fn quoted_utf16_is_json_stringify_of_the_string() {
    // Every unit below 0x80 and the surrogates alone, in pairs, reversed
    // and at the ends, inside runs long enough for the chunked scan.
    let long = "x".repeat(40);
    let mut cases: Vec<Vec<u16>> = vec![
        vec![],
        (0u16..0x80).collect(),
        vec![0xd800],
        vec![0xdc00],
        vec![0xd83d, 0xde00],
        vec![0xde00, 0xd83d],
        vec![0xd83d, 0xd83d, 0xde00],
        vec![0x2028, 0x2029, 0x7f, 0xff, 0xfeff],
    ];
    for special in [0x00u16, 0x08, 0x1f, 0x22, 0x5c, 0xd800, 0xdfff] {
        for at in [0, 15, 16, 17, 39] {
            let mut s: Vec<u16> = long.encode_utf16().collect();
            s.insert(at, special);
            cases.push(s);
        }
    }
    let mut pair_at_chunk_end: Vec<u16> = "y".repeat(15).encode_utf16().collect();
    pair_at_chunk_end.extend([0xd83d, 0xde00]);
    cases.push(pair_at_chunk_end);
    // Seeded mixes of plain and special units, across chunk boundaries.
    let alphabet: [u16; 12] = [
        0x61, 0x20, 0x22, 0x5c, 0x0a, 0x00, 0x1f, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x4e2d,
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for len in 0..200 {
        let mut units = Vec::with_capacity(len);
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Mostly plain, so runs of every length occur.
            let pick = (seed % 32) as usize;
            units.push(if pick < alphabet.len() {
                alphabet[pick]
            } else {
                0x62
            });
        }
        cases.push(units);
    }
    for units in cases {
        let mut out = vec![0x41];
        push_quoted_utf16(&units, &mut out);
        let want = stringify(&Value::String(JsStr::from_utf16(&units))).to_utf16();
        assert_eq!(out[1..], want[..], "for {units:x?}");
        // The length alone, as measures take it, is the length written.
        assert_eq!(quoted_len_utf16(&units), want.len(), "for {units:x?}");
    }
}

#[test]
fn the_special_unit_scan_finds_what_the_unit_test_finds() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..20_000 {
        let mut chunk = [0u16; 16];
        for u in &mut chunk {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Every unit now and then, and the edges of each class often.
            let edges = [
                0x00, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7f, 0xd7ff, 0xd800, 0xdfff,
                0xe000, 0xffff,
            ];
            *u = if seed.is_multiple_of(3) {
                (seed >> 16) as u16
            } else {
                edges[(seed >> 8) as usize % edges.len()]
            };
        }
        assert!(super::stringify::special_masks_agree(&chunk), "{chunk:x?}");
    }
}

#[test]
fn measured_texts_equal_by_length() {
    // Found by fuzzing prepareCompactionAsync's former JSON slices: two planning parses of the
    // same text compared unequal, as `Measured` fell through to `false`.
    let text = format!(
        r#"[{{"type":"message","message":{{"role":"user","content":"{}"}}}}]"#,
        "x".repeat(1000)
    );
    let a = parse_for_plan(&text).unwrap();
    assert!(format!("{a:?}").contains("Measured(1000)"));
    assert_eq!(a, parse_for_plan(&text).unwrap());
    assert_ne!(a, parse_for_plan(&text.replace("xx", "x")).unwrap());
}

/// Entry-shaped JSON texts with every kind of token: escapes of each kind, a
/// surrogate pair, lone surrogates, numbers with fraction and exponent,
/// literals, nesting, whitespace, and a long string the plan parse measures.
fn entry_texts() -> Vec<String> {
    vec![
        r#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"line\n\"q\" \\ \/ \b\f\r\t é \u00e9 \ud83d\ude00 \ud83d x","timestamp":-1.5e+10}}"#.to_string(),
        r#"{ "a" : [ true , false , null , 0 , -0.25 , 12E-3 , { } , [ ] ] , "b" : { "c" : "\uDC00" } }"#.to_string(),
        format!(r#"{{"type":"message","message":{{"role":"toolResult","content":[{{"type":"text","text":"{}\u00e9"}}]}}}}"#, "é".repeat(3000)),
    ]
}

#[test]
fn a_text_cut_short_is_told_from_a_malformed_one() {
    for whole in entry_texts() {
        for parse in [parse, parse_for_plan] {
            assert!(parse(&whole).is_ok(), "{whole}");
            // Every proper prefix, at each character boundary: the input ended.
            for (cut, _) in whole.char_indices().skip(1) {
                let text = &whole[..cut];
                let err = parse(text).expect_err(text);
                assert!(err.input_ended(text), "{text:?}: {err}");
            }
        }
    }
    // Malformed before their end, however they end.
    for text in [
        r#"{"a":1}x"#,
        r#"{"a":1}{"b":2}"#,
        r#"{"a":tru}"#,
        r#"{"a":"\u12G4"}"#,
        r#"{"a":"\u12G"#,
        r#"{"a":"\q"#,
        r#"{"a" 1"#,
        r#"{"a":1,}"#,
        r#"{"a":01"#,
        r#"{"a":-x"#,
        r#"{"a":1.}"#,
        r#"{"a":"x	"#,
        // A line cut inside a string, an escape or a number, then joined by an
        // append: malformed where the next entry starts.
        r#"{"type":"message","id":"a1","message":{"content":"hal{"type":"message","id":"a2"}"#,
        r#"{"type":"message","id":"a1","message":{"content":"half\u00{"type":"message","id":"a2"}"#,
        r#"{"type":"message","id":"a1","message":{"timestamp":12{"type":"message","id":"a2"}"#,
    ] {
        for parse in [parse, parse_for_plan] {
            let err = parse(text).expect_err(text);
            assert!(!err.input_ended(text), "{text:?}: {err}");
        }
    }
}

/// `[[[1, null], null], null]`, `depth` arrays deep, built without recursion.
fn nested(depth: usize) -> Value {
    let mut v = Value::Number(1.0);
    for _ in 0..depth {
        v = Value::Array(vec![v, Value::Null]);
    }
    v
}

#[test]
fn string_of_a_deep_array_on_a_small_stack() {
    // A worker thread deep in its own JS recursion has little stack left;
    // a parsed file line may be nested up to the parse's cap.
    let small = std::thread::Builder::new().stack_size(64 * 1024);
    let deep = small
        .spawn(|| {
            let deep = nested(DEFAULT_MAX_DEPTH);
            let s = Val::new(&deep)
                .to_js_string()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert_eq!(s.len(), 1 + DEFAULT_MAX_DEPTH);
            assert_eq!(&s[..3], "1,,");
            // (dropped out here: its drop recurses once per level)
            deep
        })
        .unwrap()
        .join()
        .unwrap();
    drop(deep);
}

#[test]
fn string_of_an_array_is_js_string() {
    let v = parse(r#"[[1,2],[],null,[null,[true]],"a",{},1.5e300,[[[]]],-0]"#).unwrap();
    // String([[1,2],[],null,[null,[true]],"a",{},1.5e300,[[[]]],-0]) in Node:
    assert_eq!(
        Val::new(&v).to_js_string().unwrap().to_string_lossy(),
        "1,2,,,,true,a,[object Object],1.5e+300,,0"
    );
    assert_eq!(
        Val::new(&Value::Null)
            .to_js_string()
            .unwrap()
            .to_string_lossy(),
        "null"
    );
    assert_eq!(
        Val::new(&parse("[null]").unwrap())
            .to_js_string()
            .unwrap()
            .to_string_lossy(),
        ""
    );
}
