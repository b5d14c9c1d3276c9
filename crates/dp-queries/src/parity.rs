//! Parity queries on `{±1}^d` and the exact marginal ↔ parity transform (seed 000 §2.4:
//! Dwork, Nikolov and Talwar 2014, "Efficient algorithms for privately releasing marginals
//! via convex relaxations", Lemma 2.4 and Theorems 2.5 / 2.6, after Barak et al. 2007).
//!
//! # Records as signs
//! A dataset whose attributes are all **binary** (domain size 2) is a multiset of points
//! `x ∈ {±1}^d`: code `b_i ∈ {0, 1}` of attribute `i` stands for `x_i = (−1)^{b_i}`.
//! [`SignRecords`] packs the codes 64 to a word. A categorical attribute of `s > 2`
//! categories is not binary: one-hot encode it first (`s` binary attributes "attribute =
//! code", e.g. [`crate::onehot`]); a marginal over it is then a conjunction of one-hot bits,
//! which this module does not transform (the functions here refuse non-binary domains).
//!
//! # Parities
//! For an index set `T ⊆ [d]`, `x_T = ∏_{i∈T} x_i = (−1)^{Σ_{i∈T} b_i}` (`x_∅ = 1`). Its
//! normalised answer on a dataset `D` of `n` records is `p_T = (1/n) Σ_{x∈D} x_T ∈ [−1, 1]`,
//! and the integer count mechanisms perturb is the **odd count**
//! `o_T = #{x ∈ D : x_T = −1}` (a popcount per record), with `p_T = 1 − 2·o_T/n`.
//! [`ParityQueries`] is a list of distinct non-empty index sets, e.g. all of size `≤ k`.
//!
//! # Marginals from parities (the transform)
//! A binary marginal table on attributes `S` (`|S| = s`) has one cell per `β ∈ {0,1}^S`.
//! As `1[b_i = β_i] = (1 + (−1)^{β_i} x_i)/2`,
//!
//! ```text
//!     1[x_S = β] = ∏_{i∈S} (1 + (−1)^{β_i} x_i)/2 = 2^{−s} Σ_{T⊆S} (−1)^{Σ_{i∈T} β_i} x_T,
//! ```
//!
//! so the cell's normalised answer is `m_S(β) = 2^{−s} Σ_{T⊆S} χ_T(β) p_T` with the sign
//! `χ_T(β) = (−1)^{|{i ∈ T : β_i = 1}|}` — the cell's codes that are 1 and lie in `T`
//! decide it; `p_∅ = 1` exactly. The table is the Walsh–Hadamard transform of its parities
//! and the inverse is `p_T = Σ_β χ_T(β) m_S(β)` for any table `S ⊇ T`
//! ([`MarginalParityTransform`], computed by the fast Walsh–Hadamard transform).
//!
//! # Error transfer
//! If estimates `p̃_T` have errors `e_T = p̃_T − p_T` (and `p̃_∅ = 1`), the cells read back
//! have errors `ε(β) = 2^{−s} Σ_{∅≠T⊆S} χ_T(β) e_T`. Hence
//!
//! * **worst case** (Theorem 2.5): `|ε(β)| ≤ (1 − 2^{−s}) · max_T |e_T|` — the
//!   [`MarginalParityTransform::max_error_factor`] is `1 − 2^{−s_max} < 1`;
//! * **squared error** (Theorem 2.6, here with equality by Parseval, the characters being
//!   orthogonal over the `2^s` cells): `Σ_β ε(β)² = 2^{−s} Σ_{T⊆S} e_T²`, so the total
//!   squared error over the workload's cells is `Σ_T ω_T e_T²` with
//!   `ω_T = Σ_{tables S ⊇ T} 2^{−|S|}` ([`MarginalParityTransform::weights`]). A mechanism
//!   that minimises the `ω`-weighted squared parity error minimises the workload's squared
//!   cell error.

use std::collections::HashMap;

use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::workload::{MAX_QUERIES, MarginalWorkload};

