//! The select–measure engine of the adaptive mechanisms: the privacy-critical parts of a
//! round (exponential-mechanism selection of a marginal, discrete-Gaussian measurement of
//! its counts) and the zCDP *filter* that lets the per-round budget be chosen adaptively,
//! written once and used by the release and by the step audit alike.
//!
//! ## The filter (fully adaptive composition)
//!
//! An adaptive mechanism chooses round `t`'s budget `ρ_t` from the public history (earlier
//! noisy measurements and selections) — AIM's annealing doubles the selection ε and halves
//! the measurement σ when the estimate stops improving — and stops when the total is used.
//! Such a sequence is ρ-zCDP as long as `Σ_t ρ_t ≤ ρ` holds on every run: zCDP is Rényi DP
//! of every order α with ε(α) = ρα, and the **Rényi filter** (Feldman and Zrnic, "Individual
//! Privacy Accounting via a Rényi Filter", NeurIPS 2021, Thm 3.1) certifies adaptively
//! chosen Rényi losses at one order whose sum never exceeds the cap; applied at every order
//! α with cap ρα it gives ρ-zCDP. [`ZcdpFilter`] enforces the cap before any noise of a round
//! is drawn (a refused round draws nothing), with `dp_core::Ledger`'s outward rounding.

use dp_core::{DiscreteGaussian, ExponentialMechanism, Ledger, Neighbouring, PrivacyLoss};
use rand::CryptoRng;

use crate::sensitivity::{
    marginal_fit_error_sensitivity, marginal_max_error_sensitivity,
    single_marginal_count_sensitivity,
};
use crate::{MechanismError, Result};

/// A zCDP privacy filter: adaptively chosen spends, refused once their sum would exceed ρ
/// (module docs). A thin wrapper of [`dp_core::Ledger`] with a ρ budget.
#[derive(Clone, Debug)]
pub struct ZcdpFilter {
    ledger: Ledger,
    rho: f64,
}

impl ZcdpFilter {
    /// A filter with total ρ for `neighbouring`.
    pub fn new(rho: f64, neighbouring: Neighbouring) -> Result<Self> {
        let budget = PrivacyLoss::zcdp(rho)?;
        Ok(ZcdpFilter {
            ledger: Ledger::with_neighbouring(budget, neighbouring),
            rho,
        })
    }

    /// ρ spent so far (rounded up).
    pub fn spent(&self) -> f64 {
        match self.ledger.spent() {
            Ok(PrivacyLoss::Zcdp { rho }) => rho,
            _ => self.rho,
        }
    }

    /// ρ left (rounded down; 0 when exhausted).
    pub fn remaining(&self) -> f64 {
        (self.rho - self.spent()).next_down().max(0.0)
    }

    /// Record `rho` under `label`, or refuse it ([`dp_core::CoreError::BudgetExceeded`]) and
    /// record nothing.
    pub fn spend(&mut self, label: &str, rho: f64) -> Result<()> {
        Ok(self.ledger.spend(label, PrivacyLoss::zcdp(rho)?)?)
    }

    /// Whether `rho` more would fit.
    pub fn fits(&self, rho: f64) -> bool {
        PrivacyLoss::zcdp(rho)
            .ok()
            .is_some_and(|l| self.ledger.can_spend(&l).is_ok())
    }
}

/// The quality score a selection round ranks candidate tables by (module docs of
/// [`crate::adaptive`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RoundScore {
    /// AIM's weighted ℓ1 fit error net of the expected noise ([`fit_error_score`]), with
    /// the largest candidate weight `max_weight` (the score's sensitivity is
    /// `max_weight · Δ₁`).
    FitError {
        /// `max_r w_r`.
        max_weight: f64,
    },
    /// The largest cell error net of the expected largest noise ([`max_error_score`]);
    /// unweighted, sensitivity `Δ∞ = 1`.
    MaxCellError,
}

