//! Frank–Wolfe projection: exact-QP cross-checks (clarabel), the projection inequality,
//! variants, statuses and settings validation.

mod common;

use common::{qp_projection, random_points, wdist2};
use dp_geometry::{
    Ball, ConvexHull, DensePoints, FrankWolfeSettings, FrankWolfeVariant, GeometryError,
    LinearOracle, OracleAnswer, Parallelism, SolveStatus, SymmetricHull, frank_wolfe_project,
    frank_wolfe_project_atoms, frank_wolfe_project_hull,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn settings(variant: FrankWolfeVariant, tol: f64, max_iterations: usize) -> FrankWolfeSettings {
    FrankWolfeSettings {
        max_iterations,
        relative_gap_tolerance: tol,
        variant,
        ..FrankWolfeSettings::default()
    }
}

const VARIANTS: [FrankWolfeVariant; 5] = [
    FrankWolfeVariant::Classic,
    FrankWolfeVariant::AwayStep,
    FrankWolfeVariant::Pairwise,
    FrankWolfeVariant::Accelerated,
    FrankWolfeVariant::MinNormPoint,
];

/// A random instance: `n` points in `[-1,1]^dim`, a target `y` with N(0, 2²)-ish entries
/// (usually outside the hull), and weights in `[0.5, 2]` or all ones.
fn instance(seed: u64, weighted: bool) -> (Vec<Vec<f64>>, Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let dim = rng.random_range(2..=10usize);
    let n = rng.random_range(3..=30usize);
    let points = random_points(&mut rng, n, dim);
    let y: Vec<f64> = (0..dim).map(|_| rng.random_range(-3.0..3.0)).collect();
    let w: Vec<f64> = (0..dim)
        .map(|_| {
            if weighted {
                rng.random_range(0.5..2.0)
            } else {
                1.0
            }
        })
        .collect();
    (points, y, w)
}

/// Checks a Frank–Wolfe result against the exact optimum `opt` of the same problem:
/// the gap certifies the suboptimality, the objective is never below the optimum
/// (beyond the QP solver's own accuracy), and by 2-strong convexity of `f` in `‖·‖_W`
/// the point is within `√gap` of the exact projection `v_star`.
fn check_against_qp(
    res: &dp_geometry::FrankWolfeResult,
    opt: f64,
    v_star: &[f64],
    w: &[f64],
    scale: f64,
) {
    let sub = res.objective - opt;
    assert!(
        sub >= -1e-9 * scale,
        "objective {} below the QP optimum {opt}",
        res.objective
    );
    assert!(
        sub <= res.gap + 1e-9 * scale,
        "suboptimality {sub} exceeds the reported gap {}",
        res.gap
    );
    let dist2 = wdist2(&res.point, v_star, w);
    assert!(
        dist2 <= res.gap + 1e-8 * scale,
        "‖v − P(y)‖² = {dist2} > gap {}",
        res.gap
    );
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

#[test]
fn matches_exact_qp_on_random_instances() {
    for seed in 0..24u64 {
        let weighted = seed % 2 == 1;
        let (points, y, w) = instance(seed, weighted);
        let (opt, lambda) = qp_projection(&points, &y, &w);
        let v_star = combine(&points, &lambda);
        let scale = 1.0 + wdist2(&y, &vec![0.0; y.len()], &w);
        let hull = ConvexHull::new(DensePoints::new(points.clone()).unwrap()).unwrap();
        for variant in VARIANTS {
            // Loose tolerance and a small cap too: the certificate must hold at any stop.
            for (tol, cap) in [(1e-10, 20_000), (1e-3, 5)] {
                let mut s = settings(variant, tol, cap);
                s.weights = Some(w.clone());
                let res = frank_wolfe_project_hull(&hull, &y, &s).unwrap();
                check_against_qp(&res, opt, &v_star, &w, scale);
                // The atoms are convex weights reproducing the point.
                let total: f64 = res.atoms.iter().map(|a| a.1).sum();
                assert!((total - 1.0).abs() < 1e-9);
                assert!(res.atoms.iter().all(|&(a, l)| a < points.len() && l > 0.0));
                let mut lam = vec![0.0; points.len()];
                for &(a, l) in &res.atoms {
                    lam[a] = l;
                }
                let rebuilt = combine(&points, &lam);
                assert!(wdist2(&rebuilt, &res.point, &w) < 1e-18 * scale * scale + 1e-20);
            }
            // Pairwise and away steps reach the tight tolerance; the QP comparison pins the
            // optimum to ~1e-9·scale.
            if variant != FrankWolfeVariant::Classic {
                let mut s = settings(variant, 1e-10, 20_000);
                s.weights = Some(w.clone());
                let res = frank_wolfe_project_hull(&hull, &y, &s).unwrap();
                assert_eq!(
                    res.status,
                    SolveStatus::Converged,
                    "seed {seed} {variant:?}"
                );
            }
        }
        // The generic classic path through the LinearOracle trait certifies the same way.
        let mut s = settings(FrankWolfeVariant::Classic, 1e-8, 5_000);
        s.weights = Some(w.clone());
        let res = frank_wolfe_project(&hull, &y, &s).unwrap();
        check_against_qp(&res, opt, &v_star, &w, scale);
    }
}

#[test]
fn symmetric_hull_matches_exact_qp() {
    for seed in 100..106u64 {
        let (points, y, w) = instance(seed, false);
        // conv{±p_i} is the hull of the 2n points ±p_i.
        let mut both = points.clone();
        both.extend(
            points
                .iter()
                .map(|p| p.iter().map(|x| -x).collect::<Vec<f64>>()),
        );
        let (opt, lambda) = qp_projection(&both, &y, &w);
        let v_star = combine(&both, &lambda);
        let scale = 1.0 + y.iter().map(|x| x * x).sum::<f64>();
        let body = SymmetricHull::new(DensePoints::new(points.clone()).unwrap()).unwrap();
        let res = frank_wolfe_project_atoms(
            &body,
            &y,
            &settings(FrankWolfeVariant::Pairwise, 1e-10, 20_000),
        )
        .unwrap();
        check_against_qp(&res, opt, &v_star, &w, scale);
        let mut lam = vec![0.0; 2 * points.len()];
        for &(a, l) in &res.atoms {
            lam[a] = l;
        }
        assert!(wdist2(&combine(&both, &lam), &res.point, &w) < 1e-16 * scale);
    }
}

#[test]
fn projection_inequality_holds_for_points_and_convex_combinations() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    for seed in 200..210u64 {
        let (points, y, w) = instance(seed, false);
        let hull = ConvexHull::new(DensePoints::new(points.clone()).unwrap()).unwrap();
        let res = frank_wolfe_project_hull(
            &hull,
            &y,
            &settings(FrankWolfeVariant::Pairwise, 1e-12, 50_000),
        )
        .unwrap();
        // ‖P(y) − x‖ ≤ ‖y − x‖ for the exact projection; the computed point is within
        // √gap of it.
        let slack = res.gap.sqrt() + 1e-9;
        let mut xs: Vec<Vec<f64>> = points.clone();
        for _ in 0..50 {
            let raw: Vec<f64> = (0..points.len())
                .map(|_| -rng.random_range(0.0f64..1.0).max(1e-300).ln())
                .collect();
            let total: f64 = raw.iter().sum();
            let lam: Vec<f64> = raw.iter().map(|r| r / total).collect();
            xs.push(combine(&points, &lam));
        }
        for x in &xs {
            let lhs = wdist2(&res.point, x, &w).sqrt();
            let rhs = wdist2(&y, x, &w).sqrt();
            assert!(lhs <= rhs + slack, "‖P(y) − x‖ = {lhs} > ‖y − x‖ = {rhs}");
        }
    }
}

/// A point inside the hull is its own projection: the objective (= squared distance to
/// y, since the optimum is 0) is bounded by the gap.
#[test]
fn point_in_hull_projects_to_itself() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    for seed in 300..306u64 {
        let (points, _, w) = instance(seed, false);
        let raw: Vec<f64> = (0..points.len())
            .map(|_| rng.random_range(0.0f64..1.0))
            .collect();
        let total: f64 = raw.iter().sum();
        let y = combine(&points, &raw.iter().map(|r| r / total).collect::<Vec<_>>());
        let hull = ConvexHull::new(DensePoints::new(points.clone()).unwrap()).unwrap();
        for variant in [FrankWolfeVariant::AwayStep, FrankWolfeVariant::Pairwise] {
            let res =
                frank_wolfe_project_hull(&hull, &y, &settings(variant, 1e-14, 100_000)).unwrap();
            assert!(res.objective <= res.gap + 1e-15, "{res:?}");
            assert!(wdist2(&res.point, &y, &w).sqrt() < 1e-6, "{res:?}");
        }
        // A point of the set (here often a vertex with a flat angle, where pairwise steps
        // can swap mass slowly): away steps reach it; every variant certifies its distance
        // to it, since the optimum is 0 and objective − 0 ≤ gap.
        for variant in VARIANTS {
            let res =
                frank_wolfe_project_hull(&hull, &points[2], &settings(variant, 1e-14, 20_000))
                    .unwrap();
            assert!(res.objective <= res.gap + 1e-15, "{res:?}");
            if variant == FrankWolfeVariant::AwayStep {
                assert_eq!(res.status, SolveStatus::Converged);
                assert!(wdist2(&res.point, &points[2], &w).sqrt() < 1e-6, "{res:?}");
            }
        }
    }
}

