//! The local-model bench (issue #14, `cargo xtask bench --only local`): error against the
//! number of clients for the local mechanisms of seed 004 §5 and the baselines a local-DP
//! researcher would use, on nltcs and acs, all 2-way and all 3-way marginals.
//!
//! **Clients.** A run with `n` clients resamples `n` rows of the dataset **with
//! replacement** (seeded ChaCha20), one simulated client per resampled row; the error is
//! measured against the resample's own true answers. acs has 23 binary attributes, whose
//! universe (2²³ records) is above the projection's cap: the bench uses its first 16
//! attributes, the size of nltcs.
//!
//! **Error.** `‖a − q̄‖₂/√m` over the workload's `m` tables (the root-mean-squared error
//! per table of seed 004's average error) and the largest absolute error of a cell.
//!
//! **Rate.** For each mechanism, workload and ε, the slope of `log err` against `log n`
//! (least squares over the grid's n): Theorem 5.1 bounds local projection's error by
//! `O(n^{-1/4})`; the baselines' unbiased estimates have error `Θ(n^{-1/2})`.

use std::time::Instant;

use dp_core::StreamFamily;
use dp_local::protocol::{BaselineKind, run_baseline};
use dp_local::{LocalMechanismKind, LocalProtocol, LocalSettings};
use dp_queries::{Dataset, MarginalWorkload};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::Result;
use crate::io::datasets;

/// A method of the bench: a local mechanism or a baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalMethod {
    /// Local projection, coarse projection or chaining.
    Mechanism(LocalMechanismKind),
    /// A baseline.
    Baseline(BaselineKind),
}

impl LocalMethod {
    /// The name in results.
    pub fn name(self) -> &'static str {
        match self {
            LocalMethod::Mechanism(k) => k.name(),
            LocalMethod::Baseline(b) => b.name(),
        }
    }

    /// Every method: the three local mechanisms, then the five baselines.
    pub fn all() -> Vec<LocalMethod> {
        [
            LocalMechanismKind::Projection,
            LocalMechanismKind::Coarse,
            LocalMechanismKind::Chaining,
        ]
        .into_iter()
        .map(LocalMethod::Mechanism)
        .chain(BaselineKind::all().into_iter().map(LocalMethod::Baseline))
        .collect()
    }
}

/// A grid: one dataset, workloads × ε × n × methods.
#[derive(Clone, Debug)]
pub struct LocalExperiment {
    /// Name of the result file (`<name>.jsonl`).
    pub name: String,
    /// Bundled dataset.
    pub dataset: String,
    /// Keep the first this many attributes (`None`: all).
    pub attributes: Option<usize>,
    /// Workload specs (`all-2way`, `all-3way`).
    pub workloads: Vec<String>,
    /// Local ε values.
    pub epsilons: Vec<f64>,
    /// Numbers of clients.
    pub ns: Vec<usize>,
    /// Methods.
    pub methods: Vec<LocalMethod>,
    /// Seed of the resampling and of the clients.
    pub seed: u64,
}

impl LocalExperiment {
    /// The full grid: nltcs and acs (first 16 attributes), all 2-way and 3-way, ε ∈ {0.5,
    /// 1, 2, 4}, n ∈ {10³, 10⁴, 10⁵, 10⁶}, every method.
    pub fn full() -> Vec<Self> {
        let base = LocalExperiment {
            name: "local-nltcs".into(),
            dataset: "nltcs".into(),
            attributes: None,
            workloads: vec!["all-2way".into(), "all-3way".into()],
            epsilons: vec![0.5, 1.0, 2.0, 4.0],
            ns: vec![1_000, 10_000, 100_000, 1_000_000],
            methods: LocalMethod::all(),
            seed: 0,
        };
        vec![
            base.clone(),
            LocalExperiment {
                name: "local-acs".into(),
                dataset: "acs".into(),
                attributes: Some(16),
                ..base
            },
        ]
    }

