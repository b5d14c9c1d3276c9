//! The Iterative Construction (IC) mechanism (seed 001, Roth, lecture notes "Iterative
//! Database Construction", 2011, Algorithm 1), with multiplicative weights as the
//! database-update algorithm and the exponential mechanism as the private distinguisher.
//!
//! ```text
//! IC(D, α, ε₀, Distinguish, U):
//!   D⁰ = U(∅)
//!   for t = 1 .. B(α/2):
//!     Q⁽ᵗ⁾ = Distinguish(D, Dᵗ⁻¹)                      (ε₀-DP)
//!     v̂⁽ᵗ⁾ = Q⁽ᵗ⁾(D) + Lap(1/(ε₀ n))                   (ε₀-DP)
//!     if |v̂⁽ᵗ⁾ − Q⁽ᵗ⁾(Dᵗ⁻¹)| < 3α/4: output Dᵗ⁻¹
//!     else Dᵗ = U(Dᵗ⁻¹, Q⁽ᵗ⁾, v̂⁽ᵗ⁾)
//!   output D^{B(α/2)}
//! ```
//!
//! * [`DatabaseUpdate`] (Def. 2) and [`Distinguisher`] (Def. 3) are the two abstractions;
//!   [`iterative_construction`] is the loop above, generic over both.
//! * [`MwDua`]: multiplicative weights over the explicit universe, a `B(α) = 4 ln|𝒳|/α²`
//!   DUA ([`mw_dua_bound`]). Update with `η = α/2` at accuracy α (so `η = α/4` inside IC,
//!   which runs the DUA at accuracy α/2): `Dᵗ⁺¹(x) ∝ Dᵗ(x)·exp(±η Q(x))`, `+` when
//!   `v̂ > Q(Dᵗ)`. Potential argument: the relative entropy `KL(D‖Dᵗ) ≤ ln|𝒳|` drops by at
//!   least `η·α − η² = α²/4` per update with `|Q(D) − Q(Dᵗ)| ≥ α`, hence at most
//!   `4 ln|𝒳|/α²` updates.
//! * [`EmDistinguisher`]: the exponential-mechanism distinguisher of Thm 6, run as exact
//!   **permute-and-flip** (`dp_core::PermuteAndFlip`) on the score `|Q(D) − Q(Dᵗ)|`,
//!   sensitivity `1/n` (count units: 1, [`crate::sensitivity::distinguisher_score_sensitivity`]).
//!   IC's accounting uses only the distinguisher's pure ε₀ (basic or advanced composition of
//!   pure steps), which permute-and-flip satisfies; its accuracy is never worse than the
//!   exponential mechanism's (McKenna–Sheldon 2020), so Thm 6's
//!   `F(ε) = (2/(nε)) ln(|𝒞|/γ)` still applies. (No zCDP charge is taken for it, so its lack
//!   of the bounded-range property, issue #9, does not matter here.)
//! * The Laplace noise is the **discrete** Laplace of scale `1/ε₀` on the count (sensitivity
//!   1, [`crate::sensitivity::counting_query_sensitivity`]), i.e. `Lap(1/(ε₀ n))` on the
//!   normalised answer, sampled exactly. Its tail is `Pr[|Z| ≥ k] ≤ e^{−(k−1)ε₀}`, one count
//!   more than the continuous Laplace's, so the accuracy requirement below adds `1/n`.
//!
//! ## Data access
//!
//! IC-MW reads the data only through the workload's exact counts and the public `n`:
//! [`IterativeConstruction::release_counted`] and [`crate::Mechanism::release_counts`]
//! release from counts streamed or counted by an engine, the same release, draw for draw,
//! as from the records.
//!
//! ## Privacy (Thm 4; replace-one neighbours)
//!
//! At most `2B(α/2)` ε₀-DP steps: **pure** `ε₀ = ε/(2B(α/2))` ([`ic_epsilon0`]); **(ε, δ)**
//! by advanced composition of `k = 2B(α/2)` steps — Thm 4 states the closed form
//! `ε₀ = ε/(4√(B(α/2) ln(1/δ)))` ([`ic_epsilon0_thm4`]); dpqr uses the exact inverse of
//! the advanced composition bound (`dp_core::advanced_composition_epsilon0`), which is never
//! smaller, and reports both.
//!
//! ## Accuracy (Thm 5, 7, 8)
//!
//! (α, β)-accurate when `α ≥ max[4 ln(2B/β)/(ε₀ n), 2F(ε₀)]` with `γ = β/(2B)`,
//! `B = B(α/2)` ([`ic_accuracy_requirement`]). With α unset, the mechanism uses the smallest
//! α (bisection) meeting this for its own ε₀ — "fix ε, derive α". The release reports
//! whether the guarantee holds for the α used.

