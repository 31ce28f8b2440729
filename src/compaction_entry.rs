//! `compactionSystemMessage`, for the CLI's compaction entry
//! (cli/session-file.js): the system message the agent line's
//! `appendCompaction` stores with it (crates/core/src/session/system_message.rs).

use napi::Env;
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::args::{arg, number_arg};
use crate::js::errors::run;
use crate::js::out::Arg;
use prime_compaction_core::js::json::stringify_to_string;
use prime_compaction_core::session::entries::Entries;
use prime_compaction_core::session::system_message::compaction_system_message;

/// `compactionSystemMessage(pathEntries, timestamp, line)`: as JSON, the
/// `systemMessage` of a compaction entry stamped `timestamp` (ms) appended
/// after the last of `pathEntries`; null where the line writes none.
#[napi(js_name = "compactionSystemMessage")]
pub fn compaction_system_message_native(
    env: Env,
    path_entries: Arg,
    timestamp: Arg,
    line: Arg,
) -> napi::Result<Option<String>> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let timestamp = number_arg(cx, &timestamp, "timestamp")?;
        let array = arg(cx, &path_entries)?;
        let entries = Entries::new(&array, "pathEntries", line)?;
        Ok(compaction_system_message(&entries, timestamp)?.map(|m| stringify_to_string(&m)))
    })
}
