//! Reading the plain arguments several exports take: numbers, indices, and
//! the `tokenizer` option.

use prime_compaction_core::error::{Context, Error, Result};
use prime_compaction_core::js::view::View;
use prime_compaction_core::plan::settings::read_counter;
use prime_compaction_core::tokens::estimate::Counter;

use crate::js::out::Arg;
use crate::js::view::{Cx, JsVal};

pub fn arg<'c>(cx: &'c Cx, a: &Arg) -> Result<JsVal<'c>> {
    cx.wrap(a.0)
}

pub fn number_arg(cx: &Cx, a: &Arg, name: &str) -> Result<f64> {
    let v = arg(cx, a)?;
    v.number().ok_or_else(|| {
        Error::type_error(
            name,
            format!("expected a number, got {}", v.kind().describe()),
        )
    })
}

/// An index argument: an integer (negative allowed, as the reference loops allow it).
pub fn index_arg(cx: &Cx, a: &Arg, name: &str) -> Result<i64> {
    let n = number_arg(cx, a, name)?;
    if n.fract() != 0.0 || !n.is_finite() || n.abs() > 9.0e15 {
        return Err(Error::type_error(
            name,
            format!("expected an integer index, got {n}"),
        ));
    }
    Ok(n as i64)
}

/// `options.tokenizer` of an optional options (or settings) argument.
pub fn counter_option(cx: &Cx, options: &Option<Arg>) -> Result<Counter> {
    match options {
        None => Ok(Counter::Estimate),
        Some(o) => {
            let v = arg(cx, o)?;
            if !v.is_object_like() {
                return Err(Error::type_error(
                    "options",
                    format!("expected an object, got {}", v.kind().describe()),
                ));
            }
            read_counter(&v).within("options")
        }
    }
}
