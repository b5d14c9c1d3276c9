//! `dpqr release` and its dry run: the flags turned into a
//! [`dp_bench::pipeline::ReleaseRequest`], the pipeline run with the command's spinner and
//! signal handling ([`CliEvents`]), and its outcome printed.

use clap::{Args, ValueEnum};
use dp_bench::io::answers::AnswersForm;
use dp_bench::io::output::{self, AtomicFile};
use dp_bench::io::synthetic::weight_column;
use dp_bench::pipeline::{
    self, ChargeGuard, Counting, DryRunReport, LedgerRecord, LedgerTarget, Outcome, Plan,
    ReleaseEvents, ReleaseOutputs, ReleaseRequest, Released, RoundProgress, describe_workload,
};
use dp_bench::registry::BudgetArgs;
use dp_bench::{Result, quoted};
use dp_core::{Neighbouring, Num, ProgressSink};
use dp_mechanisms::{Normaliser, PostProcessing};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::NeighbouringArg;
use crate::data::DataArgs;
use crate::engine::EngineArgs;
use crate::progress::CliProgress;
use crate::settings_args::SettingsArgs;
use crate::spinner;

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum PostArg {
    None,
    Simplex,
}

/// `--answers-form`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum AnswersFormArg {
    /// Labelled when the --domain schema has labels or bins, codes otherwise.
    Auto,
    /// marginal,cell,answer.
    Codes,
    /// marginal,cell,answer,label,count (also over a domain of integer codes).
    Labelled,
}

/// What a release outputs, for `dpqr release --help`.
pub(crate) const RELEASE_OUTPUTS_HELP: &str = "\
What is output: the answers, the report, the synthetic records, every printed line and the \
progress are functions of the public inputs and of the mechanism's noisy values only; none \
of them holds a timing (no elapsed time, no ETA, no seconds). Out of scope: the run time \
of the process itself, which grows with the number of records and with data-dependent work \
and can be seen by whoever watches the run. Do not publish it (docs/privacy.md, \
\"What `dpqr release` outputs\").";

