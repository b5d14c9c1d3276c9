//! Diagnostic run of `adaptive-projection` on the bundled adult with a benchmark workload:
//! prints the twelve worst-fitted tables (largest cell error, ℓ1 error, whether the table or
//! its sub-tables were measured), then avgL1, max, rounds, annealings, seconds and the
//! measured tables in order. Used to choose the defaults (docs/mechanisms/adaptive.md,
//! "Max-error rounds").
//!
//! `cargo run --release -p dp-bench --example adaptive_diag -- [WORKLOAD.json] [EPSILON]
//! [SEED] [MAX_ERROR_EVERY]` (defaults adult_w64.json, 1, 1 and the library's; add/remove, δ = 1e-9); the
//! environment variables `MC`, `RI`, `FI` (default: the library's) set the model cap and the round / final
//! mirror-descent steps, `CS` and `CK` set the check share γ and resolution κ, `ME` the max-error rounds' resolution κ_max (`0` for none), `BESIDE=0|1` turns the measurements beside the model off or on (default: the library's), `MXB=0|1` the max-error rounds' coarsened tables beside it (`max_error_beside`), `DU=1` the direct measurement of the tables the model cannot take (`direct_unjoinable`), `PT=0` takes the total from the 1-way tables alone, `FG` the final fit's χ² gain stop, `RPA` and `RL` the rounds per attribute (T = r·d) and at a low budget, `FC` its cells × steps budget, `CT` the coarsened candidates' θ (0 off) and `CR` their resolution κ_c, `AL` the rounds' measurement share α, `LT` the limited translation's d (`inf` off), `FCC` the final fit's second start's cell cap (0 off), `RES=0|1` the lower-order residuals of a table measured apart from the model taken with the model's (`residual_release`), `DL=0|1` the direct phase's ℓ1-optimal split (`direct_l1_split`), `BYTABLE=1` prints every table's ℓ1 beside the baseline's, summed by how the release measured it (direct, check, round, none), `DATASET`
//! picks another bundled table (then the workload may also be `all-2way`,
//! `random-3way:64` …, workload seed 0). Seeded noise: an experiment, not a release.
use dp_bench::experiments::real::ExampleInputs;
use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::{AdaptiveProjectionParams, EstimatorChoice};
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let inputs = ExampleInputs::from_command_line()?;
    let (data, w, eps, seed) = (inputs.data, inputs.workload, inputs.epsilon, inputs.seed);
    let truth = w.answers(&data).unwrap();
    let budget = PrivacyLoss::approx(eps, 1e-9).unwrap();
    let env = |k: &str, d: f64| -> f64 {
        std::env::var(k)
            .ok()
            .map(|v| v.parse().unwrap())
            .unwrap_or(d)
    };
    let mut params = AdaptiveProjectionParams::new(budget);
    params.coarse_resolution = env("CR", params.coarse_resolution);
    params.measurement_share = env("AL", params.measurement_share);
    params.limited_translation = env("LT", params.limited_translation);
    params.final_cold_cells = env("FCC", params.final_cold_cells);
    let every: usize = match inputs.rest.first() {
        Some(v) => v.parse()?,
        None => params.max_error_every,
    };
    params.max_model_cells = env("MC", params.max_model_cells);
    params.rounds_per_attribute = env("RPA", params.rounds_per_attribute as f64) as usize;
    params.low_budget_rounds_per_attribute =
        env("RL", params.low_budget_rounds_per_attribute as f64) as usize;
    let (ri, fi) = match params.estimator {
        EstimatorChoice::GraphicalModel {
            round_iterations,
            final_iterations,
        } => (round_iterations, final_iterations),
        EstimatorChoice::Independent => (100, 500),
    };
    let (ds, dt, cs) = (
        params.direct_share,
        params.direct_noise_l1,
        params.check_share,
    );
    let ck = params.check_resolution;
    let beside = f64::from(u8::from(params.measure_beside_model));
    let max_beside = f64::from(u8::from(params.max_error_beside));
    let residual = f64::from(u8::from(params.residual_release));
    let l1_split = f64::from(u8::from(params.direct_l1_split));
    let me = params.max_error_resolution;
    let (fg, fc) = (params.final_chi_square_gain, params.final_cell_steps);
    let ct = params.coarse_threshold;
    let mech = params
        .estimator(EstimatorChoice::GraphicalModel {
            round_iterations: env("RI", ri as f64) as usize,
            final_iterations: env("FI", fi as f64) as usize,
        })
        .neighbouring(Neighbouring::AddRemove)
        .max_error_every(every)
        .max_error_resolution(env("ME", me))
        .measure_beside_model(env("BESIDE", beside) != 0.0)
        .max_error_beside(env("MXB", max_beside) != 0.0)
        .residual_release(env("RES", residual) != 0.0)
        .direct_l1_split(env("DL", l1_split) != 0.0)
        .direct_unjoinable(env("DU", 0.0) != 0.0)
        .direct(env("DS", ds), env("DT", dt))
        .check_share(env("CS", cs))
        .check_resolution(env("CK", ck))
        .pool_total(env("PT", 1.0) != 0.0)
        .final_chi_square_gain(env("FG", fg))
        .final_cell_steps(env("FC", fc))
        .coarse_threshold(env("CT", ct))
        .check()
        .unwrap();
    // the Gaussian baseline with simplex post-processing, same budget, relation and seed
    let base = dp_bench::registry::build_mechanism(
        "gaussian",
        budget,
        Neighbouring::AddRemove,
        dp_mechanisms::PostProcessing::SimplexProjection,
    )
    .unwrap();
    let base_rel = base
        .release(&data, &w, &mut dp_core::seeded_rng(seed))
        .unwrap();
    let base_err = dp_queries::ErrorReport::compute(&w, &base_rel.answers, &truth).unwrap();
    let mut rng = dp_core::seeded_rng(seed);
    let t = std::time::Instant::now();
    let run = mech.run(&data, &w, &mut rng).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let measured: Vec<Vec<usize>> = run.rounds.iter().map(|r| r.selected.clone()).collect();
    let mut rows = vec![];
    for j in 0..w.len() {
        let r = w.offset(j)..w.offset(j + 1);
        let (mut l1, mut mx, mut big) = (0.0f64, 0.0f64, 0.0f64);
        for (a, b) in run.release.answers[r.clone()].iter().zip(&truth[r]) {
            l1 += (a - b).abs();
            if (a - b).abs() > mx {
                mx = (a - b).abs();
                big = *b;
            }
        }
        let mut at = w.marginals()[j].attrs().to_vec();
        at.sort();
        let exact = measured.contains(&at);
        let sub = measured
            .iter()
            .filter(|m| m.len() >= 2 && m.iter().all(|x| at.contains(x)))
            .count();
        rows.push((mx, l1, j, at, exact, sub, big, w.marginals()[j].num_cells()));
    }
    rows.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    for r in rows.iter().take(12) {
        println!(
            "max {:.4} l1 {:.4} t{} {:?} exact={} subs={} truecell={:.3} cells={}",
            r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7
        );
    }
    let avg: f64 = rows.iter().map(|r| r.1).sum::<f64>() / rows.len() as f64;
    println!(
        "avgL1 {avg:.5} max {:.5} rounds {} annealed {} secs {secs:.1}",
        rows[0].0,
        run.rounds.len(),
        run.rounds.iter().filter(|r| r.annealed).count()
    );
    println!("{base_err:?}");
    for n in &run.release.diagnostics.notes {
        println!("note: {n}");
    }
    println!("direct: {} checks: {}", run.direct.len(), run.checks.len());
    // with `CT`: each attribute's values below θσ₁ by their exact counts (a diagnostic only:
    // the release groups by the noisy counts), their number and share of the records
    if ct > 0.0 || env("CT", 0.0) > 0.0 {
        let theta = env("CT", ct);
        for r in &run.one_ways {
            let a = r.selected[0];
            let counts = dp_queries::Marginal::new(data.domain(), vec![a])?.try_count(&data)?;
            let cut = theta * r.sigma2.sqrt();
            let rare: Vec<u64> = counts
                .iter()
                .copied()
                .filter(|&c| (c as f64) < cut)
                .collect();
            if rare.len() >= 2 {
                println!(
                    "rare attr {a}: {} of {} values, share {:.4}, cut {cut:.1}",
                    rare.len(),
                    counts.len(),
                    rare.iter().sum::<u64>() as f64 / data.n() as f64
                );
            }
        }
    }
    // per table, by how the release measured it: the release's ℓ1 against the baseline's
    // (`BYTABLE=1`)
    if env("BYTABLE", 0.0) != 0.0 {
        let direct: Vec<Vec<usize>> = run.direct.iter().map(|r| r.selected.clone()).collect();
        let checks: Vec<Vec<usize>> = run.checks.iter().map(|r| r.selected.clone()).collect();
        let mut by: std::collections::BTreeMap<&str, (usize, f64, f64)> = Default::default();
        for j in 0..w.len() {
            let r = w.offset(j)..w.offset(j + 1);
            let l1 = |a: &[f64]| -> f64 {
                a[r.clone()]
                    .iter()
                    .zip(&truth[r.clone()])
                    .map(|(x, y)| (x - y).abs())
                    .sum()
            };
            let (la, lb) = (l1(&run.release.answers), l1(&base_rel.answers));
            let mut at = w.marginals()[j].attrs().to_vec();
            at.sort();
            let kind = if direct.contains(&at) {
                "direct"
            } else if checks.contains(&at) {
                "check"
            } else if measured.contains(&at) {
                "round"
            } else {
                "none"
            };
            let e = by.entry(kind).or_default();
            e.0 += 1;
            e.1 += la;
            e.2 += lb;
            println!(
                "table t{j} {kind} cells={} adaptive {la:.4} baseline {lb:.4}",
                w.marginals()[j].num_cells()
            );
        }
        for (k, (c, a, b)) in by {
            println!("bykind {k} tables {c} adaptive_sum {a:.3} baseline_sum {b:.3}");
        }
    }
    for r in &run.rounds {
        print!(
            "{:?}{}{} ",
            r.selected,
            if r.coarsened { "c" } else { "" },
            if r.annealed { "*" } else { "" }
        );
    }
    println!();
    Ok(())
}
