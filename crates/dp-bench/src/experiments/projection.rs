//! Benchmarks of the projection family (seed 004) against the Gaussian baseline, with the
//! instance-optimality report (packing lower bounds) next to the achieved error.
//!
//! Datasets: `nltcs` (16 binary attributes, |𝒳| = 65 536) and `adult7`, the adult subset
//! [`ADULT7_ATTRIBUTES`] (|𝒳| = 16·7·15·6·5·2·2 = 201 600), each with all 3-way marginals;
//! optionally subsampled to smaller n (seeded, without replacement).

use crate::Result;
use crate::io::datasets;
use crate::registry::{BuildOptions, build_mechanism_with};
use dp_core::{Neighbouring, PrivacyLoss, rho_for_epsilon_delta, seeded_rng, stream_rng};
use dp_mechanisms::projection::lower_bounds::{InstanceOptimalityReport, PackingProfile};
use dp_mechanisms::projection::metric::MarginalMetric;
use dp_mechanisms::{PostProcessing, ProjectionParams, ProjectionSettings};
use dp_queries::{Dataset, ErrorReport, MarginalWorkload, Universe};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The adult subset used by the projection benchmarks: seven attributes whose universe has
/// 16·7·15·6·5·2·2 = 201 600 records (education-num, marital-status, occupation,
/// relationship, race, sex, income>50K — the demographic/occupational core of adult,
/// dropping the wide numeric attributes age, fnlwgt, capital-gain/loss, hours-per-week,
/// native-country and the redundant workclass).
pub const ADULT7_ATTRIBUTES: &[&str] = &[
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "income>50K",
];

/// The workload spec of the bench's mixed attribute list (a JSON-style list of marginals
/// of sizes 1 to 4): see [`bench_workload`].
pub const MIXED_WORKLOAD: &str = "mixed";

/// A bench workload: [`MarginalWorkload::parse_spec`] (workload seed 0), or for
/// [`MIXED_WORKLOAD`] the attribute lists (by attribute index, for any domain of ≥ 7
/// attributes) `[0] [1 2] [3 4 5] [0 3 6] [1 5] [2 4 6] [0 1 2 3] [5] [4 6]` — as
/// `dpqr --workload FILE.json` would read them with the attributes' names.
pub fn bench_workload(domain: &dp_queries::Domain, spec: &str) -> Result<MarginalWorkload> {
    if spec != MIXED_WORKLOAD {
        return Ok(MarginalWorkload::parse_spec(domain, spec, 0)?);
    }
    let lists: &[&[usize]] = &[
        &[0],
        &[1, 2],
        &[3, 4, 5],
        &[0, 3, 6],
        &[1, 5],
        &[2, 4, 6],
        &[0, 1, 2, 3],
        &[5],
        &[4, 6],
    ];
    if domain.len() < 7 {
        return Err(dp_queries::QueryError::BadWorkload {
            reason: format!(
                "the mixed bench list needs 7 attributes, not {}",
                domain.len()
            ),
        }
        .into());
    }
    let lists: Vec<Vec<String>> = lists
        .iter()
        .map(|l| l.iter().map(|&a| domain.name(a).to_string()).collect())
        .collect();
    Ok(MarginalWorkload::from_attribute_lists(domain, &lists)?)
}

/// Loads `nltcs`, or `adult7` (adult restricted to [`ADULT7_ATTRIBUTES`]), or any bundled
/// dataset by name.
pub fn load_dataset(name: &str) -> Result<Dataset> {
    match name {
        "adult7" => Ok(datasets::bundled("adult")?
            .load()?
            .select_attributes(ADULT7_ATTRIBUTES)?),
        other => datasets::bundled(other)?.load(),
    }
}

