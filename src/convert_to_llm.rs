//! `convertToLlm` and `bashExecutionToText`.

use napi::{sys, Env};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::errors::run;
use crate::js::flat::typed_array_slice;
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::elements::Elements;
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::session::model::{EntryKind, EntryType};
use prime_compaction_core::transcript::convert_to_llm::{
    bash_execution_pieces, convert_as, convert_message_for, passes_through, LlmMessage, Piece,
    Pieces,
};

/// `{ role: "user", content, timestamp }`, in the reference's key order.
fn user_message(cx: &Cx, content: Raw, timestamp: Raw) -> Result<Raw> {
    let o = cx.object()?;
    cx.set(o, c"role", cx.str("user")?)?;
    cx.set(o, c"content", content)?;
    cx.set(o, c"timestamp", timestamp)?;
    Ok(o)
}

/// A text as its pieces, each a JS string, for lib/api.js to join with `+`:
/// the caller's strings are linked into the result, not copied, as by the
/// agent's template literal. `first` goes before them (a text message's
/// timestamp).
fn pieces_array(cx: &Cx, first: Option<Raw>, pieces: &Pieces<JsVal<'_>>) -> Result<Raw> {
    let mut parts = Vec::with_capacity(pieces.0.len() + 1);
    parts.extend(first.map(Ok));
    for piece in &pieces.0 {
        parts.push(match piece {
            Piece::Lit(text) => cx.str(text),
            Piece::Str(s) => cx.js_str(s),
            Piece::Value(v) => Ok(v.raw),
        });
    }
    cx.array(parts.into_iter())
}

fn text_blocks(cx: &Cx, text: Raw) -> Result<Raw> {
    let block = cx.object()?;
    cx.set(block, c"type", cx.str("text")?)?;
    cx.set(block, c"text", text)?;
    cx.array(std::iter::once(Ok(block)))
}

fn converted(cx: &Cx, line: &AgentLine, message: &JsVal<'_>) -> Result<Option<Raw>> {
    message_made(cx, message, convert_message_for(line, message)?)
}

/// The message `convertToLlm` sends for `message`, decided as `decided`:
/// the message, or for a user message of one text, `[timestamp,
/// ...pieces]` (lib/api.js makes that message).
fn message_made<'c>(
    cx: &'c Cx,
    message: &JsVal<'c>,
    decided: LlmMessage<JsVal<'c>>,
) -> Result<Option<Raw>> {
    let timestamp = || -> Result<Raw> { Ok(message.get(Key::Timestamp)?.raw) };
    Ok(match decided {
        LlmMessage::Same(_) => Some(message.raw),
        LlmMessage::Dropped => None,
        LlmMessage::UserText(pieces) => Some(pieces_array(cx, Some(timestamp()?), &pieces)?),
        LlmMessage::CustomText => {
            let content = message.get(Key::Content)?.raw;
            Some(user_message(cx, text_blocks(cx, content)?, timestamp()?)?)
        }
        LlmMessage::CustomBlocks => Some(user_message(
            cx,
            message.get(Key::Content)?.raw,
            timestamp()?,
        )?),
    })
}

