//! The table-sampled point release and the local protocols of seed 004 §5 (Theorem 5.1 and
//! 1.6) against their derivations: unbiasedness and second moment of the one-table message,
//! the exact e^ε ratio on the worst pair of inputs, the protocols' unbiased server estimate,
//! determinism from a seed, and the client/server split.
//!
//! Statistical checks use fixed seeds and 5-standard-error tolerances (two-sided false
//! failure below 6e-7 per check).

use dp_core::StreamFamily;
use dp_local::client::{IncrementEncoding, MarginalEncoding};
use dp_local::protocol::simulate_clients;
use dp_local::{
    LocalMechanismKind, LocalProtocol, LocalRandomizer, LocalSettings, SampledTableRelease,
    TableEncoding,
};
use dp_queries::{Dataset, Domain, MarginalWorkload, Universe};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

const Z: f64 = 5.0;

fn domain() -> Domain {
    Domain::new(vec![("a".into(), 2), ("b".into(), 3), ("c".into(), 2)]).unwrap()
}

fn family(seed: u64) -> StreamFamily {
    StreamFamily::fork(&mut ChaCha20Rng::seed_from_u64(seed))
}

/// `n` draws of one record's message, each rescaled by `m·R` into the full vector.
fn estimates<E: TableEncoding>(r: &SampledTableRelease<E>, record: &[u32], n: usize) -> Vec<f64> {
    let sizes = r.encoding().table_sizes().to_vec();
    let offsets: Vec<usize> = sizes
        .iter()
        .scan(0, |s, k| {
            let o = *s;
            *s += k;
            Some(o)
        })
        .collect();
    let total: usize = sizes.iter().sum();
    let mut sum = vec![0.0; total];
    let mut sum2 = vec![0.0; total];
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    for _ in 0..n {
        let m = r.randomize(record, &mut rng).unwrap();
        for (i, w) in m.w.iter().enumerate() {
            let v = r.unbias_factor() * w;
            sum[offsets[m.table] + i] += v;
            sum2[offsets[m.table] + i] += v * v;
        }
    }
    sum.iter().chain(&sum2).map(|s| s / n as f64).collect()
}

#[test]
fn the_one_table_message_is_unbiased_with_the_dense_second_moment() {
    let d = domain();
    let w = MarginalWorkload::all_kway(&d, 2).unwrap();
    let truth = w
        .answers(&Dataset::from_columns(d.clone(), vec![vec![1], vec![2], vec![0]]).unwrap())
        .unwrap();
    let eps = 1.0;
    let r = SampledTableRelease::new(eps, MarginalEncoding::new(&w)).unwrap();
    let n = 200_000;
    let est = estimates(&r, &[1, 2, 0], n);
    let (mean, second) = est.split_at(truth.len());
    let m = w.len() as f64;
    // E V̂_i² = m R² c² (R = 1) on every coordinate — the dense release's value; the
    // variance is at most that
    let m2 = m * r.scale() * r.scale();
    let se = (m2 / n as f64).sqrt();
    for (i, (e, t)) in mean.iter().zip(&truth).enumerate() {
        assert!(
            (e - t).abs() <= Z * se,
            "cell {i}: mean {e} vs {t} (± {})",
            Z * se
        );
    }
    // V̂_i² is m²c²Z² with probability 1/m: Var(V̂_i²) = m⁴c⁴·3/m − (m c²)² ≤ 3m³c⁴
    let se2 = (3.0 * m.powi(3) * r.scale().powi(4) / n as f64).sqrt();
    for (i, s) in second.iter().enumerate() {
        assert!(
            (s - m2).abs() <= Z * se2,
            "cell {i}: E V̂² = {s} vs {m2} (± {})",
            Z * se2
        );
    }
}