/// Fails unless every attribute of `domain` has exactly two codes, naming the first that
/// does not.
pub fn check_binary(domain: &Domain) -> Result<()> {
    for i in 0..domain.len() {
        if domain.size(i) != 2 {
            return Err(QueryError::BadDomain {
                reason: format!(
                    "attribute '{}' has {} categories; parity queries need binary attributes \
                     (two categories each) — one-hot encode categorical attributes first",
                    domain.name(i),
                    domain.size(i)
                ),
            });
        }
    }
    Ok(())
}

/// A dataset over binary attributes as bit-packed sign vectors (module docs): bit `i` of a
/// record is the code of attribute `i`, i.e. `x_i = −1` iff the bit is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignRecords {
    d: usize,
    n: usize,
    words: usize,
    rows: Vec<u64>,
}

impl SignRecords {
    /// Packs `data`. Fails ([`QueryError::BadDomain`]) unless every attribute is binary.
    pub fn from_dataset(data: &Dataset) -> Result<Self> {
        check_binary(data.domain())?;
        let d = data.domain().len();
        let n = data.n();
        let words = d.div_ceil(64).max(1);
        let mut rows = vec![0u64; n * words];
        for a in 0..d {
            for (r, &code) in data.column(a).iter().enumerate() {
                if code == 1 {
                    rows[r * words + a / 64] |= 1u64 << (a % 64);
                }
            }
        }
        Ok(Self { d, n, words, rows })
    }

    /// Number of attributes `d`.
    pub fn d(&self) -> usize {
        self.d
    }

    /// Number of records `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The packed bits of record `i` (empty when `i ≥ n`).
    pub fn row(&self, i: usize) -> &[u64] {
        if i >= self.n {
            return &[];
        }
        &self.rows[i * self.words..(i + 1) * self.words]
    }

    /// The records column by column: attribute `i`'s bits over the records in words
    /// `i·⌈n/64⌉ .. (i+1)·⌈n/64⌉` (record `r` is bit `r % 64` of word `r / 64`).
    fn columns(&self) -> Vec<u64> {
        let words = self.n.div_ceil(64);
        let mut cols = vec![0u64; self.d * words];
        for (r, row) in self.rows.chunks_exact(self.words).enumerate() {
            for (wi, &w) in row.iter().enumerate() {
                let mut bits = w;
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let i = wi * 64 + b;
                    cols[i * words + r / 64] |= 1u64 << (r % 64);
                }
            }
        }
        cols
    }

    /// The mask of an index set; fails on an index `≥ d`.
    fn mask(&self, set: &[usize]) -> Result<Vec<u64>> {
        let mut m = vec![0u64; self.words];
        for &i in set {
            if i >= self.d {
                return Err(QueryError::AttributeOutOfRange {
                    index: i,
                    len: self.d,
                });
            }
            m[i / 64] ^= 1u64 << (i % 64);
        }
        Ok(m)
    }

    /// The odd count `o_T = #{x : x_T = −1}` (an index repeated an even number of times
    /// cancels). Fails on an index `≥ d`.
    pub fn odd_count(&self, set: &[usize]) -> Result<u64> {
        let mask = self.mask(set)?;
        Ok(self
            .rows
            .chunks_exact(self.words)
            .filter(|row| {
                row.iter()
                    .zip(&mask)
                    .map(|(w, m)| (w & m).count_ones())
                    .sum::<u32>()
                    % 2
                    == 1
            })
            .count() as u64)
    }

    /// `Σ_x x_T = n − 2·o_T`. Fails on an index `≥ d`.
    pub fn parity_sum(&self, set: &[usize]) -> Result<i64> {
        let odd = self.odd_count(set)? as i64;
        Ok(self.n as i64 - 2 * odd)
    }
}

/// A list of distinct, non-empty parity index sets over `d` attributes (each sorted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParityQueries {
    d: usize,
    sets: Vec<Vec<usize>>,
    position: HashMap<Vec<usize>, usize>,
}