use std::sync::Arc;

use dp_core::{
    Neighbouring, PermuteAndFlip, PrivacyLoss, ProgressSink, Selector,
    advanced_composition_epsilon0, report_progress,
};
use dp_queries::{Dataset, MarginalWorkload, Universe};
use rand::{CryptoRng, Rng};

use super::mwem::synthetic_of;
use super::universe_mw::{CellSupports, UniverseDistribution, answers_of};
use crate::engine::{
    Measured, Measurement, Noise, RecordedRound, RoundPlan, StepSource, exact_counts, measure,
    select,
};
use crate::sensitivity::{
    counting_query_sensitivity, distinguisher_score_sensitivity, distinguisher_scores,
};
use crate::{Diagnostics, Mechanism, MechanismError, PrivacyCertificate, Release, Result};

fn invalid(name: &'static str, value: impl ToString, reason: impl Into<String>) -> MechanismError {
    MechanismError::InvalidParameter {
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// `B(α) = ⌈4 ln|𝒳| / α²⌉` (at least 1): the update bound of the multiplicative-weights DUA.
pub fn mw_dua_bound(alpha: f64, ln_universe: f64) -> Result<usize> {
    let alpha_ok = alpha > 0.0 && alpha.is_finite();
    let ln_ok = ln_universe >= 0.0 && ln_universe.is_finite();
    if !(alpha_ok && ln_ok) {
        return Err(invalid(
            "alpha",
            alpha,
            "needs α > 0 and a finite ln|X| >= 0",
        ));
    }
    let b = (4.0 * ln_universe / (alpha * alpha)).ceil();
    if b > 1e9 {
        return Err(invalid("alpha", alpha, "B(α) exceeds 1e9 rounds"));
    }
    Ok((b as usize).max(1))
}

/// Thm 4 with dpqr's accounting: ε₀ for `b = B(α/2)` rounds of two ε₀-DP steps each:
/// `ε/(2b)` (pure), or the largest ε₀ whose `2b`-fold advanced composition at the budget's
/// δ is within ε ((ε, δ)).
pub fn ic_epsilon0(budget: &PrivacyLoss, b: usize) -> Result<f64> {
    let k = 2 * b as u64;
    match budget.validate()? {
        PrivacyLoss::Pure { epsilon } => Ok((epsilon / k as f64).next_down()),
        PrivacyLoss::Approx { epsilon, delta } if delta > 0.0 => {
            Ok(advanced_composition_epsilon0(epsilon, k, delta)?)
        }
        PrivacyLoss::Approx { epsilon, .. } => Ok((epsilon / k as f64).next_down()),
        PrivacyLoss::Zcdp { rho } => Err(invalid(
            "budget",
            format!("rho = {rho}"),
            "the Iterative Construction is accounted in pure ε or (ε, δ) (Roth 2011, Thm 4)",
        )),
    }
}

/// Thm 4's closed forms: `ε/(2B)` (pure) and `ε/(4√(B ln(1/δ)))` ((ε, δ)), `B = B(α/2)`.
pub fn ic_epsilon0_thm4(budget: &PrivacyLoss, b: usize) -> Result<f64> {
    let b = b as f64;
    match budget.validate()? {
        PrivacyLoss::Pure { epsilon } => Ok(epsilon / (2.0 * b)),
        PrivacyLoss::Approx { epsilon, delta } if delta > 0.0 => {
            Ok(epsilon / (4.0 * (b * (1.0 / delta).ln()).sqrt()))
        }
        PrivacyLoss::Approx { epsilon, .. } => Ok(epsilon / (2.0 * b)),
        PrivacyLoss::Zcdp { .. } => Err(invalid("budget", "zCDP", "pure ε or (ε, δ) only")),
    }
}

/// Thm 5 with the exponential-mechanism distinguisher (Thm 6/7): the smallest α for which
/// IC with `b = B(α/2)` rounds, per-step ε₀, `n` records and `num_queries = |𝒞|` is
/// (α, β)-accurate: `max[4 ln(2b/β)/(ε₀ n), 4 ln(2b|𝒞|/β)/(ε₀ n)] + 1/n` (the `1/n`
/// for the discrete Laplace tail; see the module docs).
pub fn ic_accuracy_requirement(
    epsilon0: f64,
    n: usize,
    num_queries: usize,
    b: usize,
    beta: f64,
) -> f64 {
    let en = epsilon0 * n as f64;
    let lap = 4.0 * (2.0 * b as f64 / beta).ln() / en;
    let gamma = beta / (2.0 * b as f64);
    let f = 2.0 / en * (num_queries as f64 / gamma).ln();
    lap.max(2.0 * f) + 1.0 / n as f64
}

/// A database-update algorithm (seed 001 Def. 2): a state `Dᵗ`, answers on it, and the
/// update rule `U(Dᵗ, Q, v)`.
pub trait DatabaseUpdate {
    /// The data structure `D ∈ 𝒟`.
    type State;
    /// `U(∅, ·, ·)`.
    fn initial(&self) -> Result<Self::State>;
    /// Normalised answers of every query of the class on `state`.
    fn answers(&self, state: &Self::State) -> Result<Vec<f64>>;
    /// `U(state, query, estimate)`: one update with the (noisy) answer estimate.
    fn update(&mut self, state: &mut Self::State, query: usize, estimate: f64) -> Result<()>;
    /// `B(α)`: the maximum length of an update sequence at accuracy α.
    fn bound(&self, alpha: f64) -> Result<usize>;
}

/// A private distinguisher (seed 001 Def. 3): an ε₀-DP choice of a query on which the
/// data's answers and the state's differ.
pub trait Distinguisher {
    /// Choose a query from the data's counts and the state's normalised answers.
    fn distinguish<R: Rng + CryptoRng + ?Sized>(
        &self,
        counts: &[u64],
        n: usize,
        state_answers: &[f64],
        rng: &mut R,
    ) -> Result<usize>;
}

/// Multiplicative weights over an explicit universe as a DUA, run at accuracy `alpha`
/// (step `η = α/2`).
#[derive(Debug)]
pub struct MwDua<'a> {
    universe: &'a Universe,
    workload: &'a MarginalWorkload,
    supports: CellSupports<'a>,
    eta: f64,
}

impl<'a> MwDua<'a> {
    /// The DUA for accuracy `alpha` (updates use `η = alpha/2`).
    pub fn new(universe: &'a Universe, workload: &'a MarginalWorkload, alpha: f64) -> Result<Self> {
        Ok(MwDua {
            universe,
            workload,
            supports: CellSupports::new(universe, workload)?,
            eta: alpha / 2.0,
        })
    }
}

impl DatabaseUpdate for MwDua<'_> {
    type State = UniverseDistribution;
    fn initial(&self) -> Result<UniverseDistribution> {
        UniverseDistribution::uniform(self.universe.len())
    }
    fn answers(&self, state: &UniverseDistribution) -> Result<Vec<f64>> {
        answers_of(self.universe, self.workload, state)
    }
    fn update(
        &mut self,
        state: &mut UniverseDistribution,
        query: usize,
        estimate: f64,
    ) -> Result<()> {
        let eta = self.eta;
        let sup = self.supports.support(query);
        let current = state.mass(sup);
        // Undershoot (v̂ > Q(Dᵗ)): raise the elements in the query; overshoot: lower them.
        let sign = if estimate > current { 1.0 } else { -1.0 };
        state.multiply(sup, sign * eta);
        state.renormalize();
        Ok(())
    }
    fn bound(&self, alpha: f64) -> Result<usize> {
        mw_dua_bound(alpha, (self.universe.len() as f64).ln())
    }
}

