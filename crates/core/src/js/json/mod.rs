//! `JSON.parse` and `JSON.stringify` with JavaScript's exact semantics.
//!
//! * [`parse`] accepts exactly what `JSON.parse` accepts (up to a nesting
//!   limit, see [`DEFAULT_MAX_DEPTH`]): whitespace is only space, tab, CR and
//!   LF; `\uD83D`-style escapes of lone surrogates are kept (as a
//!   [`JsStr::Wtf8`]); numbers round to the nearest `f64` as in JS (`1e400`
//!   is `Infinity`, `-0` is `-0`).
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

pub mod view;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use crate::js::string::{
    is_high_surrogate, is_low_surrogate, is_surrogate, push_surrogate_wtf8, utf16_len_of_str,
    utf16_len_of_utf8, JsStr, Wtf8Piece,
};

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

/// The property names session entries and their messages use. Parsed objects
/// hold these without an allocation of their own: a session file has some
/// thirty of them an entry, and allocating and freeing each one was a large
/// part of reading a file.
const KNOWN_NAMES: [&str; 64] = [
    "type",
    "timestamp",
    "id",
    "parentId",
    "content",
    "message",
    "role",
    "output",
    "input",
    "cacheRead",
    "cacheWrite",
    "text",
    "provider",
    "api",
    "model",
    "usage",
    "totalTokens",
    "cost",
    "total",
    "stopReason",
    "name",
    "arguments",
    "toolCallId",
    "toolName",
    "isError",
    "path",
    "command",
    "thinking",
    "details",
    "oldText",
    "newText",
    "diff",
    "offset",
    "limit",
    "summary",
    "fromId",
    "thinkingSignature",
    "customType",
    "display",
    "truncated",
    "exitCode",
    "cancelled",
    "fullOutputPath",
    "thinkingLevel",
    "redacted",
    "modelId",
    "errorMessage",
    "excludeFromContext",
    "partialJson",
    "responseId",
    "firstKeptEntryId",
    "tokensBefore",
    "fromHook",
    "readFiles",
    "modifiedFiles",
    "data",
    "mimeType",
    "label",
    "targetId",
    "version",
    "cwd",
    "textSignature",
    "edits",
    "file_path",
];

/// The known names as `JsStr`s, made once.
fn known_names() -> &'static [JsStr] {
    static NAMES: OnceLock<Vec<JsStr>> = OnceLock::new();
    NAMES.get_or_init(|| KNOWN_NAMES.iter().map(|n| JsStr::from_str(n)).collect())
}

/// The index of a known name.
fn known_index(name: &[u8]) -> Option<u8> {
    static INDEX: OnceLock<rustc_hash::FxHashMap<&'static [u8], u8>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            KNOWN_NAMES
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_bytes(), i as u8))
                .collect()
        })
        .get(name)
        .copied()
}

/// A property name: a known one (no allocation) or any other. Reads as the
/// `JsStr` it stands for.
#[derive(Clone)]
pub struct PropName(Name);

#[derive(Clone)]
enum Name {
    Known(u8),
    Other(JsStr),
}

impl PropName {
    fn new(name: JsStr) -> PropName {
        match name.as_str().and_then(|s| known_index(s.as_bytes())) {
            Some(i) => PropName(Name::Known(i)),
            None => PropName(Name::Other(name)),
        }
    }

    /// The name as an owned `JsStr`.
    pub fn into_js(self) -> JsStr {
        match self.0 {
            Name::Known(_) => (*self).clone(),
            Name::Other(s) => s,
        }
    }

    /// Whether the name is `key`.
    #[inline]
    fn is(&self, key: &str) -> bool {
        match &self.0 {
            Name::Known(i) => KNOWN_NAMES[usize::from(*i)] == key,
            Name::Other(s) => s.eq_str(key),
        }
    }
}

impl std::ops::Deref for PropName {
    type Target = JsStr;

    fn deref(&self) -> &JsStr {
        match &self.0 {
            Name::Known(i) => &known_names()[usize::from(*i)],
            Name::Other(s) => s,
        }
    }
}

impl Default for PropName {
    fn default() -> PropName {
        PropName(Name::Other(JsStr::empty()))
    }
}

impl PartialEq for PropName {
    fn eq(&self, other: &PropName) -> bool {
        match (&self.0, &other.0) {
            (Name::Known(a), Name::Known(b)) => a == b,
            // A known name is never stored as another.
            (Name::Known(_), Name::Other(_)) | (Name::Other(_), Name::Known(_)) => false,
            (Name::Other(a), Name::Other(b)) => a == b,
        }
    }
}

impl Eq for PropName {}

impl std::hash::Hash for PropName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl fmt::Debug for PropName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq<str> for PropName {
    fn eq(&self, other: &str) -> bool {
        self.is(other)
    }
}

impl PartialEq<&str> for PropName {
    fn eq(&self, other: &&str) -> bool {
        self.is(other)
    }
}

/// A JS object as `JSON.parse` builds it: own enumerable properties in JS
/// property order, no duplicate keys. Lookup is linear, which beats hashing
/// for the small objects this crate deals with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object {
    entries: Vec<(PropName, Value)>,
}

/// The array index a key denotes (`"0"`..=`"4294967294"`, canonical decimal
/// form only), which JS orders before all other keys.
pub fn array_index(key: &JsStr) -> Option<u32> {
    let s = key.as_str()?.as_bytes();
    if s.is_empty() || s.len() > 10 || (s[0] == b'0' && s.len() > 1) {
        return None;
    }
    let mut n: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    if n <= 4_294_967_294 {
        u32::try_from(n).ok()
    } else {
        None
    }
}

fn starts_with_digit(key: &JsStr) -> bool {
    key.as_str()
        .is_some_and(|s| s.as_bytes().first().is_some_and(u8::is_ascii_digit))
}

impl Object {
    pub fn new() -> Object {
        Object::default()
    }

    pub fn with_capacity(n: usize) -> Object {
        Object {
            entries: Vec::with_capacity(n),
        }
    }

    /// Builds an object as if each pair were assigned in turn (`o[k] = v`):
    /// a repeated key keeps its first position and takes the last value, and
    /// array-index keys move to the front in numeric order.
    pub fn from_entries(entries: Vec<(JsStr, Value)>) -> Object {
        Object::from_props(
            entries
                .into_iter()
                .map(|(k, v)| (PropName::new(k), v))
                .collect(),
        )
    }

