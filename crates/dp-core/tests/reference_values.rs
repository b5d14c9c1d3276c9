//! Tier (d): published reference values and values computed independently at high
//! precision.
//!
//! "True" values below were computed with Python's `decimal` module at 80 significant
//! digits (bisection for the optimal α on the derivative `(2α−1)ρ − ε + ln(1−1/α)`,
//! then the CKS expression), and rounded *down* (`_LO`) / *up* (`_HI`) to `f64`.

use dp_core::*;

/// Whether `a` and `b` are within `n` ulps.
fn within_ulps(a: f64, b: f64, n: u64) -> bool {
    a.to_bits().abs_diff(b.to_bits()) <= n
}

#[test]
fn cks_published_values() -> Result<()> {
    // OpenDP's pinned values (DESIGN.md), with the 80-digit truth.
    // δ(ρ = 0.05, ε = 0.25): pin 8.17727531036956e-2, truth 0.0817727531036955257…
    let d1 = zcdp_delta(0.05, 0.25)?;
    assert!(d1 >= 0.08177275310369551, "below the true value: {d1:e}");
    assert!(within_ulps(d1, 8.17727531036956e-2, 8), "{d1:e}");
    // δ(ρ = 0.5, ε = 0): pin 0.5588356393474351, truth 0.5588356393474346335…
    let d2 = zcdp_delta(0.5, 0.0)?;
    assert!(d2 >= 0.5588356393474346, "below the true value: {d2:e}");
    assert!(within_ulps(d2, 0.5588356393474351, 8), "{d2:e}");
    // δ(ρ = 5e-30, ε = 1e-13): pin 2.619676329730346e-234 is itself 3.0e-13 (≈1400
    // ulps) ABOVE the truth 2.61967632972955555…e-234: the exponent here is ≈ −537, so
    // an f64 evaluation of it is only good to ~537·2⁻⁵² ≈ 1.2e-13 absolute, i.e. that
    // relative error in δ. We require: never below the truth, at most 1e-12 above it,
    // and no worse than the pin.
    let truth_lo = 2.6196763297295555e-234;
    let d3 = zcdp_delta(5e-30, 1e-13)?;
    assert!(d3 >= truth_lo, "below the true value: {d3:e}");
    assert!((d3 - truth_lo) / truth_lo <= 1e-12, "{d3:e}");
    assert!(d3 <= 2.619676329730346e-234, "{d3:e}");
    Ok(())
}

#[test]
fn zcdp_epsilon_against_high_precision() -> Result<()> {
    // (ρ, δ, true ε rounded down, rounded up)
    let cases = [
        (0.5, 1e-6, 5.221534444530168, 5.221534444530169),
        (0.01, 1e-9, 0.8101744678675341, 0.8101744678675342),
        (2.0, 1e-5, 10.72482411293917, 10.724824112939173),
    ];
    for (rho, delta, lo, hi) in cases {
        let eps = zcdp_epsilon(rho, delta)?;
        assert!(eps >= lo, "ρ {rho}, δ {delta}: {eps} below the truth {lo}");
        assert!(
            eps <= hi * (1.0 + 1e-13),
            "ρ {rho}, δ {delta}: {eps} too loose"
        );
        // The tight bound is never worse than the classical ρ + 2√(ρ ln(1/δ)).
        assert!(eps <= rho + 2.0 * (rho * (1.0 / delta).ln()).sqrt());
        // And the certified δ at that ε is within the target.
        assert!(zcdp_delta(rho, eps)? <= delta);
    }
    Ok(())
}

#[test]
fn rho_for_epsilon_delta_against_high_precision() -> Result<()> {
    let cases = [
        (1.0, 1e-6, 0.024355970359538372, 0.024355970359538376),
        (0.1, 1e-9, 0.00017713844718502086, 0.0001771384471850209),
    ];
    for (eps, delta, lo, hi) in cases {
        let rho = rho_for_epsilon_delta(eps, delta)?;
        assert!(
            rho <= hi,
            "ε {eps}, δ {delta}: ρ = {rho} above the truth {hi}"
        );
        assert!(
            rho >= lo * (1.0 - 1e-12),
            "ε {eps}, δ {delta}: ρ = {rho} too loose"
        );
        assert!(zcdp_epsilon(rho, delta)? <= eps);
    }
    Ok(())
}

