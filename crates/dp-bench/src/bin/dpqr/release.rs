//! `dpqr release` and its dry run.

use clap::{Args, ValueEnum};
use dp_bench::catalogue::{self};
use dp_bench::io::answers::{write_answers, write_query_answers};
use dp_bench::io::ledger_file::{self, LockedLedger};
use dp_bench::io::output;
use dp_bench::io::synthetic::{weight_column, write_synthetic};
use dp_bench::registry::{BudgetArgs, BuildOptions, check_budget_is_meaningful, delta_too_large};
use dp_bench::{BenchError, Result, io_error, quoted};
use dp_core::{Neighbouring, Num, ProgressSink, os_seeded_rng, seeded_rng};
use dp_mechanisms::{Mechanism, Normaliser, PostProcessing};
use dp_queries::{AnyWorkload, MarginalWorkload, Workload};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
    /// Mechanism (see `dpqr mechanisms`).
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
    /// Post-processing: simplex projects each table onto the probability simplex.
    #[arg(long, value_enum, default_value = "none")]
    pub(crate) post: PostArg,
    /// TESTING ONLY: seed of the mechanism's randomness (ChaCha20). Anyone who learns the
    /// seed can regenerate the noise and subtract it, recovering the exact counts: a seeded
    /// release is reproducible and NOT private against whoever knows or guesses the seed.
    /// The seed is never written to the report or printed. Without it the OS seeds the
    /// generator — always do that for real releases.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
    /// Output CSV: marginal,cell,answer.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Also write the certificate and diagnostics as JSON here.
    #[arg(long)]
    pub(crate) report: Option<PathBuf>,
    /// Also write the released synthetic records (CSV: each record in the form of the data
    /// the --domain schema reads — labels, a value of each bin, `other`, integer codes for
    /// attributes given by a size — and, last, a weight column named `weight`, or
    /// `weight_1`, … if an attribute is called `weight`) here; refused up front for
    /// mechanisms that release no synthetic data.
    #[arg(long)]
    pub(crate) synthetic_out: Option<PathBuf>,
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

/// The private input of a release: the records, or (--stream) the workload's exact counts
/// and the number of records.
enum Loaded {
    Records(dp_queries::Dataset),
    Counts { counts: Vec<i64>, rows: usize },
}

impl Loaded {
    /// The number of records (private under add/remove neighbours: never output it then).
    fn n(&self) -> usize {
        match self {
            Loaded::Records(d) => d.n(),
            Loaded::Counts { rows, .. } => *rows,
        }
    }

    /// Run `mech` on this input (consumed: the counts move into the mechanism).
    fn release(
        self,
        mech: &dyn Mechanism<AnyWorkload>,
        workload: &AnyWorkload,
        rng: &mut dyn rand::CryptoRng,
    ) -> dp_mechanisms::Result<dp_mechanisms::Release> {
        match self {
            Loaded::Records(d) => mech.release(&d, workload, rng),
            Loaded::Counts { counts, rows } => mech.release_counts(counts, rows, workload, rng),
        }
    }
}

/// Bytes per counting query of a release: exact count (u64), noisy count (i64), answer
/// (f64), and one more answer-sized buffer for post-processing and output.
pub(crate) const BYTES_PER_QUERY: u64 = 32;

/// The δ of `--delta` checked against [`delta_too_large`]: under replace-one neighbours
/// with the public `n` (`public_n`, after the data is loaded), under add/remove with the
/// fixed bound (`public_n = None`, before the data is read). Refused unless
/// `--allow-large-delta`, which turns the refusal into a warning.
pub(crate) fn check_delta(args: &ReleaseArgs, public_n: Option<usize>) -> Result<()> {
    let Some(delta) = args.delta else {
        return Ok(());
    };
    match delta_too_large(delta, public_n) {
        None => Ok(()),
        Some(why) if args.allow_large_delta => {
            errln!("WARNING: {why}; accepted because of --allow-large-delta");
            Ok(())
        }
        Some(why) => Err(BenchError::Usage(format!(
            "{why}. Refusing: choose a smaller --delta (1e-9 is common) or pass \
             --allow-large-delta if you mean it"
        ))),
    }
}

