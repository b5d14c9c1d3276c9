//! Issue #24: adaptive-projection's low-budget rule
//! (`AdaptiveProjectionParams::low_budget_rounds_per_attribute`). The first 1-way table
//! measured is the one of fewest cells, at `αρ/(16d)`; at its total the release counts the
//! workload tables that would be cheap (`√(2/π)·σ_β·cells/total ≤ τ`, `σ_β` the direct
//! measurements' noise). When at most half are, the budget is low: the other 1-way tables
//! and the rounds are planned for `T = 12d`. Under replace-one the total is the public `n`,
//! so the threshold is known exactly: the rule is exercised on both sides of it.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::{AdaptiveProjectionParams, AdaptiveRun, EstimatorChoice};

mod common;
use common::{delta2, small};

const RHO: f64 = 0.5;
const D: f64 = 5.0;

fn params(rel: Neighbouring) -> AdaptiveProjectionParams {
    AdaptiveProjectionParams::new(PrivacyLoss::zcdp(RHO).unwrap())
        .neighbouring(rel)
        // the rule does not depend on the fit: few steps
        .estimator(EstimatorChoice::GraphicalModel {
            round_iterations: 3,
            final_iterations: 3,
        })
}

fn run(p: &AdaptiveProjectionParams, n: usize, seed: u64) -> AdaptiveRun {
    let (data, w) = small(n);
    p.check()
        .unwrap()
        .run(&data, &w, &mut dp_core::seeded_rng(seed))
        .unwrap()
}

/// ρ of a 1-way table (and of a round's measurement) at `T = r·d`: `αρ/T`.
fn rho_at(r: f64) -> f64 {
    0.9 * RHO / (r * D)
}

fn assert_calibrated(rel: Neighbouring, sigma2: f64, measure_rho: f64, want: f64) {
    assert!(
        (measure_rho - want).abs() <= 1e-12 * want,
        "ρ {measure_rho} vs {want}"
    );
    let s2 = delta2(rel) / (2.0 * want);
    assert!(
        sigma2 >= s2 && sigma2 <= s2 * (1.0 + 1e-12),
        "σ² {sigma2} vs {s2}"
    );
}

/// The small fixture's ten 2-way tables have 4 (a·c, a·e, c·e), 6 (a·b, b·c, b·e), 8 (a·d,
/// c·d, d·e) and 12 (b·d) cells. With σ_β the noise of a direct measurement at `βρ/10`, a
/// table of `c` cells is cheap at total `n` when `n ≥ √(2/π)·σ_β·c/τ`; more than half (six)
/// are cheap once the 6-cell tables are, at `n* = √(2/π)·σ_β·6/τ` (≈ 45 here). Replace-one (public n):
/// below `n*` the budget is low, above it is not; the first 1-way table is a 2-cell one
/// (`a`, the first of fewest cells) at T = 16d, the others at T = 12d only when low; the
/// first round's budgets follow; the release says which.
#[test]
fn the_rule_fires_below_its_threshold_and_not_above() {
    let rel = Neighbouring::ReplaceOne;
    let p = params(rel);
    let s = p.schedule(&small(10).1).unwrap();
    let sigma_beta = s.direct.unwrap().measurement.sigma();
    let n_star = (2.0 / std::f64::consts::PI).sqrt() * sigma_beta * 6.0 / p.direct_noise_l1;
    for (n, low) in [
        (n_star.floor() as usize - 1, true),
        (n_star.ceil() as usize + 1, false),
        (5, true),
        (2000, false),
    ] {
        for seed in 0..2 {
            let r = run(&p, n, seed);
            assert_eq!(r.low_budget, low, "n {n} (n* {n_star:.1})");
            assert_eq!(r.one_ways.len(), 5);
            assert_eq!(r.one_ways[0].selected, vec![0]);
            let first = &r.one_ways[0];
            assert_calibrated(rel, first.sigma2, first.measure_rho, rho_at(16.0));
            let rest = rho_at(if low { 12.0 } else { 16.0 });
            for t in &r.one_ways[1..] {
                assert_calibrated(rel, t.sigma2, t.measure_rho, rest);
            }
            // the first selection round at the same budgets, unless it is the last one
            // (which takes what is left)
            if r.rounds.len() > 2 {
                let round = &r.rounds[1];
                assert_calibrated(rel, round.sigma2, round.measure_rho, rest);
                let select = 0.1 * RHO / (if low { 12.0 } else { 16.0 } * D);
                assert!(round.select_rho <= select * (1.0 + 1e-12));
                assert!(round.select_rho >= select * (1.0 - 1e-9));
            }
            let notes = r.release.diagnostics.notes.join("\n");
            let said = if low {
                "low budget: at the noisy total"
            } else {
                "budget not low"
            };
            assert!(notes.contains(said), "n {n}: {notes}");
            // either way the run spends ρ, and no more
            let spent = r.rounds.last().unwrap().rho_spent;
            assert!((RHO * (1.0 - 1e-6)..=RHO * (1.0 + 1e-12)).contains(&spent));
        }
    }
}

