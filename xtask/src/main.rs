//! `cargo xtask`: project automation (run through the alias in `.cargo/config.toml`, which
//! builds in release mode).
//!
//! * `cargo xtask bench [--quick] [--only FAMILY]`: run the benchmark grids (baselines,
//!   iterative, iterative-scaling and relaxed — full grid only —, projection, real tables,
//!   polynomial — full grid only unless named with `--only` —), print tables, write JSON
//!   lines and PNG figures under `target/dpqr-bench/`.
//! * `cargo xtask ci`: the layer check, `cargo fmt --check`, clippy with `-D warnings`, and
//!   the test suite — what `.ci/run` runs.
//! * `cargo xtask layers`: only the layer check.
//! * `cargo xtask-engines ballista-loopback [--serve]` (xtask built with the feature
//!   `ballista`; the alias `xtask-engines` does that): start a Ballista scheduler and 2
//!   executors on 127.0.0.1, count nltcs's 2-way marginals on them against the native
//!   counts; with `--serve`, keep the cluster up for `dpqr release --engine ballista`.
//!   `cargo xtask-engines bench --only scale` adds the DataFusion and Ballista rows.

mod layers;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use dp_bench::experiments::real::RealScale;
use dp_bench::experiments::{BaselineExperiment, ResultRecord, format_table, run_baselines};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Parser)]
#[command(name = "xtask")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the benchmark grids on the bundled data.
    Bench {
        /// The small grid (a few seconds): adult, all-2way and random-3way:64, ε ∈ {0.1, 1, 10}.
        #[arg(long)]
        quick: bool,
        /// Where to write JSON lines (default target/dpqr-bench).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only the iterative family's scaling experiments after Gaboardi et al. 2014, §7
        /// (part of the full grid): number of queries, dimension, MWEM vs DualQuery on
        /// ≈ 10 000 queries.
        /// Same as `--only iterative-scaling`.
        #[arg(long, conflicts_with_all = ["quick", "only"])]
        iterative_scaling: bool,
        /// Run one family's grid only (at the `--quick` or full scale).
        #[arg(long, value_enum)]
        only: Option<Family>,
        /// Table sizes of the scale family instead of its defaults (comma-separated row
        /// counts, e.g. `--only scale --rows 100000000`).
        #[arg(long, value_delimiter = ',', requires = "only")]
        rows: Vec<u64>,
        /// With `--only real-tables-peers`: only these bundled tables (comma-separated, e.g.
        /// `--datasets titanic,adult`). A filtered run writes `real-tables-peers-subset.jsonl`,
        /// so the full grid's records are kept.
        #[arg(long, value_delimiter = ',', requires = "only")]
        datasets: Vec<String>,
        /// With `--only real-tables-peers`: only these ε (comma-separated, e.g.
        /// `--epsilons 0.1,1`); written like `--datasets`.
        #[arg(long, value_delimiter = ',', requires = "only")]
        epsilons: Vec<f64>,
    },
    /// Re-draw the PNG figures from the result files of `bench` (projection and iterative
    /// families).
    Figures {
        /// Where the JSON lines are and the PNGs go (default target/dpqr-bench).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print the tables of the real-tables grid (per mechanism, and adaptive-projection
    /// beside the Gaussian baseline) from its JSON lines, e.g. those of a run cut short.
    RealTable {
        /// A `real-tables*.jsonl` file written by `bench`.
        file: PathBuf,
    },
    /// fmt, clippy, layer check and tests.
    Ci,
    /// Check the workspace's layering.
    Layers,
    /// Start a Ballista scheduler and executors on 127.0.0.1 in this process (ports picked
    /// by the system), count all 2-way marginals of the bundled nltcs on them and compare
    /// with the native counts. Needs xtask built with the feature `ballista` (`cargo
    /// xtask-engines ballista-loopback`).
    BallistaLoopback {
        /// Executors to start (each with one task slot).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
        executors: u64,
        /// Keep the cluster running after the check (until the process is stopped), for
        /// `dpqr release --engine ballista --ballista-url <the printed address>`.
        #[arg(long)]
        serve: bool,
    },
}

