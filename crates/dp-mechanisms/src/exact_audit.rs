//! The **exact-divergence audit** of discrete steps (issue #9 item 2).
//!
//! The sampling step audit (dp-bench `audit::audit_steps`) can only find a lower bound on a
//! step's ε from samples; a wrong *zCDP* charge of a pure-ε step (permute-and-flip charged
//! ε²/8, issue #9 item 1) is invisible to it. This audit computes the step's output
//! distributions **exactly** (closed forms evaluated in `f64`, or sums truncated with the
//! truncated mass bounded and added conservatively) on adversarial neighbouring inputs of
//! small instances and compares the Rényi divergences with the step's own claims:
//!
//! * a ρ-zCDP claim: `D_α(P‖Q) ≤ ρ·α` for every α of [`ALPHAS`], both directions (Bun and
//!   Steinke 2016, Def. 1.1);
//! * a pure ε claim: `D_∞(P‖Q) ≤ ε`.
//!
//! The claims come from the [`AuditedStep`] the mechanism itself builds (its `claimed` and
//! `accounted` losses), and the step's parameters from its [`StepPrimitive`], built from the
//! same selector / noise object the release uses, so a wrong claim in a mechanism is caught
//! here without anyone re-reading the analysis.
//!
//! **Instances.** Selection: every pair of score vectors with 2 or 3 candidates on the grid
//! `{0, ½, 1, 3/2, 2}·Δ`, each score moved by `{−1, −½, 0, ½, 1}·Δ` (monotonic selectors: all
//! moves of one sign); plus, at the step's real number of candidates `m` (when `m ≤ 64`),
//! all-equal scores against one score up and one down by Δ, and against all up but one down
//! (monotonic: one up; all but one up). The two-candidate instance `(0, 0)` vs `(−Δ, Δ)` is
//! the worst case of a bounded-range mechanism. Noisy counts: the count `c` against `c + k`
//! for every integer shift `1 ≤ k ≤ Δ` (the noise is translation invariant, so `c = 0`).
//!
//! **Sensitivities are derived, not declared** (issue #23 §2). A primitive's parameters
//! come from the mechanism — including its sensitivity (the selector's Δ, a count's Δ, a
//! table's changed cells), the very values that set the noise; checked at the declared
//! shift, a wrong Δ would pass. So [`exact_check_step`] first **derives** the shift by
//! brute force ([`derive_sensitivity`]): it enumerates neighbouring datasets over the
//! reference's (tiny) domain — every multiset `B` of `n − 1` records (when there are at most
//! [`MAX_BASES`]; otherwise the reference with one record removed, each way), and for each
//! `B` the pairs `(B + x, B + x′)` (replace-one) or `(B, B + x)` (add/remove) over every
//! record `x, x′` of the domain, under the step's relation — and evaluates the step's
//! [`StepInput`](crate::steps::StepInput) (its scores or exact counts, by the release's own
//! function) on both. The derived shift is the largest `|input_i(D) − input_i(D′)|` (and,
//! for a table, every distinct pattern of moved cells); the instances above are then built
//! at the **derived** shift, not the declared one, the worst pair found is added as an
//! instance of its own, and the step fails if the derived sensitivity exceeds the declared
//! one. A brute-force maximum over small datasets is a lower bound on the true sensitivity:
//! it catches a declared Δ that is too small on small data, not one that is only wrong at
//! scale.
//!
//! **Floating point.** Divergences are evaluated in `f64` by log-sum-exp; a claim passes when
//! the worst divergence is at most the claim times `1 + 1e-9` (the relative evaluation error
//! of sums of ≤ 10⁷ positive terms is below 1e-9).

use std::collections::BTreeSet;

use dp_core::{Neighbouring, PrivacyLoss, Selector};
use dp_queries::Dataset;

use crate::steps::AuditedStep;
use crate::{MechanismError, Result};

/// The Rényi orders checked (α = 1 is KL; the discrete Gaussian, whose support is infinite,
/// is checked at 1.0001 in place of 1, which bounds KL from above).
pub const ALPHAS: [f64; 11] = [
    1.0, 1.01, 1.1, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1000.0,
];

/// Relative evaluation slack of the comparisons (see the module docs).
pub const REL_TOL: f64 = 1e-9;

