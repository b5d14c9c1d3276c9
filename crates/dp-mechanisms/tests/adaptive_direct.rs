//! Issue #24: adaptive-projection's direct measurement of the workload's cheap tables
//! (`adaptive/direct.rs`) — the rule on both sides of its threshold through the release, the
//! noise each direct measurement gets, the budget it spends, and the step decomposition that
//! the audit sees.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::AdaptiveProjectionParams;

mod common;
use common::{assert_phase_in_steps, assert_spends_rho, delta2, small};

/// Above the threshold (τ = 10: every table is cheap) all ten workload tables are measured
/// directly, at the equal split (`direct_l1_split` off; the split: the next test), each at
/// `ρ_t = βρ/k` with `σ² = Δ₂²/(2ρ_t)` (Δ₂² = 1 add/remove, 2
/// replace-one: a wrong sensitivity or a share of the whole ρ per table moves σ² by 2× or
/// 10×); with the rounds, everything spent lies in [ρ(1 − 1e-6), ρ]. Below it (τ = 0)
/// nothing is measured directly, and the release is the same as with the phase off (the
/// same seed draws the same noise): the rule costs nothing where it does not apply.
#[test]
fn cheap_tables_are_measured_at_the_share_and_the_budget_adds_up() {
    let (data, w) = small(400);
    let k = 10.0;
    for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
        for rho in [0.05, 2.0] {
            let beta = 0.6;
            let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
                .neighbouring(rel)
                .direct(beta, 10.0)
                .direct_l1_split(false)
                .check()
                .unwrap();
            let run = m.run(&data, &w, &mut dp_core::seeded_rng(3)).unwrap();
            assert_eq!(run.direct.len(), 10, "{rel} ρ {rho}");
            let rho_t = beta * rho / k;
            for d in &run.direct {
                assert_eq!(d.selected.len(), 2);
                assert!((d.measure_rho - rho_t).abs() <= 1e-12 * rho_t);
                let s2 = delta2(rel) / (2.0 * rho_t);
                assert!(
                    d.sigma2 >= s2 && d.sigma2 <= s2 * (1.0 + 1e-12),
                    "{}",
                    d.sigma2
                );
                assert_eq!(d.select_rho, 0.0);
            }
            assert_eq!(run.one_ways.len(), 5);
            assert_spends_rho(&run, rho, &format!("{rel} ρ {rho}"));
            assert!(run.rounds.last().unwrap().rho_spent <= rho);
            // the release says what it did
            assert!(
                run.release
                    .diagnostics
                    .notes
                    .iter()
                    .any(|n| n.contains(": 10 of 10; measured directly after the 1-ways: 10")),
                "{:?}",
                run.release.diagnostics.notes
            );

            // below the threshold: nothing is cheap, and the release is the phase-off one
            // (with the low-budget rule off: nothing cheap is what fires it, and the phase
            // off has no such rule; tests/adaptive_low_budget.rs)
            let mut none = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
                .neighbouring(rel)
                .direct(beta, 0.0);
            none.low_budget_rounds_per_attribute = none.rounds_per_attribute;
            let none = none
                .check()
                .unwrap()
                .run(&data, &w, &mut dp_core::seeded_rng(3))
                .unwrap();
            let off = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
                .neighbouring(rel)
                .direct(0.0, 0.0)
                .check()
                .unwrap()
                .run(&data, &w, &mut dp_core::seeded_rng(3))
                .unwrap();
            assert!(none.direct.is_empty());
            assert_eq!(none.release.answers, off.release.answers);
            assert_eq!(none.rounds, off.rounds);
        }
    }
}

