//! Issue #24: adaptive-projection's coarsened candidates (`adaptive/coarse.rs`) — the rule
//! that groups an attribute's rare values on both sides of its threshold through the release,
//! the noise and budget of a round that measures a coarsened table, and the steps the audit
//! sees (the coarsened measurement and the selection among fine and coarsened candidates,
//! checked exactly at sensitivities derived by brute force).

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::adaptive::{AdaptiveProjectionParams, AdaptiveRun};
use dp_mechanisms::{StepAudited, StepRequest, exact_check_step};
use dp_queries::{Dataset, Domain, MarginalWorkload};

mod common;
use common::delta2;

/// Four attributes (sizes 6, 3, 2, 4), n = 2 000: attribute `a` has two common values (900
/// and 940 records) and four rare ones (40 each); every other value has at least 400
/// records. With some dependence between the columns.
fn rare_values() -> (Dataset, MarginalWorkload) {
    let domain = Domain::new(vec![
        ("a".into(), 6),
        ("b".into(), 3),
        ("c".into(), 2),
        ("d".into(), 4),
    ])
    .unwrap();
    let n = 2000usize;
    let a: Vec<u32> = (0..n)
        .map(|i| match i {
            0..900 => 0,
            900..1840 => 1,
            _ => 2 + ((i - 1840) / 40) as u32,
        })
        .collect();
    let b: Vec<u32> = (0..n)
        .map(|i| ((i / 7 + a[i] as usize) % 3) as u32)
        .collect();
    let c: Vec<u32> = (0..n)
        .map(|i| ((i / 3 + b[i] as usize) % 2) as u32)
        .collect();
    let d: Vec<u32> = (0..n)
        .map(|i| ((i / 11 + a[i] as usize) % 4) as u32)
        .collect();
    let data = Dataset::from_columns(domain, vec![a, b, c, d]).unwrap();
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    (data, w)
}

fn run(data: &Dataset, w: &MarginalWorkload, rel: Neighbouring, theta: f64) -> AdaptiveRun {
    run_at(data, w, rel, theta, 1.0)
}

fn run_at(
    data: &Dataset,
    w: &MarginalWorkload,
    rel: Neighbouring,
    theta: f64,
    kappa: f64,
) -> AdaptiveRun {
    // without the direct measurements and checks, so that the rounds measure the workload
    AdaptiveProjectionParams::new(PrivacyLoss::zcdp(2.0).unwrap())
        .neighbouring(rel)
        .direct(0.0, 0.0)
        .check_share(0.0)
        .coarse_threshold(theta)
        .coarse_resolution(kappa)
        .check()
        .unwrap()
        .run(data, w, &mut dp_core::seeded_rng(4))
        .unwrap()
}

fn note(run: &AdaptiveRun) -> String {
    run.release
        .diagnostics
        .notes
        .iter()
        .find(|n| n.starts_with("coarsened candidates"))
        .cloned()
        .unwrap_or_default()
}

/// Both sides of the threshold `θσ₁` (σ₁ the 1-way table's noise, read from the run): at
/// `θσ₁ = 200` the four rare values of `a` (40 records; σ₁ = 4.2 under add/remove, 6.0 under
/// replace-one: 25σ₁ or more below) are rare and no other value is (every other count is at
/// least 400, 33σ₁ or more above), so exactly one attribute
/// is grouped and rounds measure coarsened tables, each at the round's σ
/// (`σ² = Δ₂²/(2ρ_measure)`: a coarsened table has the table's sensitivity — a wrong Δ
/// moves σ² by 2×), with everything spent within ρ. At `θσ₁ = 10` (30 records, 5σ₁ or more,
/// below the rare counts) nothing is rare and the release is the one without the candidates (the
/// same seed draws the same noise).
#[test]
fn rare_values_are_grouped_on_one_side_of_the_threshold_only() {
    let (data, w) = rare_values();
    for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
        let off = run(&data, &w, rel, 0.0);
        assert!(note(&off).is_empty());
        let sigma_a = off
            .one_ways
            .iter()
            .find(|r| r.selected == [0])
            .unwrap()
            .sigma2
            .sqrt();
        assert!(sigma_a < 7.0, "σ₁ {sigma_a}");
        let below = run(&data, &w, rel, 10.0 / sigma_a);
        assert!(
            note(&below).contains("0 of the 4 attributes grouped"),
            "{}",
            note(&below)
        );
        assert_eq!(below.release.answers, off.release.answers, "{rel}");
        assert!(below.rounds.iter().all(|r| !r.coarsened));

        let above = run(&data, &w, rel, 200.0 / sigma_a);
        assert!(
            note(&above).contains("1 of the 4 attributes grouped"),
            "{}",
            note(&above)
        );
        let coarse: Vec<_> = above.rounds.iter().filter(|r| r.coarsened).collect();
        assert!(!coarse.is_empty(), "{rel}: no coarsened round");
        for r in &coarse {
            // only tables with attribute a have a coarsening
            assert!(r.selected.contains(&0) && r.selected.len() >= 2, "{r:?}");
            let s2 = delta2(rel) / (2.0 * r.measure_rho);
            assert!(
                r.sigma2 >= s2 && r.sigma2 <= s2 * (1.0 + 1e-12),
                "{rel}: σ² {} against {s2}",
                r.sigma2
            );
            assert!(r.select_rho > 0.0);
        }
        let spent = above.rounds.last().unwrap().rho_spent;
        assert!(
            (2.0 * (1.0 - 1e-6)..=2.0 * (1.0 + 1e-12)).contains(&spent),
            "{spent}"
        );
        assert!(
            note(&above).contains(&format!("{} of the", coarse.len())),
            "{}",
            note(&above)
        );

        // the resolution rule, both sides: the cut θσ₁ = 200 is 10 % of the noisy total
        // (2 000 within a few counts: every estimate of it averages tables of σ ≤ 6): grouped
        // at κ_c = 0.11, not at 0.09 (then the release is the one without the candidates)
        let fine = run_at(&data, &w, rel, 200.0 / sigma_a, 0.11);
        assert!(note(&fine).contains("1 of the 4 attributes grouped"));
        let coarse_noise = run_at(&data, &w, rel, 200.0 / sigma_a, 0.09);
        assert!(
            note(&coarse_noise).contains("0 of the 4 attributes grouped"),
            "{}",
            note(&coarse_noise)
        );
        assert_eq!(coarse_noise.release.answers, off.release.answers, "{rel}");
    }
}