/// A grid: dataset × n × mechanism × ε, repeated.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProjectionExperiment {
    /// Name (output file `<name>.jsonl`).
    pub name: String,
    /// `nltcs` or `adult7`.
    pub dataset: String,
    /// Workload spec.
    pub workload: String,
    /// Data sizes: `None` = the full data, `Some(n)` = a seeded subsample of n records.
    pub ns: Vec<Option<usize>>,
    /// ε values; ρ is the largest whose (ε, δ) conversion is within budget.
    pub epsilons: Vec<f64>,
    /// δ.
    pub delta: f64,
    /// Mechanism names.
    pub mechanisms: Vec<String>,
    /// Repetitions.
    pub repeats: u64,
    /// Base seed.
    pub seed: u64,
    /// Number of radii of the packing profile.
    pub packing_grid: usize,
    /// Frank–Wolfe iteration cap of the projection family (the gap is reported).
    pub fw_max_iterations: usize,
}

impl ProjectionExperiment {
    fn base(name: &str, dataset: &str) -> Self {
        ProjectionExperiment {
            name: name.into(),
            dataset: dataset.into(),
            workload: "all-3way".into(),
            ns: vec![None, Some(5_000), Some(1_000)],
            epsilons: vec![0.05, 0.1, 0.5, 1.0],
            delta: 1e-9,
            mechanisms: ["gaussian", "projection", "coarse-projection", "chaining"]
                .map(String::from)
                .to_vec(),
            repeats: 2,
            seed: 0,
            packing_grid: 10,
            fw_max_iterations: 5_000,
        }
    }

    /// The `--quick` grid: nltcs all-3way, full data and n = 1 000, ε ∈ {0.1, 1}, one run,
    /// at most 1 200 min-norm-point major cycles (the full-data ε = 1 cell needs ≈ 1 000 to
    /// reach relative gap 1e-6, ≈ 1–2 s on 2 shared cores).
    pub fn quick() -> Vec<Self> {
        vec![ProjectionExperiment {
            ns: vec![None, Some(1_000)],
            epsilons: vec![0.1, 1.0],
            repeats: 1,
            packing_grid: 6,
            fw_max_iterations: 1_200,
            ..Self::base("projection-quick", "nltcs")
        }]
    }

    /// The full grid: nltcs and adult7, n ∈ {full, 5 000, 1 000}, ε ∈ {0.05, 0.1, 0.5, 1},
    /// two repeats, at most 5 000 min-norm-point major cycles (the library default), all
    /// 3-way marginals; and the workloads that are not all-k-way (where chaining has more
    /// than one level and does not reduce to projection): random 3-way (64 tables on nltcs;
    /// 20 on adult7, which has only C(7,3) = 35) and the mixed attribute list
    /// [`MIXED_WORKLOAD`], n ∈ {full, 1 000}, ε ∈ {0.1, 1}, one repeat.
    pub fn full() -> Vec<Self> {
        let shape = |name: &str, dataset: &str, workload: &str| ProjectionExperiment {
            workload: workload.into(),
            ns: vec![None, Some(1_000)],
            epsilons: vec![0.1, 1.0],
            repeats: 1,
            packing_grid: 6,
            ..Self::base(name, dataset)
        };
        vec![
            Self::base("projection-nltcs", "nltcs"),
            Self::base("projection-adult7", "adult7"),
            shape("projection-nltcs-random3", "nltcs", "random-3way:64"),
            shape("projection-nltcs-mixed", "nltcs", MIXED_WORKLOAD),
            shape("projection-adult7-random3", "adult7", "random-3way:20"),
            shape("projection-adult7-mixed", "adult7", MIXED_WORKLOAD),
        ]
    }

    /// Number of runs.
    pub fn num_runs(&self) -> u64 {
        (self.ns.len() * self.epsilons.len() * self.mechanisms.len()) as u64 * self.repeats
    }
}

