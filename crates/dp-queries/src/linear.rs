//! One abstraction for a workload of linear counting queries: [`Workload`].
//!
//! Every query class dpqr releases is a vector of **linear counting queries**: query `q`
//! assigns an integer `w_q(x)` to each record `x` of the domain and its answer on a dataset
//! `D` is the count `Σ_{x∈D} w_q(x)` (normalised answers divide it by `n` or by a noisy
//! total). The members:
//!
//! | type | class | `w_q(x)` |
//! |---|---|---|
//! | [`MarginalWorkload`] | [`QueryClass::Marginals`] | 1 iff `x` falls in cell `q` of its table |
//! | [`ConjunctionWorkload`] of kind [`QueryKind::Conjunction`] | [`QueryClass::Conjunctions`] | 1 iff every literal of `q` holds |
//! | [`ConjunctionWorkload`] of kind [`QueryKind::Disjunction`] | [`QueryClass::Disjunctions`] | 1 iff some literal of `q` holds |
//! | [`ConjunctionWorkload`] of kind [`QueryKind::Parity`] | [`QueryClass::Parities`] | 1 iff an odd number of literals of `q` hold |
//! | [`ExplicitWorkload`] | [`QueryClass::Explicit`] | row `q` of an integer matrix over the cells of some attributes |
//! | [`ThresholdWorkload`] | [`QueryClass::Thresholds`] | 1 iff at least `k` of the `ℓ` literals of `q` hold |
//! | [`DecisionListWorkload`] | [`QueryClass::DecisionLists`] | 1 iff the decision list `x` outputs 1 on the point `q` |
//! | [`AnyWorkload`] | any of the above | the workload it holds, chosen at run time (JSON) |
//!
//! Literals are one-hot bits "attribute = code", so monotone and non-monotone conjunctions
//! and disjunctions of seed 002 §4.1 (Thaler, Ullman and Vadhan 2012) are both expressible:
//! a negated binary attribute is the literal with the other code.
//!
//! ## What a mechanism needs from a workload
//!
//! * the domain, the number of queries and their layout ([`AnswerLayout`]: tables whose cells
//!   partition the records, or free-standing queries);
//! * the exact integer counts on a dataset ([`Workload::count_all`], explicit parallelism);
//! * the queries a record contributes to ([`Workload::for_each_contribution`]), so a
//!   mechanism can evaluate a synthetic record or a universe element;
//! * **the one structural fact the sensitivity needs** ([`Workload::contribution_bounds`]):
//!   how much one record can move the count vector — computed per class from the query
//!   definitions, turned into sensitivities in `dp_mechanisms::sensitivity` (and only there);
//! * the attributes it touches and the same workload over them ([`Workload::touched_attributes`],
//!   [`Workload::on_attributes`]), so universes are built from those attributes only.

use std::path::Path;

use rayon::prelude::*;
use serde::Deserialize;

use crate::conjunctions::{ConjunctionWorkload, Literal, QueryKind};
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::threshold::{DecisionListWorkload, ThresholdQuery, ThresholdWorkload};
use crate::workload::{MarginalWorkload, Parallelism};

/// The class of a workload's queries (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueryClass {
    /// Marginal tables (all cells of each).
    Marginals,
    /// Conjunctions of one-hot literals.
    Conjunctions,
    /// Disjunctions of one-hot literals.
    Disjunctions,
    /// Parities of one-hot literals.
    Parities,
    /// Explicit integer query matrices.
    Explicit,
    /// k-of-ℓ threshold queries of one-hot literals ([`ThresholdWorkload`]).
    Thresholds,
    /// Point queries on a database of decision lists ([`DecisionListWorkload`]).
    DecisionLists,
}

impl QueryClass {
    /// Every class, in the order used in messages.
    pub const ALL: [QueryClass; 7] = [
        QueryClass::Marginals,
        QueryClass::Conjunctions,
        QueryClass::Disjunctions,
        QueryClass::Parities,
        QueryClass::Explicit,
        QueryClass::Thresholds,
        QueryClass::DecisionLists,
    ];

