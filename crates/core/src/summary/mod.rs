//! Summaries: `compact()`'s state machine ([`compact`]), which retries with a
//! smaller request ([`retry`]) when a provider reports a context overflow
//! ([`overflow`]); the prompts ([`prompts`]); the messages it summarizes
//! rendered at each shrink level ([`message_transcript`]); and transient
//! failures and pi-ai's retry policy for them ([`transient`]).

pub mod compact;
pub mod message_transcript;
pub mod overflow;
pub mod prompts;
pub mod retry;
pub mod transient;
