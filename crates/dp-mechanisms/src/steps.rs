//! White-box decomposition of a composed mechanism into its randomized steps, for the
//! per-step privacy audit (dp-bench `audit::audit_steps`).
//!
//! An iterative mechanism (MWEM, IC-MW, DualQuery, chaining for worst-case error) is an
//! *adaptive composition* of small steps: in every round an exponential-mechanism selection
//! (or a DualQuery query sample) and a noisy measurement, each private **for any fixed value
//! of the public history** before it (the state built from earlier outputs). Its guarantee is
//! the composition of the per-step guarantees. A [`StepDecomposition`] makes both halves of
//! that argument checkable:
//!
//! * [`AuditedStep`]: one step with its history fixed — a label, the per-step guarantee the
//!   mechanism's analysis claims for it, and a runner `(data, rng) → scalars` that calls the
//!   **same code** the release uses for that step (so the audit tests the product, not a
//!   copy). The history is produced by running the earlier rounds on a public reference
//!   dataset with a fixed seed ([`StepRequest`]); since the step is private for every fixed
//!   history, fixing it this way is sound.
//! * [`StepLoss`] entries: the per-step losses of the **whole** run, whose composition
//!   ([`StepDecomposition::composed`], dp-core's composition functions) must not exceed the
//!   certificate. A per-step audit cannot see a wrong budget split; this check can.

use std::sync::Arc;

use dp_core::{Neighbouring, PrivacyLoss, advanced_composition, compose_all, compose_copies};
use dp_queries::{Dataset, Domain, MarginalWorkload};
use rand::CryptoRng;

use crate::exact_audit::StepPrimitive;
use crate::{MechanismError, Result};

/// The runner of one step: its output on `data` as scalar statistics (a selection → the
/// one-hot indicator vector over the candidates; a noisy measurement → the noisy value).
pub type StepRunner = Box<dyn Fn(&Dataset, &mut dyn CryptoRng) -> Result<Vec<f64>> + Send + Sync>;

/// A step's **deterministic input** on a dataset, its history fixed: the candidates' scores
/// (a selection) or the exact counts (a measurement) — the vector whose sensitivity the
/// step's [`StepPrimitive`] declares. It must be the release's own function for the step
/// (the same one the runner calls), so that the exact audit derives the sensitivity by
/// brute force over neighbouring datasets instead of trusting the declaration
/// ([`crate::exact_audit::derive_sensitivity`], issue #23 §2).
pub type StepInput = Arc<dyn Fn(&Dataset) -> Result<Vec<f64>> + Send + Sync>;

/// One randomized step of a composed mechanism, its public inputs (history) fixed.
pub struct AuditedStep {
    /// What the step is, e.g. `"mwem round 3: exponential-mechanism selection"`.
    pub label: String,
    /// The per-step guarantee the mechanism's analysis states for this step (the audited
    /// claim), e.g. pure ε₁ for an exponential mechanism.
    pub claimed: PrivacyLoss,
    /// The step's share in the mechanism's accounting (an entry of
    /// [`StepDecomposition::losses`]); implied by `claimed` for the step's primitive: e.g. an
    /// ε₁-DP **exponential mechanism** is ε₁²/8-zCDP (ε₁-bounded range, Cesar–Rogers 2021
    /// Lemma 3.2), but an ε₁-DP **permute-and-flip** only ε₁²/2-zCDP (pure ⇒ zCDP, Bun–Steinke
    /// 2016 Prop. 1.4; it is not bounded range, issue #9). Checked exactly for discrete steps
    /// by [`crate::exact_audit`].
    pub accounted: PrivacyLoss,
    /// The neighbouring relation of the claim.
    pub neighbouring: Neighbouring,
    /// Names of the runner's output scalars (for reports).
    pub outputs: Vec<String>,
    /// The step's randomized primitive with the parameters the release uses, for the exact
    /// divergence audit ([`crate::exact_audit`]); `None` if it has no exact check.
    pub primitive: Option<StepPrimitive>,
    /// The primitive's input on a dataset ([`StepInput`]), for the brute-force derivation of
    /// its sensitivity; `None` if the step has none.
    pub input: Option<StepInput>,
    runner: StepRunner,
}

