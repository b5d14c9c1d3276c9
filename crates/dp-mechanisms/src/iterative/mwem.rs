//! MWEM (Hardt, Ligett and McSherry, "A Simple and Practical Algorithm for Differentially
//! Private Data Release", NeurIPS 2012), the practical private multiplicative weights that
//! seed 003 §7 compares DualQuery against.
//!
//! Over the explicit universe `𝒳` of the domain, starting from the uniform distribution
//! `A₀`, for `t = 1..T`:
//! 1. **select** a workload query `q_t` with the exponential mechanism on the score
//!    `|c_q(D) − n·q(A_{t−1})|` (count units, sensitivity 1 under replace-one:
//!    [`crate::sensitivity::distinguisher_score_sensitivity`]);
//! 2. **measure** `m_t = c_{q_t}(D) + noise` (a counting query, sensitivity 1:
//!    [`crate::sensitivity::counting_query_sensitivity`]);
//! 3. **update** by multiplicative weights, `A(x) ∝ A(x)·exp(q_i(x)·(m_i − n·q_i(A))/(2n))`,
//!    repeated `passes` times over all measurements so far (HLM §3.3, "practical
//!    improvements").
//!
//! The release is the last distribution (the practical variant; the theory's average of
//! `A_t` is [`MwemOutput::Average`]).
//!
//! ## Privacy (replace-one neighbours)
//!
//! * **Pure** budget ε: each round spends `ε/(2T)` on selection and `ε/(2T)` on the
//!   measurement — discrete Laplace of scale `2T/ε` on the count. Total ε by basic
//!   composition. Selector: **permute-and-flip** (`dp_core::PermuteAndFlip`, exact coins):
//!   only its pure ε₁ is used, which it satisfies, and it is never worse in expected score
//!   than the exponential mechanism.
//! * **zCDP** budget ρ (or (ε, δ), converted to the largest ρ whose tight conversion fits):
//!   each round spends `ρ/(2T)` on selection and `ρ/(2T)` on the measurement: discrete
//!   Gaussian of variance `σ² = T/ρ` (`Δ²/(2σ²) = ρ/(2T)` with Δ = 1). Total ρ by zCDP
//!   composition. Selector: the **exponential mechanism proper** (`dp_core::ExponentialMechanism`,
//!   exact rejection sampling ∝ `exp(ε₁·score/2)`) at `ε₁ = 2√(ρ/T)`, which is
//!   `ε₁²/8 = ρ/(2T)`-zCDP (ε₁-bounded range, Cesar–Rogers 2021 Lemma 3.2). Permute-and-flip
//!   would **not** do here: it is not ε₁²/8-zCDP (issue #9: KL 0.2551 > 0.125 at ε₁ = 1;
//!   until issue #9 MWEM used it here, which overspent its zCDP budget).

use std::time::Instant;

use dp_core::{
    DiscreteGaussian, DiscreteLaplace, ExponentialMechanism, Neighbouring, PermuteAndFlip,
    PrivacyLoss, Selector, rho_for_epsilon_delta,
};
use dp_queries::{Dataset, MarginalWorkload, Universe};
use rand::CryptoRng;

use super::universe_mw::{CellSupports, UniverseDistribution, answers_of};
use crate::sensitivity::{counting_query_sensitivity, distinguisher_score_sensitivity};
use crate::{
    Diagnostics, Mechanism, MechanismError, PrivacyCertificate, Release, Result, SyntheticData,
};

/// Which distribution MWEM releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MwemOutput {
    /// The final distribution `A_T` (practical variant).
    #[default]
    Last,
    /// The average `(1/T) Σ_t A_t` (HLM Algorithm 1 as analysed).
    Average,
}

/// The per-round noise of MWEM's measurements, in count units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MwemMeasurement {
    /// Discrete Laplace with this scale (pure accounting).
    Laplace {
        /// Scale t = 2T/ε.
        scale: f64,
    },
    /// Discrete Gaussian with this variance (zCDP accounting).
    Gaussian {
        /// σ² = T/ρ.
        sigma2: f64,
    },
}

