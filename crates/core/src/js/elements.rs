//! The elements `Array.prototype.map` and `filter` call back for: each
//! index below the length that holds an element, own or inherited. Holes
//! are passed over, so `convertToLlm` drops them.

use crate::error::Result;
use crate::js::view::{Kind, View};

/// Holes in a row after which the rest of the array is listed (where the
/// view can list it) instead of asked index by index: an array of length
/// 2**32 - 1 with nothing in it is then no four-billion-step walk.
const HOLE_RUN: usize = 1024;

/// A walk over the elements of an array of `len` elements.
pub struct Elements {
    next: usize,
    len: usize,
    /// A Proxy around an array: asked whether an element is there before
    /// it is read, as `map` asks, since its traps may answer otherwise.
    ask_first: bool,
    holes_in_a_row: usize,
    listed: Option<std::vec::IntoIter<usize>>,
}

impl Elements {
    /// The walk over `list`, of `len` elements.
    pub fn new<V: View>(list: &V, len: usize) -> Self {
        Elements {
            next: 0,
            len,
            ask_first: list.kind() != Kind::Array,
            holes_in_a_row: 0,
            listed: None,
        }
    }

    /// The next index to read from `list`, or `None` at the end.
    pub fn next_index<V: View>(&mut self, list: &V) -> Result<Option<usize>> {
        if let Some(listed) = &mut self.listed {
            return Ok(listed.next());
        }
        if self.next >= self.len {
            return Ok(None);
        }
        if self.holes_in_a_row >= HOLE_RUN {
            self.holes_in_a_row = 0;
            if let Some(indices) = list.present_indices(self.next, self.len)? {
                let mut listed = indices.into_iter();
                let first = listed.next();
                self.listed = Some(listed);
                return Ok(first);
            }
        }
        let index = self.next;
        self.next += 1;
        Ok(Some(index))
    }

    /// `list[index]`, or `None` for a hole. An array is read first and
    /// asked only when it gives `undefined`: the same answer, one call
    /// fewer.
    pub fn read<V: View>(&mut self, list: &V, index: usize) -> Result<Option<V>> {
        let value = if self.ask_first {
            list.has_at(index)?.then(|| list.at(index)).transpose()?
        } else {
            let value = list.at(index)?;
            (!value.is_undefined() || list.has_at(index)?).then_some(value)
        };
        self.holes_in_a_row = if value.is_some() {
            0
        } else {
            self.holes_in_a_row + 1
        };
        Ok(value)
    }
}

/// `f` with each element of `list` (of `len`) and its index, in order, each
/// read in a scope of its own, for a caller to which a hole and `undefined`
/// are the same (`for...of` gives `undefined` for a hole). An array is
/// walked as [`Elements`] walks it, so a run of holes is passed over by
/// listing the rest; any other list (a Proxy) is read index by index, as
/// `for...of` reads it, without asking whether an element is there.
pub fn each_element<V: View>(
    list: &V,
    len: usize,
    mut f: impl FnMut(usize, &V) -> Result<()>,
) -> Result<()> {
    if list.kind() != Kind::Array {
        for i in 0..len {
            list.scoped(|| f(i, &list.at(i)?))?;
        }
        return Ok(());
    }
    let mut elements = Elements::new(list, len);
    while let Some(i) = elements.next_index(list)? {
        list.scoped(|| match elements.read(list, i)? {
            Some(value) => f(i, &value),
            None => Ok(()),
        })?;
    }
    Ok(())
}
