//! The crate's one error type.

use dp_core::CoreError;
use dp_geometry::GeometryError;
use dp_queries::QueryError;

/// Everything that can go wrong when configuring or running a mechanism.
///
/// Errors from the lower layers are chained with `#[from]` (linfa's habit), so a caller can
/// match on the layer that refused.
#[derive(Debug, thiserror::Error)]
pub enum MechanismError {
    /// A privacy-accounting or sampling error from `dp-core` (bad ε/δ/ρ, overflow, …).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A data or workload error from `dp-queries`.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// A geometry error from `dp-geometry` (Frank–Wolfe settings, covers, …).
    #[error(transparent)]
    Geometry(#[from] GeometryError),
    /// A mechanism parameter that cannot be used (checked before any noise is drawn).
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name as the user wrote it.
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// The data set cannot be released by this mechanism (e.g. it is empty, or its domain
    /// is not the workload's).
    #[error("unusable data: {reason}")]
    Data {
        /// What is wrong.
        reason: String,
    },
    /// The mechanism does not release this class of queries (checked before any data is
    /// read or noise drawn).
    #[error("{mechanism} does not release {class} workloads; it releases: {supported}")]
    UnsupportedQueryClass {
        /// The mechanism's name.
        mechanism: &'static str,
        /// The class of the workload given.
        class: dp_queries::QueryClass,
        /// The classes it does release, comma-separated.
        supported: String,
    },
    /// A numerical computation failed (overflow, NaN) on a path that must not silently
    /// produce a wrong answer.
    #[error("numerical failure: {what}")]
    Numerical {
        /// What failed.
        what: String,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, MechanismError>;
