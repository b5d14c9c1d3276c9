//! Parquet input (cargo feature `parquet`): loading a [`Dataset`], counting a workload in one
//! streaming pass, and writing codes as Parquet.
//!
//! # Parquet files accepted
//!
//! * The file's top-level columns are matched to the domain **by name**, as a CSV header is:
//!   every attribute must have exactly one column and no other column may appear (the order
//!   is free) — unless the [`ReadOptions`] ignore extra columns: then they are skipped
//!   unread, whatever their type.
//! * An attribute that holds integer codes (a plain size in the domain or schema file) must be
//!   an **integer column** of any width, signed or unsigned (or dictionary-encoded integers),
//!   holding codes in `0..size`. A text column for such an attribute is refused with a message
//!   saying what to do: store the codes as integers, or give the attribute its labels in the
//!   public schema ([`crate::schema`]).
//! * An attribute with labels or bins in the schema may be a **text column** (plain or
//!   dictionary-encoded) or a **numeric column** (integer or floating point); each value is
//!   encoded through the schema exactly as the same value written in a CSV file would be (a
//!   number as its shortest decimal text), so a Parquet file and the CSV file of the same
//!   values give the same dataset and the same counts.
//! * **Nulls**: a null is an empty cell, as an empty CSV field is: in a labels/bins column it
//!   goes to the `missing` code, or without one to the `other` bucket; in a code column, or
//!   a column with neither, it is refused.
//! * Errors name the file, the **row group and the row within it (both counted from 0, as
//!   Parquet tools count them)** and the column ([`QueryError::ParquetValue`]); within a
//!   batch the first bad row is reported, and in it the leftmost bad column in file order.
//!   Column mismatches are [`QueryError::ParquetColumn`], unreadable files
//!   [`QueryError::ParquetRead`].
//!
//! # Streaming
//!
//! [`count_parquet_streaming`] runs the pipeline of [`super::stream`] with one **row group**
//! per unit: every worker opens the file itself and decodes its row groups batch by batch, so
//! Parquet decoding runs in parallel too. A file with fewer row groups than workers (one row
//! group, say) is decoded by fewer workers, and its batches are then counted with rayon inside
//! each batch. Memory: a batch of arrow arrays and of codes per worker, never the whole table.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch, UInt8Array, UInt16Array,
    UInt32Array,
};
use arrow_schema::{DataType, Field};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::options::ReadOptions;
use super::stream::{
    BatchCounter, StreamSettings, StreamedCounts, check_settings, run_pipeline, worker_count,
};
use crate::dataset::Dataset;
use crate::domain::Domain;
use crate::error::{QueryError, Result};
use crate::schema::{Encoding, Schema};
use crate::workload::Parallelism;
use crate::workload::Workload;

/// Checks the columns of the Parquet file `path` against `schema` from its footer alone
/// (names and types, the loader's checks and errors); no row is read.
pub(crate) fn check_parquet_columns(
    path: &Path,
    schema: &Schema,
    options: &ReadOptions,
) -> Result<()> {
    ParquetPlan::open(path, schema, options).map(drop)
}

/// Loads the Parquet file `path` against `schema` (module docs). With `allow_empty` a file
/// with no rows gives the empty dataset (`n = 0`, for add/remove releases); without, it is
/// [`QueryError::NoRecords`].
pub(crate) fn load_parquet(
    path: &Path,
    schema: &Schema,
    options: &ReadOptions,
    allow_empty: bool,
) -> Result<Dataset> {
    let plan = ParquetPlan::open(path, schema, options)?;
    let mut sink = Collect(vec![Vec::new(); schema.domain().len()]);
    for g in 0..plan.num_row_groups() {
        plan.read_row_group(g, 1 << 16, &mut sink)?;
    }
    let columns = sink.0;
    if columns.first().is_none_or(Vec::is_empty) && !allow_empty {
        return Err(QueryError::NoRecords {
            file: plan.file.clone(),
        });
    }
    Ok(Dataset::from_validated_columns(
        schema.domain().clone(),
        columns,
    ))
}

