//! **NON-PRIVATE**: the data check before a release (`dpqr schema check`, issue #26).
//!
//! [`check_csv`] reads a CSV file (plain or gzip through [`super::open_csv`]; any delimiter)
//! through its public schema as the loaders would, but instead of stopping at the first
//! value outside the schema it counts, per schema column, where every cell would go:
//!
//! * **in the schema** — a label, a number inside the bins, a code below the size;
//! * **empty** — an empty or whitespace-only field: to the `missing` code when the schema
//!   declares one, else to the `other` bucket, else refused;
//! * **outside the schema** — to the `other` bucket when declared, else refused — each
//!   classified by [`FindingKind`], the near-misses first: a label written with spaces around
//!   it ([`FindingKind::Whitespace`]) or in another case ([`FindingKind::Case`]), a number in
//!   a column of word labels ([`FindingKind::NumberInLabels`]), a non-number or a number
//!   outside every bin in a bins column, a bad code in a column of codes;
//!
//! with the first few offending values of each column and their lines ([`Finding`]), and the
//! file's columns that the schema does not name ([`DataCheck::extra_columns`]).
//!
//! The report is computed from the private records — the counts and, above all, the example
//! values disclose them — so it is for the data holder's eyes only, like
//! [`crate::draft_schema`]: never publish it, and never choose the schema from it in ways
//! that depend on individual records (docs/privacy.md).
//!
//! Errors are those that stop every reader, with the loaders' messages: an unreadable file,
//! an empty file, a header without a schema column or with a column twice, a record with
//! another number of fields than the header, text that is not UTF-8.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;

use serde::Serialize;

use super::csv::CsvDecoder;
use super::options::ReadOptions;
use super::stream::trim_line_end;
use crate::error::{QueryError, Result};
use crate::schema::{AttributeSchema, Encoding, Schema, is_blank};

/// Settings of [`check_csv`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckSettings {
    /// How many offending values each column's report shows at most (distinct values, in
    /// file order). Default 3.
    pub examples: usize,
}

impl Default for CheckSettings {
    fn default() -> Self {
        CheckSettings { examples: 3 }
    }
}

/// Why a cell is not a value of its column's schema (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// An empty or whitespace-only field.
    Empty,
    /// A label column: the value is a label once the spaces around it are trimmed.
    Whitespace,
    /// A label column: the value is a label once case is ignored (and spaces trimmed).
    Case,
    /// A label column whose labels are not numbers holds a number.
    NumberInLabels,
    /// A label column: no label, not even nearly.
    UnknownLabel,
    /// A bins column: the value is not a number.
    NotANumber,
    /// A bins column: `NaN` or an infinity.
    NotFinite,
    /// A bins column: a number below the first edge or above the last.
    OutsideBins,
    /// A column of integer codes: the value is not a non-negative integer.
    NotACode,
    /// A column of integer codes: an integer not below the attribute's size.
    CodeOutOfRange,
}

impl FindingKind {
    /// The kind in words, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            FindingKind::Empty => "empty cell",
            FindingKind::Whitespace => "a label with spaces around it",
            FindingKind::Case => "a label in another case",
            FindingKind::NumberInLabels => "a number in a column of word labels",
            FindingKind::UnknownLabel => "not a label",
            FindingKind::NotANumber => "not a number (the column is binned)",
            FindingKind::NotFinite => "not a finite number",
            FindingKind::OutsideBins => "a number outside every bin",
            FindingKind::NotACode => "not a non-negative integer code",
            FindingKind::CodeOutOfRange => "a code outside the attribute's size",
        }
    }

    /// Whether the kind is a near-miss: a value that was probably meant as one of the
    /// schema's (module docs).
    pub fn is_near_miss(self) -> bool {
        matches!(
            self,
            FindingKind::Whitespace
                | FindingKind::Case
                | FindingKind::NumberInLabels
                | FindingKind::NotANumber
                | FindingKind::OutsideBins
        )
    }
}

/// Where a cell goes in a release through the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    /// The attribute's `missing` code.
    Missing,
    /// The attribute's `other` bucket.
    Other,
    /// Nowhere: the release refuses the file.
    Refused,
}

/// One offending cell (an example in a column's report).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// The 1-based line of the record.
    pub line: u64,
    /// The field as read (after CSV unquoting).
    pub value: String,
    /// Why it is not a value of the schema.
    pub kind: FindingKind,
    /// Where a release puts it.
    pub goes_to: Destination,
    /// The label it nearly is ([`FindingKind::Whitespace`], [`FindingKind::Case`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest: Option<String>,
}

