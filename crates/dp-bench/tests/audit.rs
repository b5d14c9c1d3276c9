//! The empirical privacy audit of every registered mechanism (the gate every mechanism
//! passes): each one, built with its `registry::audit_settings` budget, must pass, and its
//! canary — the same mechanism with half the noise scale claiming the same guarantee —
//! must be flagged. A mechanism added to `registry::MECHANISMS` is audited here without
//! touching this file.
//!
//! False-failure probability: a correct mechanism fails its audit with probability at most
//! α = 1e-6 (`audit::DEFAULT_ALPHA`; the ε lower bound is a Clopper–Pearson bound at
//! confidence 1 − α). The canary check is a power check: the margins measured at these run
//! counts are recorded in docs/privacy.md ("Empirical audit").

use dp_bench::audit::{AuditConfig, audit_with};
use dp_bench::registry::{MECHANISMS, audit_settings};
use dp_core::Neighbouring;

#[test]
fn every_registered_mechanism_passes_and_its_canary_is_caught() {
    let mut failures = Vec::new();
    for (name, _) in MECHANISMS {
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
        let c = audit_with(name, &settings, &canary).unwrap();
        eprintln!("{name} canary: {} ({})", c.verdict_line(), c.event);
        if c.passed && settings.canary_detectable {
            failures.push(format!(
                "{name}: the canary (half the noise scale) was NOT caught at {} runs \
                 (ε lower {} ≤ claimed {}): the audit has no power for this mechanism; raise \
                 ci_runs or pick a budget in registry::audit_settings",
                settings.ci_runs, c.epsilon_lower, c.claimed_epsilon
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
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
