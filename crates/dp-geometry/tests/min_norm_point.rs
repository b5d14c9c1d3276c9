//! Wolfe's minimum-norm-point variant ([`FrankWolfeVariant::MinNormPoint`]) against exact
//! QP projections (clarabel): random instances, weighted norms, targets inside and far
//! outside the hull, duplicate and affinely dependent point sets, a single point, symmetric
//! hulls and bodies without a fast single-atom product; plus a property test that it never
//! panics and always reports a status with convex weights.

mod common;

use common::{qp_projection, random_points, wdist2};
use dp_geometry::{
    AtomicBody, BlockOneHotPoints, ConvexHull, DensePoints, FrankWolfeResult, FrankWolfeSettings,
    FrankWolfeVariant, GeometryError, LinearOracle, OracleAnswer, Parallelism, SolveStatus,
    SymmetricHull, frank_wolfe_project, frank_wolfe_project_atoms, frank_wolfe_project_hull,
};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn mnp(tol: f64, cap: usize, w: &[f64]) -> FrankWolfeSettings {
    FrankWolfeSettings {
        max_iterations: cap,
        relative_gap_tolerance: tol,
        variant: FrankWolfeVariant::MinNormPoint,
        weights: Some(w.to_vec()),
        parallelism: Parallelism::None,
        progress: None,
    }
}

fn combine(points: &[Vec<f64>], lambda: &[f64]) -> Vec<f64> {
    let mut v = vec![0.0; points[0].len()];
    for (p, l) in points.iter().zip(lambda) {
        for (vk, pk) in v.iter_mut().zip(p) {
            *vk += l * pk;
        }
    }
    v
}

/// The result's weights are convex (positive, sum 1, valid indices) and reproduce its
/// point; its objective is `‖point − y‖²_W` and its gap the Frank–Wolfe gap of that point.
fn check_weights(res: &FrankWolfeResult, points: &[Vec<f64>], y: &[f64], w: &[f64]) {
    let scale = 1.0 + wdist2(y, &vec![0.0; y.len()], w);
    let total: f64 = res.atoms.iter().map(|a| a.1).sum();
    assert!((total - 1.0).abs() < 1e-12, "weights sum to {total}");
    assert!(
        res.atoms
            .iter()
            .all(|&(a, l)| a < points.len() && l > 0.0 && l <= 1.0 + 1e-12)
    );
    assert!(
        res.atoms.windows(2).all(|p| p[0].0 < p[1].0),
        "sorted, distinct"
    );
    let mut lam = vec![0.0; points.len()];
    for &(a, l) in &res.atoms {
        lam[a] = l;
    }
    let rebuilt = combine(points, &lam);
    assert!(wdist2(&rebuilt, &res.point, w) < 1e-24 * scale);
    assert!((res.objective - wdist2(&res.point, y, w)).abs() <= 1e-12 * scale);
    // The reported gap is the Frank–Wolfe gap of the returned point, by its definition
    // 2·max_i ⟨W(y − v), p_i − v⟩.
    let gap = points
        .iter()
        .map(|p| {
            2.0 * (0..y.len())
                .map(|k| w[k] * (y[k] - res.point[k]) * (p[k] - res.point[k]))
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    assert!(
        (res.gap - gap).abs() <= 1e-10 * scale,
        "reported gap {} vs {gap}",
        res.gap
    );
}

/// Solves with min-norm-point and compares with the exact QP: objective within 1e-9
/// (relative to `1 + ‖y‖²_W`), the gap certificate at least the true suboptimality, the
/// point within `√gap` of the exact projection (2-strong convexity), convex weights.
fn check_instance(points: &[Vec<f64>], y: &[f64], w: &[f64], what: &str) -> FrankWolfeResult {
    let (opt, lambda) = qp_projection(points, y, w);
    let v_star = combine(points, &lambda);
    let scale = 1.0 + wdist2(y, &vec![0.0; y.len()], w);
    let hull = ConvexHull::new(DensePoints::new(points.to_vec()).unwrap()).unwrap();
    let res = frank_wolfe_project_hull(&hull, y, &mnp(1e-12, 1_000, w)).unwrap();
    check_weights(&res, points, y, w);
    assert!(
        matches!(res.status, SolveStatus::Converged | SolveStatus::Stalled),
        "{what}: status {:?}",
        res.status
    );
    let sub = res.objective - opt;
    assert!(
        sub.abs() <= 1e-9 * scale,
        "{what}: objective {} vs QP optimum {opt}",
        res.objective
    );
    assert!(
        sub <= res.gap + 1e-10 * scale,
        "{what}: suboptimality {sub} above the gap {}",
        res.gap
    );
    assert!(
        wdist2(&res.point, &v_star, w) <= res.gap + 1e-8 * scale,
        "{what}"
    );
    // A moderate tolerance is always reached, with a certificate.
    let res6 = frank_wolfe_project_hull(&hull, y, &mnp(1e-6, 1_000, w)).unwrap();
    assert_eq!(res6.status, SolveStatus::Converged, "{what}");
    assert!(res6.objective - opt <= res6.gap + 1e-10 * scale, "{what}");
    res
}

fn random_weights(rng: &mut ChaCha20Rng, dim: usize, weighted: bool) -> Vec<f64> {
    (0..dim)
        .map(|_| {
            if weighted {
                rng.random_range(0.2..5.0)
            } else {
                1.0
            }
        })
        .collect()
}

#[test]
fn matches_exact_qp_on_random_instances() {
    for seed in 0..40u64 {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dim = rng.random_range(1..=12usize);
        let n = rng.random_range(1..=40usize);
        let points = random_points(&mut rng, n, dim);
        let w = random_weights(&mut rng, dim, seed % 2 == 1);
        // outside (usually), inside (a convex combination), far outside
        let y_out: Vec<f64> = (0..dim).map(|_| rng.random_range(-3.0..3.0)).collect();
        let mut lam: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..1.0)).collect();
        let s: f64 = lam.iter().sum();
        lam.iter_mut().for_each(|l| *l /= s);
        let y_in = combine(&points, &lam);
        let y_far: Vec<f64> = y_out.iter().map(|v| 1e3 * v).collect();
        check_instance(&points, &y_out, &w, &format!("seed {seed} outside"));
        let res = check_instance(&points, &y_in, &w, &format!("seed {seed} inside"));
        // y is in the hull: the projection is y itself
        assert!(res.objective <= 1e-9 * (1.0 + wdist2(&y_in, &vec![0.0; dim], &w)));
        check_instance(&points, &y_far, &w, &format!("seed {seed} far"));
    }
}

