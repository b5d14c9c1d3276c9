//! Counting a marginal workload on a query engine: DataFusion in this process (feature
//! `datafusion`) or a Ballista cluster (feature `ballista`, [`ballista`]).
//!
//! **The query.** The workload's marginal counts over one CSV or Parquet file are **one
//! query** ([`CountPlan`]): every column is first mapped to its code, or to one of two
//! sentinels — `size` for a code outside `0..size`, `size + 1` for an empty field (null) —
//! and then either
//!
//! * [`CountPlan::GroupingSets`]: `GROUP BY GROUPING SETS ((a, b), (a, c), …)` with
//!   `COUNT(*)`, one grouping set per distinct attribute set of the workload, plus a 1-way set
//!   for every column no marginal touches (so that every column is checked); or
//! * [`CountPlan::PerTable`]: one `GROUP BY` per distinct attribute set over the same
//!   scan definition, combined with `UNION ALL` (the engine may scan once per table).
//!
//! [`CountPlan::Auto`] (the default) picks, per engine and file format, the plan measured
//! faster.
//! Both return, per table and cell, an exact `COUNT(*)` (`Int64`): no float aggregation
//! anywhere. The cells are put in workload order here, so the result is a
//! [`StreamedCounts`] equal bit for bit to [`crate::count_csv_streaming`] on the same
//! records (tested on the bundled tables for all 2-way and random 3-way workloads).
//!
//! # Privacy at the engine boundary
//!
//! * **No engine text crosses back.** Every error of the engine (planning, reading, parsing,
//!   executing, connecting) becomes [`QueryError::EngineFailed`], which names the engine and
//!   the stage only ("reading the file and counting", "connecting to the scheduler", …): an
//!   engine's own messages may quote field values (a CSV parse error quotes the field), so
//!   they are dropped, never printed or wrapped. The native loader reports the line and
//!   column of a bad field, for a data owner debugging their own file.
//! * **Bad values are refused, by column.** A code outside `0..size`, a negative number or an
//!   empty field (null) lands in its column's sentinel cell and the whole count is refused
//!   with [`QueryError::EngineRefused`], which names the column and the kind of problem — not
//!   the value, not the row. A field that is not an integer at all makes the engine's reader
//!   fail, and that is an [`QueryError::EngineFailed`] as above. The header (public: the
//!   schema's column names) is checked first with the loaders' errors.
//! * **No retries, no partial results.** The query runs once; any failure fails the count.
//!   The result is checked before use: every table (grouping set or per-table query) must
//!   partition the same number of rows, every count must be positive, every key a code of
//!   its column; otherwise
//!   [`QueryError::EngineFailed`] ("checking the result").
//! * **n stays private.** [`StreamedCounts::rows`] is the sum of one table's counts (no
//!   separate `COUNT(*)`); like the native streaming count's, it is private under add/remove
//!   neighbours and callers read it only where the neighbouring relation makes n public
//!   (replace-one), as `dpqr release` does.
//!
//! # What this engine reads
//!
//! A CSV file (`.csv`, with a header; the columns matched to the domain by name, in any
//! order, exactly as the loaders do) or a Parquet file (`.parquet`; integer columns, matched
//! by name). Codes only: a schema with labels or bins is refused (the native loader encodes
//! those). Compressed CSV (`.gz`) is not read by the engine.
//!
//! Where the engine's reader is looser than the native loader: a Parquet column of another
//! type (floating-point, text, true/false) is refused before the query runs, as the native
//! loader refuses it ([`QueryError::EngineUnsupported`], naming the column and its type — the
//! query's cast would otherwise count 2.7 as code 2); but a CSV field with spaces around its
//! digits or a leading `+` (` 1`, `+1`) is read as the number by the engine's CSV parser,
//! where the native loader refuses it. The counts are equal to the native ones on every file
//! the native loader accepts.
#![allow(clippy::module_name_repetitions)]

#[cfg(feature = "ballista")]
pub mod ballista;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, Int64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::functions_aggregate::count::count_all;
use datafusion::logical_expr::{Expr, GroupingSet, LogicalPlan, Union};
use datafusion::prelude::{
    CsvReadOptions, DataFrame, ParquetReadOptions, SessionConfig, SessionContext, cast, ident, lit,
    when,
};