impl std::fmt::Debug for AuditedStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditedStep")
            .field("label", &self.label)
            .field("claimed", &self.claimed)
            .field("accounted", &self.accounted)
            .field("neighbouring", &self.neighbouring)
            .field("outputs", &self.outputs)
            .field("primitive", &self.primitive)
            .field(
                "input",
                &self.input.as_ref().map(|_| "fn(&Dataset) -> Vec<f64>"),
            )
            .finish_non_exhaustive()
    }
}

impl AuditedStep {
    /// A step with its runner.
    pub fn new(
        label: impl Into<String>,
        claimed: PrivacyLoss,
        accounted: PrivacyLoss,
        outputs: Vec<String>,
        runner: StepRunner,
    ) -> Self {
        AuditedStep {
            label: label.into(),
            claimed,
            accounted,
            neighbouring: Neighbouring::ReplaceOne,
            outputs,
            primitive: None,
            input: None,
            runner,
        }
    }

    /// The same step with its claim stated for `neighbouring` (default replace-one).
    pub fn with_neighbouring(mut self, neighbouring: Neighbouring) -> Self {
        self.neighbouring = neighbouring;
        self
    }

    /// The same step with its primitive for the exact audit.
    pub fn with_primitive(mut self, primitive: StepPrimitive) -> Self {
        self.primitive = Some(primitive);
        self
    }

    /// The same step with the input of its primitive ([`StepInput`]).
    pub fn with_input(mut self, input: StepInput) -> Self {
        self.input = Some(input);
        self
    }

    /// Run the step once on `data`.
    pub fn run(&self, data: &Dataset, rng: &mut dyn CryptoRng) -> Result<Vec<f64>> {
        (self.runner)(data, rng)
    }
}

/// `count` steps of the whole run, each with guarantee `loss`.
#[derive(Clone, Debug, PartialEq)]
pub struct StepLoss {
    /// What the steps are (e.g. `"selection, rounds 1..15"`).
    pub what: String,
    /// How many.
    pub count: u64,
    /// The guarantee of each.
    pub loss: PrivacyLoss,
}

/// How a mechanism composes its steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepComposition {
    /// Basic composition ([`dp_core::compose_all`]): ε's add (pure, (ε, δ)), ρ's add (zCDP).
    Basic,
    /// Advanced composition ([`dp_core::advanced_composition`]) of all steps with positive
    /// loss at the largest per-step ε (pure steps only), with this δ′.
    Advanced {
        /// δ′ of the theorem.
        delta_prime: f64,
    },
}

/// The audited steps of a mechanism and the per-step losses of its whole run.
#[derive(Debug)]
pub struct StepDecomposition {
    /// The audited rounds (1-based).
    pub rounds: Vec<usize>,
    /// The steps to audit (a few rounds), histories fixed.
    pub steps: Vec<AuditedStep>,
    /// Every step of the whole run, with its loss.
    pub losses: Vec<StepLoss>,
    /// How [`Self::losses`] compose.
    pub composition: StepComposition,
    /// The total the mechanism's own accounting states for this run (its plan), which the
    /// composition must reproduce.
    pub accounting: PrivacyLoss,
}

