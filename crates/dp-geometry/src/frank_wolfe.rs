//! Frank–Wolfe (conditional gradient) projection onto a convex body given by a linear
//! oracle: approximately solve
//!
//! ```text
//!     min_{v ∈ K} f(v),   f(v) = ‖v − y‖²_W = Σ_k w_k (v_k − y_k)²,   w_k > 0,
//! ```
//!
//! the (weighted) ℓ₂ projection of the projection mechanism (seed 004 Lemma 2.2, seed 000
//! §3, which uses Frank–Wolfe with Clarkson's `O(1/t)` rate for the approximate projection).
//!
//! # Iteration
//! With `c = W(y − v) = −∇f(v)/2`, the oracle returns `s ≈ argmax_{u∈K} ⟨c, u⟩` and the
//! *Frank–Wolfe duality gap* is
//!
//! ```text
//!     gap(v) = ⟨∇f(v), v − s⟩ + 2·slack = 2(⟨c, s⟩ − ⟨c, v⟩ + slack) ≥ f(v) − min_K f,
//! ```
//!
//! by convexity (`f(u) ≥ f(v) + ⟨∇f(v), u − v⟩` minimized over `u ∈ K`). Because `f` is
//! quadratic, the line search along a direction `d` is exact:
//! `γ* = ⟨c, d⟩ / ‖d‖²_W`, clipped to the step's feasible range. As `f` is 2-strongly convex in
//! `‖·‖_W`, the returned point is also within `√gap` of the exact projection in `‖·‖_W`.
//!
//! # Stopping rule (relative gap)
//! The solver stops with [`SolveStatus::Converged`] as soon as
//!
//! ```text
//!     gap(v_t) ≤ relative_gap_tolerance · f(v_0),
//! ```
//!
//! where `v_0` is the starting vertex (the oracle's answer for the direction `W·y`), i.e.
//! the gap is measured relative to the objective the solver started from (if `f(v_0) = 0`,
//! `y` is a vertex and the start is optimal). This scale is positive whenever there is
//! anything to do and, unlike `f(v_t)`, does not shrink to 0 when `y ∈ K`. Hitting
//! `max_iterations` is the status [`SolveStatus::MaxIterations`], never an error; the
//! reported gap always belongs to the returned point.
//!
//! # Variants
//! - [`FrankWolfeVariant::Classic`]: `v ← v + γ(s − v)`, `γ ∈ [0,1]`.
//! - [`FrankWolfeVariant::AwayStep`]: also considers moving *away* from the active atom `a`
//!   with the smallest `⟨c, a⟩` (`d = v − a`, `γ ≤ α_a/(1 − α_a)`), whichever of the two
//!   directions has the larger gap (Guélat–Marcotte; Lacoste-Julien–Jaggi 2015).
//! - [`FrankWolfeVariant::Pairwise`]: moves weight from the away atom to the Frank–Wolfe
//!   atom, `d = s − a`, `γ ≤ α_a`.
//! - [`FrankWolfeVariant::MinNormPoint`]: Wolfe's minimum-norm-point algorithm, fully
//!   corrective (exact minimization over the hull of the active atoms after each oracle
//!   call; [`crate::min_norm_point`]).
//!
//! Away-step, pairwise and min-norm-point keep an *active set* of atoms with convex weights and converge
//! linearly on polytopes; they need an [`AtomicBody`] (hulls of point sets). Every variant
//! on an atomic body returns the convex weights of the iterate, so a projection onto the
//! hull of a set of records is a weighted synthetic dataset.
//!
//! Cost per iteration: one oracle call (for a hull, one [`crate::PointSet::inner_all`])
//! plus `O(dim + |active set|)`; the loop allocates nothing except when the active set grows.

use crate::bodies::{AtomicBody, ConvexHull, LinearOracle, argmax};
use crate::error::{GeometryError, Result, check_dim, check_finite};
use crate::parallel::Parallelism;
use crate::points::{PointSet, dot};
use dp_core::{ProgressSink, report_progress};

