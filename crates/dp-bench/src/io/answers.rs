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
//!
//! # Labelled answers (issue #26)
//!
//! A release over a schema with labels or bins (or with `--answers-form labelled`) writes
//! two more columns after those three, which stay first so that machines and older
//! readers keep working: `marginal,cell,answer,label,count` ([`write_labelled_answers`]).
//!
//! * `label` names the cell through the schema: `name=value` per attribute of the table,
//!   joined by `|` in the order of `cell` — e.g. `class=3rd|age=[18,30)`. A label attribute
//!   gives its label, a bins attribute its interval (`[lo,hi)`, the closed last bin
//!   `[lo,hi]`, edges in their shortest exact decimal form, [`Num`]), the `missing` code
//!   `missing` (or `missing_1`, … when `missing` is a label:
//!   `dp_queries::AttributeSchema::missing_name`), the `other` bucket the
//!   value dpqr writes for it in synthetic files (`other`, or `other_1`, … when `other` is a
//!   label: `dp_queries::AttributeSchema::other_value`), an attribute of integer codes its
//!   code. Inside a name or a value, `\`, `|` and `=` are written `\\`, `\|` and `\=`,
//!   as [`table_label`] escapes `\` and `|`; `,` and `"` are left to CSV quoting, as in the
//!   `marginal` field. [`parse_cell_label`] reads it back exactly.
//! * `count` is the answer times the total the release's proportions are fractions of:
//!   under replace-one neighbours the public `n`; under add/remove, where `n` is private,
//!   the release's *own* estimate of the total from its noisy measurements
//!   (`dp_mechanisms::Diagnostics::estimated_total`), never the true `n`. The report says
//!   which ([`CountScale`]). Empty when the release gives no total (a mechanism that
//!   estimates none under add/remove).
//!
//! [`parse_answers`] reads both forms; in a labelled file, each `label` must name the
//! table's attributes in order (the codes of `cell` are what is read) and each `count`
//! must be empty or a finite number.

use crate::{BenchError, Result, quoted};
use dp_core::Num;
use dp_queries::{Domain, Encoding, Marginal, MarginalWorkload, Schema, Workload};
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

/// Push `text` onto `out` with `\`, `|` and `=` escaped by a backslash.
fn push_escaped(out: &mut String, text: &str) {
    for ch in text.chars() {
        if matches!(ch, '\\' | '|' | '=') {
            out.push('\\');
        }
        out.push(ch);
    }
}

/// The `label` field of a cell (module docs, "Labelled answers"): `name=value` per
/// attribute, joined by `|`, with `\`, `|` and `=` inside names and values escaped as
/// `\\`, `\|` and `\=`.
pub fn cell_label<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut label = String::new();
    for (i, (name, value)) in pairs.into_iter().enumerate() {
        if i > 0 {
            label.push('|');
        }
        push_escaped(&mut label, name);
        label.push('=');
        push_escaped(&mut label, value);
    }
    label
}

/// The `(name, value)` pairs of a `label` field written by [`cell_label`], or `None` if it
/// is not of that form: a lone trailing `\`, a part without an unescaped `=` or with two.
pub fn parse_cell_label(label: &str) -> Option<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    let (mut name, mut value) = (String::new(), None::<String>);
    let mut chars = label.chars();
    while let Some(ch) = chars.next() {
        let literal = match ch {
            '\\' => chars.next()?,
            '=' if value.is_none() => {
                value = Some(String::new());
                continue;
            }
            '=' => return None,
            '|' => {
                pairs.push((std::mem::take(&mut name), value.take()?));
                continue;
            }
            c => c,
        };
        value.as_mut().unwrap_or(&mut name).push(literal);
    }
    pairs.push((name, value?));
    Some(pairs)
}

/// The name of code `code` of attribute `a` of `schema` in a `label` field (module docs):
/// a label, a bin interval `[lo,hi)` (the last `[lo,hi]`), the `other` bucket's value, or
/// the code itself. `None` for a code the schema does not have.
pub fn code_name(schema: &Schema, a: usize, code: u32) -> Option<String> {
    let attribute = schema.attribute(a)?;
    if code >= schema.domain().sizes().get(a).copied()? {
        return None;
    }
    let i = code as usize;
    match attribute.encoding() {
        Encoding::Codes => Some(code.to_string()),
        Encoding::Labels(labels) if i < labels.len() => Some(labels[i].clone()),
        Encoding::Bins(edges) if i + 1 < edges.len() => {
            let close = if i + 2 == edges.len() { ']' } else { ')' };
            Some(format!("[{},{}{close}", Num(edges[i]), Num(edges[i + 1])))
        }
        // past the schema's own values: the missing code (first, when declared), then
        // the other bucket
        _ if attribute.has_missing() && attribute.empty_code() == Some(code) => {
            attribute.missing_name()
        }
        _ => attribute.other_value(),
    }
}

