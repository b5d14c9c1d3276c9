//! Answer perturbation: the baselines every other mechanism is compared with.
//!
//! Both mechanisms count every cell of every marginal table exactly, add independent
//! integer noise from an exact sampler to each count (`dp-core`'s CKS20 samplers, so there
//! is no floating-point leakage on the release path), and divide by `n`.
//!
//! * [`GaussianMechanism`]: discrete Gaussian noise with σ² = Δ₂²/(2ρ), which is ρ-zCDP
//!   (Canonne, Kamath, Steinke 2020, Thm. 14 for the multivariate discrete Gaussian with
//!   integer sensitivity; Bun–Steinke 2016 Prop. 1.6 for the continuous analogue).
//! * [`LaplaceMechanism`]: discrete Laplace (two-sided geometric) noise with scale
//!   t = Δ₁/ε, which is pure ε-DP (Ghosh, Roughgarden, Sundararajan 2009; Dwork–Roth Thm 3.6
//!   for the continuous analogue).
//!
//! Δ₁ and Δ₂ come from [`crate::sensitivity`]. Each noise parameter is rounded up after the
//! floating-point division, so the noise is never smaller than the guarantee needs.
//!
//! Both release **any** [`Workload`] of linear counting queries (marginals, conjunctions,
//! disjunctions, parities, explicit matrices): the sensitivity comes from the workload's
//! contribution bounds ([`crate::sensitivity::workload_count_sensitivity`]).
//!
//! Normalisation: under replace-one neighbours `n` is public and answers are counts / n.
//! Under add/remove `n` is private, so answers are divided by a noisy total, never by the
//! true `n`: for marginal tables the mean of the noisy table totals (post-processing of
//! released counts); for workloads without tables the total count `n` is measured as one
//! more query with the same noise, its cost included in the sensitivity
//! ([`crate::sensitivity::with_measured_total`]). The reported per-answer spread is relative
//! to that noisy total, and an empty dataset is released like any other (a refusal would
//! tell it apart from its one-record neighbours).

use crate::noise_stats::CountNoise;
use crate::postprocess::{self, PostProcessing};
use crate::sensitivity::{CountSensitivity, with_measured_total, workload_count_sensitivity};
use crate::{
    Diagnostics, Mechanism, MechanismError, NoiseDescription, NoiseDistribution,
    PrivacyCertificate, Release, Result,
};
use dp_core::{DiscreteGaussian, DiscreteLaplace, Neighbouring, PrivacyLoss, StreamFamily};
use dp_queries::{AnswerLayout, Dataset, Domain, Workload};
use rand::CryptoRng;
use rayon::prelude::*;

/// Parameters of an answer-perturbation baseline, before validation (linfa's `ParamGuard`
/// habit: `check()` turns them into a usable mechanism). The noise family is the type
/// parameter: use the aliases [`GaussianParams`] and [`LaplaceParams`].
#[derive(Clone, Debug, PartialEq)]
pub struct PerturbationParams<Noise> {
    /// The budget. Gaussian: `Zcdp { rho }`, or `Approx { epsilon, delta }` converted to the
    /// largest ρ whose tight (ε, δ) conversion stays within it (pure ε is refused: Gaussian
    /// noise cannot give pure DP). Laplace: `Pure { epsilon }` only.
    pub budget: PrivacyLoss,
    /// Neighbouring relation (default replace-one with public n).
    pub neighbouring: Neighbouring,
    /// Optional post-processing of the noisy answers (default none).
    pub post_processing: PostProcessing,
    noise: std::marker::PhantomData<Noise>,
}

/// Marker: discrete Gaussian noise (ρ-zCDP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GaussianNoise;

/// Marker: discrete Laplace noise (pure ε-DP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaplaceNoise;

/// Parameters of the Gaussian baseline; [`GaussianParams::check`] gives a
/// [`GaussianMechanism`].
pub type GaussianParams = PerturbationParams<GaussianNoise>;

/// Parameters of the Laplace baseline; [`LaplaceParams::check`] gives a
/// [`LaplaceMechanism`].
pub type LaplaceParams = PerturbationParams<LaplaceNoise>;

impl<Noise> PerturbationParams<Noise> {
    /// Parameters with default neighbouring (replace-one) and no post-processing.
    pub fn new(budget: PrivacyLoss) -> Self {
        PerturbationParams {
            budget,
            neighbouring: Neighbouring::ReplaceOne,
            post_processing: PostProcessing::None,
            noise: std::marker::PhantomData,
        }
    }

