//! `convertToLlm` and `bashExecutionToText`.

use napi::{sys, Env};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::js::errors::run;
use crate::js::flat::typed_array_slice;
use crate::js::out::{Arg, Raw, RawValue, Typed};
use crate::js::view::{check, Cx, JsVal};
use prime_compaction_core::agent_line::AgentLine;
use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::elements::Elements;
use prime_compaction_core::js::view::{Key, View};
use prime_compaction_core::session::model::{EntryKind, EntryType};
use prime_compaction_core::transcript::convert_to_llm::{
    bash_execution_pieces, convert_as, convert_message_for, passes_through, Literal, LlmMessage,
    Piece, Pieces,
};

/// `{ role: "user", content, timestamp }`, in the reference's key order.
fn user_message(cx: &Cx, content: Raw, timestamp: Raw) -> Result<Raw> {
    let o = cx.object()?;
    cx.set(o, c"role", cx.str("user")?)?;
    cx.set(o, c"content", content)?;
    cx.set(o, c"timestamp", timestamp)?;
    Ok(o)
}

/// The texts a call makes, for lib/message-roles.js to join with `+`: the
/// caller's strings are linked into the result, not copied, as by the
/// agent's template literal. `codes` holds each text as its number of
/// pieces, then each piece: a literal as its index in `textLiterals()`
/// ([`Literal::ALL`]), any other value `strings[i]` as `-1 - i`.
struct Texts {
    codes: Vec<i32>,
    strings: Appended,
}

impl Texts {
    fn new(cx: &Cx) -> Result<Texts> {
        Ok(Texts {
            codes: Vec::new(),
            strings: Appended::new(cx)?,
        })
    }

    /// `value` as a piece: its code.
    fn value(&mut self, cx: &Cx, value: Raw) -> Result<i32> {
        self.strings.push(cx, value)
    }

    /// Adds `pieces` as the next text, at the end of `codes`.
    fn text(&mut self, cx: &Cx, pieces: &Pieces<JsVal<'_>>) -> Result<()> {
        self.codes.push(pieces.0.len() as i32);
        for piece in &pieces.0 {
            let code = match piece {
                Piece::Lit(text) => text.code(),
                Piece::Str(s) => self.value(cx, cx.js_str(s)?)?,
                Piece::Value(v) => self.value(cx, v.raw)?,
            };
            self.codes.push(code);
        }
        Ok(())
    }

    /// Sets `codes` and `strings` (where any) on `o`.
    fn set_on(&self, cx: &Cx, o: Raw) -> Result<()> {
        cx.set(o, c"codes", cx.i32_array(&self.codes)?)?;
        match self.strings.filled() {
            Some(strings) => cx.set(o, c"strings", strings),
            None => Ok(()),
        }
    }
}

/// A JS array this call appends to. It is made with the call's plan, in
/// the call's outermost handle scope: the messages are read in scopes of
/// their own (`View::scoped`), and an array made in one of those would
/// be a dead handle once it closed.
struct Appended {
    array: Raw,
    count: u32,
}

impl Appended {
    fn new(cx: &Cx) -> Result<Appended> {
        Ok(Appended {
            array: cx.array(std::iter::empty())?,
            count: 0,
        })
    }

    /// Appends `value`; its index i, as `-1 - i`.
    fn push(&mut self, cx: &Cx, value: Raw) -> Result<i32> {
        check(unsafe { sys::napi_set_element(cx.env, self.array, self.count, value) })?;
        self.count += 1;
        Ok(-(self.count as i32))
    }

    /// The array, if anything was appended.
    fn filled(&self) -> Option<Raw> {
        (self.count > 0).then_some(self.array)
    }
}

fn text_blocks(cx: &Cx, text: Raw) -> Result<Raw> {
    let block = cx.object()?;
    cx.set(block, c"type", cx.str("text")?)?;
    cx.set(block, c"text", text)?;
    cx.array(std::iter::once(Ok(block)))
}

fn converted(cx: &Cx, plan: &mut Plan, line: &AgentLine, message: &JsVal<'_>) -> Result<()> {
    let decided = convert_message_for(line, message)?;
    plan.add(cx, message, decided)
}