    /// The name used in JSON workload files (`"class": …`) and messages.
    pub fn key(self) -> &'static str {
        match self {
            QueryClass::Marginals => "marginals",
            QueryClass::Conjunctions => "conjunctions",
            QueryClass::Disjunctions => "disjunctions",
            QueryClass::Parities => "parities",
            QueryClass::Explicit => "linear",
            QueryClass::Thresholds => "thresholds",
            QueryClass::DecisionLists => "decision-lists",
        }
    }
}

impl std::fmt::Display for QueryClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// Bounds on how much one record moves a workload's integer count vector
/// `c(D) = Σ_{x∈D} w(x)`, where `w(x) ∈ ℤ^k` is the record's contribution.
///
/// Each field is an upper bound on the stated maximum (attained where the docs of the
/// implementing type say so). `dp_mechanisms::sensitivity` turns them into sensitivities:
/// adding or removing a record moves `c` by `w(x)`; replacing one moves it by `w(x) − w(x′)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContributionBounds {
    /// ≥ max over records `x` of `‖w(x)‖₁`.
    pub l1: u64,
    /// ≥ max over records `x` of `‖w(x)‖₂²`.
    pub l2_squared: u64,
    /// ≥ max over pairs of records `x, x′` of `‖w(x) − w(x′)‖₁`.
    pub change_l1: u64,
    /// ≥ max over pairs of records `x, x′` of `‖w(x) − w(x′)‖₂²`.
    pub change_l2_squared: u64,
}

/// How a workload's answers are laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerLayout {
    /// Consecutive tables, table `j` holding queries `offsets[j]..offsets[j + 1]`, whose cells
    /// partition the records: every record counts exactly once in every table, so each
    /// table's counts sum to `n`.
    Tables {
        /// `offsets[0] = 0`, `offsets[len] = num_queries`.
        offsets: Vec<usize>,
    },
    /// Free-standing queries: no group of them is known to sum to `n`.
    Queries,
}

/// A workload of linear counting queries over a categorical domain (module docs).
///
/// Implementations are immutable values; every method is deterministic. Counting is exact
/// (integers), so the count vector a mechanism perturbs is the true one.
pub trait Workload: Send + Sync {
    /// The domain the queries are over.
    fn domain(&self) -> &Domain;

    /// The class of the queries.
    fn class(&self) -> QueryClass;

    /// Number of queries `k` (the length of every count or answer vector).
    fn num_queries(&self) -> usize;

    /// How the answers are laid out.
    fn layout(&self) -> AnswerLayout;

