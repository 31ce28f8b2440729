//! The jobs behind `compact()`, `generateSummary()` and
//! `generateBranchSummary()`: the binding holds a core
//! [`Job`](prime_compaction_core::summary::compact::Job) between model
//! calls; lib/summarize.js only awaits the caller's `streamFn` and hands
//! each answer back. Each start function takes the agent line, whose rules
//! shape the requests, the failures and the results.

use std::ffi::CStr;

use napi::Env;
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::file_ops::joined_elements;
use crate::js::args::{claude_summarizer, primitive, property};
use crate::js::errors::run;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{Cx, JsVal};
use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::elements::each_element;
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::to_number::to_number;
use prime_compaction_core::js::view::{Key, Kind, View};
use prime_compaction_core::plan::settings::token_setting;
use prime_compaction_core::session::projection::MessageShape;
use prime_compaction_core::summary::compact::{
    AnswerUsage, BranchOptions, Job, JobInput, ModelLimits, Part, Response, Stop,
};
use prime_compaction_core::summary::message_transcript::MessageTranscript;
use prime_compaction_core::summary::prompts::SUMMARIZATION_SYSTEM_PROMPT;
use prime_compaction_core::summary::usage::{
    combine_usage, split_turn_usage, CostNumbers, ResultUsage, UsageNumbers,
};
use prime_compaction_core::transcript::llm_message::transcript_messages;

/// A summarization in progress. `next()` gives the request to send (or
/// null when done), `respond()` takes the model's answer, `result()` the outcome.
#[napi]
pub struct CompactionJob {
    line: &'static AgentLine,
    job: Job<MessageTranscript>,
    first_kept_entry_id: JsStr,
    /// `None` where the preparation has none: the result has it undefined, as the agents' do.
    tokens_before: Option<f64>,
    custom_instructions: Option<JsStr>,
    read_files: Vec<JsStr>,
    modified_files: Vec<JsStr>,
}

fn string_field(v: &JsVal<'_>, key: Key) -> Result<Option<JsStr>> {
    let field = v.get(key)?;
    match field.kind() {
        Kind::Undefined | Kind::Null => Ok(None),
        Kind::String => Ok(field.string()),
        other => Err(Error::type_error(
            key.as_str(),
            format!("expected a string, got {}", other.describe()),
        )),
    }
}

fn optional_string(v: &JsVal<'_>, name: &str) -> Result<Option<JsStr>> {
    match v.kind() {
        Kind::Undefined | Kind::Null => Ok(None),
        Kind::String => Ok(v.string().filter(|s| !s.is_empty())),
        other => Err(Error::type_error(
            name,
            format!("expected a string, got {}", other.describe()),
        )),
    }
}

/// A number field, `None` when undefined; any other type is a `TypeError`.
fn optional_number_field(v: &JsVal<'_>, key: Key) -> Result<Option<f64>> {
    let field = v.get(key)?;
    match field.kind() {
        Kind::Number => Ok(Some(field.number().unwrap_or(f64::NAN))),
        Kind::Undefined => Ok(None),
        other => Err(Error::type_error(
            key.as_str(),
            format!("expected a number, got {}", other.describe()),
        )),
    }
}

/// `{ readFiles, modifiedFiles }` (computed by `computeFileLists` in
/// lib/api.js, so any values), as the summary's file tags show them.
fn file_lists(lists: &JsVal<'_>) -> Result<(Vec<JsStr>, Vec<JsStr>)> {
    Ok((
        joined_elements(&lists.get(Key::ReadFiles)?, "readFiles")?,
        joined_elements(&lists.get(Key::ModifiedFiles)?, "modifiedFiles")?,
    ))
}

