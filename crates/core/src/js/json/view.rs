//! [`View`] over parsed [`Value`] trees: session files read in Rust, and the
//! core's own tests.

use crate::error::{Error, Result};
use crate::js::json::{number_to_js_string, stringify, stringify_len, Value, MEASURED_MIN_UNITS};
use crate::js::string::{JsStr, Utf16Builder};
use crate::js::view::{Key, Kind, View};

/// A parsed value, or `undefined` for a missing property.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    Undefined,
    Of(&'a Value),
}

impl<'a> Val<'a> {
    pub fn new(value: &'a Value) -> Self {
        Val::Of(value)
    }
}

/// A read of a measured text's content: a planning tree was used for more
/// than planning.
fn measured_text() -> Error {
    Error::invalid("internal error: a measured text was read for its content")
}

/// `String(value)`: an array's items joined with commas, nested arrays
/// likewise (`String([[1, 2], 3])` is `"1,2,3"`), null items empty. From an
/// explicit stack: a parsed value may be nested thousands deep.
fn js_string_of(value: &Value, out: &mut Utf16Builder) {
    let Value::Array(items) = value else {
        return scalar_string_of(value, out);
    };
    // Each array being joined, and whether an item of it was written yet.
    let mut stack = vec![(items.iter(), false)];
    while let Some((items, wrote)) = stack.last_mut() {
        let Some(item) = items.next() else {
            stack.pop();
            continue;
        };
        if *wrote {
            out.push_str(",");
        }
        *wrote = true;
        match item {
            Value::Array(inner) => stack.push((inner.iter(), false)),
            Value::Null => {}
            other => scalar_string_of(other, out),
        }
    }
}

/// `String(value)` of anything but an array.
fn scalar_string_of(value: &Value, out: &mut Utf16Builder) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_to_js_string(*n)),
        Value::String(s) => out.push_js(s),
        // Reached only through arrays of planning trees, which hold no
        // measured texts; a measured text itself is an error in to_js_string.
        Value::Measured(_) => debug_assert!(false, "String() of a measured text"),
        Value::Array(_) => debug_assert!(false, "String() of an array: js_string_of"),
        Value::Object(_) => out.push_str("[object Object]"),
    }
}

impl<'a> View for Val<'a> {
    fn kind(&self) -> Kind {
        match self {
            Val::Undefined => Kind::Undefined,
            Val::Of(Value::Null) => Kind::Null,
            Val::Of(Value::Bool(_)) => Kind::Bool,
            Val::Of(Value::Number(_)) => Kind::Number,
            Val::Of(Value::String(_) | Value::Measured(_)) => Kind::String,
            Val::Of(Value::Array(_)) => Kind::Array,
            Val::Of(Value::Object(_)) => Kind::Object,
        }
    }

    fn get(&self, key: Key) -> Result<Self> {
        Ok(match self {
            Val::Of(Value::Object(o)) => o.get(key.as_str()).map_or(Val::Undefined, Val::Of),
            _ => Val::Undefined,
        })
    }

    fn has(&self, key: Key) -> Result<bool> {
        Ok(matches!(self, Val::Of(Value::Object(o)) if o.contains_key(key.as_str())))
    }

    fn number(&self) -> Option<f64> {
        match self {
            Val::Of(Value::Number(n)) => Some(*n),
            _ => None,
        }
    }

    fn boolean(&self) -> Option<bool> {
        match self {
            Val::Of(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    fn str_len(&self) -> Option<usize> {
        match self {
            Val::Of(Value::String(s)) => Some(s.utf16_len()),
            Val::Of(Value::Measured(n)) => Some(*n),
            _ => None,
        }
    }

    fn str_is(&self, lit: &str) -> bool {
        match self {
            Val::Of(Value::String(s)) => s.eq_str(lit),
            // The algorithms compare with short literals (roles, types), and
            // a measured text is longer than any of them.
            Val::Of(Value::Measured(_)) => {
                debug_assert!(lit.len() < MEASURED_MIN_UNITS);
                false
            }
            _ => false,
        }
    }

    fn string(&self) -> Option<JsStr> {
        match self {
            Val::Of(Value::String(s)) => Some(s.clone()),
            _ => None,
        }
    }

    fn array_len(&self) -> Option<usize> {
        match self {
            Val::Of(Value::Array(items)) => Some(items.len()),
            _ => None,
        }
    }

    fn at(&self, index: usize) -> Result<Self> {
        match self {
            Val::Of(Value::Array(items)) => Ok(items.get(index).map_or(Val::Undefined, Val::Of)),
            _ => Err(Error::type_error("", "expected an array")),
        }
    }

    /// JSON arrays have no holes.
    fn has_at(&self, index: usize) -> Result<bool> {
        Ok(matches!(self, Val::Of(Value::Array(items)) if index < items.len()))
    }

    fn json_len(&self) -> Result<Option<usize>> {
        Ok(match self {
            Val::Undefined => None,
            Val::Of(Value::Measured(_)) => return Err(measured_text()),
            Val::Of(v) => Some(stringify_len(v)),
        })
    }

    fn strict_equals(&self, other: &Self) -> Result<bool> {
        Ok(match (self, other) {
            (Val::Undefined, Val::Undefined) => true,
            (Val::Of(Value::Measured(_)), _) | (_, Val::Of(Value::Measured(_))) => {
                return Err(measured_text())
            }
            (Val::Of(a), Val::Of(b)) => match (a, b) {
                (Value::Object(_) | Value::Array(_), _) => std::ptr::eq(*a, *b),
                (Value::Number(x), Value::Number(y)) => x == y,
                _ => a == b,
            },
            _ => false,
        })
    }

    fn json_stringify(&self) -> Result<Option<JsStr>> {
        Ok(match self {
            Val::Undefined => None,
            Val::Of(Value::Measured(_)) => return Err(measured_text()),
            Val::Of(v) => Some(stringify(v)),
        })
    }

    fn entries(&self) -> Result<Vec<(JsStr, Self)>> {
        Ok(match self {
            Val::Of(Value::Object(o)) => o.iter().map(|(k, v)| (k.clone(), Val::Of(v))).collect(),
            Val::Of(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (JsStr::from_string(i.to_string()), Val::Of(v)))
                .collect(),
            Val::Of(Value::String(s)) => s
                .code_units()
                .enumerate()
                .map(|(i, _)| (JsStr::from_string(i.to_string()), Val::Undefined))
                .collect(),
            Val::Of(Value::Measured(n)) => (0..*n)
                .map(|i| (JsStr::from_string(i.to_string()), Val::Undefined))
                .collect(),
            _ => Vec::new(),
        })
    }

    fn to_js_string(&self) -> Result<JsStr> {
        Ok(match self {
            Val::Undefined => JsStr::from_str("undefined"),
            Val::Of(Value::Measured(_)) => return Err(measured_text()),
            Val::Of(v) => {
                let mut out = Utf16Builder::new();
                js_string_of(v, &mut out);
                out.finish()
            }
        })
    }
}