    /// Calls `visit(q, w_q(x))` for every query `q` with `w_q(x) ≠ 0` on `record` (codes in
    /// domain order), in ascending `q`. A record of the wrong length contributes nothing.
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64));

    /// The bounds on one record's contribution ([`ContributionBounds`]), from the queries'
    /// definitions alone (never from data).
    fn contribution_bounds(&self) -> ContributionBounds;

    /// The attributes at least one query reads, ascending.
    fn touched_attributes(&self) -> Vec<usize>;

    /// The same queries over `self.domain().project(attrs)`, in the same order, so that
    /// counting them on a dataset restricted to `attrs` gives `self`'s counts on the full one.
    /// Errors when a touched attribute is missing from `attrs`.
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self>
    where
        Self: Sized;

    /// A short description of query `q` for output files (attribute names and codes).
    fn describe_query(&self, q: usize) -> String;

    /// Exact counts `Σ_{x∈D} w_q(x)` of every query, in workload order.
    ///
    /// The default evaluates [`Self::for_each_contribution`] record by record (records in
    /// parallel chunks under [`Parallelism::Rayon`], summed in a fixed order, so the result
    /// never depends on the thread count); members with a faster exact path override it.
    /// Errors: the data is over another domain ([`QueryError::DomainMismatch`]).
    fn count_all_with(&self, data: &Dataset, parallelism: Parallelism) -> Result<Vec<i64>> {
        check_domain(self.domain(), data)?;
        let k = self.num_queries();
        let count_rows = |rows: std::ops::Range<usize>| {
            let mut out = vec![0i64; k];
            let mut record = vec![0u32; data.domain().len()];
            for r in rows {
                for (a, v) in record.iter_mut().enumerate() {
                    *v = data.column(a)[r];
                }
                self.for_each_contribution(&record, &mut |q, w| out[q] += w);
            }
            out
        };
        const CHUNK: usize = 1 << 14;
        let chunks: Vec<std::ops::Range<usize>> = (0..data.n())
            .step_by(CHUNK)
            .map(|s| s..(s + CHUNK).min(data.n()))
            .collect();
        let partials: Vec<Vec<i64>> = match parallelism {
            Parallelism::None => chunks.into_iter().map(count_rows).collect(),
            Parallelism::Rayon => chunks.into_par_iter().map(count_rows).collect(),
        };
        let mut total = vec![0i64; k];
        for p in partials {
            for (t, c) in total.iter_mut().zip(p) {
                *t += c;
            }
        }
        Ok(total)
    }

    /// **Adds** the exact counts of every query on `data` to `totals` (workload order): the
    /// batch step of the streaming counters ([`crate::stream`]), which keep 128-bit running
    /// totals so that no sum of 64-bit counts can overflow before the end of the pass.
    ///
    /// The default counts with [`Self::count_all_with`] and adds; members that can count in
    /// place override it (marginal tables: no per-batch table to allocate, zero and add).
    /// Errors: as [`Self::count_all_with`], and [`QueryError::LengthMismatch`] unless
    /// `totals.len() == num_queries()`.
    fn add_counts_with(
        &self,
        data: &Dataset,
        totals: &mut [i128],
        parallelism: Parallelism,
    ) -> Result<()> {
        check_totals(self.num_queries(), totals)?;
        for (t, c) in totals
            .iter_mut()
            .zip(self.count_all_with(data, parallelism)?)
        {
            *t += i128::from(c);
        }
        Ok(())
    }

    /// [`Self::count_all_with`] in parallel.
    fn count_all(&self, data: &Dataset) -> Result<Vec<i64>> {
        self.count_all_with(data, Parallelism::Rayon)
    }

    /// Answers of weighted records (`records[r]` a full record, `weights[r] ≥ 0`), each
    /// normalised by the total weight: the answers of a synthetic dataset.
    ///
    /// Errors: length mismatch, a record of the wrong length, or non-positive total weight.
    fn answers_of_records(&self, records: &[Vec<u32>], weights: &[f64]) -> Result<Vec<f64>> {
        if records.len() != weights.len() {
            return Err(QueryError::LengthMismatch {
                expected: records.len(),
                found: weights.len(),
            });
        }
        if let Some(r) = records.iter().find(|r| r.len() != self.domain().len()) {
            return Err(QueryError::LengthMismatch {
                expected: self.domain().len(),
                found: r.len(),
            });
        }
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return Err(QueryError::BadWorkload {
                reason: format!("weights must have a positive finite sum, found {total}"),
            });
        }
        let mut out = vec![0.0; self.num_queries()];
        for (r, &w) in records.iter().zip(weights) {
            self.for_each_contribution(r, &mut |q, v| out[q] += w * v as f64);
        }
        for a in &mut out {
            *a /= total;
        }
        Ok(out)
    }
}

fn check_domain(domain: &Domain, data: &Dataset) -> Result<()> {
    if data.domain() != domain {
        return Err(QueryError::DomainMismatch {
            reason: "the dataset's domain is not the workload's domain".into(),
        });
    }
    Ok(())
}

/// Running totals must hold one entry per query.
fn check_totals(num_queries: usize, totals: &[i128]) -> Result<()> {
    if totals.len() != num_queries {
        return Err(QueryError::LengthMismatch {
            expected: num_queries,
            found: totals.len(),
        });
    }
    Ok(())
}

