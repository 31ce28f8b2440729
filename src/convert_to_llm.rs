//! `convertToLlm` and `bashExecutionToText`.

use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::errors::run;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::error::{Context, Result};
use prime_compaction_core::js::elements::Elements;
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::transcript::convert_to_llm::{
    bash_execution_text, convert_message_for, LlmMessage,
};

/// `{ role: "user", content, timestamp }`, in the reference's key order.
fn user_message(cx: &Cx, content: Raw, timestamp: Raw) -> Result<Raw> {
    let o = cx.object()?;
    cx.set(o, c"role", cx.str("user")?)?;
    cx.set(o, c"content", content)?;
    cx.set(o, c"timestamp", timestamp)?;
    Ok(o)
}

fn text_blocks(cx: &Cx, text: Raw) -> Result<Raw> {
    let block = cx.object()?;
    cx.set(block, c"type", cx.str("text")?)?;
    cx.set(block, c"text", text)?;
    cx.array(std::iter::once(Ok(block)))
}

fn converted(cx: &Cx, line: &AgentLine, message: &JsVal<'_>) -> Result<Option<Raw>> {
    let timestamp = || -> Result<Raw> { Ok(message.get(Key::Timestamp)?.raw) };
    Ok(match convert_message_for(line, message)? {
        LlmMessage::Same(_) => Some(message.raw),
        LlmMessage::Dropped => None,
        LlmMessage::UserText(text) => Some(user_message(
            cx,
            text_blocks(cx, cx.js_str(&text)?)?,
            timestamp()?,
        )?),
        LlmMessage::CustomText => {
            let content = message.get(Key::Content)?.raw;
            Some(user_message(cx, text_blocks(cx, content)?, timestamp()?)?)
        }
        LlmMessage::CustomBlocks => Some(user_message(
            cx,
            message.get(Key::Content)?.raw,
            timestamp()?,
        )?),
    })
}

/// `convertToLlm(messages)` as the agent line does it: new objects only
/// where the reference makes them, holes passed over.
#[napi(js_name = "convertToLlm")]
pub fn convert_to_llm(env: Env, messages: Arg, line: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let list = cx.wrap(messages.0)?;
        let len = list.expect_array("messages")?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::napi_create_array(cx.env, &mut out) })?;
        let mut kept = 0u32;
        let mut elements = Elements::new(&list, len);
        while let Some(i) = elements.next_index(&list).within("messages")? {
            list.scoped(|| -> Result<()> {
                let Some(message) = elements.read(&list, i)? else {
                    return Ok(());
                };
                if let Some(value) = converted(cx, line, &message)? {
                    check(unsafe { sys::napi_set_element(cx.env, out, kept, value) })?;
                    kept += 1;
                }
                Ok(())
            })
            .within_with(|| format!("messages[{i}]"))?;
        }
        Ok(RawValue(out))
    })
}

/// `bashExecutionToText(msg)`.
#[napi(js_name = "bashExecutionToText")]
pub fn bash_execution_to_text(env: Env, msg: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let text = bash_execution_text(&cx.wrap(msg.0)?).within("msg")?;
        Ok(RawValue(cx.js_str(&text)?))
    })
}

/// The wire text around summaries in the agent's context: `{ compactionPrefix,
/// compactionSuffix, branchPrefix, branchSuffix }`, from the one place the
/// core defines them.
#[napi(js_name = "summaryWrappers")]
pub fn summary_wrappers(env: Env) -> napi::Result<RawValue> {
    use prime_compaction_core::transcript::convert_to_llm::{
        BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
        COMPACTION_SUMMARY_SUFFIX,
    };
    run(&env, |cx| {
        let o = cx.object()?;
        cx.set(o, c"compactionPrefix", cx.str(COMPACTION_SUMMARY_PREFIX)?)?;
        cx.set(o, c"compactionSuffix", cx.str(COMPACTION_SUMMARY_SUFFIX)?)?;
        cx.set(o, c"branchPrefix", cx.str(BRANCH_SUMMARY_PREFIX)?)?;
        cx.set(o, c"branchSuffix", cx.str(BRANCH_SUMMARY_SUFFIX)?)?;
        Ok(RawValue(o))
    })
}