/// `convertToLlm(messages, line, roles?, values?)` as the agent line does
/// it: new objects only where the reference makes them, holes passed over.
/// The result is its plan, `{ order, made, objects, codes, strings }`
/// (`made` and `codes` where any message was made, `objects` and `strings`
/// where any was put in them):
/// element j is `values[order[j]]` where `order[j]` is not negative (a
/// message passed through), else the message `made[-1 - order[j]]` names.
/// A made message is `objects[-1 - m]` for a negative `m`, else the user
/// message of one text whose timestamp is piece `codes[m]` and whose text
/// starts at `codes[m + 1]` (see `Texts`). Where `values` was given and
/// each message gives one, in its place, the plan has `replaced` instead
/// of `order`: `values` with element `replaced[j]` the message `made[j]`
/// names. `roles` and `values` are what lib/message-roles.js read ahead:
/// message i as read, and its role's code (`EntryKind::from_code`), or 0
/// where the message is read here.
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
        let mut len = list.expect_array("messages")?;
        let ahead = match (&roles, &values) {
            (Some(roles), Some(values)) => {
                let codes = typed_array_slice::<u8>(cx, roles.0, sys::TypedarrayType::uint8_array)
                    .ok()
                    .filter(|c| c.len() < i32::MAX as usize)
                    .ok_or_else(malformed)?;
                // The length as the read-ahead began, as the agent's `map`
                // takes it: a getter it ran may have changed it since.
                len = codes.len();
                Some((codes, cx.wrap(values.0)?))
            }
            _ => None,
        };
        let mut plan = Plan::new(cx)?;
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
                                plan.add(cx, &message, decided)
                            }
                            None => match elements.read(&list, i)? {
                                Some(message) => converted(cx, &mut plan, line, &message),
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
                        match elements.read(&list, i)? {
                            Some(message) => converted(cx, &mut plan, line, &message),
                            None => Ok(()),
                        }
                    })
                    .within_with(|| format!("messages[{i}]"))?;
                }
            }
        }
        // One message for each (each index gives one at most): the indices
        // of those made, which take their places in `values`.
        let replaced: Option<Vec<i32>> = (ahead.is_some() && plan.order.len() == len).then(|| {
            (0..len as i32)
                .filter(|&i| plan.order[i as usize] < 0)
                .collect()
        });
        let order = replaced.as_deref().unwrap_or(&plan.order);
        let o = cx.object()?;
        let first = if plan.made.is_empty() {
            cx.i32_array(order)?
        } else {
            // The plan's numbers in one buffer: one ArrayBuffer a call.
            let [first, made, codes] = cx.typed_arrays([
                Typed::I32(order),
                Typed::I32(&plan.made),
                Typed::I32(&plan.texts.codes),
            ])?;
            cx.set(o, c"made", made)?;
            cx.set(o, c"codes", codes)?;
            first
        };
        match replaced {
            Some(_) => cx.set(o, c"replaced", first)?,
            None => cx.set(o, c"order", first)?,
        }
        // Arrays nothing was put into are left out.
        if let Some(objects) = plan.objects.filled() {
            cx.set(o, c"objects", objects)?;
        }
        if let Some(strings) = plan.texts.strings.filled() {
            cx.set(o, c"strings", strings)?;
        }
        Ok(RawValue(o))
    })
}

/// `convertToLlm`'s result as it is made: `order`, the made messages'
/// codes (`made`), the objects made and the texts.
struct Plan {
    order: Vec<i32>,
    made: Vec<i32>,
    objects: Appended,
    texts: Texts,
}

impl Plan {
    fn new(cx: &Cx) -> Result<Plan> {
        Ok(Plan {
            order: Vec::new(),
            made: Vec::new(),
            objects: Appended::new(cx)?,
            texts: Texts::new(cx)?,
        })
    }

    /// Adds what `message` gives, decided as `decided`: itself, nothing, a
    /// message made of it, or the user message of one text (its timestamp,
    /// read after the text as the agent reads it, then the text).
    fn add<'c>(
        &mut self,
        cx: &'c Cx,
        message: &JsVal<'c>,
        decided: LlmMessage<JsVal<'c>>,
    ) -> Result<()> {
        let timestamp = || -> Result<Raw> { Ok(message.get(Key::Timestamp)?.raw) };
        let code = match decided {
            LlmMessage::Same(_) => self.object(cx, message.raw)?,
            LlmMessage::Dropped => return Ok(()),
            LlmMessage::UserText(pieces) => {
                let timestamp = self.texts.value(cx, timestamp()?)?;
                let at = self.texts.codes.len();
                self.texts.codes.push(timestamp);
                self.texts.text(cx, &pieces)?;
                i32::try_from(at).map_err(|_| Error::range("", "too many texts"))?
            }
            LlmMessage::CustomText => {
                let content = message.get(Key::Content)?.raw;
                let made = user_message(cx, text_blocks(cx, content)?, timestamp()?)?;
                self.object(cx, made)?
            }
            LlmMessage::CustomBlocks => {
                let made = user_message(cx, message.get(Key::Content)?.raw, timestamp()?)?;
                self.object(cx, made)?
            }
        };
        self.made.push(code);
        self.order.push(-(self.made.len() as i32));
        Ok(())
    }

    /// `value` as the next of `objects`: its code in `made`.
    fn object(&mut self, cx: &Cx, value: Raw) -> Result<i32> {
        self.objects.push(cx, value)
    }
}

/// The read-ahead roles disagree with this reader: a bug, never the caller's input.
fn malformed() -> Error {
    Error::internal("bad read-ahead message roles")
}

/// `bashExecutionToText(msg)`, as `{ codes, strings }` of one text at 0 (see
/// `Texts`; lib/api.js joins it).
#[napi(js_name = "bashExecutionToText")]
pub fn bash_execution_to_text(env: Env, msg: Arg) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let pieces = bash_execution_pieces(&cx.wrap(msg.0)?).within("msg")?;
        let mut texts = Texts::new(cx)?;
        texts.text(cx, &pieces)?;
        let o = cx.object()?;
        texts.set_on(cx, o)?;
        Ok(RawValue(o))
    })
}

/// The literal pieces of the texts `convertToLlm` and `bashExecutionToText`
/// make, by their codes.
#[napi(js_name = "textLiterals")]
pub fn text_literals(env: Env) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let texts = Literal::ALL.iter().map(|l| cx.str(l.as_str()));
        Ok(RawValue(cx.array(texts)?))
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
