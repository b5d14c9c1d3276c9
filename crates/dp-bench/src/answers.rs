//! The answers file: one CSV row per marginal cell, `marginal,cell,answer`.
//!
//! `marginal` is the table's attribute names joined by `|` (in workload order), `cell` the
//! cell's integer codes joined by `|` (in the same attribute order), `answer` the normalised
//! answer. Rows come in workload order: tables in order, cells in row-major order with the
//! last attribute varying fastest (dp-queries' documented query order).

use crate::{BenchError, Result, io_error};
use dp_queries::{Domain, Marginal, MarginalWorkload};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// Write `answers` (workload order) for `workload` as CSV to `w`.
pub fn write_answers<W: Write>(w: W, workload: &MarginalWorkload, answers: &[f64]) -> Result<()> {
    if answers.len() != workload.num_queries() {
        return Err(BenchError::Usage(format!(
            "{} answers for a workload of {} queries",
            answers.len(),
            workload.num_queries()
        )));
    }
    let mut out = std::io::BufWriter::new(w);
    let io = |e: std::io::Error| BenchError::Io {
        path: "answers output".into(),
        source: e,
    };
    writeln!(out, "marginal,cell,answer").map_err(io)?;
    let domain = workload.domain();
    for (j, marginal) in workload.marginals().iter().enumerate() {
        let label = marginal.label(domain);
        let base = workload.offset(j);
        for cell in 0..marginal.num_cells() {
            let codes: Vec<String> = marginal
                .cell_codes(cell)
                .iter()
                .map(|c| c.to_string())
                .collect();
            writeln!(out, "{label},{},{}", codes.join("|"), answers[base + cell]).map_err(io)?;
        }
    }
    out.flush().map_err(io)?;
    Ok(())
}

/// Write answers to a file path.
pub fn write_answers_file(path: &Path, workload: &MarginalWorkload, answers: &[f64]) -> Result<()> {
    let f = std::fs::File::create(path).map_err(io_error(path))?;
    write_answers(f, workload, answers)
}

/// Read an answers file written by [`write_answers`] against `domain`: returns the workload
/// it describes (tables in order of first appearance) and the answers in workload order.
/// Every cell of every table must appear exactly once; errors name the line.
pub fn read_answers(path: &Path, domain: &Domain) -> Result<(MarginalWorkload, Vec<f64>)> {
    let bytes = std::fs::read(path).map_err(io_error(path))?;
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
    let text = std::str::from_utf8(bytes).map_err(|e| BenchError::AnswersFile {
        file: file.clone(),
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64,
        message: "not valid UTF-8".into(),
    })?;
    let err = |line: u64, message: String| BenchError::AnswersFile {
        file: file.clone(),
        line,
        message,
    };
    let mut lines = text.lines();
    match lines.next() {
        Some(h) if h.trim_end() == "marginal,cell,answer" => {}
        Some(h) => {
            return Err(err(
                1,
                format!("header must be marginal,cell,answer, found {h:?}"),
            ));
        }
        None => return Err(err(1, "empty file".into())),
    }
    let rows = text.lines().count().saturating_sub(1);
    let mut order: Vec<String> = Vec::new();
    let mut tables: HashMap<String, (Marginal, Vec<Option<f64>>)> = HashMap::new();
    for (i, raw) in lines.enumerate() {
        let line = i as u64 + 2;
        let raw = raw.trim_end_matches('\r');
        if raw.is_empty() {
            continue;
        }
        let fields: Vec<&str> = raw.split(',').collect();
        if fields.len() != 3 {
            return Err(err(
                line,
                format!("expected 3 fields, found {}", fields.len()),
            ));
        }
        let (label, cell, answer) = (fields[0], fields[1], fields[2]);
        let answer: f64 = answer
            .parse()
            .map_err(|_| err(line, format!("answer {answer:?} is not a number")))?;
        if !answer.is_finite() {
            return Err(err(line, format!("answer {answer} is not finite")));
        }
        if !tables.contains_key(label) {
            let attrs = label
                .split('|')
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
                    format!("cell {cell:?} is not a list of integer codes"),
                )
            })?;
        if codes.len() != marginal.attrs().len()
            || codes.iter().zip(marginal.sizes()).any(|(c, s)| c >= s)
        {
            return Err(err(
                line,
                format!("cell {cell:?} is not a cell of table {label}"),
            ));
        }
        let idx = marginal.cell_index(&codes);
        if slots[idx].replace(answer).is_some() {
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
