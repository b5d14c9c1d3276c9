//! Post-processing of noisy marginal answers. Post-processing never costs privacy
//! (Dwork–Roth Prop. 2.1): these functions see only released values.

use dp_queries::MarginalWorkload;
use serde::{Deserialize, Serialize};

/// What to do with noisy answers before returning them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PostProcessing {
    /// Return the noisy answers as they are (unbiased, may be negative or exceed one).
    #[default]
    None,
    /// Replace each marginal table by its Euclidean projection onto the probability simplex:
    /// every cell in [0, 1], each table summing to one. Among all such tables it is the
    /// closest to the noisy one in ℓ2, so it never increases a table's ℓ2 error.
    SimplexProjection,
}

impl std::fmt::Display for PostProcessing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PostProcessing::None => "none",
            PostProcessing::SimplexProjection => {
                "each table projected onto the probability simplex"
            }
        })
    }
}

/// Apply `post` in place to `answers` (workload order).
pub fn apply(post: PostProcessing, workload: &MarginalWorkload, answers: &mut [f64]) {
    let mut offsets: Vec<usize> = (0..workload.len()).map(|j| workload.offset(j)).collect();
    offsets.push(workload.num_queries());
    apply_to_tables(post, &offsets, answers);
}

/// Apply `post` in place to `answers` laid out as tables `offsets[j]..offsets[j + 1]`
/// ([`dp_queries::AnswerLayout::Tables`]); offsets beyond `answers` are ignored.
pub fn apply_to_tables(post: PostProcessing, offsets: &[usize], answers: &mut [f64]) {
    if post == PostProcessing::SimplexProjection {
        for w in offsets.windows(2) {
            if let Some(table) = answers.get_mut(w[0]..w[1]) {
                project_onto_simplex(table);
            }
        }
    }
}

/// Euclidean projection of `v` onto {x : x ≥ 0, Σx = 1}, in place.
///
/// The projection is x_i = max(v_i − τ, 0) with τ the unique value making the sum one; τ is
/// found by sorting (Held, Wolfe and Crowder 1974; O(k log k)). An empty slice is left as it
/// is.
pub fn project_onto_simplex(v: &mut [f64]) {
    if v.is_empty() {
        return;
    }
    let mut sorted: Vec<f64> = v.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let mut cumulative = 0.0;
    let mut tau = 0.0;
    for (i, &s) in sorted.iter().enumerate() {
        cumulative += s;
        let candidate = (cumulative - 1.0) / (i + 1) as f64;
        if s - candidate > 0.0 {
            tau = candidate;
        }
    }
    for x in v.iter_mut() {
        *x = (*x - tau).max(0.0);
    }
}

/// A marginal mechanism whose answers are post-processed by `post` before they are returned
/// (e.g. the relaxed projection, whose answers need not be tables of proportions, with each
/// table projected onto the simplex; issue #26 item 5). Post-processing sees only the
/// released answers, so the guarantee is the inner mechanism's (Dwork–Roth Prop. 2.1); a
/// note says what was applied. Every other property is the inner mechanism's, except the
/// stated error bound, which is not carried over (it is stated for the unprocessed answers).
pub struct PostProcessed {
    inner: Box<dyn crate::Mechanism>,
    post: PostProcessing,
}

impl PostProcessed {
    /// `inner` with `post` applied to its answers.
    pub fn new(inner: Box<dyn crate::Mechanism>, post: PostProcessing) -> Self {
        PostProcessed { inner, post }
    }

    fn finish(&self, mut release: crate::Release, workload: &MarginalWorkload) -> crate::Release {
        if self.post != PostProcessing::None {
            apply(self.post, workload, &mut release.answers);
            release
                .diagnostics
                .notes
                .push(format!("post-processing: {} (no extra budget)", self.post));
        }
        release
    }
}

impl crate::Mechanism for PostProcessed {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn certificate(&self) -> crate::PrivacyCertificate {
        self.inner.certificate()
    }

    fn produces_synthetic(&self) -> bool {
        self.inner.produces_synthetic()
    }

    fn works_over_a_universe(&self) -> bool {
        self.inner.works_over_a_universe()
    }

    fn noise_schedule(&self, workload: &MarginalWorkload) -> Option<crate::NoiseSchedule> {
        self.inner.noise_schedule(workload)
    }

    fn step_audited(&self) -> Option<&dyn crate::StepAudited> {
        self.inner.step_audited()
    }

    fn check_inputs(
        &self,
        workload: &MarginalWorkload,
        public_n: Option<usize>,
    ) -> crate::Result<()> {
        self.inner.check_inputs(workload, public_n)
    }

    fn counts_suffice(&self) -> bool {
        self.inner.counts_suffice()
    }

    fn release_counts(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn rand::CryptoRng,
    ) -> crate::Result<crate::Release> {
        let release = self.inner.release_counts(counts, n, workload, rng)?;
        Ok(self.finish(release, workload))
    }

    fn counting_plan(
        &self,
        workload: &MarginalWorkload,
    ) -> crate::Result<Option<crate::CountingPlan>> {
        self.inner.counting_plan(workload)
    }

    fn release_planned(
        &self,
        counts: Vec<i64>,
        n: usize,
        workload: &MarginalWorkload,
        rng: &mut dyn rand::CryptoRng,
    ) -> crate::Result<crate::Release> {
        let release = self.inner.release_planned(counts, n, workload, rng)?;
        Ok(self.finish(release, workload))
    }

    fn release(
        &self,
        data: &dp_queries::Dataset,
        workload: &MarginalWorkload,
        rng: &mut dyn rand::CryptoRng,
    ) -> crate::Result<crate::Release> {
        let release = self.inner.release(data, workload, rng)?;
        Ok(self.finish(release, workload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hand_examples() {
        let mut v = vec![0.5, 0.5];
        project_onto_simplex(&mut v);
        assert_eq!(v, vec![0.5, 0.5]);
        // (1.5, 0.5): τ = 0.5 → (1, 0)
        let mut v = vec![1.5, 0.5];
        project_onto_simplex(&mut v);
        assert_eq!(v, vec![1.0, 0.0]);
        // (0.2, 0.2, -0.4): τ = (0.4 - 1)/2 = -0.3 → (0.5, 0.5, 0)
        let mut v = vec![0.2, 0.2, -0.4];
        project_onto_simplex(&mut v);
        assert!((v[0] - 0.5).abs() < 1e-15 && (v[1] - 0.5).abs() < 1e-15 && v[2] == 0.0);
    }

    proptest! {
        /// The projection lands in the simplex and is at least as close to every simplex
        /// point as the input (the projection inequality, checked on random simplex points).
        #[test]
        fn lands_in_simplex_and_is_closer(v in prop::collection::vec(-2.0f64..2.0, 1..12),
                                          w in prop::collection::vec(0.0f64..1.0, 12)) {
            let mut p = v.clone();
            project_onto_simplex(&mut p);
            let sum: f64 = p.iter().sum();
            prop_assert!((sum - 1.0).abs() < 1e-12);
            prop_assert!(p.iter().all(|&x| (0.0..=1.0 + 1e-12).contains(&x)));
            let total: f64 = w[..v.len()].iter().sum::<f64>().max(1e-9);
            let z: Vec<f64> = w[..v.len()].iter().map(|x| x / total).collect();
            let d = |a: &[f64]| a.iter().zip(&z).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
            prop_assert!(d(&p) <= d(&v) + 1e-12);
        }
    }
}
