//! Adaptive select–measure–estimate release: **adaptive projection**, seed 001's Iterative
//! Construction with projection onto the marginal polytope as the update, run the way MWEM
//! and AIM run it (McKenna, Mullins, Sheldon and Miklau, "AIM: An Adaptive and Iterative
//! Mechanism for Differentially Private Synthetic Data", VLDB 2022, Alg. 2).
//!
//! For a marginal workload `W` over attributes `A` (`d = |A|`), candidates are the
//! *downward closure* of `W` (every non-empty subset of a workload table), each with weight
//! `w_r = Σ_{s ∈ W} |r ∩ s|` (AIM §4). With `T = rounds_per_attribute · d` and measurement
//! share `α`:
//!
//! 1. **Initialise**: measure every 1-way marginal of `A` with discrete Gaussian noise at
//!    `ρ_measure = αρ/T` each, the one of fewest cells first; when at its noisy total at most
//!    half of the workload tables would be cheap (step 2), the budget is **low** and the other
//!    1-way tables and the rounds take `T = min(r_low, r)·d`
//!    ([`AdaptiveProjectionParams::low_budget_rounds_per_attribute`]); fit the estimate.
//! 2. **Cheap tables first** (issue #24, `adaptive/direct.rs`): each workload table whose
//!    direct measurement at `βρ/k` (`k` workload tables, `β = direct_share`) has expected
//!    ℓ1 noise at most `τ = direct_noise_l1` of the noisy total is measured once, directly,
//!    and joins the estimate (beside it past AIM's growing size limit); when they are
//!    measured, optionally (`direct_unjoinable`) so is every other workload table whose clique
//!    the model cannot take even at its full cap (beside it: no round could reach it).
//! 3. **Rounds**, while budget is left: among candidates whose addition keeps the estimate's
//!    model within `max_model_cells · (ρ spent / ρ)` (AIM's growing size limit) — and, in
//!    the ℓ1 rounds, the workload tables the model cannot take even at its full cap, which
//!    are measured beside it (`measure_beside_model`, [`beside`]) — **select**
//!    `r` with the exponential mechanism at `ε` (`ε²/8 = ρ_select = (1−α)ρ/T`) on the fit
//!    error `q_r = w_r·(‖c_r − T̂·p̂_r‖₁ − √(2/π)·σ·n_r)` ([`round::fit_error_score`]);
//!    **measure** `c_r` with discrete Gaussian noise of variance `σ² = Δ₂²/(2ρ_measure)`;
//!    **re-estimate** from every measurement so far; if the estimate of `r` moved by less
//!    than the noise's expected ℓ1 norm, **anneal**: `ρ_measure, ρ_select ← 4×` (σ halves,
//!    ε doubles). When less than two rounds' budget is left, the last round takes all of it.
//!    With coarsened candidates on ([`AdaptiveProjectionParams::coarse_threshold`],
//!    `coarse.rs`), each candidate of two or more attributes has a twin: the same table with
//!    each attribute's values of noisy 1-way count below `θσ₁` summed into one group; the
//!    same score picks between them, and a coarsened measurement enters the model as the
//!    sums over its groups.
//! 4. **Release** the estimate's marginals on `W` (and synthetic records sampled from it).
//!
//! The estimate is the projection of the measurements onto the marginal polytope — the
//! point of `conv{q(x)}` nearest to the noisy measurements in the noise-weighted ℓ2 norm —
//! represented with maximum entropy among the nearest points (a graphical model on the
//! measured cliques, Private-PGM; [`estimator`]). Maximum entropy is what makes it good on
//! the marginals that were *not* measured: it adds no dependence the measurements do not
//! show.
//!
//! ## Privacy
//!
//! **ρ-zCDP** under the configured neighbouring relation (add/remove by default, as AIM;
//! replace-one also offered). Every round's measurement of one table has
//! `Δ₂² = 1` (add/remove) or `2` (replace-one)
//! ([`crate::sensitivity::single_marginal_count_sensitivity`]), so it is `ρ_measure`-zCDP
//! (Bun–Steinke 2016 Prop. 1.6; Canonne–Kamath–Steinke 2020 Thm 14 for the discrete
//! Gaussian) — a coarsened table's too, since a record moves one of its cells as it moves one
//! of the table's, and its groups are a function of the noisy 1-way tables; so is each direct
//! measurement of a cheap workload table, at `βρ/k`, whose
//! choice depends only on public inputs and the noisy 1-way total (post-processing). Every
//! selection is the exponential mechanism proper (exact sampling,
//! `dp_core::ExponentialMechanism`) with score sensitivity `max_r w_r · Δ₁(table)`
//! ([`crate::sensitivity::marginal_fit_error_sensitivity`]; `T̂·p̂_r` is public), which is
//! ε-bounded-range and so `ε²/8`-zCDP (Cesar–Rogers 2021 Lemma 3.2). The per-round budgets
//! are chosen adaptively from the public history; [`crate::engine::ZcdpFilter`] refuses any round
//! whose charge would take the total above ρ, before the round's noise is drawn, which makes
//! the whole run ρ-zCDP (Rényi filter, [`crate::engine`] module docs). Selection and
//! measurement are the engine's [`crate::engine::select`] and [`crate::engine::measure`], and
//! the step audit's steps come from its builder ([`crate::engine::StepSource`]). Under add/remove `n` is never
//! used: the total `T̂` is estimated from the noisy tables measured so far (post-processing;
//! [`AdaptiveProjectionParams::pool_total`]), and an empty dataset is released like any other. Under replace-one `n` is public.

pub mod beside;
mod check;
mod coarse;
mod direct;
pub mod estimator;
pub mod round;
mod schedule;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use dp_core::{Neighbouring, PrivacyLoss, StopRequest, check_stop};
use dp_queries::{Dataset, Domain, GraphicalModelSettings, Marginal, MarginalWorkload};
use rand::CryptoRng;
use rayon::prelude::*;

use crate::engine::{Measurement, ZcdpFilter, exact_counts, measure, select};
use crate::{
    Diagnostics, GaussianParams, Mechanism, MechanismError, PrivacyCertificate, Release, Result,
};
use estimator::{
    GraphicalModelEstimator, IndependentEstimator, MarginalEstimator, MeasuredMarginal,
};
use round::{RoundCalibration, RoundScore};
pub use schedule::{
    LowBudgetSchedule, NoiseSchedule, ScheduledMeasurement, ScheduledPhase, ScheduledRound,
};

/// Which estimate the rounds update ([`estimator`]).
#[derive(Clone, Debug, PartialEq)]
pub enum EstimatorChoice {
    /// The graphical model (maximum-entropy projection onto the marginal polytope,
    /// [`estimator::GraphicalModelEstimator`]) with these mirror-descent steps per round and
    /// for the final fit. The default.
    GraphicalModel {
        /// Steps per round (warm started).
        round_iterations: usize,
        /// Steps of the final fit (more when the release reads only measured tables:
        /// [`AdaptiveProjectionParams::final_chi_square_gain`]).
        final_iterations: usize,
    },
    /// The product of the measured 1-way marginals (a baseline; ignores larger tables).
    Independent,
}

/// One round of a release, as reported to a progress callback (everything in it is public:
/// a function of the noisy outputs and the parameters).
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveRound {
    /// 1-based round (the 1-way initialisation is round 0).
    pub round: usize,
    /// The attributes of the table measured.
    pub selected: Vec<usize>,
    /// σ² of its noise.
    pub sigma2: f64,
    /// ε of the selection (0 in round 0).
    pub select_epsilon: f64,
    /// ρ of the measurement (`Δ₂²/(2σ²)` is at most this).
    pub measure_rho: f64,
    /// ρ charged for the selection (`ε²/8`, 0 in round 0).
    pub select_rho: f64,
    /// ρ spent after the round.
    pub rho_spent: f64,
    /// Whether the round annealed (the next round's budget is 4×).
    pub annealed: bool,
    /// Whether the round measured the table's coarsening (`adaptive/coarse.rs`), not the
    /// table.
    pub coarsened: bool,
}

/// A per-round progress callback.
pub type RoundCallback = Arc<dyn Fn(&AdaptiveRound) + Send + Sync>;

