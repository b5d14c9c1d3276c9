//! Sensitivities of workloads under a neighbouring relation — computed here and nowhere
//! else.
//!
//! Every mechanism of this crate takes its sensitivity from this module, so a wrong
//! sensitivity is a bug in one place, pinned by the tests below against values derived by
//! hand.
//!
//! ## Marginal workloads, in **count** units
//!
//! A workload of `m` marginal tables answered as raw counts. A record contributes exactly one
//! to exactly one cell of each table.
//!
//! * **Replace-one** (public `n`; the default of seeds 003 and 004): changing one record
//!   moves one unit from a cell to another cell of each table (or leaves the table unchanged
//!   when both records agree on its attributes). Per table the change has ℓ1 norm ≤ 2 and
//!   squared ℓ2 norm ≤ 2, so over the workload Δ₁ = 2m and Δ₂² = 2m. Both are attained by a
//!   pair of records that differ in every attribute.
//! * **Add/remove**: adding or removing a record changes one cell of each table by one, so
//!   Δ₁ = m and Δ₂² = m.
//!
//! Answers normalised by `n` (fractions) have these sensitivities divided by `n`; this is
//! valid only under replace-one, where `n` is public.
//!
//! ## Any workload of linear counting queries, in count units
//!
//! A [`Workload`] states how much one record can move its count vector
//! ([`ContributionBounds`]: `‖w(x)‖₁`, `‖w(x)‖₂²` over records, `‖w(x) − w(x′)‖₁`,
//! `‖w(x) − w(x′)‖₂²` over pairs). Adding or removing a record `x` moves the counts by
//! `w(x)`; replacing `x` by `x′` moves them by `w(x) − w(x′)`. So
//! [`workload_count_sensitivity`] is (Δ₁, Δ₂²) = (l1, l2²) under add/remove and
//! (change_l1, change_l2²) under replace-one. For marginals the bounds are (m, m, 2m, 2m),
//! giving the formulas above (the test `workload_formula_agrees_with_marginal_formula`).
//! When a mechanism also measures the total count `n` (add/remove on a workload with no
//! tables to normalise by), the total is one more query with `w(x) = 1`: Δ₁ and Δ₂² grow by
//! one under add/remove ([`with_measured_total`]).
//!
//! ## Floating-point margin of selection scores (issue #23 §2)
//!
//! A selector's privacy needs the scores **as computed** to move by at most the Δ it is
//! built with. Scores are `f64`: a neighbour can move the computed max-error score by
//! `1 + 4.4·10⁻¹⁶` where the exact score moves by 1, and the error of a rounded value grows
//! with its magnitude (`u·|x|`, `u = 2⁻⁵³`), i.e. with the counts. So every score here is
//! (1) capped at [`SCORE_CAP`] `B = 2³²` counts (1-Lipschitz: the exact Δ is unchanged),
//! which bounds each rounding's error by `u·B` whatever the data, and (2) built from
//! values that are exact before a fixed, small number `r` of roundings ([`cell_errors`]
//! sums in exact fixed point, so an ℓ1 sum over N cells adds no error growing with N).
//! Two neighbours' computed scores then differ by at most `Δ + 2·r·u·B·(1 + u)`
//! ([`score_fp_slack`]), and the selectors are built with that margined sensitivity:
//! [`distinguisher_selector_sensitivity`] (`r = 1`), [`marginal_max_error_selector_sensitivity`]
//! (`r = 2`), [`marginal_fit_error_selector_sensitivity`] (`r = 3`, times the weight). With
//! `B = 2³²` the relative margin is below 3·10⁻⁶ — the selection's ε is effectively that
//! much smaller. DualQuery's scores are exact integers (no margin needed). Boosting's draw
//! scores are exact too, by construction: DRV's update is a clamped error, summed over the
//! rounds in fixed point and handed to the selector in count units, so `r = 0` and its
//! selector carries no margin ([`BoostingScoreGrid`], [`boosting_selector_sensitivity`]).

use dp_core::Neighbouring;
use dp_queries::{ContributionBounds, MarginalWorkload, Workload};
use serde::{Deserialize, Serialize};

/// The ℓ1 and ℓ2 sensitivities of an integer-valued (count) query vector.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountSensitivity {
    /// Δ₁ = max over neighbours of ‖q(D) − q(D′)‖₁, an integer.
    pub l1: u64,
    /// Δ₂² = max over neighbours of ‖q(D) − q(D′)‖₂², an integer.
    pub l2_squared: u64,
}

impl CountSensitivity {
    /// Δ₂ as a float (the square root of an integer; only used for reporting).
    pub fn l2(&self) -> f64 {
        (self.l2_squared as f64).sqrt()
    }
}

/// Sensitivity of the count vector of a marginal workload (all its tables' cells) under
/// `neighbouring`. See the module documentation for the derivation.
pub fn marginal_count_sensitivity(
    workload: &MarginalWorkload,
    neighbouring: Neighbouring,
) -> CountSensitivity {
    let m = workload.len() as u64;
    match neighbouring {
        Neighbouring::ReplaceOne => CountSensitivity {
            l1: 2 * m,
            l2_squared: 2 * m,
        },
        Neighbouring::AddRemove => CountSensitivity {
            l1: m,
            l2_squared: m,
        },
    }
}

/// Sensitivity of the count vector of any [`Workload`] under `neighbouring`, from its
/// [`ContributionBounds`] (module docs).
pub fn workload_count_sensitivity<W: Workload + ?Sized>(
    workload: &W,
    neighbouring: Neighbouring,
) -> CountSensitivity {
    contribution_sensitivity(workload.contribution_bounds(), neighbouring)
}

/// [`workload_count_sensitivity`] from the bounds themselves.
pub fn contribution_sensitivity(
    bounds: ContributionBounds,
    neighbouring: Neighbouring,
) -> CountSensitivity {
    match neighbouring {
        Neighbouring::ReplaceOne => CountSensitivity {
            l1: bounds.change_l1,
            l2_squared: bounds.change_l2_squared,
        },
        Neighbouring::AddRemove => CountSensitivity {
            l1: bounds.l1,
            l2_squared: bounds.l2_squared,
        },
    }
}

/// The sensitivity of the count vector extended by the total count `n` (one more query with
/// `w(x) = 1`): under add/remove Δ₁ and Δ₂² grow by one; under replace-one the total never
/// changes, so they do not.
pub fn with_measured_total(s: CountSensitivity, neighbouring: Neighbouring) -> CountSensitivity {
    match neighbouring {
        Neighbouring::ReplaceOne => s,
        Neighbouring::AddRemove => CountSensitivity {
            l1: s.l1.saturating_add(1),
            l2_squared: s.l2_squared.saturating_add(1),
        },
    }
}

