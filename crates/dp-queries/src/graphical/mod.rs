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
/// measurement `y = Q μ + noise` with `Q` the marginal's identity query, or with
/// [`NoisyMarginal::groups`] the query that sums the marginal's cells into groups).
#[derive(Clone, Debug, PartialEq)]
pub struct NoisyMarginal {
    /// The measured marginal (attributes in any order).
    pub marginal: Marginal,
    /// Noisy counts, row-major in the marginal's attribute order (may be negative): one per
    /// cell, or with `groups` one per cell of the coarsened table.
    pub values: Vec<f64>,
    /// Standard deviation of the noise of each value, in count units (finite, > 0).
    pub sigma: f64,
    /// `None`: the marginal's cells were measured. `Some(g)`: the sums of its cells over the
    /// groups of `g` were (a coarsened table, as MST's compressed domains: McKenna, Miklau &
    /// Sheldon, "Winning the NIST Contest", JPC 2021, §4), and the fit matches the model's
    /// marginal summed the same way.
    pub groups: Option<CellGroups>,
}

impl NoisyMarginal {
    /// The measurement `values` of every cell of `marginal`, each with noise of standard
    /// deviation `sigma` (no groups).
    pub fn new(marginal: Marginal, values: Vec<f64>, sigma: f64) -> Self {
        NoisyMarginal {
            marginal,
            values,
            sigma,
            groups: None,
        }
    }

    /// The number of measured values: the marginal's cells, or the coarsened table's.
    pub fn num_values(&self) -> usize {
        match &self.groups {
            Some(g) => g.num_cells(),
            None => self.marginal.num_cells(),
        }
    }
}

/// A coarsening of a marginal table: each of its attributes' values mapped to a group, so
/// that a cell of the coarsened table is a product of groups and its count is the sum of the
/// table's cells in it (the compressed domains of MST: McKenna, Miklau & Sheldon, "Winning
/// the NIST Contest: A scalable and general approach to differentially private synthetic
/// data", JPC 2021, §4 — there applied to the data, here to one measurement, so that the
/// model keeps every value). Under add/remove or replace-one a record moves one cell of the
/// coarsened table as it moves one of the table: the same sensitivities.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellGroups {
    /// For each attribute of the table (in the table's order), value → group.
    maps: Vec<Vec<u32>>,
    /// Groups of each attribute (`max + 1` of its map).
    counts: Vec<usize>,
}

impl CellGroups {
    /// Groups from one map per attribute (value → group, in the table's attribute order).
    /// Errors: no attribute, an empty map, or an attribute whose groups are not exactly
    /// `0..g` for some `g` (a group no value belongs to).
    pub fn new(maps: Vec<Vec<u32>>) -> Result<Self> {
        if maps.is_empty() {
            return Err(QueryError::BadWorkload {
                reason: "cell groups: no attribute".into(),
            });
        }
        let mut counts = Vec::with_capacity(maps.len());
        for (k, m) in maps.iter().enumerate() {
            let g = m.iter().copied().max().map_or(0, |x| x as usize + 1);
            let mut used = vec![false; g];
            m.iter().for_each(|&x| used[x as usize] = true);
            if m.is_empty() || used.contains(&false) {
                return Err(QueryError::BadWorkload {
                    reason: format!(
                        "cell groups: attribute #{k}'s groups must be 0..g, each with a value"
                    ),
                });
            }
            counts.push(g);
        }
        Ok(CellGroups { maps, counts })
    }

    /// The value → group map of each attribute, in the table's order.
    pub fn maps(&self) -> &[Vec<u32>] {
        &self.maps
    }

    /// The number of groups of each attribute.
    pub fn group_counts(&self) -> &[usize] {
        &self.counts
    }

    /// Cells of the coarsened table (the product of the group counts).
    pub fn num_cells(&self) -> usize {
        self.counts.iter().product()
    }

    /// Whether the groups fit `marginal`: one map per attribute, each as long as the
    /// attribute's size.
    pub fn fits(&self, marginal: &Marginal) -> bool {
        self.maps.len() == marginal.attrs().len()
            && self
                .maps
                .iter()
                .zip(marginal.sizes())
                .all(|(m, &s)| m.len() == s as usize)
    }

    /// For each cell of the table (row-major), its cell of the coarsened table (row-major).
    pub fn cell_map(&self) -> Vec<u32> {
        let mut out = vec![0u32];
        for (m, &g) in self.maps.iter().zip(&self.counts) {
            out = out
                .iter()
                .flat_map(|&c| m.iter().map(move |&v| c * g as u32 + v))
                .collect();
        }
        out
    }

    /// The coarsened table of a table `fine` (row-major, one entry per cell): each group's
    /// sum. Errors when `fine` is not one entry per cell.
    pub fn coarsen<T: Copy + Default + std::ops::AddAssign>(&self, fine: &[T]) -> Result<Vec<T>> {
        let map = self.cell_map();
        if map.len() != fine.len() {
            return Err(QueryError::LengthMismatch {
                expected: map.len(),
                found: fine.len(),
            });
        }
        let mut out = vec![T::default(); self.num_cells()];
        for (&c, &v) in map.iter().zip(fine) {
            out[c as usize] += v;
        }
        Ok(out)
    }
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
    /// Final loss in normalised units: `Σ_i (σ_min/σ_i)²·‖Q_i μ_{C_i} − y_i/total‖₂²`
    /// (`Q_i` the identity, or the group sums of a coarsened measurement)
    /// (probability units; always finite).
    pub final_loss: f64,
    /// The same loss in count units, `Σ_i ‖(total·Q_i μ_{C_i} − y_i)/σ_i‖₂²` (about the number of
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
