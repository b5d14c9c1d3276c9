//! Conjunction and parity queries on the one-hot (binarized) view of a categorical domain.
//!
//! Seed 003 (§5, §6, §7) binarizes every attribute of size `s` into `s` one-hot bits and
//! asks `k`-way **conjunctions** `x_a ∧ x_b ∧ x_c` of bits and **parities**
//! `x_a ⊕ x_b ⊕ x_c`. A bit is a [`Literal`] `(attribute, code)`: "attribute `attr` has code
//! `value`". A query is *sensible* (seed 003 §7, "Data discretization") when its bits come
//! from distinct attributes — it never asks one original attribute to take two values;
//! every query here is sensible (checked by [`ConjunctionWorkload::new`]).
//!
//! On a binary domain (every attribute of size 2) literal `(i, 1)` is the bit `x_i` and
//! `(i, 0)` its negation `¬x_i`, so the paper's 3-way marginals with literals of either
//! sign (§7, "Comparison with a simple baseline") are exactly the sensible 3-way
//! conjunctions. A marginal table's cells are conjunctions too
//! ([`ConjunctionWorkload::from_marginals`]).
//!
//! [`BitColumns`] stores a dataset as one bitset over records per literal, so a `k`-way
//! query is answered with `k − 1` ANDs (or XORs) and a popcount over `⌈n/64⌉` words, in
//! memory `Σ sizes · ⌈n/64⌉` words — small enough for the synthetic data of seed 003 §7 with
//! hundreds of thousands of binary attributes, where a column-major [`Dataset`] of `u32`
//! codes is not.

use std::collections::HashSet;

use rand::{Rng, RngExt};
use rayon::prelude::*;

use super::marginals::MarginalWorkload;
use super::{AnswerLayout, ContributionBounds, Parallelism, QueryClass, Workload, check_domain};
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// One one-hot bit: "attribute `attr` has code `value`".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Literal {
    /// Attribute index in the domain.
    pub attr: u32,
    /// Code of that attribute.
    pub value: u32,
}

/// Which function of its literals a query computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueryKind {
    /// 1 iff every literal holds (seed 003 Def. 5.1).
    Conjunction,
    /// 1 iff an odd number of literals hold (seed 003 Def. 6.1 in {0,1} form: the paper's
    /// ±1-valued `q_S` is `1 − 2·parity`, and its negation `\bar q_S` is this query).
    Parity,
    /// 1 iff at least one literal holds (the disjunctions of seed 002 §4.1, Thaler, Ullman
    /// and Vadhan 2012).
    Disjunction,
}

/// A list of sensible queries of one [`QueryKind`] over a domain, stored flat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConjunctionWorkload {
    domain: Domain,
    kind: QueryKind,
    literals: Vec<Literal>,
    starts: Vec<usize>,
}

/// Checks one query: non-empty, attributes in range and distinct, codes in range (shared by
/// the threshold queries of [`super::threshold`]).
pub(crate) fn check_query(domain: &Domain, q: &[Literal], index: usize) -> Result<()> {
    if q.is_empty() {
        return Err(QueryError::BadWorkload {
            reason: format!("query #{index} has no literals"),
        });
    }
    let mut seen = HashSet::with_capacity(q.len());
    for lit in q {
        let a = lit.attr as usize;
        if a >= domain.len() {
            return Err(QueryError::AttributeOutOfRange {
                index: a,
                len: domain.len(),
            });
        }
        if lit.value >= domain.size(a) {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "query #{index}: code {} of attribute '{}' is outside 0..{}",
                    lit.value,
                    domain.name(a),
                    domain.size(a)
                ),
            });
        }
        if !seen.insert(a) {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "query #{index} is not sensible: attribute '{}' appears twice",
                    domain.name(a)
                ),
            });
        }
    }
    Ok(())
}

impl ConjunctionWorkload {
    /// A workload of the given queries, validated: each non-empty, sensible (distinct
    /// attributes), with codes in range; at least one query.
    pub fn new(domain: &Domain, kind: QueryKind, queries: Vec<Vec<Literal>>) -> Result<Self> {
        if queries.is_empty() {
            return Err(QueryError::BadWorkload {
                reason: "a conjunction workload needs at least one query".into(),
            });
        }
        let mut literals = Vec::new();
        let mut starts = Vec::with_capacity(queries.len() + 1);
        for (i, q) in queries.iter().enumerate() {
            check_query(domain, q, i)?;
            starts.push(literals.len());
            literals.extend_from_slice(q);
        }
        starts.push(literals.len());
        Ok(ConjunctionWorkload {
            domain: domain.clone(),
            kind,
            literals,
            starts,
        })
    }

