//! `CompactionSettings` and `shouldCompact`.

use crate::error::{join, quoted, Error, Result};
use crate::js::string::JsStr;
use crate::js::to_number::string_to_number;
use crate::js::view::{Key, Kind, View};
use crate::session::model::require_object;
use crate::tokens::estimate::Counter;
use crate::tokens::tokenizer::Encoding;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub enabled: bool,
    pub reserve_tokens: f64,
    pub keep_recent_tokens: f64,
    /// Opt-in exact token counts (`settings.tokenizer`); chars/4 otherwise.
    pub counter: Counter,
}

/// What choosing a cut needs: the tokens to keep and how to count them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub keep_recent_tokens: f64,
    pub counter: Counter,
}

impl From<f64> for Budget {
    /// A budget counted with the reference's chars/4 estimate.
    fn from(keep_recent_tokens: f64) -> Budget {
        Budget {
            keep_recent_tokens,
            counter: Counter::Estimate,
        }
    }
}

impl From<&Settings> for Budget {
    fn from(s: &Settings) -> Budget {
        Budget {
            keep_recent_tokens: s.keep_recent_tokens,
            counter: s.counter,
        }
    }
}

/// `DEFAULT_COMPACTION_SETTINGS`.
pub const DEFAULT_SETTINGS: Settings = Settings {
    enabled: true,
    reserve_tokens: 16384.0,
    keep_recent_tokens: 20000.0,
    counter: Counter::Estimate,
};

/// A token setting (`reserveTokens`, `keepRecentTokens`) as the agents'
/// arithmetic reads it: a number, or a string JS converts to one (their
/// settings files are not validated, and `contextWindow - "16384"` is a
/// number). Anything else, or a string that converts to NaN, is a
/// `TypeError` naming the field, `name`.
pub fn token_setting<V: View>(field: &V, name: &str) -> Result<f64> {
    if let Some(n) = field.number() {
        return Ok(n);
    }
    if let Some(n) = field
        .string()
        .map(|s| string_to_number(&s))
        .filter(|n| !n.is_nan())
    {
        return Ok(n);
    }
    let got = match field.string() {
        Some(s) => join(&[&"a string that is no number, ", &quoted(&s)]),
        None => JsStr::from_str(field.kind().describe()),
    };
    Err(Error::type_error(
        name,
        join(&[&"expected a number, got ", &got]),
    ))
}

/// Reads a `CompactionSettings` object, as the agents read it: `enabled`
/// for its truthiness (`if (!settings.enabled)`), the token settings as
/// [`token_setting`]s, which must be there.
pub fn read_settings<V: View>(v: &V) -> Result<Settings> {
    require_object(v)?;
    Ok(Settings {
        enabled: v.get(Key::Enabled)?.truthy(),
        reserve_tokens: token_setting(&v.get(Key::ReserveTokens)?, "reserveTokens")?,
        keep_recent_tokens: token_setting(&v.get(Key::KeepRecentTokens)?, "keepRecentTokens")?,
        counter: read_counter(v)?,
    })
}

/// `options.tokenizer`: absent for the reference's chars/4 estimate, or
/// `"o200k_base"` / `"cl100k_base"` for exact counts.
pub fn read_counter<V: View>(options: &V) -> Result<Counter> {
    let t = options.get(Key::Tokenizer)?;
    if matches!(t.kind(), Kind::Undefined) {
        return Ok(Counter::Estimate);
    }
    t.string()
        .and_then(|name| name.as_str().and_then(Encoding::from_name))
        .map(Counter::Exact)
        .ok_or_else(|| {
            let got = match t.string() {
                Some(name) => quoted(&name),
                None => JsStr::from_str(t.kind().describe()),
            };
            Error::type_error(
                "tokenizer",
                join(&[&"expected \"o200k_base\" or \"cl100k_base\", got ", &got]),
            )
        })
}

/// `shouldCompact`: whether the context has grown into the reserve.
pub fn should_compact(context_tokens: f64, context_window: f64, settings: &Settings) -> bool {
    settings.enabled && context_tokens > context_window - settings.reserve_tokens
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::js::json::{parse, view::Val};

    fn settings(json: &str) -> Result<Settings> {
        read_settings(&Val::new(&parse(json).unwrap()))
    }

    #[test]
    fn enabled_is_read_for_its_truthiness() {
        let read = |enabled: &str| {
            settings(&format!(
                r#"{{"enabled":{enabled},"reserveTokens":1,"keepRecentTokens":2}}"#
            ))
            .unwrap()
            .enabled
        };
        for truthy in ["true", "1", r#""false""#, r#""0""#, "[]", "{}"] {
            assert!(read(truthy), "{truthy}");
        }
        for falsy in ["false", "0", r#""""#, "null"] {
            assert!(!read(falsy), "{falsy}");
        }
        // Missing: undefined.
        assert!(
            !settings(r#"{"reserveTokens":1,"keepRecentTokens":2}"#)
                .unwrap()
                .enabled
        );
    }

    #[test]
    fn token_settings_take_numeric_strings() {
        let s = settings(r#"{"enabled":true,"reserveTokens":" 16384\n","keepRecentTokens":"2e4"}"#)
            .unwrap();
        assert_eq!(s.reserve_tokens, 16384.0);
        assert_eq!(s.keep_recent_tokens, 20000.0);
        assert_eq!(
            settings(r#"{"enabled":true,"reserveTokens":"0x10","keepRecentTokens":""}"#)
                .unwrap()
                .keep_recent_tokens,
            0.0
        );
        for (json, message) in [
            (
                r#"{"enabled":true,"reserveTokens":"lots","keepRecentTokens":1}"#,
                r#"reserveTokens: expected a number, got a string that is no number, "lots""#,
            ),
            (
                r#"{"enabled":true,"reserveTokens":1,"keepRecentTokens":null}"#,
                "keepRecentTokens: expected a number, got null",
            ),
            (
                r#"{"enabled":true,"reserveTokens":1}"#,
                "keepRecentTokens: expected a number, got undefined",
            ),
            (
                r#"{"enabled":true,"reserveTokens":true,"keepRecentTokens":1}"#,
                "reserveTokens: expected a number, got a boolean",
            ),
        ] {
            let err = settings(json).unwrap_err();
            assert_eq!(err.to_string(), message, "{json}");
        }
    }
}
