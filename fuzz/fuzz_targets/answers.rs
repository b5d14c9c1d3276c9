//! Fuzz the answers-file reader of `dpqr eval`.
#![no_main]

use dp_bench::answers::parse_answers;
use dp_queries::Domain;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let domain = Domain::new(vec![("a".into(), 2), ("b".into(), 3), ("c".into(), 100000)])
        .expect("fixed domain");
    match parse_answers(data, "fuzz-answers.csv", &domain) {
        Ok((w, answers)) => assert_eq!(w.num_queries(), answers.len()),
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
