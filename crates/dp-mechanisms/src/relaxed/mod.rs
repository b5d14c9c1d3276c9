//! The relaxed projection mechanism for marginals over binary attributes (seed 000: Dwork,
//! Nikolov and Talwar 2014, "Efficient algorithms for privately releasing marginals via
//! convex relaxations", Theorems 3.4 and 4.5).
//!
//! # Algorithm
//! For a workload of marginal tables over binary attributes:
//!
//! 1. **Transform** (public): the tables need the parities `T ⊆ S`, `T ≠ ∅`, of every table
//!    `S` ([`dp_queries::MarginalParityTransform`]); `N` distinct parities of degree
//!    `≤ k = max |S|`, over the attributes the workload touches only.
//! 2. **Measure** (the only access to the data): the odd count `o_T = #{x : x_T = −1}` of
//!    each distinct parity, **once**, plus exact discrete Gaussian noise `N_ℤ(0, σ²)` with
//!    `σ² = Δ₂²/(2ρ)`, `Δ₂² = N` ([`crate::sensitivity::parity_odd_count_sensitivity`]).
//!    This is ρ-zCDP under replace-one neighbours (Canonne, Kamath and Steinke 2020,
//!    Theorem 14); the noisy parities `p̂_T = 1 − 2·ô_T/n` use the public `n`. Each odd count
//!    is read off the exact counts of a workload table that contains its parity
//!    ([`MarginalParityTransform::odd_counts_from_counts`]), so the workload's counts and
//!    `n` are all the mechanism reads: [`RelaxedProjection::release_counted`] releases from
//!    counts streamed or counted by an engine, the same release, draw for draw.
//! 3. **Project** (post-processing): Frank–Wolfe ([`dp_geometry::frank_wolfe_project`])
//!    minimises `Σ_j ω_j (v_j − y_j)²` over `v ∈ A·L`, the Grothendieck relaxation of
//!    seed 000 §4 seen in parity coordinates ([`ParityBody`]), with `y = (1, p̂)` (the
//!    empty parity is the constant 1) and `ω_T = Σ_{S ⊇ T} 2^{−|S|}`, so that the objective
//!    is exactly the workload's total squared cell error of `v` read back through the
//!    transform (Parseval; [`dp_queries::parity`] docs). Each parity is replicated over the
//!    entries `(σ, τ)` of the relaxation that hold it by post-processing of the one
//!    measurement: see the sensitivity docs for why this beats noising every entry.
//! 4. **Read back**: the marginals are the transform of the projected parities, the empty
//!    parity taken as exactly 1.
//!
//! # Iterations
//! The objective is 2-smooth in the `ω`-norm and `A·L ⊆ [−1, 1]^{1+N}` has squared
//! `ω`-diameter `D² ≤ 4 Σ_j ω_j`. With exact line search, Frank–Wolfe's primal error after
//! `t` steps is at most `2C/(t + 2)`, `C = 2D²` (Clarkson 2010, Theorem 2.3; Jaggi 2013,
//! Theorem 1), so `t = ⌈4D²/Δ⌉ − 2` steps reach accuracy `Δ`. The target `Δ` is
//! [`RelaxedSettings::accuracy`] times the expected noise energy `Σ_{j≥1} ω_j·4σ²/n²`
//! (public: it depends on `σ`, the weights and `n`). Clarkson's count is usually far
//! larger than needed, so the solver also stops once its certified duality gap (which bounds
//! the primal error, oracle slack included) is `≤ Δ`, and never runs more than
//! [`RelaxedSettings::max_iterations`] steps. The release's notes report all of them.
//! Everything after the measurement depends on the data only through the noisy counts, so
//! data-dependent stopping costs no privacy.
//!
//! # Scope
//! Marginal workloads whose tables read binary attributes only; others are refused with a
//! message naming the attribute. [`OneHotEncoded`] runs it on categorical data through the
//! one-hot encoding of seed 000 §1 (the `dpqr` catalogue entry does). The guarantee
//! is ρ-zCDP under **replace-one** neighbours (public `n`); add/remove is refused.