/// One run of the projection benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProjectionRecord {
    /// Experiment name.
    pub experiment: String,
    /// Dataset.
    pub dataset: String,
    /// Data size.
    pub n: usize,
    /// Universe size |𝒳|.
    pub universe: usize,
    /// Workload spec.
    pub workload: String,
    /// Number of queries m.
    pub queries: usize,
    /// Mechanism.
    pub mechanism: String,
    /// Target ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// ρ spent.
    pub rho: f64,
    /// Repetition.
    pub repeat: u64,
    /// The certificate's statement.
    pub guarantee: String,
    /// Error of the normalised answers.
    pub error: ErrorReport,
    /// Frank–Wolfe duality gap (summed over levels for chaining).
    pub fw_gap: Option<f64>,
    /// Frank–Wolfe iterations.
    pub iterations: Option<usize>,
    /// Oracle calls.
    pub oracle_calls: Option<usize>,
    /// Wall-clock seconds of the release.
    pub seconds: f64,
    /// Seed 004 Thm 1.4 lower bound with c = 1 (see `lower_bounds`).
    pub lower_bound_thm14: f64,
    /// Explicit-constant lower bound (Lemma B.2 + padding).
    pub lower_bound_explicit: f64,
    /// The release's notes.
    pub notes: Vec<String>,
}

/// The named mechanism; the projection family with the experiment's iteration cap.
fn build(
    name: &str,
    budget: PrivacyLoss,
    fw_max_iterations: usize,
) -> Result<Box<dyn dp_mechanisms::Mechanism>> {
    let mut settings = ProjectionSettings::default();
    settings.frank_wolfe.max_iterations = fw_max_iterations;
    let options = BuildOptions {
        projection_settings: Some(settings),
        ..BuildOptions::default()
    };
    build_mechanism_with(
        name,
        budget,
        Neighbouring::ReplaceOne,
        PostProcessing::None,
        &options,
    )
}

/// The packing profile of a dataset's universe under a workload, and the time it took.
pub fn packing_profile(
    data: &Dataset,
    workload: &MarginalWorkload,
    grid: usize,
) -> Result<(PackingProfile, f64)> {
    let start = Instant::now();
    let universe = Universe::new(
        data.domain(),
        dp_mechanisms::projection::DEFAULT_MAX_UNIVERSE,
    )?;
    let metric = MarginalMetric::new(&universe, workload)?;
    let ts = PackingProfile::default_grid(&metric, grid);
    let profile = PackingProfile::compute(&metric, &ts)?;
    Ok((profile, start.elapsed().as_secs_f64()))
}

/// Runs every cell of `exp`, calling `on_record` after each run; also returns the packing
/// profile.
pub fn run_projection(
    exp: &ProjectionExperiment,
    mut on_record: impl FnMut(&ProjectionRecord),
) -> Result<(Vec<ProjectionRecord>, PackingProfile)> {
    let full = load_dataset(&exp.dataset)?;
    let workload = bench_workload(full.domain(), &exp.workload)?;
    let (profile, _) = packing_profile(&full, &workload, exp.packing_grid)?;
    let universe = profile.universe_size;
    let mut records = Vec::new();
    let mut stream = 0u64;
    for (ni, n_opt) in exp.ns.iter().enumerate() {
        let data = match n_opt {
            None => full.clone(),
            Some(n) => full.subsample(*n, &mut seeded_rng(exp.seed ^ (0x5eed + ni as u64)))?,
        };
        let truth = workload.answers(&data)?;
        for &epsilon in &exp.epsilons {
            let budget = PrivacyLoss::approx(epsilon, exp.delta)?;
            let rho = rho_for_epsilon_delta(epsilon, exp.delta)?;
            let lb = InstanceOptimalityReport::new(&profile, data.n(), rho)?;
            for mech_name in &exp.mechanisms {
                let mech = build(mech_name, budget, exp.fw_max_iterations)?;
                for repeat in 0..exp.repeats {
                    let mut rng = stream_rng(exp.seed, stream);
                    stream += 1;
                    // timed here: a release publishes no timings (Diagnostics docs)
                    let start = Instant::now();
                    let release = mech.release(&data, &workload, &mut rng)?;
                    let seconds = start.elapsed().as_secs_f64();
                    let error = ErrorReport::compute(&workload, &release.answers, &truth)?;
                    let d = &release.diagnostics;
                    let record = ProjectionRecord {
                        experiment: exp.name.clone(),
                        dataset: exp.dataset.clone(),
                        n: data.n(),
                        universe,
                        workload: exp.workload.clone(),
                        queries: workload.num_queries(),
                        mechanism: mech_name.clone(),
                        epsilon,
                        delta: exp.delta,
                        rho,
                        repeat,
                        guarantee: release.certificate.statement(),
                        error,
                        fw_gap: d.frank_wolfe_gap,
                        iterations: d.iterations,
                        oracle_calls: d.oracle_calls,
                        seconds,
                        lower_bound_thm14: lb.alpha_thm14,
                        lower_bound_explicit: lb.alpha_explicit,
                        notes: d.notes.clone(),
                    };
                    on_record(&record);
                    records.push(record);
                }
            }
        }
    }
    Ok((records, profile))
}

