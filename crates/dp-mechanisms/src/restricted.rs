//! Running a mechanism over the attributes its workload touches.
//!
//! A marginal workload over a few attributes of a wide table depends on the records only
//! through those attributes. The mechanisms that work over an explicit universe of the data's
//! domain (the projection family, MWEM, IC-MW) refuse a wide table even when the workload
//! touches four attributes of it, because the universe would span all of them.
//! [`OnWorkloadAttributes`] restricts the data and the workload to the touched attributes
//! first and runs the mechanism there.
//!
//! **Privacy.** The restriction maps each record to its values on the touched attributes.
//! It maps a dataset to one of the same size, and two neighbouring datasets (one record added
//! or removed, or one record replaced) to datasets that are neighbouring under the same
//! relation or identical. So the mechanism's guarantee holds for the composite with the same
//! parameters and the same neighbouring relation — the certificate is the inner mechanism's.

use dp_queries::{AnyWorkload, Dataset, Domain, MarginalWorkload, QueryClass, Workload};
use rand::CryptoRng;

use crate::{Mechanism, PrivacyCertificate, Release, Result};

/// A mechanism run on the data and workload restricted to the attributes the workload
/// touches (module docs). Answers have the workload's layout; synthetic records, where the
/// mechanism makes them, have only the touched attributes as columns (a release note says
/// which). When the workload touches every attribute this is the inner mechanism unchanged.
/// It offers no step audit (the inner mechanism's steps run on the restricted data: audit the
/// inner mechanism there).
pub struct OnWorkloadAttributes<W: Workload = MarginalWorkload> {
    inner: Box<dyn Mechanism<W>>,
}

impl<W: Workload> OnWorkloadAttributes<W> {
    /// Wrap `inner`.
    pub fn new(inner: Box<dyn Mechanism<W>>) -> Self {
        OnWorkloadAttributes { inner }
    }
}

impl<W: Workload> OnWorkloadAttributes<W> {
    /// Runs `release` of the inner mechanism on the workload over its touched attributes
    /// (the counts, in the same query order, pass as they are) and lifts the release back
    /// to the workload's domain; on the workload itself when it touches every attribute.
    fn on_touched(
        &self,
        workload: &W,
        release: impl FnOnce(&dyn Mechanism<W>, &W) -> Result<Release>,
    ) -> Result<Release> {
        let domain = workload.domain();
        let touched = workload.touched_attributes();
        if touched.len() == domain.len() {
            return release(self.inner.as_ref(), workload);
        }
        let sub_workload = workload.on_attributes(&touched)?;
        let restricted = release(self.inner.as_ref(), &sub_workload)?;
        Ok(restricted_release(restricted, domain, &touched))
    }
}

impl<W: Workload> Mechanism<W> for OnWorkloadAttributes<W> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn certificate(&self) -> PrivacyCertificate {
        self.inner.certificate()
    }

    fn produces_synthetic(&self) -> bool {
        self.inner.produces_synthetic()
    }

    fn works_over_a_universe(&self) -> bool {
        self.inner.works_over_a_universe()
    }

    fn count_noise(&self, workload: &W) -> Option<crate::noise_stats::CountNoise> {
        self.inner.count_noise(workload)
    }

    /// The inner mechanism's schedule for the workload over the touched attributes, as it
    /// runs ([`Mechanism::release`] here).
    fn noise_schedule(&self, workload: &W) -> Option<crate::NoiseSchedule> {
        let touched = workload.touched_attributes();
        if touched.len() == workload.domain().len() {
            return self.inner.noise_schedule(workload);
        }
        self.inner
            .noise_schedule(&workload.on_attributes(&touched).ok()?)
    }

    fn counts_suffice(&self) -> bool {
        self.inner.counts_suffice()
    }

    /// The inner mechanism's release from the counts of the workload over the touched
    /// attributes, as [`Mechanism::release`] here runs it: the restriction keeps the
    /// workload's query order and every count ([`MarginalWorkload::on_attributes`]), so the
    /// counts are passed as they are, and the release (answers, synthetic records over the
    /// touched attributes, notes) is the one from the records.
    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &W,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.on_touched(workload, |inner, w| inner.release_counts(counts, n, w, rng))
    }

    /// The inner mechanism's plan for the workload over the touched attributes, lifted back
    /// to the workload's domain ([`crate::CountingPlan::lifted`]): each table over the same
    /// attributes in the same order, so a source counting it on the full data gives the
    /// inner plan's counts on the restricted data.
    fn counting_plan(&self, workload: &W) -> Result<Option<crate::CountingPlan>> {
        let domain = workload.domain();
        let touched = workload.touched_attributes();
        if touched.len() == domain.len() {
            return self.inner.counting_plan(workload);
        }
        let sub_workload = workload.on_attributes(&touched)?;
        self.inner
            .counting_plan(&sub_workload)?
            .map(|plan| plan.lifted(domain, &touched))
            .transpose()
    }

    /// The inner mechanism's release from its plan's counts for the workload over the
    /// touched attributes: the lifted plan's counts are the inner plan's counts
    /// ([`Self::counting_plan`]), so they are passed as they are, and the release is the one
    /// from the records.
    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &W,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.on_touched(workload, |inner, w| {
            inner.release_planned(counts, n, w, rng)
        })
    }

    /// The inner mechanism's bound for the workload over the touched attributes, as it
    /// runs ([`Mechanism::release`] here).
    fn stated_error_bound(&self, workload: &W, n: usize) -> Option<crate::ErrorBound> {
        let touched = workload.touched_attributes();
        if touched.len() == workload.domain().len() {
            return self.inner.stated_error_bound(workload, n);
        }
        let sub = workload.on_attributes(&touched).ok()?;
        self.inner.stated_error_bound(&sub, n)
    }

    /// The inner mechanism's checks on the workload over the touched attributes, as it runs
    /// ([`Mechanism::release`] here); the restriction keeps the number of records.
    fn check_inputs(&self, workload: &W, public_n: Option<usize>) -> Result<()> {
        let touched = workload.touched_attributes();
        if touched.len() == workload.domain().len() {
            return self.inner.check_inputs(workload, public_n);
        }
        self.inner
            .check_inputs(&workload.on_attributes(&touched)?, public_n)
    }

    fn release(&self, data: &Dataset, workload: &W, rng: &mut dyn CryptoRng) -> Result<Release> {
        let domain = workload.domain();
        let touched = workload.touched_attributes();
        if data.domain() != domain || touched.len() == domain.len() {
            // another domain is the inner mechanism's error to report
            return self.inner.release(data, workload, rng);
        }
        let names: Vec<&str> = touched.iter().map(|&a| domain.name(a)).collect();
        let sub_data = data.select_attributes(&names)?;
        let sub_workload = workload.on_attributes(&touched)?;
        let release = self.inner.release(&sub_data, &sub_workload, rng)?;
        Ok(restricted_release(release, domain, &touched))
    }
}

