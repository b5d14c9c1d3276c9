//! Boosting for Queries over the relaxed projection (Dwork–Rothblum–Vadhan 2010 as used by
//! seed 000 §5): the privacy accounting derived by hand, the cost of one query draw checked
//! against the exact draw distributions on adversarial counts, the base generator's noise
//! scale, DRV's update rule, the release's accuracy and its refusals.
//!
//! Hand derivation used below (module docs of `relaxed::boosting`): with ρ split into
//! `ρ_sample = s ρ` and `ρ_base = (1 − s) ρ / T`, `α = ½ ln((1 + 2η)/(1 − 2η))` and
//! `μ = α √(2k Σ_{t=1}^{T−1} t² / ρ_sample)`, a draw in round `t` is the exponential mechanism
//! with `ε_t = 2α · 2(t − 1)/μ`, charged `ε_t²/8`; round `t` costs `k ε_t²/8`; the total is
//! `Σ_t k ε_t²/8 + T ρ_base = ρ`.

use dp_core::{Neighbouring, PrivacyLoss};
use dp_mechanisms::relaxed::BoostingAccounting;
use dp_mechanisms::relaxed::boosting::drv_update;
use dp_mechanisms::{BoostingParams, BoostingSettings, Mechanism};
use dp_queries::{Dataset, Domain, MarginalWorkload};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn binary_data(d: usize, n: usize, seed: u64) -> Dataset {
    let domain = Domain::new((0..d).map(|i| (format!("b{i}"), 2)).collect()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut columns: Vec<Vec<u32>> = Vec::new();
    for i in 0..d {
        let col: Vec<u32> = (0..n)
            .map(|r| {
                if i > 0 && rng.random::<f64>() < 0.7 {
                    columns[i - 1][r]
                } else {
                    u32::from(rng.random::<f64>() < 0.3)
                }
            })
            .collect();
        columns.push(col);
    }
    Dataset::from_columns(domain, columns).unwrap()
}

fn settings(rounds: usize, samples: usize, share: f64) -> BoostingSettings {
    BoostingSettings {
        rounds,
        samples,
        sampling_share: share,
        ..BoostingSettings::default()
    }
}

fn rho_of(loss: &PrivacyLoss) -> f64 {
    match loss {
        PrivacyLoss::Zcdp { rho } => *rho,
        other => panic!("expected a zCDP loss, got {other}"),
    }
}

#[test]
fn accounting_matches_the_hand_derivation() {
    let (rho, t_rounds, k, share) = (1.0, 4usize, 3usize, 0.5);
    let mech = BoostingParams::new(PrivacyLoss::Zcdp { rho })
        .settings(settings(t_rounds, k, share))
        .check()
        .unwrap();
    let acc = mech.accounting();
    let alpha = 0.5 * (1.2f64 / 0.8).ln();
    assert!((acc.alpha - alpha).abs() < 1e-15);
    // Σ_{t=1}^{3} t² = 14
    let mu = alpha * (2.0 * k as f64 * 14.0 / (share * rho)).sqrt();
    assert!((acc.mu / mu - 1.0).abs() < 1e-8, "μ = {} vs {mu}", acc.mu);
    assert_eq!(acc.sampling.len(), t_rounds);
    assert_eq!(rho_of(&acc.sampling[0]), 0.0, "round 1 samples uniformly");
    let mut sampled = 0.0;
    for (i, loss) in acc.sampling.iter().enumerate() {
        let eps_t = 2.0 * alpha * 2.0 * i as f64 / mu;
        let expected = k as f64 * eps_t * eps_t / 8.0;
        let got = rho_of(loss);
        assert!(
            (got - expected).abs() <= 1e-8 * expected.max(1e-300),
            "round {}: {got} vs {expected}",
            i + 1
        );
        sampled += got;
    }
    assert!((sampled / (share * rho) - 1.0).abs() < 1e-8);
    let base = (1.0 - share) * rho / t_rounds as f64;
    assert!((acc.rho_base / base - 1.0).abs() < 1e-8);
    // composed with dp-core: within the budget and using all of it
    let total = acc.rho();
    assert!(total <= rho && total > rho * (1.0 - 1e-8), "total {total}");
    assert_eq!(
        mech.certificate().loss,
        PrivacyLoss::Zcdp { rho },
        "the certificate states the budget"
    );
    assert_eq!(
        mech.certificate().neighbouring(),
        Some(Neighbouring::ReplaceOne)
    );
}

/// On counts that differ by one between neighbours (one query up, all others down: the
/// worst case for the normalisation), the exact draw distributions of the last round — on
/// the release's own scores, the exact gap sums of `BoostingScoreGrid` — differ by at most
/// `ε_t` in log-ratio — nearly attained — and their KL divergence is within the round's
/// per-draw charge `ε_t²/8`. An accounting with the wrong score sensitivity (e.g. half of
/// `t − 1` counts) or the wrong ε fails the first check.
#[test]
fn a_draw_costs_what_the_accounting_says() {
    let t_rounds = 5;
    let mech = BoostingParams::new(PrivacyLoss::Zcdp { rho: 2.0 })
        .settings(settings(t_rounds, 4, 0.5))
        .check()
        .unwrap();
    let acc = mech.accounting();
    let mu = acc.mu;
    let n = 100_000usize;
    let lambda = 3.0;
    let num = 40;
    let counts: Vec<u64> = (0..num).map(|q| 20_000 + 37 * q as u64).collect();
    let neighbour: Vec<u64> = counts
        .iter()
        .enumerate()
        .map(|(q, &c)| if q == 0 { c + 1 } else { c - 1 })
        .collect();
    // every synopsis answers count c − λ − μ/2 (as a parity value): errors in the
    // linear part of the update for both datasets
    let synopsis: Vec<f64> = counts
        .iter()
        .map(|&c| 1.0 - 2.0 * (c as f64 - lambda - mu / 2.0) / n as f64)
        .collect();
    let grid = acc.grid;
    let mut cum = vec![0i128; num];
    let mut cum2 = vec![0i128; num];
    for _ in 1..t_rounds {
        grid.accumulate(&mut cum, &mech.reweighting(&counts, &synopsis, n, lambda));
        grid.accumulate(
            &mut cum2,
            &mech.reweighting(&neighbour, &synopsis, n, lambda),
        );
    }
    let em = acc.draws[t_rounds - 1].as_ref().unwrap();
    let eps_t = em.epsilon();
    assert_eq!(
        em.sensitivity(),
        (t_rounds - 1) as f64,
        "t − 1 counts, no margin"
    );
    let s1 = grid.scores(&cum);
    let s2 = grid.scores(&cum2);
    // the gap sums are DRV's −Σ a up to the shift t − 1 and the scale 2/μ, within the grid
    // (x and λ floored to 2⁻ᶠ: each gap off by < 2·2⁻ᶠ counts, i.e. 4·2⁻ᶠ/μ in a)
    let a = drv_update(&counts, &synopsis, n, lambda, mu);
    let tolerance = (t_rounds - 1) as f64 * 4.0 / f64::from(1u32 << grid.bits()) / mu + 1e-12;
    for (s, a) in s1.iter().zip(&a) {
        let minus_sum_a = -((t_rounds - 1) as f64) * a;
        let shifted = 2.0 * s / mu - (t_rounds - 1) as f64;
        assert!(
            (shifted - minus_sum_a).abs() < tolerance,
            "{shifted} vs {minus_sum_a}"
        );
    }
    let p = em.probabilities(&s1).unwrap();
    let q = em.probabilities(&s2).unwrap();
    let worst = p
        .iter()
        .zip(&q)
        .map(|(a, b)| (a / b).ln().abs())
        .fold(0.0, f64::max);
    assert!(
        worst <= eps_t * (1.0 + 1e-9),
        "log-ratio {worst} > ε_t {eps_t}"
    );
    assert!(worst >= 0.9 * eps_t, "log-ratio {worst} ≪ ε_t {eps_t}");
    let kl: f64 = p.iter().zip(&q).map(|(a, b)| a * (a / b).ln()).sum();
    let per_draw = rho_of(&acc.sampling[t_rounds - 1]) / 4.0;
    assert!(kl <= per_draw, "KL {kl} > charged ρ per draw {per_draw}");
    // the draw samples ∝ exp(−α Σ a) = exp(2α S/μ) up to a constant: coefficient
    // ε_t/(2(t − 1)) = 2α/μ on the gap sums S
    let ratio = p[0] / p[1];
    let expected = (2.0 * acc.alpha / mu * (s1[0] - s1[1])).exp();
    assert!((ratio / expected - 1.0).abs() < 1e-9);
}

#[test]
fn drv_update_follows_the_rule() {
    let n = 1000;
    // synopsis answers count 400 (parity 1 − 0.8 = 0.2) for every query
    let synopsis = vec![0.2; 5];
    let counts = [400, 403, 405, 407, 420];
    let a = drv_update(&counts, &synopsis, n, 3.0, 4.0);
    let expected = [1.0, 1.0, 0.0, -1.0, -1.0];
    for (x, y) in a.iter().zip(&expected) {
        assert!((x - y).abs() < 1e-12, "{a:?}");
    }
    let a = drv_update(&[404], &[0.2], n, 3.0, 4.0);
    assert!((a[0] - 0.5).abs() < 1e-12, "{a:?}");
}

#[test]
fn the_base_generator_noise_has_the_hand_derived_scale() {
    // ρ = 1, s = 0.5, T = 5: ρ_base = 0.1; 6 distinct sampled queries: σ² = 6/(2·0.1) = 30.
    let mech = BoostingParams::new(PrivacyLoss::Zcdp { rho: 1.0 })
        .settings(settings(5, 6, 0.5))
        .check()
        .unwrap();
    let sigma2 = mech.base_sigma2(6);
    assert!((sigma2 / 30.0 - 1.0).abs() < 1e-6, "σ² = {sigma2}");
    let counts = vec![50u64; 6];
    let sampled: Vec<(usize, usize)> = (0..6).map(|q| (q, 1)).collect();
    let mut sum2 = 0.0;
    let mut m = 0usize;
    for seed in 0..3000 {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let b = mech
            .base_measurement(&counts, sampled.clone(), &mut rng)
            .unwrap();
        assert_eq!(b.sigma2, sigma2);
        for o in b.noisy_odd_counts {
            sum2 += ((o - 50) as f64).powi(2);
            m += 1;
        }
    }
    let var = sum2 / m as f64;
    // 18 000 draws: the variance estimate is within ±4 % of 30 far beyond 5 standard errors
    assert!((var / 30.0 - 1.0).abs() < 0.05, "empirical variance {var}");
}

#[test]
fn sampling_is_uniform_first_then_favours_badly_answered_queries() {
    let mech = BoostingParams::new(PrivacyLoss::Zcdp { rho: 50.0 })
        .settings(settings(3, 2000, 0.5))
        .check()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let first = mech.sample_queries(1, &[0; 4], &mut rng).unwrap();
    assert_eq!(first.len(), 4);
    assert!(first.iter().all(|&(_, c)| c > 400), "{first:?}");
    // query 2 was answered badly twice (a = −1: the largest gap μ̃ each time), the others
    // well (a = +1: gap 0)
    let g = mech.accounting().grid.gap_units();
    let later = mech.sample_queries(3, &[0, 0, 2 * g, 0], &mut rng).unwrap();
    let of = |q: usize| later.iter().find(|e| e.0 == q).map_or(0, |e| e.1) as f64;
    // D_3(2)/D_3(0) = exp(α·4) = 2.25 at η = 0.1
    let ratio = of(2) / of(0);
    let expected = (4.0 * mech.accounting().alpha).exp();
    assert!(
        (ratio / expected - 1.0).abs() < 0.25,
        "{later:?}, {expected}"
    );
    assert!(mech.sample_queries(4, &[0; 4], &mut rng).is_err());
}

#[test]
fn release_is_accurate_with_a_large_budget_and_its_answers_are_tables() {
    let data = binary_data(5, 3000, 11);
    let mut lists = Vec::new();
    for a in 0..5 {
        for b in a + 1..5 {
            lists.push(vec![format!("b{a}"), format!("b{b}")]);
        }
    }
    let workload = MarginalWorkload::from_attribute_lists(data.domain(), &lists).unwrap();
    let truth = workload.answers(&data).unwrap();
    let mech = BoostingParams::new(PrivacyLoss::Zcdp { rho: 20.0 })
        .check()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let release = mech.release(&data, &workload, &mut rng).unwrap();
    assert_eq!(release.answers.len(), truth.len());
    let max = release
        .answers
        .iter()
        .zip(&truth)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(max < 0.05, "max error {max}");
    // each 2-way table sums to 1 (the empty parity is exact)
    for table in release.answers.chunks(4) {
        assert!((table.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
    assert!(release.diagnostics.iterations.unwrap() >= 1);
    assert!(
        release.diagnostics.notes[0].contains("Dwork, Rothblum, Vadhan 2010"),
        "{:?}",
        release.diagnostics.notes
    );
}

#[test]
fn refusals_are_clear() {
    let pure = BoostingParams::new(PrivacyLoss::Pure { epsilon: 1.0 }).check();
    let msg = pure.unwrap_err().to_string();
    assert!(msg.contains("boosting") && msg.contains("δ"), "{msg}");
    let add = BoostingParams::new(PrivacyLoss::Zcdp { rho: 1.0 })
        .neighbouring(Neighbouring::AddRemove)
        .check();
    assert!(add.is_err());
    for bad in [
        settings(0, 4, 0.5),
        settings(3, 0, 0.5),
        settings(3, 4, 0.0),
        settings(3, 4, 1.0),
        BoostingSettings {
            eta: 0.5,
            ..BoostingSettings::default()
        },
        BoostingSettings {
            lambda_sigmas: f64::NAN,
            ..BoostingSettings::default()
        },
    ] {
        let e = BoostingParams::new(PrivacyLoss::Zcdp { rho: 1.0 })
            .settings(bad)
            .check();
        let msg = e.unwrap_err().to_string();
        assert!(!msg.contains("Some(") && !msg.is_empty(), "{msg}");
    }
    // a categorical attribute is refused by name
    let domain = Domain::new(vec![("colour".into(), 3), ("b".into(), 2)]).unwrap();
    let data = Dataset::from_columns(domain, vec![vec![0, 1, 2], vec![0, 1, 1]]).unwrap();
    let workload =
        MarginalWorkload::from_attribute_lists(data.domain(), &[vec!["colour".to_string()]])
            .unwrap();
    let mech = BoostingParams::new(PrivacyLoss::Zcdp { rho: 1.0 })
        .check()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let msg = mech
        .release(&data, &workload, &mut rng)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("colour"), "{msg}");
}

/// Count-like settings never become an allocation failure: rounds beyond
/// `BoostingSettings::MAX_ROUNDS` (every round keeps state until the median) are refused as
/// a parameter, naming it, the limit and why, by the parameters and by the accounting alone;
/// a huge number of draws per round is composed by doubling, never listed. (`rounds = 1e9`
/// used to abort while the mechanism was built: the accounting reserved 24 GB, and each
/// round listed its `k` draws.)
#[test]
fn huge_counts_are_parameter_errors_not_allocation_failures() {
    let rho = PrivacyLoss::Zcdp { rho: 1.0 };
    let max = BoostingSettings::MAX_ROUNDS;
    for rounds in [max + 1, 1_000_000_000, usize::MAX] {
        let e = BoostingParams::new(rho)
            .settings(settings(rounds, 4, 0.5))
            .check()
            .unwrap_err()
            .to_string();
        for want in [
            format!("invalid parameter rounds = {rounds}"),
            format!("at most {max} rounds"),
            "memory or time".to_string(),
        ] {
            assert!(e.contains(&want), "{want}: {e}");
        }
        assert!(BoostingAccounting::new(1.0, rounds, 4, 0.1, 0.5).is_err());
    }
    // at the limit: built, one draw per round, within the budget
    let at = BoostingParams::new(rho)
        .settings(settings(max, 4, 0.5))
        .check()
        .unwrap();
    assert_eq!(at.accounting().draws.len(), max);
    assert!(at.accounting().rho() <= 1.0);
    // draws per round far beyond any list: composed at once, and all of ρ is accounted
    for samples in [1usize << 40, usize::MAX] {
        let m = BoostingParams::new(rho)
            .settings(settings(9, samples, 0.5))
            .check()
            .unwrap();
        let total = m.accounting().rho();
        assert!(total <= 1.0 && total > 1.0 - 1e-6, "{samples}: {total}");
    }
}

/// The JL step (seed 000 §5.2): the stored vectors reproduce Frank–Wolfe's iterate exactly,
/// a map to at least the concatenated dimension keeps them, and a compression to a few
/// hundred dimensions keeps every parity within the JL distortion (polarisation with norms
/// ≤ 2: |error| ≤ γ·2 for a γ whose union bound holds with high probability).
#[test]
fn the_jl_synopsis_reproduces_the_projection_and_compresses_it() {
    use dp_geometry::{FrankWolfeSettings, frank_wolfe_project};
    use dp_mechanisms::relaxed::jl::VectorParityBody;
    use dp_queries::ParityQueries;
    let parities = ParityQueries::all_up_to(6, 2).unwrap();
    let body =
        VectorParityBody::new(&parities, dp_mechanisms::RelaxedSettings::default().oracle).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let mut y = vec![1.0];
    y.extend((0..parities.len()).map(|_| rng.random::<f64>() * 1.6 - 0.8));
    let fw = FrankWolfeSettings {
        max_iterations: 40,
        ..FrankWolfeSettings::default()
    };
    let result = frank_wolfe_project(&body, &y, &fw).unwrap();
    assert!(!result.atoms.is_empty());
    let exact = body.exact_point(&result.atoms).unwrap();
    for (a, b) in exact.iter().zip(&result.point) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    let (_, _, total) = body.concatenated(&result.atoms).unwrap();
    let kept = body.compress(&result.atoms, total, &mut rng).unwrap();
    assert_eq!(kept.dim, total);
    for (a, b) in body.answers(&kept).iter().zip(&result.point[1..]) {
        assert!((a - b).abs() < 1e-9);
    }
    let small = body.compress(&result.atoms, 400, &mut rng).unwrap();
    assert_eq!(small.dim, 400.min(total));
    let worst = body
        .answers(&small)
        .iter()
        .zip(&result.point[1..])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 0.4, "JL distortion {worst}");
    // and a badly compressed one (D = 1) is visibly different: the test can see compression
    let one = body.compress(&result.atoms, 1, &mut rng).unwrap();
    let worst1 = body
        .answers(&one)
        .iter()
        .zip(&result.point[1..])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst1 > worst, "{worst1} vs {worst}");
}
