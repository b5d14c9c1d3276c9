//! CSV input and output: the validating CSV readers of [`Dataset`]
//! ([`Dataset::from_csv_reader`], [`Dataset::from_csv_reader_with_schema`]; from a file path,
//! gzip-compressed or not, [`Dataset::load_csv`] in `io/format.rs`), the record decoder they
//! share with the streaming counter ([`super::stream`]), and [`Dataset::write_csv`].
//!
//! # CSV format accepted by the loaders
//!
//! * One header line of attribute names, matched to the domain **by name** (the column
//!   order of the file is free). Every domain attribute must appear exactly once and no
//!   other column may appear — unless the [`ReadOptions`] ignore extra columns: then their
//!   fields are skipped unread (the header names must still be UTF-8 and distinct). A UTF-8
//!   byte-order mark before the header is ignored.
//! * Fields are separated by commas, or by the [`ReadOptions`] delimiter (`;`, a tab, …).
//! * Then one record per line. A field of an attribute whose schema gives labels or bins
//!   ([`crate::schema`]) is a raw value, encoded through the schema (a value outside it is
//!   [`QueryError::OutsideSchema`] unless the attribute declares an `other` bucket). Every
//!   other field is a code in `0..size` of its column's attribute, written as **ASCII
//!   decimal digits only**: no sign, no surrounding spaces,
//!   no decimal point, not empty (`"1.5"`, `"-1"`, `"+1"`, `" 3"`, `""`, `"abc"` are all
//!   [`QueryError::NotInteger`]). Leading zeros are accepted (`"007"` is 7). Standard CSV
//!   quoting is honoured (`"3"` is 3).
//! * Line endings `\n` and `\r\n` are accepted (a lone `\r` is not a line end); a trailing
//!   newline and blank lines are ignored (blank lines still count for line numbers).
//! * Quoting: a field starting with `"` runs to the closing `"` (`""` is an escaped quote);
//!   a quoted delimiter is part of the field;
//!   quoted fields cannot span lines. The whole input is read into memory first.
//! * Errors name the file, the 1-based physical line where the record starts (header =
//!   line 1 when the file does not start with blank lines) and the column name. Within a
//!   record, the field count is checked first ([`QueryError::RaggedRow`]), then the fields
//!   left to right ([`QueryError::NonUtf8`], [`QueryError::NotInteger`],
//!   [`QueryError::OutOfDomain`], [`QueryError::OutsideSchema`]). Header checks run in the
//!   order: UTF-8, duplicate,
//!   extra column (first in file order), missing column (first in domain order).
//! * No input panics the loader (a property test feeds it random bytes).

use std::borrow::Cow;
use std::io::Read;

use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::schema::Schema;

use super::options::ReadOptions;

/// Label used in errors for data that does not come from a named file.
pub const IN_MEMORY: &str = "<memory>";

impl Dataset {
    /// Parses CSV from `reader` (read fully into memory first); `file` labels error
    /// messages. See the module docs for the accepted format.
    pub fn from_csv_reader<Rd: Read>(reader: Rd, file: &str, domain: Domain) -> Result<Self> {
        Self::read_csv(
            reader,
            file,
            &Schema::codes(domain),
            &ReadOptions::default(),
            false,
        )
    }

    /// Parses CSV of raw values from `reader`, encoded through `schema` (labels, bins or
    /// codes per attribute; see [`crate::schema`]); `file` labels error messages. The
    /// dataset is over `schema.domain()`.
    pub fn from_csv_reader_with_schema<Rd: Read>(
        reader: Rd,
        file: &str,
        schema: &Schema,
    ) -> Result<Self> {
        Self::read_csv(reader, file, schema, &ReadOptions::default(), false)
    }

    /// [`Dataset::from_csv_reader_with_schema`] with the delimiter and the treatment of
    /// extra columns given by `options`.
    pub fn from_csv_reader_with_options<Rd: Read>(
        reader: Rd,
        file: &str,
        schema: &Schema,
        options: &ReadOptions,
    ) -> Result<Self> {
        Self::read_csv(reader, file, schema, options, false)
    }

