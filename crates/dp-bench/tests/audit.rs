//! The empirical privacy audit of every registered central-model mechanism (the gate every
//! such mechanism passes): each one, built with its `registry::audit_settings` budget, must
//! pass, and its canary — the same mechanism with half the noise scale claiming the same
//! guarantee — must be flagged: by the black-box audit, or, for the composed mechanisms
//! with a step audit (MWEM, IC-MW, DualQuery, chaining-worst-case, adaptive-projection,
//! boosting), by the white-box per-step audit (`audit::audit_steps`), which also checks
//! that the per-step losses compose to the certificate. A central-model mechanism added to
//! `registry::MECHANISMS` is audited here without touching this file.
//!
//! False-failure probability: a correct mechanism fails its black-box audit with
//! probability at most α = 1e-6 (`audit::DEFAULT_ALPHA`; Clopper–Pearson at confidence
//! 1 − α) and its step audit with probability at most α (α/K for each of its K steps,
//! union bound), so the main test fails a correct code base with probability at most
//! M·α + S·α for M registered mechanisms of which S have a step audit (13 and 6 today:
//! 1.9e-5). The canary checks are power
//! checks: the margins measured at these run counts are recorded in docs/privacy.md
//! ("Empirical audit").

use dp_bench::audit::{AuditConfig, audit_steps, audit_with};
use dp_bench::registry::{MECHANISMS, audit_settings};
use dp_core::{Neighbouring, PrivacyLoss};

