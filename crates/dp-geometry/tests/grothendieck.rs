//! The bipartite Grothendieck SDP (mixing method, certified bound, rounding) and the parity
//! relaxation of seed 000 §4.

use dp_geometry::{
    CertificateMethod, FrankWolfeSettings, GeometryError, GrothendieckSettings, GrothendieckStatus,
    LinearOracle, Parallelism, ParityRelaxation, bilinear_value, frank_wolfe_project, index_sets,
    round_to_signs, solve_grothendieck,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// An upper bound on Grothendieck's constant (Krivine 1979).
const K_G: f64 = 1.7823;

fn random_matrix(rng: &mut ChaCha20Rng, rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect()
}

/// `max_{x,y ∈ ±1} xᵀCy` by brute force over `x` (the best `y` is `sign(Cᵀx)`, value
/// `Σ_τ |(Cᵀx)_τ|`).
fn brute_force_best(c: &[f64], rows: usize, cols: usize) -> f64 {
    let mut best = f64::NEG_INFINITY;
    for mask in 0u32..(1 << rows) {
        let mut total = 0.0;
        for t in 0..cols {
            let mut z = 0.0;
            for s in 0..rows {
                let xs = if mask >> s & 1 == 1 { -1.0 } else { 1.0 };
                z += c[s * cols + t] * xs;
            }
            total += f64::abs(z);
        }
        best = best.max(total);
    }
    best
}

#[test]
fn oracle_value_lies_between_best_signs_and_k_g_times_it() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let settings = GrothendieckSettings::default();
    let mut dense_certificates = 0;
    for trial in 0..40 {
        let rows = rng.random_range(1..=7usize);
        let cols = rng.random_range(1..=7usize);
        let c = random_matrix(&mut rng, rows, cols);
        let best = brute_force_best(&c, rows, cols);
        let sol = solve_grothendieck(&c, rows, cols, &settings).unwrap();
        let tol = 1e-7 * (1.0 + best.abs());
        assert!(
            sol.value >= best - tol,
            "trial {trial}: {} < {best}",
            sol.value
        );
        assert!(sol.value <= K_G * best + tol, "trial {trial}");
        assert!(sol.upper_bound >= sol.value, "trial {trial}");
        assert!(sol.upper_bound >= best - tol, "trial {trial}");
        assert!(sol.upper_bound <= K_G * best + 1e-6, "trial {trial}");
        // Small instances are solved to a certified gap.
        assert!(
            sol.gap <= 1e-6 * (1.0 + best),
            "trial {trial}: gap {}",
            sol.gap
        );
        assert_eq!(sol.status, GrothendieckStatus::Converged);
        assert!(sol.cycles >= 1 && sol.cycles <= settings.max_cycles);
        if sol.certificate == CertificateMethod::Cholesky {
            dense_certificates += 1;
        }
        // The value is that of the returned vectors.
        let gram = sol.gram_matrix();
        let direct: f64 = gram.iter().zip(&c).map(|(g, ci)| g * ci).sum();
        assert!((direct - sol.value).abs() <= 1e-9 * (1.0 + best));
    }
    // The Gershgorin bound wins only on degenerate (e.g. one-row) instances.
    assert!(dense_certificates >= 20, "{dense_certificates}");
}

#[test]
fn vectors_have_unit_norm() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    for (rows, cols) in [(1, 1), (3, 9), (12, 5), (30, 30)] {
        let c = random_matrix(&mut rng, rows, cols);
        let sol = solve_grothendieck(&c, rows, cols, &GrothendieckSettings::default()).unwrap();
        assert_eq!(
            sol.rank,
            (2.0 * (rows + cols) as f64).sqrt().ceil() as usize
        );
        for s in 0..rows {
            let n: f64 = sol.row_vector(s).iter().map(|x| x * x).sum();
            assert!((n.sqrt() - 1.0).abs() <= 1e-9);
        }
        for t in 0..cols {
            let n: f64 = sol.col_vector(t).iter().map(|x| x * x).sum();
            assert!((n.sqrt() - 1.0).abs() <= 1e-9);
        }
        assert!(sol.gram_matrix().iter().all(|g| g.abs() <= 1.0 + 1e-9));
    }
}

