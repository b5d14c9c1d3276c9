//! `dpqr`: release differentially private answers to a workload of marginals from a CSV.
//!
//! ```text
//! dpqr release --data adult.csv --domain adult-domain.json --workload all-3way \
//!     --mechanism gaussian --epsilon 1 --delta 1e-9 --seed 7 --out answers.csv
//! dpqr eval --data adult.csv --domain adult-domain.json --answers answers.csv   # NON-PRIVATE
//! dpqr datasets        # bundled datasets
//! dpqr mechanisms [--json]   # mechanisms: guarantee, budget flags, relations, limits
//! dpqr audit --mechanism laplace [--runs N] [--seed S] [--canary]   # empirical ε lower bound
//! dpqr schema draft --data raw.csv > schema.json   # NON-PRIVATE: review before use
//! dpqr ledger init FILE --epsilon 1 --delta 1e-9 [--neighbouring add-remove]
//!                                                   # then: dpqr release ... --ledger FILE
//! ```

use clap::{Args, Parser, Subcommand, ValueEnum};
use dp_bench::answers::{read_answers, write_answers};
use dp_bench::audit::{AuditConfig, audit_steps, audit_with};
use dp_bench::catalogue::{self, BudgetKind, MECHANISMS, MechanismSpec, neighbouring_flag};
use dp_bench::ledger_file::{self, LockedLedger};
use dp_bench::output::{self, AtomicFile};
use dp_bench::registry::{
    BudgetArgs, BuildOptions, audit_settings, build_mechanism_with, check_budget_is_meaningful,
    delta_too_large,
};
use dp_bench::synthetic::{weight_column, write_synthetic};
use dp_bench::{BenchError, Result, datasets, io_error, quoted};
use dp_core::{Neighbouring, Num, os_seeded_rng, seeded_rng};
use dp_mechanisms::{Mechanism, Normaliser, OnWorkloadAttributes, PostProcessing};
use dp_queries::{Dataset, Domain, ErrorReport, MarginalWorkload};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[derive(Parser)]
#[command(name = "dpqr", version, about = "Differentially private query release", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Release private answers to a marginal workload and print the guarantee spent.
    Release(ReleaseArgs),
    /// NON-PRIVATE: compare an answers file with the true answers of a dataset.
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
}

#[derive(Subcommand)]
enum SchemaCommand {
    /// NON-PRIVATE: draft a schema by reading the data (printed as JSON on stdout). The
    /// draft discloses the data (its labels, minima and maxima): review and coarsen it —
    /// public, data-independent labels and round bin edges — before releasing with it.
    Draft {
        /// CSV of raw values with a header row.
        #[arg(long)]
        data: PathBuf,
        /// Bin a numeric column with more distinct values than this; otherwise keep at
        /// most this many of its most frequent values as labels (plus an "other" bucket).
        #[arg(long, default_value_t = 20)]
        max_labels: usize,
        /// Number of equal-width bins of a binned column.
        #[arg(long, default_value_t = 10)]
        bins: usize,
    },
}

#[derive(Args)]
struct AuditArgs {
    /// Mechanism (see `dpqr mechanisms`).
    #[arg(long)]
    mechanism: String,
    /// Runs on each of the two neighbouring datasets (default: the registry's CI count).
    #[arg(long, allow_negative_numbers = true)]
    runs: Option<usize>,
    /// Seed of the runs.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    seed: u64,
    /// Audit the deliberately miscalibrated canary (half the noise scale, same claim).
    #[arg(long)]
    canary: bool,
    /// Canary with this factor times the noise scale instead of 1/2 (implies --canary).
    #[arg(long, allow_hyphen_values = true)]
    noise_factor: Option<f64>,
    /// Failure probability of the audit (a correct mechanism fails with at most this).
    #[arg(long, default_value_t = dp_bench::audit::DEFAULT_ALPHA, allow_hyphen_values = true)]
    alpha: f64,
    /// Neighbouring relation audited.
    #[arg(long, value_enum, default_value = "replace-one")]
    neighbouring: NeighbouringArg,
}

