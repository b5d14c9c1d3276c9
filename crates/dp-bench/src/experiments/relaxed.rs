//! The relaxed family (seed 000: Dwork, Nikolov and Talwar 2015) in `cargo xtask bench
//! --only relaxed`: the Gaussian baseline with per-table simplex post-processing, the relaxed
//! projection and Boosting for Queries (Dwork, Rothblum and Vadhan 2010) on the bundled
//! binary datasets, all 2-way and all 3-way marginals, ε ∈ {0.1, 0.5, 1} with δ = 1e-9
//! converted to ρ-zCDP, replace-one neighbours.
//!
//! Datasets: nltcs (16 binary attributes) for 2- and 3-way and acs (23 binary attributes) for
//! 2-way. Both mechanisms need binary attributes; adult one-hot (d = 588) gives a relaxation
//! far beyond the size cap for 3-way and minutes per 2-way release in a debug build on 2 shared
//! cores, so it is left out of the bench (docs/benchmarks.md).

use std::time::Instant;

use dp_core::{PrivacyLoss, seeded_rng};
use dp_geometry::{LinearOracle, Parallelism};
use dp_mechanisms::relaxed::ParityBody;
use dp_mechanisms::{
    BoostingParams, BoostingSettings, GaussianParams, Mechanism, MechanismError, PostProcessing,
    RelaxedProjectionParams, RelaxedSettings,
};
use dp_queries::{ErrorReport, MarginalParityTransform, MarginalWorkload};
use serde::{Deserialize, Serialize};

use crate::Result;
use crate::io::datasets;

/// One cell of the grid.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RelaxedRecord {
    /// Bundled dataset.
    pub dataset: String,
    /// Marginal width k (all k-way tables).
    pub k: usize,
    /// ε (with δ = [`DELTA`], converted to ρ).
    pub epsilon: f64,
    /// Mechanism label.
    pub mechanism: String,
    /// Largest absolute error over all cells (normalised answers).
    pub max_error: f64,
    /// Mean absolute error over all cells.
    pub mean_error: f64,
    /// Mean ℓ1 distance per table.
    pub mean_table_l1: f64,
    /// Wall seconds of the release.
    pub seconds: f64,
    /// Frank–Wolfe steps (summed over boosting's rounds), if any.
    pub fw_iterations: Option<usize>,
    /// Seconds of one Grothendieck oracle call on this workload's relaxation (a random
    /// direction), for the projection mechanisms.
    pub oracle_seconds: Option<f64>,
}

/// Dimension of the JL-compressed synopsis in the grid's second boosting row.
pub const JL_DIMENSION: usize = 64;

/// δ of every (ε, δ) budget of the grid.
pub const DELTA: f64 = 1e-9;

