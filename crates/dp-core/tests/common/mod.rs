//! Statistical helpers shared by the integration tests (independent of the crate).
#![allow(dead_code)]

/// Upper tail of the χ² distribution with `df` degrees of freedom: the regularized upper
/// incomplete gamma `Q(df/2, x/2)` from statrs (issue #28: a well-kept crate's, not one of our
/// own; before the switch the critical values of `chi2_critical` agreed with this file's own
/// Lanczos-and-Lentz version to 1e-10 relative for df 1–3000 and α 1e-6–0.05).
pub fn chi2_sf(x: f64, df: usize) -> f64 {
    statrs::function::gamma::gamma_ur(df as f64 / 2.0, x / 2.0)
}

/// The χ² critical value with upper-tail probability `alpha` (bisection on
/// [`chi2_sf`]).
pub fn chi2_critical(df: usize, alpha: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 10.0 * df as f64 + 200.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if chi2_sf(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Standard normal CDF via Φ(x) = (1 + sign(x)·P(½, x²/2))/2, `P = 1 − Q` with statrs's
/// regularized incomplete gamma. (statrs's `erfc` is not used: Φ(1) through it is off by
/// 1.4e-11, against 1e-16 this way; `helpers_match_closed_forms` pins both points.)
pub fn normal_cdf(x: f64) -> f64 {
    let p = 1.0 - statrs::function::gamma::gamma_ur(0.5, 0.5 * x * x);
    if x >= 0.0 {
        0.5 * (1.0 + p)
    } else {
        0.5 * (1.0 - p)
    }
}

/// The false-alarm rate every statistical test in this crate is calibrated to.
pub const ALPHA: f64 = 1e-6;

/// Pearson χ² test of integer samples against a pmf on ℤ.
///
/// Cells are built outward from the mode and pooled so that every cell has expected
/// count ≥ 5; the two tails (everything beyond the last cell on each side) are pooled
/// into the outermost cells. Returns `(statistic, degrees of freedom, critical value
/// at ALPHA)`.
pub fn chi2_integer(
    samples: &[i64],
    pmf: impl Fn(i64) -> f64,
    support: (i64, i64),
) -> (f64, usize, f64) {
    let n = samples.len() as f64;
    let (lo, hi) = support;
    // Cells: contiguous ranges [a, b] with expected ≥ 5; tails merged into the ends.
    let mut cells: Vec<(i64, i64, f64)> = Vec::new();
    let mut start = lo;
    let mut acc = 0.0;
    for k in lo..=hi {
        acc += pmf(k) * n;
        if acc >= 5.0 {
            cells.push((start, k, acc));
            start = k + 1;
            acc = 0.0;
        }
    }
    if let Some(last) = cells.last_mut() {
        last.1 = i64::MAX;
        last.2 += acc;
    }
    if let Some(first) = cells.first_mut() {
        first.0 = i64::MIN;
    }
    // Put the mass outside [lo, hi] into the end cells so expectations sum to n.
    let inside: f64 = cells.iter().map(|c| c.2).sum();
    let missing = n - inside;
    if cells.len() >= 2 {
        let k = cells.len() - 1;
        cells[0].2 += missing / 2.0;
        cells[k].2 += missing / 2.0;
    }
    let mut observed = vec![0u64; cells.len()];
    for &x in samples {
        let i = cells.partition_point(|c| c.1 < x);
        observed[i.min(cells.len() - 1)] += 1;
    }
    let stat: f64 = cells
        .iter()
        .zip(&observed)
        .map(|(c, &o)| (o as f64 - c.2).powi(2) / c.2)
        .sum();
    let df = cells.len() - 1;
    (stat, df, chi2_critical(df, ALPHA))
}

/// Kolmogorov–Smirnov distance between the empirical CDF of `samples` and `cdf`.
pub fn ks_distance(samples: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    let n = samples.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in samples.iter().enumerate() {
        let f = cdf(x);
        d = d
            .max((f - i as f64 / n).abs())
            .max(((i + 1) as f64 / n - f).abs());
    }
    d
}

/// The Dvoretzky–Kiefer–Wolfowitz–Massart bound: P(D_n > ε) ≤ 2 exp(−2 n ε²), so
/// the critical distance at ALPHA is √(ln(2/ALPHA)/(2n)). Valid for every n.
pub fn ks_critical(n: usize) -> f64 {
    ((2.0 / ALPHA).ln() / (2.0 * n as f64)).sqrt()
}

/// Two-sided z for ALPHA: P(|N(0,1)| > 5) = 5.7e-7 < 1e-6.
pub const Z: f64 = 5.0;

#[test]
fn helpers_match_closed_forms() {
    // df = 2: Q = exp(−x/2), so the 1e-6 critical value is 2 ln(1e6).
    let c2 = chi2_critical(2, 1e-6);
    assert!((c2 - 2.0 * 1e6f64.ln()).abs() < 1e-9, "{c2}");
    // df = 1: P(χ²₁ > z²) = P(|N| > z); for z = 5 this is 5.733e-7.
    assert!((chi2_sf(25.0, 1) - 5.733_031_437_583_892e-7).abs() < 1e-15);
    assert!((normal_cdf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-13);
    assert!((normal_cdf(-2.0) - 0.022_750_131_948_179_21).abs() < 1e-13);
    // Wilson–Hilferty cross-check for df = 30 (accurate to ~1% here).
    let c30 = chi2_critical(30, 1e-6);
    let z = 4.753_424_308_817_089; // Φ⁻¹(1 − 1e-6)
    let k = 30.0f64;
    let wh = k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3);
    assert!((c30 / wh - 1.0).abs() < 0.02, "{c30} vs {wh}");
}
