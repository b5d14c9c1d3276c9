//! Graphical-model estimation from noisy marginals (Private-PGM: McKenna, Sheldon & Miklau,
//! "Graphical-model based estimation and inference for differential privacy", ICML 2019).
//!
//! Given noisy measurements `y_i = total·μ_{C_i} + noise` of marginals over a domain far too
//! large to enumerate, [`GraphicalModel::fit`] finds the distribution whose marginals minimise
//! the noise-weighted squared error, and among those the one of maximum entropy: a graphical
//! model `p(x) ∝ exp(Σ_C θ_C(x_C))` on the cliques of a junction tree covering the measured
//! marginals, fitted by entropic mirror descent with exact junction-tree inference
//! (§3–§4 of the paper). The model answers any marginal exactly ([`GraphicalModel::marginal`])
//! and samples synthetic records ([`GraphicalModel::sample`]).
//!
//! Everything here is post-processing of the measurements: no privacy role.
//! See `docs/mechanisms/estimation.md`.

mod estimate;
mod exp;
mod factor;
mod junction_tree;

pub use estimate::GraphicalModel;
pub use junction_tree::JunctionTree;

use crate::error::{QueryError, Result};
use crate::workload::Marginal;
use dp_geometry::Parallelism;
use factor::DEFAULT_MAX_ELIMINATION_CELLS;

/// One noisy measurement of a marginal, in count units (McKenna et al. 2019, §3: a
/// measurement `y = Q μ + noise` with `Q` the marginal's identity query).
#[derive(Clone, Debug, PartialEq)]
pub struct NoisyMarginal {
    /// The measured marginal (attributes in any order).
    pub marginal: Marginal,
    /// Noisy counts, row-major in the marginal's attribute order (may be negative).
    pub values: Vec<f64>,
    /// Standard deviation of the noise of each cell, in count units (finite, > 0).
    pub sigma: f64,
}

/// Settings of [`GraphicalModel::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct GraphicalModelSettings {
    /// Mirror-descent iterations (accepted steps) per fit. Default 500.
    pub iterations: usize,
    /// Refuse ([`QueryError::TooLarge`]) a junction tree whose cliques have more cells in
    /// total (memory ≈ 40 bytes per cell during a fit). Default 2·10⁶; at most 2³¹.
    pub max_model_cells: f64,
    /// Cliques the model must contain besides the measured ones (sorted or not).
    pub extra_cliques: Vec<Vec<usize>>,
    /// Largest table (entries) that [`GraphicalModel::marginal`] may build while eliminating
    /// for a marginal outside every clique (memory ≈ 8 bytes per entry, plus 4 per entry and
    /// factor for its index maps); above it, the elimination conditions on the requested
    /// attributes instead. Default 10⁷; at most 2³¹.
    pub max_elimination_cells: f64,
    /// Stop early when one iteration lowers the loss by at most `tolerance × loss`
    /// (relative); 0 disables (the default): exactly `iterations` steps unless no step
    /// decreases the loss.
    pub tolerance: f64,
    /// Stop early when the last `chi_square_window` iterations together lowered the loss,
    /// in count units ([`FitReport::chi_square`]), by less than [`Self::min_chi_square_gain`]:
    /// the fit then moves by less than the noise can tell apart (a change of χ² by 1 is one
    /// standard deviation of one measured cell). 0 disables (the default).
    pub chi_square_window: usize,
    /// See [`Self::chi_square_window`]. Finite, `≥ 0`. Default 0.
    pub min_chi_square_gain: f64,
    /// Whether the fit's loops over a clique's cells (belief propagation, the gradient, the
    /// update) may split over the current rayon pool: tasks of a fixed number of cells,
    /// combined in a fixed order, so the fitted model is the same, bit for bit, with
    /// [`Parallelism::None`] and [`Parallelism::Rayon`] whatever the pool's size. Default
    /// [`Parallelism::Rayon`].
    pub parallelism: Parallelism,
}

impl Default for GraphicalModelSettings {
    fn default() -> Self {
        GraphicalModelSettings {
            iterations: 500,
            max_model_cells: 2e6,
            max_elimination_cells: DEFAULT_MAX_ELIMINATION_CELLS,
            extra_cliques: Vec::new(),
            tolerance: 0.0,
            chi_square_window: 0,
            min_chi_square_gain: 0.0,
            parallelism: Parallelism::Rayon,
        }
    }
}

impl GraphicalModelSettings {
    /// Validates: `max_model_cells` and `max_elimination_cells` finite in `[1, 2³¹]`,
    /// `tolerance` and `min_chi_square_gain` finite and `≥ 0`.
    pub fn check(&self) -> Result<()> {
        for (name, v) in [
            ("max_model_cells", self.max_model_cells),
            ("max_elimination_cells", self.max_elimination_cells),
        ] {
            if !(v.is_finite() && (1.0..=2f64.powi(31)).contains(&v)) {
                return Err(QueryError::BadWorkload {
                    reason: format!("graphical model: {name} must be in [1, 2^31], got {v}"),
                });
            }
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "graphical model: tolerance must be finite and >= 0, got {}",
                    self.tolerance
                ),
            });
        }
        if !(self.min_chi_square_gain.is_finite() && self.min_chi_square_gain >= 0.0) {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "graphical model: min_chi_square_gain must be finite and >= 0, got {}",
                    self.min_chi_square_gain
                ),
            });
        }
        Ok(())
    }
}

/// How a warm start carried the earlier model over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarmStart {
    /// No warm model: the fit started from the uniform distribution.
    Cold,
    /// Every clique of the warm model lies in a clique of the new tree: the fit started from
    /// exactly the warm model's distribution (the tree was enlarged by the warm cliques when
    /// that was needed and fitted under `max_model_cells`).
    Exact,
    /// Some warm cliques did not fit in the new tree (and enlarging it would exceed
    /// `max_model_cells`): only the potentials of the contained cliques were carried over.
    Partial,
}

/// What a fit did.
#[derive(Clone, Debug, PartialEq)]
pub struct FitReport {
    /// Accepted mirror-descent steps.
    pub iterations: usize,
    /// Belief-propagation passes (one per line-search trial, plus the first and last).
    pub calibrations: usize,
    /// Loss of the starting point (uniform or warm), in the normalised units of
    /// [`FitReport::final_loss`].
    pub initial_loss: f64,
    /// Final loss in normalised units: `Σ_i (σ_min/σ_i)²·‖μ_{C_i} − y_i/total‖₂²`
    /// (probability units; always finite).
    pub final_loss: f64,
    /// The same loss in count units, `Σ_i ‖(total·μ_{C_i} − y_i)/σ_i‖₂²` (about the number of
    /// measured cells when the fit is at the noise level; may overflow to ∞ for absurd inputs).
    pub chi_square: f64,
    /// Loss after each accepted step (`loss_history[0]` is the start), non-increasing.
    pub loss_history: Vec<f64>,
    /// The last accepted step size (normalised units).
    pub step_size: f64,
    /// Total cells of the junction tree.
    pub model_cells: usize,
    /// The model's maximal cliques.
    pub cliques: Vec<Vec<usize>>,
    /// No step size decreased the loss (converged to working precision) before `iterations`.
    pub stalled: bool,
    /// Stopped by the relative `tolerance` or by the χ² window
    /// ([`GraphicalModelSettings::chi_square_window`]).
    pub converged: bool,
    /// How a warm start was used.
    pub warm_start: WarmStart,
}
