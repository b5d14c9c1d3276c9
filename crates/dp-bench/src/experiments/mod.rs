//! Experiment definitions and the runner behind `cargo xtask bench`.
//!
//! An experiment is a grid: dataset × workload × mechanism × ε, each cell repeated with
//! seeded randomness. Each run yields one [`ResultRecord`], written as a JSON line.

pub mod iterative;
pub mod local;
#[cfg(feature = "plots")]
pub mod plots;
pub mod polynomial;
pub mod projection;
pub mod real;
pub mod relaxed;
pub mod scale;
#[cfg(feature = "datafusion")]
pub mod scale_engines;

use crate::Result;
use crate::catalogue::{self, BudgetKind};
use crate::io::datasets;
use crate::registry::{BudgetArgs, build_mechanism};
use dp_core::{Neighbouring, PrivacyLoss, stream_rng};
use dp_mechanisms::PostProcessing;
use dp_queries::{ErrorReport, MarginalWorkload};
use serde::{Deserialize, Serialize};

/// A grid of baseline runs on one bundled dataset.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BaselineExperiment {
    /// Experiment name, used for the output file (`<name>.jsonl`).
    pub name: String,
    /// Bundled dataset name.
    pub dataset: String,
    /// Workload specs (`all-2way`, `random-3way:64`, …).
    pub workloads: Vec<String>,
    /// Seed for random workloads.
    pub workload_seed: u64,
    /// ε values.
    pub epsilons: Vec<f64>,
    /// δ for the (ε, δ) mechanisms (the pure-ε mechanisms ignore it).
    pub delta: f64,
    /// Mechanism names.
    pub mechanisms: Vec<String>,
    /// Repetitions of each grid cell.
    pub repeats: u64,
    /// Base seed of the mechanisms' randomness.
    pub seed: u64,
}

impl BaselineExperiment {
    /// The `--quick` grid of the foundation issue: adult, all-2way and random-3way:64
    /// (seed 0), ε ∈ {0.1, 1, 10}, δ = 1e-9, Gaussian and Laplace, one run each.
    pub fn quick() -> Self {
        BaselineExperiment {
            name: "baselines-quick".into(),
            dataset: "adult".into(),
            workloads: vec!["all-2way".into(), "random-3way:64".into()],
            workload_seed: 0,
            epsilons: vec![0.1, 1.0, 10.0],
            delta: 1e-9,
            mechanisms: vec!["gaussian".into(), "laplace".into()],
            repeats: 1,
            seed: 0,
        }
    }

    /// The full grid: both bundled datasets, 2- and 3-way workloads, more ε, 5 repeats.
    pub fn full() -> Vec<Self> {
        let eps = vec![0.05, 0.1, 0.5, 1.0, 2.0, 10.0];
        vec![
            BaselineExperiment {
                name: "baselines-adult".into(),
                dataset: "adult".into(),
                workloads: vec![
                    "all-2way".into(),
                    "random-3way:64".into(),
                    "all-3way".into(),
                ],
                epsilons: eps.clone(),
                repeats: 5,
                ..Self::quick()
            },
            BaselineExperiment {
                name: "baselines-nltcs".into(),
                dataset: "nltcs".into(),
                workloads: vec!["all-2way".into(), "all-3way".into()],
                epsilons: eps,
                repeats: 5,
                ..Self::quick()
            },
        ]
    }

    /// Number of runs in the grid.
    pub fn num_runs(&self) -> u64 {
        (self.workloads.len() * self.epsilons.len() * self.mechanisms.len()) as u64 * self.repeats
    }
}

/// One run's result: what ran, what it guaranteed, how accurate and how fast it was.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultRecord {
    /// Experiment name.
    pub experiment: String,
    /// Dataset name and size.
    pub dataset: String,
    /// Number of records.
    pub n: usize,
    /// Workload spec.
    pub workload: String,
    /// Number of marginal tables.
    pub marginals: usize,
    /// Number of counting queries (cells).
    pub queries: usize,
    /// Mechanism name.
    pub mechanism: String,
    /// Target ε.
    pub epsilon: f64,
    /// Target δ (0 for pure mechanisms).
    pub delta: f64,
    /// The exact guarantee spent, as stated by the release's certificate.
    pub guarantee: String,
    /// Repetition index and the seed stream used.
    pub repeat: u64,
    /// Base seed.
    pub seed: u64,
    /// Error of the normalised answers.
    pub error: ErrorReport,
    /// Exact standard deviation of one answer's noise.
    pub answer_std: Option<f64>,
    /// The central 95% range of the max absolute error predicted by the noise distribution
    /// (2.5% and 97.5% quantiles of the maximum of `queries` independent draws, / n).
    pub predicted_max_abs: Option<(f64, f64)>,
    /// Wall-clock seconds of the release (counting, noise, post-processing).
    pub seconds: f64,
}