/// The exponential mechanism as a distinguisher (seed 001 Thm 6), run as exact
/// permute-and-flip (pure ε₀; module docs) on the count-unit score `|c_Q(D) − n·Q(Dᵗ)|`
/// (sensitivity 1) by the engine's selection step ([`crate::engine::select`]).
#[derive(Clone, Debug)]
pub struct EmDistinguisher {
    em: PermuteAndFlip,
    selector: Selector,
}

impl EmDistinguisher {
    /// ε₀-DP distinguisher.
    pub fn new(epsilon0: f64) -> Result<Self> {
        let ds = crate::sensitivity::distinguisher_selector_sensitivity(
            distinguisher_score_sensitivity(),
        );
        let em = PermuteAndFlip::new(epsilon0, ds, false)?;
        Ok(EmDistinguisher {
            selector: Selector::PermuteAndFlip(em.clone()),
            em,
        })
    }
    /// The mechanism (for tests of its parameters).
    pub fn mechanism(&self) -> &PermuteAndFlip {
        &self.em
    }
    /// The mechanism as the engine's selector.
    pub fn selector(&self) -> &Selector {
        &self.selector
    }
}

impl Distinguisher for EmDistinguisher {
    fn distinguish<R: Rng + CryptoRng + ?Sized>(
        &self,
        counts: &[u64],
        n: usize,
        state_answers: &[f64],
        rng: &mut R,
    ) -> Result<usize> {
        let scores = distinguisher_scores(counts.iter().map(|&c| c as f64), n, state_answers);
        select(&self.selector, &scores, rng)
    }
}