/// The randomized primitive of a discrete step, with the parameters the release uses.
#[derive(Clone, Debug)]
pub enum StepPrimitive {
    /// Private selection among `candidates` scores by `selector` (its Δ and monotonicity).
    Selection {
        /// The selector the release uses.
        selector: Selector,
        /// The number of candidates in the release.
        candidates: usize,
    },
    /// An integer count plus discrete Gaussian noise of variance `sigma2`; neighbouring
    /// counts differ by at most `sensitivity`.
    DiscreteGaussian {
        /// σ².
        sigma2: f64,
        /// Count sensitivity.
        sensitivity: u64,
    },
    /// A table of integer counts plus independent discrete Gaussian noise of variance
    /// `sigma2` per cell, where neighbouring tables differ by one in at most
    /// `changed_cells` cells (2 for one marginal table under replace-one, 1 under
    /// add/remove). The noise is a product, so every Rényi divergence is `changed_cells`
    /// times the scalar one at shift 1 (additivity over independent coordinates), which is
    /// how it is checked.
    DiscreteGaussianTable {
        /// σ².
        sigma2: f64,
        /// Cells that differ (by one each) between neighbours.
        changed_cells: u64,
    },
    /// A draw with probabilities `∝ exp(η·r_a)` over `candidates` actions with scores `r`
    /// of sensitivity `sensitivity` — DualQuery's exact query sampler
    /// ([`crate::iterative::query_sampler`]), the exponential mechanism at
    /// `ε = 2ηΔ` written with its coefficient `η` as the sampler uses it exactly.
    ExponentialWeights {
        /// η, the coefficient of the scores in the exponent.
        eta: f64,
        /// The declared score sensitivity Δ.
        sensitivity: f64,
        /// The number of actions.
        candidates: usize,
    },
    /// An integer count plus discrete Laplace noise of scale `scale`; neighbouring counts
    /// differ by at most `sensitivity`.
    DiscreteLaplace {
        /// The scale t (pmf ∝ e^{−|x|/t}).
        scale: f64,
        /// Count sensitivity.
        sensitivity: u64,
    },
}

impl StepPrimitive {
    /// Short name of the step type (for the docs table).
    pub fn kind(&self) -> String {
        match self {
            StepPrimitive::Selection { selector, .. } => format!("selection: {}", selector.name()),
            StepPrimitive::DiscreteGaussian { .. } => "measurement: discrete Gaussian".into(),
            StepPrimitive::DiscreteGaussianTable { changed_cells, .. } => {
                format!("measurement: discrete Gaussian table ({changed_cells} cells move)")
            }
            StepPrimitive::DiscreteLaplace { .. } => "measurement: discrete Laplace".into(),
            StepPrimitive::ExponentialWeights { .. } => {
                "selection: exponential weights (exact query sampler)".into()
            }
        }
    }

    /// The declared sensitivity, in the units [`derive_sensitivity`] derives: a selection's
    /// score Δ (ℓ∞ over candidates), a count's Δ, a table's Δ₂² (`changed_cells` cells
    /// moving by one each).
    pub fn declared_sensitivity(&self) -> f64 {
        match self {
            StepPrimitive::Selection { selector, .. } => selector.sensitivity(),
            StepPrimitive::ExponentialWeights { sensitivity, .. } => *sensitivity,
            StepPrimitive::DiscreteGaussian { sensitivity, .. }
            | StepPrimitive::DiscreteLaplace { sensitivity, .. } => *sensitivity as f64,
            StepPrimitive::DiscreteGaussianTable { changed_cells, .. } => *changed_cells as f64,
        }
    }

    fn is_table(&self) -> bool {
        matches!(self, StepPrimitive::DiscreteGaussianTable { .. })
    }
}

/// At most this many base datasets of `n − 1` records are enumerated by
/// [`derive_sensitivity`]; beyond, the bases are the reference minus one record.
pub const MAX_BASES: usize = 4000;

/// At most this many records in the domain of a brute-force derivation.
pub const MAX_UNIVERSE: usize = 256;

/// A step's sensitivity derived by brute force ([`derive_sensitivity`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedSensitivity {
    /// The relation whose pairs were enumerated (the step's).
    pub neighbouring: Neighbouring,
    /// How the base datasets were chosen.
    pub enumeration: String,
    /// Neighbouring pairs evaluated.
    pub pairs: usize,
    /// The largest move of one input coordinate, `max |input_i(D) − input_i(D′)|`.
    pub linf: f64,
    /// The largest squared ℓ2 move `Σ_i (input_i(D) − input_i(D′))²`.
    pub l2_squared: f64,
    /// Some pair moves coordinates in both directions (refutes a monotonic declaration).
    pub mixed_signs: bool,
    /// Every distinct pattern of moved coordinates: the sorted non-zero `|moves|`, rounded
    /// up to integers (for count inputs; used for tables).
    pub patterns: Vec<Vec<u64>>,
    /// The pair of inputs attaining `linf`.
    pub worst_pair: Option<(Vec<f64>, Vec<f64>)>,
}

impl DerivedSensitivity {
    /// The derived value in the units of [`StepPrimitive::declared_sensitivity`].
    pub fn in_units_of(&self, primitive: &StepPrimitive) -> f64 {
        if primitive.is_table() {
            self.l2_squared
        } else {
            self.linf
        }
    }
}

