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
//!   Lanczos (with full reorthogonalization) estimates `λ_min`; the estimate minus a small
//!   margin is accepted as `ℓ` only when a Cholesky factorization of `S − ℓ'I` succeeds, with
//!   `ℓ'` = `ℓ` plus a rounding allowance of `4(N+2)·u·tr|S|` (`u` the unit round-off; it
//!   dominates the backward error of the factorization, Demmel 1989), and the margin grows
//!   tenfold until it does. `O(N³)` time, `O(N²)` memory.
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
    /// Largest `N` for which the dense (Lanczos + Cholesky) certificate is computed; above
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
    /// Lanczos estimate verified by a Cholesky factorization (module docs).
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
        match dense_certified_min_eigenvalue(&s, n_vec, settings.seed, par) {
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

/// The dense dual slack `S` (`N × N`, row-major).
fn slack_matrix(c: &[f64], rows: usize, cols: usize, lambda: &[f64], mu: &[f64]) -> Vec<f64> {
    let n = rows + cols;
    let mut s = vec![0.0; n * n];
    for i in 0..rows {
        s[i * n + i] = lambda[i];
        for t in 0..cols {
            let x = -0.5 * c[i * cols + t];
            s[i * n + rows + t] = x;
            s[(rows + t) * n + i] = x;
        }
    }
    for t in 0..cols {
        s[(rows + t) * n + rows + t] = mu[t];
    }
    s
}

/// Whether the Cholesky factorization of `a − shift·I` (`n × n`) succeeds. Under
/// [`Parallelism::Rayon`] the entries below the diagonal of each column are split over the
/// pool; every entry is computed by the same operations, so the outcome does not depend on
/// the thread count.
fn cholesky_succeeds(a: &[f64], n: usize, shift: f64, par: Parallelism) -> bool {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = a[j * n + j] - shift;
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let djj = d.sqrt();
        l[j * n + j] = djj;
        let (head, tail) = l.split_at_mut((j + 1) * n);
        let lj = &head[j * n..j * n + j];
        let entry = |i: usize, row: &mut [f64]| {
            let x = a[i * n + j] - dot(&row[..j], lj);
            row[j] = x / djj;
        };
        if par == Parallelism::Rayon && (n - j - 1) * j >= PARALLEL_FIELD_WORK / 16 {
            use rayon::prelude::*;
            tail.par_chunks_mut(n)
                .enumerate()
                .for_each(|(k, row)| entry(j + 1 + k, row));
        } else {
            for (k, row) in tail.chunks_mut(n).enumerate() {
                entry(j + 1 + k, row);
            }
        }
    }
    true
}

/// Smallest eigenvalue of the symmetric tridiagonal matrix (diagonal `a`, off-diagonal `b`)
/// by bisection on Sturm counts.
fn tridiagonal_min_eigenvalue(a: &[f64], b: &[f64]) -> f64 {
    let m = a.len();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for i in 0..m {
        let r = if i > 0 { b[i - 1].abs() } else { 0.0 } + if i + 1 < m { b[i].abs() } else { 0.0 };
        lo = lo.min(a[i] - r);
        hi = hi.max(a[i] + r);
    }
    // Number of eigenvalues below x.
    let count_below = |x: f64| -> usize {
        let mut count = 0;
        let mut q = 1.0;
        for i in 0..m {
            let off = if i > 0 { b[i - 1] * b[i - 1] } else { 0.0 };
            q = a[i] - x - if i > 0 { off / q } else { 0.0 };
            if q == 0.0 {
                q = -f64::EPSILON * (x.abs() + 1.0);
            }
            if q < 0.0 {
                count += 1;
            }
        }
        count
    };
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if count_below(mid) >= 1 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
}

/// Most Lanczos steps of the certificate's eigenvalue estimate.
const LANCZOS_STEPS: usize = 300;

/// Lanczos estimate of `λ_min` of the dense symmetric `s` (`n × n`), full
/// reorthogonalization, at most [`LANCZOS_STEPS`] steps; seeded start.
fn lanczos_min_eigenvalue(s: &[f64], n: usize, seed: u64, par: Parallelism) -> f64 {
    let steps = n.min(LANCZOS_STEPS);
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5eed_1a2c);
    let mut q = random_unit_vectors(&mut rng, 1, n);
    let mut basis: Vec<Vec<f64>> = Vec::with_capacity(steps);
    let (mut alpha, mut beta) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    let mut w = vec![0.0; n];
    for _ in 0..steps {
        if par == Parallelism::Rayon && n * n >= PARALLEL_FIELD_WORK {
            use rayon::prelude::*;
            w.par_iter_mut()
                .enumerate()
                .for_each(|(i, wi)| *wi = dot(&s[i * n..(i + 1) * n], &q));
        } else {
            for (i, wi) in w.iter_mut().enumerate() {
                *wi = dot(&s[i * n..(i + 1) * n], &q);
            }
        }
        let a = dot(&w, &q);
        alpha.push(a);
        basis.push(q.clone());
        // Full reorthogonalization (twice, for stability).
        for _ in 0..2 {
            for b in &basis {
                let p = dot(&w, b);
                w.iter_mut().zip(b).for_each(|(wi, bi)| *wi -= p * bi);
            }
        }
        let nb = norm(&w);
        if basis.len() == steps || nb <= 1e-12 * (a.abs() + 1.0) {
            break;
        }
        beta.push(nb);
        q = w.iter().map(|x| x / nb).collect();
    }
    beta.truncate(alpha.len().saturating_sub(1));
    tridiagonal_min_eigenvalue(&alpha, &beta)
}

/// A certified lower bound on `λ_min(s)` (module docs), or `None` if no Cholesky check
/// succeeded.
fn dense_certified_min_eigenvalue(s: &[f64], n: usize, seed: u64, par: Parallelism) -> Option<f64> {
    let estimate = lanczos_min_eigenvalue(s, n, seed, par);
    let abs_trace: f64 = (0..n).map(|i| s[i * n + i].abs()).sum();
    let scale = abs_trace.max(f64::MIN_POSITIVE);
    let rounding = 4.0 * (n as f64 + 2.0) * f64::EPSILON * scale;
    let mut margin = 1e-7 * (estimate.abs() + scale / n as f64);
    for _ in 0..12 {
        let ell = estimate - margin;
        if cholesky_succeeds(s, n, ell + rounding, par) {
            return Some(ell);
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
