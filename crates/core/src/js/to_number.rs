//! JavaScript's `ToNumber` for primitive values, where a rule must treat a
//! value the way JS arithmetic and comparisons would (`"5" * 2`, `null >= 0`).
//! Objects are not converted (that would run their `valueOf`): they count as
//! NaN, which every caller here treats as "not a usable number".
//!
//! Written by hand because Rust's `f64::from_str` accepts what JS does not
//! (`"inf"`, `"nan"`) and rejects what JS accepts (`"0x1f"`, `"  7\n"`, `""`).

use crate::js::string::JsStr;

/// A JS value as far as `ToNumber` cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Primitive {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(JsStr),
    /// Objects, arrays, functions, symbols, BigInts.
    Other,
}

/// `Number(value)` for primitives; NaN for everything else.
pub fn to_number(value: &Primitive) -> f64 {
    match value {
        Primitive::Undefined | Primitive::Other => f64::NAN,
        Primitive::Null => 0.0,
        Primitive::Bool(b) => f64::from(u8::from(*b)),
        Primitive::Number(n) => *n,
        Primitive::String(s) => string_to_number(s),
    }
}

/// `WhiteSpace` and `LineTerminator` of ECMAScript, which `Number()` trims.
fn is_js_whitespace(u: u16) -> bool {
    matches!(
        u,
        0x09 | 0x0A | 0x0B | 0x0C | 0x0D | 0x20 | 0xA0 | 0x1680 | 0x2000
            ..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000 | 0xFEFF
    )
}

/// ECMAScript `StringToNumber`.
pub fn string_to_number(s: &JsStr) -> f64 {
    let units = s.to_utf16();
    let start = units.iter().position(|&u| !is_js_whitespace(u));
    let Some(start) = start else {
        return 0.0;
    };
    let end = units
        .iter()
        .rposition(|&u| !is_js_whitespace(u))
        .unwrap_or(start)
        + 1;
    let body = &units[start..end];
    if !body.iter().all(|&u| u < 0x80) {
        return f64::NAN;
    }
    let text: String = body.iter().map(|&u| u as u8 as char).collect();
    non_decimal(&text).unwrap_or_else(|| decimal(&text))
}

/// `0b…`, `0o…`, `0x…` (no sign allowed, as in JS).
fn non_decimal(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    if bytes.len() < 2 || bytes[0] != b'0' {
        return None;
    }
    let radix: u32 = match bytes[1] {
        b'b' | b'B' => 2,
        b'o' | b'O' => 8,
        b'x' | b'X' => 16,
        _ => return None,
    };
    let digits = &text[2..];
    if digits.is_empty() {
        return Some(f64::NAN);
    }
    // The digits' bits, as many as fit in 128, then how many more there were
    // and whether any of them was set: enough for one correct rounding.
    let bits = radix.trailing_zeros();
    let (mut high, mut shift, mut sticky) = (0u128, 0i32, false);
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else {
            return Some(f64::NAN);
        };
        if high >> (128 - bits) == 0 {
            high = high << bits | u128::from(d);
        } else {
            shift = shift.saturating_add(bits as i32);
            sticky |= d != 0;
        }
    }
    // (`as f64` rounds to nearest, ties to even; the sticky bit lies far
    // below the 53 bits kept, so it only breaks ties.)
    Some((high | u128::from(sticky)) as f64 * 2f64.powi(shift))
}

/// `StrDecimalLiteral`: an optional sign, then `Infinity` or digits with an
/// optional fraction and exponent.
fn decimal(text: &str) -> f64 {
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'+') => (1.0, &text[1..]),
        Some(b'-') => (-1.0, &text[1..]),
        _ => (1.0, text),
    };
    if rest == "Infinity" {
        return sign * f64::INFINITY;
    }
    let bytes = rest.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - from
    };
    let int_digits = digits(&mut i);
    let mut frac_digits = 0;
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        frac_digits = digits(&mut i);
    }
    if int_digits + frac_digits == 0 {
        return f64::NAN;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return f64::NAN;
        }
    }
    if i != bytes.len() {
        return f64::NAN;
    }
    // The grammar above is a subset of what Rust parses, correctly rounded.
    rest.parse::<f64>().map_or(f64::NAN, |n| sign * n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> f64 {
        string_to_number(&JsStr::from_str(s))
    }

    #[test]
    fn strings_convert_as_number_does() {
        let cases: &[(&str, f64)] = &[
            ("", 0.0),
            ("  \n\t", 0.0),
            ("5", 5.0),
            (" 7\n", 7.0),
            ("\u{FEFF}3\u{3000}", 3.0),
            ("-2.5", -2.5),
            ("+.5", 0.5),
            ("5.", 5.0),
            ("1e3", 1000.0),
            ("1E-2", 0.01),
            ("0x1f", 31.0),
            ("0B101", 5.0),
            ("0o17", 15.0),
            // Rounded once, as JS rounds: 2 ** 53 + 1 is a tie (to even),
            // 2 ** 53 + 3 one too (up); past 128 bits, a set bit after a
            // tie rounds it up.
            ("0x20000000000001", 9007199254740992.0),
            ("0x20000000000003", 9007199254740996.0),
            ("0x100000000000000000000000000000001", 2f64.powi(128)),
            (
                "0x1000000000000080000000000000000001",
                2f64.powi(132) * (1.0 + 2f64.powi(-52)),
            ),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ];
        assert_eq!(num(&format!("0x{}", "f".repeat(300))), f64::INFINITY);
        for &(s, want) in cases {
            assert_eq!(num(s), want, "{s:?}");
        }
        for s in [
            "inf", "nan", "NaN", "infinity", "1_000", "-0x1", "0x", "1e", ".", "e5", "5 5", "٣",
            "1n",
        ] {
            assert!(num(s).is_nan(), "{s:?}");
        }
    }

    #[test]
    fn other_primitives() {
        assert!(to_number(&Primitive::Undefined).is_nan());
        assert_eq!(to_number(&Primitive::Null), 0.0);
        assert_eq!(to_number(&Primitive::Bool(true)), 1.0);
        assert_eq!(to_number(&Primitive::Bool(false)), 0.0);
        assert_eq!(to_number(&Primitive::Number(-3.5)), -3.5);
        assert!(to_number(&Primitive::Other).is_nan());
    }
}
