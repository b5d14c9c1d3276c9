//! The adaptive projection mechanism (issue #10 item 3): its accounting (the zCDP filter
//! never lets the rounds exceed ρ, and they use it up), its step decomposition composes to
//! the certificate, its inputs are validated, and add/remove releases never use `n`.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::AdaptiveProjectionParams;
use dp_mechanisms::{Mechanism, StepAudited, StepRequest};
use dp_queries::{Dataset, Domain, MarginalWorkload};

fn small(n: usize) -> (Dataset, MarginalWorkload) {
    let domain = Domain::new(vec![
        ("a".into(), 2),
        ("b".into(), 3),
        ("c".into(), 2),
        ("d".into(), 4),
    ])
    .unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    let cols = (0..4)
        .map(|j| {
            (0..n)
                .map(|i| ((i * (j + 3) + i / 3) % domain.size(j) as usize) as u32)
                .collect()
        })
        .collect();
    (Dataset::from_columns(domain, cols).unwrap(), w)
}

/// Over budgets spanning five orders of magnitude, both relations and several seeds: the
/// charges of the rounds (1-ways + selections + measurements) sum to at most ρ and to at
/// least ρ·(1 − 1e-6) (the last round takes what is left), every round's selection charge is
/// ε²/8 of its ε, and annealing multiplies the next round's charges by 4.
#[test]
fn rounds_spend_exactly_the_budget_and_never_more() {
    let (data, w) = small(300);
    for rho in [1e-4, 0.01, 1.0, 10.0] {
        for rel in [Neighbouring::ReplaceOne, Neighbouring::AddRemove] {
            for seed in 0..3 {
                let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
                    .neighbouring(rel)
                    .check()
                    .unwrap();
                let run = m.run(&data, &w, &mut dp_core::seeded_rng(seed)).unwrap();
                let d = 4.0;
                assert_eq!(run.one_ways.len(), 4);
                let mut total: f64 = run.one_ways.iter().map(|r| r.measure_rho).sum();
                // the cheap workload tables measured directly after the 1-ways (direct.rs)
                for r in &run.direct {
                    total += r.measure_rho;
                    assert_eq!(r.select_rho, 0.0);
                }
                for r in &run.rounds[1..] {
                    total += r.measure_rho + r.select_rho;
                    assert!(r.select_rho <= r.select_epsilon.powi(2) / 8.0 * (1.0 + 1e-12));
                    assert!(r.select_rho >= r.select_epsilon.powi(2) / 8.0 * (1.0 - 1e-9));
                    // σ² = Δ₂²/(2ρ_measure): Δ₂² = 2 (replace-one), 1 (add/remove)
                    let d2 = if rel == Neighbouring::ReplaceOne {
                        2.0
                    } else {
                        1.0
                    };
                    assert!(r.sigma2 >= d2 / (2.0 * r.measure_rho));
                    assert!(r.sigma2 <= d2 / (2.0 * r.measure_rho) * (1.0 + 1e-12));
                }
                assert!(total <= rho * (1.0 + 1e-12), "ρ {rho}: spent {total}");
                assert!(total >= rho * (1.0 - 1e-6), "ρ {rho}: spent only {total}");
                let last = run.rounds.last().unwrap().rho_spent;
                assert!(last <= rho, "filter total {last} > {rho}");
                for pair in run.rounds[1..].windows(2) {
                    let (a, b) = (&pair[0], &pair[1]);
                    if a.annealed && b.round != run.rounds.len() - 1 {
                        assert!((b.measure_rho / a.measure_rho - 4.0).abs() < 1e-9);
                    }
                }
                // the initial per-round budget: T = 16·d rounds, α = 0.9, for the first 1-way
                // table; for the others T = 12·d when the budget is low
                // (tests/adaptive_low_budget.rs)
                let t = 16.0 * d;
                assert!((run.one_ways[0].measure_rho - 0.9 * rho / t).abs() < 1e-12 * rho);
                let t_rest = if run.low_budget { 12.0 * d } else { t };
                for r in &run.one_ways[1..] {
                    assert!((r.measure_rho - 0.9 * rho / t_rest).abs() < 1e-12 * rho);
                }
                assert_eq!(run.release.certificate.neighbouring(), Some(rel));
                assert_eq!(run.release.answers.len(), w.num_queries());
                assert!(
                    run.release
                        .answers
                        .iter()
                        .all(|a| a.is_finite() && *a >= 0.0)
                );
            }
        }
    }
}

