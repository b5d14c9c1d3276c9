//! The Chaining Mechanism for worst-case error (seed 004 §4.3, Thm 1.5): the Lemma 4.2
//! decomposition in `‖·‖_∞` with `Δ = 1`, and private multiplicative weights on every level.
//!
//! # Decomposition
//! As in [`crate::projection::chaining`] (whose [`ChainDecomposition`] this module reuses
//! for chains and increments), but in the metric of dp-geometry's
//! [`MultiscaleDecomposition`] with [`Metric::LInf`] and `Δ = 1` (computed in closed form
//! by [`linf_marginal_decomposition`]) (answer vectors lie in
//! `[0, 1]^m`), `k = ⌈log₂(2/α)⌉` levels: `𝒳 ⊂ 𝒳^(1) + … + 𝒳^(k) + (α/2)B_∞`.
//!
//! **For marginal workloads the decomposition is trivial beyond level 1.** Answer vectors
//! of marginal cells have 0/1 entries, so two records with different answer vectors are at
//! `ℓ∞` distance exactly 1 > 2^{−j}: `S_1` already holds one record per distinct answer
//! vector, `S_j = S_1` for every `j ≥ 2` (all increments 0), and the remainder is 0. The
//! mechanism then *is* private multiplicative weights over the distinct answer vectors with
//! the whole ρ — which is what Thm 1.5 gives for 0/1 queries (its gain is for real-valued
//! query classes with small `ℓ∞` covering numbers). The level code below is nevertheless
//! written for any level.
//!
//! **So it reads the data only through the workload's counts**: level 1's counts are the
//! workload's counts and the other levels' are 0 (`ChainingWorstCase::level_counts`);
//! [`ChainingWorstCase::release_counted`] and [`crate::Mechanism::release_counts`] release
//! from counts streamed or counted by an engine, the same release, draw for draw.
//!
//! # Mechanism (per non-trivial level `j`, ρ_j = ρ / L, L = number of non-trivial levels)
//! The level's dataset is the multiset of the records' `j`-th chain terms
//! `v_z = q(z) − q(π_{j−1}(z))`, `z ∈ S_j` (level 1: `v_z = q(z)`), with count vector
//! `c_j = Σ_records v_{x_j}` (integers: marginal answers are 0/1). Private multiplicative
//! weights in MWEM's practical form (the `MWEM-style` choice of the issue; seed 004
//! Lemma 2.3 is HR10's PMW), over a distribution `A` on `S_j`, `T` rounds:
//! 1. select a query `i` by the exponential mechanism proper (exact rejection sampling,
//!    `dp_core::ExponentialMechanism`, not permute-and-flip: the accounting is zCDP and
//!    needs the bounded-range ε₁²/8, which permute-and-flip lacks, issue #9) on
//!    `|c_{j,i} − n·A_i|`,
//!    `A_i = Σ_z A(z) v_z(i)`;
//! 2. measure `m = c_{j,i} + Z`, `Z` discrete Gaussian;
//! 3. `passes` MW passes over all measurements: `A(z) ∝ A(z)·exp(v_z(i)(m/n − A_i)/2)`.
//!
//! The level's estimate is `Σ_z A(z) v_z`; the release is the sum of the levels' estimates
//! (plus `q(z)` for a trivial level 1 with `S_1 = {z}`, exact and free).
//!
//! # Privacy (replace-one neighbours, n public)
//! Replacing one record changes its chain term at level `j` from some `v_z` to some
//! `v_{z'}`, so each `c_{j,i}` moves by at most `s_j` = the range of a coordinate:
//! [`level_sensitivity`] — `s_1 = 1` (entries in {0, 1}), `s_j = 2` for `j ≥ 2` (entries
//! in {−1, 0, 1}). Each round of level `j` is calibrated by [`MwemPlan`] for
//! `ρ_j`-zCDP over `T` rounds with unit sensitivity, scaled by `s_j`: the exponential
//! mechanism at `ε₁ = 2√(ρ_j/T)` with score sensitivity `s_j` (`ε₁²/8 = ρ_j/(2T)`-zCDP,
//! ε₁-bounded range, Cesar–Rogers 2021 Lemma 3.2) and the discrete Gaussian of variance `σ_j² = s_j²·T/ρ_j`
//! (`s_j²/(2σ_j²) = ρ_j/(2T)`). Composition over rounds and levels (seed 004 Lemma 2.1):
//! `Σ_j ρ_j = ρ`. Trivial levels have one-point universes and spend nothing.
//! (ε, δ) budgets are converted to the largest ρ within them, as for the projection family.