/// Which Frank–Wolfe step rule to use (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FrankWolfeVariant {
    /// The classic step towards the oracle's vertex.
    #[default]
    Classic,
    /// Away-step Frank–Wolfe (needs atoms).
    AwayStep,
    /// Pairwise Frank–Wolfe (needs atoms).
    Pairwise,
    /// Not a Frank–Wolfe step rule: accelerated projected gradient (FISTA with restarts) on
    /// the convex weights of the atoms, certified by the same duality gap (needs atoms and
    /// benefits from a fast [`AtomicBody::add_atoms_weighted`]; see [`crate::accelerated`]).
    Accelerated,
    /// Wolfe's minimum-norm-point algorithm (Wolfe 1976, "Finding the nearest point in a
    /// polytope"): fully corrective — after each oracle call the objective is minimized
    /// exactly over the hull of the active atoms (affinely independent, at most `dim + 1`),
    /// through an incrementally updated Cholesky factor of their Gram matrix. Needs atoms;
    /// see [`crate::min_norm_point`]. [`FrankWolfeResult::iterations`] counts major cycles
    /// (one oracle call and one new atom each); memory is `O(k²)` for `k` active atoms,
    /// `k ≤ min(iterations, dim) + 1`.
    MinNormPoint,
}

/// How a solve ended. Reaching the iteration cap is a status, not an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SolveStatus {
    /// The relative gap fell below the tolerance.
    Converged,
    /// `max_iterations` steps were taken without convergence.
    MaxIterations,
    /// No step could make progress in floating point (zero step length) although the
    /// gap is above the tolerance, e.g. with a tolerance below the round-off floor.
    Stalled,
}

/// Settings of the Frank–Wolfe solvers. Build with `Default` plus field updates or
/// [`FrankWolfeSettings::builder`]; the solvers call [`FrankWolfeSettings::check`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrankWolfeSettings {
    /// Maximum number of Frank–Wolfe steps (≥ 1). Default 1000.
    pub max_iterations: usize,
    /// Stop when `gap ≤ relative_gap_tolerance · f(v_0)` (module docs). Finite, ≥ 0.
    /// Default 1e-6.
    pub relative_gap_tolerance: f64,
    /// Step rule. Default [`FrankWolfeVariant::Classic`].
    pub variant: FrankWolfeVariant,
    /// Diagonal weights `W` of the norm, all finite and > 0, of length `dim`; `None` = all 1.
    pub weights: Option<Vec<f64>>,
    /// Parallelism of the oracle calls. Default [`Parallelism::None`].
    pub parallelism: Parallelism,
    /// Where the solver reports its iterations done against [`Self::max_iterations`] (a
    /// public cap fixed before solving; a solve that converges earlier reports the cap as
    /// reached when it returns). Default `None`: nothing reported. Not serialised.
    #[serde(skip)]
    pub progress: Option<ProgressSink>,
}

/// `‖v − y‖²_W` for a diagonal `W = diag(w)`.
pub(crate) fn wdist(v: &[f64], y: &[f64], w: &[f64]) -> f64 {
    v.iter()
        .zip(y)
        .zip(w)
        .map(|((a, b), wk)| wk * (a - b) * (a - b))
        .sum()
}

/// The common start of the atom-based solvers: the atom maximising `⟨W·y, a⟩` (one oracle
/// call) and the buffers of that call.
pub(crate) struct BestVertexStart {
    /// `W·y` (checked finite); the solvers reuse it as their direction buffer.
    pub c: Vec<f64>,
    /// The atoms' scores against `c`.
    pub scores: Vec<f64>,
    /// The starting atom.
    pub start: usize,
    /// The starting atom as a dense point.
    pub vertex: Vec<f64>,
    /// `f(v₀) = ‖vertex − y‖²_W`, the scale of the relative gap.
    pub f0: f64,
}

/// The oracle's best vertex for `W·y`: the start of the accelerated and min-norm-point solvers.
pub(crate) fn best_vertex_start<B: AtomicBody + ?Sized>(
    body: &B,
    y: &[f64],
    w: &[f64],
    par: Parallelism,
) -> Result<BestVertexStart> {
    let mut scores = vec![0.0; body.num_atoms()];
    let c: Vec<f64> = y.iter().zip(w).map(|(yk, wk)| wk * yk).collect();
    check_finite(&c, "weighted target W·y")?;
    body.atom_scores(&c, &mut scores, par);
    let start = argmax(&scores).ok_or(GeometryError::Empty("the body has no atoms"))?;
    let mut vertex = vec![0.0; body.dim()];
    body.add_atom_scaled(start, 1.0, &mut vertex);
    let f0 = wdist(&vertex, y, w);
    Ok(BestVertexStart {
        c,
        scores,
        start,
        vertex,
        f0,
    })
}

