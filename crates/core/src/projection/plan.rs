//! The projected messages as a plan the JS side builds objects from
//! (`projectionOfPlan` in flat-messages.js): `{ codes, values, shorts,
//! args }`. The codes (a `Float64Array`) give message and block kinds,
//! flags, timestamps and where each text is; a text is named by one code
//! `r`: `r >= 0` is element `r` of the flat form's texts array (the
//! caller's own string), `-1` is `shorts.slice(start, end)` with the next
//! two codes (`shorts` holds the short strings the plan names, one after
//! another), and `r <= -2` is `values[-2 - r]`, for texts read natively or
//! made here. A tool call's arguments are, where they can be, the next
//! object of `JSON.parse(args)` (one array for all of them); otherwise
//! each is given key by key, its value as [`PLAN_NO_JSON`] (undefined),
//! [`PLAN_JSON`] and the text of its JSON, or [`PLAN_STRING_VALUE`] and the
//! index of the string it is in the texts array. Building
//! objects from JS is far cheaper than through N-API, and one parse is
//! cheaper than one per argument.
//!
//! [`PlanWriter`] is the napi-free part: the binding gives it the values
//! array to fill ([`PlanValues`]) and tells where each text comes from
//! ([`PlanText`]).

use std::marker::PhantomData;

use rustc_hash::FxHashMap;

use crate::boundary_codes::plan as codes;
use crate::error::Result;
use crate::js::string::JsStr;
use crate::projection::tool_results::TOOL_RESULT_PLACEHOLDER;
use crate::projection::{keeps_assistant_block, Projected};
use crate::transcript::llm_message::{Block, Message, ToolResultMessage, UserContent};
use crate::transcript::recipe::Labels;
use crate::transcript::text::Text;

/// The plan's codes ([`crate::boundary_codes::plan`], which
/// flat-messages.js checks its own against), as the numbers it is written
/// in.
pub const PLAN_USER_TEXT: f64 = codes::USER_TEXT as f64;
pub const PLAN_USER: f64 = codes::USER as f64;
pub const PLAN_ASSISTANT: f64 = codes::ASSISTANT as f64;
pub const PLAN_TOOL_RESULT: f64 = codes::TOOL_RESULT as f64;
pub const PLAN_TEXT: f64 = codes::TEXT as f64;
pub const PLAN_THINKING: f64 = codes::THINKING as f64;
pub const PLAN_TOOL_CALL: f64 = codes::TOOL_CALL as f64;
pub const PLAN_IMAGE: f64 = codes::IMAGE as f64;
pub const PLAN_SHORT: f64 = codes::SHORT as f64;
pub const PLAN_VALUE_BASE: f64 = codes::VALUE_BASE as f64;
pub const PLAN_PARSED_ARGS: f64 = codes::PARSED_ARGS as f64;
pub const PLAN_NO_JSON: f64 = codes::NO_JSON as f64;
pub const PLAN_JSON: f64 = codes::JSON as f64;
pub const PLAN_STRING_VALUE: f64 = codes::STRING_VALUE as f64;
/// Made-here values shorter than this (in UTF-8 bytes) are looked up
/// before being added.
const RECURRING_MAX_BYTES: usize = 32;

