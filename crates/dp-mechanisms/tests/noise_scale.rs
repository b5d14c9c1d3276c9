//! Statistical tests that catch a wrong sensitivity or a wrong noise scale in the
//! answer-perturbation baselines.
//!
//! Every expected value here is derived by hand from the definitions (not taken from the
//! code under test): for `m` marginals under replace-one, Δ₂² = 2m and Δ₁ = 2m, so the
//! Gaussian mechanism at ρ must use σ² = 2m/(2ρ) and the Laplace mechanism at ε the scale
//! t = 2m/ε. The noise is recovered exactly as (answer · n − true count), which must be an
//! integer, and its second moment is compared with the exact moment of the intended
//! distribution (computed here by summing the pmf) with a CLT tolerance of 4.9 standard
//! errors: a two-sided false-failure probability of about 1e-6 per check.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::{GaussianParams, LaplaceParams, Mechanism, PostProcessing};
use dp_queries::{Dataset, Domain, MarginalWorkload};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

const Z_1E6: f64 = 4.89; // two-sided normal quantile for 1e-6

fn fixture() -> (Dataset, MarginalWorkload) {
    let domain = Domain::new((0..5).map(|i| (format!("a{i}"), 6u32)).collect()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let n = 500;
    let columns: Vec<Vec<u32>> = (0..5)
        .map(|_| (0..n).map(|_| rng.random_range(0..6u32)).collect())
        .collect();
    let data = Dataset::from_columns(domain.clone(), columns).unwrap();
    let workload = MarginalWorkload::all_kway(&domain, 2).unwrap(); // 10 tables, 360 cells
    (data, workload)
}

/// Collect the integer noise of `runs` releases.
fn collect_noise(mech: &dyn Mechanism, runs: u64) -> Vec<i64> {
    let (data, workload) = fixture();
    let truth = workload.count_all(&data).unwrap();
    let n = data.n() as f64;
    let mut noise = Vec::new();
    for seed in 0..runs {
        let mut rng = ChaCha20Rng::seed_from_u64(1000 + seed);
        let release = mech.release(&data, &workload, &mut rng).unwrap();
        assert_eq!(release.answers.len(), truth.len());
        for (a, t) in release.answers.iter().zip(&truth) {
            let scaled = a * n;
            let z = scaled.round();
            assert!(
                (scaled - z).abs() < 1e-6,
                "noise is not an integer: {scaled}"
            );
            noise.push(z as i64 - *t as i64);
        }
    }
    noise
}

/// Second and fourth moments of an integer distribution with unnormalised pmf `w`.
fn moments(w: impl Fn(i64) -> f64, limit: i64) -> (f64, f64) {
    let (mut z, mut m2, mut m4) = (0.0, 0.0, 0.0);
    for x in -limit..=limit {
        let p = w(x);
        let xf = x as f64;
        z += p;
        m2 += p * xf * xf;
        m4 += p * xf * xf * xf * xf;
    }
    (m2 / z, m4 / z)
}

fn check_second_moment(noise: &[i64], m2: f64, m4: f64, what: &str) {
    let n = noise.len() as f64;
    let mean_sq = noise.iter().map(|&z| (z * z) as f64).sum::<f64>() / n;
    let se = ((m4 - m2 * m2) / n).sqrt();
    assert!(
        (mean_sq - m2).abs() <= Z_1E6 * se,
        "{what}: mean square {mean_sq} vs exact {m2} (tolerance {})",
        Z_1E6 * se
    );
    let mean = noise.iter().sum::<i64>() as f64 / n;
    assert!(mean.abs() <= Z_1E6 * (m2 / n).sqrt(), "{what}: mean {mean}");
}

#[test]
fn gaussian_noise_has_the_variance_of_sigma2_equal_2m_over_2rho() {
    let rho = 0.5;
    let mech = GaussianParams::new(PrivacyLoss::zcdp(rho).unwrap())
        .check()
        .unwrap();
    let noise = collect_noise(&mech, 40);
    let m = 10.0;
    let sigma2 = 2.0 * m / (2.0 * rho); // = 20, by hand
    let (m2, m4) = moments(|x| (-((x * x) as f64) / (2.0 * sigma2)).exp(), 200);
    check_second_moment(&noise, m2, m4, "gaussian");
    // A mechanism using the add/remove sensitivity here (Δ₂² = m, the commonest bug) would
    // have E z² ≈ 10: more than twice the tolerance (≈ ±1.2) away, so this test catches it.
    let tolerance = Z_1E6 * ((m4 - m2 * m2) / noise.len() as f64).sqrt();
    assert!((m2 - sigma2 / 2.0).abs() > 2.0 * tolerance);
}

#[test]
fn laplace_noise_has_the_variance_of_scale_2m_over_epsilon() {
    let eps = 1.0;
    let mech = LaplaceParams::new(PrivacyLoss::pure(eps).unwrap())
        .check()
        .unwrap();
    let noise = collect_noise(&mech, 40);
    let t = 2.0 * 10.0 / eps; // = 20, by hand
    let (m2, m4) = moments(|x| (-(x.abs() as f64) / t).exp(), 2000);
    check_second_moment(&noise, m2, m4, "laplace");
}

#[test]
fn add_remove_halves_the_squared_sensitivity() {
    // add/remove: Δ₂² = m = 10, so σ² = 10/(2ρ) = 10 at ρ = 0.5 (half the replace-one σ²).
    let rho = 0.5;
    let mech = GaussianParams::new(PrivacyLoss::zcdp(rho).unwrap())
        .neighbouring(Neighbouring::AddRemove)
        .check()
        .unwrap();
    let (data, workload) = fixture();
    let mut rng = ChaCha20Rng::seed_from_u64(5000);
    let release = mech.release(&data, &workload, &mut rng).unwrap();
    let noise = release.diagnostics.noise.unwrap();
    assert_eq!(noise.parameter, 10.0f64.next_up());
    assert_eq!(
        release.certificate.neighbouring(),
        Some(Neighbouring::AddRemove)
    );
    // n is private under add/remove: answers are normalised by the noisy table totals, so
    // the tables' answers sum to one on average over tables.
    let total: f64 = release.answers.iter().sum::<f64>() / workload.len() as f64;
    assert!((total - 1.0).abs() < 1e-9, "{total}");
}

#[test]
fn add_remove_never_uses_n_and_releases_the_empty_dataset() {
    // issue #9 item 3. Under add/remove the noise description must be a function of the
    // released noisy counts: the per-answer spread is count σ / T̂ with T̂ the mean noisy
    // table total the answers were divided by, so T̂ = σ / answer_std turns every answer
    // back into an integer noisy count. Before the fix answer_std was σ/n.
    let (data, workload) = fixture();
    let laplace = LaplaceParams::new(PrivacyLoss::pure(1.0).unwrap())
        .neighbouring(Neighbouring::AddRemove)
        .check()
        .unwrap();
    let gaussian = GaussianParams::new(PrivacyLoss::zcdp(0.5).unwrap())
        .neighbouring(Neighbouring::AddRemove)
        .check()
        .unwrap();
    let mechs: [&dyn Mechanism; 2] = [&laplace, &gaussian];
    for mech in mechs {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let release = mech.release(&data, &workload, &mut rng).unwrap();
        let noise = release.diagnostics.noise.unwrap();
        assert_eq!(noise.normaliser, dp_mechanisms::Normaliser::NoisyTotal);
        let t_hat = noise.count_std / noise.answer_std;
        assert!(
            (t_hat - data.n() as f64).abs() > 0.5,
            "{}: answer_std = σ/{t_hat} is σ/n",
            mech.name()
        );
        for &a in &release.answers {
            let c = a * t_hat;
            assert!(
                (c - c.round()).abs() < 1e-6,
                "{}: {a} × {t_hat}",
                mech.name()
            );
        }
        // the empty dataset is a valid input under add/remove (refusing it would tell it
        // apart from its one-record neighbours)
        let empty = Dataset::empty(data.domain().clone());
        let release = mech.release(&empty, &workload, &mut rng).unwrap();
        assert_eq!(release.answers.len(), workload.num_queries());
        assert!(release.answers.iter().all(|a| a.is_finite()));
    }
    // under replace-one n is public and n = 0 is refused before any noise is drawn
    let replace_one = LaplaceParams::new(PrivacyLoss::pure(1.0).unwrap())
        .check()
        .unwrap();
    let empty = Dataset::empty(data.domain().clone());
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    assert!(replace_one.release(&empty, &workload, &mut rng).is_err());
}

#[test]
fn max_error_lies_in_the_predicted_range() {
    use dp_mechanisms::noise_stats::CountNoise;
    let rho = 0.5;
    let mech = GaussianParams::new(PrivacyLoss::zcdp(rho).unwrap())
        .check()
        .unwrap();
    let (data, workload) = fixture();
    let truth = workload.answers(&data).unwrap();
    let noise = CountNoise::DiscreteGaussian { sigma2: 20.0 };
    let cells = truth.len();
    // two-sided, 2e-7 per release, 5 releases
    let lo = noise.max_abs_quantile(cells, 1e-7) as f64 / data.n() as f64;
    let hi = noise.max_abs_quantile(cells, 1.0 - 1e-7) as f64 / data.n() as f64;
    for seed in 0..5 {
        let mut rng = ChaCha20Rng::seed_from_u64(77 + seed);
        let r = mech.release(&data, &workload, &mut rng).unwrap();
        let max = r
            .answers
            .iter()
            .zip(&truth)
            .map(|(a, t)| (a - t).abs())
            .fold(0.0, f64::max);
        assert!(
            max >= lo - 1e-12 && max <= hi + 1e-12,
            "{max} not in [{lo}, {hi}]"
        );
    }
}

#[test]
fn certificates_state_the_guarantee() {
    let g = GaussianParams::new(PrivacyLoss::approx(1.0, 1e-9).unwrap())
        .check()
        .unwrap();
    let c = g.certificate();
    assert!(matches!(c.loss, PrivacyLoss::Zcdp { .. }));
    assert_eq!(c.neighbouring(), Some(Neighbouring::ReplaceOne));
    match c.approx_equivalent {
        Some(PrivacyLoss::Approx { epsilon, delta }) => {
            assert!(epsilon <= 1.0 && epsilon > 0.99, "{epsilon}");
            assert_eq!(delta, 1e-9);
        }
        other => panic!("no (ε, δ) statement: {other:?}"),
    }
    let l = LaplaceParams::new(PrivacyLoss::pure(0.5).unwrap())
        .check()
        .unwrap();
    assert_eq!(l.certificate().loss, PrivacyLoss::Pure { epsilon: 0.5 });
}

#[test]
fn bad_parameters_and_data_are_errors() {
    assert!(
        GaussianParams::new(PrivacyLoss::pure(1.0).unwrap())
            .check()
            .is_err()
    );
    assert!(
        LaplaceParams::new(PrivacyLoss::zcdp(1.0).unwrap())
            .check()
            .is_err()
    );
    assert!(
        LaplaceParams::new(PrivacyLoss::approx(1.0, 1e-6).unwrap())
            .check()
            .is_err()
    );
    assert!(
        GaussianParams::new(PrivacyLoss::zcdp(0.0).unwrap())
            .check()
            .is_err()
    );
    // data whose domain is not the workload's
    let (data, _) = fixture();
    let other = Domain::new(vec![("x".into(), 2), ("y".into(), 2)]).unwrap();
    let w = MarginalWorkload::all_kway(&other, 2).unwrap();
    let mech = GaussianParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .check()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(0);
    assert!(mech.release(&data, &w, &mut rng).is_err());
}

#[test]
fn simplex_post_processing_gives_consistent_tables() {
    let (data, workload) = fixture();
    let mech = GaussianParams::new(PrivacyLoss::zcdp(0.01).unwrap())
        .post_processing(PostProcessing::SimplexProjection)
        .check()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let r = mech.release(&data, &workload, &mut rng).unwrap();
    for j in 0..workload.len() {
        let s = workload.offset(j);
        let e = s + workload.marginals()[j].num_cells();
        let sum: f64 = r.answers[s..e].iter().sum();
        assert!((sum - 1.0).abs() < 1e-9);
        assert!(r.answers[s..e].iter().all(|&a| (0.0..=1.0).contains(&a)));
    }
}

#[test]
fn same_seed_same_release() {
    let (data, workload) = fixture();
    let mech = GaussianParams::new(PrivacyLoss::zcdp(0.1).unwrap())
        .check()
        .unwrap();
    let a = mech
        .release(&data, &workload, &mut ChaCha20Rng::seed_from_u64(9))
        .unwrap();
    let b = mech
        .release(&data, &workload, &mut ChaCha20Rng::seed_from_u64(9))
        .unwrap();
    let c = mech
        .release(&data, &workload, &mut ChaCha20Rng::seed_from_u64(10))
        .unwrap();
    assert_eq!(a.answers, b.answers);
    assert_ne!(a.answers, c.answers);
}

#[test]
fn release_does_not_depend_on_the_thread_count() {
    // 100 000 cells: two noise chunks, so the parallel path is exercised.
    let domain = Domain::new(vec![("x".into(), 50), ("y".into(), 50), ("z".into(), 40)]).unwrap();
    let cols = vec![vec![1u32, 2, 3], vec![4u32, 5, 6], vec![7u32, 8, 9]];
    let data = Dataset::from_columns(domain.clone(), cols).unwrap();
    let workload = MarginalWorkload::all_kway(&domain, 3).unwrap();
    let mech = GaussianParams::new(PrivacyLoss::zcdp(1.0).unwrap())
        .check()
        .unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            mech.release(&data, &workload, &mut ChaCha20Rng::seed_from_u64(11))
                .unwrap()
                .answers
        })
    };
    assert_eq!(run(1), run(3));
}
