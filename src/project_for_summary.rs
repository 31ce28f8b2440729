//! `projectForSummary` (as a plan index.js builds the new objects from) and
//! `serializeForSummary` (the projection serialized, in one call). The
//! caller's messages are only read; projections are new objects.

use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use crate::js::args::{count_option, option, reasoning_option};
use crate::js::codes::plan as codes;
use crate::js::errors::run;
use crate::js::flat::Flat;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::text::{use_transcript_helpers, JsText, Labels, RecipeSink};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::error::{Context, Result};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::projection::tool_results::{
    DEFAULT_TOOL_RESULT_BODIES, TOOL_RESULT_PLACEHOLDER,
};
use prime_compaction_core::projection::{
    is_claude_family, keeps_assistant_block, project_each, serialize_projection, ProjectOptions,
    Projected,
};
use prime_compaction_core::transcript::llm_message::{
    from_agent_messages_with, Block, Message, ReadLimits, ToolResultMessage, UserContent,
};

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
            // Timestamps read are in the flat form too (see flatMessages).
            let mut flat = if limits.skip_timestamps {
                Flat::new(cx, flat.0)?
            } else {
                Flat::with_timestamps(cx, flat.0)?
            };
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

/// The projected messages as a plan index.js builds objects from:
/// `[codes, values, shorts, args]`. The codes (a Float64Array) give message
/// and block kinds, flags, timestamps and where each text is; a text is
/// named by one code `r`: `r >= 0` is element `r` of the flat form's texts
/// array (the caller's own string), `-1` is `shorts.slice(start, end)` with
/// the next two codes (`shorts` holds the short strings the plan names, one
/// after another), and `r <= -2` is `values[-2 - r]`, for texts read
/// natively or made here. A tool call's arguments are, where they can be,
/// the next object of `JSON.parse(args)` (one array for all of them).
/// Building objects from JS is far cheaper than through N-API, and one
/// parse is cheaper than one per argument.
struct PlanWriter<'c> {
    cx: &'c Cx,
    codes: Vec<f64>,
    values: Raw,
    count: u32,
    shorts: Labels,
    /// `[{"key":json,...},...` of the arguments written so far.
    args: Labels,
    /// The values made here that recur (the placeholders), by their text.
    recurring: Vec<(Box<str>, f64)>,
}

/// The plan's codes (src/js/codes.rs), as the numbers it is written in.
const PLAN_USER_TEXT: f64 = codes::USER_TEXT as f64;
const PLAN_USER: f64 = codes::USER as f64;
const PLAN_ASSISTANT: f64 = codes::ASSISTANT as f64;
const PLAN_TOOL_RESULT: f64 = codes::TOOL_RESULT as f64;
const PLAN_TEXT: f64 = codes::TEXT as f64;
const PLAN_THINKING: f64 = codes::THINKING as f64;
const PLAN_TOOL_CALL: f64 = codes::TOOL_CALL as f64;
const PLAN_IMAGE: f64 = codes::IMAGE as f64;
const PLAN_SHORT: f64 = codes::SHORT as f64;
const PLAN_VALUE_BASE: f64 = codes::VALUE_BASE as f64;
const PLAN_PARSED_ARGS: f64 = codes::PARSED_ARGS as f64;
const PLAN_NO_JSON: f64 = codes::NO_JSON as f64;
const PLAN_JSON: f64 = codes::JSON as f64;
const PLAN_STRING_VALUE: f64 = codes::STRING_VALUE as f64;
/// Made-here values shorter than this (in UTF-8 bytes) are looked up
/// before being added.
const RECURRING_MAX_BYTES: usize = 32;

impl<'c> PlanWriter<'c> {
    /// A writer for about `messages` messages.
    fn new(cx: &'c Cx, messages: usize) -> Result<Self> {
        let mut values = ptr::null_mut();
        check(unsafe { sys::napi_create_array(cx.env, &mut values) })?;
        Ok(PlanWriter {
            cx,
            // About what a message with two blocks takes.
            codes: Vec::with_capacity(messages.saturating_mul(16).min(1 << 24)),
            values,
            count: 0,
            shorts: Labels::new(),
            args: Labels::new(),
            recurring: Vec::new(),
        })
    }

