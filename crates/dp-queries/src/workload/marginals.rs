//! Workloads of marginal queries.
//!
//! A [`MarginalWorkload`] is a list of distinct [`Marginal`]s over one [`Domain`]. Its counting
//! queries are **the cells of the tables in workload order**: query `q` is cell
//! `q - offset(j)` of marginal `j`, where `offset(j) = Σ_{i<j} num_cells(i)`. Every answer
//! vector in dpqr (true counts, normalized answers, private releases) uses this order.
//!
//! Standard workloads: all `k`-way marginals ([`MarginalWorkload::all_kway`], seed 000 §4,
//! seed 003 §6) and `m` random `k`-way marginals ([`MarginalWorkload::random_kway`], the
//! experiments of seed 003 and of RAP/GEM, optionally restricted to tables of at most
//! `max_cells` cells).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::marginal::Marginal;
use super::{AnswerLayout, ContributionBounds, MAX_QUERIES, Parallelism, QueryClass, Workload};
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// When `C(d, k)` is at most this, [`MarginalWorkload::random_kway`] enumerates the eligible
/// subsets and samples among them; above, it uses rejection sampling.
const ENUMERATE_LIMIT: u128 = 1 << 20;

/// A workload of marginals over one domain (see the module docs for the query order).
///
/// Serializes as `{"domain": {...}, "marginals": [...]}`; deserialization re-validates.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "WorkloadRepr", into = "WorkloadRepr")]
pub struct MarginalWorkload {
    domain: Domain,
    marginals: Vec<Marginal>,
    /// `offsets[j]` = first query of marginal `j`; `offsets[len]` = `num_queries`.
    offsets: Vec<usize>,
}

#[derive(Serialize, Deserialize)]
struct WorkloadRepr {
    domain: Domain,
    marginals: Vec<Marginal>,
}

impl From<MarginalWorkload> for WorkloadRepr {
    fn from(w: MarginalWorkload) -> Self {
        WorkloadRepr {
            domain: w.domain,
            marginals: w.marginals,
        }
    }
}

impl TryFrom<WorkloadRepr> for MarginalWorkload {
    type Error = QueryError;
    fn try_from(r: WorkloadRepr) -> Result<Self> {
        MarginalWorkload::new(&r.domain, r.marginals)
    }
}

impl PartialEq for MarginalWorkload {
    fn eq(&self, other: &Self) -> bool {
        self.domain == other.domain && self.marginals == other.marginals
    }
}

impl Eq for MarginalWorkload {}

fn too_large(cells: u128) -> QueryError {
    QueryError::TooLarge {
        what: "marginal workload".into(),
        estimate: format!("{cells} counting queries (at most {MAX_QUERIES} are supported)"),
    }
}

/// `C(n, k)` saturating at `u128::MAX`.
fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut acc: u128 = 1;
    for i in 0..k {
        // acc * (n - i) / (i + 1) is exact at every step.
        acc = match acc.checked_mul((n - i) as u128) {
            Some(v) => v / (i as u128 + 1),
            None => return u128::MAX,
        };
    }
    acc
}

/// Calls `f` on every `k`-subset of `0..d` in lexicographic order; stops when `f` is `false`.
fn for_each_subset(d: usize, k: usize, mut f: impl FnMut(&[usize]) -> bool) {
    if k == 0 || k > d {
        return;
    }
    let mut s: Vec<usize> = (0..k).collect();
    loop {
        if !f(&s) {
            return;
        }
        // Advance: rightmost position that can move.
        let mut i = k;
        while i > 0 && s[i - 1] == d - k + (i - 1) {
            i -= 1;
        }
        if i == 0 {
            return;
        }
        s[i - 1] += 1;
        for j in i..k {
            s[j] = s[j - 1] + 1;
        }
    }
}

fn cells_of(domain: &Domain, attrs: &[usize]) -> u128 {
    attrs.iter().fold(1u128, |acc, &a| {
        acc.saturating_mul(u128::from(domain.size(a)))
    })
}

