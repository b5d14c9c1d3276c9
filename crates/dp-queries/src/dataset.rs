//! Datasets: `n >= 1` records over a [`Domain`], stored column-major as integer codes, in
//! memory.
//!
//! Reading and writing files is [`crate::io`]'s: the CSV readers and [`Dataset::write_csv`]
//! in `io/csv.rs` (with the accepted CSV format), the Parquet loader in `io/parquet.rs`, and
//! opening a file by its path ([`Dataset::load_csv`], [`Dataset::load_file`]: CSV, gzip or
//! Parquet) in `io/format.rs`.

use rand::Rng;

use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// `n >= 1` records over a [`Domain`], column-major: `column(i)[r]` is the code of attribute
/// `i` in record `r`, always `< domain.size(i)`.
///
/// The one exception is a dataset built by [`Dataset::empty`] or loaded by
/// [`Dataset::load_csv_allowing_empty`]: it may have `n = 0`. Those constructors exist for
/// releases under add/remove neighbours, where the empty dataset is a valid input (refusing
/// it would distinguish it from its one-record neighbours); every other constructor refuses
/// zero records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    domain: Domain,
    columns: Vec<Vec<u32>>,
    n: usize,
}

impl Dataset {
    /// Builds a dataset from one column of codes per domain attribute (in domain order).
    ///
    /// Errors: wrong number of columns or unequal column lengths
    /// ([`QueryError::LengthMismatch`]), zero records ([`QueryError::EmptyDataset`]), a code
    /// `>= size` ([`QueryError::CodeOutOfRange`]).
    pub fn from_columns(domain: Domain, columns: Vec<Vec<u32>>) -> Result<Self> {
        Self::build(domain, columns, false)
    }

    /// The dataset with no records over `domain` (`n = 0`), for add/remove releases.
    pub fn empty(domain: Domain) -> Self {
        let columns = vec![Vec::new(); domain.len()];
        Dataset {
            domain,
            columns,
            n: 0,
        }
    }

    /// A dataset from columns whose codes a decoder has already checked (one column per
    /// attribute, equal lengths, every code `< size`; `n = 0` allowed): no second pass
    /// over the codes. Debug builds check the claim.
    pub(crate) fn from_validated_columns(domain: Domain, columns: Vec<Vec<u32>>) -> Self {
        debug_assert!(Self::build(domain.clone(), columns.clone(), true).is_ok());
        let n = columns.first().map_or(0, Vec::len);
        Dataset { domain, columns, n }
    }

    /// The columns of codes, in domain order (the dataset consumed).
    pub fn into_columns(self) -> Vec<Vec<u32>> {
        self.columns
    }

    /// [`Dataset::from_columns`], except that with `allow_empty` zero records give the empty
    /// dataset (the loaders' `*_allowing_empty` forms).
    pub(crate) fn build(domain: Domain, columns: Vec<Vec<u32>>, allow_empty: bool) -> Result<Self> {
        if columns.len() != domain.len() {
            return Err(QueryError::LengthMismatch {
                expected: domain.len(),
                found: columns.len(),
            });
        }
        let n = columns.first().map_or(0, Vec::len);
        if n == 0 && !allow_empty {
            return Err(QueryError::EmptyDataset);
        }
        for (i, col) in columns.iter().enumerate() {
            if col.len() != n {
                return Err(QueryError::LengthMismatch {
                    expected: n,
                    found: col.len(),
                });
            }
            let size = domain.size(i);
            if let Some(row) = col.iter().position(|&c| c >= size) {
                return Err(QueryError::CodeOutOfRange {
                    attribute: domain.name(i).to_string(),
                    row,
                    value: col[row],
                    size,
                });
            }
        }
        Ok(Dataset { domain, columns, n })
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// Number of records `n` (`>= 1`, except for the explicitly empty datasets of
    /// [`Dataset::empty`] and [`Dataset::load_csv_allowing_empty`]).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Codes of attribute `i`, one per record (empty slice if `i` is out of range).
    pub fn column(&self, i: usize) -> &[u32] {
        self.columns.get(i).map_or(&[], Vec::as_slice)
    }

    /// All columns in domain order.
    pub fn columns(&self) -> &[Vec<u32>] {
        &self.columns
    }

    /// Record `row` as codes in domain order (empty if `row >= n`).
    pub fn record(&self, row: usize) -> Vec<u32> {
        if row >= self.n {
            return Vec::new();
        }
        self.columns.iter().map(|c| c[row]).collect()
    }

    /// The dataset restricted to the attributes `names`, in that order.
    ///
    /// Errors: [`QueryError::UnknownAttribute`], or [`QueryError::BadDomain`] for an empty or
    /// repeated list.
    pub fn select_attributes(&self, names: &[&str]) -> Result<Dataset> {
        let idx = names
            .iter()
            .map(|n| self.domain.index_of(n))
            .collect::<Result<Vec<_>>>()?;
        let domain = self.domain.project(&idx)?;
        let columns = idx.iter().map(|&i| self.columns[i].clone()).collect();
        Ok(Dataset {
            domain,
            columns,
            n: self.n,
        })
    }

    /// `n` records drawn uniformly without replacement (kept in their original order).
    ///
    /// Errors with [`QueryError::BadSample`] unless `1 <= n <= self.n()`.
    pub fn subsample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<Dataset> {
        if n == 0 || n > self.n {
            return Err(QueryError::BadSample {
                requested: n,
                available: self.n,
            });
        }
        let mut rows = rand::seq::index::sample(rng, self.n, n).into_vec();
        rows.sort_unstable();
        let columns = self
            .columns
            .iter()
            .map(|c| rows.iter().map(|&r| c[r]).collect())
            .collect();
        Ok(Dataset {
            domain: self.domain.clone(),
            columns,
            n,
        })
    }
}
