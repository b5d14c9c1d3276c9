//! Finite point sets given implicitly through inner products ([`PointSet`]), and three
//! implementations: explicit dense points ([`DensePoints`]), a subset view of another set
//! ([`SubsetPoints`]), and sparse 0/1 points with exactly one 1 per block of coordinates
//! ([`BlockOneHotPoints`], the shape of the answer vectors of a marginal workload).

use rayon::prelude::*;

use crate::error::{GeometryError, Result, check_dim, check_finite};
use crate::parallel::{PAR_CHUNK, Parallelism};

/// A finite point set `{p_0, …, p_{len−1}} ⊂ R^dim` known through inner products.
///
/// Points are never required to be stored as a dense `len × dim` matrix; an implementation
/// only answers `⟨c, p_i⟩` and adds multiples of `p_i` into a buffer.
///
/// The methods are low-level kernels: callers must pass `i < len()`, `c.len() == dim()` and
/// `out.len() == dim()` (resp. `len()` for [`PointSet::inner_all`]); implementations may
/// panic otherwise. Every public algorithm of this crate validates these before calling.
pub trait PointSet: Sync {
    /// Number of points.
    fn len(&self) -> usize;
    /// Whether there are no points.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Dimension of the ambient space.
    fn dim(&self) -> usize;
    /// `⟨c, p_i⟩`.
    fn inner(&self, i: usize, c: &[f64]) -> f64;
    /// `out += scale · p_i`.
    fn add_scaled(&self, i: usize, scale: f64, out: &mut [f64]);
    /// `out[i] = ⟨c, p_i⟩` for every `i` at once. The default loops over
    /// [`PointSet::inner`] (over rayon if asked); implementations override it with a
    /// faster batch kernel.
    fn inner_all(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        match par {
            Parallelism::None => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = self.inner(i, c);
                }
            }
            Parallelism::Rayon => {
                out.par_chunks_mut(PAR_CHUNK)
                    .enumerate()
                    .for_each(|(chunk, block)| {
                        let base = chunk * PAR_CHUNK;
                        for (k, o) in block.iter_mut().enumerate() {
                            *o = self.inner(base + k, c);
                        }
                    });
            }
        }
    }
    /// Writes `p_i` into `out` (overwriting it).
    fn write_point(&self, i: usize, out: &mut [f64]) {
        out.fill(0.0);
        self.add_scaled(i, 1.0, out);
    }
    /// `out += Σ_i weights[i] · p_i` (`weights.len() == len()`, `out.len() == dim()`): the
    /// adjoint of [`PointSet::inner_all`]. The default adds the points of the non-zero
    /// weights one by one; implementations may override it with a batch kernel.
    fn add_weighted(&self, weights: &[f64], out: &mut [f64], par: Parallelism) {
        let _ = par;
        for (i, &w) in weights.iter().enumerate() {
            if w != 0.0 {
                self.add_scaled(i, w, out);
            }
        }
    }
}

impl<P: PointSet + ?Sized> PointSet for &P {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn inner(&self, i: usize, c: &[f64]) -> f64 {
        (**self).inner(i, c)
    }
    fn add_scaled(&self, i: usize, scale: f64, out: &mut [f64]) {
        (**self).add_scaled(i, scale, out)
    }
    fn inner_all(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        (**self).inner_all(c, out, par)
    }
    fn write_point(&self, i: usize, out: &mut [f64]) {
        (**self).write_point(i, out)
    }
    fn add_weighted(&self, weights: &[f64], out: &mut [f64], par: Parallelism) {
        (**self).add_weighted(weights, out, par)
    }
}

/// Dot product with four independent accumulators (lets the compiler vectorize).
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        acc[0] += x[0] * y[0];
        acc[1] += x[1] * y[1];
        acc[2] += x[2] * y[2];
        acc[3] += x[3] * y[3];
    }
    let mut tail = 0.0;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Points stored explicitly, row-major (`len × dim`). For tests and small problems.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DensePoints {
    dim: usize,
    data: Vec<f64>,
}

