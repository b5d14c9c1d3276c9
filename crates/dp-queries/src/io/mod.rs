//! Input and output: reading records from files into a [`Dataset`](crate::Dataset) or
//! straight into a workload's counts, and writing them back.
//!
//! The model (domains, schemas, datasets, workloads) never depends on this module; this
//! module depends on the model. Inside, `format` sits on top of the readers (`csv`, `stream`,
//! `parquet`) and the engines use its [`FileFormat`]; no reader imports `format`.
//! Everything here touches private data, and every loader, counter and engine gives the same
//! exact counts for the same records.
//!
//! | file | holds |
//! |---|---|
//! | [`format`](mod@format) | data files by path and **the one format dispatch**: CSV, gzip-compressed CSV or Parquet ([`is_parquet`], [`open_csv`], [`FileFormat`] for the engines); the loaders and counter that open a file and choose its reader by it: [`Dataset::load_csv`](crate::Dataset::load_csv), [`Dataset::load_file`](crate::Dataset::load_file), [`count_file_streaming`] |
//! | [`csv`] | the CSV format accepted, the validating CSV readers ([`Dataset::from_csv_reader`](crate::Dataset::from_csv_reader), …) and the record decoder they share with the streaming counter; [`Dataset::write_csv`](crate::Dataset::write_csv) |
//! | [`options`] | [`ReadOptions`]: the CSV delimiter and whether columns outside the schema are ignored, taken by every reader |
//! | [`check`] | **NON-PRIVATE** [`check_csv`]: per schema column, how many values are empty, go to `missing` or `other`, or are near-misses of a label or bin (`dpqr schema check`) |
//! | [`stream`] | [`count_csv_streaming`]: a workload's exact counts over a CSV file in one pass, in bounded memory, batches decoded and counted in parallel (`run_pipeline`, shared with Parquet) |
//! | `parquet` (cargo feature `parquet`) | Parquet input: `Dataset::from_parquet`'s loader, `count_parquet_streaming` (row groups in parallel), `ParquetCodesWriter` |
//! | `engine` (features `datafusion`, `ballista`) | a marginal workload's exact counts as one DataFusion query over CSV / Parquet, in process or on a Ballista cluster; engine errors mapped to fixed messages |

pub mod check;
pub mod csv;
#[cfg(feature = "datafusion")]
pub mod engine;
pub mod format;
pub mod options;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod stream;

pub use self::csv::IN_MEMORY;
#[cfg(feature = "parquet")]
pub use self::parquet::{ParquetCodesWriter, count_parquet_streaming};
pub use check::{
    CheckSettings, ColumnCheck, DataCheck, Destination, Finding, FindingKind, check_csv,
};
pub use format::{FileFormat, check_file_header, count_file_streaming, is_parquet, open_csv};
pub use options::ReadOptions;
pub use stream::{StreamSettings, StreamedCounts, count_csv_streaming};
