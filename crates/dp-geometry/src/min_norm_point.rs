//! Projection onto a polytope `conv{a_0, …, a_{N−1}}` by Wolfe's minimum-norm-point
//! algorithm ([`crate::FrankWolfeVariant::MinNormPoint`]; P. Wolfe, "Finding the nearest
//! point in a polytope", Math. Programming 11 (1976) 128–149), a *fully corrective*
//! Frank–Wolfe method: after every oracle call the objective is minimized exactly over the
//! convex hull of the active atoms.
//!
//! In translated coordinates `q_i = a_i − y` the problem is the minimum `W`-norm point of
//! `conv{q_i}`. The algorithm keeps a *corral* `S` of affinely independent atoms with convex
//! weights `α > 0`, and the iterate `x = Σ_{i∈S} α_i a_i` (dense, recomputed from the
//! weights, never accumulated).
//!
//! * **Major cycle.** One oracle call `j = argmax_a ⟨W(y − x), a⟩`
//!   ([`AtomicBody::atom_scores`]); the Frank–Wolfe gap `2⟨W(y − x), a_j − x⟩` is the same
//!   certificate with the same relative stopping rule (`gap ≤ tol · f(v_0)`) as the other
//!   variants (see [`crate::frank_wolfe`]). Otherwise `j` joins the corral.
//! * **Minor cycles.** The affine minimizer of the corral, `β = argmin{‖Σ β_i q_i‖²_W :
//!   Σ β_i = 1}`, solves `(s·eeᵀ + QᵀWQ) μ = e`, `β = μ / Σμ` (for any `s > 0` the matrix is
//!   positive definite iff the corral is affinely independent; `s = f(v_0)` keeps its two
//!   terms on the same scale). If `β > 0` then `α ← β` and the major cycle ends; otherwise
//!   `α` moves towards `β` until the first weight hits 0
//!   (`θ = min_{β_i ≤ 0} α_i / (α_i − β_i)`), those atoms leave the corral, and the cycle
//!   repeats (at most `|S|` times).
//!
//! The Cholesky factor of `s·eeᵀ + QᵀWQ` is updated in `O(|S|²)` with faer's kernels: a new
//! atom appends a row (one forward substitution), a leaving atom deletes its row and column
//! and restores the triangle by one rank-one update of the trailing block (see
//! `CholeskyFactor`). The Gram row of a new atom `j` costs one dense `W(a_j − y)` plus
//! `|S|` calls of [`AtomicBody::atom_inner`] (`O(#tables)` each for marginal points). Every
//! [`CHECK_EVERY`]-th solve also computes its residual against the stored matrix and takes
//! one step of iterative refinement; the factor is recomputed from that matrix when the
//! residual is large and after `max(REFACTOR_EVERY, 4|S|)` updates (so the `O(|S|³)`
//! refactorization costs `O(|S|²)` per update, like the updates themselves).
//!
//! Exact arithmetic never adds an atom twice or an affinely dependent one (the new atom is
//! strictly on the far side of the hyperplane through `x` orthogonal to `x − y`). In floating
//! point either can happen once the gap is at the round-off floor: the solve then stops
//! with [`SolveStatus::Stalled`], and the reported gap belongs to the returned point, as
//! always.

use std::collections::HashSet;

use crate::bodies::{AtomOracle, AtomicBody, EnumeratedAtoms, argmax};
use crate::error::{GeometryError, Result, check_dim, check_finite};
use crate::frank_wolfe::{FrankWolfeResult, FrankWolfeSettings, SolveStatus, wdist};
use crate::points::dot;
use faer::diag::DiagMut;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    LltRegularization, cholesky_in_place, cholesky_in_place_scratch,
};
use faer::linalg::cholesky::llt::update::rank_r_update_clobber;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Mat, MatMut, MatRef, Par};

/// Least number of factor updates (appended or deleted atoms) between recomputations of the
/// Cholesky factor from the stored matrix (the actual interval is `max(REFACTOR_EVERY, 4k)`
/// for a corral of `k` atoms).
pub const REFACTOR_EVERY: usize = 1024;

/// Solves between residual checks (each check is one more matrix–vector product and solve).
pub const CHECK_EVERY: usize = 8;

