//! File operations gathered from `read`/`write`/`edit` tool calls, and the
//! lists and tags derived from them.

use indexmap::IndexSet;

use super::error::{Context, Error, Result};
use super::jsstr::JsStr;
use super::view::{Key, View};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOpKind {
    Read,
    Written,
    Edited,
}

impl FileOpKind {
    pub fn index(self) -> u8 {
        self as u8
    }
}

/// `FileOperations`: three insertion-ordered sets, like the JS `Set`s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    pub read: IndexSet<JsStr>,
    pub written: IndexSet<JsStr>,
    pub edited: IndexSet<JsStr>,
}

impl FileOps {
    pub fn add(&mut self, kind: FileOpKind, path: JsStr) {
        match kind {
            FileOpKind::Read => self.read.insert(path),
            FileOpKind::Written => self.written.insert(path),
            FileOpKind::Edited => self.edited.insert(path),
        };
    }
}

/// Calls `found` for each file operation in an assistant message's tool
/// calls, in order, with the same filters as `extractFileOpsFromMessage`.
pub fn extract_file_ops<V: View>(
    message: &V,
    found: &mut dyn FnMut(FileOpKind, JsStr),
) -> Result<()> {
    if !message.is_object_like() {
        let kind = message.kind().describe();
        return Err(Error::type_error(
            "",
            format!("expected a message object, got {kind}"),
        ));
    }
    if !message.get(Key::Role)?.str_is("assistant") {
        return Ok(());
    }
    extract_assistant_file_ops(message, found)
}

/// [`extract_file_ops`] for a message already known to be an assistant's.
/// The reference's `"content" in message` and `"type"/"arguments"/"name" in
/// block` checks are implied by the value tests that follow them here.
pub fn extract_assistant_file_ops<V: View>(
    message: &V,
    found: &mut dyn FnMut(FileOpKind, JsStr),
) -> Result<()> {
    let content = message.get(Key::Content)?;
    let Some(len) = content.array_len() else {
        return Ok(());
    };
    for i in 0..len {
        tool_call_file_op(&content.at(i)?, found).within_with(|| format!("content[{i}]"))?;
    }
    Ok(())
}

/// One content block. Property reads on primitives give `undefined`, as in
/// JS, so no typeof is needed; the tool name is checked before the
/// arguments, so most tool calls (bash, grep...) cost three reads.
fn tool_call_file_op<V: View>(block: &V, found: &mut dyn FnMut(FileOpKind, JsStr)) -> Result<()> {
    if !block.get(Key::Type)?.str_is("toolCall") {
        return Ok(());
    }
    let kind = match block.get(Key::Name)?.str_one_of(&["read", "write", "edit"]) {
        Some(0) => FileOpKind::Read,
        Some(1) => FileOpKind::Written,
        Some(2) => FileOpKind::Edited,
        _ => return Ok(()),
    };
    let Some(path) = block.get(Key::Arguments)?.get(Key::Path)?.string() else {
        return Ok(());
    };
    if !path.is_empty() {
        found(kind, path);
    }
    Ok(())
}

/// Adds the paths of a `details.readFiles` / `details.modifiedFiles` array.
pub fn add_detail_paths<V: View>(
    details: &V,
    key: Key,
    kind: FileOpKind,
    ops: &mut FileOps,
) -> Result<()> {
    let list = details.get(key)?;
    let Some(len) = list.array_len() else {
        return Ok(());
    };
    for i in 0..len {
        let path = details.scoped(|| {
            let item = list.at(i)?;
            item.string().ok_or_else(|| {
                Error::type_error(
                    "",
                    format!("expected a string path, got {}", item.kind().describe()),
                )
            })
        });
        ops.add(kind, path.within_with(|| format!("{}[{i}]", key.as_str()))?);
    }
    Ok(())
}

/// `computeFileLists`: files only read, and files written or edited, each
/// sorted by UTF-16 code units as `Array.prototype.sort` does.
pub fn compute_file_lists(ops: &FileOps) -> (Vec<JsStr>, Vec<JsStr>) {
    let mut modified: IndexSet<&JsStr> = ops.edited.iter().collect();
    modified.extend(ops.written.iter());
    let mut read: Vec<JsStr> = ops
        .read
        .iter()
        .filter(|f| !modified.contains(f))
        .cloned()
        .collect();
    read.sort();
    let mut modified: Vec<JsStr> = modified.into_iter().cloned().collect();
    modified.sort();
    (read, modified)
}

/// `formatFileOperations`: the `<read-files>` / `<modified-files>` tags
/// appended to a summary, or nothing when both lists are empty.
pub fn format_file_operations(read: &[JsStr], modified: &[JsStr]) -> Vec<u16> {
    let mut sections: Vec<Vec<u16>> = Vec::new();
    for (tag, files) in [("read-files", read), ("modified-files", modified)] {
        if files.is_empty() {
            continue;
        }
        let mut s: Vec<u16> = Vec::new();
        push(&mut s, &format!("<{tag}>\n"));
        for (i, f) in files.iter().enumerate() {
            if i > 0 {
                push(&mut s, "\n");
            }
            f.push_utf16_into(&mut s);
        }
        push(&mut s, &format!("\n</{tag}>"));
        sections.push(s);
    }
    let mut out = Vec::new();
    for s in sections {
        push(&mut out, "\n\n");
        out.extend(s);
    }
    out
}

fn push(out: &mut Vec<u16>, s: &str) {
    out.extend(s.encode_utf16());
}
