//! Boosting for Queries (Dwork, Rothblum and Vadhan 2010, "Boosting and differential
//! privacy"; as used by seed 000 §5, Dwork, Nikolov and Talwar 2015) with the relaxed
//! projection as its base synopsis generator: worst-case (max) error for binary marginals.
//!
//! # The query set
//! Boosting runs over the `N` distinct parities `p_T(x) = ∏_{i∈T} x_i` the workload needs
//! ([`dp_queries::MarginalParityTransform`]), not over the marginal cells: a cell of table
//! `S` is `2^{−|S|} Σ_{T⊆S} β_T p_T` with `β_T = ±1` and `p_∅ = 1` exact, so its error is at
//! most `(1 − 2^{−|S|})` times the largest parity error. A worst-case bound on the parities
//! is therefore a worst-case bound on the marginals. Internally each query is the parity's
//! odd count `o_T = #{x : x_T = −1}` (sensitivity 1 under replace-one); the parity value is
//! `1 − 2 o_T / n` with the public `n`. The odd counts are all it reads of the data, and
//! they are read off the workload's exact table counts
//! ([`dp_queries::MarginalParityTransform::odd_counts_from_counts`]): it releases from
//! counts streamed or counted by an engine ([`BoostingForQueries::release_counted`]), the
//! same release, draw for draw, as from the records.
//!
//! # Algorithm (DRV 2010, Figure "Boosting for Queries"; Dwork and Roth 2014, §6.1)
//! `D₁` is uniform on the `N` queries. In round `t = 1..T`:
//!
//! 1. **Sample** `k` queries independently from `D_t` (with replacement). `D₁` is uniform
//!    (no data involved); for `t ≥ 2`, `D_t(q) ∝ exp(−α Σ_{j<t} a_{j,q})`, drawn with the
//!    exact exponential mechanism ([`dp_core::ExponentialMechanism`]). Since
//!    `a = 1 − 2g/μ` for the clamped error `g` below, `D_t(q) ∝ exp(2α·S_q/μ)` with the gap
//!    sum `S_q = Σ_{j<t} g_{j,q}`, and the mechanism is run on the scores `S_q` (counts),
//!    computed exactly in fixed point ([`crate::sensitivity::BoostingScoreGrid`]).
//! 2. **Base synopsis generator** (the choice made here: the relaxed projection of seed
//!    000 Thm 4.5 restricted to the sample, as in seed 000 §5.3): the distinct sampled
//!    parities `S_t` are measured once with discrete Gaussian noise
//!    `σ_t² = |S_t| / (2ρ_base)` (Δ₂² = |S_t|: [`crate::sensitivity::parity_odd_count_sensitivity`]),
//!    then Frank–Wolfe projects onto the Grothendieck relaxation `A·L` ([`super::ParityBody`])
//!    in the norm weighted by the sample's empirical distribution (weight `m_q/k` for a
//!    query drawn `m_q` times; unsampled parities get a negligible weight `10⁻⁶/N` towards 0,
//!    the uniform distribution's value, so the norm stays definite). The synopsis `A_t` is the
//!    projected point: it answers every parity, sampled or not.
//! 3. **Reweight** with DRV's exact update: with `e = |o_q(x) − n(1 − A_t(q))/2|` (the
//!    error in counts),
//!
//!    ```text
//!    a_{t,q} = 1                      if e ≤ λ,
//!            = −1                     if e ≥ λ + μ,
//!            = 1 − 2(e − λ)/μ         otherwise,
//!    ```
//!    and `D_{t+1}(q) ∝ exp(−α Σ_{j≤t} a_{j,q})`, `α = ½ ln((1 + 2η)/(1 − 2η))`. Equivalently
//!    `a_{t,q} = 1 − 2g_{t,q}/μ` with `g = min(max(e − λ, 0), μ)`; the release keeps the
//!    `g`s, exact integers on a grid of `2⁻ᶠ` counts, `F ≤ 20` (`F = 20` unless
//!    `(T − 1)·μ > 2³³` counts), with the synopsis' counts, `λ` and `μ` floored to it (public
//!    values; a change of less than `2⁻ᶠ` counts).
//!
//! The output is the **median** over the `T` synopses of each parity, read back as marginals.
//!
//! # Privacy (derived from DRV 2010, Theorem 6.1 of Dwork and Roth 2014)
//! DRV's theorem: for queries of sensitivity `ρ_q`, if the base generator is
//! `(ε_base, δ_base)`-DP, Boosting for Queries is `(ε_sample + T ε_base, δ_sample + T δ_base)`-DP,
//! where `ε_sample` bounds the `kT` draws of the queries. Its proof bounds one draw: `a_{j,q}`
//! moves by at most `2ρ_q/μ` between neighbours (the synopsis `A_j` is fixed by then), so the
//! score `Σ_{j<t} a_{j,q}` of a draw in round `t` has sensitivity `Δ_t = 2(t − 1)ρ_q/μ`
//! ([`crate::sensitivity::boosting_score_sensitivity`]), and a draw ∝ `exp(−α·score)` is the
//! exponential mechanism with `ε_t = 2αΔ_t`. The selector is that mechanism on the gap sums
//! `S_q`, whose sensitivity is `t − 1` counts
//! ([`crate::sensitivity::boosting_selector_sensitivity`]): `exp(ε_t S_q/(2(t − 1))) =
//! exp(2α S_q/μ)`. The `S_q` are computed without rounding, so the computed scores of
//! neighbours differ by at most that exact Δ and the selector needs no floating-point margin
//! (issue #23 §2; the derivation is on [`crate::sensitivity::BoostingScoreGrid`]). We restate
//! the accounting in zCDP:
//!
//! * each draw is `ε_t`-bounded-range, hence `ε_t²/8`-zCDP (Cesar and Rogers 2021,
//!   Lemma 3.2), so round `t`'s sample costs `k ε_t²/8 = 2kα²(t − 1)²/μ²` (ρ_q = 1 in counts);
//! * the base generator is `ρ_base`-zCDP in each round (Canonne, Kamath and Steinke 2020,
//!   Theorem 14), given the sample (adaptive composition treats `S_t` as released);
//! * zCDP composes additively (Bun and Steinke 2016, Lemma 2.3):
//!   `ρ = Σ_t k ε_t²/8 + T ρ_base`.
//!
//! The user's ρ is split: `ρ_sample = s·ρ` ([`BoostingSettings::sampling_share`]) and
//! `ρ_base = (1 − s)ρ/T`; the gap `μ` is the smallest that keeps the draws within
//! `ρ_sample`: `μ = α √(2k Σ_{t=1}^{T−1} t² / ρ_sample)` ([`BoostingAccounting`]). The
//! accuracy threshold `λ` is [`BoostingSettings::lambda_sigmas`] standard deviations of a
//! sampled count's noise, a public quantity. DRV's theorem asks for `T ≈ log N / η²` rounds
//! for its accuracy statement; the privacy statement holds for any `T`, which is a setting
//! here (its default is far smaller; the release notes state both).
//!
//! # Scope
//! As [`super::RelaxedProjection`]: binary attributes, replace-one neighbours (public `n`),
//! ρ-zCDP (or (ε, δ) converted to ρ).

