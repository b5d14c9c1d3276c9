//! Directed rounding helpers for accounting (public since issue #23 §2, so that every
//! budget split in the crates above dp-core rounds down through one implementation).
//!
//! `+ − × ÷ √` are correctly rounded in IEEE 754, so stepping the result one ulp
//! outward gives a strict bound on the exact result. `exp`, `ln`, `ln_1p` from the
//! platform's libm are not correctly rounded but are accurate to within 1 ulp on every
//! mainstream libm; we step [`LIBM_ULPS`] ulps outward for them.

/// Ulps stepped outward after a libm transcendental.
pub const LIBM_ULPS: u32 = 2;

/// The next representable `f64` above `x` (identity on `+∞` and NaN).
pub fn next_up(x: f64) -> f64 {
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
pub fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// `x` stepped `n` ulps up.
pub fn up_n(mut x: f64, n: u32) -> f64 {
    for _ in 0..n {
        x = next_up(x);
    }
    x
}

/// `x` stepped `n` ulps down.
pub fn down_n(mut x: f64, n: u32) -> f64 {
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
pub fn add_up(a: f64, b: f64) -> f64 {
    let (s, e) = two_sum(a, b);
    if !s.is_finite() || e > 0.0 {
        next_up(s)
    } else {
        s
    }
}

/// Lower bound on `a + b`.
pub fn add_down(a: f64, b: f64) -> f64 {
    let (s, e) = two_sum(a, b);
    if !s.is_finite() || e < 0.0 {
        next_down(s)
    } else {
        s
    }
}

/// Lower bound on `a − b`.
pub fn sub_down(a: f64, b: f64) -> f64 {
    add_down(a, -b)
}

/// Upper bound on `a − b`.
pub fn sub_up(a: f64, b: f64) -> f64 {
    add_up(a, -b)
}

/// Whether `p` is possibly affected by underflow (the FMA error test is then unreliable).
fn tiny(p: f64) -> bool {
    p.abs() < 1e-290
}

/// Upper bound on `a · b`.
pub fn mul_up(a: f64, b: f64) -> f64 {
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
pub fn mul_down(a: f64, b: f64) -> f64 {
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
pub fn div_up(a: f64, b: f64) -> f64 {
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
pub fn div_down(a: f64, b: f64) -> f64 {
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
pub fn sqrt_up(a: f64) -> f64 {
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
pub fn exp_up(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    up_n(x.exp(), LIBM_ULPS)
}

/// Upper bound on `ln x`.
pub fn ln_up(x: f64) -> f64 {
    if x == 1.0 {
        return 0.0;
    }
    up_n(x.ln(), LIBM_ULPS)
}

/// Lower bound on `ln x`.
pub fn ln_down(x: f64) -> f64 {
    if x == 1.0 {
        return 0.0;
    }
    down_n(x.ln(), LIBM_ULPS)
}

/// Upper bound on `ln(1 + x)`.
pub fn ln_1p_up(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    up_n(x.ln_1p(), LIBM_ULPS)
}

/// Lower bound on `ln(1 + x)`.
pub fn ln_1p_down(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    down_n(x.ln_1p(), LIBM_ULPS)
}

/// Upper bound on `eˣ − 1`.
pub fn exp_m1_up(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    up_n(x.exp_m1(), LIBM_ULPS)
}

/// A share of `total` for each of `parts` equal steps, **rounded down** so that the steps
/// compose within `total` (issue #23 §2): the largest `q ≤ total/parts` (found from
/// [`div_down`] by stepping down) such that adding `parts` copies of `q` one at a time with
/// [`add_up`] — how [`crate::PrivacyLoss::compose`] and [`crate::compose_all`] add ε's and
/// ρ's — stays at most `total`. Since `fl(x + q) ≤ add_up(x, q)` and rounding is monotone,
/// the plain `f64` sum of the `parts` copies is at most `total` as well, and so is the exact
/// sum `parts·q`.
///
/// For `parts > 2^20` the sum is not replayed; `q` is instead taken below
/// `total·(1 − 2·parts·u)/parts` (`u = 2⁻⁵³`): each `add_up` step returns at most the exact
/// sum times `1 + 2u`, so the composed total is at most `parts·q·(1 + 2u)^parts ≤
/// parts·q/(1 − 2·parts·u) ≤ total` (valid while `2·parts·u < 1`).
///
/// `total` must be finite and `≥ 0` and `parts ≥ 1`; `parts = 1` returns `total`.
pub fn split_down(total: f64, parts: u64) -> f64 {
    if parts <= 1 || total <= 0.0 || !total.is_finite() {
        return total;
    }
    let k = parts as f64;
    let k_up = if (k as u128) < u128::from(parts) {
        next_up(k)
    } else {
        k
    };
    // the analytic share: composes within `total` whatever `parts` (doc comment)
    let u = f64::EPSILON / 2.0;
    let shrink = sub_down(1.0, mul_up(mul_up(2.0, k_up), u));
    let safe = div_down(mul_down(total, shrink.max(0.0)), k_up).max(0.0);
    if parts > 1 << 20 {
        return safe;
    }
    // `add_up` returns the exact sum rounded up, so the composition is monotone in q and
    // the largest q that fits is found by bisection between `safe` and `div_down`
    let composed = |q: f64| (0..parts).fold(0.0f64, |acc, _| add_up(acc, q));
    let hi = div_down(total, k);
    if composed(hi) <= total {
        return hi;
    }
    if safe >= hi {
        return next_down(hi).max(0.0);
    }
    next_down(bisect_bits(safe, hi, |q| composed(q) > total)).max(safe)
}

/// Bisection over the *bit patterns* of non-negative finite `f64`s: given `lo < hi`
/// with `pred(lo) == false` and `pred(hi) == true` for a monotone `pred`, returns the
/// smallest `x` in `(lo, hi]` with `pred(x)` (at most 64 evaluations).
pub fn bisect_bits(lo: f64, hi: f64, mut pred: impl FnMut(f64) -> bool) -> f64 {
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

    /// Every split composes within the total, by the upward-rounded composition of dp-core
    /// and by the plain `f64` sum, for 200 totals (from 1e-6 to 1e4, including values whose
    /// nearest quotient overshoots) and parts 1..=64 plus a few large counts; and it is the
    /// largest such value (not below `total·(1 − 2·parts·2⁻⁵²)/parts`). Failing
    /// value: the nearest quotient `total / parts` composes above `total` for some of these
    /// pairs (asserted too, so the test shows what rounding down is for).
    #[test]
    fn split_down_composes_within_the_total() {
        let mut nearest_overshoots = 0usize;
        let totals: Vec<f64> = (0..200)
            .map(|i| 1e-6 * 10f64.powf(i as f64 / 19.9) * (1.0 + 0.013 * (i % 7) as f64))
            .chain([0.1, 0.3, 1.0, 2.0 / 3.0, 7.0, 30.0])
            .collect();
        for &total in &totals {
            for parts in (1u64..=64).chain([100, 1000, 12_345]) {
                let q = split_down(total, parts);
                let composed = (0..parts).fold(0.0f64, |a, _| add_up(a, q));
                let plain = (0..parts).fold(0.0f64, |a, _| a + q);
                assert!(
                    composed <= total,
                    "{total} / {parts}: {q} composes to {composed}"
                );
                assert!(plain <= total, "{total} / {parts}: plain sum {plain}");
                let nearest = total / parts as f64;
                let floor = nearest * (1.0 - 2.0 * parts as f64 * f64::EPSILON);
                assert!(q <= nearest && q >= floor, "{total}/{parts}: {q}");
                // the largest: one ulp more composes above the total
                if q < nearest {
                    let more = (0..parts).fold(0.0f64, |a, _| add_up(a, next_up(q)));
                    assert!(more > total, "{total}/{parts}: {q} is not the largest");
                }
                if (0..parts).fold(0.0f64, |a, _| a + nearest) > total {
                    nearest_overshoots += 1;
                }
            }
        }
        assert!(
            nearest_overshoots > 0,
            "the nearest quotient never overshot"
        );
        assert_eq!(split_down(0.5, 1), 0.5);
        assert_eq!(split_down(0.0, 7), 0.0);
        // the analytic branch: far below the total, but positive and within it
        let q = split_down(1.0, 1 << 21);
        let k = (1u64 << 21) as f64;
        assert!(q > 0.0 && q * k <= 1.0 && q * k > 1.0 - 1e-9);
    }

    #[test]
    fn bisection_finds_threshold() {
        let x = bisect_bits(0.0, 10.0, |x| x * x >= 2.0);
        assert!(x * x >= 2.0);
        assert!(next_down(x) * next_down(x) < 2.0);
    }
}
