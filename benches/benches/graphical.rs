//! The graphical model's two hot kernels in an `adaptive-projection` release on adult
//! (48 842 rows, 14 attributes): answering a workload table that lies in no single clique
//! (exact elimination over the junction tree, every candidate every round) and one fit of
//! 20 mirror-descent steps. The model is the one an ε = 10 release on the peers' W64 grows
//! (the cliques that release measured, seed 1: 936 830 cells on 8 junction-tree cliques),
//! fitted to exact counts — timing only, no privacy role.
//! Run: `cargo bench -p dpqr-benches --bench graphical`.

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use dp_queries::{
    Dataset, GraphicalModel, GraphicalModelSettings, Marginal, MarginalWorkload, NoisyMarginal,
};

/// The tables the ε = 10 W64 release (seed 1) measured after its 1-way tables.
const MEASURED: &[&[usize]] = &[
    &[4, 6, 7],
    &[6, 8],
    &[3, 5, 13],
    &[4, 13],
    &[0, 4],
    &[9, 10, 13],
    &[5, 6, 7],
    &[1, 4],
    &[1, 3, 8],
    &[7, 12],
    &[8, 11],
    &[7, 11, 12],
    &[3, 4],
    &[1, 11],
    &[0, 6],
    &[5, 11],
    &[4, 5, 13],
    &[4, 8],
    &[0, 1],
    &[1, 7, 13],
    &[2, 7],
    &[8, 13],
    &[2, 8],
    &[1, 2],
    &[0, 13],
    &[1, 9, 13],
    &[2, 13],
    &[1, 3, 4],
    &[0, 8],
    &[7, 8],
    &[5, 6],
    &[3, 9],
    &[5, 7],
    &[8, 12],
    &[3, 13],
    &[1, 4, 7],
    &[2, 6],
    &[1, 8],
    &[3, 6],
];

fn fail(e: impl std::fmt::Display) -> ! {
    panic!("{e}")
}

fn graphical(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data");
    let dir = root.join("adult");
    let data = Dataset::load_csv(&dir.join("adult.csv"), &dir.join("adult-domain.json"))
        .unwrap_or_else(|e| fail(e));
    let domain = data.domain().clone();
    let mut tables: Vec<Vec<usize>> = (0..domain.len()).map(|a| vec![a]).collect();
    tables.extend(MEASURED.iter().map(|t| t.to_vec()));
    let measurements: Vec<NoisyMarginal> = tables
        .iter()
        .map(|t| {
            let marginal = Marginal::new(&domain, t.clone()).unwrap_or_else(|e| fail(e));
            let values = marginal
                .try_count(&data)
                .unwrap_or_else(|e| fail(e))
                .into_iter()
                .map(|v| v as f64)
                .collect();
            NoisyMarginal {
                marginal,
                values,
                sigma: 1.0,
                groups: None,
            }
        })
        .collect();
    let total = data.n() as f64;
    let settings = GraphicalModelSettings {
        iterations: 20,
        ..GraphicalModelSettings::default()
    };
    let (model, _) = GraphicalModel::fit(&domain, &measurements, total, &settings, None)
        .unwrap_or_else(|e| fail(e));
    let w64 = MarginalWorkload::from_json_file(&domain, &root.join("workloads/adult_w64.json"))
        .unwrap_or_else(|e| fail(e));
    let out_of_clique: Vec<Vec<usize>> = w64
        .marginals()
        .iter()
        .map(|m| {
            let mut a = m.attrs().to_vec();
            a.sort_unstable();
            a
        })
        .filter(|a| {
            !model
                .junction_tree()
                .cliques()
                .iter()
                .any(|c| a.iter().all(|x| c.contains(x)))
        })
        .collect();
    let mut g = c.benchmark_group("adult_w64_model");
    // one iteration takes seconds: ten of them, not criterion's linear ramp of 55
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(20));
    g.bench_function(
        format!("out_of_clique_marginals_{}", out_of_clique.len()),
        |b| {
            b.iter(|| {
                for a in &out_of_clique {
                    model.marginal(a).unwrap_or_else(|e| fail(e));
                }
            })
        },
    );
    g.bench_function("fit_20_steps_warm", |b| {
        b.iter(|| GraphicalModel::fit(&domain, &measurements, total, &settings, Some(&model)))
    });
    g.finish();
}

criterion_group!(benches, graphical);
criterion_main!(benches);
