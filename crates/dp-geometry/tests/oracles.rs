//! Point sets, linear oracles and the Gaussian mean width.

mod common;

use common::random_points;
use dp_geometry::{
    Ball, BlockOneHotPoints, ConvexHull, DensePoints, GeometryError, LinearOracle, Parallelism,
    PointSet, SubsetPoints, SymmetricHull, fill_standard_normal, gaussian_mean_width,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn naive_dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn dense_points_kernels_match_naive_loops() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let pts = random_points(&mut rng, 3000, 13);
    let set = DensePoints::new(pts.clone()).unwrap();
    let c: Vec<f64> = (0..13).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut seq = vec![0.0; 3000];
    let mut par = vec![0.0; 3000];
    set.inner_all(&c, &mut seq, Parallelism::None);
    set.inner_all(&c, &mut par, Parallelism::Rayon);
    for (i, p) in pts.iter().enumerate() {
        let expected = naive_dot(p, &c);
        assert!((seq[i] - expected).abs() < 1e-12);
        assert!((par[i] - expected).abs() < 1e-12);
        assert!((set.inner(i, &c) - expected).abs() < 1e-12);
    }
    let mut out = vec![1.0; 13];
    set.add_scaled(5, -2.0, &mut out);
    for k in 0..13 {
        assert_eq!(out[k], 1.0 - 2.0 * pts[5][k]);
    }
    // Validation.
    assert!(DensePoints::new(vec![]).is_err());
    assert!(DensePoints::new(vec![vec![1.0], vec![1.0, 2.0]]).is_err());
    assert!(matches!(
        DensePoints::new(vec![vec![f64::NAN]]),
        Err(GeometryError::NonFinite(_))
    ));
    assert!(DensePoints::from_flat(0, vec![]).is_err());
    assert!(DensePoints::from_flat(2, vec![1.0; 3]).is_err());
}

/// Block one-hot points against their explicit dense 0/1 vectors, for one-byte and
/// two-byte cell storage, through the default and the overridden batch kernels.
#[test]
fn block_one_hot_points_match_dense_reference() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for sizes in [vec![2usize, 3, 8, 1, 5], vec![300, 4, 7]] {
        let n = 2500;
        let blocks = sizes.len();
        let cells: Vec<u16> = (0..n * blocks)
            .map(|k| rng.random_range(0..sizes[k % blocks] as u16))
            .collect();
        let set = BlockOneHotPoints::new(&sizes, &cells).unwrap();
        let dim: usize = sizes.iter().sum();
        assert_eq!(set.dim(), dim);
        assert_eq!(set.len(), n);
        let mut dense = Vec::new();
        for i in 0..n {
            let mut p = vec![0.0; dim];
            let mut off = 0;
            for b in 0..blocks {
                p[off + cells[i * blocks + b] as usize] = 1.0;
                off += sizes[b];
            }
            dense.push(p);
        }
        let c: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut seq = vec![0.0; n];
        let mut par = vec![0.0; n];
        set.inner_all(&c, &mut seq, Parallelism::None);
        set.inner_all(&c, &mut par, Parallelism::Rayon);
        let sub = SubsetPoints::new(&set, (0..n).collect()).unwrap();
        let mut via_default = vec![0.0; n];
        sub.inner_all(&c, &mut via_default, Parallelism::Rayon);
        for i in 0..n {
            let expected = naive_dot(&dense[i], &c);
            for got in [seq[i], par[i], via_default[i], set.inner(i, &c)] {
                assert!((got - expected).abs() < 1e-12);
            }
            let mut w = vec![0.0; dim];
            set.write_point(i, &mut w);
            assert_eq!(w, dense[i]);
        }
        assert_eq!(set.cell(3, 1), Some(cells[3 * blocks + 1] as usize));
        assert_eq!(set.cell(n, 0), None);
    }
    assert!(BlockOneHotPoints::new(&[], &[]).is_err());
    assert!(BlockOneHotPoints::new(&[2, 0], &[0, 0]).is_err());
    assert!(BlockOneHotPoints::new(&[2, 3], &[0, 3]).is_err());
    assert!(BlockOneHotPoints::new(&[2, 3], &[0, 1, 1]).is_err());
}

