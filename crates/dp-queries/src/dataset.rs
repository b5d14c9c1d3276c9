//! Datasets: `n >= 1` records over a [`Domain`], stored column-major as integer codes.
//!
//! # CSV format accepted by the loaders
//!
//! * One header line of attribute names, matched to the domain **by name** (the column
//!   order of the file is free). Every domain attribute must appear exactly once and no
//!   other column may appear. A UTF-8 byte-order mark before the header is ignored.
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
//!   quoted fields cannot span lines. The whole input is read into memory first.
//! * Errors name the file, the 1-based physical line where the record starts (header =
//!   line 1 when the file does not start with blank lines) and the column name. Within a
//!   record, the field count is checked first ([`QueryError::RaggedRow`]), then the fields
//!   left to right ([`QueryError::NonUtf8`], [`QueryError::NotInteger`],
//!   [`QueryError::OutOfDomain`], [`QueryError::OutsideSchema`]). Header checks run in the order: UTF-8, duplicate,
//!   extra column (first in file order), missing column (first in domain order).
//! * No input panics the loader (a property test feeds it random bytes).

use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::path::Path;

use rand::Rng;

use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::schema::Schema;

/// Label used in errors for data that does not come from a named file.
pub const IN_MEMORY: &str = "<memory>";

/// `n >= 1` records over a [`Domain`], column-major: `column(i)[r]` is the code of attribute
/// `i` in record `r`, always `< domain.size(i)`.
///
/// The one exception is a dataset built by [`Dataset::empty`] or loaded by
/// [`Dataset::load_csv_allowing_empty`]: it may have `n = 0`. Those constructors exist for
/// releases under add/remove neighbours, where the empty dataset is a valid input (refusing
/// it would distinguish it from its one-record neighbours); every other constructor refuses
/// zero records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    domain: Domain,
    columns: Vec<Vec<u32>>,
    n: usize,
}

impl Dataset {
    /// Builds a dataset from one column of codes per domain attribute (in domain order).
    ///
    /// Errors: wrong number of columns or unequal column lengths
    /// ([`QueryError::LengthMismatch`]), zero records ([`QueryError::EmptyDataset`]), a code
    /// `>= size` ([`QueryError::CodeOutOfRange`]).
    pub fn from_columns(domain: Domain, columns: Vec<Vec<u32>>) -> Result<Self> {
        Self::build(domain, columns, false)
    }

    /// The dataset with no records over `domain` (`n = 0`), for add/remove releases.
    pub fn empty(domain: Domain) -> Self {
        let columns = vec![Vec::new(); domain.len()];
        Dataset {
            domain,
            columns,
            n: 0,
        }
    }

    /// A dataset from columns whose codes a decoder has already checked (one column per
    /// attribute, equal lengths, every code `< size`; `n = 0` allowed): no second pass
    /// over the codes. Debug builds check the claim.
    pub(crate) fn from_validated_columns(domain: Domain, columns: Vec<Vec<u32>>) -> Self {
        debug_assert!(Self::build(domain.clone(), columns.clone(), true).is_ok());
        let n = columns.first().map_or(0, Vec::len);
        Dataset { domain, columns, n }
    }

    /// The columns of codes, in domain order (the dataset consumed).
    pub fn into_columns(self) -> Vec<Vec<u32>> {
        self.columns
    }

    fn build(domain: Domain, columns: Vec<Vec<u32>>, allow_empty: bool) -> Result<Self> {
        if columns.len() != domain.len() {
            return Err(QueryError::LengthMismatch {
                expected: domain.len(),
                found: columns.len(),
            });
        }
        let n = columns.first().map_or(0, Vec::len);
        if n == 0 && !allow_empty {
            return Err(QueryError::EmptyDataset);
        }
        for (i, col) in columns.iter().enumerate() {
            if col.len() != n {
                return Err(QueryError::LengthMismatch {
                    expected: n,
                    found: col.len(),
                });
            }
            let size = domain.size(i);
            if let Some(row) = col.iter().position(|&c| c >= size) {
                return Err(QueryError::CodeOutOfRange {
                    attribute: domain.name(i).to_string(),
                    row,
                    value: col[row],
                    size,
                });
            }
        }
        Ok(Dataset { domain, columns, n })
    }

    /// Loads `csv_path` against the domain or schema in `domain_path` (a JSON object of
    /// sizes, labels or bins, see [`crate::schema`]). Columns are matched by name; see the
    /// module docs for the accepted format. A gzip-compressed file (named `.gz`, or starting
    /// with the gzip magic bytes) is decompressed while it is read.
    pub fn load_csv(csv_path: &Path, domain_path: &Path) -> Result<Self> {
        Self::load(csv_path, domain_path, false)
    }

