//! DualQuery (seed 003, Gaboardi, Gallego Arias, Hsu, Roth, Wu, ICML 2014, Algorithm 2).
//!
//! The query-release game (seed 003 §3): the data player picks records, the query player
//! picks queries from a class `𝒬` closed under negation, payoff `A(x, q) = q(D) − q(x)`.
//! DualQuery runs **multiplicative weights for the query player** over `𝒬 = {q_j} ∪ {q̄_j}`
//! and lets the data player best-respond to `s` queries sampled from the current
//! distribution `Qᵗ`, with a non-private solver ([`super::oracle`]). The `T` best
//! responses are the synthetic database.
//!
//! ## Update direction (a pitfall)
//!
//! The query player **maximizes** `A`, so its weights must grow with the payoff:
//! `Q^{t+1}_q ∝ exp(+η·A(xᵗ, q))·Qᵗ_q` — MW on the losses `ℓ = −A`. The printed
//! Algorithm 2 writes `exp(−η A)`, which concentrates the distribution on queries the
//! synthetic data already over-satisfies and makes the best responses diverge; the proof
//! of Thm 4.2 (sampling from `Qᵗ` = exponential mechanism on the score
//! `r(D, q) = Σ_{i<t} (q(D) − q(xⁱ))`, a *maximized* quality score) uses the `+` sign. The
//! privacy analysis is the same for both signs.
//!
//! ## Privacy (replace-one neighbours, `n` public)
//!
//! Sampling one query in round `t` is the exponential mechanism with quality `r(D, q)`,
//! whose sensitivity is `(t − 1)/n` ([`crate::sensitivity::dualquery_score_sensitivity`]),
//! at weight `exp(η·r) = exp(ε′ r / (2Δ))`, so `ε′_t = 2η(t − 1)/n`. Round 1 samples from
//! the uniform distribution (0-DP). With `s` samples per round:
//!
//! * Thm 4.2 (basic composition): `ε = Σ_t s·2η(t−1)/n = ηT(T−1)s/n` —
//!   [`dualquery_pure_epsilon`].
//! * Thm 4.3 (advanced composition, seed 003 Lemma 2.4, `k = s(T−1)` mechanisms of
//!   `ε′ = 2η(T−1)/n` each):
//!   `ε = ε′·[√(2k ln(1/δ)) + k(e^{ε′} − 1)]` — [`dualquery_approx_epsilon`], computed by
//!   `dp_core::advanced_composition`.
//!
//! The data enter only through the sampled query indices; the best responses and the
//! update are post-processing given the samples and the (private) true answers, which
//! enter the next round's sampling distribution — that is what the exponential-mechanism
//! argument accounts for.
//!
//! **Data access**: the true answers are all DualQuery reads of the data, so a release
//! from the workload's exact counts and the public `n` ([`crate::Mechanism::release_counts`]:
//! a stream, an engine) is the release from the records, draw for draw.
//!
//! **Exact sampling**: `Qᵗ` is sampled exactly ([`super::query_sampler`]): the scores are
//! kept as integers (`n·r(D, q)`), η is used as the exact dyadic rational it is, and each
//! sample is a rejection sampler from a dyadic envelope whose acceptance coins are exact
//! Bernoulli(exp(−γ)) and Bernoulli(2/e) draws — no floating point touches the sampled
//! distribution, so Thm 4.2/4.3 hold for the algorithm that runs. (Before issue #9 the
//! weights were `f64` and sampled by inverse CDF, which gave probability exactly 0 to
//! every query whose weight fell below 2⁻⁵³ of the total — a data-dependent support.)
//!
//! ## Parameters
//!
//! Two directions (seed 003 §4):
//! * "fix `T, s, η`, report ε" — [`dualquery_pure_epsilon`], [`dualquery_approx_epsilon`];
//!   the paper's experiments fix `η, s` and take the largest `T` within the budget
//!   ([`max_rounds`]).
//! * "fix ε, derive `T, s, η`" (Remark 4.7) — [`TheoryParameters::from_accuracy`] gives
//!   `T = 16 ln|𝒬|/α²`, `η = α/4`, `s = 48 ln(2|𝒳|T/β)/α²` (Algorithm 2) and
//!   [`TheoryParameters::for_budget`] solves Thm 4.3 for the smallest α whose parameters fit
//!   the budget; Thm 4.6 then guarantees max error α with probability `1 − β`.

use std::collections::HashMap;
use std::time::Instant;

use dp_core::{Neighbouring, PrivacyLoss, ProgressSink, advanced_composition, report_progress};
use dp_queries::{
    AnyWorkload, ConjunctionWorkload, Dataset, Domain, MarginalWorkload, QueryKind, Workload,
};
use rand::{CryptoRng, Rng};

use super::ilp::IlpOracle;
use super::oracle::{
    BestResponseOracle, BestResponseProblem, Clause, ClauseKind, ExhaustiveOracle, FreeAttributes,
    MaxCspOracle,
};
use super::query_sampler::{ExactQueryWeights, expected_proposals_bound};
use crate::{
    Diagnostics, Mechanism, MechanismError, PrivacyCertificate, Release, Result, SyntheticData,
};