fn check_k(domain: &Domain, k: usize) -> Result<()> {
    if k == 0 || k > domain.len() {
        return Err(QueryError::BadWorkload {
            reason: format!(
                "k = {k} is not in 1..={} (the number of attributes)",
                domain.len()
            ),
        });
    }
    Ok(())
}

/// The names of attributes `attrs` for a message: `'a', 'b'`.
fn names_of(domain: &Domain, attrs: &[usize]) -> String {
    attrs
        .iter()
        .map(|&a| format!("'{}'", domain.name(a)))
        .collect::<Vec<_>>()
        .join(", ")
}

impl MarginalWorkload {
    /// A workload of the given marginals, in that order.
    ///
    /// Errors: empty list or the same attribute set twice ([`QueryError::BadWorkload`]), a
    /// marginal that does not fit `domain` ([`QueryError::DomainMismatch`]), more than
    /// [`MAX_QUERIES`] cells in total ([`QueryError::TooLarge`]).
    pub fn new(domain: &Domain, marginals: Vec<Marginal>) -> Result<Self> {
        if marginals.is_empty() {
            return Err(QueryError::BadWorkload {
                reason: "a workload needs at least one marginal".into(),
            });
        }
        // each attribute set (sorted) with the 0-based position of its first marginal
        let mut seen: HashMap<Vec<usize>, usize> = HashMap::with_capacity(marginals.len());
        let mut offsets = Vec::with_capacity(marginals.len() + 1);
        let mut total: u128 = 0;
        for (j, m) in marginals.iter().enumerate() {
            if !m.fits(domain) {
                return Err(QueryError::DomainMismatch {
                    reason: format!(
                        "marginal #{j} (attributes {:?}, sizes {:?}) does not fit the domain",
                        m.attrs(),
                        m.sizes()
                    ),
                });
            }
            let mut key = m.attrs().to_vec();
            key.sort_unstable();
            if let Some(&first) = seen.get(&key) {
                return Err(QueryError::BadWorkload {
                    reason: format!(
                        "marginal {} ({}) is the same table as marginal {} ({}): each set of \
                         attributes may appear only once, in any order",
                        j + 1,
                        names_of(domain, m.attrs()),
                        first + 1,
                        names_of(domain, marginals[first].attrs())
                    ),
                });
            }
            seen.insert(key, j);
            offsets.push(total as usize);
            total += m.num_cells() as u128;
            if total > MAX_QUERIES as u128 {
                // Estimate the full size for the message without allocating anything.
                let full: u128 = marginals.iter().map(|m| m.num_cells() as u128).sum();
                return Err(too_large(full));
            }
        }
        offsets.push(total as usize);
        Ok(MarginalWorkload {
            domain: domain.clone(),
            marginals,
            offsets,
        })
    }