/// The records of `domain` (every code combination), in order.
fn universe(domain: &dp_queries::Domain) -> Result<Vec<Vec<u32>>> {
    let total = domain
        .sizes()
        .iter()
        .try_fold(1usize, |a, &k| a.checked_mul(k as usize))
        .filter(|&t| t <= MAX_UNIVERSE)
        .ok_or_else(|| MechanismError::InvalidParameter {
            name: "domain",
            value: format!("{:?}", domain.sizes()),
            reason: format!(
                "the brute-force sensitivity derivation enumerates at most {MAX_UNIVERSE} records"
            ),
        })?;
    let mut out = Vec::with_capacity(total);
    let mut rec = vec![0u32; domain.sizes().len()];
    for _ in 0..total {
        out.push(rec.clone());
        for (v, &k) in rec.iter_mut().zip(domain.sizes()) {
            *v += 1;
            if *v < k {
                break;
            }
            *v = 0;
        }
    }
    Ok(out)
}

/// `C(a, b)` saturating at `usize::MAX`.
fn binomial(a: usize, b: usize) -> usize {
    let b = b.min(a - b.min(a));
    (0..b).fold(1usize, |acc, i| {
        acc.saturating_mul(a - i)
            .checked_div(i + 1)
            .unwrap_or(usize::MAX)
    })
}

/// Every multiset of `size` indices below `u`, as non-decreasing index lists.
fn multisets(u: usize, size: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = vec![0usize; size];
    loop {
        out.push(cur.clone());
        // next non-decreasing sequence
        let Some(i) = (0..size).rev().find(|&i| cur[i] + 1 < u) else {
            return out;
        };
        let v = cur[i] + 1;
        cur[i..].iter_mut().for_each(|c| *c = v);
    }
}

/// **Brute-force derivation** of `step`'s sensitivity (module docs): `None` if the step has
/// no input. `reference` gives the domain and `n`.
pub fn derive_sensitivity(
    step: &AuditedStep,
    reference: &Dataset,
) -> Result<Option<DerivedSensitivity>> {
    let Some(input) = &step.input else {
        return Ok(None);
    };
    let domain = reference.domain().clone();
    let records = universe(&domain)?;
    let u = records.len();
    let n = reference.n();
    if n == 0 {
        return Err(MechanismError::Data {
            reason: "the brute-force derivation needs a non-empty reference".into(),
        });
    }
    let rows: Vec<Vec<u32>> = (0..n)
        .map(|i| reference.columns().iter().map(|c| c[i]).collect())
        .collect();
    let index_of = |r: &Vec<u32>| records.iter().position(|x| x == r).unwrap_or(0);
    let count = binomial(u + n - 2, n - 1);
    let (bases, enumeration): (Vec<Vec<usize>>, String) = if count <= MAX_BASES {
        (
            multisets(u, n - 1),
            format!("all {count} datasets of n − 1 = {} records", n - 1),
        )
    } else {
        let mut b: BTreeSet<Vec<usize>> = BTreeSet::new();
        for skip in 0..n {
            let mut v: Vec<usize> = (0..n)
                .filter(|&i| i != skip)
                .map(|i| index_of(&rows[i]))
                .collect();
            v.sort_unstable();
            b.insert(v);
        }
        let k = b.len();
        (
            b.into_iter().collect(),
            format!("the reference minus one record ({k} datasets; {count} would be all)"),
        )
    };
    let build = |base: &[usize], extra: Option<usize>| -> Result<Dataset> {
        let mut cols: Vec<Vec<u32>> = vec![Vec::with_capacity(n); domain.sizes().len()];
        for &i in base.iter().chain(extra.as_ref()) {
            for (c, &v) in cols.iter_mut().zip(&records[i]) {
                c.push(v);
            }
        }
        Ok(Dataset::from_columns(domain.clone(), cols)?)
    };
    let mut d = DerivedSensitivity {
        neighbouring: step.neighbouring,
        enumeration,
        pairs: 0,
        linf: 0.0,
        l2_squared: 0.0,
        mixed_signs: false,
        patterns: Vec::new(),
        worst_pair: None,
    };
    let mut patterns: BTreeSet<Vec<u64>> = BTreeSet::new();
    let mut see = |a: &Vec<f64>, b: &Vec<f64>, d: &mut DerivedSensitivity| -> Result<()> {
        if a.len() != b.len() {
            return Err(MechanismError::Numerical {
                what: format!(
                    "step input of length {} on one dataset and {} on its neighbour",
                    a.len(),
                    b.len()
                ),
            });
        }
        let (mut up, mut down, mut linf, mut l2) = (false, false, 0.0f64, 0.0f64);
        let mut pat = Vec::new();
        for (x, y) in a.iter().zip(b) {
            let m = y - x;
            up |= m > 0.0;
            down |= m < 0.0;
            linf = linf.max(m.abs());
            l2 += m * m;
            if m != 0.0 {
                pat.push(m.abs().ceil() as u64);
            }
        }
        d.pairs += 1;
        d.mixed_signs |= up && down;
        d.l2_squared = d.l2_squared.max(l2);
        if linf > d.linf || d.worst_pair.is_none() {
            d.linf = d.linf.max(linf);
            d.worst_pair = Some((a.clone(), b.clone()));
        }
        pat.sort_unstable();
        if !pat.is_empty() {
            patterns.insert(pat);
        }
        Ok(())
    };
    for base in &bases {
        let with: Vec<Vec<f64>> = (0..u)
            .map(|x| input(&build(base, Some(x))?))
            .collect::<Result<_>>()?;
        match step.neighbouring {
            Neighbouring::ReplaceOne => {
                for a in 0..u {
                    for b in a + 1..u {
                        see(&with[a], &with[b], &mut d)?;
                    }
                }
            }
            Neighbouring::AddRemove => {
                let without = input(&build(base, None)?)?;
                for w in &with {
                    see(&without, w, &mut d)?;
                }
            }
        }
    }
    d.patterns = patterns.into_iter().collect();
    Ok(Some(d))
}