/// Sensitivity of the count vector of **one** marginal table under `neighbouring`: the
/// workload formula with `m = 1` (replace-one Δ₁ = Δ₂² = 2, add/remove Δ₁ = Δ₂² = 1). The
/// adaptive mechanisms measure one table per round (`adaptive::AdaptiveProjection`).
pub fn single_marginal_count_sensitivity(neighbouring: Neighbouring) -> CountSensitivity {
    match neighbouring {
        Neighbouring::ReplaceOne => CountSensitivity {
            l1: 2,
            l2_squared: 2,
        },
        Neighbouring::AddRemove => CountSensitivity {
            l1: 1,
            l2_squared: 1,
        },
    }
}

/// Sensitivity of the **fit-error score** `‖c_r(D) − v_r‖₁` of one marginal table `r`
/// against a public vector `v_r` (count units): by the triangle inequality the score moves
/// by at most `‖c_r(D) − c_r(D′)‖₁`, the table's Δ₁ — 2 under replace-one, 1 under
/// add/remove (AIM, McKenna et al. 2022 §4, uses the add/remove value). A weighted score
/// `w_r·(‖c_r − v_r‖₁ − b_r)` with public `w_r ≥ 0`, `b_r` moves by at most `w_r` times it.
pub fn marginal_fit_error_sensitivity(neighbouring: Neighbouring) -> u64 {
    single_marginal_count_sensitivity(neighbouring).l1
}

/// Sensitivity of the **max-error score** `max_i |c_{r,i}(D) − v_{r,i}|` of one marginal
/// table `r` against a public vector `v_r` (count units): each cell's `|c_i − v_i|` moves by
/// at most `|c_i(D) − c_i(D′)| ≤ 1` (one record is in one cell; replace-one moves one count
/// down in one cell and one up in another, each by 1), and a maximum of functions each moving
/// by at most 1 moves by at most 1. So Δ = 1 under **both** relations — the table's Δ∞, not
/// its Δ₁. A public offset `b_r` does not change it.
pub fn marginal_max_error_sensitivity(neighbouring: Neighbouring) -> u64 {
    match neighbouring {
        Neighbouring::ReplaceOne | Neighbouring::AddRemove => 1,
    }
}

/// The score sensitivity the max-error selector is built with: the exact Δ∞ of
/// [`marginal_max_error_sensitivity`] plus the slack of the score's two roundings of
/// magnitude ≤ [`SCORE_CAP`] ([`score_fp_slack`]`(2)`: the conversion of the exact
/// [`cell_errors`] maximum, exact below 2⁵³, and the subtraction of the public noise term),
/// rounded up (module docs, "Floating-point margin").
pub fn marginal_max_error_selector_sensitivity(neighbouring: Neighbouring) -> f64 {
    dp_core::rounding::add_up(
        marginal_max_error_sensitivity(neighbouring) as f64,
        score_fp_slack(2),
    )
}

/// The score sensitivity the fit-error selector is built with, for weights up to
/// `max_weight`: `max_weight·(Δ₁ + slack)` with the exact Δ₁ of
/// [`marginal_fit_error_sensitivity`] and the slack of the score's three roundings
/// ([`score_fp_slack`]`(3)`: the conversion of the exact [`cell_errors`] sum, the
/// subtraction of the public noise term, the product with the weight — whose error is
/// `u·w·B`, i.e. `u·B` in units of `w`), rounded up (module docs, "Floating-point margin").
pub fn marginal_fit_error_selector_sensitivity(neighbouring: Neighbouring, max_weight: f64) -> f64 {
    use dp_core::rounding::{add_up, mul_up};
    mul_up(
        max_weight,
        add_up(
            marginal_fit_error_sensitivity(neighbouring) as f64,
            score_fp_slack(3),
        ),
    )
}

/// Sensitivity of a chaining level's count vector (seed 004 §4.2), under replace-one.
///
/// A level's dataset has one term per record, `a = q(z) − q(p)` for two universe elements
/// (`q` = answer vector, one 1 per table), and its count vector is the sum of the terms. If
/// `z` and `p` fall in different cells of `D` tables, `a` has `D` entries `+1` and `D`
/// entries `−1`: `‖a‖₂² = ‖a‖₁ = 2D`. Replacing one record changes the sum by `a − b` for two
/// terms of the level, so with `D ≤ max_differing_tables` for every term,
/// `‖a − b‖₂ ≤ ‖a‖₂ + ‖b‖₂ ≤ 2√(2D)` and `‖a − b‖₁ ≤ 4D`: Δ₂² = 8D and Δ₁ = 4D. Attained
/// by `b = −a` (the terms `q(z) − q(p)` and `q(p) − q(z)`), so the bound is tight over level
/// sets closed under negation. (Level 1, whose terms are answer vectors, has the data's
/// sensitivity, [`marginal_count_sensitivity`].) Only replace-one is defined: the chaining
/// mechanism normalises by the public n.
pub fn chain_increment_count_sensitivity(max_differing_tables: u64) -> CountSensitivity {
    CountSensitivity {
        l1: 4 * max_differing_tables,
        l2_squared: 8 * max_differing_tables,
    }
}

/// Sensitivity of **one counting query** (a marginal cell, a conjunction, a parity) in
/// count units: 1 under both relations (replace-one moves one record out of and one into
/// the query's support, changing the count by at most 1; add/remove changes it by at most 1).
/// The Laplace measurements of MWEM and of the Iterative Construction use it.
pub fn counting_query_sensitivity(_neighbouring: Neighbouring) -> u64 {
    1
}

/// Sensitivity of the distinguisher's score `|c_Q(D) − n·Q(D^t)|` (count units; seed 001
/// Thm 6 in normalised units is `1/n`) under replace-one: `D^t` and `n` are public, so the
/// score moves by at most the change of the count `c_Q(D)`, i.e. 1. MWEM's selection score
/// is the same. (Under add/remove `n` is private and the score is not defined this way.)
pub fn distinguisher_score_sensitivity() -> u64 {
    1
}

/// The distinguisher's scores `|c_q − n·a_q|` of every candidate, from the exact counts
/// `counts` and the public state's normalised answers `answers` (count units; the score
/// whose sensitivity [`distinguisher_score_sensitivity`] bounds): the selection score of
/// MWEM (HLM 2012), of IC-MW's exponential distinguisher (seed 001 Thm 6) and of the
/// chaining mechanism for worst-case error on each level (seed 004 §4.3).
///
/// **Floating point.** Each score is `min(|fl(c_q − fl(n·a_q))|, B)` with the cap
/// [`SCORE_CAP`] `= B`: `fl(n·a_q)` is public (the same on neighbours), `c_q` is exact, and
/// the one rounding of the subtraction errs by at most `u·B` after the cap (module docs,
/// "Floating-point margin"), so the selector is built with
/// [`distinguisher_selector_sensitivity`], not the exact Δ.
pub fn distinguisher_scores(
    counts: impl IntoIterator<Item = f64>,
    n: usize,
    answers: &[f64],
) -> Vec<f64> {
    let n = n as f64;
    counts
        .into_iter()
        .zip(answers)
        .map(|(c, &a)| (c - n * a).abs().min(SCORE_CAP))
        .collect()
}

