//! The real-tables grid (issue #10): mechanisms that need no enumerable universe, on the
//! bundled adult, temporal-match2 and acs tables, against the Gaussian baseline and beside
//! the peers' published numbers (docs/benchmarks.md).
//!
//! Every run reports the normalised-table metrics of the issue (avgL1 = mean over the
//! workload's tables of the table's ℓ1 error, max = largest cell error, RMSE), the wall time
//! and the peak resident memory of the release (Linux: `VmHWM` after resetting it through
//! `/proc/self/clear_refs`; `None` elsewhere). Benchmarks measure; nothing here asserts.

use std::path::PathBuf;
use std::time::Instant;

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::{Mechanism, PostProcessing};
use dp_queries::{Dataset, ErrorReport, MarginalWorkload};
use serde::{Deserialize, Serialize};

use crate::Result;
use crate::io::datasets::bundled;
use crate::registry::build_mechanism;

/// A workload of the grid: a benchmark JSON file of `data/workloads/` or a spec for
/// [`MarginalWorkload::parse_spec`] (with its seed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RealWorkload {
    /// `data/workloads/NAME`.
    File(String),
    /// A spec such as `random-3way:64`, drawn with this seed.
    Spec(String, u64),
}

impl RealWorkload {
    fn name(&self) -> String {
        match self {
            RealWorkload::File(f) => f.trim_end_matches(".json").to_string(),
            RealWorkload::Spec(s, seed) => format!("{s} (seed {seed})"),
        }
    }

    /// The workload named on a command line (the examples `adaptive_diag` and
    /// `adaptive_compress`): a file of `data/workloads/` when `arg` ends in `.json`, else a
    /// spec drawn with `seed`.
    pub fn from_arg(arg: &str, seed: u64) -> Self {
        if arg.ends_with(".json") {
            RealWorkload::File(arg.to_string())
        } else {
            RealWorkload::Spec(arg.to_string(), seed)
        }
    }

    /// The workload on `data`'s domain. Errors: a missing or malformed file, a bad spec or
    /// one that does not fit the domain.
    pub fn load(&self, data: &Dataset) -> Result<MarginalWorkload> {
        Ok(match self {
            RealWorkload::File(f) => {
                let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../data/workloads")
                    .join(f);
                MarginalWorkload::from_json_file(data.domain(), &path)?
            }
            RealWorkload::Spec(s, seed) => MarginalWorkload::parse_spec(data.domain(), s, *seed)?,
        })
    }
}

/// The inputs the experiment examples share (`adaptive_diag`, `adaptive_compress`).
#[derive(Clone, Debug)]
pub struct ExampleInputs {
    /// The bundled table named by `DATASET` (default adult).
    pub data: Dataset,
    /// The workload named by the first argument (default `adult_w64.json`; a spec is drawn
    /// with the workload seed `WSEED`, default 1).
    pub workload: MarginalWorkload,
    /// ε of the (ε, 10⁻⁹) budget: the second argument (default 1).
    pub epsilon: f64,
    /// The release's seed: the third argument (default 1).
    pub seed: u64,
    /// The arguments after the third, for the example.
    pub rest: Vec<String>,
}

impl ExampleInputs {
    /// From this process's command line `[WORKLOAD] [EPSILON] [SEED] [REST…]` and the
    /// environment (`DATASET`, `WSEED`). Errors: a malformed number
    /// ([`crate::BenchError::Usage`]), an unknown table, a workload that does not load
    /// ([`RealWorkload::load`]).
    pub fn from_command_line() -> Result<Self> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        Self::from_parts(
            &args,
            std::env::var("DATASET").ok(),
            std::env::var("WSEED").ok(),
        )
    }

    /// [`Self::from_command_line`] with the arguments (without the program name) and the
    /// environment's `DATASET` and `WSEED` given.
    fn from_parts(args: &[String], dataset: Option<String>, wseed: Option<String>) -> Result<Self> {
        fn parse<T: std::str::FromStr>(what: &str, v: Option<String>, default: T) -> Result<T> {
            match v {
                None => Ok(default),
                Some(v) => v
                    .parse()
                    .map_err(|_| crate::BenchError::Usage(format!("{what}: not a number: {v}"))),
            }
        }
        let epsilon = parse("EPSILON", args.get(1).cloned(), 1.0)?;
        let seed = parse("SEED", args.get(2).cloned(), 1u64)?;
        let wseed = parse("WSEED", wseed, 1u64)?;
        let dataset = dataset.unwrap_or_else(|| "adult".into());
        let data = bundled(&dataset)?.load()?;
        let name = args.first().map_or("adult_w64.json", |s| s.as_str());
        let workload = RealWorkload::from_arg(name, wseed).load(&data)?;
        Ok(ExampleInputs {
            data,
            workload,
            epsilon,
            seed,
            rest: args.iter().skip(3).cloned().collect(),
        })
    }
}

