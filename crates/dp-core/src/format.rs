//! Numbers in messages: [`Num`] shows an `f64` exactly (its shortest round-trip form) but
//! never as a long run of zeros, so a tiny ε or a huge noise scale reads `1e-300` or
//! `3.2e299`, not three hundred digits.

use std::fmt;

/// Smallest magnitude [`Num`] writes in positional notation.
const POSITIONAL_MIN: f64 = 1e-4;

/// Magnitude from which [`Num`] writes scientific notation again.
const POSITIONAL_MAX: f64 = 1e15;

/// An `f64` for a message: the shortest decimal that reads back as the same number, in
/// positional notation for magnitudes in [1e-4, 1e15) (`0.5`, `1234.25`) and in scientific
/// notation otherwise (`1e-9`, `1.5e20`); zero is `0` (also −0), and the non-finite
/// values are `NaN`, `inf` and `-inf`. At most about 24 characters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x == 0.0 {
            f.write_str("0")
        } else if !x.is_finite() || (POSITIONAL_MIN..POSITIONAL_MAX).contains(&x.abs()) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Num;

    #[test]
    fn short_and_exact() {
        let cases: [(f64, &str); 12] = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (0.5, "0.5"),
            (1e-4, "0.0001"),
            (9.9e-5, "9.9e-5"),
            (1e-300, "1e-300"),
            (-5e-324, "-5e-324"),
            (3.2e299, "3.2e299"),
            (1e15, "1e15"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (x, want) in cases {
            assert_eq!(Num(x).to_string(), want);
        }
        // exact: reads back as the same number
        let x = 0.1 + 0.2;
        assert_eq!(Num(x).to_string().parse::<f64>().unwrap(), x);
        for x in [f64::MIN_POSITIVE, f64::MAX, -1.234_567_890_123_456_7e-200] {
            let s = Num(x).to_string();
            assert!(s.len() <= 24, "{s}");
            assert_eq!(s.parse::<f64>().unwrap(), x);
        }
    }
}
