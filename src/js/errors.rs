//! Where core errors become JS exceptions (`error_value`), and where the
//! calls on the JS thread catch panics (`run`; `countTokens` catches its
//! own, and work off the JS thread is `guarded` in from_file.rs).

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::{sys, Env, Status};

use crate::js::view::Cx;
use prime_compaction_core::error::{Error, ErrorKind};

/// The JS error `err` becomes: a `TypeError` or `RangeError` with `code`
/// `"InvalidArg"`, or an `Error` with `code` `"GenericFailure"` (the codes
/// napi-rs gives them) or, for a file the system would not open or read,
/// the code Node's `fs` gives (`ENOENT`), its message made from UTF-16 so the caller's text in
/// it (lone surrogates included) is exactly what the caller gave. Null when
/// the environment cannot build one (it is tearing down).
pub fn error_value(env: sys::napi_env, err: &Error) -> sys::napi_value {
    type Create = unsafe fn(
        sys::napi_env,
        sys::napi_value,
        sys::napi_value,
        *mut sys::napi_value,
    ) -> sys::napi_status;
    let (code, create): (&str, Create) = match err.kind {
        ErrorKind::Type => ("InvalidArg", sys::napi_create_type_error),
        ErrorKind::Range => ("InvalidArg", sys::napi_create_range_error),
        ErrorKind::Os(code) => (code, sys::napi_create_error),
        ErrorKind::Invalid | ErrorKind::JsException | ErrorKind::FactsWanted => {
            ("GenericFailure", sys::napi_create_error)
        }
    };
    let units = err.text().to_utf16();
    let mut code_value = std::ptr::null_mut();
    let mut message = std::ptr::null_mut();
    let mut value = std::ptr::null_mut();
    // SAFETY: `env` is the current call's environment; the buffers outlive the calls.
    unsafe {
        if sys::napi_create_string_utf8(
            env,
            code.as_ptr().cast(),
            code.len() as isize,
            &mut code_value,
        ) != sys::Status::napi_ok
            || sys::napi_create_string_utf16(
                env,
                units.as_ptr(),
                units.len() as isize,
                &mut message,
            ) != sys::Status::napi_ok
            || create(env, code_value, message, &mut value) != sys::Status::napi_ok
        {
            return std::ptr::null_mut();
        }
    }
    value
}

/// Throws `err` into `env` and returns the marker error napi-rs expects
/// when an exception is already pending.
pub fn throw(env: sys::napi_env, err: Error) -> napi::Error {
    if err.kind != ErrorKind::JsException {
        let value = error_value(env, &err);
        if !value.is_null() {
            // SAFETY: as above; a failed throw leaves nothing more to do.
            unsafe { sys::napi_throw(env, value) };
        }
    }
    napi::Error::new(Status::PendingException, String::new())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs one exported call: sets up the per-call context, turns core errors
/// into JS exceptions, and keeps a panic from ever reaching Node.
pub fn run<T>(
    env: &Env,
    f: impl FnOnce(&Cx) -> prime_compaction_core::error::Result<T>,
) -> napi::Result<T> {
    let raw = env.raw();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let cx = Cx::new(raw)?;
        f(&cx)
    }));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(throw(raw, err)),
        Err(payload) => Err(throw(raw, Error::internal(panic_message(payload.as_ref())))),
    }
}
