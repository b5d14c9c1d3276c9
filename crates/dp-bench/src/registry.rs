//! Mechanisms by name, and the mapping from command-line budget flags to a privacy loss.

use crate::{BenchError, Result};
use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::{GaussianParams, LaplaceParams, Mechanism, PostProcessing};
use dp_mechanisms::{DualQueryParams, IcParams, MwemParams};

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
        "mwem",
        "MWEM (Hardt–Ligett–McSherry), synthetic distribution over the universe; pure ε, or ρ-zCDP",
    ),
    (
        "ic-mw",
        "Iterative Construction, MW + exponential mechanism (seed 001); pure ε or (ε, δ)",
    ),
    (
        "dualquery",
        "DualQuery (seed 003), synthetic records; pure ε (Thm 4.2) or (ε, δ) (Thm 4.3)",
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

impl BudgetArgs {
    /// The privacy loss these flags ask of `mechanism`, validated. Gaussian takes either
    /// `--rho` alone or `--epsilon` with `--delta`; Laplace takes `--epsilon` alone.
    pub fn to_loss(&self, mechanism: &str) -> Result<PrivacyLoss> {
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
                    if mechanism == "mwem" { ", or --rho alone" } else { "" }
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

/// Build the named mechanism with a validated budget.
pub fn build_mechanism(
    name: &str,
    budget: PrivacyLoss,
    neighbouring: Neighbouring,
    post: PostProcessing,
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
        other => {
            let names: Vec<&str> = MECHANISMS.iter().map(|(n, _)| *n).collect();
            return Err(BenchError::Usage(format!(
                "unknown mechanism {other:?}; available: {}",
                names.join(", ")
            )));
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
