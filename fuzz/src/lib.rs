//! Fuzz target bodies for prime-compaction; see `bodies.rs`.

pub mod bodies;
