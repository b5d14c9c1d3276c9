//! Empirical privacy audit: a statistical *lower* bound on the ε a mechanism actually
//! provides, compared with the ε it claims.
//!
//! A wrong sensitivity or noise scale is invisible to accuracy tests (the answers just get
//! better). The audit catches it from the outside, through the [`Mechanism`] trait only:
//!
//! 1. **Adversarial neighbours.** On a tiny domain (two binary attributes, one 2-way table,
//!    see [`AuditPair::adversarial`]) a base dataset `D0` of `n − 1` records is completed
//!    into neighbours under the mechanism's declared relation: `D1 = D0 + r` and
//!    `D2 = D0 + r′` (replace-one) or `D2 = D0` (add/remove), with the record(s) chosen to
//!    move the workload's true answers the most (largest ℓ1 change; ties: most attributes
//!    differing).
//! 2. **Many seeded runs** on each (parallel, one ChaCha20 stream per run, so the result
//!    does not depend on scheduling), each reduced to a few scalar statistics of the output
//!    (post-processing cannot increase ε, so any statistic is a valid test): the projection
//!    of the answers onto the direction `u = q(D1) − q(D2)` the record moves them, and the
//!    answers of the cells that move most up and most down.
//! 3. **Event selection on held-out runs.** The first half of each run set picks the event
//!    — a threshold on one statistic, `{s ≥ t}` or `{s ≤ t}`, favouring either dataset (all
//!    four orientations: the privacy inequality holds both ways, and which dataset moves a
//!    statistic up depends on the mechanism's encoding — a parity's odd count falls where a
//!    cell count rises) — that maximises the bound below.
//! 4. **Clopper–Pearson on the other half.** With `k_A` of `N` runs on the favoured dataset
//!    and `k_B` of `N` on the other in the event, (ε, δ)-DP implies
//!    `P_A(E) ≤ e^ε P_B(E) + δ`, so with confidence `1 − α`
//!    `ε ≥ ε_lower = ln((P_A_lower − δ) / P_B_upper)`, each one-sided bound at `α/2`
//!    ([`crate::audit::stats`]). Pure ε-DP mechanisms are audited at δ = 0; ρ-zCDP ones at the
//!    (ε, δ) their ρ implies at the audit δ of [`crate::registry::audit_settings`]
//!    (tight CKS conversion).
//!
//! The audit **fails** when `ε_lower > claimed ε`: a correct mechanism fails with
//! probability at most α (default 1e-6). The **canary** ([`AuditConfig::noise_factor`]) is
//! the same mechanism built with the budget that gives `f` times its noise scale
//! (ε/f for pure and (ε, δ) budgets, ρ/f² for zCDP; f = 1/2 is 2ε or 4ρ) while still
//! claiming the original guarantee: the audit must flag it, or it proves nothing.
//!
//! ## Step audit (white box, composed mechanisms)
//!
//! MWEM, IC-MW, DualQuery, chaining-worst-case, adaptive-projection and boosting compose
//! many small steps; their
//! end-to-end accounting is far from tight, so the black-box audit cannot catch their
//! canary. [`audit_steps`] audits their steps one by one through
//! [`dp_mechanisms::StepAudited`]:
//!
//! * **Decomposition.** The mechanism (built with the step budget of
//!   [`crate::registry::StepAuditSettings`], per-step ε ≈ 1) returns a few audited steps —
//!   selection and measurement of its first and last round (DualQuery: one query sample of
//!   round 2 and of round T) — each with its public history fixed by a run on a public
//!   reference dataset with the audit's seed, and runners that call the release's own code.
//!   *Soundness:* every step is private for **any** fixed history (that is the adaptive
//!   composition argument the mechanisms' proofs use), so a step's ε lower bound above its
//!   claim is a bug regardless of the history chosen.
//! * **Pair** ([`step_audit_pair`]): chosen so that an exponential-mechanism step realises
//!   most of its ε (a dominant candidate falls, an unlikely one rises by the full
//!   sensitivity); the measured query is the most-raised cell.
//! * **Statistics and bound:** each step's scalar outputs go through the same held-out
//!   event selection and Clopper–Pearson bound as the black-box audit, at `α/K` for each
//!   of the `K` steps (union bound: the whole step audit fails a correct mechanism with
//!   probability at most α). Pure claims are audited at δ = 0, zCDP ones at the audit δ.
//! * **Composition check:** the per-step losses of the whole run, composed by dp-core
//!   (basic, zCDP additivity, or advanced composition as the mechanism's analysis uses), must
//!   be within the certificate and equal the mechanism's own accounting (relative 1e-6): a
//!   per-step audit cannot see a wrong budget split, this check can.
//! * **Canary:** [`step_canary`] (half the noise scale; DualQuery: twice its step size η)
//!   runs its steps, each claiming the honest mechanism's per-step loss of the same label.

pub mod side;
pub mod stats;

use crate::audit::side::{Feature, Observation, side_outputs};
use crate::audit::stats::{clopper_pearson_lower, clopper_pearson_upper};
use crate::registry::{
    AuditSettings, StepAuditSettings, StepCanary, audit_settings, build_mechanism,
};
use crate::{BenchError, Result};
use dp_core::{Neighbouring, PrivacyLoss, stream_rng};
use dp_mechanisms::{AuditedStep, Mechanism, PostProcessing, PrivacyCertificate, StepRequest};
use dp_queries::{Dataset, Domain, MarginalWorkload};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// Default total failure probability of an audit: a correct mechanism is flagged with
/// probability at most this.
pub const DEFAULT_ALPHA: f64 = 1e-6;

/// Largest number of distinct thresholds tried per statistic and direction (quantiles of
/// the selection half beyond this).
const MAX_THRESHOLDS: usize = 2048;

/// How to run one audit.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditConfig {
    /// Runs on each of the two neighbouring datasets (half select the event, half test it).
    pub runs: usize,
    /// Seed of the runs' ChaCha20 streams.
    pub seed: u64,
    /// Total failure probability (the two one-sided Clopper–Pearson bounds take α/2 each).
    pub alpha: f64,
    /// The neighbouring relation audited (the mechanism is built for it and must declare
    /// it).
    pub neighbouring: Neighbouring,
    /// `Some(f)`: audit the miscalibrated variant with `f` times the noise scale that
    /// still claims the original guarantee (the canary; `f = 0.5` for `--canary`).
    pub noise_factor: Option<f64>,
    /// Records in each dataset (small, so that noise matters relative to one record).
    pub n: usize,
}

