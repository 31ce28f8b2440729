//! Token estimates: `estimateTokens`, `estimateContextTokens`,
//! `calculateContextTokens`, and the index behind `getLastAssistantUsage`.

use napi::Env;
use napi_derive::napi;

use crate::js::args::{arg, counter_option};
use crate::js::errors::run;
use crate::js::out::{Arg, RawValue};
use prime_compaction_core::error::Context;
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::model::EntryType;
use prime_compaction_core::tokens::estimate::{
    context_tokens, estimate_context_tokens, valid_usage,
};

/// `estimateTokens(message)`.
#[napi(js_name = "estimateTokens")]
pub fn estimate_tokens_native(env: Env, message: Arg, options: Option<Arg>) -> napi::Result<f64> {
    run(&env, |cx| {
        let counter = counter_option(cx, &options)?;
        Ok(counter.message(&arg(cx, &message)?).within("message")? as f64)
    })
}

/// The index of the entry whose message holds the last valid usage, or -1;
/// index.js returns that message's own `usage` object.
#[napi(js_name = "lastAssistantUsageIndex")]
pub fn last_assistant_usage_index(env: Env, entries: Arg) -> napi::Result<f64> {
    run(&env, |cx| {
        let array = arg(cx, &entries)?;
        let list = Entries::new(&array, "entries")?;
        for i in (0..list.len()).rev() {
            if list.kind(i)?.ty != EntryType::Message {
                continue;
            }
            let valid = list.with_entry(i, |e| {
                Ok(valid_usage(&e.get(Key::Message)?)
                    .within("message")?
                    .is_some())
            })?;
            if valid {
                return Ok(i as f64);
            }
        }
        Ok(-1.0)
    })
}

/// `estimateContextTokens(messages)`.
#[napi(js_name = "estimateContextTokens")]
pub fn estimate_context_tokens_native(env: Env, messages: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let est = estimate_context_tokens(&arg(cx, &messages)?).within("messages")?;
        let o = cx.object()?;
        cx.set(o, c"tokens", cx.number(est.tokens)?)?;
        cx.set(o, c"usageTokens", cx.number(est.usage_tokens)?)?;
        cx.set(o, c"trailingTokens", cx.number(est.trailing_tokens)?)?;
        let last = match est.last_usage_index {
            Some(i) => cx.number(i as f64)?,
            None => cx.null()?,
        };
        cx.set(o, c"lastUsageIndex", last)?;
        Ok(RawValue(o))
    })
}

/// `calculateContextTokens(usage)`.
#[napi(js_name = "calculateContextTokens")]
pub fn calculate_context_tokens(env: Env, usage: Arg) -> napi::Result<f64> {
    run(&env, |cx| context_tokens(&arg(cx, &usage)?).within("usage"))
}