impl FrankWolfeVariant {
    /// Every variant with its command-line name (`classic`, `away-step`, `pairwise`,
    /// `accelerated`, `min-norm-point`).
    pub const NAMES: [(&'static str, FrankWolfeVariant); 5] = [
        ("classic", FrankWolfeVariant::Classic),
        ("away-step", FrankWolfeVariant::AwayStep),
        ("pairwise", FrankWolfeVariant::Pairwise),
        ("accelerated", FrankWolfeVariant::Accelerated),
        ("min-norm-point", FrankWolfeVariant::MinNormPoint),
    ];

    /// The command-line name of this variant.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("classic", |(n, _)| n)
    }
}

impl std::str::FromStr for FrankWolfeVariant {
    type Err = GeometryError;

    /// Parses a name of [`FrankWolfeVariant::NAMES`]; anything else is an
    /// [`GeometryError::InvalidSettings`] listing the names.
    fn from_str(s: &str) -> Result<Self> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
                GeometryError::InvalidSettings(format!(
                    "unknown Frank–Wolfe variant {s:?}; expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

#[cfg(test)]
mod variant_name_tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_is_an_error() {
        for (name, v) in FrankWolfeVariant::NAMES {
            assert_eq!(name.parse::<FrankWolfeVariant>().unwrap(), v);
            assert_eq!(v.name(), name);
        }
        let err = "pairwize".parse::<FrankWolfeVariant>().unwrap_err();
        assert!(err.to_string().contains("min-norm-point"), "{err}");
    }
}

impl Default for FrankWolfeSettings {
    fn default() -> Self {
        Self {
            max_iterations: 1000,
            relative_gap_tolerance: 1e-6,
            variant: FrankWolfeVariant::Classic,
            weights: None,
            parallelism: Parallelism::None,
            progress: None,
        }
    }
}

impl FrankWolfeSettings {
    /// A builder starting from the defaults.
    pub fn builder() -> FrankWolfeSettingsBuilder {
        FrankWolfeSettingsBuilder {
            settings: Self::default(),
        }
    }

    /// Validates everything that does not depend on the problem's dimension: at least
    /// one iteration, a finite non-negative tolerance, finite positive weights.
    pub fn check(&self) -> Result<()> {
        if self.max_iterations == 0 {
            return Err(GeometryError::InvalidSettings(
                "max_iterations must be at least 1".into(),
            ));
        }
        let tol = self.relative_gap_tolerance;
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(GeometryError::InvalidSettings(format!(
                "relative_gap_tolerance must be finite and non-negative, got {tol}"
            )));
        }
        if let Some(bad) = self
            .weights
            .iter()
            .flatten()
            .find(|x| !(x.is_finite() && **x > 0.0))
        {
            return Err(GeometryError::InvalidSettings(format!(
                "weights must be finite and positive, got {bad}"
            )));
        }
        Ok(())
    }

    /// Report `done` iterations of at most [`Self::max_iterations`] to
    /// [`Self::progress`] (nothing without a reporter), in a stage named after the variant.
    pub(crate) fn report_iterations(&self, done: usize) {
        if let Some(sink) = &self.progress {
            let unit = match self.variant {
                FrankWolfeVariant::MinNormPoint => "minimum-norm-point cycles",
                FrankWolfeVariant::Accelerated => "accelerated projected-gradient steps",
                _ => "Frank–Wolfe iterations",
            };
            let stage =
                format!("projection solver ({unit}, at most the cap; ends early when converged)");
            report_progress(
                Some(sink),
                &stage,
                done.min(self.max_iterations),
                self.max_iterations,
            );
        }
    }

    /// [`FrankWolfeSettings::check`] plus `weights.len() == dim`; returns the weights
    /// (all ones when `None`).
    pub fn check_for_dim(&self, dim: usize) -> Result<Vec<f64>> {
        self.check()?;
        match &self.weights {
            None => Ok(vec![1.0; dim]),
            Some(w) if w.len() == dim => Ok(w.clone()),
            Some(w) => Err(GeometryError::InvalidSettings(format!(
                "weights have length {}, the body has dimension {dim}",
                w.len()
            ))),
        }
    }
}

/// Builder for [`FrankWolfeSettings`] whose `build` validates (clarabel-style).
#[derive(Clone, Debug)]
pub struct FrankWolfeSettingsBuilder {
    settings: FrankWolfeSettings,
}

impl FrankWolfeSettingsBuilder {
    /// Sets [`FrankWolfeSettings::max_iterations`].
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.settings.max_iterations = n;
        self
    }
    /// Sets [`FrankWolfeSettings::relative_gap_tolerance`].
    pub fn relative_gap_tolerance(mut self, tol: f64) -> Self {
        self.settings.relative_gap_tolerance = tol;
        self
    }
    /// Sets [`FrankWolfeSettings::variant`].
    pub fn variant(mut self, variant: FrankWolfeVariant) -> Self {
        self.settings.variant = variant;
        self
    }
    /// Sets [`FrankWolfeSettings::weights`].
    pub fn weights(mut self, weights: Vec<f64>) -> Self {
        self.settings.weights = Some(weights);
        self
    }
    /// Sets [`FrankWolfeSettings::parallelism`].
    pub fn parallelism(mut self, par: Parallelism) -> Self {
        self.settings.parallelism = par;
        self
    }
    /// Sets [`FrankWolfeSettings::progress`].
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.settings.progress = Some(sink);
        self
    }
    /// Validates ([`FrankWolfeSettings::check`]) and returns the settings.
    pub fn build(self) -> Result<FrankWolfeSettings> {
        self.settings.check()?;
        Ok(self.settings)
    }
}

