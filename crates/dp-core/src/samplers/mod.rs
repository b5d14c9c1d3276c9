//! Noise samplers, one file per distribution.
//!
//! The discrete samplers ([`DiscreteLaplace`], [`DiscreteGaussian`],
//! [`sample_bernoulli_exp`], [`sample_uniform_below`]) are exact: their float
//! parameters are converted to exact rationals ([`exact_rational`]) in `new()` and all
//! sampling uses integer arithmetic driven by the caller's RNG (Canonne, Kamath,
//! Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020). The
//! continuous [`Laplace`] and [`Gaussian`] work on `f64` and carry Mironov's (2012)
//! floating-point caveat.

mod bernoulli;
mod discrete_gaussian;
mod discrete_laplace;
mod gaussian;
mod laplace;
mod rational;
mod uniform;

pub(crate) use bernoulli::{bern_exp_big, bern_exp_u128};
pub use bernoulli::{
    sample_bernoulli_exp, sample_bernoulli_exp_ratio, sample_bernoulli_two_over_e,
};
pub use discrete_gaussian::DiscreteGaussian;
pub use discrete_laplace::DiscreteLaplace;
pub use gaussian::Gaussian;
pub use laplace::Laplace;
pub use rational::exact_rational;
pub use uniform::sample_uniform_below;
pub(crate) use uniform::uniform_u64;

use crate::error::{CoreError, Result};

/// A float in `(0, 1]` from the top 53 bits of `x`: `(⌊x / 2¹¹⌋ + 1) · 2⁻⁵³`.
#[inline]
pub(crate) fn open01(x: u64) -> f64 {
    ((x >> 11) + 1) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// `values[i] += noise()` for all `i` with overflow checks; unchanged on error.
pub(crate) fn add_noise_checked(values: &mut [i64], mut noise: impl FnMut() -> i64) -> Result<()> {
    let mut out = Vec::with_capacity(values.len());
    for (i, &v) in values.iter().enumerate() {
        let z = noise();
        out.push(v.checked_add(z).ok_or_else(|| {
            CoreError::numerical(format!(
                "overflow adding noise {z} to value {v} at index {i}"
            ))
        })?);
    }
    values.copy_from_slice(&out);
    Ok(())
}
