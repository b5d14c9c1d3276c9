//! One-hot encoding (conjunction/parity counts vs a naive reference) and error metrics
//! (hand-computed values on a two-marginal example).

use dp_queries::{BinaryDataset, Dataset, Domain, ErrorReport, MarginalWorkload, QueryError};
use proptest::prelude::*;

fn arb_data() -> impl Strategy<Value = (Vec<u32>, Vec<Vec<u32>>)> {
    // Up to 8 attributes of size up to 40, so d can exceed 64 and rows span several words.
    proptest::collection::vec(1u32..=40, 1..=8).prop_flat_map(|sizes| {
        let rows =
            proptest::collection::vec(sizes.iter().map(|&s| 0..s).collect::<Vec<_>>(), 1..=30);
        (Just(sizes), rows)
    })
}

fn build(sizes: &[u32], rows: &[Vec<u32>]) -> Dataset {
    let domain = Domain::new(
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| (format!("x{i}"), s))
            .collect(),
    )
    .unwrap();
    let cols = (0..sizes.len())
        .map(|i| rows.iter().map(|r| r[i]).collect())
        .collect();
    Dataset::from_columns(domain, cols).unwrap()
}

/// Naive one-hot bit: bit j of record r, computed from the codes.
fn naive_bit(sizes: &[u32], rec: &[u32], j: usize) -> bool {
    let mut start = 0usize;
    for (a, &s) in sizes.iter().enumerate() {
        if j < start + s as usize {
            return rec[a] as usize == j - start;
        }
        start += s as usize;
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn encoding_and_counts_match_naive(
        (sizes, rows) in arb_data(),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..5),
    ) {
        let data = build(&sizes, &rows);
        let b = BinaryDataset::from_dataset(&data);
        let d: usize = sizes.iter().map(|&s| s as usize).sum();
        prop_assert_eq!(b.d(), d);
        prop_assert_eq!(b.n(), rows.len());
        prop_assert_eq!(b.words_per_row(), d.div_ceil(64));
        for (r, rec) in rows.iter().enumerate() {
            prop_assert_eq!(b.row(r).len(), b.words_per_row());
            for j in 0..d {
                prop_assert_eq!(b.bit(r, j), naive_bit(&sizes, rec, j));
            }
            // Exactly one bit per attribute.
            for a in 0..sizes.len() {
                prop_assert_eq!(b.attribute_bits(a).filter(|&j| b.bit(r, j)).count(), 1);
            }
        }
        let bits: Vec<usize> = picks.iter().map(|i| i.index(d)).collect();
        let conj = rows.iter().filter(|rec| bits.iter().all(|&j| naive_bit(&sizes, rec, j))).count();
        prop_assert_eq!(b.count_conjunction(&bits), conj as u64);
        let par = rows
            .iter()
            .filter(|rec| bits.iter().filter(|&&j| naive_bit(&sizes, rec, j)).count() % 2 == 1)
            .count();
        prop_assert_eq!(b.count_parity(&bits), par as u64);
    }
}

#[test]
fn hand_checked_onehot() {
    // a: size 2, b: size 3 → bits a0 a1 b0 b1 b2. Records (1,2), (0,2), (1,0).
    let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
    let data = Dataset::from_columns(d, vec![vec![1, 0, 1], vec![2, 2, 0]]).unwrap();
    let b = BinaryDataset::from_dataset(&data);
    assert_eq!(b.d(), 5);
    assert_eq!(b.attribute_bits(1), 2..5);
    assert_eq!(b.attribute_bits(2), 5..5);
    assert_eq!(b.row(0), &[0b10010]); // bits 1 (a=1) and 4 (b=2)
    assert_eq!(b.row(1), &[0b10001]);
    assert_eq!(b.row(2), &[0b00110]);
    assert!(b.row(3).is_empty());
    assert_eq!(b.count_conjunction(&[]), 3);
    assert_eq!(b.count_conjunction(&[1, 4]), 1);
    assert_eq!(b.count_conjunction(&[4]), 2);
    assert_eq!(b.count_conjunction(&[0, 1]), 0);
    assert_eq!(b.count_conjunction(&[9]), 0);
    assert_eq!(b.count_parity(&[]), 0);
    // x1 ⊕ x4 per row: 1⊕1 = 0, 0⊕1 = 1, 1⊕0 = 1.
    assert_eq!(b.count_parity(&[1, 4]), 2);
    assert_eq!(b.count_parity(&[4]), 2);
    assert_eq!(b.count_parity(&[1, 1]), 0); // a repeated bit cancels
    assert_eq!(b.count_parity(&[2, 3, 4]), 3); // exactly one b bit is set in every row
}

#[test]
fn metrics_on_two_marginals_by_hand() {
    // Domain a (2), b (3); workload [a], [b]: 2 + 3 = 5 queries.
    let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
    let w = MarginalWorkload::all_kway(&d, 1).unwrap();
    let truth = [0.5, 0.5, 0.2, 0.3, 0.5];
    let released = [0.6, 0.3, 0.2, 0.4, 0.5];
    // errors: 0.1, 0.2, 0, 0.1, 0
    let r = ErrorReport::compute(&w, &released, &truth).unwrap();
    let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
    assert!(close(r.max_abs, 0.2), "{r:?}");
    assert!(close(r.mean_abs, 0.4 / 5.0), "{r:?}");
    assert!(close(r.rmse, (0.06f64 / 5.0).sqrt()), "{r:?}"); // 0.01+0.04+0.01 = 0.06
    assert!(close(r.mean_marginal_l1, (0.3 + 0.1) / 2.0), "{r:?}");
    assert!(matches!(
        ErrorReport::compute(&w, &released[..4], &truth),
        Err(QueryError::LengthMismatch {
            expected: 5,
            found: 4
        })
    ));
    let mut nan = released;
    nan[3] = f64::NAN;
    assert!(matches!(
        ErrorReport::compute(&w, &nan, &truth),
        Err(QueryError::NonFinite { index: 3, .. })
    ));
    let z = ErrorReport::compute(&w, &truth, &truth).unwrap();
    assert_eq!(
        z,
        ErrorReport {
            max_abs: 0.0,
            mean_abs: 0.0,
            rmse: 0.0,
            mean_marginal_l1: 0.0
        }
    );
}