use dp_core::{
    DiscreteGaussian, ExponentialMechanism, Neighbouring, Num, PrivacyLoss, compose_copies,
};
use dp_geometry::{FrankWolfeSettings, frank_wolfe_project};
use dp_queries::{Dataset, MarginalParityTransform, MarginalWorkload, SignRecords};
use rand::{CryptoRng, RngExt};

use super::RelaxedSettings;
use super::jl::VectorParityBody;
use crate::sensitivity::{
    BoostingScoreGrid, boosting_score_sensitivity, boosting_selector_sensitivity,
    parity_odd_count_sensitivity,
};
use crate::{
    Diagnostics, Mechanism, MechanismError, NoiseDescription, NoiseDistribution,
    PrivacyCertificate, Release, Result,
};

/// Settings of [`BoostingForQueries`]. `rounds`, `samples`, `eta` and `sampling_share`
/// enter the privacy accounting (module docs); the others are solver settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BoostingSettings {
    /// The number of rounds `T`, in `1..=`[`Self::MAX_ROUNDS`]. Default 9 (odd: the median
    /// is one synopsis).
    pub rounds: usize,
    /// Queries sampled per round `k` (≥ 1). Default 64. Any number: the accounting composes
    /// a round's `k` draws by doubling, and a round keeps at most `N` distinct ones.
    pub samples: usize,
    /// DRV's advantage `η ∈ (0, ½)`: the base generator is assumed λ-accurate on a
    /// `½ + η` fraction of `D_t`; it sets `α = ½ ln((1+2η)/(1−2η))`. Default 0.1.
    pub eta: f64,
    /// Share `s ∈ (0, 1)` of ρ spent on sampling the queries. Default 0.3.
    pub sampling_share: f64,
    /// `λ` in standard deviations of a sampled count's noise (finite, ≥ 0). Default 2.
    pub lambda_sigmas: f64,
    /// The base generator's Frank–Wolfe settings (its `max_iterations` default here: 60).
    pub projection: RelaxedSettings,
    /// Dimension `D` of the JL-compressed synopsis (seed 000 §5.2, [`super::jl`]); 0 keeps
    /// each round's synopsis uncompressed. Default 0: measured on nltcs and acs, `D = 64`
    /// adds a distortion of about `1/√D` to every parity (docs/benchmarks.md).
    pub jl_dimension: usize,
    /// Refuse a release whose rounds' synopses and samples, kept for the median, need more
    /// than this many MiB (`T` synopses of the `N` parities; checked from public inputs
    /// before anything is read). Default 1024.
    pub max_memory_mib: u64,
}

impl BoostingSettings {
    /// The most rounds `T` accepted: every round keeps state until the end (a draw in the
    /// accounting, its sample and its synopsis of every parity, for the median) and runs the
    /// base generator, a Frank–Wolfe projection onto the Grothendieck relaxation, so a
    /// larger `T` would exhaust memory or time rather than finish. DRV's accuracy theorem
    /// asks for `T ≈ ln N / η²`: about 1 400 rounds at the default η = 0.1 for a million
    /// parities.
    pub const MAX_ROUNDS: usize = 1 << 16;
}

