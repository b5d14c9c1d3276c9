//! `dpqr`: release differentially private answers to a workload of marginals from a CSV.
//!
//! ```text
//! dpqr release --data adult.csv --domain adult-domain.json --workload all-3way \
//!     --mechanism gaussian --epsilon 1 --delta 1e-9 --seed 7 --out answers.csv
//! dpqr eval --data adult.csv --domain adult-domain.json --answers answers.csv   # NON-PRIVATE
//! dpqr datasets        # bundled datasets
//! dpqr mechanisms      # available mechanisms and their guarantees
//! dpqr audit --mechanism laplace [--runs N] [--seed S] [--canary]   # empirical ε lower bound
//! dpqr ledger init FILE --epsilon 1 --delta 1e-9 [--neighbouring add-remove]
//!                                                   # then: dpqr release ... --ledger FILE
//! ```

use clap::{Args, Parser, Subcommand, ValueEnum};
use dp_bench::answers::{read_answers, write_answers_file};
use dp_bench::audit::{AuditConfig, audit_steps, audit_with};
use dp_bench::ledger_file::{self, LockedLedger};
use dp_bench::registry::{
    BudgetArgs, BuildOptions, MECHANISMS, audit_settings, build_mechanism_with,
    check_budget_is_meaningful,
};
use dp_bench::synthetic::write_synthetic_file;
use dp_bench::{BenchError, Result, datasets, io_error};
use dp_core::{Neighbouring, os_seeded_rng, seeded_rng};
use dp_mechanisms::{Normaliser, PostProcessing};
use dp_queries::{Dataset, Domain, ErrorReport, MarginalWorkload};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
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
    /// List the available mechanisms.
    Mechanisms,
    /// Empirical privacy audit: a lower confidence bound on the ε a mechanism provides.
    Audit(AuditArgs),
    /// Create or show a budget ledger (see `release --ledger`).
    #[command(subcommand)]
    Ledger(LedgerCommand),
}

#[derive(Args)]
struct AuditArgs {
    /// Mechanism (see `dpqr mechanisms`).
    #[arg(long)]
    mechanism: String,
    /// Runs on each of the two neighbouring datasets (default: the registry's CI count).
    #[arg(long)]
    runs: Option<usize>,
    /// Seed of the runs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Audit the deliberately miscalibrated canary (half the noise scale, same claim).
    #[arg(long)]
    canary: bool,
    /// Canary with this factor times the noise scale instead of 1/2 (implies --canary).
    #[arg(long)]
    noise_factor: Option<f64>,
    /// Failure probability of the audit (a correct mechanism fails with at most this).
    #[arg(long, default_value_t = dp_bench::audit::DEFAULT_ALPHA)]
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
        #[arg(long)]
        epsilon: Option<f64>,
        /// δ of an (ε, δ) budget.
        #[arg(long, requires = "epsilon")]
        delta: Option<f64>,
        /// ρ of a ρ-zCDP budget.
        #[arg(long, conflicts_with_all = ["epsilon", "delta"])]
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
    /// CSV of integer codes with a header row.
    #[arg(long, requires = "domain", conflicts_with = "dataset")]
    data: Option<PathBuf>,
    /// Domain JSON: {"attr": size, ...}.
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

