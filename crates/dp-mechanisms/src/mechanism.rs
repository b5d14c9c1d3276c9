//! The one trait every central-model mechanism implements.

use crate::noise_stats::CountNoise;
use crate::{PrivacyCertificate, Release, Result, StepAudited};
use dp_queries::{Dataset, MarginalWorkload, Workload};
use rand::CryptoRng;

/// An error bound stated a priori by a mechanism's paper, for a table of `n` records (from
/// [`Mechanism::stated_error_bound`]): a statement about answers as fractions of `n`, its
/// value, how surely it holds and where it is proved.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorBound {
    /// What is bounded, in words (e.g. "expected root-mean-squared error of the answers").
    pub statement: String,
    /// The bound, in the units of the answers (fractions of n).
    pub value: f64,
    /// The probability with which it holds; `None`: a bound on the expectation.
    pub confidence: Option<f64>,
    /// The source, by authors, year and result (e.g. "Roth 2011, Thm 5").
    pub citation: &'static str,
}

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

    /// The error bound the mechanism's paper states before running, for `workload` on a
    /// table of `n` records (the bounds need n: public under replace-one, so a plan may
    /// assume one); `None` where no a-priori bound is implemented or its conditions fail.
    fn stated_error_bound(&self, _workload: &W, _n: usize) -> Option<ErrorBound> {
        None
    }

    /// The white-box view for the per-step privacy audit ([`crate::steps`]): `Some` for the
    /// composed mechanisms that can be decomposed into audited steps (MWEM, IC-MW,
    /// DualQuery, chaining for worst-case error), `None` otherwise.
    fn step_audited(&self) -> Option<&dyn StepAudited> {
        None
    }

    /// Whether the mechanism needs only the workload's exact counts and the number of
    /// records, not the records themselves (the answer-perturbation baselines): then
    /// [`Self::release_counts`] releases from a streaming count in bounded memory.
    fn counts_suffice(&self) -> bool {
        false
    }

    /// Release from the exact counts of `workload` (workload order, as
    /// [`dp_queries::Workload::count_all`]) of a dataset of `n` records, for mechanisms whose
    /// [`Self::counts_suffice`]; the same guarantee and the same release as
    /// [`Self::release`] on that dataset. `n` is private under add/remove neighbours: it is
    /// used as the true value of a measured total only, never output. The default refuses.
    fn release_counts(
        &self,
        _counts: Vec<i64>,
        _n: usize,
        _workload: &W,
        _rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        Err(crate::MechanismError::InvalidParameter {
            name: "counts",
            value: self.name().into(),
            reason: "this mechanism needs the records, not only the counts".into(),
        })
    }

    /// Run the mechanism on `data` for `workload`.
    ///
    /// Errors (never panics) when the data does not fit the workload's domain or the
    /// parameters cannot be honoured; no noise is drawn before all checks have passed.
    fn release(&self, data: &Dataset, workload: &W, rng: &mut dyn CryptoRng) -> Result<Release>;
}
