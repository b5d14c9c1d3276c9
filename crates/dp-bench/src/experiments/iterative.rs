//! The iterative family's benchmark: a scaled-down replication of seed 003 §7 (DualQuery)
//! and the MWEM comparison of its Fig. 5, run by `cargo xtask bench`.
//!
//! * `dq-adult`: adult one-hot (588 bits from 14 attributes; one-hot constraints respected
//!   by the oracle), random sensible 3-way conjunctions, (ε, 0.001) with η = 2, s = 1000 and
//!   the largest T of Thm 4.3 (the paper's Fig. 2 setting), mean and max error, with the
//!   all-zeros and uniform baselines.
//! * `dq-synthetic`: the biased synthetic data of §7 (bias p_i ~ U[0, 1] per binary
//!   attribute), random 3-way conjunctions with literals of either sign, (1, 0.001),
//!   η = 0.4, s growing with d; error, time, and the zeros/uniform baselines (analytic
//!   expectations 7/32 and ≈ 0.11 in the paper).
//! * `mwem-vs-dq`: a 7-attribute subset of adult (|𝒳| = 120 960), all 3-way marginals,
//!   pure ε: MWEM (T = 15), DualQuery (η = 0.4, s = 35…55, T from Thm 4.2), IC-MW, and the
//!   Gaussian baseline at (ε, 1e-6).
//!
//! Each run yields an [`IterativeRecord`] (JSON line).

use std::time::Instant;

use crate::Result;
use crate::io::datasets;
use dp_core::{PrivacyLoss, seeded_rng, stream_rng};
use dp_mechanisms::iterative::{
    DualQueryConfig, FreeAttributes, MaxCspOracle, dual_query, max_rounds,
};
use dp_mechanisms::{DualQueryParams, GaussianParams, IcParams, Mechanism, MwemParams};
use dp_queries::{
    BitColumns, ConjunctionWorkload, Dataset, Domain, ErrorReport, MarginalWorkload, QueryKind,
};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// One run of the iterative bench.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IterativeRecord {
    /// Experiment (`dq-adult`, `dq-synthetic`, `mwem-vs-dq`).
    pub experiment: String,
    /// Method (`dualquery`, `mwem`, `ic-mw`, `gaussian`, `zeros`, `uniform`).
    pub method: String,
    /// Number of (binary) attributes.
    pub d: usize,
    /// Records.
    pub n: usize,
    /// Queries evaluated.
    pub queries: usize,
    /// ε.
    pub epsilon: f64,
    /// δ (0 for pure).
    pub delta: f64,
    /// Parameters used (free text: T, s, η, …).
    pub params: String,
    /// Repetition.
    pub repeat: u64,
    /// Mean absolute error.
    pub mean_error: f64,
    /// Max absolute error.
    pub max_error: f64,
    /// Seconds (mechanism only; query evaluation excluded as in the paper).
    pub seconds: f64,
}

/// One ε of a mechanism comparison on a marginal workload: every mechanism releases with a
/// clone of the same seeded stream and yields one record.
struct MarginalComparison<'a> {
    experiment: &'static str,
    data: &'a Dataset,
    workload: &'a MarginalWorkload,
    truth: &'a [f64],
    epsilon: f64,
    rng: rand_chacha::ChaCha20Rng,
}

impl MarginalComparison<'_> {
    fn record(
        &self,
        mechs: Vec<(&str, Box<dyn Mechanism>, f64, String)>,
        out: &mut Vec<IterativeRecord>,
        on: &mut dyn FnMut(&IterativeRecord),
    ) -> Result<()> {
        for (name, mech, delta, params) in mechs {
            // timed here: a release publishes no timings (Diagnostics docs)
            let start = Instant::now();
            let rel = mech.release(self.data, self.workload, &mut self.rng.clone())?;
            let seconds = start.elapsed().as_secs_f64();
            let rep = ErrorReport::compute(self.workload, &rel.answers, self.truth)?;
            let r = IterativeRecord {
                experiment: self.experiment.into(),
                method: name.into(),
                d: self.data.domain().len(),
                n: self.data.n(),
                queries: self.workload.num_queries(),
                epsilon: self.epsilon,
                delta,
                params: format!("{params} {}", rel.diagnostics.notes.join("; ")),
                repeat: 0,
                mean_error: rep.mean_abs,
                max_error: rep.max_abs,
                seconds,
            };
            on(&r);
            out.push(r);
        }
        Ok(())
    }
}

