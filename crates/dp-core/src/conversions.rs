//! Conversions between privacy notions, rounded in the safe direction.
//!
//! The ρ-zCDP → (ε, δ)-DP conversion is the tight one of Canonne, Kamath and Steinke,
//! "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020), Proposition 12 /
//! Corollary 13: a ρ-zCDP mechanism is (ε, δ)-DP for
//!
//! ```text
//! δ(ε) = min_{α>1} exp((α−1)(αρ−ε)) / (α−1) · (1 − 1/α)^α
//!      = min_{α>1} exp((α−1)(αρ−ε) + α·ln(1−1/α) − ln(α−1)).
//! ```
//!
//! Every α > 1 gives a valid upper bound on δ, so we (1) locate the minimising α by
//! bisection on the sign of the derivative `(2α−1)ρ − ε + ln(1−1/α)` (the exponent is
//! convex in α), then (2) evaluate the expression at that α in outward-rounded interval
//! arithmetic and take the upper end. The result is therefore never below the true
//! δ(ε), and exceeds it only by the evaluation error (a few ulps times the size of
//! the exponent). The inverses are computed by bisection over `f64` bit patterns with
//! the certified forward map, so they too err only on the safe side.
//!
//! Pure ε-DP implies ε²/2-zCDP (Bun and Steinke, "Concentrated Differential Privacy:
//! Simplifications, Extensions, and Lower Bounds", TCC 2016, Proposition 1.4).

use crate::error::{CoreError, Result, check_delta, check_nonneg};
use crate::loss::PrivacyLoss;
use crate::neighbouring::Neighbouring;
use crate::rounding::{
    add_down, add_up, bisect_bits, div_down, div_up, exp_up, ln_1p_down, ln_1p_up, ln_down, ln_up,
    mul_down, mul_up, next_down, sqrt_up, sub_down, sub_up,
};

/// A closed interval `[lo, hi]` of reals with outward-rounded `f64` ends.
#[derive(Clone, Copy, Debug)]
struct Interval {
    lo: f64,
    hi: f64,
}

