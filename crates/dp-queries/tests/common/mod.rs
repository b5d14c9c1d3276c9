//! Brute-force helpers shared by the workload tests: a small domain, random data, every
//! record of a domain, a record's contribution and the true maxima the contribution bounds
//! must dominate.
#![allow(dead_code)] // each test file uses a subset

use dp_queries::{ContributionBounds, Dataset, Domain, Workload};
use rand::{RngExt, SeedableRng};

pub fn domain() -> Domain {
    Domain::new(vec![
        ("a".to_string(), 3),
        ("b".to_string(), 2),
        ("c".to_string(), 4),
        ("d".to_string(), 2),
    ])
    .unwrap()
}

pub fn data(dom: &Domain, n: usize, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let cols = (0..dom.len())
        .map(|a| (0..n).map(|_| rng.random_range(0..dom.size(a))).collect())
        .collect();
    Dataset::from_columns(dom.clone(), cols).unwrap()
}

/// Every record of the domain.
pub fn all_records(dom: &Domain) -> Vec<Vec<u32>> {
    let mut out = vec![vec![]];
    for a in 0..dom.len() {
        out = out
            .into_iter()
            .flat_map(|r: Vec<u32>| {
                (0..dom.size(a)).map(move |v| {
                    let mut r = r.clone();
                    r.push(v);
                    r
                })
            })
            .collect();
    }
    out
}

pub fn contribution(w: &dyn Workload, x: &[u32]) -> Vec<i64> {
    let mut v = vec![0i64; w.num_queries()];
    w.for_each_contribution(x, &mut |q, c| v[q] += c);
    v
}

/// The true maxima the bounds must dominate, by brute force over the domain.
pub fn brute_bounds(w: &dyn Workload) -> ContributionBounds {
    let recs: Vec<Vec<i64>> = all_records(w.domain())
        .iter()
        .map(|x| contribution(w, x))
        .collect();
    let l1 = |v: &[i64]| v.iter().map(|c| c.unsigned_abs()).sum::<u64>();
    let l2 = |v: &[i64]| v.iter().map(|c| c.unsigned_abs().pow(2)).sum::<u64>();
    let mut b = ContributionBounds {
        l1: 0,
        l2_squared: 0,
        change_l1: 0,
        change_l2_squared: 0,
    };
    for (i, x) in recs.iter().enumerate() {
        b.l1 = b.l1.max(l1(x));
        b.l2_squared = b.l2_squared.max(l2(x));
        for y in &recs[i + 1..] {
            let d: Vec<i64> = x.iter().zip(y).map(|(a, b)| a - b).collect();
            b.change_l1 = b.change_l1.max(l1(&d));
            b.change_l2_squared = b.change_l2_squared.max(l2(&d));
        }
    }
    b
}
