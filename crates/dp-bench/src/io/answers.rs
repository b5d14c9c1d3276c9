//! The answers file: one CSV row per marginal cell, `marginal,cell,answer`
//! ([`write_query_answers`] for workloads of other query classes: `query,class,description,answer`).
//!
//! `marginal` is the table's attribute names joined by `|` (in workload order), `cell` the
//! cell's integer codes joined by `|` (in the same attribute order), `answer` the normalised
//! answer (exact: the shortest decimal that reads back as the same `f64`, in scientific
//! notation below 1e-4 and from 1e15, [`dp_core::Num`]). Rows come in workload order: tables in order, cells in row-major order with the
//! last attribute varying fastest (dp-queries' documented query order).
//!
//! Any attribute name round-trips: inside the `marginal` field a `|` or `\` that is part
//! of a name is written `\|` or `\\` ([`table_label`]), and the file is standard CSV
//! (RFC 4180, written and read with the `csv` crate): a field holding `,`, `"` or a line
//! break is quoted, with `"` doubled. Names without `|`, `\`, `,`, `"` or line breaks are
//! written as they are.

use crate::{BenchError, Result, quoted};
use dp_core::Num;
use dp_queries::{Domain, Marginal, MarginalWorkload, Workload};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// The `marginal` field of a table over the attributes `names`: the names joined by `|`,
/// with `\` and `|` inside a name escaped as `\\` and `\|`.
pub fn table_label<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut label = String::new();
    for (i, name) in names.into_iter().enumerate() {
        if i > 0 {
            label.push('|');
        }
        for ch in name.chars() {
            if ch == '|' || ch == '\\' {
                label.push('\\');
            }
            label.push(ch);
        }
    }
    label
}

/// The attribute names of a `marginal` field written by [`table_label`], or `None` if it
/// ends in an unfinished escape (a lone trailing `\`).
pub fn parse_table_label(label: &str) -> Option<Vec<String>> {
    let mut names = vec![String::new()];
    let mut chars = label.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => names.last_mut()?.push(chars.next()?),
            '|' => names.push(String::new()),
            c => names.last_mut()?.push(c),
        }
    }
    Some(names)
}

/// Write `answers` (workload order) for `workload` as CSV to `w`.
pub fn write_answers<W: Write>(w: W, workload: &MarginalWorkload, answers: &[f64]) -> Result<()> {
    if answers.len() != workload.num_queries() {
        return Err(BenchError::Mismatch(format!(
            "{} answers for a workload of {} queries",
            answers.len(),
            workload.num_queries()
        )));
    }
    let mut out = csv::Writer::from_writer(w);
    let io = |source: csv::Error| BenchError::WriteCsv {
        what: "the answers",
        source,
    };
    out.write_record(["marginal", "cell", "answer"])
        .map_err(io)?;
    let domain = workload.domain();
    for (j, marginal) in workload.marginals().iter().enumerate() {
        let label = table_label(marginal.attrs().iter().map(|&a| domain.name(a)));
        let base = workload.offset(j);
        for cell in 0..marginal.num_cells() {
            let codes: Vec<String> = marginal
                .cell_codes(cell)
                .iter()
                .map(|c| c.to_string())
                .collect();
            out.write_record([
                label.as_str(),
                codes.join("|").as_str(),
                Num(answers[base + cell]).to_string().as_str(),
            ])
            .map_err(io)?;
        }
    }
    out.flush().map_err(|e| BenchError::WriteCsv {
        what: "the answers",
        source: e.into(),
    })?;
    Ok(())
}

/// Write the answers of a workload that is not made of marginal tables (conjunctions,
/// disjunctions, parities, explicit matrices) as CSV: `query,class,description,answer`,
/// one row per query in workload order; `query` is the 0-based index, `description` the
/// workload's own ([`Workload::describe_query`], attribute names and codes).
pub fn write_query_answers<W: Write>(w: W, workload: &dyn Workload, answers: &[f64]) -> Result<()> {
    if answers.len() != workload.num_queries() {
        return Err(BenchError::Mismatch(format!(
            "{} answers for a workload of {} queries",
            answers.len(),
            workload.num_queries()
        )));
    }
    let mut out = csv::Writer::from_writer(w);
    let io = |source: csv::Error| BenchError::WriteCsv {
        what: "the answers",
        source,
    };
    out.write_record(["query", "class", "description", "answer"])
        .map_err(io)?;
    let class = workload.class().key();
    for (q, a) in answers.iter().enumerate() {
        out.write_record([
            q.to_string().as_str(),
            class,
            workload.describe_query(q).as_str(),
            Num(*a).to_string().as_str(),
        ])
        .map_err(io)?;
    }
    out.flush().map_err(|e| BenchError::WriteCsv {
        what: "the answers",
        source: e.into(),
    })?;
    Ok(())
}

