//! Exact sampling of DualQuery's query distribution `Qᵗ` (seed 003, Gaboardi et al. ICML
//! 2014, Algorithm 2; the privacy proof of Thm 4.2/4.3 is the exponential mechanism, which
//! assumes exact sampling).
//!
//! ## The distribution, in integers
//!
//! Action `j < k` is the query `q_j`, action `k + j` its negation `q̄_j`. After the records
//! `x¹ … x^{t−1}`, `Qᵗ(q) ∝ exp(η·r(D, q))` with the score
//! `r(D, q) = Σ_{i<t} (q(D) − q(xⁱ))` (module docs of [`super::dualquery`], "Update
//! direction"). With `c_j` the count of `q_j` on the `n` records and
//! `B_j = Σ_{i<t} q_j(xⁱ)` (an integer), `r(D, q_j) = S_j / n` with the integer
//! `S_j = (t − 1)·c_j − n·B_j`, and `r(D, q̄_j) = −S_j / n` (`q̄ = 1 − q`). The step
//! `η` is an `f64`, i.e. exactly a dyadic rational `η_num / η_den`. So every exponent is an
//! exact rational and the gap of action `a` to the largest score `S* = max_j |S_j|`,
//!
//! `γ_a = η·(S* − S_a)/n = η_num·(S* − S_a) / (η_den·n) ≥ 0`,
//!
//! is a ratio of two `u128` integers; `Qᵗ(a) = e^{−γ_a} / Σ_b e^{−γ_b}`. Only `c_j`, `B_j`
//! and `t` are stored: no rational per query, no floating point.
//!
//! ## The sampler: rejection from a dyadic envelope
//!
//! With `m = 2k` actions let `C = ⌈log₂ m⌉` (at least 1) and put action `a` in bucket
//! `b_a = min(⌊γ_a⌋, C)`. Envelope weight of `a`: `2^{−b_a} ≥ e^{−γ_a}`. One proposal:
//!
//! 1. a bucket `b` with probability `m_b·2^{C−b} / Σ_{b′} m_{b′}·2^{C−b′}` (`m_b` actions in
//!    bucket `b`; integer weights, one exact uniform integer), then a uniform action `a`
//!    of the bucket — so `P(propose a) ∝ 2^{−b_a}`;
//! 2. accept with probability `e^{−γ_a}·2^{b_a} = e^{−(γ_a − b_a)} · (2/e)^{b_a}`: one exact
//!    Bernoulli(exp(−(γ_a − b_a))) on the rational `γ_a − b_a ≥ 0`
//!    ([`dp_core::sample_bernoulli_exp_ratio`], Canonne–Kamath–Steinke NeurIPS 2020, Alg. 1)
//!    and `b_a` exact Bernoulli(2/e) coins ([`dp_core::sample_bernoulli_two_over_e`]).
//!
//! An accepted action has probability `∝ 2^{−b_a}·e^{−γ_a}·2^{b_a} = e^{−γ_a}`: exactly
//! `Qᵗ`. Every step is integer arithmetic on the caller's random stream.
//!
//! ## Cost
//!
//! The expected number of proposals per sample is
//! `E = Σ_a 2^{−b_a} / Σ_a e^{−γ_a}` ([`RoundSampler::expected_proposals`] gives it in `f64`
//! for diagnostics; nothing is sampled from it). Bounds (the maximum action has `γ = 0`,
//! so the denominator is at least 1):
//!
//! * `E ≤ e·(e/2)^{C−1} + m·2^{−C} ≤ e·m^{log₂(e/2)} + 1 ≈ e·m^{0.443} + 1`: an action with
//!   `⌊γ⌋ = b < C` has envelope-to-target ratio `2^{−b}e^{γ} ≤ e·(e/2)^b`, and the actions
//!   of the last bucket have envelope weight `2^{−C} ≤ 1/m` each. For `m` = 4 000, 16 906,
//!   80 000 and 4 000 000 actions the first expression is 80, 200, 369 and 1 710, whatever η
//!   and t.
//! * `E ≤ e^{η·r*}` with `r* = S*/n` the largest score: closure under negation gives
//!   `Σ_a e^{η r_a} = Σ_j 2 cosh(η r_j) ≥ m`, and `Σ_a 2^{−b_a} ≤ m`.
//!
//! Building a round's sampler is `O(m)` (one `u128` division per action), like the
//! multiplicative-weights update it replaces.

