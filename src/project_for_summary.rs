//! `projectForSummary` (as a plan flat-messages.js builds the new objects
//! from) and `serializeForSummary` (the projection serialized, in one
//! call). The caller's messages are only read; projections are new objects.

use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use crate::js::args::{claude_summarizer, count_option, option, reasoning_option};
use crate::js::errors::run;
use crate::js::flat::{has_long_arguments, Flat};
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::text::{labels_string, use_transcript_helpers, JsText, RecipeSink, StringSink};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::error::{Context, Result};
use prime_compaction_core::projection::plan::{
    PlanParts, PlanSource, PlanText, PlanValue, PlanValues, PlanWriter,
};
use prime_compaction_core::projection::tool_results::DEFAULT_TOOL_RESULT_BODIES;
use prime_compaction_core::projection::{project_each, serialize_projection, ProjectOptions};
use prime_compaction_core::transcript::llm_message::{
    from_agent_messages_with, Message, ReadLimits,
};
use prime_compaction_core::transcript::output_form::written_whole;

/// `serializeForSummary(messages, options?)`: the projection serialized, as
/// one call and without building the projected messages; a string, or a
/// recipe flat-messages.js joins (`output_form` in the core says which).
#[napi(js_name = "serializeForSummary")]
pub fn serialize_for_summary(
    env: Env,
    messages: Arg,
    options: Option<Arg>,
    argument_entries: Option<Arg>,
    flat: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let Read {
            messages,
            options,
            strings,
        } = read_for_projection(
            cx,
            &messages,
            &options,
            &argument_entries,
            flat.as_ref(),
            ReadLimits::borrowed_transcript(),
        )?;
        let long_arguments = match &flat {
            Some(form) => has_long_arguments(cx, form.0)?,
            None => false,
        };
        let whole = written_whole(&messages, long_arguments)
            .and_then(|sizes| StringSink::with_capacity(cx, sizes.capacity(), sizes.texts()));
        if let Some(mut sink) = whole {
            serialize_projection(&messages, &options, &mut sink);
            return Ok(RawValue(sink.finish()?));
        }
        let mut sink = RecipeSink::new(cx, strings)?;
        serialize_projection(&messages, &options, &mut sink);
        Ok(RawValue(sink.finish()?))
    })
}

/// What [`read_for_projection`] read.
struct Read<'c> {
    /// Texts read in place.
    messages: Vec<Message<JsText<'c>>>,
    options: ProjectOptions,
    /// The flat form's strings array, when flat-messages.js made one.
    strings: Option<Raw>,
}

/// The messages, texts read in place (from their flat form when
/// flat-messages.js made one), and the projection options.
fn read_for_projection<'c>(
    cx: &'c Cx,
    messages: &Arg,
    options: &Option<Arg>,
    argument_entries: &Option<Arg>,
    flat: Option<&Arg>,
    limits: ReadLimits,
) -> Result<Read<'c>> {
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
    Ok(Read {
        messages: messages.within("messages")?,
        options,
        strings,
    })
}

fn read_project_options(options: &JsVal<'_>) -> Result<ProjectOptions> {
    let claude = claude_summarizer(&option(options, c"model")?, "model")?;
    Ok(ProjectOptions {
        tool_result_bodies: count_option(options, c"toolResultBodies")?
            .unwrap_or(DEFAULT_TOOL_RESULT_BODIES),
        drop_oldest_rounds: count_option(options, c"dropOldestRounds")?.unwrap_or(0),
        round_bound: count_option(options, c"roundBound")?,
        reasoning: !claude && reasoning_option(options)?,
    })
}

/// The plan's values array ([`PlanValues`]), a JS array.
struct JsValues<'c> {
    cx: &'c Cx,
    values: Raw,
}

impl<'c> PlanValues<JsText<'c>> for JsValues<'c> {
    fn set(&mut self, index: u32, value: PlanValue<'_, JsText<'c>>) -> Result<()> {
        let cx = self.cx;
        let v = match value {
            PlanValue::Str(s) => cx.str(s)?,
            PlanValue::JsStr(s) => cx.js_str(s)?,
            PlanValue::Caller(t) => t.to_js_value(cx)?,
        };
        check(unsafe { sys::napi_set_element(cx.env, self.values, index, v) })
    }
}

impl PlanText for JsText<'_> {
    fn plan_source(&self) -> PlanSource<'_> {
        match self {
            JsText::Indexed { index, .. } => PlanSource::Indexed(*index),
            JsText::Short { .. } => {
                PlanSource::Short(JsText::short_units(self).unwrap_or_default())
            }
            JsText::Owned(made) => PlanSource::Made(made),
            // A long string argument's JSON, made whole where it is named
            // (an argument's JSON is named by its string, `json_of_index`).
            JsText::Js { .. } | JsText::JsonOf { .. } => PlanSource::Caller,
        }
    }

    fn json_of_index(&self) -> Option<u32> {
        JsText::json_of_index(self)
    }
}

/// The projected messages as a plan flat-messages.js builds objects from
/// (`{ codes, values, shorts, args }`, see
/// [`prime_compaction_core::projection::plan`]).
fn plan_object(cx: &Cx, parts: PlanParts<JsValues<'_>>) -> Result<Raw> {
    let codes = cx.f64_array(&parts.codes)?;
    let shorts = labels_string(cx, &parts.shorts, 0..parts.shorts.len())?;
    let args = match &parts.args {
        None => cx.undefined(),
        Some(args) => labels_string(cx, args, 0..args.len())?,
    };
    cx.record(&[
        (c"codes", codes),
        (c"values", parts.values.values),
        (c"shorts", shorts),
        (c"args", args),
    ])
}

/// `projectForSummary(messages, options?)`'s plan; flat-messages.js builds
/// the new plain message objects from it.
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
        let Read {
            messages, options, ..
        } = read_for_projection(
            cx,
            &messages,
            &options,
            &argument_entries,
            flat.as_ref(),
            ReadLimits::default(),
        )?;
        let mut values = ptr::null_mut();
        check(unsafe { sys::napi_create_array(cx.env, &mut values) })?;
        let mut plan = PlanWriter::new(JsValues { cx, values }, messages.len());
        let mut written = Ok(());
        project_each(&messages, &options, |m| {
            if written.is_ok() {
                written = plan.projected(m);
            }
        });
        written?;
        Ok(RawValue(plan_object(cx, plan.finish())?))
    })
}