/// Read an answers file written by [`write_query_answers`] for `workload`: the answers in
/// query order. The file must have one row per query of the workload, in order, of its class.
pub fn read_query_answers(path: &Path, workload: &dyn Workload) -> Result<Vec<f64>> {
    let bytes = crate::io::output::read_maybe_compressed(path)?;
    let file = path.display().to_string();
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let bad = |line: u64, why: String| BenchError::Usage(format!("{file}: line {line}: {why}"));
    let header = reader
        .headers()
        .map_err(|e| bad(1, format!("cannot read the header ({e})")))?
        .clone();
    if header.iter().collect::<Vec<_>>() != ["query", "class", "description", "answer"] {
        return Err(bad(
            1,
            "expected the header query,class,description,answer".into(),
        ));
    }
    let class = workload.class().key();
    let mut answers = Vec::with_capacity(workload.num_queries());
    for (i, row) in reader.records().enumerate() {
        let line = i as u64 + 2;
        let row = row.map_err(|e| bad(line, format!("not a CSV row ({e})")))?;
        if row.len() != 4 {
            return Err(bad(line, format!("expected 4 fields, found {}", row.len())));
        }
        if row[0] != *i.to_string() {
            return Err(bad(
                line,
                format!("expected query {i}, found {}", quoted(&row[0])),
            ));
        }
        if &row[1] != class {
            return Err(bad(
                line,
                format!(
                    "the workload is of class {class}, the file's row is {}",
                    quoted(&row[1])
                ),
            ));
        }
        let a: f64 = row[3]
            .parse()
            .ok()
            .filter(|a: &f64| a.is_finite())
            .ok_or_else(|| bad(line, format!("{} is not a finite number", quoted(&row[3]))))?;
        answers.push(a);
    }
    if answers.len() != workload.num_queries() {
        return Err(BenchError::Usage(format!(
            "{file}: {} answers, but the workload has {} queries",
            answers.len(),
            workload.num_queries()
        )));
    }
    Ok(answers)
}

/// Write answers to a file path, atomically ([`crate::io::output::write_atomically`]).
pub fn write_answers_file(path: &Path, workload: &MarginalWorkload, answers: &[f64]) -> Result<()> {
    crate::io::output::write_atomically(path, |w| write_answers(w, workload, answers))
}

/// Read an answers file written by [`write_answers`] against `domain`: returns the workload
/// it describes (tables in order of first appearance) and the answers in workload order.
/// Every cell of every table must appear exactly once; errors name the line.
pub fn read_answers(path: &Path, domain: &Domain) -> Result<(MarginalWorkload, Vec<f64>)> {
    let bytes = crate::io::output::read_maybe_compressed(path)?;
    parse_answers(&bytes, &path.display().to_string(), domain)
}

