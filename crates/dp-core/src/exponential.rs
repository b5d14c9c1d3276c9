//! The exponential mechanism, as permute-and-flip with exact Bernoulli draws.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use rand::{CryptoRng, Rng};

use crate::error::{CoreError, Result, check_positive};
use crate::loss::PrivacyLoss;
use crate::samplers::{bern_exp_big, bern_exp_u128, exact_rational, uniform_u64};

/// Private selection of a high-scoring candidate: the **permute-and-flip** mechanism
/// (McKenna and Sheldon, "Permute-and-Flip: A new mechanism for differentially private
/// selection", NeurIPS 2020), which is ε-DP, never worse than the classical
/// exponential mechanism (McSherry–Talwar 2007) in expected score, and is equivalent
/// to report-noisy-max with exponential noise.
///
/// Visit the candidates in a uniformly random order; accept candidate `r` with
/// probability `exp(−ε·(q* − q_r)/(2Δ))` (with `Δ` in place of `2Δ` when the score is
/// *monotonic*: all scores move in the same direction between neighbours), where `q*`
/// is the best score. The best candidate is always accepted, so at most `n` steps run.
///
/// No floating point on the sampling path: `ε`, `Δ` and the scores are converted to
/// exact rationals ([`crate::exact_rational`]) and each coin is an exact
/// Bernoulli(exp(−γ)) ([`crate::sample_bernoulli_exp`]), so there is no
/// floating-point leakage (cf. Ilvento, "Implementing the Exponential Mechanism with
/// Base-2 Differential Privacy", CCS 2020).
///
/// Privacy: ε-DP ([`ExponentialMechanism::privacy`]); it is also (ε²/8)-zCDP
/// (Cesar and Rogers, "Bounding, Concentrating, and Truncating: Unifying Privacy Loss
/// Composition for Data Analytics", ALT 2021; the exponential mechanism's bounded-range
/// property, which permute-and-flip shares as a report-noisy-max with exponential noise).
#[derive(Clone, Debug)]
pub struct ExponentialMechanism {
    epsilon: f64,
    sensitivity: f64,
    monotonic: bool,
    /// ε/(2Δ) (or ε/Δ if monotonic), exactly.
    coefficient: BigRational,
    /// The same as `u128` numerator and denominator when they fit (fast path).
    coefficient_u128: Option<(u128, u128)>,
}

/// `x = m · 2^e` with `m` a signed integer, `|m| < 2⁵³` (exact decomposition of a finite `f64`).
fn decompose(x: f64) -> (i128, i32) {
    if x == 0.0 {
        return (0, 0);
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1u64 << 52) - 1)) as i128;
    let (m, e) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1i128 << 52), biased - 1075)
    };
    (if bits >> 63 == 1 { -m } else { m }, e)
}

/// `γ = c · (best − q)` as a `u128` fraction when everything fits, exactly.
fn gamma_u128(c: (u128, u128), best: f64, q: f64) -> Option<(u128, u128)> {
    let (m1, e1) = decompose(best);
    let (m2, e2) = decompose(q);
    let (m1, e1) = if m1 == 0 { (0, e2) } else { (m1, e1) };
    let (m2, e2) = if m2 == 0 { (0, e1) } else { (m2, e2) };
    let e = e1.min(e2);
    let (s1, s2) = ((e1 - e) as u32, (e2 - e) as u32);
    if s1 > 73 || s2 > 73 {
        return None;
    }
    let d = (m1 << s1) - (m2 << s2);
    let mut d = u128::try_from(d).ok()?;
    if d == 0 {
        return Some((0, 1));
    }
    let tz = d.trailing_zeros();
    d >>= tz;
    let e = e + tz as i32;
    let num = c.0.checked_mul(d)?;
    if e >= 0 {
        let e = e as u32;
        if e >= 128 || num.leading_zeros() < e {
            return None;
        }
        Some((num << e, c.1))
    } else {
        let e = (-e) as u32;
        if e >= 128 || c.1.leading_zeros() < e {
            return None;
        }
        Some((num, c.1 << e))
    }
}

