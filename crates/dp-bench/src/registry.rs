//! Mechanisms by name, and the mapping from command-line budget flags to a privacy loss.

use std::sync::{Arc, OnceLock};

use crate::{BenchError, Result, quoted};
use dp_core::{Neighbouring, Num, PrivacyLoss};
use dp_mechanisms::{DualQueryParams, IcParams, MwemParams};
use dp_mechanisms::{GaussianParams, LaplaceParams, Mechanism, PostProcessing};

/// The mechanisms the `dpqr` program and the bench can run, with one-line descriptions.
pub const MECHANISMS: &[(&str, &str)] = &[
    (
        "gaussian",
        "Gaussian answer perturbation (exact discrete Gaussian on counts), ρ-zCDP",
    ),
    (
        "laplace",
        "Laplace answer perturbation (exact discrete Laplace on counts), pure ε-DP",
    ),
    (
        "projection",
        "projection mechanism (Błasiok, Bun, Nikolov, Steinke 2019, Lemma 2.2): discrete Gaussian + Frank–Wolfe projection onto conv 𝒳, weighted synthetic records; ρ-zCDP, replace-one; universes ≤ 2^22",
    ),
    (
        "coarse-projection",
        "coarse projection (Błasiok, Bun, Nikolov, Steinke 2019, §4.1): round to an α/2-cover, noise, project onto its hull; ρ-zCDP, replace-one",
    ),
    (
        "chaining",
        "chaining for average error (Błasiok, Bun, Nikolov, Steinke 2019, §4.2): ρ split over the non-trivial levels of the Lemma 4.2 decomposition; ρ-zCDP, replace-one",
    ),
    (
        "chaining-worst-case",
        "chaining for worst-case error (Błasiok, Bun, Nikolov, Steinke 2019, §4.3, Thm 1.5): ℓ∞ Lemma 4.2 decomposition, MWEM-style private multiplicative weights per non-trivial level, ρ split over them; ρ-zCDP, replace-one",
    ),
    (
        "adaptive-projection",
        "adaptive projection (Roth 2011's Iterative Construction with projection onto the marginal polytope, AIM-style rounds): exponential-mechanism selection of the worst-fitted marginal, discrete Gaussian measurement, re-estimate; any domain size; ρ-zCDP, add/remove or replace-one",
    ),
    (
        "mwem",
        "MWEM (Hardt, Ligett, McSherry 2012), synthetic distribution over the universe; pure ε, or ρ-zCDP",
    ),
    (
        "ic-mw",
        "Iterative Construction, MW + exponential mechanism (Roth 2011); pure ε or (ε, δ)",
    ),
    (
        "dualquery",
        "DualQuery (Gaboardi, Gallego Arias, Hsu, Roth, Wu 2014), synthetic records; pure ε (Thm 4.2) or (ε, δ) (Thm 4.3)",
    ),
];

/// The budget flags as given: `--epsilon`, `--delta`, `--rho`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BudgetArgs {
    /// ε.
    pub epsilon: Option<f64>,
    /// δ.
    pub delta: Option<f64>,
    /// ρ (zCDP).
    pub rho: Option<f64>,
}

/// `Ok` if `value` of the flag `flag` (its parameter written `symbol`) is a finite number
/// above zero, and below one for δ; otherwise an error that says the value is out of range
/// and what to give instead.
fn check_flag(flag: &str, symbol: &str, value: f64) -> Result<()> {
    let below_one = symbol == "δ";
    if value.is_finite() && value > 0.0 && (!below_one || value < 1.0) {
        return Ok(());
    }
    let range = if below_one {
        "give δ > 0 and δ < 1".to_string()
    } else {
        format!("give a finite {symbol} > 0")
    };
    let why = match (value == 0.0, below_one) {
        (true, true) => {
            " (an (ε, 0) guarantee is pure ε-DP: for a mechanism that offers pure ε-DP, \
             omit --delta)"
        }
        (true, false) => {
            " (a zero budget permits no use of the data at all: every mechanism would need \
             infinite noise)"
        }
        (false, _) => "",
    };
    Err(BenchError::Usage(format!(
        "{flag} {} is out of range: {range}{why}",
        Num(value)
    )))
}

