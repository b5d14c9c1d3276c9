//! Throughput of dp-core's samplers and the exponential mechanism.
//!
//! `cargo bench -p dpqr-benches --bench samplers`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dp_core::{
    DiscreteGaussian, DiscreteLaplace, ExponentialMechanism, Gaussian, Laplace, PermuteAndFlip,
    seeded_rng,
};

/// Samples drawn per benchmark iteration (throughput is reported per sample).
const BATCH: u64 = 1_000;

fn discrete_gaussian(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_gaussian");
    group.throughput(Throughput::Elements(BATCH));
    for sigma2 in [1e2, 1e4, 1e6] {
        let dg = DiscreteGaussian::new(sigma2).expect("valid sigma2");
        let mut rng = seeded_rng(1);
        group.bench_function(format!("sigma2={sigma2:e}"), |b| {
            b.iter(|| {
                let mut acc = 0i64;
                for _ in 0..BATCH {
                    acc = acc.wrapping_add(dg.sample(&mut rng));
                }
                black_box(acc)
            })
        });
    }
    // A non-integer σ² (dyadic denominator 2^k): the u128 path.
    let dg = DiscreteGaussian::new(0.1).expect("valid sigma2");
    let mut rng = seeded_rng(2);
    group.bench_function("sigma2=0.1", |b| {
        b.iter(|| {
            let mut acc = 0i64;
            for _ in 0..BATCH {
                acc = acc.wrapping_add(dg.sample(&mut rng));
            }
            black_box(acc)
        })
    });
    group.finish();
}

fn discrete_laplace(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_laplace");
    group.throughput(Throughput::Elements(BATCH));
    for scale in [1.0, 100.0, 0.37] {
        let dl = DiscreteLaplace::new(scale).expect("valid scale");
        let mut rng = seeded_rng(3);
        group.bench_function(format!("scale={scale}"), |b| {
            b.iter(|| {
                let mut acc = 0i64;
                for _ in 0..BATCH {
                    acc = acc.wrapping_add(dl.sample(&mut rng));
                }
                black_box(acc)
            })
        });
    }
    // add_noise over a slice of counts, as the mechanisms use it.
    let dl = DiscreteLaplace::new(10.0).expect("valid scale");
    let mut rng = seeded_rng(4);
    let mut counts = vec![100i64; BATCH as usize];
    group.bench_function("add_noise/scale=10", |b| {
        b.iter(|| {
            dl.add_noise(&mut counts, &mut rng).expect("no overflow");
            black_box(counts[0])
        })
    });
    group.finish();
}

fn continuous(c: &mut Criterion) {
    let mut group = c.benchmark_group("continuous");
    group.throughput(Throughput::Elements(BATCH));
    let lap = Laplace::new(1.0).expect("valid scale");
    let mut rng = seeded_rng(5);
    group.bench_function("laplace", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for _ in 0..BATCH {
                acc += lap.sample(&mut rng);
            }
            black_box(acc)
        })
    });
    let gau = Gaussian::new(1.0).expect("valid sigma");
    let mut rng = seeded_rng(6);
    group.bench_function("gaussian", |b| {
        b.iter(|| {
            let mut acc = 0.0;
            for _ in 0..BATCH {
                acc += gau.sample(&mut rng);
            }
            black_box(acc)
        })
    });
    group.finish();
}

fn exponential_mechanism(c: &mut Criterion) {
    let mut group = c.benchmark_group("exponential_mechanism");
    group.throughput(Throughput::Elements(1));
    // 1000 scores spread over [0, 100) (integer-valued, like counts) and a
    // real-valued variant; ε = 1, Δ = 1.
    let em = ExponentialMechanism::new(1.0, 1.0, false).expect("valid parameters");
    let pf = PermuteAndFlip::new(1.0, 1.0, false).expect("valid parameters");
    let mut x = 12345u64;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 11
    };
    let int_scores: Vec<f64> = (0..1000).map(|_| (next() % 100) as f64).collect();
    let real_scores: Vec<f64> = (0..1000)
        .map(|_| (next() as f64) / (1u64 << 53) as f64 * 100.0)
        .collect();
    let mut rng = seeded_rng(7);
    group.bench_function("select/1000_integer_scores", |b| {
        b.iter(|| black_box(em.select(&int_scores, &mut rng).expect("valid scores")))
    });
    group.bench_function("select/1000_real_scores", |b| {
        b.iter(|| black_box(em.select(&real_scores, &mut rng).expect("valid scores")))
    });
    group.bench_function("permute_and_flip/1000_integer_scores", |b| {
        b.iter(|| black_box(pf.select(&int_scores, &mut rng).expect("valid scores")))
    });
    group.bench_function("permute_and_flip/1000_real_scores", |b| {
        b.iter(|| black_box(pf.select(&real_scores, &mut rng).expect("valid scores")))
    });
    group.finish();
}

criterion_group!(
    benches,
    discrete_gaussian,
    discrete_laplace,
    continuous,
    exponential_mechanism
);
criterion_main!(benches);
