//! Reading the plain arguments several exports take: numbers, indices, the
//! `tokenizer` option, and the fields of an optional options object.

use std::ffi::CStr;
use std::ptr;

use napi::sys;

use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::to_number::Primitive;
use prime_compaction_core::js::view::{Key, Kind, View};
use prime_compaction_core::plan::settings::read_counter;
use prime_compaction_core::projection::is_claude_family;
use prime_compaction_core::tokens::estimate::Counter;

use crate::js::out::Arg;
use crate::js::view::{check, Cx, JsVal};

pub fn arg<'c>(cx: &'c Cx, a: &Arg) -> Result<JsVal<'c>> {
    cx.wrap(a.0)
}

pub fn number_arg(cx: &Cx, a: &Arg, name: &str) -> Result<f64> {
    let v = arg(cx, a)?;
    v.number().ok_or_else(|| {
        Error::type_error(
            name,
            format!("expected a number, got {}", v.kind().describe()),
        )
    })
}

/// `options.tokenizer` of the options argument this package adds to an
/// agent function (`estimateTokens`, `findCutPoint`). One that is not an
/// object is ignored, as the agent ignores an extra argument: the index
/// `messages.map(estimateTokens)` passes.
pub fn counter_option(cx: &Cx, options: &Option<Arg>) -> Result<Counter> {
    match added_options(cx, options)? {
        None => Ok(Counter::Estimate),
        Some(v) => read_counter(&v).within("options"),
    }
}

/// The options argument this package adds to an agent function, when it is
/// an object (see [`counter_option`]).
pub fn added_options<'c>(cx: &'c Cx, options: &Option<Arg>) -> Result<Option<JsVal<'c>>> {
    let Some(o) = options else {
        return Ok(None);
    };
    let v = arg(cx, o)?;
    Ok(v.is_object_like().then_some(v))
}

/// `options[name]`, with `options` itself optional.
pub fn option<'c>(options: &JsVal<'c>, name: &CStr) -> Result<JsVal<'c>> {
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
pub fn count_option(options: &JsVal<'_>, name: &CStr) -> Result<Option<usize>> {
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

/// Whether `model` (an `options.model`) is a Claude-family summarizer,
/// whose transcripts keep no reasoning: false without one (undefined or
/// null); a `TypeError` at `field` for a value that is no model object.
pub fn claude_summarizer(model: &JsVal<'_>, field: &str) -> Result<bool> {
    if matches!(model.kind(), Kind::Undefined | Kind::Null) {
        return Ok(false);
    }
    model.expect_object(field, "a model object")?;
    let s = |key| -> Result<Option<JsStr>> { Ok(model.get(key)?.string()) };
    Ok(is_claude_family(
        s(Key::Api)?.as_ref(),
        s(Key::Provider)?.as_ref(),
        s(Key::Id)?.as_ref(),
    ))
}

/// `options.reasoning !== false`.
pub fn reasoning_option(options: &JsVal<'_>) -> Result<bool> {
    Ok(option(options, c"reasoning")?.boolean() != Some(false))
}

/// `value[name]` as JS reads a property: `undefined` on primitives (and on
/// null or undefined, where JS would throw; callers that care check first).
pub fn property<'c>(value: &JsVal<'c>, name: &CStr) -> Result<JsVal<'c>> {
    let cx = value.cx;
    if !value.is_object_like() {
        return cx.wrap(cx.undefined());
    }
    let mut out = ptr::null_mut();
    check(unsafe { sys::napi_get_named_property(cx.env, value.raw, name.as_ptr(), &mut out) })?;
    cx.wrap(out)
}

/// The value as a [`Primitive`], for rules that read it as JS arithmetic does.
pub fn primitive(value: &JsVal<'_>) -> Primitive {
    match value.kind() {
        Kind::Undefined => Primitive::Undefined,
        Kind::Null => Primitive::Null,
        Kind::Bool => Primitive::Bool(value.boolean().unwrap_or(false)),
        Kind::Number => Primitive::Number(value.number().unwrap_or(f64::NAN)),
        Kind::String => Primitive::String(value.string().unwrap_or_default()),
        Kind::Object | Kind::Array | Kind::Function | Kind::Other => Primitive::Other,
    }
}
