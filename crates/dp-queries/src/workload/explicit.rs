//! Explicit linear queries: [`ExplicitWorkload`], an integer matrix of weights over the cells
//! of some attributes, its contribution bounds computed from the matrix, and its
//! `impl Workload`.

use super::{AnswerLayout, ContributionBounds, QueryClass, Workload};
use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// Largest number of cells an [`ExplicitWorkload`] may range over.
pub const MAX_EXPLICIT_CELLS: usize = 1 << 20;
/// Largest number of matrix entries (queries × cells) of an [`ExplicitWorkload`].
pub const MAX_EXPLICIT_ENTRIES: usize = 1 << 26;
/// Up to this many cells the replace-one bounds of an [`ExplicitWorkload`] are computed
/// exactly over all pairs of cells; above it they are the triangle bound (twice the
/// add/remove bound, capped by the exact per-query ranges).
pub const EXACT_PAIR_CELLS: usize = 1 << 11;

/// Explicit linear queries: an integer matrix whose row `q` gives `w_q(x)` for every cell of
/// the product of some attributes (row-major over their codes, the last attribute varying
/// fastest, as for a marginal table). A general linear query workload in the sense of
/// Hardt, Ligett and McSherry 2012 (MWEM), restricted to integer weights so counts are exact.
///
/// Contribution bounds are computed from the matrix: the add/remove bounds exactly (max over
/// cells of the column's ℓ1 norm and squared ℓ2 norm); the replace-one bounds exactly over
/// all pairs of cells when there are at most [`EXACT_PAIR_CELLS`] cells, otherwise by the
/// triangle inequality (`‖w(x) − w(x′)‖ ≤ ‖w(x)‖ + ‖w(x′)‖`), capped by `Σ_q range_q`
/// (ℓ1) and `Σ_q range_q²` (ℓ2²) where `range_q = max_x w_q(x) − min_x w_q(x)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplicitWorkload {
    domain: Domain,
    attrs: Vec<usize>,
    strides: Vec<usize>,
    cells: usize,
    /// Row-major `queries × cells`.
    weights: Vec<i64>,
    bounds: ContributionBounds,
}

impl ExplicitWorkload {
    /// The workload of the rows of `matrix` (each of length = the number of cells of
    /// `attrs`) over the attributes `attrs` (distinct, in range; at least one row).
    ///
    /// Errors: bad attributes, rows of the wrong length, too many cells or entries.
    pub fn new(domain: &Domain, attrs: Vec<usize>, matrix: Vec<Vec<i64>>) -> Result<Self> {
        let bad = |reason: String| QueryError::BadWorkload { reason };
        if attrs.is_empty() {
            return Err(bad(
                "an explicit workload needs at least one attribute".into()
            ));
        }
        if matrix.is_empty() {
            return Err(bad("an explicit workload needs at least one query".into()));
        }
        for (i, &a) in attrs.iter().enumerate() {
            if a >= domain.len() {
                return Err(QueryError::AttributeOutOfRange {
                    index: a,
                    len: domain.len(),
                });
            }
            if attrs[..i].contains(&a) {
                return Err(bad(format!(
                    "attribute '{}' is listed twice",
                    domain.name(a)
                )));
            }
        }
        let mut cells: usize = 1;
        for &a in &attrs {
            cells = cells
                .checked_mul(domain.size(a) as usize)
                .filter(|&c| c <= MAX_EXPLICIT_CELLS)
                .ok_or_else(|| QueryError::TooLarge {
                    what: "the explicit workload's cells".into(),
                    estimate: format!("more than {MAX_EXPLICIT_CELLS}"),
                })?;
        }
        if matrix.len().saturating_mul(cells) > MAX_EXPLICIT_ENTRIES {
            return Err(QueryError::TooLarge {
                what: "the explicit query matrix".into(),
                estimate: format!(
                    "{} queries × {cells} cells, more than {MAX_EXPLICIT_ENTRIES} entries",
                    matrix.len()
                ),
            });
        }
        let mut weights = Vec::with_capacity(matrix.len() * cells);
        for (q, row) in matrix.iter().enumerate() {
            if row.len() != cells {
                return Err(bad(format!(
                    "query #{q} has {} weights; the attributes have {cells} cells",
                    row.len()
                )));
            }
            weights.extend_from_slice(row);
        }
        let mut strides = vec![1usize; attrs.len()];
        for i in (0..attrs.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * domain.size(attrs[i + 1]) as usize;
        }
        let k = matrix.len();
        let bounds = explicit_bounds(&weights, k, cells)?;
        Ok(ExplicitWorkload {
            domain: domain.clone(),
            attrs,
            strides,
            cells,
            weights,
            bounds,
        })
    }

    /// The attributes the matrix ranges over, in matrix order.
    pub fn attrs(&self) -> &[usize] {
        &self.attrs
    }

