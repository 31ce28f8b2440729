//! Exports for the summarizer's transcript: `serializeConversation`,
//! `projectForSummary` and the round split behind `splitUserRounds`.
//! The caller's messages are only read; projections are new objects.

use std::ffi::CStr;
use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use super::errors::run;
use super::flat::{Flat, MessageSource, Scratch};
use super::js::{check, Cx, JsVal};
use super::js_text::{JsText, RecipeSink};
use super::out::{Arg, Raw, RawValue};
use crate::core::error::{Context, Error, Result};
use crate::core::jsstr::JsStr;
use crate::core::llm_message::{
    from_agent_messages_with, opens_round, Block, Message, ReadLimits, UserContent,
};
use crate::core::projection::{
    is_claude_family, project, round_ranges, serialize_projection, ProjectOptions,
    DEFAULT_TOOL_RESULT_BODIES,
};
use crate::core::serialize::{Parts, SerializeOptions};
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
    flat: Option<Arg>,
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
        let mut source = match &flat {
            Some(flat) => MessageSource::Flat(Flat::new(cx, flat.0)?),
            None => MessageSource::Native { next: 0, len },
        };
        let strings = match &source {
            MessageSource::Flat(flat) => Some(flat.strings()),
            MessageSource::Native { .. } => None,
        };
        let mut sink = RecipeSink::new(cx, strings)?;
        let mut parts = Parts::new(&mut sink);
        let mut scratch = Scratch::default();
        // A batch of messages at a time, each in a handle scope of its own:
        // the texts are only borrowed until their batch is written (the
        // pieces array keeps what it was given), so the handles of a long
        // conversation never pile up.
        while !source.is_done() {
            list.scoped(|| -> Result<()> {
                for _ in 0..SERIALIZE_BATCH {
                    if source.is_done() {
                        break;
                    }
                    // Written as soon as read: flat messages straight
                    // from their codes, others read and dropped, so the
                    // next message reuses the memory this one freed.
                    source.write(&list, limits, &mut parts, options, &mut scratch)?;
                }
                // The batch's native texts are handles of this scope.
                parts.sink().flush();
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
    flat: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let (messages, options, strings) = read_for_projection(
            cx,
            &messages,
            &options,
            &argument_entries,
            flat.as_ref(),
            ReadLimits::borrowed_transcript(),
        )?;
        let mut sink = RecipeSink::new(cx, strings)?;
        serialize_projection(&messages, &options, &mut sink);
        Ok(RawValue(sink.finish()?))
    })
}

/// `messages`, texts read in place (from their flat form when index.js
/// made one, whose strings array comes back too), and the projection
/// options read.
fn read_for_projection<'c>(
    cx: &'c Cx,
    messages: &Arg,
    options: &Option<Arg>,
    argument_entries: &Option<Arg>,
    flat: Option<&Arg>,
    limits: ReadLimits,
) -> Result<(Vec<Message<JsText<'c>>>, ProjectOptions, Option<Raw>)> {
    use_transcript_helpers(cx, argument_entries)?;
    let options = match options {
        Some(o) => read_project_options(&cx.wrap(o.0)?).within("options")?,
        None => ProjectOptions::default(),
    };
    let list = cx.wrap(messages.0)?;
    let (messages, strings) = match flat {
        Some(flat) => {
            let mut flat = Flat::new(cx, flat.0)?;
            let strings = flat.strings();
            (flat.messages(&list, limits), Some(strings))
        }
        None => (from_agent_messages_with(&list, limits), None),
    };
    Ok((messages.within("messages")?, options, strings))
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

/// The projected messages as a plan index.js builds objects from: numbers
/// (message and block kinds, flags, timestamps, value positions) and the
/// values they refer to (your own strings where texts were read in place).
/// Building objects from JS is far cheaper than through N-API.
struct PlanWriter<'c> {
    cx: &'c Cx,
    codes: Vec<f64>,
    values: Raw,
    count: u32,
}

/// Message kinds of the plan (index.js reads the same numbers).
const PLAN_USER_TEXT: f64 = 1.0;
const PLAN_USER: f64 = 2.0;
const PLAN_ASSISTANT: f64 = 3.0;
const PLAN_TOOL_RESULT: f64 = 4.0;
/// Block kinds.
const PLAN_TEXT: f64 = 1.0;
const PLAN_THINKING: f64 = 2.0;
const PLAN_TOOL_CALL: f64 = 3.0;
const PLAN_IMAGE: f64 = 4.0;