    /// Set the neighbouring relation.
    pub fn neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// Set the post-processing.
    pub fn post_processing(mut self, post: PostProcessing) -> Self {
        self.post_processing = post;
        self
    }
}

impl GaussianParams {
    /// Validate the parameters and derive ρ.
    pub fn check(&self) -> Result<GaussianMechanism> {
        let (rho, delta) = match self.budget {
            PrivacyLoss::Zcdp { rho } => (rho, None),
            PrivacyLoss::Approx { epsilon, delta } => {
                if epsilon <= 0.0 || delta <= 0.0 {
                    return Err(MechanismError::InvalidParameter {
                        name: "budget",
                        value: self.budget.to_string(),
                        reason: "the Gaussian mechanism needs ε > 0 and δ > 0".into(),
                    });
                }
                (dp_core::rho_for_epsilon_delta(epsilon, delta)?, Some(delta))
            }
            PrivacyLoss::Pure { .. } => {
                return Err(MechanismError::InvalidParameter {
                    name: "budget",
                    value: self.budget.to_string(),
                    reason: "Gaussian noise cannot give pure ε-DP: give δ or ρ, or use the \
                             Laplace mechanism"
                        .into(),
                });
            }
        };
        if !(rho > 0.0 && rho.is_finite()) {
            return Err(MechanismError::InvalidParameter {
                name: "rho",
                value: dp_core::Num(rho).to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        Ok(GaussianMechanism {
            rho,
            delta,
            neighbouring: self.neighbouring,
            post_processing: self.post_processing,
        })
    }
}

/// Gaussian answer perturbation on marginal counts: ρ-zCDP under the configured
/// neighbouring relation (seed 004 §2, the Gaussian mechanism under zCDP; exact discrete
/// Gaussian noise). Build it with [`GaussianParams::check`].
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianMechanism {
    rho: f64,
    delta: Option<f64>,
    neighbouring: Neighbouring,
    post_processing: PostProcessing,
}

impl GaussianMechanism {
    /// The zCDP parameter ρ this mechanism satisfies.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// The guarantee of every release, whatever the workload: ρ-zCDP under the configured
    /// relation (with the (ε, δ) it was derived from, if any).
    pub fn certificate(&self) -> PrivacyCertificate {
        let loss = PrivacyLoss::Zcdp { rho: self.rho };
        PrivacyCertificate {
            mechanism: "gaussian".to_string(),
            loss,
            model: crate::PrivacyModel::Central {
                neighbouring: self.neighbouring,
            },
            approx_equivalent: self.delta.and_then(|d| loss.to_approx(d).ok()),
        }
    }

    /// σ² of the discrete Gaussian count noise for `sensitivity`: Δ₂²/(2ρ), rounded up.
    pub fn sigma2(&self, sensitivity: &CountSensitivity) -> f64 {
        crate::calibration::gaussian_sigma2(sensitivity.l2_squared as f64, self.rho)
    }

    /// The checks of a release of `workload` that need no data ([`Mechanism::check_inputs`],
    /// run by the release too): the post-processing applies to the workload and the noise's
    /// σ² is within the sampler's range (a tiny ρ is refused here). Returns the sensitivity,
    /// whether the total is measured, and the sampler.
    fn public_plan<W: Workload + ?Sized>(
        &self,
        workload: &W,
    ) -> Result<(CountSensitivity, bool, DiscreteGaussian)> {
        check_post_processing(self.post_processing, workload)?;
        let (sensitivity, total) = measured_sensitivity(workload, self.neighbouring);
        let sampler = DiscreteGaussian::new(self.sigma2(&sensitivity))?;
        Ok((sensitivity, total, sampler))
    }
}

impl<W: Workload> Mechanism<W> for GaussianMechanism {
    fn name(&self) -> &'static str {
        "gaussian"
    }

    fn count_noise(&self, workload: &W) -> Option<CountNoise> {
        let (sensitivity, _) = measured_sensitivity(workload, self.neighbouring);
        Some(CountNoise::DiscreteGaussian {
            sigma2: self.sigma2(&sensitivity),
        })
    }

    fn certificate(&self) -> PrivacyCertificate {
        GaussianMechanism::certificate(self)
    }

    /// The post-processing and the noise parameter's range (n is not needed).
    fn check_inputs(&self, workload: &W, _public_n: Option<usize>) -> Result<()> {
        self.public_plan(workload).map(drop)
    }

    fn release(&self, data: &Dataset, workload: &W, rng: &mut dyn CryptoRng) -> Result<Release> {
        check_post_processing(self.post_processing, workload)?;
        let counts = exact_counts(data, workload, self.neighbouring)?;
        Mechanism::<W>::release_counts(self, counts, data.n(), workload, rng)
    }

    fn counts_suffice(&self) -> bool {
        true
    }

    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &W,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let (sensitivity, total, sampler) = self.public_plan(workload)?;
        let mut counts = with_total(counts, n, workload, self.neighbouring, total)?;
        let sigma2 = self.sigma2(&sensitivity);
        // all checks done: draw the noise
        add_noise_in_parallel(&mut counts, rng, |chunk, r| sampler.add_noise(chunk, r))?;
        finish(
            self.certificate(),
            self.neighbouring,
            self.post_processing,
            workload,
            n,
            &counts,
            (
                NoiseDistribution::DiscreteGaussian,
                sigma2,
                sensitivity.l2(),
            ),
        )
    }
}

impl LaplaceParams {
    /// Validate the parameters.
    pub fn check(&self) -> Result<LaplaceMechanism> {
        match self.budget {
            PrivacyLoss::Pure { epsilon } if epsilon > 0.0 && epsilon.is_finite() => {
                Ok(LaplaceMechanism {
                    epsilon,
                    neighbouring: self.neighbouring,
                    post_processing: self.post_processing,
                })
            }
            _ => Err(MechanismError::InvalidParameter {
                name: "budget",
                value: self.budget.to_string(),
                reason: "the Laplace mechanism is pure ε-DP: give a finite ε > 0 and no δ or ρ"
                    .into(),
            }),
        }
    }
}

/// Laplace answer perturbation on marginal counts: pure ε-DP under the configured
/// neighbouring relation (exact discrete Laplace noise). Build it with
/// [`LaplaceParams::check`].
#[derive(Clone, Debug, PartialEq)]
pub struct LaplaceMechanism {
    epsilon: f64,
    neighbouring: Neighbouring,
    post_processing: PostProcessing,
}

impl LaplaceMechanism {
    /// The ε this mechanism satisfies.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The guarantee of every release, whatever the workload: pure ε-DP under the
    /// configured relation.
    pub fn certificate(&self) -> PrivacyCertificate {
        PrivacyCertificate {
            mechanism: "laplace".to_string(),
            loss: PrivacyLoss::Pure {
                epsilon: self.epsilon,
            },
            model: crate::PrivacyModel::Central {
                neighbouring: self.neighbouring,
            },
            approx_equivalent: None,
        }
    }

