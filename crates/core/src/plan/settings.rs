//! `CompactionSettings` and `shouldCompact`.

use crate::error::{join, quoted, Error, Result};
use crate::js::string::JsStr;
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

fn number<V: View>(v: &V, key: Key) -> Result<f64> {
    let field = v.get(key)?;
    field.number().ok_or_else(|| {
        Error::type_error(
            key.as_str(),
            format!("expected a number, got {}", field.kind().describe()),
        )
    })
}

/// Reads a `CompactionSettings` object; every field must be present.
pub fn read_settings<V: View>(v: &V) -> Result<Settings> {
    require_object(v)?;
    let enabled = v.get(Key::Enabled)?;
    if enabled.kind() != Kind::Bool {
        return Err(Error::type_error(
            "enabled",
            format!("expected a boolean, got {}", enabled.kind().describe()),
        ));
    }
    Ok(Settings {
        enabled: enabled.boolean().unwrap_or(false),
        reserve_tokens: number(v, Key::ReserveTokens)?,
        keep_recent_tokens: number(v, Key::KeepRecentTokens)?,
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
