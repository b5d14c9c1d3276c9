//! NON-PRIVATE scoring for `dpqr eval`: answers of weighted records, per-table errors, the
//! trivial baselines and the error predicted from a release's noise.
//!
//! Everything here compares with the true data and is for benchmarking only; nothing is
//! differentially private.
//!
//! * [`weighted_answers`]: the answers of a workload on records with weights — per table,
//!   the weights of the records falling in each cell, divided by the total weight. With all
//!   weights 1 these are the ordinary answers (`count / n`).
//! * [`table_errors`]: per marginal, the ℓ1 distance between released and true tables and the
//!   largest absolute error of a cell.
//! * [`uniform_answers`], [`zero_answers`]: the trivial baselines — every table uniform
//!   (each of a table's `c` cells `1/c`), and every answer 0 — scored like any release.
//! * [`MarginalEvaluation`]: released (or synthetic) answers to a marginal workload and the
//!   two baselines, each scored overall and per table against the truth; its JSON is what
//!   `dpqr eval --json` prints, and what `dpqr.nonprivate.evaluate` returns in Python.
//! * [`Prediction`]: for the answer-perturbation baselines, the error their noise implies
//!   (from the `diagnostics.noise` of a release report), with a stated interval.

use crate::{BenchError, Result};
use dp_mechanisms::{NoiseDescription, NoiseDistribution};
use dp_queries::{Dataset, ErrorReport, MarginalWorkload, Workload};
use serde::Serialize;

/// The answers of a workload of any class on `records`, each weighted by `weights` (or 1 each
/// when `None`), divided by the total weight: the true answers of a dataset, or the answers
/// of a synthetic one.
pub fn class_answers(
    workload: &dyn Workload,
    records: &Dataset,
    weights: Option<&[f64]>,
) -> Result<Vec<f64>> {
    if records.domain() != workload.domain() {
        return Err(BenchError::Mismatch(
            "the records and the workload are over different attributes".into(),
        ));
    }
    let ones;
    let weights = match weights {
        Some(w) => w,
        None => {
            ones = vec![1.0; records.n()];
            &ones
        }
    };
    let rows: Vec<Vec<u32>> = (0..records.n()).map(|r| records.record(r)).collect();
    workload
        .answers_of_records(&rows, weights)
        .map_err(|e| BenchError::InvalidInput(format!("cannot score the records: {e}")))
}

/// The trivial baseline for a workload of any class: its answers on the uniform distribution
/// over the records of the attributes it touches (the other attributes do not matter). `None`
/// when those attributes have more than 2^20 combinations (not enumerated).
pub fn uniform_class_answers(workload: &dyn Workload) -> Option<Vec<f64>> {
    let domain = workload.domain();
    let touched = workload.touched_attributes();
    let mut cells: usize = 1;
    for &a in &touched {
        cells = cells.checked_mul(domain.size(a) as usize)?;
        if cells > 1 << 20 {
            return None;
        }
    }
    let mut answers = vec![0.0; workload.num_queries()];
    let mut record = vec![0u32; domain.len()];
    let share = 1.0 / cells as f64;
    for c in 0..cells {
        let mut rest = c;
        for &a in touched.iter().rev() {
            let size = domain.size(a) as usize;
            record[a] = (rest % size) as u32;
            rest /= size;
        }
        workload.for_each_contribution(&record, &mut |q, w| answers[q] += share * w as f64);
    }
    Some(answers)
}

/// The largest, mean and root-mean-square absolute error of `answers` against `truth`.
pub fn absolute_errors(answers: &[f64], truth: &[f64]) -> Result<[f64; 3]> {
    if answers.len() != truth.len() || answers.is_empty() {
        return Err(BenchError::Mismatch(format!(
            "{} answers for {} true answers",
            answers.len(),
            truth.len()
        )));
    }
    let n = answers.len() as f64;
    let (mut max, mut sum, mut sq) = (0.0f64, 0.0, 0.0);
    for (a, t) in answers.iter().zip(truth) {
        let e = (a - t).abs();
        max = max.max(e);
        sum += e;
        sq += e * e;
    }
    Ok([max, sum / n, (sq / n).sqrt()])
}