    /// A small grid (nltcs, all 2-way, ε = 1, n ∈ {10³, 10⁴, 10⁵}).
    pub fn quick() -> Vec<Self> {
        vec![LocalExperiment {
            name: "local-quick".into(),
            dataset: "nltcs".into(),
            attributes: None,
            workloads: vec!["all-2way".into()],
            epsilons: vec![1.0],
            ns: vec![1_000, 10_000, 100_000],
            methods: LocalMethod::all(),
            seed: 0,
        }]
    }
}

/// One run's result (a JSON line).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LocalRecord {
    /// Dataset.
    pub dataset: String,
    /// Workload spec.
    pub workload: String,
    /// Method name.
    pub method: String,
    /// Local ε.
    pub epsilon: f64,
    /// Clients.
    pub n: usize,
    /// `‖a − q̄‖₂/√m`.
    pub rmse_per_table: f64,
    /// Largest absolute error of a cell.
    pub max_abs: f64,
    /// Seconds for the whole run (clients and server).
    pub seconds: f64,
}

/// `n` rows of `data` drawn with replacement.
pub fn resample(data: &Dataset, n: usize, rng: &mut ChaCha20Rng) -> Result<Dataset> {
    let rows: Vec<usize> = (0..n).map(|_| rng.random_range(0..data.n())).collect();
    let cols = data
        .columns()
        .iter()
        .map(|c| rows.iter().map(|&r| c[r]).collect())
        .collect();
    Ok(Dataset::from_columns(data.domain().clone(), cols)?)
}

/// Runs one experiment, calling `on_record` after every run.
pub fn run_local(
    exp: &LocalExperiment,
    mut on_record: impl FnMut(&LocalRecord),
) -> Result<Vec<LocalRecord>> {
    let mut data = datasets::bundled(&exp.dataset)?.load()?;
    if let Some(k) = exp.attributes {
        let names: Vec<String> = data.domain().names().take(k).map(str::to_string).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        data = data.select_attributes(&names)?;
    }
    let mut out = Vec::new();
    let mut rng = ChaCha20Rng::seed_from_u64(exp.seed);
    for spec in &exp.workloads {
        let workload = MarginalWorkload::parse_spec(data.domain(), spec, 0)?;
        let m = workload.len() as f64;
        for &n in &exp.ns {
            let sample = resample(&data, n, &mut rng)?;
            let truth = workload.answers(&sample)?;
            for &epsilon in &exp.epsilons {
                for &method in &exp.methods {
                    if method == LocalMethod::Baseline(BaselineKind::Fourier)
                        && sample.domain().sizes().iter().any(|&s| s != 2)
                    {
                        continue;
                    }
                    let family = StreamFamily::fork(&mut rng);
                    let t = Instant::now();
                    let release = match method {
                        LocalMethod::Mechanism(kind) => {
                            LocalProtocol::new(kind, epsilon, LocalSettings::default())?
                                .run(&sample, &workload, &family)?
                        }
                        LocalMethod::Baseline(b) => {
                            run_baseline(b, epsilon, &sample, &workload, &family)?
                        }
                    };
                    let seconds = t.elapsed().as_secs_f64();
                    let (sq, max) = release
                        .answers
                        .iter()
                        .zip(&truth)
                        .fold((0.0f64, 0.0f64), |(s, mx), (a, b)| {
                            (s + (a - b) * (a - b), mx.max((a - b).abs()))
                        });
                    let r = LocalRecord {
                        dataset: exp.dataset.clone(),
                        workload: spec.clone(),
                        method: method.name().to_string(),
                        epsilon,
                        n,
                        rmse_per_table: (sq / m).sqrt(),
                        max_abs: max,
                        seconds,
                    };
                    on_record(&r);
                    out.push(r);
                }
            }
        }
    }
    Ok(out)
}