/// An atom is refused as affinely dependent on the corral when its pivot² in the Cholesky
/// factor is at most this fraction of its diagonal entry (`k·ε_mach` is the round-off level
/// of the pivot for a corral of `k ≤ ~4 000` atoms).
pub const PIVOT_TOLERANCE: f64 = 1e-12;

/// Residual `‖e − Aμ‖_∞` (the right side is all ones) above which the factor is recomputed.
const RESIDUAL_TOLERANCE: f64 = 1e-8;

/// A symmetric positive definite matrix `A` (lower triangle, row `i` holding `A[i][0..=i]`)
/// together with its Cholesky factor `L` (`A = LLᵀ`, positive diagonal), with `O(k²)`
/// appending of a row/column and deletion of one. It also keeps `z = L⁻¹e` (`e` all ones),
/// so that `A⁻¹e = L⁻ᵀz` costs one triangular solve.
///
/// The factor lives in a faer matrix (column-major, its leading `k × k` lower triangle; the
/// storage grows by doubling) and every kernel on it is faer's (issue #28): an appended row
/// is one forward substitution (`solve_lower_triangular_in_place`); deleting row and column
/// `r` leaves the trailing block `L₂₂` with `L₂₂'L₂₂'ᵀ = L₂₂L₂₂ᵀ + wwᵀ` (`w` the deleted
/// column below the diagonal), one rank-one update (`llt::update::rank_r_update_clobber`,
/// the same reduction faer's own `LDLᵀ` row deletion makes); `z` is then recomputed by one
/// forward substitution; `A⁻¹e` is one backward substitution; a refactorization is faer's
/// blocked `cholesky_in_place`. faer has no `LLᵀ` row *insertion* (its `LDLᵀ` insertion
/// exists only as a scratch-size function in 0.24), hence the forward substitution.
/// Measured against the hand-written factor it replaced (rows as `Vec`s, Givens rotations
/// for deletion) on the nltcs all-3-way projection (`projection_nltcs_all3way/
/// min_norm_point_to_1e-6`, 2026-11-27): 1.21 s and 1.31 s with faer, 1.27 s and 1.33 s
/// before — the same within the noise, since the oracle calls dominate; kept for faer's
/// tested kernels (docs/benchmarks.md, "Linear algebra through faer"). The factor is pinned
/// by reconstruction tests (`LLᵀ = A` after every append, deletion and refactor, and equal
/// to a from-scratch factor, below).
#[derive(Clone, Debug)]
pub(crate) struct CholeskyFactor {
    /// `A`, lower triangle by rows.
    a: Vec<Vec<f64>>,
    /// Storage whose leading `k × k` lower triangle is `L` (strict upper part zero).
    l: Mat<f64>,
    /// `L⁻¹e`.
    z: Vec<f64>,
    /// The last refactorization failed: solves report an infinite residual.
    broken: bool,
}

impl Default for CholeskyFactor {
    fn default() -> Self {
        Self {
            a: Vec::new(),
            l: Mat::new(),
            z: Vec::new(),
            broken: false,
        }
    }
}

impl CholeskyFactor {
    /// The order `k` of the matrix.
    pub(crate) fn len(&self) -> usize {
        self.a.len()
    }

