//! The crate's single error type.

use thiserror::Error;

/// Everything that can go wrong in `dp-geometry`: invalid input, never an internal panic.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GeometryError {
    /// A vector or point set has the wrong dimension for the operation.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// Which argument was wrong.
        what: &'static str,
        /// The dimension that was required.
        expected: usize,
        /// The dimension that was given.
        found: usize,
    },
    /// A point set or body with no points where at least one is required.
    #[error("empty point set: {0}")]
    Empty(&'static str),
    /// A NaN or infinite number where a finite one is required.
    #[error("non-finite value in {0}")]
    NonFinite(&'static str),
    /// An index outside `0..len`.
    #[error("index {index} out of range for a set of {len} points")]
    IndexOutOfRange {
        /// The offending index.
        index: usize,
        /// The number of points.
        len: usize,
    },
    /// A parameter outside its valid range.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// Solver settings that fail validation (see `FrankWolfeSettings::check`).
    #[error("invalid settings: {0}")]
    InvalidSettings(String),
    /// A linear-optimization oracle returned an answer that cannot be used.
    #[error("linear oracle failed: {0}")]
    Oracle(String),
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, GeometryError>;

/// Fails with [`GeometryError::NonFinite`] unless every entry of `v` is finite.
pub(crate) fn check_finite(v: &[f64], what: &'static str) -> Result<()> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(GeometryError::NonFinite(what))
    }
}

/// Fails with [`GeometryError::DimensionMismatch`] unless `found == expected`.
pub(crate) fn check_dim(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(GeometryError::DimensionMismatch {
            what,
            expected,
            found,
        })
    }
}