impl AuditConfig {
    /// The configuration of a normal audit with `runs` runs per dataset.
    pub fn new(runs: usize, seed: u64) -> Self {
        AuditConfig {
            runs,
            seed,
            alpha: DEFAULT_ALPHA,
            neighbouring: Neighbouring::ReplaceOne,
            noise_factor: None,
            n: 20,
        }
    }
}

/// The outcome of one audit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditReport {
    /// Mechanism name.
    pub mechanism: String,
    /// The guarantee the audited mechanism claims.
    pub certificate: PrivacyCertificate,
    /// The claimed ε at [`Self::delta`].
    pub claimed_epsilon: f64,
    /// The δ of the audit (0 for pure ε-DP).
    pub delta: f64,
    /// The lower confidence bound on the ε actually provided (0 when there is no evidence).
    pub epsilon_lower: f64,
    /// Confidence of the bound, `1 − α`.
    pub confidence: f64,
    /// The tested event, in words.
    pub event: String,
    /// Runs on the favoured dataset in the event / evaluation runs.
    pub favoured: (u64, u64),
    /// Runs on the other dataset in the event / evaluation runs.
    pub other: (u64, u64),
    /// Runs per dataset.
    pub runs: usize,
    /// The canary's noise factor, if this was a canary audit.
    pub noise_factor: Option<f64>,
    /// `epsilon_lower <= claimed_epsilon`.
    pub passed: bool,
}

impl AuditReport {
    /// The final line of `dpqr audit`:
    /// `epsilon_lower=<x> claimed=<y> verdict=pass|FAIL`.
    pub fn verdict_line(&self) -> String {
        format!(
            "epsilon_lower={:.4} claimed={:.4} verdict={}",
            self.epsilon_lower,
            self.claimed_epsilon,
            if self.passed { "pass" } else { "FAIL" }
        )
    }
}

/// A mechanism that runs `inner` but claims `claimed`: the deliberately miscalibrated
/// canary of the audit. Never use it outside the audit.
struct Miscalibrated {
    inner: Box<dyn Mechanism>,
    claimed: PrivacyCertificate,
}

impl Mechanism for Miscalibrated {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn certificate(&self) -> PrivacyCertificate {
        self.claimed.clone()
    }
    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn rand::CryptoRng,
    ) -> dp_mechanisms::Result<dp_mechanisms::Release> {
        let mut r = self.inner.release(data, workload, rng)?;
        r.certificate = self.claimed.clone();
        Ok(r)
    }
}

/// The budget that gives `factor` times the noise scale of `budget`: ε/f for pure and
/// (ε, δ) budgets (Laplace scale ∝ 1/ε), ρ/f² for zCDP (Gaussian σ ∝ 1/√ρ).
pub fn scale_budget(budget: PrivacyLoss, factor: f64) -> Result<PrivacyLoss> {
    if !(factor > 0.0 && factor.is_finite()) {
        return Err(BenchError::Usage(format!(
            "noise factor must be positive and finite, got {factor}"
        )));
    }
    Ok(match budget.validate()? {
        PrivacyLoss::Pure { epsilon } => PrivacyLoss::pure(epsilon / factor)?,
        PrivacyLoss::Approx { epsilon, delta } => PrivacyLoss::approx(epsilon / factor, delta)?,
        PrivacyLoss::Zcdp { rho } => PrivacyLoss::zcdp(rho / (factor * factor))?,
    })
}

/// A pair of neighbouring datasets and the workload the audit releases.
#[derive(Clone, Debug)]
pub struct AuditPair {
    /// The dataset the differing record(s) push the projection statistic up on.
    pub d1: Dataset,
    /// Its neighbour.
    pub d2: Dataset,
    /// The released workload.
    pub workload: MarginalWorkload,
    /// `q(D1) − q(D2)` (normalised answers of each dataset).
    pub direction: Vec<f64>,
}

impl AuditPair {
    /// A pair of given neighbouring datasets of one domain and the workload released on
    /// them; the direction is `q(D1) − q(D2)`. Errors: datasets of another domain than the
    /// workload's.
    pub fn new(d1: Dataset, d2: Dataset, workload: MarginalWorkload) -> Result<AuditPair> {
        if d1.domain() != workload.domain() || d2.domain() != workload.domain() {
            return Err(BenchError::Mismatch(
                "audit pair: the datasets must have the workload's domain".into(),
            ));
        }
        let (a1, a2) = (workload.answers(&d1)?, workload.answers(&d2)?);
        let direction = a1.iter().zip(&a2).map(|(x, y)| x - y).collect();
        Ok(AuditPair {
            d1,
            d2,
            workload,
            direction,
        })
    }

    /// The adversarial pair on the audit's tiny domain (attributes `a`, `b` of size 2, the
    /// one 2-way table) with `n` records in `D1`: see the module docs.
    pub fn adversarial(n: usize, neighbouring: Neighbouring) -> Result<AuditPair> {
        Self::adversarial_kway(n, neighbouring, 2)
    }