impl DensePoints {
    /// Builds a set from a list of points, all of the same positive dimension and finite.
    pub fn new(points: Vec<Vec<f64>>) -> Result<Self> {
        let dim = points.first().map(Vec::len).ok_or(GeometryError::Empty(
            "DensePoints::new needs at least one point",
        ))?;
        let mut data = Vec::with_capacity(dim * points.len());
        for p in &points {
            check_dim("DensePoints::new (point length)", dim, p.len())?;
            data.extend_from_slice(p);
        }
        Self::from_flat(dim, data)
    }

    /// Builds a set from a row-major buffer of `len · dim` finite numbers.
    pub fn from_flat(dim: usize, data: Vec<f64>) -> Result<Self> {
        if dim == 0 {
            return Err(GeometryError::InvalidParameter {
                name: "dim",
                reason: "points must have positive dimension".into(),
            });
        }
        if (data.len() / dim) * dim != data.len() {
            return Err(GeometryError::InvalidParameter {
                name: "data",
                reason: format!("length {} is not a multiple of dim {dim}", data.len()),
            });
        }
        check_finite(&data, "DensePoints coordinates")?;
        Ok(Self { dim, data })
    }

    /// The `i`-th point, or `None` when out of range.
    pub fn point(&self, i: usize) -> Option<&[f64]> {
        self.data.get(i * self.dim..(i + 1) * self.dim)
    }

    /// The row-major coordinate buffer.
    pub fn as_flat(&self) -> &[f64] {
        &self.data
    }
}

impl PointSet for DensePoints {
    fn len(&self) -> usize {
        self.data.len() / self.dim
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn inner(&self, i: usize, c: &[f64]) -> f64 {
        dot(&self.data[i * self.dim..(i + 1) * self.dim], c)
    }
    fn add_scaled(&self, i: usize, scale: f64, out: &mut [f64]) {
        for (o, p) in out
            .iter_mut()
            .zip(&self.data[i * self.dim..(i + 1) * self.dim])
        {
            *o += scale * p;
        }
    }
    fn inner_all(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        let d = self.dim;
        match par {
            Parallelism::None => {
                for (o, row) in out.iter_mut().zip(self.data.chunks_exact(d)) {
                    *o = dot(row, c);
                }
            }
            Parallelism::Rayon => {
                out.par_iter_mut()
                    .zip(self.data.par_chunks_exact(d))
                    .with_min_len(64)
                    .for_each(|(o, row)| *o = dot(row, c));
            }
        }
    }
}

/// A view of the points `parent[indices[0]], parent[indices[1]], …` of another set;
/// point `k` of the view is point `indices[k]` of the parent.
#[derive(Clone, Debug)]
pub struct SubsetPoints<'a, P: PointSet + ?Sized> {
    parent: &'a P,
    indices: Vec<usize>,
}

impl<'a, P: PointSet + ?Sized> SubsetPoints<'a, P> {
    /// Validates that every index is `< parent.len()`.
    pub fn new(parent: &'a P, indices: Vec<usize>) -> Result<Self> {
        let len = parent.len();
        if let Some(&index) = indices.iter().find(|&&i| i >= len) {
            return Err(GeometryError::IndexOutOfRange { index, len });
        }
        Ok(Self { parent, indices })
    }

    /// The parent indices of the view's points.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }
}

impl<P: PointSet + ?Sized> PointSet for SubsetPoints<'_, P> {
    fn len(&self) -> usize {
        self.indices.len()
    }
    fn dim(&self) -> usize {
        self.parent.dim()
    }
    fn inner(&self, i: usize, c: &[f64]) -> f64 {
        self.parent.inner(self.indices[i], c)
    }
    fn add_scaled(&self, i: usize, scale: f64, out: &mut [f64]) {
        self.parent.add_scaled(self.indices[i], scale, out)
    }
}

/// Code storage of [`BlockOneHotPoints`]: one byte per (point, group) when every group
/// has at most 256 joint cells, two bytes otherwise.
#[derive(Clone, Debug, PartialEq)]
enum Codes {
    U8(Vec<u8>),
    U16(Vec<u16>),
}

