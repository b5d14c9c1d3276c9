//! The projection family of seed 004 (Błasiok, Bun, Nikolov, Steinke): Gaussian noise on
//! the mean point, then a Euclidean projection onto a convex hull of answer vectors.
//!
//! | mechanism | what it projects | source |
//! |---|---|---|
//! | [`ProjectionMechanism`] (`projection`) | the noisy answers onto `conv 𝒳`, the hull of every record's answer vector | NTZ16; seed 004 Lemma 2.2, seed 000 §3 |
//! | [`CoarseProjectionMechanism`] (`coarse-projection`) | the noisy answers of the data *rounded to a maximal α/2-separated cover* `𝒳^(1)` onto `conv 𝒳^(1)` | seed 004 §4.1, Thm 1.2 |
//! | [`ChainingMechanism`] (`chaining`) | each level of the multi-scale decomposition onto the hull of that level's increments, with ρ split over the levels | seed 004 §4.2, Lemma 3.3, 4.2, Thm 1.3 |
//!
//! [`lower_bounds`] computes greedy packing numbers `P(𝒳, t)` and the instance lower bound
//! of seed 004 Thm 1.4; [`metric`] the distances between records' answer vectors that all
//! covers use.
//!
//! # Guarantee and neighbouring
//! All three are **ρ-zCDP under replace-one neighbours** (n public; the mean-point view of
//! seed 004 §1.2 needs it). Given `(ε, δ)`, ρ is the largest whose tight conversion stays
//! within `(ε, δ)` (as for the Gaussian baseline). Add/remove neighbours are refused.
//!
//! # Noise
//! The noise is added to *integer count vectors* (the data's counts; for the chaining levels,
//! the sums of the records' integer increments) with the exact discrete Gaussian sampler of
//! `dp-core` (CKS20), σ² = Δ₂²/(2ρ) rounded up, Δ₂ from [`crate::sensitivity`]; then divided by
//! the public n. The multivariate discrete Gaussian with integer ℓ2 sensitivity Δ₂ is
//! Δ₂²/(2σ²)-zCDP (CKS20 Thm 14), so no floating-point value is on the sampling path. The
//! projection is post-processing.
//!
//! # Projection
//! The projection `argmin_{v ∈ conv S} ‖v − y‖₂` is computed by a Frank–Wolfe-type solver
//! (dp-geometry; by default Wolfe's fully corrective minimum-norm-point algorithm,
//! [`FrankWolfeVariant::MinNormPoint`]) on the implicit point set of the universe's answer
//! vectors, one `inner_all` over the universe per oracle call. Its convex weights are the weights of the
//! synthetic records released by `projection` and `coarse-projection`. The release reports
//! the Frank–Wolfe duality gap `g`: the released `v` satisfies, for every `u ∈ conv S`,
//! `‖v − u‖² ≤ ‖y − u‖² − ‖v − y‖² + g` (see [`project_onto`]).
//!
//! Universes are enumerated explicitly; more than [`ProjectionSettings::max_universe`]
//! elements is an error ([`dp_queries::QueryError::TooLarge`]) raised before any noise is
//! drawn.

pub mod chaining;
pub mod coarse;
pub mod lower_bounds;
pub mod metric;
pub mod points;

pub use chaining::{ChainingMechanism, ChainingParams};
pub use coarse::{CoarseProjectionMechanism, CoarseProjectionParams, CoverParams};

use crate::sensitivity::{CountSensitivity, marginal_count_sensitivity};
use crate::{
    Diagnostics, GaussianParams, Mechanism, MechanismError, NoiseDescription, NoiseDistribution,
    PrivacyCertificate, Release, Result, SyntheticData,
};
use dp_core::{DiscreteGaussian, Neighbouring, PrivacyLoss};
use dp_geometry::{
    ConvexHull, FrankWolfeResult, FrankWolfeSettings, FrankWolfeVariant, Parallelism, PointSet,
    SolveStatus, frank_wolfe_project_hull,
};
use dp_queries::{Dataset, MarginalPoints, MarginalWorkload, Universe};
use rand::CryptoRng;
use std::time::Instant;

/// Default cap on the explicit universe: 2²² = 4 194 304 records.
pub const DEFAULT_MAX_UNIVERSE: usize = 1 << 22;

/// Settings shared by the projection family: the Frank–Wolfe solver and the universe cap.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionSettings {
    /// Frank–Wolfe settings. Default: Wolfe's minimum-norm-point algorithm
    /// ([`FrankWolfeVariant::MinNormPoint`], fully corrective), relative gap tolerance 1e-6,
    /// at most 5 000 major cycles (hitting the cap is reported, with the gap, not an error),
    /// rayon-parallel oracle calls. A major cycle adds one atom and may drop some, so the
    /// count is about the number of atoms of the answer plus the number dropped on the way:
    /// ~1 000 for nltcs all-3way at ε = 1, whose answer vectors span an affine space of
    /// dimension 696 (see docs/mechanisms/projection.md).
    pub frank_wolfe: FrankWolfeSettings,
    /// Largest universe to enumerate (default [`DEFAULT_MAX_UNIVERSE`]).
    pub max_universe: usize,
}

