//! The select–measure–update engine of dpqr's adaptive mechanisms: MWEM (Hardt, Ligett and
//! McSherry 2012), the Iterative Construction with multiplicative weights (seed 001, Roth
//! 2011, Algorithm 1), the chaining mechanism for worst-case error (seed 004 §4.3) and
//! adaptive projection (AIM's rounds, McKenna et al. 2022). Every round of each is
//!
//! 1. **select** a candidate (a counting query or a marginal table) privately, from scores
//!    computed from the exact counts and the public state ([`select`]);
//! 2. **measure** the candidate's exact counts with discrete noise ([`measure`]);
//! 3. **update** the public state with the noisy measurement ([`PublicState::absorb`]) —
//!    post-processing of the noisy outputs only.
//!
//! Steps 1 and 2 are the only ones that read the data. They are written here once, and the
//! release and the step audit ([`crate::steps`]) both call them. A round's randomness is
//! described by its [`RoundPlan`] (selector, measurement noise and their losses).
//! [`run_rounds`] is the loop of the mechanisms that run a fixed number of rounds at one
//! plan (MWEM; every level of the chaining mechanism for worst-case error); IC-MW (its 3α/4
//! stop, seed 001 Algorithm 1) and adaptive projection (annealed per-round plans under a
//! [`ZcdpFilter`]) keep their own loops around the same two functions. [`StepSource`]
//! builds the audited steps of recorded rounds for all four. The score formulas stay where
//! their sensitivities are derived ([`crate::sensitivity`], the mechanism); DualQuery (seed
//! 003, a different game: its player samples queries rather than selecting one) is not an
//! engine mechanism.
//!
//! ## Privacy
//!
//! A round is the adaptive composition of its selection and its measurement, each private
//! for every fixed value of the public state before it (a function of earlier noisy
//! outputs only): the selector is ε-DP (the exponential mechanism, McSherry–Talwar 2007,
//! also ε-bounded range and so ε²/8-zCDP, Cesar–Rogers 2021 Lemma 3.2; permute-and-flip,
//! McKenna–Sheldon 2020, ε-DP and ε²/2-zCDP), and the measurement is discrete Laplace
//! (pure) or discrete Gaussian (zCDP; Canonne, Kamath and Steinke 2020) noise calibrated to
//! the candidate's count sensitivity. The mechanism's guarantee is the composition of the
//! per-step losses ([`RoundPlan::losses`]), which the step audit checks against the
//! certificate.
//!
//! ## The filter (fully adaptive composition)
//!
//! An adaptive mechanism may choose round `t`'s budget `ρ_t` from the public history —
//! AIM's annealing doubles the selection ε and halves the measurement σ when the estimate
//! stops improving — and stop when the total is used. Such a sequence is ρ-zCDP as long as
//! `Σ_t ρ_t ≤ ρ` holds on every run: zCDP is Rényi DP of every order α with ε(α) = ρα, and
//! the **Rényi filter** (Feldman and Zrnic, "Individual Privacy Accounting via a Rényi
//! Filter", NeurIPS 2021, Thm 3.1) certifies adaptively chosen Rényi losses at one order
//! whose sum never exceeds the cap; applied at every order α with cap ρα it gives ρ-zCDP.
//! [`ZcdpFilter`] enforces the cap before any noise of a round is drawn (a refused round
//! draws nothing), with `dp_core::Ledger`'s outward rounding.

use std::sync::Arc;

use dp_core::{DiscreteGaussian, DiscreteLaplace, Ledger, Neighbouring, PrivacyLoss, Selector};
use dp_queries::{Dataset, Domain, MarginalWorkload};
use rand::{CryptoRng, Rng};

use crate::exact_audit::StepPrimitive;
use crate::sensitivity::distinguisher_scores;
use crate::steps::{AuditedStep, StepLoss, StepRequest, check_step_data_under, one_hot};
use crate::{MechanismError, Result};

/// A zCDP privacy filter: adaptively chosen spends, refused once their sum would exceed ρ
/// (module docs; Feldman–Zrnic 2021). A thin wrapper of [`dp_core::Ledger`] with a ρ budget.
#[derive(Clone, Debug)]
pub struct ZcdpFilter {
    ledger: Ledger,
    rho: f64,
}