/// The score sensitivity a selector on [`distinguisher_scores`] is built with: the count
/// sensitivity `count_sensitivity` (1 for a cell, `s_j` for a chaining level's count) plus
/// the floating-point slack of one rounding, [`score_fp_slack`]`(1)`, rounded up.
pub fn distinguisher_selector_sensitivity(count_sensitivity: u64) -> f64 {
    dp_core::rounding::add_up(count_sensitivity as f64, score_fp_slack(1))
}

/// Scores saturate at `B = 2³²` counts ([`distinguisher_scores`], [`cell_errors`]): a cap
/// is 1-Lipschitz, so it does not raise a sensitivity, and it bounds the magnitude of every
/// rounded intermediate, which is what makes the floating-point slack of a score a
/// constant ([`score_fp_slack`]) rather than a function of the (private, under add/remove)
/// counts. Only tables with a cell error above 4.29·10⁹ counts are affected (they all score
/// alike), and only in utility.
pub const SCORE_CAP: f64 = 4_294_967_296.0;

/// The floating-point slack of a selection score computed with `roundings` roundings of
/// values of magnitude at most [`SCORE_CAP`] `= B` (module docs, "Floating-point margin"):
/// each rounding errs by at most `u·B` (`u = 2⁻⁵³`, round to nearest) on each of the two
/// neighbours, so the computed scores of neighbours differ by at most the exact Δ plus
/// `2·roundings·u·B·(1 + u)` (the `(1 + u)` covers a rounding of a value already rounded
/// once). Rounded up. With `B = 2³²`: `roundings · 9.54·10⁻⁷`.
pub fn score_fp_slack(roundings: u32) -> f64 {
    use dp_core::rounding::mul_up;
    let u = f64::EPSILON / 2.0;
    mul_up(
        mul_up(2.0 * f64::from(roundings), mul_up(u, SCORE_CAP)),
        1.0 + f64::EPSILON,
    )
}

/// The exact errors of a table's counts against a public vector, the data-dependent part
/// of both adaptive-projection scores: `(min(Σ_i |c_i − x̃_i|, B), min(max_i |c_i − x̃_i|, B))`
/// with `x̃_i = ⌊x_i·2²⁰⌋/2²⁰` (the public `x_i = fl(T̂·p̂_i)` floored to a multiple of
/// 2⁻²⁰ — still public) and `B` = [`SCORE_CAP`]. Both are computed **exactly** in `i128`
/// fixed point (units of 2⁻²⁰: `|c_i|·2²⁰ < 2⁸⁴`, each term capped at `B·2²⁰ = 2⁵²`
/// before the saturating sum) and rounded to `f64` once at the end (exact while below
/// 2⁵³ units, i.e. always, since both are capped at 2⁵² units). So their sensitivities are
/// exactly those of the exact scores — the table's Δ₁ and Δ∞, by the triangle inequality
/// with the public `x̃` and the 1-Lipschitz cap — with no rounding: an ℓ1 sum over any
/// number of cells has no floating-point error to bound.
pub fn cell_errors(counts: &[u64], public: &[f64]) -> (f64, f64) {
    const F: i32 = 20;
    let unit = f64::from(1u32 << F);
    let cap: i128 = (SCORE_CAP as i128) << F;
    let (mut sum, mut max) = (0i128, 0i128);
    for (&c, &x) in counts.iter().zip(public) {
        // `as` saturates (and maps NaN to 0); x·2²⁰ is exact unless it overflows
        let xs = (x * unit).floor() as i128;
        let cs = i128::from(c) << F;
        let t = cs.saturating_sub(xs).saturating_abs().min(cap);
        sum = (sum + t).min(cap);
        max = max.max(t);
    }
    (sum as f64 / unit, max as f64 / unit)
}

/// Sensitivity of the vector of **odd counts** `o_T = #{x ∈ D : x_T = −1}` of
/// `num_parities` distinct parities `T` over binary attributes (count units), the one
/// measurement of the relaxed projection (`relaxed::RelaxedProjection`; seed 000 §3–4).
///
/// A record is odd on `T` or not, so one record moves each `o_T` by at most 1: adding or
/// removing it changes `o_T` by 1 exactly when it is odd on `T`; replacing `x` by `x′` changes
/// `o_T` by `1[x′_T = −1] − 1[x_T = −1] ∈ {−1, 0, 1}`. Over `N` parities, Δ₁ ≤ N and Δ₂² ≤ N
/// under both relations. (Under replace-one it is attained when some pair of records differs
/// in the parity of every `T`, e.g. `N = 1`; for all parities of a set it is not, but `N`
/// stays a valid upper bound.)
///
/// **Replicated parities.** The relaxation of seed 000 §4 holds each parity `x_T` in `r_T`
/// entries `(σ, τ)` with `σ Δ τ = T`. Those entries are filled from the single measured
/// `o_T` after the measurement — post-processing, no privacy cost — so the sensitivity is that
/// of the `N` distinct odd counts, not of the `R = Σ_T r_T` entries. Measuring every entry
/// with its own noise would instead have Δ₂² = R (each entry moves by 1) and, averaged back
/// over its `r_T` replicas, parity `T` would get noise variance `R/(2ρ·r_T)` instead of
/// `N/(2ρ)`: never better when all `r_T` are equal (`R = N·r`), and worse for the parities
/// with fewer replicas otherwise.
pub fn parity_odd_count_sensitivity(num_parities: usize) -> CountSensitivity {
    let n = num_parities as u64;
    CountSensitivity {
        l1: n,
        l2_squared: n,
    }
}

/// Sensitivity of the score of a query draw in round `t` of Boosting for Queries (Dwork,
/// Rothblum and Vadhan 2010; [`crate::relaxed::boosting`]): the score is `−Σ_{j<t} a_{j,q}`
/// where `a_{j,q}` is a function of the error `e = |o_q(x) − c_{j,q}|` of a count `o_q`
/// (sensitivity 1) against the fixed synopsis value `c_{j,q}`, constant outside `[λ, λ + μ]`
/// and of slope `2/μ` inside. A neighbour moves `e` by at most 1, hence each `a_{j,q}` by at
/// most `2/μ` and the score by at most `Δ_t = 2(t − 1)/μ` (0 in round 1, whose
/// distribution is uniform). Infinite for `μ ≤ 0` or non-finite.
///
/// This is the sensitivity in DRV's units, which sets the draw's `ε_t = 2αΔ_t`. The scores
/// the selector sees are the same scores up to a public shift and scale, computed exactly
/// in count units ([`BoostingScoreGrid`]); their sensitivity is
/// [`boosting_selector_sensitivity`].
pub fn boosting_score_sensitivity(t: usize, mu: f64) -> f64 {
    if !(mu > 0.0 && mu.is_finite()) {
        return f64::INFINITY;
    }
    2.0 * t.saturating_sub(1) as f64 / mu
}

