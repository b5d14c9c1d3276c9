//! dp-geometry's hot kernels at the size of the nltcs all-3-way-marginals workload:
//! 65 536 points in dimension 4 480 (560 blocks of 8 cells, one 1 per block).
//! One oracle call (`inner_all` + argmax) and one Frank–Wolfe iteration, sequential and
//! over rayon. Then the real thing: the projection mechanism's projection of one noisy
//! answer vector of nltcs all-3way (ε = 1, δ = 1e-9, seed 1) to relative gap 1e-6 with the
//! default solver (Wolfe's min-norm point), and one `MarginalPoints` oracle call.
//!
//! `cargo bench -p dpqr-benches --bench frank_wolfe`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use dp_geometry::{
    BlockOneHotPoints, ConvexHull, FrankWolfeSettings, FrankWolfeVariant, LinearOracle,
    Parallelism, PointSet, frank_wolfe_project_hull,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

const N: usize = 65_536;
const BLOCKS: usize = 560;
const CELLS: usize = 8;

fn synthetic() -> BlockOneHotPoints {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let cells: Vec<u16> = (0..N * BLOCKS)
        .map(|_| (rng.next_u32() % CELLS as u32) as u16)
        .collect();
    BlockOneHotPoints::new(&[CELLS; BLOCKS], &cells).expect("valid synthetic point set")
}

fn kernels(c: &mut Criterion) {
    let set = synthetic();
    let dim = set.dim();
    let dir: Vec<f64> = (0..dim)
        .map(|k| ((k * 7919) % 1000) as f64 / 1000.0)
        .collect();
    let hull = ConvexHull::new(&set).expect("non-empty");
    let mut y = vec![0.0; dim];
    for i in 0..1000 {
        set.add_scaled(i * 61, 1.0 / 1000.0, &mut y);
    }
    for (k, yk) in y.iter_mut().enumerate() {
        *yk += ((k * 104_729) % 200) as f64 / 1000.0 - 0.1;
    }

    let mut group = c.benchmark_group("frank_wolfe_65536x4480");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    let mut out = vec![0.0; N];
    for par in [Parallelism::None, Parallelism::Rayon] {
        group.bench_function(format!("inner_all/{par:?}"), |b| {
            b.iter(|| {
                set.inner_all(black_box(&dir), &mut out, par);
                black_box(out[0])
            })
        });
        group.bench_function(format!("linear_max/{par:?}"), |b| {
            b.iter(|| black_box(hull.linear_max(black_box(&dir), par).map(|a| a.value)))
        });
        // Ten pairwise iterations (12 oracle calls: start, ten gaps, final gap).
        let settings = FrankWolfeSettings {
            max_iterations: 10,
            relative_gap_tolerance: 0.0,
            variant: FrankWolfeVariant::Pairwise,
            parallelism: par,
            ..FrankWolfeSettings::default()
        };
        group.bench_function(format!("pairwise_10_iterations/{par:?}"), |b| {
            b.iter(|| {
                black_box(frank_wolfe_project_hull(&hull, black_box(&y), &settings).map(|r| r.gap))
            })
        });
    }
    group.finish();
}

/// The projection of the speed target: nltcs all-3way (65 536 records, 4 480 cells),
/// one fixed noisy answer vector, projected with `ProjectionSettings::default()`
/// (min-norm point, relative gap 1e-6).
fn nltcs_projection(c: &mut Criterion) {
    use dp_core::{PrivacyLoss, seeded_rng};
    use dp_mechanisms::ProjectionParams;
    use dp_queries::{MarginalPoints, MarginalWorkload, Universe};

    let data = dp_bench::io::datasets::bundled("nltcs")
        .and_then(|d| d.load())
        .expect("bundled nltcs loads");
    let workload = MarginalWorkload::all_kway(data.domain(), 3).expect("all 3-way");
    let mech = ProjectionParams::new(PrivacyLoss::approx(1.0, 1e-9).expect("valid budget"))
        .check()
        .expect("valid parameters");
    let y = mech
        .noisy_counts(&data, &workload, &mut seeded_rng(1))
        .expect("noisy counts")
        .answers();
    let universe = Universe::new(workload.domain(), 1 << 20).expect("small universe");
    let points = MarginalPoints::new(&universe, &workload).expect("points");
    let mut scores = vec![0.0; universe.len()];

    let mut group = c.benchmark_group("projection_nltcs_all3way");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("oracle_inner_all", |b| {
        b.iter(|| {
            points.inner_all(black_box(&y), &mut scores, Parallelism::None);
            black_box(scores[0])
        })
    });
    group.bench_function("min_norm_point_to_1e-6", |b| {
        b.iter(|| {
            black_box(
                mech.project_answers(&workload, black_box(&y))
                    .map(|r| r.gap),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, kernels, nltcs_projection);
criterion_main!(benches);
