//! `dpqr ledger`: create and show a budget ledger.

use clap::Subcommand;
use dp_bench::io::ledger_file::{self};
use dp_bench::registry::{BudgetArgs, check_budget_is_meaningful};
use dp_bench::{BenchError, Result};
use dp_core::Neighbouring;
use std::path::PathBuf;

use crate::NeighbouringArg;

#[derive(Subcommand)]
pub(crate) enum LedgerCommand {
    /// Create FILE with a per-dataset total budget (--epsilon [--delta] or --rho).
    Init {
        /// The ledger file (must not exist).
        file: PathBuf,
        /// ε of the budget (pure ε-DP alone, (ε, δ) with --delta).
        #[arg(long, allow_hyphen_values = true)]
        epsilon: Option<f64>,
        /// δ of an (ε, δ) budget.
        #[arg(long, requires = "epsilon", allow_hyphen_values = true)]
        delta: Option<f64>,
        /// ρ of a ρ-zCDP budget.
        #[arg(long, conflicts_with_all = ["epsilon", "delta"], allow_hyphen_values = true)]
        rho: Option<f64>,
        /// Neighbouring relation of the budget. Spends under the other relation are
        /// converted (add/remove into replace-one: 2ε, 4ρ, (2ε, (1 + e^ε)δ)) or refused
        /// (replace-one gives no add/remove guarantee).
        #[arg(long, value_enum, default_value = "replace-one")]
        neighbouring: NeighbouringArg,
    },
    /// Print the budget and every recorded spend.
    Show {
        /// The ledger file.
        file: PathBuf,
    },
}

pub(crate) fn ledger(cmd: &LedgerCommand) -> Result<()> {
    match cmd {
        LedgerCommand::Init {
            file,
            epsilon,
            delta,
            rho,
            neighbouring,
        } => {
            BudgetArgs {
                epsilon: *epsilon,
                delta: *delta,
                rho: *rho,
            }
            .check_values()?;
            let budget = match (epsilon, delta, rho) {
                (Some(e), None, None) => dp_core::PrivacyLoss::pure(*e)?,
                (Some(e), Some(d), None) => dp_core::PrivacyLoss::approx(*e, *d)?,
                (None, None, Some(r)) => dp_core::PrivacyLoss::zcdp(*r)?,
                _ => {
                    return Err(BenchError::Usage(
                        "give --epsilon (pure), --epsilon with --delta, or --rho".into(),
                    ));
                }
            };
            check_budget_is_meaningful(&budget)?;
            let neighbouring = match neighbouring {
                NeighbouringArg::ReplaceOne => Neighbouring::ReplaceOne,
                NeighbouringArg::AddRemove => Neighbouring::AddRemove,
            };
            ledger_file::init(file, budget, neighbouring)?;
            outln!(
                "created ledger {} with per-dataset budget {budget} under {neighbouring} \
                 neighbours",
                file.display()
            );
            Ok(())
        }
        LedgerCommand::Show { file } => {
            out!("{}", ledger_file::read(file)?.describe());
            Ok(())
        }
    }
}
