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
//! ## Data access
//!
//! MWEM reads the data only through the workload's exact counts and the public `n` (the
//! scores and the measurements are workload counts): [`Mwem::release_counted`] and
//! [`crate::Mechanism::release_counts`] release from counts streamed or counted by an
//! engine, the same release, draw for draw, as from the records.
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

use std::sync::Arc;

use dp_core::{
    ExponentialMechanism, Neighbouring, PermuteAndFlip, PrivacyLoss, ProgressSink, Selector,
    report_progress, rho_for_epsilon_delta,
};
use dp_queries::{Dataset, MarginalWorkload, Universe};
use rand::CryptoRng;

use super::universe_mw::{CellSupports, UniverseDistribution, answers_of};
use crate::engine::{
    Measured, Measurement, Noise, PublicState, RecordedRound, RoundPlan, StepSource, exact_counts,
    run_rounds,
};
use crate::sensitivity::{
    counting_query_sensitivity, distinguisher_score_sensitivity, distinguisher_scores,
};
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

impl std::fmt::Display for MwemMeasurement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MwemMeasurement::Laplace { scale } => {
                write!(f, "discrete Laplace with scale {scale:.4}")
            }
            MwemMeasurement::Gaussian { sigma2 } => {
                write!(f, "discrete Gaussian with σ² = {sigma2:.4}")
            }
        }
    }
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
                    value: dp_core::Num(rho).to_string(),
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
    progress: Option<ProgressSink>,
}

impl MwemParams {
    /// The default number of rounds T (seed 003 §7's setting).
    pub const DEFAULT_ROUNDS: usize = 15;

    /// Defaults: T = [`Self::DEFAULT_ROUNDS`] = 15 rounds (seed 003 §7's setting), 10 MW
    /// passes per round, last distribution, universes up to 2^22 elements.
    pub fn new(budget: PrivacyLoss) -> Self {
        MwemParams {
            budget,
            rounds: Self::DEFAULT_ROUNDS,
            passes: 10,
            output: MwemOutput::Last,
            universe_cap: 1 << 22,
            progress: None,
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
    /// Report the rounds done of T as stage "MWEM rounds" (public: T is fixed before the
    /// release).
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
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
            crate::sensitivity::distinguisher_selector_sensitivity(
                distinguisher_score_sensitivity(),
            ),
        );
        Ok(match self.plan.loss {
            PrivacyLoss::Pure { .. } => Selector::PermuteAndFlip(PermuteAndFlip::new(e, d, false)?),
            _ => Selector::Exponential(ExponentialMechanism::new(e, d, false)?),
        })
    }

    /// One round's engine plan ([`crate::engine::RoundPlan`]): [`Self::selection`],
    /// accounted its pure ε₁ (pure budget) or ε₁²/8-zCDP (zCDP budget), and the
    /// measurement of one count (sensitivity 1) with the plan's noise, ε₁ or ρ/(2T)-zCDP.
    pub fn round_plan(&self) -> Result<RoundPlan> {
        let selector = self.selection()?;
        let t = self.plan.rounds as f64;
        let sensitivity = counting_query_sensitivity(Neighbouring::ReplaceOne);
        let (select_loss, noise, loss) = match (self.plan.loss, self.plan.measurement) {
            (PrivacyLoss::Zcdp { rho }, MwemMeasurement::Gaussian { sigma2 }) => (
                selector.zcdp_privacy(),
                Noise::gaussian(sigma2)?,
                PrivacyLoss::zcdp(rho / (2.0 * t))?,
            ),
            (PrivacyLoss::Pure { .. }, MwemMeasurement::Laplace { scale }) => (
                selector.privacy(),
                Noise::laplace(scale)?,
                PrivacyLoss::pure(self.plan.select_epsilon)?,
            ),
            (loss, m) => {
                return Err(MechanismError::Numerical {
                    what: format!("MWEM plan with loss {loss} and measurement {m}"),
                });
            }
        };
        Ok(RoundPlan {
            selector,
            select_loss,
            measurement: Measurement {
                noise,
                measured: Measured::Count { sensitivity },
                loss,
            },
        })
    }