fn invalid(name: &'static str, value: impl ToString, reason: impl Into<String>) -> MechanismError {
    MechanismError::InvalidParameter {
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn check_common(eta: f64, rounds: usize, samples: usize, n: usize) -> Result<()> {
    if !(eta > 0.0 && eta.is_finite()) {
        return Err(invalid("eta", eta, "must be positive and finite"));
    }
    if rounds == 0 || samples == 0 || n == 0 {
        return Err(invalid(
            "rounds/samples/n",
            format!("{rounds}/{samples}/{n}"),
            "must all be >= 1",
        ));
    }
    Ok(())
}

/// Seed 003 Thm 4.2: DualQuery with `T` rounds, `s` samples per round and step `η` on `n`
/// records is ε-DP for `ε = ηT(T−1)s/n` (rounded up by one ulp per operation).
pub fn dualquery_pure_epsilon(eta: f64, rounds: usize, samples: usize, n: usize) -> Result<f64> {
    check_common(eta, rounds, samples, n)?;
    let t = rounds as f64;
    let e = eta * t * (t - 1.0) * samples as f64 / n as f64;
    Ok(if e == 0.0 { 0.0 } else { e.next_up().next_up() })
}

/// Seed 003 Thm 4.3: the (ε, δ) guarantee of DualQuery by advanced composition of
/// `k = s(T−1)` exponential mechanisms of `ε′ = 2η(T−1)/n` each. `T = 1` is 0-DP
/// (the only round samples from the uniform distribution).
pub fn dualquery_approx_epsilon(
    eta: f64,
    rounds: usize,
    samples: usize,
    n: usize,
    delta: f64,
) -> Result<PrivacyLoss> {
    check_common(eta, rounds, samples, n)?;
    if rounds == 1 {
        return Ok(PrivacyLoss::approx(0.0, delta)?);
    }
    let eps0 = (2.0 * eta * (rounds - 1) as f64 / n as f64).next_up();
    let k = (samples as u64).saturating_mul(rounds as u64 - 1);
    Ok(advanced_composition(eps0, 0.0, k, delta)?)
}

/// The guarantee of `T` rounds in the accounting of `budget`'s kind: pure (Thm 4.2) for a
/// `Pure` budget, (ε, δ) (Thm 4.3) at the budget's δ for an `Approx` budget.
pub fn dualquery_loss(
    eta: f64,
    rounds: usize,
    samples: usize,
    n: usize,
    budget: &PrivacyLoss,
) -> Result<PrivacyLoss> {
    match *budget {
        PrivacyLoss::Pure { .. } => Ok(PrivacyLoss::pure(dualquery_pure_epsilon(
            eta, rounds, samples, n,
        )?)?),
        PrivacyLoss::Approx { delta, .. } if delta > 0.0 => {
            dualquery_approx_epsilon(eta, rounds, samples, n, delta)
        }
        // δ = 0: the pure bound.
        PrivacyLoss::Approx { .. } => Ok(PrivacyLoss::pure(dualquery_pure_epsilon(
            eta, rounds, samples, n,
        )?)?),
        PrivacyLoss::Zcdp { rho } => Err(invalid(
            "budget",
            format!("rho = {rho}"),
            "DualQuery is accounted in pure ε or (ε, δ) (Gaboardi et al. 2014, Thm 4.2/4.3); \
             give --epsilon [--delta]",
        )),
    }
}

/// Whether `loss` (of the same kind as `budget`) fits in `budget`.
fn fits(loss: &PrivacyLoss, budget: &PrivacyLoss) -> bool {
    match (loss, budget) {
        (PrivacyLoss::Pure { epsilon: a }, PrivacyLoss::Pure { epsilon: b }) => a <= b,
        (PrivacyLoss::Pure { epsilon: a }, PrivacyLoss::Approx { epsilon: b, .. }) => a <= b,
        (
            PrivacyLoss::Approx {
                epsilon: a,
                delta: da,
            },
            PrivacyLoss::Approx {
                epsilon: b,
                delta: db,
            },
        ) => a <= b && da <= db,
        _ => false,
    }
}

/// The largest number of rounds `T` (≥ 1, at most `cap`) whose guarantee with step `eta`
/// and `samples` per round fits `budget` (the paper's tuning: fix η and s, vary T with ε).
pub fn max_rounds(
    eta: f64,
    samples: usize,
    n: usize,
    budget: &PrivacyLoss,
    cap: usize,
) -> Result<usize> {
    let ok = |t: usize| -> Result<bool> {
        Ok(fits(&dualquery_loss(eta, t, samples, n, budget)?, budget))
    };
    if cap == 0 {
        return Err(invalid("rounds cap", 0, "must be >= 1"));
    }
    // ε grows with T: binary search the last T that fits.
    let (mut lo, mut hi) = (1usize, cap);
    if ok(hi)? {
        return Ok(hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The parameters of Algorithm 2 for a target accuracy (seed 003 §4, Remark 4.7).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TheoryParameters {
    /// Target maximum error α.
    pub alpha: f64,
    /// Failure probability β.
    pub beta: f64,
    /// `T = ⌈16 ln|𝒬| / α²⌉`.
    pub rounds: usize,
    /// `η = α/4`.
    pub eta: f64,
    /// `s = ⌈48 ln(2|𝒳|T/β) / α²⌉`.
    pub samples: usize,
}

impl TheoryParameters {
    /// Algorithm 2's `T, η, s` for accuracy `alpha ∈ (0, 1)`, failure probability
    /// `beta ∈ (0, 1)`, `num_queries = |𝒬|` (negations included) and `ln_universe = ln|𝒳|`.
    pub fn from_accuracy(
        alpha: f64,
        beta: f64,
        num_queries: usize,
        ln_universe: f64,
    ) -> Result<Self> {
        if !(0.0 < alpha && alpha < 1.0 && 0.0 < beta && beta < 1.0)
            || alpha.is_nan()
            || beta.is_nan()
        {
            return Err(invalid(
                "alpha/beta",
                format!("{alpha}/{beta}"),
                "must be in (0, 1)",
            ));
        }
        if num_queries < 2 || !(ln_universe >= 0.0 && ln_universe.is_finite()) {
            return Err(invalid(
                "num_queries/ln_universe",
                format!("{num_queries}/{ln_universe}"),
                "need |Q| >= 2 and a finite ln|X| >= 0",
            ));
        }
        let a2 = alpha * alpha;
        let t = (16.0 * (num_queries as f64).ln() / a2).ceil();
        let s = (48.0 * (2.0f64.ln() + ln_universe + t.ln() - beta.ln()) / a2).ceil();
        if !(t < 1e15 && s < 1e15) {
            return Err(invalid(
                "alpha",
                alpha,
                "gives more than 1e15 rounds or samples",
            ));
        }
        Ok(TheoryParameters {
            alpha,
            beta,
            rounds: (t as usize).max(1),
            eta: alpha / 4.0,
            samples: (s as usize).max(1),
        })
    }

    /// "Fix ε, derive T, s, η" (Remark 4.7): the smallest α (to 1e-4 relative, by bisection)
    /// whose Algorithm-2 parameters are within `budget` (pure: Thm 4.2, (ε, δ): Thm 4.3) on
    /// `n` records. Errors if even α just below 1 does not fit.
    pub fn for_budget(
        budget: &PrivacyLoss,
        n: usize,
        beta: f64,
        num_queries: usize,
        ln_universe: f64,
    ) -> Result<Self> {
        let fits_alpha = |alpha: f64| -> Result<Option<Self>> {
            let p = Self::from_accuracy(alpha, beta, num_queries, ln_universe)?;
            let l = dualquery_loss(p.eta, p.rounds, p.samples, n, budget)?;
            Ok(fits(&l, budget).then_some(p))
        };
        let mut hi = 0.999;
        let Some(mut best) = fits_alpha(hi)? else {
            return Err(invalid(
                "budget",
                budget.to_string(),
                format!("no α < 1 makes Algorithm 2's parameters fit on n = {n} records"),
            ));
        };
        let mut lo = 1e-6;
        while hi / lo > 1.0001 {
            let mid = (lo * hi).sqrt();
            match fits_alpha(mid)? {
                Some(p) => {
                    hi = mid;
                    best = p;
                }
                None => lo = mid,
            }
        }
        Ok(best)
    }
}

/// Settings of one DualQuery run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQueryConfig {
    /// Step size η.
    pub eta: f64,
    /// Samples per round s.
    pub samples: usize,
    /// Rounds T (= synthetic records).
    pub rounds: usize,
    /// How free attributes are set.
    pub free: FreeAttributes,
}

/// What a DualQuery run produced.
#[derive(Clone, Debug)]
pub struct DualQueryOutput {
    /// The `T` best responses: the synthetic database (uniform weights).
    pub records: Vec<Vec<u32>>,
    /// Rounds whose best response the oracle proved optimal (a function of the sampled
    /// queries and the oracle's seed: post-processing of the private samples).
    pub provably_optimal_rounds: usize,
    /// What the run cost. **Not private**: see [`DualQueryCost`].
    pub cost: DualQueryCost,
}

/// The measured cost of a DualQuery run, for benchmarking the algorithm on public data.
///
/// **Not private: never publish it.** Every field depends on the private data beyond the
/// query samples the privacy proof covers: the proposal count through the envelope buckets
/// of `Qᵗ` (issue #23 measured ε ≥ 2.45 leaked through it against a claimed 0.075), the
/// timings through the same count and the size of the data. The [`DualQuery`] mechanism
/// keeps it out of its [`Release`]: its note states the public bound
/// [`super::query_sampler::expected_proposals_bound`] instead.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DualQueryCost {
    /// Proposals of the exact rejection sampler over all `T·s` query samples
    /// ([`super::query_sampler`]).
    pub proposals: u64,
    /// Seconds spent in the best-response oracle.
    pub oracle_seconds: f64,
    /// Seconds spent sampling and updating the query distribution.
    pub mw_seconds: f64,
}

/// The query classes DualQuery releases, for messages.
const DUALQUERY_CLASSES: &str = "marginals, conjunctions, parities";

/// Runs Algorithm 2 on a workload of queries `q_j` (the class is closed under negation
/// internally: action `j < k` is `q_j`, action `k + j` is `q̄_j`) with the true normalised
/// answers `answers[j] = q_j(D)` of `n` records.
///
/// The answers must be counts divided by `n` as `f64` (`c as f64 / n as f64`, what
/// `answers` of the workload types compute): the counts are recovered exactly and the run
/// is [`dual_query_counts`]. Errors: an answer that is not such a quotient, and the errors
/// of [`dual_query_counts`].
pub fn dual_query<R: Rng + CryptoRng + ?Sized>(
    workload: &ConjunctionWorkload,
    answers: &[f64],
    n: usize,
    config: &DualQueryConfig,
    oracle: &dyn BestResponseOracle,
    rng: &mut R,
) -> Result<DualQueryOutput> {
    check_common(config.eta, config.rounds, config.samples, n)?;
    let nf = n as f64;
    let counts = answers
        .iter()
        .map(|&a| {
            let c = (a * nf).round();
            if (0.0..=nf).contains(&c) && c / nf == a {
                Ok(c as u64)
            } else {
                Err(invalid(
                    "answers",
                    a,
                    format!("normalised answers must be counts / n (n = {n})"),
                ))
            }
        })
        .collect::<Result<Vec<u64>>>()?;
    dual_query_counts(workload, &counts, n, config, oracle, rng)
}

/// Algorithm 2 on the true counts `counts[j] = n·q_j(D)` of `n` records (see
/// [`dual_query`]). Every query sample is drawn exactly from `Qᵗ`
/// ([`super::query_sampler`]).
///
/// Only the query indices drawn from `Qᵗ` touch the data; see the module docs for the
/// guarantee. Errors: bad parameters, `counts` of the wrong length or above `n`, parameters
/// beyond the exact sampler's `u128` range, or an oracle failure.
pub fn dual_query_counts<R: Rng + CryptoRng + ?Sized>(
    workload: &ConjunctionWorkload,
    counts: &[u64],
    n: usize,
    config: &DualQueryConfig,
    oracle: &dyn BestResponseOracle,
    rng: &mut R,
) -> Result<DualQueryOutput> {
    dual_query_reporting(workload, counts, n, config, oracle, rng, None)
}

/// [`dual_query_counts`] reporting the rounds done of `config.rounds` (public: fixed
/// before the run) to `progress` as stage "DualQuery rounds".
fn dual_query_reporting<R: Rng + CryptoRng + ?Sized>(
    workload: &ConjunctionWorkload,
    counts: &[u64],
    n: usize,
    config: &DualQueryConfig,
    oracle: &dyn BestResponseOracle,
    rng: &mut R,
    progress: Option<&ProgressSink>,
) -> Result<DualQueryOutput> {
    check_common(config.eta, config.rounds, config.samples, n)?;
    let k = workload.len();
    if counts.len() != k {
        return Err(invalid(
            "counts",
            counts.len(),
            format!("expected one count per query ({k})"),
        ));
    }
    let sizes = workload.domain().sizes().to_vec();
    let (pos, neg) = clause_kinds(workload.kind())?;
    let mut weights = ExactQueryWeights::new(counts.to_vec(), n as u64, config.eta)?;
    // grown as the rounds run: reserving a huge round count up front would abort the process
    let mut records = Vec::with_capacity(config.rounds.min(crate::engine::PREALLOCATED_ROUNDS));
    let mut optimal = 0usize;
    let mut cost = DualQueryCost::default();
    for t in 0..config.rounds {
        report_progress(progress, "DualQuery rounds", t, config.rounds);
        let start = Instant::now();
        let sampler = weights.sampler()?;
        let mut mult: HashMap<usize, u64> = HashMap::new();
        for _ in 0..config.samples {
            let (q, p) = sampler.sample(rng)?;
            cost.proposals += p;
            *mult.entry(q).or_insert(0) += 1;
        }
        drop(sampler);
        let mut picked: Vec<(usize, u64)> = mult.into_iter().collect();
        picked.sort_unstable();
        let clauses = picked
            .into_iter()
            .map(|(q, w)| Clause {
                literals: workload.query(q % k).to_vec(),
                kind: if q < k { pos } else { neg },
                weight: w,
            })
            .collect();
        let problem = BestResponseProblem::new(sizes.clone(), clauses, config.free)?;
        cost.mw_seconds += start.elapsed().as_secs_f64();
        let start = Instant::now();
        let seed = rng.next_u64();
        let br = oracle.solve(&problem, seed)?;
        cost.oracle_seconds += start.elapsed().as_secs_f64();
        if br.provably_optimal {
            optimal += 1;
        }
        let start = Instant::now();
        if t + 1 < config.rounds {
            // Payoff A(x, q_j) = q_j(D) − q_j(x), A(x, q̄_j) = −A(x, q_j): the scores of the
            // maximizing query player (module docs, "Update direction"), in integers.
            weights.observe(workload, &br.record)?;
        }
        records.push(br.record);
        cost.mw_seconds += start.elapsed().as_secs_f64();
    }
    report_progress(progress, "DualQuery rounds", config.rounds, config.rounds);
    Ok(DualQueryOutput {
        records,
        provably_optimal_rounds: optimal,
        cost,
    })
}

/// The clause kinds of a query and of its negation for the best-response oracles, or the
/// refusal of disjunctions (the oracles solve conjunction and parity clauses only).
fn clause_kinds(kind: QueryKind) -> Result<(ClauseKind, ClauseKind)> {
    match kind {
        QueryKind::Conjunction => Ok((ClauseKind::All, ClauseKind::NotAll)),
        QueryKind::Parity => Ok((ClauseKind::Odd, ClauseKind::Even)),
        QueryKind::Disjunction => Err(MechanismError::UnsupportedQueryClass {
            mechanism: "dualquery",
            class: dp_queries::QueryClass::Disjunctions,
            supported: DUALQUERY_CLASSES.into(),
        }),
    }
}

/// The most assignments the exhaustive oracle can meet in one round on `queries` with
/// `samples` query samples per round, whatever is sampled: a round's clauses come from at
/// most `samples` distinct queries of at most `w` literals each, so they involve at most
/// `samples·w` of the attributes the queries touch; the product of the largest that many
/// sizes (saturating) bounds the oracle's enumeration.
pub(crate) fn exhaustive_worst_case(queries: &ConjunctionWorkload, samples: usize) -> u64 {
    let width = (0..queries.len())
        .map(|q| queries.query(q).len())
        .max()
        .unwrap_or(0);
    let domain = queries.domain();
    let mut sizes: Vec<u64> = Workload::touched_attributes(queries)
        .into_iter()
        .map(|a| u64::from(domain.size(a)))
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes
        .into_iter()
        .take(samples.saturating_mul(width))
        .fold(1u64, u64::saturating_mul)
}

/// The ε of one query sample in round `t` (1-based) of DualQuery on `n` records: the
/// exponential mechanism with weight `exp(η·r)` on a score of sensitivity
/// `Δ = (t − 1)/n` ([`crate::sensitivity::dualquery_score_sensitivity`]) is
/// `2ηΔ`-DP (seed 003 Thm 4.2 proof; rounded up; 0 in round 1).
pub fn dualquery_sample_epsilon(eta: f64, t: usize, n: usize) -> f64 {
    let e = 2.0 * eta * crate::sensitivity::dualquery_score_sensitivity(t, n);
    if e == 0.0 { 0.0 } else { e.next_up() }
}

/// Which best-response oracle the mechanism uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OracleChoice {
    /// Exhaustive when the involved attributes have at most 2^22 assignments, MAX-CSP
    /// otherwise.
    #[default]
    Auto,
    /// Always exhaustive (errors on large instances).
    Exhaustive,
    /// Always the MAX-CSP heuristic.
    MaxCsp,
    /// Always the integer-programming oracle ([`IlpOracle`]: LP-based branch and bound,
    /// conjunction workloads only — parities are refused).
    Ilp,
}

/// Oracle that picks exhaustive enumeration when it is cheap.
struct AutoOracle {
    exhaustive: ExhaustiveOracle,
    maxcsp: MaxCspOracle,
    ilp: IlpOracle,
}

impl BestResponseOracle for AutoOracle {
    fn name(&self) -> &'static str {
        "auto"
    }
    fn solve(&self, problem: &BestResponseProblem, seed: u64) -> Result<BestResponse> {
        let mut count: u64 = 1;
        for &a in problem.involved() {
            count = count.saturating_mul(u64::from(problem.sizes()[a]));
        }
        if count <= self.exhaustive.max_assignments {
            self.exhaustive.solve(problem, seed)
        } else {
            self.maxcsp.solve(problem, seed)
        }
    }
}

use super::oracle::BestResponse;

/// DualQuery as a [`Mechanism`] on marginal workloads: every cell of every table is a
/// conjunction of one-hot bits (plus its negation), the synthetic records are the output.
///
/// Guarantee: the budget (pure ε by Thm 4.2, or (ε, δ) by Thm 4.3), replace-one neighbours;
/// the number of rounds is the largest that fits the budget for the data's `n` (public
/// under replace-one) unless fixed, in which case a release that would exceed the budget is
/// refused before sampling.
#[derive(Clone, Debug)]
pub struct DualQueryParams {
    budget: PrivacyLoss,
    eta: f64,
    samples: usize,
    rounds: Option<usize>,
    max_rounds: usize,
    free: FreeAttributes,
    oracle: OracleChoice,
    progress: Option<ProgressSink>,
}

/// DualQuery's default step size η (seed 003 Fig. 5 regime).
pub const DEFAULT_ETA: f64 = 0.4;

impl DualQueryParams {
    /// The default number of query samples per round s (seed 003 Fig. 5 regime).
    pub const DEFAULT_SAMPLES: usize = 50;
    /// The most rounds T derived from the budget when T is not fixed.
    pub const DEFAULT_MAX_ROUNDS: usize = 2000;

    /// Defaults: η = [`DEFAULT_ETA`] = 0.4, s = [`Self::DEFAULT_SAMPLES`] = 50 (seed 003
    /// Fig. 5 regime), T the largest within the budget (at most
    /// [`Self::DEFAULT_MAX_ROUNDS`] = 2000), random free attributes, automatic oracle.
    pub fn new(budget: PrivacyLoss) -> Self {
        DualQueryParams {
            budget,
            eta: DEFAULT_ETA,
            samples: Self::DEFAULT_SAMPLES,
            rounds: None,
            max_rounds: Self::DEFAULT_MAX_ROUNDS,
            free: FreeAttributes::Random,
            oracle: OracleChoice::Auto,
            progress: None,
        }
    }
    /// Step size η.
    pub fn eta(mut self, eta: f64) -> Self {
        self.eta = eta;
        self
    }
    /// Samples per round s.
    pub fn samples(mut self, s: usize) -> Self {
        self.samples = s;
        self
    }
    /// Fix T (otherwise the largest T within the budget).
    pub fn rounds(mut self, t: usize) -> Self {
        self.rounds = Some(t);
        self
    }
    /// Free-attribute policy.
    pub fn free_attributes(mut self, f: FreeAttributes) -> Self {
        self.free = f;
        self
    }
    /// Oracle choice.
    pub fn oracle(mut self, o: OracleChoice) -> Self {
        self.oracle = o;
        self
    }
    /// Report the rounds done of T as stage "DualQuery rounds" (public: T is fixed from the
    /// parameters, the budget and the public n before the run).
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }
    /// Validates the parameters.
    pub fn check(self) -> Result<DualQuery> {
        let budget = self.budget.validate()?;
        check_common(self.eta, self.rounds.unwrap_or(1), self.samples, 1)?;
        if matches!(budget, PrivacyLoss::Zcdp { .. }) {
            return Err(invalid(
                "budget",
                budget.to_string(),
                "DualQuery needs a pure ε or (ε, δ) budget",
            ));
        }
        Ok(DualQuery { p: self, budget })
    }
}