    /// [`Self::adversarial`] with all `k`-way marginals of the two attributes (`k` = 1: the
    /// two 1-way tables; 2: the one 2-way table).
    pub fn adversarial_kway(n: usize, neighbouring: Neighbouring, k: usize) -> Result<AuditPair> {
        let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 2)])?;
        let workload = MarginalWorkload::all_kway(&domain, k)?;
        Self::adversarial_for(&workload, n, neighbouring)
    }

    /// The adversarial pair for any workload whose domain has at most 4096 records: `D0`
    /// cycles through the universe, the differing record(s) maximise the ℓ1 change of the
    /// true answers (ties: most attributes differing, then first in universe order).
    pub fn adversarial_for(
        workload: &MarginalWorkload,
        n: usize,
        neighbouring: Neighbouring,
    ) -> Result<AuditPair> {
        let domain = workload.domain().clone();
        let universe_size = domain.universe_size().unwrap_or(u128::MAX);
        if universe_size > 4096 || n < 2 {
            return Err(BenchError::Audit(format!(
                "audit pair: need a universe of at most 4096 records and n ≥ 2 \
                 (universe {universe_size}, n = {n})"
            )));
        }
        let d = domain.len();
        let universe: Vec<Vec<u32>> = (0..universe_size as usize)
            .map(|mut i| {
                let mut rec = vec![0u32; d];
                for j in (0..d).rev() {
                    let s = domain.size(j) as usize;
                    rec[j] = (i % s) as u32;
                    i /= s;
                }
                rec
            })
            .collect();
        let build = |extra: &[&Vec<u32>]| -> Result<Dataset> {
            let mut cols = vec![Vec::with_capacity(n); d];
            for i in 0..n - 1 {
                for (j, col) in cols.iter_mut().enumerate() {
                    col.push(universe[i % universe.len()][j]);
                }
            }
            for rec in extra {
                for (j, col) in cols.iter_mut().enumerate() {
                    col.push(rec[j]);
                }
            }
            Ok(Dataset::from_columns(domain.clone(), cols)?)
        };
        let mut best: Option<(f64, usize, Dataset, Dataset, Vec<f64>)> = None;
        let mut consider = |d1: Dataset, d2: Dataset, hamming: usize| -> Result<()> {
            let a1 = workload.answers(&d1)?;
            let a2 = workload.answers(&d2)?;
            let u: Vec<f64> = a1.iter().zip(&a2).map(|(x, y)| x - y).collect();
            let l1: f64 = u.iter().map(|x| x.abs()).sum();
            let better = match &best {
                None => true,
                Some((bl1, bh, ..)) => l1 > *bl1 + 1e-12 || (l1 > *bl1 - 1e-12 && hamming > *bh),
            };
            if better {
                best = Some((l1, hamming, d1, d2, u));
            }
            Ok(())
        };
        match neighbouring {
            Neighbouring::ReplaceOne => {
                for r in &universe {
                    for r2 in &universe {
                        let hamming = r.iter().zip(r2).filter(|(x, y)| x != y).count();
                        if hamming > 0 {
                            consider(build(&[r])?, build(&[r2])?, hamming)?;
                        }
                    }
                }
            }
            Neighbouring::AddRemove => {
                let mut cols = vec![Vec::new(); d];
                for i in 0..n - 1 {
                    for (j, col) in cols.iter_mut().enumerate() {
                        col.push(universe[i % universe.len()][j]);
                    }
                }
                let d0 = Dataset::from_columns(domain.clone(), cols)?;
                for r in &universe {
                    consider(build(&[r])?, d0.clone(), d)?;
                }
            }
        }
        let Some((_, _, d1, d2, direction)) = best else {
            return Err(BenchError::Mismatch("audit pair: empty universe".into()));
        };
        Ok(AuditPair {
            d1,
            d2,
            workload: workload.clone(),
            direction,
        })
    }

    /// The scalar statistics of one release: the projection onto the direction, then the
    /// answer of the cell the record pushes up most and that of the cell it pushes down
    /// most (negated, so that every statistic tends to be larger on `D1`).
    fn statistics(&self, answers: &[f64]) -> [f64; 3] {
        let proj = answers
            .iter()
            .zip(&self.direction)
            .map(|(a, u)| a * u)
            .sum();
        let (mut up, mut down) = (0usize, 0usize);
        for (i, u) in self.direction.iter().enumerate() {
            if *u > self.direction[up] {
                up = i;
            }
            if *u < self.direction[down] {
                down = i;
            }
        }
        let get = |i: usize| answers.get(i).copied().unwrap_or(0.0);
        [proj, get(up), -get(down)]
    }
}

/// Audit the registered mechanism `name` (budget and δ from
/// [`crate::registry::audit_settings`]).
pub fn audit_mechanism(name: &str, config: &AuditConfig) -> Result<AuditReport> {
    let settings = audit_settings(name)?;
    audit_with(name, &settings, config)
}

/// Audit `name` built with `settings.budget` (see the module docs).
pub fn audit_with(
    name: &str,
    settings: &AuditSettings,
    config: &AuditConfig,
) -> Result<AuditReport> {
    if config.runs < 20 {
        return Err(BenchError::Usage(format!(
            "an audit needs at least 20 runs per dataset, got {}",
            config.runs
        )));
    }
    if !(config.alpha > 0.0 && config.alpha < 1.0) {
        return Err(BenchError::Usage(format!(
            "alpha must be in (0, 1), got {}",
            config.alpha
        )));
    }
    let honest = build_mechanism(
        name,
        settings.budget,
        config.neighbouring,
        PostProcessing::None,
    )?;
    let claimed = honest.certificate();
    if claimed.neighbouring() != Some(config.neighbouring) {
        return Err(BenchError::Mismatch(format!(
            "{name} declares {}, not {} neighbours",
            match claimed.neighbouring() {
                Some(r) => format!("{r} neighbours"),
                None => "the local model".to_string(),
            },
            config.neighbouring
        )));
    }
    let mechanism: Box<dyn Mechanism> = match config.noise_factor {
        None => honest,
        Some(f) => Box::new(Miscalibrated {
            inner: build_mechanism(
                name,
                scale_budget(settings.budget, f)?,
                config.neighbouring,
                PostProcessing::None,
            )?,
            claimed: claimed.clone(),
        }),
    };
    let (claimed_epsilon, delta) = match claimed.loss.validate()? {
        PrivacyLoss::Pure { epsilon } => (epsilon, 0.0),
        PrivacyLoss::Approx { epsilon, delta } => (epsilon, delta),
        z @ PrivacyLoss::Zcdp { .. } => (z.epsilon_at(settings.delta)?, settings.delta),
    };
    let pair = AuditPair::adversarial_kway(config.n, config.neighbouring, settings.audit_kway)?;
    audit_pair(
        name,
        mechanism.as_ref(),
        &pair,
        (claimed, claimed_epsilon, delta),
        config,
    )
}

