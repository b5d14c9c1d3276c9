//! Fuzz the workload parser: the JSON list-of-lists format and the `all-Kway` /
//! `random-Kway:M` specs (specs that would name a file are skipped: no file-system access).
#![no_main]

use dp_queries::{Domain, MarginalWorkload};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let domain = Domain::new(vec![
        ("a".into(), 3),
        ("b".into(), 2),
        ("c".into(), 5),
        ("d".into(), 2),
        ("e".into(), 70000),
    ])
    .expect("fixed domain");
    if let Ok(lists) = serde_json::from_slice::<Vec<Vec<String>>>(data) {
        if let Ok(w) = MarginalWorkload::from_attribute_lists(&domain, &lists) {
            assert!(w.num_queries() >= 1);
        }
    }
    if let Ok(spec) = std::str::from_utf8(data) {
        if spec.starts_with("all-") || spec.starts_with("random-") {
            let seed = data.len() as u64;
            if let Ok(w) = MarginalWorkload::parse_spec(&domain, spec, seed) {
                assert!(w.num_queries() <= dp_queries::MAX_QUERIES);
            }
        }
    }
});