    fn from_props(mut entries: Vec<(PropName, Value)>) -> Object {
        if has_duplicate_keys(&entries) {
            entries = merge_duplicates(entries);
        }
        if entries.iter().any(|(k, _)| starts_with_digit(k)) {
            let keys: Vec<Option<u32>> = entries.iter().map(|(k, _)| array_index(k)).collect();
            let in_order = keys.windows(2).all(|w| match (w[0], w[1]) {
                (Some(a), Some(b)) => a < b,
                (None, Some(_)) => false,
                _ => true,
            });
            if !in_order {
                let mut tagged: Vec<(Option<u32>, (PropName, Value))> =
                    keys.into_iter().zip(entries).collect();
                // Stable: non-index keys keep their insertion order.
                tagged.sort_by_key(|(idx, _)| match idx {
                    Some(i) => (0u8, *i),
                    None => (1u8, 0),
                });
                entries = tagged.into_iter().map(|(_, e)| e).collect();
            }
        }
        Object { entries }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `obj[key]` for an own property.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k.is(key)).map(|(_, v)| v)
    }

    /// Like [`Object::get`], for a key that may hold lone surrogates.
    pub fn get_js(&self, key: &JsStr) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| **k == *key)
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k.is(key))
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// JS assignment `obj[key] = value`: replaces the value of an existing key
    /// in place (returning the old one), else adds the key where JS would put
    /// it (array indices in numeric order at the front, others at the end).
    pub fn insert(&mut self, key: impl Into<JsStr>, value: Value) -> Option<Value> {
        let key = PropName::new(key.into());
        if let Some((_, v)) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            return Some(std::mem::replace(v, value));
        }
        match array_index(&key) {
            Some(n) => {
                let at = self
                    .entries
                    .iter()
                    .position(|(k, _)| array_index(k).is_none_or(|m| m > n))
                    .unwrap_or(self.entries.len());
                self.entries.insert(at, (key, value));
            }
            None => self.entries.push((key, value)),
        }
        None
    }

    /// JS `delete obj[key]`; the other keys keep their order.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let at = self.entries.iter().position(|(k, _)| k.is(key))?;
        Some(self.entries.remove(at).1)
    }

    /// The properties in JS order (`Object.keys` order).
    pub fn entries(&self) -> &[(PropName, Value)] {
        &self.entries
    }

    pub fn iter(&self) -> Iter<'_> {
        self.entries.iter().map(as_pair)
    }

    pub fn keys(&self) -> impl Iterator<Item = &JsStr> {
        self.entries.iter().map(|(k, _)| &**k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn into_entries(self) -> Vec<(JsStr, Value)> {
        self.entries
            .into_iter()
            .map(|(k, v)| (k.into_js(), v))
            .collect()
    }
}

fn as_pair((k, v): &(PropName, Value)) -> (&JsStr, &Value) {
    (k, v)
}

/// The properties of an [`Object`], as `(name, value)` pairs.
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (PropName, Value)>,
    fn(&(PropName, Value)) -> (&JsStr, &Value),
>;

impl<'a> IntoIterator for &'a Object {
    type Item = (&'a JsStr, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for Object {
    type Item = (JsStr, Value);
    type IntoIter = std::vec::IntoIter<(JsStr, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_entries().into_iter()
    }
}

impl<K: Into<JsStr>> FromIterator<(K, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Object {
        Object::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

fn has_duplicate_keys(entries: &[(PropName, Value)]) -> bool {
    let n = entries.len();
    if n < 2 {
        return false;
    }
    if n <= 16 {
        for i in 1..n {
            let k = &entries[i].0;
            if entries[..i].iter().any(|(prev, _)| prev == k) {
                return true;
            }
        }
        return false;
    }
    let mut seen: HashSet<&PropName> = HashSet::with_capacity(n);
    !entries.iter().all(|(k, _)| seen.insert(k))
}

/// First position, last value, for each repeated key.
fn merge_duplicates(entries: Vec<(PropName, Value)>) -> Vec<(PropName, Value)> {
    let mut out: Vec<(PropName, Value)> = Vec::with_capacity(entries.len());
    let mut at: HashMap<PropName, usize> = HashMap::with_capacity(entries.len());
    for (k, v) in entries {
        match at.get(&k) {
            Some(&i) => {
                if let Some(slot) = out.get_mut(i) {
                    slot.1 = v;
                }
            }
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    out
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

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
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

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
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

    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// `JSON.stringify(v)`.
    pub fn to_json(&self) -> JsStr {
        stringify(self)
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

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// Why and where parsing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset into the input.
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// The deepest nesting of arrays and objects [`parse`] accepts. V8's
/// `JSON.parse` has no limit, but `JSON.stringify` throws `RangeError` past
/// about 4,000 levels (node 20, default stack), so no file node wrote can
/// come near this. The limit keeps the recursive `Drop`, `Clone`,
/// `PartialEq` and `Debug` of [`Value`] well within a 2 MiB thread stack.
pub const DEFAULT_MAX_DEPTH: usize = 5000;

/// `JSON.parse(text)`, nesting limited to [`DEFAULT_MAX_DEPTH`].
pub fn parse(text: &str) -> Result<Value, ParseError> {
    parse_with_max_depth(text, DEFAULT_MAX_DEPTH)
}

/// `JSON.parse` of UTF-8 bytes; invalid UTF-8 is an error (at the offset of
/// the first bad byte). Note: node's `readFileSync(f, "utf8")` would instead
/// decode bad bytes as U+FFFD; use `String::from_utf8_lossy` to mimic that.
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => Err(ParseError {
            offset: e.valid_up_to(),
            message: "invalid UTF-8",
        }),
    }
}

/// `JSON.parse(text)` with a custom nesting limit.
pub fn parse_with_max_depth(text: &str, max_depth: usize) -> Result<Value, ParseError> {
    Parser::new(text, false).parse(max_depth)
}

/// The shortest text, in UTF-16 units, that [`parse_for_plan`] measures
/// instead of keeping. Shorter ones cost little to keep, and every literal
/// the algorithms compare a string with is shorter.
pub const MEASURED_MIN_UNITS: usize = 256;

/// `JSON.parse` of one session entry (or an array of them) for planning:
/// accepts and rejects exactly what [`parse`] does, with the same errors,
/// but message texts (the `text` and `thinking` of content blocks, string
/// `content`, bash `command` and `output`, block signatures and partial
/// JSON, anything under a message's `details`) of [`MEASURED_MIN_UNITS`] or
/// more are kept as [`Value::Measured`]: a plan counts their length and
/// reads nothing else of them. Tool-call arguments, ids, summaries and entry
/// `details` are kept.
pub fn parse_for_plan(text: &str) -> Result<Value, ParseError> {
    Parser::new(text, true).parse(DEFAULT_MAX_DEPTH)
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    scratch: String,
    /// Measure long message texts (see [`parse_for_plan`]).
    plan: bool,
}

/// Where a container sits in a session entry, as far as [`parse_for_plan`]
/// cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A top-level array: entries, as prepareCompactionAsync sends them.
    Entries,
    /// An entry: the top-level object, or an element of `Entries`.
    Entry,
    /// `entry.message`.
    Message,
    /// A `content` array of the entry or its message.
    Blocks,
    /// One content block.
    Block,
    /// A message's `details`, which no plan reads, at any depth.
    Unread,
    /// Anything else (tool-call arguments, usage, entry details, ...).
    Other,
}

#[derive(Clone, Copy)]
enum Frame {
    /// Elements so far are `values[start..]`.
    Array { start: usize, place: Place },
    /// Members so far are `members[start..]`; the current key is on `keys`.
    Object { start: usize, place: Place },
}

/// The place of a container opened inside `parent` (under `key` when the
/// parent is an object).
fn place_of(parent: Option<&Frame>, key: Option<&PropName>, object: bool) -> Place {
    let is = |name: &str| key.is_some_and(|k| k.is(name));
    match parent {
        None if object => Place::Entry,
        None => Place::Entries,
        Some(Frame::Object { place, .. }) => match place {
            Place::Entry if object && is("message") => Place::Message,
            Place::Entry | Place::Message if !object && is("content") => Place::Blocks,
            Place::Message if is("details") => Place::Unread,
            Place::Unread => Place::Unread,
            _ => Place::Other,
        },
        Some(Frame::Array { place, .. }) => match place {
            Place::Entries if object => Place::Entry,
            Place::Blocks if object => Place::Block,
            Place::Unread => Place::Unread,
            _ => Place::Other,
        },
    }
}

/// Whether a string value inside `parent` (under `key`) is a text a plan
/// only measures.
fn measurable(parent: Option<&Frame>, key: Option<&PropName>) -> bool {
    let is_one_of = |names: &[&str]| key.is_some_and(|k| names.iter().any(|n| k.is(n)));
    match parent {
        Some(Frame::Object { place, .. }) => match place {
            Place::Entry => is_one_of(&["content"]),
            Place::Message => is_one_of(&["content", "output", "command"]),
            Place::Block => is_one_of(&[
                "text",
                "thinking",
                "thinkingSignature",
                "textSignature",
                "partialJson",
            ]),
            Place::Unread => true,
            _ => false,
        },
        Some(Frame::Array { place, .. }) => *place == Place::Unread,
        None => false,
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The index of the first byte at or after `i` that is `"`, `\` or a control
/// character (< 0x20), or `b.len()`. These are exactly the bytes that end a
/// plain run inside a JSON string, and the bytes `JSON.stringify` escapes.
#[inline]
fn find_special(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        let q = x ^ (LO * u64::from(b'"'));
        let s = x ^ (LO * u64::from(b'\\'));
        // Per byte: high bit set where the byte is zero (q, s) or below 0x20
        // (x). Only bytes above a true hit can be false positives, so the
        // lowest flagged byte is exact.
        let t = ((q.wrapping_sub(LO) & !q)
            | (s.wrapping_sub(LO) & !s)
            | (x.wrapping_sub(LO * 0x20) & !x))
            & HI;
        if t != 0 {
            return i + (t.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return i;
        }
        i += 1;
    }
    i
}

#[inline]
fn hex_val(c: u8) -> Option<u16> {
    match c {
        b'0'..=b'9' => Some(u16::from(c - b'0')),
        b'a'..=b'f' => Some(u16::from(c - b'a' + 10)),
        b'A'..=b'F' => Some(u16::from(c - b'A' + 10)),
        _ => None,
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, plan: bool) -> Parser<'a> {
        Parser {
            src: text,
            b: text.as_bytes(),
            pos: 0,
            scratch: String::new(),
            plan,
        }
    }

    #[inline]
    fn err<T>(&self, offset: usize, message: &'static str) -> Result<T, ParseError> {
        Err(ParseError { offset, message })
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn unexpected<T>(&self) -> Result<T, ParseError> {
        match self.peek() {
            None => self.err(self.pos, "unexpected end of JSON input"),
            Some(_) => self.err(self.pos, "unexpected character"),
        }
    }

    fn parse(mut self, max_depth: usize) -> Result<Value, ParseError> {
        let mut frames: Vec<Frame> = Vec::new();
        let mut values: Vec<Value> = Vec::new();
        let mut members: Vec<(PropName, Value)> = Vec::new();
        let mut keys: Vec<PropName> = Vec::new();

        'value: loop {
            self.skip_ws();
            let Some(c) = self.peek() else {
                return self.unexpected();
            };
            let mut val = match c {
                b'"' => {
                    self.pos += 1;
                    if self.plan && measurable(frames.last(), keys.last()) {
                        self.parse_or_measure_string()?
                    } else {
                        Value::String(self.parse_string()?)
                    }
                }
                b'-' | b'0'..=b'9' => Value::Number(self.parse_number()?),
                b'{' => {
                    if frames.len() >= max_depth {
                        return self.err(self.pos, "too deeply nested");
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Object(Object::new())
                    } else {
                        let place = if self.plan {
                            place_of(frames.last(), keys.last(), true)
                        } else {
                            Place::Other
                        };
                        keys.push(self.parse_key()?);
                        frames.push(Frame::Object {
                            start: members.len(),
                            place,
                        });
                        continue 'value;
                    }
                }
                b'[' => {
                    if frames.len() >= max_depth {
                        return self.err(self.pos, "too deeply nested");
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Value::Array(Vec::new())
                    } else {
                        let place = if self.plan {
                            place_of(frames.last(), keys.last(), false)
                        } else {
                            Place::Other
                        };
                        frames.push(Frame::Array {
                            start: values.len(),
                            place,
                        });
                        continue 'value;
                    }
                }
                b't' => self.literal(b"true", Value::Bool(true))?,
                b'f' => self.literal(b"false", Value::Bool(false))?,
                b'n' => self.literal(b"null", Value::Null)?,
                _ => return self.unexpected(),
            };

            // A value is complete: add it to its container, closing
            // containers as long as their closing bracket follows.
            loop {
                let Some(&frame) = frames.last() else {
                    self.skip_ws();
                    if self.pos < self.b.len() {
                        return self
                            .err(self.pos, "unexpected non-whitespace character after JSON");
                    }
                    return Ok(val);
                };
                match frame {
                    Frame::Array { start, .. } => {
                        values.push(val);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                frames.pop();
                                val = Value::Array(values.drain(start..).collect());
                            }
                            None => return self.unexpected(),
                            Some(_) => return self.err(self.pos, "expected ',' or ']'"),
                        }
                    }
                    Frame::Object { start, .. } => {
                        let key = keys.pop().unwrap_or_default();
                        members.push((key, val));
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                keys.push(self.parse_key()?);
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                frames.pop();
                                let entries: Vec<(PropName, Value)> =
                                    members.drain(start..).collect();
                                val = Value::Object(Object::from_props(entries));
                            }
                            None => return self.unexpected(),
                            Some(_) => return self.err(self.pos, "expected ',' or '}'"),
                        }
                    }
                }
            }
        }
    }

    /// `"key"` then `:`, with whitespace around.
    fn parse_key(&mut self) -> Result<PropName, ParseError> {
        self.skip_ws();
        match self.peek() {
            Some(b'"') => self.pos += 1,
            None => return self.unexpected(),
            Some(_) => return self.err(self.pos, "expected a property name"),
        }
        // A known name without escapes is taken without allocating.
        let start = self.pos;
        let end = find_special(self.b, start);
        let known = match self.b.get(end) {
            Some(b'"') => self.b.get(start..end).and_then(known_index),
            _ => None,
        };
        let key = match known {
            Some(i) => {
                self.pos = end + 1;
                PropName(Name::Known(i))
            }
            None => PropName::new(self.parse_string()?),
        };
        self.skip_ws();
        match self.peek() {
            Some(b':') => self.pos += 1,
            None => return self.unexpected(),
            Some(_) => return self.err(self.pos, "expected ':'"),
        }
        Ok(key)
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, ParseError> {
        for (i, &w) in word.iter().enumerate() {
            if self.b.get(self.pos + i) != Some(&w) {
                self.pos += i;
                return self.unexpected();
            }
        }
        self.pos += word.len();
        Ok(v)
    }

    fn parse_number(&mut self) -> Result<f64, ParseError> {
        let start = self.pos;
        let neg = self.peek() == Some(b'-');
        if neg {
            self.pos += 1;
        }
        let mut mantissa: u64 = 0;
        let mut int_digits = 0usize;
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                int_digits = 1;
            }
            Some(b'1'..=b'9') => {
                while let Some(&c) = self.b.get(self.pos) {
                    if !c.is_ascii_digit() {
                        break;
                    }
                    if int_digits < 19 {
                        mantissa = mantissa * 10 + u64::from(c - b'0');
                    }
                    int_digits += 1;
                    self.pos += 1;
                }
            }
            None => return self.unexpected(),
            Some(_) => return self.err(self.pos, "no number after minus sign"),
        }
        let mut plain_int = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            plain_int = false;
            self.digits("unterminated fractional number")?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            plain_int = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits("exponent part is missing a number")?;
        }
        if plain_int && int_digits <= 15 {
            // Exact: below 2^53. `-0` stays negative zero.
            let v = mantissa as f64;
            return Ok(if neg { -v } else { v });
        }
        // The grammar was checked above, and Rust's float parser rounds
        // correctly (to nearest, ties to even; overflow gives infinity)
        // for any number of digits, as JS requires.
        match self.src.get(start..self.pos).map(str::parse::<f64>) {
            Some(Ok(v)) => Ok(v),
            _ => self.err(start, "invalid number"),
        }
    }

    /// One or more ASCII digits.
    fn digits(&mut self, message: &'static str) -> Result<(), ParseError> {
        let first = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == first {
            if self.pos >= self.b.len() {
                return self.unexpected();
            }
            return self.err(self.pos, message);
        }
        Ok(())
    }

    /// Four hex digits at `at`.
    #[inline]
    fn hex4(&self, at: usize) -> Option<u16> {
        let h = self.b.get(at..at + 4)?;
        let mut v = 0u16;
        for &c in h {
            v = (v << 4) | hex_val(c)?;
        }
        Some(v)
    }

    /// A string value the plan only measures, after its opening quote:
    /// [`Value::Measured`] when it is long, else the string itself.
    fn parse_or_measure_string(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let units = self.measure_string()?;
        if units >= MEASURED_MIN_UNITS {
            return Ok(Value::Measured(units));
        }
        self.pos = start;
        Ok(Value::String(self.parse_string()?))
    }

    /// The UTF-16 length of a string body, after its opening quote, checked
    /// as [`Parser::parse_string`] checks it (same errors) without building
    /// it. The units of the raw span are counted in one pass at the end; each
    /// escape is one unit, so it counts its length in bytes less one (an
    /// escaped pair is two escapes).
    fn measure_string(&mut self) -> Result<usize, ParseError> {
        let start = self.pos;
        let mut escape_extra = 0usize;
        let mut i = find_special(self.b, start);
        loop {
            match self.b.get(i) {
                None => return self.err(i, "unterminated string"),
                Some(b'"') => break,
                Some(b'\\') => match self.b.get(i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                        escape_extra += 1;
                        i += 2;
                    }
                    Some(b'u') => {
                        if self.hex4(i + 2).is_none() {
                            return self.err(i, "bad Unicode escape");
                        }
                        escape_extra += 5;
                        i += 6;
                    }
                    None => return self.err(i + 1, "unterminated string"),
                    Some(_) => return self.err(i + 1, "bad escaped character"),
                },
                Some(_) => return self.err(i, "bad control character in string literal"),
            }
            i = find_special(self.b, i);
        }
        self.pos = i + 1;
        let span = self.b.get(start..i).unwrap_or(&[]);
        Ok(utf16_len_of_utf8(span) - escape_extra)
    }

    /// The body of a string, after its opening quote.
    #[inline]
    fn parse_string(&mut self) -> Result<JsStr, ParseError> {
        let start = self.pos;
        let end = find_special(self.b, start);
        if self.b.get(end) == Some(&b'"') {
            self.pos = end + 1;
            return match self.src.get(start..end) {
                Some(s) => Ok(JsStr::Utf8(Box::from(s))),
                None => self.err(start, "invalid string"),
            };
        }
        self.parse_string_escaped(start, end)
    }

    /// A string with escapes (or an error) from `i` on; `src[start..i]` is
    /// plain text. Builds UTF-8 until a lone surrogate shows up.
    fn parse_string_escaped(&mut self, start: usize, mut i: usize) -> Result<JsStr, ParseError> {
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mut run = start;
        loop {
            match self.src.get(run..i) {
                Some(s) => out.push_str(s),
                None => return self.err(run, "invalid string"),
            }
            match self.b.get(i) {
                None => return self.err(i, "unterminated string"),
                Some(b'"') => {
                    self.pos = i + 1;
                    let s = JsStr::from_str(&out);
                    self.scratch = out;
                    return Ok(s);
                }
                Some(b'\\') => {
                    let simple = match self.b.get(i + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let Some(u) = self.hex4(i + 2) else {
                                return self.err(i, "bad Unicode escape");
                            };
                            i += 6;
                            if is_high_surrogate(u) {
                                let lo = if self.b.get(i) == Some(&b'\\')
                                    && self.b.get(i + 1) == Some(&b'u')
                                {
                                    self.hex4(i + 2).filter(|&l| is_low_surrogate(l))
                                } else {
                                    None
                                };
                                match lo {
                                    Some(lo) => {
                                        let cp = 0x10000
                                            + ((u32::from(u) - 0xD800) << 10)
                                            + (u32::from(lo) - 0xDC00);
                                        out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                                        i += 6;
                                    }
                                    None => return self.parse_string_wtf8(&out, u, i),
                                }
                            } else if is_low_surrogate(u) {
                                return self.parse_string_wtf8(&out, u, i);
                            } else {
                                out.push(char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}'));
                            }
                            run = i;
                            i = find_special(self.b, i);
                            continue;
                        }
                        None => return self.err(i + 1, "unterminated string"),
                        Some(_) => return self.err(i + 1, "bad escaped character"),
                    };
                    out.push(simple);
                    i += 2;
                }
                Some(_) => return self.err(i, "bad control character in string literal"),
            }
            run = i;
            i = find_special(self.b, i);
        }
    }

    /// The rare path: the string holds a lone surrogate `unit`; `prefix` is
    /// the text before it and `i` the position after its escape. Builds
    /// canonical WTF-8: plain runs are copied as they are, and an escaped
    /// pair still becomes one four-byte char.
    fn parse_string_wtf8(
        &mut self,
        prefix: &str,
        unit: u16,
        mut i: usize,
    ) -> Result<JsStr, ParseError> {
        let mut out: Vec<u8> = Vec::with_capacity(prefix.len() + 64);
        out.extend_from_slice(prefix.as_bytes());
        push_surrogate_wtf8(&mut out, unit);
        let mut buf = [0u8; 4];
        loop {
            let next = find_special(self.b, i);
            match self.b.get(i..next) {
                Some(run) => out.extend_from_slice(run),
                None => return self.err(i, "invalid string"),
            }
            i = next;
            match self.b.get(i) {
                None => return self.err(i, "unterminated string"),
                Some(b'"') => {
                    self.pos = i + 1;
                    // Only a lone surrogate escape leads here, and it stays
                    // lone: the result is not well-formed, so no UTF-8 try.
                    return Ok(JsStr::lone_surrogates_wtf8(out));
                }
                Some(b'\\') => {
                    let c = match self.b.get(i + 1) {
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        Some(b'/') => b'/',
                        Some(b'b') => 0x08,
                        Some(b'f') => 0x0C,
                        Some(b'n') => b'\n',
                        Some(b'r') => b'\r',
                        Some(b't') => b'\t',
                        Some(b'u') => {
                            let Some(u) = self.hex4(i + 2) else {
                                return self.err(i, "bad Unicode escape");
                            };
                            i += 6;
                            let low = if is_high_surrogate(u)
                                && self.b.get(i) == Some(&b'\\')
                                && self.b.get(i + 1) == Some(&b'u')
                            {
                                self.hex4(i + 2).filter(|&l| is_low_surrogate(l))
                            } else {
                                None
                            };
                            if let Some(lo) = low {
                                let cp = 0x10000
                                    + ((u32::from(u) - 0xD800) << 10)
                                    + (u32::from(lo) - 0xDC00);
                                let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                                i += 6;
                            } else if is_surrogate(u) {
                                push_surrogate_wtf8(&mut out, u);
                            } else {
                                let ch = char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}');
                                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            }
                            continue;
                        }
                        None => return self.err(i + 1, "unterminated string"),
                        Some(_) => return self.err(i + 1, "bad escaped character"),
                    };
                    out.push(c);
                    i += 2;
                }
                Some(_) => return self.err(i, "bad control character in string literal"),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// Room for any JS number string (the longest is 25 bytes, e.g.
/// `-0.0000022250738585072014`).
struct NumBuf {
    buf: [u8; 40],
    len: usize,
}

impl NumBuf {
    fn new() -> NumBuf {
        NumBuf {
            buf: [0; 40],
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, c: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = c;
            self.len += 1;
        }
    }

    fn push_bytes(&mut self, s: &[u8]) {
        for &c in s {
            self.push(c);
        }
    }

    fn as_str(&self) -> &str {
        // Only ASCII is ever pushed.
        std::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

impl fmt::Write for NumBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.len + s.len() > self.buf.len() {
            return Err(fmt::Error);
        }
        self.push_bytes(s.as_bytes());
        Ok(())
    }
}

/// Writes the decimal digits of `n`.
fn push_u64(out: &mut NumBuf, n: u64) {
    out.push_bytes(decimal_digits(n, &mut [0; 20]));
}

/// The decimal digits of `n`, written at the end of `buf`, with no
/// allocation.
pub(crate) fn decimal_digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// JS `Number.prototype.toString()` into `out`.
fn format_js_number(x: f64, out: &mut NumBuf) {
    if x.is_nan() {
        out.push_bytes(b"NaN");
        return;
    }
    if x == 0.0 {
        out.push(b'0'); // -0 too
        return;
    }
    if x < 0.0 {
        out.push(b'-');
    }
    let a = x.abs();
    if a.is_infinite() {
        out.push_bytes(b"Infinity");
        return;
    }
    if a < 9_007_199_254_740_992.0 && a.fract() == 0.0 {
        // Below 2^53 the shortest round-trip digits of an integer are its
        // exact digits.
        push_u64(out, a as u64);
        return;
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, closest to
    // the exact value: the same digits ES Number::toString picks.
    let mut sci = NumBuf::new();
    if fmt::Write::write_fmt(&mut sci, format_args!("{a:e}")).is_err() {
        out.push_bytes(b"NaN");
        return;
    }
    let sci = sci.as_str();
    let (mant, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits = [0u8; 20];
    let mut k = 0usize;
    for &c in mant.as_bytes() {
        if c.is_ascii_digit() && k < digits.len() {
            digits[k] = c;
            k += 1;
        }
    }
    let k = k as i32;
    let n = exp + 1; // value = 0.d1d2... * 10^n
    let digits = break_tie_to_even(a, &mut digits[..k as usize], n - k);
    if k <= n && n <= 21 {
        out.push_bytes(digits);
        for _ in 0..(n - k) {
            out.push(b'0');
        }
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        out.push_bytes(int);
        out.push(b'.');
        out.push_bytes(frac);
    } else if -6 < n && n <= 0 {
        out.push_bytes(b"0.");
        for _ in 0..(-n) {
            out.push(b'0');
        }
        out.push_bytes(digits);
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_bytes(first);
        if !rest.is_empty() {
            out.push(b'.');
            out.push_bytes(rest);
        }
        out.push(b'e');
        out.push(if n - 1 < 0 { b'-' } else { b'+' });
        push_u64(out, u64::from((n - 1).unsigned_abs()));
    }
}

/// `(v2, v5, rest)` with `m = 2^v2 * 5^v5 * rest`, `rest` coprime to 10.
fn split_2_5(mut m: u64) -> (i64, i64, u64) {
    let (mut v2, mut v5) = (0i64, 0i64);
    if m == 0 {
        return (0, 0, 0);
    }
    while m.is_multiple_of(2) {
        m /= 2;
        v2 += 1;
    }
    while m.is_multiple_of(5) {
        m /= 5;
        v5 += 1;
    }
    (v2, v5, m)
}

/// Whether the finite, positive `x` equals `d * 10^q` exactly.
fn equals_decimal(x: f64, d: u64, q: i64) -> bool {
    let bits = x.to_bits();
    let frac = bits & ((1u64 << 52) - 1);
    let biased = ((bits >> 52) & 0x7FF) as i64;
    let (mant, e2) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    // mant * 2^e2 == d * 2^q * 5^q, compared by prime factorization.
    let (a2, a5, ar) = split_2_5(mant);
    let (b2, b5, br) = split_2_5(d);
    ar == br && ar != 0 && a2 + e2 == b2 + q && a5 == b5 + q
}

/// Rust's shortest digits break an exact tie between two equally short,
/// equally close digit strings upwards; ES `Number::toString` takes the even
/// one (e.g. 746117772767320.25 prints as `746117772767320.2`). `digits`
/// (ASCII, no trailing zeros) times `10^exp10` is the value Rust chose.
fn break_tie_to_even(x: f64, digits: &mut [u8], exp10: i32) -> &[u8] {
    let Some(&last) = digits.last() else {
        return digits;
    };
    if digits.len() > 18 || (last - b'0').is_multiple_of(2) {
        return digits;
    }
    let d = digits
        .iter()
        .fold(0u64, |acc, &c| acc * 10 + u64::from(c.wrapping_sub(b'0')));
    for other in [d - 1, d + 1] {
        // Same length, last digit even (and not 0: then a shorter string
        // would exist, and Rust would have found it).
        if other % 10 == 0 {
            continue;
        }
        let mid = 10 * d.min(other) + 5;
        if !equals_decimal(x, mid, i64::from(exp10) - 1) {
            continue;
        }
        let mut text = NumBuf::new();
        if fmt::Write::write_fmt(&mut text, format_args!("{other}e{exp10}")).is_err() {
            continue;
        }
        if text.as_str().parse::<f64>().ok() == Some(x) {
            // `other` has as many digits as `d` (it ends in 2..=8).
            if let Some(c) = digits.last_mut() {
                *c = b'0' + (other % 10) as u8;
            }
            break;
        }
    }
    digits
}

/// JS `String(n)`: `NaN`, `Infinity`, `-Infinity`, `0` for -0, else the
/// shortest round-trip digits in JS layout (`1e+21`, `1e-7`, `0.000001`,
/// `123456789012345680000`).
pub fn number_to_js_string(n: f64) -> String {
    let mut buf = NumBuf::new();
    format_js_number(n, &mut buf);
    buf.as_str().to_owned()
}

// ---------------------------------------------------------------------------
// Stringify
// ---------------------------------------------------------------------------

trait Sink {
    fn raw(&mut self, s: &str);
    fn string(&mut self, s: &JsStr);
    fn number(&mut self, n: f64) {
        if n.is_finite() {
            let mut buf = NumBuf::new();
            format_js_number(n, &mut buf);
            self.raw(buf.as_str());
        } else {
            self.raw("null");
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The short escape of an ASCII byte, if it has one.
#[inline]
fn short_escape(c: u8) -> Option<&'static str> {
    match c {
        b'"' => Some("\\\""),
        b'\\' => Some("\\\\"),
        0x08 => Some("\\b"),
        0x0C => Some("\\f"),
        b'\n' => Some("\\n"),
        b'\r' => Some("\\r"),
        b'\t' => Some("\\t"),
        _ => None,
    }
}

fn push_u_escape(out: &mut String, u: u16) {
    out.push_str("\\u");
    for shift in [12u16, 8, 4, 0] {
        out.push(char::from(HEX[usize::from((u >> shift) & 0xF)]));
    }
}

struct StringSink(String);

impl Sink for StringSink {
    #[inline]
    fn raw(&mut self, s: &str) {
        self.0.push_str(s);
    }

    fn string(&mut self, s: &JsStr) {
        let out = &mut self.0;
        out.push('"');
        match s {
            JsStr::Utf8(s) => push_escaped(out, s),
            JsStr::Wtf8(_) => {
                for piece in s.pieces() {
                    match piece {
                        Wtf8Piece::Str(s) => push_escaped(out, s),
                        // JSON.stringify escapes a lone surrogate.
                        Wtf8Piece::Unit(u) => push_u_escape(out, u),
                    }
                }
            }
        }
        out.push('"');
    }
}

/// Appends well-formed `s` as JSON.stringify writes it between quotes.
fn push_escaped(out: &mut String, s: &str) {
    let b = s.as_bytes();
    let mut run = 0;
    loop {
        let i = find_special(b, run);
        out.push_str(s.get(run..i).unwrap_or(""));
        let Some(&c) = b.get(i) else { break };
        match short_escape(c) {
            Some(e) => out.push_str(e),
            None => push_u_escape(out, u16::from(c)),
        }
        run = i + 1;
    }
}

struct LenSink(usize);

impl Sink for LenSink {
    #[inline]
    fn raw(&mut self, s: &str) {
        // Only ASCII (punctuation, literals, numbers) comes here.
        self.0 += s.len();
    }

    fn string(&mut self, s: &JsStr) {
        self.0 += quoted_len(s);
    }
}

/// The UTF-16 length of `JSON.stringify(s)` for a string `s`.
pub fn quoted_len(s: &JsStr) -> usize {
    match s {
        JsStr::Utf8(s) => 2 + escaped_len(s),
        JsStr::Wtf8(_) => {
            2 + s
                .pieces()
                .map(|piece| match piece {
                    Wtf8Piece::Str(s) => escaped_len(s),
                    Wtf8Piece::Unit(_) => 6,
                })
                .sum::<usize>()
        }
    }
}

/// The UTF-16 length of well-formed `s` as JSON.stringify escapes it.
fn escaped_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut n = utf16_len_of_str(s);
    let mut i = find_special(b, 0);
    while let Some(&c) = b.get(i) {
        n += if short_escape(c).is_some() { 1 } else { 5 };
        i = find_special(b, i + 1);
    }
    n
}

enum WalkFrame<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(std::slice::Iter<'a, (PropName, Value)>),
}

/// Emits `v` depth-first with an explicit stack.
fn walk<S: Sink>(v: &Value, sink: &mut S) {
    let mut stack: Vec<WalkFrame<'_>> = Vec::new();
    let mut cur = v;
    loop {
        match cur {
            Value::Null => sink.raw("null"),
            Value::Bool(true) => sink.raw("true"),
            Value::Bool(false) => sink.raw("false"),
            Value::Number(n) => sink.number(*n),
            Value::String(s) => sink.string(s),
            Value::Measured(_) => {
                // Only texts of planning trees are measured, and a plan
                // stringifies tool-call arguments alone (tested).
                debug_assert!(false, "JSON.stringify of a measured text");
                sink.raw("null");
            }
            Value::Array(items) => {
                sink.raw("[");
                let mut it = items.iter();
                if let Some(first) = it.next() {
                    stack.push(WalkFrame::Array(it));
                    cur = first;
                    continue;
                }
                sink.raw("]");
            }
            Value::Object(o) => {
                sink.raw("{");
                let mut it = o.entries.iter();
                if let Some((k, first)) = it.next() {
                    sink.string(k);
                    sink.raw(":");
                    stack.push(WalkFrame::Object(it));
                    cur = first;
                    continue;
                }
                sink.raw("}");
            }
        }
        // `cur` is done: move to the next sibling, closing finished containers.
        loop {
            match stack.last_mut() {
                None => return,
                Some(WalkFrame::Array(it)) => match it.next() {
                    Some(next) => {
                        sink.raw(",");
                        cur = next;
                        break;
                    }
                    None => {
                        sink.raw("]");
                        stack.pop();
                    }
                },
                Some(WalkFrame::Object(it)) => match it.next() {
                    Some((k, next)) => {
                        sink.raw(",");
                        sink.string(k);
                        sink.raw(":");
                        cur = next;
                        break;
                    }
                    None => {
                        sink.raw("}");
                        stack.pop();
                    }
                },
            }
        }
    }
}

/// `JSON.stringify(v)`. The result is always well-formed (so always
/// [`JsStr::Utf8`]).
pub fn stringify(v: &Value) -> JsStr {
    JsStr::from_string(stringify_to_string(v))
}

/// `JSON.stringify(v)` as a Rust string.
pub fn stringify_to_string(v: &Value) -> String {
    let mut out = String::new();
    stringify_into(v, &mut out);
    out
}

/// Appends `JSON.stringify(v)` to `out`.
pub fn stringify_into(v: &Value, out: &mut String) {
    let mut sink = StringSink(std::mem::take(out));
    walk(v, &mut sink);
    *out = sink.0;
}

/// `JSON.stringify(v).length` (UTF-16 code units), without building it.
pub fn stringify_len(v: &Value) -> usize {
    let mut sink = LenSink(0);
    walk(v, &mut sink);
    sink.0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn known_property_names_behave_like_any_other() {
        // Known names, escaped spellings of them, and unknown names mix.
        let v = parse(r#"{"type":1,"zz":2,"typ\u0065":3,"id":"a","\u0069d":"b"}"#).unwrap();
        let Value::Object(o) = &v else { panic!() };
        // JSON.parse: a repeated key keeps its first place and its last value.
        assert_eq!(stringify_to_string(&v), r#"{"type":3,"zz":2,"id":"b"}"#);
        assert_eq!(o.get("type"), Some(&Value::Number(3.0)));
        assert_eq!(o.get_js(&JsStr::from_str("zz")), Some(&Value::Number(2.0)));
        assert_eq!(
            o.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
            ["type", "zz", "id"]
        );
        assert_eq!(
            format!("{v:?}"),
            r#"Object({"type": Number(3.0), "zz": Number(2.0), "id": String("a")})"#
                .replace("\"a\"", "\"b\"")
        );
        // Built objects and parsed ones compare equal whatever the spelling.
        let built: Object = [
            ("type", Value::Number(3.0)),
            ("zz", Value::Number(2.0)),
            ("id", Value::String("b".into())),
        ]
        .into_iter()
        .collect();
        assert_eq!(v, Value::Object(built.clone()));
        let mut edited = built;
        assert_eq!(edited.insert("type", Value::Null), Some(Value::Number(3.0)));
        assert_eq!(edited.remove("id"), Some(Value::String("b".into())));
        assert_eq!(
            stringify_to_string(&Value::Object(edited.clone())),
            r#"{"type":null,"zz":2}"#
        );
        assert_eq!(
            edited
                .into_entries()
                .into_iter()
                .map(|(k, _)| k)
                .collect::<Vec<_>>(),
            [JsStr::from_str("type"), JsStr::from_str("zz")]
        );
        // Every known name is found as itself and only as itself.
        for (i, name) in KNOWN_NAMES.iter().enumerate() {
            assert_eq!(known_index(name.as_bytes()), Some(i as u8));
            assert!(known_names()[i].eq_str(name));
        }
        assert_eq!(known_index(b"types"), None);
    }

    fn rt(text: &str) -> String {
        match parse(text) {
            Ok(v) => {
                let s = stringify_to_string(&v);
                assert_eq!(stringify_len(&v), s.encode_utf16().count(), "len of {s}");
                s
            }
            Err(e) => format!("ERR {e}"),
        }
    }

    #[test]
    fn basics() {
        assert_eq!(
            rt(" {\"a\" : [1, 2.5, true, false, null, \"x\"]}\n"),
            r#"{"a":[1,2.5,true,false,null,"x"]}"#
        );
        assert_eq!(rt("[]"), "[]");
        assert_eq!(rt("{}"), "{}");
        assert_eq!(rt("[[],{},[{}]]"), "[[],{},[{}]]");
        assert_eq!(rt("\"\""), "\"\"");
        assert_eq!(rt("0"), "0");
        assert_eq!(rt("-0"), "0");
        assert!(parse("-0")
            .ok()
            .and_then(|v| v.as_f64())
            .is_some_and(|n| n == 0.0 && n.is_sign_negative()));
    }

    // Generated from node v20.20.2: [input, JSON.stringify(JSON.parse(input)) or None if it throws].
    const PARSE_CASES: &[(&str, Option<&str>)] = &[
        ("{\"a\":1,\"b\":2,\"a\":3}", Some("{\"a\":3,\"b\":2}")),
        ("{\"b\":1,\"2\":2,\"1\":3,\"a\":4,\"1\":5}", Some("{\"1\":5,\"2\":2,\"b\":1,\"a\":4}")),
        ("{\"4294967294\":1,\"4294967295\":2,\"01\":3,\"0\":4,\"-0\":5,\"1.0\":6,\"10\":7,\"9\":8}", Some("{\"0\":4,\"9\":8,\"10\":7,\"4294967294\":1,\"4294967295\":2,\"01\":3,\"-0\":5,\"1.0\":6}")),
        ("{\"__proto__\":1,\"constructor\":2,\"\":3}", Some("{\"__proto__\":1,\"constructor\":2,\"\":3}")),
        ("{\"a\":{\"x\":1,\"x\":{\"y\":2}},\"a\":[1]}", Some("{\"a\":[1]}")),
        ("\"\\ud83d\"", Some("\"\\ud83d\"")),
        ("\"\\uD83D\\uDE00\"", Some("\"\u{1f600}\"")),
        ("\"\\uDE00\\uD83D\"", Some("\"\\ude00\\ud83d\"")),
        ("\"\\ud83dx\"", Some("\"\\ud83dx\"")),
        ("\"\\ud83d\\u0041\"", Some("\"\\ud83dA\"")),
        ("\"\\ud83d\\ud83d\\ude00\"", Some("\"\\ud83d\u{1f600}\"")),
        ("\"a\\udc00\"", Some("\"a\\udc00\"")),
        ("\"\\uDBFF\\uDFFF\"", Some("\"\u{10ffff}\"")),
        ("\"\\ud800\\\\\"", Some("\"\\ud800\\\\\"")),
        ("\"\\u2028\\u2029\\u007f\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\u0001\\\"\\\\\"", Some("\"\u{2028}\u{2029}\u{7f}/\\b\\f\\n\\r\\t\\u0000\\u001f\\u0001\\\"\\\\\"")),
        ("\"\\u00e9\\u00E9\u{e9}\u{1f600}\u{2028}\u{ad}\u{feff}\"", Some("\"\u{e9}\u{e9}\u{e9}\u{1f600}\u{2028}\u{ad}\u{feff}\"")),
        ("\"\\u0041\\u00410\"", Some("\"AA0\"")),
        ("1e400", Some("null")),
        ("-1e400", Some("null")),
        ("-0", Some("0")),
        ("-0.0e-5", Some("0")),
        ("0.1", Some("0.1")),
        ("1e21", Some("1e+21")),
        ("1e20", Some("100000000000000000000")),
        ("1e-7", Some("1e-7")),
        ("1e-6", Some("0.000001")),
        ("123456789012345678901", Some("123456789012345680000")),
        ("123456789012345680000", Some("123456789012345680000")),
        ("5e-324", Some("5e-324")),
        ("2.4703282292062327e-324", Some("0")),
        ("2.4703282292062328e-324", Some("5e-324")),
        ("1.7976931348623157e308", Some("1.7976931348623157e+308")),
        ("1.7976931348623158e308", Some("1.7976931348623157e+308")),
        ("1.7976931348623159e308", Some("null")),
        ("0.000001", Some("0.000001")),
        ("0.0000001", Some("1e-7")),
        ("123e-20", Some("1.23e-18")),
        ("1E+2", Some("100")),
        ("1e0", Some("1")),
        ("4.35", Some("4.35")),
        ("0.1e1", Some("1")),
        ("100", Some("100")),
        ("-1.5E-7", Some("-1.5e-7")),
        ("9007199254740993", Some("9007199254740992")),
        ("9007199254740995", Some("9007199254740996")),
        ("18446744073709551616", Some("18446744073709552000")),
        ("1234567890123456789", Some("1234567890123456800")),
        ("0.30000000000000004", Some("0.30000000000000004")),
        ("2.1e-5", Some("0.000021")),
        ("746117772767320.25", Some("746117772767320.2")),
        ("88095065791704.625", Some("88095065791704.62")),
        ("1.5e300", Some("1.5e+300")),
        ("-1e-7", Some("-1e-7")),
        ("999999999999999999999", Some("1e+21")),
        ("1e+21", Some("1e+21")),
        ("12345678901234567e5", Some("1.2345678901234568e+21")),
        ("", None),
        (" ", None),
        ("01", None),
        ("-", None),
        ("--1", None),
        ("1.", None),
        (".5", None),
        ("+1", None),
        ("1e", None),
        ("1e+", None),
        ("1.e5", None),
        ("NaN", None),
        ("Infinity", None),
        ("-Infinity", None),
        ("tru", None),
        ("nulll", None),
        ("True", None),
        ("[1,]", None),
        ("[,1]", None),
        ("{\"a\":1,}", None),
        ("{,}", None),
        ("[1 2]", None),
        ("{\"a\" 1}", None),
        ("{a:1}", None),
        ("'a'", None),
        ("\"\\x\"", None),
        ("\"\\u12\"", None),
        ("\"\\u12\"x", None),
        ("\"\u{9}\"", None),
        ("\"a", None),
        ("\"\\", None),
        ("[", None),
        ("{", None),
        ("{\"a\"", None),
        ("{\"a\":", None),
        ("\u{a0}1", None),
        ("\u{feff}1", None),
        ("1 2", None),
        ("{\"a\":1}}", None),
        ("\"\\uZZZZ\"", None),
        ("[1]\u{2028}", None),
        ("\u{b}1", None),
        ("\u{c}1", None),
        ("[1]\u{0}", None),
        ("\"\u{7f}\"", Some("\"\u{7f}\"")),
        ("\"\\U0041\"", None),
        ("\"\\/\"", Some("\"/\"")),
        (" \u{9}\u{d}\u{a}[ 1 , 2 ,{ \"a\" : [ ] } ] \u{a}", Some("[1,2,{\"a\":[]}]")),
        ("[[],[[]],{},{\"\":{}}]", Some("[[],[[]],{},{\"\":{}}]")),
        ("true", Some("true")),
        ("false", Some("false")),
        ("null", Some("null")),
        ("[true,false,null]", Some("[true,false,null]")),
    ];
    // Generated from node: [f64 bits, String(x)].
    const NUMBER_CASES: &[(u64, &str)] = &[
        (0x00000000_00000000, "0"),
        (0x80000000_00000000, "0"),
        (0x7ff80000_00000000, "NaN"),
        (0x7ff00000_00000000, "Infinity"),
        (0xfff00000_00000000, "-Infinity"),
        (0x3ff00000_00000000, "1"),
        (0xbff00000_00000000, "-1"),
        (0x3fb99999_9999999a, "0.1"),
        (0x3fd33333_33333334, "0.30000000000000004"),
        (0x444b1ae4_d6e2ef50, "1e+21"),
        (0x4415af1d_78b58c40, "100000000000000000000"),
        (0x441ac53a_7e04bcda, "123456789012345680000"),
        (0x3e7ad7f2_9abcaf48, "1e-7"),
        (0x3eb0c6f7_a0b5ed8d, "0.000001"),
        (0x3e8421f5_f40d8376, "1.5e-7"),
        (0x3ef60525_02eec7c9, "0.000021"),
        (0x00000000_00000001, "5e-324"),
        (0x80000000_00000001, "-5e-324"),
        (0x00100000_00000000, "2.2250738585072014e-308"),
        (0x7fefffff_ffffffff, "1.7976931348623157e+308"),
        (0x43400000_00000000, "9007199254740992"),
        (0x433fffff_ffffffff, "9007199254740991"),
        (0x43400000_00000001, "9007199254740994"),
        (0x43f00000_00000000, "18446744073709552000"),
        (0x44500000_00000000, "1.1805916207174113e+21"),
        (0x40116666_66666666, "4.35"),
        (0x3eb0c6f7_a0b5ed8d, "0.000001"),
        (0x54b249ad_2594c37d, "1e+100"),
        (0x2b30cc4f_55eecfea, "1.2e-100"),
        (0x430534b8_a67382c2, "746117772767320.2"),
        (0x42d407ce_c6973628, "88095065791704.62"),
        (0x4316d873_b98ffa99, "1607610258423462.2"),
        (0x3fe00000_00000000, "0.5"),
        (0x40040000_00000000, "2.5"),
        (0x430c6bf5_26340002, "1000000000000000.2"),
        (0x405edd2f_1a9fbe77, "123.456"),
        (0xc1cd6f34_58900000, "-987654321.125"),
        (0x3fd55555_55555555, "0.3333333333333333"),
        (0x3fe55555_55555555, "0.6666666666666666"),
        (0x400921fb_54442d18, "3.141592653589793"),
        (0x4005bf0a_8b145769, "2.718281828459045"),
        (0x043c7ad3_05391c44, "2.922407875466816e-288"),
        (0xa289127d_8b0c4216, "-2.5700702264691628e-142"),
        (0x1cca49b7_e8f7b1b8, "5.441885314923243e-170"),
        (0x8c609701_7ef29baa, "-4.634218299048455e-249"),
        (0xc89034db_989a046c, "-3.529457878180234e+41"),
        (0xbe69c1c5_0a33e47e, "-4.7975988759796946e-8"),
        (0x12dbe03f_f73f4860, "7.896838032215279e-218"),
        (0x75d5d6c9_b3197092, "4.197293416361744e+259"),
        (0xf5a32fe3_657ff194, "-4.609510478695963e+258"),
        (0xf3e85a0d_67f7d3e6, "-2.1793997409746303e+250"),
        (0xa9e847c7_fe61b408, "-8.270795884884237e-107"),
        (0x7ffb0f91_6c42e27a, "NaN"),
        (0x6c5d8beb_498b83bc, "9.946810591687933e+213"),
        (0x27c1fb55_ace1b04e, "3.5653673242685946e-117"),
        (0xda49a04f_16b994b0, "-8.67346276445751e+126"),
        (0x01cf6159_4fc29162, "5.8572126860834134e-300"),
        (0x4aab68f3_76715ae4, "5.1276427068167376e+51"),
        (0xf657c59d_92af19b6, "-1.1696092397070362e+262"),
        (0xc79e09d7_03f58a58, "-9.981982894253659e+36"),
        (0x5235ec21_4d601d4a, "1.0902510538955631e+88"),
        (0x8bfce6fb_f47a170c, "-6.3074782187651754e-251"),
        (0xa82ed8e5_aad1b01e, "-3.9144268810263544e-115"),
        (0x2947a45f_9f983500, "7.864612861047797e-110"),
        (0xc475cfe9_edd72632, "-6.437814283066237e+21"),
        (0xb9c62603_75025834, "-2.184009758551456e-30"),
        (0xb670552d_54ef1386, "-1.7880484061902492e-46"),
        (0xc2ec8fe7_937834a8, "-251235128820133.25"),
        (0x34ba2cb1_71574c1a, "1.0674820033458821e-54"),
        (0xabff460b_74fabe5c, "-9.150808207537867e-97"),
        (0xdf695a75_8560e3ee, "-4.1495718259828804e+151"),
        (0xecf6ec6f_64402950, "-7.902404167368642e+216"),
        (0x24922279_be042f02, "1.5968038715082207e-132"),
        (0x59a46713_af67e984, "6.743644837975347e+123"),
        (0xcb0b08bd_5bb4c156, "-3.236695159903791e+53"),
        (0x2d14d9f7_cbeeb2f8, "1.5994008550031384e-91"),
        (0x6770d141_1e756eea, "1.8732516681200314e+190"),
        (0xb935a91b_dfe279ac, "-4.1716762681367726e-33"),
        (0x3f6a8005_892c4bbe, "0.0032348735925409036"),
        (0xdeb8787f_645671a0, "-1.955618637861919e+148"),
        (0x5f2d5909_d036abd2, "3.0020885152720095e+150"),
        (0x430aa2e1_da9626e5, "937180039136476.6"),
        (0x42bca81c_09b433c0, "31508350481459.75"),
        (0x429891e1_6eb220b6, "6753707863176.178"),
        (0x42a8b110_2b9e10e0, "13574379785992.438"),
        (0x425cc00d_f0942d48, "493924893264.7075"),
        (0x42479073_9946c4c8, "202415485581.53735"),
        (0x432760a7_1ecc0d5b, "3290097678419629.5"),
        (0x42c20dae_85f866a4, "39699943780557.28"),
        (0x4288cf65_8996f84f, "3409880101599.0386"),
        (0x42b79c96_e4baf43f, "25961313909492.246"),
        (0x428b5000_b973a238, "3753802935924.2773"),
        (0x427a3f21_21d6e500, "1803652570478.3125"),
        (0x430fff64_bd001e4a, "1125816551343049.2"),
        (0x4266745b_c5685880, "771531615042.7656"),
        (0x42e05b37_65dd31f9, "143871659927951.78"),
        (0x42837d2d_2bd5bc36, "2678543710903.5264"),
        (0x430ce5fe_d885ea92, "1016772758125906.2"),
        (0x42f347e7_dfad6e5e, "339192860825317.9"),
        (0x42ef46f0_4558a6e9, "275116313986359.28"),
        (0x430ccad7_56deadfc, "1013040696513983.5"),
    ];

    #[test]
    fn parse_and_stringify_match_node() {
        for &(input, want) in PARSE_CASES {
            match (parse(input), want) {
                (Ok(v), Some(want)) => {
                    let got = stringify_to_string(&v);
                    assert_eq!(got, want, "input {input:?}");
                    assert_eq!(stringify(&v).as_str(), Some(want));
                    assert_eq!(
                        stringify_len(&v),
                        want.encode_utf16().count(),
                        "len for {input:?}"
                    );
                    // Node's output parses back to itself.
                    assert_eq!(rt(want), want);
                }
                (Err(_), None) => {}
                (Ok(v), None) => panic!("accepted {input:?} as {}", stringify_to_string(&v)),
                (Err(e), Some(_)) => panic!("rejected {input:?}: {e}"),
            }
        }
    }

    #[test]
    fn number_to_string_matches_node() {
        for &(bits, want) in NUMBER_CASES {
            let x = f64::from_bits(bits);
            assert_eq!(number_to_js_string(x), want, "bits {bits:#x}");
            if x.is_finite() && x != 0.0 {
                // String(x) parses back to x.
                assert_eq!(
                    parse(want).ok().and_then(|v| v.as_f64()).map(f64::to_bits),
                    Some(bits)
                );
            }
        }
        assert_eq!(number_to_js_string(-0.0), "0");
        assert_eq!(number_to_js_string(f64::NAN), "NaN");
        assert_eq!(number_to_js_string(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(number_to_js_string(1e21), "1e+21");
        assert_eq!(number_to_js_string(-1e-7), "-1e-7");
    }

    #[test]
    fn stringify_constructed_values() {
        let mut o = Object::new();
        o.insert("nan", Value::Number(f64::NAN));
        o.insert("inf", Value::Number(f64::INFINITY));
        o.insert("negzero", Value::Number(-0.0));
        o.insert(JsStr::from_utf16(&[0xD800]), Value::from("\u{1}\u{2028}/"));
        o.insert(
            "arr",
            Value::Array(vec![
                Value::Null,
                true.into(),
                1.5.into(),
                Value::Array(vec![]),
            ]),
        );
        o.insert("emptyobj", Value::Object(Object::new()));
        let v = Value::Object(o);
        // Node: JSON.stringify({nan:NaN,inf:Infinity,negzero:-0,"\ud800":"\x01\u2028/",arr:[null,true,1.5,[]],emptyobj:{}})
        let want = "{\"nan\":null,\"inf\":null,\"negzero\":0,\"\\ud800\":\"\\u0001\u{2028}/\",\"arr\":[null,true,1.5,[]],\"emptyobj\":{}}";
        assert_eq!(stringify_to_string(&v), want);
        assert_eq!(stringify_len(&v), want.encode_utf16().count());
        assert_eq!(v.json_len(), 94); // node: .length
        assert_eq!(stringify_len(&Value::from("😀")), 4);
        assert_eq!(
            stringify_len(&Value::String(JsStr::from_utf16(&[0xDE00, 0x22]))),
            10
        );
        let mut s = String::from("x=");
        stringify_into(&Value::Bool(false), &mut s);
        assert_eq!(s, "x=false");
    }

    #[test]
    fn lone_surrogates_survive_parse() {
        let v = parse(r#"{"k\ud83d":"\udc00a\ud83d\ude00"}"#).expect("valid");
        let o = v.as_object().expect("object");
        let (k, val) = &o.entries()[0];
        assert_eq!(k.to_utf16(), vec![0x6B, 0xD83D]);
        let s = val.as_js_str().expect("string");
        assert!(matches!(s, JsStr::Wtf8(_)));
        assert_eq!(s.to_utf16(), vec![0xDC00, 0x61, 0xD83D, 0xDE00]);
        assert_eq!(s.utf16_len(), 4);
        assert!(o.get_js(k).is_some());
        assert!(val.as_str().is_none());
        // Escaped pairs become plain UTF-8.
        let v = parse(r#""\ud83d\ude00\u0041""#).expect("valid");
        assert_eq!(v.as_str(), Some("😀A"));
    }

    #[test]
    fn lone_surrogate_strings_parse_to_canonical_wtf8() {
        // After a lone surrogate, escaped pairs still join, runs are copied,
        // and the result equals the same units built any other way.
        let cases: [(&str, &[u16]); 5] = [
            (
                r#""\ud83dx\ud83d\ude00y""#,
                &[0xD83D, 0x78, 0xD83D, 0xDE00, 0x79],
            ),
            (
                r#""é\udc00日\n\u0041\"""#,
                &[0xE9, 0xDC00, 0x65E5, 0x0A, 0x41, 0x22],
            ),
            (r#""\ud83d\ud83d\ude00""#, &[0xD83D, 0xD83D, 0xDE00]),
            (r#""\ude00\ud83d""#, &[0xDE00, 0xD83D]),
            (r#""a😀\udbff""#, &[0x61, 0xD83D, 0xDE00, 0xDBFF]),
        ];
        for (text, units) in cases {
            let v = parse(text).expect("valid");
            let s = v.as_js_str().expect("string");
            assert_eq!(s.to_utf16(), units, "{text}");
            assert_eq!(*s, JsStr::from_utf16(units));
            // Round trip through stringify, and the length it predicts.
            let out = stringify(&v);
            assert_eq!(parse(out.as_str().expect("well-formed")).expect("valid"), v);
            assert_eq!(stringify_len(&v), out.utf16_len(), "{text}");
        }
        assert_eq!(
            stringify(&parse(r#""\ud83dé""#).expect("valid")),
            r#""\ud83dé""#
        );
    }

    #[test]
    fn the_planning_parse_measures_long_message_texts_only() {
        let long = "é".repeat(300);
        let short = "x".repeat(MEASURED_MIN_UNITS - 1);
        let line = format!(
            r#"{{"type":"message","id":"{long}","content":"{long}","summary":"{long}",
            "details":{{"diff":"{long}"}},
            "message":{{"role":"user","content":"{long}","output":"{long}","command":"{short}",
              "errorMessage":"{long}","details":{{"diff":["{long}"],"n":{{"x":"{long}"}}}},
              "blocks":[{{"text":"{long}"}}]}},
            "more":{{"content":[{{"text":"{long}"}}]}}}}"#
        );
        let v = parse_for_plan(&line).expect("valid");
        let at = |path: &[&str]| -> &Value {
            path.iter().fold(&v, |v, k| match k.parse::<usize>() {
                Ok(i) => v.at(i).expect("element"),
                Err(_) => v.get(k).expect("member"),
            })
        };
        // Two measured texts are never equal (their content is unknown).
        let measured = |v: &Value| matches!(v, Value::Measured(300));
        assert!(measured(at(&["content"])));
        assert!(measured(at(&["message", "content"])));
        assert!(measured(at(&["message", "output"])));
        assert!(measured(at(&["message", "details", "diff", "0"])));
        assert!(measured(at(&["message", "details", "n", "x"])));
        // Kept: ids, summaries, entry details, short texts, error messages,
        // and anything outside the known places.
        let kept = Value::String(JsStr::from_str(&long));
        for path in [
            &["id"][..],
            &["summary"],
            &["details", "diff"],
            &["message", "errorMessage"],
            &["message", "blocks", "0", "text"],
            &["more", "content", "0", "text"],
        ] {
            assert_eq!(at(path), &kept, "{path:?}");
        }
        assert_eq!(
            at(&["message", "command"]),
            &Value::String(JsStr::from_str(&short))
        );
        // Content blocks, and tool-call arguments kept whole.
        let blocks = format!(
            r#"{{"message":{{"content":[{{"type":"thinking","thinking":"{long}","thinkingSignature":"{long}"}},
            {{"type":"toolCall","arguments":{{"content":"{long}","text":"{long}"}},"partialJson":"{long}"}}]}}}}"#
        );
        let v = parse_for_plan(&blocks).expect("valid");
        let block = |i: usize, k: &str| {
            v.get("message")
                .and_then(|m| m.get("content"))
                .and_then(|c| c.at(i))
                .and_then(|b| b.get(k))
                .cloned()
        };
        assert!(block(0, "thinking").is_some_and(|v| measured(&v)));
        assert!(block(0, "thinkingSignature").is_some_and(|v| measured(&v)));
        assert!(block(1, "partialJson").is_some_and(|v| measured(&v)));
        let args = block(1, "arguments").expect("arguments");
        assert_eq!(args.get("content"), Some(&kept));
        assert_eq!(args.get("text"), Some(&kept));
        // prepareCompactionAsync's slices: arrays of entries.
        let array = format!(r#"[{{"content":"{long}"}},{{"message":{{"output":"{long}"}}}}]"#);
        let v = parse_for_plan(&array).expect("valid");
        assert!(v.at(0).and_then(|e| e.get("content")).is_some_and(measured));
        assert!(v
            .at(1)
            .and_then(|e| e.get("message"))
            .and_then(|m| m.get("output"))
            .is_some_and(measured));
        // Escapes are one unit each, a pair two; the length is the JS length.
        let escaped = format!(
            r#"{{"content":"{}\n\u0041\ud83d\ude00\ud83d"}}"#,
            "a".repeat(300)
        );
        let v = parse_for_plan(&escaped).expect("valid");
        assert!(matches!(v.get("content"), Some(Value::Measured(305))));
        // The same errors as the full parse, at the same offsets.
        for bad in [
            r#"{"content":"abc\x"}"#,
            r#"{"content":"ab\u12G4"}"#,
            "{\"content\":\"a\u{1}\"}",
            r#"{"content":"abc"#,
        ] {
            let bad = bad.replace("abc", &"abc".repeat(100));
            assert_eq!(
                parse_for_plan(&bad).unwrap_err(),
                parse(&bad).unwrap_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn object_semantics() {
        let v = parse(r#"{"b":1,"a":2,"b":3,"1":4,"0":5}"#).expect("valid");
        let o = v.as_object().expect("object");
        let keys: Vec<String> = o.keys().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["0", "1", "b", "a"]);
        assert_eq!(o.get("b"), Some(&Value::Number(3.0)));
        assert_eq!(v.get("a").and_then(Value::as_f64), Some(2.0));
        assert_eq!(v.get("zz"), None);
        assert_eq!(v.at(0), None);

        let mut o = Object::new();
        o.insert("x", 1.into());
        o.insert("5", 2.into());
        o.insert("y", 3.into());
        o.insert("2", 4.into());
        o.insert("4294967295", 5.into());
        assert_eq!(o.insert("x", 6.into()), Some(Value::Number(1.0)));
        let keys: Vec<String> = o.keys().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["2", "5", "x", "y", "4294967295"]);
        assert_eq!(o.remove("5"), Some(Value::Number(2.0)));
        assert_eq!(o.remove("5"), None);
        assert_eq!(o.len(), 4);
        assert!(o.contains_key("y"));
        if let Some(v) = o.get_mut("y") {
            *v = Value::Null;
        }
        assert_eq!(
            stringify_to_string(&Value::Object(o)),
            r#"{"2":4,"x":6,"y":null,"4294967295":5}"#
        );

        // Many keys take the hashed duplicate check.
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{}\":{i},", i % 30));
        }
        text.push_str("\"z\":0}");
        let v = parse(&text).expect("valid");
        let o = v.as_object().expect("object");
        assert_eq!(o.len(), 31);
        assert_eq!(o.get("k5").and_then(Value::as_f64), Some(35.0));
        assert_eq!(o.entries()[5].0, "k5");

        let collected: Object = vec![("b", Value::Null), ("0", Value::Null), ("b", true.into())]
            .into_iter()
            .collect();
        assert_eq!(
            stringify_to_string(&Value::Object(collected)),
            r#"{"0":null,"b":true}"#
        );
    }

    #[test]
    fn errors_carry_offsets() {
        let e = parse("[1, 2,]").expect_err("trailing comma");
        assert_eq!(e.offset, 6);
        let e = parse("{\"a\":1} x").expect_err("trailing text");
        assert_eq!(e.offset, 8);
        let e = parse("\"abc").expect_err("unterminated");
        assert_eq!(e.offset, 4);
        let e = parse("\"a\\u0001\x01\"").expect_err("raw control");
        assert_eq!(e.offset, 8);
        assert_eq!(
            e.to_string(),
            "bad control character in string literal at byte 8"
        );
        let e = parse_bytes(b"[\"\xff\"]").expect_err("bad utf-8");
        assert_eq!((e.offset, e.message), (2, "invalid UTF-8"));
        assert_eq!(
            parse_bytes(b" [1] ").ok(),
            Some(Value::Array(vec![Value::Number(1.0)]))
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let pieces: [&[u8]; 20] = [
            b"[",
            b"]",
            b"{",
            b"}",
            b":",
            b",",
            b"\"",
            b"\\",
            b"\\u",
            b"d83d",
            b"0",
            b"-",
            b".",
            b"e",
            b"1",
            b"true",
            b" ",
            b"\xff",
            b"\xf0\x9f\x98\x80",
            b"\x01",
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut buf = Vec::new();
            let mut y = x;
            for _ in 0..(x % 24) {
                buf.extend_from_slice(pieces[(y % 20) as usize]);
                y /= 20;
                if y == 0 {
                    y = x.rotate_left(17);
                }
            }
            if let Ok(v) = parse_bytes(&buf) {
                let s = stringify_to_string(&v);
                assert_eq!(stringify_len(&v), s.encode_utf16().count());
            }
        }
    }

    #[test]
    fn deep_nesting_limit_is_stack_safe() {
        // The recursive `Drop` of a value at the depth limit needs about
        // 1.25 MiB in a debug build; give it the stack node's threads have.
        let t = std::thread::Builder::new()
            .stack_size(4 << 20)
            .spawn(deep_nesting_body)
            .expect("spawn");
        assert!(t.join().is_ok());
    }

    fn deep_nesting_body() {
        let d = DEFAULT_MAX_DEPTH;
        let arr = format!("{}{}", "[".repeat(d), "]".repeat(d));
        let v = parse(&arr).expect("depth at the limit parses");
        let obj = format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d));
        let o = parse(&obj).expect("depth at the limit parses");
        // Recursive derived impls must survive the deepest accepted value
        // on a test thread's 2 MiB stack (debug build).
        let v2 = v.clone();
        assert!(v == v2);
        assert!(o.clone() == o);
        assert!(format!("{v:?}").len() > d);
        assert_eq!(stringify_to_string(&v), arr);
        assert_eq!(stringify_to_string(&o), obj);
        assert_eq!(stringify_len(&o), obj.len());
        drop(v2);
        drop(o);
        let too_deep = format!("{}{}", "[".repeat(d + 1), "]".repeat(d + 1));
        assert!(matches!(parse(&too_deep), Err(e) if e.message == "too deeply nested"));
        assert!(parse_with_max_depth(&too_deep, d + 1).is_ok());
        // Unclosed, very deep: an error, not a crash.
        assert!(parse(&"[".repeat(1_000_000)).is_err());
        assert!(parse(&"{\"a\":".repeat(1_000_000)).is_err());
    }
}