/// What the IC loop did.
#[derive(Clone, Debug, Default)]
pub struct IcTrace {
    /// The distinguished query of each round.
    pub queries: Vec<usize>,
    /// The noisy count `c_Q(D) + Z` of each round.
    pub noisy_counts: Vec<i64>,
    /// Whether the loop stopped at the 3α/4 test (before `B(α/2)` rounds).
    pub stopped_early: bool,
}

/// Seed 001 Algorithm 1: `rounds = B(α/2)`, per-step ε₀; returns the final state.
#[allow(clippy::too_many_arguments)]
pub fn iterative_construction<U: DatabaseUpdate, Dz: Distinguisher, R: Rng + CryptoRng + ?Sized>(
    counts: &[u64],
    n: usize,
    alpha: f64,
    epsilon0: f64,
    rounds: usize,
    distinguisher: &Dz,
    dua: &mut U,
    rng: &mut R,
) -> Result<(U::State, IcTrace)> {
    ic_loop(
        counts,
        n,
        alpha,
        epsilon0,
        rounds,
        distinguisher,
        dua,
        rng,
        false,
        &mut |_, _| {},
    )
}

/// The Laplace measurement of IC: discrete Laplace of scale `1/ε₀` on a count
/// (sensitivity 1), ε₀-DP.
fn ic_measurement(epsilon0: f64) -> Result<Measurement> {
    let sensitivity = counting_query_sensitivity(Neighbouring::ReplaceOne);
    Ok(Measurement {
        noise: Noise::laplace(crate::calibration::laplace_scale(
            sensitivity as f64,
            epsilon0,
        ))?,
        measured: Measured::Count { sensitivity },
        loss: PrivacyLoss::pure(epsilon0)?,
    })
}

