//! Exact moments and tail probabilities of the discrete noise distributions, used to state
//! the expected error of a release before it runs and to check observed errors against it.
//!
//! These are reporting tools only: nothing here is on a sampling path. The discrete Laplace
//! quantities are closed forms; the discrete Gaussian ones are sums of its probability mass
//! function (exact up to floating-point summation) for σ ≤ 10⁴, and the normal
//! approximation with continuity correction above, where the two differ by less than the
//! floating-point error of the sums.

/// The additive count noise of a mechanism.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CountNoise {
    /// Discrete Gaussian N_Z(0, σ²): P(x) ∝ exp(−x²/(2σ²)) (Canonne–Kamath–Steinke 2020).
    DiscreteGaussian {
        /// σ², the scale parameter (not exactly the variance).
        sigma2: f64,
    },
    /// Discrete Laplace: P(x) ∝ exp(−|x|/t).
    DiscreteLaplace {
        /// The scale t.
        scale: f64,
    },
}

const EXACT_SUM_MAX_SIGMA: f64 = 1.0e4;

impl CountNoise {
    /// Exact variance. Discrete Laplace: 2e^{−1/t}/(1 − e^{−1/t})². Discrete Gaussian: the
    /// pmf-weighted sum of x² (always ≤ σ², CKS20 Prop. 19).
    pub fn variance(&self) -> f64 {
        match *self {
            CountNoise::DiscreteLaplace { scale } => {
                let q = (-1.0 / scale).exp();
                2.0 * q / ((1.0 - q) * (1.0 - q))
            }
            CountNoise::DiscreteGaussian { sigma2 } => {
                let sigma = sigma2.sqrt();
                if sigma > EXACT_SUM_MAX_SIGMA {
                    return sigma2;
                }
                let (norm, second) = gaussian_sums(sigma2, |x| x * x);
                second / norm
            }
        }
    }

    /// P(|X| > k) for an integer k ≥ 0.
    pub fn tail(&self, k: u64) -> f64 {
        match *self {
            CountNoise::DiscreteLaplace { scale } => {
                let q = (-1.0 / scale).exp();
                2.0 * (-((k + 1) as f64) / scale).exp() / (1.0 + q)
            }
            CountNoise::DiscreteGaussian { sigma2 } => {
                let sigma = sigma2.sqrt();
                if sigma > EXACT_SUM_MAX_SIGMA {
                    // continuity-corrected normal tail
                    return erfc((k as f64 + 0.5) / (sigma * std::f64::consts::SQRT_2));
                }
                let limit = (40.0 * sigma).ceil() as i64 + 1;
                let mut norm = 0.0;
                let mut tail = 0.0;
                // sum the smallest terms first for accuracy
                for x in (1..=limit).rev() {
                    let p = (-((x * x) as f64) / (2.0 * sigma2)).exp();
                    norm += 2.0 * p;
                    if x as u64 > k {
                        tail += 2.0 * p;
                    }
                }
                norm += 1.0;
                tail / norm
            }
        }
    }

    /// The `q`-quantile (0 < q < 1) of max_i |X_i| over `count` independent draws: the
    /// smallest integer k with P(|X| ≤ k)^count ≥ q.
    pub fn max_abs_quantile(&self, count: usize, q: f64) -> u64 {
        let count = count.max(1) as f64;
        let ok = |k: u64| count * (-self.tail(k)).ln_1p() >= q.ln();
        let mut hi = 1u64;
        while !ok(hi) {
            hi = hi.saturating_mul(2);
            if hi == u64::MAX {
                return hi;
            }
        }
        let mut lo = 0u64;
        if ok(0) {
            return 0;
        }
        // invariant: !ok(lo), ok(hi)
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }
}