/// MWEM's calibrated per-round parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MwemPlan {
    /// Rounds T.
    pub rounds: usize,
    /// ε of each round's exponential mechanism.
    pub select_epsilon: f64,
    /// The measurement noise.
    pub measurement: MwemMeasurement,
    /// The total guarantee (pure ε or ρ-zCDP).
    pub loss: PrivacyLoss,
    /// Its (ε, δ) equivalent, when the budget was given as (ε, δ).
    pub approx_equivalent: Option<PrivacyLoss>,
}

impl MwemPlan {
    /// Calibrates `rounds` rounds to `budget` (see the module docs).
    pub fn new(budget: &PrivacyLoss, rounds: usize) -> Result<Self> {
        let budget = budget.validate()?;
        if rounds == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "rounds",
                value: "0".into(),
                reason: "MWEM needs at least one round".into(),
            });
        }
        let t = rounds as f64;
        let d1 = counting_query_sensitivity(Neighbouring::ReplaceOne) as f64;
        let ds = distinguisher_score_sensitivity() as f64;
        debug_assert!(d1 == 1.0 && ds == 1.0);
        let zcdp = |rho: f64, approx: Option<PrivacyLoss>| -> Result<Self> {
            if rho.is_nan() || rho <= 0.0 {
                return Err(MechanismError::InvalidParameter {
                    name: "rho",
                    value: rho.to_string(),
                    reason: "must be positive".into(),
                });
            }
            let rho_round = rho / (2.0 * t);
            // ε₁²/8 = ρ/(2T) ⇒ ε₁ = √(8ρ/(2T)) = 2√(ρ/T) (rounded down).
            let select_epsilon = (8.0 * rho_round).sqrt().next_down() * ds;
            // Δ²/(2σ²) = ρ/(2T) ⇒ σ² = Δ²T/ρ (rounded up).
            let sigma2 = crate::calibration::gaussian_sigma2(d1 * d1, rho_round);
            Ok(MwemPlan {
                rounds,
                select_epsilon,
                measurement: MwemMeasurement::Gaussian { sigma2 },
                loss: PrivacyLoss::zcdp(rho)?,
                approx_equivalent: approx,
            })
        };
        match budget {
            PrivacyLoss::Pure { epsilon } => {
                let e = (epsilon / (2.0 * t)).next_down();
                Ok(MwemPlan {
                    rounds,
                    select_epsilon: e,
                    measurement: MwemMeasurement::Laplace {
                        scale: crate::calibration::laplace_scale(d1, e),
                    },
                    loss: budget,
                    approx_equivalent: None,
                })
            }
            PrivacyLoss::Zcdp { rho } => zcdp(rho, None),
            PrivacyLoss::Approx { epsilon, delta } => {
                let rho = rho_for_epsilon_delta(epsilon, delta)?;
                zcdp(rho, Some(budget))
            }
        }
    }
}

/// What MWEM measured, for tests and diagnostics.
#[derive(Clone, Debug, Default)]
pub struct MwemTrace {
    /// Selected query (workload order) of each round.
    pub selected: Vec<usize>,
    /// Noisy count of each round's query.
    pub noisy_counts: Vec<i64>,
}

/// MWEM's parameters (validated by [`MwemParams::check`]).
#[derive(Clone, Debug)]
pub struct MwemParams {
    budget: PrivacyLoss,
    rounds: usize,
    passes: usize,
    output: MwemOutput,
    universe_cap: usize,
}

impl MwemParams {
    /// Defaults: T = 15 rounds (seed 003 §7's setting), 10 MW passes per round, last
    /// distribution, universes up to 2^22 elements.
    pub fn new(budget: PrivacyLoss) -> Self {
        MwemParams {
            budget,
            rounds: 15,
            passes: 10,
            output: MwemOutput::Last,
            universe_cap: 1 << 22,
        }
    }
    /// Rounds T.
    pub fn rounds(mut self, t: usize) -> Self {
        self.rounds = t;
        self
    }
    /// MW passes over all measurements per round (≥ 1).
    pub fn passes(mut self, p: usize) -> Self {
        self.passes = p;
        self
    }
    /// Released distribution.
    pub fn output(mut self, o: MwemOutput) -> Self {
        self.output = o;
        self
    }
    /// Largest universe accepted.
    pub fn universe_cap(mut self, cap: usize) -> Self {
        self.universe_cap = cap;
        self
    }
    /// Validates and calibrates.
    pub fn check(self) -> Result<Mwem> {
        if self.passes == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "passes",
                value: "0".into(),
                reason: "at least one MW pass per round".into(),
            });
        }
        let plan = MwemPlan::new(&self.budget, self.rounds)?;
        Ok(Mwem { p: self, plan })
    }
}