/// A release of the inner mechanism over the `touched` attributes of `domain`, with the note
/// saying so (shared by the release from records and from counts).
fn restricted_release(mut release: Release, domain: &Domain, touched: &[usize]) -> Release {
    let names: Vec<&str> = touched.iter().map(|&a| domain.name(a)).collect();
    release.diagnostics.notes.push(format!(
        "ran over the {} of {} attributes the workload touches ({}): each record restricted \
         to them, which keeps neighbouring datasets neighbouring under the same relation, so \
         the guarantee is unchanged{}",
        touched.len(),
        domain.len(),
        names.join(", "),
        if release.synthetic.is_some() {
            "; the synthetic records have only these columns"
        } else {
            ""
        }
    ));
    release
}

/// A marginal mechanism offered for workloads chosen at run time ([`AnyWorkload`]): it
/// releases marginal workloads exactly as `inner` does and refuses every other class with
/// [`crate::MechanismError::UnsupportedQueryClass`] before reading any data. The
/// guarantee is `inner`'s.
pub struct ForQueryClasses {
    inner: Box<dyn Mechanism>,
}

impl ForQueryClasses {
    /// Wrap the marginal mechanism `inner`.
    pub fn marginals_only(inner: Box<dyn Mechanism>) -> Self {
        ForQueryClasses { inner }
    }

    /// `workload` as marginals, or the refusal of its class (a public check: the release,
    /// its counts variant and [`Mechanism::check_inputs`] all refuse through here).
    fn marginals<'w>(&self, workload: &'w AnyWorkload) -> Result<&'w MarginalWorkload> {
        workload
            .as_marginals()
            .ok_or_else(|| crate::MechanismError::UnsupportedQueryClass {
                mechanism: self.inner.name(),
                class: workload.class(),
                supported: QueryClass::Marginals.key().into(),
            })
    }
}

impl Mechanism<AnyWorkload> for ForQueryClasses {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn certificate(&self) -> PrivacyCertificate {
        self.inner.certificate()
    }

    fn produces_synthetic(&self) -> bool {
        self.inner.produces_synthetic()
    }

    fn works_over_a_universe(&self) -> bool {
        self.inner.works_over_a_universe()
    }

    fn count_noise(&self, workload: &AnyWorkload) -> Option<crate::noise_stats::CountNoise> {
        workload
            .as_marginals()
            .and_then(|w| self.inner.count_noise(w))
    }

    fn noise_schedule(&self, workload: &AnyWorkload) -> Option<crate::NoiseSchedule> {
        workload
            .as_marginals()
            .and_then(|w| self.inner.noise_schedule(w))
    }

    fn stated_error_bound(&self, workload: &AnyWorkload, n: usize) -> Option<crate::ErrorBound> {
        workload
            .as_marginals()
            .and_then(|w| self.inner.stated_error_bound(w, n))
    }

    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        self.inner.step_audited()
    }

    fn counts_suffice(&self) -> bool {
        self.inner.counts_suffice()
    }

    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &AnyWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.inner
            .release_counts(counts, n, self.marginals(workload)?, rng)
    }

    /// The inner mechanism's plan for a marginal workload; any other class is refused.
    fn counting_plan(&self, workload: &AnyWorkload) -> Result<Option<crate::CountingPlan>> {
        self.inner.counting_plan(self.marginals(workload)?)
    }

    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &AnyWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.inner
            .release_planned(counts, n, self.marginals(workload)?, rng)
    }

    /// The inner mechanism's checks on a marginal workload; any other class is refused as
    /// [`Mechanism::release`] refuses it.
    fn check_inputs(&self, workload: &AnyWorkload, public_n: Option<usize>) -> Result<()> {
        self.inner.check_inputs(self.marginals(workload)?, public_n)
    }

    fn release(
        &self,
        data: &Dataset,
        workload: &AnyWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        self.inner.release(data, self.marginals(workload)?, rng)
    }
}