#[test]
fn rank_one_cost_has_value_l1_times_l1() {
    // For C = a bᵀ, SDP(C) = max ⟨Σ a_σ u_σ, Σ b_τ v_τ⟩ = ‖a‖₁‖b‖₁.
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    for (rows, cols) in [(2, 3), (8, 8), (25, 40)] {
        let a: Vec<f64> = (0..rows).map(|_| rng.random_range(-2.0..2.0)).collect();
        let b: Vec<f64> = (0..cols).map(|_| rng.random_range(-2.0..2.0)).collect();
        let c: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| x * y))
            .collect();
        let exact = a.iter().map(|x| x.abs()).sum::<f64>() * b.iter().map(|y| y.abs()).sum::<f64>();
        let sol = solve_grothendieck(&c, rows, cols, &GrothendieckSettings::default()).unwrap();
        assert!(
            (sol.value - exact).abs() <= 1e-8 * exact,
            "{} vs {exact}",
            sol.value
        );
        assert!(sol.upper_bound >= exact - 1e-9 * exact);
        assert!(
            (sol.upper_bound - exact).abs() <= 1e-6 * exact,
            "{} vs {exact}",
            sol.upper_bound
        );
    }
}

#[test]
fn certified_bound_holds_far_from_the_optimum_and_with_gershgorin() {
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    for trial in 0..30 {
        let rows = rng.random_range(2..=7usize);
        let cols = rng.random_range(2..=7usize);
        let c = random_matrix(&mut rng, rows, cols);
        let best = brute_force_best(&c, rows, cols);
        let exact = solve_grothendieck(&c, rows, cols, &GrothendieckSettings::default())
            .unwrap()
            .value;
        // One cycle from a rank-1 start: far from stationary, the dual candidate is not
        // feasible and the certificate must shift it.
        let early = GrothendieckSettings {
            max_cycles: 1,
            rank: Some(1),
            seed: trial,
            ..Default::default()
        };
        let sol = solve_grothendieck(&c, rows, cols, &early).unwrap();
        assert_eq!(sol.status, GrothendieckStatus::MaxCycles);
        assert!(sol.upper_bound >= exact - 1e-9, "trial {trial}");
        assert!(sol.upper_bound >= best - 1e-9, "trial {trial}");
        let gersh = GrothendieckSettings {
            dense_certificate_limit: 0,
            ..Default::default()
        };
        let sol = solve_grothendieck(&c, rows, cols, &gersh).unwrap();
        assert_eq!(sol.certificate, CertificateMethod::Gershgorin);
        assert!(sol.upper_bound >= exact - 1e-9, "trial {trial}");
        // Gershgorin on the dual never beats the trivial bound Σ|C| by much, nor is it below
        // the optimum.
        let l1: f64 = c.iter().map(|x| x.abs()).sum();
        assert!(sol.upper_bound <= l1 + 1e-9);
    }
}

#[test]
fn rounding_returns_signs_whose_value_is_below_the_oracle() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    for _ in 0..20 {
        let rows = rng.random_range(1..=7usize);
        let cols = rng.random_range(1..=7usize);
        let c = random_matrix(&mut rng, rows, cols);
        let best = brute_force_best(&c, rows, cols);
        let sol = solve_grothendieck(&c, rows, cols, &GrothendieckSettings::default()).unwrap();
        let signs = round_to_signs(&c, &sol, 8, 3).unwrap();
        assert!(
            signs
                .row_signs
                .iter()
                .chain(&signs.col_signs)
                .all(|s| s.abs() == 1.0)
        );
        let v = bilinear_value(&c, rows, cols, &signs.row_signs, &signs.col_signs).unwrap();
        assert!((v - signs.value).abs() <= 1e-12 * (1.0 + v.abs()));
        assert!(signs.value <= best + 1e-9);
        assert!(signs.value <= sol.upper_bound + 1e-12);
        assert!(signs.value <= sol.value + 1e-7 * (1.0 + best));
        // Best responses make both sign vectors mutually optimal, hence above 1/K_G of the
        // oracle value on these tiny instances with several draws.
        assert!(signs.value >= sol.value / K_G - 1e-9);
    }
}

