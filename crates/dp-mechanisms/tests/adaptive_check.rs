//! Issue #24: adaptive-projection's checks (`adaptive/check.rs`) — every workload table the
//! direct phase did not measure is measured once beside the model at `γρ/k`, shrunk toward the
//! model within strata of its count (`adaptive/beside.rs`, whose unit tests pin that
//! estimator), and a cell whose check (combined with what the rounds measured of the table)
//! departs from that combination by more than `σ√(2 ln 2n)` takes the measured value. Pinned:
//! the noise and budget of each check under both relations, which tables are checked (on both
//! sides of the direct phase's rule), that the checks — and the rounds' measurements — repair
//! a table the model gets wrong, the step decomposition, and parameter validation.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::AdaptiveProjectionParams;
use dp_queries::{Dataset, Domain, MarginalWorkload};

mod common;
use common::{assert_phase_in_steps, assert_spends_rho, delta2, small};

/// With the direct phase off, all ten workload tables are checked, each at `ρ_c = γρ/k`
/// with `σ² = Δ₂²/(2ρ_c)` (a wrong sensitivity moves σ² by 2×, a check charged the whole ρ
/// by 10×); 1-ways, checks and rounds together spend ρ up to the filter's slack, never more.
/// With every table measured directly (τ large), none is checked and nothing is charged for
/// checks.
#[test]
fn checks_are_charged_at_their_share_and_skip_the_direct_tables() {
    let (data, w) = small(400);
    let k = 10.0;
    for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
        for rho in [0.05, 2.0] {
            let gamma = 0.3;
            let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
                .neighbouring(rel)
                .direct(0.0, 0.0)
                .check_share(gamma)
                .check_resolution(10.0)
                .check()
                .unwrap();
            let run = m.run(&data, &w, &mut dp_core::seeded_rng(3)).unwrap();
            assert_eq!(run.checks.len(), 10, "{rel} ρ {rho}");
            assert!(run.direct.is_empty());
            let rho_c = gamma * rho / k;
            for c in &run.checks {
                assert_eq!(c.selected.len(), 2);
                assert!((c.measure_rho - rho_c).abs() <= 1e-12 * rho_c);
                let s2 = delta2(rel) / (2.0 * rho_c);
                assert!(
                    c.sigma2 >= s2 && c.sigma2 <= s2 * (1.0 + 1e-12),
                    "{}",
                    c.sigma2
                );
            }
            assert_eq!(run.one_ways.len(), 5);
            assert_spends_rho(&run, rho, &format!("{rel} ρ {rho}"));
            let notes = run.release.diagnostics.notes.join("\n");
            assert!(notes.contains("checked workload tables"), "{notes}");
            // the note states the rule's level and what it covers (public inputs only)
            assert!(notes.contains("with m = 10 of k = 10 tables"), "{notes}");

            // every table measured directly: nothing left to check
            let all_direct = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
                .neighbouring(rel)
                .direct(0.5, 10.0)
                .check_share(gamma)
                .check_resolution(10.0)
                .check()
                .unwrap()
                .run(&data, &w, &mut dp_core::seeded_rng(3))
                .unwrap();
            assert_eq!(all_direct.direct.len(), 10);
            assert!(all_direct.checks.is_empty());
            let notes = all_direct.release.diagnostics.notes.join("\n");
            assert!(
                notes.contains("every workload table was measured directly"),
                "{notes}"
            );
        }
    }
}

