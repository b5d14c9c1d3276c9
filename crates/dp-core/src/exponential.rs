//! Private selection with exact coins: the exponential mechanism proper
//! ([`ExponentialMechanism`], sampling exactly ∝ `exp(ε·q/(2Δ))`) and permute-and-flip
//! ([`PermuteAndFlip`]). Both are pure ε-DP; they differ in their zCDP charge (issue #9):
//! ε²/8 for the exponential mechanism (bounded range), ε²/2 for permute-and-flip (what pure
//! ε-DP alone gives; permute-and-flip is **not** ε²/8-zCDP: two candidates with scores
//! `(s, s)` and `(s − 1, s + 1)` give KL = −½ ln(2e^{−ε} − e^{−2ε}) = 0.2551 > 0.125 at ε = 1).
//!
//! No floating point on either sampling path: `ε`, `Δ` and the scores are converted to
//! exact rationals ([`crate::exact_rational`]) and every coin is an exact
//! Bernoulli(exp(−γ)) (Canonne–Kamath–Steinke 2020, Algorithm 1; [`crate::sample_bernoulli_exp`]),
//! so there is no floating-point leakage (cf. Ilvento, "Implementing the Exponential
//! Mechanism with Base-2 Differential Privacy", CCS 2020). The coin code
//! (`Coefficient::accept`) is shared by both selectors.
//!
//! Each selector also gives its exact output distribution in closed form
//! (`probabilities`, evaluated in `f64`, never used for sampling) for the exact-divergence
//! step audit.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
use rand::{CryptoRng, Rng};

use crate::conversions::pure_to_zcdp;
use crate::error::{CoreError, Result, check_positive};
use crate::loss::PrivacyLoss;
use crate::samplers::{bern_exp_big, bern_exp_u128, exact_rational, uniform_u64};

/// The exact coefficient `c = ε/(2Δ)` (or `ε/Δ` when monotonic) of a selector, and the
/// exact coin Bernoulli(exp(−c·(q* − q))) both selectors use.
#[derive(Clone, Debug)]
struct Coefficient {
    epsilon: f64,
    sensitivity: f64,
    monotonic: bool,
    /// c, exactly.
    exact: BigRational,
    /// The same as `u128` numerator and denominator when they fit (fast path).
    small: Option<(u128, u128)>,
}

impl Coefficient {
    fn new(epsilon: f64, sensitivity: f64, monotonic: bool) -> Result<Self> {
        let epsilon = check_positive("epsilon", epsilon)?;
        let sensitivity = check_positive("sensitivity", sensitivity)?;
        let factor = if monotonic { 1 } else { 2 };
        let exact = exact_rational(epsilon)?
            / (exact_rational(sensitivity)? * BigRational::from_integer(BigInt::from(factor)));
        let small = exact
            .numer()
            .magnitude()
            .to_u128()
            .zip(exact.denom().magnitude().to_u128());
        Ok(Coefficient {
            epsilon,
            sensitivity,
            monotonic,
            exact,
            small,
        })
    }

    /// c as the nearest `f64` (for the closed-form distributions only).
    fn as_f64(&self) -> f64 {
        self.exact.to_f64().unwrap_or(f64::INFINITY)
    }

    /// One exact Bernoulli(exp(−c·(best − q))) draw (`best_exact` is `best` as a rational);
    /// `q == best` accepts without drawing.
    fn accept<R: Rng + CryptoRng + ?Sized>(
        &self,
        rng: &mut R,
        best: f64,
        best_exact: &BigRational,
        q: f64,
    ) -> Result<bool> {
        if q == best {
            return Ok(true);
        }
        if let Some((a, b)) = self.small.and_then(|c| gamma_u128(c, best, q)) {
            return Ok(bern_exp_u128(rng, a, b));
        }
        let gamma = &self.exact * (best_exact - exact_rational(q)?);
        let num = gamma.numer().magnitude();
        let den = gamma.denom().magnitude();
        Ok(match (num.to_u128(), den.to_u128()) {
            (Some(a), Some(b)) => bern_exp_u128(rng, a, b),
            _ => bern_exp_big(rng, num, den),
        })
    }
}

