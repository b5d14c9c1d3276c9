//! The synthetic-data file: the records a mechanism released, one per row, with their
//! weight.
//!
//! Header: the domain's attribute names in domain order, then the weight column — always
//! the last column, called `weight` unless an attribute already has that name, in which
//! case it is the first of `weight_1`, `weight_2`, … that is not an attribute name
//! ([`weight_column`]; `dpqr release` says so when it happens). Each row holds a record and
//! its non-negative weight; the weights sum to one. Workload answers computed from this
//! weighted dataset equal the release's answers (for the mechanisms whose output *is* the
//! synthetic data). The file is standard CSV (written with the `csv` crate): a field holding
//! `,`, `"` or a line break is quoted, with `"` doubled.
//!
//! # Values in the input's own form
//!
//! Every file written here ([`write_synthetic`], [`write_expanded`]) holds each record in
//! the form of the data it came from, through the schema of the release: a label attribute
//! holds its label, a `missing` code an empty field, an `other` code the value `other` (or
//! `other_1`, … when `other` is a label), an attribute given by its size alone its integer code, and a bins attribute a
//! number inside the bin, chosen as the caller says ([`BinValues`]):
//!
//! * **drawn uniformly within the bin** ([`BinValues::Uniform`]; what `dpqr release` and
//!   `dpqr synthetic expand` write, issue #26): `lo + u·(hi − lo)` for `u` uniform on the
//!   2⁵³ multiples of 2⁻⁵³ in `[0, 1)`, rounded to the nearest double — uniform on the bin
//!   up to that rounding — from the release's own generator (the operating system's
//!   entropy, or `--seed` for tests), a fresh draw for every written record or row. A draw
//!   that would not read back as the same bin (rounding onto the upper edge of a half-open
//!   bin) is redrawn, at most 64 times, then the lower edge is written. Choosing the value
//!   is post-processing of the released records: it reads no data and costs no budget;
//! * **the lower edge of the bin** ([`BinValues::LowerEdge`], [`dp_queries::Schema::decode`];
//!   what dpqr wrote before, and what a caller that wants no randomness asks for).
//!
//! Either way the number is written in its shortest round-trip form with a decimal point or
//! an exponent (`18.0`, `23.517…`, `1e300`): it parses back to exactly the number drawn, it
//! is in the bin (the closed last one included), and it is never a bare integer.
//!
//! Every bin is bounded: the schema refuses edges that are not finite. A bin closed by a
//! sentinel edge (`[65, 1e300]`) gets values drawn across all of it, up to about `1e300`:
//! give such a column a real upper edge and an `other` bucket for the values beyond it. The
//! `other` bucket of a bins attribute — values outside the edges, non-numbers, empty fields:
//! the one unbounded "bin" — is written as the value `other` (or `other_1`, …), never as a
//! number. Read back through the same schema, every field gives exactly the code it was
//! written for.
//!
//! # Reading it back
//!
//! [`read_weighted`] reads such a file through the schema it was released over (weights
//! finite and non-negative, not all zero; errors name the file, the line and the column).
//! Which column holds the weights is decided by one rule ([`weighted_header`]): a column
//! named by the caller (`--weights-column NAME`), or else — automatically — the header holds
//! every attribute of the domain exactly once (any order) plus exactly one more column,
//! named as [`weight_column`] names it for that domain. Any other header is not a weighted
//! file. The weights need not sum to one: answers are weighted counts divided by the total
//! weight ([`crate::scoring::weighted_answers`]).
//!
//! The label and bins columns of a file are read in one of two forms, decided for the whole
//! file ([`FileForm`]):
//!
//! * **codes** — what dpqr wrote before it wrote values — when some field of a label or bins
//!   column is a bare integer (ASCII digits only) that is not a label of its attribute:
//!   dpqr never writes such a field as a value (a bin value always has a decimal point or an
//!   exponent). Every field of those columns must then be an integer code below its
//!   attribute's size, and the codes are taken as they are;
//! * **values** otherwise: each field goes through the schema, as the loader reads raw data.
//!   A label made of digits is read as that label (`"2"` in a column with labels
//!   `["2", "0", "1"]` is code 0).
//!
//! So an older file of codes is read exactly, except in one case no rule can tell apart: a
//! file whose label and bins columns are all digit-label columns and whose every field is
//! one of those labels is read as labels. Its codes are the same either way when each
//! digit label is its own position (`["0", "1", "2"]`).
//!
//! Attributes given by a size alone always hold integer codes (ASCII digits, below the
//! size).
//!
//! # Expanding to integer rows
//!
//! [`expand_counts`] turns the weights into integer row counts summing to a chosen total `N`
//! by largest-remainder rounding (Hamilton's method): record `i` gets `⌊N·wᵢ/W⌋` rows (`W`
//! the total weight), and the rows still missing go, one each, to the records with the
//! largest remainders `N·wᵢ/W − ⌊N·wᵢ/W⌋` (ties to the earlier record). Every count is then
//! within one of `N·wᵢ/W`, and the counts sum to exactly `N`. [`write_expanded`] writes the
//! result as a plain CSV (one row per unit of count, no weight column, values in the input's
//! form as above, a bin value drawn afresh for every row) that every `dpqr` command reads as
//! ordinary data through the same schema. `dpqr release --rows N` writes such rows instead
//! of the weighted records, and `dpqr synthetic expand` turns a weighted file into them.

