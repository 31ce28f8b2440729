//! The codes of the two paths read ahead for `collectEntriesForBranchSummary`
//! (lib/entry-path.js writes them; the binding's walk, src/branch_summary.rs,
//! reads them through [`PathCodes`]): two codes a step, the first about the
//! entry's `id`, the second about its `parentId`, and the ids' UTF-16 units
//! in one run, each id's units where its length code says.

use std::ops::Range;

use crate::boundary_codes::entry_path::{NOT_READ, NOT_STRING, SAME, THREW};

/// What a step's first code says of the entry's `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepId {
    /// The id it was looked up by.
    Same,
    /// Another string: these units of the run.
    Units(Range<usize>),
    /// Not a string: the next value handed over beside the codes.
    NotString,
    /// The step threw: what it threw is the next value handed over.
    Threw,
}

/// What a step's second code says of its `parentId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepParent {
    /// A string: these units of the run.
    Units(Range<usize>),
    /// Not a string: the next value handed over.
    NotString,
    /// Not read (the id was not a string, or the step threw).
    NotRead,
}

/// One step of a path read ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathStep {
    pub id: StepId,
    pub parent: StepParent,
}

/// Codes no writer of the form makes: a bug on one side of the boundary,
/// never the caller's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// Reads a form's codes step by step, each id's units checked to lie in the
/// run (`units` long) right after the previous id's.
pub struct PathCodes<'a> {
    codes: &'a [i32],
    units: usize,
    at: usize,
    unit_at: usize,
}

impl<'a> PathCodes<'a> {
    pub fn new(codes: &'a [i32], units: usize) -> Self {
        PathCodes {
            codes,
            units,
            at: 0,
            unit_at: 0,
        }
    }

    /// How many steps the codes hold (two codes a step).
    pub fn steps(&self) -> usize {
        self.codes.len() / 2
    }

    /// Whether a step is left to read (or a stray code, which is malformed).
    pub fn has_more(&self) -> bool {
        self.at < self.codes.len()
    }

    /// The next `len` units of the run.
    fn take_units(&mut self, len: i32) -> Result<Range<usize>, Malformed> {
        let len = usize::try_from(len).map_err(|_| Malformed)?;
        let end = self.unit_at.checked_add(len).ok_or(Malformed)?;
        if end > self.units {
            return Err(Malformed);
        }
        let range = self.unit_at..end;
        self.unit_at = end;
        Ok(range)
    }

    /// The next step; `Ok(None)` once every code is read. After an error
    /// the reader is spent: every later call is an error too.
    pub fn next_step(&mut self) -> Result<Option<PathStep>, Malformed> {
        let Some(rest) = self.codes.get(self.at..) else {
            return Err(Malformed);
        };
        let Some((&[id, parent], _)) = rest.split_first_chunk::<2>() else {
            if rest.is_empty() {
                return Ok(None);
            }
            self.at = usize::MAX;
            return Err(Malformed);
        };
        let step = self.decode(id, parent);
        self.at = if step.is_ok() {
            self.at + 2
        } else {
            usize::MAX
        };
        step.map(Some)
    }

    fn decode(&mut self, id: i32, parent: i32) -> Result<PathStep, Malformed> {
        let id = match id {
            THREW | NOT_STRING => {
                if parent != NOT_READ {
                    return Err(Malformed);
                }
                let id = if id == THREW {
                    StepId::Threw
                } else {
                    StepId::NotString
                };
                return Ok(PathStep {
                    id,
                    parent: StepParent::NotRead,
                });
            }
            SAME => StepId::Same,
            len => StepId::Units(self.take_units(len)?),
        };
        let parent = match parent {
            NOT_STRING => StepParent::NotString,
            len => StepParent::Units(self.take_units(len)?),
        };
        Ok(PathStep { id, parent })
    }
}

/// The codes of `steps`, as lib/entry-path.js writes them (for tests and
/// the fuzz target: what [`PathCodes`] reads, written back).
pub fn encode(steps: &[PathStep]) -> Vec<i32> {
    let len = |r: &Range<usize>| i32::try_from(r.len()).unwrap_or(i32::MAX);
    let mut codes = Vec::with_capacity(2 * steps.len());
    for step in steps {
        codes.push(match &step.id {
            StepId::Same => SAME,
            StepId::Units(r) => len(r),
            StepId::NotString => NOT_STRING,
            StepId::Threw => THREW,
        });
        codes.push(match &step.parent {
            StepParent::Units(r) => len(r),
            StepParent::NotString => NOT_STRING,
            StepParent::NotRead => NOT_READ,
        });
    }
    codes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(codes: &[i32], units: usize) -> Result<Vec<PathStep>, Malformed> {
        let mut reader = PathCodes::new(codes, units);
        let mut steps = Vec::new();
        while let Some(step) = reader.next_step()? {
            steps.push(step);
        }
        Ok(steps)
    }

    #[test]
    fn reads_each_kind_of_step() {
        // "e1" looked up as itself, parent "e0"; an entry "b" found under
        // another id, parent "a"; an id that is not a string; a throw; a
        // parent that is not a string.
        let codes = [
            SAME, 2, 1, 1, NOT_STRING, NOT_READ, THREW, NOT_READ, SAME, NOT_STRING,
        ];
        assert_eq!(
            read_all(&codes, 4),
            Ok(vec![
                PathStep {
                    id: StepId::Same,
                    parent: StepParent::Units(0..2)
                },
                PathStep {
                    id: StepId::Units(2..3),
                    parent: StepParent::Units(3..4)
                },
                PathStep {
                    id: StepId::NotString,
                    parent: StepParent::NotRead
                },
                PathStep {
                    id: StepId::Threw,
                    parent: StepParent::NotRead
                },
                PathStep {
                    id: StepId::Same,
                    parent: StepParent::NotString
                },
            ])
        );
        assert_eq!(encode(&read_all(&codes, 4).unwrap_or_default()), codes);
        assert_eq!(read_all(&[], 0), Ok(vec![]));
    }

    #[test]
    fn codes_no_writer_makes_are_malformed() {
        for (codes, units) in [
            (&[SAME][..], 0),              // half a step
            (&[SAME, 3][..], 2),           // units past the run
            (&[NOT_READ, 0][..], 0),       // an id not read
            (&[SAME, NOT_READ][..], 0),    // a string id's parent not read
            (&[NOT_STRING, 0][..], 0),     // a parent read after an id that was not
            (&[THREW, NOT_STRING][..], 0), // a parent read after a throw
            (&[-5, 0][..], 0),             // no such code
            (&[SAME, i32::MIN][..], 0),    // a negative length
            (&[SAME, 0, SAME, 2][..], 1),  // the run ends inside the second step
        ] {
            assert_eq!(read_all(codes, units), Err(Malformed), "{codes:?}");
        }
        // Once malformed, always: the reader does not resume past the bad step.
        let mut reader = PathCodes::new(&[SAME, 9, SAME, 0], 0);
        assert_eq!(reader.next_step(), Err(Malformed));
        assert_eq!(reader.next_step(), Err(Malformed));
    }
}
