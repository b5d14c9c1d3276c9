//! The Chaining Mechanism for average error (seed 004 §4.2, Thm 1.3).
//!
//! # Decomposition (Lemma 4.2)
//! With `d(x, y) = ‖q(x) − q(y)‖₂/√m` and `Δ = ‖q(x)‖₂/√m = √(#tables/m)` (every answer vector
//! of a marginal workload has the same norm, so `𝒳 ⊂ ΔB`), for `j = 1..k`,
//! `k = ⌈log₂(2/α)⌉`, let `S_j` be a maximal `2^{−j}Δ`-separated set, built nested
//! (`S_j` extends `S_{j−1}` greedily, as dp-geometry's [`dp_geometry::MultiscaleDecomposition`]
//! does), and `π_j` a nearest-point map onto `S_j`. Each record `x` has the chain
//! `x_k = π_k(x)`, `x_j = π_j(x_{j+1})`, and
//! `q(x) = q(x_1) + Σ_{j=2}^{k} (q(x_j) − q(x_{j−1})) + (q(x) − q(x_k))` with the `j`-th term in
//! `𝒳^(j) = {q(z) − q(π_{j−1}(z)) : z ∈ S_j}` (`𝒳^(1) = q(S_1)`) and the remainder of norm
//! `≤ 2^{−k}Δ ≤ (α/2)Δ`.
//!
//! # Mechanism (Lemma 3.3)
//! For every level `j` the dataset of `j`-th terms has the integer count vector
//! `c_j = Σ_records (q(x_j) − q(x_{j−1}))`. Each *non-trivial* level gets
//! discrete Gaussian noise for `ρ_j = ρ/L` (L = number of non-trivial levels) at its own ℓ2
//! sensitivity ([`crate::sensitivity::chain_increment_count_sensitivity`]; level 1 has the data's,
//! Δ₂² = 2·#tables), then `c_j/n + noise/n` is projected onto `conv 𝒳^(j)` by Frank–Wolfe. The
//! release is the sum of the projections (the remainder's mechanism is the constant 0).
//! By zCDP composition (seed 004 Lemma 2.1) and post-processing the whole is ρ-zCDP under
//! replace-one neighbours.
//!
//! A level is *trivial* when `𝒳^(j)` has a single element: `|S_1| = 1` for level 1 (its mean
//! is that point, public), or `S_j = S_{j−1}` for `j ≥ 2` (every increment is 0). A
//! mechanism on a one-point universe is exact and 0-zCDP, so trivial levels take no budget —
//! the paper splits ρ evenly over all `k` levels (ρ/k); skipping trivial ones only gives
//! the others more. The release carries no synthetic data: a sum of projections onto
//! increment hulls is not a distribution over records.
//!
//! # Levels (issue #9 item 7)
//! The mechanism releases 0 for the remainder `q(x) − q(x_k)`, whose mean over the data is
//! a bias of up to `2^{−k}Δ`. By default `k` is [`ChainDecomposition::exact_levels`], the
//! first level whose scale is below the least distance between two different answer
//! vectors: `S_k` then holds every answer vector and the remainder is exactly 0 (for
//! marginal workloads `k ≤ 11`; derivation in docs/mechanisms/projection.md). An explicit
//! α sets the paper's `k = ⌈log₂(2/α)⌉`, capped at that depth (deeper levels are trivial);
//! the reported α defaults to the projection mechanism's guarantee
//! ([`super::coarse::projection_error_bound`]).

use super::coarse::{CoverParams, projection_error_bound};
use super::metric::MarginalMetric;
use super::points::GatheredPoints;
use super::{
    NoisyCounts, ProjectionSettings, ZcdpBudget, counts_of_histogram, fw_note, prepare,
    project_onto,
};
use crate::sensitivity::{
    CountSensitivity, chain_increment_count_sensitivity, marginal_count_sensitivity,
};
use crate::{
    CountingPlan, Diagnostics, Mechanism, MechanismError, PrivacyCertificate, Release, Result,
};
use dp_core::{Neighbouring, ProgressSink, report_progress};
use dp_geometry::{MultiscaleDecomposition, PointSet};
use dp_queries::{Dataset, MarginalPoints, MarginalWorkload, Universe};
use rand::CryptoRng;

