//! `Math` functions whose rules differ from Rust's `f64` methods.

/// `Math.min(a, b)`: NaN wins (Rust's `f64::min` drops it), and -0 is
/// below +0.
pub fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::min;

    #[test]
    fn nan_wins_and_negative_zero_is_smaller() {
        assert!(min(f64::NAN, 1.0).is_nan());
        assert!(min(1.0, f64::NAN).is_nan());
        assert_eq!(min(2.0, 1.0), 1.0);
        assert_eq!(min(f64::NEG_INFINITY, 1.0), f64::NEG_INFINITY);
        assert!(min(0.0, -0.0).is_sign_negative());
        assert!(min(-0.0, 0.0).is_sign_negative());
    }
}
