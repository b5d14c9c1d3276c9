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
//!
//! # Reading it back
//!
//! [`read_weighted`] reads such a file against the domain it was released over (codes
//! only: ASCII digits, each below its attribute's size; weights finite and non-negative,
//! not all zero; errors name the file, the line and the column). Which column holds the
//! weights is decided by one rule ([`weighted_header`]): a column named by the caller
//! (`--weights-column NAME`), or else — automatically — the header holds every attribute of
//! the domain exactly once (any order) plus exactly one more column, named as
//! [`weight_column`] names it for that domain. Any other header is not a weighted file. The
//! weights need not sum to one: answers are weighted counts divided by the total weight
//! ([`crate::scoring::weighted_answers`]).
//!
//! # Expanding to integer rows
//!
//! [`expand_counts`] turns the weights into integer row counts summing to a chosen total `N`
//! by largest-remainder rounding (Hamilton's method): record `i` gets `⌊N·wᵢ/W⌋` rows (`W`
//! the total weight), and the rows still missing go, one each, to the records with the
//! largest remainders `N·wᵢ/W − ⌊N·wᵢ/W⌋` (ties to the earlier record). Every count is then
//! within one of `N·wᵢ/W`, and the counts sum to exactly `N`. [`write_expanded`] writes the
//! result as a plain CSV (one row per unit of count, no weight column) that every `dpqr`
//! command reads as ordinary data.

use crate::{BenchError, Result, quoted};
use dp_core::Num;
use dp_mechanisms::SyntheticData;
use dp_queries::{Dataset, Domain};
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

/// Records with non-negative weights: a synthetic file read back by [`read_weighted`].
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedRecords {
    /// The records (one per row of the file), over the domain they were read against.
    pub records: Dataset,
    /// The weight of each record, finite and non-negative, not all zero.
    pub weights: Vec<f64>,
}

impl WeightedRecords {
    /// The sum of the weights.
    pub fn total_weight(&self) -> f64 {
        self.weights.iter().sum()
    }

    /// Keep only the attributes `names`, in this order (the weights stay with their
    /// records).
    pub fn select_attributes(&self, names: &[&str]) -> Result<WeightedRecords> {
        Ok(WeightedRecords {
            records: self.records.select_attributes(names)?,
            weights: self.weights.clone(),
        })
    }
}

/// The weight column of a file whose header is `header` over `domain`, by the rule of the
/// module docs: with `named = Some(NAME)`, `NAME` if the header holds it and otherwise
/// exactly the domain's attributes; with `named = None`, [`weight_column`]`(domain)` if the
/// header is exactly the domain's attributes (any order, each once) plus that one column.
/// `None` when the header is not that of a weighted file.
pub fn weighted_header(header: &[String], domain: &Domain, named: Option<&str>) -> Option<String> {
    let weight = match named {
        Some(n) => n.to_string(),
        None => weight_column(domain),
    };
    if domain.names().any(|a| a == weight) || header.len() != domain.len() + 1 {
        return None;
    }
    let once = |name: &str| header.iter().filter(|h| *h == name).count() == 1;
    if once(&weight) && domain.names().all(once) {
        Some(weight)
    } else {
        None
    }
}

/// The header of the CSV `bytes` (its first record), or `None` if there is none or it is
/// not valid UTF-8 CSV.
pub fn csv_header(bytes: &[u8]) -> Option<Vec<String>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let record = reader.records().next()?.ok()?;
    Some(record.iter().map(str::to_string).collect())
}

/// Whether the file at `path` is a weighted file over `domain` ([`weighted_header`]):
/// `Some(weight column)` if its header fits with the column `named` (when given) or with the
/// automatic rule. Reads the file (decompressing `.gz`).
pub fn sniff_weighted(path: &Path, domain: &Domain, named: Option<&str>) -> Result<Option<String>> {
    let bytes = crate::io::output::read_maybe_compressed(path)?;
    Ok(csv_header(&bytes).and_then(|h| {
        named
            .and_then(|n| weighted_header(&h, domain, Some(n)))
            .or_else(|| weighted_header(&h, domain, None))
    }))
}

/// Read the weighted records file at `path` (`.gz` decompressed) over `domain`; the weight
/// column is `weights_column` if given, else found by the automatic rule (module docs).
pub fn read_weighted(
    path: &Path,
    domain: &Domain,
    weights_column: Option<&str>,
) -> Result<WeightedRecords> {
    let bytes = crate::io::output::read_maybe_compressed(path)?;
    parse_weighted(&bytes, &path.display().to_string(), domain, weights_column)
}

