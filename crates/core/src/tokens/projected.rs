//! How large a context is: `estimateContextTokens` over any list of context
//! messages (an array of the caller's messages, or a session projection),
//! and 1.6's `estimateProjectedContextTokens`, which trusts the last usage
//! only when no `context_edit` or compaction came after it and otherwise
//! estimates everything, the system messages merged into one.

use crate::agent_line::SessionRules;
use crate::agent_line::TokenRules;
use crate::error::{Context, Error, Result};
use crate::js::string::JsStr;
use crate::js::view::{Key, Kind, View};
use crate::session::entries::Entries;
use crate::session::model::{role_of, EntryType, Role};
use crate::session::projection::{role_hint, with_message, MessageKind, Msg, ProjectedMessage};
use crate::tokens::estimate::{
    chars_to_tokens, context_tokens, estimate_context, field, measure_content,
    measure_message_with, valid_assistant_usage, valid_usage, Chars, Content, ContextEstimate,
    Counter, Measure,
};
use crate::tokens::exact::Tokens;
use crate::tokens::system::SystemMerge;

/// A list of context messages, read one at a time.
pub trait ContextList {
    type V: View;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Message `k`'s role, where it is known without reading the message.
    fn role_hint(&self, k: usize) -> Result<Option<Role>>;
    /// Runs `f` on message `k`.
    fn with<R>(&self, k: usize, f: impl FnOnce(Msg<Self::V>) -> Result<R>) -> Result<R>;
    /// Message `k`'s usage in tokens (`Some(None)`: none that counts), where
    /// facts read ahead settle it ([`crate::tokens::context_facts`]).
    fn usage_ahead(&self, _k: usize, _rules: &TokenRules) -> Result<Option<Option<f64>>> {
        Ok(None)
    }
    /// Message `k`'s estimated characters, where facts read ahead settle them.
    fn chars_ahead(&self, _k: usize) -> Result<Option<u64>> {
        Ok(None)
    }
}

/// The caller's array of messages (errors name `[k]`, after the array's name).
pub struct MessageArray<'a, V: View> {
    messages: &'a V,
    len: usize,
    name: &'static str,
}

impl<'a, V: View> MessageArray<'a, V> {
    pub fn new(messages: &'a V) -> Result<Self> {
        Self::named(messages, "")
    }

    /// An array errors name as `name`.
    pub fn named(messages: &'a V, name: &'static str) -> Result<Self> {
        let len = messages.expect_array(name)?;
        Ok(MessageArray {
            messages,
            len,
            name,
        })
    }
}

impl<V: View> ContextList for MessageArray<'_, V> {
    type V = V;
    fn len(&self) -> usize {
        self.len
    }
    fn role_hint(&self, _k: usize) -> Result<Option<Role>> {
        Ok(None)
    }
    fn with<R>(&self, k: usize, f: impl FnOnce(Msg<V>) -> Result<R>) -> Result<R> {
        self.messages
            .scoped(|| f(Msg::Message(self.messages.at(k)?, Content::Own)))
            .within_with(|| format!("{}[{k}]", self.name))
    }
}

/// Messages of a session projection, read from the entries.
pub struct ProjectedMessages<'p, 'e, 'a, V: View> {
    pub entries: &'e Entries<'a, V>,
    pub messages: &'p [ProjectedMessage],
    pub rules: &'p SessionRules,
    /// Whether an entry's own message is estimated from the measures read
    /// ahead ([`Entries::measured_chars`]), asking for them where there
    /// are none: for the cut's walk, which asks for the messages it goes
    /// back over, a batch at a time, and goes on where it stopped.
    pub measured: bool,
}

impl<V: View> ContextList for ProjectedMessages<'_, '_, '_, V> {
    type V = V;
    fn len(&self) -> usize {
        self.messages.len()
    }
    fn role_hint(&self, k: usize) -> Result<Option<Role>> {
        role_hint(self.entries, self.messages[k])
    }
    fn with<R>(&self, k: usize, f: impl FnOnce(Msg<V>) -> Result<R>) -> Result<R> {
        with_message(self.entries, self.messages[k], self.rules, f)
    }
    fn chars_ahead(&self, k: usize) -> Result<Option<u64>> {
        let m = self.messages[k];
        if !self.measured || m.kind != MessageKind::Message {
            return Ok(None);
        }
        self.entries.measured_chars(m.entry)
    }
}

