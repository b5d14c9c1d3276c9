//! The checks on exact counts handed to a release ([`crate::Mechanism::release_counts`],
//! issue #25): a mechanism that reads the data only through the workload's counts releases
//! the same from counts streamed, counted by an engine, or counted in memory — so it must
//! refuse, before any draw, counts that no dataset of `n` records has.
//!
//! The releases from records run the same checks on the counts they make (which always pass),
//! so both paths are one code path from the counts on.

use dp_queries::{MarginalWorkload, Workload};

use crate::{MechanismError, Result};

/// One count per query of `workload`, or the refusal naming both lengths.
pub(crate) fn check_length<W: Workload + ?Sized>(len: usize, workload: &W) -> Result<()> {
    if len != workload.num_queries() {
        return Err(MechanismError::Data {
            reason: format!(
                "{len} counts for a workload of {} queries",
                workload.num_queries()
            ),
        });
    }
    Ok(())
}

/// The counts as `u64`, refusing a negative one.
pub(crate) fn nonnegative(counts: Vec<i64>) -> Result<Vec<u64>> {
    counts
        .into_iter()
        .map(|c| {
            u64::try_from(c).map_err(|_| MechanismError::Data {
                reason: format!("a negative count ({c})"),
            })
        })
        .collect()
}

/// A public `n` of at least one record (replace-one: the answers are divided by it).
fn check_records(n: usize) -> Result<()> {
    if n == 0 {
        return Err(MechanismError::Data {
            reason: "the dataset has no records".into(),
        });
    }
    Ok(())
}

/// The exact counts of `workload`'s tables (workload order) of a dataset of the public `n`
/// records: one per query, and every table counting exactly `n` records (tables of one
/// dataset). `n ≥ 1`.
pub(crate) fn check_marginal_counts(
    counts: &[u64],
    n: usize,
    workload: &MarginalWorkload,
) -> Result<()> {
    check_length(counts.len(), workload)?;
    check_records(n)?;
    for j in 0..workload.len() {
        let table = &counts[workload.offset(j)..workload.offset(j + 1)];
        let total = table.iter().try_fold(0u64, |a, &c| a.checked_add(c));
        if total != Some(n as u64) {
            return Err(MechanismError::Data {
                reason: format!(
                    "workload table {j} counts {} records, not the n = {n} given: the counts \
                     are not the tables of one dataset of n records",
                    total.map_or_else(|| "more than 2^64".to_string(), |t| t.to_string())
                ),
            });
        }
    }
    Ok(())
}

/// [`check_marginal_counts`] on signed counts, refusing a negative one; the counts as `u64`.
pub(crate) fn marginal_counts(
    counts: Vec<i64>,
    n: usize,
    workload: &MarginalWorkload,
) -> Result<Vec<u64>> {
    check_length(counts.len(), workload)?;
    let counts = nonnegative(counts)?;
    check_marginal_counts(&counts, n, workload)?;
    Ok(counts)
}

/// The exact counts of `workload`'s 0/1-valued queries (workload order) of a dataset of the
/// public `n` records: one per query, none above `n`. `n ≥ 1`.
pub(crate) fn check_query_counts<W: Workload + ?Sized>(
    counts: &[u64],
    n: usize,
    workload: &W,
) -> Result<()> {
    check_length(counts.len(), workload)?;
    check_records(n)?;
    if let Some((q, c)) = counts.iter().enumerate().find(|&(_, &c)| c > n as u64) {
        return Err(MechanismError::Data {
            reason: format!(
                "query {q} counts {c} records, more than the n = {n} given: the counts are not \
                 those of a dataset of n records"
            ),
        });
    }
    Ok(())
}

/// [`check_query_counts`] on signed counts, refusing a negative one; the counts as `u64`.
pub(crate) fn query_counts<W: Workload + ?Sized>(
    counts: Vec<i64>,
    n: usize,
    workload: &W,
) -> Result<Vec<u64>> {
    check_length(counts.len(), workload)?;
    let counts = nonnegative(counts)?;
    check_query_counts(&counts, n, workload)?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_queries::Domain;

    fn workload() -> MarginalWorkload {
        let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        MarginalWorkload::from_attribute_lists(&d, &[vec!["a".into()], vec!["b".into()]]).unwrap()
    }

    #[test]
    fn counts_of_one_dataset_pass_and_others_are_refused_with_the_reason() {
        let w = workload();
        assert_eq!(
            marginal_counts(vec![2, 1, 1, 1, 1], 3, &w).unwrap(),
            vec![2, 1, 1, 1, 1]
        );
        let e = |c: Vec<i64>, n| marginal_counts(c, n, &w).unwrap_err().to_string();
        assert!(e(vec![2, 1, 1, 1], 3).contains("4 counts for a workload of 5 queries"));
        assert!(e(vec![4, -1, 1, 1, 1], 3).contains("negative count (-1)"));
        assert!(e(vec![2, 1, 1, 1, 2], 3).contains("table 1 counts 4 records"));
        assert!(e(vec![0; 5], 0).contains("no records"));
        assert!(
            query_counts(
                vec![1, 4],
                3,
                &dp_queries::AnyWorkload::Marginals(w.clone())
            )
            .unwrap_err()
            .to_string()
            .contains("2 counts")
        );
    }

    #[test]
    fn query_counts_are_at_most_n() {
        let w = workload();
        assert!(query_counts(vec![1, 2, 3, 0, 0], 3, &w).is_ok());
        let e = query_counts(vec![1, 2, 4, 0, 0], 3, &w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("query 2 counts 4 records"), "{e}");
    }
}
