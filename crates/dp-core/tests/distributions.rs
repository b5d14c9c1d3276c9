//! Tiers (c) and (d) for the samplers: goodness of fit against the exact pmf/CDF and
//! variance against exact formulas, with fixed seeds.
//!
//! Calibration: every χ² test rejects at the critical value with upper-tail probability
//! 1e-6 (computed by `common::chi2_critical` from a regularized incomplete gamma,
//! checked against closed forms); KS tests use the DKW–Massart bound at 1e-6; moment
//! checks use |z| ≤ 5 from the CLT (two-sided 5.7e-7). A test function with m checks
//! therefore has false-failure probability below m·1e-6.

mod common;

use common::{ALPHA, Z, chi2_critical, chi2_integer, ks_critical, ks_distance, normal_cdf};
use dp_core::*;
use num_rational::BigRational;

const N: usize = 200_000;

/// Discrete Laplace pmf: (1 − q)/(1 + q)·q^|k| with q = e^{−1/scale}.
fn dlap_pmf(scale: f64) -> impl Fn(i64) -> f64 {
    let q = (-1.0 / scale).exp();
    move |k| (1.0 - q) / (1.0 + q) * q.powi(k.unsigned_abs() as i32)
}

/// Discrete Gaussian pmf, normalised by direct summation over |k| ≤ 40σ + 50.
fn dgauss_pmf(sigma2: f64) -> (impl Fn(i64) -> f64, i64) {
    let r = (40.0 * sigma2.sqrt() + 50.0) as i64;
    let z: f64 = (-r..=r)
        .map(|k| (-(k * k) as f64 / (2.0 * sigma2)).exp())
        .sum();
    (
        move |k: i64| (-(k as f64).powi(2) / (2.0 * sigma2)).exp() / z,
        r,
    )
}

/// Asserts the mean of x² matches `var` within Z standard errors, where the standard
/// error uses the exact fourth moment `m4`.
fn check_second_moment(samples: &[i64], var: f64, m4: f64, what: &str) {
    let n = samples.len() as f64;
    let m2 = samples.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / n;
    let se = ((m4 - var * var) / n).sqrt();
    assert!(
        (m2 - var).abs() <= Z * se,
        "{what}: E[x²] = {m2}, exact {var}, se {se}"
    );
    let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
    assert!(mean.abs() <= Z * (var / n).sqrt(), "{what}: mean {mean}");
}

#[test]
fn discrete_laplace_chi_square_and_variance() -> Result<()> {
    for (i, scale) in [0.7, 1.0, 3.5, 40.0].into_iter().enumerate() {
        let dl = DiscreteLaplace::new(scale)?;
        let mut rng = seeded_rng(100 + i as u64);
        let samples: Vec<i64> = (0..N).map(|_| dl.sample(&mut rng)).collect();
        let pmf = dlap_pmf(scale);
        let r = (60.0 * scale + 60.0) as i64;
        let (stat, df, crit) = chi2_integer(&samples, &pmf, (-r, r));
        assert!(stat < crit, "scale {scale}: χ² = {stat} ≥ {crit} (df {df})");
        // Var = 2q/(1 − q)² (closed form), cross-checked against the pmf sum.
        let q = (-1.0 / scale).exp();
        let var = 2.0 * q / (1.0 - q).powi(2);
        let var_sum: f64 = (-r..=r).map(|k| (k * k) as f64 * pmf(k)).sum();
        assert!((var - var_sum).abs() <= 1e-9 * var, "{var} vs {var_sum}");
        let m4: f64 = (-r..=r).map(|k| (k as f64).powi(4) * pmf(k)).sum();
        check_second_moment(&samples, var, m4, &format!("discrete Laplace {scale}"));
    }
    Ok(())
}