    /// [`Dataset::load_csv`], except that a file with a header and no records gives the
    /// empty dataset (`n = 0`) instead of [`QueryError::NoRecords`]: for releases under
    /// add/remove neighbours, where the empty dataset must be releasable.
    pub fn load_csv_allowing_empty(csv_path: &Path, domain_path: &Path) -> Result<Self> {
        Self::load(csv_path, domain_path, true)
    }

    /// Loads `path` against the domain or schema in `domain_path`: a Parquet file (by
    /// [`is_parquet`]; read with the cargo feature `parquet`, see
    /// `parquet_input` (module docs)), else CSV ([`Dataset::load_csv`]).
    ///
    /// Errors: those of the CSV or Parquet loader; [`QueryError::ParquetUnsupported`] for a
    /// Parquet file in a build without the feature.
    pub fn load_file(path: &Path, domain_path: &Path) -> Result<Self> {
        Self::load_any(path, domain_path, false)
    }

    /// [`Dataset::load_file`], except that a file with no records gives the empty dataset
    /// (`n = 0`), as [`Dataset::load_csv_allowing_empty`] does.
    pub fn load_file_allowing_empty(path: &Path, domain_path: &Path) -> Result<Self> {
        Self::load_any(path, domain_path, true)
    }

    fn load_any(path: &Path, domain_path: &Path, allow_empty: bool) -> Result<Self> {
        if !is_parquet(path) {
            return Self::load(path, domain_path, allow_empty);
        }
        let schema = Schema::from_json_file(domain_path)?;
        Self::from_parquet(path, &schema, allow_empty)
    }

    /// Loads the Parquet file `path` against `schema` (`parquet_input` (module docs): columns
    /// matched by name, the CSV loader's validation, errors located by row group, row and
    /// column). With `allow_empty` a file with no rows is the empty dataset, else
    /// [`QueryError::NoRecords`].
    ///
    /// Errors: without the cargo feature `parquet`, always
    /// [`QueryError::ParquetUnsupported`].
    pub fn from_parquet(path: &Path, schema: &Schema, allow_empty: bool) -> Result<Self> {
        #[cfg(feature = "parquet")]
        {
            crate::parquet_input::load_parquet(path, schema, allow_empty)
        }
        #[cfg(not(feature = "parquet"))]
        {
            let _ = (schema, allow_empty);
            Err(QueryError::ParquetUnsupported {
                file: path.display().to_string(),
            })
        }
    }

    fn load(csv_path: &Path, domain_path: &Path, allow_empty: bool) -> Result<Self> {
        let schema = Schema::from_json_file(domain_path)?;
        let reader = open_csv(csv_path)?;
        let label = csv_path.display().to_string();
        Self::read_csv(reader, &label, &schema, allow_empty).map_err(|e| match e {
            QueryError::Io { source, .. } => QueryError::Io {
                path: csv_path.to_path_buf(),
                source,
            },
            other => other,
        })
    }

    /// Parses CSV from `reader` (read fully into memory first); `file` labels error
    /// messages. See the module docs for the accepted format.
    pub fn from_csv_reader<Rd: Read>(reader: Rd, file: &str, domain: Domain) -> Result<Self> {
        Self::read_csv(reader, file, &Schema::codes(domain), false)
    }

    /// Parses CSV of raw values from `reader`, encoded through `schema` (labels, bins or
    /// codes per attribute; see [`crate::schema`]); `file` labels error messages. The
    /// dataset is over `schema.domain()`.
    pub fn from_csv_reader_with_schema<Rd: Read>(
        reader: Rd,
        file: &str,
        schema: &Schema,
    ) -> Result<Self> {
        Self::read_csv(reader, file, schema, false)
    }