/// Counts `workload` over the rows of the Parquet file `path` in one streaming pass, in
/// bounded memory, row groups decoded and counted in parallel ([`super::stream`], module
/// docs): the file's columns are matched to `schema`'s domain by name and every value
/// validated as [`Dataset::load_file`] does. A file with no rows gives zero counts and
/// `rows = 0` (the caller decides whether that is an error). Equal, bit for bit, to
/// [`Workload::count_all`] on the loaded dataset, whatever the batch size and thread count.
///
/// Errors: those of the loader (file, row group, row, column), the workload over another
/// domain ([`QueryError::DomainMismatch`]), `batch_rows = 0`, an I/O error.
pub fn count_parquet_streaming<W: Workload + ?Sized>(
    path: &Path,
    schema: &Schema,
    options: &ReadOptions,
    workload: &W,
    settings: &StreamSettings,
) -> Result<StreamedCounts> {
    check_settings(schema.domain(), workload, settings)?;
    let plan = ParquetPlan::open(path, schema, options)?;
    let mut groups = 0..plan.num_row_groups();
    let produce = || Ok(groups.next());
    let process = |g: usize, counter: &mut BatchCounter<'_, W>| {
        plan.read_row_group(g, settings.batch_rows, counter)
    };
    // few row groups (a file of one row group): the batches' counts use the idle threads
    let inner = if plan.num_row_groups() < worker_count(settings) {
        settings.parallelism
    } else {
        Parallelism::None
    };
    run_pipeline(schema.domain(), workload, settings, inner, produce, process)
}

/// Writes datasets as Parquet: one unsigned integer column of codes per attribute (8, 16 or
/// 32 bits, the narrowest that holds the attribute's codes), Snappy-compressed, in row
/// groups of at most `rows_per_group` rows. The file loads back with [`Dataset::load_file`]
/// against the same domain.
pub struct ParquetCodesWriter<W: std::io::Write + Send> {
    domain: Domain,
    schema: arrow_schema::SchemaRef,
    writer: ArrowWriter<W>,
}

impl<W: std::io::Write + Send> ParquetCodesWriter<W> {
    /// A writer of records over `domain` into `sink`, with row groups of at most
    /// `rows_per_group` rows (≥ 1).
    ///
    /// Errors: `rows_per_group = 0` ([`QueryError::BadWorkload`]), a write error.
    pub fn new(sink: W, domain: &Domain, rows_per_group: usize) -> Result<Self> {
        if rows_per_group == 0 {
            return Err(QueryError::BadWorkload {
                reason: "a Parquet row group must hold at least one row".into(),
            });
        }
        let fields: Vec<Field> = (0..domain.len())
            .map(|i| Field::new(domain.name(i), code_type(domain.size(i)), false))
            .collect();
        let schema = Arc::new(arrow_schema::Schema::new(fields));
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(rows_per_group))
            .build();
        let writer = ArrowWriter::try_new(sink, schema.clone(), Some(props))
            .map_err(|e| write_error(&e.to_string()))?;
        Ok(ParquetCodesWriter {
            domain: domain.clone(),
            schema,
            writer,
        })
    }

    /// Appends the records of `data` (over the writer's domain).
    ///
    /// Errors: another domain ([`QueryError::DomainMismatch`]), a write error.
    pub fn write(&mut self, data: &Dataset) -> Result<()> {
        if data.domain() != &self.domain {
            return Err(QueryError::DomainMismatch {
                reason: "the records are over another domain than the Parquet writer's".into(),
            });
        }
        if data.n() == 0 {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = (0..self.domain.len())
            .map(|i| -> ArrayRef {
                let col = data.column(i);
                match code_type(self.domain.size(i)) {
                    DataType::UInt8 => {
                        Arc::new(UInt8Array::from_iter_values(col.iter().map(|&c| c as u8)))
                    }
                    DataType::UInt16 => {
                        Arc::new(UInt16Array::from_iter_values(col.iter().map(|&c| c as u16)))
                    }
                    _ => Arc::new(UInt32Array::from(col.to_vec())),
                }
            })
            .collect();
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| write_error(&e.to_string()))?;
        self.writer
            .write(&batch)
            .map_err(|e| write_error(&e.to_string()))
    }

    /// Finishes the file (writes the footer) and returns the sink.
    ///
    /// Errors: a write error.
    pub fn finish(self) -> Result<W> {
        self.writer
            .into_inner()
            .map_err(|e| write_error(&e.to_string()))
    }
}

