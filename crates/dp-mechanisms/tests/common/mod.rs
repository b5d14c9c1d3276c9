//! Fixtures shared by the adaptive-projection test files (each test file is its own crate and
//! uses a part of this module).
#![allow(dead_code)]

use dp_core::Neighbouring;
use dp_queries::{Dataset, Domain, MarginalWorkload};

/// Five attributes (sizes 2, 3, 2, 4, 2), n rows with some dependence between columns.
pub fn five_attributes(n: usize) -> Dataset {
    let domain = Domain::new(vec![
        ("a".into(), 2),
        ("b".into(), 3),
        ("c".into(), 2),
        ("d".into(), 4),
        ("e".into(), 2),
    ])
    .unwrap();
    let cols = (0..5)
        .map(|j| {
            (0..n)
                .map(|i| ((i * (j + 3) + i / 3 + (i % 7) * j) % domain.size(j) as usize) as u32)
                .collect()
        })
        .collect();
    Dataset::from_columns(domain, cols).unwrap()
}

/// [`five_attributes`] with all its 2-way tables (10 tables of 4–12 cells).
pub fn small(n: usize) -> (Dataset, MarginalWorkload) {
    let data = five_attributes(n);
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    (data, w)
}

/// Δ₂² of a table's counts: 1 under add/remove, 2 under replace-one.
pub fn delta2(rel: Neighbouring) -> f64 {
    match rel {
        Neighbouring::ReplaceOne => 2.0,
        Neighbouring::AddRemove => 1.0,
    }
}

/// The step decomposition of `m` on `small(80)` (seed 5) composes to ρ = 0.5 (within the
/// filter's slack) and lists the per-table phase `phase` ("direct" or "check"): losses whose
/// labels name it, counting `count` measurements together, and an audited step labelled
/// "`phase` measurement".
pub fn assert_phase_in_steps(
    m: &dp_mechanisms::adaptive::AdaptiveProjection,
    phase: &str,
    count: u64,
) {
    use dp_core::PrivacyLoss;
    use dp_mechanisms::{StepAudited, StepRequest};
    let (data, w) = small(80);
    let dec = m
        .step_decomposition(&data, &w, &StepRequest::new(5))
        .unwrap();
    match dec.composed().unwrap() {
        PrivacyLoss::Zcdp { rho } => {
            assert!(
                (0.5 * (1.0 - 1e-6)..=0.5 * (1.0 + 1e-9)).contains(&rho),
                "{rho}"
            )
        }
        other => panic!("{other}"),
    }
    // the direct split gives each table its own loss: the phase's losses counted together
    let counted: u64 = dec
        .losses
        .iter()
        .filter(|l| l.what.contains(phase))
        .map(|l| l.count)
        .sum();
    assert_eq!(counted, count, "the {phase} losses");
    let label = format!("{phase} measurement");
    assert!(
        dec.steps.iter().any(|s| s.label.contains(&label)),
        "{:?}",
        dec.steps.iter().map(|s| &s.label).collect::<Vec<_>>()
    );
}

/// Everything `run` spent — its 1-way, direct and check measurements and its rounds'
/// measurements and selections — lies in `[ρ(1 − 1e-6), ρ(1 + 1e-12)]` (`what` names the case).
pub fn assert_spends_rho(run: &dp_mechanisms::adaptive::AdaptiveRun, rho: f64, what: &str) {
    let measured = |t: &[dp_mechanisms::adaptive::AdaptiveRound]| -> f64 {
        t.iter().map(|r| r.measure_rho).sum()
    };
    let spent = measured(&run.one_ways)
        + measured(&run.direct)
        + measured(&run.checks)
        + run.rounds[1..]
            .iter()
            .map(|r| r.measure_rho + r.select_rho)
            .sum::<f64>();
    assert!(
        spent <= rho * (1.0 + 1e-12),
        "{what}: spent {spent} of {rho}"
    );
    assert!(
        spent >= rho * (1.0 - 1e-6),
        "{what}: spent {spent} of {rho}"
    );
}
