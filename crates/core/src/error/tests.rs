use super::*;
use crate::js::string::JsStr;

#[test]
fn location_joins_fields_and_indices() {
    let e = Error::type_error("role", "expected a string")
        .within("message")
        .within("[3]")
        .within("pathEntries");
    assert_eq!(
        e.to_string(),
        "pathEntries[3].message.role: expected a string"
    );
}

#[test]
fn a_rooted_location_is_left_as_it_is_by_outer_scopes() {
    let e = Error::type_error("text", "expected a string")
        .within("[0]")
        .within("content")
        .rooted_at(["pathEntries[6]".into(), "replacement".into()])
        .within("message")
        .within("pathEntries[5]");
    assert_eq!(
        e.to_string(),
        "pathEntries[6].replacement.content[0].text: expected a string"
    );
}

#[test]
fn messages_and_locations_keep_lone_surrogates() {
    let id = JsStr::from_utf16(&[0x69, 0xD800, 0x22]);
    let e = Error::invalid(join(&[&"entry ", &quoted(&id), &" is gone"])).within(quoted(&id));
    let mut want: Vec<u16> = Vec::new();
    for part in [
        &[0x22, 0x69, 0xD800, 0x5C, 0x22, 0x22][..],
        &": entry ".encode_utf16().collect::<Vec<_>>(),
        &[0x22, 0x69, 0xD800, 0x5C, 0x22, 0x22],
        &" is gone".encode_utf16().collect::<Vec<_>>(),
    ] {
        want.extend_from_slice(part);
    }
    assert_eq!(e.text().to_utf16(), want);
    // Display is for Rust-side logs only: lossy.
    assert_eq!(
        e.to_string(),
        "\"i\u{FFFD}\\\"\": entry \"i\u{FFFD}\\\"\" is gone"
    );
}

#[test]
fn quoted_escapes_as_json_stringify_but_keeps_lone_surrogates() {
    let s = JsStr::from_utf16(&[0x61, 0x0A, 0x01, 0x5C, 0xDC00, 0xD83D, 0xDE00]);
    assert_eq!(
        quoted(&s).to_utf16(),
        "\"a\\n\\u0001\\\\"
            .encode_utf16()
            .chain([0xDC00, 0xD83D, 0xDE00, 0x22])
            .collect::<Vec<_>>()
    );
    assert_eq!(quoted(&JsStr::from_str("plain")).to_string(), "\"plain\"");
}

#[test]
fn quoted_shows_the_start_and_the_length_of_a_long_string() {
    let at_most = "x".repeat(256);
    assert_eq!(
        quoted(&JsStr::from_str(&at_most)).to_string(),
        format!("\"{at_most}\"")
    );
    let long = JsStr::from_string("y".repeat(1_000_000));
    assert_eq!(
        quoted(&long).to_string(),
        format!("\"{}…\" (a string of 1000000 characters)", "y".repeat(200))
    );
}
