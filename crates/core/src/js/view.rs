//! A read-only view of a JavaScript-like value.
//!
//! The algorithms in this crate are written once against [`View`] and run over
//! two kinds of values: the caller's live JS objects (the binding reads them
//! with raw N-API calls, so nothing is copied or converted up front) and
//! [`crate::js::json::Value`] trees parsed in Rust (tests, session files).
//! Every read follows JavaScript semantics: missing properties are
//! `undefined`, string lengths are UTF-16 code units, truthiness is JS's.

use crate::error::Result;
use crate::js::string::JsStr;

/// The property names the algorithms read. A fixed set, so the binding can
/// create each key string once per call instead of once per read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Key {
    Type,
    Id,
    ParentId,
    Message,
    Role,
    Content,
    Text,
    Thinking,
    Redacted,
    Name,
    Arguments,
    Path,
    Usage,
    StopReason,
    TotalTokens,
    Input,
    Output,
    CacheRead,
    CacheWrite,
    Summary,
    FirstKeptEntryId,
    FromHook,
    Details,
    ReadFiles,
    ModifiedFiles,
    Command,
    ExcludeFromContext,
    ExitCode,
    Cancelled,
    Truncated,
    FullOutputPath,
    Timestamp,
    ToolCallId,
    ToolName,
    IsError,
    Enabled,
    ReserveTokens,
    KeepRecentTokens,
    Api,
    Provider,
    MaxTokens,
    ContextWindow,
    MessagesToSummarize,
    TurnPrefixMessages,
    IsSplitTurn,
    Settings,
    PreviousSummary,
    Read,
    Written,
    Edited,
    ErrorMessage,
    TokensBefore,
    Length,
    Tokenizer,
    Sections,
    ToolsAdded,
    ToolsRemoved,
    NestedCalls,
    Calls,
    TargetId,
    Replacement,
    SystemMessage,
    Entries,
    Messages,
    SourceEntry,
}

impl Key {
    pub const ALL: [Key; 65] = [
        Key::Type,
        Key::Id,
        Key::ParentId,
        Key::Message,
        Key::Role,
        Key::Content,
        Key::Text,
        Key::Thinking,
        Key::Redacted,
        Key::Name,
        Key::Arguments,
        Key::Path,
        Key::Usage,
        Key::StopReason,
        Key::TotalTokens,
        Key::Input,
        Key::Output,
        Key::CacheRead,
        Key::CacheWrite,
        Key::Summary,
        Key::FirstKeptEntryId,
        Key::FromHook,
        Key::Details,
        Key::ReadFiles,
        Key::ModifiedFiles,
        Key::Command,
        Key::ExcludeFromContext,
        Key::ExitCode,
        Key::Cancelled,
        Key::Truncated,
        Key::FullOutputPath,
        Key::Timestamp,
        Key::ToolCallId,
        Key::ToolName,
        Key::IsError,
        Key::Enabled,
        Key::ReserveTokens,
        Key::KeepRecentTokens,
        Key::Api,
        Key::Provider,
        Key::MaxTokens,
        Key::ContextWindow,
        Key::MessagesToSummarize,
        Key::TurnPrefixMessages,
        Key::IsSplitTurn,
        Key::Settings,
        Key::PreviousSummary,
        Key::Read,
        Key::Written,
        Key::Edited,
        Key::ErrorMessage,
        Key::TokensBefore,
        Key::Length,
        Key::Tokenizer,
        Key::Sections,
        Key::ToolsAdded,
        Key::ToolsRemoved,
        Key::NestedCalls,
        Key::Calls,
        Key::TargetId,
        Key::Replacement,
        Key::SystemMessage,
        Key::Entries,
        Key::Messages,
        Key::SourceEntry,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Key::Type => "type",
            Key::Id => "id",
            Key::ParentId => "parentId",
            Key::Message => "message",
            Key::Role => "role",
            Key::Content => "content",
            Key::Text => "text",
            Key::Thinking => "thinking",
            Key::Redacted => "redacted",
            Key::Name => "name",
            Key::Arguments => "arguments",
            Key::Path => "path",
            Key::Usage => "usage",
            Key::StopReason => "stopReason",
            Key::TotalTokens => "totalTokens",
            Key::Input => "input",
            Key::Output => "output",
            Key::CacheRead => "cacheRead",
            Key::CacheWrite => "cacheWrite",
            Key::Summary => "summary",
            Key::FirstKeptEntryId => "firstKeptEntryId",
            Key::FromHook => "fromHook",
            Key::Details => "details",
            Key::ReadFiles => "readFiles",
            Key::ModifiedFiles => "modifiedFiles",
            Key::Command => "command",
            Key::ExcludeFromContext => "excludeFromContext",
            Key::ExitCode => "exitCode",
            Key::Cancelled => "cancelled",
            Key::Truncated => "truncated",
            Key::FullOutputPath => "fullOutputPath",
            Key::Timestamp => "timestamp",
            Key::ToolCallId => "toolCallId",
            Key::ToolName => "toolName",
            Key::IsError => "isError",
            Key::Enabled => "enabled",
            Key::ReserveTokens => "reserveTokens",
            Key::KeepRecentTokens => "keepRecentTokens",
            Key::Api => "api",
            Key::Provider => "provider",
            Key::MaxTokens => "maxTokens",
            Key::ContextWindow => "contextWindow",
            Key::MessagesToSummarize => "messagesToSummarize",
            Key::TurnPrefixMessages => "turnPrefixMessages",
            Key::IsSplitTurn => "isSplitTurn",
            Key::Settings => "settings",
            Key::PreviousSummary => "previousSummary",
            Key::Read => "read",
            Key::Written => "written",
            Key::Edited => "edited",
            Key::ErrorMessage => "errorMessage",
            Key::TokensBefore => "tokensBefore",
            Key::Length => "length",
            Key::Tokenizer => "tokenizer",
            Key::Sections => "sections",
            Key::ToolsAdded => "toolsAdded",
            Key::ToolsRemoved => "toolsRemoved",
            Key::NestedCalls => "nestedCalls",
            Key::Calls => "calls",
            Key::TargetId => "targetId",
            Key::Replacement => "replacement",
            Key::SystemMessage => "systemMessage",
            Key::Entries => "entries",
            Key::Messages => "messages",
            Key::SourceEntry => "sourceEntry",
        }
    }
}