/// The DualQuery mechanism (build with [`DualQueryParams`]).
#[derive(Clone, Debug)]
pub struct DualQuery {
    p: DualQueryParams,
    budget: PrivacyLoss,
}

impl DualQuery {
    /// The rounds used on `n` records and their exact guarantee.
    pub fn plan(&self, n: usize) -> Result<(usize, PrivacyLoss)> {
        let t = match self.p.rounds {
            Some(t) => t,
            None => max_rounds(
                self.p.eta,
                self.p.samples,
                n,
                &self.budget,
                self.p.max_rounds,
            )?,
        };
        let loss = dualquery_loss(self.p.eta, t, self.p.samples, n, &self.budget)?;
        if !fits(&loss, &self.budget) {
            return Err(invalid(
                "rounds",
                t,
                format!(
                    "spends {loss} on n = {n} records, more than the budget {}",
                    self.budget
                ),
            ));
        }
        Ok((t, loss))
    }
}

impl DualQuery {
    /// The checks of a release on `queries` that need no n (run by
    /// [`Mechanism::check_inputs`] and, through [`Self::checked_plan`], by the release): the
    /// query class, the ILP oracle's clause kinds, and the exhaustive oracle's worst case —
    /// a round whose sampled queries exceed its limit would fail after the budget is spent,
    /// and which queries are sampled is not known before.
    fn check_queries(&self, queries: &ConjunctionWorkload) -> Result<()> {
        let (pos, neg) = clause_kinds(queries.kind())?;
        match self.p.oracle {
            OracleChoice::Ilp if !(IlpOracle::solves(pos) && IlpOracle::solves(neg)) => {
                Err(invalid(
                    "oracle",
                    "ilp",
                    "the workload's queries are parities and the ILP oracle handles \
                     conjunctions and negated conjunctions only; use the automatic or the \
                     MAX-CSP oracle",
                ))
            }
            OracleChoice::Exhaustive => {
                let cap = ExhaustiveOracle::default().max_assignments;
                let worst = exhaustive_worst_case(queries, self.p.samples);
                if worst > cap {
                    return Err(invalid(
                        "oracle",
                        "exhaustive",
                        format!(
                            "a round's {} sampled queries can involve up to {worst} \
                             assignments, more than the exhaustive oracle's limit of {cap}; \
                             whether a round does depends on the sampled queries, so the \
                             release could fail after its budget is spent: use the automatic \
                             oracle (exhaustive within the limit, MAX-CSP above it), the \
                             MAX-CSP or the ILP oracle, or fewer attributes",
                            self.p.samples
                        ),
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// [`Self::check_queries`], then the rounds and their guarantee on `n` records (public
    /// under replace-one neighbours; [`Self::plan`]) and the exact query sampler's
    /// parameters: every check of a release before its first query sample.
    fn checked_plan(
        &self,
        queries: &ConjunctionWorkload,
        n: usize,
    ) -> Result<(usize, PrivacyLoss)> {
        self.check_queries(queries)?;
        let plan = self.plan(n)?;
        ExactQueryWeights::check_parameters(queries.len(), n as u64, self.p.eta)?;
        Ok(plan)
    }

    /// [`Mechanism::check_inputs`] on the queries: [`Self::checked_plan`] with the public n,
    /// [`Self::check_queries`] without it.
    fn check_on(&self, queries: &ConjunctionWorkload, public_n: Option<usize>) -> Result<()> {
        match public_n {
            Some(n) => self.checked_plan(queries, n).map(drop),
            None => self.check_queries(queries),
        }
    }

    /// The oracle of [`DualQueryParams::oracle`] (`auto` holds the concrete ones).
    fn oracle<'a>(&self, auto: &'a AutoOracle) -> &'a dyn BestResponseOracle {
        match self.p.oracle {
            OracleChoice::Auto => auto,
            OracleChoice::Exhaustive => &auto.exhaustive,
            OracleChoice::MaxCsp => &auto.maxcsp,
            OracleChoice::Ilp => &auto.ilp,
        }
    }

    /// The run's settings for `rounds` rounds.
    fn config(&self, rounds: usize) -> DualQueryConfig {
        DualQueryConfig {
            eta: self.p.eta,
            samples: self.p.samples,
            rounds,
            free: self.p.free,
        }
    }
}

impl crate::StepAudited for DualQuery {
    /// Per audited round `t` (default: round 2, the first with a positive loss, and the last
    /// round `T`, whose per-sample ε is the largest): one query sample from `Q_t`, claimed
    /// [`dualquery_sample_epsilon`]`(η, t, n)`, the MW weights rebuilt from the records
    /// `x¹ … x^{t−1}` of a reference run (the fixed history). The whole run: `s` samples per
    /// round, basic (Thm 4.2) or advanced ((ε, δ), Thm 4.3) composition.
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        request: &crate::StepRequest,
    ) -> Result<crate::StepDecomposition> {
        use crate::steps::{audited_rounds, check_step_data, one_hot};
        use crate::{AuditedStep, StepComposition, StepDecomposition, StepLoss};
        check_step_data(reference, workload, reference.n())?;
        let n = reference.n();
        let (t_total, loss) = self.plan(n)?;
        let rounds = audited_rounds(&request.rounds, &[2.min(t_total), t_total], t_total)?;
        let queries = ConjunctionWorkload::from_marginals(workload)?;
        let auto = AutoOracle {
            exhaustive: ExhaustiveOracle::default(),
            maxcsp: MaxCspOracle::default(),
            ilp: IlpOracle::default(),
        };
        let mut rng = dp_core::seeded_rng(request.seed);
        let out = dual_query_counts(
            &queries,
            &workload.count_all(reference)?,
            n,
            &self.config(t_total),
            self.oracle(&auto),
            &mut rng,
        )?;
        let k = queries.len();
        let eta = self.p.eta;
        let mut steps = Vec::new();
        for &t in &rounds {
            let history: Vec<Vec<u32>> = out.records[..t - 1].to_vec();
            let (w, q) = (workload.clone(), queries.clone());
            let e = PrivacyLoss::pure(dualquery_sample_epsilon(eta, t, n))?;
            // the exact audit's primitive and input (issue #23 §2): the sampler's law
            // ∝ exp(η·r) on the normalised scores r = S/n of the fixed history
            let primitive = crate::StepPrimitive::ExponentialWeights {
                eta,
                sensitivity: crate::sensitivity::dualquery_score_sensitivity(t, n),
                candidates: 2 * k,
            };
            let input: crate::StepInput = {
                let (w, q, history) = (w.clone(), q.clone(), history.clone());
                std::sync::Arc::new(move |data: &Dataset| {
                    check_step_data(data, &w, n)?;
                    let mut weights = ExactQueryWeights::new(w.count_all(data)?, n as u64, eta)?;
                    for rec in &history {
                        weights.observe(&q, rec)?;
                    }
                    Ok(weights.normalised_scores())
                })
            };
            steps.push(
                AuditedStep::new(
                    format!("dualquery round {t}: one query sample from Q_t"),
                    e,
                    e,
                    (0..2 * k)
                        .map(|a| {
                            if a < k {
                                format!("sampled q{a}")
                            } else {
                                format!("sampled ¬q{}", a - k)
                            }
                        })
                        .collect(),
                    Box::new(move |data, rng| {
                        check_step_data(data, &w, n)?;
                        let counts = w.count_all(data)?;
                        let mut weights = ExactQueryWeights::new(counts, n as u64, eta)?;
                        for rec in &history {
                            weights.observe(&q, rec)?;
                        }
                        let (a, _) = weights.sampler()?.sample(rng)?;
                        Ok(one_hot(a, 2 * k))
                    }),
                )
                .with_primitive(primitive)
                .with_input(input),
            );
        }
        let losses = (1..=t_total)
            .map(|t| {
                Ok(StepLoss {
                    what: format!("query samples of round {t}"),
                    count: self.p.samples as u64,
                    loss: PrivacyLoss::pure(dualquery_sample_epsilon(eta, t, n))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let composition = match loss {
            PrivacyLoss::Approx { delta, .. } => StepComposition::Advanced { delta_prime: delta },
            _ => StepComposition::Basic,
        };
        Ok(StepDecomposition {
            rounds: rounds.clone(),
            steps,
            losses,
            composition,
            accounting: loss,
        })
    }
}

impl Mechanism for DualQuery {
    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }

    fn name(&self) -> &'static str {
        "dualquery"
    }

    fn produces_synthetic(&self) -> bool {
        true
    }

    fn certificate(&self) -> PrivacyCertificate {
        PrivacyCertificate {
            mechanism: "dualquery".into(),
            loss: self.budget,
            model: crate::PrivacyModel::Central {
                neighbouring: Neighbouring::ReplaceOne,
            },
            approx_equivalent: None,
        }
    }

    /// The checks of the release on the workload's cells as conjunctions (rounds and
    /// sampler parameters need the public n).
    fn check_inputs(&self, workload: &MarginalWorkload, public_n: Option<usize>) -> Result<()> {
        self.check_on(&ConjunctionWorkload::from_marginals(workload)?, public_n)
    }

    /// The workload's counts and the public n are all DualQuery reads (module docs).
    fn counts_suffice(&self) -> bool {
        true
    }

    /// The cells' counts are the counts of the cells as conjunctions
    /// ([`ConjunctionWorkload::from_marginals`] keeps the workload's order).
    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let counts = crate::counts::marginal_counts(counts, n, workload)?;
        let queries = ConjunctionWorkload::from_marginals(workload)?;
        self.release_counted_on(&counts, n, &queries, workload, rng)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let queries = ConjunctionWorkload::from_marginals(workload)?;
        self.release_on(data, &queries, workload, rng)
    }
}

/// DualQuery on conjunctions and parities of literals directly (Gaboardi et al. 2014 release
/// exactly these classes, closed under negation internally); disjunctions are refused (the
/// best-response oracles solve conjunction and parity clauses only).
impl Mechanism<ConjunctionWorkload> for DualQuery {
    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }
    fn name(&self) -> &'static str {
        "dualquery"
    }
    fn produces_synthetic(&self) -> bool {
        true
    }
    fn certificate(&self) -> PrivacyCertificate {
        Mechanism::<MarginalWorkload>::certificate(self)
    }
    fn check_inputs(&self, workload: &ConjunctionWorkload, public_n: Option<usize>) -> Result<()> {
        self.check_on(workload, public_n)
    }
    fn counts_suffice(&self) -> bool {
        true
    }
    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &ConjunctionWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let counts = crate::counts::query_counts(counts, n, workload)?;
        self.release_counted_on(&counts, n, workload, workload, rng)
    }
    fn release(
        &self,
        data: &Dataset,
        workload: &ConjunctionWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.release_on(data, workload, workload, rng)
    }
}

/// DualQuery on a workload chosen at run time: marginals, conjunctions and parities.
impl Mechanism<AnyWorkload> for DualQuery {
    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }
    fn name(&self) -> &'static str {
        "dualquery"
    }
    fn produces_synthetic(&self) -> bool {
        true
    }
    fn certificate(&self) -> PrivacyCertificate {
        Mechanism::<MarginalWorkload>::certificate(self)
    }
    fn check_inputs(&self, workload: &AnyWorkload, public_n: Option<usize>) -> Result<()> {
        match workload {
            AnyWorkload::Marginals(w) => {
                Mechanism::<MarginalWorkload>::check_inputs(self, w, public_n)
            }
            AnyWorkload::Literals(w) => self.check_on(w, public_n),
            _ => Err(unsupported(workload)),
        }
    }
    fn counts_suffice(&self) -> bool {
        true
    }
    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &AnyWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        match workload {
            AnyWorkload::Marginals(w) => {
                Mechanism::<MarginalWorkload>::release_counts(self, counts, n, w, rng)
            }
            AnyWorkload::Literals(w) => {
                Mechanism::<ConjunctionWorkload>::release_counts(self, counts, n, w, rng)
            }
            _ => Err(unsupported(workload)),
        }
    }
    fn release(
        &self,
        data: &Dataset,
        workload: &AnyWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        match workload {
            AnyWorkload::Marginals(w) => Mechanism::<MarginalWorkload>::release(self, data, w, rng),
            AnyWorkload::Literals(w) => {
                Mechanism::<ConjunctionWorkload>::release(self, data, w, rng)
            }
            _ => Err(unsupported(workload)),
        }
    }
}