impl ParityQueries {
    /// The given sets, in the given order (each is sorted). Fails on an empty set, an index
    /// `≥ d`, a repeated index within a set, a set given twice, or more than
    /// [`MAX_QUERIES`] sets.
    pub fn new(d: usize, sets: Vec<Vec<usize>>) -> Result<Self> {
        if sets.len() > MAX_QUERIES {
            return Err(QueryError::TooLarge {
                what: "the parity workload".into(),
                estimate: format!("{} queries, more than {MAX_QUERIES}", sets.len()),
            });
        }
        let mut position = HashMap::with_capacity(sets.len());
        let mut sorted_sets = Vec::with_capacity(sets.len());
        for (q, mut set) in sets.into_iter().enumerate() {
            set.sort_unstable();
            if set.is_empty() {
                return Err(QueryError::BadWorkload {
                    reason: "a parity query needs at least one attribute (the empty parity is \
                             the constant 1)"
                        .into(),
                });
            }
            if let Some(&bad) = set.iter().find(|&&i| i >= d) {
                return Err(QueryError::AttributeOutOfRange { index: bad, len: d });
            }
            if set.windows(2).any(|w| w[0] == w[1]) {
                return Err(QueryError::BadWorkload {
                    reason: format!("parity query {q} names an attribute twice"),
                });
            }
            if position.insert(set.clone(), q).is_some() {
                return Err(QueryError::BadWorkload {
                    reason: format!("parity query {q} repeats an earlier query"),
                });
            }
            sorted_sets.push(set);
        }
        Ok(Self {
            d,
            sets: sorted_sets,
            position,
        })
    }

    /// All parities of degree `1..=k` over `d` attributes, ordered by degree and then
    /// lexicographically. Fails when there would be more than [`MAX_QUERIES`].
    pub fn all_up_to(d: usize, k: usize) -> Result<Self> {
        let count = (1..=k.min(d)).try_fold(0usize, |acc, s| {
            binomial(d, s).and_then(|b| acc.checked_add(b))
        });
        match count {
            Some(c) if c <= MAX_QUERIES => {}
            _ => {
                return Err(QueryError::TooLarge {
                    what: format!("the workload of all parities of degree at most {k}"),
                    estimate: format!("more than {MAX_QUERIES} queries over {d} attributes"),
                });
            }
        }
        let mut sets = Vec::new();
        for size in 1..=k.min(d) {
            let mut cur: Vec<usize> = (0..size).collect();
            loop {
                sets.push(cur.clone());
                match (0..size).rev().find(|&i| cur[i] < d - size + i) {
                    None => break,
                    Some(i) => {
                        cur[i] += 1;
                        for j in i + 1..size {
                            cur[j] = cur[j - 1] + 1;
                        }
                    }
                }
            }
        }
        Self::new(d, sets)
    }

    /// Number of attributes `d`.
    pub fn d(&self) -> usize {
        self.d
    }

