//! Which agent line an export follows. Each entry point (`agent-0.78.js`,
//! `agent-1.6.js`) asks for its line once, by name, and passes the index it
//! gets to every export whose result depends on the line; the rules
//! themselves are data in the core (`prime_compaction_core::agent_line`).

use napi::Env;
use napi_derive::napi;

use crate::js::args::number_arg;
use crate::js::errors::run;
use crate::js::out::Arg;
use crate::js::view::Cx;
use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::error::{Error, Result};
use prime_compaction_core::js::view::View;

fn known() -> String {
    AgentLine::ALL
        .iter()
        .map(|line| format!("\"{}\"", line.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The index of the agent line named `name` ("0.78", "1.6"), to pass to the
/// exports that take a line; a TypeError for an unknown name.
#[napi(js_name = "agentLineIndex")]
pub fn agent_line_index(env: Env, name: Arg) -> napi::Result<u32> {
    run(&env, |cx| {
        let v = cx.wrap(name.0)?;
        let name = v.string();
        let found = name
            .as_ref()
            .and_then(|s| s.as_str())
            .and_then(AgentLine::by_name);
        match found {
            Some(line) => Ok(line.index() as u32),
            None => Err(Error::type_error(
                "line",
                format!("unknown agent line; the known ones are {}", known()),
            )),
        }
    })
}

/// The names of the supported agent lines, oldest first; the last is the newest.
#[napi(js_name = "agentLines")]
pub fn agent_lines() -> Vec<&'static str> {
    AgentLine::ALL.iter().map(|line| line.name).collect()
}

/// The exports agent line `line` has and older lines lack (`lib/api.js`
/// adds them to that line's entry).
#[napi(js_name = "agentLineAddedExports")]
pub fn agent_line_added_exports(env: Env, line: Arg) -> napi::Result<Vec<&'static str>> {
    run(&env, |cx| Ok(line_arg(cx, &line)?.added_exports.to_vec()))
}

/// The line an export was given (the index from [`agent_line_index`]).
pub fn line_arg(cx: &Cx, a: &Arg) -> Result<&'static AgentLine> {
    let n = number_arg(cx, a, "line")?;
    let index = if n >= 0.0 && n.fract() == 0.0 {
        n as usize
    } else {
        usize::MAX
    };
    AgentLine::by_index(index).ok_or_else(|| {
        Error::type_error(
            "line",
            format!(
                "expected an agent line index, got {n}; the known lines are {}",
                known()
            ),
        )
    })
}
