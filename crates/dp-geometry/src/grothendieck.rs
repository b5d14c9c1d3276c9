//! The bipartite Grothendieck semidefinite program and its certified solution.
//!
//! Given a real `m × n` matrix `C` (rows `σ`, columns `τ`), the program is
//!
//! ```text
//!     SDP(C) = max Σ_{σ,τ} C_στ ⟨u_σ, v_τ⟩   over unit vectors u_σ, v_τ ∈ R^r,
//! ```
//!
//! the right-hand side of Grothendieck's inequality (Theorem 4.3 of Dwork, Nikolov and
//! Talwar 2014, "Efficient algorithms for privately releasing marginals via convex
//! relaxations", seed 000): for every sign assignment `x ∈ {±1}^m, y ∈ {±1}^n`,
//! `xᵀCy ≤ SDP(C) ≤ K_G · max_{x,y} xᵀCy` with Grothendieck's constant `K_G < 1.7823`
//! (Krivine 1979). It is the linear oracle of the relaxation `L` of seed 000 §4
//! (Lemma 4.2; see [`crate::relaxation`]).
//!
//! # Solver: the mixing method
//! A low-rank Burer–Monteiro factorization (Burer and Monteiro 2003) solved by exact block
//! coordinate ascent, the "mixing method" of Wang, Chang and Kolter (2017): with every
//! other vector fixed, the best unit `u_σ` is `g_σ/‖g_σ‖` where `g_σ = Σ_τ C_στ v_τ`
//! (and `v_τ = h_τ/‖h_τ‖`, `h_τ = Σ_σ C_στ u_σ`). One *cycle* updates every row vector,
//! then every column vector; the objective never decreases. After the column half of a
//! cycle the objective equals `Σ_τ ‖h_τ‖` exactly. The rank defaults to
//! `r = ⌈√(2N)⌉`, `N = m + n`, the rank at which Barvinok–Pataki guarantees an optimal
//! solution exists and Boumal, Voroninski and Bandeira (2016) show the non-convex problem
//! has no spurious second-order critical points for almost every cost. The start is
//! seeded (ChaCha20, [`GrothendieckSettings::seed`]): independent Gaussian vectors,
//! normalized. The solver stops when a cycle improves the objective by at most
//! [`GrothendieckSettings::relative_tolerance`] `· max(1, |value|)`
//! ([`GrothendieckStatus::Converged`]) or after [`GrothendieckSettings::max_cycles`]
//! ([`GrothendieckStatus::MaxCycles`], not an error).
//!
//! # Certified upper bound (duality)
//! Stack the vectors as the columns of `W = [u_1 … u_m v_1 … v_n]`; `X = WᵀW` is PSD with
//! unit diagonal and the objective is `⟨Ĉ, X⟩` with `Ĉ = [[0, C/2], [Cᵀ/2, 0]]`. For any
//! `y = (λ, μ) ∈ R^{m+n}` let the dual slack be
//!
//! ```text
//!     S(y) = diag(y) − Ĉ = [[diag(λ), −C/2], [−Cᵀ/2, diag(μ)]].
//! ```
//!
//! If `S(y) ⪰ ℓ·I`, then for every feasible `X`: `0 ≤ ⟨S(y) − ℓI, X⟩ = Σ y − ℓN − ⟨Ĉ, X⟩`,
//! so `SDP(C) ≤ Σ_σ λ_σ + Σ_τ μ_τ − N·ℓ` (weak duality with the dual shifted by `ℓ`; `ℓ` may
//! be negative). At a stationary point of the mixing method, `u_σ` is parallel to `g_σ`
//! and `S(y)W = 0` for `λ_σ = ‖g_σ‖/2`, `μ_τ = ‖h_τ‖/2` (the Lagrange multipliers of the
//! unit-norm constraints), and then `Σ y` equals the objective; so this candidate, built
//! from the final vectors, is used. A certified lower bound `ℓ` on `λ_min(S(y))` is computed
//! by [`CertificateMethod`]:
//!
//! - [`CertificateMethod::Cholesky`] (when `N ≤` [`GrothendieckSettings::dense_certificate_limit`]):
//!   faer's self-adjoint eigenvalue solver (Householder tridiagonalization, implicit QR)
//!   estimates `λ_min` as `e`. The estimate is never trusted: for a shift `s = e − margin`
//!   (margin `1e-7·(|e| + tr|S|/N)`, tenfold until it works, at most 12 tries) faer's
//!   Cholesky factorization (blocked `LLᵀ`, no regularization) is run on the computed
//!   `A = fl(S − s·I)`, and when every pivot is positive `ℓ = s − ρ(s)` with
//!   `ρ(s) = 8(N + 8)·u·Σ_i |S_ii − s|` (`u` the unit round-off), rounded down.
//!
//!   Why this is a bound: a Cholesky factorization that completes in floating point, for
//!   any order of evaluating its inner products (blocked or recursive, with or without
//!   fused multiply-adds, through conventional `O(N³)` matrix products — faer has no
//!   Strassen-like product), returns `R` with `RᵀR = A + ΔA`,
//!   `|ΔA| ≤ γ_{N+c}·|Rᵀ||R|`, `γ_k = ku/(1 − ku)` (Demmel 1989; Higham 2002, Theorem
//!   10.3), where the small constant `c ≤ 4` covers faer's triangular solves, which
//!   multiply by a reciprocal pivot (two roundings where a division has one). Then
//!   `‖ΔA‖₂ ≤ γ‖R‖²_F = γ·tr(A + ΔA)`, so `‖ΔA‖₂ ≤ γ/(1 − γ)·tr A`, and `A + ΔA = RᵀR ⪰ 0`
//!   gives `λ_min(A) ≥ −γ/(1 − γ)·tr A`. Forming `A` rounds each diagonal entry once:
//!   `A = S − s·I + D` with `|D_ii| ≤ u·|S_ii − s|`. Hence
//!   `λ_min(S) ≥ s − (γ/(1 − γ) + u)·Σ_i |S_ii − s|`, and `ρ(s)` is more than twice that
//!   for every `N` with `N·u < 10⁻³`. The allowance is taken on the trace of the *shifted*
//!   matrix: the shift itself adds to the pivots whose rounding it must cover. The outcome
//!   (succeeds or not) is a fact about the computed factorization only, so the bound holds
//!   whatever faer's kernels, block sizes or thread count. `O(N³)` time, `O(N²)` memory.
//! - [`CertificateMethod::Gershgorin`]: `ℓ = min_i (S_ii − Σ_{j≠i} |S_ij|)` (Gershgorin's
//!   circle theorem), `O(mn)`; valid for every `N` but usually far from tight. Used above
//!   the dense limit, and whenever it is better. With this method the bound is also capped
//!   by `Σ|C_στ|`, the dual point `y_i` = Gershgorin radius of row `i` (diagonally dominant,
//!   hence PSD slack) — the trivial bound.
//!
//! The solution reports the objective value, the bound and their gap; the exact `SDP(C)` lies
//! between value and bound.
//!
//! # Rounding
//! [`round_to_signs`] turns the vectors into signs by random hyperplanes (Goemans and
//! Williamson 1995; Krivine's analysis of Grothendieck's inequality uses the same step):
//! `x_σ = sign⟨u_σ, g⟩`, `y_τ = sign⟨v_τ, g⟩` for Gaussian `g`, each draw improved by
//! alternating best responses (`y = sign(Cᵀx)`, then `x = sign(Cy)`, until no change); the
//! best of the seeded draws is returned. Its value is a lower bound on `max xᵀCy ≤ SDP(C)`.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::{Mat, MatRef};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::error::{GeometryError, Result, check_finite};
use crate::gaussian::fill_standard_normal;
use crate::parallel::Parallelism;

