//! The iterative family: privacy formulas pinned to hand-computed values, noise scales
//! checked against hand-derived parameters (statistically), end-to-end releases.

use dp_core::{PrivacyLoss, advanced_composition, seeded_rng};
use dp_mechanisms::Mechanism;
use dp_mechanisms::iterative::*;
use dp_queries::{
    BitColumns, ConjunctionWorkload, Dataset, Domain, MarginalWorkload, QueryKind, Universe,
};
use rand::RngExt;

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-300)
}

/// Seed 003 Thm 4.2, ε = ηT(T−1)s/n, by hand: η = 0.5, T = 3, s = 2, n = 6 → 1; and the
/// paper's Fig. 5 settings on Adult (n = 30162, η = 0.4): (s, T) = (35, 47) → 30268/30162
/// and (55, 83) → 149732/30162 (the paper labels them ε = 1 and ε = 5).
#[test]
fn thm_4_2_by_hand() {
    assert!(rel_close(
        dualquery_pure_epsilon(0.5, 3, 2, 6).unwrap(),
        1.0,
        1e-15
    ));
    assert!(rel_close(
        dualquery_pure_epsilon(0.4, 47, 35, 30162).unwrap(),
        30268.0 / 30162.0,
        1e-14
    ));
    assert!(rel_close(
        dualquery_pure_epsilon(0.4, 83, 55, 30162).unwrap(),
        149732.0 / 30162.0,
        1e-14
    ));
    // The largest T within ε = 1 at (η, s) = (0.4, 35): T(T−1) ≤ 30162/14 = 2154.4 ⇒ 46.
    let t = max_rounds(0.4, 35, 30162, &PrivacyLoss::pure(1.0).unwrap(), 10_000).unwrap();
    assert_eq!(t, 46);
    assert!(dualquery_pure_epsilon(0.0, 3, 2, 6).is_err());
    assert!(dualquery_pure_epsilon(0.5, 3, 2, 0).is_err());
}

/// Seed 003 Thm 4.3 by hand: η = 1/2, T = 2, s = 1, n = 1 gives ε′ = 2η(T−1)/n = 1 and
/// k = 1; with δ = e^{−1/2}, ε = 1·(√(2·½) + (e − 1)) = e. And the paper's formula
/// written out independently for the Fig. 3 settings (η = 1.2, T = 170, s = 1750,
/// n = 494021, δ = 0.001).
#[test]
fn thm_4_3_by_hand() {
    let l = dualquery_approx_epsilon(0.5, 2, 1, 1, (-0.5f64).exp()).unwrap();
    assert!(rel_close(
        l.epsilon_at((-0.5f64).exp()).unwrap(),
        std::f64::consts::E,
        1e-12
    ));
    let (eta, t, s, n, delta) = (1.2f64, 170usize, 1750usize, 494021usize, 1e-3f64);
    let e0 = 2.0 * eta * (t - 1) as f64 / n as f64;
    let k = (s * (t - 1)) as f64;
    let hand = e0 * ((2.0 * k * (1.0 / delta).ln()).sqrt() + k * (e0.exp() - 1.0));
    let got = dualquery_approx_epsilon(eta, t, s, n, delta).unwrap();
    assert!(
        rel_close(got.epsilon_at(delta).unwrap(), hand, 1e-9),
        "{got} vs {hand}"
    );
    // T = 1 samples only from the uniform distribution.
    assert_eq!(
        dualquery_approx_epsilon(1.0, 1, 10, 5, 1e-3)
            .unwrap()
            .epsilon_at(1e-3)
            .unwrap(),
        0.0
    );
}

