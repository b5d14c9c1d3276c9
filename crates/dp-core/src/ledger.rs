//! A privacy odometer that refuses to overspend *before* any noise is drawn.

use serde::{Deserialize, Serialize};

use crate::conversions::{convert_neighbouring, pure_to_zcdp, zcdp_epsilon};
use crate::error::{CoreError, Result};
use crate::loss::PrivacyLoss;
use crate::neighbouring::Neighbouring;
use crate::rounding::{add_up, sub_down};

/// One recorded expenditure.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Spend {
    /// What the budget was spent on (free text, shown in reports).
    pub label: String,
    /// The privacy loss of that step, as its certificate states it (for `neighbouring`).
    pub loss: PrivacyLoss,
    /// The neighbouring relation `loss` is stated for; `None` for a spend of unknown
    /// relation (recorded by a ledger that predates relations), which is charged as the
    /// most expensive possibility (see [`Ledger::charged`]).
    #[serde(default)]
    pub neighbouring: Option<Neighbouring>,
}

/// A privacy budget for one neighbouring relation and the spends charged against it.
///
/// Call [`Ledger::spend_under`] *before* running a mechanism: it records the spend only if
/// the total stays within the budget, and otherwise returns
/// [`CoreError::BudgetExceeded`] and changes nothing.
///
/// **Relations.** Every spend records the relation its guarantee is stated for and is
/// charged in the ledger's relation via [`convert_neighbouring`]: in a replace-one ledger an
/// add/remove ε, ρ or (ε, δ) is charged 2ε, 4ρ or (2ε, (1 + e^ε)δ) (group privacy of size
/// 2); an add/remove ledger refuses replace-one spends
/// ([`CoreError::NoNeighbouringConversion`]: they give no add/remove guarantee). A spend of
/// unknown relation is charged as add/remove in a replace-one ledger (the larger of the
/// two charges) and refused by an add/remove ledger.
///
/// The total is accounted in the budget's own notion, always rounding up:
/// * **Pure ε budget**: accepts only `Pure` spends; total ε = Σ ε (basic composition).
/// * **ρ-zCDP budget**: accepts `Pure` (as ρ = ε²/2, Bun–Steinke Prop. 1.4) and `Zcdp`
///   spends; total ρ = Σ ρ (zCDP composition, Bun–Steinke Lemma 2.3). `Approx` spends
///   are rejected ([`CoreError::IncompatibleComposition`]).
/// * **(ε, δ) budget**: accepts everything. The zCDP spends are composed in zCDP
///   (Σρ) and converted once with the tight [`zcdp_epsilon`] at the δ left over by the
///   `Approx` spends, `δ_budget − Σδ`; then basic composition across the three parts:
///   total ε = Σ ε_approx + Σ ε_pure + zcdp_epsilon(Σρ, δ_budget − Σδ). With zCDP
///   spends the leftover δ must be > 0.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ledger {
    budget: PrivacyLoss,
    neighbouring: Neighbouring,
    spends: Vec<Spend>,
}

/// Totals of a list of spends, split by notion.
#[derive(Default)]
struct Parts {
    pure_eps: f64,
    approx_eps: f64,
    approx_delta: f64,
    rho: f64,
    any_zcdp: bool,
}

impl Parts {
    fn add(&mut self, loss: &PrivacyLoss) -> Result<()> {
        match loss.validate()? {
            PrivacyLoss::Pure { epsilon } => self.pure_eps = add_up(self.pure_eps, epsilon),
            PrivacyLoss::Approx { epsilon, delta } => {
                self.approx_eps = add_up(self.approx_eps, epsilon);
                self.approx_delta = add_up(self.approx_delta, delta);
            }
            PrivacyLoss::Zcdp { rho } => {
                self.rho = add_up(self.rho, rho);
                self.any_zcdp |= rho > 0.0;
            }
        }
        Ok(())
    }
}

impl Ledger {
    /// A fresh replace-one ledger with the given total budget (re-validated; an invalid
    /// budget makes every later spend fail).
    pub fn new(budget: PrivacyLoss) -> Self {
        Self::with_neighbouring(budget, Neighbouring::ReplaceOne)
    }

    /// A fresh ledger whose budget is stated for `neighbouring`.
    pub fn with_neighbouring(budget: PrivacyLoss, neighbouring: Neighbouring) -> Self {
        Ledger {
            budget,
            neighbouring,
            spends: Vec::new(),
        }
    }