use std::sync::Arc;

use dp_core::{ExponentialMechanism, PrivacyLoss, ProgressSink, Selector, report_progress};
#[cfg(doc)]
use dp_geometry::Metric;
use dp_geometry::{MultiscaleDecomposition, PointSet};
use dp_queries::{Dataset, MarginalPoints, MarginalWorkload, Universe};
use rand::CryptoRng;

use super::mwem::MwemPlan;
use super::universe_mw::{CellSupports, UniverseDistribution};
use crate::engine::{
    CountsOf, Measured, Measurement, Noise, PublicState, RecordedRound, RoundPlan, StepSource,
    run_rounds,
};
use crate::projection::chaining::{ChainDecomposition, ChainLevel};
use crate::projection::coarse::{check_alpha, projection_error_bound};
use crate::projection::{ProjectionSettings, ZcdpBudget, prepare};
use crate::sensitivity::distinguisher_scores;
use crate::{Diagnostics, Mechanism, MechanismError, PrivacyCertificate, Release, Result};
use dp_core::Neighbouring;

/// The coordinate range `s_j` of level `j` (0-based) of a marginal workload's `ℓ∞` chain:
/// 1 for level 0 (answers in {0, 1}), 2 for the increment levels (entries in {−1, 0, 1}).
/// It bounds the change of every level count under replace-one (module docs).
pub fn level_sensitivity(j: usize) -> u64 {
    if j == 0 { 1 } else { 2 }
}

/// The `ℓ∞` decomposition (`Δ = 1`, `k` levels) of a marginal workload's universe in
/// closed form, equal to dp-geometry's greedy [`MultiscaleDecomposition`] with
/// [`Metric::LInf`] (tested against it): answer vectors have 0/1 entries, so two records are
/// at distance 0 if they agree on every attribute some marginal uses and at distance 1
/// otherwise. The greedy scan in index order therefore keeps the first record of each
/// class in `S_1`, maps every record to it, and finds nothing new at finer scales
/// (`S_j = S_1`). Costs `O(|𝒳|)` instead of the generic `O(|𝒳|·|S|·m)`.
pub fn linf_marginal_decomposition(
    universe: &Universe,
    workload: &MarginalWorkload,
    levels: usize,
) -> Result<ChainDecomposition> {
    linf_decomposition_reporting(universe, workload, levels, None)
}

/// How many universe records the decomposition scans between two progress reports.
const SCAN_REPORT_EVERY: usize = 1 << 12;

/// [`linf_marginal_decomposition`], reporting the universe records scanned of `|𝒳|`
/// (public: the universe is built from the public domain) as stage "chaining (worst case):
/// decomposition, universe records scanned".
fn linf_decomposition_reporting(
    universe: &Universe,
    workload: &MarginalWorkload,
    levels: usize,
    progress: Option<&ProgressSink>,
) -> Result<ChainDecomposition> {
    const STAGE: &str = "chaining (worst case): decomposition, universe records scanned";
    if levels == 0 || levels > 64 {
        return Err(crate::MechanismError::InvalidParameter {
            name: "levels",
            value: levels.to_string(),
            reason: "must be in 1..=64".into(),
        });
    }
    let mut used: Vec<usize> = workload
        .marginals()
        .iter()
        .flat_map(|m| m.attrs().iter().copied())
        .collect();
    used.sort_unstable();
    used.dedup();
    let mut first: std::collections::HashMap<Vec<u32>, usize> = std::collections::HashMap::new();
    let mut centers = Vec::new();
    let mut map = Vec::with_capacity(universe.len());
    for x in 0..universe.len() {
        if x % SCAN_REPORT_EVERY == 0 {
            report_progress(progress, STAGE, x, universe.len());
        }
        let r = universe.record(x)?;
        let key: Vec<u32> = used.iter().map(|&a| r[a]).collect();
        let rep = *first.entry(key).or_insert_with(|| {
            centers.push(x);
            x
        });
        map.push(rep);
    }
    report_progress(progress, STAGE, universe.len(), universe.len());
    let mut scale = 1.0;
    let levels = (0..levels)
        .map(|_| {
            scale *= 0.5;
            ChainLevel {
                scale,
                centers: centers.clone(),
                map: map.clone(),
            }
        })
        .collect();
    Ok(ChainDecomposition {
        radius: 1.0,
        levels,
    })
}