    /// Weight of query `q` on cell `c`.
    pub fn weight(&self, q: usize, c: usize) -> i64 {
        self.weights[q * self.cells + c]
    }

    fn cell_of(&self, record: &[u32]) -> Option<usize> {
        let mut c = 0;
        for (&a, &s) in self.attrs.iter().zip(&self.strides) {
            let v = *record.get(a)?;
            if v >= self.domain.size(a) {
                return None;
            }
            c += v as usize * s;
        }
        Some(c)
    }
}

/// The [`ContributionBounds`] of an explicit matrix (docs of [`ExplicitWorkload`]).
fn explicit_bounds(weights: &[i64], k: usize, cells: usize) -> Result<ContributionBounds> {
    let overflow = || QueryError::TooLarge {
        what: "the explicit workload's sensitivity".into(),
        estimate: "beyond 2^64".into(),
    };
    let col = |c: usize| (0..k).map(move |q| weights[q * cells + c]);
    let (mut l1, mut l2) = (0u64, 0u64);
    for c in 0..cells {
        let mut a = 0u64;
        let mut b = 0u64;
        for w in col(c) {
            let u = w.unsigned_abs();
            a = a.checked_add(u).ok_or_else(overflow)?;
            b = b
                .checked_add(u.checked_mul(u).ok_or_else(overflow)?)
                .ok_or_else(overflow)?;
        }
        l1 = l1.max(a);
        l2 = l2.max(b);
    }
    let (change_l1, change_l2) = if cells <= EXACT_PAIR_CELLS {
        let (mut c1, mut c2) = (0u64, 0u64);
        for x in 0..cells {
            for y in (x + 1)..cells {
                let mut a = 0u64;
                let mut b = 0u64;
                for q in 0..k {
                    let d = (i128::from(weights[q * cells + x])
                        - i128::from(weights[q * cells + y]))
                    .unsigned_abs();
                    let d = u64::try_from(d).map_err(|_| overflow())?;
                    a = a.checked_add(d).ok_or_else(overflow)?;
                    b = b
                        .checked_add(d.checked_mul(d).ok_or_else(overflow)?)
                        .ok_or_else(overflow)?;
                }
                c1 = c1.max(a);
                c2 = c2.max(b);
            }
        }
        (c1, c2)
    } else {
        let (mut r1, mut r2) = (0u64, 0u64);
        for q in 0..k {
            let row = &weights[q * cells..(q + 1) * cells];
            let (lo, hi) = row
                .iter()
                .fold((i64::MAX, i64::MIN), |(lo, hi), &w| (lo.min(w), hi.max(w)));
            let r = u64::try_from(i128::from(hi) - i128::from(lo)).map_err(|_| overflow())?;
            r1 = r1.checked_add(r).ok_or_else(overflow)?;
            r2 = r2
                .checked_add(r.checked_mul(r).ok_or_else(overflow)?)
                .ok_or_else(overflow)?;
        }
        let t1 = l1.checked_mul(2).ok_or_else(overflow)?;
        let t2 = l2.checked_mul(4).ok_or_else(overflow)?;
        (t1.min(r1), t2.min(r2))
    };
    Ok(ContributionBounds {
        l1,
        l2_squared: l2,
        change_l1,
        change_l2_squared: change_l2,
    })
}

impl Workload for ExplicitWorkload {
    fn domain(&self) -> &Domain {
        &self.domain
    }
    fn class(&self) -> QueryClass {
        QueryClass::Explicit
    }
    fn num_queries(&self) -> usize {
        self.weights.len() / self.cells
    }
    fn layout(&self) -> AnswerLayout {
        AnswerLayout::Queries
    }
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64)) {
        if record.len() != self.domain.len() {
            return;
        }
        if let Some(c) = self.cell_of(record) {
            for q in 0..self.num_queries() {
                let w = self.weight(q, c);
                if w != 0 {
                    visit(q, w);
                }
            }
        }
    }
    fn contribution_bounds(&self) -> ContributionBounds {
        self.bounds
    }
    fn touched_attributes(&self) -> Vec<usize> {
        let mut a = self.attrs.clone();
        a.sort_unstable();
        a
    }
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self> {
        let sub = self.domain.project(attrs)?;
        let renumbered = self
            .attrs
            .iter()
            .map(|a| {
                attrs
                    .iter()
                    .position(|b| b == a)
                    .ok_or_else(|| QueryError::UnknownAttribute {
                        name: self.domain.name(*a).to_string(),
                    })
            })
            .collect::<Result<Vec<usize>>>()?;
        Ok(ExplicitWorkload {
            domain: sub,
            attrs: renumbered,
            strides: self.strides.clone(),
            cells: self.cells,
            weights: self.weights.clone(),
            bounds: self.bounds,
        })
    }
    fn describe_query(&self, q: usize) -> String {
        let names: Vec<&str> = self.attrs.iter().map(|&a| self.domain.name(a)).collect();
        format!("linear query #{q} over {}", names.join(" & "))
    }
}