    /// `L` (the leading `k × k` block of the storage; only its lower triangle is read).
    fn factor_ref(&self) -> MatRef<'_, f64> {
        let k = self.len();
        self.l.as_ref().submatrix(0, 0, k, k)
    }

    /// The factor `L` (row `i` has `i + 1` entries).
    #[cfg(test)]
    pub(crate) fn factor(&self) -> Vec<Vec<f64>> {
        let l = self.factor_ref();
        (0..self.len())
            .map(|i| (0..=i).map(|j| l[(i, j)]).collect())
            .collect()
    }

    /// The stored matrix `A` (lower triangle, row `i` has `i + 1` entries).
    #[cfg(test)]
    pub(crate) fn matrix(&self) -> &[Vec<f64>] {
        &self.a
    }

    /// Storage for a factor of order at least `order`, keeping the current `k × k` block.
    fn reserve(&mut self, order: usize) {
        if self.l.nrows() >= order {
            return;
        }
        let k = self.len();
        let cap = order.max(2 * self.l.nrows()).max(16);
        let mut grown = Mat::<f64>::zeros(cap, cap);
        grown
            .as_mut()
            .submatrix_mut(0, 0, k, k)
            .copy_from_triangular_lower(self.factor_ref());
        self.l = grown;
    }

    /// Appends the row `row = (A[k][0], …, A[k][k])`. Returns `false` and changes nothing
    /// when the new pivot² is not above `rel_tol · A[k][k]` (numerically singular).
    pub(crate) fn push(&mut self, row: Vec<f64>, rel_tol: f64) -> bool {
        let k = self.len();
        debug_assert_eq!(row.len(), k + 1);
        // the new row of L solves L·l = A[k][0..k]
        let mut l_row = row[..k].to_vec();
        solve_lower_triangular_in_place(
            self.factor_ref(),
            MatMut::from_column_major_slice_mut(&mut l_row, k, 1),
            Par::Seq,
        );
        let pivot2 = row[k] - dot(&l_row, &l_row);
        if !(pivot2 > rel_tol * row[k] && pivot2.is_finite()) {
            return false;
        }
        let pivot = pivot2.sqrt();
        self.reserve(k + 1);
        for (j, &v) in l_row.iter().enumerate() {
            self.l[(k, j)] = v;
        }
        self.l[(k, k)] = pivot;
        // the first k entries of L⁻¹e do not change
        self.z.push((1.0 - dot(&l_row, &self.z)) / pivot);
        self.a.push(row);
        true
    }

    /// Deletes row and column `r` of `A` and updates `L` by one rank-one update of its
    /// trailing block.
    pub(crate) fn remove(&mut self, r: usize) {
        let k = self.len();
        debug_assert!(r < k);
        self.a.remove(r);
        for row in self.a.iter_mut().skip(r) {
            row.remove(r);
        }
        // w = L[r+1.., r]; then L without row and column r: rows below r move up one,
        // columns right of r move left one (column-major: read before written)
        let mut w: Vec<f64> = (r + 1..k).map(|i| self.l[(i, r)]).collect();
        for j in 0..r {
            for i in r..k - 1 {
                self.l[(i, j)] = self.l[(i + 1, j)];
            }
        }
        for j in r..k - 1 {
            for i in j..k - 1 {
                self.l[(i, j)] = self.l[(i + 1, j + 1)];
            }
        }
        for j in 0..k {
            self.l[(k - 1, j)] = 0.0;
        }
        let t = k - 1 - r;
        let mut alpha = [1.0];
        let updated = rank_r_update_clobber(
            self.l.as_mut().submatrix_mut(r, r, t, t),
            MatMut::from_column_major_slice_mut(&mut w, t, 1),
            DiagMut::from_slice_mut(&mut alpha),
        );
        if updated.is_err() {
            // only a non-finite entry can make a positive update fail
            self.broken = !self.refactor(0.0);
            return;
        }
        self.recompute_z();
    }

    /// `z = L⁻¹e` by one forward substitution.
    fn recompute_z(&mut self) {
        let k = self.len();
        let mut z = std::mem::take(&mut self.z);
        z.clear();
        z.resize(k, 1.0);
        solve_lower_triangular_in_place(
            self.factor_ref(),
            MatMut::from_column_major_slice_mut(&mut z, k, 1),
            Par::Seq,
        );
        self.z = z;
    }

    /// Recomputes `L` from the stored `A` (faer's Cholesky); `false` (factor unusable) if
    /// `A` is not numerically positive definite or a pivot² is not above
    /// `rel_tol · A[i][i]`.
    pub(crate) fn refactor(&mut self, rel_tol: f64) -> bool {
        let k = self.len();
        self.reserve(k);
        let mut l = self.l.as_mut().submatrix_mut(0, 0, k, k);
        for (i, row) in self.a.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                l[(i, j)] = v;
            }
        }
        let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(
            k,
            Par::Seq,
            Default::default(),
        ));
        let factored = cholesky_in_place(
            l.as_mut(),
            LltRegularization::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        );
        // faer may use the strict upper triangle as workspace: clear it
        for j in 1..k {
            for i in 0..j {
                l[(i, j)] = 0.0;
            }
        }
        let ok = factored.is_ok()
            && (0..k).all(|i| {
                let p = l[(i, i)];
                p.is_finite() && p > 0.0 && p * p > rel_tol * self.a[i][i]
            });
        self.broken = !ok;
        self.recompute_z();
        ok
    }

    /// `x ← L⁻¹x`.
    fn forward_in_place(&self, x: &mut [f64]) {
        let k = self.len();
        solve_lower_triangular_in_place(
            self.factor_ref(),
            MatMut::from_column_major_slice_mut(x, k, 1),
            Par::Seq,
        );
    }

    /// `x ← L⁻ᵀx`.
    fn backward_in_place(&self, x: &mut [f64]) {
        let k = self.len();
        solve_upper_triangular_in_place(
            self.factor_ref().transpose(),
            MatMut::from_column_major_slice_mut(x, k, 1),
            Par::Seq,
        );
    }

    /// Solves `A x = b` in place with the factor.
    fn solve_in_place(&self, x: &mut [f64]) {
        self.forward_in_place(x);
        self.backward_in_place(x);
    }

    /// `out = A x` from the stored lower triangle.
    fn mul(&self, x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (i, row) in self.a.iter().enumerate() {
            let mut acc = row[i] * x[i];
            for (j, &aij) in row[..i].iter().enumerate() {
                acc += aij * x[j];
                out[j] += aij * x[i];
            }
            out[i] += acc;
        }
    }

    /// Solves `A μ = e` (all ones); with `check`, also takes one step of iterative
    /// refinement and returns the residual `‖e − Aμ‖_∞` of the unrefined solve (else 0;
    /// `∞` whenever the factor is unusable, so that the caller refactors or stops).
    pub(crate) fn solve_ones(&self, check: bool) -> (Vec<f64>, f64) {
        let k = self.len();
        let mut mu = self.z.clone();
        self.backward_in_place(&mut mu);
        if self.broken {
            return (mu, f64::INFINITY);
        }
        if !check {
            return (mu, 0.0);
        }
        let mut r = vec![0.0; k];
        self.mul(&mu, &mut r);
        let mut worst: f64 = 0.0;
        for ri in &mut r {
            *ri = 1.0 - *ri;
            worst = worst.max(ri.abs());
        }
        self.solve_in_place(&mut r);
        for (m, d) in mu.iter_mut().zip(&r) {
            *m += d;
        }
        (mu, if worst.is_nan() { f64::INFINITY } else { worst })
    }
}