/// Points in `{0,1}^dim` whose coordinates are split into consecutive blocks of sizes
/// `block_sizes`, with exactly one 1 in every block: point `i` is described by the cell
/// `cell(i, b) ∈ 0..block_sizes[b]` it selects in each block `b`.
///
/// This is the geometry of a marginal workload: a record's answer vector over `B`
/// marginals has exactly one 1 among the cells of each marginal (e.g. all 3-way
/// marginals of 16 binary attributes: 560 blocks of 8 cells, dim 4 480).
///
/// Storage and batch kernel: consecutive blocks are packed into *groups* whose joint
/// number of cells is at most 256 (e.g. pairs of 8-cell blocks, 64 joint cells), and a
/// point stores one byte per group, the mixed-radix code of its cells in the group.
/// [`PointSet::inner_all`] first tabulates, for every group and joint cell, the sum of the
/// direction's entries it selects (`Σ_groups size` entries, 17 920 for the example), then
/// needs one table lookup per (point, group): half the memory traffic and half the
/// additions of one lookup per block. If a block has more than 256 cells every block is
/// its own group, stored in two bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockOneHotPoints {
    block_sizes: Vec<usize>,
    /// First coordinate of each block.
    offsets: Vec<usize>,
    /// For each block: (group, stride of its digit in the group's code).
    block_group: Vec<(usize, usize)>,
    /// For each group: (first block, end block, joint size).
    groups: Vec<(usize, usize, usize)>,
    /// For each group: first entry of its table.
    table_offsets: Vec<usize>,
    table_len: usize,
    dim: usize,
    len: usize,
    codes: Codes,
}

impl BlockOneHotPoints {
    /// `block_sizes[b] ≥ 1` cells in block `b` (at most 65 536), and `cells` row-major
    /// `len × blocks` with `cells[i·blocks + b] < block_sizes[b]`.
    pub fn new(block_sizes: &[usize], cells: &[u16]) -> Result<Self> {
        let blocks = block_sizes.len();
        if blocks == 0 {
            return Err(GeometryError::InvalidParameter {
                name: "block_sizes",
                reason: "at least one block is needed".into(),
            });
        }
        if let Some(&bad) = block_sizes.iter().find(|&&s| s == 0 || s > 1 << 16) {
            return Err(GeometryError::InvalidParameter {
                name: "block_sizes",
                reason: format!("block size {bad} is not in 1..=65536"),
            });
        }
        if (cells.len() / blocks) * blocks != cells.len() {
            return Err(GeometryError::InvalidParameter {
                name: "cells",
                reason: format!(
                    "length {} is not a multiple of the {blocks} blocks",
                    cells.len()
                ),
            });
        }
        for row in cells.chunks_exact(blocks) {
            for (&cell, &size) in row.iter().zip(block_sizes) {
                if usize::from(cell) >= size {
                    return Err(GeometryError::InvalidParameter {
                        name: "cells",
                        reason: format!("cell {cell} out of range for a block of size {size}"),
                    });
                }
            }
        }
        let mut offsets = Vec::with_capacity(blocks);
        let mut dim = 0;
        for &s in block_sizes {
            offsets.push(dim);
            dim += s;
        }
        // Greedy grouping of consecutive blocks with joint size ≤ 256 (single blocks if
        // some block is larger).
        let packable = block_sizes.iter().all(|&s| s <= 256);
        let mut groups = Vec::new();
        let mut block_group = Vec::with_capacity(blocks);
        let mut b = 0;
        while b < blocks {
            let first = b;
            let mut size = block_sizes[b];
            block_group.push((groups.len(), 1));
            b += 1;
            while packable && b < blocks && size * block_sizes[b] <= 256 {
                block_group.push((groups.len(), size));
                size *= block_sizes[b];
                b += 1;
            }
            groups.push((first, b, size));
        }
        let mut table_offsets = Vec::with_capacity(groups.len());
        let mut table_len = 0;
        for &(_, _, size) in &groups {
            table_offsets.push(table_len);
            table_len += size;
        }
        let len = cells.len() / blocks;
        let code_of = |row: &[u16], g: usize| -> usize {
            let (first, end, _) = groups[g];
            (first..end)
                .map(|blk| usize::from(row[blk]) * block_group[blk].1)
                .sum()
        };
        let codes = if packable {
            let mut v = Vec::with_capacity(len * groups.len());
            for row in cells.chunks_exact(blocks) {
                // Each code is < the group's joint size ≤ 256.
                v.extend((0..groups.len()).map(|g| (code_of(row, g) & 0xff) as u8));
            }
            Codes::U8(v)
        } else {
            Codes::U16(cells.to_vec())
        };
        Ok(Self {
            block_sizes: block_sizes.to_vec(),
            offsets,
            block_group,
            groups,
            table_offsets,
            table_len,
            dim,
            len,
            codes,
        })
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.offsets.len()
    }

