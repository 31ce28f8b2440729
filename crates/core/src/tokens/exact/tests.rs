use super::*;
use crate::agent_line::AgentLine;

const RULES: &TokenRules = &AgentLine::V0_78.tokens;
use crate::js::json::view::Val;
use crate::js::json::{parse, Value};
use crate::tokens::estimate::estimate_tokens;
use crate::tokens::tokenizer::count_tokens_str;

fn json(text: &str) -> Value {
    parse(text).unwrap_or_else(|e| panic!("bad test JSON: {e:?}"))
}

fn exact(message: &str) -> Result<u64> {
    message_tokens_exact(&Val::new(&json(message)), Encoding::O200kBase, RULES)
}

fn o200k(text: &str) -> u64 {
    count_tokens_str(text, Encoding::O200kBase).unwrap() as u64
}

#[test]
fn user_string_and_blocks() {
    assert_eq!(
        exact(r#"{"role":"user","content":"Hello, world!"}"#).unwrap(),
        4
    );
    let blocks = r#"{"role":"user","content":[
            {"type":"text","text":"Hello, world!"},
            {"type":"image","data":"AAAA","mimeType":"image/png"},
            {"type":"text","text":""},
            {"type":"other"}]}"#;
    assert_eq!(exact(blocks).unwrap(), 4 + IMAGE_TOKENS);
    // The estimate gives the image the same weight.
    let m = json(blocks);
    assert_eq!(
        estimate_tokens(&Val::new(&m), RULES).unwrap(),
        (13 + 4800u64).div_ceil(4)
    );
}

#[test]
fn assistant_blocks_count_separately() {
    let m = r#"{"role":"assistant","content":[
            {"type":"thinking","thinking":"Let me read the file."},
            {"type":"text","text":"Reading it now."},
            {"type":"toolCall","id":"c1","name":"read","arguments":{"path":"src/main.rs","limit":20}}]}"#;
    let expected = o200k("Let me read the file.")
        + o200k("Reading it now.")
        + o200k("read")
        + o200k(r#"{"path":"src/main.rs","limit":20}"#);
    assert_eq!(exact(m).unwrap(), expected);
}

#[test]
fn bash_summaries_and_others() {
    let bash = r#"{"role":"bashExecution","command":"ls -la","output":"total 0\n"}"#;
    assert_eq!(exact(bash).unwrap(), o200k("ls -la") + o200k("total 0\n"));
    let summary = r#"{"role":"compactionSummary","summary":"We fixed the bug.","tokensBefore":10}"#;
    assert_eq!(exact(summary).unwrap(), o200k("We fixed the bug."));
    let branch = r#"{"role":"branchSummary","summary":"x","fromId":"a"}"#;
    assert_eq!(exact(branch).unwrap(), 1);
    assert_eq!(exact(r#"{"role":"somethingElse"}"#).unwrap(), 0);
    let tool = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"fn main() {}"}],"isError":false}"#;
    assert_eq!(exact(tool).unwrap(), o200k("fn main() {}"));
}

#[test]
fn errors_match_the_estimate() {
    for bad in [
        r#"{"role":"user","content":5}"#,
        r#"{"role":"user","content":[null]}"#,
        r#"{"role":"user","content":[{"type":"text","text":5}]}"#,
        r#"{"role":"assistant","content":"text"}"#,
        r#"{"role":"assistant","content":[{"type":"text"}]}"#,
        r#"{"role":"assistant","content":[{"type":"toolCall","name":"x"}]}"#,
        r#"{"role":"bashExecution","command":"ls"}"#,
        r#"{"role":"branchSummary"}"#,
        r#"{"role":7}"#,
    ] {
        let v = json(bad);
        let ours = message_tokens_exact(&Val::new(&v), Encoding::O200kBase, RULES).unwrap_err();
        let theirs = estimate_tokens(&Val::new(&v), RULES).unwrap_err();
        assert_eq!(ours, theirs, "{bad}");
    }
}

#[test]
fn cl100k_differs_where_the_vocabularies_do() {
    let m = json(r#"{"role":"user","content":"你好，世界"}"#);
    assert_eq!(
        message_tokens_exact(&Val::new(&m), Encoding::O200kBase, RULES).unwrap(),
        3
    );
    assert_eq!(
        message_tokens_exact(&Val::new(&m), Encoding::Cl100kBase, RULES).unwrap(),
        6
    );
}
