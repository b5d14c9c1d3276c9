//! Marginal counting throughput: all 364 3-way marginals of adult (48 842 rows, 14 attributes).
//!
//! Throughput is reported in row×marginal updates (one table increment per record per
//! marginal), once on one thread and once with rayon over marginals.
//! Run: `cargo bench -p dpqr-benches --bench counting`.

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dp_queries::{BinaryDataset, Dataset, MarginalWorkload, Parallelism};

fn load_adult() -> Dataset {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/adult");
    match Dataset::load_csv(&dir.join("adult.csv"), &dir.join("adult-domain.json")) {
        Ok(d) => d,
        Err(e) => panic!("cannot load adult: {e}"),
    }
}

fn counting(c: &mut Criterion) {
    let data = load_adult();
    let w = match MarginalWorkload::all_kway(data.domain(), 3) {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    let updates = (w.len() * data.n()) as u64;
    let mut g = c.benchmark_group("adult_all_3way");
    g.throughput(Throughput::Elements(updates));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("sequential", |b| {
        b.iter(|| w.count_all_with(&data, Parallelism::None))
    });
    g.bench_function("rayon", |b| {
        b.iter(|| w.count_all_with(&data, Parallelism::Rayon))
    });
    // The same into a reused output buffer (no allocation / page faults: the 20.9 M-cell
    // output alone is 167 MB of u64).
    let mut out = vec![0u64; w.num_queries()];
    g.bench_function("sequential_reuse", |b| {
        b.iter(|| w.count_all_into(&data, &mut out, Parallelism::None))
    });
    g.bench_function("rayon_reuse", |b| {
        b.iter(|| w.count_all_into(&data, &mut out, Parallelism::Rayon))
    });
    g.finish();

    // Conjunction counting on the one-hot encoding (d = 588 bits, 10 words per row).
    let bin = BinaryDataset::from_dataset(&data);
    let bits = [
        bin.attribute_bits(8).start,
        bin.attribute_bits(7).start,
        bin.attribute_bits(13).start + 1,
    ];
    let mut g = c.benchmark_group("adult_onehot");
    g.throughput(Throughput::Elements(data.n() as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(2));
    g.bench_function("conjunction_3", |b| b.iter(|| bin.count_conjunction(&bits)));
    g.bench_function("parity_3", |b| b.iter(|| bin.count_parity(&bits)));
    g.finish();
}

criterion_group!(benches, counting);
criterion_main!(benches);
