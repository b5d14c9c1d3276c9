//! Counting plans (issue #25 item 1): what a mechanism reads of the data, declared from
//! public inputs before any record is read.
//!
//! A release is "count on a source, release from the counts" whenever a mechanism reads the
//! data only through exact counts. Three cases, told apart by [`DataAccess::of`]:
//!
//! | access | what is counted | the mechanism's methods |
//! |---|---|---|
//! | [`DataAccess::WorkloadCounts`] | the workload's own queries, and n | [`Mechanism::counts_suffice`], [`Mechanism::release_counts`] |
//! | [`DataAccess::Plan`] | the marginal tables of a [`CountingPlan`] (other than the workload's), and n | [`Mechanism::counting_plan`], [`Mechanism::release_planned`] |
//! | [`DataAccess::Records`] | nothing: the mechanism reads the records | [`Mechanism::release`] only |
//!
//! A plan's tables are a [`MarginalWorkload`] over the workload's domain, so every source
//! that counts a marginal workload — the in-memory table, the CSV / gzip / Parquet streams,
//! the DataFusion and Ballista engines — counts a plan unchanged. The mechanisms with a
//! plan release from records by counting the plan on them
//! ([`CountingPlan::count_records`]) and running the same code as from the source's
//! counts, so the two releases are the same, draw for draw.
//!
//! The plans built so far:
//! - the coarse projection and chaining (seed 004 §4.1, §4.2) count the data's histogram
//!   over the explicit universe, i.e. one table over every attribute of the workload's
//!   domain ([`CountingPlan::universe_histogram`]; through [`crate::OnWorkloadAttributes`],
//!   over the attributes the workload touches);
//! - the polynomial release (seed 002 Thm 3.1/3.2) on marginals, conjunctions,
//!   disjunctions and k-of-ℓ thresholds counts the tables over at most `D` of the
//!   attributes the queries touch ([`CountingPlan::low_order_tables`], in the order of its
//!   coefficient blocks; `crate::polynomial` module docs, "Data access"); its decision-list
//!   databases need the records.
//!
//! Privacy: a plan is a function of public inputs only (the parameters, the budget, the
//! workload and its domain); the counts are exact, and each mechanism's guarantee is
//! stated for the release from them, which is its release from records.

use dp_queries::{Dataset, Domain, Marginal, MarginalWorkload, Workload};

use crate::{Mechanism, MechanismError, Result};

/// The marginal tables a mechanism needs counted, beyond the workload's own counts, and
/// whether it needs the number of records n beside them (module docs). Built from public
/// inputs by [`Mechanism::counting_plan`]; the counts of [`Self::tables`] in their query
/// order (as [`MarginalWorkload::count_all`] gives them) are what
/// [`Mechanism::release_planned`] takes.
#[derive(Clone, Debug, PartialEq)]
pub struct CountingPlan {
    tables: MarginalWorkload,
    needs_n: bool,
}

impl CountingPlan {
    /// A plan counting `tables` (over the workload's domain), with or without n.
    pub fn new(tables: MarginalWorkload, needs_n: bool) -> Self {
        CountingPlan { tables, needs_n }
    }

    /// The histogram of the data over the explicit universe of `domain`: one table over
    /// every attribute in domain order, whose cells are in the universe's order
    /// ([`dp_queries::Universe`]: the last attribute varies fastest), with n (the answers
    /// are divided by the public n; it is also the table's total). The plan of the
    /// cover-based mechanisms of seed 004 §4.
    ///
    /// Errors: a table of more cells than a marginal may have.
    pub fn universe_histogram(domain: &Domain) -> Result<Self> {
        let all = Marginal::new(domain, (0..domain.len()).collect())?;
        Ok(CountingPlan::new(
            MarginalWorkload::new(domain, vec![all])?,
            true,
        ))
    }