/// A text table: mechanism, n, ε, errors, FW gap/iterations, seconds, lower bounds.
pub fn format_projection_table(records: &[ProjectionRecord]) -> String {
    let mut s = format!(
        "{:<17} {:>6} {:>5} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {:>9} {:>9}\n",
        "mechanism",
        "n",
        "eps",
        "max_err",
        "mean_err",
        "rmse",
        "fw_gap",
        "iters",
        "seconds",
        "LB(c=1)",
        "LB(expl)"
    );
    for r in records {
        s.push_str(&format!(
            "{:<17} {:>6} {:>5} {:>9.3e} {:>9.3e} {:>9.3e} {:>9} {:>6} {:>8.2} {:>9.2e} {:>9.2e}\n",
            r.mechanism,
            r.n,
            r.epsilon,
            r.error.max_abs,
            r.error.mean_abs,
            r.error.rmse,
            r.fw_gap.map_or("-".into(), |g| format!("{g:.2e}")),
            r.iterations.map_or("-".into(), |i| i.to_string()),
            r.seconds,
            r.lower_bound_thm14,
            r.lower_bound_explicit
        ));
    }
    s
}

/// Runs the quick or full grids, writes `<name>.jsonl` (one [`ProjectionRecord`] per line)
/// and `<name>-packing.json` under `out`, and prints tables with the lower bounds (the
/// entry point of `cargo xtask bench`).
pub fn run_and_report(quick: bool, out: &std::path::Path) -> Result<()> {
    let experiments = if quick {
        ProjectionExperiment::quick()
    } else {
        ProjectionExperiment::full()
    };
    run_and_report_experiments(&experiments, out)
}

