//! Directed rounding helpers for accounting (crate-private).
//!
//! `+ − × ÷ √` are correctly rounded in IEEE 754, so stepping the result one ulp
//! outward gives a strict bound on the exact result. `exp`, `ln`, `ln_1p` from the
//! platform's libm are not correctly rounded but are accurate to within 1 ulp on every
//! mainstream libm; we step [`LIBM_ULPS`] ulps outward for them.

/// Ulps stepped outward after a libm transcendental.
pub(crate) const LIBM_ULPS: u32 = 2;

/// The next representable `f64` above `x` (identity on `+∞` and NaN).
pub(crate) fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    if x > 0.0 {
        f64::from_bits(b + 1)
    } else {
        f64::from_bits(b - 1)
    }
}

/// The next representable `f64` below `x` (identity on `−∞` and NaN).
pub(crate) fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// `x` stepped `n` ulps up.
pub(crate) fn up_n(mut x: f64, n: u32) -> f64 {
    for _ in 0..n {
        x = next_up(x);
    }
    x
}

/// `x` stepped `n` ulps down.
pub(crate) fn down_n(mut x: f64, n: u32) -> f64 {
    for _ in 0..n {
        x = next_down(x);
    }
    x
}

/// The exact rounding error of `a + b`: `(s, e)` with `s = fl(a + b)` and
/// `a + b = s + e` exactly (Knuth's TwoSum), valid when `s` is finite.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Upper bound on `a + b`.
pub(crate) fn add_up(a: f64, b: f64) -> f64 {
    let (s, e) = two_sum(a, b);
    if !s.is_finite() || e > 0.0 {
        next_up(s)
    } else {
        s
    }
}

/// Lower bound on `a + b`.
pub(crate) fn add_down(a: f64, b: f64) -> f64 {
    let (s, e) = two_sum(a, b);
    if !s.is_finite() || e < 0.0 {
        next_down(s)
    } else {
        s
    }
}

/// Lower bound on `a − b`.
pub(crate) fn sub_down(a: f64, b: f64) -> f64 {
    add_down(a, -b)
}

/// Upper bound on `a − b`.
pub(crate) fn sub_up(a: f64, b: f64) -> f64 {
    add_up(a, -b)
}

/// Whether `p` is possibly affected by underflow (the FMA error test is then unreliable).
fn tiny(p: f64) -> bool {
    p.abs() < 1e-290
}

/// Upper bound on `a · b`.
pub(crate) fn mul_up(a: f64, b: f64) -> f64 {
    let p = a * b;
    if p == 0.0 && (a == 0.0 || b == 0.0) {
        return p;
    }
    if !p.is_finite() || tiny(p) || a.mul_add(b, -p) > 0.0 {
        next_up(p)
    } else {
        p
    }
}

/// Lower bound on `a · b`.
pub(crate) fn mul_down(a: f64, b: f64) -> f64 {
    let p = a * b;
    if p == 0.0 && (a == 0.0 || b == 0.0) {
        return p;
    }
    if !p.is_finite() || tiny(p) || a.mul_add(b, -p) < 0.0 {
        next_down(p)
    } else {
        p
    }
}

/// Upper bound on `a / b` (`b > 0`).
pub(crate) fn div_up(a: f64, b: f64) -> f64 {
    let q = a / b;
    if a == 0.0 {
        return q;
    }
    // a − q·b > 0  ⇔  a/b > q  (b > 0)
    if !q.is_finite() || tiny(q) || (-q).mul_add(b, a) > 0.0 {
        next_up(q)
    } else {
        q
    }
}

/// Lower bound on `a / b` (`b > 0`).
pub(crate) fn div_down(a: f64, b: f64) -> f64 {
    let q = a / b;
    if a == 0.0 {
        return q;
    }
    if !q.is_finite() || tiny(q) || (-q).mul_add(b, a) < 0.0 {
        next_down(q)
    } else {
        q
    }
}

/// Upper bound on `√a`.
pub(crate) fn sqrt_up(a: f64) -> f64 {
    let r = a.sqrt();
    if a == 0.0 {
        return r;
    }
    if tiny(a) || r.mul_add(r, -a) < 0.0 {
        next_up(r)
    } else {
        r
    }
}