use crate::{BenchError, Result, quoted};
use dp_core::Num;
use dp_mechanisms::SyntheticData;
use dp_queries::{Dataset, Domain, Encoding, Schema};
use rand::CryptoRng;
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

/// For each attribute of `domain` (the records'), its index in `schema`, matched by name;
/// the sizes must agree.
fn schema_columns(domain: &Domain, schema: &Schema) -> Result<Vec<usize>> {
    let mut columns = Vec::with_capacity(domain.len());
    for (name, &size) in domain.names().zip(domain.sizes()) {
        let j = schema.domain().index_of(name).map_err(|_| {
            BenchError::Mismatch(format!(
                "the records' attribute {} is not in the schema they are written through",
                quoted(name)
            ))
        })?;
        let expected = schema.domain().size(j);
        if expected != size {
            return Err(BenchError::Mismatch(format!(
                "the records' attribute {} has {size} codes but {expected} in the schema \
                 they are written through",
                quoted(name)
            )));
        }
        columns.push(j);
    }
    Ok(columns)
}

/// How the value of a bins attribute is chosen inside its bin (module docs, "Values in the
/// input's own form").
pub enum BinValues<'r> {
    /// The lower edge of the bin ([`Schema::decode`]): no randomness.
    LowerEdge,
    /// A number drawn uniformly within the bin from this generator (the release's own), a
    /// fresh draw per written record or row.
    Uniform(&'r mut dyn CryptoRng),
}

/// Most draws of a value within a bin before the lower edge is written instead.
const MAX_BIN_DRAWS: usize = 64;

/// A number uniform in `[0, 1)`: one of the 2⁵³ multiples of 2⁻⁵³, each equally likely.
fn unit_uniform(rng: &mut dyn CryptoRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A number drawn uniformly in `[lo, hi]` (finite, `lo < hi`), rounded to the nearest
/// double; computed without overflow when `hi − lo` is beyond the largest double.
fn uniform_between(lo: f64, hi: f64, rng: &mut dyn CryptoRng) -> f64 {
    let u = unit_uniform(rng);
    let width = hi - lo;
    let v = if width.is_finite() {
        lo + u * width
    } else {
        lo * (1.0 - u) + hi * u
    };
    v.clamp(lo, hi)
}

impl BinValues<'_> {
    /// The raw field for code `code` of attribute `j` of `schema`; `None` when the code is
    /// not below the attribute's size.
    pub fn field(&mut self, schema: &Schema, j: usize, code: u32) -> Option<String> {
        let lower = schema.decode(j, code)?;
        let BinValues::Uniform(rng) = self else {
            return Some(lower);
        };
        let Some(Encoding::Bins(edges)) = schema.attribute(j).map(|s| s.encoding()) else {
            return Some(lower);
        };
        let i = code as usize;
        if i + 1 >= edges.len() {
            return Some(lower); // the other bucket
        }
        for _ in 0..MAX_BIN_DRAWS {
            let v = uniform_between(edges[i], edges[i + 1], &mut **rng);
            // the shortest round-trip form, with a decimal point or an exponent
            let text = format!("{v:?}");
            if schema.encode(j, &text) == Ok(Some(code)) {
                return Some(text);
            }
        }
        Some(lower)
    }
}

