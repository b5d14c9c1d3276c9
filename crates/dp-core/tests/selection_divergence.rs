//! Issue #9 item 1: the zCDP charge of each private selector against the **exact** Rényi
//! divergences of its output distribution on neighbouring score vectors.
//!
//! The output distributions are computed here independently of the crate: the exponential
//! mechanism by its closed form `p_i ∝ exp(c·q_i)`, permute-and-flip by enumerating all `n!`
//! visiting orders (n ≤ 6). The crate's own `probabilities` are checked against these, and
//! its samplers against them by χ² (fixed seeds).
//!
//! Floating point: the divergences are evaluated in `f64` from probabilities accurate to a
//! few ulps; every comparison allows `TOL = 1e-12` absolute (the evaluation error of sums of
//! at most 6! positive terms of size ≤ 1 is below 1e-13), which is far below every margin
//! that matters here (the issue's counterexample exceeds the old charge by 0.13).

mod common;

use common::{ALPHA, chi2_critical};
use dp_core::*;

const TOL: f64 = 1e-12;

/// Rényi divergence `D_α(P‖Q)`: α = 1 is KL, α = ∞ the max divergence.
fn renyi(p: &[f64], q: &[f64], alpha: f64) -> f64 {
    assert_eq!(p.len(), q.len());
    if alpha == 1.0 {
        return p
            .iter()
            .zip(q)
            .filter(|(a, _)| **a > 0.0)
            .map(|(a, b)| a * (a / b).ln())
            .sum();
    }
    if alpha.is_infinite() {
        return p
            .iter()
            .zip(q)
            .filter(|(a, _)| **a > 0.0)
            .map(|(a, b)| (a / b).ln())
            .fold(f64::NEG_INFINITY, f64::max);
    }
    // log Σ p^α q^{1−α}, by log-sum-exp
    let logs: Vec<f64> = p
        .iter()
        .zip(q)
        .filter(|(a, _)| **a > 0.0)
        .map(|(a, b)| alpha * a.ln() + (1.0 - alpha) * b.ln())
        .collect();
    let m = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = logs.iter().map(|l| (l - m).exp()).sum();
    (m + s.ln()) / (alpha - 1.0)
}

const ALPHAS: [f64; 9] = [1.0, 1.01, 1.5, 2.0, 3.0, 5.0, 10.0, 100.0, 1000.0];

/// The coefficient c of exp(c·q): ε/(2Δ), or ε/Δ when monotonic.
fn coef(eps: f64, sens: f64, mono: bool) -> f64 {
    if mono { eps / sens } else { eps / (2.0 * sens) }
}

/// Exponential mechanism, closed form.
fn em_closed_form(scores: &[f64], c: f64) -> Vec<f64> {
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = scores.iter().map(|q| (c * (q - best)).exp()).collect();
    let z: f64 = w.iter().sum();
    w.iter().map(|x| x / z).collect()
}

/// Permute-and-flip by enumerating every visiting order (Heap's algorithm): in order π,
/// candidate π_k is output with probability Π_{j<k}(1 − p_{π_j})·p_{π_k}, p_r =
/// exp(−c(q* − q_r)).
fn pf_enumerated(scores: &[f64], c: f64) -> Vec<f64> {
    let n = scores.len();
    assert!(n <= 6);
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let p: Vec<f64> = scores.iter().map(|q| (-c * (best - q)).exp()).collect();
    let mut out = vec![0.0; n];
    let mut perm: Vec<usize> = (0..n).collect();
    let mut count = 0usize;
    let mut visit = |perm: &[usize]| {
        let mut reach = 1.0;
        for &r in perm {
            out[r] += reach * p[r];
            reach *= 1.0 - p[r];
        }
        count += 1;
    };
    // Heap's algorithm, iterative
    let mut cidx = vec![0usize; n];
    visit(&perm);
    let mut i = 0;
    while i < n {
        if cidx[i] < i {
            if i % 2 == 0 {
                perm.swap(0, i);
            } else {
                perm.swap(cidx[i], i);
            }
            visit(&perm);
            cidx[i] += 1;
            i = 0;
        } else {
            cidx[i] = 0;
            i += 1;
        }
    }
    let total: usize = (1..=n).product();
    assert_eq!(count, total);
    out.iter().map(|x| x / total as f64).collect()
}

fn zcdp_rho(loss: PrivacyLoss) -> f64 {
    match loss {
        PrivacyLoss::Zcdp { rho } => rho,
        other => panic!("not zCDP: {other}"),
    }
}