    /// Every table over a set of at most `degree` (and at least one) of `attrs` (ascending,
    /// distinct attributes of `domain`): sets by size, then in colexicographic order of
    /// their attributes' positions in `attrs` (the order of the polynomial release's
    /// coefficient blocks, `polynomial::release::MonomialIndex`), each table's attributes
    /// ascending. With n. The polynomial release's plan (seed 002: its monomial counts
    /// `C(S)` are cells of these tables, or for negated literals sums of cells).
    ///
    /// Errors: no attributes or degree 0 (no table), or a table refused by
    /// [`Marginal::new`].
    pub fn low_order_tables(domain: &Domain, attrs: &[usize], degree: usize) -> Result<Self> {
        if attrs.is_empty() || degree == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "degree",
                value: format!("{degree} over {} attributes", attrs.len()),
                reason: "a plan of low-order tables needs an attribute and degree >= 1".into(),
            });
        }
        let sets = colex_subsets(attrs.len(), degree);
        let marginals = sets
            .into_iter()
            .map(|set| Marginal::new(domain, set.iter().map(|&p| attrs[p]).collect()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(CountingPlan::new(
            MarginalWorkload::new(domain, marginals)?,
            true,
        ))
    }

    /// The tables to count, over the workload's domain.
    pub fn tables(&self) -> &MarginalWorkload {
        &self.tables
    }

    /// Whether the release needs n beside the tables' counts (every source reports it; it
    /// is public under the replace-one neighbours these plans are stated for).
    pub fn needs_n(&self) -> bool {
        self.needs_n
    }

    /// The exact counts of the plan's tables on `data` (query order): how a mechanism with
    /// a plan releases from records, through the same code as from a source's counts.
    ///
    /// Errors: `data` over another domain than the tables'.
    pub fn count_records(&self, data: &Dataset) -> Result<Vec<u64>> {
        Ok(self.tables.count_all(data)?)
    }

    /// The counts a source handed in, checked to be the plan's tables of one dataset of
    /// `n ≥ 1` records (one per cell, none negative, every table totalling n), as `u64`:
    /// refused before any draw otherwise.
    pub fn checked_counts(&self, counts: Vec<i64>, n: usize) -> Result<Vec<u64>> {
        crate::counts::marginal_counts(counts, n, &self.tables)
    }

    /// [`Self::checked_counts`] for counts already unsigned (the records path runs it too,
    /// so both paths check the same).
    pub fn check_counts(&self, counts: &[u64], n: usize) -> Result<()> {
        crate::counts::check_marginal_counts(counts, n, &self.tables)
    }

    /// The same plan over `domain`, of which the plan's domain is the projection onto
    /// `attrs` (ascending): table attribute `i` becomes `attrs[i]`. Because `attrs` is
    /// ascending, every table keeps its attribute order and its cell order, so the counts
    /// of the lifted plan on the full data are the plan's counts on the restricted data
    /// ([`crate::OnWorkloadAttributes`]).
    ///
    /// Errors: `attrs` not ascending, or not matching the plan's domain in `domain`.
    pub fn lifted(&self, domain: &Domain, attrs: &[usize]) -> Result<Self> {
        if attrs.windows(2).any(|w| w[0] >= w[1]) {
            return Err(MechanismError::InvalidParameter {
                name: "attributes",
                value: format!("{attrs:?}"),
                reason: "a plan is lifted along ascending attributes".into(),
            });
        }
        let sub = self.tables.domain();
        if sub != &domain.project(attrs)? {
            return Err(MechanismError::Data {
                reason: "the plan's domain is not the projection of the data's domain onto \
                         the attributes given"
                    .into(),
            });
        }
        let marginals = self
            .tables
            .marginals()
            .iter()
            .map(|m| Marginal::new(domain, m.attrs().iter().map(|&a| attrs[a]).collect()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(CountingPlan::new(
            MarginalWorkload::new(domain, marginals)?,
            self.needs_n,
        ))
    }
}

/// The non-empty subsets of `0..len` of size at most `degree`, by size, each size in
/// colexicographic order ([`colex_subsets_of_size`]), each subset ascending.
fn colex_subsets(len: usize, degree: usize) -> Vec<Vec<usize>> {
    (1..=degree.min(len))
        .flat_map(|size| colex_subsets_of_size(len, size))
        .collect()
}

/// The subsets of `0..len` of `size ≥ 1` elements in colexicographic order (a set's rank is
/// `Σ_i C(p_i, i + 1)` over its ascending positions `p_i`), each ascending: the order of
/// the polynomial release's coefficient blocks of that size.
pub(crate) fn colex_subsets_of_size(len: usize, size: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if size == 0 || size > len {
        return out;
    }
    let mut set: Vec<usize> = (0..size).collect();
    loop {
        out.push(set.clone());
        // the next set: the first position that can grow without meeting the next element
        // grows, and every position before it resets
        let mut i = 0;
        while i < size {
            let limit = if i + 1 < size { set[i + 1] } else { len };
            if set[i] + 1 < limit {
                break;
            }
            i += 1;
        }
        if i == size {
            return out;
        }
        set[i] += 1;
        for (j, v) in set.iter_mut().enumerate().take(i) {
            *v = j;
        }
    }
}

/// What a mechanism reads of the data for a workload, from public inputs (module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum DataAccess {
    /// The workload's exact counts and n ([`Mechanism::release_counts`]).
    WorkloadCounts,
    /// The exact counts of a counting plan's tables and n ([`Mechanism::release_planned`]).
    Plan(CountingPlan),
    /// The records ([`Mechanism::release`]).
    Records,
}

impl DataAccess {
    /// What `mechanism` reads for `workload`: its counting plan if it has one, else the
    /// workload's counts if they suffice, else the records.
    ///
    /// Errors: the plan's, from public inputs (e.g. a universe above its cap).
    pub fn of<W: Workload, M: Mechanism<W> + ?Sized>(mechanism: &M, workload: &W) -> Result<Self> {
        if let Some(plan) = mechanism.counting_plan(workload)? {
            return Ok(DataAccess::Plan(plan));
        }
        Ok(if mechanism.counts_suffice() {
            DataAccess::WorkloadCounts
        } else {
            DataAccess::Records
        })
    }

    /// Whether the release runs from exact counts (a stream or an engine can serve it).
    pub fn from_counts(&self) -> bool {
        !matches!(self, DataAccess::Records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(sizes: &[u32]) -> Domain {
        Domain::new(
            sizes
                .iter()
                .enumerate()
                .map(|(i, &s)| (format!("a{i}"), s))
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn colex_subsets_by_hand() {
        let sets = colex_subsets(4, 2);
        let expected: Vec<Vec<usize>> = vec![
            vec![0],
            vec![1],
            vec![2],
            vec![3],
            vec![0, 1],
            vec![0, 2],
            vec![1, 2],
            vec![0, 3],
            vec![1, 3],
            vec![2, 3],
        ];
        assert_eq!(sets, expected);
        // every size: C(5, s) sets, ranks 0, 1, 2, … in order
        let sets = colex_subsets(5, 5);
        assert_eq!(sets.len(), 31);
        let binom =
            |n: usize, k: usize| -> usize { (0..k).fold(1usize, |c, i| c * (n - i) / (i + 1)) };
        let mut expected_rank = 0;
        let mut size = 1;
        for s in &sets {
            if s.len() != size {
                size = s.len();
                expected_rank = 0;
            }
            let rank: usize = s.iter().enumerate().map(|(i, &p)| binom(p, i + 1)).sum();
            assert_eq!(rank, expected_rank, "{s:?}");
            expected_rank += 1;
        }
        assert!(colex_subsets(3, 0).is_empty());
    }

    #[test]
    fn low_order_tables_are_every_small_set_in_colex_order() {
        let d = domain(&[2, 3, 2, 4, 2]);
        let plan = CountingPlan::low_order_tables(&d, &[0, 2, 3], 2).unwrap();
        let attrs: Vec<Vec<usize>> = plan
            .tables()
            .marginals()
            .iter()
            .map(|m| m.attrs().to_vec())
            .collect();
        let expected: Vec<Vec<usize>> = vec![
            vec![0],
            vec![2],
            vec![3],
            vec![0, 2],
            vec![0, 3],
            vec![2, 3],
        ];
        assert_eq!(attrs, expected);
        assert_eq!(plan.tables().num_queries(), 2 + 2 + 4 + 4 + 8 + 8);
        assert!(CountingPlan::low_order_tables(&d, &[], 2).is_err());
    }

    #[test]
    fn universe_histogram_counts_each_record_in_its_universe_cell() {
        let d = domain(&[2, 3, 2]);
        let plan = CountingPlan::universe_histogram(&d).unwrap();
        assert!(plan.needs_n());
        let data =
            Dataset::from_columns(d.clone(), vec![vec![0, 1, 1], vec![2, 0, 2], vec![1, 0, 1]])
                .unwrap();
        let counts = plan.count_records(&data).unwrap();
        let universe = dp_queries::Universe::new(&d, 1 << 10).unwrap();
        let mut by_hand = vec![0u64; universe.len()];
        for r in 0..data.n() {
            let record: Vec<u32> = (0..3).map(|a| data.column(a)[r]).collect();
            by_hand[universe.index_of(&record).unwrap()] += 1;
        }
        assert_eq!(counts, by_hand);
        assert!(plan.check_counts(&counts, 3).is_ok());
        let e = plan.checked_counts(vec![1; 12], 3).unwrap_err().to_string();
        assert!(e.contains("counts 12 records"), "{e}");
    }

    #[test]
    fn a_lifted_plan_counts_on_the_full_data_what_the_plan_counts_on_the_restricted() {
        let d = domain(&[2, 3, 2, 4]);
        let touched = [1, 3];
        let sub = d.project(&touched).unwrap();
        let plan = CountingPlan::universe_histogram(&sub).unwrap();
        let lifted = plan.lifted(&d, &touched).unwrap();
        let columns = (0..4)
            .map(|a| {
                (0..30)
                    .map(|r| ((r * (a + 2) + a) as u32) % d.size(a))
                    .collect()
            })
            .collect();
        let data = Dataset::from_columns(d.clone(), columns).unwrap();
        let restricted = data.select_attributes(&["a1", "a3"]).unwrap();
        assert_eq!(
            lifted.count_records(&data).unwrap(),
            plan.count_records(&restricted).unwrap()
        );
        assert!(plan.lifted(&d, &[3, 1]).is_err());
        assert!(plan.lifted(&d, &[0, 3]).is_err());
    }
}