/// What a summarization job is made of; the three entry points differ
/// only in where the parts come from.
struct Parts {
    line: &'static AgentLine,
    history: Vec<prime_compaction_core::transcript::llm_message::Message>,
    history_is_empty: bool,
    turn_prefix: Option<Vec<prime_compaction_core::transcript::llm_message::Message>>,
    previous_summary: Option<JsStr>,
    custom_instructions: Option<JsStr>,
    reserve_tokens: f64,
    facts: ModelFacts,
    read_files: Vec<JsStr>,
    modified_files: Vec<JsStr>,
    branch: Option<BranchOptions>,
    first_kept_entry_id: JsStr,
    /// `None` where the preparation has none: the result has it undefined, as the agents' do.
    tokens_before: Option<f64>,
}

impl Parts {
    fn new(
        line: &'static AgentLine,
        history: Vec<prime_compaction_core::transcript::llm_message::Message>,
        facts: ModelFacts,
        reserve_tokens: f64,
        custom_instructions: Option<JsStr>,
    ) -> Parts {
        Parts {
            line,
            history,
            history_is_empty: false,
            turn_prefix: None,
            previous_summary: None,
            custom_instructions,
            reserve_tokens,
            facts,
            read_files: Vec::new(),
            modified_files: Vec::new(),
            branch: None,
            first_kept_entry_id: JsStr::empty(),
            tokens_before: None,
        }
    }
}

impl CompactionJob {
    fn new(p: Parts) -> CompactionJob {
        let reasoning = p.facts.reasoning;
        let transcript = |messages| MessageTranscript {
            messages,
            reasoning,
        };
        let job = Job::new(JobInput {
            line: p.line,
            wants_reasoning: p.facts.wants_reasoning,
            history: transcript(p.history),
            history_is_empty: p.history_is_empty,
            turn_prefix: p.turn_prefix.map(transcript),
            previous_summary: p.previous_summary,
            custom_instructions: p.custom_instructions.clone(),
            reserve_tokens: p.reserve_tokens,
            limits: p.facts.limits,
            read_files: p.read_files.clone(),
            modified_files: p.modified_files.clone(),
            branch: p.branch,
        });
        CompactionJob {
            line: p.line,
            job,
            first_kept_entry_id: p.first_kept_entry_id,
            tokens_before: p.tokens_before,
            custom_instructions: p.custom_instructions,
            read_files: p.read_files,
            modified_files: p.modified_files,
        }
    }
}

impl CompactionJob {
    /// The result's `usage`, in lines whose results carry one: the one
    /// answer's own usage value, or a split turn's two added up. `usages`
    /// holds the usage of each accepted answer, in order.
    fn usage_of(&self, cx: &Cx, usages: &Arg) -> Result<Option<Raw>> {
        if !self.line.summary_results.usage {
            return Ok(None);
        }
        let usages = cx.wrap(usages.0)?;
        let at = |i: usize| usages.at(i).within_with(|| format!("usages[{i}]"));
        let which = match self.job.answered() {
            [] => return Ok(Some(cx.undefined())),
            [Part::History, Part::TurnPrefix] => {
                split_turn_usage(at(0)?.is_object_like(), at(1)?.is_object_like())
            }
            parts => ResultUsage::Answer(parts.len() - 1),
        };
        Ok(Some(match which {
            ResultUsage::Answer(i) => at(i)?.raw,
            ResultUsage::Sum(a, b) => usage_object(
                cx,
                &combine_usage(&usage_numbers(&at(a)?)?, &usage_numbers(&at(b)?)?),
            )?,
        }))
    }
}

/// `v[name]` as JS arithmetic reads it (`+`, `>`, `Math.min`): a
/// primitive's ToNumber, NaN for an object.
fn arithmetic(v: &JsVal<'_>, name: &std::ffi::CStr) -> Result<f64> {
    Ok(to_number(&primitive(&property(v, name)?)))
}

/// `v[name]`, `None` when it is `undefined` (an optional split of the usage).
fn optional_arithmetic(v: &JsVal<'_>, name: &std::ffi::CStr) -> Result<Option<f64>> {
    let field = property(v, name)?;
    Ok((!field.is_undefined()).then(|| to_number(&primitive(&field))))
}

