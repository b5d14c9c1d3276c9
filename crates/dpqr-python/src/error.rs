//! The crate's one error type.

use dp_bench::BenchError;

/// Everything the Python package's Rust half can report. In Python every variant is raised
/// as `dpqr.DpqrError` (a `ValueError`) with this message and an `exit_status` attribute.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// From the release pipeline, the catalogue or the loaders: exactly the message `dpqr`
    /// prints after `error: ` for the same input.
    #[error(transparent)]
    Bench(#[from] BenchError),
    /// A keyword argument of a Python call that cannot be used: a setting the command line
    /// has no flag for, a value of a type or form no flag takes (`rounds=2.5`,
    /// `neighbouring="adjacent"`). The message names the keyword and what to give.
    #[error("{0}")]
    Argument(String),
}

impl BindingError {
    /// The exit status `dpqr` would end with for this error: 3 for a spend a budget refused,
    /// 2 for every other error (`BenchError::exit_status`); 2 for a bad keyword argument,
    /// which the command line refuses as a usage error.
    pub fn exit_status(&self) -> u8 {
        match self {
            BindingError::Bench(e) => e.exit_status(),
            BindingError::Argument(_) => 2,
        }
    }
}

impl From<dp_queries::QueryError> for BindingError {
    fn from(e: dp_queries::QueryError) -> Self {
        BindingError::Bench(e.into())
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, BindingError>;