/// The answers of `workload` on `records` weighted by `weights` (one per record, finite,
/// non-negative, positive total), in workload order.
pub fn weighted_answers(
    workload: &MarginalWorkload,
    records: &Dataset,
    weights: &[f64],
) -> Result<Vec<f64>> {
    if weights.len() != records.n() {
        return Err(BenchError::Mismatch(format!(
            "{} records but {} weights",
            records.n(),
            weights.len()
        )));
    }
    if records.domain() != workload.domain() {
        return Err(BenchError::Mismatch(
            "the records and the workload are over different attributes".into(),
        ));
    }
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(BenchError::InvalidInput(
            "every weight must be a finite number of at least 0".into(),
        ));
    }
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return Err(BenchError::InvalidInput(
            "the weights sum to zero: the records describe no data".into(),
        ));
    }
    let mut answers = vec![0.0; workload.num_queries()];
    for (j, marginal) in workload.marginals().iter().enumerate() {
        let base = workload.offset(j);
        let columns: Vec<&[u32]> = marginal
            .attrs()
            .iter()
            .map(|&a| records.column(a))
            .collect();
        let mut codes = vec![0u32; columns.len()];
        for (r, w) in weights.iter().enumerate() {
            for (c, col) in codes.iter_mut().zip(&columns) {
                *c = col[r];
            }
            let cell = marginal.try_cell_index(&codes).ok_or_else(|| {
                BenchError::InvalidInput("a record holds a code outside its attribute".into())
            })?;
            answers[base + cell] += w;
        }
    }
    for a in &mut answers {
        *a /= total;
    }
    Ok(answers)
}

/// The error of one marginal table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableError {
    /// The table's attributes, in workload order.
    pub attributes: Vec<String>,
    /// `Σ_cells |released − truth|`, the ℓ1 distance between the tables.
    pub l1: f64,
    /// `max_cells |released − truth|`.
    pub max_abs: f64,
}

/// Per-table errors of `released` against `truth` (both in workload order, one answer per
/// query of `workload`).
pub fn table_errors(
    workload: &MarginalWorkload,
    released: &[f64],
    truth: &[f64],
) -> Result<Vec<TableError>> {
    let m = workload.num_queries();
    if released.len() != m || truth.len() != m {
        return Err(BenchError::Mismatch(format!(
            "{} released and {} true answers for a workload of {m} queries",
            released.len(),
            truth.len()
        )));
    }
    let domain = workload.domain();
    Ok(workload
        .marginals()
        .iter()
        .enumerate()
        .map(|(j, marginal)| {
            let range = workload.offset(j)..workload.offset(j + 1);
            let (mut l1, mut max_abs) = (0f64, 0f64);
            for (r, t) in released[range.clone()].iter().zip(&truth[range]) {
                let e = (r - t).abs();
                l1 += e;
                max_abs = max_abs.max(e);
            }
            TableError {
                attributes: marginal
                    .attrs()
                    .iter()
                    .map(|&a| domain.name(a).to_string())
                    .collect(),
                l1,
                max_abs,
            }
        })
        .collect())
}

/// One set of answers to a marginal workload scored against the truth: overall and per
/// table.
#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    /// The overall errors.
    #[serde(flatten)]
    pub overall: ErrorReport,
    /// The errors of each table, in workload order.
    pub per_marginal: Vec<TableError>,
}

impl Scored {
    /// `answers` scored against `truth` (both one per query of `workload`, in its order).
    pub fn of(workload: &MarginalWorkload, answers: &[f64], truth: &[f64]) -> Result<Self> {
        Ok(Scored {
            overall: ErrorReport::compute(workload, answers, truth)?,
            per_marginal: table_errors(workload, answers, truth)?,
        })
    }
}