/// [`run_and_report`] for the given experiments (e.g. one dataset of the full grid).
pub fn run_and_report_experiments(
    experiments: &[ProjectionExperiment],
    out: &std::path::Path,
) -> Result<()> {
    use std::io::Write;
    for exp in experiments {
        let path = out.join(format!("{}.jsonl", exp.name));
        let mut file = std::fs::File::create(&path).map_err(crate::io_error(&path))?;
        let mut write_error = None;
        let start = Instant::now();
        let (records, profile) = run_projection(exp, |r| {
            if let Ok(line) = serde_json::to_string(r)
                && let Err(e) = writeln!(file, "{line}")
            {
                write_error.get_or_insert(e);
            }
        })?;
        if let Some(e) = write_error {
            return Err(crate::io_error(&path)(e));
        }
        let ppath = out.join(format!("{}-packing.json", exp.name));
        let pjson = serde_json::to_string_pretty(&profile).unwrap_or_default();
        std::fs::write(&ppath, pjson).map_err(crate::io_error(&ppath))?;
        println!(
            "== {} on {} ({}, |X| = {}), δ = {}, seed {}; {:.1} s ==",
            exp.name,
            exp.dataset,
            exp.workload,
            profile.universe_size,
            dp_core::Num(exp.delta),
            exp.seed,
            start.elapsed().as_secs_f64()
        );
        println!(
            "greedy packing numbers G(t) (P(X,2t) ≤ G(t) ≤ P(X,t)): {}",
            profile
                .points
                .iter()
                .map(|(t, g)| format!("G({t:.3})={g}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        print!("{}", format_projection_table(&records));
        #[cfg(feature = "plots")]
        for fig in write_projection_figures(&exp.name, &records, out)? {
            println!("figure: {}", fig.display());
        }
        println!(
            "LB(c=1): α where the bound of Błasiok, Bun, Nikolov, Steinke 2019, Thm 1.4 \
             (absolute constant c set to 1) equals n; LB(expl): worst-case err² no ρ-zCDP \
             mechanism can beat (Lemma B.2 + padding, all constants). Both are worst-case over \
             datasets of size n; errors above are on this dataset.\nresults: {}\n",
            path.display()
        );
    }
    Ok(())
}

/// One measurement of the projection solver's speed ([`solver_speed`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SolverSpeedRecord {
    /// Dataset name.
    pub dataset: String,
    /// Solver variant (`pairwise`, `accelerated`).
    pub solver: String,
    /// ε of the noisy answers projected (δ = 1e-9, full data).
    pub epsilon: f64,
    /// Iteration cap.
    pub max_iterations: usize,
    /// Iterations taken.
    pub iterations: usize,
    /// Oracle calls (`inner_all` over the whole universe).
    pub oracle_calls: usize,
    /// Oracle calls per second.
    pub oracle_calls_per_second: f64,
    /// Final duality gap.
    pub gap: f64,
    /// `f(v_0)`, the scale of the relative stopping rule.
    pub initial_objective: f64,
    /// Final objective ‖v − y‖².
    pub objective: f64,
    /// Atoms (records) of positive weight.
    pub atoms: usize,
    /// Status (`Converged`, `MaxIterations`, `Stalled`).
    pub status: String,
    /// Wall seconds of the solve.
    pub seconds: f64,
    /// Time to relative gap 1e-6 (`None` if not reached).
    pub seconds_to_1e6: Option<f64>,
}

/// Milliseconds of one `inner_all` over the universe of `dataset` under all 3-way marginals
/// for three kernels, serial: the odometer reference, the indicator-basis transform
/// (`MarginalPoints`' kernel) and dp-geometry's packed `BlockOneHotPoints`; median of `reps`.
pub fn kernel_timings(dataset: &str, reps: usize) -> Result<Vec<(String, f64)>> {
    use dp_geometry::{BlockOneHotPoints, Parallelism, PointSet};
    use dp_queries::MarginalPoints;
    let data = load_dataset(dataset)?;
    let workload = MarginalWorkload::parse_spec(data.domain(), "all-3way", 0)?;
    let universe = Universe::new(
        data.domain(),
        dp_mechanisms::projection::DEFAULT_MAX_UNIVERSE,
    )?;
    let points = MarginalPoints::new(&universe, &workload)?;
    let sizes: Vec<usize> = workload.marginals().iter().map(|m| m.num_cells()).collect();
    let mut cells = Vec::with_capacity(universe.len() * sizes.len());
    let mut one = vec![0.0; points.dim()];
    for x in 0..universe.len() {
        one.fill(0.0);
        points.add_scaled(x, 1.0, &mut one);
        for (j, &size) in sizes.iter().enumerate() {
            let off = workload.offset(j);
            let cell = (0..size).find(|&k| one[off + k] != 0.0).unwrap_or(0);
            cells.push(u16::try_from(cell).unwrap_or(u16::MAX));
        }
    }
    let packed =
        BlockOneHotPoints::new(&sizes, &cells).map_err(dp_mechanisms::MechanismError::from)?;
    let c: Vec<f64> = (0..points.dim())
        .map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5)
        .collect();
    let mut out = vec![0.0; universe.len()];
    let mut time = |f: &mut dyn FnMut(&mut [f64])| {
        let mut t: Vec<f64> = (0..reps)
            .map(|_| {
                let s = Instant::now();
                f(&mut out);
                s.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let par = Parallelism::None;
    Ok(vec![
        (
            "odometer (reference)".into(),
            time(&mut |o| points.inner_all_odometer(&c, o, par)),
        ),
        (
            "BlockOneHotPoints (packed)".into(),
            time(&mut |o| packed.inner_all(&c, o, par)),
        ),
        (
            "indicator-basis transform".into(),
            time(&mut |o| points.inner_all_transform(&c, o, par)),
        ),
    ])
}

/// Projects the noisy answers of the projection mechanism (full data, all 3-way, ε, δ =
/// 1e-9, seed) with each solver and reports its speed; the time to relative gap 1e-6 is
/// measured with the cap given (a second solve with tolerance 1e-6).
pub fn solver_speed(
    dataset: &str,
    epsilon: f64,
    solvers: &[(&str, usize)],
    seed: u64,
) -> Result<Vec<SolverSpeedRecord>> {
    use dp_geometry::FrankWolfeVariant;
    let data = load_dataset(dataset)?;
    let workload = MarginalWorkload::parse_spec(data.domain(), "all-3way", 0)?;
    let budget = PrivacyLoss::approx(epsilon, 1e-9)?;
    let mut out = Vec::new();
    for &(solver, cap) in solvers {
        let mut settings = ProjectionSettings::default();
        settings.frank_wolfe.max_iterations = cap;
        settings.frank_wolfe.relative_gap_tolerance = 1e-6;
        settings.frank_wolfe.variant = solver
            .parse::<FrankWolfeVariant>()
            .map_err(|e| crate::BenchError::Internal(format!("solver {solver}: {e}")))?;
        let mech = ProjectionParams::new(budget).settings(settings).check()?;
        let noisy = mech.noisy_counts(&data, &workload, &mut seeded_rng(seed))?;
        let y = noisy.answers();
        let start = Instant::now();
        let fw = mech.project_answers(&workload, &y)?;
        let seconds = start.elapsed().as_secs_f64();
        // f(v_0): objective at the start vertex (the oracle's answer for y)
        let mut one = settings_start_objective(&mech, &workload, &y)?;
        one = one.max(f64::MIN_POSITIVE);
        let converged = fw.status == dp_geometry::SolveStatus::Converged;
        out.push(SolverSpeedRecord {
            dataset: dataset.into(),
            solver: solver.into(),
            epsilon,
            max_iterations: cap,
            iterations: fw.iterations,
            oracle_calls: fw.oracle_calls,
            oracle_calls_per_second: fw.oracle_calls as f64 / seconds.max(1e-9),
            gap: fw.gap,
            initial_objective: one,
            objective: fw.objective,
            atoms: fw.atoms.len(),
            status: format!("{:?}", fw.status),
            seconds,
            seconds_to_1e6: converged.then_some(seconds),
        });
    }
    Ok(out)
}

/// `f(v_0)` of the relative stopping rule: one oracle call at `y`.
fn settings_start_objective(
    mech: &dp_mechanisms::ProjectionMechanism,
    workload: &MarginalWorkload,
    y: &[f64],
) -> Result<f64> {
    let mut settings = mech.settings().frank_wolfe.clone();
    settings.max_iterations = 1;
    settings.variant = dp_geometry::FrankWolfeVariant::Classic;
    let universe = Universe::new(workload.domain(), mech.settings().max_universe)?;
    let points = dp_queries::MarginalPoints::new(&universe, workload)?;
    let hull =
        dp_geometry::ConvexHull::new(&points).map_err(dp_mechanisms::MechanismError::from)?;
    let mut c = vec![0.0; y.len()];
    let mut scores = vec![0.0; universe.len()];
    use dp_geometry::AtomicBody;
    hull.atom_scores(y, &mut scores, settings.parallelism);
    let best = (0..scores.len())
        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
        .unwrap_or(0);
    hull.add_atom_scaled(best, 1.0, &mut c);
    Ok(c.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum())
}

/// Text table of [`solver_speed`] records.
pub fn format_speed_table(records: &[SolverSpeedRecord]) -> String {
    let mut s = format!(
        "{:<12} {:>5} {:>6} {:>6} {:>8} {:>9} {:>10} {:>9} {:>7} {:>8} {:>14}\n",
        "solver",
        "eps",
        "iters",
        "calls",
        "calls/s",
        "gap",
        "gap/f(v0)",
        "objective",
        "atoms",
        "seconds",
        "status"
    );
    for r in records {
        s.push_str(&format!(
            "{:<12} {:>5} {:>6} {:>6} {:>8.0} {:>9.2e} {:>10.2e} {:>9.4e} {:>7} {:>8.2} {:>14}\n",
            r.solver,
            r.epsilon,
            r.iterations,
            r.oracle_calls,
            r.oracle_calls_per_second,
            r.gap,
            r.gap / r.initial_objective,
            r.objective,
            r.atoms,
            r.seconds,
            r.status
        ));
    }
    s
}

/// Mean RMSE over repeats, per mechanism, as plot series with x = `key(record)`, for the
/// records passing `keep`.
#[cfg(feature = "plots")]
fn rmse_series(
    records: &[ProjectionRecord],
    keep: impl Fn(&ProjectionRecord) -> bool,
    key: impl Fn(&ProjectionRecord) -> f64,
) -> Vec<crate::experiments::plots::Series> {
    crate::experiments::plots::Series::grouped_means(
        records,
        |r| keep(r).then(|| r.mechanism.clone()),
        key,
        |r| r.error.rmse,
    )
}

/// PNG plots of one experiment's records under `out`: `<name>-err-vs-eps.png` (RMSE vs ε at
/// the largest n) and, when there are several n, `<name>-err-vs-n.png` (RMSE vs n at the
/// largest ε); log–log, mean over repeats. Returns the files written.
#[cfg(feature = "plots")]
pub fn write_projection_figures(
    name: &str,
    records: &[ProjectionRecord],
    out: &std::path::Path,
) -> Result<Vec<std::path::PathBuf>> {
    use crate::experiments::plots::LinePlot;
    let mut written = Vec::new();
    let Some(first) = records.first() else {
        return Ok(written);
    };
    let n_max = records.iter().map(|r| r.n).max().unwrap_or(0);
    let eps_max = records.iter().map(|r| r.epsilon).fold(0.0, f64::max);
    let mut ns: Vec<usize> = records.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    let title = format!(
        "{} {} (δ = {:e})",
        first.dataset, first.workload, first.delta
    );
    let vs_eps = LinePlot {
        title: format!("{title}, n = {n_max}"),
        x_label: "ε".into(),
        y_label: "RMSE of the answers".into(),
        log_x: true,
        log_y: true,
        series: rmse_series(records, |r| r.n == n_max, |r| r.epsilon),
    };
    let mut epss: Vec<f64> = records.iter().map(|r| r.epsilon).collect();
    epss.sort_by(f64::total_cmp);
    epss.dedup();
    if epss.len() > 1 {
        let path = out.join(format!("{name}-err-vs-eps.png"));
        vs_eps.write(&path, 800, 560)?;
        written.push(path);
    }
    if ns.len() > 1 {
        let vs_n = LinePlot {
            title: format!("{title}, ε = {eps_max}"),
            x_label: "n (records)".into(),
            y_label: "RMSE of the answers".into(),
            log_x: true,
            log_y: true,
            series: rmse_series(records, |r| r.epsilon == eps_max, |r| r.n as f64),
        };
        let path = out.join(format!("{name}-err-vs-n.png"));
        vs_n.write(&path, 800, 560)?;
        written.push(path);
    }
    Ok(written)
}

/// Re-plots every `projection-*.jsonl` result file found in `out` (the entry point of
/// `cargo xtask figures`). Returns the files written.
#[cfg(feature = "plots")]
pub fn figures_from_results(out: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for (name, records) in
        crate::experiments::plots::read_result_files::<ProjectionRecord>(out, "projection-")?
    {
        written.extend(write_projection_figures(&name, &records, out)?);
    }
    Ok(written)
}