    /// `m` distinct random sensible `k`-way queries (seed 003 §7): `k` distinct attributes
    /// uniformly at random, then one code of each uniformly at random.
    ///
    /// Errors: `k ∉ 1..=d`, `m = 0`, or `m` distinct queries not found in
    /// `1000·m + 10⁶` draws ([`QueryError::BadWorkload`]).
    pub fn random_kway<R: Rng + ?Sized>(
        domain: &Domain,
        kind: QueryKind,
        k: usize,
        m: usize,
        rng: &mut R,
    ) -> Result<Self> {
        let d = domain.len();
        if k == 0 || k > d || m == 0 {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "random_kway needs 1 <= k <= d = {d} and m >= 1 (k = {k}, m = {m})"
                ),
            });
        }
        let mut set: HashSet<Vec<Literal>> = HashSet::with_capacity(m);
        let mut queries = Vec::with_capacity(m);
        let max_draws = (m as u64).saturating_mul(1000).saturating_add(1_000_000);
        let mut draws = 0u64;
        while queries.len() < m {
            if draws >= max_draws {
                return Err(QueryError::BadWorkload {
                    reason: format!(
                        "found only {} distinct {k}-way queries in {draws} draws; cannot choose m = {m}",
                        queries.len()
                    ),
                });
            }
            draws += 1;
            let mut attrs = rand::seq::index::sample(rng, d, k).into_vec();
            attrs.sort_unstable();
            let q: Vec<Literal> = attrs
                .into_iter()
                .map(|a| Literal {
                    attr: a as u32,
                    value: rng.random_range(0..domain.size(a)),
                })
                .collect();
            if set.insert(q.clone()) {
                queries.push(q);
            }
        }
        Self::new(domain, kind, queries)
    }

    /// Every cell of every table of a marginal workload as a conjunction, in the workload's
    /// query order (cell `c` of a table over attributes `a₁…a_k` is `∧_i (a_i = code_i(c))`).
    pub fn from_marginals(workload: &MarginalWorkload) -> Result<Self> {
        let mut queries = Vec::with_capacity(workload.num_queries());
        for m in workload.marginals() {
            for cell in 0..m.num_cells() {
                let codes = m.cell_codes(cell);
                queries.push(
                    m.attrs()
                        .iter()
                        .zip(codes)
                        .map(|(&a, value)| Literal {
                            attr: a as u32,
                            value,
                        })
                        .collect(),
                );
            }
        }
        Self::new(workload.domain(), QueryKind::Conjunction, queries)
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The query kind.
    pub fn kind(&self) -> QueryKind {
        self.kind
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Always `false` (a workload has at least one query).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The literals of query `i` (empty if `i` is out of range).
    pub fn query(&self, i: usize) -> &[Literal] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&s), Some(&e)) => &self.literals[s..e],
            _ => &[],
        }
    }

    /// The value (0 or 1) of query `i` on one record of codes (a record shorter than the
    /// domain, or `i` out of range, gives 0 for the missing literals / query).
    pub fn evaluate(&self, i: usize, record: &[u32]) -> u8 {
        let q = self.query(i);
        let holds = |l: &Literal| record.get(l.attr as usize) == Some(&l.value);
        match self.kind {
            QueryKind::Conjunction => u8::from(!q.is_empty() && q.iter().all(holds)),
            QueryKind::Parity => (q.iter().filter(|l| holds(l)).count() % 2) as u8,
            QueryKind::Disjunction => u8::from(q.iter().any(holds)),
        }
    }

    /// Normalised answers (fraction of records) on bit columns, rayon over queries.
    ///
    /// Errors: the columns' domain differs from the workload's.
    pub fn answers(&self, data: &BitColumns) -> Result<Vec<f64>> {
        if data.domain != self.domain {
            return Err(QueryError::DomainMismatch {
                reason: "the bit columns are over a different domain than the workload".into(),
            });
        }
        let n = data.n as f64;
        Ok((0..self.len())
            .into_par_iter()
            .map(|i| data.count(self.kind, self.query(i)) as f64 / n)
            .collect())
    }

    /// Normalised answers on weighted records (`records[r]` a full record of codes,
    /// `weights[r] >= 0`, normalised by their sum): the answers of a synthetic dataset.
    ///
    /// Errors: length mismatch, a record of the wrong length, or non-positive total weight.
    pub fn answers_of_records(&self, records: &[Vec<u32>], weights: &[f64]) -> Result<Vec<f64>> {
        if records.len() != weights.len() {
            return Err(QueryError::LengthMismatch {
                expected: records.len(),
                found: weights.len(),
            });
        }
        if let Some(r) = records.iter().find(|r| r.len() != self.domain.len()) {
            return Err(QueryError::LengthMismatch {
                expected: self.domain.len(),
                found: r.len(),
            });
        }
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return Err(QueryError::BadWorkload {
                reason: format!("weights must have a positive finite sum, found {total}"),
            });
        }
        Ok((0..self.len())
            .into_par_iter()
            .map(|i| {
                records
                    .iter()
                    .zip(weights)
                    .map(|(r, w)| w * f64::from(self.evaluate(i, r)))
                    .sum::<f64>()
                    / total
            })
            .collect())
    }
}

