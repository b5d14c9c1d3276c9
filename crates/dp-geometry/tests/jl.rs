//! Johnson–Lindenstrauss maps preserve norms and distances on a fixed seed.

use dp_geometry::{JlEntries, JohnsonLindenstrauss};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn norm2(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum()
}

/// 20 random vectors in R^1000 mapped to R^2000; every pairwise squared distance and every
/// squared norm (210 vectors in all) must be within 1 ± ε, ε = 0.25. By Achlioptas (2003,
/// Thm 1.1) each tail has probability ≤ exp(−k(ε²/2 − ε³/3)/2) = exp(−26.0) ≈ 4.9e-12,
/// so a false failure has probability ≤ 2·210·4.9e-12 ≈ 2e-9 per entry distribution.
#[test]
fn norms_and_distances_preserved() {
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    let (d, k, eps) = (1000, 2000, 0.25);
    let xs: Vec<Vec<f64>> = (0..20)
        .map(|_| (0..d).map(|_| rng.random_range(-1.0..1.0)).collect())
        .collect();
    for entries in [JlEntries::Rademacher, JlEntries::Gaussian] {
        let map = JohnsonLindenstrauss::with_entries(d, k, entries, &mut rng).unwrap();
        assert_eq!(
            (map.input_dim(), map.output_dim(), map.entries()),
            (d, k, entries)
        );
        let ys: Vec<Vec<f64>> = xs.iter().map(|x| map.apply(x).unwrap()).collect();
        for i in 0..xs.len() {
            let r = norm2(&ys[i]) / norm2(&xs[i]);
            assert!((r - 1.0).abs() < eps, "{entries:?}: norm ratio {r}");
            for j in i + 1..xs.len() {
                let dx: Vec<f64> = xs[i].iter().zip(&xs[j]).map(|(a, b)| a - b).collect();
                let dy: Vec<f64> = ys[i].iter().zip(&ys[j]).map(|(a, b)| a - b).collect();
                let r = norm2(&dy) / norm2(&dx);
                assert!((r - 1.0).abs() < eps, "{entries:?}: distance ratio {r}");
            }
        }
    }
    // Linearity, exactly as the matrix acts: Π(2x) = 2Πx.
    let map = JohnsonLindenstrauss::new(d, 50, &mut rng).unwrap();
    let y = map.apply(&xs[0]).unwrap();
    let x2: Vec<f64> = xs[0].iter().map(|v| 2.0 * v).collect();
    let y2 = map.apply(&x2).unwrap();
    assert!(y.iter().zip(&y2).all(|(a, b)| (2.0 * a - b).abs() < 1e-12));
}

#[test]
fn rademacher_entries_are_plus_minus_one_over_sqrt_k() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let map = JohnsonLindenstrauss::new(3, 4, &mut rng).unwrap();
    for e in 0..3 {
        let mut unit = [0.0; 3];
        unit[e] = 1.0;
        for v in map.apply(&unit).unwrap() {
            assert!((v.abs() - 0.5).abs() < 1e-15);
        }
    }
}

#[test]
fn validation_and_dimension_bound() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    assert!(JohnsonLindenstrauss::new(0, 3, &mut rng).is_err());
    assert!(JohnsonLindenstrauss::new(3, 0, &mut rng).is_err());
    let map = JohnsonLindenstrauss::new(3, 2, &mut rng).unwrap();
    assert!(map.apply(&[1.0, 2.0]).is_err());
    assert!(map.apply(&[1.0, 2.0, f64::NAN]).is_err());
    let mut out = [0.0; 3];
    assert!(map.apply_into(&[1.0, 2.0, 3.0], &mut out).is_err());
    // By hand: N = 2, ε = 1/2, β = 1/2: rate = 1/8 − 1/24 = 1/12, ln(2·1/0.5) = ln 4,
    // k ≥ 24·ln 4 = 33.27 → 34.
    assert_eq!(
        JohnsonLindenstrauss::dimension_for(2, 0.5, 0.5).unwrap(),
        34
    );
    assert!(JohnsonLindenstrauss::dimension_for(10, 1.0, 0.5).is_err());
    assert!(JohnsonLindenstrauss::dimension_for(10, 0.5, 0.0).is_err());
}

/// `apply_rows` (one faer product) equals `apply` row by row up to rounding of the sums
/// (`|Δ| ≤ 2·d·u·Σ_j |Π_ij x_j|` per entry), sequential and over rayon, and refuses a
/// length that is not a whole number of rows.
#[test]
fn apply_rows_is_apply_on_every_row() {
    use dp_geometry::Parallelism;
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    let (d, k, rows) = (300, 64, 170);
    let map = JohnsonLindenstrauss::new(d, k, &mut rng).unwrap();
    let m: Vec<f64> = (0..rows * d)
        .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
        .collect();
    let scale = 1.0 / (k as f64).sqrt();
    for par in [Parallelism::None, Parallelism::Rayon] {
        let all = map.apply_rows(&m, par).unwrap();
        assert_eq!(all.len(), rows * k);
        for (row, got) in m.chunks_exact(d).zip(all.chunks_exact(k)) {
            let want = map.apply(row).unwrap();
            let bound =
                2.0 * d as f64 * f64::EPSILON * scale * row.iter().map(|x| x.abs()).sum::<f64>();
            for (g, w) in got.iter().zip(&want) {
                approx::assert_abs_diff_eq!(*g, *w, epsilon = bound);
            }
        }
    }
    assert!(map.apply_rows(&m[..d + 1], Parallelism::None).is_err());
    assert!(map.apply_rows(&[], Parallelism::None).unwrap().is_empty());
}