    fn code(&self, i: usize, g: usize) -> usize {
        let k = i * self.groups.len() + g;
        match &self.codes {
            Codes::U8(v) => usize::from(v[k]),
            Codes::U16(v) => usize::from(v[k]),
        }
    }

    /// The cell point `i` selects in block `b`, or `None` when out of range.
    pub fn cell(&self, i: usize, b: usize) -> Option<usize> {
        if i >= self.len || b >= self.blocks() {
            return None;
        }
        let (g, stride) = self.block_group[b];
        Some((self.code(i, g) / stride) % self.block_sizes[b])
    }

    /// Calls `f(coordinate)` for the coordinate of each 1 of point `i`.
    #[inline]
    fn for_each_one(&self, i: usize, mut f: impl FnMut(usize)) {
        for (g, &(first, end, _)) in self.groups.iter().enumerate() {
            let mut code = self.code(i, g);
            for b in first..end {
                let size = self.block_sizes[b];
                f(self.offsets[b] + code % size);
                code /= size;
            }
        }
    }

    /// `table[t_g + code] = Σ_{b ∈ g} c[offset_b + digit_b(code)]`.
    fn build_table(&self, c: &[f64]) -> Vec<f64> {
        let mut table = vec![0.0; self.table_len];
        for (g, &(first, end, size)) in self.groups.iter().enumerate() {
            let t = &mut table[self.table_offsets[g]..self.table_offsets[g] + size];
            for (code, entry) in t.iter_mut().enumerate() {
                let mut rest = code;
                let mut sum = 0.0;
                for b in first..end {
                    let bs = self.block_sizes[b];
                    sum += c[self.offsets[b] + rest % bs];
                    rest /= bs;
                }
                *entry = sum;
            }
        }
        table
    }

    #[inline]
    fn row_sum<T: Copy + Into<usize>>(offsets: &[usize], row: &[T], table: &[f64]) -> f64 {
        let mut acc = [0.0f64; 4];
        let mut ro = row.chunks_exact(4);
        let mut oo = offsets.chunks_exact(4);
        for (r, o) in (&mut ro).zip(&mut oo) {
            acc[0] += table[o[0] + r[0].into()];
            acc[1] += table[o[1] + r[1].into()];
            acc[2] += table[o[2] + r[2].into()];
            acc[3] += table[o[3] + r[3].into()];
        }
        let mut tail = 0.0;
        for (r, o) in ro.remainder().iter().zip(oo.remainder()) {
            tail += table[o + (*r).into()];
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
    }

    fn inner_all_typed<T: Copy + Into<usize> + Sync>(
        &self,
        codes: &[T],
        table: &[f64],
        out: &mut [f64],
        par: Parallelism,
    ) {
        let g = self.groups.len();
        let offsets = &self.table_offsets[..];
        match par {
            Parallelism::None => {
                for (o, row) in out.iter_mut().zip(codes.chunks_exact(g)) {
                    *o = Self::row_sum(offsets, row, table);
                }
            }
            Parallelism::Rayon => {
                out.par_chunks_mut(PAR_CHUNK)
                    .zip(codes.par_chunks(PAR_CHUNK * g))
                    .for_each(|(outs, rows)| {
                        for (o, row) in outs.iter_mut().zip(rows.chunks_exact(g)) {
                            *o = Self::row_sum(offsets, row, table);
                        }
                    });
            }
        }
    }
}

impl PointSet for BlockOneHotPoints {
    fn len(&self) -> usize {
        self.len
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn inner(&self, i: usize, c: &[f64]) -> f64 {
        let mut sum = 0.0;
        self.for_each_one(i, |k| sum += c[k]);
        sum
    }
    fn add_scaled(&self, i: usize, scale: f64, out: &mut [f64]) {
        self.for_each_one(i, |k| out[k] += scale);
    }
    fn inner_all(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        let table = self.build_table(c);
        match &self.codes {
            Codes::U8(v) => self.inner_all_typed(v, &table, out, par),
            Codes::U16(v) => self.inner_all_typed(v, &table, out, par),
        }
    }
}