impl Default for ProjectionSettings {
    fn default() -> Self {
        ProjectionSettings {
            frank_wolfe: FrankWolfeSettings {
                max_iterations: 5_000,
                relative_gap_tolerance: 1e-6,
                variant: FrankWolfeVariant::MinNormPoint,
                weights: None,
                parallelism: Parallelism::Rayon,
            },
            max_universe: DEFAULT_MAX_UNIVERSE,
        }
    }
}

impl ProjectionSettings {
    /// Validates the solver settings (no norm weights: the family projects in the
    /// unweighted ℓ2 norm) and a positive universe cap.
    pub fn check(&self) -> Result<()> {
        self.frank_wolfe.check()?;
        if self.frank_wolfe.weights.is_some() {
            return Err(MechanismError::InvalidParameter {
                name: "frank_wolfe.weights",
                value: "Some(..)".into(),
                reason: "the projection family projects in the unweighted ℓ2 norm of its \
                         guarantee (seed 004 Lemma 2.2)"
                    .into(),
            });
        }
        if self.max_universe == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "max_universe",
                value: "0".into(),
                reason: "must be positive".into(),
            });
        }
        Ok(())
    }
}

/// The zCDP budget of a mechanism of this family: ρ and the δ asked for (if any).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ZcdpBudget {
    pub rho: f64,
    pub delta: Option<f64>,
}

impl ZcdpBudget {
    /// Same validation and (ε, δ) → ρ conversion as the Gaussian baseline.
    pub(crate) fn new(budget: PrivacyLoss, neighbouring: Neighbouring) -> Result<Self> {
        if neighbouring != Neighbouring::ReplaceOne {
            return Err(MechanismError::InvalidParameter {
                name: "neighbouring",
                value: neighbouring.to_string(),
                reason: "the projection family releases the mean point with the public n \
                         (replace-one neighbours, seed 004 §1.2); add/remove is not supported"
                    .into(),
            });
        }
        let rho = GaussianParams::new(budget).check()?.rho();
        let delta = match budget {
            PrivacyLoss::Approx { delta, .. } => Some(delta),
            _ => None,
        };
        Ok(ZcdpBudget { rho, delta })
    }

    pub(crate) fn certificate(&self, name: &str) -> PrivacyCertificate {
        let loss = PrivacyLoss::Zcdp { rho: self.rho };
        PrivacyCertificate {
            mechanism: name.to_string(),
            loss,
            neighbouring: Neighbouring::ReplaceOne,
            approx_equivalent: self.delta.and_then(|d| loss.to_approx(d).ok()),
        }
    }
}

/// σ² of discrete Gaussian count noise for ρ-zCDP at ℓ2 sensitivity `sensitivity`:
/// Δ₂²/(2ρ), rounded up.
pub fn sigma2_for(sensitivity: &CountSensitivity, rho: f64) -> f64 {
    crate::calibration::gaussian_sigma2(sensitivity.l2_squared as f64, rho)
}

/// Checks the data against the workload and enumerates the universe (capped): everything
/// that can fail before noise is drawn.
pub(crate) fn prepare(
    data: &Dataset,
    workload: &MarginalWorkload,
    settings: &ProjectionSettings,
) -> Result<Universe> {
    crate::perturbation::check_data(data, workload)?;
    Ok(Universe::new(data.domain(), settings.max_universe)?)
}

/// Counts of the universe histogram `h` (integer entries) under the workload, as `i64`.
pub(crate) fn counts_of_histogram(points: &MarginalPoints<'_>, h: &[f64]) -> Result<Vec<i64>> {
    points
        .answers_of_weights(h, Parallelism::Rayon)?
        .into_iter()
        .map(|c| {
            let r = c.round();
            if (r - c).abs() > 1e-6 || r.abs() > 9.0e15 {
                Err(MechanismError::Numerical {
                    what: format!("count {c} is not an exact integer"),
                })
            } else {
                Ok(r as i64)
            }
        })
        .collect()
}

/// Integer histogram (record counts) of the data over the universe.
pub(crate) fn count_histogram(universe: &Universe, data: &Dataset) -> Result<Vec<f64>> {
    let n = data.n() as f64;
    Ok(universe
        .histogram(data)?
        .into_iter()
        .map(|f| (f * n).round())
        .collect())
}