use dp_core::{sample_bernoulli_exp_ratio, sample_bernoulli_two_over_e, sample_uniform_below};
use dp_queries::ConjunctionWorkload;
use rand::{CryptoRng, Rng};
use rayon::prelude::*;

use crate::{MechanismError, Result};

/// Vectors at least this long are processed with rayon.
const PAR_MIN: usize = 1 << 15;

fn numerical(what: impl Into<String>) -> MechanismError {
    MechanismError::Numerical { what: what.into() }
}

/// `x` (finite, > 0) as an exact fraction `num / den` of `u128`s with `den` a power of two.
fn dyadic(x: f64) -> Result<(u128, u128)> {
    if !(x > 0.0 && x.is_finite()) {
        return Err(MechanismError::InvalidParameter {
            name: "eta",
            value: dp_core::Num(x).to_string(),
            reason: "must be positive and finite".into(),
        });
    }
    let bits = x.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // x = mant · 2^e exactly.
    let (mut mant, mut e) = if exp_bits == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_bits - 1075)
    };
    let tz = mant.trailing_zeros() as i32;
    mant >>= tz;
    e += tz;
    let too_big = || MechanismError::InvalidParameter {
        name: "eta",
        value: dp_core::Num(x).to_string(),
        reason: "outside the range [2^-70, 2^70] of the exact query sampler".into(),
    };
    if e >= 0 {
        // mant < 2^53, so the product stays below 2^123.
        if e > 70 {
            return Err(too_big());
        }
        Ok((u128::from(mant) << e, 1))
    } else if -e <= 123 {
        Ok((u128::from(mant), 1u128 << (-e)))
    } else {
        Err(too_big())
    }
}

/// DualQuery's query-player state in exact integers: the counts `c_j`, the numbers
/// `B_j = Σ_{i<t} q_j(xⁱ)` of records satisfying each query, and `t − 1` (module docs).
#[derive(Clone, Debug)]
pub struct ExactQueryWeights {
    eta_num: u128,
    /// `η_den · n`.
    den: u128,
    n: u64,
    counts: Vec<u64>,
    satisfied: Vec<u64>,
    rounds: u64,
}

impl ExactQueryWeights {
    /// The uniform distribution `Q¹` over the `2k` actions of `k = counts.len() >= 1`
    /// queries with true counts `counts[j] = n·q_j(D)` on `n >= 1` records, step `eta`
    /// (positive, finite; used as the exact dyadic rational it is).
    ///
    /// Errors: no queries, `n = 0`, a count above `n`, more than 2^31 actions, or `eta`
    /// outside `[2^-70, 2^70]` (the exact arithmetic is on `u128`).
    pub fn new(counts: Vec<u64>, n: u64, eta: f64) -> Result<Self> {
        let (eta_num, den) = Self::exact_step(counts.len(), n, eta)?;
        if let Some(c) = counts.iter().find(|&&c| c > n) {
            return Err(MechanismError::InvalidParameter {
                name: "counts",
                value: c.to_string(),
                reason: format!("a count cannot exceed n = {n}"),
            });
        }
        let k = counts.len();
        Ok(ExactQueryWeights {
            eta_num,
            den,
            n,
            counts,
            satisfied: vec![0; k],
            rounds: 0,
        })
    }

    /// The checks of [`Self::new`] that need no counts, for `queries` queries on `n`
    /// records with step `eta` (public under replace-one neighbours, so DualQuery runs them
    /// before a release is charged): at least one query and one record, at most 2^30
    /// queries, `eta` within `[2^-70, 2^70]` and `η`'s denominator times `n` within `u128`.
    pub fn check_parameters(queries: usize, n: u64, eta: f64) -> Result<()> {
        Self::exact_step(queries, n, eta).map(drop)
    }