/// Remark 4.7 / Algorithm 2 parameters by hand: α = 0.5, β = 0.1, |𝒬| = 100, |𝒳| = 2^10:
/// T = ⌈16 ln 100 / 0.25⌉ = 295, η = 0.125, s = ⌈48 ln(2·1024·295/0.1)/0.25⌉ = 2998. And
/// "fix ε, derive T, s, η": the parameters found fit the budget, a 1% smaller α does not.
#[test]
fn remark_4_7_parameters() {
    let p = TheoryParameters::from_accuracy(0.5, 0.1, 100, 10.0 * 2f64.ln()).unwrap();
    assert_eq!((p.rounds, p.samples), (295, 2998));
    assert_eq!(p.eta, 0.125);
    let budget = PrivacyLoss::approx(1.0, 1e-6).unwrap();
    let (n, q, lnx) = (1_000_000_000usize, 1000usize, 50.0);
    let p = TheoryParameters::for_budget(&budget, n, 0.05, q, lnx).unwrap();
    let spent = dualquery_loss(p.eta, p.rounds, p.samples, n, &budget).unwrap();
    assert!(spent.epsilon_at(1e-6).unwrap() <= 1.0);
    let smaller = TheoryParameters::from_accuracy(p.alpha * 0.99, 0.05, q, lnx).unwrap();
    let s2 = dualquery_loss(smaller.eta, smaller.rounds, smaller.samples, n, &budget).unwrap();
    assert!(s2.epsilon_at(1e-6).unwrap() > 1.0);
    // Tiny n: no α < 1 fits.
    assert!(TheoryParameters::for_budget(&budget, 10, 0.05, q, lnx).is_err());
}

/// Seed 001: B(α) = ⌈4 ln|𝒳|/α²⌉ = ⌈16 ln 1024⌉ = 111 at α = 1/2; Thm 4 pure ε₀ = ε/(2B);
/// (ε, δ) closed form ε/(4√(B ln(1/δ))) = 0.0063840319… for ε = 1, B = 111, δ = 1e-6, which
/// must be valid under advanced composition of 2B steps and never larger than dpqr's ε₀.
#[test]
fn seed_001_thm_4_by_hand() {
    let b = mw_dua_bound(0.5, 1024f64.ln()).unwrap();
    assert_eq!(b, 111);
    let pure = PrivacyLoss::pure(1.0).unwrap();
    let e0 = ic_epsilon0(&pure, b).unwrap();
    assert!(rel_close(e0, 1.0 / 222.0, 1e-15) && e0 <= 1.0 / 222.0);
    assert!(rel_close(
        ic_epsilon0_thm4(&pure, b).unwrap(),
        1.0 / 222.0,
        1e-15
    ));
    let approx = PrivacyLoss::approx(1.0, 1e-6).unwrap();
    let closed = ic_epsilon0_thm4(&approx, b).unwrap();
    assert!(rel_close(closed, 0.006_384_031_918_934_29, 1e-12));
    let spent = advanced_composition(closed, 0.0, 2 * b as u64, 1e-6).unwrap();
    assert!(spent.epsilon_at(1e-6).unwrap() <= 1.0);
    assert!(ic_epsilon0(&approx, b).unwrap() >= closed);
    // Thm 5 requirement by hand: ε₀ n = 10, B = 10, β = 0.2, |𝒞| = 5, n = 100:
    // Laplace term 4 ln(100)/10, EM term 2·(2/10)·ln(5·100) = 0.4 ln 500; plus 1/n.
    let req = ic_accuracy_requirement(0.1, 100, 5, 10, 0.2);
    let hand = (0.4 * 100f64.ln()).max(0.4 * 500f64.ln()) + 0.01;
    assert!(rel_close(req, hand, 1e-12));
}

fn small_data(seed: u64, n: usize) -> (Dataset, MarginalWorkload) {
    let domain = Domain::new(vec![
        ("a".to_string(), 3),
        ("b".to_string(), 4),
        ("c".to_string(), 2),
    ])
    .unwrap();
    let mut rng = seeded_rng(seed);
    let cols: Vec<Vec<u32>> = (0..3)
        .map(|j| {
            (0..n)
                .map(|_| {
                    // Skewed codes: code 0 half the time.
                    if rng.random_bool(0.5) {
                        0
                    } else {
                        rng.random_range(0..domain.size(j))
                    }
                })
                .collect()
        })
        .collect();
    let data = Dataset::from_columns(domain.clone(), cols).unwrap();
    let w = MarginalWorkload::all_kway(&domain, 2).unwrap();
    (data, w)
}

