//! Property tests of the answers-file reader of `dpqr eval` (the CI counterpart of the
//! `answers` fuzz target): never a panic or a huge allocation, and every file written by
//! `write_answers` reads back exactly.

use dp_bench::io::answers::{parse_answers, write_answers};
use dp_queries::{Domain, MarginalWorkload};
use proptest::prelude::*;

fn domain() -> Domain {
    Domain::new(vec![
        ("a".into(), 2),
        ("b".into(), 3),
        ("c".into(), 100_000_000),
    ])
    .unwrap()
}

fn answersish() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            Just(b"marginal,cell,answer\n".to_vec()),
            Just(b"a|b".to_vec()),
            Just(b"a|c".to_vec()),
            Just(b"a".to_vec()),
            Just(b",".to_vec()),
            Just(b"|".to_vec()),
            Just(b"0".to_vec()),
            Just(b"1".to_vec()),
            Just(b"2".to_vec()),
            Just(b"0.5".to_vec()),
            Just(b"NaN".to_vec()),
            Just(b"inf".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            prop::collection::vec(any::<u8>(), 0..3),
        ],
        0..40,
    )
    .prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn reader_never_panics(bytes in answersish()) {
        match parse_answers(&bytes, "p.csv", &domain()) {
            Ok((w, answers)) => {
                prop_assert_eq!(w.num_queries(), answers.len());
                prop_assert!(answers.iter().all(|a| a.is_finite()));
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn written_files_read_back(values in prop::collection::vec(-1.0e6f64..1.0e6, 6)) {
        let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        let w = MarginalWorkload::all_kway(&d, 2).unwrap();
        let mut buf = Vec::new();
        write_answers(&mut buf, &w, &values).unwrap();
        let (w2, back) = parse_answers(&buf, "p.csv", &d).unwrap();
        prop_assert_eq!(w2, w);
        prop_assert_eq!(back, values);
    }
}