/// One round's calibrated selection and measurement (module docs of
/// [`crate::adaptive`]): the exponential mechanism at ε with `ε²/8 ≤ ρ_select` and discrete
/// Gaussian noise with `Δ₂²/(2σ²) ≤ ρ_measure`.
#[derive(Clone, Debug)]
pub struct RoundCalibration {
    /// The zCDP share of the measurement, `ρ_measure`.
    pub measure_rho: f64,
    /// σ² of the count noise: `Δ₂²/(2ρ_measure)` rounded up ([`crate::calibration`]).
    pub sigma2: f64,
    /// The selector (ε, score sensitivity `Δ_q`), `None` in a measurement-only step.
    pub selector: Option<ExponentialMechanism>,
    /// The score the selector ranks by.
    pub score: RoundScore,
}

impl RoundCalibration {
    /// Calibrate a round with `measure_rho` for one table's counts and `select_rho` for the
    /// selection among `score`s (`select_rho = 0`: no selection). Δ's come from
    /// [`crate::sensitivity`].
    pub fn new(
        neighbouring: Neighbouring,
        measure_rho: f64,
        select_rho: f64,
        score: RoundScore,
    ) -> Result<Self> {
        if !(measure_rho.is_finite() && measure_rho > 0.0) {
            return Err(MechanismError::InvalidParameter {
                name: "rho (measurement)",
                value: measure_rho.to_string(),
                reason: "must be positive and finite".into(),
            });
        }
        let delta2 = single_marginal_count_sensitivity(neighbouring).l2_squared as f64;
        let sigma2 = crate::calibration::gaussian_sigma2(delta2, measure_rho);
        let selector = if select_rho > 0.0 {
            let ds = match score {
                RoundScore::FitError { max_weight } => {
                    max_weight * marginal_fit_error_sensitivity(neighbouring) as f64
                }
                RoundScore::MaxCellError => marginal_max_error_sensitivity(neighbouring) as f64,
            };
            // the largest ε whose charge ε²/8 (rounded up by dp-core) fits in ρ_select
            let mut eps = (8.0 * select_rho).sqrt().next_down();
            loop {
                let em = ExponentialMechanism::new(eps, ds, false)?;
                match em.zcdp_privacy() {
                    PrivacyLoss::Zcdp { rho } if rho <= select_rho => break Some(em),
                    _ => eps = eps.next_down(),
                }
            }
        } else {
            None
        };
        Ok(RoundCalibration {
            measure_rho,
            sigma2,
            selector,
            score,
        })
    }

    /// The round's score of a candidate with exact `counts`, the estimate's normalised
    /// marginal `estimate`, public total `total` and weight `weight` (ignored by
    /// [`RoundScore::MaxCellError`]). The release and the step audit both call this.
    pub fn score_of(&self, counts: &[u64], estimate: &[f64], total: f64, weight: f64) -> f64 {
        match self.score {
            RoundScore::FitError { .. } => {
                fit_error_score(counts, estimate, total, self.sigma(), weight)
            }
            RoundScore::MaxCellError => max_error_score(counts, estimate, total, self.sigma()),
        }
    }

    /// The round's charge: `ρ_measure + ε²/8` (rounded up by the ledger when spent).
    pub fn charge(&self) -> f64 {
        self.measure_rho + self.select_charge()
    }

    /// The selection's charge `ε²/8` (0 without a selection).
    pub fn select_charge(&self) -> f64 {
        match self.selector.as_ref().map(|em| em.zcdp_privacy()) {
            Some(PrivacyLoss::Zcdp { rho }) => rho,
            _ => 0.0,
        }
    }

    /// σ, the standard deviation parameter of the count noise.
    pub fn sigma(&self) -> f64 {
        self.sigma2.sqrt()
    }
}