/// The bench's parts, for `--only`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Family {
    /// Gaussian / Laplace baselines against their predicted errors.
    Baselines,
    /// MWEM, IC-MW, DualQuery (Gaboardi et al. 2014, §7, scaled down; without the scaling
    /// runs).
    Iterative,
    /// The scaling runs after Gaboardi et al. 2014, §7 (not affected by `--quick`).
    IterativeScaling,
    /// Projection, coarse projection, chaining with packing lower bounds (Błasiok et al. 2019).
    Projection,
    /// Real tables (issue #10): adaptive projection and the implicit projection against the
    /// Gaussian baseline on adult, temporal-match2 and acs.
    RealTables,
    /// The real-tables grid as the peer bench runs it (issue #24): add/remove, workload seed
    /// 1, every bundled table, three seeds (full grid only: hours).
    RealTablesPeers,
    /// Counting at scale (issue #15): resampled adult tables of 10⁶ and 10⁷ records, as CSV
    /// and as Parquet (the same rows), streamed and in memory (full grid only; `--quick` with
    /// `--only scale` uses 10⁵ and 10⁶).
    Scale,
    /// The polynomial release (Thaler, Ullman, Vadhan 2012): all k-way marginals of nltcs
    /// and acs for k = 2..5 against the Gaussian baseline and projection, thresholds, a
    /// synthetic decision-list database (full grid only unless `--only polynomial`).
    Polynomial,
    /// The local model (issue #14): local projection, coarse, chaining against randomized
    /// response, OLH, Hadamard response and the Fourier approach, error vs n (not in
    /// `--quick` unless asked with `--only local`).
    Local,
    /// The relaxed projection and boosting for queries (Dwork, Nikolov, Talwar 2015) against
    /// the Gaussian baseline with simplex post-processing on nltcs, acs and adult one-hot (full grid only:
    /// minutes, not part of `--quick`).
    Relaxed,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Which rows of the peers grid a `bench` run keeps (empty: all).
struct GridFilter {
    datasets: Vec<String>,
    epsilons: Vec<f64>,
}

impl GridFilter {
    fn is_empty(&self) -> bool {
        self.datasets.is_empty() && self.epsilons.is_empty()
    }
}