/// The corral: atoms, their convex weights and the factored matrix `s·eeᵀ + QᵀWQ`.
struct Corral {
    atoms: Vec<usize>,
    alpha: Vec<f64>,
    member: HashSet<usize>,
    sparse: Vec<Option<SparseAtom>>,
    cached: usize,
    chol: CholeskyFactor,
    updates: usize,
    solves: usize,
}

/// The non-zero coordinates of an atom (kept for the corral's atoms when sparse).
struct SparseAtom {
    idx: Vec<usize>,
    val: Vec<f64>,
}

impl SparseAtom {
    /// The non-zeros of `p` if there are at most `dim / 2` of them.
    fn of(p: &[f64]) -> Option<Self> {
        let nnz = p.iter().filter(|v| **v != 0.0).count();
        if 2 * nnz > p.len() {
            return None;
        }
        let (idx, val) = p
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(k, &v)| (k, v))
            .unzip();
        Some(Self { idx, val })
    }
}

/// Entries of sparse corral atoms kept in memory at most (16 bytes each); atoms beyond the
/// budget, or with more than `dim / 2` non-zeros, go through the body's own kernels.
pub const MAX_CACHED_ENTRIES: usize = 1 << 22;

impl Corral {
    fn push(&mut self, atom: usize, sparse: Option<SparseAtom>) {
        self.member.insert(atom);
        self.atoms.push(atom);
        self.alpha.push(0.0);
        let sparse = sparse.filter(|sp| self.cached + sp.idx.len() <= MAX_CACHED_ENTRIES);
        self.cached += sparse.as_ref().map_or(0, |sp| sp.idx.len());
        self.sparse.push(sparse);
    }