/// The narrowest unsigned integer type holding the codes `0..size`.
fn code_type(size: u32) -> DataType {
    if size <= 1 << 8 {
        DataType::UInt8
    } else if size <= 1 << 16 {
        DataType::UInt16
    } else {
        DataType::UInt32
    }
}

fn write_error(message: &str) -> QueryError {
    QueryError::Io {
        path: "<Parquet writer>".into(),
        source: std::io::Error::other(message.to_string()),
    }
}

/// Receives decoded batches: the code columns to append to, and the end of each batch.
pub(crate) trait BatchSink {
    /// The code columns (domain order) the next batch is appended to.
    fn columns(&mut self) -> &mut [Vec<u32>];
    /// Called after each batch has been appended.
    fn end_batch(&mut self) -> Result<()>;
}

impl<W: Workload + ?Sized> BatchSink for BatchCounter<'_, W> {
    fn columns(&mut self) -> &mut [Vec<u32>] {
        &mut self.columns
    }
    fn end_batch(&mut self) -> Result<()> {
        self.count_batch()
    }
}

/// Keeps every batch (the in-memory loader).
struct Collect(Vec<Vec<u32>>);

impl BatchSink for Collect {
    fn columns(&mut self) -> &mut [Vec<u32>] {
        &mut self.0
    }
    fn end_batch(&mut self) -> Result<()> {
        Ok(())
    }
}

/// How a file column becomes the codes of its attribute.
struct ColumnPlan {
    /// The domain attribute.
    attr: usize,
    /// The column (= attribute) name.
    name: String,
    /// The attribute's size.
    size: u32,
    /// Whether the attribute holds integer codes (else it is encoded through the schema).
    codes: bool,
    /// The column's index among the file's columns.
    file_index: usize,
    /// The code of a null (an empty cell: `missing`, else `other`), if any.
    null_code: Option<u32>,
}

/// An opened Parquet file whose columns have been matched to the domain.
struct ParquetPlan<'s> {
    path: PathBuf,
    file: String,
    schema: &'s Schema,
    metadata: ArrowReaderMetadata,
    /// One plan per file column, in file order.
    columns: Vec<ColumnPlan>,
}

