//! Binary (one-hot) encoding of a dataset, bit-packed by rows.
//!
//! Mechanisms over the binary universe `{0,1}^d` (conjunctions and parities, seed 000 §4,
//! seed 002, seed 003 §4) see a categorical attribute of size `s` as `s` bits of which
//! exactly one is set. Bit `j` of a record lives in word `j / 64`, bit `j % 64` of its row,
//! so a conjunction is an AND-mask test and a parity is a popcount.

use std::ops::Range;

use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::workload::Marginal;
use crate::workload::MarginalWorkload;

/// A dataset in one-hot binary encoding: record `i` is a row of `words_per_row()` `u64` words.
///
/// Attribute `a` of size `s` occupies bits `attribute_bits(a)` (consecutive, in domain
/// order); code `c` sets bit `attribute_bits(a).start + c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryDataset {
    d: usize,
    n: usize,
    words: usize,
    starts: Vec<usize>,
    rows: Vec<u64>,
}

impl BinaryDataset {
    /// One-hot encodes `data` (each attribute of size `s` becomes `s` bits, domain order).
    pub fn from_dataset(data: &Dataset) -> Self {
        let sizes = data.domain().sizes();
        let mut starts = Vec::with_capacity(sizes.len() + 1);
        let mut d = 0usize;
        for &s in sizes {
            starts.push(d);
            d += s as usize;
        }
        starts.push(d);
        let words = d.div_ceil(64);
        let n = data.n();
        let mut rows = vec![0u64; n * words];
        for (a, &start) in starts.iter().take(sizes.len()).enumerate() {
            for (r, &c) in data.column(a).iter().enumerate() {
                let j = start + c as usize;
                rows[r * words + j / 64] |= 1u64 << (j % 64);
            }
        }
        BinaryDataset {
            d,
            n,
            words,
            starts,
            rows,
        }
    }

    /// Number of bits `d = Σ sizes`.
    pub fn d(&self) -> usize {
        self.d
    }

    /// Number of records.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `⌈d / 64⌉`.
    pub fn words_per_row(&self) -> usize {
        self.words
    }

    /// The packed bits of record `i` (empty if `i >= n`).
    pub fn row(&self, i: usize) -> &[u64] {
        if i >= self.n {
            return &[];
        }
        &self.rows[i * self.words..(i + 1) * self.words]
    }

    /// Bit `j` of record `row` (`false` if out of range).
    pub fn bit(&self, row: usize, j: usize) -> bool {
        if j >= self.d {
            return false;
        }
        self.row(row)
            .get(j / 64)
            .is_some_and(|w| (w >> (j % 64)) & 1 == 1)
    }

    /// The bits of attribute `attr` (empty range at `d` if `attr` is out of range).
    pub fn attribute_bits(&self, attr: usize) -> Range<usize> {
        match (self.starts.get(attr), self.starts.get(attr + 1)) {
            (Some(&s), Some(&e)) => s..e,
            _ => self.d..self.d,
        }
    }

    /// Mask with the given bits set; `None` if some bit is `>= d`.
    fn mask(&self, bits: &[usize]) -> Option<Vec<u64>> {
        let mut m = vec![0u64; self.words];
        for &j in bits {
            if j >= self.d {
                return None;
            }
            m[j / 64] |= 1u64 << (j % 64);
        }
        Some(m)
    }

    /// Number of records with **all** the given bits set (the monotone conjunction
    /// `∧_{j∈bits} x_j`). The empty conjunction is true (`n`); a bit `>= d` is never set (0).
    pub fn count_conjunction(&self, bits: &[usize]) -> u64 {
        let Some(mask) = self.mask(bits) else {
            return 0;
        };
        if self.words == 0 {
            return self.n as u64;
        }
        self.rows
            .chunks_exact(self.words)
            .filter(|row| row.iter().zip(&mask).all(|(w, m)| w & m == *m))
            .count() as u64
    }