/// The measure of one context message.
pub fn measure_msg<V: View, M: Measure>(msg: Msg<V>, m: &M, rules: &TokenRules) -> Result<u64> {
    match msg {
        Msg::Message(message, content) => measure_message_with(&message, content, m, rules),
        Msg::Custom(Some(content)) => measure_content(&content, m).within("content"),
        Msg::Custom(None) => Ok(0),
        Msg::Summary(entry) => field(&entry, Key::Summary, m),
    }
}

/// The tokens of message `k`, counted with `counter`.
pub fn msg_tokens<L: ContextList>(
    list: &L,
    k: usize,
    counter: Counter,
    rules: &TokenRules,
) -> Result<u64> {
    if counter == Counter::Estimate {
        if let Some(chars) = list.chars_ahead(k)? {
            return Ok(chars_to_tokens(chars));
        }
    }
    list.with(k, |msg| match counter {
        Counter::Estimate => Ok(chars_to_tokens(measure_msg(msg, &Chars, rules)?)),
        Counter::Exact(encoding) => measure_msg(msg, &Tokens(encoding), rules),
    })
}

/// Message `k`'s usage in tokens, when it holds a usage that counts.
fn usage_at<L: ContextList>(list: &L, k: usize, rules: &TokenRules) -> Result<Option<f64>> {
    let hint = list.role_hint(k)?;
    if hint.is_some_and(|role| role != Role::Assistant) {
        return Ok(None);
    }
    if let Some(usage) = list.usage_ahead(k, rules)? {
        return Ok(usage);
    }
    list.with(k, |msg| match msg {
        // (the role read already is not read again)
        Msg::Message(message, _) => match hint {
            Some(_) => valid_assistant_usage(&message, rules),
            None => valid_usage(&message, rules),
        }?
        .map(|u| context_tokens(&u).within("usage"))
        .transpose(),
        _ => Ok(None),
    })
}

/// `estimateContextTokens(messages)`: the last usage that counts, plus
/// estimates of the messages after it.
pub fn context_estimate<L: ContextList>(
    list: &L,
    counter: Counter,
    rules: &TokenRules,
) -> Result<ContextEstimate> {
    estimate_context(
        list.len(),
        |k| usage_at(list, k, rules),
        |k| msg_tokens(list, k, counter, rules),
    )
}

/// The fallback of `estimateProjectedContextTokens`: the merged system
/// message's tokens plus every other message's.
fn estimate_all<L: ContextList, M: Measure>(
    list: &L,
    m: &M,
    to_tokens: fn(u64) -> u64,
    rules: &TokenRules,
    ahead: bool,
) -> Result<u64> {
    let mut merge = SystemMerge::default();
    let mut tokens = 0u64;
    for k in 0..list.len() {
        let hint = list.role_hint(k)?;
        if ahead && hint != Some(Role::System) {
            if let Some(chars) = list.chars_ahead(k)? {
                tokens += to_tokens(chars);
                continue;
            }
        }
        list.with(k, |msg| {
            if let Msg::Message(message, content) = msg {
                let role = match hint {
                    Some(role) => role,
                    None => role_of(&message)?,
                };
                if role == Role::System {
                    return merge.add(&message, content.of(&message, role)?.as_ref(), m);
                }
                tokens += to_tokens(measure_message_with(&message, content, m, rules)?);
                return Ok(());
            }
            tokens += to_tokens(measure_msg(msg, m, rules)?);
            Ok(())
        })?;
    }
    let system = merge.measure(m)?.map_or(0, to_tokens);
    Ok(system + tokens)
}

/// `estimateProjectedContextTokens`: [`context_estimate`] when
/// `usage_is_current(lastUsageIndex)` says no edit or compaction came after
/// that usage; otherwise everything estimated, usage 0. Each message is read
/// once: the usage is looked for first, and what is estimated depends on it.
pub fn projected_context_tokens<L: ContextList>(
    list: &L,
    counter: Counter,
    rules: &TokenRules,
    usage_is_current: impl FnOnce(usize) -> Result<bool>,
) -> Result<ContextEstimate> {
    let mut last = None;
    for k in (0..list.len()).rev() {
        if let Some(tokens) = usage_at(list, k, rules)? {
            last = Some((k, tokens));
            break;
        }
    }
    if let Some((index, usage_tokens)) = last {
        if usage_is_current(index)? {
            let mut trailing = 0u64;
            for k in index + 1..list.len() {
                trailing += msg_tokens(list, k, counter, rules)?;
            }
            let trailing = trailing as f64;
            return Ok(ContextEstimate {
                tokens: usage_tokens + trailing,
                usage_tokens,
                trailing_tokens: trailing,
                last_usage_index: Some(index),
            });
        }
    }
    let tokens = match counter {
        Counter::Estimate => estimate_all(list, &Chars, chars_to_tokens, rules, true)?,
        Counter::Exact(encoding) => estimate_all(list, &Tokens(encoding), |t| t, rules, false)?,
    } as f64;
    Ok(ContextEstimate {
        tokens,
        usage_tokens: 0.0,
        trailing_tokens: tokens,
        last_usage_index: None,
    })
}

