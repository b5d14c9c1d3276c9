//! Marginal tables (contingency tables) over a set of attributes.
//!
//! The marginal on attributes `S = (a_0, …, a_{k-1})` has one counting query per cell
//! `c ∈ [s_{a_0}] × … × [s_{a_{k-1}}]`: the number of records whose projection on `S` equals
//! `c` (seed 003 §2 "marginal queries", seed 000 §4). Cells are numbered in row-major order,
//! the **last** attribute varying fastest: `cell = Σ_i c_i · stride_i` with
//! `stride_{k-1} = 1`, `stride_i = stride_{i+1} · s_{a_{i+1}}`.

use serde::{Deserialize, Serialize};

use super::MAX_QUERIES;
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};

/// One marginal table over distinct attributes of a domain, in the order given.
///
/// Serializes as `{"attrs": [...], "sizes": [...]}`; deserialization re-validates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "MarginalRepr", into = "MarginalRepr")]
pub struct Marginal {
    attrs: Vec<usize>,
    sizes: Vec<u32>,
    strides: Vec<usize>,
    num_cells: usize,
}

#[derive(Serialize, Deserialize)]
struct MarginalRepr {
    attrs: Vec<usize>,
    sizes: Vec<u32>,
}

impl From<Marginal> for MarginalRepr {
    fn from(m: Marginal) -> Self {
        MarginalRepr {
            attrs: m.attrs,
            sizes: m.sizes,
        }
    }
}

