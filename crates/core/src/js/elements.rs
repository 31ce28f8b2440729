//! The elements `Array.prototype.map` and `filter` call back for: each
//! index below the length that holds an element, own or inherited. Holes
//! are passed over, so `convertToLlm` drops them.

use crate::error::Result;
use crate::js::view::View;

/// Holes in a row after which the rest of the array is listed (where the
/// view can list it) instead of asked index by index: an array of length
/// 2**32 - 1 with nothing in it is then no four-billion-step walk.
const HOLE_RUN: usize = 1024;

/// A walk over the indices of an array of `len` elements.
pub struct Elements {
    next: usize,
    len: usize,
    holes_in_a_row: usize,
    listed: Option<std::vec::IntoIter<usize>>,
}

impl Elements {
    pub fn new(len: usize) -> Self {
        Elements {
            next: 0,
            len,
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

    /// Whether `value`, just read as `list[index]`, is a hole to pass
    /// over: `undefined` with no element at `index`.
    pub fn is_hole<V: View>(&mut self, list: &V, index: usize, value: &V) -> Result<bool> {
        let hole = value.is_undefined() && !list.has_at(index)?;
        self.holes_in_a_row = if hole { self.holes_in_a_row + 1 } else { 0 };
        Ok(hole)
    }
}
