//! Exact Bernoulli samplers: Bernoulli(p) for rational p, and Bernoulli(exp(−γ)).
//!
//! Bernoulli(n/d) is `uniform_below(d) < n` (no draw when `n = 0` or `n ≥ d`).
//! Bernoulli(exp(−γ)) follows Canonne–Kamath–Steinke (NeurIPS 2020), Algorithm 1:
//! for γ ∈ [0, 1], set K = 1 and while Bernoulli(γ/K) succeeds increment K; return
//! "K is odd" (P = Σ_k (−γ)^k/k! = e^{−γ}). For γ > 1, return false as soon as one of
//! ⌊γ⌋ draws of Bernoulli(e^{−1}) fails, then one Bernoulli(e^{−(γ−⌊γ⌋)})
//! (e^{−γ} = (e^{−1})^{⌊γ⌋} · e^{−(γ−⌊γ⌋)}). All arithmetic is exact: `u128` with
//! checked operations, falling back to big integers.

use num_bigint::BigUint;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use rand::{CryptoRng, Rng};

use super::uniform::{uniform_big, uniform_u128};
use crate::error::{CoreError, Result};

/// Bernoulli(num/den), `den >= 1`.
#[inline]
pub(crate) fn bern_u128<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    if num == 0 {
        false
    } else if num >= den {
        true
    } else {
        uniform_u128(rng, den) < num
    }
}

/// Bernoulli(num/den), `den >= 1`.
pub(crate) fn bern_big<R: Rng + ?Sized>(rng: &mut R, num: &BigUint, den: &BigUint) -> bool {
    if num.is_zero() {
        false
    } else if num >= den {
        true
    } else {
        &uniform_big(rng, den) < num
    }
}

/// Bernoulli(exp(−num/den)) for `num <= den`, `den >= 1` (CKS20 Algorithm 1).
#[inline]
fn bern_exp_unit_u128<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    let mut k: u128 = 1;
    loop {
        let Some(dk) = den.checked_mul(k) else {
            // Astronomically unlikely (K would need ~2^64 steps); stay exact anyway.
            return bern_exp_unit_big_from(rng, &BigUint::from(num), &BigUint::from(den), k);
        };
        if bern_u128(rng, num, dk) {
            k += 1;
        } else {
            return k % 2 == 1;
        }
    }
}

/// CKS20 Algorithm 1 on big integers, starting the loop at `K = k0`.
fn bern_exp_unit_big_from<R: Rng + ?Sized>(
    rng: &mut R,
    num: &BigUint,
    den: &BigUint,
    k0: u128,
) -> bool {
    let mut k = BigUint::from(k0);
    loop {
        let dk = den * &k;
        if bern_big(rng, num, &dk) {
            k += 1u32;
        } else {
            return k.is_odd();
        }
    }
}

/// Bernoulli(e^{−1}).
#[inline]
pub(crate) fn bern_exp_minus_one<R: Rng + ?Sized>(rng: &mut R) -> bool {
    bern_exp_unit_u128(rng, 1, 1)
}

/// Bernoulli(exp(−num/den)) for any `num >= 0`, `den >= 1`, on `u128`.
#[inline]
pub(crate) fn bern_exp_u128<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    if num <= den {
        return bern_exp_unit_u128(rng, num, den);
    }
    let whole = num / den;
    let frac = num % den;
    let mut i: u128 = 0;
    while i < whole {
        if !bern_exp_minus_one(rng) {
            return false;
        }
        i += 1;
    }
    bern_exp_unit_u128(rng, frac, den)
}