    /// Load the data. With `allow_empty` (add/remove neighbours, where the empty dataset
    /// must be releasable like any other) a CSV with a header and no records is the empty
    /// dataset rather than an error.
    fn load(&self, allow_empty: bool) -> Result<Dataset> {
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
    #[arg(long, default_value_t = 0)]
    workload_seed: u64,
    /// Mechanism (see `dpqr mechanisms`).
    #[arg(long)]
    mechanism: String,
    /// ε (with --delta for the zCDP mechanisms).
    #[arg(long)]
    epsilon: Option<f64>,
    /// δ: the zCDP mechanisms spend the largest ρ whose (ε, δ) conversion is within budget.
    #[arg(long, conflicts_with = "rho")]
    delta: Option<f64>,
    /// ρ of ρ-zCDP, instead of --epsilon/--delta.
    #[arg(long)]
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
    #[arg(long)]
    seed: Option<u64>,
    /// Output CSV: marginal,cell,answer.
    #[arg(long)]
    out: PathBuf,
    /// Also write the certificate and diagnostics as JSON here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Also write the released synthetic records (CSV: codes and a weight column) here;
    /// refused up front for mechanisms that release no synthetic data.
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
    #[arg(long, default_value_t = 4096)]
    max_memory_mib: u64,
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

fn release(args: &ReleaseArgs) -> Result<()> {
    if !MECHANISMS.iter().any(|(n, _)| *n == args.mechanism) {
        let names: Vec<&str> = MECHANISMS.iter().map(|(n, _)| *n).collect();
        return Err(BenchError::Usage(format!(
            "unknown mechanism {:?}; available: {}",
            args.mechanism,
            names.join(", ")
        )));
    }
    let pb = spinner(args.quiet);
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
    // validate everything before touching the data or drawing noise
    check_budget_is_meaningful(&budget)?;
    let round_pb = pb.clone();
    let options = BuildOptions {
        round_progress: Some(Arc::new(move |line: String| round_pb.set_message(line))),
        memory_bytes: Some(args.max_memory_mib.saturating_mul(1 << 20)),
    };
    let mech = build_mechanism_with(&args.mechanism, budget, neighbouring, post, &options)?;
    if args.synthetic_out.is_some() && !mech.produces_synthetic() {
        return Err(BenchError::Usage(format!(
            "{} releases answers only, no synthetic data: drop --synthetic-out or choose a \
             mechanism that makes synthetic records",
            mech.name()
        )));
    }
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
                .map_err(|e| {
                    BenchError::Usage(format!(
                        "ledger {}: dataset {key}: refusing the release: {e}",
                        path.display()
                    ))
                })?;
            Some((l, key))
        }
        None => None,
    };
    pb.set_message("loading data");
    // From here on, under add/remove neighbours n is private: nothing printed or written
    // (stdout, stderr, report, answers, ledger) may be the true n or derived from it.
    let data = args.data.load(neighbouring == Neighbouring::AddRemove)?;
    let workload = MarginalWorkload::parse_spec(data.domain(), &args.workload, args.workload_seed)?;
    let need = (workload.num_queries() as u64).saturating_mul(BYTES_PER_QUERY);
    if need > args.max_memory_mib.saturating_mul(1 << 20) {
        return Err(BenchError::Usage(format!(
            "workload {:?} has {} counting queries: the release would need about {:.1} MiB \
             ({BYTES_PER_QUERY} bytes per query), more than --max-memory-mib {}; refusing \
             before allocating",
            args.workload,
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
                BenchError::ReleaseFailedAfterCharge(_) => {
                    BenchError::Usage(format!("ledger {}: dataset {key}: {e}", path.display()))
                }
                e => BenchError::Usage(format!(
                    "ledger {}: dataset {key}: refusing the release: {e}",
                    path.display()
                )),
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
    pb.set_message("writing answers");
    write_answers_file(&args.out, &workload, &release.answers)?;
    if let Some(path) = &args.synthetic_out {
        match &release.synthetic {
            Some(synthetic) => write_synthetic_file(path, synthetic)?,
            None => {
                return Err(BenchError::Usage(format!(
                    "{} returned no synthetic data",
                    mech.name()
                )));
            }
        }
    }
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
    if let Some(path) = &args.report {
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
            // never the seed itself: with it and the answers anyone recovers the exact counts
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
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?;
        std::fs::write(path, text).map_err(io_error(path))?;
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
            noise.parameter,
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
    println!(
        "wrote {} answers ({} marginals) to {}",
        release.answers.len(),
        workload.len(),
        args.out.display()
    );
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

fn ledger(cmd: &LedgerCommand) -> Result<()> {
    match cmd {
        LedgerCommand::Init {
            file,
            epsilon,
            delta,
            rho,
            neighbouring,
        } => {
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
        Command::Audit(_) => Ok(()),
        Command::Mechanisms => {
            for (name, what) in MECHANISMS {
                println!("{name:<10} {what}");
            }
            Ok(())
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
