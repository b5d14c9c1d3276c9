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

    /// The noise schedule fixed before running, from public inputs only (the budget, the
    /// parameters, `workload` over its domain), for mechanisms that plan their noise in
    /// phases and rounds (adaptive projection: [`crate::NoiseSchedule`], issue #26 item 4);
    /// `None` for the others and where the workload's calibration fails (then
    /// [`Self::check_inputs`] says why).
    fn noise_schedule(&self, _workload: &W) -> Option<crate::NoiseSchedule> {
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

    /// Every check of [`Self::release`] that needs only public inputs: the parameters and
    /// the budget (in `self`), `workload` with its domain, and `public_n`, the number of
    /// records where it is public (`Some` only under replace-one neighbours; under add/remove
    /// n is private and callers pass `None`). The checks that need n are skipped without
    /// it. No data is read and no noise is drawn.
    ///
    /// The release runs the same code before its first noise draw, so an input that fails
    /// here fails there too, and a caller that charges a budget ledger calls this first: a
    /// release must never be charged and then fail for a reason that could be checked before
    /// the charge (the universe size limits, DualQuery's rounds on the public n, …). The
    /// default, for mechanisms with no such check, accepts.
    fn check_inputs(&self, _workload: &W, _public_n: Option<usize>) -> Result<()> {
        Ok(())
    }

    /// Whether the mechanism needs only the workload's exact counts and the number of
    /// records, not the records themselves (the answer-perturbation baselines, adaptive
    /// projection, the projection mechanism, MWEM, IC-MW, DualQuery, chaining for
    /// worst-case error, the relaxed projection and boosting): then [`Self::release_counts`]
    /// releases from a streaming count in bounded memory. Those mechanisms release from
    /// records by counting the workload and running the counts path, so the two releases
    /// are the same, draw for draw. A mechanism that needs the counts of other tables says
    /// so with [`Self::counting_plan`] instead ([`crate::DataAccess`] tells the three cases
    /// apart).
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

    /// The marginal tables the mechanism needs counted when the workload's own counts are
    /// not enough but counts of other tables are (issue #25 item 1; [`crate::plan`]): a
    /// [`crate::CountingPlan`] built from public inputs only (the parameters, the budget,
    /// `workload` with its domain), so that any source that counts a marginal workload can
    /// count it and [`Self::release_planned`] releases from those counts. `Ok(None)`: no
    /// plan — the mechanism reads the workload's counts ([`Self::counts_suffice`]) or the
    /// records. The default has no plan.
    ///
    /// Errors: the plan's public checks (e.g. a universe above its cap), the same error the
    /// release gives.
    fn counting_plan(&self, _workload: &W) -> Result<Option<crate::CountingPlan>> {
        Ok(None)
    }

    /// Release from the exact counts of the tables of [`Self::counting_plan`]`(workload)`
    /// (their query order, as [`MarginalWorkload::count_all`] gives them) of a dataset of `n`
    /// records: the same guarantee and the same release as [`Self::release`] on that
    /// dataset, draw for draw (a mechanism with a plan releases from records by counting its
    /// plan on them and running this path). The counts are refused unless they are the
    /// plan's tables of one dataset of `n` records. The default refuses.
    fn release_planned(
        &self,
        _counts: Vec<i64>,
        _n: usize,
        _workload: &W,
        _rng: &mut dyn CryptoRng,
    ) -> Result<Release> {
        Err(crate::MechanismError::InvalidParameter {
            name: "counts",
            value: self.name().into(),
            reason: "this mechanism has no counting plan".into(),
        })
    }

    /// Run the mechanism on `data` for `workload`.
    ///
    /// Errors (never panics) when the data does not fit the workload's domain or the
    /// parameters cannot be honoured; no noise is drawn before all checks have passed.
    fn release(&self, data: &Dataset, workload: &W, rng: &mut dyn CryptoRng) -> Result<Release>;
}

#[cfg(test)]
mod tests {
    //! [`Mechanism::check_inputs`]: the public checks refuse what the release would refuse
    //! before its first noise draw, with the same error, and accept what it accepts.

