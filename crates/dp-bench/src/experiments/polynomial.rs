//! The polynomial release (Thaler, Ullman and Vadhan 2012) in `cargo xtask bench --only
//! polynomial`: error and time against k.
//!
//! * **Marginals.** nltcs and acs (bundled, binary), all k-way marginals for
//!   `k ∈ {2, 3, 4, 5}` (every cell a conjunction): the polynomial release at its default
//!   certified error α = 0.05 (for `k ≤ 5` that is exact interpolation, degree `k`) and at
//!   every lower degree from 2 (the minimax polynomial of OR, "poly deg D"), against the
//!   Gaussian baseline on all k-way cells and the projection mechanism (Błasiok, Bun,
//!   Nikolov and Steinke 2019) where its universe is small enough to run in the bench
//!   (nltcs, 2¹⁶ records, k ≤ 3). Every mechanism spends the same zCDP budget ρ (from
//!   (ε, δ) = (1, 10⁻⁹)) under replace-one neighbours.
//! * **Thresholds.** nltcs, 200 random monotone 3-of-6 and 2-of-6 queries (six distinct
//!   attributes, literal "attribute = 1"): polynomial against the Gaussian baseline.
//!   Also the polynomial at α = 0.25.
//! * **Decision lists.** A synthetic database ([`synthetic_decision_lists`], n = 20 000,
//!   m = 10, L = 4) queried at every point of `{0,1}^10`: the Gaussian baseline against the
//!   polynomial release at α = 0.05, at degree 2 and exact.
//!
//! Errors are absolute errors of normalised answers (mean and maximum over the queries);
//! seconds are wall-clock of the release alone.

use std::time::Instant;

use dp_core::{Neighbouring, PrivacyLoss, seeded_rng};
use dp_mechanisms::polynomial::{Approximation, PolynomialParams};
use dp_mechanisms::{GaussianParams, Mechanism, PostProcessing};
use dp_queries::{
    AnyWorkload, Dataset, DecisionListWorkload, Literal, MarginalWorkload, ThresholdQuery,
    ThresholdWorkload, Workload,
};
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::Result;
use crate::experiments::projection::load_dataset;
use crate::registry::build_mechanism;

/// One measured release.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PolynomialRow {
    /// Dataset name.
    pub dataset: String,
    /// The workload in words.
    pub workload: String,
    /// Number of queries.
    pub queries: usize,
    /// Mechanism name.
    pub mechanism: String,
    /// What the mechanism's diagnostics say of its size (degree, coefficients), if any.
    pub detail: String,
    /// Mean absolute error over the queries.
    pub mean_error: f64,
    /// Maximum absolute error over the queries.
    pub max_error: f64,
    /// Seconds of the release.
    pub seconds: f64,
}

/// The budget every mechanism of the grid spends.
fn budget() -> Result<PrivacyLoss> {
    Ok(PrivacyLoss::approx(1.0, 1e-9)?)
}

fn errors(answers: &[f64], exact: &[i64], n: usize) -> (f64, f64) {
    let mut sum = 0.0;
    let mut max = 0.0f64;
    for (a, c) in answers.iter().zip(exact) {
        let e = (a - *c as f64 / n as f64).abs();
        sum += e;
        max = max.max(e);
    }
    (sum / answers.len().max(1) as f64, max)
}

/// Releases `workload` with `mech` and measures it.
fn measure<W: Workload>(
    dataset: &str,
    label: &str,
    name: &str,
    mech: &dyn Mechanism<W>,
    data: &Dataset,
    workload: &W,
    exact: &[i64],
) -> Result<PolynomialRow> {
    let t = Instant::now();
    let r = mech.release(data, workload, &mut seeded_rng(1))?;
    let seconds = t.elapsed().as_secs_f64();
    let (mean_error, max_error) = errors(&r.answers, exact, data.n());
    let detail = if name.starts_with("poly") {
        r.diagnostics.notes.first().cloned().unwrap_or_default()
    } else {
        String::new()
    };
    Ok(PolynomialRow {
        dataset: dataset.to_string(),
        workload: label.to_string(),
        queries: workload.num_queries(),
        mechanism: name.to_string(),
        detail,
        mean_error,
        max_error,
        seconds,
    })
}

/// A synthetic decision-list database: `n` lists of length `length` over `variables`
/// inputs. Each position tests a uniformly random literal (variable and sign), or nothing
/// with probability 1/4; outputs and the default are fair bits. Seeded, so reproducible.
pub fn synthetic_decision_lists(
    n: usize,
    variables: usize,
    length: usize,
    seed: u64,
) -> Result<Dataset> {
    let domain = DecisionListWorkload::domain_for(variables, length)?;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let none = 2 * variables as u32;
    let mut columns: Vec<Vec<u32>> = vec![Vec::with_capacity(n); 2 * length + 1];
    for _ in 0..n {
        for i in 0..length {
            let test = if rng.random_range(0..4u32) == 0 {
                none
            } else {
                rng.random_range(0..none)
            };
            columns[2 * i].push(test);
            columns[2 * i + 1].push(rng.random_range(0..2u32));
        }
        columns[2 * length].push(rng.random_range(0..2u32));
    }
    Ok(Dataset::from_columns(domain, columns)?)
}