/// The black-box audit of `mechanism` on the neighbouring datasets of `pair`: steps 2–4 of
/// the module docs on every run's answer statistics **and side outputs**
/// ([`side::side_outputs`]: notes, diagnostics, synthetic records, certificate), at the
/// claim `(certificate, ε, δ)`. `config.runs`, `seed` and `alpha` are used; the pair
/// replaces `config.n` and `config.neighbouring` (the caller vouches that `pair` holds
/// neighbours under the certificate's relation). For pairs the adversarial construction
/// does not find — e.g. a data-dependent note that only moves near a threshold of the data
/// (the DualQuery counterexample of issue #23, `crates/dp-bench/tests/side_outputs.rs`).
pub fn audit_pair(
    name: &str,
    mechanism: &dyn Mechanism,
    pair: &AuditPair,
    claim: (PrivacyCertificate, f64, f64),
    config: &AuditConfig,
) -> Result<AuditReport> {
    let (claimed, claimed_epsilon, delta) = claim;
    let names = [
        "projection onto q(D1) − q(D2)",
        "most-raised cell",
        "−(most-lowered cell)",
    ];
    let outcome = run_and_bound_features(config.runs, config.alpha, delta, |on_d1, stream| {
        let data = if on_d1 { &pair.d1 } else { &pair.d2 };
        let mut rng = stream_rng(config.seed, stream);
        let release = mechanism.release(data, &pair.workload, &mut rng)?;
        let mut observed = side_outputs(&release);
        for (name, x) in names.iter().zip(pair.statistics(&release.answers)) {
            observed.insert(format!("answers: {name}"), Feature::number(x));
        }
        Ok(observed)
    })?;
    Ok(AuditReport {
        mechanism: name.to_string(),
        certificate: claimed,
        claimed_epsilon,
        delta,
        epsilon_lower: outcome.epsilon_lower,
        confidence: 1.0 - config.alpha,
        event: outcome.event,
        favoured: outcome.favoured,
        other: outcome.other,
        runs: config.runs,
        noise_factor: config.noise_factor,
        passed: outcome.epsilon_lower <= claimed_epsilon,
    })
}

/// The statistical core shared by the black-box and the step audit.
#[derive(Debug)]
struct Outcome {
    epsilon_lower: f64,
    event: String,
    favoured: (u64, u64),
    other: (u64, u64),
}

/// Steps 2–4 of the module docs for any "run → statistics" closure: `run(on_d1, stream)`
/// is one run on `D1` (`on_d1`) or `D2` with ChaCha20 stream `stream` of the caller's
/// seed (streams `0..runs` on D1, `runs..2·runs` on D2), reduced to the scalars `names`.
/// The bound is at total failure probability `alpha` (α/2 per one-sided bound).
fn run_and_bound<F>(
    runs: usize,
    alpha: f64,
    delta: f64,
    names: &[String],
    run: F,
) -> Result<Outcome>
where
    F: Fn(bool, u64) -> Result<Vec<f64>> + Sync,
{
    let width = names.len();
    run_and_bound_features(runs, alpha, delta, |on_d1, stream| {
        let stats = run(on_d1, stream)?;
        if stats.len() != width {
            return Err(BenchError::Mismatch(format!(
                "audit: a run gave {} statistics, expected {width}",
                stats.len()
            )));
        }
        Ok(names
            .iter()
            .cloned()
            .zip(stats.into_iter().map(Feature::number))
            .collect())
    })
}

/// One feature of every run, in run order: numbers, or texts as indices into `values`.
enum Column {
    Numbers(Vec<f64>),
    Texts {
        codes: Vec<u32>,
        values: Vec<String>,
    },
}

impl Column {
    /// Whether every run has the same value (bitwise, for numbers).
    fn is_constant(&self) -> bool {
        match self {
            Column::Numbers(x) => x.windows(2).all(|w| w[0].to_bits() == w[1].to_bits()),
            Column::Texts { values, .. } => values.len() <= 1,
        }
    }
}

