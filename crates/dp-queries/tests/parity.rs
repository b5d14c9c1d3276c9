//! Parity queries and the marginal ↔ parity transform (seed 000 §2.4), checked against
//! brute force: counts from the definition, marginals counted directly, and the error
//! transfer bounds on random perturbations.

use dp_queries::{
    Dataset, Domain, MarginalParityTransform, MarginalWorkload, ParityQueries, SignRecords,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;

fn binary_data(d: usize, n: usize, seed: u64) -> Dataset {
    let domain = Domain::new((0..d).map(|i| (format!("b{i}"), 2)).collect()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    // correlated columns so that parities are far from 0
    let columns: Vec<Vec<u32>> = (0..d)
        .map(|i| {
            (0..n)
                .map(|_| u32::from(rng.random::<f64>() < 0.15 + 0.07 * i as f64))
                .collect()
        })
        .collect();
    Dataset::from_columns(domain, columns).unwrap()
}

#[test]
fn odd_counts_match_the_definition() {
    // 70 attributes: two words per record
    let data = binary_data(70, 300, 1);
    let records = SignRecords::from_dataset(&data).unwrap();
    for set in [vec![0], vec![3, 64], vec![1, 2, 69], vec![5, 6, 7, 65]] {
        let want = (0..data.n())
            .filter(|&r| set.iter().map(|&a| data.column(a)[r]).sum::<u32>() % 2 == 1)
            .count() as u64;
        assert_eq!(records.odd_count(&set).unwrap(), want, "{set:?}");
        assert_eq!(
            records.parity_sum(&set).unwrap(),
            data.n() as i64 - 2 * want as i64
        );
    }
    assert!(records.odd_count(&[70]).is_err());
}

#[test]
fn batch_odd_counts_equal_the_record_scan() {
    // 70 attributes (two words per record) and 300 records (a partial last column word):
    // the column-wise batch counts must equal the per-record scan for every set, including
    // sets across the word boundary of the rows
    let data = binary_data(70, 300, 9);
    let records = SignRecords::from_dataset(&data).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let mut sets: Vec<Vec<usize>> = vec![vec![0], vec![63, 64], vec![69], vec![1, 2, 69]];
    while sets.len() < 60 {
        let k = rng.random_range(1..=4);
        let mut s: Vec<usize> = (0..k).map(|_| rng.random_range(0..70)).collect();
        s.sort_unstable();
        s.dedup();
        if !sets.contains(&s) {
            sets.push(s);
        }
    }
    let q = ParityQueries::new(70, sets.clone()).unwrap();
    let batch = q.odd_counts(&records).unwrap();
    for (set, got) in sets.iter().zip(&batch) {
        assert_eq!(*got, records.odd_count(set).unwrap(), "{set:?}");
    }
}

#[test]
fn non_binary_attributes_are_refused_with_their_name() {
    let domain = Domain::new(vec![("a".into(), 2), ("colour".into(), 3)]).unwrap();
    let data = Dataset::from_columns(domain.clone(), vec![vec![0, 1], vec![2, 0]]).unwrap();
    let err = SignRecords::from_dataset(&data).unwrap_err().to_string();
    assert!(err.contains("'colour' has 3 categories"), "{err}");
    let w = MarginalWorkload::all_kway(&domain, 1).unwrap();
    let err = MarginalParityTransform::new(&w).unwrap_err().to_string();
    assert!(err.contains("'colour'"), "{err}");
    assert!(!err.contains("BadDomain"), "{err}");
}

#[test]
fn transform_round_trips_exactly_on_data() {
    for (d, k, seed) in [(6, 1, 2), (6, 2, 3), (7, 3, 4), (5, 5, 5)] {
        let data = binary_data(d, 211, seed);
        let w = MarginalWorkload::all_kway(data.domain(), k).unwrap();
        let t = MarginalParityTransform::new(&w).unwrap();
        let records = SignRecords::from_dataset(&data).unwrap();
        let p = t.parities().answers(&records).unwrap();
        let direct = w.answers(&data).unwrap();
        let read = t.marginals_from_parities(&p).unwrap();
        assert_eq!(read.len(), direct.len());
        for (a, b) in read.iter().zip(&direct) {
            assert!((a - b).abs() <= 1e-12, "d={d} k={k}: {a} vs {b}");
        }
        let back = t.parities_from_marginals(&direct).unwrap();
        for (a, b) in back.iter().zip(&p) {
            assert!((a - b).abs() <= 1e-12, "d={d} k={k}: {a} vs {b}");
        }
        // the needed parities are exactly those of degree 1..=k
        assert_eq!(
            t.parities().len(),
            ParityQueries::all_up_to(d, k).unwrap().len()
        );
    }
}

#[test]
fn transform_handles_tables_in_any_attribute_order() {
    let data = binary_data(5, 97, 6);
    let lists = vec![
        vec!["b3".to_string(), "b0".to_string()],
        vec!["b4".to_string(), "b1".to_string(), "b2".to_string()],
        vec!["b2".to_string()],
    ];
    let w = MarginalWorkload::from_attribute_lists(data.domain(), &lists).unwrap();
    let t = MarginalParityTransform::new(&w).unwrap();
    assert_eq!(t.parities().len(), 3 + 7 + 1 - 1); // {2} appears in two tables
    let records = SignRecords::from_dataset(&data).unwrap();
    let p = t.parities().answers(&records).unwrap();
    let direct = w.answers(&data).unwrap();
    for (a, b) in t.marginals_from_parities(&p).unwrap().iter().zip(&direct) {
        assert!((a - b).abs() <= 1e-12);
    }
    // ω_T: {2} is in a 3-way and a 1-way table: 1/8 + 1/2
    let q = t.parities().position(&[2]).unwrap();
    assert!((t.weights()[q] - 0.625).abs() < 1e-15);
    assert!((t.empty_weight() - (0.25 + 0.125 + 0.5)).abs() < 1e-15);
}

/// The odd counts read off the tables' exact counts (integer Walsh–Hadamard) are the odd
/// counts of the records, for tables in any attribute order, nested and overlapping tables
/// and sets across 64-attribute words; a wrong length is refused.
#[test]
fn odd_counts_from_the_tables_counts_are_the_records_odd_counts() {
    for (d, k, seed) in [(6, 2, 11), (7, 3, 12), (66, 1, 13)] {
        let data = binary_data(d, 257, seed);
        let w = MarginalWorkload::all_kway(data.domain(), k).unwrap();
        let t = MarginalParityTransform::new(&w).unwrap();
        let records = SignRecords::from_dataset(&data).unwrap();
        let counts = w.count_all(&data).unwrap();
        assert_eq!(
            t.odd_counts_from_counts(&counts).unwrap(),
            t.parities().odd_counts(&records).unwrap(),
            "d={d} k={k}"
        );
        assert!(t.odd_counts_from_counts(&counts[1..]).is_err());
    }
    let data = binary_data(5, 97, 6);
    let lists = vec![
        vec!["b3".to_string(), "b0".to_string()],
        vec!["b4".to_string(), "b1".to_string(), "b2".to_string()],
        vec!["b2".to_string()],
        vec!["b0".to_string(), "b4".to_string()],
    ];
    let w = MarginalWorkload::from_attribute_lists(data.domain(), &lists).unwrap();
    let t = MarginalParityTransform::new(&w).unwrap();
    let records = SignRecords::from_dataset(&data).unwrap();
    assert_eq!(
        t.odd_counts_from_counts(&w.count_all(&data).unwrap())
            .unwrap(),
        t.parities().odd_counts(&records).unwrap()
    );
}

#[test]
fn error_transfer_bounds_hold_on_random_perturbations() {
    let data = binary_data(6, 150, 7);
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    for k in [2, 3] {
        let w = MarginalWorkload::all_kway(data.domain(), k).unwrap();
        let t = MarginalParityTransform::new(&w).unwrap();
        let records = SignRecords::from_dataset(&data).unwrap();
        let p = t.parities().answers(&records).unwrap();
        let truth = w.answers(&data).unwrap();
        for trial in 0..50 {
            let scale = if trial % 2 == 0 { 0.01 } else { 0.3 };
            let e: Vec<f64> = p
                .iter()
                .map(|_| scale * (2.0 * rng.random::<f64>() - 1.0))
                .collect();
            let noisy: Vec<f64> = p.iter().zip(&e).map(|(a, b)| a + b).collect();
            let read = t.marginals_from_parities(&noisy).unwrap();
            let max_parity = e.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let max_cell = read
                .iter()
                .zip(&truth)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            // Theorem 2.5: factor 1 − 2^{−k}
            assert!(
                max_cell <= t.max_error_factor() * max_parity + 1e-12,
                "k={k}: {max_cell} > {} · {max_parity}",
                t.max_error_factor()
            );
            // Theorem 2.6 with equality (Parseval): Σ cells ε² = Σ_T ω_T e_T²
            let cells_sq: f64 = read.iter().zip(&truth).map(|(a, b)| (a - b).powi(2)).sum();
            let parity_sq: f64 = t.weights().iter().zip(&e).map(|(w, x)| w * x * x).sum();
            assert!(
                (cells_sq - parity_sq).abs() <= 1e-12 * (1.0 + parity_sq),
                "k={k}: {cells_sq} vs {parity_sq}"
            );
        }
    }
}

#[test]
fn the_factor_is_attained_by_aligned_errors() {
    // errors e_T = ε·χ_T(β*) for one cell β* put the whole error on that cell
    let data = binary_data(3, 40, 9);
    let w = MarginalWorkload::all_kway(data.domain(), 3).unwrap();
    let t = MarginalParityTransform::new(&w).unwrap();
    let records = SignRecords::from_dataset(&data).unwrap();
    let p = t.parities().answers(&records).unwrap();
    let eps = 0.01;
    // β* = (1, 0, 1): χ_T = (−1)^{|T ∩ {0, 2}|}
    let noisy: Vec<f64> = t
        .parities()
        .sets()
        .iter()
        .zip(&p)
        .map(|(set, x)| {
            let odd = set.iter().filter(|&&i| i == 0 || i == 2).count() % 2 == 1;
            x + if odd { -eps } else { eps }
        })
        .collect();
    let read = t.marginals_from_parities(&noisy).unwrap();
    let truth = w.answers(&data).unwrap();
    let max_cell = read
        .iter()
        .zip(&truth)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!((max_cell - t.max_error_factor() * eps).abs() < 1e-12);
}

#[test]
fn wrong_lengths_and_non_finite_values_are_errors() {
    let data = binary_data(4, 20, 10);
    let w = MarginalWorkload::all_kway(data.domain(), 2).unwrap();
    let t = MarginalParityTransform::new(&w).unwrap();
    assert!(t.marginals_from_parities(&[0.0]).is_err());
    let mut p = vec![0.0; t.parities().len()];
    p[3] = f64::NAN;
    assert!(t.marginals_from_parities(&p).is_err());
    assert!(t.parities_from_marginals(&[0.5; 3]).is_err());
}