fn usage_numbers(usage: &JsVal<'_>) -> Result<UsageNumbers> {
    let cost = property(usage, c"cost")?;
    let cost = if cost.is_object_like() {
        Some(CostNumbers {
            input: arithmetic(&cost, c"input")?,
            output: arithmetic(&cost, c"output")?,
            cache_read: arithmetic(&cost, c"cacheRead")?,
            cache_write: arithmetic(&cost, c"cacheWrite")?,
            total: arithmetic(&cost, c"total")?,
            total_from_provider: property(&cost, c"totalFromProvider")?.boolean() == Some(true),
        })
    } else {
        None
    };
    Ok(UsageNumbers {
        input: arithmetic(usage, c"input")?,
        output: arithmetic(usage, c"output")?,
        cache_read: arithmetic(usage, c"cacheRead")?,
        cache_write: arithmetic(usage, c"cacheWrite")?,
        cache_write_1h: optional_arithmetic(usage, c"cacheWrite1h")?,
        reasoning: optional_arithmetic(usage, c"reasoning")?,
        total_tokens: arithmetic(usage, c"totalTokens")?,
        cost,
    })
}

/// A summed usage as an object, in `combineUsage`'s key order.
fn usage_object(cx: &Cx, u: &UsageNumbers) -> Result<Raw> {
    let o = cx.object()?;
    cx.set(o, c"input", cx.number(u.input)?)?;
    cx.set(o, c"output", cx.number(u.output)?)?;
    cx.set(o, c"cacheRead", cx.number(u.cache_read)?)?;
    cx.set(o, c"cacheWrite", cx.number(u.cache_write)?)?;
    if let Some(n) = u.cache_write_1h {
        cx.set(o, c"cacheWrite1h", cx.number(n)?)?;
    }
    if let Some(n) = u.reasoning {
        cx.set(o, c"reasoning", cx.number(n)?)?;
    }
    cx.set(o, c"totalTokens", cx.number(u.total_tokens)?)?;
    if let Some(c) = &u.cost {
        let cost = cx.object()?;
        cx.set(cost, c"input", cx.number(c.input)?)?;
        cx.set(cost, c"output", cx.number(c.output)?)?;
        cx.set(cost, c"cacheRead", cx.number(c.cache_read)?)?;
        cx.set(cost, c"cacheWrite", cx.number(c.cache_write)?)?;
        cx.set(cost, c"total", cx.number(c.total)?)?;
        cx.set(
            cost,
            c"totalFromProvider",
            cx.boolean(c.total_from_provider)?,
        )?;
        cx.set(o, c"cost", cost)?;
    }
    Ok(o)
}

struct ModelFacts {
    limits: ModelLimits,
    /// Keep readable reasoning in the transcript (not for Claude-family summarizers).
    reasoning: bool,
    /// Pass the thinking level on as `reasoning`.
    wants_reasoning: bool,
}

/// What the request depends on in `model`, and whether it gets the thinking
/// level: `model.reasoning` truthy and a level that is truthy and not "off".
/// Its fields are read as the agents read them: `maxTokens` and
/// `contextWindow` by arithmetic (`model.maxTokens > 0`,
/// `model.contextWindow || 128000`: null is none, "4000" is 4000, an object
/// NaN), and `api`, `provider` and `id` (this package's Claude check) only
/// where they are strings.
fn model_facts(model: &JsVal<'_>, thinking_level: &JsVal<'_>) -> Result<ModelFacts> {
    if !model.is_object_like() {
        return Err(Error::type_error(
            "model",
            format!("expected an object, got {}", model.kind().describe()),
        ));
    }
    Ok(ModelFacts {
        limits: ModelLimits {
            max_tokens: arithmetic(model, c"maxTokens")?,
            context_window: arithmetic(model, c"contextWindow")?,
        },
        reasoning: !claude_summarizer(model, "model")?,
        wants_reasoning: property(model, c"reasoning")?.truthy()
            && thinking_level.truthy()
            && !thinking_level.str_is("off"),
    })
}

