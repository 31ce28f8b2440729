//! File operations gathered from `read`/`write`/`edit` tool calls, and the
//! lists and tags derived from them.

use std::hash::BuildHasherDefault;

use indexmap::IndexSet;

use crate::plan::branch_summary::FxHasher;

use crate::agent_line::FileOpRules;
use crate::error::{Context, Error, Result};
use crate::js::elements::each_element;
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};

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

/// Paths in insertion order, hashed as ids are (paths come from the
/// caller's own session).
pub type PathSet = IndexSet<JsStr, BuildHasherDefault<FxHasher>>;

/// `FileOperations`: three insertion-ordered sets, like the JS `Set`s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    pub read: PathSet,
    pub written: PathSet,
    pub edited: PathSet,
}

impl FileOps {
    fn set_mut(&mut self, kind: FileOpKind) -> &mut PathSet {
        match kind {
            FileOpKind::Read => &mut self.read,
            FileOpKind::Written => &mut self.written,
            FileOpKind::Edited => &mut self.edited,
        }
    }

    /// Adds a copy of `path` unless the set has it already.
    pub fn add_ref(&mut self, kind: FileOpKind, path: &JsStr) {
        let set = self.set_mut(kind);
        if !set.contains(path) {
            set.insert(path.clone());
        }
    }

    pub fn add(&mut self, kind: FileOpKind, path: JsStr) {
        self.set_mut(kind).insert(path);
    }
}

/// Calls `found` for each file operation of a message, in order, with the
/// same filters as `extractFileOpsFromMessage`: an assistant message's tool
/// calls, and (where the line records them) a tool result's nested calls.
pub fn extract_file_ops<V: View>(
    message: &V,
    found: &mut dyn FnMut(FileOpKind, JsStr),
    rules: &FileOpRules,
) -> Result<()> {
    if !message.is_object_like() {
        let kind = message.kind().describe();
        return Err(Error::type_error(
            "",
            format!("expected a message object, got {kind}"),
        ));
    }
    match message
        .get(Key::Role)?
        .str_one_of(&["assistant", "toolResult"])
    {
        Some(0) => extract_tool_call_file_ops(&message.get(Key::Content)?, found).within("content"),
        Some(_) if rules.nested_calls => extract_nested_call_file_ops(message, found),
        _ => Ok(()),
    }
}

/// The tool calls of an assistant message's `content`. The reference's
/// `"content" in message` and `"type"/"arguments"/"name" in block` checks
/// are implied by the value tests that follow them here.
pub fn extract_tool_call_file_ops<V: View>(
    content: &V,
    found: &mut dyn FnMut(FileOpKind, JsStr),
) -> Result<()> {
    let Some(len) = content.array_len() else {
        return Ok(());
    };
    each_element(content, len, |i, block| {
        tool_call_file_op(block, found).within_with(|| format!("[{i}]"))
    })
}

/// A tool result's `nestedCalls.calls` (calls a script made), each counted
/// as a tool call of its `name` with its `arguments`, whatever its status.
/// Calls that are not an array (a string, iterated, adds nothing) and null
/// records are `TypeError`s naming the field, where the reference throws a
/// bare one.
pub fn extract_nested_call_file_ops<V: View>(
    message: &V,
    found: &mut dyn FnMut(FileOpKind, JsStr),
) -> Result<()> {
    // `nestedCalls?.calls`: a primitive has no calls either (most tool
    // results have no nestedCalls, and reading through undefined is dear).
    let nested = message.get(Key::NestedCalls)?;
    if !nested.is_object_like() {
        return Ok(());
    }
    let calls = nested.get(Key::Calls)?;
    if matches!(calls.kind(), Kind::Undefined | Kind::Null | Kind::String) {
        return Ok(());
    }
    let len = calls.array_len().ok_or_else(|| {
        let got = calls.kind().describe();
        Error::type_error(
            "nestedCalls.calls",
            format!("expected an array of call records, got {got}"),
        )
    })?;
    for i in 0..len {
        let call = calls.at(i)?;
        if matches!(call.kind(), Kind::Undefined | Kind::Null) {
            let got = call.kind().describe();
            return Err(Error::type_error(
                format!("nestedCalls.calls[{i}]"),
                format!("expected a call record, got {got}"),
            ));
        }
        add_file_op(&call.get(Key::Name)?, || call.get(Key::Arguments), found)
            .within_with(|| format!("nestedCalls.calls[{i}]"))?;
    }
    Ok(())
}

/// `addFileOp(name, args)`: a `read`, `write` or `edit` with a non-empty
/// string `args.path`. The name is checked first, so the arguments of most
/// calls (bash, grep...) are never read.
fn add_file_op<V: View>(
    name: &V,
    args: impl FnOnce() -> Result<V>,
    found: &mut dyn FnMut(FileOpKind, JsStr),
) -> Result<()> {
    let Some(kind) = name.str_one_of(&FILE_TOOLS).map(|i| FILE_TOOL_OPS[i]) else {
        return Ok(());
    };
    if let Some(path) = args()?.get(Key::Path)?.string().filter(|p| !p.is_empty()) {
        found(kind, path);
    }
    Ok(())
}