/// The MWEM mechanism.
#[derive(Clone, Debug)]
pub struct Mwem {
    p: MwemParams,
    plan: MwemPlan,
}

impl Mwem {
    /// The calibrated plan.
    pub fn plan(&self) -> &MwemPlan {
        &self.plan
    }

    /// The selection step's selector (ε₁, score sensitivity 1): permute-and-flip under a
    /// pure budget, the exponential mechanism (ε₁²/8-zCDP) under a zCDP or (ε, δ) budget
    /// (module docs).
    pub fn selection(&self) -> Result<Selector> {
        let (e, d) = (
            self.plan.select_epsilon,
            distinguisher_score_sensitivity() as f64,
        );
        Ok(match self.plan.loss {
            PrivacyLoss::Pure { .. } => Selector::PermuteAndFlip(PermuteAndFlip::new(e, d, false)?),
            _ => Selector::Exponential(ExponentialMechanism::new(e, d, false)?),
        })
    }

    /// The `T` rounds on exact `counts` of `n` records: returns the last distribution, the
    /// average of the `A_t` (zeros unless [`MwemOutput::Average`]) and the trace.
    /// `observe(t, synth)` sees the synthetic answers `q(A_{t−1})` at the start of round
    /// `t` (1-based): the public history of that round's steps.
    fn run_rounds<R: rand::Rng + CryptoRng + ?Sized>(
        &self,
        universe: &Universe,
        workload: &MarginalWorkload,
        counts: &[u64],
        n_records: usize,
        rng: &mut R,
        observe: &mut dyn FnMut(usize, &[f64]),
    ) -> Result<(UniverseDistribution, Vec<f64>, MwemTrace)> {
        let n = n_records as f64;
        let em = self.selection()?;
        let noise = MeasurementNoise::new(&self.plan.measurement)?;
        let mut supports = CellSupports::new(universe, workload)?;
        let mut dist = UniverseDistribution::uniform(universe.len())?;
        let mut average = vec![0.0f64; universe.len()];
        let mut trace = MwemTrace::default();
        let mut measured: Vec<(usize, f64)> = Vec::new();
        for t in 0..self.plan.rounds {
            let synth = answers_of(universe, workload, &dist)?;
            observe(t + 1, &synth);
            let q = select_query(&em, counts, n_records, &synth, rng)?;
            let m = measure(counts, q, &noise, rng);
            trace.selected.push(q);
            trace.noisy_counts.push(m);
            measured.push((q, m as f64 / n));
            for _ in 0..self.p.passes {
                for &(q, mhat) in &measured {
                    let sup = supports.support(q);
                    let a = dist.mass(sup);
                    dist.multiply(sup, (mhat - a) / 2.0);
                }
            }
            dist.renormalize();
            if self.p.output == MwemOutput::Average {
                for (acc, p) in average.iter_mut().zip(dist.probabilities()) {
                    *acc += p / self.plan.rounds as f64;
                }
            }
        }
        Ok((dist, average, trace))
    }

    /// Release plus the trace of selections and measurements.
    pub fn release_with_trace<R: rand::Rng + CryptoRng + ?Sized>(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut R,
    ) -> Result<(Release, MwemTrace)> {
        let start = Instant::now();
        if data.domain() != workload.domain() {
            return Err(MechanismError::Data {
                reason: "the data's domain is not the workload's".into(),
            });
        }
        let universe = Universe::new(data.domain(), self.p.universe_cap)?;
        let counts = workload.count_all(data)?;
        let (dist, average, trace) =
            self.run_rounds(&universe, workload, &counts, data.n(), rng, &mut |_, _| {})?;
        let weights = match self.p.output {
            MwemOutput::Last => dist.probabilities(),
            MwemOutput::Average => average,
        };
        let final_dist = UniverseDistribution::from_weights(weights.clone())?;
        let answers = answers_of(&universe, workload, &final_dist)?;
        let synthetic = synthetic_of(&universe, &weights)?;
        let release = Release {
            answers,
            synthetic: Some(synthetic),
            certificate: self.certificate(),
            diagnostics: Diagnostics {
                wall_seconds: start.elapsed().as_secs_f64(),
                iterations: Some(self.plan.rounds),
                notes: vec![format!(
                    "MWEM: T = {}, {} MW passes, selection ε₁ = {:.4e} per round, measurement {:?}, |X| = {}",
                    self.plan.rounds,
                    self.p.passes,
                    self.plan.select_epsilon,
                    self.plan.measurement,
                    universe.len()
                )],
                ..Default::default()
            },
        };
        Ok((release, trace))
    }
}

