//! The continuous Laplace distribution on `f64` (with the floating-point caveat).

use rand::{CryptoRng, Rng};

use super::open01;
use crate::error::{Result, check_positive};

/// The Laplace distribution with density `exp(−|x|/scale)/(2·scale)`, on `f64`.
///
/// Sampled as `±scale·(−ln U)` with `U` uniform on `(0, 1]` at 53-bit resolution
/// (consumption: one `next_u64` per sample; bits 11..64 give `U`, bit 0 the sign).
///
/// **Floating-point caveat** (Mironov, "On Significance of the Least Significant Bits
/// for Differential Privacy", CCS 2012): the set of `f64` values this can output
/// depends on the data when added to a real-valued answer, so a textbook ε-DP proof
/// does not carry over to the floating-point implementation; release paths on counts
/// should use [`super::DiscreteLaplace`] instead, or snap the result to a grid with the
/// sensitivity inflated by the grid step.
#[derive(Clone, Copy, Debug)]
pub struct Laplace {
    scale: f64,
}

impl Laplace {
    /// Laplace noise with `scale > 0` (finite).
    pub fn new(scale: f64) -> Result<Self> {
        Ok(Laplace {
            scale: check_positive("scale", scale)?,
        })
    }

    /// The scale parameter.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// One sample.
    pub fn sample<R: Rng + CryptoRng + ?Sized>(&self, rng: &mut R) -> f64 {
        let x = rng.next_u64();
        let e = -open01(x).ln();
        if x & 1 == 1 {
            -self.scale * e
        } else {
            self.scale * e
        }
    }
}
