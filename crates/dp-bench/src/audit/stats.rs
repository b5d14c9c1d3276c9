//! Exact binomial confidence bounds for the empirical privacy audit: the regularized
//! incomplete beta function, its inverse, and Clopper–Pearson bounds.
//!
//! Clopper and Pearson (1934): for `k` successes in `n` Bernoulli(p) trials, the one-sided
//! lower bound at confidence `1 − a` is the `p_L` with `P(Bin(n, p_L) ≥ k) = a`, and the
//! upper bound the `p_U` with `P(Bin(n, p_U) ≤ k) = a`. Since
//! `P(Bin(n, p) ≥ k) = I_p(k, n − k + 1)` (DLMF 8.17.5 with the binomial–beta relation),
//! both are beta quantiles; they are computed here by bisection on `I_x(a, b)`, which comes
//! from the `special` crate (Algorithm AS 63, Majumder and Bhattacharjee 1973: Soper's
//! reduction series, summed until a term is below 1e-15 of the sum, with `ln B(a, b)` from
//! `libm`'s `lgamma`). No normal approximation, so the bounds hold at small counts, where the
//! audit's best events live.
//!
//! **Which crate (issue #28), measured** (release build, 2026-11-27, against the binomial
//! tail summed term by term from the mode by the ratio recurrence, which needs no special
//! function; 38 points with `n` from 10 to 2 000 000, `k` from 3 to 1 000 000, `p` from 0.7
//! to 1.1 times `k/n`; `benches/incomplete_beta/`, command in docs/benchmarks.md):
//!
//! | implementation | worst relative error | 2 000 evaluations at `(a, b)` = (120, 499 881) / (250 000, 250 001) |
//! |---|---|---|
//! | `special` 0.14 (used) | 1.1e-9 | 1.0 ms / 29 ms |
//! | the Lentz continued fraction this module had (same reference, 34 of the points) | 9.1e-10 | 2.0 ms / 5.1 ms |
//! | statrs 0.19 `beta_reg` | 1.7e-2 (stops after 140 terms, unconverged, at `n` ≥ 500 000, `k ≈ n/2`) | 1.1 ms / 3.5 ms |
//! | puruspe 0.4 `betai` | 37 (its quadrature branch for `a, b` > 3 000, and its continued fraction in the far tail) | 2.3 ms / 1.7 ms |
//!
//! The errors of about 1e-9 at `n` ≥ 500 000 are the same in `special` and the old fraction:
//! both form the prefactor `x^a (1 − x)^b / B(a, b)` from logarithms of size `~n`, so `n·u`
//! is their floor. `special` is slower near `a ≈ b ≈ n/2` (its series needs `~√n` terms
//! there, the fraction fewer); a bound costs about 50 evaluations, negligible beside the
//! mechanism runs an audit makes, so accuracy decided.

use special::Beta;

use crate::{BenchError, Result};

/// The regularized incomplete beta function I_x(a, b) for a, b > 0 and x ∈ [0, 1]
/// (`special`'s Algorithm AS 63; DLMF 8.17.2 for the definition). An error for arguments
/// outside that range, or a non-finite result.
pub fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> Result<f64> {
    if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() && (0.0..=1.0).contains(&x)) {
        return Err(BenchError::Statistics(format!(
            "incomplete beta needs a, b > 0 and 0 ≤ x ≤ 1 (a = {a}, b = {b}, x = {x})"
        )));
    }
    let value = x.inc_beta(a, b, a.ln_beta(b));
    if !value.is_finite() {
        return Err(BenchError::Statistics(format!(
            "incomplete beta is not finite (a = {a}, b = {b}, x = {x})"
        )));
    }
    Ok(value.clamp(0.0, 1.0))
}