/// A table the model cannot know: `c` copies `a` (c = a), and the estimator is the product
/// of the 1-ways (`EstimatorChoice::Independent`), so the model's (a, c) table is uniform,
/// 0.25 per cell, against the truth (½, 0, 0, ½). Under replace-one (the total is the public
/// n) a kept cell is within `(λ + |Z_i|)/n` of the truth and a replaced one within `|Z_i|/n`
/// (`λ = σ_c√(2 ln 48)`: six tables of four cells), and the simplex projection cannot move the table away from the truth
/// in ℓ2 (the truth lies in the simplex), so every cell of the release is within
/// `2(λ + 6σ_c)/n` (ℓ2 over four cells), unless some |Z_i| > 6σ_c (probability below 10⁻⁸).
/// Without checks the rounds measure (a, c) (the model, a product of the 1-ways, never takes
/// those measurements in and stays off by 0.25 in a cell), and the release corrects the table
/// by the rounds' measurements, combined by inverse variance, within the same bound at their
/// combined σ, replacing at least two cells (the note's count: without the correction the
/// release is the model's, off by 0.25); measured directly instead (the direct phase), it is
/// corrected alike by its direct measurement.
#[test]
fn a_check_repairs_a_table_the_model_gets_wrong() {
    use dp_mechanisms::adaptive::EstimatorChoice;
    let domain = Domain::new(vec![
        ("a".into(), 2),
        ("b".into(), 2),
        ("c".into(), 2),
        ("d".into(), 2),
    ])
    .unwrap();
    let n = 4000usize;
    let a: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let b: Vec<u32> = (0..n).map(|i| ((i / 2) % 2) as u32).collect();
    let d: Vec<u32> = (0..n).map(|i| ((i / 4) % 2) as u32).collect();
    let data = Dataset::from_columns(domain.clone(), vec![a.clone(), b, a, d]).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    let truth = w.answers(&data).unwrap();
    let ac = w
        .marginals()
        .iter()
        .position(|m| m.attrs() == [0, 2])
        .unwrap();
    let range = w.offset(ac)..w.offset(ac + 1);
    let (rho, gamma) = (8.0, 0.5);
    let worst = |gamma: f64, beta: f64| {
        let run = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
            .neighbouring(Neighbouring::ReplaceOne)
            .estimator(EstimatorChoice::Independent)
            .direct(beta, 10.0)
            .check_share(gamma)
            .check_resolution(10.0)
            .check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(11))
            .unwrap();
        let off = run.release.answers[range.clone()]
            .iter()
            .zip(&truth[range.clone()])
            .map(|(g, t)| (g - t).abs())
            .fold(0.0, f64::max);
        // the note's count of cells replaced
        let notes = run.release.diagnostics.notes.join("\n");
        let replaced: usize = notes
            .split("σ the combination's: ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        (off, run.rounds, replaced)
    };
    // σ_c² = Δ₂²/(2ρ_c) with Δ₂² = 2 (replace-one) and ρ_c = γρ/6 (six 2-way tables)
    let sigma = (2.0 / (2.0 * gamma * rho / 6.0)).sqrt();
    let lambda = sigma * (2.0 * 48f64.ln()).sqrt();
    let bound = 2.0 * (lambda + 6.0 * sigma) / n as f64;
    let (with, _, _) = worst(gamma, 0.0);
    assert!(
        with <= bound,
        "(a, c) off by {with} with checks; bound {bound}"
    );
    // without checks the rounds measure (a, c) — the product model is off by 0.25 there —
    // and the release corrects it by those measurements alike, at their combined σ (the
    // model, a product of the 1-ways, never takes them in)
    let (without, rounds, replaced) = worst(0.0, 0.0);
    let precision: f64 = rounds
        .iter()
        .filter(|r| r.selected == [0, 2] && !r.coarsened)
        .map(|r| 1.0 / r.sigma2)
        .sum();
    assert!(precision > 0.0, "the rounds never measured (a, c)");
    let sd = precision.recip().sqrt();
    let round_bound = 2.0 * (sd * (2.0 * 48f64.ln()).sqrt() + 6.0 * sd) / n as f64;
    assert!(
        without <= round_bound,
        "(a, c) off by {without} when the rounds measured it; bound {round_bound}"
    );
    assert!(replaced >= 2, "{replaced} cells replaced");
    // a table measured directly (every table is cheap at τ = 10) is corrected by its own
    // measurement in the same way, at the direct measurement's σ (β = γ: the same σ)
    let (direct, _, _) = worst(0.0, gamma);
    assert!(
        direct <= bound,
        "(a, c) off by {direct} when measured directly"
    );
}

/// The step decomposition lists the checks (one audited step for the first, their losses
/// counted) and still composes to the certificate's ρ.
#[test]
fn step_decomposition_counts_the_checks() {
    for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
        let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(0.5).unwrap())
            .neighbouring(rel)
            .direct(0.0, 0.0)
            .check_share(0.2)
            .check_resolution(10.0)
            .check()
            .unwrap();
        assert_phase_in_steps(&m, "check", 10);
    }
}