/// `Ok` if `rounds` is in `1..=`[`BoostingSettings::MAX_ROUNDS`]; otherwise the refusal,
/// naming the parameter, the limit and why.
fn check_rounds(rounds: usize) -> Result<()> {
    if rounds == 0 {
        return Err(MechanismError::InvalidParameter {
            name: "rounds",
            value: "0".into(),
            reason: "boosting needs at least one round".into(),
        });
    }
    if rounds > BoostingSettings::MAX_ROUNDS {
        return Err(MechanismError::InvalidParameter {
            name: "rounds",
            value: rounds.to_string(),
            reason: format!(
                "boosting runs at most {} rounds: each round runs the base generator (a \
                 Frank–Wolfe projection) and keeps its draw, its sample and its synopsis of \
                 every parity until the median at the end, so more rounds would exhaust \
                 memory or time (DRV's accuracy theorem asks for T ≈ ln N / η², about 1 400 \
                 at η = 0.1 for a million parities); give at most {} rounds",
                BoostingSettings::MAX_ROUNDS,
                BoostingSettings::MAX_ROUNDS
            ),
        });
    }
    Ok(())
}

impl Default for BoostingSettings {
    fn default() -> Self {
        Self {
            rounds: 9,
            samples: 64,
            eta: 0.1,
            sampling_share: 0.3,
            lambda_sigmas: 2.0,
            projection: RelaxedSettings {
                max_iterations: 60,
                ..RelaxedSettings::default()
            },
            jl_dimension: 0,
            max_memory_mib: 1024,
        }
    }
}

/// Parameters of [`BoostingForQueries`] before validation.
#[derive(Clone, Debug, PartialEq)]
pub struct BoostingParams {
    /// `Zcdp { rho }`, or `Approx { epsilon, delta }` converted to the largest ρ whose (ε, δ)
    /// conversion stays within it. Pure ε is refused (Gaussian noise).
    pub budget: PrivacyLoss,
    /// Only replace-one is supported.
    pub neighbouring: Neighbouring,
    /// Rounds, samples, η, split and solver settings.
    pub settings: BoostingSettings,
}

/// The privacy accounting of [`BoostingForQueries`] (module docs), all in ρ-zCDP.
#[derive(Clone, Debug)]
pub struct BoostingAccounting {
    /// `α = ½ ln((1 + 2η)/(1 − 2η))`.
    pub alpha: f64,
    /// The gap `μ` between "accurate" and "inaccurate", in counts.
    pub mu: f64,
    /// ρ of each round's base generator.
    pub rho_base: f64,
    /// Per round `t = 1..T`: the cost of its `k` draws (round 1: zero, `D₁` is uniform).
    pub sampling: Vec<PrivacyLoss>,
    /// The exponential mechanism of one draw per round (`None` in round 1): `ε_t = 2αΔ_t`
    /// on the exact gap sums, sensitivity `t − 1` counts
    /// ([`crate::sensitivity::boosting_selector_sensitivity`]).
    pub draws: Vec<Option<ExponentialMechanism>>,
    /// The fixed-point grid the draws' scores are computed on.
    pub grid: BoostingScoreGrid,
    /// Everything composed: `Σ sampling + T ρ_base` (≤ the budget's ρ).
    pub total: PrivacyLoss,
}

impl BoostingAccounting {
    /// The accounting for `rounds` rounds of `samples` draws with advantage `eta`, total
    /// `rho` split with `sampling_share` (module docs). It holds one entry per round, so
    /// `rounds` above [`BoostingSettings::MAX_ROUNDS`] (or 0) is refused; the `samples`
    /// draws of a round are composed by doubling ([`dp_core::compose_copies`]), never
    /// listed.
    pub fn new(
        rho: f64,
        rounds: usize,
        samples: usize,
        eta: f64,
        sampling_share: f64,
    ) -> Result<Self> {
        check_rounds(rounds)?;
        let alpha = 0.5 * ((1.0 + 2.0 * eta) / (1.0 - 2.0 * eta)).ln();
        // A hair under the exact split so that the rounded-up composition stays within ρ.
        let shrink = 1.0 - 1e-9;
        let rho_sample = sampling_share * rho * shrink;
        let rho_base = (1.0 - sampling_share) * rho / rounds as f64 * shrink;
        let t = rounds as f64;
        // Σ_{t=1}^{T−1} t² = (T−1)T(2T−1)/6.
        let squares = (t - 1.0) * t * (2.0 * t - 1.0) / 6.0;
        let mu = if squares > 0.0 {
            alpha * (2.0 * samples as f64 * squares / rho_sample).sqrt()
        } else {
            // One round: no draw touches the data; any μ > 0 is free.
            1.0
        };
        let mut sampling = Vec::with_capacity(rounds);
        let mut draws = Vec::with_capacity(rounds);
        let mut losses = Vec::with_capacity(rounds + 1);
        for round in 1..=rounds {
            let delta_t = boosting_score_sensitivity(round, mu);
            if delta_t == 0.0 {
                sampling.push(PrivacyLoss::Zcdp { rho: 0.0 });
                draws.push(None);
                continue;
            }
            // ε_t from DRV's Δ_t; the selector's own scores are the exact gap sums, of
            // sensitivity t − 1 counts and no floating-point margin (sensitivity.rs)
            let em = ExponentialMechanism::new(
                2.0 * alpha * delta_t,
                boosting_selector_sensitivity(round),
                false,
            )?;
            let one = em.zcdp_privacy();
            let all = compose_copies(&one, samples as u64)?;
            losses.push(all);
            sampling.push(all);
            draws.push(Some(em));
        }
        losses.push(compose_copies(
            &PrivacyLoss::Zcdp { rho: rho_base },
            rounds as u64,
        )?);
        let total = match dp_core::compose_all(&losses)? {
            PrivacyLoss::Pure { .. } => PrivacyLoss::Zcdp { rho: 0.0 },
            z => z,
        };
        Ok(Self {
            alpha,
            mu,
            rho_base,
            sampling,
            draws,
            grid: BoostingScoreGrid::new(rounds, mu),
            total,
        })
    }

