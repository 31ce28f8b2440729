//! `countTokens`: exact BPE token counts.
//!
//! The text crosses N-API once, as UTF-8 written by V8 straight into our
//! buffer (`napi_get_value_string_utf8` replaces lone surrogates with U+FFFD,
//! just as js-tiktoken's `TextEncoder` does). This call skips the per-call
//! [`crate::js::view::Cx`] setup the object-walking exports need: it reads two
//! arguments and nothing else.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use crate::js::errors::throw;
use crate::js::out::Arg;
use crate::js::view::check;
use prime_compaction_core::error::{join, quoted, Error, Result};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::tokens::tokenizer::{count_tokens_str, Encoding};

fn type_of(env: sys::napi_env, raw: sys::napi_value) -> Result<sys::napi_valuetype> {
    let mut t = 0;
    check(unsafe { sys::napi_typeof(env, raw, &mut t) })?;
    Ok(t)
}

fn describe(t: sys::napi_valuetype) -> &'static str {
    match t {
        sys::ValueType::napi_undefined => "undefined",
        sys::ValueType::napi_null => "null",
        sys::ValueType::napi_boolean => "a boolean",
        sys::ValueType::napi_number => "a number",
        sys::ValueType::napi_string => "a string",
        sys::ValueType::napi_function => "a function",
        sys::ValueType::napi_object => "an object",
        _ => "a symbol or bigint",
    }
}

/// A string argument as UTF-8 (lone surrogates become U+FFFD).
fn utf8_arg(env: sys::napi_env, raw: sys::napi_value, name: &str) -> Result<String> {
    let t = type_of(env, raw)?;
    if t != sys::ValueType::napi_string {
        return Err(Error::type_error(
            name,
            format!("expected a string, got {}", describe(t)),
        ));
    }
    let mut len = 0usize;
    check(unsafe { sys::napi_get_value_string_utf8(env, raw, ptr::null_mut(), 0, &mut len) })?;
    let mut buf = vec![0u8; len + 1];
    let mut written = 0usize;
    check(unsafe {
        sys::napi_get_value_string_utf8(env, raw, buf.as_mut_ptr().cast(), buf.len(), &mut written)
    })?;
    buf.truncate(written);
    // V8 writes well-formed UTF-8 (invalid sequences replaced); checked anyway.
    String::from_utf8(buf).map_err(|_| Error::invalid(format!("{name}: V8 returned invalid UTF-8")))
}

/// A string argument as it is (UTF-16, lone surrogates kept), for messages.
fn js_str_arg(env: sys::napi_env, raw: sys::napi_value) -> Result<JsStr> {
    let mut len = 0usize;
    check(unsafe { sys::napi_get_value_string_utf16(env, raw, ptr::null_mut(), 0, &mut len) })?;
    let mut buf = vec![0u16; len + 1];
    let mut written = 0usize;
    check(unsafe {
        sys::napi_get_value_string_utf16(env, raw, buf.as_mut_ptr(), buf.len(), &mut written)
    })?;
    buf.truncate(written);
    Ok(JsStr::from_utf16_vec(buf))
}

/// The optional encoding: `undefined` (or left out) picks the default, as a
/// JS default parameter does; `null` is an error, as it would be there.
fn encoding_arg(env: sys::napi_env, raw: sys::napi_value) -> Result<Encoding> {
    if type_of(env, raw)? == sys::ValueType::napi_undefined {
        return Ok(Encoding::O200kBase);
    }
    let name = utf8_arg(env, raw, "encoding")?;
    if let Some(encoding) = Encoding::from_name(&name) {
        return Ok(encoding);
    }
    let known: Vec<&str> = Encoding::ALL.iter().map(|e| e.name()).collect();
    let known = format!("; expected one of {}", known.join(", "));
    let name = js_str_arg(env, raw)?;
    Err(Error::type_error(
        "encoding",
        join(&[&"unknown encoding ", &quoted(&name), &known]),
    ))
}

/// The exact number of tokens in `text` with `encoding` (`"o200k_base"`, the
/// default, or `"cl100k_base"`). Special tokens such as `<|endoftext|>` count
/// as plain text; lone surrogates count as U+FFFD. Identical to js-tiktoken's
/// `encode(text, [], []).length`.
#[napi(
    js_name = "countTokens",
    ts_args_type = "text: string, encoding?: 'o200k_base' | 'cl100k_base'"
)]
pub fn count_tokens_native(env: Env, text: Arg, encoding: Arg) -> napi::Result<f64> {
    let raw = env.raw();
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<f64> {
        let encoding = encoding_arg(raw, encoding.0)?;
        let text = utf8_arg(raw, text.0, "text")?;
        Ok(count_tokens_str(&text, encoding)? as f64)
    }));
    match outcome {
        Ok(Ok(n)) => Ok(n),
        Ok(Err(err)) => Err(throw(raw, err)),
        Err(_) => Err(throw(
            raw,
            Error::invalid(
                "prime-compaction internal error in countTokens (a bug, please report it)",
            ),
        )),
    }
}
