//! Test hooks, compiled into debug builds only (`cfg(debug_assertions)`):
//! release builds, and so the published binary, do not have them.

use napi::Env;
use napi_derive::napi;

use crate::js::errors::run;

/// Panics inside the same boundary every export runs in, so a test can check
/// that a panic in the core reaches JS as an `Error`, not as an abort of Node.
#[napi(js_name = "__panicForTest")]
pub fn panic_for_test(env: Env, message: String) -> napi::Result<()> {
    run(&env, |_| -> prime_compaction_core::error::Result<()> {
        panic!("{message}");
    })
}