impl ZcdpFilter {
    /// A filter with total ρ for `neighbouring`.
    pub fn new(rho: f64, neighbouring: Neighbouring) -> Result<Self> {
        let budget = PrivacyLoss::zcdp(rho)?;
        Ok(ZcdpFilter {
            ledger: Ledger::with_neighbouring(budget, neighbouring),
            rho,
        })
    }

    /// ρ spent so far (rounded up).
    pub fn spent(&self) -> f64 {
        match self.ledger.spent() {
            Ok(PrivacyLoss::Zcdp { rho }) => rho,
            _ => self.rho,
        }
    }

    /// ρ left (rounded down; 0 when exhausted).
    pub fn remaining(&self) -> f64 {
        (self.rho - self.spent()).next_down().max(0.0)
    }

    /// Record `rho` under `label`, or refuse it ([`dp_core::CoreError::BudgetExceeded`]) and
    /// record nothing.
    pub fn spend(&mut self, label: &str, rho: f64) -> Result<()> {
        Ok(self.ledger.spend(label, PrivacyLoss::zcdp(rho)?)?)
    }

    /// Whether `rho` more would fit.
    pub fn fits(&self, rho: f64) -> bool {
        PrivacyLoss::zcdp(rho)
            .ok()
            .is_some_and(|l| self.ledger.can_spend(&l).is_ok())
    }
}

/// The noise of a measurement, in count units: dp-core's exact samplers (discrete Laplace;
/// discrete Gaussian, Canonne–Kamath–Steinke 2020).
#[derive(Clone, Debug)]
pub enum Noise {
    /// Discrete Laplace (pure ε-DP accounting).
    Laplace(DiscreteLaplace),
    /// Discrete Gaussian (zCDP accounting).
    Gaussian(DiscreteGaussian),
}

impl Noise {
    /// Discrete Laplace noise of scale `scale` (pmf ∝ e^{−|x|/scale}).
    pub fn laplace(scale: f64) -> Result<Self> {
        Ok(Noise::Laplace(DiscreteLaplace::new(scale)?))
    }

    /// Discrete Gaussian noise of variance parameter `sigma2`.
    pub fn gaussian(sigma2: f64) -> Result<Self> {
        Ok(Noise::Gaussian(DiscreteGaussian::new(sigma2)?))
    }

    /// `"Laplace"` or `"Gaussian"` (for step labels).
    pub fn name(&self) -> &'static str {
        match self {
            Noise::Laplace(_) => "Laplace",
            Noise::Gaussian(_) => "Gaussian",
        }
    }
}

/// What one measurement covers, and how much one record can move it (from
/// [`crate::sensitivity`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measured {
    /// One count; neighbours' counts differ by at most `sensitivity`.
    Count {
        /// The count's sensitivity.
        sensitivity: u64,
    },
    /// A table of counts; neighbours' tables differ by one in at most `changed_cells` cells.
    Table {
        /// Cells that differ between neighbours.
        changed_cells: u64,
    },
}

/// A measurement's plan: its noise, what it covers and its loss.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The noise added to every exact count.
    pub noise: Noise,
    /// One count or a table.
    pub measured: Measured,
    /// The measurement's loss in the mechanism's accounting (its claim in the step audit).
    pub loss: PrivacyLoss,
}

impl Measurement {
    /// The step primitive of the exact divergence audit ([`crate::exact_audit`]) with the
    /// release's parameters; `None` for a Laplace table (no mechanism has one).
    pub fn primitive(&self) -> Option<StepPrimitive> {
        match (&self.noise, self.measured) {
            (Noise::Laplace(l), Measured::Count { sensitivity }) => {
                Some(StepPrimitive::DiscreteLaplace {
                    scale: l.scale(),
                    sensitivity,
                })
            }
            (Noise::Gaussian(g), Measured::Count { sensitivity }) => {
                Some(StepPrimitive::DiscreteGaussian {
                    sigma2: g.sigma2(),
                    sensitivity,
                })
            }
            (Noise::Gaussian(g), Measured::Table { changed_cells }) => {
                Some(StepPrimitive::DiscreteGaussianTable {
                    sigma2: g.sigma2(),
                    changed_cells,
                })
            }
            (Noise::Laplace(_), Measured::Table { .. }) => None,
        }
    }
}