/// Parse the bytes of a weighted records file (see [`read_weighted`]); `file` labels error
/// messages. Never panics, whatever the bytes.
pub fn parse_weighted(
    bytes: &[u8],
    file: &str,
    domain: &Domain,
    weights_column: Option<&str>,
) -> Result<WeightedRecords> {
    let err = |line: u64, message: String| BenchError::WeightedFile {
        file: file.to_string(),
        line,
        message,
    };
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(body);
    let csv_error = |e: csv::Error| {
        let line = e.position().map_or(1, |p| p.line());
        match e.kind() {
            csv::ErrorKind::Utf8 { .. } => err(line, "not valid UTF-8".into()),
            _ => err(line, format!("not a valid CSV record: {e}")),
        }
    };
    let mut records = reader.records();
    let header: Vec<String> = match records.next() {
        Some(Ok(h)) => h.iter().map(str::to_string).collect(),
        Some(Err(e)) => return Err(csv_error(e)),
        None => return Err(err(1, "empty file".into())),
    };
    let Some(weight) = weighted_header(&header, domain, weights_column) else {
        let attrs: Vec<&str> = domain.names().collect();
        let expected = match weights_column {
            Some(n) if domain.names().any(|a| a == n) => {
                return Err(err(
                    1,
                    format!(
                        "{} is an attribute of the domain, not a weight column",
                        quoted(n)
                    ),
                ));
            }
            Some(n) => quoted(n),
            None => quoted(&weight_column(domain)),
        };
        return Err(err(
            1,
            format!(
                "not a weighted records file: the header must hold each of the domain's \
                 attributes ({}) once and the weight column {expected}, and nothing else; \
                 found {}",
                quoted(&attrs.join(",")),
                quoted(&header.join(","))
            ),
        ));
    };
    // column → attribute index, or None for the weight column
    let mut targets = Vec::with_capacity(header.len());
    for name in &header {
        if *name == weight {
            targets.push(None);
        } else {
            targets.push(Some(domain.index_of(name)?));
        }
    }
    let sizes = domain.sizes().to_vec();
    let mut columns: Vec<Vec<u32>> = vec![Vec::new(); domain.len()];
    let mut weights = Vec::new();
    for record in records {
        let record = record.map_err(csv_error)?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() == 1 && record[0].is_empty() {
            continue; // a blank line
        }
        if record.len() != header.len() {
            return Err(err(
                line,
                format!("expected {} fields, found {}", header.len(), record.len()),
            ));
        }
        for (field, (target, name)) in record.iter().zip(targets.iter().zip(&header)) {
            match target {
                None => {
                    let w: f64 = field.trim().parse().map_err(|_| {
                        err(
                            line,
                            format!(
                                "column {}: weight {} is not a number",
                                quoted(name),
                                quoted(field)
                            ),
                        )
                    })?;
                    if !w.is_finite() || w < 0.0 {
                        return Err(err(
                            line,
                            format!(
                                "column {}: weight {} must be a finite number of at least 0",
                                quoted(name),
                                quoted(field)
                            ),
                        ));
                    }
                    weights.push(w);
                }
                Some(a) => {
                    let code = (!field.is_empty() && field.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| field.parse::<u32>().ok())
                        .flatten()
                        .filter(|&c| c < sizes[*a]);
                    let Some(code) = code else {
                        return Err(err(
                            line,
                            format!(
                                "column {}: {} is not a code of the attribute (an integer \
                                 from 0 to {})",
                                quoted(name),
                                quoted(field),
                                sizes[*a].saturating_sub(1)
                            ),
                        ));
                    };
                    columns[*a].push(code);
                }
            }
        }
    }
    if weights.is_empty() {
        return Err(err(1, "no records after the header".into()));
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(err(
            1,
            "every weight is zero: the records describe no data".into(),
        ));
    }
    let records = Dataset::from_columns(domain.clone(), columns)?;
    Ok(WeightedRecords { records, weights })
}

/// Largest `--total` [`expand_counts`] accepts: 10⁹ rows.
pub const MAX_EXPANDED_ROWS: u64 = 1_000_000_000;

