//! Tables over attribute lists and the index maps between them.
//!
//! A table over the attribute list `(a_0, …, a_{k-1})` has its cells in row-major order, the
//! last attribute varying fastest (as [`crate::Marginal`]). Marginalising a clique table onto
//! a sub-list, or adding a sub-list's table into a clique's, goes through a precomputed
//! *index map*: for every cell of the outer table, the cell of the inner table it projects to
//! (McKenna, Sheldon & Miklau 2019, §4: every inference step is a sum or a product of such
//! tables; with the maps, neither allocates per cell).

use crate::error::{QueryError, Result};

/// Largest intermediate table (entries) that exact variable elimination may build for an
/// out-of-clique marginal.
pub(crate) const MAX_ELIMINATION_TABLE: f64 = 1e8;

/// Row-major strides of a table over `attrs` (domain attribute sizes `sizes`).
pub(crate) fn strides(attrs: &[usize], sizes: &[u32]) -> Vec<usize> {
    let mut st = vec![1usize; attrs.len()];
    for p in (0..attrs.len().saturating_sub(1)).rev() {
        st[p] = st[p + 1] * sizes[attrs[p + 1]] as usize;
    }
    st
}

/// Cells of a table over `attrs`.
pub(crate) fn cells(attrs: &[usize], sizes: &[u32]) -> usize {
    attrs.iter().map(|&a| sizes[a] as usize).product()
}

/// For every cell of the table over `outer`, the cell of the table over `inner` (every
/// attribute of `inner` in `outer`; any order) that it projects to.
pub(crate) fn index_map(outer: &[usize], inner: &[usize], sizes: &[u32]) -> Vec<u32> {
    let inner_st = strides(inner, sizes);
    // stride in the inner table of each outer position (0 when not in inner)
    let st: Vec<usize> = outer
        .iter()
        .map(|a| inner.iter().position(|b| b == a).map_or(0, |p| inner_st[p]))
        .collect();
    let dims: Vec<usize> = outer.iter().map(|&a| sizes[a] as usize).collect();
    let n = cells(outer, sizes);
    let mut out = Vec::with_capacity(n);
    if outer.is_empty() {
        out.push(0);
        return out;
    }
    let last = outer.len() - 1;
    let (dl, sl) = (dims[last], st[last]);
    let mut assign = vec![0usize; outer.len()];
    let mut base = 0usize;
    while out.len() < n {
        // innermost attribute in one run
        for x in 0..dl {
            out.push((base + x * sl) as u32);
        }
        // odometer over the other attributes
        let mut p = last;
        while p > 0 {
            p -= 1;
            assign[p] += 1;
            base += st[p];
            if assign[p] < dims[p] {
                break;
            }
            base -= st[p] * dims[p];
            assign[p] = 0;
        }
    }
    out
}

/// An [`index_map`] stored by runs: the trailing attributes of `outer` that are not in
/// `inner` form runs of `run` consecutive cells that all project to the same inner cell, so
/// sums and broadcasts over a run are contiguous (and vectorise) and the map has one entry
/// per run.
#[derive(Clone, Debug)]
pub(crate) struct RunMap {
    run: usize,
    map: Vec<u32>,
}

impl RunMap {
    /// The map from the table over `outer` to the table over `inner` (see [`index_map`]).
    pub(crate) fn new(outer: &[usize], inner: &[usize], sizes: &[u32]) -> Self {
        let mut k = outer.len();
        let mut run = 1usize;
        while k > 0 && !inner.contains(&outer[k - 1]) {
            k -= 1;
            run *= sizes[outer[k]] as usize;
        }
        RunMap {
            run,
            map: index_map(&outer[..k], inner, sizes),
        }
    }

    /// `dst[inner cell] += Σ src[outer cells projecting to it]`.
    #[inline]
    pub(crate) fn scatter_sum(&self, src: &[f64], dst: &mut [f64]) {
        if self.run == 1 {
            for (&x, &j) in src.iter().zip(&self.map) {
                dst[j as usize] += x;
            }
        } else {
            for (block, &j) in src.chunks_exact(self.run).zip(&self.map) {
                dst[j as usize] += block.iter().sum::<f64>();
            }
        }
    }

    /// `dst[outer cell] += src[its inner cell]`.
    #[inline]
    pub(crate) fn gather_add(&self, src: &[f64], dst: &mut [f64]) {
        if self.run == 1 {
            for (x, &j) in dst.iter_mut().zip(&self.map) {
                *x += src[j as usize];
            }
        } else {
            for (block, &j) in dst.chunks_exact_mut(self.run).zip(&self.map) {
                let v = src[j as usize];
                block.iter_mut().for_each(|x| *x += v);
            }
        }
    }

    /// `dst[outer cell] *= src[its inner cell]`.
    #[inline]
    pub(crate) fn gather_mul(&self, src: &[f64], dst: &mut [f64]) {
        if self.run == 1 {
            for (x, &j) in dst.iter_mut().zip(&self.map) {
                *x *= src[j as usize];
            }
        } else {
            for (block, &j) in dst.chunks_exact_mut(self.run).zip(&self.map) {
                let v = src[j as usize];
                block.iter_mut().for_each(|x| *x *= v);
            }
        }
    }
}

/// `ln Σ exp(v)` over a slice, with the maximum subtracted (finite for finite input).
pub(crate) fn log_sum_exp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    let s: f64 = v.iter().map(|&x| (x - m).exp()).sum();
    m + s.ln()
}