/// A noisy count vector released by the Gaussian step of the family (before projection).
#[derive(Clone, Debug, PartialEq)]
pub struct NoisyCounts {
    /// Counts plus discrete Gaussian noise, in workload order.
    pub counts: Vec<i64>,
    /// The public n the answers are normalised by.
    pub n: usize,
    /// σ² of the noise.
    pub sigma2: f64,
    /// The sensitivity the noise was calibrated to.
    pub sensitivity: CountSensitivity,
}

impl NoisyCounts {
    /// Draws `N_Z(0, σ²)` noise for every entry of `counts` (exact sampler).
    pub(crate) fn draw(
        mut counts: Vec<i64>,
        n: usize,
        sensitivity: CountSensitivity,
        rho: f64,
        rng: &mut dyn CryptoRng,
    ) -> Result<Self> {
        let sigma2 = sigma2_for(&sensitivity, rho);
        DiscreteGaussian::new(sigma2)?.add_noise(&mut counts, rng)?;
        Ok(NoisyCounts {
            counts,
            n,
            sigma2,
            sensitivity,
        })
    }

    /// The noisy normalised answers `counts / n`.
    pub fn answers(&self) -> Vec<f64> {
        let n = self.n as f64;
        self.counts.iter().map(|&c| c as f64 / n).collect()
    }

    /// The description recorded in diagnostics.
    pub fn description(&self) -> NoiseDescription {
        NoiseDescription::new(
            NoiseDistribution::DiscreteGaussian,
            self.sigma2,
            self.sensitivity.l2(),
            self.n,
        )
    }
}

/// Frank–Wolfe projection of `y` onto `conv(points)` in the unweighted ℓ2 norm.
///
/// With `g` the returned duality gap and `v` the returned point, every `u ∈ conv(points)`
/// satisfies `‖v − u‖² ≤ ‖y − u‖² − ‖v − y‖² + g`: the gap is `max_{s} 2⟨y − v, s − v⟩ ≥
/// 2⟨y − v, u − v⟩`, and expanding `‖u − y‖² = ‖u − v‖² + ‖v − y‖² + 2⟨u − v, v − y⟩` gives
/// the claim. In particular, since the true answers lie in the hull, the projected answers
/// are never farther from them than the noisy ones, up to `√g`.
pub fn project_onto<P: PointSet>(
    points: P,
    y: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    let hull = ConvexHull::new(points)?;
    Ok(frank_wolfe_project_hull(&hull, y, settings)?)
}

/// Diagnostics of one Frank–Wolfe solve, appended to a release's notes.
pub(crate) fn fw_note(label: &str, fw: &FrankWolfeResult, seconds: f64) -> String {
    let status = match fw.status {
        SolveStatus::Converged => "converged",
        SolveStatus::MaxIterations => "iteration cap hit",
        SolveStatus::Stalled => "stalled",
    };
    format!(
        "{label}: Frank–Wolfe {status} after {} iterations, gap {:.3e}, objective {:.3e}, \
         {} atoms, {} oracle calls in {:.3} s ({:.0} calls/s)",
        fw.iterations,
        fw.gap,
        fw.objective,
        fw.atoms.len(),
        fw.oracle_calls,
        seconds,
        fw.oracle_calls as f64 / seconds.max(1e-9)
    )
}

/// Weighted synthetic records from Frank–Wolfe atoms over the universe indices `index_of`.
pub(crate) fn synthetic_from_atoms(
    universe: &Universe,
    atoms: &[(usize, f64)],
    index_of: impl Fn(usize) -> usize,
) -> Result<SyntheticData> {
    let indices: Vec<usize> = atoms.iter().map(|&(a, _)| index_of(a)).collect();
    let total: f64 = atoms.iter().map(|&(_, w)| w).sum();
    Ok(SyntheticData {
        records: universe.to_dataset(&indices)?,
        weights: atoms.iter().map(|&(_, w)| w / total).collect(),
    })
}

/// Parameters of the [`ProjectionMechanism`], before validation.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionParams {
    /// The budget: `Zcdp { rho }` or `Approx { epsilon, delta }` (converted to the largest ρ
    /// within it). Pure ε is refused.
    pub budget: PrivacyLoss,
    /// Neighbouring relation; only replace-one is accepted.
    pub neighbouring: Neighbouring,
    /// Solver and universe settings.
    pub settings: ProjectionSettings,
}

impl ProjectionParams {
    /// Parameters with replace-one neighbours and default settings.
    pub fn new(budget: PrivacyLoss) -> Self {
        ProjectionParams {
            budget,
            neighbouring: Neighbouring::ReplaceOne,
            settings: ProjectionSettings::default(),
        }
    }