/// One scale of the decomposition: `S_j` and `π_j`, as universe indices.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainLevel {
    /// `2^{−j}Δ`.
    pub scale: f64,
    /// `S_j`, increasing universe indices.
    pub centers: Vec<usize>,
    /// `π_j`: for every universe index, its nearest point of `S_j`.
    pub map: Vec<usize>,
}

/// The multi-scale decomposition of seed 004 Lemma 4.2 of a marginal universe.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainDecomposition {
    /// `Δ`, the common norm `‖q(x)‖₂/√m`.
    pub radius: f64,
    /// The `k` levels.
    pub levels: Vec<ChainLevel>,
}

impl ChainDecomposition {
    /// Builds `k` nested levels with the fast marginal metric (same sets as dp-geometry's
    /// [`MultiscaleDecomposition`] with [`dp_geometry::Metric::ScaledL2`]).
    pub fn new(metric: &MarginalMetric, levels: usize) -> Result<Self> {
        Self::new_reporting(metric, levels, None)
    }

    /// [`ChainDecomposition::new`], reporting the levels built of `levels` (public: fixed
    /// by the universe, the workload and α) to `progress` as stage "chaining: decomposition
    /// levels".
    pub fn new_reporting(
        metric: &MarginalMetric,
        levels: usize,
        progress: Option<&ProgressSink>,
    ) -> Result<Self> {
        if levels == 0 || levels > 64 {
            return Err(MechanismError::InvalidParameter {
                name: "levels",
                value: levels.to_string(),
                reason: "must be in 1..=64".into(),
            });
        }
        let radius = metric.point_norm();
        let mut out: Vec<ChainLevel> = Vec::with_capacity(levels);
        let mut scale = radius;
        for j in 0..levels {
            report_progress(progress, "chaining: decomposition levels", j, levels);
            scale *= 0.5;
            let centers = match out.last() {
                None => metric.maximal_separated_subset(scale)?,
                Some(prev) => metric.extend_separated_subset(scale, prev.centers.clone())?,
            };
            let map = metric.nearest_point_map_cover(&centers, scale)?;
            out.push(ChainLevel {
                scale,
                centers,
                map,
            });
        }
        report_progress(progress, "chaining: decomposition levels", levels, levels);
        Ok(ChainDecomposition {
            radius,
            levels: out,
        })
    }

    /// The chain `x_1, …, x_k` of universe element `x` (`x_k = π_k(x)`, `x_j = π_j(x_{j+1})`).
    pub fn chain(&self, x: usize) -> Vec<usize> {
        let k = self.levels.len();
        let mut links = vec![0usize; k];
        let mut cur = x;
        for j in (0..k).rev() {
            cur = self.levels[j].map[cur];
            links[j] = cur;
        }
        links
    }

    /// Whether level `j` (0-based) is non-trivial, i.e. `𝒳^(j+1)` has more than one element.
    pub fn is_nontrivial(&self, j: usize) -> bool {
        match j {
            0 => self.levels[0].centers.len() > 1,
            _ => self.levels[j].centers.len() > self.levels[j - 1].centers.len(),
        }
    }

    /// The elements of `𝒳^(j+1)` (0-based `j`), one per `z ∈ S_{j+1}`, as (plus, minus)
    /// universe indices of the vector `q(plus) − q(minus)`: `(z, None)` = `q(z)` for level 0,
    /// `(z, Some(π_j(z)))` otherwise — the zero vector when `π_j(z) = z` (`z ∈ S_j`).
    ///
    /// `minus` is `None` only on level 0: an increment level never stands for `q(z)`. (Until
    /// issue #9 item 7 the zero increments were `(z, None)` and the release read them as
    /// `q(z)`, so every level's hull held spurious answer vectors and chaining was biased.)
    pub fn increments(&self, j: usize) -> Vec<(usize, Option<usize>)> {
        let lvl = &self.levels[j];
        lvl.centers
            .iter()
            .map(|&z| match j {
                0 => (z, None),
                _ => (z, Some(self.levels[j - 1].map[z])),
            })
            .collect()
    }