fn bench(
    quick: bool,
    out: Option<PathBuf>,
    only: Option<Family>,
    rows: &[u64],
    filter: &GridFilter,
) -> Result<()> {
    if !filter.is_empty() && only != Some(Family::RealTablesPeers) {
        anyhow::bail!("--datasets and --epsilons apply to `--only real-tables-peers` only");
    }
    let out = out.unwrap_or_else(|| root().join("target").join("dpqr-bench"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let runs = |f: Family| only.is_none_or(|o| o == f);
    if runs(Family::Baselines) {
        bench_baselines(quick, &out)?;
    }
    if runs(Family::Iterative) {
        bench_iterative(Some(quick), &out)?;
    }
    if runs(Family::IterativeScaling) && (!quick || only.is_some()) {
        bench_iterative(None, &out)?;
    }
    if runs(Family::Projection) {
        // The projection family (seed 004) with packing lower bounds.
        dp_bench::experiments::projection::run_and_report(quick, &out)?;
    }
    if runs(Family::RealTables) {
        bench_real(quick, &out)?;
    }
    if only == Some(Family::RealTablesPeers) {
        let file = if filter.is_empty() {
            "real-tables-peers.jsonl"
        } else {
            "real-tables-peers-subset.jsonl"
        };
        bench_real_scale(RealScale::Peers, file, filter, &out)?;
    }
    if runs(Family::Relaxed) && (!quick || only.is_some()) {
        dp_bench::experiments::relaxed::run_and_report(&out)?;
    }
    if runs(Family::Polynomial) && (!quick || only.is_some()) {
        dp_bench::experiments::polynomial::run_and_report(quick, &out)?;
    }
    if runs(Family::Scale) && (!quick || only.is_some()) {
        bench_scale(quick, rows, &out)?;
    }
    if runs(Family::Local) && (!quick || only.is_some()) {
        use dp_bench::experiments::local::{LocalExperiment, run_and_report};
        let grid = if quick {
            LocalExperiment::quick()
        } else {
            LocalExperiment::full()
        };
        run_and_report(&grid, &out)?;
    }
    Ok(())
}

/// The scale bench (issue #15), one JSON line per measurement.
fn bench_scale(quick: bool, rows: &[u64], out: &Path) -> Result<()> {
    use dp_bench::experiments::scale::{format_scale_table, run_scale};
    let sizes: &[u64] = if !rows.is_empty() {
        rows
    } else if quick {
        &[100_000, 1_000_000]
    } else {
        &[1_000_000, 10_000_000]
    };
    let path = out.join("scale.jsonl");
    let mut f =
        std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut write_error = None;
    let records = run_scale("adult", sizes, out, |r| {
        eprintln!(
            "scale: {} rows {} {}: {:.2} s",
            r.rows, r.workload, r.method, r.seconds
        );
        if let Ok(line) = serde_json::to_string(r)
            && let Err(e) = writeln!(f, "{line}")
        {
            write_error.get_or_insert(e);
        }
    })?;
    if let Some(e) = write_error {
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    print!("{}", format_scale_table(&records));
    println!("results: {}", path.display());
    Ok(())
}

/// The real-tables grid (issue #10), one JSON line per run.
fn bench_real(quick: bool, out: &Path) -> Result<()> {
    let (scale, file) = if quick {
        (RealScale::Quick, "real-tables-quick.jsonl")
    } else {
        (RealScale::Full, "real-tables.jsonl")
    };
    let all = GridFilter {
        datasets: Vec::new(),
        epsilons: Vec::new(),
    };
    bench_real_scale(scale, file, &all, out)
}

/// One scale of the real-tables grid into `out/file`.
fn bench_real_scale(scale: RealScale, file: &str, filter: &GridFilter, out: &Path) -> Result<()> {
    use dp_bench::experiments::real::{
        format_real_comparison, format_real_table, real_grid, run_real,
    };
    let mut grid = real_grid(scale);
    let known: Vec<String> = grid.iter().map(|c| c.dataset.clone()).collect();
    if let Some(d) = filter.datasets.iter().find(|d| !known.contains(d)) {
        anyhow::bail!(
            "--datasets: no bundled table {d:?} in the grid (its tables: titanic, nltcs, acs, \
             adult, temporal-match2)"
        );
    }
    if let Some(e) = filter
        .epsilons
        .iter()
        .find(|e| !grid.iter().any(|c| c.epsilon == **e))
    {
        anyhow::bail!("--epsilons: the grid has no ε = {e} (its ε: 0.1, 1, 10)");
    }
    grid.retain(|c| {
        (filter.datasets.is_empty() || filter.datasets.contains(&c.dataset))
            && (filter.epsilons.is_empty() || filter.epsilons.contains(&c.epsilon))
    });
    let path = out.join(file);
    let mut f =
        std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let pb = ProgressBar::new(grid.len() as u64);
    pb.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut write_error = None;
    let records = run_real(&grid, |r| {
        pb.inc(1);
        pb.set_message(format!(
            "{} {} {} ε={} seed {}: avgL1 {:.3}, {:.1} s",
            r.config.dataset,
            r.workload_name,
            r.config.mechanism,
            r.config.epsilon,
            r.config.seed,
            r.error.mean_marginal_l1,
            r.seconds
        ));
        let line = serde_json::to_string(r).map_err(anyhow::Error::from);
        if let Err(e) = line.and_then(|l| writeln!(f, "{l}").map_err(Into::into)) {
            write_error.get_or_insert(e);
        }
    })?;
    pb.finish_and_clear();
    if let Some(e) = write_error {
        return Err(e.context(format!("writing {}", path.display())));
    }
    println!("== real tables (issue #10), δ = 1e-9 ==");
    print!("{}", format_real_table(&records));
    println!();
    print!("{}", format_real_comparison(&records));
    println!("results: {}\n", path.display());
    Ok(())
}

/// The Gaussian / Laplace baselines with their predicted max-error ranges.
fn bench_baselines(quick: bool, out: &Path) -> Result<()> {
    let experiments = if quick {
        vec![BaselineExperiment::quick()]
    } else {
        BaselineExperiment::full()
    };
    for exp in &experiments {
        let path = out.join(format!("{}.jsonl", exp.name));
        let mut file =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let pb = ProgressBar::new(exp.num_runs());
        pb.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} [{elapsed_precise}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb.set_message(exp.name.clone());
        let mut write_error = None;
        let records: Vec<ResultRecord> = run_baselines(exp, |r| {
            pb.inc(1);
            let line = serde_json::to_string(r).map_err(anyhow::Error::from);
            if let Err(e) = line.and_then(|l| writeln!(file, "{l}").map_err(Into::into)) {
                write_error.get_or_insert(e);
            }
        })?;
        pb.finish_and_clear();
        if let Some(e) = write_error {
            return Err(e.context(format!("writing {}", path.display())));
        }
        println!(
            "== {} on {} (n = {}), δ = {:e} for gaussian; seed {} ==",
            exp.name,
            exp.dataset,
            records.first().map(|r| r.n).unwrap_or(0),
            exp.delta,
            exp.seed
        );
        print!("{}", format_table(&records));
        let inside = records
            .iter()
            .filter(|r| {
                r.predicted_max_abs
                    .is_some_and(|(lo, hi)| r.error.max_abs >= lo && r.error.max_abs <= hi)
            })
            .count();
        println!(
            "max error inside the predicted 95% range: {inside} of {} runs",
            records.len()
        );
        println!("results: {}\n", path.display());
    }
    Ok(())
}

/// The iterative family (MWEM, IC-MW, DualQuery; seed 003 §7 scaled down); `None`: only
/// the scaling experiments.
fn bench_iterative(quick: Option<bool>, out: &Path) -> Result<()> {
    use dp_bench::experiments::iterative::{
        Scale, format_iterative_table, run_iterative, write_iterative_figures, write_plot_data,
    };
    let (scale, name) = match quick {
        Some(true) => (Scale::Quick, "iterative-quick.jsonl"),
        Some(false) => (Scale::Full, "iterative.jsonl"),
        None => (Scale::Scaling, "iterative-scaling.jsonl"),
    };
    let path = out.join(name);
    let mut file =
        std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut write_error = None;
    let records = run_iterative(scale, |r| {
        eprintln!(
            "  {} {} d={} eps={}: max {:.4}",
            r.experiment, r.method, r.d, r.epsilon, r.max_error
        );
        let line = serde_json::to_string(r).map_err(anyhow::Error::from);
        if let Err(e) = line.and_then(|l| writeln!(file, "{l}").map_err(Into::into)) {
            write_error.get_or_insert(e);
        }
    })?;
    if let Some(e) = write_error {
        return Err(e.context(format!("writing {}", path.display())));
    }
    write_plot_data(&records, out)?;
    let stem = name.trim_end_matches(".jsonl");
    for fig in write_iterative_figures(stem, &records, out)? {
        println!("figure: {}", fig.display());
    }
    println!("== iterative family (Gaboardi et al. 2014, §7, scaled down) ==");
    print!("{}", format_iterative_table(&records));
    println!("results: {}\n", path.display());
    Ok(())
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("+ {cmd:?}");
    let status = cmd.status().with_context(|| format!("running {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

fn ci() -> Result<()> {
    let root = root();
    println!("{}", layers::check(&root)?);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["fmt", "--all", "--check"]))?;
    run(Command::new(&cargo).current_dir(&root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(Command::new(&cargo)
        .current_dir(&root)
        .args(["test", "--workspace"]))?;
    Ok(())
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Cmd::Bench {
            quick,
            out,
            iterative_scaling,
            only,
            rows,
            datasets,
            epsilons,
        } => bench(
            quick,
            out,
            if iterative_scaling {
                Some(Family::IterativeScaling)
            } else {
                only
            },
            &rows,
            &GridFilter { datasets, epsilons },
        ),
        Cmd::RealTable { file } => {
            use dp_bench::experiments::real::{
                RealRecord, format_real_comparison, format_real_table,
            };
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let records = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| {
                    serde_json::from_str::<RealRecord>(l)
                        .with_context(|| format!("{} line {}", file.display(), i + 1))
                })
                .collect::<Result<Vec<_>>>()?;
            print!("{}", format_real_table(&records));
            println!();
            print!("{}", format_real_comparison(&records));
            Ok(())
        }
        Cmd::Figures { out } => {
            let out = out.unwrap_or_else(|| root().join("target").join("dpqr-bench"));
            let projection = dp_bench::experiments::projection::figures_from_results(&out)?;
            let iterative = dp_bench::experiments::iterative::iterative_figures_from_results(&out)?;
            for fig in projection.into_iter().chain(iterative) {
                println!("figure: {}", fig.display());
            }
            Ok(())
        }
        Cmd::Ci => ci(),
        Cmd::Layers => {
            println!("{}", layers::check(&root())?);
            Ok(())
        }
        Cmd::BallistaLoopback { executors, serve } => ballista_loopback(executors, serve),
    }
}

/// `ballista-loopback` (feature `ballista`).
#[cfg(feature = "ballista")]
fn ballista_loopback(executors: u64, serve: bool) -> Result<()> {
    let csv = root().join("data").join("nltcs").join("nltcs.csv");
    let executors = usize::try_from(executors).unwrap_or(1);
    let (cluster, summary) =
        dp_bench::experiments::scale_engines::ballista_loopback("nltcs", &csv, executors)?;
    println!("ballista-loopback: {summary}");
    if serve {
        println!(
            "serving at {} until stopped (Ctrl-C); for example:\n  dpqr release --engine \
             ballista --ballista-url {} --data {} --domain {} --workload all-2way \
             --mechanism gaussian --rho 0.5",
            cluster.url(),
            cluster.url(),
            csv.display(),
            root().join("data/nltcs/nltcs-domain.json").display()
        );
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    Ok(())
}

/// `ballista-loopback` without the feature: say how to get it.
#[cfg(not(feature = "ballista"))]
fn ballista_loopback(_executors: u64, _serve: bool) -> Result<()> {
    bail!(
        "this xtask was built without the cargo feature `ballista`: run `cargo xtask-engines \
         ballista-loopback` (the alias builds xtask with --features ballista)"
    )
}