/// The loop of [`iterative_construction`]; `observe(t, answers)` sees the state's answers
/// at the start of round `t` (1-based). `ignore_stop`: never stop at the 3α/4 test (for
/// building a fixed audit history that reaches every round; the release never sets it).
#[allow(clippy::too_many_arguments)]
fn ic_loop<U: DatabaseUpdate, Dz: Distinguisher, R: Rng + CryptoRng + ?Sized>(
    counts: &[u64],
    n: usize,
    alpha: f64,
    epsilon0: f64,
    rounds: usize,
    distinguisher: &Dz,
    dua: &mut U,
    rng: &mut R,
    ignore_stop: bool,
    observe: &mut dyn FnMut(usize, &[f64]),
) -> Result<(U::State, IcTrace)> {
    let lap = ic_measurement(epsilon0)?.noise;
    let mut state = dua.initial()?;
    let mut trace = IcTrace::default();
    for t in 0..rounds {
        let answers = dua.answers(&state)?;
        observe(t + 1, &answers);
        let q = distinguisher.distinguish(counts, n, &answers, rng)?;
        let noisy = measure(&exact_counts(&counts[q..=q])?, &lap, rng)?[0];
        trace.queries.push(q);
        trace.noisy_counts.push(noisy);
        let v = noisy as f64 / n as f64;
        if (v - answers[q]).abs() < 0.75 * alpha && !ignore_stop {
            trace.stopped_early = true;
            return Ok((state, trace));
        }
        dua.update(&mut state, q, v)?;
    }
    Ok((state, trace))
}

/// Parameters of the `ic-mw` mechanism.
#[derive(Clone, Debug)]
pub struct IcParams {
    budget: PrivacyLoss,
    alpha: Option<f64>,
    beta: f64,
    universe_cap: usize,
    progress: Option<ProgressSink>,
}

impl IcParams {
    /// Defaults: α derived from the budget (Thm 5 bisection), β = 0.05, universes up to 2^22.
    pub fn new(budget: PrivacyLoss) -> Self {
        IcParams {
            budget,
            alpha: None,
            beta: 0.05,
            universe_cap: 1 << 22,
            progress: None,
        }
    }
    /// Fix the target α (privacy does not depend on it; the accuracy guarantee does).
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = Some(alpha);
        self
    }
    /// Failure probability β of the accuracy statement.
    pub fn beta(mut self, beta: f64) -> Self {
        self.beta = beta;
        self
    }
    /// Largest universe accepted.
    pub fn universe_cap(mut self, cap: usize) -> Self {
        self.universe_cap = cap;
        self
    }
    /// Report the rounds done of `B(α/2)` as stage "IC-MW rounds" (public: the bound is
    /// fixed by α, the public universe size, the budget and the public n before the loop;
    /// a loop that stops at the 3α/4 test reports the stage complete).
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }
    /// Validates.
    pub fn check(self) -> Result<IterativeConstruction> {
        let budget = self.budget.validate()?;
        if matches!(budget, PrivacyLoss::Zcdp { .. }) {
            return Err(invalid(
                "budget",
                budget.to_string(),
                "pure ε or (ε, δ) only",
            ));
        }
        if let Some(a) = self.alpha
            && !(a > 0.0 && a <= 1.0)
        {
            return Err(invalid("alpha", a, "must be in (0, 1]"));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(invalid("beta", self.beta, "must be in (0, 1)"));
        }
        Ok(IterativeConstruction { p: self, budget })
    }
}

