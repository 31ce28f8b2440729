//! Exports for branch summarization's pure parts: `collectEntriesForBranchSummary`
//! (walking the caller's session through its own `getEntry`) and
//! `prepareBranchEntries`.

use std::hash::{Hash, Hasher};
use std::ptr;

use napi::{sys, Env};
use napi_derive::napi;

use crate::agent_line::line_arg;
use crate::entry_facts::EntryFacts;
use crate::js::errors::run;
use crate::js::flat::{form_field, typed_array_slice};
use crate::js::out::{Arg, Raw, RawValue};
use crate::js::view::{check, Cx, JsVal};
use crate::prepare_compaction::messages_object;
use prime_compaction_core::error::{join, quoted, Context, Error, Result};
use prime_compaction_core::js::string::JsStr;
use prime_compaction_core::js::view::{Key, Kind, View};
use prime_compaction_core::plan::branch_summary::{
    collect_entries_for_branch_summary, prepare_branch_entries, Collected, EntryLookup, Found,
};
use prime_compaction_core::session::entries::Entries;

/// The caller's session, read through `session.getEntry`, and the two
/// paths as lib/entry-path.js read them ahead, if it did.
struct JsSession<'c> {
    cx: &'c Cx,
    session: Raw,
    get_entry: Raw,
    ahead: Option<ReadAhead<'c>>,
    /// What a step of the target's path threw, while the walk holds it.
    thrown: Option<Raw>,
}

/// Ids are short (8 hex digits from the agent), so one read here takes a
/// single call into a stack buffer.
const INLINE: usize = 11;

/// A JS string id: its code units (compared and hashed), a run of the
/// read-ahead path's `ids` string (the walk's common case, no copy) or
/// kept for the call ([`Cx::keep`]); and its string, to hand back to `getEntry` or
/// return: a handle of this call, or null for an id of the read-ahead path,
/// whose string is made from its units only when needed (a string equal to
/// the original, which no JS code can tell from it).
#[derive(Clone, Copy)]
struct JsId<'c> {
    units: &'c [u16],
    raw: Raw,
}

impl PartialEq for JsId<'_> {
    /// Unit by unit, inline: ids are a few units long, and a call into
    /// `memcmp` for each comparison was a quarter of a long walk. An id the
    /// walk passes on (a parent looked up next, an entry whose id is the
    /// one looked up) is the very same run of units, found equal at once.
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.units, other.units);
        a.len() == b.len()
            && (ptr::eq(a.as_ptr(), b.as_ptr()) || a.iter().zip(b).all(|(x, y)| x == y))
    }
}

impl Eq for JsId<'_> {}

impl Hash for JsId<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.units.hash(state);
    }
}

/// An entry the walk found: a handle, or step `k` of the path read ahead
/// (a word wide like the handle, so the walk copies it whole; see
/// docs/boundary.md).
#[derive(Clone, Copy, PartialEq)]
enum EntryRef {
    Handle(Raw),
    Step(u64),
}

use prime_compaction_core::plan::branch_summary::entry_path::{PathCodes, StepId, StepParent};

/// The two paths as lib/entry-path.js read them: `{ getEntry, entries,
/// others, codes, ids, targetSteps, oldSteps }` (documented there), the
/// target's steps first, then the old branch's, then (with `oldSteps`) the
/// target's path read on. Its steps are handed to the walk while it asks
/// for them in order; once it asks for anything else, every later read is
/// made here.
struct ReadAhead<'c> {
    entries: Raw,
    others: Raw,
    codes: PathCodes<'c>,
    units: &'c [u16],
    /// Steps of the target's path, which the old branch's follow.
    target_steps: u32,
    old_leaf: JsId<'c>,
    /// Where the old branch's steps end when the target's path is read on
    /// after them, and the id that goes on from (the parent of the target's
    /// last first step).
    old_end: Option<u32>,
    target_next: Option<JsId<'c>>,
    /// The next step, and its element of `others`.
    step: u32,
    other: u32,
    /// The id the next step was looked up by; `None` once the walk has
    /// left the path read ahead.
    expect: Option<JsId<'c>>,
}