impl StepDecomposition {
    /// The composition of [`Self::losses`] by [`Self::composition`].
    pub fn composed(&self) -> Result<PrivacyLoss> {
        match self.composition {
            StepComposition::Basic => {
                let mut total = PrivacyLoss::Pure { epsilon: 0.0 };
                for l in &self.losses {
                    // l.count copies, composed by doubling (exact sums, rounded up)
                    let acc = compose_copies(&l.loss, l.count)?;
                    total = compose_all(&[total, acc])?;
                }
                Ok(total)
            }
            StepComposition::Advanced { delta_prime } => {
                let mut eps0 = 0.0f64;
                let mut k = 0u64;
                for l in &self.losses {
                    match l.loss.validate()? {
                        PrivacyLoss::Pure { epsilon } => {
                            if epsilon > 0.0 && l.count > 0 {
                                eps0 = eps0.max(epsilon);
                                k = k.saturating_add(l.count);
                            }
                        }
                        other => {
                            return Err(MechanismError::InvalidParameter {
                                name: "step loss",
                                value: other.to_string(),
                                reason: "advanced composition is applied to pure steps".into(),
                            });
                        }
                    }
                }
                if k == 0 {
                    return Ok(PrivacyLoss::approx(0.0, delta_prime)?);
                }
                Ok(advanced_composition(eps0, 0.0, k, delta_prime)?)
            }
        }
    }
}

/// How to fix the histories of the audited steps.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRequest {
    /// Seed of the reference run that produces the histories.
    pub seed: u64,
    /// Rounds (1-based) to audit; empty: the mechanism's default (its first and last
    /// round, or the first round with a positive per-step loss and the last).
    pub rounds: Vec<usize>,
    /// The query whose noisy measurement is audited in each audited round, in place of the
    /// round's selection (any fixed choice is a valid history); `None`: the reference run's
    /// selection.
    pub measured_query: Option<usize>,
}

impl StepRequest {
    /// Default rounds, the reference run's selections, seed `seed`.
    pub fn new(seed: u64) -> Self {
        StepRequest {
            seed,
            rounds: Vec::new(),
            measured_query: None,
        }
    }
}

/// A mechanism that can be decomposed into audited steps (see the module docs).
pub trait StepAudited: Send + Sync {
    /// The decomposition of a release for `workload` on datasets of `reference.n()` records
    /// (`n` is public under replace-one): histories from `reference` per `request`. The
    /// runners refuse data of another size or domain.
    fn step_decomposition(
        &self,
        reference: &Dataset,
        workload: &MarginalWorkload,
        request: &StepRequest,
    ) -> Result<StepDecomposition>;
}

/// The one-hot indicator of `index` among `len` candidates.
pub(crate) fn one_hot(index: usize, len: usize) -> Vec<f64> {
    let mut v = vec![0.0; len];
    if let Some(x) = v.get_mut(index) {
        *x = 1.0;
    }
    v
}

/// Refuse data a runner was not built for (another domain or another public `n`).
pub(crate) fn check_step_data(data: &Dataset, workload: &MarginalWorkload, n: usize) -> Result<()> {
    check_step_data_under(data, workload.domain(), n, Neighbouring::ReplaceOne)
}

/// Refuse data a runner was not built for: another domain, or under replace-one (where `n`
/// is public) another `n`. Under add/remove any size is accepted.
pub(crate) fn check_step_data_under(
    data: &Dataset,
    domain: &Domain,
    n: usize,
    neighbouring: Neighbouring,
) -> Result<()> {
    let n_differs = neighbouring == Neighbouring::ReplaceOne && data.n() != n;
    if data.domain() != domain || n_differs {
        return Err(MechanismError::Data {
            reason: format!(
                "a step runner built for the workload's domain (n = {n} under replace-one) \
                 got other data (n = {})",
                data.n()
            ),
        });
    }
    Ok(())
}

