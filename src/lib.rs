//! prime-compaction: the Prime Agent's conversation compaction as a native
//! Node.js addon. `core` is plain Rust; `binding` is the thin N-API layer.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod binding;
pub mod core;