/// The sensitivity the selector of a round-`t` boosting draw is built with: `t − 1`, in
/// counts, for the scores of [`BoostingScoreGrid::scores`], with **no** floating-point
/// margin — those scores are computed without a single rounding (the derivation is on
/// [`BoostingScoreGrid`]: zero roundings, so `score_fp_slack(0) = 0` is all there is to
/// add). 0 in round 1.
///
/// With this Δ, the exponential mechanism of `ε_t = 2αΔ_t` ([`boosting_score_sensitivity`])
/// samples `∝ exp(ε_t·S/(2(t − 1))) = exp(2α·S/μ)` for the gap sum `S`, which is DRV's
/// `exp(−α Σ_{j<t} a_{j,q})` (`a = 1 − 2g/μ`, so `−α Σ a = −α(t − 1) + 2α·S/μ`, and a shift
/// common to every query does not change the draw).
pub fn boosting_selector_sensitivity(t: usize) -> f64 {
    t.saturating_sub(1) as f64
}

/// The fixed-point arithmetic of boosting's draw scores (issue #23 §2): exact, so that the
/// computed scores of neighbouring datasets differ by at most the exact Δ.
///
/// **The score.** DRV's update `a_{j,q} = 1 − 2·g_{j,q}/μ` is a function of the clamped
/// error `g_{j,q} = min(max(e_{j,q} − λ_j, 0), μ)`, `e_{j,q} = |o_q − x_{j,q}|`, where `o_q`
/// is the query's odd count and `x_{j,q} = n(1 − A_j(q))/2` the count synopsis `A_j` gives it
/// (public once round `j` is over), so `D_t(q) ∝ exp(−α Σ_{j<t} a_{j,q}) ∝ exp(2α·S_q/μ)`
/// with the **gap sum** `S_q = Σ_{j<t} g_{j,q}` (counts). The selector is given `S_q`.
///
/// **The grid.** Fix `F` fractional bits (below). With `⌊·⌋_F` flooring to a multiple of
/// `2⁻ᶠ`, the public values are put on the grid first — `x̃ = ⌊x⌋_F`, `λ̃ = ⌊λ⌋_F`,
/// `μ̃ = ⌊μ⌋_F` (public functions of public values; `x̃` and `λ̃` clamped to `±2¹⁰⁰` units,
/// `μ̃` to `2⁵³`) — and then, in `i128` units of `2⁻ᶠ` counts, `g = min(max(|o·2ᶠ − x̃·2ᶠ| − λ̃·2ᶠ,
/// 0), μ̃·2ᶠ)` is an **exact** integer (`o·2ᶠ < 2⁸⁴`; nothing exceeds `2¹⁰²`), and so is the
/// running sum `G_q = min(G_q + g, 2⁵³)` (all `g ≥ 0`, so after `t − 1` rounds
/// `G_q = min(Σ_j g_{j,q}, 2⁵³)`). The score is `S_q = G_q·2⁻ᶠ` as `f64`.
///
/// **Roundings: none.** `G_q ≤ 2⁵³` is an integer, so its conversion to `f64` is exact, and
/// `·2⁻ᶠ` is a power-of-two scaling of a number `≥ 2⁻²⁰` or zero (no underflow), also exact.
/// The floors and clamps are applied to public values only. So the computed score **is**
/// the exact score of the grid's public values, `r = 0`, and the margin of
/// [`score_fp_slack`] is `0`.
///
/// **Exact sensitivity.** Replace-one moves `o_q` by at most 1, hence `o·2ᶠ` by `2ᶠ`; `|·|`,
/// `max(· − λ̃2ᶠ, 0)`, `min(·, μ̃2ᶠ)` and `min(·, 2⁵³)` are 1-Lipschitz, so each `g` moves by
/// at most `2ᶠ`, `G_q` by at most `(t − 1)·2ᶠ` and `S_q` by at most `t − 1` counts:
/// [`boosting_selector_sensitivity`]. (Without the grid, in `f64`, the old path
/// `−Σ fl(a_{j,q})` rounds in the error `o − x` (when `x` is not within a factor 2 of `o`),
/// the subtraction of `λ`, the division by `μ`, the `1 − ·` and each of the `t − 2`
/// additions, and neighbours' computed scores do exceed `Δ_t` — by a few
/// units in the last place, found by brute force in this module's tests.)
///
/// **The bits `F`.** The largest `F ≤ 20` with `(T − 1)·μ̃·2ᶠ ≤ 2⁵³` for `T` rounds, so
/// that the cap `2⁵³` is never reached, or `F = 0` if none: then the cap binds only for a
/// gap sum above `2⁵³` counts (such queries score alike; utility, not privacy). The grid
/// changes DRV's rule by less than `2⁻ᶠ` counts in `x`, `λ` and `μ` (`μ̃ ≤ μ`, so
/// `a = 1 − 2g/μ` stays in `[−1, 1]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoostingScoreGrid {
    bits: u32,
    gap_units: i128,
}

impl BoostingScoreGrid {
    /// The largest number of fractional bits used, `2⁻²⁰` counts.
    pub const MAX_BITS: u32 = 20;
    /// The cap of the running gap sum, in grid units: `2⁵³`, below which every integer is an
    /// `f64`.
    pub const SUM_CAP: i128 = 1 << 53;
    /// The clamp of the public grid values, in grid units.
    const PUBLIC_BOUND: i128 = 1 << 100;

    /// The grid for `rounds` rounds with gap `mu` (counts; public): the bits `F` of the type
    /// docs. A `mu` that is not finite and positive gives `μ̃ = 0` (every gap 0: uniform draws).
    pub fn new(rounds: usize, mu: f64) -> Self {
        let terms = rounds.saturating_sub(1) as i128;
        let gap_units = |bits: u32| -> i128 {
            if mu > 0.0 && mu.is_finite() {
                // μ·2ᶠ is exact (a power-of-two scaling); `as` saturates
                (mu * f64::from(1u32 << bits)).floor() as i128
            } else {
                0
            }
        };
        let bits = (0..=Self::MAX_BITS)
            .rev()
            .find(|&b| {
                gap_units(b)
                    .checked_mul(terms)
                    .is_some_and(|m| m <= Self::SUM_CAP)
            })
            .unwrap_or(0);
        Self {
            bits,
            gap_units: gap_units(bits).min(Self::SUM_CAP),
        }
    }

    /// The fractional bits `F`.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// `μ̃·2ᶠ`: the largest gap `g`, in grid units.
    pub fn gap_units(&self) -> i128 {
        self.gap_units
    }

    /// A public value on the grid: `⌊v·2ᶠ⌋` clamped to `±2¹⁰⁰` (NaN → 0).
    fn public_units(&self, v: f64) -> i128 {
        let units = (v * f64::from(1u32 << self.bits)).floor();
        (units as i128).clamp(-Self::PUBLIC_BOUND, Self::PUBLIC_BOUND)
    }

