//! Fuzz the domain-JSON parser and the CSV loader. The input is `DOMAIN\0CSV`; without a NUL
//! byte the whole input is CSV against a fixed domain. Neither may panic, hang or allocate
//! out of proportion to the input.
#![no_main]

use dp_queries::{Dataset, Domain};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (domain, csv) = match data.iter().position(|&b| b == 0) {
        Some(i) => {
            let Ok(text) = std::str::from_utf8(&data[..i]) else {
                return;
            };
            match Domain::from_json_str(text, "fuzz-domain.json") {
                Ok(d) => (d, &data[i + 1..]),
                Err(e) => {
                    let _ = e.to_string();
                    return;
                }
            }
        }
        None => (
            Domain::new(vec![("a".into(), 3), ("b".into(), 2), ("c".into(), 300)])
                .expect("fixed domain"),
            data,
        ),
    };
    match Dataset::from_csv_reader(csv, "fuzz.csv", domain) {
        Ok(d) => assert!(d.n() >= 1),
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