    /// The distinct points of `conv 𝒳^(j+1)`'s generating set (0-based `j`) as the
    /// `(plus, minus)` lists of a [`GatheredPoints`]: the non-zero increments, and the zero
    /// vector `(None, None)` once if some increment is zero.
    pub fn level_hull(&self, j: usize) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
        let mut plus = Vec::new();
        let mut minus = Vec::new();
        let mut zero = false;
        for (z, p) in self.increments(j) {
            if p == Some(z) {
                zero = true;
            } else {
                plus.push(Some(z));
                minus.push(p);
            }
        }
        if zero {
            plus.push(None);
            minus.push(None);
        }
        (plus, minus)
    }

    /// The number of levels after which the decomposition is exact: the smallest `k ≥ 1`
    /// with `2^{−k}Δ` below the least distance between two different answer vectors
    /// ([`MarginalMetric::min_distinct_d`]), so that `S_k` holds every answer vector, `π_k`
    /// maps every element to one with its own answer vector, and the remainder
    /// `q(x) − q(x_k)` is 0. For a marginal workload that distance is
    /// `√(2·min_a #tables∋a / m)` and `Δ = √(#tables/m)`, so
    /// `k = ⌊log₂ √(#tables/(2·min_a #tables∋a))⌋ + 1` (at most 11 below 2²² tables).
    pub fn exact_levels(metric: &MarginalMetric) -> usize {
        let mut scale = metric.point_norm();
        let mut k = 0;
        loop {
            k += 1;
            scale *= 0.5;
            if metric.separates_every_answer_vector(scale) || k >= 64 {
                return k;
            }
        }
    }
}

/// The public plan of a chaining release: decomposition, and per level its budget and noise.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainingPlan {
    /// The target error α.
    pub alpha: f64,
    /// The decomposition.
    pub decomposition: ChainDecomposition,
    /// Per level: `None` if trivial, else `(ρ_j, sensitivity, σ²)`.
    pub noise: Vec<Option<(f64, CountSensitivity, f64)>>,
}

/// Parameters of the [`ChainingMechanism`], before validation (α sets
/// `k = ⌈log₂(2/α)⌉` levels).
pub type ChainingParams = CoverParams<ChainingMechanism>;

impl CoverParams<ChainingMechanism> {
    /// Validate.
    pub fn check(&self) -> Result<ChainingMechanism> {
        let (budget, alpha, settings) = self.validated()?;
        Ok(ChainingMechanism {
            budget,
            alpha,
            settings,
        })
    }
}

/// The Chaining Mechanism for average error (module docs): ρ-zCDP under replace-one
/// neighbours.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainingMechanism {
    budget: ZcdpBudget,
    alpha: Option<f64>,
    settings: ProjectionSettings,
}

impl ChainingMechanism {
    /// The ρ of the guarantee.
    pub fn rho(&self) -> f64 {
        self.budget.rho
    }

    /// The plan for a universe, workload and public n (no data involved). Errors (before
    /// any data is read) also when a level's noise is beyond the sampler's range (a tiny ρ).
    pub fn plan(
        &self,
        universe: &Universe,
        workload: &MarginalWorkload,
        n: usize,
    ) -> Result<ChainingPlan> {
        let metric = MarginalMetric::new(universe, workload)?;
        let alpha = self
            .alpha
            .unwrap_or_else(|| projection_error_bound(universe.len(), n, self.budget.rho));
        let k = self.levels(&metric)?;
        let decomposition =
            ChainDecomposition::new_reporting(&metric, k, self.settings.progress())?;
        let noise = self.level_noises(&decomposition, &metric, workload)?;
        Ok(ChainingPlan {
            alpha,
            decomposition,
            noise,
        })
    }

