//! The Coarse Projection Mechanism (seed 004 §4.1, Thm 1.2).
//!
//! 1. Take an inclusion-maximal `α/2`-separated subset `𝒳^(1)` of the universe's answer
//!    vectors in `d(x, y) = ‖x − y‖₂/√m` (greedy, [`MarginalMetric`]); by Lemma 2.7 it is an
//!    `α/2`-cover. Round every record to its nearest cover point (`π`).
//! 2. Add discrete Gaussian noise to the counts of the *rounded* data (σ² = 2·#tables/(2ρ):
//!    rounding maps replace-one neighbours to replace-one neighbours or to equal datasets,
//!    and the rounded records are records, so the sensitivity is the data's).
//! 3. Project onto `conv 𝒳^(1)` by Frank–Wolfe; release the projection and its weights as
//!    synthetic records (cover points).
//!
//! ρ-zCDP under replace-one neighbours. Error: `err² ≤ (g(𝒳^(1))/(n√(2ρm)))^{1/2} + α/2`
//! (Lemma 3.3 with the trivial mechanism on `(α/2)√m B₂`).
//!
//! # Choosing α
//! α is the target error. If not given, it is the projection mechanism's own guarantee
//! `(ln|𝒳|)^{1/4}/((2ρ)^{1/4}√n)` (Lemma 2.2 with Δ = 1; data-independent, n is public), capped
//! at 1: coarsening at a scale below the error the projection already has cannot hurt the
//! bound by more than a constant. When `α/2` is below the smallest distance between two
//! records' answer vectors, the cover is the whole universe and the mechanism *is* the
//! projection mechanism (the common case for marginals at moderate n·ε; see
//! `docs/mechanisms/projection.md`).

use super::metric::MarginalMetric;
use super::points::GatheredPoints;
use super::{
    NoisyCounts, ProjectionSettings, ZcdpBudget, counts_of_histogram, fw_note, prepare,
    project_onto, projection_release, synthetic_from_atoms,
};
use crate::sensitivity::marginal_count_sensitivity;
use crate::{CountingPlan, Mechanism, MechanismError, PrivacyCertificate, Release, Result};
use dp_core::{Neighbouring, PrivacyLoss};
use dp_queries::{Dataset, MarginalPoints, MarginalWorkload, Universe};
use rand::CryptoRng;

/// The projection mechanism's error guarantee `(ln|𝒳|)^{1/4}/((2ρ)^{1/4}√n)` (seed 004
/// Lemma 2.2 with Δ = 1, natural log), the default target α of the coarse and chaining
/// mechanisms, capped at 1.
pub fn projection_error_bound(universe_size: usize, n: usize, rho: f64) -> f64 {
    let log = (universe_size.max(2) as f64).ln();
    (log.powf(0.25) / ((2.0 * rho).powf(0.25) * (n.max(1) as f64).sqrt())).min(1.0)
}

/// A cover of the universe and the rounding map to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Cover {
    /// The target error α; the cover is `α/2`-separated and an `α/2`-cover.
    pub alpha: f64,
    /// Universe indices of the cover points, increasing.
    pub centers: Vec<usize>,
    /// For every universe index, the universe index of its nearest cover point.
    pub map: Vec<usize>,
}

/// Parameters of the cover-based mechanisms of seed 004 §4 ([`CoarseProjectionParams`],
/// [`super::ChainingParams`]), before validation: the budget, the neighbouring relation
/// (only replace-one passes `check`), the target error α (`None`: [`projection_error_bound`])
/// and the solver and universe settings. `M` is the mechanism `check` builds.
#[derive(Clone, Debug, PartialEq)]
pub struct CoverParams<M> {
    /// The budget (ρ, or (ε, δ) converted to the largest ρ within it).
    pub budget: PrivacyLoss,
    /// Neighbouring relation; only replace-one is accepted.
    pub neighbouring: Neighbouring,
    /// Target error α ∈ (0, 1]; `None`: [`projection_error_bound`].
    pub alpha: Option<f64>,
    /// Solver and universe settings.
    pub settings: ProjectionSettings,
    mechanism: std::marker::PhantomData<fn() -> M>,
}