    /// One round's exact gaps `g_{j,q}` (grid units) of every query, from the true odd
    /// counts, the round's synopsis (parity values `A_j(q)`), `n` and the threshold `lambda`
    /// (counts).
    pub fn gaps(&self, odd_counts: &[u64], synopsis: &[f64], n: usize, lambda: f64) -> Vec<i128> {
        let n = n as f64;
        let l = self.public_units(lambda).max(0);
        odd_counts
            .iter()
            .zip(synopsis)
            .map(|(&o, &p)| {
                let x = self.public_units(n * (1.0 - p) / 2.0);
                let e = ((i128::from(o) << self.bits) - x).abs();
                (e - l).clamp(0, self.gap_units)
            })
            .collect()
    }

    /// Add one round's gaps to the running sums `G_q = min(G_q + g, 2⁵³)`.
    pub fn accumulate(&self, cumulative: &mut [i128], gaps: &[i128]) {
        for (c, &g) in cumulative.iter_mut().zip(gaps) {
            *c = c.saturating_add(g.max(0)).min(Self::SUM_CAP);
        }
    }

    /// The draw's scores `S_q = G_q·2⁻ᶠ` (counts), exact; sensitivity
    /// [`boosting_selector_sensitivity`].
    pub fn scores(&self, cumulative: &[i128]) -> Vec<f64> {
        let scale = 1.0 / f64::from(1u32 << self.bits);
        cumulative
            .iter()
            .map(|&g| g.clamp(0, Self::SUM_CAP) as f64 * scale)
            .collect()
    }

    /// DRV's update `a = 1 − 2g/μ` of gaps in grid units (`f64`; for reports and tests,
    /// not on the draw's path).
    pub fn updates(&self, gaps: &[i128], mu: f64) -> Vec<f64> {
        let scale = 1.0 / f64::from(1u32 << self.bits);
        gaps.iter()
            .map(|&g| 1.0 - 2.0 * (g as f64 * scale) / mu)
            .collect()
    }
}

/// Sensitivity of DualQuery's sampling score in round `t` (seed 003 Thm 4.2 proof):
/// `r(D, q) = Σ_{i<t} (q(D) − q(xⁱ))` with normalised `q(D)`, replace-one: each of the
/// `t − 1` terms moves by at most `1/n`, so `Δ = (t − 1)/n` (0 in round 1).
pub fn dualquery_score_sensitivity(t: usize, n: usize) -> f64 {
    if n == 0 {
        return f64::INFINITY;
    }
    t.saturating_sub(1) as f64 / n as f64
}

/// Sensitivity of a **polynomial release's coefficient vector** (seed 002 Thm 3.1 / 3.2,
/// Thaler, Ullman and Vadhan 2012), in coefficient units; real-valued.
///
/// The released vector has one coordinate per monomial `y_S` (`S` a set of bits from
/// distinct attributes, `|S| ≤ D`); a record `x` contributes `b_{|S|}·[x holds every bit of
/// S]` to it (`crate::polynomial::approx`: the coefficient depends only on `|S|` and on
/// `x_S`). `held[s]` is the number of size-`s` sets one record holds — the same for every
/// record: `C(d, s)` for bits "attribute = code" over `d` attributes, `e_s(size_a − 1)` (the
/// elementary symmetric polynomial) for bits "attribute ≠ code".
///
/// * **Add/remove**: the vector moves by the record's own polynomial:
///   `Δ₁ = Σ_{s≥0} |b_s|·held[s]`, `Δ₂² = Σ_{s≥0} b_s²·held[s]`.
/// * **Replace-one**: the sets both records hold cancel, at least `S = ∅`; each record adds
///   or removes its own: `Δ₁ ≤ 2·Σ_{s≥1} |b_s|·held[s]`, `Δ₂² ≤ 2·Σ_{s≥1} b_s²·held[s]` —
///   attained for bits "attribute = code" by two records differing in every attribute (they
///   share no non-empty set).
///
/// The sums are rounded up (a relative margin of 10⁻¹² covers the floating-point error of
/// at most 65 terms), so the noise calibrated to them is never too small. `b` and `held`
/// are paired up to the shorter length.
pub fn polynomial_coefficient_sensitivity(
    b: &[f64],
    held: &[f64],
    neighbouring: Neighbouring,
) -> PolynomialSensitivity {
    let (first, factor) = match neighbouring {
        Neighbouring::AddRemove => (0, 1.0),
        Neighbouring::ReplaceOne => (1, 2.0),
    };
    let mut l1 = 0.0;
    let mut l2 = 0.0;
    for (bs, h) in b.iter().zip(held).skip(first) {
        l1 += bs.abs() * h;
        l2 += bs * bs * h;
    }
    let margin = 1.0 + 1e-12;
    PolynomialSensitivity {
        l1: (factor * l1 * margin).next_up(),
        l2_squared: (factor * l2 * margin).next_up(),
    }
}