/// The ℓ1-optimal split (`direct_l1_split`, the default; `adaptive/direct.rs`, "The split"):
/// ρ = 2, β = 0.6, τ = 10, n = 400, all ten 2-way tables cheap and measured. Every cell's
/// expected count under the 1-way model is at least 400/12 ≈ 33 records times the columns'
/// skew, far above σ_β = √(Δ₂²/(2·0.12)) ≤ 2.9, so each table's effective cells are its cells
/// and `ρ_t = βρ·c_t^{2/3} / Σ_u c_u^{2/3}` (derived here from the sizes 2, 3, 2, 4, 2: a table
/// of 12 cells takes (12/4)^{2/3} = 2.08× a 4-cell one; the equal split misses the 4-cell
/// tables' ρ_t by 38 %, a split by cells rather than cells^{2/3} the 12-cell one's by 20 %),
/// with `σ_t² = Δ₂²/(2ρ_t)` (the floors do not bind: a 4-cell table's is ln 8 / ln 132 = 0.43
/// of βρ/k, its split 0.73); the pool is βρ, and
/// with the rounds everything spent lies in [ρ(1 − 1e-6), ρ].
#[test]
fn the_cheap_tables_share_the_pool_by_their_cells_to_the_two_thirds() {
    let (data, w) = small(400);
    let sizes = [2.0f64, 3.0, 2.0, 4.0, 2.0];
    let (rho, beta) = (2.0, 0.6);
    let mut norm = 0.0;
    for a in 0..5 {
        for b in a + 1..5 {
            norm += (sizes[a] * sizes[b]).powf(2.0 / 3.0);
        }
    }
    for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
        let run = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
            .neighbouring(rel)
            .direct(beta, 10.0)
            .check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(3))
            .unwrap();
        assert_eq!(run.direct.len(), 10, "{rel}");
        for d in &run.direct {
            let c: f64 = d.selected.iter().map(|&i| sizes[i]).product();
            let rho_t = beta * rho * c.powf(2.0 / 3.0) / norm;
            assert!(
                (d.measure_rho - rho_t).abs() <= 1e-9 * rho_t,
                "{rel} {:?}: {} vs {rho_t}",
                d.selected,
                d.measure_rho
            );
            let s2 = delta2(rel) / (2.0 * rho_t);
            assert!((d.sigma2 - s2).abs() <= 1e-9 * s2, "{}", d.sigma2);
        }
        let pool: f64 = run.direct.iter().map(|d| d.measure_rho).sum();
        assert!((pool - beta * rho).abs() <= 1e-12 * rho, "{pool}");
        assert_spends_rho(&run, rho, &format!("{rel}"));
        let notes = run.release.diagnostics.notes.join("\n");
        assert!(notes.contains("split by effective cells^(2/3)"), "{notes}");
    }
}

/// Where the split is the equal one (a binary workload whose every cell is far above the
/// noise: 4 effective cells per table), each table takes the equal split's calibration
/// exactly, so the release with the split on is the split-off release, answer for answer
/// (`adaptive/direct.rs`, "The split": σ² off by a rounding would draw other noise).
/// Five binary attributes (ten tables: their equal shares differ from βρ/k in the last bit, and
/// without the rule the noise differs), n = 400 with every 2-way cell ≥ 40 records, ρ = 2.
#[test]
fn an_equal_split_is_the_equal_split_draw_for_draw() {
    use dp_queries::{Dataset, Domain, MarginalWorkload};
    let domain = Domain::new((0..5).map(|j| (format!("x{j}"), 2)).collect()).unwrap();
    let cols: Vec<Vec<u32>> = (0..5)
        .map(|j| (0..400u32).map(|i| ((i >> j) ^ (i / 7)) & 1).collect())
        .collect();
    let data = Dataset::from_columns(domain.clone(), cols).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    for m in w.marginals() {
        let c = m.try_count(&data).unwrap();
        assert!(c.iter().all(|&x| x >= 40), "{c:?}");
    }
    let run = |on: bool| {
        AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap())
            .direct(0.6, 10.0)
            .direct_l1_split(on)
            .check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(4))
            .unwrap()
    };
    let (on, off) = (run(true), run(false));
    assert_eq!(on.direct.len(), w.marginals().len());
    assert_eq!(on.direct, off.direct);
    assert_eq!(on.release.answers, off.release.answers);
}

/// Both sides of the majority rule (more than half of the workload tables cheap). ρ = 2,
/// β = 0.6, ten 2-way tables of 4, 6, 8 or 12 cells, n = 400 (the noisy total is within a few
/// counts of it): each direct measurement has σ² = 1/(2·0.12), so its expected ℓ1 noise over
/// the total is √(2/π)·2.041·cells/400 = 0.0163, 0.0244, 0.0326 for 4, 6, 8 cells. τ = 0.028:
/// the six tables of at most 6 cells are cheap, more than half, and all six are measured
/// (and nothing else). τ = 0.02: the three 4-cell tables are cheap, not more than half, so
/// none is measured and the release is the phase-off one.
#[test]
fn the_cheap_tables_are_measured_only_when_they_are_most_of_the_workload() {
    let (data, w) = small(400);
    let sizes = [2usize, 3, 2, 4, 2];
    let cells = |a: &[usize]| a.iter().map(|&i| sizes[i]).product::<usize>();
    // the low-budget rule off (it fires when too few are cheap, and the phase off has no
    // such rule; tests/adaptive_low_budget.rs)
    let run = |tau: f64, share: f64| {
        let mut p =
            AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap()).direct(share, tau);
        p.low_budget_rounds_per_attribute = p.rounds_per_attribute;
        p.check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(9))
            .unwrap()
    };
    let most = run(0.028, 0.6);
    assert_eq!(most.direct.len(), 6);
    assert!(most.direct.iter().all(|d| cells(&d.selected) <= 6));
    let few = run(0.02, 0.6);
    assert!(few.direct.is_empty());
    let notes = few.release.diagnostics.notes.join("\n");
    assert!(
        notes.contains(": 3 of 10; measured directly after the 1-ways: 0"),
        "{notes}"
    );
    assert_eq!(few.release.answers, run(0.02, 0.0).release.answers);
}