/// The least-squares slope of `log err` against `log n` for every (workload, method, ε).
pub fn rates(records: &[LocalRecord]) -> Vec<(String, String, f64, f64)> {
    let mut keys: Vec<(String, String, u64)> = records
        .iter()
        .map(|r| (r.workload.clone(), r.method.clone(), r.epsilon.to_bits()))
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|(w, m, e)| {
            let pts: Vec<(f64, f64)> = records
                .iter()
                .filter(|r| r.workload == w && r.method == m && r.epsilon.to_bits() == e)
                .map(|r| ((r.n as f64).ln(), r.rmse_per_table.max(1e-300).ln()))
                .collect();
            if pts.len() < 2 {
                return None;
            }
            let k = pts.len() as f64;
            let (mx, my) = pts
                .iter()
                .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / k, b + y / k));
            let (sxy, sxx) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
                (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
            });
            Some((w, m, f64::from_bits(e), sxy / sxx))
        })
        .collect()
}

/// A Markdown table: per workload and ε, the error of every method at every n, and its
/// fitted rate.
pub fn format_local_table(records: &[LocalRecord]) -> String {
    let mut s = String::new();
    let rates = rates(records);
    let mut ns: Vec<usize> = records.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    let mut groups: Vec<(String, u64)> = rates
        .iter()
        .map(|(w, _, e, _)| (w.clone(), e.to_bits()))
        .collect();
    groups.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(f64::from_bits(a.1).total_cmp(&f64::from_bits(b.1)))
    });
    groups.dedup();
    for (w, e) in groups {
        let e = f64::from_bits(e);
        s.push_str(&format!("\n### {w}, ε = {e}\n\n| method |"));
        for n in &ns {
            s.push_str(&format!(" n = {n} |"));
        }
        s.push_str(" slope of log err vs log n |\n|---|");
        for _ in &ns {
            s.push_str("---|");
        }
        s.push_str("---|\n");
        for (_, m, _, slope) in rates.iter().filter(|(w2, _, e2, _)| *w2 == w && *e2 == e) {
            s.push_str(&format!("| {m} |"));
            for n in &ns {
                match records
                    .iter()
                    .find(|r| r.workload == w && &r.method == m && r.epsilon == e && r.n == *n)
                {
                    Some(r) => s.push_str(&format!(" {:.4} |", r.rmse_per_table)),
                    None => s.push_str(" – |"),
                }
            }
            s.push_str(&format!(" {slope:.2} |\n"));
        }
    }
    s
}

/// The records of a result file written by [`run_and_report`].
pub fn read_records(path: &std::path::Path) -> Result<Vec<LocalRecord>> {
    let text = std::fs::read_to_string(path).map_err(crate::io_error(path))?;
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| crate::BenchError::InputFile {
                file: path.display().to_string(),
                line: Some(i as u64 + 1),
                message: e.to_string(),
            })
        })
        .collect()
}

/// Runs `experiments`, writes `<name>.jsonl` per experiment into `out` and prints the
/// tables.
pub fn run_and_report(experiments: &[LocalExperiment], out: &std::path::Path) -> Result<()> {
    use std::io::Write;
    for exp in experiments {
        let path = out.join(format!("{}.jsonl", exp.name));
        let mut file = std::fs::File::create(&path).map_err(crate::io_error(&path))?;
        let mut write_error = None;
        let start = Instant::now();
        let records = run_local(exp, |r| {
            if let Ok(line) = serde_json::to_string(r)
                && let Err(e) = writeln!(file, "{line}")
            {
                write_error.get_or_insert(e);
            }
        })?;
        if let Some(e) = write_error {
            return Err(crate::io_error(&path)(e));
        }
        println!(
            "== {} on {}: root-mean-squared error per table, {:.1} s ==",
            exp.name,
            exp.dataset,
            start.elapsed().as_secs_f64()
        );
        println!("{}", format_local_table(&records));
    }
    Ok(())
}