/// **NON-PRIVATE.** The answers `dpqr eval` scores — released answers or a synthetic
/// table's — beside the two trivial baselines (every table uniform, every answer 0), each
/// scored against the true answers of a marginal workload.
#[derive(Clone, Debug)]
pub struct MarginalEvaluation {
    /// What was scored: `"released"` answers or `"synthetic"` records.
    pub what: &'static str,
    /// The number of tables.
    pub marginals: usize,
    /// The number of answers.
    pub queries: usize,
    /// The answers scored.
    pub scored: Scored,
    /// The uniform baseline ([`uniform_answers`]).
    pub uniform: Scored,
    /// The all-zeros baseline ([`zero_answers`]).
    pub zeros: Scored,
}

impl MarginalEvaluation {
    /// `answers` (`what` they are: `"released"` or `"synthetic"`) and the baselines scored
    /// against `truth`, the true answers to `workload`.
    pub fn new(
        workload: &MarginalWorkload,
        answers: &[f64],
        truth: &[f64],
        what: &'static str,
    ) -> Result<Self> {
        Ok(MarginalEvaluation {
            what,
            marginals: workload.len(),
            queries: workload.num_queries(),
            scored: Scored::of(workload, answers, truth)?,
            uniform: Scored::of(workload, &uniform_answers(workload), truth)?,
            zeros: Scored::of(workload, &zero_answers(workload), truth)?,
        })
    }

    /// The evaluation as `dpqr eval --json` prints it (without a prediction).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "marginals": self.marginals,
            "queries": self.queries,
            "scored": self.what,
            "max_abs": self.scored.overall.max_abs,
            "mean_abs": self.scored.overall.mean_abs,
            "rmse": self.scored.overall.rmse,
            "mean_marginal_l1": self.scored.overall.mean_marginal_l1,
            "per_marginal": self.scored.per_marginal,
            "baselines": { "uniform": self.uniform, "all_zeros": self.zeros },
        })
    }
}

/// The uniform baseline: every cell of a table with `c` cells answered `1/c`.
pub fn uniform_answers(workload: &MarginalWorkload) -> Vec<f64> {
    let mut answers = Vec::with_capacity(workload.num_queries());
    for marginal in workload.marginals() {
        let c = marginal.num_cells();
        answers.extend(std::iter::repeat_n(1.0 / c as f64, c));
    }
    answers
}

/// The all-zeros baseline: every answer 0.
pub fn zero_answers(workload: &MarginalWorkload) -> Vec<f64> {
    vec![0.0; workload.num_queries()]
}

/// Above this σ (count units) the discrete Gaussian's mean absolute value is taken from the
/// continuous one, σ·√(2/π) (relative difference far below the figures printed).
const EXACT_SUM_MAX_SIGMA: f64 = 1.0e4;

/// `E|X|` of the count noise (count units): exact for the discrete Laplace with scale t
/// (`2q/(1 − q²)`, `q = e^{−1/t}`) and the discrete Gaussian up to σ = 10⁴ (a sum of its
/// probability mass function over ±40σ); σ·√(2/π) above.
pub fn count_mean_abs(noise: &NoiseDescription) -> f64 {
    match noise.distribution {
        NoiseDistribution::DiscreteLaplace => {
            let q = (-1.0 / noise.parameter).exp();
            2.0 * q / (1.0 - q * q)
        }
        NoiseDistribution::DiscreteGaussian => {
            let sigma2 = noise.parameter;
            let sigma = sigma2.sqrt();
            if sigma > EXACT_SUM_MAX_SIGMA {
                return sigma * (2.0 / std::f64::consts::PI).sqrt();
            }
            let limit = (40.0 * sigma).ceil() as i64 + 1;
            let (mut norm, mut first) = (1.0, 0.0);
            for x in (1..=limit).rev() {
                let xf = x as f64;
                let p = (-(xf * xf) / (2.0 * sigma2)).exp();
                norm += 2.0 * p;
                first += 2.0 * p * xf;
            }
            first / norm
        }
    }
}