impl TryFrom<MarginalRepr> for Marginal {
    type Error = QueryError;
    fn try_from(r: MarginalRepr) -> Result<Self> {
        if r.attrs.len() != r.sizes.len() {
            return Err(QueryError::LengthMismatch {
                expected: r.attrs.len(),
                found: r.sizes.len(),
            });
        }
        let indices = |attrs: &[usize]| -> String {
            attrs
                .iter()
                .map(|a| format!("#{a}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Marginal::from_parts(r.attrs, r.sizes, &indices)
    }
}

impl Marginal {
    /// The marginal of `domain` on `attrs` (in that order).
    ///
    /// Errors: empty list or repeated attribute ([`QueryError::BadWorkload`]), index out of
    /// range ([`QueryError::AttributeOutOfRange`]), more than [`MAX_QUERIES`] cells
    /// ([`QueryError::TooLarge`]).
    pub fn new(domain: &Domain, attrs: Vec<usize>) -> Result<Self> {
        let mut sizes = Vec::with_capacity(attrs.len());
        for &a in &attrs {
            if a >= domain.len() {
                return Err(QueryError::AttributeOutOfRange {
                    index: a,
                    len: domain.len(),
                });
            }
            sizes.push(domain.size(a));
        }
        let names = |attrs: &[usize]| -> String {
            attrs
                .iter()
                .map(|&a| format!("'{}'", domain.name(a)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Self::from_parts(attrs, sizes, &names)
    }

    /// `describe` writes a list of attributes for a message (names where a domain is known,
    /// indices otherwise).
    fn from_parts(
        attrs: Vec<usize>,
        sizes: Vec<u32>,
        describe: &dyn Fn(&[usize]) -> String,
    ) -> Result<Self> {
        if attrs.is_empty() {
            return Err(QueryError::BadWorkload {
                reason: "a marginal needs at least one attribute".into(),
            });
        }
        for (i, a) in attrs.iter().enumerate() {
            if attrs[..i].contains(a) {
                return Err(QueryError::BadWorkload {
                    reason: format!(
                        "the marginal on {} names attribute {} twice",
                        describe(&attrs),
                        describe(&[*a])
                    ),
                });
            }
        }
        if let Some(i) = sizes.iter().position(|&s| s == 0) {
            return Err(QueryError::BadDomain {
                reason: format!("attribute index {} has size 0", attrs[i]),
            });
        }
        let mut strides = vec![0usize; sizes.len()];
        let mut acc: u128 = 1;
        for i in (0..sizes.len()).rev() {
            strides[i] = usize::try_from(acc).unwrap_or(usize::MAX);
            acc = acc.saturating_mul(u128::from(sizes[i]));
        }
        if acc > MAX_QUERIES as u128 {
            return Err(QueryError::TooLarge {
                what: format!("the marginal on {}", describe(&attrs)),
                estimate: format!("{acc} cells (at most {MAX_QUERIES} are supported)"),
            });
        }
        Ok(Marginal {
            attrs,
            sizes,
            strides,
            num_cells: acc as usize,
        })
    }

    /// Attribute indices, in table order.
    pub fn attrs(&self) -> &[usize] {
        &self.attrs
    }

    /// Sizes of the attributes, in table order.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// Row-major strides (the last is 1).
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Number of attributes `k`.
    pub fn k(&self) -> usize {
        self.attrs.len()
    }

    /// Number of cells `Π sizes`.
    pub fn num_cells(&self) -> usize {
        self.num_cells
    }

    /// Cell index of the codes (one per attribute, in table order): `Σ codes[i]·stride[i]`.
    ///
    /// The caller must pass `k` codes each below its size; otherwise the result is
    /// meaningless (but this never panics). See [`Marginal::try_cell_index`].
    pub fn cell_index(&self, codes: &[u32]) -> usize {
        codes
            .iter()
            .zip(&self.strides)
            .fold(0usize, |acc, (&c, &s)| {
                acc.wrapping_add((c as usize).wrapping_mul(s))
            })
    }

    /// Checked [`Marginal::cell_index`]: `None` unless there are `k` codes, each in range.
    pub fn try_cell_index(&self, codes: &[u32]) -> Option<usize> {
        if codes.len() != self.k() || codes.iter().zip(&self.sizes).any(|(c, s)| c >= s) {
            return None;
        }
        Some(self.cell_index(codes))
    }

    /// The cell a full record (codes of every domain attribute, in domain order) falls in;
    /// `None` when the record is too short or a code is out of range.
    pub fn cell_of(&self, record: &[u32]) -> Option<usize> {
        let mut cell = 0usize;
        for ((&a, &size), &stride) in self.attrs.iter().zip(&self.sizes).zip(&self.strides) {
            let c = *record.get(a)?;
            if c >= size {
                return None;
            }
            cell += c as usize * stride;
        }
        Some(cell)
    }

    /// Codes of cell `cell` (inverse of [`Marginal::cell_index`] for `cell < num_cells`; for
    /// larger `cell` the first code exceeds its size).
    pub fn cell_codes(&self, cell: usize) -> Vec<u32> {
        let mut out = vec![0u32; self.k()];
        let mut rest = cell;
        for i in (1..self.k()).rev() {
            let s = self.sizes[i] as usize;
            out[i] = (rest % s) as u32;
            rest /= s;
        }
        out[0] = u32::try_from(rest).unwrap_or(u32::MAX);
        out
    }

    /// Whether `domain` has this marginal's attributes with the same sizes.
    pub fn fits(&self, domain: &Domain) -> bool {
        self.attrs
            .iter()
            .zip(&self.sizes)
            .all(|(&a, &s)| a < domain.len() && domain.size(a) == s)
    }

    /// Exact counts of every cell on `data`, in one pass over the records.
    ///
    /// Returns an **empty** vector if `data`'s domain lacks this marginal's attributes or has
    /// different sizes; use [`Marginal::try_count`] to get an error instead.
    pub fn count(&self, data: &Dataset) -> Vec<u64> {
        self.try_count(data).unwrap_or_default()
    }

    /// [`Marginal::count`], with [`QueryError::DomainMismatch`] on an incompatible dataset.
    pub fn try_count(&self, data: &Dataset) -> Result<Vec<u64>> {
        let mut out = vec![0u64; self.num_cells];
        self.count_into(data, &mut out)?;
        Ok(out)
    }

    /// Overwrites `out` (of length `num_cells()`) with the exact counts on `data`, in one
    /// pass over the records; lets callers reuse one buffer across many countings.
    ///
    /// Errors: [`QueryError::LengthMismatch`] for a wrong `out` length,
    /// [`QueryError::DomainMismatch`] for an incompatible dataset.
    pub fn count_into(&self, data: &Dataset, out: &mut [u64]) -> Result<()> {
        let cols = self.table_columns(data, out.len())?;
        out.fill(0);
        count_table(&cols, &self.strides, out);
        Ok(())
    }

    /// **Adds** the exact counts of every cell on `data` to `totals` (of length
    /// `num_cells()`), in one pass over the records and without allocating a table: the step
    /// by which the streaming counters accumulate batch after batch
    /// ([`crate::io::stream`]). 128-bit totals cannot overflow for any number of records a
    /// `u64` can count.
    ///
    /// Errors: as [`Marginal::count_into`].
    pub fn add_counts_into(&self, data: &Dataset, totals: &mut [i128]) -> Result<()> {
        let cols = self.table_columns(data, totals.len())?;
        count_table(&cols, &self.strides, totals);
        Ok(())
    }

    /// The checks of [`Marginal::count_into`] and [`Marginal::add_counts_into`] — `data`
    /// fits this marginal, the table has `num_cells()` entries (`table_len`) — and then the
    /// columns of this marginal's attributes, in its order.
    fn table_columns<'d>(&self, data: &'d Dataset, table_len: usize) -> Result<Vec<&'d [u32]>> {
        self.check_fits(data)?;
        if table_len != self.num_cells {
            return Err(QueryError::LengthMismatch {
                expected: self.num_cells,
                found: table_len,
            });
        }
        Ok(self.attrs.iter().map(|&a| data.column(a)).collect())
    }

    fn check_fits(&self, data: &Dataset) -> Result<()> {
        if !self.fits(data.domain()) {
            return Err(QueryError::DomainMismatch {
                reason: format!(
                    "marginal on attributes {:?} with sizes {:?} does not fit the dataset's domain",
                    self.attrs, self.sizes
                ),
            });
        }
        Ok(())
    }

    /// Attribute names joined by `"|"`, e.g. `"age|sex"`.
    pub fn label(&self, domain: &Domain) -> String {
        self.attrs
            .iter()
            .map(|&a| domain.name(a))
            .collect::<Vec<_>>()
            .join("|")
    }
}

/// Rows per block in the general (k >= 4) kernel.
const BLOCK: usize = 512;

/// A cell of a count table: `u64` for a table counted from zero, `i128` for the running
/// totals of a streaming pass.
trait Cell: Copy + std::ops::AddAssign {
    const ONE: Self;
}

impl Cell for u64 {
    const ONE: Self = 1;
}

impl Cell for i128 {
    const ONE: Self = 1;
}

/// The counting kernel: `table[Σ_i cols[i][r]·strides[i]] += 1` for every row `r`.
/// Codes are valid (checked when the dataset was built), so indices are in range.
fn count_table<T: Cell>(cols: &[&[u32]], strides: &[usize], t: &mut [T]) {
    match (cols, strides) {
        ([c0], _) => {
            for &a in *c0 {
                t[a as usize] += T::ONE;
            }
        }
        ([c0, c1], [s0, _]) => {
            for (&a, &b) in c0.iter().zip(c1.iter()) {
                t[a as usize * s0 + b as usize] += T::ONE;
            }
        }
        ([c0, c1, c2], [s0, s1, _]) => {
            for ((&a, &b), &c) in c0.iter().zip(c1.iter()).zip(c2.iter()) {
                t[a as usize * s0 + b as usize * s1 + c as usize] += T::ONE;
            }
        }
        _ => {
            let n = cols.first().map_or(0, |c| c.len());
            let mut idx = [0usize; BLOCK];
            let mut start = 0;
            while start < n {
                let end = (start + BLOCK).min(n);
                let buf = &mut idx[..end - start];
                buf.fill(0);
                for (col, &s) in cols.iter().zip(strides) {
                    for (i, &c) in buf.iter_mut().zip(&col[start..end]) {
                        *i += c as usize * s;
                    }
                }
                for &i in buf.iter() {
                    t[i] += T::ONE;
                }
                start = end;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dom() -> Domain {
        Domain::new(vec![("a".into(), 2), ("b".into(), 3), ("c".into(), 4)]).unwrap()
    }

    #[test]
    fn strides_row_major_last_fastest() {
        let m = Marginal::new(&dom(), vec![2, 0, 1]).unwrap();
        assert_eq!(m.sizes(), &[4, 2, 3]);
        assert_eq!(m.strides(), &[6, 3, 1]);
        assert_eq!(m.num_cells(), 24);
        assert_eq!(m.cell_index(&[1, 1, 2]), 6 + 3 + 2);
        assert_eq!(m.cell_codes(11), vec![1, 1, 2]);
        assert_eq!(m.label(&dom()), "c|a|b");
        assert_eq!(m.try_cell_index(&[4, 0, 0]), None);
        assert_eq!(m.try_cell_index(&[1, 1]), None);
    }

    #[test]
    fn rejects_bad_marginals() {
        let d = dom();
        assert!(matches!(
            Marginal::new(&d, vec![]),
            Err(QueryError::BadWorkload { .. })
        ));
        assert!(matches!(
            Marginal::new(&d, vec![1, 1]),
            Err(QueryError::BadWorkload { .. })
        ));
        assert!(matches!(
            Marginal::new(&d, vec![3]),
            Err(QueryError::AttributeOutOfRange { index: 3, len: 3 })
        ));
        let big = Domain::new((0..4).map(|i| (format!("x{i}"), 1 << 10)).collect()).unwrap();
        match Marginal::new(&big, vec![0, 1, 2]) {
            Err(QueryError::TooLarge { estimate, .. }) => {
                assert!(estimate.contains("1073741824"), "{estimate}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn serde_revalidates() {
        let m = Marginal::new(&dom(), vec![1, 2]).unwrap();
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"attrs":[1,2],"sizes":[3,4]}"#);
        assert_eq!(serde_json::from_str::<Marginal>(&s).unwrap(), m);
        assert!(serde_json::from_str::<Marginal>(r#"{"attrs":[1,1],"sizes":[3,3]}"#).is_err());
        assert!(serde_json::from_str::<Marginal>(r#"{"attrs":[1],"sizes":[3,3]}"#).is_err());
    }

    #[test]
    fn count_on_mismatched_domain_is_empty_or_error() {
        let d = dom();
        let data = Dataset::from_columns(
            Domain::new(vec![("a".into(), 2), ("b".into(), 5)]).unwrap(),
            vec![vec![0, 1], vec![4, 4]],
        )
        .unwrap();
        let m = Marginal::new(&d, vec![1]).unwrap();
        assert!(m.count(&data).is_empty());
        assert!(matches!(
            m.try_count(&data),
            Err(QueryError::DomainMismatch { .. })
        ));
        let m2 = Marginal::new(&d, vec![2]).unwrap();
        assert!(m2.count(&data).is_empty());
        let ok = Marginal::new(data.domain(), vec![1]).unwrap();
        let mut buf = vec![7u64; 4];
        assert!(matches!(
            ok.count_into(&data, &mut buf),
            Err(QueryError::LengthMismatch {
                expected: 5,
                found: 4
            })
        ));
        let mut buf = vec![7u64; 5];
        ok.count_into(&data, &mut buf).unwrap();
        assert_eq!(buf, vec![0, 0, 0, 0, 2], "overwrites, does not accumulate");
    }

    #[test]
    fn hand_counted_table() {
        // records (a,b,c): (0,0,0) (1,2,3) (1,2,3) (0,1,3)
        let data = Dataset::from_columns(
            dom(),
            vec![vec![0, 1, 1, 0], vec![0, 2, 2, 1], vec![0, 3, 3, 3]],
        )
        .unwrap();
        let m = Marginal::new(&dom(), vec![0, 2]).unwrap();
        // cells (a,c) -> a*4 + c
        let mut want = vec![0u64; 8];
        want[0] = 1; // (0,0)
        want[3] = 1; // (0,3)
        want[7] = 2; // (1,3)
        assert_eq!(m.count(&data), want);
        // k = 4+ path: use a 4-attribute domain
        let d4 = Domain::new(vec![
            ("a".into(), 2),
            ("b".into(), 2),
            ("c".into(), 2),
            ("e".into(), 2),
        ])
        .unwrap();
        let data4 = Dataset::from_columns(
            d4.clone(),
            vec![vec![1, 0], vec![0, 0], vec![1, 0], vec![1, 1]],
        )
        .unwrap();
        let m4 = Marginal::new(&d4, vec![3, 2, 1, 0]).unwrap();
        let mut want4 = vec![0u64; 16];
        want4[0b1101] = 1; // record 0: e=1 c=1 b=0 a=1
        want4[0b1000] = 1; // record 1: e=1 c=0 b=0 a=0
        assert_eq!(m4.count(&data4), want4);
    }
}
