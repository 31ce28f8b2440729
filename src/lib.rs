//! prime-compaction: the Prime Agent's conversation compaction as a native
//! Node.js addon. The algorithms live in `prime_compaction_core`; `binding`
//! is the thin N-API layer over it.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod binding;