/// The best score of non-empty, finite `scores` (errors otherwise).
fn best_score(scores: &[f64]) -> Result<f64> {
    if scores.is_empty() {
        return Err(CoreError::invalid("scores", "[]", "must not be empty"));
    }
    if let Some((i, s)) = scores.iter().enumerate().find(|(_, s)| !s.is_finite()) {
        return Err(CoreError::invalid(
            "scores",
            format!("scores[{i}] = {s}"),
            "every score must be finite",
        ));
    }
    Ok(scores.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}

/// `p_r = exp(−c·(q* − q_r)) ∈ (0, 1]` for every candidate (f64; closed forms only).
fn acceptance(c: f64, scores: &[f64]) -> Result<Vec<f64>> {
    let best = best_score(scores)?;
    Ok(scores.iter().map(|q| (-c * (best - q)).exp()).collect())
}

/// The exponential mechanism of McSherry and Talwar ("Mechanism Design via Differential
/// Privacy", FOCS 2007): output candidate `r` with probability exactly
/// `exp(c·q_r) / Σ_s exp(c·q_s)`, `c = ε/(2Δ)` (`c = ε/Δ` when the score is *monotonic*:
/// between any two neighbours all scores move in the same direction).
///
/// **Sampling** (exact): propose `r` uniformly *with replacement* and accept with an exact
/// Bernoulli(exp(−c·(q* − q_r))), `q*` the best score; repeat until acceptance. One
/// proposal outputs `r` with probability `exp(c(q_r − q*))/n`, proportional to the target,
/// so the accepted candidate has exactly the target law. Each proposal accepts with
/// probability at least `1/n` (the best candidate always accepts): at most `n` proposals in
/// expectation.
///
/// **Privacy.** Pure ε-DP (McSherry–Talwar Thm 6). zCDP: **ε²/8** by the bounded-range
/// property. A mechanism is ε-bounded-range (ε-BR) if for all neighbours `D, D′` the
/// privacy loss `L(r) = ln(P_D(r)/P_D′(r))` satisfies `sup_r L(r) − inf_r L(r) ≤ ε`
/// (Durfee and Rogers, "Practical Differentially Private Top-k Selection with Pay-what-you-get
/// Composition", NeurIPS 2019, Def. 3.1 and Lemma 3.2: the exponential mechanism is ε-BR);
/// ε-BR implies ε²/8-zCDP (Cesar and Rogers, "Bounding, Concentrating, and Truncating:
/// Unifying Privacy Loss Composition for Data Analytics", ALT 2021, Lemma 3.2). Here
/// `L(r) = c·(q_r − q′_r) + ln(Z′/Z)`, so the range of `L` is the range of `c·(q_r − q′_r)`:
/// * general scores, `q_r − q′_r ∈ [−Δ, Δ]`, `c = ε/(2Δ)`: range ≤ `2Δ·ε/(2Δ) = ε`;
/// * monotonic scores, all `q_r − q′_r ∈ [0, Δ]` (or all in `[−Δ, 0]`), `c = ε/Δ`: range
///   ≤ `Δ·ε/Δ = ε`.
///
/// Both are ε-BR, hence ε²/8-zCDP ([`Self::zcdp_privacy`]). The bound is nearly attained:
/// two candidates, scores `(0, 0)` vs `(−Δ, Δ)`, KL = ln cosh(ε/2) = ε²/8 − O(ε⁴)
/// (checked exactly in `dp-core/tests/selection_divergence.rs`).
///
/// Use this selector under zCDP budgets; under a pure ε budget [`PermuteAndFlip`] has the
/// same guarantee and is never worse in expected score.
#[derive(Clone, Debug)]
pub struct ExponentialMechanism {
    c: Coefficient,
}

/// Private selection by **permute-and-flip** (McKenna and Sheldon, "Permute-and-Flip: A new
/// mechanism for differentially private selection", NeurIPS 2020): visit the candidates in
/// a uniformly random order and accept candidate `r` with probability
/// `exp(−c·(q* − q_r))`, `c` as for [`ExponentialMechanism`]. The best candidate always
/// accepts, so at most `n` coins are drawn. ε-DP (McKenna–Sheldon Thm 1), never worse than
/// the exponential mechanism in expected score.
///
/// **zCDP charge: ε²/2**, from pure ε-DP alone (Bun and Steinke, "Concentrated Differential
/// Privacy", TCC 2016, Prop. 1.4; [`crate::pure_to_zcdp`]). Permute-and-flip is *not*
/// ε-bounded-range and not ε²/8-zCDP: with two candidates, scores `(s, s)` on `D` and
/// `(s − 1, s + 1)` on `D′` (Δ = 1), the output laws are `(½, ½)` and
/// `(½e^{−ε}, 1 − ½e^{−ε})`, KL = −½ ln(2e^{−ε} − e^{−2ε}) = 0.2551 at ε = 1 > ε²/8 = 0.125
/// (issue #9). Use it under pure ε budgets; under zCDP budgets use
/// [`ExponentialMechanism`].
#[derive(Clone, Debug)]
pub struct PermuteAndFlip {
    c: Coefficient,
}

/// `x = m · 2^e` with `m` a signed integer, `|m| < 2⁵³` (exact decomposition of a finite `f64`).
fn decompose(x: f64) -> (i128, i32) {
    if x == 0.0 {
        return (0, 0);
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1u64 << 52) - 1)) as i128;
    let (m, e) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1i128 << 52), biased - 1075)
    };
    (if bits >> 63 == 1 { -m } else { m }, e)
}

