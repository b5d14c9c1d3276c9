//! The crate's one error type.

use dp_core::CoreError;
use dp_mechanisms::MechanismError;
use dp_queries::QueryError;

/// Everything the benchmark runner and the `dpqr` program can report.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// From `dp-core`.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// From `dp-queries` (data, domain and workload errors name file, line and column).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// From `dp-mechanisms`.
    #[error(transparent)]
    Mechanism(#[from] MechanismError),
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A malformed answers file, experiment file or command-line combination.
    #[error("{0}")]
    Usage(String),
    /// A mechanism that failed after its spend was recorded in the budget ledger
    /// ([`crate::ledger_file::release_charged`]): the spend stays charged, since noise may
    /// already have been drawn (a failed release gets no free retry).
    #[error(
        "the release failed after its spend was recorded in the ledger (the spend stays \
         charged: a failed release gets no free retry): {0}"
    )]
    ReleaseFailedAfterCharge(#[source] MechanismError),
    /// A bad row in an answers CSV file.
    #[error("{file}, line {line}: {message}")]
    AnswersFile {
        /// The file.
        file: String,
        /// 1-based line (header = 1).
        line: u64,
        /// What is wrong.
        message: String,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, BenchError>;

/// Wrap an I/O error with the path it concerns.
pub fn io_error(path: impl AsRef<std::path::Path>) -> impl FnOnce(std::io::Error) -> BenchError {
    let path = path.as_ref().display().to_string();
    move |source| BenchError::Io { path, source }
}