impl<M> CoverParams<M> {
    /// Replace-one neighbours, automatic α, default settings.
    pub fn new(budget: PrivacyLoss) -> Self {
        CoverParams {
            budget,
            neighbouring: Neighbouring::ReplaceOne,
            alpha: None,
            settings: ProjectionSettings::default(),
            mechanism: std::marker::PhantomData,
        }
    }

    /// Set the neighbouring relation (only replace-one passes `check`).
    pub fn neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// Set the target error α.
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = Some(alpha);
        self
    }

    /// Set the solver and universe settings.
    pub fn settings(mut self, settings: ProjectionSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The validated parts every cover-based mechanism is built from.
    pub(crate) fn validated(&self) -> Result<(ZcdpBudget, Option<f64>, ProjectionSettings)> {
        self.settings.check()?;
        check_alpha(self.alpha)?;
        Ok((
            ZcdpBudget::new(self.budget, self.neighbouring)?,
            self.alpha,
            self.settings.clone(),
        ))
    }
}

/// Parameters of the [`CoarseProjectionMechanism`], before validation.
pub type CoarseProjectionParams = CoverParams<CoarseProjectionMechanism>;

impl CoverParams<CoarseProjectionMechanism> {
    /// Validate.
    pub fn check(&self) -> Result<CoarseProjectionMechanism> {
        let (budget, alpha, settings) = self.validated()?;
        Ok(CoarseProjectionMechanism {
            budget,
            alpha,
            settings,
        })
    }
}

pub(crate) fn check_alpha(alpha: Option<f64>) -> Result<()> {
    match alpha {
        Some(a) if !(a > 0.0 && a <= 1.0) => Err(MechanismError::InvalidParameter {
            name: "alpha",
            value: a.to_string(),
            reason: "the target error must be in (0, 1]".into(),
        }),
        _ => Ok(()),
    }
}

/// The Coarse Projection Mechanism (module docs): ρ-zCDP under replace-one neighbours.
#[derive(Clone, Debug, PartialEq)]
pub struct CoarseProjectionMechanism {
    budget: ZcdpBudget,
    alpha: Option<f64>,
    settings: ProjectionSettings,
}

impl CoarseProjectionMechanism {
    /// The ρ of the guarantee.
    pub fn rho(&self) -> f64 {
        self.budget.rho
    }

    /// The α used for a universe of `universe_size` records and `n` records of data.
    pub fn alpha_for(&self, universe_size: usize, n: usize) -> f64 {
        self.alpha
            .unwrap_or_else(|| projection_error_bound(universe_size, n, self.budget.rho))
    }

    /// The cover the mechanism uses (depends only on public information: the universe, the
    /// workload and n).
    pub fn cover(
        &self,
        universe: &Universe,
        workload: &MarginalWorkload,
        n: usize,
    ) -> Result<Cover> {
        let metric = MarginalMetric::new(universe, workload)?;
        let alpha = self.alpha_for(universe.len(), n);
        let centers = metric.maximal_separated_subset(alpha / 2.0)?;
        let map = metric.nearest_point_map_cover(&centers, alpha / 2.0)?;
        Ok(Cover {
            alpha,
            centers,
            map,
        })
    }
}

