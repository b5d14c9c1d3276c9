//! The `Workload` abstraction against brute force: counts, contribution bounds (the input of
//! every sensitivity), restriction to touched attributes, JSON parsing.

use dp_queries::{
    AnyWorkload, ConjunctionWorkload, ContributionBounds, Domain, ExplicitWorkload, Literal,
    MarginalWorkload, Parallelism, QueryClass, QueryKind, Workload,
};
use rand::{RngExt, SeedableRng};

mod common;
use common::{brute_bounds, contribution, data, domain};

fn workloads(dom: &Domain) -> Vec<AnyWorkload> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
    let mut v = vec![AnyWorkload::Marginals(
        MarginalWorkload::all_kway(dom, 2).unwrap(),
    )];
    for kind in [
        QueryKind::Conjunction,
        QueryKind::Disjunction,
        QueryKind::Parity,
    ] {
        v.push(AnyWorkload::Literals(
            ConjunctionWorkload::random_kway(dom, kind, 2, 12, &mut rng).unwrap(),
        ));
    }
    let matrix: Vec<Vec<i64>> = (0..5)
        .map(|_| (0..8).map(|_| rng.random_range(-3..4)).collect())
        .collect();
    v.push(AnyWorkload::Explicit(
        ExplicitWorkload::new(dom, vec![2, 1], matrix).unwrap(),
    ));
    v
}

#[test]
fn counts_equal_naive_evaluation_for_every_class() {
    let dom = domain();
    let d = data(&dom, 300, 1);
    for w in workloads(&dom) {
        let mut naive = vec![0i64; w.num_queries()];
        for r in 0..d.n() {
            for (q, c) in contribution(&w, &d.record(r)).into_iter().enumerate() {
                naive[q] += c;
            }
        }
        // the fast paths (marginal tables, bit columns) against the per-record definition
        assert_eq!(w.count_all(&d).unwrap(), naive, "{}", w.class());
        assert_eq!(
            w.count_all_with(&d, Parallelism::None).unwrap(),
            naive,
            "{}",
            w.class()
        );
    }
}

/// The streaming counters' batch step **adds** to running totals (it must neither overwrite
/// them nor start from a table of its own): from arbitrary signed starting totals, adding two
/// datasets gives the start plus both datasets' counts, for every class (marginals use their
/// in-place override, the others the default), serial and parallel; a wrong totals length is
/// an error, not a partial update.
#[test]
fn add_counts_adds_to_running_totals_for_every_class() {
    let dom = domain();
    let (d1, d2) = (data(&dom, 300, 3), data(&dom, 170, 4));
    for w in workloads(&dom) {
        let k = w.num_queries();
        let start: Vec<i128> = (0..k).map(|q| q as i128 * 7 - 11).collect();
        let expected: Vec<i128> = start
            .iter()
            .zip(w.count_all(&d1).unwrap())
            .zip(w.count_all(&d2).unwrap())
            .map(|((&s, a), b)| s + i128::from(a) + i128::from(b))
            .collect();
        for par in [Parallelism::None, Parallelism::Rayon] {
            let mut totals = start.clone();
            w.add_counts_with(&d1, &mut totals, par).unwrap();
            w.add_counts_with(&d2, &mut totals, par).unwrap();
            assert_eq!(totals, expected, "{}", w.class());
        }
        let mut short = vec![0i128; k - 1];
        assert!(
            w.add_counts_with(&d1, &mut short, Parallelism::None)
                .is_err()
        );
        assert!(short.iter().all(|&t| t == 0), "{}", w.class());
    }
}

#[test]
fn contribution_bounds_dominate_the_brute_force_maxima() {
    let dom = domain();
    for w in workloads(&dom) {
        let claimed = w.contribution_bounds();
        let truth = brute_bounds(&w);
        assert!(
            claimed.l1 >= truth.l1,
            "{}: {claimed:?} {truth:?}",
            w.class()
        );
        assert!(claimed.l2_squared >= truth.l2_squared, "{}", w.class());
        assert!(claimed.change_l1 >= truth.change_l1, "{}", w.class());
        assert!(
            claimed.change_l2_squared >= truth.change_l2_squared,
            "{}",
            w.class()
        );
        match w.class() {
            // attained: exact for marginals and (computed from the matrix) explicit
            QueryClass::Marginals | QueryClass::Explicit => assert_eq!(claimed, truth),
            // 0/1 queries: the bound is the number of queries
            _ => assert_eq!(claimed.l1, w.num_queries() as u64),
        }
    }
}

