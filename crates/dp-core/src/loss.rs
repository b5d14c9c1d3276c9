//! Privacy-loss values: pure ε-DP, approximate (ε, δ)-DP and ρ-zCDP.

use serde::{Deserialize, Serialize};

use crate::Num;
use crate::conversions::{pure_to_zcdp, zcdp_epsilon};
use crate::error::{CoreError, Result, check_delta, check_nonneg};
use crate::rounding::add_up;

/// A privacy guarantee, in one of three notions.
///
/// * `Pure { epsilon }`: ε-differential privacy (Dwork, McSherry, Nissim, Smith 2006).
/// * `Approx { epsilon, delta }`: (ε, δ)-differential privacy.
/// * `Zcdp { rho }`: ρ-zero-concentrated differential privacy (Bun–Steinke 2016,
///   Definition 1.1); seed 004 accounts in this notion.
///
/// Build values through [`PrivacyLoss::pure`], [`PrivacyLoss::approx`] and
/// [`PrivacyLoss::zcdp`], which reject NaN, infinities, negative values and δ ∉ [0, 1).
/// The variants are public for pattern matching; every operation re-validates them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum PrivacyLoss {
    /// ε-DP.
    Pure {
        /// ε ≥ 0.
        epsilon: f64,
    },
    /// (ε, δ)-DP.
    Approx {
        /// ε ≥ 0.
        epsilon: f64,
        /// δ ∈ [0, 1).
        delta: f64,
    },
    /// ρ-zCDP.
    Zcdp {
        /// ρ ≥ 0.
        rho: f64,
    },
}

impl PrivacyLoss {
    /// ε-DP; `epsilon` must be finite and `>= 0`.
    pub fn pure(epsilon: f64) -> Result<Self> {
        Ok(PrivacyLoss::Pure {
            epsilon: check_nonneg("epsilon", epsilon)?,
        })
    }

    /// (ε, δ)-DP; `epsilon` finite and `>= 0`, `delta ∈ [0, 1)`.
    pub fn approx(epsilon: f64, delta: f64) -> Result<Self> {
        Ok(PrivacyLoss::Approx {
            epsilon: check_nonneg("epsilon", epsilon)?,
            delta: check_delta("delta", delta)?,
        })
    }

    /// ρ-zCDP; `rho` finite and `>= 0`.
    pub fn zcdp(rho: f64) -> Result<Self> {
        Ok(PrivacyLoss::Zcdp {
            rho: check_nonneg("rho", rho)?,
        })
    }

    /// Re-checks the invariants of the constructors (the variants are public).
    pub fn validate(&self) -> Result<Self> {
        match *self {
            PrivacyLoss::Pure { epsilon } => Self::pure(epsilon),
            PrivacyLoss::Approx { epsilon, delta } => Self::approx(epsilon, delta),
            PrivacyLoss::Zcdp { rho } => Self::zcdp(rho),
        }
    }

    /// The ε this guarantee implies at failure probability `delta` (rounded up):
    /// `Pure` → ε; `Approx(ε, δ₀)` → ε if `delta >= δ₀`, else an error; `Zcdp` → the
    /// tight [`zcdp_epsilon`].
    pub fn epsilon_at(&self, delta: f64) -> Result<f64> {
        let delta = check_delta("delta", delta)?;
        match self.validate()? {
            PrivacyLoss::Pure { epsilon } => Ok(epsilon),
            PrivacyLoss::Approx { epsilon, delta: d0 } => {
                if delta >= d0 {
                    Ok(epsilon)
                } else {
                    Err(CoreError::invalid(
                        "delta",
                        Num(delta),
                        &format!("is below this guarantee's own delta = {}", Num(d0)),
                    ))
                }
            }
            PrivacyLoss::Zcdp { rho } => zcdp_epsilon(rho, delta),
        }
    }

    /// The (ε, δ)-DP guarantee at `delta` implied by this one (see [`Self::epsilon_at`]).
    pub fn to_approx(&self, delta: f64) -> Result<PrivacyLoss> {
        let epsilon = self.epsilon_at(delta)?;
        PrivacyLoss::approx(epsilon, delta)
    }

    /// The ρ-zCDP guarantee implied by this one: `Pure ε` → ρ = ε²/2 (Bun–Steinke 2016,
    /// Prop. 1.4), `Zcdp` → itself, `Approx` → [`CoreError::IncompatibleComposition`]
    /// ((ε, δ)-DP with δ > 0 does not imply zCDP).
    pub fn to_zcdp(&self) -> Result<PrivacyLoss> {
        match self.validate()? {
            PrivacyLoss::Pure { epsilon } => PrivacyLoss::zcdp(pure_to_zcdp(epsilon)?),
            z @ PrivacyLoss::Zcdp { .. } => Ok(z),
            a @ PrivacyLoss::Approx { .. } => Err(CoreError::IncompatibleComposition {
                left: a.to_string(),
                right: "ρ-zCDP".to_string(),
                reason: "(ε, δ)-DP does not imply any ρ-zCDP guarantee".to_string(),
            }),
        }
    }