/// `convertToLlm(messages, line, roles?, values?)` as the agent line does
/// it: new objects only where the reference makes them, holes passed over.
/// The result is its plan, `{ order, made }`: element j is
/// `values[order[j]]` where `order[j]` is not negative (a message passed
/// through), else `made[-1 - order[j]]`. Where `values` was given and each
/// message gives one, in its place, the plan is `{ replaced, made }`
/// instead: `values` with element `replaced[j]` made `made[j]`. `roles`
/// and `values` are what lib/message-roles.js read ahead: message i as read, and its role's code
/// (`EntryKind::from_code`), or 0 where the message is read here.
#[napi(js_name = "convertToLlm")]
pub fn convert_to_llm(
    env: Env,
    messages: Arg,
    line: Arg,
    roles: Option<Arg>,
    values: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let list = cx.wrap(messages.0)?;
        let len = list.expect_array("messages")?;
        let ahead = match (&roles, &values) {
            (Some(roles), Some(values)) => {
                let codes = typed_array_slice::<u8>(cx, roles.0, sys::TypedarrayType::uint8_array)
                    .ok()
                    .filter(|c| c.len() == len && len < i32::MAX as usize)
                    .ok_or_else(malformed)?;
                Some((codes, cx.wrap(values.0)?))
            }
            _ => None,
        };
        let mut plan = Plan {
            order: Vec::new(),
            made: cx.array(std::iter::empty())?,
            count: 0,
        };
        let mut elements = Elements::new(&list, len);
        match &ahead {
            Some((codes, values)) => {
                for (i, &code) in codes.iter().enumerate() {
                    let role = EntryKind::from_code(code)
                        .filter(|kind| kind.ty == EntryType::Message)
                        .and_then(|kind| kind.role);
                    // Passed through: not read here at all.
                    if role.is_some_and(|r| passes_through(r, line.convert_keeps_system)) {
                        plan.order.push(i as i32);
                        continue;
                    }
                    list.scoped(|| -> Result<()> {
                        match role {
                            Some(role) => {
                                let message = values.at(i)?;
                                let decided =
                                    convert_as(&message, role, line.convert_keeps_system)?;
                                plan.add(cx, message_made(cx, &message, decided)?)
                            }
                            None => match elements.read(&list, i)? {
                                Some(message) => plan.add(cx, converted(cx, line, &message)?),
                                None => Ok(()),
                            },
                        }
                    })
                    .within_with(|| format!("messages[{i}]"))?;
                }
            }
            None => {
                while let Some(i) = elements.next_index(&list).within("messages")? {
                    list.scoped(|| -> Result<()> {
                        if let Some(message) = elements.read(&list, i)? {
                            plan.add(cx, converted(cx, line, &message)?)?;
                        }
                        Ok(())
                    })
                    .within_with(|| format!("messages[{i}]"))?;
                }
            }
        }
        let o = cx.object()?;
        if ahead.is_some() && plan.order.len() == len {
            // One message for each (each index gives one at most): the
            // indices of those made, which take their places in `values`.
            let replaced: Vec<i32> = (0..len as i32)
                .filter(|&i| plan.order[i as usize] < 0)
                .collect();
            cx.set(o, c"replaced", cx.i32_array(&replaced)?)?;
        } else {
            cx.set(o, c"order", cx.i32_array(&plan.order)?)?;
        }
        cx.set(o, c"made", plan.made)?;
        Ok(RawValue(o))
    })
}

/// `convertToLlm`'s result as it is made: `order`, and `made` with its
/// `count` elements.
struct Plan {
    order: Vec<i32>,
    made: Raw,
    count: u32,
}

impl Plan {
    /// Adds `value` (if any) as the next element, one this call made.
    fn add(&mut self, cx: &Cx, value: Option<Raw>) -> Result<()> {
        if let Some(value) = value {
            check(unsafe { sys::napi_set_element(cx.env, self.made, self.count, value) })?;
            self.count += 1;
            self.order.push(-(self.count as i32));
        }
        Ok(())
    }
}

/// The read-ahead roles disagree with this reader: a bug, never the caller's input.
fn malformed() -> Error {
    Error::invalid(
        "prime-compaction internal error (a bug, please report it): bad read-ahead message roles",
    )
}

/// `bashExecutionToText(msg)`, as the text's pieces (lib/api.js joins them).
#[napi(js_name = "bashExecutionToText")]
pub fn bash_execution_to_text(env: Env, msg: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let pieces = bash_execution_pieces(&cx.wrap(msg.0)?).within("msg")?;
        Ok(RawValue(pieces_array(cx, None, &pieces)?))
    })
}

/// The wire text around summaries in the agent's context: `{ compactionPrefix,
/// compactionSuffix, branchPrefix, branchSuffix }`, from the one place the
/// core defines them.
#[napi(js_name = "summaryWrappers")]
pub fn summary_wrappers(env: Env) -> napi::Result<RawValue> {
    use prime_compaction_core::transcript::convert_to_llm::{
        BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
        COMPACTION_SUMMARY_SUFFIX,
    };
    run(&env, |cx| {
        let o = cx.object()?;
        cx.set(o, c"compactionPrefix", cx.str(COMPACTION_SUMMARY_PREFIX)?)?;
        cx.set(o, c"compactionSuffix", cx.str(COMPACTION_SUMMARY_SUFFIX)?)?;
        cx.set(o, c"branchPrefix", cx.str(BRANCH_SUMMARY_PREFIX)?)?;
        cx.set(o, c"branchSuffix", cx.str(BRANCH_SUMMARY_SUFFIX)?)?;
        Ok(RawValue(o))
    })
}
