//! Binary (one-hot) encoding of a dataset, bit-packed by rows.
//!
//! Mechanisms over the binary universe `{0,1}^d` (conjunctions and parities, seed 000 §4,
//! seed 002, seed 003 §4) see a categorical attribute of size `s` as `s` bits of which
//! exactly one is set. Bit `j` of a record lives in word `j / 64`, bit `j % 64` of its row,
//! so a conjunction is an AND-mask test and a parity is a popcount.

use std::ops::Range;

use crate::dataset::Dataset;

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
