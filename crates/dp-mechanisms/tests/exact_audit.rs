//! Issue #9 item 2: the exact-divergence audit of every discrete step type any mechanism
//! uses, with the claims taken from the mechanisms' own step decompositions
//! (`StepAudited::step_decomposition` → `AuditedStep::{claimed, accounted, primitive}`).
//!
//! Deterministic (no sampling): the output distributions are computed exactly
//! (`dp_mechanisms::exact_audit`), so there is no false-failure probability; the only slack
//! is the documented relative 1e-9 for `f64` evaluation.
//!
//! Run with `--nocapture` to print the table that docs/privacy.md reproduces.

use dp_core::{Neighbouring, PermuteAndFlip, PrivacyLoss, Selector};
use dp_mechanisms::iterative::*;
use dp_mechanisms::{
    AdaptiveProjectionParams, ExactStepCheck, Mechanism, StepAudited, StepPrimitive, StepRequest,
    exact_check, exact_check_step,
};
use dp_queries::{Dataset, Domain, MarginalWorkload};

fn small() -> (Dataset, MarginalWorkload) {
    let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    let cols = vec![vec![0, 1, 1, 0, 1, 1, 0, 1], vec![0, 2, 2, 1, 2, 0, 2, 2]];
    (Dataset::from_columns(domain, cols).unwrap(), w)
}

fn mechanisms() -> Vec<(String, Box<dyn Mechanism>)> {
    let mut v: Vec<(String, Box<dyn Mechanism>)> = Vec::new();
    for b in [
        PrivacyLoss::pure(0.5).unwrap(),
        PrivacyLoss::pure(5.0).unwrap(),
        PrivacyLoss::zcdp(0.1).unwrap(),
        PrivacyLoss::zcdp(2.0).unwrap(),
        PrivacyLoss::approx(2.0, 1e-6).unwrap(),
    ] {
        v.push((
            format!("mwem {b}"),
            Box::new(MwemParams::new(b).rounds(5).check().unwrap()),
        ));
    }
    for b in [
        PrivacyLoss::pure(20.0).unwrap(),
        PrivacyLoss::approx(20.0, 1e-6).unwrap(),
    ] {
        v.push((
            format!("ic-mw {b}"),
            Box::new(IcParams::new(b).alpha(0.3).check().unwrap()),
        ));
    }
    for (b, rel) in [
        (PrivacyLoss::zcdp(0.5).unwrap(), Neighbouring::ReplaceOne),
        // (ε, δ) = (1, 1e-6) gives per-step ρ ≈ 7e-4 (σ² ≈ 730), where the auditor's f64
        // evaluation of D_α near α = 1 loses ~4e-9 relative to cancellation (seen: worst
        // 6.85011669e-4 against the exact bound α/(2σ²) = 6.85011666e-4, above REL_TOL);
        // the auditor's resolution, not the mechanism, limits small budgets here
        (
            PrivacyLoss::approx(10.0, 1e-6).unwrap(),
            Neighbouring::AddRemove,
        ),
        (PrivacyLoss::zcdp(20.0).unwrap(), Neighbouring::AddRemove),
    ] {
        v.push((
            format!("adaptive-projection {b} {rel}"),
            Box::new(
                AdaptiveProjectionParams::new(b)
                    .neighbouring(rel)
                    .check()
                    .unwrap(),
            ),
        ));
    }
    for rho in [0.05, 0.5] {
        let b = PrivacyLoss::zcdp(rho).unwrap();
        v.push((
            format!("chaining-worst-case {b}"),
            Box::new(
                ChainingWorstCaseParams::new(b)
                    .alpha(0.2)
                    .rounds(5)
                    .check()
                    .unwrap(),
            ),
        ));
    }
    v
}

fn fmt_loss(l: &PrivacyLoss) -> String {
    match l {
        PrivacyLoss::Zcdp { rho } => format!("ρ = {rho:.6}"),
        PrivacyLoss::Pure { epsilon } => format!("ε = {epsilon:.6}"),
        other => other.to_string(),
    }
}

