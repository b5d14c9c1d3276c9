//! The Grothendieck certificate at the size of adult's one-hot all-2-way relaxation: 586
//! binary attributes, degree 2, so a 587 × 587 bipartite SDP and a 1 174 × 1 174 dual slack.
//! One cold solve of a fixed seeded direction (uniform in [−1, 1]) at the relaxed
//! projection's per-solve tolerance (1e-6) over rayon, once with the dense certificate and
//! once with the Gershgorin bound only: the difference is the certificate's cost.
//!
//! `cargo bench -p dpqr-benches --bench grothendieck`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use dp_geometry::{GrothendieckSettings, LinearOracle, Parallelism, ParityRelaxation};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

const ATTRIBUTES: usize = 586;

fn certificate(c: &mut Criterion) {
    let dense = GrothendieckSettings {
        relative_tolerance: 1e-6,
        ..GrothendieckSettings::default()
    };
    let gershgorin = GrothendieckSettings {
        dense_certificate_limit: 0,
        ..dense.clone()
    };
    let mut group = c.benchmark_group("grothendieck_adult_onehot_2way");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (name, settings) in [
        ("dense_certificate", dense),
        ("gershgorin_only", gershgorin),
    ] {
        let relaxation =
            ParityRelaxation::new(ATTRIBUTES, 2, settings).expect("adult-sized relaxation");
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let dir: Vec<f64> = (0..relaxation.dim())
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        group.bench_function(format!("cold_solve/{name}"), |b| {
            b.iter(|| {
                black_box(
                    relaxation
                        .solve_from(black_box(&dir), None, Parallelism::Rayon)
                        .map(|s| (s.upper_bound, s.certificate)),
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, certificate);
criterion_main!(benches);
