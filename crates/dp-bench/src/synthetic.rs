//! The synthetic-data file: the records a mechanism released, one per row, with their
//! weight.
//!
//! Header: the domain's attribute names in domain order, then `weight`. Each row holds a
//! record's integer codes and its non-negative weight; the weights sum to one. Workload
//! answers computed from this weighted dataset equal the release's answers (for the
//! mechanisms whose output *is* the synthetic data).

use crate::{BenchError, Result, io_error};
use dp_mechanisms::SyntheticData;
use std::io::Write;
use std::path::Path;

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
    let io = |e: std::io::Error| BenchError::Io {
        path: "synthetic output".into(),
        source: e,
    };
    let mut out = std::io::BufWriter::new(w);
    let domain = records.domain();
    let header: Vec<&str> = domain.names().chain(std::iter::once("weight")).collect();
    writeln!(out, "{}", header.join(",")).map_err(io)?;
    let mut line = String::new();
    for (row, weight) in synthetic.weights.iter().enumerate() {
        line.clear();
        for a in 0..domain.len() {
            line.push_str(&records.column(a)[row].to_string());
            line.push(',');
        }
        line.push_str(&weight.to_string());
        writeln!(out, "{line}").map_err(io)?;
    }
    out.flush().map_err(io)
}

/// Write `synthetic` to a file.
pub fn write_synthetic_file(path: &Path, synthetic: &SyntheticData) -> Result<()> {
    let f = std::fs::File::create(path).map_err(io_error(path))?;
    write_synthetic(f, synthetic)
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
}
