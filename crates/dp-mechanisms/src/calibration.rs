//! Noise calibration: the one place where a sensitivity and a privacy parameter become a
//! noise scale. Every mechanism of this crate calls these two functions, so a calibration
//! bug is a bug in one place (sensitivities themselves come from [`crate::sensitivity`]).
//!
//! Both results are rounded **up** after the floating-point division (`f64::next_up`), so
//! the noise is never smaller than the guarantee needs.

/// σ² of (discrete) Gaussian noise that makes a query of squared ℓ2 sensitivity
/// `l2_squared` ρ-zCDP: σ² = Δ₂²/(2ρ) (Bun–Steinke 2016 Prop. 1.6; Canonne–Kamath–Steinke
/// 2020 Thm 14 for the discrete Gaussian), rounded up.
pub fn gaussian_sigma2(l2_squared: f64, rho: f64) -> f64 {
    (l2_squared / (2.0 * rho)).next_up()
}

/// Scale t of (discrete) Laplace noise that makes a query of ℓ1 sensitivity `l1` pure
/// ε-DP: t = Δ₁/ε (Dwork–Roth Thm 3.6), rounded up.
pub fn laplace_scale(l1: f64, epsilon: f64) -> f64 {
    (l1 / epsilon).next_up()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_values_and_safe_rounding() {
        // 2m/(2ρ) with m = 10, ρ = 0.5: exactly 20 in real arithmetic, one ulp above here
        assert_eq!(gaussian_sigma2(20.0, 0.5), 20.0f64.next_up());
        assert!(gaussian_sigma2(1.0, 3.0) >= 1.0 / 6.0);
        assert_eq!(laplace_scale(20.0, 1.0), 20.0f64.next_up());
        assert!(laplace_scale(1.0, 3.0) > 1.0 / 3.0);
    }
}