/// Marginals: a record lies in exactly one cell of each of the `m` tables, so
/// `‖w(x)‖₁ = ‖w(x)‖₂² = m` for every record, and two records differing in every attribute
/// differ in every table: `‖w(x) − w(x′)‖₁ = ‖·‖₂² = 2m`. All four bounds are attained.
impl Workload for MarginalWorkload {
    fn domain(&self) -> &Domain {
        MarginalWorkload::domain(self)
    }
    fn class(&self) -> QueryClass {
        QueryClass::Marginals
    }
    fn num_queries(&self) -> usize {
        MarginalWorkload::num_queries(self)
    }
    fn layout(&self) -> AnswerLayout {
        let mut offsets: Vec<usize> = (0..self.len()).map(|j| self.offset(j)).collect();
        offsets.push(MarginalWorkload::num_queries(self));
        AnswerLayout::Tables { offsets }
    }
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64)) {
        if record.len() != self.domain().len() {
            return;
        }
        for (j, m) in self.marginals().iter().enumerate() {
            if let Some(cell) = m.cell_of(record) {
                visit(self.offset(j) + cell, 1);
            }
        }
    }
    fn contribution_bounds(&self) -> ContributionBounds {
        let m = self.len() as u64;
        ContributionBounds {
            l1: m,
            l2_squared: m,
            change_l1: 2 * m,
            change_l2_squared: 2 * m,
        }
    }
    fn touched_attributes(&self) -> Vec<usize> {
        MarginalWorkload::touched_attributes(self)
    }
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self> {
        MarginalWorkload::on_attributes(self, attrs)
    }
    fn describe_query(&self, q: usize) -> String {
        let (j, cell) = self.query_location(q);
        let m = &self.marginals()[j];
        let names: Vec<String> = m
            .attrs()
            .iter()
            .zip(m.cell_codes(cell))
            .map(|(&a, c)| format!("{}={c}", self.domain().name(a)))
            .collect();
        names.join(" & ")
    }
    fn add_counts_with(
        &self,
        data: &Dataset,
        totals: &mut [i128],
        parallelism: Parallelism,
    ) -> Result<()> {
        MarginalWorkload::add_counts_into(self, data, totals, parallelism)
    }
    fn count_all_with(&self, data: &Dataset, parallelism: Parallelism) -> Result<Vec<i64>> {
        MarginalWorkload::count_all_with(self, data, parallelism)?
            .into_iter()
            .map(|c| {
                i64::try_from(c).map_err(|_| QueryError::TooLarge {
                    what: "a count".into(),
                    estimate: c.to_string(),
                })
            })
            .collect()
    }
}

/// Conjunctions, disjunctions and parities of `k` queries, each 0/1-valued: a record
/// contributes at most 1 to each, so `‖w(x)‖₁, ‖w(x)‖₂² ≤ k` and
/// `‖w(x) − w(x′)‖₁, ‖·‖₂² ≤ k`. These are upper bounds (a record satisfying every query,
/// and a pair disagreeing on every query, need not exist for a given workload; for the
/// sensible monotone conjunctions of a binary domain the all-ones and all-zeros records
/// attain them).
impl Workload for ConjunctionWorkload {
    fn domain(&self) -> &Domain {
        ConjunctionWorkload::domain(self)
    }
    fn class(&self) -> QueryClass {
        match self.kind() {
            QueryKind::Conjunction => QueryClass::Conjunctions,
            QueryKind::Disjunction => QueryClass::Disjunctions,
            QueryKind::Parity => QueryClass::Parities,
        }
    }
    fn num_queries(&self) -> usize {
        self.len()
    }
    fn layout(&self) -> AnswerLayout {
        AnswerLayout::Queries
    }
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64)) {
        if record.len() != self.domain().len() {
            return;
        }
        for q in 0..self.len() {
            if self.evaluate(q, record) == 1 {
                visit(q, 1);
            }
        }
    }
    fn contribution_bounds(&self) -> ContributionBounds {
        let k = self.len() as u64;
        ContributionBounds {
            l1: k,
            l2_squared: k,
            change_l1: k,
            change_l2_squared: k,
        }
    }
    fn touched_attributes(&self) -> Vec<usize> {
        let mut a: Vec<usize> = (0..self.len())
            .flat_map(|q| self.query(q).iter().map(|l| l.attr as usize))
            .collect();
        a.sort_unstable();
        a.dedup();
        a
    }
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self> {
        let sub = self.domain().project(attrs)?;
        let queries = (0..self.len())
            .map(|q| {
                self.query(q)
                    .iter()
                    .map(|l| {
                        let at = attrs
                            .iter()
                            .position(|&b| b == l.attr as usize)
                            .ok_or_else(|| QueryError::UnknownAttribute {
                                name: self.domain().name(l.attr as usize).to_string(),
                            })?;
                        Ok(Literal {
                            attr: at as u32,
                            value: l.value,
                        })
                    })
                    .collect::<Result<Vec<Literal>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        ConjunctionWorkload::new(&sub, self.kind(), queries)
    }
    fn describe_query(&self, q: usize) -> String {
        let sep = match self.kind() {
            QueryKind::Conjunction => " & ",
            QueryKind::Disjunction => " | ",
            QueryKind::Parity => " ^ ",
        };
        self.query(q)
            .iter()
            .map(|l| format!("{}={}", self.domain().name(l.attr as usize), l.value))
            .collect::<Vec<_>>()
            .join(sep)
    }
    fn count_all_with(&self, data: &Dataset, parallelism: Parallelism) -> Result<Vec<i64>> {
        check_domain(self.domain(), data)?;
        if data.n() == 0 {
            return Ok(vec![0; self.len()]);
        }
        let bits = crate::conjunctions::BitColumns::from_dataset(data)?;
        let count = |q: usize| bits.count(self.kind(), self.query(q)) as i64;
        Ok(match parallelism {
            Parallelism::None => (0..self.len()).map(count).collect(),
            Parallelism::Rayon => (0..self.len()).into_par_iter().map(count).collect(),
        })
    }
}

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

/// A workload of any class, chosen at run time (from a JSON file or a spec): what `dpqr`
/// and the bench pass to mechanisms that accept several classes.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyWorkload {
    /// Marginal tables.
    Marginals(MarginalWorkload),
    /// Conjunctions, disjunctions or parities of one-hot literals.
    Literals(ConjunctionWorkload),
    /// An explicit integer query matrix.
    Explicit(ExplicitWorkload),
    /// k-of-ℓ threshold queries.
    Thresholds(ThresholdWorkload),
    /// Point queries on a database of decision lists.
    DecisionLists(DecisionListWorkload),
}