/// The audit's view of a run with coarsened candidates, on the exact audit's 8-record 2×3
/// table (every value rare at θ = 10⁹: each attribute is one group, so the coarsening of the
/// 2-way table is its total): with `measured_query` the last allowed candidate (a coarsened
/// one: they follow the fine ones), each audited round's measurement is of the coarsened
/// table, and every step — those measurements and the selections among fine and coarsened
/// candidates — keeps its claims exactly at the sensitivity derived by brute force over
/// neighbouring datasets, under both relations; the steps compose to the certificate's ρ.
#[test]
fn the_audit_sees_the_coarsened_steps_within_their_claims() {
    let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    let cols = vec![vec![0, 1, 1, 0, 1, 1, 0, 1], vec![0, 2, 2, 1, 2, 0, 2, 2]];
    let data = Dataset::from_columns(domain, cols).unwrap();
    for (rel, rho) in [
        (Neighbouring::AddRemove, 20.0),
        (Neighbouring::ReplaceOne, 0.5),
    ] {
        let m = AdaptiveProjectionParams::new(PrivacyLoss::zcdp(rho).unwrap())
            .neighbouring(rel)
            .coarse_threshold(1e9)
            .coarse_resolution(f64::MAX)
            .check()
            .unwrap();
        let request = StepRequest {
            seed: 3,
            rounds: Vec::new(),
            measured_query: Some(usize::MAX),
        };
        let dec = m.step_decomposition(&data, &w, &request).unwrap();
        let coarse: Vec<_> = dec
            .steps
            .iter()
            .filter(|s| s.label.contains("measurement of [0, 1] coarsened"))
            .collect();
        assert!(
            !coarse.is_empty(),
            "{rel}: {:?}",
            dec.steps.iter().map(|s| &s.label).collect::<Vec<_>>()
        );
        for step in &dec.steps {
            let check = exact_check_step(step, &data).unwrap().unwrap();
            assert!(
                check.sensitivity_ok(),
                "{rel}: {} declares {} but the brute force derives {:?}",
                step.label,
                check.declared_sensitivity,
                check.derived
            );
            for c in &check.checks {
                assert!(
                    c.passed,
                    "{rel}: {} violates {}: {}",
                    step.label, c.claim, c.worst
                );
            }
        }
        match dec.composed().unwrap() {
            PrivacyLoss::Zcdp { rho: r } => {
                assert!(r <= rho * (1.0 + 1e-9) && r >= rho * (1.0 - 1e-6), "{r}")
            }
            other => panic!("{other}"),
        }
    }
}

/// A negative or non-finite θ is refused by `check`.
#[test]
fn the_threshold_is_validated() {
    let b = PrivacyLoss::zcdp(1.0).unwrap();
    for v in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(
            AdaptiveProjectionParams::new(b)
                .coarse_threshold(v)
                .check()
                .is_err(),
            "θ {v}"
        );
        assert!(
            AdaptiveProjectionParams::new(b)
                .coarse_resolution(v)
                .check()
                .is_err(),
            "κ_c {v}"
        );
    }
}