/// The step decomposition composes to exactly the certificate's ρ (within rounding) and
/// audits the first and last rounds; the measured candidate can be fixed.
#[test]
fn step_decomposition_composes_to_the_certificate() {
    // n well above the low-budget threshold (about 33 here: tests/adaptive_low_budget.rs),
    // so that the noisy total of the first 1-way table (σ ≈ 12 under add/remove) never
    // takes the run to a low budget, whose larger rounds leave one round after the direct
    // phase
    let (data, w) = small(200);
    for rel in [Neighbouring::ReplaceOne, Neighbouring::AddRemove] {
        let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(0.5).unwrap())
            .neighbouring(rel)
            .check()
            .unwrap();
        let dec = m
            .step_decomposition(&data, &w, &StepRequest::new(11))
            .unwrap();
        let composed = dec.composed().unwrap();
        match composed {
            PrivacyLoss::Zcdp { rho } => {
                assert!((0.5 * (1.0 - 1e-6)..=0.5 * (1.0 + 1e-9)).contains(&rho))
            }
            other => panic!("{other}"),
        }
        // 1-way + the first direct measurement (defaults: every table of this small domain
        // is cheap) + (selection, measurement) × 2 audited rounds
        assert_eq!(dec.steps.len(), 6, "{:?}", dec.steps);
        assert!(dec.steps.iter().all(|s| s.neighbouring == rel));
        // the runners are the release's code: they run on the reference data
        let mut rng = dp_core::seeded_rng(1);
        for s in &dec.steps {
            let out = s.run(&data, &mut rng).unwrap();
            assert!(!out.is_empty());
        }
    }
}

/// Inputs: pure ε is refused (Gaussian noise cannot give it); parameters are validated;
/// under add/remove an empty dataset is released like any other (refusing it would
/// distinguish it from its neighbours), under replace-one it is refused.
#[test]
fn inputs_are_validated_and_add_remove_releases_the_empty_dataset() {
    assert!(
        AdaptiveProjectionParams::new(PrivacyLoss::pure(1.0).unwrap())
            .check()
            .is_err()
    );
    let mut p = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap());
    p.measurement_share = 1.0;
    assert!(p.check().is_err());
    let mut p = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap());
    p.rounds_per_attribute = 0;
    assert!(p.check().is_err());
    let (data, w) = small(10);
    let empty = Dataset::empty(data.domain().clone());
    let ar = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .check()
        .unwrap();
    let r = ar.release(&empty, &w, &mut dp_core::seeded_rng(2)).unwrap();
    assert_eq!(r.answers.len(), w.num_queries());
    let ro = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .neighbouring(Neighbouring::ReplaceOne)
        .check()
        .unwrap();
    assert!(ro.release(&empty, &w, &mut dp_core::seeded_rng(2)).is_err());
    // another domain is refused before any noise
    let other = Domain::new(vec![("x".into(), 2)]).unwrap();
    let bad = Dataset::from_columns(other, vec![vec![0, 1]]).unwrap();
    assert!(ar.release(&bad, &w, &mut dp_core::seeded_rng(2)).is_err());
}