/// A log-space table over a sorted attribute list.
#[derive(Clone, Debug)]
pub(crate) struct LogFactor {
    pub vars: Vec<usize>,
    pub table: Vec<f64>,
}

/// Exact sum-product variable elimination in log space: the log of the (unnormalised)
/// marginal on `keep` (sorted) of `exp(Σ factors)`, as a table over `keep`. Eliminates the
/// other variables greedily by smallest table created (the min-weight rule of
/// [`super::JunctionTree`]). Errors with [`QueryError::TooLarge`] before building a table
/// above [`MAX_ELIMINATION_TABLE`] entries.
pub(crate) fn eliminate_to(
    mut factors: Vec<LogFactor>,
    keep: &[usize],
    sizes: &[u32],
) -> Result<LogFactor> {
    loop {
        let mut vars: Vec<usize> = factors
            .iter()
            .flat_map(|f| f.vars.iter().copied())
            .collect();
        vars.sort_unstable();
        vars.dedup();
        let mut best: Option<(f64, usize, Vec<usize>)> = None;
        for &v in vars.iter().filter(|v| keep.binary_search(v).is_err()) {
            let mut scope: Vec<usize> = factors
                .iter()
                .filter(|f| f.vars.binary_search(&v).is_ok())
                .flat_map(|f| f.vars.iter().copied())
                .collect();
            scope.sort_unstable();
            scope.dedup();
            let w: f64 = scope.iter().map(|&a| f64::from(sizes[a])).product();
            if best.as_ref().is_none_or(|b| w < b.0) {
                best = Some((w, v, scope));
            }
        }
        let Some((w, v, scope)) = best else { break };
        if w > MAX_ELIMINATION_TABLE {
            return Err(too_large(w));
        }
        let (used, rest): (Vec<LogFactor>, Vec<LogFactor>) = factors
            .into_iter()
            .partition(|f| f.vars.binary_search(&v).is_ok());
        let out_scope: Vec<usize> = scope.iter().copied().filter(|&a| a != v).collect();
        factors = rest;
        factors.push(combine(&used, &out_scope, Some(v), sizes));
    }
    let w: f64 = keep.iter().map(|&a| f64::from(sizes[a])).product();
    if w > MAX_ELIMINATION_TABLE {
        return Err(too_large(w));
    }
    Ok(combine(&factors, keep, None, sizes))
}

fn too_large(w: f64) -> QueryError {
    QueryError::TooLarge {
        what: "exact elimination for a marginal of the graphical model".into(),
        estimate: format!("a table of {w:.3e} entries (limit {MAX_ELIMINATION_TABLE:.0e})"),
    }
}

/// The sum of `factors` over `scope` (sorted), with `sum_out` (not in `scope`) summed out
/// in log space when given.
fn combine(
    factors: &[LogFactor],
    scope: &[usize],
    sum_out: Option<usize>,
    sizes: &[u32],
) -> LogFactor {
    let mut full: Vec<usize> = scope.to_vec();
    if let Some(v) = sum_out {
        full.push(v);
    }
    let maps: Vec<Vec<u32>> = factors
        .iter()
        .map(|f| index_map(&full, &f.vars, sizes))
        .collect();
    let n = cells(&full, sizes);
    let inner = sum_out.map_or(1, |v| sizes[v] as usize);
    let mut joint = vec![0.0f64; n];
    for (f, map) in factors.iter().zip(&maps) {
        for (j, &m) in joint.iter_mut().zip(map) {
            *j += f.table[m as usize];
        }
    }
    let table = if inner == 1 {
        joint
    } else {
        joint.chunks_exact(inner).map(log_sum_exp).collect()
    };
    LogFactor {
        vars: scope.to_vec(),
        table,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_map_matches_codes() {
        let sizes = [2u32, 3, 4];
        let outer = [0usize, 1, 2];
        let inner = [2usize, 0];
        let map = index_map(&outer, &inner, &sizes);
        assert_eq!(map.len(), 24);
        for a in 0..2 {
            for b in 0..3 {
                for c in 0..4 {
                    let cell = a * 12 + b * 4 + c;
                    assert_eq!(map[cell] as usize, c * 2 + a);
                }
            }
        }
        assert_eq!(index_map(&outer, &[], &sizes), vec![0; 24]);
        assert_eq!(index_map(&[], &[], &sizes), vec![0]);
    }

    #[test]
    fn run_maps_agree_with_index_maps() {
        let sizes = [2u32, 3, 4, 2];
        let outer = [0usize, 1, 2, 3];
        let src: Vec<f64> = (0..48).map(|i| (i * 7 % 11) as f64).collect();
        for inner in [
            vec![0usize],
            vec![1, 0],
            vec![3],
            vec![2, 1],
            vec![0, 1, 2, 3],
            vec![],
        ] {
            let flat = index_map(&outer, &inner, &sizes);
            let rm = RunMap::new(&outer, &inner, &sizes);
            let n = cells(&inner, &sizes);
            let (mut want, mut got) = (vec![0.0; n], vec![0.0; n]);
            for (&x, &j) in src.iter().zip(&flat) {
                want[j as usize] += x;
            }
            rm.scatter_sum(&src, &mut got);
            assert_eq!(got, want, "{inner:?}");
            let small: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
            let (mut a, mut b) = (src.clone(), src.clone());
            rm.gather_add(&small, &mut a);
            rm.gather_mul(&small, &mut b);
            for i in 0..48 {
                assert_eq!(a[i], src[i] + small[flat[i] as usize]);
                assert_eq!(b[i], src[i] * small[flat[i] as usize]);
            }
        }
    }
}