    /// Adds a value; the code naming it goes into the codes.
    fn value(&mut self, v: Raw) -> Result<f64> {
        check(unsafe { sys::napi_set_element(self.cx.env, self.values, self.count, v) })?;
        let code = PLAN_VALUE_BASE - f64::from(self.count);
        self.codes.push(code);
        self.count += 1;
        Ok(code)
    }

    fn text(&mut self, t: &JsText<'c>) -> Result<()> {
        if let JsText::Indexed { index, .. } = *t {
            self.codes.push(f64::from(index));
        } else if let Some(units) = t.short_units() {
            let start = self.shorts.len();
            self.shorts.extend(units);
            self.codes
                .extend([PLAN_SHORT, start as f64, self.shorts.len() as f64]);
        } else if let JsText::Owned(made) = t {
            match made.as_str() {
                Some(s) => self.made_text(s)?,
                None => self.value(self.cx.js_str(made)?).map(drop)?,
            }
        } else {
            self.value(t.to_js_value(self.cx)?)?;
        }
        Ok(())
    }

    /// A text made here: a short one (a placeholder, as a rule) is added to
    /// the values once and named again after that.
    fn made_text(&mut self, s: &str) -> Result<()> {
        if s.len() >= RECURRING_MAX_BYTES {
            return self.value(self.cx.str(s)?).map(drop);
        }
        if let Some(&(_, code)) = self.recurring.iter().find(|(r, _)| r.as_ref() == s) {
            self.codes.push(code);
            return Ok(());
        }
        let code = self.value(self.cx.str(s)?)?;
        self.recurring.push((s.into(), code));
        Ok(())
    }

    fn flag(&mut self, b: bool) {
        self.codes.push(if b { 1.0 } else { 0.0 });
    }

    /// Appends `{"key":json,...}` to the arguments text when every key is
    /// a short string with nothing to escape and every value has JSON (that
    /// of `undefined` is none, and the copy must still have the key);
    /// otherwise leaves it as it was and says so.
    fn parsed_args(&mut self, args: &[(JsText<'c>, Option<JsText<'c>>)]) -> bool {
        let mark = self.args.len();
        self.args.push_ascii(if mark == 0 { b"[{" } else { b",{" });
        for (i, (key, json)) in args.iter().enumerate() {
            let key = key.short_units().filter(|key| {
                !key.iter()
                    .any(|&u| u < 0x20 || u == 0x22 || u == 0x5c || (0xd800..0xe000).contains(&u))
            });
            let (Some(key), Some(json)) = (key, json.as_ref().and_then(JsText::short_units)) else {
                self.args.truncate(mark);
                return false;
            };
            self.args.push_ascii(if i == 0 { b"\"" } else { b",\"" });
            self.args.extend(key);
            self.args.push_ascii(b"\":");
            self.args.extend(json);
        }
        self.args.push_ascii(b"}");
        true
    }