/// Bernoulli(exp(−num/den)) for any `num >= 0`, `den >= 1`, on big integers.
pub(crate) fn bern_exp_big<R: Rng + ?Sized>(rng: &mut R, num: &BigUint, den: &BigUint) -> bool {
    if let (Some(n), Some(d)) = (num.to_u128(), den.to_u128()) {
        return bern_exp_u128(rng, n, d);
    }
    let (whole, frac) = num.div_rem(den);
    let mut i = BigUint::zero();
    while i < whole {
        if !bern_exp_minus_one(rng) {
            return false;
        }
        i += 1u32;
    }
    if let (Some(n), Some(d)) = (frac.to_u128(), den.to_u128()) {
        bern_exp_unit_u128(rng, n, d)
    } else {
        bern_exp_unit_big_from(rng, &frac, den, 1)
    }
}

/// Exactly Bernoulli(exp(−γ)) for a rational `γ >= 0` (Canonne–Kamath–Steinke 2020,
/// Algorithm 1 and the loop for γ > 1; see the module docs). Negative γ is an error.
///
/// The expected number of uniform draws is bounded by a constant independent of γ.
pub fn sample_bernoulli_exp<R: Rng + CryptoRng + ?Sized>(
    rng: &mut R,
    gamma: &BigRational,
) -> Result<bool> {
    if gamma.is_negative() {
        return Err(CoreError::invalid("gamma", gamma, "must be >= 0"));
    }
    let num = gamma.numer().magnitude();
    let den = gamma.denom().magnitude();
    if den.is_zero() {
        return Err(CoreError::invalid("gamma", gamma, "has a zero denominator"));
    }
    Ok(bern_exp_big(rng, num, den))
}

/// Exactly Bernoulli(exp(−num/den)) for integers `num >= 0`, `den >= 1` given as `u128`: the
/// same algorithm and the same consumption of the random stream as
/// [`sample_bernoulli_exp`] on the rational `num/den` (Canonne–Kamath–Steinke, NeurIPS
/// 2020, Algorithm 1), without big-integer allocation. `den = 0` is an error.
pub fn sample_bernoulli_exp_ratio<R: Rng + CryptoRng + ?Sized>(
    rng: &mut R,
    num: u128,
    den: u128,
) -> Result<bool> {
    if den == 0 {
        return Err(CoreError::invalid(
            "gamma",
            format!("{num}/0"),
            "has a zero denominator",
        ));
    }
    Ok(bern_exp_u128(rng, num, den))
}

/// Exactly Bernoulli(ln 2) (Flajolet, Pelletier, Soria, "On Buffon machines and numbers",
/// SODA 2011, §2: `ln 2 = Σ_{k≥1} 1/(k·2^k)`): draw `K` with `P(K = k) = 2^{−k}` (fair coins
/// `uniform(2)` until the first 0) and return Bernoulli(1/K).
fn bern_ln2<R: Rng + ?Sized>(rng: &mut R) -> bool {
    let mut k: u64 = 1;
    while uniform_u128(rng, 2) == 1 {
        k = k.saturating_add(1);
    }
    uniform_u128(rng, u128::from(k)) == 0
}

/// Exactly Bernoulli(2/e).
///
/// `2/e = exp(−(1 − ln 2))` with `γ = 1 − ln 2 ∈ [0, 1]`: Canonne–Kamath–Steinke's
/// Algorithm 1 (set `K = 1`; while Bernoulli(γ/K) succeeds increment `K`; return "K is
/// odd") needs only coins of probability `γ/K = (1/K)·(1 − ln 2)`, each the conjunction of
/// an independent Bernoulli(1/K) and the negation of an exact Bernoulli(ln 2) (Flajolet,
/// Pelletier, Soria 2011). Every coin is a comparison of exact uniform integers: no
/// floating point. The expected number of uniform draws is a small constant.
pub fn sample_bernoulli_two_over_e<R: Rng + CryptoRng + ?Sized>(rng: &mut R) -> bool {
    let mut k: u128 = 1;
    loop {
        // Bernoulli(γ/K) = Bernoulli(1/K) ∧ ¬Bernoulli(ln 2), independent coins.
        let coin = uniform_u128(rng, k) == 0 && !bern_ln2(rng);
        if coin {
            k = k.saturating_add(1);
        } else {
            return k % 2 == 1;
        }
    }
}