/// `γ = c · (best − q)` as a `u128` fraction when everything fits, exactly.
fn gamma_u128(c: (u128, u128), best: f64, q: f64) -> Option<(u128, u128)> {
    let (m1, e1) = decompose(best);
    let (m2, e2) = decompose(q);
    let (m1, e1) = if m1 == 0 { (0, e2) } else { (m1, e1) };
    let (m2, e2) = if m2 == 0 { (0, e1) } else { (m2, e2) };
    let e = e1.min(e2);
    let (s1, s2) = ((e1 - e) as u32, (e2 - e) as u32);
    if s1 > 73 || s2 > 73 {
        return None;
    }
    let d = (m1 << s1) - (m2 << s2);
    let mut d = u128::try_from(d).ok()?;
    if d == 0 {
        return Some((0, 1));
    }
    let tz = d.trailing_zeros();
    d >>= tz;
    let e = e + tz as i32;
    let num = c.0.checked_mul(d)?;
    if e >= 0 {
        let e = e as u32;
        if e >= 128 || num.leading_zeros() < e {
            return None;
        }
        Some((num << e, c.1))
    } else {
        let e = (-e) as u32;
        if e >= 128 || c.1.leading_zeros() < e {
            return None;
        }
        Some((num, c.1 << e))
    }
}

impl ExponentialMechanism {
    /// A mechanism with privacy parameter `epsilon > 0` for scores of sensitivity
    /// `sensitivity > 0` (the largest change of any one score between neighbouring
    /// datasets); `monotonic` as in the type docs.
    pub fn new(epsilon: f64, sensitivity: f64, monotonic: bool) -> Result<Self> {
        Ok(ExponentialMechanism {
            c: Coefficient::new(epsilon, sensitivity, monotonic)?,
        })
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.c.epsilon
    }

    /// The score sensitivity Δ.
    pub fn sensitivity(&self) -> f64 {
        self.c.sensitivity
    }

    /// Whether the scores are declared monotonic.
    pub fn monotonic(&self) -> bool {
        self.c.monotonic
    }

    /// The pure guarantee: ε-DP (McSherry–Talwar 2007, Thm 6).
    pub fn privacy(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.c.epsilon,
        }
    }

    /// The zCDP charge: ρ = ε²/8 (rounded up), ε-bounded range ⇒ ε²/8-zCDP (Cesar–Rogers
    /// 2021, Lemma 3.2; derivation for the general and the monotonic case in the type docs).
    pub fn zcdp_privacy(&self) -> PrivacyLoss {
        let e = self.c.epsilon;
        let rho = crate::rounding::div_up(crate::rounding::mul_up(e, e), 8.0);
        PrivacyLoss::Zcdp { rho }
    }

    /// The exact output distribution on `scores`, `p_r = exp(c·q_r)/Σ exp(c·q_s)`,
    /// evaluated in `f64` (for audits; the sampler never uses it). Same errors as
    /// [`Self::select`].
    pub fn probabilities(&self, scores: &[f64]) -> Result<Vec<f64>> {
        let w = acceptance(self.c.as_f64(), scores)?;
        let z: f64 = w.iter().sum();
        Ok(w.iter().map(|x| x / z).collect())
    }

    /// Selects an index of `scores` (higher is better), exactly ∝ `exp(c·q)` (see the type
    /// docs). Empty `scores` or a non-finite score is an error.
    pub fn select<R: Rng + CryptoRng + ?Sized>(
        &self,
        scores: &[f64],
        rng: &mut R,
    ) -> Result<usize> {
        let best = best_score(scores)?;
        let best_exact = exact_rational(best)?;
        let n = scores.len() as u64;
        loop {
            let r = uniform_u64(rng, n) as usize;
            if self.c.accept(rng, best, &best_exact, scores[r])? {
                return Ok(r);
            }
        }
    }
}

