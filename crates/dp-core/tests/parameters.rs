//! Tier (a): every constructor rejects NaN, ±∞, negative values, zero where zero is
//! meaningless, and δ ∉ [0, 1).

use dp_core::*;

const BAD_ANY: [f64; 4] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0];

fn invalid<T>(r: Result<T>) -> bool {
    matches!(r, Err(CoreError::InvalidParameter { .. }))
}

#[test]
fn privacy_loss_constructors() {
    for x in BAD_ANY {
        assert!(invalid(PrivacyLoss::pure(x)), "pure({x})");
        assert!(invalid(PrivacyLoss::zcdp(x)), "zcdp({x})");
        assert!(invalid(PrivacyLoss::approx(x, 1e-6)), "approx({x}, 1e-6)");
        assert!(invalid(PrivacyLoss::approx(1.0, x)), "approx(1, {x})");
    }
    assert!(invalid(PrivacyLoss::approx(1.0, 1.0)));
    assert!(invalid(PrivacyLoss::approx(1.0, 1.5)));
    assert!(invalid(PrivacyLoss::approx(1.0, -1e-300)));
    assert!(PrivacyLoss::pure(0.0).is_ok());
    assert!(PrivacyLoss::zcdp(0.0).is_ok());
    assert!(PrivacyLoss::approx(0.0, 0.0).is_ok());
    assert!(PrivacyLoss::approx(1.0, 0.999_999).is_ok());
    // -0.0 is accepted and normalised to +0.0.
    assert_eq!(
        PrivacyLoss::pure(-0.0).ok().map(|p| p.to_string()),
        Some("ε = 0 (pure ε-DP)".to_string())
    );
}

#[test]
fn conversion_parameters() {
    for x in BAD_ANY {
        assert!(invalid(zcdp_delta(x, 1.0)));
        assert!(invalid(zcdp_delta(1.0, x)));
        assert!(invalid(zcdp_epsilon(x, 1e-6)));
        assert!(invalid(zcdp_epsilon(1.0, x)));
        assert!(invalid(rho_for_epsilon_delta(x, 1e-6)));
        assert!(invalid(rho_for_epsilon_delta(1.0, x)));
        assert!(invalid(pure_to_zcdp(x)));
    }
    assert!(invalid(zcdp_epsilon(1.0, 1.0)));
    assert!(invalid(rho_for_epsilon_delta(1.0, 1.0)));
    // δ = 0 with ρ > 0 has no finite ε: an error, not an endless loop.
    assert!(invalid(zcdp_epsilon(0.1, 0.0)));
    assert!(
        PrivacyLoss::zcdp(0.1)
            .and_then(|z| z.epsilon_at(0.0))
            .is_err()
    );
}

#[test]
fn composition_parameters() {
    for x in BAD_ANY {
        assert!(invalid(advanced_composition(x, 0.0, 10, 1e-6)));
        assert!(invalid(advanced_composition(0.1, x, 10, 1e-6)));
        assert!(invalid(advanced_composition(0.1, 0.0, 10, x)));
        assert!(invalid(advanced_composition_epsilon0(x, 10, 1e-6)));
        assert!(invalid(advanced_composition_epsilon0(1.0, 10, x)));
    }
    assert!(invalid(advanced_composition(0.1, 0.0, 0, 1e-6)));
    assert!(invalid(advanced_composition(0.1, 0.0, 10, 0.0)));
    assert!(invalid(advanced_composition(0.1, 0.0, 10, 1.0)));
    assert!(invalid(advanced_composition(0.1, 1.0, 10, 1e-6)));
    assert!(invalid(advanced_composition_epsilon0(1.0, 0, 1e-6)));
    assert!(invalid(advanced_composition_epsilon0(1.0, 10, 0.0)));
    // kδ₀ + δ′ ≥ 1 is vacuous.
    assert!(matches!(
        advanced_composition(0.1, 0.5, 2, 0.1),
        Err(CoreError::Vacuous { .. })
    ));
}

#[test]
fn ledger_rejects_invalid_losses() -> Result<()> {
    let mut ledger = Ledger::new(PrivacyLoss::pure(1.0)?);
    assert!(invalid(
        ledger.spend("nan", PrivacyLoss::Pure { epsilon: f64::NAN })
    ));
    assert!(invalid(
        ledger.spend("neg", PrivacyLoss::Pure { epsilon: -0.1 })
    ));
    assert!(ledger.spends().is_empty());
    // An invalid budget makes every spend fail.
    let mut broken = Ledger::new(PrivacyLoss::Approx {
        epsilon: 1.0,
        delta: 2.0,
    });
    assert!(broken.spend("x", PrivacyLoss::pure(0.0)?).is_err());
    Ok(())
}

