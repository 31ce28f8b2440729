//! prime-compaction: the pi coding agent's conversation compaction as a native
//! Node.js addon, the thin `#[napi]` layer over `prime_compaction_core`. Each
//! file at this level serves the exports it is named after: it reads the
//! arguments (through [`js::view::JsVal`]), calls the core and builds the
//! result. `js/` holds what they share: reading and building JS values, and
//! turning core errors and panics into JS exceptions. No algorithm lives here.
//!
//! Every `napi_env` handled here is the one napi-rs passes to the current
//! call, valid for its duration; functions taking it are not marked `unsafe`.
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod agent_line;
pub mod branch_summary;
pub mod compact;
pub mod compaction_entry;
pub mod complete_summarization;
pub mod convert_to_llm;
pub mod count_tokens;
pub mod cut_point;
pub mod entry_facts;
pub mod estimate_tokens;
pub mod file_ops;
pub mod from_file;
pub mod js;
pub mod json_length;
#[cfg(debug_assertions)]
pub mod panic_for_test;
pub mod prepare_compaction;
pub mod project_for_summary;
pub mod serialize_conversation;
pub mod settings;
pub mod split_user_rounds;
