//! The crate's single error type.
//!
//! Every loader error names the file (as given by the caller, e.g. the path), the 1-based
//! physical line where the offending record starts (the header is line 1) and the column
//! *name* where one applies, so that a user can find the problem with an editor; a Parquet
//! error names the row group and the row within it instead of the line.

use std::path::PathBuf;

/// Everything that can go wrong in `dp-queries`: loading and validating data, building
/// domains, marginals and workloads, and comparing answer vectors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// A file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The CSV file contains no header (zero bytes, or only blank lines).
    #[error("{file}: the file is empty (expected a header line of attribute names)")]
    EmptyFile {
        /// The file.
        file: String,
    },
    /// The CSV file has a header but no data records.
    #[error("{file}: the file has a header but no records")]
    NoRecords {
        /// The file.
        file: String,
    },
    /// A column name occurs twice in the CSV header.
    #[error("{file}: line 1: column '{column}' appears twice in the header")]
    DuplicateHeader {
        /// The file.
        file: String,
        /// The repeated column name.
        column: String,
    },
    /// An attribute of the domain has no column in the CSV header.
    #[error("{file}: line 1: the header has no column '{column}' (required by the domain)")]
    MissingColumn {
        /// The file.
        file: String,
        /// The attribute of the domain that is missing.
        column: String,
    },
    /// The CSV header has a column that the domain does not declare.
    #[error(
        "{file}: line 1: column '{column}' is not an attribute of the domain (columns outside \
         the schema are refused unless the reader is told to ignore them: dpqr's \
         --ignore-extra-columns)"
    )]
    ExtraColumn {
        /// The file.
        file: String,
        /// The unexpected column name.
        column: String,
    },
    /// A record has a different number of fields than the header.
    #[error("{file}: line {line}: expected {expected} fields (as in the header), found {found}")]
    RaggedRow {
        /// The file.
        file: String,
        /// 1-based line where the record starts.
        line: u64,
        /// Number of header fields.
        expected: usize,
        /// Number of fields in this record.
        found: usize,
    },
    /// A field is not a non-negative decimal integer (ASCII digits only).
    #[error("{file}: line {line}: column '{column}': '{value}' is not a non-negative integer code")]
    NotInteger {
        /// The file.
        file: String,
        /// 1-based line where the record starts.
        line: u64,
        /// Column name.
        column: String,
        /// The offending field, verbatim.
        value: String,
    },
    /// A code is outside its attribute's domain `0..size`.
    #[error("{file}: line {line}: column '{column}': code {value} is outside 0..{size}")]
    OutOfDomain {
        /// The file.
        file: String,
        /// 1-based line where the record starts.
        line: u64,
        /// Column name.
        column: String,
        /// The offending field, verbatim (it may not even fit in 64 bits).
        value: String,
        /// The attribute's domain size.
        size: u32,
    },
    /// A raw value is outside its attribute's schema (an unknown label, a number outside
    /// the bins, a non-number in a binned column, an empty field) and the attribute
    /// declares no `other` bucket.
    #[error("{file}: line {line}: column '{column}': '{value}' is outside the schema: {reason}")]
    OutsideSchema {
        /// The file.
        file: String,
        /// 1-based line where the record starts.
        line: u64,
        /// Column name.
        column: String,
        /// The offending field, verbatim.
        value: String,
        /// Why it is outside, in plain words.
        reason: String,
    },
    /// A field (or header name) is not valid UTF-8.
    #[error("{file}: line {line}: the text is not valid UTF-8")]
    NonUtf8 {
        /// The file.
        file: String,
        /// 1-based line where the record starts.
        line: u64,
    },
    /// A file could not be read as Parquet (not a Parquet file, damaged, or using a feature
    /// this reader lacks).
    #[error("{file}: cannot read it as a Parquet file: {message}")]
    ParquetRead {
        /// The file.
        file: String,
        /// The Parquet reader's message.
        message: String,
    },
    /// The columns of a Parquet file do not match the domain: a missing, extra or repeated
    /// column, or a column type that cannot hold the attribute's values.
    #[error("{file}: column '{column}': {reason}")]
    ParquetColumn {
        /// The file.
        file: String,
        /// The column (or the missing attribute's) name.
        column: String,
        /// What is wrong and what to do, in plain words.
        reason: String,
    },
    /// A value of a Parquet file is missing (null), outside its attribute's codes or outside
    /// the schema.
    #[error(
        "{file}: row group {row_group}, row {row} (both counted from 0): column '{column}': {problem}"
    )]
    ParquetValue {
        /// The file.
        file: String,
        /// The row group (0-based).
        row_group: usize,
        /// The row within the row group (0-based).
        row: u64,
        /// The column name.
        column: String,
        /// What is wrong with the value, in plain words.
        problem: String,
    },
    /// A Parquet file was given to a build without Parquet support.
    #[error(
        "{file} is a Parquet file, and this build reads CSV only: rebuild with the cargo \
         feature `parquet` of dp-queries (the dpqr program has it by default), or convert the \
         file to CSV"
    )]
    ParquetUnsupported {
        /// The file.
        file: String,
    },
    /// A JSON document could not be parsed into the expected shape.
    #[error("{file}: invalid JSON: {message}")]
    BadJson {
        /// The file (or a label for an in-memory string).
        file: String,
        /// The parser's message (it includes line and column).
        message: String,
    },
    /// A domain description is invalid.
    #[error("invalid domain: {reason}")]
    BadDomain {
        /// What is wrong.
        reason: String,
    },
    /// An attribute name is not in the domain.
    #[error("unknown attribute '{name}'")]
    UnknownAttribute {
        /// The name that was looked up.
        name: String,
    },
    /// An attribute index is not in the domain.
    #[error("attribute index {index} is out of range (the domain has {len} attributes)")]
    AttributeOutOfRange {
        /// The index.
        index: usize,
        /// Number of attributes of the domain.
        len: usize,
    },
    /// An in-memory column holds a code outside its attribute's domain.
    #[error("attribute '{attribute}', row {row} (0-based): code {value} is outside 0..{size}")]
    CodeOutOfRange {
        /// Attribute name.
        attribute: String,
        /// 0-based row index.
        row: usize,
        /// The code.
        value: u32,
        /// The attribute's domain size.
        size: u32,
    },
    /// A dataset would have zero records (every dataset here has `n >= 1`).
    #[error("a dataset must have at least one record")]
    EmptyDataset,
    /// A subsample size is not in `1..=n`.
    #[error("cannot subsample {requested} records from a dataset of {available}")]
    BadSample {
        /// Requested sample size.
        requested: usize,
        /// Records available.
        available: usize,
    },
    /// A workload specification or construction is invalid.
    #[error("invalid workload: {reason}")]
    BadWorkload {
        /// What is wrong.
        reason: String,
    },
    /// An object would be too large to build.
    #[error("{what} is too large: {estimate}")]
    TooLarge {
        /// What would be built.
        what: String,
        /// The estimated size and the limit.
        estimate: String,
    },
    /// Data and a workload (or marginal) were built on different domains.
    #[error("domain mismatch: {reason}")]
    DomainMismatch {
        /// What differs.
        reason: String,
    },
    /// A vector has the wrong length.
    #[error("length mismatch: expected {expected}, found {found}")]
    LengthMismatch {
        /// Expected length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// A value that must be finite is NaN or infinite.
    #[error("{what}[{index}] is not finite")]
    NonFinite {
        /// Which vector.
        what: String,
        /// Position of the first non-finite entry.
        index: usize,
    },
    /// A query engine (DataFusion, Ballista) failed at a stage. The engine's own message is
    /// withheld: it may quote the data (`crate::io::engine`, privacy at the engine boundary).
    #[error(
        "{engine}: {stage} failed. The engine's own message is withheld because it may quote \
         the data; the native loader (without an engine) names the line and column of a bad \
         field"
    )]
    EngineFailed {
        /// The engine.
        engine: String,
        /// The stage that failed, a fixed phrase.
        stage: String,
    },
    /// A query engine found a value its column's domain does not allow; the column is named,
    /// the value and the row are not.
    #[error("{engine}: column '{column}' {problem}; nothing was counted")]
    EngineRefused {
        /// The engine.
        engine: String,
        /// The column (a public attribute name).
        column: String,
        /// What is wrong, without the value.
        problem: String,
    },
    /// An option of a reader is invalid (e.g. a CSV delimiter that is no single ASCII
    /// character).
    #[error("invalid {option}: {reason}")]
    BadOption {
        /// The option.
        option: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A query engine cannot count this input (a labelled schema, a file format it does not
    /// read, a workload that is not marginals).
    #[error("{engine}: {reason}")]
    EngineUnsupported {
        /// The engine.
        engine: String,
        /// What it cannot do and what to use instead.
        reason: String,
    },
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, QueryError>;