/// The exact check of one claim.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactClaimCheck {
    /// The claim.
    pub claim: PrivacyLoss,
    /// The claimed parameter: ρ for zCDP, ε for pure.
    pub claimed: f64,
    /// The worst divergence found in the claim's units: `max D_α/α` over the α grid (zCDP) or
    /// `max D_∞` (pure), over all instances and both directions.
    pub worst: f64,
    /// `claimed − worst`.
    pub margin: f64,
    /// The instance and order attaining `worst`.
    pub witness: String,
    /// `worst ≤ claimed·(1 + REL_TOL)`.
    pub passed: bool,
}

/// The exact audit of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactStepCheck {
    /// The step's label.
    pub label: String,
    /// The step type ([`StepPrimitive::kind`]).
    pub kind: String,
    /// Neighbouring instances checked.
    pub instances: usize,
    /// One check per distinct claim of the step (`claimed`, and `accounted` if different).
    pub checks: Vec<ExactClaimCheck>,
    /// The primitive's declared sensitivity ([`StepPrimitive::declared_sensitivity`]).
    pub declared_sensitivity: f64,
    /// The brute-force derivation, when the check was run at the derived shift.
    pub derived: Option<DerivedSensitivity>,
}

impl ExactStepCheck {
    /// The derived sensitivity is within the declared one (relative slack [`REL_TOL`]);
    /// `true` without a derivation.
    pub fn sensitivity_ok(&self) -> bool {
        self.derived.as_ref().is_none_or(|d| {
            let v = if self
                .kind
                .starts_with("measurement: discrete Gaussian table")
            {
                d.l2_squared
            } else {
                d.linf
            };
            v <= self.declared_sensitivity * (1.0 + REL_TOL)
        })
    }

    /// Every claim passed at the derived shift, and the derived sensitivity is within the
    /// declared one.
    pub fn passed(&self) -> bool {
        self.sensitivity_ok() && self.checks.iter().all(|c| c.passed)
    }
}

/// `D_α(P‖Q)` of two finite distributions (α = 1: KL; α = ∞: max divergence).
pub fn renyi_divergence(p: &[f64], q: &[f64], alpha: f64) -> f64 {
    let pairs = p.iter().zip(q).filter(|(a, _)| **a > 0.0);
    if alpha == 1.0 {
        return pairs.map(|(a, b)| a * (a.ln() - b.ln())).sum();
    }
    if alpha.is_infinite() {
        return pairs
            .map(|(a, b)| a.ln() - b.ln())
            .fold(f64::NEG_INFINITY, f64::max);
    }
    let logs: Vec<f64> = pairs
        .map(|(a, b)| alpha * a.ln() + (1.0 - alpha) * b.ln())
        .collect();
    log_sum_exp(&logs) / (alpha - 1.0)
}

fn log_sum_exp(logs: &[f64]) -> f64 {
    let m = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m.is_infinite() {
        return m;
    }
    m + logs.iter().map(|l| (l - m).exp()).sum::<f64>().ln()
}

/// Tracks the worst divergence for one claim.
struct Tracker {
    claim: PrivacyLoss,
    claimed: f64,
    zcdp: bool,
    worst: f64,
    witness: String,
}

impl Tracker {
    fn new(claim: PrivacyLoss) -> Result<Option<Self>> {
        Ok(match claim.validate()? {
            PrivacyLoss::Zcdp { rho } => Some(Tracker {
                claim,
                claimed: rho,
                zcdp: true,
                worst: 0.0,
                witness: String::new(),
            }),
            PrivacyLoss::Pure { epsilon } => Some(Tracker {
                claim,
                claimed: epsilon,
                zcdp: false,
                worst: 0.0,
                witness: String::new(),
            }),
            // (ε, δ) claims are not audited here (no step makes one)
            PrivacyLoss::Approx { .. } => None,
        })
    }

