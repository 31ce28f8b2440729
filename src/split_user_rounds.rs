//! `splitUserRounds`: where each user round starts.

use napi::Env;
use napi_derive::napi;

use crate::js::errors::run;
use crate::js::out::{Arg, RawValue};
use prime_compaction_core::error::Context;
use prime_compaction_core::js::view::View;
use prime_compaction_core::projection::rounds::round_ranges;
use prime_compaction_core::transcript::llm_message::opens_round;

/// The index where each user round of `messages` starts (first is 0);
/// lib/api.js slices the caller's array with them.
#[napi(js_name = "userRoundStarts")]
pub fn user_round_starts(env: Env, messages: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let list = cx.wrap(messages.0)?;
        let len = list.expect_array("messages")?;
        let mut opens = Vec::with_capacity(prime_compaction_core::capacity::reserve_for(len));
        for i in 0..len {
            let open = list
                .scoped(|| opens_round(&list.at(i)?))
                .within_with(|| format!("messages[{i}]"))?;
            opens.push(open);
        }
        let starts: Vec<u32> = round_ranges(opens.into_iter(), len)
            .into_iter()
            .map(|r| r.start as u32)
            .collect();
        Ok(RawValue(cx.u32_array(&starts)?))
    })
}