    /// The `T` rounds on `exact` counts of `n` records, on the engine's runner
    /// ([`crate::engine::run_rounds`]) with MWEM's public state: returns the last
    /// distribution, the average of the `A_t` (zeros unless [`MwemOutput::Average`]) and
    /// the trace. `observe(t, synth)` sees the synthetic answers `q(A_{t−1})` at the start
    /// of round `t` (1-based): the public history of that round's steps.
    fn run_rounds<R: rand::Rng + CryptoRng + ?Sized>(
        &self,
        universe: &Universe,
        workload: &MarginalWorkload,
        exact: &[i64],
        n_records: usize,
        rng: &mut R,
        observe: &mut dyn FnMut(usize, &[f64]),
    ) -> Result<(UniverseDistribution, Vec<f64>, MwemTrace)> {
        let mut state = MwemState {
            universe,
            workload,
            supports: CellSupports::new(universe, workload)?,
            dist: UniverseDistribution::uniform(universe.len())?,
            measured: Vec::new(),
            n: n_records as f64,
            passes: self.p.passes,
            average: (self.p.output == MwemOutput::Average)
                .then(|| (vec![0.0f64; universe.len()], self.plan.rounds as f64)),
        };
        let rounds = run_rounds(
            &mut state,
            &self.round_plan()?,
            self.plan.rounds,
            exact,
            &|c, a| distinguisher_scores(c.iter().map(|&v| v as f64), n_records, a),
            rng,
            observe,
        )?;
        let trace = MwemTrace {
            selected: rounds.iter().map(|r| r.0).collect(),
            noisy_counts: rounds.iter().map(|r| r.1).collect(),
        };
        let average = match state.average {
            Some((average, _)) => average,
            None => vec![0.0f64; universe.len()],
        };
        Ok((state.dist, average, trace))
    }

    /// The checks of a release that need only public inputs ([`Mechanism::check_inputs`]),
    /// run by the release before it reads the data: the explicit universe of the workload's
    /// domain within the cap (returned) and the per-round plan.
    fn public_checks(&self, workload: &MarginalWorkload) -> Result<Universe> {
        let universe = Universe::new(workload.domain(), self.p.universe_cap)?;
        self.round_plan()?;
        Ok(universe)
    }

    /// Release plus the trace of selections and measurements: the data's domain checked,
    /// the workload counted, then [`Self::release_counted`].
    pub fn release_with_trace<R: rand::Rng + CryptoRng + ?Sized>(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut R,
    ) -> Result<(Release, MwemTrace)> {
        if data.domain() != workload.domain() {
            return Err(MechanismError::Data {
                reason: "the data's domain is not the workload's".into(),
            });
        }
        let universe = self.public_checks(workload)?;
        let counts = workload.count_all(data)?;
        self.run_counted(&universe, &counts, data.n(), workload, rng)
    }

    /// [`Self::release_with_trace`] from the exact counts of the workload's tables
    /// (workload order, as [`MarginalWorkload::count_all`] gives them) of a dataset of the
    /// public `n` records: MWEM reads the data only through these counts (its scores and
    /// measurements are workload counts), so this is the same release, draw for draw, as
    /// from the records.
    ///
    /// Errors: as the release, and counts of the wrong length or whose tables do not each
    /// count `n` records.
    pub fn release_counted<R: rand::Rng + CryptoRng + ?Sized>(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut R,
    ) -> Result<(Release, MwemTrace)> {
        let universe = self.public_checks(workload)?;
        self.run_counted(&universe, counts, n, workload, rng)
    }