    /// Basic (sequential) composition of two guarantees, rounded up:
    /// Pure + Pure → Pure (ε₁ + ε₂); Zcdp + Zcdp → Zcdp (ρ₁ + ρ₂, Bun–Steinke Lemma 2.3);
    /// Pure + Zcdp → Zcdp (ε²/2 + ρ); Approx + Approx/Pure → Approx (ε₁ + ε₂, δ₁ + δ₂);
    /// Approx + Zcdp → [`CoreError::IncompatibleComposition`] (convert the zCDP part
    /// first with [`Self::to_approx`], or use a [`crate::Ledger`] with an (ε, δ) budget).
    /// A total δ ≥ 1 or an overflowing total is [`CoreError::Vacuous`].
    pub fn compose(&self, other: &PrivacyLoss) -> Result<PrivacyLoss> {
        use PrivacyLoss::*;
        let (a, b) = (self.validate()?, other.validate()?);
        let sum = |x: f64, y: f64, what: &str| -> Result<f64> {
            let s = add_up(x, y);
            if s.is_finite() {
                Ok(s)
            } else {
                Err(CoreError::Vacuous {
                    what: format!("composed {what} overflows"),
                })
            }
        };
        match (a, b) {
            (Pure { epsilon: e1 }, Pure { epsilon: e2 }) => Ok(Pure {
                epsilon: sum(e1, e2, "epsilon")?,
            }),
            (Zcdp { rho: r1 }, Zcdp { rho: r2 }) => Ok(Zcdp {
                rho: sum(r1, r2, "rho")?,
            }),
            (Pure { epsilon }, Zcdp { rho }) | (Zcdp { rho }, Pure { epsilon }) => Ok(Zcdp {
                rho: sum(pure_to_zcdp(epsilon)?, rho, "rho")?,
            }),
            (
                Approx {
                    epsilon: e1,
                    delta: d1,
                },
                Approx {
                    epsilon: e2,
                    delta: d2,
                },
            ) => {
                let delta = add_up(d1, d2);
                if delta >= 1.0 {
                    return Err(CoreError::Vacuous {
                        what: format!("composed delta = {d1} + {d2} is >= 1"),
                    });
                }
                Ok(Approx {
                    epsilon: sum(e1, e2, "epsilon")?,
                    delta,
                })
            }
            (Approx { epsilon: e1, delta }, Pure { epsilon: e2 })
            | (Pure { epsilon: e2 }, Approx { epsilon: e1, delta }) => Ok(Approx {
                epsilon: sum(e1, e2, "epsilon")?,
                delta,
            }),
            (x @ Approx { .. }, y @ Zcdp { .. }) | (x @ Zcdp { .. }, y @ Approx { .. }) => {
                Err(CoreError::IncompatibleComposition {
                    left: x.to_string(),
                    right: y.to_string(),
                    reason: "convert the zCDP part to (ε, δ)-DP at a chosen δ first".to_string(),
                })
            }
        }
    }
}

impl std::fmt::Display for PrivacyLoss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrivacyLoss::Pure { epsilon } => write!(f, "ε = {} (pure ε-DP)", Num(*epsilon)),
            PrivacyLoss::Approx { epsilon, delta } => {
                // δ in scientific notation (1e-9), except δ = 0
                let delta = if *delta == 0.0 {
                    "0".to_string()
                } else {
                    format!("{delta:e}")
                };
                write!(f, "(ε, δ) = ({}, {delta})", Num(*epsilon))
            }
            PrivacyLoss::Zcdp { rho } => write!(f, "ρ = {} (ρ-zCDP)", Num(*rho)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        assert_eq!(
            PrivacyLoss::Pure { epsilon: 1.0 }.to_string(),
            "ε = 1 (pure ε-DP)"
        );
        assert_eq!(
            PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 1e-9
            }
            .to_string(),
            "(ε, δ) = (1, 1e-9)"
        );
        assert_eq!(
            PrivacyLoss::Zcdp { rho: 0.5 }.to_string(),
            "ρ = 0.5 (ρ-zCDP)"
        );
    }

    #[test]
    fn compose_kinds() -> Result<()> {
        let p = PrivacyLoss::pure(1.0)?;
        let z = PrivacyLoss::zcdp(0.25)?;
        let a = PrivacyLoss::approx(0.5, 1e-6)?;
        assert_eq!(p.compose(&p)?, PrivacyLoss::Pure { epsilon: 2.0 });
        assert_eq!(p.compose(&z)?, PrivacyLoss::Zcdp { rho: 0.75 });
        assert_eq!(z.compose(&p)?, PrivacyLoss::Zcdp { rho: 0.75 });
        assert_eq!(
            a.compose(&p)?,
            PrivacyLoss::Approx {
                epsilon: 1.5,
                delta: 1e-6
            }
        );
        assert_eq!(
            a.compose(&a)?,
            PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 2e-6
            }
        );
        assert!(matches!(
            a.compose(&z),
            Err(CoreError::IncompatibleComposition { .. })
        ));
        assert!(matches!(
            PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 0.6
            }
            .compose(&PrivacyLoss::Approx {
                epsilon: 1.0,
                delta: 0.6
            }),
            Err(CoreError::Vacuous { .. })
        ));
        Ok(())
    }

    #[test]
    fn epsilon_at_rules() -> Result<()> {
        assert_eq!(PrivacyLoss::pure(2.0)?.epsilon_at(0.0)?, 2.0);
        let a = PrivacyLoss::approx(1.0, 1e-6)?;
        assert_eq!(a.epsilon_at(1e-5)?, 1.0);
        assert!(a.epsilon_at(1e-7).is_err());
        assert!(a.to_zcdp().is_err());
        assert_eq!(
            PrivacyLoss::pure(1.0)?.to_zcdp()?,
            PrivacyLoss::Zcdp { rho: 0.5 }
        );
        Ok(())
    }

    #[test]
    fn public_variants_are_revalidated() {
        let bad = PrivacyLoss::Pure { epsilon: f64::NAN };
        assert!(bad.compose(&PrivacyLoss::Pure { epsilon: 1.0 }).is_err());
        assert!(bad.epsilon_at(0.1).is_err());
    }
}