/// Settings of [`solve_grothendieck`]; validated by [`GrothendieckSettings::check`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GrothendieckSettings {
    /// Rank `r` of the vectors; `None` = `⌈√(2N)⌉` (at least 1), `N` = rows + columns.
    pub rank: Option<usize>,
    /// Maximum number of cycles (≥ 1). Default 2000.
    pub max_cycles: usize,
    /// Stop when a cycle improves the objective by at most this times `max(1, |value|)`.
    /// Finite, ≥ 0. Default 1e-12.
    pub relative_tolerance: f64,
    /// Seed of the random start. Default 0.
    pub seed: u64,
    /// Largest `N` for which the dense (eigenvalues + Cholesky) certificate is computed; above
    /// it the Gershgorin bound is used. Default 2000.
    pub dense_certificate_limit: usize,
}

impl Default for GrothendieckSettings {
    fn default() -> Self {
        Self {
            rank: None,
            max_cycles: 2000,
            relative_tolerance: 1e-12,
            seed: 0,
            dense_certificate_limit: 2000,
        }
    }
}

impl GrothendieckSettings {
    /// Fails unless `max_cycles ≥ 1`, the tolerance is finite and non-negative and a given
    /// rank is at least 1.
    pub fn check(&self) -> Result<()> {
        if self.max_cycles == 0 {
            return Err(GeometryError::InvalidSettings(
                "the Grothendieck solver needs at least one cycle (max_cycles ≥ 1)".into(),
            ));
        }
        let tol = self.relative_tolerance;
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(GeometryError::InvalidSettings(format!(
                "the Grothendieck solver's relative tolerance must be a finite non-negative number, got {tol}"
            )));
        }
        if self.rank == Some(0) {
            return Err(GeometryError::InvalidSettings(
                "the rank of the Grothendieck solver's vectors must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The rank used for a problem with `n_vectors = rows + columns`.
    pub fn rank_for(&self, n_vectors: usize) -> usize {
        self.rank
            .unwrap_or_else(|| ((2.0 * n_vectors as f64).sqrt().ceil() as usize).max(1))
    }
}

/// Why [`solve_grothendieck`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GrothendieckStatus {
    /// A cycle improved the objective by less than the relative tolerance.
    Converged,
    /// The cycle cap was reached.
    MaxCycles,
}

/// How the lower bound on the dual slack's smallest eigenvalue was certified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CertificateMethod {
    /// faer's eigenvalue estimate, verified by faer's Cholesky factorization of the shifted
    /// slack with a rounding allowance (module docs).
    Cholesky,
    /// Gershgorin's circle theorem (module docs).
    Gershgorin,
}

/// The outcome of [`solve_grothendieck`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GrothendieckSolution {
    /// Number of rows `m`.
    pub rows: usize,
    /// Number of columns `n`.
    pub cols: usize,
    /// Rank `r` of the vectors.
    pub rank: usize,
    /// Row vectors `u_σ`, row-major (`rows × rank`), each of unit norm.
    pub u: Vec<f64>,
    /// Column vectors `v_τ`, row-major (`cols × rank`), each of unit norm.
    pub v: Vec<f64>,
    /// `Σ C_στ ⟨u_σ, v_τ⟩` of the returned vectors (a lower bound on `SDP(C)`).
    pub value: f64,
    /// A certified upper bound on `SDP(C)` (module docs).
    pub upper_bound: f64,
    /// `upper_bound − value ≥ 0`.
    pub gap: f64,
    /// The certified lower bound `ℓ` on the dual slack's smallest eigenvalue.
    pub slack_eigenvalue_bound: f64,
    /// How `ℓ` was certified.
    pub certificate: CertificateMethod,
    /// Cycles run.
    pub cycles: usize,
    /// Why the solver stopped.
    pub status: GrothendieckStatus,
}