    /// The total ρ.
    pub fn rho(&self) -> f64 {
        match self.total {
            PrivacyLoss::Zcdp { rho } => rho,
            _ => f64::INFINITY,
        }
    }
}

impl BoostingParams {
    /// Replace-one neighbours and default settings.
    pub fn new(budget: PrivacyLoss) -> Self {
        Self {
            budget,
            neighbouring: Neighbouring::ReplaceOne,
            settings: BoostingSettings::default(),
        }
    }

    /// Set the settings.
    pub fn settings(mut self, settings: BoostingSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Set the neighbouring relation (add/remove is refused by [`Self::check`]).
    pub fn neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// Validate the parameters and derive the accounting.
    pub fn check(&self) -> Result<BoostingForQueries> {
        let base = super::RelaxedProjectionParams::new(self.budget)
            .neighbouring(self.neighbouring)
            .settings(self.settings.projection.clone())
            .check()
            .map_err(|e| match e {
                MechanismError::InvalidParameter {
                    name,
                    value,
                    reason,
                } => MechanismError::InvalidParameter {
                    name,
                    value,
                    reason: reason.replace("the relaxed projection", "boosting"),
                },
                other => other,
            })?;
        let rho = base.rho();
        let delta = match self.budget {
            PrivacyLoss::Approx { delta, .. } => Some(delta),
            _ => None,
        };
        let s = &self.settings;
        let invalid = |name: &'static str, value: String, reason: &str| {
            Err(MechanismError::InvalidParameter {
                name,
                value,
                reason: reason.into(),
            })
        };
        check_rounds(s.rounds)?;
        if s.samples == 0 {
            return invalid(
                "samples",
                "0".into(),
                "each round must sample at least one query",
            );
        }
        if !(s.eta > 0.0 && s.eta < 0.5) {
            return invalid("eta", Num(s.eta).to_string(), "must be between 0 and 1/2");
        }
        if !(s.sampling_share > 0.0 && s.sampling_share < 1.0) {
            return invalid(
                "sampling share",
                Num(s.sampling_share).to_string(),
                "must be strictly between 0 and 1",
            );
        }
        if !(s.lambda_sigmas >= 0.0 && s.lambda_sigmas.is_finite()) {
            return invalid(
                "lambda",
                Num(s.lambda_sigmas).to_string(),
                "must be finite and not negative",
            );
        }
        if s.max_memory_mib == 0 {
            return invalid("max_memory_mib", "0".into(), "must be positive");
        }
        let accounting =
            BoostingAccounting::new(rho, s.rounds, s.samples, s.eta, s.sampling_share)?;
        if accounting.rho().is_nan() || accounting.rho() > rho {
            return Err(MechanismError::Numerical {
                what: format!(
                    "boosting's composed cost {} exceeds the budget ρ = {}",
                    Num(accounting.rho()),
                    Num(rho)
                ),
            });
        }
        Ok(BoostingForQueries {
            rho,
            delta,
            settings: s.clone(),
            accounting,
        })
    }
}

/// Boosting for Queries over the relaxed projection (module docs): ρ-zCDP, replace-one.
/// Build it with [`BoostingParams::check`].
#[derive(Clone, Debug)]
pub struct BoostingForQueries {
    rho: f64,
    delta: Option<f64>,
    settings: BoostingSettings,
    accounting: BoostingAccounting,
}

/// One round's base measurement ([`BoostingForQueries::base_measurement`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BaseMeasurement {
    /// The distinct sampled queries, increasing, with their multiplicities.
    pub sampled: Vec<(usize, usize)>,
    /// Their noisy odd counts.
    pub noisy_odd_counts: Vec<i64>,
    /// σ² of the noise on each.
    pub sigma2: f64,
}

impl BoostingForQueries {
    /// The ρ of the guarantee.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// The settings.
    pub fn settings(&self) -> &BoostingSettings {
        &self.settings
    }

    /// The privacy accounting.
    pub fn accounting(&self) -> &BoostingAccounting {
        &self.accounting
    }

    /// The guarantee: ρ-zCDP, replace-one neighbours.
    pub fn certificate(&self) -> PrivacyCertificate {
        let loss = PrivacyLoss::Zcdp { rho: self.rho };
        PrivacyCertificate {
            mechanism: "boosting".into(),
            loss,
            model: crate::PrivacyModel::Central {
                neighbouring: Neighbouring::ReplaceOne,
            },
            approx_equivalent: self.delta.and_then(|d| loss.to_approx(d).ok()),
        }
    }

    /// σ² of the base generator's noise when `distinct` queries were sampled:
    /// `Δ₂²/(2ρ_base)`, `Δ₂² = distinct`.
    pub fn base_sigma2(&self, distinct: usize) -> f64 {
        let s = parity_odd_count_sensitivity(distinct);
        crate::calibration::gaussian_sigma2(s.l2_squared as f64, self.accounting.rho_base)
    }