    /// Number of records whose parity `⊕_{j∈bits} x_j` is 1 (a repeated bit cancels; a bit
    /// `>= d` counts as 0). The empty parity is 0 everywhere.
    pub fn count_parity(&self, bits: &[usize]) -> u64 {
        let mut mask = vec![0u64; self.words];
        for &j in bits {
            if j < self.d {
                mask[j / 64] ^= 1u64 << (j % 64);
            }
        }
        if self.words == 0 {
            return 0;
        }
        self.rows
            .chunks_exact(self.words)
            .filter(|row| {
                row.iter()
                    .zip(&mask)
                    .map(|(w, m)| (w & m).count_ones())
                    .sum::<u32>()
                    % 2
                    == 1
            })
            .count() as u64
    }
}

/// Largest number of bit tables a [`OneHotMarginals`] plan may have (`2^20`): each needs
/// `2^k − 1` parities of degree `≤ k` downstream, so larger plans are refused before anything
/// is encoded.
pub const MAX_BIT_TABLES: usize = 1 << 20;

/// How one touched attribute of the source domain is encoded in [`OneHotMarginals`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum BitEncoding {
    /// A binary attribute kept as one bit (its code is the bit).
    Binary { bit: usize },
    /// An attribute of `size ≠ 2` codes as `size` bits, bit `first + c` set for code `c`.
    OneHot { first: usize, size: u32 },
}

/// A marginal workload over categorical attributes rewritten as a marginal workload over
/// binary attributes (seed 000, Dwork, Nikolov and Talwar 2014, §1: "one-hot encode" the
/// records so that a marginal cell is a conjunction of bits), for mechanisms that work on
/// binary attributes only (parities, the Grothendieck relaxation).
///
/// Every attribute the workload touches that is not binary becomes `s` bits named
/// `"name=code"`; a binary attribute stays one bit with its own name. A table `S` over the
/// source attributes becomes one **bit table** for each combination of values of its
/// non-binary attributes: the bits of those values plus the binary attributes of `S`, in
/// `S`'s order. Source cell `(c_a)_{a∈S}` is the cell of its bit table whose one-hot bits are
/// 1 and whose binary attributes equal `c_a` — the fraction of records in that cell is the
/// same, so [`Self::read_back`] answers the source workload exactly from exact bit-table
/// answers. (The bit tables also have cells that are not source cells — "neither of these two
/// values" — which mechanisms answer too and the read-back drops.)
///
/// The encoding is record by record: a dataset and its encoding have the same number of
/// records, and datasets that differ in one record (added, removed or replaced) encode to
/// datasets that differ in that record. So a mechanism's guarantee on the encoded data holds
/// on the source data with the same parameters and neighbouring relation.
#[derive(Clone, Debug)]
pub struct OneHotMarginals {
    source: Domain,
    /// The source workload's tables, in workload order.
    tables: Vec<Marginal>,
    touched: Vec<usize>,
    encodings: Vec<BitEncoding>,
    bit_workload: MarginalWorkload,
    /// For each source query (workload order), its index among the bit workload's queries.
    read_back: Vec<usize>,
}

