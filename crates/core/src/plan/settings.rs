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

/// What `prepareCompaction` reads of its settings: `keepRecentTokens` (a
/// [`token_setting`]) and this package's `tokenizer`. Like the agents'
/// `prepareCompaction`, not `enabled` nor `reserveTokens`.
pub fn read_budget<V: View>(v: &V) -> Result<Budget> {
    require_object(v)?;
    Ok(Budget {
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

/// `shouldCompact`: whether the context has grown into the reserve, with
/// `settings` read as the agents read them: `enabled` for its truthiness
/// (`if (!settings.enabled)`), then, only where it holds, `reserveTokens`
/// (a [`token_setting`]).
pub fn should_compact<V: View>(
    context_tokens: f64,
    context_window: f64,
    settings: &V,
) -> Result<bool> {
    require_object(settings)?;
    if !settings.get(Key::Enabled)?.truthy() {
        return Ok(false);
    }
    let reserve_tokens = token_setting(&settings.get(Key::ReserveTokens)?, "reserveTokens")?;
    Ok(context_tokens > context_window - reserve_tokens)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::js::json::{parse, view::Val, Value};

    fn json(text: &str) -> Value {
        parse(text).unwrap()
    }

    /// `shouldCompact(150, 100, settings)`, the window overfull.
    fn over(settings: &str) -> Result<bool> {
        should_compact(150.0, 100.0, &Val::new(&json(settings)))
    }

    #[test]
    fn enabled_is_read_for_its_truthiness_and_reserve_tokens_only_then() {
        for truthy in ["true", "1", r#""false""#, r#""0""#, "[]", "{}"] {
            let settings = format!(r#"{{"enabled":{truthy},"reserveTokens":10}}"#);
            assert!(over(&settings).unwrap(), "{truthy}");
        }
        for falsy in ["false", "0", r#""""#, "null"] {
            // reserveTokens is not read: a missing one is no error.
            assert!(
                !over(&format!(r#"{{"enabled":{falsy}}}"#)).unwrap(),
                "{falsy}"
            );
        }
        assert!(!over("{}").unwrap());
        assert_eq!(
            over(r#"{"enabled":true}"#).unwrap_err().to_string(),
            "reserveTokens: expected a number, got undefined"
        );
        assert!(!over(r#"{"enabled":true,"reserveTokens":"-60"}"#).unwrap());
        assert!(over(r#"{"enabled":true,"reserveTokens":" 1e1\n"}"#).unwrap());
    }

    #[test]
    fn the_budget_takes_numeric_strings_and_reads_nothing_else() {
        let budget = |text: &str| read_budget(&Val::new(&json(text)));
        assert_eq!(
            budget(r#"{"keepRecentTokens":" 2e4\n"}"#)
                .unwrap()
                .keep_recent_tokens,
            20000.0
        );
        assert_eq!(
            budget(r#"{"keepRecentTokens":"0x10"}"#)
                .unwrap()
                .keep_recent_tokens,
            16.0
        );
        assert_eq!(
            budget(r#"{"keepRecentTokens":""}"#)
                .unwrap()
                .keep_recent_tokens,
            0.0
        );
        // enabled and reserveTokens are not read.
        assert!(budget(r#"{"enabled":"x","reserveTokens":null,"keepRecentTokens":5}"#).is_ok());
        for (text, message) in [
            (
                r#"{"keepRecentTokens":"lots"}"#,
                r#"keepRecentTokens: expected a number, got a string that is no number, "lots""#,
            ),
            (
                r#"{"keepRecentTokens":null}"#,
                "keepRecentTokens: expected a number, got null",
            ),
            (
                r#"{}"#,
                "keepRecentTokens: expected a number, got undefined",
            ),
            (
                r#"{"keepRecentTokens":true}"#,
                "keepRecentTokens: expected a number, got a boolean",
            ),
        ] {
            assert_eq!(budget(text).unwrap_err().to_string(), message, "{text}");
        }
    }
}