impl GrothendieckSolution {
    /// The vector `u_σ`.
    pub fn row_vector(&self, sigma: usize) -> &[f64] {
        &self.u[sigma * self.rank..(sigma + 1) * self.rank]
    }
    /// The vector `v_τ`.
    pub fn col_vector(&self, tau: usize) -> &[f64] {
        &self.v[tau * self.rank..(tau + 1) * self.rank]
    }
    /// The `rows × cols` matrix of `⟨u_σ, v_τ⟩`, row-major: the point of the relaxation
    /// that attains [`Self::value`].
    pub fn gram_matrix(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.rows * self.cols);
        for s in 0..self.rows {
            let us = self.row_vector(s);
            for t in 0..self.cols {
                out.push(dot(us, self.col_vector(t)));
            }
        }
        out
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// Checks that `c` is a finite `rows × cols` matrix with `rows, cols ≥ 1`.
pub(crate) fn check_cost(c: &[f64], rows: usize, cols: usize) -> Result<()> {
    if rows == 0 || cols == 0 {
        return Err(GeometryError::Empty(
            "the Grothendieck problem needs at least one row and one column",
        ));
    }
    let len = rows
        .checked_mul(cols)
        .ok_or_else(|| GeometryError::InvalidParameter {
            name: "cost matrix",
            reason: format!("{rows} × {cols} entries do not fit in memory"),
        })?;
    if c.len() != len {
        return Err(GeometryError::DimensionMismatch {
            what: "Grothendieck cost matrix (rows × columns)",
            expected: len,
            found: c.len(),
        });
    }
    check_finite(c, "Grothendieck cost matrix")
}

/// Work (multiply-adds) below which the fields are computed on the calling thread even
/// under [`Parallelism::Rayon`].
const PARALLEL_FIELD_WORK: usize = 1 << 20;

/// Rows per rayon task in the parallel fields.
const FIELD_ROWS_PER_TASK: usize = 32;

/// `g_σ = Σ_τ C_στ v_τ` for the rows `first..first + out.len()/r`, into `out`.
fn row_fields_block(c: &[f64], first: usize, cols: usize, r: usize, v: &[f64], out: &mut [f64]) {
    out.iter_mut().for_each(|x| *x = 0.0);
    for (i, g) in out.chunks_exact_mut(r).enumerate() {
        let row = &c[(first + i) * cols..(first + i + 1) * cols];
        for (w, vt) in row.iter().zip(v.chunks_exact(r)) {
            if *w != 0.0 {
                for (gk, vk) in g.iter_mut().zip(vt) {
                    *gk += w * vk;
                }
            }
        }
    }
}

/// `g_σ = Σ_τ C_στ v_τ` for every row, into `out` (`rows × r`); rows split over the rayon
/// pool under [`Parallelism::Rayon`] (each row's sum in the same order: the result does not
/// depend on the thread count).
///
/// A matrix product `G = C·V` kept by hand, not faer's gemm (issue #28): the solver's
/// serial and rayon runs must agree bit for bit (`tests/grothendieck.rs`), which faer does
/// not promise across its `Par` settings, and the loop skips the zero entries of `C` — the
/// relaxation's cost is zero on every entry no measured parity reaches.
fn row_fields(
    c: &[f64],
    rows: usize,
    cols: usize,
    r: usize,
    v: &[f64],
    out: &mut [f64],
    par: Parallelism,
) {
    if par == Parallelism::Rayon && rows * cols * r >= PARALLEL_FIELD_WORK {
        use rayon::prelude::*;
        out.par_chunks_mut(FIELD_ROWS_PER_TASK * r)
            .enumerate()
            .for_each(|(task, block)| {
                row_fields_block(c, task * FIELD_ROWS_PER_TASK, cols, r, v, block)
            });
    } else {
        row_fields_block(c, 0, cols, r, v, &mut out[..rows * r]);
    }
}

/// `h_τ = Σ_σ C_στ u_σ` for every column, into `out` (`cols × r`). Under
/// [`Parallelism::Rayon`] the columns are split over the pool, each task reading its
/// columns of every row (the sum over σ in the same order: the result does not depend on the
/// thread count).
fn col_fields(
    c: &[f64],
    rows: usize,
    cols: usize,
    r: usize,
    u: &[f64],
    out: &mut [f64],
    par: Parallelism,
) {
    let block = |first: usize, out: &mut [f64]| {
        out.iter_mut().for_each(|x| *x = 0.0);
        let width = out.len() / r;
        for (s, us) in u.chunks_exact(r).enumerate().take(rows) {
            let row = &c[s * cols + first..s * cols + first + width];
            for (w, h) in row.iter().zip(out.chunks_exact_mut(r)) {
                if *w != 0.0 {
                    for (hk, uk) in h.iter_mut().zip(us) {
                        *hk += w * uk;
                    }
                }
            }
        }
    };
    if par == Parallelism::Rayon && rows * cols * r >= PARALLEL_FIELD_WORK {
        use rayon::prelude::*;
        out.par_chunks_mut(FIELD_ROWS_PER_TASK * r)
            .enumerate()
            .for_each(|(task, out)| block(task * FIELD_ROWS_PER_TASK, out));
    } else {
        block(0, &mut out[..cols * r]);
    }
}

/// Replaces every block of `x` by the normalized block of `field` (blocks with a zero field
/// are kept: any unit vector is optimal for them). Returns `Σ ‖field block‖`.
fn normalize_into(field: &[f64], r: usize, x: &mut [f64]) -> f64 {
    let mut total = 0.0;
    for (f, xb) in field.chunks_exact(r).zip(x.chunks_exact_mut(r)) {
        let n = norm(f);
        total += n;
        if n > 0.0 {
            for (xk, fk) in xb.iter_mut().zip(f) {
                *xk = fk / n;
            }
        }
    }
    total
}

/// Seeded random unit vectors (`count × r`).
fn random_unit_vectors(rng: &mut ChaCha20Rng, count: usize, r: usize) -> Vec<f64> {
    let mut out = vec![0.0; count * r];
    for block in out.chunks_exact_mut(r) {
        loop {
            fill_standard_normal(rng, block);
            let n = norm(block);
            if n > 1e-12 {
                block.iter_mut().for_each(|x| *x /= n);
                break;
            }
        }
    }
    out
}

/// Solves the bipartite Grothendieck SDP for the row-major `rows × cols` matrix `c` by the
/// mixing method and certifies an upper bound (module docs).
///
/// Fails on an empty or non-finite matrix, a length that is not `rows·cols`, or invalid
/// settings.
pub fn solve_grothendieck(
    c: &[f64],
    rows: usize,
    cols: usize,
    settings: &GrothendieckSettings,
) -> Result<GrothendieckSolution> {
    solve_grothendieck_from(c, rows, cols, settings, None, Parallelism::None)
}

/// [`solve_grothendieck`] started from the vectors of `start` (a warm start: a solution for
/// a nearby cost matrix of the same shape and rank, e.g. the previous Frank–Wolfe step's)
/// instead of random ones, with the field computations split over the rayon pool under
/// [`Parallelism::Rayon`]. A `start` of another shape or rank is ignored (random start). The
/// certificate does not depend on the start: the bound is valid for any vectors. Results do
/// not depend on the thread count.
pub fn solve_grothendieck_from(
    c: &[f64],
    rows: usize,
    cols: usize,
    settings: &GrothendieckSettings,
    start: Option<&GrothendieckSolution>,
    par: Parallelism,
) -> Result<GrothendieckSolution> {
    settings.check()?;
    check_cost(c, rows, cols)?;
    let n_vec = rows + cols;
    let r = settings.rank_for(n_vec);
    let (mut u, mut v) = match start {
        Some(s) if s.rows == rows && s.cols == cols && s.rank == r => (s.u.clone(), s.v.clone()),
        _ => {
            let mut rng = ChaCha20Rng::seed_from_u64(settings.seed);
            let u = random_unit_vectors(&mut rng, rows, r);
            let v = random_unit_vectors(&mut rng, cols, r);
            (u, v)
        }
    };
    let mut g = vec![0.0; rows * r];
    let mut h = vec![0.0; cols * r];

    let mut value = f64::NEG_INFINITY;
    let mut cycles = 0;
    let mut status = GrothendieckStatus::MaxCycles;
    while cycles < settings.max_cycles {
        cycles += 1;
        row_fields(c, rows, cols, r, &v, &mut g, par);
        normalize_into(&g, r, &mut u);
        col_fields(c, rows, cols, r, &u, &mut h, par);
        let new_value = normalize_into(&h, r, &mut v);
        let improvement = new_value - value;
        value = new_value;
        if improvement <= settings.relative_tolerance * value.abs().max(1.0) {
            status = GrothendieckStatus::Converged;
            break;
        }
    }
    // Value of the returned vectors, recomputed (h was computed from the final u).
    col_fields(c, rows, cols, r, &u, &mut h, par);
    let value: f64 = h
        .chunks_exact(r)
        .zip(v.chunks_exact(r))
        .map(|(hb, vb)| dot(hb, vb))
        .sum();
    // Dual candidate: half the field norms at the final vectors.
    row_fields(c, rows, cols, r, &v, &mut g, par);
    let lambda: Vec<f64> = g.chunks_exact(r).map(|b| 0.5 * norm(b)).collect();
    let mu: Vec<f64> = h.chunks_exact(r).map(|b| 0.5 * norm(b)).collect();
    let dual_sum: f64 = lambda.iter().sum::<f64>() + mu.iter().sum::<f64>();

    let gersh = gershgorin_bound(c, rows, cols, &lambda, &mu);
    let (ell, certificate) = if n_vec <= settings.dense_certificate_limit {
        let s = slack_matrix(c, rows, cols, &lambda, &mu);
        match dense_certified_min_eigenvalue(s.as_ref(), par) {
            Some(l) if l >= gersh => (l, CertificateMethod::Cholesky),
            _ => (gersh, CertificateMethod::Gershgorin),
        }
    } else {
        (gersh, CertificateMethod::Gershgorin)
    };
    let mut upper_bound = dual_sum - n_vec as f64 * ell;
    if certificate == CertificateMethod::Gershgorin {
        // Raising every y_i to its Gershgorin radius makes S diagonally dominant: the
        // trivial bound Σ|C_στ|, sometimes better than the uniform shift.
        upper_bound = upper_bound.min(c.iter().map(|x| x.abs()).sum());
    }
    // Never report a bound below the attained value (only possible through rounding).
    let upper_bound = upper_bound.max(value);
    Ok(GrothendieckSolution {
        rows,
        cols,
        rank: r,
        u,
        v,
        value,
        upper_bound,
        gap: upper_bound - value,
        slack_eigenvalue_bound: ell,
        certificate,
        cycles,
        status,
    })
}

/// `min_i (S_ii − Σ_{j≠i} |S_ij|)` for `S = [[diag λ, −C/2], [−Cᵀ/2, diag μ]]`.
fn gershgorin_bound(c: &[f64], rows: usize, cols: usize, lambda: &[f64], mu: &[f64]) -> f64 {
    let mut col_abs = vec![0.0; cols];
    let mut best = f64::INFINITY;
    for s in 0..rows {
        let row = &c[s * cols..(s + 1) * cols];
        let mut acc = 0.0;
        for (t, x) in row.iter().enumerate() {
            acc += x.abs();
            col_abs[t] += x.abs();
        }
        best = best.min(lambda[s] - 0.5 * acc);
    }
    for t in 0..cols {
        best = best.min(mu[t] - 0.5 * col_abs[t]);
    }
    best
}

/// The dense dual slack `S` (`N × N`).
fn slack_matrix(c: &[f64], rows: usize, cols: usize, lambda: &[f64], mu: &[f64]) -> Mat<f64> {
    Mat::from_fn(rows + cols, rows + cols, |i, j| {
        match (i < rows, j < rows) {
            (true, true) => {
                if i == j {
                    lambda[i]
                } else {
                    0.0
                }
            }
            (false, false) => {
                if i == j {
                    mu[i - rows]
                } else {
                    0.0
                }
            }
            (true, false) => -0.5 * c[i * cols + (j - rows)],
            (false, true) => -0.5 * c[j * cols + (i - rows)],
        }
    })
}

/// Whether faer's Cholesky factorization (`LLᵀ`, blocked, no regularization) of the
/// computed `fl(a − shift·I)` runs to the end with every pivot positive (a NaN pivot is a
/// failure). `a` is symmetric; only its lower triangle is read. The factor is dropped.
/// Under [`Parallelism::Rayon`] faer's blocked kernels run on the rayon pool (`Par::rayon`);
/// only the success enters the certificate, and it could differ between thread counts only
/// if `λ_min(fl(a − shift·I))` were within faer's rounding of zero — the shift sits a
/// margin of at least `1e-7` relative below the estimate, so that takes an estimate wrong
/// by about the margin, not a last-bit difference.
fn cholesky_succeeds(a: MatRef<'_, f64>, shift: f64, par: Parallelism) -> bool {
    shifted_cholesky(a, shift, par).is_some()
}

/// The lower-triangular factor `L` of [`cholesky_succeeds`] (upper triangle zero), or `None`
/// when a pivot is not positive.
fn shifted_cholesky(a: MatRef<'_, f64>, shift: f64, par: Parallelism) -> Option<Mat<f64>> {
    use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
    let n = a.nrows();
    let mut l = Mat::<f64>::from_fn(n, n, |i, j| {
        if i == j {
            a[(i, i)] - shift
        } else if i > j {
            a[(i, j)]
        } else {
            0.0
        }
    });
    let par = par.faer();
    let params = Default::default();
    let mut scratch = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, params));
    let factored = cholesky_in_place(
        l.as_mut(),
        Default::default(),
        par,
        MemStack::new(&mut scratch),
        params,
    );
    factored.ok()?;
    // faer may use the strict upper triangle as workspace: the factor is the lower one.
    for j in 1..n {
        for i in 0..j {
            l[(i, j)] = 0.0;
        }
    }
    Some(l)
}

