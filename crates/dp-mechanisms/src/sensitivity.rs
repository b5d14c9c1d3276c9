//! Sensitivities of workloads under a neighbouring relation — computed here and nowhere
//! else.
//!
//! Every mechanism of this crate takes its sensitivity from this module, so a wrong
//! sensitivity is a bug in one place, pinned by the tests below against values derived by
//! hand.
//!
//! ## Marginal workloads, in **count** units
//!
//! A workload of `m` marginal tables answered as raw counts. A record contributes exactly one
//! to exactly one cell of each table.
//!
//! * **Replace-one** (public `n`; the default of seeds 003 and 004): changing one record
//!   moves one unit from a cell to another cell of each table (or leaves the table unchanged
//!   when both records agree on its attributes). Per table the change has ℓ1 norm ≤ 2 and
//!   squared ℓ2 norm ≤ 2, so over the workload Δ₁ = 2m and Δ₂² = 2m. Both are attained by a
//!   pair of records that differ in every attribute.
//! * **Add/remove**: adding or removing a record changes one cell of each table by one, so
//!   Δ₁ = m and Δ₂² = m.
//!
//! Answers normalised by `n` (fractions) have these sensitivities divided by `n`; this is
//! valid only under replace-one, where `n` is public.

use dp_core::Neighbouring;
use dp_queries::MarginalWorkload;
use serde::{Deserialize, Serialize};

/// The ℓ1 and ℓ2 sensitivities of an integer-valued (count) query vector.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountSensitivity {
    /// Δ₁ = max over neighbours of ‖q(D) − q(D′)‖₁, an integer.
    pub l1: u64,
    /// Δ₂² = max over neighbours of ‖q(D) − q(D′)‖₂², an integer.
    pub l2_squared: u64,
}

impl CountSensitivity {
    /// Δ₂ as a float (the square root of an integer; only used for reporting).
    pub fn l2(&self) -> f64 {
        (self.l2_squared as f64).sqrt()
    }
}

/// Sensitivity of the count vector of a marginal workload (all its tables' cells) under
/// `neighbouring`. See the module documentation for the derivation.
pub fn marginal_count_sensitivity(
    workload: &MarginalWorkload,
    neighbouring: Neighbouring,
) -> CountSensitivity {
    let m = workload.len() as u64;
    match neighbouring {
        Neighbouring::ReplaceOne => CountSensitivity {
            l1: 2 * m,
            l2_squared: 2 * m,
        },
        Neighbouring::AddRemove => CountSensitivity {
            l1: m,
            l2_squared: m,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_queries::{Dataset, Domain};

    fn small_workload() -> (Domain, MarginalWorkload) {
        let domain = Domain::new(vec![
            ("a".to_string(), 3),
            ("b".to_string(), 2),
            ("c".to_string(), 4),
        ])
        .unwrap();
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        (domain, w)
    }

    /// Brute force: the largest ℓ1 and squared ℓ2 change of the count vector over every
    /// replace-one and add/remove neighbour of a small dataset, over every pair of records of
    /// the universe. The analytic formula must equal it (the bound is attained).
    #[test]
    fn marginal_sensitivity_matches_brute_force() {
        let (domain, w) = small_workload();
        let base_cols = vec![vec![0u32, 1, 2], vec![0u32, 1, 0], vec![3u32, 2, 1]];
        let base = Dataset::from_columns(domain.clone(), base_cols.clone()).unwrap();
        let base_counts = w.count_all(&base).unwrap();
        let mut universe = Vec::new();
        for a in 0..3u32 {
            for b in 0..2u32 {
                for c in 0..4u32 {
                    universe.push([a, b, c]);
                }
            }
        }
        let diff = |other: &[u64]| {
            let mut l1 = 0u64;
            let mut l2 = 0u64;
            for (x, y) in base_counts.iter().zip(other) {
                let d = x.abs_diff(*y);
                l1 += d;
                l2 += d * d;
            }
            (l1, l2)
        };
        // replace-one: replace record 0 by every universe element.
        let (mut max_l1, mut max_l2) = (0, 0);
        for rec in &universe {
            let mut cols = base_cols.clone();
            for (j, col) in cols.iter_mut().enumerate() {
                col[0] = rec[j];
            }
            let d = Dataset::from_columns(domain.clone(), cols).unwrap();
            let (l1, l2) = diff(&w.count_all(&d).unwrap());
            max_l1 = max_l1.max(l1);
            max_l2 = max_l2.max(l2);
        }
        let s = marginal_count_sensitivity(&w, Neighbouring::ReplaceOne);
        assert_eq!((s.l1, s.l2_squared), (max_l1, max_l2));
        assert_eq!(s.l1, 6); // 3 two-way tables, by hand: 2 per table
        // add/remove: add every universe element.
        let (mut max_l1, mut max_l2) = (0, 0);
        for rec in &universe {
            let mut cols = base_cols.clone();
            for (j, col) in cols.iter_mut().enumerate() {
                col.push(rec[j]);
            }
            let d = Dataset::from_columns(domain.clone(), cols).unwrap();
            let (l1, l2) = diff(&w.count_all(&d).unwrap());
            max_l1 = max_l1.max(l1);
            max_l2 = max_l2.max(l2);
        }
        let s = marginal_count_sensitivity(&w, Neighbouring::AddRemove);
        assert_eq!((s.l1, s.l2_squared), (max_l1, max_l2));
        assert_eq!(s.l1, 3);
    }
}