#[test]
fn bad_input_and_settings_are_errors() {
    let c = vec![1.0, 2.0, 3.0, 4.0];
    let ok = GrothendieckSettings::default();
    assert!(matches!(
        solve_grothendieck(&c, 2, 3, &ok),
        Err(GeometryError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        solve_grothendieck(&[], 0, 3, &ok),
        Err(GeometryError::Empty(_))
    ));
    assert!(matches!(
        solve_grothendieck(&[1.0, f64::NAN, 0.0, 1.0], 2, 2, &ok),
        Err(GeometryError::NonFinite(_))
    ));
    assert!(matches!(
        solve_grothendieck(&c, usize::MAX, 2, &ok),
        Err(GeometryError::InvalidParameter { .. })
    ));
    for bad in [
        GrothendieckSettings {
            max_cycles: 0,
            ..Default::default()
        },
        GrothendieckSettings {
            relative_tolerance: f64::NAN,
            ..Default::default()
        },
        GrothendieckSettings {
            relative_tolerance: -1.0,
            ..Default::default()
        },
        GrothendieckSettings {
            rank: Some(0),
            ..Default::default()
        },
    ] {
        let err = solve_grothendieck(&c, 2, 2, &bad).unwrap_err();
        assert!(matches!(err, GeometryError::InvalidSettings(_)));
        assert!(!err.to_string().contains("Some("), "{err}");
    }
    let sol = solve_grothendieck(&c, 2, 2, &ok).unwrap();
    assert!(round_to_signs(&c, &sol, 0, 1).is_err());
    assert!(round_to_signs(&c[..3], &sol, 1, 1).is_err());
    assert!(bilinear_value(&c, 2, 2, &[1.0], &[1.0, 1.0]).is_err());
    // The zero matrix: value and bound 0.
    let z = solve_grothendieck(&[0.0; 6], 2, 3, &ok).unwrap();
    assert_eq!(z.value, 0.0);
    assert!(z.upper_bound.abs() <= 1e-12);
}

#[test]
fn index_sets_are_all_small_subsets_in_order() {
    let sets = index_sets(5, 2, usize::MAX).unwrap();
    assert_eq!(sets.len(), 1 + 5 + 10);
    assert_eq!(sets[0], Vec::<usize>::new());
    assert_eq!(sets[1], vec![0]);
    assert_eq!(sets[6], vec![0, 1]);
    assert_eq!(sets[15], vec![3, 4]);
    for w in sets.windows(2) {
        assert!((w[0].len(), &w[0]) < (w[1].len(), &w[1]));
    }
    assert!(sets.iter().all(|s| s.windows(2).all(|p| p[0] < p[1])));
    // Sizes above d stop at d.
    assert_eq!(index_sets(3, 7, usize::MAX).unwrap().len(), 8);
    assert!(index_sets(30, 3, 100).is_err());
}

fn all_records(d: usize) -> Vec<Vec<bool>> {
    (0u32..1 << d)
        .map(|m| (0..d).map(|i| m >> i & 1 == 1).collect())
        .collect()
}

#[test]
fn every_record_point_lies_in_the_relaxation() {
    // K ⊆ L for the subset indexing: each record's matrix is attained by unit vectors, its
    // entries are the parities of the symmetric differences, every parity of degree ≤ k
    // occurs, and the oracle's maximum is never below a record's value (±).
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    for d in 1..=4 {
        for k in 1..=4 {
            let relax = ParityRelaxation::new(d, k, GrothendieckSettings::default()).unwrap();
            let (m, n) = (relax.row_sets().len(), relax.col_sets().len());
            assert!(relax.row_sets().iter().all(|s| s.len() <= k.div_ceil(2)));
            assert!(relax.col_sets().iter().all(|s| s.len() <= k / 2));
            assert_eq!(relax.dim(), m * n);
            let mut seen = std::collections::BTreeSet::new();
            for i in 0..m {
                for j in 0..n {
                    seen.insert(relax.entry_parity(i, j).unwrap());
                }
            }
            let expected: usize = (0..=k.min(d)).map(|s| binomial(d, s)).sum();
            assert_eq!(seen.len(), expected, "d={d} k={k}");
            let directions: Vec<Vec<f64>> = (0..3).map(|_| random_matrix(&mut rng, m, n)).collect();
            let maxima: Vec<f64> = directions
                .iter()
                .map(|c| {
                    let a = relax.linear_max(c, Parallelism::None).unwrap();
                    a.value + a.slack
                })
                .collect();
            for bits in all_records(d) {
                let (u, v) = relax.record_vectors(&bits).unwrap();
                assert!(u.iter().chain(&v).all(|x| x.abs() == 1.0));
                let p = relax.record_point(&bits).unwrap();
                for i in 0..m {
                    for j in 0..n {
                        assert_eq!(p[i * n + j], u[i] * v[j]);
                        let parity: f64 = relax
                            .entry_parity(i, j)
                            .unwrap()
                            .iter()
                            .map(|&a| if bits[a] { -1.0 } else { 1.0 })
                            .product();
                        assert_eq!(p[i * n + j], parity);
                    }
                }
                for (c, max) in directions.iter().zip(&maxima) {
                    let val: f64 = p.iter().zip(c).map(|(a, b)| a * b).sum();
                    assert!(val.abs() <= max + 1e-9);
                }
            }
        }
    }
}

fn binomial(n: usize, k: usize) -> usize {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

#[test]
fn relaxation_validates_and_serves_frank_wolfe() {
    assert!(ParityRelaxation::new(0, 2, GrothendieckSettings::default()).is_err());
    assert!(ParityRelaxation::new(3, 0, GrothendieckSettings::default()).is_err());
    assert!(ParityRelaxation::new(10_000, 6, GrothendieckSettings::default()).is_err());
    let relax = ParityRelaxation::new(4, 2, GrothendieckSettings::default()).unwrap();
    assert!(relax.record_point(&[true]).is_err());
    assert!(relax.entry_parity(99, 0).is_err());
    assert!(relax.linear_max(&[1.0], Parallelism::None).is_err());
    // Projecting the average of two record points (a point of K) onto L: objective ≈ 0.
    let p1 = relax.record_point(&[true, false, false, true]).unwrap();
    let p2 = relax.record_point(&[false, false, true, true]).unwrap();
    let y: Vec<f64> = p1.iter().zip(&p2).map(|(a, b)| 0.5 * (a + b)).collect();
    let fw = FrankWolfeSettings {
        max_iterations: 200,
        relative_gap_tolerance: 1e-4,
        ..Default::default()
    };
    let res = frank_wolfe_project(&relax, &y, &fw).unwrap();
    assert!(res.objective <= 1e-2, "objective {}", res.objective);
    // A target far outside L (entries 3) is projected to a point with entries in [−1, 1].
    let far = vec![3.0; relax.dim()];
    let res = frank_wolfe_project(&relax, &far, &fw).unwrap();
    assert!(res.point.iter().all(|x| x.abs() <= 1.0 + 1e-9));
    // The all-ones matrix is in L (all vectors equal), so the projection is close to it.
    assert!(res.point.iter().all(|x| (x - 1.0).abs() <= 0.05));
}

/// The warm start and the rayon split of the fields and of the certificate: on an instance
/// large enough to take the parallel paths (600 × 600, rank 35: 12.6 M multiply-adds per
/// field) the parallel solve equals the serial one bit for bit, and a warm start from the
/// solution of a perturbed matrix reaches the same value within the solver's tolerance in
/// fewer cycles, with a certified bound that still holds (≥ the value and ≥ the best of
/// many rounded sign assignments).
#[test]
fn warm_start_and_parallel_solves_agree_with_the_cold_serial_solve() {
    use dp_geometry::solve_grothendieck_from;
    let mut rng = ChaCha20Rng::seed_from_u64(21);
    let n = 600;
    let c = random_matrix(&mut rng, n, n);
    let settings = GrothendieckSettings {
        max_cycles: 500,
        relative_tolerance: 1e-6,
        ..GrothendieckSettings::default()
    };
    let serial = solve_grothendieck_from(&c, n, n, &settings, None, Parallelism::None).unwrap();
    let parallel = solve_grothendieck_from(&c, n, n, &settings, None, Parallelism::Rayon).unwrap();
    assert_eq!(serial.value.to_bits(), parallel.value.to_bits());
    assert_eq!(serial.upper_bound.to_bits(), parallel.upper_bound.to_bits());
    assert_eq!(serial.cycles, parallel.cycles);
    assert_eq!(serial.certificate, CertificateMethod::Cholesky);
    // a nearby matrix, cold and warm
    let c2: Vec<f64> = c
        .iter()
        .map(|x| 0.98 * x + 0.02 * rng.random_range(-1.0..1.0))
        .collect();
    let cold = solve_grothendieck_from(&c2, n, n, &settings, None, Parallelism::Rayon).unwrap();
    let warm =
        solve_grothendieck_from(&c2, n, n, &settings, Some(&serial), Parallelism::Rayon).unwrap();
    assert!(
        warm.cycles < cold.cycles,
        "{} vs {}",
        warm.cycles,
        cold.cycles
    );
    // both within 1e-3 relative of each other (each stops when a cycle gains < 1e-6
    // relative; the mixing method's values at such points agree far closer than this)
    assert!(
        (warm.value - cold.value).abs() <= 1e-3 * cold.value.abs(),
        "{} vs {}",
        warm.value,
        cold.value
    );
    for sol in [&cold, &warm] {
        assert!(sol.upper_bound >= sol.value);
        let signs = round_to_signs(&c2, sol, 20, 5).unwrap();
        assert!(sol.upper_bound >= signs.value - 1e-9 * signs.value.abs());
        // the dense certificate stays far below the trivial bound Σ|C|
        let trivial: f64 = c2.iter().map(|x| x.abs()).sum();
        assert!(
            sol.upper_bound < 0.2 * trivial,
            "{} vs {trivial}",
            sol.upper_bound
        );
    }
    // a start of another shape is ignored (random start: the cold solve)
    let small = solve_grothendieck(&c[..4 * 4], 4, 4, &settings).unwrap();
    let ignored =
        solve_grothendieck_from(&c2, n, n, &settings, Some(&small), Parallelism::None).unwrap();
    assert_eq!(ignored.value.to_bits(), cold.value.to_bits());
}
