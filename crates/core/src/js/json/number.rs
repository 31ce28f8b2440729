//! Numbers as JavaScript prints them (`Number.prototype.toString()`).

use std::fmt;

/// Room for any JS number string (the longest is 25 bytes, e.g.
/// `-0.0000022250738585072014`).
pub(super) struct NumBuf {
    buf: [u8; 40],
    len: usize,
}

impl NumBuf {
    pub(super) fn new() -> NumBuf {
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

    pub(super) fn as_str(&self) -> &str {
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
pub(super) fn format_js_number(x: f64, out: &mut NumBuf) {
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
