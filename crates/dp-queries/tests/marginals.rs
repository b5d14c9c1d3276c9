//! Marginal counting against a naive reference, table sums, index round-trips.

use dp_queries::{Dataset, Domain, Marginal, MarginalWorkload, Parallelism};
use proptest::prelude::*;

/// A random domain (1..=6 attributes of size 1..=5) with 1..=40 records, and a marginal
/// given as a permutation prefix of the attributes.
fn arb_case() -> impl Strategy<Value = (Vec<u32>, Vec<Vec<u32>>, Vec<usize>)> {
    proptest::collection::vec(1u32..=5, 1..=6).prop_flat_map(|sizes| {
        let d = sizes.len();
        let rows =
            proptest::collection::vec(sizes.iter().map(|&s| 0..s).collect::<Vec<_>>(), 1..=40);
        let attrs = Just((0..d).collect::<Vec<usize>>())
            .prop_shuffle()
            .prop_flat_map(move |perm| (1..=d).prop_map(move |k| perm[..k].to_vec()));
        (Just(sizes), rows, attrs)
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

/// Naive reference: for every cell, scan all records and compare codes.
fn naive_counts(data: &Dataset, attrs: &[usize], sizes: &[u32]) -> Vec<u64> {
    // Enumerate cells by an odometer, last attribute fastest.
    let cells: usize = sizes.iter().map(|&s| s as usize).product();
    let mut out = Vec::with_capacity(cells);
    let mut codes = vec![0u32; attrs.len()];
    for _ in 0..cells {
        let c = (0..data.n())
            .filter(|&r| {
                let rec = data.record(r);
                attrs.iter().zip(&codes).all(|(&a, &v)| rec[a] == v)
            })
            .count();
        out.push(c as u64);
        for i in (0..codes.len()).rev() {
            codes[i] += 1;
            if codes[i] < sizes[i] {
                break;
            }
            codes[i] = 0;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn counts_match_naive_reference((sizes, rows, attrs) in arb_case()) {
        let data = build(&sizes, &rows);
        let m = Marginal::new(data.domain(), attrs.clone()).unwrap();
        let msizes: Vec<u32> = attrs.iter().map(|&a| sizes[a]).collect();
        prop_assert_eq!(m.sizes(), &msizes[..]);
        let counts = m.count(&data);
        prop_assert_eq!(&counts, &naive_counts(&data, &attrs, &msizes));
        prop_assert_eq!(counts.iter().sum::<u64>(), data.n() as u64);
    }

    #[test]
    fn cell_index_and_codes_round_trip((sizes, rows, attrs) in arb_case()) {
        let data = build(&sizes, &rows);
        let m = Marginal::new(data.domain(), attrs).unwrap();
        for cell in 0..m.num_cells() {
            let codes = m.cell_codes(cell);
            prop_assert!(codes.iter().zip(m.sizes()).all(|(c, s)| c < s));
            prop_assert_eq!(m.cell_index(&codes), cell);
            prop_assert_eq!(m.try_cell_index(&codes), Some(cell));
        }
        // And each record lands in the cell of its own codes.
        let counts = m.count(&data);
        for r in 0..data.n() {
            let rec = data.record(r);
            let codes: Vec<u32> = m.attrs().iter().map(|&a| rec[a]).collect();
            prop_assert!(counts[m.cell_index(&codes)] >= 1);
        }
    }

    #[test]
    fn workload_counts_are_tables_in_order((sizes, rows, _attrs) in arb_case()) {
        let data = build(&sizes, &rows);
        let d = sizes.len();
        let k = d.min(2);
        let w = MarginalWorkload::all_kway(data.domain(), k).unwrap();
        let all = w.count_all(&data).unwrap();
        let seq = w.count_all_with(&data, Parallelism::None).unwrap();
        prop_assert_eq!(&all, &seq);
        prop_assert_eq!(all.len(), w.num_queries());
        for (j, m) in w.marginals().iter().enumerate() {
            let table = &all[w.offset(j)..w.offset(j + 1)];
            prop_assert_eq!(table, &naive_counts(&data, m.attrs(), m.sizes())[..]);
            prop_assert_eq!(table.iter().sum::<u64>(), data.n() as u64);
        }
        let ans = w.answers(&data).unwrap();
        for (a, c) in ans.iter().zip(&all) {
            prop_assert_eq!(*a, *c as f64 / data.n() as f64);
        }
    }
}

#[test]
fn every_adult_3way_table_sums_to_n() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/adult");
    let data = Dataset::load_csv(&dir.join("adult.csv"), &dir.join("adult-domain.json")).unwrap();
    let w = MarginalWorkload::all_kway(data.domain(), 3).unwrap();
    assert_eq!(w.len(), 364); // C(14, 3)
    let counts = w.count_all(&data).unwrap();
    for j in 0..w.len() {
        let s: u64 = counts[w.offset(j)..w.offset(j + 1)].iter().sum();
        assert_eq!(s, 48_842, "{}", w.marginals()[j].label(data.domain()));
    }
    // One table against the naive per-record reference (sex|race|income>50K: 20 cells).
    let names = ["sex", "race", "income>50K"];
    let attrs: Vec<usize> = names
        .iter()
        .map(|n| data.domain().index_of(n).unwrap())
        .collect();
    let m = Marginal::new(data.domain(), attrs.clone()).unwrap();
    let mut want = vec![0u64; 20];
    for r in 0..data.n() {
        let rec = data.record(r);
        want[(rec[attrs[0]] * 10 + rec[attrs[1]] * 2 + rec[attrs[2]]) as usize] += 1;
    }
    assert_eq!(m.count(&data), want);
}