#[test]
fn the_worst_pair_of_increments_has_likelihood_ratio_e_to_the_epsilon() {
    // One table (attribute b alone), a two-level chain whose level-2 increments are
    // e_u − e_v and e_v − e_u for two records: U is opposite for them, so the event
    // "W_u − W_v > 0" has probability 1/(1 + e^{∓ε}), ratio e^ε exactly.
    let d = Domain::new(vec![("b".into(), 3)]).unwrap();
    let w = MarginalWorkload::all_kway(&d, 1).unwrap();
    let u = Universe::new(&d, 10).unwrap();
    // level 1: everything to record 0; level 2: 1 and 2 stay, 0 stays
    let maps = vec![vec![0, 0, 0], vec![0, 1, 2]];
    let eps = 1.5;
    let r =
        SampledTableRelease::new(eps, IncrementEncoding::new(&w, &u, maps, 1).unwrap()).unwrap();
    let n = 100_000;
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    // record 1: increment e_1 − e_0; record 0: increment 0; the pair (1, 0) vs itself is
    // the largest contrast available here: P = 1/(1+e^{−ε}) against 1/2
    for (record, want) in [(1u32, 1.0 / (1.0 + (-eps).exp())), (0u32, 0.5)] {
        let hits = (0..n)
            .filter(|_| {
                let m = r.randomize(&[record], &mut rng).unwrap();
                m.w[1] - m.w[0] > 0.0
            })
            .count();
        let f = hits as f64 / n as f64;
        let se = (want * (1.0 - want) / n as f64).sqrt();
        assert!((f - want).abs() <= Z * se, "record {record}: {f} vs {want}");
    }
    // the exact bound: 1/(1+e^{−ε}) over 1/(1+e^{ε}) (the reversed increment) is e^ε
    let ratio = (1.0 + eps.exp()) / (1.0 + (-eps).exp());
    assert!((ratio - eps.exp()).abs() < 1e-12 * eps.exp());
}

fn dataset(n: usize) -> Dataset {
    let d = domain();
    let cols = vec![
        (0..n).map(|i| (i % 2) as u32).collect(),
        (0..n).map(|i| ((i * 7 / 3) % 3) as u32).collect(),
        (0..n).map(|i| ((i / 5) % 2) as u32).collect(),
    ];
    Dataset::from_columns(d, cols).unwrap()
}

#[test]
fn the_server_estimate_of_every_protocol_is_unbiased() {
    let data = dataset(60_000);
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    let truth = w.answers(&data).unwrap();
    let eps = 2.0;
    for kind in [LocalMechanismKind::Projection, LocalMechanismKind::Chaining] {
        let p = LocalProtocol::new(kind, eps, LocalSettings::default()).unwrap();
        let rel = p.run(&data, &w, &family(3)).unwrap();
        let levels = rel.messages_per_client as f64;
        // each level: per-coordinate variance ≤ m R² c²/n with c at ε/L, R ≤ √2
        let c = dp_local::PointRelease::scale_for(eps / levels);
        let se = (w.len() as f64 * 2.0 * c * c / data.n() as f64).sqrt() * levels.sqrt();
        for (i, (e, t)) in rel.estimate.iter().zip(&truth).enumerate() {
            assert!(
                (e - t).abs() <= Z * se,
                "{}: cell {i}: {e} vs {t} (± {})",
                kind.name(),
                Z * se
            );
        }
        // the projection lies in the hull: every table sums to 1, within the solver's slack
        for j in 0..w.len() {
            let (lo, k) = (w.offset(j), w.marginals()[j].num_cells());
            let s: f64 = rel.answers[lo..lo + k].iter().sum();
            assert!(
                (s - 1.0).abs() < 1e-3,
                "{}: table {j} sums to {s}",
                kind.name()
            );
        }
    }
}

#[test]
fn projection_is_never_farther_than_the_estimate_and_error_falls_with_n() {
    let w = MarginalWorkload::all_kway(&domain(), 2).unwrap();
    let p = LocalProtocol::new(
        LocalMechanismKind::Projection,
        1.0,
        LocalSettings::default(),
    )
    .unwrap();
    let mut errs = Vec::new();
    for n in [1_000, 100_000] {
        let data = dataset(n);
        let truth = w.answers(&data).unwrap();
        let rel = p.run(&data, &w, &family(9)).unwrap();
        let dist = |v: &[f64]| -> f64 {
            v.iter()
                .zip(&truth)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt()
        };
        assert!(dist(&rel.answers) <= dist(&rel.estimate) + 1e-3);
        errs.push(dist(&rel.answers));
    }
    assert!(errs[1] < errs[0] / 2.0, "error vs n: {errs:?}");
}

