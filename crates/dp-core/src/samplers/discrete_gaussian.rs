//! The discrete Gaussian distribution on ℤ, sampled exactly.

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::{CryptoRng, Rng};

use super::add_noise_checked;
use super::bernoulli::{bern_exp_big, bern_exp_u128};
use super::discrete_laplace::sample_small as dlap_small;
use super::rational::exact_rational;
use crate::error::{CoreError, Result, check_positive};

/// Exact parameters: `σ² = a/b` in lowest terms, `t = ⌊σ⌋ + 1`, `den = 2·a·b·t²`.
#[derive(Clone, Debug)]
enum Params {
    Small {
        a: u128,
        b: u128,
        t: u64,
        den: u128,
    },
    Big {
        a: BigUint,
        b: BigUint,
        t: u64,
        den: BigUint,
    },
}

/// The discrete Gaussian `P(x) ∝ exp(−x²/(2σ²))` on ℤ, sampled **exactly** with
/// Canonne–Kamath–Steinke (NeurIPS 2020), Algorithm 3.
///
/// `new` converts `σ²` to its exact rational value `a/b`; sampling uses only integer
/// arithmetic: with `t = ⌊σ⌋ + 1`, repeat { `Y` ← discrete Laplace with scale `t`
/// ([`super::DiscreteLaplace`]'s algorithm); accept `Y` with probability
/// `exp(−(|Y| − σ²/t)²/(2σ²))` = Bernoulli(exp(−γ)) with the exact rational
/// `γ = (|Y|·b·t − a)² / (2·a·b·t²)` }.
///
/// Privacy: adding it to an integer query of ℓ₂ sensitivity Δ gives (Δ²/(2σ²))-zCDP
/// (CKS20 Theorem 14). Its variance is at most σ² (CKS20 Corollary 9).
///
/// `σ²` above [`DiscreteGaussian::MAX_SIGMA2`] is rejected; samples are clamped to
/// `±i64::MAX`, an event of probability below `exp(−2¹²)` at the largest σ².
#[derive(Clone, Debug)]
pub struct DiscreteGaussian {
    sigma2: f64,
    params: Params,
}

impl DiscreteGaussian {
    /// The largest accepted variance parameter σ², 2¹⁰⁰ (σ = 2⁵⁰).
    pub const MAX_SIGMA2: f64 = 1_267_650_600_228_229_401_496_703_205_376.0;

    /// Discrete Gaussian with variance parameter `sigma2 = σ² > 0` (finite, at most
    /// [`Self::MAX_SIGMA2`]).
    pub fn new(sigma2: f64) -> Result<Self> {
        let sigma2 = check_positive("sigma2", sigma2)?;
        if sigma2 > Self::MAX_SIGMA2 {
            return Err(CoreError::invalid(
                "sigma2",
                crate::Num(sigma2),
                "must be <= 2^100, the largest variance the exact sampler draws from; noise this \
                 large comes from a budget too small for the sensitivity: give a larger budget",
            ));
        }
        let r = exact_rational(sigma2)?;
        let a = r.numer().magnitude().clone();
        let b = r.denom().magnitude().clone();
        // ⌊√(a/b)⌋ = ⌊√⌊a/b⌋⌋.
        let floor_sigma = (&a / &b).sqrt();
        let t = (floor_sigma + 1u32)
            .to_u64()
            .ok_or_else(|| CoreError::numerical("discrete Gaussian: t does not fit in u64"))?;
        let den = BigUint::from(2u32) * &a * &b * BigUint::from(t) * BigUint::from(t);
        let params = match (a.to_u128(), b.to_u128(), den.to_u128()) {
            (Some(a), Some(b), Some(den)) => Params::Small { a, b, t, den },
            _ => Params::Big { a, b, t, den },
        };
        Ok(DiscreteGaussian { sigma2, params })
    }

    /// The variance parameter σ² (as given).
    pub fn sigma2(&self) -> f64 {
        self.sigma2
    }

    /// One exact sample.
    pub fn sample<R: Rng + CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        match &self.params {
            Params::Small { a, b, t, den } => loop {
                let y = dlap_small(rng, *t, 1);
                let ay = y.unsigned_abs() as u128;
                let num = ay
                    .checked_mul(*b)
                    .and_then(|v| v.checked_mul(*t as u128))
                    .map(|v| v.abs_diff(*a))
                    .and_then(|d| d.checked_mul(d));
                let accept = match num {
                    Some(n) => bern_exp_u128(rng, n, *den),
                    None => {
                        let a = BigUint::from(*a);
                        let b = BigUint::from(*b);
                        let den = BigUint::from(*den);
                        bern_exp_big(rng, &gamma_numerator(ay, &a, &b, *t), &den)
                    }
                };
                if accept {
                    return y;
                }
            },
            Params::Big { a, b, t, den } => loop {
                let y = dlap_small(rng, *t, 1);
                let num = gamma_numerator(y.unsigned_abs() as u128, a, b, *t);
                if bern_exp_big(rng, &num, den) {
                    return y;
                }
            },
        }
    }

    /// Adds independent noise to every value, checking for overflow. On error the
    /// slice is left unchanged.
    pub fn add_noise<R: Rng + CryptoRng + ?Sized>(
        &self,
        values: &mut [i64],
        rng: &mut R,
    ) -> Result<()> {
        add_noise_checked(values, || self.sample(rng))
    }
}

/// `(|y|·b·t − a)²` on big integers.
fn gamma_numerator(ay: u128, a: &BigUint, b: &BigUint, t: u64) -> BigUint {
    let ybt = BigUint::from(ay) * b * BigUint::from(t);
    let d = if &ybt >= a { ybt - a } else { a - ybt };
    &d * &d
}
