//! Chaining (seed 004 §4.2, Thm 1.3) with negligible noise reproduces the true answers on
//! every workload shape: all-k-way, random k-way and JSON-style lists of mixed sizes
//! (issue #9 item 7).
//!
//! # The tolerance, derived
//! With ρ = 10¹⁰ every level's discrete Gaussian has σ² = Δ₂²/(2ρ_j) ≤ 8·#tables·L/(2·10¹⁰)
//! ≤ 10⁻⁷ here, and `P(N_Z(0, σ²) ≠ 0) ≤ 2·e^{−1/(2σ²)} ≤ 2·e^{−5·10⁶}`: the noisy level
//! counts equal the exact ones (the false-failure probability over all coordinates of all
//! runs below is < 10⁻¹⁰⁰⁰⁰⁰⁰; the test also checks it through the noise hook). Then level
//! `j`'s target `y_j` is its true mean increment `u_j ∈ conv 𝒳^(j)`, and the projection
//! inequality of [`dp_mechanisms::projection::project_onto`] with `u = y = u_j` gives
//! `‖v_j − u_j‖² ≤ −‖v_j − u_j‖² + g_j`, i.e. `‖v_j − u_j‖ ≤ √(g_j/2)` for the level's
//! Frank–Wolfe gap `g_j`. The decomposition is exact (the remainder `q(x) − q(x_k)` is 0,
//! docs/mechanisms/projection.md), so the truth is `Σ_j u_j` and
//! `‖v − truth‖₂ ≤ Σ_j √(g_j/2) ≤ √(L·G/2)` with `G = Σ_j g_j` the reported gap and `L`
//! the number of noisy levels (Cauchy–Schwarz). The test allows that plus 10⁻⁹ of
//! floating-point round-off.

use dp_core::PrivacyLoss;
use dp_geometry::FrankWolfeSettings;
use dp_mechanisms::projection::metric::MarginalMetric;
use dp_mechanisms::{ChainingParams, Mechanism, ProjectionSettings};
use dp_queries::{Dataset, Domain, MarginalWorkload, Universe};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn domain(sizes: &[u32]) -> Domain {
    Domain::new(
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| (format!("a{i}"), s))
            .collect(),
    )
    .unwrap()
}

/// n records, attribute i skewed towards 0 and correlated with attribute i − 1.
fn dataset(d: &Domain, n: usize, seed: u64) -> Dataset {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut cols: Vec<Vec<u32>> = vec![Vec::with_capacity(n); d.len()];
    for _ in 0..n {
        let mut prev = 0u32;
        for (i, col) in cols.iter_mut().enumerate() {
            let s = d.size(i);
            let u: f64 = rng.random();
            let v = if rng.random::<f64>() < 0.3 {
                prev.min(s - 1)
            } else {
                ((u * u * s as f64) as u32).min(s - 1)
            };
            col.push(v);
            prev = v;
        }
    }
    Dataset::from_columns(d.clone(), cols).unwrap()
}

fn lists(names: &[&[usize]]) -> Vec<Vec<String>> {
    names
        .iter()
        .map(|l| l.iter().map(|a| format!("a{a}")).collect())
        .collect()
}