    use super::Mechanism;
    use crate::iterative::ChainingWorstCaseParams;
    use crate::iterative::dualquery::exhaustive_worst_case;
    use crate::iterative::{DualQueryParams, IcParams, MwemParams, OracleChoice};
    use crate::perturbation::{GaussianParams, LaplaceParams};
    use crate::polynomial::PolynomialParams;
    use crate::projection::{ChainingParams, CoarseProjectionParams, ProjectionParams};
    use crate::relaxed::{BoostingParams, OneHotEncoded, RelaxedProjectionParams};
    use crate::restricted::{ForQueryClasses, OnWorkloadAttributes};
    use dp_core::{Neighbouring, PrivacyLoss, seeded_rng};
    use dp_queries::{
        AnyWorkload, ConjunctionWorkload, Dataset, Domain, Literal, MarginalWorkload, QueryKind,
        ThresholdQuery, ThresholdWorkload,
    };

    /// `d` binary attributes `a0, a1, …`.
    fn binary(d: usize) -> Domain {
        Domain::new((0..d).map(|i| (format!("a{i}"), 2)).collect()).unwrap()
    }

    /// `n` records of `domain` (attribute `i` of record `r` is `(r + i) % size`).
    fn data(domain: &Domain, n: usize) -> Dataset {
        let columns = (0..domain.len())
            .map(|i| (0..n).map(|r| ((r + i) as u32) % domain.size(i)).collect())
            .collect();
        Dataset::from_columns(domain.clone(), columns).unwrap()
    }

    fn pure(epsilon: f64) -> PrivacyLoss {
        PrivacyLoss::pure(epsilon).unwrap()
    }

    fn zcdp(rho: f64) -> PrivacyLoss {
        PrivacyLoss::zcdp(rho).unwrap()
    }

    /// The check's error and the release's on the same inputs are the same error.
    fn same_refusal<M: Mechanism + ?Sized>(mech: &M, data: &Dataset, w: &MarginalWorkload) {
        let checked = mech
            .check_inputs(w, Some(data.n()))
            .expect_err("the check refuses");
        let released = mech
            .release(data, w, &mut seeded_rng(1))
            .expect_err("the release refuses");
        assert_eq!(checked.to_string(), released.to_string());
    }

    #[test]
    fn universe_limits_are_checked_from_the_domain() {
        // 2^23 records: above the explicit universes' cap of 2^22
        let wide = binary(23);
        let w = MarginalWorkload::all_kway(&wide, 2).unwrap();
        let d = data(&wide, 20);
        let mwem = MwemParams::new(pure(1.0)).check().unwrap();
        let e = mwem.check_inputs(&w, None).unwrap_err().to_string();
        assert!(e.contains("explicit universe is too large"), "{e}");
        same_refusal(&mwem, &d, &w);
        let ic = IcParams::new(pure(1.0)).check().unwrap();
        assert!(ic.check_inputs(&w, None).is_err());
        same_refusal(&ic, &d, &w);
        let coarse = CoarseProjectionParams::new(zcdp(1.0)).check().unwrap();
        same_refusal(&coarse, &d, &w);
        // the projection falls back to an implicit universe: accepted
        let projection = ProjectionParams::new(zcdp(1.0)).check().unwrap();
        assert!(projection.check_inputs(&w, Some(20)).is_ok());
        // a small domain: accepted
        let small = MarginalWorkload::all_kway(&binary(3), 2).unwrap();
        assert!(mwem.check_inputs(&small, Some(20)).is_ok());
        // 1-way tables touch every attribute: the restriction keeps the full universe
        let one_way = MarginalWorkload::all_kway(&wide, 1).unwrap();
        let restricted = OnWorkloadAttributes::new(Box::new(mwem));
        assert!(restricted.check_inputs(&one_way, None).is_err());
    }

    #[test]
    fn wrappers_check_what_their_inner_mechanism_runs_on() {
        let wide = binary(23);
        // one 2-way table: the restriction runs over 2 attributes, 4 records
        let two = MarginalWorkload::new(
            &wide,
            vec![dp_queries::Marginal::new(&wide, vec![3, 7]).unwrap()],
        )
        .unwrap();
        let mwem = MwemParams::new(pure(1.0)).check().unwrap();
        assert!(mwem.check_inputs(&two, None).is_err());
        let restricted = OnWorkloadAttributes::new(Box::new(mwem.clone()));
        assert!(restricted.check_inputs(&two, None).is_ok());
        // run at run time: a class the marginal mechanism does not release is refused
        let any =
            ForQueryClasses::marginals_only(Box::new(OnWorkloadAttributes::new(Box::new(mwem))));
        assert!(any.check_inputs(&AnyWorkload::Marginals(two), None).is_ok());
        let lits = ConjunctionWorkload::new(
            &wide,
            QueryKind::Conjunction,
            vec![vec![Literal { attr: 0, value: 1 }]],
        )
        .unwrap();
        let e = any
            .check_inputs(&AnyWorkload::Literals(lits), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("marginals"), "{e}");
    }