/// Parameters of [`AdaptiveProjection`] (validated by [`Self::check`]).
#[derive(Clone)]
pub struct AdaptiveProjectionParams {
    /// ρ, or (ε, δ) converted to the largest ρ within it. Pure ε is refused (Gaussian noise).
    pub budget: PrivacyLoss,
    /// Neighbouring relation; default add/remove.
    pub neighbouring: Neighbouring,
    /// `T = rounds_per_attribute · d` sets the initial per-round budget. Default 16 (AIM).
    pub rounds_per_attribute: usize,
    /// `T = r_low · d`, `r_low = min(this, rounds_per_attribute)`, when the budget is
    /// **low** for the table and the workload: when, at the noisy total of the first 1-way
    /// table measured (the one of fewest cells), at most half of the workload tables would be
    /// cheap ([`Self::direct_noise_l1`]), so that the direct phase would measure none. Then
    /// every other 1-way table and the selection rounds get the larger per-round budget
    /// `αρ/T`, `(1 − α)ρ/T`. Decided once, from public inputs and that noisy total
    /// (post-processing); only with the direct phase on (`direct_share > 0`), and only when
    /// that opening (the first 1-way table at `α/(r·d)`, the others at `α/(r_low·d)`, then up
    /// to `max(β, γ)`) leaves budget for the rounds. Setting `rounds_per_attribute` alone
    /// keeps this rule (the CLI's `--rounds` sets both). Default 12:
    /// over the bundled tables, where the rule fires it lowered avgL1 by 1–4 % (adult all2
    /// and W64, titanic all-2way at ε ≤ 1, 60 seeds each; adult W64 at ε = 2 and 3, 6 seeds),
    /// where it does not fire it leaves the run as it was, and it costs 2.4 % on one row, the
    /// wide stand-in at ε = 1 (24 seeds; docs/mechanisms/adaptive.md, "A low budget: T = 12d").
    pub low_budget_rounds_per_attribute: usize,
    /// Share α of each round's budget spent on the measurement. Default 0.9 (AIM).
    pub measurement_share: f64,
    /// Model-size cap (cells of the estimate's model) reached when the budget is spent.
    /// Default 10⁶.
    pub max_model_cells: f64,
    /// Largest table an exact out-of-clique marginal of the model may build
    /// (`GraphicalModelSettings::max_elimination_cells`); default 10⁷.
    pub max_elimination_cells: f64,
    /// Every `max_error_every`-th selection round ranks candidates by their largest cell
    /// error ([`round::max_error_score`]) instead of AIM's ℓ1 fit error; 0 never does
    /// (AIM's rule). Default 2.
    pub max_error_every: usize,
    /// Max-error rounds are made only when a measurement at the first selection round's σ
    /// resolves a cell error of this share of the noisy total on at least half of the
    /// workload's tables of two or more attributes, `σ√(2 ln 2n_t)/T̂ ≤ κ_max` (`n_t` a
    /// table's cells; [`round::max_error_resolves`]); otherwise every round is an ℓ1 (AIM)
    /// round. Decided once, from public inputs and the noisy total. `f64::INFINITY` always
    /// makes them (the rule before issue #24's across-table check). Default 0.05
    /// (docs/mechanisms/adaptive.md, "Max-error rounds").
    pub max_error_resolution: f64,
    /// Whether a workload table that cannot join the model (its clique would take the model
    /// beyond the size cap) may still be selected and measured **beside** it, its release
    /// then the measurement shrunk toward the model's marginal ([`beside`]); `false` is
    /// AIM's rule (such tables are not candidates). Default `true` (since 2026-11-27): over
    /// three seeds on every bundled table it left avgL1 level or lower on every row (−8 % on
    /// the wide temporal-match2 stand-in at ε = 30, which it takes from behind the Gaussian
    /// baseline to ahead of it; −1 to −1.4 % on adult all2 and temporal-match2 all-2way at
    /// ε = 1), at a higher largest error on adult W64 at ε = 1 (docs/mechanisms/adaptive.md,
    /// "Tables beside the model").
    pub measure_beside_model: bool,
    /// With [`Self::measure_beside_model`], whether a **max-error** round may also select
    /// the coarsened twin (`adaptive/coarse.rs`) of a workload table the model cannot take
    /// even at the full cap, and measure it beside the model: the measurement never enters
    /// the model; at release it joins the table's own measurements, whose cells alone in
    /// their coarsened cell take it where they depart from the model by more than the
    /// universal bound (`adaptive/check.rs`). Its score in later rounds is computed against
    /// that release, so a table whose large cells it has repaired is not chosen again for
    /// them. Without it the max-error rounds cannot reach such a table: on adult W64 at
    /// ε = 1 the largest error (a cell holding 32 % of the records, in a table of three
    /// attributes the junction tree cannot take) stayed the model's while 7 of the 14
    /// max-error rounds measured tables of a twentieth of its score. Default `true` (since
    /// 2026-11-29): over five seeds it cut that row's largest error by 31 % (0.0156 →
    /// 0.0108) at +2.3 % avgL1 (within the seeds' spread), and temporal-match2's at ε = 1 by
    /// 8–10 %, at a cost of +1.5 % avgL1 on adult all2 and +1.6 % on the wide
    /// temporal-match2 stand-in at ε = 1 (docs/mechanisms/adaptive.md, "Coarsened tables
    /// beside the model").
    pub max_error_beside: bool,
    /// Whether a table measured apart from the model (beside it, or checked) has the
    /// lower-order residuals of its departure from the model — the parts that lie in its
    /// sub-tables, in ResidualPlanner's residual basis (Xiao, He, Zhang, Kifer, NeurIPS 2023,
    /// §4) — combined by inverse variance with the model's measurements of those sub-tables
    /// before the strata shrinkage
    /// (`adaptive/beside.rs`, "The lower-order residuals first"; ReM's least-squares
    /// reconstruction from residuals, Mullins, McKenna et al. 2024). The model has measured
    /// every 1-way table and often the table's other sub-tables, each more precisely than the
    /// table's own measurement implies them, so only the top interaction keeps the
    /// measurement's full noise. Post-processing. Default `true` (since 2026-11-30): acs all
    /// 2-way gains 4–10 % in avgL1 and 15–35 % in max error, temporal-match2 all 2-way 1–4 %,
    /// no row measured loses (docs/mechanisms/adaptive.md, "The lower-order residuals first").
    pub residual_release: bool,
    /// Share `β` of ρ that would measure *every* workload table (of two or more attributes)
    /// directly at `βρ/k` each; only the **cheap** ones are measured (and charged), after the
    /// 1-ways and before any selection round (`adaptive/direct.rs`). 0 turns the phase off
    /// (AIM's rule). Must lie in `[0, 1)`.
    pub direct_share: f64,
    /// When the direct phase runs, whether the workload tables that are not cheap but whose
    /// clique the model cannot take even at the full [`Self::max_model_cells`] (after the
    /// cheap tables joined it) are measured directly too, at the same `βρ/k`, beside the
    /// model. Under AIM's rule no round can measure such a table (its rounds admit a clique
    /// only within the cap), so without this only a check at `γρ/k` does; with
    /// [`Self::measure_beside_model`] (the default) an ℓ1 round may measure it beside the
    /// model. Default `false`: measured before that default, over
    /// three seeds it gained 2–4 % on the wide stand-in at ε = 30 and 100 but lost 2.5 % on
    /// temporal-match2 random-3way at ε = 1 (docs/mechanisms/adaptive.md, "Tables the model
    /// cannot take"); not yet a default.
    pub direct_unjoinable: bool,
    /// Whether the measured cheap tables share their pool (`m·βρ/k` for `m` of them) in
    /// proportion to `c^{2/3}`, `c` a table's effective cells under the 1-way model — the
    /// split that minimises the phase's expected ℓ1 noise (`adaptive/direct.rs`, "The
    /// split"), each above a floor that keeps its largest noise within the equal split's —
    /// instead of equally. Default `true`: over 3 seeds it cut avgL1 by 19 and 11 % on
    /// temporal-match2 all 2-way and random-3way:64 at ε = 10, 9 % on adult all2 at ε = 10,
    /// 0.5–8 % on six more rows, was level on one, and cost nltcs at ε = 0.1 (+6 % over seven
    /// seeds, where its binary tables' effective cells differ); it raises the largest error on
    /// temporal-match2 (docs/mechanisms/adaptive.md, "The direct split").
    pub direct_l1_split: bool,
    /// A workload table is cheap when its direct measurement at share [`Self::direct_share`]
    /// has expected ℓ1 noise, normalised by the noisy total, at most this (`τ`). Finite, ≥ 0.
    pub direct_noise_l1: f64,
    /// Share `γ` of ρ that would check *every* workload table (of two or more attributes)
    /// against one direct measurement at `γρ/k` each; the tables the direct phase did not
    /// measure are checked (and charged), before the selection rounds, when the checks
    /// resolve [`Self::check_resolution`], and at release a cell of a checked table whose
    /// check departs from the model by more than the noise's universal bound takes the
    /// check's value (`adaptive/check.rs`; tables measured directly are corrected alike by
    /// their direct measurement, and every workload table by what the rounds measured of it,
    /// combined with its own measurement by inverse variance, at no cost). 0 turns the checks
    /// off.
    /// Must lie in `[0, 1)`.
    pub check_share: f64,
    /// The checks are made only when the cell error they resolve, as a share of the noisy
    /// total, weighted by the share `m/k` of the workload's tables they must cover, is at most
    /// this (`κ`): `(m/k)·σ_c√(2 ln 2n)/T̂ ≤ κ`, `n` the cells of all the workload's tables
    /// (`adaptive/check.rs`, "When"). Finite, ≥ 0.
    pub check_resolution: f64,
    /// `d` of the release's **limited translation** (Efron and Morris, JASA 66 (1971) 807–815
    /// and 67 (1972) 130–139): every cell of a workload table with measurements of its own
    /// that the correction leaves with the model (or with its shrunk combination) is kept
    /// within `d·σ_i` of the inverse-variance combination of those measurements (`σ_i` its
    /// noise; `adaptive/check.rs`, "Limited translation"), so a cell the model has wrong by
    /// less than the correction's bound `σ_i√(2 ln 2n)` is released at most `d·σ_i + |Z_i|`
    /// from its count instead of up to the bound. Post-processing. Positive (∞ turns it off).
    /// Default 3 (since 2026-11-29): the largest error fell by 5–13 % where it binds (adult
    /// all2 and W64, temporal-match2 at ε = 10; 2–3 seeds), avgL1 −0.3 to +0.9 % (the +0.9 %
    /// on adult W64 at ε = 10); smaller `d` cost up to +23 % (d = 2) on adult W64
    /// (docs/mechanisms/adaptive.md, "Limited translation at release").
    pub limited_translation: f64,
    /// Under add/remove, whether the total `T̂` the fits, the scores and the release are
    /// scaled by is re-estimated after every measurement as the inverse-variance average of
    /// the totals of **every** table measured so far (`true`, the default; Private-PGM's
    /// estimate of the total from all measurements, McKenna–Sheldon–Miklau ICML 2019 §4), or
    /// taken from the 1-way tables alone (`false`, the rule before issue #24's check on
    /// titanic). Post-processing of the noisy measurements either way; the public decisions
    /// made once (cheap tables, checks, max-error rounds) use the total known when they are
    /// made. No effect under replace-one (the public `n`).
    pub pool_total: bool,
    /// When every workload table lies in a measured table (the release then reads no
    /// marginal the model extrapolates), the final fit runs toward convergence: it stops once
    /// its last [`FINAL_FIT_WINDOW`] steps together lowered χ² (count units) by less than
    /// this (`GraphicalModelSettings::min_chi_square_gain`), within the step budget
    /// [`Self::final_cell_steps`]; otherwise it takes exactly `final_iterations` steps. 0
    /// never stops early. Post-processing. Finite, ≥ 0. Default 3
    /// (docs/mechanisms/adaptive.md, "The final fit").
    pub final_chi_square_gain: f64,
    /// In the covered case of [`Self::final_chi_square_gain`], the final fit may take up to
    /// `final_cell_steps / model cells` mirror-descent steps (at most 10 × `final_iterations`,
    /// never fewer than it): a budget of work, cells × steps, fixed by the measured cliques
    /// (public). The default 5·10⁸ is the default final fit (500 steps) on a model at the
    /// default cap (10⁶ cells), so no final fit costs more than that one, and small models
    /// converge. 0 keeps `final_iterations`. Finite, ≥ 0.
    pub final_cell_steps: f64,
    /// When the final model has at most this many cells and the final fit takes its fixed
    /// `final_iterations` (not the covered case of [`Self::final_chi_square_gain`], which runs
    /// toward convergence), the final fit is made twice — from
    /// the last round's model and from the uniform distribution, with the same steps — and
    /// the release keeps the fit of lower χ² (the one nearer the estimate both approximate;
    /// the note says which). Post-processing. Finite, ≥ 0; 0 never does. Default 10⁵ (a
    /// tenth of the default model cap, so the second fit costs at most a tenth of a final
    /// fit at the cap): on the bundled rows the fit from the uniform distribution was the
    /// nearer only on models of at most a few thousand cells, where it lowered avgL1 by
    /// 1–3 % (docs/mechanisms/adaptive.md, "The final fit from two starts").
    pub final_cold_cells: f64,
    /// θ of the coarsened candidates (`adaptive/coarse.rs`): beside each candidate table of
    /// two or more attributes, the rounds may select and measure its coarsening, each
    /// attribute's values with noisy 1-way count below `θ·σ₁` summed into one group (MST's
    /// domain compression, applied to the measurement; the model keeps every value). 0 turns
    /// them off (AIM's candidates). Finite, ≥ 0. Default 3 (MST's θ; since 2026-11-28): with
    /// [`Self::coarse_resolution`] it lowered avgL1 on every row where it fires, over 1–6
    /// seeds (−4.2 % on the wide stand-in at ε = 1, −1.8 to −6.1 % on adult and
    /// temporal-match2 at ε = 1 and 10; docs/mechanisms/adaptive.md, "Coarsened
    /// candidates").
    pub coarse_threshold: f64,
    /// An attribute's rare values are grouped only when the cut is small against the noisy
    /// total, `θ·σ₁ ≤ κ_c·T̂` (`adaptive/coarse.rs`): where it is not (a small table or a
    /// small budget), values below the cut hold much of the data, and a coarsened table would
    /// leave their shares to the 1-way table. Public: θ, σ₁, T̂. Finite, ≥ 0. Default 0.01:
    /// without it, titanic (where θσ₁ is 2–15 % of the total) lost 7.5 % at ε = 1 over 20
    /// seeds and adult at ε = 0.1 (4.5 %) lost too (docs/mechanisms/adaptive.md,
    /// "Coarsened candidates").
    pub coarse_resolution: f64,
    /// The estimator.
    pub estimator: EstimatorChoice,
    /// Called after every round.
    pub progress: Option<RoundCallback>,
    /// Looked at before every measurement round and before the final fit: once the stop is
    /// requested, the run ends with `CoreError::Stopped` (the budget spent by then stays
    /// spent: the run has measured with it). `None`: the run always finishes.
    pub stop: Option<StopRequest>,
}

impl std::fmt::Debug for AdaptiveProjectionParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdaptiveProjectionParams")
            .field("budget", &self.budget)
            .field("neighbouring", &self.neighbouring)
            .field("rounds_per_attribute", &self.rounds_per_attribute)
            .field(
                "low_budget_rounds_per_attribute",
                &self.low_budget_rounds_per_attribute,
            )
            .field("measurement_share", &self.measurement_share)
            .field("max_model_cells", &self.max_model_cells)
            .field("max_elimination_cells", &self.max_elimination_cells)
            .field("max_error_every", &self.max_error_every)
            .field("max_error_resolution", &self.max_error_resolution)
            .field("measure_beside_model", &self.measure_beside_model)
            .field("max_error_beside", &self.max_error_beside)
            .field("residual_release", &self.residual_release)
            .field("direct_share", &self.direct_share)
            .field("direct_noise_l1", &self.direct_noise_l1)
            .field("direct_unjoinable", &self.direct_unjoinable)
            .field("direct_l1_split", &self.direct_l1_split)
            .field("check_share", &self.check_share)
            .field("check_resolution", &self.check_resolution)
            .field("limited_translation", &self.limited_translation)
            .field("pool_total", &self.pool_total)
            .field("final_chi_square_gain", &self.final_chi_square_gain)
            .field("final_cell_steps", &self.final_cell_steps)
            .field("final_cold_cells", &self.final_cold_cells)
            .field("coarse_threshold", &self.coarse_threshold)
            .field("coarse_resolution", &self.coarse_resolution)
            .field("estimator", &self.estimator)
            .finish_non_exhaustive()
    }
}

impl AdaptiveProjectionParams {
    /// Defaults: add/remove, T = 16d (12d at a low budget:
    /// [`Self::low_budget_rounds_per_attribute`]), α = 0.9, 10⁶ model cells, every second selection
    /// round a max-error round, 100 mirror-descent steps per round and 500 for the final fit
    /// (chosen on adult W64 and all2 at ε = 1, three seeds), the cheap workload tables
    /// measured first with β = 0.9, τ = 0.5 (chosen across the bundled tables and three
    /// seeds, issue #24; docs/mechanisms/adaptive.md, "Cheap tables first" and "The direct
    /// share β"), the other workload tables checked with γ = 0.4 (0.1, then 0.2, until
    /// 2026-11-28: "Strata") where the check resolves κ = 0.005 of the total ("Checked
    /// tables"), the final fit run toward convergence within a budget of 5·10⁸
    /// cell-steps when every workload table is measured ("The final fit"), and coarsened
    /// candidates with θ = 3 (MST's) where θσ₁ is at most κ_c = 0.01 of the noisy total
    /// ("Coarsened candidates", since 2026-11-28).
    pub fn new(budget: PrivacyLoss) -> Self {
        AdaptiveProjectionParams {
            budget,
            neighbouring: Neighbouring::AddRemove,
            rounds_per_attribute: 16,
            low_budget_rounds_per_attribute: 12,
            measurement_share: 0.9,
            max_model_cells: 1e6,
            max_elimination_cells: GraphicalModelSettings::default().max_elimination_cells,
            max_error_every: 2,
            max_error_resolution: 0.05,
            measure_beside_model: true,
            max_error_beside: true,
            residual_release: true,
            direct_share: 0.9,
            direct_noise_l1: 0.5,
            direct_unjoinable: false,
            direct_l1_split: true,
            check_share: 0.4,
            check_resolution: 0.005,
            limited_translation: 3.0,
            pool_total: true,
            final_chi_square_gain: 3.0,
            final_cell_steps: 5e8,
            final_cold_cells: 1e5,
            coarse_threshold: 3.0,
            coarse_resolution: 0.01,
            estimator: EstimatorChoice::GraphicalModel {
                round_iterations: 100,
                final_iterations: 500,
            },
            progress: None,
            stop: None,
        }
    }