impl PermuteAndFlip {
    /// A mechanism with privacy parameter `epsilon > 0` for scores of sensitivity
    /// `sensitivity > 0`; `monotonic` as for [`ExponentialMechanism`].
    pub fn new(epsilon: f64, sensitivity: f64, monotonic: bool) -> Result<Self> {
        Ok(PermuteAndFlip {
            c: Coefficient::new(epsilon, sensitivity, monotonic)?,
        })
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        self.c.epsilon
    }

    /// The score sensitivity Δ.
    pub fn sensitivity(&self) -> f64 {
        self.c.sensitivity
    }

    /// Whether the scores are declared monotonic.
    pub fn monotonic(&self) -> bool {
        self.c.monotonic
    }

    /// The guarantee: pure ε-DP (McKenna–Sheldon 2020, Thm 1).
    pub fn privacy(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.c.epsilon,
        }
    }

    /// The zCDP charge: ρ = ε²/2 (rounded up; ε-DP ⇒ ε²/2-zCDP, Bun–Steinke 2016
    /// Prop. 1.4). **Not** ε²/8: see the type docs. (ρ = ∞ if ε² overflows.)
    pub fn zcdp_privacy(&self) -> PrivacyLoss {
        PrivacyLoss::Zcdp {
            rho: pure_to_zcdp(self.c.epsilon).unwrap_or(f64::INFINITY),
        }
    }

    /// The exact output distribution on `scores`, evaluated in `f64` (for audits): with
    /// `p_r = exp(−c(q* − q_r))`, candidate `i` is output iff it is accepted and every
    /// candidate visited before it is rejected; its position is uniform and the set before
    /// it a uniform `k`-subset of the others, so
    /// `P(i) = p_i · (1/n) Σ_{k=0}^{n−1} e_k(1 − p_j : j ≠ i) / C(n−1, k)`
    /// (`e_k` the elementary symmetric polynomials), O(n²) per candidate.
    pub fn probabilities(&self, scores: &[f64]) -> Result<Vec<f64>> {
        let p = acceptance(self.c.as_f64(), scores)?;
        let n = p.len();
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            // e[k] = e_k(1 − p_j, j ≠ i), divided by C(n−1, k) as we go.
            let mut e = vec![0.0f64; n];
            e[0] = 1.0;
            let mut m = 0usize;
            for (j, &pj) in p.iter().enumerate() {
                if j == i {
                    continue;
                }
                m += 1;
                for k in (1..=m).rev() {
                    e[k] += e[k - 1] * (1.0 - pj);
                }
            }
            let mut binom = 1.0f64; // C(n−1, k)
            let mut s = 0.0f64;
            for (k, ek) in e.iter().enumerate() {
                s += ek / binom;
                binom = binom * (n - 1 - k) as f64 / (k + 1) as f64;
            }
            out.push(p[i] * s / n as f64);
        }
        Ok(out)
    }

    /// Selects an index of `scores` (higher is better). Empty `scores` or a non-finite
    /// score is an error.
    pub fn select<R: Rng + CryptoRng + ?Sized>(
        &self,
        scores: &[f64],
        rng: &mut R,
    ) -> Result<usize> {
        let best = best_score(scores)?;
        let best_exact = exact_rational(best)?; // only used off the fast path
        let n = scores.len();
        let mut order: Vec<usize> = (0..n).collect();
        for i in 0..n {
            // Lazy Fisher–Yates: position i gets a uniform choice among the unvisited.
            let j = i + uniform_u64(rng, (n - i) as u64) as usize;
            order.swap(i, j);
            let r = order[i];
            if self.c.accept(rng, best, &best_exact, scores[r])? {
                return Ok(r);
            }
        }
        Err(CoreError::numerical(
            "permute-and-flip visited every candidate without accepting (impossible)",
        ))
    }
}