mod body;
pub mod boosting;
pub mod jl;
pub mod onehot;

pub use body::ParityBody;
pub use boosting::{BoostingAccounting, BoostingForQueries, BoostingParams, BoostingSettings};
pub use onehot::OneHotEncoded;

use dp_core::{DiscreteGaussian, Neighbouring, Num, PrivacyLoss};
use dp_geometry::{FrankWolfeSettings, GrothendieckSettings, frank_wolfe_project};
use dp_queries::{Dataset, MarginalParityTransform, MarginalWorkload};
use rand::CryptoRng;

use crate::sensitivity::parity_odd_count_sensitivity;
use crate::{
    Diagnostics, Mechanism, MechanismError, NoiseDescription, NoiseDistribution,
    PrivacyCertificate, Release, Result,
};

/// Solver settings of [`RelaxedProjection`] (none affects privacy).
#[derive(Clone, Debug, PartialEq)]
pub struct RelaxedSettings {
    /// Cap on Frank–Wolfe steps (≥ 1). Default 300.
    pub max_iterations: usize,
    /// Target accuracy `Δ` of the projection as a fraction of the expected noise energy
    /// (module docs); finite and > 0. Default 0.05.
    pub accuracy: f64,
    /// Settings of the Grothendieck oracle. Default: [`GrothendieckSettings::default`] with
    /// at most 500 cycles and relative tolerance 1e-6 (each solve is warm-started from the
    /// previous step's vectors, and its remaining slack is certified and counted in the
    /// Frank–Wolfe gap, so a looser per-solve tolerance costs no correctness).
    pub oracle: GrothendieckSettings,
}

impl Default for RelaxedSettings {
    fn default() -> Self {
        Self {
            max_iterations: 300,
            accuracy: 0.05,
            oracle: GrothendieckSettings {
                max_cycles: 500,
                relative_tolerance: 1e-6,
                ..GrothendieckSettings::default()
            },
        }
    }
}

/// Parameters of [`RelaxedProjection`] before validation.
#[derive(Clone, Debug, PartialEq)]
pub struct RelaxedProjectionParams {
    /// The budget: `Zcdp { rho }`, or `Approx { epsilon, delta }` converted to the largest ρ
    /// whose (ε, δ) conversion stays within it. Pure ε is refused (Gaussian noise).
    pub budget: PrivacyLoss,
    /// Neighbouring relation; only replace-one is supported.
    pub neighbouring: Neighbouring,
    /// Solver settings.
    pub settings: RelaxedSettings,
}

impl RelaxedProjectionParams {
    /// Replace-one neighbours and default settings.
    pub fn new(budget: PrivacyLoss) -> Self {
        Self {
            budget,
            neighbouring: Neighbouring::ReplaceOne,
            settings: RelaxedSettings::default(),
        }
    }