impl CoarseProjectionMechanism {
    /// Steps 1–2 alone: the cover and the noisy counts of the rounded data (a ρ-zCDP
    /// release). [`Mechanism::release`] draws exactly this from `rng` first (a hook for
    /// tests and diagnostics).
    pub fn noisy_counts(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<(Cover, NoisyCounts)> {
        let (universe, histogram) = self.counted(data, workload)?;
        let points = MarginalPoints::new(&universe, workload)?;
        self.noisy_counts_in(&universe, &points, &histogram, data.n(), workload, rng)
    }

    /// The records path up to the counts: the data checked against the workload, the
    /// universe enumerated, and the plan's table — the histogram over the universe —
    /// counted on the records and checked as a source's counts are.
    fn counted(&self, data: &Dataset, workload: &MarginalWorkload) -> Result<(Universe, Vec<u64>)> {
        let universe = prepare(data, workload, &self.settings)?;
        let plan = CountingPlan::universe_histogram(workload.domain())?;
        let histogram = plan.count_records(data)?;
        plan.check_counts(&histogram, data.n())?;
        Ok((universe, histogram))
    }

    fn noisy_counts_in(
        &self,
        universe: &Universe,
        points: &MarginalPoints<'_>,
        histogram: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<(Cover, NoisyCounts)> {
        let cover = self.cover(universe, workload, n)?;
        // Round every record to its cover point.
        let mut rounded = vec![0.0; universe.len()];
        for (x, &c) in histogram.iter().enumerate() {
            rounded[cover.map[x]] += c as f64;
        }
        let counts = counts_of_histogram(points, &rounded)?;
        let noisy = NoisyCounts::draw(
            counts,
            n,
            marginal_count_sensitivity(workload, Neighbouring::ReplaceOne),
            self.budget.rho,
            rng,
        )?;
        Ok((cover, noisy))
    }

    /// Steps 1–3 from the exact histogram over the universe (the plan's one table, checked)
    /// of a dataset of the public `n` records: the one path of the releases from records and
    /// from counts.
    fn release_histogram(
        &self,
        universe: &Universe,
        histogram: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let points = MarginalPoints::new(universe, workload)?;
        let (cover, noisy) =
            self.noisy_counts_in(universe, &points, histogram, n, workload, rng)?;
        let y = noisy.answers();
        let fw = if cover.centers.len() == universe.len() {
            project_onto(&points, &y, &self.settings.frank_wolfe)?
        } else {
            let hull = GatheredPoints::subset(&points, &cover.centers)?;
            project_onto(hull, &y, &self.settings.frank_wolfe)?
        };
        let synthetic = synthetic_from_atoms(universe, &fw.atoms, |a| cover.centers[a])?;
        let notes = vec![
            format!(
                "cover: α = {:.4}, {} of {} records are an α/2-separated α/2-cover",
                cover.alpha,
                cover.centers.len(),
                universe.len(),
            ),
            fw_note("projection onto conv 𝒳^(1)", &fw),
        ];
        Ok(projection_release(
            fw,
            synthetic,
            self.certificate(),
            &noisy,
            notes,
        ))
    }
}

impl Mechanism for CoarseProjectionMechanism {
    fn name(&self) -> &'static str {
        "coarse-projection"
    }

    fn produces_synthetic(&self) -> bool {
        true
    }

    fn works_over_a_universe(&self) -> bool {
        true
    }

    /// No: it counts the data *rounded to the cover* (each record moved to its nearest
    /// cover point), a function of the data's histogram over the universe that the
    /// workload's counts do not determine. That histogram is its counting plan
    /// ([`Mechanism::counting_plan`]).
    fn counts_suffice(&self) -> bool {
        false
    }

    /// The histogram over the explicit universe: one table over every attribute of the
    /// workload's domain ([`CountingPlan::universe_histogram`]), and n. Refused above the
    /// universe's cap, as the release refuses.
    fn counting_plan(&self, workload: &MarginalWorkload) -> Result<Option<CountingPlan>> {
        super::universe_plan(workload, &self.settings)
    }

    /// The release from the universe histogram's exact counts: the rounding to the cover,
    /// the noise and the projection read nothing else, so this is [`Mechanism::release`] on
    /// any dataset with that histogram, draw for draw.
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

    /// The universe size limit (the cover is built over the explicit universe) and the
    /// noise's σ² within the sampler's range.
    fn check_inputs(&self, workload: &MarginalWorkload, _public_n: Option<usize>) -> Result<()> {
        super::universe_of(workload, &self.settings)?;
        NoisyCounts::sampler(
            &marginal_count_sensitivity(workload, Neighbouring::ReplaceOne),
            self.budget.rho,
        )
        .map(drop)
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
