//! Helpers shared by the integration tests: seeded random instances and an exact QP
//! reference (clarabel) for projections onto the convex hull of a few points.
#![allow(dead_code)]

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, ZeroConeT,
};
use rand::RngExt;
use rand_chacha::ChaCha20Rng;

/// Uniform points in `[-1, 1]^dim`.
pub fn random_points(rng: &mut ChaCha20Rng, n: usize, dim: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|_| (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect())
        .collect()
}

/// `Σ_k w_k (a_k − b_k)²`.
pub fn wdist2(a: &[f64], b: &[f64], w: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .zip(w)
        .map(|((x, y), wk)| wk * (x - y) * (x - y))
        .sum()
}

/// The exact minimum of `‖Σ_i λ_i p_i − y‖²_W` over the simplex, by clarabel:
/// `P = 2AᵀWA`, `q = −2AᵀWy`, `Σλ = 1` (zero cone), `λ ≥ 0` (nonnegative cone), where the
/// columns of `A` are the points. Returns `(optimum, λ)`; the optimum is clarabel's
/// objective plus the constant `‖y‖²_W`.
pub fn qp_projection(points: &[Vec<f64>], y: &[f64], w: &[f64]) -> (f64, Vec<f64>) {
    let n = points.len();
    let mut p = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            p[i][j] = 2.0
                * points[i]
                    .iter()
                    .zip(&points[j])
                    .zip(w)
                    .map(|((a, b), wk)| wk * a * b)
                    .sum::<f64>();
        }
    }
    let q: Vec<f64> = points
        .iter()
        .map(|pi| {
            -2.0 * pi
                .iter()
                .zip(y)
                .zip(w)
                .map(|((a, b), wk)| wk * a * b)
                .sum::<f64>()
        })
        .collect();
    let mut a = vec![vec![1.0; n]];
    for i in 0..n {
        let mut row = vec![0.0; n];
        row[i] = -1.0;
        a.push(row);
    }
    let mut b = vec![0.0; n + 1];
    b[0] = 1.0;
    let cones = [ZeroConeT(1), NonnegativeConeT(n)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-12)
        .tol_gap_rel(1e-12)
        .tol_feas(1e-12)
        .max_iter(500)
        .build()
        .unwrap();
    let pm = CscMatrix::from(&p).to_triu();
    let am = CscMatrix::from(&a);
    let mut solver = DefaultSolver::new(&pm, &q, &am, &b, &cones, settings).unwrap();
    solver.solve();
    assert!(
        matches!(
            solver.solution.status,
            SolverStatus::Solved | SolverStatus::AlmostSolved
        ),
        "clarabel status {:?}",
        solver.solution.status
    );
    let y2: f64 = y.iter().zip(w).map(|(a, wk)| wk * a * a).sum();
    (solver.solution.obj_val + y2, solver.solution.x.clone())
}
