//! Summaries: `compact()`'s state machine ([`compact`]), which retries with a
//! smaller request ([`retry`]) when a provider reports a context overflow
//! ([`overflow`]); the prompts ([`prompts`]); the messages it summarizes
//! rendered at each shrink level ([`message_transcript`]); how failures are
//! reported ([`failure`]); transient failures and pi-ai's retry policy for
//! them ([`transient`]); and the usage a result reports ([`usage`]).

pub mod compact;
pub mod failure;
pub mod message_transcript;
pub mod overflow;
pub mod prompts;
pub mod retry;
pub mod transient;
pub mod usage;