impl BudgetArgs {
    /// `Ok` if every flag given is in range: ε and ρ finite and above zero (ε = 0 and ρ = 0
    /// are refused for every mechanism), 0 < δ < 1. The errors name the flag and its value.
    pub fn check_values(&self) -> Result<()> {
        for (flag, symbol, value) in [
            ("--epsilon", "ε", self.epsilon),
            ("--delta", "δ", self.delta),
            ("--rho", "ρ", self.rho),
        ] {
            if let Some(v) = value {
                check_flag(flag, symbol, v)?;
            }
        }
        Ok(())
    }

    /// The privacy loss these flags ask of `mechanism`, validated ([`Self::check_values`]
    /// first). Gaussian takes either `--rho` alone or `--epsilon` with `--delta`; Laplace
    /// takes `--epsilon` alone.
    pub fn to_loss(&self, mechanism: &str) -> Result<PrivacyLoss> {
        self.check_values()?;
        let usage = |m: &str| Err(BenchError::Usage(m.to_string()));
        match mechanism {
            "laplace" => match (self.epsilon, self.delta, self.rho) {
                (Some(e), None, None) => Ok(PrivacyLoss::pure(e)?),
                _ => usage("laplace is pure ε-DP: give --epsilon only (no --delta, no --rho)"),
            },
            "mwem" | "ic-mw" | "dualquery" => match (self.epsilon, self.delta, self.rho) {
                (Some(e), None, None) => Ok(PrivacyLoss::pure(e)?),
                (Some(e), Some(d), None) => Ok(PrivacyLoss::approx(e, d)?),
                (None, None, Some(r)) if mechanism == "mwem" => Ok(PrivacyLoss::zcdp(r)?),
                _ => usage(&format!(
                    "{mechanism}: give --epsilon (pure) or --epsilon with --delta{}",
                    if mechanism == "mwem" {
                        ", or --rho alone"
                    } else {
                        ""
                    }
                )),
            },
            _ => match (self.epsilon, self.delta, self.rho) {
                (None, None, Some(r)) => Ok(PrivacyLoss::zcdp(r)?),
                (Some(e), Some(d), None) => Ok(PrivacyLoss::approx(e, d)?),
                (Some(_), None, None) => usage(&format!(
                    "{mechanism} is ρ-zCDP: give --epsilon with --delta, or --rho alone"
                )),
                _ => usage(&format!(
                    "{mechanism}: give either --rho alone or --epsilon with --delta"
                )),
            },
        }
    }
}

/// The error for a mechanism name that is not in [`MECHANISMS`], listing the names.
pub fn unknown_mechanism(name: &str) -> BenchError {
    let names: Vec<&str> = MECHANISMS.iter().map(|(n, _)| *n).collect();
    BenchError::Usage(format!(
        "unknown mechanism {}; available: {}",
        quoted(name),
        names.join(", ")
    ))
}

/// What a caller may add to a mechanism beyond its budget, relation and post-processing;
/// mechanisms without rounds or a boundable state ignore it.
#[derive(Clone, Default)]
pub struct BuildOptions {
    /// Called with a one-line summary after every round (adaptive-projection). Everything in
    /// it is public (selected table, noise, ρ spent: functions of the noisy outputs).
    pub round_progress: Option<Arc<dyn Fn(String) + Send + Sync>>,
    /// Memory the mechanism's own state may use (bytes), where it can be bounded
    /// (adaptive-projection: `AdaptiveProjectionParams::within_memory`).
    pub memory_bytes: Option<u64>,
    /// The attribute names of the data, in domain order, once it is loaded: the progress
    /// line names the measured attributes with them (their indices until it is set).
    pub attribute_names: Arc<OnceLock<Vec<String>>>,
}

