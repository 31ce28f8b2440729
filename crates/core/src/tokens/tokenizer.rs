//! Exact token counts with OpenAI's `o200k_base` and `cl100k_base` BPE
//! encodings, identical to js-tiktoken's `encode(text, [], []).length`.
//!
//! The merge ranks come from `tiktoken-rs` (which embeds the rank files), but
//! the pre-tokenizer (the regex that splits text into pieces before BPE) is
//! written out by hand here, for two reasons:
//!
//! - Parity with JavaScript. js-tiktoken runs the split patterns as V8 `u`-mode
//!   regular expressions over UTF-16. They differ from the Rust patterns of
//!   `tiktoken-rs` in small ways: JS `\s` includes U+FEFF but not U+0085, the
//!   contraction suffixes are ASCII-only (`(?i:'s)` in Rust also matches `'ſ`),
//!   and Node's Unicode tables may be a version ahead. The character classes
//!   are therefore generated from Node (`classes.rs`).
//! - Speed. A hand-written splitter with an ASCII fast path is several times
//!   faster than the backtracking `fancy-regex` engine the patterns need.
//!
//! Lone surrogates are replaced by U+FFFD before splitting, as js-tiktoken's
//! `TextEncoder` does. The replacement is classified like the surrogate it
//! stands for: both are neither letters, numbers, marks nor whitespace.
//!
//! Special tokens such as `<|endoftext|>` count as ordinary text. (js-tiktoken's
//! plain `encode(text)` throws on them instead; with `encode(text, [], [])` it
//! counts them as text, which is what a size estimate needs.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::js::string::JsStr;
use crate::tokens::classes::RANGES;

/// A BPE encoding that [`count_tokens`] supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5 and the `o` series.
    O200kBase,
    /// GPT-4, GPT-3.5-turbo.
    Cl100kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    /// The encoding with this tiktoken name (`"o200k_base"`, `"cl100k_base"`).
    pub fn from_name(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

/// What the split patterns distinguish about a character. Newlines (`\r`,
/// `\n`) are whitespace with a role of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Class {
    Other,
    Newline,
    Space,
    /// `\p{Lu}`, `\p{Lt}`.
    Upper,
    /// `\p{Ll}`.
    Lower,
    /// `\p{Lm}`, `\p{Lo}`: both "upper" and "lower" in o200k's pattern.
    LetterBoth,
    /// `\p{M}`.
    Mark,
    /// `\p{N}`.
    Number,
}

impl Class {
    #[inline]
    fn is_space(self) -> bool {
        matches!(self, Class::Space | Class::Newline)
    }
    #[inline]
    fn is_letter(self) -> bool {
        matches!(self, Class::Upper | Class::Lower | Class::LetterBoth)
    }
    /// `[^\r\n\p{L}\p{N}]`: the optional lead-in of a word.
    #[inline]
    fn is_word_prefix(self) -> bool {
        matches!(self, Class::Other | Class::Space | Class::Mark)
    }
    /// `[^\s\p{L}\p{N}]`: punctuation and symbols.
    #[inline]
    fn is_punct(self) -> bool {
        matches!(self, Class::Other | Class::Mark)
    }
    /// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
    #[inline]
    fn is_o200k_upper(self) -> bool {
        matches!(self, Class::Upper | Class::LetterBoth | Class::Mark)
    }
    /// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
    #[inline]
    fn is_o200k_lower(self) -> bool {
        matches!(self, Class::Lower | Class::LetterBoth | Class::Mark)
    }
}

const fn ascii_classes() -> [Class; 128] {
    let mut t = [Class::Other; 128];
    let mut i = 0;
    while i < 128 {
        let b = i as u8;
        t[i] = if b == b'\r' || b == b'\n' {
            Class::Newline
        } else if b == b' ' || (b >= 0x09 && b <= 0x0C) {
            Class::Space
        } else if b.is_ascii_uppercase() {
            Class::Upper
        } else if b.is_ascii_lowercase() {
            Class::Lower
        } else if b.is_ascii_digit() {
            Class::Number
        } else {
            Class::Other
        };
        i += 1;
    }
    t
}

static ASCII: [Class; 128] = ascii_classes();

