//! Speed of the projection on nltcs all-3way: one `inner_all` per kernel, then the solvers.
//!
//! `cargo run --release -p dp-bench --example projection_speed -- [dataset] [eps] [pairwise-cap] [accelerated-cap] [min-norm-point-cap] [tolerance]`
//!
//! A cap of 0 skips that solver; the min-norm-point cap defaults to 5 000 major cycles.
//! Every solver projects the same noisy answers (ε, δ = 1e-9, seed 1, full data) to
//! relative gap `tolerance` (gap ≤ tolerance · f(v₀), default 1e-6) or its cap.
use dp_bench::experiments::projection::{SolverSpeedRecord, format_speed_table, load_dataset};
use dp_core::{PrivacyLoss, seeded_rng};
use dp_geometry::{AtomicBody, ConvexHull, FrankWolfeVariant, SolveStatus};
use dp_mechanisms::{ProjectionParams, ProjectionSettings};
use dp_queries::{MarginalPoints, MarginalWorkload, Universe};
use std::time::Instant;

fn main() -> dp_bench::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dataset = args.get(1).map_or("nltcs", String::as_str);
    let eps: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let cap =
        |i: usize, default: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let solvers: Vec<(&str, usize)> = [
        ("pairwise", cap(3, 300)),
        ("accelerated", cap(4, 5000)),
        ("min-norm-point", cap(5, 5000)),
    ]
    .into_iter()
    .filter(|&(_, c)| c > 0)
    .collect();
    let tolerance: f64 = args.get(6).and_then(|s| s.parse().ok()).unwrap_or(1e-6);
    for (name, ms) in dp_bench::experiments::projection::kernel_timings(dataset, 9)? {
        println!("inner_all {name:<28} {ms:9.3} ms");
    }

    let data = load_dataset(dataset)?;
    let workload = MarginalWorkload::parse_spec(data.domain(), "all-3way", 0)?;
    let budget = PrivacyLoss::approx(eps, 1e-9)?;
    let mut recs = Vec::new();
    for (solver, max_iterations) in solvers {
        let mut settings = ProjectionSettings::default();
        settings.frank_wolfe.max_iterations = max_iterations;
        settings.frank_wolfe.relative_gap_tolerance = tolerance;
        settings.frank_wolfe.variant = solver
            .parse::<FrankWolfeVariant>()
            .map_err(dp_mechanisms::MechanismError::from)?;
        let mech = ProjectionParams::new(budget).settings(settings).check()?;
        let noisy = mech.noisy_counts(&data, &workload, &mut seeded_rng(1))?;
        let y = noisy.answers();
        // f(v₀): the objective at the oracle's vertex for y, the scale of the relative gap
        let universe = Universe::new(workload.domain(), mech.settings().max_universe)?;
        let points = MarginalPoints::new(&universe, &workload)?;
        let hull = ConvexHull::new(&points).map_err(dp_mechanisms::MechanismError::from)?;
        let mut scores = vec![0.0; universe.len()];
        hull.atom_scores(&y, &mut scores, mech.settings().frank_wolfe.parallelism);
        let best = (0..scores.len())
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .unwrap_or(0);
        let mut v0 = vec![0.0; y.len()];
        hull.add_atom_scaled(best, 1.0, &mut v0);
        let f0: f64 = v0.iter().zip(&y).map(|(a, b)| (a - b) * (a - b)).sum();

        let start = Instant::now();
        let fw = mech.project_answers(&workload, &y)?;
        let seconds = start.elapsed().as_secs_f64();
        recs.push(SolverSpeedRecord {
            dataset: dataset.into(),
            solver: solver.into(),
            epsilon: eps,
            max_iterations,
            iterations: fw.iterations,
            oracle_calls: fw.oracle_calls,
            oracle_calls_per_second: fw.oracle_calls as f64 / seconds.max(1e-9),
            gap: fw.gap,
            initial_objective: f0.max(f64::MIN_POSITIVE),
            objective: fw.objective,
            atoms: fw.atoms.len(),
            status: format!("{:?}", fw.status),
            seconds,
            seconds_to_1e6: (fw.status == SolveStatus::Converged).then_some(seconds),
        });
    }
    print!("{}", format_speed_table(&recs));
    Ok(())
}