/// faer's estimate of `λ_min` of the dense symmetric `s`: Householder tridiagonalization and
/// the implicit QR algorithm on the tridiagonal (eigenvalues only, lower triangle read).
/// `None` if the QR iteration does not converge.
///
/// Always `Par::Seq`: faer's parallel tridiagonalization adds partial sums in an order that
/// depends on the thread count, and the certified bound is a function of this estimate;
/// on the calling thread it is the same for every [`Parallelism`].
fn eigen_min_estimate(s: MatRef<'_, f64>) -> Option<f64> {
    use faer::linalg::evd::{ComputeEigenvectors, self_adjoint_evd, self_adjoint_evd_scratch};
    let n = s.nrows();
    let par = faer::Par::Seq;
    let params = Default::default();
    let mut eigenvalues = faer::diag::Diag::<f64>::zeros(n);
    let mut scratch = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
        n,
        ComputeEigenvectors::No,
        par,
        params,
    ));
    self_adjoint_evd(
        s,
        eigenvalues.as_mut(),
        None,
        par,
        MemStack::new(&mut scratch),
        params,
    )
    .ok()?;
    eigenvalues
        .column_vector()
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))))
        .filter(|x| x.is_finite())
}

/// The allowance `ρ(s)` that the Cholesky test of `fl(S − s·I)` must clear (module docs):
/// `8(N + 8)·u·Σ_i |S_ii − s|`, rounded up.
fn rounding_allowance(s: MatRef<'_, f64>, shift: f64) -> f64 {
    let n = s.nrows();
    let trace: f64 = (0..n).map(|i| (s[(i, i)] - shift).abs()).sum();
    // The factor 2 over the bound in the docs also covers the rounding of this sum.
    let rho = 8.0 * (n as f64 + 8.0) * f64::EPSILON * trace;
    rho.next_up()
}