    /// The base generator's noise sampler when `distinct` queries were sampled
    /// ([`Self::base_sigma2`]); refused when σ² is beyond the sampler's range (a tiny ρ).
    fn base_sampler(&self, distinct: usize) -> Result<DiscreteGaussian> {
        Ok(DiscreteGaussian::new(self.base_sigma2(distinct))?)
    }

    /// Everything a release fixes from public inputs before it reads a record (its
    /// [`Mechanism::check_inputs`]): the attributes the workload touches and the transform
    /// to their `N` parities; the base generator's noise within the sampler's range for the
    /// most distinct queries a round can sample, `min(k, N)` (σ² grows with that number, so
    /// every round's noise is then in range, whatever is drawn); and the memory of the `T`
    /// rounds' synopses and samples within [`BoostingSettings::max_memory_mib`].
    fn public_plan(
        &self,
        workload: &MarginalWorkload,
    ) -> Result<(Vec<usize>, MarginalParityTransform)> {
        let touched = workload.touched_attributes();
        let transform = MarginalParityTransform::new(&workload.on_attributes(&touched)?)?;
        let num = transform.parities().len();
        if num == 0 {
            return Ok((touched, transform));
        }
        let most = self.settings.samples.min(num);
        self.base_sampler(most)?;
        let rounds = self.settings.rounds as u128;
        let per_round = num as u128 * std::mem::size_of::<f64>() as u128
            + most as u128 * std::mem::size_of::<(usize, usize)>() as u128;
        let need = rounds.saturating_mul(per_round);
        let cap = u128::from(self.settings.max_memory_mib) << 20;
        if need > cap {
            return Err(MechanismError::InvalidParameter {
                name: "max_memory_mib",
                value: self.settings.max_memory_mib.to_string(),
                reason: format!(
                    "boosting keeps every round's synopsis of the workload's {num} parities \
                     and its sample until the median at the end: {} rounds need about {} MiB; \
                     use fewer rounds or a workload over fewer attributes, or raise the cap",
                    self.settings.rounds,
                    need.div_ceil(1 << 20)
                ),
            });
        }
        Ok((touched, transform))
    }

    /// `λ` in counts for `distinct` sampled queries.
    pub fn lambda(&self, distinct: usize) -> f64 {
        self.settings.lambda_sigmas * self.base_sigma2(distinct).sqrt()
    }

    /// Step 1 of round `round` (1-based): `k` draws from `D_t` given the running gap sums
    /// `G_q` of every query (grid units of [`BoostingAccounting::grid`], the sums of
    /// [`Self::reweighting`]), returned as distinct queries with multiplicities.
    pub fn sample_queries(
        &self,
        round: usize,
        cumulative: &[i128],
        rng: &mut dyn CryptoRng,
    ) -> Result<Vec<(usize, usize)>> {
        let n = cumulative.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut counts = vec![0usize; n];
        match self.accounting.draws.get(round.wrapping_sub(1)) {
            Some(Some(em)) => {
                let scores = self.accounting.grid.scores(cumulative);
                for _ in 0..self.settings.samples {
                    counts[em.select(&scores, rng)?] += 1;
                }
            }
            Some(None) => {
                for _ in 0..self.settings.samples {
                    counts[rng.random_range(0..n)] += 1;
                }
            }
            None => {
                return Err(MechanismError::InvalidParameter {
                    name: "round",
                    value: round.to_string(),
                    reason: format!("boosting runs rounds 1 to {}", self.settings.rounds),
                });
            }
        }
        Ok(counts
            .into_iter()
            .enumerate()
            .filter(|&(_, c)| c > 0)
            .collect())
    }

    /// Step 2's measurement: the odd counts of the sampled queries plus discrete Gaussian
    /// noise with [`Self::base_sigma2`].
    pub fn base_measurement(
        &self,
        odd_counts: &[u64],
        sampled: Vec<(usize, usize)>,
        rng: &mut dyn CryptoRng,
    ) -> Result<BaseMeasurement> {
        let sigma2 = self.base_sigma2(sampled.len());
        let mut noisy = Vec::with_capacity(sampled.len());
        for &(q, _) in &sampled {
            let c = odd_counts.get(q).ok_or_else(|| MechanismError::Numerical {
                what: format!("query {q} is out of range"),
            })?;
            noisy.push(i64::try_from(*c).map_err(|_| MechanismError::Numerical {
                what: "an odd count does not fit in i64".into(),
            })?);
        }
        if !noisy.is_empty() {
            self.base_sampler(sampled.len())?
                .add_noise(&mut noisy, rng)?;
        }
        Ok(BaseMeasurement {
            sampled,
            noisy_odd_counts: noisy,
            sigma2,
        })
    }