/// [`run_and_bound`] on named [`Feature`]s (numbers and texts; a feature may be missing
/// from some runs: a missing number is −∞, a missing text is its own value). Events:
/// thresholds on numbers, equality and inequality on texts, each favouring either dataset.
fn run_and_bound_features<F>(runs: usize, alpha: f64, delta: f64, run: F) -> Result<Outcome>
where
    F: Fn(bool, u64) -> Result<Observation> + Sync,
{
    if runs < 20 {
        return Err(BenchError::Usage(format!(
            "an audit needs at least 20 runs per dataset, got {runs}"
        )));
    }
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(BenchError::Usage(format!(
            "alpha must be in (0, 1), got {alpha}"
        )));
    }
    let observed: Vec<Observation> = (0..2 * runs)
        .into_par_iter()
        .map(|i| run(i < runs, i as u64))
        .collect::<Result<Vec<_>>>()?;
    let (names, columns) = columns_of(&observed);
    let half = runs / 2;
    let a = alpha / 2.0;
    // selection on the first half of each dataset's runs
    let mut best: Option<(f64, Event)> = None;
    // many events share their counts (side outputs add many features): one bound per pair
    let mut bounds: std::collections::HashMap<(u64, u64), f64> = Default::default();
    let mut consider = |event: Event, k1: u64, k2: u64| -> Result<()> {
        let (ka, kb) = if event.favours_d1 { (k1, k2) } else { (k2, k1) };
        let score = match bounds.get(&(ka, kb)) {
            Some(&s) => s,
            None => {
                let s = epsilon_lower(ka, half as u64, kb, half as u64, delta, a)?;
                bounds.insert((ka, kb), s);
                s
            }
        };
        // prefer the bound; among events with no evidence, the point estimate
        let point = ((ka as f64 + 0.5) / (kb as f64 + 0.5)).ln() * 1e-9;
        let key = score + point;
        if best.as_ref().is_none_or(|(b, _)| key > *b) {
            best = Some((key, event));
        }
        Ok(())
    };
    for (feature, column) in columns.iter().enumerate() {
        if column.is_constant() {
            // the same value in every run: every event holds on all runs or none
            continue;
        }
        match column {
            Column::Numbers(x) => {
                let mut sel1: Vec<f64> = x[..half].to_vec();
                let mut sel2: Vec<f64> = x[runs..runs + half].to_vec();
                sel1.sort_by(f64::total_cmp);
                sel2.sort_by(f64::total_cmp);
                for t in candidate_thresholds(&sel1, &sel2) {
                    for test in [Test::AtLeast(t), Test::AtMost(t)] {
                        for favours_d1 in [true, false] {
                            let event = Event {
                                feature,
                                test,
                                favours_d1,
                            };
                            let (k1, k2) = (test.count_sorted(&sel1), test.count_sorted(&sel2));
                            consider(event, k1, k2)?;
                        }
                    }
                }
            }
            Column::Texts { codes, values } => {
                let mut in1 = vec![0u64; values.len()];
                let mut in2 = vec![0u64; values.len()];
                for (i, &c) in codes.iter().enumerate() {
                    if i < half {
                        in1[c as usize] += 1;
                    } else if (runs..runs + half).contains(&i) {
                        in2[c as usize] += 1;
                    }
                }
                // the most frequent values first; at most MAX_THRESHOLDS of them
                let mut order: Vec<u32> = (0..values.len() as u32)
                    .filter(|&c| in1[c as usize] + in2[c as usize] > 0)
                    .collect();
                order.sort_by_key(|&c| std::cmp::Reverse(in1[c as usize] + in2[c as usize]));
                order.truncate(MAX_THRESHOLDS);
                for c in order {
                    let (k1, k2) = (in1[c as usize], in2[c as usize]);
                    for (test, k1, k2) in [
                        (Test::Equals(c), k1, k2),
                        (Test::Differs(c), half as u64 - k1, half as u64 - k2),
                    ] {
                        for favours_d1 in [true, false] {
                            let event = Event {
                                feature,
                                test,
                                favours_d1,
                            };
                            consider(event, k1, k2)?;
                        }
                    }
                }
            }
        }
    }
    let n_eval = (runs - half) as u64;
    let Some((_, event)) = best else {
        // nothing varied across the runs: the output law is a point mass on both datasets
        return Ok(Outcome {
            epsilon_lower: 0.0,
            event: "every output was the same in every run".into(),
            favoured: (0, n_eval),
            other: (0, n_eval),
        });
    };
    // evaluation on the other half
    let (mut k1, mut k2) = (0u64, 0u64);
    for i in (half..runs).chain(runs + half..2 * runs) {
        if event.test.contains(&columns[event.feature], i) {
            if i < runs {
                k1 += 1;
            } else {
                k2 += 1;
            }
        }
    }
    let (ka, kb) = if event.favours_d1 { (k1, k2) } else { (k2, k1) };
    Ok(Outcome {
        epsilon_lower: epsilon_lower(ka, n_eval, kb, n_eval, delta, a)?,
        event: event.describe(&names[event.feature], &columns[event.feature]),
        favoured: (ka, n_eval),
        other: (kb, n_eval),
    })
}

/// The features of all runs as columns (the union of the runs' feature names; a feature
/// that is a text in any run is a text column, its numbers written as text).
fn columns_of(observed: &[Observation]) -> (Vec<String>, Vec<Column>) {
    let mut kinds: BTreeMap<&str, bool> = BTreeMap::new();
    for o in observed {
        for (name, f) in o {
            let text = matches!(f, Feature::Text(_));
            *kinds.entry(name.as_str()).or_insert(text) |= text;
        }
    }
    let mut names = Vec::with_capacity(kinds.len());
    let mut columns = Vec::with_capacity(kinds.len());
    for (name, text) in kinds {
        names.push(name.to_string());
        if text {
            let mut index: BTreeMap<String, u32> = BTreeMap::new();
            let mut values = Vec::new();
            let codes = observed
                .iter()
                .map(|o| {
                    let v = match o.get(name) {
                        None => "(absent)".to_string(),
                        Some(Feature::Text(t)) => t.clone(),
                        Some(Feature::Number(x)) => format!("{x:?}"),
                    };
                    *index.entry(v.clone()).or_insert_with(|| {
                        values.push(v);
                        (values.len() - 1) as u32
                    })
                })
                .collect();
            columns.push(Column::Texts { codes, values });
        } else {
            columns.push(Column::Numbers(
                observed
                    .iter()
                    .map(|o| match o.get(name) {
                        Some(Feature::Number(x)) => *x,
                        _ => f64::NEG_INFINITY,
                    })
                    .collect(),
            ));
        }
    }
    (names, columns)
}

/// The step audit's neighbouring pair and public reference dataset (module docs, "Step
/// audit"): on the 2×2 table with n = 20, `D0` has 5 records in cell 00, 3 in 01, 3 in 10
/// and 8 in 11; `D1 = D0 + (0,0)`, `D2 = D0 + (1,1)` (counts 6, 3, 3, 8 against 5, 3, 3,
/// 9). Against the uniform state (5 per cell) the selection scores `|c − 5|` are (1, 2, 2,
/// 3) on `D1` and (0, 2, 2, 4) on `D2`: the dominant candidate (cell 11) falls and an
/// unlikely one (cell 00) rises by the full sensitivity, so the exponential mechanism
/// realises most of its ε on the event "cell 00 selected". The reference dataset (5 records
/// per cell) keeps the later rounds' public state near uniform, so they see the same shape.
pub fn step_audit_pair() -> Result<(AuditPair, Dataset)> {
    let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 2)])?;
    let workload = MarginalWorkload::all_kway(&domain, 2)?;
    let cells: [[u32; 2]; 4] = [[0, 0], [0, 1], [1, 0], [1, 1]];
    let build = |counts: [usize; 4]| -> Result<Dataset> {
        let mut cols = vec![Vec::new(), Vec::new()];
        for (cell, &k) in cells.iter().zip(&counts) {
            for _ in 0..k {
                cols[0].push(cell[0]);
                cols[1].push(cell[1]);
            }
        }
        Ok(Dataset::from_columns(domain.clone(), cols)?)
    };
    let d1 = build([6, 3, 3, 8])?;
    let d2 = build([5, 3, 3, 9])?;
    let reference = build([5, 5, 5, 5])?;
    let a1 = workload.answers(&d1)?;
    let a2 = workload.answers(&d2)?;
    let direction = a1.iter().zip(&a2).map(|(x, y)| x - y).collect();
    Ok((
        AuditPair {
            d1,
            d2,
            workload,
            direction,
        },
        reference,
    ))
}