    fn read_csv<Rd: Read>(
        mut reader: Rd,
        file: &str,
        schema: &Schema,
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
        let decoder = CsvDecoder::new(header, header_line, file, schema)?;
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

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// Number of records `n` (`>= 1`, except for the explicitly empty datasets of
    /// [`Dataset::empty`] and [`Dataset::load_csv_allowing_empty`]).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Codes of attribute `i`, one per record (empty slice if `i` is out of range).
    pub fn column(&self, i: usize) -> &[u32] {
        self.columns.get(i).map_or(&[], Vec::as_slice)
    }

    /// All columns in domain order.
    pub fn columns(&self) -> &[Vec<u32>] {
        &self.columns
    }

    /// Record `row` as codes in domain order (empty if `row >= n`).
    pub fn record(&self, row: usize) -> Vec<u32> {
        if row >= self.n {
            return Vec::new();
        }
        self.columns.iter().map(|c| c[row]).collect()
    }

    /// The dataset restricted to the attributes `names`, in that order.
    ///
    /// Errors: [`QueryError::UnknownAttribute`], or [`QueryError::BadDomain`] for an empty or
    /// repeated list.
    pub fn select_attributes(&self, names: &[&str]) -> Result<Dataset> {
        let idx = names
            .iter()
            .map(|n| self.domain.index_of(n))
            .collect::<Result<Vec<_>>>()?;
        let domain = self.domain.project(&idx)?;
        let columns = idx.iter().map(|&i| self.columns[i].clone()).collect();
        Ok(Dataset {
            domain,
            columns,
            n: self.n,
        })
    }

    /// `n` records drawn uniformly without replacement (kept in their original order).
    ///
    /// Errors with [`QueryError::BadSample`] unless `1 <= n <= self.n()`.
    pub fn subsample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Result<Dataset> {
        if n == 0 || n > self.n {
            return Err(QueryError::BadSample {
                requested: n,
                available: self.n,
            });
        }
        let mut rows = rand::seq::index::sample(rng, self.n, n).into_vec();
        rows.sort_unstable();
        let columns = self
            .columns
            .iter()
            .map(|c| rows.iter().map(|&r| c[r]).collect())
            .collect();
        Ok(Dataset {
            domain: self.domain.clone(),
            columns,
            n,
        })
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
        wtr.write_record(self.domain.names()).map_err(io)?;
        let mut buf = Vec::with_capacity(self.domain.len());
        for r in 0..self.n {
            buf.clear();
            buf.extend(self.columns.iter().map(|c| c[r].to_string()));
            wtr.write_record(&buf).map_err(io)?;
        }
        wtr.flush().map_err(|source| QueryError::Io {
            path: "<writer>".into(),
            source,
        })?;
        Ok(())
    }
}

/// Whether `path` names a Parquet file: its name ends in `.parquet` (any case), or its
/// first four bytes are the Parquet magic `PAR1` (a file that cannot be read is not).
pub fn is_parquet(path: &Path) -> bool {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
    {
        return true;
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"PAR1")
}

/// Opens the CSV file `path` for reading, decompressing it on the fly when it is
/// gzip-compressed — named `.gz`, or starting with the gzip magic bytes `1f 8b` whatever its
/// name — so that the loaders ([`Dataset::load_file`]) and the streaming counters
/// ([`crate::count_csv_streaming`] through `dpqr release --stream`) accept the same files.
///
/// Errors: [`QueryError::Io`] naming the file when it cannot be opened or its first bytes
/// cannot be read (a damaged gzip stream is reported later, by the reader, as an I/O error).
pub fn open_csv(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let io = |source| QueryError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
    let named_gz = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let gzip = named_gz || reader.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        Box::new(std::io::BufReader::new(flate2::read::MultiGzDecoder::new(
            reader,
        )))
    } else {
        Box::new(reader)
    })
}

/// The header mapping and record decoding of the CSV loaders (module docs), shared by
/// [`Dataset`]'s loaders and the streaming counter ([`crate::stream`]) so both accept and
/// refuse exactly the same input with the same errors.
pub(crate) struct CsvDecoder<'s> {
    file: String,
    schema: &'s Schema,
    names: Vec<String>,
    col_to_attr: Vec<usize>,
    sizes: Vec<u32>,
    codes_only: bool,
}

impl<'s> CsvDecoder<'s> {
    /// Checks the header (`header_line` is its 1-based line) against the schema's domain.
    pub(crate) fn new(
        header: &[u8],
        header_line: u64,
        file: &str,
        schema: &'s Schema,
    ) -> Result<Self> {
        let domain = schema.domain();
        let mut fields: Vec<Cow<'_, [u8]>> = Vec::new();
        split_fields(header, &mut fields);
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
            let a = domain.index_of(name).map_err(|_| QueryError::ExtraColumn {
                file: file.into(),
                column: name.clone(),
            })?;
            col_to_attr.push(a);
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
        })
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
        split_fields(text, fields);
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
            let a = self.col_to_attr[j];
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

/// Splits one line (without its terminator) into comma-separated fields.
///
/// A field that starts with `"` is quoted: it runs to the next `"` not followed by another
/// `"` (a doubled `""` stands for one `"`); bytes after the closing quote up to the next
/// comma are kept verbatim; an unterminated quote runs to the end of the line. Quoted
/// fields cannot span lines.
fn split_fields<'a>(line: &'a [u8], out: &mut Vec<Cow<'a, [u8]>>) {
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
            let end = rest.iter().position(|&b| b == b',').unwrap_or(rest.len());
            buf.extend_from_slice(&rest[..end]);
            out.push(Cow::Owned(buf));
            i += end;
        } else {
            let rest = line.get(i..).unwrap_or(&[]);
            let end = rest.iter().position(|&b| b == b',').unwrap_or(rest.len());
            out.push(Cow::Borrowed(&rest[..end]));
            i += end;
        }
        // Now at a comma or at the end of the line.
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
