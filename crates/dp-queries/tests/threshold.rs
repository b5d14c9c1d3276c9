//! k-of-ℓ threshold queries and decision-list databases (seed 002 §4.2, §4.3) against brute
//! force: answers from independent definitions, contribution bounds over every record of a
//! small domain, restriction to attributes, JSON forms and their errors.

use dp_queries::{
    AnyWorkload, ConjunctionWorkload, DecisionListShape, DecisionListWorkload, Domain, Literal,
    Parallelism, QueryClass, QueryKind, ThresholdQuery, ThresholdWorkload, Workload,
};

mod common;
use common::{all_records, brute_bounds, contribution, data, domain};

fn lit(attr: u32, value: u32) -> Literal {
    Literal { attr, value }
}

fn thresholds(dom: &Domain) -> ThresholdWorkload {
    ThresholdWorkload::new(
        dom,
        vec![
            ThresholdQuery {
                k: 2,
                literals: vec![lit(0, 1), lit(1, 1), lit(2, 3)],
            },
            ThresholdQuery {
                k: 1,
                literals: vec![lit(3, 0), lit(2, 0)],
            },
            ThresholdQuery {
                k: 3,
                literals: vec![lit(0, 2), lit(1, 0), lit(2, 1), lit(3, 1)],
            },
            ThresholdQuery {
                k: 4,
                literals: vec![lit(0, 0), lit(1, 1), lit(2, 2), lit(3, 1)],
            },
        ],
    )
    .unwrap()
}

#[test]
fn threshold_counts_are_the_definition_and_match_disjunctions_and_conjunctions() {
    let dom = domain();
    let d = data(&dom, 500, 7);
    let w = thresholds(&dom);
    // the definition, written out: at least k literals hold
    let mut naive = vec![0i64; w.len()];
    for r in 0..d.n() {
        let x = d.record(r);
        for (q, t) in w.queries().iter().enumerate() {
            let held = t
                .literals
                .iter()
                .filter(|l| x[l.attr as usize] == l.value)
                .count();
            if held >= t.k as usize {
                naive[q] += 1;
            }
        }
    }
    assert_eq!(w.count_all(&d).unwrap(), naive);
    assert_eq!(w.count_all_with(&d, Parallelism::None).unwrap(), naive);
    assert!(naive.iter().all(|&c| c > 0 && c < 500), "{naive:?}");
    // k = 1 is the disjunction, k = ℓ the conjunction of the same literals
    let lits: Vec<Vec<Literal>> = w.queries().iter().map(|q| q.literals.clone()).collect();
    let or = ConjunctionWorkload::new(&dom, QueryKind::Disjunction, lits.clone()).unwrap();
    let and = ConjunctionWorkload::new(&dom, QueryKind::Conjunction, lits.clone()).unwrap();
    let at = |k: fn(usize) -> u32| {
        let qs = lits
            .iter()
            .map(|l| ThresholdQuery {
                k: k(l.len()),
                literals: l.clone(),
            })
            .collect();
        ThresholdWorkload::new(&dom, qs)
            .unwrap()
            .count_all(&d)
            .unwrap()
    };
    assert_eq!(at(|_| 1), or.count_all(&d).unwrap());
    assert_eq!(at(|l| l as u32), and.count_all(&d).unwrap());
}

#[test]
fn threshold_bounds_dominate_brute_force_and_restriction_keeps_counts() {
    let dom = domain();
    let w = thresholds(&dom);
    let claimed = w.contribution_bounds();
    let truth = brute_bounds(&w);
    assert!(claimed.l1 >= truth.l1 && claimed.l2_squared >= truth.l2_squared);
    assert!(claimed.change_l1 >= truth.change_l1);
    assert!(claimed.change_l2_squared >= truth.change_l2_squared);
    assert_eq!(claimed.l1, 4);
    // restriction to the touched attributes (all four) and to a workload on fewer
    let small = ThresholdWorkload::new(
        &dom,
        vec![ThresholdQuery {
            k: 1,
            literals: vec![lit(3, 1), lit(0, 2)],
        }],
    )
    .unwrap();
    assert_eq!(small.touched_attributes(), vec![0, 3]);
    let sub = small.on_attributes(&[0, 3]).unwrap();
    let d = data(&dom, 300, 2);
    let sub_data = d.select_attributes(&["a", "d"]).unwrap();
    assert_eq!(
        sub.count_all(&sub_data).unwrap(),
        small.count_all(&d).unwrap()
    );
    assert!(small.on_attributes(&[0]).is_err());
    assert_eq!(w.describe_query(0), "at least 2 of (a=1, b=1, c=3)");
}