    /// The number of levels `k` for the metric (module docs, "Levels").
    fn levels(&self, metric: &MarginalMetric) -> Result<usize> {
        let exact = ChainDecomposition::exact_levels(metric);
        Ok(match self.alpha {
            // Default: the exact decomposition, no remainder.
            None => exact,
            // An explicit α keeps the paper's k = ⌈log₂(2/α)⌉ (never more than `exact`:
            // further levels are trivial), accepting the remainder's bias ≤ 2^{−k}Δ.
            Some(a) => MultiscaleDecomposition::levels_for_alpha(a.min(0.999_999))?.min(exact),
        })
    }

    /// The noise of one non-trivial level when `nontrivial` levels share ρ: `ρ_j = ρ/L`
    /// and the σ² of `sensitivity` at `ρ_j`, refused when σ² is beyond the sampler's range
    /// — the one calibration of the plan, the release and the public checks.
    fn level_noise(
        &self,
        nontrivial: usize,
        sensitivity: CountSensitivity,
    ) -> Result<(f64, CountSensitivity, f64)> {
        let rho_j = self.budget.rho / nontrivial.max(1) as f64;
        NoisyCounts::sampler(&sensitivity, rho_j)?;
        Ok((rho_j, sensitivity, super::sigma2_for(&sensitivity, rho_j)))
    }

    /// Per level of `decomposition`: `None` if trivial, else its noise
    /// ([`Self::level_noise`], ρ split over the non-trivial levels) at the level's own
    /// sensitivity (level 1: the data's; an increment level: from the most tables one of
    /// its increments changes).
    #[allow(clippy::type_complexity)]
    fn level_noises(
        &self,
        decomposition: &ChainDecomposition,
        metric: &MarginalMetric,
        workload: &MarginalWorkload,
    ) -> Result<Vec<Option<(f64, CountSensitivity, f64)>>> {
        let k = decomposition.levels.len();
        let nontrivial = (0..k).filter(|&j| decomposition.is_nontrivial(j)).count();
        (0..k)
            .map(|j| {
                if !decomposition.is_nontrivial(j) {
                    return Ok(None);
                }
                let s = if j == 0 {
                    marginal_count_sensitivity(workload, Neighbouring::ReplaceOne)
                } else {
                    let max_d = decomposition
                        .increments(j)
                        .iter()
                        .map(|&(z, p)| p.map_or(0, |p| metric.differing_tables(z, p)))
                        .max()
                        .unwrap_or(0);
                    chain_increment_count_sensitivity(max_d as u64)
                };
                self.level_noise(nontrivial, s).map(Some)
            })
            .collect()
    }

    /// Every check of a release from public inputs (n is not needed): the universe within
    /// its cap, and every level's noise within the sampler's range. The largest σ² a level
    /// can get — all `k` levels non-trivial and sharing ρ, at the largest sensitivity a
    /// level can have (an increment changing every table) — is checked first, without the
    /// decomposition: σ² grows with both, and the sampler takes every σ² in `(0, 2¹⁰⁰]`, so
    /// if it takes that one it takes every level's. Only when it does not is the
    /// decomposition built, as the release builds it, to check the levels' own noise.
    fn public_checks(&self, workload: &MarginalWorkload) -> Result<()> {
        let universe = super::universe_of(workload, &self.settings)?;
        let metric = MarginalMetric::new(&universe, workload)?;
        let k = self.levels(&metric)?;
        let level_one = marginal_count_sensitivity(workload, Neighbouring::ReplaceOne);
        let increment = chain_increment_count_sensitivity(workload.len() as u64);
        let largest = if increment.l2_squared >= level_one.l2_squared {
            increment
        } else {
            level_one
        };
        if self.level_noise(k, largest).is_ok() {
            return Ok(());
        }
        let decomposition = ChainDecomposition::new(&metric, k)?;
        self.level_noises(&decomposition, &metric, workload)
            .map(drop)
    }

