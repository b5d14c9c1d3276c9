//! `dpqr release` and its dry run: the flags turned into a
//! [`dp_bench::pipeline::ReleaseRequest`], the pipeline run with the command's spinner and
//! signal handling ([`CliEvents`]), and its outcome printed.

use clap::{Args, ValueEnum};
use dp_bench::io::answers::AnswersForm;
use dp_bench::io::ledger_file;
use dp_bench::io::output::{self, AtomicFile};
use dp_bench::io::synthetic::weight_column;
use dp_bench::pipeline::{
    self, BYTES_PER_QUERY, ChargeGuard, Counting, LedgerRecord, LedgerTarget, Outcome, Plan,
    ReleaseEvents, ReleaseOutputs, ReleaseRequest, Released, RoundProgress, describe_workload,
};
use dp_bench::registry::BudgetArgs;
use dp_bench::{Result, quoted};
use dp_core::{Neighbouring, Num, ProgressSink};
use dp_mechanisms::noise_stats::CountNoise;
use dp_mechanisms::{Mechanism, NoiseDistribution, NoiseSchedule, Normaliser, PostProcessing};
use dp_queries::{AnyWorkload, Workload};
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
            let ledger_note = ledger_dataset.map(|dataset| {
                format!(
                    "ledger: the spend fits the remaining budget of dataset {} (nothing \
                     recorded by a dry run)",
                    ledger_file::show_name(&dataset)
                )
            });
            dry_run(&plan, ledger_note)
        }
        Outcome::Released(released) => {
            pb.finish_and_clear();
            summary(&released);
            Ok(())
        }
        Outcome::LocalDryRun(plan) => {
            pb.finish_and_clear();
            let workload = plan.workload();
            outln!("dry run: nothing read, nothing written");
            outln!("privacy: {}", plan.guarantee());
            outln!(
                "workload: {} marginals, {} counting queries over {} attributes; one simulated \
                 client per record",
                workload.len(),
                workload.num_queries(),
                plan.attributes()
            );
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

/// The dry run's prediction for a mechanism without fixed count noise: the error bound its
/// paper states for `--assume-n` records, or what the bound needs.
fn stated_bound(assume_n: Option<u64>, workload: &AnyWorkload, mech: &dyn Mechanism<AnyWorkload>) {
    let n = assume_n.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    match n.map(|n| (n, mech.stated_error_bound(workload, n))) {
        Some((n, Some(b))) => outln!(
            "stated bound: {} at most {:.4} {} for a table of {n} records ({})",
            b.statement,
            b.value,
            match b.confidence {
                Some(c) => format!("with probability at least {}", Num(c)),
                None => "in expectation".to_string(),
            },
            b.citation
        ),
        Some((n, None)) => outln!(
            "stated bound: none for this mechanism and workload with {n} records; see its \
             guarantee above and the measured errors in docs/benchmarks.md"
        ),
        // probe with a large table: whether the mechanism states a bound at all
        None if mech.stated_error_bound(workload, usize::MAX >> 8).is_some() => outln!(
            "stated bound: this mechanism's paper bounds its error in terms of the number of \
             records n, which a dry run does not read; give --assume-n N for the bound for a \
             table of N records"
        ),
        None => outln!(
            "predicted error: no a-priori per-answer figure for this mechanism; see its \
             guarantee above and the measured errors in docs/benchmarks.md"
        ),
    }
}

/// The dry run's per-answer error of an answer-perturbation baseline with `--assume-n N`
/// (issue #26 item 4): the standard deviation of an answer, `sd/N` (under add/remove the
/// answers are divided by the noisy total, about N), and on a marginal workload the expected
/// ℓ1 error of a table from the noise alone, with the warning of a release
/// (`Plan::noise_swamps_tables`) when it is above 2 and no post-processing is asked.
fn baseline_per_answer(plan: &Plan<'_>, noise: CountNoise, assume_n: Option<u64>) {
    let Some(n) = assume_n else {
        outln!(
            "per answer: give --assume-n N for the error of an answer and of a table for N \
             records"
        );
        return;
    };
    let answer_std = noise.variance().sqrt() / n as f64;
    outln!(
        "per answer, for {n} records (--assume-n): standard deviation {answer_std:.4e}{}",
        if plan.relation() == Neighbouring::AddRemove {
            " (answers are divided by the noisy total, about n)"
        } else {
            ""
        }
    );
    let AnyWorkload::Marginals(m) = plan.workload() else {
        return;
    };
    let distribution = match noise {
        CountNoise::DiscreteGaussian { .. } => NoiseDistribution::DiscreteGaussian,
        CountNoise::DiscreteLaplace { .. } => NoiseDistribution::DiscreteLaplace,
    };
    if let Some(l1) = pipeline::expected_table_l1(m, answer_std, distribution) {
        outln!(
            "per table: expected ℓ1 error about {l1:.4} from the noise alone (mean over the \
             workload's tables, before post-processing)"
        );
        if l1 > 2.0 && plan.post() == PostProcessing::None {
            outln!("{}", pipeline::swamped_warning(l1));
        }
    }
}

/// The dry run's noise schedule of a mechanism that plans its noise in phases and rounds
/// (adaptive-projection: `dp_mechanisms::NoiseSchedule`, computed by the mechanism from the
/// same opening its run uses; issue #26 item 4), and the error it implies for a measured
/// table: in counts, and as a share of the total with `--assume-n N` only (under add/remove
/// the total is private, and estimated by the release from its noisy 1-way tables).
fn print_schedule(s: &NoiseSchedule, workload: &AnyWorkload, assume_n: Option<u64>) {
    outln!(
        "noise schedule (from public inputs; docs/mechanisms/adaptive.md, \"The noise \
         schedule\"): discrete Gaussian noise, σ per count, calibrated for {} neighbours; \
         ρ = {:.6} in all",
        s.neighbouring,
        s.rho
    );
    outln!(
        "  1-way tables: {} measurements (one per attribute the workload touches), ρ = {:.6} \
         each, σ = {:.6}",
        s.attributes,
        s.one_way.measure_rho,
        s.one_way.sigma()
    );
    outln!(
        "  a round before annealing: measurement ρ = {:.6}, σ = {:.6}; selection ε = {:.6} \
         (ρ {:.6})",
        s.round.measurement.measure_rho,
        s.round.measurement.sigma(),
        s.round.select_epsilon,
        s.round.select_rho
    );
    outln!(
        "  a round after annealing (budgets ×4 when a measurement barely moved the estimate): \
         measurement ρ = {:.6}, σ = {:.6}; selection ε = {:.6}",
        s.annealed_round.measurement.measure_rho,
        s.annealed_round.measurement.sigma(),
        s.annealed_round.select_epsilon
    );
    if let Some(d) = &s.direct {
        outln!(
            "  cheap workload tables, measured once each after the 1-way tables (those whose \
             noise is small against the noisy total; decided by the release): ρ = {:.6} each \
             ({} of ρ over the {} tables of two or more attributes), σ = {:.6}",
            d.measurement.measure_rho,
            d.share,
            d.tables,
            d.measurement.sigma()
        );
    }
    if let Some(c) = &s.check {
        outln!(
            "  checks of the other workload tables (made when they resolve the cells; decided \
             by the release): ρ = {:.6} each, σ = {:.6}",
            c.measurement.measure_rho,
            c.measurement.sigma()
        );
    }
    outln!(
        "  rounds: T = {} nominal (--rounds per attribute × {} attributes); the budget allows \
         at most {} rounds (no cheap table or check measured, no annealing), {} after the \
         opening's largest spend, as few as {} if every round anneals",
        s.nominal_rounds,
        s.attributes,
        s.rounds_at_most,
        s.rounds_after_full_opening,
        s.rounds_if_every_round_anneals
    );
    let Some(m) = workload.as_marginals() else {
        return;
    };
    let tables = m.marginals();
    if tables.is_empty() {
        return;
    }
    let cells = tables.iter().map(|t| t.num_cells() as f64).sum::<f64>() / tables.len() as f64;
    let before = s.round.measurement.expected_l1(cells);
    let after = s.annealed_round.measurement.expected_l1(cells);
    outln!(
        "error of a measured table: a workload table of {cells:.1} cells (the mean) measured \
         in a round has expected ℓ1 noise about {before:.2} counts before annealing, {after:.2} \
         after (√(2/π)·σ·cells); the release's tables are fitted to all measurements, so this \
         is the noise of one measurement, not a bound on the answers"
    );
    match assume_n {
        Some(n) => outln!(
            "  as a share of {n} records (--assume-n): {:.4} before annealing, {:.4} after",
            before / n as f64,
            after / n as f64
        ),
        None => outln!(
            "  as a share of the total: give --assume-n N (the answers are proportions; {})",
            if s.neighbouring == Neighbouring::AddRemove {
                "under add/remove n is private and the release divides by its own noisy total"
            } else {
                "n is public under replace-one but a dry run does not read the data"
            }
        ),
    }
}

/// `dpqr release --dry-run` (issue #11 §2, "Plan before spending"): what the release would
/// do, from public inputs only — the domain (file or bundled), the workload, the
/// parameters. Called after every argument and output check and the ledger's check.
fn dry_run(plan: &Plan<'_>, ledger_note: Option<String>) -> Result<()> {
    let args = plan.request();
    let workload = plan.workload();
    let mech = plan.mechanism();
    let domain = workload.domain();
    let certificate = mech.certificate();
    outln!("dry run: no data read, no budget recorded, no noise drawn, nothing written");
    if let Some(choice) = plan.auto_choice() {
        outln!("{}", choice.sentence());
    }
    if let Some(path) = &args.data.data {
        outln!(
            "data: {} exists and its header fits the schema (column names only; no value read)",
            path.display()
        );
    }
    outln!("privacy: {}", certificate.statement());
    outln!("settings: {}", plan.settings_line());
    let touched = workload.touched_attributes();
    outln!(
        "workload: {}, {} answers, over {} of the domain's {} attributes",
        describe_workload(workload),
        workload.num_queries(),
        touched.len(),
        domain.len()
    );
    let need = (workload.num_queries() as u64).saturating_mul(BYTES_PER_QUERY);
    let cap = args.max_memory_mib.saturating_mul(1 << 20);
    outln!(
        "memory: about {} for the answers ({BYTES_PER_QUERY} bytes per answer): {} \
         --max-memory-mib {}",
        output::human_size(need),
        if need > cap {
            "the release would be REFUSED by"
        } else {
            "within"
        },
        args.max_memory_mib
    );
    if mech.works_over_a_universe() {
        let log10: f64 = touched
            .iter()
            .map(|&a| f64::from(domain.size(a)).log10())
            .sum();
        let limits = plan.spec().universe;
        outln!(
            "universe: the mechanism enumerates the records over the touched attributes, \
             10^{log10:.1} of them; its limits: {limits}"
        );
    }
    // answer perturbation: the noise per count is fixed before running
    // the mechanism's own checks of public inputs, as the release runs them before the
    // spend is recorded (with --assume-n as n under replace-one neighbours)
    let public_n = match (mech.certificate().neighbouring(), args.assume_n) {
        (Some(Neighbouring::ReplaceOne), Some(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => None,
    };
    match mech.check_inputs(workload, public_n) {
        Ok(()) if public_n.is_some() => {
            outln!("checks: the mechanism's checks of the parameters, workload and n pass")
        }
        Ok(()) => outln!(
            "checks: the mechanism's checks of the parameters and workload pass{}",
            if mech.certificate().neighbouring() == Some(Neighbouring::ReplaceOne) {
                "; those that need n run after the data is read, before anything is charged \
                 (give --assume-n N to run them now)"
            } else {
                ""
            }
        ),
        Err(e) => outln!("checks: the release would be REFUSED before anything is charged: {e}"),
    }
    let noise = mech.count_noise(workload);
    match (noise, mech.noise_schedule(workload)) {
        (Some(n), _) => {
            outln!(
                "predicted error: every count gets independent noise of standard deviation \
                 {:.4} (exact); an answer's is that divided by n (replace-one) or by the noisy \
                 total (add/remove)",
                n.variance().sqrt()
            );
            baseline_per_answer(plan, n, args.assume_n);
        }
        (None, Some(schedule)) => print_schedule(&schedule, workload, args.assume_n),
        (None, None) => stated_bound(args.assume_n, workload, mech),
    }
    let outs: Vec<String> = args
        .outputs
        .list()
        .iter()
        .map(|(_, p)| p.display().to_string())
        .collect();
    outln!("outputs: {} (checked writable)", outs.join(", "));
    if let Some(note) = ledger_note {
        outln!("{note}");
    }
    Ok(())
}