    /// The release from checked public inputs and the counts (the one path of both).
    fn run_counted<R: rand::Rng + CryptoRng + ?Sized>(
        &self,
        universe: &Universe,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut R,
    ) -> Result<(Release, MwemTrace)> {
        crate::counts::check_marginal_counts(counts, n, workload)?;
        let exact = exact_counts(counts)?;
        let (total, sink) = (self.plan.rounds, self.p.progress.as_ref());
        // round t starts with t − 1 rounds done; only the round index is reported
        let (dist, average, trace) =
            self.run_rounds(universe, workload, &exact, n, rng, &mut |t, _| {
                report_progress(sink, "MWEM rounds", t - 1, total)
            })?;
        report_progress(sink, "MWEM rounds", total, total);
        let weights = match self.p.output {
            MwemOutput::Last => dist.probabilities(),
            MwemOutput::Average => average,
        };
        let final_dist = UniverseDistribution::from_weights(weights.clone())?;
        let answers = answers_of(universe, workload, &final_dist)?;
        let synthetic = synthetic_of(universe, &weights)?;
        let release = Release {
            answers,
            synthetic: Some(synthetic),
            certificate: self.certificate(),
            diagnostics: Diagnostics {
                iterations: Some(self.plan.rounds),
                notes: vec![format!(
                    "MWEM: T = {}, {} MW passes, selection ε₁ = {:.4e} per round, measurement {}, |X| = {}",
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

/// MWEM's public state (HLM 2012 §3.3, practical variant): the distribution `A` over the
/// universe, the measurements so far, and the running average of the `A_t` (when
/// released). Updated only from noisy measurements.
struct MwemState<'a> {
    universe: &'a Universe,
    workload: &'a MarginalWorkload,
    supports: CellSupports<'a>,
    dist: UniverseDistribution,
    /// `(query, m_i / n)` of every round so far.
    measured: Vec<(usize, f64)>,
    n: f64,
    passes: usize,
    /// The running average and `T`.
    average: Option<(Vec<f64>, f64)>,
}

impl PublicState for MwemState<'_> {
    fn answers(&self) -> Result<Vec<f64>> {
        answers_of(self.universe, self.workload, &self.dist)
    }

    /// `passes` multiplicative-weights passes over every measurement so far,
    /// `A(x) ∝ A(x)·exp(q_i(x)·(m_i − n·q_i(A))/(2n))`.
    fn absorb(&mut self, candidate: usize, noisy: &[i64]) -> Result<()> {
        let m = *noisy.first().ok_or_else(|| MechanismError::Numerical {
            what: "an empty MWEM measurement".into(),
        })?;
        self.measured.push((candidate, m as f64 / self.n));
        for _ in 0..self.passes {
            for &(q, mhat) in &self.measured {
                let sup = self.supports.support(q);
                let a = self.dist.mass(sup);
                self.dist.multiply(sup, (mhat - a) / 2.0);
            }
        }
        self.dist.renormalize();
        if let Some((average, t)) = &mut self.average {
            for (acc, p) in average.iter_mut().zip(self.dist.probabilities()) {
                *acc += p / *t;
            }
        }
        Ok(())
    }
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

    fn works_over_a_universe(&self) -> bool {
        true
    }

    fn certificate(&self) -> PrivacyCertificate {
        PrivacyCertificate {
            mechanism: "mwem".into(),
            loss: self.plan.loss,
            model: crate::PrivacyModel::Central {
                neighbouring: Neighbouring::ReplaceOne,
            },
            approx_equivalent: self.plan.approx_equivalent,
        }
    }

    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }

    /// The universe size limit and the round plan (n is not needed).
    fn check_inputs(&self, workload: &MarginalWorkload, _public_n: Option<usize>) -> Result<()> {
        self.public_checks(workload).map(drop)
    }

    /// The workload's counts are all MWEM reads ([`Mwem::release_counted`]).
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
        Ok(self.release_counted(&counts, n, workload, rng)?.0)
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
    /// (Laplace) or ρ/(2T)-zCDP (Gaussian), built by the engine's
    /// [`crate::engine::StepSource`]. The whole run: `T` of each, basic composition.
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        request: &crate::StepRequest,
    ) -> Result<crate::StepDecomposition> {
        use crate::steps::{audited_rounds, check_step_data};
        use crate::{StepComposition, StepDecomposition};
        let t_total = self.plan.rounds;
        let rounds = audited_rounds(&request.rounds, &[1, t_total], t_total)?;
        check_step_data(reference, workload, reference.n())?;
        let (n, m) = (reference.n(), workload.num_queries());
        let universe = Universe::new(reference.domain(), self.p.universe_cap)?;
        let w = workload.clone();
        let counts_of: crate::engine::CountsOf =
            Arc::new(move |data| exact_counts(&w.count_all(data)?));
        let plan = self.round_plan()?;
        let mut recorded = Vec::new();
        let mut rng = dp_core::seeded_rng(request.seed);
        let (_, _, trace) = self.run_rounds(
            &universe,
            workload,
            &counts_of(reference)?,
            n,
            &mut rng,
            &mut |t, synth| {
                if rounds.contains(&t) {
                    recorded.push(RecordedRound {
                        round: t,
                        history: synth.to_vec(),
                        plan: plan.clone(),
                        selectable: (0..m).collect(),
                        selected: 0,
                    });
                }
            },
        )?;
        for r in &mut recorded {
            r.selected = trace.selected[r.round - 1];
        }
        let source = StepSource::counting_queries("mwem", workload, n, m, counts_of);
        Ok(StepDecomposition {
            rounds,
            steps: source.round_steps(reference, request, recorded)?,
            losses: plan
                .losses(&format!("rounds 1..={t_total}"), t_total as u64)
                .into(),
            composition: StepComposition::Basic,
            accounting: self.plan.loss,
        })
    }
}