/// One round's plan: the selector, the selection's share in the mechanism's accounting, and
/// the measurement (module docs).
#[derive(Clone, Debug)]
pub struct RoundPlan {
    /// The selector with its ε and score sensitivity (its claim is its pure ε).
    pub selector: Selector,
    /// The selection's share in the accounting: its pure ε under pure budgets, its zCDP
    /// charge (ε²/8 for the exponential mechanism) under zCDP ones.
    pub select_loss: PrivacyLoss,
    /// The measurement.
    pub measurement: Measurement,
}

impl RoundPlan {
    /// The whole-run loss entries of `count` rounds at this plan (selection, measurement),
    /// described as `what`.
    pub fn losses(&self, what: &str, count: u64) -> [StepLoss; 2] {
        [
            StepLoss {
                what: format!("{what}: {} selections", self.selector.name()),
                count,
                loss: self.select_loss,
            },
            StepLoss {
                what: format!("{what}: {} measurements", self.measurement.noise.name()),
                count,
                loss: self.measurement.loss,
            },
        ]
    }
}

/// **The selection step** of every engine mechanism: the selector (exponential mechanism or
/// permute-and-flip, exact sampling in dp-core) on the candidates' `scores`, which the
/// caller computed from the exact counts and the public state. Called by the release and
/// by the step audit.
pub fn select<R: Rng + CryptoRng + ?Sized>(
    selector: &Selector,
    scores: &[f64],
    rng: &mut R,
) -> Result<usize> {
    Ok(selector.select(scores, rng)?)
}

/// **The measurement step** of every engine mechanism: the selected candidate's `exact`
/// counts (one count or a table) plus independent `noise` per count, in order. Called by
/// the release and by the step audit.
pub fn measure<R: Rng + CryptoRng + ?Sized>(
    exact: &[i64],
    noise: &Noise,
    rng: &mut R,
) -> Result<Vec<i64>> {
    let mut v = exact.to_vec();
    match noise {
        Noise::Laplace(l) => l.add_noise(&mut v, rng)?,
        Noise::Gaussian(g) => g.add_noise(&mut v, rng)?,
    }
    Ok(v)
}

/// Exact counts as the signed integers [`measure`] adds noise to.
pub fn exact_counts(counts: &[u64]) -> Result<Vec<i64>> {
    counts
        .iter()
        .map(|&c| {
            i64::try_from(c).map_err(|_| MechanismError::Numerical {
                what: format!("count {c} does not fit in i64"),
            })
        })
        .collect()
}

/// The public state of an engine mechanism (seed 001 Def. 2's data structure): the current
/// estimate's answers on the candidates, and the post-processing update with a noisy
/// measurement. Nothing in it may read the data.
pub trait PublicState {
    /// The current estimate's normalised answers on every candidate.
    fn answers(&self) -> Result<Vec<f64>>;
    /// Absorb the noisy counts `noisy` of candidate `candidate` (post-processing only).
    fn absorb(&mut self, candidate: usize, noisy: &[i64]) -> Result<()>;
}

/// The candidates' scores from their exact counts and the public state's answers.
pub type ScoreFn<'a> = dyn Fn(&[i64], &[f64]) -> Vec<f64> + 'a;

/// The most rounds whose trace [`run_rounds`] reserves before running (more are grown).
pub(crate) const PREALLOCATED_ROUNDS: usize = 1 << 12;

