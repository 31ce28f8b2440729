use super::*;

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
