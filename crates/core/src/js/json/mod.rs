//! `JSON.parse` and `JSON.stringify` with JavaScript's exact semantics.
//!
//! * [`parse`] accepts exactly what `JSON.parse` accepts (up to a nesting
//!   limit, see [`DEFAULT_MAX_DEPTH`]): whitespace is only space, tab, CR and
//!   LF; `\uD83D`-style escapes of lone surrogates are kept (as a
//!   [`JsStr::Wtf8`](crate::js::string::JsStr::Wtf8)); numbers round to
//!   the nearest `f64` as in JS (`1e400` is `Infinity`, `-0` is `-0`).
//! * Objects behave like the JS objects `JSON.parse` builds: a repeated key
//!   keeps its *first* position and its *last* value, and keys that are array
//!   indices (`"0"`..=`"4294967294"` in canonical form) come first, in
//!   ascending numeric order, as they do in every JS object.
//! * [`stringify`] produces what `JSON.stringify(value)` returns, byte for
//!   byte: no whitespace, well-formed output (lone surrogates escaped as
//!   `\udxxx`), numbers as JS prints them, `NaN`/`Infinity` as `null`.
//!
//! Nothing here panics on any input; parse and stringify use explicit stacks,
//! not recursion.
//!
//! Written by hand because serde_json does not do this: its untyped values
//! cannot keep lone-surrogate escapes, it rejects `1e400`, and it orders
//! object keys unlike JS. Numbers are printed by `ryu-js` (`number.rs`).

mod names;
mod number;
mod object;
mod parse;
mod stringify;
mod value;
pub mod view;

pub(crate) use number::decimal_digits;
pub use number::number_to_js_string;
pub use object::{array_index, Iter, Object};
pub use parse::{
    parse, parse_bytes, parse_for_plan, parse_with_max_depth, ParseError, DEFAULT_MAX_DEPTH,
    MEASURED_MIN_UNITS,
};
pub use stringify::{
    push_quoted_utf16, quoted_len, quoted_len_utf16, stringify, stringify_into, stringify_len,
    stringify_to_string,
};
pub use value::Value;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
