//! `dpqr`: release differentially private answers to a workload of marginals from a CSV.
//!
//! ```text
//! dpqr release --data adult.csv --domain adult-domain.json --workload all-3way \
//!     --mechanism gaussian --epsilon 1 --delta 1e-9 --seed 7 --out answers.csv
//! dpqr eval --data adult.csv --domain adult-domain.json --answers answers.csv   # NON-PRIVATE
//! dpqr datasets        # bundled datasets
//! dpqr mechanisms      # available mechanisms and their guarantees
//! ```

use clap::{Args, Parser, Subcommand, ValueEnum};
use dp_bench::answers::{read_answers, write_answers_file};
use dp_bench::registry::{BudgetArgs, MECHANISMS, build_mechanism};
use dp_bench::{BenchError, Result, datasets, io_error};
use dp_core::{Neighbouring, os_seeded_rng, seeded_rng};
use dp_mechanisms::PostProcessing;
use dp_queries::{Dataset, Domain, ErrorReport, MarginalWorkload};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
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
}

impl DataArgs {
    fn load(&self) -> Result<Dataset> {
        match (&self.data, &self.domain, &self.dataset) {
            (Some(csv), Some(dom), None) => Ok(Dataset::load_csv(csv, dom)?),
            (None, None, Some(name)) => datasets::bundled(name)?.load(),
            _ => Err(BenchError::Usage(
                "give --data FILE.csv --domain FILE.json, or --dataset NAME".into(),
            )),
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
    /// Seed of the mechanism's randomness (ChaCha20). Without it the OS seeds it — use that
    /// for real releases; a published seed makes the noise reproducible by anyone.
    #[arg(long)]
    seed: Option<u64>,
    /// Output CSV: marginal,cell,answer.
    #[arg(long)]
    out: PathBuf,
    /// Also write the certificate and diagnostics as JSON here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
}

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
    let mech = build_mechanism(&args.mechanism, budget, neighbouring, post)?;
    pb.set_message("loading data");
    let data = args.data.load()?;
    let workload = MarginalWorkload::parse_spec(data.domain(), &args.workload, args.workload_seed)?;
    pb.set_message(format!(
        "releasing {} cells of {} marginals with {}",
        workload.num_queries(),
        workload.len(),
        mech.name()
    ));
    let mut rng = match args.seed {
        Some(s) => seeded_rng(s),
        None => os_seeded_rng()?,
    };
    let release = mech.release(&data, &workload, &mut rng)?;
    pb.set_message("writing answers");
    write_answers_file(&args.out, &workload, &release.answers)?;
    if let Some(path) = &args.report {
        let report = serde_json::json!({
            "certificate": release.certificate,
            "statement": release.certificate.statement(),
            "diagnostics": release.diagnostics,
            "workload": args.workload,
            "marginals": workload.len(),
            "queries": workload.num_queries(),
            "n": data.n(),
            "seed": args.seed,
        });
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| BenchError::Usage(format!("cannot encode report: {e}")))?;
        std::fs::write(path, text).map_err(io_error(path))?;
    }
    pb.finish_and_clear();
    println!("privacy spent: {}", release.certificate.statement());
    if let Some(noise) = release.diagnostics.noise {
        println!(
            "noise: {} on counts, {} = {} (sensitivity {:.4}); standard deviation per answer {:.4e}",
            noise.distribution,
            noise.distribution.parameter_name(),
            noise.parameter,
            noise.sensitivity,
            noise.answer_std
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
    let data = args.data.load()?;
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

fn main() -> ExitCode {
    let cli = Cli::parse();
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