    fn remove(&mut self, pos: usize) {
        self.member.remove(&self.atoms[pos]);
        self.atoms.remove(pos);
        self.alpha.remove(pos);
        if let Some(sp) = self.sparse.remove(pos) {
            self.cached -= sp.idx.len();
        }
        self.chol.remove(pos);
        self.updates += 1;
    }

    /// `⟨c, a⟩` for the corral's atom at `pos`.
    fn inner<B: AtomOracle + ?Sized>(&self, body: &B, pos: usize, c: &[f64]) -> f64 {
        match &self.sparse[pos] {
            Some(sp) => sp.idx.iter().zip(&sp.val).map(|(&k, v)| v * c[k]).sum(),
            None => body.atom_inner(self.atoms[pos], c),
        }
    }

    /// `x = Σ α_i a_i`.
    fn point<B: AtomOracle + ?Sized>(&self, body: &B, x: &mut [f64]) {
        x.fill(0.0);
        for (pos, (&a, &al)) in self.atoms.iter().zip(&self.alpha).enumerate() {
            match &self.sparse[pos] {
                Some(sp) => {
                    for (&k, v) in sp.idx.iter().zip(&sp.val) {
                        x[k] += al * v;
                    }
                }
                None => body.add_atom_scaled(a, al, x),
            }
        }
    }
}

/// The solver behind [`crate::frank_wolfe_project_atoms`] with
/// [`crate::FrankWolfeVariant::MinNormPoint`]; `w` are the validated norm weights and `y`
/// the validated target. `iterations` counts major cycles (atoms added), `oracle_calls` the
/// calls of `atom_scores`.
pub(crate) fn min_norm_point_project_atoms<B: AtomicBody + ?Sized>(
    body: &B,
    y: &[f64],
    w: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    let mut oracle = EnumeratedAtoms::new(body)?;
    min_norm_point_core(&mut oracle, y, w, settings)
}

/// Wolfe's minimum-norm-point projection of `y` onto `conv` of the atoms an [`AtomOracle`]
/// generates — the same algorithm, stopping rule and result as
/// [`crate::FrankWolfeVariant::MinNormPoint`] on an [`AtomicBody`], for polytopes whose atoms
/// cannot be listed (one oracle call per major cycle; the corral holds the atoms' ids).
///
/// With a heuristic oracle ([`crate::AtomChoice::exact`] false on the last call) the
/// reported gap is the gap towards the best atom *found*, not a certificate:
/// [`FrankWolfeResult::gap_certified`] says which. The projection is then approximate in a
/// way the gap cannot bound (the iterate is still a point of the polytope).
pub fn min_norm_point_project_generated<G: AtomOracle + ?Sized>(
    oracle: &mut G,
    y: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    let dim = oracle.dim();
    let w = settings.check_for_dim(dim)?;
    check_dim("target y", dim, y.len())?;
    check_finite(y, "target y")?;
    min_norm_point_core(oracle, y, &w, settings)
}