/// DualQuery's refusal of a workload class it does not release.
fn unsupported(workload: &AnyWorkload) -> MechanismError {
    MechanismError::UnsupportedQueryClass {
        mechanism: "dualquery",
        class: workload.class(),
        supported: DUALQUERY_CLASSES.into(),
    }
}

impl DualQuery {
    /// Algorithm 2 on `queries` (the workload's queries as conjunctions / parities), the
    /// answers of `workload` read off the synthetic records: the data's domain checked, the
    /// plan checked, the queries counted, then [`Self::run_counted`].
    fn release_on<W: Workload + ?Sized>(
        &self,
        data: &Dataset,
        queries: &ConjunctionWorkload,
        workload: &W,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        if data.domain() != workload.domain() {
            return Err(MechanismError::Data {
                reason: "the data's domain is not the workload's".into(),
            });
        }
        let plan = self.checked_plan(queries, data.n())?;
        let counts = crate::counts::nonnegative(Workload::count_all(queries, data)?)?;
        self.run_counted(plan, &counts, data.n(), queries, workload, rng)
    }

    /// [`Self::release_on`] from the exact counts of `queries` (their order; a marginal
    /// workload's counts are those of its cells as conjunctions,
    /// [`ConjunctionWorkload::from_marginals`]) of a dataset of the public `n` records:
    /// DualQuery reads the data only through these counts (its query weights), so this is
    /// the same release, draw for draw.
    fn release_counted_on<W: Workload + ?Sized>(
        &self,
        counts: &[u64],
        n: usize,
        queries: &ConjunctionWorkload,
        workload: &W,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let plan = self.checked_plan(queries, n)?;
        self.run_counted(plan, counts, n, queries, workload, rng)
    }

