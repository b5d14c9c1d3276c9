//! Issue #25: adaptive-projection reads the data only through the exact counts of the
//! workload's tables (`AdaptiveProjection::run_from_counts`, `Mechanism::release_counts`),
//! so a release from those counts — a stream, an engine — is the release from the records,
//! draw for draw; and counts no dataset has are refused.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::Mechanism;
use dp_mechanisms::adaptive::AdaptiveProjectionParams;
use dp_queries::{Domain, Marginal, MarginalWorkload};

mod common;
use common::five_attributes as data;

/// Tables in unsorted attribute order, a 1-way table inside another table, and a 3-way
/// one: the counts arrive in each table's own order and the candidates are sorted subsets.
fn workload(domain: &Domain) -> MarginalWorkload {
    let lists = [vec![3, 0], vec![4, 1, 2], vec![1], vec![2, 4]];
    let tables = lists
        .iter()
        .map(|l| Marginal::new(domain, l.clone()).unwrap())
        .collect();
    MarginalWorkload::new(domain, tables).unwrap()
}

/// The same seed gives the same release from the counts as from the records: answers,
/// rounds (selections, σ², budgets), the direct phase, notes and synthetic records, under both
/// relations and with the direct phase on (τ large) and off. Any difference in a candidate's
/// counts (a wrong permutation of a table's cells, a wrong marginal) changes a score or a
/// measurement and with it the draws that follow.
#[test]
fn the_release_from_the_counts_is_the_release_from_the_records() {
    let d = data(500);
    let w = workload(d.domain());
    let counts = w.count_all(&d).unwrap();
    for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
        for tau in [0.0, 10.0] {
            let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(0.5).unwrap())
                .neighbouring(rel)
                .direct(0.5, tau)
                .check()
                .unwrap();
            let a = m.run(&d, &w, &mut dp_core::seeded_rng(9)).unwrap();
            let b = m
                .run_from_counts(&counts, d.n(), &w, &mut dp_core::seeded_rng(9))
                .unwrap();
            assert_eq!(a.release.answers, b.release.answers, "{rel} τ {tau}");
            assert_eq!(a.rounds, b.rounds, "{rel} τ {tau}");
            assert_eq!(a.direct, b.direct, "{rel} τ {tau}");
            assert_eq!(a.release.diagnostics.notes, b.release.diagnostics.notes);
            let (sa, sb) = (
                a.release.synthetic.as_ref().unwrap(),
                b.release.synthetic.as_ref().unwrap(),
            );
            assert_eq!(sa.weights, sb.weights);
            for j in 0..d.domain().len() {
                assert_eq!(sa.records.column(j), sb.records.column(j));
            }
            // and through the trait, as the CLI's streaming path calls it (i64 counts)
            assert!(Mechanism::<MarginalWorkload>::counts_suffice(&m));
            let signed = counts.iter().map(|&c| c as i64).collect();
            let c = m
                .release_counts(signed, d.n(), &w, &mut dp_core::seeded_rng(9))
                .unwrap();
            assert_eq!(c.answers, a.release.answers);
        }
    }
}

/// Under add/remove neighbours n is private and not used: any n gives the same release (the
/// total is estimated from the noisy 1-ways). Under replace-one it is the public total.
#[test]
fn n_is_used_only_under_replace_one() {
    let d = data(300);
    let w = workload(d.domain());
    let counts = w.count_all(&d).unwrap();
    let run = |rel, n| {
        AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
            .neighbouring(rel)
            .check()
            .unwrap()
            .run_from_counts(&counts, n, &w, &mut dp_core::seeded_rng(4))
            .unwrap()
            .release
            .answers
    };
    assert_eq!(
        run(Neighbouring::AddRemove, 300),
        run(Neighbouring::AddRemove, 7)
    );
    assert_ne!(
        run(Neighbouring::ReplaceOne, 300),
        run(Neighbouring::ReplaceOne, 7)
    );
}

/// Counts that no dataset has are refused before any draw, with the reason: the wrong
/// length, a negative count, tables of different totals; and no records under replace-one.
#[test]
fn counts_no_dataset_has_are_refused() {
    let d = data(200);
    let w = workload(d.domain());
    let counts = w.count_all(&d).unwrap();
    let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .check()
        .unwrap();
    let err = |c: &[u64], n: usize, m: &dp_mechanisms::adaptive::AdaptiveProjection| {
        m.run_from_counts(c, n, &w, &mut dp_core::seeded_rng(1))
            .map(drop)
            .unwrap_err()
            .to_string()
    };
    let short = &counts[..counts.len() - 1];
    assert!(err(short, 200, &m).contains("counts for a workload of"));
    let mut neg: Vec<i64> = counts.iter().map(|&c| c as i64).collect();
    neg[0] = -1;
    neg[1] += 1 + counts[0] as i64; // keep the table's total
    let e = m
        .release_counts(neg, 200, &w, &mut dp_core::seeded_rng(1))
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(e.contains("negative count"), "{e}");
    let mut moved = counts.clone();
    let last = moved.len() - 1;
    moved[last] += 1; // the last table counts one record more
    assert!(err(&moved, 200, &m).contains("not the tables of one dataset"));
    let r1 = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .neighbouring(Neighbouring::ReplaceOne)
        .check()
        .unwrap();
    let zeros = vec![0u64; counts.len()];
    assert!(err(&zeros, 0, &r1).contains("no records"));
    // under add/remove an empty dataset is released like any other (a refusal is an output)
    assert!(
        m.run_from_counts(&zeros, 0, &w, &mut dp_core::seeded_rng(1))
            .is_ok()
    );
}