#[test]
fn discrete_gaussian_chi_square_and_variance() -> Result<()> {
    for (i, sigma2) in [0.1, 0.5, 1.0, 10.0, 1e4, 1e6].into_iter().enumerate() {
        let dg = DiscreteGaussian::new(sigma2)?;
        let mut rng = seeded_rng(200 + i as u64);
        let samples: Vec<i64> = (0..N).map(|_| dg.sample(&mut rng)).collect();
        let (pmf, r) = dgauss_pmf(sigma2);
        let (stat, df, crit) = chi2_integer(&samples, &pmf, (-r, r));
        assert!(stat < crit, "σ² {sigma2}: χ² = {stat} ≥ {crit} (df {df})");
        let var: f64 = (-r..=r).map(|k| (k as f64).powi(2) * pmf(k)).sum();
        let m4: f64 = (-r..=r).map(|k| (k as f64).powi(4) * pmf(k)).sum();
        // CKS20 Corollary 9: the discrete Gaussian's variance is below σ².
        assert!(var <= sigma2 * (1.0 + 1e-12), "σ² {sigma2}: variance {var}");
        check_second_moment(&samples, var, m4, &format!("discrete Gaussian {sigma2}"));
    }
    Ok(())
}

#[test]
fn discrete_gaussian_big_integer_path() -> Result<()> {
    // σ² = 2¹⁰⁰: 2·a·b·t² does not fit in u128, so every acceptance test runs on big
    // integers. At this scale the pmf is a sampled Gaussian to relative 1e-30, so
    // E[x²] = σ², E[x⁴] = 3σ⁴ up to negligible terms.
    let sigma2 = DiscreteGaussian::MAX_SIGMA2;
    let dg = DiscreteGaussian::new(sigma2)?;
    let mut rng = seeded_rng(300);
    let n = 20_000;
    let samples: Vec<i64> = (0..n).map(|_| dg.sample(&mut rng)).collect();
    let xs: Vec<f64> = samples.iter().map(|&x| x as f64 / sigma2.sqrt()).collect();
    let m2 = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
    assert!(
        (m2 - 1.0).abs() <= Z * (2.0 / n as f64).sqrt(),
        "E[x²]/σ² = {m2}"
    );
    // KS of x/σ against N(0,1) (the discretisation step is 2⁻⁵⁰ of σ).
    let mut xs = xs;
    let d = ks_distance(&mut xs, normal_cdf);
    assert!(d < ks_critical(n), "KS {d}");
    // A tiny σ² has a huge denominator b (big-integer path): all mass at 0 but for
    // e^{−1/(2σ²)}, i.e. exactly 0 here.
    let tiny = DiscreteGaussian::new(1e-30)?;
    assert!((0..1000).all(|_| tiny.sample(&mut rng) == 0));
    let tiny_l = DiscreteLaplace::new(1e-30)?;
    assert!((0..1000).all(|_| tiny_l.sample(&mut rng) == 0));
    Ok(())
}

#[test]
fn bernoulli_exp_matches_exp_minus_gamma() -> Result<()> {
    let cases: [(i64, i64); 6] = [(3, 10), (1, 1), (27, 10), (10, 3), (1, 1 << 40), (7, 2)];
    for (i, (n, d)) in cases.into_iter().enumerate() {
        let gamma = BigRational::new(n.into(), d.into());
        let p = (-(n as f64) / d as f64).exp();
        let mut rng = seeded_rng(400 + i as u64);
        let mut ones = 0usize;
        for _ in 0..N {
            if sample_bernoulli_exp(&mut rng, &gamma)? {
                ones += 1;
            }
        }
        let e1 = p * N as f64;
        let e0 = (1.0 - p) * N as f64;
        let stat = (ones as f64 - e1).powi(2) / e1 + ((N - ones) as f64 - e0).powi(2) / e0;
        let crit = chi2_critical(1, ALPHA);
        assert!(
            stat < crit,
            "γ = {n}/{d}: χ² = {stat} ≥ {crit}, ones = {ones}, expected {e1}"
        );
    }
    // γ = 0 is always true; γ = 60 is true with probability e^{−60} ≈ 1e-26 per draw.
    let mut rng = seeded_rng(499);
    let zero = BigRational::new(0.into(), 1.into());
    let sixty = BigRational::new(60.into(), 1.into());
    for _ in 0..10_000 {
        assert!(sample_bernoulli_exp(&mut rng, &zero)?);
        assert!(!sample_bernoulli_exp(&mut rng, &sixty)?);
    }
    // A γ with a numerator and denominator beyond u128 (big-integer path):
    // γ = (2¹³⁰ + 1)/2¹³⁰ ≈ 1.
    let big = BigRational::new(
        (num_bigint::BigInt::from(1) << 130usize) + 1,
        num_bigint::BigInt::from(1) << 130usize,
    );
    let mut ones = 0usize;
    for _ in 0..N {
        if sample_bernoulli_exp(&mut rng, &big)? {
            ones += 1;
        }
    }
    let p = (-1.0f64).exp();
    let (e1, e0) = (p * N as f64, (1.0 - p) * N as f64);
    let stat = (ones as f64 - e1).powi(2) / e1 + ((N - ones) as f64 - e0).powi(2) / e0;
    assert!(stat < chi2_critical(1, ALPHA), "big γ: χ² = {stat}");
    Ok(())
}