#[test]
fn sampler_constructors() {
    for x in BAD_ANY.into_iter().chain([0.0, -0.0]) {
        assert!(invalid(DiscreteLaplace::new(x)), "DiscreteLaplace({x})");
        assert!(invalid(DiscreteGaussian::new(x)), "DiscreteGaussian({x})");
        assert!(invalid(Laplace::new(x)), "Laplace({x})");
        assert!(invalid(Gaussian::new(x)), "Gaussian({x})");
        assert!(
            invalid(ExponentialMechanism::new(x, 1.0, false)),
            "EM eps {x}"
        );
        assert!(
            invalid(ExponentialMechanism::new(1.0, x, true)),
            "EM sens {x}"
        );
        assert!(invalid(PermuteAndFlip::new(x, 1.0, false)), "PF eps {x}");
        assert!(invalid(PermuteAndFlip::new(1.0, x, true)), "PF sens {x}");
    }
    assert!(invalid(DiscreteLaplace::new(
        DiscreteLaplace::MAX_SCALE * 2.0
    )));
    assert!(invalid(DiscreteGaussian::new(
        DiscreteGaussian::MAX_SIGMA2 * 2.0
    )));
    assert!(DiscreteLaplace::new(DiscreteLaplace::MAX_SCALE).is_ok());
    assert!(DiscreteGaussian::new(DiscreteGaussian::MAX_SIGMA2).is_ok());
    assert!(DiscreteLaplace::new(f64::from_bits(1)).is_ok());
    assert!(DiscreteGaussian::new(f64::from_bits(1)).is_ok());
}

#[test]
fn sampler_functions_and_selection() -> Result<()> {
    let mut rng = seeded_rng(1);
    assert!(invalid(sample_uniform_below(&mut rng, 0)));
    let minus_half = exact_rational(-0.5)?;
    assert!(invalid(sample_bernoulli_exp(&mut rng, &minus_half)));
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(invalid(exact_rational(x)));
    }
    let em = ExponentialMechanism::new(1.0, 1.0, false)?;
    assert!(invalid(em.select(&[], &mut rng)));
    let pf = PermuteAndFlip::new(1.0, 1.0, false)?;
    assert!(invalid(pf.select(&[], &mut rng)));
    assert!(invalid(em.probabilities(&[])));
    assert!(invalid(pf.probabilities(&[])));
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(invalid(em.select(&[1.0, x, 2.0], &mut rng)));
        assert!(invalid(pf.select(&[1.0, x, 2.0], &mut rng)));
        assert!(invalid(em.probabilities(&[1.0, x])));
        assert!(invalid(pf.probabilities(&[1.0, x])));
    }
    Ok(())
}

#[test]
fn add_noise_overflow_is_an_error_and_leaves_values_unchanged() -> Result<()> {
    let mut rng = seeded_rng(3);
    let dl = DiscreteLaplace::new(1e6)?;
    let dg = DiscreteGaussian::new(1e12)?;
    // 20 copies of i64::MAX and 20 of i64::MIN: no overflow needs every noise on the
    // first half ≤ 0 and on the second ≥ 0; each has probability ≤ 1/2 + P(0)/2 < 0.51,
    // so P(no overflow) < 0.51^40 < 2e-12.
    let mut original = vec![i64::MAX; 20];
    original.extend(vec![i64::MIN; 20]);
    let mut v = original.clone();
    assert!(matches!(
        dl.add_noise(&mut v, &mut rng),
        Err(CoreError::Numerical { .. })
    ));
    assert_eq!(v, original);
    assert!(matches!(
        dg.add_noise(&mut v, &mut rng),
        Err(CoreError::Numerical { .. })
    ));
    assert_eq!(v, original);
    Ok(())
}

#[test]
fn public_types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<PrivacyLoss>();
    check::<Ledger>();
    check::<Spend>();
    check::<Neighbouring>();
    check::<DiscreteLaplace>();
    check::<DiscreteGaussian>();
    check::<Laplace>();
    check::<Gaussian>();
    check::<ExponentialMechanism>();
    check::<PermuteAndFlip>();
    check::<CoreError>();
}