/// (Σ_x e^{−x²/2σ²}, Σ_x f(x) e^{−x²/2σ²}) over x ∈ [−40σ, 40σ], smallest terms first.
fn gaussian_sums(sigma2: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    let limit = (40.0 * sigma2.sqrt()).ceil() as i64 + 1;
    let mut norm = 0.0;
    let mut acc = 0.0;
    for x in (1..=limit).rev() {
        let xf = x as f64;
        let p = (-(xf * xf) / (2.0 * sigma2)).exp();
        norm += 2.0 * p;
        acc += 2.0 * p * f(xf);
    }
    (norm + 1.0, acc + f(0.0))
}

/// Complementary error function, Chebyshev fit with fractional error below 1.2·10⁻⁷
/// (Press et al., Numerical Recipes §6.2). Reporting only.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let ans = t * poly.exp();
    if x >= 0.0 { ans } else { 2.0 - ans }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_reference_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207050285, erfc(2) = 0.004677734981047 (tables)
        for (x, want) in [
            (0.0, 1.0),
            (1.0, 0.157_299_207_050_285),
            (2.0, 0.004_677_734_981_047),
            (-1.0, 1.842_700_792_949_715),
        ] {
            assert!((erfc(x) - want).abs() <= 2e-7 * want, "erfc({x})");
        }
    }

    #[test]
    fn discrete_laplace_closed_forms_match_pmf_sums() {
        let t = 3.0;
        let q: f64 = (-1.0f64 / t).exp();
        let c = (1.0 - q) / (1.0 + q);
        let (mut var, mut tail3) = (0.0, 0.0);
        for x in -400i64..=400 {
            let p = c * q.powi(x.unsigned_abs() as i32);
            var += p * (x * x) as f64;
            if x.abs() > 3 {
                tail3 += p;
            }
        }
        let noise = CountNoise::DiscreteLaplace { scale: t };
        assert!((noise.variance() - var).abs() < 1e-9 * var);
        assert!((noise.tail(3) - tail3).abs() < 1e-12);
    }

    #[test]
    fn discrete_gaussian_variance_close_to_sigma2_for_large_sigma() {
        // CKS20: Var ≤ σ², and σ² − Var is exponentially small once σ ≥ 2.
        for s2 in [4.0, 100.0, 1e4] {
            let v = CountNoise::DiscreteGaussian { sigma2: s2 }.variance();
            assert!(
                v <= s2 * (1.0 + 1e-12) && v > s2 * (1.0 - 1e-6),
                "{s2}: {v}"
            );
        }
        // small σ: variance well below σ². σ² = 0.1: weights e^{-x²/0.2} are 1, e^{-5} (x = ±1),
        // e^{-20} (x = ±2), e^{-45} (±3, negligible), so Var = (2e^{-5} + 8e^{-20})/(1 + 2e^{-5} + 2e^{-20}).
        let v = CountNoise::DiscreteGaussian { sigma2: 0.1 }.variance();
        let (p1, p2) = ((-5.0f64).exp(), (-20.0f64).exp());
        let want = (2.0 * p1 + 8.0 * p2) / (1.0 + 2.0 * p1 + 2.0 * p2);
        assert!((v - want).abs() < 1e-15, "{v} vs {want}");
    }

    #[test]
    fn exact_and_normal_tails_agree_at_the_switch() {
        // at σ = 10⁴ both tails must agree to the erfc fit's accuracy
        let s2 = 1e8;
        let exact = CountNoise::DiscreteGaussian { sigma2: s2 }.tail(20_000);
        let approx = erfc(20_000.5 / (1e4 * std::f64::consts::SQRT_2));
        assert!((exact - approx).abs() < 1e-6 * approx + 1e-12);
    }

    #[test]
    fn max_quantile_is_monotone_in_q_and_count() {
        let noise = CountNoise::DiscreteGaussian { sigma2: 400.0 };
        let a = noise.max_abs_quantile(100, 0.05);
        let b = noise.max_abs_quantile(100, 0.95);
        let c = noise.max_abs_quantile(10_000, 0.95);
        assert!(a < b && b < c, "{a} {b} {c}");
        // one draw, median of |X|: about 0.674σ = 13.5
        let med = noise.max_abs_quantile(1, 0.5);
        assert!((13..=14).contains(&med), "{med}");
    }
}