    /// The release from a checked plan (rounds, guarantee) and the counts: the one path of
    /// the releases from records and from counts.
    fn run_counted<W: Workload + ?Sized>(
        &self,
        (rounds, loss): (usize, PrivacyLoss),
        counts: &[u64],
        n: usize,
        queries: &ConjunctionWorkload,
        workload: &W,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        crate::counts::check_query_counts(counts, n, queries)?;
        let auto = AutoOracle {
            exhaustive: ExhaustiveOracle::default(),
            maxcsp: MaxCspOracle::default(),
            ilp: IlpOracle::default(),
        };
        let oracle = self.oracle(&auto);
        let config = self.config(rounds);
        let out = dual_query_reporting(
            queries,
            counts,
            n,
            &config,
            oracle,
            rng,
            self.p.progress.as_ref(),
        )?;
        let synthetic = records_to_synthetic(workload.domain(), &out.records)?;
        let answers = weighted_answers(workload, &synthetic)?;
        let diagnostics = Diagnostics {
            iterations: Some(rounds),
            oracle_calls: Some(rounds),
            notes: vec![
                format!(
                    "DualQuery: T = {rounds}, s = {}, η = {}, spent {loss} \
                     (Gaboardi et al. 2014, Thm {})",
                    self.p.samples,
                    self.p.eta,
                    if matches!(loss, PrivacyLoss::Pure { .. }) {
                        "4.2"
                    } else {
                        "4.3"
                    }
                ),
                format!(
                    "best responses provably optimal in {} of {rounds} rounds",
                    out.provably_optimal_rounds
                ),
                // the measured proposal count depends on the data: state the public bound
                format!(
                    "query samples drawn exactly from Q_t (rejection sampling; at most {:.1} \
                     expected proposals per sample, a bound from the parameters alone)",
                    expected_proposals_bound(2 * queries.len(), self.p.eta, rounds)
                ),
            ],
            ..Default::default()
        };
        Ok(Release {
            answers,
            synthetic: Some(synthetic),
            certificate: Mechanism::<MarginalWorkload>::certificate(self),
            diagnostics,
        })
    }
}