    /// Set the neighbouring relation (add/remove is refused by [`Self::check`]).
    pub fn neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// Set the solver settings.
    pub fn settings(mut self, settings: RelaxedSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Validate the parameters and derive ρ.
    pub fn check(&self) -> Result<RelaxedProjection> {
        if self.neighbouring != Neighbouring::ReplaceOne {
            return Err(MechanismError::InvalidParameter {
                name: "neighbouring",
                value: self.neighbouring.to_string(),
                reason: "the relaxed projection normalises by the public number of records, \
                         so it is defined for replace-one neighbours only"
                    .into(),
            });
        }
        let (rho, delta) = match self.budget {
            PrivacyLoss::Zcdp { rho } => (rho, None),
            PrivacyLoss::Approx { epsilon, delta } => {
                if !(epsilon > 0.0 && delta > 0.0) {
                    return Err(MechanismError::InvalidParameter {
                        name: "budget",
                        value: self.budget.to_string(),
                        reason: "the relaxed projection needs ε > 0 and δ > 0".into(),
                    });
                }
                (dp_core::rho_for_epsilon_delta(epsilon, delta)?, Some(delta))
            }
            PrivacyLoss::Pure { .. } => {
                return Err(MechanismError::InvalidParameter {
                    name: "budget",
                    value: self.budget.to_string(),
                    reason: "the relaxed projection adds Gaussian noise, which cannot give pure \
                             ε-DP: give δ or ρ"
                        .into(),
                });
            }
        };
        if !(rho > 0.0 && rho.is_finite()) {
            return Err(MechanismError::InvalidParameter {
                name: "rho",
                value: Num(rho).to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        let s = &self.settings;
        if s.max_iterations == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "iterations",
                value: "0".into(),
                reason: "the projection needs at least one Frank–Wolfe step".into(),
            });
        }
        if !(s.accuracy > 0.0 && s.accuracy.is_finite()) {
            return Err(MechanismError::InvalidParameter {
                name: "accuracy",
                value: Num(s.accuracy).to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        s.oracle.check()?;
        Ok(RelaxedProjection {
            rho,
            delta,
            settings: s.clone(),
        })
    }
}

/// The relaxed projection mechanism (module docs): ρ-zCDP, replace-one neighbours. Build it
/// with [`RelaxedProjectionParams::check`].
#[derive(Clone, Debug, PartialEq)]
pub struct RelaxedProjection {
    rho: f64,
    delta: Option<f64>,
    settings: RelaxedSettings,
}

/// What [`RelaxedProjection::measure`] returns: the public plan and the one noisy
/// measurement.
#[derive(Clone, Debug)]
pub struct ParityMeasurement {
    /// The transform of the workload restricted to its touched attributes.
    pub transform: MarginalParityTransform,
    /// Noisy odd counts `ô_T`, in the order of the transform's parities.
    pub noisy_odd_counts: Vec<i64>,
    /// σ² of the discrete Gaussian noise on each odd count.
    pub sigma2: f64,
    /// The number of records (public under replace-one).
    pub n: usize,
}

impl RelaxedProjection {
    /// The ρ of the guarantee.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// The solver settings.
    pub fn settings(&self) -> &RelaxedSettings {
        &self.settings
    }

    /// The guarantee: ρ-zCDP, replace-one neighbours.
    pub fn certificate(&self) -> PrivacyCertificate {
        let loss = PrivacyLoss::Zcdp { rho: self.rho };
        PrivacyCertificate {
            mechanism: "relaxed-projection".into(),
            loss,
            model: crate::PrivacyModel::Central {
                neighbouring: Neighbouring::ReplaceOne,
            },
            approx_equivalent: self.delta.and_then(|d| loss.to_approx(d).ok()),
        }
    }

    /// σ² of the noise on each of `num_parities` odd counts: `Δ₂²/(2ρ)` with `Δ₂² = N`.
    pub fn sigma2(&self, num_parities: usize) -> f64 {
        let s = parity_odd_count_sensitivity(num_parities);
        crate::calibration::gaussian_sigma2(s.l2_squared as f64, self.rho)
    }

    /// The checks of a release of `workload` that need no data ([`Mechanism::check_inputs`],
    /// run by the release before anything is counted): the parity transform of the workload
    /// over its touched attributes (binary attributes only), the relaxation's size, and σ²
    /// of the parities' noise within the sampler's range. Returns the body to project onto
    /// (`None` when no parity is needed).
    fn public_plan(&self, workload: &MarginalWorkload) -> Result<Option<ParityBody>> {
        let touched = workload.touched_attributes();
        let plan = MarginalParityTransform::new(&workload.on_attributes(&touched)?)?;
        if plan.parities().is_empty() {
            return Ok(None);
        }
        DiscreteGaussian::new(self.sigma2(plan.parities().len()))?;
        Ok(Some(ParityBody::new(
            plan.parities(),
            self.settings.oracle.clone(),
        )?))
    }

    /// Steps 1–2 of the module docs: checks the data and the workload (binary attributes,
    /// at least one record), counts the workload's tables, then [`Self::measure_counts`].
    /// This is the mechanism's only access to the data; everything else is post-processing.
    pub fn measure(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<ParityMeasurement> {
        crate::perturbation::check_data(data, workload)?;
        let counts = workload.count_all(data)?;
        self.measure_counts(&counts, data.n(), workload, rng)
    }

    /// Steps 1–2 from the exact counts of the workload's tables (workload order, as
    /// [`MarginalWorkload::count_all`] gives them) of a dataset of the public `n` records:
    /// each needed parity's odd count is read off a table that contains it
    /// ([`MarginalParityTransform::odd_counts_from_counts`], exact), then noised. So the
    /// mechanism needs only the workload's counts: from a stream or an engine the release
    /// is the one from the records, draw for draw.
    ///
    /// Errors: as [`Self::measure`], and counts of the wrong length or whose tables do not
    /// each count `n` records.
    pub fn measure_counts(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<ParityMeasurement> {
        crate::counts::check_marginal_counts(counts, n, workload)?;
        let touched = workload.touched_attributes();
        // the restriction keeps the query order and the counts
        let transform = MarginalParityTransform::new(&workload.on_attributes(&touched)?)?;
        let mut noisy: Vec<i64> = transform
            .odd_counts_from_counts(counts)?
            .into_iter()
            .map(|c| {
                i64::try_from(c).map_err(|_| MechanismError::Numerical {
                    what: "an odd count does not fit in i64".into(),
                })
            })
            .collect::<Result<_>>()?;
        let sigma2 = self.sigma2(noisy.len());
        if !noisy.is_empty() {
            let sampler = DiscreteGaussian::new(sigma2)?;
            sampler.add_noise(&mut noisy, rng)?;
        }
        Ok(ParityMeasurement {
            transform,
            noisy_odd_counts: noisy,
            sigma2,
            n,
        })
    }

    /// The release from the exact counts of the workload's tables of `n` records (the one
    /// path of [`Mechanism::release`] and [`Mechanism::release_counts`]): the public checks,
    /// [`Self::measure_counts`], then the projection and the read-back (post-processing).
    pub fn release_counted(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        // Public checks that do not need the data, before anything is measured (the same as
        // `check_inputs`): the transform, the size of the relaxation, the noise's σ².
        let body = self.public_plan(workload)?;
        let m = self.measure_counts(counts, n, workload, rng)?;
        let n = m.n as f64;
        let num_parities = m.noisy_odd_counts.len();
        let sensitivity = parity_odd_count_sensitivity(num_parities);
        let mut notes = vec![format!(
            "measured each of the {num_parities} parities the workload needs once (odd counts, \
             discrete Gaussian noise σ² = {}); the relaxation's replicated entries are filled \
             from these by post-processing",
            Num(m.sigma2)
        )];
        let noisy_parities: Vec<f64> = m
            .noisy_odd_counts
            .iter()
            .map(|&o| 1.0 - 2.0 * o as f64 / n)
            .collect();
        let mut diagnostics = Diagnostics::default();
        let projected = match &body {
            None => noisy_parities,
            Some(body) => {
                let mut y = Vec::with_capacity(num_parities + 1);
                y.push(1.0);
                y.extend_from_slice(&noisy_parities);
                let mut w = Vec::with_capacity(num_parities + 1);
                w.push(m.transform.empty_weight());
                w.extend_from_slice(m.transform.weights());
                let weight_sum: f64 = w.iter().sum();
                let noise_energy: f64 =
                    m.transform.weights().iter().sum::<f64>() * 4.0 * m.sigma2 / (n * n);
                let target = self.settings.accuracy * noise_energy;
                let diameter2 = 4.0 * weight_sum;
                let clarkson = ((4.0 * diameter2 / target).ceil() - 2.0).max(1.0);
                let clarkson_steps = if clarkson >= usize::MAX as f64 {
                    usize::MAX
                } else {
                    clarkson as usize
                };
                let steps = clarkson_steps.min(self.settings.max_iterations);
                // The solver's stopping rule is relative to f(v₀); compute v₀ (the first
                // oracle answer, deterministic) to turn the absolute target into it.
                let c0: Vec<f64> = y.iter().zip(&w).map(|(a, b)| a * b).collect();
                let v0 = dp_geometry::LinearOracle::linear_max(
                    body,
                    &c0,
                    dp_geometry::Parallelism::Rayon,
                )?;
                let f0: f64 = v0
                    .point
                    .iter()
                    .zip(&y)
                    .zip(&w)
                    .map(|((v, t), wk)| wk * (v - t).powi(2))
                    .sum();
                let tolerance = if f0 > 0.0 { target / f0 } else { 0.0 };
                let fw = FrankWolfeSettings {
                    max_iterations: steps,
                    relative_gap_tolerance: tolerance,
                    weights: Some(w),
                    parallelism: dp_geometry::Parallelism::Rayon,
                    ..FrankWolfeSettings::default()
                };
                let result = frank_wolfe_project(body, &y, &fw)?;
                let (calls, cycles, worst_slack) = body.work();
                notes.push(format!(
                    "Frank–Wolfe onto the Grothendieck relaxation ({} entries for {} parities): \
                     target accuracy Δ = {} (squared error units); Clarkson's bound asks for {} \
                     steps, the cap is {}; stopped after {} steps ({}) with certified gap {}",
                    body.entries(),
                    num_parities,
                    short(target),
                    clarkson_steps,
                    self.settings.max_iterations,
                    result.iterations,
                    match result.status {
                        dp_geometry::SolveStatus::Converged => "gap below Δ",
                        dp_geometry::SolveStatus::MaxIterations => "step limit reached",
                        dp_geometry::SolveStatus::Stalled => "no further progress possible",
                    },
                    short(result.gap)
                ));
                notes.push(format!(
                    "Grothendieck oracle: {calls} solves, {cycles} mixing-method cycles in all, \
                     largest certified gap {}",
                    short(worst_slack)
                ));
                diagnostics.iterations = Some(result.iterations);
                diagnostics.oracle_calls = Some(calls);
                diagnostics.frank_wolfe_gap = Some(result.gap);
                result.point[1..].to_vec()
            }
        };
        let answers = m.transform.marginals_from_parities(&projected)?;
        diagnostics.noise = Some(NoiseDescription::new(
            NoiseDistribution::DiscreteGaussian,
            m.sigma2,
            sensitivity.l2(),
            m.n,
        ));
        notes.push(
            "the noise description is that of the measured parity odd counts, not of the \
             released marginal answers (which are projected and transformed)"
                .into(),
        );
        diagnostics.notes = notes;
        Ok(Release {
            answers,
            synthetic: None,
            certificate: self.certificate(),
            diagnostics,
        })
    }
}

impl Mechanism<MarginalWorkload> for RelaxedProjection {
    fn name(&self) -> &'static str {
        "relaxed-projection"
    }

    fn certificate(&self) -> PrivacyCertificate {
        RelaxedProjection::certificate(self)
    }

    /// The parity transform, the relaxation's size and the noise's range (n is not needed).
    fn check_inputs(&self, workload: &MarginalWorkload, _public_n: Option<usize>) -> Result<()> {
        self.public_plan(workload).map(drop)
    }

    /// The workload's counts and the public n are all it reads
    /// ([`RelaxedProjection::measure_counts`]).
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
        crate::perturbation::check_data(data, workload)?;
        let counts = workload.count_all(data)?;
        self.release_counted(&counts, data.n(), workload, rng)
    }
}

/// Three significant digits, for solver diagnostics (not privacy parameters).
fn short(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-3..1e6).contains(&x.abs()) {
        format!("{x:.2e}")
    } else {
        let digits = if x.abs() >= 100.0 {
            0
        } else if x.abs() >= 1.0 {
            2
        } else {
            4
        };
        format!("{x:.digits$}")
    }
}