#[derive(Args)]
#[command(after_help = RELEASE_OUTPUTS_HELP)]
pub(crate) struct ReleaseArgs {
    #[command(flatten)]
    pub(crate) data: DataArgs,
    /// all-Kway | random-Kway:M | FILE.json (a list of attribute-name lists).
    #[arg(long)]
    pub(crate) workload: String,
    /// Seed of random workloads (random-Kway:M); independent of --seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub(crate) workload_seed: u64,
    /// Mechanism (see `dpqr mechanisms`), or `auto`: chosen from public inputs alone — the
    /// workload's class and the budget's kind — by the rule of docs/auto.md
    /// (adaptive-projection for marginal tables under --rho or --epsilon with --delta); the
    /// dry run, the summary and the report say what it chose and why.
    #[arg(long)]
    pub(crate) mechanism: String,
    /// ε > 0 (with --delta for the zCDP mechanisms).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) epsilon: Option<f64>,
    /// δ in (0, 1): the zCDP mechanisms spend the largest ρ whose (ε, δ) conversion is
    /// within budget. At most 1/n under replace-one neighbours and at most 1e-6 under
    /// add/remove (where n is private) unless --allow-large-delta is given.
    #[arg(long, conflicts_with = "rho", allow_hyphen_values = true)]
    pub(crate) delta: Option<f64>,
    /// Accept a --delta above 1/n (replace-one) or above 1e-6 (add/remove); see
    /// docs/privacy.md, "Budgets and parameters".
    #[arg(long)]
    pub(crate) allow_large_delta: bool,
    /// ρ > 0 of ρ-zCDP, instead of --epsilon/--delta.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) rho: Option<f64>,
    /// Neighbouring relation of the guarantee [default: add-remove for the mechanisms that
    /// support it (gaussian, laplace, adaptive-projection: n stays private and is never
    /// printed), replace-one for the others (n is public); `dpqr mechanisms` lists each
    /// one's]. Refused by the local-model mechanisms, whose guarantee is for any two inputs
    /// of one client.
    #[arg(long, value_enum)]
    pub(crate) neighbouring: Option<NeighbouringArg>,
    #[command(flatten)]
    pub(crate) settings: SettingsArgs,
    /// Post-processing: simplex projects each table onto the probability simplex (the
    /// mechanisms whose answers need not be tables of proportions: gaussian, laplace,
    /// relaxed-projection; `dpqr mechanisms` says which).
    #[arg(long, value_enum, default_value = "none")]
    pub(crate) post: PostArg,
    /// TESTING ONLY: seed of the mechanism's randomness (ChaCha20). Anyone who learns the
    /// seed can regenerate the noise and subtract it, recovering the exact counts: a seeded
    /// release is reproducible and NOT private against whoever knows or guesses the seed.
    /// The seed is never written to the report or printed. Without it the OS seeds the
    /// generator — always do that for real releases.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
    /// Output CSV: marginal,cell,answer — and, labelled (a --domain schema with labels or
    /// bins, or --answers-form labelled), label,count after them: each cell named through
    /// the schema (`sex=male|age=[18,30)`) and the answer times the total (the public n
    /// under replace-one neighbours; under add/remove the release's own noisy estimate of
    /// the total, never the private n; the report says which).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// The form of the answers of a marginal workload: labelled when the schema has labels
    /// or bins (auto), or always one form.
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) answers_form: AnswersFormArg,
    /// Also write the certificate and diagnostics as JSON here.
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
    /// Also write the released synthetic records (CSV: each record in the form of the data
    /// the --domain schema reads — labels, a number drawn uniformly within each bin from
    /// the release's own generator, `other`, integer codes for attributes given by a size —
    /// and, last, a weight column named `weight`, or `weight_1`, … if an attribute is
    /// called `weight`) here; refused up front for mechanisms that release no synthetic
    /// data.
    #[arg(long)]
    pub(crate) synthetic_out: Option<PathBuf>,
    /// With --synthetic-out: write N plain rows (the input's columns, no weight column; the
    /// weights expanded by largest-remainder rounding, as `dpqr synthetic expand --total
    /// N`; a bin value drawn afresh for every row) instead of the weighted records.
    #[arg(long, value_name = "N", requires = "synthetic_out", allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) rows: Option<u64>,
    /// No progress output.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// Budget ledger (`dpqr ledger init`): the release is charged to one of its named
    /// datasets (--ledger-dataset, or the ledger's only dataset), refused before any data
    /// is read if it would overspend that dataset's budget (charged in the ledger's
    /// neighbouring relation; exit status 3), and recorded before any noise is drawn.
    #[arg(long)]
    pub(crate) ledger: Option<PathBuf>,
    /// The dataset of the --ledger this release is charged to, as named at `dpqr ledger
    /// init --dataset NAME` or `dpqr ledger add-dataset`; needed when the ledger holds
    /// several. A name the ledger does not hold is refused, never opened: renaming,
    /// recompressing or converting the data file does not give it a fresh budget; and data
    /// already charged to another of the ledger's datasets is refused for this one.
    #[arg(long, value_name = "NAME", requires = "ledger")]
    pub(crate) ledger_dataset: Option<String>,
    /// Refuse workloads whose release would need more memory than this (MiB, estimated
    /// before allocating).
    #[arg(long, default_value_t = 4096, allow_negative_numbers = true)]
    pub(crate) max_memory_mib: u64,
    /// Plan only: print the guarantee, the workload's size and memory, the universe the
    /// mechanism would enumerate, the predicted noise per count (answer-perturbation
    /// baselines) or the error bound the mechanism's paper states (with --assume-n), and
    /// whether the ledger would take the spend — from public inputs only (the domain and
    /// the workload), after checking every output path. Reads no data, records no spend,
    /// draws no noise, writes nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// With --dry-run: predict for a table of N records. The stated error bounds
    /// (projection, IC-MW) depend on the number of records, which a dry run does not read.
    #[arg(long, value_name = "N", requires = "dry_run", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) assume_n: Option<u64>,
    /// Count the workload in one streaming pass over the data (bounded memory: a few batches
    /// of records and the counts, never the whole table; batches counted in parallel; a gzip
    /// --data, by `.gz` name or magic bytes, is decompressed on the fly) and release from
    /// the counts. For the mechanisms that need only counts (gaussian, laplace: `dpqr
    /// mechanisms`); refused for the others and with --attributes. A --data file (CSV or
    /// Parquet) is streamed without this flag whenever the mechanism needs only counts and
    /// --attributes is not given; the flag matters for --dataset and --batch-rows.
    #[arg(long)]
    pub(crate) stream: bool,
    /// Records per batch of --stream.
    #[arg(long, default_value_t = 65_536, requires = "stream", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) batch_rows: u64,
    #[command(flatten)]
    pub(crate) engine: EngineArgs,
}

