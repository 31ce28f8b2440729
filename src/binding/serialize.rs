//! Exports for the summarizer's transcript: `serializeConversation`,
//! `projectForSummary` and the round split behind `splitUserRounds`.
//! The caller's messages are only read; projections are new objects.

use std::ffi::CStr;
use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use super::errors::run;
use super::js::{check, Cx, JsVal};
use super::js_text::{JsText, PieceSink};
use super::out::{Arg, Raw, RawValue};
use crate::core::error::{Context, Error, Result};
use crate::core::json::{parse, Value};
use crate::core::jsstr::JsStr;
use crate::core::llm_message::{
    from_agent_message_with, from_agent_messages, from_agent_messages_with, opens_round, Block,
    Message, ReadLimits, ToolCall, UserContent,
};
use crate::core::projection::{
    is_claude_family, project, round_ranges, ProjectOptions, DEFAULT_TOOL_RESULT_BODIES,
};
use crate::core::serialize::{push_message, serialize_into, Parts, SerializeOptions};
use crate::core::view::{Key, Kind, View};

/// `options[name]`, with `options` itself optional.
fn option<'c>(options: &JsVal<'c>, name: &CStr) -> Result<JsVal<'c>> {
    let cx = options.cx;
    match options.kind() {
        Kind::Undefined => return cx.wrap(cx.undefined()),
        Kind::Object => {}
        other => {
            return Err(Error::type_error(
                "",
                format!("expected an object, got {}", other.describe()),
            ))
        }
    }
    let mut out = ptr::null_mut();
    check(unsafe { sys::napi_get_named_property(cx.env, options.raw, name.as_ptr(), &mut out) })?;
    cx.wrap(out)
}

/// An optional non-negative integer option.
fn count_option(options: &JsVal<'_>, name: &CStr) -> Result<Option<usize>> {
    let field = name.to_str().unwrap_or("option");
    let v = option(options, name)?;
    match v.kind() {
        Kind::Undefined => Ok(None),
        Kind::Number => {
            let n = v.number().unwrap_or(f64::NAN);
            if n.is_nan() || n < 0.0 || n.fract() != 0.0 {
                return Err(Error::range(
                    field,
                    format!("expected a non-negative integer, got {n}"),
                ));
            }
            // Infinity means "no limit".
            Ok(Some(if n > usize::MAX as f64 {
                usize::MAX
            } else {
                n as usize
            }))
        }
        other => Err(Error::type_error(
            field,
            format!("expected a number, got {}", other.describe()),
        )),
    }
}

/// `options.reasoning !== false`.
fn reasoning_option(options: &JsVal<'_>) -> Result<bool> {
    Ok(option(options, c"reasoning")?.boolean() != Some(false))
}

fn messages_arg(cx: &Cx, messages: &Arg) -> Result<Vec<Message>> {
    from_agent_messages(&cx.wrap(messages.0)?).within("messages")
}

/// What reading texts in place needs, set up in the call's outermost scope:
/// index.js's argument-entries helper and the string methods.
fn use_transcript_helpers(cx: &Cx, argument_entries: &Option<Arg>) -> Result<()> {
    cx.use_argument_entries(argument_entries)?;
    cx.use_string_methods()
}

/// `serializeConversation(messages, options?)`.
#[napi(js_name = "serializeConversation")]
pub fn serialize_conversation(
    env: Env,
    messages: Arg,
    options: Option<Arg>,
    argument_entries: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        use_transcript_helpers(cx, &argument_entries)?;
        let reasoning = match &options {
            Some(o) => reasoning_option(&cx.wrap(o.0)?).within("options")?,
            None => true,
        };
        let list = cx.wrap(messages.0)?;
        let len = list.expect_array("messages")?;
        let options = SerializeOptions { reasoning };
        let limits = ReadLimits::borrowed_transcript();
        let mut sink = PieceSink::new(cx)?;
        let mut parts = Parts::new(&mut sink);
        // A batch of messages at a time, each in a handle scope of its own:
        // the texts are only borrowed until their batch is written (the
        // pieces array keeps what it was given), so the handles of a long
        // conversation never pile up.
        for start in (0..len).step_by(SERIALIZE_BATCH) {
            let end = len.min(start + SERIALIZE_BATCH);
            list.scoped(|| -> Result<()> {
                let mut batch: Vec<Message<JsText>> = Vec::with_capacity(end - start);
                for i in start..end {
                    let message = list.at(i).within_with(|| format!("[{i}]"))?;
                    if let Some(m) = from_agent_message_with(&message, limits)
                        .within_with(|| format!("[{i}]"))?
                    {
                        batch.push(m);
                    }
                }
                for m in &batch {
                    push_message(&mut parts, m, options);
                }
                Ok(())
            })
            .within("messages")?;
        }
        Ok(RawValue(sink.finish()?))
    })
}

