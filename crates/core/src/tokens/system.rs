//! System messages in token estimates (the 1.6 agent keeps its system prompt
//! in the session as `role: "system"` messages): what `estimateTokens`
//! counts for one, and for the one message pi-ai's `getCurrentSystemMessage`
//! merges them into (content appended, sections patched by name, tools
//! added and removed by name), measured as it is merged, never built.
//!
//! Where 1.6 would count a malformed field as NaN or by its indices (a
//! section that is not a string, `sections` that is not an object), these
//! are `TypeError`s naming the field.

use rustc_hash::FxHashMap;

use crate::error::{join, quoted, Context, Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::tokens::estimate::{measure_content, Measure};

/// `sections`, when it holds any: its `(name, value)` pairs.
fn section_entries<V: View>(message: &V) -> Result<Vec<(JsStr, V)>> {
    let sections = message.get(Key::Sections)?;
    if !sections.truthy() {
        return Ok(Vec::new());
    }
    if !sections.is_object_or_array() {
        let got = sections.kind().describe();
        return Err(Error::type_error(
            "sections",
            format!("expected an object, got {got}"),
        ));
    }
    sections.entries()
}

/// A section's text measure; `None` for `null` (which removes a section).
fn section_measure<V: View, M: Measure>(name: &JsStr, value: &V, m: &M) -> Result<Option<u64>> {
    if value.kind() == Kind::Null {
        return Ok(None);
    }
    if !value.truthy() {
        return Ok(Some(0));
    }
    m.text(value)?.map(Some).ok_or_else(|| {
        let got = value.kind().describe();
        Error::type_error(
            join(&[&"sections[", &quoted(name), &"]"]),
            format!("expected a string or null, got {got}"),
        )
    })
}

/// What `estimateTokens` measures in a system message: its content (the
/// text-and-image rule; `None` for empty), every section's text, and
/// `JSON.stringify(toolsAdded)`.
pub fn measure_system<V: View, M: Measure>(message: &V, content: Option<&V>, m: &M) -> Result<u64> {
    let mut total = match content {
        Some(c) => measure_content(c, m).within("content")?,
        None => 0,
    };
    for (name, value) in section_entries(message)? {
        total += section_measure(&name, &value, m)?.unwrap_or(0);
    }
    let tools = message.get(Key::ToolsAdded)?;
    if tools.truthy() {
        total += m.json(&tools)?.ok_or_else(|| {
            let got = tools.kind().describe();
            Error::type_error(
                "toolsAdded",
                format!("JSON.stringify gives undefined for {got}"),
            )
        })?;
    }
    Ok(total)
}

/// `timestamp ??= message.timestamp` over the system messages in order:
/// the first timestamp that is not nullish stays; until one comes, each
/// message's own (`null` or `undefined`) replaces the last.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimestampFold {
    #[default]
    Undefined,
    Null,
    Set,
}

impl TimestampFold {
    pub(crate) fn add<V: View>(&mut self, message: &V) -> Result<()> {
        if *self != TimestampFold::Set {
            *self = match message.get(Key::Timestamp)?.kind() {
                Kind::Undefined => TimestampFold::Undefined,
                Kind::Null => TimestampFold::Null,
                _ => TimestampFold::Set,
            };
        }
        Ok(())
    }

    /// `getCurrentSystemMessage` gives `undefined` when the fold ends
    /// `undefined` and no tool is declared.
    pub(crate) fn gives_message(self, tools: usize) -> bool {
        self != TimestampFold::Undefined || tools > 0
    }
}

/// `getCurrentSystemMessage` over a list of messages, measured: add the
/// system messages in order, then ask for [`SystemMerge::measure`].
#[derive(Debug, Default)]
pub struct SystemMerge {
    timestamp: TimestampFold,
    /// Non-empty content texts joined so far, and their measure.
    content_parts: u64,
    content: u64,
    /// Section name → the measure of its current text.
    sections: FxHashMap<JsStr, u64>,
    /// Tool name → the measure of `JSON.stringify(tool)` (4 for `"null"`).
    tools: FxHashMap<JsStr, u64>,
}

/// What `contentText(content)` joins: a string content itself, or each
/// `type: "text"` block's `text` (with the block's index; `None` for a
/// missing or null one, which joins as empty), in order. A null block is a
/// `TypeError`, as `block.type` is in JS; so is content that is neither.
pub(crate) enum ContentTexts<V> {
    Whole(V),
    Blocks(Vec<(usize, Option<V>)>),
}

