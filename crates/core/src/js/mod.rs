//! Values exactly as JavaScript sees them: strings of UTF-16 units
//! ([`string`]), `JSON.parse`/`JSON.stringify` ([`json`]), and [`view::View`],
//! the read-only view every algorithm reads its input through, the
//! elements `map` visits ([`elements`]), and `ToNumber` for primitives
//! ([`to_number`]).

pub mod elements;
pub mod json;
pub mod math;
pub mod string;
pub mod to_number;
pub mod view;
