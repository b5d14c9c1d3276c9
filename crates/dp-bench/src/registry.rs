//! Mechanisms by name (through the [`crate::catalogue`]), the mapping from command-line
//! budget flags to a privacy loss, and the checks every budget passes.

use crate::catalogue::{self, BudgetKind};
use crate::{BenchError, Result};
use dp_core::{Neighbouring, Num, PrivacyLoss};
use dp_mechanisms::{Mechanism, PostProcessing};

pub use crate::catalogue::{
    AuditSettings, BuildOptions, MECHANISMS, MechanismSpec, StepAuditSettings, StepCanary,
    unknown_mechanism,
};

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
    /// first): `--epsilon` alone is pure ε-DP, `--epsilon` with `--delta` is (ε, δ)-DP and
    /// `--rho` alone is ρ-zCDP, each accepted only if the mechanism's catalogue entry
    /// lists that kind (e.g. Gaussian takes `--rho` or `--epsilon` with `--delta`, Laplace
    /// `--epsilon` alone).
    pub fn to_loss(&self, mechanism: &str) -> Result<PrivacyLoss> {
        self.loss_for(catalogue::spec(mechanism)?)
    }

    /// [`Self::to_loss`] for the catalogue entry `spec`: the one check of the budget's kind
    /// against the entry.
    pub fn loss_for(&self, spec: &MechanismSpec) -> Result<PrivacyLoss> {
        self.check_values()?;
        let (kind, loss) = match (self.epsilon, self.delta, self.rho) {
            (Some(e), None, None) => (BudgetKind::Pure, PrivacyLoss::pure(e)),
            (Some(e), Some(d), None) => (BudgetKind::Approx, PrivacyLoss::approx(e, d)),
            (None, None, Some(r)) => (BudgetKind::Zcdp, PrivacyLoss::zcdp(r)),
            _ => return Err(spec.budget_refused(None)),
        };
        if !spec.accepts(kind) {
            return Err(spec.budget_refused(Some(kind)));
        }
        Ok(loss?)
    }
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

/// [`build_mechanism`] with [`BuildOptions`]: the catalogue entry's
/// [`MechanismSpec::build`], which refuses budget kinds and relations the entry does not
/// list.
pub fn build_mechanism_with(
    name: &str,
    budget: PrivacyLoss,
    neighbouring: Neighbouring,
    post: PostProcessing,
    options: &BuildOptions,
) -> Result<Box<dyn Mechanism>> {
    catalogue::spec(name)?.build(budget, neighbouring, post, options)
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

/// The audit settings of the catalogue entry `name` (see [`MechanismSpec::audit`]); an
/// error for a local-model entry, which the audit of central guarantees does not run.
pub fn audit_settings(name: &str) -> Result<AuditSettings> {
    let spec = catalogue::spec(name)?;
    spec.audit().ok_or_else(|| {
        BenchError::Audit(format!(
            "{name} is a local-model mechanism: the audit tests central guarantees on \
             neighbouring datasets"
        ))
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