/// The range of the generated table that holds a non-ASCII code point.
fn range_of(cp: u32) -> Option<(u32, u32, Class)> {
    let i = RANGES.partition_point(|&(_, end, _)| end < cp);
    RANGES.get(i).copied().filter(|r| r.0 <= cp)
}

/// The text decoded once into (byte offset, class) per char, so the matchers
/// below can look ahead and back cheaply. The final entry is a sentinel at
/// the end of the text.
struct Chars {
    offsets: Vec<u32>,
    classes: Vec<Class>,
}

impl Chars {
    fn new(text: &str) -> Result<Chars> {
        let mut offsets = buffer(text.len() + 1)?;
        let mut classes = buffer(text.len() + 1)?;
        // Consecutive non-ASCII chars usually share a range (CJK, Cyrillic):
        // check the last hit before searching.
        let mut last: (u32, u32, Class) = (1, 0, Class::Other);
        for (offset, c) in text.char_indices() {
            offsets.push(offset as u32);
            let cp = c as u32;
            classes.push(if cp < 128 {
                ASCII[cp as usize]
            } else if last.0 <= cp && cp <= last.1 {
                last.2
            } else if let Some(r) = range_of(cp) {
                last = r;
                r.2
            } else {
                Class::Other
            });
        }
        offsets.push(text.len() as u32);
        Ok(Chars { offsets, classes })
    }
}

/// An empty vector with room for `n` items, or, where memory has no room
/// for them, an error (the count of a text of hundreds of megabytes in
/// one piece would otherwise abort the process).
fn buffer<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        Error::invalid(format!(
            "not enough memory to count the tokens of a text this long ({} bytes more needed)",
            n.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    Ok(v)
}

/// A splitter over one text: `split(i)` returns where the piece starting at
/// char `i` ends (always `> i`).
struct Splitter<'a> {
    text: &'a [u8],
    chars: &'a Chars,
}