/// Every step of MWEM, IC-MW and chaining-worst-case (every budget kind each accepts) has a
/// primitive, and every claim (the step's pure claim and its accounted share) holds exactly
/// on the adversarial instances. The four step types are all covered.
#[test]
fn every_discrete_step_is_within_its_claims_exactly() {
    let (data, w) = small();
    let mut kinds = std::collections::BTreeSet::new();
    println!("| mechanism | step | step type | claim | worst divergence | margin |");
    println!("|---|---|---|---|---|---|");
    for (name, mech) in mechanisms() {
        let dec = mech
            .step_audited()
            .unwrap()
            .step_decomposition(&data, &w, &StepRequest::new(3))
            .unwrap();
        assert!(!dec.steps.is_empty(), "{name}");
        for step in &dec.steps {
            let check: ExactStepCheck = exact_check_step(step)
                .unwrap()
                .unwrap_or_else(|| panic!("{name}: step {} has no exact check", step.label));
            kinds.insert(check.kind.clone());
            for c in &check.checks {
                println!(
                    "| {name} | {} | {} | {} | {:.6e} | {:.3e} ({:.2}%) |",
                    step.label,
                    check.kind,
                    fmt_loss(&c.claim),
                    c.worst,
                    c.margin,
                    100.0 * c.margin / c.claimed
                );
                assert!(
                    c.passed,
                    "{name}: step {} violates its claim {}: worst {} ({})",
                    step.label, c.claim, c.worst, c.witness
                );
            }
        }
    }
    let want = [
        "measurement: discrete Gaussian",
        "measurement: discrete Laplace",
        "selection: exponential mechanism",
        "selection: permute-and-flip",
    ];
    for k in want {
        assert!(kinds.contains(k), "step type {k} not covered: {kinds:?}");
    }
}

/// The selector each mechanism uses, by budget kind (issue #9 item 1): zCDP accounting ⇒ the
/// exponential mechanism, pure accounting ⇒ permute-and-flip.
#[test]
fn selectors_by_budget_kind() {
    let (data, w) = small();
    for (name, mech) in mechanisms() {
        let dec = mech
            .step_audited()
            .unwrap()
            .step_decomposition(&data, &w, &StepRequest::new(3))
            .unwrap();
        for step in &dec.steps {
            if let Some(StepPrimitive::Selection { selector, .. }) = &step.primitive {
                let zcdp = matches!(step.accounted, PrivacyLoss::Zcdp { .. });
                let em = matches!(selector, Selector::Exponential(_));
                assert_eq!(zcdp, em, "{name}: {} uses {}", step.label, selector.name());
            }
        }
    }
}

/// White-box canary: MWEM under a zCDP budget with its selection step run by
/// permute-and-flip (the code before issue #9) and the same accounted ε₁²/8 is caught; so
/// is a Gaussian measurement accounted at 0.9× its ρ.
#[test]
fn canary_wrong_selector_or_claim_is_caught() {
    let (data, w) = small();
    let mech = MwemParams::new(PrivacyLoss::zcdp(0.5).unwrap())
        .rounds(5)
        .check()
        .unwrap();
    let dec = mech
        .step_decomposition(&data, &w, &StepRequest::new(3))
        .unwrap();
    let sel = dec
        .steps
        .iter()
        .find(|s| matches!(s.primitive, Some(StepPrimitive::Selection { .. })))
        .unwrap();
    let Some(StepPrimitive::Selection {
        selector,
        candidates,
    }) = sel.primitive.clone()
    else {
        unreachable!()
    };
    let pf = StepPrimitive::Selection {
        selector: Selector::PermuteAndFlip(
            PermuteAndFlip::new(selector.epsilon(), selector.sensitivity(), false).unwrap(),
        ),
        candidates,
    };
    let c = exact_check("canary", &pf, &[sel.accounted]).unwrap();
    assert!(!c.passed(), "{c:?}");
    let meas = dec
        .steps
        .iter()
        .find(|s| matches!(s.primitive, Some(StepPrimitive::DiscreteGaussian { .. })))
        .unwrap();
    let PrivacyLoss::Zcdp { rho } = meas.accounted else {
        panic!()
    };
    let c = exact_check(
        "canary",
        meas.primitive.as_ref().unwrap(),
        &[PrivacyLoss::Zcdp { rho: 0.9 * rho }],
    )
    .unwrap();
    assert!(!c.passed(), "{c:?}");
}

/// DualQuery's step (s samples from the multiplicative-weights distribution over queries)
/// has no exact check: its sampler draws on `f64` (issue #9 item 6, being replaced by a
/// colleague), so its output law is not a closed form of the scores. Pinned so that adding
/// one is noticed.
#[test]
fn dualquery_steps_have_no_exact_check_yet() {
    let (data, w) = small();
    let mech = dp_mechanisms::DualQueryParams::new(PrivacyLoss::approx(2.0, 1e-3).unwrap())
        .check()
        .unwrap();
    let dec = Mechanism::<MarginalWorkload>::step_audited(&mech)
        .unwrap()
        .step_decomposition(&data, &w, &StepRequest::new(3))
        .unwrap();
    assert!(dec.steps.iter().all(|s| s.primitive.is_none()));
}