/// Both sides of the rule for the tables the model cannot take (`direct_unjoinable`). Same
/// data and τ = 0.028 as above: the six tables of at most 6 cells are cheap, a majority, so the
/// phase runs. With a model cap of 10⁶ cells the four others (8 and 12 cells) can join the
/// model and are left to the rounds: six measured. With a cap of 13 cells (the 1-way model's
/// 2 + 3 + 2 + 4 + 2) no table with the 4-valued attribute can join — its clique adds at least
/// 2 cells to any junction tree of these tables — so the four are measured directly too — ten, each at
/// `βρ/k` (a wrong share moves σ² by 10/6× or more), while the six cheap ones share their pool
/// `6βρ/k` by the split — and the release says so; with the rule off, six again. Everything
/// spent stays within ρ.
#[test]
fn tables_the_model_cannot_take_are_measured_directly_when_the_phase_runs() {
    let (data, w) = small(400);
    let (rho, beta) = (2.0, 0.6);
    let run = |cap: f64, on: bool| {
        let mut p = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
            .direct(beta, 0.028)
            .direct_unjoinable(on);
        p.max_model_cells = cap;
        p.check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(9))
            .unwrap()
    };
    let roomy = run(1e6, true);
    assert_eq!(roomy.direct.len(), 6);
    let tight = run(13.0, true);
    assert_eq!(tight.direct.len(), 10);
    let rho_t = beta * rho / 10.0;
    let s2 = 1.0 / (2.0 * rho_t);
    let cheap_pool: f64 = tight.direct[..6].iter().map(|d| d.measure_rho).sum();
    assert!(
        (cheap_pool - 6.0 * rho_t).abs() <= 1e-12 * rho_t,
        "{cheap_pool}"
    );
    for d in &tight.direct[6..] {
        assert!((d.measure_rho - rho_t).abs() <= 1e-12 * rho_t);
        assert!(
            d.sigma2 >= s2 && d.sigma2 <= s2 * (1.0 + 1e-12),
            "{}",
            d.sigma2
        );
    }
    assert!(tight.rounds.last().unwrap().rho_spent <= rho * (1.0 + 1e-12));
    let notes = tight.release.diagnostics.notes.join("\n");
    assert!(
        notes.contains("4 of them tables the model cannot take at its cap"),
        "{notes}"
    );
    assert_eq!(run(13.0, false).direct.len(), 6);
}

/// The step decomposition lists the direct measurements (one audited step for the first,
/// their losses counted) and still composes to the certificate's ρ.
#[test]
fn step_decomposition_counts_the_direct_measurements() {
    for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
        let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(0.5).unwrap())
            .neighbouring(rel)
            .direct(0.5, 10.0)
            .check()
            .unwrap();
        assert_phase_in_steps(&m, "direct", 10);
    }
}

/// Parameters: β outside [0, 1) and a negative or non-finite τ are refused by `check`.
#[test]
fn direct_parameters_are_validated() {
    let b = PrivacyLoss::zcdp(1.0).unwrap();
    for (share, tau) in [
        (1.0, 0.1),
        (-0.1, 0.1),
        (f64::NAN, 0.1),
        (0.5, -1.0),
        (0.5, f64::INFINITY),
    ] {
        assert!(
            AdaptiveProjectionParams::new(b)
                .direct(share, tau)
                .check()
                .is_err(),
            "β {share}, τ {tau}"
        );
    }
    assert!(
        AdaptiveProjectionParams::new(b)
            .direct(0.0, 0.0)
            .check()
            .is_ok()
    );
}