    fn block(&mut self, b: &Block<JsText<'c>>) -> Result<()> {
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
                if self.parsed_args(&call.args) {
                    self.codes.push(PLAN_PARSED_ARGS);
                    return Ok(());
                }
                self.codes.push(call.args.len() as f64);
                for (k, json) in &call.args {
                    self.text(k)?;
                    match json {
                        // `JSON.stringify` gave undefined: the copy holds undefined.
                        None => self.codes.push(PLAN_NO_JSON),
                        // A string's copy is the string.
                        Some(json) => match json.json_of_index() {
                            Some(index) => {
                                self.codes.extend([PLAN_STRING_VALUE, f64::from(index)]);
                            }
                            None => {
                                self.codes.push(PLAN_JSON);
                                self.text(json)?;
                            }
                        },
                    }
                }
                Ok(())
            }
            Block::Image { mime_type } => {
                self.codes.push(PLAN_IMAGE);
                self.flag(mime_type.is_some());
                match mime_type {
                    Some(m) => self.value(self.cx.js_str(m)?).map(drop),
                    None => Ok(()),
                }
            }
        }
    }

    /// The count of the blocks `keep` keeps, then those blocks.
    fn blocks(
        &mut self,
        blocks: &[Block<JsText<'c>>],
        keep: impl Fn(&Block<JsText<'c>>) -> bool,
    ) -> Result<()> {
        self.codes
            .push(blocks.iter().filter(|b| keep(b)).count() as f64);
        (blocks.iter())
            .filter(|b| keep(b))
            .try_for_each(|b| self.block(b))
    }

    fn head(&mut self, kind: f64, timestamp: Option<f64>) {
        self.codes.push(kind);
        self.flag(timestamp.is_some());
        self.codes.push(timestamp.unwrap_or(0.0));
    }

    /// A tool result's fields before its blocks.
    fn tool_result_head(&mut self, r: &ToolResultMessage<JsText<'c>>) -> Result<()> {
        self.head(PLAN_TOOL_RESULT, r.timestamp);
        self.text(&r.tool_call_id)?;
        self.text(&r.tool_name)?;
        self.flag(r.is_error);
        Ok(())
    }

    fn message(&mut self, m: &Message<JsText<'c>>) -> Result<()> {
        match m {
            Message::User(u) => match &u.content {
                UserContent::Text(t) => {
                    self.head(PLAN_USER_TEXT, u.timestamp);
                    self.text(t)
                }
                UserContent::Blocks(b) => {
                    self.head(PLAN_USER, u.timestamp);
                    self.blocks(b, |_| true)
                }
            },
            Message::Assistant(a) => {
                self.head(PLAN_ASSISTANT, a.timestamp);
                self.blocks(&a.content, |_| true)
            }
            Message::ToolResult(r) => {
                self.tool_result_head(r)?;
                self.blocks(&r.content, |_| true)
            }
        }
    }

    fn projected(&mut self, m: Projected<'_, JsText<'c>>) -> Result<()> {
        match m {
            Projected::Kept(m) => self.message(m),
            Projected::Made(m) => self.message(&m),
            Projected::Filtered { message, reasoning } => {
                self.head(PLAN_ASSISTANT, message.timestamp);
                self.blocks(&message.content, |b| keeps_assistant_block(b, reasoning))
            }
            Projected::BodyElided(r) => {
                // One text block: the placeholder.
                self.tool_result_head(r)?;
                self.codes.extend([1.0, PLAN_TEXT]);
                self.made_text(TOOL_RESULT_PLACEHOLDER)
            }
        }
    }

    /// `[codes, values, shorts, args]`.
    fn finish(mut self) -> Result<Raw> {
        let cx = self.cx;
        let codes = cx.f64_array(&self.codes)?;
        let shorts = self.shorts.string(cx, 0..self.shorts.len())?;
        let args = if self.args.len() == 0 {
            cx.undefined()
        } else {
            self.args.push_ascii(b"]");
            self.args.string(cx, 0..self.args.len())?
        };
        cx.array([Ok(codes), Ok(self.values), Ok(shorts), Ok(args)].into_iter())
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
    flat: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        // Whole texts with timestamps: the copies carry them.
        let (messages, options, _) = read_for_projection(
            cx,
            &messages,
            &options,
            &argument_entries,
            flat.as_ref(),
            ReadLimits::default(),
        )?;
        let mut plan = PlanWriter::new(cx, messages.len())?;
        let mut written = Ok(());
        project_each(&messages, &options, |m| {
            if written.is_ok() {
                written = plan.projected(m);
            }
        });
        written?;
        Ok(RawValue(plan.finish()?))
    })
}