/// The public plan of a release: the decomposition and, per level, `None` if trivial or
/// the level's ρ_j, sensitivity s_j and MWEM calibration (select ε₁, unit σ² = T/ρ_j).
#[derive(Clone, Debug, PartialEq)]
pub struct WorstCasePlan {
    /// The target error α (sets `k`).
    pub alpha: f64,
    /// The `ℓ∞` decomposition (`Δ = 1`).
    pub decomposition: ChainDecomposition,
    /// Per level: `None` if trivial, else `(ρ_j, s_j, plan)`.
    pub levels: Vec<Option<(f64, u64, MwemPlan)>>,
}

impl WorstCasePlan {
    /// The measurement variance of level `j`: `s_j²·T/ρ_j` (`None` if trivial).
    pub fn sigma2(&self, j: usize) -> Option<f64> {
        let (_, s, plan) = self.levels.get(j)?.as_ref()?;
        match plan.measurement {
            super::MwemMeasurement::Gaussian { sigma2 } => Some((*s * *s) as f64 * sigma2),
            super::MwemMeasurement::Laplace { .. } => None,
        }
    }

    /// The engine plan of every round of level `j` (`None` if trivial): the exponential
    /// mechanism proper at ε₁ with score sensitivity `s_j`, accounted `ε₁²/8`-zCDP
    /// (Cesar–Rogers 2021 Lemma 3.2), and the discrete Gaussian measurement of one level
    /// count (sensitivity `s_j`, variance [`Self::sigma2`]), `ρ_j/(2T)`-zCDP.
    pub fn level_plan(&self, j: usize) -> Result<Option<RoundPlan>> {
        let Some((rho_j, s, plan)) = self.levels.get(j).and_then(|l| l.as_ref()) else {
            return Ok(None);
        };
        let ds = crate::sensitivity::distinguisher_selector_sensitivity(*s);
        let em = ExponentialMechanism::new(plan.select_epsilon, ds, false)?;
        Ok(Some(RoundPlan {
            select_loss: em.zcdp_privacy(),
            selector: Selector::Exponential(em),
            measurement: Measurement {
                noise: Noise::gaussian(self.sigma2(j).unwrap_or(f64::NAN))?,
                measured: Measured::Count { sensitivity: *s },
                loss: PrivacyLoss::zcdp(rho_j / (2.0 * plan.rounds as f64))?,
            },
        }))
    }
}

/// Parameters of [`ChainingWorstCase`], before validation.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainingWorstCaseParams {
    /// ρ, or (ε, δ) converted to the largest ρ within it.
    pub budget: PrivacyLoss,
    /// Only replace-one passes [`Self::check`].
    pub neighbouring: Neighbouring,
    /// Target α ∈ (0, 1]; `None`: the projection mechanism's bound (sets `k` only).
    pub alpha: Option<f64>,
    /// PMW rounds per non-trivial level (default 15, as MWEM).
    pub rounds: usize,
    /// MW passes over the measurements per round (default 10, as MWEM).
    pub passes: usize,
    /// Universe settings (the Frank–Wolfe part is unused).
    pub settings: ProjectionSettings,
}

impl ChainingWorstCaseParams {
    /// Replace-one, automatic α, T = 15, 10 passes.
    pub fn new(budget: PrivacyLoss) -> Self {
        ChainingWorstCaseParams {
            budget,
            neighbouring: Neighbouring::ReplaceOne,
            alpha: None,
            rounds: 15,
            passes: 10,
            settings: ProjectionSettings::default(),
        }
    }