/// The step-audit canary of `name` built as its catalogue entry's
/// [`StepAuditSettings::canary`] says: the mechanism with `factor` times its noise scale
/// ([`StepCanary::ScaledBudget`], the [`scale_budget`] build), or, for DualQuery, which
/// derives its rounds T (not its noise) from the budget, sampling at temperature η/f
/// (f = 1/2: twice the step size, i.e. twice every per-sample ε) with the scaled budget,
/// which leaves T unchanged ([`StepCanary::DualQueryStepSize`]).
pub fn step_canary(
    name: &str,
    settings: &StepAuditSettings,
    factor: f64,
) -> Result<Box<dyn Mechanism>> {
    let scaled = scale_budget(settings.budget, factor)?;
    match settings.canary {
        StepCanary::DualQueryStepSize => Ok(Box::new(
            dp_mechanisms::DualQueryParams::new(scaled)
                .eta(dp_mechanisms::iterative::DEFAULT_ETA / factor)
                .check()?,
        )),
        StepCanary::ScaledBudget => {
            build_mechanism(name, scaled, Neighbouring::ReplaceOne, PostProcessing::None)
        }
    }
}

/// The audit of one step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepReport {
    /// The step's label.
    pub label: String,
    /// The per-step guarantee claimed (the honest mechanism's, for a canary).
    pub claimed: PrivacyLoss,
    /// The claimed ε at [`Self::delta`].
    pub claimed_epsilon: f64,
    /// The δ of the step's audit (0 for pure ε-DP).
    pub delta: f64,
    /// Lower confidence bound on the step's ε (confidence 1 − α/K).
    pub epsilon_lower: f64,
    /// The tested event.
    pub event: String,
    /// Runs on the favoured dataset in the event / evaluation runs.
    pub favoured: (u64, u64),
    /// Runs on the other dataset in the event / evaluation runs.
    pub other: (u64, u64),
    /// `epsilon_lower <= claimed_epsilon`.
    pub passed: bool,
}

/// The outcome of a step audit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepAuditReport {
    /// Mechanism name.
    pub mechanism: String,
    /// The guarantee of the (honest) mechanism as built for the step audit.
    pub certificate: PrivacyCertificate,
    /// The composition of the honest per-step losses of the whole run.
    pub composed: PrivacyLoss,
    /// The mechanism's own accounting of the run.
    pub accounting: PrivacyLoss,
    /// `composed` is within the certificate and equals `accounting` (relative 1e-6).
    pub composition_ok: bool,
    /// The audited steps.
    pub steps: Vec<StepReport>,
    /// Canary steps without an honest counterpart (not audited).
    pub unmatched: Vec<String>,
    /// Total failure probability (α/K per step).
    pub alpha: f64,
    /// Runs per dataset and step.
    pub runs: usize,
    /// The canary's noise factor, if this was a canary audit.
    pub noise_factor: Option<f64>,
    /// The composition check and every step passed.
    pub passed: bool,
}

impl StepAuditReport {
    /// The step with the largest `epsilon_lower / claimed_epsilon`.
    pub fn worst(&self) -> Option<&StepReport> {
        self.steps.iter().max_by(|a, b| {
            let r = |s: &StepReport| s.epsilon_lower / s.claimed_epsilon.max(f64::MIN_POSITIVE);
            r(a).total_cmp(&r(b))
        })
    }

    /// One line per step.
    pub fn step_lines(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|s| {
                format!(
                    "step {}: epsilon_lower={:.4} claimed={:.4} (δ = {:e}) {} — event {} ({}/{} vs {}/{})",
                    s.label,
                    s.epsilon_lower,
                    s.claimed_epsilon,
                    s.delta,
                    if s.passed { "pass" } else { "FAIL" },
                    s.event,
                    s.favoured.0,
                    s.favoured.1,
                    s.other.0,
                    s.other.1
                )
            })
            .collect()
    }
}

/// `a` is within `b` (relative slack `tol` for floating-point rounding of the sums).
fn loss_within(a: &PrivacyLoss, b: &PrivacyLoss, tol: f64) -> Result<bool> {
    use PrivacyLoss::*;
    let le = |x: f64, y: f64| x <= y * (1.0 + tol);
    Ok(match (a.validate()?, b.validate()?) {
        (Pure { epsilon: x }, Pure { epsilon: y }) => le(x, y),
        (Pure { epsilon: x }, Approx { epsilon: y, .. }) => le(x, y),
        (
            Approx {
                epsilon: x,
                delta: dx,
            },
            Approx {
                epsilon: y,
                delta: dy,
            },
        ) => le(x, y) && le(dx, dy),
        (Zcdp { rho: x }, Zcdp { rho: y }) => le(x, y),
        (p @ Pure { .. }, z @ Zcdp { .. }) => return loss_within(&p.to_zcdp()?, &z, tol),
        (
            z @ Zcdp { .. },
            Approx {
                epsilon: y,
                delta: dy,
            },
        ) => le(z.epsilon_at(dy)?, y),
        _ => false,
    })
}