impl Splitter<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.chars.classes.len()
    }

    #[inline]
    fn class(&self, i: usize) -> Option<Class> {
        self.chars.classes.get(i).copied()
    }

    #[inline]
    fn byte(&self, i: usize) -> Option<u8> {
        // The first byte of the char: callers only compare it with ASCII.
        let offset = *self.chars.offsets.get(i)? as usize;
        self.text.get(offset).copied()
    }

    /// The end of the run of chars from `i` that satisfy `f`.
    #[inline]
    fn run(&self, mut i: usize, f: impl Fn(Class) -> bool) -> usize {
        while self.class(i).is_some_and(&f) {
            i += 1;
        }
        i
    }

    /// `'s|'S|'t|'T|'re|…|'d|'D` (ASCII only) at `i`: its end, or `i`.
    fn contraction(&self, i: usize) -> usize {
        if self.byte(i) != Some(b'\'') {
            return i;
        }
        let lower = |k: usize| self.byte(k).map(|b| b.to_ascii_lowercase());
        match lower(i + 1) {
            Some(b's' | b't' | b'm' | b'd') => i + 2,
            Some(b'r') | Some(b'v') if lower(i + 2) == Some(b'e') => i + 3,
            Some(b'l') if lower(i + 2) == Some(b'l') => i + 3,
            _ => i,
        }
    }

    /// The whitespace alternatives shared by both patterns, at a whitespace
    /// char `i`: `\s*[\r\n]+|\s+(?!\S)|\s+`.
    fn whitespace(&self, i: usize) -> usize {
        let end = self.run(i, Class::is_space);
        // `\s*[\r\n]+`: backtracking leaves the match just after the last
        // newline of the run.
        if let Some(k) = (i..end)
            .rev()
            .find(|&k| self.class(k) == Some(Class::Newline))
        {
            return k + 1;
        }
        // `\s+(?!\S)`: the whole run at the end of the text, else all but
        // its last char (which then leads the next word).
        if end == self.len() {
            return end;
        }
        if end - i >= 2 {
            return end - 1;
        }
        end
    }

    /// ` ?[^\s\p{L}\p{N}]+` followed by `tail`, or `None`.
    fn punct(&self, i: usize, tail: impl Fn(Option<u8>) -> bool) -> Option<usize> {
        let start = if self.byte(i) == Some(b' ') { i + 1 } else { i };
        if !self.class(start).is_some_and(Class::is_punct) {
            return None;
        }
        let mut end = self.run(start, Class::is_punct);
        while self.class(end).is_some() && tail(self.byte(end)) {
            end += 1;
        }
        Some(end)
    }

    /// o200k `[UPPER]*[LOWER]+CONTRACTION?` from `s`.
    fn o200k_lower_word(&self, s: usize) -> Option<usize> {
        let upper_end = self.run(s, Class::is_o200k_upper);
        // Greedy `[UPPER]*` gives back chars until `[LOWER]+` can start.
        let k = (s..=upper_end)
            .rev()
            .find(|&k| self.class(k).is_some_and(Class::is_o200k_lower))?;
        Some(self.contraction(self.run(k, Class::is_o200k_lower)))
    }

    /// o200k `[UPPER]+[LOWER]*CONTRACTION?` from `s`.
    fn o200k_upper_word(&self, s: usize) -> Option<usize> {
        let upper_end = self.run(s, Class::is_o200k_upper);
        if upper_end == s {
            return None;
        }
        Some(self.contraction(self.run(upper_end, Class::is_o200k_lower)))
    }

    /// `[^\r\n\p{L}\p{N}]?` then `word`: with the lead-in first, then without.
    fn with_prefix(&self, i: usize, word: impl Fn(usize) -> Option<usize>) -> Option<usize> {
        if self.class(i).is_some_and(Class::is_word_prefix) {
            if let Some(end) = word(i + 1) {
                return Some(end);
            }
        }
        word(i)
    }

    /// o200k_base:
    /// `[^\r\n\p{L}\p{N}]?[UPPER]*[LOWER]+(contraction)?`
    /// `|[^\r\n\p{L}\p{N}]?[UPPER]+[LOWER]*(contraction)?`
    /// `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    fn o200k(&self, i: usize) -> usize {
        if let Some(end) = self.with_prefix(i, |s| self.o200k_lower_word(s)) {
            return end;
        }
        if let Some(end) = self.with_prefix(i, |s| self.o200k_upper_word(s)) {
            return end;
        }
        self.common_tail(i, |b| matches!(b, Some(b'\r' | b'\n' | b'/')))
    }

    /// cl100k_base:
    /// `(contraction)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}`
    /// `| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    fn cl100k(&self, i: usize) -> usize {
        let c = self.contraction(i);
        if c > i {
            return c;
        }
        let word = |s: usize| {
            let end = self.run(s, Class::is_letter);
            (end > s).then_some(end)
        };
        if let Some(end) = self.with_prefix(i, word) {
            return end;
        }
        self.common_tail(i, |b| matches!(b, Some(b'\r' | b'\n')))
    }

    /// `\p{N}{1,3}| ?[^\s\p{L}\p{N}]+TAIL|\s*[\r\n]+|\s+(?!\S)|\s+`.
    fn common_tail(&self, i: usize, tail: impl Fn(Option<u8>) -> bool) -> usize {
        if self.class(i) == Some(Class::Number) {
            let mut end = i + 1;
            while end < i + 3 && self.class(end) == Some(Class::Number) {
                end += 1;
            }
            return end;
        }
        if let Some(end) = self.punct(i, tail) {
            return end;
        }
        if self.class(i).is_some_and(Class::is_space) {
            return self.whitespace(i);
        }
        // Unreachable: every class starts one of the alternatives. Moving on
        // by one char keeps the loop finite regardless.
        i + 1
    }
}

/// The merge ranks of one encoding (special tokens excluded).
struct Ranks {
    map: FxHashMap<Vec<u8>, u32>,
}