    /// Record `D_α = d` (α = ∞ for the max divergence).
    fn see(&mut self, alpha: f64, d: f64, what: &dyn Fn() -> String) {
        let v = match (self.zcdp, alpha.is_infinite()) {
            (true, false) => d / alpha,
            (false, true) => d,
            _ => return,
        };
        if v > self.worst || v.is_nan() {
            self.worst = if v.is_nan() { f64::INFINITY } else { v };
            self.witness = format!("{} at α = {alpha}", what());
        }
    }

    fn finish(self) -> ExactClaimCheck {
        ExactClaimCheck {
            claim: self.claim,
            claimed: self.claimed,
            worst: self.worst,
            margin: self.claimed - self.worst,
            passed: self.worst <= self.claimed * (1.0 + REL_TOL),
            witness: self.witness,
        }
    }
}

/// Check `claims` for `primitive` exactly at its **declared** sensitivity (no derivation;
/// see [`exact_check_step`] for the audit of a mechanism's step).
pub fn exact_check(
    label: &str,
    primitive: &StepPrimitive,
    claims: &[PrivacyLoss],
) -> Result<ExactStepCheck> {
    exact_check_at(label, primitive, claims, None)
}

/// Check `claims` for `primitive` exactly at the shift `derived` (module docs), or at the
/// declared sensitivity when `derived` is `None`.
pub fn exact_check_at(
    label: &str,
    primitive: &StepPrimitive,
    claims: &[PrivacyLoss],
    derived: Option<&DerivedSensitivity>,
) -> Result<ExactStepCheck> {
    let mut trackers = Vec::new();
    for c in claims {
        if let Some(t) = Tracker::new(*c)?
            && !trackers.iter().any(|x: &Tracker| x.claim == t.claim)
        {
            trackers.push(t);
        }
    }
    // a count's shifts: 1..=Δ (derived: its largest move, rounded up)
    let count_shift = |declared: u64| -> u64 { derived.map_or(declared, |d| d.linf.ceil() as u64) };
    let instances = match primitive {
        StepPrimitive::Selection {
            selector,
            candidates,
        } => {
            let (delta, mono) = match derived {
                Some(d) => (d.linf, selector.monotonic() && !d.mixed_signs),
                None => (selector.sensitivity(), selector.monotonic()),
            };
            let law = |v: &[f64]| Ok(selector.probabilities(v)?);
            check_selection(&law, delta, mono, *candidates, derived, &mut trackers)?
        }
        StepPrimitive::ExponentialWeights {
            eta,
            sensitivity,
            candidates,
        } => {
            let delta = derived.map_or(*sensitivity, |d| d.linf);
            let law = |v: &[f64]| exponential_weights(*eta, v);
            check_selection(&law, delta, false, *candidates, derived, &mut trackers)?
        }
        StepPrimitive::DiscreteGaussian {
            sigma2,
            sensitivity,
        } => check_dgauss(
            *sigma2,
            &shift_patterns(count_shift(*sensitivity)),
            &mut trackers,
        )?,
        StepPrimitive::DiscreteGaussianTable {
            sigma2,
            changed_cells,
        } => {
            let patterns = match derived {
                Some(d) => d.patterns.clone(),
                None => vec![vec![1; *changed_cells as usize]],
            };
            check_dgauss(*sigma2, &patterns, &mut trackers)?
        }
        StepPrimitive::DiscreteLaplace { scale, sensitivity } => {
            check_dlap(*scale, count_shift(*sensitivity), &mut trackers)?
        }
    };
    Ok(ExactStepCheck {
        label: label.to_string(),
        kind: primitive.kind(),
        instances,
        checks: trackers.into_iter().map(Tracker::finish).collect(),
        declared_sensitivity: primitive.declared_sensitivity(),
        derived: derived.cloned(),
    })
}

/// One-coordinate shift patterns `[k]` for `1 ≤ k ≤ max` (at most 16).
fn shift_patterns(max: u64) -> Vec<Vec<u64>> {
    (1..=max.min(16)).map(|k| vec![k]).collect()
}

/// The law `∝ exp(η·(r_a − max r))` of [`StepPrimitive::ExponentialWeights`].
fn exponential_weights(eta: f64, scores: &[f64]) -> Result<Vec<f64>> {
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if scores.is_empty() || !best.is_finite() {
        return Err(MechanismError::Numerical {
            what: "exponential weights of no or non-finite scores".into(),
        });
    }
    let w: Vec<f64> = scores.iter().map(|r| (eta * (r - best)).exp()).collect();
    let z: f64 = w.iter().sum();
    Ok(w.iter().map(|x| x / z).collect())
}

/// The exact audit of a mechanism's step with a primitive, against its `claimed` and
/// `accounted` losses, **at the sensitivity derived by brute force** over neighbouring
/// datasets of `reference`'s domain and size ([`derive_sensitivity`]; module docs); `None`
/// for steps without a primitive. A step with a primitive but no input is checked at its
/// declared sensitivity (`derived` is then `None`; the CI test requires an input).
pub fn exact_check_step(step: &AuditedStep, reference: &Dataset) -> Result<Option<ExactStepCheck>> {
    match &step.primitive {
        None => Ok(None),
        Some(p) => {
            let derived = derive_sensitivity(step, reference)?;
            Ok(Some(exact_check_at(
                &step.label,
                p,
                &[step.claimed, step.accounted],
                derived.as_ref(),
            )?))
        }
    }
}

