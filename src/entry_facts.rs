//! `EntryFacts`: what `lib/entry-facts.js` read of a `pathEntries` ahead,
//! chunk by chunk, for `prepareCompaction`'s planner (the core's
//! `session::facts`, whose docs give the wire formats), and the cut the
//! planner keeps between `planCut` and `planFinish`.

use std::ffi::CStr;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::thread;

use napi::bindgen_prelude::AsyncTask;
use napi::{sys, Env, Task};
use napi_derive::napi;

use crate::from_file::guarded;
use crate::js::errors::run;
use crate::js::flat::{form_field, typed_array_slice};
use crate::js::out::{Arg, Raw};
use crate::js::view::Cx;
use prime_compaction_core::error::{Error, Result};
use prime_compaction_core::js::view::View;
use prime_compaction_core::plan::prepare::{CutPlan, CutSearch, CutStart, FoundCut};
use prime_compaction_core::session::facts::{EntriesChunk, EntryFacts as CoreFacts, MessagesChunk};
use prime_compaction_core::session::measures::MeasuresChunk;
use prime_compaction_core::tokens::estimate::Counter;

/// Facts of this many entries or more are freed (or emptied) off the JS
/// thread.
const FREE_ELSEWHERE: usize = 16_384;

/// The largest room, in entries, `release(keepRoom)` keeps of facts
/// emptied off the JS thread; a larger one is freed.
const KEEP_ROOM_UP_TO: usize = 1 << 18;

/// The facts, the steps of the cut made so far, and the cut made.
#[derive(Default)]
pub struct State {
    pub facts: CoreFacts,
    pub stage: Stage,
    pub cut: Option<(CutPlan, Counter)>,
}

/// How far `planCut` has gone, one step a call (`prepare_cut`'s steps:
/// `start_cut`, `find_cut`, `cut_lists`).
#[derive(Default)]
pub enum Stage {
    #[default]
    NotStarted,
    /// Started, and the search for the cut as far as it went.
    Started(CutStart, CutSearch),
    Found(CutStart, FoundCut),
}

#[napi]
pub struct EntryFacts {
    state: Arc<Mutex<State>>,
    /// Facts a `release(keepRoom)` emptied off the JS thread, kept for
    /// the next call's first chunk to fill: the room of a large session,
    /// reused rather than taken afresh from the allocator, whose new pages
    /// the JS thread stalls on as it first writes them.
    emptied: Arc<Mutex<Option<CoreFacts>>>,
}

impl EntryFacts {
    /// The facts, unless a call holds them: one of this object's calls
    /// made from code another runs (a getter of the entries a plan step
    /// reads), which waiting would deadlock, or the libuv pool's `finish`,
    /// which prepareCompactionAsync waits for before any other call.
    pub fn lock(&self) -> Result<MutexGuard<'_, State>> {
        self.state.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => {
                Error::invalid("the entry facts are in use by another call")
            }
            TryLockError::Poisoned(_) => Error::internal("entry facts poisoned"),
        })
    }
}

impl Default for EntryFacts {
    fn default() -> Self {
        Self::new(None)
    }
}

/// A chunk's typed-array field, as a slice.
fn u8s<'c>(cx: &'c Cx, chunk: Raw, key: &CStr) -> Result<&'c [u8]> {
    typed_array_slice(
        cx,
        form_field(cx, chunk, key)?,
        sys::TypedarrayType::uint8_array,
    )
}

fn u32s<'c>(cx: &'c Cx, chunk: Raw, key: &CStr) -> Result<&'c [u32]> {
    typed_array_slice(
        cx,
        form_field(cx, chunk, key)?,
        sys::TypedarrayType::uint32_array,
    )
}

/// `chunk.text` as UTF-16 units.
fn text(cx: &Cx, chunk: Raw) -> Result<Vec<u16>> {
    cx.read_utf16(form_field(cx, chunk, c"text")?)
}

#[napi]
impl EntryFacts {
    /// Facts to come for about `entries` entries, when given (room is
    /// made for them up front; see `CoreFacts::with_capacity`).
    #[napi(constructor)]
    pub fn new(entries: Option<u32>) -> Self {
        let facts = entries.map_or_else(CoreFacts::new, |n| CoreFacts::with_capacity(n as usize));
        EntryFacts {
            state: Arc::new(Mutex::new(State {
                facts,
                ..State::default()
            })),
            emptied: Arc::default(),
        }
    }