fn min_norm_point_core<G: AtomOracle + ?Sized>(
    body: &mut G,
    y: &[f64],
    w: &[f64],
    settings: &FrankWolfeSettings,
) -> Result<FrankWolfeResult> {
    let dim = body.dim();
    let par = settings.parallelism;
    let mut c: Vec<f64> = y.iter().zip(w).map(|(yk, wk)| wk * yk).collect();
    check_finite(&c, "weighted target W·y")?;
    let first = body.best_atom(&c, par)?;
    let start = first.atom;
    let mut x = vec![0.0; dim];
    body.add_atom_scaled(start, 1.0, &mut x);
    let f0 = wdist(&x, y, w);
    let mut certified: bool;
    let mut oracle_calls = 1;
    let threshold = settings.relative_gap_tolerance * f0;
    // weight of the eeᵀ term: any s > 0 gives the same β; f(v_0) = ‖q_start‖²_W is on the
    // scale of the Gram entries
    let s = if f0 > 0.0 { f0 } else { 1.0 };
    let mut q = vec![0.0; dim];
    let mut wq = vec![0.0; dim];
    // Row of s·eeᵀ + QᵀWQ for atom j against the corral, diagonal last, and the atom's
    // non-zeros if it is sparse.
    let gram_row = |body: &G, corral: &Corral, q: &mut Vec<f64>, wq: &mut Vec<f64>, j: usize| {
        q.fill(0.0);
        body.add_atom_scaled(j, 1.0, q);
        let sparse = SparseAtom::of(q);
        for k in 0..dim {
            q[k] -= y[k];
            wq[k] = w[k] * q[k];
        }
        let y_wq = dot(y, wq);
        let mut row: Vec<f64> = (0..corral.atoms.len())
            .map(|pos| s + (corral.inner(body, pos, wq) - y_wq))
            .collect();
        row.push(s + dot(q, wq));
        (row, sparse)
    };

    let mut corral = Corral {
        atoms: Vec::new(),
        alpha: Vec::new(),
        member: HashSet::new(),
        sparse: Vec::new(),
        cached: 0,
        chol: CholeskyFactor::default(),
        updates: 0,
        solves: 0,
    };
    let (row, sparse) = gram_row(body, &corral, &mut q, &mut wq, start);
    if !corral.chol.push(row, 0.0) {
        return Err(GeometryError::Oracle(
            "non-finite atom coordinates (overflow?)".into(),
        ));
    }
    corral.push(start, sparse);
    corral.alpha[0] = 1.0;

    let mut iterations = 0;
    let mut gap;
    let status = 'major: loop {
        settings.report_iterations(iterations);
        corral.point(body, &mut x);
        for k in 0..dim {
            c[k] = w[k] * (y[k] - x[k]);
        }
        let choice = body.best_atom(&c, par)?;
        oracle_calls += 1;
        certified = choice.exact;
        let j = choice.atom;
        let g = 2.0 * (choice.score - dot(&c, &x));
        if !g.is_finite() {
            return Err(GeometryError::Oracle(
                "non-finite atom scores (overflow?)".into(),
            ));
        }
        gap = g.max(0.0);
        if f0 == 0.0 || gap <= threshold {
            break SolveStatus::Converged;
        }
        if iterations >= settings.max_iterations {
            break SolveStatus::MaxIterations;
        }
        // j in the corral: x is already the minimizer over the corral's hull, so a positive
        // gap towards one of its atoms is round-off
        if corral.member.contains(&j) {
            break SolveStatus::Stalled;
        }
        let (row, sparse) = gram_row(body, &corral, &mut q, &mut wq, j);
        if !corral.chol.push(row.clone(), PIVOT_TOLERANCE) {
            // numerically affinely dependent: retry once on a fresh factor
            if !(corral.chol.refactor(0.0) && corral.chol.push(row, PIVOT_TOLERANCE)) {
                break SolveStatus::Stalled;
            }
        }
        corral.updates += 1;
        corral.push(j, sparse);
        iterations += 1;

        // Minor cycles.
        let mut first = true;
        loop {
            if corral.updates >= REFACTOR_EVERY.max(4 * corral.atoms.len()) {
                if !corral.chol.refactor(0.0) {
                    break 'major SolveStatus::Stalled;
                }
                corral.updates = 0;
            }
            let check = corral.solves.is_multiple_of(CHECK_EVERY);
            corral.solves += 1;
            let (mut mu, residual) = corral.chol.solve_ones(check);
            if residual > RESIDUAL_TOLERANCE {
                if !corral.chol.refactor(0.0) {
                    break 'major SolveStatus::Stalled;
                }
                corral.updates = 0;
                mu = corral.chol.solve_ones(true).0;
            }
            let total: f64 = mu.iter().sum();
            if !(total.is_finite() && total > 0.0) {
                break 'major SolveStatus::Stalled;
            }
            let beta: Vec<f64> = mu.iter().map(|m| m / total).collect();
            if beta.iter().all(|&b| b > 0.0) {
                corral.alpha = beta;
                break;
            }
            // Move α towards β until the first weight reaches 0.
            let mut theta = f64::INFINITY;
            let mut hit = 0;
            for (i, (&al, &be)) in corral.alpha.iter().zip(&beta).enumerate() {
                if be <= 0.0 {
                    // α_i = β_i = 0 (a new atom with no weight yet): it leaves at θ = 0
                    let t = if al - be > 0.0 { al / (al - be) } else { 0.0 };
                    if t < theta {
                        theta = t;
                        hit = i;
                    }
                }
            }
            let newest = corral.atoms.len() - 1;
            if first && hit == newest && theta <= 0.0 {
                // the new atom would leave at once: no progress possible in floating point
                corral.remove(newest);
                break 'major SolveStatus::Stalled;
            }
            first = false;
            let mut moved: Vec<f64> = corral
                .alpha
                .iter()
                .zip(&beta)
                .map(|(&al, &be)| (al + theta * (be - al)).max(0.0))
                .collect();
            moved[hit] = 0.0;
            // (the heaviest atom always stays, so the corral never empties by round-off)
            let keep = argmax(&moved).unwrap_or(0);
            let sum: f64 = moved.iter().sum();
            if !(theta.is_finite() && sum.is_finite() && sum > 0.0) || keep == hit {
                // round-off broke the step: keep the last convex weights
                break 'major SolveStatus::Stalled;
            }
            moved.iter_mut().for_each(|a| *a /= sum);
            corral.alpha = moved;
            for pos in (0..corral.atoms.len()).rev() {
                if corral.alpha[pos] <= 0.0 && pos != keep {
                    corral.remove(pos);
                }
            }
        }
    };
    if status == SolveStatus::Stalled {
        // the weights may have moved since the last gap: certify the returned point
        corral.point(body, &mut x);
        for k in 0..dim {
            c[k] = w[k] * (y[k] - x[k]);
        }
        let choice = body.best_atom(&c, par)?;
        oracle_calls += 1;
        certified = choice.exact;
        gap = (2.0 * (choice.score - dot(&c, &x))).max(0.0);
    }
    let mut atoms: Vec<(usize, f64)> = corral
        .atoms
        .iter()
        .copied()
        .zip(corral.alpha.iter().copied())
        .filter(|&(_, a)| a > 0.0)
        .collect();
    atoms.sort_by_key(|&(a, _)| a);
    settings.report_iterations(settings.max_iterations);
    Ok(FrankWolfeResult {
        objective: wdist(&x, y, w),
        point: x,
        atoms,
        gap,
        iterations,
        oracle_calls,
        status,
        gap_certified: certified,
    })
}