/// The ℓ1 and squared ℓ2 sensitivities of a real-valued vector
/// ([`polynomial_coefficient_sensitivity`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolynomialSensitivity {
    /// Δ₁, rounded up.
    pub l1: f64,
    /// Δ₂², rounded up.
    pub l2_squared: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_queries::{Dataset, Domain};

    fn small_workload() -> (Domain, MarginalWorkload) {
        let domain = Domain::new(vec![
            ("a".to_string(), 3),
            ("b".to_string(), 2),
            ("c".to_string(), 4),
        ])
        .unwrap();
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        (domain, w)
    }

    #[test]
    fn workload_formula_agrees_with_marginal_formula() {
        let (_, w) = small_workload();
        for rel in [Neighbouring::ReplaceOne, Neighbouring::AddRemove] {
            assert_eq!(
                workload_count_sensitivity(&w, rel),
                marginal_count_sensitivity(&w, rel)
            );
        }
    }

    #[test]
    fn measured_total_adds_one_under_add_remove_only() {
        let s = CountSensitivity {
            l1: 4,
            l2_squared: 9,
        };
        assert_eq!(with_measured_total(s, Neighbouring::ReplaceOne), s);
        assert_eq!(
            with_measured_total(s, Neighbouring::AddRemove),
            CountSensitivity {
                l1: 5,
                l2_squared: 10
            }
        );
        // an explicit workload: replace-one uses the pair bounds, add/remove the per-record
        let d = Domain::new(vec![("b".to_string(), 2)]).unwrap();
        let e =
            dp_queries::ExplicitWorkload::new(&d, vec![0], vec![vec![1, 3], vec![-2, 0]]).unwrap();
        assert_eq!(
            workload_count_sensitivity(&e, Neighbouring::AddRemove),
            CountSensitivity {
                l1: 3,
                l2_squared: 9
            }
        );
        assert_eq!(
            workload_count_sensitivity(&e, Neighbouring::ReplaceOne),
            CountSensitivity {
                l1: 4,
                l2_squared: 8
            }
        );
    }

    /// Brute force: the largest ℓ1 and squared ℓ2 change of the count vector over every
    /// replace-one and add/remove neighbour of a small dataset, over every pair of records of
    /// the universe. The analytic formula must equal it (the bound is attained).
    #[test]
    fn marginal_sensitivity_matches_brute_force() {
        let (domain, w) = small_workload();
        let base_cols = vec![vec![0u32, 1, 2], vec![0u32, 1, 0], vec![3u32, 2, 1]];
        let base = Dataset::from_columns(domain.clone(), base_cols.clone()).unwrap();
        let base_counts = w.count_all(&base).unwrap();
        let mut universe = Vec::new();
        for a in 0..3u32 {
            for b in 0..2u32 {
                for c in 0..4u32 {
                    universe.push([a, b, c]);
                }
            }
        }
        let diff = |other: &[u64]| {
            let mut l1 = 0u64;
            let mut l2 = 0u64;
            for (x, y) in base_counts.iter().zip(other) {
                let d = x.abs_diff(*y);
                l1 += d;
                l2 += d * d;
            }
            (l1, l2)
        };
        // replace-one: replace record 0 by every universe element.
        let (mut max_l1, mut max_l2) = (0, 0);
        for rec in &universe {
            let mut cols = base_cols.clone();
            for (j, col) in cols.iter_mut().enumerate() {
                col[0] = rec[j];
            }
            let d = Dataset::from_columns(domain.clone(), cols).unwrap();
            let (l1, l2) = diff(&w.count_all(&d).unwrap());
            max_l1 = max_l1.max(l1);
            max_l2 = max_l2.max(l2);
        }
        let s = marginal_count_sensitivity(&w, Neighbouring::ReplaceOne);
        assert_eq!((s.l1, s.l2_squared), (max_l1, max_l2));
        assert_eq!(s.l1, 6); // 3 two-way tables, by hand: 2 per table
        // add/remove: add every universe element.
        let (mut max_l1, mut max_l2) = (0, 0);
        for rec in &universe {
            let mut cols = base_cols.clone();
            for (j, col) in cols.iter_mut().enumerate() {
                col.push(rec[j]);
            }
            let d = Dataset::from_columns(domain.clone(), cols).unwrap();
            let (l1, l2) = diff(&w.count_all(&d).unwrap());
            max_l1 = max_l1.max(l1);
            max_l2 = max_l2.max(l2);
        }
        let s = marginal_count_sensitivity(&w, Neighbouring::AddRemove);
        assert_eq!((s.l1, s.l2_squared), (max_l1, max_l2));
        assert_eq!(s.l1, 3);
    }

    /// Brute force for one table (the adaptive mechanisms' measurement and selection): over
    /// every replace-one neighbour (record 0 replaced by each universe record) and every
    /// add/remove neighbour (each universe record added, each record removed) of a small
    /// dataset, the largest ℓ1 / squared ℓ2 change of one 2-way table's counts, and of the
    /// fit-error score `‖c − v‖₁` and of the max-error score `max_i |c_i − v_i|` against a
    /// fixed public `v`, equal the formulas (attained: the bounds are not loose).
    #[test]
    fn single_table_and_fit_error_score_match_brute_force() {
        let (domain, _) = small_workload();
        let table = dp_queries::Marginal::new(&domain, vec![0, 2]).unwrap();
        let base_cols = vec![vec![0u32, 1, 2], vec![0u32, 1, 0], vec![3u32, 2, 1]];
        let base = Dataset::from_columns(domain.clone(), base_cols.clone()).unwrap();
        let c0 = table.count(&base);
        // a public vector that makes the score move by the full ℓ1 change for some pair
        let v: Vec<f64> = (0..c0.len()).map(|i| (i % 3) as f64 * 0.7).collect();
        let score =
            |c: &[u64]| -> f64 { c.iter().zip(&v).map(|(a, b)| (*a as f64 - b).abs()).sum() };
        // for the max score the public vector is 0 (any v works for the bound; with the
        // three records in three cells, 0 makes it attained: a record joining another's
        // cell raises the maximum by 1 under both relations)
        let v_int = vec![0.0f64; c0.len()];
        let max_score = |c: &[u64]| -> f64 {
            c.iter()
                .zip(&v_int)
                .map(|(a, b)| (*a as f64 - b).abs())
                .fold(0.0, f64::max)
        };
        let (s0, m0) = (score(&c0), max_score(&c0));
        let mut worst = [(0u64, 0u64, 0.0f64); 2]; // replace-one, add/remove
        let mut worst_max = [0.0f64; 2];
        let mut visit = |k: usize, cols: Vec<Vec<u32>>| {
            let d = Dataset::from_columns(domain.clone(), cols).unwrap();
            let c = table.count(&d);
            let l1: u64 = c.iter().zip(&c0).map(|(a, b)| a.abs_diff(*b)).sum();
            let l2: u64 = c.iter().zip(&c0).map(|(a, b)| a.abs_diff(*b).pow(2)).sum();
            let ds = (score(&c) - s0).abs();
            worst[k] = (worst[k].0.max(l1), worst[k].1.max(l2), worst[k].2.max(ds));
            worst_max[k] = worst_max[k].max((max_score(&c) - m0).abs());
        };
        for a in 0..3u32 {
            for b in 0..2u32 {
                for c in 0..4u32 {
                    let rec = [a, b, c];
                    let mut cols = base_cols.clone();
                    for (j, col) in cols.iter_mut().enumerate() {
                        col[0] = rec[j];
                    }
                    visit(0, cols);
                    let mut cols = base_cols.clone();
                    for (j, col) in cols.iter_mut().enumerate() {
                        col.push(rec[j]);
                    }
                    visit(1, cols);
                }
            }
        }
        for r in 0..3 {
            let cols: Vec<Vec<u32>> = base_cols
                .iter()
                .map(|col| {
                    col.iter()
                        .enumerate()
                        .filter(|&(i, _)| i != r)
                        .map(|(_, &x)| x)
                        .collect()
                })
                .collect();
            visit(1, cols);
        }
        for (k, rel) in [Neighbouring::ReplaceOne, Neighbouring::AddRemove]
            .into_iter()
            .enumerate()
        {
            let s = single_marginal_count_sensitivity(rel);
            assert_eq!((s.l1, s.l2_squared), (worst[k].0, worst[k].1), "{rel}");
            let e = marginal_fit_error_sensitivity(rel) as f64;
            let em = marginal_max_error_sensitivity(rel) as f64;
            assert!(
                (worst_max[k] - em).abs() < 1e-12,
                "{rel}: max-error score moved at most {} but Δ∞ = {em}",
                worst_max[k]
            );
            assert!(
                worst[k].2 <= e + 1e-12,
                "{rel}: score moved {} > {e}",
                worst[k].2
            );
            assert!(
                worst[k].2 >= e - 1e-12,
                "{rel}: bound {e} not attained ({})",
                worst[k].2
            );
        }
        // by hand: a record moving between two cells moves two counts by one each
        assert_eq!(
            single_marginal_count_sensitivity(Neighbouring::ReplaceOne).l1,
            2
        );
    }

    /// Brute force over every pair of increments `q(z) − q(p)` of a small universe with
    /// `D(z, p) ≤ D_max`: the largest change `‖a − b‖` equals the formula (attained).
    #[test]
    fn chain_increment_sensitivity_matches_brute_force() {
        let (domain, w) = small_workload();
        let mut universe = Vec::new();
        for a in 0..3u32 {
            for b in 0..2u32 {
                for c in 0..4u32 {
                    universe.push(vec![a, b, c]);
                }
            }
        }
        let point = |rec: &[u32]| -> Vec<i64> {
            let d = Dataset::from_columns(domain.clone(), rec.iter().map(|&v| vec![v]).collect())
                .unwrap();
            w.count_all(&d)
                .unwrap()
                .into_iter()
                .map(|c| c as i64)
                .collect()
        };
        let pts: Vec<Vec<i64>> = universe.iter().map(|r| point(r)).collect();
        // In this workload every attribute is in two of the three tables, so D ∈ {0, 2, 3}.
        for d_max in [0u64, 2, 3] {
            let incs: Vec<Vec<i64>> = pts
                .iter()
                .flat_map(|z| pts.iter().map(move |p| (z, p)))
                .map(|(z, p)| z.iter().zip(p).map(|(a, b)| a - b).collect::<Vec<i64>>())
                .filter(|a: &Vec<i64>| a.iter().map(|x| x * x).sum::<i64>() as u64 <= 2 * d_max)
                .collect();
            let (mut l1, mut l2) = (0u64, 0u64);
            for a in &incs {
                for b in &incs {
                    let d: Vec<i64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
                    l1 = l1.max(d.iter().map(|x| x.unsigned_abs()).sum());
                    l2 = l2.max(d.iter().map(|x| (x * x) as u64).sum());
                }
            }
            let s = chain_increment_count_sensitivity(d_max);
            assert_eq!((s.l1, s.l2_squared), (l1, l2), "D_max = {d_max}");
        }
        // by hand: D = 3 (all three tables differ) gives Δ₂² = 24.
        assert_eq!(chain_increment_count_sensitivity(3).l2_squared, 24);
    }
}