/// The white-box per-step audit of a composed mechanism (module docs, "Step audit").
pub fn audit_steps(
    name: &str,
    settings: &AuditSettings,
    config: &AuditConfig,
) -> Result<StepAuditReport> {
    let Some(step_settings) = settings.steps else {
        return Err(BenchError::Audit(format!(
            "{name} has no step audit (only the composed mechanisms do)"
        )));
    };
    if config.neighbouring != Neighbouring::ReplaceOne {
        return Err(BenchError::Audit(
            "the step audit is stated for replace-one neighbours".into(),
        ));
    }
    let honest = build_mechanism(
        name,
        step_settings.budget,
        Neighbouring::ReplaceOne,
        PostProcessing::None,
    )?;
    let certificate = honest.certificate();
    let no_steps = || BenchError::Audit(format!("{name} cannot be decomposed into steps"));
    let (pair, reference) = step_audit_pair()?;
    let most_raised = (0..pair.direction.len())
        .max_by(|&a, &b| pair.direction[a].total_cmp(&pair.direction[b]))
        .unwrap_or(0);
    let request = StepRequest {
        seed: config.seed,
        rounds: Vec::new(),
        measured_query: Some(most_raised),
    };
    let honest_dec = honest
        .step_audited()
        .ok_or_else(no_steps)?
        .step_decomposition(&reference, &pair.workload, &request)?;
    // the composition of the honest per-step losses: within the certificate, and equal to
    // the mechanism's own accounting
    let composed = honest_dec.composed()?;
    let composition_ok = loss_within(&composed, &certificate.loss, 1e-9)?
        && loss_within(&composed, &honest_dec.accounting, 1e-6)?
        && loss_within(&honest_dec.accounting, &composed, 1e-6)?;
    // the audited steps and their claims
    let canary;
    let mut unmatched = Vec::new();
    let audited: Vec<(&AuditedStep, PrivacyLoss)> = match config.noise_factor {
        None => honest_dec.steps.iter().map(|s| (s, s.claimed)).collect(),
        Some(f) => {
            let m = step_canary(name, &step_settings, f)?;
            // the honest audit's rounds, so that labels match
            let canary_request = StepRequest {
                rounds: honest_dec.rounds.clone(),
                ..request.clone()
            };
            canary = m.step_audited().ok_or_else(no_steps)?.step_decomposition(
                &reference,
                &pair.workload,
                &canary_request,
            )?;
            let mut v = Vec::new();
            for s in &canary.steps {
                match honest_dec.steps.iter().find(|h| h.label == s.label) {
                    Some(h) => v.push((s, h.claimed)),
                    None => unmatched.push(s.label.clone()),
                }
            }
            v
        }
    };
    if audited.is_empty() {
        return Err(BenchError::Audit(format!("{name}: no step to audit")));
    }
    let alpha_k = config.alpha / audited.len() as f64;
    let mut steps = Vec::new();
    for (k, (step, claim)) in audited.iter().enumerate() {
        let (claimed_epsilon, delta) = match claim.validate()? {
            PrivacyLoss::Pure { epsilon } => (epsilon, 0.0),
            PrivacyLoss::Approx { epsilon, delta } => (epsilon, delta),
            z @ PrivacyLoss::Zcdp { .. } => (z.epsilon_at(settings.delta)?, settings.delta),
        };
        let base = (k as u64 + 1) << 40;
        let outcome = run_and_bound(
            config.runs,
            alpha_k,
            delta,
            &step.outputs,
            |on_d1, stream| {
                let data = if on_d1 { &pair.d1 } else { &pair.d2 };
                let mut rng = stream_rng(config.seed, base | stream);
                Ok(step.run(data, &mut rng)?)
            },
        )?;
        steps.push(StepReport {
            label: step.label.clone(),
            claimed: *claim,
            claimed_epsilon,
            delta,
            epsilon_lower: outcome.epsilon_lower,
            event: outcome.event,
            favoured: outcome.favoured,
            other: outcome.other,
            passed: outcome.epsilon_lower <= claimed_epsilon,
        });
    }
    let passed = composition_ok && steps.iter().all(|s| s.passed);
    Ok(StepAuditReport {
        mechanism: name.to_string(),
        certificate,
        composed,
        accounting: honest_dec.accounting,
        composition_ok,
        steps,
        unmatched,
        alpha: config.alpha,
        runs: config.runs,
        noise_factor: config.noise_factor,
        passed,
    })
}

/// `ln((P_A_lower − δ) / P_B_upper)` from counts, each Clopper–Pearson bound one-sided at
/// `a`; 0 when the numerator is not positive.
pub fn epsilon_lower(ka: u64, na: u64, kb: u64, nb: u64, delta: f64, a: f64) -> Result<f64> {
    let pa = clopper_pearson_lower(ka, na, a)? - delta;
    let pb = clopper_pearson_upper(kb, nb, a)?;
    if pa <= 0.0 || pb <= 0.0 {
        return Ok(0.0);
    }
    Ok((pa / pb).ln().max(0.0))
}

/// The test of one event on one feature.
#[derive(Clone, Copy, Debug)]
enum Test {
    /// `{x ≥ t}` on a number.
    AtLeast(f64),
    /// `{x ≤ t}` on a number.
    AtMost(f64),
    /// `{x = v}` on a text (`v` by its index in the column's values).
    Equals(u32),
    /// `{x ≠ v}` on a text.
    Differs(u32),
}

