//! What every export shares: reading the caller's values in place
//! ([`view`], [`text`], and the flat form of messages in [`flat`]) and plain
//! arguments ([`args`]), building results ([`out`]), and the one place errors
//! and panics become JS exceptions ([`errors`]).

pub mod args;
pub mod codes;
pub mod errors;
pub mod flat;
pub mod out;
pub mod text;
pub mod view;
