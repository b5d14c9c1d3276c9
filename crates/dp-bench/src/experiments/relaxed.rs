//! The relaxed family (seed 000: Dwork, Nikolov and Talwar 2015) in `cargo xtask bench
//! --only relaxed`: the Gaussian baseline with per-table simplex post-processing, the relaxed
//! projection and Boosting for Queries (Dwork, Rothblum and Vadhan 2010) on the bundled
//! binary datasets, all 2-way and all 3-way marginals, ε ∈ {0.1, 0.5, 1} with δ = 1e-9
//! converted to ρ-zCDP, replace-one neighbours.
//!
//! Datasets: nltcs (16 binary attributes) for 2- and 3-way, acs (23 binary attributes) for
//! 2-way, and adult through the one-hot encoding ([`dp_mechanisms::OneHotEncoded`]): all
//! 2-way on the full table (586 bits: its 3-way plan is far beyond the size cap) and all
//! 3-way on the coarser variant "adult7" — the seven attributes with at most 16 values
//! (sex, race, relationship, marital-status, workclass, income>50K, education-num; 47 bits).
//! Boosting costs minutes per release on adult, so it runs there at ε = 1 only.

use std::time::Instant;

use dp_core::{PrivacyLoss, seeded_rng};
use dp_geometry::{LinearOracle, Parallelism};
use dp_mechanisms::relaxed::ParityBody;
use dp_mechanisms::{
    BoostingParams, BoostingSettings, GaussianParams, Mechanism, MechanismError, OneHotEncoded,
    PostProcessing, RelaxedProjectionParams, RelaxedSettings,
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

/// The attributes of the "adult7" variant: adult's attributes with at most 16 values.
pub const ADULT7: [&str; 7] = [
    "sex",
    "race",
    "relationship",
    "marital-status",
    "workclass",
    "income>50K",
    "education-num",
];

/// One block of the grid: a bundled table (optionally restricted to some attributes) and
/// the width of its all-k-way workload.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    /// Label in the results.
    pub label: &'static str,
    /// Bundled dataset.
    pub dataset: &'static str,
    /// Attributes kept (all when `None`).
    pub attributes: Option<&'static [&'static str]>,
    /// All k-way marginals.
    pub k: usize,
    /// Whether boosting runs at every ε (else at the largest only: minutes per release).
    pub boosting_everywhere: bool,
}

/// The grid: the blocks and the ε values.
pub fn grid() -> (Vec<Block>, Vec<f64>) {
    let block = |label, dataset, attributes, k, boosting_everywhere| Block {
        label,
        dataset,
        attributes,
        k,
        boosting_everywhere,
    };
    (
        vec![
            block("nltcs", "nltcs", None, 2, true),
            block("nltcs", "nltcs", None, 3, true),
            block("acs", "acs", None, 2, true),
            block("adult (one-hot)", "adult", None, 2, false),
            block("adult7 (one-hot)", "adult", Some(&ADULT7[..]), 3, false),
        ],
        vec![0.1, 0.5, 1.0],
    )
}

/// Runs one (dataset, k) block over `epsilons`, calling `each` per record; seed 1 for every
/// mechanism.
pub fn run_block(
    block: &Block,
    epsilons: &[f64],
    mut each: impl FnMut(&RelaxedRecord),
) -> Result<Vec<RelaxedRecord>> {
    let k = block.k;
    let mut data = datasets::bundled(block.dataset)?.load()?;
    if let Some(attrs) = block.attributes {
        data = data.select_attributes(attrs)?;
    }
    let workload = MarginalWorkload::all_kway(data.domain(), k)?;
    let truth = workload.answers(&data)?;
    // one oracle call on a fixed direction (cold start, split over the rayon pool as in the
    // releases), for the oracle-time column
    let plan = dp_queries::OneHotMarginals::new(&workload)?;
    let transform = MarginalParityTransform::new(plan.bit_workload())?;
    let body = ParityBody::new(
        transform.parities(),
        RelaxedSettings::default().oracle.clone(),
    )
    .map_err(MechanismError::from)?;
    let direction: Vec<f64> = (0..body.dim())
        .map(|j| ((j * 7919) % 13) as f64 - 6.0)
        .collect();
    let start = Instant::now();
    body.linear_max(&direction, Parallelism::Rayon)
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
        let relaxed = OneHotEncoded::new(RelaxedProjectionParams::new(budget).check()?);
        let boosting = OneHotEncoded::new(BoostingParams::new(budget).check()?);
        let boosting_jl = OneHotEncoded::new(
            BoostingParams::new(budget)
                .settings(BoostingSettings {
                    jl_dimension: JL_DIMENSION,
                    ..BoostingSettings::default()
                })
                .check()?,
        );
        let jl_label = format!("boosting, JL synopsis D = {JL_DIMENSION}");
        let largest = epsilons.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let boosts = block.boosting_everywhere || epsilon == largest;
        let mut mechanisms: Vec<(&str, &dyn Mechanism, bool)> = vec![
            ("gaussian + simplex per table", &simplex, false),
            ("relaxed-projection", &relaxed, true),
        ];
        if boosts {
            mechanisms.push(("boosting", &boosting, true));
        }
        if block.boosting_everywhere {
            mechanisms.push((&jl_label, &boosting_jl, true));
        }
        for (name, mech, projects) in mechanisms {
            let start = Instant::now();
            let release = mech.release(&data, &workload, &mut seeded_rng(1))?;
            let seconds = start.elapsed().as_secs_f64();
            let report = ErrorReport::compute(&workload, &release.answers, &truth)?;
            let record = RelaxedRecord {
                dataset: block.label.to_string(),
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
    for block in blocks {
        let records = run_block(&block, &epsilons, |r| {
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