/// Messages read and written per handle scope by `serializeConversation`.
const SERIALIZE_BATCH: usize = 512;

/// `serializeForSummary(messages, options?)`: the projection serialized, as
/// one call and without building the projected messages.
#[napi(js_name = "serializeForSummary")]
pub fn serialize_for_summary(
    env: Env,
    messages: Arg,
    options: Option<Arg>,
    argument_entries: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        use_transcript_helpers(cx, &argument_entries)?;
        let options = match &options {
            Some(o) => read_project_options(&cx.wrap(o.0)?).within("options")?,
            None => ProjectOptions::default(),
        };
        let messages: Vec<Message<JsText>> =
            from_agent_messages_with(&cx.wrap(messages.0)?, ReadLimits::borrowed_transcript())
                .within("messages")?;
        let projected = project(&messages, &options);
        let mut sink = PieceSink::new(cx)?;
        serialize_into(
            &projected,
            SerializeOptions {
                reasoning: options.reasoning,
            },
            &mut sink,
        );
        Ok(RawValue(sink.finish()?))
    })
}

fn read_project_options(options: &JsVal<'_>) -> Result<ProjectOptions> {
    let model = option(options, c"model")?;
    let claude = if model.is_object_like() {
        let s = |key| -> Result<Option<JsStr>> { Ok(model.get(key)?.string()) };
        is_claude_family(
            s(Key::Api)?.as_ref(),
            s(Key::Provider)?.as_ref(),
            s(Key::Id)?.as_ref(),
        )
    } else {
        false
    };
    Ok(ProjectOptions {
        tool_result_bodies: count_option(options, c"toolResultBodies")?
            .unwrap_or(DEFAULT_TOOL_RESULT_BODIES),
        drop_oldest_rounds: count_option(options, c"dropOldestRounds")?.unwrap_or(0),
        round_bound: count_option(options, c"roundBound")?,
        reasoning: !claude && reasoning_option(options)?,
    })
}

fn set_str(cx: &Cx, o: Raw, name: &CStr, s: &JsStr) -> Result<()> {
    cx.set(o, name, cx.js_str(s)?)
}