#[test]
fn uniform_below_chi_square() -> Result<()> {
    let mut rng = seeded_rng(500);
    for bound in [2u64, 7, 100, (1 << 63) + 1] {
        let cells = bound.min(100) as usize;
        let mut counts = vec![0u64; cells];
        for _ in 0..N {
            let x = sample_uniform_below(&mut rng, bound)?;
            // Equal-probability cells when bound ≤ 100; otherwise 100 near-equal ranges.
            let c = if bound <= 100 {
                x as usize
            } else {
                ((x as u128 * 100) / bound as u128) as usize
            };
            counts[c] += 1;
        }
        let e = N as f64 / cells as f64;
        let stat: f64 = counts.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
        let crit = chi2_critical(cells - 1, ALPHA);
        assert!(stat < crit, "bound {bound}: χ² = {stat} ≥ {crit}");
    }
    Ok(())
}

#[test]
fn continuous_laplace_and_gaussian_ks() -> Result<()> {
    let n = 100_000;
    let mut rng = seeded_rng(600);
    let lap = Laplace::new(2.0)?;
    let mut xs: Vec<f64> = (0..n).map(|_| lap.sample(&mut rng)).collect();
    let d = ks_distance(&mut xs, |x| {
        if x < 0.0 {
            0.5 * (x / 2.0).exp()
        } else {
            1.0 - 0.5 * (-x / 2.0).exp()
        }
    });
    assert!(d < ks_critical(n), "Laplace KS {d} ≥ {}", ks_critical(n));
    let gau = Gaussian::new(3.0)?;
    let mut xs: Vec<f64> = (0..n).map(|_| gau.sample(&mut rng)).collect();
    let d = ks_distance(&mut xs, |x| normal_cdf(x / 3.0));
    assert!(d < ks_critical(n), "Gaussian KS {d} ≥ {}", ks_critical(n));
    Ok(())
}

/// Exact permute-and-flip selection probabilities by enumerating all n! orders:
/// in order π, candidate π_j is selected with probability p_{π_j}·Π_{i<j}(1 − p_{π_i}).
fn pf_probabilities(p: &[f64]) -> Vec<f64> {
    fn rec(p: &[f64], used: &mut Vec<bool>, survive: f64, weight: f64, out: &mut [f64]) {
        for i in 0..p.len() {
            if !used[i] {
                used[i] = true;
                let remaining = used.iter().filter(|u| !**u).count() as f64 + 1.0;
                let w = weight / remaining;
                out[i] += w * survive * p[i];
                rec(p, used, survive * (1.0 - p[i]), w, out);
                used[i] = false;
            }
        }
    }
    let mut out = vec![0.0; p.len()];
    rec(p, &mut vec![false; p.len()], 1.0, 1.0, &mut out);
    out
}