/// The fit-error scores of AIM (McKenna et al. 2022, Alg. 2 line 8):
/// `q_r = w_r·(‖c_r − T̂·p̂_r‖₁ − √(2/π)·σ·n_r)` for candidate tables `r` with exact counts
/// `c_r`, the current estimate's normalised marginal `p̂_r`, public total `T̂`, `n_r` cells
/// and weight `w_r`. The subtracted term is the expected ℓ1 norm of the measurement noise
/// (`E|Z| ≈ σ√(2/π)`), so a table is chosen for what it would gain net of the noise it would
/// add. Sensitivity `w_r·Δ` ([`crate::sensitivity::marginal_fit_error_sensitivity`]).
pub fn fit_error_score(counts: &[u64], estimate: &[f64], total: f64, sigma: f64, w: f64) -> f64 {
    let l1: f64 = counts
        .iter()
        .zip(estimate)
        .map(|(&c, &p)| (c as f64 - total * p).abs())
        .sum();
    w * (l1 - (2.0 / std::f64::consts::PI).sqrt() * sigma * counts.len() as f64)
}

/// The max-error score of a candidate table: `max_i |c_{r,i} − T̂·p̂_{r,i}| − σ·√(2 ln(2n_r))`,
/// the table's worst cell error against the current estimate, net of (roughly) the expected
/// largest of `n_r` noise magnitudes the measurement would leave. It steers rounds towards
/// the tables whose *largest* error is worst, which AIM's ℓ1 score — dominated by the noise
/// term on tables with many cells — never picks even when one large cell is far off
/// (docs/mechanisms/adaptive.md, "max error"). Sensitivity `Δ∞ = 1` under both relations
/// ([`crate::sensitivity::marginal_max_error_sensitivity`]; `T̂·p̂_r` is public).
pub fn max_error_score(counts: &[u64], estimate: &[f64], total: f64, sigma: f64) -> f64 {
    let worst = counts
        .iter()
        .zip(estimate)
        .map(|(&c, &p)| (c as f64 - total * p).abs())
        .fold(0.0f64, f64::max);
    worst - sigma * (2.0 * (2.0 * counts.len().max(1) as f64).ln()).sqrt()
}

/// The selection step: the exponential mechanism on `scores` (exact sampling, dp-core).
/// Called by the release and the step audit.
pub fn select(em: &ExponentialMechanism, scores: &[f64], rng: &mut dyn CryptoRng) -> Result<usize> {
    Ok(em.select(scores, rng)?)
}

