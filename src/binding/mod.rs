//! The `#[napi]` layer: reads arguments through [`js::JsVal`], calls the
//! core, builds results. No algorithm lives here.

pub mod compaction;
pub mod errors;
pub mod js;
pub mod messages;
pub mod out;
