//! The `#[napi]` layer: reads arguments through [`js::JsVal`], calls the
//! core, builds results. No algorithm lives here.
//!
//! Every `napi_env` handled here is the one napi-rs passes to the current
//! call, valid for its duration; functions taking it are not marked `unsafe`.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod branch;
pub mod compact;
pub mod compaction;
#[cfg(debug_assertions)]
pub mod debug;
pub mod errors;
pub mod file;
pub mod flat;
pub mod js;
pub mod js_text;
pub mod messages;
pub mod out;
pub mod prepare_async;
pub mod serialize;
pub mod tokenizer;
