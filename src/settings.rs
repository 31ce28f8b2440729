//! `shouldCompact` and `DEFAULT_COMPACTION_SETTINGS`.

use napi::Env;
use napi_derive::napi;

use crate::js::args::{arg, number_arg};
use crate::js::errors::run;
use crate::js::out::{Arg, RawValue};
use prime_compaction_core::error::Context;
use prime_compaction_core::plan::settings::{should_compact, DEFAULT_SETTINGS};

/// `shouldCompact(contextTokens, contextWindow, settings)`.
#[napi(js_name = "shouldCompact")]
pub fn should_compact_native(
    env: Env,
    context_tokens: Arg,
    context_window: Arg,
    settings: Arg,
) -> napi::Result<bool> {
    run(&env, |cx| {
        let tokens = number_arg(cx, &context_tokens, "contextTokens")?;
        let window = number_arg(cx, &context_window, "contextWindow")?;
        should_compact(tokens, window, &arg(cx, &settings)?).within("settings")
    })
}

/// `DEFAULT_COMPACTION_SETTINGS`, as a fresh object.
#[napi(js_name = "defaultCompactionSettings")]
pub fn default_compaction_settings(env: Env) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let o = cx.object()?;
        cx.set(o, c"enabled", cx.boolean(DEFAULT_SETTINGS.enabled)?)?;
        cx.set(
            o,
            c"reserveTokens",
            cx.number(DEFAULT_SETTINGS.reserve_tokens)?,
        )?;
        cx.set(
            o,
            c"keepRecentTokens",
            cx.number(DEFAULT_SETTINGS.keep_recent_tokens)?,
        )?;
        Ok(RawValue(o))
    })
}