    /// Scale t of the discrete Laplace count noise for `sensitivity`: Δ₁/ε, rounded up.
    pub fn scale(&self, sensitivity: &CountSensitivity) -> f64 {
        crate::calibration::laplace_scale(sensitivity.l1 as f64, self.epsilon)
    }

    /// The checks of a release of `workload` that need no data ([`Mechanism::check_inputs`],
    /// run by the release too): the post-processing applies to the workload and the noise's
    /// scale is within the sampler's range (a tiny ε is refused here). Returns the
    /// sensitivity, whether the total is measured, and the sampler.
    fn public_plan<W: Workload + ?Sized>(
        &self,
        workload: &W,
    ) -> Result<(CountSensitivity, bool, DiscreteLaplace)> {
        check_post_processing(self.post_processing, workload)?;
        let (sensitivity, total) = measured_sensitivity(workload, self.neighbouring);
        let sampler = DiscreteLaplace::new(self.scale(&sensitivity))?;
        Ok((sensitivity, total, sampler))
    }
}

impl<W: Workload> Mechanism<W> for LaplaceMechanism {
    fn name(&self) -> &'static str {
        "laplace"
    }

    fn count_noise(&self, workload: &W) -> Option<CountNoise> {
        let (sensitivity, _) = measured_sensitivity(workload, self.neighbouring);
        Some(CountNoise::DiscreteLaplace {
            scale: self.scale(&sensitivity),
        })
    }

    fn certificate(&self) -> PrivacyCertificate {
        LaplaceMechanism::certificate(self)
    }

    /// The post-processing and the noise parameter's range (n is not needed).
    fn check_inputs(&self, workload: &W, _public_n: Option<usize>) -> Result<()> {
        self.public_plan(workload).map(drop)
    }

    fn release(&self, data: &Dataset, workload: &W, rng: &mut dyn CryptoRng) -> Result<Release> {
        check_post_processing(self.post_processing, workload)?;
        let counts = exact_counts(data, workload, self.neighbouring)?;
        Mechanism::<W>::release_counts(self, counts, data.n(), workload, rng)
    }