/// The report of one schema column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColumnCheck {
    /// The attribute (= column) name.
    pub name: String,
    /// `labels`, `bins` or `codes`.
    pub encoding: &'static str,
    /// Whether the schema gives this attribute a `missing` code.
    pub has_missing: bool,
    /// Whether the schema gives this attribute an `other` bucket.
    pub has_other: bool,
    /// Cells read (one per record).
    pub cells: u64,
    /// Cells holding a value of the schema.
    pub in_schema: u64,
    /// Empty (or whitespace-only) cells.
    pub empty: u64,
    /// Where the empty cells go.
    pub empty_goes_to: Destination,
    /// Non-empty cells outside the schema.
    pub outside: u64,
    /// Of those, the near-misses ([`FindingKind::is_near_miss`]).
    pub near_misses: u64,
    /// Cells that go to the `other` bucket (outside values, and empty cells when there is
    /// no `missing` code).
    pub to_other: u64,
    /// Cells that go to the `missing` code.
    pub to_missing: u64,
    /// Cells a release refuses (it stops at the first).
    pub refused: u64,
    /// The number of cells of each kind of finding (empty cells included).
    pub kinds: BTreeMap<FindingKind, u64>,
    /// The first few offending cells, distinct values in file order.
    pub examples: Vec<Finding>,
}

/// The report of [`check_csv`] (module docs). NON-PRIVATE.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DataCheck {
    /// The file, as the caller named it.
    pub file: String,
    /// The number of records read.
    pub rows: u64,
    /// One report per schema attribute, in schema order.
    pub columns: Vec<ColumnCheck>,
    /// The file's columns that are not attributes of the schema, in file order.
    pub extra_columns: Vec<String>,
    /// Whether the reading options ignore them (else a release refuses the file).
    pub extra_columns_ignored: bool,
    /// The first cell a release refuses (its column and the finding), if any.
    pub first_refused: Option<(String, Finding)>,
}

impl DataCheck {
    /// Whether a release through the schema, with the same reading options, reads every
    /// record: no refused cell, and no extra column unless extra columns are ignored.
    pub fn release_reads_all(&self) -> bool {
        self.first_refused.is_none()
            && (self.extra_columns.is_empty() || self.extra_columns_ignored)
    }
}

/// What the check needs of one attribute.
struct ColumnRule<'s> {
    attribute: Option<&'s AttributeSchema>,
    size: u32,
    /// A label column: its labels by lower-cased, trimmed text (the first such label).
    folded: HashMap<String, &'s str>,
    /// A label column: whether some label is a number.
    numeric_labels: bool,
}

