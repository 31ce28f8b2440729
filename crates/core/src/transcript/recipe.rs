//! A transcript as a recipe: which strings of a strings array go where, and
//! the labels between them. The binding writes one ([`Recipe`] is its
//! napi-free part) and `flat-messages.js`'s `assembleTranscript` follows it,
//! joining the pieces once with `Array.prototype.join`, so each character
//! is copied a single time and none of the caller's texts is read through
//! N-API just to be placed.
//!
//! The recipe is `{ ops, bounds, labels, strings }`: an op `i >= 0` is
//! `strings[i]`; [`OP_HEAD`] `i, n` is `strings[i].slice(0, n)`; `-2 - k`
//! is label `k`: with `(j, start, end)` the `k`-th triple of `bounds`,
//! units `start..end` of labels string `j`.

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::js::string::{push_str_utf16, JsStr};

/// Recipe codes (flat-messages.js reads the same numbers); see the module
/// docs.
pub use crate::boundary_codes::recipe::{OP_HEAD, OP_LABEL_BASE};

/// Labels up to this long are shared: a transcript repeats a few dozen of
/// them ("\n\n[Assistant]: ") thousands of times. Longer ones hold ids
/// and arguments, and are rarely met twice.
const SHARED_LABEL_MAX: usize = 32;

/// Runs this long (a long tool-call argument's JSON, written here, as a
/// rule) become strings of their own ([`Recipe::long_run`]) rather than
/// part of a labels string.
pub const OWN_STRING_MIN: usize = 512;

/// Units per labels string: 64 KB even as UTF-16, under V8's large-object
/// size (128 KB).
pub const LABELS_CHUNK: usize = 32 * 1024;

/// UTF-16 units bound for a JS string (a transcript's labels, say), one
/// byte each while they all fit in one: V8 then copies them as they are,
/// and nothing is narrowed at the end.
pub enum Labels {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

impl Default for Labels {
    fn default() -> Self {
        Labels::new()
    }
}

impl Labels {
    pub fn new() -> Labels {
        Labels::Latin1(Vec::new())
    }

    /// ASCII text, such as JSON punctuation.
    pub fn push_ascii(&mut self, s: &[u8]) {
        match self {
            Labels::Latin1(bytes) => bytes.extend_from_slice(s),
            Labels::Utf16(units) => units.extend(s.iter().map(|&b| u16::from(b))),
        }
    }