    fn counts_suffice(&self) -> bool {
        true
    }

    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &W,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let (sensitivity, total, sampler) = self.public_plan(workload)?;
        let mut counts = with_total(counts, n, workload, self.neighbouring, total)?;
        let scale = self.scale(&sensitivity);
        add_noise_in_parallel(&mut counts, rng, |chunk, r| sampler.add_noise(chunk, r))?;
        finish(
            self.certificate(),
            self.neighbouring,
            self.post_processing,
            workload,
            n,
            &counts,
            (
                NoiseDistribution::DiscreteLaplace,
                scale,
                sensitivity.l1 as f64,
            ),
        )
    }
}

/// Whether the total count is measured alongside the workload: under add/remove, for a
/// workload with no tables to normalise by (module docs).
fn measures_total<W: Workload + ?Sized>(workload: &W, neighbouring: Neighbouring) -> bool {
    neighbouring == Neighbouring::AddRemove && workload.layout() == AnswerLayout::Queries
}

/// The sensitivity of what is measured — the workload's counts, plus the total when
/// [`measures_total`] — and whether the total is measured.
fn measured_sensitivity<W: Workload + ?Sized>(
    workload: &W,
    neighbouring: Neighbouring,
) -> (CountSensitivity, bool) {
    let s = workload_count_sensitivity(workload, neighbouring);
    if measures_total(workload, neighbouring) {
        (with_measured_total(s, neighbouring), true)
    } else {
        (s, false)
    }
}

/// Simplex post-processing needs tables; refused (before anything is counted) otherwise.
fn check_post_processing<W: Workload + ?Sized>(post: PostProcessing, workload: &W) -> Result<()> {
    if post == PostProcessing::SimplexProjection && workload.layout() == AnswerLayout::Queries {
        return Err(MechanismError::InvalidParameter {
            name: "post-processing",
            value: "simplex".into(),
            reason: format!(
                "projects each marginal table onto the simplex; a {} workload has no tables",
                workload.class()
            ),
        });
    }
    Ok(())
}

/// Counts per independently seeded noise chunk.
const NOISE_CHUNK: usize = 1 << 16;

/// Add independent noise to every count, chunks in parallel: each chunk of
/// [`NOISE_CHUNK`] counts draws from its own numbered stream of a [`StreamFamily`] forked
/// from `rng`, so the result depends only on `rng`, never on the thread count.
fn add_noise_in_parallel(
    counts: &mut [i64],
    rng: &mut dyn CryptoRng,
    add: impl Fn(&mut [i64], &mut rand_chacha::ChaCha20Rng) -> dp_core::Result<()> + Sync,
) -> Result<()> {
    let family = StreamFamily::fork(rng);
    counts
        .par_chunks_mut(NOISE_CHUNK)
        .enumerate()
        .try_for_each(|(i, chunk)| add(chunk, &mut family.stream(i as u64)))?;
    Ok(())
}

/// The checks every mechanism makes before drawing noise: the data is over the workload's
/// domain and has at least one record.
pub(crate) fn check_data<W: Workload + ?Sized>(data: &Dataset, workload: &W) -> Result<()> {
    check_domain(data, workload.domain())?;
    if data.n() == 0 {
        return Err(MechanismError::Data {
            reason: "the dataset has no records".into(),
        });
    }
    Ok(())
}

/// The data is over `domain`.
fn check_domain(data: &Dataset, domain: &Domain) -> Result<()> {
    if data.domain() != domain {
        return Err(MechanismError::Data {
            reason: "the dataset's domain is not the workload's domain".into(),
        });
    }
    Ok(())
}

/// [`check_data`] under `neighbouring`: under add/remove an empty dataset passes (refusing it
/// would distinguish it from its one-record neighbours); under replace-one `n ≥ 1` is
/// required because the answers are divided by the public `n`.
pub(crate) fn check_data_under<W: Workload + ?Sized>(
    data: &Dataset,
    workload: &W,
    neighbouring: Neighbouring,
) -> Result<()> {
    match neighbouring {
        Neighbouring::ReplaceOne => check_data(data, workload),
        Neighbouring::AddRemove => check_domain(data, workload.domain()),
    }
}

/// Check the data against the workload and count every query exactly, as `i64`.
///
/// Under add/remove neighbours an empty dataset is released like any other: refusing it
/// would distinguish it from its one-record neighbours (a refusal is an output). Under
/// replace-one `n` is public and the answers are divided by it, so `n ≥ 1` is required.
fn exact_counts<W: Workload + ?Sized>(
    data: &Dataset,
    workload: &W,
    neighbouring: Neighbouring,
) -> Result<Vec<i64>> {
    check_data_under(data, workload, neighbouring)?;
    Ok(workload.count_all(data)?)
}