#[cfg(test)]
mod fp_margin_tests {
    use super::*;

    /// The slack by hand (`2·r·2⁻⁵³·2³²·(1 + 2⁻⁵²)`, rounded up) and the margined
    /// sensitivities just above the exact ones; the exact cell errors equal the naive ones
    /// on small integers and dyadic public values, and saturate at the cap.
    #[test]
    fn slack_by_hand_and_exact_cell_errors() {
        let one = 2.0f64.powi(-20); // 2·2⁻⁵³·2³²
        assert!(score_fp_slack(1) >= one && score_fp_slack(1) <= one * (1.0 + 1e-15));
        assert!(score_fp_slack(3) >= 3.0 * one);
        let d = distinguisher_selector_sensitivity(1);
        assert!(d > 1.0 && d < 1.0 + 1e-6);
        assert!(distinguisher_selector_sensitivity(2) > 2.0);
        let f = marginal_fit_error_selector_sensitivity(Neighbouring::ReplaceOne, 1.5);
        assert!(f > 3.0 && f < 3.0 * (1.0 + 1e-5));
        assert_eq!(
            cell_errors(&[3, 0, 7], &[1.25, 0.5, 9.0]),
            (1.75 + 0.5 + 2.0, 2.0)
        );
        // floored to 2⁻²⁰: x = 0.1 becomes ⌊0.1·2²⁰⌋/2²⁰ = 104857/2²⁰
        let (l1, _) = cell_errors(&[1], &[0.1]);
        assert_eq!(l1, 1.0 - 104_857.0 / 1_048_576.0);
        let (l1, mx) = cell_errors(&[u64::MAX, u64::MAX], &[0.0, -1e300]);
        assert_eq!((l1, mx), (SCORE_CAP, SCORE_CAP));
        // the distinguisher score saturates alike
        assert_eq!(distinguisher_scores([1e300], 1, &[0.0]), vec![SCORE_CAP]);
    }
}

#[cfg(test)]
mod iterative_tests {
    use super::*;
    use dp_queries::{Dataset, Domain};

    /// Brute force over every replace-one neighbour of a small dataset (replace record 0
    /// by each of the 12 records of the universe): the largest change of every single
    /// counting query (cell) is 1, of the distinguisher score against a fixed public
    /// synthetic answer is 1, and of DualQuery's round-t score with fixed earlier best
    /// responses is exactly (t − 1)/n.
    #[test]
    fn iterative_sensitivities_match_brute_force() {
        let domain = Domain::new(vec![("a".to_string(), 3), ("b".to_string(), 4)]).unwrap();
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let base_cols = vec![vec![0u32, 1, 2, 2], vec![3u32, 0, 1, 3]];
        let n = 4usize;
        let base = Dataset::from_columns(domain.clone(), base_cols.clone()).unwrap();
        let c0 = w.count_all(&base).unwrap();
        // Earlier best responses x¹, x² (records), for t = 3.
        let xs = [[1u32, 3u32], [2u32, 0u32]];
        let cell = |x: &[u32; 2]| x[0] as usize * 4 + x[1] as usize;
        let score = |counts: &[u64], q: usize| -> f64 {
            xs.iter()
                .map(|x| counts[q] as f64 / n as f64 - f64::from(u8::from(cell(x) == q)))
                .sum()
        };
        let synthetic = 0.3; // public Q(D^t) for every query
        let (mut max_count, mut max_dist, mut max_score) = (0u64, 0f64, 0f64);
        for a in 0..3u32 {
            for b in 0..4u32 {
                let mut cols = base_cols.clone();
                cols[0][0] = a;
                cols[1][0] = b;
                let d = Dataset::from_columns(domain.clone(), cols).unwrap();
                let c1 = w.count_all(&d).unwrap();
                for q in 0..c0.len() {
                    max_count = max_count.max(c0[q].abs_diff(c1[q]));
                    let s0 = (c0[q] as f64 - n as f64 * synthetic).abs();
                    let s1 = (c1[q] as f64 - n as f64 * synthetic).abs();
                    max_dist = max_dist.max((s0 - s1).abs());
                    max_score = max_score.max((score(&c0, q) - score(&c1, q)).abs());
                }
            }
        }
        assert_eq!(
            max_count,
            counting_query_sensitivity(Neighbouring::ReplaceOne)
        );
        assert!((max_dist - distinguisher_score_sensitivity() as f64).abs() < 1e-12);
        assert!((max_score - dualquery_score_sensitivity(3, n)).abs() < 1e-12);
        assert_eq!(dualquery_score_sensitivity(3, n), 0.5); // (3 − 1)/4 by hand
        assert_eq!(dualquery_score_sensitivity(1, n), 0.0);
    }
}

#[cfg(test)]
mod boosting_fp_tests {
    use super::*;
    use crate::relaxed::boosting::drv_update;