/// Which form of the answers file a release writes (`dpqr release --answers-form`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnswersForm {
    /// Labelled when the release's schema has a label or bins attribute, plain otherwise.
    #[default]
    Auto,
    /// `marginal,cell,answer` only.
    Codes,
    /// `marginal,cell,answer,label,count`, also over a domain of integer codes.
    Labelled,
}

impl AnswersForm {
    /// Whether a marginal release over `schema` is written labelled.
    pub fn labelled(self, schema: &Schema) -> bool {
        match self {
            AnswersForm::Auto => !schema.is_codes_only(),
            AnswersForm::Codes => false,
            AnswersForm::Labelled => true,
        }
    }
}

/// The schema as the release report states it (issue #26): one object per attribute, in
/// domain order, with its `name`, its `size` (number of codes) and its `encoding` —
/// `"codes"`, `"labels"` (with `labels`, label `i` is code `i`) or `"bins"` (with `bins`,
/// the edges: half-open bins, the last closed) — and, for an attribute with a `missing`
/// code, `missing`: its name in labels (its code follows the declared values; synthetic
/// files write it as an empty field), and for an attribute with an `other` bucket, `other`:
/// the value that names it in labels and synthetic files (its code is the last,
/// `size − 1`).
pub fn schema_json(schema: &Schema) -> serde_json::Value {
    let domain = schema.domain();
    let attributes: Vec<serde_json::Value> = domain
        .names()
        .zip(domain.sizes())
        .enumerate()
        .map(|(a, (name, &size))| {
            let mut o = serde_json::json!({ "name": name, "size": size });
            let attribute = schema.attribute(a);
            match attribute.map(|s| s.encoding()) {
                Some(Encoding::Labels(labels)) => {
                    o["encoding"] = "labels".into();
                    o["labels"] = labels.clone().into();
                }
                Some(Encoding::Bins(edges)) => {
                    o["encoding"] = "bins".into();
                    o["bins"] = edges.clone().into();
                }
                _ => o["encoding"] = "codes".into(),
            }
            if let Some(missing) = attribute.and_then(|s| s.missing_name()) {
                o["missing"] = missing.into();
            }
            if let Some(other) = attribute.and_then(|s| s.other_value()) {
                o["other"] = other.into();
            }
            o
        })
        .collect();
    serde_json::Value::Array(attributes)
}

/// What the `count` column of a labelled answers file is scaled by: the total the release's
/// proportions are fractions of (module docs, "Labelled answers").
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CountScale {
    /// The total; `None` when the release gives none (the `count` column is then empty).
    pub total: Option<f64>,
    /// Which total it is, in words, for the report and the summary.
    pub source: String,
}

/// What the labelled form of an answers file needs beside the answers.
#[derive(Clone, Copy, Debug)]
pub struct Labelling<'a> {
    /// The schema the cells are named through (the release's public schema; its attributes
    /// are matched to the workload's by name).
    pub schema: &'a Schema,
    /// What the proportions are multiplied by in the `count` column.
    pub scale: &'a CountScale,
}

/// Write `answers` (workload order) for `workload` as CSV to `w`.
pub fn write_answers<W: Write>(w: W, workload: &MarginalWorkload, answers: &[f64]) -> Result<()> {
    write_marginal_answers(w, workload, answers, None)
}

/// Write `answers` (workload order) for `workload` as CSV to `w` in the labelled form
/// `marginal,cell,answer,label,count` (module docs, "Labelled answers").
pub fn write_labelled_answers<W: Write>(
    w: W,
    workload: &MarginalWorkload,
    answers: &[f64],
    labelling: Labelling<'_>,
) -> Result<()> {
    write_marginal_answers(w, workload, answers, Some(labelling))
}