/// Record `r` of `records` as raw fields through `schema` (`columns` from
/// [`schema_columns`]), into `row`, bin values chosen by `values`.
fn decode_row(
    records: &Dataset,
    r: usize,
    schema: &Schema,
    columns: &[usize],
    values: &mut BinValues<'_>,
    row: &mut Vec<String>,
) -> Result<()> {
    row.clear();
    for (a, &j) in columns.iter().enumerate() {
        let code = records.column(a)[r];
        let field = values.field(schema, j, code).ok_or_else(|| {
            BenchError::Mismatch(format!(
                "record {r}: code {code} of attribute {} has no value in the schema",
                quoted(records.domain().names().nth(a).unwrap_or_default())
            ))
        })?;
        row.push(field);
    }
    Ok(())
}

/// Write `synthetic` as CSV to `w`, each record in the form of the data it came from
/// through `schema`, bin values chosen by `values` (module docs; [`Schema::codes`] for
/// integer codes throughout). The records' attributes are matched to the schema's by name,
/// so records over some of its attributes (a release over the attributes its workload
/// touches) are written too.
pub fn write_synthetic<W: Write>(
    w: W,
    synthetic: &SyntheticData,
    schema: &Schema,
    values: &mut BinValues<'_>,
) -> Result<()> {
    let records = &synthetic.records;
    if records.n() != synthetic.weights.len() {
        return Err(BenchError::Mismatch(format!(
            "{} synthetic records but {} weights",
            records.n(),
            synthetic.weights.len()
        )));
    }
    let io = |source: csv::Error| BenchError::WriteCsv {
        what: "the synthetic data",
        source,
    };
    let domain = records.domain();
    let columns = schema_columns(domain, schema)?;
    let mut out = csv::Writer::from_writer(w);
    let weight = weight_column(domain);
    out.write_record(domain.names().chain(std::iter::once(weight.as_str())))
        .map_err(io)?;
    let mut row: Vec<String> = Vec::with_capacity(domain.len() + 1);
    for (r, weight) in synthetic.weights.iter().enumerate() {
        decode_row(records, r, schema, &columns, values, &mut row)?;
        row.push(Num(*weight).to_string());
        out.write_record(&row).map_err(io)?;
    }
    out.flush().map_err(|e| BenchError::WriteCsv {
        what: "the synthetic data",
        source: e.into(),
    })
}

/// Write `synthetic` through `schema` to a file, atomically
/// ([`crate::io::output::write_atomically`]), bin values chosen by `values`.
pub fn write_synthetic_file(
    path: &Path,
    synthetic: &SyntheticData,
    schema: &Schema,
    values: &mut BinValues<'_>,
) -> Result<()> {
    crate::io::output::write_atomically(path, |w| write_synthetic(w, synthetic, schema, values))
}

/// How the label and bins columns of a weighted file were read (module docs, "Reading it
/// back").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileForm {
    /// Values through the schema: what dpqr writes (and the only form of a file whose
    /// schema has no label or bins attribute).
    Values,
    /// Integer codes, as dpqr wrote synthetic files before it wrote values.
    Codes {
        /// The line of the first field that showed it.
        line: u64,
        /// Its column.
        column: String,
        /// The field: a bare integer that is no value of the schema.
        field: String,
    },
}

/// A synthetic records file read to be scored (`dpqr eval --synthetic`): weighted records
/// through `schema` when it has a weight column (`weights_column`, or the one `dpqr release`
/// writes), otherwise plain rows (`--rows N`, `dpqr synthetic expand`), each of weight 1
/// (the columns `schema` does not name skipped when `ignore_extra_columns`). Returns the
/// records and what to tell the user of how the file was read, if anything.
pub fn read_for_scoring(
    path: &Path,
    schema: &Schema,
    weights_column: Option<&str>,
    ignore_extra_columns: bool,
) -> Result<(WeightedRecords, Option<String>)> {
    let weight = sniff_weighted(path, schema.domain(), weights_column)?;
    if weight.is_none() && weights_column.is_none() {
        let options =
            dp_queries::ReadOptions::default().ignoring_extra_columns(ignore_extra_columns);
        let records = Dataset::load_file_with(path, schema, &options, false)?;
        let note = format!(
            "{}: no weight column: read as {} plain rows, each of weight 1",
            path.display(),
            records.n()
        );
        let weights = vec![1.0; records.n()];
        let plain = WeightedRecords {
            records,
            weights,
            form: FileForm::Values,
        };
        return Ok((plain, Some(note)));
    }
    let synthetic = read_weighted(path, schema, weight.as_deref().or(weights_column))?;
    let note = synthetic.form_note(path);
    Ok((synthetic, note))
}