/// Parse the bytes of an answers file (see [`read_answers`]); `file` labels error messages.
/// Never panics, whatever the bytes.
pub fn parse_answers(
    bytes: &[u8],
    file: &str,
    domain: &Domain,
) -> Result<(MarginalWorkload, Vec<f64>)> {
    let file = file.to_string();
    let err = |line: u64, message: String| BenchError::AnswersFile {
        file: file.clone(),
        line,
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut records = reader.records();
    let csv_error = |e: csv::Error| {
        let line = e.position().map_or(1, |p| p.line());
        match e.kind() {
            csv::ErrorKind::Utf8 { .. } => err(line, "not valid UTF-8".into()),
            _ => err(line, format!("not a valid CSV record: {e}")),
        }
    };
    match records.next() {
        Some(Ok(h)) if h.iter().eq(["marginal", "cell", "answer"]) => {}
        Some(Ok(h)) => {
            let found: Vec<&str> = h.iter().collect();
            return Err(err(
                h.position().map_or(1, |p| p.line()),
                format!(
                    "header must be marginal,cell,answer, found {}",
                    quoted(&found.join(","))
                ),
            ));
        }
        Some(Err(e)) => return Err(csv_error(e)),
        None => return Err(err(1, "empty file".into())),
    }
    // an upper bound on the number of answer rows (a record takes at least one line)
    let rows = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut order: Vec<String> = Vec::new();
    let mut tables: HashMap<String, (Marginal, Vec<Option<f64>>)> = HashMap::new();
    for record in records {
        let record = record.map_err(csv_error)?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != 3 {
            return Err(err(
                line,
                format!("expected 3 fields, found {}", record.len()),
            ));
        }
        let (label, cell, answer) = (&record[0], &record[1], &record[2]);
        let value: f64 = answer
            .parse()
            .map_err(|_| err(line, format!("answer {} is not a number", quoted(answer))))?;
        if !value.is_finite() {
            return Err(err(line, format!("answer {value} is not finite")));
        }
        if !tables.contains_key(label) {
            let names = parse_table_label(label).ok_or_else(|| {
                err(
                    line,
                    format!(
                        "table {} ends in a lone '\\' (write '\\\\' for a backslash in a name)",
                        quoted(label)
                    ),
                )
            })?;
            let attrs = names
                .iter()
                .map(|name| domain.index_of(name))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| err(line, e.to_string()))?;
            let marginal = Marginal::new(domain, attrs).map_err(|e| err(line, e.to_string()))?;
            let cells = marginal.num_cells();
            // a table with more cells than the file has rows cannot be complete: refuse it
            // before allocating its slots (a one-line file must not allocate a huge table)
            if cells > rows && cells > 1 << 16 {
                return Err(err(
                    line,
                    format!(
                        "table {label} has {cells} cells but the file has only {rows} answer rows"
                    ),
                ));
            }
            order.push(label.to_string());
            tables.insert(label.to_string(), (marginal, vec![None; cells]));
        }
        let Some((marginal, slots)) = tables.get_mut(label) else {
            return Err(err(line, "internal: table vanished".into()));
        };
        let codes = cell
            .split('|')
            .map(|c| c.parse::<u32>())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| {
                err(
                    line,
                    format!("cell {} is not a list of integer codes", quoted(cell)),
                )
            })?;
        if codes.len() != marginal.attrs().len()
            || codes.iter().zip(marginal.sizes()).any(|(c, s)| c >= s)
        {
            return Err(err(
                line,
                format!("cell {} is not a cell of table {label}", quoted(cell)),
            ));
        }
        let idx = marginal.cell_index(&codes);
        if slots[idx].replace(value).is_some() {
            return Err(err(
                line,
                format!("cell {cell} of table {label} appears twice"),
            ));
        }
    }
    if order.is_empty() {
        return Err(err(1, "no answers".into()));
    }
    let mut marginals = Vec::with_capacity(order.len());
    let mut answers = Vec::new();
    for label in &order {
        let Some((marginal, slots)) = tables.remove(label) else {
            continue;
        };
        for (cell, slot) in slots.iter().enumerate() {
            match slot {
                Some(a) => answers.push(*a),
                None => {
                    let codes: Vec<String> = marginal
                        .cell_codes(cell)
                        .iter()
                        .map(|c| c.to_string())
                        .collect();
                    return Err(BenchError::AnswersFile {
                        file: file.clone(),
                        line: 0,
                        message: format!("table {label} is missing cell {}", codes.join("|")),
                    });
                }
            }
        }
        marginals.push(marginal);
    }
    let workload = MarginalWorkload::new(domain, marginals)?;
    Ok((workload, answers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain() -> Domain {
        Domain::new(vec![("a".into(), 2), ("b".into(), 3)]).unwrap()
    }

    #[test]
    fn round_trip() {
        let d = domain();
        let w = MarginalWorkload::all_kway(&d, 2).unwrap();
        let answers: Vec<f64> = (0..6).map(|i| i as f64 / 10.0).collect();
        let dir = std::env::temp_dir().join(format!("dpqr-answers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.csv");
        write_answers_file(&p, &w, &answers).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        // by hand: the first rows of the a|b table, last attribute fastest
        assert!(text.starts_with(
            "marginal,cell,answer\na|b,0|0,0\na|b,0|1,0.1\na|b,0|2,0.2\na|b,1|0,0.3\n"
        ));
        let (w2, a2) = read_answers(&p, &d).unwrap();
        assert_eq!(a2, answers);
        assert_eq!(w2.num_queries(), 6);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn awkward_names_round_trip() {
        let names = ["a,b", "c|d", "e\\|", "say \"hi\"", "x\ny", "|"];
        let d = Domain::new(names.iter().map(|n| (n.to_string(), 2)).collect()).unwrap();
        let w = MarginalWorkload::all_kway(&d, 2).unwrap();
        for m in w.marginals() {
            let label = table_label(m.attrs().iter().map(|&a| d.name(a)));
            let back = parse_table_label(&label).unwrap();
            let want: Vec<&str> = m.attrs().iter().map(|&a| d.name(a)).collect();
            assert_eq!(back, want, "{label}");
        }
        // by hand
        assert_eq!(table_label(["c|d", "e\\|"]), "c\\|d|e\\\\\\|");
        assert_eq!(parse_table_label("a\\"), None);
        let answers: Vec<f64> = (0..w.num_queries()).map(|i| i as f64 * 1e-200).collect();
        let mut buf = Vec::new();
        write_answers(&mut buf, &w, &answers).unwrap();
        let (w2, back) = parse_answers(&buf, "t", &d).unwrap();
        assert_eq!(w2, w);
        assert_eq!(back, answers);
        // a repeated attribute in a label is an error naming it
        let e = parse_answers(b"marginal,cell,answer\n\\||\\|,0|0,1\n", "t", &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("twice"), "{e}");
    }

    #[test]
    fn bad_files_name_the_line() {
        let d = domain();
        let dir = std::env::temp_dir().join(format!("dpqr-answers-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("marginal,cell,answer\na|b,0|0,x\n", "line 2"),
            ("marginal,cell,answer\na|zz,0|0,1\n", "line 2"),
            ("marginal,cell,answer\na,0,1\na,0,1\n", "line 3"),
            ("marginal,cell,answer\na,0,1\na,5,1\n", "line 3"),
            ("marginal,cell,answer\na,0,1\n", "missing cell 1"),
            ("m,c,a\n", "line 1"),
            ("", "empty"),
        ];
        for (i, (body, want)) in cases.iter().enumerate() {
            let p = dir.join(format!("{i}.csv"));
            std::fs::write(&p, body).unwrap();
            let e = read_answers(&p, &d).unwrap_err().to_string();
            assert!(e.contains(want), "case {i}: {e}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