    /// The CSV reader of every loader (module docs); `allow_empty` as in
    /// [`Dataset::load_csv_allowing_empty`].
    pub(crate) fn read_csv<Rd: Read>(
        mut reader: Rd,
        file: &str,
        schema: &Schema,
        options: &ReadOptions,
        allow_empty: bool,
    ) -> Result<Self> {
        let domain = schema.domain().clone();
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|source| QueryError::Io {
                path: file.into(),
                source,
            })?;
        let input: &[u8] = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let mut lines = input
            .split(|&b| b == b'\n')
            .enumerate()
            .map(|(i, l)| (i as u64 + 1, l.strip_suffix(b"\r").unwrap_or(l)))
            .filter(|(_, l)| !l.is_empty());
        let Some((header_line, header)) = lines.next() else {
            return Err(QueryError::EmptyFile { file: file.into() });
        };
        let decoder = CsvDecoder::new(header, header_line, file, schema, options)?;
        let mut columns: Vec<Vec<u32>> = vec![Vec::new(); domain.len()];
        let mut fields: Vec<Cow<'_, [u8]>> = Vec::new();
        for (line, text) in lines {
            decoder.push_record(line, text, &mut fields, &mut columns)?;
        }
        if columns.first().is_none_or(Vec::is_empty) && !allow_empty {
            return Err(QueryError::NoRecords { file: file.into() });
        }
        Dataset::build(domain, columns, allow_empty)
    }

    /// Writes the dataset as CSV: a header of attribute names in domain order, then the codes.
    /// The output loads back with [`Dataset::from_csv_reader`].
    pub fn write_csv<W: std::io::Write>(&self, w: W) -> Result<()> {
        let io = |e: csv::Error| match e.into_kind() {
            csv::ErrorKind::Io(source) => QueryError::Io {
                path: "<writer>".into(),
                source,
            },
            other => QueryError::Io {
                path: "<writer>".into(),
                source: std::io::Error::other(format!("{other:?}")),
            },
        };
        let mut wtr = csv::WriterBuilder::new().from_writer(w);
        wtr.write_record(self.domain().names()).map_err(io)?;
        let mut buf = Vec::with_capacity(self.domain().len());
        for r in 0..self.n() {
            buf.clear();
            buf.extend(self.columns().iter().map(|c| c[r].to_string()));
            wtr.write_record(&buf).map_err(io)?;
        }
        wtr.flush().map_err(|source| QueryError::Io {
            path: "<writer>".into(),
            source,
        })?;
        Ok(())
    }
}

/// The header mapping and record decoding of the CSV loaders (module docs), shared by
/// [`Dataset`]'s loaders and the streaming counter ([`crate::stream`]) so both accept and
/// refuse exactly the same input with the same errors.
pub(crate) struct CsvDecoder<'s> {
    file: String,
    schema: &'s Schema,
    names: Vec<String>,
    /// The attribute of each file column; `None` for an extra column that is ignored.
    col_to_attr: Vec<Option<usize>>,
    sizes: Vec<u32>,
    codes_only: bool,
    delimiter: u8,
}

impl<'s> CsvDecoder<'s> {
    /// Checks the header (`header_line` is its 1-based line) against the schema's domain.
    pub(crate) fn new(
        header: &[u8],
        header_line: u64,
        file: &str,
        schema: &'s Schema,
        options: &ReadOptions,
    ) -> Result<Self> {
        let domain = schema.domain();
        let mut fields: Vec<Cow<'_, [u8]>> = Vec::new();
        split_fields(header, options.delimiter(), &mut fields);
        let mut names: Vec<String> = Vec::with_capacity(fields.len());
        for raw in &fields {
            let name = std::str::from_utf8(raw).map_err(|_| QueryError::NonUtf8 {
                file: file.into(),
                line: header_line,
            })?;
            if names.iter().any(|n| n == name) {
                return Err(QueryError::DuplicateHeader {
                    file: file.into(),
                    column: name.into(),
                });
            }
            names.push(name.to_string());
        }
        let mut col_to_attr = Vec::with_capacity(names.len());
        for name in &names {
            match domain.index_of(name) {
                Ok(a) => col_to_attr.push(Some(a)),
                Err(_) if options.ignores_extra_columns() => col_to_attr.push(None),
                Err(_) => {
                    return Err(QueryError::ExtraColumn {
                        file: file.into(),
                        column: name.clone(),
                    });
                }
            }
        }
        for name in domain.names() {
            if !names.iter().any(|n| n == name) {
                return Err(QueryError::MissingColumn {
                    file: file.into(),
                    column: name.into(),
                });
            }
        }
        Ok(CsvDecoder {
            file: file.into(),
            schema,
            names,
            col_to_attr,
            sizes: domain.sizes().to_vec(),
            codes_only: schema.is_codes_only(),
            delimiter: options.delimiter(),
        })
    }

    /// The file's column names, in file order.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// The attribute of each file column (`None`: an ignored extra column).
    pub(crate) fn columns(&self) -> &[Option<usize>] {
        &self.col_to_attr
    }