/// Where a text of the projected messages comes from.
pub enum PlanSource<'a> {
    /// Element `index` of the flat form's texts array.
    Indexed(u32),
    /// Units of the flat form's short strings.
    Short(&'a [u16]),
    /// Text made here.
    Made(&'a JsStr),
    /// The caller's own string, read natively.
    Caller,
}

/// A text the plan can name.
pub trait PlanText: Text {
    fn plan_source(&self) -> PlanSource<'_>;
    /// The units of a short string; `None` for any other text.
    fn short_units(&self) -> Option<&[u16]> {
        match self.plan_source() {
            PlanSource::Short(units) => Some(units),
            _ => None,
        }
    }
    /// For the JSON of a string value of the flat form's texts array (a
    /// long tool-call argument), that string's index: the argument's copy
    /// is that string, named rather than parsed.
    fn json_of_index(&self) -> Option<u32> {
        None
    }
}

/// A value for the plan's values array.
pub enum PlanValue<'a, T> {
    Str(&'a str),
    JsStr(&'a JsStr),
    /// The caller's own string (a [`PlanSource::Caller`] text).
    Caller(&'a T),
}

/// The plan's values array: element `index` is to be `value`; indices
/// come in order from 0.
pub trait PlanValues<T> {
    fn set(&mut self, index: u32, value: PlanValue<'_, T>) -> Result<()>;
}

/// A plan's parts: the codes, the values written, the short strings' units
/// and the arguments' JSON (`[{...},...]`, when there are any).
pub struct PlanParts<V> {
    pub codes: Vec<f64>,
    pub values: V,
    pub shorts: Labels,
    pub args: Option<Labels>,
}

/// Writes a plan (see the module docs) of messages with texts `T`.
pub struct PlanWriter<T, V> {
    codes: Vec<f64>,
    values: V,
    count: u32,
    shorts: Labels,
    /// `[{"key":json,...},...` of the arguments written so far.
    args: Labels,
    /// The values made here that recur (the placeholders), by their text:
    /// a map, as a tool call's keys made here (a string's indices) are
    /// short texts too, each new.
    recurring: FxHashMap<Box<str>, f64>,
    text: PhantomData<fn(&T)>,
}

impl<T: PlanText, V: PlanValues<T>> PlanWriter<T, V> {
    /// A writer for about `messages` messages.
    pub fn new(values: V, messages: usize) -> Self {
        PlanWriter {
            // About what a message with two blocks takes.
            codes: Vec::with_capacity(messages.saturating_mul(16).min(1 << 24)),
            values,
            count: 0,
            shorts: Labels::new(),
            args: Labels::new(),
            recurring: FxHashMap::default(),
            text: PhantomData,
        }
    }

    /// `[codes, values, shorts, args]`.
    pub fn finish(mut self) -> PlanParts<V> {
        let args = if self.args.is_empty() {
            None
        } else {
            self.args.push_ascii(b"]");
            Some(self.args)
        };
        PlanParts {
            codes: self.codes,
            values: self.values,
            shorts: self.shorts,
            args,
        }
    }

    fn flag(&mut self, b: bool) {
        self.codes.push(if b { 1.0 } else { 0.0 });
    }

    fn head(&mut self, kind: f64, timestamp: Option<f64>) {
        self.codes.push(kind);
        self.flag(timestamp.is_some());
        self.codes.push(timestamp.unwrap_or(0.0));
    }

    /// Adds a value; the code naming it goes into the codes.
    fn value(&mut self, v: PlanValue<'_, T>) -> Result<f64> {
        self.values.set(self.count, v)?;
        let code = PLAN_VALUE_BASE - f64::from(self.count);
        self.codes.push(code);
        self.count += 1;
        Ok(code)
    }

    fn text(&mut self, t: &T) -> Result<()> {
        match t.plan_source() {
            PlanSource::Indexed(index) => self.codes.push(f64::from(index)),
            PlanSource::Short(units) => {
                let start = self.shorts.len();
                self.shorts.extend(units);
                self.codes
                    .extend([PLAN_SHORT, start as f64, self.shorts.len() as f64]);
            }
            PlanSource::Made(made) => match made.as_str() {
                Some(s) => self.made_text(s)?,
                None => self.value(PlanValue::JsStr(made)).map(drop)?,
            },
            PlanSource::Caller => self.value(PlanValue::Caller(t)).map(drop)?,
        }
        Ok(())
    }

    /// A text made here: a short one (a placeholder, as a rule) is added to
    /// the values once and named again after that.
    fn made_text(&mut self, s: &str) -> Result<()> {
        if s.len() >= RECURRING_MAX_BYTES {
            return self.value(PlanValue::Str(s)).map(drop);
        }
        if let Some(&code) = self.recurring.get(s) {
            self.codes.push(code);
            return Ok(());
        }
        let code = self.value(PlanValue::Str(s))?;
        self.recurring.insert(s.into(), code);
        Ok(())
    }

    /// Appends `{"key":json,...}` to the arguments text when every key is
    /// a short string with nothing to escape and every value has JSON (that
    /// of `undefined` is none, and the copy must still have the key);
    /// otherwise leaves it as it was and says so.
    fn parsed_args(&mut self, args: &[(T, Option<T>)]) -> bool {
        let mark = self.args.len();
        self.args.push_ascii(if mark == 0 { b"[{" } else { b",{" });
        for (i, (key, json)) in args.iter().enumerate() {
            let key = key.short_units().filter(|key| {
                !key.iter()
                    .any(|&u| u < 0x20 || u == 0x22 || u == 0x5c || (0xd800..0xe000).contains(&u))
            });
            let (Some(key), Some(json)) = (key, json.as_ref().and_then(PlanText::short_units))
            else {
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

    fn block(&mut self, b: &Block<T>) -> Result<()> {
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
                    Some(m) => self.value(PlanValue::JsStr(m)).map(drop),
                    None => Ok(()),
                }
            }
        }
    }

    /// The count of the blocks `keep` keeps, then those blocks.
    fn blocks(&mut self, blocks: &[Block<T>], keep: impl Fn(&Block<T>) -> bool) -> Result<()> {
        self.codes
            .push(blocks.iter().filter(|b| keep(b)).count() as f64);
        (blocks.iter())
            .filter(|b| keep(b))
            .try_for_each(|b| self.block(b))
    }

    /// A tool result's fields before its blocks.
    fn tool_result_head(&mut self, r: &ToolResultMessage<T>) -> Result<()> {
        self.head(PLAN_TOOL_RESULT, r.timestamp);
        self.text(&r.tool_call_id)?;
        self.text(&r.tool_name)?;
        self.flag(r.is_error);
        Ok(())
    }

    fn message(&mut self, m: &Message<T>) -> Result<()> {
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

    /// Writes one message of the projection.
    pub fn projected(&mut self, m: Projected<'_, T>) -> Result<()> {
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
}
