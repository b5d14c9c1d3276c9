//! Multiplicative weights over an explicit finite action set (seed 003 Algorithm 1;
//! Arora, Hazan and Kale, "The Multiplicative Weights Update Method", Theory of Computing
//! 2012).
//!
//! The weights are kept as logarithms, so thousands of updates never overflow or underflow;
//! the distribution is `p_a ∝ exp(log_w_a − max log_w)`.
//!
//! **Regret** (AHK Thm 2.1, exponential form): for losses `ℓᵗ ∈ [−1, 1]^N` and `η ≤ 1`,
//! `Σ_t ⟨pᵗ, ℓᵗ⟩ − min_a Σ_t ℓᵗ_a ≤ ln N / η + η·T` — [`regret_bound`]. Freund–Schapire
//! (seed 003 Thm 3.2) turn this into an approximate equilibrium of a zero-sum game.

use rand::{CryptoRng, Rng, RngExt};
use rayon::prelude::*;

use crate::{MechanismError, Result};

/// Vectors at least this long are updated with rayon.
const PAR_MIN: usize = 1 << 15;

/// Multiplicative weights with learning rate η over `N` actions, in log space.
#[derive(Clone, Debug)]
pub struct MultiplicativeWeights {
    eta: f64,
    log_w: Vec<f64>,
}

impl MultiplicativeWeights {
    /// The uniform distribution over `n >= 1` actions, learning rate `eta > 0` (finite).
    pub fn new(n: usize, eta: f64) -> Result<Self> {
        if n == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "actions",
                value: "0".into(),
                reason: "multiplicative weights needs at least one action".into(),
            });
        }
        if !(eta > 0.0 && eta.is_finite()) {
            return Err(MechanismError::InvalidParameter {
                name: "eta",
                value: dp_core::Num(eta).to_string(),
                reason: "the learning rate must be positive and finite".into(),
            });
        }
        Ok(MultiplicativeWeights {
            eta,
            log_w: vec![0.0; n],
        })
    }

    /// Number of actions.
    pub fn len(&self) -> usize {
        self.log_w.len()
    }

    /// Always `false`.
    pub fn is_empty(&self) -> bool {
        self.log_w.is_empty()
    }

    /// η.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// The log-weights (up to an additive constant).
    pub fn log_weights(&self) -> &[f64] {
        &self.log_w
    }

    /// Loss update `w_a ← w_a · exp(−η ℓ_a)` (seed 003 Algorithm 1).
    ///
    /// Errors: length mismatch or a non-finite loss.
    pub fn update_losses(&mut self, losses: &[f64]) -> Result<()> {
        self.update_scaled(losses, -self.eta)
    }

    /// Gain update `w_a ← w_a · exp(η g_a)` (the loss update with `ℓ = −g`), for a player
    /// who maximizes.
    pub fn update_gains(&mut self, gains: &[f64]) -> Result<()> {
        self.update_scaled(gains, self.eta)
    }

    /// `log w_a += scale · v_a` for every action.
    pub fn update_scaled(&mut self, v: &[f64], scale: f64) -> Result<()> {
        if v.len() != self.log_w.len() {
            return Err(MechanismError::Numerical {
                what: format!(
                    "multiplicative weights update of length {} for {} actions",
                    v.len(),
                    self.log_w.len()
                ),
            });
        }
        if !scale.is_finite() || v.iter().any(|x| !x.is_finite()) {
            return Err(MechanismError::Numerical {
                what: "non-finite multiplicative weights update".into(),
            });
        }
        if self.log_w.len() >= PAR_MIN {
            self.log_w
                .par_iter_mut()
                .zip(v.par_iter())
                .for_each(|(l, x)| *l += scale * x);
        } else {
            for (l, x) in self.log_w.iter_mut().zip(v) {
                *l += scale * x;
            }
        }
        Ok(())
    }

    /// Multiply one action's weight by `exp(delta)`.
    pub fn bump(&mut self, action: usize, delta: f64) {
        if let Some(l) = self.log_w.get_mut(action) {
            *l += delta;
        }
    }

    /// The current distribution (non-negative, sums to one up to rounding).
    pub fn distribution(&self) -> Vec<f64> {
        let max = self.log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut p: Vec<f64> = if self.log_w.len() >= PAR_MIN {
            self.log_w.par_iter().map(|l| (l - max).exp()).collect()
        } else {
            self.log_w.iter().map(|l| (l - max).exp()).collect()
        };
        let z: f64 = p.iter().sum();
        for x in &mut p {
            *x /= z;
        }
        p
    }

    /// `s` independent draws from the current distribution by inverse CDF on `f64`: **not
    /// exact** (an action whose weight is below ~2⁻⁵³ of the total is never drawn), so no
    /// release path uses it for private sampling — DualQuery samples its query distribution
    /// exactly (`iterative::query_sampler`). For diagnostics and tests only.
    pub fn sample<R: Rng + CryptoRng + ?Sized>(&self, s: usize, rng: &mut R) -> Vec<usize> {
        let p = self.distribution();
        let mut cdf = Vec::with_capacity(p.len());
        let mut acc = 0.0f64;
        for x in &p {
            acc += x;
            cdf.push(acc);
        }
        let last = p.len() - 1;
        (0..s)
            .map(|_| {
                let u: f64 = rng.random::<f64>() * acc;
                cdf.partition_point(|&c| c <= u).min(last)
            })
            .collect()
    }
}