/// The last index of a `context_edit` or `compaction` entry, which makes
/// any usage captured before it stale.
pub fn last_invalidating<V: View>(entries: &Entries<V>) -> Result<Option<usize>> {
    for i in (0..entries.len()).rev() {
        if matches!(
            entries.kind(i)?.ty,
            EntryType::ContextEdit | EntryType::Compaction
        ) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// `entry.type === t0 || entry.type === t1 ...`, read as those tests read
/// it: once for each type compared, until one is equal (a missing entry is
/// a `TypeError`, a primitive has none).
fn entry_type_is<V: View>(entry: &V, types: &[&str]) -> Result<bool> {
    if matches!(entry.kind(), Kind::Undefined | Kind::Null) {
        return Err(Error::type_error(
            "",
            format!("expected a session entry, got {}", entry.kind().describe()),
        ));
    }
    for ty in types {
        if entry.get(Key::Type)?.str_one_of(&[ty]).is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The types of the entries that make a usage before them stale.
pub const INVALIDATING_TYPES: [&str; 2] = ["context_edit", "compaction"];

/// The searches among the projected and branch entries that
/// lib/projection-search.js makes for the native walk: the reads the agent's
/// loop over the projected entries, its `findIndex` and its loop back to
/// the last edit make, JIT-compiled, where each was an N-API call here.
/// Each answers [`Found::Unread`] where an entry comes first that the
/// search does not read (a read that throws, or for the projected entries
/// `messages` that is not an array), for this walk to read.
pub trait ProjectionSearch {
    /// Among projected entries `from..to`, whose messages start at
    /// message `start`, the first whose messages hold message `index`,
    /// `entry.messages.length` read in order (`entryHolding`); with
    /// [`Found::Unread`], where that entry's messages start.
    fn entry_holding(&self, index: usize, from: usize, to: usize, start: usize) -> Result<Holding>;
    /// Among branch entries `from..to`, the first whose `id` is `id`, read
    /// in order (`indexOfId`).
    fn first_id(&self, id: &JsStr, from: usize, to: usize) -> Result<Found>;
    /// Among branch entries `..to`, the last whose `type` is one of
    /// [`INVALIDATING_TYPES`], read from the end (`lastIndexOfType`).
    fn last_invalidating(&self, to: usize) -> Result<Found>;
}

/// What a [`ProjectionSearch`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    At(usize),
    Unread(usize),
    None,
}

/// What [`ProjectionSearch::entry_holding`] found, and for
/// [`Found::Unread`] where that entry's messages start.
pub type Holding = (Found, usize);

/// `found`, where it names an entry of `range`; else the searches' internal error.
fn in_range(found: Found, range: std::ops::Range<usize>) -> Result<Found> {
    match found {
        Found::At(i) | Found::Unread(i) if !range.contains(&i) => Err(malformed_searches()),
        _ => Ok(found),
    }
}

/// A [`ProjectionSearch`] (or its form) disagrees with this reader: a bug,
/// never the caller's input.
pub fn malformed_searches() -> Error {
    Error::internal("a bad projection search answer")
}

/// `usageEntryIndex > latestInvalidatingEntryIndex` for the agent's own
/// `SessionProjection` object and branch entries: finds the projected entry
/// that holds message `usage_index` (by `entries[k].messages.length`), the
/// first branch entry with its source's id, and the last `context_edit` or
/// `compaction` among the branch entries. `projected` is
/// `projection.entries`; `searches`, lib/projection-search.js's over them
/// and the branch (anything they leave is read here; without them,
/// everything).
pub fn usage_is_current_in<V: View>(
    projected: &V,
    branch: &V,
    usage_index: usize,
    searches: Option<&dyn ProjectionSearch>,
) -> Result<bool> {
    let count = projected.expect_array("projection.entries")?;
    let mut start = 0usize;
    let mut usage_id = None;
    let mut next = 0;
    while next < count {
        let mut k = next;
        // Whether the search read entry k's messages (and found the usage there).
        let mut holds = false;
        if let Some(f) = searches {
            let (found, at) = f.entry_holding(usage_index, next, count, start)?;
            match in_range(found, next..count)? {
                Found::At(found) => (k, holds) = (found, true),
                Found::None => break,
                Found::Unread(unread) => (k, start) = (unread, at),
            }
        }
        next = k + 1;
        let found = projected
            .scoped(|| -> Result<Option<Option<JsStr>>> {
                let entry = projected.at(k)?;
                if !holds {
                    entry.expect_object("", "a projected entry { sourceEntry, messages }")?;
                    let len = entry.get(Key::Messages)?.expect_array("messages")?;
                    if usage_index >= start + len {
                        start += len;
                        return Ok(None);
                    }
                }
                let source = entry.get(Key::SourceEntry)?;
                if matches!(source.kind(), Kind::Undefined | Kind::Null) {
                    let got = source.kind().describe();
                    return Err(Error::type_error(
                        "sourceEntry",
                        format!("expected a session entry, got {got}"),
                    ));
                }
                let id = source.get(Key::Id).within("sourceEntry")?;
                if let Some(s) = id.string() {
                    return Ok(Some(Some(s)));
                }
                if id.truthy() {
                    return Err(Error::type_error(
                        "sourceEntry.id",
                        format!("expected a string id, got {}", id.kind().describe()),
                    ));
                }
                Ok(Some(None))
            })
            .within_with(|| format!("projection.entries[{k}]"))?;
        if let Some(id) = found {
            usage_id = id;
            break;
        }
    }
    let len = branch.expect_array("branchEntries")?;
    let usage_entry = match usage_id.filter(|id| !id.is_empty()) {
        None => None,
        Some(id) => {
            let mut at = None;
            let mut next = 0;
            while next < len {
                let mut i = next;
                if let Some(f) = searches {
                    match in_range(f.first_id(&id, next, len)?, next..len)? {
                        Found::At(found) => {
                            at = Some(found);
                            break;
                        }
                        Found::None => break,
                        Found::Unread(unread) => i = unread,
                    }
                }
                next = i + 1;
                let same = branch
                    .scoped(|| {
                        let entry = branch.at(i)?;
                        if matches!(entry.kind(), Kind::Undefined | Kind::Null) {
                            return Err(Error::type_error(
                                "",
                                format!(
                                    "expected a session entry, got {}",
                                    entry.kind().describe()
                                ),
                            ));
                        }
                        Ok(entry.get(Key::Id)?.string().is_some_and(|s| s == id))
                    })
                    .within_with(|| format!("branchEntries[{i}]"))?;
                if same {
                    at = Some(i);
                    break;
                }
            }
            at
        }
    };
    let mut invalidating = None;
    let mut end = len;
    while end > 0 {
        let mut i = end - 1;
        if let Some(f) = searches {
            match in_range(f.last_invalidating(end)?, 0..end)? {
                Found::At(found) => {
                    invalidating = Some(found);
                    break;
                }
                Found::None => break,
                Found::Unread(unread) => i = unread,
            }
        }
        end = i;
        let hit = branch
            .scoped(|| entry_type_is(&branch.at(i)?, &INVALIDATING_TYPES))
            .within_with(|| format!("branchEntries[{i}]"))?;
        if hit {
            invalidating = Some(i);
            break;
        }
    }
    // -1 for "none" on either side, as the reference compares them.
    let as_index = |i: Option<usize>| i.map_or(-1, |i| i as i64);
    Ok(as_index(usage_entry) > as_index(invalidating))
}

#[cfg(test)]
mod branch_search_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::js::json::view::Val;
    use crate::js::json::{parse, Value};
    use std::cell::RefCell;

    /// The searches, as lib/projection-search.js's `entryHolding`,
    /// `indexOfId` and `lastIndexOfType`, but leaving `unread` (and the
    /// projected entries of no count) to the walk; their calls recorded.
    struct Search {
        /// Each projected entry's message count (`None`: left to the walk).
        counts: Vec<Option<usize>>,
        fields: Vec<(Option<JsStr>, Option<JsStr>)>,
        unread: Option<usize>,
        out_of_range: bool,
        calls: RefCell<Vec<String>>,
    }

    impl ProjectionSearch for Search {
        fn entry_holding(
            &self,
            index: usize,
            from: usize,
            to: usize,
            start: usize,
        ) -> Result<Holding> {
            let mut start = start;
            self.calls.borrow_mut().push(format!("entry {from}..{to}"));
            for k in from..to {
                let Some(count) = self.counts[k] else {
                    return Ok((Found::Unread(k), start));
                };
                start += count;
                if index < start {
                    return Ok((Found::At(k), 0));
                }
            }
            Ok((Found::None, 0))
        }

        fn first_id(&self, id: &JsStr, from: usize, to: usize) -> Result<Found> {
            self.calls.borrow_mut().push(format!("id {from}..{to}"));
            if self.out_of_range {
                return Ok(Found::At(to));
            }
            for i in from..to {
                if Some(i) == self.unread {
                    return Ok(Found::Unread(i));
                }
                if self.fields[i].0.as_ref() == Some(id) {
                    return Ok(Found::At(i));
                }
            }
            Ok(Found::None)
        }

        fn last_invalidating(&self, to: usize) -> Result<Found> {
            self.calls.borrow_mut().push(format!("type ..{to}"));
            for i in (0..to).rev() {
                if Some(i) == self.unread {
                    return Ok(Found::Unread(i));
                }
                let ty = self.fields[i].1.as_ref();
                if INVALIDATING_TYPES
                    .iter()
                    .any(|t| ty == Some(&JsStr::from(*t)))
                {
                    return Ok(Found::At(i));
                }
            }
            Ok(Found::None)
        }
    }

    /// Each branch entry's id and type.
    fn fields_of(branch: &Value) -> Vec<(Option<JsStr>, Option<JsStr>)> {
        let Value::Array(entries) = branch else {
            panic!("not an array")
        };
        let field = |e: &Value, key: &str| match e {
            Value::Object(o) => match o.get(key) {
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        };
        entries
            .iter()
            .map(|e| (field(e, "id"), field(e, "type")))
            .collect()
    }

    #[test]
    fn the_walk_takes_what_the_searches_find_and_reads_what_they_leave() {
        // Entry "b" (the usage's) is on the branch twice: the first counts.
        // The context edit at 0 comes before it: the usage is current, and
        // it would not be were "b" not found, or the edit taken for later.
        let projected = parse(
            r#"[{"sourceEntry":{"type":"message","id":"a"},"messages":[1]},
                {"sourceEntry":{"type":"message","id":"b"},"messages":[2]}]"#,
        )
        .unwrap();
        let branch = parse(
            r#"[{"type":"context_edit","id":"e"},{"type":"message","id":"a"},
                {"type":"message","id":"b"},{"type":"message","id":"b"}]"#,
        )
        .unwrap();
        let (p, b) = (Val::new(&projected), Val::new(&branch));
        let alone = usage_is_current_in(&p, &b, 1, None).unwrap();
        assert!(alone);
        let fields = fields_of(&branch);
        let expected: [(Option<usize>, &[&str]); 5] = [
            (None, &["entry 0..2", "id 0..4", "type ..4"]),
            // "e" at 0 read here: not the id, and the search goes on past
            // it; then it is the edit, read here too.
            (Some(0), &["entry 0..2", "id 0..4", "id 1..4", "type ..4"]),
            // "b" at 2 read here: the id; then not an edit, and the search
            // goes on before it.
            (Some(2), &["entry 0..2", "id 0..4", "type ..4", "type ..2"]),
            // The second "b" at 3: the id search finds the first before
            // it; the type search starts there: read here, not an edit.
            (Some(3), &["entry 0..2", "id 0..4", "type ..4", "type ..3"]),
            // "a" at 1, left by both searches: read here by each walk.
            (
                Some(1),
                &["entry 0..2", "id 0..4", "id 2..4", "type ..4", "type ..1"],
            ),
        ];
        // Each projected entry's count read by the search, or either left
        // to the walk (the first: read here, then the search goes on past
        // it, its messages counted).
        let counted: [(Vec<Option<usize>>, &[&str]); 3] = [
            (vec![Some(1), Some(1)], &[]),
            (vec![None, Some(1)], &["entry 1..2"]),
            (vec![Some(1), None], &[]),
        ];
        for ((unread, calls), (counts, more)) in expected
            .into_iter()
            .flat_map(|e| counted.iter().map(move |c| (e, c)))
        {
            let search = Search {
                counts: counts.clone(),
                fields: fields.clone(),
                unread,
                out_of_range: false,
                calls: RefCell::new(Vec::new()),
            };
            assert_eq!(
                usage_is_current_in(&p, &b, 1, Some(&search)).unwrap(),
                alone,
                "{unread:?}"
            );
            let mut want: Vec<&str> = calls[..1].to_vec();
            want.extend(more.iter());
            want.extend(&calls[1..]);
            assert_eq!(*search.calls.borrow(), want, "{unread:?} {counts:?}");
        }
        // A search answering out of its range is the searches' internal error.
        let search = Search {
            counts: vec![Some(1), Some(1)],
            fields,
            unread: None,
            out_of_range: true,
            calls: RefCell::new(Vec::new()),
        };
        let err = usage_is_current_in(&p, &b, 1, Some(&search)).unwrap_err();
        assert!(err.to_string().contains("internal error"), "{err}");
    }
}