/// Exact variance of the discrete Laplace with scale t: 2p/(1 − p)², p = e^{−1/t}.
fn dlap_var(t: f64) -> f64 {
    let p = (-1.0 / t).exp();
    2.0 * p / ((1.0 - p) * (1.0 - p))
}

/// MWEM's parameters by hand — pure ε = 1, T = 5: selection ε/(2T) = 0.1, discrete
/// Laplace scale 2T/ε = 10; zCDP ρ = 0.5, T = 5: selection 2√(ρ/T) = 2√0.1, σ² = T/ρ = 10 —
/// and the noise actually added (noisy − true count of each selected query, 600 runs × 5
/// rounds) has the second moment of the hand-derived distribution: discrete Laplace(10)
/// variance 199.83, sd of X² ≈ √(20·10⁴) = 447, mean of 3000: sd 8.2, tolerance 6 sd
/// (false failure ≈ 2e-9 under the CLT); discrete Gaussian σ² = 10 ± 6·√(2·100/3000).
/// Half or double the scale falls far outside.
#[test]
fn mwem_noise_scale_matches_hand_derivation() {
    let (data, w) = small_data(1, 60);
    let counts = w.count_all(&data).unwrap();
    for (budget, expect_var, tol) in [
        (
            PrivacyLoss::pure(1.0).unwrap(),
            dlap_var(10.0),
            6.0 * 447.0 / 3000f64.sqrt(),
        ),
        (
            PrivacyLoss::zcdp(0.5).unwrap(),
            10.0,
            6.0 * (200.0f64 / 3000.0).sqrt(),
        ),
    ] {
        let mech = MwemParams::new(budget).rounds(5).passes(2).check().unwrap();
        let plan = *mech.plan();
        match (budget, plan.measurement) {
            (PrivacyLoss::Pure { .. }, MwemMeasurement::Laplace { scale }) => {
                assert!(rel_close(scale, 10.0, 1e-15) && scale >= 10.0);
                assert!(rel_close(plan.select_epsilon, 0.1, 1e-15) && plan.select_epsilon <= 0.1);
            }
            (PrivacyLoss::Zcdp { .. }, MwemMeasurement::Gaussian { sigma2 }) => {
                assert!(rel_close(sigma2, 10.0, 1e-15) && sigma2 >= 10.0);
                assert!(rel_close(plan.select_epsilon, 2.0 * 0.1f64.sqrt(), 1e-15));
                // ρ per round: ε₁²/8 + 1/(2σ²) = 0.05 + 0.05, times 5 = 0.5.
                let per = plan.select_epsilon.powi(2) / 8.0 + 1.0 / (2.0 * sigma2);
                assert!(per * 5.0 <= 0.5 + 1e-12);
            }
            other => panic!("unexpected plan {other:?}"),
        }
        let mut sum_sq = 0.0;
        let mut m = 0usize;
        for seed in 0..600u64 {
            let (_, trace) = mech
                .release_with_trace(&data, &w, &mut seeded_rng(1000 + seed))
                .unwrap();
            for (&q, &noisy) in trace.selected.iter().zip(&trace.noisy_counts) {
                let z = (noisy - counts[q] as i64) as f64;
                sum_sq += z * z;
                m += 1;
            }
        }
        let ms = sum_sq / m as f64;
        assert_eq!(m, 3000);
        assert!(
            (ms - expect_var).abs() < tol,
            "{budget}: {ms} vs {expect_var} ± {tol}"
        );
    }
}