/// A round's measurement noise, in count units.
#[derive(Clone, Debug)]
pub(crate) enum MeasurementNoise {
    /// Discrete Laplace (pure accounting).
    Laplace(DiscreteLaplace),
    /// Discrete Gaussian (zCDP accounting).
    Gaussian(DiscreteGaussian),
}

impl MeasurementNoise {
    /// The sampler of a plan's measurement.
    pub(crate) fn new(m: &MwemMeasurement) -> Result<Self> {
        Ok(match *m {
            MwemMeasurement::Laplace { scale } => Self::Laplace(DiscreteLaplace::new(scale)?),
            MwemMeasurement::Gaussian { sigma2 } => Self::Gaussian(DiscreteGaussian::new(sigma2)?),
        })
    }

    fn sample<R: rand::Rng + CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        match self {
            Self::Laplace(l) => l.sample(rng),
            Self::Gaussian(g) => g.sample(rng),
        }
    }
}

/// MWEM's selection step: the selector `em` on the scores
/// `|c_q(D) − n·q(A)|` of the exact counts against the synthetic answers `synth` (the
/// public state). Called by the release and by the step audit.
pub(crate) fn select_query<R: rand::Rng + CryptoRng + ?Sized>(
    em: &Selector,
    counts: &[u64],
    n: usize,
    synth: &[f64],
    rng: &mut R,
) -> Result<usize> {
    let n = n as f64;
    let scores: Vec<f64> = counts
        .iter()
        .zip(synth)
        .map(|(&c, &a)| (c as f64 - n * a).abs())
        .collect();
    Ok(em.select(&scores, rng)?)
}

/// MWEM's measurement step: the noisy count `c_q(D) + Z`. Called by the release and by the
/// step audit.
pub(crate) fn measure<R: rand::Rng + CryptoRng + ?Sized>(
    counts: &[u64],
    q: usize,
    noise: &MeasurementNoise,
    rng: &mut R,
) -> i64 {
    counts[q] as i64 + noise.sample(rng)
}

/// The universe elements with positive weight as weighted synthetic records.
pub(crate) fn synthetic_of(universe: &Universe, weights: &[f64]) -> Result<SyntheticData> {
    let idx: Vec<usize> = (0..weights.len()).filter(|&x| weights[x] > 0.0).collect();
    let total: f64 = idx.iter().map(|&x| weights[x]).sum();
    Ok(SyntheticData {
        sampled_from_model: false,
        records: universe.to_dataset(&idx)?,
        weights: idx.iter().map(|&x| weights[x] / total).collect(),
    })
}

impl Mechanism for Mwem {
    fn name(&self) -> &'static str {
        "mwem"
    }

    fn produces_synthetic(&self) -> bool {
        true
    }

    fn certificate(&self) -> PrivacyCertificate {
        PrivacyCertificate {
            mechanism: "mwem".into(),
            loss: self.plan.loss,
            neighbouring: Neighbouring::ReplaceOne,
            approx_equivalent: self.plan.approx_equivalent,
        }
    }

    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        Ok(self.release_with_trace(data, workload, rng)?.0)
    }
}