    /// Set the neighbouring relation (only replace-one is accepted).
    pub fn neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// Set α.
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = Some(alpha);
        self
    }

    /// Set the PMW rounds per level.
    pub fn rounds(mut self, t: usize) -> Self {
        self.rounds = t;
        self
    }

    /// Validate.
    pub fn check(&self) -> Result<ChainingWorstCase> {
        self.settings.check()?;
        check_alpha(self.alpha)?;
        let budget = ZcdpBudget::new(self.budget, self.neighbouring)?;
        // Validates rounds ≥ 1 with the budget.
        MwemPlan::new(&PrivacyLoss::zcdp(budget.rho)?, self.rounds)?;
        Ok(ChainingWorstCase {
            budget,
            alpha: self.alpha,
            rounds: self.rounds,
            passes: self.passes,
            settings: self.settings.clone(),
        })
    }
}

/// The Chaining Mechanism for worst-case error (module docs): ρ-zCDP, replace-one.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainingWorstCase {
    budget: ZcdpBudget,
    alpha: Option<f64>,
    rounds: usize,
    passes: usize,
    settings: ProjectionSettings,
}

impl ChainingWorstCase {
    /// The ρ of the guarantee.
    pub fn rho(&self) -> f64 {
        self.budget.rho
    }

    /// The plan for a universe, workload and public `n` (no data involved): the
    /// decomposition, and every non-trivial level's calibration with its round plan built
    /// ([`WorstCasePlan::level_plan`]: the selector's ε and the measurement's σ² within
    /// range), so that a plan the release cannot run is refused here, before any data is
    /// read.
    pub fn plan(
        &self,
        universe: &Universe,
        workload: &MarginalWorkload,
        n: usize,
    ) -> Result<WorstCasePlan> {
        self.plan_reporting(universe, workload, n, self.settings.progress())
    }

    /// [`Self::plan`], the decomposition reporting to `progress`.
    fn plan_reporting(
        &self,
        universe: &Universe,
        workload: &MarginalWorkload,
        n: usize,
        progress: Option<&ProgressSink>,
    ) -> Result<WorstCasePlan> {
        let alpha = self
            .alpha
            .unwrap_or_else(|| projection_error_bound(universe.len(), n, self.budget.rho));
        let k = MultiscaleDecomposition::levels_for_alpha(alpha.min(0.999_999))?;
        let decomposition = linf_decomposition_reporting(universe, workload, k, progress)?;
        let nontrivial = (0..k).filter(|&j| decomposition.is_nontrivial(j)).count();
        let rho_j = self.budget.rho / nontrivial.max(1) as f64;
        let levels = (0..k)
            .map(|j| {
                if !decomposition.is_nontrivial(j) {
                    return Ok(None);
                }
                let plan = MwemPlan::new(&PrivacyLoss::zcdp(rho_j)?, self.rounds)?;
                Ok(Some((rho_j, level_sensitivity(j), plan)))
            })
            .collect::<Result<Vec<_>>>()?;
        let plan = WorstCasePlan {
            alpha,
            decomposition,
            levels,
        };
        for j in 0..k {
            plan.level_plan(j)?;
        }
        Ok(plan)
    }

    /// The exact level count vectors `c_j = Σ_records (q(x_j) − q(x_{j−1}))` (workload order)
    /// from the workload's exact counts `counts` (checked by the caller). The decomposition
    /// is [`linf_marginal_decomposition`]'s: at every level each universe record is mapped
    /// to the first record that agrees with it on every attribute the workload reads, so
    /// every link `x_j` of a record's chain has the record's own answer vector `q(x)`. Hence
    /// `c_1 = Σ_records q(x)`, the workload's counts, and `c_j = 0` for `j ≥ 2` (those
    /// levels are trivial and never measured): the level counts are a function of the
    /// workload's counts, and the release needs nothing else of the data.
    fn level_counts(plan: &WorstCasePlan, counts: &[u64]) -> Result<Vec<Vec<i64>>> {
        let first = crate::engine::exact_counts(counts)?;
        let m = first.len();
        Ok((0..plan.decomposition.levels.len())
            .map(|j| if j == 0 { first.clone() } else { vec![0; m] })
            .collect())
    }