impl OneHotMarginals {
    /// The plan for `workload` (public: it reads no data).
    ///
    /// Errors: more than [`MAX_BIT_TABLES`] bit tables ([`QueryError::TooLarge`], naming the
    /// count: a coarser discretisation of the widest attributes shrinks it); a bit name that
    /// collides with an attribute's name ([`QueryError::BadDomain`]).
    pub fn new(workload: &MarginalWorkload) -> Result<Self> {
        let source = workload.domain().clone();
        let touched = workload.touched_attributes();
        let mut bit_attrs: Vec<(String, u32)> = Vec::new();
        let mut encodings = Vec::with_capacity(touched.len());
        for &a in &touched {
            let (name, size) = (source.name(a), source.size(a));
            if size == 2 {
                encodings.push(BitEncoding::Binary {
                    bit: bit_attrs.len(),
                });
                bit_attrs.push((name.to_string(), 2));
            } else {
                encodings.push(BitEncoding::OneHot {
                    first: bit_attrs.len(),
                    size,
                });
                for c in 0..size {
                    bit_attrs.push((format!("{name}={c}"), 2));
                }
            }
        }
        // the number of bit tables, before building any
        let mut tables: u128 = 0;
        for m in workload.marginals() {
            let per: u128 = m
                .attrs()
                .iter()
                .zip(m.sizes())
                .filter(|&(_, &s)| s != 2)
                .map(|(_, &s)| u128::from(s))
                .product();
            tables = tables.saturating_add(per);
        }
        if tables > MAX_BIT_TABLES as u128 {
            return Err(QueryError::TooLarge {
                what: "the one-hot encoding of the workload".into(),
                estimate: format!(
                    "{tables} bit tables over {} bits (at most {MAX_BIT_TABLES}: each needs its \
                     own parities; use a coarser discretisation of the widest attributes or \
                     fewer tables)",
                    bit_attrs.len()
                ),
            });
        }
        let bit_domain = Domain::new(bit_attrs)?;
        let position = |a: usize| touched.iter().position(|&t| t == a);
        let mut bit_tables = Vec::with_capacity(tables as usize);
        let mut read_back = Vec::with_capacity(workload.num_queries());
        let mut bit_offset = 0usize;
        for m in workload.marginals() {
            let enc: Vec<&BitEncoding> = m
                .attrs()
                .iter()
                .map(|&a| position(a).map(|p| &encodings[p]))
                .collect::<Option<_>>()
                .ok_or_else(|| QueryError::BadWorkload {
                    reason: "a table reads an attribute the workload does not touch".into(),
                })?;
            // the non-binary attributes of the table (positions in the table) and sizes
            let wide: Vec<(usize, u32)> = enc
                .iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    BitEncoding::OneHot { size, .. } => Some((i, *size)),
                    BitEncoding::Binary { .. } => None,
                })
                .collect();
            let combos: usize = wide.iter().map(|&(_, s)| s as usize).product();
            let first_table = bit_tables.len();
            let mut values = vec![0u32; wide.len()];
            for _ in 0..combos {
                let mut attrs = Vec::with_capacity(enc.len());
                let mut w = 0;
                for e in &enc {
                    match e {
                        BitEncoding::Binary { bit } => attrs.push(*bit),
                        BitEncoding::OneHot { first, .. } => {
                            attrs.push(first + values[w] as usize);
                            w += 1;
                        }
                    }
                }
                bit_tables.push(Marginal::new(&bit_domain, attrs)?);
                // next combination, row-major (last wide attribute fastest)
                for i in (0..values.len()).rev() {
                    values[i] += 1;
                    if values[i] < wide[i].1 {
                        break;
                    }
                    values[i] = 0;
                }
            }
            // source cells in row-major order → (bit table, bit cell)
            let k = enc.len();
            let mut bit_codes = vec![0u32; k];
            for cell in 0..m.num_cells() {
                let codes = m.cell_codes(cell);
                let mut table = 0usize;
                for &(i, s) in &wide {
                    table = table * s as usize + codes[i] as usize;
                }
                for (i, e) in enc.iter().enumerate() {
                    bit_codes[i] = match e {
                        BitEncoding::Binary { .. } => codes[i],
                        BitEncoding::OneHot { .. } => 1,
                    };
                }
                let bit_table = &bit_tables[first_table + table];
                // each bit table has 2^k cells; the bit workload's offsets are cumulative
                read_back
                    .push(bit_offset + table * (1usize << k) + bit_table.cell_index(&bit_codes));
            }
            bit_offset += combos * (1usize << k);
        }
        let bit_workload = MarginalWorkload::new(&bit_domain, bit_tables)?;
        Ok(OneHotMarginals {
            source,
            tables: workload.marginals().to_vec(),
            touched,
            encodings,
            bit_workload,
            read_back,
        })
    }

    /// Whether the encoding changes nothing: every touched attribute is binary (then the bit
    /// workload is the source workload restricted to its touched attributes).
    pub fn is_binary(&self) -> bool {
        self.encodings
            .iter()
            .all(|e| matches!(e, BitEncoding::Binary { .. }))
    }

    /// The marginal workload over the bits.
    pub fn bit_workload(&self) -> &MarginalWorkload {
        &self.bit_workload
    }

    /// The binary domain of the bits.
    pub fn bit_domain(&self) -> &Domain {
        self.bit_workload.domain()
    }

    /// The number of bits.
    pub fn bits(&self) -> usize {
        self.bit_domain().len()
    }

    /// The encoded dataset over [`Self::bit_domain`] (one record per source record).
    ///
    /// Errors: `data` is not over the workload's domain ([`QueryError::DomainMismatch`]).
    pub fn encode(&self, data: &Dataset) -> Result<Dataset> {
        if data.domain() != &self.source {
            return Err(QueryError::DomainMismatch {
                reason: "the data is not over the domain the one-hot plan was made for".into(),
            });
        }
        let n = data.n();
        let mut columns: Vec<Vec<u32>> = Vec::with_capacity(self.bits());
        for (&a, e) in self.touched.iter().zip(&self.encodings) {
            let source = data.column(a);
            match e {
                BitEncoding::Binary { .. } => columns.push(source.to_vec()),
                BitEncoding::OneHot { size, .. } => {
                    let first = columns.len();
                    columns.extend((0..*size).map(|_| vec![0u32; n]));
                    for (r, &c) in source.iter().enumerate() {
                        columns[first + c as usize][r] = 1;
                    }
                }
            }
        }
        Dataset::from_columns(self.bit_domain().clone(), columns)
    }

    /// The exact counts of the bit workload (its order) from the exact counts of the source
    /// workload's tables (workload order, as [`MarginalWorkload::count_all`] gives them):
    /// equal to counting [`Self::encode`]d data, so a mechanism that needs only counts runs
    /// on the encoding without the records.
    ///
    /// A bit table of source table `S` fixes a value `v_i` for each non-binary attribute
    /// `i ∈ W` of `S`; its cell with one-hot bits set on `A ⊆ W` and binary attributes `β`
    /// counts the records with `x_i = v_i` on `A`, `x_i ≠ v_i` on `W \ A` and `β` on the
    /// binary ones. With `M(A′) = #{x_i = v_i on A′, β}` (a marginal of `S`'s counts) that is
    /// the superset Möbius sum `Σ_{A′ ⊇ A} (−1)^{|A′ \ A|} M(A′)`, in exact integers.
    ///
    /// Errors: a wrong length ([`QueryError::LengthMismatch`]); counts that are not those of
    /// a dataset (a negative cell count, [`QueryError::BadWorkload`]).
    pub fn bit_counts(&self, counts: &[u64]) -> Result<Vec<u64>> {
        let cells: usize = self.tables.iter().map(Marginal::num_cells).sum();
        if counts.len() != cells {
            return Err(QueryError::LengthMismatch {
                expected: cells,
                found: counts.len(),
            });
        }
        let mut out = Vec::with_capacity(self.bit_workload.num_queries());
        let (mut source_offset, mut first_table) = (0usize, 0usize);
        for m in &self.tables {
            let table_counts = &counts[source_offset..source_offset + m.num_cells()];
            source_offset += m.num_cells();
            let k = m.attrs().len();
            // table positions of the non-binary attributes (one-hot, with sizes) and of the
            // binary ones (kept as one bit), as in `new`
            let wide: Vec<(usize, usize)> = (0..k)
                .filter(|&i| m.sizes()[i] != 2)
                .map(|i| (i, m.sizes()[i] as usize))
                .collect();
            let binary: Vec<usize> = (0..k)
                .filter(|&i| wide.iter().all(|&(w, _)| w != i))
                .collect();
            let (w, b) = (wide.len(), binary.len());
            // M(A′) for every subset A′ of the wide positions: indexed by the values of A′'s
            // wide attributes (mixed radix, in order) then the binary bits
            let len_of = |sub: usize| -> usize {
                (0..w)
                    .filter(|j| sub >> j & 1 == 1)
                    .map(|j| wide[j].1)
                    .product::<usize>()
                    << b
            };
            let index_of = |sub: usize, wide_values: &dyn Fn(usize) -> usize, beta: usize| {
                let mut idx = 0usize;
                for (j, &(_, size)) in wide.iter().enumerate() {
                    if sub >> j & 1 == 1 {
                        idx = idx * size + wide_values(j);
                    }
                }
                (idx << b) | beta
            };
            let mut sub_counts: Vec<Vec<i128>> = (0..1usize << w)
                .map(|sub| vec![0i128; len_of(sub)])
                .collect();
            for (cell, &c) in table_counts.iter().enumerate() {
                if c == 0 {
                    continue;
                }
                let codes = m.cell_codes(cell);
                let beta = binary.iter().enumerate().fold(0usize, |acc, (j, &i)| {
                    acc | (codes[i] as usize) << (b - 1 - j)
                });
                let value = |j: usize| codes[wide[j].0] as usize;
                for (sub, table) in sub_counts.iter_mut().enumerate() {
                    table[index_of(sub, &value, beta)] += i128::from(c);
                }
            }
            // each bit table (a combination v of wide values, row-major), each binary β
            let combos: usize = wide.iter().map(|&(_, s)| s).product();
            let mut v = vec![0usize; w];
            let mut g = vec![0i128; 1 << w];
            let mut bit_codes = vec![0u32; k];
            for combo in 0..combos {
                let bit_table = &self.bit_workload.marginals()[first_table + combo];
                let start = out.len();
                out.resize(start + bit_table.num_cells(), 0u64);
                for beta in 0..1usize << b {
                    let value = |j: usize| v[j];
                    for (sub, slot) in g.iter_mut().enumerate() {
                        *slot = sub_counts[sub][index_of(sub, &value, beta)];
                    }
                    // superset Möbius transform: g(A) = Σ_{A′ ⊇ A} (−1)^{|A′ \ A|} M(A′)
                    for j in 0..w {
                        for sub in 0..1usize << w {
                            if sub >> j & 1 == 0 {
                                g[sub] -= g[sub | 1 << j];
                            }
                        }
                    }
                    for (j, &i) in binary.iter().enumerate() {
                        bit_codes[i] = ((beta >> (b - 1 - j)) & 1) as u32;
                    }
                    for (sub, &count) in g.iter().enumerate() {
                        for (j, &(i, _)) in wide.iter().enumerate() {
                            bit_codes[i] = (sub >> j & 1) as u32;
                        }
                        out[start + bit_table.cell_index(&bit_codes)] = u64::try_from(count)
                            .map_err(|_| QueryError::BadWorkload {
                                reason: format!(
                                    "a one-hot cell count of {count}: the counts are not those \
                                     of a dataset"
                                ),
                            })?;
                    }
                }
                // next combination, row-major (last wide attribute fastest)
                for j in (0..w).rev() {
                    v[j] += 1;
                    if v[j] < wide[j].1 {
                        break;
                    }
                    v[j] = 0;
                }
            }
            first_table += combos;
        }
        Ok(out)
    }

    /// The source workload's answers (workload order) from answers to the bit workload.
    ///
    /// Errors: `bit_answers` does not have the bit workload's length
    /// ([`QueryError::BadWorkload`]).
    pub fn read_back(&self, bit_answers: &[f64]) -> Result<Vec<f64>> {
        if bit_answers.len() != self.bit_workload.num_queries() {
            return Err(QueryError::BadWorkload {
                reason: format!(
                    "{} answers given for a one-hot workload of {} cells",
                    bit_answers.len(),
                    self.bit_workload.num_queries()
                ),
            });
        }
        Ok(self.read_back.iter().map(|&i| bit_answers[i]).collect())
    }
}