#[derive(Subcommand)]
enum LedgerCommand {
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

#[derive(Args)]
struct DataArgs {
    /// CSV with a header row: integer codes, or raw values for attributes whose schema
    /// gives labels or bins.
    #[arg(long, requires = "domain", conflicts_with = "dataset")]
    data: Option<PathBuf>,
    /// Domain or schema JSON (public): {"attr": size, ...}, where an entry may instead be
    /// {"labels": [...]} or {"bins": [e0, ..., ek]}, optionally with "other": true.
    #[arg(long, requires = "data")]
    domain: Option<PathBuf>,
    /// A bundled dataset instead of --data/--domain (see `dpqr datasets`).
    #[arg(long)]
    dataset: Option<String>,
    /// Keep only these attributes (comma-separated names, in this order) before the
    /// workload is built, e.g. the adult7 subset of the projection bench.
    #[arg(long, value_delimiter = ',')]
    attributes: Option<Vec<String>>,
}

impl DataArgs {
    /// The key of the dataset in a ledger: `bundled:NAME` or `file:<canonical CSV path>`.
    fn ledger_key(&self) -> Result<String> {
        match (&self.data, &self.dataset) {
            (Some(csv), None) => Ok(format!(
                "file:{}",
                std::fs::canonicalize(csv).map_err(io_error(csv))?.display()
            )),
            (None, Some(name)) => Ok(format!("bundled:{}", datasets::bundled(name)?.name)),
            _ => Err(BenchError::Usage(
                "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
            )),
        }
    }

    /// `Ok` unless `--attributes` names an attribute twice (checked before any data is
    /// read).
    fn check_attributes(&self) -> Result<()> {
        let Some(names) = &self.attributes else {
            return Ok(());
        };
        for (i, name) in names.iter().enumerate() {
            if names[..i].iter().any(|n| n.trim() == name.trim()) {
                return Err(BenchError::Usage(format!(
                    "--attributes names the attribute {} twice; give each attribute once",
                    quoted(name.trim())
                )));
            }
        }
        Ok(())
    }

    /// The domain (from `--domain` or the bundled dataset, restricted to `--attributes`),
    /// read without the data: public.
    fn public_domain(&self) -> Result<Domain> {
        self.check_attributes()?;
        let domain = match (&self.data, &self.domain, &self.dataset) {
            (Some(_), Some(dom), None) => Domain::from_json_file(dom)?,
            (None, None, Some(name)) => {
                let b = datasets::bundled(name)?;
                Domain::from_json_str(b.domain_json, b.name)?
            }
            _ => {
                return Err(BenchError::Usage(
                    "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
                ));
            }
        };
        match &self.attributes {
            None => Ok(domain),
            Some(names) => {
                let idx = names
                    .iter()
                    .map(|n| domain.index_of(n.trim()))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok(domain.project(&idx)?)
            }
        }
    }

    /// The input files given (`--data`, `--domain`) with their flags.
    fn input_files(&self) -> Vec<(&'static str, PathBuf)> {
        let mut v = Vec::new();
        if let Some(p) = &self.data {
            v.push(("--data", p.clone()));
        }
        if let Some(p) = &self.domain {
            v.push(("--domain", p.clone()));
        }
        v
    }