/// One configuration of the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RealConfig {
    /// Bundled dataset.
    pub dataset: String,
    /// Workload.
    pub workload: RealWorkload,
    /// Registry name of the mechanism.
    pub mechanism: String,
    /// Simplex post-processing (the Gaussian baseline's `--post simplex`).
    pub simplex: bool,
    /// Neighbouring relation.
    pub neighbouring: Neighbouring,
    /// ε of the (ε, δ) budget.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// Seed of the mechanism's randomness.
    pub seed: u64,
}

/// The result of one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RealRecord {
    /// The configuration.
    pub config: RealConfig,
    /// The workload's name.
    pub workload_name: String,
    /// Error of the released answers against the truth (normalised tables).
    pub error: ErrorReport,
    /// Wall time of the release in seconds.
    pub seconds: f64,
    /// Peak resident memory during the release (MiB), where measurable.
    pub peak_mib: Option<f64>,
    /// The release's diagnostic notes.
    pub notes: Vec<String>,
}

/// The grid's scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RealScale {
    /// One small configuration per mechanism (CI).
    Quick,
    /// The issues' grid: adult W64 and all2 at ε ∈ {0.1, 1, 10}, both relations, 3 seeds;
    /// the implicit projection at ε = 1; temporal-match2, acs, nltcs and titanic with 64
    /// random 3-way tables (workload seeds 1 and 2) and all 2-way at ε ∈ {0.1, 1, 10}, both
    /// relations, 3 seeds (issue #24).
    Full,
    /// The full grid as the peer bench runs it (`benches/peers/`, issue #24): add/remove only
    /// (smartnoise's AIM and MST have no replace-one), workload seed 1, every bundled table,
    /// without the implicit projection; the smallest tables first.
    Peers,
}

/// The configurations of a scale.
pub fn real_grid(scale: RealScale) -> Vec<RealConfig> {
    let mut v = Vec::new();
    let cfg = |dataset: &str,
               workload: RealWorkload,
               mechanism: &str,
               simplex: bool,
               neighbouring,
               epsilon,
               seed| RealConfig {
        dataset: dataset.into(),
        workload,
        mechanism: mechanism.into(),
        simplex,
        neighbouring,
        epsilon,
        delta: 1e-9,
        seed,
    };
    let both = [Neighbouring::AddRemove, Neighbouring::ReplaceOne];
    // the Gaussian baseline (with simplex post-processing) beside adaptive-projection
    let pair = |dataset: &str, w: &RealWorkload, rel, eps, seed| {
        [
            cfg(dataset, w.clone(), "gaussian", true, rel, eps, seed),
            cfg(
                dataset,
                w.clone(),
                "adaptive-projection",
                false,
                rel,
                eps,
                seed,
            ),
        ]
    };
    match scale {
        RealScale::Quick => {
            let w = RealWorkload::Spec("random-2way:8".into(), 1);
            for rel in both {
                v.extend(pair("adult", &w, rel, 1.0, 1));
            }
        }
        RealScale::Peers => {
            v = real_grid(RealScale::Full)
                .into_iter()
                .filter(|c| {
                    c.neighbouring == Neighbouring::AddRemove
                        && c.mechanism != "projection"
                        && !matches!(c.workload, RealWorkload::Spec(_, 2))
                })
                .collect();
            // the smallest tables first, so that a run cut short still covers most tables
            let order = ["titanic", "nltcs", "acs", "adult", "temporal-match2"];
            v.sort_by_key(|c| order.iter().position(|d| *d == c.dataset));
        }
        RealScale::Full => {
            for file in ["adult_w64.json", "adult_all2.json"] {
                let w = RealWorkload::File(file.into());
                for eps in [0.1, 1.0, 10.0] {
                    for rel in both {
                        for seed in 1..=3 {
                            v.extend(pair("adult", &w, rel, eps, seed));
                        }
                    }
                }
                v.push(cfg(
                    "adult",
                    w.clone(),
                    "projection",
                    false,
                    Neighbouring::ReplaceOne,
                    1.0,
                    1,
                ));
            }
            // issue #24: every other bundled table, 64 random 3-way tables (two workload
            // seeds) and all 2-way, ε ∈ {0.1, 1, 10}, both relations, three seeds
            for dataset in ["temporal-match2", "acs", "nltcs", "titanic"] {
                let workloads = [
                    RealWorkload::Spec("random-3way:64".into(), 1),
                    RealWorkload::Spec("random-3way:64".into(), 2),
                    RealWorkload::Spec("all-2way".into(), 1),
                ];
                for w in workloads {
                    for eps in [0.1, 1.0, 10.0] {
                        for rel in both {
                            for seed in 1..=3 {
                                v.extend(pair(dataset, &w, rel, eps, seed));
                            }
                        }
                    }
                }
            }
        }
    }
    v
}

