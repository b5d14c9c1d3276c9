//! The one trait every central-model mechanism implements.

use crate::noise_stats::CountNoise;
use crate::{PrivacyCertificate, Release, Result, StepAudited};
use dp_queries::{Dataset, MarginalWorkload, Workload};
use rand::CryptoRng;

/// A differentially private query-release mechanism (DESIGN.md "Core types") for workloads
/// of type `W` (any [`Workload`]; marginals by default).
///
/// A mechanism implements `Mechanism<W>` for each workload class it releases: the
/// answer-perturbation baselines for every `W: Workload`, DualQuery for marginals and for
/// conjunctions / parities, the projection family, MWEM, IC-MW and adaptive projection for
/// marginals (their fast paths are specialised to tables). `Mechanism<AnyWorkload>` is
/// what programs choose at run time; [`crate::ForQueryClasses`] gives it to any marginal
/// mechanism, refusing other classes with [`crate::MechanismError::UnsupportedQueryClass`].
///
/// The guarantee is known before the mechanism runs: [`Mechanism::certificate`] depends only
/// on the parameters. Randomness enters only through the `rng` argument (no global RNG), so
/// a seeded `ChaCha20Rng` makes a release reproducible. The trait is object safe so that
/// programs can choose a mechanism at run time.
pub trait Mechanism<W: Workload = MarginalWorkload>: Send + Sync {
    /// Short name used on the command line and in results (e.g. `"gaussian"`).
    fn name(&self) -> &'static str;

    /// The privacy guarantee every release of this mechanism carries.
    fn certificate(&self) -> PrivacyCertificate;

    /// Whether every release carries synthetic data ([`Release::synthetic`] is `Some`).
    /// Known before running, so a program can refuse to spend budget on a release that
    /// cannot give what was asked.
    fn produces_synthetic(&self) -> bool {
        false
    }

    /// Whether the mechanism works over an explicit universe of the data's domain (the
    /// projection family, MWEM, IC-MW), so that running it over the attributes the workload
    /// touches ([`crate::OnWorkloadAttributes`]) shrinks what it enumerates.
    fn works_over_a_universe(&self) -> bool {
        false
    }

    /// The additive noise every count of `workload` gets, where it is fixed before running
    /// (the answer-perturbation baselines: their own calibration); `None` otherwise.
    fn count_noise(&self, _workload: &W) -> Option<CountNoise> {
        None
    }

    /// The white-box view for the per-step privacy audit ([`crate::steps`]): `Some` for the
    /// composed mechanisms that can be decomposed into audited steps (MWEM, IC-MW,
    /// DualQuery, chaining for worst-case error), `None` otherwise.
    fn step_audited(&self) -> Option<&dyn StepAudited> {
        None
    }

    /// Run the mechanism on `data` for `workload`.
    ///
    /// Errors (never panics) when the data does not fit the workload's domain or the
    /// parameters cannot be honoured; no noise is drawn before all checks have passed.
    fn release(&self, data: &Dataset, workload: &W, rng: &mut dyn CryptoRng) -> Result<Release>;
}
