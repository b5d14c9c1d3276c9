//! `dpqr`: release differentially private answers to a workload of marginals from a CSV.
//!
//! ```text
//! dpqr release --data adult.csv --domain adult-domain.json --workload all-3way \
//!     --mechanism gaussian --epsilon 1 --delta 1e-9 --seed 7 --out answers.csv
//! dpqr eval --data adult.csv --domain adult-domain.json --answers answers.csv   # NON-PRIVATE
//! dpqr datasets        # bundled datasets
//! dpqr mechanisms [--json]   # mechanisms: guarantee, budget flags, relations, limits
//! dpqr audit --mechanism laplace [--runs N] [--seed S] [--canary]   # empirical ε lower bound
//! dpqr eval --data adult.csv --domain adult-domain.json --synthetic syn.csv --workload all-2way
//! dpqr synthetic expand --in syn.csv --domain dom.json --total 1000 --out rows.csv
//! dpqr schema draft --data raw.csv > schema.json   # NON-PRIVATE: review before use
//! dpqr ledger init FILE --epsilon 1 --delta 1e-9 [--neighbouring add-remove]
//!                                                   # then: dpqr release ... --ledger FILE
//! ```

use clap::{Parser, Subcommand, ValueEnum};
use dp_bench::io::datasets;
use indicatif::{ProgressBar, ProgressStyle};
use std::process::ExitCode;
use std::time::Duration;

mod audit;
mod data;
mod engine;
mod eval;
mod ledger;
mod mechanisms;
mod progress;
mod release;
mod release_local;
mod schema;
mod settings_args;
mod synthetic;

use audit::{AuditArgs, audit};
use eval::{EvalArgs, eval};
use ledger::{LedgerCommand, ledger};
use mechanisms::mechanisms;
use release::{ReleaseArgs, release};
use schema::{SchemaCommand, schema};
use synthetic::{SyntheticCommand, synthetic};

#[derive(Parser)]
#[command(name = "dpqr", version, about = "Differentially private query release", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Release private answers to a marginal workload and print the guarantee spent.
    Release(Box<ReleaseArgs>),
    /// NON-PRIVATE: score an answers file, or a synthetic records file on a workload,
    /// against the true data, beside the uniform and all-zeros baselines.
    Eval(EvalArgs),
    /// List the bundled datasets.
    Datasets,
    /// List the available mechanisms: guarantee, budget flags, neighbouring relations,
    /// synthetic data and domain limits of each.
    Mechanisms {
        /// Print the list as JSON (an array with one object per mechanism).
        #[arg(long)]
        json: bool,
    },
    /// Empirical privacy audit: a lower confidence bound on the ε a mechanism provides.
    Audit(AuditArgs),
    /// Create or show a budget ledger (see `release --ledger`).
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// Public schemas for raw CSV values (category labels, numeric bins).
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Synthetic records files (`release --synthetic-out`): expand to plain integer rows.
    #[command(subcommand)]
    Synthetic(SyntheticCommand),
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum NeighbouringArg {
    ReplaceOne,
    AddRemove,
}

/// The style of the commands' spinner: elapsed time and a message.
pub(crate) fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

pub(crate) fn spinner(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(spinner_style());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Audit(a) = &cli.command {
        return match audit(a) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    let outcome = match &cli.command {
        Command::Release(a) => release(a),
        Command::Eval(a) => eval(a),
        Command::Datasets => {
            for d in datasets::BUNDLED {
                println!(
                    "{:<8} {}\n         origin: {}; license: {}",
                    d.name, d.description, d.origin, d.license
                );
            }
            Ok(())
        }
        Command::Ledger(c) => ledger(c),
        Command::Schema(c) => schema(c),
        Command::Synthetic(c) => synthetic(c),
        Command::Audit(_) => Ok(()),
        Command::Mechanisms { json } => mechanisms(*json),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            // 3: a budget refused the spend (nothing was read, drawn or written); 2: any
            // other error
            ExitCode::from(if e.is_over_budget() { 3 } else { 2 })
        }
    }
}
