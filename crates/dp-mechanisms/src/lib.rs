//! # dp-mechanisms
//!
//! Central-model differentially private query-release mechanisms. Each mechanism
//! implements [`Mechanism`], states its guarantee (pure ε, (ε, δ) or ρ-zCDP, and the
//! neighbouring relation) in its documentation and in the [`PrivacyCertificate`] of every
//! [`Release`] it returns, and takes its sensitivity from [`sensitivity`], the one place
//! where sensitivities are computed.
//!
//! | module | what |
//! |---|---|
//! | [`adaptive`] | adaptive select–measure–estimate release (adaptive projection; AIM-style rounds on a zCDP filter) |
//! | [`engine`] | the select–measure–update engine of the adaptive mechanisms (one selection, one measurement, round plans, the public-state runner, the step builder, the zCDP filter) |
//! | [`iterative`] | multiplicative weights, Iterative Construction, MWEM, DualQuery (seeds 001, 003) |
//! | [`mechanism`] | the [`Mechanism`] trait |
//! | [`relaxed`] | the relaxed projection for binary marginals: parities measured once, Frank–Wolfe onto the Grothendieck relaxation, read back through the marginal ↔ parity transform (seed 000) |
//! | [`release`] | [`Release`], [`PrivacyCertificate`], [`Diagnostics`] |
//! | [`calibration`] | sensitivity + privacy parameter → noise scale (one place, rounded up) |
//! | [`sensitivity`] | Δ₁ and Δ₂ of workloads under each neighbouring relation |
//! | [`perturbation`] | the Gaussian and Laplace answer-perturbation baselines |
//! | [`plan`] | counting plans: the marginal tables a mechanism needs counted beyond the workload's own ([`CountingPlan`], [`DataAccess`]; issue #25) |
//! | [`polynomial`] | polynomial release (seed 002): certified Chebyshev / linear-programming approximations, noisy coefficients, evaluator |
//! | [`postprocess`] | privacy-free post-processing (simplex projection of tables) |
//! | [`projection`] | projection, coarse projection and chaining (seed 004), packing lower bounds |
//! | [`noise_stats`] | exact noise moments and tails, for predicted error |
//! | [`steps`] | white-box decomposition of composed mechanisms into audited steps ([`StepAudited`]) |
//! | [`exact_audit`] | exact Rényi-divergence audit of the discrete steps against their claims ([`exact_check_step`]) |
//!
//! This crate does no I/O and no printing.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod adaptive;
pub mod calibration;
mod counts;
pub mod engine;
pub mod error;
pub mod exact_audit;
pub mod iterative;
pub mod mechanism;
pub mod noise_stats;
pub mod perturbation;
pub mod plan;
pub mod polynomial;
pub mod postprocess;
pub mod projection;
pub mod relaxed;
pub mod release;
pub mod restricted;
pub mod sensitivity;
pub mod steps;

pub use adaptive::{
    AdaptiveProjection, AdaptiveProjectionParams, AdaptiveRound, EstimatorChoice,
    LowBudgetSchedule, NoiseSchedule, RoundCallback, ScheduledMeasurement, ScheduledPhase,
    ScheduledRound,
};
pub use error::{MechanismError, Result};
pub use exact_audit::{
    DerivedSensitivity, ExactClaimCheck, ExactStepCheck, StepPrimitive, derive_sensitivity,
    exact_check, exact_check_at, exact_check_step,
};
pub use iterative::{
    ChainingWorstCase, ChainingWorstCaseParams, DualQuery, DualQueryParams, IcParams,
    IterativeConstruction, Mwem, MwemParams,
};
pub use mechanism::{ErrorBound, Mechanism};
pub use perturbation::{
    GaussianMechanism, GaussianNoise, GaussianParams, LaplaceMechanism, LaplaceNoise,
    LaplaceParams, PerturbationParams,
};
pub use plan::{CountingPlan, DataAccess};
pub use postprocess::{PostProcessed, PostProcessing};
pub use projection::{
    ChainingMechanism, ChainingParams, CoarseProjectionMechanism, CoarseProjectionParams,
    ProjectionMechanism, ProjectionParams, ProjectionSettings, UniverseChoice,
};
pub use relaxed::{
    BoostingForQueries, BoostingParams, BoostingSettings, OneHotEncoded, RelaxedProjection,
    RelaxedProjectionParams, RelaxedSettings,
};
pub use release::{
    Diagnostics, NoiseDescription, NoiseDistribution, Normaliser, PrivacyCertificate, PrivacyModel,
    Release, SyntheticData,
};
pub use restricted::{ForQueryClasses, OnWorkloadAttributes};
pub use steps::{
    AuditedStep, StepAudited, StepComposition, StepDecomposition, StepInput, StepLoss, StepRequest,
    StepRunner,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn is_send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        is_send_sync::<GaussianMechanism>();
        is_send_sync::<LaplaceMechanism>();
        is_send_sync::<Release>();
        is_send_sync::<PrivacyCertificate>();
        is_send_sync::<Box<dyn Mechanism>>();
    }
}