/// Integer row counts summing to `total`, one per weight, by largest-remainder rounding of
/// `total·wᵢ/W` (module docs). Errors: `total` of 0 or above [`MAX_EXPANDED_ROWS`], no
/// weights, a weight negative or not finite, all weights zero.
pub fn expand_counts(weights: &[f64], total: u64) -> Result<Vec<u64>> {
    if total == 0 || total > MAX_EXPANDED_ROWS {
        return Err(BenchError::Usage(format!(
            "the total number of rows must be from 1 to {MAX_EXPANDED_ROWS}, not {total}"
        )));
    }
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(BenchError::Usage(
            "every weight must be a finite number of at least 0".into(),
        ));
    }
    let sum: f64 = weights.iter().sum();
    if weights.is_empty() || sum <= 0.0 {
        return Err(BenchError::Usage(
            "there are no records with a positive weight to expand".into(),
        ));
    }
    let n = total as f64;
    let quotas: Vec<f64> = weights.iter().map(|w| w / sum * n).collect();
    let mut counts: Vec<u64> = quotas.iter().map(|q| q.floor() as u64).collect();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    // largest remainder first, ties to the earlier record (a stable sort keeps row order)
    order.sort_by(|&a, &b| {
        let (ra, rb) = (quotas[a] - quotas[a].floor(), quotas[b] - quotas[b].floor());
        rb.total_cmp(&ra)
    });
    let assigned: u64 = counts.iter().sum();
    if assigned <= total {
        // at most one per record (fewer than #records are missing, up to rounding of the
        // quotas; cycling keeps the sum exact even then)
        let missing = (total - assigned) as usize;
        for &i in order
            .iter()
            .filter(|&&i| weights[i] > 0.0)
            .cycle()
            .take(missing)
        {
            counts[i] += 1;
        }
    } else {
        // the floors overshoot only through floating-point rounding: take the excess back
        // from the smallest remainders that have rows
        let mut excess = assigned - total;
        for &i in order.iter().rev() {
            if excess == 0 {
                break;
            }
            if counts[i] > 0 {
                counts[i] -= 1;
                excess -= 1;
            }
        }
    }
    Ok(counts)
}