impl ReleaseArgs {
    /// The flags as the pipeline's plain data.
    pub(crate) fn request(&self) -> ReleaseRequest {
        ReleaseRequest {
            data: self.data.spec(),
            workload: self.workload.clone(),
            workload_seed: self.workload_seed,
            mechanism: self.mechanism.clone(),
            settings: self.settings.settings(),
            budget: BudgetArgs {
                epsilon: self.epsilon,
                delta: self.delta,
                rho: self.rho,
            },
            allow_large_delta: self.allow_large_delta,
            neighbouring: self.neighbouring.map(|n| match n {
                NeighbouringArg::ReplaceOne => Neighbouring::ReplaceOne,
                NeighbouringArg::AddRemove => Neighbouring::AddRemove,
            }),
            post: match self.post {
                PostArg::None => PostProcessing::None,
                PostArg::Simplex => PostProcessing::SimplexProjection,
            },
            seed: self.seed,
            outputs: ReleaseOutputs {
                answers: self.out.clone(),
                report: self.report.clone(),
                synthetic: self.synthetic_out.clone(),
                synthetic_rows: self.rows,
                answers_form: match self.answers_form {
                    AnswersFormArg::Auto => AnswersForm::Auto,
                    AnswersFormArg::Codes => AnswersForm::Codes,
                    AnswersFormArg::Labelled => AnswersForm::Labelled,
                },
            },
            ledger: self.ledger.as_ref().map(|path| LedgerTarget {
                path: path.clone(),
                dataset: self.ledger_dataset.clone(),
                data_key: None,
            }),
            max_memory_mib: self.max_memory_mib,
            dry_run: self.dry_run,
            assume_n: self.assume_n,
            counting: Counting {
                stream: self.stream,
                batch_rows: self.batch_rows,
                engine: self.engine.choice(),
            },
        }
    }
}

/// What `dpqr` shows of a release on the way: the spinner and its progress, warnings on
/// stderr, the ledger's record on stdout; outputs created and committed through
/// `interrupt.rs`, so that an interrupted release says what it charged and wrote.
struct CliEvents {
    pb: ProgressBar,
    quiet: bool,
}

impl ReleaseEvents for CliEvents {
    fn stage(&self, message: &str) {
        self.pb.set_message(message.to_string());
    }

    fn counting(&self, message: &str) {
        crate::progress::announce_stage(&self.pb, self.quiet, message);
    }

    fn warning(&self, message: &str) {
        errln!("{message}");
    }

    fn progress(&self) -> Option<ProgressSink> {
        // --quiet: no reporter at all, so nothing reaches stderr
        (!self.quiet).then(|| ProgressSink(Arc::new(CliProgress::new(self.pb.clone()))))
    }

    fn round_progress(&self) -> Option<RoundProgress> {
        let pb = self.pb.clone();
        Some(Arc::new(move |line: String| pb.set_message(line)))
    }

    fn charging(&self, key: &str, loss: String) -> Box<dyn ChargeGuard> {
        Box::new(crate::interrupt::charging(key, loss))
    }

    fn recorded(&self, record: &LedgerRecord) {
        outln!("{record}");
    }

    fn create_output(&self, path: &Path) -> Result<AtomicFile> {
        crate::interrupt::create_output(path)
    }

    fn commit_outputs(&self, files: Vec<AtomicFile>) -> Result<()> {
        crate::interrupt::commit_outputs(files)
    }
}

