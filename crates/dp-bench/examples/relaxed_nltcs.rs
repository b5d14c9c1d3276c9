//! The relaxed projection (Dwork, Nikolov and Talwar 2014) against the Gaussian baseline on
//! nltcs (16 binary attributes), all 2-way and all 3-way marginals.
//!
//! `cargo run -p dp-bench --example relaxed_nltcs -- [epsilon] [runs] [max-iterations]`
//!
//! Budget (ε, δ = 1e-9) converted to ρ-zCDP for every mechanism, replace-one neighbours;
//! defaults ε = 1, 3 runs (seeds 1, 2, …), the relaxed projection's default step cap. Prints
//! the max and mean absolute error (normalised answers) and mean per-table ℓ1, each the
//! mean over the runs, and the relaxed projection's steps and seconds.
use std::path::Path;
use std::time::Instant;

use dp_core::{PrivacyLoss, seeded_rng};
use dp_mechanisms::{
    GaussianParams, Mechanism, PostProcessing, RelaxedProjectionParams, RelaxedSettings,
};
use dp_queries::{Dataset, ErrorReport, MarginalWorkload};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let epsilon: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let runs: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let defaults = RelaxedSettings::default();
    let cap: usize = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(defaults.max_iterations);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/nltcs");
    let data = Dataset::load_csv(&root.join("nltcs.csv"), &root.join("nltcs-domain.json"))?;
    let budget = PrivacyLoss::Approx {
        epsilon,
        delta: 1e-9,
    };
    println!(
        "nltcs: n = {}, d = {}, ε = {epsilon}, δ = 1e-9, {runs} runs",
        data.n(),
        data.domain().len()
    );
    println!(
        "{:<5} {:<34} {:>9} {:>9} {:>9} {:>7} {:>8}",
        "k", "mechanism", "max", "mean", "L1/table", "steps", "seconds"
    );
    for k in [2, 3] {
        let workload = MarginalWorkload::all_kway(data.domain(), k)?;
        let truth = workload.answers(&data)?;
        let relaxed = RelaxedProjectionParams::new(budget)
            .settings(RelaxedSettings {
                max_iterations: cap,
                ..defaults.clone()
            })
            .check()?;
        let gaussian = GaussianParams::new(budget).check()?;
        let simplex = GaussianParams::new(budget)
            .post_processing(PostProcessing::SimplexProjection)
            .check()?;
        let mechanisms: [(&str, &dyn Mechanism); 3] = [
            ("gaussian", &gaussian),
            ("gaussian + simplex per table", &simplex),
            ("relaxed-projection", &relaxed),
        ];
        for (name, mech) in mechanisms {
            let (mut max, mut mean, mut l1, mut steps, mut secs) = (0.0, 0.0, 0.0, 0usize, 0.0);
            for seed in 1..=runs {
                let start = Instant::now();
                let release = mech.release(&data, &workload, &mut seeded_rng(seed))?;
                secs += start.elapsed().as_secs_f64();
                let report = ErrorReport::compute(&workload, &release.answers, &truth)?;
                max += report.max_abs;
                mean += report.mean_abs;
                l1 += report.mean_marginal_l1;
                steps += release.diagnostics.iterations.unwrap_or(0);
                if seed == 1 && name == "relaxed-projection" {
                    for note in &release.diagnostics.notes {
                        eprintln!("  k = {k}: {note}");
                    }
                }
            }
            let r = runs as f64;
            println!(
                "{:<5} {:<34} {:>9.5} {:>9.5} {:>9.5} {:>7} {:>8.2}",
                k,
                name,
                max / r,
                mean / r,
                l1 / r,
                steps / runs as usize,
                secs / r
            );
        }
    }
    Ok(())
}