    /// Set [`Self::coarse_threshold`] (θ; 0 turns the coarsened candidates off).
    pub fn coarse_threshold(mut self, theta: f64) -> Self {
        self.coarse_threshold = theta;
        self
    }

    /// Set [`Self::coarse_resolution`] (κ_c).
    pub fn coarse_resolution(mut self, kappa: f64) -> Self {
        self.coarse_resolution = kappa;
        self
    }

    /// Set the neighbouring relation.
    pub fn neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// Set [`Self::max_error_every`].
    pub fn max_error_every(mut self, k: usize) -> Self {
        self.max_error_every = k;
        self
    }

    /// Set [`Self::max_error_resolution`].
    pub fn max_error_resolution(mut self, kappa: f64) -> Self {
        self.max_error_resolution = kappa;
        self
    }

    /// Set [`Self::measure_beside_model`].
    pub fn measure_beside_model(mut self, on: bool) -> Self {
        self.measure_beside_model = on;
        self
    }

    /// Set [`Self::max_error_beside`].
    pub fn max_error_beside(mut self, on: bool) -> Self {
        self.max_error_beside = on;
        self
    }

    /// Set [`Self::residual_release`].
    pub fn residual_release(mut self, on: bool) -> Self {
        self.residual_release = on;
        self
    }

    /// Set [`Self::direct_share`] (β) and [`Self::direct_noise_l1`] (τ).
    pub fn direct(mut self, share: f64, max_noise_l1: f64) -> Self {
        self.direct_share = share;
        self.direct_noise_l1 = max_noise_l1;
        self
    }

    /// Set [`Self::direct_l1_split`].
    pub fn direct_l1_split(mut self, on: bool) -> Self {
        self.direct_l1_split = on;
        self
    }

    /// Set [`Self::direct_unjoinable`].
    pub fn direct_unjoinable(mut self, on: bool) -> Self {
        self.direct_unjoinable = on;
        self
    }

    /// Set [`Self::check_share`] (γ).
    pub fn check_share(mut self, share: f64) -> Self {
        self.check_share = share;
        self
    }

    /// Set [`Self::pool_total`].
    pub fn pool_total(mut self, pooled: bool) -> Self {
        self.pool_total = pooled;
        self
    }

    /// Set [`Self::final_chi_square_gain`].
    pub fn final_chi_square_gain(mut self, gain: f64) -> Self {
        self.final_chi_square_gain = gain;
        self
    }

    /// Set [`Self::final_cold_cells`].
    pub fn final_cold_cells(mut self, cells: f64) -> Self {
        self.final_cold_cells = cells;
        self
    }

    /// Set [`Self::final_cell_steps`].
    pub fn final_cell_steps(mut self, cell_steps: f64) -> Self {
        self.final_cell_steps = cell_steps;
        self
    }

    /// Set [`Self::check_resolution`] (κ).
    pub fn check_resolution(mut self, kappa: f64) -> Self {
        self.check_resolution = kappa;
        self
    }

    /// Set [`Self::limited_translation`] (`d`).
    pub fn limited_translation(mut self, d: f64) -> Self {
        self.limited_translation = d;
        self
    }

    /// Set the estimator.
    pub fn estimator(mut self, estimator: EstimatorChoice) -> Self {
        self.estimator = estimator;
        self
    }

    /// Set the progress callback.
    pub fn progress(mut self, f: RoundCallback) -> Self {
        self.progress = Some(f);
        self
    }

    /// Stop the run at its next round once `stop` is requested ([`Self::stop`]).
    pub fn stop_on(mut self, stop: StopRequest) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Bound the estimate's memory by about `bytes`: the model (≈ 40 bytes per cell during a
    /// fit) gets at most a quarter, the tables of an out-of-clique marginal (≈ 32 bytes per
    /// entry with their index maps) another quarter; the caps only shrink. The rest is left
    /// for the data, the workload's answers and the release. A cap too small for the
    /// measured tables makes the release fail with a clear error, never exceed it.
    pub fn within_memory(mut self, bytes: u64) -> Self {
        let quarter = bytes as f64 / 4.0;
        self.max_model_cells = self.max_model_cells.min((quarter / 40.0).floor().max(1.0));
        self.max_elimination_cells = self
            .max_elimination_cells
            .min((quarter / 32.0).floor().max(1.0));
        self
    }

    /// Validate and derive ρ.
    pub fn check(&self) -> Result<AdaptiveProjection> {
        let g = GaussianParams::new(self.budget)
            .neighbouring(self.neighbouring)
            .check()?;
        let bad = |name: &'static str, value: String, reason: &str| {
            Err(MechanismError::InvalidParameter {
                name,
                value,
                reason: reason.into(),
            })
        };
        if self.rounds_per_attribute == 0 {
            return bad("rounds_per_attribute", "0".into(), "must be at least 1");
        }
        if !(self.measurement_share > 0.0 && self.measurement_share < 1.0) {
            return bad(
                "measurement_share",
                self.measurement_share.to_string(),
                "must lie strictly between 0 and 1",
            );
        }
        if !(self.direct_share >= 0.0 && self.direct_share < 1.0) {
            return bad(
                "direct_share",
                self.direct_share.to_string(),
                "must lie in [0, 1)",
            );
        }
        if !(self.check_share >= 0.0 && self.check_share < 1.0) {
            return bad(
                "check_share",
                self.check_share.to_string(),
                "must lie in [0, 1)",
            );
        }
        // the 1-way tables take α/r of ρ (d tables at αρ/(r·d) each), the direct phase and
        // the checks together at most max(β, γ) (each workload table gets one of the two, at
        // βρ/k or γρ/k): what is left must be positive, or the opening would overrun the
        // budget part-way through a release
        let (alpha, share) = (
            self.measurement_share,
            self.direct_share.max(self.check_share),
        );
        let leaves_rounds = |r: usize| alpha / r as f64 + share < 1.0 - 1e-9;
        if !leaves_rounds(self.rounds_per_attribute) {
            let reason = format!(
                "the opening would take {} of ρ and leave nothing for the rounds: the 1-way \
                 tables take measurement_share / rounds_per_attribute = {}, the direct \
                 measurements and checks up to max(direct_share, check_share) = {share}",
                alpha / self.rounds_per_attribute as f64 + share,
                alpha / self.rounds_per_attribute as f64,
            );
            // blame what the user changed: the rounds if the shares fit with many rounds
            return if share + 1e-9 < 1.0 - alpha / 16.0 {
                let least = (alpha / (1.0 - 1e-9 - share)).floor() as usize + 1;
                bad(
                    "rounds_per_attribute",
                    self.rounds_per_attribute.to_string(),
                    &format!("must be at least {least} with these shares ({reason})"),
                )
            } else if self.direct_share >= self.check_share {
                bad("direct_share", self.direct_share.to_string(), &reason)
            } else {
                bad("check_share", self.check_share.to_string(), &reason)
            };
        }
        // a low budget that would leave no budget for the rounds is not used (`opening`, which
        // knows d); only 0 is refused here
        if self.low_budget_rounds_per_attribute == 0 {
            return bad(
                "low_budget_rounds_per_attribute",
                "0".into(),
                "must be at least 1",
            );
        }
        if self.max_error_resolution.is_nan() || self.max_error_resolution < 0.0 {
            return bad(
                "max_error_resolution",
                self.max_error_resolution.to_string(),
                "must be at least 0 (infinity lets every candidate into the max-error rounds)",
            );
        }
        if self.limited_translation.is_nan() || self.limited_translation <= 0.0 {
            return bad(
                "limited_translation",
                self.limited_translation.to_string(),
                "must be positive (infinity turns the limit off)",
            );
        }
        for (name, v) in [
            ("final_cell_steps", self.final_cell_steps),
            ("final_cold_cells", self.final_cold_cells),
            ("final_chi_square_gain", self.final_chi_square_gain),
            ("check_resolution", self.check_resolution),
            ("direct_noise_l1", self.direct_noise_l1),
            ("coarse_threshold", self.coarse_threshold),
            ("coarse_resolution", self.coarse_resolution),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(name, v.to_string(), "must be finite and at least 0");
            }
        }
        if !(self.max_model_cells.is_finite() && self.max_model_cells >= 1.0) {
            return bad(
                "max_model_cells",
                self.max_model_cells.to_string(),
                "must be finite and at least 1",
            );
        }
        if !(self.max_elimination_cells.is_finite()
            && (1.0..=2f64.powi(31)).contains(&self.max_elimination_cells))
        {
            return bad(
                "max_elimination_cells",
                self.max_elimination_cells.to_string(),
                "must be in [1, 2^31]",
            );
        }
        let delta = match self.budget {
            PrivacyLoss::Approx { delta, .. } => Some(delta),
            _ => None,
        };
        Ok(AdaptiveProjection {
            rho: g.rho(),
            delta,
            params: self.clone(),
        })
    }
}

/// The adaptive projection mechanism (module docs): ρ-zCDP under the configured relation.
#[derive(Clone, Debug)]
pub struct AdaptiveProjection {
    rho: f64,
    delta: Option<f64>,
    params: AdaptiveProjectionParams,
}

/// The window, in mirror-descent steps, over which the final fit's χ² gain is measured
/// ([`AdaptiveProjectionParams::final_chi_square_gain`]).
pub const FINAL_FIT_WINDOW: usize = 100;

/// The share of `max_model_cells` the directly measured cheap tables may grow the model to
/// (the rest are measured beside it): the fit's cost per step grows with the number of
/// measurements times their host cliques' sizes.
const DIRECT_MODEL_SHARE: f64 = 0.1;

/// A candidate table: attributes (ascending), weight, the smallest workload table
/// containing it (its estimate is marginalised from that table's), and for a coarsened
/// candidate its groups (`coarse.rs`).
#[derive(Clone, Debug)]
struct Candidate {
    attrs: Vec<usize>,
    weight: f64,
    parent: Vec<usize>,
    groups: Option<dp_queries::CellGroups>,
}

impl Candidate {
    /// A table's values as this candidate measures them: the table itself, or its
    /// coarsening.
    fn view<T: Copy + Default + std::ops::AddAssign>(&self, table: Vec<T>) -> Result<Vec<T>> {
        match &self.groups {
            Some(g) => Ok(g.coarsen(&table)?),
            None => Ok(table),
        }
    }

    /// The candidate's name in traces and audits: its attributes, and "coarsened" for a
    /// coarsened one.
    fn name(&self) -> String {
        match self.groups {
            Some(_) => format!("{:?} coarsened", self.attrs),
            None => format!("{:?}", self.attrs),
        }
    }
}

/// Each workload table's attributes, ascending (its candidate's), in workload order.
fn sorted_tables(workload: &MarginalWorkload) -> Vec<Vec<usize>> {
    workload
        .marginals()
        .iter()
        .map(|m| {
            let mut a = m.attrs().to_vec();
            a.sort_unstable();
            a
        })
        .collect()
}

/// The downward closure of the workload with AIM's weights, 1-ways first.
fn candidates(workload: &MarginalWorkload) -> Vec<Candidate> {
    let tables = sorted_tables(workload);
    let cells = |a: &[usize]| -> f64 {
        a.iter()
            .map(|&i| workload.domain().size(i) as f64)
            .product()
    };
    let mut map: HashMap<Vec<usize>, Vec<usize>> = HashMap::new();
    for t in &tables {
        let k = t.len();
        for mask in 1u32..(1u32 << k) {
            let sub: Vec<usize> = (0..k)
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| t[i])
                .collect();
            let e = map.entry(sub).or_insert_with(|| t.clone());
            if cells(t) < cells(e) {
                *e = t.clone();
            }
        }
    }
    let mut out: Vec<Candidate> = map
        .into_iter()
        .map(|(attrs, parent)| {
            let weight = tables
                .iter()
                .map(|t| attrs.iter().filter(|a| t.contains(a)).count() as f64)
                .sum();
            Candidate {
                attrs,
                weight,
                parent,
                groups: None,
            }
        })
        .collect();
    out.sort_by(|a, b| (a.attrs.len(), &a.attrs).cmp(&(b.attrs.len(), &b.attrs)));
    out
}

/// Marginalise a row-major table over `from` (ascending attrs with `sizes`) onto the
/// ascending subset `to`.
fn marginalise<T: Copy + Default + std::ops::AddAssign>(
    from: &[usize],
    sizes: &[usize],
    values: &[T],
    to: &[usize],
) -> Vec<T> {
    if from == to {
        return values.to_vec();
    }
    let keep: Vec<bool> = from.iter().map(|a| to.contains(a)).collect();
    let mut out_strides = vec![0usize; from.len()];
    let mut acc = 1usize;
    for i in (0..from.len()).rev() {
        if keep[i] {
            out_strides[i] = acc;
            acc *= sizes[i];
        }
    }
    let mut out = vec![T::default(); acc];
    let mut idx = vec![0usize; from.len()];
    let mut o = 0usize;
    for &v in values {
        out[o] += v;
        for i in (0..from.len()).rev() {
            idx[i] += 1;
            o += out_strides[i];
            if idx[i] < sizes[i] {
                break;
            }
            o -= out_strides[i] * sizes[i];
            idx[i] = 0;
        }
    }
    out
}