#[cfg(test)]
mod tests {
    use super::CholeskyFactor;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// A random SPD matrix `BBᵀ + I` of order `k` (full, row-major).
    fn random_spd(rng: &mut ChaCha20Rng, k: usize) -> Vec<Vec<f64>> {
        let b: Vec<Vec<f64>> = (0..k)
            .map(|_| (0..k).map(|_| rng.random_range(-1.0..1.0)).collect())
            .collect();
        (0..k)
            .map(|i| {
                (0..k)
                    .map(|j| {
                        let bb: f64 = (0..k).map(|t| b[i][t] * b[j][t]).sum();
                        bb + if i == j { 1.0 } else { 0.0 }
                    })
                    .collect()
            })
            .collect()
    }

    fn lower(full: &[Vec<f64>]) -> Vec<Vec<f64>> {
        full.iter()
            .enumerate()
            .map(|(i, r)| r[..=i].to_vec())
            .collect()
    }

    /// max |(LLᵀ)_{ij} − A_{ij}| over the lower triangle, and that L is lower triangular
    /// with a positive diagonal.
    fn reconstruction_error(f: &CholeskyFactor, full: &[Vec<f64>]) -> f64 {
        let l = f.factor();
        assert_eq!(l.len(), full.len());
        let mut worst: f64 = 0.0;
        for i in 0..l.len() {
            assert_eq!(l[i].len(), i + 1);
            assert!(l[i][i] > 0.0);
            for j in 0..=i {
                let llt: f64 = (0..=j).map(|t| l[i][t] * l[j][t]).sum();
                worst = worst.max((llt - full[i][j]).abs());
            }
        }
        worst
    }

    /// Reference Cholesky factor (textbook row-by-row, from scratch).
    fn reference_cholesky(full: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let k = full.len();
        let mut l = vec![vec![0.0; k]; k];
        for i in 0..k {
            for j in 0..=i {
                let s: f64 = (0..j).map(|t| l[i][t] * l[j][t]).sum();
                if i == j {
                    l[i][i] = (full[i][i] - s).sqrt();
                } else {
                    l[i][j] = (full[i][j] - s) / l[j][j];
                }
            }
        }
        l
    }