    /// [`Self::check_parameters`], returning `η`'s numerator and `η_den · n`.
    fn exact_step(queries: usize, n: u64, eta: f64) -> Result<(u128, u128)> {
        if queries == 0 || n == 0 {
            return Err(MechanismError::InvalidParameter {
                name: "counts/n",
                value: format!("{queries}/{n}"),
                reason: "need at least one query and one record".into(),
            });
        }
        if queries > 1 << 30 {
            return Err(MechanismError::InvalidParameter {
                name: "queries",
                value: queries.to_string(),
                reason: "the exact query sampler supports at most 2^30 queries".into(),
            });
        }
        let (eta_num, eta_den) = dyadic(eta)?;
        let den = eta_den.checked_mul(u128::from(n)).ok_or_else(|| {
            numerical(format!(
                "η = {eta} on n = {n}: η's denominator times n overflows u128"
            ))
        })?;
        Ok((eta_num, den))
    }

    /// Number of actions `2k`.
    pub fn len(&self) -> usize {
        2 * self.counts.len()
    }

    /// Always `false` (at least one query).
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Records observed so far (`t − 1` in round `t`).
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// The integer score `n·r(D, a) = S_a` of action `a` (module docs); `None` out of range.
    pub fn score(&self, a: usize) -> Option<i128> {
        let k = self.counts.len();
        let j = if a < k { a } else { a.checked_sub(k)? };
        let c = i128::from(*self.counts.get(j)?);
        let s = i128::from(self.rounds) * c - i128::from(self.n) * i128::from(self.satisfied[j]);
        Some(if a < k { s } else { -s })
    }

    /// **Audit hook** (issue #23 §2): the normalised scores `r(D, a) = S_a / n` of every
    /// action `a` (module docs), whose sensitivity is `(t − 1)/n`
    /// ([`crate::sensitivity::dualquery_score_sensitivity`]). `Qᵗ(a) ∝ exp(η·r(D, a))`
    /// exactly, which is what the exact audit's
    /// [`crate::StepPrimitive::ExponentialWeights`] evaluates ([`RoundSampler::probabilities`]
    /// gives the same law from the sampler's own integer gaps).
    pub fn normalised_scores(&self) -> Vec<f64> {
        (0..self.len())
            .map(|a| self.score(a).unwrap_or(0) as f64 / self.n as f64)
            .collect()
    }

    /// The query player's update after the data player's record `x^t`: `B_j += q_j(x^t)`
    /// (the gain `q(D) − q(x^t)` of seed 003 Alg. 2 with the sign of the module docs of
    /// [`super::dualquery`], kept as integers). Errors if the workload has a different
    /// number of queries.
    pub fn observe(&mut self, workload: &ConjunctionWorkload, record: &[u32]) -> Result<()> {
        if workload.len() != self.counts.len() {
            return Err(numerical(format!(
                "update with a workload of {} queries for {} queries",
                workload.len(),
                self.counts.len()
            )));
        }
        if self.rounds >= u64::from(u32::MAX) {
            return Err(numerical(
                "the exact query sampler supports at most 2^32 rounds",
            ));
        }
        let bump = |(j, b): (usize, &mut u64)| *b += u64::from(workload.evaluate(j, record));
        if self.satisfied.len() >= PAR_MIN {
            self.satisfied.par_iter_mut().enumerate().for_each(bump);
        } else {
            self.satisfied.iter_mut().enumerate().for_each(bump);
        }
        self.rounds += 1;
        Ok(())
    }