/// Reorder a row-major table over the ascending `sorted` attrs into the attribute order of
/// `table`.
fn reorder(sorted: &[usize], values: &[f64], table: &Marginal) -> Vec<f64> {
    if sorted == table.attrs() {
        return values.to_vec();
    }
    sorted_index(sorted, table)
        .into_iter()
        .map(|i| values[i])
        .collect()
}

/// For each cell of `table` (row-major in its own attribute order), the index of the same
/// cell in the row-major layout over the ascending `sorted` attrs (the same attributes).
fn sorted_index(sorted: &[usize], table: &Marginal) -> Vec<usize> {
    let sizes: Vec<usize> = table.sizes().iter().map(|&s| s as usize).collect();
    // stride in the sorted layout of each table position
    let mut sorted_strides = vec![0usize; sorted.len()];
    let mut acc = 1usize;
    for i in (0..sorted.len()).rev() {
        sorted_strides[i] = acc;
        let pos = table
            .attrs()
            .iter()
            .position(|&a| a == sorted[i])
            .unwrap_or(0);
        acc *= sizes[pos];
    }
    let map: Vec<usize> = table
        .attrs()
        .iter()
        .map(|a| sorted_strides[sorted.iter().position(|s| s == a).unwrap_or(0)])
        .collect();
    let mut out = vec![0usize; acc];
    let mut idx = vec![0usize; sizes.len()];
    let mut src = 0usize;
    for o in out.iter_mut() {
        *o = src;
        for i in (0..sizes.len()).rev() {
            idx[i] += 1;
            src += map[i];
            if idx[i] < sizes[i] {
                break;
            }
            src -= map[i] * sizes[i];
            idx[i] = 0;
        }
    }
    out
}

/// The exact counts of every candidate (ascending attrs, row-major) from the exact counts of
/// the workload's tables, in workload order as [`dp_queries::Workload::count_all`] gives
/// them: every candidate is a marginal of its parent, a workload table, so the workload's
/// counts are all the mechanism reads of the data (its counting plan; issue #25).
///
/// Errors: a count vector of the wrong length, or tables whose totals differ (counts that no
/// dataset has).
fn candidate_counts(
    cands: &[Candidate],
    workload: &MarginalWorkload,
    counts: &[u64],
) -> Result<Vec<Vec<u64>>> {
    crate::counts::check_length(counts.len(), workload)?;
    let mut parents: HashMap<Vec<usize>, Vec<u64>> = HashMap::new();
    let mut total: Option<u64> = None;
    for (j, m) in workload.marginals().iter().enumerate() {
        let mut sorted = m.attrs().to_vec();
        sorted.sort_unstable();
        let table = &counts[workload.offset(j)..workload.offset(j + 1)];
        let mut out = vec![0u64; table.len()];
        for (&c, i) in table.iter().zip(sorted_index(&sorted, m)) {
            out[i] = c;
        }
        let sum: u64 = out.iter().sum();
        if *total.get_or_insert(sum) != sum {
            return Err(MechanismError::Data {
                reason: format!(
                    "workload table {j} counts {sum} records and table 0 {}: the counts \
                     are not the tables of one dataset",
                    total.unwrap_or(0)
                ),
            });
        }
        parents.entry(sorted).or_insert(out);
    }
    let domain = workload.domain();
    cands
        .par_iter()
        .map(|c| {
            let parent = parents
                .get(&c.parent)
                .ok_or_else(|| MechanismError::Numerical {
                    what: "internal: a candidate's parent is not a workload table".into(),
                })?;
            let sizes: Vec<usize> = c.parent.iter().map(|&i| domain.size(i) as usize).collect();
            Ok(marginalise(&c.parent, &sizes, parent, &c.attrs))
        })
        .collect()
}

/// The public total `T̂`: `n` under replace-one; under add/remove the inverse-variance
/// average of the totals of the noisy tables it was given (a table of `s` cells with noise
/// variance σ² per cell has a total of variance `s·σ²`), at least 1 — post-processing of the
/// measurements ([`AdaptiveProjectionParams::pool_total`]).
#[derive(Clone, Debug)]
struct PublicTotal {
    public_n: Option<f64>,
    weighted_sum: f64,
    weight: f64,
}

impl PublicTotal {
    fn new(neighbouring: Neighbouring, n: usize) -> Self {
        PublicTotal {
            public_n: (neighbouring == Neighbouring::ReplaceOne).then_some(n as f64),
            weighted_sum: 0.0,
            weight: 0.0,
        }
    }

    /// Adds one noisy table: the sum of its `cells` noisy counts, each of noise variance
    /// `sigma2`.
    fn add(&mut self, sum: f64, cells: usize, sigma2: f64) {
        let w = 1.0 / (cells as f64 * sigma2);
        if w.is_finite() && w > 0.0 {
            self.weighted_sum += w * sum;
            self.weight += w;
        }
    }

    fn add_measured(&mut self, m: &MeasuredMarginal) {
        self.add(m.values.iter().sum(), m.values.len(), m.sigma2);
    }

    fn add_counts(&mut self, y: &[i64], sigma2: f64) {
        self.add(y.iter().map(|&v| v as f64).sum(), y.len(), sigma2);
    }

    fn value(&self) -> f64 {
        match self.public_n {
            Some(n) => n,
            None if self.weight > 0.0 => (self.weighted_sum / self.weight).max(1.0),
            None => 1.0,
        }
    }
}

/// A workload table's own measurements as the release reads them (issue #24; "The rounds'
/// measurements at release" and "Coarsened tables beside the model" in
/// docs/mechanisms/adaptive.md): its measurements beside the model, its direct measurement
/// or check, every round's measurement of it (or of its coarsening) into the model, and
/// the max-error rounds' coarsened measurements of it kept beside the model. Keyed by the
/// candidate index of the table itself.
struct OwnMeasurements<'a> {
    beside: &'a HashMap<usize, beside::BesideTable>,
    own: &'a HashMap<usize, (Vec<i64>, f64)>,
    checked: &'a HashSet<usize>,
    /// The rounds' measurements into the model.
    rounds: &'a [MeasuredMarginal],
    /// The coarsened measurements kept beside the model.
    beside_coarse: &'a [MeasuredMarginal],
    total: f64,
    /// Every workload table's cells (the union bound of [`check::corrected`]).
    workload_cells: usize,
    /// [`AdaptiveProjectionParams::limited_translation`] (∞: none).
    limited_translation: f64,
    /// [`AdaptiveProjectionParams::residual_release`]: every measurement the model was
    /// fitted to (its variances say how well it knows a table's sub-tables), and the
    /// domain's sizes; `None` off.
    residuals: Option<(&'a [MeasuredMarginal], &'a [u32])>,
}

impl OwnMeasurements<'_> {
    /// The release of a table measured apart from the model: `mean` (counts, noise
    /// `variance` per cell), its lower-order residuals first combined with the model's when
    /// [`AdaptiveProjectionParams::residual_release`] is on, shrunk toward the model's
    /// marginal `v` within strata (`beside.rs`).
    fn shrunk(&self, attrs: &[usize], v: &[f64], mean: &[f64], variance: f64) -> Vec<f64> {
        let Some((model, sizes)) = self.residuals else {
            return beside::shrunk_distribution(v, mean, variance, self.total);
        };
        let dims: Vec<usize> = attrs.iter().map(|&i| sizes[i] as usize).collect();
        let parts = beside::residual_parts(attrs, sizes, variance, model);
        let (y, variance) = beside::residual_combination(mean, variance, &dims, &parts);
        beside::shrunk_distribution(v, &y, variance, self.total)
    }

    /// The release of the workload table on `attrs` (ascending; candidate `ci`) from the
    /// model's marginal `v`: shrunk toward its measurements beside the model or its check
    /// (`beside.rs`), then each cell corrected by the inverse-variance combination of all
    /// its own measurements where they depart from it beyond the bound (`check.rs`).
    /// Returns the distribution and, when the table has measurements of its own, how many
    /// cells took them. Post-processing of released measurements only.
    fn release(
        &self,
        ci: Option<usize>,
        attrs: &[usize],
        mut v: Vec<f64>,
    ) -> (Vec<f64>, Option<check::Correction>) {
        let mut evidence = check::CellEvidence::new(v.len());
        let is_checked = ci.is_some_and(|i| self.checked.contains(&i));
        let b = ci.and_then(|i| self.beside.get(&i));
        if let Some(b) = b {
            v = match b.mean() {
                Some((mean, variance)) => self.shrunk(attrs, &v, &mean, variance),
                None => b.estimate(&v, self.total),
            };
            b.add_to(&mut evidence);
        }
        if let Some((y, sigma)) = ci.and_then(|i| self.own.get(&i)) {
            let mean: Vec<f64> = y.iter().map(|&c| c as f64).collect();
            // a check never entered the model: like a table beside it, its measurement
            // is first shrunk toward the model within strata (beside.rs; a table the
            // model was fitted to is not: the shrinkage would pull it toward itself)
            if is_checked {
                v = self.shrunk(attrs, &v, &mean, sigma * sigma);
            }
            // a direct measurement beside the model is already among `b`'s
            if b.is_none() || is_checked {
                evidence.add(&mean, sigma * sigma);
            }
        }
        for r in self
            .rounds
            .iter()
            .chain(self.beside_coarse)
            .filter(|r| r.attrs == attrs)
        {
            match &r.groups {
                None => evidence.add(&r.values, r.sigma2),
                Some(g) => evidence.add_coarsened(&r.values, r.sigma2, &g.cell_map()),
            }
        }
        if evidence.is_empty() {
            return (v, None);
        }
        let (y, sd) = evidence.combined();
        let (c, done) = check::corrected(
            &v,
            &y,
            &sd,
            self.total,
            self.workload_cells,
            self.limited_translation,
        );
        (c, Some(done))
    }
}

/// The public state before a selection round (for the step audit): the allowed candidates
/// (indices into the candidate list), the estimate on each, the public total and the
/// round's calibration.
struct RoundView<'a> {
    round: usize,
    allowed: &'a [usize],
    estimates: &'a [Vec<f64>],
    total: f64,
    calibration: &'a RoundCalibration,
}

/// What a run produced besides the release: the per-round trace.
#[derive(Clone, Debug)]
pub struct AdaptiveRun {
    /// The release.
    pub release: Release,
    /// Every round (round 0: the 1-ways, reported with the last one's calibration).
    pub rounds: Vec<AdaptiveRound>,
    /// Every 1-way table's measurement, in order (round 0, no selection): the first at
    /// `αρ/(r·d)`; the others at `αρ/(r_low·d)` when the budget is low
    /// ([`AdaptiveProjectionParams::low_budget_rounds_per_attribute`]).
    pub one_ways: Vec<AdaptiveRound>,
    /// Whether the budget was low ([`AdaptiveProjectionParams::low_budget_rounds_per_attribute`]):
    /// the 1-way tables after the first and the rounds at `T = r_low·d`.
    pub low_budget: bool,
    /// The cheap workload tables measured directly after the 1-ways, in order (round 0,
    /// no selection; `adaptive/direct.rs`).
    pub direct: Vec<AdaptiveRound>,
    /// The workload tables checked by one measurement beside the model, in order (round 0,
    /// no selection; `adaptive/check.rs`).
    pub checks: Vec<AdaptiveRound>,
    /// The run's candidates: the workload's downward closure, then the coarsened ones
    /// (`coarse.rs`) the rounds' indices also point to.
    candidates: Vec<Candidate>,
}