/// Asserts D_α ≤ ρα on the grid (both directions) and D_∞ ≤ ε; returns the largest
/// D_α/α seen.
fn check_pair(p: &[f64], q: &[f64], rho: f64, eps: f64, what: &str) -> f64 {
    let mut worst = 0.0f64;
    for (a, b) in [(p, q), (q, p)] {
        for alpha in ALPHAS {
            let d = renyi(a, b, alpha);
            worst = worst.max(d / alpha);
            assert!(
                d <= rho * alpha + TOL,
                "{what}: D_{alpha} = {d} > ρα = {} (ρ = {rho}); P = {a:?}, Q = {b:?}",
                rho * alpha
            );
        }
        let dmax = renyi(a, b, f64::INFINITY);
        assert!(dmax <= eps + TOL, "{what}: D_∞ = {dmax} > ε = {eps}");
    }
    worst
}

/// The issue's counterexample: Δ = 1, scores (s, s) vs (s − 1, s + 1). Permute-and-flip
/// has KL = −½ ln(2e^{−ε} − e^{−2ε}) = 0.25506 at ε = 1 (the issue quotes 0.2545; the
/// formula evaluates to 0.25506), above ε²/8 = 0.125: its zCDP
/// charge must be larger than ε²/8, and within the charge.
#[test]
fn issue_counterexample_is_within_each_selectors_charge() -> Result<()> {
    let eps = 1.0;
    let (d, d2) = ([3.0, 3.0], [2.0, 4.0]);
    let pf = PermuteAndFlip::new(eps, 1.0, false)?;
    let (p, q) = (pf_enumerated(&d, 0.5), pf_enumerated(&d2, 0.5));
    let kl = renyi(&p, &q, 1.0);
    let want = -0.5 * (2.0 * (-eps).exp() - (-2.0 * eps).exp()).ln();
    assert!(
        (kl - want).abs() < 1e-12 && (kl - 0.25506).abs() < 1e-5,
        "{kl}"
    );
    assert!(kl > eps * eps / 8.0); // ε²/8 would be a violation
    check_pair(
        &p,
        &q,
        zcdp_rho(pf.zcdp_privacy()),
        eps,
        "pf counterexample",
    );

    let em = ExponentialMechanism::new(eps, 1.0, false)?;
    let (p, q) = (em_closed_form(&d, 0.5), em_closed_form(&d2, 0.5));
    // KL = ln cosh(ε/2) here, just below ε²/8.
    let kl = renyi(&p, &q, 1.0);
    assert!((kl - (eps / 2.0).cosh().ln()).abs() < 1e-12, "{kl}");
    check_pair(
        &p,
        &q,
        zcdp_rho(em.zcdp_privacy()),
        eps,
        "em counterexample",
    );
    Ok(())
}

/// Every pair of score vectors on a grid (n = 2, 3; scores in {0, ½, …, 2}) and every
/// neighbour with each score moved by at most Δ = 1 (in steps of ½; monotonic: all moves
/// in one direction), at ε ∈ {0.1, 0.5, 1, 2}: the exact D_α of both selectors is within
/// the charged ρα, and D_∞ within ε. Also reports how tight the EM charge is (the two-point
/// worst case makes D_1 = ln cosh(ε/2) ≈ ε²/8 − ε⁴/192).
#[test]
fn brute_force_neighbours_within_charge() -> Result<()> {
    let grid = [0.0, 0.5, 1.0, 1.5, 2.0];
    let moves = [-1.0, -0.5, 0.0, 0.5, 1.0];
    for &eps in &[0.1, 0.5, 1.0, 2.0] {
        for mono in [false, true] {
            let c = coef(eps, 1.0, mono);
            let em = ExponentialMechanism::new(eps, 1.0, mono)?;
            let pf = PermuteAndFlip::new(eps, 1.0, mono)?;
            let (rho_em, rho_pf) = (zcdp_rho(em.zcdp_privacy()), zcdp_rho(pf.zcdp_privacy()));
            let mut worst_em = 0.0f64;
            for n in 2..=3usize {
                let vectors = product(&grid, n);
                let shifts: Vec<Vec<f64>> = product(&moves, n)
                    .into_iter()
                    .filter(|s| !mono || s.iter().all(|&x| x >= 0.0) || s.iter().all(|&x| x <= 0.0))
                    .collect();
                for d in &vectors {
                    let (pe, pp) = (em_closed_form(d, c), pf_enumerated(d, c));
                    for s in &shifts {
                        let d2: Vec<f64> = d.iter().zip(s).map(|(a, b)| a + b).collect();
                        let what = format!("ε = {eps}, mono = {mono}, {d:?} → {d2:?}");
                        let qe = em_closed_form(&d2, c);
                        worst_em = worst_em.max(check_pair(&pe, &qe, rho_em, eps, &what));
                        let qp = pf_enumerated(&d2, c);
                        check_pair(&pp, &qp, rho_pf, eps, &what);
                    }
                }
            }
            // the EM charge is nearly attained (the bounded-range bound is tight)
            assert!(
                worst_em > 0.9 * rho_em,
                "ε = {eps}: worst {worst_em} vs ρ {rho_em}"
            );
        }
    }
    Ok(())
}