#[test]
fn threshold_refusals() {
    let dom = domain();
    let msg = |qs: Vec<ThresholdQuery>| ThresholdWorkload::new(&dom, qs).unwrap_err().to_string();
    assert!(msg(vec![]).contains("at least one query"));
    let m = msg(vec![ThresholdQuery {
        k: 3,
        literals: vec![lit(0, 1), lit(1, 1)],
    }]);
    assert!(
        m.contains("between 1 and its number of literals (2), found 3"),
        "{m}"
    );
    let m = msg(vec![ThresholdQuery {
        k: 0,
        literals: vec![lit(0, 1)],
    }]);
    assert!(m.contains("found 0"), "{m}");
    let m = msg(vec![ThresholdQuery {
        k: 1,
        literals: vec![lit(0, 1), lit(0, 2)],
    }]);
    assert!(m.contains("'a' appears twice"), "{m}");
    let m = msg(vec![ThresholdQuery {
        k: 1,
        literals: vec![lit(1, 5)],
    }]);
    assert!(m.contains("code 5"), "{m}");
}

/// A decision list evaluated by the telescoping identity
/// `DL(y) = o₁ + Σ_i (o_{i+1} − o_i)·[no test among the first i holds]` (empty tests
/// dropped first) — a different route from the workload's first-match scan.
fn telescoped(record: &[u32], m: usize, y: &[bool]) -> i64 {
    let len = (record.len() - 1) / 2;
    let mut tests = Vec::new();
    let mut outs = Vec::new();
    for i in 0..len {
        if record[2 * i] != 2 * m as u32 {
            tests.push(record[2 * i]);
            outs.push(record[2 * i + 1] as i64);
        }
    }
    outs.push(record[2 * len] as i64);
    let holds = |c: u32| y[(c / 2) as usize] == c.is_multiple_of(2);
    let mut value = outs[0];
    let mut none_yet = true;
    for (i, &c) in tests.iter().enumerate() {
        none_yet &= !holds(c);
        if none_yet {
            value += outs[i + 1] - outs[i];
        }
    }
    value
}

fn all_points(m: usize) -> Vec<Vec<bool>> {
    (0..1u32 << m)
        .map(|b| (0..m).map(|v| b >> v & 1 == 1).collect())
        .collect()
}

#[test]
fn decision_lists_answer_by_the_telescoping_identity_on_every_record_and_point() {
    let (m, len) = (2, 2);
    let dom = DecisionListWorkload::domain_for(m, len).unwrap();
    assert_eq!(
        DecisionListShape::of(&dom).unwrap(),
        DecisionListShape {
            variables: m,
            length: len
        }
    );
    let w = DecisionListWorkload::new(&dom, all_points(m)).unwrap();
    let records = all_records(&dom);
    assert_eq!(records.len(), 5 * 2 * 5 * 2 * 2);
    let mut ones = 0;
    for x in &records {
        let got = contribution(&w, x);
        for (q, y) in w.points().iter().enumerate() {
            assert_eq!(got[q], telescoped(x, m, y), "{x:?} at {y:?}");
            ones += got[q];
        }
    }
    assert!(ones > 0 && ones < (records.len() * 4) as i64);
    // bounds: 0/1 queries, all attained (no tests and default 1 vs default 0)
    assert_eq!(w.contribution_bounds(), brute_bounds(&w));
    // counts on a dataset equal the per-record sum
    let d = data(&dom, 400, 5);
    let mut naive = vec![0i64; w.num_queries()];
    for r in 0..d.n() {
        for (q, c) in contribution(&w, &d.record(r)).into_iter().enumerate() {
            naive[q] += c;
        }
    }
    assert_eq!(w.count_all(&d).unwrap(), naive);
    assert_eq!(w.touched_attributes(), (0..5).collect::<Vec<_>>());
    assert_eq!(w.on_attributes(&[0, 1, 2, 3, 4]).unwrap(), w);
    assert!(w.on_attributes(&[0, 1, 2]).is_err());
    assert_eq!(w.describe_query(1), "point 10");
}