/// A dataset as one bitset over records per literal: bit `r` of the set of `(a, v)` is 1
/// iff record `r` has code `v` for attribute `a`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitColumns {
    domain: Domain,
    n: usize,
    words: usize,
    /// First literal index of each attribute (prefix sums of the sizes).
    offsets: Vec<usize>,
    bits: Vec<u64>,
}

impl BitColumns {
    /// Bit columns with `n >= 1` records whose code of attribute `a` in record `r` is
    /// `code(a, r)`, called attribute by attribute, record by record.
    ///
    /// Errors: `n = 0` ([`QueryError::EmptyDataset`]), a code out of range
    /// ([`QueryError::CodeOutOfRange`]), or more than 2^34 words ([`QueryError::TooLarge`]).
    pub fn from_fn(
        domain: &Domain,
        n: usize,
        mut code: impl FnMut(usize, usize) -> u32,
    ) -> Result<Self> {
        if n == 0 {
            return Err(QueryError::EmptyDataset);
        }
        let words = n.div_ceil(64);
        let mut offsets = Vec::with_capacity(domain.len() + 1);
        let mut total = 0usize;
        for &s in domain.sizes() {
            offsets.push(total);
            total += s as usize;
        }
        offsets.push(total);
        let size = (total as u128) * (words as u128);
        if size > 1u128 << 34 {
            return Err(QueryError::TooLarge {
                what: "bit columns".into(),
                estimate: format!("{size} words"),
            });
        }
        let mut bits = vec![0u64; total * words];
        for a in 0..domain.len() {
            let s = domain.size(a);
            for r in 0..n {
                let v = code(a, r);
                if v >= s {
                    return Err(QueryError::CodeOutOfRange {
                        attribute: domain.name(a).to_string(),
                        row: r,
                        value: v,
                        size: s,
                    });
                }
                bits[(offsets[a] + v as usize) * words + r / 64] |= 1u64 << (r % 64);
            }
        }
        Ok(BitColumns {
            domain: domain.clone(),
            n,
            words,
            offsets,
            bits,
        })
    }