/// The error the noise of an answer-perturbation release implies for its answers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// How the figure is derived, in words (e.g. `σ·√(2/π)`).
    pub formula: String,
    /// Standard deviation σ of the noise on one answer (`diagnostics.noise.answer_std`).
    pub answer_std: f64,
    /// Expected absolute error of one answer.
    pub expected_mean_abs: f64,
    /// Lower end of the stated interval for the mean absolute error over the answers.
    pub mean_abs_low: f64,
    /// Upper end of the stated interval.
    pub mean_abs_high: f64,
    /// Expected root mean square error (σ).
    pub expected_rmse: f64,
    /// Caveats (normalisation by a noisy total, post-processing).
    pub notes: Vec<String>,
}

impl Prediction {
    /// The prediction for `answers` answers each perturbed by independent noise described by
    /// `noise`; `post_processed` when the release post-processed its answers (the
    /// prediction is then for the answers before post-processing). The interval is the
    /// expectation ± 3 standard deviations of the mean of `answers` independent absolute
    /// errors (about 99.7% by the central limit theorem).
    pub fn new(noise: &NoiseDescription, answers: usize, post_processed: bool) -> Result<Self> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        if !ok(noise.parameter) || !ok(noise.count_std) || !ok(noise.answer_std) || answers == 0 {
            return Err(BenchError::InvalidInput(
                "the report's noise description is incomplete or not positive".into(),
            ));
        }
        let scale = noise.answer_std / noise.count_std; // 1 / the answers' denominator
        let count_abs = count_mean_abs(noise);
        let expected = count_abs * scale;
        let abs_var = (noise.count_std * noise.count_std - count_abs * count_abs).max(0.0);
        let half = 3.0 * abs_var.sqrt() * scale / (answers as f64).sqrt();
        let formula = match noise.distribution {
            NoiseDistribution::DiscreteGaussian => {
                "expected mean abs error ≈ σ·√(2/π) (discrete Gaussian noise, exact mean of |noise|)"
            }
            NoiseDistribution::DiscreteLaplace => {
                "expected mean abs error ≈ σ/√2 (discrete Laplace noise, exact mean of |noise|)"
            }
        };
        let mut notes = Vec::new();
        if noise.normaliser == dp_mechanisms::Normaliser::NoisyTotal {
            notes.push(
                "answers were divided by a noisy total (add/remove neighbours): the figures \
                 ignore that total's own noise"
                    .to_string(),
            );
        }
        if post_processed {
            notes.push(
                "the release post-processed its answers: the prediction is for the answers \
                 before post-processing, which usually lowers the error"
                    .to_string(),
            );
        }
        Ok(Prediction {
            formula: formula.to_string(),
            answer_std: noise.answer_std,
            expected_mean_abs: expected,
            mean_abs_low: (expected - half).max(0.0),
            mean_abs_high: expected + half,
            expected_rmse: noise.answer_std,
            notes,
        })
    }

    /// Whether `mean_abs` lies in the stated interval.
    pub fn contains(&self, mean_abs: f64) -> bool {
        (self.mean_abs_low..=self.mean_abs_high).contains(&mean_abs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_mechanisms::Normaliser;
    use dp_queries::Domain;

    fn tiny() -> (MarginalWorkload, Dataset) {
        let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        let data =
            Dataset::from_columns(d.clone(), vec![vec![0, 0, 1, 1], vec![0, 2, 2, 2]]).unwrap();
        (MarginalWorkload::all_kway(&d, 1).unwrap(), data)
    }

    #[test]
    fn unit_weights_give_the_ordinary_answers_and_weights_count() {
        let (w, data) = tiny();
        let plain = w.answers(&data).unwrap();
        assert_eq!(weighted_answers(&w, &data, &[1.0; 4]).unwrap(), plain);
        // by hand: weights 1,1,2,0 (total 4): a = (2/4, 2/4), b = (1/4, 0, 3/4)
        let got = weighted_answers(&w, &data, &[1.0, 1.0, 2.0, 0.0]).unwrap();
        assert_eq!(got, vec![0.5, 0.5, 0.25, 0.0, 0.75]);
        assert!(weighted_answers(&w, &data, &[1.0; 3]).is_err());
        assert!(weighted_answers(&w, &data, &[0.0; 4]).is_err());
        assert!(weighted_answers(&w, &data, &[1.0, -1.0, 1.0, 1.0]).is_err());
    }

    #[test]
    fn table_errors_and_baselines_by_hand() {
        let (w, data) = tiny();
        let truth = w.answers(&data).unwrap(); // a: .5 .5; b: .25 0 .75
        let uniform = uniform_answers(&w);
        assert_eq!(uniform, vec![0.5, 0.5, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]);
        let e = table_errors(&w, &uniform, &truth).unwrap();
        assert_eq!(e[0].attributes, vec!["a".to_string()]);
        assert_eq!((e[0].l1, e[0].max_abs), (0.0, 0.0));
        // b: |1/3 − 1/4| + 1/3 + |1/3 − 3/4| = 1/12 + 4/12 + 5/12 = 10/12
        assert!((e[1].l1 - 10.0 / 12.0).abs() < 1e-12);
        assert!((e[1].max_abs - 5.0 / 12.0).abs() < 1e-12);
        let z = table_errors(&w, &zero_answers(&w), &truth).unwrap();
        assert_eq!((z[0].l1, z[0].max_abs), (1.0, 0.5));
        assert_eq!((z[1].l1, z[1].max_abs), (1.0, 0.75));
        assert!(table_errors(&w, &truth[1..], &truth).is_err());
    }

    #[test]
    fn predictions_match_the_continuous_formulas_for_wide_noise() {
        let gauss = NoiseDescription::new(NoiseDistribution::DiscreteGaussian, 400.0, 1.0, 100);
        let p = Prediction::new(&gauss, 10_000, false).unwrap();
        // σ = 20 counts, 0.2 per answer; E|X| ≈ σ√(2/π)
        let want = 0.2 * (2.0 / std::f64::consts::PI).sqrt();
        assert!((p.expected_mean_abs - want).abs() < 1e-3 * want, "{p:?}");
        assert!((p.expected_rmse - 0.2).abs() < 1e-3);
        // ±3 sd of the mean of 10 000: 3 · 0.2·√(1 − 2/π) / 100
        let half = 3.0 * 0.2 * (1.0 - 2.0 / std::f64::consts::PI).sqrt() / 100.0;
        assert!((p.mean_abs_high - p.expected_mean_abs - half).abs() < 1e-3 * half);
        assert!(p.contains(want) && !p.contains(want * 1.1));
        let lap = NoiseDescription::new(NoiseDistribution::DiscreteLaplace, 50.0, 1.0, 100);
        let p = Prediction::new(&lap, 100, true).unwrap();
        // σ ≈ 50√2 counts: E|X| ≈ σ/√2 = 50 counts, 0.5 per answer
        assert!((p.expected_mean_abs - 0.5).abs() < 1e-3, "{p:?}");
        assert_eq!(p.notes.len(), 1);
        let noisy = NoiseDescription {
            normaliser: Normaliser::NoisyTotal,
            ..lap
        };
        assert_eq!(Prediction::new(&noisy, 100, false).unwrap().notes.len(), 1);
    }

    #[test]
    fn discrete_mean_abs_is_exact_for_narrow_noise() {
        // discrete Laplace t = 1: q = 1/e, E|X| = 2q/(1 − q²)
        let q = (-1f64).exp();
        let lap = NoiseDescription::new(NoiseDistribution::DiscreteLaplace, 1.0, 1.0, 10);
        assert!((count_mean_abs(&lap) - 2.0 * q / (1.0 - q * q)).abs() < 1e-12);
        // discrete Gaussian σ² = 1/4: E|X| = 2Σ x e^{−2x²} / (1 + 2Σ e^{−2x²}) by hand
        let terms: Vec<f64> = (1..10).map(|x| (-2.0 * f64::from(x * x)).exp()).collect();
        let num: f64 = (1..10)
            .zip(&terms)
            .map(|(x, p)| 2.0 * f64::from(x) * p)
            .sum();
        let den = 1.0 + 2.0 * terms.iter().sum::<f64>();
        let g = NoiseDescription::new(NoiseDistribution::DiscreteGaussian, 0.25, 1.0, 10);
        assert!((count_mean_abs(&g) - num / den).abs() < 1e-12);
    }
}