/// Creates an own data property, as `JSON.parse` does: a key `__proto__`
/// becomes a property, where assigning it would set the prototype.
fn define(cx: &Cx, obj: Raw, key: Raw, value: Raw) -> Result<()> {
    let descriptor = sys::napi_property_descriptor {
        utf8name: ptr::null(),
        name: key,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
            | sys::PropertyAttributes::enumerable
            | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    check(unsafe { sys::napi_define_properties(cx.env, obj, 1, &descriptor) })
}

fn json_value(cx: &Cx, v: &Value) -> Result<Raw> {
    Ok(match v {
        Value::Null => cx.null()?,
        Value::Bool(b) => cx.boolean(*b)?,
        Value::Number(n) => cx.number(*n)?,
        Value::String(s) => cx.js_str(s)?,
        Value::Array(items) => cx.array(items.iter().map(|i| json_value(cx, i)))?,
        Value::Object(o) => {
            let out = cx.object()?;
            for (k, v) in o.iter() {
                define(cx, out, cx.js_str(k)?, json_value(cx, v)?)?;
            }
            out
        }
    })
}

/// The arguments object back from its per-entry JSON text: a deep copy, as
/// `JSON.parse(JSON.stringify(value))` gives for each entry.
fn arguments(cx: &Cx, call: &ToolCall) -> Result<Raw> {
    let out = cx.object()?;
    for (k, json) in &call.args {
        let value = match json.as_ref().and_then(JsStr::as_str).map(parse) {
            Some(Ok(v)) => json_value(cx, &v)?,
            _ => cx.undefined(),
        };
        define(cx, out, cx.js_str(k)?, value)?;
    }
    Ok(out)
}

fn block(cx: &Cx, b: &Block) -> Result<Raw> {
    let o = cx.object()?;
    match b {
        Block::Text(t) => {
            cx.set(o, c"type", cx.str("text")?)?;
            set_str(cx, o, c"text", t)?;
        }
        Block::Thinking { thinking, redacted } => {
            cx.set(o, c"type", cx.str("thinking")?)?;
            set_str(cx, o, c"thinking", thinking)?;
            if *redacted {
                cx.set(o, c"redacted", cx.boolean(true)?)?;
            }
        }
        Block::ToolCall(call) => {
            cx.set(o, c"type", cx.str("toolCall")?)?;
            set_str(cx, o, c"id", &call.id)?;
            set_str(cx, o, c"name", &call.name)?;
            cx.set(o, c"arguments", arguments(cx, call)?)?;
        }
        Block::Image { mime_type } => {
            cx.set(o, c"type", cx.str("image")?)?;
            if let Some(m) = mime_type {
                set_str(cx, o, c"mimeType", m)?;
            }
        }
    }
    Ok(o)
}

fn blocks(cx: &Cx, blocks: &[Block]) -> Result<Raw> {
    cx.array(blocks.iter().map(|b| block(cx, b)))
}

/// A plain message object in the reference's key order.
fn message(cx: &Cx, m: &Message) -> Result<Raw> {
    let o = cx.object()?;
    match m {
        Message::User(u) => {
            cx.set(o, c"role", cx.str("user")?)?;
            let content = match &u.content {
                UserContent::Text(t) => cx.js_str(t)?,
                UserContent::Blocks(b) => blocks(cx, b)?,
            };
            cx.set(o, c"content", content)?;
        }
        Message::Assistant(a) => {
            cx.set(o, c"role", cx.str("assistant")?)?;
            cx.set(o, c"content", blocks(cx, &a.content)?)?;
        }
        Message::ToolResult(r) => {
            cx.set(o, c"role", cx.str("toolResult")?)?;
            set_str(cx, o, c"toolCallId", &r.tool_call_id)?;
            set_str(cx, o, c"toolName", &r.tool_name)?;
            cx.set(o, c"content", blocks(cx, &r.content)?)?;
            cx.set(o, c"isError", cx.boolean(r.is_error)?)?;
        }
    }
    if let Some(t) = m.timestamp() {
        cx.set(o, c"timestamp", cx.number(t)?)?;
    }
    Ok(o)
}

/// `projectForSummary(messages, options?)`: new plain message objects.
#[napi(js_name = "projectForSummary")]
pub fn project_for_summary(
    env: Env,
    messages: Arg,
    options: Option<Arg>,
    argument_entries: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        cx.use_argument_entries(&argument_entries)?;
        let options = match &options {
            Some(o) => read_project_options(&cx.wrap(o.0)?).within("options")?,
            None => ProjectOptions::default(),
        };
        let messages = messages_arg(cx, &messages)?;
        let projected = project(&messages, &options);
        Ok(RawValue(
            cx.array(projected.iter().map(|m| message(cx, m)))?,
        ))
    })
}

/// The index where each user round of `messages` starts (first is 0);
/// index.js slices the caller's array with them.
#[napi(js_name = "userRoundStarts")]
pub fn user_round_starts(env: Env, messages: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let list = cx.wrap(messages.0)?;
        let len = list.expect_array("messages")?;
        let mut opens = Vec::with_capacity(crate::core::capacity::reserve_for(len));
        for i in 0..len {
            let open = list
                .scoped(|| opens_round(&list.at(i)?))
                .within_with(|| format!("messages[{i}]"))?;
            opens.push(open);
        }
        let starts: Vec<u32> = round_ranges(opens.into_iter(), len)
            .into_iter()
            .map(|r| r.start as u32)
            .collect();
        Ok(RawValue(cx.u32_array(&starts)?))
    })
}
