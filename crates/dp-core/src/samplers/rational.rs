//! Exact rational values of floating-point parameters.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::error::{CoreError, Result};

/// The exact value of a finite `f64` as a rational number.
///
/// Every finite `f64` is a dyadic rational `m · 2^e` with `|m| < 2^53` and
/// `−1074 ≤ e ≤ 971`, so the conversion loses nothing. NaN and ±∞ are errors.
pub fn exact_rational(x: f64) -> Result<BigRational> {
    if !x.is_finite() {
        return Err(CoreError::invalid(
            "x",
            x,
            "must be finite to have an exact rational value",
        ));
    }
    if x == 0.0 {
        return Ok(BigRational::zero());
    }
    let bits = x.to_bits();
    let negative = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1u64 << 52) - 1);
    // value = mantissa · 2^exponent
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -1074_i64)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    let mut m = BigInt::from(mantissa);
    if negative {
        m = -m;
    }
    let r = if exponent >= 0 {
        BigRational::from_integer(m << (exponent as usize))
    } else {
        BigRational::new(m, BigInt::one() << ((-exponent) as usize))
    };
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    #[test]
    fn small_values_by_hand() -> Result<()> {
        assert_eq!(exact_rational(0.0)?, q(0, 1));
        assert_eq!(exact_rational(-0.0)?, q(0, 1));
        assert_eq!(exact_rational(1.5)?, q(3, 2));
        assert_eq!(exact_rational(-0.375)?, q(-3, 8));
        assert_eq!(exact_rational(1024.0)?, q(1024, 1));
        // 0.1 = 3602879701896397 / 2^55 (the nearest double to 1/10).
        assert_eq!(exact_rational(0.1)?, q(3602879701896397, 1 << 55));
        // The smallest subnormal is 2^-1074.
        assert_eq!(
            exact_rational(f64::from_bits(1))?,
            BigRational::new(BigInt::one(), BigInt::one() << 1074usize)
        );
        assert!(exact_rational(f64::NAN).is_err());
        assert!(exact_rational(f64::INFINITY).is_err());
        Ok(())
    }
}