/// Reset the process's peak-RSS counter (Linux `clear_refs` 5); false where unsupported.
pub(crate) fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak RSS since the last reset, in MiB (Linux `VmHWM`).
pub(crate) fn peak_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Run one configuration.
pub fn run_real_config(config: &RealConfig) -> Result<RealRecord> {
    let data = bundled(&config.dataset)?.load()?;
    let workload = config.workload.load(&data)?;
    let truth = workload.answers(&data)?;
    let budget = PrivacyLoss::approx(config.epsilon, config.delta)?;
    let post = if config.simplex {
        PostProcessing::SimplexProjection
    } else {
        PostProcessing::None
    };
    let mech: Box<dyn Mechanism> =
        build_mechanism(&config.mechanism, budget, config.neighbouring, post)?;
    let mut rng = dp_core::seeded_rng(config.seed);
    let measurable = reset_peak();
    let t = Instant::now();
    let release = mech.release(&data, &workload, &mut rng)?;
    let seconds = t.elapsed().as_secs_f64();
    let peak = if measurable { peak_mib() } else { None };
    Ok(RealRecord {
        config: config.clone(),
        workload_name: config.workload.name(),
        error: ErrorReport::compute(&workload, &release.answers, &truth)?,
        seconds,
        peak_mib: peak,
        notes: release.diagnostics.notes,
    })
}

/// Run every configuration, calling `each` after each run.
pub fn run_real(
    configs: &[RealConfig],
    mut each: impl FnMut(&RealRecord),
) -> Result<Vec<RealRecord>> {
    let mut out = Vec::with_capacity(configs.len());
    for c in configs {
        let r = run_real_config(c)?;
        each(&r);
        out.push(r);
    }
    Ok(out)
}

/// One row per (dataset, workload, mechanism, relation, ε): mean (and spread over seeds) of
/// avgL1, mean max and RMSE, mean seconds, largest peak memory.
pub fn format_real_table(records: &[RealRecord]) -> String {
    let mut keys: Vec<(String, String, String, String, f64)> = Vec::new();
    for r in records {
        let k = key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut s = String::from(
        "| dataset | workload | mechanism | neighbours | ε | seeds | avgL1 (mean ± sd) | max | RMSE | seconds | peak MiB |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for k in keys {
        let rs: Vec<&RealRecord> = records.iter().filter(|r| key(r) == k).collect();
        let m = rs.len() as f64;
        let mean = |f: &dyn Fn(&RealRecord) -> f64| rs.iter().map(|r| f(r)).sum::<f64>() / m;
        let l1 = mean(&|r| r.error.mean_marginal_l1);
        let sd = (rs
            .iter()
            .map(|r| (r.error.mean_marginal_l1 - l1).powi(2))
            .sum::<f64>()
            / (m - 1.0).max(1.0))
        .sqrt();
        let peak = rs
            .iter()
            .filter_map(|r| r.peak_mib)
            .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} ± {} | {} | {:.2e} | {:.1} | {} |\n",
            k.0,
            k.1,
            k.2,
            k.3,
            k.4,
            rs.len(),
            significant(l1),
            significant(sd),
            significant(mean(&|r| r.error.max_abs)),
            mean(&|r| r.error.rmse),
            mean(&|r| r.seconds),
            peak.map_or("–".into(), |p| format!("{p:.0}")),
        ));
    }
    s
}

