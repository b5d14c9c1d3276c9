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

use crate::{Result, datasets};
use dp_core::{PrivacyLoss, seeded_rng, stream_rng};
use dp_mechanisms::iterative::{
    DualQueryConfig, FreeAttributes, MaxCspOracle, dual_query, max_rounds,
};
use dp_mechanisms::{DualQueryParams, GaussianParams, IcParams, Mechanism, MwemParams};
use dp_queries::{
    BitColumns, ConjunctionWorkload, Domain, ErrorReport, MarginalWorkload, QueryKind,
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
    /// The larger grid (minutes on 2 cores).
    Full,
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
        for (name, mech, delta, params) in mechs {
            let rel = mech.release(&subset, &workload, &mut stream_rng(11, i as u64))?;
            let rep = ErrorReport::compute(&workload, &rel.answers, &truth)?;
            let r = IterativeRecord {
                experiment: "mwem-vs-dq".into(),
                method: name.into(),
                d: subset.domain().len(),
                n: subset.n(),
                queries: workload.num_queries(),
                epsilon: e,
                delta,
                params: format!("{params} {}", rel.diagnostics.notes.join("; ")),
                repeat: 0,
                mean_error: rep.mean_abs,
                max_error: rep.max_abs,
                seconds: rel.diagnostics.wall_seconds,
            };
            on(&r);
            out.push(r);
        }
    }
    Ok(out)
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