#[test]
fn hull_oracles_match_brute_force() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let pts = random_points(&mut rng, 40, 6);
    let hull = ConvexHull::new(DensePoints::new(pts.clone()).unwrap()).unwrap();
    let sym = SymmetricHull::new(DensePoints::new(pts.clone()).unwrap()).unwrap();
    for _ in 0..20 {
        let c: Vec<f64> = (0..6).map(|_| rng.random_range(-1.0..1.0)).collect();
        let best = pts
            .iter()
            .map(|p| naive_dot(p, &c))
            .fold(f64::NEG_INFINITY, f64::max);
        let a = hull.linear_max(&c, Parallelism::None).unwrap();
        assert!((a.value - best).abs() < 1e-12);
        let atom = a.atom.unwrap();
        assert_eq!(a.point, pts[atom]);
        assert_eq!(a.slack, 0.0);
        let best_abs = pts
            .iter()
            .map(|p| naive_dot(p, &c).abs())
            .fold(0.0, f64::max);
        let s = sym.linear_max(&c, Parallelism::Rayon).unwrap();
        assert!((s.value - best_abs).abs() < 1e-12);
        let atom = s.atom.unwrap();
        let expected: Vec<f64> = if atom < 40 {
            pts[atom].clone()
        } else {
            pts[atom - 40].iter().map(|x| -x).collect()
        };
        assert_eq!(s.point, expected);
    }
    assert!(hull.linear_max(&[1.0], Parallelism::None).is_err());
    assert!(hull.linear_max(&[f64::NAN; 6], Parallelism::None).is_err());
}

/// The ball's oracle in closed form: the answer lies on the sphere, in the direction of
/// `c`, and beats every sampled point of the ball.
#[test]
fn ball_oracle_closed_form() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let center = vec![1.0, -2.0, 0.5];
    let ball = Ball::new(center.clone(), 2.0).unwrap();
    // Hand-computed: c = (3, 4, 0) has norm 5, so v = center + 2·(0.6, 0.8, 0)
    // = (2.2, −0.4, 0.5) and value = ⟨c, center⟩ + 2·5 = (3 − 8) + 10 = 5.
    let a = ball
        .linear_max(&[3.0, 4.0, 0.0], Parallelism::None)
        .unwrap();
    for (got, want) in a.point.iter().zip([2.2, -0.4, 0.5]) {
        assert!((got - want).abs() < 1e-12);
    }
    assert!((a.value - 5.0).abs() < 1e-12);
    assert_eq!(a.atom, None);
    // c = 0: any point is optimal; the center is returned with value 0.
    let z = ball.linear_max(&[0.0; 3], Parallelism::None).unwrap();
    assert_eq!(z.point, center);
    assert_eq!(z.value, 0.0);
    for _ in 0..100 {
        let c: Vec<f64> = (0..3).map(|_| rng.random_range(-1.0..1.0)).collect();
        let a = ball.linear_max(&c, Parallelism::None).unwrap();
        let u: Vec<f64> = (0..3).map(|_| rng.random_range(-1.0..1.0)).collect();
        let un = naive_dot(&u, &u).sqrt();
        let inside: Vec<f64> = center
            .iter()
            .zip(&u)
            .map(|(ce, x)| ce + 2.0 * x / un.max(1.0))
            .collect();
        assert!(naive_dot(&c, &inside) <= a.value + 1e-12);
    }
    assert!(Ball::new(vec![], 1.0).is_err());
    assert!(Ball::new(vec![0.0], -1.0).is_err());
    assert!(Ball::new(vec![0.0], f64::NAN).is_err());
}

/// Moments of the Box–Muller sampler. With N = 400 000: the sample mean has sd 1/√N, the
/// sample second moment sd √(2/N) (Var Z² = 2), the empirical P(Z ≤ 1) sd √(p(1−p)/N).
/// Each check allows 5.3 sd: two-sided normal tail ≈ 1.2e-7, three checks ≈ 4e-7.
#[test]
fn box_muller_moments() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let n = 400_000;
    let mut z = vec![0.0; n];
    fill_standard_normal(&mut rng, &mut z);
    let nf = n as f64;
    let mean = z.iter().sum::<f64>() / nf;
    let m2 = z.iter().map(|x| x * x).sum::<f64>() / nf;
    // Φ(1) = 0.841344746068543 (standard normal table).
    let p = 0.841_344_746_068_543;
    let frac = z.iter().filter(|&&x| x <= 1.0).count() as f64 / nf;
    assert!(mean.abs() < 5.3 / nf.sqrt(), "{mean}");
    assert!((m2 - 1.0).abs() < 5.3 * (2.0 / nf).sqrt(), "{m2}");
    assert!(
        (frac - p).abs() < 5.3 * (p * (1.0 - p) / nf).sqrt(),
        "{frac}"
    );
    // Odd lengths fill the last entry too.
    let mut odd = [f64::NAN; 3];
    fill_standard_normal(&mut rng, &mut odd);
    assert!(odd.iter().all(|x| x.is_finite()));
}