pub use crate::io::format::FileFormat;

use crate::error::{QueryError, Result};
use crate::io::stream::StreamedCounts;
use crate::schema::{Encoding, Schema};
use crate::workload::Marginal;
use crate::workload::MarginalWorkload;

/// How the workload's tables are asked of the engine (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CountPlan {
    /// The plan measured faster for the engine and the file's format (the default):
    /// DataFusion in this process runs grouping sets on CSV (one parse of the text feeds every
    /// table) and one `GROUP BY` per table on Parquet (a scan of a few integer columns is
    /// cheap, and the grouping-set aggregation expands every row once per set); a Ballista
    /// cluster always runs grouping sets (there every per-table query is its own set of
    /// stages, each scheduled and shuffled). Measured in release mode on adult resampled to
    /// 10⁷ rows (docs/benchmarks.md, "Counting at scale"), all 2-way: DataFusion CSV 20 s vs
    /// 55 s, Parquet 7.4 s vs 19.4 s per table; Ballista Parquet 20 s vs 148 s per table.
    #[default]
    Auto,
    /// One `GROUP BY GROUPING SETS` query over one scan.
    GroupingSets,
    /// One `GROUP BY` per table, combined with `UNION ALL`.
    PerTable,
}

impl CountPlan {
    /// The concrete plan for a file of `format` on an in-process engine (`distributed =
    /// false`, DataFusion) or a cluster (`true`, Ballista): [`CountPlan::Auto`] resolved, the
    /// others unchanged.
    pub fn resolve(self, format: FileFormat, distributed: bool) -> CountPlan {
        match (self, format, distributed) {
            (CountPlan::Auto, FileFormat::Parquet, false) => CountPlan::PerTable,
            (CountPlan::Auto, _, _) => CountPlan::GroupingSets,
            (plan, _, _) => plan,
        }
    }
}

/// Settings of an engine count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineSettings {
    /// The query shape.
    pub plan: CountPlan,
    /// Partitions the engine splits the scan into (`None`: the engine's default, the
    /// number of cores).
    pub target_partitions: Option<usize>,
}

/// The engine's name in messages.
pub(crate) const DATAFUSION: &str = "DataFusion";

/// A fixed, data-independent error for a failed `stage` of `engine`: the engine's own
/// error is dropped here (module docs).
pub(crate) fn failed<E>(engine: &'static str, stage: &'static str) -> impl FnOnce(E) -> QueryError {
    move |_withheld: E| QueryError::EngineFailed {
        engine: engine.into(),
        stage: stage.into(),
    }
}

/// A multi-threaded runtime for the engine's futures.
pub(crate) fn runtime(engine: &'static str) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(failed(engine, "starting the engine's runtime"))
}

/// Counts `workload` over the file at `path` with DataFusion in this process (module docs).
/// `schema` is the file's public schema (codes only); the result's counts are in workload
/// order.
///
/// Errors: the header checks of the loaders ([`QueryError::MissingColumn`],
/// [`QueryError::ExtraColumn`], [`QueryError::DuplicateHeader`], [`QueryError::EmptyFile`]),
/// [`QueryError::EngineRefused`] (a code outside the domain or an empty field, by column),
/// [`QueryError::EngineFailed`] (any engine error, by stage), [`QueryError::EngineUnsupported`]
/// (a labelled schema, another format), [`QueryError::DomainMismatch`].
pub fn count_datafusion(
    path: &Path,
    schema: &Schema,
    workload: &MarginalWorkload,
    settings: &EngineSettings,
) -> Result<StreamedCounts> {
    let rt = runtime(DATAFUSION)?;
    let mut config = SessionConfig::new();
    if let Some(p) = settings.target_partitions {
        config = config.with_target_partitions(p.max(1));
    }
    let ctx = SessionContext::new_with_config(config);
    rt.block_on(count_with_context(
        &ctx, DATAFUSION, false, path, schema, workload, settings,
    ))
}