impl Interval {
    fn point(x: f64) -> Self {
        Interval { lo: x, hi: x }
    }
    fn add(self, o: Interval) -> Interval {
        Interval {
            lo: add_down(self.lo, o.lo),
            hi: add_up(self.hi, o.hi),
        }
    }
    fn sub(self, o: Interval) -> Interval {
        Interval {
            lo: sub_down(self.lo, o.hi),
            hi: sub_up(self.hi, o.lo),
        }
    }
    fn mul(self, o: Interval) -> Interval {
        let lows = [
            mul_down(self.lo, o.lo),
            mul_down(self.lo, o.hi),
            mul_down(self.hi, o.lo),
            mul_down(self.hi, o.hi),
        ];
        let highs = [
            mul_up(self.lo, o.lo),
            mul_up(self.lo, o.hi),
            mul_up(self.hi, o.lo),
            mul_up(self.hi, o.hi),
        ];
        Interval {
            lo: lows.iter().copied().fold(f64::INFINITY, f64::min),
            hi: highs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// The derivative in α of the exponent of the CKS bound; increasing in α.
fn cks_derivative(alpha: f64, rho: f64, epsilon: f64) -> f64 {
    (2.0 * alpha - 1.0) * rho - epsilon + (-1.0 / alpha).ln_1p()
}

/// Upper bound on `(α−1)(αρ−ε) + α·ln(1−1/α) − ln(α−1)` for one `α > 1`.
fn cks_exponent_upper(alpha: f64, rho: f64, epsilon: f64) -> f64 {
    let a = Interval::point(alpha);
    let am1 = a.sub(Interval::point(1.0));
    let t1 = am1.mul(a.mul(Interval::point(rho)).sub(Interval::point(epsilon)));
    // −1/α, then ln(1 + (−1/α)), monotone increasing in its argument.
    let inv = Interval {
        lo: -div_up(1.0, alpha),
        hi: -div_down(1.0, alpha),
    };
    let l = Interval {
        lo: ln_1p_down(inv.lo),
        hi: ln_1p_up(inv.hi),
    };
    let t2 = a.mul(l);
    let t3 = Interval {
        lo: ln_down(am1.lo.max(f64::MIN_POSITIVE)),
        hi: ln_up(am1.hi),
    };
    t1.add(t2).sub(t3).hi
}

/// The tight ρ-zCDP → (ε, δ) conversion of Canonne–Kamath–Steinke (2020, Prop. 12):
/// `δ(ε) = min_{α>1} exp((α−1)(αρ−ε) + α·ln(1−1/α)) / (α−1)`, capped at 1 and
/// **rounded up** (never below the true value).
///
/// Errors on NaN, infinite or negative `rho` or `epsilon`. `rho = 0` gives `0`.
pub fn zcdp_delta(rho: f64, epsilon: f64) -> Result<f64> {
    let rho = check_nonneg("rho", rho)?;
    let epsilon = check_nonneg("epsilon", epsilon)?;
    if rho == 0.0 {
        return Ok(0.0);
    }
    // The derivative is −∞ at α → 1⁺ and ≥ 1 + 3ρ − ln 2 > 0 at this α_max (≥ 2).
    let a_max = ((epsilon + 1.0) / (2.0 * rho) + 2.0).min(f64::MAX);
    let alpha = bisect_bits(1.0, a_max, |a| cks_derivative(a, rho, epsilon) >= 0.0);
    let mut best = cks_exponent_upper(alpha, rho, epsilon);
    let below = next_down(alpha);
    if below > 1.0 {
        best = best.min(cks_exponent_upper(below, rho, epsilon));
    }
    if best.is_nan() {
        return Err(CoreError::numerical(format!(
            "zcdp_delta(rho = {rho}, epsilon = {epsilon}) evaluated to NaN"
        )));
    }
    Ok(exp_up(best).min(1.0))
}

/// The smallest ε (a float, **rounded up**) with `zcdp_delta(rho, ε) <= delta`: a
/// ρ-zCDP mechanism is (ε, δ)-DP for the returned ε. Never negative.
///
/// Errors on invalid `rho`, on `delta ∉ [0, 1)`, and on `delta = 0` with `rho > 0`
/// (no finite ε exists). `rho = 0` gives `0`.
pub fn zcdp_epsilon(rho: f64, delta: f64) -> Result<f64> {
    let rho = check_nonneg("rho", rho)?;
    let delta = check_delta("delta", delta)?;
    if rho == 0.0 {
        return Ok(0.0);
    }
    if delta == 0.0 {
        return Err(CoreError::invalid(
            "delta",
            delta,
            "must be > 0 to convert rho > 0 zCDP to (epsilon, delta)-DP",
        ));
    }
    if zcdp_delta(rho, 0.0)? <= delta {
        return Ok(0.0);
    }
    // A starting point near the answer: ρ + 2√(ρ ln(1/δ)) is the classical bound.
    let mut hi = add_up(rho, 2.0 * sqrt_up(mul_up(rho, -delta.ln() + 1.0)));
    let mut tries = 0;
    while zcdp_delta(rho, hi)? > delta {
        hi *= 2.0;
        tries += 1;
        if !hi.is_finite() || tries > 2100 {
            return Err(CoreError::numerical(format!(
                "zcdp_epsilon(rho = {rho}, delta = {delta}): no finite epsilon found"
            )));
        }
    }
    // zcdp_delta(rho, 0) > delta: the answer lies in (0, hi].
    let mut failed = None;
    let eps = bisect_bits(0.0, hi, |e| match zcdp_delta(rho, e) {
        Ok(d) => d <= delta,
        Err(err) => {
            failed = Some(err);
            true
        }
    });
    if let Some(err) = failed {
        return Err(err);
    }
    Ok(eps)
}

/// The largest ρ (**rounded down**) with `zcdp_epsilon(ρ, delta) <= epsilon`: the
/// zCDP budget that fits inside an (ε, δ)-DP target. `epsilon = 0` or `delta = 0`
/// gives `0`.
pub fn rho_for_epsilon_delta(epsilon: f64, delta: f64) -> Result<f64> {
    let epsilon = check_nonneg("epsilon", epsilon)?;
    let delta = check_delta("delta", delta)?;
    if epsilon == 0.0 || delta == 0.0 {
        return Ok(0.0);
    }
    // Find a ρ that is too large, then bisect for the smallest too-large ρ.
    let fits = |r: f64| -> Result<bool> { Ok(zcdp_delta(r, epsilon)? <= delta) };
    let mut hi = epsilon.max(1.0);
    let mut tries = 0;
    while fits(hi)? {
        hi *= 2.0;
        tries += 1;
        if !hi.is_finite() || tries > 2100 {
            return Err(CoreError::numerical(
                "rho_for_epsilon_delta: no upper bracket",
            ));
        }
    }
    let mut failed = None;
    let too_big = bisect_bits(0.0, hi, |r| match fits(r) {
        Ok(ok) => !ok,
        Err(err) => {
            failed = Some(err);
            true
        }
    });
    if let Some(err) = failed {
        return Err(err);
    }
    // Largest float below the smallest too-large ρ; certify through zcdp_epsilon.
    let mut rho = next_down(too_big).max(0.0);
    for _ in 0..64 {
        if rho == 0.0 || zcdp_epsilon(rho, delta)? <= epsilon {
            return Ok(rho);
        }
        rho = next_down(rho).max(0.0);
    }
    // Fall back to a safely smaller value.
    let mut rho = rho * 0.5;
    while rho > 0.0 {
        if zcdp_epsilon(rho, delta)? <= epsilon {
            return Ok(rho);
        }
        rho *= 0.5;
    }
    Ok(0.0)
}

/// ε-DP implies ρ-zCDP with `ρ = ε²/2` (Bun–Steinke 2016, Prop. 1.4), **rounded up**.
pub fn pure_to_zcdp(epsilon: f64) -> Result<f64> {
    let epsilon = check_nonneg("epsilon", epsilon)?;
    let rho = div_up(mul_up(epsilon, epsilon), 2.0);
    if !rho.is_finite() {
        return Err(CoreError::numerical(format!(
            "pure_to_zcdp({epsilon}) overflows"
        )));
    }
    Ok(rho)
}

/// The guarantee a release stated for neighbouring relation `from` gives for `to`,
/// **rounded up**; used by the [`crate::Ledger`] to account every spend in its own relation.
///
/// * Same relation: the loss itself.
/// * Add/remove → replace-one: a replace-one neighbour `D' = D − {x} + {y}` is two
///   add/remove steps away (`D → D − {x} → D'`), so group privacy of size 2 applies:
///   - ε-DP gives 2ε-DP (Dwork–Roth 2014, Thm 2.2 with k = 2);
///   - ρ-zCDP gives 4ρ-zCDP (Bun–Steinke 2016, Prop. 1.9: k²ρ for groups of size k);
///   - (ε, δ)-DP gives (2ε, (1 + e^ε)δ)-DP: for every event S,
///     `P[M(D) ∈ S] ≤ e^ε P[M(D − {x}) ∈ S] + δ ≤ e^ε (e^ε P[M(D') ∈ S] + δ) + δ
///     = e^{2ε} P[M(D') ∈ S] + (1 + e^ε)δ`, and symmetrically with D and D' swapped.
///     Refused ([`CoreError::Vacuous`]) if the converted δ reaches 1.
/// * Replace-one → add/remove: no conversion ([`CoreError::NoNeighbouringConversion`]); a
///   replace-one guarantee only compares datasets of the same size and says nothing about
///   adding or removing a record (the size itself may be revealed exactly).
pub fn convert_neighbouring(
    loss: PrivacyLoss,
    from: Neighbouring,
    to: Neighbouring,
) -> Result<PrivacyLoss> {
    let loss = loss.validate()?;
    match (from, to) {
        (a, b) if a == b => Ok(loss),
        (Neighbouring::AddRemove, Neighbouring::ReplaceOne) => {
            let converted = match loss {
                // doubling and quadrupling are exact in binary floating point
                PrivacyLoss::Pure { epsilon } => PrivacyLoss::Pure {
                    epsilon: 2.0 * epsilon,
                },
                PrivacyLoss::Zcdp { rho } => PrivacyLoss::Zcdp { rho: 4.0 * rho },
                PrivacyLoss::Approx { epsilon, delta } => {
                    let factor = add_up(1.0, exp_up(epsilon));
                    let delta2 = mul_up(factor, delta);
                    if delta2 >= 1.0 || delta2.is_nan() {
                        return Err(CoreError::Vacuous {
                            what: format!(
                                "{loss} under add/remove is (2ε, (1 + e^ε)δ) with δ ≥ 1 under \
                                 replace-one"
                            ),
                        });
                    }
                    PrivacyLoss::Approx {
                        epsilon: 2.0 * epsilon,
                        delta: delta2,
                    }
                }
            };
            match converted.validate() {
                Ok(c) => Ok(c),
                Err(_) => Err(CoreError::Vacuous {
                    what: format!("{loss} doubled under replace-one is not finite"),
                }),
            }
        }
        (from, to) => Err(CoreError::NoNeighbouringConversion {
            loss: loss.to_string(),
            from: from.to_string(),
            to: to.to_string(),
            reason: "a replace-one guarantee only compares datasets of the same size and \
                     implies nothing when a record is added or removed"
                .to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_remove_to_replace_one_is_group_privacy_of_two() -> Result<()> {
        use Neighbouring::{AddRemove, ReplaceOne};
        // expected values from the group-privacy bounds (k = 2), not from the code
        assert_eq!(
            convert_neighbouring(PrivacyLoss::pure(0.5)?, AddRemove, ReplaceOne)?,
            PrivacyLoss::Pure { epsilon: 1.0 }
        );
        assert_eq!(
            convert_neighbouring(PrivacyLoss::zcdp(0.2)?, AddRemove, ReplaceOne)?,
            PrivacyLoss::Zcdp { rho: 0.8 }
        );
        let PrivacyLoss::Approx { epsilon, delta } =
            convert_neighbouring(PrivacyLoss::approx(1.0, 1e-6)?, AddRemove, ReplaceOne)?
        else {
            panic!("not approx")
        };
        assert_eq!(epsilon, 2.0);
        let exact = (1.0 + std::f64::consts::E) * 1e-6; // (1 + e^ε)δ at ε = 1
        assert!(delta >= exact && delta <= exact * (1.0 + 1e-14), "{delta}");
        // (1 + e^ε)δ ≥ 1: vacuous, refused
        assert!(matches!(
            convert_neighbouring(PrivacyLoss::approx(3.0, 0.1)?, AddRemove, ReplaceOne),
            Err(CoreError::Vacuous { .. })
        ));
        // same relation: unchanged
        let l = PrivacyLoss::approx(1.0, 1e-6)?;
        assert_eq!(convert_neighbouring(l, ReplaceOne, ReplaceOne)?, l);
        assert_eq!(convert_neighbouring(l, AddRemove, AddRemove)?, l);
        // replace-one guarantees give none under add/remove
        for l in [
            PrivacyLoss::pure(0.1)?,
            PrivacyLoss::zcdp(0.1)?,
            PrivacyLoss::approx(0.1, 1e-9)?,
        ] {
            assert!(matches!(
                convert_neighbouring(l, ReplaceOne, AddRemove),
                Err(CoreError::NoNeighbouringConversion { .. })
            ));
        }
        Ok(())
    }

    #[test]
    fn zero_rho_is_free() {
        assert_eq!(zcdp_delta(0.0, 0.0).ok(), Some(0.0));
        assert_eq!(zcdp_epsilon(0.0, 0.0).ok(), Some(0.0));
    }

    #[test]
    fn delta_zero_is_an_error_not_a_loop() {
        assert!(zcdp_epsilon(0.5, 0.0).is_err());
    }

    #[test]
    fn exponent_bound_is_an_upper_bound() {
        let (a, r, e) = (3.7_f64, 0.05_f64, 0.25_f64);
        let plain = (a - 1.0) * (a * r - e) + a * (1.0 - 1.0 / a).ln() - (a - 1.0).ln();
        let up = cks_exponent_upper(a, r, e);
        assert!(up >= plain && up - plain < 1e-14, "{up} vs {plain}");
    }
}