    /// Splits one record's line into its fields by the file's delimiter.
    pub(crate) fn split<'a>(&self, text: &'a [u8], fields: &mut Vec<Cow<'a, [u8]>>) {
        split_fields(text, self.delimiter, fields);
    }

    /// Decodes one record (`line` its 1-based line) and appends its codes to `columns`
    /// (one per domain attribute). `fields` is scratch space. On an error nothing is
    /// guaranteed about `columns` (the caller stops).
    pub(crate) fn push_record<'a>(
        &self,
        line: u64,
        text: &'a [u8],
        fields: &mut Vec<Cow<'a, [u8]>>,
        columns: &mut [Vec<u32>],
    ) -> Result<()> {
        let file = self.file.as_str();
        split_fields(text, self.delimiter, fields);
        let width = self.col_to_attr.len();
        if fields.len() != width {
            return Err(QueryError::RaggedRow {
                file: file.into(),
                line,
                expected: width,
                found: fields.len(),
            });
        }
        for (j, field) in fields.iter().enumerate() {
            let Some(a) = self.col_to_attr[j] else {
                continue; // an ignored extra column
            };
            let size = self.sizes[a];
            if !self.codes_only {
                let value = std::str::from_utf8(field).map_err(|_| QueryError::NonUtf8 {
                    file: file.into(),
                    line,
                })?;
                match self.schema.encode(a, value) {
                    Ok(Some(code)) => {
                        columns[a].push(code);
                        continue;
                    }
                    Ok(None) => {} // integer codes, read below
                    Err(reason) => {
                        return Err(QueryError::OutsideSchema {
                            file: file.into(),
                            line,
                            column: self.names[j].clone(),
                            value: value.into(),
                            reason,
                        });
                    }
                }
            }
            match parse_code(field) {
                Some(v) if v < u64::from(size) => columns[a].push(v as u32),
                parsed => {
                    return Err(field_error(
                        file,
                        line,
                        &self.names[j],
                        field,
                        size,
                        parsed.is_some(),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn field_error(
    file: &str,
    line: u64,
    column: &str,
    field: &[u8],
    size: u32,
    parsed: bool,
) -> QueryError {
    let Ok(value) = std::str::from_utf8(field) else {
        return QueryError::NonUtf8 {
            file: file.into(),
            line,
        };
    };
    // All-digit fields are integers, even when they overflow u64.
    let all_digits = !field.is_empty() && field.iter().all(u8::is_ascii_digit);
    if parsed || all_digits {
        QueryError::OutOfDomain {
            file: file.into(),
            line,
            column: column.into(),
            value: value.into(),
            size,
        }
    } else {
        QueryError::NotInteger {
            file: file.into(),
            line,
            column: column.into(),
            value: value.into(),
        }
    }
}

/// Splits one line (without its terminator) into fields separated by `delimiter`.
///
/// A field that starts with `"` is quoted: it runs to the next `"` not followed by another
/// `"` (a doubled `""` stands for one `"`); bytes after the closing quote up to the next
/// delimiter are kept verbatim; an unterminated quote runs to the end of the line. Quoted
/// fields cannot span lines.
fn split_fields<'a>(line: &'a [u8], delimiter: u8, out: &mut Vec<Cow<'a, [u8]>>) {
    out.clear();
    let mut i = 0;
    loop {
        if line.get(i) == Some(&b'"') {
            let mut buf = Vec::new();
            i += 1;
            loop {
                match line.get(i) {
                    None => break,
                    Some(b'"') if line.get(i + 1) == Some(&b'"') => {
                        buf.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&b) => {
                        buf.push(b);
                        i += 1;
                    }
                }
            }
            let rest = line.get(i..).unwrap_or(&[]);
            let end = rest
                .iter()
                .position(|&b| b == delimiter)
                .unwrap_or(rest.len());
            buf.extend_from_slice(&rest[..end]);
            out.push(Cow::Owned(buf));
            i += end;
        } else {
            let rest = line.get(i..).unwrap_or(&[]);
            let end = rest
                .iter()
                .position(|&b| b == delimiter)
                .unwrap_or(rest.len());
            out.push(Cow::Borrowed(&rest[..end]));
            i += end;
        }
        // Now at a delimiter or at the end of the line.
        if i >= line.len() {
            return;
        }
        i += 1;
    }
}

/// Parses a field of ASCII digits; `None` if empty, not all digits, or overflowing `u64`.
fn parse_code(field: &[u8]) -> Option<u64> {
    if field.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in field {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}