#[test]
fn coarse_projection_runs_and_rounds_to_its_cover() {
    let data = dataset(20_000);
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    let settings = LocalSettings {
        alpha: Some(1.0),
        ..LocalSettings::default()
    };
    let p = LocalProtocol::new(LocalMechanismKind::Coarse, 1.0, settings).unwrap();
    let rel = p.run(&data, &w, &family(1)).unwrap();
    assert_eq!(rel.answers.len(), w.num_queries());
    assert!(
        rel.notes[0].starts_with("cover: α = 1.0000"),
        "{:?}",
        rel.notes
    );
}

#[test]
fn a_seed_fixes_the_release_and_other_seeds_change_it() {
    let data = dataset(5_000);
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    let p = LocalProtocol::new(
        LocalMechanismKind::Projection,
        1.0,
        LocalSettings::default(),
    )
    .unwrap();
    let a = p.run(&data, &w, &family(4)).unwrap();
    let b = p.run(&data, &w, &family(4)).unwrap();
    let c = p.run(&data, &w, &family(5)).unwrap();
    assert_eq!(a.estimate, b.estimate);
    assert_ne!(a.estimate, c.estimate);
}

#[test]
fn bad_parameters_and_records_are_refused() {
    let w = MarginalWorkload::all_kway(&domain(), 2).unwrap();
    assert!(
        LocalProtocol::new(
            LocalMechanismKind::Projection,
            0.0,
            LocalSettings::default()
        )
        .is_err()
    );
    let bad_alpha = LocalSettings {
        alpha: Some(0.0),
        ..LocalSettings::default()
    };
    assert!(LocalProtocol::new(LocalMechanismKind::Coarse, 1.0, bad_alpha).is_err());
    let r = SampledTableRelease::new(1.0, MarginalEncoding::new(&w)).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(0);
    let e = r.randomize(&[1, 3, 0], &mut rng).unwrap_err();
    assert!(e.to_string().contains("above its range"), "{e}");
    assert!(r.randomize(&[1, 0], &mut rng).is_err());
    let p = LocalProtocol::new(
        LocalMechanismKind::Projection,
        1.0,
        LocalSettings::default(),
    )
    .unwrap();
    assert!(p.run(&Dataset::empty(domain()), &w, &family(0)).is_err());
}

#[test]
fn simulated_clients_send_one_message_each() {
    let data = dataset(1_234);
    let w = MarginalWorkload::all_kway(data.domain(), 3).unwrap();
    let r = SampledTableRelease::new(1.0, MarginalEncoding::new(&w)).unwrap();
    let agg = simulate_clients(&r, &data, &family(2), 0).unwrap();
    assert_eq!(agg.messages(), 1_234);
}

/// Every protocol's release carries the certificate it states before running: the local
/// model (no neighbouring relation), pure ε at the protocol's ε, under its catalogue name;
/// local chaining sends one message per non-trivial level at ε/L each, the others one.
#[test]
fn every_release_states_the_local_model() {
    let data = dataset(2_000);
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    for kind in [
        LocalMechanismKind::Projection,
        LocalMechanismKind::Coarse,
        LocalMechanismKind::Chaining,
    ] {
        let p = LocalProtocol::new(kind, 1.5, LocalSettings::default()).unwrap();
        let rel = p.run(&data, &w, &family(4)).unwrap();
        assert_eq!(rel.certificate, p.certificate(), "{}", kind.name());
        let c = &rel.certificate;
        assert_eq!(c.model, dp_mechanisms::PrivacyModel::Local);
        assert_eq!(c.neighbouring(), None);
        assert_eq!(c.mechanism, kind.name());
        assert_eq!(c.loss, dp_core::PrivacyLoss::Pure { epsilon: 1.5 });
        assert_eq!(
            c.statement(),
            format!(
                "{}: local ε-DP with ε = 1.5 (any two inputs of one client)",
                kind.name()
            )
        );
        if kind == LocalMechanismKind::Chaining {
            assert!(rel.messages_per_client >= 1);
        } else {
            assert_eq!(rel.messages_per_client, 1, "{}", kind.name());
        }
    }
}