    #[test]
    fn dualquery_rounds_are_checked_on_the_public_n() {
        let domain = binary(4);
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let d = data(&domain, 50);
        let dq = DualQueryParams::new(pure(1.0)).rounds(200).check().unwrap();
        // without n (add/remove: private) the rounds cannot be checked, and are not
        assert!(dq.check_inputs(&w, None).is_ok());
        let e = dq.check_inputs(&w, Some(50)).unwrap_err().to_string();
        assert!(e.contains("rounds = 200"), "{e}");
        same_refusal(&dq, &d, &w);
        // within the budget: accepted
        let fits = DualQueryParams::new(pure(1.0)).rounds(2).check().unwrap();
        assert!(fits.check_inputs(&w, Some(50)).is_ok());
        // a step outside the exact sampler's range
        let eta = DualQueryParams::new(pure(1.0)).eta(1e-30).check().unwrap();
        let e = eta.check_inputs(&w, Some(50)).unwrap_err().to_string();
        assert!(e.contains("exact query sampler"), "{e}");
        same_refusal(&eta, &d, &w);
    }

    #[test]
    fn dualquery_refuses_an_exhaustive_oracle_that_a_round_could_overflow() {
        // 24 attributes of size 4: 50 samples of 2-way queries can involve all of them
        let domain = Domain::new((0..24).map(|i| (format!("a{i}"), 4)).collect()).unwrap();
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let queries = ConjunctionWorkload::from_marginals(&w).unwrap();
        assert_eq!(exhaustive_worst_case(&queries, 50), 1u64 << 48);
        // one sample of a 2-way query: at most 2 attributes
        assert_eq!(exhaustive_worst_case(&queries, 1), 16);
        let exhaustive = DualQueryParams::new(pure(1.0))
            .oracle(OracleChoice::Exhaustive)
            .check()
            .unwrap();
        let e = exhaustive.check_inputs(&w, None).unwrap_err().to_string();
        assert!(e.contains("exhaustive oracle's limit"), "{e}");
        for oracle in [OracleChoice::Auto, OracleChoice::MaxCsp, OracleChoice::Ilp] {
            let ok = DualQueryParams::new(pure(1.0))
                .oracle(oracle)
                .check()
                .unwrap();
            assert!(ok.check_inputs(&w, None).is_ok(), "{oracle:?}");
        }
        // parities: the ILP oracle handles conjunctions only
        let parities = ConjunctionWorkload::new(
            &domain,
            QueryKind::Parity,
            vec![vec![Literal { attr: 0, value: 1 }]],
        )
        .unwrap();
        let ilp = DualQueryParams::new(pure(1.0))
            .oracle(OracleChoice::Ilp)
            .check()
            .unwrap();
        assert!(Mechanism::<ConjunctionWorkload>::check_inputs(&ilp, &parities, None).is_err());
    }

    #[test]
    fn ic_mw_plan_is_checked_with_the_public_n() {
        let domain = binary(4);
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let d = data(&domain, 50);
        let ic = IcParams::new(pure(1.0)).alpha(1e-9).check().unwrap();
        assert!(ic.check_inputs(&w, None).is_ok());
        let e = ic.check_inputs(&w, Some(50)).unwrap_err().to_string();
        assert!(e.contains("B(α) exceeds"), "{e}");
        same_refusal(&ic, &d, &w);
        let fine = IcParams::new(pure(1.0)).check().unwrap();
        assert!(fine.check_inputs(&w, Some(50)).is_ok());
    }