    /// The exact sampler of the current distribution (`O(m)`; module docs).
    pub fn sampler(&self) -> Result<RoundSampler<'_>> {
        let k = self.counts.len();
        let m = 2 * k;
        let scores: Vec<i128> = (0..k).map(|j| self.score(j).unwrap_or(0)).collect();
        let s_star = scores.iter().map(|s| s.abs()).max().unwrap_or(0);
        // Largest numerator: η_num · 2·max|S|; max|S| ≤ (t−1)·n.
        let span = u128::try_from(2 * s_star).unwrap_or(u128::MAX);
        if self.eta_num.checked_mul(span).is_none() {
            return Err(numerical(format!(
                "exact query sampler: η·(score range) overflows u128 after {} rounds on n = {}",
                self.rounds, self.n
            )));
        }
        let cap = (usize::BITS - (m - 1).leading_zeros()).max(1);
        let bucket_of = |a: usize| -> u8 {
            let s = if a < k { scores[a] } else { -scores[a - k] };
            // s_star ≥ |s|, so the difference is in [0, 2·s_star].
            let d = (s_star - s) as u128;
            let whole = self.eta_num * d / self.den;
            whole.min(u128::from(cap)) as u8
        };
        let buckets: Vec<u8> = if m >= PAR_MIN {
            (0..m).into_par_iter().map(bucket_of).collect()
        } else {
            (0..m).map(bucket_of).collect()
        };
        let nb = cap as usize + 1;
        let mut sizes = vec![0usize; nb];
        for &b in &buckets {
            sizes[b as usize] += 1;
        }
        let mut starts = vec![0usize; nb + 1];
        for b in 0..nb {
            starts[b + 1] = starts[b] + sizes[b];
        }
        let mut fill = starts.clone();
        let mut members = vec![0u32; m];
        for (a, &b) in buckets.iter().enumerate() {
            members[fill[b as usize]] = a as u32;
            fill[b as usize] += 1;
        }
        // Cumulative envelope weights m_b·2^{C−b}; m ≤ 2^31 and 2^C < 2m keep them < 2^63.
        let mut cum = Vec::with_capacity(nb);
        let mut total: u64 = 0;
        for (b, &size) in sizes.iter().enumerate() {
            let w = (size as u64)
                .checked_shl(cap - b as u32)
                .ok_or_else(|| numerical("exact query sampler: envelope weight overflow"))?;
            total = total
                .checked_add(w)
                .ok_or_else(|| numerical("exact query sampler: envelope weight overflow"))?;
            cum.push(total);
        }
        Ok(RoundSampler {
            w: self,
            scores,
            s_star,
            cap,
            starts,
            members,
            cum,
            total,
        })
    }
}

/// One round's exact sampler of `Qᵗ` (built by [`ExactQueryWeights::sampler`]).
#[derive(Clone, Debug)]
pub struct RoundSampler<'a> {
    w: &'a ExactQueryWeights,
    scores: Vec<i128>,
    s_star: i128,
    cap: u32,
    starts: Vec<usize>,
    members: Vec<u32>,
    cum: Vec<u64>,
    total: u64,
}

impl RoundSampler<'_> {
    /// The exact gap `γ_a = num/den` of action `a` to the largest exponent (module docs).
    pub fn gap(&self, a: usize) -> (u128, u128) {
        let k = self.scores.len();
        let s = if a < k {
            self.scores[a]
        } else {
            -self.scores[a - k]
        };
        let d = (self.s_star - s) as u128;
        (self.w.eta_num * d, self.w.den)
    }

    /// **Audit hook** (issue #23 §2): the exact law `Qᵗ(a) = e^{−γ_a} / Σ_b e^{−γ_b}` of
    /// [`Self::sample`], from the sampler's own integer gaps, evaluated in `f64` (for the
    /// exact audit and its tests; never used to sample).
    pub fn probabilities(&self) -> Vec<f64> {
        let w: Vec<f64> = (0..self.members.len())
            .map(|a| {
                let (num, den) = self.gap(a);
                (-(num as f64 / den as f64)).exp()
            })
            .collect();
        let z: f64 = w.iter().sum();
        w.iter().map(|x| x / z).collect()
    }

    /// The envelope's cap `C = ⌈log₂ m⌉` (module docs).
    pub fn cap(&self) -> u32 {
        self.cap
    }

    /// The expected number of proposals per sample, `Σ 2^{−b_a} / Σ e^{−γ_a}`, in `f64`
    /// (a diagnostic for cost reports; never used to sample).
    pub fn expected_proposals(&self) -> f64 {
        let m = self.members.len();
        let (mut env, mut target) = (0.0f64, 0.0f64);
        for b in 0..self.cum.len() {
            env += (self.starts[b + 1] - self.starts[b]) as f64 * 0.5f64.powi(b as i32);
        }
        for a in 0..m {
            let (num, den) = self.gap(a);
            target += (-(num as f64 / den as f64)).exp();
        }
        env / target
    }

    /// One exact draw from `Qᵗ` and the number of proposals it took (module docs).
    pub fn sample<R: Rng + CryptoRng + ?Sized>(&self, rng: &mut R) -> Result<(usize, u64)> {
        let mut proposals = 0u64;
        loop {
            proposals += 1;
            let u = sample_uniform_below(rng, self.total)?;
            let b = self.cum.partition_point(|&c| c <= u);
            let (lo, hi) = (self.starts[b], self.starts[b + 1]);
            let i = sample_uniform_below(rng, (hi - lo) as u64)? as usize;
            let a = self.members[lo + i] as usize;
            let (num, den) = self.gap(a);
            // b ≤ ⌊γ_a⌋, so γ_a − b = (num − b·den)/den ≥ 0.
            let rest = num - u128::from(b as u32) * den;
            if !sample_bernoulli_exp_ratio(rng, rest, den)? {
                continue;
            }
            if (0..b).all(|_| sample_bernoulli_two_over_e(rng)) {
                return Ok((a, proposals));
            }
        }
    }
}

