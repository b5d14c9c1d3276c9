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
//! **Floating point.** Divergences are evaluated in `f64` by log-sum-exp; a claim passes when
//! the worst divergence is at most the claim times `1 + 1e-9` (the relative evaluation error
//! of sums of ≤ 10⁷ positive terms is below 1e-9).

use dp_core::{PrivacyLoss, Selector};

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
        }
    }
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
}

impl ExactStepCheck {
    /// Every claim passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
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
    /// Multiplier of every divergence seen (independent coordinates, see
    /// [`StepPrimitive::DiscreteGaussianTable`]).
    scale: f64,
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
                scale: 1.0,
            }),
            PrivacyLoss::Pure { epsilon } => Some(Tracker {
                claim,
                claimed: epsilon,
                zcdp: false,
                worst: 0.0,
                witness: String::new(),
                scale: 1.0,
            }),
            // (ε, δ) claims are not audited here (no step makes one)
            PrivacyLoss::Approx { .. } => None,
        })
    }

    /// Record `D_α = d` (α = ∞ for the max divergence).
    fn see(&mut self, alpha: f64, d: f64, what: &dyn Fn() -> String) {
        let d = d * self.scale;
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

/// Check `claims` for `primitive` exactly (see the module docs).
pub fn exact_check(
    label: &str,
    primitive: &StepPrimitive,
    claims: &[PrivacyLoss],
) -> Result<ExactStepCheck> {
    let mut trackers = Vec::new();
    for c in claims {
        if let Some(t) = Tracker::new(*c)?
            && !trackers.iter().any(|x: &Tracker| x.claim == t.claim)
        {
            trackers.push(t);
        }
    }
    let instances = match primitive {
        StepPrimitive::Selection {
            selector,
            candidates,
        } => check_selection(selector, *candidates, &mut trackers)?,
        StepPrimitive::DiscreteGaussian {
            sigma2,
            sensitivity,
        } => check_dgauss(*sigma2, *sensitivity, &mut trackers)?,
        StepPrimitive::DiscreteGaussianTable {
            sigma2,
            changed_cells,
        } => {
            trackers
                .iter_mut()
                .for_each(|t| t.scale = *changed_cells as f64);
            check_dgauss(*sigma2, 1, &mut trackers)?
        }
        StepPrimitive::DiscreteLaplace { scale, sensitivity } => {
            check_dlap(*scale, *sensitivity, &mut trackers)?
        }
    };
    Ok(ExactStepCheck {
        label: label.to_string(),
        kind: primitive.kind(),
        instances,
        checks: trackers.into_iter().map(Tracker::finish).collect(),
    })
}

/// The exact audit of a step with a primitive, against its `claimed` and `accounted`
/// losses; `None` for steps without one.
pub fn exact_check_step(step: &AuditedStep) -> Result<Option<ExactStepCheck>> {
    match &step.primitive {
        None => Ok(None),
        Some(p) => Ok(Some(exact_check(
            &step.label,
            p,
            &[step.claimed, step.accounted],
        )?)),
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

fn check_selection(
    selector: &Selector,
    candidates: usize,
    trackers: &mut [Tracker],
) -> Result<usize> {
    let delta = selector.sensitivity();
    let mono = selector.monotonic();
    let grid: Vec<f64> = [0.0, 0.5, 1.0, 1.5, 2.0]
        .iter()
        .map(|x| x * delta)
        .collect();
    let moves: Vec<f64> = [-1.0, -0.5, 0.0, 0.5, 1.0]
        .iter()
        .map(|x| x * delta)
        .collect();
    let mut count = 0usize;
    for n in 2..=3usize {
        let shifts: Vec<Vec<f64>> = grid_vectors(&moves, n)
            .into_iter()
            .filter(|s| !mono || s.iter().all(|&x| x >= 0.0) || s.iter().all(|&x| x <= 0.0))
            .collect();
        for d in grid_vectors(&grid, n) {
            let p = selector.probabilities(&d)?;
            for s in &shifts {
                let d2: Vec<f64> = d.iter().zip(s).map(|(a, b)| a + b).collect();
                let q = selector.probabilities(&d2)?;
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
        let p = selector.probabilities(&base)?;
        for d2 in structured {
            let q = selector.probabilities(&d2)?;
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

/// Discrete Gaussian: `D_α(N_ℤ(0, σ²) ‖ N_ℤ(k, σ²))` for `1 ≤ k ≤ Δ`. With `s = (1 − α)k`,
/// `Σ_x p(x)^α q(x)^{1−α} = e^{−α(1−α)k²/(2σ²)}·Θ(s)/Θ(0)` where `Θ(s) = Σ_x
/// e^{−(x−s)²/(2σ²)}` (complete the square); Θ(s) is bounded from above and Θ(0) from below
/// (truncation at K = 40σ + 50, the rest bounded), so the result is an upper bound. α = 1 is
/// replaced by 1.0001 (D_α is non-decreasing in α). The max divergence is infinite.
fn check_dgauss(sigma2: f64, sensitivity: u64, trackers: &mut [Tracker]) -> Result<usize> {
    if !(sigma2 > 0.0 && sigma2.is_finite()) || sensitivity == 0 {
        return Err(MechanismError::InvalidParameter {
            name: "sigma2",
            value: sigma2.to_string(),
            reason: "the exact audit needs σ² > 0 and Δ ≥ 1".into(),
        });
    }
    let kwin = 40.0 * sigma2.sqrt() + 50.0;
    let ln_z = ln_theta(0.0, sigma2, kwin, false);
    let mut count = 0;
    for k in 1..=sensitivity.min(16) {
        let k = k as f64;
        for alpha in ALPHAS {
            let alpha = if alpha == 1.0 { 1.0001 } else { alpha };
            let s = (1.0 - alpha) * k;
            let ln_sum = -alpha * (1.0 - alpha) * k * k / (2.0 * sigma2)
                + ln_theta(s, sigma2, kwin, true)
                - ln_z;
            let d = ln_sum / (alpha - 1.0);
            // symmetric: D_α(Q‖P) = D_α(P‖Q) (reflection x ↦ k − x)
            for t in trackers.iter_mut() {
                t.see(alpha, d, &|| format!("count c vs c + {k}"));
            }
        }
        for t in trackers.iter_mut() {
            t.see(f64::INFINITY, f64::INFINITY, &|| {
                format!("count c vs c + {k} (unbounded likelihood ratio)")
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
    if !(scale > 0.0 && scale.is_finite()) || sensitivity == 0 {
        return Err(MechanismError::InvalidParameter {
            name: "scale",
            value: scale.to_string(),
            reason: "the exact audit needs t > 0 and Δ ≥ 1".into(),
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