#[test]
fn decision_list_refusals() {
    // not the shape: even number of attributes, wrong test size, wrong output size
    let bad = [
        vec![("t", 5), ("o", 2)],
        vec![("t", 4), ("o", 2), ("d", 2)],
        vec![("t", 5), ("o", 3), ("d", 2)],
        vec![("t", 5), ("o", 2), ("t2", 7), ("o2", 2), ("d", 2)],
    ];
    for attrs in bad {
        let dom = Domain::new(attrs.iter().map(|(n, s)| (n.to_string(), *s)).collect()).unwrap();
        let e = DecisionListWorkload::new(&dom, vec![vec![true, false]]).unwrap_err();
        assert!(
            e.to_string().contains("not a decision-list database"),
            "{e}"
        );
    }
    let dom = DecisionListWorkload::domain_for(3, 2).unwrap();
    let e = DecisionListWorkload::new(&dom, vec![vec![true]]).unwrap_err();
    assert!(
        e.to_string().contains("1 bits; the lists are over 3"),
        "{e}"
    );
    assert!(DecisionListWorkload::new(&dom, vec![]).is_err());
    assert!(DecisionListWorkload::domain_for(0, 2).is_err());
    // a record with a code outside the shape contributes nothing
    let w = DecisionListWorkload::new(&dom, vec![vec![true, true, true]]).unwrap();
    assert_eq!(contribution(&w, &[9, 1, 6, 1, 1]), vec![0]);
    assert_eq!(contribution(&w, &[6, 1, 6, 1, 1]), vec![1]);
}

#[test]
fn json_forms_and_errors() {
    let dom = domain();
    let parse = |t: &str| AnyWorkload::from_json_slice(&dom, t.as_bytes(), "w.json");
    let w = parse(
        r#"{"class":"thresholds","queries":[{"k":2,"literals":{"a":1,"b":1,"c":3}},
            {"k":1,"literals":{"d":0,"c":0}}]}"#,
    )
    .unwrap();
    assert_eq!(w.class(), QueryClass::Thresholds);
    let AnyWorkload::Thresholds(t) = &w else {
        panic!("not thresholds")
    };
    assert_eq!(t.queries()[0].k, 2);
    assert_eq!(t.queries()[1].literals, vec![lit(2, 0), lit(3, 0)]);
    let msg = |t: &str| parse(t).unwrap_err().to_string();
    let m = msg(r#"{"class":"thresholds","queries":[{"k":3,"literals":{"a":1}}]}"#);
    assert!(m.contains("threshold k must lie between 1 and"), "{m}");
    let m = msg(r#"{"class":"thresholds","queries":[{"literals":{"a":1}}]}"#);
    assert!(m.contains("\"k\": threshold"), "{m}");
    let m = msg(r#"{"class":"thresholds","queries":[{"k":1,"literals":{"zz":1}}]}"#);
    assert!(m.contains("zz"), "{m}");
    let m = msg(r#"{"class":"thresholds","points":["01"]}"#);
    assert!(m.contains("needs the field \"queries\""), "{m}");

    let dl = DecisionListWorkload::domain_for(3, 2).unwrap();
    let parse = |t: &str| AnyWorkload::from_json_slice(&dl, t.as_bytes(), "w.json");
    let w = parse(r#"{"class":"decision-lists","points":["011","100"]}"#).unwrap();
    assert_eq!(w.class(), QueryClass::DecisionLists);
    assert_eq!(w.num_queries(), 2);
    let AnyWorkload::DecisionLists(d) = &w else {
        panic!("not decision lists")
    };
    assert_eq!(d.points()[0], vec![false, true, true]);
    let m = parse(r#"{"class":"decision-lists","points":["01x"]}"#)
        .unwrap_err()
        .to_string();
    assert!(m.contains("point #0 must be a string of 0 and 1"), "{m}");
    let m = parse(r#"{"class":"decision-lists","queries":[]}"#)
        .unwrap_err()
        .to_string();
    assert!(m.contains("needs the field \"points\""), "{m}");
    // decision-list points on an ordinary table: the shape is explained
    let m = AnyWorkload::from_json_slice(
        &domain(),
        br#"{"class":"decision-lists","points":["01"]}"#,
        "w.json",
    )
    .unwrap_err()
    .to_string();
    assert!(m.contains("not a decision-list database"), "{m}");
}