impl ExponentialMechanism {
    /// A mechanism with privacy parameter `epsilon > 0` for scores of sensitivity
    /// `sensitivity > 0` (the largest change of any one score between neighbouring
    /// datasets); `monotonic` as in the type docs.
    pub fn new(epsilon: f64, sensitivity: f64, monotonic: bool) -> Result<Self> {
        let epsilon = check_positive("epsilon", epsilon)?;
        let sensitivity = check_positive("sensitivity", sensitivity)?;
        let factor = if monotonic { 1 } else { 2 };
        let coefficient = exact_rational(epsilon)?
            / (exact_rational(sensitivity)? * BigRational::from_integer(BigInt::from(factor)));
        let coefficient_u128 = coefficient
            .numer()
            .magnitude()
            .to_u128()
            .zip(coefficient.denom().magnitude().to_u128());
        Ok(ExponentialMechanism {
            epsilon,
            sensitivity,
            monotonic,
            coefficient,
            coefficient_u128,
        })
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The score sensitivity Δ.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// Whether the scores are declared monotonic.
    pub fn monotonic(&self) -> bool {
        self.monotonic
    }

    /// The guarantee: pure ε-DP. (It also satisfies ε²/8-zCDP; see the type docs and
    /// [`Self::zcdp_privacy`].)
    pub fn privacy(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }

    /// The tighter zCDP view: ρ = ε²/8 (rounded up).
    pub fn zcdp_privacy(&self) -> PrivacyLoss {
        let rho = crate::rounding::div_up(crate::rounding::mul_up(self.epsilon, self.epsilon), 8.0);
        PrivacyLoss::Zcdp { rho }
    }

    /// Selects an index of `scores` (higher is better). Empty `scores` or a non-finite
    /// score is an error.
    pub fn select<R: Rng + CryptoRng + ?Sized>(
        &self,
        scores: &[f64],
        rng: &mut R,
    ) -> Result<usize> {
        if scores.is_empty() {
            return Err(CoreError::invalid("scores", "[]", "must not be empty"));
        }
        if let Some((i, s)) = scores.iter().enumerate().find(|(_, s)| !s.is_finite()) {
            return Err(CoreError::invalid(
                "scores",
                format!("scores[{i}] = {s}"),
                "every score must be finite",
            ));
        }
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let best_exact = exact_rational(best)?; // only used off the fast path
        let n = scores.len();
        let mut order: Vec<usize> = (0..n).collect();
        for i in 0..n {
            // Lazy Fisher–Yates: position i gets a uniform choice among the unvisited.
            let j = i + uniform_u64(rng, (n - i) as u64) as usize;
            order.swap(i, j);
            let r = order[i];
            let fast = self
                .coefficient_u128
                .and_then(|c| gamma_u128(c, best, scores[r]));
            let accept = if scores[r] == best {
                true
            } else if let Some((a, b)) = fast {
                bern_exp_u128(rng, a, b)
            } else {
                let gamma = &self.coefficient * (&best_exact - exact_rational(scores[r])?);
                let num = gamma.numer().magnitude();
                let den = gamma.denom().magnitude();
                match (num.to_u128(), den.to_u128()) {
                    (Some(a), Some(b)) => bern_exp_u128(rng, a, b),
                    _ => bern_exp_big(rng, num, den),
                }
            };
            if accept {
                return Ok(r);
            }
        }
        Err(CoreError::numerical(
            "permute-and-flip visited every candidate without accepting (impossible)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_gamma_matches_exact_rational() -> Result<()> {
        let c = (3u128, 8u128); // 3/8
        let cq = BigRational::new(3.into(), 8.into());
        let pairs = [
            (3.0, 1.0),
            (2.5, -0.75),
            (1.0, 0.0),
            (0.0, -1e-3),
            (1e10, 0.1),
            (1.0, 1.0 - f64::EPSILON),
            (5e-324, 0.0),
            (1e300, -1e300),
        ];
        for (best, q) in pairs {
            let exact = &cq * (exact_rational(best)? - exact_rational(q)?);
            match gamma_u128(c, best, q) {
                Some((a, b)) => {
                    let got = BigRational::new(BigInt::from(a), BigInt::from(b));
                    assert_eq!(got, exact, "{best} − {q}");
                }
                // Only allowed to give up when the exact value does not fit.
                None => assert!(
                    exact.numer().magnitude().bits() > 100
                        || exact.denom().magnitude().bits() > 100,
                    "{best} − {q}"
                ),
            }
        }
        Ok(())
    }
}