pub(crate) fn release(args: &ReleaseArgs) -> Result<()> {
    let request = args.request();
    // what the release has done, for a SIGINT/SIGTERM or a closed stdout (interrupt.rs)
    crate::interrupt::begin_release(
        &request.outputs.list(),
        request.ledger.as_ref().map(|l| l.path.as_path()),
    );
    let pb = spinner(args.quiet);
    crate::interrupt::set_progress(&pb);
    let events = CliEvents {
        pb: pb.clone(),
        quiet: args.quiet,
    };
    match pipeline::release(&request, &events)? {
        Outcome::DryRun {
            plan,
            ledger_dataset,
        } => {
            pb.finish_and_clear();
            dry_run(&plan, ledger_dataset);
            Ok(())
        }
        Outcome::Released(released) => {
            pb.finish_and_clear();
            summary(&released);
            Ok(())
        }
        Outcome::LocalDryRun(plan) => {
            pb.finish_and_clear();
            for line in plan.dry_run_lines() {
                outln!("{line}");
            }
            Ok(())
        }
        Outcome::LocalReleased { plan, released } => {
            pb.finish_and_clear();
            outln!("privacy spent: {}", plan.guarantee());
            outln!(
                "{} clients (one per record), {} message(s) per client; not recorded in any \
                 ledger (a local ε is accounted per client)",
                released.clients,
                released.release.messages_per_client
            );
            outln!("wrote {}", quoted(&args.out.display().to_string()));
            Ok(())
        }
    }
}

/// The summary of a completed release on stdout.
fn summary(released: &Released<'_>) {
    let Released {
        plan,
        release,
        n_note,
        count_scale,
    } = released;
    let request = plan.request();
    outln!("privacy spent: {}", release.certificate.statement());
    outln!("settings: {}", plan.settings_line());
    outln!("{n_note}");
    if let Some(noise) = release.diagnostics.noise {
        outln!(
            "noise: {} on counts, {} = {} (sensitivity {:.4}); standard deviation {:.4} per \
             count, {:.4e} per answer ({})",
            noise.distribution,
            noise.distribution.parameter_name(),
            Num(noise.parameter),
            noise.sensitivity,
            noise.count_std,
            noise.answer_std,
            match noise.normaliser {
                Normaliser::PublicN => "answers are counts / n",
                Normaliser::NoisyTotal => "relative to the noisy total the answers are divided by",
            }
        );
    }
    for note in &release.diagnostics.notes {
        outln!("note: {note}");
    }
    let size = |p: &Path| {
        std::fs::metadata(p).map_or(String::new(), |m| {
            format!(" ({})", output::human_size(m.len()))
        })
    };
    let out = &request.outputs.answers;
    outln!(
        "wrote {} answers ({}) to {}{}{}",
        release.answers.len(),
        describe_workload(plan.workload()),
        out.display(),
        size(out),
        if plan.labelled() {
            ", labelled through the schema, with counts"
        } else {
            ""
        }
    );
    if let Some(scale) = count_scale {
        outln!("{}", scale.source);
    }
    if let (Some(path), Some(synthetic)) = (&request.outputs.synthetic, &release.synthetic) {
        match request.outputs.synthetic_rows {
            Some(rows) => outln!(
                "wrote {rows} synthetic rows (from {} weighted records) to {}{}",
                synthetic.weights.len(),
                path.display(),
                size(path)
            ),
            None => {
                let weight = weight_column(synthetic.records.domain());
                let renamed = if weight == "weight" {
                    String::new()
                } else {
                    format!(
                        "; its weight column is called {weight} because an attribute is named \
                         weight"
                    )
                };
                outln!(
                    "wrote {} synthetic records to {}{}{renamed}",
                    synthetic.weights.len(),
                    path.display(),
                    size(path)
                );
            }
        }
        if let Some(note) = plan.synthetic_note() {
            outln!("synthetic values: {note}");
        }
    }
}

/// `dpqr release --dry-run` (issue #11 §2, "Plan before spending"): what the release would
/// do, from public inputs only — the domain (file or bundled), the workload, the
/// parameters. Called after every argument and output check and the ledger's check.
fn dry_run(plan: &Plan<'_>, ledger_dataset: Option<String>) {
    for line in DryRunReport::of(plan, ledger_dataset).lines() {
        outln!("{line}");
    }
}