/// Both sides of the resolution rule through the release: ρ = 2, γ = 0.3, ten tables of 66
/// cells in all, n = 400: each check has σ_c = √(1/(2·0.06)) = 2.887, so the threshold
/// `σ_c√(2 ln 132)` is 9.02, over a noisy total within a few counts of 400: 0.0226.
/// κ = 0.05 checks all ten; κ = 0.01 none, and the release is then the one without checks
/// (same draws).
#[test]
fn only_tables_the_check_resolves_are_checked() {
    let (data, w) = small(400);
    let run = |kappa: f64, gamma: f64| {
        AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap())
            .direct(0.0, 0.0)
            .check_share(gamma)
            .check_resolution(kappa)
            .check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(9))
            .unwrap()
    };
    assert_eq!(run(0.05, 0.3).checks.len(), 10);
    let none = run(0.01, 0.3);
    assert!(none.checks.is_empty());
    let off = run(0.01, 0.0);
    assert_eq!(none.release.answers, off.release.answers);
    assert_eq!(none.rounds, off.rounds);
}

/// The rule weighs the threshold by the share of the tables the checks must cover
/// (`(m/k)·λ/T̂ ≤ κ`, check.rs "When"): five binary attributes and one of 40 values,
/// n = 2000, all 15 pairs; ρ = 2, β = 0.8, τ = 0.01: the ten 4-cell pairs are cheap (expected
/// ℓ1 noise √(2/π)·2.165·4/2000 = 0.0035; the 80-cell ones 0.069), so the direct phase
/// measures them and m = 5 of k = 15 are left. γ = 0.1: σ_c = √(1/(2·0.2/15)) = 6.124 over
/// n = 10·4 + 5·80 = 440 cells, λ = σ_c√(2 ln 880) = 22.55, λ/T̂ ≈ 0.0113 and
/// (m/k)·λ/T̂ ≈ 0.0038 (T̂ is within a few counts of 2000). κ = 0.0075 lies between the two:
/// the five are checked (they would not be by λ/T̂ alone); κ = 0.003 is below both: none.
#[test]
fn few_unmeasured_tables_are_checked_at_a_coarser_resolution() {
    let sizes = [2u32, 2, 2, 2, 2, 40];
    let domain = Domain::new(
        sizes
            .iter()
            .enumerate()
            .map(|(j, &s)| (format!("x{j}"), s))
            .collect(),
    )
    .unwrap();
    let n = 2000usize;
    let cols = sizes
        .iter()
        .enumerate()
        .map(|(j, &s)| {
            (0..n)
                .map(|i| ((i * (j + 3) + i / 7 + (i % 11) * j) % s as usize) as u32)
                .collect()
        })
        .collect();
    let data = Dataset::from_columns(domain, cols).unwrap();
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    let run = |kappa: f64| {
        AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap())
            .direct(0.8, 0.01)
            .check_share(0.1)
            .check_resolution(kappa)
            .check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(4))
            .unwrap()
    };
    let coarse = run(0.0075);
    assert_eq!(coarse.direct.len(), 10);
    assert_eq!(coarse.checks.len(), 5);
    assert!(coarse.checks.iter().all(|c| c.selected.contains(&5)));
    let fine = run(0.003);
    assert_eq!(fine.direct.len(), 10);
    assert!(fine.checks.is_empty());
}

/// γ outside [0, 1) and a negative or non-finite κ are refused by `check`.
#[test]
fn check_share_is_validated() {
    let b = PrivacyLoss::zcdp(1.0).unwrap();
    for gamma in [1.0, -0.1, f64::NAN, f64::INFINITY] {
        let e = AdaptiveProjectionParams::new(b)
            .check_share(gamma)
            .check_resolution(10.0)
            .check()
            .map(drop)
            .unwrap_err()
            .to_string();
        assert!(e.contains("check_share"), "{e}");
    }
    for kappa in [-0.1, f64::NAN, f64::INFINITY] {
        let e = AdaptiveProjectionParams::new(b)
            .check_resolution(kappa)
            .check()
            .map(drop)
            .unwrap_err()
            .to_string();
        assert!(e.contains("check_resolution"), "{e}");
    }
    assert!(
        AdaptiveProjectionParams::new(b)
            .check_share(0.0)
            .check_resolution(0.0)
            .check()
            .is_ok()
    );
}