/// The runner of the fixed-round engine mechanisms (MWEM; each level of the chaining
/// mechanism for worst-case error): `rounds` rounds at `plan` over counting-query
/// candidates with exact counts `exact`. Each round: the state's answers (shown to
/// `observe(t, answers)`, 1-based `t`: the round's public history), `scores(exact,
/// answers)`, [`select`], [`measure`] of the selected count, [`PublicState::absorb`].
/// Returns every round's selection and noisy count.
pub fn run_rounds<S: PublicState + ?Sized, R: Rng + CryptoRng + ?Sized>(
    state: &mut S,
    plan: &RoundPlan,
    rounds: usize,
    exact: &[i64],
    scores: &ScoreFn<'_>,
    rng: &mut R,
    observe: &mut dyn FnMut(usize, &[f64]),
) -> Result<Vec<(usize, i64)>> {
    // grown as the rounds run: reserving a huge public round count up front would abort the
    // process (allocation failure) after a ledger has recorded the spend
    let mut trace = Vec::with_capacity(rounds.min(PREALLOCATED_ROUNDS));
    for t in 1..=rounds {
        let answers = state.answers()?;
        observe(t, &answers);
        let q = select(&plan.selector, &scores(exact, &answers), rng)?;
        let noisy = measure(&exact[q..=q], &plan.measurement.noise, rng)?;
        state.absorb(q, &noisy)?;
        trace.push((q, noisy[0]));
    }
    Ok(trace)
}

/// The scores of a round's selectable candidates on a dataset, given the round's recorded
/// public history.
pub type ScoresOf<H> = Arc<dyn Fn(&Dataset, &H) -> Result<Vec<f64>> + Send + Sync>;

/// The exact counts of one candidate (one count or a table) on a dataset.
pub type ExactOf = Arc<dyn Fn(&Dataset, usize) -> Result<Vec<i64>> + Send + Sync>;

/// Every candidate's exact count on a dataset (counting-query candidates).
pub type CountsOf = Arc<dyn Fn(&Dataset) -> Result<Vec<i64>> + Send + Sync>;

/// One audited round, recorded from the reference run of a step decomposition.
#[derive(Clone, Debug)]
pub struct RecordedRound<H> {
    /// The round (1-based).
    pub round: usize,
    /// The round's public history: what its scores need besides the data.
    pub history: H,
    /// The round's plan.
    pub plan: RoundPlan,
    /// The candidates the selection ranks (indices into [`StepSource::candidates`]), in the
    /// order of the scores.
    pub selectable: Vec<usize>,
    /// The reference run's selection in this round (an index into the candidates).
    pub selected: usize,
}

/// What the audited steps of a mechanism's rounds need besides the recorded rounds: names,
/// the data a runner accepts, and how the scores and the exact counts follow from a
/// dataset. [`Self::round_steps`] is the one step-decomposition builder of the engine
/// mechanisms.
pub struct StepSource<H> {
    /// The label prefix, e.g. `"mwem"` or `"chaining-worst-case level 1"`.
    pub name: String,
    /// Names of all candidates, e.g. `"q3"` or `"[0, 2]"`.
    pub candidates: Vec<String>,
    /// The domain of the data the runners accept.
    pub domain: Domain,
    /// The public record count (checked under replace-one).
    pub n: usize,
    /// The neighbouring relation of the claims.
    pub neighbouring: Neighbouring,
    /// The selectable candidates' scores.
    pub scores: ScoresOf<H>,
    /// A candidate's exact counts.
    pub exact: ExactOf,
}

impl StepSource<Vec<f64>> {
    /// Counting-query candidates (the workload's cells, or a chaining level's increments)
    /// ranked by the distinguisher score `|c_q − n·a_q|` against the recorded answers `a`
    /// of the public state ([`crate::sensitivity::distinguisher_scores`]; MWEM, IC-MW, the
    /// chaining mechanism for worst-case error), replace-one neighbours. `counts_of` gives
    /// every candidate's exact count.
    pub fn counting_queries(
        name: impl Into<String>,
        workload: &MarginalWorkload,
        n: usize,
        count: usize,
        counts_of: CountsOf,
    ) -> Self {
        let c = counts_of.clone();
        StepSource {
            name: name.into(),
            candidates: (0..count).map(|q| format!("q{q}")).collect(),
            domain: workload.domain().clone(),
            n,
            neighbouring: Neighbouring::ReplaceOne,
            scores: Arc::new(move |data, answers| {
                Ok(distinguisher_scores(
                    c(data)?.iter().map(|&v| v as f64),
                    n,
                    answers,
                ))
            }),
            exact: Arc::new(move |data, q| {
                let all = counts_of(data)?;
                let v = all.get(q).ok_or_else(|| MechanismError::InvalidParameter {
                    name: "candidate",
                    value: q.to_string(),
                    reason: format!("only {} candidates", all.len()),
                })?;
                Ok(vec![*v])
            }),
        }
    }
}