/// One of the two selectors, for mechanisms that pick by budget kind: the exponential
/// mechanism under zCDP budgets (ε²/8 by bounded range), permute-and-flip under pure ε
/// budgets (same ε, better expected score).
#[derive(Clone, Debug)]
pub enum Selector {
    /// [`ExponentialMechanism`].
    Exponential(ExponentialMechanism),
    /// [`PermuteAndFlip`].
    PermuteAndFlip(PermuteAndFlip),
}

impl Selector {
    /// `"exponential mechanism"` or `"permute-and-flip"`.
    pub fn name(&self) -> &'static str {
        match self {
            Selector::Exponential(_) => "exponential mechanism",
            Selector::PermuteAndFlip(_) => "permute-and-flip",
        }
    }

    /// ε.
    pub fn epsilon(&self) -> f64 {
        match self {
            Selector::Exponential(m) => m.epsilon(),
            Selector::PermuteAndFlip(m) => m.epsilon(),
        }
    }

    /// The score sensitivity Δ.
    pub fn sensitivity(&self) -> f64 {
        match self {
            Selector::Exponential(m) => m.sensitivity(),
            Selector::PermuteAndFlip(m) => m.sensitivity(),
        }
    }

    /// Whether the scores are declared monotonic.
    pub fn monotonic(&self) -> bool {
        match self {
            Selector::Exponential(m) => m.monotonic(),
            Selector::PermuteAndFlip(m) => m.monotonic(),
        }
    }

    /// The pure guarantee (ε-DP for both).
    pub fn privacy(&self) -> PrivacyLoss {
        match self {
            Selector::Exponential(m) => m.privacy(),
            Selector::PermuteAndFlip(m) => m.privacy(),
        }
    }

    /// The zCDP charge: ε²/8 ([`ExponentialMechanism::zcdp_privacy`]) or ε²/2
    /// ([`PermuteAndFlip::zcdp_privacy`]).
    pub fn zcdp_privacy(&self) -> PrivacyLoss {
        match self {
            Selector::Exponential(m) => m.zcdp_privacy(),
            Selector::PermuteAndFlip(m) => m.zcdp_privacy(),
        }
    }

    /// The exact output distribution on `scores` (f64; for audits).
    pub fn probabilities(&self, scores: &[f64]) -> Result<Vec<f64>> {
        match self {
            Selector::Exponential(m) => m.probabilities(scores),
            Selector::PermuteAndFlip(m) => m.probabilities(scores),
        }
    }

    /// Selects an index of `scores` (higher is better).
    pub fn select<R: Rng + CryptoRng + ?Sized>(
        &self,
        scores: &[f64],
        rng: &mut R,
    ) -> Result<usize> {
        match self {
            Selector::Exponential(m) => m.select(scores, rng),
            Selector::PermuteAndFlip(m) => m.select(scores, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_gamma_matches_exact_rational() -> Result<()> {
        let c = (3u128, 8u128); // 3/8
        let cq = BigRational::new(3.into(), 8.into());
        let pairs = [
            (3.0, 1.0),
            (2.5, -0.75),
            (1.0, 0.0),
            (0.0, -1e-3),
            (1e10, 0.1),
            (1.0, 1.0 - f64::EPSILON),
            (5e-324, 0.0),
            (1e300, -1e300),
        ];
        for (best, q) in pairs {
            let exact = &cq * (exact_rational(best)? - exact_rational(q)?);
            match gamma_u128(c, best, q) {
                Some((a, b)) => {
                    let got = BigRational::new(BigInt::from(a), BigInt::from(b));
                    assert_eq!(got, exact, "{best} − {q}");
                }
                // Only allowed to give up when the exact value does not fit.
                None => assert!(
                    exact.numer().magnitude().bits() > 100
                        || exact.denom().magnitude().bits() > 100,
                    "{best} − {q}"
                ),
            }
        }
        Ok(())
    }
}