    /// The scores of a round-`t` draw for one query with odd count `o` over the histories
    /// `(synopsis value, λ)` of rounds `1..t`: the pre-fix path (`−Σ a` summed in `f64`, as
    /// the release drew before issue #23 §2 was closed here) and the grid's exact gap sum.
    fn old_score(o: u64, history: &[(f64, f64)], n: usize, mu: f64) -> f64 {
        let mut cumulative = 0.0;
        for &(p, lambda) in history {
            cumulative += drv_update(&[o], &[p], n, lambda, mu)[0];
        }
        -cumulative
    }

    fn grid_score(grid: &BoostingScoreGrid, o: u64, history: &[(f64, f64)], n: usize) -> f64 {
        let mut cumulative = [0i128];
        for &(p, lambda) in history {
            grid.accumulate(&mut cumulative, &grid.gaps(&[o], &[p], n, lambda));
        }
        grid.scores(&cumulative)[0]
    }

    /// Issue #23 §2, boosting: over a brute-force family of neighbouring odd counts `o`,
    /// `o + 1` (replace-one moves a parity's odd count by at most 1) whose errors stay in the
    /// linear part of DRV's update in every earlier round — the pairs at which the exact
    /// score moves by exactly `Δ_t = 2(t − 1)/μ` — the pre-fix `f64` scores move by **more**
    /// than `Δ_t` for some pairs (the slack is real), while the grid's scores move by at most
    /// the selector's Δ = `t − 1` counts, attained (exact: no margin, and not over-charged).
    #[test]
    fn computed_scores_beyond_the_exact_delta_stay_within_the_selector_delta() {
        let n = 1usize << 31;
        let mut beyond = 0usize;
        let mut pairs = 0usize;
        let mut worst_old_excess = 0.0f64;
        for t in 2..=6usize {
            for mu in [3.7, 5.3, 11.1, 1234.567] {
                let grid = BoostingScoreGrid::new(t, mu);
                assert_eq!(grid.bits(), BoostingScoreGrid::MAX_BITS);
                let declared_old = boosting_score_sensitivity(t, mu);
                let declared = boosting_selector_sensitivity(t);
                assert_eq!(declared, (t - 1) as f64);
                let mut worst_new = 0.0f64;
                for base in [3_000u64, 1 << 20, (1 << 30) + 12_345] {
                    for i in 0..150u64 {
                        let o = base + 7 * i;
                        // round j: error e = λ_j + μ·f_j, f_j ∈ [0.05, 0.6), so o + 1 (error
                        // e + 1) stays in the linear part; λ_j with fractional parts
                        let history: Vec<(f64, f64)> = (0..t - 1)
                            .map(|j| {
                                let lambda = 0.37 + 1.913 * (i as f64) + 0.71 * j as f64;
                                let f =
                                    0.05 + 0.55 * (((i * 31 + j as u64 * 17) % 97) as f64 / 97.0);
                                let x = o as f64 - lambda - mu * f;
                                (1.0 - 2.0 * x / n as f64, lambda)
                            })
                            .collect();
                        let d_old = (old_score(o + 1, &history, n, mu)
                            - old_score(o, &history, n, mu))
                        .abs();
                        pairs += 1;
                        if d_old > declared_old {
                            beyond += 1;
                            worst_old_excess = worst_old_excess.max(d_old / declared_old - 1.0);
                        }
                        let d_new = (grid_score(&grid, o + 1, &history, n)
                            - grid_score(&grid, o, &history, n))
                        .abs();
                        assert!(
                            d_new <= declared,
                            "t = {t}, μ = {mu}, o = {o}: {d_new} > {declared}"
                        );
                        worst_new = worst_new.max(d_new);
                    }
                }
                assert_eq!(worst_new, declared, "t = {t}, μ = {mu}: Δ not attained");
            }
        }
        println!("{beyond} of {pairs} pairs beyond Δ_t, by up to {worst_old_excess:e} relative");
        assert!(beyond > 0, "no pair's f64 score moved beyond Δ_t");
    }

    /// The grid's bits and cap by hand; saturation at the cap keeps the Δ; the grid's update
    /// agrees with DRV's rule in `f64` within the grid.
    #[test]
    fn grid_by_hand() {
        // zero roundings: the margin score_fp_slack would add is exactly 0
        assert_eq!(score_fp_slack(0), 0.0);
        assert_eq!(boosting_selector_sensitivity(1), 0.0);
        assert_eq!(boosting_selector_sensitivity(7), 6.0);
        // (T − 1)·μ·2ᶠ ≤ 2⁵³: 8·100·2²⁰ fits, F = 20
        let g = BoostingScoreGrid::new(9, 100.0);
        assert_eq!((g.bits(), g.gap_units()), (20, 100 << 20));
        // 999·10¹⁰·2ᶠ ≤ 2⁵³ ⇔ 2ᶠ ≤ 901.6: F = 9
        let g = BoostingScoreGrid::new(1000, 1e10);
        assert_eq!(g.bits(), 9);
        assert_eq!(g.gap_units(), 10_000_000_000 << 9);
        // one round: no sum, F = 20; μ = 2.3 floored to 2⁻²⁰
        let g = BoostingScoreGrid::new(1, 2.3);
        assert_eq!(g.gap_units(), (2.3f64 * 1_048_576.0).floor() as i128);
        // too large for any F: F = 0, the cap binds, saturated sums still move by ≤ t − 1
        let g = BoostingScoreGrid::new(3, 1e17);
        assert_eq!(g.bits(), 0);
        let n = 1usize << 62;
        let hist = [(1.0, 0.0), (1.0, 0.0)]; // x = 0: gap = min(o, μ̃)
        let big = 1u64 << 60;
        let s = grid_score(&g, big, &hist, n);
        assert_eq!(s, 2f64.powi(53));
        assert_eq!(grid_score(&g, big + 1, &hist, n), s);
        let below = (1u64 << 52) - 1; // 2·(2⁵² − 1) = 2⁵³ − 2: one below the cap, then capped
        let (a, b) = (
            grid_score(&g, below, &hist, n),
            grid_score(&g, below + 1, &hist, n),
        );
        assert_eq!((a, b), (2f64.powi(53) - 2.0, 2f64.powi(53)));
        assert!(b - a <= boosting_selector_sensitivity(3));
        // the update a = 1 − 2g/μ against DRV's rule (synopsis 0.2 at n = 1000: count 400)
        let g = BoostingScoreGrid::new(5, 4.0);
        let counts = [400, 403, 405, 407, 420, 404];
        let gaps = g.gaps(&counts, &[0.2; 6], 1000, 3.0);
        assert_eq!(
            gaps,
            vec![0, 0, 2 << 20, 4 << 20, 4 << 20, 1 << 20],
            "errors 0, 3, 5, 7, 20, 4 against λ = 3, μ = 4"
        );
        let a = g.updates(&gaps, 4.0);
        assert_eq!(a, drv_update(&counts, &[0.2; 6], 1000, 3.0, 4.0));
        assert_eq!(a, vec![1.0, 1.0, 0.0, -1.0, -1.0, 0.5]);
    }
}