/// The counts checked against the workload (one per query; under replace-one `n ≥ 1`, since
/// the answers are divided by the public `n`), with the total count `n` appended when
/// `total` (see [`measures_total`]).
fn with_total<W: Workload + ?Sized>(
    mut counts: Vec<i64>,
    n: usize,
    workload: &W,
    neighbouring: Neighbouring,
    total: bool,
) -> Result<Vec<i64>> {
    if counts.len() != workload.num_queries() {
        return Err(MechanismError::Data {
            reason: format!(
                "{} counts for a workload of {} queries",
                counts.len(),
                workload.num_queries()
            ),
        });
    }
    if neighbouring == Neighbouring::ReplaceOne && n == 0 {
        return Err(MechanismError::Data {
            reason: "the dataset has no records".into(),
        });
    }
    if total {
        counts.push(i64::try_from(n).map_err(|_| MechanismError::Numerical {
            what: "the number of records does not fit in i64".into(),
        })?);
    }
    Ok(counts)
}

/// Normalise noisy counts, post-process, and assemble the release. `noise` is the noise
/// family, its parameter and the sensitivity it was calibrated to.
///
/// Under replace-one the answers are `count / n` with the public `n`. Under add/remove `n`
/// is private and is never used: the answers are divided by `T̂ = max(1, mean over the
/// tables of the table's noisy total)` — or, for a workload without tables, by
/// `max(1, noisy total count)`, the last noisy value — a function of the noisy counts alone,
/// hence post-processing with no further privacy cost (Dwork–Roth 2014, Prop. 2.1). Each
/// noisy total is an unbiased estimate of `n` (its noise has mean zero), so `T̂` is too
/// before the clamp at 1. The per-answer spread reported is then relative to `T̂`.
fn finish<W: Workload + ?Sized>(
    certificate: PrivacyCertificate,
    neighbouring: Neighbouring,
    post: PostProcessing,
    workload: &W,
    n: usize,
    noisy_counts: &[i64],
    noise: (NoiseDistribution, f64, f64),
) -> Result<Release> {
    let mut notes = Vec::new();
    let (distribution, parameter, sensitivity) = noise;
    let layout = workload.layout();
    let k = workload.num_queries();
    let (denominator, noise) = match (neighbouring, &layout) {
        (Neighbouring::ReplaceOne, _) => (
            n as f64,
            NoiseDescription::new(distribution, parameter, sensitivity, n),
        ),
        (Neighbouring::AddRemove, AnswerLayout::Tables { offsets }) => {
            let tables = offsets.len().saturating_sub(1).max(1);
            let total: f64 = noisy_counts[..k].iter().map(|&c| c as f64).sum();
            notes.push(
                "add/remove neighbours: answers normalised by the mean noisy table total \
                 (post-processing), not by the private n"
                    .to_string(),
            );
            let t = (total / tables as f64).max(1.0);
            (
                t,
                NoiseDescription::on_noisy_total(distribution, parameter, sensitivity, t),
            )
        }
        (Neighbouring::AddRemove, AnswerLayout::Queries) => {
            let total = noisy_counts
                .get(k)
                .copied()
                .ok_or_else(|| MechanismError::Numerical {
                    what: "the noisy total count is missing".into(),
                })?;
            notes.push(
                "add/remove neighbours: the total count was measured with the same noise (one \
                 more query, included in the sensitivity); answers normalised by it, not by \
                 the private n"
                    .to_string(),
            );
            let t = (total as f64).max(1.0);
            (
                t,
                NoiseDescription::on_noisy_total(distribution, parameter, sensitivity, t),
            )
        }
    };
    let mut answers: Vec<f64> = noisy_counts[..k]
        .iter()
        .map(|&c| c as f64 / denominator)
        .collect();
    if post != PostProcessing::None
        && let AnswerLayout::Tables { offsets } = &layout
    {
        postprocess::apply_to_tables(post, offsets, &mut answers);
        notes.push(format!("post-processing: {post}"));
    }
    Ok(Release {
        answers,
        synthetic: None,
        certificate,
        diagnostics: Diagnostics {
            noise: Some(noise),
            notes,
            // the noisy total the answers were divided by (published: issue #26)
            estimated_total: (neighbouring == Neighbouring::AddRemove).then_some(denominator),
            ..Diagnostics::default()
        },
    })
}