    /// The index sets, in query order.
    pub fn sets(&self) -> &[Vec<usize>] {
        &self.sets
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether there are no queries.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The largest degree `|T|` (0 when empty).
    pub fn degree(&self) -> usize {
        self.sets.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// The position of index set `set` (sorted or not), if it is one of the queries.
    pub fn position(&self, set: &[usize]) -> Option<usize> {
        let mut s = set.to_vec();
        s.sort_unstable();
        self.position.get(&s).copied()
    }

    fn check_records(&self, records: &SignRecords) -> Result<()> {
        if records.d() != self.d {
            return Err(QueryError::DomainMismatch {
                reason: format!(
                    "the parity queries are over {} attributes, the records have {}",
                    self.d,
                    records.d()
                ),
            });
        }
        Ok(())
    }

    /// The exact odd counts `o_T` of every query, in query order.
    ///
    /// Counted column by column: each attribute's bits over the records are packed into
    /// `⌈n/64⌉` words once, and a parity's odd count is the popcount of the XOR of its
    /// attributes' columns — `|T|·⌈n/64⌉` word operations per parity instead of a scan of
    /// every record's row. The parities are split over the rayon pool; each count is an exact
    /// integer computed the same way whatever the thread count.
    pub fn odd_counts(&self, records: &SignRecords) -> Result<Vec<u64>> {
        use rayon::prelude::*;
        self.check_records(records)?;
        let columns = records.columns();
        let words = records.n.div_ceil(64);
        self.sets
            .par_iter()
            .map_init(
                || vec![0u64; words],
                |acc, set| {
                    acc.iter_mut().for_each(|w| *w = 0);
                    for &i in set {
                        let col = &columns[i * words..(i + 1) * words];
                        acc.iter_mut().zip(col).for_each(|(a, c)| *a ^= c);
                    }
                    Ok(acc.iter().map(|w| u64::from(w.count_ones())).sum())
                },
            )
            .collect()
    }

    /// The normalised answers `p_T = 1 − 2·o_T/n`, in query order. Fails on an empty dataset.
    pub fn answers(&self, records: &SignRecords) -> Result<Vec<f64>> {
        if records.n() == 0 {
            return Err(QueryError::EmptyDataset);
        }
        let n = records.n() as f64;
        Ok(self
            .odd_counts(records)?
            .into_iter()
            .map(|o| 1.0 - 2.0 * o as f64 / n)
            .collect())
    }
}

fn binomial(n: usize, k: usize) -> Option<usize> {
    let mut b: u128 = 1;
    for i in 0..k {
        b = b.checked_mul((n - i) as u128)? / (i as u128 + 1);
    }
    usize::try_from(b).ok()
}

/// One table of the transform: its attributes (table positions) and, for each subset mask
/// of those positions, the parity it is (`None` for the empty set).
#[derive(Clone, Debug, PartialEq)]
struct TableParities {
    /// Cell index → mask of the table positions whose code is 1.
    cell_masks: Vec<usize>,
    /// Subset mask → parity query index (`None` for mask 0).
    parity_of_mask: Vec<Option<usize>>,
}

/// The exact transform between a binary marginal workload and the parities it needs
/// (module docs): every non-empty subset of every table's attributes, once.
#[derive(Clone, Debug, PartialEq)]
pub struct MarginalParityTransform {
    parities: ParityQueries,
    tables: Vec<TableParities>,
    offsets: Vec<usize>,
    weights: Vec<f64>,
    empty_weight: f64,
    max_table_size: usize,
}

/// Largest table size the transform accepts (each table has `2^s` cells).
pub const MAX_TRANSFORM_TABLE_ATTRIBUTES: usize = 24;

impl MarginalParityTransform {
    /// The transform of `workload`. Fails ([`QueryError::BadDomain`]) unless every
    /// attribute a table reads is binary, or when a table has more than
    /// [`MAX_TRANSFORM_TABLE_ATTRIBUTES`] attributes.
    pub fn new(workload: &MarginalWorkload) -> Result<Self> {
        let domain = workload.domain();
        let d = domain.len();
        for m in workload.marginals() {
            for &a in m.attrs() {
                if domain.size(a) != 2 {
                    return Err(QueryError::BadDomain {
                        reason: format!(
                            "attribute '{}' has {} categories; the marginal-to-parity transform \
                             needs binary attributes — one-hot encode categorical attributes first",
                            domain.name(a),
                            domain.size(a)
                        ),
                    });
                }
            }
            if m.attrs().len() > MAX_TRANSFORM_TABLE_ATTRIBUTES {
                return Err(QueryError::TooLarge {
                    what: "a marginal table for the parity transform".into(),
                    estimate: format!(
                        "{} attributes, more than {MAX_TRANSFORM_TABLE_ATTRIBUTES}",
                        m.attrs().len()
                    ),
                });
            }
        }
        // The distinct non-empty subsets of the tables' attribute sets, by degree then
        // lexicographically.
        let mut all: Vec<Vec<usize>> = Vec::new();
        for m in workload.marginals() {
            let attrs = m.attrs();
            for mask in 1usize..(1 << attrs.len()) {
                let mut set: Vec<usize> = (0..attrs.len())
                    .filter(|j| mask >> j & 1 == 1)
                    .map(|j| attrs[j])
                    .collect();
                set.sort_unstable();
                all.push(set);
            }
        }
        all.sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        all.dedup();
        let parities = ParityQueries::new(d, all)?;
        let mut weights = vec![0.0; parities.len()];
        let mut empty_weight = 0.0;
        let mut tables = Vec::with_capacity(workload.len());
        let mut offsets = Vec::with_capacity(workload.len() + 1);
        offsets.push(0);
        let mut max_table_size = 0;
        for m in workload.marginals() {
            let attrs = m.attrs();
            let s = attrs.len();
            max_table_size = max_table_size.max(s);
            let share = 0.5f64.powi(s as i32);
            empty_weight += share;
            let mut parity_of_mask = vec![None; 1 << s];
            for (mask, slot) in parity_of_mask.iter_mut().enumerate().skip(1) {
                let set: Vec<usize> = (0..s)
                    .filter(|j| mask >> j & 1 == 1)
                    .map(|j| attrs[j])
                    .collect();
                let q = parities
                    .position(&set)
                    .ok_or_else(|| QueryError::BadWorkload {
                        reason: "internal: a table's parity is missing from the transform".into(),
                    })?;
                weights[q] += share;
                *slot = Some(q);
            }
            let cell_masks = (0..m.num_cells())
                .map(|c| {
                    m.cell_codes(c)
                        .iter()
                        .enumerate()
                        .filter(|(_, code)| **code == 1)
                        .fold(0usize, |acc, (j, _)| acc | 1 << j)
                })
                .collect();
            tables.push(TableParities {
                cell_masks,
                parity_of_mask,
            });
            offsets.push(offsets.last().copied().unwrap_or(0) + m.num_cells());
        }
        Ok(Self {
            parities,
            tables,
            offsets,
            weights,
            empty_weight,
            max_table_size,
        })
    }

    /// The parities the workload needs (every non-empty subset of every table), in the
    /// order the parity vectors of this transform use.
    pub fn parities(&self) -> &ParityQueries {
        &self.parities
    }

    /// `ω_T = Σ_{tables S ⊇ T} 2^{−|S|}` per parity (module docs, error transfer): the
    /// workload's total squared cell error is `Σ_T ω_T e_T²`.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// `ω_∅ = Σ_S 2^{−|S|}`, the weight the empty parity (the constant 1) would have.
    pub fn empty_weight(&self) -> f64 {
        self.empty_weight
    }

    /// Number of marginal answers (cells of all tables).
    pub fn num_cells(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// `1 − 2^{−s_max}`: every marginal answer read back by
    /// [`Self::marginals_from_parities`] has error at most this times the largest parity
    /// error (module docs, Theorem 2.5 of seed 000).
    pub fn max_error_factor(&self) -> f64 {
        1.0 - 0.5f64.powi(self.max_table_size as i32)
    }

    /// The normalised marginal answers (workload order) given normalised parity answers
    /// `p` (order of [`Self::parities`]; the empty parity is 1). Fails on a wrong length or
    /// a non-finite value.
    pub fn marginals_from_parities(&self, p: &[f64]) -> Result<Vec<f64>> {
        check_vector("parity answers", p, self.parities.len())?;
        let mut out = vec![0.0; self.num_cells()];
        let mut buf = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            let size = table.parity_of_mask.len();
            buf.clear();
            buf.extend(table.parity_of_mask.iter().map(|q| q.map_or(1.0, |q| p[q])));
            walsh_hadamard(&mut buf);
            let scale = 1.0 / size as f64;
            for (c, &mask) in table.cell_masks.iter().enumerate() {
                out[self.offsets[t] + c] = buf[mask] * scale;
            }
        }
        Ok(out)
    }

    /// The normalised parity answers (order of [`Self::parities`]) of normalised marginal
    /// answers `answers` (workload order): `p_T = Σ_β χ_T(β) m_S(β)` from the first table
    /// `S ⊇ T`. Exact inverse of [`Self::marginals_from_parities`] on answers of a dataset.
    /// Fails on a wrong length or a non-finite value.
    pub fn parities_from_marginals(&self, answers: &[f64]) -> Result<Vec<f64>> {
        check_vector("marginal answers", answers, self.num_cells())?;
        let mut p = vec![f64::NAN; self.parities.len()];
        let mut buf = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            let size = table.parity_of_mask.len();
            buf.clear();
            buf.resize(size, 0.0);
            for (c, &mask) in table.cell_masks.iter().enumerate() {
                buf[mask] = answers[self.offsets[t] + c];
            }
            walsh_hadamard(&mut buf);
            for (mask, q) in table.parity_of_mask.iter().enumerate() {
                if let Some(q) = *q
                    && p[q].is_nan()
                {
                    p[q] = buf[mask];
                }
            }
        }
        Ok(p)
    }

    /// The exact odd counts `o_T` of [`Self::parities`] (their order) from the exact counts
    /// of the workload's tables (workload order, as [`MarginalWorkload::count_all`] gives
    /// them): `o_T = (n_S − Σ_β χ_T(β) c_S(β))/2` from the first table `S ⊇ T`, `n_S` its
    /// total (the integer Walsh–Hadamard transform of the table's counts). On the counts
    /// of a dataset these are [`ParityQueries::odd_counts`] of its records, so a mechanism
    /// that measures parities needs only the workload's counts.
    ///
    /// Errors: a wrong length ([`QueryError::LengthMismatch`]).
    pub fn odd_counts_from_counts(&self, counts: &[u64]) -> Result<Vec<u64>> {
        if counts.len() != self.num_cells() {
            return Err(QueryError::LengthMismatch {
                expected: self.num_cells(),
                found: counts.len(),
            });
        }
        let mut odd: Vec<Option<u64>> = vec![None; self.parities.len()];
        let mut buf: Vec<i128> = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            let cells = &counts[self.offsets[t]..self.offsets[t + 1]];
            buf.clear();
            buf.resize(table.parity_of_mask.len(), 0);
            for (&c, &mask) in cells.iter().zip(&table.cell_masks) {
                buf[mask] = i128::from(c);
            }
            let total: i128 = buf.iter().sum();
            walsh_hadamard(&mut buf);
            for (mask, q) in table.parity_of_mask.iter().enumerate() {
                if let Some(q) = *q
                    && odd[q].is_none()
                {
                    // total − (even − odd) = 2·odd
                    let o = (total - buf[mask]) / 2;
                    odd[q] = Some(u64::try_from(o).map_err(|_| QueryError::BadWorkload {
                        reason: format!("internal: odd count {o} out of range"),
                    })?);
                }
            }
        }
        odd.into_iter()
            .map(|o| {
                o.ok_or_else(|| QueryError::BadWorkload {
                    reason: "internal: a parity is in no table of the transform".into(),
                })
            })
            .collect()
    }
}

