//! The Johnson–Lindenstrauss compression of boosting's synopsis (`relaxed/jl.rs`): every row
//! and column vector of the relaxation (`P` of them, concatenated dimension `R`) mapped to
//! `D = 64`. Row by row with `apply` (the code before faer) against one faer product
//! (`apply_rows`), at nltcs all-3-way's shape (P = 154, R = 60 steps × rank 18) and adult
//! one-hot all-2-way's (P = 1 174, R = 60 × 49).
//!
//! `cargo bench -p dpqr-benches --bench jl`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use dp_geometry::{JohnsonLindenstrauss, Parallelism};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn compress(c: &mut Criterion) {
    let mut group = c.benchmark_group("jl_compress_d64");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    for (name, p, r) in [
        ("nltcs_3way", 154, 60 * 18),
        ("adult_onehot_2way", 1174, 60 * 49),
    ] {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let map = JohnsonLindenstrauss::new(r, 64, &mut rng).expect("valid map");
        let m: Vec<f64> = (0..p * r).map(|_| rng.random_range(-0.2..0.2)).collect();
        group.bench_function(format!("{name}/apply_per_row"), |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(p * 64);
                for row in black_box(&m).chunks_exact(r) {
                    out.extend(map.apply(row).expect("finite"));
                }
                black_box(out)
            })
        });
        for par in [Parallelism::None, Parallelism::Rayon] {
            group.bench_function(format!("{name}/apply_rows_faer/{par:?}"), |b| {
                b.iter(|| black_box(map.apply_rows(black_box(&m), par).expect("finite")))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, compress);
criterion_main!(benches);
