//! The system message a 1.6 compaction entry stores (`SessionManager`'s
//! `appendCompaction`): pi-ai's `getCurrentSystemMessage` over the session
//! projection's messages, built, with the entry's own timestamp. When the
//! agent rebuilds the context from a compaction, this message is the only
//! system message it keeps from before it, so an entry without it loses the
//! system prompt. [`crate::tokens::system`] measures the same merge without
//! building it, and shares its reads and errors.
//!
//! Built as the JSON the entry is written with: the sections' and tools'
//! values are taken as `JSON.stringify` gives them.

use crate::error::{Context, Error, Result};
use crate::js::json::{self, Object, Value};
use crate::js::string::{JsStr, Utf16Builder};
use crate::js::view::{Key, Kind, View};
use crate::session::context::Ids;
use crate::session::entries::Entries;
use crate::session::model::{role_of, Role};
use crate::session::projection::{project, Msg};
use crate::tokens::estimate::Content;
use crate::tokens::projected::{ContextList, ProjectedMessages};
use crate::tokens::system::{
    section_entries, section_type_error, tool_list, tool_name, TimestampFold,
};

/// The `systemMessage` of a compaction entry appended after the last of
/// `entries` (the path to the session's leaf), stamped `timestamp`
/// (milliseconds); `None` where the agent writes none (always, on a line
/// whose compactions keep no system message).
pub fn compaction_system_message<V: View>(
    entries: &Entries<V>,
    timestamp: f64,
) -> Result<Option<Value>> {
    let rules = &entries.line.session;
    if !rules.compaction_system_message {
        return Ok(None);
    }
    let ids = Ids::read(entries)?;
    let projection = project(entries, &ids, rules)?;
    let list = ProjectedMessages {
        entries,
        messages: &projection.messages,
        rules,
    };
    let mut merge = Merge::default();
    for k in 0..list.len() {
        let hint = list.role_hint(k)?;
        if hint.is_some_and(|role| role != Role::System) {
            continue;
        }
        list.with(k, |msg| {
            let Msg::Message(message, content) = msg else {
                return Ok(());
            };
            let role = match hint {
                Some(role) => role,
                None => role_of(&message)?,
            };
            if role != Role::System {
                return Ok(());
            }
            merge.add(&message, content)
        })?;
    }
    Ok(merge.finish(timestamp))
}

/// `getCurrentSystemMessage`'s state: the texts, and the sections and tools
/// in the order of a JS `Map` (a key set again keeps its place; one deleted
/// and set again goes last).
#[derive(Default)]
struct Merge {
    timestamp: TimestampFold,
    texts: Vec<JsStr>,
    /// Name → the value's JSON (`None`: `undefined`, left out of the object).
    sections: Vec<(JsStr, Option<Value>)>,
    /// Name → the tool's JSON (`null` for a tool `JSON.stringify` skips).
    tools: Vec<(JsStr, Value)>,
}

fn set<T>(map: &mut Vec<(JsStr, T)>, name: JsStr, value: T) {
    match map.iter_mut().find(|(k, _)| *k == name) {
        Some(slot) => slot.1 = value,
        None => map.push((name, value)),
    }
}

fn delete<T>(map: &mut Vec<(JsStr, T)>, name: &JsStr) {
    map.retain(|(k, _)| k != name);
}

/// A value as `JSON.stringify` writes it, read back; `None` for `undefined`.
fn json_of<V: View>(value: &V) -> Result<Option<Value>> {
    let Some(text) = value.json_stringify()? else {
        return Ok(None);
    };
    let text = text.to_string_lossy();
    json::parse(&text).map(Some).map_err(|e| {
        Error::type_error(
            "",
            format!("JSON.stringify gave text that does not parse: {e}"),
        )
    })
}