/// The IC loop's Laplace noise has scale 1/ε₀ (count units): ε₀ = 0.2 ⇒ discrete
/// Laplace(5), variance 49.83; 3000 draws (α = 0 never stops early), sd of X² ≈
/// √20·25 = 112, tolerance 6·112/√3000 = 12.3. The distinguisher is the exponential
/// mechanism at ε₀ with sensitivity 1 (count units), and the plan's ε₀ = ε/(2B(α/2)).
#[test]
fn ic_noise_and_parameters() {
    let (data, w) = small_data(2, 60);
    let counts = w.count_all(&data).unwrap();
    let universe = Universe::new(data.domain(), 1 << 10).unwrap();
    let dist = EmDistinguisher::new(0.2).unwrap();
    assert_eq!(dist.mechanism().epsilon(), 0.2);
    // Δ = 1 plus the score's floating-point margin (sensitivity.rs, issue #23 §2)
    let d = dist.mechanism().sensitivity();
    assert!(d > 1.0 && d < 1.0 + 1e-6, "{d}");
    assert!(!dist.mechanism().monotonic());
    let mut sum_sq = 0.0;
    let mut m = 0;
    for seed in 0..300u64 {
        let mut dua = MwDua::new(&universe, &w, 0.1).unwrap();
        let (_, trace) = iterative_construction(
            &counts,
            data.n(),
            0.0,
            0.2,
            10,
            &dist,
            &mut dua,
            &mut seeded_rng(seed),
        )
        .unwrap();
        assert!(!trace.stopped_early);
        for (&q, &noisy) in trace.queries.iter().zip(&trace.noisy_counts) {
            let z = (noisy - counts[q] as i64) as f64;
            sum_sq += z * z;
            m += 1;
        }
    }
    let ms = sum_sq / m as f64;
    assert!((ms - dlap_var(5.0)).abs() < 12.3, "{ms}");
    // Plan: α = 0.5 on |𝒳| = 24 ⇒ B(α/2) = ⌈16 ln 24 / 0.25⌉ = ⌈203.4⌉ = 204, ε₀ = 1/408.
    let mech = IcParams::new(PrivacyLoss::pure(1.0).unwrap())
        .alpha(0.5)
        .check()
        .unwrap();
    let plan = mech.plan(24f64.ln(), data.n(), w.num_queries()).unwrap();
    assert_eq!(plan.rounds, 204);
    assert!(rel_close(plan.epsilon0, 1.0 / 408.0, 1e-15));
}

/// The MW DUA with exact answers (no noise) and the exact best distinguishing query
/// makes at most B(α) updates with gap ≥ α (seed 001 Def. 2): drive it to accuracy α.
#[test]
fn mw_dua_update_bound() {
    let (data, w) = small_data(3, 200);
    let universe = Universe::new(data.domain(), 1 << 10).unwrap();
    let truth = w.answers(&data).unwrap();
    let alpha = 0.1;
    let mut dua = MwDua::new(&universe, &w, alpha).unwrap();
    let bound = dua.bound(alpha).unwrap();
    let mut state = dua.initial().unwrap();
    let mut updates = 0;
    loop {
        let a = dua.answers(&state).unwrap();
        let (q, gap) = a
            .iter()
            .zip(&truth)
            .map(|(x, y)| (x - y).abs())
            .enumerate()
            .fold((0, 0.0), |b, (i, g)| if g > b.1 { (i, g) } else { b });
        if gap < alpha {
            break;
        }
        dua.update(&mut state, q, truth[q]).unwrap();
        updates += 1;
        assert!(updates <= bound, "more than B(α) = {bound} updates");
    }
}

/// DualQuery on a small binary problem: with a generous fixed T it must beat the uniform
/// baseline's max error by a factor of two, and the exhaustive and MAX-CSP oracles must
/// agree on optimality. Parities run too.
#[test]
fn dualquery_learns_small_instance() {
    let d = 6;
    let domain = Domain::new((0..d).map(|i| (format!("x{i}"), 2)).collect()).unwrap();
    let mut rng = seeded_rng(11);
    let bias: Vec<f64> = (0..d).map(|_| rng.random::<f64>()).collect();
    let n = 2000;
    let bits = BitColumns::from_fn(&domain, n, |a, _| u32::from(rng.random_bool(bias[a]))).unwrap();
    for kind in [QueryKind::Conjunction, QueryKind::Parity] {
        let work = ConjunctionWorkload::random_kway(&domain, kind, 3, 60, &mut rng).unwrap();
        let truth = work.answers(&bits).unwrap();
        let uniform_rec: Vec<Vec<u32>> = (0..64u32)
            .map(|x| (0..d).map(|i| (x >> i) & 1).collect())
            .collect();
        let uni = work
            .answers_of_records(&uniform_rec, &vec![1.0; 64])
            .unwrap();
        let uni_err = truth
            .iter()
            .zip(&uni)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let config = DualQueryConfig {
            eta: 0.3,
            samples: 200,
            rounds: 300,
            free: FreeAttributes::Random,
        };
        let out = dual_query(
            &work,
            &truth,
            n,
            &config,
            &ExhaustiveOracle::default(),
            &mut seeded_rng(5),
        )
        .unwrap();
        assert_eq!(out.records.len(), 300);
        assert_eq!(out.provably_optimal_rounds, 300);
        let synth = work
            .answers_of_records(&out.records, &vec![1.0; 300])
            .unwrap();
        let err = truth
            .iter()
            .zip(&synth)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            err < 0.5 * uni_err,
            "{kind:?}: DualQuery {err} vs uniform {uni_err}"
        );
    }
}

