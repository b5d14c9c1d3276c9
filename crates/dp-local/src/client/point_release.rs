//! The local point release `W_x` of seed 004 Definition 5.5, with constants derived so that
//! `E[W_x] = x` exactly and the max-divergence bound holds for every ε > 0.
//!
//! ## The construction (seed 004 §5.1.1, after Duchi, Jordan, Wainwright 2018)
//!
//! For `x` in the unit ball `B₂^m` and ε > 0:
//!
//! 1. `U ∈ {±x/‖x‖}` with `P[U = x/‖x‖] = (1 + ‖x‖)/2`, so `E[U] = x` (any unit `U` when
//!    `x = 0`: then both signs are equally likely);
//! 2. `Z ~ N(0, I_m)`, independent of `x`;
//! 3. `S ∈ {±1}` with `E[S | Z, U] = b · sign⟨Z, U⟩`, i.e.
//!    `P[S = sign⟨Z, U⟩ | Z, U] = (1 + b)/2`;
//! 4. the message is `W = c · S · Z`.
//!
//! **The bias `b = tanh(ε/2)`.** Given `Z = z`, `S` is a ±1 coin whose probability of `+1`
//! is `(1 ± b)/2` depending on the input. For two inputs the ratio of the probabilities of
//! any outcome is at most `(1 + b)/(1 − b)`, which equals `e^ε` exactly when
//! `b = (e^ε − 1)/(e^ε + 1) = tanh(ε/2)`. So `(Z, S)` — and `W`, a function of it — is
//! ε-LDP for every ε > 0: `Z` does not depend on the input, and the ratio of the joint
//! densities is the ratio of the coin's probabilities. The seed's `b = ε/3` (its Fact 5.8)
//! is valid only for ε ≤ 1/2 and wastes budget: `tanh(ε/2) > ε/3` for all ε ∈ (0, 1/2].
//!
//! **The scale `c = √(π/2) / tanh(ε/2)`.** Given `U = u` (a unit vector),
//! `E[⟨W, u⟩ | U = u] = c · b · E|⟨Z, u⟩| = c · b · √(2/π)` because `⟨Z, u⟩ ~ N(0, 1)` has
//! `E|⟨Z, u⟩| = √(2/π)`; and for `v ⊥ u`, `E[⟨W, v⟩ | U = u] = 0` since `⟨Z, v⟩` is
//! independent of `⟨Z, u⟩` and symmetric. So `E[W | U] = U` iff `c = √(π/2)/b`, and then
//! `E[W] = E[U] = x`. The seed prints `c = 3/(√π ε)` with `b = ε/3`, giving
//! `E[⟨W, u⟩ | U = u] = √2/π·… ≠ 1`: its Claim 5.6 uses `E|⟨Z, u⟩| = √π`'s reciprocal instead
//! of `√(2/π)`. With the derived constants both properties hold exactly.
//!
//! **Subgaussian scale.** `⟨W, v⟩ = c · S · ⟨Z, v⟩` for a unit `v`: `|⟨W, v⟩| = c|⟨Z, v⟩|`
//! with `⟨Z, v⟩ ~ N(0, 1)`, so `⟨W, v⟩` is `c`-subgaussian (its tails are a standard
//! normal's scaled by `c`), and `E⟨W, v⟩² = c²` exactly. For small ε, `c ≈ 2√(π/2)/ε ≈
//! 2.51/ε` — the `O(1/ε)` of the seed's Claim 5.7.
//!
//! **Exact coin.** The only input-dependent randomness is the coin `S`. It is drawn exactly:
//! `P[S agrees with sign⟨Z, U⟩] = 1/(1 + e^{−ε})`, sampled by proposing "agree" or
//! "disagree" with a fair coin and accepting "disagree" with probability `e^{−ε}` (an exact
//! Bernoulli(exp(−ε)) of dp-core on the exact rational value of ε), repeating until
//! accepted — so the e^ε ratio holds exactly, not up to floating-point error. `Z` and `U`
//! use floating point, which cannot leak the input: `Z` is independent of it, and `U` only
//! chooses the coin's favoured side.

use num_rational::BigRational;
use rand::{CryptoRng, Rng, RngExt};

use super::LocalRandomizer;
use crate::{LocalError, Result};
use dp_core::{Gaussian, exact_rational, sample_bernoulli_exp, sample_uniform_below};

/// The local point release of seed 004 Definition 5.5 with the constants derived in the
/// module docs: ε-LDP for every ε > 0, `E[W_x] = x` on the unit ball, `c`-subgaussian with
/// `c = √(π/2)/tanh(ε/2)`. Inputs are vectors of dimension `m` with `‖x‖₂ ≤ 1`.
#[derive(Clone, Debug)]
pub struct PointRelease {
    epsilon: f64,
    gamma: BigRational,
    dim: usize,
    scale: f64,
}

/// One client's message: `W = c · S · Z` (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct PointReleaseMessage(pub Vec<f64>);