impl Merge {
    fn add<V: View>(&mut self, message: &V, content: Content<V>) -> Result<()> {
        self.timestamp.add(message)?;
        if let Some(content) = content.of(message, Role::System)? {
            let text = content_text(&content).within("content")?;
            if !text.is_empty() {
                self.texts.push(text);
            }
        }
        for (name, value) in section_entries(message)? {
            if value.kind() == Kind::Null {
                delete(&mut self.sections, &name);
                continue;
            }
            if value.truthy() && value.string().is_none() {
                return Err(section_type_error(&name, &value));
            }
            let json = json_of(&value)?;
            set(&mut self.sections, name, json);
        }
        for (i, tool) in tool_list(message, Key::ToolsRemoved)?.iter().enumerate() {
            let name = tool_name(tool).within_with(|| format!("toolsRemoved[{i}]"))?;
            delete(&mut self.tools, &name);
        }
        for (i, tool) in tool_list(message, Key::ToolsAdded)?.iter().enumerate() {
            let name = tool_name(tool).within_with(|| format!("toolsAdded[{i}]"))?;
            let json = json_of(tool).within_with(|| format!("toolsAdded[{i}]"))?;
            set(&mut self.tools, name, json.unwrap_or(Value::Null));
        }
        Ok(())
    }

    /// `{ role, content, sections?, toolsAdded?, timestamp }`, or `None`.
    fn finish(self, timestamp: f64) -> Option<Value> {
        if !self.timestamp.gives_message(self.tools.len()) {
            return None;
        }
        let mut content = Utf16Builder::new();
        for (i, text) in self.texts.iter().enumerate() {
            if i > 0 {
                content.push_str("\n\n");
            }
            content.push_js(text);
        }
        let mut fields = vec![
            (
                JsStr::from_str("role"),
                Value::String(JsStr::from_str("system")),
            ),
            (JsStr::from_str("content"), Value::String(content.finish())),
        ];
        if !self.sections.is_empty() {
            let sections = self
                .sections
                .into_iter()
                .filter_map(|(name, value)| value.map(|v| (name, v)))
                .collect();
            fields.push((
                JsStr::from_str("sections"),
                Value::Object(Object::from_entries(sections)),
            ));
        }
        if !self.tools.is_empty() {
            let tools = self.tools.into_iter().map(|(_, tool)| tool).collect();
            fields.push((JsStr::from_str("toolsAdded"), Value::Array(tools)));
        }
        fields.push((JsStr::from_str("timestamp"), Value::Number(timestamp)));
        Some(Value::Object(Object::from_entries(fields)))
    }
}

/// pi-ai's `contentText`: a string, or the text blocks' texts joined with
/// `"\n"` (a missing or null text is empty).
fn content_text<V: View>(content: &V) -> Result<JsStr> {
    if let Some(s) = content.string() {
        return Ok(s);
    }
    let len = content.array_len().ok_or_else(|| {
        let got = content.kind().describe();
        Error::type_error("", format!("expected a string or an array, got {got}"))
    })?;
    let mut out = Utf16Builder::new();
    let mut blocks = 0;
    for i in 0..len {
        let block = content.at(i)?;
        let text = (|| -> Result<Option<JsStr>> {
            if matches!(block.kind(), Kind::Undefined | Kind::Null) {
                return Err(Error::type_error(
                    "",
                    "expected a content block, got nothing",
                ));
            }
            if !block.get(Key::Type)?.str_is("text") {
                return Ok(None);
            }
            let text = block.get(Key::Text)?;
            if matches!(text.kind(), Kind::Undefined | Kind::Null) {
                return Ok(Some(JsStr::empty()));
            }
            text.string().map(Some).ok_or_else(|| {
                let got = text.kind().describe();
                Error::type_error("text", format!("expected a string, got {got}"))
            })
        })()
        .within_with(|| format!("[{i}]"))?;
        if let Some(text) = text {
            if blocks > 0 {
                out.push_str("\n");
            }
            out.push_js(&text);
            blocks += 1;
        }
    }
    Ok(out.finish())
}

#[cfg(test)]
mod tests;