impl Test {
    fn holds(&self, x: f64) -> bool {
        match *self {
            Test::AtLeast(t) => x >= t,
            Test::AtMost(t) => x <= t,
            Test::Equals(_) | Test::Differs(_) => false,
        }
    }
    /// Whether run `i` of `column` is in the event.
    fn contains(&self, column: &Column, i: usize) -> bool {
        match (self, column) {
            (Test::Equals(v), Column::Texts { codes, .. }) => codes[i] == *v,
            (Test::Differs(v), Column::Texts { codes, .. }) => codes[i] != *v,
            (_, Column::Numbers(x)) => self.holds(x[i]),
            _ => false,
        }
    }
    /// Runs in the event among `sorted` numbers.
    fn count_sorted(&self, sorted: &[f64]) -> u64 {
        match *self {
            Test::AtLeast(t) => (sorted.len() - sorted.partition_point(|&s| s < t)) as u64,
            Test::AtMost(t) => sorted.partition_point(|&s| s <= t) as u64,
            Test::Equals(_) | Test::Differs(_) => 0,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Event {
    feature: usize,
    test: Test,
    /// Whether the event is tested as more likely under D1 (`P_1(E) ≤ e^ε P_2(E) + δ`) or
    /// under D2 (the reverse inequality).
    favours_d1: bool,
}

impl Event {
    fn describe(&self, name: &str, column: &Column) -> String {
        let favoured = if self.favours_d1 { "D1" } else { "D2" };
        let value = |v: u32| match column {
            Column::Texts { values, .. } => {
                let t = &values[v as usize];
                if t.chars().count() > 200 {
                    format!("{:?}…", t.chars().take(200).collect::<String>())
                } else {
                    format!("{t:?}")
                }
            }
            Column::Numbers(_) => String::new(),
        };
        let test = match self.test {
            Test::AtLeast(t) => format!("≥ {t:.6e}"),
            Test::AtMost(t) => format!("≤ {t:.6e}"),
            Test::Equals(v) => format!("= {}", value(v)),
            Test::Differs(v) => format!("≠ {}", value(v)),
        };
        format!("{name} {test} (favours {favoured})")
    }
}

/// Distinct values of both sorted samples (thinned to quantiles beyond [`MAX_THRESHOLDS`]).
fn candidate_thresholds(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut all: Vec<f64> = a
        .iter()
        .chain(b)
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    all.sort_by(f64::total_cmp);
    all.dedup();
    if all.len() <= MAX_THRESHOLDS {
        return all;
    }
    let step = all.len() as f64 / MAX_THRESHOLDS as f64;
    (0..MAX_THRESHOLDS)
        .map(|i| all[((i as f64 * step) as usize).min(all.len() - 1)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_favouring_either_dataset_in_either_direction_are_found() {
        // A statistic that D1 moves *down* (as a parity's odd count does): the events
        // {s ≤ t} for D1 and {s ≥ t} for D2 are the informative ones. Each run's value is its
        // dataset's mean plus a draw of a fixed three-point law, so the two laws have
        // disjoint supports and the bound must be far above 0 (a one-orientation event
        // family finds nothing here: every {s ≥ t} favours D2, every {s ≤ t} D1).
        let names = vec!["s".to_string()];
        for d1_mean in [0.0, 10.0] {
            let d2_mean = 10.0 - d1_mean;
            let out = run_and_bound(2_000, 1e-6, 0.0, &names, |on_d1, stream| {
                let mean = if on_d1 { d1_mean } else { d2_mean };
                Ok(vec![mean + (stream % 3) as f64])
            })
            .unwrap();
            // 1000 evaluation runs in and 0 out: ln(P_lower / P_upper) with Clopper–Pearson
            // at α/2 = 5e-7 is ln((1 − 1.4e-2) / 1.4e-2) ≈ 4.2 (stats.rs closed forms).
            assert!(out.epsilon_lower > 4.0, "{d1_mean}: {out:?}");
            assert_eq!(out.favoured, (1_000, 1_000), "{out:?}");
            assert_eq!(out.other.0, 0, "{out:?}");
        }
    }

    #[test]
    fn scale_budget_halves_noise() {
        assert_eq!(
            scale_budget(PrivacyLoss::Pure { epsilon: 1.0 }, 0.5).unwrap(),
            PrivacyLoss::Pure { epsilon: 2.0 }
        );
        assert_eq!(
            scale_budget(PrivacyLoss::Zcdp { rho: 0.25 }, 0.5).unwrap(),
            PrivacyLoss::Zcdp { rho: 1.0 }
        );
        assert!(scale_budget(PrivacyLoss::Zcdp { rho: 0.25 }, 0.0).is_err());
    }

    #[test]
    fn adversarial_pair_moves_two_cells_by_one_record() {
        let p = AuditPair::adversarial(20, Neighbouring::ReplaceOne).unwrap();
        assert_eq!((p.d1.n(), p.d2.n()), (20, 20));
        // by hand: one 2×2 table; replacing (0,0) by (1,1) moves cell 00 up by 1/20 and
        // cell 11 down by 1/20 (ℓ1 change 2/20, the most possible, both attributes differ)
        let want = [0.05, 0.0, 0.0, -0.05];
        for (u, w) in p.direction.iter().zip(want) {
            assert!((u - w).abs() < 1e-12, "{:?}", p.direction);
        }
        let differing = (0..20)
            .filter(|&i| p.d1.record(i) != p.d2.record(i))
            .count();
        assert_eq!(differing, 1);
        let q = AuditPair::adversarial(20, Neighbouring::AddRemove).unwrap();
        assert_eq!((q.d1.n(), q.d2.n()), (20, 19));
    }

    #[test]
    fn loss_within_by_hand() {
        let p = |e| PrivacyLoss::Pure { epsilon: e };
        let z = |r| PrivacyLoss::Zcdp { rho: r };
        assert!(loss_within(&p(1.0), &p(1.0), 1e-9).unwrap());
        // a budget split that spends twice the certificate is refused
        assert!(!loss_within(&p(2.0), &p(1.0), 1e-9).unwrap());
        // rounding slack only
        assert!(loss_within(&p(1.0 + 1e-12), &p(1.0), 1e-9).unwrap());
        assert!(!loss_within(&p(1.0 + 1e-6), &p(1.0), 1e-9).unwrap());
        // pure ε = 1 is ρ = 1/2 (Bun–Steinke Prop. 1.4)
        assert!(loss_within(&p(1.0), &z(0.5), 1e-9).unwrap());
        assert!(!loss_within(&p(1.0), &z(0.4), 1e-9).unwrap());
        // (ε, δ) never fits a zCDP certificate
        let a = PrivacyLoss::Approx {
            epsilon: 0.1,
            delta: 1e-9,
        };
        assert!(!loss_within(&a, &z(100.0), 1e-9).unwrap());
    }

    /// The step-audit pair is what its docs say (counts by hand) and a replace-one pair.
    #[test]
    fn step_pair_by_hand() {
        let (p, r) = step_audit_pair().unwrap();
        assert_eq!((p.d1.n(), p.d2.n(), r.n()), (20, 20, 20));
        let c1 = p.workload.count_all(&p.d1).unwrap();
        let c2 = p.workload.count_all(&p.d2).unwrap();
        assert_eq!((c1, c2), (vec![6, 3, 3, 8], vec![5, 3, 3, 9]));
        assert_eq!(p.workload.count_all(&r).unwrap(), vec![5, 5, 5, 5]);
    }

    #[test]
    fn epsilon_lower_by_hand() {
        // all of A in the event, none of B, δ = 0: ln(a^{1/N} / (1 − a^{1/N}))
        let (n, a) = (1000u64, 1e-3f64);
        let lo = a.powf(1.0 / n as f64);
        let want = (lo / (1.0 - lo)).ln();
        let got = epsilon_lower(n, n, 0, n, 0.0, a).unwrap();
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        assert_eq!(epsilon_lower(0, n, 0, n, 0.0, a).unwrap(), 0.0);
        // δ larger than the event probability: no evidence
        assert_eq!(epsilon_lower(1, n, 0, n, 0.5, a).unwrap(), 0.0);
    }
}