impl<'s> ParquetPlan<'s> {
    fn open(path: &Path, schema: &'s Schema, options: &ReadOptions) -> Result<Self> {
        let file_label = path.display().to_string();
        let f = File::open(path).map_err(|source| QueryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let metadata = ArrowReaderMetadata::load(&f, ArrowReaderOptions::new()).map_err(|e| {
            QueryError::ParquetRead {
                file: file_label.clone(),
                message: parquet_message(&e),
            }
        })?;
        let domain = schema.domain();
        let fields = metadata.schema().fields().clone();
        let column_error = |column: &str, reason: String| QueryError::ParquetColumn {
            file: file_label.clone(),
            column: column.into(),
            reason,
        };
        // same order of checks as a CSV header: duplicate, extra (file order), missing
        // (domain order), then the types (file order)
        for (j, f) in fields.iter().enumerate() {
            if fields[..j].iter().any(|g| g.name() == f.name()) {
                return Err(column_error(
                    f.name(),
                    "the file has two columns of this name".into(),
                ));
            }
        }
        let mut columns = Vec::with_capacity(fields.len());
        for (file_index, f) in fields.iter().enumerate() {
            let attr = match domain.index_of(f.name()) {
                Ok(attr) => attr,
                Err(_) if options.ignores_extra_columns() => continue,
                Err(_) => {
                    return Err(column_error(
                        f.name(),
                        "not an attribute of the domain (every column of the file must be \
                         one, unless extra columns are ignored: dpqr's --ignore-extra-columns)"
                            .into(),
                    ));
                }
            };
            let attribute = schema.attribute(attr);
            let codes = attribute.is_none_or(|a| a.encoding() == &Encoding::Codes);
            columns.push(ColumnPlan {
                attr,
                name: f.name().clone(),
                size: domain.size(attr),
                codes,
                file_index,
                null_code: attribute.and_then(|a| a.empty_code()),
            });
        }
        for name in domain.names() {
            if !fields.iter().any(|f| f.name() == name) {
                return Err(column_error(
                    name,
                    "the file has no column of this name (required by the domain)".into(),
                ));
            }
        }
        for c in &columns {
            check_type(fields[c.file_index].data_type(), c)
                .map_err(|reason| column_error(&c.name, reason))?;
        }
        Ok(ParquetPlan {
            path: path.to_path_buf(),
            file: file_label,
            schema,
            metadata,
            columns,
        })
    }

    fn num_row_groups(&self) -> usize {
        self.metadata.metadata().num_row_groups()
    }

    /// Decodes row group `g` in batches of at most `batch_rows` rows into `sink`.
    fn read_row_group(&self, g: usize, batch_rows: usize, sink: &mut dyn BatchSink) -> Result<()> {
        let read_error = |message: String| QueryError::ParquetRead {
            file: self.file.clone(),
            message,
        };
        let f = File::open(&self.path).map_err(|source| QueryError::Io {
            path: self.path.clone(),
            source,
        })?;
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(f, self.metadata.clone())
            .with_batch_size(batch_rows)
            .with_row_groups(vec![g])
            .build()
            .map_err(|e| read_error(parquet_message(&e)))?;
        let mut row: u64 = 0;
        for batch in reader {
            let batch = batch.map_err(|e| read_error(arrow_message(&e)))?;
            let columns = sink.columns();
            // the first bad row of the batch, and in it the leftmost bad column
            let mut first: Option<(usize, usize, Problem)> = None;
            for (j, plan) in self.columns.iter().enumerate() {
                let out = &mut columns[plan.attr];
                if let Err((i, problem)) =
                    decode_column(batch.column(plan.file_index), plan, self.schema, out)
                    && first.as_ref().is_none_or(|(fi, _, _)| i < *fi)
                {
                    first = Some((i, j, problem));
                }
            }
            if let Some((i, j, problem)) = first {
                return Err(QueryError::ParquetValue {
                    file: self.file.clone(),
                    row_group: g,
                    row: row + i as u64,
                    column: self.columns[j].name.clone(),
                    problem: problem.describe(self.columns[j].size),
                });
            }
            row += batch.num_rows() as u64;
            sink.end_batch()?;
        }
        Ok(())
    }
}

/// The Parquet reader's error in words, without its internal kind label.
fn parquet_message(e: &parquet::errors::ParquetError) -> String {
    use parquet::errors::ParquetError as E;
    match e {
        E::General(m) | E::EOF(m) | E::ArrowError(m) => format!("damaged or not Parquet ({m})"),
        E::NYI(m) => format!("it uses a Parquet feature this reader lacks ({m})"),
        E::External(source) => source.to_string(),
        other => other.to_string(),
    }
}

/// An error while decoding record batches, in words, without its internal kind label.
fn arrow_message(e: &arrow_schema::ArrowError) -> String {
    use arrow_schema::ArrowError as E;
    match e {
        E::ParquetError(m) => format!("damaged or not Parquet ({m})"),
        E::ExternalError(source) => source.to_string(),
        E::IoError(m, _) => m.clone(),
        other => other.to_string(),
    }
}

/// Whether a column of type `t` can hold the values of the attribute of `plan`, or why not
/// (in words, with what to do).
fn check_type(t: &DataType, plan: &ColumnPlan) -> std::result::Result<(), String> {
    let value_type = match t {
        DataType::Dictionary(_, v) => v.as_ref(),
        other => other,
    };
    let integer = value_type.is_integer();
    let numeric = integer || matches!(value_type, DataType::Float32 | DataType::Float64);
    let text = matches!(
        value_type,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    if plan.codes && integer || !plan.codes && (numeric || text) {
        return Ok(());
    }
    let found = describe_type(t);
    Err(if plan.codes && text {
        format!(
            "the column holds {found}, and the domain gives this attribute integer codes \
             0..{}: store the codes as an integer column, or give the attribute its labels \
             in the schema ({{\"labels\": [...]}}, label i is code i) so the text is encoded \
             through them",
            plan.size
        )
    } else if plan.codes {
        format!(
            "the column holds {found}, and the domain gives this attribute integer codes \
             0..{}: store them as an integer column",
            plan.size
        )
    } else {
        format!(
            "the column holds {found}; an attribute with labels or bins in the schema needs \
             a text or numeric column"
        )
    })
}

/// A column type in words.
fn describe_type(t: &DataType) -> String {
    match t {
        DataType::Dictionary(_, v) => format!("{} (dictionary-encoded)", describe_type(v)),
        DataType::Null => "only nulls".into(),
        DataType::Boolean => "true/false values".into(),
        t if t.is_integer() => "integers".into(),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            "floating-point numbers".into()
        }
        DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => "decimal numbers".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "text".into(),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => "raw bytes".into(),
        t if t.is_temporal() => "dates or times".into(),
        t if t.is_nested() => "nested values (lists, structs or maps)".into(),
        other => format!("values of type {other}"),
    }
}

/// Why a value cannot be encoded.
#[derive(Clone)]
enum Problem {
    /// A null where no code can stand for it.
    Null,
    /// An integer outside `0..size`.
    OutOfDomain(String),
    /// A value outside the schema, and why.
    OutsideSchema(String, String),
}

impl Problem {
    fn describe(&self, size: u32) -> String {
        match self {
            Problem::Null => "the value is missing (null), and the attribute has no code for a \
                              missing value: fill it in, or give the attribute \"missing\": \
                              true (or an \"other\" bucket) in the schema"
                .into(),
            Problem::OutOfDomain(v) => format!("code {v} is outside 0..{size}"),
            Problem::OutsideSchema(v, reason) => {
                format!("'{v}' is outside the schema: {reason}")
            }
        }
    }
}

/// Appends the codes of `array` to `out`, or returns the first bad row and why.
fn decode_column(
    array: &ArrayRef,
    plan: &ColumnPlan,
    schema: &Schema,
    out: &mut Vec<u32>,
) -> std::result::Result<(), (usize, Problem)> {
    if plan.codes && array.null_count() == 0 {
        // the hot path: integer codes without nulls
        macro_rules! ints {
            ($($t:ty),*) => {$(
                if let Some(a) = array.as_primitive_opt::<$t>() {
                    return push_codes(a, plan.size, out);
                }
            )*};
        }
        ints!(
            UInt8Type, UInt16Type, UInt32Type, UInt64Type, Int8Type, Int16Type, Int32Type,
            Int64Type
        );
    }
    let push_all = |codes: Vec<std::result::Result<u32, Problem>>, out: &mut Vec<u32>| {
        out.reserve(codes.len());
        for (i, c) in codes.into_iter().enumerate() {
            out.push(c.map_err(|p| (i, p))?);
        }
        Ok(())
    };
    if let Some(dict) = array.as_any_dictionary_opt() {
        let values = dict.values();
        if values.is_empty() {
            // every key is null (a non-null key would point outside the dictionary)
            if !dict.is_empty() {
                let c = null_code(plan).map_err(|p| (0, p))?;
                out.extend(std::iter::repeat_n(c, dict.len()));
            }
            return Ok(());
        }
        // each dictionary entry is encoded once; a bad entry is an error only where used
        let table = value_codes(values.as_ref(), plan, schema);
        let keys = dict.normalized_keys();
        let codes = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                if dict.is_null(i) {
                    null_code(plan)
                } else {
                    match &table[k] {
                        Ok(c) => Ok(*c),
                        Err(p) => Err(p.clone()),
                    }
                }
            })
            .collect();
        return push_all(codes, out);
    }
    push_all(value_codes(array.as_ref(), plan, schema), out)
}

