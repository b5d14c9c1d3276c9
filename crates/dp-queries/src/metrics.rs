//! Error metrics between released and true **normalized** answers (counts / n).
//!
//! With `e_q = released_q − truth_q` over the `m` queries of a workload:
//! `max_abs = max_q |e_q|` (the worst-case error of seeds 000 §5, 001, 004 §4.3),
//! `mean_abs = (1/m) Σ_q |e_q|`, `rmse = sqrt((1/m) Σ_q e_q²)` (the average ℓ2 error of
//! seed 004), and `mean_marginal_l1 = (1/#tables) Σ_j Σ_{q ∈ table j} |e_q|`, the average
//! ℓ1 distance between released and true tables (the metric of RAP/GEM/seed 003 plots).

use serde::{Deserialize, Serialize};

use crate::error::{QueryError, Result};
use crate::workload::MarginalWorkload;

/// Summary of the error of a release on a marginal workload (see the module docs).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct ErrorReport {
    /// `max_q |released_q − truth_q|`.
    pub max_abs: f64,
    /// `mean_q |released_q − truth_q|`.
    pub mean_abs: f64,
    /// `sqrt(mean_q (released_q − truth_q)²)`.
    pub rmse: f64,
    /// Mean over the marginals of the ℓ1 distance between released and true tables.
    pub mean_marginal_l1: f64,
}

impl ErrorReport {
    /// Computes the report. Both vectors are in workload order with `num_queries()` entries
    /// ([`QueryError::LengthMismatch`] otherwise) and finite ([`QueryError::NonFinite`]).
    pub fn compute(workload: &MarginalWorkload, released: &[f64], truth: &[f64]) -> Result<Self> {
        let m = workload.num_queries();
        for v in [released, truth] {
            if v.len() != m {
                return Err(QueryError::LengthMismatch {
                    expected: m,
                    found: v.len(),
                });
            }
        }
        for (what, v) in [("released", released), ("truth", truth)] {
            if let Some(index) = v.iter().position(|x| !x.is_finite()) {
                return Err(QueryError::NonFinite {
                    what: what.into(),
                    index,
                });
            }
        }
        let mut max_abs = 0f64;
        let mut sum_abs = 0f64;
        let mut sum_sq = 0f64;
        let mut sum_l1 = 0f64;
        for j in 0..workload.len() {
            let range = workload.offset(j)..workload.offset(j + 1);
            let mut l1 = 0f64;
            for (r, t) in released[range.clone()].iter().zip(&truth[range]) {
                let e = (r - t).abs();
                max_abs = max_abs.max(e);
                l1 += e;
                sum_sq += e * e;
            }
            sum_abs += l1;
            sum_l1 += l1;
        }
        let mf = m as f64;
        Ok(ErrorReport {
            max_abs,
            mean_abs: sum_abs / mf,
            rmse: (sum_sq / mf).sqrt(),
            mean_marginal_l1: sum_l1 / workload.len() as f64,
        })
    }
}