/// adaptive-projection beside the Gaussian baseline (simplex post-processed), one row per
/// (dataset, workload, relation, ε) that has both: mean avgL1 (± sd over seeds), mean max and
/// mean seconds of each, and whether adaptive-projection is ahead in avgL1 and at or below
/// the baseline's max on **every** seed (the targets of issue #24). Rows in the records'
/// order.
pub fn format_real_comparison(records: &[RealRecord]) -> String {
    type Row = (String, String, String, f64);
    let row = |r: &RealRecord| -> Row {
        (
            r.config.dataset.clone(),
            r.workload_name.clone(),
            r.config.neighbouring.to_string(),
            r.config.epsilon,
        )
    };
    let mut rows: Vec<Row> = Vec::new();
    for r in records {
        if !rows.contains(&row(r)) {
            rows.push(row(r));
        }
    }
    let mut s = String::from(
        "| dataset | workload | neighbours | ε | seeds | adaptive avgL1 (± sd) / max / s | Gaussian+simplex avgL1 / max | avgL1 ahead, every seed | max ≤ baseline's, every seed |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for k in rows {
        let of = |adaptive: bool| -> Vec<&RealRecord> {
            let mut v: Vec<&RealRecord> = records
                .iter()
                .filter(|r| row(r) == k)
                .filter(|r| {
                    if adaptive {
                        r.config.mechanism == "adaptive-projection"
                    } else {
                        r.config.mechanism == "gaussian" && r.config.simplex
                    }
                })
                .collect();
            v.sort_by_key(|r| r.config.seed);
            v
        };
        let (a, g) = (of(true), of(false));
        // pairs by seed: the same seed of both
        let pairs: Vec<(&RealRecord, &RealRecord)> = a
            .iter()
            .filter_map(|x| {
                g.iter()
                    .find(|y| y.config.seed == x.config.seed)
                    .map(|y| (*x, *y))
            })
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let m = pairs.len() as f64;
        let mean =
            |f: &dyn Fn(&(&RealRecord, &RealRecord)) -> f64| pairs.iter().map(f).sum::<f64>() / m;
        let l1 = mean(&|p| p.0.error.mean_marginal_l1);
        let sd = (pairs
            .iter()
            .map(|p| (p.0.error.mean_marginal_l1 - l1).powi(2))
            .sum::<f64>()
            / (m - 1.0).max(1.0))
        .sqrt();
        let every = |f: &dyn Fn(&(&RealRecord, &RealRecord)) -> bool| {
            if pairs.iter().all(f) { "yes" } else { "**no**" }
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} ± {} / {} / {:.1} | {} / {} | {} | {} |\n",
            k.0,
            k.1,
            k.2,
            k.3,
            pairs.len(),
            significant(l1),
            significant(sd),
            significant(mean(&|p| p.0.error.max_abs)),
            mean(&|p| p.0.seconds),
            significant(mean(&|p| p.1.error.mean_marginal_l1)),
            significant(mean(&|p| p.1.error.max_abs)),
            every(&|p| p.0.error.mean_marginal_l1 < p.1.error.mean_marginal_l1),
            every(&|p| p.0.error.max_abs <= p.1.error.max_abs),
        ));
    }
    s
}

/// `x` with three significant digits and at least four decimals (errors of 10⁻⁴ on large
/// tables stay readable beside errors near 1).
fn significant(x: f64) -> String {
    let decimals = if x > 0.0 && x.is_finite() {
        (2 - x.log10().floor() as i64).clamp(4, 12) as usize
    } else {
        4
    };
    format!("{x:.decimals$}")
}

fn key(r: &RealRecord) -> (String, String, String, String, f64) {
    let mech = if r.config.simplex {
        format!("{}+simplex", r.config.mechanism)
    } else {
        r.config.mechanism.clone()
    };
    (
        r.config.dataset.clone(),
        r.workload_name.clone(),
        mech,
        r.config.neighbouring.to_string(),
        r.config.epsilon,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples' command line: a file name or a spec, ε, seed and the rest; a malformed
    /// number is a usage error, not a panic; `DATASET` picks the table.
    #[test]
    fn example_inputs_from_the_command_line() {
        let args: Vec<String> = ["adult_w64.json", "2", "7", "every"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let inp = ExampleInputs::from_parts(&args, None, None).unwrap();
        assert_eq!(inp.workload.len(), 64);
        assert_eq!((inp.epsilon, inp.seed), (2.0, 7));
        assert_eq!(inp.rest, vec!["every".to_string()]);
        assert_eq!(inp.data.n(), bundled("adult").unwrap().load().unwrap().n());
        let spec =
            ExampleInputs::from_parts(&["all-2way".to_string()], Some("titanic".into()), None)
                .unwrap();
        assert_eq!(
            spec.data.n(),
            bundled("titanic").unwrap().load().unwrap().n()
        );
        let d = spec.data.domain().len();
        assert_eq!(spec.workload.len(), d * (d - 1) / 2);
        assert_eq!((spec.epsilon, spec.seed), (1.0, 1));
        let bad =
            ExampleInputs::from_parts(&["all-2way".to_string(), "one".to_string()], None, None);
        assert!(matches!(bad, Err(crate::BenchError::Usage(_))), "{bad:?}");
    }
}