    #[test]
    fn noise_beyond_the_samplers_range_is_checked_from_the_budget() {
        let domain = binary(4);
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let d = data(&domain, 50);
        for relation in [Neighbouring::ReplaceOne, Neighbouring::AddRemove] {
            let g = GaussianParams::new(zcdp(1e-300))
                .neighbouring(relation)
                .check()
                .unwrap();
            let e = Mechanism::<MarginalWorkload>::check_inputs(&g, &w, None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("sigma2"), "{e}");
            same_refusal(&g, &d, &w);
            let l = LaplaceParams::new(pure(1e-300))
                .neighbouring(relation)
                .check()
                .unwrap();
            same_refusal(&l, &d, &w);
            let ok = GaussianParams::new(zcdp(1.0))
                .neighbouring(relation)
                .check()
                .unwrap();
            assert!(Mechanism::<MarginalWorkload>::check_inputs(&ok, &w, None).is_ok());
        }
        let projection = ProjectionParams::new(zcdp(1e-300)).check().unwrap();
        same_refusal(&projection, &d, &w);
        let coarse = CoarseProjectionParams::new(zcdp(1e-300)).check().unwrap();
        same_refusal(&coarse, &d, &w);
        let relaxed = RelaxedProjectionParams::new(zcdp(1e-300)).check().unwrap();
        same_refusal(&relaxed, &d, &w);
        let mwem = MwemParams::new(pure(1e-300)).check().unwrap();
        same_refusal(&mwem, &d, &w);
    }

    #[test]
    fn chaining_boosting_and_polynomial_noise_is_checked_from_the_budget() {
        let domain = binary(4);
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let d = data(&domain, 50);
        let chaining = ChainingParams::new(zcdp(1e-300)).check().unwrap();
        let e = chaining.check_inputs(&w, None).unwrap_err().to_string();
        assert!(e.contains("sigma2"), "{e}");
        same_refusal(&chaining, &d, &w);
        let worst = ChainingWorstCaseParams::new(zcdp(1e-300)).check().unwrap();
        // n sets only the number of levels, not their noise: refused without it too
        assert!(worst.check_inputs(&w, None).is_err());
        same_refusal(&worst, &d, &w);
        let boosting = OneHotEncoded::new(BoostingParams::new(zcdp(1e-300)).check().unwrap());
        same_refusal(&boosting, &d, &w);
        for budget in [zcdp(1e-300), pure(1e-300)] {
            let polynomial = PolynomialParams::new(budget).check().unwrap();
            same_refusal(&polynomial, &d, &w);
            let any = AnyWorkload::Marginals(w.clone());
            let checked = Mechanism::<AnyWorkload>::check_inputs(&polynomial, &any, Some(50));
            let released =
                Mechanism::<AnyWorkload>::release(&polynomial, &d, &any, &mut seeded_rng(1));
            assert_eq!(
                checked.unwrap_err().to_string(),
                released.unwrap_err().to_string()
            );
        }
        // the same mechanisms at a usable budget: accepted, and they release
        let chaining = ChainingParams::new(zcdp(1.0)).check().unwrap();
        let worst = ChainingWorstCaseParams::new(zcdp(1.0)).check().unwrap();
        let boosting = OneHotEncoded::new(BoostingParams::new(zcdp(1.0)).check().unwrap());
        let polynomial = PolynomialParams::new(zcdp(1.0)).check().unwrap();
        let ok: [&dyn Mechanism; 4] = [&chaining, &worst, &boosting, &polynomial];
        for m in ok {
            assert!(m.check_inputs(&w, Some(50)).is_ok(), "{}", m.name());
            assert!(m.check_inputs(&w, None).is_ok(), "{}", m.name());
            assert!(
                m.release(&d, &w, &mut seeded_rng(2)).is_ok(),
                "{}",
                m.name()
            );
        }
    }

    /// Chaining's check first bounds every level's σ² by all `k` levels at the largest
    /// sensitivity; where that bound is out of the sampler's range but the levels' own σ²
    /// are not, it builds the decomposition and accepts, as the release does.
    #[test]
    fn chaining_checks_the_levels_own_noise_when_the_bound_is_out_of_range() {
        let domain = binary(4);
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let d = data(&domain, 50);
        let at = |rho: f64| ChainingParams::new(zcdp(rho)).check().unwrap();
        let universe =
            crate::projection::universe_of(&w, &crate::ProjectionSettings::default()).unwrap();
        // σ² scales as 1/ρ: the levels' largest and the bound's at ρ = 1
        let plan = at(1.0).plan(&universe, &w, 50).unwrap();
        let largest = plan.noise.iter().flatten().map(|n| n.2).fold(0.0, f64::max);
        let k = plan.decomposition.levels.len() as f64;
        let bound = 8.0 * w.len() as f64 * k / 2.0;
        assert!(
            bound > 2.0 * largest,
            "no gap to test: {bound} vs {largest}"
        );
        let max = dp_core::DiscreteGaussian::MAX_SIGMA2;
        // the levels' σ² at 2/3 of the sampler's limit, the bound above it
        let rho = largest / (max / 1.5);
        assert!(bound / rho > max);
        let chaining = at(rho);
        assert!(chaining.check_inputs(&w, Some(50)).is_ok());
        assert!(chaining.release(&d, &w, &mut seeded_rng(3)).is_ok());
        // a third of that ρ puts the largest level beyond the limit: refused by both
        let chaining = at(rho / 3.0);
        assert!(chaining.check_inputs(&w, None).is_err());
        same_refusal(&chaining, &d, &w);
    }