fn see_pair(trackers: &mut [Tracker], p: &[f64], q: &[f64], what: &dyn Fn() -> String) {
    for (a, b, dir) in [(p, q, "P‖Q"), (q, p, "Q‖P")] {
        for alpha in ALPHAS.iter().copied().chain([f64::INFINITY]) {
            let d = renyi_divergence(a, b, alpha);
            let w = || format!("{} ({dir})", what());
            for t in trackers.iter_mut() {
                t.see(alpha, d, &w);
            }
        }
    }
}

fn grid_vectors(values: &[f64], n: usize) -> Vec<Vec<f64>> {
    let mut out = vec![vec![]];
    for _ in 0..n {
        let mut next = Vec::new();
        for v in &out {
            for &x in values {
                let mut w = v.clone();
                w.push(x);
                next.push(w);
            }
        }
        out = next;
    }
    out
}

type Law<'a> = dyn Fn(&[f64]) -> Result<Vec<f64>> + 'a;

fn check_selection(
    law: &Law<'_>,
    delta: f64,
    mono: bool,
    candidates: usize,
    derived: Option<&DerivedSensitivity>,
    trackers: &mut [Tracker],
) -> Result<usize> {
    let mut count = 0usize;
    // the worst pair the brute force found, as an instance of its own
    if let Some((a, b)) = derived.and_then(|d| d.worst_pair.as_ref()) {
        let (p, q) = (law(a)?, law(b)?);
        see_pair(trackers, &p, &q, &|| {
            "the brute force's worst neighbouring pair".into()
        });
        count += 1;
    }
    if delta == 0.0 {
        // no score moves: the output law is the same on every neighbour
        return Ok(count);
    }
    let grid: Vec<f64> = [0.0, 0.5, 1.0, 1.5, 2.0]
        .iter()
        .map(|x| x * delta)
        .collect();
    let moves: Vec<f64> = [-1.0, -0.5, 0.0, 0.5, 1.0]
        .iter()
        .map(|x| x * delta)
        .collect();
    for n in 2..=3usize {
        let shifts: Vec<Vec<f64>> = grid_vectors(&moves, n)
            .into_iter()
            .filter(|s| !mono || s.iter().all(|&x| x >= 0.0) || s.iter().all(|&x| x <= 0.0))
            .collect();
        for d in grid_vectors(&grid, n) {
            let p = law(&d)?;
            for s in &shifts {
                let d2: Vec<f64> = d.iter().zip(s).map(|(a, b)| a + b).collect();
                let q = law(&d2)?;
                see_pair(trackers, &p, &q, &|| format!("scores {d:?} vs {d2:?}"));
                count += 1;
            }
        }
    }
    if (2..=64).contains(&candidates) {
        let m = candidates;
        let base = vec![0.0; m];
        let mut structured: Vec<Vec<f64>> = Vec::new();
        if mono {
            let mut one = base.clone();
            one[0] = delta;
            structured.push(one);
            let mut most = vec![delta; m];
            most[m - 1] = 0.0;
            structured.push(most);
        } else {
            let mut updown = base.clone();
            updown[0] = -delta;
            updown[1] = delta;
            structured.push(updown);
            let mut most = vec![delta; m];
            most[m - 1] = -delta;
            structured.push(most);
        }
        let p = law(&base)?;
        for d2 in structured {
            let q = law(&d2)?;
            see_pair(trackers, &p, &q, &|| {
                format!("{m} equal scores vs {:?}…", &d2[..d2.len().min(4)])
            });
            count += 1;
        }
    }
    Ok(count)
}

/// `ln Σ_{x ∈ ℤ} exp(−(x − s)²/(2σ²))` from above: the window `|x − s| ≤ K` summed, plus
/// the bound `2·e^{−K²/(2σ²)}/(1 − e^{−(2K+1)/(2σ²)})` on the rest (consecutive terms
/// beyond K shrink by at least e^{−(2K+1)/(2σ²)}), or from below: the window alone.
fn ln_theta(s: f64, sigma2: f64, k: f64, upper: bool) -> f64 {
    let lo = (s - k).ceil() as i64;
    let hi = (s + k).floor() as i64;
    let logs: Vec<f64> = (lo..=hi)
        .map(|x| -((x as f64 - s).powi(2)) / (2.0 * sigma2))
        .collect();
    let mut v = log_sum_exp(&logs);
    if upper {
        let tail_log = std::f64::consts::LN_2
            - k * k / (2.0 * sigma2)
            - (-(-(2.0 * k + 1.0) / (2.0 * sigma2)).exp_m1()).ln();
        v = log_sum_exp(&[v, tail_log]);
    }
    v
}