/// Reads `raw` as a string id: `Ok(None)` when it is not a string. Its
/// units are kept for the call ([`Cx::keep`]), so that every [`JsId`]
/// borrows its units and is a plain copy: the walk passes ids by value at
/// every step.
fn read_units(cx: &Cx, raw: Raw) -> Result<Option<&[u16]>> {
    let mut buf = [0u16; INLINE + 1];
    let mut written = 0usize;
    let status = unsafe {
        sys::napi_get_value_string_utf16(cx.env, raw, buf.as_mut_ptr(), buf.len(), &mut written)
    };
    if status == sys::Status::napi_string_expected {
        return Ok(None);
    }
    check(status)?;
    if written < INLINE {
        return Ok(Some(cx.keep(buf[..written].into())));
    }
    Ok(Some(cx.keep(cx.read_utf16(raw)?.into_boxed_slice())))
}

/// A truthy id argument or `parentId`; `None` when falsy, as the
/// reference's `while (current)` and `parentId ? ... : undefined` read it.
fn js_id<'c>(cx: &'c Cx, raw: Raw, name: &str) -> Result<Option<JsId<'c>>> {
    if let Some(units) = read_units(cx, raw)? {
        return Ok((!units.is_empty()).then_some(JsId { units, raw }));
    }
    let v = cx.wrap(raw)?;
    if !v.truthy() {
        return Ok(None);
    }
    Err(Error::type_error(
        name,
        format!("expected a string id, got {}", v.kind().describe()),
    ))
}

/// The error for an entry whose `id` is not a string.
fn id_error(own: &JsVal<'_>) -> Error {
    Error::type_error(
        "id",
        format!("expected a string id, got {}", own.kind().describe()),
    )
}

/// An error of the step `session.getEntry(id)`, named so.
#[cold]
fn get_entry_error(error: Error, id: &JsId<'_>) -> Error {
    error.within(join(&[
        &"session.getEntry(",
        &quoted(&JsStr::from_utf16(id.units)),
        &")",
    ]))
}

/// The read-ahead form disagrees with this reader: a bug, never the caller's input.
fn malformed() -> Error {
    Error::internal("bad read-ahead entry path")
}

fn element(cx: &Cx, array: Raw, index: u32) -> Result<Raw> {
    let mut out = ptr::null_mut();
    check(unsafe { sys::napi_get_element(cx.env, array, index, &mut out) })?;
    Ok(out)
}

