//! Composition theorems: basic (sequential) and advanced (Dwork–Rothblum–Vadhan).

use crate::error::{CoreError, Result, check_delta, check_nonneg};
use crate::loss::PrivacyLoss;
use crate::rounding::{
    add_up, bisect_bits, exp_m1_up, ln_down, mul_up, next_down, next_up, sqrt_up,
};

/// Basic composition of a sequence of guarantees, left to right with
/// [`PrivacyLoss::compose`] (rounded up). The empty sequence costs `Pure { epsilon: 0 }`.
pub fn compose_all(losses: &[PrivacyLoss]) -> Result<PrivacyLoss> {
    let mut total = PrivacyLoss::Pure { epsilon: 0.0 };
    for loss in losses {
        total = total.compose(loss)?;
    }
    Ok(total)
}

/// Basic composition of `k` copies of `loss` ([`PrivacyLoss::compose`], rounded up), by
/// doubling: `O(log k)` compositions and no list of the copies, so a huge public count
/// (draws per round, rounds) costs neither memory nor time. Each partial sum is rounded up,
/// so the result is at least the exact `k`-fold sum. `k = 0` costs `Pure { epsilon: 0 }`,
/// as [`compose_all`] of an empty list. Errors: an invalid `loss`, or those of
/// [`PrivacyLoss::compose`] (a total δ ≥ 1, an overflowing total).
pub fn compose_copies(loss: &PrivacyLoss, k: u64) -> Result<PrivacyLoss> {
    let mut total = PrivacyLoss::Pure { epsilon: 0.0 };
    let mut power = loss.validate()?;
    let mut k = k;
    while k > 0 {
        if k & 1 == 1 {
            total = total.compose(&power)?;
        }
        k >>= 1;
        if k > 0 {
            power = power.compose(&power)?;
        }
    }
    Ok(total)
}

/// `k` as an `f64`, rounded up.
fn k_up(k: u64) -> f64 {
    let f = k as f64;
    if (f as u128) < k as u128 {
        next_up(f)
    } else {
        f
    }
}

/// Advanced composition (Dwork, Rothblum, Vadhan, FOCS 2010; seed 003 Lemma 2.4): the
/// adaptive `k`-fold composition of (ε₀, δ₀)-DP mechanisms is (ε, δ)-DP with
///
/// ```text
/// ε = √(2k ln(1/δ′))·ε₀ + k·ε₀·(e^{ε₀} − 1),   δ = k·δ₀ + δ′,
/// ```
///
/// for any δ′ ∈ (0, 1); ε and δ are rounded up. Seed 003 states it for δ₀ = 0.
///
/// Seed 001 (Theorem 4's proof) writes the same bound for a `2k`-fold composition,
/// `ε′ = √(4k ln(1/δ′))·ε₀ + 2k·ε₀(e^{ε₀} − 1)`: that is this function called with
/// `k = 2·B(α/2)`, the number of ε₀-DP steps the Iterative Construction runs.
///
/// Errors: invalid `epsilon0` or `delta0`, `k = 0`, `delta_prime ∉ (0, 1)`, or a total
/// δ ≥ 1 ([`CoreError::Vacuous`]).
pub fn advanced_composition(
    epsilon0: f64,
    delta0: f64,
    k: u64,
    delta_prime: f64,
) -> Result<PrivacyLoss> {
    let epsilon0 = check_nonneg("epsilon0", epsilon0)?;
    let delta0 = check_delta("delta0", delta0)?;
    let delta_prime = check_delta("delta_prime", delta_prime)?;
    if delta_prime == 0.0 {
        return Err(CoreError::invalid(
            "delta_prime",
            delta_prime,
            "must be in (0, 1)",
        ));
    }
    if k == 0 {
        return Err(CoreError::invalid("k", k, "must be >= 1"));
    }
    let epsilon = advanced_epsilon_up(epsilon0, k, delta_prime);
    if !epsilon.is_finite() {
        return Err(CoreError::Vacuous {
            what: format!("advanced composition of {k} × ε₀ = {epsilon0} overflows"),
        });
    }
    let delta = add_up(mul_up(k_up(k), delta0), delta_prime);
    if delta >= 1.0 {
        return Err(CoreError::Vacuous {
            what: format!("advanced composition total delta = {delta} is >= 1"),
        });
    }
    PrivacyLoss::approx(epsilon, delta)
}

/// Upper bound on `√(2k ln(1/δ′))·ε₀ + k·ε₀·(e^{ε₀} − 1)` (inputs already validated).
fn advanced_epsilon_up(epsilon0: f64, k: u64, delta_prime: f64) -> f64 {
    let kf = k_up(k);
    let ln_inv = -ln_down(delta_prime); // upper bound on ln(1/δ′) > 0
    let root = sqrt_up(mul_up(2.0 * kf, ln_inv));
    add_up(
        mul_up(root, epsilon0),
        mul_up(mul_up(kf, epsilon0), exp_m1_up(epsilon0)),
    )
}