impl AdaptiveProjection {
    /// ρ of the guarantee.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    fn new_estimator(&self, domain: &Domain) -> Box<dyn MarginalEstimator> {
        match self.params.estimator {
            EstimatorChoice::GraphicalModel {
                round_iterations,
                final_iterations,
            } => Box::new(
                GraphicalModelEstimator::new(
                    domain,
                    round_iterations,
                    final_iterations,
                    self.params.max_model_cells,
                    self.params.max_elimination_cells,
                )
                .final_stop(FINAL_FIT_WINDOW, self.params.final_chi_square_gain)
                .final_cell_steps(self.params.final_cell_steps)
                .final_cold_start(self.params.final_cold_cells),
            ),
            EstimatorChoice::Independent => Box::new(IndependentEstimator::new(domain)),
        }
    }

    /// Run the mechanism and return the release with its round trace.
    pub fn run(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<AdaptiveRun> {
        self.run_observed(data, workload, rng, &mut |_| {})
    }

    /// [`Self::run`] from the exact counts of the workload's tables (workload order, as
    /// [`dp_queries::Workload::count_all`] gives them) of a dataset of `n` records: the
    /// mechanism reads the data only through these counts (every candidate is a marginal of
    /// a workload table), so this is the same release, draw for draw, as [`Self::run`] on
    /// that dataset — from a stream, an engine, or any other source of exact counts. `n` is
    /// private under add/remove neighbours and is then not used (the total is estimated
    /// from the noisy 1-way tables); under replace-one it is the public total.
    ///
    /// Errors: as [`Self::run`], and counts of the wrong length or whose tables do not all
    /// count the same number of records.
    pub fn run_from_counts(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<AdaptiveRun> {
        self.run_counted(counts, n, workload, rng, &mut |_| {})
    }

    /// [`Self::run`], showing `observe` the public state of every selection round before
    /// its selection (for the step audit).
    fn run_observed(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
        observe: &mut dyn FnMut(&RoundView<'_>),
    ) -> Result<AdaptiveRun> {
        crate::perturbation::check_data_under(data, workload, self.params.neighbouring)?;
        let counts = workload.count_all(data)?;
        self.run_counted(&counts, data.n(), workload, rng, observe)
    }

    /// [`Self::run_from_counts`] with an observer (see [`Self::run_observed`]).
    fn run_counted(
        &self,
        counts: &[u64],
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
        observe: &mut dyn FnMut(&RoundView<'_>),
    ) -> Result<AdaptiveRun> {
        let p = &self.params;
        let rel = p.neighbouring;
        if rel == Neighbouring::ReplaceOne && n == 0 {
            // n is public under replace-one, and the answers are divided by it
            return Err(MechanismError::Data {
                reason: "the dataset has no records".into(),
            });
        }
        let domain = workload.domain();
        let mut cands = candidates(workload);
        let d = cands.iter().filter(|c| c.attrs.len() == 1).count();
        let mut counts = candidate_counts(&cands, workload, counts)?;
        let sizes_of =
            |a: &[usize]| -> Vec<usize> { a.iter().map(|&i| domain.size(i) as usize).collect() };
        let cells_of = |a: &[usize]| -> usize { sizes_of(a).iter().product() };
        let alpha = p.measurement_share;
        let opening = self.opening(&cands)?;
        let (mut rho_m, mut rho_s) = (opening.usual.rho_measure, opening.usual.rho_select);
        let mut filter = ZcdpFilter::new(self.rho, rel)?;
        let mut measurements: Vec<MeasuredMarginal> = Vec::new();
        // workload tables measured beside the model, by candidate index
        let mut beside: HashMap<usize, beside::BesideTable> = HashMap::new();
        let mut trace = Vec::new();
        let report = |r: &AdaptiveRound, trace: &mut Vec<AdaptiveRound>| {
            if let Some(f) = &p.progress {
                f(r);
            }
            trace.push(r.clone());
        };
        // 1. the 1-ways
        let fit_score = opening.fit_score;
        let (cal1, one_way) = (opening.usual.one_way, opening.usual.measurement);
        // the smallest 1-way table first: with the direct phase on, its noisy total decides
        // whether the budget is low (`low_budget_rounds_per_attribute`), and so the budget of
        // every other 1-way table and of the rounds
        let mut ones: Vec<usize> = (0..cands.len())
            .filter(|&i| cands[i].attrs.len() == 1)
            .collect();
        if opening.low_budget.is_some() {
            ones.sort_by_key(|&i| (cells_of(&cands[i].attrs), i));
        }
        let mut pooled = PublicTotal::new(rel, n);
        let mut low_budget = false;
        let mut one_way_trace = Vec::with_capacity(ones.len());
        for (pos, &i) in ones.iter().enumerate() {
            let (cal, plan) = match &opening.low_budget {
                Some(low) if low_budget => (&low.one_way, &low.measurement),
                _ => (&cal1, &one_way),
            };
            filter.spend(&format!("1-way {:?}", cands[i].attrs), cal.measure_rho)?;
            let y = measure(&exact_counts(&counts[i])?, &plan.noise, rng)?;
            let m = MeasuredMarginal::from_counts(cands[i].attrs.clone(), &y, cal.sigma2);
            pooled.add_measured(&m);
            measurements.push(m);
            one_way_trace.push(AdaptiveRound {
                round: 0,
                selected: cands[i].attrs.clone(),
                sigma2: cal.sigma2,
                select_epsilon: 0.0,
                measure_rho: cal.measure_rho,
                select_rho: 0.0,
                rho_spent: filter.spent(),
                annealed: false,
                coarsened: false,
            });
            if pos == 0
                && let (Some(low), Some(dir)) = (&opening.low_budget, &opening.direct)
            {
                let cheap = direct::cheap_tables(
                    &cands,
                    |a: &[usize]| cells_of(a) as f64,
                    dir.calibration.sigma(),
                    pooled.value(),
                    p.direct_noise_l1,
                );
                low_budget = direct::measured_directly(cheap, dir.tables).is_empty();
                if low_budget {
                    (rho_m, rho_s) = (low.rho_measure, low.rho_select);
                }
            }
        }
        let mut total = pooled.value();
        let mut est = self.new_estimator(domain);
        est.fit(&measurements, total)?;
        // round 0: the last 1-way table's calibration (every 1-way table's but the first when
        // the budget is low; each is in `AdaptiveRun::one_ways`)
        let last_one_way = one_way_trace.last();
        report(
            &AdaptiveRound {
                round: 0,
                selected: Vec::new(),
                sigma2: last_one_way.map_or(cal1.sigma2, |r| r.sigma2),
                select_epsilon: 0.0,
                measure_rho: last_one_way.map_or(cal1.measure_rho, |r| r.measure_rho),
                select_rho: 0.0,
                rho_spent: filter.spent(),
                annealed: false,
                coarsened: false,
            },
            &mut trace,
        );
        // every workload table's own measurement (direct or check) and its σ, by candidate
        // index: at release each such table is corrected cell by cell (check.rs)
        let mut own: HashMap<usize, (Vec<i64>, f64)> = HashMap::new();
        // the workload tables checked (1c), by candidate index: their measurements are
        // independent of the model, so the release shrinks them toward it (beside.rs)
        let mut checked: HashSet<usize> = HashSet::new();
        // the cells of all workload tables of two or more attributes: the union bound of the
        // correction's threshold (check.rs)
        let tables = direct::workload_tables(&cands);
        let workload_cells: usize = tables
            .iter()
            .map(|&i| sizes_of(&cands[i].attrs).iter().product::<usize>())
            .sum();
        // 1b. the workload's cheap tables, measured directly (direct.rs)
        let mut direct_trace = Vec::new();
        let mut direct_beside = 0usize;
        let mut direct_cheap = 0usize;
        let mut direct_unjoinable = 0usize;
        if let Some(dir) = &opening.direct {
            let dcal = &dir.calibration;
            let cells = |a: &[usize]| cells_of(a) as f64;
            let cheap = direct::cheap_tables(&cands, cells, dcal.sigma(), total, p.direct_noise_l1);
            direct_cheap = cheap.len();
            let cheap = direct::measured_directly(cheap, dir.tables);
            let n_cheap = cheap.len();
            // when the phase runs, every other workload table follows the cheap ones; it is
            // measured only if the model cannot take its clique even at the full cap (below)
            let mut order = cheap;
            if p.direct_unjoinable && n_cheap > 0 {
                let rest: Vec<usize> = tables
                    .iter()
                    .copied()
                    .filter(|i| !order.contains(i))
                    .collect();
                order.extend(rest);
            }
            // the measured cheap tables' budgets: the pool they would take at βρ/k each,
            // split in proportion to their effective cells^(2/3) under the 1-way model above
            // their floors (direct.rs, "The split"), or equally
            let split: Vec<f64> = if p.direct_l1_split {
                let mut cells = Vec::with_capacity(n_cheap);
                let mut floors = Vec::with_capacity(n_cheap);
                for &i in &order[..n_cheap] {
                    let m = est.marginal(&cands[i].attrs)?;
                    cells.push(direct::effective_cells(&m, total, dcal.sigma()));
                    floors.push(direct::split_floor(
                        dcal.measure_rho,
                        cells_of(&cands[i].attrs) as f64,
                        workload_cells as f64,
                    ));
                }
                direct::split_budgets(dcal.measure_rho, &cells, &floors)
            } else {
                vec![dcal.measure_rho; n_cheap]
            };
            // the model's cliques, grown as the cheap tables join it
            let mut cliques: Vec<Vec<usize>> =
                measurements.iter().map(|m| m.attrs.clone()).collect();
            for (pos, &i) in order.iter().enumerate() {
                check_stop(p.stop.as_ref())?;
                if pos >= n_cheap {
                    // a table no round can bring into the model (AIM's rounds admit a clique
                    // only within the cap): without this, only a check at γρ/k would ever
                    // measure it (docs/mechanisms/adaptive.md, "Tables the model cannot take")
                    cliques.push(cands[i].attrs.clone());
                    let joinable = est.admits(&cliques, p.max_model_cells);
                    cliques.pop();
                    if joinable {
                        continue;
                    }
                    direct_unjoinable += 1;
                }
                // a cheap table's own calibration under the split; the opening's (the equal
                // split's) for the tables the model cannot take and for a table the split
                // leaves at the equal share (every table of a binary workload; split_budgets)
                let split_cal;
                let split_plan;
                let (dcal, dplan) = if pos < n_cheap && split[pos] != dcal.measure_rho {
                    split_cal = RoundCalibration::new(rel, split[pos], 0.0, fit_score)?;
                    split_plan = split_cal.measurement(rel)?;
                    (&split_cal, &split_plan)
                } else {
                    (dcal, &dir.measurement)
                };
                filter.spend(&format!("direct {:?}", cands[i].attrs), dcal.measure_rho)?;
                let y = measure(&exact_counts(&counts[i])?, &dplan.noise, rng)?;
                if p.pool_total {
                    pooled.add_counts(&y, dcal.sigma2);
                }
                cliques.push(cands[i].attrs.clone());
                // AIM's growing size limit, as in the rounds, so that the cheap tables never
                // fill the model the rounds still need (temporal-match2), and at most a tenth
                // of the cap, since every measurement hosted in a large clique costs a pass
                // over it in every fit step (acs all 2-way, 253 cheap pairs: > 400 s with the
                // growing limit alone); past either, beside the model
                // (docs/mechanisms/adaptive.md, "Cheap tables first")
                let limit = (p.max_model_cells * filter.spent() / self.rho)
                    .min(p.max_model_cells * DIRECT_MODEL_SHARE);
                if pos < n_cheap && est.admits(&cliques, limit) {
                    measurements.push(MeasuredMarginal::from_counts(
                        cands[i].attrs.clone(),
                        &y,
                        dcal.sigma2,
                    ));
                } else {
                    cliques.pop();
                    beside.entry(i).or_default().add(&y, dcal.sigma2);
                    direct_beside += 1;
                }
                own.insert(i, (y, dcal.sigma()));
                direct_trace.push(AdaptiveRound {
                    round: 0,
                    selected: cands[i].attrs.clone(),
                    sigma2: dcal.sigma2,
                    select_epsilon: 0.0,
                    measure_rho: dcal.measure_rho,
                    select_rho: 0.0,
                    rho_spent: filter.spent(),
                    annealed: false,
                    coarsened: false,
                });
            }
            if n_cheap > 0 {
                total = pooled.value();
                est.fit(&measurements, total)?;
            }
        }
        // 1c. every other workload table checked by one measurement beside the model
        // (check.rs), used at release
        let mut check_trace = Vec::new();
        let unchecked = tables.iter().filter(|i| !own.contains_key(i)).count();
        let check_level = opening.check.as_ref().and_then(|chk| {
            check::resolution(
                chk.calibration.sigma(),
                workload_cells,
                total,
                unchecked,
                tables.len(),
            )
        });
        if let Some(chk) = &opening.check
            && check::resolves(check_level, p.check_resolution)
        {
            let ccal = &chk.calibration;
            // the tables measured directly already have their own measurement
            for &i in &tables {
                if own.contains_key(&i) {
                    continue;
                }
                filter.spend(&format!("check {:?}", cands[i].attrs), ccal.measure_rho)?;
                let y = measure(&exact_counts(&counts[i])?, &chk.measurement.noise, rng)?;
                if p.pool_total {
                    pooled.add_counts(&y, ccal.sigma2);
                }
                own.insert(i, (y, ccal.sigma()));
                checked.insert(i);
                check_trace.push(AdaptiveRound {
                    round: 0,
                    selected: cands[i].attrs.clone(),
                    sigma2: ccal.sigma2,
                    select_epsilon: 0.0,
                    measure_rho: ccal.measure_rho,
                    select_rho: 0.0,
                    rho_spent: filter.spent(),
                    annealed: false,
                    coarsened: false,
                });
            }
            total = pooled.value();
        }
        // 1d. the coarsened candidates (coarse.rs): groups from the noisy 1-way tables
        let mut coarsened_rounds = 0usize;
        let mut grouped_attrs = 0usize;
        // the largest cut θσ₁ over the 1-way tables, as a share of the noisy total (public)
        let coarse_cut = measurements
            .iter()
            .filter(|m| m.attrs.len() == 1)
            .map(|m| p.coarse_threshold * m.sigma2.sqrt())
            .fold(0.0, f64::max)
            / total;
        if p.coarse_threshold > 0.0 {
            let groups: HashMap<usize, Vec<u32>> = measurements
                .iter()
                .filter(|m| m.attrs.len() == 1 && m.groups.is_none())
                .filter_map(|m| {
                    coarse::value_groups(
                        &m.values,
                        m.sigma2.sqrt(),
                        p.coarse_threshold,
                        p.coarse_resolution * total,
                    )
                    .map(|g| (m.attrs[0], g))
                })
                .collect();
            grouped_attrs = groups.len();
            let extra = coarse::coarsened(&cands, &groups, |a| domain.size(a) as usize)?;
            for (fine, c) in extra {
                counts.push(c.view(counts[fine].clone())?);
                cands.push(c);
            }
        }
        // 2. the rounds. Max-error rounds only where a measurement at the first round's σ
        // resolves κ_max of the noisy total on at least half of the workload's tables
        // (public: σ, the cells, T̂; round::max_error_resolves)
        let first_sigma = RoundCalibration::new(rel, rho_m, rho_s, fit_score)?.sigma();
        let resolved_tables = tables
            .iter()
            .filter(|&&i| {
                round::max_error_resolves(
                    first_sigma,
                    cells_of(&cands[i].attrs),
                    total,
                    p.max_error_resolution,
                )
            })
            .count();
        let max_error_rounds = p.max_error_every > 0 && 2 * resolved_tables >= tables.len();
        // the rounds' measurements start here (the release reads them as the tables' own)
        let rounds_from = measurements.len();
        // the max-error rounds' coarsened measurements of workload tables the model cannot
        // take, kept beside it (`max_error_beside`)
        let mut beside_coarse: Vec<MeasuredMarginal> = Vec::new();
        let mut round = 0usize;
        while filter.remaining() > self.rho * 1e-9 {
            check_stop(p.stop.as_ref())?;
            round += 1;
            let remaining = filter.remaining();
            let score = if max_error_rounds && round.is_multiple_of(p.max_error_every) {
                RoundScore::MaxCellError
            } else {
                fit_score
            };
            let mut cal = RoundCalibration::new(rel, rho_m, rho_s, score)?;
            if remaining < 2.0 * cal.charge() || !filter.fits(cal.charge()) {
                let mut share = 1.0;
                loop {
                    cal = RoundCalibration::new(
                        rel,
                        alpha * remaining * share,
                        (1.0 - alpha) * remaining * share,
                        score,
                    )?;
                    if filter.fits(cal.charge()) {
                        break;
                    }
                    share *= 1.0 - 1e-9;
                }
            }
            let plan = cal.plan(rel)?;
            let limit = p.max_model_cells * (filter.spent() + cal.charge()) / self.rho;
            // the measured cliques plus one candidate, in one reused buffer
            let mut cliques: Vec<Vec<usize>> =
                measurements.iter().map(|m| m.attrs.clone()).collect();
            // a workload table the model cannot take even at its full cap may be measured
            // beside it (`beside`), in ℓ1 rounds only: a table that only waits for the
            // growing cap joins the model later, and a max-error round would spend a whole
            // round on one cell of a table too large to measure well (measured on adult:
            // docs/mechanisms/adaptive.md, "Tables beside the model")
            let beside_round =
                p.measure_beside_model && matches!(score, RoundScore::FitError { .. });
            let mut allowed = Vec::with_capacity(cands.len());
            let mut outside = std::collections::HashSet::new();
            // and, in max-error rounds, the coarsened twin of such a table, kept beside the
            // model too: the release reads the cells alone in their coarsened cell
            // (`max_error_beside`)
            let beside_coarse_round = p.measure_beside_model
                && p.max_error_beside
                && matches!(score, RoundScore::MaxCellError);
            let mut outside_coarse = std::collections::HashSet::new();
            for (i, c) in cands.iter().enumerate() {
                if c.attrs.len() == 1 {
                    allowed.push(i);
                    continue;
                }
                cliques.push(c.attrs.clone());
                let ok = est.admits(&cliques, limit);
                // a workload table (or its coarsened twin, as the round allows) that the
                // model cannot take even at the full cap
                let never = !ok
                    && c.attrs == c.parent
                    && if c.groups.is_none() {
                        beside_round
                    } else {
                        beside_coarse_round
                    }
                    && !est.admits(&cliques, p.max_model_cells);
                cliques.pop();
                if ok {
                    allowed.push(i);
                } else if never {
                    allowed.push(i);
                    if c.groups.is_none() {
                        outside.insert(i);
                    } else {
                        outside_coarse.insert(i);
                    }
                }
            }
            // the estimate on every allowed candidate, from its parent's marginal
            // (one out-of-clique marginal per distinct parent, computed in parallel: each
            // is a function of the model alone)
            let mut distinct: Vec<&[usize]> = allowed
                .iter()
                .map(|&i| cands[i].parent.as_slice())
                .collect();
            distinct.sort_unstable();
            distinct.dedup();
            let marginals = distinct
                .par_iter()
                .map(|pa| est.marginal(pa))
                .collect::<Result<Vec<_>>>()?;
            let parents: HashMap<&[usize], Vec<f64>> =
                distinct.into_iter().zip(marginals).collect();
            // a coarsened table beside the model is scored against what the release would
            // make of it (its own measurements so far), so that the rounds do not return
            // to the cells they have already repaired
            let own_measurements = OwnMeasurements {
                beside: &beside,
                own: &own,
                checked: &checked,
                rounds: &measurements[rounds_from..],
                beside_coarse: &beside_coarse,
                total,
                workload_cells,
                // the rounds score a table by the model (or its shrunk combination) and the
                // correction alone: limiting there too (tried at d = 1 and 2 on adult W64 at
                // ε = 10, seed 1) changed the run (29 rounds for 23) and did no better than
                // limiting the release alone
                limited_translation: f64::INFINITY,
                residuals: p
                    .residual_release
                    .then_some((measurements.as_slice(), domain.sizes())),
            };
            let estimates: Vec<Vec<f64>> = allowed
                .iter()
                .map(|&i| {
                    let c = &cands[i];
                    let model = marginalise(
                        &c.parent,
                        &sizes_of(&c.parent),
                        &parents[c.parent.as_slice()],
                        &c.attrs,
                    );
                    if outside_coarse.contains(&i) {
                        let table = cands.iter().position(|t| t.attrs == c.attrs);
                        return c.view(own_measurements.release(table, &c.attrs, model).0);
                    }
                    match beside.get(&i) {
                        Some(b) => Ok(b.estimate(&model, total)),
                        None => c.view(model),
                    }
                })
                .collect::<Result<_>>()?;
            let sigma = cal.sigma();
            let scores: Vec<f64> = allowed
                .iter()
                .zip(&estimates)
                .map(|(&i, e)| cal.score_of(&counts[i], e, total, cands[i].weight))
                .collect();
            observe(&RoundView {
                round,
                allowed: &allowed,
                estimates: &estimates,
                total,
                calibration: &cal,
            });
            // charge, then draw
            filter.spend(&format!("round {round}"), cal.charge())?;
            let k = select(&plan.selector, &scores, rng)?;
            let i = allowed[k];
            let y = measure(&exact_counts(&counts[i])?, &plan.measurement.noise, rng)?;
            if p.pool_total {
                pooled.add_counts(&y, cal.sigma2);
                total = pooled.value();
            }
            let beside_coarse_measured = outside_coarse.contains(&i);
            let beside_measured =
                beside_coarse_measured || outside.contains(&i) || beside.contains_key(&i);
            let after = if beside_coarse_measured {
                // beside the model, coarsened: the model is not refitted, and the round
                // does not anneal on it (below)
                let c = &cands[i];
                let groups = c.groups.clone().ok_or_else(|| MechanismError::Numerical {
                    what: "internal: a coarsened table beside the model has no groups".into(),
                })?;
                beside_coarse.push(MeasuredMarginal::from_grouped_counts(
                    c.attrs.clone(),
                    groups,
                    &y,
                    cal.sigma2,
                ));
                estimates[k].clone()
            } else if beside_measured {
                // beside the model: the model is not refitted
                let b = beside.entry(i).or_default();
                b.add(&y, cal.sigma2);
                b.estimate(&parents[cands[i].parent.as_slice()], total)
            } else {
                let c = &cands[i];
                measurements.push(match &c.groups {
                    Some(g) => MeasuredMarginal::from_grouped_counts(
                        c.attrs.clone(),
                        g.clone(),
                        &y,
                        cal.sigma2,
                    ),
                    None => MeasuredMarginal::from_counts(c.attrs.clone(), &y, cal.sigma2),
                });
                est.fit(&measurements, total)?;
                coarsened_rounds += usize::from(c.groups.is_some());
                c.view(est.marginal(&c.attrs)?)?
            };
            let changes = after
                .iter()
                .zip(&estimates[k])
                .map(|(a, b)| total * (a - b).abs());
            // did the measurement move the estimate by more than its noise would? (ℓ1 for
            // AIM's rounds, the largest cell for max-error rounds). Not asked of a table
            // measured beside the model: the model did not take it, so a shrunk release
            // that barely moved says nothing about the model's need for budget
            let annealed = !beside_measured
                && match cal.score {
                    RoundScore::FitError { .. } => {
                        changes.sum::<f64>()
                            <= (2.0 / std::f64::consts::PI).sqrt() * sigma * after.len() as f64
                    }
                    RoundScore::MaxCellError => {
                        changes.fold(0.0, f64::max)
                            <= sigma * (2.0 * (2.0 * after.len() as f64).ln()).sqrt()
                    }
                };
            if annealed {
                rho_m *= 4.0;
                rho_s *= 4.0;
            }
            report(
                &AdaptiveRound {
                    round,
                    selected: cands[i].attrs.clone(),
                    sigma2: cal.sigma2,
                    select_epsilon: plan.selector.epsilon(),
                    measure_rho: cal.measure_rho,
                    select_rho: cal.select_charge(),
                    rho_spent: filter.spent(),
                    annealed,
                    coarsened: cands[i].groups.is_some(),
                },
                &mut trace,
            );
        }
        // 3. the release
        // every workload table inside a measured table (or beside the model): the release
        // reads nothing the model extrapolates, so the final fit may converge
        // (estimator.rs, `final_steps`; docs/mechanisms/adaptive.md, "The final fit")
        let covered = tables.iter().all(|&i| {
            beside.contains_key(&i)
                || measurements.iter().any(|m| {
                    m.groups.is_none() && cands[i].attrs.iter().all(|a| m.attrs.contains(a))
                })
        });
        check_stop(p.stop.as_ref())?;
        est.fit_final(&measurements, total, covered)?;
        let mut answers = Vec::with_capacity(workload.num_queries());
        let (mut checked_cells, mut checked_tables, mut corrected_tables) =
            (0usize, 0usize, 0usize);
        let (mut limited_cells, mut limited_tables) = (0usize, 0usize);
        // the model's marginal on every workload table (each a function of the model alone,
        // computed in parallel), then each table's own measurements in order
        let table_attrs = sorted_tables(workload);
        let model_answers = table_attrs
            .par_iter()
            .map(|sorted| est.marginal(sorted))
            .collect::<Result<Vec<_>>>()?;
        let own_measurements = OwnMeasurements {
            beside: &beside,
            own: &own,
            checked: &checked,
            rounds: &measurements[rounds_from..],
            beside_coarse: &beside_coarse,
            total,
            workload_cells,
            limited_translation: p.limited_translation,
            residuals: p
                .residual_release
                .then_some((measurements.as_slice(), domain.sizes())),
        };
        for ((m, sorted), v) in workload
            .marginals()
            .iter()
            .zip(table_attrs)
            .zip(model_answers)
        {
            // every workload table is a candidate (its own parent)
            let ci = cands.iter().position(|c| c.attrs == sorted);
            let (v, done) = own_measurements.release(ci, &sorted, v);
            if let Some(done) = done {
                corrected_tables += 1;
                checked_cells += done.replaced;
                checked_tables += usize::from(done.replaced > 0);
                limited_cells += done.limited;
                limited_tables += usize::from(done.limited > 0);
            }
            answers.extend(reorder(&sorted, &v, m));
        }
        let residual_note = if p.residual_release {
            "; its sub-tables' residuals first combined by inverse variance with the model's measurements of them"
        } else {
            ""
        };
        let mut notes = vec![
            format!(
                "estimator: {}; {} rounds after the {} 1-way tables; total used: {}",
                est.name(),
                round,
                d,
                match rel {
                    Neighbouring::ReplaceOne => "the public n".to_string(),
                    Neighbouring::AddRemove =>
                        if p.pool_total {
                            format!(
                                "{total:.1} (the inverse-variance average of every measured \
                                 table's noisy total)"
                            )
                        } else {
                            format!("{total:.1} (estimated from the noisy 1-way tables)")
                        },
                }
            ),
            format!(
                "ρ spent {:.6} of {:.6} (zCDP filter; annealed {} times)",
                filter.spent(),
                self.rho,
                trace.iter().filter(|r| r.annealed).count()
            ),
        ];
        if p.max_error_every > 0 {
            notes.push(format!(
                "max-error rounds (one round in {}) {}: a measurement at the first round's \
                 σ = {first_sigma:.3} resolves a cell error of {} of the total \
                 (σ√(2 ln 2n)/total) on {resolved_tables} of the {} workload tables{}",
                p.max_error_every,
                if max_error_rounds { "made" } else { "not made" },
                p.max_error_resolution,
                tables.len(),
                if max_error_rounds {
                    ""
                } else {
                    " (they are made when at least half do)"
                }
            ));
        }
        if let Some(low) = &opening.low_budget {
            notes.push(if low_budget {
                format!(
                    "low budget: at the noisy total of the first 1-way table at most half of \
                     the workload tables were cheap, so the other 1-way tables and the rounds \
                     were planned for T = {} rounds ({} per attribute) instead of {}",
                    low.rounds,
                    low.rounds / d.max(1),
                    p.rounds_per_attribute * d
                )
            } else {
                format!(
                    "budget not low: at the noisy total of the first 1-way table more than \
                     half of the workload tables were cheap, so the run kept T = {} rounds",
                    p.rounds_per_attribute * d
                )
            });
        }
        if let Some(dir) = &opening.direct {
            let dcal = &dir.calibration;
            notes.push(format!(
                "cheap workload tables (expected ℓ1 noise / total ≤ {} at σ = {:.3}): {} of {}; \
                 measured directly after the 1-ways: {}{}",
                p.direct_noise_l1,
                dcal.sigma(),
                direct_cheap,
                dir.tables,
                direct_trace.len(),
                if direct_trace.is_empty() {
                    " (only when more than half are cheap)".to_string()
                } else {
                    let (lo, hi) = direct_trace
                        .iter()
                        .fold((f64::INFINITY, 0.0f64), |(l, h), r| {
                            (l.min(r.measure_rho), h.max(r.measure_rho))
                        });
                    let split = if p.direct_l1_split {
                        format!(
                            "ρ {lo:.6} to {hi:.6}, the pool of {:.6} each split by effective \
                             cells^(2/3) above a floor that keeps each table's largest noise \
                             within the equal split's",
                            dcal.measure_rho
                        )
                    } else {
                        format!("ρ {:.6} each", dcal.measure_rho)
                    };
                    format!(
                        " ({split}), {} of them beside the model, {} of them tables the model \
                         cannot take at its cap",
                        direct_beside, direct_unjoinable
                    )
                }
            ));
        }
        if let Some(chk) = &opening.check {
            let level = match check_level {
                Some(r) => format!(
                    "; made where (m/k)·σ√(2 ln 2n)/total ≤ κ = {}, here {:.4} with m = {} of \
                     k = {} tables left by the direct phase",
                    p.check_resolution,
                    r,
                    unchecked,
                    tables.len()
                ),
                None => "; every workload table was measured directly".to_string(),
            };
            notes.push(format!(
                "checked workload tables (one measurement each, not given to the model and \
                 released shrunk toward it within strata of its count{}, ρ {:.6}, σ = {:.3}{}): {}",
                residual_note,
                chk.calibration.measure_rho,
                chk.calibration.sigma(),
                level,
                check_trace.len(),
            ));
        }
        if corrected_tables > 0 {
            notes.push(format!(
                "cells replaced by their table's own measurements (direct or check, and the \
                 rounds' of the table or of its coarsening's single cells, combined by inverse \
                 variance) where they depart from the model (a check: from its shrunk \
                 combination) by more than σ·√(2 ln 2n), σ the combination's: \
                 {checked_cells} in {checked_tables} of the {corrected_tables} tables so \
                 measured; {}",
                if p.limited_translation.is_finite() {
                    format!(
                        "cells kept from the model but more than d·σ from that combination \
                         moved to d·σ from it (limited translation, d = {}): {limited_cells} \
                         in {limited_tables} tables",
                        p.limited_translation
                    )
                } else {
                    "no limited translation".to_string()
                }
            ));
        }
        if p.coarse_threshold > 0.0 {
            notes.push(format!(
                "coarsened candidates (values with noisy 1-way count below θσ₁, θ = {}, \
                 summed into one group per attribute; made where θσ₁ is at most {} of the \
                 noisy total, here {:.4}): {grouped_attrs} of the {d} attributes grouped; \
                 {coarsened_rounds} of the {round} rounds measured a coarsened table",
                p.coarse_threshold, p.coarse_resolution, coarse_cut
            ));
        }
        notes.extend(est.notes());
        if !beside.is_empty() {
            notes.push(format!(
                "{} workload table(s) too large to join the model were measured beside it; \
                 each is released as its measurements shrunk toward the model's marginal \
                 (positive-part James–Stein within strata of the model's count{}), and the \
                 synthetic records (a sample of the \
                 model) do not reflect them",
                beside.len(),
                residual_note
            ));
        }
        if !beside_coarse.is_empty() {
            let mut tables: Vec<&[usize]> =
                beside_coarse.iter().map(|m| m.attrs.as_slice()).collect();
            tables.sort_unstable();
            tables.dedup();
            notes.push(format!(
                "max-error rounds measured {} coarsened workload table(s) the model cannot take \
                 beside it ({} measurement(s)); each joins its table's own measurements above, \
                 and the synthetic records (a sample of the model) do not reflect them",
                tables.len(),
                beside_coarse.len()
            ));
        }
        notes.push(
            "synthetic records: a sample of the fitted model; the released answers are the \
             model's own marginals, so answers computed from the records differ by sampling \
             error"
                .into(),
        );
        let diagnostics = Diagnostics {
            iterations: Some(round),
            notes,
            // the estimate from the noisy 1-way tables (published: issue #26)
            estimated_total: (rel == Neighbouring::AddRemove).then_some(total),
            ..Diagnostics::default()
        };
        let synthetic_n = total.round().clamp(1.0, 1e6) as usize;
        let records = est.sample(synthetic_n, rng)?;
        let synthetic = Some(crate::SyntheticData {
            sampled_from_model: true,
            weights: vec![1.0 / synthetic_n as f64; synthetic_n],
            records,
        });
        Ok(AdaptiveRun {
            release: Release {
                answers,
                synthetic,
                certificate: self.certificate(),
                diagnostics,
            },
            rounds: trace,
            one_ways: one_way_trace,
            low_budget,
            direct: direct_trace,
            checks: check_trace,
            candidates: cands,
        })
    }
}

/// Whether two measurements of a trace share their calibration (σ² and ρ): the step
/// decomposition counts the losses of each run of them together.
fn same_calibration(a: &AdaptiveRound, b: &AdaptiveRound) -> bool {
    a.sigma2 == b.sigma2 && a.measure_rho == b.measure_rho
}

impl crate::StepAudited for AdaptiveProjection {
    /// The steps of a reference run on `reference` (seed `request.seed`): the first 1-way
    /// measurement (claimed `ρ_measure`), and per audited round (default: the first and the
    /// last) the exponential-mechanism selection (claimed pure ε, accounted `ε²/8`-zCDP) with
    /// the round's public state fixed (allowed candidates, estimate, total, calibration), and
    /// the discrete-Gaussian measurement of the reference run's selection (or of allowed
    /// candidate `request.measured_query`), claimed `ρ_measure`-zCDP — built by the engine's
    /// [`crate::engine::StepSource`]; the first direct measurement and the first check, if
    /// the reference run made any (claimed its own share of the direct pool, and `γρ/k`). The
    /// whole run: every 1-way, direct and check measurement and every round of the reference run, zCDP composition,
    /// against the certificate's ρ. Under add/remove
    /// the runners accept data of any size.
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        request: &crate::StepRequest,
    ) -> Result<crate::StepDecomposition> {
        use crate::engine::{RecordedRound, StepSource};
        use crate::steps::audited_rounds;
        use crate::{StepComposition, StepDecomposition, StepLoss};
        let rel = self.params.neighbouring;
        // the reference run, recording the public state of every selection round
        let mut seen: Vec<RoundHistory> = Vec::new();
        let mut rng = dp_core::seeded_rng(request.seed);
        let run = self.run_observed(reference, workload, &mut rng, &mut |v| {
            seen.push(RoundHistory {
                round: v.round,
                allowed: v.allowed.to_vec(),
                estimates: v.estimates.to_vec(),
                total: v.total,
                calibration: v.calibration.clone(),
            })
        })?;
        // its candidates, with the coarsened ones its rounds could select
        let cands = Arc::new(run.candidates.clone());
        let last = seen.len();
        if last == 0 {
            return Err(MechanismError::Data {
                reason: "the reference run had no selection round".into(),
            });
        }
        let rounds = audited_rounds(&request.rounds, &[1, last], last)?;
        let table = {
            let cands = cands.clone();
            move |data: &Dataset, i: usize| -> Result<Vec<u64>> {
                cands[i]
                    .view(Marginal::new(data.domain(), cands[i].attrs.clone())?.try_count(data)?)
            }
        };
        let scores = {
            let (table, cands) = (table.clone(), cands.clone());
            Arc::new(move |data: &Dataset, h: &RoundHistory| {
                h.allowed
                    .iter()
                    .zip(&h.estimates)
                    .map(|(&i, e)| {
                        let c = table(data, i)?;
                        Ok(h.calibration.score_of(&c, e, h.total, cands[i].weight))
                    })
                    .collect()
            })
        };
        let source = StepSource {
            name: "adaptive-projection".into(),
            candidates: cands.iter().map(Candidate::name).collect(),
            domain: workload.domain().clone(),
            n: reference.n(),
            neighbouring: rel,
            scores,
            exact: Arc::new(move |data, i| exact_counts(&table(data, i)?)),
        };
        // the 1-way tables, by calibration (the first and the rest differ when the budget is
        // low): one audited step for the first table of each group, and the losses of all
        if run.one_ways.is_empty() {
            return Err(MechanismError::Numerical {
                what: "internal: the reference run measured no 1-way table".into(),
            });
        }
        let mut steps = Vec::new();
        let mut losses = Vec::new();
        for (g, group) in run.one_ways.chunk_by(same_calibration).enumerate() {
            let first = &group[0];
            let at = cands
                .iter()
                .position(|c| c.attrs == first.selected && c.groups.is_none())
                .ok_or_else(|| MechanismError::Numerical {
                    what: "internal: a 1-way table is not a candidate".into(),
                })?;
            let m = round::table_measurement(rel, first.sigma2, first.measure_rho)?;
            let what = if g == 0 {
                "1-way measurement"
            } else {
                "1-way measurement at the low budget"
            };
            steps.push(source.measurement_step(
                format!("adaptive-projection {what} of {}", source.candidates[at]),
                &m,
                at,
                reference,
            )?);
            losses.push(StepLoss {
                what: format!("{what}s"),
                count: group.len() as u64,
                loss: m.loss,
            });
        }
        // the per-table phases: one audited step for the first measurement of each, and the
        // losses of all of them
        for (trace, what, losses_what) in [
            (
                &run.direct,
                "direct",
                "direct measurements of cheap workload tables",
            ),
            (
                &run.checks,
                "check",
                "check measurements of workload tables",
            ),
        ] {
            let Some(first) = trace.first() else {
                continue;
            };
            let m = round::table_measurement(rel, first.sigma2, first.measure_rho)?;
            let at = cands
                .iter()
                .position(|c| c.attrs == first.selected && c.groups.is_none())
                .ok_or_else(|| MechanismError::Numerical {
                    what: format!("internal: a table of the {what} phase is not a candidate"),
                })?;
            steps.push(source.measurement_step(
                format!(
                    "adaptive-projection {what} measurement of {}",
                    source.candidates[at]
                ),
                &m,
                at,
                reference,
            )?);
            // the direct phase's split gives each table its own budget: the losses of every
            // run of equal calibrations
            for group in trace.chunk_by(same_calibration) {
                losses.push(StepLoss {
                    what: losses_what.into(),
                    count: group.len() as u64,
                    loss: round::table_measurement(rel, group[0].sigma2, group[0].measure_rho)?
                        .loss,
                });
            }
        }
        let mut recorded = Vec::new();
        for h in seen {
            let plan = h.calibration.plan(rel)?;
            losses.extend(plan.losses(&format!("round {}", h.round), 1));
            if rounds.contains(&h.round) {
                let traced = &run.rounds[h.round];
                let selected = cands
                    .iter()
                    .position(|c| {
                        c.attrs == traced.selected && c.groups.is_some() == traced.coarsened
                    })
                    .unwrap_or(h.allowed[0]);
                recorded.push(RecordedRound {
                    round: h.round,
                    plan,
                    selectable: h.allowed.clone(),
                    selected,
                    history: h,
                });
            }
        }
        steps.extend(source.round_steps(reference, request, recorded)?);
        Ok(StepDecomposition {
            rounds,
            steps,
            losses,
            composition: StepComposition::Basic,
            accounting: PrivacyLoss::zcdp(self.rho)?,
        })
    }
}

/// A selection round's public state, recorded from the step audit's reference run.
struct RoundHistory {
    round: usize,
    allowed: Vec<usize>,
    estimates: Vec<Vec<f64>>,
    total: f64,
    calibration: RoundCalibration,
}

impl AdaptiveProjection {
    /// The 1-way measurements' calibration and plan, after checking that the first
    /// selection round's plans (both scores) can be built at the opening budgets: public
    /// inputs only, so a budget whose noise is beyond the samplers' range (e.g. ρ = 1e-300)
    /// is refused before any spend is recorded. Shared by the release and
    /// [`Mechanism::check_inputs`], so the two cannot disagree.
    fn opening(&self, cands: &[Candidate]) -> Result<Opening> {
        let p = &self.params;
        let rel = p.neighbouring;
        let d = cands.iter().filter(|c| c.attrs.len() == 1).count();
        let wmax = cands.iter().map(|c| c.weight).fold(1.0, f64::max);
        let fit_score = RoundScore::FitError { max_weight: wmax };
        // the round budgets at T rounds (`αρ/T`, `(1 − α)ρ/T`), both selection rounds' plans
        // built to refuse a budget beyond the samplers before any spend, and the 1-way
        // tables' calibration and plan at `αρ/T`
        let budgets = |rounds: usize| -> Result<RoundBudgets> {
            let rho_measure = p.measurement_share * self.rho / rounds as f64;
            let rho_select = (1.0 - p.measurement_share) * self.rho / rounds as f64;
            for score in [fit_score, RoundScore::MaxCellError] {
                RoundCalibration::new(rel, rho_measure, rho_select, score)?.plan(rel)?;
            }
            let one_way = RoundCalibration::new(rel, rho_measure, 0.0, fit_score)?;
            let measurement = one_way.measurement(rel)?;
            Ok(RoundBudgets {
                rounds,
                rho_measure,
                rho_select,
                one_way,
                measurement,
            })
        };
        let usual = budgets(p.rounds_per_attribute * d)?;
        let k = direct::workload_tables(cands).len();
        // one measurement of a workload table at `share·ρ/k` (the direct phase's and the
        // checks' calibration), if the share is positive and there is such a table
        let per_table = |share: f64| -> Result<Option<DirectOpening>> {
            if share <= 0.0 || k == 0 {
                return Ok(None);
            }
            let calibration =
                RoundCalibration::new(rel, share * self.rho / k as f64, 0.0, fit_score)?;
            let measurement = calibration.measurement(rel)?;
            Ok(Some(DirectOpening {
                calibration,
                measurement,
                tables: k,
            }))
        };
        let direct = per_table(p.direct_share)?;
        let check = per_table(p.check_share)?;
        // the budgets when the budget is low (`low_budget_rounds_per_attribute`): only with
        // the direct phase on, whose test decides it, and only when they differ
        let r_low = p
            .low_budget_rounds_per_attribute
            .min(p.rounds_per_attribute);
        // at a low budget the first 1-way table takes α/(r·d) of ρ, the others α/(r_low·d)
        // each, and the direct phase may still measure (decided again at the pooled total):
        // the rule is used only when that opening leaves budget for the rounds, as `check`
        // requires of the usual one
        let opening_share = if direct.is_some() || check.is_some() {
            p.direct_share.max(p.check_share)
        } else {
            0.0
        };
        let low_one_ways = p.measurement_share / (p.rounds_per_attribute * d.max(1)) as f64
            + p.measurement_share * d.saturating_sub(1) as f64 / (r_low * d.max(1)) as f64;
        let low_budget = if direct.is_some()
            && r_low < p.rounds_per_attribute
            && low_one_ways + opening_share < 1.0 - 1e-9
        {
            Some(budgets(r_low * d)?)
        } else {
            None
        };
        Ok(Opening {
            usual,
            fit_score,
            direct,
            check,
            opening_share,
            low_budget,
        })
    }
}

/// The opening of a run ([`AdaptiveProjection::opening`]): the per-round budgets before any
/// annealing (`αρ/T`, `(1 − α)ρ/T`) with the 1-way measurements' calibration and plan, usual
/// and at a low budget, AIM's score with the candidates' largest weight, and the per-table
/// phases' calibrations.
struct Opening {
    /// The usual budgets, at `T = r·d` rounds.
    usual: RoundBudgets,
    fit_score: RoundScore,
    /// The direct measurements' calibration and plan (`βρ/k` each), if `β > 0` and the
    /// workload has a table of two or more attributes.
    direct: Option<DirectOpening>,
    /// The checks' calibration and plan (`γρ/k` each, `adaptive/check.rs`), if `γ > 0` and
    /// the workload has a table of two or more attributes.
    check: Option<DirectOpening>,
    /// The budgets when the budget is low
    /// ([`AdaptiveProjectionParams::low_budget_rounds_per_attribute`]), if the direct phase
    /// is on and `r_low < r`.
    low_budget: Option<RoundBudgets>,
    /// The most of ρ the direct measurements and checks together may take (`max(β, γ)` when
    /// either phase is on, else 0).
    opening_share: f64,
}

/// The budgets at `T` rounds (the usual `r·d`, or `r_low·d` at a low budget): the per-round
/// budgets `αρ/T`, `(1 − α)ρ/T`, and the 1-way tables' calibration and plan at `αρ/T`.
struct RoundBudgets {
    rounds: usize,
    rho_measure: f64,
    rho_select: f64,
    one_way: RoundCalibration,
    measurement: Measurement,
}

/// The opening of a per-table phase (the direct measurements, `adaptive/direct.rs`, and the
/// checks, `adaptive/check.rs`): the calibration and plan of one measurement (`βρ/k` or
/// `γρ/k` each) and `k`, the number of workload tables of two or more attributes.
struct DirectOpening {
    calibration: RoundCalibration,
    measurement: Measurement,
    tables: usize,
}

impl Mechanism for AdaptiveProjection {
    fn name(&self) -> &'static str {
        "adaptive-projection"
    }

    fn check_inputs(&self, workload: &MarginalWorkload, _public_n: Option<usize>) -> Result<()> {
        self.opening(&candidates(workload)).map(drop)
    }

    /// [`AdaptiveProjection::schedule`]: the run's own opening, from public inputs.
    fn noise_schedule(&self, workload: &MarginalWorkload) -> Option<NoiseSchedule> {
        self.schedule(workload).ok()
    }

    fn certificate(&self) -> PrivacyCertificate {
        let loss = PrivacyLoss::Zcdp { rho: self.rho };
        PrivacyCertificate {
            mechanism: self.name().to_string(),
            loss,
            model: crate::PrivacyModel::Central {
                neighbouring: self.params.neighbouring,
            },
            approx_equivalent: self.delta.and_then(|d| loss.to_approx(d).ok()),
        }
    }

    fn produces_synthetic(&self) -> bool {
        true
    }

    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        Some(self)
    }

    /// The workload's counts are all it reads ([`AdaptiveProjection::run_from_counts`]).
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
        let counts = crate::counts::nonnegative(counts)?;
        Ok(self.run_from_counts(&counts, n, workload, rng)?.release)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        Ok(self.run(data, workload, rng)?.release)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain() -> Domain {
        Domain::new(vec![("a".into(), 2), ("b".into(), 3), ("c".into(), 4)]).unwrap()
    }

    /// The public total by hand: tables of 3 cells at σ² = 4 (total 100, weight 1/12) and of
    /// 1 cell at σ² = 1 (total 130, weight 1) average to (100/12 + 130)/(1/12 + 1) =
    /// 1660/13; a table of zero weight (σ² = ∞) changes nothing; nothing measured is 1; the
    /// floor is 1; under replace-one it is the public n whatever was measured.
    #[test]
    fn the_public_total_is_the_inverse_variance_average() {
        let mut t = PublicTotal::new(Neighbouring::AddRemove, 999);
        assert_eq!(t.value(), 1.0);
        t.add_counts(&[30, 30, 40], 4.0);
        assert!((t.value() - 100.0).abs() < 1e-12);
        t.add_measured(&MeasuredMarginal {
            attrs: vec![0],
            values: vec![130.0],
            sigma2: 1.0,
            groups: None,
        });
        t.add(5.0, 2, f64::INFINITY);
        assert!((t.value() - 1660.0 / 13.0).abs() < 1e-9, "{}", t.value());
        let mut low = PublicTotal::new(Neighbouring::AddRemove, 5);
        low.add_counts(&[-4, 1], 1.0);
        assert_eq!(low.value(), 1.0);
        let mut r1 = PublicTotal::new(Neighbouring::ReplaceOne, 999);
        r1.add_counts(&[1, 2], 1.0);
        assert_eq!(r1.value(), 999.0);
    }

    /// The opening (1-ways at α/r of ρ, then at most max(β, γ)) must leave budget for the
    /// rounds: refused before any release on both sides of the line, not part-way through
    /// (a direct share of 0.95 overran ρ on acs at its 64th table).
    #[test]
    fn an_opening_that_overruns_the_budget_is_refused_by_check() {
        let budget = PrivacyLoss::approx(1.0, 1e-9).unwrap();
        let base = AdaptiveProjectionParams::new(budget);
        // defaults: α = 0.9, r = 16 → 1-ways 0.05625 (at a low budget up to 0.075: the rule is
        // then not used, tests/adaptive_low_budget.rs)
        assert!(base.clone().direct(0.94, 0.5).check().is_ok());
        let err = base.clone().direct(0.95, 0.5).check().unwrap_err();
        assert!(
            matches!(
                err,
                MechanismError::InvalidParameter {
                    name: "direct_share",
                    ..
                }
            ),
            "{err}"
        );
        let err = base.clone().check_share(0.95).check().unwrap_err();
        assert!(
            matches!(
                err,
                MechanismError::InvalidParameter {
                    name: "check_share",
                    ..
                }
            ),
            "{err}"
        );
        // one round per attribute: the 1-ways alone take 0.9 of ρ
        let mut few = base.clone();
        few.rounds_per_attribute = 1;
        assert!(
            few.clone()
                .direct(0.05, 0.5)
                .check_share(0.05)
                .check()
                .is_ok()
        );
        let err = few.direct(0.8, 0.5).check().unwrap_err();
        assert!(
            matches!(
                &err,
                MechanismError::InvalidParameter {
                    name: "rounds_per_attribute",
                    reason,
                    ..
                } if reason.starts_with("must be at least 5 ")
            ),
            "{err}"
        );
        // with the default β = 0.9, at least 10: 0.9/10 + 0.9 = 0.99 (9: 1.0)
        let mut ten = base.clone();
        ten.rounds_per_attribute = 10;
        assert!(ten.check().is_ok());
        ten.rounds_per_attribute = 9;
        assert!(ten.check().is_err());
    }

    /// `final_cold_cells` (the final fit's second start): finite and at least 0, 0 allowed
    /// (off).
    #[test]
    fn final_cold_cells_must_be_finite_and_not_negative() {
        let budget = PrivacyLoss::approx(1.0, 1e-9).unwrap();
        let base = AdaptiveProjectionParams::new(budget);
        for c in [1e5, 0.0, 4.0] {
            assert!(base.clone().final_cold_cells(c).check().is_ok(), "{c}");
        }
        for c in [-1.0, f64::NAN, f64::INFINITY] {
            let err = base.clone().final_cold_cells(c).check().unwrap_err();
            assert!(
                matches!(
                    err,
                    MechanismError::InvalidParameter {
                        name: "final_cold_cells",
                        ..
                    }
                ),
                "{c}: {err:?}"
            );
        }
    }

    /// The limited translation's `d`: positive or infinite; zero, negative and NaN refused.
    #[test]
    fn limited_translation_must_be_positive() {
        let budget = PrivacyLoss::approx(1.0, 1e-9).unwrap();
        let base = AdaptiveProjectionParams::new(budget);
        for d in [3.0, 1e-9, f64::INFINITY] {
            assert!(base.clone().limited_translation(d).check().is_ok(), "{d}");
        }
        for d in [0.0, -1.0, f64::NAN, f64::NEG_INFINITY] {
            let err = base.clone().limited_translation(d).check().unwrap_err();
            assert!(
                matches!(
                    err,
                    MechanismError::InvalidParameter {
                        name: "limited_translation",
                        ..
                    }
                ),
                "{d}: {err}"
            );
        }
    }

    #[test]
    fn candidates_are_the_downward_closure_with_aim_weights() {
        let d = domain();
        let w = MarginalWorkload::from_attribute_lists(
            &d,
            &[vec!["a".into(), "b".into()], vec!["c".into(), "b".into()]],
        )
        .unwrap();
        let c = candidates(&w);
        let names: Vec<Vec<usize>> = c.iter().map(|c| c.attrs.clone()).collect();
        assert_eq!(
            names,
            vec![vec![0], vec![1], vec![2], vec![0, 1], vec![1, 2]]
        );
        // w_{b} = |{b}∩{a,b}| + |{b}∩{b,c}| = 2; w_{a,b} = 2 + 1 = 3
        assert_eq!(c[1].weight, 2.0);
        assert_eq!(c[3].weight, 3.0);
        assert_eq!(c[0].parent, vec![0, 1]);
    }

    /// Every candidate's counts, derived from the workload's tables (given in their own,
    /// unsorted attribute orders), equal the counts of that candidate on the records.
    #[test]
    fn candidate_counts_are_each_candidates_counts_on_the_records() {
        let d = domain();
        let n = 97;
        let cols = (0..3)
            .map(|j| {
                (0..n)
                    .map(|i| ((i * (2 * j + 1) + i / 5) % d.size(j) as usize) as u32)
                    .collect()
            })
            .collect();
        let data = Dataset::from_columns(d.clone(), cols).unwrap();
        let lists = [vec![2, 0], vec![1, 2, 0], vec![1]];
        let tables = lists
            .iter()
            .map(|l| Marginal::new(&d, l.clone()).unwrap())
            .collect();
        let w = MarginalWorkload::new(&d, tables).unwrap();
        let cands = candidates(&w);
        let counts = candidate_counts(&cands, &w, &w.count_all(&data).unwrap()).unwrap();
        assert_eq!(counts.len(), 7);
        for (c, got) in cands.iter().zip(&counts) {
            let want = Marginal::new(&d, c.attrs.clone())
                .unwrap()
                .try_count(&data)
                .unwrap();
            assert_eq!(got, &want, "{:?}", c.attrs);
        }
    }

    #[test]
    fn marginalise_and_reorder_against_brute_force() {
        let d = domain();
        let vals: Vec<f64> = (0..24).map(|i| i as f64).collect();
        // P(b) from the (a, b, c) table: sum over a and c
        let m = marginalise(&[0, 1, 2], &[2, 3, 4], &vals, &[1]);
        for (b, got) in m.iter().enumerate() {
            let want: f64 = (0..2)
                .flat_map(|a| (0..4).map(move |c| (a * 12 + b * 4 + c) as f64))
                .sum();
            assert_eq!(*got, want);
        }
        let m = marginalise(&[0, 1, 2], &[2, 3, 4], &vals, &[0, 2]);
        assert_eq!(
            m[4 + 1],
            (12 + 1) as f64 + (16 + 1) as f64 + (20 + 1) as f64
        );
        // reorder (a, c) sorted into the table order (c, a)
        let t = Marginal::new(&d, vec![2, 0]).unwrap();
        let sorted: Vec<f64> = (0..8).map(|i| i as f64).collect(); // index a*4 + c
        let r = reorder(&[0, 2], &sorted, &t);
        for c in 0..4 {
            for a in 0..2 {
                assert_eq!(r[c * 2 + a], (a * 4 + c) as f64);
            }
        }
    }
}