fn product(values: &[f64], n: usize) -> Vec<Vec<f64>> {
    let mut out = vec![vec![]];
    for _ in 0..n {
        out = out
            .into_iter()
            .flat_map(|v| {
                values.iter().map(move |&x| {
                    let mut w = v.clone();
                    w.push(x);
                    w
                })
            })
            .collect();
    }
    out
}

/// The crate's `probabilities` agree with the independent computations here (closed form
/// for EM, enumeration for PF), n ≤ 6, including ties and sensitivities ≠ 1.
#[test]
fn library_probabilities_match_independent_ones() -> Result<()> {
    let cases: [(&[f64], f64, f64, bool); 5] = [
        (&[0.0, 1.0, 2.5, 3.0], 1.0, 1.0, false),
        (&[0.0, 1.0, 2.5, 3.0], 1.0, 1.0, true),
        (&[1.0, 1.0, 0.0, -0.5, 0.25], 2.0, 0.5, false),
        (&[3.0, 3.0, 3.0, 1.0, 0.0, 2.0], 0.7, 1.0, false),
        (&[7.0], 1.0, 1.0, false),
    ];
    for (scores, eps, sens, mono) in cases {
        let c = coef(eps, sens, mono);
        let em = ExponentialMechanism::new(eps, sens, mono)?.probabilities(scores)?;
        let pf = PermuteAndFlip::new(eps, sens, mono)?.probabilities(scores)?;
        for (a, b) in em.iter().zip(em_closed_form(scores, c)) {
            assert!((a - b).abs() < 1e-14, "em {scores:?}: {em:?}");
        }
        for (a, b) in pf.iter().zip(pf_enumerated(scores, c)) {
            assert!((a - b).abs() < 1e-14, "pf {scores:?}: {pf:?}");
        }
    }
    Ok(())
}

/// The exponential mechanism's sampler draws from the closed form: χ² goodness of fit,
/// 200 000 draws per case, rejection at upper-tail probability ALPHA = 1e-6 (so the
/// false-failure rate of this test is below 4e-6). The cases cover the u128 fast path,
/// the big-rational path (1e-10 vs 1e-40) and ties.
#[test]
fn exponential_mechanism_sampler_matches_closed_form() -> Result<()> {
    const N: usize = 200_000;
    let cases: [(&[f64], f64, f64, bool); 4] = [
        (&[0.0, 1.0, 2.5, 3.0], 1.0, 1.0, false),
        (&[3.0, 3.0, 2.0, 4.0], 1.0, 1.0, true),
        (&[1.0, 1.0, 0.0, -0.5, 0.25], 2.0, 0.5, false),
        (&[1e-10, 1e-40, -3.0], 1.0, 1.0, false),
    ];
    for (case, (scores, eps, sens, mono)) in cases.into_iter().enumerate() {
        let em = ExponentialMechanism::new(eps, sens, mono)?;
        let probs = em_closed_form(scores, coef(eps, sens, mono));
        let mut rng = seeded_rng(900 + case as u64);
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

/// The charges: EM ε²/8 (bounded range), PF ε²/2 (pure ε ⇒ ε²/2, Bun–Steinke Prop. 1.4),
/// both rounded up by at most a few ulps; both pure ε.
#[test]
fn charges_by_hand() -> Result<()> {
    let em = ExponentialMechanism::new(0.8, 1.0, false)?;
    let pf = PermuteAndFlip::new(0.8, 1.0, false)?;
    assert_eq!(em.privacy(), PrivacyLoss::Pure { epsilon: 0.8 });
    assert_eq!(pf.privacy(), PrivacyLoss::Pure { epsilon: 0.8 });
    let (re, rp) = (zcdp_rho(em.zcdp_privacy()), zcdp_rho(pf.zcdp_privacy()));
    assert!(
        (0.08..=0.08 * (1.0 + 4.0 * f64::EPSILON)).contains(&re),
        "{re}"
    );
    assert!(
        (0.32..=0.32 * (1.0 + 4.0 * f64::EPSILON)).contains(&rp),
        "{rp}"
    );
    Ok(())
}