/// Run every cell of `exp`, calling `on_record` after each run (for progress and
/// streaming output).
pub fn run_baselines(
    exp: &BaselineExperiment,
    mut on_record: impl FnMut(&ResultRecord),
) -> Result<Vec<ResultRecord>> {
    let data = datasets::bundled(&exp.dataset)?.load()?;
    let mut records = Vec::new();
    let mut stream = 0u64;
    for spec in &exp.workloads {
        let workload = MarginalWorkload::parse_spec(data.domain(), spec, exp.workload_seed)?;
        let truth = workload.answers(&data)?;
        for mech_name in &exp.mechanisms {
            for &epsilon in &exp.epsilons {
                // (ε, δ) where the mechanism takes it, pure ε otherwise (Laplace)
                let args = if catalogue::spec(mech_name)?.accepts(BudgetKind::Approx) {
                    BudgetArgs {
                        epsilon: Some(epsilon),
                        delta: Some(exp.delta),
                        rho: None,
                    }
                } else {
                    BudgetArgs {
                        epsilon: Some(epsilon),
                        ..Default::default()
                    }
                };
                let budget = args.to_loss(mech_name)?;
                let mech = build_mechanism(
                    mech_name,
                    budget,
                    Neighbouring::ReplaceOne,
                    PostProcessing::None,
                )?;
                for repeat in 0..exp.repeats {
                    let mut rng = stream_rng(exp.seed, stream);
                    stream += 1;
                    // timed here: a release publishes no timings (Diagnostics docs)
                    let start = std::time::Instant::now();
                    let release = mech.release(&data, &workload, &mut rng)?;
                    let seconds = start.elapsed().as_secs_f64();
                    let error = ErrorReport::compute(&workload, &release.answers, &truth)?;
                    let noise = release.diagnostics.noise;
                    let predicted = noise.map(|nd| {
                        let model = nd.model();
                        let q = workload.num_queries();
                        let n = data.n() as f64;
                        (
                            model.max_abs_quantile(q, 0.025) as f64 / n,
                            model.max_abs_quantile(q, 0.975) as f64 / n,
                        )
                    });
                    let delta = match budget {
                        PrivacyLoss::Approx { delta, .. } => delta,
                        _ => 0.0,
                    };
                    let record = ResultRecord {
                        experiment: exp.name.clone(),
                        dataset: exp.dataset.clone(),
                        n: data.n(),
                        workload: spec.clone(),
                        marginals: workload.len(),
                        queries: workload.num_queries(),
                        mechanism: mech_name.clone(),
                        epsilon,
                        delta,
                        guarantee: release.certificate.statement(),
                        repeat,
                        seed: exp.seed,
                        error,
                        answer_std: noise.map(|n| n.answer_std),
                        predicted_max_abs: predicted,
                        seconds,
                    };
                    on_record(&record);
                    records.push(record);
                }
            }
        }
    }
    Ok(records)
}

/// A fixed-width text table of records: mechanism, workload, ε, errors, prediction, seconds.
pub fn format_table(records: &[ResultRecord]) -> String {
    let mut s = format!(
        "{:<9} {:<15} {:>6} {:>10} {:>10} {:>10} {:>23} {:>8}\n",
        "mechanism",
        "workload",
        "eps",
        "max_err",
        "mean_err",
        "rmse",
        "predicted max (95%)",
        "seconds"
    );
    for r in records {
        let pred = match r.predicted_max_abs {
            Some((lo, hi)) => format!("[{lo:.3e}, {hi:.3e}]"),
            None => "-".into(),
        };
        s.push_str(&format!(
            "{:<9} {:<15} {:>6} {:>10.3e} {:>10.3e} {:>10.3e} {:>23} {:>8.3}\n",
            r.mechanism,
            r.workload,
            r.epsilon,
            r.error.max_abs,
            r.error.mean_abs,
            r.error.rmse,
            pred,
            r.seconds
        ));
    }
    s
}