/// The grid: (dataset, k) pairs and the ε values.
pub fn grid() -> (Vec<(&'static str, usize)>, Vec<f64>) {
    (
        vec![("nltcs", 2), ("nltcs", 3), ("acs", 2)],
        vec![0.1, 0.5, 1.0],
    )
}

/// Runs one (dataset, k) block over `epsilons`, calling `each` per record; seed 1 for every
/// mechanism.
pub fn run_block(
    dataset: &str,
    k: usize,
    epsilons: &[f64],
    mut each: impl FnMut(&RelaxedRecord),
) -> Result<Vec<RelaxedRecord>> {
    let data = datasets::bundled(dataset)?.load()?;
    let workload = MarginalWorkload::all_kway(data.domain(), k)?;
    let truth = workload.answers(&data)?;
    // one oracle call on a fixed direction, for the oracle-time column
    let transform = MarginalParityTransform::new(&workload)?;
    let body = ParityBody::new(
        transform.parities(),
        RelaxedSettings::default().oracle.clone(),
    )
    .map_err(MechanismError::from)?;
    let direction: Vec<f64> = (0..body.dim())
        .map(|j| ((j * 7919) % 13) as f64 - 6.0)
        .collect();
    let start = Instant::now();
    body.linear_max(&direction, Parallelism::None)
        .map_err(MechanismError::from)?;
    let oracle_seconds = start.elapsed().as_secs_f64();
    let mut out = Vec::new();
    for &epsilon in epsilons {
        let budget = PrivacyLoss::Approx {
            epsilon,
            delta: DELTA,
        };
        let simplex = GaussianParams::new(budget)
            .post_processing(PostProcessing::SimplexProjection)
            .check()?;
        let relaxed = RelaxedProjectionParams::new(budget).check()?;
        let boosting = BoostingParams::new(budget).check()?;
        let boosting_jl = BoostingParams::new(budget)
            .settings(BoostingSettings {
                jl_dimension: JL_DIMENSION,
                ..BoostingSettings::default()
            })
            .check()?;
        let jl_label = format!("boosting, JL synopsis D = {JL_DIMENSION}");
        let mechanisms: [(&str, &dyn Mechanism, bool); 4] = [
            ("gaussian + simplex per table", &simplex, false),
            ("relaxed-projection", &relaxed, true),
            ("boosting", &boosting, true),
            (&jl_label, &boosting_jl, true),
        ];
        for (name, mech, projects) in mechanisms {
            let start = Instant::now();
            let release = mech.release(&data, &workload, &mut seeded_rng(1))?;
            let seconds = start.elapsed().as_secs_f64();
            let report = ErrorReport::compute(&workload, &release.answers, &truth)?;
            let record = RelaxedRecord {
                dataset: dataset.to_string(),
                k,
                epsilon,
                mechanism: name.to_string(),
                max_error: report.max_abs,
                mean_error: report.mean_abs,
                mean_table_l1: report.mean_marginal_l1,
                seconds,
                fw_iterations: release.diagnostics.iterations,
                oracle_seconds: projects.then_some(oracle_seconds),
            };
            each(&record);
            out.push(record);
        }
    }
    Ok(out)
}

/// A Markdown table of `records`.
pub fn format_table(records: &[RelaxedRecord]) -> String {
    let mut s = String::from(
        "| dataset | k | ε | mechanism | max error | mean error | mean L1 per table | seconds \
         | FW steps | oracle s/call |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in records {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.5} | {:.5} | {:.5} | {:.2} | {} | {} |\n",
            r.dataset,
            r.k,
            r.epsilon,
            r.mechanism,
            r.max_error,
            r.mean_error,
            r.mean_table_l1,
            r.seconds,
            r.fw_iterations.map_or("–".to_string(), |i| i.to_string()),
            r.oracle_seconds
                .map_or("–".to_string(), |t| format!("{t:.4}")),
        ));
    }
    s
}

/// Runs the whole grid, writes `relaxed.jsonl` in `out` and prints the table.
pub fn run_and_report(out: &std::path::Path) -> Result<()> {
    use std::io::Write;
    let path = out.join("relaxed.jsonl");
    let mut file = std::fs::File::create(&path).map_err(crate::io_error(&path))?;
    let (blocks, epsilons) = grid();
    let mut all = Vec::new();
    let mut write_error = None;
    for (dataset, k) in blocks {
        let records = run_block(dataset, k, &epsilons, |r| {
            if let Ok(line) = serde_json::to_string(r)
                && let Err(e) = writeln!(file, "{line}")
            {
                write_error.get_or_insert(e);
            }
        })?;
        all.extend(records);
    }
    if let Some(e) = write_error {
        return Err(crate::io_error(&path)(e));
    }
    println!(
        "== relaxed family (Dwork, Nikolov, Talwar 2015; boosting: Dwork, Rothblum, Vadhan \
         2010): δ = {}, seed 1, replace-one ==",
        dp_core::Num(DELTA)
    );
    print!("{}", format_table(&all));
    println!("results: {}\n", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_one_row_per_record_and_dashes_for_missing_columns() {
        let r = RelaxedRecord {
            dataset: "nltcs".into(),
            k: 2,
            epsilon: 1.0,
            mechanism: "gaussian + simplex per table".into(),
            max_error: 0.01,
            mean_error: 0.002,
            mean_table_l1: 0.01,
            seconds: 0.5,
            fw_iterations: None,
            oracle_seconds: None,
        };
        let t = format_table(&[r.clone(), r]);
        assert_eq!(t.lines().count(), 4);
        assert!(t.lines().nth(2).unwrap().ends_with("| – | – |"));
    }
}