/// Under add/remove nothing in the release depends on `n` except through noisy counts:
/// no number in the notes is the true n (a noisy total such as 1234.2, printed to one
/// decimal, is a different number and allowed).
#[test]
fn add_remove_release_does_not_report_n() {
    let (data, w) = small(1234);
    let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .check()
        .unwrap();
    let r = m.release(&data, &w, &mut dp_core::seeded_rng(5)).unwrap();
    for note in &r.diagnostics.notes {
        let numbers = note
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map(|t| t.trim_end_matches('.'));
        for t in numbers {
            assert_ne!(t, "1234", "{note}");
        }
    }
}

/// A stop requested during the run (here from the progress callback after round 1) ends it
/// at the next round with `CoreError::Stopped`, having spent only part of the budget; a
/// stop requested before the run ends it before the first selection round; without a
/// request the same run finishes.
#[test]
fn a_requested_stop_ends_the_run_at_its_next_round() {
    use dp_core::{CoreError, StopRequest};
    use dp_mechanisms::MechanismError;
    use std::sync::{Arc, Mutex};
    let (data, w) = small(200);
    // a small per-round budget: many rounds
    let params = || {
        let mut p = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap());
        p.rounds_per_attribute = 64;
        p
    };
    let full = params().check().unwrap();
    let finished = full.run(&data, &w, &mut dp_core::seeded_rng(3)).unwrap();
    // rounds 0 (the 1-ways), 1, 2, … when nothing stops it
    assert!(finished.rounds.len() > 2, "{}", finished.rounds.len());

    let stop = StopRequest::new();
    let caller = stop.clone();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let m = params()
        .stop_on(stop)
        .progress(Arc::new(move |r| {
            sink.lock().unwrap().push(r.round);
            if r.round == 1 {
                caller.request();
            }
        }))
        .check()
        .unwrap();
    let err = m.run(&data, &w, &mut dp_core::seeded_rng(3)).unwrap_err();
    assert!(
        matches!(err, MechanismError::Core(CoreError::Stopped)),
        "{err:?}"
    );
    // rounds 0 and 1 ran; none after the request
    assert_eq!(*seen.lock().unwrap(), vec![0, 1]);

    let early = StopRequest::new();
    early.request();
    let m = params().stop_on(early).check().unwrap();
    let err = m.run(&data, &w, &mut dp_core::seeded_rng(3)).unwrap_err();
    assert!(
        matches!(err, MechanismError::Core(CoreError::Stopped)),
        "{err:?}"
    );
}

/// The progress callback sees every round the run reports, in order; a memory bound only
/// shrinks the caps, and one too small for the 1-way tables fails the release with an
/// error (no panic, no release beyond the bound).
#[test]
fn progress_sees_every_round_and_memory_bound_refuses_cleanly() {
    use std::sync::{Arc, Mutex};
    let (data, w) = small(200);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .progress(Arc::new(move |r| sink.lock().unwrap().push(r.clone())))
        .check()
        .unwrap();
    let run = m.run(&data, &w, &mut dp_core::seeded_rng(3)).unwrap();
    assert_eq!(*seen.lock().unwrap(), run.rounds);
    assert!(run.rounds.len() > 1);

    let defaults = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap());
    let roomy = defaults.clone().within_memory(u64::MAX);
    assert_eq!(roomy.max_model_cells, defaults.max_model_cells);
    assert_eq!(roomy.max_elimination_cells, defaults.max_elimination_cells);
    // 1 MiB: a quarter over 40 bytes per model cell, a quarter over 32 per elimination entry
    let mib = defaults.clone().within_memory(1 << 20);
    assert_eq!(mib.max_model_cells, ((1u64 << 18) / 40) as f64);
    assert_eq!(mib.max_elimination_cells, ((1u64 << 18) / 32) as f64);
    // 400 bytes: 2 model cells, fewer than the 11 cells of the four 1-way tables
    let tiny = defaults.within_memory(400).check().unwrap();
    let err = tiny
        .release(&data, &w, &mut dp_core::seeded_rng(3))
        .unwrap_err();
    assert!(err.to_string().contains("cells"), "{err}");
}
