//! The one place core errors and panics become JS exceptions.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::{JsError, JsRangeError, JsTypeError};
use napi::{sys, Env, Status};

use crate::js::view::Cx;
use prime_compaction_core::error::{Error, ErrorKind};

/// Throws `err` into `env` and returns the marker error napi-rs expects
/// when an exception is already pending.
pub fn throw(env: sys::napi_env, err: Error) -> napi::Error {
    let message = err.to_string();
    unsafe {
        match err.kind {
            ErrorKind::JsException => {}
            ErrorKind::Type => {
                JsTypeError::from(napi::Error::new(Status::InvalidArg, message)).throw_into(env)
            }
            ErrorKind::Range => {
                JsRangeError::from(napi::Error::new(Status::InvalidArg, message)).throw_into(env)
            }
            ErrorKind::Invalid => {
                JsError::from(napi::Error::new(Status::GenericFailure, message)).throw_into(env)
            }
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
        Err(payload) => Err(throw(
            raw,
            Error::invalid(format!(
                "prime-compaction internal error (a bug, please report it): {}",
                panic_message(payload.as_ref())
            )),
        )),
    }
}
