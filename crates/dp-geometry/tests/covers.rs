//! Separated sets, covers and the multi-scale decomposition (seed 004 Lemmas 2.7, 4.2).

use dp_geometry::{
    DensePoints, Metric, MultiscaleDecomposition, Parallelism, PointSet, SubsetPoints,
    extend_separated_subset, maximal_separated_subset, nearest_point_map,
};
use proptest::prelude::*;

/// Independent reference distances (not via `Metric::distance`).
fn reference_distance(metric: Metric, a: &[f64], b: &[f64]) -> f64 {
    match metric {
        Metric::ScaledL2 => {
            let mut s = 0.0;
            for k in 0..a.len() {
                s += (a[k] - b[k]).powi(2);
            }
            (s / a.len() as f64).sqrt()
        }
        Metric::LInf => {
            let mut m: f64 = 0.0;
            for k in 0..a.len() {
                m = m.max((a[k] - b[k]).abs());
            }
            m
        }
    }
}

/// Points on a coarse grid (so duplicates and exact ties occur), 1..40 points in 1..5 dims.
fn point_sets() -> impl Strategy<Value = Vec<Vec<f64>>> {
    (1usize..=5).prop_flat_map(|dim| {
        prop::collection::vec(
            prop::collection::vec((-8i32..=8).prop_map(|k| k as f64 / 8.0), dim),
            1..40,
        )
    })
}