    /// Adds an entries chunk `{ first, kinds, ids, lengths, text }`.
    #[napi(js_name = "pushEntries")]
    pub fn push_entries(&self, env: Env, chunk: Arg) -> napi::Result<()> {
        run(&env, |cx| {
            let first = cx.wrap(form_field(cx, chunk.0, c"first")?)?.number();
            let text = text(cx, chunk.0)?;
            let chunk = EntriesChunk {
                first: first
                    .filter(|f| *f >= 0.0)
                    .map_or(usize::MAX, |f| f as usize),
                kinds: u8s(cx, chunk.0, c"kinds")?,
                ids: u8s(cx, chunk.0, c"ids")?,
                lengths: u32s(cx, chunk.0, c"lengths")?,
                text: &text,
            };
            let mut state = self.lock()?;
            if state.facts.is_empty() {
                // The room a release emptied, where it is ready (see `emptied`).
                if let Some(room) = self.emptied.try_lock().ok().and_then(|mut e| e.take()) {
                    if room.room() > state.facts.room() {
                        state.facts = room;
                    }
                }
            }
            state.facts.push_entries(&chunk)
        })
    }

    /// Adds a messages chunk `{ at, contents, calls, refs, lengths, text }`.
    #[napi(js_name = "pushMessages")]
    pub fn push_messages(&self, env: Env, chunk: Arg) -> napi::Result<()> {
        run(&env, |cx| {
            let text = text(cx, chunk.0)?;
            let chunk = MessagesChunk {
                at: u32s(cx, chunk.0, c"at")?,
                contents: u8s(cx, chunk.0, c"contents")?,
                calls: u32s(cx, chunk.0, c"calls")?,
                refs: u32s(cx, chunk.0, c"refs")?,
                lengths: u32s(cx, chunk.0, c"lengths")?,
                text: &text,
            };
            self.lock()?.facts.push_messages(&chunk)
        })
    }

    /// Adds a measures chunk `{ at, forms, counts, blocks, lengths }`.
    #[napi(js_name = "pushMeasures")]
    pub fn push_measures(&self, env: Env, chunk: Arg) -> napi::Result<()> {
        run(&env, |cx| {
            let chunk = MeasuresChunk {
                at: u32s(cx, chunk.0, c"at")?,
                forms: u8s(cx, chunk.0, c"forms")?,
                counts: u32s(cx, chunk.0, c"counts")?,
                blocks: u8s(cx, chunk.0, c"blocks")?,
                lengths: u32s(cx, chunk.0, c"lengths")?,
            };
            self.lock()?.facts.push_measures(&chunk)
        })
    }

    /// Frees the facts and the cut now (a plan made, or given up on),
    /// rather than when the collector finalizes this object: V8 does not
    /// see the memory they hold, so would not hurry to. Large facts are
    /// freed on a thread of their own (hundreds of thousands of small
    /// strings take milliseconds to free). With `keepRoom` (for an object
    /// kept for the next call), the facts are emptied instead and the
    /// memory they took is kept for the next call's facts (up to a room of
    /// 262,144 entries), so that it need not take new pages.
    #[napi]
    pub fn release(&self, keep_room: Option<bool>) {
        // Held by a call (this one made from a getter it runs): left to it.
        let Ok(mut state) = self.state.try_lock() else {
            return;
        };
        let keep_room = keep_room == Some(true);
        if keep_room && state.facts.len() < FREE_ELSEWHERE {
            state.facts.clear();
            state.stage = Stage::NotStarted;
            state.cut = None;
            return;
        }
        let old = std::mem::take(&mut *state);
        drop(state);
        if old.facts.len() < FREE_ELSEWHERE {
            return;
        }
        let emptied = Arc::clone(&self.emptied);
        // Where no thread can be started, the closure and `old` are
        // dropped here.
        let _ = thread::Builder::new()
            .name("prime-compaction-free".into())
            .spawn(move || {
                let mut facts = old.facts;
                facts.clear();
                if keep_room && facts.room() <= KEEP_ROOM_UP_TO {
                    if let Ok(mut room) = emptied.lock() {
                        *room = Some(facts);
                    }
                }
            });
    }

    /// What needs the facts only (`CoreFacts::finish`), on the libuv pool;
    /// resolves to undefined.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn finish(&self) -> AsyncTask<FinishFacts> {
        AsyncTask::new(FinishFacts {
            state: Arc::clone(&self.state),
        })
    }
}

pub struct FinishFacts {
    state: Arc<Mutex<State>>,
}

impl Task for FinishFacts {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        // A poisoned lock is reported by the plan that follows, and what a
        // panic left undone is done there.
        if let Ok(mut state) = self.state.lock() {
            guarded(|| {
                state.facts.finish();
                Ok(())
            })
            .ok();
        }
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}