    /// All `C(d, k)` `k`-way marginals, subsets in lexicographic order of attribute indices.
    ///
    /// Errors: `k ∉ 1..=d` ([`QueryError::BadWorkload`]); more than [`MAX_QUERIES`] cells
    /// ([`QueryError::TooLarge`], detected before materializing the list).
    pub fn all_kway(domain: &Domain, k: usize) -> Result<Self> {
        check_k(domain, k)?;
        let count = binomial(domain.len(), k);
        if count > MAX_QUERIES as u128 {
            return Err(QueryError::TooLarge {
                what: format!("all-{k}way workload"),
                estimate: format!(
                    "{count} marginals, at least {count} counting queries (at most {MAX_QUERIES} are supported)"
                ),
            });
        }
        let mut total: u128 = 0;
        for_each_subset(domain.len(), k, |s| {
            total += cells_of(domain, s);
            true
        });
        if total > MAX_QUERIES as u128 {
            return Err(too_large(total));
        }
        let mut marginals = Vec::with_capacity(count as usize);
        let mut err = None;
        for_each_subset(domain.len(), k, |s| {
            match Marginal::new(domain, s.to_vec()) {
                Ok(m) => {
                    marginals.push(m);
                    true
                }
                Err(e) => {
                    err = Some(e);
                    false
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        Self::new(domain, marginals)
    }

    /// `m` distinct `k`-way marginals chosen uniformly at random without replacement among
    /// the `k`-subsets whose table has at most `max_cells` cells (all of them if `None`),
    /// listed in lexicographic order.
    ///
    /// For `C(d,k) <= 2^20` the eligible subsets are enumerated and `m` of them sampled;
    /// otherwise uniform `k`-subsets are drawn and rejected if ineligible or already chosen
    /// (which is again uniform without replacement over the eligible ones), giving up with
    /// [`QueryError::BadWorkload`] after `1000·m + 10^6` draws.
    ///
    /// Errors: `k ∉ 1..=d`, `m = 0`, `m > C(d,k)`, or fewer than `m` eligible subsets
    /// ([`QueryError::BadWorkload`]); [`QueryError::TooLarge`] as in [`Self::new`].
    pub fn random_kway<R: Rng + ?Sized>(
        domain: &Domain,
        k: usize,
        m: usize,
        max_cells: Option<usize>,
        rng: &mut R,
    ) -> Result<Self> {
        check_k(domain, k)?;
        let d = domain.len();
        let total = binomial(d, k);
        if m == 0 || m as u128 > total {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "cannot choose m = {m} distinct {k}-way marginals: there are C({d},{k}) = {total}"
                ),
            });
        }
        let cap = max_cells.map_or(u128::MAX, |c| c as u128);
        let mut chosen: Vec<Vec<usize>> = if total <= ENUMERATE_LIMIT {
            let mut eligible = Vec::new();
            for_each_subset(d, k, |s| {
                if cells_of(domain, s) <= cap {
                    eligible.push(s.to_vec());
                }
                true
            });
            if eligible.len() < m {
                return Err(QueryError::BadWorkload {
                    reason: format!(
                        "only {} of the {total} {k}-way marginals have at most {cap} cells; cannot choose m = {m}",
                        eligible.len()
                    ),
                });
            }
            let mut pick = rand::seq::index::sample(rng, eligible.len(), m).into_vec();
            pick.sort_unstable();
            pick.into_iter().map(|i| eligible[i].clone()).collect()
        } else {
            let mut set = HashSet::with_capacity(m);
            let max_draws = (m as u128).saturating_mul(1000).saturating_add(1_000_000);
            let mut draws: u128 = 0;
            while set.len() < m {
                if draws >= max_draws {
                    return Err(QueryError::BadWorkload {
                        reason: format!(
                            "found only {} distinct {k}-way marginals with at most {cap} cells in {draws} random draws; cannot choose m = {m}",
                            set.len()
                        ),
                    });
                }
                draws += 1;
                let mut s = rand::seq::index::sample(rng, d, k).into_vec();
                s.sort_unstable();
                if cells_of(domain, &s) <= cap {
                    set.insert(s);
                }
            }
            set.into_iter().collect()
        };
        chosen.sort_unstable();
        let marginals = chosen
            .into_iter()
            .map(|s| Marginal::new(domain, s))
            .collect::<Result<Vec<_>>>()?;
        Self::new(domain, marginals)
    }

    /// Marginals given by attribute names, each list in table order.
    ///
    /// Errors: an empty outer or inner list or a repeated attribute within a list
    /// ([`QueryError::BadWorkload`], naming the list), an unknown name
    /// ([`QueryError::UnknownAttribute`]), as well as those of [`Self::new`].
    pub fn from_attribute_lists(domain: &Domain, lists: &[Vec<String>]) -> Result<Self> {
        let mut marginals = Vec::with_capacity(lists.len());
        for (j, list) in lists.iter().enumerate() {
            if list.is_empty() {
                return Err(QueryError::BadWorkload {
                    reason: format!("marginal {} has no attributes", j + 1),
                });
            }
            let mut attrs = Vec::with_capacity(list.len());
            for name in list {
                let a = domain.index_of(name)?;
                if attrs.contains(&a) {
                    return Err(QueryError::BadWorkload {
                        reason: format!(
                            "marginal {} ({}) names the attribute '{name}' twice; a table \
                             lists each attribute once",
                            j + 1,
                            list.iter()
                                .map(|n| format!("'{n}'"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
                attrs.push(a);
            }
            marginals.push(Marginal::new(domain, attrs)?);
        }
        Self::new(domain, marginals)
    }

    /// Reads a JSON file holding a list of attribute-name lists, e.g.
    /// `[["age","sex","race"], ["workclass","income>50K"]]`.
    pub fn from_json_file(domain: &Domain, path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| QueryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let lists: Vec<Vec<String>> =
            serde_json::from_slice(&bytes).map_err(|e| QueryError::BadJson {
                file: path.display().to_string(),
                message: e.to_string(),
            })?;
        Self::from_attribute_lists(domain, &lists)
    }

    /// Parses a workload specification:
    /// * `"all-Kway"` — [`Self::all_kway`] with `k = K`;
    /// * `"random-Kway:M"` — [`Self::random_kway`] with `k = K`, `m = M`, no cell cap, and
    ///   `rand_chacha::ChaCha20Rng::seed_from_u64(seed)`;
    /// * anything else — a path to a JSON file for [`Self::from_json_file`].
    ///
    /// A spec starting with `all-` or `random-` that does not match these forms is an
    /// error ([`QueryError::BadWorkload`]), not a file name.
    pub fn parse_spec(domain: &Domain, spec: &str, seed: u64) -> Result<Self> {
        let bad = |why: &str| QueryError::BadWorkload {
            reason: format!(
                "spec '{spec}': {why} (expected 'all-Kway', 'random-Kway:M' or a JSON file path)"
            ),
        };
        let parse_k = |s: &str| -> Result<usize> {
            let k = s
                .strip_suffix("way")
                .ok_or_else(|| bad("missing 'way' after K"))?;
            let k: usize = parse_positive(k).ok_or_else(|| bad("K must be a positive integer"))?;
            check_k(domain, k).map_err(|e| bad(&e.to_string()))?;
            Ok(k)
        };
        if let Some(rest) = spec.strip_prefix("all-") {
            let k = parse_k(rest)?;
            Self::all_kway(domain, k)
        } else if let Some(rest) = spec.strip_prefix("random-") {
            let (k, m) = rest
                .split_once(':')
                .ok_or_else(|| bad("missing ':M' (the number of marginals)"))?;
            let k = parse_k(k)?;
            if m.is_empty() {
                return Err(bad("missing M after ':'"));
            }
            let m = parse_positive(m).ok_or_else(|| bad("M must be a positive integer"))?;
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
            Self::random_kway(domain, k, m, None, &mut rng)
        } else {
            Self::from_json_file(domain, Path::new(spec))
        }
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }
    /// The attributes at least one table of the workload touches, ascending.
    pub fn touched_attributes(&self) -> Vec<usize> {
        let mut a: Vec<usize> = self
            .marginals
            .iter()
            .flat_map(|m| m.attrs().iter().copied())
            .collect();
        a.sort_unstable();
        a.dedup();
        a
    }

    /// The same workload over the sub-domain `self.domain().project(attrs)`: table `j` asks
    /// for the same attributes, renumbered to their positions in `attrs`, in the same order —
    /// so its answers have exactly the layout of `self`'s, and counting it on a dataset
    /// restricted to `attrs` gives `self`'s counts on the full one.
    ///
    /// Errors: `attrs` out of range, repeated or empty, or missing an attribute some table
    /// uses ([`QueryError::UnknownAttribute`]).
    pub fn on_attributes(&self, attrs: &[usize]) -> Result<MarginalWorkload> {
        let sub = self.domain.project(attrs)?;
        let mut marginals = Vec::with_capacity(self.marginals.len());
        for m in &self.marginals {
            let renumbered =
                m.attrs()
                    .iter()
                    .map(|a| {
                        attrs.iter().position(|b| b == a).ok_or_else(|| {
                            QueryError::UnknownAttribute {
                                name: self.domain.name(*a).to_string(),
                            }
                        })
                    })
                    .collect::<Result<Vec<usize>>>()?;
            marginals.push(Marginal::new(&sub, renumbered)?);
        }
        MarginalWorkload::new(&sub, marginals)
    }

    /// The marginals, in workload order.
    pub fn marginals(&self) -> &[Marginal] {
        &self.marginals
    }

    /// Number of marginals.
    pub fn len(&self) -> usize {
        self.marginals.len()
    }

    /// Always `false`: a workload has at least one marginal.
    pub fn is_empty(&self) -> bool {
        self.marginals.is_empty()
    }

    /// Total number of counting queries (cells over all tables), at most [`MAX_QUERIES`].
    pub fn num_queries(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Index of the first query of marginal `j`; `offset(len()) = num_queries()` (and so is
    /// any larger `j`).
    pub fn offset(&self, j: usize) -> usize {
        self.offsets
            .get(j)
            .copied()
            .unwrap_or_else(|| self.num_queries())
    }

    /// `(j, cell)` such that query `q` is cell `cell` of marginal `j`.
    /// For `q >= num_queries()` returns `(len(), q - num_queries())` (one past the end).
    pub fn query_location(&self, q: usize) -> (usize, usize) {
        // Last j with offsets[j] <= q (offsets are strictly increasing).
        let j = self.offsets.partition_point(|&o| o <= q).saturating_sub(1);
        let j = j.min(self.len());
        (j, q - self.offset(j))
    }

    /// Checks that `data` is over this workload's domain.
    fn check_data(&self, data: &Dataset) -> Result<()> {
        if data.domain() != &self.domain {
            return Err(QueryError::DomainMismatch {
                reason: "the dataset's domain differs from the workload's domain".into(),
            });
        }
        Ok(())
    }

    /// Exact counts of all queries, flattened in workload order, marginals in parallel
    /// (rayon). Errors with [`QueryError::DomainMismatch`] unless `data.domain()` equals the
    /// workload's domain.
    pub fn count_all(&self, data: &Dataset) -> Result<Vec<u64>> {
        self.count_all_with(data, Parallelism::Rayon)
    }

    /// [`Self::count_all`] with explicit parallelism.
    pub fn count_all_with(&self, data: &Dataset, parallelism: Parallelism) -> Result<Vec<u64>> {
        let mut out = vec![0u64; self.num_queries()];
        self.count_all_into(data, &mut out, parallelism)?;
        Ok(out)
    }

    /// Overwrites `out` (of length `num_queries()`) with the exact counts in workload order,
    /// reusing the caller's buffer (no allocation beyond a list of table slices).
    ///
    /// Errors: [`QueryError::LengthMismatch`] for a wrong `out` length,
    /// [`QueryError::DomainMismatch`] unless `data.domain()` equals the workload's domain.
    pub fn count_all_into(
        &self,
        data: &Dataset,
        out: &mut [u64],
        parallelism: Parallelism,
    ) -> Result<()> {
        self.for_each_table(data, out, parallelism, |m, t| m.count_into(data, t))
    }

    /// **Adds** the exact counts of all queries on `data` to `totals` (of length
    /// `num_queries()`, workload order), each table counted in place
    /// ([`Marginal::add_counts_into`]): no table is allocated, zeroed or added a second
    /// time, so a streaming pass costs the same per record as [`Self::count_all`].
    ///
    /// Errors: as [`Self::count_all_into`].
    pub fn add_counts_into(
        &self,
        data: &Dataset,
        totals: &mut [i128],
        parallelism: Parallelism,
    ) -> Result<()> {
        self.for_each_table(data, totals, parallelism, |m, t| m.add_counts_into(data, t))
    }

    /// Checks `data` and the length of `out`, cuts `out` into one slice per table (workload
    /// order) and runs `count` on each, tables in parallel under [`Parallelism::Rayon`].
    fn for_each_table<T: Send>(
        &self,
        data: &Dataset,
        out: &mut [T],
        parallelism: Parallelism,
        count: impl Fn(&Marginal, &mut [T]) -> Result<()> + Sync,
    ) -> Result<()> {
        self.check_data(data)?;
        if out.len() != self.num_queries() {
            return Err(QueryError::LengthMismatch {
                expected: self.num_queries(),
                found: out.len(),
            });
        }
        let mut tables: Vec<(&Marginal, &mut [T])> = Vec::with_capacity(self.len());
        let mut rest = out;
        for m in &self.marginals {
            let (head, tail) = rest.split_at_mut(m.num_cells());
            tables.push((m, head));
            rest = tail;
        }
        match parallelism {
            Parallelism::None => tables.into_iter().try_for_each(|(m, t)| count(m, t)),
            Parallelism::Rayon => tables.into_par_iter().try_for_each(|(m, t)| count(m, t)),
        }
    }

    /// Normalized answers `count / n` in workload order (each table sums to 1).
    /// Errors with [`QueryError::EmptyDataset`] when `n = 0` (no normalised answers exist).
    pub fn answers(&self, data: &Dataset) -> Result<Vec<f64>> {
        if data.n() == 0 {
            return Err(QueryError::EmptyDataset);
        }
        let n = data.n() as f64;
        Ok(self
            .count_all(data)?
            .into_iter()
            .map(|c| c as f64 / n)
            .collect())
    }
}

/// Parses a positive decimal integer made of ASCII digits only.
fn parse_positive(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|&v| v > 0)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting the workload restricted to its touched attributes on the data restricted to
    /// them gives the full workload's counts, cell for cell; a missing attribute is an error.
    #[test]
    fn on_attributes_keeps_the_counts_and_the_layout() {
        let domain = Domain::new(vec![
            ("a".into(), 2),
            ("b".into(), 3),
            ("c".into(), 2),
            ("d".into(), 4),
        ])
        .unwrap();
        let cols = vec![
            vec![0, 1, 1, 0, 1],
            vec![2, 0, 1, 1, 2],
            vec![1, 1, 0, 0, 1],
            vec![3, 0, 2, 1, 3],
        ];
        let data = Dataset::from_columns(domain.clone(), cols).unwrap();
        let w = MarginalWorkload::from_attribute_lists(
            &domain,
            &[vec!["d".into(), "b".into()], vec!["b".into()]],
        )
        .unwrap();
        let touched = w.touched_attributes();
        assert_eq!(touched, vec![1, 3]);
        let sub = w.on_attributes(&touched).unwrap();
        let sub_data = data.select_attributes(&["b", "d"]).unwrap();
        assert_eq!(sub.num_queries(), w.num_queries());
        assert_eq!(
            sub.count_all(&sub_data).unwrap(),
            w.count_all(&data).unwrap()
        );
        assert_eq!(sub.marginals()[0].attrs(), &[1, 0]);
        assert!(matches!(
            w.on_attributes(&[1]),
            Err(QueryError::UnknownAttribute { .. })
        ));
    }

    #[test]
    fn binomial_matches_pascal() {
        let mut row = vec![1u128];
        for n in 1..=40usize {
            let mut next = vec![1u128; n + 1];
            for k in 1..n {
                next[k] = row[k - 1] + row[k];
            }
            row = next;
            for (k, &v) in row.iter().enumerate() {
                assert_eq!(binomial(n, k), v, "C({n},{k})");
            }
        }
        assert_eq!(binomial(3, 4), 0);
    }

    #[test]
    fn subsets_are_lexicographic_and_complete() {
        let mut all = Vec::new();
        for_each_subset(5, 3, |s| {
            all.push(s.to_vec());
            true
        });
        assert_eq!(all.len(), 10);
        assert_eq!(all[0], vec![0, 1, 2]);
        assert_eq!(all[1], vec![0, 1, 3]);
        assert_eq!(all[9], vec![2, 3, 4]);
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, all);
    }
}