#[test]
fn permute_and_flip_frequencies_match_exact_probabilities() -> Result<()> {
    let cases: [(&[f64], f64, f64, bool); 4] = [
        (&[0.0, 1.0, 2.5, 3.0], 1.0, 1.0, false),
        (&[0.0, 1.0, 2.5, 3.0], 1.0, 1.0, true),
        (&[1.0, 1.0, 0.0, -0.5, 0.25], 2.0, 0.5, false),
        // 1e-10 − 1e-40 spans > 73 binary orders: the big-rational path.
        (&[1e-10, 1e-40, -3.0], 1.0, 1.0, false),
    ];
    for (case, (scores, eps, sens, mono)) in cases.into_iter().enumerate() {
        let em = PermuteAndFlip::new(eps, sens, mono)?;
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let denom = if mono { sens } else { 2.0 * sens };
        let p: Vec<f64> = scores
            .iter()
            .map(|q| (-eps * (best - q) / denom).exp())
            .collect();
        let probs = pf_probabilities(&p);
        assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut rng = seeded_rng(700 + case as u64);
        let mut counts = vec![0u64; scores.len()];
        for _ in 0..N {
            counts[em.select(scores, &mut rng)?] += 1;
        }
        let stat: f64 = counts
            .iter()
            .zip(&probs)
            .map(|(&o, &q)| (o as f64 - q * N as f64).powi(2) / (q * N as f64))
            .sum();
        let crit = chi2_critical(scores.len() - 1, ALPHA);
        assert!(
            stat < crit,
            "case {case}: χ² = {stat} ≥ {crit}; {counts:?} vs {probs:?}"
        );
    }
    Ok(())
}

#[test]
fn permute_and_flip_probabilities_by_hand() {
    // Two candidates with p = (1, x): the best wins unless it comes second and the
    // other is accepted first: P(other) = ½·x.
    let probs = pf_probabilities(&[1.0, 0.25]);
    assert!((probs[1] - 0.125).abs() < 1e-15 && (probs[0] - 0.875).abs() < 1e-15);
}

/// The `u128` form of the exact Bernoulli(exp(−γ)) consumes the stream exactly like the
/// rational form: on the same seeded stream both give the same outcomes (γ below 1, above
/// 1, 0, and large), and a zero denominator is an error.
#[test]
fn bernoulli_exp_ratio_is_the_rational_sampler() -> Result<()> {
    let cases: [(u128, u128); 6] = [(3, 10), (1, 1), (27, 10), (0, 5), (81, 2), (1 << 100, 3)];
    for (i, (n, d)) in cases.into_iter().enumerate() {
        let gamma = BigRational::new(num_bigint::BigInt::from(n), num_bigint::BigInt::from(d));
        let (mut a, mut b) = (seeded_rng(900 + i as u64), seeded_rng(900 + i as u64));
        for _ in 0..5_000 {
            assert_eq!(
                sample_bernoulli_exp_ratio(&mut a, n, d)?,
                sample_bernoulli_exp(&mut b, &gamma)?,
                "γ = {n}/{d}"
            );
        }
    }
    assert!(sample_bernoulli_exp_ratio(&mut seeded_rng(1), 1, 0).is_err());
    Ok(())
}

/// Bernoulli(2/e) against its exact probability 2/e (χ² at 1e-6).
#[test]
fn bernoulli_two_over_e_chi_square() {
    let p = 2.0 * (-1.0f64).exp();
    let mut rng = seeded_rng(950);
    let ones = (0..N)
        .filter(|_| sample_bernoulli_two_over_e(&mut rng))
        .count();
    let (e1, e0) = (p * N as f64, (1.0 - p) * N as f64);
    let stat = (ones as f64 - e1).powi(2) / e1 + ((N - ones) as f64 - e0).powi(2) / e0;
    let crit = chi2_critical(1, ALPHA);
    assert!(
        stat < crit,
        "χ² = {stat} ≥ {crit}, ones = {ones}, expected {e1}"
    );
}