/// Discrete Gaussian: `D_α(N_ℤ(0, σ²) ‖ N_ℤ(k, σ²))` for every shift pattern (a product of
/// independent coordinates moved by `k_1, k_2, …`: the divergences add). With
/// `s = (1 − α)k`, `Σ_x p(x)^α q(x)^{1−α} = e^{−α(1−α)k²/(2σ²)}·Θ(s)/Θ(0)` where `Θ(s) =
/// Σ_x e^{−(x−s)²/(2σ²)}` (complete the square); Θ(s) is bounded from above and Θ(0) from
/// below (truncation at K = 40σ + 50, the rest bounded), so the result is an upper bound.
/// α = 1 is replaced by 1.0001 (D_α is non-decreasing in α). The max divergence is
/// infinite. Symmetric: `D_α(Q‖P) = D_α(P‖Q)` (reflection `x ↦ k − x`).
fn check_dgauss(sigma2: f64, patterns: &[Vec<u64>], trackers: &mut [Tracker]) -> Result<usize> {
    if !(sigma2 > 0.0 && sigma2.is_finite()) {
        return Err(MechanismError::InvalidParameter {
            name: "sigma2",
            value: sigma2.to_string(),
            reason: "the exact audit needs σ² > 0".into(),
        });
    }
    let kwin = 40.0 * sigma2.sqrt() + 50.0;
    let ln_z = ln_theta(0.0, sigma2, kwin, false);
    let one = |k: f64, alpha: f64| -> f64 {
        let s = (1.0 - alpha) * k;
        let ln_sum = -alpha * (1.0 - alpha) * k * k / (2.0 * sigma2)
            + ln_theta(s, sigma2, kwin, true)
            - ln_z;
        ln_sum / (alpha - 1.0)
    };
    let mut count = 0;
    for pat in patterns.iter().filter(|p| !p.is_empty()) {
        for alpha in ALPHAS {
            let alpha = if alpha == 1.0 { 1.0001 } else { alpha };
            let d: f64 = pat.iter().map(|&k| one(k as f64, alpha)).sum();
            for t in trackers.iter_mut() {
                t.see(alpha, d, &|| format!("counts moved by {pat:?}"));
            }
        }
        for t in trackers.iter_mut() {
            t.see(f64::INFINITY, f64::INFINITY, &|| {
                format!("counts moved by {pat:?} (unbounded likelihood ratio)")
            });
        }
        count += 1;
    }
    Ok(count)
}

