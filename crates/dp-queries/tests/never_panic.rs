//! Property tests (the CI counterpart of the `fuzz/` targets): the domain-JSON parser, the
//! CSV loader and the workload parser return `Ok` or a clear error on arbitrary input —
//! they never panic, and what they accept satisfies the documented invariants.

use dp_queries::{
    Dataset, Domain, DraftSettings, MAX_QUERIES, MarginalWorkload, Schema, draft_schema,
};
use proptest::prelude::*;

fn domain() -> Domain {
    Domain::new(vec![("a".into(), 3), ("b".into(), 2), ("c".into(), 300)]).unwrap()
}

/// Text built from CSV-ish pieces, so that many inputs get past the header.
fn csvish() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            Just(b"a".to_vec()),
            Just(b"b".to_vec()),
            Just(b"c".to_vec()),
            Just(b",".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\"".to_vec()),
            Just(b"0".to_vec()),
            Just(b"299".to_vec()),
            Just(b"18446744073709551616".to_vec()),
            Just(b"-1".to_vec()),
            Just(b" ".to_vec()),
            Just(vec![0xEF, 0xBB, 0xBF]),
            Just(vec![0xFF]),
            prop::collection::vec(any::<u8>(), 0..4),
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn csv_loader_never_panics(bytes in csvish()) {
        match Dataset::from_csv_reader(&bytes[..], "p.csv", domain()) {
            Ok(d) => {
                prop_assert!(d.n() >= 1);
                for i in 0..3 {
                    prop_assert!(d.column(i).iter().all(|&v| v < d.domain().size(i)));
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn csv_loader_never_panics_on_raw_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Dataset::from_csv_reader(&bytes[..], "p.csv", domain());
    }

    #[test]
    fn domain_json_never_panics(text in "[{}\\[\\]\":,0-9a-z \\-.e]{0,60}") {
        if let Ok(d) = Domain::from_json_str(&text, "p.json") {
            prop_assert!(!d.is_empty() && d.sizes().iter().all(|&s| s >= 1));
        }
    }

    #[test]
    fn workload_specs_never_panic(
        kind in prop_oneof![Just("all-"), Just("random-"), Just("all"), Just("random-x")],
        k in "[0-9]{0,22}",
        rest in prop_oneof![Just("way"), Just("way:"), Just("wa"), Just("")],
        m in "[0-9]{0,22}",
    ) {
        let spec = format!("{kind}{k}{rest}{m}");
        // specs that do not start with all-/random- are file names: skip those
        if (spec.starts_with("all-") || spec.starts_with("random-"))
            && let Ok(w) = MarginalWorkload::parse_spec(&domain(), &spec, 7)
        {
            prop_assert!(w.num_queries() >= 1 && w.num_queries() <= MAX_QUERIES);
        }
    }

    #[test]
    fn attribute_lists_never_panic(
        lists in prop::collection::vec(
            prop::collection::vec(prop_oneof![Just("a"), Just("b"), Just("c"), Just("zz"), Just("")], 0..5),
            0..5,
        )
    ) {
        let lists: Vec<Vec<String>> =
            lists.iter().map(|l| l.iter().map(|s| s.to_string()).collect()).collect();
        if let Ok(w) = MarginalWorkload::from_attribute_lists(&domain(), &lists) {
            prop_assert_eq!(w.len(), lists.len());
        }
    }

    #[test]
    fn schema_loader_and_draft_never_panic(bytes in csvish()) {
        let schema = Schema::from_json_str(
            r#"{"a": {"labels": ["0", "a", "\""], "missing": true}, "b": {"bins": [-1, 0, 299], "other": true}, "c": 300}"#,
            "s.json",
        )
        .unwrap();
        if let Ok(d) = Dataset::from_csv_reader_with_schema(&bytes[..], "f.csv", &schema) {
            prop_assert_eq!(d.domain(), schema.domain());
            prop_assert!(d.n() >= 1);
        }
        for delimiter in [',', ';'] {
            let options = dp_queries::ReadOptions::new(delimiter, delimiter == ';').unwrap();
            let _ = dp_queries::io::check_csv(
                &bytes[..],
                "f.csv",
                &schema,
                &options,
                &dp_queries::io::CheckSettings::default(),
            );
        }
        let settings = DraftSettings { max_labels: 2, bins: 3, ..DraftSettings::default() };
        if let Ok(draft) = draft_schema(&bytes[..], "f.csv", settings) {
            // a draft is a valid schema unless the header repeats a name or is empty
            let _ = Schema::from_json_str(&draft, "draft");
        }
    }

    #[test]
    fn schema_json_never_panics(text in "[{}\\[\\]\":,0-9a-z \\-.e]{0,80}") {
        let _ = Schema::from_json_str(&text, "s.json");
        let _ = Schema::from_json_str(&format!(r#"{{"x": {{"labels": [{text}]}}, "y": {{"bins": [{text}]}}}}"#), "s.json");
    }
}
