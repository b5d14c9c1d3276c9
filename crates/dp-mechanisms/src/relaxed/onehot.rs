//! Running a binary-only marginal mechanism on categorical data through a one-hot encoding.
//!
//! The relaxed projection and boosting (seed 000) work on parities of binary attributes.
//! Seed 000 (Dwork, Nikolov and Talwar 2014, §1) handles a categorical table by one-hot
//! encoding it: a marginal cell becomes a conjunction of bits, i.e. one cell of a marginal
//! over bits. [`OneHotEncoded`] does that with [`dp_queries::OneHotMarginals`]: it encodes the
//! data and the workload, runs the inner mechanism on the bit tables and reads the source
//! cells back.
//!
//! **Privacy.** The encoding maps each record to its bits, so it maps a dataset to one of
//! the same size and neighbouring datasets (one record added, removed or replaced) to
//! neighbouring datasets under the same relation; the read-back is post-processing. The inner
//! mechanism's guarantee therefore holds for the composite with the same parameters and
//! relation, and the certificate is the inner mechanism's.
//!
//! **Counts.** Every cell of a bit table is an event on one source table's attributes, so the
//! bit workload's counts are a function of the workload's counts
//! ([`dp_queries::OneHotMarginals::bit_counts`]): with an inner mechanism that needs only
//! counts (the relaxed projection, boosting) the composite needs only the workload's counts
//! too, and releases from counts streamed or counted by an engine.
//!
//! **Cost.** The bit workload has one table per combination of values of a table's
//! non-binary attributes (adult's 91 two-way tables become 148 137 bit tables over 588 bits),
//! and the inner mechanism measures every parity those tables need; plans beyond
//! [`dp_queries::MAX_BIT_TABLES`] bit tables are refused before the data is read.

use dp_queries::{Dataset, MarginalWorkload, OneHotMarginals};
use rand::CryptoRng;

use crate::{Mechanism, PrivacyCertificate, Release, Result, StepAudited};

/// A marginal mechanism for binary attributes run on the one-hot encoding of the data (module
/// docs). On a workload whose touched attributes are all binary it is the inner mechanism
/// unchanged (and offers the inner mechanism's step audit).
#[derive(Clone, Debug)]
pub struct OneHotEncoded<M> {
    inner: M,
}

impl<M> OneHotEncoded<M> {
    /// Wrap `inner`.
    pub fn new(inner: M) -> Self {
        OneHotEncoded { inner }
    }

    /// The inner mechanism.
    pub fn inner(&self) -> &M {
        &self.inner
    }
}

impl<M: Mechanism<MarginalWorkload>> Mechanism<MarginalWorkload> for OneHotEncoded<M> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn certificate(&self) -> PrivacyCertificate {
        self.inner.certificate()
    }

    /// The inner mechanism's steps: the step audit runs on binary data, where this wrapper is
    /// the inner mechanism unchanged.
    fn step_audited(&self) -> Option<&dyn StepAudited> {
        self.inner.step_audited()
    }

    /// The encoding's plan (refused beyond [`dp_queries::MAX_BIT_TABLES`] bit tables), then
    /// the inner mechanism's checks on the bit workload it would run on; the encoding keeps
    /// the number of records.
    fn check_inputs(&self, workload: &MarginalWorkload, public_n: Option<usize>) -> Result<()> {
        let plan = OneHotMarginals::new(workload)?;
        if plan.is_binary() {
            return self.inner.check_inputs(workload, public_n);
        }
        self.inner.check_inputs(plan.bit_workload(), public_n)
    }

    /// The inner mechanism's: the bit tables' counts are a function of the workload's
    /// counts ([`OneHotMarginals::bit_counts`]).
    fn counts_suffice(&self) -> bool {
        self.inner.counts_suffice()
    }

    /// The inner mechanism's release from the bit workload's counts, derived from the
    /// workload's counts alone ([`OneHotMarginals::bit_counts`]: the counts of the encoded
    /// data), read back as [`Mechanism::release`] reads it.
    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        let plan = OneHotMarginals::new(workload)?;
        if plan.is_binary() {
            return self.inner.release_counts(counts, n, workload, rng);
        }
        let counts = crate::counts::marginal_counts(counts, n, workload)?;
        let bits = crate::engine::exact_counts(&plan.bit_counts(&counts)?)?;
        let release = self
            .inner
            .release_counts(bits, n, plan.bit_workload(), rng)?;
        read_back(&plan, workload, release)
    }

    /// On categorical data: the records encoded and the inner mechanism run on them, or,
    /// when the inner mechanism needs only counts, the workload counted and
    /// [`Mechanism::release_counts`] (the same release: the bit counts are the encoded
    /// data's).
    fn release(
        &self,
        data: &Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        // public plan first: a plan that is too large is refused before the data is read
        let plan = OneHotMarginals::new(workload)?;
        if plan.is_binary() {
            return self.inner.release(data, workload, rng);
        }
        if self.inner.counts_suffice() {
            crate::perturbation::check_data(data, workload)?;
            let counts = dp_queries::Workload::count_all(workload, data)?;
            return self.release_counts(counts, data.n(), workload, rng);
        }
        let bits = plan.encode(data)?;
        let release = self.inner.release(&bits, plan.bit_workload(), rng)?;
        read_back(&plan, workload, release)
    }
}

/// The source workload's answers read back from a release on the bit workload, without its
/// synthetic records (they are over the bits), with a note on the encoding.
fn read_back(
    plan: &OneHotMarginals,
    workload: &MarginalWorkload,
    mut release: Release,
) -> Result<Release> {
    release.answers = plan.read_back(&release.answers)?;
    release.synthetic = None;
    release.diagnostics.notes.push(format!(
        "ran on the one-hot encoding of the {} attributes the workload touches: {} bits, \
         {} bit tables ({} cells, of which the workload's {} are read back); the encoding \
         maps each record to its bits, so the guarantee is unchanged",
        workload.touched_attributes().len(),
        plan.bits(),
        plan.bit_workload().len(),
        plan.bit_workload().num_queries(),
        workload.num_queries()
    ));
    Ok(release)
}