impl PointRelease {
    /// The point release for vectors of dimension `dim ≥ 1` at `epsilon > 0` (finite).
    pub fn new(epsilon: f64, dim: usize) -> Result<Self> {
        if !(epsilon > 0.0 && epsilon.is_finite()) {
            return Err(LocalError::InvalidParameter {
                name: "epsilon",
                value: dp_core::Num(epsilon).to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        if dim == 0 {
            return Err(LocalError::InvalidParameter {
                name: "dim",
                value: "0".into(),
                reason: "the vectors need at least one coordinate".into(),
            });
        }
        Ok(PointRelease {
            epsilon,
            gamma: exact_rational(epsilon)?,
            dim,
            scale: Self::scale_for(epsilon),
        })
    }

    /// The coin's bias `b = tanh(ε/2)`.
    pub fn bias_for(epsilon: f64) -> f64 {
        (epsilon / 2.0).tanh()
    }

    /// The scale `c = √(π/2)/tanh(ε/2)` that makes `E[W_x] = x`.
    pub fn scale_for(epsilon: f64) -> f64 {
        (std::f64::consts::PI / 2.0).sqrt() / Self::bias_for(epsilon)
    }

    /// The scale `c` of this randomizer (also its subgaussian constant).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The dimension `m` of the inputs.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Exactly a coin that agrees (`true`) with probability `1/(1 + e^{−ε})`.
    fn agree<R: Rng + CryptoRng + ?Sized>(&self, rng: &mut R) -> Result<bool> {
        exact_agree(&self.gamma, rng)
    }

    /// The message for `x` with an explicit Gaussian vector `z` and side `u_sign` (+1: `U =
    /// x/‖x‖`), exposed for tests of the construction; [`LocalRandomizer::randomize`] draws
    /// them.
    fn message(&self, x: &[f64], z: Vec<f64>, u_positive: bool, agree: bool) -> Vec<f64> {
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        // ⟨z, U⟩ with U = ±x/‖x‖; for x = 0 the side is the fair U-coin alone
        let dot = if norm > 0.0 {
            x.iter().zip(&z).map(|(a, b)| a * b).sum::<f64>() / norm
        } else {
            1.0
        };
        let side = if u_positive { 1.0 } else { -1.0 };
        let sign = if dot * side >= 0.0 { 1.0 } else { -1.0 };
        let s = if agree { sign } else { -sign };
        z.into_iter().map(|v| self.scale * s * v).collect()
    }
}

/// Exactly a coin that agrees (`true`) with probability `1/(1 + e^{−γ})`: a fair proposal,
/// "disagree" accepted with an exact Bernoulli(e^{−γ}), repeated until accepted. Shared by
/// every randomizer of this crate that sends a `W`.
pub(crate) fn exact_agree<R: Rng + CryptoRng + ?Sized>(
    gamma: &BigRational,
    rng: &mut R,
) -> Result<bool> {
    loop {
        if sample_uniform_below(rng, 2)? == 0 {
            return Ok(true);
        }
        if sample_bernoulli_exp(rng, gamma)? {
            return Ok(false);
        }
    }
}

impl LocalRandomizer for PointRelease {
    type Input = [f64];
    type Message = PointReleaseMessage;

    fn epsilon(&self) -> f64 {
        self.epsilon
    }

    fn randomize(&self, x: &[f64], rng: &mut dyn CryptoRng) -> Result<PointReleaseMessage> {
        if x.len() != self.dim {
            return Err(LocalError::Input {
                reason: format!("a vector of {} coordinates, expected {}", x.len(), self.dim),
            });
        }
        if x.iter().any(|v| !v.is_finite()) {
            return Err(LocalError::Input {
                reason: "a coordinate is not finite".into(),
            });
        }
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        // a small tolerance for vectors normalised in floating point
        if norm > 1.0 + 1e-12 {
            return Err(LocalError::Input {
                reason: format!("‖x‖₂ = {norm} exceeds 1 (scale the input into the unit ball)"),
            });
        }
        let norm = norm.min(1.0);
        // U = x/‖x‖ with probability (1 + ‖x‖)/2
        let u_positive = rng.random::<f64>() < (1.0 + norm) / 2.0;
        let gaussian = Gaussian::new(1.0)?;
        let z: Vec<f64> = (0..self.dim).map(|_| gaussian.sample(rng)).collect();
        let agree = self.agree(rng)?;
        Ok(PointReleaseMessage(self.message(x, z, u_positive, agree)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_agrees_with_the_favoured_side_or_flips_it() {
        let p = PointRelease::new(1.0, 2).unwrap();
        let x = [0.6, 0.0];
        let z = vec![-0.5, 2.0]; // ⟨z, x/‖x‖⟩ = −0.5 < 0
        let c = p.scale();
        assert_eq!(
            p.message(&x, z.clone(), true, true),
            vec![0.5 * c, -2.0 * c]
        );
        assert_eq!(
            p.message(&x, z.clone(), true, false),
            vec![-0.5 * c, 2.0 * c]
        );
        assert_eq!(p.message(&x, z, false, true), vec![-0.5 * c, 2.0 * c]);
    }

    #[test]
    fn constants_match_their_derivation() {
        for eps in [0.1, 0.5, 1.0, 4.0] {
            let b = PointRelease::bias_for(eps);
            // (1 + b)/(1 − b) = e^ε: the coin's likelihood ratio
            assert!(((1.0 + b) / (1.0 - b) - f64::exp(eps)).abs() < 1e-12 * f64::exp(eps));
            // c · b · √(2/π) = 1: unbiased along U
            let c = PointRelease::scale_for(eps);
            assert!((c * b * (2.0 / std::f64::consts::PI).sqrt() - 1.0).abs() < 1e-14);
        }
    }
}