/// The tools whose calls are file operations, and the operation of each.
const FILE_TOOLS: [&str; 3] = ["read", "write", "edit"];
const FILE_TOOL_OPS: [FileOpKind; 3] = [FileOpKind::Read, FileOpKind::Written, FileOpKind::Edited];

/// [`add_file_op`] for a call read ahead as its name and path, UTF-16
/// ([`crate::session::facts`]), in two halves, so a reader that meets the
/// same name or path many times works each out once: the operation of a
/// call to the tool named `name`, if it is a file tool ...
pub fn file_tool_op(name: &[u16]) -> Option<FileOpKind> {
    let i = FILE_TOOLS
        .iter()
        .position(|tool| tool.encode_utf16().eq(name.iter().copied()))?;
    Some(FILE_TOOL_OPS[i])
}

/// ... and the place of its `path` in `paths` (added there if new), or
/// `None` for an empty path, which names no file.
pub fn insert_call_path(paths: &mut PathSet, path: &[u16], scratch: &mut Vec<u8>) -> Option<usize> {
    (!path.is_empty()).then(|| insert_path(paths, path, scratch))
}

/// A `str` looked up in a [`PathSet`]. It hashes as a [`JsStr`] holding
/// it does (a well-formed `JsStr` hashes its `str`).
#[derive(Hash)]
struct PathKey<'a>(&'a str);

impl indexmap::Equivalent<JsStr> for PathKey<'_> {
    fn equivalent(&self, key: &JsStr) -> bool {
        key.eq_str(self.0)
    }
}

/// Where `path` is in `paths`, added if new. An ASCII path already there
/// is found through its bytes (in `scratch`) without making a string of it:
/// most calls name a file an earlier call named.
fn insert_path(paths: &mut PathSet, path: &[u16], scratch: &mut Vec<u8>) -> usize {
    if path.iter().all(|&u| u < 0x80) {
        scratch.clear();
        scratch.extend(path.iter().map(|&u| u as u8));
        if let Ok(s) = std::str::from_utf8(scratch) {
            return match paths.get_index_of(&PathKey(s)) {
                Some(at) => at,
                None => paths.insert_full(JsStr::from_str(s)).0,
            };
        }
    }
    paths.insert_full(JsStr::from_utf16(path)).0
}

/// One content block. Property reads on primitives give `undefined`, as in
/// JS, so no typeof is needed.
fn tool_call_file_op<V: View>(block: &V, found: &mut dyn FnMut(FileOpKind, JsStr)) -> Result<()> {
    if !block.get(Key::Type)?.str_is("toolCall") {
        return Ok(());
    }
    add_file_op(&block.get(Key::Name)?, || block.get(Key::Arguments), found)
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

/// The file Sets as JS builds them: the listed entries' `details` first
/// (`readFiles` into read, `modifiedFiles` into edited; strings only here),
/// then the tool calls' operations.
pub fn seeded_file_ops<V: View>(
    entries: &crate::session::entries::Entries<V>,
    details_from: impl IntoIterator<Item = usize>,
    ops: &FileOps,
) -> Result<FileOps> {
    let mut out = FileOps::default();
    for i in details_from {
        entries.with_entry(i, |e| {
            let details = e.get(Key::Details)?;
            add_detail_paths(&details, Key::ReadFiles, FileOpKind::Read, &mut out)
                .within("details")?;
            add_detail_paths(&details, Key::ModifiedFiles, FileOpKind::Edited, &mut out)
                .within("details")
        })?;
    }
    for (kind, set) in [
        (FileOpKind::Read, &ops.read),
        (FileOpKind::Written, &ops.written),
        (FileOpKind::Edited, &ops.edited),
    ] {
        for path in set {
            out.add(kind, path.clone());
        }
    }
    Ok(out)
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

/// A value as a `Set` tells values apart (SameValueZero); objects, symbols
/// and BigInts are compared with `===` instead.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum SetKey {
    Str(JsStr),
    Num(u64),
    Bool(bool),
    Null,
    Undefined,
    Other,
}

fn set_key<V: View>(v: &V) -> SetKey {
    if let Some(s) = v.string() {
        return SetKey::Str(s);
    }
    match v.kind() {
        Kind::Number => {
            let n = v.number().unwrap_or(f64::NAN);
            // SameValueZero: every NaN is one value, and -0 is +0.
            let n = if n.is_nan() {
                f64::NAN
            } else if n == 0.0 {
                0.0
            } else {
                n
            };
            SetKey::Num(n.to_bits())
        }
        Kind::Bool => SetKey::Bool(v.boolean().unwrap_or(false)),
        Kind::Null => SetKey::Null,
        Kind::Undefined => SetKey::Undefined,
        _ => SetKey::Other,
    }
}

/// An insertion-ordered set of JS values, as indices into a value list.
struct ValueSet<'a, V: View> {
    values: &'a [V],
    /// The members told apart by their key, each by its index.
    keyed: std::collections::HashMap<SetKey, usize, BuildHasherDefault<FxHasher>>,
    /// The members compared with `===` (objects, symbols, BigInts).
    others: Vec<usize>,
    /// Every member, in the order it was added.
    order: Vec<usize>,
}

