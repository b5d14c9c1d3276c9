//! Tables over attribute lists and the index maps between them.
//!
//! A table over the attribute list `(a_0, …, a_{k-1})` has its cells in row-major order, the
//! last attribute varying fastest (as [`crate::Marginal`]). Marginalising a clique table onto
//! a sub-list, or adding a sub-list's table into a clique's, goes through a precomputed
//! *index map*: for every cell of the outer table, the cell of the inner table it projects to
//! (McKenna, Sheldon & Miklau 2019, §4: every inference step is a sum or a product of such
//! tables; with the maps, neither allocates per cell).

use std::borrow::Cow;

use dp_geometry::Parallelism;
use rayon::prelude::*;

use crate::error::{QueryError, Result};

/// Default largest intermediate table (entries) that exact variable elimination may build
/// for an out-of-clique marginal (`GraphicalModelSettings::max_elimination_cells`).
pub(crate) const DEFAULT_MAX_ELIMINATION_CELLS: f64 = 1e7;

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
        scatter_sum_runs(self.run, &self.map, src, dst);
    }

    /// `dst[outer cell] += src[its inner cell]`.
    #[inline]
    pub(crate) fn gather_add(&self, src: &[f64], dst: &mut [f64]) {
        gather_runs(self.run, &self.map, src, dst, |x, v| *x += v);
    }

    /// Map entries per task of the `_with` kernels: the runs of about [`PAR_CELLS`] outer
    /// cells (at least one run).
    fn per_task(&self) -> usize {
        (PAR_CELLS / self.run).max(1)
    }

    /// Whether [`Self::scatter_sum_with`] sums in tasks (each into its own copy of `dst`):
    /// at least two tasks, and the copies in all at most a quarter of `src`'s cells.
    fn sums_in_task_copies(&self, src_len: usize, dst_len: usize) -> bool {
        let tasks = self.map.len().div_ceil(self.per_task());
        tasks >= 2 && dst_len.saturating_mul(tasks) <= src_len / 4
    }

    /// One task's sum: the part `s` of the outer table with its map entries `m`, summed into
    /// a zeroed table of `width` cells.
    fn task_copy(&self, s: &[f64], m: &[u32], width: usize) -> Vec<f64> {
        let mut copy = vec![0.0; width];
        scatter_sum_runs(self.run, m, s, &mut copy);
        copy
    }

    /// `src ← e^(src − m)` cell by cell, then [`Self::scatter_sum_with`] of the result, with
    /// the same tasks, order and result bit for bit; where the tasks sum into copies, each
    /// task exponentiates its part of `src` just before summing it, while it is in cache
    /// (the fit's collect pass: one pass over the clique from memory instead of two).
    pub(crate) fn exp_scatter_sum_with(
        &self,
        src: &mut [f64],
        m: f64,
        dst: &mut [f64],
        par: Parallelism,
    ) {
        if !self.sums_in_task_copies(src.len(), dst.len()) {
            elementwise(src, par, |_, x| *x = super::exp::exp(*x - m));
            self.scatter_sum(src, dst);
            return;
        }
        let (per, width) = (self.per_task(), dst.len());
        let part = |(s, mp): (&mut [f64], &[u32])| {
            for x in s.iter_mut() {
                *x = super::exp::exp(*x - m);
            }
            self.task_copy(s, mp, width)
        };
        let parts: Vec<Vec<f64>> = match par {
            Parallelism::None => src
                .chunks_mut(per * self.run)
                .zip(self.map.chunks(per))
                .map(part)
                .collect(),
            Parallelism::Rayon => src
                .par_chunks_mut(per * self.run)
                .zip(self.map.par_chunks(per))
                .map(part)
                .collect(),
        };
        add_in_order(dst, &parts);
    }

    /// [`Self::scatter_sum`] in tasks of about [`PAR_CELLS`] outer cells, each summing into
    /// its own zeroed copy of `dst`, the copies then added to `dst` in task order. Used only
    /// where the copies are small beside `src` (their cells in all at most a quarter of
    /// `src`'s), else the plain loop. Which of the two runs depends on the sizes alone, and
    /// the tasks and their order do not depend on `par`, so the result is the same, bit for
    /// bit, with [`Parallelism::None`] and [`Parallelism::Rayon`] (whatever the pool).
    pub(crate) fn scatter_sum_with(&self, src: &[f64], dst: &mut [f64], par: Parallelism) {
        if !self.sums_in_task_copies(src.len(), dst.len()) {
            self.scatter_sum(src, dst);
            return;
        }
        let (per, width) = (self.per_task(), dst.len());
        let part = |(s, mp): (&[f64], &[u32])| self.task_copy(s, mp, width);
        let parts: Vec<Vec<f64>> = match par {
            Parallelism::None => src
                .chunks(per * self.run)
                .zip(self.map.chunks(per))
                .map(part)
                .collect(),
            Parallelism::Rayon => src
                .par_chunks(per * self.run)
                .zip(self.map.par_chunks(per))
                .map(part)
                .collect(),
        };
        add_in_order(dst, &parts);
    }

    /// [`Self::gather_add`], split over `par` in tasks of about [`PAR_CELLS`] outer cells
    /// (each cell is written by one task only: the same result with either `par`).
    pub(crate) fn gather_add_with(&self, src: &[f64], dst: &mut [f64], par: Parallelism) {
        self.gather_with(src, dst, par, |x, v| *x += v);
    }

    /// `dst[outer cell] *= src[its inner cell]`, split over `par` as [`Self::gather_add_with`].
    pub(crate) fn gather_mul_with(&self, src: &[f64], dst: &mut [f64], par: Parallelism) {
        self.gather_with(src, dst, par, |x, v| *x *= v);
    }

    fn gather_with(
        &self,
        src: &[f64],
        dst: &mut [f64],
        par: Parallelism,
        op: impl Fn(&mut f64, f64) + Sync,
    ) {
        if par == Parallelism::None || dst.len() < 2 * PAR_CELLS {
            gather_runs(self.run, &self.map, src, dst, op);
            return;
        }
        let per = self.per_task();
        dst.par_chunks_mut(per * self.run)
            .zip(self.map.par_chunks(per))
            .for_each(|(d, m)| gather_runs(self.run, m, src, d, &op));
    }
}