    /// A ledger with spends already made (read back from storage): each spend must be
    /// chargeable in `neighbouring` (else [`CoreError::NoNeighbouringConversion`]); the
    /// total is not checked against the budget, since the spends have happened.
    pub fn restore(
        budget: PrivacyLoss,
        neighbouring: Neighbouring,
        spends: Vec<Spend>,
    ) -> Result<Self> {
        let l = Ledger {
            budget,
            neighbouring,
            spends,
        };
        for s in &l.spends {
            l.charged(s)?;
        }
        Ok(l)
    }

    /// The total budget.
    pub fn budget(&self) -> PrivacyLoss {
        self.budget
    }

    /// The neighbouring relation the budget (and every charge) is stated for.
    pub fn neighbouring(&self) -> Neighbouring {
        self.neighbouring
    }

    /// The spends recorded so far, in order.
    pub fn spends(&self) -> &[Spend] {
        &self.spends
    }

    /// What `spend` costs in this ledger's relation: [`convert_neighbouring`] from the
    /// spend's relation; a spend of unknown relation is charged as add/remove (in a
    /// replace-one ledger that is ≥ the replace-one charge, so it is conservative either
    /// way; an add/remove ledger cannot charge it).
    pub fn charged(&self, spend: &Spend) -> Result<PrivacyLoss> {
        self.charge(&spend.loss, spend.neighbouring)
    }

    fn charge(
        &self,
        loss: &PrivacyLoss,
        neighbouring: Option<Neighbouring>,
    ) -> Result<PrivacyLoss> {
        match neighbouring {
            Some(from) => convert_neighbouring(*loss, from, self.neighbouring),
            None => match self.neighbouring {
                Neighbouring::ReplaceOne => {
                    convert_neighbouring(*loss, Neighbouring::AddRemove, Neighbouring::ReplaceOne)
                }
                Neighbouring::AddRemove => Err(CoreError::NoNeighbouringConversion {
                    loss: loss.to_string(),
                    from: "an unknown relation".to_string(),
                    to: self.neighbouring.to_string(),
                    reason: "the spend may have been stated for replace-one neighbours, which \
                             gives no add/remove guarantee"
                        .to_string(),
                }),
            },
        }
    }

    /// The total charged so far, expressed in the budget's notion (see the type docs).
    pub fn spent(&self) -> Result<PrivacyLoss> {
        self.total_with(None)
    }

    /// `Ok(())` if `loss`, stated for this ledger's own relation, can be spent without
    /// exceeding the budget (see [`Self::can_spend_under`]).
    pub fn can_spend(&self, loss: &PrivacyLoss) -> Result<()> {
        self.can_spend_under(loss, self.neighbouring)
    }

    /// `Ok(())` if `loss`, stated for `neighbouring`, can be spent without exceeding the
    /// budget, otherwise [`CoreError::BudgetExceeded`] (or another error if `loss` is
    /// invalid, of a kind the budget does not accept, or has no conversion to the ledger's
    /// relation).
    pub fn can_spend_under(&self, loss: &PrivacyLoss, neighbouring: Neighbouring) -> Result<()> {
        self.check("unlabelled spend", loss, neighbouring)
    }

    /// [`Self::can_spend_under`] for a spend labelled `label`, the label a refusal
    /// ([`CoreError::BudgetExceeded`]) names: `Ok(())` exactly when
    /// [`Self::spend_under`] with the same arguments would record the spend.
    pub fn check_spend(
        &self,
        label: &str,
        loss: &PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        self.check(label, loss, neighbouring)
    }

    /// Records `loss`, stated for this ledger's own relation, under `label` if the budget
    /// allows it (see [`Self::spend_under`]).
    pub fn spend(&mut self, label: &str, loss: PrivacyLoss) -> Result<()> {
        self.spend_under(label, loss, self.neighbouring)
    }

    /// Records `loss`, stated for `neighbouring`, under `label` if the budget allows its
    /// charge in the ledger's relation; otherwise returns the error of
    /// [`Self::can_spend_under`] and records nothing.
    pub fn spend_under(
        &mut self,
        label: &str,
        loss: PrivacyLoss,
        neighbouring: Neighbouring,
    ) -> Result<()> {
        self.check(label, &loss, neighbouring)?;
        self.spends.push(Spend {
            label: label.to_string(),
            loss,
            neighbouring: Some(neighbouring),
        });
        Ok(())
    }