    /// Runs the release and also returns every level's measurements `(query, noisy count)`
    /// in round order (empty for trivial levels) — a hook for the noise-scale test.
    #[allow(clippy::type_complexity)]
    pub fn release_with_noise(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<(Release, WorstCasePlan, Vec<Vec<(usize, i64)>>)> {
        self.run(data, workload, rng, &mut |_, _, _| {})
    }

    /// [`Mechanism::release`] from the exact counts of the workload's tables (workload
    /// order, as [`MarginalWorkload::count_all`] gives them) of a dataset of the public `n`
    /// records: the level counts are a function of them (`Self::level_counts`), so this is
    /// the same release, draw for draw, as from the records.
    ///
    /// Errors: as the release, and counts of the wrong length or whose tables do not each
    /// count `n` records.
    pub fn release_counted(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let universe = crate::projection::universe_of(workload, &self.settings)?;
        Ok(self
            .run_counted(&universe, counts, n, workload, rng, &mut |_, _, _| {})?
            .0)
    }

    /// The release: the data checked, the workload counted, then [`Self::run_counted`].
    #[allow(clippy::type_complexity)]
    fn run(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
        observe: &mut dyn FnMut(usize, usize, &[f64]),
    ) -> Result<(Release, WorstCasePlan, Vec<Vec<(usize, i64)>>)> {
        let universe = prepare(data, workload, &self.settings)?;
        let counts = workload.count_all(data)?;
        self.run_counted(&universe, &counts, data.n(), workload, rng, observe)
    }

    /// The release from the workload's exact counts of `n` records (the one path of the
    /// releases from records and from counts); `observe(j, t, a)` sees level `j`'s estimate
    /// `a` (its answers `Σ_e A(e)·v_e`) at the start of round `t` (1-based): the public
    /// history of that round.
    #[allow(clippy::type_complexity)]
    fn run_counted(
        &self,
        universe: &Universe,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
        observe: &mut dyn FnMut(usize, usize, &[f64]),
    ) -> Result<(Release, WorstCasePlan, Vec<Vec<(usize, i64)>>)> {
        crate::counts::check_marginal_counts(counts, n, workload)?;
        let plan = self.plan(universe, workload, n)?;
        let level_c = Self::level_counts(&plan, counts)?;
        let points = MarginalPoints::new(universe, workload)?;
        let dec = &plan.decomposition;
        let m = workload.num_queries();
        let mut answers = vec![0.0; m];
        let mut supports = CellSupports::new(universe, workload)?;
        let mut noises = Vec::new();
        let mut notes = vec![format!(
            "ℓ∞ decomposition (Δ = 1): α = {:.4}, k = {}, |S_j| = {:?} of {}; {} non-trivial level(s) share ρ = {:.4e}",
            plan.alpha,
            dec.levels.len(),
            dec.levels
                .iter()
                .map(|l| l.centers.len())
                .collect::<Vec<_>>(),
            universe.len(),
            plan.levels.iter().flatten().count(),
            self.budget.rho
        )];
        for (j, level) in plan.levels.iter().enumerate() {
            let Some((rho_j, s, mplan)) = level else {
                if j == 0 {
                    points.add_scaled(dec.levels[0].centers[0], 1.0, &mut answers);
                }
                noises.push(Vec::new());
                continue;
            };
            let inc = dec.increments(j);
            // each level's rounds are their own stage ("chaining level 1 of 3: PMW rounds")
            let sink = self.settings.progress().map(|p| {
                p.with_prefix(format!(
                    "chaining level {} of {}: ",
                    j + 1,
                    dec.levels.len()
                ))
            });
            let sigma2 = plan.sigma2(j).unwrap_or(f64::NAN);
            let round_plan = plan
                .level_plan(j)?
                .ok_or_else(|| MechanismError::Numerical {
                    what: format!("level {} has no plan", j + 1),
                })?;
            // Position of every universe element among the level's plus / minus points.
            let mut plus_of = vec![Vec::new(); universe.len()];
            let mut minus_of = vec![Vec::new(); universe.len()];
            for (e, &(z, p)) in inc.iter().enumerate() {
                plus_of[z].push(e);
                if let Some(p) = p {
                    minus_of[p].push(e);
                }
            }
            let counts = &level_c[j];
            let mut state = LevelState {
                points: &points,
                inc: &inc,
                m,
                supports: &mut supports,
                plus_of: &plus_of,
                minus_of: &minus_of,
                dist: UniverseDistribution::uniform(inc.len())?,
                measured: Vec::new(),
                n: n as f64,
                passes: self.passes,
            };
            let level_noise = run_rounds(
                &mut state,
                &round_plan,
                mplan.rounds,
                counts,
                &|c, a| distinguisher_scores(c.iter().map(|&v| v as f64), n, a),
                rng,
                &mut |t, a| {
                    // public: the round index of this level against its fixed T
                    report_progress(sink.as_ref(), "PMW rounds", t - 1, mplan.rounds);
                    observe(j, t, a)
                },
            )?;
            report_progress(sink.as_ref(), "PMW rounds", mplan.rounds, mplan.rounds);
            let dist = state.dist;
            for (a, v) in
                answers
                    .iter_mut()
                    .zip(level_answers(&points, &inc, m, &dist.probabilities()))
            {
                *a += v;
            }
            notes.push(format!(
                "level {}: |S_j| = {}, ρ_j = {:.4e}, s_j = {s}, T = {}, ε₁ = {:.4e}, σ² = {:.4e}",
                j + 1,
                inc.len(),
                rho_j,
                mplan.rounds,
                mplan.select_epsilon,
                sigma2
            ));
            noises.push(level_noise);
        }
        let release = Release {
            answers,
            synthetic: None,
            certificate: self.certificate(),
            diagnostics: Diagnostics {
                iterations: Some(plan.levels.iter().flatten().map(|l| l.2.rounds).sum()),
                notes,
                ..Default::default()
            },
        };
        Ok((release, plan, noises))
    }
}

/// A level's answers `Σ_e w[e]·v_e` for weights `w` over its increments `(z, π(z))`.
fn level_answers(
    points: &MarginalPoints,
    inc: &[(usize, Option<usize>)],
    m: usize,
    w: &[f64],
) -> Vec<f64> {
    let mut out = vec![0.0; m];
    for (e, &(z, p)) in inc.iter().enumerate() {
        if w[e] != 0.0 {
            points.add_scaled(z, w[e], &mut out);
            if let Some(p) = p {
                points.add_scaled(p, -w[e], &mut out);
            }
        }
    }
    out
}

/// A level's public state: the distribution `A` over its increments and the measurements
/// so far, updated by MWEM-style multiplicative weights (module docs, step 3).
struct LevelState<'a, 'u> {
    points: &'a MarginalPoints<'u>,
    inc: &'a [(usize, Option<usize>)],
    m: usize,
    supports: &'a mut CellSupports<'u>,
    /// Per universe element, the increments `e` with `z_e` = it (and with `π(z_e)` = it).
    plus_of: &'a [Vec<usize>],
    minus_of: &'a [Vec<usize>],
    dist: UniverseDistribution,
    /// `(increments with v = +1, with v = −1, m/n)` of every round so far.
    measured: Vec<(Vec<usize>, Vec<usize>, f64)>,
    n: f64,
    passes: usize,
}

impl LevelState<'_, '_> {
    /// For a query, the level elements with v = +1 and with v = −1.
    fn sets(&mut self, q: usize) -> (Vec<usize>, Vec<usize>) {
        let sup = self.supports.support(q);
        let (mut pl, mut mi) = (Vec::new(), Vec::new());
        for &x in sup {
            pl.extend_from_slice(&self.plus_of[x]);
            mi.extend_from_slice(&self.minus_of[x]);
        }
        // An element with both z and π(z) in the cell has v = 0.
        pl.sort_unstable();
        mi.sort_unstable();
        let both: Vec<usize> = pl
            .iter()
            .filter(|e| mi.binary_search(e).is_ok())
            .copied()
            .collect();
        pl.retain(|e| both.binary_search(e).is_err());
        mi.retain(|e| both.binary_search(e).is_err());
        (pl, mi)
    }
}

impl PublicState for LevelState<'_, '_> {
    fn answers(&self) -> Result<Vec<f64>> {
        Ok(level_answers(
            self.points,
            self.inc,
            self.m,
            &self.dist.probabilities(),
        ))
    }