    /// The `T` rounds (steps 1–3 of the module docs) on the true odd counts, recording what
    /// each round produced.
    fn run_rounds(
        &self,
        body: &VectorParityBody,
        odd_counts: &[u64],
        n: usize,
        rng: &mut dyn CryptoRng,
    ) -> Result<Rounds> {
        let num = odd_counts.len();
        let mut samples = Vec::with_capacity(self.settings.rounds);
        let mut cumulative = vec![0i128; num];
        let mut synopses: Vec<Vec<f64>> = Vec::with_capacity(self.settings.rounds);
        let mut lambdas = Vec::with_capacity(self.settings.rounds);
        let mut iterations = 0usize;
        let mut calls = 0usize;
        let mut compressed_dims = 0usize;
        let mut last_sigma2 = 0.0;
        let mut last_distinct = 0;
        for round in 1..=self.settings.rounds {
            let sampled = self.sample_queries(round, &cumulative, rng)?;
            samples.push(sampled.clone());
            let m = self.base_measurement(odd_counts, sampled, rng)?;
            last_sigma2 = m.sigma2;
            last_distinct = m.sampled.len();
            let tiny = 1e-6 / num as f64;
            let mut y = vec![0.0; num + 1];
            let mut w = vec![tiny; num + 1];
            y[0] = 1.0;
            w[0] = 1.0;
            let k = self.settings.samples as f64;
            for (&(q, mult), &o) in m.sampled.iter().zip(&m.noisy_odd_counts) {
                y[q + 1] = 1.0 - 2.0 * o as f64 / n as f64;
                w[q + 1] = mult as f64 / k;
            }
            let fw = FrankWolfeSettings {
                max_iterations: self.settings.projection.max_iterations,
                relative_gap_tolerance: 1e-4,
                weights: Some(w),
                parallelism: dp_geometry::Parallelism::Rayon,
                ..FrankWolfeSettings::default()
            };
            body.clear();
            let result = frank_wolfe_project(body, &y, &fw)?;
            iterations += result.iterations;
            calls += result.oracle_calls;
            let synopsis = if self.settings.jl_dimension > 0 && !result.atoms.is_empty() {
                let c = body.compress(&result.atoms, self.settings.jl_dimension, rng)?;
                compressed_dims = compressed_dims.max(c.dim);
                body.answers(&c)
            } else {
                result.point[1..].to_vec()
            };
            let lambda = self.lambda(m.sampled.len());
            lambdas.push(lambda);
            let gaps = self.reweighting(odd_counts, &synopsis, n, lambda);
            self.accounting.grid.accumulate(&mut cumulative, &gaps);
            synopses.push(synopsis);
        }
        Ok(Rounds {
            synopses,
            lambdas,
            samples,
            iterations,
            calls,
            compressed_dims,
            last_sigma2,
            last_distinct,
        })
    }

    /// Step 3: DRV's update of every query as its exact clamped error `g_{t,q}` (grid units;
    /// `a_{t,q} = 1 − 2g_{t,q}/μ`), from the true odd counts, the synopsis' parities and
    /// `n` (errors in counts), with gap `μ` and threshold `lambda`
    /// ([`crate::sensitivity::BoostingScoreGrid::gaps`]).
    pub fn reweighting(
        &self,
        odd_counts: &[u64],
        synopsis: &[f64],
        n: usize,
        lambda: f64,
    ) -> Vec<i128> {
        self.accounting.grid.gaps(odd_counts, synopsis, n, lambda)
    }
}

/// What [`BoostingForQueries::run_rounds`] records.
struct Rounds {
    synopses: Vec<Vec<f64>>,
    lambdas: Vec<f64>,
    samples: Vec<Vec<(usize, usize)>>,
    iterations: usize,
    calls: usize,
    compressed_dims: usize,
    last_sigma2: f64,
    last_distinct: usize,
}

/// DRV's `a_{t,q}` (module docs) with gap `mu`, in plain `f64`: the rule as written, for
/// reference and tests. The release does not draw with it — its roundings let neighbours'
/// sums move by more than `Δ_t` — but with the exact gaps of
/// [`crate::sensitivity::BoostingScoreGrid`].
pub fn drv_update(
    odd_counts: &[u64],
    synopsis: &[f64],
    n: usize,
    lambda: f64,
    mu: f64,
) -> Vec<f64> {
    let n = n as f64;
    odd_counts
        .iter()
        .zip(synopsis)
        .map(|(&o, &p)| {
            let e = (o as f64 - n * (1.0 - p) / 2.0).abs();
            if e <= lambda {
                1.0
            } else if e >= lambda + mu {
                -1.0
            } else {
                1.0 - 2.0 * (e - lambda) / mu
            }
        })
        .collect()
}

/// The median of `values` (the mean of the two middle ones for an even count); NaN-free
/// input assumed (the synopses are finite).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let m = values.len();
    if m % 2 == 1 {
        values[m / 2]
    } else {
        0.5 * (values[m / 2 - 1] + values[m / 2])
    }
}

impl Mechanism<MarginalWorkload> for BoostingForQueries {
    fn name(&self) -> &'static str {
        "boosting"
    }

    fn certificate(&self) -> PrivacyCertificate {
        BoostingForQueries::certificate(self)
    }

    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }

    /// The parity transform, the base generator's noise range for the most queries a round
    /// can sample and the memory of the rounds (n is not needed).
    fn check_inputs(&self, workload: &MarginalWorkload, _public_n: Option<usize>) -> Result<()> {
        self.public_plan(workload).map(drop)
    }

    /// The workload's counts and the public n are all it reads
    /// ([`BoostingForQueries::release_counted`]).
    fn counts_suffice(&self) -> bool {
        true
    }

    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let counts = crate::counts::marginal_counts(counts, n, workload)?;
        self.release_counted(&counts, n, workload, rng)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        crate::perturbation::check_data(data, workload)?;
        let counts = workload.count_all(data)?;
        self.release_counted(&counts, data.n(), workload, rng)
    }
}

