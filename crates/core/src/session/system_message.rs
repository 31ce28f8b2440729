//! The system message a 1.6 compaction entry stores (`SessionManager`'s
//! `appendCompaction`): pi-ai's `getCurrentSystemMessage` over the session
//! projection's messages, built, with the entry's own timestamp. When the
//! agent rebuilds the context from a compaction, this message is the only
//! system message it keeps from before it, so an entry without it loses the
//! system prompt. [`crate::tokens::system`] measures the same merge without
//! building it, and shares its walk of a message's content; where the
//! estimates take only strings (a section's value, a block's text), the
//! message is built as pi-ai builds it, from any value.
//!
//! Built as the JSON the entry is written with: the sections' and tools'
//! values are taken as `JSON.stringify` gives them.

use crate::error::{quoted, Context, Error, Result};
use crate::js::json::{self, Object, Value};
use crate::js::string::{JsStr, Utf16Builder};
use crate::js::view::{Key, Kind, View};
use crate::session::context::Ids;
use crate::session::entries::Entries;
use crate::session::model::{role_of, Role};
use crate::session::projection::{project, Msg};
use crate::tokens::estimate::Content;
use crate::tokens::projected::{ContextList, ProjectedMessages};
use crate::tokens::system::{content_texts, for_each_tool, tool_name, ContentTexts, TimestampFold};

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
        measured: false,
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
        // Every value but null is kept as it is (the estimates, which must
        // measure it, take only strings: tokens/system.rs).
        for (name, value) in sections_of(message)? {
            let json = match value {
                Section::Char(unit) => Some(Value::String(unit)),
                Section::Value(v) if v.kind() == Kind::Null => {
                    delete(&mut self.sections, &name);
                    continue;
                }
                Section::Value(v) => {
                    json_of(&v).within_with(|| format!("sections[{}]", quoted(&name)))?
                }
            };
            set(&mut self.sections, name, json);
        }
        for name in removed_tool_names(message)? {
            delete(&mut self.tools, &name);
        }
        for_each_tool(message, Key::ToolsAdded, |i, tool| {
            let name = tool_name(tool).within_with(|| format!("toolsAdded[{i}]"))?;
            let json = json_of(tool).within_with(|| format!("toolsAdded[{i}]"))?;
            set(&mut self.tools, name, json.unwrap_or(Value::Null));
            Ok(())
        })
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

/// The names `for (const tool of message.toolsRemoved ?? [])` deletes by:
/// an item's `name` where it is a string. Another name can match no tool
/// (a tool is kept only under a string name, below), and a string list's
/// items, its characters, have none; a null item throws, as `tool.name`
/// does in JS, and so does a list that is neither an array nor a string.
fn removed_tool_names<V: View>(message: &V) -> Result<Vec<JsStr>> {
    if message.get(Key::ToolsRemoved)?.str_len().is_some() {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    for_each_tool(message, Key::ToolsRemoved, |i, tool| {
        if matches!(tool.kind(), Kind::Undefined | Kind::Null) {
            let got = tool.kind().describe();
            return Err(Error::type_error(
                format!("toolsRemoved[{i}]"),
                format!("expected a tool, got {got}"),
            ));
        }
        if tool.is_object_like() {
            if let Some(name) = tool.get(Key::Name)?.string() {
                names.push(name);
            }
        }
        Ok(())
    })?;
    Ok(names)
}

/// pi-ai's `contentText`: a string, or the text blocks' texts joined with
/// `"\n"`, each as `join` makes it (a missing or null text is empty, any
/// other value its JS string).
fn content_text<V: View>(content: &V) -> Result<JsStr> {
    let blocks = match content_texts(content)? {
        ContentTexts::Whole(s) => return s.to_js_string(),
        ContentTexts::Blocks(blocks) => blocks,
    };
    let mut out = Utf16Builder::new();
    for (k, (i, text)) in blocks.iter().enumerate() {
        if k > 0 {
            out.push_str("\n");
        }
        if let Some(text) = text {
            let text = text.to_js_string().within_with(|| format!("[{i}].text"))?;
            out.push_js(&text);
        }
    }
    Ok(out.finish())
}

/// A section's value as `Object.entries` gives it: a value of the
/// caller's, or one character of a string `sections`.
enum Section<V> {
    Value(V),
    Char(JsStr),
}

/// `Object.entries(message.sections ?? {})`: an object's (or array's) own
/// entries, a string's characters by index, nothing for other values.
fn sections_of<V: View>(message: &V) -> Result<Vec<(JsStr, Section<V>)>> {
    let sections = message.get(Key::Sections)?;
    if sections.is_object_or_array() {
        return Ok(sections
            .entries()?
            .into_iter()
            .map(|(name, value)| (name, Section::Value(value)))
            .collect());
    }
    let Some(s) = sections.string() else {
        return Ok(Vec::new());
    };
    Ok((0..s.utf16_len())
        .map(|i| {
            let unit = s.slice_utf16(i as i64, Some(i as i64 + 1));
            (JsStr::from_string(i.to_string()), Section::Char(unit))
        })
        .collect())
}

#[cfg(test)]
mod tests;
