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
//! * **Pure** budget ε: each round spends `ε/(2T)` on selection (exact permute-and-flip,
//!   `dp_core::ExponentialMechanism`) and `ε/(2T)` on the measurement — discrete Laplace of
//!   scale `2T/ε` on the count. Total ε by basic composition.
//! * **zCDP** budget ρ (or (ε, δ), converted to the largest ρ whose tight conversion fits):
//!   each round spends `ρ/(2T)` on selection — the exponential mechanism at `ε₁ = 2√(ρ/T)` is
//!   `ε₁²/8 = ρ/(2T)`-zCDP (bounded range, Cesar–Rogers 2021) — and `ρ/(2T)` on the
//!   measurement: discrete Gaussian of variance `σ² = T/ρ` (`Δ²/(2σ²) = ρ/(2T)` with Δ = 1).
//!   Total ρ by zCDP composition.

use std::time::Instant;

use dp_core::{
    DiscreteGaussian, DiscreteLaplace, ExponentialMechanism, Neighbouring, PrivacyLoss,
    rho_for_epsilon_delta,
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
        let n = data.n() as f64;
        let em = ExponentialMechanism::new(
            self.plan.select_epsilon,
            distinguisher_score_sensitivity() as f64,
            false,
        )?;
        let laplace;
        let gauss;
        let mut noise: Box<dyn FnMut(&mut R) -> i64> = match self.plan.measurement {
            MwemMeasurement::Laplace { scale } => {
                laplace = DiscreteLaplace::new(scale)?;
                Box::new(move |r: &mut R| laplace.sample(r))
            }
            MwemMeasurement::Gaussian { sigma2 } => {
                gauss = DiscreteGaussian::new(sigma2)?;
                Box::new(move |r: &mut R| gauss.sample(r))
            }
        };
        let mut supports = CellSupports::new(&universe, workload)?;
        let mut dist = UniverseDistribution::uniform(universe.len())?;
        let mut average = vec![0.0f64; universe.len()];
        let mut trace = MwemTrace::default();
        let mut measured: Vec<(usize, f64)> = Vec::new();
        for _ in 0..self.plan.rounds {
            let synth = answers_of(&universe, workload, &dist)?;
            let scores: Vec<f64> = counts
                .iter()
                .zip(&synth)
                .map(|(&c, &a)| (c as f64 - n * a).abs())
                .collect();
            let q = em.select(&scores, rng)?;
            let m = counts[q] as i64 + noise(rng);
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

/// The universe elements with positive weight as weighted synthetic records.
pub(crate) fn synthetic_of(universe: &Universe, weights: &[f64]) -> Result<SyntheticData> {
    let idx: Vec<usize> = (0..weights.len()).filter(|&x| weights[x] > 0.0).collect();
    let total: f64 = idx.iter().map(|&x| weights[x]).sum();
    Ok(SyntheticData {
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

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        Ok(self.release_with_trace(data, workload, rng)?.0)
    }
}