/// The plan of one IC release: α, rounds `B(α/2)`, ε₀ and the accuracy requirement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IcPlan {
    /// Target α.
    pub alpha: f64,
    /// `B(α/2)`.
    pub rounds: usize,
    /// Per-step ε₀ used (dp-core's accounting).
    pub epsilon0: f64,
    /// Thm 4's closed-form ε₀ (reported).
    pub epsilon0_thm4: f64,
    /// Thm 5's requirement on α for ε₀ (α ≥ this ⇒ (α, β)-accurate).
    pub required_alpha: f64,
}

/// The Iterative Construction with MW and the exponential mechanism (`ic-mw`).
#[derive(Clone, Debug)]
pub struct IterativeConstruction {
    p: IcParams,
    budget: PrivacyLoss,
}

impl IterativeConstruction {
    /// The plan for a universe of `ln_universe = ln|𝒳|`, `n` records, `num_queries`.
    pub fn plan(&self, ln_universe: f64, n: usize, num_queries: usize) -> Result<IcPlan> {
        let at = |alpha: f64| -> Result<IcPlan> {
            let rounds = mw_dua_bound(alpha / 2.0, ln_universe)?;
            let epsilon0 = ic_epsilon0(&self.budget, rounds)?;
            Ok(IcPlan {
                alpha,
                rounds,
                epsilon0,
                epsilon0_thm4: ic_epsilon0_thm4(&self.budget, rounds)?,
                required_alpha: ic_accuracy_requirement(
                    epsilon0,
                    n,
                    num_queries,
                    rounds,
                    self.p.beta,
                ),
            })
        };
        if let Some(a) = self.p.alpha {
            return at(a);
        }
        // Smallest α in [1e-3, 1] with required_alpha ≤ α (bisection; 1 if none).
        let ok = |a: f64| -> Result<bool> { Ok(at(a)?.required_alpha <= a) };
        let (mut lo, mut hi) = (1e-3, 1.0);
        if !ok(hi)? {
            return at(hi);
        }
        if ok(lo)? {
            return at(lo);
        }
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if ok(mid)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        at(hi)
    }

    /// The explicit universe of the workload's domain, refused above the cap (a public
    /// check of [`Mechanism::check_inputs`] and of the release).
    fn universe(&self, workload: &MarginalWorkload) -> Result<Universe> {
        Ok(Universe::new(workload.domain(), self.p.universe_cap)?)
    }

    /// The plan for `n` records (public under replace-one) with its distinguisher, after the
    /// checks of its steps' parameters (a public check of [`Mechanism::check_inputs`] and of
    /// the release): `B(α/2)` within its cap, ε₀ for the selections and the measurements.
    fn checked_plan(
        &self,
        universe: &Universe,
        workload: &MarginalWorkload,
        n: usize,
    ) -> Result<(IcPlan, EmDistinguisher)> {
        let plan = self.plan((universe.len() as f64).ln(), n, workload.num_queries())?;
        let dist = EmDistinguisher::new(plan.epsilon0)?;
        ic_measurement(plan.epsilon0)?;
        Ok((plan, dist))
    }

    /// Release with the loop's trace: the data's domain checked, the workload counted, then
    /// [`Self::release_counted`].
    pub fn release_with_trace<R: Rng + CryptoRng + ?Sized>(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut R,
    ) -> Result<(Release, IcTrace, IcPlan)> {
        if data.domain() != workload.domain() {
            return Err(MechanismError::Data {
                reason: "the data's domain is not the workload's".into(),
            });
        }
        let universe = self.universe(workload)?;
        let checked = self.checked_plan(&universe, workload, data.n())?;
        let counts = workload.count_all(data)?;
        self.run_counted(&universe, checked, &counts, data.n(), workload, rng)
    }

    /// [`Self::release_with_trace`] from the exact counts of the workload's tables
    /// (workload order, as [`MarginalWorkload::count_all`] gives them) of a dataset of the
    /// public `n` records: IC-MW reads the data only through these counts (the
    /// distinguisher's scores and the measurements are workload counts), so this is the
    /// same release, draw for draw, as from the records.
    ///
    /// Errors: as the release, and counts of the wrong length or whose tables do not each
    /// count `n` records.
    pub fn release_counted<R: Rng + CryptoRng + ?Sized>(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut R,
    ) -> Result<(Release, IcTrace, IcPlan)> {
        let universe = self.universe(workload)?;
        let checked = self.checked_plan(&universe, workload, n)?;
        self.run_counted(&universe, checked, counts, n, workload, rng)
    }