impl<H: Send + Sync + 'static> StepSource<H> {
    /// The data check of every runner: the domain, and `n` under replace-one.
    fn checker(&self) -> impl Fn(&Dataset) -> Result<()> + Send + Sync + 'static {
        let (domain, n, rel) = (self.domain.clone(), self.n, self.neighbouring);
        move |data| check_step_data_under(data, &domain, n, rel)
    }

    /// The selection step of `round`: claimed the selector's pure ε, accounted the plan's
    /// selection loss; the runner computes the scores from the data and the recorded
    /// history and calls [`select`], returning the one-hot indicator over the selectable
    /// candidates.
    pub fn selection_step(&self, round: RecordedRound<H>) -> AuditedStep {
        let (check, scores) = (self.checker(), self.scores.clone());
        let selector = round.plan.selector.clone();
        let history = Arc::new(round.history);
        let input: crate::steps::StepInput = {
            let (check, scores, history) = (self.checker(), scores.clone(), history.clone());
            Arc::new(move |data| {
                check(data)?;
                scores(data, &history)
            })
        };
        let m = round.selectable.len();
        AuditedStep::new(
            format!(
                "{} round {}: {} selection",
                self.name,
                round.round,
                selector.name()
            ),
            selector.privacy(),
            round.plan.select_loss,
            round
                .selectable
                .iter()
                .map(|&i| format!("selected {}", self.candidates[i]))
                .collect(),
            Box::new(move |data, rng| {
                check(data)?;
                let s = scores(data, &history)?;
                Ok(one_hot(select(&selector, &s, rng)?, s.len()))
            }),
        )
        .with_neighbouring(self.neighbouring)
        .with_primitive(StepPrimitive::Selection {
            selector: round.plan.selector,
            candidates: m,
        })
        .with_input(input)
    }

    /// A measurement step labelled `label`: candidate `candidate`'s counts measured per
    /// `measurement` by [`measure`], claimed and accounted the measurement's loss. A count
    /// is reported as is, a table with [`table_outputs`]; `reference` gives the table's size.
    pub fn measurement_step(
        &self,
        label: String,
        measurement: &Measurement,
        candidate: usize,
        reference: &Dataset,
    ) -> Result<AuditedStep> {
        let name = &self.candidates[candidate];
        let outputs = match measurement.measured {
            Measured::Count { .. } => vec![format!("noisy count of {name}")],
            Measured::Table { .. } => table_output_names((self.exact)(reference, candidate)?.len()),
        };
        let (check, exact) = (self.checker(), self.exact.clone());
        let (noise, measured) = (measurement.noise.clone(), measurement.measured);
        let input: crate::steps::StepInput = {
            let (check, exact) = (self.checker(), self.exact.clone());
            Arc::new(move |data| {
                check(data)?;
                Ok(exact(data, candidate)?.iter().map(|&v| v as f64).collect())
            })
        };
        let mut step = AuditedStep::new(
            label,
            measurement.loss,
            measurement.loss,
            outputs,
            Box::new(move |data, rng| {
                check(data)?;
                let noisy = measure(&exact(data, candidate)?, &noise, rng)?;
                Ok(match measured {
                    Measured::Count { .. } => noisy.iter().map(|&v| v as f64).collect(),
                    Measured::Table { .. } => table_outputs(&noisy),
                })
            }),
        )
        .with_neighbouring(self.neighbouring)
        .with_input(input);
        if let Some(p) = measurement.primitive() {
            step = step.with_primitive(p);
        }
        Ok(step)
    }

    /// **The step-decomposition builder**: per recorded round, the selection step and the
    /// measurement step (of the reference run's selection, or of selectable candidate
    /// `request.measured_query`, clamped to the last), histories fixed (any fixed history is
    /// valid: every step is private for each). Their runners call [`select`] and
    /// [`measure`], the release's own steps, and refuse other data (`check_step_data`).
    pub fn round_steps(
        &self,
        reference: &Dataset,
        request: &StepRequest,
        rounds: Vec<RecordedRound<H>>,
    ) -> Result<Vec<AuditedStep>> {
        (self.checker())(reference)?;
        let mut steps = Vec::with_capacity(2 * rounds.len());
        for r in rounds {
            let measured = match request.measured_query {
                Some(k) if !r.selectable.is_empty() => r.selectable[k.min(r.selectable.len() - 1)],
                _ => r.selected,
            };
            let label = format!(
                "{} round {}: {} measurement of {}",
                self.name,
                r.round,
                r.plan.measurement.noise.name(),
                self.candidates[measured]
            );
            let measurement = r.plan.measurement.clone();
            steps.push(self.selection_step(r));
            steps.push(self.measurement_step(label, &measurement, measured, reference)?);
        }
        Ok(steps)
    }
}

