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
//! dpqr schema check --data raw.csv --schema schema.json [--json]   # NON-PRIVATE data check
//! dpqr ledger init FILE --epsilon 1 --delta 1e-9 [--neighbouring add-remove]
//!                                                   # then: dpqr release ... --ledger FILE
//! ```

#![forbid(unsafe_code)]
// every print goes through out.rs, which never panics on a closed stdout or stderr
#![deny(clippy::print_stdout, clippy::print_stderr)]

use clap::{Parser, Subcommand, ValueEnum};
use dp_bench::io::datasets;
use indicatif::{ProgressBar, ProgressStyle};
use std::process::ExitCode;
use std::time::Duration;

// first: its macros (`outln!`, `out!`, `errln!`) are used by the modules below
#[macro_use]
mod out;

mod audit;
mod data;
mod engine;
mod eval;
mod interrupt;
mod ledger;
mod mechanisms;
mod progress;
mod release;
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

/// The exit statuses, shown by `dpqr --help` (and in the README).
const EXIT_STATUSES: &str = "\
Exit status:
  0    success. Also when stdout was closed early (`dpqr ... | head -1`), and when a release
       has finished (spend recorded, every output in place) but stdout could not be written
       or a SIGINT/SIGTERM came after it finished: stderr says so; do not retry.
  1    `dpqr audit`: the audit FAILED (the empirical lower bound exceeds the claimed ε).
  2    error (usage, input, I/O) with nothing charged: no spend recorded in any ledger.
  3    the --ledger refused the spend (over budget, or a kind of guarantee it cannot
       charge): nothing recorded, read or written.
  4    stdout could not be written (not a closed pipe) by a command whose result is what it
       prints (mechanisms, datasets, eval, audit, ledger show, schema draft, schema
       check, --dry-run). `schema check` exits 0 whenever the check ran, whatever it found.
  5    `dpqr release` failed after its spend was recorded in the --ledger: the spend stays;
       stderr says which outputs were written. Running it again spends again.
  130  interrupted by SIGINT (143: SIGTERM) before the release finished; stderr says whether
       the budget was charged (and in which ledger) and which outputs were written.";

#[derive(Parser)]
#[command(
    name = "dpqr",
    version,
    about = "Differentially private query release",
    long_about = None,
    after_help = EXIT_STATUSES
)]
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
    /// Public schemas for raw CSV values (category labels, numeric bins): draft one, or
    /// check a file against one (both NON-PRIVATE).
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

/// The style of the commands' spinner: a message, and no elapsed time (a release's run
/// time grows with `n`: docs/privacy.md, "What `dpqr release` outputs").
pub(crate) fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg}")
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

/// The exit status when the command itself succeeded, from what became of stdout: a closed
/// pipe is never an error; another failure is (status 4) unless the command's work was
/// files or a spend that are now in place (`did_files`), which a retry would only redo.
fn status_after_success(did_files: bool) -> ExitCode {
    match out::stdout_status() {
        out::StdoutStatus::Complete => ExitCode::SUCCESS,
        out::StdoutStatus::Closed => {
            if let Some(r) = interrupt::report(
                "dpqr: stdout was closed before the summary was printed in full; the release \
                 is complete (exit status 0, do not retry):",
            ) && interrupt::finished()
            {
                errln!("{}", r.trim_end());
            }
            ExitCode::SUCCESS
        }
        out::StdoutStatus::Failed(e) if did_files || interrupt::finished() => {
            let header = format!(
                "dpqr: warning: cannot write to stdout ({e}); the command is complete (exit \
                 status 0, do not retry)"
            );
            match interrupt::report(&format!("{header}:")) {
                Some(r) if interrupt::finished() => errln!("{}", r.trim_end()),
                _ => errln!("{header}"),
            }
            ExitCode::SUCCESS
        }
        out::StdoutStatus::Failed(e) => {
            errln!("error: cannot write to stdout: {e}");
            ExitCode::from(4)
        }
    }
}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Audit(a) = &cli.command {
        let verdict = audit(a);
        out::flush_stdout();
        return match verdict {
            Ok(true) => status_after_success(false),
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                errln!("error: {e}");
                ExitCode::from(e.exit_status())
            }
        };
    }
    if matches!(cli.command, Command::Release(_)) {
        interrupt::install();
    }
    let outcome = match &cli.command {
        Command::Release(a) => release(a),
        Command::Eval(a) => eval(a),
        Command::Datasets => {
            for d in datasets::BUNDLED {
                outln!(
                    "{:<8} {}\n         origin: {}; license: {}",
                    d.name,
                    d.description,
                    d.origin,
                    d.license
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
    out::flush_stdout();
    match outcome {
        // a ledger created or a file expanded is in place whatever became of stdout
        Ok(()) => status_after_success(matches!(
            cli.command,
            Command::Ledger(LedgerCommand::Init { .. }) | Command::Synthetic(_)
        )),
        Err(e) => {
            errln!("error: {e}");
            if interrupt::charged() {
                // 5: the spend is recorded and stays; say what was written
                if let Some(r) =
                    interrupt::report("dpqr: the release failed after its spend was recorded:")
                {
                    errln!("{}", r.trim_end());
                }
                return ExitCode::from(5);
            }
            // 3: a budget refused the spend (nothing was read, drawn or written); 2: any
            // other error
            ExitCode::from(e.exit_status())
        }
    }
}