#[test]
fn single_point_and_duplicates() {
    // One point: the projection is the point, found at the start.
    let p = vec![vec![1.0, -2.0, 0.5]];
    let y = [4.0, 0.0, 0.0];
    let res = check_instance(&p, &y, &[1.0, 2.0, 3.0], "single point");
    assert_eq!(res.atoms, vec![(0, 1.0)]);
    assert_eq!(res.point, p[0]);
    // Every point duplicated (and the hull a triangle in the plane z = 0): projecting
    // (0.2, 0.2, 5) gives (0.2, 0.2, 0) with ‖·‖² = 25.
    let tri = [
        vec![0.0, 0.0, 0.0],
        vec![1.0, 0.0, 0.0],
        vec![0.0, 1.0, 0.0],
    ];
    let pts: Vec<Vec<f64>> = tri.iter().chain(tri.iter()).cloned().collect();
    let res = check_instance(&pts, &[0.2, 0.2, 5.0], &[1.0; 3], "duplicates");
    assert!((res.objective - 25.0).abs() < 1e-12);
    assert!((res.point[0] - 0.2).abs() < 1e-12 && (res.point[1] - 0.2).abs() < 1e-12);
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    for seed in 0..10 {
        let base = random_points(&mut rng, 6, 4);
        let mut pts = base.clone();
        pts.extend(base.iter().cloned());
        pts.push(base[0].clone());
        let w = random_weights(&mut rng, 4, true);
        let y: Vec<f64> = (0..4).map(|_| rng.random_range(-2.0..2.0)).collect();
        check_instance(&pts, &y, &w, &format!("duplicates {seed}"));
    }
}

#[test]
fn affinely_dependent_point_sets() {
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    for seed in 0..20 {
        let dim = rng.random_range(2..=8usize);
        // points on a random line (collinear) or plane (coplanar) through a random origin
        let flat_dim = 1 + seed % 2;
        let origin: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
        let dirs = random_points(&mut rng, flat_dim, dim);
        let n = rng.random_range(2..=15usize);
        let points: Vec<Vec<f64>> = (0..n)
            .map(|_| {
                let t: Vec<f64> = (0..flat_dim).map(|_| rng.random_range(-2.0..2.0)).collect();
                (0..dim)
                    .map(|k| origin[k] + (0..flat_dim).map(|f| t[f] * dirs[f][k]).sum::<f64>())
                    .collect()
            })
            .collect();
        let w = random_weights(&mut rng, dim, seed % 3 == 0);
        let y: Vec<f64> = (0..dim).map(|_| rng.random_range(-3.0..3.0)).collect();
        let res = check_instance(&points, &y, &w, &format!("flat {flat_dim} seed {seed}"));
        // an affinely independent corral on a k-flat has at most k + 1 atoms
        assert!(res.atoms.len() <= flat_dim + 1);
    }
    // Integer grid points of a square in R² (many affine dependencies, exact ties).
    let grid: Vec<Vec<f64>> = (0..4)
        .flat_map(|i| (0..4).map(move |j| vec![f64::from(i), f64::from(j)]))
        .collect();
    for y in [[1.5, 1.5], [5.0, 1.0], [-1.0, -1.0], [3.0, 7.0], [1.0, 2.0]] {
        let res = check_instance(&grid, &y, &[1.0, 1.0], &format!("grid {y:?}"));
        // the exact projection is the clamp of y to [0, 3]²
        let clamp = [y[0].clamp(0.0, 3.0), y[1].clamp(0.0, 3.0)];
        assert!(wdist2(&res.point, &clamp, &[1.0, 1.0]) < 1e-18);
    }
}