/// Every shape: all-k-way, random k-way and attribute lists, on a mixed-size and a binary
/// domain.
fn shapes() -> Vec<(String, Dataset, MarginalWorkload)> {
    let d = domain(&[2, 3, 2, 4, 2, 3, 2]);
    let data = dataset(&d, 700, 1);
    let bits = domain(&[2; 9]);
    let bdata = dataset(&bits, 500, 2);
    let mut out = Vec::new();
    for k in 1..=3 {
        out.push((
            format!("mixed all-{k}way"),
            data.clone(),
            MarginalWorkload::all_kway(&d, k).unwrap(),
        ));
        out.push((
            format!("bits all-{k}way"),
            bdata.clone(),
            MarginalWorkload::all_kway(&bits, k).unwrap(),
        ));
    }
    for (k, m, seed) in [(2, 5, 3u64), (2, 12, 4), (3, 12, 5), (3, 20, 6)] {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        out.push((
            format!("mixed random-{k}way:{m}"),
            data.clone(),
            MarginalWorkload::random_kway(&d, k, m, None, &mut rng).unwrap(),
        ));
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        out.push((
            format!("bits random-{k}way:{m}"),
            bdata.clone(),
            MarginalWorkload::random_kway(&bits, k, m, None, &mut rng).unwrap(),
        ));
    }
    // JSON-style lists of mixed sizes; attribute 0 (resp. 8) is in one table of ≥ 8, which
    // makes the decomposition multi-level (8·#tables∋a ≤ #tables, see `exact_levels`).
    let json: &[&[usize]] = &[
        &[0],
        &[1, 2, 3],
        &[1, 4],
        &[5, 6],
        &[1, 3, 5, 6],
        &[2],
        &[2, 4, 6],
        &[3, 5],
        &[4, 6],
    ];
    out.push((
        "mixed JSON list".into(),
        data.clone(),
        MarginalWorkload::from_attribute_lists(&d, &lists(json)).unwrap(),
    ));
    let json: &[&[usize]] = &[&[0, 1, 2, 3], &[4], &[5, 6], &[7, 8], &[0, 7], &[3, 4, 5]];
    out.push((
        "bits JSON list".into(),
        bdata.clone(),
        MarginalWorkload::from_attribute_lists(&bits, &lists(json)).unwrap(),
    ));
    let mut long: Vec<Vec<usize>> = (0..8)
        .flat_map(|a| (a + 1..8).map(move |b| vec![a, b]))
        .collect();
    long.push(vec![8]);
    for t in [[0, 3, 6], [1, 4, 7], [2, 5, 7], [0, 1, 2], [3, 4, 5]] {
        long.push(t.to_vec());
    }
    let long: Vec<&[usize]> = long.iter().map(|l| l.as_slice()).collect();
    out.push((
        "bits JSON list, attribute 8 in 1 of 34 tables".into(),
        bdata.clone(),
        MarginalWorkload::from_attribute_lists(&bits, &lists(&long)).unwrap(),
    ));
    out
}

#[test]
fn chaining_with_negligible_noise_reproduces_every_workload_shape() {
    let mut settings = ProjectionSettings::default();
    settings.frank_wolfe = FrankWolfeSettings {
        relative_gap_tolerance: 1e-12,
        max_iterations: 20_000,
        ..settings.frank_wolfe
    };
    let mech = ChainingParams::new(PrivacyLoss::Zcdp { rho: 1e10 })
        .settings(settings)
        .check()
        .unwrap();
    let (mut multi_level, mut three_level) = (0, 0);
    for (name, data, w) in shapes() {
        let truth = w.answers(&data).unwrap();
        let (plan, noisy) = mech
            .noisy_level_counts(&data, &w, &mut ChaCha20Rng::seed_from_u64(7))
            .unwrap();
        let levels = plan.noise.iter().flatten().count();
        if levels > 1 {
            multi_level += 1;
        }
        if plan.noise.len() > 2 {
            three_level += 1;
        }
        // The decomposition is exact: its last level holds every answer vector once.
        let universe = Universe::new(w.domain(), 1 << 20).unwrap();
        let metric = MarginalMetric::new(&universe, &w).unwrap();
        let last = plan.decomposition.levels.last().unwrap();
        assert_eq!(last.centers.len(), metric.num_answer_vectors(), "{name}");
        for (x, &c) in last.map.iter().enumerate() {
            assert_eq!(metric.differing_tables(x, c), 0, "{name}: remainder of {x}");
        }
        for (_, _, sigma2) in plan.noise.iter().flatten() {
            assert!(*sigma2 <= 1e-7, "{name}: σ² = {sigma2}");
        }
        // The same draws as the release: the noisy level counts sum (over levels, with a
        // trivial level 1's single point) to the exact counts, i.e. no noise was drawn.
        let mut sum = vec![0i64; w.num_queries()];
        for nc in noisy.iter().flatten() {
            for (s, c) in sum.iter_mut().zip(&nc.counts) {
                *s += c;
            }
        }
        let exact = w.count_all(&data).unwrap();
        if noisy[0].is_some() {
            for (s, e) in sum.iter().zip(&exact) {
                assert_eq!(*s, *e as i64, "{name}: level counts do not telescope");
            }
        }
        let rel = mech
            .release(&data, &w, &mut ChaCha20Rng::seed_from_u64(7))
            .unwrap();
        let gap = rel.diagnostics.frank_wolfe_gap.unwrap();
        let err = rel
            .answers
            .iter()
            .zip(&truth)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        let bound = (levels as f64 * gap / 2.0).sqrt() + 1e-9;
        assert!(
            err <= bound,
            "{name}: ‖release − truth‖₂ = {err:.3e} > {bound:.3e} ({levels} noisy levels, \
             gap {gap:.3e}; notes {:?})",
            rel.diagnostics.notes
        );
    }
    // The shapes exercise multi-level decompositions (where the defect lived), not only
    // the one-level case that reduces to projection.
    assert!(multi_level >= 6, "only {multi_level} multi-level shapes");
    assert!(three_level >= 1, "no decomposition of three levels");
}
