//! Workload construction: all/random k-way, specs, JSON files, errors, query locations.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dp_queries::{Dataset, Domain, MAX_QUERIES, Marginal, MarginalWorkload, QueryError};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn domain(d: usize) -> Domain {
    Domain::new(
        (0..d)
            .map(|i| (format!("x{i}"), (i % 4 + 2) as u32))
            .collect(),
    )
    .unwrap()
}

fn tmp(name: &str, contents: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dp-queries-workloads");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

/// C(n, k) by the multiplicative formula in f64 (exact for these small values).
fn choose(n: usize, k: usize) -> usize {
    (0..k)
        .fold(1.0f64, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
        .round() as usize
}

#[test]
fn all_kway_has_binomial_many_lexicographic_members() {
    for d in 1..=9 {
        for k in 1..=d {
            let w = MarginalWorkload::all_kway(&domain(d), k).unwrap();
            assert_eq!(w.len(), choose(d, k), "d={d} k={k}");
            let sets: Vec<Vec<usize>> = w.marginals().iter().map(|m| m.attrs().to_vec()).collect();
            assert!(
                sets.iter()
                    .all(|s| s.len() == k && s.windows(2).all(|p| p[0] < p[1]))
            );
            assert!(
                sets.windows(2).all(|p| p[0] < p[1]),
                "lexicographic, distinct"
            );
        }
    }
    let w = MarginalWorkload::all_kway(&domain(4), 2).unwrap();
    let first: Vec<_> = w
        .marginals()
        .iter()
        .take(3)
        .map(|m| m.attrs().to_vec())
        .collect();
    assert_eq!(first, vec![vec![0, 1], vec![0, 2], vec![0, 3]]);
    assert!(matches!(
        MarginalWorkload::all_kway(&domain(4), 0),
        Err(QueryError::BadWorkload { .. })
    ));
    assert!(matches!(
        MarginalWorkload::all_kway(&domain(4), 5),
        Err(QueryError::BadWorkload { .. })
    ));
}

#[test]
fn all_kway_too_large_is_refused_before_allocation() {
    // 60 attributes of size 100: C(60,5) = 5 461 512 tables of 10^10 cells each.
    let big = Domain::new((0..60).map(|i| (format!("a{i}"), 100)).collect()).unwrap();
    match MarginalWorkload::all_kway(&big, 5) {
        Err(QueryError::TooLarge { estimate, .. }) => {
            assert!(estimate.contains("counting queries"), "{estimate}")
        }
        other => panic!("{other:?}"),
    }
    // 40 attributes of size 2: C(40,20) ≈ 1.38e11 tables.
    let bin = Domain::new((0..40).map(|i| (format!("b{i}"), 2)).collect()).unwrap();
    match MarginalWorkload::all_kway(&bin, 20) {
        Err(QueryError::TooLarge { estimate, .. }) => {
            assert!(estimate.contains("137846528820"), "{estimate}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn new_checks_total_cells_and_duplicates() {
    let d = Domain::new((0..3).map(|i| (format!("a{i}"), 1 << 14)).collect()).unwrap();
    // Each 2-way table has 2^28 = MAX_QUERIES cells; two of them exceed the limit.
    let m01 = Marginal::new(&d, vec![0, 1]).unwrap();
    let m12 = Marginal::new(&d, vec![1, 2]).unwrap();
    assert_eq!(m01.num_cells(), MAX_QUERIES);
    match MarginalWorkload::new(&d, vec![m01.clone(), m12]) {
        Err(QueryError::TooLarge { estimate, .. }) => {
            assert!(estimate.contains(&(2 * MAX_QUERIES).to_string()))
        }
        other => panic!("{other:?}"),
    }
    let m10 = Marginal::new(&d, vec![1, 0]).unwrap();
    assert!(matches!(
        MarginalWorkload::new(&d, vec![m01.clone(), m10]),
        Err(QueryError::BadWorkload { .. })
    ));
    assert!(matches!(
        MarginalWorkload::new(&d, vec![]),
        Err(QueryError::BadWorkload { .. })
    ));
    // A marginal from a domain with other sizes does not fit.
    let other = Marginal::new(&domain(3), vec![0]).unwrap();
    assert!(matches!(
        MarginalWorkload::new(&d, vec![other]),
        Err(QueryError::DomainMismatch { .. })
    ));
}

#[test]
fn random_kway_distinct_deterministic_and_checked() {
    let d = domain(8);
    let mut a = ChaCha20Rng::seed_from_u64(1);
    let w = MarginalWorkload::random_kway(&d, 3, 20, None, &mut a).unwrap();
    assert_eq!(w.len(), 20);
    let sets: HashSet<Vec<usize>> = w
        .marginals()
        .iter()
        .map(|m| {
            let mut s = m.attrs().to_vec();
            s.sort();
            s
        })
        .collect();
    assert_eq!(sets.len(), 20);
    assert!(
        sets.iter()
            .all(|s| s.len() == 3 && s.windows(2).all(|p| p[0] < p[1]) && s[2] < 8)
    );
    let w2 =
        MarginalWorkload::random_kway(&d, 3, 20, None, &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    assert_eq!(w, w2, "same seed, same workload");
    let w3 =
        MarginalWorkload::random_kway(&d, 3, 20, None, &mut ChaCha20Rng::seed_from_u64(2)).unwrap();
    assert_ne!(w, w3, "different seeds differ (C(56,20) choices)");
    // m = C(8,3) = 56 gives all of them; 57 is an error.
    let all = MarginalWorkload::random_kway(&d, 3, 56, None, &mut a).unwrap();
    assert_eq!(all, MarginalWorkload::all_kway(&d, 3).unwrap());
    assert!(matches!(
        MarginalWorkload::random_kway(&d, 3, 57, None, &mut a),
        Err(QueryError::BadWorkload { .. })
    ));
    assert!(matches!(
        MarginalWorkload::random_kway(&d, 3, 0, None, &mut a),
        Err(QueryError::BadWorkload { .. })
    ));
    assert!(matches!(
        MarginalWorkload::random_kway(&d, 0, 1, None, &mut a),
        Err(QueryError::BadWorkload { .. })
    ));
}

#[test]
fn random_kway_respects_cell_cap() {
    // Sizes 2,3,4,5,2,3,4,5; 2-way tables with <= 6 cells: pairs from {2,2,3,3} (sizes 2/3)
    // with product <= 6: {2,2}:1, {2,3}:4, {3,3}: 9 > 6 no → 5 eligible pairs.
    let d = domain(8);
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let w = MarginalWorkload::random_kway(&d, 2, 5, Some(6), &mut rng).unwrap();
    assert!(w.marginals().iter().all(|m| m.num_cells() <= 6));
    assert_eq!(w.len(), 5);
    match MarginalWorkload::random_kway(&d, 2, 6, Some(6), &mut rng) {
        Err(QueryError::BadWorkload { reason }) => assert!(reason.contains("only 5"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // Rejection path (C(64,5) > 2^20): 64 attributes, cap so low that only size-2 ones
    // qualify, asking for more than exist gives up with an error instead of looping.
    let big = domain(64);
    let w = MarginalWorkload::random_kway(&big, 5, 30, Some(32), &mut rng).unwrap();
    assert!(w.marginals().iter().all(|m| m.num_cells() == 32));
    assert!(matches!(
        MarginalWorkload::random_kway(&big, 5, 10, Some(31), &mut rng),
        Err(QueryError::BadWorkload { .. })
    ));
}

#[test]
fn random_kway_is_uniform_over_subsets() {
    // d = 5, k = 2, m = 1: each of the 10 pairs has probability 1/10. With T = 20_000 draws
    // the count of a pair is Binomial(20000, 0.1): sd = 42.4; a deviation > 300 (7.07 sd)
    // has probability < 2e-12 per pair.
    let d = domain(5);
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let mut hits = std::collections::HashMap::new();
    for _ in 0..20_000 {
        let w = MarginalWorkload::random_kway(&d, 2, 1, None, &mut rng).unwrap();
        *hits
            .entry(w.marginals()[0].attrs().to_vec())
            .or_insert(0i64) += 1;
    }
    assert_eq!(hits.len(), 10);
    for (k, v) in hits {
        assert!((v - 2000).abs() < 300, "{k:?}: {v}");
    }
}

#[test]
fn parse_spec_forms_and_errors() {
    let d = Domain::new(vec![
        ("age".into(), 3),
        ("sex".into(), 2),
        ("race".into(), 5),
        ("inc".into(), 2),
    ])
    .unwrap();
    assert_eq!(
        MarginalWorkload::parse_spec(&d, "all-2way", 0).unwrap(),
        MarginalWorkload::all_kway(&d, 2).unwrap()
    );
    let r = MarginalWorkload::parse_spec(&d, "random-3way:2", 9).unwrap();
    let want =
        MarginalWorkload::random_kway(&d, 3, 2, None, &mut ChaCha20Rng::seed_from_u64(9)).unwrap();
    assert_eq!(r, want);
    for spec in [
        "all-0way",
        "all-5way",
        "all-way",
        "all-3",
        "random-3way:",
        "random-3way:x",
        "random-3way:0",
        "random-3way",
        "random-xway:2",
        "random-3way:-1",
        "random-3way:5",
    ] {
        match MarginalWorkload::parse_spec(&d, spec, 0) {
            Err(QueryError::BadWorkload { reason }) => assert!(
                reason.contains(spec) || spec == "random-3way:5",
                "{spec}: {reason}"
            ),
            other => panic!("{spec}: {other:?}"),
        }
    }
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-workload.json");
    match MarginalWorkload::parse_spec(&d, missing.to_str().unwrap(), 0) {
        Err(QueryError::Io { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
    let bad = tmp("bad.json", r#"[["age", "sex"], ["race""#);
    match MarginalWorkload::parse_spec(&d, bad.to_str().unwrap(), 0) {
        Err(QueryError::BadJson { file, .. }) => assert_eq!(file, bad.display().to_string()),
        other => panic!("{other:?}"),
    }
    let wrong_shape = tmp("shape.json", r#"{"age": 1}"#);
    assert!(matches!(
        MarginalWorkload::parse_spec(&d, wrong_shape.to_str().unwrap(), 0),
        Err(QueryError::BadJson { .. })
    ));
    let unknown = tmp("unknown.json", r#"[["age", "colour"]]"#);
    match MarginalWorkload::parse_spec(&d, unknown.to_str().unwrap(), 0) {
        Err(QueryError::UnknownAttribute { name }) => assert_eq!(name, "colour"),
        other => panic!("{other:?}"),
    }
    let dup = tmp("dup.json", r#"[["age", "sex"], ["race", "sex", "race"]]"#);
    match MarginalWorkload::parse_spec(&d, dup.to_str().unwrap(), 0) {
        Err(QueryError::BadWorkload { reason }) => assert!(
            reason.contains("'race' twice") && reason.contains("marginal 2 "),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    let empty_list = tmp("empty.json", "[]");
    assert!(matches!(
        MarginalWorkload::parse_spec(&d, empty_list.to_str().unwrap(), 0),
        Err(QueryError::BadWorkload { .. })
    ));
    let good = tmp("good.json", r#"[["race", "age"], ["inc"]]"#);
    let w = MarginalWorkload::parse_spec(&d, good.to_str().unwrap(), 0).unwrap();
    assert_eq!(w.marginals()[0].attrs(), &[2, 0]);
    assert_eq!(w.marginals()[0].label(&d), "race|age");
    assert_eq!(w.num_queries(), 15 + 2);
}

#[test]
fn offsets_and_query_locations() {
    let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3), ("c".into(), 4)]).unwrap();
    let lists = vec![
        vec!["a".to_string(), "b".to_string()],
        vec!["c".to_string()],
        vec!["b".to_string()],
    ];
    let w = MarginalWorkload::from_attribute_lists(&d, &lists).unwrap();
    // Tables of 6, 4, 3 cells.
    assert_eq!(w.num_queries(), 13);
    assert_eq!(
        (
            w.offset(0),
            w.offset(1),
            w.offset(2),
            w.offset(3),
            w.offset(9)
        ),
        (0, 6, 10, 13, 13)
    );
    let want = [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 5),
        (1, 0),
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 0),
        (2, 1),
        (2, 2),
    ];
    for (q, &loc) in want.iter().enumerate() {
        assert_eq!(w.query_location(q), loc, "q={q}");
    }
    assert_eq!(w.query_location(13), (3, 0));
    assert_eq!(w.query_location(20), (3, 7));
    // serde round trip re-validates.
    let s = serde_json::to_string(&w).unwrap();
    let back: MarginalWorkload = serde_json::from_str(&s).unwrap();
    assert_eq!(back, w);
    assert_eq!(back.num_queries(), 13);
    let broken = s.replace(r#"[0,1]"#, r#"[0,0]"#);
    assert!(serde_json::from_str::<MarginalWorkload>(&broken).is_err());
}

#[test]
fn count_all_refuses_other_domain() {
    let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
    let w = MarginalWorkload::all_kway(&d, 1).unwrap();
    let other = Domain::new(vec![("a".into(), 2), ("c".into(), 3)]).unwrap();
    let data = Dataset::from_columns(other, vec![vec![0], vec![1]]).unwrap();
    assert!(matches!(
        w.count_all(&data),
        Err(QueryError::DomainMismatch { .. })
    ));
    assert!(matches!(
        w.answers(&data),
        Err(QueryError::DomainMismatch { .. })
    ));
}