/// The answers CSV, in the plain form or (with `labelling`) the labelled one.
fn write_marginal_answers<W: Write>(
    w: W,
    workload: &MarginalWorkload,
    answers: &[f64],
    labelling: Option<Labelling<'_>>,
) -> Result<()> {
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
    let domain = workload.domain();
    // each workload attribute's index in the schema, matched by name
    let schema_index = |a: usize| -> Result<usize> {
        let schema = labelling.map(|l| l.schema).ok_or_else(|| {
            BenchError::Mismatch("internal: no schema to label the answers".into())
        })?;
        let name = domain.name(a);
        let j = schema.domain().index_of(name).map_err(|_| {
            BenchError::Mismatch(format!(
                "the workload's attribute {} is not in the schema the answers are labelled \
                 through",
                quoted(name)
            ))
        })?;
        if schema.domain().size(j) != domain.size(a) {
            return Err(BenchError::Mismatch(format!(
                "the workload's attribute {} has {} codes but {} in the schema the answers \
                 are labelled through",
                quoted(name),
                domain.size(a),
                schema.domain().size(j)
            )));
        }
        Ok(j)
    };
    match labelling {
        None => out.write_record(["marginal", "cell", "answer"]),
        Some(_) => out.write_record(["marginal", "cell", "answer", "label", "count"]),
    }
    .map_err(io)?;
    for (j, marginal) in workload.marginals().iter().enumerate() {
        let label = table_label(marginal.attrs().iter().map(|&a| domain.name(a)));
        let columns = match labelling {
            Some(_) => marginal
                .attrs()
                .iter()
                .map(|&a| schema_index(a))
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        let base = workload.offset(j);
        for cell in 0..marginal.num_cells() {
            let cell_codes = marginal.cell_codes(cell);
            let codes: Vec<String> = cell_codes.iter().map(|c| c.to_string()).collect();
            let answer = answers[base + cell];
            let mut row = vec![label.clone(), codes.join("|"), Num(answer).to_string()];
            if let Some(l) = labelling {
                let mut names = Vec::with_capacity(columns.len());
                for (&a, (&s, &code)) in
                    marginal.attrs().iter().zip(columns.iter().zip(&cell_codes))
                {
                    let value = code_name(l.schema, s, code).ok_or_else(|| {
                        BenchError::Mismatch(format!(
                            "code {code} of attribute {} has no value in the schema",
                            quoted(domain.name(a))
                        ))
                    })?;
                    names.push((domain.name(a), value));
                }
                row.push(cell_label(names.iter().map(|(n, v)| (*n, v.as_str()))));
                row.push(match l.scale.total {
                    Some(total) => Num(total * answer).to_string(),
                    None => String::new(),
                });
            }
            out.write_record(&row).map_err(io)?;
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
    let bad = |line: u64, message: String| BenchError::AnswersFile {
        file: file.clone(),
        line,
        message,
    };
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
        return Err(BenchError::InputFile {
            file,
            line: None,
            message: format!(
                "{} answers, but the workload has {} queries",
                answers.len(),
                workload.num_queries()
            ),
        });
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
    // the plain form, or the labelled one with `label` and `count` after the three
    let fields = match records.next() {
        Some(Ok(h)) if h.iter().eq(["marginal", "cell", "answer"]) => 3,
        Some(Ok(h))
            if h.iter()
                .eq(["marginal", "cell", "answer", "label", "count"]) =>
        {
            5
        }
        Some(Ok(h)) => {
            let found: Vec<&str> = h.iter().collect();
            return Err(err(
                h.position().map_or(1, |p| p.line()),
                format!(
                    "header must be marginal,cell,answer or marginal,cell,answer,label,count, \
                     found {}",
                    quoted(&found.join(","))
                ),
            ));
        }
        Some(Err(e)) => return Err(csv_error(e)),
        None => return Err(err(1, "empty file".into())),
    };
    // an upper bound on the number of answer rows (a record takes at least one line)
    let rows = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut order: Vec<String> = Vec::new();
    let mut tables: HashMap<String, (Marginal, Vec<Option<f64>>)> = HashMap::new();
    for record in records {
        let record = record.map_err(csv_error)?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != fields {
            return Err(err(
                line,
                format!("expected {fields} fields, found {}", record.len()),
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
        if fields == 5 {
            check_labelled(marginal, domain, &record[3], &record[4], cell)
                .map_err(|why| err(line, why))?;
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

/// Check the `label` and `count` fields of a labelled row of table `marginal` (cell
/// `cell`): the label names the table's attributes in order, the count is empty or a finite
/// number. The values in the label are not checked against a schema: the codes are read.
fn check_labelled(
    marginal: &Marginal,
    domain: &Domain,
    label: &str,
    count: &str,
    cell: &str,
) -> std::result::Result<(), String> {
    let pairs = parse_cell_label(label).ok_or_else(|| {
        format!(
            "label {} is not of the form name=value|name=value (with \\\\, \\| and \\= \
             escaped)",
            quoted(label)
        )
    })?;
    let names: Vec<&str> = marginal.attrs().iter().map(|&a| domain.name(a)).collect();
    if !pairs
        .iter()
        .map(|(n, _)| n.as_str())
        .eq(names.iter().copied())
    {
        return Err(format!(
            "label {} of cell {cell} does not name the table's attributes {} in order",
            quoted(label),
            quoted(&table_label(names.iter().copied()))
        ));
    }
    if !count.is_empty() && !count.parse::<f64>().is_ok_and(f64::is_finite) {
        return Err(format!(
            "count {} is neither empty nor a finite number",
            quoted(count)
        ));
    }
    Ok(())
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

    const PEOPLE: &str = r#"{
        "sex": {"labels": ["female", "male"]},
        "age": {"bins": [-10, 18, 30, 65, 1e300]},
        "re|g=ion": {"labels": ["n=1", "other", "a,b|c\\"], "other": true},
        "flag": 2
    }"#;

    #[test]
    fn the_missing_code_is_named_missing_and_stated_in_the_report_schema() {
        let schema = Schema::from_json_str(
            r#"{"c": {"labels": ["x", "missing"], "missing": true, "other": true},
                "b": {"bins": [0, 1], "missing": true}}"#,
            "m.json",
        )
        .unwrap();
        let names: Vec<Option<String>> = (0..5).map(|c| code_name(&schema, 0, c)).collect();
        let want = [
            Some("x"),
            Some("missing"),
            Some("missing_1"),
            Some("other"),
            None,
        ];
        assert_eq!(names, want.map(|n| n.map(str::to_string)));
        assert_eq!(code_name(&schema, 1, 1).as_deref(), Some("missing"));
        assert_eq!(code_name(&schema, 1, 2), None);
        let json = schema_json(&schema);
        assert_eq!(json[0]["missing"], "missing_1");
        assert_eq!(json[0]["other"], "other");
        assert_eq!(json[1]["missing"], "missing");
        assert!(json[1].get("other").is_none());
    }

    #[test]
    fn labelled_answers_by_hand_and_read_back() {
        let schema = Schema::from_json_str(PEOPLE, "people.json").unwrap();
        let d = schema.domain().clone();
        // by hand: labels, bins (the last closed), the other bucket, codes
        assert_eq!(code_name(&schema, 0, 1).unwrap(), "male");
        assert_eq!(code_name(&schema, 1, 0).unwrap(), "[-10,18)");
        assert_eq!(code_name(&schema, 1, 3).unwrap(), "[65,1e300]");
        assert_eq!(code_name(&schema, 2, 3).unwrap(), "other_1");
        assert_eq!(code_name(&schema, 3, 1).unwrap(), "1");
        assert_eq!(code_name(&schema, 3, 2), None);
        let w = MarginalWorkload::new(
            &d,
            vec![
                Marginal::new(&d, vec![0, 1]).unwrap(),
                Marginal::new(&d, vec![2, 3]).unwrap(),
            ],
        )
        .unwrap();
        let answers: Vec<f64> = (0..w.num_queries()).map(|i| i as f64 / 64.0).collect();
        let scale = CountScale {
            total: Some(1000.0),
            source: "test".into(),
        };
        let labelling = Labelling {
            schema: &schema,
            scale: &scale,
        };
        let mut buf = Vec::new();
        write_labelled_answers(&mut buf, &w, &answers, labelling).unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(
            text.starts_with(
                "marginal,cell,answer,label,count\n\
                 sex|age,0|0,0,\"sex=female|age=[-10,18)\",0\n\
                 sex|age,0|1,0.015625,\"sex=female|age=[18,30)\",15.625\n"
            ),
            "{text}"
        );
        let mut rows = csv::ReaderBuilder::new().from_reader(buf.as_slice());
        let rows: Vec<csv::StringRecord> = rows.records().map(|r| r.unwrap()).collect();
        assert_eq!(&rows[1][3], "sex=female|age=[18,30)");
        assert_eq!(&rows[1][4], "15.625");
        assert_eq!(&rows[7][3], "sex=male|age=[65,1e300]");
        // escaped names and values: `|`, `=`, `\` with a backslash, `,` by CSV quoting
        let last = &rows[rows.len() - 1];
        assert_eq!(&last[0], "re\\|g=ion|flag");
        assert_eq!(&last[3], "re\\|g\\=ion=other_1|flag=1");
        assert_eq!(&rows[8][3], "re\\|g\\=ion=n\\=1|flag=0");
        assert_eq!(&rows[12][3], "re\\|g\\=ion=a,b\\|c\\\\|flag=0");
        for r in &rows {
            let pairs = parse_cell_label(&r[3]).unwrap();
            let back = cell_label(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            assert_eq!(back, &r[3]);
            let count: f64 = r[4].parse().unwrap();
            assert_eq!(count, r[2].parse::<f64>().unwrap() * 1000.0);
        }
        assert_eq!(
            parse_cell_label("re\\|g\\=ion=a,b\\|c\\\\|flag=0").unwrap(),
            vec![
                ("re|g=ion".to_string(), "a,b|c\\".to_string()),
                ("flag".to_string(), "0".to_string())
            ]
        );
        // the labelled file reads back as the same workload and answers as the plain one
        let (w2, back) = parse_answers(&buf, "l.csv", &d).unwrap();
        assert_eq!(w2, w);
        assert_eq!(back, answers);
        let mut plain = Vec::new();
        write_answers(&mut plain, &w, &answers).unwrap();
        assert_eq!(parse_answers(&plain, "p.csv", &d).unwrap(), (w2, back));
        // no total: an empty count column, still read
        let none = CountScale {
            total: None,
            source: "none".into(),
        };
        let mut buf = Vec::new();
        let labelling = Labelling {
            schema: &schema,
            scale: &none,
        };
        write_labelled_answers(&mut buf, &w, &answers, labelling).unwrap();
        assert!(
            String::from_utf8(buf.clone())
                .unwrap()
                .contains("sex=female|age=[18,30)\",\n")
        );
        assert_eq!(parse_answers(&buf, "n.csv", &d).unwrap().1, answers);
        // a schema that does not fit the workload is an error, not a panic
        let small = Schema::from_json_str(r#"{"sex": 3}"#, "s.json").unwrap();
        let labelling = Labelling {
            schema: &small,
            scale: &none,
        };
        assert!(write_labelled_answers(Vec::new(), &w, &answers, labelling).is_err());
    }

    #[test]
    fn malformed_labels_and_counts_name_the_line() {
        let d = domain();
        for (body, want) in [
            (
                "marginal,cell,answer,label,count\na,0,0.5,a=0,1\na,1,0.5,b=1,1\n",
                "line 3",
            ),
            (
                "marginal,cell,answer,label,count\na,0,0.5,a0,1\na,1,0.5,a=1,1\n",
                "line 2",
            ),
            (
                "marginal,cell,answer,label,count\na,0,0.5,a=0=1,1\n",
                "not of the form",
            ),
            (
                "marginal,cell,answer,label,count\na,0,0.5,a=0\\,1\n",
                "not of the form",
            ),
            (
                "marginal,cell,answer,label,count\na,0,0.5,a=0,x\n",
                "count 'x'",
            ),
            (
                "marginal,cell,answer,label,count\na,0,0.5,a=0,inf\n",
                "finite",
            ),
            (
                "marginal,cell,answer,label,count\na,0,0.5\n",
                "expected 5 fields",
            ),
            (
                "marginal,cell,answer,label\na,0,0.5,a=0\n",
                "header must be",
            ),
        ] {
            let e = parse_answers(body.as_bytes(), "t.csv", &d)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{body:?}: {e}");
        }
        // labels and counts that fit are read; the codes decide the cell
        let ok = "marginal,cell,answer,label,count\na,0,0.25,a=x,\na,1,0.75,a=y,7.5\n";
        assert_eq!(
            parse_answers(ok.as_bytes(), "t.csv", &d).unwrap().1,
            vec![0.25, 0.75]
        );
        assert_eq!(parse_cell_label("a=1|"), None);
        assert_eq!(parse_cell_label(""), None);
        assert_eq!(
            parse_cell_label("=").unwrap(),
            vec![(String::new(), String::new())]
        );
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