/// The three mechanisms through the `Mechanism` trait: the release's answers are those of
/// its synthetic data (recomputed here independently from records and weights), the
/// certificate carries the budget and replace-one neighbours.
#[test]
fn mechanisms_release_consistent_synthetic_data() {
    let (data, w) = small_data(4, 300);
    let mechs: Vec<Box<dyn Mechanism>> = vec![
        Box::new(
            MwemParams::new(PrivacyLoss::pure(2.0).unwrap())
                .check()
                .unwrap(),
        ),
        Box::new(
            MwemParams::new(PrivacyLoss::approx(2.0, 1e-6).unwrap())
                .check()
                .unwrap(),
        ),
        Box::new(
            IcParams::new(PrivacyLoss::approx(2.0, 1e-6).unwrap())
                .alpha(0.2)
                .check()
                .unwrap(),
        ),
        Box::new(
            DualQueryParams::new(PrivacyLoss::approx(2.0, 1e-3).unwrap())
                .check()
                .unwrap(),
        ),
    ];
    for m in &mechs {
        let rel = m.release(&data, &w, &mut seeded_rng(9)).unwrap();
        assert_eq!(
            rel.certificate.neighbouring(),
            Some(dp_core::Neighbouring::ReplaceOne)
        );
        assert_eq!(rel.certificate, m.certificate());
        let syn = rel.synthetic.as_ref().unwrap();
        let total: f64 = syn.weights.iter().sum();
        assert!((total - 1.0).abs() < 1e-9);
        let mut ans = vec![0.0; w.num_queries()];
        for (r, wt) in syn.weights.iter().enumerate() {
            let rec = syn.records.record(r);
            for (j, mg) in w.marginals().iter().enumerate() {
                let codes: Vec<u32> = mg.attrs().iter().map(|&a| rec[a]).collect();
                ans[w.offset(j) + mg.cell_index(&codes)] += wt;
            }
        }
        for (a, b) in ans.iter().zip(&rel.answers) {
            assert!((a - b).abs() < 1e-9, "{}: {a} vs {b}", m.name());
        }
    }
    // zCDP budgets are refused by the (ε, δ)-accounted mechanisms.
    assert!(
        DualQueryParams::new(PrivacyLoss::zcdp(1.0).unwrap())
            .check()
            .is_err()
    );
    assert!(
        IcParams::new(PrivacyLoss::zcdp(1.0).unwrap())
            .check()
            .is_err()
    );
}