/// Tables of at most this many cells also report every pairwise difference of noisy counts
/// to the step audit (see [`table_outputs`]).
pub const MAX_PAIR_CELLS: usize = 16;

/// A measured table's noisy counts for the step audit, followed (for small tables) by the
/// differences of every pair of cells. Under replace-one a neighbour moves one count from one
/// cell to another, so the evidence is split between two cells; their difference carries all
/// of it (shift 2, variance 2σ²: exactly the table's `Δ₂²/(2σ²)`), which any single cell does
/// not. Post-processing of the step's output, so a valid audit statistic.
pub fn table_outputs(noisy: &[i64]) -> Vec<f64> {
    let mut out: Vec<f64> = noisy.iter().map(|&v| v as f64).collect();
    if noisy.len() <= MAX_PAIR_CELLS {
        for a in 0..noisy.len() {
            for b in a + 1..noisy.len() {
                out.push((noisy[a] - noisy[b]) as f64);
            }
        }
    }
    out
}

/// The names of [`table_outputs`] for a table of `cells` cells.
fn table_output_names(cells: usize) -> Vec<String> {
    let mut names: Vec<String> = (0..cells)
        .map(|c| format!("noisy count of cell {c}"))
        .collect();
    if cells <= MAX_PAIR_CELLS {
        for a in 0..cells {
            for b in a + 1..cells {
                names.push(format!("cell {a} − cell {b}"));
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_refuses_overspend_and_records_nothing() {
        let mut f = ZcdpFilter::new(1.0, Neighbouring::AddRemove).unwrap();
        f.spend("a", 0.75).unwrap();
        assert!(f.spend("b", 0.5).is_err());
        assert!((f.spent() - 0.75).abs() < 1e-12);
        assert!(f.fits(0.25) && !f.fits(0.3));
        f.spend("c", 0.25).unwrap();
        assert_eq!(f.remaining(), 0.0);
    }

    /// The measurement adds one noise draw per count, in order: a table measured with a
    /// seeded generator equals the counts plus the same sampler's draws from the same seed.
    #[test]
    fn measure_adds_one_draw_per_count_in_order() {
        let g = DiscreteGaussian::new(9.0).unwrap();
        let exact = [5i64, 0, -3, 12];
        let got = measure(
            &exact,
            &Noise::Gaussian(g.clone()),
            &mut dp_core::seeded_rng(4),
        )
        .unwrap();
        let mut rng = dp_core::seeded_rng(4);
        let want: Vec<i64> = exact.iter().map(|&c| c + g.sample(&mut rng)).collect();
        assert_eq!(got, want);
        assert!(exact_counts(&[u64::MAX]).is_err());
        assert_eq!(exact_counts(&[3, 0]).unwrap(), vec![3, 0]);
    }

    #[test]
    fn table_outputs_by_hand() {
        assert_eq!(
            table_outputs(&[3, 1, 4]),
            vec![3.0, 1.0, 4.0, 2.0, -1.0, -3.0]
        );
        assert_eq!(table_output_names(2).len(), 3);
        let big = vec![0i64; MAX_PAIR_CELLS + 1];
        assert_eq!(table_outputs(&big).len(), MAX_PAIR_CELLS + 1);
    }
}
