//! Data files by path: the one place where dp-queries tells CSV, gzip-compressed CSV and
//! Parquet apart, and the loaders and counters that open a file and choose its reader by it
//! (the readers themselves: [`super::csv`], [`super::stream`], `super::parquet`).
//!
//! | rule | decides | used by |
//! |---|---|---|
//! | [`is_parquet`] | Parquet (a `.parquet` name or the `PAR1` magic bytes) or CSV | [`Dataset::load_file`], [`count_file_streaming`] |
//! | [`open_csv`] | gzip-compressed (a `.gz` name or the magic bytes `1f 8b`) or plain CSV | the CSV loaders ([`Dataset::load_csv`]), [`count_file_streaming`] |
//! | [`FileFormat::of_path`] | `.csv` or `.parquet` by name only, anything else refused | the engines (feature `datafusion`), which read files by path and do not read gzip |

use std::io::{BufRead, Read};
use std::path::Path;

use super::options::ReadOptions;
use super::stream::{StreamSettings, StreamedCounts, count_csv_streaming};
use crate::dataset::Dataset;
use crate::error::{QueryError, Result};
use crate::schema::Schema;
use crate::workload::Workload;

/// The format of an input file for the engines, from its name alone ([`FileFormat::of_path`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// Comma-separated values with a header line (`.csv`).
    Csv,
    /// Apache Parquet (`.parquet`).
    Parquet,
}

impl FileFormat {
    /// `.csv` or `.parquet` (any case); anything else is refused with a message naming the
    /// formats read.
    pub fn of_path(path: &Path, engine: &str) -> Result<FileFormat> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("csv") => Ok(FileFormat::Csv),
            Some("parquet") => Ok(FileFormat::Parquet),
            _ => Err(QueryError::EngineUnsupported {
                engine: engine.into(),
                reason: format!(
                    "{} is not a .csv or .parquet file (the engine reads those two; compressed \
                     CSV is read by the native loader)",
                    path.display()
                ),
            }),
        }
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
/// ([`count_file_streaming`], through `dpqr release --stream`) accept the same files.
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

impl Dataset {
    /// Loads `csv_path` against the domain or schema in `domain_path` (a JSON object of
    /// sizes, labels or bins, see [`crate::schema`]). Columns are matched by name; see
    /// [`super::csv`] (module docs) for the accepted format. A gzip-compressed file (named
    /// `.gz`, or starting with the gzip magic bytes) is decompressed while it is read.
    pub fn load_csv(csv_path: &Path, domain_path: &Path) -> Result<Self> {
        Self::load_csv_file(csv_path, domain_path, false)
    }

    /// [`Dataset::load_csv`], except that a file with a header and no records gives the
    /// empty dataset (`n = 0`) instead of [`QueryError::NoRecords`]: for releases under
    /// add/remove neighbours, where the empty dataset must be releasable.
    pub fn load_csv_allowing_empty(csv_path: &Path, domain_path: &Path) -> Result<Self> {
        Self::load_csv_file(csv_path, domain_path, true)
    }

    /// The CSV loader of [`Dataset::load_csv`], its `allowing_empty` form and
    /// [`Dataset::load_file`].
    fn load_csv_file(csv_path: &Path, domain_path: &Path, allow_empty: bool) -> Result<Self> {
        let schema = Schema::from_json_file(domain_path)?;
        Self::load_csv_with(csv_path, &schema, &ReadOptions::default(), allow_empty)
    }

    /// The CSV loader of every path-based loader, over a schema already read.
    fn load_csv_with(
        csv_path: &Path,
        schema: &Schema,
        options: &ReadOptions,
        allow_empty: bool,
    ) -> Result<Self> {
        let reader = open_csv(csv_path)?;
        let label = csv_path.display().to_string();
        Self::read_csv(reader, &label, schema, options, allow_empty).map_err(|e| match e {
            QueryError::Io { source, .. } => QueryError::Io {
                path: csv_path.to_path_buf(),
                source,
            },
            other => other,
        })
    }