impl<'a, V: View> ValueSet<'a, V> {
    fn new(values: &'a [V]) -> Self {
        ValueSet {
            values,
            keyed: Default::default(),
            others: Vec::new(),
            order: Vec::new(),
        }
    }

    /// The member equal to value `index` (whose key is `key`), if any.
    fn position(&self, key: &SetKey, index: usize) -> Result<Option<usize>> {
        if *key != SetKey::Other {
            return Ok(self.keyed.get(key).copied());
        }
        for &i in &self.others {
            if self.values[i].strict_equals(&self.values[index])? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// Adds value `index`, known not to be a member.
    fn push(&mut self, key: &SetKey, index: usize) {
        if *key == SetKey::Other {
            self.others.push(index);
        } else {
            self.keyed.insert(key.clone(), index);
        }
        self.order.push(index);
    }
}

/// `computeFileLists` over arbitrary values (`details` lists are typed
/// `unknown`, so the Sets may hold more than strings). `values` holds the
/// read Set's members, then the edited and written Sets' (in that order);
/// `read_len` marks where the read part ends. Returns the indices of
/// the read-only files and of the modified files, each in the order
/// `Array.prototype.sort()` gives: by `String(value)` in UTF-16 code
/// units, stable, `undefined` last.
pub fn compute_file_lists_values<V: View>(
    values: &[V],
    read_len: usize,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let keys: Vec<SetKey> = values.iter().map(set_key).collect();
    let mut modified = ValueSet::new(values);
    for (i, key) in keys.iter().enumerate().skip(read_len) {
        if modified.position(key, i)?.is_none() {
            modified.push(key, i);
        }
    }
    let mut read_only = Vec::new();
    for (i, key) in keys.iter().enumerate().take(read_len) {
        if modified.position(key, i)?.is_none() {
            read_only.push(i);
        }
    }
    let modified = modified.order;
    Ok((
        js_sorted(values, &keys, read_only)?,
        js_sorted(values, &keys, modified)?,
    ))
}

/// Whether a `Set` keeps `v` as `0`: `-0` (the modified files come out of one).
pub fn set_keeps_as_zero<V: View>(v: &V) -> bool {
    v.number().is_some_and(|n| n == 0.0 && n.is_sign_negative())
}

fn js_sorted<V: View>(values: &[V], keys: &[SetKey], indices: Vec<usize>) -> Result<Vec<usize>> {
    let (undefined, defined): (Vec<usize>, Vec<usize>) = indices
        .into_iter()
        .partition(|&i| matches!(keys[i], SetKey::Undefined));
    // With nothing to compare it with, `sort` converts no value (a lone
    // Symbol sorts as itself).
    if defined.len() < 2 {
        return Ok(defined.into_iter().chain(undefined).collect());
    }
    let mut keyed = Vec::with_capacity(defined.len());
    for i in defined {
        match &keys[i] {
            SetKey::Str(s) => keyed.push((s.clone(), i)),
            _ => keyed.push((values[i].to_js_string()?, i)),
        }
    }
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(keyed.into_iter().map(|(_, i)| i).chain(undefined).collect())
}

/// An element as `Array.prototype.join` shows it: `""` for null and
/// undefined, `String(value)` otherwise.
pub fn join_element<V: View>(v: &V) -> Result<JsStr> {
    if let Some(s) = v.string() {
        return Ok(s);
    }
    match v.kind() {
        Kind::Undefined | Kind::Null => Ok(JsStr::empty()),
        _ => v.to_js_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{PathKey, PathSet};
    use crate::js::string::JsStr;

    #[test]
    fn a_path_key_finds_the_path_inline_or_boxed() {
        let long = "/home/someone/project/src/a/rather/long/path.ts";
        let mut paths = PathSet::default();
        paths.insert(JsStr::from_str("a.ts"));
        paths.insert(JsStr::from_str(long));
        paths.insert(JsStr::from_str("dé.ts"));
        assert_eq!(paths.get_index_of(&PathKey("a.ts")), Some(0));
        assert_eq!(paths.get_index_of(&PathKey(long)), Some(1));
        assert_eq!(paths.get_index_of(&PathKey("dé.ts")), Some(2));
        assert_eq!(paths.get_index_of(&PathKey("b.ts")), None);
    }
}