/// `E‖g‖₂ = √2·Γ((d+1)/2)/Γ(d/2)` for `g ~ N(0, I_d)`, computed here by the recurrence
/// `r_{d+2} = r_d·(d+1)/d` from `r_1 = 1/√π`, `r_2 = √π/2` (`r_d = Γ((d+1)/2)/Γ(d/2)`).
fn expected_norm(d: usize) -> f64 {
    let pi = std::f64::consts::PI;
    let mut r = if d % 2 == 1 {
        1.0 / pi.sqrt()
    } else {
        pi.sqrt() / 2.0
    };
    let mut k = 2 - d % 2;
    while k < d {
        r *= (k as f64 + 1.0) / k as f64;
        k += 2;
    }
    2f64.sqrt() * r
}

/// Mean width of the unit ball is `E‖g‖`. The variance of one sample is `d − μ²` exactly,
/// so the estimate's sd is `√((d − μ²)/N)`; allowing 5 sd gives a two-sided false-failure
/// probability ≈ 5.7e-7 per dimension (CLT).
#[test]
fn mean_width_of_unit_ball() {
    // Sanity of the reference: d = 1 gives E|g| = √(2/π); d = 2 gives √(π/2).
    assert!((expected_norm(1) - (2.0 / std::f64::consts::PI).sqrt()).abs() < 1e-15);
    assert!((expected_norm(2) - (std::f64::consts::PI / 2.0).sqrt()).abs() < 1e-15);
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let n = 20_000;
    for d in [1usize, 5, 40] {
        let ball = Ball::unit(d).unwrap();
        let (mean, se) = gaussian_mean_width(&ball, n, Parallelism::None, &mut rng).unwrap();
        let mu = expected_norm(d);
        let sd = ((d as f64 - mu * mu) / n as f64).sqrt();
        assert!((mean - mu).abs() < 5.0 * sd, "d = {d}: {mean} vs {mu}");
        // The reported standard error estimates sd (within 10% at N = 20 000).
        assert!((se / sd - 1.0).abs() < 0.1);
    }
    assert!(gaussian_mean_width(&Ball::unit(2).unwrap(), 1, Parallelism::None, &mut rng).is_err());
}

/// Mean width of a segment `conv{a, b}`: `E max(⟨g,a⟩, ⟨g,b⟩) = E|⟨g, a − b⟩|/2 =
/// ‖a − b‖/√(2π)` (the mean of `(⟨g,a⟩+⟨g,b⟩)/2` is 0). A sample has variance at most
/// `E max² ≤ ‖a‖² + ‖b‖²`; 5 of those sd give false failure ≤ 5.7e-7 (CLT). Works through
/// `&mut dyn CryptoRng` too.
#[test]
fn mean_width_of_a_segment() {
    let a = vec![1.0, 2.0, -1.0, 0.0];
    let b = vec![-1.0, 0.0, 1.0, 3.0];
    let diff: f64 = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    let expected = diff / (2.0 * std::f64::consts::PI).sqrt();
    let hull = ConvexHull::new(DensePoints::new(vec![a.clone(), b.clone()]).unwrap()).unwrap();
    let n = 20_000;
    let mut chacha = ChaCha20Rng::seed_from_u64(8);
    let rng: &mut dyn rand::CryptoRng = &mut chacha;
    let (mean, _) = gaussian_mean_width(&hull, n, Parallelism::None, rng).unwrap();
    let sd = ((naive_dot(&a, &a) + naive_dot(&b, &b)) / n as f64).sqrt();
    assert!((mean - expected).abs() < 5.0 * sd, "{mean} vs {expected}");
}