fn metrics() -> impl Strategy<Value = Metric> {
    prop_oneof![Just(Metric::ScaledL2), Just(Metric::LInf)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Lemma 2.7: the greedy set is t-separated (pairwise > t) and a t-cover (every point
    /// within ≤ t of a chosen one); it is maximal, i.e. no further point can be added.
    #[test]
    fn separated_subset_is_separated_and_covers(
        pts in point_sets(), t in 0.0f64..1.5, metric in metrics()
    ) {
        let set = DensePoints::new(pts.clone()).unwrap();
        let chosen = maximal_separated_subset(&set, t, metric).unwrap();
        prop_assert!(!chosen.is_empty());
        prop_assert!(chosen.windows(2).all(|w| w[0] < w[1]));
        for (i, &a) in chosen.iter().enumerate() {
            for &b in &chosen[i + 1..] {
                prop_assert!(reference_distance(metric, &pts[a], &pts[b]) > t);
            }
        }
        for p in &pts {
            prop_assert!(chosen.iter().any(|&c| reference_distance(metric, p, &pts[c]) <= t));
        }
        // The nearest-point map picks a center at the minimum distance.
        let centers = SubsetPoints::new(&set, chosen.clone()).unwrap();
        for par in [Parallelism::None, Parallelism::Rayon] {
            let map = nearest_point_map(&set, &centers, metric, par).unwrap();
            for (i, p) in pts.iter().enumerate() {
                let best = chosen
                    .iter()
                    .map(|&c| reference_distance(metric, p, &pts[c]))
                    .fold(f64::INFINITY, f64::min);
                let got = reference_distance(metric, p, &pts[chosen[map[i]]]);
                prop_assert!((got - best).abs() <= 1e-12);
                prop_assert!(got <= t);
            }
        }
    }

    /// Seed 004 Lemma 4.2, checked point by point: the chain telescopes back to x, each
    /// term lies in its set 𝒳^(j) and obeys the norm bound, the remainder is ≤ 2^{−k}Δ,
    /// and each S_j is a 2^{−j}Δ-separated 2^{−j}Δ-cover, nested in S_{j+1}.
    #[test]
    fn multiscale_decomposition_properties(
        pts in point_sets(), levels in 1usize..6, metric in metrics()
    ) {
        let set = DensePoints::new(pts.clone()).unwrap();
        let dec = MultiscaleDecomposition::new(&set, levels, metric, Parallelism::Rayon).unwrap();
        let dim = pts[0].len();
        let zero = vec![0.0; dim];
        let delta = pts.iter().map(|p| reference_distance(metric, p, &zero)).fold(0.0, f64::max);
        prop_assert!((dec.radius() - delta).abs() <= 1e-15);
        prop_assert_eq!(dec.num_levels(), levels);
        let tol = 1e-12;
        for (j0, level) in dec.levels().iter().enumerate() {
            let scale = delta * 0.5f64.powi(j0 as i32 + 1);
            prop_assert!((level.scale - scale).abs() <= 1e-15);
            for (a_i, &a) in level.centers.iter().enumerate() {
                for &b in &level.centers[a_i + 1..] {
                    prop_assert!(reference_distance(metric, &pts[a], &pts[b]) > scale);
                }
            }
            for (i, p) in pts.iter().enumerate() {
                prop_assert!(level.centers.binary_search(&level.map[i]).is_ok());
                prop_assert!(reference_distance(metric, p, &pts[level.map[i]]) <= scale);
            }
            if j0 > 0 {
                let prev = &dec.levels()[j0 - 1].centers;
                prop_assert!(prev.iter().all(|c| level.centers.binary_search(c).is_ok()));
            }
            // 𝒳^(j): one increment per element of S_j, all of norm ≤ 2^{−j+1}Δ.
            let inc = dec.increment_set(j0 + 1).unwrap();
            prop_assert_eq!(inc.len(), level.centers.len());
            let mut buf = vec![0.0; dim];
            for e in &inc {
                e.write(&set, &mut buf).unwrap();
                prop_assert!(reference_distance(metric, &buf, &zero) <= 2.0 * scale * (1.0 + tol) + tol);
            }
        }
        let mut buf = vec![0.0; dim];
        for (i, x) in pts.iter().enumerate() {
            let chain = dec.chain(i).unwrap();
            prop_assert_eq!(chain.terms.len(), levels);
            let mut sum = vec![0.0; dim];
            for (j0, term) in chain.terms.iter().enumerate() {
                // x_{j0+1} ∈ S_{j0+1}.
                prop_assert!(dec.levels()[j0].centers.binary_search(&chain.links[j0]).is_ok());
                // terms[j0] ∈ 𝒳^(j0+1).
                prop_assert!(dec.increment_set(j0 + 1).unwrap().contains(term));
                term.write(&set, &mut buf).unwrap();
                // ‖x_1‖ ≤ Δ and ‖x_{j+1} − x_j‖ ≤ 2^{−j}Δ (here j = j0).
                let bound = delta * 0.5f64.powi(j0 as i32);
                prop_assert!(reference_distance(metric, &buf, &zero) <= bound * (1.0 + tol) + tol);
                for k in 0..dim {
                    sum[k] += buf[k];
                }
            }
            chain.remainder.write(&set, &mut buf).unwrap();
            let rem_bound = delta * 0.5f64.powi(levels as i32);
            prop_assert!(reference_distance(metric, &buf, &zero) <= rem_bound * (1.0 + tol) + tol);
            for k in 0..dim {
                sum[k] += buf[k];
            }
            for k in 0..dim {
                prop_assert!((sum[k] - x[k]).abs() <= 1e-12, "telescoping fails at {}", i);
            }
        }
    }
}

#[test]
fn levels_for_alpha_is_the_smallest_k_with_remainder_at_most_alpha_over_two() {
    // By hand: α = 1/2 → 2^{−k} ≤ 1/4 → k = 2; α = 1/4 → k = 3; α = 0.1 → 2^{−k} ≤ 0.05
    // → k = 5 (2^{−4} = 0.0625 > 0.05); α = 0.9 → k = 2 (2^{−1} = 0.5 > 0.45).
    for (alpha, k) in [(0.5, 2), (0.25, 3), (0.1, 5), (0.9, 2), (1.0 / 1024.0, 11)] {
        assert_eq!(MultiscaleDecomposition::levels_for_alpha(alpha).unwrap(), k);
    }
    for bad in [0.0, 1.0, -0.5, f64::NAN] {
        assert!(MultiscaleDecomposition::levels_for_alpha(bad).is_err());
    }
}

#[test]
fn covers_hand_example_and_validation() {
    // Points 0, 0.3, 0.6, 1.0 on a line (dim 1, so ScaledL2 = |·|) with t = 0.5:
    // keep 0 (first), skip 0.3 (0.3 ≤ 0.5), keep 0.6 (> 0.5 from 0), skip 1.0 (0.4 from 0.6).
    let set = DensePoints::new(vec![vec![0.0], vec![0.3], vec![0.6], vec![1.0]]).unwrap();
    assert_eq!(
        maximal_separated_subset(&set, 0.5, Metric::ScaledL2).unwrap(),
        vec![0, 2]
    );
    // Starting from {3}: 0 is 1.0 away (keep), 0.3 within 0.3 of 0 (skip), 0.6 within 0.4
    // of 1.0 (skip).
    assert_eq!(
        extend_separated_subset(&set, 0.5, Metric::ScaledL2, vec![3]).unwrap(),
        vec![0, 3]
    );
    // An initial set that is not separated is refused.
    assert!(extend_separated_subset(&set, 0.5, Metric::ScaledL2, vec![2, 3]).is_err());
    assert!(extend_separated_subset(&set, 0.5, Metric::ScaledL2, vec![9]).is_err());
    assert!(maximal_separated_subset(&set, -1.0, Metric::LInf).is_err());
    assert!(maximal_separated_subset(&set, f64::NAN, Metric::LInf).is_err());
    // ScaledL2 divides by √dim: (0,0) and (1,1) are √2/√2 = 1 apart; LInf says 1 too;
    // (0,0) and (1,0) are 1/√2 apart in ScaledL2.
    assert!((Metric::ScaledL2.distance(&[0.0, 0.0], &[1.0, 1.0]) - 1.0).abs() < 1e-15);
    assert!((Metric::ScaledL2.distance(&[0.0, 0.0], &[1.0, 0.0]) - 0.5f64.sqrt()).abs() < 1e-15);
    assert_eq!(Metric::LInf.distance(&[0.0, 0.0], &[1.0, -3.0]), 3.0);
    // nearest_point_map validation.
    let empty = SubsetPoints::new(&set, vec![]).unwrap();
    assert!(nearest_point_map(&set, &empty, Metric::LInf, Parallelism::None).is_err());
    let other = DensePoints::new(vec![vec![0.0, 1.0]]).unwrap();
    assert!(nearest_point_map(&set, &other, Metric::LInf, Parallelism::None).is_err());
    assert!(SubsetPoints::new(&set, vec![4]).is_err());
    assert_eq!(set.len(), 4);
    // Decomposition validation.
    assert!(MultiscaleDecomposition::new(&set, 0, Metric::LInf, Parallelism::None).is_err());
    assert!(
        MultiscaleDecomposition::with_radius(&set, 0.5, 2, Metric::LInf, Parallelism::None)
            .is_err()
    );
    let dec = MultiscaleDecomposition::with_radius(&set, 2.0, 2, Metric::LInf, Parallelism::None)
        .unwrap();
    // Δ = 2: S_1 is 1-separated: {0} (all others within 1); S_2 0.5-separated ⊇ S_1:
    // {0, 0.6} (1.0 is 0.4 from 0.6).
    assert_eq!(dec.levels()[0].centers, vec![0]);
    assert_eq!(dec.levels()[1].centers, vec![0, 2]);
    assert!(dec.chain(4).is_err());
    assert!(dec.increment_set(0).is_err());
    assert!(dec.increment_set(3).is_err());
}