pub(crate) fn content_texts<V: View>(content: &V) -> Result<ContentTexts<V>> {
    if content.str_len().is_some() {
        return Ok(ContentTexts::Whole(content.clone()));
    }
    let len = content.array_len().ok_or_else(|| {
        let got = content.kind().describe();
        Error::type_error("", format!("expected a string or an array, got {got}"))
    })?;
    let mut texts = Vec::new();
    for i in 0..len {
        let block = content.at(i)?;
        let text = (|| -> Result<Option<Option<V>>> {
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
            Ok(Some(
                (!matches!(text.kind(), Kind::Undefined | Kind::Null)).then_some(text),
            ))
        })()
        .within_with(|| format!("[{i}]"))?;
        if let Some(text) = text {
            texts.push((i, text));
        }
    }
    Ok(ContentTexts::Blocks(texts))
}

/// `contentText(content)` measured, and whether it is non-empty; a text
/// that is not a string is a `TypeError` (1.6 would count its indices).
fn content_text_measure<V: View, M: Measure>(content: &V, m: &M) -> Result<(u64, bool)> {
    let blocks = match content_texts(content)? {
        ContentTexts::Whole(s) => {
            let n = m.text(&s)?.unwrap_or(0);
            return Ok((n, s.str_len().unwrap_or(0) > 0));
        }
        ContentTexts::Blocks(blocks) => blocks,
    };
    let (mut total, mut units) = (0u64, 0usize);
    for (i, text) in &blocks {
        let Some(text) = text else { continue };
        let n = m.text(text)?.ok_or_else(|| {
            let got = text.kind().describe();
            Error::type_error("text", format!("expected a string, got {got}"))
                .within(format!("[{i}]"))
        })?;
        total += n;
        units += text.str_len().unwrap_or(0);
    }
    if blocks.len() > 1 {
        total += (blocks.len() as u64 - 1) * m.literal("\n")?;
        units += blocks.len() - 1;
    }
    Ok((total, units > 0))
}

/// A tool's `name`, the key tools are added and removed by.
pub(crate) fn tool_name<V: View>(tool: &V) -> Result<JsStr> {
    if !tool.is_object_like() {
        let got = tool.kind().describe();
        return Err(Error::type_error("", format!("expected a tool, got {got}")));
    }
    let name = tool.get(Key::Name)?;
    name.string().ok_or_else(|| {
        let got = name.kind().describe();
        Error::type_error("name", format!("expected a string, got {got}"))
    })
}

/// `for (const tool of message[key] ?? [])`: `f` with each item of
/// `toolsAdded` / `toolsRemoved` and its index, one after the other, as the
/// loop reads them (a list of length 2**32 - 1 with nothing in it stops at
/// its first item, as `tool.name` does), each in a scope of its own.
pub(crate) fn for_each_tool<V: View>(
    message: &V,
    key: Key,
    mut f: impl FnMut(usize, &V) -> Result<()>,
) -> Result<()> {
    let list = message.get(key)?;
    if matches!(list.kind(), Kind::Undefined | Kind::Null) {
        return Ok(());
    }
    let len = list.expect_array(key.as_str())?;
    for i in 0..len {
        list.scoped(|| f(i, &list.at(i)?))?;
    }
    Ok(())
}

impl SystemMerge {
    /// Merges one system message, whose content is `content` (`None` for empty).
    pub fn add<V: View, M: Measure>(
        &mut self,
        message: &V,
        content: Option<&V>,
        m: &M,
    ) -> Result<()> {
        self.timestamp.add(message)?;
        if let Some(c) = content {
            let (n, non_empty) = content_text_measure(c, m).within("content")?;
            if non_empty {
                self.content_parts += 1;
                self.content += n;
            }
        }
        for (name, value) in section_entries(message)? {
            match section_measure(&name, &value, m)? {
                None => {
                    self.sections.remove(&name);
                }
                Some(n) => {
                    self.sections.insert(name, n);
                }
            }
        }
        for_each_tool(message, Key::ToolsRemoved, |i, tool| {
            let name = tool_name(tool).within_with(|| format!("toolsRemoved[{i}]"))?;
            self.tools.remove(&name);
            Ok(())
        })?;
        for_each_tool(message, Key::ToolsAdded, |i, tool| {
            let name = tool_name(tool).within_with(|| format!("toolsAdded[{i}]"))?;
            let json = match m.json(tool)? {
                Some(n) => n,
                None => m.literal("null")?,
            };
            self.tools.insert(name, json);
            Ok(())
        })?;
        Ok(())
    }

    /// What `estimateTokens` measures in the merged message; `None` when
    /// `getCurrentSystemMessage` gives `undefined` (no timestamp and no tools).
    pub fn measure<M: Measure>(&self, m: &M) -> Result<Option<u64>> {
        if !self.timestamp.gives_message(self.tools.len()) {
            return Ok(None);
        }
        let mut total = self.content;
        if self.content_parts > 1 {
            total += (self.content_parts - 1) * m.literal("\n\n")?;
        }
        total += self.sections.values().sum::<u64>();
        if !self.tools.is_empty() {
            total += m.literal("[]")? + self.tools.values().sum::<u64>();
            total += (self.tools.len() as u64 - 1) * m.literal(",")?;
        }
        Ok(Some(total))
    }
}