    /// Boosting's base noise grows with the distinct queries a round samples: a budget
    /// whose σ² is in range for one sampled query but not for `min(k, N)` is refused by the
    /// check and by the release before anything is drawn, whatever a round would sample.
    #[test]
    fn boosting_checks_the_noise_of_the_largest_sample() {
        let domain = binary(4);
        let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
        let d = data(&domain, 50);
        // N = 10 parities, k = 64 draws: up to 10 distinct, σ² = distinct/(2ρ_base)
        let max = dp_core::DiscreteGaussian::MAX_SIGMA2;
        let probe = BoostingParams::new(zcdp(1.0)).check().unwrap();
        let rho_base = probe.accounting().rho_base;
        assert!(probe.base_sigma2(1) < probe.base_sigma2(10));
        // σ²(1) = 1/(2ρ_base) at ρ = 1 scales as 1/ρ: put σ²(1) at a third of the limit
        let rho = (1.0 / (2.0 * rho_base)) / (max / 3.0);
        let boosting = BoostingParams::new(zcdp(rho)).check().unwrap();
        assert!(boosting.base_sigma2(1) <= max && boosting.base_sigma2(10) > max);
        let e = boosting.check_inputs(&w, None).unwrap_err().to_string();
        assert!(e.contains("sigma2"), "{e}");
        same_refusal(&boosting, &d, &w);
    }

    /// The polynomial release's memory cap and a dataset with no records (n is public) are
    /// public too.
    #[test]
    fn polynomial_memory_and_records_are_checked_before_the_data() {
        // 12 attributes of 10 values, degree 3: about 180 000 coefficients, over 1 MiB
        let domain = Domain::new((0..12).map(|i| (format!("a{i}"), 10)).collect()).unwrap();
        let w = MarginalWorkload::all_kway(&domain, 3).unwrap();
        let d = data(&domain, 50);
        let mut params = PolynomialParams::new(zcdp(1.0));
        params.max_memory_mib = 1;
        params.approximation = crate::polynomial::Approximation::Exact;
        let small = params.check().unwrap();
        let e = small.check_inputs(&w, None).unwrap_err().to_string();
        assert!(e.contains("max_memory_mib"), "{e}");
        same_refusal(&small, &d, &w);
        let fine = PolynomialParams::new(zcdp(1.0)).check().unwrap();
        let e = fine.check_inputs(&w, Some(0)).unwrap_err().to_string();
        assert!(e.contains("no records"), "{e}");
        assert!(fine.check_inputs(&w, Some(50)).is_ok());
        // thresholds and conjunctions: the same plan as their releases
        let tiny = PolynomialParams::new(pure(1e-300)).check().unwrap();
        let lits = ConjunctionWorkload::from_marginals(&w).unwrap();
        let checked = Mechanism::<ConjunctionWorkload>::check_inputs(&tiny, &lits, None);
        let released =
            Mechanism::<ConjunctionWorkload>::release(&tiny, &d, &lits, &mut seeded_rng(1));
        assert_eq!(
            checked.unwrap_err().to_string(),
            released.unwrap_err().to_string()
        );
        let thresholds = ThresholdWorkload::new(
            &domain,
            vec![ThresholdQuery {
                k: 2,
                literals: (0..3).map(|attr| Literal { attr, value: 1 }).collect(),
            }],
        )
        .unwrap();
        let checked = Mechanism::<ThresholdWorkload>::check_inputs(&tiny, &thresholds, None);
        let released =
            Mechanism::<ThresholdWorkload>::release(&tiny, &d, &thresholds, &mut seeded_rng(1));
        let e = checked.unwrap_err().to_string();
        assert!(e.contains("scale"), "{e}");
        assert_eq!(e, released.unwrap_err().to_string());
        assert!(Mechanism::<ThresholdWorkload>::check_inputs(&fine, &thresholds, Some(50)).is_ok());
    }
}