#[test]
fn explicit_bounds_by_hand() {
    let dom = domain();
    // two queries over b (2 cells): columns (1, -2) and (3, 0)
    let w = ExplicitWorkload::new(&dom, vec![1], vec![vec![1, 3], vec![-2, 0]]).unwrap();
    let b = w.contribution_bounds();
    // ‖col‖₁ = 3, 3; ‖col‖₂² = 5, 9; difference (−2, −2): ℓ1 4, ℓ2² 8
    assert_eq!(
        b,
        ContributionBounds {
            l1: 3,
            l2_squared: 9,
            change_l1: 4,
            change_l2_squared: 8
        }
    );
}

#[test]
fn restriction_to_touched_attributes_keeps_the_counts() {
    let dom = domain();
    let d = data(&dom, 200, 2);
    for w in workloads(&dom) {
        let touched = w.touched_attributes();
        let names: Vec<&str> = touched.iter().map(|&a| dom.name(a)).collect();
        let sub = d.select_attributes(&names).unwrap();
        let r = w.on_attributes(&touched).unwrap();
        assert_eq!(r.count_all(&sub).unwrap(), w.count_all(&d).unwrap());
        assert_eq!(r.contribution_bounds(), w.contribution_bounds());
        for q in 0..w.num_queries() {
            assert_eq!(r.describe_query(q), w.describe_query(q));
        }
    }
}

#[test]
fn weighted_records_give_weighted_answers() {
    let dom = domain();
    let recs = vec![vec![0, 1, 3, 0], vec![2, 0, 0, 1]];
    let weights = [3.0, 1.0];
    for w in workloads(&dom) {
        let a = w.answers_of_records(&recs, &weights).unwrap();
        let x = contribution(&w, &recs[0]);
        let y = contribution(&w, &recs[1]);
        for q in 0..w.num_queries() {
            let want = (3.0 * x[q] as f64 + y[q] as f64) / 4.0;
            assert!((a[q] - want).abs() < 1e-12);
        }
    }
}

fn parse(text: &str) -> dp_queries::Result<AnyWorkload> {
    AnyWorkload::from_json_slice(&domain(), text.as_bytes(), "w.json")
}

#[test]
fn json_forms_of_every_class() {
    let m = parse(r#"[["a","b"],["c"]]"#).unwrap();
    assert_eq!(m.class(), QueryClass::Marginals);
    assert_eq!(m.num_queries(), 6 + 4);
    let m2 = parse(r#"{"class":"marginals","marginals":[["a","b"],["c"]]}"#).unwrap();
    assert_eq!(m, m2);
    for (class, kind) in [
        ("conjunctions", QueryKind::Conjunction),
        ("disjunctions", QueryKind::Disjunction),
        ("parities", QueryKind::Parity),
    ] {
        let w = parse(&format!(
            r#"{{"class":"{class}","queries":[{{"a":2,"d":1}},{{"c":0}}]}}"#
        ))
        .unwrap();
        let want = ConjunctionWorkload::new(
            &domain(),
            kind,
            vec![
                vec![Literal { attr: 0, value: 2 }, Literal { attr: 3, value: 1 }],
                vec![Literal { attr: 2, value: 0 }],
            ],
        )
        .unwrap();
        assert_eq!(w, AnyWorkload::Literals(want));
        assert_eq!(w.class().key(), class);
    }
    let e = parse(r#"{"class":"linear","attributes":["b"],"queries":[[1,3],[-2,0]]}"#).unwrap();
    assert_eq!(e.class(), QueryClass::Explicit);
    assert_eq!(e.num_queries(), 2);
}

#[test]
fn json_errors_say_what_is_wrong() {
    let msg = |t: &str| parse(t).unwrap_err().to_string();
    assert!(msg(r#"{"class":"cubes","queries":[]}"#).contains("unknown class 'cubes'"));
    assert!(msg(r#"{"class":"conjunctions"}"#).contains("needs the field \"queries\""));
    assert!(
        msg(r#"{"class":"conjunctions","queries":[{"a":2}],"attributes":["a"]}"#)
            .contains("takes no field \"attributes\"")
    );
    assert!(msg(r#"{"class":"conjunctions","queries":[{"a":-1}]}"#).contains("non-negative"));
    assert!(msg(r#"{"class":"conjunctions","queries":[{"zz":1}]}"#).contains("zz"));
    assert!(msg(r#"{"class":"conjunctions","queries":[{"a":7}]}"#).contains("outside 0..3"));
    assert!(
        msg(r#"{"class":"linear","attributes":["b"],"queries":[[1,2,3]]}"#).contains("2 cells")
    );
    assert!(
        msg(r#"{"class":"linear","attributes":["b","b"],"queries":[[1,2,3,4]]}"#).contains("twice")
    );
    assert!(msg(r#"{"class":"parities","queries":[]}"#).contains("at least one query"));
    assert!(msg(r#"{"class":"marginals","marginals":[["a"]],"bogus":1}"#).contains("bogus"));
}