impl<'c> ReadAhead<'c> {
    /// The form with `ids` read into `units`: its first step looked up by
    /// `target` (by `old_leaf` when it has no steps of the target's path).
    fn new(
        cx: &'c Cx,
        form: Raw,
        units: &'c [u16],
        old_leaf: &JsId<'c>,
        target: Option<&JsId<'c>>,
    ) -> Result<ReadAhead<'c>> {
        let codes = PathCodes::new(
            typed_array_slice::<i32>(
                cx,
                form_field(cx, form, c"codes")?,
                sys::TypedarrayType::int32_array,
            )
            .map_err(|_| malformed())?,
            units.len(),
        );
        let target_steps = cx
            .wrap(form_field(cx, form, c"targetSteps")?)?
            .number()
            .filter(|n| n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(n))
            .ok_or_else(malformed)? as u32;
        let old_steps = cx.wrap(form_field(cx, form, c"oldSteps")?)?;
        let old_end = match old_steps.kind() {
            Kind::Undefined => None,
            _ => Some(
                old_steps
                    .number()
                    .filter(|n| n.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(n))
                    .and_then(|n| target_steps.checked_add(n as u32))
                    .filter(|&end| target_steps > 0 && end as usize <= codes.steps())
                    .ok_or_else(malformed)?,
            ),
        };
        let expect = match (target_steps, target) {
            (0, _) => *old_leaf,
            (_, Some(target)) => *target,
            (_, None) => return Err(malformed()),
        };
        Ok(ReadAhead {
            entries: form_field(cx, form, c"entries")?,
            others: form_field(cx, form, c"others")?,
            codes,
            units,
            target_steps,
            old_leaf: *old_leaf,
            old_end,
            target_next: None,
            step: 0,
            other: 0,
            expect: Some(expect),
        })
    }

    /// The id the step after this one is looked up by: the old leaf's once
    /// the target's steps are done, the target's next once the old
    /// branch's are (when the target's path was read on), else the parent
    /// found (if any).
    fn expect_after(&mut self, parent: Option<&JsId<'c>>) {
        self.expect = if self.step == self.target_steps {
            Some(self.old_leaf)
        } else if Some(self.step) == self.old_end {
            self.target_next
        } else {
            parent.copied()
        };
    }

    /// An id of the form: its units where the codes put them.
    fn id(&self, units: std::ops::Range<usize>) -> Result<&'c [u16]> {
        self.units.get(units).ok_or_else(malformed)
    }

    fn next_other(&mut self, cx: &Cx) -> Result<Raw> {
        self.other += 1;
        element(cx, self.others, self.other - 1)
    }

    /// The next step, found by looking up `id`, as the native read below
    /// would have found it (its checks and errors the same, each named
    /// after the `session.getEntry(id)` call, as `get_entry` names the
    /// native read's).
    fn step(&mut self, cx: &'c Cx, id: &JsId<'c>) -> Result<Option<Found<EntryRef, JsId<'c>>>> {
        let named = |error| get_entry_error(error, id);
        let step = self
            .codes
            .next_step()
            .ok()
            .flatten()
            .ok_or_else(|| named(malformed()))?;
        let k = self.step;
        self.step += 1;
        self.expect_after(None);
        let own_id = match step.id {
            StepId::Threw => {
                let thrown = self.next_other(cx).map_err(named)?;
                // SAFETY: a value of this call's scope; the walk takes it back
                // off the engine when it holds the error (JsSession::hold).
                check(unsafe { sys::napi_throw(cx.env, thrown) }).map_err(named)?;
                return Err(named(Error::js_exception()));
            }
            StepId::NotString => {
                return self.not_string(cx, k).map_err(named);
            }
            StepId::Same => *id,
            StepId::Units(units) => JsId {
                units: self.id(units).map_err(named)?,
                raw: ptr::null_mut(),
            },
        };
        let parent = match step.parent {
            StepParent::NotString => self
                .next_other(cx)
                .and_then(|parent| js_id(cx, parent, "parentId"))
                .map_err(named)?,
            StepParent::Units(units) => {
                let units = self.id(units).map_err(named)?;
                (!units.is_empty()).then_some(JsId {
                    units,
                    raw: ptr::null_mut(),
                })
            }
            StepParent::NotRead => return Err(named(malformed())),
        };
        if self.step == self.target_steps {
            self.target_next = parent;
        }
        self.expect_after(parent.as_ref());
        Ok(Some(Found {
            entry: EntryRef::Step(u64::from(k)),
            id: own_id,
            parent,
        }))
    }

    /// A step whose entry's `id` is not a string: no entry where the entry
    /// is falsy, else the id's error.
    #[cold]
    fn not_string(&mut self, cx: &'c Cx, k: u32) -> Result<Option<Found<EntryRef, JsId<'c>>>> {
        let own = cx.wrap(self.next_other(cx)?)?;
        if !cx.wrap(element(cx, self.entries, k)?)?.truthy() {
            return Ok(None);
        }
        Err(id_error(&own))
    }
}

impl<'c> JsSession<'c> {
    /// The JS string of `id`.
    fn raw(&self, id: &JsId) -> Result<Raw> {
        if id.raw.is_null() {
            return self.cx.utf16(id.units);
        }
        Ok(id.raw)
    }

    /// `session.getEntry(id)` and the entry's `id` and `parentId`, read here.
    fn read_entry(&self, id: &JsId<'c>) -> Result<Option<Found<EntryRef, JsId<'c>>>> {
        let cx = self.cx;
        let mut out = ptr::null_mut();
        let argv = [self.raw(id)?];
        check(unsafe {
            sys::napi_call_function(
                cx.env,
                self.session,
                self.get_entry,
                1,
                argv.as_ptr(),
                &mut out,
            )
        })?;
        let entry = cx.wrap(out)?;
        // `id` is read first: a missing entry reads as undefined, so the
        // common case costs no separate type check.
        let own = entry.get(Key::Id)?;
        let Some(units) = read_units(cx, own.raw)? else {
            if !entry.truthy() {
                return Ok(None);
            }
            return Err(id_error(&own));
        };
        let parent = js_id(cx, entry.get(Key::ParentId)?.raw, "parentId")?;
        Ok(Some(Found {
            entry: EntryRef::Handle(entry.raw),
            id: JsId {
                units,
                raw: own.raw,
            },
            parent,
        }))
    }
}

impl<'c> EntryLookup for JsSession<'c> {
    type Entry = EntryRef;
    type Id = JsId<'c>;