    fn check(&self, label: &str, loss: &PrivacyLoss, neighbouring: Neighbouring) -> Result<()> {
        let loss = loss.validate()?;
        let charged = self.charge(&loss, Some(neighbouring))?;
        let exceeded = || CoreError::BudgetExceeded {
            label: label.to_string(),
            requested: if neighbouring == self.neighbouring {
                loss.to_string()
            } else {
                format!(
                    "{loss} under {neighbouring} neighbours = {charged} under {}",
                    self.neighbouring
                )
            },
            budget: format!(
                "total budget {}, spent {}, remaining {}",
                self.budget,
                self.spent()
                    .map_or_else(|e| format!("unknown ({e})"), |t| t.to_string()),
                self.remaining_description()
            ),
        };
        let total = match self.total_with(Some(&charged)) {
            Ok(t) => t,
            Err(CoreError::Vacuous { .. }) => return Err(exceeded()),
            Err(e) => return Err(e),
        };
        let within = match (self.budget.validate()?, total) {
            (PrivacyLoss::Pure { epsilon: b }, PrivacyLoss::Pure { epsilon: t }) => t <= b,
            (PrivacyLoss::Zcdp { rho: b }, PrivacyLoss::Zcdp { rho: t }) => t <= b,
            (
                PrivacyLoss::Approx {
                    epsilon: be,
                    delta: bd,
                },
                PrivacyLoss::Approx {
                    epsilon: te,
                    delta: td,
                },
            ) => te <= be && td <= bd,
            _ => false,
        };
        if within { Ok(()) } else { Err(exceeded()) }
    }

    /// What is left of the budget, in its own notion (each component rounded down, never
    /// below zero); for an (ε, δ) budget the ε and δ left once the zCDP spends are
    /// converted at the δ the others leave (see the type docs).
    fn remaining_description(&self) -> String {
        let left = |b: f64, s: f64| sub_down(b, s).max(0.0);
        match (self.budget, self.spent()) {
            (PrivacyLoss::Pure { epsilon: b }, Ok(PrivacyLoss::Pure { epsilon: s })) => {
                PrivacyLoss::Pure {
                    epsilon: left(b, s),
                }
                .to_string()
            }
            (PrivacyLoss::Zcdp { rho: b }, Ok(PrivacyLoss::Zcdp { rho: s })) => {
                PrivacyLoss::Zcdp { rho: left(b, s) }.to_string()
            }
            (
                PrivacyLoss::Approx {
                    epsilon: be,
                    delta: bd,
                },
                Ok(PrivacyLoss::Approx {
                    epsilon: se,
                    delta: sd,
                }),
            ) => PrivacyLoss::Approx {
                epsilon: left(be, se),
                delta: left(bd, sd),
            }
            .to_string(),
            _ => "unknown (the spends cannot be totalled)".to_string(),
        }
    }

    /// The total of the recorded spends' charges plus `extra` (already a charge in the
    /// ledger's relation), in the budget's notion.
    fn total_with(&self, extra: Option<&PrivacyLoss>) -> Result<PrivacyLoss> {
        let budget = self.budget.validate()?;
        let mut parts = Parts::default();
        let charges = self
            .spends
            .iter()
            .map(|s| self.charged(s))
            .collect::<Result<Vec<_>>>()?;
        for s in charges.iter().chain(extra) {
            match (budget, s) {
                (PrivacyLoss::Pure { .. }, PrivacyLoss::Pure { .. }) => {}
                (PrivacyLoss::Zcdp { .. }, PrivacyLoss::Pure { .. } | PrivacyLoss::Zcdp { .. }) => {
                }
                (PrivacyLoss::Approx { .. }, _) => {}
                (b, s) => {
                    return Err(CoreError::IncompatibleComposition {
                        left: b.to_string(),
                        right: s.to_string(),
                        reason: notion_mismatch(&b, s),
                    });
                }
            }
            parts.add(s)?;
        }
        let finite = |x: f64, what: &str| -> Result<f64> {
            if x.is_finite() {
                Ok(x)
            } else {
                Err(CoreError::Vacuous {
                    what: format!("total {what} overflows"),
                })
            }
        };
        match budget {
            PrivacyLoss::Pure { .. } => Ok(PrivacyLoss::Pure {
                epsilon: finite(parts.pure_eps, "epsilon")?,
            }),
            PrivacyLoss::Zcdp { .. } => {
                let rho = add_up(parts.rho, pure_to_zcdp(finite(parts.pure_eps, "epsilon")?)?);
                Ok(PrivacyLoss::Zcdp {
                    rho: finite(rho, "rho")?,
                })
            }
            PrivacyLoss::Approx { delta: bd, .. } => {
                let mut eps = add_up(parts.approx_eps, parts.pure_eps);
                let mut delta = parts.approx_delta;
                if delta >= 1.0 {
                    return Err(CoreError::Vacuous {
                        what: format!("total delta {delta} >= 1"),
                    });
                }
                if parts.any_zcdp {
                    let left = sub_down(bd, delta);
                    if left <= 0.0 {
                        return Err(CoreError::Vacuous {
                            what: "no delta left to convert the zCDP spends".to_string(),
                        });
                    }
                    if parts.rho > 0.0 {
                        eps = add_up(eps, zcdp_epsilon(finite(parts.rho, "rho")?, left)?);
                    }
                    delta = bd;
                }
                Ok(PrivacyLoss::Approx {
                    epsilon: finite(eps, "epsilon")?,
                    delta,
                })
            }
        }
    }
}

