//! The discrete Laplace distribution on ℤ, sampled exactly.

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use rand::{CryptoRng, Rng};

use super::add_noise_checked;
use super::bernoulli::{bern_big, bern_exp_big, bern_exp_minus_one, bern_exp_u128, bern_u128};
use super::rational::exact_rational;
use super::uniform::{uniform_big, uniform_u64};
use crate::error::{CoreError, Result, check_positive};

/// The exact parameters `scale = t / s` in lowest terms.
#[derive(Clone, Debug)]
enum Params {
    Small { t: u64, s: u64 },
    Big { t: BigUint, s: BigUint },
}

/// The discrete Laplace distribution `P(x) ∝ exp(−|x|/scale)` on ℤ (also called the
/// two-sided geometric distribution), sampled **exactly** with Canonne–Kamath–Steinke
/// (NeurIPS 2020), Algorithm 2.
///
/// `new` converts the `f64` scale to its exact rational value `t/s` ([`exact_rational`]);
/// sampling then uses only integer arithmetic (`u64`/`u128` with checked operations
/// when `t` and `s` fit in 64 bits, big integers otherwise) and the caller's RNG:
///
/// 1. `U` uniform on `{0, …, t−1}`; with probability `1 − exp(−U/t)` restart;
/// 2. `V` ← number of successes of Bernoulli(e^{−1}) before the first failure;
/// 3. `X = U + t·V` (geometric with parameter `1 − e^{−1/t}`), `Y = ⌊X/s⌋`;
/// 4. a fair sign bit `B`; if `B = 1` and `Y = 0` restart; return `(1 − 2B)·Y`.
///
/// Privacy: adding it to an integer query of ℓ₁ sensitivity Δ gives (Δ/scale)-DP
/// (CKS20 / Ghosh–Roughgarden–Sundararajan 2009).
///
/// Scales above [`DiscreteLaplace::MAX_SCALE`] are rejected; samples are clamped to
/// `±i64::MAX`, an event of probability below `exp(−2¹¹)` at the largest scale.
#[derive(Clone, Debug)]
pub struct DiscreteLaplace {
    scale: f64,
    params: Params,
}

impl DiscreteLaplace {
    /// The largest accepted scale, 2⁵².
    pub const MAX_SCALE: f64 = 4_503_599_627_370_496.0;

    /// Discrete Laplace with the given `scale > 0` (finite, at most [`Self::MAX_SCALE`]).
    pub fn new(scale: f64) -> Result<Self> {
        let scale = check_positive("scale", scale)?;
        if scale > Self::MAX_SCALE {
            return Err(CoreError::invalid(
                "scale",
                crate::Num(scale),
                "must be <= 2^52, the largest scale the exact sampler draws from; noise this large \
                 comes from a budget too small for the sensitivity: give a larger budget",
            ));
        }
        let r = exact_rational(scale)?;
        let t = r.numer().magnitude().clone();
        let s = r.denom().magnitude().clone();
        let params = match (t.to_u64(), s.to_u64()) {
            (Some(t), Some(s)) => Params::Small { t, s },
            _ => Params::Big { t, s },
        };
        Ok(DiscreteLaplace { scale, params })
    }

    /// The scale parameter (as given).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// One exact sample.
    pub fn sample<R: Rng + CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        match &self.params {
            Params::Small { t, s } => sample_small(rng, *t, *s),
            Params::Big { t, s } => sample_big(rng, t, s),
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

/// Saturating conversion of a magnitude and sign to `i64`.
#[inline]
fn signed(mag: u128, negative: bool) -> i64 {
    let m = i64::try_from(mag).unwrap_or(i64::MAX);
    if negative { -m } else { m }
}

/// CKS20 Algorithm 2 with `scale = t/s` on machine integers.
#[inline]
pub(crate) fn sample_small<R: Rng + ?Sized>(rng: &mut R, t: u64, s: u64) -> i64 {
    loop {
        let u = uniform_u64(rng, t);
        if !bern_exp_u128(rng, u as u128, t as u128) {
            continue;
        }
        let mut v: u128 = 0;
        while bern_exp_minus_one(rng) {
            v += 1;
        }
        let x = (u as u128).saturating_add((t as u128).saturating_mul(v));
        let y = x / s as u128;
        let negative = bern_u128(rng, 1, 2);
        if negative && y == 0 {
            continue;
        }
        return signed(y, negative);
    }
}

/// CKS20 Algorithm 2 with `scale = t/s` on big integers.
fn sample_big<R: Rng + ?Sized>(rng: &mut R, t: &BigUint, s: &BigUint) -> i64 {
    let one = BigUint::from(1u32);
    let two = BigUint::from(2u32);
    loop {
        let u = uniform_big(rng, t);
        if !bern_exp_big(rng, &u, t) {
            continue;
        }
        let mut v = BigUint::zero();
        while bern_exp_minus_one(rng) {
            v += 1u32;
        }
        let x = u + t * v;
        let y = x.div_floor(s);
        let negative = bern_big(rng, &one, &two);
        if negative && y.is_zero() {
            continue;
        }
        return signed(y.to_u128().unwrap_or(u128::MAX), negative);
    }
}