    fn get_entry(&mut self, id: &JsId<'c>) -> Result<Option<Found<EntryRef, JsId<'c>>>> {
        if let Some(ahead) = &mut self.ahead {
            if ahead.expect.as_ref() == Some(id) && ahead.codes.has_more() {
                // Returned as it is, its errors named where they arise: a
                // step copied out of a match here stalled the walk.
                return ahead.step(self.cx, id);
            }
            ahead.expect = None;
        }
        self.read_entry(id)
            .map_err(|error| get_entry_error(error, id))
    }

    fn describe(&self, id: &JsId<'c>) -> JsStr {
        JsStr::from_utf16(id.units)
    }

    /// The old branch's steps read ahead (those after the target's first
    /// steps, up to where the target's path was read on, if it was).
    fn steps_hint(&self) -> usize {
        self.ahead.as_ref().map_or(0, |a| {
            let end = a.old_end.map_or(a.codes.steps(), |end| end as usize);
            end.saturating_sub(a.target_steps as usize)
        })
    }

    /// A pending JS exception (a throwing getEntry or getter: N-API reports
    /// some of these as a failed call, so whatever the error's kind) is
    /// taken off the engine until the error is raised, so the walk can go
    /// on calling into JS.
    fn hold(&mut self, error: Error) -> Error {
        let mut pending = false;
        // SAFETY: plain queries of this call's env.
        unsafe {
            if sys::napi_is_exception_pending(self.cx.env, &mut pending) == sys::Status::napi_ok
                && pending
            {
                let mut thrown = ptr::null_mut();
                if sys::napi_get_and_clear_last_exception(self.cx.env, &mut thrown)
                    == sys::Status::napi_ok
                {
                    self.thrown = Some(thrown);
                }
            }
        }
        error
    }

    fn raise(&mut self, held: Error) -> Error {
        if let Some(thrown) = self.thrown.take() {
            // SAFETY: a value of this call's scope, held since `hold`.
            unsafe { sys::napi_throw(self.cx.env, thrown) };
        }
        held
    }
}

/// `collectEntriesForBranchSummary(session, oldLeafId, targetId, path?)`:
/// the caller's own entry objects, root-first. lib/api.js resolves a nullish
/// target to the session's leaf, as `getBranch(undefined)` does, and passes
/// the old branch read ahead (lib/entry-path.js) when it read it. The
/// result is `{ entries, commonAncestorId }`, or `{ count,
/// commonAncestorId }` when the entries are the first `count` steps read
/// ahead, which lib/api.js then takes from there.
#[napi(js_name = "collectEntriesForBranchSummary")]
pub fn collect_entries_for_branch_summary_native(
    env: Env,
    session: Arg,
    old_leaf_id: Arg,
    target_id: Arg,
    path: Option<Arg>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        // The read-ahead path's ids and the ids read here, which the
        // walk's ids borrow.
        let ahead_units: Vec<u16>;
        let old_leaf = js_id(cx, old_leaf_id.0, "oldLeafId")?;
        let (collected, lookup) = match old_leaf {
            Some(old_leaf) => {
                let target = js_id(cx, target_id.0, "targetId")?;
                let s = cx.wrap(session.0)?;
                if !s.is_object_like() {
                    return Err(Error::type_error(
                        "session",
                        format!("expected a session manager, got {}", s.kind().describe()),
                    ));
                }
                // The read-ahead form has read `session.getEntry` already.
                let (method, ahead) = match &path {
                    Some(form) => {
                        let method = checked_method(cx, form_field(cx, form.0, c"getEntry")?)?;
                        let ids = form_field(cx, form.0, c"ids")?;
                        ahead_units = cx.read_utf16(ids).map_err(|_| malformed())?;
                        let ahead =
                            ReadAhead::new(cx, form.0, &ahead_units, &old_leaf, target.as_ref())?;
                        (method, Some(ahead))
                    }
                    None => (session_method(cx, &s)?, None),
                };
                let mut lookup = JsSession {
                    cx,
                    session: s.raw,
                    get_entry: method,
                    ahead,
                    thrown: None,
                };
                let collected =
                    collect_entries_for_branch_summary(&mut lookup, Some(old_leaf), target)?;
                (collected, Some(lookup))
            }
            None => (
                Collected {
                    entries: Vec::new(),
                    common_ancestor_id: None,
                },
                None,
            ),
        };
        let o = cx.object()?;
        let steps = collected.entries.len();
        // The old branch's steps read ahead follow the target's.
        let first = lookup
            .as_ref()
            .and_then(|l| l.ahead.as_ref())
            .map_or(0, |a| a.target_steps);
        let first_steps = (collected.entries.iter().enumerate())
            .all(|(i, e)| *e == EntryRef::Step(u64::from(first) + (steps - 1 - i) as u64));
        match &lookup {
            Some(l) if l.ahead.is_some() && first_steps && steps > 0 => {
                cx.set(o, c"count", cx.number(steps as f64)?)?;
            }
            _ => {
                let entries = collected.entries.iter().map(|e| match *e {
                    EntryRef::Handle(raw) => Ok(raw),
                    EntryRef::Step(k) => match &lookup {
                        Some(JsSession {
                            ahead: Some(ahead), ..
                        }) => element(cx, ahead.entries, k as u32),
                        _ => Err(malformed()),
                    },
                });
                cx.set(o, c"entries", cx.array(entries)?)?;
            }
        }
        let ancestor = match (&collected.common_ancestor_id, &lookup) {
            (Some(id), Some(l)) => l.raw(id)?,
            _ => cx.null()?,
        };
        cx.set(o, c"commonAncestorId", ancestor)?;
        Ok(RawValue(o))
    })
}