impl Ranks {
    fn load(encoding: Encoding) -> std::result::Result<Ranks, String> {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
        }
        .map_err(|e| e.to_string())?;
        // tiktoken-rs keeps its rank table private but decodes any rank. The
        // ordinary tokens are ranks 0, 1, 2, ... up to the first gap; special
        // tokens (which count as text here) are left out wherever they sit.
        let specials = bpe.special_tokens();
        let map: FxHashMap<Vec<u8>, u32> = (0..)
            .map_while(|rank| Some((bpe.decode_bytes(&[rank]).ok()?, rank)))
            .filter(|(bytes, _)| !std::str::from_utf8(bytes).is_ok_and(|s| specials.contains(s)))
            .collect();
        if map.len() < 256 {
            return Err(format!("{} ranks did not load", encoding.name()));
        }
        Ok(Ranks { map })
    }

    /// The number of tokens BPE turns one piece into.
    #[inline]
    fn piece_tokens(&self, piece: &[u8], scratch: &mut MergeScratch) -> Result<usize> {
        // Every single byte is a token.
        Ok(if piece.len() == 1 || self.map.contains_key(piece) {
            1
        } else if piece.is_empty() {
            0
        } else if piece.len() <= LONG_PIECE {
            self.merge_count(piece)
        } else {
            self.merge_count_long(piece, scratch)?
        })
    }

    /// tiktoken's merge loop: repeatedly join the adjacent pair with the
    /// lowest rank (leftmost on ties) until no pair is a token.
    fn merge_count(&self, piece: &[u8]) -> usize {
        const NONE: u32 = u32::MAX;
        let rank_of = |bytes: &[u8]| self.map.get(bytes).copied().unwrap_or(NONE);
        // parts[k] = (start of part k, rank of joining parts k and k + 1).
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
        for i in 0..piece.len() - 1 {
            parts.push((i, rank_of(&piece[i..i + 2])));
        }
        parts.push((piece.len() - 1, NONE));
        parts.push((piece.len(), NONE));
        loop {
            let mut min = (NONE, 0);
            for (k, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, k);
                }
            }
            if min.0 == NONE {
                break;
            }
            let k = min.1;
            // Part k absorbs part k + 1; recompute the ranks around it.
            let joined = |parts: &[(usize, u32)], k: usize| match parts.get(k + 3) {
                Some(&(end, _)) => rank_of(&piece[parts[k].0..end]),
                None => NONE,
            };
            if k > 0 {
                parts[k - 1].1 = joined(&parts, k - 1);
            }
            parts[k].1 = joined(&parts, k);
            parts.remove(k + 1);
        }
        parts.len() - 1
    }

    /// The same merges as [`Ranks::merge_count`] in O(n log n), for long
    /// pieces (a minified line, a base64 blob) where rescanning every pair
    /// after each merge would take quadratic time. Pairs wait in a min-heap
    /// keyed by `rank << 32 | start`, the scan's "lowest rank, leftmost"
    /// order; entries that a merge made stale are skipped when popped. Each
    /// merge pops one entry and pushes at most two, so the heap holds at
    /// most twice the piece's bytes: three `u32` and two `u64` a byte,
    /// reserved up front (and kept for the text's next long piece), so a
    /// piece too long for the memory left is an error.
    #[inline(never)]
    fn merge_count_long(&self, piece: &[u8], scratch: &mut MergeScratch) -> Result<usize> {
        const NONE: u32 = u32::MAX;
        let n = piece.len();
        // Positions are u32: a piece is part of one JS string's UTF-8 (at
        // most 3 * 2^29 bytes).
        let Ok(last) = u32::try_from(n) else {
            return Err(Error::invalid(format!(
                "a text of {n} bytes in one piece is too long to count"
            )));
        };
        let rank_of = |from: u32, to: u32| {
            self.map
                .get(&piece[from as usize..to as usize])
                .copied()
                .unwrap_or(NONE)
        };
        let key = |rank: u32, start: u32| Reverse(u64::from(rank) << 32 | u64::from(start));
        let MergeScratch {
            next,
            prev,
            rank,
            heap,
        } = scratch;
        // Parts are named by their start; next[i] is the start of the
        // following part (n past the last), prev[i] of the previous one.
        reset(next, n)?;
        next.extend(1..=last);
        reset(prev, n)?;
        prev.extend((0..last).map(|i| i.wrapping_sub(1)));
        // rank[i]: the rank of joining part i with the next (NONE: no token).
        reset(rank, n)?;
        rank.extend((0..last).map(|i| {
            if i + 1 < last {
                rank_of(i, i + 2)
            } else {
                NONE
            }
        }));
        let mut items = std::mem::take(heap);
        reset(&mut items, 2 * n)?;
        items.extend(
            (0..last)
                .filter(|&i| rank[i as usize] != NONE)
                .map(|i| key(rank[i as usize], i)),
        );
        let mut pairs = BinaryHeap::from(items);
        let mut parts = n;
        while let Some(Reverse(top)) = pairs.pop() {
            let (r, i) = ((top >> 32) as u32, top as u32);
            // Stale: `i` was absorbed (its rank reset) or its pair changed.
            if rank[i as usize] != r {
                continue;
            }
            let j = next[i as usize];
            let after = next[j as usize];
            next[i as usize] = after;
            rank[j as usize] = NONE;
            if after < last {
                prev[after as usize] = i;
            }
            parts -= 1;
            rank[i as usize] = if after < last {
                rank_of(i, next[after as usize])
            } else {
                NONE
            };
            if rank[i as usize] != NONE {
                pairs.push(key(rank[i as usize], i));
            }
            if i > 0 {
                let p = prev[i as usize];
                rank[p as usize] = rank_of(p, after);
                if rank[p as usize] != NONE {
                    pairs.push(key(rank[p as usize], p));
                }
            }
        }
        *heap = pairs.into_vec();
        Ok(parts)
    }
}