/// The audited rounds: `requested` if non-empty (each in `1..=total`), else `defaults`.
pub(crate) fn audited_rounds(
    requested: &[usize],
    defaults: &[usize],
    total: usize,
) -> Result<Vec<usize>> {
    let r: Vec<usize> = if requested.is_empty() {
        defaults.to_vec()
    } else {
        requested.to_vec()
    };
    if let Some(bad) = r.iter().find(|&&t| t == 0 || t > total) {
        return Err(MechanismError::InvalidParameter {
            name: "rounds",
            value: bad.to_string(),
            reason: format!("audited rounds must be in 1..={total}"),
        });
    }
    let mut r = r;
    r.sort_unstable();
    r.dedup();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(losses: Vec<StepLoss>, composition: StepComposition) -> StepDecomposition {
        StepDecomposition {
            rounds: vec![],
            steps: vec![],
            losses,
            composition,
            accounting: PrivacyLoss::Pure { epsilon: 0.0 },
        }
    }

    #[test]
    fn basic_composition_by_hand() {
        let l = |count, epsilon| StepLoss {
            what: "x".into(),
            count,
            loss: PrivacyLoss::Pure { epsilon },
        };
        // 3 × 0.25 + 5 × 0.5 = 3.25 (dyadic, exact)
        let c = dec(vec![l(3, 0.25), l(5, 0.5)], StepComposition::Basic)
            .composed()
            .unwrap();
        assert_eq!(c, PrivacyLoss::Pure { epsilon: 3.25 });
        // zCDP: 4 × 0.125 = 0.5
        let z = dec(
            vec![StepLoss {
                what: "z".into(),
                count: 4,
                loss: PrivacyLoss::Zcdp { rho: 0.125 },
            }],
            StepComposition::Basic,
        )
        .composed()
        .unwrap();
        assert_eq!(z, PrivacyLoss::Zcdp { rho: 0.5 });
    }

    #[test]
    fn advanced_uses_largest_epsilon_and_positive_count() {
        let losses = vec![
            StepLoss {
                what: "free".into(),
                count: 10,
                loss: PrivacyLoss::Pure { epsilon: 0.0 },
            },
            StepLoss {
                what: "a".into(),
                count: 3,
                loss: PrivacyLoss::Pure { epsilon: 0.1 },
            },
            StepLoss {
                what: "b".into(),
                count: 2,
                loss: PrivacyLoss::Pure { epsilon: 0.2 },
            },
        ];
        let got = dec(losses, StepComposition::Advanced { delta_prime: 1e-6 })
            .composed()
            .unwrap();
        let want = advanced_composition(0.2, 0.0, 5, 1e-6).unwrap();
        assert_eq!(got, want);
    }

    /// The round-1 selection step is the release's own round-1 selection: with the same
    /// seed, the step runner picks the query the release's trace records (MWEM, IC-MW and
    /// chaining-worst-case draw their round-1 selection first; adaptive projection draws
    /// its 1-way measurements first, which the audit's 1-way step replays). Checked over 30
    /// seeds on a small dataset.
    #[test]
    fn round_one_selection_step_is_the_release_code() {
        use crate::{AdaptiveProjectionParams, ChainingWorstCaseParams, IcParams, MwemParams};
        use dp_queries::Domain;
        let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let cols = vec![vec![0, 1, 1, 0, 1, 1, 0, 1], vec![0, 2, 2, 1, 2, 0, 2, 2]];
        let data = Dataset::from_columns(domain, cols).unwrap();
        let request = StepRequest {
            rounds: vec![1],
            ..StepRequest::new(5)
        };
        let mwem = MwemParams::new(PrivacyLoss::Pure { epsilon: 6.0 })
            .check()
            .unwrap();
        let ic = IcParams::new(PrivacyLoss::Pure { epsilon: 20.0 })
            .check()
            .unwrap();
        let d_mwem = mwem.step_decomposition(&data, &w, &request).unwrap();
        let d_ic = ic.step_decomposition(&data, &w, &request).unwrap();
        let argmax = |v: Vec<f64>| v.iter().position(|&x| x == 1.0).unwrap();
        for seed in 0..30 {
            let mut r1 = dp_core::seeded_rng(seed);
            let (_, trace) = mwem.release_with_trace(&data, &w, &mut r1).unwrap();
            let mut r2 = dp_core::seeded_rng(seed);
            let q = argmax(d_mwem.steps[0].run(&data, &mut r2).unwrap());
            assert_eq!(q, trace.selected[0], "mwem seed {seed}");
            let mut r1 = dp_core::seeded_rng(seed);
            let (_, trace, _) = ic.release_with_trace(&data, &w, &mut r1).unwrap();
            let mut r2 = dp_core::seeded_rng(seed);
            let q = argmax(d_ic.steps[0].run(&data, &mut r2).unwrap());
            assert_eq!(q, trace.queries[0], "ic seed {seed}");
        }
        // runners refuse another n (n is public under replace-one)
        let small =
            Dataset::from_columns(w.domain().clone(), vec![vec![0, 1], vec![0, 2]]).unwrap();
        assert!(
            d_mwem.steps[0]
                .run(&small, &mut dp_core::seeded_rng(0))
                .is_err()
        );
        // chaining-worst-case: the first non-trivial level's round 1 (a uniform state, so
        // the history does not depend on the reference seed)
        let cwc = ChainingWorstCaseParams::new(PrivacyLoss::zcdp(2.0).unwrap())
            .alpha(0.2)
            .rounds(5)
            .check()
            .unwrap();
        let d_cwc = cwc.step_decomposition(&data, &w, &request).unwrap();
        for seed in 0..30 {
            let mut r1 = dp_core::seeded_rng(seed);
            let (_, _, noises) = cwc.release_with_noise(&data, &w, &mut r1).unwrap();
            let level = noises.iter().find(|l| !l.is_empty()).unwrap();
            let mut r2 = dp_core::seeded_rng(seed);
            let q = argmax(d_cwc.steps[0].run(&data, &mut r2).unwrap());
            assert_eq!(q, level[0].0, "chaining-worst-case seed {seed}");
        }
        assert!(
            d_cwc.steps[0]
                .run(&small, &mut dp_core::seeded_rng(0))
                .is_err()
        );
        // adaptive projection: its round-1 state follows from the 1-way and direct
        // measurements, so the reference run uses the release's seed; with attributes of
        // equal size, the audit's 1-way step run once per attribute (and its direct step
        // once per direct table) draws what the release draws
        let domain3 = Domain::new(vec![("a".into(), 2), ("b".into(), 2), ("c".into(), 2)]).unwrap();
        let w3 = MarginalWorkload::all_kway(&domain3, 2).unwrap();
        let cols3 = vec![
            vec![0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0],
            vec![0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1],
            vec![1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0],
        ];
        let data3 = Dataset::from_columns(domain3, cols3).unwrap();
        // (the low-budget rule off: the audit's one 1-way step is the first 1-way table's
        // calibration, which the others share only when the budget is not low; and the direct
        // split off: its one direct step is the first direct table's calibration, which the
        // others share only at the equal split)
        let mut ap =
            AdaptiveProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap()).direct_l1_split(false);
        ap.low_budget_rounds_per_attribute = ap.rounds_per_attribute;
        let ap = ap.check().unwrap();
        for seed in 0..30 {
            let run = ap.run(&data3, &w3, &mut dp_core::seeded_rng(seed)).unwrap();
            let request = StepRequest {
                rounds: vec![1],
                ..StepRequest::new(seed)
            };
            let d_ap = ap.step_decomposition(&data3, &w3, &request).unwrap();
            let mut r2 = dp_core::seeded_rng(seed);
            for _ in 0..3 {
                d_ap.steps[0].run(&data3, &mut r2).unwrap();
            }
            // then the direct measurements of the cheap workload tables (2×2 tables: cheap
            // or not by the noisy total, the same in the reference run with this seed),
            // replayed by the audit's direct step alike
            for _ in 0..run.direct.len() {
                d_ap.steps[1].run(&data3, &mut r2).unwrap();
            }
            let sel = &d_ap.steps[if run.direct.is_empty() { 1 } else { 2 }];
            let k = argmax(sel.run(&data3, &mut r2).unwrap());
            assert_eq!(
                sel.outputs[k],
                format!("selected {:?}", run.rounds[1].selected),
                "adaptive-projection seed {seed}"
            );
        }
    }

    /// The round-1 steps reproduce the release's round 1: with the reference run on the
    /// release's data and seed, the selection step and then the measurement step (of the
    /// reference run's selection) on one generator seeded alike return the release's
    /// round-1 query and noisy count (MWEM under pure and zCDP budgets, IC-MW,
    /// chaining-worst-case). 20 seeds each.
    #[test]
    fn round_one_steps_reproduce_the_release_trace() {
        use crate::{ChainingWorstCaseParams, IcParams, MwemParams};
        use dp_queries::Domain;
        let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let cols = vec![vec![0, 1, 1, 0, 1, 1, 0, 1], vec![0, 2, 2, 1, 2, 0, 2, 2]];
        let data = Dataset::from_columns(domain, cols).unwrap();
        let argmax = |v: Vec<f64>| v.iter().position(|&x| x == 1.0).unwrap();
        // the steps' (query, noisy count) of round 1 for a decomposition
        let replay = |d: &StepDecomposition, seed: u64| -> (usize, i64) {
            let mut rng = dp_core::seeded_rng(seed);
            let q = argmax(d.steps[0].run(&data, &mut rng).unwrap());
            let y = d.steps[1].run(&data, &mut rng).unwrap();
            assert_eq!(y.len(), 1);
            (q, y[0] as i64)
        };
        let mwems = [
            PrivacyLoss::Pure { epsilon: 6.0 },
            PrivacyLoss::Zcdp { rho: 0.5 },
        ]
        .map(|b| MwemParams::new(b).rounds(4).check().unwrap());
        let ic = IcParams::new(PrivacyLoss::Pure { epsilon: 20.0 })
            .alpha(0.3)
            .check()
            .unwrap();
        let cwc = ChainingWorstCaseParams::new(PrivacyLoss::zcdp(2.0).unwrap())
            .alpha(0.2)
            .rounds(5)
            .check()
            .unwrap();
        for seed in 0..20 {
            let request = StepRequest {
                rounds: vec![1],
                ..StepRequest::new(seed)
            };
            for mwem in &mwems {
                let (_, trace) = mwem
                    .release_with_trace(&data, &w, &mut dp_core::seeded_rng(seed))
                    .unwrap();
                let d = mwem.step_decomposition(&data, &w, &request).unwrap();
                let want = (trace.selected[0], trace.noisy_counts[0]);
                assert_eq!(replay(&d, seed), want, "mwem seed {seed}");
            }
            let (_, trace, _) = ic
                .release_with_trace(&data, &w, &mut dp_core::seeded_rng(seed))
                .unwrap();
            let d = ic.step_decomposition(&data, &w, &request).unwrap();
            let want = (trace.queries[0], trace.noisy_counts[0]);
            assert_eq!(replay(&d, seed), want, "ic seed {seed}");
            let (_, _, noises) = cwc
                .release_with_noise(&data, &w, &mut dp_core::seeded_rng(seed))
                .unwrap();
            let d = cwc.step_decomposition(&data, &w, &request).unwrap();
            let level = noises.iter().find(|l| !l.is_empty()).unwrap();
            assert_eq!(
                replay(&d, seed),
                level[0],
                "chaining-worst-case seed {seed}"
            );
        }
    }

    #[test]
    fn rounds_and_one_hot() {
        assert_eq!(audited_rounds(&[], &[1, 5], 5).unwrap(), vec![1, 5]);
        assert_eq!(audited_rounds(&[3, 3], &[1], 5).unwrap(), vec![3]);
        assert!(audited_rounds(&[6], &[1], 5).is_err());
        assert!(audited_rounds(&[0], &[1], 5).is_err());
        assert_eq!(one_hot(1, 3), vec![0.0, 1.0, 0.0]);
    }
}