/// Whether a split turn's `turnPrefixMessages` gets a summary of its own:
/// when its `length` is above 0, as the agents ask. Where they throw
/// (reading the length of null or undefined, mapping what is not an array)
/// it is a `TypeError` naming it.
fn prefix_is_summarized(prefix: &JsVal<'_>) -> Result<bool> {
    if let Some(len) = prefix.array_len() {
        return Ok(len > 0);
    }
    let length = match prefix.kind() {
        Kind::Undefined | Kind::Null => f64::INFINITY,
        Kind::String => prefix.string().map_or(0, |s| s.utf16_len()) as f64,
        // An object's `length` as `> 0` compares it (one that is an object
        // itself is taken for none).
        _ => to_number(&primitive(&property(prefix, c"length")?)),
    };
    if length > 0.0 {
        return Err(Error::type_error(
            "preparation.turnPrefixMessages",
            format!("expected an array, got {}", prefix.kind().describe()),
        ));
    }
    Ok(false)
}

/// Starts `compact(preparation, model, ..., customInstructions)`.
/// `file_lists_of` is lib/summarize.js's `computeFileLists`, called with the
/// preparation's `fileOps` once they are an object, for their
/// `{ readFiles, modifiedFiles }`; undefined where only the requests are
/// wanted, and `fileOps` are not read.
#[napi(js_name = "startCompaction")]
#[allow(clippy::too_many_arguments)] // one per value lib/summarize.js passes on, flat as napi takes them
pub fn start_compaction(
    env: Env,
    preparation: Arg,
    file_lists_of: Arg,
    model: Arg,
    custom: Arg,
    line: Arg,
    thinking_level: Arg,
    argument_entries: Option<Arg>,
) -> napi::Result<CompactionJob> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        cx.use_argument_entries(&argument_entries)?;
        let prep = cx.wrap(preparation.0)?;
        if !prep.is_object_like() {
            return Err(Error::type_error(
                "preparation",
                format!("expected an object, got {}", prep.kind().describe()),
            ));
        }
        let first_kept_entry_id = string_field(&prep, Key::FirstKeptEntryId)
            .within("preparation")?
            .filter(|id| !id.is_empty())
            .ok_or_else(|| {
                Error::invalid("First kept entry has no UUID - session may need migration")
            })?;
        let history_value = prep.get(Key::MessagesToSummarize)?;
        let prefix_value = prep.get(Key::TurnPrefixMessages)?;
        let history =
            transcript_messages(&history_value).within("preparation.messagesToSummarize")?;
        let split = prep.get(Key::IsSplitTurn)?.truthy() && prefix_is_summarized(&prefix_value)?;
        let turn_prefix = if split {
            Some(transcript_messages(&prefix_value).within("preparation.turnPrefixMessages")?)
        } else {
            None
        };
        // Lines that send no maxTokens do not read the settings (1.6's compact() does not).
        let reserve_tokens = if line.summary_requests.max_tokens {
            // Where the agent throws reading settings.reserveTokens; a
            // primitive has none, and gives its NaN budget.
            let settings = prep.get(Key::Settings)?;
            if matches!(settings.kind(), Kind::Undefined | Kind::Null) {
                settings.expect_object("preparation.settings", "compaction settings")?;
            }
            match settings.get(Key::ReserveTokens)? {
                none if none.is_undefined() => f64::NAN,
                field => token_setting(&field, "reserveTokens").within("preparation.settings")?,
            }
        } else {
            f64::NAN
        };
        let (read_files, modified_files) = match cx.wrap(file_lists_of.0)? {
            // Requests only (buildSummaryRequests): they show no file lists.
            f if f.is_undefined() => (Vec::new(), Vec::new()),
            f => {
                // Before any request: the agents find bad file operations
                // only once their summaries have been paid for.
                let file_ops = property(&prep, c"fileOps")?;
                file_ops.expect_object(
                    "preparation.fileOps",
                    "file operations { read, written, edited }",
                )?;
                file_lists(&cx.wrap(cx.call(cx.undefined(), f.raw, file_ops.raw)?)?)?
            }
        };
        let facts = model_facts(&cx.wrap(model.0)?, &cx.wrap(thinking_level.0)?)?;
        let custom_instructions = optional_string(&cx.wrap(custom.0)?, "customInstructions")?;
        Ok(CompactionJob::new(Parts {
            history_is_empty: history_value.array_len().unwrap_or(0) == 0,
            previous_summary: string_field(&prep, Key::PreviousSummary).within("preparation")?,
            turn_prefix,
            first_kept_entry_id,
            tokens_before: optional_number_field(&prep, Key::TokensBefore).within("preparation")?,
            read_files,
            modified_files,
            ..Parts::new(line, history, facts, reserve_tokens, custom_instructions)
        }))
    })
}

