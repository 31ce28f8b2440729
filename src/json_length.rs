//! `jsonStringLengths`: the length of `JSON.stringify(s)` for each of a
//! chunk's long strings, for the measures `lib/entry-facts.js` reads ahead
//! (mostly a tool call's arguments: a file's whole contents). Each string
//! is copied once and its escapes counted here, where `JSON.stringify`
//! would build the escaped copy only for its length to be read.

use napi::Env;
use napi_derive::napi;

use crate::js::errors::run;
use crate::js::out::{Arg, RawValue};
use prime_compaction_core::error::{Context, Error};
use prime_compaction_core::js::json::quoted_len_utf16;
use prime_compaction_core::js::view::{Kind, View};

/// For each string of the array `strings`, the UTF-16 length of
/// `JSON.stringify` of it (a `Uint32Array`).
#[napi(js_name = "jsonStringLengths")]
pub fn json_string_lengths(env: Env, strings: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let list = cx.wrap(strings.0)?;
        let len = list.expect_array("strings")?;
        let mut out = Vec::with_capacity(prime_compaction_core::capacity::reserve_for(len));
        let mut units = Vec::new();
        for i in 0..len {
            let quoted = list
                .scoped(|| {
                    let s = list.at(i)?;
                    if s.kind() != Kind::String {
                        return Err(Error::type_error(
                            "",
                            format!("expected a string, got {}", s.kind().describe()),
                        ));
                    }
                    units.resize(cx.string_len(s.raw)? + 1, 0);
                    let written = cx.copy_utf16(s.raw, &mut units)?;
                    Ok(quoted_len_utf16(&units[..written]))
                })
                .within_with(|| format!("strings[{i}]"))?;
            // (at most 6 units a unit of V8's longest string, and 2)
            out.push(u32::try_from(quoted).unwrap_or(u32::MAX));
        }
        Ok(RawValue(cx.u32_array(&out)?))
    })
}
