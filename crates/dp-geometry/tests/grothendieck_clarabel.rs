//! Cross-check of the mixing-method Grothendieck solver against clarabel's exact SDP.
//!
//! Off by default: clarabel's positive-semidefinite cone calls BLAS and LAPACK, which this
//! crate does not build from source. With a system OpenBLAS (Debian/Ubuntu:
//! `apt-get install libopenblas-dev`), run
//!
//! ```text
//! CARGO_BUILD_JOBS=1 cargo test -p dp-geometry --features clarabel-sdp --test grothendieck_clarabel
//! ```
//!
//! (the feature turns on clarabel's `sdp-openblas` backend with `openblas-src`'s `system`
//! option, so the system `libopenblas` provides BLAS and LAPACK; nothing is built from source).
#![cfg(feature = "clarabel-sdp")]

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, PSDTriangleConeT, SolverStatus,
};
use dp_geometry::{GrothendieckSettings, solve_grothendieck};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// `SDP(C)` exactly, through the dual `min Σ y_i s.t. diag(y) − Ĉ ⪰ 0`,
/// `Ĉ = [[0, C/2], [Cᵀ/2, 0]]` (module docs of `dp_geometry::grothendieck`). Clarabel's
/// constraint is `b − A·y ∈ PSD` in its scaled upper-triangle vectorization (column by
/// column, off-diagonal entries times √2).
fn exact_sdp(c: &[f64], rows: usize, cols: usize) -> f64 {
    let n = rows + cols;
    let chat = |i: usize, j: usize| -> f64 {
        if i < rows && j >= rows {
            0.5 * c[i * cols + (j - rows)]
        } else if j < rows && i >= rows {
            0.5 * c[j * cols + (i - rows)]
        } else {
            0.0
        }
    };
    let tri = n * (n + 1) / 2;
    let mut b = vec![0.0; tri];
    let mut a = vec![vec![0.0; n]; tri];
    // Entries of the upper triangle, column by column.
    let entries = (0..n).flat_map(|j| (0..=j).map(move |i| (i, j)));
    for ((i, j), (a_row, b_k)) in entries.zip(a.iter_mut().zip(b.iter_mut())) {
        if i == j {
            // Diagonal: y_i − Ĉ_ii = b − A y with b = 0, A = −e_i.
            a_row[i] = -1.0;
        } else {
            *b_k = -std::f64::consts::SQRT_2 * chat(i, j);
        }
    }
    let p = CscMatrix::zeros((n, n));
    let q = vec![1.0; n];
    let am = CscMatrix::from(&a);
    let cones = [PSDTriangleConeT(n)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&p, &q, &am, &b, &cones, settings).unwrap();
    solver.solve();
    assert!(
        matches!(
            solver.solution.status,
            SolverStatus::Solved | SolverStatus::AlmostSolved
        ),
        "clarabel status {:?}",
        solver.solution.status
    );
    solver.solution.obj_val
}

#[test]
fn mixing_method_matches_clarabel_on_small_instances() {
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    for trial in 0..15 {
        let rows = rng.random_range(1..=6usize);
        let cols = rng.random_range(1..=6usize);
        let c: Vec<f64> = (0..rows * cols)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let exact = exact_sdp(&c, rows, cols);
        let sol = solve_grothendieck(&c, rows, cols, &GrothendieckSettings::default()).unwrap();
        let tol = 1e-6 * (1.0 + exact.abs());
        assert!(
            (sol.value - exact).abs() <= tol,
            "trial {trial}: {} vs {exact}",
            sol.value
        );
        assert!(sol.upper_bound >= exact - tol, "trial {trial}");
        assert!(sol.upper_bound <= exact + tol, "trial {trial}");
    }
}