impl BoostingForQueries {
    /// The release from the exact counts of the workload's tables (workload order, as
    /// [`MarginalWorkload::count_all`] gives them) of a dataset of the public `n` records,
    /// the one path of [`Mechanism::release`] and [`Mechanism::release_counts`]: the
    /// parities' odd counts, the only data the rounds read (query draws and base
    /// measurements), are read off the tables' counts
    /// ([`MarginalParityTransform::odd_counts_from_counts`], exact), so the release from
    /// counts streamed or counted by an engine is the one from the records, draw for draw.
    ///
    /// Errors: as the release, and counts of the wrong length or whose tables do not each
    /// count `n` records.
    pub fn release_counted(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        crate::counts::check_marginal_counts(counts, n, workload)?;
        let (_, transform) = self.public_plan(workload)?;
        let num = transform.parities().len();
        let body = if num == 0 {
            None
        } else {
            Some(VectorParityBody::new(
                transform.parities(),
                self.settings.projection.oracle.clone(),
            )?)
        };
        let odd_counts = transform.odd_counts_from_counts(counts)?;
        let acc = &self.accounting;
        let mut notes = vec![format!(
            "Boosting for Queries (Dwork, Rothblum, Vadhan 2010) over the {num} parities: \
             T = {} rounds of k = {} sampled queries, η = {}, α = {}, gap μ = {} counts; \
             ρ = {} split into {} for sampling the queries and {} per round for the base \
             generator (relaxed projection on the sample); DRV's accuracy theorem asks for \
             T ≈ ln N / η² = {} rounds",
            self.settings.rounds,
            self.settings.samples,
            Num(self.settings.eta),
            short(acc.alpha),
            short(acc.mu),
            Num(self.rho),
            four(
                acc.sampling
                    .iter()
                    .map(|l| match l {
                        PrivacyLoss::Zcdp { rho } => *rho,
                        _ => 0.0,
                    })
                    .sum::<f64>()
            ),
            four(acc.rho_base),
            ((num.max(2) as f64).ln() / (self.settings.eta * self.settings.eta)).ceil()
        )];
        let mut diagnostics = Diagnostics::default();
        let parities = match &body {
            None => Vec::new(),
            Some(body) => {
                let Rounds {
                    synopses,
                    iterations,
                    calls,
                    compressed_dims,
                    last_sigma2,
                    last_distinct,
                    ..
                } = self.run_rounds(body, &odd_counts, n, rng)?;
                notes.push(format!(
                    "base generator: {iterations} Frank–Wolfe steps over the {} rounds \
                     (cap {} per round), {calls} Grothendieck solves",
                    self.settings.rounds, self.settings.projection.max_iterations
                ));
                notes.push(if self.settings.jl_dimension > 0 {
                    format!(
                        "each round's synopsis JL-compressed to {} dimensions per vector \
                         (Dwork, Nikolov, Talwar 2015, section 5.2; at most {compressed_dims} \
                         used)",
                        self.settings.jl_dimension
                    )
                } else {
                    "synopses kept uncompressed".to_string()
                });
                diagnostics.iterations = Some(iterations);
                diagnostics.oracle_calls = Some(calls);
                diagnostics.noise = Some(NoiseDescription::new(
                    NoiseDistribution::DiscreteGaussian,
                    last_sigma2,
                    parity_odd_count_sensitivity(last_distinct).l2(),
                    n,
                ));
                let mut column = vec![0.0; synopses.len()];
                (0..num)
                    .map(|q| {
                        for (c, s) in column.iter_mut().zip(&synopses) {
                            *c = s[q];
                        }
                        median(&mut column)
                    })
                    .collect()
            }
        };
        notes.push(
            "each parity is the median of the rounds' synopses; the noise description is that \
             of the last round's sampled odd counts, not of the released answers"
                .into(),
        );
        let answers = transform.marginals_from_parities(&parities)?;
        diagnostics.notes = notes;
        Ok(Release {
            answers,
            synthetic: None,
            certificate: self.certificate(),
            diagnostics,
        })
    }
}