/// ChainingWorstCase (seed 004 §4.3) on a marginal workload, by hand. All 2-way marginals of
/// 3 attributes separate every pair of records, and marginal answer vectors have 0/1
/// entries, so distinct records are at ℓ∞ distance exactly 1 > 2^{−j}: `S_1` is the whole
/// universe (24 records), `S_j = S_1` for j ≥ 2 (trivial), and level 1 gets all of ρ.
/// ρ = 0.5, T = 5, s_1 = 1: ε₁ = 2√(ρ/T) = 2√0.1, σ² = s²T/ρ = 10 (as MWEM's zCDP plan);
/// the noise actually added (noisy − true count, true counts from `count_all`, 600 runs ×
/// 5 rounds) has second moment 10 ± 6·√(2·100/3000) (discrete Gaussian variance 10 up to
/// e^{−2π²·10}; false failure ≈ 2e-9 under the CLT). Add/remove is refused; the
/// certificate is ρ-zCDP, replace-one.
#[test]
fn chaining_worst_case_plan_and_noise_by_hand() {
    use dp_core::Neighbouring;
    let (data, w) = small_data(3, 60);
    let counts = w.count_all(&data).unwrap();
    let mech = ChainingWorstCaseParams::new(PrivacyLoss::zcdp(0.5).unwrap())
        .alpha(0.2)
        .rounds(5)
        .check()
        .unwrap();
    let universe = Universe::new(data.domain(), 1 << 20).unwrap();
    let plan = mech.plan(&universe, &w, data.n()).unwrap();
    // k = ⌈log₂(2/0.2)⌉ = ⌈log₂ 10⌉ = 4.
    assert_eq!(plan.decomposition.levels.len(), 4);
    assert_eq!(plan.decomposition.levels[0].centers.len(), 24);
    assert_eq!(plan.levels.iter().flatten().count(), 1);
    let (rho_1, s_1, mplan) = plan.levels[0].unwrap();
    assert_eq!(rho_1, 0.5);
    assert_eq!(s_1, 1);
    assert_eq!((level_sensitivity(0), level_sensitivity(1)), (1, 2));
    assert!(rel_close(mplan.select_epsilon, 2.0 * 0.1f64.sqrt(), 1e-15));
    let sigma2 = plan.sigma2(0).unwrap();
    assert!(rel_close(sigma2, 10.0, 1e-15) && sigma2 >= 10.0);
    assert!(plan.sigma2(1).is_none());
    let cert = mech.certificate();
    assert_eq!(cert.loss, PrivacyLoss::zcdp(0.5).unwrap());
    assert_eq!(cert.neighbouring(), Some(Neighbouring::ReplaceOne));
    assert!(
        ChainingWorstCaseParams::new(PrivacyLoss::zcdp(0.5).unwrap())
            .neighbouring(Neighbouring::AddRemove)
            .check()
            .is_err()
    );
    let mut sum_sq = 0.0;
    let mut m = 0usize;
    for seed in 0..600u64 {
        let (rel, _, noisy) = mech
            .release_with_noise(&data, &w, &mut seeded_rng(5000 + seed))
            .unwrap();
        assert_eq!(rel.answers.len(), w.num_queries());
        assert!(noisy[1..].iter().all(Vec::is_empty));
        for &(q, c) in &noisy[0] {
            let z = (c - counts[q] as i64) as f64;
            sum_sq += z * z;
            m += 1;
        }
    }
    assert_eq!(m, 3000);
    let ms = sum_sq / m as f64;
    let tol = 6.0 * (200.0f64 / 3000.0).sqrt();
    assert!((ms - 10.0).abs() < tol, "{ms} vs 10 ± {tol}");
}

/// The closed-form ℓ∞ decomposition equals dp-geometry's generic greedy
/// `MultiscaleDecomposition` (Metric::LInf, Δ = 1) level by level — on a workload using all
/// attributes (every record its own class) and on one that ignores attribute c (classes of
/// two records, distance 0 inside a class).
#[test]
fn chaining_worst_case_decomposition_matches_dp_geometry() {
    use dp_geometry::{Metric, MultiscaleDecomposition, Parallelism};
    use dp_queries::MarginalPoints;
    let (data, all2) = small_data(4, 30);
    let ab = MarginalWorkload::from_attribute_lists(
        data.domain(),
        &[vec!["a".to_string(), "b".to_string()]],
    )
    .unwrap();
    let universe = Universe::new(data.domain(), 1 << 20).unwrap();
    for (w, classes) in [(&all2, 24usize), (&ab, 12)] {
        let ours = linf_marginal_decomposition(&universe, w, 3).unwrap();
        let points = MarginalPoints::new(&universe, w).unwrap();
        let generic =
            MultiscaleDecomposition::with_radius(&points, 1.0, 3, Metric::LInf, Parallelism::None)
                .unwrap();
        assert_eq!(ours.levels.len(), generic.levels().len());
        for (a, b) in ours.levels.iter().zip(generic.levels()) {
            assert_eq!(a.scale, b.scale);
            assert_eq!(a.centers, b.centers);
            assert_eq!(a.map, b.map);
        }
        assert_eq!(ours.levels[0].centers.len(), classes);
    }
}