/// Cells of a table per task of the fit's parallel loops ([`RunMap::scatter_sum_with`],
/// [`RunMap::gather_add_with`], [`elementwise`]): large enough that a task outweighs its
/// scheduling, small enough to balance a few threads on a model's largest clique.
pub(crate) const PAR_CELLS: usize = 1 << 15;

/// `dst += parts[0] + parts[1] + …`, cell by cell, in that order (the task copies of
/// [`RunMap::scatter_sum_with`]: the order fixes the bits).
fn add_in_order(dst: &mut [f64], parts: &[Vec<f64>]) {
    for copy in parts {
        for (d, &v) in dst.iter_mut().zip(copy) {
            *d += v;
        }
    }
}

/// `dst[map[r]] += Σ src[run r]` over the runs of `src` (length `run` each).
#[inline]
fn scatter_sum_runs(run: usize, map: &[u32], src: &[f64], dst: &mut [f64]) {
    if run == 1 {
        for (&x, &j) in src.iter().zip(map) {
            dst[j as usize] += x;
        }
    } else {
        for (block, &j) in src.chunks_exact(run).zip(map) {
            dst[j as usize] += block.iter().sum::<f64>();
        }
    }
}

/// `op(dst cell, src[map[r]])` for every cell of run `r` of `dst`.
#[inline]
fn gather_runs(run: usize, map: &[u32], src: &[f64], dst: &mut [f64], op: impl Fn(&mut f64, f64)) {
    if run == 1 {
        for (x, &j) in dst.iter_mut().zip(map) {
            op(x, src[j as usize]);
        }
    } else {
        for (block, &j) in dst.chunks_exact_mut(run).zip(map) {
            let v = src[j as usize];
            block.iter_mut().for_each(|x| op(x, v));
        }
    }
}

/// `f(i, dst[i])` for every cell, split over `par` in tasks of [`PAR_CELLS`] cells when
/// `dst` has at least two tasks' worth (`i` is the cell's index in `dst`); each cell is
/// written by one task, so the result does not depend on `par`.
pub(crate) fn elementwise(dst: &mut [f64], par: Parallelism, f: impl Fn(usize, &mut f64) + Sync) {
    if par == Parallelism::None || dst.len() < 2 * PAR_CELLS {
        dst.iter_mut().enumerate().for_each(|(i, x)| f(i, x));
        return;
    }
    dst.par_chunks_mut(PAR_CELLS)
        .enumerate()
        .for_each(|(t, chunk)| {
            let base = t * PAR_CELLS;
            chunk
                .iter_mut()
                .enumerate()
                .for_each(|(i, x)| f(base + i, x));
        });
}