/// The outputs of a release with their flags, in the order they are written.
pub(crate) fn release_outputs(args: &ReleaseArgs) -> Vec<(&'static str, &Path)> {
    let mut v = vec![("--out", args.out.as_path())];
    if let Some(p) = &args.report {
        v.push(("--report", p.as_path()));
    }
    if let Some(p) = &args.synthetic_out {
        v.push(("--synthetic-out", p.as_path()));
    }
    v
}

/// The files a release reads (or, for the ledger and its lock, updates) with their flags:
/// no output may name one of them.
pub(crate) fn release_inputs(args: &ReleaseArgs) -> Vec<(&'static str, PathBuf)> {
    let mut v = args.data.input_files();
    let spec = &args.workload;
    if !spec.starts_with("all-") && !spec.starts_with("random-") {
        v.push(("--workload", PathBuf::from(spec)));
    }
    if let Some(l) = &args.ledger {
        v.push(("--ledger", l.clone()));
        let mut lock = l.clone().into_os_string();
        lock.push(".lock");
        v.push(("--ledger (its lock file)", PathBuf::from(lock)));
    }
    v
}

pub(crate) fn release(args: &ReleaseArgs) -> Result<()> {
    // what the release has done, for a SIGINT/SIGTERM or a closed stdout (interrupt.rs)
    crate::interrupt::begin_release(&release_outputs(args), args.ledger.as_deref());
    if let Some(local) = catalogue::find_local(&args.mechanism) {
        return crate::release_local::release_local(args, local);
    }
    // validate every argument before touching the data, the ledger or the noise
    let spec = catalogue::spec(&args.mechanism)?;
    let settings = args.settings.settings();
    spec.check_settings(&settings)?;
    args.data.check_attributes()?;
    let budget = BudgetArgs {
        epsilon: args.epsilon,
        delta: args.delta,
        rho: args.rho,
    }
    .to_loss(&args.mechanism)?;
    let neighbouring = match args.neighbouring {
        None => spec.default_relation(),
        Some(NeighbouringArg::ReplaceOne) => Neighbouring::ReplaceOne,
        Some(NeighbouringArg::AddRemove) => Neighbouring::AddRemove,
    };
    let post = match args.post {
        PostArg::None => PostProcessing::None,
        PostArg::Simplex => PostProcessing::SimplexProjection,
    };
    check_budget_is_meaningful(&budget)?;
    if neighbouring == Neighbouring::AddRemove {
        // n is private: the fixed public bound, before the data is read
        check_delta(args, None)?;
    }
    let pb = spinner(args.quiet);
    crate::interrupt::set_progress(&pb);
    let round_pb = pb.clone();
    let attribute_names = Arc::new(OnceLock::new());
    let options = BuildOptions {
        round_progress: Some(Arc::new(move |line: String| round_pb.set_message(line))),
        memory_bytes: Some(args.max_memory_mib.saturating_mul(1 << 20)),
        attribute_names: Arc::clone(&attribute_names),
        projection_settings: None,
        settings,
        // --quiet: no reporter at all, so nothing reaches stderr
        progress: (!args.quiet).then(|| ProgressSink(Arc::new(CliProgress::new(pb.clone())))),
    };
    // the workload is public (the domain and the spec): parsed, class-checked and sized
    // before any data is read
    let workload = AnyWorkload::parse_spec(
        &args.data.public_domain()?,
        &args.workload,
        args.workload_seed,
    )?;
    let spec = catalogue::spec(&args.mechanism)?;
    spec.check_class(workload.class())?;
    let need = (workload.num_queries() as u64).saturating_mul(BYTES_PER_QUERY);
    if need > args.max_memory_mib.saturating_mul(1 << 20) && !args.dry_run {
        return Err(BenchError::Usage(format!(
            "workload {} has {} counting queries: the release would need about {:.1} MiB \
             ({BYTES_PER_QUERY} bytes per query), more than --max-memory-mib {}; refusing \
             before allocating",
            quoted(&args.workload),
            workload.num_queries(),
            need as f64 / (1u64 << 20) as f64,
            args.max_memory_mib
        )));
    }
    // a marginal mechanism that enumerates a universe runs over the attributes the workload
    // touches (dp_mechanisms::OnWorkloadAttributes; the guarantee is unchanged)
    let mech = spec.build_any(budget, neighbouring, post, &options)?;
    if args.synthetic_out.is_some() && !mech.produces_synthetic() {
        return Err(BenchError::Usage(format!(
            "{} releases answers only, no synthetic data: drop --synthetic-out or choose a \
             mechanism that makes synthetic records",
            mech.name()
        )));
    }
    // the synthetic records are written through the schema, read (public) before the data
    let synthetic_schema = match &args.synthetic_out {
        Some(_) => Some(args.data.public_schema()?),
        None => None,
    };
    if args.stream && !mech.counts_suffice() {
        return Err(BenchError::Usage(format!(
            "--stream releases from the workload's counts alone, and {} needs the records: \
             drop --stream, or choose a mechanism that releases from counts ({})",
            mech.name(),
            catalogue::counts_only_names().join(", ")
        )));
    }
    args.engine.check(&args.data)?;
    if args.engine.is_engine() && !mech.counts_suffice() {
        return Err(BenchError::Usage(format!(
            "an engine releases from the workload's counts alone, and {} needs the records: \
             use --engine native, or choose a mechanism that releases from counts ({})",
            mech.name(),
            catalogue::counts_only_names().join(", ")
        )));
    }
    if args.stream && args.data.attributes.is_some() {
        return Err(BenchError::Usage(
            "--stream reads files holding exactly the domain's columns: drop --attributes".into(),
        ));
    }
    // every output can be written and names its own file, checked before the ledger is
    // read, the data is read or any noise is drawn
    let outputs = release_outputs(args);
    let inputs = release_inputs(args);
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    output::check_outputs(&outputs, &inputs)?;
    let certificate = mech.certificate();
    let (spend, spend_relation) = (certificate.loss, certificate.neighbouring);
    // the lock is held from this check until the spend is recorded (before any noise)
    // what the spend is for, as the ledger records it and its refusals name it
    let label = format!(
        "{} on {} ({} queries)",
        mech.name(),
        args.workload,
        workload.num_queries()
    );
    let mut ledger = match &args.ledger {
        Some(path) => {
            pb.set_message("waiting for the ledger lock");
            let l = LockedLedger::open(path)?;
            // the curator's name for the data, never its path: a release the ledger cannot
            // place is refused here, before any data is read
            let dataset = l
                .contents
                .dataset_for(args.ledger_dataset.as_deref(), &path.display().to_string())?;
            let data_key = args.data.ledger_key()?;
            let charge = ledger_file::Charge {
                dataset: &dataset,
                label: &label,
                data: Some(&data_key),
            };
            l.check_spend(&charge, &spend, spend_relation)?;
            Some((l, dataset, data_key))
        }
        None => None,
    };
    if args.dry_run {
        pb.finish_and_clear();
        let ledger_note = ledger.as_ref().map(|(_, dataset, _)| {
            format!(
                "ledger: the spend fits the remaining budget of dataset {} (nothing recorded \
                 by a dry run)",
                ledger_file::show_name(dataset)
            )
        });
        return dry_run(
            args,
            &workload,
            mech.as_ref(),
            ledger_note,
            &spec.settings_line(&settings),
        );
    }
    pb.set_message("loading data");
    // From here on, under add/remove neighbours n is private: nothing printed or written
    // (stdout, stderr, report, answers, ledger) may be the true n or derived from it.
    let allow_empty = neighbouring == Neighbouring::AddRemove;
    // a --data file (CSV, gzip CSV or Parquet) is streamed whenever the mechanism needs only
    // the counts (memory for the tables, not for the rows; the same counts, so the same
    // answers); --stream asks for it with a bundled table too
    let stream = args.stream
        || (args.data.data.is_some() && mech.counts_suffice() && args.data.attributes.is_none());
    let data = if args.engine.is_engine() {
        let (counts, rows) = args.engine.counts(&args.data, &workload, allow_empty)?;
        Loaded::Counts { counts, rows }
    } else if stream {
        let settings = dp_queries::StreamSettings {
            batch_rows: usize::try_from(args.batch_rows).unwrap_or(usize::MAX),
            parallelism: dp_queries::Parallelism::Rayon,
        };
        let (counts, rows) = args.data.stream_counts(&workload, &settings, allow_empty)?;
        Loaded::Counts { counts, rows }
    } else {
        Loaded::Records(args.data.load(allow_empty)?)
    };
    if neighbouring == Neighbouring::ReplaceOne {
        // n is public under replace-one: δ is compared with 1/n
        check_delta(args, Some(data.n()))?;
    }
    // private under add/remove neighbours: used below only where n is public (replace-one)
    let n = data.n();
    // every check the mechanism can make from public inputs (the parameters, the budget,
    // the domain and workload, n under replace-one only), before the ledger records the
    // spend: a charged release must not fail for a reason that could be checked before
    // (docs/privacy.md, "Budget ledger"); the release runs the same checks again
    let public_n = (neighbouring == Neighbouring::ReplaceOne).then_some(n);
    mech.check_inputs(&workload, public_n)?;
    attribute_names
        .set(workload.domain().names().map(str::to_string).collect())
        .ok();
    // counting runs inside the mechanism, in one pass over the records: a spinner stage
    // without a percentage (its share done would reveal n); the mechanism's own stages
    // (rounds, solver iterations, levels) follow with percentages
    crate::progress::announce_stage(
        &pb,
        args.quiet,
        &format!(
            "releasing {} with {}: counting the queries on the data (no percentage for \
             this stage), then the mechanism's stages",
            describe_workload(&workload),
            mech.name()
        ),
    );
    let mut rng = match args.seed {
        Some(s) => {
            errln!(
                "WARNING: --seed fixes the noise: anyone who knows or guesses the seed can \
                 regenerate the noise and recover the exact counts. Use it for tests and \
                 reproducible experiments only, never for a release you publish. The seed is \
                 not written to any output."
            );
            seeded_rng(s)
        }
        None => os_seeded_rng()?,
    };
    let release = match (&mut ledger, &args.ledger) {
        (Some((l, dataset, data_key)), Some(path)) => {
            // charged now, after every check that draws no noise and before the first
            // noise is drawn (`release_charged` records the spend, then runs the
            // mechanism): a release that fails or crashes from here on has been charged
            // (no free retry), and nothing unrecorded is ever published
            let key = ledger_file::show_name(dataset);
            // held while the spend is written: a signal meanwhile is answered once it is
            let charging = crate::interrupt::charging(
                &format!("dataset {key}"),
                format!("{spend} under {spend_relation} neighbours"),
            );
            let charge = ledger_file::Charge {
                dataset,
                label: &label,
                data: Some(data_key),
            };
            let release = ledger_file::release_charged_with(l, &charge, &certificate, || {
                charging.recorded();
                data.release(mech.as_ref(), &workload, &mut rng)
            })
            .map_err(|e| match e {
                // the refusals come typed from the ledger (status 3); a failure after the
                // charge says which ledger and dataset hold its spend
                BenchError::ReleaseFailedAfterCharge(_) => BenchError::InLedger {
                    ledger: path.display().to_string(),
                    dataset: key.clone(),
                    source: Box::new(e),
                },
                e => e,
            })?;
            let ledger_relation = l.contents.neighbouring;
            let charged = if ledger_relation == spend_relation {
                String::new()
            } else {
                match dp_core::convert_neighbouring(spend, spend_relation, ledger_relation) {
                    Ok(c) => format!(", charged {c} under {ledger_relation} neighbours"),
                    Err(_) => String::new(),
                }
            };
            outln!(
                "ledger {}: recorded {spend} under {spend_relation} neighbours{charged} for \
                 dataset {key}",
                path.display()
            );
            release
        }
        _ => data.release(mech.as_ref(), &workload, &mut rng)?,
    };
    drop(ledger); // release the lock
    let synthetic = match (&args.synthetic_out, &release.synthetic) {
        (None, _) => None,
        (Some(path), Some(synthetic)) => Some((path, synthetic)),
        (Some(_), None) => {
            return Err(BenchError::Usage(format!(
                "{} returned no synthetic data; nothing was written",
                mech.name()
            )));
        }
    };
    let n_note = match neighbouring {
        Neighbouring::ReplaceOne => format!(
            "n = {} records, treated as public under replace-one neighbours (the guarantee \
             protects which records are in the data, not how many)",
            n
        ),
        Neighbouring::AddRemove => "n is private under add/remove neighbours: it is not \
             reported, and the answers are normalised by the mean noisy table total"
            .to_string(),
    };
    let report_text = match &args.report {
        None => None,
        Some(_) => {
            // no timings: a release's diagnostics are functions of public inputs and of
            // its privatized transcript only (dp_mechanisms::Diagnostics)
            let diagnostics = serde_json::to_value(&release.diagnostics)
                .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?;
            let mut report = serde_json::json!({
                "certificate": release.certificate,
                "statement": release.certificate.statement(),
                "diagnostics": diagnostics,
                "workload": args.workload,
                "class": workload.class().key(),
                "marginals": workload.as_marginals().map(MarginalWorkload::len),
                "queries": workload.num_queries(),
                "n_note": n_note,
                // never the seed itself: with it and the answers anyone recovers the exact
                // counts
                "settings": spec.settings_json(&settings),
                "randomness": if args.seed.is_some() {
                    "seeded by the caller (--seed, testing only; the seed is not recorded)"
                } else {
                    "operating-system entropy"
                },
            });
            if neighbouring == Neighbouring::ReplaceOne
                && let Some(r) = report.as_object_mut()
            {
                r.insert("n".into(), n.into());
            }
            Some(
                serde_json::to_string_pretty(&report)
                    .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?,
            )
        }
    };
    // Every output is written to a temporary file beside its target first and renamed
    // into place only when all of them are complete: a failure leaves no output changed.
    pb.set_message("writing outputs");
    let mut files = Vec::with_capacity(3);
    let mut answers_file = crate::interrupt::create_output(&args.out)?;
    output::write_maybe_compressed(&mut answers_file, |w| match &workload {
        AnyWorkload::Marginals(m) => write_answers(w, m, &release.answers),
        other => write_query_answers(w, other, &release.answers),
    })?;
    files.push(answers_file);
    if let (Some(path), Some(text)) = (&args.report, &report_text) {
        let mut f = crate::interrupt::create_output(path)?;
        output::write_maybe_compressed(&mut f, |w| {
            w.write_all(text.as_bytes()).map_err(io_error(path))
        })?;
        files.push(f);
    }
    if let (Some((path, synthetic)), Some(schema)) = (synthetic, &synthetic_schema) {
        let mut f = crate::interrupt::create_output(path)?;
        output::write_maybe_compressed(&mut f, |w| write_synthetic(w, synthetic, schema))?;
        files.push(f);
    }
    // renamed into place under the interrupt state's lock: from here the release is complete
    crate::interrupt::commit_outputs(files)?;
    pb.finish_and_clear();
    outln!("privacy spent: {}", release.certificate.statement());
    outln!("settings: {}", spec.settings_line(&settings));
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
    let size = |p: &std::path::Path| {
        std::fs::metadata(p).map_or(String::new(), |m| {
            format!(" ({})", output::human_size(m.len()))
        })
    };
    outln!(
        "wrote {} answers ({}) to {}{}",
        release.answers.len(),
        describe_workload(&workload),
        args.out.display(),
        size(&args.out)
    );
    if let Some((path, synthetic)) = synthetic {
        let weight = weight_column(synthetic.records.domain());
        let renamed = if weight == "weight" {
            String::new()
        } else {
            format!("; its weight column is called {weight} because an attribute is named weight")
        };
        outln!(
            "wrote {} synthetic records to {}{}{renamed}",
            synthetic.weights.len(),
            path.display(),
            size(path)
        );
    }
    Ok(())
}

