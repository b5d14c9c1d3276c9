//! Workload tables measured beside the model (issue #24 items 4–5; `adaptive::beside`): a
//! table whose clique cannot join the model even at the full size cap is still selectable,
//! and its release is its measurement shrunk toward the model's marginal. The public rule —
//! "cannot join the model at the cap" — is exercised on both sides: with a cap the table fits
//! under, nothing is measured beside the model; with one it does not, the table is measured
//! beside it and its answers are far better than the model's, which cannot represent the
//! dependence. The accounting is unchanged: the rounds still spend exactly ρ.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::AdaptiveProjectionParams;
use dp_queries::{Dataset, Domain, MarginalWorkload};

/// Two attributes of 10 values with `b = a` on 90 % of the records: the 2-way table is far
/// from the product of its 1-ways (what a model without the 2-way clique releases).
fn dependent(n: usize) -> (Dataset, MarginalWorkload) {
    let domain = Domain::new(vec![("a".into(), 10), ("b".into(), 10)]).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    let a: Vec<u32> = (0..n).map(|i| (i % 10) as u32).collect();
    let b: Vec<u32> = (0..n)
        .map(|i| {
            if i % 10 == 0 {
                ((i / 10) % 10) as u32
            } else {
                (i % 10) as u32
            }
        })
        .collect();
    (Dataset::from_columns(domain, vec![a, b]).unwrap(), w)
}

fn l1(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

#[test]
fn a_table_the_model_cannot_take_is_measured_beside_it() {
    let (data, w) = dependent(5000);
    let truth = w.answers(&data).unwrap();
    let run = |cap: f64, beside: bool, seed: u64| {
        let mut p = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap())
            .neighbouring(Neighbouring::AddRemove)
            .measure_beside_model(beside)
            // the rule of the selection rounds alone: no direct measurement of cheap tables
            // (which would measure this 2-way table before any round; adaptive_direct.rs)
            // and no checks (which would check it; adaptive_check.rs)
            .direct(0.0, 0.0)
            .check_share(0.0);
        p.max_model_cells = cap;
        let m = p.check().unwrap();
        m.run(&data, &w, &mut dp_core::seeded_rng(seed)).unwrap()
    };
    for seed in 0..3 {
        // the 2-way clique (100 cells) does not fit a cap of 50: beside the model
        let out = run(50.0, true, seed);
        let notes = out.release.diagnostics.notes.join("\n");
        assert!(notes.contains("measured beside it"), "{notes}");
        // the filter's total after the last round: all of ρ = 2, never more
        let spent = out.rounds.last().unwrap().rho_spent;
        assert!((2.0 * (1.0 - 1e-6)..=2.0).contains(&spent), "{spent}");
        // AIM's rule at the same cap: the product of the 1-ways, far from the truth
        let aim = run(50.0, false, seed);
        assert!(!aim.release.diagnostics.notes.join("\n").contains("beside"));
        let (e_beside, e_aim) = (
            l1(&out.release.answers, &truth),
            l1(&aim.release.answers, &truth),
        );
        // the product misses the 90 % diagonal: ℓ1 ≈ 2·0.81 = 1.6; the shrunk measurement
        // (σ ≈ 0.7 counts on 5 000 records) is within a few hundredths
        assert!(e_aim > 1.0, "seed {seed}: {e_aim}");
        assert!(
            e_beside < 0.1,
            "seed {seed}: beside {e_beside} vs AIM's rule {e_aim}"
        );
        // the other side of the rule: a cap the table fits under measures it into the model
        let roomy = run(1000.0, true, seed);
        assert!(
            !roomy
                .release
                .diagnostics
                .notes
                .join("\n")
                .contains("beside"),
            "{:?}",
            roomy.release.diagnostics.notes
        );
        assert!(l1(&roomy.release.answers, &truth) < 0.1);
    }
}

/// The default (issue #24, since 2026-11-27): parameters that do not say otherwise measure a
/// table the model cannot take beside it, and the release says so.
#[test]
fn the_default_measures_beside_the_model() {
    let (data, w) = dependent(5000);
    let truth = w.answers(&data).unwrap();
    let mut p = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap())
        .direct(0.0, 0.0)
        .check_share(0.0);
    p.max_model_cells = 50.0;
    let out = p
        .check()
        .unwrap()
        .run(&data, &w, &mut dp_core::seeded_rng(7))
        .unwrap();
    let notes = out.release.diagnostics.notes.join("\n");
    assert!(notes.contains("measured beside it"), "{notes}");
    assert!(l1(&out.release.answers, &truth) < 0.1);
}

