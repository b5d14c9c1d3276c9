//! Tier (e): property tests (proptest, fixed case counts) for composition, conversions
//! and the ledger.

use dp_core::*;
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    }
}

fn eps_of(l: &PrivacyLoss) -> f64 {
    match *l {
        PrivacyLoss::Pure { epsilon } | PrivacyLoss::Approx { epsilon, .. } => epsilon,
        PrivacyLoss::Zcdp { rho } => rho,
    }
}

/// A random valid loss.
fn loss() -> impl Strategy<Value = PrivacyLoss> {
    prop_oneof![
        (0.0..5.0f64).prop_map(|e| PrivacyLoss::Pure { epsilon: e }),
        (0.0..5.0f64, -12.0..-3.0f64).prop_map(|(e, d)| PrivacyLoss::Approx {
            epsilon: e,
            delta: 10f64.powf(d)
        }),
        (0.0..2.0f64).prop_map(|r| PrivacyLoss::Zcdp { rho: r }),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn composition_is_additive_and_monotone(a in 0.0..100.0f64, b in 0.0..100.0f64, bump in 0.0..10.0f64) {
        let pa = PrivacyLoss::pure(a).unwrap();
        let pb = PrivacyLoss::pure(b).unwrap();
        let s = eps_of(&pa.compose(&pb).unwrap());
        // Additive, rounded up by at most one ulp.
        prop_assert!(s >= a + b - (a + b) * f64::EPSILON && s <= (a + b) * (1.0 + 2.0 * f64::EPSILON));
        prop_assert!(s >= a && s >= b);
        let s2 = eps_of(&PrivacyLoss::pure(a + bump).unwrap().compose(&pb).unwrap());
        prop_assert!(s2 >= s);
        // zCDP: ρ adds; pure ε enters as ε²/2.
        let z = PrivacyLoss::zcdp(b).unwrap();
        let r = eps_of(&pa.compose(&z).unwrap());
        let expect = a * a / 2.0 + b;
        prop_assert!(r >= expect * (1.0 - 4.0 * f64::EPSILON) && r <= expect * (1.0 + 4.0 * f64::EPSILON));
    }

    #[test]
    fn compose_all_grows_with_every_step(losses in proptest::collection::vec(loss(), 0..8)) {
        let mut prev: Option<PrivacyLoss> = None;
        for i in 0..=losses.len() {
            match compose_all(&losses[..i]) {
                Ok(total) => {
                    if let Some(p) = prev {
                        // ε (or ρ) never decreases; a pure total switching to zCDP is ε²/2.
                        let switched = matches!((p, total), (PrivacyLoss::Pure { .. }, PrivacyLoss::Zcdp { .. }));
                        let grew = eps_of(&total) >= eps_of(&p);
                        let grew_from_pure = eps_of(&total) >= eps_of(&p).powi(2) / 2.0;
                        prop_assert!(grew || (switched && grew_from_pure));
                        if let (PrivacyLoss::Approx { delta: d1, .. }, PrivacyLoss::Approx { delta: d2, .. }) = (p, total) {
                            prop_assert!(d2 >= d1);
                        }
                    }
                    prev = Some(total);
                }
                Err(CoreError::IncompatibleComposition { .. }) => break,
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            }
        }
    }

    #[test]
    fn conversions_round_trip(eps in 0.01..20.0f64, log_delta in -15.0..-1.0f64) {
        let delta = 10f64.powf(log_delta);
        let rho = rho_for_epsilon_delta(eps, delta).unwrap();
        prop_assert!(rho >= 0.0);
        let back = zcdp_epsilon(rho, delta).unwrap();
        prop_assert!(back <= eps, "ρ {rho}: ε {back} > {eps}");
        // Nearly the largest such ρ.
        prop_assert!(zcdp_epsilon(rho * (1.0 + 1e-6), delta).unwrap() > eps);
        // ε → δ → back: the certified δ at the returned ε is within the target.
        prop_assert!(zcdp_delta(rho, back).unwrap() <= delta);
    }

    #[test]
    fn zcdp_epsilon_is_certified_and_nonnegative(log_rho in -8.0..2.0f64, log_delta in -300.0..-0.001f64) {
        let rho = 10f64.powf(log_rho);
        let delta = 10f64.powf(log_delta);
        let eps = zcdp_epsilon(rho, delta).unwrap();
        prop_assert!(eps >= 0.0 && eps.is_finite());
        prop_assert!(zcdp_delta(rho, eps).unwrap() <= delta);
        // Smallest: a slightly smaller ε fails (unless ε = 0).
        if eps > 0.0 {
            prop_assert!(zcdp_delta(rho, eps * (1.0 - 1e-9)).unwrap() > delta);
        }
    }

    #[test]
    fn zcdp_delta_is_decreasing_in_epsilon_and_increasing_in_rho(
        log_rho in -6.0..2.0f64, e1 in 0.0..50.0f64, x in 1e-6..1.0f64, y in 1e-9..1.0f64
    ) {
        let rho = 10f64.powf(log_rho);
        let e2 = e1 * (1.0 + x) + y;
        let d1 = zcdp_delta(rho, e1).unwrap();
        let d2 = zcdp_delta(rho, e2).unwrap();
        prop_assert!(d2 <= d1, "δ({e2}) = {d2} > δ({e1}) = {d1}");
        prop_assert!((0.0..=1.0).contains(&d1));
        let d3 = zcdp_delta(rho * (1.0 + x) + y, e1).unwrap();
        prop_assert!(d3 >= d1);
    }

    #[test]
    fn advanced_composition_inverse_fits(eps in 0.01..10.0f64, k in 1u64..10_000, log_dp in -12.0..-2.0f64) {
        let dp = 10f64.powf(log_dp);
        let e0 = advanced_composition_epsilon0(eps, k, dp).unwrap();
        let total = advanced_composition(e0, 0.0, k, dp).unwrap().epsilon_at(dp).unwrap();
        prop_assert!(total <= eps);
        // More steps never allow a larger per-step budget.
        let e0_more = advanced_composition_epsilon0(eps, k + 1, dp).unwrap();
        prop_assert!(e0_more <= e0);
        // Advanced composition is monotone in ε₀.
        let bigger = advanced_composition(e0 * 1.5, 0.0, k, dp).unwrap().epsilon_at(dp).unwrap();
        prop_assert!(bigger >= total);
    }

    #[test]
    fn ledger_never_overspends(
        kind in 0u8..3,
        spends in proptest::collection::vec(loss(), 1..25),
    ) {
        let budget = match kind {
            0 => PrivacyLoss::pure(3.0).unwrap(),
            1 => PrivacyLoss::zcdp(1.0).unwrap(),
            _ => PrivacyLoss::approx(4.0, 1e-5).unwrap(),
        };
        let mut ledger = Ledger::new(budget);
        let mut accepted: Vec<PrivacyLoss> = Vec::new();
        for (i, s) in spends.iter().enumerate() {
            let before = ledger.spends().len();
            match ledger.spend(&format!("step {i}"), *s) {
                Ok(()) => accepted.push(*s),
                Err(_) => prop_assert_eq!(ledger.spends().len(), before),
            }
            prop_assert_eq!(ledger.spends().len(), accepted.len());
            // Independent recomputation of the total with plain sums.
            let (mut pe, mut ae, mut ad, mut rho) = (0.0, 0.0, 0.0, 0.0);
            for l in &accepted {
                match *l {
                    PrivacyLoss::Pure { epsilon } => pe += epsilon,
                    PrivacyLoss::Approx { epsilon, delta } => { ae += epsilon; ad += delta; }
                    PrivacyLoss::Zcdp { rho: r } => rho += r,
                }
            }
            match budget {
                PrivacyLoss::Pure { epsilon } => {
                    let all_pure = accepted.iter().all(|l| matches!(l, PrivacyLoss::Pure { .. }));
                    prop_assert!(all_pure);
                    prop_assert!(pe <= epsilon);
                }
                PrivacyLoss::Zcdp { rho: b } => {
                    let no_approx = accepted.iter().all(|l| !matches!(l, PrivacyLoss::Approx { .. }));
                    prop_assert!(no_approx);
                    prop_assert!(rho + pe * pe / 2.0 <= b * (1.0 + 1e-12));
                }
                PrivacyLoss::Approx { epsilon: be, delta: bd } => {
                    prop_assert!(ad <= bd);
                    let conv = if rho > 0.0 { zcdp_epsilon(rho, bd - ad).unwrap() } else { 0.0 };
                    prop_assert!(ae + pe + conv <= be * (1.0 + 1e-12), "{ae} + {pe} + {conv} > {be}");
                }
            }
            // What the ledger reports is within the budget too.
            let spent = ledger.spent().unwrap();
            match (budget, spent) {
                (PrivacyLoss::Pure { epsilon: b }, PrivacyLoss::Pure { epsilon: t }) => prop_assert!(t <= b),
                (PrivacyLoss::Zcdp { rho: b }, PrivacyLoss::Zcdp { rho: t }) => prop_assert!(t <= b),
                (PrivacyLoss::Approx { epsilon: be, delta: bd }, PrivacyLoss::Approx { epsilon: te, delta: td }) => {
                    prop_assert!(te <= be && td <= bd)
                }
                (b, t) => return Err(TestCaseError::fail(format!("kind changed: {b} vs {t}"))),
            }
        }
    }
}
