//! The JSON value model: [`Value`], with clone, equality and debug output
//! that work at any depth.

use std::fmt;

use crate::js::string::JsStr;

use super::names::PropName;
use super::object::Object;
use super::stringify::stringify_len;

/// A JSON value.
///
/// `Clone`, `PartialEq` and `Debug` work with explicit stacks, so they are
/// safe at any depth. `Drop` is the compiler's (recursive, about 100 bytes of
/// stack per level in release builds and 250 in debug builds), which is why
/// [`parse`] caps nesting at [`DEFAULT_MAX_DEPTH`]. Equality is structural
/// and order-sensitive, with `f64` semantics for numbers (`NaN != NaN`,
/// `0 == -0`).
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(JsStr),
    /// A string the planning parse measured but did not keep: its UTF-16
    /// length, never below [`MEASURED_MIN_UNITS`]. Only [`parse_for_plan`]
    /// makes these, for texts whose length is all a plan reads.
    Measured(usize),
    Array(Vec<Value>),
    Object(Object),
}

impl Value {
    /// `v[key]` when `v` is an object holding `key`.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(o) => o.get(key),
            _ => None,
        }
    }

    /// `v[index]` when `v` is an array long enough.
    pub fn at(&self, index: usize) -> Option<&Value> {
        match self {
            Value::Array(a) => a.get(index),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_js_str(&self) -> Option<&JsStr> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The string, when it is one and holds no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        self.as_js_str().and_then(JsStr::as_str)
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// `JSON.stringify(v).length`.
    pub fn json_len(&self) -> usize {
        stringify_len(self)
    }
}

enum CloneFrame<'a> {
    Array(std::slice::Iter<'a, Value>, Vec<Value>),
    Object(
        std::slice::Iter<'a, (PropName, Value)>,
        Vec<(PropName, Value)>,
        PropName,
    ),
}

impl Clone for Value {
    fn clone(&self) -> Value {
        let mut stack: Vec<CloneFrame<'_>> = Vec::new();
        let mut cur = self;
        loop {
            let mut val = match cur {
                Value::Null => Value::Null,
                Value::Bool(b) => Value::Bool(*b),
                Value::Number(n) => Value::Number(*n),
                Value::String(s) => Value::String(s.clone()),
                Value::Measured(n) => Value::Measured(*n),
                Value::Array(items) => {
                    let mut it = items.iter();
                    match it.next() {
                        Some(first) => {
                            stack.push(CloneFrame::Array(it, Vec::with_capacity(items.len())));
                            cur = first;
                            continue;
                        }
                        None => Value::Array(Vec::new()),
                    }
                }
                Value::Object(o) => {
                    let mut it = o.entries.iter();
                    match it.next() {
                        Some((k, first)) => {
                            let out = Vec::with_capacity(o.entries.len());
                            stack.push(CloneFrame::Object(it, out, k.clone()));
                            cur = first;
                            continue;
                        }
                        None => Value::Object(Object::new()),
                    }
                }
            };
            loop {
                match stack.last_mut() {
                    None => return val,
                    Some(CloneFrame::Array(it, out)) => {
                        out.push(val);
                        if let Some(next) = it.next() {
                            cur = next;
                            break;
                        }
                        let items = std::mem::take(out);
                        stack.pop();
                        val = Value::Array(items);
                    }
                    Some(CloneFrame::Object(it, out, key)) => {
                        out.push((std::mem::take(key), val));
                        if let Some((k, next)) = it.next() {
                            *key = k.clone();
                            cur = next;
                            break;
                        }
                        // Already in canonical order without duplicates.
                        let entries = std::mem::take(out);
                        stack.pop();
                        val = Value::Object(Object { entries });
                    }
                }
            }
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        let mut todo: Vec<(&Value, &Value)> = vec![(self, other)];
        while let Some(pair) = todo.pop() {
            match pair {
                (Value::Null, Value::Null) => {}
                (Value::Bool(a), Value::Bool(b)) if a == b => {}
                (Value::Number(a), Value::Number(b)) if a == b => {}
                (Value::String(a), Value::String(b)) if a == b => {}
                (Value::Measured(a), Value::Measured(b)) if a == b => {}
                (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                    todo.extend(a.iter().zip(b.iter()));
                }
                (Value::Object(a), Value::Object(b)) if a.len() == b.len() => {
                    for ((ka, va), (kb, vb)) in a.entries.iter().zip(b.entries.iter()) {
                        if ka != kb {
                            return false;
                        }
                        todo.push((va, vb));
                    }
                }
                _ => return false,
            }
        }
        true
    }
}

enum DebugFrame<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(std::slice::Iter<'a, (PropName, Value)>),
}

impl fmt::Debug for Value {
    /// Like a derived `Debug` (`Array([Number(1.0), String("a")])`), with
    /// objects shown as `Object({"key": value})`. Never pretty-printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut stack: Vec<DebugFrame<'_>> = Vec::new();
        let mut cur = self;
        loop {
            match cur {
                Value::Null => f.write_str("Null")?,
                Value::Bool(b) => write!(f, "Bool({b})")?,
                Value::Number(n) => write!(f, "Number({n:?})")?,
                Value::String(s) => write!(f, "String({s:?})")?,
                Value::Measured(n) => write!(f, "Measured({n})")?,
                Value::Array(items) => {
                    f.write_str("Array([")?;
                    let mut it = items.iter();
                    if let Some(first) = it.next() {
                        stack.push(DebugFrame::Array(it));
                        cur = first;
                        continue;
                    }
                    f.write_str("])")?;
                }
                Value::Object(o) => {
                    f.write_str("Object({")?;
                    let mut it = o.entries.iter();
                    if let Some((k, first)) = it.next() {
                        write!(f, "{k:?}: ")?;
                        stack.push(DebugFrame::Object(it));
                        cur = first;
                        continue;
                    }
                    f.write_str("})")?;
                }
            }
            loop {
                match stack.last_mut() {
                    None => return Ok(()),
                    Some(DebugFrame::Array(it)) => match it.next() {
                        Some(next) => {
                            f.write_str(", ")?;
                            cur = next;
                            break;
                        }
                        None => {
                            f.write_str("])")?;
                            stack.pop();
                        }
                    },
                    Some(DebugFrame::Object(it)) => match it.next() {
                        Some((k, next)) => {
                            write!(f, ", {k:?}: ")?;
                            cur = next;
                            break;
                        }
                        None => {
                            f.write_str("})")?;
                            stack.pop();
                        }
                    },
                }
            }
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n)
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(f64::from(n))
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Number(f64::from(n))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(JsStr::from_str(s))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(JsStr::from_string(s))
    }
}

impl From<JsStr> for Value {
    fn from(s: JsStr) -> Value {
        Value::String(s)
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

impl From<Object> for Value {
    fn from(o: Object) -> Value {
        Value::Object(o)
    }
}