impl AnyWorkload {
    /// The workload as `&dyn Workload`.
    pub fn as_dyn(&self) -> &dyn Workload {
        match self {
            AnyWorkload::Marginals(w) => w,
            AnyWorkload::Literals(w) => w,
            AnyWorkload::Explicit(w) => w,
            AnyWorkload::Thresholds(w) => w,
            AnyWorkload::DecisionLists(w) => w,
        }
    }

    /// The marginal workload, if this is one.
    pub fn as_marginals(&self) -> Option<&MarginalWorkload> {
        match self {
            AnyWorkload::Marginals(w) => Some(w),
            _ => None,
        }
    }

    /// Parses a workload specification: `all-Kway` and `random-Kway:M` (marginals, see
    /// [`MarginalWorkload::parse_spec`]) or a JSON file ([`Self::from_json_file`]).
    pub fn parse_spec(domain: &Domain, spec: &str, seed: u64) -> Result<Self> {
        if spec.starts_with("all-") || spec.starts_with("random-") {
            return Ok(AnyWorkload::Marginals(MarginalWorkload::parse_spec(
                domain, spec, seed,
            )?));
        }
        Self::from_json_file(domain, Path::new(spec))
    }

    /// Reads a workload JSON file. Two forms:
    ///
    /// * a list of attribute-name lists — marginals, as [`MarginalWorkload::from_json_file`];
    /// * an object with a `"class"`:
    ///   - `{"class": "marginals", "marginals": [["age", "sex"], …]}`;
    ///   - `{"class": "conjunctions" | "disjunctions" | "parities", "queries": [{"age": 3,
    ///     "sex": 1}, …]}` — each query an object from attribute names to codes (its
    ///     literals "attribute = code"; at most one code per attribute);
    ///   - `{"class": "linear", "attributes": ["age", "sex"], "queries": [[w₀, w₁, …], …]}` —
    ///     integer weights over the attributes' cells, row-major (last attribute fastest);
    ///   - `{"class": "thresholds", "queries": [{"k": 2, "literals": {"age": 3, "sex": 1,
    ///     "race": 0}}, …]}` — k-of-ℓ threshold queries: 1 iff at least `k` of the literals
    ///     "attribute = code" hold ([`ThresholdWorkload`]);
    ///   - `{"class": "decision-lists", "points": ["0110", "1011", …]}` — point queries on
    ///     a database of decision lists (the data's domain must have the shape of
    ///     [`crate::threshold`]); each point a string of `m` bits, variable 0 first.
    pub fn from_json_file(domain: &Domain, path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| QueryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_json_slice(domain, &bytes, &path.display().to_string())
    }