/// The shared body of every engine: check the inputs, plan the query on `ctx` (`distributed`:
/// `ctx` runs it on a cluster, which decides [`CountPlan::Auto`]), run it once, decode and
/// check the result.
pub(crate) async fn count_with_context(
    ctx: &SessionContext,
    engine: &'static str,
    distributed: bool,
    path: &Path,
    schema: &Schema,
    workload: &MarginalWorkload,
    settings: &EngineSettings,
) -> Result<StreamedCounts> {
    let format = FileFormat::of_path(path, engine)?;
    let plan = QueryPlan::new(engine, schema, workload)?;
    // executors read the file by path: make it absolute (a missing file is an I/O error,
    // with the path the user gave)
    let absolute: PathBuf = std::fs::canonicalize(path).map_err(|source| QueryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let file = path.display().to_string();
    let location = absolute
        .to_str()
        .ok_or_else(|| QueryError::EngineUnsupported {
            engine: engine.into(),
            reason: format!("the path {file} is not valid UTF-8"),
        })?;
    let frame = match format {
        FileFormat::Csv => {
            let names = csv_header(path, &file)?;
            check_header(&names, &file, schema)?;
            let fields: Vec<Field> = names
                .iter()
                .map(|n| Field::new(n, DataType::Int64, true))
                .collect();
            let arrow_schema = ArrowSchema::new(fields);
            let ext = absolute
                .extension()
                .and_then(|e| e.to_str())
                .map(|e| format!(".{e}"))
                .unwrap_or_default();
            let options = CsvReadOptions::new()
                .has_header(true)
                .schema(&arrow_schema)
                .file_extension(&ext);
            ctx.read_csv(location, options)
                .await
                .map_err(failed(engine, "opening the file"))?
        }
        FileFormat::Parquet => {
            let ext = absolute
                .extension()
                .and_then(|e| e.to_str())
                .map(|e| format!(".{e}"))
                .unwrap_or_default();
            let options = ParquetReadOptions::default().file_extension(&ext);
            let frame = ctx
                .read_parquet(location, options)
                .await
                .map_err(failed(engine, "opening the file"))?;
            let names: Vec<String> = frame
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            check_header(&names, &file, schema)?;
            check_integer_columns(engine, &frame, schema)?;
            frame
        }
    };
    let query = plan
        .build(frame, settings.plan.resolve(format, distributed))
        .map_err(failed(engine, "planning the query"))?;
    let batches = query
        .collect()
        .await
        .map_err(failed(engine, "reading the file and counting"))?;
    plan.decode(engine, &batches)
}

/// The header of a CSV file: its first non-blank record, parsed with standard quoting (a
/// UTF-8 byte-order mark is dropped).
fn csv_header(path: &Path, file: &str) -> Result<Vec<String>> {
    let f = std::fs::File::open(path).map_err(|source| QueryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(std::io::BufReader::new(f));
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => return Err(QueryError::EmptyFile { file: file.into() }),
            Ok(true) => {}
            Err(_) => {
                return Err(QueryError::NonUtf8 {
                    file: file.into(),
                    line: 1,
                });
            }
        }
        if record.iter().all(<[u8]>::is_empty) {
            continue;
        }
        let mut names = Vec::with_capacity(record.len());
        for (i, raw) in record.iter().enumerate() {
            let raw = if i == 0 {
                raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw)
            } else {
                raw
            };
            let name = std::str::from_utf8(raw).map_err(|_| QueryError::NonUtf8 {
                file: file.into(),
                line: record.position().map_or(1, csv::Position::line),
            })?;
            names.push(name.to_string());
        }
        return Ok(names);
    }
}

/// The loaders' header checks, in their order: duplicate, extra (first in file order),
/// missing (first in domain order).
fn check_header(names: &[String], file: &str, schema: &Schema) -> Result<()> {
    let domain = schema.domain();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(QueryError::DuplicateHeader {
                file: file.into(),
                column: name.clone(),
            });
        }
    }
    if let Some(extra) = names.iter().find(|n| domain.index_of(n).is_err()) {
        return Err(QueryError::ExtraColumn {
            file: file.into(),
            column: extra.clone(),
        });
    }
    if let Some(missing) = domain.names().find(|n| !names.iter().any(|m| m == n)) {
        return Err(QueryError::MissingColumn {
            file: file.into(),
            column: missing.into(),
        });
    }
    Ok(())
}