#[test]
fn edge_cases_never_negative_never_loop() -> Result<()> {
    // δ(ε = 0) for ρ = 0.5 is 0.5588…, so any δ above it needs ε = 0, never negative.
    assert_eq!(zcdp_epsilon(0.5, 0.9)?, 0.0);
    assert_eq!(zcdp_epsilon(0.5, 0.999_999_999)?, 0.0);
    let e = zcdp_epsilon(0.5, 0.558)?;
    assert!(e > 0.0 && e < 1e-2, "{e}");
    // δ → 0 grows ε without bound but stays finite and certified.
    let e = zcdp_epsilon(0.5, 1e-300)?;
    assert!(e.is_finite() && zcdp_delta(0.5, e)? <= 1e-300);
    // δ is capped at 1 and ε huge gives δ = 0 in f64 but still a valid upper bound.
    assert!(zcdp_delta(100.0, 0.0)? <= 1.0);
    assert!(zcdp_delta(1e-3, 1e3)? >= 0.0);
    assert_eq!(zcdp_epsilon(0.0, 0.0)?, 0.0);
    assert_eq!(rho_for_epsilon_delta(0.0, 1e-6)?, 0.0);
    assert_eq!(rho_for_epsilon_delta(1.0, 0.0)?, 0.0);
    Ok(())
}

#[test]
fn pure_to_zcdp_is_half_epsilon_squared_rounded_up() -> Result<()> {
    // Exactly representable cases.
    assert_eq!(pure_to_zcdp(1.0)?, 0.5);
    assert_eq!(pure_to_zcdp(0.5)?, 0.125);
    // 0.1: compare with the exact rational (0.1_f64)²/2.
    let r = pure_to_zcdp(0.1)?;
    let e = exact_rational(0.1)?;
    let exact = &e * &e / num_rational::BigRational::from_integer(2.into());
    assert!(exact_rational(r)? >= exact);
    assert!(r <= 0.005 * (1.0 + 4.0 * f64::EPSILON));
    assert_eq!(
        PrivacyLoss::pure(2.0)?.to_zcdp()?,
        PrivacyLoss::Zcdp { rho: 2.0 }
    );
    Ok(())
}

#[test]
fn exponential_mechanism_accounting() -> Result<()> {
    let em = ExponentialMechanism::new(0.8, 1.0, false)?;
    assert_eq!(em.privacy(), PrivacyLoss::Pure { epsilon: 0.8 });
    // ε²/8 = 0.08 (Cesar–Rogers): an upper bound within an ulp or two.
    let PrivacyLoss::Zcdp { rho } = em.zcdp_privacy() else {
        panic!("not zCDP")
    };
    assert!(
        (0.08..=0.08 * (1.0 + 4.0 * f64::EPSILON)).contains(&rho),
        "{rho}"
    );
    Ok(())
}

#[test]
fn advanced_composition_against_high_precision_and_seed_001() -> Result<()> {
    // √(2·100·ln 10⁶)·0.1 + 100·0.1·(e^{0.1} − 1) = 6.30823095051340…
    let r = advanced_composition(0.1, 0.0, 100, 1e-6)?;
    let PrivacyLoss::Approx { epsilon, delta } = r else {
        panic!("not approx")
    };
    assert!(
        (6.308230950513408..=6.308230950513409 * (1.0 + 1e-14)).contains(&epsilon),
        "{epsilon}"
    );
    assert_eq!(delta, 1e-6);
    // k δ₀ + δ′.
    let r = advanced_composition(0.1, 1e-8, 100, 1e-6)?;
    // δ = 100·1e-8 + 1e-6 = 2e-6 (rounded up).
    assert!(r.epsilon_at(2.01e-6)? == epsilon);
    assert!(r.epsilon_at(1.99e-6).is_err());
    // Seed 001, Theorem 4: with B = B(α/2) = 50 and ε₀ = ε/(4√(B ln(1/δ))), the
    // 2B-fold composition (this function with k = 2B) is (ε, δ)-DP; check for ε = 1.
    let (b, eps, d) = (50u64, 1.0f64, 1e-6f64);
    let e0 = eps / (4.0 * (b as f64 * (1.0 / d).ln()).sqrt());
    assert!(advanced_composition(e0, 0.0, 2 * b, d)?.epsilon_at(d)? <= eps);
    // The seed's 2k-fold form equals ours with k ↦ 2k.
    let seed_form =
        (4.0 * b as f64 * (1.0 / d).ln()).sqrt() * e0 + 2.0 * b as f64 * e0 * (e0.exp() - 1.0);
    let ours = advanced_composition(e0, 0.0, 2 * b, d)?.epsilon_at(d)?;
    assert!(ours >= seed_form && ours <= seed_form * (1.0 + 1e-14));
    // The inverse: the largest ε₀ for 100 steps within ε = 1.
    let e0 = advanced_composition_epsilon0(1.0, 100, 1e-6)?;
    assert!(advanced_composition(e0, 0.0, 100, 1e-6)?.epsilon_at(1e-6)? <= 1.0);
    Ok(())
}
