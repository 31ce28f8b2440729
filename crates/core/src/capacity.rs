//! How much to reserve up front for a result sized by an input array.
//!
//! A JS array's `length` is not its size: `a.length = 2 ** 32 - 1` costs the
//! caller nothing, and reserving room for that many items makes the
//! allocator abort the whole process. Dense arrays beyond a few million
//! elements do not occur in sessions, so reservations are capped and
//! anything longer grows as items are actually read (a holey array fails on
//! its first hole long before that).

/// The most items reserved ahead of reading them.
pub const MAX_RESERVE: usize = 1 << 16;

/// `len`, capped at [`MAX_RESERVE`].
pub fn reserve_for(len: usize) -> usize {
    len.min(MAX_RESERVE)
}
