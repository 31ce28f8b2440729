//! `prepareCompaction` for a session file: read it, take one branch, plan,
//! and name the plan's entries by id, all without a JS object in sight.

use std::path::Path;

use crate::agent_line::AgentLine;
use crate::error::{join, Error, Result};
use crate::js::json;
use crate::js::json::view::Val;
use crate::js::json::Value;
use crate::js::string::JsStr;
use crate::plan::file_ops::{seeded_file_ops, FileOps};
use crate::plan::prepare::{prepare_compaction, Preparation};
use crate::plan::settings::Budget;
use crate::session::entries::Entries;
use crate::session::file::{parse_session_bytes, read_session_file_with, LineParser, SessionFile};
use crate::session::projection::PlanMessage;
use crate::session::tree::{branch_positions, is_header, Leaf};
use crate::tokens::estimate::Counter;

/// The entries of one branch, root first, moved out of the parsed file.
#[derive(Debug)]
pub struct Branch {
    /// A `Value::Array` of the branch's entries.
    pub entries: Value,
    /// The file line of each entry.
    pub lines: Vec<u32>,
    /// The file, as errors name it.
    pub path: String,
}

impl Branch {
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn entry(&self, i: usize) -> Option<&Value> {
        self.entries.at(i)
    }

    /// Rewrites a core error about `branch[i]` to name the file and line.
    pub fn locate(&self, err: Error) -> Error {
        let index = err
            .path
            .first()
            .and_then(|seg| seg.as_str())
            .and_then(|seg| {
                seg.strip_prefix(BRANCH)?
                    .strip_prefix('[')?
                    .strip_suffix(']')
            })
            .and_then(|i| i.parse::<usize>().ok());
        let Some(line) = index.and_then(|i| self.lines.get(i)) else {
            return Error {
                message: join(&[&format!("{}: ", self.path), &err.text()]),
                path: Vec::new(),
                ..err
            };
        };
        let inner = Error {
            path: err.path[1..].to_vec(),
            ..err.clone()
        };
        Error {
            kind: err.kind,
            path: Vec::new(),
            message: join(&[&format!("{}: line {line}: ", self.path), &inner.text()]),
            rooted: false,
        }
    }
}

/// How errors from the core name the branch.
const BRANCH: &str = "branch";

/// Reads the file at `path` and takes the branch ending at `leaf` (the last
/// entry when `None`). The other entries are dropped before this returns.
pub fn load_branch(path: &Path, leaf: Option<&JsStr>) -> Result<Branch> {
    load_branch_with(path, leaf, json::parse)
}

/// [`load_branch`], each line parsed by `parse_line`.
fn load_branch_with(path: &Path, leaf: Option<&JsStr>, parse_line: LineParser) -> Result<Branch> {
    let name = path.display().to_string();
    let file = read_session_file_with(path, parse_line)?;
    let positions = positions_of(&file, &name, leaf)?;
    Ok(branch_at(file, positions, name))
}

/// The entries of `file` at `positions`, moved out of it.
fn branch_at(mut file: SessionFile, positions: Vec<usize>, name: String) -> Branch {
    let mut entries = Vec::with_capacity(positions.len());
    let mut lines = Vec::with_capacity(positions.len());
    for &i in &positions {
        entries.push(std::mem::replace(&mut file.values[i], Value::Null));
        lines.push(file.lines[i]);
    }
    drop(file);
    Branch {
        entries: Value::Array(entries),
        lines,
        path: name,
    }
}

/// The positions in `file` (named `name` in errors) of the branch ending at
/// `leaf` (the last entry when `None`), root first.
fn positions_of(file: &SessionFile, name: &str, leaf: Option<&JsStr>) -> Result<Vec<usize>> {
    branch_positions(&file.values, leaf.map_or(Leaf::Last, Leaf::Id), |i| {
        format!("{name}: line {}", file.lines[i])
    })
}

/// [`positions_of`], where a leaf id no entry has is an error: the caller
/// asked for a branch that is not in the file.
fn known_positions_of(file: &SessionFile, name: &str, leaf: Option<&JsStr>) -> Result<Vec<usize>> {
    let positions = positions_of(file, name, leaf)?;
    if let (Some(id), true) = (leaf, positions.is_empty()) {
        return Err(Error::invalid(format!(
            "{name}: no entry has the id {}",
            json::stringify_to_string(&Value::String(id.clone()))
        )));
    }
    Ok(positions)
}

/// Where a session file's branch lies in its bytes, for a caller that parses
/// the branch's lines itself (the CLI, which keeps the bytes to write the
/// file back whole).
#[derive(Debug, Clone, PartialEq)]
pub struct BranchLines {
    /// The 1-based line of each entry of the branch, root first.
    pub lines: Vec<u32>,
    /// Every entry's string id but the header's, in file order: the ids a
    /// new entry's id must differ from.
    pub ids: Vec<JsStr>,
}

/// The branch of the session file `bytes` (named `name` in errors) ending at
/// `leaf` (the last entry when `None`), read by the same rules as
/// [`load_branch`]. Unlike there, a leaf id no entry has is an error: the
/// caller asked for a branch that is not in the file.
pub fn branch_lines(bytes: &[u8], name: &str, leaf: Option<&JsStr>) -> Result<BranchLines> {
    // Only the entries' ids, parents and types are read: long texts are measured.
    let file = parse_session_bytes(bytes, name, json::parse_for_plan)?;
    let positions = known_positions_of(&file, name, leaf)?;
    Ok(BranchLines {
        lines: positions.iter().map(|&i| file.lines[i]).collect(),
        ids: file
            .values
            .iter()
            .filter(|v| !is_header(v))
            .filter_map(|v| v.get("id").and_then(Value::as_js_str).cloned())
            .collect(),
    })
}