#[test]
fn away_and_pairwise_agree_with_classic_and_need_fewer_iterations() {
    // Projection onto a random polytope from far outside: the optimum sits on a face,
    // where classic Frank–Wolfe zig-zags at its sublinear rate while away-step and
    // pairwise converge linearly (Lacoste-Julien & Jaggi 2015).
    for seed in [400u64, 401, 402] {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let points = random_points(&mut rng, 30, 6);
        let y: Vec<f64> = (0..6).map(|_| rng.random_range(-1.2..1.2)).collect();
        let hull = ConvexHull::new(DensePoints::new(points).unwrap()).unwrap();
        let tol = 1e-12;
        let classic = frank_wolfe_project_hull(
            &hull,
            &y,
            &settings(FrankWolfeVariant::Classic, tol, 20_000),
        )
        .unwrap();
        let ones = vec![1.0; 6];
        for variant in [FrankWolfeVariant::AwayStep, FrankWolfeVariant::Pairwise] {
            let res = frank_wolfe_project_hull(&hull, &y, &settings(variant, tol, 20_000)).unwrap();
            assert_eq!(res.status, SolveStatus::Converged);
            // Both are within √gap of the unique projection.
            let d = wdist2(&res.point, &classic.point, &ones).sqrt();
            assert!(d <= res.gap.sqrt() + classic.gap.sqrt() + 1e-12, "{d}");
            assert!(
                res.iterations < classic.iterations,
                "{variant:?}: {} vs classic {}",
                res.iterations,
                classic.iterations
            );
        }
    }
}