/// Starts `generateSummary(currentMessages, model, reserveTokens, ...)`: one
/// summary (with overflow retries), no file lists.
#[napi(js_name = "startSummary")]
#[allow(clippy::too_many_arguments)] // one per value lib/summarize.js passes on, flat as napi takes them
pub fn start_summary(
    env: Env,
    messages: Arg,
    model: Arg,
    reserve_tokens: Arg,
    custom: Arg,
    previous_summary: Arg,
    line: Arg,
    thinking_level: Arg,
    argument_entries: Option<Arg>,
) -> napi::Result<CompactionJob> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        cx.use_argument_entries(&argument_entries)?;
        let history = transcript_messages(&cx.wrap(messages.0)?).within("currentMessages")?;
        let facts = model_facts(&cx.wrap(model.0)?, &cx.wrap(thinking_level.0)?)?;
        // Lines that send no maxTokens do not read reserveTokens (1.6 types it `number | undefined`).
        let reserve_tokens = if line.summary_requests.max_tokens {
            token_setting(&cx.wrap(reserve_tokens.0)?, "reserveTokens")?
        } else {
            f64::NAN
        };
        let custom_instructions = optional_string(&cx.wrap(custom.0)?, "customInstructions")?;
        Ok(CompactionJob::new(Parts {
            previous_summary: optional_string(&cx.wrap(previous_summary.0)?, "previousSummary")?,
            ..Parts::new(line, history, facts, reserve_tokens, custom_instructions)
        }))
    })
}

/// `stopReason` as compaction and the retry loop tell answers apart.
pub fn stop_of(answer: &JsVal<'_>) -> Result<Stop> {
    Ok(
        match answer
            .get(Key::StopReason)?
            .str_one_of(&["length", "error", "aborted"])
        {
            Some(0) => Stop::Length,
            Some(1) => Stop::Error,
            Some(2) => Stop::Aborted,
            _ => Stop::Finished,
        },
    )
}

/// `String(answer.errorMessage)` of an error answer when it is truthy (what
/// a `RegExp` test and a template literal read), `None` otherwise: pi-ai and
/// the agents read it on error answers only.
pub fn error_message_of(answer: &JsVal<'_>, stop: Stop) -> Result<Option<JsStr>> {
    if stop != Stop::Error {
        return Ok(None);
    }
    let message = answer.get(Key::ErrorMessage)?;
    if !message.truthy() {
        return Ok(None);
    }
    message.to_js_string().map(Some)
}