/// Two attributes of 10 values, two of them common (`a ∈ {0, 1}`, `b = a` on 90 % of the
/// records) and eight never seen: the coarsened table groups the eight (`adaptive/coarse.rs`),
/// and its four common cells are each alone in their coarsened cell. The product of the
/// 1-ways puts 1 250 records where 2 250 are (0.2 of n).
fn common_diagonal(n: usize) -> (Dataset, MarginalWorkload) {
    let domain = Domain::new(vec![("a".into(), 10), ("b".into(), 10)]).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    let a: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
    let b: Vec<u32> = (0..n)
        .map(|i| {
            if i % 10 == 0 {
                1 - (i % 2) as u32
            } else {
                (i % 2) as u32
            }
        })
        .collect();
    (Dataset::from_columns(domain, vec![a, b]).unwrap(), w)
}

fn max_abs(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `max_error_beside` (issue #24, the default since 2026-11-29): with every round a
/// max-error round, a workload table the model cannot take even at the full cap is
/// reachable only through its coarsened twin measured beside the model. Both sides of the
/// rule: with it, the table's common cells take the measurement at release (the largest
/// error within a few σ of noise, σ ≈ 3 records here); without it, the release is the
/// product of the 1-ways, off by 0.2 in the diagonal's cells; under a cap the table fits,
/// it joins the model and nothing is kept beside it. ρ is spent exactly either way.
#[test]
fn a_max_error_round_measures_a_coarsened_table_beside_the_model() {
    let (data, w) = common_diagonal(5000);
    let truth = w.answers(&data).unwrap();
    let run = |cap: f64, on: bool, seed: u64| {
        let mut p = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap())
            .neighbouring(Neighbouring::AddRemove)
            .max_error_beside(on)
            // every round a max-error round (so no ℓ1 round measures the table beside the
            // model), no direct measurements and no checks (which would measure it)
            .max_error_every(1)
            .max_error_resolution(f64::INFINITY)
            .direct(0.0, 0.0)
            .check_share(0.0);
        p.max_model_cells = cap;
        p.check()
            .unwrap()
            .run(&data, &w, &mut dp_core::seeded_rng(seed))
            .unwrap()
    };
    for seed in 0..3 {
        // the 2-way clique (100 cells) does not fit a cap of 50
        let on = run(50.0, true, seed);
        let notes = on.release.diagnostics.notes.join("\n");
        assert!(
            notes.contains("max-error rounds measured 1 coarsened"),
            "{notes}"
        );
        assert!(
            on.rounds
                .iter()
                .any(|r| r.coarsened && r.selected == [0, 1])
        );
        let spent = on.rounds.last().unwrap().rho_spent;
        assert!((2.0 * (1.0 - 1e-6)..=2.0).contains(&spent), "{spent}");
        let off = run(50.0, false, seed);
        let off_notes = off.release.diagnostics.notes.join("\n");
        assert!(
            !off_notes.contains("max-error rounds measured"),
            "{off_notes}"
        );
        let (e_on, e_off) = (
            max_abs(&on.release.answers, &truth),
            max_abs(&off.release.answers, &truth),
        );
        // without: the product's 0.45·0.5 + … misses the diagonal cell by 0.2
        assert!(e_off > 0.15, "seed {seed}: {e_off}");
        // with: the cells take a measurement of σ ≈ 3 records (the round's ρ is at least
        // 0.05), so their error is a few σ over 5 000 records, far below 0.01
        assert!(e_on < 0.01, "seed {seed}: with {e_on}, without {e_off}");
        // the other side: a cap the table fits under takes it into the model
        let roomy = run(1000.0, true, seed);
        let roomy_notes = roomy.release.diagnostics.notes.join("\n");
        assert!(
            !roomy_notes.contains("max-error rounds measured"),
            "{roomy_notes}"
        );
        assert!(max_abs(&roomy.release.answers, &truth) < 0.01);
    }
}
