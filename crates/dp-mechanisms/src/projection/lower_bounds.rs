//! The instance-optimality report: greedy packing numbers `P(𝒳, t)` and the packing lower
//! bounds of seed 004 (Thm 1.4, Lemma B.2) for the average error `err²`.
//!
//! # Packing numbers
//! `P(𝒳, t)` is the largest size of a subset of the answer vectors with pairwise
//! `‖x − y‖₂/√m > t`. A greedy maximal `t`-separated set `G(t)` ([`MarginalMetric`]) satisfies
//! `P(𝒳, 2t) ≤ N(𝒳, t) ≤ G(t) ≤ P(𝒳, t)` (it is a `t`-separated set and a `t`-cover,
//! Lemma 2.7), so using `G` in place of `P` keeps every lower bound below valid.
//!
//! # Thm 1.4, constant symbolic
//! For every finite `𝒳 ⊂ [0,1]^m`, the sample complexity of ρ-zCDP average error α is
//!
//! ```text
//!     sc²_ρ(𝒳, α) ≥ c · (1/(α√ρ)) · sup{ t·√(ln P(𝒳, t)) : t ≥ 4α }
//! ```
//!
//! for an absolute constant `c > 0` the paper does not give. [`thm14_quantity`] is the right
//! side with `c = 1` (sup over the grid, P replaced by G), and
//! [`InstanceOptimalityReport::alpha_thm14`] the α at which it equals the data size n: no
//! ρ-zCDP mechanism has worst-case (over datasets of size n) `err² ≤ α` for α below
//! (roughly) `c·alpha_thm14`.
//!
//! # Explicit version (Lemma B.2 and padding)
//! Lemma B.2 with its constants: a ρ-zCDP mechanism with `err² ≤ α` on every dataset of
//! size n distinguishes the `P = P(𝒳, 4α)` datasets "n copies of a packing point" with
//! probability ≥ 3/4 (Markov), so by Fano and the mutual-information bound
//! `I ≤ log₂(e)·ρn²` (Bun–Steinke, Thm B.1),
//! `n ≥ B(α) := √(((3/4)·log₂(P − 1) − 1) / (log₂(e)·ρ))`. Padding a dataset of size n′ with
//! `n − n′` copies of a fixed record turns error α at size n into error `α·n/n′` at size n′, so
//! `sc(α) ≥ (u/α)·(B(u) − 1)` for every `u ≥ α`. [`explicit_sample_complexity`] is the max of
//! these over the grid, and [`InstanceOptimalityReport::alpha_explicit`] the largest α with
//! `n < explicit_sample_complexity(α)`: *every* ρ-zCDP mechanism has worst-case `err² > α`
//! at size n — a bound with all constants.

use super::metric::MarginalMetric;
use crate::{MechanismError, Result};
use serde::{Deserialize, Serialize};

/// Greedy packing numbers `G(t)` over a grid of `t` (module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackingProfile {
    /// `|𝒳|`.
    pub universe_size: usize,
    /// `(t, G(t))`, increasing `t`.
    pub points: Vec<(f64, usize)>,
}

impl PackingProfile {
    /// Greedy packing numbers of the universe at every `t` of `grid` (sorted and
    /// deduplicated; every `t` finite and > 0).
    pub fn compute(metric: &MarginalMetric, grid: &[f64]) -> Result<Self> {
        let mut ts: Vec<f64> = grid.to_vec();
        if let Some(bad) = ts.iter().find(|t| !(t.is_finite() && **t > 0.0)) {
            return Err(MechanismError::InvalidParameter {
                name: "grid",
                value: bad.to_string(),
                reason: "packing radii must be finite and positive".into(),
            });
        }
        ts.sort_by(f64::total_cmp);
        ts.dedup();
        let points = ts
            .into_iter()
            .map(|t| Ok((t, metric.maximal_separated_subset(t)?.len())))
            .collect::<Result<Vec<_>>>()?;
        Ok(PackingProfile {
            universe_size: metric.len(),
            points,
        })
    }

    /// A default grid: `count` radii geometrically spaced from half the smallest distance
    /// between two records to the largest possible distance `√(2·#tables/m)`.
    pub fn default_grid(metric: &MarginalMetric, count: usize) -> Vec<f64> {
        let top = std::f64::consts::SQRT_2 * metric.point_norm();
        let bottom = metric
            .min_positive_distance()
            .filter(|d| *d > 0.0)
            .unwrap_or(top / 64.0)
            * 0.5;
        let count = count.max(2);
        (0..count)
            .map(|i| bottom * (top / bottom).powf(i as f64 / (count - 1) as f64))
            .collect()
    }