/// The plan, with the summarized entries named by id.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePlan {
    pub first_kept_entry_id: JsStr,
    pub tokens_before: f64,
    pub is_split_turn: bool,
    /// `None` for an entry without a string id.
    pub messages_to_summarize_ids: Vec<Option<JsStr>>,
    pub turn_prefix_ids: Vec<Option<JsStr>>,
    pub file_ops: FileOps,
    /// The previous compaction's `summary`, whatever its type; `None` when
    /// there is no previous compaction or it has no `summary`.
    pub previous_summary: Option<PreviousSummary>,
}

/// A previous compaction's `summary` as the plan holds it: a string, number,
/// boolean or null as it is; an array or object as its `JSON.stringify`
/// text, made where the plan is (off the JS thread), so that a summary
/// nested as deep as a line may be is neither walked nor freed, a call a
/// level, on the caller's stack.
#[derive(Debug, Clone, PartialEq)]
pub enum PreviousSummary {
    Primitive(Value),
    Json(String),
}

impl PreviousSummary {
    fn of(value: &Value) -> Self {
        match value {
            Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => {
                PreviousSummary::Primitive(value.clone())
            }
            _ => PreviousSummary::Json(json::stringify_to_string(value)),
        }
    }
}

fn id_at(branch: &Branch, i: usize) -> Option<JsStr> {
    branch
        .entry(i)
        .and_then(|e| e.get("id"))
        .and_then(Value::as_js_str)
        .cloned()
}

/// `prepareCompaction(branch, settings)` over a loaded branch, as `line`
/// does it; the core's index-based preparation comes back too, for callers
/// that go on to serialize the summarized entries.
pub fn plan_branch(
    branch: &Branch,
    budget: impl Into<Budget>,
    line: &'static AgentLine,
) -> Result<Option<(Preparation, FilePlan)>> {
    let budget = budget.into();
    let array = Val::new(&branch.entries);
    let entries = Entries::new(&array, BRANCH, line)
        .map_err(|e| branch.locate(e))?
        .with_counter(budget.counter);
    let Some(prep) =
        prepare_compaction(&entries, budget.keep_recent_tokens).map_err(|e| branch.locate(e))?
    else {
        return Ok(None);
    };
    let Some(first_kept_entry_id) = id_at(branch, prep.first_kept_entry_index) else {
        // prepare_compaction only plans when the first kept entry has an id.
        return Ok(None);
    };
    let ids = |messages: &[PlanMessage]| -> Vec<Option<JsStr>> {
        messages
            .iter()
            .map(|m| id_at(branch, m.entry as usize))
            .collect()
    };
    let previous_summary = prep
        .previous_compaction
        .and_then(|p| branch.entry(p))
        .and_then(|e| e.get("summary"))
        .map(PreviousSummary::of);
    let plan = FilePlan {
        first_kept_entry_id,
        tokens_before: prep.tokens_before,
        is_split_turn: prep.is_split_turn,
        messages_to_summarize_ids: ids(&prep.summarize),
        turn_prefix_ids: ids(&prep.turn_prefix),
        file_ops: seeded_file_ops(&entries, prep.details_from, &prep.file_ops)
            .map_err(|e| branch.locate(e))?,
        previous_summary,
    };
    Ok(Some((prep, plan)))
}

/// Reads, selects the branch and plans: the whole of `prepareCompactionFromFile`.
pub fn prepare_compaction_from_file(
    path: &Path,
    leaf: Option<&JsStr>,
    budget: impl Into<Budget>,
    line: &'static AgentLine,
) -> Result<Option<FilePlan>> {
    let budget = budget.into();
    let branch = load_branch_with(path, leaf, line_parser(&budget))?;
    Ok(plan_branch(&branch, budget, line)?.map(|(_, plan)| plan))
}

/// [`prepare_compaction_from_file`] on a session file's bytes, read by the
/// caller (named `name` in errors): the CLI, which reads a pipe only once.
/// Unlike there, a leaf id no entry has is an error, as in [`branch_lines`].
pub fn prepare_compaction_from_bytes(
    bytes: &[u8],
    name: &str,
    leaf: Option<&JsStr>,
    budget: impl Into<Budget>,
    line: &'static AgentLine,
) -> Result<Option<FilePlan>> {
    let budget = budget.into();
    let file = parse_session_bytes(bytes, name, line_parser(&budget))?;
    let positions = known_positions_of(&file, name, leaf)?;
    let branch = branch_at(file, positions, name.to_string());
    Ok(plan_branch(&branch, budget, line)?.map(|(_, plan)| plan))
}

/// How a plan's lines are parsed: with the chars/4 estimate a plan reads
/// only the length of message texts, so the parse measures long ones
/// instead of keeping them; a tokenizer needs the text.
fn line_parser(budget: &Budget) -> LineParser {
    match budget.counter {
        Counter::Estimate => json::parse_for_plan,
        Counter::Exact(_) => json::parse,
    }
}

#[cfg(test)]
mod tests;