    /// [`Self::from_json_file`] on the file's bytes; `file` names it in errors.
    pub fn from_json_slice(domain: &Domain, bytes: &[u8], file: &str) -> Result<Self> {
        let bad_json = |e: serde_json::Error| QueryError::BadJson {
            file: file.to_string(),
            message: e.to_string(),
        };
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(bad_json)?;
        if value.is_array() {
            let lists: Vec<Vec<String>> = serde_json::from_value(value).map_err(bad_json)?;
            return Ok(AnyWorkload::Marginals(
                MarginalWorkload::from_attribute_lists(domain, &lists)?,
            ));
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Spec {
            class: String,
            #[serde(default)]
            marginals: Option<Vec<Vec<String>>>,
            #[serde(default)]
            attributes: Option<Vec<String>>,
            #[serde(default)]
            queries: Option<serde_json::Value>,
            #[serde(default)]
            points: Option<Vec<String>>,
        }
        let spec: Spec = serde_json::from_value(value).map_err(bad_json)?;
        let bad = |reason: String| QueryError::BadWorkload {
            reason: format!("{file}: {reason}"),
        };
        let classes = QueryClass::ALL.map(QueryClass::key).join(", ");
        let class = QueryClass::ALL
            .into_iter()
            .find(|c| c.key() == spec.class)
            .ok_or_else(|| {
                bad(format!(
                    "unknown class '{}' (expected one of: {classes})",
                    spec.class
                ))
            })?;
        let need = |field: &str, present: bool| -> Result<()> {
            if present {
                Ok(())
            } else {
                Err(bad(format!("class '{class}' needs the field \"{field}\"")))
            }
        };
        let refuse = |field: &str, present: bool| -> Result<()> {
            if present {
                Err(bad(format!("class '{class}' takes no field \"{field}\"")))
            } else {
                Ok(())
            }
        };
        match class {
            QueryClass::Marginals => {
                need("marginals", spec.marginals.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("queries", spec.queries.is_some())?;
                refuse("points", spec.points.is_some())?;
                let lists = spec.marginals.unwrap_or_default();
                Ok(AnyWorkload::Marginals(
                    MarginalWorkload::from_attribute_lists(domain, &lists)?,
                ))
            }
            QueryClass::Conjunctions | QueryClass::Disjunctions | QueryClass::Parities => {
                need("queries", spec.queries.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("points", spec.points.is_some())?;
                let raw: Vec<serde_json::Map<String, serde_json::Value>> = serde_json::from_value(
                    spec.queries.unwrap_or_default(),
                )
                .map_err(|e| {
                    bad(format!(
                        "\"queries\" must be a list of objects from attribute names to codes ({e})"
                    ))
                })?;
                let mut queries = Vec::with_capacity(raw.len());
                for (i, q) in raw.iter().enumerate() {
                    queries.push(literals_of(domain, q, i, &bad)?);
                }
                let kind = match class {
                    QueryClass::Conjunctions => QueryKind::Conjunction,
                    QueryClass::Disjunctions => QueryKind::Disjunction,
                    _ => QueryKind::Parity,
                };
                Ok(AnyWorkload::Literals(ConjunctionWorkload::new(
                    domain, kind, queries,
                )?))
            }
            QueryClass::Explicit => {
                need("attributes", spec.attributes.is_some())?;
                need("queries", spec.queries.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("points", spec.points.is_some())?;
                let attrs = spec
                    .attributes
                    .unwrap_or_default()
                    .iter()
                    .map(|n| domain.index_of(n))
                    .collect::<Result<Vec<usize>>>()?;
                let matrix: Vec<Vec<i64>> =
                    serde_json::from_value(spec.queries.unwrap_or_default()).map_err(|e| {
                        bad(format!(
                            "\"queries\" must be a list of lists of integer weights ({e})"
                        ))
                    })?;
                Ok(AnyWorkload::Explicit(ExplicitWorkload::new(
                    domain, attrs, matrix,
                )?))
            }
            QueryClass::Thresholds => {
                need("queries", spec.queries.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("points", spec.points.is_some())?;
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct RawThreshold {
                    k: u32,
                    literals: serde_json::Map<String, serde_json::Value>,
                }
                let raw: Vec<RawThreshold> =
                    serde_json::from_value(spec.queries.unwrap_or_default()).map_err(|e| {
                        bad(format!(
                            "\"queries\" must be a list of objects {{\"k\": threshold, \
                             \"literals\": {{attribute name: code, …}}}} ({e})"
                        ))
                    })?;
                let mut queries = Vec::with_capacity(raw.len());
                for (i, q) in raw.iter().enumerate() {
                    queries.push(ThresholdQuery {
                        k: q.k,
                        literals: literals_of(domain, &q.literals, i, &bad)?,
                    });
                }
                Ok(AnyWorkload::Thresholds(ThresholdWorkload::new(
                    domain, queries,
                )?))
            }
            QueryClass::DecisionLists => {
                need("points", spec.points.is_some())?;
                refuse("attributes", spec.attributes.is_some())?;
                refuse("marginals", spec.marginals.is_some())?;
                refuse("queries", spec.queries.is_some())?;
                let points = spec
                    .points
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        DecisionListWorkload::parse_point(p).ok_or_else(|| {
                            bad(format!(
                                "point #{i} must be a string of 0 and 1, found \"{p}\""
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(AnyWorkload::DecisionLists(DecisionListWorkload::new(
                    domain, points,
                )?))
            }
        }
    }
}

/// The literals "attribute = code" of query `i` from a JSON object of names to codes.
fn literals_of(
    domain: &Domain,
    q: &serde_json::Map<String, serde_json::Value>,
    i: usize,
    bad: &dyn Fn(String) -> QueryError,
) -> Result<Vec<Literal>> {
    let mut lits = Vec::with_capacity(q.len());
    for (name, code) in q {
        let attr = domain.index_of(name)?;
        let value = code
            .as_u64()
            .and_then(|c| u32::try_from(c).ok())
            .ok_or_else(|| {
                bad(format!(
                    "query #{i}: the code of '{name}' must be a non-negative integer, found \
                     {code}"
                ))
            })?;
        lits.push(Literal {
            attr: attr as u32,
            value,
        });
    }
    Ok(lits)
}

impl Workload for AnyWorkload {
    fn domain(&self) -> &Domain {
        self.as_dyn().domain()
    }
    fn class(&self) -> QueryClass {
        self.as_dyn().class()
    }
    fn num_queries(&self) -> usize {
        self.as_dyn().num_queries()
    }
    fn layout(&self) -> AnswerLayout {
        self.as_dyn().layout()
    }
    fn for_each_contribution(&self, record: &[u32], visit: &mut dyn FnMut(usize, i64)) {
        self.as_dyn().for_each_contribution(record, visit)
    }
    fn contribution_bounds(&self) -> ContributionBounds {
        self.as_dyn().contribution_bounds()
    }
    fn touched_attributes(&self) -> Vec<usize> {
        self.as_dyn().touched_attributes()
    }
    fn on_attributes(&self, attrs: &[usize]) -> Result<Self> {
        Ok(match self {
            AnyWorkload::Marginals(w) => AnyWorkload::Marginals(w.on_attributes(attrs)?),
            AnyWorkload::Literals(w) => AnyWorkload::Literals(Workload::on_attributes(w, attrs)?),
            AnyWorkload::Explicit(w) => AnyWorkload::Explicit(w.on_attributes(attrs)?),
            AnyWorkload::Thresholds(w) => AnyWorkload::Thresholds(w.on_attributes(attrs)?),
            AnyWorkload::DecisionLists(w) => AnyWorkload::DecisionLists(w.on_attributes(attrs)?),
        })
    }
    fn describe_query(&self, q: usize) -> String {
        self.as_dyn().describe_query(q)
    }
    fn count_all_with(&self, data: &Dataset, parallelism: Parallelism) -> Result<Vec<i64>> {
        self.as_dyn().count_all_with(data, parallelism)
    }
    fn add_counts_with(
        &self,
        data: &Dataset,
        totals: &mut [i128],
        parallelism: Parallelism,
    ) -> Result<()> {
        self.as_dyn().add_counts_with(data, totals, parallelism)
    }
}