/// A certified lower bound on `λ_min(s)` (module docs), or `None` if no Cholesky check
/// succeeded.
fn dense_certified_min_eigenvalue(s: MatRef<'_, f64>, par: Parallelism) -> Option<f64> {
    let n = s.nrows();
    let estimate = eigen_min_estimate(s)?;
    let abs_trace: f64 = (0..n).map(|i| s[(i, i)].abs()).sum();
    let scale = abs_trace.max(f64::MIN_POSITIVE);
    let mut margin = 1e-7 * (estimate.abs() + scale / n as f64);
    for _ in 0..12 {
        let shift = estimate - margin;
        if cholesky_succeeds(s, shift, par) {
            // λ_min(S) ≥ shift − ρ(shift), rounded down.
            return Some((shift - rounding_allowance(s, shift)).next_down());
        }
        margin *= 10.0;
    }
    None
}

/// A sign assignment `x ∈ {±1}^rows`, `y ∈ {±1}^cols` and its value `xᵀCy`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SignAssignment {
    /// Row signs `x_σ ∈ {−1, +1}`.
    pub row_signs: Vec<f64>,
    /// Column signs `y_τ ∈ {−1, +1}`.
    pub col_signs: Vec<f64>,
    /// `Σ C_στ x_σ y_τ`.
    pub value: f64,
}