/// The attributes `attrs` (indices in domain order) for a message: their names from
/// `names` joined by `, `, or `#i` for an index without a name.
fn attribute_list(attrs: &[usize], names: Option<&Vec<String>>) -> String {
    attrs
        .iter()
        .map(|&a| match names.and_then(|n| n.get(a)) {
            Some(name) => name.clone(),
            None => format!("#{a}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Build the named mechanism with a validated budget.
pub fn build_mechanism(
    name: &str,
    budget: PrivacyLoss,
    neighbouring: Neighbouring,
    post: PostProcessing,
) -> Result<Box<dyn Mechanism>> {
    build_mechanism_with(name, budget, neighbouring, post, &BuildOptions::default())
}

/// [`build_mechanism`] with [`BuildOptions`].
pub fn build_mechanism_with(
    name: &str,
    budget: PrivacyLoss,
    neighbouring: Neighbouring,
    post: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    Ok(match name {
        "gaussian" => Box::new(
            GaussianParams::new(budget)
                .neighbouring(neighbouring)
                .post_processing(post)
                .check()?,
        ),
        "laplace" => Box::new(
            LaplaceParams::new(budget)
                .neighbouring(neighbouring)
                .post_processing(post)
                .check()?,
        ),
        "mwem" | "ic-mw" | "dualquery" if neighbouring != Neighbouring::ReplaceOne => {
            return Err(BenchError::Usage(format!(
                "{name} is stated for replace-one neighbours only (n is public)"
            )));
        }
        "mwem" => Box::new(MwemParams::new(budget).check()?),
        "ic-mw" => Box::new(IcParams::new(budget).check()?),
        "dualquery" => Box::new(DualQueryParams::new(budget).check()?),
        "projection" => Box::new(
            dp_mechanisms::ProjectionParams::new(budget)
                .neighbouring(neighbouring)
                .check()?,
        ),
        "coarse-projection" => Box::new(
            dp_mechanisms::CoarseProjectionParams::new(budget)
                .neighbouring(neighbouring)
                .check()?,
        ),
        "chaining" => Box::new(
            dp_mechanisms::ChainingParams::new(budget)
                .neighbouring(neighbouring)
                .check()?,
        ),
        "chaining-worst-case" => Box::new(
            dp_mechanisms::ChainingWorstCaseParams::new(budget)
                .neighbouring(neighbouring)
                .check()?,
        ),
        "adaptive-projection" => {
            let mut p =
                dp_mechanisms::AdaptiveProjectionParams::new(budget).neighbouring(neighbouring);
            if let Some(bytes) = options.memory_bytes {
                p = p.within_memory(bytes);
            }
            if let Some(f) = &options.round_progress {
                let (f, rho) = (Arc::clone(f), p.check()?.rho());
                let names = Arc::clone(&options.attribute_names);
                p = p.progress(Arc::new(move |r: &dp_mechanisms::AdaptiveRound| {
                    f(format!(
                        "round {}: measured {} (σ = {:.1}), ρ spent {:.4} of {:.4}{}",
                        r.round,
                        attribute_list(&r.selected, names.get()),
                        r.sigma2.sqrt(),
                        r.rho_spent,
                        rho,
                        if r.annealed { ", annealed" } else { "" }
                    ))
                }));
            }
            Box::new(p.check()?)
        }
        other => {
            return Err(unknown_mechanism(other));
        }
    })
}

/// Largest ε (pure or (ε, δ)) the command line accepts, and [`MAX_RHO`] = ε²/2 its zCDP
/// counterpart. Beyond it e^(−ε) < 1e-13: the noise of a counting release is zero on
/// every cell with overwhelming probability, so the "private" release equals the true
/// answers and the guarantee is meaningless (and floating-point weights such as e^(−ε·x)
/// underflow). Refused with a clear error; see docs/privacy.md.
pub const MAX_EPSILON: f64 = 30.0;

/// The zCDP counterpart of [`MAX_EPSILON`]: ρ = ε²/2 = 450.
pub const MAX_RHO: f64 = MAX_EPSILON * MAX_EPSILON / 2.0;

/// Refuse a zero budget (ε = 0 or ρ = 0: no mechanism can release anything useful with
/// it) and a budget whose noise could be identically zero (ε > [`MAX_EPSILON`] or
/// ρ > [`MAX_RHO`]), so that a release can never be the true answers in disguise.
pub fn check_budget_is_meaningful(loss: &PrivacyLoss) -> Result<()> {
    let zero = match loss.validate()? {
        PrivacyLoss::Pure { epsilon } | PrivacyLoss::Approx { epsilon, .. } => epsilon == 0.0,
        PrivacyLoss::Zcdp { rho } => rho == 0.0,
    };
    if zero {
        return Err(BenchError::Usage(format!(
            "budget {loss}: a zero budget permits no use of the data at all (every mechanism \
             would need infinite noise); give ε > 0 or ρ > 0"
        )));
    }
    let too_big = match loss.validate()? {
        PrivacyLoss::Pure { epsilon } | PrivacyLoss::Approx { epsilon, .. } => {
            (epsilon > MAX_EPSILON).then(|| format!("ε = {} > {MAX_EPSILON}", Num(epsilon)))
        }
        PrivacyLoss::Zcdp { rho } => {
            (rho > MAX_RHO).then(|| format!("ρ = {} > {MAX_RHO}", Num(rho)))
        }
    };
    match too_big {
        Some(what) => Err(BenchError::Usage(format!(
            "budget {what}: the noise would be zero on every answer with overwhelming \
             probability, so the release would be the true answers; refusing (see \
             docs/privacy.md, \"Budgets and parameters\")"
        ))),
        None => Ok(()),
    }
}

/// Largest δ `dpqr release` accepts under add/remove neighbours without
/// `--allow-large-delta`. Under add/remove n is private, so δ cannot be compared with 1/n;
/// 1e-6 is at most 1/n for every dataset of up to a million records.
pub const MAX_DELTA_ADD_REMOVE: f64 = 1e-6;

/// Why `delta` is too large to accept without `--allow-large-delta`, or `None` if it is
/// not. `public_n` is the number of records where it is public (replace-one neighbours):
/// δ above 1/n is too large. Pass `None` under add/remove neighbours, where n is private
/// and must not be used: δ above [`MAX_DELTA_ADD_REMOVE`] is too large.
///
/// Why 1/n: the mechanism that publishes one record of the data, chosen uniformly at
/// random, is (0, 1/n)-DP (Dwork–Roth 2014, §2.3), so a δ of 1/n or more permits
/// publishing records in full.
pub fn delta_too_large(delta: f64, public_n: Option<usize>) -> Option<String> {
    match public_n {
        Some(n) => {
            let bound = 1.0 / n.max(1) as f64;
            (delta > bound).then(|| {
                format!(
                    "δ = {} is above 1/n = 1/{n} ≈ {:.2e} (n = {n} records, public under \
                     replace-one neighbours); a δ of 1/n or more permits publishing a \
                     record in full (Dwork–Roth 2014, §2.3)",
                    Num(delta),
                    bound
                )
            })
        }
        None => (delta > MAX_DELTA_ADD_REMOVE).then(|| {
            format!(
                "δ = {} is above {}, the largest δ accepted under add/remove neighbours \
                 (where n is private, so δ cannot be compared with 1/n; {} is at most 1/n \
                 for every dataset of up to a million records); a δ of 1/n or more \
                 permits publishing a record in full (Dwork–Roth 2014, §2.3)",
                Num(delta),
                Num(MAX_DELTA_ADD_REMOVE),
                Num(MAX_DELTA_ADD_REMOVE)
            )
        }),
    }
}

/// How the empirical privacy audit ([`crate::audit`]) builds a mechanism: the hook every
/// registered mechanism passes through, so a mechanism added to [`MECHANISMS`] is audited
/// without touching the audit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuditSettings {
    /// The budget the mechanism is built with for the black-box audit.
    pub budget: PrivacyLoss,
    /// The δ at which a ρ-zCDP guarantee is converted to the audited (ε, δ).
    pub delta: f64,
    /// Runs per neighbouring dataset in the CI black-box audit.
    pub ci_runs: usize,
    /// The white-box per-step audit ([`crate::audit::audit_steps`]) of a composed
    /// mechanism, `None` for the others. When present, the half-noise canary must be caught
    /// by the step audit (the black-box audit has no power against it: the end-to-end
    /// accounting of these mechanisms is far from tight); otherwise by the black-box audit.
    pub steps: Option<StepAuditSettings>,
}

/// The per-step audit's build of a composed mechanism.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepAuditSettings {
    /// The total budget, chosen so that every audited step has a per-step ε of about 1 on
    /// the step audit's n = 20 records (the calibration code under test is
    /// budget-generic; a per-step ε far below 1 would leave the audit without power).
    pub budget: PrivacyLoss,
    /// Runs per neighbouring dataset and step in CI.
    pub ci_runs: usize,
}

/// The audit settings of `name`. Mechanisms without an entry get the first of pure ε = 1,
/// ρ = 0.125 (at δ = 1e-3) and (ε, δ) = (1, 1e-3) that [`build_mechanism`] accepts, and
/// 20 000 CI runs; add an entry when a mechanism needs another budget or is slow.
///
/// Step-audit budgets (per-step ε ≈ 1 at n = 20, see docs/privacy.md "Empirical audit"):
/// MWEM pure ε = 30 (T = 15 rounds of ε/(2T) = 1 per selection and per measurement);
/// chaining-worst-case ρ = 3.75 (T = 15, one non-trivial level: selection ε₁ = 2√(ρ/T) = 1,
/// measurement ρ/(2T) = 0.125, the Gaussian baseline's audited ρ); IC-MW pure ε = 46
/// (α = 1, B(α/2) = 23 rounds of two ε₀ = 1 steps); DualQuery pure ε = 651 (η = 0.4,
/// s = 50: T = 26 rounds, the last round's per-sample ε = 2η(T − 1)/n = 1).
pub fn audit_settings(name: &str) -> Result<AuditSettings> {
    const DELTA: f64 = 1e-3;
    let steps = |budget: PrivacyLoss| {
        Some(StepAuditSettings {
            budget,
            ci_runs: 100_000,
        })
    };
    Ok(match name {
        "laplace" => AuditSettings {
            budget: PrivacyLoss::pure(1.0)?,
            delta: DELTA,
            ci_runs: 100_000,
            steps: None,
        },
        "gaussian" => AuditSettings {
            budget: PrivacyLoss::zcdp(0.125)?,
            delta: DELTA,
            ci_runs: 100_000,
            steps: None,
        },
        // Gaussian noise then a projection (post-processing): the half-noise canary is
        // caught with a wide margin at 100 000 runs, only narrowly at 20 000 (measured,
        // docs/privacy.md "Empirical audit")
        "projection" | "coarse-projection" | "chaining" => AuditSettings {
            budget: PrivacyLoss::zcdp(0.125)?,
            delta: DELTA,
            ci_runs: 100_000,
            steps: None,
        },
        "mwem" | "ic-mw" | "dualquery" => AuditSettings {
            budget: PrivacyLoss::pure(1.0)?,
            delta: DELTA,
            ci_runs: 20_000,
            steps: steps(PrivacyLoss::pure(match name {
                "mwem" => 30.0,
                "ic-mw" => 46.0,
                _ => 651.0,
            })?),
        },
        "chaining-worst-case" => AuditSettings {
            budget: PrivacyLoss::zcdp(0.125)?,
            delta: DELTA,
            ci_runs: 20_000,
            steps: steps(PrivacyLoss::zcdp(3.75)?),
        },
        // d = 2 attributes, T = 32: ρ = 4.5 gives the first measurement ρ = 0.9·4.5/32 ≈ 0.127
        // (the Gaussian baseline's audited ρ; σ² ≈ 7.9 on a replace-one table) and the first
        // selection ε = √(8·0.1·4.5/32) ≈ 0.34
        "adaptive-projection" => AuditSettings {
            budget: PrivacyLoss::zcdp(0.125)?,
            delta: DELTA,
            ci_runs: 20_000,
            steps: steps(PrivacyLoss::zcdp(4.5)?),
        },
        _ => {
            let candidates = [
                PrivacyLoss::pure(1.0)?,
                PrivacyLoss::zcdp(0.125)?,
                PrivacyLoss::approx(1.0, DELTA)?,
            ];
            let mut last = None;
            for budget in candidates {
                match build_mechanism(name, budget, Neighbouring::ReplaceOne, PostProcessing::None)
                {
                    Ok(_) => {
                        return Ok(AuditSettings {
                            budget,
                            delta: DELTA,
                            ci_runs: 20_000,
                            steps: None,
                        });
                    }
                    Err(e) => last = Some(e),
                }
            }
            return Err(last.unwrap_or_else(|| {
                BenchError::Usage(format!("no audit budget for mechanism {}", quoted(name)))
            }));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_flags() {
        let a = BudgetArgs {
            epsilon: Some(1.0),
            delta: Some(1e-9),
            rho: None,
        };
        assert_eq!(
            a.to_loss("gaussian").unwrap(),
            PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 1e-9
            }
        );
        assert!(a.to_loss("laplace").is_err());
        let r = BudgetArgs {
            rho: Some(0.5),
            ..Default::default()
        };
        assert_eq!(
            r.to_loss("gaussian").unwrap(),
            PrivacyLoss::Zcdp { rho: 0.5 }
        );
        let e = BudgetArgs {
            epsilon: Some(1.0),
            ..Default::default()
        };
        assert!(e.to_loss("gaussian").is_err());
        assert_eq!(
            e.to_loss("laplace").unwrap(),
            PrivacyLoss::Pure { epsilon: 1.0 }
        );
        let nan = BudgetArgs {
            epsilon: Some(f64::NAN),
            ..Default::default()
        };
        assert!(nan.to_loss("laplace").is_err());
        assert!(
            build_mechanism(
                "nope",
                PrivacyLoss::Pure { epsilon: 1.0 },
                Neighbouring::ReplaceOne,
                PostProcessing::None
            )
            .is_err()
        );
    }
}
