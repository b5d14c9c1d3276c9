//! `dpqr ledger`: create a budget ledger with named datasets, add a dataset, show it.

use clap::Subcommand;
use dp_bench::io::ledger_file::{self, show_name};
use dp_bench::registry::{BudgetArgs, check_budget_is_meaningful};
use dp_bench::{BenchError, Result};
use dp_core::Neighbouring;
use std::path::PathBuf;

use crate::NeighbouringArg;

#[derive(Subcommand)]
pub(crate) enum LedgerCommand {
    /// Create FILE with a per-dataset total budget (--epsilon [--delta] or --rho) and the
    /// datasets it keeps accounts for (--dataset NAME, repeatable).
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
        /// A dataset the ledger keeps a budget for, named by you (repeat for several).
        /// `release --ledger` charges the dataset its --ledger-dataset names, or the
        /// ledger's only dataset, and refuses a release the ledger cannot place: the same
        /// data under another file name, compression or format is the same dataset.
        /// Without --dataset the ledger has one dataset, `default`, charged by every
        /// release.
        #[arg(long = "dataset", value_name = "NAME")]
        datasets: Vec<String>,
    },
    /// Add a dataset to FILE, with the full per-dataset budget: only for data that is in
    /// the ledger under no other name (its releases then need --ledger-dataset NAME).
    AddDataset {
        /// The ledger file.
        file: PathBuf,
        /// The new dataset's name.
        name: String,
    },
    /// Print the budget, the datasets and every recorded spend.
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
            datasets,
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
            let created = ledger_file::init(file, budget, neighbouring, datasets)?;
            let names: Vec<String> = created.datasets.keys().map(|k| show_name(k)).collect();
            outln!(
                "created ledger {} with per-dataset budget {budget} under {neighbouring} \
                 neighbours; datasets: {}",
                file.display(),
                names.join(", ")
            );
            Ok(())
        }
        LedgerCommand::AddDataset { file, name } => {
            ledger_file::add_dataset(file, name)?;
            outln!(
                "ledger {}: added dataset {} with the per-dataset budget; charge it with \
                 `dpqr release … --ledger {} --ledger-dataset {}`",
                file.display(),
                show_name(name),
                file.display(),
                show_name(name)
            );
            Ok(())
        }
        LedgerCommand::Show { file } => {
            out!("{}", ledger_file::read(file)?.describe());
            Ok(())
        }
    }
}