/// The dry run's prediction for a mechanism without fixed count noise: the error bound its
/// paper states for `--assume-n` records, or what the bound needs.
fn stated_bound(args: &ReleaseArgs, workload: &AnyWorkload, mech: &dyn Mechanism<AnyWorkload>) {
    let n = args
        .assume_n
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
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

/// `dpqr release --dry-run` (issue #11 §2, "Plan before spending"): what the release would
/// do, from public inputs only — the domain (file or bundled), the workload, the
/// parameters. Called after every argument and output check and the ledger's check.
pub(crate) fn dry_run(
    args: &ReleaseArgs,
    workload: &AnyWorkload,
    mech: &dyn Mechanism<AnyWorkload>,
    ledger_note: Option<String>,
    settings_line: &str,
) -> Result<()> {
    let domain = workload.domain();
    let certificate = mech.certificate();
    outln!("dry run: no data read, no budget recorded, no noise drawn, nothing written");
    outln!("privacy: {}", certificate.statement());
    outln!("settings: {settings_line}");
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
        let limits = dp_bench::catalogue::find(mech.name()).map_or("", |s| s.universe);
        outln!(
            "universe: the mechanism enumerates the records over the touched attributes, \
             10^{log10:.1} of them; its limits: {limits}"
        );
    }
    // answer perturbation: the noise per count is fixed before running
    // the mechanism's own checks of public inputs, as the release runs them before the
    // spend is recorded (with --assume-n as n under replace-one neighbours)
    let public_n = match (mech.certificate().neighbouring, args.assume_n) {
        (Neighbouring::ReplaceOne, Some(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => None,
    };
    match mech.check_inputs(workload, public_n) {
        Ok(()) if public_n.is_some() => {
            outln!("checks: the mechanism's checks of the parameters, workload and n pass")
        }
        Ok(()) => outln!(
            "checks: the mechanism's checks of the parameters and workload pass{}",
            if mech.certificate().neighbouring == Neighbouring::ReplaceOne {
                "; those that need n run after the data is read, before anything is charged \
                 (give --assume-n N to run them now)"
            } else {
                ""
            }
        ),
        Err(e) => outln!("checks: the release would be REFUSED before anything is charged: {e}"),
    }
    let noise = mech.count_noise(workload);
    match noise {
        Some(n) => outln!(
            "predicted error: every count gets independent noise of standard deviation {:.4} \
             (exact); an answer's is that divided by n (replace-one) or by the noisy total \
             (add/remove)",
            n.variance().sqrt()
        ),
        None => stated_bound(args, workload, mech),
    }
    let mut outs = vec![args.out.display().to_string()];
    outs.extend(args.report.iter().map(|p| p.display().to_string()));
    outs.extend(args.synthetic_out.iter().map(|p| p.display().to_string()));
    outln!("outputs: {} (checked writable)", outs.join(", "));
    if let Some(note) = ledger_note {
        outln!("{note}");
    }
    Ok(())
}

/// A workload in words: "12 marginals (360 cells)" or "30 conjunctions".
fn describe_workload(workload: &AnyWorkload) -> String {
    match workload {
        AnyWorkload::Marginals(m) => format!("{} marginals ({} cells)", m.len(), m.num_queries()),
        other => format!("{} {} queries", other.num_queries(), other.class()),
    }
}