    /// `passes` passes over every measurement so far:
    /// `A(z) ∝ A(z)·exp(v_z(i)(m/n − A_i)/2)`.
    fn absorb(&mut self, candidate: usize, noisy: &[i64]) -> Result<()> {
        let m = *noisy.first().ok_or_else(|| MechanismError::Numerical {
            what: "an empty level measurement".into(),
        })?;
        let (pl, mi) = self.sets(candidate);
        self.measured.push((pl, mi, m as f64 / self.n));
        for _ in 0..self.passes {
            for (pl, mi, mhat) in &self.measured {
                let a = self.dist.mass(pl) - self.dist.mass(mi);
                let f = (mhat - a) / 2.0;
                self.dist.multiply(pl, f);
                self.dist.multiply(mi, -f);
            }
        }
        self.dist.renormalize();
        Ok(())
    }
}

impl crate::StepAudited for ChainingWorstCase {
    /// On the first non-trivial level `j`, per audited round (default: the first and the
    /// last): the exponential-mechanism selection (claimed pure ε₁, accounted
    /// ε₁²/8-zCDP) and the discrete-Gaussian measurement of `request.measured_query`
    /// (default: the reference run's selection), claimed `ρ_j/(2T)`-zCDP, built by the
    /// engine's [`crate::engine::StepSource`]. The whole run: `T` of each per non-trivial
    /// level, zCDP composition (seed 004 Lemma 2.1).
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        request: &crate::StepRequest,
    ) -> Result<crate::StepDecomposition> {
        use crate::steps::{audited_rounds, check_step_data};
        use crate::{StepComposition, StepDecomposition};
        check_step_data(reference, workload, reference.n())?;
        let (n, m) = (reference.n(), workload.num_queries());
        let universe = prepare(reference, workload, &self.settings)?;
        let plan = self.plan(&universe, workload, n)?;
        let Some((j, round_plan)) =
            (0..plan.levels.len()).find_map(|j| plan.level_plan(j).transpose().map(|p| (j, p)))
        else {
            return Err(MechanismError::Data {
                reason: "no non-trivial level: the release spends nothing".into(),
            });
        };
        let round_plan = round_plan?;
        let t_total = self.rounds;
        let rounds = audited_rounds(&request.rounds, &[1, t_total], t_total)?;
        let mut recorded = Vec::new();
        let mut rng = dp_core::seeded_rng(request.seed);
        let (_, _, noises) = self.run(reference, workload, &mut rng, &mut |jj, t, a| {
            if jj == j && rounds.contains(&t) {
                recorded.push(RecordedRound {
                    round: t,
                    history: a.to_vec(),
                    plan: round_plan.clone(),
                    selectable: (0..m).collect(),
                    selected: 0,
                });
            }
        })?;
        for r in &mut recorded {
            r.selected = noises[j][r.round - 1].0;
        }
        // What a runner recomputes from `data`: the level's exact counts, from the
        // workload's (the plan is public: fixed by the domain, the workload and n).
        let (w, level_plan) = (workload.clone(), plan.clone());
        let counts_of: CountsOf = Arc::new(move |data| {
            let mut levels = Self::level_counts(&level_plan, &w.count_all(data)?)?;
            Ok(std::mem::take(&mut levels[j]))
        });
        let name = format!("chaining-worst-case level {}", j + 1);
        let source = StepSource::counting_queries(name, workload, n, m, counts_of);
        let mut losses = Vec::new();
        for jj in 0..plan.levels.len() {
            if let Some(p) = plan.level_plan(jj)? {
                let what = format!("level {}, rounds 1..={t_total}", jj + 1);
                losses.extend(p.losses(&what, t_total as u64));
            }
        }
        Ok(StepDecomposition {
            rounds,
            steps: source.round_steps(reference, request, recorded)?,
            losses,
            composition: StepComposition::Basic,
            accounting: PrivacyLoss::zcdp(self.budget.rho)?,
        })
    }
}