/// Every column of a Parquet file holds integers (or dictionary-encoded integers), as the
/// native Parquet loader requires of a code column: the query casts each column to `Int64`,
/// which would otherwise turn 2.7 into code 2, the text "3" into code 3 and `true` into 1.
/// The column's type is public (the file's schema); no value is read here.
fn check_integer_columns(engine: &str, frame: &DataFrame, schema: &Schema) -> Result<()> {
    for field in frame.schema().fields() {
        let value_type = match field.data_type() {
            DataType::Dictionary(_, v) => v.as_ref(),
            other => other,
        };
        if value_type.is_integer() || schema.domain().index_of(field.name()).is_err() {
            continue;
        }
        let found = match value_type {
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                "floating-point numbers".to_string()
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "text".into(),
            DataType::Boolean => "true/false values".into(),
            DataType::Null => "only nulls".into(),
            DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..) => "decimal numbers".into(),
            other => format!("values of type {other}"),
        };
        return Err(QueryError::EngineUnsupported {
            engine: engine.into(),
            reason: format!(
                "column '{}' holds {found}, and the engine reads integer codes only: store the \
                 codes as an integer column",
                field.name()
            ),
        });
    }
    Ok(())
}

/// One `UNION ALL` of `branches` with every branch a direct input (the types as
/// [`DataFrame::union`] takes them). A chain of two-input unions is one plan level per branch,
/// and DataFusion's analyzer recurses through every level before its optimizer flattens them:
/// with hundreds of tables that overflowed a thread's stack.
fn flat_union(branches: Vec<DataFrame>) -> datafusion::error::Result<DataFrame> {
    let mut branches = branches.into_iter();
    // `sets` is never empty: the domain has at least one attribute
    let first = branches
        .next()
        .ok_or_else(|| datafusion::error::DataFusionError::Plan("no tables".to_string()))?;
    if branches.len() == 0 {
        return Ok(first);
    }
    let (state, plan) = first.into_parts();
    let mut inputs = vec![Arc::new(plan)];
    inputs.extend(branches.map(|b| Arc::new(b.into_unoptimized_plan())));
    let union = Union::try_new_with_loose_types(inputs)?;
    Ok(DataFrame::new(state, LogicalPlan::Union(union)))
}

/// The distinct attribute sets asked of the engine and how to put their cells back in
/// workload order.
struct QueryPlan {
    /// Attribute names of the domain.
    names: Vec<String>,
    /// Attribute sizes of the domain.
    sizes: Vec<u32>,
    /// The grouping sets: sorted attribute indices, distinct; the workload's first, then one
    /// 1-way set per untouched column.
    sets: Vec<Vec<usize>>,
    /// The workload's marginals.
    marginals: Vec<Marginal>,
    /// For each marginal, its grouping set.
    set_of: Vec<usize>,
    /// Total number of queries.
    num_queries: usize,
}

/// The alias of attribute `i`'s code column inside the query.
fn code_column(i: usize) -> String {
    format!("dpqr_code_{i}")
}

/// The `Int64` column `name` of `batch`.
fn int_column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a Int64Array> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
}

/// The alias of the count column.
const COUNT_COLUMN: &str = "dpqr_count";

/// The alias of the table index column of [`CountPlan::PerTable`].
const SET_COLUMN: &str = "dpqr_table";