/// **NON-PRIVATE.** Checks the CSV of `reader` (`file` labels messages) against `schema`,
/// read with `options` (module docs). Extra columns are listed, not refused, whatever
/// `options` says; `options` decides only whether the report counts them as a refusal.
///
/// Errors: module docs.
pub fn check_csv<R: BufRead>(
    mut reader: R,
    file: &str,
    schema: &Schema,
    options: &ReadOptions,
    settings: &CheckSettings,
) -> Result<DataCheck> {
    let io = |source| QueryError::Io {
        path: file.into(),
        source,
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut line: u64 = 0;
    // the header: the first non-blank line (a UTF-8 byte-order mark before it is ignored)
    let listing = ReadOptions::new(char::from(options.delimiter()), true)?;
    let decoder = loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            return Err(QueryError::EmptyFile { file: file.into() });
        }
        line += 1;
        let text: &[u8] = if line == 1 {
            buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&buf)
        } else {
            &buf
        };
        let text = trim_line_end(text);
        if !text.is_empty() {
            break CsvDecoder::new(text, line, file, schema, &listing)?;
        }
    };
    let domain = schema.domain();
    let extra_columns: Vec<String> = decoder
        .names()
        .iter()
        .zip(decoder.columns())
        .filter(|(_, a)| a.is_none())
        .map(|(n, _)| n.clone())
        .collect();
    let rules: Vec<ColumnRule<'_>> = (0..domain.len())
        .map(|a| rule(schema.attribute(a), domain.size(a)))
        .collect();
    let mut columns: Vec<ColumnCheck> = (0..domain.len())
        .map(|a| {
            let attribute = schema.attribute(a);
            ColumnCheck {
                name: domain.name(a).to_string(),
                encoding: match attribute.map(AttributeSchema::encoding) {
                    Some(Encoding::Labels(_)) => "labels",
                    Some(Encoding::Bins(_)) => "bins",
                    _ => "codes",
                },
                has_missing: attribute.is_some_and(AttributeSchema::has_missing),
                has_other: attribute.is_some_and(AttributeSchema::has_other),
                cells: 0,
                in_schema: 0,
                empty: 0,
                empty_goes_to: empty_destination(attribute),
                outside: 0,
                near_misses: 0,
                to_other: 0,
                to_missing: 0,
                refused: 0,
                kinds: BTreeMap::new(),
                examples: Vec::new(),
            }
        })
        .collect();
    let mut shown: Vec<HashSet<String>> = vec![HashSet::new(); domain.len()];
    let mut first_refused: Option<(String, Finding)> = None;
    let mut rows = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            break;
        }
        line += 1;
        let text = trim_line_end(&buf);
        if text.is_empty() {
            continue; // a blank line
        }
        let mut fields: Vec<Cow<'_, [u8]>> = Vec::new();
        decoder.split(text, &mut fields);
        if fields.len() != decoder.columns().len() {
            return Err(QueryError::RaggedRow {
                file: file.into(),
                line,
                expected: decoder.columns().len(),
                found: fields.len(),
            });
        }
        rows += 1;
        for (field, target) in fields.iter().zip(decoder.columns()) {
            let Some(a) = *target else { continue };
            let value = std::str::from_utf8(field).map_err(|_| QueryError::NonUtf8 {
                file: file.into(),
                line,
            })?;
            let report = &mut columns[a];
            report.cells += 1;
            let Some((kind, nearest)) = classify(schema, a, &rules[a], value) else {
                report.in_schema += 1;
                continue;
            };
            *report.kinds.entry(kind).or_insert(0) += 1;
            let goes_to = if kind == FindingKind::Empty {
                report.empty += 1;
                report.empty_goes_to
            } else {
                report.outside += 1;
                if kind.is_near_miss() {
                    report.near_misses += 1;
                }
                if report.has_other {
                    Destination::Other
                } else {
                    Destination::Refused
                }
            };
            match goes_to {
                Destination::Missing => report.to_missing += 1,
                Destination::Other => report.to_other += 1,
                Destination::Refused => report.refused += 1,
            }
            let finding = || Finding {
                line,
                value: value.to_string(),
                kind,
                goes_to,
                nearest: nearest.map(str::to_string),
            };
            if goes_to == Destination::Refused && first_refused.is_none() {
                first_refused = Some((report.name.clone(), finding()));
            }
            if report.examples.len() < settings.examples && shown[a].insert(value.to_string()) {
                report.examples.push(finding());
            }
        }
    }
    if rows == 0 {
        return Err(QueryError::NoRecords { file: file.into() });
    }
    Ok(DataCheck {
        file: file.into(),
        rows,
        columns,
        extra_columns,
        extra_columns_ignored: options.ignores_extra_columns(),
        first_refused,
    })
}

/// The check's view of one attribute.
fn rule(attribute: Option<&AttributeSchema>, size: u32) -> ColumnRule<'_> {
    let mut folded = HashMap::new();
    let mut numeric_labels = false;
    if let Some(Encoding::Labels(labels)) = attribute.map(AttributeSchema::encoding) {
        for l in labels {
            folded.entry(l.trim().to_lowercase()).or_insert(l.as_str());
            numeric_labels |= l.trim().parse::<f64>().is_ok();
        }
    }
    ColumnRule {
        attribute,
        size,
        folded,
        numeric_labels,
    }
}

/// Where the empty cells of an attribute go.
fn empty_destination(attribute: Option<&AttributeSchema>) -> Destination {
    match attribute {
        Some(a) if a.has_missing() => Destination::Missing,
        Some(a) if a.has_other() => Destination::Other,
        _ => Destination::Refused,
    }
}