/// Records with non-negative weights: a synthetic file read back by [`read_weighted`].
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedRecords {
    /// The records (one per row of the file), over the domain they were read against.
    pub records: Dataset,
    /// The weight of each record, finite and non-negative, not all zero.
    pub weights: Vec<f64>,
    /// How the file's label and bins columns were read.
    pub form: FileForm,
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
            form: self.form.clone(),
        })
    }

    /// A note for the user when the file was read as integer codes ([`FileForm::Codes`]),
    /// naming the field that decided it; `None` for values.
    pub fn form_note(&self, file: &Path) -> Option<String> {
        match &self.form {
            FileForm::Values => None,
            FileForm::Codes {
                line,
                column,
                field,
            } => Some(format!(
                "note: {} holds integer codes in its label and bins columns (line {line}, \
                 column {}: {} is no value of the schema), as dpqr wrote synthetic files \
                 before it wrote values: read as codes",
                file.display(),
                quoted(column),
                quoted(field)
            )),
        }
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

/// Read the weighted records file at `path` (`.gz` decompressed) through `schema` (module
/// docs, "Reading it back"); the weight column is `weights_column` if given, else found by
/// the automatic rule.
pub fn read_weighted(
    path: &Path,
    schema: &Schema,
    weights_column: Option<&str>,
) -> Result<WeightedRecords> {
    let bytes = crate::io::output::read_maybe_compressed(path)?;
    parse_weighted(&bytes, &path.display().to_string(), schema, weights_column)
}

/// Whether `field` is a bare integer (ASCII digits only, not empty).
fn bare_integer(field: &str) -> bool {
    !field.is_empty() && field.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `field` of attribute `a` shows a file of integer codes: a bare integer that is
/// not a label of a label attribute, or any bare integer of a bins attribute (dpqr writes
/// bin values with a decimal point or an exponent).
fn shows_codes(schema: &Schema, a: usize, field: &str) -> bool {
    if !bare_integer(field) {
        return false;
    }
    match schema.attribute(a).map(|s| s.encoding()) {
        Some(Encoding::Labels(labels)) => !matches!(
            schema.encode(a, field),
            Ok(Some(c)) if labels.get(c as usize).is_some_and(|l| l == field)
        ),
        Some(Encoding::Bins(_)) => true,
        _ => false,
    }
}

/// Parse the bytes of a weighted records file through `schema` (see [`read_weighted`]);
/// `file` labels error messages. Never panics, whatever the bytes.
pub fn parse_weighted(
    bytes: &[u8],
    file: &str,
    schema: &Schema,
    weights_column: Option<&str>,
) -> Result<WeightedRecords> {
    let domain = schema.domain();
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
    // every record first (the form is decided for the whole file)
    let mut rows: Vec<(u64, csv::StringRecord)> = Vec::new();
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
        rows.push((line, record));
    }
    let form =
        rows.iter()
            .find_map(|(line, record)| {
                record.iter().zip(targets.iter().zip(&header)).find_map(
                    |(field, (target, name))| {
                        let a = (*target)?;
                        shows_codes(schema, a, field).then(|| FileForm::Codes {
                            line: *line,
                            column: name.clone(),
                            field: field.to_string(),
                        })
                    },
                )
            })
            .unwrap_or(FileForm::Values);
    let read_as_codes = match &form {
        FileForm::Values => String::new(),
        FileForm::Codes {
            line,
            column,
            field,
        } => format!(
            " (the file is read as integer codes, as dpqr wrote synthetic files before it \
             wrote values, because line {line}, column {}, holds {}, which is no value of \
             the schema)",
            quoted(column),
            quoted(field)
        ),
    };
    let sizes = domain.sizes().to_vec();
    let mut columns: Vec<Vec<u32>> = vec![Vec::new(); domain.len()];
    let mut weights = Vec::with_capacity(rows.len());
    for (line, record) in &rows {
        let line = *line;
        for (field, (target, name)) in record.iter().zip(targets.iter().zip(&header)) {
            let Some(a) = *target else {
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
                continue;
            };
            let through_schema = match form {
                FileForm::Values => schema.encode(a, field).map_err(|reason| {
                    err(
                        line,
                        format!(
                            "column {}: {} is outside the schema: {reason}",
                            quoted(name),
                            quoted(field)
                        ),
                    )
                })?,
                FileForm::Codes { .. } => None,
            };
            let code = match through_schema {
                Some(code) => Some(code),
                None => bare_integer(field)
                    .then(|| field.parse::<u32>().ok())
                    .flatten()
                    .filter(|&c| c < sizes[a]),
            };
            let Some(code) = code else {
                return Err(err(
                    line,
                    format!(
                        "column {}: {} is not a code of the attribute (an integer from 0 to \
                         {}){read_as_codes}",
                        quoted(name),
                        quoted(field),
                        sizes[a].saturating_sub(1)
                    ),
                ));
            };
            columns[a].push(code);
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
    Ok(WeightedRecords {
        records,
        weights,
        form,
    })
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
        return Err(BenchError::InvalidInput(
            "every weight must be a finite number of at least 0".into(),
        ));
    }
    let sum: f64 = weights.iter().sum();
    if weights.is_empty() || sum <= 0.0 {
        return Err(BenchError::InvalidInput(
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
/// then record `i` repeated `counts[i]` times, in record order, each in the form of the
/// data it came from through `schema`, bin values chosen by `values` afresh for every row
/// (module docs). A label holding a line break is refused: the CSV loader reads no field
/// across lines, so the file would not read back.
pub fn write_expanded<W: Write>(
    w: W,
    records: &Dataset,
    counts: &[u64],
    schema: &Schema,
    values: &mut BinValues<'_>,
) -> Result<()> {
    if counts.len() != records.n() {
        return Err(BenchError::Mismatch(format!(
            "{} records but {} counts",
            records.n(),
            counts.len()
        )));
    }
    let io = |source: csv::Error| BenchError::WriteCsv {
        what: "the rows",
        source,
    };
    let domain = records.domain();
    let columns = schema_columns(domain, schema)?;
    let mut out = csv::Writer::from_writer(w);
    out.write_record(domain.names()).map_err(io)?;
    let mut row: Vec<String> = Vec::with_capacity(domain.len());
    // rows of one record differ only where a bin value is drawn
    let redraw = matches!(values, BinValues::Uniform(_))
        && columns.iter().any(|&j| {
            matches!(
                schema.attribute(j).map(|s| s.encoding()),
                Some(Encoding::Bins(_))
            )
        });
    for (r, &count) in counts.iter().enumerate() {
        if count == 0 {
            continue;
        }
        decode_row(records, r, schema, &columns, values, &mut row)?;
        if let Some((a, field)) = row
            .iter()
            .enumerate()
            .find(|(_, f)| f.contains(['\n', '\r']))
        {
            return Err(BenchError::InvalidInput(format!(
                "attribute {}: the label {} holds a line break, which the CSV loader cannot \
                 read back; rename the label in the schema",
                quoted(domain.names().nth(a).unwrap_or_default()),
                quoted(field)
            )));
        }
        out.write_record(&row).map_err(io)?;
        for _ in 1..count {
            if redraw {
                // a fresh value within each bin for every row
                decode_row(records, r, schema, &columns, values, &mut row)?;
            }
            out.write_record(&row).map_err(io)?;
        }
    }
    out.flush().map_err(|e| BenchError::WriteCsv {
        what: "the rows",
        source: e.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dp_queries::{Dataset, Domain};

    /// The integer-codes schema of `s`'s records.
    fn codes(s: &SyntheticData) -> Schema {
        Schema::codes(s.records.domain().clone())
    }

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
        write_synthetic(&mut buf, &s, &codes(&s), &mut BinValues::LowerEdge).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "a,b,weight\n0,2,0.25\n1,0,0.75\n"
        );
        let bad = SyntheticData {
            sampled_from_model: false,
            records: s.records.clone(),
            weights: vec![1.0],
        };
        assert!(
            write_synthetic(Vec::new(), &bad, &codes(&bad), &mut BinValues::LowerEdge).is_err()
        );
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
        write_synthetic(&mut buf, &s, &codes(&s), &mut BinValues::LowerEdge).unwrap();
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
        write_synthetic(&mut buf, &s, &codes(&s), &mut BinValues::LowerEdge).unwrap();
        let back = parse_weighted(&buf, "s.csv", &Schema::codes(d.clone()), None).unwrap();
        assert_eq!(back.records, records);
        assert_eq!(back.weights, s.weights);
        // columns in another order, a named weight column, a byte-order mark
        let text = "\u{feff}w,b,a\n3,2,0\n1,0,1\n";
        let back = parse_weighted(
            text.as_bytes(),
            "s.csv",
            &Schema::codes(d.clone()),
            Some("w"),
        )
        .unwrap();
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
            let e = parse_weighted(body.as_bytes(), "s.csv", &Schema::codes(d.clone()), None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && e.starts_with("s.csv"), "{body:?}: {e}");
        }
        let e = parse_weighted(b"a,b\n0,0\n", "s.csv", &Schema::codes(d.clone()), Some("a"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("'a' is an attribute"), "{e}");
    }

    const PEOPLE: &str = r#"{
        "sex": {"labels": ["female", "male"]},
        "age": {"bins": [-10, 18, 30, 65, 1e300]},
        "region": {"labels": ["north", "other", "a,b"], "other": true},
        "flag": 2
    }"#;

    fn people() -> Schema {
        Schema::from_json_str(PEOPLE, "people.json").unwrap()
    }

    /// Every code of every attribute of `schema`'s domain, as records with equal weights.
    fn every_code(schema: &Schema) -> SyntheticData {
        let d = schema.domain();
        let widest = d.sizes().iter().copied().max().unwrap_or(1);
        let columns = d
            .sizes()
            .iter()
            .map(|&size| (0..widest).map(|r| r % size).collect())
            .collect();
        SyntheticData {
            sampled_from_model: false,
            records: Dataset::from_columns(d.clone(), columns).unwrap(),
            weights: vec![1.0; widest as usize],
        }
    }

    #[test]
    fn through_a_schema_values_are_written_and_read_back_as_the_same_codes() {
        let schema = people();
        let s = every_code(&schema);
        let mut buf = Vec::new();
        write_synthetic(&mut buf, &s, &schema, &mut BinValues::LowerEdge).unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert_eq!(
            text,
            "sex,age,region,flag,weight\nfemale,-10.0,north,0,1\nmale,18.0,other,1,1\n\
             female,30.0,\"a,b\",0,1\nmale,65.0,other_1,1,1\n"
        );
        let back = parse_weighted(&buf, "s.csv", &schema, None).unwrap();
        assert_eq!(back.form, FileForm::Values);
        assert_eq!(back.records, s.records);
        // the expansion holds the same values, and the loader reads them as the same codes
        let mut rows = Vec::new();
        write_expanded(
            &mut rows,
            &s.records,
            &[1, 2, 0, 1],
            &schema,
            &mut BinValues::LowerEdge,
        )
        .unwrap();
        let rows = String::from_utf8(rows).unwrap();
        assert_eq!(
            rows,
            "sex,age,region,flag\nfemale,-10.0,north,0\nmale,18.0,other,1\n\
             male,18.0,other,1\nmale,65.0,other_1,1\n"
        );
        let loaded =
            Dataset::from_csv_reader_with_schema(rows.as_bytes(), "r.csv", &schema).unwrap();
        for a in 0..4 {
            assert_eq!(
                loaded.column(a),
                &[0, 1, 1, 3].map(|r| s.records.column(a)[r])
            );
        }
        // records over some of the schema's attributes are matched by name
        let some = s.records.select_attributes(&["region", "sex"]).unwrap();
        let mut buf = Vec::new();
        write_expanded(
            &mut buf,
            &some,
            &[1, 0, 0, 1],
            &schema,
            &mut BinValues::LowerEdge,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "region,sex\nnorth,female\nother_1,male\n"
        );
        // a schema that does not fit the records is an error, not a panic
        let other = Schema::from_json_str(r#"{"sex": 3}"#, "o.json").unwrap();
        assert!(
            write_expanded(
                Vec::new(),
                &some,
                &[1, 0, 0, 1],
                &other,
                &mut BinValues::LowerEdge
            )
            .is_err()
        );
        let small = Schema::from_json_str(r#"{"sex": 2, "region": 2}"#, "o.json").unwrap();
        assert!(
            write_synthetic(
                Vec::new(),
                &every_code(&people()),
                &small,
                &mut BinValues::LowerEdge
            )
            .is_err()
        );
    }

    /// The bin edges of attribute `a` of `schema`.
    fn edges(schema: &Schema, a: usize) -> Vec<f64> {
        match schema.attribute(a).unwrap().encoding() {
            Encoding::Bins(e) => e.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values_drawn_within_bins_read_back_as_their_codes() {
        // half-open bins, the closed last one, a bin one ulp wide, a bin wider than the
        // largest double, a sentinel edge, and an other bucket
        let tiny = 1.0f64.next_up();
        let json = format!(
            r#"{{"age": {{"bins": [-10, 18, 30, 65, 1e300]}},
                "x": {{"bins": [1, {tiny:?}, 2]}},
                "wide": {{"bins": [-1e308, 1e308]}},
                "inc": {{"bins": [0, 0.5, 1], "other": true}},
                "sex": {{"labels": ["f", "m"]}}}}"#
        );
        let schema = Schema::from_json_str(&json, "s.json").unwrap();
        let s = every_code(&schema);
        let mut rng = dp_core::seeded_rng(5);
        let mut values = BinValues::Uniform(&mut rng);
        // many rows per record: every row a fresh draw
        let counts = vec![500u64; s.records.n()];
        let mut rows = Vec::new();
        write_expanded(&mut rows, &s.records, &counts, &schema, &mut values).unwrap();
        let loaded =
            Dataset::from_csv_reader_with_schema(rows.as_slice(), "r.csv", &schema).unwrap();
        let text = String::from_utf8(rows).unwrap();
        let fields: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(fields.len(), 500 * s.records.n());
        for a in 0..4 {
            let e = edges(&schema, a);
            let mut distinct = std::collections::HashSet::new();
            for (row, f) in fields.iter().enumerate() {
                let code = s.records.column(a)[row / 500];
                // the loader reads every field back as the code it was drawn for
                assert_eq!(loaded.column(a)[row], code, "{a} {}", f[a]);
                if code as usize + 1 >= e.len() {
                    assert_eq!(f[a], "other");
                    continue;
                }
                // never a bare integer (so never read as an older file of codes)
                assert!(f[a].contains(['.', 'e']), "{}", f[a]);
                let v: f64 = f[a].parse().unwrap();
                let (lo, hi) = (e[code as usize], e[code as usize + 1]);
                let last = code as usize + 2 == e.len();
                assert!(
                    v >= lo && (v < hi || (last && v == hi)),
                    "{v} in [{lo}, {hi}]"
                );
                distinct.insert(f[a].to_string());
            }
            // drawn, not the lower edge: the one-ulp bin holds a single double
            if a != 1 {
                assert!(distinct.len() > 100, "attribute {a}: {}", distinct.len());
            }
        }
        // the weighted file too, read back by read_weighted as the same codes
        let mut rng = dp_core::seeded_rng(6);
        let mut buf = Vec::new();
        write_synthetic(&mut buf, &s, &schema, &mut BinValues::Uniform(&mut rng)).unwrap();
        let back = parse_weighted(&buf, "s.csv", &schema, None).unwrap();
        assert_eq!(back.form, FileForm::Values);
        assert_eq!(back.records, s.records);
        // the same seed, the same file
        let mut again = Vec::new();
        let mut rng = dp_core::seeded_rng(6);
        write_synthetic(&mut again, &s, &schema, &mut BinValues::Uniform(&mut rng)).unwrap();
        assert_eq!(again, buf);
    }

    #[test]
    fn draws_within_a_bin_are_uniform() {
        // 20 000 draws in [0, 10): the mean is 5 with standard deviation
        // 10/√12/√20000 ≈ 0.0204; 6 of those (0.122) fail with probability about 2e-9
        let mut rng = dp_core::seeded_rng(9);
        let draws: Vec<f64> = (0..20_000)
            .map(|_| uniform_between(0.0, 10.0, &mut rng))
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 5.0).abs() < 0.122, "{mean}");
        // and each tenth holds about a tenth (χ² with 9 degrees of freedom below 40:
        // false alarm about 7e-6)
        let mut cells = [0f64; 10];
        for v in &draws {
            cells[(*v as usize).min(9)] += 1.0;
        }
        let chi2: f64 = cells.iter().map(|c| (c - 2000.0).powi(2) / 2000.0).sum();
        assert!(chi2 < 40.0, "{chi2} {cells:?}");
        // no overflow across the whole range of doubles
        let v = uniform_between(-f64::MAX, f64::MAX, &mut rng);
        assert!(v.is_finite());
    }

    #[test]
    fn a_file_of_codes_is_read_as_codes_through_a_schema() {
        let schema = people();
        let s = every_code(&schema);
        let mut buf = Vec::new();
        write_synthetic(
            &mut buf,
            &s,
            &Schema::codes(schema.domain().clone()),
            &mut BinValues::LowerEdge,
        )
        .unwrap();
        let back = parse_weighted(&buf, "old.csv", &schema, None).unwrap();
        assert_eq!(back.records, s.records);
        assert_eq!(
            back.form,
            FileForm::Codes {
                line: 2,
                column: "sex".into(),
                field: "0".into()
            }
        );
        assert!(
            back.form_note(Path::new("old.csv"))
                .unwrap()
                .contains("read as codes")
        );
        // one bare integer in a bins column is enough; a code column does not count
        let only_age = "sex,age,region,flag,weight\nmale,40.5,north,1,1\nfemale,2,north,0,1\n";
        let back = parse_weighted(only_age.as_bytes(), "f.csv", &schema, None);
        let e = back.unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("'male' is not a code") && e.contains("line 3"),
            "{e}"
        );
        let values = "sex,age,region,flag,weight\nmale,40.5,north,1,1\nfemale,1e3,xyz,0,1\n";
        let back = parse_weighted(values.as_bytes(), "f.csv", &schema, None).unwrap();
        assert_eq!(back.form, FileForm::Values);
        assert_eq!(back.records.column(1), &[2, 3]);
        assert_eq!(back.records.column(2), &[0, 3]);
        // a value outside a schema without other is named
        let e = parse_weighted(
            "sex,age,region,flag,weight\nMale,40.5,north,1,1\n".as_bytes(),
            "f.csv",
            &schema,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("f.csv, line 2") && e.contains("'Male' is outside the schema"),
            "{e}"
        );
    }

    #[test]
    fn digit_labels_are_labels() {
        // labels "2", "0", "1": code 0 is written "2" and read back as code 0
        let schema =
            Schema::from_json_str(r#"{"d": {"labels": ["2", "0", "1"]}}"#, "d.json").unwrap();
        let s = every_code(&schema);
        let mut buf = Vec::new();
        write_synthetic(&mut buf, &s, &schema, &mut BinValues::LowerEdge).unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "d,weight\n2,1\n0,1\n1,1\n"
        );
        let back = parse_weighted(&buf, "d.csv", &schema, None).unwrap();
        assert_eq!(back.form, FileForm::Values);
        assert_eq!(back.records.column(0), &[0, 1, 2]);
        // a digit that is not a label shows codes
        let schema = Schema::from_json_str(r#"{"d": {"labels": ["1", "2"]}}"#, "d.json").unwrap();
        let back = parse_weighted(b"d,weight\n1,1\n0,1\n", "d.csv", &schema, None).unwrap();
        assert!(matches!(back.form, FileForm::Codes { line: 3, .. }));
        assert_eq!(back.records.column(0), &[1, 0]);
        // a label with a line break cannot be expanded into a file the loader reads
        let schema = Schema::from_json_str(r#"{"d": {"labels": ["a\nb"]}}"#, "d.json").unwrap();
        let records = Dataset::from_columns(schema.domain().clone(), vec![vec![0]]).unwrap();
        let e = write_expanded(
            Vec::new(),
            &records,
            &[1],
            &schema,
            &mut BinValues::LowerEdge,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("line break"), "{e}");
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
        write_expanded(
            &mut buf,
            &records,
            &[2, 1],
            &Schema::codes(ab()),
            &mut BinValues::LowerEdge,
        )
        .unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), "a,b\n0,2\n0,2\n1,0\n");
        assert!(
            write_expanded(
                Vec::new(),
                &records,
                &[1],
                &Schema::codes(ab()),
                &mut BinValues::LowerEdge
            )
            .is_err()
        );
    }
}