    /// Loads `path` against the domain or schema in `domain_path`: a Parquet file (by
    /// [`is_parquet`]; read with the cargo feature `parquet`, see `io/parquet.rs` (module
    /// docs)), else CSV ([`Dataset::load_csv`]).
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
        let schema = Schema::from_json_file(domain_path)?;
        Self::load_file_with(path, &schema, &ReadOptions::default(), allow_empty)
    }

    /// Loads `path` through `schema` as [`Dataset::load_file`] does (Parquet by
    /// [`is_parquet`], else CSV, gzip-compressed or not), read as `options` say: the CSV
    /// delimiter, and whether columns outside the schema are ignored (CSV and Parquet). With
    /// `allow_empty` a file with no records is the empty dataset.
    ///
    /// Errors: those of the CSV or Parquet loader; [`QueryError::ParquetUnsupported`] for a
    /// Parquet file in a build without the feature.
    pub fn load_file_with(
        path: &Path,
        schema: &Schema,
        options: &ReadOptions,
        allow_empty: bool,
    ) -> Result<Self> {
        if !is_parquet(path) {
            return Self::load_csv_with(path, schema, options, allow_empty);
        }
        #[cfg(feature = "parquet")]
        {
            super::parquet::load_parquet(path, schema, options, allow_empty)
        }
        #[cfg(not(feature = "parquet"))]
        {
            let _ = (schema, options, allow_empty);
            Err(QueryError::ParquetUnsupported {
                file: path.display().to_string(),
            })
        }
    }

    /// Loads the Parquet file `path` against `schema` (`io/parquet.rs` (module docs): columns
    /// matched by name, the CSV loader's validation, errors located by row group, row and
    /// column). With `allow_empty` a file with no rows is the empty dataset, else
    /// [`QueryError::NoRecords`].
    ///
    /// Errors: without the cargo feature `parquet`, always
    /// [`QueryError::ParquetUnsupported`].
    pub fn from_parquet(path: &Path, schema: &Schema, allow_empty: bool) -> Result<Self> {
        #[cfg(feature = "parquet")]
        {
            super::parquet::load_parquet(path, schema, &ReadOptions::default(), allow_empty)
        }
        #[cfg(not(feature = "parquet"))]
        {
            let _ = (schema, allow_empty);
            Err(QueryError::ParquetUnsupported {
                file: path.display().to_string(),
            })
        }
    }
}

/// Checks the header of the data file `path` against `schema` as the loaders would, and
/// reads nothing else: for a CSV (gzip-compressed or not) its first non-blank line, the
/// column names, checked by the loaders' own header check ([`super::csv`] module docs: UTF-8,
/// duplicate, extra column unless `options` ignore them, missing column); for a Parquet file
/// ([`is_parquet`]) the column names and types in its footer. No record is read, so no data
/// value is (a release's dry run calls this: `dpqr release --dry-run`, issue #26 item 4).
///
/// Errors: [`QueryError::Io`] naming the file when it cannot be opened or read,
/// [`QueryError::EmptyFile`] when it has no header, the header errors of the loaders;
/// [`QueryError::ParquetUnsupported`] for a Parquet file in a build without the feature.
pub fn check_file_header(path: &Path, schema: &Schema, options: &ReadOptions) -> Result<()> {
    if is_parquet(path) {
        #[cfg(feature = "parquet")]
        {
            return super::parquet::check_parquet_columns(path, schema, options);
        }
        #[cfg(not(feature = "parquet"))]
        {
            return Err(QueryError::ParquetUnsupported {
                file: path.display().to_string(),
            });
        }
    }
    let label = path.display().to_string();
    let mut reader = open_csv(path)?;
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|source| QueryError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            return Err(QueryError::EmptyFile { file: label });
        }
        number += 1;
        let mut text: &[u8] = &line;
        if number == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if !text.is_empty() {
            return super::csv::CsvDecoder::new(text, number, &label, schema, options).map(drop);
        }
    }
}

/// Counts `workload` over the file `path` in one streaming pass, in bounded memory: a Parquet
/// file ([`is_parquet`]) with `count_parquet_streaming` (cargo feature `parquet`), else a CSV
/// file, gzip-compressed or not ([`open_csv`]), with [`count_csv_streaming`]; `schema` is the
/// file's public schema, `options` the delimiter and the treatment of extra columns, and
/// errors name the file as `path` is written. A file with no
/// records gives zero counts and `rows = 0` (the caller decides whether that is an error).
///
/// Errors: those of the streaming counter; [`QueryError::ParquetUnsupported`] for a Parquet
/// file in a build without the feature.
pub fn count_file_streaming<W: Workload + ?Sized>(
    path: &Path,
    schema: &Schema,
    options: &ReadOptions,
    workload: &W,
    settings: &StreamSettings,
) -> Result<StreamedCounts> {
    if is_parquet(path) {
        #[cfg(feature = "parquet")]
        {
            return super::parquet::count_parquet_streaming(
                path, schema, options, workload, settings,
            );
        }
        #[cfg(not(feature = "parquet"))]
        {
            return Err(QueryError::ParquetUnsupported {
                file: path.display().to_string(),
            });
        }
    }
    let label = path.display().to_string();
    count_csv_streaming(open_csv(path)?, &label, schema, options, workload, settings)
}