/// `None` when `value` is a value of attribute `a`; else its kind and, for a near-miss of
/// a label, that label.
fn classify<'r>(
    schema: &Schema,
    a: usize,
    rule: &ColumnRule<'r>,
    value: &str,
) -> Option<(FindingKind, Option<&'r str>)> {
    let encoding = rule
        .attribute
        .map_or(&Encoding::Codes, AttributeSchema::encoding);
    if let Encoding::Codes = encoding {
        if is_blank(value) {
            return Some((FindingKind::Empty, None));
        }
        let digits = value.bytes().all(|b| b.is_ascii_digit());
        return match value.parse::<u64>() {
            Ok(v) if digits && v < u64::from(rule.size) => None,
            _ if digits => Some((FindingKind::CodeOutOfRange, None)),
            _ => Some((FindingKind::NotACode, None)),
        };
    }
    // a value of the schema: encoded to a declared code (below `missing` and `other`)
    let declared = match encoding {
        Encoding::Labels(l) => l.len(),
        Encoding::Bins(e) => e.len() - 1,
        Encoding::Codes => 0,
    };
    if let Ok(Some(code)) = schema.encode(a, value)
        && (code as usize) < declared
    {
        return None;
    }
    if is_blank(value) {
        return Some((FindingKind::Empty, None));
    }
    let trimmed = value.trim();
    match encoding {
        Encoding::Labels(_) => {
            if let Some(l) = exact_label(rule, trimmed) {
                return Some((FindingKind::Whitespace, Some(l)));
            }
            if let Some(l) = rule.folded.get(&trimmed.to_lowercase()) {
                return Some((FindingKind::Case, Some(*l)));
            }
            if !rule.numeric_labels && trimmed.parse::<f64>().is_ok() {
                return Some((FindingKind::NumberInLabels, None));
            }
            Some((FindingKind::UnknownLabel, None))
        }
        Encoding::Bins(_) => match trimmed.parse::<f64>() {
            Err(_) => Some((FindingKind::NotANumber, None)),
            Ok(v) if !v.is_finite() => Some((FindingKind::NotFinite, None)),
            Ok(_) => Some((FindingKind::OutsideBins, None)),
        },
        Encoding::Codes => None,
    }
}