/// The buffers a long piece's merges use, kept from one piece to the next
/// of a text.
#[derive(Default)]
struct MergeScratch {
    next: Vec<u32>,
    prev: Vec<u32>,
    rank: Vec<u32>,
    /// The heap's buffer, between pieces.
    heap: Vec<Reverse<u64>>,
}

/// Empties `v` and makes room for `n` items (see [`buffer`]).
fn reset<T>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.clear();
    if v.capacity() < n {
        *v = buffer(n)?;
    }
    Ok(())
}

/// Pieces longer than this (in bytes) merge through a heap.
const LONG_PIECE: usize = 256;

static O200K: OnceLock<std::result::Result<Ranks, String>> = OnceLock::new();
static CL100K: OnceLock<std::result::Result<Ranks, String>> = OnceLock::new();

fn ranks(encoding: Encoding) -> Result<&'static Ranks> {
    let cell = match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    };
    cell.get_or_init(|| Ranks::load(encoding))
        .as_ref()
        .map_err(|e| {
            Error::invalid(format!(
                "the {} encoding failed to load: {e}",
                encoding.name()
            ))
        })
}

/// Whether an encoding's ranks are loaded (they load on first use).
pub fn is_loaded(encoding: Encoding) -> bool {
    match encoding {
        Encoding::O200kBase => O200K.get().is_some(),
        Encoding::Cl100kBase => CL100K.get().is_some(),
    }
}

/// Tokens in a well-formed string.
pub fn count_tokens_str(text: &str, encoding: Encoding) -> Result<usize> {
    let ranks = ranks(encoding)?;
    if text.is_empty() {
        return Ok(0);
    }
    let mut count = 0;
    let mut scratch = MergeScratch::default();
    for_each_piece(text, encoding, |piece| {
        count += ranks.piece_tokens(piece, &mut scratch)?;
        Ok(())
    })?;
    Ok(count)
}

/// Calls `f` with each piece the pre-tokenizer splits `text` into, in order.
#[inline]
fn for_each_piece(
    text: &str,
    encoding: Encoding,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let chars = Chars::new(text)?;
    let splitter = Splitter {
        text: text.as_bytes(),
        chars: &chars,
    };
    let n = splitter.len();
    let mut i = 0;
    while i < n {
        let end = match encoding {
            Encoding::O200kBase => splitter.o200k(i),
            Encoding::Cl100kBase => splitter.cl100k(i),
        };
        let from = chars.offsets[i] as usize;
        let to = chars.offsets[end] as usize;
        f(&text.as_bytes()[from..to])?;
        i = end;
    }
    Ok(())
}

/// The number of tokens `encoding` splits a JS string into: js-tiktoken's
/// `encode(text, [], []).length`. Lone surrogates count as U+FFFD.
pub fn count_tokens(text: &JsStr, encoding: Encoding) -> Result<usize> {
    count_tokens_str(&text.to_string_lossy(), encoding)
}

/// The pieces the pre-tokenizer splits `text` into (for tests and debugging).
pub fn split(text: &str, encoding: Encoding) -> Result<Vec<&str>> {
    let mut out = Vec::new();
    let base = text.as_ptr() as usize;
    for_each_piece(text, encoding, |piece| {
        let from = piece.as_ptr() as usize - base;
        out.push(text.get(from..from + piece.len()).unwrap_or_default());
        Ok(())
    })?;
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