    /// max |L_{ij} − L_ref_{ij}| over the lower triangle.
    fn factor_difference(f: &CholeskyFactor, l_ref: &[Vec<f64>]) -> f64 {
        f.factor()
            .iter()
            .zip(l_ref)
            .flat_map(|(row, ref_row)| row.iter().zip(ref_row).map(|(a, b)| (a - b).abs()))
            .fold(0.0, f64::max)
    }

    #[test]
    fn append_and_delete_match_a_fresh_factorisation() {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        // up to 64: a corral of the size the projections reach, many SIMD blocks per column
        for k in [1usize, 2, 5, 12, 64] {
            let full = random_spd(&mut rng, k);
            let mut f = CholeskyFactor::default();
            for row in lower(&full) {
                assert!(f.push(row, 1e-12));
            }
            assert!(reconstruction_error(&f, &full) < 1e-12 * k as f64);
            // the factor is unique: equal to the from-scratch one
            assert!(factor_difference(&f, &reference_cholesky(&full)) < 1e-10);
            // delete rows/columns one by one at random positions
            let mut current = full.clone();
            while current.len() > 1 {
                let r = rng.random_range(0..current.len());
                f.remove(r);
                current.remove(r);
                for row in &mut current {
                    row.remove(r);
                }
                assert_eq!(f.matrix(), lower(&current).as_slice());
                assert!(reconstruction_error(&f, &current) < 1e-11 * k as f64);
                assert!(factor_difference(&f, &reference_cholesky(&current)) < 1e-9);
                // the maintained L⁻¹e gives A⁻¹e without a forward solve
                let (mu, _) = f.solve_ones(false);
                for row in &current {
                    let am: f64 = row.iter().zip(&mu).map(|(a, m)| a * m).sum();
                    assert!((am - 1.0).abs() < 1e-9);
                }
            }
        }
    }

    #[test]
    fn interleaved_updates_solve_and_refactor() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let big = random_spd(&mut rng, 14);
        // keep a list of which original indices are in, append/delete at random
        let mut idx: Vec<usize> = Vec::new();
        let mut f = CholeskyFactor::default();
        for step in 0..60 {
            let add = idx.len() < 2 || (idx.len() < big.len() && rng.random_range(0..3) > 0);
            if add {
                let next = (0..big.len()).find(|i| !idx.contains(i)).unwrap();
                let mut row: Vec<f64> = idx.iter().map(|&i| big[next][i]).collect();
                row.push(big[next][next]);
                assert!(f.push(row, 1e-12));
                idx.push(next);
            } else {
                let r = rng.random_range(0..idx.len());
                idx.remove(r);
                f.remove(r);
            }
            let sub: Vec<Vec<f64>> = idx
                .iter()
                .map(|&i| idx.iter().map(|&j| big[i][j]).collect())
                .collect();
            assert!(reconstruction_error(&f, &sub) < 1e-10, "step {step}");
            // A μ = e
            let (mu, _) = f.solve_ones(step % 2 == 0);
            for row in &sub {
                let am: f64 = row.iter().zip(&mu).map(|(a, m)| a * m).sum();
                assert!((am - 1.0).abs() < 1e-10);
            }
            if step % 7 == 0 {
                assert!(f.refactor(0.0));
                assert!(reconstruction_error(&f, &sub) < 1e-10);
            }
        }
    }

    #[test]
    fn singular_rows_are_refused() {
        // A = [[1, 1], [1, 1]] is singular: the second row must be refused
        let mut f = CholeskyFactor::default();
        assert!(f.push(vec![1.0], 1e-12));
        assert!(!f.push(vec![1.0, 1.0], 1e-12));
        assert_eq!(f.len(), 1);
        assert!(!f.push(vec![1.0, f64::NAN], 1e-12));
        assert!(f.push(vec![1.0, 2.0], 1e-12));
        assert!((f.factor()[1][1] - 1.0).abs() < 1e-15);
    }
}