/// The largest ε₀ (rounded down) whose `k`-fold advanced composition at `delta_prime`
/// has ε ≤ `epsilon` — the per-step budget to use when `k` adaptive ε₀-DP steps must
/// fit in an (ε, δ′)-DP target (δ₀ = 0).
pub fn advanced_composition_epsilon0(epsilon: f64, k: u64, delta_prime: f64) -> Result<f64> {
    let epsilon = check_nonneg("epsilon", epsilon)?;
    let delta_prime = check_delta("delta_prime", delta_prime)?;
    if delta_prime == 0.0 {
        return Err(CoreError::invalid(
            "delta_prime",
            delta_prime,
            "must be in (0, 1)",
        ));
    }
    if k == 0 {
        return Err(CoreError::invalid("k", k, "must be >= 1"));
    }
    if epsilon == 0.0 {
        return Ok(0.0);
    }
    // ε₀ = ε is always too large (the first term alone is ≥ ε·√(2 ln(1/δ′)) and the
    // second ≥ k ε (e^ε − 1)) unless ε is tiny: bracket by doubling to be sure.
    let mut hi = epsilon;
    while advanced_epsilon_up(hi, k, delta_prime) <= epsilon {
        hi *= 2.0;
        if !hi.is_finite() {
            return Err(CoreError::numerical(
                "advanced_composition_epsilon0: no bracket",
            ));
        }
    }
    let too_big = bisect_bits(0.0, hi, |e0| {
        advanced_epsilon_up(e0, k, delta_prime) > epsilon
    });
    let e0 = next_down(too_big).max(0.0);
    if advanced_epsilon_up(e0, k, delta_prime) <= epsilon {
        Ok(e0)
    } else {
        Ok(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advanced_by_hand() -> Result<()> {
        // k = 1, δ′ = e^{-1/2}: √(2·½)·ε₀ + ε₀(e^{ε₀} − 1) with ε₀ = ln 2 → ln 2 + ln 2 = 2 ln 2.
        let l2 = std::f64::consts::LN_2;
        let r = advanced_composition(l2, 0.0, 1, (-0.5f64).exp())?;
        let PrivacyLoss::Approx { epsilon, delta } = r else {
            panic!("not approx")
        };
        assert!(
            epsilon >= 2.0 * l2 - 1e-15 && epsilon <= 2.0 * l2 + 1e-14,
            "{epsilon}"
        );
        assert!(delta >= (-0.5f64).exp());
        Ok(())
    }

    #[test]
    fn copies_compose_like_the_list_of_them() -> Result<()> {
        for loss in [
            PrivacyLoss::zcdp(0.1)?,
            PrivacyLoss::pure(0.3)?,
            PrivacyLoss::approx(0.2, 1e-7)?,
        ] {
            for k in [0u64, 1, 2, 3, 7, 64, 1000] {
                let listed = compose_all(&vec![loss; k as usize])?;
                let doubled = compose_copies(&loss, k)?;
                // the same kind, within a few roundings of the list's sum, never below the
                // exact k-fold sum
                match (listed, doubled) {
                    (PrivacyLoss::Pure { epsilon: a }, PrivacyLoss::Pure { epsilon: b })
                    | (PrivacyLoss::Zcdp { rho: a }, PrivacyLoss::Zcdp { rho: b }) => {
                        assert!((a - b).abs() <= 1e-12 * a.max(1.0), "{loss} × {k}");
                    }
                    (
                        PrivacyLoss::Approx {
                            epsilon: a,
                            delta: da,
                        },
                        PrivacyLoss::Approx {
                            epsilon: b,
                            delta: db,
                        },
                    ) => {
                        assert!((a - b).abs() <= 1e-12 * a && (da - db).abs() <= 1e-12 * da);
                    }
                    other => panic!("{loss} × {k}: {other:?}"),
                }
            }
        }
        let PrivacyLoss::Zcdp { rho } = compose_copies(&PrivacyLoss::zcdp(0.1)?, 1000)? else {
            panic!("not zCDP")
        };
        assert!(rho >= 100.0, "{rho}");
        // a count no list could hold, at once
        let PrivacyLoss::Zcdp { rho } = compose_copies(&PrivacyLoss::zcdp(1e-30)?, u64::MAX)?
        else {
            panic!("not zCDP")
        };
        assert!(rho >= 1e-30 * u64::MAX as f64, "{rho}");
        assert!(compose_copies(&PrivacyLoss::Zcdp { rho: -1.0 }, 2).is_err());
        Ok(())
    }

    #[test]
    fn inverse_is_below() -> Result<()> {
        let e0 = advanced_composition_epsilon0(1.0, 100, 1e-6)?;
        let r = advanced_composition(e0, 0.0, 100, 1e-6)?;
        assert!(r.epsilon_at(1e-6)? <= 1.0);
        let r2 = advanced_composition(e0 * (1.0 + 1e-12), 0.0, 100, 1e-6)?;
        assert!(r2.epsilon_at(1e-6)? > 1.0 - 1e-9);
        Ok(())
    }
}