fn check_vector(what: &str, v: &[f64], len: usize) -> Result<()> {
    if v.len() != len {
        return Err(QueryError::LengthMismatch {
            expected: len,
            found: v.len(),
        });
    }
    if let Some(index) = v.iter().position(|x| !x.is_finite()) {
        return Err(QueryError::NonFinite {
            what: what.into(),
            index,
        });
    }
    Ok(())
}

/// In-place unnormalised Walsh–Hadamard transform of a vector of length `2^s`:
/// `out[a] = Σ_b (−1)^{popcount(a & b)} in[b]` (exact on integers).
fn walsh_hadamard<T>(v: &mut [T])
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Sub<Output = T>,
{
    let mut h = 1;
    while h < v.len() {
        for block in v.chunks_mut(2 * h) {
            let (lo, hi) = block.split_at_mut(h);
            for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                let (x, y) = (*a, *b);
                *a = x + y;
                *b = x - y;
            }
        }
        h *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walsh_hadamard_matches_the_definition() {
        let input = [0.5, -1.0, 2.0, 3.0, 0.25, 7.0, -2.0, 1.0];
        let mut v = input.to_vec();
        walsh_hadamard(&mut v);
        for (a, got) in v.iter().enumerate() {
            let want: f64 = input
                .iter()
                .enumerate()
                .map(|(b, x)| {
                    if (a & b).count_ones() % 2 == 0 {
                        *x
                    } else {
                        -x
                    }
                })
                .sum();
            assert!((got - want).abs() < 1e-12);
        }
    }

    #[test]
    fn all_up_to_counts_and_orders() {
        let q = ParityQueries::all_up_to(5, 3).unwrap();
        assert_eq!(q.len(), 5 + 10 + 10);
        assert_eq!(q.sets()[0], vec![0]);
        assert_eq!(q.sets()[5], vec![0, 1]);
        assert_eq!(q.degree(), 3);
        assert_eq!(q.position(&[2, 0]), Some(6));
        assert!(ParityQueries::all_up_to(200, 6).is_err());
    }

    #[test]
    fn bad_sets_are_refused() {
        assert!(ParityQueries::new(3, vec![vec![]]).is_err());
        assert!(ParityQueries::new(3, vec![vec![3]]).is_err());
        assert!(ParityQueries::new(3, vec![vec![1, 1]]).is_err());
        assert!(ParityQueries::new(3, vec![vec![0, 1], vec![1, 0]]).is_err());
    }
}