    /// The exact per-level count vectors `c_j` (workload order), given a plan, from the
    /// exact histogram of the data over the universe (the counting plan's one table).
    fn level_counts(
        plan: &ChainingPlan,
        universe: &Universe,
        points: &MarginalPoints<'_>,
        histogram: &[u64],
    ) -> Result<Vec<Vec<i64>>> {
        let dec = &plan.decomposition;
        let k = dec.levels.len();
        let mut plus = vec![vec![0.0; universe.len()]; k];
        let mut minus = vec![vec![0.0; universe.len()]; k];
        for (x, &c) in histogram.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let c = c as f64;
            let links = dec.chain(x);
            for j in 0..k {
                plus[j][links[j]] += c;
                if j > 0 {
                    minus[j][links[j - 1]] += c;
                }
            }
        }
        (0..k)
            .map(|j| {
                let p = counts_of_histogram(points, &plus[j])?;
                let m = counts_of_histogram(points, &minus[j])?;
                Ok(p.iter().zip(&m).map(|(a, b)| a - b).collect())
            })
            .collect()
    }

    /// The plan and the noisy count vectors of every non-trivial level (`None` for trivial
    /// ones), drawn from `rng` in level order — exactly what [`Mechanism::release`] draws
    /// first (a hook for tests and diagnostics; each is itself a Gaussian-mechanism release).
    pub fn noisy_level_counts(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<(ChainingPlan, Vec<Option<NoisyCounts>>)> {
        let (universe, histogram) = self.counted(data, workload)?;
        let points = MarginalPoints::new(&universe, workload)?;
        let plan = self.plan(&universe, workload, data.n())?;
        let noisy = Self::draw_levels(&plan, &universe, &points, &histogram, data.n(), rng)?;
        Ok((plan, noisy))
    }

    /// The records path up to the counts: the data checked against the workload, the
    /// universe enumerated, and the counting plan's table — the histogram over the
    /// universe — counted on the records and checked as a source's counts are.
    fn counted(&self, data: &Dataset, workload: &MarginalWorkload) -> Result<(Universe, Vec<u64>)> {
        let universe = prepare(data, workload, &self.settings)?;
        let plan = CountingPlan::universe_histogram(workload.domain())?;
        let histogram = plan.count_records(data)?;
        plan.check_counts(&histogram, data.n())?;
        Ok((universe, histogram))
    }

    fn draw_levels(
        plan: &ChainingPlan,
        universe: &Universe,
        points: &MarginalPoints<'_>,
        histogram: &[u64],
        n: usize,
        rng: &mut dyn CryptoRng,
    ) -> Result<Vec<Option<NoisyCounts>>> {
        let counts = Self::level_counts(plan, universe, points, histogram)?;
        counts
            .into_iter()
            .zip(&plan.noise)
            .map(|(c, noise)| match noise {
                None => Ok(None),
                Some((rho_j, s, _)) => NoisyCounts::draw(c, n, *s, *rho_j, rng).map(Some),
            })
            .collect()
    }

    /// The release from the exact histogram over the universe (checked) of a dataset of the
    /// public `n` records: the one path of the releases from records and from counts.
    fn release_histogram(
        &self,
        universe: &Universe,
        histogram: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let points = MarginalPoints::new(universe, workload)?;
        let plan = self.plan(universe, workload, n)?;
        let noisy = Self::draw_levels(&plan, universe, &points, histogram, n, rng)?;
        let dec = &plan.decomposition;
        let m = workload.num_queries();
        let mut answers = vec![0.0; m];
        let mut notes = vec![format!(
            "decomposition: α = {:.4}, k = {} levels, Δ = {:.4}, |S_j| = {:?} of {}; \
             {} non-trivial level(s) share ρ",
            plan.alpha,
            dec.levels.len(),
            dec.radius,
            dec.levels
                .iter()
                .map(|l| l.centers.len())
                .collect::<Vec<_>>(),
            universe.len(),
            plan.noise.iter().flatten().count()
        )];
        let (mut iterations, mut oracle_calls, mut gap) = (0usize, 0usize, 0.0f64);
        let mut description = None;
        for (j, level_noise) in noisy.iter().enumerate() {
            match level_noise {
                None => {
                    if j == 0 {
                        // |S_1| = 1: the level's mean is that point, exactly and for free.
                        points.add_scaled(dec.levels[0].centers[0], 1.0, &mut answers);
                    }
                }
                Some(nc) => {
                    let y = nc.answers();
                    // each level's solve is its own stage ("chaining level 2 of 5: …")
                    let solver = self.settings.solver_with_prefix(&format!(
                        "chaining level {} of {}: ",
                        j + 1,
                        dec.levels.len()
                    ));
                    let fw = if j == 0 && dec.levels[0].centers.len() == universe.len() {
                        project_onto(&points, &y, &solver)?
                    } else {
                        let (plus, minus) = dec.level_hull(j);
                        let hull = GatheredPoints::new(&points, plus, minus)?;
                        project_onto(hull, &y, &solver)?
                    };
                    for (a, v) in answers.iter_mut().zip(&fw.point) {
                        *a += v;
                    }
                    iterations += fw.iterations;
                    oracle_calls += fw.oracle_calls;
                    gap += fw.gap;
                    notes.push(format!(
                        "level {}: ρ_j = {:.4e}, Δ₂² = {}, σ² = {:.4e}; {}",
                        j + 1,
                        plan.noise[j].map_or(0.0, |n| n.0),
                        nc.sensitivity.l2_squared,
                        nc.sigma2,
                        fw_note("projection onto conv 𝒳^(j)", &fw)
                    ));
                    description = match description {
                        None => Some(Some(nc.description())),
                        Some(_) => Some(None),
                    };
                }
            }
        }
        Ok(Release {
            answers,
            synthetic: None,
            certificate: self.certificate(),
            diagnostics: Diagnostics {
                iterations: Some(iterations),
                oracle_calls: Some(oracle_calls),
                // Sum over levels: the levels' errors add (Lemma 3.3), and so do their
                // solver slacks.
                frank_wolfe_gap: Some(gap),
                // One noise description only when a single level is noisy.
                noise: description.flatten(),
                notes,
                estimated_total: None,
            },
        })
    }
}