#[test]
fn capped_at_one_iteration_reports_max_iterations() {
    let (points, y, _) = instance(500, false);
    let hull = ConvexHull::new(DensePoints::new(points).unwrap()).unwrap();
    for variant in VARIANTS {
        let res = frank_wolfe_project_hull(&hull, &y, &settings(variant, 1e-14, 1)).unwrap();
        assert_eq!(res.status, SolveStatus::MaxIterations);
        assert_eq!(res.iterations, 1);
        // Start + the gap at the start + the gap at the final point (the accelerated
        // variant also counts its gradient and its step-size estimate).
        if variant != FrankWolfeVariant::Accelerated {
            assert_eq!(res.oracle_calls, 3);
        }
        assert!(res.gap > 0.0);
    }
    let res =
        frank_wolfe_project(&hull, &y, &settings(FrankWolfeVariant::Classic, 1e-14, 1)).unwrap();
    assert_eq!(res.status, SolveStatus::MaxIterations);
}

#[test]
fn settings_validation() {
    let hull =
        ConvexHull::new(DensePoints::new(vec![vec![0.0, 1.0], vec![1.0, 0.0]]).unwrap()).unwrap();
    let y = [2.0, 2.0];
    let bad = |s: FrankWolfeSettings| {
        matches!(
            frank_wolfe_project_hull(&hull, &y, &s),
            Err(GeometryError::InvalidSettings(_))
        )
    };
    let base = FrankWolfeSettings::default();
    assert!(base.check().is_ok());
    for tol in [f64::NAN, -1.0, f64::INFINITY] {
        let s = FrankWolfeSettings {
            relative_gap_tolerance: tol,
            ..base.clone()
        };
        assert!(s.check().is_err());
        assert!(bad(s));
    }
    assert!(bad(FrankWolfeSettings {
        max_iterations: 0,
        ..base.clone()
    }));
    for w in [
        vec![1.0],
        vec![1.0, 1.0, 1.0],
        vec![1.0, 0.0],
        vec![1.0, -2.0],
        vec![f64::NAN, 1.0],
    ] {
        assert!(bad(FrankWolfeSettings {
            weights: Some(w),
            ..base.clone()
        }));
    }
    assert!(
        FrankWolfeSettings::builder()
            .relative_gap_tolerance(f64::NAN)
            .build()
            .is_err()
    );
    assert!(
        FrankWolfeSettings::builder()
            .max_iterations(0)
            .build()
            .is_err()
    );
    assert!(
        FrankWolfeSettings::builder()
            .weights(vec![0.0])
            .build()
            .is_err()
    );
    let ok = FrankWolfeSettings::builder()
        .max_iterations(5)
        .relative_gap_tolerance(0.0)
        .variant(FrankWolfeVariant::AwayStep)
        .weights(vec![1.0, 2.0])
        .parallelism(Parallelism::Rayon)
        .build()
        .unwrap();
    assert!(frank_wolfe_project_hull(&hull, &y, &ok).is_ok());
    // Pairwise is fine on a hull, but refused by the generic (atom-less) entry point.
    assert!(!bad(FrankWolfeSettings {
        variant: FrankWolfeVariant::Pairwise,
        ..base.clone()
    }));
    assert!(matches!(
        frank_wolfe_project(
            &hull,
            &y,
            &FrankWolfeSettings {
                variant: FrankWolfeVariant::Pairwise,
                ..base.clone()
            }
        ),
        Err(GeometryError::InvalidSettings(_))
    ));
    // Wrong-length or non-finite targets.
    assert!(matches!(
        frank_wolfe_project_hull(&hull, &[1.0], &base),
        Err(GeometryError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        frank_wolfe_project_hull(&hull, &[1.0, f64::NAN], &base),
        Err(GeometryError::NonFinite(_))
    ));
}

/// Projection onto a ball has the closed form `c + r(y − c)/‖y − c‖` for y outside.
#[test]
fn ball_projection_matches_closed_form() {
    let mut rng = ChaCha20Rng::seed_from_u64(600);
    for _ in 0..10 {
        let dim = rng.random_range(2..=8usize);
        let center: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
        let radius = rng.random_range(0.5..2.0);
        let y: Vec<f64> = (0..dim).map(|_| rng.random_range(-6.0..6.0)).collect();
        let ball = Ball::new(center.clone(), radius).unwrap();
        let res = frank_wolfe_project(
            &ball,
            &y,
            &settings(FrankWolfeVariant::Classic, 1e-12, 100_000),
        )
        .unwrap();
        let ones = vec![1.0; dim];
        let dist = wdist2(&y, &center, &ones).sqrt();
        let expected: Vec<f64> = if dist <= radius {
            y.clone()
        } else {
            center
                .iter()
                .zip(&y)
                .map(|(c, yk)| c + radius * (yk - c) / dist)
                .collect()
        };
        let opt = wdist2(&y, &expected, &ones);
        assert!(res.objective - opt >= -1e-9 * (1.0 + opt));
        assert!(res.objective - opt <= res.gap + 1e-9 * (1.0 + opt));
        assert!(wdist2(&res.point, &expected, &ones) <= res.gap + 1e-12);
        assert!(res.atoms.is_empty());
    }
}

/// An approximate oracle: the ball oracle whose answer is shrunk towards the center, with
/// the honest slack. The reported gap must still bound the suboptimality.
struct SloppyBall(Ball);

impl LinearOracle for SloppyBall {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn linear_max(&self, c: &[f64], par: Parallelism) -> dp_geometry::Result<OracleAnswer> {
        let exact = self.0.linear_max(c, par)?;
        let center = self.0.center();
        let point: Vec<f64> = exact
            .point
            .iter()
            .zip(center)
            .map(|(p, ce)| ce + 0.9 * (p - ce))
            .collect();
        let value: f64 = point.iter().zip(c).map(|(a, b)| a * b).sum();
        Ok(OracleAnswer {
            slack: exact.value - value,
            value,
            point,
            atom: None,
        })
    }
}

#[test]
fn approximate_oracle_slack_enters_the_gap() {
    let center = vec![0.5, -0.5, 0.0];
    let ball = Ball::new(center.clone(), 1.0).unwrap();
    let y = vec![3.0, 1.0, -2.0];
    let res = frank_wolfe_project(
        &SloppyBall(ball),
        &y,
        &settings(FrankWolfeVariant::Classic, 1e-12, 200),
    )
    .unwrap();
    let dist = wdist2(&y, &center, &[1.0; 3]).sqrt();
    let opt = (dist - 1.0) * (dist - 1.0);
    assert!(res.objective - opt <= res.gap + 1e-12);
    // The inner ball of radius 0.9 is all this oracle reaches: the true suboptimality is
    // at least that of the radius-0.9 projection, and the gap must report it.
    assert!(res.gap >= (dist - 0.9).powi(2) - opt - 1e-9);
}