fn read_response(v: &JsVal<'_>) -> Result<Response> {
    if !v.is_object_like() {
        return Err(Error::type_error(
            "",
            format!("expected an assistant message, got {}", v.kind().describe()),
        ));
    }
    let stop = stop_of(v)?;
    // Read as the agents read them: `errorMessage` of an error answer only
    // (`${errorMessage || "Unknown error"}`), the content of a finished one only.
    let error_message = error_message_of(v, stop).within("errorMessage")?;
    let mut texts = Vec::new();
    let mut has_tool_call = false;
    if stop == Stop::Finished {
        let content = v.get(Key::Content)?;
        // (a run of holes is listed past, not walked)
        each_element(&content, content.array_len().unwrap_or(0), |i, block| {
            match block.kind() {
                // A hole, which the agents' filter passes over.
                Kind::Undefined => return Ok(()),
                // The agents read every block's `type`, and throw on a null one.
                Kind::Null => {
                    return Err(Error::type_error(
                        format!("content[{i}]"),
                        "expected a content block, got null",
                    ))
                }
                _ => {}
            }
            match block.get(Key::Type)?.str_one_of(&["text", "toolCall"]) {
                // The texts are joined as `Array.prototype.join` joins them:
                // a missing or null text is "".
                Some(0) => texts.push(match block.get(Key::Text)? {
                    text if matches!(text.kind(), Kind::Undefined | Kind::Null) => JsStr::default(),
                    text => text
                        .to_js_string()
                        .within_with(|| format!("content[{i}].text"))?,
                }),
                Some(1) => has_tool_call = true,
                _ => {}
            }
            Ok(())
        })?;
    }
    // Only a length stop's usage can tell an overflow (fills_the_window);
    // any other answer's is passed on unread, as pi-ai passes it.
    let usage = if stop == Stop::Length {
        let usage = v.get(Key::Usage)?;
        let count = |key| -> Result<Option<f64>> {
            Ok(if usage.is_object_like() {
                usage.get(key)?.number()
            } else {
                None
            })
        };
        AnswerUsage {
            input: count(Key::Input)?,
            cache_read: count(Key::CacheRead)?,
            output: count(Key::Output)?,
        }
    } else {
        AnswerUsage::default()
    };
    Ok(Response {
        stop,
        error_message,
        texts,
        has_tool_call,
        usage,
    })
}

#[napi]
impl CompactionJob {
    /// `{ systemPrompt, prompt, maxTokens?, optionKeys, part, attempt }`, or
    /// null when finished; `maxTokens` only in lines that send one.
    #[napi]
    pub fn next(&self, env: Env) -> napi::Result<RawValue> {
        run(&env, |cx| {
            let Some(request) = self.job.next_request() else {
                return Ok(RawValue(cx.null()?));
            };
            let o = cx.object()?;
            cx.set(o, c"systemPrompt", cx.str(request.system_prompt)?)?;
            cx.set(o, c"prompt", cx.js_str(&request.prompt)?)?;
            if let Some(max_tokens) = request.max_tokens {
                cx.set(o, c"maxTokens", cx.number(max_tokens)?)?;
            }
            let keys = request.option_keys.iter().map(|k| cx.str(k));
            cx.set(o, c"optionKeys", cx.array(keys)?)?;
            let part = match request.part {
                Part::History => "history",
                Part::TurnPrefix => "turnPrefix",
                Part::Branch => "branch",
            };
            cx.set(o, c"part", cx.str(part)?)?;
            cx.set(o, c"attempt", cx.number(f64::from(request.attempt))?)?;
            Ok(RawValue(o))
        })
    }

    /// Drops what the job holds (its transcripts) once its outcome has been
    /// read. The wrapper's finalizer would free it too, but Node runs
    /// finalizers only on a later turn of the event loop, so callers that
    /// never yield (a streamFn answering at once) would hold every job.
    #[napi]
    pub fn release(&mut self) {
        let facts = ModelFacts {
            limits: ModelLimits {
                max_tokens: 0.0,
                context_window: 0.0,
            },
            reasoning: false,
            wants_reasoning: false,
        };
        *self = CompactionJob::new(Parts::new(self.line, Vec::new(), facts, 0.0, None));
    }

    /// Takes the model's answer (an `AssistantMessage`) to the last request:
    /// true when it finished a part, so that its `usage` is the part's (pass
    /// the usages of those answers, in order, to the result methods).
    #[napi]
    pub fn respond(&mut self, env: Env, response: Arg) -> napi::Result<bool> {
        run(&env, |cx| {
            let response = read_response(&cx.wrap(response.0)?).within("response")?;
            self.job.on_response(&response)
        })
    }