/// The `x` with `I_x(a, b) = target` (a beta quantile), by bisection to 1e-15 absolute.
pub fn inverse_regularized_incomplete_beta(a: f64, b: f64, target: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&target) {
        return Err(BenchError::Statistics(format!(
            "beta quantile level {target} is not in [0, 1]"
        )));
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        if hi - lo <= 1e-15 {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if regularized_incomplete_beta(a, b, mid)? < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

/// One-sided Clopper–Pearson lower bound on p at confidence `1 − a` from `k` successes in
/// `n` trials: 0 when `k = 0`.
pub fn clopper_pearson_lower(k: u64, n: u64, a: f64) -> Result<f64> {
    check_counts(k, n, a)?;
    if k == 0 {
        return Ok(0.0);
    }
    // P(Bin(n, p) ≥ k) = I_p(k, n − k + 1) = a
    inverse_regularized_incomplete_beta(k as f64, (n - k + 1) as f64, a)
}

/// One-sided Clopper–Pearson upper bound on p at confidence `1 − a`: 1 when `k = n`.
pub fn clopper_pearson_upper(k: u64, n: u64, a: f64) -> Result<f64> {
    check_counts(k, n, a)?;
    if k == n {
        return Ok(1.0);
    }
    // P(Bin(n, p) ≤ k) = 1 − I_p(k + 1, n − k) = I_{1−p}(n − k, k + 1) = a
    Ok(1.0 - inverse_regularized_incomplete_beta((n - k) as f64, (k + 1) as f64, a)?)
}

fn check_counts(k: u64, n: u64, a: f64) -> Result<()> {
    if n == 0 || k > n || !(a > 0.0 && a < 1.0) {
        return Err(BenchError::Statistics(format!(
            "Clopper–Pearson bound needs 0 ≤ k ≤ n, n ≥ 1 and 0 < a < 1 (k = {k}, n = {n}, a = {a})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(Bin(n, p) ≥ k) by direct summation of the probability mass (independent reference).
    fn binomial_tail(n: u64, k: u64, p: f64) -> f64 {
        let mut total = 0.0;
        for j in k..=n {
            let ln_choose = ln_factorial(n) - ln_factorial(j) - ln_factorial(n - j);
            total += (ln_choose + j as f64 * p.ln() + (n - j) as f64 * (1.0 - p).ln()).exp();
        }
        total
    }

    fn ln_factorial(m: u64) -> f64 {
        (1..=m).map(|i| (i as f64).ln()).sum()
    }

    #[test]
    fn incomplete_beta_closed_forms() {
        for &x in &[0.0, 1e-9, 0.1, 0.37, 0.5, 0.93, 1.0] {
            let f = |a, b| regularized_incomplete_beta(a, b, x).unwrap();
            assert!((f(1.0, 1.0) - x).abs() < 1e-12); // uniform
            assert!((f(3.0, 1.0) - x.powi(3)).abs() < 1e-12); // I_x(a, 1) = x^a
            assert!((f(1.0, 4.0) - (1.0 - (1.0 - x).powi(4))).abs() < 1e-12);
        }
        // symmetric beta: median 1/2
        assert!((regularized_incomplete_beta(7.0, 7.0, 0.5).unwrap() - 0.5).abs() < 1e-12);
        assert!(regularized_incomplete_beta(0.0, 1.0, 0.5).is_err());
        assert!(regularized_incomplete_beta(1.0, 1.0, 1.5).is_err());
    }

    #[test]
    fn incomplete_beta_matches_binomial_sums() {
        for &(n, k) in &[(10u64, 3u64), (25, 1), (25, 25), (60, 17), (200, 150)] {
            for &p in &[0.01, 0.2, 0.5, 0.77, 0.99] {
                let want = binomial_tail(n, k, p);
                let got = regularized_incomplete_beta(k as f64, (n - k + 1) as f64, p).unwrap();
                assert!(
                    (got - want).abs() <= 1e-11 * want.max(1e-300) + 1e-300,
                    "n={n} k={k} p={p}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn clopper_pearson_closed_forms_and_reference() {
        // k = 0: upper bound solves (1 − p)^n = a; k = n: lower bound solves p^n = a.
        let (n, a) = (50u64, 0.01f64);
        let up = clopper_pearson_upper(0, n, a).unwrap();
        assert!((up - (1.0 - a.powf(1.0 / n as f64))).abs() < 1e-12);
        let lo = clopper_pearson_lower(n, n, a).unwrap();
        assert!((lo - a.powf(1.0 / n as f64)).abs() < 1e-12);
        assert_eq!(clopper_pearson_lower(0, n, a).unwrap(), 0.0);
        assert_eq!(clopper_pearson_upper(n, n, a).unwrap(), 1.0);
        // the exact two-sided 95% interval for 5 successes in 10 trials, as tabulated by
        // R's binom.test(5, 10): (0.1870860, 0.8129140)
        let lo = clopper_pearson_lower(5, 10, 0.025).unwrap();
        let hi = clopper_pearson_upper(5, 10, 0.025).unwrap();
        assert!((lo - 0.1870860).abs() < 5e-7 && (hi - 0.8129140).abs() < 5e-7);
        assert!(clopper_pearson_lower(3, 2, 0.1).is_err());
        assert!(clopper_pearson_lower(1, 2, 0.0).is_err());
    }

    #[test]
    fn clopper_pearson_inverts_the_binomial_tail_at_large_n() {
        // the defining equations, checked with the direct sum at moderate n and with the
        // beta function at audit-sized n
        let (k, n, a) = (37u64, 400u64, 1e-6);
        let lo = clopper_pearson_lower(k, n, a).unwrap();
        assert!((binomial_tail(n, k, lo) - a).abs() < 1e-9 * a * 1e3);
        let hi = clopper_pearson_upper(k, n, a).unwrap();
        assert!(((1.0 - binomial_tail(n, k + 1, hi)) - a).abs() < 1e-9 * a * 1e3);
        let (k, n) = (120u64, 500_000u64);
        let lo = clopper_pearson_lower(k, n, a).unwrap();
        let hi = clopper_pearson_upper(k, n, a).unwrap();
        let phat = k as f64 / n as f64;
        assert!(lo < phat && phat < hi);
        let tail = regularized_incomplete_beta(k as f64, (n - k + 1) as f64, lo).unwrap();
        assert!((tail - a).abs() < 1e-9);
    }
}