    pub fn truncate(&mut self, len: usize) {
        match self {
            Labels::Latin1(bytes) => bytes.truncate(len),
            Labels::Utf16(units) => units.truncate(len),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Labels::Latin1(bytes) => bytes.len(),
            Labels::Utf16(units) => units.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn extend(&mut self, units: &[u16]) {
        match self {
            // An OR over the run (vector code) tells whether it fits.
            Labels::Latin1(bytes) if units.iter().fold(0u16, |acc, &u| acc | u) < 0x100 => {
                bytes.extend(units.iter().map(|&u| u as u8));
            }
            Labels::Latin1(bytes) => {
                let mut wide: Vec<u16> = bytes.iter().map(|&b| u16::from(b)).collect();
                wide.extend_from_slice(units);
                *self = Labels::Utf16(wide);
            }
            Labels::Utf16(wide) => wide.extend_from_slice(units),
        }
    }

    /// Units `range` (within [`Labels::len`]) as UTF-16.
    pub fn units(&self, range: std::ops::Range<usize>) -> Vec<u16> {
        match self {
            Labels::Latin1(bytes) => bytes[range].iter().map(|&b| u16::from(b)).collect(),
            Labels::Utf16(units) => units[range].to_vec(),
        }
    }
}

/// A recipe's parts: `ops` and `bounds` as the module docs say, and the
/// labels strings, units `ranges[j]` of `labels` each.
pub struct RecipeParts {
    pub ops: Vec<i32>,
    pub bounds: Vec<u32>,
    pub labels: Labels,
    pub ranges: Vec<(usize, usize)>,
}

/// A recipe being written: pieces naming strings by index, and the labels
/// between them (the text made here), shared where they repeat.
pub struct Recipe {
    ops: Vec<i32>,
    /// Every label's units, one after another, and where each one lies.
    labels: Labels,
    bounds: Vec<u32>,
    /// Where each labels string starts in `labels`. They are made in pieces
    /// of at most [`LABELS_CHUNK`] units (unless one label is longer),
    /// which V8 allocates in its young generation; one string of all of
    /// them went to its large-object space, on fresh pages, which cost
    /// much of the native time (docs/serialization.md).
    chunk_starts: Vec<usize>,
    shared: FxHashMap<Box<[u16]>, i32>,
    /// The last shared label met of each length, and its op: looked at
    /// before `shared`, as the few labels a transcript repeats ("\n\n[User]:
    /// ", "\n\n[Assistant]: ") mostly differ in length, and a compare costs
    /// less than a hash.
    last_of_len: [Option<(Box<[u16]>, i32)>; SHARED_LABEL_MAX + 1],
    /// Labels and copied text since the last string piece.
    run: Vec<u16>,
}

impl Default for Recipe {
    fn default() -> Self {
        Recipe::new()
    }
}

impl Recipe {
    pub fn new() -> Recipe {
        Recipe {
            ops: Vec::new(),
            labels: Labels::new(),
            bounds: Vec::new(),
            chunk_starts: vec![0],
            shared: FxHashMap::default(),
            last_of_len: std::array::from_fn(|_| None),
            run: Vec::new(),
        }
    }

    /// Label text.
    pub fn push_str(&mut self, s: &str) {
        push_str_utf16(s, &mut self.run);
    }

    /// Label units.
    pub fn push_units(&mut self, units: &[u16]) {
        self.run.extend_from_slice(units);
    }

    /// Label text made here.
    pub fn push_js_str(&mut self, s: &JsStr) {
        s.push_utf16_into(&mut self.run);
    }

    /// The label being written, to append units to in place.
    pub fn run_mut(&mut self) -> &mut Vec<u16> {
        &mut self.run
    }

    /// The label being written when it is at least [`OWN_STRING_MIN`]
    /// units long: the writer makes it a string of its own (copied into the
    /// labels, it was copied twice more: into them, then into their
    /// string) and ends it with [`Recipe::end_run_as`], before its next
    /// piece or the end. A run the writer leaves is a label as any other.
    pub fn long_run(&self) -> Option<&[u16]> {
        (self.run.len() >= OWN_STRING_MIN).then_some(&self.run[..])
    }

    /// Ends the label being written as a piece naming string `index` (which
    /// holds its units), or drops it when there is none (after a failure,
    /// which the writer reports).
    pub fn end_run_as(&mut self, index: Option<i32>) {
        self.ops.extend(index);
        self.run.clear();
    }

    /// Ends the current label, if any.
    fn close_run(&mut self) {
        if self.run.is_empty() {
            return;
        }
        let shared = self.run.len() <= SHARED_LABEL_MAX;
        if shared {
            if let Some((units, op)) = &self.last_of_len[self.run.len()] {
                if **units == self.run[..] {
                    self.ops.push(*op);
                    self.run.clear();
                    return;
                }
            }
            if let Some(&op) = self.shared.get(&self.run[..]) {
                self.last_of_len[self.run.len()] = Some((self.run.as_slice().into(), op));
                self.ops.push(op);
                self.run.clear();
                return;
            }
        }
        let k = (self.bounds.len() / 3) as i32;
        let op = OP_LABEL_BASE - k;
        let mut chunk = self.chunk_starts.last().copied().unwrap_or(0);
        if self.labels.len() > chunk && self.labels.len() - chunk + self.run.len() > LABELS_CHUNK {
            chunk = self.labels.len();
            self.chunk_starts.push(chunk);
        }
        let start = self.labels.len() - chunk;
        self.labels.extend(&self.run);
        // Offsets within one chunk: a chunk is one run or a few of at most
        // LABELS_CHUNK units together, and a JS string is under 2^30 units.
        self.bounds.extend([
            (self.chunk_starts.len() - 1) as u32,
            start as u32,
            (self.labels.len() - chunk) as u32,
        ]);
        if shared {
            self.shared.insert(self.run.as_slice().into(), op);
            self.last_of_len[self.run.len()] = Some((self.run.as_slice().into(), op));
        }
        self.ops.push(op);
        self.run.clear();
    }

    /// A piece naming string `index`.
    pub fn piece(&mut self, index: i32) {
        self.close_run();
        self.ops.push(index);
    }

    /// A piece naming the first `units` units of string `index`.
    pub fn head(&mut self, index: i32, units: i32) {
        self.close_run();
        self.ops.extend([OP_HEAD, index, units]);
    }

    /// The recipe's parts.
    pub fn finish(mut self) -> Result<RecipeParts> {
        self.close_run();
        if self.labels.len() > u32::MAX as usize {
            return Err(Error::range("messages", "transcript labels too long"));
        }
        let ends = self.chunk_starts.iter().skip(1).copied();
        let ranges: Vec<(usize, usize)> = (self.chunk_starts.iter().copied())
            .zip(ends.chain([self.labels.len()]))
            .collect();
        Ok(RecipeParts {
            ops: self.ops,
            bounds: self.bounds,
            labels: self.labels,
            ranges,
        })
    }
}