/// Upper bound on `eˣ`.
pub(crate) fn exp_up(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    up_n(x.exp(), LIBM_ULPS)
}

/// Upper bound on `ln x`.
pub(crate) fn ln_up(x: f64) -> f64 {
    if x == 1.0 {
        return 0.0;
    }
    up_n(x.ln(), LIBM_ULPS)
}

/// Lower bound on `ln x`.
pub(crate) fn ln_down(x: f64) -> f64 {
    if x == 1.0 {
        return 0.0;
    }
    down_n(x.ln(), LIBM_ULPS)
}

/// Upper bound on `ln(1 + x)`.
pub(crate) fn ln_1p_up(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    up_n(x.ln_1p(), LIBM_ULPS)
}

/// Lower bound on `ln(1 + x)`.
pub(crate) fn ln_1p_down(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    down_n(x.ln_1p(), LIBM_ULPS)
}

/// Upper bound on `eˣ − 1`.
pub(crate) fn exp_m1_up(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    up_n(x.exp_m1(), LIBM_ULPS)
}

/// Bisection over the *bit patterns* of non-negative finite `f64`s: given `lo < hi`
/// with `pred(lo) == false` and `pred(hi) == true` for a monotone `pred`, returns the
/// smallest `x` in `(lo, hi]` with `pred(x)` (at most 64 evaluations).
pub(crate) fn bisect_bits(lo: f64, hi: f64, mut pred: impl FnMut(f64) -> bool) -> f64 {
    let mut lo_b = lo.to_bits();
    let mut hi_b = hi.to_bits();
    while hi_b - lo_b > 1 {
        let mid = lo_b + (hi_b - lo_b) / 2;
        if pred(f64::from_bits(mid)) {
            hi_b = mid;
        } else {
            lo_b = mid;
        }
    }
    f64::from_bits(hi_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps() {
        assert_eq!(next_up(1.0), 1.0 + f64::EPSILON);
        assert_eq!(next_down(1.0), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(next_up(0.0), f64::from_bits(1));
        assert_eq!(next_down(0.0), -f64::from_bits(1));
        assert_eq!(next_up(-f64::from_bits(1)), -0.0);
        // fl(0.1 + 0.2) is already above the exact sum, so only add_down moves.
        assert_eq!(add_up(0.1, 0.2), 0.1 + 0.2);
        assert_eq!(add_down(0.1, 0.2), next_down(0.1 + 0.2));
        assert_eq!(add_up(1.0, 2.0), 3.0);
        assert!(add_up(0.1, 0.2) > add_down(0.1, 0.2));
        assert_eq!(mul_up(3.0, 0.5), 1.5);
        assert!(mul_up(0.1, 3.0) > mul_down(0.1, 3.0));
        assert!(div_up(1.0, 3.0) > div_down(1.0, 3.0));
        assert_eq!(sqrt_up(4.0), 2.0);
        assert!(sqrt_up(2.0) * sqrt_up(2.0) >= 2.0);
    }

    #[test]
    fn directed_operations_bracket_the_exact_result() -> crate::Result<()> {
        use crate::exact_rational as q;
        let xs = [
            0.1,
            0.2,
            1.0 / 3.0,
            3.0,
            1e-7,
            7.5e12,
            2.0f64.sqrt(),
            1e-200,
            123.456,
        ];
        for &a in &xs {
            for &b in &xs {
                let (qa, qb) = (q(a)?, q(b)?);
                assert!(q(add_up(a, b))? >= &qa + &qb && q(add_down(a, b))? <= &qa + &qb);
                assert!(q(sub_up(a, b))? >= &qa - &qb && q(sub_down(a, b))? <= &qa - &qb);
                assert!(q(mul_up(a, b))? >= &qa * &qb && q(mul_down(a, b))? <= &qa * &qb);
                assert!(q(div_up(a, b))? >= &qa / &qb && q(div_down(a, b))? <= &qa / &qb);
            }
            let r = q(sqrt_up(a))?;
            assert!(&r * &r >= q(a)?);
        }
        Ok(())
    }

    #[test]
    fn bisection_finds_threshold() {
        let x = bisect_bits(0.0, 10.0, |x| x * x >= 2.0);
        assert!(x * x >= 2.0);
        assert!(next_down(x) * next_down(x) < 2.0);
    }
}
