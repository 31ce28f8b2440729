//! File operations: `extractFileOpsFromMessage` (one message's operations,
//! which lib/api.js adds to the caller's Sets), `computeFileLists` and
//! `formatFileOperations`.

use napi::Env;
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::args::arg;
use crate::js::errors::run;
use crate::js::out::{Arg, RawValue};
use crate::js::view::{Cx, JsVal};
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::elements::{each_element, Elements};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::view::{Kind, View};
use prime_compaction_core::plan::file_ops::{
    compute_file_lists_values, extract_file_ops, format_file_operations, join_element,
    set_keeps_as_zero,
};

/// The file operations of one message as the agent line finds them, in
/// order: `{ kinds, paths }` with kinds 0 = read, 1 = written, 2 = edited.
/// `lib/api.js` adds them to the caller's Sets.
#[napi(js_name = "fileOpsOfMessage")]
pub fn file_ops_of_message(env: Env, message: Arg, line: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let mut kinds = Vec::new();
        let mut paths = Vec::new();
        extract_file_ops(
            &arg(cx, &message)?,
            &mut |kind, path| {
                kinds.push(kind.index());
                paths.push(path);
            },
            &line.file_ops,
        )
        .within("message")?;
        let o = cx.object()?;
        cx.set(o, c"kinds", cx.u8_array(&kinds)?)?;
        cx.set(o, c"paths", cx.strings(paths.iter())?)?;
        Ok(RawValue(o))
    })
}

/// `computeFileLists` over the three Sets, passed as arrays in insertion
/// order: `{ readFiles, modifiedFiles }` of the caller's own values (they
/// need not be strings).
#[napi(js_name = "computeFileLists")]
pub fn compute_file_lists_native(
    env: Env,
    read: Arg,
    written: Arg,
    edited: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        // Each list's elements, holes passed over (the lists are spread
        // Sets, which have none; a hand-made list's `length` may claim
        // 2 ** 32 - 1 of them).
        let mut values = Vec::new();
        let mut read_len = 0;
        for (k, (a, name)) in [
            (&read, "fileOps.read"),
            (&edited, "fileOps.edited"),
            (&written, "fileOps.written"),
        ]
        .into_iter()
        .enumerate()
        {
            let list = arg(cx, a)?;
            let len = list.expect_array(name)?;
            let mut elements = Elements::new(&list, len);
            while let Some(i) = elements.next_index(&list)? {
                values.extend(elements.read(&list, i)?);
            }
            if k == 0 {
                read_len = values.len();
            }
        }
        let (read_files, modified_files) = compute_file_lists_values(&values, read_len)?;
        let o = cx.object()?;
        cx.set(
            o,
            c"readFiles",
            cx.array(read_files.iter().map(|&i| Ok(values[i].raw)))?,
        )?;
        let modified = modified_files.iter().map(|&i| {
            if set_keeps_as_zero(&values[i]) {
                cx.number(0.0)
            } else {
                Ok(values[i].raw)
            }
        });
        cx.set(o, c"modifiedFiles", cx.array(modified)?)?;
        Ok(RawValue(o))
    })
}

/// The elements of a list as `join` shows them, holes passed over (the
/// lists `computeFileLists` makes have none; a hand-made list's `length`
/// may claim 2 ** 32 - 1 of them).
pub fn joined_elements(v: &JsVal<'_>, name: &str) -> Result<Vec<JsStr>> {
    let len = v.expect_array(name)?;
    let mut out = Vec::new();
    each_element(v, len, |i, element| {
        out.push(join_element(element).within_with(|| format!("{name}[{i}]"))?);
        Ok(())
    })?;
    Ok(out)
}

/// A list given to `formatFileOperations` as the agents show it:
/// `list.length > 0` and then `list.join("\n")`, the list's own `join`
/// (which shows a list met inside itself as "", and may be the caller's).
/// Empty, or the one joined line.
fn listed_files(cx: &Cx, list: &JsVal<'_>, name: &str) -> Result<Vec<JsStr>> {
    if list.expect_array(name)? == 0 {
        return Ok(Vec::new());
    }
    let join = cx.wrap(cx.named_property(list.raw, c"join")?)?;
    if join.kind() != Kind::Function {
        let got = join.kind().describe();
        return Err(Error::type_error(
            format!("{name}.join"),
            format!("expected a function, got {got}"),
        ));
    }
    Ok(vec![cx.join_lines(list.raw, join.raw)?])
}

/// `formatFileOperations(readFiles, modifiedFiles)`.
#[napi(js_name = "formatFileOperations")]
pub fn format_file_operations_native(
    env: Env,
    read_files: Arg,
    modified_files: Arg,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let read = listed_files(cx, &arg(cx, &read_files)?, "readFiles")?;
        let modified = listed_files(cx, &arg(cx, &modified_files)?, "modifiedFiles")?;
        Ok(RawValue(
            cx.utf16(&format_file_operations(&read, &modified))?,
        ))
    })
}
