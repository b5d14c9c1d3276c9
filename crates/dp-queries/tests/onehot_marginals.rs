//! `OneHotMarginals`: a categorical marginal workload rewritten over binary bits. The exact
//! answers of the bit workload on the encoded data, read back, must equal the source
//! workload's exact answers on the source data (any workload shape: all k-way, random k-way,
//! tables mixing binary and wide attributes, an attribute of size 1); and the bit workload's
//! exact counts derived from the source tables' counts alone are the encoded data's.

mod common;

use dp_queries::{Dataset, Domain, MAX_BIT_TABLES, MarginalWorkload, OneHotMarginals, QueryError};
use rand::SeedableRng;

fn check_exact(domain: &Domain, workload: &MarginalWorkload, data: &Dataset) {
    let plan = OneHotMarginals::new(workload).unwrap();
    let bits = plan.encode(data).unwrap();
    assert_eq!(bits.n(), data.n());
    assert!(bits.domain().sizes().iter().all(|&s| s == 2));
    // the bit tables' counts from the source tables' counts alone are the encoded data's
    let counts = workload.count_all(data).unwrap();
    assert_eq!(
        plan.bit_counts(&counts).unwrap(),
        plan.bit_workload().count_all(&bits).unwrap(),
        "bit counts on {:?}",
        domain.sizes()
    );
    assert!(plan.bit_counts(&counts[1..]).is_err());
    let bit_answers = plan.bit_workload().answers(&bits).unwrap();
    let back = plan.read_back(&bit_answers).unwrap();
    let want = workload.answers(data).unwrap();
    assert_eq!(back.len(), want.len());
    for (i, (b, w)) in back.iter().zip(&want).enumerate() {
        // both are count / n of the same count: equal to the last bit
        assert_eq!(
            b,
            w,
            "query {i} of {} on {:?}",
            workload.len(),
            domain.sizes()
        );
    }
}

#[test]
fn read_back_of_exact_bit_answers_is_the_source_answers() {
    let dom = common::domain(); // sizes 3, 2, 4, 2
    let data = common::data(&dom, 500, 7);
    for k in 1..=4 {
        let w = MarginalWorkload::all_kway(&dom, k).unwrap();
        check_exact(&dom, &w, &data);
    }
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
    for k in 1..=3 {
        let w = MarginalWorkload::random_kway(&dom, k, 3, None, &mut rng).unwrap();
        check_exact(&dom, &w, &data);
    }
    // an attribute of size 1 and a workload that skips an attribute
    let odd = Domain::new(vec![
        ("one".into(), 1),
        ("x".into(), 5),
        ("skipped".into(), 3),
        ("y".into(), 2),
    ])
    .unwrap();
    let data = common::data(&odd, 300, 11);
    let lists = vec![
        vec!["one".to_string(), "x".to_string()],
        vec!["y".to_string(), "x".to_string()],
        vec!["y".to_string()],
    ];
    let w = MarginalWorkload::from_attribute_lists(&odd, &lists).unwrap();
    check_exact(&odd, &w, &data);
    let plan = OneHotMarginals::new(&w).unwrap();
    // touched: one (1 bit), x (5 bits), y (kept binary); "skipped" is not encoded
    assert_eq!(plan.bits(), 1 + 5 + 1);
    assert!(!plan.is_binary());
}

#[test]
fn bit_tables_and_names_by_hand() {
    let dom = Domain::new(vec![("a".into(), 3), ("b".into(), 2)]).unwrap();
    let w = MarginalWorkload::all_kway(&dom, 2).unwrap();
    let plan = OneHotMarginals::new(&w).unwrap();
    let names: Vec<&str> = plan.bit_domain().names().collect();
    assert_eq!(names, ["a=0", "a=1", "a=2", "b"]);
    // the table (a, b) becomes three bit tables (a=c, b), 4 cells each
    assert_eq!(plan.bit_workload().len(), 3);
    assert_eq!(plan.bit_workload().num_queries(), 12);
    // source cell (a=2, b=1) is cell (1, 1) = 3 of the third bit table
    let mut bit_answers = vec![0.0; 12];
    bit_answers[2 * 4 + 3] = 0.25;
    let back = plan.read_back(&bit_answers).unwrap();
    assert_eq!(back.len(), 6);
    assert_eq!(back[2 * 2 + 1], 0.25);
    assert_eq!(back.iter().filter(|&&x| x != 0.0).count(), 1);
    // all-binary workloads are unchanged
    let bin = Domain::new(vec![("p".into(), 2), ("q".into(), 2)]).unwrap();
    let plan = OneHotMarginals::new(&MarginalWorkload::all_kway(&bin, 2).unwrap()).unwrap();
    assert!(plan.is_binary());
    assert_eq!(plan.bit_workload().num_queries(), 4);
}

#[test]
fn bad_inputs_are_refused() {
    let dom = common::domain();
    let w = MarginalWorkload::all_kway(&dom, 2).unwrap();
    let plan = OneHotMarginals::new(&w).unwrap();
    // wrong answer length
    assert!(matches!(
        plan.read_back(&[0.5; 3]),
        Err(QueryError::BadWorkload { .. })
    ));
    // data over another domain
    let other = Domain::new(vec![("z".into(), 2)]).unwrap();
    let data = common::data(&other, 10, 1);
    assert!(matches!(
        plan.encode(&data),
        Err(QueryError::DomainMismatch { .. })
    ));
    // too many bit tables: three attributes of 128 values, one 3-way table = 2^21 tables
    let wide = Domain::new(vec![
        ("u".into(), 128),
        ("v".into(), 128),
        ("w".into(), 128),
    ])
    .unwrap();
    let w = MarginalWorkload::all_kway(&wide, 3).unwrap();
    match OneHotMarginals::new(&w) {
        Err(QueryError::TooLarge { estimate, .. }) => {
            assert!(estimate.contains(&(1usize << 21).to_string()), "{estimate}");
            assert!(estimate.contains(&MAX_BIT_TABLES.to_string()), "{estimate}");
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}