#[test]
fn every_registered_mechanism_passes_and_its_canary_is_caught() {
    let mut failures = Vec::new();
    // the central-model entries: a local entry's guarantee is for two inputs of one client,
    // not for neighbouring datasets (its randomizers' e^ε ratio is tested exactly in
    // dp-local's tests/local_protocols.rs), and it has no audit settings
    for name in MECHANISMS
        .iter()
        .filter(|s| s.central().is_some())
        .map(|s| s.name)
    {
        let settings = audit_settings(name).unwrap();
        let config = AuditConfig::new(settings.ci_runs, 20260522);
        let honest = audit_with(name, &settings, &config).unwrap();
        eprintln!("{name}: {} ({})", honest.verdict_line(), honest.event);
        if !honest.passed {
            failures.push(format!(
                "{name}: ε lower bound {} exceeds the claimed {} — a privacy bug \
                 (event {}, {:?} vs {:?})",
                honest.epsilon_lower,
                honest.claimed_epsilon,
                honest.event,
                honest.favoured,
                honest.other
            ));
        }
        let canary = AuditConfig {
            noise_factor: Some(0.5),
            ..config.clone()
        };
        let Some(steps) = settings.steps else {
            let c = audit_with(name, &settings, &canary).unwrap();
            eprintln!("{name} canary: {} ({})", c.verdict_line(), c.event);
            if c.passed {
                failures.push(format!(
                    "{name}: the canary (half the noise scale) was NOT caught at {} runs \
                     (ε lower {} ≤ claimed {}): the audit has no power for this mechanism; \
                     raise ci_runs or pick a budget in registry::audit_settings",
                    settings.ci_runs, c.epsilon_lower, c.claimed_epsilon
                ));
            }
            continue;
        };
        // the white-box step audit
        let step_config = AuditConfig {
            runs: steps.ci_runs,
            ..config.clone()
        };
        let s = audit_steps(name, &settings, &step_config).unwrap();
        for line in s.step_lines() {
            eprintln!("{name}: {line}");
        }
        if !s.composition_ok {
            failures.push(format!(
                "{name}: the per-step losses compose to {} — not within the certificate {} \
                 or not the mechanism's accounting {}",
                s.composed, s.certificate.loss, s.accounting
            ));
        }
        for st in s.steps.iter().filter(|st| !st.passed) {
            failures.push(format!(
                "{name}: step {:?}: ε lower bound {} exceeds the claimed {} — a privacy bug \
                 (event {}, {:?} vs {:?})",
                st.label, st.epsilon_lower, st.claimed_epsilon, st.event, st.favoured, st.other
            ));
        }
        let c = audit_steps(
            name,
            &settings,
            &AuditConfig {
                noise_factor: Some(0.5),
                ..step_config
            },
        )
        .unwrap();
        for line in c.step_lines() {
            eprintln!("{name} canary: {line}");
        }
        if c.passed {
            failures.push(format!(
                "{name}: the step canary (half the noise scale) was NOT caught at {} runs \
                 per step: {:#?}",
                steps.ci_runs, c.steps
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The composition check of the step audit under every budget kind each composed
/// mechanism accepts: basic composition of pure steps, zCDP additivity (MWEM and
/// chaining-worst-case from ρ or from (ε, δ) converted to ρ), advanced composition (IC-MW
/// Thm 4, DualQuery Thm 4.3). The per-step losses must compose to within the certificate
/// and reproduce the mechanism's own accounting. (Few runs: only the composition is
/// checked here; a step's bound at 50 runs is ≤ its claim with probability ≥ 1 − α.)
#[test]
fn step_losses_compose_to_the_certificate_under_every_budget_kind() {
    let cases: &[(&str, PrivacyLoss)] = &[
        ("mwem", PrivacyLoss::Pure { epsilon: 3.0 }),
        ("mwem", PrivacyLoss::Zcdp { rho: 0.5 }),
        (
            "mwem",
            PrivacyLoss::Approx {
                epsilon: 3.0,
                delta: 1e-6,
            },
        ),
        ("ic-mw", PrivacyLoss::Pure { epsilon: 10.0 }),
        (
            "ic-mw",
            PrivacyLoss::Approx {
                epsilon: 10.0,
                delta: 1e-6,
            },
        ),
        ("dualquery", PrivacyLoss::Pure { epsilon: 100.0 }),
        (
            "dualquery",
            PrivacyLoss::Approx {
                epsilon: 10.0,
                delta: 1e-6,
            },
        ),
        ("chaining-worst-case", PrivacyLoss::Zcdp { rho: 0.5 }),
        ("boosting", PrivacyLoss::Zcdp { rho: 0.5 }),
        (
            "boosting",
            PrivacyLoss::Approx {
                epsilon: 3.0,
                delta: 1e-6,
            },
        ),
        (
            "chaining-worst-case",
            PrivacyLoss::Approx {
                epsilon: 3.0,
                delta: 1e-6,
            },
        ),
    ];
    for (name, budget) in cases {
        let mut settings = audit_settings(name).unwrap();
        let mut steps = settings.steps.unwrap();
        steps.budget = *budget;
        settings.steps = Some(steps);
        let s = audit_steps(name, &settings, &AuditConfig::new(50, 1)).unwrap();
        assert!(
            s.composition_ok,
            "{name} at {budget}: composed {} vs certificate {} / accounting {}",
            s.composed, s.certificate.loss, s.accounting
        );
        assert!(s.passed, "{name} at {budget}: {:#?}", s.steps);
    }
}

/// The baselines also declare add/remove guarantees: audit them under that relation
/// (the pair is then D0 + r against D0).
#[test]
fn baselines_pass_under_add_remove_and_their_canary_is_caught() {
    for name in ["laplace", "gaussian"] {
        let settings = audit_settings(name).unwrap();
        let config = AuditConfig {
            neighbouring: Neighbouring::AddRemove,
            ..AuditConfig::new(settings.ci_runs / 2, 7)
        };
        let honest = audit_with(name, &settings, &config).unwrap();
        assert!(
            honest.passed,
            "{name} add/remove: {}",
            honest.verdict_line()
        );
        let canary = AuditConfig {
            noise_factor: Some(0.5),
            ..config
        };
        let c = audit_with(name, &settings, &canary).unwrap();
        assert!(!c.passed, "{name} add/remove canary: {}", c.verdict_line());
    }
}

/// The audit is reproducible: same seed, same report.
#[test]
fn audit_is_deterministic_given_the_seed() {
    let settings = audit_settings("laplace").unwrap();
    let config = AuditConfig::new(2000, 3);
    let a = audit_with("laplace", &settings, &config).unwrap();
    let b = audit_with("laplace", &settings, &config).unwrap();
    assert_eq!(a, b);
    assert!(a.epsilon_lower >= 0.0 && a.confidence == 1.0 - 1e-6);
}