#[test]
fn sparse_one_hot_and_mixed_atoms() {
    // Marginal-like points: blocks of sizes 2, 3, 2 with one 1 per block (all 12 records),
    // through BlockOneHotPoints and as dense points (same QP optimum).
    let sizes = [2usize, 3, 2];
    let mut cells = Vec::new();
    let mut dense = Vec::new();
    for a in 0..2u16 {
        for b in 0..3u16 {
            for c in 0..2u16 {
                cells.extend([a, b, c]);
                let mut p = vec![0.0; 7];
                p[usize::from(a)] = 1.0;
                p[2 + usize::from(b)] = 1.0;
                p[5 + usize::from(c)] = 1.0;
                dense.push(p);
            }
        }
    }
    let one_hot = ConvexHull::new(BlockOneHotPoints::new(&sizes, &cells).unwrap()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(61);
    for seed in 0..10 {
        let y: Vec<f64> = (0..7).map(|_| rng.random_range(-0.5..1.5)).collect();
        let w = random_weights(&mut rng, 7, seed % 2 == 0);
        let res = check_instance(&dense, &y, &w, &format!("one-hot dense {seed}"));
        let res2 = frank_wolfe_project_hull(&one_hot, &y, &mnp(1e-12, 1_000, &w)).unwrap();
        check_weights(&res2, &dense, &y, &w);
        assert!((res.objective - res2.objective).abs() < 1e-10);
    }
    // Half the points sparse (one non-zero), half dense: both kinds in one corral.
    for seed in 0..10 {
        let dim = rng.random_range(3..=8usize);
        let mut points = random_points(&mut rng, 6, dim);
        for k in 0..6 {
            let mut p = vec![0.0; dim];
            p[k % dim] = rng.random_range(-2.0..2.0);
            points.push(p);
        }
        let y: Vec<f64> = (0..dim).map(|_| rng.random_range(-2.0..2.0)).collect();
        let w = random_weights(&mut rng, dim, true);
        check_instance(&points, &y, &w, &format!("mixed {seed}"));
    }
}

#[test]
fn symmetric_hull_matches_exact_qp() {
    let mut rng = ChaCha20Rng::seed_from_u64(29);
    for seed in 0..10 {
        let dim = rng.random_range(2..=6usize);
        let n = rng.random_range(1..=8usize);
        let points = random_points(&mut rng, n, dim);
        let w = random_weights(&mut rng, dim, true);
        let y: Vec<f64> = (0..dim).map(|_| rng.random_range(-3.0..3.0)).collect();
        let mut both = points.clone();
        both.extend(
            points
                .iter()
                .map(|p| p.iter().map(|x| -x).collect::<Vec<_>>()),
        );
        let (opt, _) = qp_projection(&both, &y, &w);
        let body = SymmetricHull::new(DensePoints::new(points).unwrap()).unwrap();
        let res = frank_wolfe_project_atoms(&body, &y, &mnp(1e-12, 1_000, &w)).unwrap();
        check_weights(&res, &both, &y, &w);
        let scale = 1.0 + wdist2(&y, &vec![0.0; dim], &w);
        assert!((res.objective - opt).abs() <= 1e-9 * scale, "seed {seed}");
        assert!(res.objective - opt <= res.gap + 1e-10 * scale);
    }
}

/// A hull that implements only the required [`AtomicBody`] methods (no `atom_inner`
/// override), to exercise the default single-atom product.
struct PlainHull(ConvexHull<DensePoints>);

impl LinearOracle for PlainHull {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn linear_max(&self, c: &[f64], par: Parallelism) -> dp_geometry::Result<OracleAnswer> {
        self.0.linear_max(c, par)
    }
}

impl AtomicBody for PlainHull {
    fn num_atoms(&self) -> usize {
        self.0.num_atoms()
    }
    fn atom_scores(&self, c: &[f64], out: &mut [f64], par: Parallelism) {
        self.0.atom_scores(c, out, par)
    }
    fn add_atom_scaled(&self, atom: usize, scale: f64, out: &mut [f64]) {
        self.0.add_atom_scaled(atom, scale, out)
    }
}

#[test]
fn default_atom_inner_and_the_generic_entry_point() {
    let mut rng = ChaCha20Rng::seed_from_u64(41);
    let points = random_points(&mut rng, 25, 5);
    let y: Vec<f64> = (0..5).map(|_| rng.random_range(-2.0..2.0)).collect();
    let w = random_weights(&mut rng, 5, true);
    let hull = ConvexHull::new(DensePoints::new(points.clone()).unwrap()).unwrap();
    let direct = frank_wolfe_project_hull(&hull, &y, &mnp(1e-12, 1_000, &w)).unwrap();
    let plain = PlainHull(hull.clone());
    let via_default = frank_wolfe_project_atoms(&plain, &y, &mnp(1e-12, 1_000, &w)).unwrap();
    let (opt, _) = qp_projection(&points, &y, &w);
    for res in [&direct, &via_default] {
        check_weights(res, &points, &y, &w);
        assert!((res.objective - opt).abs() < 1e-9 * (1.0 + opt));
    }
    // The atom-less entry point refuses the variant with an error, not a panic.
    assert!(matches!(
        frank_wolfe_project(&hull, &y, &mnp(1e-6, 100, &w)),
        Err(GeometryError::InvalidSettings(_))
    ));
}

#[test]
fn iteration_cap_is_a_status_and_parallel_oracle_agrees() {
    let mut rng = ChaCha20Rng::seed_from_u64(53);
    let points = random_points(&mut rng, 200, 30);
    let y: Vec<f64> = (0..30).map(|_| rng.random_range(-1.0..1.0)).collect();
    let w = vec![1.0; 30];
    let hull = ConvexHull::new(DensePoints::new(points.clone()).unwrap()).unwrap();
    for cap in [1, 3] {
        let res = frank_wolfe_project_hull(&hull, &y, &mnp(0.0, cap, &w)).unwrap();
        assert_eq!(res.status, SolveStatus::MaxIterations);
        assert_eq!(res.iterations, cap);
        assert_eq!(res.oracle_calls, cap + 2);
        check_weights(&res, &points, &y, &w);
        // each major cycle adds one atom and the corral is affinely independent
        assert!(res.atoms.len() <= cap + 1);
    }
    let serial = frank_wolfe_project_hull(&hull, &y, &mnp(1e-10, 1_000, &w)).unwrap();
    let mut s = mnp(1e-10, 1_000, &w);
    s.parallelism = Parallelism::Rayon;
    let parallel = frank_wolfe_project_hull(&hull, &y, &s).unwrap();
    assert_eq!(serial.status, SolveStatus::Converged);
    assert!((serial.objective - parallel.objective).abs() < 1e-12 * (1.0 + serial.objective));
    let (opt, _) = qp_projection(&points, &y, &w);
    assert!(serial.objective - opt <= serial.gap + 1e-12);
    assert!((serial.objective - opt).abs() < 1e-9);
}

fn instance_strategy() -> impl Strategy<Value = (Vec<Vec<f64>>, Vec<f64>, Vec<f64>, f64, usize)> {
    (1usize..=6, 1usize..=12, -3i32..=3).prop_flat_map(|(dim, n, log_scale)| {
        let scale = 10f64.powi(log_scale);
        // small integer coordinates: many duplicates, ties and affine dependencies
        let coord = (-2i32..=2).prop_map(move |v| f64::from(v) * scale);
        (
            prop::collection::vec(prop::collection::vec(coord, dim), n),
            prop::collection::vec(
                (-30i32..=30).prop_map(move |v| f64::from(v) * scale / 7.0),
                dim,
            ),
            prop::collection::vec(0.1f64..10.0, dim),
            prop::sample::select(vec![0.0, 1e-14, 1e-9, 1e-3]),
            1usize..=40,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Never panics; always a status, convex weights reproducing the point, a finite
    /// non-negative gap, at most `cap` major cycles.
    #[test]
    fn never_panics_and_reports_a_status((points, y, w, tol, cap) in instance_strategy()) {
        let hull = ConvexHull::new(DensePoints::new(points.clone()).unwrap()).unwrap();
        let res = frank_wolfe_project_hull(&hull, &y, &mnp(tol, cap, &w)).unwrap();
        prop_assert!(res.iterations <= cap);
        prop_assert!(res.gap.is_finite() && res.gap >= 0.0);
        prop_assert!(res.objective.is_finite());
        if res.status == SolveStatus::MaxIterations {
            prop_assert_eq!(res.iterations, cap);
        }
        check_weights(&res, &points, &y, &w);
    }
}