/// Integer codes without nulls, checked against `0..size`.
fn push_codes<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    size: u32,
    out: &mut Vec<u32>,
) -> std::result::Result<(), (usize, Problem)>
where
    T::Native: Into<i128>,
{
    out.reserve(a.len());
    for (i, &v) in a.values().iter().enumerate() {
        let v: i128 = v.into();
        if v < 0 || v >= i128::from(size) {
            return Err((i, Problem::OutOfDomain(v.to_string())));
        }
        out.push(v as u32);
    }
    Ok(())
}

/// The code of a null, or [`Problem::Null`].
fn null_code(plan: &ColumnPlan) -> std::result::Result<u32, Problem> {
    plan.null_code.ok_or(Problem::Null)
}

/// The code (or the problem) of every element of a plain (not dictionary) array whose type
/// [`check_type`] accepted.
fn value_codes(
    array: &dyn Array,
    plan: &ColumnPlan,
    schema: &Schema,
) -> Vec<std::result::Result<u32, Problem>> {
    let encode = |text: &str| match schema.encode(plan.attr, text) {
        Ok(Some(c)) => Ok(c),
        Ok(None) => Err(Problem::OutsideSchema(
            text.into(),
            "the attribute holds integer codes".into(),
        )),
        Err(reason) => Err(Problem::OutsideSchema(text.into(), reason)),
    };
    let code = |v: Option<i128>| -> std::result::Result<u32, Problem> {
        let Some(v) = v else {
            return null_code(plan);
        };
        if plan.codes {
            if v < 0 || v >= i128::from(plan.size) {
                Err(Problem::OutOfDomain(v.to_string()))
            } else {
                Ok(v as u32)
            }
        } else {
            encode(&v.to_string())
        }
    };
    macro_rules! ints {
        ($($t:ty),*) => {$(
            if let Some(a) = array.as_primitive_opt::<$t>() {
                return a.iter().map(|v| code(v.map(Into::into))).collect();
            }
        )*};
    }
    ints!(
        UInt8Type, UInt16Type, UInt32Type, UInt64Type, Int8Type, Int16Type, Int32Type, Int64Type
    );
    let text = |v: Option<&str>| match v {
        None => null_code(plan),
        Some(s) => encode(s),
    };
    if let Some(a) = array.as_primitive_opt::<Float64Type>() {
        return a
            .iter()
            .map(|v| text(v.map(|x| x.to_string()).as_deref()))
            .collect();
    }
    if let Some(a) = array.as_primitive_opt::<Float32Type>() {
        return a
            .iter()
            .map(|v| text(v.map(|x| x.to_string()).as_deref()))
            .collect();
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        return a.iter().map(text).collect();
    }
    if let Some(a) = array.as_string_opt::<i64>() {
        return a.iter().map(text).collect();
    }
    if let Some(a) = array.as_string_view_opt() {
        return a.iter().map(text).collect();
    }
    // check_type refused every other type
    (0..array.len())
        .map(|_| {
            Err(Problem::OutsideSchema(
                String::new(),
                "the column's type cannot hold this attribute".into(),
            ))
        })
        .collect()
}