/// A **data-independent** upper bound on the expected number of proposals per query sample
/// in any round of a DualQuery run with `actions = 2k` actions, step `eta` and `rounds`
/// rounds: the smaller of the two bounds of the module docs ("Cost"),
///
/// * `e·(e/2)^{C−1} + m·2^{−C}` with `C = max(1, ⌈log₂ m⌉)` (whatever the scores), and
/// * `e^{η·(T−1)}`: the largest score of round `t` is at most `t − 1 ≤ T − 1` (each of the
///   `t − 1` payoffs `q(D) − q(xⁱ)` lies in `[−1, 1]`).
///
/// It depends only on public parameters, so a release may state it. The *measured* number
/// of proposals depends on the data through the envelope buckets and must never be
/// published (issue #23: it leaked ε ≥ 2.45 against a claimed 0.075).
pub fn expected_proposals_bound(actions: usize, eta: f64, rounds: usize) -> f64 {
    let m = actions.max(1) as f64;
    let cap = (usize::BITS - (actions.max(2) - 1).leading_zeros()).max(1) as i32;
    let envelope =
        std::f64::consts::E * (std::f64::consts::E / 2.0).powi(cap - 1) + m * 0.5f64.powi(cap);
    let by_score = (eta * rounds.saturating_sub(1) as f64).exp();
    envelope.min(by_score).max(1.0)
}

#[cfg(test)]
mod bound_tests {
    use super::*;
    use rand::SeedableRng;

    /// The bound holds against the exact expectation of every round of runs whose scores
    /// are pushed to the extremes (all records satisfy nothing, or everything), and matches
    /// the closed forms of the module docs.
    #[test]
    fn expected_proposals_never_exceed_the_public_bound() {
        // C = ⌈log₂ m⌉: m = 4 000 → C = 12: e·(e/2)^11 + 4000/4096
        let b = expected_proposals_bound(4000, 1e6, 100);
        let closed = std::f64::consts::E * (std::f64::consts::E / 2.0).powi(11) + 4000.0 / 4096.0;
        assert!((b - closed).abs() < 1e-9 * closed, "{b} vs {closed}");
        // the score bound wins for a small η·(T − 1)
        assert!((expected_proposals_bound(4000, 0.01, 11) - 0.1f64.exp()).abs() < 1e-12);
        // a power of two: m = 4 → C = 2
        let four = std::f64::consts::E * std::f64::consts::E / 2.0 + 1.0;
        assert!((expected_proposals_bound(4, 1e3, 50) - four).abs() < 1e-12);

        let domain = dp_queries::Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        let marginals = dp_queries::MarginalWorkload::all_kway(&domain, 2).unwrap();
        let workload = ConjunctionWorkload::from_marginals(&marginals).unwrap();
        let k = workload.len();
        let n = 50u64;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        for (eta, counts) in [
            (0.9, vec![0u64; k]),
            (0.9, vec![n; k]),
            (3.0, (0..k as u64).map(|j| (j * 7) % (n + 1)).collect()),
        ] {
            let rounds = 12;
            let mut w = ExactQueryWeights::new(counts, n, eta).unwrap();
            for t in 0..rounds {
                let s = w.sampler().unwrap();
                let exact = s.expected_proposals();
                let bound = expected_proposals_bound(2 * k, eta, rounds);
                assert!(
                    exact <= bound * (1.0 + 1e-12),
                    "round {t}: {exact} > {bound}"
                );
                drop(s);
                // a record that satisfies a random half of the literals: scores move apart
                let rec: Vec<u32> = (0..2).map(|a| rng.next_u32() % [2u32, 3][a]).collect();
                w.observe(&workload, &rec).unwrap();
            }
        }
    }
}