    /// The release from checked public inputs and the counts (the one path of both).
    fn run_counted<R: Rng + CryptoRng + ?Sized>(
        &self,
        universe: &Universe,
        (plan, dist): (IcPlan, EmDistinguisher),
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut R,
    ) -> Result<(Release, IcTrace, IcPlan)> {
        crate::counts::check_marginal_counts(counts, n, workload)?;
        // IC runs the DUA at accuracy α/2 (B(α/2) rounds).
        let mut dua = MwDua::new(universe, workload, plan.alpha / 2.0)?;
        let sink = self.p.progress.as_ref();
        let (state, trace) = ic_loop(
            counts,
            n,
            plan.alpha,
            plan.epsilon0,
            plan.rounds,
            &dist,
            &mut dua,
            rng,
            false,
            // round t (1-based) starts with t − 1 done; only the round index is reported
            &mut |t, _| report_progress(sink, "IC-MW rounds", t - 1, plan.rounds),
        )?;
        report_progress(sink, "IC-MW rounds", plan.rounds, plan.rounds);
        let answers = answers_of(universe, workload, &state)?;
        let synthetic = synthetic_of(universe, &state.probabilities())?;
        let guaranteed = plan.required_alpha <= plan.alpha;
        let release = Release {
            answers,
            synthetic: Some(synthetic),
            certificate: self.certificate(),
            diagnostics: Diagnostics {
                iterations: Some(trace.queries.len()),
                notes: vec![
                    format!(
                        "IC-MW: α = {:.4}, B(α/2) = {} rounds, ε₀ = {:.4e} (Roth 2011, Thm 4 \
                         closed form {:.4e}), ran {} rounds{}",
                        plan.alpha,
                        plan.rounds,
                        plan.epsilon0,
                        plan.epsilon0_thm4,
                        trace.queries.len(),
                        if trace.stopped_early {
                            ", stopped at the 3α/4 test"
                        } else {
                            ""
                        }
                    ),
                    format!(
                        "Roth 2011, Thm 5/8: (α, β = {})-accuracy {} (requires α ≥ {:.4})",
                        self.p.beta,
                        if guaranteed {
                            "guaranteed"
                        } else {
                            "NOT guaranteed"
                        },
                        plan.required_alpha
                    ),
                ],
                ..Default::default()
            },
        };
        Ok((release, trace, plan))
    }
}

impl Mechanism for IterativeConstruction {
    fn name(&self) -> &'static str {
        "ic-mw"
    }

    fn produces_synthetic(&self) -> bool {
        true
    }
    fn works_over_a_universe(&self) -> bool {
        true
    }

    fn certificate(&self) -> PrivacyCertificate {
        PrivacyCertificate {
            mechanism: "ic-mw".into(),
            loss: self.budget,
            model: crate::PrivacyModel::Central {
                neighbouring: Neighbouring::ReplaceOne,
            },
            approx_equivalent: None,
        }
    }
    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }
    /// The plan's α with probability `1 − β` when Thm 5's requirement holds at it
    /// ([`IterativeConstruction::plan`]); `None` when it does not (no bound is stated).
    fn stated_error_bound(
        &self,
        workload: &MarginalWorkload,
        n: usize,
    ) -> Option<crate::ErrorBound> {
        let universe = workload.domain().universe_size()?;
        let plan = self
            .plan((universe as f64).ln(), n, workload.num_queries())
            .ok()?;
        (plan.required_alpha <= plan.alpha).then(|| crate::ErrorBound {
            statement: "largest error over the answers".into(),
            value: plan.alpha,
            confidence: Some(1.0 - self.p.beta),
            citation: "Roth 2011, Thm 5",
        })
    }
    /// The universe size limit and, with the public n, the plan (`B(α/2)` within its cap)
    /// and its steps' parameters.
    fn check_inputs(&self, workload: &MarginalWorkload, public_n: Option<usize>) -> Result<()> {
        let universe = self.universe(workload)?;
        match public_n {
            Some(n) => self.checked_plan(&universe, workload, n).map(drop),
            None => Ok(()),
        }
    }

    /// The workload's counts and the public n are all IC-MW reads
    /// ([`IterativeConstruction::release_counted`]).
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