/// The largest entry of `v` (−∞ for an empty slice), over `par` as [`elementwise`]; the
/// maximum is exact, so the result does not depend on `par`.
pub(crate) fn max_with(v: &[f64], par: Parallelism) -> f64 {
    if par == Parallelism::None || v.len() < 2 * PAR_CELLS {
        return v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    }
    v.par_chunks(PAR_CELLS)
        .map(|c| c.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        .reduce(|| f64::NEG_INFINITY, f64::max)
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

/// A table over a sorted attribute list, in the representation of a [`Semiring`]
/// (probabilities up to a common factor, or their logarithms).
#[derive(Clone, Debug)]
pub(crate) struct Factor {
    pub vars: Vec<usize>,
    pub table: Vec<f64>,
}

/// The arithmetic of sum-product elimination: how two entries multiply and how a run of
/// entries is summed.
pub(crate) trait Semiring: Sized {
    /// The neutral element of [`Self::mul`].
    const ONE: f64;
    /// The product of two entries.
    fn mul(a: f64, b: f64) -> f64;
    /// The sum of a run of entries.
    fn sum(run: &[f64]) -> f64;
    /// The product of `factors` as a table over `scope` (sorted), with `sum_out` (not in
    /// `scope`) summed out when given: [`combine`], or a faster equivalent.
    fn combine(
        factors: &[Cow<'_, Factor>],
        scope: &[usize],
        sum_out: Option<usize>,
        sizes: &[u32],
    ) -> Factor {
        combine::<Self>(factors, scope, sum_out, sizes)
    }
}

/// Probabilities: entries multiply and add as they are. No exponential or logarithm per
/// cell, so the fast choice; an entry below the smallest normal number (10⁻³⁰⁸ of the
/// factors' scale) may flush to zero.
pub(crate) struct Probability;

impl Semiring for Probability {
    const ONE: f64 = 1.0;
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn sum(run: &[f64]) -> f64 {
        run.iter().sum()
    }
    fn combine(
        factors: &[Cow<'_, Factor>],
        scope: &[usize],
        sum_out: Option<usize>,
        sizes: &[u32],
    ) -> Factor {
        combine_linear(factors, scope, sum_out, sizes)
    }
}

/// Logarithms of probabilities: entries add, runs are summed by [`log_sum_exp`]. Any
/// finite entry stays finite, so the robust choice for extreme models.
pub(crate) struct LogProbability;

impl Semiring for LogProbability {
    const ONE: f64 = 0.0;
    fn mul(a: f64, b: f64) -> f64 {
        a + b
    }
    fn sum(run: &[f64]) -> f64 {
        log_sum_exp(run)
    }
}

/// Exact sum-product variable elimination in the semiring `S`: the (unnormalised)
/// marginal on `keep` (sorted) of the product of `factors`, as a table over `keep`, with no
/// intermediate table above `limit` entries.
///
/// The other variables are eliminated greedily by smallest table created (the min-weight
/// rule of [`super::JunctionTree`]). The kept variables are never summed out, so every table
/// built while eliminating a neighbour of one carries it; when the planned order would build
/// a table above `limit`, the computation *conditions* on one variable `v`: for each value
/// `x` of `v` it restricts every factor to `v = x` and eliminates the rest (recursively,
/// conditioning again if needed). For a kept `v` the results are the slices `v = x` of the
/// table over `keep`; for a summed-out `v` (typically a separator variable that every large
/// table would carry) the table is their sum. Either is exact (one unnormalised function, so
/// the parts fit together with no rescaling). `v` is the variable with the least total work,
/// `|v|` times the entries the elimination after it visits, among those after which every
/// table fits. Errors with [`QueryError::TooLarge`] only when `keep` itself is above
/// `limit` (conditioning on every other variable always fits).
pub(crate) fn eliminate_within<S: Semiring>(
    factors: &[Cow<'_, Factor>],
    keep: &[usize],
    sizes: &[u32],
    limit: f64,
) -> Result<Factor> {
    let keep_cells: f64 = keep.iter().map(|&a| f64::from(sizes[a])).product();
    if keep_cells > limit {
        return Err(too_large(keep_cells, limit));
    }
    let scopes: Vec<Vec<usize>> = factors.iter().map(|f| f.vars.clone()).collect();
    let (widest, _, plan) = plan_elimination(scopes.clone(), keep, sizes);
    if widest <= limit {
        return Ok(run_elimination::<S>(factors.to_vec(), &plan, keep, sizes));
    }
    // Condition on the variable whose values, one elimination each, cost least in all
    // (|v| × that elimination's work), preferring one after which every table fits.
    let mut held: Vec<usize> = scopes.iter().flatten().copied().collect();
    held.sort_unstable();
    held.dedup();
    let mut best: Option<(bool, f64, usize)> = None;
    for &v in &held {
        let without: Vec<Vec<usize>> = scopes
            .iter()
            .map(|s| s.iter().copied().filter(|&a| a != v).collect())
            .collect();
        let rest: Vec<usize> = keep.iter().copied().filter(|&a| a != v).collect();
        let (w, ops, _) = plan_elimination(without, &rest, sizes);
        let key = (w > limit, f64::from(sizes[v]) * ops, v);
        if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
            best = Some(key);
        }
    }
    let Some((_, _, v)) = best else {
        return Err(too_large(widest, limit));
    };
    let restricted_to = |x: usize| -> Vec<Cow<'_, Factor>> {
        factors
            .iter()
            .map(|f| match f.vars.binary_search(&v) {
                Ok(q) => Cow::Owned(restrict(f, q, x, sizes)),
                Err(_) => Cow::Borrowed(&**f),
            })
            .collect()
    };
    // the values of `v` are independent eliminations, run over rayon's threads; each
    // slice lands in its own cells and the sums are added in the order of the values, so
    // the table does not depend on the number of threads
    let mut table = Vec::new();
    match keep.binary_search(&v) {
        // a kept variable: each value gives the slice v = x of the table over `keep`
        Ok(p) => {
            table = vec![0.0f64; cells(keep, sizes)];
            let rest: Vec<usize> = keep.iter().copied().filter(|&a| a != v).collect();
            let slot = index_map(&rest, keep, sizes);
            let v_stride = strides(keep, sizes)[p];
            let slices = (0..sizes[v] as usize)
                .into_par_iter()
                .map(|x| eliminate_within::<S>(&restricted_to(x), &rest, sizes, limit))
                .collect::<Result<Vec<_>>>()?;
            for (x, slice) in slices.iter().enumerate() {
                for (&j, &val) in slot.iter().zip(&slice.table) {
                    table[j as usize + x * v_stride] = val;
                }
            }
        }
        // a summed-out variable: the table over `keep` is the sum over its values (computed
        // a few values at a time, so that at most a few tables over `keep` are held)
        Err(_) => {
            let values = sizes[v] as usize;
            let batch = 2 * rayon::current_num_threads().max(1);
            for first in (0..values).step_by(batch) {
                let parts = (first..values.min(first + batch))
                    .into_par_iter()
                    .map(|x| eliminate_within::<S>(&restricted_to(x), keep, sizes, limit))
                    .collect::<Result<Vec<_>>>()?;
                for part in parts {
                    if table.is_empty() {
                        table = part.table;
                    } else {
                        for (t, &y) in table.iter_mut().zip(&part.table) {
                            *t = S::sum(&[*t, y]);
                        }
                    }
                }
            }
        }
    }
    Ok(Factor {
        vars: keep.to_vec(),
        table,
    })
}

/// The greedy elimination order of `scopes` down to `keep`: the widest table it builds, its
/// work (entries visited, Σ table × eliminated variable's size) and the plan, one
/// `(variable, scope of the table it leaves)` per step.
fn plan_elimination(
    mut scopes: Vec<Vec<usize>>,
    keep: &[usize],
    sizes: &[u32],
) -> (f64, f64, Vec<(usize, Vec<usize>)>) {
    let (mut widest, mut ops) = (0.0f64, 0.0f64);
    let mut plan = Vec::new();
    while let Some((w, v, scope)) = next_elimination(&scopes, keep, sizes) {
        widest = widest.max(w);
        ops += w;
        scopes.retain(|s| s.binary_search(&v).is_err());
        let out_scope: Vec<usize> = scope.into_iter().filter(|&a| a != v).collect();
        scopes.push(out_scope.clone());
        plan.push((v, out_scope));
    }
    ops += cells(keep, sizes) as f64;
    (widest, ops, plan)
}

/// The variable (not in `keep`) whose elimination creates the smallest table, with that
/// table's entries and its scope (the variable included), or `None` when only kept
/// variables are left.
fn next_elimination(
    scopes: &[Vec<usize>],
    keep: &[usize],
    sizes: &[u32],
) -> Option<(f64, usize, Vec<usize>)> {
    let mut vars: Vec<usize> = scopes.iter().flatten().copied().collect();
    vars.sort_unstable();
    vars.dedup();
    let mut best: Option<(f64, usize, Vec<usize>)> = None;
    for &v in vars.iter().filter(|v| keep.binary_search(v).is_err()) {
        let mut scope: Vec<usize> = scopes
            .iter()
            .filter(|s| s.binary_search(&v).is_ok())
            .flatten()
            .copied()
            .collect();
        scope.sort_unstable();
        scope.dedup();
        let w: f64 = scope.iter().map(|&a| f64::from(sizes[a])).product();
        if best.as_ref().is_none_or(|b| w < b.0) {
            best = Some((w, v, scope));
        }
    }
    best
}

/// Runs a planned elimination: for each `(v, out_scope)` in order, the factors holding `v`
/// are summed over it into one table over `out_scope` (the caller checked the sizes).
fn run_elimination<S: Semiring>(
    mut factors: Vec<Cow<'_, Factor>>,
    plan: &[(usize, Vec<usize>)],
    keep: &[usize],
    sizes: &[u32],
) -> Factor {
    for (v, out_scope) in plan {
        let (used, rest): (Vec<_>, Vec<_>) = factors
            .into_iter()
            .partition(|f| f.vars.binary_search(v).is_ok());
        factors = rest;
        factors.push(Cow::Owned(S::combine(&used, out_scope, Some(*v), sizes)));
    }
    S::combine(&factors, keep, None, sizes)
}

/// `f` restricted to `f.vars[q] = x`: a table over the other variables.
fn restrict(f: &Factor, q: usize, x: usize, sizes: &[u32]) -> Factor {
    let vars: Vec<usize> = f
        .vars
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != q)
        .map(|(_, &a)| a)
        .collect();
    let offset = x * strides(&f.vars, sizes)[q];
    let table = index_map(&vars, &f.vars, sizes)
        .into_iter()
        .map(|j| f.table[j as usize + offset])
        .collect();
    Factor { vars, table }
}

fn too_large(w: f64, limit: f64) -> QueryError {
    QueryError::TooLarge {
        what: "exact elimination for a marginal of the graphical model".into(),
        estimate: format!("a table of {w:.3e} entries (limit {limit:.0e})"),
    }
}

/// The product of `factors` as a table over `scope` (sorted), with `sum_out` (not in
/// `scope`) summed out when given, in the semiring `S`. No index map is built: an odometer over `scope` keeps
/// every factor's offset, and the summed-out variable is the innermost loop.
fn combine<S: Semiring>(
    factors: &[Cow<'_, Factor>],
    scope: &[usize],
    sum_out: Option<usize>,
    sizes: &[u32],
) -> Factor {
    let st: Vec<Vec<usize>> = factors
        .iter()
        .map(|f| strides_in(f, scope, sizes))
        .collect();
    let (inner, sv) = summed_run(factors, sum_out, sizes);
    let dims: Vec<usize> = scope.iter().map(|&a| sizes[a] as usize).collect();
    let every: Vec<usize> = (0..scope.len()).collect();
    let out_st = strides(scope, sizes);
    let mut table = vec![0.0f64; cells(scope, sizes)];
    let mut base = vec![0usize; factors.len()];
    let mut digit = vec![0usize; scope.len()];
    let mut at = 0usize;
    let mut run = vec![0.0f64; inner];
    for _ in 0..table.len() {
        for (x, r) in run.iter_mut().enumerate() {
            let mut p = S::ONE;
            for ((f, &b), &s) in factors.iter().zip(&base).zip(&sv) {
                p = S::mul(p, f.table[b + x * s]);
            }
            *r = p;
        }
        table[at] = S::sum(&run);
        next_row(&every, &dims, &out_st, &st, &mut digit, &mut base, &mut at);
    }
    Factor {
        vars: scope.to_vec(),
        table,
    }
}

/// [`combine`] in the [`Probability`] semiring, where a run's sum is a running sum: the
/// same products added in the same order (so the same result bit for bit), with the loop
/// bookkeeping paid once per run instead of once per cell. The run is over the summed-out
/// variable when it is at least as large as every attribute of `scope` (one accumulator per
/// output cell); otherwise over the largest attribute of `scope`, each product added into
/// its output cell (strided) for every value of the summed-out variable in turn.
fn combine_linear(
    factors: &[Cow<'_, Factor>],
    scope: &[usize],
    sum_out: Option<usize>,
    sizes: &[u32],
) -> Factor {
    let dims: Vec<usize> = scope.iter().map(|&a| sizes[a] as usize).collect();
    let out_st = strides(scope, sizes);
    let (inner, sv) = summed_run(factors, sum_out, sizes);
    let mut table = vec![0.0f64; cells(scope, sizes)];
    // the attribute of `scope` the run is over (none: the run is over the summed-out one)
    let widest = (0..scope.len()).max_by_key(|&q| (dims[q], q));
    let run_attr = widest.filter(|&q| dims[q] > inner || sum_out.is_none());
    // the odometer is over the other attributes of `scope`
    let outer: Vec<usize> = (0..scope.len()).filter(|&q| Some(q) != run_attr).collect();
    let outer_attrs: Vec<usize> = outer.iter().map(|&q| scope[q]).collect();
    let st: Vec<Vec<usize>> = factors
        .iter()
        .map(|f| strides_in(f, &outer_attrs, sizes))
        .collect();
    let mut base = vec![0usize; factors.len()];
    let mut digit = vec![0usize; outer.len()];
    let mut at = 0usize;
    let rows: usize = outer.iter().map(|&q| dims[q]).product();
    match run_attr {
        None => {
            for _ in 0..rows {
                let mut acc = 0.0;
                for x in 0..inner {
                    let mut p = 1.0;
                    for ((f, &b), &s) in factors.iter().zip(&base).zip(&sv) {
                        p *= f.table[b + x * s];
                    }
                    acc += p;
                }
                table[at] = acc;
                next_row(&outer, &dims, &out_st, &st, &mut digit, &mut base, &mut at);
            }
        }
        Some(r) => {
            let len = dims[r];
            let (ost, rst): (usize, Vec<usize>) = (
                out_st[r],
                factors
                    .iter()
                    .map(|f| strides_in(f, &scope[r..=r], sizes)[0])
                    .collect(),
            );
            let mut prod = vec![0.0f64; len];
            for _ in 0..rows {
                for x in 0..inner {
                    prod.fill(1.0);
                    for (((f, &b), &s), &t) in factors.iter().zip(&base).zip(&sv).zip(&rst) {
                        let start = b + x * s;
                        if t == 1 {
                            let src = &f.table[start..start + len];
                            prod.iter_mut().zip(src).for_each(|(p, &y)| *p *= y);
                        } else {
                            prod.iter_mut()
                                .enumerate()
                                .for_each(|(j, p)| *p *= f.table[start + j * t]);
                        }
                    }
                    if ost == 1 {
                        let dst = &mut table[at..at + len];
                        dst.iter_mut().zip(&prod).for_each(|(d, &p)| *d += p);
                    } else {
                        for (j, &p) in prod.iter().enumerate() {
                            table[at + j * ost] += p;
                        }
                    }
                }
                next_row(&outer, &dims, &out_st, &st, &mut digit, &mut base, &mut at);
            }
        }
    }
    Factor {
        vars: scope.to_vec(),
        table,
    }
}

/// The stride in `f`'s table of each attribute of `attrs`, 0 where `f` lacks it (the factor
/// is constant along that attribute).
fn strides_in(f: &Factor, attrs: &[usize], sizes: &[u32]) -> Vec<usize> {
    let own = strides(&f.vars, sizes);
    attrs
        .iter()
        .map(|a| f.vars.iter().position(|b| b == a).map_or(0, |p| own[p]))
        .collect()
}

/// The number of values of `sum_out` (1 without one) and its stride in each factor.
fn summed_run(
    factors: &[Cow<'_, Factor>],
    sum_out: Option<usize>,
    sizes: &[u32],
) -> (usize, Vec<usize>) {
    match sum_out {
        Some(v) => (
            sizes[v] as usize,
            factors
                .iter()
                .map(|f| strides_in(f, &[v], sizes)[0])
                .collect(),
        ),
        None => (1, vec![0; factors.len()]),
    }
}

/// One step of the elimination kernels' odometer over the `outer` positions of the scope
/// (last fastest): each factor's offset `base` (strides `st[factor][k]` for `outer[k]`) and
/// the output offset `at` follow the digits.
fn next_row(
    outer: &[usize],
    dims: &[usize],
    out_st: &[usize],
    st: &[Vec<usize>],
    digit: &mut [usize],
    base: &mut [usize],
    at: &mut usize,
) {
    let mut k = outer.len();
    while k > 0 {
        k -= 1;
        let q = outer[k];
        digit[k] += 1;
        *at += out_st[q];
        for (b, s) in base.iter_mut().zip(st) {
            *b += s[k];
        }
        if digit[k] < dims[q] {
            return;
        }
        *at -= out_st[q] * dims[q];
        for (b, s) in base.iter_mut().zip(st) {
            *b -= s[k] * dims[q];
        }
        digit[k] = 0;
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
            rm.gather_mul_with(&small, &mut b, Parallelism::None);
            for i in 0..48 {
                assert_eq!(a[i], src[i] + small[flat[i] as usize]);
                assert_eq!(b[i], src[i] * small[flat[i] as usize]);
            }
        }
    }

    /// The marginal on `keep` of the product of `factors` by enumerating every joint cell.
    fn brute_force(factors: &[Factor], keep: &[usize], sizes: &[u32]) -> Vec<f64> {
        let all: Vec<usize> = (0..sizes.len()).collect();
        let to_keep = index_map(&all, keep, sizes);
        let maps: Vec<Vec<u32>> = factors
            .iter()
            .map(|f| index_map(&all, &f.vars, sizes))
            .collect();
        let mut out = vec![0.0f64; cells(keep, sizes)];
        for (cell, &k) in to_keep.iter().enumerate() {
            let p: f64 = factors
                .iter()
                .zip(&maps)
                .map(|(f, m)| f.table[m[cell] as usize])
                .product();
            out[k as usize] += p;
        }
        out
    }

    /// The `_with` kernels on a table of 80 000 cells (more than two tasks) against the flat
    /// index map: exact on integer values (every partial sum is an integer below 2⁵³, so any
    /// order gives the same sum), and the same bits with `None` and `Rayon` on values whose
    /// sums round (a pool of three threads, so the tasks do run apart).
    #[test]
    fn parallel_kernels_agree_with_index_maps_and_with_each_other() {
        let sizes = [40u32, 50, 40];
        let outer = [0usize, 1, 2];
        let n = cells(&outer, &sizes);
        assert!(n >= 2 * PAR_CELLS);
        let ints: Vec<f64> = (0..n).map(|i| (i * 7919 % 1013) as f64).collect();
        let reals: Vec<f64> = (0..n)
            .map(|i| ((i as f64) * 0.618_033_988_7).sin())
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // [0] and [2]: runs of 2000 and of 1, small separators (the per-task copies);
        // [1, 2]: 2000 cells; all three: the copies would be too large (the plain loop)
        for inner in [vec![0usize], vec![2], vec![2, 1], vec![0, 1, 2]] {
            let flat = index_map(&outer, &inner, &sizes);
            let rm = RunMap::new(&outer, &inner, &sizes);
            let m = cells(&inner, &sizes);
            let mut want = vec![0.0; m];
            for (&x, &j) in ints.iter().zip(&flat) {
                want[j as usize] += x;
            }
            for par in [Parallelism::None, Parallelism::Rayon] {
                let mut got = vec![0.0; m];
                pool.install(|| rm.scatter_sum_with(&ints, &mut got, par));
                assert_eq!(got, want, "{inner:?} {par:?}");
            }
            let (mut seq, mut par) = (vec![0.5; m], vec![0.5; m]);
            rm.scatter_sum_with(&reals, &mut seq, Parallelism::None);
            pool.install(|| rm.scatter_sum_with(&reals, &mut par, Parallelism::Rayon));
            assert_eq!(
                seq.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                par.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{inner:?}"
            );
            // exponentiate-and-sum in one pass: the same bits, in `src` and `dst`, as the
            // two passes (both branches: the copies and the plain loop), with either `par`
            for par in [Parallelism::None, Parallelism::Rayon] {
                let (mut fused, mut two) = (reals.clone(), reals.clone());
                let (mut fd, mut td) = (vec![0.25; m], vec![0.25; m]);
                pool.install(|| {
                    rm.exp_scatter_sum_with(&mut fused, 0.9, &mut fd, par);
                    elementwise(&mut two, par, |_, x| *x = super::super::exp::exp(*x - 0.9));
                    rm.scatter_sum_with(&two, &mut td, par);
                });
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&fused), bits(&two), "{inner:?} {par:?}");
                assert_eq!(bits(&fd), bits(&td), "{inner:?} {par:?}");
            }
            let small: Vec<f64> = (0..m).map(|i| 1.0 + (i % 17) as f64).collect();
            for par in [Parallelism::None, Parallelism::Rayon] {
                let (mut a, mut b) = (reals.clone(), reals.clone());
                pool.install(|| {
                    rm.gather_add_with(&small, &mut a, par);
                    rm.gather_mul_with(&small, &mut b, par);
                });
                for i in 0..n {
                    assert_eq!(a[i], reals[i] + small[flat[i] as usize]);
                    assert_eq!(b[i], reals[i] * small[flat[i] as usize]);
                }
            }
        }
        for par in [Parallelism::None, Parallelism::Rayon] {
            let mut v = reals.clone();
            pool.install(|| elementwise(&mut v, par, |i, x| *x = *x * 2.0 + i as f64));
            for i in 0..n {
                assert_eq!(v[i], reals[i] * 2.0 + i as f64);
            }
            let want = reals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(pool.install(|| max_with(&reals, par)), want);
        }
    }

    /// Reals in (0, e) with no pattern a misplaced index would keep.
    fn irregular(vars: &[usize], sizes: &[u32], seed: usize) -> Factor {
        Factor {
            vars: vars.to_vec(),
            table: (0..cells(vars, sizes))
                .map(|c| (((c * 7919 + seed * 104_729) as f64) * 0.618_033_988_7).sin() + 1.5)
                .collect(),
        }
    }

    /// The Probability kernel against the generic one (`combine::<Probability>`), bit for
    /// bit: both run orders (over the summed-out variable when it is the widest, otherwise
    /// over the widest attribute of the scope), that attribute last in the scope (contiguous
    /// output) or not, held by a factor at stride 1, at another stride or not at all, and
    /// no summed-out variable or an empty scope.
    #[test]
    fn linear_combine_matches_the_generic_one_bit_for_bit() {
        let sizes = [3u32, 7, 2, 5, 4, 9];
        // (the factors' scopes, the output scope, the summed-out variable)
        type Case<'a> = (&'a [&'a [usize]], &'a [usize], Option<usize>);
        let cases: [Case<'_>; 8] = [
            // widest scope attribute 1 (7) > |3| = 5: runs over 1, not last, stride ≠ 1
            (&[&[0, 1, 3], &[1, 2, 3], &[0, 2]], &[0, 1, 2], Some(3)),
            // run over 5 (9), last in the scope and in both factors (stride 1)
            (&[&[2, 5], &[0, 2, 5]], &[0, 5], Some(2)),
            // the summed-out 5 (9) is the widest: one accumulator per cell
            (&[&[0, 5], &[1, 5], &[0, 1]], &[0, 1], Some(5)),
            // a factor without the run attribute (stride 0, broadcast)
            (&[&[1, 4], &[0, 4], &[0]], &[0, 1], Some(4)),
            // no summed-out variable: the final product over `keep`
            (&[&[0, 1], &[1, 3], &[3]], &[0, 1, 3], None),
            // the empty scope: a total
            (&[&[2], &[2]], &[], Some(2)),
            // one factor, a plain marginalisation
            (&[&[0, 1, 3, 5]], &[1, 3, 5], Some(0)),
            // the run attribute first in a factor (its largest stride)
            (&[&[5, 1]], &[5], Some(1)),
        ];
        for (k, (scopes, scope, sum_out)) in cases.iter().enumerate() {
            let factors: Vec<Factor> = scopes
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let mut v = v.to_vec();
                    v.sort_unstable();
                    irregular(&v, &sizes, 10 * k + i)
                })
                .collect();
            let borrowed: Vec<Cow<'_, Factor>> = factors.iter().map(Cow::Borrowed).collect();
            let want = combine::<Probability>(&borrowed, scope, *sum_out, &sizes);
            let got = combine_linear(&borrowed, scope, *sum_out, &sizes);
            assert_eq!(got.vars, want.vars, "case {k}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.table), bits(&want.table), "case {k}");
            // and both are the brute-force marginal (a check on the generic kernel too),
            // which also sums over the variables no factor holds (a constant factor each)
            let unused: f64 = (0..sizes.len())
                .filter(|a| !factors.iter().any(|f| f.vars.contains(a)))
                .map(|a| f64::from(sizes[a]))
                .product();
            let brute = brute_force(&factors, scope, &sizes);
            for (g, w) in got.table.iter().zip(&brute) {
                let w = w / unused;
                assert!((g - w).abs() <= 1e-12 * w, "case {k}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn conditioned_elimination_is_exact() {
        // a cycle 0-1-2-3-4-0: the min-weight order for {0, 2} builds a 24-entry table
        // (eliminating 1 last, over {0, 1, 2}); limits 12 and 6 force conditioning, once or
        // twice, on kept or summed-out variables (the limit is never below the kept table);
        // each conditioned result is also the same, bit for bit, on one thread and on three
        let sizes = [3u32, 4, 2, 3, 2];
        let scopes: [&[usize]; 5] = [&[0, 1], &[1, 2], &[2, 3], &[3, 4], &[0, 4]];
        let factors: Vec<Factor> = scopes
            .iter()
            .enumerate()
            .map(|(i, vars)| Factor {
                vars: vars.to_vec(),
                // positive values spread over a factor e², and a zero in every factor
                // but the first
                table: (0..cells(vars, &sizes))
                    .map(|c| match (c * 7 + i * 3) % 11 {
                        0 if i > 0 => 0.0,
                        r => (r as f64 / 5.0 - 1.0).exp(),
                    })
                    .collect(),
            })
            .collect();
        let borrowed: Vec<Cow<'_, Factor>> = factors.iter().map(Cow::Borrowed).collect();
        let logs: Vec<Factor> = factors
            .iter()
            .map(|f| Factor {
                vars: f.vars.clone(),
                table: f.table.iter().map(|v| v.ln()).collect(),
            })
            .collect();
        let borrowed_logs: Vec<Cow<'_, Factor>> = logs.iter().map(Cow::Borrowed).collect();
        let cases: [(Vec<usize>, &[f64]); 4] = [
            (vec![0, 2], &[1e8, 12.0, 6.0]),
            (vec![3], &[1e8, 12.0, 4.0, 3.0]),
            (vec![1, 4], &[1e8, 12.0, 8.0]),
            (vec![0, 1, 2, 3, 4], &[1e8]),
        ];
        for (keep, limits) in cases {
            let want = brute_force(&factors, &keep, &sizes);
            assert!(
                want.contains(&0.0) || keep.len() < 5,
                "the zeros are exercised"
            );
            for &limit in limits {
                let got = eliminate_within::<Probability>(&borrowed, &keep, &sizes, limit).unwrap();
                // conditioning runs its values over rayon's threads: the same bits on one
                // thread and on three
                let bits_on = |threads: usize| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let t = pool
                        .install(|| {
                            eliminate_within::<Probability>(&borrowed, &keep, &sizes, limit)
                        })
                        .unwrap();
                    t.table.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                };
                assert_eq!(bits_on(1), bits_on(3), "{keep:?} {limit}");
                let got_log =
                    eliminate_within::<LogProbability>(&borrowed_logs, &keep, &sizes, limit)
                        .unwrap();
                for g in [&got, &got_log] {
                    assert_eq!(g.vars, keep);
                    assert_eq!(g.table.len(), want.len());
                }
                // a sum of at most 72 products of five factors each, in another order than
                // the brute force's: relative error far below 1e-12
                for ((g, l), w) in got.table.iter().zip(&got_log.table).zip(&want) {
                    assert!(
                        (g - w).abs() <= 1e-12 * w.abs(),
                        "{keep:?} {limit}: {g} vs {w}"
                    );
                    assert!(
                        (l.exp() - w).abs() <= 1e-12 * w.abs(),
                        "{keep:?} {limit}: log {l} vs {w}"
                    );
                }
            }
        }
        // summing the whole cycle out builds a 12-entry table at least: below that, the
        // total mass comes from conditioning on summed-out variables (limit 6: one, limit 2:
        // two or more)
        let want: f64 = brute_force(&factors, &[], &sizes)[0];
        for limit in [6.0, 2.0] {
            let got = eliminate_within::<Probability>(&borrowed, &[], &sizes, limit).unwrap();
            let log = eliminate_within::<LogProbability>(&borrowed_logs, &[], &sizes, limit);
            assert!((got.table[0] - want).abs() <= 1e-12 * want, "{limit}");
            assert!(
                (log.unwrap().table[0].exp() - want).abs() <= 1e-12 * want,
                "{limit}"
            );
        }
        // the kept table itself (12 entries) above the limit
        let err = eliminate_within::<Probability>(&borrowed, &[1, 3], &sizes, 6.0).unwrap_err();
        assert!(matches!(err, QueryError::TooLarge { .. }), "{err}");
    }
}