/// Write `records` as a plain CSV to `w`: the header (attribute names in domain order),
/// then record `i` repeated `counts[i]` times, in record order.
pub fn write_expanded<W: Write>(w: W, records: &Dataset, counts: &[u64]) -> Result<()> {
    if counts.len() != records.n() {
        return Err(BenchError::Usage(format!(
            "{} records but {} counts",
            records.n(),
            counts.len()
        )));
    }
    let io = |e: csv::Error| BenchError::Usage(format!("cannot write the rows: {e}"));
    let mut out = csv::Writer::from_writer(w);
    let domain = records.domain();
    out.write_record(domain.names()).map_err(io)?;
    let mut row: Vec<String> = Vec::with_capacity(domain.len());
    for (r, &count) in counts.iter().enumerate() {
        row.clear();
        row.extend((0..domain.len()).map(|a| records.column(a)[r].to_string()));
        for _ in 0..count {
            out.write_record(&row).map_err(io)?;
        }
    }
    out.flush()
        .map_err(|e| BenchError::Usage(format!("cannot write the rows: {e}")))
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

    fn ab() -> Domain {
        Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap()
    }

    fn h(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_weight_column_rule() {
        let d = ab();
        assert_eq!(
            weighted_header(&h(&["a", "b", "weight"]), &d, None).as_deref(),
            Some("weight")
        );
        // any order; the named column instead of the automatic one
        assert_eq!(
            weighted_header(&h(&["weight", "b", "a"]), &d, None).as_deref(),
            Some("weight")
        );
        assert_eq!(
            weighted_header(&h(&["a", "w", "b"]), &d, Some("w")).as_deref(),
            Some("w")
        );
        // not weighted: plain data, another name, an extra or missing column, a repeat,
        // an attribute named as the weight column
        for (header, named) in [
            (h(&["a", "b"]), None),
            (h(&["a", "b", "w"]), None),
            (h(&["a", "b", "weight", "x"]), None),
            (h(&["a", "weight"]), None),
            (h(&["a", "a", "weight"]), None),
            (h(&["a", "b", "weight"]), Some("a")),
            (h(&["a", "b", "weight"]), Some("w")),
        ] {
            assert_eq!(weighted_header(&header, &d, named), None, "{header:?}");
        }
        let dw = Domain::new(vec![("weight".into(), 2), ("b".into(), 3)]).unwrap();
        assert_eq!(
            weighted_header(&h(&["weight", "b", "weight_1"]), &dw, None).as_deref(),
            Some("weight_1")
        );
        assert_eq!(weighted_header(&h(&["weight", "b", "x"]), &dw, None), None);
    }

    #[test]
    fn written_files_read_back() {
        let d = ab();
        let records = Dataset::from_columns(d.clone(), vec![vec![0, 1, 1], vec![2, 0, 1]]).unwrap();
        let s = SyntheticData {
            sampled_from_model: false,
            records: records.clone(),
            weights: vec![0.125, 0.5, 0.375],
        };
        let mut buf = Vec::new();
        write_synthetic(&mut buf, &s).unwrap();
        let back = parse_weighted(&buf, "s.csv", &d, None).unwrap();
        assert_eq!(back.records, records);
        assert_eq!(back.weights, s.weights);
        // columns in another order, a named weight column, a byte-order mark
        let text = "\u{feff}w,b,a\n3,2,0\n1,0,1\n";
        let back = parse_weighted(text.as_bytes(), "s.csv", &d, Some("w")).unwrap();
        assert_eq!(back.weights, vec![3.0, 1.0]);
        assert_eq!(back.records.column(0), &[0, 1]);
        assert_eq!(back.total_weight(), 4.0);
    }

    #[test]
    fn bad_weighted_files_name_line_and_column() {
        let d = ab();
        let cases: [(&str, &str); 10] = [
            ("a,b\n0,0\n", "not a weighted records file"),
            ("a,b,weight\n0,0,-1\n", "line 2"),
            ("a,b,weight\n0,0,1\n0,3,1\n", "line 3"),
            ("a,b,weight\n0,0,1\n0,+1,1\n", "column 'b'"),
            ("a,b,weight\n0,0,nan\n", "finite"),
            ("a,b,weight\n0,0,x\n", "not a number"),
            ("a,b,weight\n0,0\n", "expected 3 fields"),
            ("a,b,weight\n0,0,0\n", "every weight is zero"),
            ("a,b,weight\n", "no records"),
            ("", "empty file"),
        ];
        for (body, want) in cases {
            let e = parse_weighted(body.as_bytes(), "s.csv", &d, None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && e.starts_with("s.csv"), "{body:?}: {e}");
        }
        let e = parse_weighted(b"a,b\n0,0\n", "s.csv", &d, Some("a"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'a' is an attribute"), "{e}");
    }

    #[test]
    fn largest_remainder_by_hand() {
        // quotas 10·(0.25, 0.35, 0.4) = 2.5, 3.5, 4: floors 2, 3, 4 (9), one more to the
        // first of the tied remainders .5
        assert_eq!(
            expand_counts(&[0.25, 0.35, 0.4], 10).unwrap(),
            vec![3, 3, 4]
        );
        // quotas 7·(1/3, 1/3, 1/3) = 2.33…: floors 6, one to the first
        assert_eq!(expand_counts(&[1.0, 1.0, 1.0], 7).unwrap(), vec![3, 2, 2]);
        // quotas 5·(0.06, 0.14, 0.8) = 0.3, 0.7, 4: the .7 gets the missing row
        assert_eq!(expand_counts(&[0.06, 0.14, 0.8], 5).unwrap(), vec![0, 1, 4]);
        // a zero weight never gets a row, and the counts always sum to the total
        assert_eq!(expand_counts(&[0.0, 2.0], 3).unwrap(), vec![0, 3]);
        let w: Vec<f64> = (1..50).map(|i| f64::from(i).sqrt()).collect();
        for total in [1, 2, 49, 1000, 123_457] {
            let c = expand_counts(&w, total).unwrap();
            assert_eq!(c.iter().sum::<u64>(), total);
            let sum: f64 = w.iter().sum();
            for (ci, wi) in c.iter().zip(&w) {
                assert!((*ci as f64 - wi / sum * total as f64).abs() < 1.0);
            }
        }
        for (w, t) in [
            (vec![1.0], 0),
            (vec![1.0], MAX_EXPANDED_ROWS + 1),
            (vec![], 3),
        ] {
            assert!(expand_counts(&w, t).is_err());
        }
        assert!(expand_counts(&[0.0, 0.0], 3).is_err());
        assert!(expand_counts(&[1.0, f64::NAN], 3).is_err());
        let records = Dataset::from_columns(ab(), vec![vec![0, 1], vec![2, 0]]).unwrap();
        let mut buf = Vec::new();
        write_expanded(&mut buf, &records, &[2, 1]).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), "a,b\n0,2\n0,2\n1,0\n");
        assert!(write_expanded(Vec::new(), &records, &[1]).is_err());
    }
}
