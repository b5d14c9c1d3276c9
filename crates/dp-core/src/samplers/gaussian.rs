//! The continuous Gaussian distribution on `f64` (with the floating-point caveat).

use rand::{CryptoRng, Rng};

use super::open01;
use crate::error::{Result, check_positive};

/// The normal distribution `N(0, σ²)` on `f64`, by the Box–Muller transform
/// `σ·√(−2 ln U₁)·cos(2π U₂)` (consumption: two `next_u64` per sample).
///
/// Privacy: adding it to a query of ℓ₂ sensitivity Δ gives (Δ²/(2σ²))-zCDP
/// (Bun–Steinke 2016, Prop. 1.6) in exact arithmetic.
///
/// **Floating-point caveat** (Mironov, CCS 2012): the guarantee is for real-valued
/// noise; the `f64` implementation can leak through the low-order bits. Use
/// [`super::DiscreteGaussian`] for counts.
#[derive(Clone, Copy, Debug)]
pub struct Gaussian {
    sigma: f64,
}

impl Gaussian {
    /// Gaussian noise with standard deviation `sigma > 0` (finite).
    pub fn new(sigma: f64) -> Result<Self> {
        Ok(Gaussian {
            sigma: check_positive("sigma", sigma)?,
        })
    }

    /// The standard deviation σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// One sample.
    pub fn sample<R: Rng + CryptoRng + ?Sized>(&self, rng: &mut R) -> f64 {
        let u1 = open01(rng.next_u64());
        let u2 = open01(rng.next_u64());
        let r = (-2.0 * u1.ln()).sqrt();
        self.sigma * r * (std::f64::consts::TAU * u2).cos()
    }
}