/// The outcome of a Frank–Wolfe projection.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrankWolfeResult {
    /// The final iterate `v ∈ K`.
    pub point: Vec<f64>,
    /// `(atom, weight)` pairs, weights > 0 summing to 1 with `v = Σ weight·atom`, sorted
    /// by atom; empty when the oracle does not report atoms (e.g. a [`crate::Ball`]).
    pub atoms: Vec<(usize, f64)>,
    /// `f(v) = ‖v − y‖²_W`.
    pub objective: f64,
    /// Frank–Wolfe duality gap at `v` (oracle slack included): `objective − min_K f ≤ gap`.
    pub gap: f64,
    /// Number of steps taken.
    pub iterations: usize,
    /// Number of oracle calls (one for the start plus one per gap evaluation).
    pub oracle_calls: usize,
    /// How the solve ended.
    pub status: SolveStatus,
    /// Whether [`Self::gap`] is a certificate: true when the oracle call that computed it
    /// was exact (every solver on an [`AtomicBody`] or a [`LinearOracle`] with its stated
    /// slack); false after a heuristic [`crate::AtomOracle`] call, when the gap is only the
    /// gap towards the best atom found.
    #[serde(default = "certified_by_default")]
    pub gap_certified: bool,
}

fn certified_by_default() -> bool {
    true
}

fn weighted_sq_dist(v: &[f64], y: &[f64], w: &[f64]) -> f64 {
    v.iter()
        .zip(y)
        .zip(w)
        .map(|((a, b), wk)| wk * (a - b) * (a - b))
        .sum()
}

fn validate_target(dim: usize, y: &[f64]) -> Result<()> {
    check_dim("projection target y", dim, y.len())?;
    check_finite(y, "projection target y")
}

/// Active set of atoms with convex weights; `pos[atom]` locates an atom in `list`.
struct ActiveSet {
    list: Vec<(usize, f64)>,
    pos: Vec<usize>,
}

const ABSENT: usize = usize::MAX;