/// Runs the grid (`quick`: nltcs only, k ≤ 3), calling `on_row` after each release.
pub fn run_polynomial(quick: bool, mut on_row: impl FnMut(&PolynomialRow)) -> Result<()> {
    let budget = budget()?;
    let datasets: &[&str] = if quick { &["nltcs"] } else { &["nltcs", "acs"] };
    let max_k = if quick { 3 } else { 5 };
    let gauss = GaussianParams::new(budget).check()?;
    let poly = PolynomialParams::new(budget).check()?;
    for &name in datasets {
        let data = load_dataset(name)?;
        for k in 2..=max_k {
            let workload = MarginalWorkload::parse_spec(data.domain(), &format!("all-{k}way"), 0)?;
            let exact = Workload::count_all(&workload, &data)?;
            let label = format!("all {k}-way marginals");
            on_row(&measure(
                name, &label, "gaussian", &gauss, &data, &workload, &exact,
            )?);
            on_row(&measure(
                name,
                &label,
                "polynomial",
                &poly,
                &data,
                &workload,
                &exact,
            )?);
            // below the exact degree: the minimax polynomial of OR at degrees 2..k−1
            for degree in 2..k {
                let lower = PolynomialParams {
                    approximation: Approximation::Degree(degree),
                    ..PolynomialParams::new(budget)
                }
                .check()?;
                on_row(&measure(
                    name,
                    &label,
                    &format!("poly deg {degree}"),
                    &lower,
                    &data,
                    &workload,
                    &exact,
                )?);
            }
            if name == "nltcs" && k <= 3 {
                let proj = build_mechanism(
                    "projection",
                    budget,
                    Neighbouring::ReplaceOne,
                    PostProcessing::None,
                )?;
                on_row(&measure(
                    name,
                    &label,
                    "projection",
                    proj.as_ref(),
                    &data,
                    &workload,
                    &exact,
                )?);
            }
        }
    }
    // thresholds on nltcs
    let data = load_dataset("nltcs")?;
    let d = data.domain().len();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(13);
    for k in [2u32, 3] {
        let queries: Vec<ThresholdQuery> = (0..200)
            .map(|_| {
                let mut attrs: Vec<u32> = (0..d as u32).collect();
                for i in 0..6 {
                    let j = rng.random_range(i..attrs.len());
                    attrs.swap(i, j);
                }
                ThresholdQuery {
                    k,
                    literals: attrs[..6]
                        .iter()
                        .map(|&a| Literal { attr: a, value: 1 })
                        .collect(),
                }
            })
            .collect();
        let w = ThresholdWorkload::new(data.domain(), queries)?;
        let exact = Workload::count_all(&w, &data)?;
        let label = format!("200 random {k}-of-6 thresholds");
        on_row(&measure(
            "nltcs", &label, "gaussian", &gauss, &data, &w, &exact,
        )?);
        let any = AnyWorkload::Thresholds(w);
        on_row(&measure(
            "nltcs",
            &label,
            "polynomial",
            &poly,
            &data,
            &any,
            &exact,
        )?);
        let coarse = PolynomialParams {
            approximation: Approximation::Chebyshev { alpha: 0.25 },
            ..PolynomialParams::new(budget)
        }
        .check()?;
        on_row(&measure(
            "nltcs",
            &label,
            "poly α=0.25",
            &coarse,
            &data,
            &any,
            &exact,
        )?);
    }
    // decision lists
    let (m, length) = (10, 4);
    let data = synthetic_decision_lists(20_000, m, length, 7)?;
    let points: Vec<Vec<bool>> = (0..1u32 << m)
        .map(|b| (0..m).map(|v| b >> v & 1 == 1).collect())
        .collect();
    let w = DecisionListWorkload::new(data.domain(), points)?;
    let exact = Workload::count_all(&w, &data)?;
    let label = "synthetic decision lists (n = 20000, m = 10, L = 4)";
    on_row(&measure(
        label,
        "every point of {0,1}^10",
        "gaussian",
        &gauss,
        &data,
        &w,
        &exact,
    )?);
    let any = AnyWorkload::DecisionLists(w);
    for (name, approximation) in [
        ("polynomial", Approximation::Chebyshev { alpha: 0.05 }),
        ("poly deg 2", Approximation::Degree(2)),
        ("poly exact", Approximation::Exact),
    ] {
        let mech = PolynomialParams {
            approximation,
            ..PolynomialParams::new(budget)
        }
        .check()?;
        on_row(&measure(
            label,
            "every point of {0,1}^10",
            name,
            &mech,
            &data,
            &any,
            &exact,
        )?);
    }
    Ok(())
}

/// Runs the grid, writes one JSON line per release to `out/polynomial[-quick].jsonl` and
/// prints the table.
pub fn run_and_report(quick: bool, out: &std::path::Path) -> Result<()> {
    use std::io::Write;
    let path = out.join(if quick {
        "polynomial-quick.jsonl"
    } else {
        "polynomial.jsonl"
    });
    let mut file = std::fs::File::create(&path).map_err(crate::io_error(&path))?;
    let mut write_error = None;
    println!(
        "{:<10} {:<32} {:>8} {:<11} {:>9} {:>9} {:>8}",
        "dataset", "workload", "queries", "mechanism", "mean err", "max err", "seconds"
    );
    run_polynomial(quick, |r| {
        let dataset: String = r.dataset.chars().take(10).collect();
        println!(
            "{dataset:<10} {:<32} {:>8} {:<11} {:>9.5} {:>9.5} {:>8.2}",
            r.workload, r.queries, r.mechanism, r.mean_error, r.max_error, r.seconds
        );
        if !r.detail.is_empty() {
            println!("{:>12}{}", "", r.detail);
        }
        if let Ok(line) = serde_json::to_string(r)
            && let Err(e) = writeln!(file, "{line}")
        {
            write_error.get_or_insert(e);
        }
    })?;
    if let Some(e) = write_error {
        return Err(crate::io_error(&path)(e));
    }
    Ok(())
}