/// Why a budget of `budget`'s notion cannot account for a spend of `spend`'s notion.
fn notion_mismatch(budget: &PrivacyLoss, spend: &PrivacyLoss) -> String {
    let kind = |l: &PrivacyLoss| match l {
        PrivacyLoss::Pure { .. } => "pure ε-DP",
        PrivacyLoss::Approx { .. } => "(ε, δ)-DP",
        PrivacyLoss::Zcdp { .. } => "ρ-zCDP",
    };
    let why = match budget {
        PrivacyLoss::Pure { .. } => "only pure ε-DP spends imply a pure ε-DP bound",
        _ => "an (ε, δ)-DP guarantee implies no ρ-zCDP bound",
    };
    format!(
        "a {} budget cannot account for a {} spend ({why})",
        kind(budget),
        kind(spend)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pure_budget() -> Result<()> {
        let mut l = Ledger::new(PrivacyLoss::pure(1.0)?);
        l.spend("a", PrivacyLoss::pure(0.5)?)?;
        l.spend("b", PrivacyLoss::pure(0.5)?)?;
        assert!(matches!(
            l.spend("c", PrivacyLoss::pure(1e-9)?),
            Err(CoreError::BudgetExceeded { .. })
        ));
        assert!(l.spend("z", PrivacyLoss::zcdp(0.0)?).is_err());
        assert_eq!(l.spends().len(), 2);
        assert_eq!(l.spent()?, PrivacyLoss::Pure { epsilon: 1.0 });
        Ok(())
    }

    #[test]
    fn a_refusal_names_the_spend_and_states_total_spent_and_remaining() -> Result<()> {
        let mut l = Ledger::new(PrivacyLoss::pure(1.0)?);
        l.spend("first", PrivacyLoss::pure(0.75)?)?;
        let e = l
            .check_spend(
                "gaussian on all-2way",
                &PrivacyLoss::pure(0.5)?,
                Neighbouring::ReplaceOne,
            )
            .unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, CoreError::BudgetExceeded { .. }), "{msg}");
        for want in [
            "'gaussian on all-2way'",
            "total budget ε = 1 ",
            "spent ε = 0.75 ",
            "remaining ε = 0.25 ",
        ] {
            assert!(msg.contains(want), "{want}: {msg}");
        }
        assert!(!msg.contains("unlabelled"), "{msg}");
        // check_spend records nothing, and agrees with spend_under
        assert_eq!(l.spends().len(), 1);
        assert!(
            l.check_spend("x", &PrivacyLoss::pure(0.25)?, Neighbouring::ReplaceOne)
                .is_ok()
        );
        // a kind the budget cannot account for says so, in plain words
        let e = l
            .check_spend("g", &PrivacyLoss::zcdp(0.01)?, Neighbouring::ReplaceOne)
            .unwrap_err();
        assert!(matches!(e, CoreError::IncompatibleComposition { .. }));
        assert!(
            e.to_string()
                .contains("a pure ε-DP budget cannot account for a ρ-zCDP spend"),
            "{e}"
        );
        Ok(())
    }

    #[test]
    fn zcdp_budget_takes_pure_as_half_square() -> Result<()> {
        let mut l = Ledger::new(PrivacyLoss::zcdp(1.0)?);
        l.spend("p", PrivacyLoss::pure(1.0)?)?; // ρ = 1/2
        l.spend("z", PrivacyLoss::zcdp(0.5)?)?;
        assert_eq!(l.spent()?, PrivacyLoss::Zcdp { rho: 1.0 });
        assert!(l.can_spend(&PrivacyLoss::zcdp(1e-12)?).is_err());
        assert!(l.can_spend(&PrivacyLoss::approx(0.0, 0.0)?).is_err());
        Ok(())
    }

    #[test]
    fn spends_are_charged_in_the_ledgers_relation() -> Result<()> {
        use Neighbouring::{AddRemove, ReplaceOne};
        // replace-one ledger: an add/remove ε = 0.5 costs 2 · 0.5 = 1 (group privacy, k = 2)
        let mut l = Ledger::new(PrivacyLoss::pure(1.5)?);
        l.spend_under("ar", PrivacyLoss::pure(0.5)?, AddRemove)?;
        assert_eq!(l.spent()?, PrivacyLoss::Pure { epsilon: 1.0 });
        assert_eq!(l.spends()[0].neighbouring, Some(AddRemove));
        assert_eq!(l.spends()[0].loss, PrivacyLoss::Pure { epsilon: 0.5 });
        assert!(matches!(
            l.spend_under("ar2", PrivacyLoss::pure(0.5)?, AddRemove),
            Err(CoreError::BudgetExceeded { .. })
        ));
        l.spend_under("ro", PrivacyLoss::pure(0.5)?, ReplaceOne)?;
        assert_eq!(l.spent()?, PrivacyLoss::Pure { epsilon: 1.5 });
        // replace-one zCDP ledger: add/remove ρ = 0.2 costs 4 · 0.2 = 0.8
        let mut z = Ledger::new(PrivacyLoss::zcdp(1.0)?);
        z.spend_under("g", PrivacyLoss::zcdp(0.2)?, AddRemove)?;
        assert_eq!(z.spent()?, PrivacyLoss::Zcdp { rho: 0.8 });
        // add/remove ledger: own relation at face value, replace-one refused
        let mut a = Ledger::with_neighbouring(PrivacyLoss::pure(1.0)?, AddRemove);
        assert!(matches!(
            a.spend_under("ro", PrivacyLoss::pure(0.1)?, ReplaceOne),
            Err(CoreError::NoNeighbouringConversion { .. })
        ));
        a.spend("ar", PrivacyLoss::pure(1.0)?)?;
        assert_eq!(a.spent()?, PrivacyLoss::Pure { epsilon: 1.0 });
        assert!(a.spends().len() == 1);
        // unknown relation (legacy): add/remove-converted in a replace-one ledger,
        // refused by an add/remove one
        let legacy = Spend {
            label: "old".into(),
            loss: PrivacyLoss::pure(0.4)?,
            neighbouring: None,
        };
        let r = Ledger::restore(PrivacyLoss::pure(1.0)?, ReplaceOne, vec![legacy.clone()])?;
        assert_eq!(r.spent()?, PrivacyLoss::Pure { epsilon: 0.8 });
        assert!(r.can_spend(&PrivacyLoss::pure(0.3)?).is_err());
        assert!(Ledger::restore(PrivacyLoss::pure(1.0)?, AddRemove, vec![legacy]).is_err());
        Ok(())
    }

    #[test]
    fn approx_budget_mixes() -> Result<()> {
        let mut l = Ledger::new(PrivacyLoss::approx(3.0, 1e-5)?);
        l.spend("a", PrivacyLoss::approx(0.5, 5e-6)?)?;
        l.spend("p", PrivacyLoss::pure(0.5)?)?;
        l.spend("z", PrivacyLoss::zcdp(0.01)?)?;
        let PrivacyLoss::Approx { epsilon, delta } = l.spent()? else {
            panic!("not approx")
        };
        let expected = 1.0 + zcdp_epsilon(0.01, 1e-5 - 5e-6)?;
        assert!(epsilon >= expected && epsilon <= expected + 1e-12);
        assert_eq!(delta, 1e-5);
        // All δ used by Approx spends: no room to convert zCDP.
        let mut l2 = Ledger::new(PrivacyLoss::approx(3.0, 1e-5)?);
        l2.spend("a", PrivacyLoss::approx(0.5, 1e-5)?)?;
        assert!(l2.spend("z", PrivacyLoss::zcdp(0.01)?).is_err());
        Ok(())
    }
}