impl ActiveSet {
    fn new(num_atoms: usize) -> Self {
        Self {
            list: Vec::new(),
            pos: vec![ABSENT; num_atoms],
        }
    }
    fn reset_to(&mut self, atom: usize) {
        for &(a, _) in &self.list {
            self.pos[a] = ABSENT;
        }
        self.list.clear();
        self.pos[atom] = 0;
        self.list.push((atom, 1.0));
    }
    fn scale(&mut self, factor: f64) {
        for (_, w) in &mut self.list {
            *w *= factor;
        }
    }
    fn add(&mut self, atom: usize, delta: f64) {
        match self.pos[atom] {
            ABSENT => {
                self.pos[atom] = self.list.len();
                self.list.push((atom, delta));
            }
            k => self.list[k].1 += delta,
        }
    }
    fn weight(&self, atom: usize) -> f64 {
        match self.pos[atom] {
            ABSENT => 0.0,
            k => self.list[k].1,
        }
    }
    fn remove(&mut self, atom: usize) {
        let k = self.pos[atom];
        if k == ABSENT {
            return;
        }
        self.pos[atom] = ABSENT;
        self.list.swap_remove(k);
        if let Some(&(moved, _)) = self.list.get(k) {
            self.pos[moved] = k;
        }
    }
    /// Drops atoms whose weight is ≤ 0 (round-off) and renormalizes to sum 1.
    fn clean(&mut self) {
        let mut k = 0;
        while k < self.list.len() {
            if self.list[k].1 <= 0.0 {
                let atom = self.list[k].0;
                self.remove(atom);
            } else {
                k += 1;
            }
        }
        let total: f64 = self.list.iter().map(|(_, w)| w).sum();
        if total > 0.0 {
            self.scale(1.0 / total);
        }
    }
    fn sorted(&self) -> Vec<(usize, f64)> {
        let mut v = self.list.clone();
        v.sort_by_key(|&(a, _)| a);
        v
    }
}

/// Iterations between recomputations of the iterate from its atoms (bounds the drift of
/// the incrementally updated `v`).
const REFRESH_EVERY: usize = 256;

/// Classic Frank–Wolfe projection of `y` onto the body behind any [`LinearOracle`]
/// (seed 000 §3). Fails on invalid settings, a `y` of the wrong length or non-finite, a
/// variant other than [`FrankWolfeVariant::Classic`] (use [`frank_wolfe_project_atoms`] /
/// [`frank_wolfe_project_hull`] for those), or an oracle answer of the wrong shape.
///
/// Convex weights are tracked when every oracle answer names its atom; otherwise
/// [`FrankWolfeResult::atoms`] is empty.
pub fn frank_wolfe_project<O: LinearOracle + ?Sized>(
    body: &O,
    y: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    let dim = body.dim();
    let w = settings.check_for_dim(dim)?;
    validate_target(dim, y)?;
    if settings.variant != FrankWolfeVariant::Classic {
        return Err(GeometryError::InvalidSettings(
            "away-step, pairwise, accelerated and min-norm-point variants need an atomic body: use frank_wolfe_project_atoms"
                .into(),
        ));
    }
    let par = settings.parallelism;
    let check_answer = |ans: &crate::OracleAnswer| -> Result<()> {
        if ans.point.len() != dim {
            return Err(GeometryError::Oracle(format!(
                "answer has dimension {}, expected {dim}",
                ans.point.len()
            )));
        }
        if !(ans.point.iter().all(|x| x.is_finite()) && ans.slack.is_finite() && ans.slack >= 0.0) {
            return Err(GeometryError::Oracle(
                "answer has non-finite coordinates or an invalid slack".into(),
            ));
        }
        Ok(())
    };

    let mut c: Vec<f64> = y.iter().zip(&w).map(|(yk, wk)| wk * yk).collect();
    let first = body.linear_max(&c, par)?;
    check_answer(&first)?;
    let mut oracle_calls = 1;
    let mut v = first.point;
    let mut track_atoms = first.atom.is_some();
    let mut atoms: Vec<(usize, f64)> = first.atom.map(|a| vec![(a, 1.0)]).unwrap_or_default();
    let f0 = weighted_sq_dist(&v, y, &w);
    let threshold = settings.relative_gap_tolerance * f0;
    let mut d = vec![0.0; dim];
    let mut iterations = 0;
    let (gap, status) = loop {
        settings.report_iterations(iterations);
        for k in 0..dim {
            c[k] = w[k] * (y[k] - v[k]);
        }
        let ans = body.linear_max(&c, par)?;
        check_answer(&ans)?;
        oracle_calls += 1;
        let cv = dot(&c, &v);
        let cs = dot(&c, &ans.point);
        let gap = (2.0 * (cs - cv + ans.slack)).max(0.0);
        if f0 == 0.0 || gap <= threshold {
            break (gap, SolveStatus::Converged);
        }
        if iterations >= settings.max_iterations {
            break (gap, SolveStatus::MaxIterations);
        }
        let mut dd = 0.0;
        for k in 0..dim {
            d[k] = ans.point[k] - v[k];
            dd += w[k] * d[k] * d[k];
        }
        let cd = cs - cv;
        if !(dd > 0.0 && cd > 0.0) {
            break (gap, SolveStatus::Stalled);
        }
        let gamma = (cd / dd).min(1.0);
        for k in 0..dim {
            v[k] += gamma * d[k];
        }
        if gamma >= 1.0 {
            v.copy_from_slice(&ans.point);
        }
        match (track_atoms, ans.atom) {
            (true, Some(a)) => {
                for (_, wt) in &mut atoms {
                    *wt *= 1.0 - gamma;
                }
                match atoms.iter_mut().find(|(b, _)| *b == a) {
                    Some((_, wt)) => *wt += gamma,
                    None => atoms.push((a, gamma)),
                }
                atoms.retain(|&(_, wt)| wt > 0.0);
            }
            _ => {
                track_atoms = false;
                atoms.clear();
            }
        }
        iterations += 1;
    };
    atoms.sort_by_key(|&(a, _)| a);
    settings.report_iterations(settings.max_iterations);
    Ok(FrankWolfeResult {
        objective: weighted_sq_dist(&v, y, &w),
        point: v,
        atoms,
        gap,
        iterations,
        oracle_calls,
        status,
        gap_certified: true,
    })
}