    /// The bit columns of a dataset.
    pub fn from_dataset(data: &Dataset) -> Result<Self> {
        Self::from_fn(data.domain(), data.n(), |a, r| data.column(a)[r])
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// Number of records.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The code of attribute `a` in record `r` (`None` out of range).
    pub fn code(&self, a: usize, r: usize) -> Option<u32> {
        if a >= self.domain.len() || r >= self.n {
            return None;
        }
        (0..self.domain.size(a)).find(|&v| {
            let set = self.set(Literal {
                attr: a as u32,
                value: v,
            });
            set[r / 64] >> (r % 64) & 1 == 1
        })
    }

    /// The record set of one literal (assumed in range).
    fn set(&self, l: Literal) -> &[u64] {
        let i = self.offsets[l.attr as usize] + l.value as usize;
        &self.bits[i * self.words..(i + 1) * self.words]
    }

    /// Number of records on which the query of `kind` over `lits` is 1 (literals assumed
    /// validated against this domain).
    pub fn count(&self, kind: QueryKind, lits: &[Literal]) -> u64 {
        let sets: Vec<&[u64]> = lits.iter().map(|&l| self.set(l)).collect();
        let mut total = 0u64;
        for w in 0..self.words {
            let word = match kind {
                QueryKind::Conjunction => sets.iter().fold(u64::MAX, |acc, s| acc & s[w]),
                QueryKind::Parity => sets.iter().fold(0u64, |acc, s| acc ^ s[w]),
                QueryKind::Disjunction => sets.iter().fold(0u64, |acc, s| acc | s[w]),
            };
            let word = if lits.is_empty() && kind == QueryKind::Conjunction {
                // The empty conjunction is true on every record.
                if w + 1 == self.words && !self.n.is_multiple_of(64) {
                    (1u64 << (self.n % 64)) - 1
                } else {
                    u64::MAX
                }
            } else {
                word
            };
            total += u64::from(word.count_ones());
        }
        total
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
        let bits = BitColumns::from_dataset(data)?;
        let count = |q: usize| bits.count(self.kind(), self.query(q)) as i64;
        Ok(match parallelism {
            Parallelism::None => (0..self.len()).map(count).collect(),
            Parallelism::Rayon => (0..self.len()).into_par_iter().map(count).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn domain() -> Domain {
        Domain::new(vec![
            ("a".to_string(), 3),
            ("b".to_string(), 2),
            ("c".to_string(), 4),
        ])
        .unwrap()
    }

    #[test]
    fn counts_match_naive() {
        let dom = domain();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let cols: Vec<Vec<u32>> = (0..3)
            .map(|a| (0..130).map(|_| rng.random_range(0..dom.size(a))).collect())
            .collect();
        let data = Dataset::from_columns(dom.clone(), cols.clone()).unwrap();
        let bits = BitColumns::from_dataset(&data).unwrap();
        for kind in [
            QueryKind::Conjunction,
            QueryKind::Parity,
            QueryKind::Disjunction,
        ] {
            let w = ConjunctionWorkload::random_kway(&dom, kind, 2, 20, &mut rng).unwrap();
            let ans = w.answers(&bits).unwrap();
            for (i, a) in ans.iter().enumerate() {
                let naive = (0..130)
                    .filter(|&r| {
                        let rec: Vec<u32> = (0..3).map(|j| cols[j][r]).collect();
                        w.evaluate(i, &rec) == 1
                    })
                    .count();
                assert_eq!(*a, naive as f64 / 130.0);
            }
        }
        assert_eq!(bits.code(2, 129), Some(cols[2][129]));
    }

    #[test]
    fn marginal_cells_are_conjunctions() {
        let dom = domain();
        let data = Dataset::from_columns(
            dom.clone(),
            vec![vec![0, 1, 2, 2], vec![1, 1, 0, 0], vec![3, 0, 3, 3]],
        )
        .unwrap();
        let w = MarginalWorkload::all_kway(&dom, 2).unwrap();
        let c = ConjunctionWorkload::from_marginals(&w).unwrap();
        assert_eq!(c.len(), w.num_queries());
        let bits = BitColumns::from_dataset(&data).unwrap();
        assert_eq!(c.answers(&bits).unwrap(), w.answers(&data).unwrap());
    }

    #[test]
    fn rejects_unsensible_and_bad_codes() {
        let dom = domain();
        let l = |attr, value| Literal { attr, value };
        assert!(
            ConjunctionWorkload::new(&dom, QueryKind::Conjunction, vec![vec![l(0, 0), l(0, 1)]])
                .is_err()
        );
        assert!(
            ConjunctionWorkload::new(&dom, QueryKind::Conjunction, vec![vec![l(1, 2)]]).is_err()
        );
        assert!(ConjunctionWorkload::new(&dom, QueryKind::Conjunction, vec![]).is_err());
        assert!(ConjunctionWorkload::new(&dom, QueryKind::Parity, vec![vec![]]).is_err());
    }

    #[test]
    fn weighted_records() {
        let dom = domain();
        let l = |attr, value| Literal { attr, value };
        let w = ConjunctionWorkload::new(
            &dom,
            QueryKind::Conjunction,
            vec![vec![l(0, 1)], vec![l(0, 1), l(2, 3)]],
        )
        .unwrap();
        let ans = w
            .answers_of_records(&[vec![1, 0, 3], vec![1, 1, 0]], &[3.0, 1.0])
            .unwrap();
        assert_eq!(ans, vec![1.0, 0.75]);
    }
}