fn errors(truth: &[f64], got: &[f64]) -> (f64, f64) {
    let mut max = 0.0f64;
    let mut sum = 0.0;
    for (a, b) in truth.iter().zip(got) {
        let e = (a - b).abs();
        max = max.max(e);
        sum += e;
    }
    (sum / truth.len() as f64, max)
}

/// Answers of the zeros record (every one-hot bit 0: a positive conjunction is 0) and of
/// the uniform distribution over the categorical universe (`Π 1/size`).
fn baselines(work: &ConjunctionWorkload, domain: &Domain) -> (Vec<f64>, Vec<f64>) {
    let zeros = vec![0.0; work.len()];
    let uniform = (0..work.len())
        .map(|i| {
            work.query(i)
                .iter()
                .map(|l| 1.0 / f64::from(domain.size(l.attr as usize)))
                .product()
        })
        .collect();
    (zeros, uniform)
}

/// The scale of the grids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Seconds to a minute.
    Quick,
    /// The larger grid (tens of minutes on 2 cores); `cargo xtask bench` runs
    /// [`Scale::Scaling`] after it.
    Full,
    /// The seed 003 §7 scaling experiments of [`run_scaling`].
    Scaling,
}

#[allow(clippy::too_many_arguments)]
fn run_dq(
    exp: &str,
    work: &ConjunctionWorkload,
    truth: &[f64],
    n: usize,
    budget: PrivacyLoss,
    eta: f64,
    samples: usize,
    free: FreeAttributes,
    repeat: u64,
    out: &mut Vec<IterativeRecord>,
    on: &mut dyn FnMut(&IterativeRecord),
) -> Result<()> {
    let rounds = max_rounds(eta, samples, n, &budget, 5000)?;
    let config = DualQueryConfig {
        eta,
        samples,
        rounds,
        free,
    };
    let start = Instant::now();
    let res = dual_query(
        work,
        truth,
        n,
        &config,
        &MaxCspOracle::default(),
        &mut stream_rng(7, repeat),
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let synth = work.answers_of_records(&res.records, &vec![1.0; res.records.len()])?;
    let (mean_error, max_error) = errors(truth, &synth);
    let (epsilon, delta) = match budget {
        PrivacyLoss::Approx { epsilon, delta } => (epsilon, delta),
        PrivacyLoss::Pure { epsilon } => (epsilon, 0.0),
        PrivacyLoss::Zcdp { rho } => (rho, 0.0),
    };
    let r = IterativeRecord {
        experiment: exp.into(),
        method: "dualquery".into(),
        d: work.domain().len(),
        n,
        queries: work.len(),
        epsilon,
        delta,
        params: format!(
            "T={rounds} s={samples} eta={eta} optimal={}/{rounds}",
            res.provably_optimal_rounds
        ),
        repeat,
        mean_error,
        max_error,
        seconds,
    };
    on(&r);
    out.push(r);
    Ok(())
}

fn push_baselines(
    exp: &str,
    work: &ConjunctionWorkload,
    truth: &[f64],
    n: usize,
    out: &mut Vec<IterativeRecord>,
    on: &mut dyn FnMut(&IterativeRecord),
) {
    let (zeros, uniform) = baselines(work, work.domain());
    for (name, ans) in [("zeros", zeros), ("uniform", uniform)] {
        let (mean_error, max_error) = errors(truth, &ans);
        let r = IterativeRecord {
            experiment: exp.into(),
            method: name.into(),
            d: work.domain().len(),
            n,
            queries: work.len(),
            epsilon: 0.0,
            delta: 0.0,
            params: String::new(),
            repeat: 0,
            mean_error,
            max_error,
            seconds: 0.0,
        };
        on(&r);
        out.push(r);
    }
}

/// Runs the three experiments at `scale`, calling `on` after each run.
pub fn run_iterative(
    scale: Scale,
    mut on: impl FnMut(&IterativeRecord),
) -> Result<Vec<IterativeRecord>> {
    let quick = scale == Scale::Quick;
    let mut out = Vec::new();
    let on: &mut dyn FnMut(&IterativeRecord) = &mut on;
    if scale == Scale::Scaling {
        run_scaling(&mut out, on)?;
        return Ok(out);
    }

    // 1. Adult one-hot, random sensible 3-way conjunctions (seed 003 Fig. 2).
    let adult = datasets::bundled("adult")?.load()?;
    let bits = BitColumns::from_dataset(&adult)?;
    let m = if quick { 2_000 } else { 100_000 };
    let work = ConjunctionWorkload::random_kway(
        adult.domain(),
        QueryKind::Conjunction,
        3,
        m,
        &mut seeded_rng(1),
    )?;
    let truth = work.answers(&bits)?;
    push_baselines("dq-adult", &work, &truth, adult.n(), &mut out, on);
    let eps: &[f64] = if quick {
        &[0.25, 1.0, 5.0]
    } else {
        &[0.25, 0.5, 1.0, 2.0, 5.0]
    };
    let repeats = if quick { 1 } else { 5 };
    for &e in eps {
        for rep in 0..repeats {
            run_dq(
                "dq-adult",
                &work,
                &truth,
                adult.n(),
                PrivacyLoss::approx(e, 1e-3)?,
                2.0,
                if quick { 300 } else { 1000 },
                FreeAttributes::Zero,
                rep,
                &mut out,
                on,
            )?;
        }
    }

    // 2. Biased synthetic binary data (seed 003 Fig. 4), scaled down.
    let n = if quick { 5_000 } else { 20_000 };
    let dims: &[usize] = if quick {
        &[50, 500]
    } else {
        &[50, 500, 5_000, 20_000]
    };
    let m = if quick { 5_000 } else { 100_000 };
    for &d in dims {
        let domain = Domain::new((0..d).map(|i| (format!("x{i}"), 2)).collect())?;
        let mut rng = seeded_rng(d as u64);
        let bias: Vec<f64> = (0..d).map(|_| rng.random::<f64>()).collect();
        let mut sampler = seeded_rng(1000 + d as u64);
        let bits = BitColumns::from_fn(&domain, n, |a, _| u32::from(sampler.random_bool(bias[a])))?;
        let work =
            ConjunctionWorkload::random_kway(&domain, QueryKind::Conjunction, 3, m, &mut rng)?;
        let truth = work.answers(&bits)?;
        push_baselines("dq-synthetic", &work, &truth, n, &mut out, on);
        let s = (2 * d).clamp(200, 5_000);
        run_dq(
            "dq-synthetic",
            &work,
            &truth,
            n,
            PrivacyLoss::approx(1.0, 1e-3)?,
            0.4,
            s,
            FreeAttributes::Random,
            0,
            &mut out,
            on,
        )?;
    }

    // 3. MWEM vs DualQuery (seed 003 Fig. 5) on a 7-attribute subset of adult.
    let subset = adult.select_attributes(&[
        "workclass",
        "education-num",
        "marital-status",
        "relationship",
        "race",
        "sex",
        "income>50K",
    ])?;
    let workload = MarginalWorkload::all_kway(subset.domain(), 3)?;
    let truth = workload.answers(&subset)?;
    let eps: &[f64] = if quick {
        &[1.0, 5.0]
    } else {
        &[1.0, 2.0, 3.0, 4.0, 5.0]
    };
    for (i, &e) in eps.iter().enumerate() {
        let s = [35usize, 40, 45, 50, 55][(e as usize).clamp(1, 5) - 1];
        let pure = PrivacyLoss::pure(e)?;
        let mechs: Vec<(&str, Box<dyn Mechanism>, f64, String)> = vec![
            (
                "mwem",
                Box::new(MwemParams::new(pure).check()?),
                0.0,
                "T=15".into(),
            ),
            (
                "dualquery",
                Box::new(DualQueryParams::new(pure).samples(s).eta(0.4).check()?),
                0.0,
                format!("s={s} eta=0.4 T=Thm4.2"),
            ),
            (
                "ic-mw",
                Box::new(IcParams::new(pure).check()?),
                0.0,
                "alpha=Thm5".into(),
            ),
            (
                "gaussian",
                Box::new(GaussianParams::new(PrivacyLoss::approx(e, 1e-6)?).check()?),
                1e-6,
                String::new(),
            ),
        ];
        let run = MarginalComparison {
            experiment: "mwem-vs-dq",
            data: &subset,
            workload: &workload,
            truth: &truth,
            epsilon: e,
            rng: stream_rng(11, i as u64),
        };
        run.record(mechs, &mut out, on)?;
    }
    Ok(out)
}

/// The query counts of the `dq-queries` experiment (seed 003 §7, Fig. 3: 40 000 → 2 000 000).
pub const SCALING_QUERY_COUNTS: [usize; 6] =
    [40_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000];

/// The attribute counts of the `dq-dims` experiment (seed 003 §7, Fig. 4: 50 → 512 000).
pub const SCALING_DIMS: [usize; 5] = [50, 500, 5_000, 50_000, 512_000];

/// Records of the `dq-dims` synthetic data sets.
pub const SCALING_DIMS_N: usize = 20_000;

/// DualQuery runs (independent seeds) per point of the `dq-dims` experiment (the paper
/// averages 3 runs for Fig. 4).
pub const SCALING_DIMS_REPEATS: u64 = 3;

/// The seed 003 §7 scaling experiments, in the order they run:
///
/// * `mwem-vs-dq-10k` (Fig. 5): the 8-attribute adult subset (workclass, education-num,
///   marital-status, occupation, relationship, race, sex, income; |𝒳| = 1 814 400, 62
///   one-hot bits — the paper uses 17 binary attributes) with ≈ 10 000 queries (the cells
///   of 3-way marginals drawn in a seeded random order until ≥ 10 000 cells), pure
///   ε ∈ {1, …, 5}: MWEM (T = 15), DualQuery (η = 0.4, the paper's s = 35…55, T from
///   Thm 4.2) and the Gaussian baseline at (ε, 1e-6).
/// * `dq-queries` (Fig. 3): adult one-hot, 40 000 → 2 000 000 random sensible 3-way
///   conjunctions (prefixes of one seeded draw of 2 000 000), (1, 0.001), the paper's
///   η = 1.2 and s = 1750, T the largest Thm 4.3 allows at adult's n (the paper's T = 170
///   is for KDD99's much larger n).
/// * `dq-dims` (Fig. 4): biased synthetic data (p_i ~ U[0, 1] per attribute),
///   n = [`SCALING_DIMS_N`], 100 000 random 3-way conjunctions, d ∈ [`SCALING_DIMS`],
///   (1, 0.001), η = 0.4, s = clamp(2d, 200, 5000), free attributes random,
///   [`SCALING_DIMS_REPEATS`] runs per d. Only attributes
///   occurring in some query are sampled (the others are set to 0): no query, answer or
///   step of DualQuery depends on them, so errors and mechanism time are unchanged.
///
/// Times are the mechanism's only (query evaluation excluded, as in the paper).
pub fn run_scaling(
    out: &mut Vec<IterativeRecord>,
    on: &mut dyn FnMut(&IterativeRecord),
) -> Result<()> {
    let adult = datasets::bundled("adult")?.load()?;

    // Fig. 5: MWEM vs DualQuery vs Gaussian, ≈ 10 000 queries.
    let subset = adult.select_attributes(&[
        "workclass",
        "education-num",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "income>50K",
    ])?;
    let all = MarginalWorkload::all_kway(subset.domain(), 3)?;
    let mut order: Vec<usize> = (0..all.len()).collect();
    let mut rng = seeded_rng(17);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut chosen = Vec::new();
    let mut cells = 0usize;
    for &i in &order {
        if cells >= 10_000 {
            break;
        }
        let m = all.marginals()[i].clone();
        cells += m.num_cells();
        chosen.push(m);
    }
    let workload = MarginalWorkload::new(subset.domain(), chosen)?;
    let truth = workload.answers(&subset)?;
    for (i, e) in [1.0f64, 2.0, 3.0, 4.0, 5.0].into_iter().enumerate() {
        let s = [35usize, 40, 45, 50, 55][i];
        let pure = PrivacyLoss::pure(e)?;
        let mechs: Vec<(&str, Box<dyn Mechanism>, f64, String)> = vec![
            (
                "mwem",
                Box::new(MwemParams::new(pure).check()?),
                0.0,
                "T=15".into(),
            ),
            (
                "dualquery",
                Box::new(DualQueryParams::new(pure).samples(s).eta(0.4).check()?),
                0.0,
                format!("s={s} eta=0.4 T=Thm4.2"),
            ),
            (
                "gaussian",
                Box::new(GaussianParams::new(PrivacyLoss::approx(e, 1e-6)?).check()?),
                1e-6,
                String::new(),
            ),
        ];
        let run = MarginalComparison {
            experiment: "mwem-vs-dq-10k",
            data: &subset,
            workload: &workload,
            truth: &truth,
            epsilon: e,
            rng: stream_rng(17, i as u64),
        };
        run.record(mechs, out, on)?;
    }

    // Fig. 3: number of queries, adult one-hot.
    let bits = BitColumns::from_dataset(&adult)?;
    let max_m = SCALING_QUERY_COUNTS[SCALING_QUERY_COUNTS.len() - 1];
    let big = ConjunctionWorkload::random_kway(
        adult.domain(),
        QueryKind::Conjunction,
        3,
        max_m,
        &mut seeded_rng(3),
    )?;
    let big_truth = big.answers(&bits)?;
    drop(bits);
    for &m in &SCALING_QUERY_COUNTS {
        let work = if m == max_m {
            big.clone()
        } else {
            ConjunctionWorkload::new(
                adult.domain(),
                QueryKind::Conjunction,
                (0..m).map(|i| big.query(i).to_vec()).collect(),
            )?
        };
        let truth = &big_truth[..m];
        if m == max_m {
            push_baselines("dq-queries", &work, truth, adult.n(), out, on);
        }
        run_dq(
            "dq-queries",
            &work,
            truth,
            adult.n(),
            PrivacyLoss::approx(1.0, 1e-3)?,
            1.2,
            1750,
            FreeAttributes::Zero,
            0,
            out,
            on,
        )?;
    }
    drop(big);

    // Fig. 4: dimension, biased synthetic data.
    let n = SCALING_DIMS_N;
    for &d in &SCALING_DIMS {
        let domain = Domain::new((0..d).map(|i| (format!("x{i}"), 2)).collect())?;
        let mut rng = seeded_rng(d as u64);
        let bias: Vec<f64> = (0..d).map(|_| rng.random::<f64>()).collect();
        let work = ConjunctionWorkload::random_kway(
            &domain,
            QueryKind::Conjunction,
            3,
            100_000,
            &mut rng,
        )?;
        let mut used = vec![false; d];
        for i in 0..work.len() {
            for l in work.query(i) {
                used[l.attr as usize] = true;
            }
        }
        let mut sampler = seeded_rng(1000 + d as u64);
        let bits = BitColumns::from_fn(&domain, n, |a, _| {
            u32::from(used[a] && sampler.random_bool(bias[a]))
        })?;
        let truth = work.answers(&bits)?;
        drop(bits);
        push_baselines("dq-dims", &work, &truth, n, out, on);
        for rep in 0..SCALING_DIMS_REPEATS {
            run_dq(
                "dq-dims",
                &work,
                &truth,
                n,
                PrivacyLoss::approx(1.0, 1e-3)?,
                0.4,
                (2 * d).clamp(200, 5_000),
                FreeAttributes::Random,
                rep,
                out,
                on,
            )?;
        }
    }
    Ok(())
}

/// Writes the plot data of the scaling experiments as CSV files in `dir`
/// (`iterative-queries.csv`, `iterative-dims.csv`, `iterative-mwem-vs-dq.csv`: one row per
/// run, `x,method,mean_error,max_error,seconds`, x = queries, d or ε). Plots are drawn from
/// these once dp-bench has a plotting module.
pub fn write_plot_data(records: &[IterativeRecord], dir: &std::path::Path) -> Result<()> {
    for (exp, file) in [
        ("dq-queries", "iterative-queries.csv"),
        ("dq-dims", "iterative-dims.csv"),
        ("mwem-vs-dq-10k", "iterative-mwem-vs-dq.csv"),
    ] {
        let rows: Vec<&IterativeRecord> = records.iter().filter(|r| r.experiment == exp).collect();
        if rows.is_empty() {
            continue;
        }
        let mut text = String::from("x,method,mean_error,max_error,seconds\n");
        for r in rows {
            let x = match exp {
                "dq-queries" => r.queries as f64,
                "dq-dims" => r.d as f64,
                _ => r.epsilon,
            };
            text.push_str(&format!(
                "{x},{},{},{},{}\n",
                r.method, r.mean_error, r.max_error, r.seconds
            ));
        }
        let path = dir.join(file);
        std::fs::write(&path, text).map_err(crate::error::io_error(&path))?;
    }
    Ok(())
}

/// The x axis of an experiment's plots: `(label, value of a record, logarithmic)`.
#[cfg(feature = "plots")]
type PlotAxis = (&'static str, fn(&IterativeRecord) -> f64, bool);

#[cfg(feature = "plots")]
fn plot_axis(experiment: &str) -> Option<PlotAxis> {
    Some(match experiment {
        "dq-adult" | "mwem-vs-dq" | "mwem-vs-dq-10k" => ("ε", |r| r.epsilon, false),
        "dq-synthetic" | "dq-dims" => ("d (binary attributes)", |r| r.d as f64, true),
        "dq-queries" => ("number of queries", |r| r.queries as f64, true),
        _ => return None,
    })
}

/// PNG plots of the iterative records under `out`, one set per experiment present
/// (`<name>-<experiment>-mean.png`, `-max.png`: mean / max absolute error against ε, d or
/// the number of queries, mean over repeats, logarithmic error axis; for `dq-queries` and
/// `dq-dims` also `-seconds.png`, DualQuery's time). The data-independent baselines
/// (`zeros`, `uniform`) have no ε; they are drawn as flat lines at their value (the largest
/// query set's value in `dq-queries`, where they are computed once). Returns the files
/// written.
#[cfg(feature = "plots")]
pub fn write_iterative_figures(
    name: &str,
    records: &[IterativeRecord],
    out: &std::path::Path,
) -> Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for (file, plot) in iterative_plots(name, records) {
        let path = out.join(file);
        plot.write(&path, 800, 560)?;
        written.push(path);
    }
    Ok(written)
}

/// The plots of [`write_iterative_figures`] with their file names.
#[cfg(feature = "plots")]
fn iterative_plots(
    name: &str,
    records: &[IterativeRecord],
) -> Vec<(String, crate::experiments::plots::LinePlot)> {
    use crate::experiments::plots::{LinePlot, Series};
    let mut experiments: Vec<&str> = Vec::new();
    for r in records {
        if !experiments.contains(&r.experiment.as_str()) {
            experiments.push(&r.experiment);
        }
    }
    let mut plots_out = Vec::new();
    for exp in experiments {
        let Some((x_label, x_of, log_x)) = plot_axis(exp) else {
            continue;
        };
        let rows: Vec<&IterativeRecord> = records.iter().filter(|r| r.experiment == exp).collect();
        let is_baseline = |r: &IterativeRecord| r.method == "zeros" || r.method == "uniform";
        let mut xs: Vec<f64> = rows
            .iter()
            .filter(|r| !is_baseline(r))
            .map(|r| x_of(r))
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        // baselines without an ε (or computed once) become one point per plotted x
        let flat = exp != "dq-synthetic" && exp != "dq-dims";
        let mut expanded: Vec<IterativeRecord> = Vec::new();
        for r in &rows {
            if is_baseline(r) && flat {
                for &x in &xs {
                    let mut copy = (*r).clone();
                    match exp {
                        "dq-queries" => copy.queries = x as usize,
                        _ => copy.epsilon = x,
                    }
                    expanded.push(copy);
                }
            } else {
                expanded.push((*r).clone());
            }
        }
        let n = rows.first().map(|r| r.n).unwrap_or(0);
        let title = format!("Gaboardi et al. 2014 §7 replication: {exp} (n = {n})");
        let mut plots = vec![
            ("mean", "mean absolute error", {
                Series::grouped_means(
                    &expanded,
                    |r| Some(r.method.clone()),
                    x_of,
                    |r| r.mean_error,
                )
            }),
            ("max", "max absolute error", {
                Series::grouped_means(&expanded, |r| Some(r.method.clone()), x_of, |r| r.max_error)
            }),
        ];
        if exp == "dq-queries" || exp == "dq-dims" {
            plots.push(("seconds", "DualQuery seconds (mechanism only)", {
                Series::grouped_means(
                    &expanded,
                    |r| (r.method == "dualquery").then(|| r.method.clone()),
                    x_of,
                    |r| r.seconds,
                )
            }));
        }
        for (suffix, y_label, series) in plots {
            let plot = LinePlot {
                title: title.clone(),
                x_label: x_label.into(),
                y_label: y_label.into(),
                log_x,
                log_y: true,
                series,
            };
            plots_out.push((format!("{name}-{exp}-{suffix}.png"), plot));
        }
    }
    plots_out
}

/// Reads every `iterative*.jsonl` in `out` (as written by `cargo xtask bench`) and draws
/// each file's plots there with [`write_iterative_figures`], named after the file
/// (`iterative-quick.jsonl` → `iterative-quick-<experiment>-mean.png`, …). Lines that are
/// not records are skipped. Returns the files written.
#[cfg(feature = "plots")]
pub fn iterative_figures_from_results(out: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for (name, records) in
        crate::experiments::plots::read_result_files::<IterativeRecord>(out, "iterative")?
    {
        written.extend(write_iterative_figures(&name, &records, out)?);
    }
    Ok(written)
}

/// A text table of iterative records.
pub fn format_iterative_table(records: &[IterativeRecord]) -> String {
    let mut s = format!(
        "{:<13} {:<10} {:>6} {:>7} {:>6} {:>10} {:>10} {:>8}  params\n",
        "experiment", "method", "d", "queries", "eps", "mean_err", "max_err", "seconds"
    );
    for r in records {
        s.push_str(&format!(
            "{:<13} {:<10} {:>6} {:>7} {:>6} {:>10.4} {:>10.4} {:>8.2}  {}\n",
            r.experiment,
            r.method,
            r.d,
            r.queries,
            r.epsilon,
            r.mean_error,
            r.max_error,
            r.seconds,
            r.params.chars().take(90).collect::<String>()
        ));
    }
    s
}

#[cfg(all(test, feature = "plots"))]
mod tests {
    use super::*;

    fn record(exp: &str, method: &str, epsilon: f64, repeat: u64, mean: f64) -> IterativeRecord {
        IterativeRecord {
            experiment: exp.into(),
            method: method.into(),
            d: 3,
            n: 10,
            queries: 7,
            epsilon,
            delta: 0.0,
            params: String::new(),
            repeat,
            mean_error: mean,
            max_error: 2.0 * mean,
            seconds: 1.0,
        }
    }

    #[test]
    fn figures_average_repeats_and_draw_baselines_flat() {
        let dir = std::env::temp_dir().join(format!("dpqr-iter-figs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let records = vec![
            record("dq-adult", "zeros", 0.0, 0, 0.5),
            record("dq-adult", "dualquery", 1.0, 0, 0.1),
            record("dq-adult", "dualquery", 1.0, 1, 0.3),
            record("dq-adult", "dualquery", 5.0, 0, 0.05),
            record("not-an-experiment", "dualquery", 1.0, 0, 0.1),
        ];
        let lines: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        std::fs::write(dir.join("iterative-test.jsonl"), lines + "garbage\n").unwrap();
        let written = iterative_figures_from_results(&dir).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "iterative-test-dq-adult-mean.png",
                "iterative-test-dq-adult-max.png"
            ]
        );
        for p in &written {
            assert_eq!(&std::fs::read(p).unwrap()[1..4], b"PNG");
        }
        std::fs::remove_dir_all(&dir).ok();

        // the values plotted, by hand: dualquery mean over repeats at ε = 1 is
        // (0.1 + 0.3)/2 = 0.2, at ε = 5 it is 0.05; the zeros baseline is flat at 0.5
        let plots = iterative_plots("x", &records);
        let (_, mean) = &plots[0];
        let by_label = |l: &str| {
            mean.series
                .iter()
                .find(|s| s.label == l)
                .map(|s| s.points.clone())
                .unwrap()
        };
        let dq = by_label("dualquery");
        assert_eq!(dq.len(), 2);
        assert!((dq[0].1 - 0.2).abs() < 1e-15 && dq[0].0 == 1.0);
        assert_eq!(dq[1], (5.0, 0.05));
        assert_eq!(by_label("zeros"), vec![(1.0, 0.5), (5.0, 0.5)]);
    }
}
