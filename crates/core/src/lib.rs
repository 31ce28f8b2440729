//! prime-compaction's core: the pi coding agent's conversation compaction in
//! plain Rust, with no N-API anywhere in its dependency tree (the addon in
//! the repository root is the thin layer over it), unit-tested with
//! `cargo test`.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod agent_line;
pub mod boundary_codes;
pub mod capacity;
pub mod error;
pub mod js;
pub mod plan;
pub mod prefault;
pub mod projection;
pub mod session;
pub mod summary;
pub mod tokens;
pub mod transcript;

#[cfg(test)]
mod tests;