    /// `max{G(t) : grid t ≥ s}` (a lower bound on `P(𝒳, s)`), or `None` past the grid.
    fn packing_at_least(&self, s: f64) -> Option<usize> {
        self.points
            .iter()
            .filter(|(t, _)| *t >= s)
            .map(|&(_, g)| g)
            .max()
    }
}

/// `sup{ t·√(ln G(t)) : grid t ≥ 4α }` (0 if no grid point qualifies): the supremum of
/// seed 004 Thm 1.4 restricted to the grid, with `G ≤ P`.
pub fn thm14_quantity(profile: &PackingProfile, alpha: f64) -> f64 {
    profile
        .points
        .iter()
        .filter(|(t, _)| *t >= 4.0 * alpha)
        .map(|&(t, g)| t * (g.max(1) as f64).ln().sqrt())
        .fold(0.0, f64::max)
}

/// Thm 1.4's sample-complexity lower bound with the constant `c` set to 1:
/// `thm14_quantity(α)/(α√ρ)`.
pub fn thm14_sample_complexity(profile: &PackingProfile, alpha: f64, rho: f64) -> f64 {
    thm14_quantity(profile, alpha) / (alpha * rho.sqrt())
}

/// Lemma B.2's bound `√(((3/4)·log₂(P − 1) − 1)/(log₂(e)·ρ))` for a packing of size `p`
/// (0 when it is vacuous).
fn lemma_b2(p: usize, rho: f64) -> f64 {
    if p < 2 {
        return 0.0;
    }
    let bits = 0.75 * ((p - 1) as f64).log2() - 1.0;
    if bits <= 0.0 {
        0.0
    } else {
        (bits / (std::f64::consts::LOG2_E * rho)).sqrt()
    }
}

/// The explicit-constant sample-complexity lower bound (module docs):
/// `max( B(α), max_{grid t ≥ 4α} (t/(4α))·(B(t/4) − 1) )` with `B(u)` from Lemma B.2 at
/// `P(𝒳, 4u) ≥ G(t)`.
pub fn explicit_sample_complexity(profile: &PackingProfile, alpha: f64, rho: f64) -> f64 {
    let direct = profile
        .packing_at_least(4.0 * alpha)
        .map_or(0.0, |p| lemma_b2(p, rho));
    let padded = profile
        .points
        .iter()
        .filter(|(t, _)| *t >= 4.0 * alpha)
        .map(|&(t, g)| (t / (4.0 * alpha)) * (lemma_b2(g, rho) - 1.0))
        .fold(0.0, f64::max);
    direct.max(padded)
}

/// The largest α ∈ (0, 1] with `n < sc(α)` for a sample-complexity bound `sc` that is
/// non-increasing in α (bisection); 0 if even tiny α are not excluded.
fn error_threshold(n: usize, sc: impl Fn(f64) -> f64) -> f64 {
    let n = n as f64;
    if sc(1.0) > n {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if mid <= 0.0 {
            break;
        }
        if sc(mid) > n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The packing lower bounds for a data size n and budget ρ, next to which a release's
/// achieved error is reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceOptimalityReport {
    /// Data size.
    pub n: usize,
    /// zCDP parameter.
    pub rho: f64,
    /// The α where Thm 1.4's bound with `c = 1` equals n: worst-case `err²` of any ρ-zCDP
    /// mechanism is `≳ c·alpha_thm14` (constant `c` unknown).
    pub alpha_thm14: f64,
    /// The largest α that no ρ-zCDP mechanism achieves in the worst case at size n, with all
    /// constants (Lemma B.2 and padding).
    pub alpha_explicit: f64,
}

impl InstanceOptimalityReport {
    /// The report for `profile`, n and ρ.
    pub fn new(profile: &PackingProfile, n: usize, rho: f64) -> Result<Self> {
        if !(rho > 0.0 && rho.is_finite()) || n == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "rho/n",
                value: format!("{rho}/{n}"),
                reason: "need ρ > 0 finite and n ≥ 1".into(),
            });
        }
        Ok(InstanceOptimalityReport {
            n,
            rho,
            alpha_thm14: error_threshold(n, |a| thm14_sample_complexity(profile, a, rho)),
            alpha_explicit: error_threshold(n, |a| explicit_sample_complexity(profile, a, rho)),
        })
    }

    /// One line for reports.
    pub fn statement(&self) -> String {
        format!(
            "Błasiok, Bun, Nikolov, Steinke 2019, Thm 1.4 lower bound (n = {}, ρ = {:.3e}): \
             worst-case err² ≥ c·{:.3e} for an unknown absolute c; with explicit constants \
             (Lemma B.2 + padding) err² > {:.3e}",
            self.n, self.rho, self.alpha_thm14, self.alpha_explicit
        )
    }
}