/// The JS type of a value, as far as the algorithms care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Undefined,
    Null,
    Bool,
    Number,
    String,
    Object,
    Array,
    Function,
    /// Symbols and BigInts.
    Other,
}

impl Kind {
    /// Whether properties can be read from it without a TypeError in JS terms.
    pub fn is_object_like(self) -> bool {
        matches!(self, Kind::Object | Kind::Array | Kind::Function)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Kind::Undefined => "undefined",
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Object => "an object",
            Kind::Array => "an array",
            Kind::Function => "a function",
            Kind::Other => "a symbol or bigint",
        }
    }
}

/// `[key, JSON.stringify(value)]` pairs of `Object.entries`; `None` where
/// `JSON.stringify` gives `undefined`.
pub type ArgumentEntries = Vec<(JsStr, Option<JsStr>)>;

/// Read access to one value. Implementations must never panic on any input.
pub trait View: Sized + Clone {
    fn kind(&self) -> Kind;
    /// `obj[key]`; `undefined` when missing or when `self` is a primitive.
    fn get(&self, key: Key) -> Result<Self>;
    /// `key in obj`; false for primitives.
    fn has(&self, key: Key) -> Result<bool>;
    /// The number, when `kind()` is `Number`.
    fn number(&self) -> Option<f64>;
    /// The boolean, when `kind()` is `Bool`.
    fn boolean(&self) -> Option<bool>;
    /// The UTF-16 length, when `kind()` is `String`.
    fn str_len(&self) -> Option<usize>;
    /// Whether this is a string equal to `lit`.
    fn str_is(&self, lit: &str) -> bool;
    /// The position of the first literal this string equals, if any.
    fn str_one_of(&self, lits: &[&str]) -> Option<usize> {
        lits.iter().position(|l| self.str_is(l))
    }
    /// An exact copy of the string, when `kind()` is `String`.
    fn string(&self) -> Option<JsStr>;
    /// The first `n` UTF-16 units of the string (`s.slice(0, n)`, so a
    /// surrogate pair may be cut), copying no more than that.
    fn string_prefix(&self, n: usize) -> Option<JsStr> {
        self.string().map(|s| s.slice_utf16(0, Some(n as i64)))
    }
    /// The array length, when `kind()` is `Array`.
    fn array_len(&self) -> Option<usize>;
    /// `arr[i]`.
    fn at(&self, index: usize) -> Result<Self>;
    /// `i in arr`: an element there, own or inherited.
    fn has_at(&self, index: usize) -> Result<bool>;
    /// The indices from `from` below `len` that hold an element, own or
    /// inherited, ascending, when the implementation can list them without
    /// asking each index; `None` otherwise.
    fn present_indices(&self, _from: usize, _len: usize) -> Result<Option<Vec<usize>>> {
        Ok(None)
    }
    /// `JSON.stringify(self).length`, or `None` where `JSON.stringify` returns `undefined`.
    fn json_len(&self) -> Result<Option<usize>>;
    /// JS `String(self)` (template-literal conversion).
    fn to_js_string(&self) -> Result<JsStr>;
    /// `String(self)` as a value of this view, converted now without
    /// copying the text out, where the view can hold one; `None` otherwise
    /// (then [`View::to_js_string`] copies it).
    fn string_value(&self) -> Result<Option<Self>> {
        Ok(None)
    }
    /// `JSON.stringify(self)`, or `None` where it returns `undefined`.
    fn json_stringify(&self) -> Result<Option<JsStr>>;
    /// `Object.entries(self)`: own enumerable string-keyed properties in JS
    /// order; empty for primitives.
    fn entries(&self) -> Result<Vec<(JsStr, Self)>>;