/// The regret bound `ln N / η + η·T` of multiplicative weights for losses in `[−1, 1]` and
/// `η ≤ 1` (AHK 2012, Thm 2.1 with `|ℓ| ≤ 1`).
pub fn regret_bound(actions: usize, eta: f64, rounds: usize) -> f64 {
    (actions as f64).ln() / eta + eta * rounds as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regret on a small adversarial game (rock–paper–scissors losses against an adversary
    /// that plays the best response to the learner's current mixture, plus a biased
    /// sequence): never above the AHK bound. The comparator is computed independently by
    /// summing each action's losses.
    #[test]
    fn regret_within_bound_on_small_games() {
        // Loss matrix of the row player: rows = our actions, columns = adversary actions.
        let game = [[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]];
        for &eta in &[0.05, 0.2, 0.7] {
            let rounds = 500;
            let mut mw = MultiplicativeWeights::new(3, eta).unwrap();
            let mut learner = 0.0;
            let mut totals = [0.0f64; 3];
            for t in 0..rounds {
                let p = mw.distribution();
                // Adversary: column maximizing our expected loss, except every 7th round.
                let col = if t % 7 == 0 {
                    0
                } else {
                    (0..3)
                        .max_by(|&a, &b| {
                            let la: f64 = (0..3).map(|i| p[i] * game[i][a]).sum();
                            let lb: f64 = (0..3).map(|i| p[i] * game[i][b]).sum();
                            la.total_cmp(&lb)
                        })
                        .unwrap()
                };
                let losses: Vec<f64> = (0..3).map(|i| game[i][col]).collect();
                learner += (0..3).map(|i| p[i] * losses[i]).sum::<f64>();
                for i in 0..3 {
                    totals[i] += losses[i];
                }
                mw.update_losses(&losses).unwrap();
            }
            let best = totals.iter().copied().fold(f64::INFINITY, f64::min);
            let regret = learner - best;
            assert!(
                regret <= regret_bound(3, eta, rounds) + 1e-9,
                "eta {eta}: regret {regret} > bound {}",
                regret_bound(3, eta, rounds)
            );
        }
    }

    /// Hand-computed update: two actions, η = ln 2, losses (−1, 1): weights 2 and 1/2,
    /// distribution (0.8, 0.2).
    #[test]
    fn update_by_hand() {
        let mut mw = MultiplicativeWeights::new(2, std::f64::consts::LN_2).unwrap();
        mw.update_losses(&[-1.0, 1.0]).unwrap();
        let p = mw.distribution();
        assert!((p[0] - 0.8).abs() < 1e-12 && (p[1] - 0.2).abs() < 1e-12);
        assert!(mw.update_losses(&[1.0]).is_err());
        assert!(mw.update_losses(&[f64::NAN, 0.0]).is_err());
        assert!(MultiplicativeWeights::new(0, 1.0).is_err());
        assert!(MultiplicativeWeights::new(2, 0.0).is_err());
    }

    /// Sampling frequencies match the distribution (0.8, 0.2): 20 000 draws, the count of
    /// action 1 has sd √(20000·0.16) ≈ 56.6; 6 sd ⇒ false failure < 2e-9.
    #[test]
    fn sampling_matches_distribution() {
        let mut mw = MultiplicativeWeights::new(2, std::f64::consts::LN_2).unwrap();
        mw.update_losses(&[-1.0, 1.0]).unwrap();
        let mut rng = dp_core::seeded_rng(3);
        let draws = mw.sample(20_000, &mut rng);
        let ones = draws.iter().filter(|&&a| a == 1).count() as f64;
        assert!((ones - 4000.0).abs() < 6.0 * 56.6, "{ones}");
    }
}