impl crate::StepAudited for BoostingForQueries {
    /// The steps of a reference run on `reference` (seed `request.seed`): round 1's base
    /// measurement with the sample fixed to the first one-attribute parity drawn `k` times,
    /// claimed
    /// `ρ_base`-zCDP, and the last
    /// round's query draw with the earlier rounds' synopses and thresholds fixed, claimed
    /// pure `ε_T` and accounted `ε_T²/8`-zCDP. The whole run: `k` draws in each round
    /// `t ≥ 2` and `T` base measurements, zCDP composition, against the certificate.
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        _request: &crate::StepRequest,
    ) -> Result<crate::StepDecomposition> {
        use crate::{AuditedStep, StepComposition, StepDecomposition, StepLoss};
        use std::sync::Arc;
        let touched = workload.touched_attributes();
        let transform = MarginalParityTransform::new(&workload.on_attributes(&touched)?)?;
        let num = transform.parities().len();
        if num == 0 {
            return Err(MechanismError::Data {
                reason: "the workload needs no parity: nothing to audit".into(),
            });
        }
        let body = VectorParityBody::new(
            transform.parities(),
            self.settings.projection.oracle.clone(),
        )?;
        let names: Vec<String> = touched
            .iter()
            .map(|&a| reference.domain().name(a).to_string())
            .collect();
        let parities = transform.parities().clone();
        let counts_of = Arc::new(move |data: &Dataset| -> Result<Vec<u64>> {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let records = SignRecords::from_dataset(&data.select_attributes(&refs)?)?;
            Ok(parities.odd_counts(&records)?)
        });
        let n = reference.n();
        let mut rng = dp_core::seeded_rng(_request.seed);
        let reference_counts = counts_of(reference)?;
        let rounds = self.run_rounds(&body, &reference_counts, n, &mut rng)?;
        let acc = &self.accounting;
        let base = PrivacyLoss::Zcdp { rho: acc.rho_base };
        let t_last = self.settings.rounds;
        // Round 1's measurement with the history "every draw was the first one-attribute
        // parity" (the step pair's records differ in every single attribute): a
        // possible sample (any fixed sample is a valid history), one output scalar, so the
        // audit's events have power; σ² = 1/(2ρ_base) through the release's own code.
        let _reference_sample = &rounds.samples[0];
        let first_single = transform
            .parities()
            .sets()
            .iter()
            .position(|t| t.len() == 1)
            .unwrap_or(0);
        let sample = vec![(first_single, self.settings.samples)];
        let outputs: Vec<String> = sample.iter().map(|(q, _)| format!("parity {q}")).collect();
        let measure = {
            let (me, counts_of, workload) = (self.clone(), counts_of.clone(), workload.clone());
            // the exact audit's primitive and input (issue #23 §2): the sampled parities'
            // odd counts, discrete Gaussian noise of the release's σ² on each
            let primitive = crate::StepPrimitive::DiscreteGaussianTable {
                sigma2: self.base_sigma2(sample.len()),
                changed_cells: parity_odd_count_sensitivity(sample.len()).l2_squared,
            };
            let input: crate::StepInput = {
                let (counts_of, workload, sample) =
                    (counts_of.clone(), workload.clone(), sample.clone());
                Arc::new(move |data: &Dataset| {
                    crate::steps::check_step_data(data, &workload, n)?;
                    let c = counts_of(data)?;
                    Ok(sample.iter().map(|&(q, _)| c[q] as f64).collect())
                })
            };
            AuditedStep::new(
                format!(
                    "boosting round 1: discrete Gaussian measurement of {} sampled parities",
                    sample.len()
                ),
                base,
                base,
                outputs,
                Box::new(move |data: &Dataset, rng: &mut dyn CryptoRng| {
                    crate::steps::check_step_data(data, &workload, n)?;
                    let m = me.base_measurement(&counts_of(data)?, sample.clone(), rng)?;
                    Ok(m.noisy_odd_counts.iter().map(|&x| x as f64).collect())
                }),
            )
            .with_primitive(primitive)
            .with_input(input)
        };
        let mut steps = vec![measure];
        let mut audited = vec![1];
        if let Some(Some(em)) = acc.draws.get(t_last.wrapping_sub(1)) {
            let em = em.clone();
            let synopses = rounds.synopses[..t_last - 1].to_vec();
            let lambdas = rounds.lambdas[..t_last - 1].to_vec();
            let grid = acc.grid;
            let claimed = em.privacy();
            let accounted = em.zcdp_privacy();
            let workload = workload.clone();
            // the draw's scores on a dataset, the history fixed: the release's own exact
            // gap sums (`BoostingScoreGrid`), also the exact audit's input (issue #23 §2)
            let scores_of: crate::StepInput = Arc::new(move |data: &Dataset| {
                crate::steps::check_step_data(data, &workload, n)?;
                let counts = counts_of(data)?;
                let mut cumulative = vec![0i128; counts.len()];
                for (synopsis, &lambda) in synopses.iter().zip(&lambdas) {
                    grid.accumulate(&mut cumulative, &grid.gaps(&counts, synopsis, n, lambda));
                }
                Ok(grid.scores(&cumulative))
            });
            let primitive = crate::StepPrimitive::Selection {
                selector: dp_core::Selector::Exponential(em.clone()),
                candidates: num,
            };
            let runner_scores = scores_of.clone();
            steps.push(
                AuditedStep::new(
                    format!("boosting round {t_last}: exponential-mechanism draw of a query"),
                    claimed,
                    accounted,
                    (0..num).map(|q| format!("parity {q} drawn")).collect(),
                    Box::new(move |data: &Dataset, rng: &mut dyn CryptoRng| {
                        let scores = runner_scores(data)?;
                        let i = em.select(&scores, rng)?;
                        Ok(crate::steps::one_hot(i, scores.len()))
                    }),
                )
                .with_primitive(primitive)
                .with_input(scores_of),
            );
            audited.push(t_last);
        }
        let mut losses = Vec::new();
        for (t, em) in acc.draws.iter().enumerate() {
            if let Some(em) = em {
                losses.push(StepLoss {
                    what: format!("query draws, round {}", t + 1),
                    count: self.settings.samples as u64,
                    loss: em.zcdp_privacy(),
                });
            }
        }
        losses.push(StepLoss {
            what: "base measurements, every round".into(),
            count: t_last as u64,
            loss: base,
        });
        Ok(StepDecomposition {
            rounds: audited,
            steps,
            losses,
            composition: StepComposition::Basic,
            accounting: acc.total,
        })
    }
}

/// Four significant digits, for the budget split in the notes (the certificate states ρ).
fn four(x: f64) -> String {
    format!("{}", Num(format!("{x:.4e}").parse::<f64>().unwrap_or(x)))
}

/// Three significant digits, for diagnostics that are not privacy parameters.
fn short(x: f64) -> String {
    if x.is_finite() && x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, -1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [0.5]), 0.5);
    }
}
