//! The synthetic-data file: the records a mechanism released, one per row, with their
//! weight.
//!
//! Header: the domain's attribute names in domain order, then the weight column — always
//! the last column, called `weight` unless an attribute already has that name, in which
//! case it is the first of `weight_1`, `weight_2`, … that is not an attribute name
//! ([`weight_column`]; `dpqr release` says so when it happens). Each row holds a record's
//! integer codes and its non-negative weight; the weights sum to one. Workload answers
//! computed from this weighted dataset equal the release's answers (for the mechanisms
//! whose output *is* the synthetic data). The file is standard CSV (written with the `csv`
//! crate): a name holding `,`, `"` or a line break is quoted, with `"` doubled.

use crate::{BenchError, Result};
use dp_core::Num;
use dp_mechanisms::SyntheticData;
use dp_queries::Domain;
use std::io::Write;
use std::path::Path;

/// The name of the weight column of a synthetic file over `domain`: `weight`, or if an
/// attribute is called that, the first of `weight_1`, `weight_2`, … that is not an
/// attribute name.
pub fn weight_column(domain: &Domain) -> String {
    let taken = |n: &str| domain.names().any(|a| a == n);
    if !taken("weight") {
        return "weight".to_string();
    }
    (1..)
        .map(|i| format!("weight_{i}"))
        .find(|n| !taken(n))
        .unwrap_or_default()
}

/// Write `synthetic` as CSV to `w`.
pub fn write_synthetic<W: Write>(w: W, synthetic: &SyntheticData) -> Result<()> {
    let records = &synthetic.records;
    if records.n() != synthetic.weights.len() {
        return Err(BenchError::Usage(format!(
            "{} synthetic records but {} weights",
            records.n(),
            synthetic.weights.len()
        )));
    }
    let io = |e: csv::Error| BenchError::Usage(format!("cannot write the synthetic data: {e}"));
    let mut out = csv::Writer::from_writer(w);
    let domain = records.domain();
    let weight = weight_column(domain);
    out.write_record(domain.names().chain(std::iter::once(weight.as_str())))
        .map_err(io)?;
    let mut row: Vec<String> = Vec::with_capacity(domain.len() + 1);
    for (r, weight) in synthetic.weights.iter().enumerate() {
        row.clear();
        row.extend((0..domain.len()).map(|a| records.column(a)[r].to_string()));
        row.push(Num(*weight).to_string());
        out.write_record(&row).map_err(io)?;
    }
    out.flush()
        .map_err(|e| BenchError::Usage(format!("cannot write the synthetic data: {e}")))
}

/// Write `synthetic` to a file, atomically ([`crate::io::output::write_atomically`]).
pub fn write_synthetic_file(path: &Path, synthetic: &SyntheticData) -> Result<()> {
    crate::io::output::write_atomically(path, |w| write_synthetic(w, synthetic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_queries::{Dataset, Domain};

    #[test]
    fn writes_codes_and_weights_by_hand() {
        let d = Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap();
        let records = Dataset::from_columns(d, vec![vec![0, 1], vec![2, 0]]).unwrap();
        let s = SyntheticData {
            sampled_from_model: false,
            records,
            weights: vec![0.25, 0.75],
        };
        let mut buf = Vec::new();
        write_synthetic(&mut buf, &s).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "a,b,weight\n0,2,0.25\n1,0,0.75\n"
        );
        let bad = SyntheticData {
            sampled_from_model: false,
            records: s.records.clone(),
            weights: vec![1.0],
        };
        assert!(write_synthetic(Vec::new(), &bad).is_err());
    }

    #[test]
    fn names_are_quoted_and_the_weight_column_never_clashes() {
        let d = Domain::new(vec![
            ("weight".into(), 2),
            ("a,\"b\"".into(), 2),
            ("weight_1".into(), 2),
        ])
        .unwrap();
        assert_eq!(weight_column(&d), "weight_2");
        let records = Dataset::from_columns(d, vec![vec![1], vec![0], vec![1]]).unwrap();
        let s = SyntheticData {
            sampled_from_model: false,
            records,
            weights: vec![1.0],
        };
        let mut buf = Vec::new();
        write_synthetic(&mut buf, &s).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "weight,\"a,\"\"b\"\"\",weight_1,weight_2\n1,0,1,1\n"
        );
    }
}