impl Mechanism for ChainingWorstCase {
    fn name(&self) -> &'static str {
        "chaining-worst-case"
    }

    fn works_over_a_universe(&self) -> bool {
        true
    }

    fn certificate(&self) -> PrivacyCertificate {
        self.budget.certificate(self.name())
    }

    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }

    /// The universe size limit (the decomposition is built over the explicit universe) and
    /// the plan the release runs ([`Self::plan`]: every non-trivial level's selector and
    /// noise within range). n sets only the default α and so the number of levels; every
    /// level after the first is trivial in this decomposition (module docs), so the
    /// levels' calibration is the same for every n, and without a public n the plan is
    /// built for n = 1.
    fn check_inputs(&self, workload: &MarginalWorkload, public_n: Option<usize>) -> Result<()> {
        let universe = crate::projection::universe_of(workload, &self.settings)?;
        self.plan_reporting(&universe, workload, public_n.unwrap_or(1), None)
            .map(drop)
    }

    /// The workload's counts and the public n are all it reads
    /// ([`ChainingWorstCase::release_counted`]).
    fn counts_suffice(&self) -> bool {
        true
    }

    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let counts = crate::counts::marginal_counts(counts, n, workload)?;
        self.release_counted(&counts, n, workload, rng)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        Ok(self.release_with_noise(data, workload, rng)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_queries::{Domain, Marginal};

    /// The level counts from the workload's counts are the sums of the records' chain terms
    /// `q(x_j) − q(x_{j−1})` computed from the records themselves, at every level, also when
    /// an attribute the workload does not read merges universe records into one class.
    #[test]
    fn level_counts_are_the_records_chain_sums() {
        let domain = Domain::new(vec![
            ("a".into(), 2),
            ("b".into(), 3),
            ("c".into(), 2),
            ("d".into(), 2),
        ])
        .unwrap();
        let n = 300;
        let cols = (0..4)
            .map(|j| {
                (0..n)
                    .map(|i| ((i * (j + 2) + i / 5) % domain.size(j) as usize) as u32)
                    .collect()
            })
            .collect();
        let data = Dataset::from_columns(domain.clone(), cols).unwrap();
        let tables = vec![
            Marginal::new(&domain, vec![1, 0]).unwrap(),
            Marginal::new(&domain, vec![2]).unwrap(),
        ];
        let w = MarginalWorkload::new(&domain, tables).unwrap();
        let universe = Universe::new(&domain, 1 << 10).unwrap();
        let points = MarginalPoints::new(&universe, &w).unwrap();
        let mech = ChainingWorstCaseParams::new(PrivacyLoss::zcdp(1.0).unwrap())
            .alpha(0.05)
            .check()
            .unwrap();
        let plan = mech.plan(&universe, &w, n).unwrap();
        let k = plan.decomposition.levels.len();
        assert!(k > 1);
        let m = w.num_queries();
        let mut by_records = vec![vec![0.0; m]; k];
        for r in 0..n {
            let x = universe.index_of(&data.record(r)).unwrap();
            let links = plan.decomposition.chain(x);
            for j in 0..k {
                points.add_scaled(links[j], 1.0, &mut by_records[j]);
                if j > 0 {
                    points.add_scaled(links[j - 1], -1.0, &mut by_records[j]);
                }
            }
        }
        let by_records: Vec<Vec<i64>> = by_records
            .iter()
            .map(|c| c.iter().map(|&v| v as i64).collect())
            .collect();
        let from_counts =
            ChainingWorstCase::level_counts(&plan, &w.count_all(&data).unwrap()).unwrap();
        assert_eq!(from_counts, by_records);
    }
}