    /// `Object.entries(self).map(([k, v]) => [k, JSON.stringify(v)])`, when the
    /// implementation has a faster way than [`View::entries`] plus
    /// [`View::json_stringify`] per value; `None` otherwise.
    fn argument_entries(&self) -> Result<Option<ArgumentEntries>> {
        Ok(None)
    }

    /// `self === other` (used for SameValueZero on objects and BigInts).
    fn strict_equals(&self, other: &Self) -> Result<bool>;

    /// A `TypeError` at `field` unless this is an object (or a function),
    /// saying it expected `what` and what came instead.
    fn expect_object(&self, field: &str, what: &str) -> Result<()> {
        if self.is_object_like() {
            return Ok(());
        }
        let got = self.kind().describe();
        Err(crate::error::Error::type_error(
            field,
            format!("expected {what}, got {got}"),
        ))
    }

    /// The array length, or a `TypeError` at `field` saying what came instead.
    fn expect_array(&self, field: &str) -> Result<usize> {
        self.array_len().ok_or_else(|| {
            let got = self.kind().describe();
            crate::error::Error::type_error(field, format!("expected an array, got {got}"))
        })
    }

    /// JS `ToBoolean`.
    fn truthy(&self) -> bool {
        match self.kind() {
            Kind::Undefined | Kind::Null => false,
            Kind::Bool => self.boolean().unwrap_or(false),
            Kind::Number => self.number().is_some_and(|n| n != 0.0 && !n.is_nan()),
            Kind::String => self.str_len().unwrap_or(0) > 0,
            Kind::Object | Kind::Array | Kind::Function => true,
            Kind::Other => !self.is_zero_bigint(),
        }
    }

    /// Whether this is the BigInt `0n`, the one falsy symbol or BigInt.
    fn is_zero_bigint(&self) -> bool {
        false
    }

    /// `typeof v === "object" || typeof v === "function"` and not null: can
    /// hold properties. Implementations may answer this more cheaply than `kind()`.
    fn is_object_like(&self) -> bool {
        self.kind().is_object_like()
    }

    /// `typeof v === "object" && v !== null` (arrays included).
    fn is_object_or_array(&self) -> bool {
        matches!(self.kind(), Kind::Object | Kind::Array)
    }

    fn is_undefined(&self) -> bool {
        self.kind() == Kind::Undefined
    }

    /// Runs `f` with a fresh scope for the temporary values it reads. Values
    /// read inside must not escape `f`; only plain Rust data comes out.
    fn scoped<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }
}