impl<'c> PlanWriter<'c> {
    fn new(cx: &'c Cx) -> Result<Self> {
        let mut values = ptr::null_mut();
        check(unsafe { sys::napi_create_array(cx.env, &mut values) })?;
        Ok(PlanWriter {
            cx,
            codes: Vec::new(),
            values,
            count: 0,
        })
    }

    /// Adds a value; its position goes into the codes.
    fn value(&mut self, v: Raw) -> Result<()> {
        check(unsafe { sys::napi_set_element(self.cx.env, self.values, self.count, v) })?;
        self.codes.push(f64::from(self.count));
        self.count += 1;
        Ok(())
    }

    fn text(&mut self, t: &JsText<'_>) -> Result<()> {
        self.value(t.to_js_value(self.cx)?)
    }

    fn js_str(&mut self, s: &JsStr) -> Result<()> {
        self.value(self.cx.js_str(s)?)
    }

    fn flag(&mut self, b: bool) {
        self.codes.push(if b { 1.0 } else { 0.0 });
    }

    fn block(&mut self, b: &Block<JsText<'_>>) -> Result<()> {
        match b {
            Block::Text(t) => {
                self.codes.push(PLAN_TEXT);
                self.text(t)
            }
            Block::Thinking { thinking, redacted } => {
                self.codes.push(PLAN_THINKING);
                self.text(thinking)?;
                self.flag(*redacted);
                Ok(())
            }
            Block::ToolCall(call) => {
                self.codes.push(PLAN_TOOL_CALL);
                self.text(&call.id)?;
                self.text(&call.name)?;
                self.codes.push(call.args.len() as f64);
                for (k, json) in &call.args {
                    self.text(k)?;
                    match json {
                        Some(json) => self.text(json)?,
                        // `JSON.stringify` gave undefined: the copy holds undefined.
                        None => self.codes.push(-1.0),
                    }
                }
                Ok(())
            }
            Block::Image { mime_type } => {
                self.codes.push(PLAN_IMAGE);
                match mime_type {
                    Some(m) => self.js_str(m),
                    None => {
                        self.codes.push(-1.0);
                        Ok(())
                    }
                }
            }
        }
    }

    fn blocks(&mut self, blocks: &[Block<JsText<'_>>]) -> Result<()> {
        self.codes.push(blocks.len() as f64);
        blocks.iter().try_for_each(|b| self.block(b))
    }

    fn message(&mut self, m: &Message<JsText<'_>>) -> Result<()> {
        let kind = match m {
            Message::User(u) => match u.content {
                UserContent::Text(_) => PLAN_USER_TEXT,
                UserContent::Blocks(_) => PLAN_USER,
            },
            Message::Assistant(_) => PLAN_ASSISTANT,
            Message::ToolResult(_) => PLAN_TOOL_RESULT,
        };
        self.codes.push(kind);
        self.flag(m.timestamp().is_some());
        self.codes.push(m.timestamp().unwrap_or(0.0));
        match m {
            Message::User(u) => match &u.content {
                UserContent::Text(t) => self.text(t),
                UserContent::Blocks(b) => self.blocks(b),
            },
            Message::Assistant(a) => self.blocks(&a.content),
            Message::ToolResult(r) => {
                self.text(&r.tool_call_id)?;
                self.text(&r.tool_name)?;
                self.flag(r.is_error);
                self.blocks(&r.content)
            }
        }
    }

    /// `[codes, values]`.
    fn finish(self) -> Result<Raw> {
        let codes = self.cx.f64_array(&self.codes)?;
        self.cx.array([Ok(codes), Ok(self.values)].into_iter())
    }
}

/// `projectForSummary(messages, options?)`'s plan; index.js builds the new
/// plain message objects from it.
#[napi(js_name = "projectionPlan")]
pub fn projection_plan(
    env: Env,
    messages: Arg,
    options: Option<Arg>,
    argument_entries: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        // Whole texts with timestamps: the objects carry them, so no flat
        // form (it has none).
        let (messages, options, _) = read_for_projection(
            cx,
            &messages,
            &options,
            &argument_entries,
            None,
            ReadLimits::default(),
        )?;
        let projected = project(&messages, &options);
        let mut plan = PlanWriter::new(cx)?;
        for m in &projected {
            plan.message(m)?;
        }
        Ok(RawValue(plan.finish()?))
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