fn session_method(cx: &Cx, session: &JsVal<'_>) -> Result<Raw> {
    let mut f = ptr::null_mut();
    check(unsafe {
        sys::napi_get_named_property(cx.env, session.raw, c"getEntry".as_ptr(), &mut f)
    })?;
    checked_method(cx, f)
}

/// `session.getEntry` as read, when it is a function.
fn checked_method(cx: &Cx, f: Raw) -> Result<Raw> {
    let method = cx.wrap(f)?;
    if method.kind() != Kind::Function {
        return Err(Error::type_error(
            "session.getEntry",
            format!("expected a function, got {}", method.kind().describe()),
        ));
    }
    Ok(f)
}

/// `Number(v)`, as the reference's comparisons with the budget coerce it.
fn to_number(cx: &Cx, v: &JsVal<'_>) -> Result<f64> {
    if let Some(n) = v.number() {
        return Ok(n);
    }
    let mut out = ptr::null_mut();
    check(unsafe { sys::napi_coerce_to_number(cx.env, v.raw, &mut out) })?;
    Ok(cx.wrap(out)?.number().unwrap_or(f64::NAN))
}

/// The plan for `prepareBranchEntries` as the agent line does it: the
/// messages (entries and shapes), file operations and the token total;
/// `lib/api.js` maps them to messages. With the entries' kinds read ahead
/// in `facts`, when given (lib/entry-facts.js's readEntryKinds).
#[napi(js_name = "prepareBranchEntries")]
pub fn prepare_branch_entries_native(
    env: Env,
    entries: Arg,
    token_budget: Arg,
    line: Arg,
    facts: Option<&EntryFacts>,
) -> napi::Result<RawValue> {
    run(&env, |cx| {
        let line = line_arg(cx, &line)?;
        let budget = to_number(cx, &cx.wrap(token_budget.0)?).within("tokenBudget")?;
        let array = cx.wrap(entries.0)?;
        let state = facts.map(EntryFacts::lock).transpose()?;
        let mut list = Entries::new(&array, "entries", line)?;
        if let Some(state) = &state {
            list = list.with_facts(&state.facts);
        }
        let plan = prepare_branch_entries(&list, budget)?;
        let o = cx.object()?;
        cx.set(o, c"messages", messages_object(cx, &plan.messages)?)?;
        let seeds: Vec<u32> = plan.details_from.iter().map(|&i| i as u32).collect();
        cx.set(o, c"detailsFrom", cx.u32_array(&seeds)?)?;
        cx.set(o, c"read", cx.strings(plan.file_ops.read.iter())?)?;
        cx.set(o, c"written", cx.strings(plan.file_ops.written.iter())?)?;
        cx.set(o, c"edited", cx.strings(plan.file_ops.edited.iter())?)?;
        cx.set(o, c"totalTokens", cx.number(plan.total_tokens as f64)?)?;
        Ok(RawValue(o))
    })
}
