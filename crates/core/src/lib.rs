//! prime-compaction's core: the Prime Agent's conversation compaction in
//! plain Rust, with no N-API anywhere in its dependency tree (the addon in
//! the repository root is the thin layer over it), unit-tested with
//! `cargo test`.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod capacity;
pub mod convert;
pub mod error;
pub mod file_transcript;
pub mod js;
pub mod llm_message;
pub mod plan;
pub mod projection;
pub mod serialize;
pub mod session;
pub mod summary;
pub mod text;
pub mod tokens;

#[cfg(test)]
mod tests;