/// Discrete Laplace (pmf ∝ e^{−|x|/t}): `P` at 0, `Q` at `k`. The log-ratio
/// `(|x − k| − |x|)/t` is constant for `x ≤ 0` and for `x ≥ k`, so the max divergence is
/// attained in `[−1, k + 1]`. `Σ p^α q^{1−α}`: the window `[−2, k + 2]` summed and the two
/// tails beyond it added in closed form (outside `[0, k]` each term is the previous one times
/// e^{−1/t}, a geometric series), so no truncation.
fn check_dlap(scale: f64, sensitivity: u64, trackers: &mut [Tracker]) -> Result<usize> {
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(MechanismError::InvalidParameter {
            name: "scale",
            value: scale.to_string(),
            reason: "the exact audit needs t > 0".into(),
        });
    }
    let ln_z = {
        // Z = Σ e^{−|x|/t} = (1 + e^{−1/t})/(1 − e^{−1/t})
        let r = (-1.0 / scale).exp();
        (1.0 + r).ln() - (-(-1.0 / scale).exp_m1()).ln()
    };
    let lp = |x: f64, c: f64| -(x - c).abs() / scale - ln_z;
    let w = 2.0;
    let mut count = 0;
    for k in 1..=sensitivity.min(16) {
        let kf = k as f64;
        let dmax = (-1..=(k as i64 + 1))
            .map(|x| lp(x as f64, 0.0) - lp(x as f64, kf))
            .fold(f64::NEG_INFINITY, f64::max);
        let dmax_rev = (-1..=(k as i64 + 1))
            .map(|x| lp(x as f64, kf) - lp(x as f64, 0.0))
            .fold(f64::NEG_INFINITY, f64::max);
        for t in trackers.iter_mut() {
            t.see(f64::INFINITY, dmax.max(dmax_rev), &|| {
                format!("count c vs c + {k}")
            });
        }
        for alpha in ALPHAS {
            let alpha = if alpha == 1.0 { 1.0001 } else { alpha };
            let lo = -(w as i64);
            let hi = k as i64 + w as i64;
            let mut logs: Vec<f64> = (lo..=hi)
                .map(|x| alpha * lp(x as f64, 0.0) + (1.0 - alpha) * lp(x as f64, kf))
                .collect();
            // tails: x = lo − j and x = hi + j, j ≥ 1, geometric with ratio e^{−1/t}
            let ln_geo = (-1.0 / scale) - (-(-1.0 / scale).exp_m1()).ln();
            logs.push(logs[0] + ln_geo);
            let last = logs[logs.len() - 2];
            logs.push(last + ln_geo);
            let d = log_sum_exp(&logs) / (alpha - 1.0);
            for t in trackers.iter_mut() {
                t.see(alpha, d, &|| format!("count c vs c + {k}"));
            }
        }
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_core::{ExponentialMechanism, PermuteAndFlip};

    fn rho(r: f64) -> PrivacyLoss {
        PrivacyLoss::Zcdp { rho: r }
    }

    /// Canaries: each wrong claim is caught, each right one passes.
    #[test]
    fn canaries_are_caught() {
        let eps = 0.5;
        let pf = Selector::PermuteAndFlip(PermuteAndFlip::new(eps, 1.0, false).unwrap());
        let em = Selector::Exponential(ExponentialMechanism::new(eps, 1.0, false).unwrap());
        let sel = |s: &Selector| StepPrimitive::Selection {
            selector: s.clone(),
            candidates: 8,
        };
        // the old, wrong charge of permute-and-flip
        let c = exact_check("pf ε²/8", &sel(&pf), &[rho(eps * eps / 8.0)]).unwrap();
        assert!(!c.passed(), "{c:?}");
        // its charges now, and the exponential mechanism's
        assert!(
            exact_check("pf", &sel(&pf), &[pf.zcdp_privacy(), pf.privacy()])
                .unwrap()
                .passed()
        );
        let c = exact_check("em", &sel(&em), &[em.zcdp_privacy(), em.privacy()]).unwrap();
        assert!(c.passed(), "{c:?}");
        // a pure claim below ε is caught (permute-and-flip attains ε with two candidates)
        let c = exact_check(
            "pf",
            &sel(&pf),
            &[PrivacyLoss::Pure {
                epsilon: 0.99 * eps,
            }],
        )
        .unwrap();
        assert!(!c.passed());
        // discrete Gaussian σ² = 4, Δ = 1: ρ = 1/8 exactly; 0.99/8 is caught
        // a replace-one table: two cells move by one, ρ = 2·1/(2σ²) = 0.25 at σ² = 4
        let t = StepPrimitive::DiscreteGaussianTable {
            sigma2: 4.0,
            changed_cells: 2,
        };
        let c = exact_check("table", &t, &[rho(0.25)]).unwrap();
        assert!(c.passed() && c.checks[0].margin < 1e-6, "{c:?}");
        assert!(!exact_check("table", &t, &[rho(0.125)]).unwrap().passed());
        let g = StepPrimitive::DiscreteGaussian {
            sigma2: 4.0,
            sensitivity: 1,
        };
        let c = exact_check("dg", &g, &[rho(0.125)]).unwrap();
        assert!(c.passed() && c.checks[0].margin < 1e-6, "{c:?}");
        assert!(
            !exact_check("dg", &g, &[rho(0.99 * 0.125)])
                .unwrap()
                .passed()
        );
        assert!(
            !exact_check("dg", &g, &[PrivacyLoss::Pure { epsilon: 100.0 }])
                .unwrap()
                .passed()
        );
        // discrete Laplace t = 2, Δ = 1: ε = 1/2 exactly (the max divergence); ε²/2 zCDP holds
        let l = StepPrimitive::DiscreteLaplace {
            scale: 2.0,
            sensitivity: 1,
        };
        let c = exact_check("dl", &l, &[PrivacyLoss::Pure { epsilon: 0.5 }, rho(0.125)]).unwrap();
        assert!(c.passed(), "{c:?}");
        assert!((c.checks[0].worst - 0.5).abs() < 1e-12);
        assert!(
            !exact_check("dl", &l, &[PrivacyLoss::Pure { epsilon: 0.49 }])
                .unwrap()
                .passed()
        );
        // a discrete Laplace step is not ε²/8-zCDP at ε = Δ/t
        assert!(
            !exact_check("dl", &l, &[rho(0.5 * 0.5 / 8.0)])
                .unwrap()
                .passed()
        );
    }

    #[test]
    fn renyi_by_hand() {
        // P = (½, ½), Q = (¼, ¾): KL = ½ ln 2 + ½ ln(2/3); D_2 = ln(¼/¼ + ¼/¾) = ln(4/3);
        // D_∞ = ln 2
        let (p, q) = ([0.5, 0.5], [0.25, 0.75]);
        let kl = 0.5 * 2f64.ln() + 0.5 * (2.0f64 / 3.0).ln();
        assert!((renyi_divergence(&p, &q, 1.0) - kl).abs() < 1e-15);
        assert!((renyi_divergence(&p, &q, 2.0) - (4.0f64 / 3.0).ln()).abs() < 1e-15);
        assert!((renyi_divergence(&p, &q, f64::INFINITY) - 2f64.ln()).abs() < 1e-15);
    }
}