/// Distinct records with multiplicities → weighted synthetic data.
pub(crate) fn records_to_synthetic(domain: &Domain, records: &[Vec<u32>]) -> Result<SyntheticData> {
    let mut counts: HashMap<&[u32], usize> = HashMap::new();
    let mut order: Vec<&[u32]> = Vec::new();
    for r in records {
        let e = counts.entry(r.as_slice()).or_insert(0);
        if *e == 0 {
            order.push(r.as_slice());
        }
        *e += 1;
    }
    let d = domain.len();
    let mut cols = vec![Vec::with_capacity(order.len()); d];
    let mut weights = Vec::with_capacity(order.len());
    let total = records.len() as f64;
    for r in &order {
        for (c, &v) in cols.iter_mut().zip(r.iter()) {
            c.push(v);
        }
        weights.push(counts[r] as f64 / total);
    }
    Ok(SyntheticData {
        sampled_from_model: false,
        records: Dataset::from_columns(domain.clone(), cols)?,
        weights,
    })
}

/// Workload answers of weighted synthetic data (exact: per record and table, one cell).
pub(crate) fn weighted_answers<W: Workload + ?Sized>(
    workload: &W,
    synthetic: &SyntheticData,
) -> Result<Vec<f64>> {
    let mut out = vec![0.0f64; workload.num_queries()];
    let recs = &synthetic.records;
    for (r, &w) in synthetic.weights.iter().enumerate() {
        let rec = recs.record(r);
        workload.for_each_contribution(&rec, &mut |q, v| out[q] += w * v as f64);
    }
    Ok(out)
}
