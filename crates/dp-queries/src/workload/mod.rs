//! Workloads: the one abstraction for a workload of linear counting queries, [`Workload`],
//! and its implementations, each beside its type.
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
//!
//! ## Files
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the [`Workload`] trait, [`QueryClass`], [`AnswerLayout`], [`ContributionBounds`], [`MAX_QUERIES`] |
//! | [`marginal`] | [`Marginal`]: one contingency table, row-major cells, one-pass counting |
//! | [`marginals`] | [`MarginalWorkload`] (lists of marginals, all/random `k`-way, specs, parallel counting) and its `impl Workload` |
//! | [`conjunctions`] | [`ConjunctionWorkload`] (conjunctions / disjunctions / parities of one-hot literals, [`BitColumns`] for fast counts) and its `impl Workload` |
//! | [`threshold`] | [`ThresholdWorkload`] and [`DecisionListWorkload`] (seed 002 §4.2, §4.3, with the decision-list data format) and their `impl Workload` |
//! | [`explicit`] | [`ExplicitWorkload`] (an integer query matrix) and its `impl Workload` |
//! | [`any`] | [`AnyWorkload`] (a workload of any class chosen at run time), its JSON forms and its `impl Workload` |
//!
//! Nothing here reads records from files: a workload counts a [`Dataset`] in memory, or batch
//! after batch ([`Workload::add_counts_with`]) for the streaming counters of [`crate::io`].

use rayon::prelude::*;

use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};

pub mod any;
pub mod conjunctions;
pub mod explicit;
pub mod marginal;
pub mod marginals;
pub mod threshold;

pub use any::AnyWorkload;
pub use conjunctions::{BitColumns, ConjunctionWorkload, Literal, QueryKind};
pub use explicit::ExplicitWorkload;
pub use marginal::Marginal;
pub use marginals::MarginalWorkload;
pub use threshold::{DecisionListShape, DecisionListWorkload, ThresholdQuery, ThresholdWorkload};

/// How to spread counting over threads: dpqr's one explicit parallelism parameter, defined
/// in `dp-geometry` and re-exported here. `None` counts the marginals one after another on
/// the calling thread; `Rayon` counts them in parallel on the current rayon pool.
pub use dp_geometry::Parallelism;

/// Largest number of counting queries (cells, summed over the tables) a workload may have:
/// `2^28 ≈ 2.7·10^8`, i.e. 2 GiB as `f64` answers. Bigger workloads are refused with
/// [`QueryError::TooLarge`] before anything large is allocated.
pub const MAX_QUERIES: usize = 1 << 28;

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
    /// batch step of the streaming counters ([`crate::io::stream`]), which keep 128-bit running
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

/// The data must be over the workload's domain.
pub(crate) fn check_domain(domain: &Domain, data: &Dataset) -> Result<()> {
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
