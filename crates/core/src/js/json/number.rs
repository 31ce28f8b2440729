//! Numbers as JavaScript prints them (`Number.prototype.toString()`), by
//! `ryu-js`, boa's ECMAScript Number-to-string; and the decimal digits of
//! an integer, for the transcript writer.

/// JS `String(n)`: `NaN`, `Infinity`, `-Infinity`, `0` for -0, else the
/// shortest round-trip digits in JS layout (`1e+21`, `1e-7`, `0.000001`,
/// `123456789012345680000`).
pub fn number_to_js_string(n: f64) -> String {
    ryu_js::Buffer::new().format(n).to_owned()
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