/// The measurement step: exact counts plus independent discrete Gaussian noise of variance
/// `sigma2` per cell. Called by the release and the step audit.
pub fn measure(counts: &[u64], sigma2: f64, rng: &mut dyn CryptoRng) -> Result<Vec<i64>> {
    let dg = DiscreteGaussian::new(sigma2)?;
    let mut v = counts
        .iter()
        .map(|&c| {
            i64::try_from(c).map_err(|_| MechanismError::Numerical {
                what: format!("count {c} does not fit in i64"),
            })
        })
        .collect::<Result<Vec<i64>>>()?;
    dg.add_noise(&mut v, rng)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_refuses_overspend_and_records_nothing() {
        let mut f = ZcdpFilter::new(1.0, Neighbouring::AddRemove).unwrap();
        f.spend("a", 0.75).unwrap();
        assert!(f.spend("b", 0.5).is_err());
        assert!((f.spent() - 0.75).abs() < 1e-12);
        assert!(f.fits(0.25) && !f.fits(0.3));
        f.spend("c", 0.25).unwrap();
        assert_eq!(f.remaining(), 0.0);
    }

    /// σ² = Δ₂²/(2ρ) with Δ₂² = 1 (add/remove) and 2 (replace-one) for one table, and the
    /// selection ε is the largest with ε²/8 ≤ ρ_select, Δ_q = w·Δ₁ (1 or 2): by hand.
    #[test]
    fn round_calibration_by_hand() {
        let r = RoundCalibration::new(
            Neighbouring::AddRemove,
            0.125,
            0.125,
            RoundScore::FitError { max_weight: 3.0 },
        )
        .unwrap();
        assert!(r.sigma2 >= 4.0 && r.sigma2 < 4.0 * (1.0 + 1e-12));
        let em = r.selector.as_ref().unwrap();
        assert!((em.epsilon() - 1.0).abs() < 1e-12 && em.epsilon() <= 1.0);
        assert_eq!(em.sensitivity(), 3.0);
        assert!(r.select_charge() <= 0.125);
        let r = RoundCalibration::new(
            Neighbouring::ReplaceOne,
            0.125,
            0.125,
            RoundScore::FitError { max_weight: 3.0 },
        )
        .unwrap();
        assert!(r.sigma2 >= 8.0 && r.sigma2 < 8.0 * (1.0 + 1e-12));
        assert_eq!(r.selector.as_ref().unwrap().sensitivity(), 6.0);
        assert!(
            RoundCalibration::new(Neighbouring::AddRemove, 0.0, 0.1, RoundScore::MaxCellError)
                .is_err()
        );
        assert!(
            RoundCalibration::new(Neighbouring::AddRemove, 0.1, 0.0, RoundScore::MaxCellError)
                .unwrap()
                .selector
                .is_none()
        );
    }

    /// The measurement's noise has the calibrated variance: 20 000 noisy copies of one count
    /// at σ² = 16; the sample variance of the discrete Gaussian (variance ≤ σ², within 1e-6
    /// of it at σ² = 16) lies within ±6 standard errors (√(2/N)·σ²·(1+κ/2), κ ≈ 0 → ±0.96);
    /// false-failure rate < 1e-8. A calibration using σ instead of σ², or Δ₂ = 2 under
    /// add/remove, would move it by ≥ 12.
    #[test]
    fn measurement_noise_has_the_calibrated_variance() {
        let r = RoundCalibration::new(
            Neighbouring::AddRemove,
            1.0 / 32.0,
            0.0,
            RoundScore::MaxCellError,
        )
        .unwrap();
        assert!((r.sigma2 - 16.0).abs() < 1e-9);
        let mut rng = dp_core::seeded_rng(7);
        let counts = vec![1000u64; 20_000];
        let y = measure(&counts, r.sigma2, &mut rng).unwrap();
        let m = y.iter().map(|&v| (v - 1000) as f64).sum::<f64>() / y.len() as f64;
        let var = y
            .iter()
            .map(|&v| ((v - 1000) as f64 - m).powi(2))
            .sum::<f64>()
            / (y.len() - 1) as f64;
        let se = (2.0 / 20_000f64).sqrt() * 16.0;
        assert!((var - 16.0).abs() < 6.0 * se, "variance {var}");
    }

    /// The max-error round's selector has Δ = 1 under both relations (not the ℓ1 score's
    /// 2 under replace-one, nor weighted), by hand.
    #[test]
    fn max_error_round_calibration_by_hand() {
        for rel in [Neighbouring::AddRemove, Neighbouring::ReplaceOne] {
            let r = RoundCalibration::new(rel, 0.125, 0.125, RoundScore::MaxCellError).unwrap();
            assert_eq!(r.selector.as_ref().unwrap().sensitivity(), 1.0);
        }
    }

    #[test]
    fn max_error_score_by_hand() {
        // counts (3, 1, 0), estimate (0.5, 0.25, 0.25) of total 4 → errors (1, 0, 1): max 1;
        // σ = 2 → 1 − 2·√(2 ln 6)
        let s = max_error_score(&[3, 1, 0], &[0.5, 0.25, 0.25], 4.0, 2.0);
        assert!((s - (1.0 - 2.0 * (2.0 * 6f64.ln()).sqrt())).abs() < 1e-12);
        assert_eq!(
            max_error_score(&[3, 1, 0], &[0.5, 0.25, 0.25], 4.0, 0.0),
            1.0
        );
    }

    #[test]
    fn fit_error_score_by_hand() {
        // counts (3, 1), estimate (0.5, 0.5) of total 4 → ℓ1 = 1 + 1 = 2; σ = 0 → 2·w
        assert_eq!(fit_error_score(&[3, 1], &[0.5, 0.5], 4.0, 0.0, 1.5), 3.0);
        let s = fit_error_score(&[3, 1], &[0.5, 0.5], 4.0, 1.0, 1.0);
        assert!((s - (2.0 - 2.0 * (2.0 / std::f64::consts::PI).sqrt())).abs() < 1e-12);
    }
}
