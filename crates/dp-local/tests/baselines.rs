//! The baselines (per-attribute randomized response, one table through k-ary RR / OLH /
//! Hadamard response, the Fourier approach of Cormode–Kulkarni–Srivastava 2018): exact
//! likelihood ratios from their listed output distributions, the samplers against those
//! distributions, and the server estimates' unbiasedness over repeated runs.

use std::collections::HashMap;
use std::hash::Hash;

use dp_core::StreamFamily;
use dp_local::LocalRandomizer;
use dp_local::client::{
    ExactDistribution, FourierParity, FrequencyOracle, PerAttributeRr, SampledTableOracle,
};
use dp_local::protocol::{BaselineKind, run_baseline};
use dp_queries::{Dataset, Domain, MarginalWorkload, Universe};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const Z: f64 = 5.0;

fn mixed() -> Domain {
    Domain::new(vec![("a".into(), 2), ("b".into(), 3), ("c".into(), 2)]).unwrap()
}

fn binary() -> Domain {
    Domain::new(vec![("a".into(), 2), ("b".into(), 2), ("c".into(), 2)]).unwrap()
}

/// The largest ratio `P[m | x]/P[m | y]` over all inputs of `domain` and messages, and
/// whether each input's distribution sums to 1.
fn max_ratio<R>(r: &R, domain: &Domain) -> f64
where
    R: ExactDistribution<Input = [u32]>,
    R::Message: Eq + Hash + Clone,
{
    let u = Universe::new(domain, 1 << 10).unwrap();
    let dists: Vec<HashMap<R::Message, f64>> = (0..u.len())
        .map(|i| {
            let d = r.distribution(&u.record(i).unwrap()).unwrap();
            let total: f64 = d.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-9, "a distribution sums to {total}");
            d.into_iter().collect()
        })
        .collect();
    let mut worst: f64 = 0.0;
    for a in &dists {
        for b in &dists {
            for (m, pa) in a {
                let pb = b.get(m).copied().unwrap_or(0.0);
                worst = worst.max(if pb == 0.0 { f64::INFINITY } else { pa / pb });
            }
        }
    }
    worst
}

#[test]
fn every_baseline_has_likelihood_ratio_at_most_e_to_the_epsilon_and_attains_it() {
    let eps = 1.3_f64;
    let w = MarginalWorkload::all_kway(&mixed(), 2).unwrap();
    let wb = MarginalWorkload::all_kway(&binary(), 2).unwrap();
    let checks: Vec<(&str, f64)> = vec![
        (
            "rr",
            max_ratio(
                &PerAttributeRr::new(eps, mixed().sizes()).unwrap(),
                &mixed(),
            ),
        ),
        (
            "grr",
            max_ratio(
                &SampledTableOracle::new(eps, FrequencyOracle::Grr, &w).unwrap(),
                &mixed(),
            ),
        ),
        (
            "olh",
            max_ratio(
                &SampledTableOracle::new(eps, FrequencyOracle::Olh, &w).unwrap(),
                &mixed(),
            ),
        ),
        (
            "hadamard",
            max_ratio(
                &SampledTableOracle::new(eps, FrequencyOracle::Hadamard, &w).unwrap(),
                &mixed(),
            ),
        ),
        (
            "fourier",
            max_ratio(&FourierParity::new(eps, &wb).unwrap(), &binary()),
        ),
    ];
    for (name, ratio) in checks {
        assert!(
            (ratio - eps.exp()).abs() < 1e-9 * eps.exp(),
            "{name}: max ratio {ratio} vs e^ε = {}",
            eps.exp()
        );
    }
}

/// Empirical frequencies of `n` draws against the listed distribution (5 s.e. per message).
fn matches_distribution<R>(r: &R, record: &[u32], n: usize)
where
    R: ExactDistribution<Input = [u32]>,
    R::Message: Eq + Hash + Clone + std::fmt::Debug,
{
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    let mut counts: HashMap<R::Message, usize> = HashMap::new();
    for _ in 0..n {
        *counts
            .entry(r.randomize(record, &mut rng).unwrap())
            .or_default() += 1;
    }
    for (m, p) in r.distribution(record).unwrap() {
        let f = counts.get(&m).copied().unwrap_or(0) as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((f - p).abs() <= Z * se + 1e-12, "{m:?}: {f} vs {p}");
    }
}