    /// The summary text alone (`generateSummary`).
    #[napi]
    pub fn summary(&self, env: Env) -> napi::Result<RawValue> {
        run(&env, |cx| match self.job.summary() {
            Some(s) => Ok(RawValue(cx.js_str(s)?)),
            None => Err(Error::invalid("summarization has not finished")),
        })
    }

    /// `{ text, usage }` (`generateSummaryWithUsage`).
    #[napi(js_name = "summaryWithUsage")]
    pub fn summary_with_usage(&self, env: Env, usages: Arg) -> napi::Result<RawValue> {
        run(&env, |cx| {
            let text = self
                .job
                .summary()
                .ok_or_else(|| Error::invalid("summarization has not finished"))?;
            let o = cx.object()?;
            cx.set(o, c"text", cx.js_str(text)?)?;
            cx.set(
                o,
                c"usage",
                self.usage_of(cx, &usages)?.unwrap_or(cx.undefined()),
            )?;
            Ok(RawValue(o))
        })
    }

    /// The `BranchSummaryResult` of a finished branch summary.
    #[napi(js_name = "branchResult")]
    pub fn branch_result(&self, env: Env, usages: Arg) -> napi::Result<RawValue> {
        run(&env, |cx| {
            let summary = self
                .job
                .summary()
                .ok_or_else(|| Error::invalid("branch summary has not finished"))?;
            let o = cx.object()?;
            cx.set(o, c"summary", cx.js_str(summary)?)?;
            if let Some(usage) = self.usage_of(cx, &usages)? {
                cx.set(o, c"usage", usage)?;
            }
            cx.set(o, c"readFiles", cx.strings(self.read_files.iter())?)?;
            cx.set(o, c"modifiedFiles", cx.strings(self.modified_files.iter())?)?;
            Ok(RawValue(o))
        })
    }

    /// The `CompactionResult`. No `estimatedTokensAfter`: the agent computes
    /// it from the session once the entry is stored.
    #[napi]
    pub fn result(&self, env: Env, usages: Arg) -> napi::Result<RawValue> {
        run(&env, |cx| {
            let summary = self
                .job
                .summary()
                .ok_or_else(|| Error::invalid("compaction has not finished"))?;
            let o = cx.object()?;
            cx.set(o, c"summary", cx.js_str(summary)?)?;
            cx.set(
                o,
                c"firstKeptEntryId",
                cx.js_str(&self.first_kept_entry_id)?,
            )?;
            let tokens_before = match self.tokens_before {
                Some(n) => cx.number(n)?,
                None => cx.undefined(),
            };
            cx.set(o, c"tokensBefore", tokens_before)?;
            if let Some(usage) = self.usage_of(cx, &usages)? {
                cx.set(o, c"usage", usage)?;
            }
            let details = cx.object()?;
            cx.set(details, c"readFiles", cx.strings(self.read_files.iter())?)?;
            cx.set(
                details,
                c"modifiedFiles",
                cx.strings(self.modified_files.iter())?,
            )?;
            cx.set(o, c"details", details)?;
            if let Some(custom) = &self.custom_instructions {
                cx.set(o, c"customInstructions", cx.js_str(custom)?)?;
            }
            Ok(RawValue(o))
        })
    }
}