impl Mechanism for ChainingMechanism {
    fn name(&self) -> &'static str {
        "chaining"
    }

    fn works_over_a_universe(&self) -> bool {
        true
    }

    /// No: level `j` counts the records' `j`-th increments `q(x_j) − q(x_{j−1})` along
    /// each record's chain of cover points, sums that depend on the data's histogram over
    /// the universe, which the workload's counts do not determine. That histogram is its
    /// counting plan ([`Mechanism::counting_plan`]).
    fn counts_suffice(&self) -> bool {
        false
    }

    /// The histogram over the explicit universe: one table over every attribute of the
    /// workload's domain ([`CountingPlan::universe_histogram`]), and n. Refused above the
    /// universe's cap, as the release refuses.
    fn counting_plan(&self, workload: &MarginalWorkload) -> Result<Option<CountingPlan>> {
        super::universe_plan(workload, &self.settings)
    }

    /// The release from the universe histogram's exact counts: the chains, the level
    /// counts, the noise and the projections read nothing else, so this is
    /// [`Mechanism::release`] on any dataset with that histogram, draw for draw.
    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let (universe, histogram) =
            super::planned_universe_histogram(workload, &self.settings, counts, n)?;
        self.release_histogram(&universe, &histogram, n, workload, rng)
    }

    fn certificate(&self) -> PrivacyCertificate {
        self.budget.certificate(self.name())
    }

    /// The universe size limit (the cover is built over the explicit universe) and every
    /// level's noise within the sampler's range (n is not needed).
    fn check_inputs(&self, workload: &MarginalWorkload, _public_n: Option<usize>) -> Result<()> {
        self.public_checks(workload)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let (universe, histogram) = self.counted(data, workload)?;
        self.release_histogram(&universe, &histogram, data.n(), workload, rng)
    }
}