/// Under add/remove the decision reads the noisy total of the first 1-way table: far from
/// the threshold it goes the same way on every seed (n = 5: the budget is low; n = 5000 at
/// ρ = 0.5, the total's σ ≈ 3.6 against a threshold of a few hundred: not low). The rule
/// is off with the direct phase off (AIM's rule: one T throughout), when
/// `low_budget_rounds_per_attribute ≥ rounds_per_attribute`, and when its opening would
/// leave no budget for the rounds; 0 is refused.
#[test]
fn add_remove_reads_the_noisy_total_and_the_rule_can_be_turned_off() {
    let rel = Neighbouring::AddRemove;
    for seed in 0..3 {
        assert!(run(&params(rel), 5, seed).low_budget);
        assert!(!run(&params(rel), 5000, seed).low_budget);
    }
    let mut off = params(rel).direct(0.0, 0.5);
    let r = run(&off, 5, 1);
    assert!(!r.low_budget);
    for t in &r.one_ways {
        assert_calibrated(rel, t.sigma2, t.measure_rho, rho_at(16.0));
    }
    assert!(off.schedule(&small(5).1).unwrap().low_budget.is_none());
    off = params(rel);
    off.low_budget_rounds_per_attribute = 16;
    assert!(!run(&off, 5, 1).low_budget);
    assert!(off.schedule(&small(5).1).unwrap().low_budget.is_none());
    // a low budget whose opening would leave nothing for the rounds is not used: with
    // r_low = 1 the 1-way tables after the first would take 0.9·4/5 of ρ, with β = 0.9 more
    // than all of it; 0 is refused
    let mut none_left = params(rel);
    none_left.low_budget_rounds_per_attribute = 1;
    assert!(
        none_left
            .schedule(&small(5).1)
            .unwrap()
            .low_budget
            .is_none()
    );
    assert!(!run(&none_left, 5, 1).low_budget);
    none_left.low_budget_rounds_per_attribute = 0;
    let err = none_left.check().unwrap_err().to_string();
    assert!(err.contains("low_budget_rounds_per_attribute"), "{err}");
    // r_low = 9 fits with d = 5 (0.9/80 + 0.9·4/45 + 0.9 < 1): used
    none_left.low_budget_rounds_per_attribute = 9;
    assert!(run(&none_left, 5, 1).low_budget);
}

/// At a low budget the step decomposition audits one 1-way step per calibration (the first
/// table at T = 16d, the first of the others at T = 12d) and accounts 1 and d − 1 1-way
/// measurements at their own losses, composing to the certificate's ρ; a wrong grouping
/// (every 1-way table at the first one's loss) would compose to less.
#[test]
fn a_low_budget_decomposition_composes_to_the_certificate() {
    use dp_mechanisms::{StepAudited, StepRequest};
    let rel = Neighbouring::ReplaceOne;
    let (data, w) = small(10);
    let m = params(rel).check().unwrap();
    assert!(run(&params(rel), 10, 11).low_budget);
    let dec = m
        .step_decomposition(&data, &w, &StepRequest::new(11))
        .unwrap();
    match dec.composed().unwrap() {
        PrivacyLoss::Zcdp { rho } => {
            assert!(
                (RHO * (1.0 - 1e-6)..=RHO * (1.0 + 1e-9)).contains(&rho),
                "{rho}"
            )
        }
        other => panic!("{other}"),
    }
    let one_way_steps: Vec<_> = dec
        .steps
        .iter()
        .filter(|s| s.label.contains("1-way measurement"))
        .collect();
    assert_eq!(one_way_steps.len(), 2, "{:?}", dec.steps);
    assert!(one_way_steps[1].label.contains("at the low budget"));
    let counts: Vec<u64> = dec
        .losses
        .iter()
        .filter(|l| l.what.starts_with("1-way"))
        .map(|l| l.count)
        .collect();
    assert_eq!(counts, vec![1, 4]);
}

/// The first 1-way table measured is the one of fewest cells, not the first attribute:
/// here the attributes have 3, 4, 2 and 3 values, so `c` (index 2) goes first, at T = 16d.
#[test]
fn the_smallest_one_way_table_goes_first() {
    use dp_queries::{Dataset, Domain, MarginalWorkload};
    let domain = Domain::new(vec![
        ("a".into(), 3),
        ("b".into(), 4),
        ("c".into(), 2),
        ("d".into(), 3),
    ])
    .unwrap();
    let cols = (0..4)
        .map(|j| {
            (0..8)
                .map(|i| ((i * (j + 1)) % domain.size(j) as usize) as u32)
                .collect()
        })
        .collect();
    let data = Dataset::from_columns(domain.clone(), cols).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    let r = params(Neighbouring::ReplaceOne)
        .check()
        .unwrap()
        .run(&data, &w, &mut dp_core::seeded_rng(1))
        .unwrap();
    assert_eq!(r.one_ways[0].selected, vec![2]);
    let order: Vec<usize> = r.one_ways.iter().map(|t| t.selected[0]).collect();
    // all by cells, ties by index: c (2), a (3), d (3), b (4)
    assert_eq!(order, vec![2, 0, 3, 1]);
    // 8 records: no table is cheap, so the budget is low (d = 4)
    assert!(r.low_budget);
    let first = &r.one_ways[0];
    let want = 0.9 * RHO / (16.0 * 4.0);
    assert!((first.measure_rho - want).abs() <= 1e-12 * want);
}