/// An error about `messages[k]` of a branch summary, named where the value
/// sits among the caller's `entries`: `plan` is the `{ entries, shapes,
/// edits }` of the messages `prepareBranchEntries` built from them.
fn named_in_entries(err: Error, plan: &JsVal<'_>) -> Result<Error> {
    let k = err.path.first().and_then(|seg| {
        seg.as_str()?
            .strip_prefix('[')?
            .strip_suffix(']')?
            .parse()
            .ok()
    });
    // The plan's typed arrays, read only here, on the way out.
    let code = |name: &CStr, k: usize| -> Result<Option<f64>> {
        let array = property(plan, name)?;
        Ok(if array.is_object_like() {
            array.at(k)?.number()
        } else {
            None
        })
    };
    let Some(k) = k else {
        return Ok(err.within("messages"));
    };
    let (Some(entry), Some(shape), Some(edit)) = (
        code(c"entries", k)?,
        code(c"shapes", k)?.and_then(|s| MessageShape::from_code(s as u8)),
        code(c"edits", k)?,
    ) else {
        return Ok(err.within("messages"));
    };
    let label = |i: f64| JsStr::from_string(format!("entries[{i}]"));
    Ok(Error {
        path: shape.source_path(label(entry), label(edit), &err.path[1..]),
        ..err
    })
}

/// Starts the model call of `generateBranchSummary`, after lib/summarize.js
/// ran `prepareBranchEntries`: `file_ops` as for `startCompaction`; `plan`
/// how the messages were built from the entries, for errors to name them.
#[napi(js_name = "startBranchSummary")]
#[allow(clippy::too_many_arguments)] // one per value lib/summarize.js passes on, flat as napi takes them
pub fn start_branch_summary(
    env: Env,
    messages: Arg,
    plan: Arg,
    file_ops: Arg,
    model: Arg,
    reserve_tokens: Arg,
    custom: Arg,
    replace: Arg,
    line: Arg,
    thinking_level: Arg,
    argument_entries: Option<Arg>,
) -> napi::Result<CompactionJob> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        cx.use_argument_entries(&argument_entries)?;
        let plan = cx.wrap(plan.0)?;
        let history = match transcript_messages(&cx.wrap(messages.0)?) {
            Ok(history) => history,
            Err(err) => return Err(named_in_entries(err, &plan)?),
        };
        let facts =
            model_facts(&cx.wrap(model.0)?, &cx.wrap(thinking_level.0)?).within("options")?;
        let reserve_tokens = token_setting(&cx.wrap(reserve_tokens.0)?, "options.reserveTokens")?;
        let (read_files, modified_files) = file_lists(&cx.wrap(file_ops.0)?)?;
        let custom_instructions =
            optional_string(&cx.wrap(custom.0)?, "options.customInstructions")?;
        let replace_instructions = cx.wrap(replace.0)?.truthy();
        Ok(CompactionJob::new(Parts {
            read_files,
            modified_files,
            branch: Some(BranchOptions {
                replace_instructions,
            }),
            ..Parts::new(line, history, facts, reserve_tokens, custom_instructions)
        }))
    })
}

/// `SUMMARIZATION_SYSTEM_PROMPT`.
#[napi(js_name = "summarizationSystemPrompt")]
pub fn summarization_system_prompt() -> &'static str {
    SUMMARIZATION_SYSTEM_PROMPT
}

/// How requests are made and answered in agent line `line`, for
/// lib/summarize.js: `{ transcriptContext, completeSummarization:
/// { cacheRetention } | null, completeSimpleFrom, callParameters }`.
#[napi(js_name = "summaryRules")]
pub fn summary_rules(env: Env, line: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let rules = &line_arg(cx, &line)?.summary_requests;
        let o = cx.object()?;
        cx.set(
            o,
            c"transcriptContext",
            cx.boolean(rules.transcript_context)?,
        )?;
        let complete = match &rules.complete_summarization {
            Some(c) => {
                let options = cx.object()?;
                cx.set(options, c"cacheRetention", cx.str(c.cache_retention)?)?;
                options
            }
            None => cx.null()?,
        };
        cx.set(o, c"completeSummarization", complete)?;
        cx.set(
            o,
            c"completeSimpleFrom",
            cx.str(rules.complete_simple_from)?,
        )?;
        let parameters = cx.array(rules.call_parameters.iter().map(|name| cx.str(name)))?;
        cx.set(o, c"callParameters", parameters)?;
        Ok(RawValue(o))
    })
}