/// Frank–Wolfe projection of `y` onto the convex hull of a point set, with any variant
/// (active-set bookkeeping; see the module docs). Same as [`frank_wolfe_project_atoms`].
pub fn frank_wolfe_project_hull<P: PointSet>(
    hull: &ConvexHull<P>,
    y: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    frank_wolfe_project_atoms(hull, y, settings)
}

/// Frank–Wolfe projection of `y` onto a polytope given by its atoms ([`ConvexHull`],
/// [`crate::SymmetricHull`], …) with any [`FrankWolfeVariant`].
///
/// Each iteration computes all atom scores `⟨c, a⟩` once (the oracle call); the
/// Frank–Wolfe atom is their argmax and the away atom the argmin over the active set,
/// so away and pairwise steps cost no extra oracle work.
pub fn frank_wolfe_project_atoms<B: AtomicBody + ?Sized>(
    body: &B,
    y: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    let dim = body.dim();
    let w = settings.check_for_dim(dim)?;
    validate_target(dim, y)?;
    let n = body.num_atoms();
    if n == 0 {
        return Err(GeometryError::Empty("the body has no atoms"));
    }
    match settings.variant {
        FrankWolfeVariant::Accelerated => {
            return crate::accelerated::accelerated_project_atoms(body, y, &w, settings);
        }
        FrankWolfeVariant::MinNormPoint => {
            return crate::min_norm_point::min_norm_point_project_atoms(body, y, &w, settings);
        }
        _ => {}
    }
    let par = settings.parallelism;
    let mut scores = vec![0.0; n];
    let mut c: Vec<f64> = y.iter().zip(&w).map(|(yk, wk)| wk * yk).collect();
    check_finite(&c, "weighted target W·y")?;
    body.atom_scores(&c, &mut scores, par);
    let mut oracle_calls = 1;
    let start = argmax(&scores).ok_or(GeometryError::Empty("the body has no atoms"))?;
    let mut v = vec![0.0; dim];
    body.add_atom_scaled(start, 1.0, &mut v);
    let mut active = ActiveSet::new(n);
    active.reset_to(start);
    let f0 = weighted_sq_dist(&v, y, &w);
    let threshold = settings.relative_gap_tolerance * f0;
    let mut d = vec![0.0; dim];
    let mut iterations = 0;

    let (gap, status) = loop {
        settings.report_iterations(iterations);
        if iterations > 0 && iterations % REFRESH_EVERY == 0 {
            active.clean();
            v.fill(0.0);
            for &(a, wt) in &active.list {
                body.add_atom_scaled(a, wt, &mut v);
            }
        }
        for k in 0..dim {
            c[k] = w[k] * (y[k] - v[k]);
        }
        body.atom_scores(&c, &mut scores, par);
        oracle_calls += 1;
        let s = argmax(&scores).unwrap_or(start);
        let cv = dot(&c, &v);
        let gap_fw = 2.0 * (scores[s] - cv);
        if !gap_fw.is_finite() {
            return Err(GeometryError::Oracle(
                "non-finite atom scores (overflow?)".into(),
            ));
        }
        let gap = gap_fw.max(0.0);
        if f0 == 0.0 || gap <= threshold {
            break (gap, SolveStatus::Converged);
        }
        if iterations >= settings.max_iterations {
            break (gap, SolveStatus::MaxIterations);
        }
        // The away atom: smallest score among active atoms.
        let away = if settings.variant == FrankWolfeVariant::Classic {
            None
        } else {
            active
                .list
                .iter()
                .map(|&(a, _)| a)
                .min_by(|&a, &b| scores[a].total_cmp(&scores[b]))
        };
        enum Step {
            Toward,
            Away(usize),
            Pairwise(usize),
        }
        let step = match (settings.variant, away) {
            (FrankWolfeVariant::AwayStep, Some(a))
                if active.list.len() > 1 && 2.0 * (cv - scores[a]) > gap_fw =>
            {
                Step::Away(a)
            }
            (FrankWolfeVariant::Pairwise, Some(a)) if a != s => Step::Pairwise(a),
            _ => Step::Toward,
        };
        // Direction d, ⟨c, d⟩ and the largest feasible step.
        d.fill(0.0);
        let (cd, gamma_max) = match step {
            Step::Toward => {
                body.add_atom_scaled(s, 1.0, &mut d);
                for k in 0..dim {
                    d[k] -= v[k];
                }
                (scores[s] - cv, 1.0)
            }
            Step::Away(a) => {
                let alpha = active.weight(a);
                d.copy_from_slice(&v);
                body.add_atom_scaled(a, -1.0, &mut d);
                (cv - scores[a], alpha / (1.0 - alpha))
            }
            Step::Pairwise(a) => {
                body.add_atom_scaled(s, 1.0, &mut d);
                body.add_atom_scaled(a, -1.0, &mut d);
                (scores[s] - scores[a], active.weight(a))
            }
        };
        let dd: f64 = d.iter().zip(&w).map(|(dk, wk)| wk * dk * dk).sum();
        if !(dd > 0.0 && cd > 0.0 && gamma_max > 0.0) {
            break (gap, SolveStatus::Stalled);
        }
        let gamma = (cd / dd).min(gamma_max);
        let at_max = gamma >= gamma_max;
        for k in 0..dim {
            v[k] += gamma * d[k];
        }
        match step {
            Step::Toward => {
                if at_max {
                    active.reset_to(s);
                    v.fill(0.0);
                    body.add_atom_scaled(s, 1.0, &mut v);
                } else {
                    active.scale(1.0 - gamma);
                    active.add(s, gamma);
                }
            }
            Step::Away(a) => {
                active.scale(1.0 + gamma);
                active.add(a, -gamma);
                if at_max {
                    active.remove(a);
                }
            }
            Step::Pairwise(a) => {
                active.add(a, -gamma);
                active.add(s, gamma);
                if at_max {
                    active.remove(a);
                }
            }
        }
        iterations += 1;
    };
    active.clean();
    settings.report_iterations(settings.max_iterations);
    Ok(FrankWolfeResult {
        objective: weighted_sq_dist(&v, y, &w),
        point: v,
        atoms: active.sorted(),
        gap,
        iterations,
        oracle_calls,
        status,
        gap_certified: true,
    })
}