/// The label of `rule` equal to `text`, borrowed from the schema.
fn exact_label<'r>(rule: &ColumnRule<'r>, text: &str) -> Option<&'r str> {
    match rule.attribute.map(AttributeSchema::encoding) {
        Some(Encoding::Labels(labels)) => labels
            .iter()
            .find(|l| l.as_str() == text)
            .map(String::as_str),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{
        "city": {"labels": ["London", "Paris", "Rome"], "missing": true, "other": true},
        "age":  {"bins": [0, 18, 65, 120], "other": true},
        "sex":  {"labels": ["f", "m"]},
        "flag": 2
    }"#;

    /// A raw file: labels with spaces and in another case, a number in a label column,
    /// empty cells, `abc` and out-of-range numbers in the binned column, an extra column.
    const RAW: &str = "\
name,city,age,sex,flag
ann,London,30,f,0
bob, London ,abc,m,1
cy,london,17,f,0
dee,,200,f,1
eve,42,,m,0
fay,Berlin, 64 ,x,1
gus,London,NaN,,2
";

    fn check(csv: &str, options: &ReadOptions) -> Result<DataCheck> {
        let schema = Schema::from_json_str(SCHEMA, "s.json").unwrap();
        check_csv(
            csv.as_bytes(),
            "raw.csv",
            &schema,
            options,
            &CheckSettings::default(),
        )
    }

    fn kinds(c: &ColumnCheck) -> Vec<(FindingKind, u64)> {
        c.kinds.iter().map(|(k, n)| (*k, *n)).collect()
    }

    #[test]
    fn every_cell_is_counted_where_a_release_puts_it() {
        let r = check(RAW, &ReadOptions::default()).unwrap();
        assert_eq!(r.rows, 7);
        assert_eq!(r.extra_columns, ["name"]);
        assert!(!r.extra_columns_ignored);
        assert!(!r.release_reads_all());
        let [city, age, sex, flag] = &r.columns[..] else {
            panic!("{r:?}")
        };
        // city: London (lines 2, 8), " London " (3), london (4), empty (5), 42 (6), Berlin (7)
        assert_eq!(city.encoding, "labels");
        assert_eq!((city.cells, city.in_schema, city.empty), (7, 2, 1));
        assert_eq!(city.empty_goes_to, Destination::Missing);
        assert_eq!((city.outside, city.near_misses), (4, 3));
        assert_eq!((city.to_missing, city.to_other, city.refused), (1, 4, 0));
        assert_eq!(
            kinds(city),
            [
                (FindingKind::Empty, 1),
                (FindingKind::Whitespace, 1),
                (FindingKind::Case, 1),
                (FindingKind::NumberInLabels, 1),
                (FindingKind::UnknownLabel, 1),
            ]
        );
        let first = &city.examples[0];
        assert_eq!((first.line, first.value.as_str()), (3, " London "));
        assert_eq!(first.kind, FindingKind::Whitespace);
        assert_eq!(first.nearest.as_deref(), Some("London"));
        assert_eq!(first.goes_to, Destination::Other);
        assert_eq!(city.examples[1].nearest.as_deref(), Some("London"));
        assert_eq!(city.examples[1].kind, FindingKind::Case);
        assert_eq!(city.examples.len(), 3);
        // age: 30, 17, " 64 " in the bins; abc, 200, NaN to other; the empty cell too (no
        // missing code)
        assert_eq!((age.in_schema, age.empty, age.outside), (3, 1, 3));
        assert_eq!(age.empty_goes_to, Destination::Other);
        assert_eq!((age.to_other, age.refused, age.near_misses), (4, 0, 2));
        assert_eq!(
            kinds(age),
            [
                (FindingKind::Empty, 1),
                (FindingKind::NotANumber, 1),
                (FindingKind::NotFinite, 1),
                (FindingKind::OutsideBins, 1),
            ]
        );
        // sex: x and an empty cell are refused (no missing, no other)
        assert_eq!((sex.in_schema, sex.refused), (5, 2));
        assert_eq!(sex.empty_goes_to, Destination::Refused);
        // flag: the code 2 is refused
        assert_eq!(kinds(flag), [(FindingKind::CodeOutOfRange, 1)]);
        let (column, finding) = r.first_refused.as_ref().unwrap();
        assert_eq!((column.as_str(), finding.line), ("sex", 7));
        assert_eq!(finding.value, "x");
    }

    #[test]
    fn the_delimiter_and_ignored_extra_columns_are_the_release_s() {
        let options = ReadOptions::new(';', true).unwrap();
        let csv = "city;name;age;sex;flag\n\"Rome;Italy\";x,y;5;f;1\nRome;z;5;m;0\n";
        let r = check(csv, &options).unwrap();
        assert_eq!(r.extra_columns, ["name"]);
        assert!(r.extra_columns_ignored && r.release_reads_all());
        assert_eq!(r.columns[0].in_schema, 1);
        assert_eq!(r.columns[0].examples[0].value, "Rome;Italy");
        assert_eq!(r.columns[0].examples[0].kind, FindingKind::UnknownLabel);
        // the same file read as comma-separated has one column, and no schema column
        assert!(matches!(
            check(csv, &ReadOptions::default()),
            Err(QueryError::MissingColumn { .. })
        ));
    }

    #[test]
    fn structural_problems_are_errors_with_the_line() {
        let o = ReadOptions::default();
        assert!(matches!(check("", &o), Err(QueryError::EmptyFile { .. })));
        assert!(matches!(
            check("city,age,sex,flag\n", &o),
            Err(QueryError::NoRecords { .. })
        ));
        assert!(matches!(
            check("city,age,sex\nRome,1,f\n", &o),
            Err(QueryError::MissingColumn { column, .. }) if column == "flag"
        ));
        assert!(matches!(
            check("city,age,sex,flag\nRome,1,f,0\nRome,1\n", &o),
            Err(QueryError::RaggedRow { line: 3, .. })
        ));
        assert!(matches!(
            check(
                "city,age,sex,flag\n\nRome,1,\u{0}f,0\nR\u{fffd}me,1,f,0\n",
                &o
            )
            .map(|r| r.rows),
            Ok(2)
        ));
        let bytes = b"city,age,sex,flag\nRo\xffme,1,f,0\n";
        let schema = Schema::from_json_str(SCHEMA, "s.json").unwrap();
        assert!(matches!(
            check_csv(&bytes[..], "b.csv", &schema, &o, &CheckSettings::default()),
            Err(QueryError::NonUtf8 { line: 2, .. })
        ));
    }

    #[test]
    fn a_clean_file_reads_in_full_and_the_report_agrees_with_the_loader() {
        let csv = "flag,sex,age,city\n0,f,0,Rome\n1,m,120,\n0,f,17.5,Paris\n";
        let r = check(csv, &ReadOptions::default()).unwrap();
        assert!(r.release_reads_all(), "{r:?}");
        assert!(r.columns.iter().all(|c| c.refused == 0));
        let schema = Schema::from_json_str(SCHEMA, "s.json").unwrap();
        let d =
            crate::Dataset::from_csv_reader_with_schema(csv.as_bytes(), "c.csv", &schema).unwrap();
        // the loader's codes: missing (3) where the check counted one missing cell
        assert_eq!(d.column(0), &[2, 3, 1]);
        assert_eq!(r.columns[0].to_missing, 1);
        // a file the check says is refused, the loader refuses at the same line and column
        let e = crate::Dataset::from_csv_reader_with_schema(
            RAW.replace("name,", "")
                .replace("ann,", "")
                .replace("bob,", "")
                .replace("cy,", "")
                .replace("dee,", "")
                .replace("eve,", "")
                .replace("fay,", "")
                .replace("gus,", "")
                .as_bytes(),
            "raw.csv",
            &schema,
        )
        .unwrap_err();
        assert!(
            matches!(&e, QueryError::OutsideSchema { line: 7, column, .. } if column == "sex"),
            "{e}"
        );
    }
}