/// `Σ_{σ,τ} C_στ x_σ y_τ` (no validation beyond lengths: fails on mismatched lengths).
pub fn bilinear_value(c: &[f64], rows: usize, cols: usize, x: &[f64], y: &[f64]) -> Result<f64> {
    check_cost(c, rows, cols)?;
    crate::error::check_dim("row signs", rows, x.len())?;
    crate::error::check_dim("column signs", cols, y.len())?;
    Ok(bilinear(c, cols, x, y))
}

fn bilinear(c: &[f64], cols: usize, x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .enumerate()
        .map(|(s, xs)| xs * dot(&c[s * cols..(s + 1) * cols], y))
        .sum()
}

fn sign(x: f64) -> f64 {
    if x < 0.0 { -1.0 } else { 1.0 }
}

/// Random-hyperplane rounding of a [`GrothendieckSolution`] of `c` (module docs): the best
/// of `draws ≥ 1` seeded draws, each improved by alternating best responses.
///
/// Fails when `c` does not match the solution's shape, is not finite, or `draws == 0`.
pub fn round_to_signs(
    c: &[f64],
    solution: &GrothendieckSolution,
    draws: usize,
    seed: u64,
) -> Result<SignAssignment> {
    let (rows, cols, r) = (solution.rows, solution.cols, solution.rank);
    check_cost(c, rows, cols)?;
    if draws == 0 {
        return Err(GeometryError::InvalidParameter {
            name: "draws",
            reason: "rounding needs at least one random hyperplane".into(),
        });
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut normal = vec![0.0; r];
    let mut best: Option<SignAssignment> = None;
    for _ in 0..draws {
        fill_standard_normal(&mut rng, &mut normal);
        let mut x: Vec<f64> = (0..rows)
            .map(|s| sign(dot(solution.row_vector(s), &normal)))
            .collect();
        let mut y: Vec<f64> = (0..cols)
            .map(|t| sign(dot(solution.col_vector(t), &normal)))
            .collect();
        let mut value = bilinear(c, cols, &x, &y);
        // Alternating best responses; each strictly improves, so this terminates.
        for _ in 0..1000 {
            let mut cx = vec![0.0; cols];
            for (s, xs) in x.iter().enumerate() {
                for (t, cxt) in cx.iter_mut().enumerate() {
                    *cxt += c[s * cols + t] * xs;
                }
            }
            let y2: Vec<f64> = cx.iter().map(|&z| sign(z)).collect();
            let x2: Vec<f64> = (0..rows)
                .map(|s| sign(dot(&c[s * cols..(s + 1) * cols], &y2)))
                .collect();
            let v2 = bilinear(c, cols, &x2, &y2);
            if v2 > value + 1e-12 * value.abs() {
                x = x2;
                y = y2;
                value = v2;
            } else {
                break;
            }
        }
        if best.as_ref().is_none_or(|b| value > b.value) {
            best = Some(SignAssignment {
                row_signs: x,
                col_signs: y,
                value,
            });
        }
    }
    best.ok_or(GeometryError::Empty("no rounding draw"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random symmetric positive definite `B·Bᵀ + shift·I` (`n × n`).
    fn spd(n: usize, shift: f64, seed: u64) -> Mat<f64> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut b = vec![0.0; n * n];
        fill_standard_normal(&mut rng, &mut b);
        Mat::from_fn(n, n, |i, j| {
            let d: f64 = (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum();
            d + if i == j { shift } else { 0.0 }
        })
    }

    /// Reconstruction: faer's factor satisfies `L·Lᵀ = A − shift·I` within the componentwise
    /// backward-error bound the certificate relies on (module docs),
    /// `|L·Lᵀ − A| ≤ γ_{n+4}·|L|·|Lᵀ| + u·|A_ii|` on the diagonal, sequential and over rayon.
    #[test]
    fn cholesky_factor_reconstructs_the_shifted_matrix() {
        for (n, seed) in [(1, 1), (7, 2), (64, 3), (300, 4)] {
            let a = spd(n, 0.5, seed);
            let shift = 0.25;
            for par in [Parallelism::None, Parallelism::Rayon] {
                let l = shifted_cholesky(a.as_ref(), shift, par).expect("positive definite");
                let u = f64::EPSILON / 2.0;
                let k = (n + 4) as f64 * u;
                let gamma = k / (1.0 - k);
                for i in 0..n {
                    for j in 0..=i {
                        assert_eq!(l[(j, i)], if i == j { l[(i, i)] } else { 0.0 });
                        let (mut exact, mut abs) = (0.0, 0.0);
                        for t in 0..=j {
                            exact += l[(i, t)] * l[(j, t)];
                            abs += (l[(i, t)] * l[(j, t)]).abs();
                        }
                        let target = a[(i, j)] - if i == j { shift } else { 0.0 };
                        let mut tol = 2.0 * gamma * abs;
                        if i == j {
                            tol += u * target.abs();
                        }
                        assert!(
                            (exact - target).abs() <= tol,
                            "n = {n}, ({i}, {j}): {exact} vs {target}, tolerance {tol}"
                        );
                    }
                }
            }
        }
    }

    /// The test fails exactly when the shift passes the smallest eigenvalue: for the
    /// tridiagonal `[−1, 2, −1]` matrix, `λ_min = 2 − 2cos(π/(n+1))`.
    #[test]
    fn certificate_brackets_a_known_smallest_eigenvalue() {
        let n = 200;
        let a = Mat::<f64>::from_fn(n, n, |i, j| match i.abs_diff(j) {
            0 => 2.0,
            1 => -1.0,
            _ => 0.0,
        });
        let exact = 2.0 - 2.0 * (std::f64::consts::PI / (n as f64 + 1.0)).cos();
        let estimate = eigen_min_estimate(a.as_ref()).unwrap();
        assert!((estimate - exact).abs() <= 1e-12, "{estimate} vs {exact}");
        for par in [Parallelism::None, Parallelism::Rayon] {
            assert!(cholesky_succeeds(a.as_ref(), exact * (1.0 - 1e-6), par));
            assert!(!cholesky_succeeds(a.as_ref(), exact * (1.0 + 1e-6), par));
            let ell = dense_certified_min_eigenvalue(a.as_ref(), par).unwrap();
            assert!(ell <= exact && ell >= exact - 1e-6, "{ell} vs {exact}");
        }
    }
}