#[test]
fn the_samplers_draw_their_listed_distributions() {
    let eps = 0.9;
    let w = MarginalWorkload::all_kway(&mixed(), 2).unwrap();
    matches_distribution(
        &PerAttributeRr::new(eps, mixed().sizes()).unwrap(),
        &[1, 2, 0],
        60_000,
    );
    for oracle in [FrequencyOracle::Grr, FrequencyOracle::Hadamard] {
        let r = SampledTableOracle::new(eps, oracle, &w).unwrap();
        matches_distribution(&r, &[1, 2, 0], 60_000);
    }
    let wb = MarginalWorkload::all_kway(&binary(), 2).unwrap();
    matches_distribution(&FourierParity::new(eps, &wb).unwrap(), &[1, 0, 1], 60_000);
}

#[test]
fn olh_reports_the_hash_of_the_true_cell_with_probability_p() {
    use dp_local::client::OracleReport;
    use dp_local::client::baselines::{grr_probabilities, olh_hash, olh_range};
    let eps = 2.0;
    let d = Domain::new(vec![("b".into(), 5)]).unwrap();
    let w = MarginalWorkload::all_kway(&d, 1).unwrap();
    let r = SampledTableOracle::new(eps, FrequencyOracle::Olh, &w).unwrap();
    let g = olh_range(eps);
    let (p, _) = grr_probabilities(eps, g);
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let n = 50_000;
    let hits = (0..n)
        .filter(|_| match r.randomize(&[3], &mut rng).unwrap().report {
            OracleReport::Olh { seed, value } => olh_hash(seed, 3, g) == value,
            _ => false,
        })
        .count();
    let f = hits as f64 / n as f64;
    assert!(
        (f - p).abs() <= Z * (p * (1.0 - p) / n as f64).sqrt(),
        "{f} vs {p}"
    );
}

fn dataset(domain: Domain, n: usize, salt: usize) -> Dataset {
    let sizes = domain.sizes().to_vec();
    let cols = sizes
        .iter()
        .enumerate()
        .map(|(a, &s)| {
            (0..n)
                .map(|i| (((i * (a + 3) + salt) / (a + 1)) % s as usize) as u32)
                .collect()
        })
        .collect();
    Dataset::from_columns(domain, cols).unwrap()
}

#[test]
fn every_baseline_estimate_is_unbiased_over_repeated_runs() {
    let runs = 30;
    let eps = 1.0;
    for kind in BaselineKind::all() {
        let domain = if kind == BaselineKind::Fourier {
            binary()
        } else {
            mixed()
        };
        let data = dataset(domain, 3_000, 1);
        let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
        let truth = w.answers(&data).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(99);
        let est: Vec<Vec<f64>> = (0..runs)
            .map(|_| {
                run_baseline(kind, eps, &data, &w, &StreamFamily::fork(&mut rng))
                    .unwrap()
                    .answers
            })
            .collect();
        for (i, t) in truth.iter().enumerate() {
            let mean = est.iter().map(|e| e[i]).sum::<f64>() / runs as f64;
            let var = est.iter().map(|e| (e[i] - mean).powi(2)).sum::<f64>() / (runs - 1) as f64;
            let se = (var / runs as f64).sqrt();
            assert!(
                (mean - t).abs() <= Z * se + 1e-9,
                "{}: cell {i}: mean {mean} vs {t} (± {})",
                kind.name(),
                Z * se
            );
        }
    }
}

#[test]
fn baselines_refuse_what_they_cannot_do() {
    let w = MarginalWorkload::all_kway(&mixed(), 2).unwrap();
    let e = FourierParity::new(1.0, &w).unwrap_err();
    assert!(e.to_string().contains("binary attributes"), "{e}");
    assert!(PerAttributeRr::new(0.0, &[2, 2]).is_err());
    let r = SampledTableOracle::new(1.0, FrequencyOracle::Grr, &w).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(0);
    assert!(r.randomize(&[2, 0, 0], &mut rng).is_err());
    assert!(
        run_baseline(
            BaselineKind::Fourier,
            1.0,
            &dataset(mixed(), 10, 0),
            &w,
            &StreamFamily::fork(&mut rng)
        )
        .is_err()
    );
}