    /// Set the neighbouring relation (only replace-one passes [`Self::check`]).
    pub fn neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// Set the solver and universe settings.
    pub fn settings(mut self, settings: ProjectionSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Validate the parameters and derive ρ.
    pub fn check(&self) -> Result<ProjectionMechanism> {
        self.settings.check()?;
        Ok(ProjectionMechanism {
            budget: ZcdpBudget::new(self.budget, self.neighbouring)?,
            settings: self.settings.clone(),
        })
    }
}

/// The projection mechanism (Nikolov–Talwar–Zhang; seed 004 Lemma 2.2, seed 000 §3):
/// ρ-zCDP under replace-one neighbours.
///
/// 1. Count every cell exactly and add discrete Gaussian noise with σ² = 2·#tables/(2ρ)
///    (Δ₂² = 2·#tables, [`crate::sensitivity::marginal_count_sensitivity`]); divide by n.
/// 2. Project the noisy answers onto `conv{q(x) : x ∈ 𝒳}` by Frank–Wolfe.
/// 3. Release the projection and its convex weights as weighted synthetic records.
///
/// Error (Lemma 2.2): `err² ≤ (g(𝒳)/(n√(2ρm)))^{1/2} ≤ (log|𝒳|)^{1/4}/((2ρ)^{1/4}√n)` for
/// `𝒳 ⊂ √m B₂` (plus the solver's `√(g/m)`).
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionMechanism {
    budget: ZcdpBudget,
    settings: ProjectionSettings,
}

impl ProjectionMechanism {
    /// The ρ of the guarantee.
    pub fn rho(&self) -> f64 {
        self.budget.rho
    }

    /// The settings.
    pub fn settings(&self) -> &ProjectionSettings {
        &self.settings
    }

    /// σ² of the count noise on `workload`: Δ₂²/(2ρ) with Δ₂² = 2·#tables, rounded up.
    pub fn sigma2(&self, workload: &MarginalWorkload) -> f64 {
        sigma2_for(
            &marginal_count_sensitivity(workload, Neighbouring::ReplaceOne),
            self.budget.rho,
        )
    }

    /// Step 1 alone: the noisy counts (itself a ρ-zCDP release, the Gaussian mechanism).
    /// [`Mechanism::release`] draws exactly this from `rng` first, so with equal seeds the
    /// release is the projection of these answers (a hook for tests and diagnostics).
    pub fn noisy_counts(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<NoisyCounts> {
        let universe = prepare(data, workload, &self.settings)?;
        self.noisy_counts_in(&universe, data, workload, rng)
    }

    /// Step 2 alone: the Frank–Wolfe projection of answers `y` (workload order) onto
    /// `conv{q(x) : x ∈ 𝒳}` for the universe of the workload's domain; atoms are universe
    /// indices. Post-processing, no privacy cost.
    pub fn project_answers(
        &self,
        workload: &MarginalWorkload,
        y: &[f64],
    ) -> Result<FrankWolfeResult> {
        let universe = Universe::new(workload.domain(), self.settings.max_universe)?;
        let points = MarginalPoints::new(&universe, workload)?;
        project_onto(&points, y, &self.settings.frank_wolfe)
    }

    fn noisy_counts_in(
        &self,
        _universe: &Universe,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<NoisyCounts> {
        let counts = workload
            .count_all(data)?
            .into_iter()
            .map(|c| {
                i64::try_from(c).map_err(|_| MechanismError::Numerical {
                    what: format!("count {c} does not fit in i64"),
                })
            })
            .collect::<Result<Vec<i64>>>()?;
        NoisyCounts::draw(
            counts,
            data.n(),
            marginal_count_sensitivity(workload, Neighbouring::ReplaceOne),
            self.budget.rho,
            rng,
        )
    }
}

impl Mechanism for ProjectionMechanism {
    fn name(&self) -> &'static str {
        "projection"
    }

    fn produces_synthetic(&self) -> bool {
        true
    }

    fn certificate(&self) -> PrivacyCertificate {
        self.budget.certificate(self.name())
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let start = Instant::now();
        let universe = prepare(data, workload, &self.settings)?;
        let points = MarginalPoints::new(&universe, workload)?;
        let noisy = self.noisy_counts_in(&universe, data, workload, rng)?;
        let y = noisy.answers();
        let t = Instant::now();
        let fw = project_onto(&points, &y, &self.settings.frank_wolfe)?;
        let fw_seconds = t.elapsed().as_secs_f64();
        let synthetic = synthetic_from_atoms(&universe, &fw.atoms, |a| a)?;
        let notes = vec![
            format!("universe: {} records", universe.len()),
            fw_note("projection onto conv 𝒳", &fw, fw_seconds),
        ];
        Ok(Release {
            answers: fw.point,
            synthetic: Some(synthetic),
            certificate: self.certificate(),
            diagnostics: Diagnostics {
                wall_seconds: start.elapsed().as_secs_f64(),
                iterations: Some(fw.iterations),
                oracle_calls: Some(fw.oracle_calls),
                frank_wolfe_gap: Some(fw.gap),
                noise: Some(noisy.description()),
                notes,
            },
        })
    }
}