    /// Load the data. With `allow_empty` (add/remove neighbours, where the empty dataset
    /// must be releasable like any other) a CSV with a header and no records is the empty
    /// dataset rather than an error.
    fn load(&self, allow_empty: bool) -> Result<Dataset> {
        self.check_attributes()?;
        let data = match (&self.data, &self.domain, &self.dataset) {
            (Some(csv), Some(dom), None) if allow_empty => {
                Dataset::load_csv_allowing_empty(csv, dom)?
            }
            (Some(csv), Some(dom), None) => Dataset::load_csv(csv, dom)?,
            (None, None, Some(name)) => datasets::bundled(name)?.load()?,
            _ => {
                return Err(BenchError::Usage(
                    "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
                ));
            }
        };
        match &self.attributes {
            None => Ok(data),
            Some(names) => {
                let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
                Ok(data.select_attributes(&names)?)
            }
        }
    }
}

/// `dpqr release --dry-run` (issue #11 §2, "Plan before spending"): what the release would
/// do, from public inputs only — the domain (file or bundled), the workload, the
/// parameters. Called after every argument and output check and the ledger's check.
fn dry_run(args: &ReleaseArgs, mech: &dyn Mechanism, ledger_note: Option<String>) -> Result<()> {
    let domain = args.data.public_domain()?;
    let workload = MarginalWorkload::parse_spec(&domain, &args.workload, args.workload_seed)?;
    let certificate = mech.certificate();
    println!("dry run: no data read, no budget recorded, no noise drawn, nothing written");
    println!("privacy: {}", certificate.statement());
    let touched = workload.touched_attributes();
    println!(
        "workload: {} marginals, {} answers, over {} of the domain's {} attributes",
        workload.len(),
        workload.num_queries(),
        touched.len(),
        domain.len()
    );
    let need = (workload.num_queries() as u64).saturating_mul(BYTES_PER_QUERY);
    let cap = args.max_memory_mib.saturating_mul(1 << 20);
    println!(
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
        println!(
            "universe: the mechanism enumerates the records over the touched attributes, \
             10^{log10:.1} of them; its limits: {limits}"
        );
    }
    // answer perturbation: the noise per count is fixed before running
    let noise = mech.count_noise(&workload);
    match noise {
        Some(n) => println!(
            "predicted error: every count gets independent noise of standard deviation {:.4} \
             (exact); an answer's is that divided by n (replace-one) or by the noisy total \
             (add/remove)",
            n.variance().sqrt()
        ),
        None => println!(
            "predicted error: no a-priori per-answer figure for this mechanism; see its \
             guarantee above and the measured errors in docs/benchmarks.md"
        ),
    }
    let mut outs = vec![args.out.display().to_string()];
    outs.extend(args.report.iter().map(|p| p.display().to_string()));
    outs.extend(args.synthetic_out.iter().map(|p| p.display().to_string()));
    println!("outputs: {} (checked writable)", outs.join(", "));
    if let Some(note) = ledger_note {
        println!("{note}");
    }
    Ok(())
}

#[derive(Clone, Copy, ValueEnum)]
enum NeighbouringArg {
    ReplaceOne,
    AddRemove,
}

#[derive(Clone, Copy, ValueEnum)]
enum PostArg {
    None,
    Simplex,
}

#[derive(Args)]
struct ReleaseArgs {
    #[command(flatten)]
    data: DataArgs,
    /// all-Kway | random-Kway:M | FILE.json (a list of attribute-name lists).
    #[arg(long)]
    workload: String,
    /// Seed of random workloads (random-Kway:M); independent of --seed.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    workload_seed: u64,
    /// Mechanism (see `dpqr mechanisms`).
    #[arg(long)]
    mechanism: String,
    /// ε > 0 (with --delta for the zCDP mechanisms).
    #[arg(long, allow_hyphen_values = true)]
    epsilon: Option<f64>,
    /// δ in (0, 1): the zCDP mechanisms spend the largest ρ whose (ε, δ) conversion is
    /// within budget. At most 1/n under replace-one neighbours and at most 1e-6 under
    /// add/remove (where n is private) unless --allow-large-delta is given.
    #[arg(long, conflicts_with = "rho", allow_hyphen_values = true)]
    delta: Option<f64>,
    /// Accept a --delta above 1/n (replace-one) or above 1e-6 (add/remove); see
    /// docs/privacy.md, "Budgets and parameters".
    #[arg(long)]
    allow_large_delta: bool,
    /// ρ > 0 of ρ-zCDP, instead of --epsilon/--delta.
    #[arg(long, allow_hyphen_values = true)]
    rho: Option<f64>,
    /// Neighbouring relation of the guarantee.
    #[arg(long, value_enum, default_value = "replace-one")]
    neighbouring: NeighbouringArg,
    /// Post-processing: simplex projects each table onto the probability simplex.
    #[arg(long, value_enum, default_value = "none")]
    post: PostArg,
    /// TESTING ONLY: seed of the mechanism's randomness (ChaCha20). Anyone who learns the
    /// seed can regenerate the noise and subtract it, recovering the exact counts: a seeded
    /// release is reproducible and NOT private against whoever knows or guesses the seed.
    /// The seed is never written to the report or printed. Without it the OS seeds the
    /// generator — always do that for real releases.
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Output CSV: marginal,cell,answer.
    #[arg(long)]
    out: PathBuf,
    /// Also write the certificate and diagnostics as JSON here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Also write the released synthetic records (CSV: codes and, last, a weight column
    /// named `weight`, or `weight_1`, … if an attribute is called `weight`) here; refused
    /// up front for mechanisms that release no synthetic data.
    #[arg(long)]
    synthetic_out: Option<PathBuf>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
    /// Budget ledger (`dpqr ledger init`): the release is refused before any data is read
    /// if it would overspend the dataset's budget (charged in the ledger's neighbouring
    /// relation), and recorded before any noise is drawn.
    #[arg(long)]
    ledger: Option<PathBuf>,
    /// Refuse workloads whose release would need more memory than this (MiB, estimated
    /// before allocating).
    #[arg(long, default_value_t = 4096, allow_negative_numbers = true)]
    max_memory_mib: u64,
    /// Plan only: print the guarantee, the workload's size and memory, the universe the
    /// mechanism would enumerate, the predicted noise per count (answer-perturbation
    /// baselines) and whether the ledger would take the spend — from public inputs only
    /// (the domain and the workload), after checking every output path. Reads no data,
    /// records no spend, draws no noise, writes nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Bytes per counting query of a release: exact count (u64), noisy count (i64), answer
/// (f64), and one more answer-sized buffer for post-processing and output.
const BYTES_PER_QUERY: u64 = 32;

#[derive(Args)]
struct EvalArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Answers CSV written by `dpqr release`.
    #[arg(long)]
    answers: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn spinner(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// The δ of `--delta` checked against [`delta_too_large`]: under replace-one neighbours
/// with the public `n` (`public_n`, after the data is loaded), under add/remove with the
/// fixed bound (`public_n = None`, before the data is read). Refused unless
/// `--allow-large-delta`, which turns the refusal into a warning.
fn check_delta(args: &ReleaseArgs, public_n: Option<usize>) -> Result<()> {
    let Some(delta) = args.delta else {
        return Ok(());
    };
    match delta_too_large(delta, public_n) {
        None => Ok(()),
        Some(why) if args.allow_large_delta => {
            eprintln!("WARNING: {why}; accepted because of --allow-large-delta");
            Ok(())
        }
        Some(why) => Err(BenchError::Usage(format!(
            "{why}. Refusing: choose a smaller --delta (1e-9 is common) or pass \
             --allow-large-delta if you mean it"
        ))),
    }
}

/// The outputs of a release with their flags, in the order they are written.
fn release_outputs(args: &ReleaseArgs) -> Vec<(&'static str, &Path)> {
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
fn release_inputs(args: &ReleaseArgs) -> Vec<(&'static str, PathBuf)> {
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

fn release(args: &ReleaseArgs) -> Result<()> {
    // validate every argument before touching the data, the ledger or the noise
    catalogue::spec(&args.mechanism)?;
    args.data.check_attributes()?;
    let budget = BudgetArgs {
        epsilon: args.epsilon,
        delta: args.delta,
        rho: args.rho,
    }
    .to_loss(&args.mechanism)?;
    let neighbouring = match args.neighbouring {
        NeighbouringArg::ReplaceOne => Neighbouring::ReplaceOne,
        NeighbouringArg::AddRemove => Neighbouring::AddRemove,
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
    let round_pb = pb.clone();
    let attribute_names = Arc::new(OnceLock::new());
    let options = BuildOptions {
        round_progress: Some(Arc::new(move |line: String| round_pb.set_message(line))),
        memory_bytes: Some(args.max_memory_mib.saturating_mul(1 << 20)),
        attribute_names: Arc::clone(&attribute_names),
        projection_settings: None,
    };
    let mech = build_mechanism_with(&args.mechanism, budget, neighbouring, post, &options)?;
    // a workload over a few attributes of a wide table: enumerate only those
    // (dp_mechanisms::restricted; the guarantee is unchanged)
    let mech: Box<dyn Mechanism> = if mech.works_over_a_universe() {
        Box::new(OnWorkloadAttributes::new(mech))
    } else {
        mech
    };
    if args.synthetic_out.is_some() && !mech.produces_synthetic() {
        return Err(BenchError::Usage(format!(
            "{} releases answers only, no synthetic data: drop --synthetic-out or choose a \
             mechanism that makes synthetic records",
            mech.name()
        )));
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
    let mut ledger = match &args.ledger {
        Some(path) => {
            pb.set_message("waiting for the ledger lock");
            let l = LockedLedger::open(path)?;
            let key = args.data.ledger_key()?;
            l.contents
                .can_spend(&key, &spend, spend_relation)
                .map_err(|e| BenchError::LedgerRefused {
                    ledger: path.display().to_string(),
                    dataset: key.clone(),
                    source: Box::new(e),
                })?;
            Some((l, key))
        }
        None => None,
    };
    if args.dry_run {
        pb.finish_and_clear();
        let ledger_note = ledger.as_ref().map(|(_, key)| {
            format!(
                "ledger: the spend fits the remaining budget of {key} (nothing recorded by a \
                 dry run)"
            )
        });
        return dry_run(args, mech.as_ref(), ledger_note);
    }
    pb.set_message("loading data");
    // From here on, under add/remove neighbours n is private: nothing printed or written
    // (stdout, stderr, report, answers, ledger) may be the true n or derived from it.
    let data = args.data.load(neighbouring == Neighbouring::AddRemove)?;
    if neighbouring == Neighbouring::ReplaceOne {
        // n is public under replace-one: δ is compared with 1/n
        check_delta(args, Some(data.n()))?;
    }
    attribute_names
        .set(data.domain().names().map(str::to_string).collect())
        .ok();
    let workload = MarginalWorkload::parse_spec(data.domain(), &args.workload, args.workload_seed)?;
    let need = (workload.num_queries() as u64).saturating_mul(BYTES_PER_QUERY);
    if need > args.max_memory_mib.saturating_mul(1 << 20) {
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
    pb.set_message(format!(
        "releasing {} cells of {} marginals with {}",
        workload.num_queries(),
        workload.len(),
        mech.name()
    ));
    let mut rng = match args.seed {
        Some(s) => {
            eprintln!(
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
        (Some((l, key)), Some(path)) => {
            // charged now, after every check that draws no noise and before the first
            // noise is drawn (`release_charged` records the spend, then runs the
            // mechanism): a release that fails or crashes from here on has been charged
            // (no free retry), and nothing unrecorded is ever published
            let label = format!(
                "{} on {} ({} queries)",
                mech.name(),
                args.workload,
                workload.num_queries()
            );
            let release = ledger_file::release_charged(
                l,
                key,
                &label,
                mech.as_ref(),
                &data,
                &workload,
                &mut rng,
            )
            .map_err(|e| match e {
                BenchError::ReleaseFailedAfterCharge(_) => BenchError::InLedger {
                    ledger: path.display().to_string(),
                    dataset: key.clone(),
                    source: Box::new(e),
                },
                e => BenchError::LedgerRefused {
                    ledger: path.display().to_string(),
                    dataset: key.clone(),
                    source: Box::new(e),
                },
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
            println!(
                "ledger {}: recorded {spend} under {spend_relation} neighbours{charged} for \
                 {key}",
                path.display()
            );
            release
        }
        _ => mech.release(&data, &workload, &mut rng)?,
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
            data.n()
        ),
        Neighbouring::AddRemove => "n is private under add/remove neighbours: it is not \
             reported, and the answers are normalised by the mean noisy table total"
            .to_string(),
    };
    let report_text = match &args.report {
        None => None,
        Some(_) => {
            let mut diagnostics = serde_json::to_value(&release.diagnostics)
                .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?;
            if neighbouring == Neighbouring::AddRemove
                && let Some(d) = diagnostics.as_object_mut()
            {
                // the run time grows with n: a timing side channel on the private n
                d.remove("wall_seconds");
            }
            let mut report = serde_json::json!({
                "certificate": release.certificate,
                "statement": release.certificate.statement(),
                "diagnostics": diagnostics,
                "workload": args.workload,
                "marginals": workload.len(),
                "queries": workload.num_queries(),
                "n_note": n_note,
                // never the seed itself: with it and the answers anyone recovers the exact
                // counts
                "randomness": if args.seed.is_some() {
                    "seeded by the caller (--seed, testing only; the seed is not recorded)"
                } else {
                    "operating-system entropy"
                },
            });
            if neighbouring == Neighbouring::ReplaceOne
                && let Some(r) = report.as_object_mut()
            {
                r.insert("n".into(), data.n().into());
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
    let mut answers_file = AtomicFile::create(&args.out)?;
    output::write_maybe_compressed(&mut answers_file, |w| {
        write_answers(w, &workload, &release.answers)
    })?;
    files.push(answers_file);
    if let (Some(path), Some(text)) = (&args.report, &report_text) {
        let mut f = AtomicFile::create(path)?;
        output::write_maybe_compressed(&mut f, |w| {
            w.write_all(text.as_bytes()).map_err(io_error(path))
        })?;
        files.push(f);
    }
    if let Some((path, synthetic)) = synthetic {
        let mut f = AtomicFile::create(path)?;
        output::write_maybe_compressed(&mut f, |w| write_synthetic(w, synthetic))?;
        files.push(f);
    }
    for f in files {
        f.commit()?;
    }
    pb.finish_and_clear();
    println!("privacy spent: {}", release.certificate.statement());
    println!("{n_note}");
    if let Some(noise) = release.diagnostics.noise {
        println!(
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
        println!("note: {note}");
    }
    let size = |p: &std::path::Path| {
        std::fs::metadata(p).map_or(String::new(), |m| {
            format!(" ({})", output::human_size(m.len()))
        })
    };
    println!(
        "wrote {} answers ({} marginals) to {}{}",
        release.answers.len(),
        workload.len(),
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
        println!(
            "wrote {} synthetic records to {}{}{renamed}",
            synthetic.weights.len(),
            path.display(),
            size(path)
        );
    }
    Ok(())
}

fn eval(args: &EvalArgs) -> Result<()> {
    let data = args.data.load(false)?;
    let domain: &Domain = data.domain();
    let (workload, answers) = read_answers(&args.answers, domain)?;
    let truth = workload.answers(&data)?;
    let report = ErrorReport::compute(&workload, &answers, &truth)?;
    eprintln!(
        "WARNING: NON-PRIVATE EVALUATION. These error figures are computed from the true data \
         and are not differentially private; use them for benchmarking only, never publish them \
         as part of a release."
    );
    if args.json {
        let text = serde_json::to_string(&report)
            .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?;
        println!("{text}");
    } else {
        println!(
            "marginals: {}  queries: {}",
            workload.len(),
            workload.num_queries()
        );
        println!("max_abs_error:       {:.6e}", report.max_abs);
        println!("mean_abs_error:      {:.6e}", report.mean_abs);
        println!("rmse:                {:.6e}", report.rmse);
        println!("mean_marginal_l1:    {:.6e}", report.mean_marginal_l1);
    }
    Ok(())
}

fn audit(args: &AuditArgs) -> Result<bool> {
    let settings = audit_settings(&args.mechanism)?;
    let noise_factor = match (args.canary, args.noise_factor) {
        (_, Some(f)) => Some(f),
        (true, None) => Some(0.5),
        (false, None) => None,
    };
    let neighbouring = match args.neighbouring {
        NeighbouringArg::ReplaceOne => Neighbouring::ReplaceOne,
        NeighbouringArg::AddRemove => Neighbouring::AddRemove,
    };
    // composed mechanisms: black-box and step audit, α/2 each (union bound)
    let steps = settings
        .steps
        .filter(|_| neighbouring == Neighbouring::ReplaceOne);
    let alpha = if steps.is_some() {
        args.alpha / 2.0
    } else {
        args.alpha
    };
    let config = AuditConfig {
        runs: args.runs.unwrap_or(settings.ci_runs),
        seed: args.seed,
        alpha,
        neighbouring,
        noise_factor,
        ..AuditConfig::new(0, 0)
    };
    let r = audit_with(&args.mechanism, &settings, &config)?;
    if let Some(f) = noise_factor {
        println!(
            "CANARY: {} run with {f} times its noise scale, claiming the original guarantee",
            args.mechanism
        );
    }
    if steps.is_some() {
        println!("== black-box audit (α = {alpha:e}) ==");
    }
    println!("claimed: {}", r.certificate.statement());
    println!(
        "audited at δ = {:e}: claimed ε = {:.4}; {} runs per dataset (half select the event)",
        r.delta, r.claimed_epsilon, r.runs
    );
    println!("event: {}", r.event);
    println!(
        "in event: {}/{} runs on the favoured dataset, {}/{} on the other",
        r.favoured.0, r.favoured.1, r.other.0, r.other.1
    );
    println!(
        "ε lower bound {:.4} at confidence {}",
        r.epsilon_lower, r.confidence
    );
    let ratio = |lower: f64, claimed: f64| lower / claimed.max(f64::MIN_POSITIVE);
    let mut worst = (r.epsilon_lower, r.claimed_epsilon);
    let mut passed = r.passed;
    if let Some(st) = steps {
        let step_config = AuditConfig {
            runs: args.runs.unwrap_or(st.ci_runs),
            ..config.clone()
        };
        let s = audit_steps(&args.mechanism, &settings, &step_config)?;
        println!(
            "== step audit (α = {alpha:e} over {} steps, {} runs per dataset and step) ==",
            s.steps.len(),
            s.runs
        );
        println!("claimed: {}", s.certificate.statement());
        println!(
            "composition of the per-step losses: {} (mechanism's accounting {}): {}",
            s.composed,
            s.accounting,
            if s.composition_ok {
                "within the certificate"
            } else {
                "FAIL (exceeds the certificate or differs from the accounting)"
            }
        );
        for line in s.step_lines() {
            println!("{line}");
        }
        for u in &s.unmatched {
            println!("canary step without an honest counterpart (not audited): {u}");
        }
        // the part with the largest ε_lower / claimed (a failing step has ratio > 1)
        if let Some(w) = s.worst()
            && ratio(w.epsilon_lower, w.claimed_epsilon) > ratio(worst.0, worst.1)
        {
            worst = (w.epsilon_lower, w.claimed_epsilon);
        }
        passed &= s.passed;
    }
    println!(
        "epsilon_lower={:.4} claimed={:.4} verdict={}",
        worst.0,
        worst.1,
        if passed { "pass" } else { "FAIL" }
    );
    Ok(passed)
}

/// One catalogue entry for `dpqr mechanisms --json`.
fn mechanism_json(spec: &MechanismSpec) -> serde_json::Value {
    let flags: Vec<&str> = spec.budgets.iter().map(|k| k.flags()).collect();
    let kinds: Vec<&str> = spec.budgets.iter().map(|k| k.key()).collect();
    let relations: Vec<&str> = spec
        .relations
        .iter()
        .map(|r| neighbouring_flag(*r))
        .collect();
    serde_json::json!({
        "name": spec.name,
        "description": spec.description,
        "guarantee": spec.guarantee,
        "budget_kinds": kinds,
        "budget_flags": flags,
        "neighbouring": relations,
        "neighbouring_note": spec.relations_note,
        "synthetic_data": spec.synthetic,
        "universe": spec.universe,
    })
}

/// `dpqr mechanisms`: every catalogue entry in plain words, or as JSON.
fn mechanisms(json: bool) -> Result<()> {
    if json {
        let list: Vec<serde_json::Value> = MECHANISMS.iter().map(mechanism_json).collect();
        let text = serde_json::to_string_pretty(&list)
            .map_err(|e| BenchError::Usage(format!("cannot encode the list: {e}")))?;
        println!("{text}");
        return Ok(());
    }
    for (i, spec) in MECHANISMS.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("{}", spec.name);
        println!("  what:           {}", spec.description);
        println!("  guarantee:      {}", spec.guarantee);
        println!("  budget flags:   {}", spec.budget_flags());
        let relations = if spec.relations.len() == 1 {
            format!(
                "{} only (--neighbouring {}): {}",
                spec.relation_list(),
                neighbouring_flag(spec.relations[0]),
                spec.relations_note
            )
        } else {
            format!(
                "{} (--neighbouring {})",
                spec.relation_list(),
                spec.relations
                    .iter()
                    .map(|r| neighbouring_flag(*r))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        };
        println!("  neighbours:     {relations}");
        println!(
            "  synthetic data: {}",
            if spec.synthetic {
                "yes, weighted synthetic records (--synthetic-out)"
            } else {
                "no, answers only"
            }
        );
        println!("  domain:         {}", spec.universe);
    }
    let kinds: Vec<String> = BudgetKind::ALL
        .iter()
        .map(|k| format!("{} is {}", k.flags(), k.describe()))
        .collect();
    println!();
    println!("Budget flags: {}.", kinds.join("; "));
    Ok(())
}

fn ledger(cmd: &LedgerCommand) -> Result<()> {
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
            println!(
                "created ledger {} with per-dataset budget {budget} under {neighbouring} \
                 neighbours",
                file.display()
            );
            Ok(())
        }
        LedgerCommand::Show { file } => {
            print!("{}", ledger_file::read(file)?.describe());
            Ok(())
        }
    }
}

fn schema(cmd: &SchemaCommand) -> Result<()> {
    let SchemaCommand::Draft {
        data,
        max_labels,
        bins,
    } = cmd;
    if *max_labels == 0 || *bins == 0 {
        return Err(BenchError::Usage(
            "--max-labels and --bins must be at least 1".into(),
        ));
    }
    let file = std::fs::File::open(data).map_err(io_error(data))?;
    let settings = dp_queries::DraftSettings {
        max_labels: *max_labels,
        bins: *bins,
    };
    let draft = dp_queries::draft_schema(
        std::io::BufReader::new(file),
        &data.display().to_string(),
        settings,
    )?;
    eprintln!(
        "WARNING: NON-PRIVATE. This draft was made by reading {}: its labels, minima and \
         maxima come from the private records and can disclose them. A schema must be public \
         and fixed without looking at the data: review and coarsen the draft (public category \
         lists, round bin edges chosen without the data, rare labels merged into \"other\") \
         before any release uses it, and never publish the draft itself.",
        data.display()
    );
    print!("{draft}");
    Ok(())
}

fn main() -> ExitCode {
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