impl crate::StepAudited for IterativeConstruction {
    /// Per audited round (default: the first and the last, `B(α/2)`): the exponential
    /// distinguisher (seed 001 Thm 6) and the Laplace-noised answer of
    /// `request.measured_query` (default: the reference run's choice), each claimed ε₀-DP,
    /// built by the engine's [`crate::engine::StepSource`].
    /// The history runs the reference rounds without the 3α/4 stop so that every round is
    /// reached (any fixed history is valid). The whole run: `2B(α/2)` ε₀-DP steps, basic
    /// (pure) or advanced ((ε, δ), δ′ = the budget's δ) composition (Thm 4).
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        request: &crate::StepRequest,
    ) -> Result<crate::StepDecomposition> {
        use crate::steps::{audited_rounds, check_step_data};
        use crate::{StepComposition, StepDecomposition, StepLoss};
        check_step_data(reference, workload, reference.n())?;
        let (n, m) = (reference.n(), workload.num_queries());
        let universe = Universe::new(reference.domain(), self.p.universe_cap)?;
        let plan = self.plan((universe.len() as f64).ln(), n, m)?;
        let rounds = audited_rounds(&request.rounds, &[1, plan.rounds], plan.rounds)?;
        let dist = EmDistinguisher::new(plan.epsilon0)?;
        let eps0 = PrivacyLoss::pure(plan.epsilon0)?;
        let round_plan = RoundPlan {
            selector: dist.selector().clone(),
            select_loss: eps0,
            measurement: ic_measurement(plan.epsilon0)?,
        };
        let mut dua = MwDua::new(&universe, workload, plan.alpha / 2.0)?;
        let mut recorded = Vec::new();
        let mut rng = dp_core::seeded_rng(request.seed);
        let (_, trace) = ic_loop(
            &workload.count_all(reference)?,
            n,
            plan.alpha,
            plan.epsilon0,
            plan.rounds,
            &dist,
            &mut dua,
            &mut rng,
            true,
            &mut |t, answers| {
                if rounds.contains(&t) {
                    recorded.push(RecordedRound {
                        round: t,
                        history: answers.to_vec(),
                        plan: round_plan.clone(),
                        selectable: (0..m).collect(),
                        selected: 0,
                    });
                }
            },
        )?;
        for r in &mut recorded {
            r.selected = trace.queries[r.round - 1];
        }
        let w = workload.clone();
        let counts_of = Arc::new(move |data: &Dataset| exact_counts(&w.count_all(data)?));
        let source = StepSource::counting_queries("ic-mw", workload, n, m, counts_of);
        let composition = match self.budget {
            PrivacyLoss::Approx { delta, .. } if delta > 0.0 => {
                StepComposition::Advanced { delta_prime: delta }
            }
            _ => StepComposition::Basic,
        };
        Ok(StepDecomposition {
            rounds,
            steps: source.round_steps(reference, request, recorded)?,
            losses: vec![StepLoss {
                what: format!(
                    "distinguisher + Laplace answer, rounds 1..={} (B(α/2), α = {:.4})",
                    plan.rounds, plan.alpha
                ),
                count: 2 * plan.rounds as u64,
                loss: eps0,
            }],
            composition,
            accounting: self.budget,
        })
    }
}
