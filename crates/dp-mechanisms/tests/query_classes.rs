//! Mechanisms on workloads beyond marginals (the `Workload` trait): the answer-perturbation
//! baselines on conjunctions, disjunctions, parities and explicit matrices with noise scales
//! derived here by hand, and the refusals of mechanisms that do not release a class.
//!
//! Statistical checks compare the second moment of the recovered integer noise with the
//! exact moment of the intended distribution (pmf summed here), tolerance 4.89 standard
//! errors: a two-sided false-failure probability of about 1e-6 per check.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::{
    DualQueryParams, ForQueryClasses, GaussianParams, LaplaceParams, Mechanism, MechanismError,
    MwemParams, PostProcessing,
};
use dp_queries::{
    AnyWorkload, ConjunctionWorkload, Dataset, Domain, ExplicitWorkload, MarginalWorkload,
    QueryClass, QueryKind, Workload,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

const Z_1E6: f64 = 4.89;

fn data() -> Dataset {
    let domain = Domain::new((0..5).map(|i| (format!("a{i}"), 3u32)).collect()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let columns: Vec<Vec<u32>> = (0..5)
        .map(|_| (0..400).map(|_| rng.random_range(0..3u32)).collect())
        .collect();
    Dataset::from_columns(domain, columns).unwrap()
}

fn conjunctions(d: &Dataset, kind: QueryKind, k: usize) -> ConjunctionWorkload {
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    ConjunctionWorkload::random_kway(d.domain(), kind, 2, k, &mut rng).unwrap()
}

/// Integer noise of `runs` replace-one releases (answers · n − true counts).
fn noise_of<W: Workload>(mech: &dyn Mechanism<W>, d: &Dataset, w: &W, runs: u64) -> Vec<i64> {
    let truth = w.count_all(d).unwrap();
    let n = d.n() as f64;
    let mut out = Vec::new();
    for seed in 0..runs {
        let mut rng = ChaCha20Rng::seed_from_u64(500 + seed);
        let r = mech.release(d, w, &mut rng).unwrap();
        assert_eq!(r.answers.len(), truth.len());
        for (a, t) in r.answers.iter().zip(&truth) {
            let z = (a * n).round();
            assert!((a * n - z).abs() < 1e-6);
            out.push(z as i64 - t);
        }
    }
    out
}

fn second_moment_matches(noise: &[i64], pmf: impl Fn(i64) -> f64, limit: i64, what: &str) {
    let (mut z, mut m2, mut m4) = (0.0, 0.0, 0.0);
    for x in -limit..=limit {
        let p = pmf(x);
        let xf = x as f64;
        z += p;
        m2 += p * xf * xf;
        m4 += p * xf.powi(4);
    }
    let (m2, m4) = (m2 / z, m4 / z);
    let n = noise.len() as f64;
    let mean_sq = noise.iter().map(|&x| (x * x) as f64).sum::<f64>() / n;
    let tol = Z_1E6 * ((m4 - m2 * m2) / n).sqrt();
    assert!(
        (mean_sq - m2).abs() <= tol,
        "{what}: mean square {mean_sq} vs exact {m2} (± {tol})"
    );
}

#[test]
fn gaussian_on_conjunctions_uses_the_number_of_queries_as_sensitivity() {
    // k 0/1-valued queries: replacing a record changes each by at most one, Δ₂² = k.
    let d = data();
    let k = 30;
    let w = conjunctions(&d, QueryKind::Conjunction, k);
    let rho = 0.5;
    let mech = GaussianParams::new(PrivacyLoss::zcdp(rho).unwrap())
        .check()
        .unwrap();
    let sigma2 = k as f64 / (2.0 * rho); // = 30, by hand
    let noise = noise_of::<ConjunctionWorkload>(&mech, &d, &w, 60);
    second_moment_matches(
        &noise,
        |x| (-((x * x) as f64) / (2.0 * sigma2)).exp(),
        400,
        "gaussian/conjunctions",
    );
}

#[test]
fn laplace_on_an_explicit_matrix_uses_its_column_bounds() {
    // Two queries over a0 (3 cells): columns (1, 0), (2, -1), (0, 3). Replace-one Δ₁ is the
    // largest ℓ1 distance between two columns: |(1,0) − (0,3)| = 4, |(2,−1) − (0,3)| = 6,
    // |(1,0) − (2,−1)| = 2, so 6.
    let d = data();
    let w =
        ExplicitWorkload::new(d.domain(), vec![0], vec![vec![1, 2, 0], vec![0, -1, 3]]).unwrap();
    let eps = 1.0;
    let mech = LaplaceParams::new(PrivacyLoss::pure(eps).unwrap())
        .check()
        .unwrap();
    let t = 6.0 / eps;
    let noise = noise_of::<ExplicitWorkload>(&mech, &d, &w, 3000);
    second_moment_matches(
        &noise,
        |x| (-(x.abs() as f64) / t).exp(),
        600,
        "laplace/explicit",
    );
    // the prediction the dry run shows is the same calibration
    let predicted = Mechanism::<ExplicitWorkload>::count_noise(&mech, &w).unwrap();
    assert!((predicted.variance() - noise_variance_laplace(t)).abs() < 1e-9);
}

/// Variance of the discrete Laplace with scale t: 2e^{−1/t}/(1 − e^{−1/t})².
fn noise_variance_laplace(t: f64) -> f64 {
    let q = (-1.0 / t).exp();
    2.0 * q / (1.0 - q).powi(2)
}

#[test]
fn add_remove_without_tables_measures_the_total_and_pays_for_it() {
    // add/remove on k parities: Δ₂² = k for the queries plus 1 for the measured total.
    let d = data();
    let k = 20;
    let w = conjunctions(&d, QueryKind::Parity, k);
    let rho = 2.0;
    let mech = GaussianParams::new(PrivacyLoss::zcdp(rho).unwrap())
        .neighbouring(Neighbouring::AddRemove)
        .check()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let r = Mechanism::<ConjunctionWorkload>::release(&mech, &d, &w, &mut rng).unwrap();
    let noise = r.diagnostics.noise.unwrap();
    let hand = (k as f64 + 1.0) / (2.0 * rho);
    assert!(
        noise.parameter >= hand && noise.parameter <= hand * (1.0 + 1e-12),
        "σ² = {} vs {hand}",
        noise.parameter
    );
    assert!(
        r.diagnostics
            .notes
            .iter()
            .any(|n| n.contains("total count was measured"))
    );
    // the answers are fractions of a noisy total close to n (σ ≈ 2.3, n = 400)
    let truth: Vec<f64> = w
        .count_all(&d)
        .unwrap()
        .iter()
        .map(|&c| c as f64 / d.n() as f64)
        .collect();
    for (a, t) in r.answers.iter().zip(&truth) {
        assert!((a - t).abs() < 0.1, "{a} vs {t}");
    }
    // the empty dataset is released like any other (a refusal would single it out)
    let empty = Dataset::empty(d.domain().clone());
    assert!(Mechanism::<ConjunctionWorkload>::release(&mech, &empty, &w, &mut rng).is_ok());
}

#[test]
fn simplex_post_processing_is_refused_without_tables() {
    let d = data();
    let w = conjunctions(&d, QueryKind::Disjunction, 5);
    let mech = GaussianParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .post_processing(PostProcessing::SimplexProjection)
        .check()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let e = Mechanism::<ConjunctionWorkload>::release(&mech, &d, &w, &mut rng).unwrap_err();
    assert!(e.to_string().contains("no tables"), "{e}");
}

#[test]
fn classes_a_mechanism_does_not_release_are_refused_by_name() {
    let d = data();
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let disj = AnyWorkload::Literals(conjunctions(&d, QueryKind::Disjunction, 5));
    let dq = DualQueryParams::new(PrivacyLoss::pure(1.0).unwrap())
        .check()
        .unwrap();
    match Mechanism::<AnyWorkload>::release(&dq, &d, &disj, &mut rng) {
        Err(MechanismError::UnsupportedQueryClass { class, .. }) => {
            assert_eq!(class, QueryClass::Disjunctions)
        }
        other => panic!(
            "expected a refusal, got {:?}",
            other.map(|r| r.answers.len())
        ),
    }
    let mwem = MwemParams::new(PrivacyLoss::pure(1.0).unwrap())
        .check()
        .unwrap();
    let any = ForQueryClasses::marginals_only(Box::new(mwem));
    let conj = AnyWorkload::Literals(conjunctions(&d, QueryKind::Conjunction, 5));
    let e = any.release(&d, &conj, &mut rng).unwrap_err();
    assert!(
        e.to_string()
            .contains("mwem does not release conjunctions workloads; it releases: marginals"),
        "{e}"
    );
}

#[test]
fn marginals_through_any_workload_are_the_marginal_release() {
    let d = data();
    let w = MarginalWorkload::all_kway(d.domain(), 2).unwrap();
    let any = AnyWorkload::Marginals(w.clone());
    let mwem = MwemParams::new(PrivacyLoss::pure(1.0).unwrap())
        .check()
        .unwrap();
    let a = mwem
        .release(&d, &w, &mut ChaCha20Rng::seed_from_u64(9))
        .unwrap();
    let wrapped = ForQueryClasses::marginals_only(Box::new(mwem));
    let b = wrapped
        .release(&d, &any, &mut ChaCha20Rng::seed_from_u64(9))
        .unwrap();
    assert_eq!(a.answers, b.answers);
    let g = GaussianParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .check()
        .unwrap();
    let a = Mechanism::<MarginalWorkload>::release(&g, &d, &w, &mut ChaCha20Rng::seed_from_u64(4))
        .unwrap();
    let b = Mechanism::<AnyWorkload>::release(&g, &d, &any, &mut ChaCha20Rng::seed_from_u64(4))
        .unwrap();
    assert_eq!(a.answers, b.answers);
}

#[test]
fn dualquery_releases_conjunctions_directly() {
    let d = data();
    let w = conjunctions(&d, QueryKind::Conjunction, 12);
    let dq = DualQueryParams::new(PrivacyLoss::pure(2.0).unwrap())
        .check()
        .unwrap();
    let r =
        Mechanism::<ConjunctionWorkload>::release(&dq, &d, &w, &mut ChaCha20Rng::seed_from_u64(5))
            .unwrap();
    // its answers are its synthetic records' answers
    let syn = r.synthetic.unwrap();
    let recs: Vec<Vec<u32>> = (0..syn.records.n())
        .map(|i| syn.records.record(i))
        .collect();
    let again = w.answers_of_records(&recs, &syn.weights).unwrap();
    for (a, b) in r.answers.iter().zip(&again) {
        assert!((a - b).abs() < 1e-12);
    }
    assert_eq!(r.certificate.neighbouring(), Some(Neighbouring::ReplaceOne));
}

#[test]
fn releasing_from_counts_is_the_same_release() {
    // the streaming path (counts and n only) gives exactly the release on the records, for
    // both relations and a workload with and without tables
    let d = data();
    let marg = MarginalWorkload::all_kway(d.domain(), 2).unwrap();
    let conj = conjunctions(&d, QueryKind::Parity, 9);
    for rel in [Neighbouring::ReplaceOne, Neighbouring::AddRemove] {
        let g = GaussianParams::new(PrivacyLoss::zcdp(0.7).unwrap())
            .neighbouring(rel)
            .check()
            .unwrap();
        let l = LaplaceParams::new(PrivacyLoss::pure(0.9).unwrap())
            .neighbouring(rel)
            .check()
            .unwrap();
        let a = Mechanism::<MarginalWorkload>::release(
            &g,
            &d,
            &marg,
            &mut ChaCha20Rng::seed_from_u64(1),
        )
        .unwrap();
        let counts = Workload::count_all(&marg, &d).unwrap();
        let b = Mechanism::<MarginalWorkload>::release_counts(
            &g,
            counts,
            d.n(),
            &marg,
            &mut ChaCha20Rng::seed_from_u64(1),
        )
        .unwrap();
        assert_eq!(a.answers, b.answers);
        let a = Mechanism::<ConjunctionWorkload>::release(
            &l,
            &d,
            &conj,
            &mut ChaCha20Rng::seed_from_u64(2),
        )
        .unwrap();
        let b = Mechanism::<ConjunctionWorkload>::release_counts(
            &l,
            conj.count_all(&d).unwrap(),
            d.n(),
            &conj,
            &mut ChaCha20Rng::seed_from_u64(2),
        )
        .unwrap();
        assert_eq!(a.answers, b.answers);
        assert!(Mechanism::<ConjunctionWorkload>::counts_suffice(&l));
    }
    // a mechanism that needs the records (the coarse projection rounds each record to its
    // cover point) says so
    let coarse = dp_mechanisms::CoarseProjectionParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .check()
        .unwrap();
    assert!(!coarse.counts_suffice());
    let counts = Workload::count_all(&marg, &d).unwrap();
    assert!(
        coarse
            .release_counts(counts, d.n(), &marg, &mut ChaCha20Rng::seed_from_u64(3))
            .is_err()
    );
}
