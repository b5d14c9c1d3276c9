//! The crate's one error type.

use dp_core::CoreError;

/// Everything that can go wrong in a local-model randomizer or aggregator.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// A sampling or accounting error from `dp-core`.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// An error of the central geometry (universe, covers, projection) reused by the server.
    #[error(transparent)]
    Mechanism(#[from] dp_mechanisms::MechanismError),
    /// A parameter that cannot be used (checked before any randomness is drawn).
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A client's input outside the randomizer's input set (e.g. a vector outside the unit
    /// ball): refused on the client, before anything is sent.
    #[error("input outside the randomizer's domain: {reason}")]
    Input {
        /// What is wrong.
        reason: String,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, LocalError>;