impl crate::StepAudited for Mwem {
    /// Per audited round (default: the first and the last): the selection (claimed pure ε₁;
    /// accounted ε₁ (permute-and-flip, pure budget) or ε₁²/8-zCDP (exponential mechanism,
    /// zCDP budget)) and the noisy measurement
    /// of `request.measured_query` (default: the reference run's selection), claimed ε₁
    /// (Laplace) or ρ/(2T)-zCDP (Gaussian). The whole run: `T` of each, basic composition.
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        request: &crate::StepRequest,
    ) -> Result<crate::StepDecomposition> {
        use crate::steps::{audited_rounds, check_step_data, one_hot};
        use crate::{AuditedStep, StepComposition, StepDecomposition, StepLoss};
        let t_total = self.plan.rounds;
        let rounds = audited_rounds(&request.rounds, &[1, t_total], t_total)?;
        check_step_data(reference, workload, reference.n())?;
        let n = reference.n();
        let universe = Universe::new(reference.domain(), self.p.universe_cap)?;
        let ref_counts = workload.count_all(reference)?;
        let mut history: Vec<(usize, Vec<f64>)> = Vec::new();
        let mut rng = dp_core::seeded_rng(request.seed);
        let (_, _, trace) = self.run_rounds(
            &universe,
            workload,
            &ref_counts,
            n,
            &mut rng,
            &mut |t, synth| {
                if rounds.contains(&t) {
                    history.push((t, synth.to_vec()));
                }
            },
        )?;
        let em = self.selection()?;
        let eps1 = self.plan.select_epsilon;
        let (sel_accounted, meas_loss) = match (self.plan.loss, self.plan.measurement) {
            (PrivacyLoss::Zcdp { rho }, _) => (
                em.zcdp_privacy(),
                PrivacyLoss::zcdp(rho / (2.0 * t_total as f64))?,
            ),
            (_, MwemMeasurement::Laplace { .. }) => {
                (PrivacyLoss::pure(eps1)?, PrivacyLoss::pure(eps1)?)
            }
            (loss, m) => {
                return Err(MechanismError::Numerical {
                    what: format!("MWEM plan with loss {loss} and measurement {m:?}"),
                });
            }
        };
        let m = workload.num_queries();
        let meas_primitive = match self.plan.measurement {
            MwemMeasurement::Laplace { scale } => crate::StepPrimitive::DiscreteLaplace {
                scale: DiscreteLaplace::new(scale)?.scale(),
                sensitivity: counting_query_sensitivity(Neighbouring::ReplaceOne),
            },
            MwemMeasurement::Gaussian { sigma2 } => crate::StepPrimitive::DiscreteGaussian {
                sigma2: DiscreteGaussian::new(sigma2)?.sigma2(),
                sensitivity: counting_query_sensitivity(Neighbouring::ReplaceOne),
            },
        };
        let mut steps = Vec::new();
        for (t, synth) in history {
            let (mech, w, synth2) = (self.clone(), workload.clone(), synth.clone());
            steps.push(
                AuditedStep::new(
                    format!("mwem round {t}: {} selection", em.name()),
                    PrivacyLoss::pure(eps1)?,
                    sel_accounted,
                    (0..m).map(|q| format!("selected q{q}")).collect(),
                    Box::new(move |data, rng| {
                        check_step_data(data, &w, n)?;
                        let counts = w.count_all(data)?;
                        let q = select_query(&mech.selection()?, &counts, n, &synth2, rng)?;
                        Ok(one_hot(q, counts.len()))
                    }),
                )
                .with_primitive(crate::StepPrimitive::Selection {
                    selector: em.clone(),
                    candidates: m,
                }),
            );
            let q = request
                .measured_query
                .unwrap_or(trace.selected[t - 1])
                .min(m.saturating_sub(1));
            let (w, measurement) = (workload.clone(), self.plan.measurement);
            steps.push(
                AuditedStep::new(
                    format!("mwem round {t}: noisy measurement of q{q}"),
                    meas_loss,
                    meas_loss,
                    vec![format!("noisy count of q{q}")],
                    Box::new(move |data, rng| {
                        check_step_data(data, &w, n)?;
                        let counts = w.count_all(data)?;
                        let noise = MeasurementNoise::new(&measurement)?;
                        Ok(vec![measure(&counts, q, &noise, rng) as f64])
                    }),
                )
                .with_primitive(meas_primitive.clone()),
            );
        }
        Ok(StepDecomposition {
            rounds: rounds.clone(),
            steps,
            losses: vec![
                StepLoss {
                    what: format!("{} selections, rounds 1..={t_total}", em.name()),
                    count: t_total as u64,
                    loss: sel_accounted,
                },
                StepLoss {
                    what: format!("noisy measurements, rounds 1..={t_total}"),
                    count: t_total as u64,
                    loss: meas_loss,
                },
            ],
            composition: StepComposition::Basic,
            accounting: self.plan.loss,
        })
    }
}