impl QueryPlan {
    fn new(engine: &str, schema: &Schema, workload: &MarginalWorkload) -> Result<Self> {
        if workload.domain() != schema.domain() {
            return Err(QueryError::DomainMismatch {
                reason: "the workload is over another domain than the file's schema".into(),
            });
        }
        let domain = schema.domain();
        for i in 0..domain.len() {
            if let Some(a) = schema.attribute(i)
                && !matches!(a.encoding(), Encoding::Codes)
            {
                return Err(QueryError::EngineUnsupported {
                    engine: engine.into(),
                    reason: format!(
                        "column '{}' has labels or bins in the schema, and the engine reads \
                         integer codes only (the native loader encodes labels and bins)",
                        domain.name(i)
                    ),
                });
            }
        }
        let mut sets: Vec<Vec<usize>> = Vec::new();
        let mut set_of = Vec::with_capacity(workload.len());
        for m in workload.marginals() {
            let mut attrs = m.attrs().to_vec();
            attrs.sort_unstable();
            let index = match sets.iter().position(|s| *s == attrs) {
                Some(i) => i,
                None => {
                    sets.push(attrs);
                    sets.len() - 1
                }
            };
            set_of.push(index);
        }
        for i in 0..domain.len() {
            if !sets.iter().any(|s| s.contains(&i)) {
                sets.push(vec![i]);
            }
        }
        Ok(QueryPlan {
            names: domain.names().map(str::to_string).collect(),
            sizes: domain.sizes().to_vec(),
            sets,
            marginals: workload.marginals().to_vec(),
            set_of,
            num_queries: workload.num_queries(),
        })
    }

    /// Attribute `i`'s code, or `size` (outside the domain) or `size + 1` (empty field).
    fn code_expr(&self, i: usize) -> datafusion::error::Result<Expr> {
        let size = i64::from(self.sizes[i]);
        let value = || cast(ident(self.names[i].clone()), DataType::Int64);
        Ok(when(value().is_null(), lit(size + 1))
            .when(
                value().lt(lit(0i64)).or(value().gt_eq(lit(size))),
                lit(size),
            )
            .otherwise(value())?
            .alias(code_column(i)))
    }

    fn build(&self, frame: DataFrame, plan: CountPlan) -> datafusion::error::Result<DataFrame> {
        let codes = (0..self.names.len())
            .map(|i| self.code_expr(i))
            .collect::<datafusion::error::Result<Vec<_>>>()?;
        let frame = frame.select(codes)?;
        let count = || count_all().alias(COUNT_COLUMN);
        match plan {
            // `count_with_context` resolves `Auto` before building; grouping sets otherwise
            CountPlan::GroupingSets | CountPlan::Auto => {
                let sets = self
                    .sets
                    .iter()
                    .map(|s| s.iter().map(|&i| ident(code_column(i))).collect())
                    .collect();
                frame.aggregate(
                    vec![Expr::GroupingSet(GroupingSet::GroupingSets(sets))],
                    vec![count()],
                )
            }
            CountPlan::PerTable => {
                // every branch has the same columns: the table index, every code column
                // (null where the table does not group it) and the count
                let mut branches: Vec<DataFrame> = Vec::with_capacity(self.sets.len());
                for (t, set) in self.sets.iter().enumerate() {
                    let grouped = frame.clone().aggregate(
                        set.iter().map(|&i| ident(code_column(i))).collect(),
                        vec![count()],
                    )?;
                    let mut columns = vec![lit(t as i64).alias(SET_COLUMN)];
                    for i in 0..self.names.len() {
                        let name = code_column(i);
                        columns.push(if set.contains(&i) {
                            ident(name)
                        } else {
                            cast(lit(datafusion::common::ScalarValue::Null), DataType::Int64)
                                .alias(name)
                        });
                    }
                    columns.push(ident(COUNT_COLUMN));
                    branches.push(grouped.select(columns)?);
                }
                flat_union(branches)
            }
        }
    }

    /// The counts in workload order, after the checks of the module docs.
    fn decode(&self, engine: &'static str, batches: &[RecordBatch]) -> Result<StreamedCounts> {
        let bad_result = || QueryError::EngineFailed {
            engine: engine.into(),
            stage: "checking the result".into(),
        };
        let d = self.names.len();
        let set_index: HashMap<&[usize], usize> = self
            .sets
            .iter()
            .enumerate()
            .map(|(t, s)| (s.as_slice(), t))
            .collect();
        // per grouping set, dense counts over its attributes (row-major, sorted order)
        let mut tables: Vec<Vec<i64>> = Vec::with_capacity(self.sets.len());
        for s in &self.sets {
            let cells = s
                .iter()
                .try_fold(1usize, |acc, &i| acc.checked_mul(self.sizes[i] as usize))
                .ok_or_else(bad_result)?;
            tables.push(vec![0; cells]);
        }
        // worst problem per column: 1 = outside the domain, 2 = empty field
        let mut refused: Vec<u8> = vec![0; d];
        let mut set_attrs: Vec<usize> = Vec::with_capacity(d);
        let mut set_codes: Vec<i64> = Vec::with_capacity(d);
        for batch in batches {
            let codes: Vec<&Int64Array> = (0..d)
                .map(|i| int_column(batch, &code_column(i)).ok_or_else(bad_result))
                .collect::<Result<_>>()?;
            let counts = int_column(batch, COUNT_COLUMN).ok_or_else(bad_result)?;
            let tags = match batch.column_by_name(SET_COLUMN) {
                Some(_) => Some(int_column(batch, SET_COLUMN).ok_or_else(bad_result)?),
                None => None,
            };
            for row in 0..batch.num_rows() {
                set_attrs.clear();
                set_codes.clear();
                for (i, c) in codes.iter().enumerate() {
                    if c.is_valid(row) {
                        set_attrs.push(i);
                        set_codes.push(c.value(row));
                    }
                }
                let t = *set_index.get(set_attrs.as_slice()).ok_or_else(bad_result)?;
                if let Some(tags) = tags
                    && (tags.is_null(row) || tags.value(row) != t as i64)
                {
                    return Err(bad_result());
                }
                if counts.is_null(row) || counts.value(row) <= 0 {
                    return Err(bad_result());
                }
                let mut cell = 0usize;
                let mut valid = true;
                for (&i, &code) in set_attrs.iter().zip(&set_codes) {
                    let size = i64::from(self.sizes[i]);
                    if code == size + 1 {
                        refused[i] = 2;
                        valid = false;
                    } else if code == size {
                        refused[i] = refused[i].max(1);
                        valid = false;
                    } else if (0..size).contains(&code) {
                        cell = cell * self.sizes[i] as usize + code as usize;
                    } else {
                        return Err(bad_result());
                    }
                }
                if valid {
                    let slot = tables[t].get_mut(cell).ok_or_else(bad_result)?;
                    *slot = slot.checked_add(counts.value(row)).ok_or_else(bad_result)?;
                }
            }
        }
        if let Some(i) = refused.iter().position(|&r| r > 0) {
            let problem = if refused[i] == 2 {
                "has an empty field (a missing value)".to_string()
            } else {
                format!("has a value outside its codes 0..{}", self.sizes[i])
            };
            return Err(QueryError::EngineRefused {
                engine: engine.into(),
                column: self.names[i].clone(),
                problem,
            });
        }
        // every grouping set partitions the same rows: a lost partition shows here
        let totals: Vec<i64> = tables.iter().map(|t| t.iter().sum()).collect();
        let rows = totals.first().copied().unwrap_or(0);
        if totals.iter().any(|&t| t != rows) {
            return Err(bad_result());
        }
        let mut out = Vec::with_capacity(self.num_queries);
        for (m, &t) in self.marginals.iter().zip(&self.set_of) {
            let set = &self.sets[t];
            // position of each marginal attribute inside the sorted set
            let order: Vec<usize> = m
                .attrs()
                .iter()
                .map(|a| set.iter().position(|s| s == a).unwrap_or(0))
                .collect();
            let mut sorted = vec![0u32; set.len()];
            for cell in 0..m.num_cells() {
                let codes = m.cell_codes(cell);
                for (&pos, &code) in order.iter().zip(&codes) {
                    sorted[pos] = code;
                }
                let mut index = 0usize;
                for (&a, &code) in set.iter().zip(&sorted) {
                    index = index * self.sizes[a] as usize + code as usize;
                }
                out.push(*tables[t].get(index).ok_or_else(bad_result)?);
            }
        }
        if out.len() != self.num_queries {
            return Err(bad_result());
        }
        Ok(StreamedCounts {
            counts: out,
            rows: u64::try_from(rows).map_err(|_| bad_result())?,
            batches: 1,
        })
    }
}
